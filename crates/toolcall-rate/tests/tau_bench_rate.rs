//! Real data: `toolcall import` of 200 gpt-4o airline conversations from tau-bench (1,164 tool
//! calls to 14 tools, every one valid), then the rate over what it made.
//!
//! CI-only tier: `ATP_TAU_BENCH_DIR` names the data folder; unset or wrong is a failure, never a
//! skip. Run with
//! `cargo test -p toolcall-rate --features external-data --test tau_bench_rate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolcall_rate::{import, rate_tree, Gate, ImportOptions, Report, ScanOptions};
use toolcall_score::Cause;

fn data_dir() -> PathBuf {
    let dir = std::env::var_os("ATP_TAU_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!("ATP_TAU_BENCH_DIR is not set: point it at shared/external/tau-bench-airline")
        });
    assert!(
        dir.join("trajectories.json").is_file() && dir.join("tools.json").is_file(),
        "ATP_TAU_BENCH_DIR={} does not hold trajectories.json and tools.json",
        dir.display()
    );
    dir
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tau-bench-rate")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Counted straight from the raw JSON, independently of the importer: assistant turns with tool
/// calls, and calls per tool name.
fn raw_counts(dir: &Path) -> (usize, BTreeMap<String, u64>) {
    let mut turns = 0;
    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    for conversation in read(&dir.join("trajectories.json")).as_array().unwrap() {
        for message in conversation["traj"].as_array().unwrap() {
            let Some(list) = message["tool_calls"].as_array() else {
                continue;
            };
            if message["role"] == "assistant" && !list.is_empty() {
                turns += 1;
                for call in list {
                    let name = call["function"]["name"].as_str().unwrap().to_owned();
                    *calls.entry(name).or_default() += 1;
                }
            }
        }
    }
    (turns, calls)
}

/// `toolcall import` of the trajectories into `out`, with `tools` as the catalog.
fn import_with_tools(dir: &Path, out: &Path, tools: &[Value]) {
    let tools_file = out.join("tools.json");
    std::fs::write(&tools_file, serde_json::to_vec(tools).unwrap()).unwrap();
    let options = ImportOptions {
        out: out.to_path_buf(),
        agent: Some("gpt-4o".into()),
        tools: Some(tools_file),
        ..ImportOptions::default()
    };
    import(&dir.join("trajectories.json"), &options).unwrap();
}

fn rate(out: &Path) -> Report {
    let scan = rate_tree(
        &out.join("cases"),
        &out.join("recorded/gpt-4o"),
        &ScanOptions::default(),
    )
    .unwrap();
    assert_eq!(scan.unrecorded, 0);
    Report::new(
        scan.tally,
        Gate {
            max_unknown: Some(0),
            ..Gate::default()
        },
    )
}

#[test]
fn import_then_rate_reports_every_call_and_no_unknown_name() {
    let dir = data_dir();
    let (turns, calls) = raw_counts(&dir);
    let out = scratch("all");
    let options = ImportOptions {
        out: out.clone(),
        agent: Some("gpt-4o".into()),
        ..ImportOptions::default()
    };
    // The directory form: trajectories.json is the input, tools.json beside it the catalog.
    let summary = import(&dir, &options).unwrap();
    assert_eq!(summary.conversations, 200);
    assert_eq!(
        summary.cases, turns,
        "one case per assistant turn with calls"
    );
    assert_eq!(summary.calls, 1164);
    let report = rate(&out);
    assert_eq!(report.bad_lines, 0, "{:#?}", report.errors);
    assert_eq!(report.responses as usize, turns);
    assert_eq!(report.calls, 1164);
    assert_eq!(report.calls, calls.values().sum::<u64>());
    assert_eq!(report.unknown, 0, "{:#?}", report.distinct);
    assert!(report.distinct.is_empty());
    assert!(report.passed());
    // 0 of 1,164: the interval's upper bound is what a clean run can claim.
    let (lo, hi) = report.interval.unwrap();
    assert!(lo == 0.0 && hi > 0.002 && hi < 0.004, "{lo} {hi}");
}

