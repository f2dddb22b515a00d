//! Cohere v1 chat (`POST /v1/chat`), which Cohere still serves and LangChain, LlamaIndex and
//! older SDKs still send: a request of its own members and a response of its own shape.
//!
//! - Request: `preamble` (the system prompt), `chat_history` (`{role: SYSTEM | USER | CHATBOT |
//!   TOOL, message, tool_calls, tool_results}`, roles in any case), `message` (the user's turn),
//!   `tool_results` (`[{call: {name, parameters}, outputs: [{…}]}]`, the answers to the last
//!   turn's calls, paired with them by name and arguments: v1 calls have no ids), and `tools`
//!   (`{name, description, parameter_definitions: {NAME: {type, description, required}}}`,
//!   whose `type` is a Python type name: the schema language of [`to_json_schema`]).
//! - Response: `{text, generation_id, finish_reason, tool_calls: [{name, parameters}],
//!   chat_history, meta}`; a call's `parameters` is an object (`null` reads as `{}`).
//! - Stream (`stream: true`): JSON lines with an `event_type`; `stream-end` carries the whole
//!   `response` (see `stream.rs`).

mod stream;

use serde_json::{json, Map, Value};

use super::read::{array, get, object, opt_string, push_text, required, string, At, Object};
use super::wire::{
    Answer, Member, Members, MembersExt, NativeSchema, Part, Read, Reading, RequestHalf,
    StopReasons, Stream, ToolItems, Wire,
};
use crate::errors::ParseError;
use crate::{Arguments, Format, Message, Response, Role, ToolCall, ToolResult};

/// Cohere v1 chat, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[
            Member {
                keys: &["preamble"],
                part: Part::System,
                read: Read::Own(preamble),
            },
            Member {
                keys: &["tools"],
                part: Part::Tools,
                read: Read::Tools,
            },
            Member {
                keys: &["chat_history"],
                part: Part::Transcript,
                read: Read::Own(chat_history),
            },
            Member {
                keys: &["tool_results"],
                part: Part::Transcript,
                read: Read::Own(tool_results),
            },
            Member {
                keys: &["message"],
                part: Part::Transcript,
                read: Read::Own(message),
            },
        ],
        tool: Some(tool_item),
        native_schema: Some(NativeSchema {
            name: "cohere_parameter_definitions",
            to_json_schema,
        }),
    },
    shape: "`text` with `generation_id`",
    fits,
    top_keys: &["generation_id", "text", "tool_calls", "finish_reason", "event_type"],
    read: response,
    stream: Some(Stream {
        events: "Cohere v1 `stream-start`, `tool-calls-generation` and `stream-end` events",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: None,
    answers,
    pairs_by_id: false,
    // v1 reports `COMPLETE` whether the turn ends in calls or in text.
    stop_reasons: StopReasons {
        calls: Some("COMPLETE"),
        text: Some("COMPLETE"),
    },
    conversation: None,
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A body with a `generation_id`, or a `text` and a `finish_reason` and no `message` (Cohere
/// v2's and Ollama's bodies have one); never a stream's event (those have an `event_type`).
fn fits(body: &dyn Members) -> bool {
    !body.has("event_type")
        && (body.str_of("generation_id").is_some()
            || (body.str_of("text").is_some() && body.str_of("finish_reason").is_some()))
}

/// A response body.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a Cohere v1 chat response object")?;
    let mut response = Response::empty(Format::CohereV1);
    // Every v1 body has its `text` (empty when the turn only calls tools): a body without one is
    // another format's, refused rather than read as an empty response.
    push_text(&mut response.text, string(body, "text", &at, "the response text (a string)")?);
    response.calls = calls(body, &at)?;
    response.stop_reason = opt_string(body, "finish_reason", &at)?.map(str::to_owned);
    Ok(response)
}

/// A body's (or a `chat_history` turn's) `tool_calls`: `{name, parameters}`, and the
/// `{name, args, id}` LangChain sends in a history turn, which the API accepts.
fn calls(body: &Object, at: &At<'_>) -> Result<Vec<ToolCall>, ParseError> {
    let Some(items) = get(body, "tool_calls") else {
        return Ok(Vec::new());
    };
    let calls_at = at.key("tool_calls");
    let items = array(items, &calls_at, "an array of tool calls")?;
    let mut calls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = calls_at.index(i);
        let call = object(item, &at, "a tool call object")?;
        let name = string(call, "name", &at, "a tool name (a string)")?;
        let arguments = match get(call, "parameters").or_else(|| get(call, "args")) {
            Some(value) => value.clone(),
            None => json!({}),
        };
        let id = opt_string(call, "id", &at)?;
        calls.push(ToolCall::new(id, name, arguments));
    }
    Ok(calls)
}

/// `preamble`: the system prompt.
fn preamble(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    match value {
        Value::String(s) => {
            reading.evidence.saw(&[Format::CohereV1]);
            push_text(&mut reading.system, s);
            Ok(())
        }
        other => Err(at.unexpected("a string", other)),
    }
}

/// `message`: the user's turn (empty when the request only carries `tool_results`).
fn message(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    let Value::String(text) = value else {
        return Err(at.unexpected("a string (the user's message)", value));
    };
    reading.evidence.saw(&[Format::CohereV1]);
    if !text.is_empty() {
        let mut message = Message::new(Role::User);
        push_text(&mut message.text, text);
        reading.transcript.messages.push(message);
    }
    Ok(())
}

/// `chat_history`: the turns so far.
fn chat_history(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    reading.evidence.saw(&[Format::CohereV1]);
    let items = array(value, at, "an array of chat turns")?;
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let turn = object(item, &at, "a chat turn object")?;
        const EXPECTED: &str = "a role: SYSTEM, USER, CHATBOT or TOOL";
        let role = match string(turn, "role", &at, EXPECTED)?.to_ascii_uppercase().as_str() {
            "SYSTEM" => Role::System,
            "USER" => Role::User,
            "CHATBOT" => Role::Assistant,
            "TOOL" => Role::Tool,
            _ => return Err(at.key("role").unexpected(EXPECTED, &turn["role"])),
        };
        let mut message = Message::new(role);
        if let Some(text) = opt_string(turn, "message", &at)? {
            push_text(&mut message.text, text);
        }
        message.calls = calls(turn, &at)?;
        if let Some(results) = get(turn, "tool_results") {
            message.results = results_of(results, &at.key("tool_results"))?;
        }
        if role == Role::System {
            reading.system.extend(message.text.iter().cloned());
        }
        reading.transcript.messages.push(message);
    }
    Ok(())
}

