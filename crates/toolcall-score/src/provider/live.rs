//! A case as a provider's request body, for live mode: what every format's request builder
//! (its `Wire::live`) shares.
//!
//! A case already written in the target provider's shape is sent as written (its own keys —
//! `about`, `format`, `parent_tools`, `expect`, `$schema` — removed, the model set), so nothing
//! the author put in it is lost. A case in another shape is rebuilt from the parsed model: system prompt,
//! tools, and the transcript's text, calls and results. Building a body is pure: sending it is
//! the caller's (`toolcall-rate`'s live transports).

use serde_json::{json, Map, Value};

use crate::{Arguments, Case, Format, Message, ToolCall};

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

/// What every request body starts as: the case as written when it already is `format`'s request,
/// else `rebuild(case)`; the model set, streaming off. Also whether it sends any tools (a
/// `tool_choice` is sent only then).
pub(super) fn start(
    raw: &Value,
    case: &Case,
    format: Format,
    rebuild: fn(&Case) -> Map<String, Value>,
    settings: &RequestSettings,
) -> (Map<String, Value>, bool) {
    let mut body = as_written(raw, case, format).unwrap_or_else(|| rebuild(case));
    body.insert("model".into(), json!(settings.model));
    body.insert("stream".into(), json!(false));
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    (body, has_tools)
}

/// A call's arguments as the JSON object a request carries.
pub(super) fn arguments_json(arguments: &Arguments) -> Value {
    match arguments {
        Arguments::Parsed(value) => value.clone(),
        // The model's broken string cannot be an object; an empty one keeps the turn valid.
        Arguments::Json(text) => text.value().cloned().unwrap_or_else(|| json!({})),
        // Anthropic has no free-text tools: the text rides in an object, unchanged.
        Arguments::Text { text } => json!({ "input": text }),
    }
}

/// Gives every call an id and every result the id of its call: formats without ids (Gemini,
/// Ollama) pair results with calls by name, in order.
pub(super) fn with_ids(messages: &[Message]) -> Vec<Message> {
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

pub(super) fn call_id(call: &ToolCall) -> String {
    call.id.clone().unwrap_or_default()
}
