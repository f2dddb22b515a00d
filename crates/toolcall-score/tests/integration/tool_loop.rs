//! The loop guard end to end: a scripted transport plays the model, `run_turn` plays the agent, and
//! the tests assert on exactly the JSON the loop sent back.

use std::cell::RefCell;

use serde_json::{json, Value};
use toolcall_score::tool_loop::{
    Handlers, LoopPolicy, Outcome, Outgoing, RunError, ScriptExhausted, ScriptedTransport,
    ToolLoop, ToolResults,
};
use toolcall_score::{Catalog, Format, Response, Tool, ToolCall};

fn catalog() -> Catalog {
    Catalog::new([
        Tool::new("get_balance", "Current balance of an account."),
        Tool::new("get_invoice", "One invoice by id."),
    ])
}

/// A response carrying these calls (id, name), arguments `{"n": i}`.
fn calls(format: Format, calls: &[(Option<&str>, &str)]) -> Response {
    let mut response = Response::empty(format);
    response.calls = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name))| ToolCall::new(*id, name, json!({ "n": i })))
        .collect();
    response
}

fn call(format: Format, id: &str, name: &str) -> Response {
    calls(format, &[(Some(id), name)])
}

fn answer(format: Format, text: &str) -> Response {
    let mut response = Response::empty(format);
    response.text.push(text.to_owned());
    response
}

/// Handlers for the catalog that log every call they run.
fn handlers(log: &RefCell<Vec<(String, Value)>>) -> Handlers<'_> {
    Handlers::default()
        .with("get_balance", |args| {
            log.borrow_mut().push(("get_balance".into(), args.clone()));
            Ok(json!({"balance": 12}))
        })
        .with("get_invoice", |args| {
            log.borrow_mut().push(("get_invoice".into(), args.clone()));
            Err("invoice service unavailable".to_owned())
        })
}

#[track_caller]
fn results(transport: &ScriptedTransport, request: usize) -> &ToolResults {
    match transport.sent().get(request) {
        Some(Outgoing::ToolResults(results)) => results,
        other => panic!("request #{request} is not tool results: {other:?}"),
    }
}

mod canonical {
    //! The model calls an undefined tool, then answers in text: the second request carries an
    //! error result for that call's id, the turn ends normally, one unknown call is counted.

    use super::*;

    /// Runs the canonical turn in `format`; returns the second request's messages.
    fn run(format: Format, id: Option<&str>) -> Vec<Value> {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            calls(format, &[(id, "get_invoices")]),
            answer(format, "I cannot list invoices, but I can fetch one by id."),
        ]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("the turn runs");

        assert_eq!(end.outcome, Outcome::Finished, "{format}");
        assert_eq!(
            end.text(),
            "I cannot list invoices, but I can fetch one by id."
        );
        assert_eq!(end.closing, None);
        assert_eq!(transport.sent().len(), 2, "{format}");
        assert_eq!(transport.sent()[0], Outgoing::TurnStart);
        assert_eq!(transport.remaining(), 0);
        assert!(
            log.borrow().is_empty(),
            "no handler runs for an unknown tool"
        );
        let metrics = guard.metrics();
        assert_eq!(metrics.turn().unknown_calls(), 1, "{format}");
        assert_eq!(metrics.turn().steps(), 2);
        assert_eq!(
            metrics.turn().unknown_names().collect::<Vec<_>>(),
            [("get_invoices", 1)]
        );
        let sent = results(&transport, 1);
        assert_eq!(sent.format(), format);
        assert_eq!(sent.results().len(), 1);
        assert!(sent.results()[0].is_error);
        sent.messages().to_vec()
    }

    const ERROR: &str = "Error: no tool named `get_invoices` exists. Did you mean `get_invoice`? \
                         Available tools: get_balance, get_invoice.";

    #[test]
    fn anthropic() {
        assert_eq!(
            run(Format::Anthropic, Some("toolu_01")),
            [json!({"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": "toolu_01",
                "content": ERROR, "is_error": true
            }]})]
        );
    }

    #[test]
    fn openai_chat() {
        assert_eq!(
            run(Format::OpenaiChat, Some("call_abc")),
            [json!({"role": "tool", "tool_call_id": "call_abc", "content": ERROR})]
        );
    }

    #[test]
    fn openai_responses() {
        assert_eq!(
            run(Format::OpenaiResponses, Some("call_abc")),
            [json!({"type": "function_call_output", "call_id": "call_abc", "output": ERROR})]
        );
    }

    #[test]
    fn gemini_with_and_without_an_id() {
        assert_eq!(
            run(Format::Gemini, Some("fc_1")),
            [json!({"role": "user", "parts": [{"functionResponse": {
                "name": "get_invoices", "id": "fc_1", "response": {"error": ERROR}
            }}]})]
        );
        assert_eq!(
            run(Format::Gemini, None),
            [json!({"role": "user", "parts": [{"functionResponse": {
                "name": "get_invoices", "response": {"error": ERROR}
            }}]})]
        );
    }

    #[test]
    fn bedrock() {
        assert_eq!(
            run(Format::Bedrock, Some("tooluse_1")),
            [json!({"role": "user", "content": [{"toolResult": {
                "toolUseId": "tooluse_1", "content": [{"text": ERROR}], "status": "error"
            }}]})]
        );
    }

    #[test]
    fn ollama() {
        assert_eq!(
            run(Format::Ollama, None),
            [json!({"role": "tool", "tool_name": "get_invoices", "content": ERROR})]
        );
    }

    #[test]
    fn call_list() {
        assert_eq!(
            run(Format::CallList, None),
            [json!({"name": "get_invoices", "isError": true,
                    "content": [{"type": "text", "text": ERROR}]})]
        );
    }
}

