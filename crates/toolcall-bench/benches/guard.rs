//! `toolcall guard` against the same stand-in upstream direct, side by side in one run (issue
//! 26's targets): the release binary as a process of its own, in front of a hyper stand-in in
//! this process that answers with a tau-bench airline turn (the request: the 14 tools and the
//! conversation up to a gpt-4o turn with tool calls; the response: that turn as the API returns
//! it) or, for a request with `"stream": true`, that turn as a 30-event Chat Completions stream.
//!
//! - latency the guard adds, non-streamed: `wrk -t1 -c1 --latency` direct and through the guard,
//!   interleaved rounds, p50 and p99 differences (medians over rounds);
//! - throughput at 64 connections: `wrk -t2 -c64`, through the guard over direct;
//! - streams: time to the first body byte through the guard minus direct (medians of sequential
//!   requests), and the byte of the stream at which the guard's log says it decided;
//! - peak RSS of the guard process (`VmHWM`) after 1,000 concurrent streams over after 100.
//!
//! Needs `wrk` (Debian's package) and the tau-bench data; `bench/run` builds the release CLI.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::channel::Channel;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use toolcall_bench::{
    chat_completion_body, load_average, median, quick, tau_bench_dir, tau_tool_turns, toolcall, Row,
};

/// The request and the response body of one realistic turn, and its 30-event stream.
struct Turn {
    request: String,
    body: String,
    events: Vec<String>,
}

fn turn() -> Turn {
    let dir = tau_bench_dir();
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(name)).expect("tau-bench data reads");
        serde_json::from_str(&text).expect("tau-bench data is JSON")
    };
    let tools: Vec<Value> = read("tools.json")
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| json!({"type": "function", "function": tool}))
        .collect();
    let trajectories = read("trajectories.json");
    let turns = tau_tool_turns(&trajectories);
    // A turn deep enough into its conversation to be a typical request.
    let (before, message) = turns
        .iter()
        .find(|(before, _)| before.len() >= 8)
        .or(turns.first())
        .expect("a turn with tool calls");
    let request =
        json!({"model": "gpt-4o-2024-08-06", "tools": tools, "messages": before}).to_string();
    let body = chat_completion_body(1, message).to_string();
    Turn {
        request,
        body,
        events: stream_of(message),
    }
}

/// `message` as a Chat Completions stream of 30 events: the role, text deltas, the call (its
/// name whole in its first delta, as OpenAI sends it), its arguments in pieces, the finish and
/// `[DONE]`.
fn stream_of(message: &Value) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-AZ1", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-4o-2024-08-06",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        )
    };
    let call = &message["tool_calls"][0];
    let name = call["function"]["name"]
        .as_str()
        .unwrap_or("get_user_details");
    let arguments = call["function"]["arguments"]
        .as_str()
        .unwrap_or("{}")
        .to_owned();
    let words =
        "Let me look that up for you in our reservation system right away, one moment please.";
    let words: Vec<&str> = words.split_inclusive(' ').collect();
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for word in words.iter().take(16) {
        events.push(chunk(json!({"content": word}), Value::Null));
    }
    events.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        Value::Null,
    ));
    let pieces = 10;
    let step = arguments.len().div_ceil(pieces).max(1);
    let mut rest = arguments.as_str();
    while !rest.is_empty() && events.len() < 28 {
        let mut cut = step.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, after) = rest.split_at(cut);
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            Value::Null,
        ));
        rest = after;
    }
    while events.len() < 28 {
        events.push(chunk(json!({"content": null}), Value::Null));
    }
    events.push(chunk(json!({}), json!("tool_calls")));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The stand-in upstream, on a runtime of its own: the body, or the stream with `pause` between
