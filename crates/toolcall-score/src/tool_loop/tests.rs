//! Unit tests of the state machine on hand-built responses (the wire-format round trips are in
//! `tests/integration/tool_loop.rs`).

use serde_json::json;

use super::{LoopPolicy, Outcome, Reply, Step, ToolLoop};
use crate::{Anomaly, AnomalyKind, Arguments, Catalog, Format, Response, Tool, ToolCall};

fn catalog() -> Catalog {
    Catalog::new([
        Tool::new("get_invoice", "One invoice by id."),
        Tool::new("get_balance", "Current balance."),
    ])
}

fn guard(policy: LoopPolicy) -> ToolLoop {
    ToolLoop::new(catalog(), policy)
}

fn calls(format: Format, calls: &[(Option<&str>, &str)]) -> Response {
    let mut response = Response::empty(format);
    response.calls = calls
        .iter()
        .map(|(id, name)| ToolCall::new(*id, name, json!({})))
        .collect();
    response
}

fn text(format: Format) -> Response {
    let mut response = Response::empty(format);
    response.text.push("done".into());
    response
}

#[track_caller]
fn expect_continue(step: Step) -> super::PendingResults {
    match step {
        Step::Continue(pending) => pending,
        Step::Done(end) => panic!("expected the turn to go on, it ended: {}", end.outcome),
    }
}

#[track_caller]
fn expect_done(step: Step) -> super::TurnEnd {
    match step {
        Step::Done(end) => end,
        Step::Continue(pending) => panic!("expected the end, got {} calls", pending.calls().len()),
    }
}

#[test]
fn a_text_answer_finishes_the_turn() {
    let mut guard = guard(LoopPolicy::default());
    let end = expect_done(guard.step(text(Format::Anthropic)));
    assert_eq!(end.outcome, Outcome::Finished);
    assert_eq!(end.text(), "done");
    assert_eq!(end.closing, None);
    assert_eq!(guard.metrics().turn().steps(), 1);
}

#[test]
fn unknown_error_text_names_the_tool_suggestion_and_alternatives_by_policy() {
    let mut with = guard(LoopPolicy::default());
    let pending =
        expect_continue(with.step(calls(Format::Anthropic, &[(Some("t1"), "get_invoicez")])));
    let results = pending.answer_with(|_| unreachable!("nothing to execute"));
    let text = &results.results()[0].content;
    assert!(
        text.contains("no tool named `get_invoicez` exists"),
        "{text}"
    );
    assert!(
        text.contains("Available tools: get_invoice, get_balance."),
        "{text}"
    );

    let mut without = guard(LoopPolicy {
        list_available_in_errors: false,
        ..LoopPolicy::default()
    });
    let pending =
        expect_continue(without.step(calls(Format::Anthropic, &[(Some("t1"), "get_invoicez")])));
    let results = pending.answer_with(|_| unreachable!("nothing to execute"));
    assert_eq!(
        results.results()[0].content,
        "Error: no tool named `get_invoicez` exists."
    );
}

#[test]
fn a_name_full_of_control_characters_is_escaped_in_the_error() {
    let mut guard = guard(LoopPolicy::default());
    let pending =
        expect_continue(guard.step(calls(Format::OpenaiChat, &[(Some("c"), "x\u{1b}[2J")])));
    let results = pending.answer_with(|_| unreachable!());
    assert!(results.results()[0].content.contains("`x\\u{1b}[2J`"));
    // The metrics keep the name as the model wrote it.
    assert_eq!(
        guard.metrics().turn().unknown_names().next(),
        Some(("x\u{1b}[2J", 1))
    );
}

#[test]
fn the_second_unknown_call_of_a_turn_escalates() {
    let mut guard = guard(LoopPolicy::default());
    let first = expect_continue(guard.step(calls(Format::Anthropic, &[(Some("t1"), "ghost")])));
    let _ = first.answer_with(|_| unreachable!());
    let end = expect_done(guard.step(calls(
        Format::Anthropic,
        &[(Some("t2"), "get_balance"), (Some("t3"), "phantom")],
    )));
    assert_eq!(
        end.outcome,
        Outcome::UnknownToolEscalation {
            names: vec!["ghost".into(), "phantom".into()]
        }
    );
    // The calls of the escalating response are answered for the history, none executed.
    let closing = end.closing.expect("calls to close");
    let errors: Vec<_> = closing.results().iter().map(|r| r.is_error).collect();
    assert_eq!(errors, [true, true]);
    assert!(closing.results()[0].content.contains("not run"));
    assert!(closing.results()[1]
        .content
        .contains("no tool named `phantom`"));

    // A new turn starts from zero.
    let pending = expect_continue(guard.step(calls(Format::Anthropic, &[(Some("t4"), "ghost")])));
    let _ = pending.answer_with(|_| unreachable!());
    assert_eq!(guard.metrics().turns(), 2);
    assert_eq!(guard.metrics().turn().unknown_calls(), 1);
    assert_eq!(guard.metrics().total().unknown_calls(), 3);
}

