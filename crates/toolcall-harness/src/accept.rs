//! Accepting baseline changes one case at a time: what `toolcall baseline review` and
//! `toolcall baseline accept` are built on.
//!
//! `ATP_BASELINE_WRITE=1` rewrites every baseline from a whole run, which is right after a
//! deliberate change and wrong when one of five new failures is a real regression: accepting it
//! with the rest hides it. Here the run is the same ([`Report::build`]), but each case result a
//! rewrite would change is a [`Pending`] change of its own, and only those chosen are written,
//! each agent's file once and atomically, keeping the notes of the entries that stay.

use std::collections::BTreeMap;
use std::fmt;

use toolcall_score::{escape, escape_path};

use crate::baseline::{self, Baseline, Changes, Entry};
use crate::evaluate::Outcome;
use crate::{BaselineError, CaseReport, Config, Report};

/// What accepting one case's result does to its agent's baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PendingKind {
    /// A new failure: the entry is added.
    New,
    /// A known failure that fails differently: the entry's fingerprint is replaced.
    Changed,
    /// A known failure that now passes: the entry is removed.
    Fixed,
}

impl PendingKind {
    /// `new failure`, `changed`, `now passes`.
    pub fn label(&self) -> &'static str {
        match self {
            PendingKind::New => "new failure",
            PendingKind::Changed => "changed",
            PendingKind::Fixed => "now passes",
        }
    }
}

/// One case result that differs from its baseline and that a baseline can accept.
#[derive(Clone, Debug)]
pub struct Pending {
    /// The agent.
    pub agent: String,
    /// The case id.
    pub case_id: String,
    /// What accepting it does.
    pub kind: PendingKind,
    /// The fingerprint the baseline holds now (empty for a new failure).
    pub old: Vec<String>,
    /// The fingerprint it would hold (empty when the case now passes).
    pub new: Vec<String>,
    /// The test's failure message: the findings, the diff, the causes.
    pub message: String,
}

impl Pending {
    /// The test's name, `agent::case-id`, escaped as test names are.
    pub fn test_name(&self) -> String {
        format!("{}::{}", escape(&self.agent), escape(&self.case_id))
    }

    fn of(case: &CaseReport) -> Option<Pending> {
        let (kind, old) = match &case.outcome {
            Outcome::Failure => (PendingKind::New, Vec::new()),
            Outcome::Changed { old } => (PendingKind::Changed, old.clone()),
            Outcome::NowPasses { old } => (PendingKind::Fixed, old.clone()),
            _ => return None,
        };
        Some(Pending {
            agent: case.agent.clone(),
            case_id: case.case_id.clone(),
            new: if kind == PendingKind::Fixed {
                Vec::new()
            } else {
                case.fingerprint.clone()
            },
            kind,
            old,
            message: case.message().unwrap_or_default(),
        })
    }
}

impl fmt::Display for Pending {
    /// `agent::case-id (new failure)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.test_name(), self.kind.label())
    }
}

/// Every case result of the run under `config` that a baseline could accept, by agent and case
/// id.
pub fn pending(config: &Config) -> Vec<Pending> {
    pending_in(&Report::build(config))
}

fn pending_in(report: &Report) -> Vec<Pending> {
    report
        .agents()
        .iter()
        .flat_map(|agent| agent.cases.iter().filter_map(Pending::of))
        .collect()
}

/// A selection that names no case result a baseline could accept.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct NothingToAccept(pub Vec<String>);

/// Accepts the pending results `selected` names: each `agent::case-id` (a test's name as
/// `cargo test` prints it) or a bare `case-id` (that case, for every agent with something to
/// accept). Each agent's baseline is written once, atomically; the summary of what changed is
/// returned, one block per file. A selection that matches nothing pending is an error naming it,
/// and then nothing is written.
pub fn accept(config: &Config, selected: &[String]) -> Result<String, AcceptError> {
    let report = Report::build(config);
    let all = pending_in(&report);
    let mut chosen = Vec::new();
    let mut unmatched = Vec::new();
    for selector in selected {
        let matches: Vec<&Pending> = all
            .iter()
            .filter(|p| {
                selector == &p.test_name()
                    || selector == &format!("{}::{}", p.agent, p.case_id)
                    || selector == &p.case_id
            })
            .collect();
        if matches.is_empty() {
            unmatched.push(why_unmatched(&report, selector));
        }
        chosen.extend(matches);
    }
    if !unmatched.is_empty() {
        return Err(NothingToAccept(unmatched).into());
    }
    Ok(apply(config, chosen.into_iter().cloned().collect())?)
}

/// Writes the chosen changes: each agent's baseline once, atomically. Returns the summary.
pub fn apply(config: &Config, chosen: Vec<Pending>) -> Result<String, BaselineError> {
    let mut by_agent: BTreeMap<String, Vec<Pending>> = BTreeMap::new();
    for pending in chosen {
        by_agent
            .entry(pending.agent.clone())
            .or_default()
            .push(pending);
    }
    // Every file is read and planned before any is written.
    let mut plans = Vec::new();
    for (agent, changes) in by_agent {
        let file = config.baseline_file(&agent);
        let old = baseline::load(&file)?.unwrap_or_default();
        let mut new: Baseline = old.clone();
        for change in changes {
            match change.kind {
                PendingKind::Fixed => {
                    new.entries.remove(&change.case_id);
                }
                PendingKind::New | PendingKind::Changed => {
                    let note = old
                        .entries
                        .get(&change.case_id)
                        .and_then(|e| e.note.clone());
                    new.entries.insert(
                        change.case_id,
                        Entry {
                            fingerprint: change.new,
                            note,
                        },
                    );
                }
            }
        }
        plans.push((file, old, new));
    }
    let mut summary = String::new();
    for (file, old, new) in plans {
        let changes = Changes::between(&old, &new);
        if changes.is_empty() {
            continue;
        }
        baseline::write_atomic(&file, &baseline::render(&new))?;
        summary.push_str(&changes.summary(&escape_path(&file).to_string()));
    }
    Ok(summary)
}

/// Why `selector` matched nothing: no such test, or a test with nothing to accept.
fn why_unmatched(report: &Report, selector: &str) -> String {
    let found = report
        .agents()
        .iter()
        .flat_map(|a| &a.cases)
        .find(|c| selector == c.case_id || selector == format!("{}::{}", c.agent, c.case_id));
    match found {
        Some(case) => match &case.outcome {
            Outcome::Error(_) => format!(
                "`{}`: its case or recording cannot be read; fix the file (a baseline cannot \
                 accept an unreadable input)",
                escape(selector)
            ),
            _ => format!(
                "`{}`: nothing to accept ({}: the baseline already says so)",
                escape(selector),
                case.outcome.label()
            ),
        },
        None => format!(
            "`{}`: no such case result (name it as `cargo test` does, agent::case-id, or by \
             its case id)",
            escape(selector)
        ),
    }
}

/// Why an accept did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcceptError {
    /// A selection matched nothing to accept; nothing was written.
    #[error(transparent)]
    Nothing(#[from] NothingToAccept),
    /// A baseline could not be read or written.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
}
