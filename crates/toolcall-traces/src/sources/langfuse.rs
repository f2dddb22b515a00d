//! Langfuse: a trace as its UI and public API export it, `{"trace": {…}, "observations": [...]}`
//! (or the API's `{"data": [observations]}`).
//!
//! Each `GENERATION` observation is a model turn. Langfuse's own `toolDefinitions` and
//! `toolCalls` are empty in most real exports while the data sits elsewhere, so the catalog is
//! looked for, in order, in: `toolDefinitions`; the original span attributes kept under
//! `metadata.attributes` (GenAI `gen_ai.tool.definitions`, OpenLLMetry's
//! `llm.request.functions.N`, OpenInference's `llm.tools.N.tool.json_schema`, pydantic-ai's
//! `model_request_parameters` with its `function_tools` and `output_tools`, the Vercel AI SDK's
//! `ai.prompt.tools`); the raw request in `input` (`tools`, Gemini's `config.tools`) or in
//! `modelParameters.tools`; the tools the Responses API echoes in `output`; and LangChain's
//! callback, which passes the tools as `role: "tool"` messages whose content is a function
//! definition. None of these: not recorded. The calls come from `output` (GenAI parts, any
//! provider's response body the core reads, Gemini's `function_call` parts, a LangChain
//! message's `tool_calls`), else from `toolCalls` with `toolCallNames`, else from the legacy
//! completion attributes. A tool observation whose call a generation holds is folded into it.
//! `input`, `output` and `metadata` may each be JSON, or JSON in a string (twice, sometimes).

use serde_json::Value;
use toolcall_score::{Message, Response, Role, ToolCall};

use crate::model::{arguments_of, call, chat_calls, joined, read_message, reply, text_of, tool};

use crate::spans::Span;
use crate::{Catalog, Found, Records, Turn};

use super::otel_genai;
use super::{Groups, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "langfuse",
    about: "Langfuse exports: {\"trace\", \"observations\"} (or the API's {\"data\": [...]}) \
            with GENERATION observations",
    reads: Reads::Records {
        claims,
        turns,
        groups: Groups::Key(trace_of),
    },
};

/// The blob storage export's snake_case columns, as the API's camelCase names.
const COLUMNS: [(&str, &str); 8] = [
    ("trace_id", "traceId"),
    ("parent_observation_id", "parentObservationId"),
    ("start_time", "startTime"),
    ("tool_definitions", "toolDefinitions"),
    ("tool_calls", "toolCalls"),
    ("tool_call_names", "toolCallNames"),
    ("model_parameters", "modelParameters"),
    ("provided_model_name", "model"),
];

/// An observation row with the API's names.
fn camel(v: &Value) -> Value {
    let Some(map) = v.as_object() else {
        return v.clone();
    };
    let mut out = map.clone();
    for (snake, camel) in COLUMNS {
        if let Some(value) = out.remove(snake) {
            out.entry(camel).or_insert(value);
        }
    }
    Value::Object(out)
}

fn is_observation(v: &Value) -> bool {
    (v.get("traceId").is_some() || v.get("trace_id").is_some())
        && v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

fn observations(doc: &Value) -> Option<Vec<Value>> {
    let list = doc
        .get("observations")
        .filter(|_| doc.get("trace").is_some())
        .or_else(|| doc.get("data"))?
        .as_array()?;
    list.iter()
        .all(is_observation)
        .then(|| list.iter().map(camel).collect())
}

/// The trace a record belongs to: a row's `trace_id` (a number as its text; rows with none
/// share one group, as they share one trace when read whole), an export's trace; a record
/// with neither stands alone. (A list of rows is grouped row by row: see [`Groups::Key`].)
fn trace_of(record: &Value) -> Option<String> {
    if is_observation(record) {
        let id = record.get("traceId").or_else(|| record.get("trace_id"));
        return Some(match id {
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(id)) => id.to_string(),
            _ => String::new(),
        });
    }
    record
        .pointer("/trace/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn claims(first: &Value) -> bool {
    // A trace export, or the blob storage export's rows: one observation a line (or a list).
    observations(first).is_some_and(|o| !o.is_empty())
        || is_observation(first)
        || first
            .as_array()
            .is_some_and(|rows| !rows.is_empty() && rows.iter().all(is_observation))
}

/// JSON that may sit in a string, once or twice.
fn decoded(v: Option<&Value>) -> Value {
    let mut v = v.cloned().unwrap_or(Value::Null);
    for _ in 0..2 {
        match &v {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(inner) if !inner.is_string() || s.starts_with('"') => v = inner,
                _ => break,
            },
            _ => break,
        }
    }
    v
}

