//! Real data: 200 gpt-4o airline conversations from tau-bench (1,164 tool calls, 14 tools, every
//! call valid). The scorer must report nothing on them, and exactly the calls to a tool once that
//! tool is removed from the catalog.
//!
//! CI-only tier (feature `external-data`); `tau_bench_data` says where the data is read from.
//! Run with `cargo test -p toolcall-score --features external-data,schema --test tau_bench`.

use std::collections::BTreeMap;

mod tau_bench_data;

use serde_json::{json, Value};
use tau_bench_data::read;
use toolcall_score::{score, Case, Catalog, FindingKind, Response, Verdict};

/// Every assistant turn that made tool calls, as (case, response): the request up to that turn,
/// with the tools that were sent, and the turn itself as a Chat Completions response.
fn turns(tools: &Value) -> Vec<(Case, Response)> {
    let trajectories = read("trajectories.json");
    let mut turns = Vec::new();
    for trajectory in trajectories.as_array().expect("a list of conversations") {
        let messages = trajectory["traj"]
            .as_array()
            .expect("each conversation has `traj`");
        for (i, message) in messages.iter().enumerate() {
            if message["role"] != "assistant"
                || message.get("tool_calls").is_none_or(Value::is_null)
            {
                continue;
            }
            let case = Case::from_value(&json!({"tools": tools, "messages": &messages[..i]}))
                .expect("the request parses");
            let body = json!({"object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]});
            let response = Response::from_value(&body, None).expect("the response parses");
            turns.push((case, response));
        }
    }
    turns
}

#[test]
fn every_real_call_passes() {
    let tools = read("tools.json");
    assert_eq!(Catalog::from_json(&tools).expect("tools parse").len(), 14);
    let turns = turns(&tools);
    let calls: usize = turns.iter().map(|(_, r)| r.calls.len()).sum();
    assert_eq!(calls, 1164);
    for (case, response) in &turns {
        let verdict = score(case, response);
        assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    }
}

#[test]
fn removing_a_tool_reports_exactly_the_calls_to_it() {
    let tools = read("tools.json");
    let catalog = Catalog::from_json(&tools).expect("tools parse");
    let turns = turns(&tools);
    // The most-called tool, counted from the parsed calls.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, response) in &turns {
        for call in &response.calls {
            *counts.entry(call.name.as_str()).or_default() += 1;
        }
    }
    let (&removed, &expected) = counts.iter().max_by_key(|(_, n)| **n).expect("calls");

    let reduced = catalog.without(removed);
    assert_eq!(reduced.len(), 13);
    let mut unknown = BTreeMap::<String, usize>::new();
    for (case, response) in &turns {
        let case = Case {
            catalog: reduced.clone(),
            ..case.clone()
        };
        let verdict: Verdict = score(&case, response);
        for finding in verdict.findings() {
            assert_eq!(finding.kind, FindingKind::UnknownTool, "{finding}");
            assert!(finding.location.starts_with("response call"), "{finding}");
            *unknown
                .entry(finding.name.clone().expect("a name"))
                .or_default() += 1;
        }
    }
    assert_eq!(unknown, BTreeMap::from([(removed.to_owned(), expected)]));
}
