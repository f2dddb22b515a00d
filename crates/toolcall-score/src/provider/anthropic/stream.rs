//! Anthropic Messages's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: `message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
//! `message_stop`, `ping`.
//!
//! Assembled: the `message_start` skeleton; blocks by `index`, those of every message a
//! `message_stop` ended first when another follows (a multi-step run in one recording), while a
//! message a new `message_start` cut off is dropped for it (a retry spliced in); `text_delta`
//! appended to the text; `input_json_delta`'s `partial_json` concatenated into the block's `input`
//! (none keeps the start's `{}`; text that is not JSON is kept as [`crate::Arguments::Json`], as OpenAI's string
//! arguments are); `message_delta`'s `stop_reason`; thinking, signature and citation deltas
//! ignored.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::provider::read::object;
use crate::provider::read::{opt_object, opt_string, required, string, At, Object};
use crate::provider::fold::{append_to, at_event, index};
use crate::provider::fold::{Assembled, Fault, Origin};

/// The event types of a Messages stream.
pub(super) fn is_event(event: &Object) -> bool {
    matches!(
        event.get("type").and_then(Value::as_str),
        Some(
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
                | "ping"
        )
    )
}

/// One content block of an Anthropic stream.
struct Block {
    block: Value,
    /// The concatenated `partial_json` of its `input_json_delta`s.
    json: String,
    event: usize,
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut message: Option<(Object, usize)> = None;
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    // The blocks of the messages a `message_stop` ended, when another message follows (a
    // multi-step run recorded as one stream); their `index`es start again at 0.
    let mut earlier: Vec<Block> = Vec::new();
    let mut stopped = false;
    let mut stop: Vec<(String, Value)> = Vec::new();
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        match opt_string(body, "type", &at).map_err(&fault)? {
            Some("message_start") => {
                let value = required(body, "message", &at, "a message object").map_err(&fault)?;
                let skeleton = object(value, &at.key("message"), "a message object");
                message = Some((skeleton.map_err(&fault)?.clone(), e));
                // A message ended keeps its blocks; one a new `message_start` cut off (a retry
                // spliced in) is replaced by it.
                if stopped {
                    earlier.extend(std::mem::take(&mut blocks).into_values());
                }
                blocks.clear();
                stopped = false;
            }
            Some("message_stop") => stopped = true,
            Some("content_block_start") => {
                let slot = index(body, "index", &at, None).map_err(&fault)?;
                let block_at = at.key("content_block");
                let block = required(body, "content_block", &at, "a content block")
                    .and_then(|b| object(b, &block_at, "a content block"))
                    .map_err(&fault)?;
                blocks.insert(
                    slot,
                    Block {
                        block: Value::Object(block.clone()),
                        json: String::new(),
                        event: e,
                    },
                );
            }
            Some("content_block_delta") => {
                let slot = index(body, "index", &at, None).map_err(&fault)?;
                let Some(block) = blocks.get_mut(&slot) else {
                    let found = body.get("index").unwrap_or(&Value::Null);
                    return Err(fault(at.key("index").unexpected(
                        "the index of a block a `content_block_start` opened",
                        found,
                    )));
                };
                let delta_at = at.key("delta");
                let delta = required(body, "delta", &at, "a delta object")
                    .and_then(|d| object(d, &delta_at, "a delta object"))
                    .map_err(&fault)?;
                match opt_string(delta, "type", &delta_at).map_err(&fault)? {
                    Some("text_delta") => {
                        let text = string(delta, "text", &delta_at, "a string").map_err(&fault)?;
                        append_to(&mut block.block, "text", text);
                    }
                    Some("input_json_delta") => {
                        let partial =
                            string(delta, "partial_json", &delta_at, "a string").map_err(&fault)?;
                        block.json.push_str(partial);
                    }
                    // Thinking, signatures and citations are not what scoring reads.
                    _ => {}
                }
            }
            Some("message_delta") => {
                let delta_at = at.key("delta");
                if let Some(delta) =
                    opt_object(body, "delta", &at, "a delta object").map_err(&fault)?
                {
                    for key in ["stop_reason", "stop_sequence"] {
                        if let Some(value) = delta.get(key) {
                            if !value.is_null() && !value.is_string() {
                                return Err(fault(delta_at.key(key).unexpected("a string", value)));
                            }
                            stop.push((key.to_owned(), value.clone()));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    let mut invalid = Vec::new();
    let mut body = match message {
        Some((skeleton, e)) => {
            origins.push(Origin::new("", e, "/message"));
            skeleton
        }
        None => {
            let mut skeleton = Map::new();
            skeleton.insert("type".into(), "message".into());
            skeleton.insert("role".into(), "assistant".into());
            skeleton
        }
    };
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = 0;
    for (k, block) in earlier.into_iter().chain(blocks.into_values()).enumerate() {
        let Block {
            mut block,
            json,
            event,
        } = block;
        origins.push(Origin::new(
            format!("/content/{k}"),
            event,
            "/content_block",
        ));
        let is_call = block.get("type").and_then(Value::as_str) == Some("tool_use");
        if !json.is_empty() {
            let input = match serde_json::from_str::<Value>(&json) {
                Ok(input) => input,
                Err(_) => {
                    if is_call {
                        invalid.push((calls, json.clone()));
                    }
                    Value::String(json)
                }
            };
            if let Some(block) = block.as_object_mut() {
                block.insert("input".into(), input);
            }
        }
        calls += usize::from(is_call);
        content.push(block);
    }
    body.insert("content".into(), content.into());
    for (key, value) in stop {
        body.insert(key, value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid,
    })
}
