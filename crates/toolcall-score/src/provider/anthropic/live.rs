//! A case as an Anthropic Messages request body, for live mode.

use serde_json::{json, Map, Value};

use crate::provider::live::{arguments_json, call_id, start, with_ids, RequestSettings};
use crate::{Case, Format, Role};

/// The Anthropic Messages body for `case`.
pub(super) fn body(raw: &Value, case: &Case, settings: &RequestSettings) -> Value {
    let (mut body, has_tools) = start(raw, case, Format::Anthropic, anthropic_from_model, settings);
    if has_tools && !body.contains_key("tool_choice") {
        let choice = match settings.tool_choice.as_str() {
            "auto" | "any" | "none" => json!({"type": settings.tool_choice}),
            "required" => json!({"type": "any"}),
            name => json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if !body.contains_key("max_tokens") {
        body.insert(
            "max_tokens".into(),
            json!(settings.max_output_tokens.unwrap_or(1024)),
        );
    }
    if let Some(t) = settings.temperature {
        body.insert("temperature".into(), json!(t));
    }
    Value::Object(body)
}

fn anthropic_from_model(case: &Case) -> Map<String, Value> {
    let mut messages: Vec<Value> = Vec::new();
    // `case.system` already holds the text of any system messages in the transcript.
    let system = case.system.clone();
    // Anthropic takes user and assistant turns only; tool results ride in user turns, and
    // consecutive turns of one side are merged into one.
    let mut push = |role: &str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        if let Some(last) = messages.last_mut() {
            if last["role"] == role {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                    return;
                }
            }
        }
        messages.push(json!({"role": role, "content": blocks}));
    };
    for message in with_ids(&case.transcript.messages) {
        let text: Vec<Value> = message
            .text
            .iter()
            .filter(|t| !t.is_empty())
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        match message.role {
            Role::System => {}
            Role::Assistant => {
                let mut blocks = text;
                blocks.extend(message.calls.iter().map(|c| {
                    json!({"type": "tool_use", "id": call_id(c), "name": c.name,
                           "input": arguments_json(&c.arguments)})
                }));
                push("assistant", blocks);
            }
            Role::User | Role::Tool => {
                let mut blocks: Vec<Value> = message
                    .results
                    .iter()
                    .map(|r| {
                        json!({"type": "tool_result",
                               "tool_use_id": r.call_id.clone().unwrap_or_default(),
                               "content": r.content, "is_error": r.is_error})
                    })
                    .collect();
                blocks.extend(text);
                push("user", blocks);
            }
        }
    }
    let tools: Vec<Value> = case
        .catalog
        .tools()
        .iter()
        .map(|t| {
            json!({"name": t.name, "description": t.description,
                   "input_schema": t.input_schema.clone().unwrap_or_else(|| json!({"type": "object", "properties": {}}))})
        })
        .collect();
    let mut body = Map::new();
    if !system.is_empty() {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    body
}
