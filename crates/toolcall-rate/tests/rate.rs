//! The offline rate: recorded trees and JSONL logs, bad input, and import, on small generated
//! inputs (default tier: nothing but Rust needed); `import_formats` imports a conversation in each
//! request format beyond OpenAI Chat and Anthropic and scores what it wrote.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolcall_rate::{
    import, rate_jsonl, rate_tree, Gate, ImportOptions, RateError, Report, ScanOptions,
};
use toolcall_score::Cause;

mod import_formats;

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rate")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// An OpenAI Chat case with two tools; `history` calls become earlier transcript turns.
fn case(history: &[&str], expect_no_call: bool) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are the billing assistant."}),
        json!({"role": "user", "content": "Show my invoices for acc_771"}),
    ];
    for (i, name) in history.iter().enumerate() {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_h{i}"), "type": "function",
             "function": {"name": name, "arguments": "{}"}}]}));
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("call_h{i}"), "content": "ok"}));
    }
    let mut case = json!({
        "tools": [
            {"type": "function", "function": {"name": "get_invoice", "description": "One invoice by id.",
             "parameters": {"type": "object", "properties": {"invoice_id": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "get_balance", "description": "Current balance.",
             "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}}}}
        ],
        "messages": messages,
    });
    if expect_no_call {
        case["expect"] = json!("no_call");
    }
    case
}

/// A Chat Completions response calling `names` in order.
fn response(names: &[&str]) -> Value {
    let calls: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"id": format!("call_{i}"), "type": "function",
                            "function": {"name": n, "arguments": "{}"}})
        })
        .collect();
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
           "choices": [{"index": 0, "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

fn options() -> ScanOptions {
    ScanOptions {
        threads: 3,
        ..ScanOptions::default()
    }
}

/// cases/billing/{a,b,c,d}.json and recorded/agent/billing/*.json: 6 calls, 3 unknown (two of
/// one name), one call where no tool fits, one case unrecorded.
fn tree(dir: &Path) -> (PathBuf, PathBuf) {
    let cases = dir.join("cases");
    let recorded = dir.join("recorded/agent");
    write(&cases.join("billing/a.json"), &case(&[], false));
    write(
        &recorded.join("billing/a.json"),
        &response(&["get_invoice", "get_invoices"]),
    );
    write(
        &cases.join("billing/b.json"),
        &case(&["search_invoices"], false),
    );
    write(
        &recorded.join("billing/b.json"),
        &response(&["search_invoices", "get_balance"]),
    );
    write(&cases.join("billing/c.json"), &case(&[], true));
    write(
        &recorded.join("billing/c.json"),
        &response(&["get_balance"]),
    );
    write(&cases.join("billing/d.json"), &case(&[], false));
    // Two samples for one case in a .jsonl recording.
    write(&cases.join("e.json"), &case(&[], false));
    let samples = format!("{}\n{}\n", response(&["get_invoices"]), response(&[]));
    std::fs::write(recorded.join("e.jsonl"), samples).unwrap();
    (cases, recorded)
}

#[test]
fn a_tree_gives_the_denominator_the_distinct_names_and_their_causes() {
    let dir = scratch("tree");
    let (cases, recorded) = tree(&dir);
    let scan = rate_tree(&cases, &recorded, &options()).unwrap();
    assert_eq!(scan.unrecorded, 1, "billing/d has no recording");
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!((report.responses, report.calls, report.unknown), (5, 6, 3));
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);
    let names: Vec<(&str, u64, Cause)> = report
        .distinct
        .iter()
        .map(|d| (d.name.as_str(), d.count, d.cause))
        .collect();
    assert_eq!(
        names,
        [
            ("get_invoices", 2, Cause::Invented),
            ("search_invoices", 1, Cause::Retired)
        ]
    );
    assert_eq!(report.distinct[0].suggestions[0], "get_invoice");
    let first = report.distinct[0].first_seen.as_deref().unwrap();
    assert!(first.ends_with("billing/a.json"), "{first}");
    assert_eq!(
        (report.no_tool_fits.responses, report.no_tool_fits.calls),
        (1, 1)
    );
    let rate = report.rate.unwrap();
    assert!((rate - 0.5).abs() < 1e-12);
    let (lo, hi) = report.interval.unwrap();
    assert!(lo < 0.5 && hi > 0.5 && lo > 0.15 && hi < 0.85, "{lo} {hi}");
}

#[test]
fn the_json_report_has_the_documented_keys() {
    let dir = scratch("json");
    let (cases, recorded) = tree(&dir);
    let scan = rate_tree(&cases, &recorded, &options()).unwrap();
    let report = Report::new(
        scan.tally,
        Gate {
            max_unknown: Some(0),
            ..Gate::default()
        },
    );
    let value = serde_json::to_value(&report).unwrap();
    for key in [
        "responses",
        "calls",
        "unknown",
        "rate",
        "interval",
        "distinct",
        "in_text",
        "no_tool_fits",
        "other_findings",
        "bad_lines",
        "errors",
        "unrecorded",
        "stopped",
        "gate",
    ] {
        assert!(value.get(key).is_some(), "missing `{key}` in {value:#}");
    }
    assert_eq!(value["interval"].as_array().unwrap().len(), 2);
    assert_eq!(value["distinct"][0]["name"], "get_invoices");
    assert_eq!(value["distinct"][0]["count"], 2);
    assert_eq!(value["distinct"][0]["cause"], "invented");
    assert_eq!(value["distinct"][1]["cause"], "retired");
    assert_eq!(value["no_tool_fits"], json!({"responses": 1, "calls": 1}));
    assert_eq!(value["gate"]["passed"], false);
    assert_eq!(value["gate"]["max_unknown"], 0);
    assert!(value["gate"]["reasons"][0]
        .as_str()
        .unwrap()
        .contains("--max-unknown 0"));
}

/// A recorded stream (`.sse`) is one response, assembled; a case recorded under two names is
/// scored once, and the other file is reported.
#[test]
fn a_recorded_stream_is_scored_as_one_response() {
    let dir = scratch("stream");
    let (cases, recorded) = (dir.join("cases"), dir.join("recorded/agent"));
    write(&cases.join("billing/a.json"), &case(&[], false));
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_0",
                   "type": "function", "function": {"name": "get_invo", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "ices", "arguments": "{}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    let mut stream: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    stream.push_str("data: [DONE]\n\n");
    std::fs::create_dir_all(recorded.join("billing")).unwrap();
    std::fs::write(recorded.join("billing/a.sse"), stream).unwrap();

    let report = Report::new(
        rate_tree(&cases, &recorded, &options()).unwrap().tally,
        Gate::default(),
    );
    assert_eq!((report.responses, report.calls, report.unknown), (1, 1, 1));
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);
    assert_eq!(report.distinct[0].name, "get_invoices");

    write(
        &recorded.join("billing/a.json"),
        &response(&["get_balance"]),
    );
    let report = Report::new(
        rate_tree(&cases, &recorded, &options()).unwrap().tally,
        Gate::default(),
    );
    assert_eq!((report.responses, report.unknown), (1, 0), "only a.json");
    assert_eq!(report.bad_lines, 1);
    assert!(
        report.errors[0].contains("a.sse") && report.errors[0].contains("recorded twice"),
        "{:?}",
        report.errors
    );
}

/// A log line's `response` may be the stream the response came as, kept as a string.
#[test]
fn a_log_line_may_hold_the_response_as_its_stream() {
    let dir = scratch("stream-log");
    let chunk = json!({"object": "chat.completion.chunk", "choices": [{"index": 0,
        "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                  "function": {"name": "get_invoices", "arguments": "{}"}}]},
        "finish_reason": "tool_calls"}]});
    let line = json!({"request": case(&[], false), "response": format!("data: {chunk}\n\ndata: [DONE]\n\n")});
    let log = dir.join("log.jsonl");
    std::fs::write(&log, format!("{line}\n")).unwrap();
    let tally = rate_jsonl(std::slice::from_ref(&log), &options()).unwrap();
    let report = Report::new(tally, Gate::default());
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);
    assert_eq!((report.responses, report.calls, report.unknown), (1, 1, 1));
    assert_eq!(report.distinct[0].name, "get_invoices");
}

