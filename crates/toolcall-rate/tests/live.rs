//! Live mode's HTTP layer against a scripted loopback server (std `TcpListener` on 127.0.0.1:0):
//! request shapes, retries on 429/5xx, a repeated 500, the caps, recording and resume.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolcall_rate::live::{self, LiveOptions, LiveRun, Provider, RequestSettings, RetryPolicy};

/// One scripted answer.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    delay: Duration,
}

fn ok(body: Value) -> Reply {
    Reply {
        status: 200,
        headers: Vec::new(),
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

fn status(code: u16, body: &str) -> Reply {
    Reply {
        status: code,
        headers: Vec::new(),
        body: body.to_owned(),
        delay: Duration::ZERO,
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The scripted server: answers each connection with the next reply (418 once the script is
/// used up, so an unexpected request is visible), records every request, stops on drop.
struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut script = script.into_iter();
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let reply = script
                                .next()
                                .unwrap_or_else(|| status(418, "unscripted request"));
                            handle(stream, &reply, &seen);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        Server {
            base,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request, records it, then answers: recording comes first, because a client that
/// stops on this reply may ask for `seen()` before this thread would otherwise get to it.
fn handle(stream: TcpStream, reply: &Reply, seen: &Mutex<Vec<Seen>>) -> Option<()> {
    stream.set_nonblocking(false).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok()?;
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    seen.lock().unwrap().push(Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    std::thread::sleep(reply.delay);
    let mut stream = stream;
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(reply.body.as_bytes());
    let _ = stream.flush();
    Some(())
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("live")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `n` cases under DIR/cases: case-0 in Anthropic shape, the rest in OpenAI Chat shape.
fn cases(dir: &Path, n: usize) -> PathBuf {
    let cases = dir.join("cases");
    std::fs::create_dir_all(cases.join("billing")).unwrap();
    for i in 0..n {
        let case = if i == 0 {
            json!({
                "format": "anthropic",
                "about": "anthropic-shaped",
                "system": "You are the billing assistant.",
                "tools": [{"name": "get_balance", "description": "Current balance.",
                           "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}}}}],
                "messages": [
                    {"role": "user", "content": "balance of acc_1?"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_balance", "input": {"account_id": "acc_1"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12.00"}]},
                    {"role": "user", "content": "and acc_2?"}
                ]
            })
        } else {
            json!({
                "about": "openai-shaped",
                "tools": [{"type": "function", "function": {"name": "get_balance", "description": "Current balance.",
                           "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}}}}],
                "messages": [{"role": "system", "content": "You are the billing assistant."},
                             {"role": "user", "content": format!("balance of acc_{i}?")}]
            })
        };
        std::fs::write(
            cases.join(format!("billing/case-{i}.json")),
            serde_json::to_vec_pretty(&case).unwrap(),
        )
        .unwrap();
    }
    cases
}

fn chat(name: &str, tokens: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
           "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
             "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{\"account_id\":\"acc_2\"}"}}]}}],
           "usage": {"prompt_tokens": tokens - 10, "completion_tokens": 10, "total_tokens": tokens}})
}

fn message(name: &str) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
           "content": [{"type": "tool_use", "id": "toolu_9", "name": name, "input": {"account_id": "acc_2"}}],
           "usage": {"input_tokens": 40, "output_tokens": 10}})
}

fn options(
    provider: Provider,
    server: &Server,
    cases: PathBuf,
    record: Option<PathBuf>,
) -> LiveOptions {
    LiveOptions {
        provider,
        base_url: match provider {
            Provider::OpenAi => format!("{}/v1", server.base),
            Provider::Anthropic => server.base.clone(),
        },
        api_key: Some("sk-test".into()),
        cases,
        record_dir: record,
        fresh: false,
        max_requests: None,
        max_tokens: None,
        retry: RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(5),
            max_wait: Duration::from_secs(5),
        },
        timeout: Duration::from_secs(20),
        settings: RequestSettings {
            model: "test-model".into(),
            tool_choice: "auto".into(),
            max_output_tokens: None,
            temperature: None,
        },
        verbose: false,
    }
}

fn report(run: LiveRun) -> toolcall_rate::Report {
    toolcall_rate::Report::new(run.tally, toolcall_rate::Gate::default())
}

