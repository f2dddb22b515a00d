//! Claude Code: session transcripts (`~/.claude/projects/<project>/<session>.jsonl`, and a
//! sub-agent's `subagents/agent-<id>.jsonl`), the session JSON session viewers read
//! (`{"loglines": [record, …]}`), and the headless `stream-json` output of
//! `claude -p --output-format stream-json` (one record a line, or collected into one array) as
//! the CLI writes it to the Agent SDKs: the control protocol's `control_request` /
//! `control_response` / `control_cancel_request` lines (before `system`/`init` too), and
//! `stream_event` (`--include-partial-messages`), `rate_limit_event`, `transcript_mirror` and
//! `conversation_reset` records, which are the format's own (the SDK's reader,
//! `claude_agent_sdk/_internal/message_parser.py` and `query.py`, takes each of them) and carry
//! no turn of their own: a response's `stream_event` deltas are followed by its `assistant`
//! records, which are read.
//!
//! The format is undocumented and changes between versions, so this reads what is known and
//! names the rest:
//! - `user` and `assistant` records carry `message` (an Anthropic message: `text`, `tool_use`,
//!   `tool_result` parts). One API response is written as several `assistant` records, one part
//!   each, with the same `message.id`: a model turn is that group, and its id is the message id.
//! - Sub-agents: `isSidechain: true` records. In 1.x they sit inline in the parent's file, each
//!   run starting with `parentUuid: null`; in 2.x they are files of their own. Each run is a
//!   conversation of its own, never mixed into the parent's transcript.
//! - A session file records no catalog (the tools are not written), so its turns are
//!   [`Catalog::NotRecorded`]. The headless output's `system`/`init` record lists the tools by
//!   name: its turns are judged against those names.
//! - `summary`, `system`, `progress`, `file-history-snapshot` and `queue-operation` records, and
//!   the stream's records above, are not conversation and are passed over; a record of another
//!   type, or one without a type, is a [`crate::Bad`] entry naming the type and the Claude Code
//!   version that wrote it.

use serde_json::Value;
use toolcall_score::{Message};

use crate::model::{assistant, joined, read_message, result, tool, user_message};

use crate::{Catalog, Found, Records, Turn};

use super::{Groups, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "claude-code",
    about: "Claude Code session transcripts (JSONL of user/assistant records with sessionId) or \
            headless stream-json output (a system/init record listing the tools)",
    reads: Reads::Records {
        claims,
        turns,
        groups: Groups::File,
    },
};

/// Record types that are not conversation.
const PASSED_OVER: [&str; 12] = [
    "summary",
    "system",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    // The stream's, as the Agent SDKs read it.
    "stream_event",
    "control_request",
    "control_response",
    "control_cancel_request",
    "rate_limit_event",
    "transcript_mirror",
    "conversation_reset",
];

fn is_record(v: &Value) -> bool {
    let Some(kind) = v.get("type").and_then(Value::as_str) else {
        return false;
    };
    let session = v.get("sessionId").is_some() || v.get("session_id").is_some();
    match kind {
        "user" | "assistant" => session && v.get("message").is_some(),
        "system" => session,
        "file-history-snapshot" => v.get("messageId").is_some() && v.get("snapshot").is_some(),
        "summary" => v.get("leafUuid").is_some(),
        // The control protocol the CLI speaks to the Agent SDKs, which may come first.
        "control_request" => v.get("request_id").is_some() && is_object(v.get("request")),
        "control_response" => v
            .get("response")
            .is_some_and(|r| r.get("request_id").is_some() || r.get("subtype").is_some()),
        "stream_event" => session && is_object(v.get("event")),
        _ => false,
    }
}

fn is_object(v: Option<&Value>) -> bool {
    v.is_some_and(Value::is_object)
}

/// The records of a session viewer's `{"loglines": [record, …]}`.
fn loglines(v: &Value) -> Option<&Vec<Value>> {
    v.get("loglines").and_then(Value::as_array)
}

fn claims(first: &Value) -> bool {
    if let Some(lines) = loglines(first) {
        // A viewer keeps the records without their session: a conversation record will do.
        return lines.first().is_some_and(|r| {
            matches!(
                r.get("type").and_then(Value::as_str),
                Some("user" | "assistant")
            ) && is_object(r.get("message"))
        });
    }
    match first {
        Value::Array(items) => items.first().is_some_and(is_record),
        other => is_record(other),
    }
}

