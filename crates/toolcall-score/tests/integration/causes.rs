//! One test per cause, each built from the situation the cause describes, plus the other finding
//! kinds. Cases are written as users write them: provider JSON.

use serde_json::{json, Value};
use toolcall_score::{score, Case, Cause, Finding, FindingKind, Response, Verdict};

fn case(value: Value) -> Case {
    Case::from_value(&value).expect("the case parses")
}

fn anthropic_calls(calls: &[(&str, &str, Value)]) -> Response {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    let body = json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-20250514", "content": content,
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 412, "output_tokens": 61}
    });
    Response::from_value(&body, None).expect("the response parses")
}

fn anthropic_text(text: &str) -> Response {
    let body = json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 10}
    });
    Response::from_value(&body, None).expect("the response parses")
}

fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description,
           "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}}}})
}

fn only_unknown(verdict: &Verdict) -> &Finding {
    let unknown: Vec<&Finding> = verdict.unknown().collect();
    assert_eq!(unknown.len(), 1, "{:#?}", verdict.findings());
    unknown[0]
}

#[test]
fn retired_tool_still_in_the_transcript() {
    let case = case(json!({
        "system": "You are the billing assistant. Use get_balance for balances.",
        "tools": [tool("get_balance", "Current balance of an account.")],
        "messages": [
            {"role": "user", "content": "Any unpaid invoices on acc_771?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "search_invoices", "input": {"account_id": "acc_771"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "[]"}]},
            {"role": "user", "content": "And the unpaid ones on acc_772?"}
        ]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[(
            "toolu_02",
            "search_invoices",
            json!({"account_id": "acc_772"}),
        )]),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("search_invoices"));
    assert_eq!(finding.cause, Some(Cause::Retired));
    assert_eq!(verdict.fingerprint(), ["search_invoices (retired)"]);
}

#[test]
fn sub_agent_calls_one_of_its_planners_other_tools() {
    let planner: Vec<Value> = [
        "search_orders",
        "get_order",
        "issue_refund",
        "cancel_order",
        "update_address",
        "send_email",
        "create_ticket",
        "close_ticket",
        "get_customer",
        "update_customer",
        "list_shipments",
        "track_shipment",
    ]
    .iter()
    .map(|n| tool(n, "A tool of the planner."))
    .collect();
    let handed: Vec<Value> = planner[..4].to_vec();
    let case = case(json!({
        "system": "You are the refunds sub-agent. Handle the refund the planner delegated.",
        "tools": handed,
        "parent_tools": planner,
        "messages": [{"role": "user", "content": "Refund order ord_5521 and email the customer."}]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[
            ("toolu_01", "issue_refund", json!({"account_id": "a"})),
            ("toolu_02", "send_email", json!({"account_id": "a"})),
        ]),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("send_email"));
    assert_eq!(finding.cause, Some(Cause::Subset));
    assert_eq!(finding.location, "response call 2");
}

#[test]
fn namespace_prefix_added_and_removed() {
    let bare = case(json!({"tools": [tool("create_issue", "Open a GitHub issue.")]}));
    let verdict = score(
        &bare,
        &anthropic_calls(&[("toolu_01", "github__create_issue", json!({}))]),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.cause, Some(Cause::Namespace));
    assert_eq!(finding.suggestions(), ["create_issue"]);

    let prefixed = case(json!({"tools": [tool("github__create_issue", "Open a GitHub issue.")]}));
    for called in [
        "create_issue",
        "mcp__github__create_issue",
        "github.create_issue",
    ] {
        let verdict = score(
            &prefixed,
            &anthropic_calls(&[("toolu_01", called, json!({}))]),
        );
        let finding = only_unknown(&verdict);
        assert_eq!(finding.cause, Some(Cause::Namespace), "{called}");
        assert_eq!(finding.suggestions(), ["github__create_issue"], "{called}");
    }
}

#[test]
fn prompt_still_names_a_renamed_tool() {
    let case = case(json!({
        "system": "You are a support agent. Always use lookup_customer to find an account before answering.",
        "tools": [tool("find_customer", "Find a customer by email or phone.")],
        "messages": [{"role": "user", "content": "I'm jane@example.com, what plan am I on?"}]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "lookup_customer", json!({"account_id": "x"}))]),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.cause, Some(Cause::PromptDrift));
    assert_eq!(finding.suggestions(), ["find_customer"]);

    let drifts = toolcall_score::lint(&case);
    assert_eq!(drifts.len(), 1);
    assert_eq!(drifts[0].name, "lookup_customer");
    assert_eq!(drifts[0].suggestions, ["find_customer"]);
}

#[test]
fn name_only_in_prose_or_a_json_block_in_text() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let verdict = score(
        &case,
        &anthropic_text("I'll call check_overdraft now to see if you are overdrawn."),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("check_overdraft"));
    assert_eq!(finding.cause, Some(Cause::Prose));
    assert_eq!(finding.location, "response text 1");

    let block =
        "```json\n{\"name\": \"get_balances\", \"arguments\": {\"account_id\": \"acc_1\"}}\n```";
    let verdict = score(&case, &anthropic_text(block));
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("get_balances"));
    assert_eq!(finding.cause, Some(Cause::Prose));
    assert_eq!(finding.suggestions(), ["get_balance"]);

    // Mentioning a defined tool, or a parameter, is fine.
    let verdict = score(
        &case,
        &anthropic_text("I used get_balance with your account_id."),
    );
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
}