mod escalation {
    use super::*;

    #[test]
    fn the_second_unknown_name_ends_the_turn_without_another_request() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            call(Format::Anthropic, "toolu_1", "search_invoices"),
            call(Format::Anthropic, "toolu_2", "list_invoices"),
            answer(Format::Anthropic, "never reached"),
        ]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("the turn runs");

        assert_eq!(
            end.outcome,
            Outcome::UnknownToolEscalation {
                names: vec!["search_invoices".into(), "list_invoices".into()]
            }
        );
        // One error went back for the first name; none for the second.
        assert_eq!(transport.sent().len(), 2);
        assert_eq!(transport.remaining(), 1);
        assert_eq!(
            results(&transport, 1).messages()[0]["content"][0]["tool_use_id"],
            "toolu_1"
        );
        // The escalating call is answered for the history, not sent.
        let closing = end.closing.expect("the unanswered call is closed");
        assert_eq!(
            closing.messages()[0]["content"][0]["tool_use_id"],
            "toolu_2"
        );
        assert_eq!(closing.messages()[0]["content"][0]["is_error"], true);
        assert_eq!(guard.metrics().turn().unknown_calls(), 2);
        assert_eq!(guard.metrics().turn().distinct_unknown_names(), 2);
    }

    #[test]
    fn retrying_the_same_unknown_name_escalates_too() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            call(Format::OpenaiChat, "c1", "lookup_customer"),
            call(Format::OpenaiChat, "c2", "lookup_customer"),
            answer(Format::OpenaiChat, "never reached"),
        ]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("the turn runs");
        assert_eq!(
            end.outcome,
            Outcome::UnknownToolEscalation {
                names: vec!["lookup_customer".into()]
            }
        );
        assert_eq!(
            guard.metrics().turn().unknown_names().collect::<Vec<_>>(),
            [("lookup_customer", 2)]
        );
        assert_eq!(transport.remaining(), 1);
    }

    #[test]
    fn the_count_is_per_turn() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            call(Format::OpenaiChat, "c1", "ghost"),
            answer(Format::OpenaiChat, "first turn done"),
            call(Format::OpenaiChat, "c2", "ghost"),
            answer(Format::OpenaiChat, "second turn done"),
        ]);
        let log = RefCell::new(Vec::new());
        let mut handlers = handlers(&log);
        for expected in ["first turn done", "second turn done"] {
            let end = guard.run_turn(&mut transport, &mut handlers).expect("runs");
            assert_eq!(end.outcome, Outcome::Finished);
            assert_eq!(end.text(), expected);
        }
        assert_eq!(guard.metrics().turns(), 2);
        assert_eq!(guard.metrics().turn().unknown_calls(), 1);
        assert_eq!(guard.metrics().total().unknown_calls(), 2);
        assert_eq!(guard.metrics().total().steps(), 4);
    }
}

