//! Real clients through the guard (feature `sdk-tier`): the official `openai` and `anthropic`
//! Python SDKs from PyPI (pinned, installed by `scripts/test` into `.cache/venv`, found through
//! `ATP_MCP_VENV`) pointed at the guard by their base URL, in front of a stand-in upstream that
//! answers with recorded real exchanges of `../shared/external/provider-cassettes`
//! (`ATP_PROVIDER_CASSETTES_DIR`; streams sent one recorded event a chunk). Per API (Chat
//! Completions, Responses, Messages), a body and a stream:
//!
//! - clean: the SDK parses the response and sees the recorded calls; a body is byte-identical;
//! - renamed (the called tools no longer defined), `observe`: the SDK still gets the response;
//! - renamed, `block`: the SDK raises its own error type, naming the unknown tool.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use common::{config, start, upstream, Script};
use serde_json::{json, Value};
use toolcall_guard::Action;

struct Pair {
    label: String,
    sdk: &'static str,
    api: &'static str,
    stream: bool,
    request: Value,
    called: Vec<String>,
    content_type: &'static str,
    chunks: Vec<Vec<u8>>,
}

fn env_dir(var: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} must be set (the SDK tier: scripts/test installs the SDKs, .ci/run sets the data)")
    }))
}

fn sse_events(text: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for i in 0..text.len() {
        if i + 2 <= text.len() && &text[i..i + 2] == b"\n\n" && i + 2 > start {
            chunks.push(text[start..i + 2].to_vec());
            start = i + 2;
        }
    }
    if start < text.len() {
        chunks.push(text[start..].to_vec());
    }
    chunks
}

/// The first recorded pair of each (format, stream) with client calls, a tools array and a
/// request that asked for what was recorded.
fn pairs() -> Vec<Pair> {
    let root = env_dir("ATP_PROVIDER_CASSETTES_DIR");
    let wanted = [
        ("openai-chat", false, "openai", "chat"),
        ("openai-chat", true, "openai", "chat"),
        ("openai-responses", false, "openai", "responses"),
        ("openai-responses", true, "openai", "responses"),
        ("anthropic", false, "anthropic", "messages"),
        ("anthropic", true, "anthropic", "messages"),
    ];
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("provider-cassettes")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    folders.sort();
    let mut found = Vec::new();
    for (format, stream, sdk, api) in wanted {
        'search: for folder in &folders {
            let manifest: Value = serde_json::from_slice(
                &std::fs::read(folder.join("manifest.json")).expect("manifest"),
            )
            .expect("json");
            let entries = manifest
                .as_array()
                .cloned()
                .or_else(|| manifest["pairs"].as_array().cloned())
                .unwrap_or_default();
            for e in entries {
                let uri = e["uri"].as_str().unwrap_or("");
                if e["format"] != format
                    || e["stream"].as_bool() != Some(stream)
                    || e["called"].as_array().is_none_or(Vec::is_empty)
                    || e["expect_error"].as_bool() == Some(true)
                    || !(uri.starts_with("https://api.openai.com/")
                        || uri.starts_with("https://api.anthropic.com/"))
                {
                    continue;
                }
                let dir = folder.join(e["dir"].as_str().expect("dir"));
                let request: Value = serde_json::from_slice(
                    &std::fs::read(dir.join(e["request_file"].as_str().expect("req")))
                        .expect("request"),
                )
                .expect("json");
                if !request["tools"].is_array()
                    || (request["stream"].as_bool() == Some(true)) != stream
                {
                    continue;
                }
                let file = e["response_file"].as_str().expect("file");
                let body = std::fs::read(dir.join(file)).expect("response");
                let (content_type, chunks) = if stream {
                    ("text/event-stream", sse_events(&body))
                } else {
                    ("application/json", vec![body])
                };
                found.push(Pair {
                    label: format!(
                        "{}/{}",
                        folder.file_name().unwrap_or_default().to_string_lossy(),
                        e["id"].as_str().unwrap_or("")
                    ),
                    sdk,
                    api,
                    stream,
                    request,
                    called: e["called"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                    content_type,
                    chunks,
                });
                break 'search;
            }
        }
    }
    assert_eq!(
        found.len(),
        wanted.len(),
        "a pair for each API, body and stream"
    );
    found
}

