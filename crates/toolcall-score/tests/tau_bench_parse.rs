//! The provider parsers over real data: 200 gpt-4o airline conversations from tau-bench (OpenAI
//! Chat message lists) and the 14 tools they were given.
//!
//! CI-only (feature `external-data`): the data lives outside the repository. Its directory is
//! `ATP_TAU_BENCH_DIR`, or `../shared/external/tau-bench-airline` beside the workspace; a wrong
//! or missing directory fails the run, it never skips it.

mod tau_bench_data;

use serde_json::{json, Value};
use tau_bench_data::read;
use toolcall_score::provider::{parse_request, parse_tools};
use toolcall_score::{Case, Catalog, Format, Role};

#[test]
fn the_tools_file_gives_14_tools_with_schemas() {
    let tools = parse_tools(&read("tools.json")).expect("tools.json parses");
    assert_eq!(tools.len(), 14);
    assert!(tools
        .iter()
        .all(|t| t.input_schema.is_some() && !t.description.is_empty()));
    assert!(tools.iter().any(|t| t.name == "book_reservation"));
}

#[test]
fn every_transcript_parses_with_all_1164_calls_answered() {
    let tools = read("tools.json");
    let catalog = Catalog::from_json(&tools).expect("tools.json parses");
    let trajectories = read("trajectories.json");
    let trajectories = trajectories.as_array().expect("an array of trajectories");
    assert_eq!(trajectories.len(), 200);

    let (mut calls, mut results, mut assistant_messages) = (0, 0, 0);
    for (i, trajectory) in trajectories.iter().enumerate() {
        let request = json!({"messages": trajectory["traj"].clone(), "tools": tools.clone()});
        let parsed =
            parse_request(&request, None).unwrap_or_else(|e| panic!("trajectory {i}: {e}"));
        // Only string arguments tell OpenAI Chat from Ollama: a conversation without calls has
        // nothing that names one format.
        let has_calls = parsed.transcript.calls().next().is_some();
        let format = has_calls.then_some(Format::OpenaiChat);
        assert_eq!(parsed.format, format, "trajectory {i}");
        assert_eq!(parsed.tools, catalog);
        assert!(parsed
            .system
            .as_deref()
            .is_some_and(|s| s.contains("Airline Agent Policy")));
        let transcript = &parsed.transcript;
        assistant_messages += transcript
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        for call in transcript.calls() {
            calls += 1;
            assert!(
                catalog.contains(&call.name),
                "trajectory {i}: {}",
                call.name
            );
            assert!(call.id.as_deref().is_some_and(|id| id.starts_with("call_")));
            assert!(
                matches!(call.arguments.value(), Some(Value::Object(_))),
                "trajectory {i}: {:?}",
                call.arguments
            );
        }
        // Every call is answered by a tool message echoing its id and name.
        let answered: Vec<(&str, &str)> = transcript
            .results()
            .map(|r| {
                (
                    r.call_id.as_deref().unwrap_or(""),
                    r.name.as_deref().unwrap_or(""),
                )
            })
            .collect();
        let asked: Vec<(&str, &str)> = transcript
            .calls()
            .map(|c| (c.id.as_deref().unwrap_or(""), c.name.as_str()))
            .collect();
        assert_eq!(answered, asked, "trajectory {i}");
        results += answered.len();
    }
    assert_eq!(calls, 1164);
    assert_eq!(results, 1164);
    assert_eq!(assistant_messages, 2454);
}

#[test]
fn a_trajectory_loads_as_a_case() {
    let trajectories = read("trajectories.json");
    let case = json!({"about": "tau-bench airline, task 0", "messages": trajectories[0]["traj"],
                      "tools": read("tools.json")});
    let case = Case::from_json_str(&case.to_string()).expect("loads");
    assert_eq!(case.request_format, Some(Format::OpenaiChat));
    assert_eq!(case.catalog.len(), 14);
    assert!(case.transcript.calls().count() > 0);
}

/// Every assistant turn with calls, as the Chat Completions body it came in: reading the text
/// (the typed single-pass reader) gives the same response as reading its parsed `Value` (the
/// general path), on all 1,164 real calls.
#[test]
fn response_bodies_read_the_same_from_text_and_from_values() {
    let trajectories = read("trajectories.json");
    let mut calls = 0;
    for trajectory in trajectories.as_array().expect("an array of trajectories") {
        let messages = trajectory["traj"].as_array().expect("`traj` messages");
        for message in messages {
            if message["role"] != "assistant"
                || message.get("tool_calls").is_none_or(Value::is_null)
            {
                continue;
            }
            let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
            let from_value = toolcall_score::Response::from_value(&body, None).expect("parses");
            let from_text =
                toolcall_score::Response::from_json_str(&body.to_string(), None).expect("parses");
            assert_eq!(from_text, from_value);
            calls += from_text.calls.len();
        }
    }
    assert_eq!(calls, 1164);
}
