//! The run as data: every test's result plus the suite-level checks, built by the same functions
//! the test harness calls one trial at a time. `toolcall check` prints it; the baseline writer
//! rewrites baselines from it.

use std::collections::{BTreeMap, BTreeSet};
use toolcall_score::{escape, escape_path};

use toolcall_score::{Cause, FindingKind};

use crate::baseline::{self, Baseline};
use crate::discover::Suite;
use crate::evaluate::{evaluate, CaseReport, Outcome};
use crate::Config;

/// The results of a whole run.
#[derive(Debug)]
pub struct Report {
    agents: Vec<AgentReport>,
    problems: Vec<String>,
    skipped: Vec<String>,
    case_ids: BTreeSet<String>,
}

/// One agent's results.
#[derive(Debug)]
pub struct AgentReport {
    /// The agent (its directory name under the recorded tree).
    pub name: String,
    /// One result per recorded case, sorted by case id.
    pub cases: Vec<CaseReport>,
    /// Recording problems: cases with no recorded response, recordings with no case.
    pub coverage: Vec<String>,
    /// Baseline problems: an unreadable file, entries whose case no longer exists.
    pub baseline: Vec<String>,
    /// Whether the agent's responses are examples written by hand (its folder holds an
    /// [`EXAMPLE_MARKER`]) rather than recorded from a model: its counts measure the suite.
    pub example: bool,
    /// Whether the agent has a directory of recordings (it may have only a baseline file).
    pub(crate) has_recordings: bool,
}

/// The file whose presence in `recorded/<agent>/` says that agent's responses were written by
/// hand, not recorded (its text says so to a reader); reports list such an agent as an example.
pub const EXAMPLE_MARKER: &str = "EXAMPLE.md";

/// How many tests came out which way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub pass: usize,
    /// Failed as the baseline expects.
    pub expected_failure: usize,
    /// Anything else: a new failure, a changed failure, a baselined case that now passes, an
    /// unreadable file.
    pub failure: usize,
}

/// One distinct unknown tool name an agent produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// The name as the model wrote it (escape it before printing: see
    /// [`toolcall_score::escape`]).
    pub name: String,
    /// Why it probably appeared.
    pub cause: Option<Cause>,
    /// How many findings carry it.
    pub count: usize,
}

impl Report {
    /// Discovers the suite under `config` and evaluates every test.
    pub fn build(config: &Config) -> Report {
        let suite = Suite::discover(config);
        let mut agents = Vec::new();
        for name in suite.agent_names() {
            let (baseline, baseline_problem) = load_baseline(config, name);
            let mut cases = Vec::new();
            if let Some(files) = suite.agents.get(name) {
                for (id, recording) in &files.recordings {
                    if let Some(case_path) = suite.cases.get(id) {
                        cases.push(evaluate(
                            config,
                            name,
                            id,
                            case_path,
                            recording,
                            baseline.entries.get(id),
                        ));
                    }
                }
            }
            agents.push(AgentReport {
                example: config.recorded.join(name).join(EXAMPLE_MARKER).is_file(),
                has_recordings: suite.agents.contains_key(name),
                name: name.to_owned(),
                cases,
                coverage: missing_recordings(config, &suite, name)
                    .into_iter()
                    .map(|(_, message)| message)
                    .chain(coverage_problems(config, &suite, name))
                    .collect(),
                baseline: baseline_problems(config, &suite, name, &baseline, baseline_problem),
            });
        }
        Report {
            problems: suite_problems(config, &suite),
            skipped: suite.skipped.clone(),
            case_ids: suite.cases.keys().cloned().collect(),
            agents,
        }
    }

    /// Each agent's results, sorted by agent name.
    pub fn agents(&self) -> &[AgentReport] {
        &self.agents
    }

    /// Suite-level problems: no cases, no agents, unreadable directories.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Hidden directories discovery skipped, one sentence each: not a failure, but said.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// How many case files were found.
    pub fn case_count(&self) -> usize {
        self.case_ids.len()
    }

    /// Whether a case of this id exists.
    pub(crate) fn has_case(&self, id: &str) -> bool {
        self.case_ids.contains(id)
    }

    /// Whether everything passed (expected failures included) and no check found a problem.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.agents.iter().all(AgentReport::is_ok)
    }
}

impl AgentReport {
    /// Whether every test of this agent passed and its checks found nothing.
    pub fn is_ok(&self) -> bool {
        self.coverage.is_empty()
            && self.baseline.is_empty()
            && self.cases.iter().all(|c| c.outcome.is_ok())
    }

    /// How many tests came out which way.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for case in &self.cases {
            match case.outcome {
                Outcome::Pass => counts.pass += 1,
                Outcome::ExpectedFailure => counts.expected_failure += 1,
                _ => counts.failure += 1,
            }
        }
        counts
    }

    /// The distinct unknown tool names over all of this agent's findings, most frequent first
    /// (then by name).
    pub fn unknown_names(&self) -> Vec<UnknownName> {
        let mut counts: BTreeMap<(&str, Option<Cause>), usize> = BTreeMap::new();
        for finding in self.cases.iter().flat_map(CaseReport::findings) {
            if finding.kind != FindingKind::UnknownTool {
                continue;
            }
            if let Some(name) = &finding.name {
                *counts.entry((name.as_str(), finding.cause)).or_default() += 1;
            }
        }
        let mut names: Vec<UnknownName> = counts
            .into_iter()
            .map(|((name, cause), count)| UnknownName {
                name: name.to_owned(),
                cause,
                count,
            })
            .collect();
        names.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        names
    }
}

