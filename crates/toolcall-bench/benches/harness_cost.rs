//! The harness's cost per case, against merely reading and parsing the same files.
//!
//! A tree of 10,000 cases for one agent is generated into the target directory (never
//! committed) by repeating the repository's own `cases/` × `recorded/` pairs under new ids. This
//! binary is also the harness: run with `ATP_BENCH_AS_HARNESS=1` it is a `harness = false` test
//! binary over that tree (`toolcall_harness::Harness::run`), so compilation is excluded and the
//! timing is what `cargo test` spends after building.
//!
//! Rows:
//! - a whole harness run (one test thread, output discarded) against reading and parsing every
//!   case and recording into `serde_json::Value` on one thread in this process (target ≤ 2×);
//! - nextest's one-process-per-test mode: `--exact NAME` for a sample of names, in
//!   milliseconds per test, against the same `--exact` on a 100-case tree. Equal times mean the
//!   start-up does not walk the tree (target ≤ 1.5×, i.e. flat as the tree grows 100-fold);
//! - the release `toolcall check --json-out FILE` binary's peak RSS over the same tree against
//!   `toolcall check` alone (`/usr/bin/time -f %M`): the report is written as it is drawn, so
//!   it costs little memory beyond the run's (target ≤ 1.25×; holding the run as one JSON value
//!   made it about 4× at 20,000 cases).
//!
//! `cargo bench -p toolcall-bench --bench harness_cost` (`-- --quick`: fewer rounds) after
//! `cargo build --release -p toolcall-cli` (`bench/run` does both).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde_json::Value;
use toolcall_bench::{load_average, median, quick, timed, workspace_root, Row};

const AGENT: &str = "bench-agent";
const AS_HARNESS: &str = "ATP_BENCH_AS_HARNESS";

/// The repository's (case, recording) pairs as file contents, for one agent's recordings each.
fn pairs() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut pairs = Vec::new();
    let mut agents: Vec<PathBuf> = std::fs::read_dir(root.join("recorded"))
        .expect("recorded/ reads")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    agents.sort();
    for agent in agents {
        let mut files = Vec::new();
        walk(&agent, &mut files);
        files.sort();
        for file in files {
            let id = file.strip_prefix(&agent).expect("under the agent");
            let case = root.join("cases").join(id).with_extension("json");
            if let (Ok(case), Ok(recording)) = (
                std::fs::read_to_string(&case),
                std::fs::read_to_string(&file),
            ) {
                pairs.push((case, recording));
            }
        }
    }
    assert!(
        !pairs.is_empty(),
        "no case/recording pairs in the repository"
    );
    pairs
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// The relative id of generated case `i`: a hundred cases per group directory.
fn id(i: usize) -> String {
    format!("g{:03}/case-{i:05}", i / 100)
}

