//! ATIF, the Agent Trajectory Interchange Format (Harbor, Terminal-Bench): one trajectory a
//! file, `schema_version: "ATIF-v1.x"`.
//!
//! - The catalog is `agent.tool_definitions` (Chat's `{"type": "function", "function": {…}}`
//!   or flat); many agents (terminus-2) record none: their turns are not judged.
//! - Each `source: "agent"` step is a model turn: `tool_calls[]` of `{tool_call_id,
//!   function_name, arguments}`, and its `observation.results[]` answer them by
//!   `source_call_id` — or, where a result has none, by position.
//! - A step marked `is_copied_context` repeats its parent's conversation: it goes into the
//!   transcript, and is not a turn again.
//! - Embedded sub-agent trajectories (`subagent_trajectories[]`, v1.7) are read as trajectories
//!   of their own, with their own catalog.
//! - A major version other than 1 is a bad record naming it.

use serde_json::Value;
use toolcall_score::{ToolCall};

use crate::model::{arguments_of, reply, assistant, call, result, system_message, text_of, tool, user_message};

use crate::{Catalog, Found, Records, Turn};

use super::{Groups, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "atif",
    about: "ATIF trajectories (an object with schema_version \"ATIF-v1.x\" and steps)",
    reads: Reads::Records {
        claims,
        turns,
        groups: Groups::File,
    },
};

fn claims(first: &Value) -> bool {
    first
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("ATIF-"))
        && first.get("steps").is_some()
}

fn turns(records: &Records, found: &mut Found) {
    for (at, value) in &records.values {
        trajectory(at, value, true, found);
    }
}

fn trajectory(at: &str, doc: &Value, root: bool, found: &mut Found) {
    let version = doc
        .get("schema_version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !version.starts_with("ATIF-v1.") {
        found.bad(
            at,
            format!(
                "ATIF version `{version}`: this reader knows ATIF-v1.x (steps, tool_calls, \
                 observation.results)"
            ),
        );
        return;
    }
    let Some(steps) = doc.get("steps").and_then(Value::as_array) else {
        found.bad(at, "an ATIF trajectory without a `steps` list");
        return;
    };
    let agent = doc.get("agent");
    let catalog = match agent
        .and_then(|a| a.get("tool_definitions"))
        .and_then(Value::as_array)
    {
        Some(defs) => Catalog::of(defs.iter().filter_map(|d| {
            let f = d.get("function").unwrap_or(d);
            Some(tool(
                f.get("name")?.as_str()?,
                f.get("description").and_then(Value::as_str),
                f.get("parameters").cloned(),
            ))
        })),
        None => Catalog::NotRecorded,
    };
    let session = doc
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let prefix = match doc.get("trajectory_id").and_then(Value::as_str) {
        Some(id) if !root => format!("{id}-"),
        _ => String::new(),
    };
    let model = agent
        .and_then(|a| a.get("model_name"))
        .and_then(Value::as_str);
    let mut system = None;
    let mut messages = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let step_at = format!("{at} (step {})", i + 1);
        let text = step.get("message").map(text_of).filter(|t| !t.is_empty());
        match step.get("source").and_then(Value::as_str) {
            Some("system") => match (&system, messages.is_empty()) {
                (None, true) => system = text,
                _ => messages.extend(text.map(system_message)),
            },
            Some("user") => messages.push(user_message(text.unwrap_or_default())),
            Some("agent") => {
                let calls: Vec<ToolCall> = step
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|c| call(c
                            .get("tool_call_id")
                            .and_then(Value::as_str)
                            .map(str::to_owned), c
                            .get("function_name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(), arguments_of(c.get("arguments"))))
                    .collect();
                let copied = step
                    .get("is_copied_context")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if !copied {
                    let id = match step.get("step_id") {
                        Some(Value::Number(n)) => format!("{prefix}step-{n}"),
                        Some(Value::String(s)) => format!("{prefix}step-{s}"),
                        _ => format!("{prefix}step-{}", i + 1),
                    };
                    let mut turn = Turn::at(step_at.clone(), id);
                    turn.trace = session.clone();
                    turn.model = step
                        .get("model_name")
                        .and_then(Value::as_str)
                        .or(model)
                        .map(str::to_owned);
                    turn.name = agent
                        .and_then(|a| a.get("name"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    turn.catalog = catalog.clone();
                    turn.system = system.clone();
                    turn.transcript.messages = messages.clone();
                    turn.response = reply(text.clone(), calls.clone());
                    found.turns.push(turn);
                }
                let results: Vec<&Value> = step
                    .pointer("/observation/results")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .collect();
                messages.push(assistant(text, calls.clone()));
                for (n, done) in results.iter().enumerate() {
                    let call_id = done
                        .get("source_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        // No id: the result answers the call in its place, when there is one.
                        .or_else(|| calls.get(n).and_then(|c| c.id.clone()));
                    messages.push(result(
                        call_id,
                        done.get("content").map(text_of).unwrap_or_default(),
                    ));
                }
            }
            other => found.bad(
                step_at,
                format!(
                    "a step whose source is {}: expected system, user or agent",
                    other.map_or_else(|| "missing".to_owned(), |s| format!("`{s}`"))
                ),
            ),
        }
    }
    for (n, child) in doc
        .get("subagent_trajectories")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        trajectory(
            &format!("{at} (subagent_trajectories[{n}])"),
            child,
            false,
            found,
        );
    }
}
