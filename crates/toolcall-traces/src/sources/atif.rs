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
//! - Versions: this reader was written for ATIF-v1.7 ([`WRITTEN_FOR`]). An older 1.x file is
//!   read as it is (each minor version only added fields); a newer 1.x file is read as v1.7
//!   defines its steps, tool calls and results, with a note naming both versions and that
//!   what it added is not read; another major version, or a `schema_version` that is not
//!   `ATIF-vMAJOR.MINOR`, is refused as a bad record naming it, and its steps are not read.

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

/// The ATIF version this reader was written for: its steps, tool calls, observation results
/// and embedded sub-agent trajectories.
pub const WRITTEN_FOR: (u64, u64) = (1, 7);

/// `ATIF-vMAJOR.MINOR` as its two numbers.
fn version_of(v: &str) -> Option<(u64, u64)> {
    let (major, minor) = v.strip_prefix("ATIF-v")?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn trajectory(at: &str, doc: &Value, root: bool, found: &mut Found) {
    let version = doc
        .get("schema_version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (major, minor) = WRITTEN_FOR;
    match version_of(version) {
        Some((m, _)) if m != major => {
            found.bad(
                at,
                format!(
                    "ATIF version `{}`: this reader reads ATIF-v{major}.0 to v{major}.{minor} \
                     (steps, tool_calls, observation.results); a major version {m} may change \
                     them, so this trajectory is not read",
                    toolcall_score::escape(version)
                ),
            );
            return;
        }
        Some((_, n)) if n > minor => found.note(
            at,
            format!(
                "ATIF version `{version}` is newer than ATIF-v{major}.{minor}, which this reader \
                 was written for: its steps, tool calls, results and sub-agents are read as \
                 v{major}.{minor} defines them; what v{major}.{n} added is not read"
            ),
        ),
        Some(_) => {}
        None => {
            found.bad(
                at,
                format!(
                    "ATIF version `{}` is not `ATIF-vMAJOR.MINOR`: this reader reads \
                     ATIF-v{major}.0 to v{major}.{minor}, so this trajectory is not read",
                    toolcall_score::escape(version)
                ),
            );
            return;
        }
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// A real trajectory (Phoenix's ATIF-v1.4 fixture, three parallel calls) with its
    /// `schema_version` set to each kind of version: older and newer minors are read, a newer
    /// one with a note naming both versions; another major, or no version at all, is refused
    /// with the version in the message and nothing of it read.
    #[test]
    fn each_version_is_read_or_refused_and_says_which() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/atif/parallel_tools_mixed_results.json");
        let text = std::fs::read_to_string(path).unwrap();
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        let mut read = |version: &str| {
            doc["schema_version"] = Value::from(version);
            crate::read(&doc.to_string(), "t.json", None).expect("claimed").1
        };
        for older in ["ATIF-v1.0", "ATIF-v1.2", "ATIF-v1.7"] {
            let found = read(older);
            assert_eq!((found.turns.len(), found.bad.len()), (2, 0), "{older}");
            assert_eq!(found.notes, [], "{older}");
        }
        let found = read("ATIF-v1.9");
        assert_eq!(found.turns.len(), 2);
        assert_eq!(found.bad, []);
        assert_eq!(found.notes.len(), 1);
        let note = &found.notes[0].why;
        assert!(
            note.contains("`ATIF-v1.9` is newer than ATIF-v1.7")
                && note.contains("what v1.9 added is not read"),
            "{note}"
        );
        for refused in ["ATIF-v2.0", "ATIF-v0.9", "ATIF-vNext", "ATIF-"] {
            let found = read(refused);
            assert_eq!(found.turns, [], "{refused}");
            assert_eq!(found.bad.len(), 1, "{refused}");
            assert!(
                found.bad[0].why.contains(&format!("`{refused}`"))
                    && found.bad[0].why.contains("not read"),
                "{}",
                found.bad[0].why
            );
        }
    }
}
