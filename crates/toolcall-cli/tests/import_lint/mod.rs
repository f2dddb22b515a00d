//! Imported trajectories lint clean: every trace fixture of `toolcall-traces` that imports to
//! cases gives no drift (issue 29, item 7). Every one of those traces is a real recording whose
//! prompts name only the tools they were given, so any drift found in them is a false one:
//! before, OpenHands' trajectory read `GITHUB_TOKEN` in its system prompt and `str_replace` in
//! `str_replace_editor`'s description as tool names.
//!
//! A fixture that does not import to a case (no catalog recorded, no call made, or a hostile
//! shape) has nothing to lint; those are listed, and at least the cases counted below must be
//! linted, so a reader that stopped importing is noticed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{stderr, toolcall, toolcall_json};

fn trace_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if path.is_dir() {
                walk(&path, out);
            } else if name.is_some_and(|n| {
                (n.ends_with(".json") || n.ends_with(".jsonl")) && n != "expected.json"
            }) {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolcall-traces/tests/fixtures");
    let mut out = Vec::new();
    walk(&root, &mut out);
    out.sort();
    out
}

#[test]
fn every_imported_trace_fixture_lints_clean() {
    let scratch = crate::scratch("import-lint");
    let (mut imported, mut cases) = (0, 0);
    let (mut drifts, mut not_imported) = (Vec::new(), Vec::new());
    for (i, fixture) in trace_fixtures().iter().enumerate() {
        let out = scratch.join(i.to_string());
        let fixture_arg = fixture.to_string_lossy();
        let import = toolcall(&["import", &fixture_arg, "--out", &out.to_string_lossy()]);
        if !import.status.success() {
            let why = stderr(&import);
            not_imported.push(format!("{}: {}", fixture.display(), why.trim()));
            continue;
        }
        imported += 1;
        let report = toolcall_json(&["lint", "--json", &out.join("cases").to_string_lossy()], 0);
        let found = report.as_array().expect("lint --json prints a list");
        cases += std::fs::read_dir(out.join("cases"))
            .expect("import wrote cases/")
            .map(|group| {
                let group = group.expect("an entry").path();
                std::fs::read_dir(group).map_or(0, |files| files.count())
            })
            .sum::<usize>();
        for drift in found {
            let field = |key: &str| drift[key].as_str().unwrap_or_default().to_owned();
            let source = match &drift["source"] {
                Value::Object(source) => Value::Object(source.clone()).to_string(),
                other => other.to_string(),
            };
            drifts.push(format!(
                "{}: `{}` in {source}: {}",
                fixture.display(),
                field("name"),
                field("context")
            ));
        }
    }
    println!(
        "{imported} trace fixture(s) imported to {cases} case(s), {} drift(s); {} not imported",
        drifts.len(),
        not_imported.len()
    );
    for line in &not_imported {
        println!("  not imported: {line}");
    }
    assert!(
        cases >= 40,
        "only {cases} case(s) imported from {imported} fixture(s)"
    );
    assert!(
        drifts.is_empty(),
        "each of these real traces names only its own tools, so every drift is false:\n{}",
        drifts.join("\n")
    );
}
