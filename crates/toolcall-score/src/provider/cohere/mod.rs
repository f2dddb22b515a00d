//! Cohere v2 chat (`POST /v2/chat`): `message.tool_calls[].function.{name, arguments}` with
//! `arguments` a JSON string, as OpenAI Chat's are, in a body of its own shape: a top-level
//! `message` (no `choices`), `finish_reason` (`TOOL_CALL`, `COMPLETE`, …) beside it, and the
//! model's `tool_plan` — the text it writes before calling tools — in the message.
//!
//! The message's `content` (text parts) and its `tool_plan` are the response's text (a name
//! written in a plan as a call is a `prose` finding like any other text). Request messages share
//! OpenAI Chat's shape (tool results are `role: "tool"` messages with `tool_call_id`) and are read
//! by [`super::messages`]; its tools are Chat's `{"type": "function", "function": {...}}`.

mod stream;

use serde_json::{json, Value};

use super::conversation;
use super::read::{required_object, object, opt_string, push_text, At, Evidence};
use super::wire::{Conversation, Member, Members, MembersExt, Part, Read, RequestHalf, StopReasons, Stream, Wire};
use crate::errors::ParseError;
use crate::{Format, Response};

/// Cohere v2 chat, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["messages"], part: Part::Transcript, read: Read::Messages }],
        tool: None,
        native_schema: None,
    },
    shape: "`message` with `finish_reason`",
    fits,
    top_keys: &["message", "finish_reason"],
    read: response,
    stream: Some(Stream {
        events: "Cohere `message-start`, `tool-call-*` and `content-*` events",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: None,
    // Chat's: a `role: "tool"` message with the `tool_call_id` for each, no error flag.
    answers: super::openai_chat::answers,
    pairs_by_id: true,
    stop_reasons: StopReasons {
        calls: Some("TOOL_CALL"),
        text: Some("COMPLETE"),
    },
    conversation: Some(Conversation {
        transcript: &["messages"],
        carried: &[],
        tools_key: "tools",
        tools: super::openai_chat::function_tools,
        turn: |items, i| conversation::message_turn(items, i, &["assistant"]),
        respond: |turn, meta| {
            json!({
                "id": meta.id,
                "message": turn.first(),
                "finish_reason": "TOOL_CALL",
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A `message` object and one of Cohere's own finish reasons beside it (upper case:
/// `COMPLETE`, `TOOL_CALL`, …). A `message` with a lower-case `finish_reason` is one OpenAI
/// choice logged alone (`{"index", "message", "finish_reason": "tool_calls"}`), not Cohere's;
/// Ollama's bodies have `done` and `done_reason`.
fn fits(body: &dyn Members) -> bool {
    const REASONS: [&str; 6] = [
        "COMPLETE",
        "STOP_SEQUENCE",
        "MAX_TOKENS",
        "TOOL_CALL",
        "ERROR",
        "TIMEOUT",
    ];
    body.is_object("message") && body.str_of("finish_reason").is_some_and(|r| REASONS.contains(&r))
}

/// A response body: `{"id", "message": {"role", "tool_plan", "tool_calls", "content"},
/// "finish_reason", "usage"}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a Cohere chat response object")?;
    let message_at = at.key("message");
    let message = required_object(body, "message", &at, "a message object")?;
    let mut response = Response::empty(Format::Cohere);
    if let Some(plan) = opt_string(message, "tool_plan", &message_at)? {
        push_text(&mut response.text, plan);
    }
    super::openai_chat::content_into(message, &message_at, &mut response.text)?;
    response.calls =
        super::openai_chat::tool_calls(message, &message_at, true, &mut Evidence::default())?;
    response.stop_reason = opt_string(body, "finish_reason", &at)?.map(str::to_owned);
    Ok(response)
}
