//! What every source reads its records into: a trace's model turns in the core's own values
//! (`toolcall_score`'s [`Transcript`], [`Response`], [`ToolCall`], tools), with the trace's
//! metadata beside them: where the turn was found, its id, trace, model and agent, and whether
//! the trace recorded a catalog at all ([`Catalog::NotRecorded`] is never an empty catalog).
//!
//! A turn is scored as it is ([`Turn::case`], [`Turn::response`]): nothing is written out and
//! read back. `toolcall import` and `promote` still write a case file and a recording, in
//! OpenAI Chat Completions' shape ([`Turn::chat_request`], [`Turn::chat_response`]), which the
//! core's Chat reader reads back to the same values: every call keeps its arguments' text (a
//! string that is not JSON is written as that string), a custom tool's input stays free text.

use serde_json::{json, Map, Value};
use toolcall_score::{
    Arguments, Case, Format, Message, Response, Role, Tool, ToolCall, ToolResult, Transcript,
};

/// One model turn found in a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// Where it was found, for messages: `file:line`, or `file` and the span or record id.
    pub at: String,
    /// The id a user names to `toolcall promote --id` (a span id, a record uuid, a step id).
    pub id: String,
    /// The trace, session or conversation it belongs to, when the source records one (`promote`
    /// takes it too).
    pub trace: Option<String>,
    /// The model that answered, when recorded.
    pub model: Option<String>,
    /// The agent or span that made the turn (a span's or observation's name, an agent's name, a
    /// sub-agent's id), when recorded: what `--tools PATTERN=FILE` matches, with the model.
    pub name: Option<String>,
    /// The tools the model was offered, or that the trace did not record them.
    pub catalog: Catalog,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation before this turn.
    pub transcript: Transcript,
    /// The model's answer: its calls and text. A provider body the trace kept is the core's
    /// reading of it (its format, stop reason and anomalies included); an answer a trace
    /// recorded in its own parts is tagged OpenAI Chat, the shape it is written in.
    pub response: Response,
    /// When the model call ran, start and end in nanoseconds since the epoch, when the trace
    /// recorded both: two records of one call overlap in time.
    pub window: Option<(u64, u64)>,
}

/// The catalog a turn was offered, as far as the trace says.
#[derive(Clone, Debug)]
pub enum Catalog {
    /// Tool definitions, with their parameter schemas where the trace has them. An empty
    /// catalog is a catalog too: every call against it is unknown.
    Recorded(toolcall_score::Catalog),
    /// The trace did not record what the model was offered: its calls are not judged (never
    /// counted as unknown).
    NotRecorded,
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Catalog) -> bool {
        match (self, other) {
            (Catalog::Recorded(a), Catalog::Recorded(b)) => a.tools() == b.tools(),
            (Catalog::NotRecorded, Catalog::NotRecorded) => true,
            _ => false,
        }
    }
}

impl Catalog {
    /// A recorded catalog of these tools.
    pub fn of(tools: impl IntoIterator<Item = Tool>) -> Catalog {
        Catalog::Recorded(toolcall_score::Catalog::new(tools))
    }

    /// A tools array in any shape the core reads (Chat's, Anthropic's, Gemini's declarations,
    /// bare definitions), as a recorded catalog.
    pub fn from_json(tools: &Value) -> Result<Catalog, toolcall_score::ParseError> {
        toolcall_score::Catalog::from_json(tools).map(Catalog::Recorded)
    }

    /// Whether the calls can be judged against it.
    pub fn is_recorded(&self) -> bool {
        matches!(self, Catalog::Recorded(_))
    }

    /// The recorded catalog.
    pub fn recorded(&self) -> Option<&toolcall_score::Catalog> {
        match self {
            Catalog::Recorded(catalog) => Some(catalog),
            Catalog::NotRecorded => None,
        }
    }

    /// Whether it is names only: membership is judged, arguments are not validated.
    pub fn is_names_only(&self) -> bool {
        self.recorded().is_some_and(|catalog| {
            !catalog.is_empty() && catalog.tools().iter().all(|t| t.input_schema.is_none())
        })
    }
}

/// A tool a trace defined by hand (its name, maybe a description and a JSON Schema).
pub(crate) fn tool(name: &str, description: Option<&str>, parameters: Option<Value>) -> Tool {
    let mut tool = Tool::new(name, description.unwrap_or_default());
    tool.input_schema = parameters.filter(|p| !p.is_null());
    tool
}

