//! Real recorded traffic through the guard (feature `external-data`, run by `.ci/run`): every
//! pair of `../shared/external/provider-cassettes` (a request as sent and the response as
//! recorded, from seven projects' VCR cassettes) and every response of
//! `../shared/external/vercel-ai` (the Vercel AI SDK's provider fixtures, their streams with the
//! chunk boundaries as recorded, the request built from the pair's `tools.json`), served by a
//! stand-in upstream in chunks as they were sent, read where they are (`ATP_PROVIDER_CASSETTES_DIR`,
//! `ATP_VERCEL_AI_DIR`), never copied.
//!
//! Per pair: clean, the response passes byte-identical and its verdict is a pass with the
//! manifest's calls; with the called tools renamed in the request, `observe` passes it
//! byte-identical with the verdict `unknown`, and `block` answers with the provider's error (a
//! body: 422 in its shape; a stream: what preceded the call's event, then its error event).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{client, config, start, upstream, Script};
use serde_json::{json, Value};
use toolcall_guard::Action;

/// One exchange to replay.
#[derive(Clone)]
struct Pair {
    id: String,
    format: String,
    path: String,
    request: Value,
    called: Vec<String>,
    content_type: &'static str,
    chunks: Vec<Vec<u8>>,
    stream: bool,
}

fn dir(var: &str) -> PathBuf {
    let dir = std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} must name the folder (this suite is the external-data tier: .ci/run sets it)")
    });
    PathBuf::from(dir)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A recorded SSE text cut at its events' ends: one chunk per event, as a server flushes them.
