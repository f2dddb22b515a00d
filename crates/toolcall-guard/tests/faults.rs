//! The guard in front of a stand-in upstream on loopback: what passes byte for byte, what is
//! observed and blocked, and the faults (an upstream that fails, cuts or sends garbage, a client
//! that leaves, bodies over the limit, many streams at once, keys that must never be written).

mod common;

use std::time::Duration;

use common::{client, config, pieces, start, upstream, Script};
use serde_json::{json, Value};
use toolcall_guard::Action;

const CHAT_REQUEST: &str = r#"{"model":"gpt-4o-mini","stream":false,
 "messages":[{"role":"user","content":"Weather in Paris?"}],
 "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather by city",
   "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}"#;

fn chat_body(name: &str) -> String {
    json!({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
      "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
        "tool_calls":[{"id":"call_1","type":"function","function":{"name":name,"arguments":"{\"city\":\"Paris\"}"}}]}}]})
    .to_string()
}

fn chat_stream(name: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",
              "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        )
    };
    [
        chunk(json!({"role":"assistant","content":"Checking "}), Value::Null),
        chunk(json!({"content":"the weather."}), Value::Null),
        chunk(
            json!({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":name,"arguments":""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

async fn post(url: &str, body: &str) -> reqwest::Response {
    client()
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test-KEY-0001")
        .body(body.to_owned())
        .send()
        .await
        .expect("send")
}

#[tokio::test]
async fn a_clean_body_passes_byte_identical_and_is_logged_for_rate() {
    let body = chat_body("get_weather");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "clean_body")).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.expect("body"), body.as_bytes());
    let seen = up.seen.lock().expect("lock")[0].clone();
    assert_eq!(
        seen.body,
        CHAT_REQUEST.as_bytes(),
        "the request went on as sent"
    );
    assert!(seen
        .headers
        .iter()
        .any(|(k, v)| k == "authorization" && v == "Bearer sk-test-KEY-0001"));
    guard_lines_say(guard, |lines| {
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert_eq!(line["verdict"], "pass");
        assert_eq!(line["route"], "openai-chat");
        assert_eq!(line["model"], "gpt-4o-mini");
        assert_eq!(line["calls"], 1);
        assert_eq!(line["format"], "openai-chat");
        assert!(line["request"]["tools"].is_array() && line["response"]["choices"].is_array());
        assert!(line["latency_added_ms"]
            .as_f64()
            .is_some_and(|ms| ms >= 0.0));
    })
    .await;
}

async fn guard_lines_say(guard: common::Guard, check: impl FnOnce(&[Value])) {
    let log = guard.log.clone();
    guard.stop().await;
    let text = std::fs::read_to_string(log.expect("log")).expect("log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole JSON lines"))
        .collect();
    check(&lines);
}

#[tokio::test]
async fn an_unknown_name_in_a_body_is_observed_or_blocked_in_the_providers_shape() {
    let body = chat_body("get_wether");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "unknown_observe")).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.bytes().await.expect("body"), body.as_bytes());
    guard_lines_say(guard, |lines| {
        assert_eq!(lines[0]["verdict"], "unknown");
        assert_eq!(lines[0]["action"], "none");
        let finding = &lines[0]["findings"][0];
        assert_eq!(finding["name"], "get_wether");
        assert_eq!(finding["cause"], "invented");
        assert_eq!(finding["suggestions"], json!(["get_weather"]));
    })
    .await;

    let mut blocking = config(up.addr, "unknown_block");
    blocking.action = Action::Block;
    let guard = start(blocking).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 422);
    let error: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    let message = error["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("`get_wether`") && message.contains("get_weather"),
        "{message}"
    );
    assert_eq!(error["error"]["code"], "toolcall_unknown_tool");
    guard_lines_say(guard, |lines| assert_eq!(lines[0]["action"], "block")).await;
}

