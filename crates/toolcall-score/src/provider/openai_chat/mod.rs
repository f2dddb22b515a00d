//! OpenAI Chat Completions: `choices[0].message.tool_calls[].function.{name, arguments}` (and
//! `.custom.{name, input}`).
//!
//! `arguments` is a JSON *string*, kept as text ([`Arguments::Json`]): one that is not valid JSON
//! is a finding for the scorer, never a parse error. OpenAI-compatible servers that send an object
//! instead are read as they are. `content` may be `null`, a string or an array of parts; a
//! `refusal` is kept as text.
//!
//! Only the first choice is read: `n > 1` asks for alternative answers, and a test scores the
//! answer the agent loop would act on, which is choice 0.
//!
//! The legacy `function_call` field is read when there are no `tool_calls`. When both are present
//! and the legacy call matches none of the `tool_calls` (a proxy that rewrote one of them, a stray
//! `"list_invoices:"`), an [`AnomalyKind::LegacyMismatch`] is recorded and only `tool_calls` are
//! scored.
//!
//! A `custom` tool call (`{"type": "custom", "custom": {"name", "input"}}`, GPT-5's free-text
//! tools) is read in order with the function calls, its input as [`Arguments::Text`]: its name
//! is checked like any other, its input is not JSON and is not checked as JSON. Calls of any
//! other `type` are skipped.

mod live;
mod stream;

use serde_json::{json, Value};

use super::conversation;
use super::read::{required_object, array, get, json_string_arguments, object, opt_id, opt_string, push_text};
use super::read::{required, string, At, Evidence, Object};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, Part, Read, Reading, RequestHalf, StopReasons, Stream, ToolItems, Wire, object_of};
use crate::errors::ParseError;
use crate::{Anomaly, AnomalyKind, Arguments, Format, Response, ToolCall};

/// OpenAI Chat Completions, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["functions"], part: Part::Tools, read: Read::Own(functions) }, Member { keys: &["messages"], part: Part::Transcript, read: Read::Messages }],
        tool: Some(tool_item),
        native_schema: None,
    },
    shape: "`choices`",
    fits,
    top_keys: &["choices", "object"],
    read: response,
    stream: Some(Stream {
        events: "OpenAI `chat.completion.chunk`s",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: Some(live::body),
    answers,
    pairs_by_id: true,
    stop_reasons: StopReasons {
        calls: Some("tool_calls"),
        text: Some("stop"),
    },
    conversation: Some(CONVERSATION),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A logged Chat Completions conversation: `messages`, the system prompt among them, calls on
/// `assistant` messages; also the importer's format for a transcript whose shapes name none.
const CONVERSATION: Conversation = Conversation {
    transcript: &["messages"],
    carried: &[],
    tools_key: "tools",
    tools: function_tools,
    turn: |items, i| conversation::message_turn(items, i, &["assistant"]),
    respond: |turn, meta| {
        json!({
            "id": meta.id,
            "object": "chat.completion",
            "model": meta.model,
            "choices": [{"index": 0, "message": turn.first(), "finish_reason": "tool_calls"}],
        })
    },
};

/// Bare definitions as `{"type": "function", "function": {name, description, parameters}}`
/// (Ollama's tools too).
pub(super) fn function_tools(tools: &Value) -> Value {
    conversation::wrap_bare(
        tools,
        |tool| json!({"type": "function", "function": conversation::with_schema(tool, "parameters")}),
    )
}

/// `{"object": "chat.completion", …}`, or just `choices` (but not a stream's chunk).
fn fits(body: &dyn Members) -> bool {
    body.str_of("object") == Some("chat.completion")
        || (body.has("choices") && body.str_of("object") != Some("chat.completion.chunk"))
}

/// `{"role":"tool","tool_call_id":…,"content":…}` for each, function and custom calls alike:
/// Chat Completions has no error flag, the text says it.
pub(super) fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    answers
        .iter()
        .map(|answer| {
            object_of([
                ("role", Some("tool".into())),
                ("tool_call_id", answer.id_value()),
                ("content", Some(answer.text.into())),
            ])
        })
        .collect()
}

/// A response body: `{"object": "chat.completion", "choices": [{"message": {...}}]}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a chat completion object")?;
    let choices_at = at.key("choices");
    let choices = array(
        required(body, "choices", &at, "an array of choices")?,
        &choices_at,
        "an array of choices",
    )?;
    let Some(choice) = choices.first() else {
        return Err(choices_at.error("at least one choice", "an empty array"));
    };
    let choice_at = choices_at.index(0);
    let choice = object(choice, &choice_at, "a choice object")?;
    let message_at = choice_at.key("message");
    let message = required_object(choice, "message", &choice_at, "a message object")?;

    let mut response = Response::empty(Format::OpenaiChat);
    content_into(message, &message_at, &mut response.text)?;
    if let Some(refusal) = opt_string(message, "refusal", &message_at)? {
        push_text(&mut response.text, refusal);
    }
    let mut evidence = Evidence::default();
    response.calls = tool_calls(message, &message_at, true, &mut evidence)?;
    if let Some(legacy) = legacy_function_call(message, &message_at)? {
        if response.calls.is_empty() {
            response.calls.push(legacy);
        } else if let Some(detail) = mismatch(&legacy, &response.calls) {
            response.anomalies.push(Anomaly {
                kind: AnomalyKind::LegacyMismatch,
                detail,
            });
        }
    }
    response.stop_reason = opt_string(choice, "finish_reason", &choice_at)?.map(str::to_owned);
    Ok(response)
}