/// events when the request has `"stream":true` (`x-pause-ms`).
fn stand_in(turn: &Turn) -> SocketAddr {
    let body = Bytes::from(turn.body.clone());
    let events: Vec<Bytes> = turn.events.iter().map(|e| Bytes::from(e.clone())).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let (body, events) = (body.clone(), events.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let (body, events) = (body.clone(), events.clone());
                            async move {
                                let pause = request
                                    .headers()
                                    .get("x-pause-ms")
                                    .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
                                    .unwrap_or(0);
                                let seen = request
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(|c| c.to_bytes())
                                    .unwrap_or_default();
                                let streamed = seen.windows(13).any(|w| w == b"\"stream\":true");
                                let (mut tx, channel) = Channel::<Bytes, std::io::Error>::new(32);
                                let content_type = if streamed {
                                    "text/event-stream"
                                } else {
                                    "application/json"
                                };
                                tokio::spawn(async move {
                                    if streamed {
                                        for event in events {
                                            if pause > 0 {
                                                tokio::time::sleep(Duration::from_millis(pause))
                                                    .await;
                                            }
                                            if tx.send_data(event).await.is_err() {
                                                return;
                                            }
                                        }
                                    } else {
                                        let _ = tx.send_data(body).await;
                                    }
                                });
                                let mut response = hyper::Response::new(channel);
                                response
                                    .headers_mut()
                                    .insert("content-type", content_type.parse().expect("type"));
                                Ok::<_, std::convert::Infallible>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    rx.recv().expect("the stand-in listens")
}

/// The release guard in front of `upstream`, its address, logging to `log`.
fn guard(upstream: SocketAddr, log: &Path) -> (Child, SocketAddr) {
    let mut child = Command::new(toolcall())
        .args(["guard", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(format!("http://{upstream}"))
        .arg("--log")
        .arg(log)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the release toolcall (cargo build --release -p toolcall-cli)");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("its first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stderr.read_to_string(&mut rest);
    });
    (child, addr)
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// wrk's p50, p99 (ms) and requests per second.
fn wrk(
    addr: SocketAddr,
    body: &Path,
    threads: u32,
    connections: u32,
    seconds: u32,
) -> (f64, f64, f64) {
    let script = body.with_extension("lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Authorization\"] = \"Bearer sk-bench\"\n\
             local f = io.open(\"{}\", \"rb\")\nwrk.body = f:read(\"*a\")\nf:close()\n",
            body.display()
        ),
    )
    .expect("the wrk script");
    let out = Command::new("wrk")
        .args([
            &format!("-t{threads}"),
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            "--latency",
            "-s",
        ])
        .arg(&script)
        .arg(format!("http://{addr}/v1/chat/completions"))
        .output()
        .expect("wrk (apt-get install wrk)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && !text.contains("Non-2xx"),
        "wrk: {text}"
    );
    let ms = |value: &str| -> f64 {
        let value = value.trim();
        let (number, unit) = value.split_at(
            value
                .find(|c: char| c.is_ascii_alphabetic())
                .unwrap_or(value.len()),
        );
        let n: f64 = number.parse().unwrap_or(f64::NAN);
        match unit {
            "us" => n / 1000.0,
            "ms" => n,
            "s" => n * 1000.0,
            _ => f64::NAN,
        }
    };
    let percentile = |p: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(p).map(ms))
            .unwrap_or(f64::NAN)
    };
    let rps = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Requests/sec:")
                .map(|v| v.trim().parse().unwrap_or(f64::NAN))
        })
        .unwrap_or(f64::NAN);
    (percentile("50%"), percentile("99%"), rps)
}

