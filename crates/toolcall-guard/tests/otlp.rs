//! `--otlp` (feature `otlp`, run by `scripts/test`): each verdict reaches a stand-in collector
//! on loopback as a `gen_ai.evaluation.result` event of OTLP/HTTP JSON logs.

mod common;

use std::time::Duration;

use common::{client, config, start, upstream, Script};
use serde_json::Value;

#[tokio::test]
async fn each_verdict_is_an_evaluation_event_at_the_collector() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_wether","arguments":"{}"}}]}}]}"#;
    let script = Script::json(body);
    let up = upstream(move |_| script.clone()).await;
    let collector = upstream(|_| Script::json("{}")).await;
    let mut cfg = config(up.addr, "otlp");
    cfg.otlp = Some(format!("http://{}", collector.addr));
    let guard = start(cfg).await;
    let request = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}"#;
    let response = client()
        .post(guard.url("/v1/chat/completions"))
        .header("authorization", "Bearer sk-otlp-SECRET")
        .body(request)
        .send()
        .await
        .expect("send");
    assert_eq!(response.bytes().await.expect("body"), body.as_bytes());
    let mut seen = Vec::new();
    for _ in 0..200 {
        seen = collector.seen.lock().expect("lock").clone();
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    guard.stop().await;
    assert_eq!(seen.len(), 1, "one export");
    assert_eq!(seen[0].path, "/v1/logs");
    let text = String::from_utf8_lossy(&seen[0].body).into_owned();
    assert!(!text.contains("SECRET"), "no key in the export");
    let document: Value = serde_json::from_str(&text).expect("json");
    let record = &document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
    assert_eq!(record["eventName"], "gen_ai.evaluation.result");
    let attribute = |key: &str| {
        record["attributes"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["key"] == key))
            .map(|x| x["value"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        attribute("gen_ai.evaluation.name")["stringValue"],
        "toolcall.membership"
    );
    assert_eq!(
        attribute("gen_ai.evaluation.score.label")["stringValue"],
        "invented"
    );
    assert!(attribute("gen_ai.evaluation.explanation")["stringValue"]
        .as_str()
        .is_some_and(|e| e.contains("did you mean `get_weather`")));
}
