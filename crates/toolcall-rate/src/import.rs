//! `toolcall import`: logged real conversations in, cases and recorded responses out.
//!
//! Each assistant turn that made tool calls becomes a case — the request up to that turn, with
//! the tools that were sent — and its recorded response (the turn itself, wrapped as the
//! provider's response body):
//!
//! ```text
//! OUT/cases/<prefix>/<conversation>-<turn>.json
//! OUT/recorded/<agent>/<prefix>/<conversation>-<turn>.json
//! ```
//!
//! `<conversation>` is the conversation's index in the file (zero-padded) or its `id`; `<turn>`
//! is the index of the assistant message in the message list. This is how a user gets a first
//! transcript: log one real run, import it, then edit cases by hand to add the edge cases the
//! model never happened to produce.
//!
//! Inputs (JSON):
//! - one conversation: a message list, or an object holding one under a key;
//! - a list of conversations, each a message list or such an object;
//! - a directory: every `*.json` in it except `tools.json`, which (if present) is the catalog.
//!
//! The message-list key is `--messages-key`, or the first present of [`MESSAGE_KEYS`]
//! (tau-bench uses `traj`). The tools come from `--tools FILE` (which wins), the conversation
//! object's `tools`, or the file's top-level `tools`. Message lists are OpenAI Chat (`tool_calls`
//! on assistant messages, `tool` role results) or Anthropic Messages (`tool_use` /
//! `tool_result` content blocks, the system prompt under the object's `system`). OpenAI tools
//! written without the `{"type": "function", "function": ...}` wrapper are wrapped, so every case
//! is a request body the provider accepts.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use toolcall_score::InputError;

use crate::RateError;

/// Keys under which a conversation object may carry its message list, tried in order.
pub const MESSAGE_KEYS: [&str; 6] = [
    "messages",
    "traj",
    "trajectory",
    "conversation",
    "history",
    "turns",
];

/// How `import` names and writes what it makes.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The output directory (`cases/` and `recorded/` are made under it).
    pub out: PathBuf,
    /// The agent name under `recorded/`; default the conversation's `model`, else `imported`.
    pub agent: Option<String>,
    /// The group under `cases/`; default the input file's stem.
    pub prefix: Option<String>,
    /// The key holding each conversation's messages; default: detected from [`MESSAGE_KEYS`].
    pub messages_key: Option<String>,
    /// A tools file that replaces the tools found in the input.
    pub tools: Option<PathBuf>,
    /// Overwrite files that exist (otherwise that is an error, and nothing is written).
    pub force: bool,
}

/// What an import made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Conversations read.
    pub conversations: usize,
    /// Cases written: one per assistant turn with tool calls.
    pub cases: usize,
    /// Tool calls in the recorded responses.
    pub calls: usize,
    /// The agent directories responses were written under.
    pub agents: Vec<String>,
}

/// The provider shape of a message list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    OpenAi,
    Anthropic,
}

/// One conversation, found in an input file.
struct Conversation<'a> {
    name: String,
    messages: &'a [Value],
    tools: Option<&'a Value>,
    system: Option<&'a Value>,
    model: Option<&'a str>,
}

/// One case to write.
struct Turn {
    id: String,
    case: Value,
    response: Value,
    calls: usize,
}

fn read_json(path: &Path) -> Result<Value, RateError> {
    let text = std::fs::read_to_string(path).map_err(|source| RateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| InputError::syntax(Some(path), &e).into())
}

fn is_message_list(value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        !items.is_empty()
            && items
                .iter()
                .all(|m| m.get("role").is_some_and(Value::is_string))
    })
}