/// One conversation being read: a session's main line, or one sub-agent run.
#[derive(Default)]
struct Conversation {
    key: String,
    messages: Vec<Message>,
    /// The turn being assembled from the records of one `message.id`.
    open: Option<Turn>,
    /// The last turn closed: its id, its place in the found turns and in `messages`. Claude
    /// Code 2.x writes a result between two parts of one response (parallel calls), so a part
    /// may come after its turn was closed.
    last: Option<(String, usize, usize)>,
}

fn turns(records: &Records, found: &mut Found) {
    // A stream collected into one array: its elements are the records.
    let items: Vec<(String, &Value)> = match records.values.as_slice() {
        [(at, Value::Array(items))] if !records.lines => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{at} [{i}]"), v))
            .collect(),
        [(at, doc)] if !records.lines && loglines(doc).is_some() => loglines(doc)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, v)| (format!("{at} loglines[{i}]"), v))
            .collect(),
        values => values.iter().map(|(at, v)| (at.clone(), v)).collect(),
    };
    let mut catalog = Catalog::NotRecorded;
    let mut conversations: Vec<Conversation> = Vec::new();
    let mut current_side: Option<usize> = None;
    let mut last_session = String::new();
    for (at, record) in items {
        let Some(object) = record.as_object() else {
            found.bad(at, "expected a record (a JSON object with a `type`)");
            continue;
        };
        let version = object
            .get("version")
            .and_then(Value::as_str)
            .map(|v| format!(" (Claude Code {v})"))
            .unwrap_or_default();
        let Some(kind) = object.get("type").and_then(Value::as_str) else {
            found.bad(at, format!("a record without a `type`{version}"));
            continue;
        };
        if kind == "system" && object.get("subtype").and_then(Value::as_str) == Some("init") {
            if let Some(tools) = object.get("tools").and_then(Value::as_array) {
                catalog = Catalog::of(
                    tools
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|name| tool(name, None, None)),
                );
            }
            continue;
        }
        if PASSED_OVER.contains(&kind) || kind == "result" {
            continue;
        }
        if kind != "user" && kind != "assistant" {
            found.bad(
                at,
                format!("a record of type `{kind}`{version}, which this reader does not know"),
            );
            continue;
        }
        let Some(message) = object.get("message").filter(|m| m.is_object()) else {
            found.bad(
                at,
                format!("a `{kind}` record whose `message` is not an object{version}"),
            );
            continue;
        };
        // Headless output names the session on some records only: the others are in it too.
        let session = match object
            .get("sessionId")
            .or_else(|| object.get("session_id"))
            .and_then(Value::as_str)
        {
            Some(id) => {
                last_session = id.to_owned();
                last_session.clone()
            }
            None => last_session.clone(),
        };
        // Which conversation: the main line, or the sub-agent run this record continues.
        let side = object
            .get("isSidechain")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let key = if side {
            let starts = object.get("parentUuid").is_none_or(Value::is_null);
            let agent = object.get("agentId").and_then(Value::as_str);
            match (agent, starts, current_side) {
                (Some(agent), _, _) => format!("{session}/agent-{agent}"),
                (None, false, Some(n)) => format!("{session}/sidechain-{n}"),
                (None, _, n) => {
                    let n = n.map_or(1, |n| n + 1);
                    current_side = Some(n);
                    format!("{session}/sidechain-{n}")
                }
            }
        } else {
            session.clone()
        };
        let index = match conversations.iter().position(|c| c.key == key) {
            Some(i) => i,
            None => {
                conversations.push(Conversation {
                    key: key.clone(),
                    ..Conversation::default()
                });
                conversations.len() - 1
            }
        };
        let conversation = &mut conversations[index];
        // The message is an Anthropic one: the core's reader reads its blocks (text,
        // `tool_use`, `tool_result`). One it refuses is named, and the rest still counts.
        let body = serde_json::json!({"role": kind, "content": content(message.get("content"))});
        let Some(read) = read_message(&body) else {
            found.bad(
                at,
                format!("a `{kind}` message that is not an Anthropic message{version}"),
            );
            continue;
        };
        if kind == "assistant" {
            let id = message
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| object.get("uuid").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| at.clone());
            let same = conversation.open.as_ref().is_some_and(|t| t.id == id);
            let reopened = !same
                && conversation.open.is_none()
                && conversation.last.as_ref().is_some_and(|(last, ..)| *last == id);
            if reopened {
                if let Some((_, turn_at, message_at)) = conversation.last.clone() {
                    let parts_calls = read.calls.clone();
                    let parts_text = joined(&read.text);
                    if let Some(turn) = found.turns.get_mut(turn_at) {
                        turn.response.calls.extend(parts_calls.iter().cloned());
                        turn.response.text.extend(parts_text.clone());
                    }
                    if let Some(message) = conversation.messages.get_mut(message_at) {
                        message.calls.extend(parts_calls);
                        message.text.extend(parts_text);
                    }
                }
                continue;
            }
            if !same {
                close(conversation, found);
                let mut turn = Turn::at(at.clone(), id);
                turn.trace = (!session.is_empty()).then(|| session.clone());
                turn.model = message
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                turn.name = object
                    .get("agentId")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| side.then(|| "sidechain".to_owned()));
                turn.catalog = catalog.clone();
                turn.transcript.messages = conversation.messages.clone();
                conversation.open = Some(turn);
            }
            if let Some(turn) = conversation.open.as_mut() {
                turn.response.calls.extend(read.calls);
                turn.response.text.extend(joined(&read.text));
            }
        } else {
            close(conversation, found);
            // Its results first, each a message of its own, then what the user wrote.
            for done in read.results {
                conversation.messages.push(result(done.call_id, done.content));
            }
            if let Some(text) = joined(&read.text) {
                conversation.messages.push(user_message(text));
            }
        }
    }
    for conversation in &mut conversations {
        close(conversation, found);
    }
}

