//! `toolcall rate` over a realistic production log, against what merely reading it costs.
//!
//! The log is the tau-bench airline conversations as `{"request", "response"}` lines, as an
//! OpenAI Chat Completions agent logs them: each request carries the 14 airline tools and the
//! conversation up to an assistant turn that made tool calls, each response is gpt-4o's turn as
//! the API returns it (ids, usage and all). The 1,164 turns repeat (with fresh response ids)
//! until the log reaches its size: 216 MB by default, about 27 MB with `--quick`. It is
//! generated into the target directory, never committed.
//!
//! Every side reads the same file from the page cache, in interleaved rounds, median of each:
//!
//! - **ours**: the release `toolcall rate -q --threads N LOG` binary (exit code checked): one
//!   worker pinned to one core (`taskset -c 0`, so its reader thread shares that core), and two
//!   workers on two cores;
//! - **raw**: this bench binary reading the file line by line and parsing each line with
//!   `serde_json::from_slice::<IgnoredAny>` (the cost of merely reading the JSON), in a child
//!   process pinned to one core, as ours is;
//! - **python**: `bench/rate_peer.py`, `json.loads` per line and each call checked against the
//!   set of the request's tool names (what a team would write instead), pinned likewise.
//!
//! Each side's time is its process's wall time, start-up included (a few milliseconds).
//!
//! Peak memory is the binary's own (`/usr/bin/time -f %M`) at 100 MB and at 1 GB of the same
//! log (10 MB and 100 MB with `--quick`).
//!
//! `cargo bench -p toolcall-bench --bench rate_log` after `cargo build --release -p toolcall-cli`
//! (`bench/run` does both). `-- --generate MB` only writes the log and prints its path, and
//! `-- --raw LOG` makes only the reference's pass over it: for callgrind, against
//! `toolcall rate -q --threads 1 LOG` on the same file.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::de::IgnoredAny;
use serde_json::{json, Value};
use toolcall_bench::{
    chat_completion_body, load_average, median, quick, tau_bench_dir, tau_tool_turns, timed,
    workspace_root, Row,
};

/// The distinct lines: one per tau-bench assistant turn with tool calls, with its response
/// body's id left to fill in (`{n}`), so repeated turns are not byte-identical lines.
fn turns() -> Vec<(String, Value)> {
    let dir = tau_bench_dir();
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(name)).expect("tau-bench data reads");
        serde_json::from_str(&text).expect("tau-bench data is JSON")
    };
    let tools: Vec<Value> = read("tools.json")
        .as_array()
        .expect("a list of tools")
        .iter()
        .map(|tool| json!({"type": "function", "function": tool}))
        .collect();
    let trajectories = read("trajectories.json");
    tau_tool_turns(&trajectories)
        .into_iter()
        .map(|(before, message)| {
            let request = json!({"model": "gpt-4o-2024-08-06", "tools": tools, "messages": before})
                .to_string();
            (request, message.clone())
        })
        .collect()
}

/// The log of at least `mb` megabytes, generated once and reused.
fn log(mb: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rate-log");
    std::fs::create_dir_all(&dir).expect("the target dir is writable");
    let path = dir.join(format!("tau-airline-{mb}MB.jsonl"));
    let target = mb * 1_000_000;
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= target) {
        return path;
    }
    let turns = turns();
    let partial = path.with_extension("partial");
    let mut out = BufWriter::new(std::fs::File::create(&partial).expect("the log file"));
    let (mut written, mut n) = (0u64, 0u64);
    while written < target {
        let (request, message) = &turns[n as usize % turns.len()];
        n += 1;
        let response = chat_completion_body(n, message);
        let line = format!("{{\"request\":{request},\"response\":{response}}}\n");
        out.write_all(line.as_bytes()).expect("write");
        written += line.len() as u64;
    }
    out.flush().expect("flush");
    drop(out);
    std::fs::rename(&partial, &path).expect("rename");
    path
}

/// A command pinned to the first CPU (`taskset -c 0`): "one core" means one core, whatever
/// threads the program starts.
fn on_one_core(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new("taskset");
    command.arg("-c").arg("0").arg(program);
    command
}

/// `toolcall rate` with one worker thread on one core, or with `threads` on all cores.
fn run_ours(log: &Path, threads: usize) {
    let mut command = if threads == 1 {
        on_one_core(toolcall_bench::toolcall())
    } else {
        Command::new(toolcall_bench::toolcall())
    };
    let status = command
        .args(["rate", "-q", "--threads", &threads.to_string()])
        .arg(log)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("toolcall runs (and `taskset`, from util-linux)");
    assert!(
        status.success(),
        "toolcall rate failed on {}",
        log.display()
    );
}