#[test]
fn pure_invention() {
    let case = case(json!({
        "system": "You are the billing assistant.",
        "tools": [tool("get_balance", "Current balance of an account.")],
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_weather", json!({"city": "Paris"}))]),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.cause, Some(Cause::Invented));
    assert!(
        finding.suggestions().is_empty(),
        "{:?}",
        finding.suggestions
    );
}

#[test]
fn defined_calls_pass() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance", json!({"account_id": "acc_1"}))]),
    );
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    assert_eq!(
        serde_json::to_value(&verdict).unwrap(),
        json!({"verdict": "pass", "findings": []})
    );
}

/// A GPT-5 Chat Completions response carrying these `(id, name, input)` custom tool calls.
fn chat_custom_calls(calls: &[(&str, &str, &str)]) -> Response {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, input)| {
            json!({"id": id, "type": "custom", "custom": {"name": name, "input": input}})
        })
        .collect();
    let body = json!({
        "id": "chatcmpl-C3pQ7", "object": "chat.completion", "created": 1755021244,
        "model": "gpt-5-2025-08-07",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": calls}}]
    });
    Response::from_value(&body, None).expect("the response parses")
}

/// A Chat Completions request defining `get_balance` and the custom tool `run_sql`.
fn custom_tools_case() -> Case {
    case(json!({
        "system": "You are the billing assistant.",
        "tools": [
            {"type": "function", "function": {"name": "get_balance", "description": "Current balance.",
             "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}}}},
            {"type": "custom", "custom": {"name": "run_sql", "description": "Runs one read-only SQL query.",
             "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: /SELECT .+/"}}}}
        ],
        "messages": [{"role": "user", "content": "Show the last invoices of acc_17."}]
    }))
}

#[test]
fn custom_call_to_an_undefined_tool_is_unknown() {
    let response = chat_custom_calls(&[("call_1", "exec_sql", "SELECT * FROM invoices")]);
    assert_eq!(response.calls.len(), 1);
    let verdict = score(&custom_tools_case(), &response);
    let finding = only_unknown(&verdict);
    assert_eq!(finding.kind, FindingKind::UnknownTool);
    assert_eq!(finding.name.as_deref(), Some("exec_sql"));
    assert_eq!(finding.call_id.as_deref(), Some("call_1"));
    assert_eq!(finding.cause, Some(Cause::Invented));
    assert_eq!(finding.suggestions(), ["run_sql"]);
    assert_eq!(verdict.findings().len(), 1, "{:#?}", verdict.findings());
}

#[test]
fn custom_call_to_a_retired_custom_tool_in_a_responses_transcript() {
    let case = case(json!({
        "instructions": "You are the billing assistant.",
        "tools": [{"type": "custom", "name": "query_db", "description": "Runs one read-only SQL query."}],
        "input": [
            {"role": "user", "content": "Last invoices of acc_17?"},
            {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "run_sql",
             "input": "SELECT id FROM invoices WHERE account_id = 'acc_17'"},
            {"type": "custom_tool_call_output", "call_id": "call_1", "output": "inv_9"},
            {"role": "user", "content": "And for acc_18?"}
        ]
    }));
    let body = json!({"object": "response", "status": "completed", "output": [
        {"type": "custom_tool_call", "id": "ctc_2", "call_id": "call_2", "name": "run_sql",
         "input": "SELECT id FROM invoices WHERE account_id = 'acc_18'"}
    ]});
    let verdict = score(&case, &Response::from_value(&body, None).unwrap());
    // The earlier custom call is answered by its output: no unanswered-call finding.
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("run_sql"));
    assert_eq!(finding.cause, Some(Cause::Retired));
    assert_eq!(verdict.findings().len(), 1, "{:#?}", verdict.findings());
    assert_eq!(verdict.fingerprint(), ["run_sql (retired)"]);
}

