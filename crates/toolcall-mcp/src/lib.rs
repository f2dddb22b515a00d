//! Replay a scripted list of tool calls against a real MCP server, and fail loudly and precisely.
//!
//! Recorded cassettes freeze the server's answers and hide exactly the changes worth catching: a
//! renamed or dropped tool, a newly required argument. A replay pins only the model's side (the
//! calls it would have made, as a JSON [`Flow`]) and lets the server be real. For each call:
//!
//! 1. the name must be in the server's `tools/list` (every page);
//! 2. the arguments are validated against that tool's `inputSchema` *before* the call, so a newly
//!    required field is a schema failure naming the field;
//! 3. the call is made; `isError: true` is a failure (Node servers omit the field when false);
//! 4. when the tool declares an `outputSchema`, the result's `structuredContent` must be there
//!    and match it (the specification's MUST, which servers break as their types drift);
//! 5. each `expect` entry, a JSON pointer into `structuredContent` (or into the first text block
//!    that parses as JSON), must hold. Never a substring match.
//!
//! The first failure ends the replay with one line saying what broke ([`Failure`]).
//!
//! # From the top
//!
//! ```no_run
//! use toolcall_mcp::{replay_blocking, Flow, Options};
//!
//! let flow = Flow::load("flows/refund.json".as_ref())?;
//! let report = replay_blocking(&flow, &Options::default(), &mut |step| println!("{step}"));
//! match &report.failure {
//!     None => println!("{}", report.summary()),
//!     Some(failure) => eprintln!("{failure}"),
//! }
//! # Ok::<(), toolcall_mcp::FlowError>(())
//! ```
//!
//! A flow file:
//!
//! ```json
//! {
//!   "server": {"command": "node", "args": ["server.js"], "env": {"LEDGER": "sandbox"}},
//!   "calls": [
//!     {"name": "issue_refund", "input": {"order_id": "ord_1042", "amount_cents": 9164},
//!      "expect": {"/status": "pending"}}
//!   ]
//! }
//! ```
//!
//! or `"server": {"url": "http://127.0.0.1:3001/mcp"}` for streamable HTTP.
//!
//! # What a stdio server gets
//!
//! - **Environment: this process's environment plus the flow's `env`.** The MCP Python SDK does
//!   the opposite (only `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` plus what you give it),
//!   so a server that works here may miss a variable there.
//! - **Paths:** a relative `command` (one with a `/`) and a relative `cwd` resolve against the
//!   directory of the flow file; `cwd` defaults to that directory, so relative arguments do too.
//!   A bare command (`node`) is looked up in `PATH`.
//! - **Variables:** `${VAR}` in the server's fields and in the string values of `input` and
//!   `expect` is replaced by the environment variable's value (an unset one is an error, `$$` is a
//!   `$`); a path substituted this way is used as given, not resolved against the flow.
//! - **stdout** is read by us line by line: a line that is not JSON-RPC, or text printed without a
//!   newline next to a message, ends the replay with the offending text quoted (rmcp alone would
//!   skip the first silently and lose the response in the second).
//! - **stderr** is drained continuously (a chatty server never blocks on a full pipe); the last
//!   lines are in [`Report::stderr_tail`], shown whenever anything fails.
//! - **Timeouts** bound start-up plus `initialize`, and every request after it.
//! - **The process is reaped on every exit path**: after a clean run its stdin is closed and it
//!   gets [`Options::shutdown_grace`] to exit; after a failure or timeout it is killed at once.
//!   The `Command` is also `kill_on_drop`, for panics and cancelled futures. On Unix the server
//!   runs in its own process group, and the whole group is killed at the end, so what a wrapper
//!   such as `npx` started goes too; a terminal's Ctrl-C therefore reaches only us, which is what
//!   [`Options::handle_ctrl_c`] is for.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assertions;
mod capture;
pub mod catalog;
mod child;
mod eras;
mod errors;
mod expect;
mod flow;
mod leftovers;
mod outcome;
pub mod probe;
mod replay;
mod session;

pub use assertions::Assertions;
pub use capture::Capture;
pub use eras::default_protocol_cache;
pub use errors::FlowError;
pub use expect::Mismatch;
pub use flow::{
    escape_template, escape_templates, unescape_templates, Call, ContentExpectation, EnvVars,
    ExpectError, Flow, FlowTimeouts, Protocol, Server, Snapshot, StdioServer, TextExpectation,
    Vars,
};
pub use flow::{Completion, CompletionRef, Listing, StepKind, Verify};
pub use outcome::Outcome;
pub use replay::{
    list_catalog, list_catalog_blocking, replay, replay_blocking, Failure, FailureKind, Options,
    Report, Step,
};
pub use replay::{update_flow, Difference, Update, Updated, REDACTED};
pub use session::{SessionFinding, SessionFindingKind};