#[test]
fn openai_requests_have_the_provider_shape_and_responses_are_recorded_and_scored() {
    let dir = scratch("openai-ok");
    let cases = cases(&dir, 2);
    let record = dir.join("recorded/test-model");
    let server = Server::start(vec![
        ok(chat("get_balance", 100)),
        ok(chat("get_balances", 100)),
    ]);
    let run = live::run(&options(
        Provider::OpenAi,
        &server,
        cases,
        Some(record.clone()),
    ))
    .unwrap();
    assert_eq!(
        (run.asked, run.requests, run.tokens, run.failed),
        (2, 2, 200, 0)
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(request.body["model"], "test-model");
        assert_eq!(request.body["tool_choice"], "auto", "sent explicitly");
        assert_eq!(request.body["tools"][0]["type"], "function");
        assert_eq!(request.body["tools"][0]["function"]["name"], "get_balance");
        assert!(
            request.body.get("about").is_none(),
            "case keys are not sent"
        );
    }
    // case-0 was Anthropic-shaped: rebuilt as Chat messages, with the call and its result paired.
    let messages = seen[0].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(messages[2]["tool_calls"][0]["id"], "toolu_1");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"account_id\":\"acc_1\"}"
    );
    assert_eq!(messages[3]["tool_call_id"], "toolu_1");
    // case-1 was Chat-shaped: sent as written.
    assert_eq!(seen[1].body["messages"][1]["content"], "balance of acc_1?");
    // Recorded byte for byte.
    let recorded = std::fs::read_to_string(record.join("billing/case-1.json")).unwrap();
    assert_eq!(recorded, chat("get_balances", 100).to_string());
    let report = report(run);
    assert_eq!((report.responses, report.calls, report.unknown), (2, 2, 1));
    assert_eq!(report.distinct[0].name, "get_balances");
}

