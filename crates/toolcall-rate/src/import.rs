//! `toolcall import`: logged real conversations in, cases and recorded responses out.
//!
//! An import either writes everything it reports or nothing: every conversation of every input
//! file is read, every name checked and every output path planned before the first file is
//! written. A name that would not make one safe path component, or two conversations that would
//! write the same file, stop the import with nothing written (see [`safe_component`]).
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
//! is the index of the assistant message (for the Responses API, of the turn's first item) in
//! the message list. `<agent>` is `--agent`, else the conversation's `model` with `/`, `\` and
//! `:` made `_` (`meta-llama/Llama-3` is one directory), else `imported`. An id, an agent or a
//! prefix that is still not a safe name (`..`, a leading `.`, a control character, …) is
//! refused, naming the conversation and the value, rather than renamed: a silent rename could
//! make two conversations one file, and the user would not find the case under the id they
//! know. This is how a user gets a first transcript: log one real run, import it,
//! then edit cases by hand to add the edge cases the model never happened to produce.
//!
//! Inputs (JSON, or JSON Lines as loggers write them):
//! - one conversation: a message list, or an object holding one under a key (a logged request
//!   body is such an object);
//! - a list of conversations, each a message list or such an object, or one a line;
//! - a log of `{"request", "response"}` pairs, one a line, as `toolcall rate` reads it: each pair
//!   whose response calls a tool is a case (the request as sent) and its recorded response (the
//!   response as received), `<prefix>/<line number>`;
//! - a directory: every `*.json` in it except `tools.json`, which (if present) is the catalog.
//!
//! The message-list key is `--messages-key`, or the first of [`default_keys`] that holds a list:
//! the request's own (`messages`, `input`, `contents`), then [`MESSAGE_KEYS`] (tau-bench uses
//! `traj`).
//!
//! Every request format the scorer reads is imported: OpenAI Chat, Anthropic Messages, the
//! Responses API's `input` items, Gemini `contents`, Bedrock Converse and Ollama `/api/chat`
//! messages. This module knows none of them: the core's
//! [`Logged`] reads the list with the scorer's own request
//! reader, which tells the format from the shapes, and each format's module says what a turn
//! is, how its provider's response body wraps one, and where its tools and system prompt go. So
//! a case is a request in the conversation's own format (`toolcall score` reads it back as
//! that format) and a recording is the body that format's provider returns. A list whose shapes
//! name no format (plain text messages, which Chat and Ollama share) is read as OpenAI Chat, as
//! before; one under a key that is not a request's (`traj`, a bare list) is read as `messages`,
//! so a Responses transcript is looked for under `input`.
//!
//! The tools come from `--tools FILE` (which wins), the conversation object's tools (where its
//! format sends them: Bedrock's `toolConfig`, else `tools`), or the file's top-level ones. Bare
//! `{name, description, parameters}` definitions are given the format's wrapper (Chat's
//! `{"type": "function", "function": ...}`, a Gemini `functionDeclarations` group, a Bedrock
//! `toolSpec`, …), so every case is a request body the provider accepts. The system prompt
//! kept beside the transcript (`system`, `systemInstruction`, `instructions`) goes with each
//! case.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toolcall_score::provider::Logged;
use toolcall_score::InputError;

pub use crate::names::safe_component;
use crate::names::{agent_dir, check_name, id_key, name_key, outputs, write_in, Planned};

use crate::RateError;

/// Keys under which a conversation object may carry its message list besides the request's own
/// (`messages`, `input`, `contents`, which are tried first: see [`default_keys`]), in order.
pub const MESSAGE_KEYS: [&str; 5] = ["traj", "trajectory", "conversation", "history", "turns"];

/// The keys a conversation's message list is looked for under without `--messages-key`, in
/// order: where each request format keeps its transcript
/// ([`toolcall_score::provider::Logged::transcript_keys`]), then [`MESSAGE_KEYS`].
pub fn default_keys() -> Vec<&'static str> {
    let mut keys = Logged::transcript_keys();
    keys.extend(MESSAGE_KEYS);
    keys
}

