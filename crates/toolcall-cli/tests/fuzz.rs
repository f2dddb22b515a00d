//! The bounded fuzz tier: every parser — response bodies and recorded streams, cases, tool
//! arrays, requests, MCP flows, JSONL logs, traces, baselines — fed mutants of the repository's
//! own inputs for a time budget (the OpenAI Agents exports and OTLP documents mutants of their
//! structure too: parent cycles, repeated and missing ids, chains thousands deep, repeated
//! members), and Parquet exports mutated where the reader trusts them (page headers' declared
//! sizes, the footer). None may panic, none may take longer than a bound on one input (a hang),
//! the process's peak memory stays under a bound, and no Parquet mutant adds more than a bound
//! set by the input limit to it. It prints how many inputs it tried,
//! per parser.
//!
//! Feature `fuzz-tier`; `.ci/run` runs it with `ATP_FUZZ_SECONDS` (default 30). Deterministic
//! for a given `ATP_FUZZ_SEED` (default 1), so a failure prints the seed and the input that broke.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest one parse may take before it counts as a hang.
const PER_INPUT: Duration = Duration::from_secs(2);
/// The most the process may hold at its peak (the inputs are a few hundred KB each).
const MAX_PEAK_KB: u64 = 2 * 1024 * 1024;

/// xorshift64*: enough randomness for mutation, reproducible from a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// A mutant of `seed`: bytes flipped, cut, repeated or spliced, JSON-shaped damage (deep
/// nesting, huge numbers, nulls for values, control characters, invalid UTF-8), or several.
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(10) {
            0 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            1 => bytes.truncate(at),
            2 => {
                let end = (at + rng.below(64)).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                drop(bytes.splice(at..at, piece.iter().copied().chain(piece.iter().copied())));
            }
            3 => {
                let depth = 1 + rng.below(300);
                let wrapped = [
                    "[".repeat(depth).into_bytes(),
                    bytes.clone(),
                    "]".repeat(depth).into_bytes(),
                ]
                .concat();
                bytes = wrapped;
            }
            4 => drop(bytes.splice(at..at, *b"1e999999")),
            5 => drop(bytes.splice(at..at, *b"null")),
            6 => drop(bytes.splice(at..at, [0x1b, b'[', b'3', b'1', b'm', 0x00, b'\n'])),
            7 => drop(bytes.splice(at..at, [0xff, 0xfe, 0xc3])),
            8 => drop(bytes.splice(at..at, *b"\"\\ud800\"")),
            _ => {
                let from = rng.below(bytes.len() + 1);
                let to = (from + rng.below(256)).min(bytes.len());
                let piece = bytes[from..to].to_vec();
                drop(bytes.splice(at..at, piece));
            }
        };
    }
    bytes
}

/// The repository's own inputs of one kind, the seeds of the mutants.
fn seeds(root: &Path, dirs: &[&str], suffixes: &[&str]) -> Vec<Vec<u8>> {
    fn walk(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, suffixes, out);
            } else if suffixes.iter().any(|s| path.to_string_lossy().ends_with(s)) {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    for dir in dirs {
        walk(&root.join(dir), suffixes, &mut paths);
    }
    paths.sort();
    let seeds: Vec<Vec<u8>> = paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter(|b| b.len() < 256 * 1024)
        .collect();
    assert!(!seeds.is_empty(), "no seeds under {dirs:?}");
    seeds
}

/// The trace fixtures, and (with Parquet in the build) the Parquet seeds: mutants of them
/// exercise the Parquet reader, whose row loop once spun on a row it could not read.
fn traces_seeds(root: &Path, fixtures: &str) -> Vec<Vec<u8>> {
    #[allow(unused_mut)]
    let mut seeds = seeds(root, &[fixtures], &[".json", ".jsonl"]);
    #[cfg(feature = "parquet")]
    seeds.extend(parquet_seeds(root, fixtures));
    seeds
}

