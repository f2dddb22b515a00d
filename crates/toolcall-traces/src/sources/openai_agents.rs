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
//!
//! The spans are placed in their tree without recursion, in time linear in their number: an
//! export is the SDK's, or anyone's, and a chain of thousands of nested spans, a span that is
//! its own parent or two spans with one id must cost what their bytes cost, never the stack. A
//! span the tree cannot hold — a second span with an id already seen, a span without an id,
//! the spans of a parent cycle and those under them — is a named bad record; the rest of the
//! file is read. A span whose parent is not in the file (an export posted in batches) is read
//! as a root: its calls are counted, not judged, since the agent it ran under is unknown.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::{arguments_of, call, reply, tool};

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

static NULL: Value = Value::Null;

/// One span, in tree form: its children are indices into [`Tree::nodes`].
struct Node<'a> {
    kind: &'a str,
    data: &'a Value,
    id: String,
    children: Vec<usize>,
}

impl<'a> Node<'a> {
    /// A span of `kind` (its `type`), with its `data`.
    fn new(kind: Option<&'a Value>, data: Option<&'a Value>, id: String) -> Node<'a> {
        Node {
            kind: kind.and_then(Value::as_str).unwrap_or_default(),
            data: data.unwrap_or(&NULL),
            id,
            children: Vec::new(),
        }
    }
}

/// A document's spans as a forest, borrowed from the document.
#[derive(Default)]
struct Tree<'a> {
    nodes: Vec<Node<'a>>,
    roots: Vec<usize>,
}

/// The normalised trees (`{"type", "data", "children"}`), their spans named by their place
/// (`span-T.I.J…`).
fn from_trees<'a>(traces: &[&'a Value]) -> Tree<'a> {
    let mut tree = Tree::default();
    // (the span, its place, its parent's index)
    let mut stack: Vec<(&'a Value, String, Option<usize>)> = Vec::new();
    for (t, trace) in traces.iter().enumerate() {
        for (i, child) in children(trace).enumerate().rev() {
            stack.push((child, format!("span-{t}.{i}"), None));
        }
        while let Some((v, place, parent)) = stack.pop() {
            let index = tree.nodes.len();
            for (i, child) in children(v).enumerate().rev() {
                stack.push((child, format!("{place}.{i}"), Some(index)));
            }
            tree.nodes.push(Node::new(v.get("type"), v.get("data"), place));
            match parent {
                Some(p) => tree.nodes[p].children.push(index),
                None => tree.roots.push(index),
            }
        }
    }
    tree
}

fn children(v: &Value) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
    v.get("children")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
}

/// The exporter's flat list as a forest, by `parent_id`. A span without a (non-empty) string
/// `parent_id` is a root, and so is one whose parent is not in the list; a span that the tree
/// cannot hold is a bad record (see the module's doc).
fn from_export<'a>(spans: &'a [Value], at: &str, found: &mut Found) -> Tree<'a> {
    let mut tree = Tree::default();
    let mut by_id: HashMap<&'a str, usize> = HashMap::with_capacity(spans.len());
    // Each node's parent id, and where in the list it was.
    let mut parent_ids: Vec<Option<&'a str>> = Vec::with_capacity(spans.len());
    let mut places: Vec<usize> = Vec::with_capacity(spans.len());
    for (i, span) in spans.iter().enumerate() {
        let id = match span.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.as_str(),
            other => {
                let mut shown = other.map_or_else(|| "none".to_owned(), Value::to_string);
                if let Some((cut, _)) = shown.char_indices().nth(40) {
                    shown.truncate(cut);
                    shown.push('…');
                }
                found.bad(
                    format!("{at} (data[{i}])"),
                    format!(
                        "a span without an `id` (found {shown}): expected the span's id, which \
                         its children's `parent_id` names; the span is not read"
                    ),
                );
                continue;
            }
        };
        if let Some(&first) = by_id.get(id) {
            found.bad(
                format!("{at} (span {id}, data[{i}])"),
                format!(
                    "a second span with the id `{id}` (the first is data[{}]): a span id \
                     names one span; this one is not read",
                    places[first]
                ),
            );
            continue;
        }
        by_id.insert(id, tree.nodes.len());
        parent_ids.push(
            span.get("parent_id")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty()),
        );
        places.push(i);
        let data = span.get("span_data");
        let kind = data.and_then(|d| d.get("type"));
        tree.nodes.push(Node::new(kind, data, id.to_owned()));
    }
    let mut parents: Vec<Option<usize>> = Vec::with_capacity(tree.nodes.len());
    for (index, parent_id) in parent_ids.iter().enumerate() {
        let parent = parent_id.and_then(|p| by_id.get(p).copied());
        match parent {
            Some(p) => tree.nodes[p].children.push(index),
            None => tree.roots.push(index),
        }
        parents.push(parent);
    }
    unreachable_spans(&tree, &parents, &places, at, found);
    tree
}

