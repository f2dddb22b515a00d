//! Shared pieces of the bench binaries behind `bench/run`: timing by median of rounds, the
//! machine's load, peak memory, and the one-line row format `bench/run` turns into its table.
//!
//! Timings on the shared machine drift, so every row is a *ratio* against a reference measured
//! in the same process, in alternating rounds: both sides see the same load.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `f` once and returns its wall time in seconds, with its result.
pub fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64(), out)
}

/// The median of `samples` (which must not be empty; `NaN` when it is).
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The one-minute load average, from `/proc/loadavg` (`NaN` elsewhere).
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// This process's peak resident set (`VmHWM`), in MB.
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Whether `--quick` was passed (or `ATP_BENCH_QUICK=1` set, which `bench/run --quick` does).
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
        || std::env::var("ATP_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// The workspace root (this crate lives in `crates/toolcall-bench`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The tau-bench airline data: `ATP_TAU_BENCH_DIR`, or `../shared/external/tau-bench-airline`
/// beside the workspace. Missing data is a failure that says where it looked, never a skip.
pub fn tau_bench_dir() -> PathBuf {
    let dir = std::env::var_os("ATP_TAU_BENCH_DIR").map_or_else(
        || workspace_root().join("../shared/external/tau-bench-airline"),
        PathBuf::from,
    );
    assert!(
        dir.join("trajectories.json").is_file() && dir.join("tools.json").is_file(),
        "no tau-bench data at {} (trajectories.json, tools.json): set ATP_TAU_BENCH_DIR",
        dir.display()
    );
    dir
}

/// Every tau-bench assistant turn that made tool calls, with the conversation before it: the
/// turns the benches' corpora are made of.
pub fn tau_tool_turns(
    trajectories: &serde_json::Value,
) -> Vec<(&[serde_json::Value], &serde_json::Value)> {
    let mut turns = Vec::new();
    for trajectory in trajectories.as_array().expect("a list of conversations") {
        let messages = trajectory["traj"].as_array().expect("`traj` messages");
        for (i, message) in messages.iter().enumerate() {
            if message["role"] == "assistant"
                && message.get("tool_calls").is_some_and(|c| !c.is_null())
            {
                turns.push((&messages[..i], message));
            }
        }
    }
    turns
}

/// The tau-bench assistant turn `message` as the Chat Completions API returns it, `n` making its
/// id, timestamps and usage its own: the response body of the benches' generated corpora.
pub fn chat_completion_body(n: u64, message: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "id": format!("chatcmpl-AZ{n:016}"),
        "object": "chat.completion",
        "created": 1_718_000_000 + n,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 2800 + n % 900, "completion_tokens": 40 + n % 60,
                  "total_tokens": 2840 + n % 960,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
        "system_fingerprint": "fp_a7d06e42a7"
    })
}

/// One row of the `bench/run` table.
pub struct Row<'a> {
    /// What is measured.
    pub name: &'a str,
    /// The measured figure, formatted (usually a ratio).
    pub measured: String,
    /// The target, formatted.
    pub target: &'a str,
    /// Whether the target is met; `None` for a reference row that has no target of its own.
    pub ok: Option<bool>,
    /// The absolute figures behind the ratio, and the load average while measuring.
    pub detail: String,
}

impl Row<'_> {
    /// Prints the row as one tab-separated `ROW` line on stdout, which `bench/run` collects.
    pub fn print(&self) {
        println!(
            "ROW\t{}\t{}\t{}\t{}\t{}",
            self.name,
            self.measured,
            self.target,
            match self.ok {
                Some(true) => "✓",
                Some(false) => "✗",
                None => "—",
            },
            self.detail
        );
    }
}

/// The release `toolcall` binary next to the bench (`target/release/toolcall`), or
/// `ATP_TOOLCALL_BIN`.
pub fn toolcall() -> PathBuf {
    if let Some(bin) = std::env::var_os("ATP_TOOLCALL_BIN") {
        return bin.into();
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    let bin = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target/release/deps/<bench>")
        .join("toolcall");
    assert!(
        bin.is_file(),
        "no {}: run `cargo build --release -p toolcall-cli` first (bench/run does)",
        bin.display()
    );
    bin
}

/// The peak RSS in MB of `toolcall rate -q INPUT…`, from `/usr/bin/time -f %M` (kilobytes).
pub fn peak_rss_of(inputs: &[&std::ffi::OsStr]) -> f64 {
    let mut args = vec![std::ffi::OsStr::new("rate"), std::ffi::OsStr::new("-q")];
    args.extend_from_slice(inputs);
    peak_rss_of_toolcall(&args, &[0])
}

/// The peak RSS in MB of `toolcall ARGS…`, from `/usr/bin/time -f %M` (kilobytes), which must
/// exit with one of `codes`.
pub fn peak_rss_of_toolcall(args: &[&std::ffi::OsStr], codes: &[i32]) -> f64 {
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(toolcall())
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("/usr/bin/time runs (Debian package `time`)");
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "toolcall {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kb: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {stderr:?}"));
    kb / 1024.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