#[test]
fn the_step_budget_is_respected() {
    let policy = LoopPolicy {
        max_steps: 3,
        ..LoopPolicy::default()
    };
    let mut guard = ToolLoop::new(catalog(), policy);
    let script: Vec<Response> = (0..6)
        .map(|i| call(Format::OpenaiChat, &format!("c{i}"), "get_balance"))
        .collect();
    let mut transport = ScriptedTransport::new(script);
    let log = RefCell::new(Vec::new());
    let end = guard
        .run_turn(&mut transport, &mut handlers(&log))
        .expect("the turn runs");

    assert_eq!(end.outcome, Outcome::StepBudgetExhausted { steps: 3 });
    assert_eq!(transport.sent().len(), 3, "three requests, three responses");
    assert_eq!(transport.remaining(), 3);
    assert_eq!(
        log.borrow().len(),
        2,
        "the third response's call is not run: nobody would read its result"
    );
    let closing = end.closing.expect("closed");
    assert_eq!(closing.messages()[0]["tool_call_id"], "c2");
    assert_eq!(guard.metrics().turn().steps(), 3);
}

#[test]
fn parallel_calls_mixing_known_and_unknown_are_all_answered_in_order() {
    let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
    let mut transport = ScriptedTransport::new([
        calls(
            Format::OpenaiChat,
            &[
                (Some("c1"), "get_balance"),
                (Some("c2"), "get_ballance"),
                (Some("c3"), "get_invoice"),
                (Some("c4"), "get_balance"),
            ],
        ),
        answer(Format::OpenaiChat, "done"),
    ]);
    let log = RefCell::new(Vec::new());
    let end = guard
        .run_turn(&mut transport, &mut handlers(&log))
        .expect("the turn runs");
    assert_eq!(end.outcome, Outcome::Finished);

    assert_eq!(
        *log.borrow(),
        [
            ("get_balance".to_owned(), json!({"n": 0})),
            ("get_invoice".to_owned(), json!({"n": 2})),
            ("get_balance".to_owned(), json!({"n": 3})),
        ]
    );
    let sent = results(&transport, 1);
    let ids: Vec<&Value> = sent.messages().iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    assert_eq!(sent.messages()[0]["content"], "{\"balance\":12}");
    assert!(sent.messages()[1]["content"]
        .as_str()
        .unwrap()
        .starts_with("Error: no tool named `get_ballance` exists. Did you mean `get_balance`?"));
    assert_eq!(sent.messages()[2]["content"], "invoice service unavailable");
    let errors: Vec<bool> = sent.results().iter().map(|r| r.is_error).collect();
    assert_eq!(errors, [false, true, true, false]);
}

#[test]
fn handler_errors_are_marked_the_providers_way() {
    let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
    let mut transport = ScriptedTransport::new([
        calls(
            Format::Bedrock,
            &[(Some("t1"), "get_balance"), (Some("t2"), "get_invoice")],
        ),
        answer(Format::Bedrock, "done"),
    ]);
    let log = RefCell::new(Vec::new());
    guard
        .run_turn(&mut transport, &mut handlers(&log))
        .expect("runs");
    assert_eq!(
        results(&transport, 1).messages(),
        [json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "content": [{"json": {"balance": 12}}]}},
            {"toolResult": {"toolUseId": "t2", "content": [{"text": "invoice service unavailable"}],
                            "status": "error"}}
        ]})]
    );
}

mod ids {
    use super::*;