/// Why the legacy call disagrees with `tool_calls`, or `None` when one of them is the same call.
pub(super) fn mismatch(legacy: &ToolCall, calls: &[ToolCall]) -> Option<String> {
    let same_name: Vec<&ToolCall> = calls.iter().filter(|c| c.name == legacy.name).collect();
    if same_name.iter().any(|c| c.arguments == legacy.arguments) {
        return None;
    }
    let names: Vec<String> = calls
        .iter()
        .map(|c| format!("`{}`", crate::escape(&c.name)))
        .collect();
    let names = names.join(", ");
    // llama-cpp-python's `chatml-function-calling` fills the legacy field from its follow-up
    // completion: the name with the grammar's trailing colon, or an empty name when the model
    // stopped. Said plainly, so nobody chases a renamed tool.
    let why = if legacy.name.is_empty() {
        return Some(format!(
            "the legacy `function_call` has an empty name beside the `tool_calls` ({names}) \
             (llama-cpp-python's chatml-function-calling leaves it so); only `tool_calls` are scored"
        ));
    } else if same_name.is_empty()
        && calls
            .iter()
            .any(|c| legacy.name.strip_suffix(':') == Some(c.name.as_str()))
    {
        " with a stray trailing colon (llama-cpp-python's chatml-function-calling writes it)"
    } else {
        ""
    };
    let what = if same_name.is_empty() {
        "names"
    } else {
        "has other arguments than"
    };
    Some(format!(
        "the legacy `function_call` `{}` {what} the `tool_calls` ({names}){why}; only `tool_calls` are scored",
        crate::escape(&legacy.name),
    ))
}

/// A message's `content`: `null`, a string, or an array of typed parts (`text`, `refusal`).
pub(super) fn content_into(
    message: &Object,
    at: &At<'_>,
    out: &mut Vec<String>,
) -> Result<(), ParseError> {
    super::read::content_text_into(message, at, &["text"], out)
}

/// A message's `tool_calls` (absent or `null` is none). With `json_strings`, string arguments
/// are JSON text (OpenAI); without, they are kept as the string they are (Ollama, whose
/// arguments are an object, so a string is itself the model's mistake).
pub(super) fn tool_calls(
    message: &Object,
    at: &At<'_>,
    json_strings: bool,
    evidence: &mut Evidence,
) -> Result<Vec<ToolCall>, ParseError> {
    let Some(value) = get(message, "tool_calls") else {
        return Ok(Vec::new());
    };
    let calls_at = at.key("tool_calls");
    let items = array(value, &calls_at, "an array of tool calls")?;
    let mut calls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = calls_at.index(i);
        let item = object(item, &at, "a tool call object")?;
        let mut call = match opt_string(item, "type", &at)? {
            None | Some("function") => {
                let function_at = at.key("function");
                let function = required_object(item, "function", &at, "a `function` object")?;
                function_call(function, &function_at, json_strings, evidence)?
            }
            Some("custom") => {
                evidence.saw(&[Format::OpenaiChat]);
                let custom_at = at.key("custom");
                let custom = required_object(item, "custom", &at, "a `custom` object")?;
                custom_call(custom, &custom_at)?
            }
            Some(_) => continue,
        };
        call.id = opt_id(item, "id", &at)?;
        calls.push(call);
    }
    Ok(calls)
}

