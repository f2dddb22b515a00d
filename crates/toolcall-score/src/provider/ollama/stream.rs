//! Ollama's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: NDJSON chunks (`"done": false`, then `"done": true` with `done_reason`).
//!
//! Assembled: `message.content` concatenated, `message.tool_calls` collected, the last
//! `done_reason`.

use serde_json::{Map, Value};

use crate::provider::read::{get, opt_array};
use crate::provider::read::{opt_object, At, Object};
use crate::provider::fold::{append, at_event};
use crate::provider::fold::{Assembled, Fault, Origin};

/// A chunk with a `message` object and `done`.
pub(super) fn is_event(event: &Object) -> bool {
    event.get("message").is_some_and(Value::is_object) && event.contains_key("done")
}

/// Every chunk but one that says `"done": false` has a whole body's shape.
pub(super) fn like_a_body(event: &Object) -> bool {
    event.get("done") != Some(&Value::Bool(false))
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut content: Option<String> = None;
    let mut calls: Vec<Value> = Vec::new();
    let mut body = Map::new();
    for (e, event) in events.iter().enumerate() {
        let Some(chunk) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        for key in ["model", "done", "done_reason"] {
            if let Some(value) = get(chunk, key) {
                body.insert(key.to_owned(), value.clone());
                if key == "done_reason" {
                    origins.push(Origin::new("/done_reason", e, "/done_reason"));
                }
            }
        }
        let message_at = at.key("message");
        let Some(message) =
            opt_object(chunk, "message", &at, "a message object").map_err(&fault)?
        else {
            continue;
        };
        append(&mut content, message, "content", &message_at).map_err(&fault)?;
        let calls_at = message_at.key("tool_calls");
        let items = opt_array(message, "tool_calls", &message_at, "an array of tool calls")
            .map_err(&fault)?;
        for (j, call) in items.iter().enumerate() {
            origins.push(Origin::new(
                format!("/message/tool_calls/{}", calls.len()),
                e,
                calls_at.index(j).to_string(),
            ));
            calls.push(call.clone());
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), content.unwrap_or_default().into());
    if !calls.is_empty() {
        message.insert("tool_calls".into(), calls.into());
    }
    body.insert("message".into(), message.into());
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}
