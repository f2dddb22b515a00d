//! One test: a case, one agent's recorded response(s) to it, and that agent's baseline entry in;
//! an [`Outcome`] and the message a failing test prints out.
//!
//! This is the single code path behind both the test harness and `toolcall check`.

use toolcall_score::{escape, escape_path};

use crate::baseline::{joined, shown};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcall_score::{
    Case, Drift, Finding, Format, InputError, ParseError, Recording, Response, Scorer, Verdict,
};

use crate::baseline::Entry;
use crate::config::{Config, Front};

/// How one test came out against the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// No findings, and the baseline does not list the case.
    Pass,
    /// Findings, and the baseline lists the case with exactly this fingerprint: the test passes
    /// and is shown as an expected failure.
    ExpectedFailure,
    /// Findings, and the baseline does not list the case: a new failure.
    Failure,
    /// Findings, and the baseline lists the case with a different fingerprint.
    Changed {
        /// The fingerprint the baseline records.
        old: Vec<String>,
    },
    /// No findings, but the baseline lists the case: the ratchet asks for the entry's removal.
    NowPasses {
        /// The fingerprint the baseline records.
        old: Vec<String>,
    },
    /// The case or the recording could not be read or understood; the message names the file,
    /// line and column.
    Error(String),
}

impl Outcome {
    /// Whether the test passes (a pass or an expected failure).
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::ExpectedFailure)
    }

    /// A short label: `pass`, `expected failure`, `failure`, `changed`, `now passes`, `error`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::ExpectedFailure => "expected failure",
            Outcome::Failure => "failure",
            Outcome::Changed { .. } => "changed",
            Outcome::NowPasses { .. } => "now passes",
            Outcome::Error(_) => "error",
        }
    }
}

/// The verdict on one recorded response.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The line of a `.jsonl` recording it came from; `None` for a `.json` recording.
    pub line: Option<usize>,
    /// The response as read: its calls, text and stop reason (what a report draws).
    pub response: Response,
    /// What the scorer said.
    pub verdict: Verdict,
}

/// One agent's result on one case.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// The agent.
    pub agent: String,
    /// The case id (its path under the case tree, without `.json`, `/`-separated).
    pub case_id: String,
    /// The case file.
    pub case_path: PathBuf,
    /// The recorded response file.
    pub recording: PathBuf,
    /// The agent's baseline file (which may not exist).
    pub baseline_file: PathBuf,
    /// How it came out.
    pub outcome: Outcome,
    /// The verdict on each recorded response (empty on [`Outcome::Error`]).
    pub samples: Vec<Sample>,
    /// Names the case's own prompt or tool descriptions tell the model to use that it does not
    /// define ([`toolcall_score::lint`]): the case fails on them whatever the model answered,
    /// since a renamed tool the prompt still names is the regression, not the model's call.
    pub drift: Vec<Drift>,
    /// The union of the samples' fingerprints and the drift (`drift: name`), sorted: what a
    /// baseline entry pins.
    pub fingerprint: Vec<String>,
    /// The file and line a GitHub annotation should point at.
    pub(crate) annotate: (PathBuf, Option<usize>),
    /// Who runs the suite, for the commands its messages name.
    pub(crate) front: Front,
}

