//! Record an MCP session as a flow, and serve a recording as an MCP server.
//!
//! The first flow is the slowest step to a first green replay: someone has to run the
//! conversation once, log every call and write it up as JSON. [`record`] does that from the
//! real path between a client and its server: it *is* the server to whatever client starts it
//! (Claude Desktop, an agent, `toolcall replay`, a test), starts the real one, passes every
//! byte through unchanged both ways, and writes a flow (the server, each `tools/call` with its
//! arguments, a suggested `expect` for each result with volatile values left out and listed)
//! plus the catalog snapshot. [`serve`] turns a recording around: an MCP server that declares
//! the recorded catalog and answers with the recorded results, so an agent's own MCP client can
//! be tested without the real server, and says what that client did wrong. Both also speak
//! streamable HTTP: [`http::record_http`] in front of an HTTP server, [`serve::serve_http`].
//!
//! # From the top
//!
//! ```no_run
//! use toolcall_mcp_record::{record, RecordOptions};
//!
//! // What `toolcall mcp record --out flows/refund.json -- refund-server` does.
//! let options = RecordOptions::new("flows/refund.json", "refund-server", vec![]);
//! let recorded = record::record(&options, std::io::stdin(), std::io::stdout())?;
//! eprintln!("{recorded}");
//! # Ok::<(), toolcall_mcp_record::RecordError>(())
//! ```
//!
//! ```no_run
//! use toolcall_mcp_record::serve::{serve, Matching, Recording};
//!
//! // What `toolcall mcp serve flows/refund.json` does.
//! let recording = Recording::load("flows/refund.json".as_ref())?;
//! let report = serve(recording, Matching::ByParams)?;
//! eprint!("{report}");
//! # Ok::<(), toolcall_mcp_record::ServeError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call_guard;
mod errors;
pub mod expectation;
pub mod http;
pub mod loopback;
pub mod record;
pub mod redact;
pub mod screen;
pub mod serve;
pub mod session;
pub mod signals;

pub use errors::{RecordError, ServeError};
pub use record::{recover, RecordOptions, Recorded};
pub use session::{Direction, ServerSpec, Session};
