//! Gemini `generateContent`: `candidates[0].content.parts[]` with `functionCall` and `text`, and
//! the request's `contents`, `systemInstruction` and `tools[].functionDeclarations`.
//!
//! Call ids are optional (newer models send them; they are echoed when present). A call without
//! `args` has no arguments and reads as `{}`. The finish reasons `UNEXPECTED_TOOL_CALL` and
//! `MALFORMED_FUNCTION_CALL` mean the model tried to call a tool and the API threw the call away
//! (the candidate often has no content at all): they become anomalies, with the API's
//! `finishMessage` when it sent one. Parts marked `thought` are reasoning, not answer text, and
//! are skipped. Only candidate 0 is read, as for OpenAI's choices.
//!
//! The REST API spells keys in camelCase; the Python SDK's `model_dump()` in snake_case. Both are
//! read.

mod schema;
mod stream;

use serde_json::Value;

use super::conversation;
use super::read::{array, get, get_any, object, opt_bool, opt_id, opt_object, opt_string};
use super::read::{push_text, string, At, Evidence, Object};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, NativeSchema, Part, Read, Reading, RequestHalf, StopReasons, Stream, ToolItems, Wire, object_of};
use crate::errors::ParseError;
use crate::{Anomaly, AnomalyKind, Arguments, Format, Message, Response, Role, ToolCall};
use crate::{SchemaDialect, ToolResult, Transcript};

