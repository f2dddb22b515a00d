//! The OpenAI Agents SDK's traces: spans whose `span_data.type` is `agent` (with its tools'
//! and handoffs' names), `function` (a tool the agent ran), `generation`, `response`,
//! `handoff`, `mcp_tools` — as the SDK's exporter posts them (`{"data": [{"object":
//! "trace.span", "id", "parent_id", "span_data": {…}}]}`) or as its test suite normalises them
//! (a tree of `{"type", "data", "children"}` under `{"workflow_name"}`).
//!
//! The spans do not tie a call to the generation that made it, so each `function` span is a
//! turn of one call, judged against the tools of the agent span it runs under. Those are names
//! only (arguments are not validated), and the SDK records no call ids. A handoff is recorded
//! by the agents it joins, not by the `transfer_to_…` name the model called: it is not judged.

use serde_json::Value;


use crate::model::{arguments_of, reply, call, tool};

use crate::{Catalog, Found, Records, Turn};

use super::{Groups, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "openai-agents",
    about: "OpenAI Agents SDK traces: exported trace.span lists ({\"data\": [...]}) or the \
            normalised span tree ({\"workflow_name\", \"children\"})",
    reads: Reads::Records {
        claims,
        turns,
        groups: Groups::File,
    },
};

fn is_tree(v: &Value) -> bool {
    v.get("workflow_name").is_some() && v.get("children").is_some_and(Value::is_array)
}

fn is_export(v: &Value) -> bool {
    v.get("data").and_then(Value::as_array).is_some_and(|items| {
        !items.is_empty()
            && items
                .iter()
                .all(|s| s.get("object").and_then(Value::as_str) == Some("trace.span"))
    })
}

fn claims(first: &Value) -> bool {
    match first {
        Value::Array(items) => items.first().is_some_and(is_tree),
        other => is_tree(other) || is_export(other),
    }
}

/// One span in tree form.
struct Node {
    kind: String,
    data: Value,
    id: String,
    children: Vec<Node>,
}

fn from_tree(v: &Value, path: &str) -> Node {
    Node {
        kind: v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: v.get("data").cloned().unwrap_or(Value::Null),
        id: path.to_owned(),
        children: v
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| from_tree(c, &format!("{path}.{i}")))
            .collect(),
    }
}

/// The exporter's flat list as trees, by `parent_id`.
fn from_export(spans: &[Value]) -> Vec<Node> {
    fn build(spans: &[Value], parent: Option<&str>) -> Vec<Node> {
        spans
            .iter()
            .filter(|s| s.get("parent_id").and_then(Value::as_str) == parent)
            .map(|s| {
                let id = s
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let data = s.get("span_data").cloned().unwrap_or(Value::Null);
                Node {
                    kind: data
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    children: build(spans, Some(&id)),
                    id,
                    data,
                }
            })
            .collect()
    }
    build(spans, None)
}

fn turns(records: &Records, found: &mut Found) {
    for (at, doc) in &records.values {
        let (trace, roots): (Option<String>, Vec<Node>) = if is_export(doc) {
            let spans = doc["data"].as_array().cloned().unwrap_or_default();
            let trace = spans
                .first()
                .and_then(|s| s.get("trace_id"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (trace, from_export(&spans))
        } else {
            let traces: Vec<&Value> = match doc {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            let mut roots = Vec::new();
            for (t, trace) in traces.iter().enumerate() {
                for (i, child) in trace
                    .get("children")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    roots.push(from_tree(child, &format!("span-{t}.{i}")));
                }
            }
            (None, roots)
        };
        for root in &roots {
            walk(at, root, None, trace.as_deref(), found);
        }
    }
}

fn walk(at: &str, node: &Node, agent: Option<&Node>, trace: Option<&str>, found: &mut Found) {
    match node.kind.as_str() {
        "agent" => {
            for child in &node.children {
                walk(at, child, Some(node), trace, found);
            }
            return;
        }
        "function" => {
            let catalog = match agent.and_then(|a| a.data.get("tools")).and_then(Value::as_array) {
                Some(tools) => Catalog::of(
                    tools
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|name| tool(name, None, None)),
                ),
                None => Catalog::NotRecorded,
            };
            let name = node
                .data
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let mut turn = Turn::at(format!("{at} (function span {})", node.id), node.id.clone());
            turn.trace = trace.map(str::to_owned);
            turn.name = agent
                .and_then(|a| a.data.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            turn.catalog = catalog;
            turn.response = reply(
                None,
                vec![call(None, name, arguments_of(node.data.get("input")))],
            );
            found.turns.push(turn);
        }
        _ => {}
    }
    for child in &node.children {
        walk(at, child, agent, trace, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand to the exporter's shape (no licensed recording of it was found): the
    /// same tree as the SDK's tests normalise, flat with ids and parent ids.
    #[test]
    fn the_exporters_flat_list_reads_as_its_tree() {
        let export = serde_json::json!({"data": [
            {"object": "trace.span", "id": "span_a", "trace_id": "trace_1", "parent_id": null,
             "span_data": {"type": "agent", "name": "triage", "tools": ["lookup"], "handoffs": []}},
            {"object": "trace.span", "id": "span_f", "trace_id": "trace_1", "parent_id": "span_a",
             "span_data": {"type": "function", "name": "lookpu", "input": "{\"q\": 1}"}}
        ]});
        let records = Records::parse(&export.to_string(), "x.json");
        assert!(claims(&records.values[0].1));
        let mut found = Found::default();
        turns(&records, &mut found);
        assert_eq!(found.turns.len(), 1);
        let turn = &found.turns[0];
        assert_eq!((turn.id.as_str(), turn.trace.as_deref()), ("span_f", Some("trace_1")));
        assert_eq!(turn.calls()[0].name, "lookpu");
        assert_eq!(turn.catalog, Catalog::of([tool("lookup", None, None)]));
    }
}