#[test]
fn custom_call_to_a_defined_custom_tool_passes() {
    // Free text that is not JSON, nor an object: neither is a finding for a custom tool.
    let response = chat_custom_calls(&[
        (
            "call_1",
            "run_sql",
            "SELECT id FROM invoices WHERE account_id = 'acc_17'",
        ),
        ("call_2", "run_sql", "\"acc_17\""),
    ]);
    assert_eq!(response.calls.len(), 2);
    let verdict = score(&custom_tools_case(), &response);
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
}

/// A Responses body whose one output item is `item` (a `shell_call`, say).
fn responses_output(item: Value) -> Response {
    let body = json!({"id": "resp_1", "object": "response", "status": "completed",
                      "model": "gpt-5.1", "output": [item]});
    Response::from_value(&body, None).expect("the response parses")
}

/// A Codex-style sub-agent that was handed only `read_file`, not the `shell` tool.
fn shell_case(tools: Value) -> Case {
    case(json!({
        "instructions": "You review diffs. Read files with read_file.",
        "tools": tools,
        "input": [{"role": "user", "content": "Review the change to src/lib.rs."}]
    }))
}

/// A `shell_call` is run by the caller's loop like a function call (openai-python
/// `types/responses/response_function_shell_tool_call.py`), so a model that was not given the
/// `shell` tool but emits one is an unknown tool, however the call is spelled.
#[test]
fn shell_call_without_the_shell_tool_is_unknown() {
    let read_file = json!({"type": "function", "name": "read_file", "description": "Reads a file.",
                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}});
    let shell_call = json!({"type": "shell_call", "id": "sh_1", "call_id": "call_1",
                            "action": {"commands": ["cat src/lib.rs"]}, "status": "completed"});
    let verdict = score(
        &shell_case(json!([read_file])),
        &responses_output(shell_call.clone()),
    );
    let finding = only_unknown(&verdict);
    assert_eq!(finding.name.as_deref(), Some("shell"));
    assert_eq!(finding.call_id.as_deref(), Some("call_1"));
    assert_eq!(verdict.findings().len(), 1, "{:#?}", verdict.findings());

    let given_shell = shell_case(json!([read_file, {"type": "shell"}]));
    let verdict = score(&given_shell, &responses_output(shell_call));
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
}

/// The computer-use tool is declared as `computer_use_preview` or (generally available)
/// `computer` (openai-python `types/responses/computer_use_preview_tool.py`, `computer_tool.py`);
/// either makes a `computer_call` defined.
#[test]
fn computer_call_is_defined_by_either_computer_tool() {
    let click = json!({"type": "computer_call", "id": "cu_1", "call_id": "call_1",
                       "action": {"type": "click", "button": "left", "x": 10, "y": 20},
                       "pending_safety_checks": [], "status": "completed"});
    for tool in [
        json!({"type": "computer_use_preview", "display_width": 1024, "display_height": 768,
               "environment": "browser"}),
        json!({"type": "computer"}),
    ] {
        let verdict = score(&shell_case(json!([tool])), &responses_output(click.clone()));
        assert!(verdict.is_pass(), "{tool}: {:#?}", verdict.findings());
    }
    let verdict = score(&shell_case(json!([])), &responses_output(click));
    assert_eq!(only_unknown(&verdict).name.as_deref(), Some("computer"));
}