    #[test]
    fn duplicate_ids_are_answered_separately_and_reported() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            calls(
                Format::Anthropic,
                &[
                    (Some("toolu_x"), "get_balance"),
                    (Some("toolu_x"), "get_balance"),
                    (Some("toolu_x"), "ghost"),
                    (Some("toolu_y"), "get_balance"),
                ],
            ),
            answer(Format::Anthropic, "done"),
        ]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("runs");
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(log.borrow().len(), 3);

        let sent = results(&transport, 1);
        let blocks = sent.messages()[0]["content"]
            .as_array()
            .expect("content blocks");
        let ids: Vec<&Value> = blocks.iter().map(|b| &b["tool_use_id"]).collect();
        assert_eq!(ids, ["toolu_x", "toolu_x", "toolu_x", "toolu_y"]);
        assert_eq!(blocks[2]["is_error"], true);
        assert_eq!(sent.duplicate_ids(), ["toolu_x"]);
        assert_eq!(guard.metrics().turn().duplicate_ids(), 2);
    }

    #[test]
    fn missing_ids_are_answered_in_order_where_the_format_allows_them() {
        for format in [Format::Gemini, Format::Ollama] {
            let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
            let mut transport = ScriptedTransport::new([
                calls(
                    format,
                    &[
                        (None, "get_balance"),
                        (None, "ghost"),
                        (None, "get_invoice"),
                    ],
                ),
                answer(format, "done"),
            ]);
            let log = RefCell::new(Vec::new());
            let end = guard
                .run_turn(&mut transport, &mut handlers(&log))
                .expect("runs");
            assert_eq!(end.outcome, Outcome::Finished, "{format}");
            let sent = results(&transport, 1);
            let names: Vec<Option<&str>> =
                sent.results().iter().map(|r| r.name.as_deref()).collect();
            assert_eq!(
                names,
                [Some("get_balance"), Some("ghost"), Some("get_invoice")]
            );
            let errors: Vec<bool> = sent.results().iter().map(|r| r.is_error).collect();
            assert_eq!(errors, [false, true, true], "{format}");
            assert!(!sent.to_json().to_string().contains("\"id\""), "{format}");
        }
    }

    #[test]
    fn a_missing_id_where_the_format_needs_one_ends_the_turn_without_a_request() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            calls(
                Format::OpenaiChat,
                &[(Some("c1"), "get_balance"), (None, "get_balance")],
            ),
            answer(Format::OpenaiChat, "never reached"),
        ]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("runs");
        match end.outcome {
            Outcome::MalformedResponse { reason } => {
                assert!(
                    reason.contains("call #2 (`get_balance`) has no id"),
                    "{reason}"
                )
            }
            other => panic!("unexpected outcome {other}"),
        }
        assert!(log.borrow().is_empty());
        assert_eq!(transport.sent().len(), 1);
    }
}

mod scale {
    use super::*;

    const N: usize = 10_000;

    #[test]
    fn ten_thousand_calls_are_all_answered_in_order() {
        let ids: Vec<String> = (0..N).map(|i| format!("call_{i}")).collect();
        let mut script: Vec<(Option<&str>, &str)> = ids
            .iter()
            .map(|id| (Some(id.as_str()), "get_balance"))
            .collect();
        // One unknown call in the middle, and one id repeated at the end.
        script[N / 2].1 = "get_balanse";
        script[N - 1].0 = Some("call_0");

        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([
            calls(Format::OpenaiChat, &script),
            answer(Format::OpenaiChat, "done"),
        ]);
        let mut ran = 0usize;
        let mut handlers = Handlers::default()
            .with("get_balance", |args| {
                ran += 1;
                Ok(args["n"].clone())
            })
            .with("get_invoice", |_| Ok(json!(null)));
        let end = guard.run_turn(&mut transport, &mut handlers).expect("runs");
        drop(handlers);
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(ran, N - 1);

        let sent = results(&transport, 1);
        assert_eq!(sent.messages().len(), N);
        for (i, message) in sent.messages().iter().enumerate() {
            let id = if i == N - 1 { "call_0" } else { &ids[i] };
            assert_eq!(message["tool_call_id"], id, "answer #{i}");
            if i != N / 2 {
                assert_eq!(message["content"], i.to_string(), "answer #{i}");
            }
        }
        assert!(sent.results()[N / 2].is_error);
        assert_eq!(sent.duplicate_ids(), ["call_0"]);
        let metrics = guard.metrics().turn();
        assert_eq!(metrics.calls(), N);
        assert_eq!(metrics.unknown_calls(), 1);
        assert_eq!(metrics.duplicate_ids(), 1);
    }

