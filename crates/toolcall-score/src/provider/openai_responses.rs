//! OpenAI Responses API: `output` items of type `function_call`, `custom_tool_call` and
//! `message`, and the request's `input` (a string, or items including those calls and their
//! `function_call_output` / `custom_tool_call_output`).
//!
//! A call's id is its `call_id` (what the output item must echo), not the item `id` (`fc_…`,
//! `ctc_…`). `namespace`, set when the tool came from a namespace tool group, is kept. A
//! `custom_tool_call` (GPT-5's free-text tools) is read in order with the function calls, its
//! `input` as [`Arguments::Text`]: its name is checked like any other, its input is not JSON and
//! is not checked as JSON. Items run by OpenAI itself (`web_search_call`, `file_search_call`,
//! `mcp_call`, …) are skipped; so are `reasoning` items. The stop reason is
//! `incomplete_details.reason` when the response is incomplete, its `status` otherwise.

use serde_json::Value;

use super::read::{array, get, json_string_arguments, object, opt_id, opt_object, opt_string};
use super::read::{push_text, required, string, At, Evidence, Object};
use crate::errors::ParseError;
use crate::{Arguments, Format, Message, Response, Role, ToolCall, ToolResult};

/// A response body: `{"object": "response", "output": [...], "status": ...}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a Responses API response object")?;
    let output_at = at.key("output");
    let output = array(
        required(body, "output", &at, "an array of output items")?,
        &output_at,
        "an array of output items",
    )?;
    let mut response = Response::empty(Format::OpenaiResponses);
    for (i, item) in output.iter().enumerate() {
        let at = output_at.index(i);
        let item = object(item, &at, "an output item")?;
        match string(item, "type", &at, "an output item type")? {
            "function_call" => response.calls.push(function_call(item, &at)?),
            "custom_tool_call" => response.calls.push(custom_tool_call(item, &at)?),
            "message" => content_into(item, &at, &mut response.text)?,
            _ => {}
        }
    }
    let incomplete = opt_object(body, "incomplete_details", &at, "an object")?;
    let reason = match incomplete {
        Some(details) => opt_string(details, "reason", &at.key("incomplete_details"))?,
        None => None,
    };
    response.stop_reason = match reason {
        Some(reason) => Some(reason.to_owned()),
        None => opt_string(body, "status", &at)?.map(str::to_owned),
    };
    Ok(response)
}

/// A `function_call` item: `{"type": "function_call", "id": "fc_…", "call_id": "call_…",
/// "name": …, "arguments": "{…}", "namespace"?: …}`.
pub(super) fn function_call(item: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(item, "name", at, "a function name (a string)")?;
    let raw = string(
        item,
        "arguments",
        at,
        "the call's `arguments` (a JSON string)",
    )?;
    Ok(ToolCall {
        id: opt_id(item, "call_id", at)?,
        name: name.to_owned(),
        namespace: opt_string(item, "namespace", at)?.map(str::to_owned),
        arguments: json_string_arguments(raw),
    })
}

/// A `custom_tool_call` item: `{"type": "custom_tool_call", "id": "ctc_…", "call_id": "call_…",
/// "name": …, "input": "free text", "namespace"?: …}`. The input is kept as the text it is.
pub(super) fn custom_tool_call(item: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(item, "name", at, "a custom tool name (a string)")?;
    let input = string(item, "input", at, "the call's `input` (a string)")?;
    Ok(ToolCall {
        id: opt_id(item, "call_id", at)?,
        name: name.to_owned(),
        namespace: opt_string(item, "namespace", at)?.map(str::to_owned),
        arguments: Arguments::Text {
            text: input.to_owned(),
        },
    })
}

/// A message item's `content`: a string or an array of parts (`output_text`, `input_text`,
/// `text`, `refusal`); other parts (images, files) carry no text.
fn content_into(item: &Object, at: &At<'_>, out: &mut Vec<String>) -> Result<(), ParseError> {
    match get(item, "content") {
        None => Ok(()),
        Some(Value::String(s)) => {
            push_text(out, s);
            Ok(())
        }
        Some(Value::Array(parts)) => {
            let parts_at = at.key("content");
            for (i, part) in parts.iter().enumerate() {
                let at = parts_at.index(i);
                let part = object(part, &at, "a content part")?;
                match string(part, "type", &at, "a content part type")? {
                    "output_text" | "input_text" | "text" => {
                        push_text(out, string(part, "text", &at, "a string")?)
                    }
                    "refusal" => push_text(out, string(part, "refusal", &at, "a string")?),
                    _ => {}
                }
            }
            Ok(())
        }
        Some(other) => Err(at
            .key("content")
            .unexpected("a string or an array of content parts", other)),
    }
}

/// The request's `input`: a string (one user message) or an array of items. System and
/// developer messages also add to `system`.
pub(super) fn input_into(
    value: &Value,
    at: &At<'_>,
    messages: &mut Vec<Message>,
    system: &mut Vec<String>,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    evidence.saw(&[Format::OpenaiResponses]);
    let items = match value {
        Value::String(s) => {
            let mut message = Message::new(Role::User);
            push_text(&mut message.text, s);
            messages.push(message);
            return Ok(());
        }
        Value::Array(items) => items,
        other => return Err(at.unexpected("a string or an array of input items", other)),
    };
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let item = object(item, &at, "an input item")?;
        match opt_string(item, "type", &at)? {
            None | Some("message") => {
                let role = super::role(item, &at)?;
                let mut message = Message::new(role);
                content_into(item, &at, &mut message.text)?;
                if role == Role::System {
                    system.extend(message.text.iter().cloned());
                }
                messages.push(message);
            }
            Some(kind @ ("function_call" | "custom_tool_call")) => {
                let call = if kind == "function_call" {
                    function_call(item, &at)?
                } else {
                    custom_tool_call(item, &at)?
                };
                match messages.last_mut() {
                    // Parallel calls are consecutive items; keep them in one assistant turn.
                    Some(last) if last.role == Role::Assistant && last.results.is_empty() => {
                        last.calls.push(call)
                    }
                    _ => {
                        let mut message = Message::new(Role::Assistant);
                        message.calls.push(call);
                        messages.push(message);
                    }
                }
            }
            // A custom tool's output has the shape of a function's.
            Some("function_call_output" | "custom_tool_call_output") => {
                let result = function_call_output(item, &at)?;
                match messages.last_mut() {
                    Some(last) if last.role == Role::Tool => last.results.push(result),
                    _ => {
                        let mut message = Message::new(Role::Tool);
                        message.results.push(result);
                        messages.push(message);
                    }
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `{"type": "function_call_output" | "custom_tool_call_output", "call_id": …, "output": "…"}`;
/// the output may also be an array of content parts.
fn function_call_output(item: &Object, at: &At<'_>) -> Result<ToolResult, ParseError> {
    let content = match get(item, "output") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let mut parts = Vec::new();
            let output_at = at.key("output");
            for (i, part) in items.iter().enumerate() {
                let at = output_at.index(i);
                let part = object(part, &at, "a content part")?;
                if let Some(text) = opt_string(part, "text", &at)? {
                    push_text(&mut parts, text);
                }
            }
            parts.join("\n")
        }
        Some(other) => other.to_string(),
    };
    Ok(ToolResult {
        call_id: opt_id(item, "call_id", at)?,
        name: None,
        is_error: false,
        content,
    })
}

/// A flat function tool `{"type": "function", "name", "description", "parameters"}`.
pub(super) fn tool(item: &Object, at: &At<'_>, out: &mut super::Tools) -> Result<(), ParseError> {
    super::tool_fields(item, at, &["parameters"], out)
}
