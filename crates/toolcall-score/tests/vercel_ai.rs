//! Real provider traffic: the 217 recorded responses and streams of the Vercel AI SDK's provider
//! tests (Anthropic, OpenAI Chat and Responses, Gemini and Vertex, Bedrock, OpenAI-compatible
//! providers; `../shared/external/vercel-ai`, whose README says what is true of each pair). Every
//! pair must read without an error — but for the streams that end in the provider's own error
//! event — with exactly the calls its manifest lists, and score with no finding at all: its tools
//! define every call by construction, so any finding is a false failure.
//!
//! CI-only tier (feature `external-data`), reading `ATP_VERCEL_AI_DIR`.
//! Run with `cargo test -p toolcall-score --features external-data,schema --test vercel_ai`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;
use toolcall_score::{score, Case, Catalog, Response};

const VAR: &str = "ATP_VERCEL_AI_DIR";

fn data_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os(VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{VAR} is set to")),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/external/vercel-ai"),
            format!("{VAR} is not set; the default is"),
        ),
    };
    assert!(
        dir.join("manifest.json").is_file(),
        "{source} {}, which holds no manifest.json: set {VAR} to the vercel-ai data directory",
        dir.display()
    );
    dir
}

/// What reading and scoring one pair gave, against what its manifest says.
fn check(dir: &std::path::Path, pair: &Value) -> Result<(), String> {
    let pair_dir = dir.join(pair["dir"].as_str().ok_or("no dir")?);
    let response_path = pair_dir.join(pair["response_file"].as_str().ok_or("no response_file")?);
    let catalog = Catalog::load(&pair_dir.join("tools.json")).map_err(|e| e.to_string())?;
    let response = Response::load(&response_path, None);
    if pair["expect_error"].as_bool() == Some(true) || pair["expect_error"].is_string() {
        return match response {
            Err(_) => Ok(()),
            Ok(_) => Err("read, but the stream ends in the provider's error".into()),
        };
    }
    let response = response.map_err(|e| format!("not read: {e}"))?;
    // The manifest lists the distinct names of the caller's function calls, sorted, and their
    // number; the calls of the Responses built-in tools (`shell_call`, …) are under
    // `server_calls` there, by item type, whoever runs them.
    let strings = |key: &str| -> Vec<&str> {
        pair[key]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let (builtin, functions): (Vec<_>, Vec<_>) =
        response.calls.iter().partition(|c| c.builtin.is_some());
    let mut names: Vec<&str> = functions.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let expected = pair["n_client_calls"].as_u64().unwrap_or(0);
    if names != strings("called") || functions.len() as u64 != expected {
        return Err(format!(
            "{} call(s) named {names:?}; the manifest says {expected} named {:?}",
            functions.len(),
            strings("called")
        ));
    }
    let server = strings("server_calls");
    if let Some(call) = builtin
        .iter()
        .find(|c| !server.contains(&c.builtin.map_or("", |b| b.call_item())))
    {
        return Err(format!(
            "a built-in tool's call `{}` the manifest does not list",
            call.name
        ));
    }
    let verdict = score(&Case::from_catalog(catalog), &response);
    if !verdict.is_pass() {
        let mut why = String::from("findings:");
        for finding in verdict.findings() {
            let _ = write!(why, " [{finding}]");
        }
        return Err(why);
    }
    Ok(())
}

#[test]
fn every_pair_reads_with_its_calls_and_no_finding() {
    let dir = data_dir();
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("the manifest");
    let manifest: Vec<Value> = serde_json::from_str(&text).expect("the manifest is JSON");
    assert_eq!(manifest.len(), 217);
    let mut per_format: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for pair in &manifest {
        let kind = match pair["stream"].as_bool() {
            Some(true) => "stream",
            _ => "body",
        };
        let key = format!("{} {kind}", pair["format"].as_str().unwrap_or("?"));
        let tally = per_format.entry(key).or_default();
        tally.1 += 1;
        match check(&dir, pair) {
            Ok(()) => tally.0 += 1,
            Err(why) => wrong.push(format!("{}: {why}", pair["id"].as_str().unwrap_or("?"))),
        }
    }
    for (format, (right, all)) in &per_format {
        eprintln!("{format:<24} {right:>4} / {all}");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} pairs read wrong:\n{}",
        wrong.len(),
        manifest.len(),
        wrong.join("\n")
    );
}
