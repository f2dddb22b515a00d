//! The common case, blocking: a [`Transport`] over any client, a map of tool [`Handlers`], and
//! [`ToolLoop::run_turn`] driving the state machine to the end of the turn.
//!
//! The transport owns the conversation. The loop only tells it what to append: nothing at the
//! start of a turn, then the tool results of each step. What comes back is the model's next reply.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use super::guard::{Reply, Step, ToolLoop, TurnEnd};
use super::results::{ToolOutput, ToolResults};
use crate::{Arguments, ToolCall};

/// What the loop asks a [`Transport`] to send next.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    /// The first request of a turn: the conversation as the caller left it (its last message is
    /// the user's).
    TurnStart,
    /// The answers to the previous reply's calls: append the reply's assistant message (the
    /// transport saw it when it returned it) and then these messages, and send.
    ToolResults(ToolResults),
}

impl Outgoing {
    /// The tool results, unless this is the start of a turn.
    pub fn tool_results(&self) -> Option<&ToolResults> {
        match self {
            Outgoing::TurnStart => None,
            Outgoing::ToolResults(results) => Some(results),
        }
    }
}

/// Sends requests to a model, over any client.
///
/// Implement it over your HTTP client: keep the conversation, append what
/// [`Outgoing`] says, post it, append the assistant's message from the body, and return the body
/// (`Reply::from(body)`, or [`Reply::json`] to name the format).
pub trait Transport {
    /// A failure to get a reply (network, HTTP status, …). A reply that does not parse is not a
    /// transport error: the loop ends the turn with [`super::Outcome::MalformedResponse`].
    type Error: std::error::Error + 'static;

    /// Sends the next request of the turn and returns the model's reply.
    fn send(&mut self, outgoing: &Outgoing) -> Result<Reply, Self::Error>;
}

type Handler<'a> = Box<dyn FnMut(&Value) -> ToolOutput + 'a>;

/// The tools an agent can run, by name: each takes the call's arguments and returns a result or
/// an error text for the model. An OpenAI custom tool's handler takes its free-text input as a
/// JSON string.
///
/// ```
/// use serde_json::json;
/// use toolcall_score::tool_loop::Handlers;
///
/// let handlers = Handlers::default()
///     .with("get_balance", |args| Ok(json!({"account": args["account_id"], "balance": 12})))
///     .with("close_account", |_| Err("accounts cannot be closed from chat".to_owned()));
/// assert!(handlers.contains("get_balance"));
/// ```
#[derive(Default)]
pub struct Handlers<'a> {
    map: HashMap<String, Handler<'a>>,
}

impl<'a> Handlers<'a> {
    /// Adds (or replaces) the handler for `name`.
    pub fn with(mut self, name: &str, handler: impl FnMut(&Value) -> ToolOutput + 'a) -> Self {
        self.insert(name, handler);
        self
    }

    /// Adds (or replaces) the handler for `name`.
    pub fn insert(&mut self, name: &str, handler: impl FnMut(&Value) -> ToolOutput + 'a) {
        self.map.insert(name.to_owned(), Box::new(handler));
    }

    /// Whether a handler for `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Runs the handler of an executed call. [`ToolLoop::run_turn`] checks up front that every
    /// catalog tool has one, so the fallback only answers a handler removed since.
    fn run(&mut self, call: &ToolCall) -> ToolOutput {
        let text;
        let arguments = match &call.arguments {
            Arguments::Text { text: input } => {
                text = Value::String(input.clone());
                &text
            }
            other => other.value().unwrap_or(&Value::Null),
        };
        match self.map.get_mut(&call.name) {
            Some(handler) => handler(arguments),
            None => Err(format!(
                "Error: `{}` has no handler in this agent.",
                crate::escape(&call.name)
            )),
        }
    }
}

impl fmt::Debug for Handlers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.map.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("Handlers").field("tools", &names).finish()
    }
}

/// Why [`ToolLoop::run_turn`] could not finish a turn. An unknown tool, an exhausted budget or a
/// malformed reply are not errors: they are [`super::Outcome`]s.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError<E: std::error::Error + 'static> {
    /// The transport failed. The turn is abandoned (see [`ToolLoop::reset_turn`]).
    #[error("the transport failed: {0}")]
    Transport(#[source] E),
    /// Tools of the catalog have no handler; nothing was sent.
    #[error("no handler for the catalog tool(s) {}: add them to the `Handlers` or remove them from the catalog", names.join(", "))]
    MissingHandlers {
        /// The tools without a handler, in catalog order.
        names: Vec<String>,
    },
}

impl ToolLoop {
    /// Runs one turn: sends [`Outgoing::TurnStart`], then answers each reply's calls with
    /// `handlers` (unknown tools are answered by the loop), until the turn ends.
    ///
    /// Blocking; from async code, drive [`ToolLoop::step`] yourself (see the
    /// [module docs](super)). Any unfinished turn is abandoned first.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolcall_score::{Catalog, Format, Response, Tool, ToolCall};
    /// use toolcall_score::tool_loop::{Handlers, LoopPolicy, ScriptedTransport, ToolLoop};
    ///
    /// let mut guard = ToolLoop::new(
    ///     Catalog::new([Tool::new("get_balance", "")]),
    ///     LoopPolicy::default(),
    /// );
    /// let mut call = Response::empty(Format::OpenaiChat);
    /// call.calls.push(ToolCall::new(Some("call_1"), "get_balance", json!({"account_id": "a1"})));
    /// let mut answer = Response::empty(Format::OpenaiChat);
    /// answer.text.push("Your balance is 12.".into());
    /// let mut transport = ScriptedTransport::new([call, answer]);
    ///
    /// let mut handlers = Handlers::default().with("get_balance", |_| Ok(json!(12)));
    /// let end = guard.run_turn(&mut transport, &mut handlers)?;
    ///
    /// assert!(end.outcome.is_finished());
    /// assert_eq!(end.text(), "Your balance is 12.");
    /// let sent = transport.sent()[1].tool_results().unwrap();
    /// assert_eq!(sent.messages()[0], json!({"role": "tool", "tool_call_id": "call_1", "content": "12"}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_turn<T: Transport + ?Sized>(
        &mut self,
        transport: &mut T,
        handlers: &mut Handlers<'_>,
    ) -> Result<TurnEnd, RunError<T::Error>> {
        let missing: Vec<String> = self
            .catalog()
            .names()
            .filter(|name| !handlers.contains(name))
            .map(str::to_owned)
            .collect();
        if !missing.is_empty() {
            return Err(RunError::MissingHandlers { names: missing });
        }
        self.reset_turn();
        let mut outgoing = Outgoing::TurnStart;
        loop {
            let reply = match transport.send(&outgoing) {
                Ok(reply) => reply,
                Err(error) => {
                    self.reset_turn();
                    return Err(RunError::Transport(error));
                }
            };
            // Each step counts against the budget, so this ends within `max_steps` replies.
            match self.step(reply) {
                Step::Continue(pending) => {
                    outgoing =
                        Outgoing::ToolResults(pending.answer_with(|call| handlers.run(call)));
                }
                Step::Done(end) => return Ok(end),
            }
        }
    }
}