/// A streamed request by hand: the time to the first body byte (ms), and the whole answer read.
fn first_byte(addr: SocketAddr, request: &str, pause: u64) -> f64 {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Authorization: Bearer sk-bench\r\nx-pause-ms: {pause}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        request.len()
    );
    let started = Instant::now();
    stream.write_all(head.as_bytes()).expect("write");
    stream.write_all(request.as_bytes()).expect("write");
    let mut seen = Vec::new();
    let mut buf = [0u8; 16384];
    let mut first = None;
    loop {
        let n = stream.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
        if first.is_none() {
            if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                if seen.len() > at + 4 {
                    first = Some(started.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
    }
    first.unwrap_or(f64::NAN)
}

fn vm_hwm_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The guard's peak RSS after `n` concurrent slow streams.
fn peak_after(upstream: SocketAddr, request: &str, n: usize, dir: &Path) -> f64 {
    let (child, addr) = guard(upstream, &dir.join(format!("rss-{n}.jsonl")));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let request = request.to_owned();
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || first_byte(addr, &request, 20))
                .expect("thread")
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
    let peak = vm_hwm_mb(child.id());
    stop(child);
    peak
}

fn main() {
    let quick = quick();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guard-bench");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let turn = turn();
    let upstream = stand_in(&turn);
    let body_file = dir.join("request.json");
    std::fs::write(&body_file, &turn.request).expect("request");
    let log = dir.join("guard.jsonl");
    let (child, guarded) = guard(upstream, &log);
    let load = load_average();

    // Latency added, one connection, interleaved rounds.
    let (rounds, seconds) = if quick { (1, 2) } else { (3, 4) };
    let (mut p50s, mut p99s, mut direct50, mut direct99) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let (d50, d99, _) = wrk(upstream, &body_file, 1, 1, seconds);
        let (g50, g99, _) = wrk(guarded, &body_file, 1, 1, seconds);
        p50s.push(g50 - d50);
        p99s.push(g99 - d99);
        direct50.push(d50);
        direct99.push(d99);
    }
    let (added50, added99) = (median(&p50s), median(&p99s));
    Row {
        name: "guard: latency added, non-streamed, p50",
        measured: format!("{added50:.3} ms"),
        target: "<= 0.3 ms",
        ok: Some(added50 <= 0.3),
        detail: format!(
            "wrk -c1, {rounds}x{seconds}s interleaved; direct p50 {:.3} ms; request {} KB, response {} KB; load {load:.2}",
            median(&direct50),
            turn.request.len() / 1000,
            turn.body.len() / 1000
        ),
    }
    .print();
    Row {
        name: "guard: latency added, non-streamed, p99",
        measured: format!("{added99:.3} ms"),
        target: "<= 2 ms",
        ok: Some(added99 <= 2.0),
        detail: format!("direct p99 {:.3} ms; load {load:.2}", median(&direct99)),
    }
    .print();

    // Throughput at 64 connections.
    let (_, _, direct_rps) = wrk(upstream, &body_file, 2, 64, seconds);
    let (_, _, guard_rps) = wrk(guarded, &body_file, 2, 64, seconds);
    let ratio = guard_rps / direct_rps;
    Row {
        name: "guard: throughput at 64 connections, through / direct",
        measured: format!("{ratio:.2}x"),
        target: ">= 0.80x",
        ok: Some(ratio >= 0.8),
        detail: format!(
            "wrk -t2 -c64 {seconds}s: {guard_rps:.0} vs {direct_rps:.0} req/s; the guard, the stand-in and wrk share {} cores; load {:.2}",
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            load_average()
        ),
    }
    .print();

    // Streams: time to first byte, and where the verdict was known.
    let streamed = format!("{{\"stream\":true,{}", &turn.request[1..]);
    let n = if quick { 50 } else { 300 };
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for _ in 0..n {
        direct.push(first_byte(upstream, &streamed, 0));
        through.push(first_byte(guarded, &streamed, 0));
    }
    let delta = median(&through) - median(&direct);
    stop(child);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let decided: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| Some((l["decided_at_byte"].as_u64()?, l["stream_bytes"].as_u64()?)))
        .collect();
    let (at, of) = decided.first().copied().unwrap_or((0, 0));
    let name_at = turn
        .events
        .iter()
        .position(|e| e.contains("\"tool_calls\":[{\"function\""))
        .map_or(0, |i| {
            turn.events[..=i].iter().map(String::len).sum::<usize>()
        });
    Row {
        name: "guard: stream time to first byte, through - direct",
        measured: format!("{delta:.3} ms"),
        target: "<= 0.5 ms",
        ok: Some(delta <= 0.5),
        detail: format!(
            "medians of {n} sequential 30-event streams: {:.3} vs {:.3} ms; decided at byte {at} of {of} \
             (the name's event ends at byte {name_at}; {} streams logged); load {:.2}",
            median(&through),
            median(&direct),
            decided.len(),
            load_average()
        ),
    }
    .print();

    // Peak RSS from 100 to 1,000 concurrent streams (20 ms between events: 0.6 s each).
    let (small, large) = if quick { (50, 200) } else { (100, 1000) };
    let rss_small = peak_after(upstream, &streamed, small, &dir);
    let rss_large = peak_after(upstream, &streamed, large, &dir);
    let growth = rss_large / rss_small;
    Row {
        name: "guard: peak RSS, 1,000 concurrent streams / 100",
        measured: format!("{growth:.2}x"),
        target: "<= 1.25x",
        ok: Some(growth <= 1.25),
        detail: format!(
            "VmHWM {rss_large:.1} MB at {large} vs {rss_small:.1} MB at {small}; load {:.2}",
            load_average()
        ),
    }
    .print();
}
