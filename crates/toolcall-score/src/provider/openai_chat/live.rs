//! A case as an OpenAI Chat Completions request body, for live mode.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::provider::live::{call_id, start, with_ids, RequestSettings};
use crate::{Arguments, Case, Format, Role, ToolCall};

/// The OpenAI Chat Completions body for `case`.
pub(super) fn body(raw: &Value, case: &Case, settings: &RequestSettings) -> Value {
    let (mut body, has_tools) = start(raw, case, Format::OpenaiChat, openai_from_model, settings);
    if has_tools && !body.contains_key("tool_choice") {
        body.insert("tool_choice".into(), json!(settings.tool_choice));
    }
    if let Some(n) = settings.max_output_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(t) = settings.temperature {
        body.insert("temperature".into(), json!(t));
    }
    empty_content_not_null(&mut body);
    Value::Object(body)
}

/// Sends `"content": ""` for an assistant message's `"content": null` (or missing content): the
/// same empty turn to any OpenAI-compatible API, and the only form llama.cpp's Python server
/// takes — it answers a null with an HTTP 500 of pydantic validation errors, and a missing
/// `content` with a 500 from its chat template (`'dict object' has no attribute 'content'`).
fn empty_content_not_null(body: &mut Map<String, Value>) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for message in messages.iter_mut().filter_map(Value::as_object_mut) {
        if message.get("role").and_then(Value::as_str) == Some("assistant")
            && message.get("content").is_none_or(Value::is_null)
        {
            message.insert("content".into(), json!(""));
        }
    }
}

fn openai_from_model(case: &Case) -> Map<String, Value> {
    let mut messages = Vec::new();
    // `case.system` already holds the text of system messages in the transcript; those are sent
    // in place, so the prompt is prepended only when it came from elsewhere (a top-level field).
    let in_place = case
        .transcript
        .messages
        .iter()
        .any(|m| m.role == Role::System);
    if !case.system.is_empty() && !in_place {
        messages.push(json!({"role": "system", "content": case.system}));
    }
    for message in with_ids(&case.transcript.messages) {
        let text = message.text.join("\n");
        match message.role {
            Role::System => messages.push(json!({"role": "system", "content": text})),
            Role::Assistant => {
                let mut m = json!({"role": "assistant",
                                   "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !message.calls.is_empty() {
                    m["tool_calls"] = message.calls.iter().map(openai_call).collect();
                }
                messages.push(m);
            }
            Role::User | Role::Tool => {
                for result in &message.results {
                    messages.push(json!({"role": "tool",
                        "tool_call_id": result.call_id.clone().unwrap_or_default(),
                        "content": result.content}));
                }
                if !text.is_empty() || (message.results.is_empty() && message.role == Role::User) {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
        }
    }
    // The catalog does not say which tools were custom (free-text) ones; a tool the transcript
    // calls with free text was, and is declared so, to match its calls.
    let custom: HashSet<&str> = case
        .transcript
        .calls()
        .filter(|c| c.arguments.text().is_some())
        .map(|c| c.name.as_str())
        .collect();
    let tools: Vec<Value> = case
        .catalog
        .tools()
        .iter()
        .map(|t| {
            if custom.contains(t.name.as_str()) {
                let tool = json!({"name": t.name, "description": t.description});
                return json!({"type": "custom", "custom": tool});
            }
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description,
                "parameters": t.input_schema.clone().unwrap_or_else(|| json!({"type": "object", "properties": {}}))}})
        })
        .collect();
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    body
}

/// An assistant call in Chat Completions' shape: a function call, or a custom tool call for a
/// free-text input.
fn openai_call(call: &ToolCall) -> Value {
    let (id, name) = (call_id(call), &call.name);
    let arguments = match &call.arguments {
        Arguments::Text { text } => {
            return json!({"id": id, "type": "custom", "custom": {"name": name, "input": text}})
        }
        Arguments::Parsed(value) => value.to_string(),
        Arguments::Json(text) => text
            .value()
            .map_or_else(|| text.raw().to_owned(), Value::to_string),
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}
