//! `toolcall guard` as a user runs it: the binary in front of a stand-in upstream (a thread on
//! loopback answering one fixed body), a request sent through it, SIGTERM, and the log it
//! leaves read by `toolcall rate` with no converter.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const REQUEST: &str = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}"#;
const BODY: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_wether","arguments":"{}"}}]}}]}"#;

fn toolcall() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolcall"))
}

/// A stand-in upstream that answers every request with `BODY`.
fn upstream() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer(stream);
        }
    });
    format!("http://{addr}")
}

fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if seen.len() >= end + 4 + length || n == 0 {
                break;
            }
        }
        if n == 0 {
            break;
        }
    }
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
        BODY.len()
    )
}

/// Starts the guard; its address, read from its first line on stderr.
fn guard(args: &[&str]) -> (Child, String) {
    let mut child = toolcall()
        .arg("guard")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = child.stderr.take().expect("stderr");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stderr.read(&mut byte).expect("read") == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).expect("utf8");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, addr)
}

/// Sends one request with a key; the status line and the body.
fn post(addr: &str, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer sk-cli-SECRET-42\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{REQUEST}",
        REQUEST.len()
    )
    .expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let (head, body) = response.split_once("\r\n\r\n").expect("a response");
    let status = head.lines().next().unwrap_or("").to_owned();
    // The guard's bodies come chunked or with a length; a fixed body here has a length.
    (status, dechunk(head, body))
}

fn dechunk(head: &str, body: &str) -> String {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_owned();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    out
}

fn stop(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = child.wait().expect("wait");
    assert_eq!(exit.code(), Some(0), "SIGTERM is a clean stop");
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-guard")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

#[test]
fn the_guard_observes_logs_and_rate_reads_its_log() {
    let dir = scratch("observe");
    let log = dir.join("guard.jsonl");
    let (child, addr) = guard(&[
        "--upstream",
        &upstream(),
        "--log",
        log.to_str().expect("path"),
    ]);
    let (status, body) = post(&addr, "/v1/chat/completions");
    assert!(status.contains("200"), "{status}");
    assert_eq!(body, BODY, "passed through unchanged");
    stop(child);
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(!text.contains("SECRET-42"), "no key in the log");
    let line: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON line");
    assert_eq!(line["verdict"], "unknown");
    assert_eq!(line["findings"][0]["suggestions"][0], "get_weather");
    let rate = toolcall()
        .args(["rate", "--json"])
        .arg(&log)
        .output()
        .expect("rate");
    let report: serde_json::Value = serde_json::from_slice(&rate.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&rate.stderr)));
    let text = report.to_string();
    assert!(
        text.contains("get_wether"),
        "rate counted the guard's unknown name: {text}"
    );
    assert_eq!(report["calls"], 1, "{text}");
}

#[test]
fn the_guard_blocks_with_the_providers_status() {
    let (child, addr) = guard(&["--upstream", &upstream(), "--on-unknown", "block"]);
    let (status, body) = post(&addr, "/v1/chat/completions");
    assert!(status.contains("422"), "{status}");
    assert!(
        body.contains("get_wether") && body.contains("get_weather"),
        "{body}"
    );
    stop(child);
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let out = toolcall()
        .args([
            "guard",
            "--upstream",
            "http://127.0.0.1:1",
            "--listen",
            "0.0.0.0:0",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
}