#[tokio::test]
async fn anthropic_gets_its_own_error_shape() {
    let body = json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
        "stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_1","name":"get_invoices","input":{}}]})
    .to_string();
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let mut blocking = config(up.addr, "anthropic_block");
    blocking.action = Action::Block;
    let guard = start(blocking).await;
    let request = r#"{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
      "tools":[{"name":"get_invoice","description":"d","input_schema":{"type":"object"}}]}"#;
    let response = post(&guard.url("/v1/messages"), request).await;
    assert_eq!(response.status(), 422);
    let error: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    assert_eq!(error["type"], "error");
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("get_invoices") && m.contains("get_invoice")));
    guard.stop().await;
}

#[tokio::test]
async fn a_stream_passes_byte_identical_at_any_chunking_and_is_decided_on_the_name() {
    for size in [1usize, 7, 64, 4096] {
        let text = chat_stream("get_wether");
        let script = Script::sse(pieces(text.as_bytes(), size));
        let up = upstream(move |_| script.clone()).await;
        let guard = start(config(up.addr, &format!("stream_observe_{size}"))).await;
        let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
        assert_eq!(
            response.bytes().await.expect("body"),
            text.as_bytes(),
            "pieces of {size}"
        );
        let name_at = text.find("get_wether").expect("name");
        guard_lines_say(guard, |lines| {
            let line = &lines[0];
            assert_eq!(line["verdict"], "unknown", "{line}");
            assert_eq!(line["stream"], true);
            let decided = line["decided_at_byte"].as_u64().expect("decided") as usize;
            assert!(decided > name_at, "decided at {decided}, name at {name_at}");
            // The name is complete at the end of the event after it (its first arguments).
            let args = text.find("{\\\"city\\\":").expect("arguments");
            let after = args + text[args..].find("\n\n").expect("its end") + 2;
            assert_eq!(decided, after, "decided at {decided} of {}", text.len());
            assert_eq!(line["stream_bytes"].as_u64(), Some(text.len() as u64));
            assert_eq!(
                line["response"].as_str(),
                Some(text.as_str()),
                "rate reads it"
            );
        })
        .await;
    }
}

#[tokio::test]
async fn a_blocked_stream_never_sends_the_name_and_ends_in_the_error_event() {
    for size in [1usize, 13, 4096] {
        let text = chat_stream("get_wether");
        let script = Script::sse(pieces(text.as_bytes(), size));
        let up = upstream(move |_| script.clone()).await;
        let mut blocking = config(up.addr, &format!("stream_block_{size}"));
        blocking.action = Action::Block;
        let guard = start(blocking).await;
        let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
        assert_eq!(response.status(), 200);
        let got = String::from_utf8(response.bytes().await.expect("body").to_vec()).expect("utf8");
        let call = text.find("tool_calls").expect("the call");
        let before = &text[..text[..call].rfind("data: ").expect("its event")];
        assert!(
            got.starts_with(before),
            "the text before the call went on: {got}"
        );
        let rest = &got[before.len()..];
        assert!(rest.starts_with("data: {\"error\":"), "{rest}");
        assert!(!rest.contains("\"name\":\"get_wether\""), "{rest}");
        assert!(
            rest.ends_with("\n\n") && rest.matches("data:").count() == 1,
            "{rest}"
        );
        guard_lines_say(guard, |lines| {
            assert_eq!(lines[0]["action"], "block");
            assert_eq!(lines[0]["end"], "blocked");
        })
        .await;
    }
    // A clean stream under `block` is byte-identical too.
    let text = chat_stream("get_weather");
    let script = Script::sse(pieces(text.as_bytes(), 5));
    let up = upstream(move |_| script.clone()).await;
    let mut blocking = config(up.addr, "stream_block_clean");
    blocking.action = Action::Block;
    let guard = start(blocking).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.bytes().await.expect("body"), text.as_bytes());
    guard_lines_say(guard, |lines| assert_eq!(lines[0]["verdict"], "pass")).await;
}

