//! Anthropic Messages API: `content` blocks of type `text`, `tool_use` and `tool_result`.
//!
//! Only `tool_use` blocks are calls. `server_tool_use` and `mcp_tool_use` blocks are *not*: the
//! API runs those tools itself (web search, code execution, the MCP connector) and returns their
//! results in the same response, so they never reach the caller's tool loop. Their tools are still
//! read into the catalog by name (see [`super::parse_tools`]). Thinking blocks are not text the
//! user sees and are skipped.

mod live;
mod stream;

use serde_json::Value;

use super::conversation;
use super::read::{array, get, object, opt_bool, opt_id, opt_string, push_text, required, string};
use super::read::{At, Evidence, Object};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, Part, Read, Reading, RequestHalf, StopReasons, Stream, ToolItems, Wire, object_of};
use crate::errors::ParseError;
use crate::{Arguments, Format, Message, Response, ToolCall, ToolResult};

/// Anthropic Messages, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["system"], part: Part::System, read: Read::Own(system) }, Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["messages"], part: Part::Transcript, read: Read::Messages }],
        tool: Some(tool_item),
        native_schema: None,
    },
    shape: "`type: \"message\"` with `content`",
    fits,
    top_keys: &["type", "content", "role", "stop_reason"],
    read: response,
    stream: Some(Stream {
        events: "Anthropic `message_start` and `content_block_*` events",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: Some(live::body),
    answers,
    pairs_by_id: true,
    stop_reasons: StopReasons {
        calls: Some("tool_use"),
        text: Some("end_turn"),
    },
    conversation: Some(Conversation {
        transcript: &["messages"],
        carried: &["system"],
        tools_key: "tools",
        tools: |tools| {
            conversation::wrap_bare(tools, |tool| {
                Value::Object(conversation::with_schema(tool, "input_schema"))
            })
        },
        turn: |items, i| conversation::message_turn(items, i, &["assistant"]),
        respond: |turn, meta| {
            serde_json::json!({
                "id": meta.id,
                "type": "message",
                "role": "assistant",
                "model": meta.model,
                "content": match turn.first().and_then(|m| m.get("content")) {
                    // A request may say a message's text as a string; a response never does.
                    Some(Value::String(text)) => serde_json::json!([{"type": "text", "text": text}]),
                    content => content.cloned().unwrap_or(Value::Null),
                },
                "stop_reason": "tool_use",
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// `{"type": "message", …}`, or `content` blocks with `role: "assistant"` or a `stop_reason`.
fn fits(body: &dyn Members) -> bool {
    body.str_of("type") == Some("message")
        || (body.is_array("content")
            && (body.str_of("role") == Some("assistant") || body.has("stop_reason")))
}

/// One user message of `{"type":"tool_result","tool_use_id":…,"content":…,"is_error":true}`
/// blocks.
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    let blocks = answers.iter().map(|answer| {
        object_of([
            ("type", Some("tool_result".into())),
            ("tool_use_id", answer.id_value()),
            ("content", Some(answer.text.into())),
            ("is_error", answer.is_error().then_some(Value::Bool(true))),
        ])
    });
    vec![serde_json::json!({"role": "user", "content": blocks.collect::<Vec<_>>()})]
}

/// A response body: `{"type": "message", "content": [...], "stop_reason": ...}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "an Anthropic message object")?;
    let mut response = Response::empty(Format::Anthropic);
    let content_at = at.key("content");
    let content = array(
        required(body, "content", &at, "an array of content blocks")?,
        &content_at,
        "an array of content blocks",
    )?;
    for (i, block) in content.iter().enumerate() {
        let at = content_at.index(i);
        let block = object(block, &at, "a content block")?;
        match string(block, "type", &at, "a content block type")? {
            "text" => push_text(&mut response.text, string(block, "text", &at, "a string")?),
            "tool_use" => response.calls.push(tool_use(block, &at)?),
            _ => {}
        }
    }
    response.stop_reason = opt_string(body, "stop_reason", &at)?.map(str::to_owned);
    Ok(response)
}

/// A `tool_use` block: `{"type": "tool_use", "id": "toolu_…", "name": …, "input": {...}}`.
pub(super) fn tool_use(block: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    Ok(ToolCall {
        id: opt_id(block, "id", at)?,
        name: string(block, "name", at, "a tool name (a string)")?.to_owned(),
        namespace: None,
        arguments: Arguments::Parsed(required(block, "input", at, "the call's `input`")?.clone()),
        builtin: None,
    })
}

/// A `tool_result` block: `{"type": "tool_result", "tool_use_id": …, "content": …, "is_error"}`.
pub(super) fn tool_result(block: &Object, at: &At<'_>) -> Result<ToolResult, ParseError> {
    let mut parts = Vec::new();
    match get(block, "content") {
        None => {}
        Some(Value::String(s)) => parts.push(s.as_str()),
        Some(Value::Array(blocks)) => {
            let content_at = at.key("content");
            for (i, inner) in blocks.iter().enumerate() {
                let at = content_at.index(i);
                let inner = object(inner, &at, "a content block")?;
                if string(inner, "type", &at, "a content block type")? == "text" {
                    parts.push(string(inner, "text", &at, "a string")?);
                }
            }
        }
        Some(other) => {
            return Err(at
                .key("content")
                .unexpected("a string or an array of content blocks", other))
        }
    }
    Ok(ToolResult {
        call_id: opt_id(block, "tool_use_id", at)?,
        name: None,
        is_error: opt_bool(block, "is_error", at)?,
        content: parts.join("\n"),
    })
}

/// One typed content block of a request message, added to `message`.
pub(super) fn block_into(
    block: &Object,
    at: &At<'_>,
    message: &mut Message,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    match string(block, "type", at, "a content block type")? {
        // OpenAI Chat content parts are typed `text` too.
        "text" => push_text(&mut message.text, string(block, "text", at, "a string")?),
        "tool_use" => {
            evidence.saw(&[Format::Anthropic]);
            message.calls.push(tool_use(block, at)?);
        }
        "tool_result" => {
            evidence.saw(&[Format::Anthropic]);
            message.results.push(tool_result(block, at)?);
        }
        "refusal" => {
            if let Some(text) = opt_string(block, "refusal", at)? {
                push_text(&mut message.text, text);
            }
        }
        _ => {}
    }
    Ok(())
}

/// A tools-array item of Anthropic's shape: a named tool with an `input_schema`.
pub(super) fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    let kind = tool.get("type").and_then(Value::as_str);
    if !(tool.contains_key("name") && tool.contains_key("input_schema"))
        || matches!(kind, Some("function" | "namespace"))
    {
        return None;
    }
    items.evidence.saw(&[Format::Anthropic]);
    let keys: &[&str] = if tool.contains_key("type") {
        &["input_schema", "parameters"]
    } else {
        &["input_schema", "inputSchema", "parameters", "parametersJsonSchema"]
    };
    Some(super::collect::tool_fields(tool, at, keys, items.out))
}

/// A top-level `system`: a string, or text blocks (`{"type": "text", "text"}` for Anthropic,
/// `{"text"}` for Bedrock, which shares it; cache points and guard content carry no text).
pub(super) fn system(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    match value {
        Value::String(s) => push_text(&mut reading.system, s),
        Value::Array(blocks) => {
            for (i, block) in blocks.iter().enumerate() {
                let at = at.index(i);
                let block = object(block, &at, "a system content block")?;
                let typed = opt_string(block, "type", &at)?;
                if matches!(typed, None | Some("text")) {
                    if let Some(text) = opt_string(block, "text", &at)? {
                        push_text(&mut reading.system, text);
                    }
                }
            }
        }
        other => {
            return Err(at.unexpected("a string or an array of text blocks", other));
        }
    }
    Ok(())
}