/// A call a trace recorded in its own shape: the one way every source makes one.
pub(crate) fn call(id: Option<String>, name: String, arguments: Arguments) -> ToolCall {
    ToolCall {
        id,
        name,
        namespace: None,
        arguments,
        builtin: None,
    }
}

/// A message of `role` with `text` (none when empty).
pub(crate) fn said(role: Role, text: Option<String>) -> Message {
    let mut message = Message::new(role);
    message.text.extend(text.filter(|t| !t.is_empty()));
    message
}

/// An earlier model turn: its text and calls.
pub(crate) fn assistant(text: Option<String>, calls: Vec<ToolCall>) -> Message {
    let mut message = said(Role::Assistant, text);
    message.calls = calls;
    message
}

/// A tool's result, answering `call_id`.
pub(crate) fn result(call_id: Option<String>, content: String) -> Message {
    let mut message = Message::new(Role::Tool);
    message.results.push(ToolResult {
        call_id,
        name: None,
        is_error: false,
        content,
    });
    message
}

/// A model's answer recorded as text and calls (not as a provider's body).
pub(crate) fn reply(text: Option<String>, calls: Vec<ToolCall>) -> Response {
    let mut response = Response::empty(Format::OpenaiChat);
    response.stop_reason = Some(
        if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
        .into(),
    );
    response.text.extend(text.filter(|t| !t.is_empty()));
    response.calls = calls;
    response
}