#[test]
fn anthropic_requests_have_the_messages_shape() {
    let dir = scratch("anthropic-ok");
    let cases = cases(&dir, 2);
    let server = Server::start(vec![ok(message("get_balance")), ok(message("lookup"))]);
    let run = live::run(&options(Provider::Anthropic, &server, cases, None)).unwrap();
    assert_eq!((run.asked, run.tokens), (2, 100));
    let seen = server.seen();
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    for request in &seen {
        assert_eq!(request.body["tool_choice"], json!({"type": "auto"}));
        assert_eq!(request.body["max_tokens"], 1024);
        assert_eq!(request.body["tools"][0]["name"], "get_balance");
        assert!(request.body["tools"][0]["input_schema"].is_object());
    }
    // case-1 was Chat-shaped: the system message became `system`, the user turn a user message.
    assert_eq!(seen[1].body["system"], "You are the billing assistant.");
    let messages = seen[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    let report = report(run);
    assert_eq!((report.calls, report.unknown), (2, 1));
}

#[test]
fn a_429_is_retried_after_the_retry_after_it_names() {
    let dir = scratch("retry-429");
    let cases = cases(&dir, 2);
    let mut limited = status(429, r#"{"error": {"message": "rate limited"}}"#);
    limited.headers.push(("retry-after", "1".into()));
    let server = Server::start(vec![
        limited,
        ok(chat("get_balance", 50)),
        ok(chat("get_balance", 50)),
    ]);
    let started = Instant::now();
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!((run.asked, run.requests, run.failed), (2, 3, 0));
    assert_eq!(server.seen().len(), 3);
    // The 5 ms backoff would be far shorter; the server said one second.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_5xx_is_retried_with_backoff_until_it_succeeds() {
    let dir = scratch("retry-503");
    let cases = cases(&dir, 1);
    let server = Server::start(vec![
        status(503, "overloaded"),
        status(502, "bad gateway"),
        ok(chat("get_balance", 50)),
    ]);
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!((run.asked, run.requests, run.failed), (1, 3, 0));
}

#[test]
fn a_repeated_500_is_a_clear_error_not_a_retry_storm() {
    let dir = scratch("repeated-500");
    let cases = cases(&dir, 1);
    let body = r#"{"error": {"code": 500, "message": "tool_choice not supported"}}"#;
    let server = Server::start(vec![
        status(500, body),
        status(500, body),
        status(500, body),
        status(500, body),
    ]);
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!(server.seen().len(), 2, "one retry, then stop");
    assert_eq!((run.failed, run.requests), (1, 2));
    let report = report(run);
    let error = &report.errors[0];
    assert!(
        error.contains("HTTP 500")
            && error.contains("repeated 500")
            && error.contains("tool_choice not supported"),
        "{error}"
    );
}

#[test]
fn a_client_error_is_not_retried_and_three_in_a_row_stop_the_run() {
    let dir = scratch("client-error");
    let cases = cases(&dir, 5);
    let server = Server::start(vec![status(400, "bad request"); 5]);
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!(server.seen().len(), 3);
    assert_eq!((run.failed, run.unasked), (3, 2));
    assert!(
        run.stopped
            .as_deref()
            .unwrap()
            .contains("3 cases in a row failed"),
        "{:?}",
        run.stopped
    );
}

#[test]
fn an_unauthorized_key_stops_the_run_at_once() {
    let dir = scratch("unauthorized");
    let cases = cases(&dir, 3);
    let server = Server::start(vec![status(401, "invalid api key"); 3]);
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!(server.seen().len(), 1);
    assert_eq!((run.failed, run.unasked), (1, 2));
    assert!(
        run.stopped.as_deref().unwrap().contains("HTTP 401"),
        "{:?}",
        run.stopped
    );
}

#[test]
fn the_request_cap_counts_retries_and_stops_cleanly() {
    let dir = scratch("request-cap");
    let cases = cases(&dir, 4);
    let server = Server::start(vec![
        ok(chat("get_balance", 50)),
        status(503, "busy"),
        ok(chat("get_balance", 50)),
        ok(chat("x", 50)),
    ]);
    let mut options = options(Provider::OpenAi, &server, cases, None);
    options.max_requests = Some(3);
    let run = live::run(&options).unwrap();
    assert_eq!(server.seen().len(), 3);
    assert_eq!((run.asked, run.unasked, run.requests), (2, 2, 3));
    assert!(
        run.stopped.as_deref().unwrap().contains("--max-requests 3"),
        "{:?}",
        run.stopped
    );
}

#[test]
fn the_token_cap_stops_before_the_next_case() {
    let dir = scratch("token-cap");
    let cases = cases(&dir, 4);
    let server = Server::start(vec![ok(chat("get_balance", 100)); 4]);
    let mut options = options(Provider::OpenAi, &server, cases, None);
    options.max_tokens = Some(150);
    let run = live::run(&options).unwrap();
    assert_eq!((run.asked, run.unasked, run.tokens), (2, 2, 200));
    assert!(
        run.stopped.as_deref().unwrap().contains("--max-tokens 150"),
        "{:?}",
        run.stopped
    );
}

#[test]
fn a_recorded_run_resumes_without_asking_again() {
    let dir = scratch("resume");
    let cases = cases(&dir, 3);
    let record = dir.join("recorded/m");
    // First run: capped after two cases.
    let first = Server::start(vec![ok(chat("get_balance", 10)), ok(chat("nope", 10))]);
    let mut opts = options(
        Provider::OpenAi,
        &first,
        cases.clone(),
        Some(record.clone()),
    );
    opts.max_requests = Some(2);
    let run = live::run(&opts).unwrap();
    assert_eq!((run.asked, run.unasked), (2, 1));
    drop(first);
    // Second run: only the third case is asked; the other two are scored from disk.
    let second = Server::start(vec![ok(chat("get_balance", 10))]);
    let run = live::run(&options(
        Provider::OpenAi,
        &second,
        cases.clone(),
        Some(record.clone()),
    ))
    .unwrap();
    assert_eq!((run.asked, run.resumed, run.requests), (1, 2, 1));
    assert_eq!(second.seen().len(), 1);
    assert_eq!(
        second.seen()[0].body["messages"][1]["content"],
        "balance of acc_2?"
    );
    let resumed = report(run);
    assert_eq!((resumed.responses, resumed.unknown), (3, 1));
    // --fresh asks everything again.
    let third = Server::start(vec![ok(chat("get_balance", 10)); 3]);
    let mut opts = options(Provider::OpenAi, &third, cases, Some(record));
    opts.fresh = true;
    let run = live::run(&opts).unwrap();
    assert_eq!((run.asked, run.resumed), (3, 0));
    assert_eq!(report(run).unknown, 0, "the recordings were overwritten");
}

#[test]
fn a_slow_first_response_is_waited_for() {
    let dir = scratch("slow");
    let cases = cases(&dir, 2);
    let mut slow = ok(chat("get_balance", 10));
    slow.delay = Duration::from_millis(1500);
    let server = Server::start(vec![slow, ok(chat("get_balance", 10))]);
    let mut options = options(Provider::OpenAi, &server, cases, None);
    options.timeout = Duration::from_secs(10);
    let run = live::run(&options).unwrap();
    assert_eq!((run.asked, run.requests, run.failed), (2, 2, 0));
}

#[test]
fn a_malformed_body_is_counted_and_not_recorded() {
    let dir = scratch("malformed");
    let cases = cases(&dir, 2);
    let record = dir.join("recorded/m");
    let server = Server::start(vec![
        status(200, "{\"choices\": [trunc"),
        ok(chat("get_balance", 10)),
    ]);
    let run = live::run(&options(
        Provider::OpenAi,
        &server,
        cases,
        Some(record.clone()),
    ))
    .unwrap();
    assert_eq!((run.asked, run.requests), (2, 2));
    assert!(!record.join("billing/case-0.json").exists());
    assert!(record.join("billing/case-1.json").exists());
    let report = report(run);
    assert_eq!((report.responses, report.bad_lines), (1, 1));
    assert!(
        report.errors[0].contains("billing/case-0") && report.errors[0].contains("not JSON"),
        "{:?}",
        report.errors
    );
}

/// Every bundled case, in whatever format it is written, becomes a request of each provider's
/// shape that reads back as the same catalog, transcript calls and results, and system prompt,
/// and as that provider's format.
#[test]
fn every_bundled_case_converts_to_both_request_shapes_without_loss() {
    use toolcall_score::{Case, Format};

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let mut paths = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                paths.push(path);
            }
        }
    }
    assert!(
        paths.len() >= 20,
        "found only {} bundled cases",
        paths.len()
    );
    let settings = RequestSettings {
        model: "m".into(),
        tool_choice: "auto".into(),
        max_output_tokens: None,
        temperature: None,
    };
    let summary = |case: &Case| {
        let tools: Vec<String> = case.catalog.names().map(str::to_owned).collect();
        let calls: Vec<String> = case.transcript.calls().map(|c| c.name.clone()).collect();
        let results = case.transcript.results().count();
        (tools, calls, results, case.system.is_empty())
    };
    for path in &paths {
        let raw: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let case = Case::from_value(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (name, body) in [
            (
                "openai",
                Format::OpenaiChat
                    .request_body(&raw, &case, &settings)
                    .expect("a Chat body"),
            ),
            (
                "anthropic",
                Format::Anthropic
                    .request_body(&raw, &case, &settings)
                    .expect("an Anthropic body"),
            ),
        ] {
            let back = Case::from_value(&body)
                .unwrap_or_else(|e| panic!("{} as {name}: {e}\n{body:#}", path.display()));
            assert_eq!(
                summary(&back),
                summary(&case),
                "{} as {name}:\n{body:#}",
                path.display()
            );
            // And it is really that provider's shape: an Ollama transcript sent as if it were
            // OpenAI Chat (object arguments, no ids) is rejected by an OpenAI server.
            if case.transcript.calls().next().is_some() {
                let expected = if name == "openai" {
                    toolcall_score::Format::OpenaiChat
                } else {
                    toolcall_score::Format::Anthropic
                };
                assert_eq!(
                    back.request_format,
                    Some(expected),
                    "{} as {name}:\n{body:#}",
                    path.display()
                );
            }
        }
    }
}