#[test]
fn with_one_tool_removed_the_rate_reports_exactly_the_calls_to_it() {
    let dir = data_dir();
    let (_, calls) = raw_counts(&dir);
    // The most-called tool.
    let (removed, expected) = calls
        .iter()
        .max_by_key(|(name, n)| (**n, std::cmp::Reverse((*name).clone())))
        .map(|(name, n)| (name.clone(), *n))
        .unwrap();
    let out = scratch("removed");
    let tools: Vec<Value> = read(&dir.join("tools.json"))
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] != removed.as_str())
        .cloned()
        .collect();
    assert_eq!(tools.len(), 13);
    import_with_tools(&dir, &out, &tools);
    let report = rate(&out);
    assert_eq!(report.bad_lines, 0, "{:#?}", report.errors);
    assert_eq!(report.calls, 1164);
    assert_eq!(report.unknown, expected);
    assert_eq!(report.distinct.len(), 1, "{:#?}", report.distinct);
    let only = &report.distinct[0];
    assert_eq!(
        (only.name.as_str(), only.count),
        (removed.as_str(), expected)
    );
    // Its first call in each conversation has no earlier trace (invented or prompt drift: the
    // airline policy names tools); later ones were called earlier in the transcript (retired).
    assert!(
        only.causes.contains_key(&Cause::Retired),
        "{:?}",
        only.causes
    );
    assert!(!report.passed());
    assert!(report.gate.reasons[0].contains(&format!("{expected} unknown")));
}

/// The turns as a production log records them: one `{"request", "response"}` line per
/// assistant turn with calls, the request carrying `tools` and the conversation so far.
fn log_lines(dir: &Path, tools: &[Value]) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| serde_json::json!({"type": "function", "function": tool}))
        .collect();
    let mut log = String::new();
    for conversation in read(&dir.join("trajectories.json")).as_array().unwrap() {
        let messages = conversation["traj"].as_array().unwrap();
        for (i, message) in messages.iter().enumerate() {
            if message["role"] != "assistant" || !message["tool_calls"].is_array() {
                continue;
            }
            let line = serde_json::json!({
                "request": {"model": "gpt-4o", "tools": tools, "messages": &messages[..i]},
                "response": {"object": "chat.completion", "choices": [{"index": 0,
                             "message": message, "finish_reason": "tool_calls"}]},
            });
            log.push_str(&line.to_string());
            log.push('\n');
        }
    }
    log
}

/// The log is read by `rate`'s fast path (lines that pass) and its general path (lines that do
/// not): the report must be the imported tree's, cause for cause, with every tool and with the
/// most-called one removed.
#[test]
fn a_log_of_the_turns_rates_as_the_imported_tree_does() {
    let dir = data_dir();
    let all = read(&dir.join("tools.json")).as_array().unwrap().clone();
    let (_, calls) = raw_counts(&dir);
    let removed = calls.iter().max_by_key(|(_, n)| **n).unwrap().0.clone();
    for (label, tools) in [
        ("all", all.clone()),
        (
            "removed",
            all.iter()
                .filter(|t| t["name"] != removed.as_str())
                .cloned()
                .collect(),
        ),
    ] {
        let out = scratch(&format!("log-{label}"));
        import_with_tools(&dir, &out, &tools);
        let tree = rate(&out);
        let log = out.join("log.jsonl");
        std::fs::write(&log, log_lines(&dir, &tools)).unwrap();
        let scanned = toolcall_rate::rate_jsonl(&[log], &ScanOptions::default()).unwrap();
        let from_log = Report::new(scanned, Gate::default());
        assert_eq!(from_log.bad_lines, 0, "{label}: {:#?}", from_log.errors);
        assert_eq!(
            (from_log.responses, from_log.calls, from_log.unknown),
            (tree.responses, tree.calls, tree.unknown),
            "{label}"
        );
        let causes = |r: &Report| {
            r.distinct
                .iter()
                .map(|d| (d.name.clone(), d.count, d.causes.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(causes(&from_log), causes(&tree), "{label}");
    }
}