/// Built-in calls in a Responses transcript are answered by their own output items; the local
/// shell's is keyed by `id` in the SDK types and by `call_id` in OpenAI's guide.
#[test]
fn builtin_calls_in_a_transcript_are_paired_with_their_outputs() {
    let calls = json!([
        {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "action": {"commands": ["ls"]}},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_ls", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call", "id": "lsh_2", "call_id": "call_ls2", "status": "completed",
         "action": {"type": "exec", "command": ["pwd"], "env": {}}},
        {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_ap", "status": "completed",
         "operation": {"type": "delete_file", "path": "old.rs"}},
        {"type": "computer_call", "id": "cu_1", "call_id": "call_cu", "status": "completed",
         "action": {"type": "screenshot"}, "pending_safety_checks": []}
    ]);
    let outputs = json!([
        {"type": "shell_call_output", "call_id": "call_sh",
         "output": [{"stdout": "lib.rs", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        {"type": "local_shell_call_output", "id": "call_ls", "output": "lib.rs"},
        {"type": "local_shell_call_output", "call_id": "call_ls2", "output": "/work"},
        {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed"},
        {"type": "computer_call_output", "call_id": "call_cu",
         "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA=="}}
    ]);
    let transcript = |outputs: &[Value]| {
        let mut input = vec![json!({"role": "user", "content": "Go."})];
        input.extend(calls.as_array().into_iter().flatten().cloned());
        input.extend(outputs.iter().cloned());
        case(json!({
            "tools": [{"type": "shell"}, {"type": "local_shell"}, {"type": "apply_patch"},
                      {"type": "computer"}],
            "input": input
        }))
    };
    let outputs = outputs.as_array().expect("an array");
    let answered = transcript(outputs);
    assert_eq!(answered.transcript.calls().count(), 5);
    let shell_output = answered.transcript.results().next().expect("a result");
    assert_eq!(shell_output.content, "lib.rs");
    let done = responses_output(json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Done."}]}));
    let verdict = score(&answered, &done);
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());

    // Each output left out leaves its own call unanswered.
    for (i, call_id) in ["call_sh", "call_ls", "call_ls2", "call_ap", "call_cu"]
        .into_iter()
        .enumerate()
    {
        let mut fewer = outputs.clone();
        fewer.remove(i);
        let verdict = score(&transcript(&fewer), &done);
        assert_eq!(verdict.findings().len(), 1, "{:#?}", verdict.findings());
        let finding = &verdict.findings()[0];
        assert_eq!(finding.kind, FindingKind::UnansweredCall);
        assert_eq!(finding.call_id.as_deref(), Some(call_id));
    }
}

#[test]
fn arguments_that_are_not_an_object_or_not_json() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance", json!(["acc_1"]))]),
    );
    assert_eq!(verdict.findings()[0].kind, FindingKind::ArgumentsNotObject);

    let chat = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "get_balance", "arguments": "{\"account_id\": \"acc_1\""}}]}}]
    });
    let verdict = score(&case, &Response::from_value(&chat, None).unwrap());
    assert_eq!(verdict.findings().len(), 1);
    assert_eq!(verdict.findings()[0].kind, FindingKind::ArgumentsNotJson);
    assert_eq!(verdict.findings()[0].call_id.as_deref(), Some("call_1"));
}

#[cfg(feature = "schema")]
#[test]
fn arguments_that_fail_a_newly_required_field() {
    let case = case(
        json!({"tools": [{"name": "issue_refund", "description": "Refund an order.",
        "input_schema": {"type": "object",
            "properties": {"order_id": {"type": "string"}, "amount_cents": {"type": "integer"},
                           "reason": {"type": "string"}},
            "required": ["order_id", "amount_cents", "reason"]}}]}),
    );
    let verdict = score(
        &case,
        &anthropic_calls(&[(
            "toolu_01",
            "issue_refund",
            json!({"order_id": "o1", "amount_cents": 9164}),
        )]),
    );
    let finding = &verdict.findings()[0];
    assert_eq!(finding.kind, FindingKind::SchemaViolation);
    assert!(finding.detail.contains("reason"), "{}", finding.detail);
}

#[test]
fn duplicate_call_ids() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let verdict = score(
        &case,
        &anthropic_calls(&[
            ("toolu_01", "get_balance", json!({})),
            ("toolu_01", "get_balance", json!({})),
        ]),
    );
    assert_eq!(verdict.fingerprint(), ["duplicate_call_id: get_balance"]);
    assert_eq!(verdict.findings()[0].location, "response call 2");
}