fn conversations<'a>(
    path: &Path,
    value: &'a Value,
    key: Option<&str>,
) -> Result<Vec<Conversation<'a>>, RateError> {
    let bad = |why: String| RateError::Import {
        path: path.to_path_buf(),
        why,
    };
    let from_object = |object: &'a Map<String, Value>, index: usize, width: usize| {
        let messages = match key {
            Some(key) => object.get(key),
            None => MESSAGE_KEYS.iter().find_map(|k| object.get(*k)),
        };
        let messages = messages.and_then(Value::as_array).ok_or_else(|| {
            let keys: Vec<&str> = object.keys().map(String::as_str).take(8).collect();
            bad(format!(
                "conversation {index}: no message list under {} (keys: {}); name it with --messages-key",
                key.map_or_else(|| MESSAGE_KEYS.join(", "), |k| format!("`{k}`")),
                keys.join(", ")
            ))
        })?;
        let name = match object.get("id") {
            Some(Value::String(s)) if !s.is_empty() && !s.contains(['/', '\\']) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => format!("{index:0width$}"),
        };
        Ok(Conversation {
            name,
            messages,
            tools: object.get("tools"),
            system: object.get("system"),
            model: object.get("model").and_then(Value::as_str),
        })
    };
    let plain = |messages: &'a [Value], index: usize, width: usize| Conversation {
        name: format!("{index:0width$}"),
        messages,
        tools: None,
        system: None,
        model: None,
    };
    match value {
        Value::Array(items) if is_message_list(value) => Ok(vec![plain(items, 0, 1)]),
        Value::Array(items) => {
            let width = items.len().saturating_sub(1).to_string().len();
            items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Array(messages) => Ok(plain(messages, i, width)),
                    Value::Object(object) => from_object(object, i, width),
                    other => Err(bad(format!(
                        "item {i}: expected a conversation (a message list or an object), found {}",
                        kind(other)
                    ))),
                })
                .collect()
        }
        Value::Object(object) => {
            let mut one = from_object(object, 0, 1)?;
            // A single conversation keeps the file's name alone.
            if object.get("id").is_none() {
                one.name = "0".to_owned();
            }
            Ok(vec![one])
        }
        other => Err(bad(format!(
            "expected a conversation or a list of them, found {}",
            kind(other)
        ))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn dialect(messages: &[Value]) -> Option<Dialect> {
    for message in messages {
        if message.get("role").and_then(Value::as_str) == Some("tool")
            || message.get("tool_calls").is_some_and(|c| !c.is_null())
        {
            return Some(Dialect::OpenAi);
        }
        if let Some(blocks) = message.get("content").and_then(Value::as_array) {
            if blocks.iter().any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("tool_use" | "tool_result")
                )
            }) {
                return Some(Dialect::Anthropic);
            }
        }
    }
    None
}