/// Writes a tree of `n` cases under `dir` (once: kept when it is already complete).
fn tree(dir: &Path, n: usize, pairs: &[(String, String)]) {
    let done = dir.join(".complete");
    if done.is_file() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    for i in 0..n {
        let (case, recording) = &pairs[i % pairs.len()];
        let case_path = dir.join("cases").join(format!("{}.json", id(i)));
        let recording_path = dir
            .join("recorded")
            .join(AGENT)
            .join(format!("{}.json", id(i)));
        for (path, text) in [(case_path, case), (recording_path, recording)] {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
    }
    std::fs::create_dir_all(dir.join("baselines")).expect("mkdir");
    std::fs::write(done, "").expect("write");
}

/// The reference: read and parse every case and recording, one thread.
fn read_and_parse(dir: &Path, n: usize) -> usize {
    let mut objects = 0;
    for i in 0..n {
        for path in [
            dir.join("cases").join(format!("{}.json", id(i))),
            dir.join("recorded")
                .join(AGENT)
                .join(format!("{}.json", id(i))),
        ] {
            let text = std::fs::read_to_string(&path).expect("a generated file reads");
            let value: Value = serde_json::from_str(&text).expect("a generated file parses");
            objects += usize::from(value.is_object() || value.is_array());
        }
    }
    objects
}

/// Runs this binary as the harness over `dir` with `args`; the wall time in seconds.
fn harness(dir: &Path, args: &[&str]) -> f64 {
    let me = std::env::current_exe().expect("this binary");
    let (seconds, status) = timed(|| {
        Command::new(me)
            .args(args)
            .env(AS_HARNESS, "1")
            .env("ATP_CASES", dir.join("cases"))
            .env("ATP_RECORDED", dir.join("recorded"))
            .env("ATP_BASELINES", dir.join("baselines"))
            .env_remove("ATP_BASELINE_WRITE")
            .env_remove("GITHUB_ACTIONS")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the harness starts")
    });
    // 0: all passed; 101: some recorded responses fail (the repository's red cases do).
    assert!(
        matches!(status.code(), Some(0 | 101)),
        "the harness run {args:?} failed to run: {status}"
    );
    seconds
}

fn main() -> ExitCode {
    if std::env::var_os(AS_HARNESS).is_some() {
        return toolcall_harness::Harness::new().run();
    }
    let quick = quick();
    let n = 10_000;
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness-bench");
    let pairs = pairs();
    let big = base.join(format!("tree-{n}"));
    let small = base.join("tree-100");
    tree(&big, n, &pairs);
    tree(&small, 100, &pairs);

    let rounds = if quick { 3 } else { 7 };
    let load = load_average();
    let (mut reference, mut runs, mut runs_threads) = (vec![], vec![], vec![]);
    read_and_parse(&big, n); // warm the page cache
    for _ in 0..rounds {
        reference.push(timed(|| read_and_parse(&big, n)).0);
        runs.push(harness(&big, &["--test-threads", "1"]));
        if !quick {
            runs_threads.push(harness(&big, &[]));
        }
    }
    let (reference, run) = (median(&reference), median(&runs));
    let ratio = run / reference;
    let threads = if quick {
        String::new()
    } else {
        format!(", default threads {:.2} s", median(&runs_threads))
    };
    Row {
        name: "harness: 10,000-case run vs reading + parsing the files",
        measured: format!("{ratio:.2}x"),
        target: "<= 2.00x",
        ok: Some(ratio <= 2.0),
        detail: format!(
            "harness {run:.2} s on 1 test thread ({:.3} ms/case{threads}), read+parse {reference:.2} s; median of {rounds}; load {load:.1}",
            run * 1e3 / n as f64
        ),
    }
    .print();

    // nextest: one process per test, `--exact NAME`, on the big tree and on the small one.
    let sample: Vec<usize> = (0..if quick { 10 } else { 30 })
        .map(|k| k * 37 % 100)
        .collect();
    let load = load_average();
    let (mut on_big, mut on_small) = (vec![], vec![]);
    for &i in &sample {
        let name = format!("{AGENT}::{}", id(i));
        on_small.push(harness(&small, &["--exact", &name]));
        on_big.push(harness(&big, &["--exact", &name]));
    }
    let (on_big, on_small) = (median(&on_big), median(&on_small));
    let ratio = on_big / on_small;
    Row {
        name: "harness under nextest: --exact start-up, 10,000 vs 100 cases",
        measured: format!("{ratio:.2}x"),
        target: "<= 1.50x",
        ok: Some(ratio <= 1.5),
        detail: format!(
            "{:.1} ms per test on the 10,000-case tree, {:.1} ms on 100 cases (whole run: {:.2} ms per test); median of {} names; load {load:.1}",
            on_big * 1e3,
            on_small * 1e3,
            run * 1e3 / n as f64,
            sample.len()
        ),
    }
    .print();

    // `check --json-out`'s peak memory against `check` alone, the same tree.
    let report = base.join("report.json");
    let root = ["check".as_ref(), "--root".as_ref(), big.as_os_str()];
    let json_out = [&root[..], &["--json-out".as_ref(), report.as_os_str()]].concat();
    let alone = toolcall_bench::peak_rss_of_toolcall(&root, &[0, 1]);
    let with_json = toolcall_bench::peak_rss_of_toolcall(&json_out, &[0, 1]);
    let ratio = with_json / alone;
    Row {
        name: "check --json-out: peak RSS vs check alone, 10,000 cases",
        measured: format!("{ratio:.2}x"),
        target: "<= 1.25x",
        ok: Some(ratio <= 1.25),
        detail: format!(
            "{with_json:.0} MB with --json-out ({:.0} MB report), {alone:.0} MB without",
            std::fs::metadata(&report).map_or(0.0, |m| m.len() as f64 / 1e6)
        ),
    }
    .print();
    ExitCode::SUCCESS
}