fn run_python(log: &Path) -> String {
    let out = on_one_core("python3")
        .arg(workspace_root().join("bench/rate_peer.py"))
        .arg(log)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "bench/rate_peer.py failed");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The reference, in a child process on one core (as ours runs).
fn run_raw_child(log: &Path) {
    let me = std::env::current_exe().expect("the bench's own path");
    let status = on_one_core(me)
        .arg("--raw")
        .arg(log)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the bench runs itself");
    assert!(status.success(), "the reference pass failed");
}

/// Lines parsed, reading the file as the binary does.
fn run_raw(log: &Path) -> u64 {
    let file = std::fs::File::open(log).expect("the log opens");
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let (mut buf, mut n) = (Vec::new(), 0);
    while reader.read_until(b'\n', &mut buf).expect("the log reads") > 0 {
        n += u64::from(serde_json::from_slice::<IgnoredAny>(&buf).is_ok());
        buf.clear();
    }
    n
}

/// `toolcall rate -q LOG`'s peak RSS in MB.
fn peak_rss(log: &Path) -> f64 {
    toolcall_bench::peak_rss_of(&[log.as_os_str()])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--generate") {
        let mb = args
            .get(at + 1)
            .and_then(|m| m.parse().ok())
            .expect("--generate MB");
        println!("{}", log(mb).display());
        return;
    }
    if let Some(at) = args.iter().position(|a| a == "--raw") {
        let path = args.get(at + 1).expect("--raw LOG");
        println!("{} lines parsed", run_raw(Path::new(path)));
        return;
    }
    let quick = quick();
    let path = log(if quick { 27 } else { 216 });
    let bytes = std::fs::metadata(&path).expect("the log").len() as f64;
    let lines = run_raw(&path);
    let python = run_python(&path);
    let rounds = if quick { 3 } else { 7 };
    let load = load_average();
    let (mut raw, mut one, mut two, mut py) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        raw.push(timed(|| run_raw_child(&path)).0);
        one.push(timed(|| run_ours(&path, 1)).0);
        two.push(timed(|| run_ours(&path, 2)).0);
        // Python is slow and steady: three rounds are enough.
        if round < 3 {
            py.push(timed(|| run_python(&path)).0);
        }
    }
    let load = (load + load_average()) / 2.0;
    let (raw, one, two, py) = (median(&raw), median(&one), median(&two), median(&py));
    let mbs = |secs: f64| bytes / 1e6 / secs;
    let detail = format!(
        "toolcall rate {:.0} MB/s on 1 thread, {:.0} MB/s on 2; serde_json IgnoredAny {:.0} MB/s; python {:.0} MB/s; {lines} lines, {:.0} MB, {python}; median of {rounds}; load {load:.1}",
        mbs(one),
        mbs(two),
        mbs(raw),
        mbs(py),
        bytes / 1e6,
    );
    Row {
        name: "rate, 1 core: toolcall rate vs serde_json IgnoredAny, realistic log",
        measured: format!("{:.2}x", raw / one),
        target: ">= 0.80x",
        ok: Some(raw / one >= 0.8),
        detail: detail.clone(),
    }
    .print();
    Row {
        name: "rate, 1 core: toolcall rate vs the Python one-liner",
        measured: format!("{:.2}x", py / one),
        target: ">= 4.5x",
        ok: Some(py / one >= 4.5),
        detail: "bench/rate_peer.py: json.loads per line, the request's tool names as a set, each call checked".to_owned(),
    }
    .print();
    Row {
        name: "rate, 2 cores: toolcall rate speed-up over 1 core (taskset -c 0)",
        measured: format!("{:.2}x", one / two),
        target: ">= 1.8x",
        ok: Some(one / two >= 1.8),
        detail: format!("--threads 2 on two cores against --threads 1 pinned to one, on the same log; load {load:.1}"),
    }
    .print();

    let (small, big) = if quick { (10, 100) } else { (100, 1000) };
    let (rss_small, rss_big) = (peak_rss(&log(small)), peak_rss(&log(big)));
    let ratio = rss_big / rss_small;
    Row {
        name: "rate, peak RSS: a log ten times longer (toolcall rate, all cores)",
        measured: format!("{ratio:.2}x"),
        target: "<= 1.25x",
        ok: Some(ratio <= 1.25),
        detail: format!(
            "{rss_small:.1} MB at {small} MB, {rss_big:.1} MB at {big} MB of the realistic log"
        ),
    }
    .print();
}
