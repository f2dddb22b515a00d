//! What every source reads its records into: the model turns of a trace, each with the catalog it
//! was offered, the conversation so far and the calls it made, and where it was found.
//!
//! A turn becomes a request body and a response body in OpenAI Chat Completions' shape
//! ([`Turn::chat_request`], [`Turn::chat_response`]), the one shape every command of the
//! workspace already reads: `import` writes them as a case and its recording, `rate` scores them
//! as it scores a log line. Chat is chosen because every source's messages map onto it without
//! loss of what the scorer reads (roles, text, calls with ids, results by id).

use serde_json::{json, Map, Value};
use toolcall_score::Arguments;

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
    /// The tools the model was offered.
    pub catalog: Catalog,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation before this turn.
    pub messages: Vec<Message>,
    /// What the model wrote besides its calls.
    pub text: Option<String>,
    /// The calls it made, in order.
    pub calls: Vec<Call>,
}

/// The catalog a turn was offered, as far as the trace says.
#[derive(Clone, Debug, PartialEq)]
pub enum Catalog {
    /// Tool definitions, with their parameter schemas where the trace has them. An empty list is
    /// a catalog too: every call against it is unknown.
    Recorded(Vec<ToolDef>),
    /// The trace did not record what the model was offered: its calls are not judged (never
    /// counted as unknown).
    NotRecorded,
}

impl Catalog {
    /// Whether the calls can be judged against it.
    pub fn is_recorded(&self) -> bool {
        matches!(self, Catalog::Recorded(_))
    }

    /// Whether it is names only: membership is judged, arguments are not validated.
    pub fn is_names_only(&self) -> bool {
        match self {
            Catalog::Recorded(tools) => {
                !tools.is_empty() && tools.iter().all(|t| t.parameters.is_none())
            }
            Catalog::NotRecorded => false,
        }
    }
}

/// One tool definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Its parameters' JSON Schema; `None` when the trace kept the name only.
    pub parameters: Option<Value>,
}

impl ToolDef {
    /// A tools array in any shape the core reads (Chat's, Anthropic's, Gemini's declarations,
    /// bare definitions), as definitions.
    pub fn from_tools_json(tools: &Value) -> Result<Vec<ToolDef>, toolcall_score::ParseError> {
        let catalog = toolcall_score::Catalog::from_json(tools)?;
        Ok(catalog
            .tools()
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: (!t.description.is_empty()).then(|| t.description.clone()),
                parameters: t.input_schema.clone(),
            })
            .collect())
    }

    /// A tool known by name only.
    pub fn named(name: impl Into<String>) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: None,
            parameters: None,
        }
    }
}

/// One tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Its id, when recorded.
    pub id: Option<String>,
    /// The tool it names.
    pub name: String,
    /// Its arguments as the core reads them: JSON, or the text the model wrote when that is not
    /// JSON (scored as `arguments_not_json`, as the same body is scored alone).
    pub arguments: toolcall_score::Arguments,
}

/// One message of the conversation so far.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A system message inside the conversation.
    System(String),
    /// What the user said.
    User(String),
    /// An earlier model turn.
    Assistant {
        /// Its text.
        text: Option<String>,
        /// Its calls.
        calls: Vec<Call>,
    },
    /// A tool's result.
    Tool {
        /// The call it answers.
        call_id: Option<String>,
        /// The result, as text.
        content: String,
    },
}

impl Turn {
    /// The request as an OpenAI Chat Completions body: `tools` (absent when not recorded),
    /// the system prompt and the conversation as `messages`.
    pub fn chat_request(&self) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &self.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &self.messages {
            messages.push(match message {
                Message::System(text) => json!({"role": "system", "content": text}),
                Message::User(text) => json!({"role": "user", "content": text}),
                Message::Assistant { text, calls } => assistant(text.as_deref(), calls),
                Message::Tool { call_id, content } => {
                    let mut m = json!({"role": "tool", "content": content});
                    if let Some(id) = call_id {
                        m["tool_call_id"] = json!(id);
                    }
                    m
                }
            });
        }
        let mut body = Map::new();
        if let Some(model) = &self.model {
            body.insert("model".into(), json!(model));
        }
        body.insert("messages".into(), Value::Array(messages));
        if let Catalog::Recorded(tools) = &self.catalog {
            let tools = tools
                .iter()
                .map(|t| {
                    let mut function = Map::new();
                    function.insert("name".into(), json!(t.name));
                    if let Some(d) = &t.description {
                        function.insert("description".into(), json!(d));
                    }
                    if let Some(p) = &t.parameters {
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
        let finish = if self.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let mut body = json!({
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": assistant(self.text.as_deref(), &self.calls),
                "finish_reason": finish,
            }]
        });
        if let Some(model) = &self.model {
            body["model"] = json!(model);
        }
        body
    }
}

fn assistant(text: Option<&str>, calls: &[Call]) -> Value {
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let id = c.id.clone().unwrap_or_else(|| format!("call_{i}"));
                let arguments = match &c.arguments {
                    Arguments::Parsed(value) => value.to_string(),
                    Arguments::Invalid { raw, .. } => raw.clone(),
                    Arguments::Text { text } => {
                        return json!({"id": id, "type": "custom",
                            "custom": {"name": c.name, "input": text}})
                    }
                };
                json!({
                    // Chat needs an id to pair a result; a call recorded without one gets its
                    // place, which no result can claim by accident.
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
    call: impl Fn(usize) -> String,
    name: &str,
    arguments: &str,
) -> Vec<crate::Call> {
    let get = |k: &str| fields.get(k).map(text_of);
    let mut calls = Vec::new();
    for i in 0.. {
        let call = call(i);
        let Some(name) = get(&format!("{call}{name}")) else {
            break;
        };
        calls.push(crate::Call {
            id: get(&format!("{call}id")),
            name,
            arguments: arguments_of(fields.get(&format!("{call}{arguments}"))),
        });
    }
    calls
}

/// Arguments as recorded: a JSON string is parsed, and one that is not JSON is kept as the
/// text the model wrote ([`Arguments::Invalid`], as the core reads a Chat body's); none, `null`
/// or a blank string are no arguments.
pub(crate) fn arguments_of(value: Option<&Value>) -> Arguments {
    match value {
        None | Some(Value::Null) => Arguments::Parsed(json!({})),
        Some(Value::String(s)) if s.trim().is_empty() => Arguments::Parsed(json!({})),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(value) => Arguments::Parsed(value),
            Err(error) => Arguments::Invalid {
                raw: s.clone(),
                error: error.to_string(),
            },
        },
        Some(other) => Arguments::Parsed(other.clone()),
    }
}