#[test]
fn escalation_threshold_follows_the_policy() {
    let mut never = guard(LoopPolicy {
        max_unknown_per_turn: usize::MAX,
        max_steps: 100,
        ..LoopPolicy::default()
    });
    for i in 0..50 {
        let id = format!("t{i}");
        let pending =
            expect_continue(never.step(calls(Format::OpenaiChat, &[(Some(&id), "ghost")])));
        let _ = pending.answer_with(|_| unreachable!());
    }
    assert_eq!(never.metrics().turn().unknown_calls(), 50);
    assert_eq!(never.metrics().turn().distinct_unknown_names(), 1);

    let mut first = guard(LoopPolicy {
        max_unknown_per_turn: 1,
        ..LoopPolicy::default()
    });
    let end = expect_done(first.step(calls(Format::OpenaiChat, &[(Some("a"), "ghost")])));
    assert!(matches!(end.outcome, Outcome::UnknownToolEscalation { .. }));

    // 0 cannot escalate a turn without unknown calls.
    let mut zero = guard(LoopPolicy {
        max_unknown_per_turn: 0,
        ..LoopPolicy::default()
    });
    let pending =
        expect_continue(zero.step(calls(Format::OpenaiChat, &[(Some("a"), "get_balance")])));
    assert_eq!(pending.execute().len(), 1);
}

#[test]
fn the_step_budget_ends_the_turn_before_running_tools_no_one_will_read() {
    let mut guard = guard(LoopPolicy {
        max_steps: 3,
        ..LoopPolicy::default()
    });
    for i in 0..2 {
        let id = format!("c{i}");
        let pending =
            expect_continue(guard.step(calls(Format::OpenaiChat, &[(Some(&id), "get_balance")])));
        let _ = pending.answer_with(|_| Ok(json!(1)));
    }
    let end = expect_done(guard.step(calls(Format::OpenaiChat, &[(Some("c2"), "get_balance")])));
    assert_eq!(end.outcome, Outcome::StepBudgetExhausted { steps: 3 });
    let closing = end.closing.expect("the call is closed");
    assert_eq!(closing.messages()[0]["tool_call_id"], "c2");
    assert!(closing.results()[0]
        .content
        .contains("step budget exhausted"));

    // The last response of the budget may still finish the turn.
    let mut guard = super::ToolLoop::new(
        catalog(),
        LoopPolicy {
            max_steps: 1,
            ..LoopPolicy::default()
        },
    );
    assert!(expect_done(guard.step(text(Format::OpenaiChat)))
        .outcome
        .is_finished());
}

#[test]
fn invalid_arguments_are_answered_by_the_loop_and_not_executed() {
    let mut guard = guard(LoopPolicy::default());
    let mut response = calls(
        Format::OpenaiChat,
        &[(Some("a"), "get_balance"), (Some("b"), "get_invoice")],
    );
    response.calls[0].arguments = Arguments::from_json_text("{\"account");
    let pending = expect_continue(guard.step(response));
    let executed: Vec<_> = pending.execute().map(|c| c.name.clone()).collect();
    assert_eq!(executed, ["get_invoice"]);
    let results = pending.answer_with(|_| Ok(json!("ok")));
    assert!(results.results()[0].is_error);
    assert!(results.results()[0].content.contains("not valid JSON"));
    assert_eq!(results.results()[1].content, "ok");
    assert_eq!(guard.metrics().turn().invalid_arguments(), 1);
    assert_eq!(guard.metrics().turn().unknown_calls(), 0);
}

#[test]
fn provider_reported_malformed_calls_end_the_turn() {
    let mut guard = guard(LoopPolicy::default());
    let mut response = Response::empty(Format::Gemini);
    response.anomalies.push(Anomaly {
        kind: AnomalyKind::MalformedCall,
        detail: "finishReason MALFORMED_FUNCTION_CALL".into(),
    });
    let end = expect_done(guard.step(response));
    match &end.outcome {
        Outcome::MalformedResponse { reason } => {
            assert!(reason.contains("MALFORMED_FUNCTION_CALL"))
        }
        other => panic!("unexpected outcome {other}"),
    }
    assert!(end.response.is_some());
    assert_eq!(end.closing, None);
}