#[tokio::test]
async fn upstream_errors_and_statuses_pass_through_unchanged() {
    for (status, body) in [
        (
            500u16,
            r#"{"error":{"message":"The server had an error","type":"server_error"}}"#,
        ),
        (
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        ),
    ] {
        let mut script = Script::new(status, "application/json", vec![body.as_bytes().to_vec()]);
        script.headers.push(("retry-after".into(), "7".into()));
        let up = upstream(move |_| script.clone()).await;
        let guard = start(config(up.addr, &format!("status_{status}"))).await;
        let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["retry-after"], "7");
        assert_eq!(response.bytes().await.expect("body"), body.as_bytes());
        guard_lines_say(guard, |lines| {
            assert_eq!(lines[0]["verdict"], "upstream_status");
            assert_eq!(lines[0]["status"], status);
        })
        .await;
    }
    // No upstream at all: a 502 in the provider's shape.
    let mut gone = config("127.0.0.1:9".parse().expect("addr"), "status_unreachable");
    gone.connect_timeout = Duration::from_secs(2);
    let guard = start(gone).await;
    let response = post(&guard.url("/v1/messages"), "{}").await;
    assert_eq!(response.status(), 502);
    let error: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    assert_eq!(error["type"], "error");
    guard.stop().await;
}

#[tokio::test]
async fn garbage_passes_through_as_unread_unless_fail_closed() {
    let garbage = "<html>upstream proxy error</html>";
    let script = Script::json(garbage);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "garbage_open")).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.expect("body"), garbage.as_bytes());
    guard_lines_say(guard, |lines| {
        assert_eq!(lines[0]["verdict"], "unread");
        assert_eq!(lines[0]["action"], "pass_unread");
        assert!(lines[0]["unread"]
            .as_str()
            .is_some_and(|w| w.contains("does not read")));
    })
    .await;
    let mut closed = config(up.addr, "garbage_closed");
    closed.fail_closed = true;
    let guard = start(closed).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 502);
    guard.stop().await;
    // A request that is no request of its format passes too, unread.
    let body = chat_body("get_weather");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "garbage_request")).await;
    let response = post(&guard.url("/v1/chat/completions"), "not json").await;
    assert_eq!(response.bytes().await.expect("body"), body.as_bytes());
    guard_lines_say(guard, |lines| assert_eq!(lines[0]["verdict"], "unread")).await;
}

#[tokio::test]
async fn an_upstream_that_closes_mid_stream_is_a_cut_stream_for_the_client() {
    let text = chat_stream("get_weather");
    let mut script = Script::sse(vec![text.as_bytes()[..120].to_vec()]);
    script.cut = true;
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "cut")).await;
    let mut response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    let mut got = Vec::new();
    let mut failed = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => got.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the client must see the body cut, not a clean end");
    assert_eq!(got, text.as_bytes()[..120]);
    guard_lines_say(guard, |lines| {
        assert_eq!(lines[0]["end"], "upstream_closed")
    })
    .await;
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_ends_the_exchange_and_the_guard_goes_on() {
    let text = chat_stream("get_weather");
    let mut script = Script::sse(pieces(text.as_bytes(), 40));
    script.pause = Duration::from_millis(50);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "client_leaves")).await;
    let mut response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    let _ = response.chunk().await.expect("first chunk");
    drop(response);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(again.bytes().await.expect("body"), text.as_bytes());
    guard_lines_say(guard, |lines| {
        assert!(
            lines.iter().any(|l| l["end"] == "client_closed"),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l["end"] == "complete"));
    })
    .await;
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_or_passed_unread() {
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(5000));
    let script = Script::json(&big);
    let up = upstream(move |_| script.clone()).await;
    let mut small = config(up.addr, "limit");
    small.max_body_bytes = 2000;
    let guard = start(small).await;
    let response = post(&guard.url("/v1/chat/completions"), &big).await;
    assert_eq!(response.status(), 413);
    assert!(up.seen.lock().expect("lock").is_empty(), "not forwarded");
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.expect("body"), big.as_bytes());
    guard_lines_say(guard, |lines| {
        assert_eq!(lines[0]["verdict"], "unread");
        assert!(lines[0]["unread"]
            .as_str()
            .is_some_and(|w| w.contains("limit")));
    })
    .await;
}

