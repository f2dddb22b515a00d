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
//!
//! An OpenAI Agents SDK export (`{"data": [trace.span, …]}`) rated at 2,000 and at 20,000 spans:
//! the time per span of the longer against the shorter, in the same run, so that a reader whose
//! cost grows faster than the spans (the tree was once found by filtering every span for each
//! one: 20,000 spans gave no answer in 120 s) shows as a ratio over 1.
//!
//! An OTLP JSON document (one `resourceSpans` object, as a collector's file exporter or an SDK
//! writes a batch) of a service's spans, many small attributes each and a GenAI chat span among
//! every fifty: `toolcall rate`'s peak RSS over the document's size, which the README holds to
//! ten times at most (read whole as a `Value`, it was 26 times), with the same spans as JSON
//! Lines beside it.

use std::io::Write;
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

    openai_agents_scaling(&dir);
    otlp_document_memory(&dir);
}

/// An OpenAI Agents export of `spans` spans in one trace: agent spans (the catalog's names as
/// their tools), each with four `function` spans and five `generation` spans under it; every
/// 100th call names a tool the catalog lacks.
fn write_agents_export(path: &Path, spans: usize, names: &[String]) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create the export"));
    write!(out, r#"{{"object": "list", "data": ["#).expect("write the export");
    let (mut agent, mut calls) = (String::new(), 0);
    for i in 0..spans {
        let id = format!("span_{i:08x}");
        let span = if i % 10 == 0 {
            agent = id.clone();
            json!({"object": "trace.span", "id": id, "trace_id": "trace_1", "parent_id": null,
                   "started_at": "2026-11-30T10:00:00.000Z",
                   "span_data": {"type": "agent", "name": format!("agent {}", i / 10),
                                 "tools": names, "handoffs": [], "output_type": "str"}})
        } else if i % 10 <= 4 {
            calls += 1;
            let name = if calls % 100 == 0 {
                "cancel_flight_now".to_owned()
            } else {
                names[i % names.len()].clone()
            };
            json!({"object": "trace.span", "id": id, "trace_id": "trace_1", "parent_id": agent,
                   "started_at": "2026-11-30T10:00:01.000Z",
                   "span_data": {"type": "function", "name": name,
                                 "input": "{\"reservation_id\": \"ZFA04Y\"}",
                                 "output": "{\"status\": \"ok\"}", "mcp_data": null}})
        } else {
            json!({"object": "trace.span", "id": id, "trace_id": "trace_1", "parent_id": agent,
                   "started_at": "2026-11-30T10:00:00.500Z",
                   "span_data": {"type": "generation", "model": "gpt-4o",
                                 "usage": {"input_tokens": 2800, "output_tokens": 40}}})
        };
        let comma = if i + 1 < spans { "," } else { "" };
        write!(out, "{span}{comma}").expect("write the export");
    }
    write!(out, "]}}").expect("write the export");
    out.flush().expect("write the export");
    calls
}

fn openai_agents_scaling(dir: &Path) {
    let (_, names) = tools();
    let rounds = if quick() { 3 } else { 7 };
    let options = ScanOptions {
        threads: 1,
        ..ScanOptions::default()
    };
    let supplied = toolcall_rate::traces::Supplied::default();
    let sizes = [2_000, 20_000];
    let mut per_span = Vec::new();
    let mut detail = Vec::new();
    for spans in sizes {
        let path = dir.join(format!("openai-agents-{spans}.json"));
        let calls = write_agents_export(&path, spans, &names);
        let mut times = Vec::new();
        for _ in 0..rounds {
            let (seconds, tally) =
                timed(|| rate_traces(std::slice::from_ref(&path), None, &supplied, &options));
            let tally = tally.expect("the export rates");
            assert_eq!(tally.calls(), calls as u64, "every function span is scored");
            assert_eq!(tally.unknown(), (calls / 100) as u64);
            times.push(seconds);
        }
        let t = median(&times);
        per_span.push(t / spans as f64);
        detail.push(format!(
            "{spans} spans ({:.1} MB): {t:.3} s, {:.1} µs/span",
            std::fs::metadata(&path).map_or(0, |m| m.len()) as f64 / 1e6,
            t / spans as f64 * 1e6
        ));
        let _ = std::fs::remove_file(&path);
    }
    let growth = per_span[1] / per_span[0];
    Row {
        name: "traces: an OpenAI Agents export, time per span at 20,000 spans vs 2,000, one core",
        measured: format!("{growth:.2}x"),
        target: "<= 1.50x",
        ok: Some(growth <= 1.5),
        detail: format!(
            "{}; median of {rounds}; load {:.1}",
            detail.join(", "),
            load_average()
        ),
    }
    .print();
}

