//! LangSmith runs: the SDK's batch ingest bodies (`{"post": [runs], "patch": [runs]}`, a run's
//! create and its update merged by `id`, or by `trace_id` and `dotted_order` when the update
//! carries no id), the API's `{"runs": [...]}`, or a list of runs.
//!
//! Each `run_type: "llm"` run is a turn. Its catalog is `extra.invocation_params.tools` (any
//! provider's tool array the core reads), else `inputs.tools`, else not recorded. Its messages
//! are `inputs.messages`: provider dicts, or LangChain-serialised messages (`{"lc": 1, "type":
//! "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`, possibly a list of lists). Its
//! calls come from `outputs`: a provider response body the core reads, or LangChain's
//! `generations[0][0].message` with `tool_calls`.

use serde_json::Value;
use toolcall_score::{Message, Response, Role};

use crate::model::{joined, read_message, reply, text_of};

use crate::{Catalog, Found, Records, Turn};

use super::{Groups, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "langsmith",
    about: "LangSmith runs: ingest bodies ({\"post\", \"patch\"}), {\"runs\": [...]}, or a list \
            of runs with run_type and dotted_order",
    reads: Reads::Records {
        claims,
        turns,
        groups: Groups::Record,
    },
};

fn is_run(v: &Value) -> bool {
    v.get("dotted_order").is_some() && (v.get("run_type").is_some() || v.get("trace_id").is_some())
}

fn runs_of(doc: &Value) -> Option<Vec<Value>> {
    if let (Some(post), patch) = (doc.get("post").and_then(Value::as_array), doc.get("patch")) {
        let mut runs: Vec<Value> = post.clone();
        for update in patch.and_then(Value::as_array).into_iter().flatten() {
            let same = |r: &Value| match update.get("id").filter(|i| !i.is_null()) {
                Some(id) => r.get("id") == Some(id),
                None => {
                    r.get("trace_id") == update.get("trace_id")
                        && r.get("dotted_order") == update.get("dotted_order")
                }
            };
            match runs.iter_mut().find(|r| same(r)) {
                Some(run) => {
                    if let (Some(run), Some(update)) = (run.as_object_mut(), update.as_object()) {
                        for (k, v) in update {
                            if !v.is_null() {
                                run.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                None => runs.push(update.clone()),
            }
        }
        return runs.iter().all(is_run).then_some(runs);
    }
    let list = doc.get("runs").unwrap_or(doc).as_array()?;
    (!list.is_empty() && list.iter().all(is_run)).then(|| list.clone())
}

fn claims(first: &Value) -> bool {
    runs_of(first).is_some_and(|r| !r.is_empty())
}

fn tool_defs(tools: &Value) -> Option<Catalog> {
    Catalog::from_json(tools).ok()
}

fn turns(records: &Records, found: &mut Found) {
    for (at, doc) in &records.values {
        let Some(runs) = runs_of(doc) else {
            found.bad(at.clone(), "expected LangSmith runs");
            continue;
        };
        for run in runs.iter().filter(|r| r["run_type"] == "llm") {
            let id = run.get("id").map(text_of).unwrap_or_default();
            let catalog = [
                run.pointer("/extra/invocation_params/tools"),
                run.pointer("/inputs/tools"),
            ]
            .into_iter()
            .flatten()
            .find_map(tool_defs)
            .unwrap_or(Catalog::NotRecorded);
            let mut turn = Turn::at(format!("{at} (run {id})"), id);
            turn.trace = run.get("trace_id").and_then(Value::as_str).map(str::to_owned);
            turn.model = run
                .pointer("/extra/metadata/ls_model_name")
                .or_else(|| run.pointer("/inputs/model"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            turn.name = run.get("name").and_then(Value::as_str).map(str::to_owned);
            turn.catalog = catalog;
            turn.transcript.messages = messages(run.pointer("/inputs/messages"));
            turn.response = answer(run.get("outputs").unwrap_or(&Value::Null));
            found.turns.push(turn);
        }
    }
}

/// A LangChain-serialised message as the provider-style dict the GenAI reader takes.
fn langchain(m: &Value) -> Value {
    if m.get("lc").is_none() {
        return m.clone();
    }
    let kind = m
        .get("id")
        .and_then(Value::as_array)
        .and_then(|id| id.last())
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kwargs = m.get("kwargs").cloned().unwrap_or(Value::Null);
    let role = match kind {
        "SystemMessage" => "system",
        "HumanMessage" => "user",
        "ToolMessage" => "tool",
        _ => "assistant",
    };
    serde_json::json!({
        "role": role,
        "content": kwargs.get("content").cloned().unwrap_or(Value::Null),
        "tool_call_id": kwargs.get("tool_call_id").cloned().unwrap_or(Value::Null),
        "tool_calls": lc_calls(&kwargs),
    })
}

/// LangChain's `tool_calls` (`{name, args, id}`) as Chat's.
fn lc_calls(kwargs: &Value) -> Value {
    let calls: Vec<Value> = kwargs
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            serde_json::json!({"id": c.get("id"), "type": "function",
                "function": {"name": c.get("name"), "arguments": c.get("args").map(Value::to_string)}})
        })
        .collect();
    if calls.is_empty() {
        kwargs
            .pointer("/additional_kwargs/tool_calls")
            .cloned()
            .unwrap_or(Value::Null)
    } else {
        Value::Array(calls)
    }
}

fn messages(v: Option<&Value>) -> Vec<Message> {
    let mut list: Vec<Value> = v.and_then(Value::as_array).cloned().unwrap_or_default();
    // LangChain batches: a list of conversations; the first is this run's.
    if list.first().is_some_and(Value::is_array) {
        list = list[0].as_array().cloned().unwrap_or_default();
    }
    list.iter()
        .map(langchain)
        .filter_map(|m| read_message(&m))
        .collect()
}

/// The run's answer: LangChain's generation, or a provider's response body as the core reads
/// it (its format, stop reason and anomalies kept).
fn answer(outputs: &Value) -> Response {
    if let Some(message) = outputs.pointer("/generations/0/0/message") {
        if let Some(message) = read_message(&langchain(message))
            .filter(|m| m.role == Role::Assistant)
        {
            return reply(joined(&message.text), message.calls);
        }
    }
    if outputs.is_object() && !outputs.as_object().is_some_and(|o| o.is_empty()) {
        if let Ok(response) = Response::from_value(outputs, None) {
            return response;
        }
    }
    reply(None, Vec::new())
}