/// Names the spans no root reaches: each parent cycle, with the spans under it, is one bad
/// record. Every span is looked at a bounded number of times: linear in the spans.
fn unreachable_spans(
    tree: &Tree<'_>,
    parents: &[Option<usize>],
    places: &[usize],
    at: &str,
    found: &mut Found,
) {
    let n = tree.nodes.len();
    let mut reached = vec![false; n];
    let mut stack: Vec<usize> = tree.roots.clone();
    while let Some(index) = stack.pop() {
        reached[index] = true;
        stack.extend(&tree.nodes[index].children);
    }
    // For each span not reached, its parents are followed up to a span already placed in a
    // cycle's group, or round a new cycle.
    const NONE: usize = usize::MAX;
    let mut group = vec![NONE; n];
    // Per group: its cycle (indices, in parent order) and how many spans it has.
    let mut groups: Vec<(Vec<usize>, usize)> = Vec::new();
    let mut on_path = vec![NONE; n];
    for start in 0..n {
        if reached[start] || group[start] != NONE {
            continue;
        }
        let mut path: Vec<usize> = Vec::new();
        let mut current = start;
        let g = loop {
            if group[current] != NONE {
                break group[current];
            }
            if on_path[current] != NONE {
                groups.push((path[on_path[current]..].to_vec(), 0));
                break groups.len() - 1;
            }
            on_path[current] = path.len();
            path.push(current);
            // Not reached, so not a root: it has a parent, itself not reached.
            match parents[current] {
                Some(parent) => current = parent,
                None => break NONE,
            }
        };
        if g == NONE {
            // (Cannot happen: a span no root reaches has a parent.)
            for &index in &path {
                on_path[index] = NONE;
            }
            continue;
        }
        for &index in &path {
            group[index] = g;
            groups[g].1 += 1;
        }
    }
    for (cycle, spans) in groups {
        let Some(&first) = cycle.iter().min() else {
            continue;
        };
        // The cycle from its first span in the list, as `parent_id` leads: a → b → a.
        let from = cycle.iter().position(|&i| i == first).unwrap_or(0);
        let mut shown: Vec<String> = cycle[from..]
            .iter()
            .chain(&cycle[..from])
            .take(4)
            .map(|&i| tree.nodes[i].id.clone())
            .collect();
        if cycle.len() > 4 {
            shown.push("…".to_owned());
        }
        shown.push(tree.nodes[first].id.clone());
        let under = spans - cycle.len();
        found.bad(
            format!("{at} (span {}, data[{}])", tree.nodes[first].id, places[first]),
            format!(
                "a parent cycle ({} by `parent_id`): {} span(s) in it{} are not read, since no \
                 agent span they ran under can be told",
                shown.join(" → "),
                cycle.len(),
                if under > 0 {
                    format!(" and {under} under it")
                } else {
                    String::new()
                },
            ),
        );
    }
}

fn turns(records: &Records, found: &mut Found) {
    for (at, doc) in &records.values {
        let (trace, tree) = if is_export(doc) {
            let spans = doc["data"].as_array().map_or(&[][..], Vec::as_slice);
            let trace = spans
                .first()
                .and_then(|s| s.get("trace_id"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (trace, from_export(spans, at, found))
        } else {
            let traces: Vec<&Value> = match doc {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            (None, from_trees(&traces))
        };
        walk(at, &tree, trace.as_deref(), found);
    }
}

/// Each `function` span under its nearest `agent` span, in the tree's order (depth first, a
/// span before its children, siblings in their order), without recursion.
fn walk(at: &str, tree: &Tree<'_>, trace: Option<&str>, found: &mut Found) {
    // The catalog of each agent span, built once for all the calls under it.
    let mut catalogs: HashMap<usize, Catalog> = HashMap::new();
    // (the span, its nearest agent span)
    let mut stack: Vec<(usize, Option<usize>)> =
        tree.roots.iter().rev().map(|&root| (root, None)).collect();
    while let Some((index, agent)) = stack.pop() {
        let node = &tree.nodes[index];
        let under = match node.kind {
            "agent" => Some(index),
            "function" => {
                let catalog = match agent {
                    Some(a) => catalogs
                        .entry(a)
                        .or_insert_with(|| agent_catalog(&tree.nodes[a]))
                        .clone(),
                    None => Catalog::NotRecorded,
                };
                let name = node
                    .data
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let mut turn =
                    Turn::at(format!("{at} (function span {})", node.id), node.id.clone());
                turn.trace = trace.map(str::to_owned);
                turn.name = agent
                    .and_then(|a| tree.nodes[a].data.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                turn.catalog = catalog;
                turn.response = reply(
                    None,
                    vec![call(None, name, arguments_of(node.data.get("input")))],
                );
                found.turns.push(turn);
                agent
            }
            _ => agent,
        };
        for &child in node.children.iter().rev() {
            stack.push((child, under));
        }
    }
}

/// The tools an agent span lists, by name.
fn agent_catalog(agent: &Node<'_>) -> Catalog {
    match agent.data.get("tools").and_then(Value::as_array) {
        Some(tools) => Catalog::of(
            tools
                .iter()
                .filter_map(Value::as_str)
                .map(|name| tool(name, None, None)),
        ),
        None => Catalog::NotRecorded,
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