/// Gemini `generateContent`, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["systemInstruction", "system_instruction"], part: Part::System, read: Read::Own(system_instruction) }, Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["contents"], part: Part::Transcript, read: Read::Own(contents) }],
        tool: Some(tool_item),
        native_schema: Some(NativeSchema { name: "gemini_open_api", to_json_schema: schema::from_openapi }),
    },
    shape: "`candidates`",
    fits,
    top_keys: &["candidates"],
    read: response,
    stream: Some(Stream {
        events: "Gemini chunks with `candidates`",
        is_event: stream::is_event,
        like_a_body: |_| true,
        assemble: stream::assemble,
    }),
    live: None,
    answers,
    pairs_by_id: false,
    stop_reasons: StopReasons {
        calls: Some("STOP"),
        text: Some("STOP"),
    },
    conversation: Some(Conversation {
        transcript: &["contents"],
        carried: &["systemInstruction", "system_instruction"],
        tools_key: "tools",
        tools: declarations,
        // `assistant` too, as the request reader accepts it for `model`.
        turn: |items, i| conversation::message_turn(items, i, &["model", "assistant"]),
        respond: |turn, meta| {
            serde_json::json!({
                "candidates": [{"content": turn.first(), "finishReason": "STOP", "index": 0}],
                "modelVersion": meta.model,
                "responseId": meta.id,
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// Bare definitions gathered into one `{"functionDeclarations": [...]}` tool, where the first of
/// them was; other tools (declaration groups, `googleSearch`, …) kept as they are. A schema
/// written as `parameters` stays there (Gemini's own key, which OpenAI-style schemas fit); one
/// under `input_schema` / `inputSchema` is JSON Schema, which Gemini takes as
/// `parametersJsonSchema`.
fn declarations(tools: &Value) -> Value {
    let Value::Array(items) = tools else {
        return tools.clone();
    };
    let mut out = Vec::with_capacity(items.len());
    let mut group: Option<usize> = None;
    for item in items {
        let Some(tool) = conversation::bare(item) else {
            out.push(item.clone());
            continue;
        };
        let key = if tool.contains_key("parameters") {
            "parameters"
        } else {
            "parametersJsonSchema"
        };
        let declaration = Value::Object(conversation::with_schema(tool, key));
        let at = *group.get_or_insert_with(|| {
            out.push(serde_json::json!({"functionDeclarations": []}));
            out.len() - 1
        });
        if let Some(Value::Array(list)) = out[at].get_mut("functionDeclarations") {
            list.push(declaration);
        }
    }
    Value::Array(out)
}

/// `candidates`.
fn fits(body: &dyn Members) -> bool {
    body.has("candidates")
}

/// One user content of `{"functionResponse":{"name":…,"id":…,"response":{"output":…}|{"error":…}}}`
/// parts: the keys Gemini documents for a function's output and for its error details. Ids are
/// echoed only when the call had one.
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    let parts = answers.iter().map(|answer| {
        let response = match answer.output {
            Ok(value) => serde_json::json!({ "output": value }),
            Err(text) => serde_json::json!({ "error": text }),
        };
        serde_json::json!({
            "functionResponse": object_of([
                ("name", Some(answer.name.into())),
                ("id", answer.id_value()),
                ("response", Some(response)),
            ])
        })
    });
    vec![serde_json::json!({"role": "user", "parts": parts.collect::<Vec<_>>()})]
}

/// A response body: `{"candidates": [{"content": {"parts": [...]}, "finishReason": ...}]}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a generateContent response object")?;
    let candidates_at = at.key("candidates");
    let Some(candidates) = get(body, "candidates") else {
        return Err(candidates_at.missing(format!(
            "an array of candidates{}",
            blocked(body).unwrap_or_default()
        )));
    };
    let candidates = array(candidates, &candidates_at, "an array of candidates")?;
    let Some(candidate) = candidates.first() else {
        return Err(candidates_at.error(
            format!(
                "at least one candidate{}",
                blocked(body).unwrap_or_default()
            ),
            "an empty array",
        ));
    };
    let candidate_at = candidates_at.index(0);
    let candidate = object(candidate, &candidate_at, "a candidate object")?;
    let mut response = Response::empty(Format::Gemini);
    if let Some(content) = opt_object(candidate, "content", &candidate_at, "a content object")? {
        let content_at = candidate_at.key("content");
        let parts = parts(content, &content_at)?;
        let parts_at = content_at.key("parts");
        for (i, part) in parts.iter().enumerate() {
            let at = parts_at.index(i);
            let part = object(part, &at, "a part object")?;
            if let Some((key, call)) = get_any(part, &["functionCall", "function_call"]) {
                let call_at = at.key(key);
                response.calls.push(function_call(
                    object(call, &call_at, "a functionCall object")?,
                    &call_at,
                )?);
            } else if let Some(text) = text(part, &at)? {
                push_text(&mut response.text, text);
            }
        }
    }
    let reason_key = if candidate.contains_key("finish_reason") {
        "finish_reason"
    } else {
        "finishReason"
    };
    let reason = finish_reason(candidate, reason_key, &candidate_at)?;
    let reason = reason.as_deref();
    let kind = match reason {
        Some("UNEXPECTED_TOOL_CALL") => Some(AnomalyKind::UnexpectedToolCall),
        Some("MALFORMED_FUNCTION_CALL") => Some(AnomalyKind::MalformedCall),
        _ => None,
    };
    if let (Some(kind), Some(reason)) = (kind, reason) {
        let message = match get_any(candidate, &["finishMessage", "finish_message"]) {
            Some((_, Value::String(s))) => format!(": {}", crate::escape(s)),
            Some((key, other)) => return Err(candidate_at.key(key).unexpected("a string", other)),
            None => String::new(),
        };
        response.anomalies.push(Anomaly {
            kind,
            detail: format!("Gemini finishReason {reason}{message}"),
        });
    }
    response.stop_reason = reason.map(str::to_owned);
    Ok(response)
}

/// A candidate's finish reason: its name, or — from clients that ask for
/// `enum-encoding=int`, as the Go SDK does — its number. Only the numbers the Gemini API's and
/// Vertex AI's `FinishReason` enums agree on (0 to 5: unspecified, STOP, MAX_TOKENS, SAFETY,
/// RECITATION, OTHER) are named; from 6 on the two number their values differently (Vertex has
/// no LANGUAGE), and the body does not say which backend sent it, so a larger number stays a
/// number and never raises an anomaly: a guessed MALFORMED_FUNCTION_CALL would fail a good
/// response.
fn finish_reason(candidate: &Object, key: &str, at: &At<'_>) -> Result<Option<String>, ParseError> {
    const NAMES: [&str; 6] = [
        "FINISH_REASON_UNSPECIFIED",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
        "RECITATION",
        "OTHER",
    ];
    match get(candidate, key) {
        None => Ok(None),
        Some(Value::String(name)) => Ok(Some(name.clone())),
        Some(Value::Number(n)) => Ok(Some(
            n.as_u64()
                .and_then(|i| NAMES.get(usize::try_from(i).ok()?))
                .map_or_else(|| n.to_string(), |name| (*name).to_owned()),
        )),
        Some(other) => Err(at
            .key(key)
            .unexpected("a finish reason (a string or its number)", other)),
    }
}

/// `promptFeedback.blockReason`, worded for an error message, when the prompt was blocked (the
/// reason a response has no candidates).
fn blocked(body: &Object) -> Option<String> {
    let feedback = get_any(body, &["promptFeedback", "prompt_feedback"])?.1;
    let reason = feedback
        .get("blockReason")
        .or_else(|| feedback.get("block_reason"))?
        .as_str()?;
    Some(format!(
        " (the prompt was blocked: promptFeedback.blockReason {})",
        crate::escape(reason)
    ))
}

/// A content's `parts` (absent or `null` is none).
fn parts<'v>(content: &'v Object, at: &At<'_>) -> Result<&'v [Value], ParseError> {
    match get(content, "parts") {
        None => Ok(&[]),
        Some(parts) => array(parts, &at.key("parts"), "an array of parts"),
    }
}

/// A text part's text, unless it is a thought.
fn text<'v>(part: &'v Object, at: &At<'_>) -> Result<Option<&'v str>, ParseError> {
    if opt_bool(part, "thought", at)? {
        return Ok(None);
    }
    opt_string(part, "text", at)
}

/// `{"name": …, "args": {...}, "id"?: …}`.
fn function_call(call: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    Ok(ToolCall {
        id: opt_id(call, "id", at)?,
        name: string(call, "name", at, "a function name (a string)")?.to_owned(),
        namespace: None,
        arguments: Arguments::Parsed(
            get(call, "args")
                .cloned()
                .unwrap_or_else(|| Value::Object(Object::new())),
        ),
        builtin: None,
    })
}

/// `{"name": …, "id"?: …, "response": {...}}`; a response with an `error` key is an error result.
fn function_response(result: &Object, at: &At<'_>) -> Result<ToolResult, ParseError> {
    let response = opt_object(result, "response", at, "a response object")?;
    Ok(ToolResult {
        call_id: opt_id(result, "id", at)?,
        name: opt_string(result, "name", at)?.map(str::to_owned),
        is_error: response.is_some_and(|r| r.contains_key("error")),
        content: get(result, "response")
            .map(Value::to_string)
            .unwrap_or_default(),
    })
}

/// One `Content` of a request's `contents` (or a `messages` item shaped like one):
/// `{"role": "user" | "model" | "function", "parts": [...]}`.
pub(super) fn content(
    content: &Object,
    at: &At<'_>,
    evidence: &mut Evidence,
) -> Result<Message, ParseError> {
    evidence.saw(&[Format::Gemini]);
    let role = match opt_string(content, "role", at)? {
        None | Some("user") => Role::User,
        Some("model") | Some("assistant") => Role::Assistant,
        Some("function") | Some("tool") => Role::Tool,
        Some("system") => Role::System,
        Some(_) => {
            let found = get(content, "role").unwrap_or(&Value::Null);
            return Err(at
                .key("role")
                .unexpected("a Gemini role (user, model, function)", found));
        }
    };
    let mut message = Message::new(role);
    let parts_at = at.key("parts");
    for (i, part) in parts(content, at)?.iter().enumerate() {
        let at = parts_at.index(i);
        let part = object(part, &at, "a part object")?;
        if let Some((key, call)) = get_any(part, &["functionCall", "function_call"]) {
            let call_at = at.key(key);
            let call = object(call, &call_at, "a functionCall object")?;
            message.calls.push(function_call(call, &call_at)?);
        } else if let Some((key, result)) =
            get_any(part, &["functionResponse", "function_response"])
        {
            let result_at = at.key(key);
            let result = object(result, &result_at, "a functionResponse object")?;
            message.results.push(function_response(result, &result_at)?);
        } else if let Some(text) = text(part, &at)? {
            push_text(&mut message.text, text);
        }
    }
    Ok(message)
}

/// The request's `contents`: an array of `Content`s (a bare string is one user message, as the
/// SDKs allow).
pub(super) fn contents_into(
    value: &Value,
    at: &At<'_>,
    transcript: &mut Transcript,
    system: &mut Vec<String>,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    evidence.saw(&[Format::Gemini]);
    if let Value::String(s) = value {
        let mut message = Message::new(Role::User);
        push_text(&mut message.text, s);
        transcript.messages.push(message);
        return Ok(());
    }
    let items = array(value, at, "an array of contents")?;
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let message = content(object(item, &at, "a content object")?, &at, evidence)?;
        if message.role == Role::System {
            system.extend(message.text.iter().cloned());
        }
        transcript.messages.push(message);
    }
    Ok(())
}

/// `systemInstruction`: a `Content` (`{"parts": [{"text": …}]}`) or, as the SDKs allow, a string.
pub(super) fn system_instruction_into(
    value: &Value,
    at: &At<'_>,
    system: &mut Vec<String>,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    evidence.saw(&[Format::Gemini]);
    match value {
        Value::String(s) => push_text(system, s),
        Value::Object(content) => {
            let parts_at = at.key("parts");
            for (i, part) in parts(content, at)?.iter().enumerate() {
                let at = parts_at.index(i);
                if let Some(text) = text(object(part, &at, "a part object")?, &at)? {
                    push_text(system, text);
                }
            }
        }
        other => return Err(at.unexpected("a content object or a string", other)),
    }
    Ok(())
}

/// A tool's `functionDeclarations`: `[{"name", "description", "parameters" |
/// "parametersJsonSchema"}]`. `parameters` is Google's `Schema` object, an OpenAPI 3.0 subset,
/// and its tool says so ([`SchemaDialect::Native`]); `parametersJsonSchema` is JSON
/// Schema.
pub(super) fn declarations_into(
    value: &Value,
    at: &At<'_>,
    out: &mut super::collect::Tools,
) -> Result<(), ParseError> {
    const SCHEMA_KEYS: [&str; 3] = [
        "parameters",
        "parametersJsonSchema",
        "parameters_json_schema",
    ];
    let items = array(value, at, "an array of function declarations")?;
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let item = object(item, &at, "a function declaration")?;
        let mut tool = super::collect::named_tool(item, &at)?;
        let schema = get_any(item, &SCHEMA_KEYS);
        if let Some(("parameters", _)) = schema {
            tool.schema_dialect = SchemaDialect::Native(Format::Gemini);
        }
        out.push(tool, schema.map(|(key, schema)| (schema, at.key(key))));
    }
    Ok(())
}

/// Gemini's built-in tools: objects keyed by the tool, with no `name` (the REST API's camelCase
/// keys and the Python SDK's snake_case ones, as the SDKs' `Tool` types list them).
const GEMINI_BUILTINS: [&str; 23] = [
    "googleSearch",
    "google_search",
    "googleSearchRetrieval",
    "google_search_retrieval",
    "codeExecution",
    "code_execution",
    "urlContext",
    "url_context",
    "googleMaps",
    "google_maps",
    "computerUse",
    "computer_use",
    "fileSearch",
    "file_search",
    "enterpriseWebSearch",
    "enterprise_web_search",
    "parallelAiSearch",
    "parallel_ai_search",
    "exaAiSearch",
    "exa_ai_search",
    "mcpServers",
    "mcp_servers",
    "retrieval",
];

/// A tools-array item of Gemini's shape: `{functionDeclarations: [...]}`, or a built-in tool
/// keyed by its name (`{googleSearch: {}}`), which nothing calls as a function.
pub(super) fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    if let Some((key, declarations)) =
        get_any(tool, &["functionDeclarations", "function_declarations"])
    {
        items.evidence.saw(&[Format::Gemini]);
        return Some(declarations_into(declarations, &at.key(key), items.out));
    }
    let bare = !tool.contains_key("type")
        && !tool.contains_key("name")
        && !get(tool, "function").is_some_and(Value::is_object);
    if bare && GEMINI_BUILTINS.iter().any(|k| tool.contains_key(*k)) {
        items.evidence.saw(&[Format::Gemini]);
        return Some(Ok(()));
    }
    None
}

/// `systemInstruction`, as a request member.
fn system_instruction(
    value: &Value,
    at: &At<'_>,
    reading: &mut Reading<'_>,
) -> Result<(), ParseError> {
    system_instruction_into(value, at, &mut reading.system, &mut reading.evidence)
}

/// `contents`, as a request member.
fn contents(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    contents_into(
        value,
        at,
        &mut reading.transcript,
        &mut reading.system,
        &mut reading.evidence,
    )
}

