//! The dummy agent's verdict vector over every case, checked as one insta snapshot.
//!
//! insta names snapshots after the test function, which a custom harness does not have (every
//! trial would be `main`, numbered in whatever order threads run), so the snapshot is named
//! explicitly (`dummy-agent`) and its directory set explicitly, with settings bound inside the
//! trial because insta's settings are thread-local.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolcall_score::{escape, score, Case, InputError};

/// The snapshot's name: the file is `<dir>/dummy-agent.snap`.
pub const SNAPSHOT_NAME: &str = "dummy-agent";

/// One line per case: what the dummy agent did and what the scorer said.
///
/// ```text
/// billing/retired-search-invoices: call search_invoices -> fail: search_invoices (retired)
/// billing/smalltalk: text -> pass
/// ```
pub(crate) fn verdict_vector(cases: &BTreeMap<String, PathBuf>) -> String {
    let mut out = String::new();
    for (id, path) in cases {
        let line = match Case::load(path) {
            Err(e) => format!("error: {}", without_path(&e)),
            Ok(case) => {
                let response = crate::dummy::respond(&case);
                let did = if response.calls.is_empty() {
                    "text".to_owned()
                } else {
                    let names: Vec<String> = response
                        .calls
                        .iter()
                        .map(|c| escape(&c.name).to_string())
                        .collect();
                    format!("call {}", names.join(", "))
                };
                let verdict = score(&case, &response);
                if verdict.is_pass() {
                    format!("{did} -> pass")
                } else {
                    format!("{did} -> fail: {}", verdict.fingerprint().join(", "))
                }
            }
        };
        out.push_str(&format!("{id}: {line}\n"));
    }
    out
}

/// An input error without the file path, which differs between machines.
fn without_path(error: &InputError) -> String {
    match error {
        InputError::Syntax { location, message } => format!(
            "line {}, column {}: not valid JSON: {message}",
            location.line, location.column
        ),
        InputError::Invalid { location, error } => {
            format!(
                "line {}, column {}: {error}",
                location.line, location.column
            )
        }
        InputError::Read { source, .. } => format!("cannot read: {source}"),
        other => other.to_string(),
    }
}

/// Asserts the verdict vector against `<dir>/dummy-agent.snap`. Panics on a mismatch, as insta
/// does (a trial turns the panic into a failure); with `CI` set insta writes nothing, otherwise
/// it leaves a `.snap.new` beside the snapshot for review (`cargo insta review`).
pub(crate) fn assert_vector(dir: &Path, vector: &str) {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(
        "The dummy agent's response to every case and the scorer's verdict on it \
         (toolcall-harness). A changed line means a case, a catalog or the scorer changed.",
    );
    settings.bind(|| insta::assert_snapshot!(SNAPSHOT_NAME, vector));
}
