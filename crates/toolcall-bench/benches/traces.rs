//! Rating a Langfuse blob export of a few thousand observation rows, from Parquet and from the
//! same rows in JSON Lines, on one core: the Parquet reader's cost against the JSON reader's on
//! the same data, measured in the same run. Each generation row holds the tau-bench airline
//! catalog (14 tools with their schemas) in its raw request, as real exports do, and one call;
//! every 100th call names a tool the catalog lacks.
//!
//! A second row is `toolcall rate`'s peak RSS (the release binary, under `/usr/bin/time`) on a
//! Parquet export ten times longer than the first: a long export is read a trace at a time, so
//! memory should stay flat. The exports are written a thousand traces at a time (a row group
//! each), never held whole.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolcall_bench::{load_average, median, quick, tau_bench_dir, timed, Row};
use toolcall_rate::{rate_traces, ScanOptions};

/// The catalog and its tool names.
fn tools() -> (Value, Vec<String>) {
    let tools: Value = serde_json::from_str(
        &std::fs::read_to_string(tau_bench_dir().join("tools.json")).expect("tools.json"),
    )
    .expect("tools.json is JSON");
    let names: Vec<String> = tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/name").or_else(|| t.get("name")))
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    (tools, names)
}

/// The rows of traces `traces`: a generation and its tool observation each.
fn rows(traces: std::ops::Range<usize>, (tools, names): &(Value, Vec<String>)) -> Vec<Value> {
    let mut out = Vec::with_capacity(traces.len() * 2);
    for i in traces {
        let name = if i % 100 == 0 {
            "cancel_flight".to_owned()
        } else {
            names[i % names.len()].clone()
        };
        let call = format!("call_{i}");
        let input = json!({"messages": [{"role": "user", "content": format!("request {i}")}],
                           "tools": tools});
        let output = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": call, "type": "function", "function": {"name": name, "arguments": "{}"}}]}}]});
        out.push(json!({"id": format!("gen-{i}"), "trace_id": format!("trace-{i}"),
            "type": "GENERATION", "name": "chat", "start_time": format!("2026-11-30 10:00:{:02}.000000", i % 60),
            "input": input.to_string(), "output": output.to_string(), "metadata": "{}"}));
        out.push(json!({"id": format!("tool-{i}"), "trace_id": format!("trace-{i}"),
            "type": "TOOL", "name": name, "start_time": format!("2026-11-30 10:00:{:02}.500000", i % 60),
            "input": "{}", "output": "{}",
            "metadata": json!({"attributes": {"gen_ai.tool.call.id": call}}).to_string()}));
    }
    out
}

/// Traces per row group (and per batch of rows generated at once).
const BATCH: usize = 1_000;

/// Writes the export of `traces` traces as Parquet, and as JSON Lines when `jsonl` is given.
fn write_exports(traces: usize, parquet: &Path, jsonl: Option<&Path>) {
    use std::io::Write;
    let catalog = tools();
    let mut writer = toolcall_traces::RowsWriter::create(
        parquet,
        &toolcall_traces::RowsWriter::LANGFUSE_COLUMNS,
    )
    .expect("create the export");
    let mut lines = jsonl.map(|path| {
        std::io::BufWriter::new(std::fs::File::create(path).expect("create the JSON Lines export"))
    });
    for start in (0..traces).step_by(BATCH) {
        let rows = rows(start..traces.min(start + BATCH), &catalog);
        writer.group(&rows).expect("write a row group");
        if let Some(out) = &mut lines {
            for row in &rows {
                writeln!(out, "{row}").expect("write the JSON Lines export");
            }
        }
    }
    writer.close().expect("close the Parquet export");
    if let Some(mut out) = lines {
        out.flush().expect("write the JSON Lines export");
    }
}

fn main() {
    let traces = if quick() { 1_000 } else { 4_000 };
    let rounds = if quick() { 3 } else { 7 };
    let dir: PathBuf = toolcall_bench::workspace_root().join("target/bench-traces");
    std::fs::create_dir_all(&dir).expect("target/bench-traces");
    let (jsonl, parquet) = (
        dir.join("observations.jsonl"),
        dir.join("observations.parquet"),
    );
    write_exports(traces, &parquet, Some(&jsonl));
    let rows = traces * 2;
    let options = ScanOptions {
        threads: 1,
        ..ScanOptions::default()
    };
    let supplied = toolcall_rate::traces::Supplied::default();
    let run = |path: &Path| {
        let (seconds, tally) =
            timed(|| rate_traces(&[path.to_path_buf()], None, &supplied, &options));
        let tally = tally.expect("the export rates");
        assert_eq!(
            tally.calls(),
            traces as u64,
            "every generation's call is scored"
        );
        assert_eq!(tally.unknown(), traces.div_ceil(100) as u64);
        seconds
    };
    let (mut from_json, mut from_parquet) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        from_json.push(run(&jsonl));
        from_parquet.push(run(&parquet));
    }
    let (j, p) = (median(&from_json), median(&from_parquet));
    let ratio = j / p;
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len()) as f64 / 1e6;
    Row {
        name: "traces: a Langfuse Parquet export vs the same rows as JSON Lines, one core",
        measured: format!("{ratio:.2}x"),
        target: ">= 0.50x",
        ok: Some(ratio >= 0.5),
        detail: format!(
            "{} rows: Parquet {:.0} rows/s ({p:.2} s, {:.1} MB), JSON Lines {:.0} rows/s ({j:.2} s, {:.1} MB); median of {rounds}; peak RSS {:.0} MB; load {:.1}",
            rows,
            rows as f64 / p,
            size(&parquet),
            rows as f64 / j,
            size(&jsonl),
            toolcall_bench::peak_rss_mb(),
            load_average()
        ),
    }
    .print();

    // Peak memory: an export of a few thousand rows (the full run's, also in a quick run: a
    // smaller one fits under the reader's budget whole), and one ten times longer, rated by the
    // release binary.
    let (short, long) = (
        dir.join("observations-short.parquet"),
        dir.join("observations-long.parquet"),
    );
    let traces = 4_000;
    let rows = traces * 2;
    write_exports(traces, &short, None);
    write_exports(traces * 10, &long, None);
    let (small, big) = (
        toolcall_bench::peak_rss_of(&[short.as_os_str()]),
        toolcall_bench::peak_rss_of(&[long.as_os_str()]),
    );
    let growth = big / small;
    Row {
        name: "traces: peak RSS, a Parquet export ten times longer (toolcall rate)",
        measured: format!("{growth:.2}x"),
        target: "<= 1.25x",
        ok: Some(growth <= 1.25),
        detail: format!(
            "{small:.1} MB at {rows} rows ({:.1} MB), {big:.1} MB at {} rows ({:.1} MB)",
            size(&short),
            rows * 10,
            size(&long)
        ),
    }
    .print();
    let _ = std::fs::remove_file(&long);
}