#[test]
fn jsonl_lines_are_scored_and_bad_lines_counted_with_file_and_line() {
    let dir = scratch("jsonl");
    let good = |names: &[&str]| {
        json!({"request": case(&[], false), "response": response(names)}).to_string()
    };
    let lines = [
        good(&["get_invoice"]),
        String::new(),
        "{not json".to_owned(),
        good(&["lookup_customer"]),
        json!({"request": case(&[], false)}).to_string(),
        // Raw bodies kept as strings, and an id to show.
        json!({"request": case(&[], false).to_string(), "response": response(&["lookup_customer"]).to_string(), "id": "req-9"}).to_string(),
        json!({"request": case(&[], false), "response": {"neither": "format"}}).to_string(),
    ];
    let log = dir.join("traffic.jsonl");
    std::fs::write(&log, lines.join("\n")).unwrap();
    let tally = rate_jsonl(std::slice::from_ref(&log), &options()).unwrap();
    let report = Report::new(tally, Gate::default());
    assert_eq!((report.responses, report.calls, report.unknown), (3, 3, 2));
    assert_eq!(report.bad_lines, 3, "{:#?}", report.errors);
    let shown = log.display().to_string();
    assert!(
        report.errors[0].starts_with(&format!("{shown}:3: not a log line")),
        "{:?}",
        report.errors
    );
    assert!(
        report.errors[1].starts_with(&format!("{shown}:5: not a log line")),
        "{:?}",
        report.errors
    );
    assert!(report.errors[1].contains("response"), "{:?}", report.errors);
    assert!(
        report.errors[2].starts_with(&format!("{shown}:7: response")),
        "{:?}",
        report.errors
    );
    assert_eq!(report.distinct.len(), 1);
    assert_eq!(report.distinct[0].count, 2);
    assert_eq!(
        report.distinct[0].first_seen.as_deref(),
        Some(format!("{shown}:4").as_str())
    );
    // The same place for a tool: the file alone and its line, for an annotation.
    assert_eq!(
        (
            report.distinct[0].first_file.as_deref(),
            report.distinct[0].first_line
        ),
        (Some(shown.as_str()), Some(4))
    );
}