/// The text of `texts`, joined by blank lines; `None` when there is none.
pub(crate) fn joined(texts: &[String]) -> Option<String> {
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

impl Turn {
    /// A turn with these metadata and nothing in it yet: no catalog, no conversation, an
    /// empty answer.
    pub(crate) fn at(at: String, id: String) -> Turn {
        Turn {
            at,
            id,
            trace: None,
            model: None,
            name: None,
            catalog: Catalog::NotRecorded,
            system: None,
            transcript: Transcript::default(),
            response: reply(None, Vec::new()),
            window: None,
        }
    }

    /// The window of a span that starts and ends where it says.
    pub(crate) fn window_of(span: &crate::spans::Span) -> Option<(u64, u64)> {
        (span.start != 0 && span.end >= span.start).then_some((span.start, span.end))
    }

    /// The calls the model made, in order.
    pub fn calls(&self) -> &[ToolCall] {
        &self.response.calls
    }

    /// What the model wrote besides its calls.
    pub fn text(&self) -> Option<String> {
        joined(&self.response.text)
    }

    /// The case its calls are judged by: the system prompt, the conversation so far and the
    /// recorded catalog, or `supplied` when the trace recorded none; `None` when there is
    /// neither.
    pub fn case(&self, supplied: Option<&toolcall_score::Catalog>) -> Option<Case> {
        let catalog = self.catalog.recorded().or(supplied)?.clone();
        Some(Case {
            system: self.system.clone().unwrap_or_default(),
            transcript: self.transcript.clone(),
            ..Case::from_catalog(catalog)
        })
    }

    /// The request as an OpenAI Chat Completions body: `tools` (absent when not recorded),
    /// the system prompt and the conversation as `messages`.
    pub fn chat_request(&self) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &self.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &self.transcript.messages {
            let text = joined(&message.text);
            match message.role {
                Role::System => messages.push(json!({"role": "system", "content": text})),
                Role::Assistant => messages.push(chat_assistant(text, &message.calls)),
                Role::User if text.is_some() || message.results.is_empty() => {
                    messages.push(json!({"role": "user", "content": text.unwrap_or_default()}))
                }
                Role::User | Role::Tool => {}
            }
            for result in &message.results {
                let mut m = json!({"role": "tool", "content": result.content});
                if let Some(id) = &result.call_id {
                    m["tool_call_id"] = json!(id);
                }
                messages.push(m);
            }
        }
        let mut body = Map::new();
        if let Some(model) = &self.model {
            body.insert("model".into(), json!(model));
        }
        body.insert("messages".into(), Value::Array(messages));
        if let Some(catalog) = self.catalog.recorded() {
            let tools = catalog
                .tools()
                .iter()
                .map(|t| {
                    let mut function = Map::new();
                    function.insert("name".into(), json!(t.name));
                    if !t.description.is_empty() {
                        function.insert("description".into(), json!(t.description));
                    }
                    if let Some(p) = &t.input_schema {
                        function.insert("parameters".into(), p.clone());
                    }
                    json!({"type": "function", "function": function})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        Value::Object(body)
    }

    /// The model's answer as an OpenAI Chat Completions response body.
    pub fn chat_response(&self) -> Value {
        let finish = if self.response.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let mut body = json!({
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": chat_assistant(self.text(), &self.response.calls),
                "finish_reason": finish,
            }]
        });
        if let Some(model) = &self.model {
            body["model"] = json!(model);
        }
        body
    }
}

fn chat_assistant(text: Option<String>, calls: &[ToolCall]) -> Value {
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // Chat needs an id to pair a result; a call recorded without one gets its
                // place, which no result can claim by accident.
                let id = c.id.clone().unwrap_or_else(|| format!("call_{i}"));
                let arguments = match &c.arguments {
                    Arguments::Parsed(value) => value.to_string(),
                    Arguments::Json(text) => text
                        .value()
                        .map_or_else(|| text.raw().to_owned(), Value::to_string),
                    Arguments::Text { text } => {
                        return json!({"id": id, "type": "custom",
                            "custom": {"name": c.name, "input": text}})
                    }
                };
                json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments},
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

/// `value` as text: a string as it is, anything else as JSON.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The calls a flattened message's `fields` hold at `call(0)`, `call(1)`, … until one has no
/// name: each `{call(i)}{name}`, `{call(i)}{arguments}` and `{call(i)}id`.
pub(crate) fn indexed_calls(
    fields: &std::collections::BTreeMap<String, Value>,
    call_at: impl Fn(usize) -> String,
    name: &str,
    arguments: &str,
) -> Vec<ToolCall> {
    let get = |k: &str| fields.get(k).map(text_of);
    let mut calls = Vec::new();
    for i in 0.. {
        let at = call_at(i);
        let Some(name) = get(&format!("{at}{name}")) else {
            break;
        };
        calls.push(call(
            get(&format!("{at}id")),
            name,
            arguments_of(fields.get(&format!("{at}{arguments}"))),
        ));
    }
    calls
}

/// Arguments as recorded: a JSON string is kept as the text the model wrote
/// ([`Arguments::Json`], as the core reads a Chat body's, parsed when something asks); none,
/// `null` or a blank string are no arguments.
pub(crate) fn arguments_of(value: Option<&Value>) -> Arguments {
    match value {
        None | Some(Value::Null) => Arguments::Parsed(json!({})),
        Some(Value::String(s)) if s.trim().is_empty() => Arguments::Parsed(json!({})),
        Some(Value::String(s)) => Arguments::from_json_text(s.as_str()),
        Some(other) => Arguments::Parsed(other.clone()),
    }
}

/// A system message inside the conversation.
pub(crate) fn system_message(text: String) -> Message {
    said(Role::System, Some(text))
}

/// What the user said.
pub(crate) fn user_message(text: String) -> Message {
    said(Role::User, Some(text))
}

/// A provider's message (Chat's `{"role", "content", "tool_calls", "tool_call_id"}`, an
/// Anthropic message of content blocks, a Gemini content of `parts`), read by the core's reader
/// for its shape; a message without a role is the model's. `None` when the core reads it as no
/// message (its shape is none the core knows).
pub(crate) fn read_message(m: &Value) -> Option<Message> {
    let mut m = m.clone();
    if let Some(object) = m.as_object_mut() {
        object
            .entry("role")
            .or_insert_with(|| Value::from("assistant"));
    }
    let body = serde_json::json!({ "messages": [m] });
    let request = toolcall_score::provider::parse_request(&body, None).ok()?;
    request.transcript.messages.into_iter().next()
}

/// A JSON-string attribute parsed, a structured one as it is.
pub(crate) fn structured(v: &Value) -> Result<Value, String> {
    match v {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| format!("holds a string that is not JSON: {e}"))
        }
        other => Ok(other.clone()),
    }
}

/// Chat's `tool_calls` (a list, or the list as JSON text), as the core's Chat reader reads
/// them in an assistant message.
pub(crate) fn chat_calls(v: Option<&Value>) -> Vec<ToolCall> {
    let Some(calls) = v.map(|v| structured(v).unwrap_or_else(|_| v.clone())) else {
        return Vec::new();
    };
    if !calls.is_array() {
        return Vec::new();
    }
    read_message(&serde_json::json!({"role": "assistant", "tool_calls": calls}))
        .map(|m| m.calls)
        .unwrap_or_default()
}