/// How `import` names and writes what it makes.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The output directory (`cases/` and `recorded/` are made under it).
    pub out: PathBuf,
    /// The agent name under `recorded/`; default the conversation's `model`, else `imported`.
    pub agent: Option<String>,
    /// The group under `cases/`; default the input file's stem.
    pub prefix: Option<String>,
    /// The key holding each conversation's messages; default: the first of [`default_keys`]
    /// that holds a list.
    pub messages_key: Option<String>,
    /// A tools file that replaces the tools found in the input.
    pub tools: Option<PathBuf>,
    /// Overwrite files that exist (otherwise that is an error, and nothing is written).
    pub force: bool,
    /// Read every input as this trace source (otherwise a file a source claims is read as its
    /// trace, and any other as conversations).
    pub from: Option<&'static toolcall_traces::Source>,
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
    /// Trace turns with calls that were not imported: their trace recorded no catalog (and
    /// `--tools` gave none).
    pub not_judged: usize,
    /// Calls a trace recorded more than once, folded into one.
    pub folded: usize,
    /// Trace records that could not be read (`place: why`); the others were imported.
    pub bad: Vec<String>,
    /// Trace records read with a caveat (`place: what was read`), which fail nothing.
    pub notes: Vec<String>,
}

/// One conversation, found in an input file.
struct Conversation<'a> {
    /// How errors name it: `conversation 3` (its index in the file).
    label: String,
    name: String,
    /// The member of `object` the messages were under.
    key: Option<&'a str>,
    messages: &'a [Value],
    /// The conversation object, when it is one (its tools, system prompt and model).
    object: Option<&'a Map<String, Value>>,
    model: Option<&'a str>,
}

/// One case to write.
struct Turn {
    /// The conversation it came from, as errors name it.
    conversation: String,
    id: String,
    /// The id's [`id_key`]: what another case must not share.
    key: String,
    case: Value,
    response: Value,
    calls: usize,
}

/// An input file: a trace some source reads, a log of request/response pairs, or conversations.
enum Input {
    Trace(crate::traces::TraceFile),
    /// Each pair with its line number.
    Pairs(Vec<(usize, Value)>),
    Conversations(Value),
}

fn read_input(path: &Path, options: &ImportOptions) -> Result<Input, RateError> {
    if let Some(trace) = crate::traces::read_trace(path, options.from)? {
        return Ok(Input::Trace(trace));
    }
    let text = toolcall_score::read_text(path)?;
    if crate::inputs::starts_with_log_line(&mut text.as_bytes()) {
        return json_lines(path, &text).map(Input::Pairs);
    }
    match serde_json::from_str(&text) {
        Ok(value) => Ok(Input::Conversations(value)),
        // Not one document but its first line is one: JSON Lines, one conversation a line (a
        // line that does not read is named as a line, not as "trailing characters").
        Err(e)
            if e.classify() == serde_json::error::Category::Syntax && first_line_reads(&text) =>
        {
            let lines = json_lines(path, &text)?;
            Ok(Input::Conversations(Value::Array(
                lines.into_iter().map(|(_, value)| value).collect(),
            )))
        }
        Err(e) => Err(InputError::syntax(Some(path), &e).into()),
    }
}

/// Whether the first non-blank line of `text` is a JSON value by itself.
fn first_line_reads(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
}

/// Each non-blank line of `text` as a JSON value, with its line number; the first that does not
/// read is the error, at its line.
fn json_lines(path: &Path, text: &str) -> Result<Vec<(usize, Value)>, RateError> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line).map_err(|e| RateError::Import {
            path: path.to_path_buf(),
            why: format!("line {}: not valid JSON: {e}", i + 1),
        })?;
        lines.push((i + 1, value));
    }
    Ok(lines)
}