fn turns(records: &Records, found: &mut Found) {
    // Rows (JSON Lines, or one list): all one export, read as one list of observations.
    let rows: Vec<Value> = records
        .values
        .iter()
        .flat_map(|(_, v)| match v {
            Value::Array(items) if items.iter().all(is_observation) => items.clone(),
            v if is_observation(v) => vec![v.clone()],
            _ => Vec::new(),
        })
        .map(|v| camel(&v))
        .collect();
    if !rows.is_empty() {
        let at = records
            .values
            .first()
            .map(|(at, _)| at.split(':').next().unwrap_or(at).to_owned())
            .unwrap_or_default();
        for (line, v) in &records.values {
            if !(is_observation(v) || v.as_array().is_some_and(|i| i.iter().all(is_observation))) {
                found.bad(line.clone(), "expected a Langfuse observation row (trace_id, type, …)");
            }
        }
        read_list(&at, rows, found);
        return;
    }
    for (at, doc) in &records.values {
        let Some(list) = observations(doc) else {
            found.bad(at.clone(), "expected a Langfuse trace export with observations");
            continue;
        };
        read_list(at, list, found);
    }
}

fn read_list(at: &str, list: Vec<Value>, found: &mut Found) {
    {
        let mut list: Vec<&Value> = list.iter().collect();
        list.sort_by_key(|o| o.get("startTime").and_then(Value::as_str).unwrap_or_default());
        let mut turns: Vec<Turn> = Vec::new();
        for o in list.iter().filter(|o| o["type"] == "GENERATION") {
            turns.push(generation(at, o));
        }
        // An outer generation (the Vercel AI SDK's `ai.generateText`) repeats its steps' calls.
        let mut turns = otel_genai::fold_duplicates(turns, found);
        // Tool observations: folded into the generation that holds their call, else a call
        // with no catalog.
        for o in list.iter().filter(|o| o["type"] != "GENERATION") {
            let attrs = attributes(o);
            let Some(id) = attrs
                .get("gen_ai.tool.call.id")
                .or_else(|| attrs.get("ai.toolCall.id"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            if otel_genai::held(&turns, id) {
                found.folded += 1;
            }
        }
        found.turns.append(&mut turns);
    }
}

fn attributes(o: &Value) -> serde_json::Map<String, Value> {
    let metadata = decoded(o.get("metadata"));
    match decoded(metadata.get("attributes")) {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn generation(at: &str, o: &Value) -> Turn {
    let id = o.get("id").map(text_of).unwrap_or_default();
    let input = decoded(o.get("input"));
    let output = decoded(o.get("output"));
    let attrs = attributes(o);
    // The original span, for the GenAI readers: its attributes, and the messages Langfuse moved
    // out of them into `input` and `output`.
    let time = |key: &str| {
        o.get(key)
            .and_then(Value::as_str)
            .map_or(0, crate::spans::rfc3339_nanos)
    };
    let mut span = Span {
        at: format!("{at} (observation {id})"),
        span_id: id.clone(),
        start: time("startTime"),
        end: time("endTime"),
        ..Span::default()
    };
    for (k, v) in &attrs {
        span.attributes.insert(k.clone(), decoded(Some(v)));
    }
    let mut turn = Turn::at(span.at.clone(), id);
    turn.trace = o.get("traceId").and_then(Value::as_str).map(str::to_owned);
    turn.model = o.get("model").and_then(Value::as_str).map(str::to_owned);
    turn.name = o.get("name").and_then(Value::as_str).map(str::to_owned);
    turn.window = Turn::window_of(&span);
    turn.catalog = catalog(o, &input, &output, &span);
    turn.transcript.messages = history(&input);
    turn.response = answer(o, &output, &span);
    turn
}

fn tool_defs(tools: &Value) -> Option<Catalog> {
    let mut tools = tools.clone();
    // The Python Gemini SDK's snake_case declarations, as the core reads the camelCase ones.
    if let Some(items) = tools.as_array_mut() {
        for item in items {
            if let Some(obj) = item.as_object_mut() {
                if let Some(v) = obj.remove("function_declarations") {
                    obj.insert("functionDeclarations".into(), v);
                }
                // The Vercel AI SDK's `{"type": "function", "name", "inputSchema"}`.
                if !obj.contains_key("parameters") && !obj.contains_key("input_schema") {
                    if let Some(v) = obj.remove("inputSchema") {
                        obj.insert("parameters".into(), v);
                    }
                }
            }
        }
    }
    Catalog::from_json(&tools).ok()
}

fn catalog(o: &Value, input: &Value, output: &Value, span: &Span) -> Catalog {
    let defs = decoded(o.get("toolDefinitions"));
    match &defs {
        Value::Array(items) if !items.is_empty() => {
            if let Some(tools) = tool_defs(&defs) {
                return tools;
            }
        }
        Value::Object(map) if !map.is_empty() => {
            let items: Vec<Value> = map
                .iter()
                .map(|(name, d)| match decoded(Some(d)) {
                    Value::Object(mut d) => {
                        d.entry("name").or_insert_with(|| Value::from(name.as_str()));
                        Value::Object(d)
                    }
                    _ => serde_json::json!({"name": name}),
                })
                .collect();
            if let Some(tools) = tool_defs(&Value::Array(items)) {
                return tools;
            }
        }
        _ => {}
    }
    if let Ok(tools @ Catalog::Recorded(_)) = otel_genai::catalog(span) {
        return tools;
    }
    // OpenInference: `llm.tools.N.tool.json_schema`, each a tool definition (a `"{}"` names
    // nothing and is left out).
    let mut openinference = Vec::new();
    let mut any = false;
    for i in 0.. {
        let Some(schema) = span.attr(&format!("llm.tools.{i}.tool.json_schema")) else {
            break;
        };
        any = true;
        let schema = decoded(Some(schema));
        let def = schema.get("function").unwrap_or(&schema);
        if let Some(name) = def.get("name").and_then(Value::as_str) {
            openinference.push(tool(
                name,
                def.get("description").and_then(Value::as_str),
                def.get("parameters").cloned(),
            ));
        }
    }
    if any && !openinference.is_empty() {
        return Catalog::of(openinference);
    }
    if let Some(params) = span.attr("model_request_parameters") {
        let params = decoded(Some(params));
        let mut tools = Vec::new();
        let mut seen = false;
        for key in ["function_tools", "output_tools"] {
            if let Some(items) = params.get(key).and_then(Value::as_array) {
                seen = true;
                for t in items {
                    if let Some(name) = t.get("name").and_then(Value::as_str) {
                        tools.push(tool(
                            name,
                            t.get("description").and_then(Value::as_str),
                            t.get("parameters_json_schema").cloned(),
                        ));
                    }
                }
            }
        }
        if seen {
            return Catalog::of(tools);
        }
    }
    if let Some(tools) = span.attr("ai.prompt.tools") {
        let items: Vec<Value> = match decoded(Some(tools)) {
            Value::Array(items) => items.iter().map(|t| decoded(Some(t))).collect(),
            _ => Vec::new(),
        };
        if let Some(tools) = tool_defs(&Value::Array(items)) {
            return tools;
        }
    }
    for tools in [
        input.get("tools"),
        input.pointer("/config/tools"),
        output.get("tools"),
    ]
    .into_iter()
    .flatten()
    .chain(std::iter::once(&decoded(o.pointer("/modelParameters/tools"))).filter(|v| !v.is_null()))
    {
        if let Some(defs) = tool_defs(&decoded(Some(tools))) {
            return defs;
        }
    }
    // LangChain's callback: tools passed as `role: "tool"` messages holding a definition.
    let pseudo: Vec<Value> = messages_of(input)
        .iter()
        .filter(|m| is_tool_definition_message(m))
        .filter_map(|m| m.get("content").cloned())
        .collect();
    if !pseudo.is_empty() {
        if let Some(tools) = tool_defs(&Value::Array(pseudo)) {
            return tools;
        }
    }
    Catalog::NotRecorded
}

fn is_tool_definition_message(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("tool")
        && m.pointer("/content/type").and_then(Value::as_str) == Some("function")
}

fn messages_of(input: &Value) -> Vec<Value> {
    match input {
        Value::Array(items) => items.clone(),
        Value::Object(map) => map
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn history(input: &Value) -> Vec<Message> {
    let messages: Vec<Value> = messages_of(input)
        .into_iter()
        .filter(|m| !is_tool_definition_message(m))
        .collect();
    if messages.iter().any(|m| m.get("parts").is_some()) {
        return otel_genai::parts_messages(&Value::Array(messages), "input").unwrap_or_default();
    }
    messages
        .iter()
        .filter(|m| m.is_object())
        .filter_map(read_message)
        .collect()
}

/// The generation's answer: a provider's response body as the core reads it, else the calls
/// found in the other shapes.
fn answer(o: &Value, output: &Value, span: &Span) -> Response {
    let (text, calls) = answer_parts(o, output, span);
    match calls {
        Ok(response) => response,
        Err(calls) => reply(text, calls),
    }
}

/// The answer as the core's response, when the output is a provider's body with calls; else
/// its text and the calls found.
fn answer_parts(
    o: &Value,
    output: &Value,
    span: &Span,
) -> (Option<String>, Result<Response, Vec<ToolCall>>) {
    // GenAI parts: `[{"role": "assistant", "parts": [...]}]`.
    let parts_list = match output {
        Value::Array(items) if items.iter().any(|m| m.get("parts").is_some()) => Some(output.clone()),
        Value::Object(_) if output.get("parts").is_some() => Some(Value::Array(vec![output.clone()])),
        _ => None,
    };
    if let Some(list) = parts_list {
        if let Ok(messages) = otel_genai::parts_messages(&list, "output") {
            if let Some(m) = messages.into_iter().find(|m| m.role == Role::Assistant) {
                return (joined(&m.text), Err(m.calls));
            }
        }
    }
    // A provider's response body, as the core reads it: its calls, text and anomalies.
    if output.is_object() {
        if let Ok(response) = Response::from_value(output, None) {
            return (None, Ok(response));
        }
    }
    // Gemini's Python SDK: `content.parts[].function_call`.
    if let Some(parts) = output.pointer("/content/parts").and_then(Value::as_array) {
        let calls: Vec<ToolCall> = parts
            .iter()
            .filter_map(|p| p.get("function_call").or_else(|| p.get("functionCall")))
            .map(|f| call(f.get("id").and_then(Value::as_str).map(str::to_owned), f.get("name").map(text_of).unwrap_or_default(), arguments_of(f.get("args"))))
            .collect();
        if !calls.is_empty() {
            return (None, Err(calls));
        }
    }
    // The Vercel AI SDK's `ai.response.toolCalls`: `[{"toolCallId", "toolName", "input"}]`.
    if let Some(items) = output.as_array() {
        let calls: Vec<ToolCall> = items
            .iter()
            .filter_map(|c| {
                Some(call(c.get("toolCallId").and_then(Value::as_str).map(str::to_owned), c.get("toolName")?.as_str()?.to_owned(), arguments_of(c.get("input").or_else(|| c.get("args")))))
            })
            .collect();
        if !calls.is_empty() {
            return (None, Err(calls));
        }
    }
    // A LangChain message: `tool_calls` of `{name, args, id}`, or Chat's in `additional_kwargs`.
    if let Some(items) = output.get("tool_calls").and_then(Value::as_array) {
        let calls: Vec<ToolCall> = items
            .iter()
            .map(|c| call(c.get("id").and_then(Value::as_str).map(str::to_owned), c
                    .get("name")
                    .or_else(|| c.pointer("/function/name"))
                    .map(text_of)
                    .unwrap_or_default(), arguments_of(c.get("args").or_else(|| c.pointer("/function/arguments")))))
            .collect();
        if !calls.is_empty() {
            return (None, Err(calls));
        }
    }
    let chat = chat_calls(output.pointer("/additional_kwargs/tool_calls"));
    if !chat.is_empty() {
        return (None, Err(chat));
    }
    // Langfuse's own fields: calls as JSON strings, their names beside them.
    let names: Vec<String> = o
        .get("toolCallNames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(text_of)
        .collect();
    let calls: Vec<ToolCall> = o
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let c = decoded(Some(c));
            call(c.get("id").and_then(Value::as_str).map(str::to_owned), c
                    .get("name")
                    .map(text_of)
                    .or_else(|| names.get(i).cloned())
                    .unwrap_or_default(), arguments_of(c.get("arguments").or_else(|| c.get("input"))))
        })
        .collect();
    if !calls.is_empty() {
        return (None, Err(calls));
    }
    // The legacy completion attributes, kept in the metadata.
    if let Ok(Some(turn)) = otel_genai::model_turn(span) {
        if !turn.calls().is_empty() {
            return (turn.text(), Err(turn.response.calls));
        }
    }
    (output.as_str().map(str::to_owned), Err(Vec::new()))
}