/// `tool_results`: the answers to the last turn's calls, as one tool message.
fn tool_results(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    reading.evidence.saw(&[Format::CohereV1]);
    let results = results_of(value, at)?;
    if !results.is_empty() {
        let mut message = Message::new(Role::Tool);
        message.results = results;
        reading.transcript.messages.push(message);
    }
    Ok(())
}

/// `[{call: {name, parameters}, outputs: [{…}]}]`: each result is its call's, by name (v1 has
/// no call ids); its content is the outputs' JSON text.
fn results_of(value: &Value, at: &At<'_>) -> Result<Vec<ToolResult>, ParseError> {
    let items = array(value, at, "an array of tool results")?;
    let mut results = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let result = object(item, &at, "a tool result object")?;
        let call_at = at.key("call");
        let call = object(required(result, "call", &at, "a `call` object")?, &call_at, "a `call` object")?;
        let name = string(call, "name", &call_at, "a tool name (a string)")?;
        let outputs = get(result, "outputs").cloned().unwrap_or(Value::Array(Vec::new()));
        let is_error = outputs
            .as_array()
            .is_some_and(|o| o.iter().any(|out| out.get("error").is_some()));
        results.push(ToolResult {
            call_id: None,
            name: Some(name.to_owned()),
            is_error,
            content: outputs.to_string(),
        });
    }
    Ok(results)
}

/// A tools-array item of v1's shape: a named tool with `parameter_definitions`.
fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    if !(tool.contains_key("name") && tool.contains_key("parameter_definitions")) {
        return None;
    }
    items.evidence.saw(&[Format::CohereV1]);
    Some(
        super::collect::named_tool(tool, at).map(|mut named| {
            named.schema_dialect = crate::SchemaDialect::Native(Format::CohereV1);
            let schema = &tool["parameter_definitions"];
            items
                .out
                .push(named, Some((schema, at.key("parameter_definitions"))));
        }),
    )
}

/// `parameter_definitions` as JSON Schema: an object whose properties are the definitions,
/// each `type` a Python type name (`str`, `int`, `float`, `bool`, `List[…]`, `Dict[…]`; one it
/// does not know constrains nothing, as the API does not reject it), `required: true` listed in
/// `required`.
pub(crate) fn to_json_schema(definitions: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Value::Object(definitions) = definitions {
        for (name, definition) in definitions {
            let mut property = Map::new();
            if let Some(kind) = definition.get("type").and_then(Value::as_str) {
                if let Some(kind) = json_type(kind) {
                    property.insert("type".into(), kind.into());
                }
            }
            if let Some(description) = definition.get("description") {
                property.insert("description".into(), description.clone());
            }
            if definition.get("required") == Some(&Value::Bool(true)) {
                required.push(Value::String(name.clone()));
            }
            properties.insert(name.clone(), Value::Object(property));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// The JSON Schema type of a Python type name, as Cohere's SDKs write them.
fn json_type(python: &str) -> Option<&'static str> {
    let base = python.split('[').next().unwrap_or(python).trim();
    match base.to_ascii_lowercase().as_str() {
        "str" | "string" => Some("string"),
        "int" | "integer" => Some("integer"),
        "float" | "number" => Some("number"),
        "bool" | "boolean" => Some("boolean"),
        "list" | "array" | "tuple" => Some("array"),
        "dict" | "object" => Some("object"),
        _ => None,
    }
}

/// The loop guard's answers, as `tool_results` items (v1 sends them in the request's
/// `tool_results`, not as messages): each names its call by name and arguments, and an error
/// is an output with `error`.
pub(super) fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    answers
        .iter()
        .map(|answer| {
            let parameters = match answer.arguments {
                Arguments::Parsed(value) => value.clone(),
                Arguments::Json(text) => text
                    .value()
                    .cloned()
                    .unwrap_or_else(|| Value::String(text.raw().to_owned())),
                Arguments::Text { text } => Value::String(text.clone()),
            };
            let output = match answer.output {
                Ok(Value::Object(object)) => Value::Object(object.clone()),
                Ok(_) => json!({"output": answer.text}),
                Err(_) => json!({"error": answer.text}),
            };
            json!({
                "call": {"name": answer.name, "parameters": parameters},
                "outputs": [output],
            })
        })
        .collect()
}
