//! Precision of the drift lint on real prompts: the system prompts and tool descriptions of the
//! 786 requests of `ATP_PROVIDER_CASSETTES_DIR` (see `cassettes_data`) and tau-bench airline's
//! (`ATP_TAU_BENCH_DIR`, see `tau_bench_data`). Each request was sent by a test suite that passed
//! with the tools it defines, so every drift found in them is a false one. Every drift is
//! printed with the sentence it came from. (The trace fixtures' imports are linted by the CLI's
//! `import_lint` tests, in the default tier.)
//!
//! CI-only tier (feature `external-data`); a wrong or missing directory fails the run, it never
//! skips it. Run with
//! `cargo test -p toolcall-score --features external-data,schema --test lint_precision -- --nocapture`.

mod cassettes_data;
mod tau_bench_data;

use serde_json::json;
use toolcall_score::{lint, Case};

#[test]
fn no_drift_in_real_prompts() {
    let mut linted = Vec::new();
    for pair in cassettes_data::pairs() {
        let case = Case::load(&pair.request)
            .unwrap_or_else(|e| panic!("{}: the request reads as a case: {e}", pair.id));
        linted.push((pair.id, case));
    }
    let tools = tau_bench_data::read("tools.json");
    let trajectories = tau_bench_data::read("trajectories.json");
    let mut prompts: Vec<&str> = trajectories
        .as_array()
        .expect("a list of conversations")
        .iter()
        .filter_map(|t| t["traj"][0]["content"].as_str())
        .collect();
    prompts.sort_unstable();
    prompts.dedup();
    for (i, prompt) in prompts.iter().enumerate() {
        let case = Case::from_value(&json!({"system": prompt, "tools": &tools}))
            .expect("the tau-bench prompt reads as a case");
        linted.push((format!("tau-bench/system-{i}"), case));
    }
    let (mut prompt_bytes, mut descriptions) = (0, 0);
    let mut drifts = Vec::new();
    for (id, case) in &linted {
        prompt_bytes += case.system.len();
        descriptions += case
            .catalog
            .tools()
            .iter()
            .filter(|t| !t.description.is_empty())
            .count();
        for drift in lint(case) {
            drifts.push(format!("{id}: {drift}"));
        }
    }
    println!(
        "drift lint: {} cases ({} with a system prompt, {prompt_bytes} bytes; {descriptions} tool \
         descriptions), {} false drift(s)",
        linted.len(),
        linted.iter().filter(|(_, c)| !c.system.is_empty()).count(),
        drifts.len()
    );
    for drift in &drifts {
        println!("  {drift}");
    }
    assert!(linted.len() > 786, "{} cases linted", linted.len());
    assert!(
        drifts.is_empty(),
        "each of these prompts names only the tools it defines, so every drift is false:\n{}",
        drifts.join("\n")
    );
}