impl CaseReport {
    /// Every finding of every sample.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.samples.iter().flat_map(|s| s.verdict.findings())
    }

    /// The commands that accept this result into the baseline: this case alone, or the suite.
    fn accept_command(&self) -> String {
        format!(
            "toolcall baseline accept {}::{} (or the whole suite: {})",
            escape(&self.agent),
            escape(&self.case_id),
            self.front.rewrite_baselines()
        )
    }

    /// Where an annotation of this result points, given the recording's text: the recording at
    /// the first failing call (its line in a `.jsonl`, else the line that writes the call), the
    /// case file at the first name its prompt drifted to, the baseline's entry of a case that
    /// now passes, and otherwise the case file.
    fn place(&self, recording_text: &str) -> (PathBuf, Option<usize>) {
        let failing = self
            .samples
            .iter()
            .find_map(|s| s.verdict.findings().first().map(|f| (s, f)));
        if let Some((sample, finding)) = failing {
            let line = sample.line.or_else(|| finding.line_in(recording_text));
            return (self.recording.clone(), line);
        }
        if let Some(drift) = self.drift.first() {
            let text = toolcall_score::read_text(&self.case_path).ok();
            let line = text.and_then(|text| drift.line_in(&text));
            return (self.case_path.clone(), line);
        }
        if matches!(self.outcome, Outcome::NowPasses { .. }) {
            let key = serde_json::to_string(&self.case_id).ok();
            let text = toolcall_score::read_text(&self.baseline_file).ok();
            let line = key
                .zip(text)
                .and_then(|(key, text)| text.lines().position(|l| l.contains(&key)).map(|i| i + 1));
            return (self.baseline_file.clone(), line);
        }
        (self.case_path.clone(), None)
    }

    /// Every note of every sample (see [`toolcall_score::Verdict::notes`]): said, never failed.
    pub fn notes(&self) -> impl Iterator<Item = &Finding> {
        self.samples.iter().flat_map(|s| s.verdict.notes())
    }

    /// The file and line a failure points at: the case file, or the recording when that is
    /// what could not be read (for GitHub annotations and editors).
    pub fn location(&self) -> (&Path, Option<usize>) {
        (&self.annotate.0, self.annotate.1)
    }

    /// Whether any sample has findings.
    pub fn has_findings(&self) -> bool {
        !self.drift.is_empty() || self.samples.iter().any(|s| !s.verdict.is_pass())
    }

    /// What a failing test prints; `None` when the test passes.
    pub fn message(&self) -> Option<String> {
        let baseline = escape_path(&self.baseline_file);
        let mut out = String::new();
        match &self.outcome {
            Outcome::Pass | Outcome::ExpectedFailure => return None,
            Outcome::Error(message) => out.push_str(message),
            Outcome::Failure => {
                let _ = writeln!(
                    out,
                    "agent `{}` fails case `{}` ({}), and {baseline} does not list it:",
                    escape(&self.agent),
                    escape(&self.case_id),
                    escape_path(&self.case_path)
                );
                self.write_findings(&mut out);
                let _ = writeln!(out, "fingerprint: {}", joined(&self.fingerprint));
                let _ = write!(
                    out,
                    "a new failure: fix its cause, or accept it as known: {}",
                    self.accept_command()
                );
            }
            Outcome::Changed { old } => {
                let _ = writeln!(
                    out,
                    "agent `{}` fails case `{}` ({}) differently than {baseline} records:",
                    escape(&self.agent),
                    escape(&self.case_id),
                    escape_path(&self.case_path)
                );
                let old_text = lines(old);
                let new_text = lines(&self.fingerprint);
                let diff = similar::TextDiff::from_lines(&old_text, &new_text);
                let _ = write!(
                    out,
                    "{}",
                    diff.unified_diff()
                        .header("baseline", "now")
                        .context_radius(8)
                );
                let _ = writeln!(out, "findings now:");
                self.write_findings(&mut out);
                let _ = write!(
                    out,
                    "fix the new cause, or accept the new fingerprint: {}",
                    self.accept_command()
                );
            }
            Outcome::NowPasses { old } => {
                let _ = write!(
                    out,
                    "now passes: remove it from {baseline} ({})\n\
                     agent `{}`, case `{}`; the entry recorded: {}",
                    self.accept_command(),
                    escape(&self.agent),
                    escape(&self.case_id),
                    joined(old)
                );
            }
        }
        Some(out)
    }

    fn write_findings(&self, out: &mut String) {
        for drift in &self.drift {
            let _ = writeln!(
                out,
                "  - drift (in the case, whatever the model answers): {drift}"
            );
        }
        for sample in &self.samples {
            let at = match sample.line {
                Some(line) => format!("sample on line {line}: "),
                None => String::new(),
            };
            for finding in sample.verdict.findings() {
                let _ = writeln!(out, "  - {at}{finding}");
            }
            for note in sample.verdict.notes() {
                let _ = writeln!(out, "  - {at}note (fails nothing): {note}");
            }
        }
    }
}

fn lines(entries: &[String]) -> String {
    entries.iter().map(|e| format!("{}\n", shown(e))).collect()
}

/// Scores `recording` against the case at `case_path` and judges the result against `entry`
/// (the case's entry in `agent`'s baseline under `config`).
pub(crate) fn evaluate(
    config: &Config,
    agent: &str,
    case_id: &str,
    case_path: &Path,
    recording: &Path,
    entry: Option<&Entry>,
) -> CaseReport {
    let mut report = CaseReport {
        agent: agent.to_owned(),
        case_id: case_id.to_owned(),
        case_path: case_path.to_path_buf(),
        recording: recording.to_path_buf(),
        baseline_file: config.baseline_file(agent),
        outcome: Outcome::Pass,
        samples: Vec::new(),
        drift: Vec::new(),
        fingerprint: Vec::new(),
        annotate: (case_path.to_path_buf(), None),
        front: config.front,
    };
    let case = match Case::load(case_path) {
        Ok(case) => case,
        Err(e) => {
            report.annotate.1 = e.location().map(|l| l.line);
            report.outcome = Outcome::Error(e.to_string());
            return report;
        }
    };
    let (text, responses) = match load_responses(recording, case.format) {
        Ok(loaded) => loaded,
        Err((message, line)) => {
            report.annotate = (recording.to_path_buf(), line);
            report.outcome = Outcome::Error(message);
            return report;
        }
    };
    // One case answers every sample: prepare it once.
    let scorer = Scorer::new(&case);
    report.samples = responses
        .into_iter()
        .map(|(line, response)| Sample {
            line,
            verdict: scorer.score(&response),
            response,
        })
        .collect();
    report.drift = toolcall_score::lint(&case);
    let mut fingerprint: Vec<String> = report
        .samples
        .iter()
        .flat_map(|s| s.verdict.fingerprint())
        .chain(
            report
                .drift
                .iter()
                .map(|d| format!("drift: {}", escape(&d.name))),
        )
        .collect();
    fingerprint.sort();
    fingerprint.dedup();
    report.fingerprint = fingerprint;
    report.outcome = judge(report.has_findings(), &report.fingerprint, entry);
    report.annotate = report.place(&text);
    report
}