/// The OpenAI Agents fixtures (the SDK's normalised trees) flattened into the exporter's
/// `{"data": [trace.span, …]}` lists with ids and parent ids, and the trees themselves: the
/// seeds of the export mutants.
fn agents_seeds(root: &Path, fixtures: &str) -> Vec<serde_json::Value> {
    use serde_json::{json, Value};
    let mut out = Vec::new();
    for bytes in seeds(root, &[&format!("{fixtures}/openai-agents")], &[".json"]) {
        let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if !doc.is_array() {
            continue;
        }
        let mut spans = Vec::new();
        // (the node, its parent's id)
        let mut stack: Vec<(&Value, Value)> = doc
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["children"].as_array().into_iter().flatten())
            .map(|c| (c, Value::Null))
            .collect();
        while let Some((node, parent)) = stack.pop() {
            let id = format!("span_{}", spans.len());
            let mut data = node.get("data").cloned().unwrap_or_else(|| json!({}));
            if let Some(map) = data.as_object_mut() {
                map.insert("type".into(), node["type"].clone());
            }
            spans.push(
                json!({"object": "trace.span", "id": id, "trace_id": "trace_1",
                              "parent_id": parent, "span_data": data}),
            );
            for child in node["children"].as_array().into_iter().flatten() {
                stack.push((child, json!(id)));
            }
        }
        out.push(json!({ "object": "list", "data": spans }));
        out.push(doc);
    }
    assert!(out.len() >= 4, "no OpenAI Agents fixtures under {fixtures}");
    out
}

/// A mutant of an exporter's span list: parents rewired into cycles (a span its own parent,
/// two spans each other's), ids repeated, emptied or taken away, `parent_id` of the wrong type,
/// and chains of up to 5,000 nested spans; then, sometimes, bytes damaged as [`mutate`] does.
fn mutate_agents(seed: &serde_json::Value, rng: &mut Rng) -> Vec<u8> {
    use serde_json::{json, Value};
    let mut doc = seed.clone();
    if let Some(spans) = doc.get_mut("data").and_then(Value::as_array_mut) {
        for _ in 0..=rng.below(3) {
            let n = spans.len().max(1);
            let (i, j) = (rng.below(n), rng.below(n));
            let id =
                |spans: &[Value], k: usize| spans.get(k).map_or(Value::Null, |s| s["id"].clone());
            match rng.below(8) {
                0 => {
                    let own = id(spans, i);
                    if let Some(s) = spans.get_mut(i) {
                        s["parent_id"] = own;
                    }
                }
                1 => {
                    let (a, b) = (id(spans, i), id(spans, j));
                    if let Some(s) = spans.get_mut(i) {
                        s["parent_id"] = b;
                    }
                    if let Some(s) = spans.get_mut(j) {
                        s["parent_id"] = a;
                    }
                }
                2 => {
                    if let Some(s) = spans.get(i).cloned() {
                        spans.push(s);
                    }
                }
                3 => {
                    if let Some(s) = spans.get_mut(i) {
                        s["id"] = [json!(""), Value::Null, json!(7)][rng.below(3)].clone();
                        s["parent_id"] = json!("");
                    }
                }
                4 => {
                    if let Some(s) = spans.get_mut(i) {
                        s["parent_id"] = [json!(1), json!({}), json!([]), json!("nowhere")]
                            [rng.below(4)]
                        .clone();
                    }
                }
                5 => {
                    let mut parent = id(spans, i);
                    for k in 0..1 + rng.below(5_000) {
                        let kind = ["function", "agent", "generation"][rng.below(3)];
                        let chained = format!("chain_{k}");
                        spans.push(json!({"object": "trace.span", "id": chained,
                            "trace_id": "trace_1", "parent_id": parent,
                            "span_data": {"type": kind, "name": "f", "tools": ["f"]}}));
                        parent = json!(chained);
                    }
                }
                6 => {
                    // A cycle through a long chain back to its start.
                    let start = id(spans, i);
                    let mut parent = start.clone();
                    for k in 0..1 + rng.below(2_000) {
                        let chained = format!("loop_{k}");
                        spans.push(json!({"object": "trace.span", "id": chained,
                            "trace_id": "trace_1", "parent_id": parent,
                            "span_data": {"type": "function", "name": "f"}}));
                        parent = json!(chained);
                    }
                    if let Some(s) = spans.get_mut(i) {
                        s["parent_id"] = parent;
                    }
                }
                _ => {
                    if i < spans.len() {
                        spans.remove(i);
                    }
                }
            }
        }
    }
    let text = doc.to_string().into_bytes();
    if rng.below(4) == 0 {
        mutate(&text, rng)
    } else {
        text
    }
}

