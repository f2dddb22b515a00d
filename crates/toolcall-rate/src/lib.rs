//! How often a model calls a tool it was not given: the rate of unknown tool names over a fixed
//! denominator of responses, with the distinct names, their counts and causes, a 95% Wilson
//! interval, and a gate for CI.
//!
//! The per-commit suite pins behaviour on fixed responses; this crate answers the nightly
//! question: over a fixed set of prompts (or a day of production traffic), how many calls named
//! a tool that was not defined, and *which* names — one repeated name is a plumbing bug to fix
//! today, a long tail of one-offs is model behaviour to absorb.
//!
//! # From the top
//!
//! Over a recorded tree (`cases/` × `recorded/<agent>/`):
//!
//! ```no_run
//! use std::path::Path;
//! use toolcall_rate::{rate_tree, Gate, Report, ScanOptions};
//!
//! let scan = rate_tree(Path::new("cases"), Path::new("recorded/example-openai-chat"), &ScanOptions::default())?;
//! let mut report = Report::new(scan.tally, Gate { max_unknown: Some(0), ..Gate::default() });
//! report.unrecorded = scan.unrecorded;
//! println!("{report}");
//! std::process::exit(if report.passed() { 0 } else { 1 });
//! # Ok::<(), toolcall_rate::RateError>(())
//! ```
//!
//! Over JSONL logs, one `{"request": ..., "response": ...}` per line (see [`scan`] for the line
//! format): [`rate_jsonl`]. From logged conversations to cases and recorded responses:
//! [`import()`]. Against a live model: the `live` module (features `openai` / `anthropic`).
//! Which of these readers a given path is for (a folder `import` wrote, a log, a trace file):
//! [`inputs::classify`], whose rules `toolcall rate` follows.
//!
//! # Feature flags
//!
//! - `openai`: live mode over OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp's
//!   server, Ollama).
//! - `anthropic`: live mode over the Anthropic Messages API.
//!
//! Both use `ureq` (blocking) with https through **rustls** (ring provider, webpki roots):
//! no system OpenSSL needed. Plain http (a local server) needs no TLS at all.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod errors;
mod fast;
pub mod import;
pub mod inputs;
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub mod live;
mod names;
mod report;
pub mod scan;
mod tally;
pub mod traces;

pub use errors::RateError;
pub use import::{import, ImportOptions, ImportSummary};
pub use report::{wilson, Distinct, Gate, GateResult, LiveCounts, NoToolFits, Report, ZERO_MEANS};
pub use scan::{rate_jsonl, rate_tree, ScanOptions, TreeScan};
pub use tally::{
    NotJudged, Origin, Tally, TraceCounts, TraceNote, UnjudgedCall, LISTED_NOT_JUDGED,
};
pub use traces::rate_traces;