    #[test]
    fn ten_thousand_distinct_unknown_names_escalate_with_every_call_closed() {
        let names: Vec<String> = (0..N).map(|i| format!("made_up_{i}")).collect();
        let ids: Vec<String> = (0..N).map(|i| format!("toolu_{i}")).collect();
        let script: Vec<(Option<&str>, &str)> = ids
            .iter()
            .zip(&names)
            .map(|(id, name)| (Some(id.as_str()), name.as_str()))
            .collect();
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([calls(Format::Anthropic, &script)]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("runs");
        match &end.outcome {
            Outcome::UnknownToolEscalation { names: got } => assert_eq!(*got, names),
            other => panic!("unexpected outcome {other}"),
        }
        let closing = end.closing.expect("closed");
        let blocks = closing.messages()[0]["content"].as_array().expect("blocks");
        assert_eq!(blocks.len(), N);
        assert_eq!(blocks[N - 1]["tool_use_id"], "toolu_9999");
        assert!(blocks[N - 1]["content"]
            .as_str()
            .unwrap()
            .contains("`made_up_9999`"));
        assert_eq!(guard.metrics().turn().distinct_unknown_names(), N);
    }
}

mod runner {
    use super::*;

    #[test]
    fn running_out_of_script_is_an_error_naming_the_request() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([call(Format::Anthropic, "t1", "get_balance")]);
        let log = RefCell::new(Vec::new());
        let error = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect_err("the script has one reply");
        match &error {
            RunError::Transport(exhausted) => assert_eq!(
                *exhausted,
                ScriptExhausted {
                    request: 2,
                    scripted: 1
                }
            ),
            other => panic!("unexpected error {other}"),
        }
        assert!(
            error
                .to_string()
                .contains("request #2 has no reply (1 scripted)"),
            "{error}"
        );
        // The abandoned turn does not leak into the next one.
        transport.push(answer(Format::Anthropic, "fresh"));
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("runs");
        assert_eq!(end.text(), "fresh");
        assert_eq!(guard.metrics().turn().steps(), 1);
    }

    #[test]
    fn catalog_tools_without_a_handler_fail_before_anything_is_sent() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([answer(Format::Anthropic, "hi")]);
        let mut handlers = Handlers::default().with("get_balance", |_| Ok(json!(1)));
        let error = guard
            .run_turn(&mut transport, &mut handlers)
            .expect_err("get_invoice has no handler");
        assert!(
            matches!(&error, RunError::MissingHandlers { names } if names == &["get_invoice"]),
            "{error}"
        );
        assert!(transport.sent().is_empty());
    }

    #[test]
    fn a_reply_that_does_not_parse_ends_the_turn_as_malformed() {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new([json!({"unexpected": "shape"})]);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("a bad reply is an outcome, not an error");
        assert!(
            matches!(end.outcome, Outcome::MalformedResponse { .. }),
            "{}",
            end.outcome
        );
        assert_eq!(end.response, None);
    }
}

mod wire {
    //! The same loop, fed the providers' own JSON bodies instead of hand-built responses.

    use super::*;
    use toolcall_score::tool_loop::Reply;

    fn run(
        script: Vec<Reply>,
    ) -> (
        ToolLoop,
        ScriptedTransport,
        toolcall_score::tool_loop::TurnEnd,
    ) {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new(script);
        let log = RefCell::new(Vec::new());
        let end = guard
            .run_turn(&mut transport, &mut handlers(&log))
            .expect("the turn runs");
        (guard, transport, end)
    }