fn read_json(path: &Path) -> Result<Value, RateError> {
    let text = toolcall_score::read_text(path)?;
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
    let defaults = default_keys();
    let from_object = |object: &'a Map<String, Value>, index: usize, width: usize| {
        let list = |key: &str| {
            let (key, value) = object.get_key_value(key)?;
            Some((key.as_str(), value.as_array()?.as_slice()))
        };
        let found = match key {
            Some(key) => list(key),
            None => defaults.iter().find_map(|k| list(k)),
        };
        let (found, messages) = found.ok_or_else(|| {
            let keys: Vec<String> = object
                .keys()
                .take(8)
                .map(|k| toolcall_score::escape(k).to_string())
                .collect();
            bad(format!(
                "conversation {index}: no message list under {} (keys: {}); name it with --messages-key",
                key.map_or_else(|| defaults.join(", "), |k| format!("`{k}`")),
                keys.join(", ")
            ))
        })?;
        let name = match object.get("id") {
            Some(Value::String(s)) => {
                check_name(Some(path), format!("conversation {index}"), "id", s)?;
                s.clone()
            }
            Some(Value::Number(n)) => n.to_string(),
            _ => format!("{index:0width$}"),
        };
        Ok(Conversation {
            label: format!("conversation {index}"),
            name,
            key: Some(found),
            messages,
            object: Some(object),
            model: object.get("model").and_then(Value::as_str),
        })
    };
    let plain = |messages: &'a [Value], index: usize, width: usize| Conversation {
        label: format!("conversation {index}"),
        name: format!("{index:0width$}"),
        key: None,
        messages,
        object: None,
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

/// The cases of one conversation: each assistant turn that calls a tool, with the request up to
/// it and the turn wrapped as its format's response body (an error says why a turn does not
/// read as a response).
fn turns<'a>(
    source: &'a str,
    prefix: &'a str,
    conversation: &'a Conversation<'_>,
    logged: &'a Logged<'_>,
    tools: &'a Value,
    agent: &'a str,
) -> impl Iterator<Item = Result<Turn, String>> + 'a {
    let model = conversation.model.unwrap_or(agent);
    logged.turns().filter_map(move |range| {
        let i = range.start;
        let name = format!("{}-{i}", conversation.name);
        let (response, read) = match logged.response(range, &format!("imported-{name}"), model) {
            Ok(pair) => pair,
            Err(e) => {
                return Some(Err(format!(
                    "message {i} does not read as a {} response: {e}",
                    logged.format()
                )))
            }
        };
        if read.calls.is_empty() {
            return None;
        }
        let mut case = Map::new();
        case.insert(
            "about".into(),
            format!(
                "imported from {source}, conversation {}, message {i}",
                conversation.name
            )
            .into(),
        );
        case.insert("format".into(), logged.format().as_str().into());
        case.extend(logged.request(i, tools, conversation.object));
        Some(Ok(Turn {
            conversation: conversation.label.clone(),
            id: format!("{prefix}/{name}"),
            key: format!("{}/{}-{i}", id_key(prefix), name_key(&conversation.name)),
            case: Value::Object(case),
            response,
            calls: read.calls.len(),
        }))
    })
}

/// Writes `value` to `path` through a temporary file and a rename, so a reader never sees half a
/// file (live mode's recordings, each in place as it arrives).
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RateError> {
    let write = |source| RateError::Write {
        path: path.to_path_buf(),
        source,
    };
    toolcall_fs::write_atomic(path, bytes).map_err(write)
}

