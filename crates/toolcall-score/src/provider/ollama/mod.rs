//! Ollama `/api/chat`: `message.tool_calls[].function.{name, arguments}` where `arguments` is an
//! *object*, and calls usually carry no id. The stop reason is `done_reason`.
//!
//! Request messages share OpenAI Chat's shape (tool results are `role: "tool"` messages, named by
//! `tool_name` rather than a call id) and are read by [`super::messages`].

mod stream;

use serde_json::Value;

use super::conversation;
use super::read::{required_object, object, opt_string, At, Evidence};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, Part, Read, RequestHalf, StopReasons, Stream, Wire};
use crate::errors::ParseError;
use crate::{Format, Response};

/// Ollama `/api/chat`, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["messages"], part: Part::Transcript, read: Read::Messages }],
        tool: None,
        native_schema: None,
    },
    shape: "`message` with `done`",
    fits,
    top_keys: &["message", "done", "done_reason"],
    read: response,
    stream: Some(Stream {
        events: "Ollama chunks with `message` and `done`",
        is_event: stream::is_event,
        like_a_body: stream::like_a_body,
        assemble: stream::assemble,
    }),
    live: None,
    answers,
    pairs_by_id: false,
    stop_reasons: StopReasons {
        calls: Some("stop"),
        text: Some("stop"),
    },
    conversation: Some(Conversation {
        transcript: &["messages"],
        carried: &[],
        tools_key: "tools",
        tools: super::openai_chat::function_tools,
        turn: |items, i| conversation::message_turn(items, i, &["assistant"]),
        // `/api/chat`'s body without streaming; the time it was made is not in the log.
        respond: |turn, meta| {
            serde_json::json!({
                "model": meta.model,
                "message": turn.first(),
                "done_reason": "stop",
                "done": true,
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A `message` object and `done`: every Ollama chat body and chunk has both. A body with only
/// `message` is another provider's (Cohere v2's chat response has `message` and
/// `finish_reason`), and reading it as Ollama's would guess silently.
fn fits(body: &dyn Members) -> bool {
    body.is_object("message") && body.has("done")
}

/// `{"role":"tool","tool_name":…,"content":…}` for each: Ollama pairs results with calls by name
/// and order, not by id.
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    answers
        .iter()
        .map(|answer| {
            serde_json::json!({
                "role": "tool",
                "tool_name": answer.name,
                "content": answer.text,
            })
        })
        .collect()
}

/// A response body: `{"model", "created_at", "message": {...}, "done_reason", "done"}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "an Ollama chat response object")?;
    let message_at = at.key("message");
    let message = required_object(body, "message", &at, "a message object")?;
    let mut response = Response::empty(Format::Ollama);
    if let Some(content) = opt_string(message, "content", &message_at)? {
        super::read::push_text(&mut response.text, content);
    }
    response.calls =
        super::openai_chat::tool_calls(message, &message_at, false, &mut Evidence::default())?;
    response.stop_reason = opt_string(body, "done_reason", &at)?.map(str::to_owned);
    Ok(response)
}
