//! Precision of the names found in response text (cause `prose`), on real model text.
//!
//! Two corpora: the Vercel AI SDK's recorded provider responses (`ATP_VERCEL_AI_DIR`, default
//! `../shared/external/vercel-ai` beside the workspace), whose `tools.json` holds every tool each
//! response calls, so any finding in a response's text is a false one; and the assistant turns of
//! tau-bench's gpt-4o airline conversations (`ATP_TAU_BENCH_DIR`, see `tau_bench_data`); and the
//! 786 request/response pairs of `ATP_PROVIDER_CASSETTES_DIR` (see `cassettes_data`), each
//! response scored against its own request. Every finding is printed with the sentence it came
//! from.
//!
//! Each text is also read with nothing defined, so that no catalog hides a misreading: every
//! name the prose reader then takes for a call must be a tool the pair really had (the model
//! talking about its own tools), never code or prose read as a call.
//!
//! CI-only tier (feature `external-data`); a wrong or missing directory fails the run, it never
//! skips it. Run with
//! `cargo test -p toolcall-score --features external-data,schema --test prose_precision -- --nocapture`.

use std::path::PathBuf;

mod cassettes_data;
mod tau_bench_data;

use serde_json::{json, Value};
use toolcall_score::{score, Case, Catalog, Finding, Format, Response};

const VERCEL_VAR: &str = "ATP_VERCEL_AI_DIR";

fn vercel_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os(VERCEL_VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{VERCEL_VAR} is set to")),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/external/vercel-ai"),
            format!("{VERCEL_VAR} is not set; the default is"),
        ),
    };
    assert!(
        dir.join("manifest.json").is_file() && dir.join("pairs").is_dir(),
        "{source} {}, which holds no manifest.json and pairs/: set {VERCEL_VAR} to the \
         vercel-ai data directory",
        dir.display()
    );
    dir
}

fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The findings a verdict places in the response's text: the names the text mentions as calls.
fn text_findings(case: &Case, response: &Response) -> Vec<Finding> {
    score(case, response)
        .findings()
        .iter()
        .filter(|f| f.location.starts_with("response text"))
        .cloned()
        .collect()
}

/// The names the prose reader finds in a response's text with nothing defined (every mention it
/// takes for a call), that `real` does not define: with no catalog to hide behind, any name it
/// reads in these texts must be one of the tools the request really had, or it read code or
/// prose as a call.
fn names_not_in(real: &Catalog, response: &Response) -> (usize, Vec<String>) {
    let nothing = Case::from_catalog(Catalog::new(Vec::<toolcall_score::Tool>::new()));
    let found: Vec<String> = text_findings(&nothing, response)
        .into_iter()
        .filter_map(|f| f.name)
        .collect();
    let total = found.len();
    (
        total,
        found.into_iter().filter(|n| !real.contains(n)).collect(),
    )
}

#[test]
fn no_name_in_vercel_ai_response_text_is_a_false_prose_call() {
    let dir = vercel_dir();
    let manifest = read_json(&dir.join("manifest.json"));
    let pairs = manifest
        .as_array()
        .expect("the manifest is a list of pairs");
    let (mut responses, mut texts, mut bytes) = (0, 0, 0);
    let (mut false_findings, mut unread) = (Vec::new(), Vec::new());
    let (mut read_as_calls, mut not_tools) = (0, Vec::new());
    for pair in pairs {
        let id = pair["id"].as_str().expect("each pair has an id");
        let pair_dir = dir.join(pair["dir"].as_str().expect("each pair has a dir"));
        let response_file = pair["response_file"].as_str().expect("a response_file");
        // One JSON chunk a line is the SDK's test framing, not a wire format: its `.as-array`
        // pair holds the same chunks as one JSON array, which is read instead.
        if response_file.ends_with(".chunks.txt") {
            let sibling = dir.join(format!("{}.as-array", pair_dir.display()));
            assert!(sibling.is_dir(), "{id}: no .as-array pair beside it");
            continue;
        }
        let file = pair_dir.join(response_file);
        let format: Option<Format> = pair["format"].as_str().map(|f| f.parse().expect(f));
        let catalog = Catalog::load(&pair_dir.join("tools.json")).expect("tools.json parses");
        // Reading every body is another suite's job; one this crate cannot read yet has no text
        // to measure, and is listed.
        let response = match Response::load(&file, format) {
            Ok(response) => response,
            Err(error) => {
                unread.push(format!("{id}: {error}"));
                continue;
            }
        };
        responses += 1;
        texts += response.text.len();
        bytes += response.text.iter().map(String::len).sum::<usize>();
        let (found, unreal) = names_not_in(&catalog, &response);
        read_as_calls += found;
        not_tools.extend(unreal.into_iter().map(|name| format!("{id}: {name}")));
        for finding in text_findings(&Case::from_catalog(catalog), &response) {
            false_findings.push(format!("{id}: {finding}"));
        }
    }
    println!(
        "vercel-ai: {responses} responses read ({} not), {texts} text parts ({bytes} bytes), {} \
         false prose finding(s)",
        unread.len(),
        false_findings.len()
    );
    for error in &unread {
        println!("  not read: {error}");
    }
    for finding in &false_findings {
        println!("  {finding}");
    }
    println!(
        "vercel-ai, nothing defined: {read_as_calls} name(s) read as calls, {} not a tool of the \
         pair",
        not_tools.len()
    );
    assert!(responses > 100, "{responses} responses read");
    assert!(
        not_tools.is_empty(),
        "read as calls, but no tool of their pair:\n{}",
        not_tools.join("\n")
    );
    assert!(
        false_findings.is_empty(),
        "every name these responses call is defined, so each of these is a false finding:\n{}",
        false_findings.join("\n")
    );
}