#[test]
fn strict_makes_the_first_bad_line_fatal() {
    let dir = scratch("strict");
    let log = dir.join("log.jsonl");
    let good =
        json!({"request": case(&[], false), "response": response(&["get_invoice"])}).to_string();
    std::fs::write(&log, format!("{good}\n{good}\n[1, 2]\n{good}\n")).unwrap();
    let strict = ScanOptions {
        strict: true,
        ..options()
    };
    match rate_jsonl(std::slice::from_ref(&log), &strict) {
        Err(RateError::Strict { message }) => {
            assert!(message.contains("log.jsonl:3"), "{message}")
        }
        other => panic!("expected a strict error, got {other:?}"),
    }
}

#[test]
fn chunks_cut_between_lines_keep_line_numbers_right() {
    // Enough lines to span several 1 MiB chunks, with a bad line near the end.
    let dir = scratch("chunks");
    let log = dir.join("big.jsonl");
    let good = json!({"request": case(&[], false), "response": response(&["get_invoice", "nope"])})
        .to_string();
    let n = (3 << 20) / good.len() + 10;
    let mut text = String::with_capacity(n * (good.len() + 1));
    for i in 1..=n {
        if i == n - 3 {
            text.push_str("garbage\n");
        } else {
            text.push_str(&good);
            text.push('\n');
        }
    }
    std::fs::write(&log, text).unwrap();
    let report = Report::new(rate_jsonl(&[log], &options()).unwrap(), Gate::default());
    assert_eq!(report.responses as usize, n - 1);
    assert_eq!(report.calls as usize, 2 * (n - 1));
    assert_eq!(report.unknown as usize, n - 1);
    assert_eq!(report.bad_lines, 1);
    assert!(
        report.errors[0].contains(&format!("big.jsonl:{}:", n - 3)),
        "{:?}",
        report.errors
    );
}

#[test]
fn a_missing_case_file_is_counted_not_fatal() {
    let dir = scratch("missing-case");
    let (cases, recorded) = tree(&dir);
    write(
        &recorded.join("billing/zzz.json"),
        &response(&["get_invoice"]),
    );
    let scan = rate_tree(&cases, &recorded, &options()).unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!(report.bad_lines, 1);
    assert!(
        report.errors[0].contains("no case file") && report.errors[0].contains("billing/zzz"),
        "{:?}",
        report.errors
    );
    assert_eq!(report.responses, 5);
}