    #[test]
    fn anthropic_canonical_from_json() {
        let (guard, transport, end) = run(vec![
            json!({
                "id": "msg_01", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "text", "text": "Let me look up the invoices."},
                    {"type": "tool_use", "id": "toolu_01A", "name": "get_invoices",
                     "input": {"account_id": "acc_771"}}
                ],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 310, "output_tokens": 54}
            })
            .into(),
            json!({
                "id": "msg_02", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "I can only fetch one invoice by id."}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 402, "output_tokens": 12}
            })
            .into(),
        ]);
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(end.text(), "I can only fetch one invoice by id.");
        let block = &results(&transport, 1).messages()[0]["content"][0];
        assert_eq!(block["tool_use_id"], "toolu_01A");
        assert_eq!(block["is_error"], true);
        assert_eq!(guard.metrics().turn().unknown_calls(), 1);
    }

    #[test]
    fn openai_chat_canonical_from_json() {
        let (guard, transport, end) = run(vec![
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null, "refusal": null,
                    "tool_calls": [{"id": "call_Xy1", "type": "function", "function": {
                        "name": "get_invoices", "arguments": "{\"account_id\":\"acc_771\"}"}}]
                }}]
            })
            .into(),
            json!({
                "id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "I can only fetch one invoice by id."
                }}]
            })
            .into(),
        ]);
        assert_eq!(end.outcome, Outcome::Finished);
        let sent = results(&transport, 1).messages();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["role"], "tool");
        assert_eq!(sent[0]["tool_call_id"], "call_Xy1");
        assert!(sent[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: no tool named `get_invoices` exists."));
        assert_eq!(guard.metrics().turn().unknown_calls(), 1);
    }

    #[test]
    fn openai_chat_arguments_that_are_not_json_are_answered_not_run() {
        let (guard, transport, end) = run(vec![
            json!({"object": "chat.completion", "choices": [{"index": 0,
                "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {
                    "name": "get_balance", "arguments": "{\"account_id\": \"acc_"}}]}}]})
            .into(),
            json!({"object": "chat.completion", "choices": [{"index": 0,
                "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]})
            .into(),
        ]);
        assert_eq!(end.outcome, Outcome::Finished);
        let sent = &results(&transport, 1).messages()[0];
        assert_eq!(sent["tool_call_id"], "call_1");
        assert!(sent["content"].as_str().unwrap().contains("not valid JSON"));
        assert_eq!(guard.metrics().turn().invalid_arguments(), 1);
    }

    #[test]
    fn gemini_parallel_calls_without_ids_from_json() {
        let (_, transport, end) = run(vec![
            json!({"candidates": [{"index": 0, "finishReason": "STOP", "content": {
            "role": "model", "parts": [
                {"functionCall": {"name": "get_balance", "args": {"account_id": "acc_771"}}},
                {"functionCall": {"name": "getBalance", "args": {"account_id": "acc_771"}}}
            ]}}]})
            .into(),
            json!({"candidates": [{"index": 0, "finishReason": "STOP", "content": {
                "role": "model", "parts": [{"text": "12.00 EUR"}]}}]})
            .into(),
        ]);
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(
            results(&transport, 1).messages(),
            [json!({"role": "user", "parts": [
                {"functionResponse": {"name": "get_balance",
                                      "response": {"output": {"balance": 12}}}},
                {"functionResponse": {"name": "getBalance", "response": {"error":
                    "Error: no tool named `getBalance` exists. Did you mean `get_balance`? \
                     Available tools: get_balance, get_invoice."}}}
            ]})]
        );
    }

    #[test]
    fn gemini_malformed_function_call_ends_the_turn() {
        let (_, transport, end) = run(vec![json!({"candidates": [{"index": 0,
            "content": {}, "finishReason": "MALFORMED_FUNCTION_CALL",
            "finishMessage": "Malformed function call: print(default_api.get_balance(account_id=\"acc_771\"))"
        }]})
        .into()]);
        match end.outcome {
            Outcome::MalformedResponse { reason } => {
                assert!(reason.contains("malformed call"), "{reason}")
            }
            other => panic!("unexpected outcome {other}"),
        }
        assert_eq!(transport.sent().len(), 1);
    }

    #[test]
    fn responses_bedrock_and_ollama_from_json() {
        let (_, transport, _) = run(vec![
            json!({"object": "response", "status": "completed", "output": [
                {"type": "function_call", "id": "fc_1", "call_id": "call_R1",
                 "name": "get_invoices", "arguments": "{}", "status": "completed"}]})
            .into(),
            json!({"object": "response", "status": "completed", "output": [
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "done", "annotations": []}]}]})
            .into(),
        ]);
        assert_eq!(results(&transport, 1).messages()[0]["call_id"], "call_R1");

        let (_, transport, _) = run(vec![
            json!({"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_B1", "name": "get_invoices", "input": {}}}]}},
                "stopReason": "tool_use"})
            .into(),
            json!({"output": {"message": {"role": "assistant", "content": [{"text": "done"}]}},
                   "stopReason": "end_turn"})
            .into(),
        ]);
        let result = &results(&transport, 1).messages()[0]["content"][0]["toolResult"];
        assert_eq!(result["toolUseId"], "tooluse_B1");
        assert_eq!(result["status"], "error");

        let (_, transport, _) = run(vec![
            json!({"model": "qwen3", "done": true, "message": {"role": "assistant",
                "content": "", "tool_calls": [{"function": {"name": "get_invoices",
                "arguments": {}}}]}})
            .into(),
            json!({"model": "qwen3", "done": true, "message": {"role": "assistant",
                "content": "done"}})
            .into(),
        ]);
        assert_eq!(
            results(&transport, 1).messages()[0]["tool_name"],
            "get_invoices"
        );
    }
}