/// `{"name": …, "input": "…"}`, the inside of a custom tool call: free text, kept as it is.
fn custom_call(custom: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(custom, "name", at, "a custom tool name (a string)")?;
    let input = string(custom, "input", at, "the call's `input` (a string)")?;
    Ok(ToolCall {
        id: None,
        name: name.to_owned(),
        namespace: None,
        arguments: Arguments::Text {
            text: input.to_owned(),
        },
        builtin: None,
    })
}

/// `{"name": …, "arguments": …}`, the inside of a tool call or the legacy `function_call`.
fn function_call(
    function: &Object,
    at: &At<'_>,
    json_strings: bool,
    evidence: &mut Evidence,
) -> Result<ToolCall, ParseError> {
    let name = string(function, "name", at, "a function name (a string)")?;
    let arguments = match get(function, "arguments") {
        Some(Value::String(raw)) if json_strings => {
            evidence.saw(&[Format::OpenaiChat]);
            json_string_arguments(raw)
        }
        Some(other) => {
            if other.is_object() {
                evidence.saw(&[Format::Ollama]);
            }
            Arguments::Parsed(other.clone())
        }
        // No `arguments` (or `null`): a call with no arguments, as OpenAI-compatible servers
        // send a call to a tool without parameters.
        None => Arguments::Parsed(Value::Object(Object::new())),
    };
    Ok(ToolCall {
        id: None,
        name: name.to_owned(),
        namespace: None,
        arguments,
        builtin: None,
    })
}

/// The legacy `function_call` field, when present.
pub(super) fn legacy_function_call(
    message: &Object,
    at: &At<'_>,
) -> Result<Option<ToolCall>, ParseError> {
    let Some(value) = get(message, "function_call") else {
        return Ok(None);
    };
    let call_at = at.key("function_call");
    let function = object(value, &call_at, "a `function_call` object")?;
    if is_zero_value(function) {
        return Ok(None);
    }
    function_call(function, &call_at, true, &mut Evidence::default()).map(Some)
}

/// Whether a legacy `function_call` holds only its fields' zero values (`{"name": "",
/// "arguments": ""}`): what SDK accumulators and OpenAI-compatible servers write beside
/// `tool_calls` when the deprecated field was never used. It is absent, not a call named "".
fn is_zero_value(function: &Object) -> bool {
    function.iter().all(|(key, value)| match key.as_str() {
        "name" | "arguments" => matches!(value, Value::Null) || value.as_str() == Some(""),
        _ => false,
    })
}

/// A tool definition `{"type": "function", "function": {"name", "description", "parameters"}}`
/// (also Ollama's); `function` is the inner object.
pub(super) fn tool(
    function: &Object,
    at: &At<'_>,
    out: &mut super::collect::Tools,
) -> Result<(), ParseError> {
    super::collect::tool_fields(function, at, &["parameters"], out)
}

/// A tools-array item of Chat Completions' shape: `{type: "function", function: {…}}` (also
/// without its `type`, as some SDKs send it, which the API reads as a function), or a custom
/// tool, whose name Chat nests under `custom` (the Responses API's is flat).
pub(super) fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    let kind = tool.get("type").and_then(Value::as_str);
    let function = get(tool, "function");
    let untyped_function =
        kind.is_none() && !tool.contains_key("name") && function.is_some_and(Value::is_object);
    if (kind == Some("function") && function.is_some()) || untyped_function {
        items.evidence.saw(&[Format::OpenaiChat, Format::Ollama]);
        let function_at = at.key("function");
        return Some(
            object(&tool["function"], &function_at, "a `function` object")
                .and_then(|function| self::tool(function, &function_at, items.out)),
        );
    }
    if kind == Some("custom") && get(tool, "custom").is_some() {
        items.evidence.saw(&[Format::OpenaiChat]);
        let custom_at = at.key("custom");
        return Some(
            object(&tool["custom"], &custom_at, "a `custom` object")
                .and_then(|custom| super::collect::tool_fields(custom, &custom_at, &[], items.out)),
        );
    }
    None
}

/// The deprecated `functions` member, still accepted by the API.
fn functions(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    reading.evidence.saw(&[Format::OpenaiChat]);
    let items = array(value, at, "an array of function definitions")?;
    legacy_functions(items, at, reading.tools)
}

/// OpenAI Chat's deprecated `functions`: each item a bare `{name, description, parameters}`.
fn legacy_functions(
    items: &[Value],
    at: &At<'_>,
    out: &mut super::collect::Tools,
) -> Result<(), ParseError> {
    out.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let function = object(item, &at, "a function definition object")?;
        tool(function, &at, out)?;
    }
    Ok(())
}

