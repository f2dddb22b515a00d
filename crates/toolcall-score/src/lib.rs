//! Score LLM tool calls against the tools the request defined.
//!
//! The one property this crate asserts is not a matter of model judgement: **every tool call a
//! response carries names a tool defined in the request.** Everything else is what happens when it
//! does not: which name, why it probably came back (its [`Cause`]), and which defined name it was
//! likely meant to be.
//!
//! # From the top
//!
//! A [`Case`] is what you sent (system prompt, tool [`Catalog`], transcript); a [`Response`] is what
//! came back, in the provider's own JSON. [`score`] turns the two into a [`Verdict`]:
//!
//! ```
//! use toolcall_score::{score, Case, Response, Cause};
//!
//! let case = Case::from_json_str(r#"{
//!     "system": "You are the billing assistant.",
//!     "tools": [{"name": "get_invoice", "description": "One invoice by id.",
//!                "input_schema": {"type": "object"}}],
//!     "messages": [{"role": "user", "content": "Show me my invoices"}]
//! }"#)?;
//! let response = Response::from_json_str(r#"{
//!     "type": "message", "role": "assistant", "stop_reason": "tool_use",
//!     "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoices", "input": {}}]
//! }"#, None)?;
//!
//! let verdict = score(&case, &response);
//! assert!(!verdict.is_pass());
//! let finding = &verdict.findings()[0];
//! assert_eq!(finding.name.as_deref(), Some("get_invoices"));
//! assert_eq!(finding.cause, Some(Cause::Invented));
//! assert_eq!(finding.suggestions(), ["get_invoice"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! To score many responses against one case (a recording's samples, a log), prepare the case
//! once with [`Scorer`]: the same verdicts, without redoing the case's share of the work (the
//! transcript check, the defined names' word forms for suggestions) for every response.
//!
//! The response format is detected from the JSON's shape (or named with [`Format`]); a shape that
//! matches no format, or more than one, is an error rather than an empty response.
//!
//! # Feature flags
//!
//! - `schema` (off by default): validate call arguments against each tool's JSON Schema with the
//!   `jsonschema` crate. Off, the scorer still checks that arguments are a JSON object.
//! - `serde` (off by default): `serde::Serialize` for the model, [`Verdict`], lint and loop
//!   types, in the JSON shapes the `toolcall` CLI prints. Off, nothing compiles `serde_derive`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod case;
mod case_file;
mod catalog;
mod errors;
mod escape;
mod format;
mod input;
mod json_check;
mod lint;
mod mention;
mod model;
mod namespace;
pub mod provider;
mod recording;
#[cfg(feature = "schema")]
mod schema;
mod score;
mod span;
mod suggest;
mod tool;
pub mod tool_loop;
mod verdict;

pub use case::{Case, Expect};
pub use catalog::Catalog;
pub use errors::{InputError, Location, ParseError, MAX_INPUT_BYTES_VAR};
pub use escape::{escape, escape_path, is_invisible, to_json_pretty, Escaped, EscapedPath};
pub use format::{Example, Format, UnknownFormat};
pub use input::{
    max_input_bytes, parse_bytes, read_text, read_text_from, set_max_input_bytes, utf16_error,
    DEFAULT_MAX_INPUT_BYTES,
};
pub use json_check::is_json;
pub use lint::{lint, Drift, DriftSource};
pub use model::{
    Anomaly, AnomalyKind, Arguments, Builtin, JsonText, Message, Request, Response, Role, ToolCall,
    ToolResult, Transcript,
};
pub use provider::live::RequestSettings;
pub use provider::{RequestReader, RequestSeed};
pub use recording::Recording;
#[cfg(feature = "schema")]
pub use schema::SchemaError;
pub use score::{score, Scorer};
pub use span::locate;
pub use suggest::suggest;
pub use tool::{SchemaDialect, Tool};
pub use tool_loop::{LoopPolicy, ToolLoop};
pub use verdict::{Cause, Finding, FindingKind, Verdict};