/// A Responses API case with an OpenAI custom (free-text) tool call rebuilds as Chat Completions
/// with the call still a custom call (same input) of a tool declared custom, its output paired
/// by id; and as Anthropic, where the text rides in the `tool_use` input.
#[test]
fn custom_tool_calls_are_rebuilt_as_custom_calls() {
    use toolcall_score::{Arguments, Case, Format};

    let raw = json!({
        "instructions": "Query the billing database with run_sql.",
        "tools": [
            {"type": "function", "name": "get_balance", "parameters": {"type": "object"}},
            {"type": "custom", "name": "run_sql", "description": "Runs one read-only SQL query."}
        ],
        "input": [
            {"role": "user", "content": "Last invoices of acc_17?"},
            {"type": "custom_tool_call", "call_id": "call_1", "name": "run_sql",
             "input": "SELECT id FROM invoices"},
            {"type": "custom_tool_call_output", "call_id": "call_1", "output": "inv_9"}
        ]
    });
    let case = Case::from_value(&raw).unwrap();
    let settings = RequestSettings {
        model: "m".into(),
        tool_choice: "auto".into(),
        max_output_tokens: None,
        temperature: None,
    };
    let body = Format::OpenaiChat
        .request_body(&raw, &case, &settings)
        .expect("a Chat body");
    assert_eq!(
        body["messages"][2]["tool_calls"],
        json!([{"id": "call_1", "type": "custom",
                "custom": {"name": "run_sql", "input": "SELECT id FROM invoices"}}])
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "inv_9"})
    );
    assert_eq!(
        body["tools"][1],
        json!({"type": "custom", "custom": {"name": "run_sql",
                                            "description": "Runs one read-only SQL query."}})
    );
    assert_eq!(body["tools"][0]["type"], "function");
    let back = Case::from_value(&body).unwrap();
    assert_eq!(back.request_format, Some(Format::OpenaiChat));
    assert_eq!(
        back.catalog.names().collect::<Vec<_>>(),
        ["get_balance", "run_sql"]
    );
    let calls: Vec<_> = back.transcript.calls().collect();
    assert_eq!(
        calls[0].arguments,
        Arguments::Text {
            text: "SELECT id FROM invoices".into()
        }
    );

    let body = Format::Anthropic
        .request_body(&raw, &case, &settings)
        .expect("an Anthropic body");
    assert_eq!(
        body["messages"][1]["content"][0]["input"],
        json!({"input": "SELECT id FROM invoices"})
    );
}