#[tokio::test]
async fn two_hundred_concurrent_streams_each_pass_whole() {
    let text = chat_stream("get_weather");
    let mut script = Script::sse(pieces(text.as_bytes(), 50));
    script.pause = Duration::from_millis(5);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "concurrent")).await;
    let url = guard.url("/v1/chat/completions");
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            post(&url, CHAT_REQUEST).await.bytes().await.expect("body")
        }));
    }
    for task in tasks {
        assert_eq!(task.await.expect("task"), text.as_bytes());
    }
    guard_lines_say(guard, |lines| {
        assert_eq!(lines.len(), 200);
        assert!(lines.iter().all(|l| l["verdict"] == "pass"));
    })
    .await;
}

#[tokio::test]
async fn a_key_is_forwarded_and_never_written() {
    let body = chat_body("get_wether");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let cfg = config(up.addr, "keys");
    let dir = cfg
        .log
        .as_ref()
        .and_then(|l| l.parent())
        .expect("dir")
        .to_path_buf();
    let guard = start(cfg).await;
    let key = "sk-ant-SECRET-7f3a9c";
    for (path, header) in [
        ("/v1/chat/completions", "authorization"),
        (
            "/v1/chat/completions?api-key=sk-ant-SECRET-7f3a9c",
            "x-api-key",
        ),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent?key=sk-ant-SECRET-7f3a9c",
            "x-goog-api-key",
        ),
    ] {
        let response = client()
            .post(guard.url(path))
            .header(header, key)
            .body(CHAT_REQUEST)
            .send()
            .await
            .expect("send");
        let _ = response.bytes().await;
    }
    let seen = up.seen.lock().expect("lock").clone();
    assert!(
        seen.iter().all(|s| s.headers.iter().any(|(_, v)| v == key)),
        "forwarded"
    );
    assert!(seen[2].path.contains(key), "the query went on");
    guard.stop().await;
    let mut written = 0;
    for entry in std::fs::read_dir(&dir).expect("dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("file");
        written += bytes.len();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("SECRET-7f3a9c"),
            "{} holds the key",
            path.display()
        );
    }
    assert!(written > 0, "the log was written");
}

#[tokio::test]
async fn a_token_is_required_when_one_is_set() {
    let body = chat_body("get_weather");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let mut cfg = config(up.addr, "token");
    cfg.token = Some("guard-secret".into());
    let guard = start(cfg).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 401);
    let response = client()
        .post(guard.url("/v1/chat/completions"))
        .header(toolcall_guard::TOKEN_HEADER, "guard-secret")
        .body(CHAT_REQUEST)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), 200);
    let seen = up.seen.lock().expect("lock").clone();
    assert!(
        seen[0]
            .headers
            .iter()
            .all(|(k, _)| k != toolcall_guard::TOKEN_HEADER),
        "the guard's token is not the upstream's business"
    );
    guard.stop().await;
}

#[tokio::test]
async fn a_stop_drains_the_streams_in_flight_and_leaves_whole_lines() {
    let text = chat_stream("get_weather");
    let mut script = Script::sse(pieces(text.as_bytes(), 60));
    script.pause = Duration::from_millis(60);
    let up = upstream(move |_| script.clone()).await;
    let guard = start(config(up.addr, "drain")).await;
    let url = guard.url("/v1/chat/completions");
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            post(&url, CHAT_REQUEST).await.bytes().await.expect("body")
        }));
    }
    while up.seen.lock().expect("lock").len() < 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let log = guard.log.clone().expect("log");
    guard.stop().await;
    for task in tasks {
        assert_eq!(
            task.await.expect("task"),
            text.as_bytes(),
            "drained, not cut"
        );
    }
    let text = std::fs::read_to_string(log).expect("log");
    assert_eq!(text.lines().count(), 5);
    assert!(text.ends_with('\n'));
}

