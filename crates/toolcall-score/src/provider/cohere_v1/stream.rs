//! Cohere v1's recorded stream (`/v1/chat` with `stream: true`): which events are its own, and
//! how they fold into its non-streaming body (see `provider/stream.rs` for the framing and the
//! rules every format's assembly keeps).
//!
//! Events: JSON lines with an `event_type` (`stream-start`, `text-generation`,
//! `tool-calls-chunk`, `tool-calls-generation`, `search-queries-generation`, `search-results`,
//! `citation-generation`, `stream-end`).
//!
//! Assembled: `stream-end`'s `response`, which is the whole body the request would have got
//! without streaming; a stream cut short before it, from the events: `generation_id` from
//! `stream-start`, the text of the `text-generation`s concatenated (else the
//! `tool-calls-generation`'s), its `tool_calls`, and `stream-end`'s `finish_reason`.

use serde_json::{Map, Value};

use crate::provider::read::{get, opt_object, At, Object};
use crate::provider::fold::{append, at_event, Assembled, Fault, Origin};

/// The event types of a v1 chat stream.
const EVENTS: [&str; 8] = [
    "stream-start",
    "text-generation",
    "tool-calls-chunk",
    "tool-calls-generation",
    "search-queries-generation",
    "search-results",
    "citation-generation",
    "stream-end",
];

/// Whether `event` is one of a Cohere v1 chat stream's.
pub(super) fn is_event(event: &Object) -> bool {
    event
        .get("event_type")
        .and_then(Value::as_str)
        .is_some_and(|kind| EVENTS.contains(&kind))
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut body = Map::new();
    let mut text: Option<String> = None;
    let mut plan: Option<String> = None;
    for (e, event) in events.iter().enumerate() {
        let Some(event) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        match event.get("event_type").and_then(Value::as_str) {
            Some("stream-end") => {
                if let Some(response) =
                    opt_object(event, "response", &at, "a response object").map_err(&fault)?
                {
                    origins.push(Origin::new("", e, "/response"));
                    return Ok(Assembled {
                        body: Value::Object(response.clone()),
                        origins,
                        invalid: Vec::new(),
                    });
                }
                if let Some(reason) = get(event, "finish_reason") {
                    body.insert("finish_reason".into(), reason.clone());
                    origins.push(Origin::new("/finish_reason", e, "/finish_reason"));
                }
            }
            Some("stream-start") => {
                if let Some(id) = get(event, "generation_id") {
                    body.insert("generation_id".into(), id.clone());
                }
            }
            Some("text-generation") => {
                append(&mut text, event, "text", &at).map_err(&fault)?;
            }
            Some("tool-calls-generation") => {
                append(&mut plan, event, "text", &at).map_err(&fault)?;
                if let Some(calls) = get(event, "tool_calls") {
                    body.insert("tool_calls".into(), calls.clone());
                    origins.push(Origin::new("/tool_calls", e, "/tool_calls"));
                }
            }
            _ => {}
        }
    }
    body.insert(
        "text".into(),
        text.or(plan).unwrap_or_default().into(),
    );
    body.entry("finish_reason").or_insert(Value::Null);
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}
