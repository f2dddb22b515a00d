//! A case as a provider request body: OpenAI Chat Completions or Anthropic Messages.
//!
//! A case already written in the target provider's shape is sent as written (its own keys —
//! `about`, `format`, `parent_tools`, `expect` — removed, the model set), so nothing the author
//! put in it is lost. A case in another shape is rebuilt from the parsed model: system prompt,
//! tools, and the transcript's text, calls and results.

use std::collections::HashSet;

use serde_json::{json, Map, Value};
use toolcall_score::{Arguments, Case, Format, Message, Role, ToolCall};

/// Request settings that do not come from the case.
#[derive(Clone, Debug)]
pub struct RequestSettings {
    /// The model name sent in the body.
    pub model: String,
    /// `tool_choice`, sent explicitly when the request has tools (default `auto`). For Anthropic,
    /// `auto`, `any`, `none` or a tool name.
    pub tool_choice: String,
    /// Output token limit per request (Anthropic requires one; OpenAI's is sent only when set).
    pub max_output_tokens: Option<u64>,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
}

/// The case's raw body, when it is already a request of `target`'s shape: the case names the
/// format, or the core's parser read the request as that format. (An Ollama transcript looks
/// like OpenAI Chat at a glance, but its object arguments and missing ids are rejected by an
/// OpenAI server, so only the parser's verdict, which tells them apart, is trusted.)
fn as_written(raw: &Value, case: &Case, target: Format) -> Option<Map<String, Value>> {
    if case.format.or(case.request_format)? != target {
        return None;
    }
    let mut object = raw.as_object()?.clone();
    for key in Case::KEYS {
        object.remove(key);
    }
    Some(object)
}

fn arguments_json(arguments: &Arguments) -> Value {
    match arguments {
        Arguments::Parsed(value) => value.clone(),
        // The model's broken string cannot be an object; an empty one keeps the turn valid.
        Arguments::Invalid { .. } => json!({}),
        // Anthropic has no free-text tools: the text rides in an object, unchanged.
        Arguments::Text { text } => json!({ "input": text }),
    }
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
        Arguments::Invalid { raw, .. } => raw.clone(),
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// Gives every call an id and every result the id of its call: formats without ids (Gemini,
/// Ollama) pair results with calls by name, in order.
fn with_ids(messages: &[Message]) -> Vec<Message> {
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut counter = 0usize;
    messages
        .iter()
        .map(|message| {
            let mut message = message.clone();
            for call in &mut message.calls {
                let id = call.id.clone().unwrap_or_else(|| {
                    counter += 1;
                    format!("call_{counter}")
                });
                call.id = Some(id.clone());
                pending.push((id, call.name.clone()));
            }
            for result in &mut message.results {
                let at = match (&result.call_id, &result.name) {
                    (Some(id), _) => pending.iter().position(|(p, _)| p == id),
                    (None, Some(name)) => pending.iter().position(|(_, n)| n == name),
                    (None, None) => (!pending.is_empty()).then_some(0),
                };
                if let Some(at) = at {
                    let (id, _) = pending.remove(at);
                    result.call_id = Some(id);
                }
            }
            message
        })
        .collect()
}

fn call_id(call: &ToolCall) -> String {
    call.id.clone().unwrap_or_default()
}

/// The OpenAI Chat Completions body for `case`.
pub fn openai(raw: &Value, case: &Case, settings: &RequestSettings) -> Value {
    let mut body =
        as_written(raw, case, Format::OpenaiChat).unwrap_or_else(|| openai_from_model(case));
    body.insert("model".into(), json!(settings.model));
    body.insert("stream".into(), json!(false));
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
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

/// The Anthropic Messages body for `case`.
pub fn anthropic(raw: &Value, case: &Case, settings: &RequestSettings) -> Value {
    let mut body =
        as_written(raw, case, Format::Anthropic).unwrap_or_else(|| anthropic_from_model(case));
    body.insert("model".into(), json!(settings.model));
    body.insert("stream".into(), json!(false));
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
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