/// OTLP documents: the fixtures that are one (`resourceSpans`, Tempo's `batches`), and the
/// OTLP fixture's spans spread over resources and scopes of both names.
fn otlp_seeds(root: &Path, fixtures: &str) -> Vec<serde_json::Value> {
    use serde_json::{json, Value};
    let mut out: Vec<Value> = seeds(root, &[fixtures], &[".json"])
        .iter()
        .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
        .filter(|v| v.get("resourceSpans").is_some() || v.get("batches").is_some())
        .collect();
    assert!(out.len() >= 2, "no OTLP documents under {fixtures}");
    let spans: Vec<Value> = out[0]["resourceSpans"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["scopeSpans"].as_array().into_iter().flatten())
        .flat_map(|s| s["spans"].as_array().into_iter().flatten())
        .cloned()
        .collect();
    out.push(
        json!({"resourceSpans": spans.iter().enumerate().map(|(i, span)| {
        let scope = if i % 2 == 0 { "scopeSpans" } else { "instrumentationLibrarySpans" };
        json!({"resource": {}, scope: [{"scope": {}, "spans": [span]}]})
    }).collect::<Vec<_>>()}),
    );
    out
}

/// A mutant of an OTLP document: a level's member repeated (spliced in as text, so the
/// document has two members of one name), renamed to the other name, made a scalar, spans
/// repeated, an attribute value nested up to 300 deep; then, sometimes, bytes damaged.
fn mutate_otlp(seed: &serde_json::Value, rng: &mut Rng) -> Vec<u8> {
    use serde_json::{json, Value};
    let mut doc = seed.clone();
    let mut text = None;
    for _ in 0..=rng.below(2) {
        let key = if doc.get("batches").is_some() {
            "batches"
        } else {
            "resourceSpans"
        };
        match rng.below(6) {
            0 => {
                let other = if key == "batches" {
                    "resourceSpans"
                } else {
                    "batches"
                };
                let value = doc[key].clone();
                doc[other] = value;
            }
            1 => doc[key] = [json!(1), json!({}), Value::Null][rng.below(3)].clone(),
            2 => {
                if let Some(resource) = doc[key].as_array_mut().and_then(|r| r.first_mut()) {
                    let scopes = resource.as_object_mut().and_then(|m| {
                        m.remove("scopeSpans")
                            .or_else(|| m.remove("instrumentationLibrarySpans"))
                    });
                    if let Some(scopes) = scopes {
                        let name = ["scopeSpans", "instrumentationLibrarySpans"][rng.below(2)];
                        resource[name] = scopes;
                    }
                }
            }
            3 => {
                let mut deep = json!({"stringValue": "x"});
                for _ in 0..1 + rng.below(300) {
                    deep = json!({"kvlistValue": {"values": [{"key": "k", "value": deep}]}});
                }
                let spans = doc.pointer_mut(&format!("/{key}/0/scopeSpans/0/spans"));
                if let Some(span) = spans
                    .and_then(Value::as_array_mut)
                    .and_then(|s| s.first_mut())
                {
                    if let Some(attributes) = span["attributes"].as_array_mut() {
                        attributes.push(json!({"key": "deep", "value": deep}));
                    }
                }
            }
            4 => {
                let spans = doc.pointer_mut(&format!("/{key}/0/scopeSpans/0/spans"));
                if let Some(spans) = spans.and_then(Value::as_array_mut) {
                    let again: Vec<Value> = spans.clone();
                    spans.extend(again);
                }
            }
            _ => {
                // A member of some level again, as text, before the one there (which, the
                // later, is the one read): `{"spans": [dup], "spans": [...]}`.
                let whole = text.take().unwrap_or_else(|| doc.to_string());
                let dup = r#"{"spanId": "dup", "attributes": []}"#;
                let members = [
                    ("\"spans\":", dup.to_owned()),
                    ("\"scopeSpans\":", format!(r#"{{"spans": [{dup}]}}"#)),
                    (
                        "\"instrumentationLibrarySpans\":",
                        format!(r#"{{"spans": [{dup}]}}"#),
                    ),
                    (
                        "\"resourceSpans\":",
                        format!(r#"{{"scopeSpans": [{{"spans": [{dup}]}}]}}"#),
                    ),
                    (
                        "\"batches\":",
                        format!(r#"{{"scopeSpans": [{{"spans": [{dup}]}}]}}"#),
                    ),
                ];
                let found: Vec<(usize, &str, &String)> = members
                    .iter()
                    .flat_map(|(key, value)| {
                        whole
                            .match_indices(key)
                            .map(move |(at, _)| (at, *key, value))
                    })
                    .collect();
                text = Some(match found.get(rng.below(found.len())) {
                    Some((at, key, value)) => {
                        let mut t = whole.clone();
                        t.insert_str(*at, &format!("{key} [{value}], "));
                        t
                    }
                    None => whole,
                });
            }
        }
    }
    let text = text.unwrap_or_else(|| doc.to_string()).into_bytes();
    if rng.below(4) == 0 {
        mutate(&text, rng)
    } else {
        text
    }
}

/// Parquet exports written here with the reader's own writer: the Langfuse rows in two row
/// groups; one row whose value is 1.1 MB of one letter (a page of four-byte sizes, in a file
/// of some 50 KB); 300 rows of a few repeated values (dictionary pages).
#[cfg(feature = "parquet")]
fn parquet_seeds(root: &Path, fixtures: &str) -> Vec<Vec<u8>> {
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(
        root.join(fixtures)
            .join("langfuse/handwritten_blob_export_rows.jsonl"),
    )
    .unwrap()
    .lines()
    .filter_map(|l| serde_json::from_str(l).ok())
    .filter(serde_json::Value::is_object)
    .collect();
    let huge = serde_json::json!({"id": "x".repeat(1_100_000), "trace_id": "t0", "type": "SPAN"});
    let repeated: Vec<serde_json::Value> = (0..300).map(|i| rows[i % rows.len()].clone()).collect();
    let files: [&[Vec<serde_json::Value>]; 3] = [&[rows.clone(), rows], &[vec![huge]], &[repeated]];
    let path = std::env::temp_dir().join(format!("atp-fuzz-{}.parquet", std::process::id()));
    files
        .iter()
        .map(|groups| {
            let mut writer = toolcall_traces::RowsWriter::create(
                &path,
                &toolcall_traces::RowsWriter::LANGFUSE_COLUMNS,
            )
            .unwrap();
            for rows in *groups {
                writer.group(rows).unwrap();
            }
            writer.close().unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            bytes
        })
        .collect()
}

/// A mutant of a Parquet file aimed at what the reader trusts: a page header's declared sizes
/// (a Thrift compact `PageHeader` starts `0x15 TYPE 0x15 UNCOMPRESSED 0x15 COMPRESSED`, each a
/// zigzag varint) rewritten to a size near or past any limit, at the same width or another;
/// bytes of a header garbled; or the footer's bytes and its length rewritten; then, at times,
/// the byte-level damage of [`mutate`] too.
fn mutate_parquet(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    fn varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }
    fn varint_end(bytes: &[u8], at: usize) -> usize {
        let mut end = at;
        while end < bytes.len() && bytes[end] & 0x80 != 0 {
            end += 1;
        }
        (end + 1).min(bytes.len())
    }
    let mut bytes = seed.to_vec();
    let headers: Vec<usize> = bytes
        .windows(3)
        .enumerate()
        .filter(|(_, w)| w[0] == 0x15 && matches!(w[1], 0 | 4 | 6) && w[2] == 0x15)
        .map(|(i, _)| i)
        .collect();
    let sizes: [u64; 6] = [
        (1 << 31) - 1,
        (1 << 30) + 1,
        (64 << 20) + 1,
        (1 << 28) - 2,
        rng.next() % (1 << 32),
        u64::MAX,
    ];
    match rng.below(4) {
        0 | 1 if !headers.is_empty() => {
            let start = headers[rng.below(headers.len())];
            // Field 2 (uncompressed) or field 3 (compressed).
            let field2 = start + 2;
            let (at, end) = if rng.below(2) == 0 {
                (field2 + 1, varint_end(&bytes, field2 + 1))
            } else {
                let field3 = varint_end(&bytes, field2 + 1);
                (field3 + 1, varint_end(&bytes, field3 + 1))
            };
            if at < end {
                let size = sizes[rng.below(sizes.len())];
                let mut new = varint(size << 1);
                if rng.below(2) == 0 {
                    // The same width, so the file's layout holds: the largest value it takes.
                    new = vec![0xff; end - at];
                    if let Some(last) = new.last_mut() {
                        *last = 0x7e;
                    }
                }
                drop(bytes.splice(at..end, new));
            }
        }
        2 if !headers.is_empty() => {
            let start = headers[rng.below(headers.len())];
            for _ in 0..=rng.below(4) {
                let i = (start + rng.below(24)).min(bytes.len() - 1);
                bytes[i] = rng.next() as u8;
            }
        }
        _ if bytes.len() > 8 => {
            let n = bytes.len();
            let meta = u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]])
                as usize;
            let footer = n.saturating_sub(8 + meta);
            match rng.below(3) {
                0 => {
                    let length = (sizes[rng.below(sizes.len())] as u32).to_le_bytes();
                    bytes[n - 8..n - 4].copy_from_slice(&length);
                }
                1 => {
                    let at = footer + rng.below(n - 8 - footer);
                    let new = varint(sizes[rng.below(sizes.len())]);
                    let end = (at + new.len()).min(n - 8);
                    drop(bytes.splice(at..end, new));
                }
                _ => {
                    for _ in 0..=rng.below(8) {
                        let i = footer + rng.below(n - 8 - footer);
                        bytes[i] = rng.next() as u8;
                    }
                }
            }
        }
        _ => {}
    }
    if rng.below(4) == 0 {
        bytes = mutate(&bytes, rng);
    }
    bytes
}

/// The highest peak resident memory seen before a [`reset_peak`], in KB.
static PEAK_BEFORE_RESETS_KB: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Resets this process's peak resident memory (`VmHWM`) to what it holds now, where the
/// platform can (Linux: `/proc/self/clear_refs`); the peak so far is kept for [`peak_kb`].
fn reset_peak() -> bool {
    if let Some(kb) = status_kb("VmHWM:") {
        PEAK_BEFORE_RESETS_KB.fetch_max(kb, std::sync::atomic::Ordering::Relaxed);
    }
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Peak resident memory of this process, in KB (`VmHWM`, and the peaks before each
/// [`reset_peak`]), where the platform says.
fn peak_kb() -> Option<u64> {
    let before = PEAK_BEFORE_RESETS_KB.load(std::sync::atomic::Ordering::Relaxed);
    status_kb("VmHWM:").map(|kb| kb.max(before))
}

/// A `/proc/self/status` figure in KB (`VmHWM:`, `VmRSS:`), where the platform has it.
fn status_kb(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

type Parser = Box<dyn Fn(&[u8])>;

/// The input limit the fuzz tier runs under (`toolcall_score::set_max_input_bytes`): below the
/// default, so that what a Parquet mutant declares past it is cheap to tell from what it holds.
const LIMIT: u64 = 8 << 20;
/// The most one Parquet mutant may add to the process's peak memory: a page per column within
/// the limit, a row's values within it, and room for the allocator.
const PARQUET_GROWTH_KB: u64 = (16 * LIMIT + (32 << 20)) / 1024;

/// A mutator of its own for a parser, over its own seeds (JSON values, Parquet files; the parsers
/// without one take [`mutate`] over their seeds' bytes).
type Mutator = Box<dyn Fn(&mut Rng) -> Vec<u8>>;

#[test]
fn no_parser_panics_hangs_or_balloons_on_mutants_of_real_inputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seconds: u64 = match std::env::var("ATP_FUZZ_SECONDS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("ATP_FUZZ_SECONDS={s}: expected a number of seconds")),
        Err(_) => 30,
    };
    let seed: u64 = match std::env::var("ATP_FUZZ_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("ATP_FUZZ_SEED={s}: expected a number")),
        Err(_) => 1,
    };
    toolcall_score::set_max_input_bytes(LIMIT);
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz");
    std::fs::create_dir_all(&scratch).unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();

    let score_fixtures = "crates/toolcall-score/tests/fixtures";
    let log_path = scratch.join("log.jsonl");
    let trace_path = scratch.join("trace.jsonl");
    let trace_fixtures = "crates/toolcall-traces/tests/fixtures";
    #[cfg(feature = "parquet")]
    let parquet_path = scratch.join("export.parquet");
    let agents_path = scratch.join("export.json");
    let otlp_path = scratch.join("otlp.json");
    let agents = toolcall_traces::source("openai-agents").expect("the OpenAI Agents source");
    let (agents_seeds, otlp_seeds) = (
        agents_seeds(&root, trace_fixtures),
        otlp_seeds(&root, trace_fixtures),
    );
    let bytes = |values: &[serde_json::Value]| -> Vec<Vec<u8>> {
        values.iter().map(|v| v.to_string().into_bytes()).collect()
    };
    let (agents_bytes, otlp_bytes) = (bytes(&agents_seeds), bytes(&otlp_seeds));
    #[allow(unused_mut)]
    let mut mutators: BTreeMap<&str, Mutator> = BTreeMap::from([
        (
            "openai agents exports",
            Box::new(move |rng: &mut Rng| {
                let seed = &agents_seeds[rng.below(agents_seeds.len())];
                mutate_agents(seed, rng)
            }) as Mutator,
        ),
        (
            "otlp documents",
            Box::new(move |rng: &mut Rng| {
                let seed = &otlp_seeds[rng.below(otlp_seeds.len())];
                mutate_otlp(seed, rng)
            }) as Mutator,
        ),
    ]);
    #[allow(unused_mut)]
    let mut parsers: Vec<(&str, Vec<Vec<u8>>, Parser)> = vec![
        (
            "responses and streams",
            seeds(
                &root,
                &[score_fixtures, "recorded"],
                &[".json", ".sse", ".ndjson", ".jsonl"],
            ),
            Box::new(move |b| {
                let t = text(b);
                let _ = toolcall_score::Response::from_json_str(&t, None);
                for format in toolcall_score::Format::ALL {
                    let _ = toolcall_score::Response::from_json_str(&t, Some(format));
                }
            }),
        ),
        (
            "cases and requests",
            seeds(&root, &["cases", score_fixtures], &[".json"]),
            Box::new(move |b| {
                let t = text(b);
                let _ = toolcall_score::Case::from_json_str(&t);
                if let Ok(value) = serde_json::from_str::<serde_json::Value>(&t) {
                    let _ = toolcall_score::provider::parse_request(&value, None);
                    let _ = toolcall_score::provider::parse_tools(&value);
                }
            }),
        ),
        (
            "flows",
            seeds(&root, &["flows"], &[".json"]),
            Box::new(move |b| {
                let vars = BTreeMap::<String, String>::new();
                let _ = toolcall_mcp::Flow::from_json_str(
                    &text(b),
                    Path::new("flow.json"),
                    Path::new("."),
                    &vars,
                );
            }),
        ),
        (
            "jsonl logs",
            seeds(
                &root,
                &["crates/toolcall-harness/tests/fixtures", "recorded"],
                &[".jsonl", ".json"],
            ),
            Box::new(move |b| {
                if std::fs::write(&log_path, b).is_ok() {
                    let options = toolcall_rate::ScanOptions {
                        threads: 1,
                        progress: false,
                        strict: false,
                        format: None,
                    };
                    let _ = toolcall_rate::rate_jsonl(std::slice::from_ref(&log_path), &options);
                }
            }),
        ),
        (
            // Read as `toolcall rate` reads a trace file (record by record when it is JSON
            // Lines), and as each source.
            "traces",
            traces_seeds(&root, trace_fixtures),
            Box::new(move |b| {
                if std::fs::write(&trace_path, b).is_ok() {
                    let _ = toolcall_traces::read_path(&trace_path, None);
                    for source in toolcall_traces::SOURCES {
                        let _ = toolcall_traces::read_path(&trace_path, Some(source));
                    }
                }
            }),
        ),
        (
            // Read from its text as the source, and as `rate`, `import` and `promote` read the
            // file: cycles, repeated and missing ids, deep chains.
            "openai agents exports",
            agents_bytes,
            Box::new(move |b| {
                let t = text(b);
                let _ = toolcall_traces::read(&t, "export.json", Some(agents));
                if std::fs::write(&agents_path, b).is_ok() {
                    let _ = toolcall_traces::read_path(&agents_path, None);
                }
            }),
        ),
        (
            // The document read a span at a time finds what it finds read whole: the same
            // document without repeated members, written again from its `Value`, read alike.
            "otlp documents",
            otlp_bytes,
            Box::new(move |b| {
                let t = text(b);
                let streamed = toolcall_traces::spans::decode(&t, "otlp.json");
                if let Ok(value) = serde_json::from_str::<serde_json::Value>(&t) {
                    let whole = toolcall_traces::spans::decode(&value.to_string(), "otlp.json");
                    assert!(streamed == whole, "read by span differs from read whole");
                }
                if std::fs::write(&otlp_path, b).is_ok() {
                    let _ = toolcall_traces::read_path(&otlp_path, None);
                }
            }),
        ),
        (
            "baselines",
            seeds(
                &root,
                &["baselines", "crates/toolcall-harness/tests/fixtures"],
                &[".json"],
            ),
            // What `baseline::load` does with the file's text.
            Box::new(move |b| {
                let _ = serde_json::from_str::<toolcall_harness::Baseline>(&text(b));
            }),
        ),
    ];
    #[cfg(feature = "parquet")]
    {
        // Parquet files mutated where the reader trusts them (page headers' declared sizes,
        // the footer), read as `rate` reads them: each must be an error, never an abort or an
        // allocation of what it declares.
        let measured = cfg!(target_os = "linux");
        assert!(
            !measured || reset_peak(),
            "/proc/self/clear_refs cannot reset the peak"
        );
        let seeds = parquet_seeds(&root, trace_fixtures);
        parsers.push((
            "parquet page headers",
            seeds.clone(),
            Box::new(move |b| {
                if std::fs::write(&parquet_path, b).is_ok() {
                    let before = measured.then(|| (reset_peak(), status_kb("VmRSS:")));
                    let _ = toolcall_traces::read_path(&parquet_path, None);
                    let _ = toolcall_traces::read_path(
                        &parquet_path,
                        toolcall_traces::source("langfuse"),
                    );
                    if let (Some((true, Some(rss))), Some(peak)) = (before, status_kb("VmHWM:")) {
                        assert!(
                            peak.saturating_sub(rss) <= PARQUET_GROWTH_KB,
                            "a Parquet mutant took {} KB (at most {PARQUET_GROWTH_KB})",
                            peak.saturating_sub(rss)
                        );
                    }
                }
            }),
        ));
        mutators.insert(
            "parquet page headers",
            Box::new(move |rng: &mut Rng| mutate_parquet(&seeds[rng.below(seeds.len())], rng)),
        );
    }

    let mut rng = Rng(seed.max(1));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tried = vec![0u64; parsers.len()];
    let mut slowest = Duration::ZERO;
    'run: loop {
        for (i, (name, seeds, parse)) in parsers.iter().enumerate() {
            let base = &seeds[rng.below(seeds.len())];
            let input = if rng.below(8) == 0 {
                base.clone()
            } else if let Some(mutator) = mutators.get(name) {
                mutator(&mut rng)
            } else {
                mutate(base, &mut rng)
            };
            let started = Instant::now();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(&input)));
            let took = started.elapsed();
            slowest = slowest.max(took);
            let shown = String::from_utf8_lossy(&input[..input.len().min(400)]).into_owned();
            assert!(
                outcome.is_ok(),
                "{name} panicked (ATP_FUZZ_SEED={seed}, input {}): {shown:?}",
                tried[i]
            );
            assert!(
                took <= PER_INPUT,
                "{name} took {took:?} on one input (ATP_FUZZ_SEED={seed}): {shown:?}"
            );
            tried[i] += 1;
            if Instant::now() >= deadline {
                break 'run;
            }
        }
    }
    for ((name, seeds, _), n) in parsers.iter().zip(&tried) {
        eprintln!("fuzz: {name}: {n} inputs from {} seeds", seeds.len());
    }
    let peak = peak_kb();
    eprintln!(
        "fuzz: {} inputs in {seconds} s (seed {seed}); slowest {slowest:?}; peak {} KB",
        tried.iter().sum::<u64>(),
        peak.map_or_else(|| "unknown".to_owned(), |kb| kb.to_string())
    );
    if let Some(kb) = peak {
        assert!(
            kb <= MAX_PEAK_KB,
            "peak memory {kb} KB is over {MAX_PEAK_KB} KB"
        );
    }
    assert!(tried.iter().all(|n| *n > 0), "every parser was tried");
}