/// A service's span: thirty small attributes and an event; every fiftieth a GenAI chat span
/// with the catalog and one call of a tool it defines. Fifty spans a trace.
fn service_span(i: usize, tools: &str, names: &[String]) -> Value {
    let attr = |k: String, v: Value| json!({"key": k, "value": v});
    let mut attributes: Vec<Value> = (0..20)
        .map(|j| {
            attr(
                format!("http.attr{j}"),
                json!({"stringValue": format!("v{i}-{j}")}),
            )
        })
        .chain((0..10).map(|j| attr(format!("n{j}"), json!({"intValue": (i * j).to_string()}))))
        .collect();
    if i % 50 == 0 {
        let name = &names[(i / 50) % names.len()];
        let output = json!([{"role": "assistant", "parts": [{"type": "tool_call",
            "id": format!("call_{i}"), "name": name, "arguments": {}}]}]);
        attributes.push(attr(
            "gen_ai.operation.name".into(),
            json!({"stringValue": "chat"}),
        ));
        attributes.push(attr(
            "gen_ai.tool.definitions".into(),
            json!({ "stringValue": tools }),
        ));
        attributes.push(attr(
            "gen_ai.output.messages".into(),
            json!({"stringValue": output.to_string()}),
        ));
    }
    json!({"traceId": format!("{:032x}", i / 50), "spanId": format!("{i:016x}"),
           "name": "GET /api", "kind": 2, "startTimeUnixNano": (1_785_000_000_000_000_000u64 + i as u64).to_string(),
           "attributes": attributes,
           "events": [{"name": "event", "attributes": [{"key": "a", "value": {"stringValue": "b"}}]}]})
}

fn otlp_document_memory(dir: &Path) {
    let (tools, names) = tools();
    let definitions: Vec<Value> = tools
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| match t.get("function") {
            Some(_) => t.clone(),
            None => json!({"type": "function", "name": t["name"], "description": t["description"],
                           "parameters": t["parameters"]}),
        })
        .collect();
    let definitions = Value::from(definitions).to_string();
    // About 58 MB, the size the figure of 26 times was found at (quick: about 15 MB).
    let spans = if quick() { 8_000 } else { 30_000 };
    let (document, lines) = (
        dir.join("service.otlp.json"),
        dir.join("service.otlp.jsonl"),
    );
    let create = |path: &Path| {
        std::io::BufWriter::new(std::fs::File::create(path).expect("create the OTLP export"))
    };
    let (mut doc, mut jsonl) = (create(&document), create(&lines));
    let resource =
        json!({"attributes": [{"key": "service.name", "value": {"stringValue": "booking"}}]});
    write!(
        doc,
        r#"{{"resourceSpans": [{{"resource": {resource}, "scopeSpans": [{{"scope": {{"name": "svc"}}, "spans": ["#
    )
    .expect("write the document");
    for i in 0..spans {
        let span = service_span(i, &definitions, &names);
        let comma = if i + 1 < spans { "," } else { "" };
        write!(doc, "{span}{comma}").expect("write the document");
        let line = json!({"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "svc"}, "spans": [span]}]}]});
        writeln!(jsonl, "{line}").expect("write the JSON Lines");
    }
    write!(doc, "]}}]}}]}}").expect("write the document");
    doc.flush().expect("write the document");
    jsonl.flush().expect("write the JSON Lines");
    drop((doc, jsonl));
    let mb = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len()) as f64 / 1e6;
    let (size, lines_size) = (mb(&document), mb(&lines));
    let (whole, by_line) = (
        toolcall_bench::peak_rss_of(&[document.as_os_str()]),
        toolcall_bench::peak_rss_of(&[lines.as_os_str()]),
    );
    let times = whole / size;
    Row {
        name: "traces: peak RSS of an OTLP JSON document over its size (toolcall rate)",
        measured: format!("{times:.1}x"),
        target: "<= 10x",
        ok: Some(times <= 10.0),
        detail: format!(
            "{whole:.0} MB for a {size:.1} MB document of {spans} spans; the same spans as JSON \
             Lines ({lines_size:.1} MB): {by_line:.0} MB"
        ),
    }
    .print();
    let _ = std::fs::remove_file(&document);
    let _ = std::fs::remove_file(&lines);
}