/// OpenAI-compatible servers (llama.cpp's, LM Studio, Gemini's compatibility endpoint) send
/// `tool_calls` with an empty or missing `id`: the name is right, so the verdict passes, and the
/// unpaired result is said as a note.
#[test]
fn a_call_without_an_id_passes_with_a_note() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let body = |calls: Value| {
        json!({"object": "chat.completion", "model": "qwen2.5-7b-instruct",
               "choices": [{"index": 0, "finish_reason": "tool_calls",
                 "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
    };
    for calls in [
        json!([{"type": "function", "function": {"name": "get_balance", "arguments": "{}"}}]),
        json!([{"id": "", "type": "function", "function": {"name": "get_balance", "arguments": "{}"}}]),
    ] {
        let response = Response::from_value(&body(calls.clone()), None).unwrap();
        let verdict = score(&case, &response);
        assert!(verdict.is_pass(), "{calls}: {:#?}", verdict.findings());
        assert!(verdict.fingerprint().is_empty());
        let [note] = verdict.notes() else {
            panic!("{calls}: one note, got {:#?}", verdict.notes())
        };
        assert_eq!(note.kind, FindingKind::CallWithoutId);
        assert_eq!(note.name.as_deref(), Some("get_balance"));
        assert_eq!(note.location, "response call 1");
        assert!(
            note.to_string()
                .contains("openai-chat pairs each result with its call's id"),
            "{note}"
        );
    }
    // With an id, nothing to say; a format that pairs by position (Gemini) says nothing either.
    let with_id = body(json!([{"id": "call_1", "type": "function",
                               "function": {"name": "get_balance", "arguments": "{}"}}]));
    assert!(score(&case, &Response::from_value(&with_id, None).unwrap())
        .notes()
        .is_empty());
    let gemini = json!({"candidates": [{"content": {"role": "model",
        "parts": [{"functionCall": {"name": "get_balance", "args": {}}}]}, "finishReason": "STOP"}]});
    assert!(score(&case, &Response::from_value(&gemini, None).unwrap())
        .notes()
        .is_empty());
}

#[test]
fn unanswered_call_left_in_the_transcript() {
    let case = case(json!({
        "tools": [tool("get_balance", "Current balance.")],
        "messages": [
            {"role": "user", "content": "Balance?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "get_balance", "input": {}},
                {"type": "tool_use", "id": "toolu_02", "name": "get_balance", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "12.00"}]}
        ]
    }));
    let verdict = score(&case, &anthropic_text("Your balance is 12.00."));
    assert_eq!(verdict.findings().len(), 1, "{:#?}", verdict.findings());
    let finding = &verdict.findings()[0];
    assert_eq!(finding.kind, FindingKind::UnansweredCall);
    assert_eq!(finding.call_id.as_deref(), Some("toolu_02"));
    assert_eq!(finding.location, "transcript message 2");
}

#[test]
fn call_where_no_tool_fits() {
    let case = case(json!({
        "expect": "no_call",
        "tools": [tool("get_balance", "Current balance.")],
        "messages": [{"role": "user", "content": "Cancel my subscription."}]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance", json!({}))]),
    );
    assert_eq!(
        verdict.fingerprint(),
        ["call_where_no_tool_fits: get_balance"]
    );
    assert!(score(
        &case,
        &anthropic_text("I can't cancel subscriptions, sorry.")
    )
    .is_pass());
}

#[test]
fn findings_print_escaped_names() {
    let case = case(json!({"tools": [tool("get_balance", "Current balance.")]}));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance\u{1b}[2J\n", json!({}))]),
    );
    let line = verdict.findings()[0].to_string();
    assert!(!line.chars().any(char::is_control), "{line:?}");
    assert!(line.contains("get_balance\\u{1b}[2J\\n"), "{line}");
    assert_eq!(
        verdict.fingerprint(),
        ["get_balance\\u{1b}[2J\\n (invented)"]
    );
}

// ---------- input schemas, read as their provider reads them ----------

/// A Gemini `generateContent` request holding `declaration` and the response calling it with
/// `args`.
#[cfg(feature = "schema")]
fn gemini_call(declaration: Value, args: Value) -> (Case, Response) {
    let case = case(json!({
        "tools": [{"functionDeclarations": [declaration]}],
        "contents": [{"role": "user", "parts": [{"text": "Weather in Boston, in celsius?"}]}]
    }));
    let name = case.catalog.tools()[0].name.clone();
    let body = json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-2.5-flash"
    });
    (
        case,
        Response::from_value(&body, None).expect("the response parses"),
    )
}

/// The declaration google-genai's own streaming function-call test sends (googleapis/
/// python-genai@66807187f2123c6676175ac991f4e34eb09200d1,
/// google/genai/tests/models/test_function_call_streaming.py, Apache-2.0), once as Gemini's
/// OpenAPI-subset `parameters` and once as `parameters_json_schema`; the test's model answers
/// `country` with null.
#[cfg(feature = "schema")]
fn python_genai_weather(openapi: bool) -> Value {
    if openapi {
        json!({
            "name": "get_current_weather",
            "description": "Get the current weather in a city",
            "parameters": {
                "type": "OBJECT",
                "properties": {
                    "location": {"type": "STRING", "description": "The location to get the weather for"},
                    "country": {"type": "STRING", "description": "The country to get the weather for", "nullable": true},
                    "unit": {"type": "STRING", "enum": ["C", "F"], "description": "The unit to return the weather in"},
                    "purpose": {"type": "STRING", "description": "Discribes the purpose of asking the weather"}
                },
                "required": ["location", "unit", "country"]
            }
        })
    } else {
        json!({
            "name": "get_current_weather",
            "description": "Get the current weather in a city",
            "parameters_json_schema": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "The location to get the weather for"},
                    "country": {"anyOf": [{"type": "string", "description": "The country to get the weather for"}, {"type": "null"}],
                                "description": "The country to get the weather for"},
                    "unit": {"type": "string", "enum": ["C", "F"]},
                    "purpose": {"type": "string", "description": "Discribes the purpose of asking the weather"}
                },
                "required": ["location", "unit", "country"]
            }
        })
    }
}