#[test]
fn a_call_without_the_id_its_format_needs_is_malformed() {
    for format in [
        Format::Anthropic,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Bedrock,
    ] {
        let mut guard = guard(LoopPolicy::default());
        let end = expect_done(guard.step(calls(
            format,
            &[(Some("a"), "get_balance"), (None, "get_invoice")],
        )));
        match &end.outcome {
            Outcome::MalformedResponse { reason } => {
                assert!(
                    reason.contains("call #2 (`get_invoice`) has no id"),
                    "{reason}"
                );
            }
            other => panic!("{format}: unexpected outcome {other}"),
        }
    }
}

#[test]
fn formats_without_ids_are_answered_in_order() {
    for format in [Format::Gemini, Format::Ollama, Format::CallList] {
        let mut guard = guard(LoopPolicy::default());
        let pending = expect_continue(guard.step(calls(
            format,
            &[(None, "get_balance"), (None, "nope"), (None, "get_balance")],
        )));
        let mut n = 0;
        let results = pending.answer_with(|_| {
            n += 1;
            Ok(json!(n))
        });
        let contents: Vec<_> = results
            .results()
            .iter()
            .map(|r| r.content.clone())
            .collect();
        assert_eq!(contents[0], "1", "{format}");
        assert!(contents[1].contains("`nope`"), "{format}");
        assert_eq!(contents[2], "2", "{format}");
        assert!(results.results().iter().all(|r| r.call_id.is_none()));
    }
}

#[test]
fn a_reply_that_does_not_parse_is_a_malformed_response_not_a_panic() {
    let mut guard = guard(LoopPolicy::default());
    let end = expect_done(guard.step(Reply::json(json!({"choices": 7}), Format::OpenaiChat)));
    assert!(
        matches!(end.outcome, Outcome::MalformedResponse { .. }),
        "{}",
        end.outcome
    );
    assert_eq!(end.response, None);
    assert_eq!(guard.metrics().turn().steps(), 1);
}

#[test]
fn reset_turn_abandons_the_turn_but_keeps_the_totals() {
    let mut guard = guard(LoopPolicy::default());
    let pending = expect_continue(guard.step(calls(Format::Anthropic, &[(Some("a"), "ghost")])));
    drop(pending);
    guard.reset_turn();
    // Without the reset this second unknown call would escalate.
    let pending = expect_continue(guard.step(calls(Format::Anthropic, &[(Some("b"), "ghost")])));
    let _ = pending.answer_with(|_| unreachable!());
    assert_eq!(guard.metrics().turns(), 2);
    assert_eq!(guard.metrics().total().unknown_calls(), 2);
}

#[test]
fn huge_catalogs_are_listed_with_a_cut() {
    let tools = (0..120).map(|i| Tool::new(&format!("tool_{i:03}"), ""));
    let mut guard = ToolLoop::new(Catalog::new(tools), LoopPolicy::default());
    let pending = expect_continue(guard.step(calls(Format::Anthropic, &[(Some("a"), "ghost")])));
    let results = pending.answer_with(|_| unreachable!());
    let content = &results.results()[0].content;
    assert!(content.contains("tool_049 and 70 more."), "{content}");
    assert!(!content.contains("tool_050"), "{content}");
}

#[test]
fn namespaced_responses_calls_resolve_like_the_scorer() {
    let catalog = Catalog::new([Tool::new("billing__get_balance", "")]);
    let mut guard = ToolLoop::new(catalog, LoopPolicy::default());
    let mut response = calls(
        Format::OpenaiResponses,
        &[(Some("fc_1"), "get_balance"), (Some("fc_2"), "get_balance")],
    );
    response.calls[0].namespace = Some("billing".into());
    let pending = expect_continue(guard.step(response));
    let executed: Vec<_> = pending.execute().map(|c| c.name.as_str()).collect();
    assert_eq!(executed, ["billing__get_balance"]);
    let results = pending.answer_with(|_| Ok(json!("12")));
    assert_eq!(results.messages()[0]["call_id"], "fc_1");
    assert_eq!(results.messages()[0]["output"], "12");
    // Without the namespace, the bare name is unknown.
    assert_eq!(results.messages()[1]["call_id"], "fc_2");
    assert!(results.results()[1].is_error);
    assert_eq!(guard.metrics().turn().unknown_calls(), 1);
}