/// Ends the turn being assembled: it joins the transcript and the found turns.
fn close(conversation: &mut Conversation, found: &mut Found) {
    if let Some(turn) = conversation.open.take() {
        let mut message = assistant(None, turn.response.calls.clone());
        message.text = turn.response.text.clone();
        conversation.messages.push(message);
        conversation.last = Some((
            turn.id.clone(),
            found.turns.len(),
            conversation.messages.len() - 1,
        ));
        found.turns.push(turn);
    }
}

/// A message's content as the Anthropic API takes it: a transcript may hold a bare string among
/// its blocks, which is a text block.
fn content(content: Option<&Value>) -> Value {
    match content {
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => serde_json::json!({"type": "text", "text": s}),
                other => other.clone(),
            })
            .collect(),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    /// The stream as the CLI writes it to an Agent SDK: its answer to the SDK's `initialize`
    /// before `system`/`init`, a permission `control_request`, partial messages
    /// (`stream_event`) and a `rate_limit_event` among the records. Hand-written in the shapes
    /// the SDK's reader takes (`claude_agent_sdk/_internal/query.py`, `message_parser.py`): no
    /// permissively licensed capture with these lines was found.
    #[test]
    fn the_control_protocol_and_stream_events_are_the_format_not_bad_lines() {
        let lines = [
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1_init","response":{"commands":[],"models":[]}}}"#,
            r#"{"type":"system","subtype":"init","session_id":"s1","tools":["Read","Bash"],"model":"claude-sonnet-4-5"}"#,
            r#"{"type":"stream_event","uuid":"e1","session_id":"s1","parent_tool_use_id":null,"event":{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}}"#,
            r#"{"type":"stream_event","uuid":"e2","session_id":"s1","parent_tool_use_id":null,"event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":"}}}"#,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a.rs"}}]}}"#,
            r#"{"type":"control_request","request_id":"req_2","request":{"subtype":"can_use_tool","tool_name":"Read","input":{"file_path":"a.rs"}}}"#,
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"},"uuid":"r1","session_id":"s1"}"#,
            r#"{"type":"user","session_id":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"fn main() {}"}]}}"#,
            r#"{"type":"stream_event","uuid":"e3","session_id":"s1","parent_tool_use_id":null,"event":{"type":"message_stop"}}"#,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Grep","input":{}}]}}"#,
            r#"{"type":"result","subtype":"success","session_id":"s1","is_error":false}"#,
        ];
        let text = lines.join("\n");
        let (source, found) = crate::read(&text, "stream.jsonl", None).expect("claimed");
        assert_eq!(source.name, "claude-code");
        assert_eq!(found.bad, []);
        assert_eq!(found.turns.len(), 2);
        let names: Vec<&str> = found
            .turns
            .iter()
            .flat_map(|t| t.calls().iter().map(|c| c.name.as_str()))
            .collect();
        assert_eq!(names, ["Read", "Grep"]);
        // Judged against the init record's names: `Grep` is not one of them.
        let unknown: usize = found
            .turns
            .iter()
            .map(|t| {
                let case = t.case(None).expect("a catalog");
                toolcall_score::score(&case, &t.response).unknown().count()
            })
            .sum();
        assert_eq!(unknown, 1);
        // A control line alone before anything else is still this format's first record; a
        // record type nobody wrote stays a bad line.
        let odd = format!("{}\n{}", lines[0], r#"{"type":"mystery","session_id":"s1"}"#);
        let (_, found) = crate::read(&odd, "odd.jsonl", None).expect("claimed");
        assert_eq!(found.bad.len(), 1);
    }
}