// --- llama.cpp's server (llama-cpp-python 0.3.36, `--chat_format chatml-function-calling`) -----
// The bodies under tests/fixtures/llama-cpp/ are the real server's, byte for byte, captured by
// `scripts/live-local` against SmolLM2-135M-Instruct.

fn llama_cpp(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/llama-cpp")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn raw(status: u16, body: String) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body,
        delay: Duration::ZERO,
    }
}

#[test]
fn llama_cpp_calls_are_read_from_tool_calls_and_a_disagreeing_legacy_field_is_reported() {
    let dir = scratch("llama-cpp-legacy");
    let cases = cases(&dir, 4);
    let invoices = json!({
        "tools": [{"type": "function", "function": {"name": "get_invoice", "parameters": {"type": "object",
                   "properties": {"invoice_id": {"type": "string"}}}}}],
        "messages": [{"role": "user", "content": "Is invoice in_1 paid?"}]
    });
    std::fs::write(cases.join("billing/case-3.json"), invoices.to_string()).unwrap();
    let record = dir.join("recorded/smollm2");
    // 1: `function_call.name` is `get_balance:` (the grammar's colon) beside `get_balance`.
    // 2: `function_call.name` is `list_invoices:`, the call the model wanted next, beside
    //    `get_balance`: a name the request does not define, which must not be scored as a call.
    // 3: a plain-text reply, which arrives as `content: ""`: no call, no text, not an error.
    // 4: arguments that are not JSON (a raw newline inside a string): a finding, not bad input.
    let bodies = [
        llama_cpp("tool-call-stray-colon.json"),
        llama_cpp("tool-call-legacy-names-the-next-call.json"),
        llama_cpp("text-reply-empty-content.json"),
        llama_cpp("tool-call-arguments-not-json.json"),
    ];
    let server = Server::start(bodies.iter().map(|b| raw(200, b.clone())).collect());
    let run = live::run(&options(
        Provider::OpenAi,
        &server,
        cases,
        Some(record.clone()),
    ))
    .unwrap();
    // The server ignores the tools unless tool_choice is sent: it always is.
    for request in server.seen() {
        assert_eq!(request.body["tool_choice"], "auto");
    }
    for (i, body) in bodies.iter().enumerate() {
        let recorded = std::fs::read_to_string(record.join(format!("billing/case-{i}.json")));
        assert_eq!(recorded.unwrap(), *body, "case-{i} recorded byte for byte");
    }
    assert_eq!(
        (run.asked, run.failed, run.tokens),
        (4, 0, 1035 + 687 + 1104 + 906)
    );
    let report = report(run);
    // Neither legacy name (`get_balance:`, `list_invoices:`) is counted as a call.
    assert_eq!((report.responses, report.calls, report.unknown), (4, 3, 0));
    assert!(report.distinct.is_empty(), "{:?}", report.distinct);
    assert!(report.in_text.is_empty(), "{:?}", report.in_text);
    assert_eq!(report.other_findings.get("legacy_mismatch"), Some(&3));
    assert_eq!(report.other_findings.get("arguments_not_json"), Some(&1));
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);
}