/// Hostile input that is only big: `toolcall import` of 8,000 conversations. Each file used to
/// wait for two flushes to disk, one after the other (32,000 waits: 139 s on a shared machine,
/// where the issue saw no answer in 120 s); a batch shares them. The limit turns a crawl back
/// into a failure and says nothing about speed (the new code took 22–57 s on the same machine
/// under the load of other builds).
#[test]
fn import_of_many_conversations_does_not_crawl() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-import-many");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let tools = serde_json::json!([{"type": "function", "function": {
        "name": "get_balance", "parameters": {"type": "object"}}}]);
    let conversations: Vec<serde_json::Value> = (0..8000)
        .map(|i| {
            serde_json::json!({"id": format!("c{i}"), "tools": tools, "messages": [
                {"role": "user", "content": "balance of acc_1?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                  "type": "function", "function": {"name": "get_balance", "arguments": "{}"}}]}]})
        })
        .collect();
    let input = scratch.join("log.json");
    std::fs::write(&input, serde_json::Value::Array(conversations).to_string()).unwrap();
    let out = scratch.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args([
            "import",
            &input.to_string_lossy(),
            "--out",
            &out.to_string_lossy(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let limit = Duration::from_secs(120);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("importing 8,000 conversations took over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
    let written = std::fs::read_dir(out.join("cases/log")).unwrap().count();
    assert_eq!(written, 8000);
    std::fs::remove_dir_all(&scratch).unwrap();
}