/// The four outcomes of the ratchet.
fn judge(failing: bool, fingerprint: &[String], entry: Option<&Entry>) -> Outcome {
    match (failing, entry) {
        (false, None) => Outcome::Pass,
        (false, Some(entry)) => Outcome::NowPasses {
            old: entry.fingerprint.clone(),
        },
        (true, None) => Outcome::Failure,
        (true, Some(entry)) if entry.fingerprint == fingerprint => Outcome::ExpectedFailure,
        (true, Some(entry)) => Outcome::Changed {
            old: entry.fingerprint.clone(),
        },
    }
}

/// The text of a recording and its responses: one per non-blank line for `.jsonl` (with its
/// line), else one (a body, or a stream that [`Response`] assembles; see [`Recording`]). An error
/// is a message naming the file, line and column, and the line for an annotation.
#[allow(clippy::type_complexity)]
pub(crate) fn load_responses(
    path: &Path,
    case_format: Option<Format>,
) -> Result<(String, Vec<(Option<usize>, Response)>), (String, Option<usize>)> {
    let text = toolcall_score::read_text(path).map_err(|e| match e {
        // It names the file itself.
        InputError::Read { .. } => (e.to_string(), None),
        _ => (located(path, None, &e), e.location().map(|l| l.line)),
    })?;
    if Recording::of_text(path, &text) == Some(Recording::PerLine) {
        let mut responses = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let number = index + 1;
            let response = parse_response(line, case_format)
                .map_err(|e| (located(path, Some(number), &e), Some(number)))?;
            responses.push((Some(number), response));
        }
        if responses.is_empty() {
            return Err((
                format!(
                    "{}: holds no responses (a .jsonl recording has one response per line)",
                    escape_path(path)
                ),
                None,
            ));
        }
        Ok((text, responses))
    } else {
        let response = parse_response(&text, case_format)
            .map_err(|e| (located(path, None, &e), e.location().map(|l| l.line)))?;
        Ok((text, vec![(None, response)]))
    }
}

/// Parses a response, detecting its format; when the shape fits several formats and the case
/// names one of them, the case's format settles it.
fn parse_response(text: &str, case_format: Option<Format>) -> Result<Response, InputError> {
    match Response::from_json_str(text, None) {
        Err(InputError::Invalid {
            error: ParseError::Ambiguous { candidates },
            ..
        }) if case_format.is_some_and(|f| candidates.contains(&f)) => {
            Response::from_json_str(text, case_format)
        }
        other => other,
    }
}

/// `path:line:column: message` for an error found in text that came from `path` (on line
/// `line_of_file` of it, for a `.jsonl` recording).
fn located(path: &Path, line_of_file: Option<usize>, error: &InputError) -> String {
    let Some(location) = error.location() else {
        return format!("{}: {error}", escape_path(path));
    };
    let line = line_of_file.unwrap_or(location.line);
    let what = match error {
        InputError::Syntax { message, .. } => format!("not valid JSON: {message}"),
        InputError::Invalid { error, .. } => error.to_string(),
        InputError::Encoding { why, .. } => format!("not UTF-8 text: {why}"),
        other => other.to_string(),
    };
    format!("{}:{line}:{}: {what}", escape_path(path), location.column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(fingerprint: &[&str]) -> Entry {
        Entry {
            fingerprint: fingerprint.iter().map(|s| (*s).to_owned()).collect(),
            note: None,
        }
    }

    #[test]
    fn judge_gives_each_of_the_four_outcomes() {
        let fp = vec!["x (retired)".to_owned()];
        assert_eq!(judge(false, &[], None), Outcome::Pass);
        assert_eq!(judge(true, &fp, None), Outcome::Failure);
        assert_eq!(
            judge(true, &fp, Some(&entry(&["x (retired)"]))),
            Outcome::ExpectedFailure
        );
        assert_eq!(
            judge(true, &fp, Some(&entry(&["y (invented)"]))),
            Outcome::Changed {
                old: vec!["y (invented)".into()]
            }
        );
        assert_eq!(
            judge(false, &[], Some(&entry(&["x (retired)"]))),
            Outcome::NowPasses {
                old: vec!["x (retired)".into()]
            }
        );
    }
}
