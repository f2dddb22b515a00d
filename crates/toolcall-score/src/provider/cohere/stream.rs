//! Cohere v2's recorded stream (`/v2/chat` with `stream: true`): which events are its own, and
//! how they fold into its non-streaming body (see `provider/stream.rs` for the framing and the
//! rules every format's assembly keeps).
//!
//! Events: typed `message-start`, `tool-plan-delta`, `tool-call-start` / `-delta` / `-end`,
//! `content-start` / `-delta` / `-end`, `citation-start` / `-end`, `message-end`; each carries its
//! piece under `delta.message` (`delta` alone for `message-end`).
//!
//! Assembled: a body with `id` (from `message-start`), a `message` whose `tool_plan` is the
//! `tool-plan-delta`s concatenated, whose text is the `content-delta`s' `content.text`
//! concatenated, and whose `tool_calls` are one per `tool-call-start` `index`, its `id`, `type`
//! and `function.name` from the start and `function.arguments` the start's and every delta's
//! concatenated (not JSON is kept as text, [`crate::Arguments::Json`], as in a body); `message-end`'s
//! `finish_reason`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::provider::read::{get, opt_object, opt_string, At, Object};
use crate::provider::fold::{append, at_event, index, opt_value, Assembled, Fault, Origin};

/// Whether `event` is one of a Cohere v2 chat stream's.
pub(super) fn is_event(event: &Object) -> bool {
    event
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| {
            matches!(t, "message-start" | "message-end" | "tool-plan-delta")
                || ["tool-call-", "content-", "citation-"]
                    .iter()
                    .any(|prefix| t.strip_prefix(prefix).is_some_and(|rest| {
                        matches!(rest, "start" | "delta" | "end")
                    }))
        })
}

/// One tool call, merged from its start and deltas.
#[derive(Default)]
struct Call {
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut id = None;
    let mut plan: Option<String> = None;
    let mut text: Option<String> = None;
    let mut calls: BTreeMap<u64, (usize, Call)> = BTreeMap::new();
    let mut finish = Value::Null;
    for (e, event) in events.iter().enumerate() {
        let Some(event) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        let kind = opt_string(event, "type", &at).map_err(&fault)?;
        let delta_at = at.key("delta");
        let delta = opt_object(event, "delta", &at, "a delta object").map_err(&fault)?;
        let message_at = delta_at.key("message");
        let message = match delta {
            Some(delta) => {
                opt_object(delta, "message", &delta_at, "a message object").map_err(&fault)?
            }
            None => None,
        };
        match kind {
            Some("message-start") => {
                if let Some(value) = get(event, "id") {
                    id = Some(value.clone());
                }
            }
            Some("tool-plan-delta") => {
                if let Some(message) = message {
                    append(&mut plan, message, "tool_plan", &message_at).map_err(&fault)?;
                }
            }
            Some("content-delta") => {
                let content = match message {
                    Some(message) => opt_object(message, "content", &message_at, "a content object")
                        .map_err(&fault)?,
                    None => None,
                };
                if let Some(content) = content {
                    append(&mut text, content, "text", &message_at.key("content"))
                        .map_err(&fault)?;
                }
            }
            Some(kind @ ("tool-call-start" | "tool-call-delta")) => {
                let slot = index(event, "index", &at, Some(0)).map_err(&fault)?;
                let call_at = message_at.key("tool_calls");
                let call = match message {
                    Some(message) => {
                        opt_object(message, "tool_calls", &message_at, "a tool call object")
                            .map_err(&fault)?
                    }
                    None => None,
                };
                let Some(call) = call else { continue };
                let (_, merged) = calls.entry(slot).or_insert_with(|| (e, Call::default()));
                if kind == "tool-call-start" {
                    merged.id = opt_string(call, "id", &call_at)
                        .map_err(&fault)?
                        .map(str::to_owned);
                    merged.kind = opt_string(call, "type", &call_at)
                        .map_err(&fault)?
                        .map(str::to_owned);
                }
                let function_at = call_at.key("function");
                let function = opt_object(call, "function", &call_at, "a function object")
                    .map_err(&fault)?;
                if let Some(function) = function {
                    if kind == "tool-call-start" {
                        append(&mut merged.name, function, "name", &function_at)
                            .map_err(&fault)?;
                    }
                    append(&mut merged.arguments, function, "arguments", &function_at)
                        .map_err(&fault)?;
                }
            }
            Some("message-end") => {
                if let Some(reason) = delta.and_then(|d| get(d, "finish_reason")) {
                    finish = reason.clone();
                    origins.push(Origin::new("/finish_reason", e, "/delta/finish_reason"));
                }
            }
            _ => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    if let Some(plan) = plan {
        message.insert("tool_plan".into(), plan.into());
    }
    if let Some(text) = text {
        message.insert("content".into(), json!([{"type": "text", "text": text}]));
    }
    let mut tool_calls = Vec::with_capacity(calls.len());
    for (n, (first, call)) in calls.into_values().enumerate() {
        origins.push(Origin::new(
            format!("/message/tool_calls/{n}"),
            first,
            "/delta/message/tool_calls",
        ));
        tool_calls.push(json!({
            "id": opt_value(call.id),
            "type": call.kind.unwrap_or_else(|| "function".to_owned()),
            "function": {"name": opt_value(call.name), "arguments": call.arguments.unwrap_or_default()},
        }));
    }
    if !tool_calls.is_empty() {
        message.insert("tool_calls".into(), tool_calls.into());
    }
    let mut body = Map::new();
    if let Some(id) = id {
        body.insert("id".into(), id);
    }
    body.insert("message".into(), message.into());
    body.insert("finish_reason".into(), finish);
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}