/// OpenAI tools in the request's own shape: bare `{name, description, parameters}` functions
/// get the `{"type": "function", "function": ...}` wrapper.
fn openai_tools(tools: &Value) -> Value {
    match tools {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|tool| {
                    if tool.get("type").is_none() && tool.get("name").is_some() {
                        json!({"type": "function", "function": tool})
                    } else {
                        tool.clone()
                    }
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn calls_of(message: &Value, dialect: Dialect) -> usize {
    match dialect {
        Dialect::OpenAi => message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        Dialect::Anthropic => {
            message
                .get("content")
                .and_then(Value::as_array)
                .map_or(0, |blocks| {
                    blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                        .count()
                })
        }
    }
}

fn turns(
    source: &str,
    prefix: &str,
    conversation: &Conversation<'_>,
    tools: &Value,
    agent: &str,
) -> Vec<Turn> {
    let Some(dialect) = dialect(conversation.messages) else {
        return Vec::new();
    };
    let mut turns = Vec::new();
    for (i, message) in conversation.messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let calls = calls_of(message, dialect);
        if calls == 0 {
            continue;
        }
        let name = format!("{}-{i}", conversation.name);
        let about = format!(
            "imported from {source}, conversation {}, message {i}",
            conversation.name
        );
        let model = conversation.model.unwrap_or(agent);
        let (case, response) = match dialect {
            Dialect::OpenAi => (
                json!({
                    "about": about,
                    "format": "openai-chat",
                    "tools": openai_tools(tools),
                    "messages": &conversation.messages[..i],
                }),
                json!({
                    "id": format!("imported-{name}"),
                    "object": "chat.completion",
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                }),
            ),
            Dialect::Anthropic => {
                let mut case = json!({
                    "about": about,
                    "format": "anthropic",
                    "tools": tools,
                    "messages": &conversation.messages[..i],
                });
                if let Some(system) = conversation.system {
                    case["system"] = system.clone();
                }
                (
                    case,
                    json!({
                        "id": format!("imported-{name}"),
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": message.get("content").cloned().unwrap_or(Value::Null),
                        "stop_reason": "tool_use",
                    }),
                )
            }
        };
        turns.push(Turn {
            id: format!("{prefix}/{name}"),
            case,
            response,
            calls,
        });
    }
    turns
}

/// Writes `value` to `path` through a temporary file and a rename, so a reader never sees half a
/// file.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RateError> {
    let write = |source| RateError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp{}", std::process::id()));
    let temp = PathBuf::from(temp);
    let result = std::fs::File::create(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map_err(write)
}

fn inputs(input: &Path) -> Result<(Vec<PathBuf>, Option<PathBuf>), RateError> {
    if !input.is_dir() {
        return Ok((vec![input.to_path_buf()], None));
    }
    let read = |source| RateError::Read {
        path: input.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(read)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read)?;
    files.retain(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"));
    files.sort();
    let tools = files
        .iter()
        .position(|p| p.file_name().is_some_and(|n| n == "tools.json"))
        .map(|i| files.remove(i));
    if files.is_empty() {
        return Err(RateError::Import {
            path: input.to_path_buf(),
            why: "the directory holds no conversation file (*.json other than tools.json)".into(),
        });
    }
    Ok((files, tools))
}

/// Imports `input` (a file or a directory, see the module docs) into `options.out`. Existing
/// files are an error unless `options.force`; the check covers every file before any is written.
pub fn import(input: &Path, options: &ImportOptions) -> Result<ImportSummary, RateError> {
    let (files, dir_tools) = inputs(input)?;
    let tools_file = options.tools.clone().or(dir_tools);
    let tools_override = tools_file.as_deref().map(read_json).transpose()?;
    if let (Some(path), Some(tools)) = (&tools_file, &tools_override) {
        if !tools.is_array() {
            return Err(RateError::Import {
                path: path.clone(),
                why: format!("expected a tools array, found {}", kind(tools)),
            });
        }
    }
    let mut summary = ImportSummary::default();
    // Two passes per file: names first (to refuse overwriting before anything is written), then
    // the files, made one at a time so memory stays at one case.
    let mut plans = Vec::new();
    for file in &files {
        let value = read_json(file)?;
        let prefix = options.prefix.clone().unwrap_or_else(|| {
            file.file_stem()
                .map_or_else(|| "imported".into(), |s| s.to_string_lossy().into_owned())
        });
        let mut existing = Vec::new();
        let mut count = 0usize;
        for_each_turn(
            file,
            &value,
            &prefix,
            options,
            tools_override.as_ref(),
            |agent, turn| {
                for path in outputs(&options.out, agent, &turn.id) {
                    if path.exists() {
                        existing.push(path);
                    }
                }
                count += 1;
            },
        )?;
        if !options.force && !existing.is_empty() {
            return Err(RateError::WouldOverwrite {
                count: existing.len(),
                first: existing.swap_remove(0),
            });
        }
        plans.push((file, prefix, count));
    }
    for (file, prefix, _) in plans {
        let value = read_json(file)?;
        let mut failed = None;
        let conversations = for_each_turn(
            file,
            &value,
            &prefix,
            options,
            tools_override.as_ref(),
            |agent, turn| {
                if failed.is_some() {
                    return;
                }
                let [case_path, response_path] = outputs(&options.out, agent, &turn.id);
                let result = pretty(&turn.case)
                    .and_then(|b| write_atomically(&case_path, &b))
                    .and_then(|()| pretty(&turn.response))
                    .and_then(|b| write_atomically(&response_path, &b));
                match result {
                    Ok(()) => {
                        summary.cases += 1;
                        summary.calls += turn.calls;
                        if !summary.agents.iter().any(|a| a == agent) {
                            summary.agents.push(agent.to_owned());
                        }
                    }
                    Err(e) => failed = Some(e),
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        summary.conversations += conversations;
    }
    Ok(summary)
}

fn pretty(value: &Value) -> Result<Vec<u8>, RateError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|e| RateError::Config(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn outputs(out: &Path, agent: &str, id: &str) -> [PathBuf; 2] {
    [
        out.join("cases").join(format!("{id}.json")),
        out.join("recorded").join(agent).join(format!("{id}.json")),
    ]
}

/// Calls `each(agent, turn)` for every assistant turn with tool calls in `value`; returns the
/// number of conversations.
fn for_each_turn(
    file: &Path,
    value: &Value,
    prefix: &str,
    options: &ImportOptions,
    tools_override: Option<&Value>,
    mut each: impl FnMut(&str, &Turn),
) -> Result<usize, RateError> {
    let conversations = conversations(file, value, options.messages_key.as_deref())?;
    let file_tools = value.get("tools").filter(|_| value.is_object());
    let source = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    for conversation in &conversations {
        let tools = tools_override
            .or(conversation.tools)
            .or(file_tools)
            .ok_or_else(|| RateError::Import {
                path: file.to_path_buf(),
                why: format!(
                    "conversation {} carries no `tools` and none were given: pass --tools FILE (a tools array)",
                    conversation.name
                ),
            })?;
        // A model name like `meta-llama/Llama-3` is one directory, not two.
        let agent = match (&options.agent, conversation.model) {
            (Some(agent), _) => agent.clone(),
            (None, Some(model)) => model.replace(['/', '\\', ':'], "_"),
            (None, None) => "imported".to_owned(),
        };
        for turn in turns(&source, prefix, conversation, tools, &agent) {
            each(&agent, &turn);
        }
    }
    Ok(conversations.len())
}
