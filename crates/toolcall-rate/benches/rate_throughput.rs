//! Throughput and peak memory of `rate_jsonl` over large generated logs (100 MB and 1 GB), to
//! show that memory stays constant while the input grows tenfold.
//!
//! `cargo bench -p toolcall-rate --bench rate_throughput` (add `-- 100` to run one size, in MB).
//! Each size runs in a child process of its own, so each peak RSS (`VmHWM` from
//! `/proc/self/status`) is that run's alone. The logs are generated into the target directory
//! (never committed) by repeating real-shaped lines: an OpenAI Chat request with 12 tools and a
//! short transcript, and a Chat Completions response with two calls, one in fifty naming an
//! unknown tool from a pool of 40 names. The reference, measured in the same child, is plain
//! `serde_json` parsing of every line into a `Value` on one thread.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use toolcall_rate::{rate_jsonl, Gate, Report, ScanOptions};

fn line(i: usize) -> String {
    let tools: Vec<Value> = (0..12)
        .map(|t| {
            json!({"type": "function", "function": {
                "name": format!("tool_{t}"),
                "description": format!("Does thing {t} for an account; use it when the user asks about thing {t}."),
                "parameters": {"type": "object", "properties": {
                    "account_id": {"type": "string", "description": "The account, e.g. acc_771."},
                    "limit": {"type": "integer", "minimum": 1}},
                    "required": ["account_id"]}}})
        })
        .collect();
    let request = json!({
        "model": "gpt-4o",
        "tools": tools,
        "messages": [
            {"role": "system", "content": "You are the billing assistant. Be brief and use the tools."},
            {"role": "user", "content": format!("What happened on account acc_{i}?")},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "tool_1", "arguments": "{\"account_id\":\"acc_1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_a", "content": "{\"status\": \"ok\", \"items\": [1, 2, 3]}"},
            {"role": "user", "content": "And the invoices?"}
        ]
    });
    let second = if i % 50 == 0 {
        format!("unknown_tool_{}", (i / 50) % 40)
    } else {
        "tool_3".to_owned()
    };
    let response = json!({
        "id": format!("chatcmpl-{i}"), "object": "chat.completion", "created": 1718000000, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "tool_2", "arguments": "{\"account_id\":\"acc_1\",\"limit\":5}"}},
                {"id": "call_2", "type": "function", "function": {"name": second, "arguments": "{\"account_id\":\"acc_1\"}"}}]}}],
        "usage": {"prompt_tokens": 812, "completion_tokens": 41, "total_tokens": 853}
    });
    json!({"request": request, "response": response}).to_string()
}

/// The log of at least `mb` megabytes, generated once and reused.
fn log(mb: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rate-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("log-{mb}MB.jsonl"));
    let target = mb * 1_000_000;
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= target) {
        return path;
    }
    // 200 distinct lines, repeated.
    let lines: Vec<String> = (0..200).map(|i| line(i * 7 + 1)).collect();
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut written = 0u64;
    let mut i = 0;
    while written < target {
        let l = &lines[i % lines.len()];
        out.write_all(l.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        written += l.len() as u64 + 1;
        i += 1;
    }
    out.flush().unwrap();
    path
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU seconds this process has used (user + system), from `/proc/self/stat` (100 ticks/s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the `(comm)`; utime and stime are fields 14 and 15 of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn child(mb: u64) {
    let path = log(mb);
    let bytes = std::fs::metadata(&path).unwrap().len() as f64;
    let before = peak_rss_mb();

    let start = Instant::now();
    let cpu = cpu_seconds();
    let tally = rate_jsonl(std::slice::from_ref(&path), &ScanOptions::default()).unwrap();
    let ours = start.elapsed().as_secs_f64();
    let busy = (cpu_seconds() - cpu) / ours;
    let peak = peak_rss_mb();
    let report = Report::new(tally, Gate::default());
    assert_eq!(report.bad_lines, 0, "{:?}", report.errors);

    let start = Instant::now();
    let one = rate_jsonl(
        std::slice::from_ref(&path),
        &ScanOptions {
            threads: 1,
            ..ScanOptions::default()
        },
    )
    .unwrap();
    let single = start.elapsed().as_secs_f64();
    assert_eq!(one.responses(), report.responses);

    // Reference: parse each line into a Value, one thread, nothing else.
    let start = Instant::now();
    let mut reader = BufReader::with_capacity(256 * 1024, std::fs::File::open(&path).unwrap());
    let mut buf = Vec::new();
    let mut parsed = 0u64;
    while reader.read_until(b'\n', &mut buf).unwrap() > 0 {
        let value: Value = serde_json::from_slice(&buf).unwrap();
        parsed += value.is_object() as u64;
        buf.clear();
    }
    let reference = start.elapsed().as_secs_f64();
    assert_eq!(parsed, report.responses);

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{mb:>5} MB: {:>9} responses, {} calls, {} unknown, {} distinct | all {cores} cores: {:.1} s, {:.0} MB/s, {:.0} responses/s, {busy:.2} cores busy (CPU s / wall s) | 1 thread: {:.1} s ({:.2}x of all cores) | serde_json Value parse, 1 thread: {:.1} s (rate on 1 thread = {:.2}x its time) | peak RSS {:.1} MB (before the scan {:.1} MB)",
        report.responses,
        report.calls,
        report.unknown,
        report.distinct.len(),
        ours,
        bytes / 1e6 / ours,
        report.responses as f64 / ours,
        single,
        single / ours,
        reference,
        single / reference,
        peak,
        before,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let mb = args[at + 1].parse().expect("--child MB");
        return child(mb);
    }
    // `cargo bench` passes `--bench`; any number given selects sizes.
    let mut sizes: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![100, 1000];
    }
    let me = std::env::current_exe().unwrap();
    for mb in sizes {
        let status = std::process::Command::new(&me)
            .args(["--child", &mb.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "the {mb} MB run failed");
    }
}
