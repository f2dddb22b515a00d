//! OpenAI Chat Completions's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: `chat.completion.chunk`s, then `data: [DONE]`.
//!
//! Assembled: choice 0 only: `delta.content` and `delta.refusal` concatenated; `delta.tool_calls`
//! merged by `index` (the first `id`, the last `type`, `function.name` / `function.arguments` and
//! `custom.name` / `custom.input` concatenated); the legacy `delta.function_call` likewise; the
//! last non-null `finish_reason`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::provider::read::{object, opt_array, opt_id};
use crate::provider::read::{opt_object, opt_string, At, Object};
use crate::provider::fold::{append, at_event, index, opt_value};
use crate::provider::fold::{Assembled, Fault, Origin};

/// A `chat.completion.chunk`, or a chunk whose first choice has a `delta`.
pub(super) fn is_event(event: &Object) -> bool {
    event.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
        || event
            .get("choices")
            .and_then(|c| c.get(0))
            .is_some_and(|choice| choice.get("delta").is_some())
}

/// One tool call of a Chat Completions stream, merged from its deltas.
struct ChatCall {
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    custom_name: Option<String>,
    input: Option<String>,
    /// The event and pointer of its first delta.
    origin: (usize, String),
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut seen = false;
    let mut content = None;
    let mut refusal = None;
    let mut finish = None;
    let mut calls: BTreeMap<u64, ChatCall> = BTreeMap::new();
    let mut legacy: Option<(Option<String>, Option<String>)> = None;
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        let choices_at = at.key("choices");
        let choices = opt_array(body, "choices", &at, "an array of choices").map_err(&fault)?;
        for (c, choice) in choices.iter().enumerate() {
            let choice_at = choices_at.index(c);
            let choice = object(choice, &choice_at, "a choice object").map_err(&fault)?;
            if index(choice, "index", &choice_at, Some(0)).map_err(&fault)? != 0 {
                continue;
            }
            seen = true;
            if let Some(reason) = opt_string(choice, "finish_reason", &choice_at).map_err(&fault)? {
                finish = Some(reason.to_owned());
            }
            let delta_at = choice_at.key("delta");
            let Some(delta) =
                opt_object(choice, "delta", &choice_at, "a delta object").map_err(&fault)?
            else {
                continue;
            };
            append(&mut content, delta, "content", &delta_at).map_err(&fault)?;
            append(&mut refusal, delta, "refusal", &delta_at).map_err(&fault)?;
            let calls_at = delta_at.key("tool_calls");
            let items = opt_array(delta, "tool_calls", &delta_at, "an array of tool calls")
                .map_err(&fault)?;
            for (j, item) in items.iter().enumerate() {
                let at = calls_at.index(j);
                let item = object(item, &at, "a tool call delta").map_err(&fault)?;
                let slot = index(item, "index", &at, Some(j as u64)).map_err(&fault)?;
                let call = calls.entry(slot).or_insert_with(|| ChatCall {
                    id: None,
                    kind: None,
                    name: None,
                    arguments: None,
                    custom_name: None,
                    input: None,
                    origin: (e, at.to_string()),
                });
                if call.id.is_none() {
                    call.id = opt_id(item, "id", &at).map_err(&fault)?;
                }
                if let Some(kind) = opt_string(item, "type", &at).map_err(&fault)? {
                    call.kind = Some(kind.to_owned());
                }
                let function_at = at.key("function");
                if let Some(function) =
                    opt_object(item, "function", &at, "a `function` object").map_err(&fault)?
                {
                    append(&mut call.name, function, "name", &function_at).map_err(&fault)?;
                    append(&mut call.arguments, function, "arguments", &function_at)
                        .map_err(&fault)?;
                }
                let custom_at = at.key("custom");
                if let Some(custom) =
                    opt_object(item, "custom", &at, "a `custom` object").map_err(&fault)?
                {
                    append(&mut call.custom_name, custom, "name", &custom_at).map_err(&fault)?;
                    append(&mut call.input, custom, "input", &custom_at).map_err(&fault)?;
                }
            }
            let legacy_at = delta_at.key("function_call");
            if let Some(function) = opt_object(
                delta,
                "function_call",
                &delta_at,
                "a `function_call` object",
            )
            .map_err(&fault)?
            {
                let (name, arguments) = legacy.get_or_insert((None, None));
                append(name, function, "name", &legacy_at).map_err(&fault)?;
                append(arguments, function, "arguments", &legacy_at).map_err(&fault)?;
            }
        }
    }

    let mut origins = Vec::new();
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), opt_value(content));
    if refusal.is_some() {
        message.insert("refusal".into(), opt_value(refusal));
    }
    if !calls.is_empty() {
        let mut items = Vec::with_capacity(calls.len());
        for (k, call) in calls.into_values().enumerate() {
            let (event, source) = call.origin;
            origins.push(Origin::new(
                format!("/choices/0/message/tool_calls/{k}"),
                event,
                source,
            ));
            let mut item = Map::new();
            item.insert("id".into(), opt_value(call.id));
            let custom = call.kind.as_deref() == Some("custom");
            item.insert(
                "type".into(),
                call.kind.unwrap_or_else(|| "function".into()).into(),
            );
            let (key, name, value_key, value) = if custom {
                ("custom", call.custom_name, "input", call.input)
            } else {
                ("function", call.name, "arguments", call.arguments)
            };
            let mut inner = Map::new();
            if let Some(name) = name {
                inner.insert("name".into(), name.into());
            }
            inner.insert(value_key.into(), value.unwrap_or_default().into());
            item.insert(key.into(), inner.into());
            items.push(Value::Object(item));
        }
        message.insert("tool_calls".into(), items.into());
    }
    if let Some((name, arguments)) = legacy {
        let mut function = Map::new();
        if let Some(name) = name {
            function.insert("name".into(), name.into());
        }
        function.insert("arguments".into(), arguments.unwrap_or_default().into());
        message.insert("function_call".into(), function.into());
    }
    let choices = if seen {
        let mut choice = Map::new();
        choice.insert("index".into(), 0.into());
        choice.insert("message".into(), message.into());
        choice.insert("finish_reason".into(), opt_value(finish));
        vec![Value::Object(choice)]
    } else {
        Vec::new()
    };
    let mut body = Map::new();
    body.insert("object".into(), "chat.completion".into());
    body.insert("choices".into(), choices.into());
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}
