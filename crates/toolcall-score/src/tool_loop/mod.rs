//! The loop guard: a sans-IO agent loop that survives unknown tool names.
//!
//! When a model calls a tool it was not given, an agent loop must not throw, must not drop the
//! call (an unanswered call is a 400 on the next request), and must not faithfully feed "no such
//! tool" back until its step budget is gone (models often retry the same name). [`ToolLoop`] does
//! the bookkeeping: it is handed each model response and answers with either the tool results to
//! send — every call answered, in order, with its id, unknown tools marked as errors the
//! provider's own way — or the end of the turn with an [`Outcome`] the caller can act on.
//!
//! It is a state machine, not a runtime: it does no I/O and owns no client. The caller sends the
//! requests, with any HTTP client, blocking or async. For the common blocking case,
//! [`ToolLoop::run_turn`] drives a turn over a [`Transport`] with a map of [`Handlers`];
//! [`ScriptedTransport`] replays fixed responses and records what was sent, so a test of an
//! agent's loop runs in milliseconds without a network.
//!
//! # From async code
//!
//! Drive the state machine yourself; nothing here needs a runtime:
//!
//! ```
//! use serde_json::Value;
//! use toolcall_score::tool_loop::{Reply, Step, ToolLoop, ToolOutput, TurnEnd};
//! use toolcall_score::ToolCall;
//!
//! # type Error = Box<dyn std::error::Error>;
//! // Your client and your tools, async.
//! async fn post(history: &[Value]) -> Result<Value, Error> {
//!     # let _ = history; unimplemented!()
//! }
//! async fn run_tool(call: &ToolCall) -> ToolOutput {
//!     # let _ = call; unimplemented!()
//! }
//! fn assistant_message(body: &Value) -> Value {
//!     # body.clone()
//! }
//!
//! async fn turn(guard: &mut ToolLoop, history: &mut Vec<Value>) -> Result<TurnEnd, Error> {
//!     loop {
//!         let body = post(history).await?;
//!         history.push(assistant_message(&body));
//!         match guard.step(Reply::from(body)) {
//!             Step::Continue(pending) => {
//!                 let mut outputs = Vec::with_capacity(pending.execute().len());
//!                 for call in pending.execute() {
//!                     outputs.push(run_tool(call).await);
//!                 }
//!                 history.extend(pending.answer(outputs)?.into_messages());
//!             }
//!             Step::Done(end) => {
//!                 // Keep the history valid for the next user message.
//!                 history.extend(end.closing.iter().flat_map(|c| c.messages().iter().cloned()));
//!                 return Ok(end);
//!             }
//!         }
//!     }
//! }
//! ```

mod encode;
mod metrics;
mod results;
mod runner;
mod scripted;

mod guard;

pub use guard::{LoopPolicy, Outcome, Reply, Step, ToolLoop, TurnEnd};
pub use metrics::{Counts, LoopMetrics};
pub use results::{AnswerError, PendingResults, ToolOutput, ToolResults};
pub use runner::{Handlers, Outgoing, RunError, Transport};
pub use scripted::{ScriptExhausted, ScriptedTransport};

#[cfg(test)]
mod tests;