#[tokio::test]
async fn metrics_count_responses_unknown_names_and_actions() {
    let body = chat_body("get_wether");
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let mut blocking = config(up.addr, "metrics");
    blocking.action = Action::Block;
    let guard = start(blocking).await;
    let _ = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    let text = client()
        .get(guard.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for line in [
        "toolcall_guard_responses_total{route=\"openai-chat\",verdict=\"unknown\"} 1",
        "toolcall_guard_unknown_calls_total{route=\"openai-chat\",name=\"get_wether\",cause=\"invented\"} 1",
        "toolcall_guard_actions_total{action=\"block\"} 1",
        "toolcall_guard_calls_total{route=\"openai-chat\"} 1",
        "toolcall_guard_added_seconds_count 1",
    ] {
        assert!(text.contains(line), "{line} in:\n{text}");
    }
    guard.stop().await;
}

#[tokio::test]
async fn a_name_in_the_last_event_of_an_ndjson_stream_is_blocked_when_it_ends() {
    let text = concat!(
        "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"Let me look.\"},\"done\":false}\n",
        "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_wether\",\"arguments\":{\"city\":\"Paris\"}}}]},\"done\":true,\"done_reason\":\"stop\"}\n",
    );
    let script = Script::new(200, "application/x-ndjson", pieces(text.as_bytes(), 9));
    let up = upstream(move |_| script.clone()).await;
    let mut blocking = config(up.addr, "ndjson_block");
    blocking.action = Action::Block;
    let guard = start(blocking).await;
    let request = r#"{"model":"llama3.2","messages":[{"role":"user","content":"Weather?"}],
      "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}"#;
    let response = post(&guard.url("/api/chat"), request).await;
    let got = String::from_utf8(response.bytes().await.expect("body").to_vec()).expect("utf8");
    let first = text.lines().next().expect("first line");
    assert!(got.starts_with(&format!("{first}\n")), "{got}");
    assert!(!got.contains("\"name\":\"get_wether\""), "{got}");
    let last: Value = serde_json::from_str(got.lines().last().expect("a line")).expect("json");
    assert!(
        last["error"]
            .as_str()
            .is_some_and(|e| e.contains("get_wether")),
        "{got}"
    );
    guard_lines_say(guard, |lines| assert_eq!(lines[0]["action"], "block")).await;
}

#[tokio::test]
async fn record_writes_each_exchange_as_a_case_and_its_recording() {
    let text = chat_stream("get_wether");
    let clean = chat_body("get_weather");
    let (stream_script, body_script) = (
        Script::sse(pieces(text.as_bytes(), 9)),
        Script::json(&clean),
    );
    let up = upstream(move |seen| {
        if String::from_utf8_lossy(&seen.body).contains("\"stream\":true") {
            stream_script.clone()
        } else {
            body_script.clone()
        }
    })
    .await;
    let streamed = CHAT_REQUEST.replace("\"stream\":false", "\"stream\":true");
    for unknown_only in [false, true] {
        let name = format!("record_{unknown_only}");
        let dir = common::scratch(&name).join("suite");
        let mut cfg = config(up.addr, &format!("{name}_log"));
        cfg.record = Some(dir.clone());
        cfg.record_agent = "my-agent".into();
        cfg.record_unknown_only = unknown_only;
        let guard = start(cfg).await;
        let _ = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST)
            .await
            .bytes()
            .await;
        let _ = post(&guard.url("/v1/chat/completions"), &streamed)
            .await
            .bytes()
            .await;
        guard.stop().await;
        let cases: Vec<_> = std::fs::read_dir(dir.join("cases/guard"))
            .expect("cases")
            .map(|e| e.expect("entry").path())
            .collect();
        assert_eq!(cases.len(), if unknown_only { 1 } else { 2 }, "{cases:?}");
        let mut verdicts = Vec::new();
        for case_path in cases {
            let id = case_path
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned();
            let case = toolcall_score::Case::load(&case_path).expect("a case");
            let recorded = dir.join("recorded/my-agent/guard");
            let response_path = ["json", "sse"]
                .iter()
                .map(|ext| recorded.join(format!("{id}.{ext}")))
                .find(|p| p.is_file())
                .expect("its recording");
            let response = toolcall_score::Response::load(&response_path, None).expect("reads");
            let verdict = toolcall_score::score(&case, &response);
            verdicts.push((
                response_path.extension().map(|e| e.to_owned()),
                verdict.is_pass(),
            ));
        }
        verdicts.sort_by_key(|(ext, _)| ext.clone());
        if unknown_only {
            assert_eq!(verdicts, [(Some("sse".into()), false)]);
        } else {
            assert_eq!(
                verdicts,
                [(Some("json".into()), true), (Some("sse".into()), false)]
            );
        }
    }
}