fn rename(value: &Value, names: &[String]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) if k == "name" && names.contains(s) => {
                            Value::String(format!("{s}_retired"))
                        }
                        other => rename(other, names),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| rename(v, names)).collect()),
        other => other.clone(),
    }
}

/// Runs the SDK script over `scenarios`; one result each, by name.
fn run_clients(scenarios: &[Value]) -> Vec<Value> {
    let venv = env_dir("ATP_MCP_VENV");
    let python = venv.join("bin").join("python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/clients.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(Value::Array(scenarios.to_vec()).to_string())
        .env("NO_PROXY", "127.0.0.1")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "the SDK script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a result line"))
        .collect()
}

fn decode(b64: &str) -> Vec<u8> {
    // The script's base64, standard alphabet with padding.
    let table = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            _ => 63,
        }
    };
    let mut out = Vec::new();
    for group in b64.as_bytes().chunks(4) {
        let pad = group.iter().filter(|&&c| c == b'=').count();
        let n = group
            .iter()
            .map(|&c| if c == b'=' { 0 } else { table(c) })
            .fold(0u32, |acc, v| (acc << 6) | v);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdks_see_their_own_responses_and_errors_through_the_guard() {
    let pairs = Arc::new(pairs());
    let served = pairs.clone();
    let up = upstream(move |seen| {
        let i: usize = seen
            .headers
            .iter()
            .find(|(k, _)| k == "x-pair")
            .and_then(|(_, v)| v.parse().ok())
            .expect("x-pair");
        Script::new(200, served[i].content_type, served[i].chunks.clone())
    })
    .await;
    let observe = start(config(up.addr, "sdk_observe")).await;
    let mut blocking = config(up.addr, "sdk_block");
    blocking.action = Action::Block;
    let block = start(blocking).await;

    let mut scenarios = Vec::new();
    for (i, pair) in pairs.iter().enumerate() {
        let renamed = rename(&pair.request, &pair.called);
        for (mode, base, request) in [
            ("clean", observe.url(""), &pair.request),
            ("observe", observe.url(""), &renamed),
            ("block", block.url(""), &renamed),
        ] {
            scenarios.push(json!({
                "name": format!("{mode} {} {}", pair.api, if pair.stream { "stream" } else { "body" }),
                "sdk": pair.sdk, "api": pair.api, "stream": pair.stream,
                "base_url": base, "request": request, "pair": i,
            }));
        }
    }
    let results = tokio::task::spawn_blocking(move || run_clients(&scenarios))
        .await
        .expect("clients");
    observe.stop().await;
    block.stop().await;

    let mut failures = Vec::new();
    for (n, result) in results.iter().enumerate() {
        let pair = &pairs[n / 3];
        let name = result["name"].as_str().unwrap_or("");
        let names: Vec<String> = result["names"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let sees_calls = pair.called.iter().all(|c| names.contains(c));
        let ok = match n % 3 {
            0 | 1 => {
                let bytes_ok = pair.stream
                    || result["body"]
                        .as_str()
                        .is_some_and(|b| decode(b) == pair.chunks.concat());
                result["ok"] == true && sees_calls && bytes_ok
            }
            _ => {
                let class = result["error"].as_str().unwrap_or("");
                let expected_sdk = format!("{}.", pair.sdk);
                let message = result["message"].as_str().unwrap_or("");
                result["ok"] == false
                    && class.starts_with(&expected_sdk)
                    && (pair.stream || class.ends_with("UnprocessableEntityError"))
                    && pair.called.iter().any(|c| message.contains(c.as_str()))
            }
        };
        println!(
            "{name} ({}): {}",
            pair.label,
            if ok { "ok" } else { "FAILED" }
        );
        if !ok {
            failures.push(format!("{name} ({}): {result}", pair.label));
        }
    }
    assert_eq!(results.len(), pairs.len() * 3);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
