//! Every flow under `flows/` at the repository root is its own test.
//!
//! A flow without `expected_failure` must pass; one with it must fail with exactly that line, so
//! the example failures stay examples of what they claim to show ([`Outcome`], as `toolcall
//! replay` judges it). `${ATP_REFUND_SERVER}` and
//! `${ATP_FAULT_SERVER}` point at the servers this crate builds.

use std::collections::BTreeMap;
use std::path::Path;

use libtest_mimic::{Failed, Trial};
use toolcall_mcp::{replay_blocking, Flow, Options, Outcome};

use crate::flows_dir;

fn vars() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "ATP_REFUND_SERVER".to_owned(),
            env!("CARGO_BIN_EXE_refund-server").to_owned(),
        ),
        (
            "ATP_FAULT_SERVER".to_owned(),
            env!("CARGO_BIN_EXE_fault-server").to_owned(),
        ),
    ])
}

fn check(path: &Path) -> Result<(), Failed> {
    let flow = Flow::load_with(path, &vars()).map_err(|e| e.to_string())?;
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    // Judged as `toolcall replay` judges it.
    let outcome = Outcome::of(&flow, &report);
    if outcome.is_pass() {
        return Ok(());
    }
    let stderr: String = report
        .stderr_tail
        .iter()
        .map(|l| format!("\n  | {l}"))
        .collect();
    Err(format!("{outcome}{stderr}\n{}", report.summary()).into())
}

/// A trial `flows/<name>` for each flow; a folder that holds none ends the run (exit code 2), so
/// the suite never passes by running nothing.
pub(crate) fn trials() -> Vec<Trial> {
    let paths = Flow::files_in(&flows_dir()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    paths
        .into_iter()
        .map(|path| {
            let name = format!(
                "flows/{}",
                path.file_stem().unwrap_or_default().to_string_lossy()
            );
            Trial::test(name, move || check(&path)).with_kind("replay")
        })
        .collect()
}