#[tokio::test]
async fn repair_asks_again_with_the_error_result_paired_by_id() {
    let bad = chat_body("get_wether");
    let good = chat_body("get_weather");
    let (bad2, good2) = (bad.clone(), good.clone());
    let up = upstream(move |seen| {
        let request: Value = serde_json::from_slice(&seen.body).expect("json");
        let answered = request["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        Script::json(if answered { &good2 } else { &bad2 })
    })
    .await;
    let mut repairing = config(up.addr, "repair_chat");
    repairing.action = Action::Repair;
    let guard = start(repairing).await;
    let response = post(&guard.url("/v1/chat/completions"), CHAT_REQUEST).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.bytes().await.expect("body"),
        good.as_bytes(),
        "the second answer"
    );
    let seen = up.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 2);
    let again: Value = serde_json::from_slice(&seen[1].body).expect("json");
    let messages = again["messages"].as_array().expect("messages");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "get_wether"
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_1", "paired by id");
    let text = messages[2]["content"].as_str().expect("text");
    assert!(
        text.contains("get_weather"),
        "it names the available tools: {text}"
    );
    assert!(
        seen[1]
            .headers
            .iter()
            .any(|(k, v)| k == "authorization" && v.contains("KEY-0001")),
        "the repair carries the client's key"
    );
    guard_lines_say(guard, |lines| {
        assert_eq!(lines[0]["action"], "repair");
        assert_eq!(lines[0]["repairs"], 1);
        assert_eq!(lines[0]["verdict"], "unknown", "what the model first did");
    })
    .await;
}

#[tokio::test]
async fn repair_gives_up_on_the_second_unknown_name_as_the_loop_guard_does() {
    let body = json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
        "stop_reason":"tool_use","content":[{"type":"text","text":"Looking."},
            {"type":"tool_use","id":"toolu_1","name":"get_invoices","input":{}}]})
    .to_string();
    let script = Script::json(&body);
    let up = upstream(move |_| script.clone()).await;
    let mut repairing = config(up.addr, "repair_gives_up");
    repairing.action = Action::Repair;
    let guard = start(repairing).await;
    let request = r#"{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
      "tools":[{"name":"get_invoice","description":"d","input_schema":{"type":"object"}}]}"#;
    let response = post(&guard.url("/v1/messages"), request).await;
    assert_eq!(response.status(), 422);
    let error: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    let message = error["error"]["message"].as_str().expect("message");
    assert!(message.contains("the repair gave up"), "{message}");
    let seen = up.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 2, "the original and one repair");
    let again: Value = serde_json::from_slice(&seen[1].body).expect("json");
    let last = &again["messages"][2];
    assert_eq!(again["messages"][1]["role"], "assistant");
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(last["content"][0]["is_error"], true);
    guard.stop().await;
}