#[cfg(feature = "schema")]
#[test]
fn gemini_parameters_are_read_as_gemini_reads_them() {
    let good = json!({"location": "Boston", "country": null, "unit": "C",
                      "purpose": "to know what to wear today"});
    for openapi in [true, false] {
        let (case, response) = gemini_call(python_genai_weather(openapi), good.clone());
        let verdict = score(&case, &response);
        assert!(
            verdict.is_pass(),
            "openapi {openapi}: {:#?}",
            verdict.findings()
        );
        // Translated, not switched off: a missing field and a value outside the enum still fail.
        for (bad, word) in [
            (json!({"location": "Boston", "country": "US"}), "unit"),
            (
                json!({"location": "Boston", "country": "US", "unit": "K"}),
                "K",
            ),
            (
                json!({"location": "Boston", "country": 1, "unit": "C"}),
                "country",
            ),
        ] {
            let (case, response) = gemini_call(python_genai_weather(openapi), bad);
            let verdict = score(&case, &response);
            let [finding] = verdict.findings() else {
                panic!("openapi {openapi}: {:#?}", verdict.findings());
            };
            assert_eq!(finding.kind, FindingKind::SchemaViolation);
            assert!(finding.detail.contains(word), "{}", finding.detail);
        }
    }
}

/// Google's `Schema` as the Python SDK's `model_dump()` writes it (snake_case proto names,
/// `None`s as null) and as protobuf's JSON mapping writes int64 counts (strings), with the keys
/// JSON Schema lacks (`propertyOrdering`, `example`), an INTEGER enum (its values are strings in
/// the `Schema` object) and `format: enum`.
#[cfg(feature = "schema")]
#[test]
fn gemini_schema_fields_json_schema_lacks_or_spells_otherwise() {
    let declaration = json!({
        "name": "book_room",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "guests": {"type": "ARRAY", "items": {"type": "STRING", "nullable": null},
                           "min_items": "1", "max_items": "4", "any_of": null},
                "floor": {"type": "INTEGER", "format": "enum", "enum": ["1", "2", "3"]},
                "view": {"type": "STRING", "format": "enum", "enum": ["sea", "city"], "nullable": true},
                "nights": {"type": "INTEGER", "format": "int32", "minimum": "1", "maximum": 14, "example": 3},
                "note": {"any_of": [{"type": "STRING"}, {"type": "INTEGER"}], "nullable": true}
            },
            "required": ["guests", "nights"],
            "property_ordering": ["guests", "floor", "view", "nights", "note"],
            "propertyOrdering": ["guests", "floor", "view", "nights", "note"],
            "example": {"guests": ["Ada"], "nights": 2},
            "title": "Booking",
            "default": null
        }
    });
    let good =
        json!({"guests": ["Ada", "Grace"], "floor": 2, "view": null, "nights": 3, "note": null});
    let (case, response) = gemini_call(declaration.clone(), good);
    let verdict = score(&case, &response);
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    for (bad, word) in [
        (json!({"guests": [], "nights": 3}), "guests"),
        (json!({"guests": ["Ada"], "nights": 0}), "nights"),
        (json!({"guests": ["Ada"], "nights": 3, "floor": 9}), "floor"),
        (
            json!({"guests": ["Ada"], "nights": 3, "view": "garden"}),
            "view",
        ),
    ] {
        let (case, response) = gemini_call(declaration.clone(), bad);
        let verdict = score(&case, &response);
        let [finding] = verdict.findings() else {
            panic!("{:#?}", verdict.findings());
        };
        assert_eq!(finding.kind, FindingKind::SchemaViolation);
        assert!(finding.detail.contains(word), "{}", finding.detail);
    }
}