fn inputs(input: &Path) -> Result<(Vec<PathBuf>, Option<PathBuf>), RateError> {
    if !input.is_dir() {
        return Ok((vec![input.to_path_buf()], None));
    }
    let read = |source| RateError::Read {
        path: input.to_path_buf(),
        source,
    };
    // One level deep, through the one walker: a link out of the folder, a FIFO or a device
    // named `*.json` is refused (it would hang, or import what is not the user's to import).
    let is_json = |p: &Path| p.extension().is_some_and(|e| e == "json");
    let walked =
        toolcall_fs::walk(input, &|p| p.parent() != Some(input), &|p| is_json(p)).map_err(read)?;
    if let Some(skipped) = walked.skipped.iter().find(|s| is_json(&s.path)) {
        return Err(RateError::Import {
            path: skipped.path.clone(),
            why: format!(
                "{}; import reads regular files inside the folder only",
                skipped.why
            ),
        });
    }
    let mut files = walked.files;
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
    if let Some(agent) = &options.agent {
        check_name(None, "--agent".into(), "value", agent)?;
    }
    let mut summary = ImportSummary::default();
    // Two passes: the first reads and checks every conversation of every file and plans every
    // output path, so that a bad name, a clash or a file in the way found in the last file
    // still leaves nothing written; the second makes the files one at a time, so memory stays
    // at one case (plus the planned paths).
    let mut planned = Planned::default();
    let mut plans = Vec::new();
    for file in &files {
        let value = read_input(file, options)?;
        let prefix = match &options.prefix {
            Some(prefix) => {
                for part in prefix.split('/') {
                    check_name(None, "--prefix".into(), "part", part)?;
                }
                prefix.clone()
            }
            None => {
                let stem = file
                    .file_stem()
                    .map_or_else(|| "imported".into(), |s| s.to_string_lossy().into_owned());
                check_name(
                    Some(file),
                    "the file's name".into(),
                    "stem (the default --prefix)",
                    &stem,
                )?;
                stem
            }
        };
        let mut failed = None;
        for_each_turn(
            file,
            &value,
            &prefix,
            options,
            tools_override.as_ref(),
            |agent, turn| {
                if failed.is_none() {
                    let source = file
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                    let by = format!("{} of {source}", turn.conversation);
                    failed = planned
                        .add(&options.out, agent, &turn.id, &turn.key, by)
                        .err();
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        plans.push((file, prefix));
    }
    planned.check_existing(options.force)?;
    // One batch for the whole import: each file flushed once, side by side with others, and
    // each folder once (a flush per file and per rename, one after the other, took minutes).
    let mut batch = toolcall_fs::Batch::default();
    for (file, prefix) in plans {
        let value = read_input(file, options)?;
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
                    .and_then(|b| write_in(&mut batch, &case_path, &b))
                    .and_then(|()| pretty(&turn.response))
                    .and_then(|b| write_in(&mut batch, &response_path, &b));
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
        trace_counts(&value, tools_override.is_some(), &mut summary);
        summary.conversations += conversations;
    }
    batch.finish().map_err(|source| RateError::Write {
        path: options.out.clone(),
        source,
    })?;
    Ok(summary)
}

/// The turns of a trace that made calls, as cases: `<prefix>/<turn id>`, judged against the
/// trace's own catalog or the `--tools` one; a turn with neither is left out (and counted by
/// [`trace_counts`]). Returns the number of traces (by trace id) seen.
fn trace_turns(
    file: &Path,
    trace: &crate::traces::TraceFile,
    prefix: &str,
    options: &ImportOptions,
    tools_override: Option<&Value>,
    mut each: impl FnMut(&str, &Turn),
) -> Result<usize, RateError> {
    let supplied = tools_override
        .map(toolcall_score::Catalog::from_json)
        .transpose()
        .map_err(|e| RateError::Import {
            path: file.to_path_buf(),
            why: format!("--tools: {e}"),
        })?;
    let mut traces: Vec<&str> = Vec::new();
    for turn in &trace.found.turns {
        if let Some(id) = turn.trace.as_deref() {
            if !traces.contains(&id) {
                traces.push(id);
            }
        }
        if turn.calls().is_empty() {
            continue;
        }
        let Some(judged) = crate::traces::judged(turn, supplied.as_ref()) else {
            continue;
        };
        let agent = agent_dir(
            options.agent.as_deref(),
            turn.model.as_deref(),
            file,
            &turn.at,
        )?;
        let id = format!("{prefix}/{}", crate::names::id_component(&turn.id));
        each(
            &agent,
            &Turn {
                conversation: turn.at.clone(),
                key: id_key(&id),
                id,
                case: judged.chat_request(),
                response: judged.chat_response(),
                calls: judged.calls().len(),
            },
        );
    }
    Ok(traces.len().max(1))
}

/// What a trace import leaves out: turns with calls but no catalog, folded calls, bad records.
fn trace_counts(input: &Input, supplied: bool, summary: &mut ImportSummary) {
    let Input::Trace(trace) = input else { return };
    if !supplied {
        summary.not_judged += trace
            .found
            .turns
            .iter()
            .filter(|t| !t.calls().is_empty() && !t.catalog.is_recorded())
            .count();
    }
    summary.folded += trace.found.folded;
    summary.notes.extend(
        trace
            .found
            .notes
            .iter()
            .map(|n| format!("{}: {}", n.at, n.why)),
    );
    summary.bad.extend(
        trace
            .found
            .bad
            .iter()
            .map(|b| format!("{}: {}", b.at, b.why)),
    );
}

fn pretty(value: &Value) -> Result<Vec<u8>, RateError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|e| RateError::Config(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The pairs of a log whose response calls a tool, as cases: the request as it was sent (its
/// `tools` the catalog; the log's own, so `--tools` does not apply) and the response as it came
/// back, `<prefix>/<line number>`. A response that does not read is an error naming its line.
/// Returns the number of pairs.
fn pair_turns(
    file: &Path,
    pairs: &[(usize, Value)],
    prefix: &str,
    options: &ImportOptions,
    mut each: impl FnMut(&str, &Turn),
) -> Result<usize, RateError> {
    let source = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let width = pairs.last().map_or(1, |(n, _)| n.to_string().len());
    let bad = |line: usize, why: String| RateError::Import {
        path: file.to_path_buf(),
        why: format!("line {line}: {why}"),
    };
    for (line, pair) in pairs {
        let (Some(Value::Object(request)), Some(response)) =
            (pair.get("request"), pair.get("response"))
        else {
            return Err(bad(
                *line,
                "expected a {\"request\": {…}, \"response\": …} pair, as the first line is".into(),
            ));
        };
        let read = toolcall_score::Response::from_value(response, None)
            .map_err(|e| bad(*line, format!("the response does not read: {e}")))?;
        if read.calls.is_empty() {
            continue;
        }
        let label = format!("line {line}");
        let model = request.get("model").and_then(Value::as_str);
        let agent = agent_dir(options.agent.as_deref(), model, file, &label)?;
        let mut case = Map::new();
        case.insert(
            "about".into(),
            format!("imported from {source}, line {line}").into(),
        );
        case.extend(request.iter().map(|(k, v)| (k.clone(), v.clone())));
        let name = format!("{line:0width$}");
        each(
            &agent,
            &Turn {
                conversation: label,
                id: format!("{prefix}/{name}"),
                key: format!("{}/{name}", id_key(prefix)),
                case: Value::Object(case),
                response: response.clone(),
                calls: read.calls.len(),
            },
        );
    }
    Ok(pairs.len())
}

/// Calls `each(agent, turn)` for every assistant turn with tool calls in `value`; returns the
/// number of conversations.
fn for_each_turn(
    file: &Path,
    input: &Input,
    prefix: &str,
    options: &ImportOptions,
    tools_override: Option<&Value>,
    mut each: impl FnMut(&str, &Turn),
) -> Result<usize, RateError> {
    let value = match input {
        Input::Conversations(value) => value,
        Input::Trace(trace) => {
            return trace_turns(file, trace, prefix, options, tools_override, each);
        }
        Input::Pairs(pairs) => return pair_turns(file, pairs, prefix, options, each),
    };
    let conversations = conversations(file, value, options.messages_key.as_deref())?;
    let source = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let bad = |conversation: &Conversation<'_>, why: String| RateError::Import {
        path: file.to_path_buf(),
        why: format!("conversation {}: {why}", conversation.name),
    };
    for conversation in &conversations {
        let logged = Logged::read(conversation.messages, conversation.key).map_err(|e| {
            bad(
                conversation,
                format!("its messages do not read as a request's transcript: {e}"),
            )
        })?;
        let tools = tools_override
            .or_else(|| conversation.object.and_then(|o| logged.tools_in(o)))
            .or_else(|| value.as_object().and_then(|o| logged.tools_in(o)))
            .ok_or_else(|| RateError::Import {
                path: file.to_path_buf(),
                why: format!(
                    "conversation {} carries no `tools` and none were given: pass --tools FILE (a tools array)",
                    conversation.name
                ),
            })?;
        let agent = agent_dir(
            options.agent.as_deref(),
            conversation.model,
            file,
            &conversation.label,
        )?;
        for turn in turns(&source, prefix, conversation, &logged, tools, &agent) {
            each(&agent, &turn.map_err(|why| bad(conversation, why))?);
        }
    }
    Ok(conversations.len())
}