mod custom_calls {
    //! OpenAI custom tools (free-text input): a known one is run like any other call, its handler
    //! given the text; an unknown one is answered with the error, in the item type its format
    //! pairs with the call.

    use super::*;

    fn catalog() -> Catalog {
        Catalog::new([
            Tool::new("get_balance", "Current balance of an account."),
            Tool::new("run_sql", "Runs one read-only SQL query."),
        ])
    }

    /// Runs one turn over `bodies`; returns what the handlers saw and the second request's
    /// messages.
    fn run(bodies: [Value; 2]) -> (Vec<(String, Value)>, Vec<Value>) {
        let mut guard = ToolLoop::new(catalog(), LoopPolicy::default());
        let mut transport = ScriptedTransport::new(bodies);
        let log = RefCell::new(Vec::new());
        let mut handlers = Handlers::default()
            .with("get_balance", |args| {
                log.borrow_mut().push(("get_balance".into(), args.clone()));
                Ok(json!({"balance": 12}))
            })
            .with("run_sql", |input| {
                log.borrow_mut().push(("run_sql".into(), input.clone()));
                Ok(json!("inv_9, inv_8"))
            });
        let end = guard.run_turn(&mut transport, &mut handlers).expect("runs");
        drop(handlers);
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(guard.metrics().turn().unknown_calls(), 1);
        assert_eq!(guard.metrics().turn().invalid_arguments(), 0);
        let sent = results(&transport, 1).messages().to_vec();
        (log.into_inner(), sent)
    }

    const ERROR: &str = "Error: no tool named `exec_sql` exists.";

    fn ran() -> Vec<(String, Value)> {
        vec![
            ("get_balance".into(), json!({"account_id": "acc_17"})),
            ("run_sql".into(), json!("SELECT id FROM invoices")),
        ]
    }

