//! OpenAI Responses's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: `response.*` events.
//!
//! Assembled: the `response` of `response.completed`, `.incomplete` or `.failed`, or without one (a
//! stream cut short) the `response.created` skeleton; its `output`, when that final response leaves
//! it out and always for a skeleton, is the output items in `output_index` order, each the `.done`
//! item, else the `.added` one with its argument, custom input and text deltas applied.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::errors::ParseError;
use crate::provider::read::object;
use crate::provider::read::{opt_string, required, string, At, Object};
use crate::provider::fold::{append_to, at_event, index};
use crate::provider::fold::{Assembled, Fault, Origin};

/// A `response.*` event.
pub(super) fn is_event(event: &Object) -> bool {
    event
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("response."))
}

/// One output item of a Responses stream, with the event that last set it.
struct Item {
    item: Value,
    event: usize,
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut skeleton: Option<(Value, usize)> = None;
    let mut last: Option<(Value, usize)> = None;
    let mut items: BTreeMap<u64, Item> = BTreeMap::new();
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        let Some(kind) = opt_string(body, "type", &at).map_err(&fault)? else {
            continue;
        };
        let response = || {
            let value = required(body, "response", &at, "a response object")?;
            object(value, &at.key("response"), "a response object").map(|_| value.clone())
        };
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                skeleton = Some((response().map_err(&fault)?, e));
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                last = Some((response().map_err(&fault)?, e));
            }
            "response.output_item.added" | "response.output_item.done" => {
                let slot = index(body, "output_index", &at, None).map_err(&fault)?;
                let value = required(body, "item", &at, "an output item").map_err(&fault)?;
                object(value, &at.key("item"), "an output item").map_err(&fault)?;
                items.insert(
                    slot,
                    Item {
                        item: value.clone(),
                        event: e,
                    },
                );
            }
            "response.function_call_arguments.delta"
            | "response.custom_tool_call_input.delta"
            | "response.content_part.added"
            | "response.output_text.delta" => {
                let slot = index(body, "output_index", &at, None).map_err(&fault)?;
                let Some(Item { item, .. }) = items.get_mut(&slot) else {
                    let found = body.get("output_index").unwrap_or(&Value::Null);
                    return Err(fault(at.key("output_index").unexpected(
                        "the index of an item a `response.output_item.added` opened",
                        found,
                    )));
                };
                apply_item_delta(kind, body, &at, item).map_err(&fault)?;
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    // The final response's `output` is the stream's own, unless it left it out; a skeleton's is
    // the empty array it started with, so the items are the stream's.
    let (mut body, fill) = match (last, skeleton) {
        (Some((response, e)), _) => {
            origins.push(Origin::new("", e, "/response"));
            let fill = response.get("output").is_none_or(Value::is_null);
            (response, fill)
        }
        (None, Some((response, e))) => {
            origins.push(Origin::new("", e, "/response"));
            (response, true)
        }
        (None, None) => {
            let mut body = Map::new();
            body.insert("object".into(), "response".into());
            (Value::Object(body), true)
        }
    };
    if fill {
        let mut output = Vec::with_capacity(items.len());
        for (k, Item { item, event }) in items.into_values().enumerate() {
            origins.push(Origin::new(format!("/output/{k}"), event, "/item"));
            output.push(item);
        }
        if let Some(body) = body.as_object_mut() {
            body.insert("output".into(), output.into());
        }
    }
    Ok(Assembled {
        body,
        origins,
        invalid: Vec::new(),
    })
}

/// Applies a delta event of an output item not yet done to the item.
fn apply_item_delta(
    kind: &str,
    body: &Object,
    at: &At<'_>,
    item: &mut Value,
) -> Result<(), ParseError> {
    match kind {
        "response.function_call_arguments.delta" => {
            append_to(item, "arguments", string(body, "delta", at, "a string")?);
        }
        "response.custom_tool_call_input.delta" => {
            append_to(item, "input", string(body, "delta", at, "a string")?);
        }
        "response.content_part.added" => {
            let part = required(body, "part", at, "a content part")?;
            object(part, &at.key("part"), "a content part")?;
            if let Some(item) = item.as_object_mut() {
                let content = item
                    .entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(parts) = content {
                    parts.push(part.clone());
                }
            }
        }
        _ => {
            let text = string(body, "delta", at, "a string")?;
            let part = index(body, "content_index", at, Some(0))?;
            let part = usize::try_from(part).ok().and_then(|p| {
                item.get_mut("content")
                    .and_then(Value::as_array_mut)
                    .and_then(|parts| parts.get_mut(p))
            });
            if let Some(part) = part {
                append_to(part, "text", text);
            }
        }
    }
    Ok(())
}
