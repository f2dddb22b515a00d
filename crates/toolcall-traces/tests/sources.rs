//! Every source against real exports taken from other projects' test fixtures and examples
//! (`tests/fixtures/<source>/`, each folder's `SOURCES.md` says where each file comes from,
//! under which licence, and what it holds). `expected.json` in each folder is that ground
//! truth, written from reading the files, not from running this code: per file, the source that
//! must claim it, how many model turns it holds, every call the model made (`name id`, sorted),
//! the catalog its calls were offered (names, or "not recorded"), how many duplicate calls fold,
//! which lines are malformed, and how many calls name a tool outside their catalog.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolcall_score::{Case, FindingKind, Format, Response, Scorer};
use toolcall_traces::{Catalog, SOURCES};

mod hostile;
mod verdicts;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn expected(dir: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("expected.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Files under `dir`, relative, `/`-separated, without the folder's own papers.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel != "SOURCES.md" && rel != "expected.json" {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Every registered source has real fixtures, every fixture file has its expectation, and every
/// folder names its sources.
#[test]
fn every_source_has_real_fixtures_with_their_ground_truth() {
    let mut problems = Vec::new();
    for source in SOURCES {
        let dir = fixtures().join(source.name);
        if !dir.join("SOURCES.md").is_file() || !dir.join("expected.json").is_file() {
            problems.push(format!(
                "{}: needs tests/fixtures/{0}/SOURCES.md and expected.json",
                source.name
            ));
            continue;
        }
        let expected = expected(&dir);
        let present = files(&dir);
        for file in &present {
            if !expected.contains_key(file) {
                problems.push(format!("{}/{file}: no entry in expected.json", source.name));
            }
        }
        for file in expected.keys() {
            if !present.contains(file) {
                problems.push(format!(
                    "{}/{file}: in expected.json, not on disk",
                    source.name
                ));
            }
        }
        if expected.is_empty() {
            problems.push(format!("{}: no fixture", source.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each fixture reads as its ground truth says.
#[test]
fn each_fixture_reads_as_its_ground_truth_says() {
    let mut problems = Vec::new();
    for source in SOURCES {
        let dir = fixtures().join(source.name);
        if !dir.join("expected.json").is_file() {
            continue;
        }
        for (file, want) in expected(&dir) {
            let path = dir.join(&file);
            let text = std::fs::read_to_string(&path).unwrap();
            let shown = format!("{}/{file}", source.name);
            let mut fail = |what: String| problems.push(format!("{shown}: {what}"));
            let (read_as, found) = match toolcall_traces::read(&text, &shown, None) {
                Ok(read) => read,
                Err(e) => {
                    fail(format!("not read: {e}"));
                    continue;
                }
            };
            if read_as.name != want["source"] {
                fail(format!(
                    "read as {}, expected {}",
                    read_as.name, want["source"]
                ));
            }
            if found.turns.len() as u64 != want["turns"].as_u64().unwrap_or(u64::MAX) {
                fail(format!(
                    "{} turns, expected {}",
                    found.turns.len(),
                    want["turns"]
                ));
            }
            let mut calls: Vec<String> = found
                .turns
                .iter()
                .flat_map(|t| t.calls().iter())
                .map(|c| format!("{} {}", c.name, c.id.as_deref().unwrap_or("-")))
                .collect();
            calls.sort();
            let want_calls: Vec<String> = want["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect();
            if calls != want_calls {
                fail(format!("calls {calls:?}, expected {want_calls:?}"));
            }
            // `catalog`: what every turn with calls was offered; `catalogs`: by turn id, for
            // traces whose catalog changes from turn to turn.
            for turn in &found.turns {
                let wanted = match want.get("catalogs") {
                    Some(by_turn) => match by_turn.get(&turn.id) {
                        Some(w) => w,
                        None => continue,
                    },
                    None if turn.calls().is_empty() => continue,
                    None => &want["catalog"],
                };
                let got = match &turn.catalog {
                    Catalog::NotRecorded => Value::from("not recorded"),
                    Catalog::Recorded(tools) => tools.names().map(Value::from).collect(),
                };
                if got != *wanted {
                    fail(format!("{}: catalog {got}, expected {wanted}", turn.at));
                }
            }
            if let Some(by_turn) = want.get("catalogs").and_then(Value::as_object) {
                for id in by_turn.keys() {
                    if !found.turns.iter().any(|t| t.id == *id) {
                        fail(format!("no turn {id}"));
                    }
                }
            }
            if found.folded as u64 != want["folded"].as_u64().unwrap_or(u64::MAX) {
                fail(format!(
                    "{} folded, expected {}",
                    found.folded, want["folded"]
                ));
            }
            let bad: Vec<u64> = found
                .bad
                .iter()
                .filter_map(|b| b.at.rsplit(':').next()?.parse().ok())
                .collect();
            let want_bad: Vec<u64> = want["bad_lines"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .collect();
            if bad != want_bad || found.bad.len() != want_bad.len() {
                fail(format!(
                    "bad records {:?}, expected lines {want_bad:?}",
                    found.bad
                ));
            }
            // The turns as the scorer reads them: judged ones score as the ground truth says.
            let mut unknown = 0;
            let mut other: Vec<String> = Vec::new();
            for turn in &found.turns {
                let Some(case) = turn.case(None) else {
                    continue;
                };
                let verdict = Scorer::new(&case).score(&turn.response);
                unknown += verdict
                    .findings()
                    .iter()
                    .filter(|f| f.kind == FindingKind::UnknownTool)
                    .count();
                other.extend(
                    verdict
                        .findings()
                        .iter()
                        .filter(|f| f.kind != FindingKind::UnknownTool)
                        .map(|f| f.kind.as_str().to_owned()),
                );
                // What import and promote write reads back to the same verdict.
                let written = Case::from_value(&turn.chat_request()).map_err(|e| e.to_string());
                let recorded =
                    Response::from_value(&turn.chat_response(), Some(Format::OpenaiChat))
                        .map_err(|e| e.to_string());
                match (written, recorded) {
                    (Ok(written), Ok(recorded)) => {
                        let again = Scorer::new(&written).score(&recorded);
                        if again.fingerprint() != verdict.fingerprint() {
                            fail(format!(
                                "{}: written as Chat it scores {:?}, as read {:?}",
                                turn.at,
                                again.fingerprint(),
                                verdict.fingerprint()
                            ));
                        }
                    }
                    (case, response) => fail(format!(
                        "{}: the turn does not read back: {:?} {:?}",
                        turn.at,
                        case.err(),
                        response.err()
                    )),
                }
            }
            // Findings other than unknown names, which the ground truth lists (a call whose
            // arguments are not JSON, say).
            let want_other: Vec<String> = want
                .get("other_findings")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect();
            if other != want_other {
                fail(format!("findings {other:?}, expected {want_other:?}"));
            }
            if unknown as u64 != want["unknown"].as_u64().unwrap_or(u64::MAX) {
                fail(format!(
                    "{unknown} unknown calls, expected {}",
                    want["unknown"]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No fixture is claimed by two sources: each is read as exactly one, without `--from`.
#[test]
fn no_fixture_is_claimed_by_another_source() {
    let mut problems = Vec::new();
    for source in SOURCES {
        let dir = fixtures().join(source.name);
        if !dir.is_dir() {
            continue;
        }
        for file in files(&dir) {
            let text = std::fs::read_to_string(dir.join(&file)).unwrap();
            for other in SOURCES.iter().filter(|s| s.name != source.name) {
                if toolcall_traces::read(&text, &file, Some(other)).is_ok() {
                    problems.push(format!(
                        "{}/{file} is claimed by {} too",
                        source.name, other.name
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