/// A schema whose `type`s are the `Type` enum's numbers (6 OBJECT, 1 STRING, 3 INTEGER), as the
/// Go SDK sends it with `enum-encoding=int` (langchaingo's recorded Gemini requests), is read as
/// those types.
#[cfg(feature = "schema")]
#[test]
fn gemini_schema_types_may_be_enum_numbers() {
    let declaration = json!({
        "name": "getCurrentWeather",
        "parameters": {"type": 6, "properties": {
            "location": {"type": 1, "description": "The city and state"},
            "days": {"type": 3}
        }, "required": ["location"]}
    });
    let (case, response) = gemini_call(
        declaration.clone(),
        json!({"location": "Chicago", "days": 2}),
    );
    let verdict = score(&case, &response);
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    let (case, response) = gemini_call(declaration, json!({"location": 7}));
    let verdict = score(&case, &response);
    let [finding] = verdict.findings() else {
        panic!("{:#?}", verdict.findings());
    };
    assert_eq!(finding.kind, FindingKind::SchemaViolation);
}

/// `"required": null`, at the top and in a nested property's schema, is "no required
/// properties", as OpenAI reads the function tools SDKs write that way.
#[cfg(feature = "schema")]
#[test]
fn required_null_is_no_required_properties() {
    let case = case(json!({
        "tools": [{"type": "function", "function": {
            "name": "get_balance", "description": "Current balance.",
            "parameters": {"type": "object", "required": null, "properties": {
                "account_id": {"type": "string"},
                "filter": {"type": "object", "required": null,
                           "properties": {"currency": {"type": "string"}}}}}}}],
        "messages": [{"role": "user", "content": "Balance?"}]
    }));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance", json!({"filter": {}}))]),
    );
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_balance", json!({"account_id": 7}))]),
    );
    assert_eq!(verdict.fingerprint(), ["schema_violation: get_balance"]);
}

/// A keyword set to `null` is unset, however deep (`"type": null`, as Codex's tools reach proxies
/// in front of the Responses API), but `const: null` still only accepts null; loaded from text,
/// the case is not refused as a schema that does not compile.
#[cfg(feature = "schema")]
#[test]
fn null_keywords_are_unset_but_a_null_const_is_data() {
    let text = r#"{
  "model": "gpt-5.4",
  "tools": [{"type": "function", "name": "native", "parameters": {"type": null, "properties": {}}},
            {"type": "function", "name": "pick", "parameters": {"type": "object",
             "properties": {"mode": {"const": null, "description": null}}}}],
  "input": [{"role": "user", "content": "hi"}]
}"#;
    let case = Case::from_json_str(text).expect("null keywords are unset");
    let calls = |args: Value| {
        let body = json!({"object": "response", "status": "completed", "output": [
            {"type": "function_call", "call_id": "c1", "name": "pick", "arguments": args.to_string()}]});
        Response::from_value(&body, None).expect("a response")
    };
    assert!(score(&case, &calls(json!({"mode": null}))).is_pass());
    assert_eq!(
        score(&case, &calls(json!({"mode": "fast"}))).fingerprint(),
        ["schema_violation: pick"]
    );
}

/// A schema that does not compile is the case's fault: an error naming the tool and the place of
/// its schema when the case is read, never a finding against the call.
#[cfg(feature = "schema")]
#[test]
fn a_schema_that_does_not_compile_is_the_cases_fault() {
    let text = r#"{
  "tools": [
    {"name": "get_balance", "input_schema": {"type": "object"}},
    {"name": "get_weather",
     "input_schema": {"type": "notatype"}}
  ],
  "messages": [{"role": "user", "content": "Weather?"}]
}"#;
    let error = Case::from_json_str(text).expect_err("the schema does not compile");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "line 5, column 22: tool `get_weather`: its input schema does not compile: "
        ),
        "{message}"
    );
    // Built from a value (the per-line path of a log, which compiles nothing up front), the
    // call is still not blamed.
    let case = case(serde_json::from_str(text).expect("JSON"));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "get_weather", json!({"city": "Oslo"}))]),
    );
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    assert!(matches!(
        case.catalog.validate("get_weather", &json!({})),
        Err(toolcall_score::SchemaError::Uncompilable(_))
    ));
    // A Gemini `parameters` schema with a type Gemini does not have is just as bad.
    let gemini = r#"{"tools": [{"functionDeclarations": [{"name": "f",
        "parameters": {"type": "OBJECT", "properties": {"x": {"type": "TEXT"}}}}]}]}"#;
    let message = Case::from_json_str(gemini)
        .expect_err("no type TEXT")
        .to_string();
    assert!(
        message.contains("tool `f`: its input schema does not compile"),
        "{message}"
    );
}

