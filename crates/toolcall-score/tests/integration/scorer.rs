//! A prepared [`Scorer`] gives the verdict [`score`] gives, whatever it scored before: every case
//! under `cases/` against every recorded response under `recorded/` (not only its own, so unknown
//! names, text mentions and transcripts meet in every combination), one `Scorer` per case reused
//! across all of them.

use crate::support;

use std::path::{Path, PathBuf};

use toolcall_score::{score, Case, Response, Scorer};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every case that loads, by id (its path under `cases/` without the extension).
fn cases(root: &Path) -> Vec<(PathBuf, Case)> {
    support::files(&root.join("cases"), &[".json", ".jsonl"])
        .into_iter()
        .filter_map(|path| {
            let case = Case::load(&path).ok()?;
            let id = path
                .strip_prefix(root.join("cases"))
                .ok()?
                .with_extension("");
            Some((id, case))
        })
        .collect()
}

/// Every recorded response that parses (in its own case's format when the case names one).
fn responses(root: &Path, cases: &[(PathBuf, Case)]) -> Vec<(String, Response)> {
    let recorded = root.join("recorded");
    let mut out = Vec::new();
    for path in support::files(&recorded, &[".json", ".jsonl"]) {
        let relative = path.strip_prefix(&recorded).expect("under recorded/");
        let id: PathBuf = relative
            .iter()
            .skip(1)
            .collect::<PathBuf>()
            .with_extension("");
        let format = cases
            .iter()
            .find(|(case_id, _)| *case_id == id)
            .and_then(|(_, case)| case.format);
        let text = std::fs::read_to_string(&path).expect("a recording reads");
        let bodies: Vec<&str> = if path.extension().is_some_and(|e| e == "jsonl") {
            text.lines().filter(|l| !l.trim().is_empty()).collect()
        } else {
            vec![text.as_str()]
        };
        for (i, body) in bodies.into_iter().enumerate() {
            if let Ok(response) = Response::from_json_str(body, format) {
                out.push((format!("{}:{}", relative.display(), i + 1), response));
            }
        }
    }
    out
}

#[test]
fn a_scorer_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Scorer<'_>>();
}

#[test]
fn a_prepared_scorer_gives_the_verdicts_score_gives() {
    let root = workspace_root();
    let cases = cases(&root);
    let responses = responses(&root, &cases);
    assert!(cases.len() >= 40, "{} cases found", cases.len());
    assert!(
        responses.len() >= 300,
        "{} responses found",
        responses.len()
    );
    let (mut compared, mut failing, mut unknown, mut transcript) = (0, 0, 0, 0);
    for (id, case) in &cases {
        let scorer = Scorer::new(case);
        for (origin, response) in &responses {
            let prepared = scorer.score(response);
            let one_off = score(case, response);
            assert_eq!(prepared, one_off, "case {} against {origin}", id.display());
            compared += 1;
            failing += usize::from(!one_off.is_pass());
            unknown += one_off.unknown().count();
            transcript += one_off
                .findings()
                .iter()
                .filter(|f| f.kind == toolcall_score::FindingKind::UnansweredCall)
                .count();
        }
    }
    // The comparison covers what a prepared scorer keeps: unknown names (suggestions, causes)
    // and transcript findings, not only passes.
    assert!(failing > compared / 2, "{failing} of {compared} fail");
    assert!(unknown > 1000, "{unknown} unknown-name findings");
    assert!(transcript > 0, "{transcript} unanswered-call findings");
}