    #[test]
    fn responses_answers_a_custom_call_with_a_custom_tool_call_output() {
        let body = json!({"object": "response", "status": "completed", "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_balance",
             "arguments": "{\"account_id\": \"acc_17\"}"},
            {"type": "custom_tool_call", "id": "ctc_2", "call_id": "call_2", "name": "run_sql",
             "input": "SELECT id FROM invoices"},
            {"type": "custom_tool_call", "id": "ctc_3", "call_id": "call_3", "name": "exec_sql",
             "input": "SELECT 1"}
        ]});
        let done = json!({"object": "response", "status": "completed", "output": [
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}
        ]});
        let (log, sent) = run([body, done]);
        assert_eq!(log, ran());
        assert_eq!(sent.len(), 3);
        assert_eq!(
            sent[0],
            json!({"type": "function_call_output", "call_id": "call_1",
                   "output": "{\"balance\":12}"})
        );
        assert_eq!(
            sent[1],
            json!({"type": "custom_tool_call_output", "call_id": "call_2",
                   "output": "inv_9, inv_8"})
        );
        assert_eq!(sent[2]["type"], "custom_tool_call_output");
        assert_eq!(sent[2]["call_id"], "call_3");
        let error = sent[2]["output"].as_str().expect("a text output");
        assert!(error.starts_with(ERROR), "{error}");
        assert!(error.contains("Did you mean `run_sql`?"), "{error}");
    }

    #[test]
    fn chat_answers_a_custom_call_with_a_tool_message() {
        let body = json!({"object": "chat.completion", "choices": [{"index": 0,
        "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_balance", "arguments": "{\"account_id\": \"acc_17\"}"}},
            {"id": "call_2", "type": "custom",
             "custom": {"name": "run_sql", "input": "SELECT id FROM invoices"}},
            {"id": "call_3", "type": "custom",
             "custom": {"name": "exec_sql", "input": "SELECT 1"}}
        ]}}]});
        let done = json!({"object": "chat.completion", "choices": [{"index": 0,
            "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]});
        let (log, sent) = run([body, done]);
        assert_eq!(log, ran());
        assert_eq!(sent.len(), 3);
        assert_eq!(
            sent[1],
            json!({"role": "tool", "tool_call_id": "call_2", "content": "inv_9, inv_8"})
        );
        assert_eq!(sent[2]["role"], "tool");
        assert_eq!(sent[2]["tool_call_id"], "call_3");
        let error = sent[2]["content"].as_str().expect("a text content");
        assert!(error.starts_with(ERROR), "{error}");
    }
}

mod builtin_calls {
    //! The Responses API's built-in tools that the caller runs (`shell`, `apply_patch`,
    //! `computer`, `local_shell`): a declared one is run by the handler of its name, given the
    //! call's action; every one is answered with its own output item type, in the shape of the
    //! OpenAI SDK types (openai-python `types/responses/response_input_item_param.py`).

    use super::*;

    #[test]
    fn each_builtin_call_is_answered_with_its_own_output_item() {
        let catalog = Catalog::new([
            Tool::new("shell", ""),
            Tool::new("apply_patch", ""),
            Tool::new("computer", ""),
        ]);
        let mut guard = ToolLoop::new(catalog, LoopPolicy::default());
        let body = json!({"object": "response", "status": "completed", "output": [
            {"type": "shell_call", "id": "sh_1", "call_id": "call_1", "status": "completed",
             "action": {"commands": ["ls src"]}},
            {"type": "apply_patch_call", "id": "apc_2", "call_id": "call_2", "status": "completed",
             "operation": {"type": "delete_file", "path": "src/old.rs"}},
            {"type": "computer_call", "id": "cu_3", "call_id": "call_3", "status": "completed",
             "action": {"type": "screenshot"}, "pending_safety_checks": []},
            {"type": "local_shell_call", "id": "lsh_4", "call_id": "call_4", "status": "completed",
             "action": {"type": "exec", "command": ["rm", "-rf", "/"], "env": {}}}
        ]});
        let done = json!({"object": "response", "status": "completed", "output": [
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}
        ]});
        let mut transport = ScriptedTransport::new([body, done]);
        let screenshot = json!({"type": "computer_screenshot",
                                "image_url": "data:image/png;base64,iVBORw0KGgo="});
        let log = RefCell::new(Vec::new());
        let mut handlers = Handlers::default()
            .with("shell", |action| {
                log.borrow_mut().push(("shell".to_owned(), action.clone()));
                Ok(json!("lib.rs\nold.rs"))
            })
            .with("apply_patch", |operation| {
                log.borrow_mut()
                    .push(("apply_patch".to_owned(), operation.clone()));
                Err("src/old.rs: no such file".to_owned())
            })
            .with("computer", |action| {
                log.borrow_mut()
                    .push(("computer".to_owned(), action.clone()));
                Ok(screenshot.clone())
            });
        let end = guard.run_turn(&mut transport, &mut handlers).expect("runs");
        drop(handlers);
        assert_eq!(end.outcome, Outcome::Finished);
        assert_eq!(guard.metrics().turn().unknown_calls(), 1);
        assert_eq!(
            log.into_inner(),
            [
                ("shell".to_owned(), json!({"commands": ["ls src"]})),
                (
                    "apply_patch".to_owned(),
                    json!({"type": "delete_file", "path": "src/old.rs"})
                ),
                ("computer".to_owned(), json!({"type": "screenshot"})),
            ]
        );
        let sent = results(&transport, 1).messages();
        assert_eq!(sent.len(), 4);
        assert_eq!(
            sent[0],
            json!({"type": "shell_call_output", "call_id": "call_1", "output": [
                {"stdout": "lib.rs\nold.rs", "stderr": "",
                 "outcome": {"type": "exit", "exit_code": 0}}]})
        );
        assert_eq!(
            sent[1],
            json!({"type": "apply_patch_call_output", "call_id": "call_2", "status": "failed",
                   "output": "src/old.rs: no such file"})
        );
        assert_eq!(
            sent[2],
            json!({"type": "computer_call_output", "call_id": "call_3", "output": screenshot})
        );
        // Not declared: answered with the loop's error, still in the local shell's own item.
        assert_eq!(sent[3]["type"], "local_shell_call_output");
        assert_eq!(sent[3]["call_id"], "call_4");
        let error = sent[3]["output"].as_str().expect("a text output");
        assert!(
            error.starts_with("Error: no tool named `local_shell` exists."),
            "{error}"
        );
    }
}