#[test]
fn a_case_recorded_twice_is_scored_once_and_reported() {
    let dir = scratch("recorded-twice");
    let (cases, recorded) = tree(&dir);
    write(
        &recorded.join("billing/a.jsonl"),
        &response(&["get_invoice"]),
    );
    let scan = rate_tree(&cases, &recorded, &options()).unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!(
        (report.responses, report.bad_lines),
        (5, 1),
        "{:?}",
        report.errors
    );
    assert!(
        report.errors[0].contains("recorded twice; only")
            && report.errors[0].ends_with("a.json is scored"),
        "{:?}",
        report.errors
    );
}

fn openai_conversations() -> Value {
    json!([
        {"id": "c1", "traj": [
            {"role": "system", "content": "Billing assistant."},
            {"role": "user", "content": "balance of acc_1?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_balance", "arguments": "{\"account_id\":\"acc_1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "12.00"},
            {"role": "assistant", "content": "It is 12.00. Anything else?"},
            {"role": "user", "content": "invoice inv_2 and balance again"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "get_invoice", "arguments": "{\"invoice_id\":\"inv_2\"}"}},
                {"id": "call_3", "type": "function", "function": {"name": "get_balance", "arguments": "{\"account_id\":\"acc_1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_2", "content": "{}"},
            {"role": "tool", "tool_call_id": "call_3", "content": "12.00"}
        ]},
        {"traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    ])
}

fn bare_tools() -> Value {
    json!([
        {"name": "get_invoice", "description": "One invoice by id.",
         "parameters": {"type": "object", "properties": {"invoice_id": {"type": "string"}}}},
        {"name": "get_balance", "description": "Current balance.",
         "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}}}
    ])
}

#[test]
fn import_makes_one_case_per_assistant_turn_with_calls_and_rate_reads_them() {
    let dir = scratch("import-openai");
    let input = dir.join("log.json");
    write(&input, &openai_conversations());
    let tools = dir.join("tools.json");
    write(&tools, &bare_tools());
    let out = dir.join("out");
    let import_options = ImportOptions {
        out: out.clone(),
        tools: Some(tools.clone()),
        agent: Some("gpt-4o".into()),
        ..ImportOptions::default()
    };
    let summary = import(&input, &import_options).unwrap();
    assert_eq!(
        (summary.conversations, summary.cases, summary.calls),
        (2, 2, 3)
    );
    let case: Value =
        serde_json::from_slice(&std::fs::read(out.join("cases/log/c1-6.json")).unwrap()).unwrap();
    assert_eq!(
        case["messages"].as_array().unwrap().len(),
        6,
        "the request up to the turn"
    );
    assert_eq!(
        case["tools"][0]["type"], "function",
        "bare tools are wrapped"
    );
    assert_eq!(case["tools"][0]["function"]["name"], "get_invoice");
    assert!(out.join("recorded/gpt-4o/log/c1-2.json").is_file());

    let scan = rate_tree(&out.join("cases"), &out.join("recorded/gpt-4o"), &options()).unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!(
        (
            report.responses,
            report.calls,
            report.unknown,
            report.bad_lines
        ),
        (2, 3, 0, 0),
        "{:?}",
        report.errors
    );

    // Never overwrite silently; --force does.
    match import(&input, &import_options) {
        Err(RateError::WouldOverwrite { count, .. }) => assert_eq!(count, 4),
        other => panic!("expected WouldOverwrite, got {other:?}"),
    }
    let forced = ImportOptions {
        force: true,
        ..import_options
    };
    assert_eq!(import(&input, &forced).unwrap().cases, 2);
}

#[test]
fn import_reads_anthropic_conversations_with_their_tools_and_system() {
    let dir = scratch("import-anthropic");
    let input = dir.join("claude.json");
    write(
        &input,
        &json!({
            "model": "claude-sonnet",
            "system": "Billing assistant.",
            "tools": [{"name": "get_balance", "description": "Current balance.",
                       "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}}}}],
            "messages": [
                {"role": "user", "content": "balance of acc_1?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_balance", "input": {"account_id": "acc_1"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_balances", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12.00"},
                                             {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such tool", "is_error": true}]}
            ]
        }),
    );
    let out = dir.join("out");
    let summary = import(
        &input,
        &ImportOptions {
            out: out.clone(),
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!((summary.cases, summary.calls), (1, 2));
    assert_eq!(summary.agents, ["claude-sonnet"]);
    let case: Value =
        serde_json::from_slice(&std::fs::read(out.join("cases/claude/0-1.json")).unwrap()).unwrap();
    assert_eq!(case["system"], "Billing assistant.");
    assert_eq!(case["format"], "anthropic");
    let scan = rate_tree(
        &out.join("cases"),
        &out.join("recorded/claude-sonnet"),
        &options(),
    )
    .unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!(
        (report.calls, report.unknown),
        (2, 1),
        "{:?}",
        report.errors
    );
    assert_eq!(report.distinct[0].name, "get_balances");
}

#[test]
fn import_without_tools_says_how_to_give_them() {
    let dir = scratch("import-no-tools");
    let input = dir.join("log.json");
    write(&input, &openai_conversations());
    let err = import(
        &input,
        &ImportOptions {
            out: dir.join("out"),
            ..ImportOptions::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("--tools"), "{err}");
    assert!(!dir.join("out").exists(), "nothing is written on error");
}

/// A conversation file that is not JSON is named the way every other input error is,
/// `file:line:column: not valid JSON: …`, with the position said once.
#[test]
fn import_of_malformed_json_names_file_line_and_column() {
    let dir = scratch("import-malformed");
    let input = dir.join("log.json");
    std::fs::write(
        &input,
        "{\"messages\": [\n  {\"role\": \"user\" \"content\": \"hi\"}\n]}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let err = import(
        &input,
        &ImportOptions {
            out,
            ..ImportOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!("{}:2:19: not valid JSON: ", input.display())),
        "{err}"
    );
    assert!(!err.contains("line 2"), "the position is said once: {err}");
}

/// A tree that does not exist is reported as missing, not as "not a directory".
#[test]
fn a_missing_tree_is_named_as_missing() {
    let dir = scratch("missing-tree");
    let (cases, _) = tree(&dir);
    let missing = dir.join("recorded/gpt4o");
    let err = rate_tree(&cases, &missing, &options())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("recorded/gpt4o") && err.contains("No such file or directory"),
        "{err}"
    );
    let file = dir.join("file.json");
    std::fs::write(&file, "{}").unwrap();
    let err = rate_tree(&cases, &file, &options())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a directory"), "{err}");
}

/// A `.jsonl` recording whose first line is a stream event no body looks like (here a
/// `chat.completion.chunk`) is one recorded stream, as `toolcall score` reads it, not samples
/// whose every line would be a bad response.
#[test]
fn a_jsonl_of_chunk_lines_is_one_stream() {
    let dir = scratch("jsonl-stream");
    let cases = dir.join("cases");
    let recorded = dir.join("recorded/agent");
    write(&cases.join("a.json"), &case(&[], false));
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let lines = [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                   "function": {"name": "get_invoices", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    std::fs::create_dir_all(&recorded).unwrap();
    std::fs::write(recorded.join("a.jsonl"), lines.join("\n") + "\n").unwrap();
    let scan = rate_tree(&cases, &recorded, &options()).unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);
    assert_eq!((report.responses, report.calls, report.unknown), (1, 1, 1));
    assert_eq!(report.distinct[0].name, "get_invoices");
}

/// One conversation that calls `get_balance` once, with its tools; `extra` adds members (`id`,
/// `model`) to the conversation object.
fn one_call_conversation(extra: Value) -> Value {
    let mut conversation = json!({"tools": bare_tools(), "messages": [
        {"role": "user", "content": "balance of acc_1?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_balance", "arguments": "{}"}}]}
    ]});
    for (key, value) in extra.as_object().unwrap() {
        conversation[key] = value.clone();
    }
    conversation
}

/// JSON Lines, as loggers write them (import refused them: "not valid JSON: trailing
/// characters"): a log of `{"request", "response"}` pairs, as `rate` reads it, becomes one case
/// per pair whose response calls a tool (the request as sent, the response as received, and
/// rate over the import finds what rate over the log finds); a file of one conversation a line
/// reads as a list of them; a line that is not JSON is named.
#[test]
fn import_reads_json_lines_logs_and_conversations() {
    let dir = scratch("import-jsonl");
    let request = json!({"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "get_balance"}}],
        "messages": [{"role": "user", "content": "balance?"}]});
    let call = |name: &str| {
        json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}}]})
    };
    let text = json!({"id": "t", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "It is 5."}}]});
    let log = dir.join("traffic.jsonl");
    let lines: Vec<String> = [call("get_balance"), text, call("get_balanse")]
        .into_iter()
        .map(|response| json!({"request": request, "response": response}).to_string())
        .collect();
    std::fs::write(
        &log,
        format!("{}\n\n{}\n{}\n", lines[0], lines[1], lines[2]),
    )
    .unwrap();
    let out = dir.join("out");
    let options_out = ImportOptions {
        out: out.clone(),
        ..ImportOptions::default()
    };
    let summary = import(&log, &options_out).unwrap();
    assert_eq!((summary.cases, summary.calls), (2, 2), "{summary:?}");
    let case: Value =
        serde_json::from_slice(&std::fs::read(out.join("cases/traffic/4.json")).unwrap()).unwrap();
    assert_eq!(case["messages"], request["messages"]);
    assert_eq!(case["tools"], request["tools"]);
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(out.join("recorded/gpt-4o/traffic/4.json")).unwrap())
            .unwrap();
    assert_eq!(recorded, call("get_balanse"));
    let scan = rate_tree(&out.join("cases"), &out.join("recorded/gpt-4o"), &options()).unwrap();
    let report = Report::new(scan.tally, Gate::default());
    assert_eq!((report.calls, report.unknown), (2, 1));

    let conversations = dir.join("chats.jsonl");
    let lines: Vec<String> = ["a", "b"]
        .iter()
        .map(|id| one_call_conversation(json!({"id": id})).to_string())
        .collect();
    std::fs::write(&conversations, lines.join("\n") + "\n").unwrap();
    let options_chats = ImportOptions {
        out: dir.join("out-chats"),
        agent: Some("gpt-4o".into()),
        ..ImportOptions::default()
    };
    let summary = import(&conversations, &options_chats).unwrap();
    assert_eq!((summary.conversations, summary.cases), (2, 2));
    assert!(dir.join("out-chats/cases/chats/b-1.json").is_file());

    std::fs::write(&log, format!("{}\n{{not json\n", lines[0])).unwrap();
    let err = import(
        &log,
        &ImportOptions {
            out: dir.join("out-bad"),
            ..ImportOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("line 2: not valid JSON"), "{err}");
}

/// Ids `5` and `"5"` are one file name: importing both used to report "2 case(s)" and write
/// one file, the second over the first. Now nothing is written and both are named.
#[test]
fn import_refuses_two_conversations_that_would_write_one_file() {
    let dir = scratch("import-same-id");
    let input = dir.join("log.json");
    for ids in [
        json!([5, "5"]),
        json!(["Refund", "refund"]),
        json!(["x", "x "]),
    ] {
        write(
            &input,
            &json!([
                one_call_conversation(json!({"id": ids[0]})),
                one_call_conversation(json!({"id": ids[1]}))
            ]),
        );
        let out = dir.join("out");
        let options = ImportOptions {
            out: out.clone(),
            agent: Some("gpt-4o".into()),
            ..ImportOptions::default()
        };
        let err = import(&input, &options).unwrap_err().to_string();
        assert!(
            err.contains(
                "conversation 0 of log.json and conversation 1 of log.json would both write"
            ),
            "{ids}: {err}"
        );
        assert!(!out.exists(), "{ids}: nothing is written");
    }
}

/// An id, a model name or a flag that is not one safe path component stops the import before
/// any file is written, even when it is found in the last input file: `..` as a model used to
/// put the recordings beside `recorded/`, and `.hidden` made an agent `toolcall check` never
/// runs.
#[test]
fn import_refuses_unsafe_names_and_writes_nothing() {
    let dir = scratch("import-unsafe");
    let input = dir.join("logs");
    // `a.json` is fine and read first; the bad name is in `b.json`.
    write(
        &input.join("a.json"),
        &one_call_conversation(json!({"model": "gpt-4o"})),
    );
    for (extra, named) in [
        (json!({"model": ".."}), "model"),
        (json!({"model": ".hidden"}), "model"),
        (json!({"model": "evil\u{1b}[2J\nname"}), "model"),
        (json!({"model": "gpt-4o", "id": "../../etc"}), "id"),
        (json!({"model": "gpt-4o", "id": ""}), "id"),
        (json!({"model": "gpt-4o", "id": "a\u{0}b"}), "id"),
    ] {
        write(&input.join("b.json"), &one_call_conversation(extra.clone()));
        let out = dir.join("out");
        let options = ImportOptions {
            out: out.clone(),
            ..ImportOptions::default()
        };
        let err = import(&input, &options).unwrap_err().to_string();
        assert!(
            err.contains("b.json: conversation 0: its "),
            "{extra}: {err}"
        );
        assert!(err.contains(named), "{extra}: {err}");
        assert!(
            !err.contains(['\u{1b}', '\n', '\u{0}']),
            "{extra}: printed raw: {err}"
        );
        assert!(!out.exists(), "{extra}: nothing is written");
        assert!(
            !dir.join("b").exists() && !dir.join("etc").exists(),
            "{extra}"
        );
    }
    for agent in ["..", ".x", "a/b", ""] {
        let options = ImportOptions {
            out: dir.join("out"),
            agent: Some(agent.into()),
            ..ImportOptions::default()
        };
        write(&input.join("b.json"), &one_call_conversation(json!({})));
        let err = import(&input, &options).unwrap_err().to_string();
        assert!(err.starts_with("--agent: its value"), "{agent}: {err}");
    }
}

/// A file where a directory of the output must go is found while planning, so no case is
/// written without its recording.
#[test]
fn import_finds_a_file_in_the_way_before_writing() {
    let dir = scratch("import-in-the-way");
    let input = dir.join("log.json");
    write(&input, &one_call_conversation(json!({"model": "gpt-4o"})));
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("recorded")).unwrap();
    std::fs::write(out.join("recorded/gpt-4o"), "not a directory").unwrap();
    let options = ImportOptions {
        out: out.clone(),
        force: true,
        ..ImportOptions::default()
    };
    let err = import(&input, &options).unwrap_err().to_string();
    assert!(err.contains("is in the way of"), "{err}");
    assert!(!out.join("cases").exists(), "no case without its recording");
}