#[test]
fn llama_cpp_legacy_mismatch_says_what_the_server_did() {
    let case = toolcall_score::Case::from_json_str(
        &std::fs::read_to_string(
            cases(&scratch("llama-cpp-detail"), 2).join("billing/case-1.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let response = toolcall_score::Response::from_json_str(
        &llama_cpp("tool-call-stray-colon.json"),
        Some(toolcall_score::Format::OpenaiChat),
    )
    .unwrap();
    let verdict = toolcall_score::score(&case, &response);
    assert_eq!(verdict.fingerprint(), ["legacy_mismatch"]);
    let detail = &verdict.findings()[0].detail;
    assert!(
        detail.contains("`get_balance:`") && detail.contains("stray trailing colon"),
        "{detail}"
    );
}

#[test]
fn llama_cpp_500_for_an_unsupported_tool_choice_fails_clearly_without_a_retry_storm() {
    let dir = scratch("llama-cpp-500");
    let cases = cases(&dir, 4);
    let body = llama_cpp("error-500-tool-choice-required.json");
    let server = Server::start(vec![raw(500, body); 8]);
    let mut options = options(Provider::OpenAi, &server, cases, None);
    options.settings.tool_choice = "required".into();
    let run = live::run(&options).unwrap();
    // Each case: one retry of the 500, then a clear error; three such cases stop the run.
    assert_eq!(server.seen().len(), 6);
    assert_eq!((run.failed, run.unasked, run.requests), (3, 1, 6));
    assert!(run.stopped.as_deref().unwrap().contains("3 cases in a row"));
    let report = report(run);
    let error = &report.errors[0];
    assert!(
        error.contains("HTTP 500")
            && error.contains("internal_server_error")
            && error.contains("--tool-choice `required`"),
        "{error}"
    );
}

#[test]
fn llama_cpp_gets_empty_content_not_null_on_assistant_messages() {
    // The real server answers `"content": null` beside `tool_calls` with an HTTP 500 of pydantic
    // validation errors, and a missing `content` with a 500 from its chat template.
    let dir = scratch("llama-cpp-null-content");
    let cases = cases(&dir, 1);
    let written = json!({
        "tools": [{"type": "function", "function": {"name": "get_balance", "parameters": {"type": "object"}}}],
        "messages": [
            {"role": "user", "content": "balance of acc_1?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_balance", "arguments": "{\"account_id\":\"acc_1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "12.00"},
            {"role": "user", "content": "and acc_2?"}
        ]
    });
    std::fs::write(cases.join("billing/case-1.json"), written.to_string()).unwrap();
    let server = Server::start(vec![
        raw(200, llama_cpp("tool-call-stray-colon.json")),
        raw(200, llama_cpp("tool-call-stray-colon.json")),
    ]);
    let run = live::run(&options(Provider::OpenAi, &server, cases, None)).unwrap();
    assert_eq!((run.asked, run.failed), (2, 0));
    let seen = server.seen();
    // case-0 is rebuilt from an Anthropic-shaped case, case-1 is sent as written.
    for request in &seen {
        let assistant = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .unwrap();
        assert_eq!(assistant["content"], "", "{assistant}");
        assert!(assistant["tool_calls"].is_array());
    }
    assert_eq!(seen[1].body["messages"][2]["content"], "12.00");
}