/// A `pattern` the regex engine gives up on (its backtracking limit) decides nothing about the
/// call: not a violation, but a note that the pattern went unchecked (it used to pass without a
/// word).
#[cfg(feature = "schema")]
#[test]
fn a_pattern_the_regex_engine_gives_up_on_is_not_a_violation() {
    let case = case(
        json!({"tools": [{"name": "lookup", "input_schema": {"type": "object",
        "properties": {"code": {"type": "string", "pattern": "^(a|a)*\\1b$"}}}}]}),
    );
    let code = format!("{}!", "a".repeat(40));
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "lookup", json!({"code": code}))]),
    );
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    let [note] = verdict.notes() else {
        panic!("one note, got {:#?}", verdict.notes())
    };
    assert_eq!(note.kind, FindingKind::SchemaUnchecked);
    assert_eq!(note.name.as_deref(), Some("lookup"));
    assert_eq!(note.location, "response call 1");
    assert!(
        note.to_string().contains("went unchecked") && note.to_string().contains("pattern"),
        "{note}"
    );
    assert!(matches!(
        case.catalog.validate("lookup", &json!({"code": code})),
        Err(toolcall_score::SchemaError::Undecided(_))
    ));
    // A decided mismatch of the same pattern is still one.
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_01", "lookup", json!({"code": 7}))]),
    );
    assert_eq!(verdict.fingerprint(), ["schema_violation: lookup"]);
}

/// `assert_pass` fails a `#[test]` with what is wrong, not a bare `assertion failed`.
#[test]
fn assert_pass_fails_with_the_findings() {
    let case = case(json!({"tools": [tool("get_invoice", "One invoice by id.")]}));
    score(
        &case,
        &anthropic_calls(&[("toolu_1", "get_invoice", json!({}))]),
    )
    .assert_pass();
    let verdict = score(
        &case,
        &anthropic_calls(&[("toolu_1", "get_invoices", json!({}))]),
    );
    let panic = std::panic::catch_unwind(|| verdict.assert_pass()).expect_err("a finding fails");
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    insta::assert_snapshot!(message, @"
    fail: 1 finding(s)
      unknown_tool `get_invoices` (invented) at response call 1 [id toolu_1]: not defined, and nothing in the request mentions it; did you mean `get_invoice`?
    ");
}

/// Issue 29, item 8: code shown to the reader is no call. The minimal form, and gpt-5's
/// unfenced Python in an answer whose only tool was the built-in `web_search`.
#[test]
fn prose_on_code_is_not_a_call() {
    let empty = case(json!({"tools": []}));
    let verdict = score(&empty, &anthropic_text("You can call foo_bar(items) here."));
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());
    let answer = "Pass the hook when you instrument the app:\n\n\
        FastAPIInstrumentor.instrument_app(app, client_request_hook=client_request_hook)\n\n\
        The hook runs for every request.";
    let verdict = score(&empty, &anthropic_text(answer));
    assert!(verdict.is_pass(), "{:#?}", verdict.findings());

    // A namespaced call of a tool still counts: models write `default_api.` and `functions.`
    // before names, and a defined tool behind another namespace is the same tool.
    let tools = case(json!({"tools": [tool("create_issue", "Open an issue.")]}));
    for (text, name) in [
        (
            "print(default_api.get_forecast(city=\"Paris\"))",
            "default_api.get_forecast",
        ),
        (
            "functions.lookup_order(order_id=\"o1\")",
            "functions.lookup_order",
        ),
        (
            "github.create_issue(title=\"Crash\")",
            "github.create_issue",
        ),
    ] {
        let verdict = score(&tools, &anthropic_text(text));
        let finding = only_unknown(&verdict);
        assert_eq!(finding.name.as_deref(), Some(name), "{text}");
        assert_eq!(finding.cause, Some(Cause::Prose), "{text}");
    }
}