/// An agent's baseline, or an empty one and the reason it could not be read.
pub(crate) fn load_baseline(config: &Config, agent: &str) -> (Baseline, Option<String>) {
    match baseline::load(&config.baseline_file(agent)) {
        Ok(baseline) => (baseline.unwrap_or_default(), None),
        Err(e) => (Baseline::new(), Some(e.to_string())),
    }
}

/// `suite::[discovery]`: zero cases is a failure, and so is a suite with no recordings.
pub(crate) fn suite_problems(config: &Config, suite: &Suite) -> Vec<String> {
    // A suite of flows alone (no case tree, no recordings) is a suite too.
    let mcp_only = config.flows.is_some() || config.mcp_contracts.is_some();
    if mcp_only && !config.cases.exists() && !config.recorded.exists() {
        return Vec::new();
    }
    let mut problems = suite.problems.clone();
    if suite.cases.is_empty() {
        problems.push(format!(
            "found no case files (*.json) under {}: finding zero cases is a failure \
             (is the path right? it is set by {})",
            escape_path(&config.cases),
            config.front.cases_setting()
        ));
    }
    if suite.agents.is_empty() {
        problems.push(format!(
            "found no agents under {}: record responses as {}/<agent>/<case-id>.json \
             (the path is set by Harness::recorded or ATP_RECORDED)",
            escape_path(&config.recorded),
            escape_path(&config.recorded)
        ));
    }
    problems
}

/// `<agent>::[coverage]`: every case has a recording, and every recording has a case.
pub(crate) fn coverage_problems(config: &Config, suite: &Suite, agent: &str) -> Vec<String> {
    let Some(files) = suite.agents.get(agent) else {
        return Vec::new();
    };
    let mut problems = files.problems.clone();
    let orphans: Vec<String> = files
        .recordings
        .iter()
        .filter(|(id, _)| !suite.cases.contains_key(*id))
        .map(|(id, path)| format!("{} ({})", escape(id), escape_path(path)))
        .collect();
    if !orphans.is_empty() {
        problems.push(format!(
            "{} recorded response(s) of `{agent}` have no case under {} (stale recordings: delete them, or restore the case):\n{}",
            orphans.len(),
            escape_path(&config.cases),
            bullets(orphans),
            agent = escape(agent),
        ));
    }
    problems
}

/// The cases `agent` has no recording of, each with the message of its failing test: which file
/// to record and how. A baseline cannot accept a missing recording, so the message says so.
pub(crate) fn missing_recordings(
    config: &Config,
    suite: &Suite,
    agent: &str,
) -> Vec<(String, String)> {
    let Some(files) = suite.agents.get(agent) else {
        return Vec::new();
    };
    let dir = config.recorded.join(agent);
    suite
        .cases
        .iter()
        .filter(|(id, _)| !files.recordings.contains_key(*id))
        .map(|(id, case)| {
            let message = format!(
                "`{agent}` has no recorded response for case `{id}` ({case}); a baseline \
                 cannot accept a missing recording.\n\
                 Save what the agent answers, as the provider returned it, as {file}\n\
                 or ask a live model for every missing case: toolcall rate --live openai \
                 --model MODEL --cases {cases} --record-dir {dir}",
                agent = escape(agent),
                id = escape(id),
                case = escape_path(case),
                file = escape_path(&dir.join(format!("{id}.json"))),
                cases = escape_path(&config.cases),
                dir = escape_path(&dir),
            );
            (id.clone(), message)
        })
        .collect()
}

/// `<agent>::[baseline]`: the file reads, and every entry's case still exists.
pub(crate) fn baseline_problems(
    config: &Config,
    suite: &Suite,
    agent: &str,
    baseline: &Baseline,
    load_error: Option<String>,
) -> Vec<String> {
    let file = config.baseline_file(agent);
    let mut problems: Vec<String> = load_error.into_iter().collect();
    if !suite.agents.contains_key(agent) && !baseline.entries.is_empty() {
        problems.push(format!(
            "{} lists {} known failure(s) of `{agent}`, which has no recordings under {}: \
             every entry is stale ({} empties it)",
            escape_path(&file),
            baseline.entries.len(),
            escape_path(&config.recorded),
            config.front.rewrite_baselines(),
            agent = escape(agent),
        ));
        return problems;
    }
    let stale: Vec<&str> = baseline
        .entries
        .keys()
        .filter(|id| !suite.cases.contains_key(*id))
        .map(String::as_str)
        .collect();
    if !stale.is_empty() {
        problems.push(format!(
            "{} lists {} case(s) that no longer exist under {} (stale entries: remove them with {}):\n{}",
            escape_path(&file),
            stale.len(),
            escape_path(&config.cases),
            config.front.rewrite_baselines(),
            bullets(stale.iter().map(|id| escape(id).to_string()))
        ));
    }
    problems
}

/// One `  - item` line per item (already escaped).
fn bullets(items: impl IntoIterator<Item = String>) -> String {
    items
        .into_iter()
        .map(|i| format!("  - {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}