/// A name too long for a file system (a 300-character id in the second conversation) is found
/// while planning: the import used to fail writing it, after the first conversation's files
/// were written.
#[test]
fn import_refuses_a_name_too_long_before_writing() {
    let dir = scratch("import-too-long");
    let input = dir.join("log.json");
    write(
        &input,
        &json!([
            one_call_conversation(json!({"id": "first"})),
            one_call_conversation(json!({"id": "i".repeat(300)}))
        ]),
    );
    let out = dir.join("out");
    let options = ImportOptions {
        out: out.clone(),
        agent: Some("gpt-4o".into()),
        ..ImportOptions::default()
    };
    let err = import(&input, &options).unwrap_err().to_string();
    assert!(
        err.contains("conversation 1 of log.json would write")
            && err.contains("over the 255 a file system takes")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written");
}

/// A dangling link where an output file goes is a file there already: replaced only with
/// `force` (it used to be replaced without a word), and never written through.
#[cfg(unix)]
#[test]
fn import_counts_a_dangling_link_as_a_file_in_place() {
    let dir = scratch("import-dangling");
    let input = dir.join("log.json");
    write(&input, &one_call_conversation(json!({"id": "a"})));
    let out = dir.join("out");
    let case = out.join("cases/log/a-1.json");
    std::fs::create_dir_all(case.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere.json"), &case).unwrap();
    let options = ImportOptions {
        out: out.clone(),
        agent: Some("gpt-4o".into()),
        ..ImportOptions::default()
    };
    match import(&input, &options) {
        Err(RateError::WouldOverwrite { count: 1, first }) => assert_eq!(first, case),
        other => panic!("expected WouldOverwrite, got {other:?}"),
    }
    assert!(!out.join("recorded").exists(), "nothing is written");
    let forced = ImportOptions {
        force: true,
        ..options
    };
    assert_eq!(import(&input, &forced).unwrap().cases, 1);
    assert!(std::fs::symlink_metadata(&case).unwrap().is_file());
    assert!(!dir.join("nowhere.json").exists(), "not written through");
}