#[test]
fn no_name_in_tau_bench_assistant_text_is_a_false_prose_call() {
    let tools = tau_bench_data::read("tools.json");
    let trajectories = tau_bench_data::read("trajectories.json");
    let (mut turns, mut bytes) = (0, 0);
    let mut findings = Vec::new();
    let (mut read_as_calls, mut not_tools) = (0, Vec::new());
    for trajectory in trajectories.as_array().expect("a list of conversations") {
        let messages = trajectory["traj"]
            .as_array()
            .expect("each conversation has `traj`");
        for (i, message) in messages.iter().enumerate() {
            let Some(content) = message["content"].as_str() else {
                continue;
            };
            if message["role"] != "assistant" || content.is_empty() {
                continue;
            }
            let case = Case::from_value(&json!({"tools": &tools, "messages": &messages[..i]}))
                .expect("the request parses");
            let body = json!({"object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]});
            let response = Response::from_value(&body, None).expect("the response parses");
            turns += 1;
            bytes += content.len();
            let (found, unreal) = names_not_in(&case.catalog, &response);
            read_as_calls += found;
            not_tools.extend(unreal.into_iter().map(|name| format!("turn {i}: {name}")));
            for finding in text_findings(&case, &response) {
                findings.push(format!("turn {i}: {finding}"));
            }
        }
    }
    println!(
        "tau-bench airline: {turns} assistant texts ({bytes} bytes), {} prose finding(s)",
        findings.len()
    );
    for finding in &findings {
        println!("  {finding}");
    }
    println!(
        "tau-bench airline, nothing defined: {read_as_calls} name(s) read as calls, {} not one \
         of the 14 tools",
        not_tools.len()
    );
    assert!(turns > 1000, "{turns} assistant texts read");
    assert!(
        not_tools.is_empty(),
        "read as calls, but none of the 14 tools:\n{}",
        not_tools.join("\n")
    );
    // Every call of these conversations names one of the 14 tools (the data's README), so a
    // name their texts write as a call that is not one of them is a false finding.
    assert!(
        findings.is_empty(),
        "each of these is a false prose finding:\n{}",
        findings.join("\n")
    );
}

#[test]
fn no_name_in_provider_cassette_text_is_a_false_prose_call() {
    let (mut responses, mut texts, mut bytes) = (0, 0, 0);
    let mut false_findings = Vec::new();
    let (mut read_as_calls, mut not_tools) = (0, Vec::new());
    for pair in cassettes_data::pairs() {
        let case = Case::load(&pair.request)
            .unwrap_or_else(|e| panic!("{}: the request reads as a case: {e}", pair.id));
        let response = Response::load(&pair.response, Some(pair.format))
            .unwrap_or_else(|e| panic!("{}: the response reads: {e}", pair.id));
        responses += 1;
        texts += response.text.len();
        bytes += response.text.iter().map(String::len).sum::<usize>();
        let (found, unreal) = names_not_in(&case.catalog, &response);
        read_as_calls += found;
        not_tools.extend(
            unreal
                .into_iter()
                .map(|name| format!("{}: {name}", pair.id)),
        );
        for finding in text_findings(&case, &response) {
            false_findings.push(format!("{}: {finding}", pair.id));
        }
    }
    println!(
        "provider-cassettes: {responses} responses, {texts} text parts ({bytes} bytes), {} false \
         prose finding(s)",
        false_findings.len()
    );
    for finding in &false_findings {
        println!("  {finding}");
    }
    println!(
        "provider-cassettes, nothing defined: {read_as_calls} name(s) read as calls, {} not a \
         tool of the request",
        not_tools.len()
    );
    assert!(responses >= 786, "{responses} responses read");
    assert!(
        not_tools.is_empty(),
        "read as calls, but no tool of their request:\n{}",
        not_tools.join("\n")
    );
    assert!(
        false_findings.is_empty(),
        "every call these pairs make is one their request defines, so each of these is a false \
         finding:\n{}",
        false_findings.join("\n")
    );
}
