//! Bedrock Converse's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: `ConverseStream` events as the AWS SDKs decode them, one member each: `messageStart`,
//! `contentBlockStart` / `Delta` / `Stop`, `messageStop`, `metadata`.
//!
//! Assembled: a Converse body: blocks by `contentBlockIndex`, a `toolUse` from its
//! `contentBlockStart` with `input` the concatenated `delta.toolUse.input` (none or empty is `{}`;
//! not JSON is kept as text, [`crate::Arguments::Json`]), `delta.text` appended to its block's text (which has
//! no start); `messageStop`'s `stopReason`; `metadata`'s `usage` and `metrics`; reasoning and
//! citation deltas ignored.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::provider::read::{get, object};
use crate::provider::read::{opt_object, opt_string, required, string, At, Object};
use crate::provider::fold::{at_event, index};
use crate::provider::fold::{Assembled, Fault, Origin};

/// A decoded `ConverseStream` event.
pub(super) fn is_event(event: &Object) -> bool {
    bedrock_event(event).is_some()
}

/// The events of Bedrock's `ConverseStream`, as the AWS SDKs decode its binary event stream:
/// each an object with one member, named for the event.
const BEDROCK_EVENTS: [&str; 6] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

/// A Bedrock `ConverseStream` event's name and body: `{"contentBlockDelta": {...}}`.
fn bedrock_event(event: &Object) -> Option<(&str, &Value)> {
    let mut members = event.iter();
    let (name, body) = members.next()?;
    (members.next().is_none() && body.is_object() && BEDROCK_EVENTS.contains(&name.as_str()))
        .then_some((name.as_str(), body))
}

/// One content block of a Bedrock stream: a `toolUse` its `contentBlockStart` opened (with its
/// `input` JSON text so far), or text its deltas brought.
struct BedrockBlock {
    block: Object,
    json: Option<String>,
    /// The event and pointer it came from.
    origin: (usize, &'static str),
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut role = None;
    let mut blocks: BTreeMap<u64, BedrockBlock> = BTreeMap::new();
    let mut stop: Option<(Value, usize)> = None;
    let mut extra: Vec<(String, Value)> = Vec::new();
    for (e, event) in events.iter().enumerate() {
        let Some((name, body)) = event.as_object().and_then(bedrock_event) else {
            continue;
        };
        let fault = at_event(e);
        let root = At::ROOT;
        let at = root.key(name);
        let Some(body) = body.as_object() else {
            continue;
        };
        match name {
            "messageStart" => {
                if let Some(value) = get(body, "role") {
                    role = Some(value.clone());
                }
            }
            "contentBlockStart" => {
                let slot = index(body, "contentBlockIndex", &at, Some(0)).map_err(&fault)?;
                let start_at = at.key("start");
                let start = opt_object(body, "start", &at, "a `start` object").map_err(&fault)?;
                if let Some(tool_use) = start.and_then(|s| get(s, "toolUse")) {
                    let tool_use = object(tool_use, &start_at.key("toolUse"), "a toolUse object")
                        .map_err(&fault)?;
                    let mut block = Map::new();
                    block.insert("toolUse".into(), Value::Object(tool_use.clone()));
                    let origin = (e, "/contentBlockStart/start");
                    blocks.insert(
                        slot,
                        BedrockBlock {
                            block,
                            json: Some(String::new()),
                            origin,
                        },
                    );
                }
            }
            "contentBlockDelta" => {
                let slot = index(body, "contentBlockIndex", &at, Some(0)).map_err(&fault)?;
                let delta_at = at.key("delta");
                let delta = required(body, "delta", &at, "a delta object")
                    .and_then(|d| object(d, &delta_at, "a delta object"))
                    .map_err(&fault)?;
                if let Some(text) = opt_string(delta, "text", &delta_at).map_err(&fault)? {
                    let block = blocks.entry(slot).or_insert_with(|| BedrockBlock {
                        block: Map::new(),
                        json: None,
                        origin: (e, "/contentBlockDelta/delta"),
                    });
                    match block.block.get_mut("text") {
                        Some(Value::String(so_far)) => so_far.push_str(text),
                        _ => {
                            block.block.insert("text".into(), text.into());
                        }
                    }
                }
                let use_at = delta_at.key("toolUse");
                if let Some(tool_use) =
                    opt_object(delta, "toolUse", &delta_at, "a toolUse delta").map_err(&fault)?
                {
                    let piece = string(tool_use, "input", &use_at, "a string").map_err(&fault)?;
                    let Some(json) = blocks.get_mut(&slot).and_then(|b| b.json.as_mut()) else {
                        let found = body.get("contentBlockIndex").unwrap_or(&Value::Null);
                        return Err(fault(at.key("contentBlockIndex").unexpected(
                            "the index of a block a `contentBlockStart` opened with a `toolUse`",
                            found,
                        )));
                    };
                    json.push_str(piece);
                }
                // Reasoning and citations are not what scoring reads.
            }
            "messageStop" => {
                if let Some(reason) = get(body, "stopReason") {
                    stop = Some((reason.clone(), e));
                }
            }
            "metadata" => {
                for (key, value) in body {
                    extra.push((key.clone(), value.clone()));
                }
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    let mut invalid = Vec::new();
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = 0;
    for (k, block) in blocks.into_values().enumerate() {
        let BedrockBlock {
            mut block,
            json,
            origin: (event, source),
        } = block;
        origins.push(Origin::new(
            format!("/output/message/content/{k}"),
            event,
            source,
        ));
        if let (Some(json), Some(Value::Object(tool_use))) = (json, block.get_mut("toolUse")) {
            // A call without arguments streams no `input` (or an empty one): `{}`, as the
            // non-streaming body has it.
            let is_call = tool_use.get("type").and_then(Value::as_str) != Some("server_tool_use");
            let input = if json.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                match serde_json::from_str::<Value>(&json) {
                    Ok(input) => input,
                    Err(_) => {
                        if is_call {
                            invalid.push((calls, json.clone()));
                        }
                        Value::String(json)
                    }
                }
            };
            calls += usize::from(is_call);
            tool_use.insert("input".into(), input);
        }
        content.push(Value::Object(block));
    }
    let mut message = Map::new();
    message.insert("role".into(), role.unwrap_or_else(|| "assistant".into()));
    message.insert("content".into(), content.into());
    let mut output = Map::new();
    output.insert("message".into(), message.into());
    let mut body = Map::new();
    body.insert("output".into(), output.into());
    if let Some((reason, e)) = stop {
        origins.push(Origin::new("/stopReason", e, "/messageStop/stopReason"));
        body.insert("stopReason".into(), reason);
    }
    for (key, value) in extra {
        body.insert(key, value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid,
    })
}