fn sse_events(text: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        let end = if text[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else if text[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else {
            None
        };
        match end {
            Some(end) => {
                chunks.push(text[start..end].to_vec());
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if start < text.len() {
        chunks.push(text[start..].to_vec());
    }
    chunks
}

fn lines(text: &[u8]) -> Vec<Vec<u8>> {
    text.split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// The path a format's request is sent to, from the cassette's URI where it has one.
fn route_path(format: &str, uri: Option<&str>, stream: bool) -> Option<String> {
    let from_uri = uri.and_then(|u| {
        let rest = u.split_once("://")?.1;
        let path = &rest[rest.find('/')?..];
        Some(path.split('?').next()?.to_owned())
    });
    let path = match format {
        "openai-chat" => "/v1/chat/completions".to_owned(),
        "openai-responses" => "/v1/responses".to_owned(),
        "anthropic" => "/v1/messages".to_owned(),
        "ollama" => "/api/chat".to_owned(),
        "gemini" => {
            let path = from_uri.unwrap_or_else(|| {
                let method = if stream {
                    "streamGenerateContent"
                } else {
                    "generateContent"
                };
                format!("/v1beta/models/gemini-2.5-flash:{method}")
            });
            if path.ends_with(":streamGenerateContent") {
                format!("{path}?alt=sse")
            } else {
                path
            }
        }
        _ => return None,
    };
    Some(path)
}

fn cassettes() -> Vec<Pair> {
    let root = dir("ATP_PROVIDER_CASSETTES_DIR");
    let mut pairs = Vec::new();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("provider-cassettes")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    folders.sort();
    for folder in folders {
        let manifest = json_file(&folder.join("manifest.json"));
        let entries = manifest
            .as_array()
            .cloned()
            .or_else(|| manifest["pairs"].as_array().cloned())
            .expect("a list of pairs");
        for e in entries {
            if e["expect_error"].as_bool() == Some(true) {
                continue;
            }
            let format = e["format"].as_str().expect("format").to_owned();
            let stream = e["stream"].as_bool() == Some(true);
            let Some(path) = route_path(&format, e["uri"].as_str(), stream) else {
                continue;
            };
            let pair_dir = folder.join(e["dir"].as_str().expect("dir"));
            let response_file = e["response_file"].as_str().expect("response file");
            let body = read(&pair_dir.join(response_file));
            let (content_type, chunks) = if response_file.ends_with(".sse") {
                ("text/event-stream", sse_events(&body))
            } else if response_file.ends_with(".ndjson") {
                ("application/x-ndjson", lines(&body))
            } else {
                ("application/json", vec![body])
            };
            let request = json_file(&pair_dir.join(e["request_file"].as_str().expect("request")));
            pairs.push(Pair {
                id: format!(
                    "provider-cassettes/{}/{}",
                    folder.file_name().unwrap_or_default().to_string_lossy(),
                    e["id"].as_str().unwrap_or("")
                ),
                format,
                path,
                request,
                called: names(&e["called"]),
                content_type,
                chunks,
                stream,
            });
        }
    }
    pairs
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A request of `format` offering `tools`, as the pair's request must have.
fn request_of(format: &str, tools: Value) -> Value {
    let user = json!([{"role": "user", "content": "hi"}]);
    match format {
        "openai-responses" => json!({"model": "m", "input": user, "tools": tools}),
        "gemini" => {
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": tools})
        }
        _ => json!({"model": "m", "max_tokens": 10, "messages": user, "tools": tools}),
    }
}

fn vercel() -> Vec<Pair> {
    let root = dir("ATP_VERCEL_AI_DIR");
    let manifest = json_file(&root.join("manifest.json"));
    let mut pairs = Vec::new();
    for e in manifest.as_array().expect("a list") {
        if e["expect_error"].as_bool() == Some(true) {
            continue;
        }
        let format = e["format"].as_str().expect("format").to_owned();
        let stream = e["stream"].as_bool() == Some(true);
        let response_file = e["response_file"].as_str().expect("file");
        // The same chunks as a JSON array are derived, not as sent.
        if response_file.ends_with(".array.json") {
            continue;
        }
        let Some(path) = route_path(&format, None, stream) else {
            continue;
        };
        let pair_dir = root.join(e["dir"].as_str().expect("dir"));
        let body = read(&pair_dir.join(response_file));
        let (content_type, chunks) = if response_file.ends_with(".chunks.txt") {
            // One JSON chunk a line, as recorded: each sent as the event it was.
            let events = body
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .map(|line| {
                    let typed = serde_json::from_slice::<Value>(line)
                        .ok()
                        .and_then(|v| v["type"].as_str().map(str::to_owned));
                    let mut event = Vec::new();
                    if let (Some(kind), "anthropic" | "openai-responses") = (typed, format.as_str())
                    {
                        event.extend_from_slice(format!("event: {kind}\n").as_bytes());
                    }
                    event.extend_from_slice(b"data: ");
                    event.extend_from_slice(line);
                    event.extend_from_slice(b"\n\n");
                    event
                })
                .collect();
            ("text/event-stream", events)
        } else if response_file.ends_with(".sse") {
            ("text/event-stream", sse_events(&body))
        } else {
            ("application/json", vec![body])
        };
        let tools = json_file(&pair_dir.join("tools.json"));
        pairs.push(Pair {
            id: format!("vercel-ai/{}", e["id"].as_str().unwrap_or("")),
            request: request_of(&format, tools),
            format,
            path,
            called: names(&e["called"]),
            content_type,
            chunks,
            stream,
        });
    }
    pairs
}

/// `value` with every `name` member equal to one of `names` renamed: the tool no longer
/// defined, its calls in the transcript (if any) renamed alike.
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

async fn send(url: &str, pair: usize, body: &Value) -> (u16, Vec<u8>) {
    let response = client()
        .post(url)
        .header("content-type", "application/json")
        .header("x-pair", pair.to_string())
        .body(body.to_string())
        .send()
        .await
        .expect("send");
    let status = response.status().as_u16();
    (status, response.bytes().await.expect("body").to_vec())
}

fn log_lines(path: &Path) -> Vec<Value> {
    String::from_utf8(read(path))
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole line"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_traffic_passes_clean_and_is_caught_renamed() {
    let mut pairs = cassettes();
    pairs.extend(vercel());
    assert!(pairs.len() > 700, "{} pairs", pairs.len());
    let served: Arc<Vec<Pair>> = Arc::new(pairs.clone());
    let up = upstream(move |seen| {
        let index = seen
            .headers
            .iter()
            .find(|(k, _)| k == "x-pair")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .expect("x-pair");
        let pair = &served[index];
        Script::new(200, pair.content_type, pair.chunks.clone())
    })
    .await;
    let clean = start(config(up.addr, "recorded_clean")).await;
    let observe = start(config(up.addr, "recorded_observe")).await;
    let mut blocking = config(up.addr, "recorded_block");
    blocking.action = Action::Block;
    let block = start(blocking).await;

    let mut failures = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut mutated = Vec::new();
    for (i, pair) in pairs.iter().enumerate() {
        let whole = pair.chunks.concat();
        let (status, got) = send(&clean.url(&pair.path), i, &pair.request).await;
        if status != 200 || got != whole {
            failures.push(format!(
                "{}: clean: status {status}, byte-identical {}",
                pair.id,
                got == whole
            ));
        }
        *counts
            .entry(format!(
                "{} {}",
                pair.format,
                if pair.stream { "stream" } else { "body" }
            ))
            .or_default() += 1;
        if pair.called.is_empty() {
            continue;
        }
        let renamed = rename(&pair.request, &pair.called);
        if renamed == pair.request {
            continue;
        }
        mutated.push(i);
        let (status, got) = send(&observe.url(&pair.path), i, &renamed).await;
        if status != 200 || got != whole {
            failures.push(format!(
                "{}: observe: status {status}, byte-identical {}",
                pair.id,
                got == whole
            ));
        }
        let (status, got) = send(&block.url(&pair.path), i, &renamed).await;
        let text = String::from_utf8_lossy(&got);
        let streamed = pair.content_type != "application/json";
        let ok = if streamed {
            // What preceded the call's event, as sent, then the error event alone.
            let error_at = text
                .rfind("event: error")
                .or_else(|| text.rfind("data: {\"error\""))
                .or_else(|| text.rfind("{\"error\""));
            status == 200
                && error_at.is_some_and(|at| whole.starts_with(&got[..at]) && at < whole.len())
        } else {
            status == 422 && pair.called.iter().any(|n| text.contains(n.as_str()))
        };
        if !ok {
            failures.push(format!(
                "{}: block: status {status}, got …{}",
                pair.id,
                text.chars()
                    .rev()
                    .take(400)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect::<String>()
            ));
        }
    }
    let clean_log = clean.log.clone().expect("log");
    let observe_log = observe.log.clone().expect("log");
    let block_log = block.log.clone().expect("log");
    clean.stop().await;
    observe.stop().await;
    block.stop().await;

    let clean_lines = log_lines(&clean_log);
    assert_eq!(clean_lines.len(), pairs.len());
    let mut decided = Vec::new();
    for (pair, line) in pairs.iter().zip(&clean_lines) {
        let calls = line["calls"].as_u64().unwrap_or(0) as usize;
        let unknown = line["verdict"] == "unknown" || line["verdict"] == "unread";
        if unknown || calls < pair.called.len() {
            failures.push(format!(
                "{}: clean verdict {} with {calls} calls (manifest: {:?}) {}",
                pair.id, line["verdict"], pair.called, line["unread"]
            ));
        }
        if let (Some(at), Some(of)) = (
            line["decided_at_byte"].as_u64(),
            line["stream_bytes"].as_u64(),
        ) {
            if !pair.called.is_empty() {
                decided.push((at, of));
            }
        }
    }
    for (line, &i) in log_lines(&observe_log).iter().zip(&mutated) {
        if line["verdict"] != "unknown" {
            failures.push(format!(
                "{}: observe verdict {}",
                pairs[i].id, line["verdict"]
            ));
        }
    }
    for (line, &i) in log_lines(&block_log).iter().zip(&mutated) {
        if line["action"] != "block" {
            failures.push(format!("{}: block action {}", pairs[i].id, line["action"]));
        }
    }
    println!(
        "pairs: {} ({} renamed and caught)",
        pairs.len(),
        mutated.len()
    );
    for (kind, n) in &counts {
        println!("  {kind}: {n}");
    }
    if !decided.is_empty() {
        let mut ratios: Vec<f64> = decided
            .iter()
            .map(|&(at, of)| at as f64 / of as f64)
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!(
            "streams with calls: {}; decided at a median {:.0}% of the stream's bytes (earliest {:.0}%, latest {:.0}%)",
            decided.len(),
            ratios[ratios.len() / 2] * 100.0,
            ratios[0] * 100.0,
            ratios[ratios.len() - 1] * 100.0
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
