//! The runs as data: what `--json` prints, and what every file output is drawn from.
//!
//! The shape is documented in README ("JSON reports"); keys may be added, none removed or
//! renamed without bumping [`super::SHAPE_VERSION`]. Text from input (names, ids, paths) is kept
//! as it is: the JSON writer escapes what a terminal could act on, and each output escapes for
//! its own syntax.

use std::collections::BTreeMap;

use serde::Serialize;
use toolcall_harness::{CaseReport, Config, Outcome, Report};
use toolcall_score::{Case, Drift, Response, Transcript, Verdict};

/// `toolcall check`: every agent's result on every case, with the cases themselves, so a report
/// can draw each case as the conversation it is.
#[derive(Serialize)]
pub struct CheckRun {
    /// Where the trees are.
    pub trees: Trees,
    /// How many cases the case tree holds.
    pub case_count: usize,
    /// Problems of the suite as a whole (no cases, an unreadable tree).
    pub problems: Vec<String>,
    /// What the walk left out (hidden folders), one sentence each.
    pub skipped: Vec<String>,
    /// Every case as the scorer read it, by case id.
    pub cases: BTreeMap<String, CaseView>,
    /// Every agent's results.
    pub agents: Vec<AgentRun>,
}

/// The three trees.
#[derive(Serialize)]
pub struct Trees {
    /// The case tree.
    pub cases: String,
    /// The recorded responses.
    pub recorded: String,
    /// The baselines.
    pub baselines: String,
}

/// One case: the request an agent sent.
#[derive(Serialize)]
pub struct CaseView {
    /// The case file.
    pub file: String,
    /// Its `about` sentence.
    pub about: Option<String>,
    /// The system prompt (empty when none).
    pub system: String,
    /// The tools the request defined.
    pub tools: Vec<ToolView>,
    /// The planner's tools, when this agent is a sub-agent handed a subset.
    pub parent_tools: Option<Vec<String>>,
    /// `any`, or `no_call` when no defined tool fits the request.
    pub expect: &'static str,
    /// The conversation sent with the request.
    pub transcript: Transcript,
    /// Names the prompt or a tool description tells the model to use that are not defined.
    pub drift: Vec<DriftView>,
    /// Why the case could not be read, when it could not.
    pub error: Option<String>,
}

/// One defined tool, as a report shows it.
#[derive(Serialize)]
pub struct ToolView {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
}

/// One drift finding of the lint.
#[derive(Serialize)]
pub struct DriftView {
    /// The undefined name.
    pub name: String,
    /// Where it is written: `the system prompt`, `the description of `x``.
    pub source: String,
    /// The sentence it is in.
    pub context: String,
    /// Defined names it was likely meant to be.
    pub suggestions: Vec<String>,
}

impl From<&Drift> for DriftView {
    fn from(drift: &Drift) -> DriftView {
        DriftView {
            name: drift.name.clone(),
            source: drift.source.to_string(),
            context: drift.context.clone(),
            suggestions: drift.suggestions.clone(),
        }
    }
}

/// One agent's results.
#[derive(Serialize)]
pub struct AgentRun {
    /// The agent.
    pub name: String,
    /// Whether its responses are hand-written examples rather than recorded.
    pub example: bool,
    /// Pass / expected failure / failure counts.
    pub counts: Counts,
    /// The distinct unknown names, most frequent first.
    pub unknown_names: Vec<UnknownName>,
    /// Coverage problems (a case with no recording, a recording with no case).
    pub coverage: Vec<String>,
    /// Baseline problems (an unreadable file, stale entries).
    pub baseline_problems: Vec<String>,
    /// One result per recorded case.
    pub results: Vec<CaseResult>,
}

/// How many tests came out which way.
#[derive(Serialize)]
pub struct Counts {
    /// Passed.
    pub pass: usize,
    /// Failed as the baseline expects.
    pub expected_failure: usize,
    /// Anything else.
    pub failure: usize,
}

/// A distinct unknown name.
#[derive(Serialize)]
pub struct UnknownName {
    /// The name as the model wrote it.
    pub name: String,
    /// Why it probably appeared.
    pub cause: Option<String>,
    /// How many findings carry it.
    pub count: usize,
}

/// One agent's result on one case.
#[derive(Serialize)]
pub struct CaseResult {
    /// The case id (a key of [`CheckRun::cases`]).
    pub case: String,
    /// The test's name, `agent::case-id`.
    pub test: String,
    /// `pass`, `expected_failure`, `failure`, `changed`, `now_passes` or `error`.
    pub outcome: &'static str,
    /// The outcome as `toolcall check` prints it (`expected failure`, `now passes`).
    pub label: &'static str,
    /// The file and line a failure points at: the case file, or the recording when that is
    /// what could not be read.
    pub location: Location,
    /// The recorded response file.
    pub recording: String,
    /// The fingerprint now.
    pub fingerprint: Vec<String>,
    /// The fingerprint the baseline records, when it lists the case.
    pub baseline: Option<Vec<String>>,
    /// What the failing test prints; `null` when it passes.
    pub message: Option<String>,
    /// The command that accepts this result into the baseline, when one can.
    pub accept: Option<String>,
    /// Each recorded response with its verdict.
    pub samples: Vec<SampleView>,
}

/// A file, and a line in it.
#[derive(Serialize)]
pub struct Location {
    /// The file.
    pub file: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
}

/// One recorded response and its verdict.
#[derive(Serialize)]
pub struct SampleView {
    /// The line of a `.jsonl` recording.
    pub line: Option<usize>,
    /// The response as read.
    pub response: Response,
    /// The verdict: `{"verdict", "findings", "notes"}`.
    pub verdict: Verdict,
}

impl CheckRun {
    /// Writes `check`'s JSON (the envelope and this run) to `out` as it is drawn, never as one
    /// value: the cases and each agent's results are taken out for the shell and written one at
    /// a time in their places ([`super::stream`]).
    pub fn write_json(&mut self, ok: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.with_shell(ok, |shell, cases, results| {
            super::stream::write(out, shell, &mut CheckHoles { cases, results })
        })
    }

    /// Writes `check`'s JUnit report to `out`, drawn from the shell and from each result's
    /// value in turn (never the whole run as one value), as [`super::junit::render`] draws it
    /// from the whole value.
    pub fn write_junit(&mut self, ok: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.with_shell(ok, |shell, _, results| {
            let mut failed = None;
            let text = super::junit::render_with(shell, &mut |agent, each| {
                for result in results.get(agent).into_iter().flatten() {
                    match serde_json::to_value(result) {
                        Ok(value) => each(&value),
                        Err(e) => failed = failed.take().or(Some(e)),
                    }
                }
            });
            match failed {
                Some(e) => Err(std::io::Error::other(e)),
                None => out.write_all(text.as_bytes()),
            }
        })
    }

    /// Writes `check`'s page to `out`, drawn from the shell, each result's small facts in turn,
    /// and the values of only the results and cases it draws (never the whole run as one
    /// value), as [`super::html::render`] draws it from the whole value.
    pub fn write_html(&mut self, ok: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.with_shell(ok, |shell, cases, results| {
            let mut parts = ModelParts {
                cases,
                results,
                failed: None,
            };
            let page = super::html::render_with(shell, &mut parts);
            match parts.failed {
                Some(e) => Err(std::io::Error::other(e)),
                None => out.write_all(page.as_bytes()),
            }
        })
    }

    /// Calls `f` with the run's JSON shell (the envelope and this run, its cases and every
    /// agent's results taken out) and what was taken out, then puts those back.
    fn with_shell(
        &mut self,
        ok: bool,
        f: impl FnOnce(
            &serde_json::Value,
            &BTreeMap<String, CaseView>,
            &[Vec<CaseResult>],
        ) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let cases = std::mem::take(&mut self.cases);
        let results: Vec<Vec<CaseResult>> = self
            .agents
            .iter_mut()
            .map(|agent| std::mem::take(&mut agent.results))
            .collect();
        let shell = super::value("check", ok, &*self).map_err(std::io::Error::other);
        let done = shell.and_then(|shell| f(&shell, &cases, &results));
        self.cases = cases;
        for (agent, results) in self.agents.iter_mut().zip(results) {
            agent.results = results;
        }
        done
    }

    /// The model of `report`, run under `config`.
    pub fn of(report: &Report, config: &Config) -> CheckRun {
        let mut cases = BTreeMap::new();
        for agent in report.agents() {
            for result in &agent.cases {
                cases
                    .entry(result.case_id.clone())
                    .or_insert_with(|| case_view(result));
            }
        }
        let agents = report
            .agents()
            .iter()
            .map(|agent| {
                let counts = agent.counts();
                AgentRun {
                    name: agent.name.clone(),
                    example: agent.example,
                    counts: Counts {
                        pass: counts.pass,
                        expected_failure: counts.expected_failure,
                        failure: counts.failure,
                    },
                    unknown_names: agent
                        .unknown_names()
                        .into_iter()
                        .map(|n| UnknownName {
                            name: n.name,
                            cause: n.cause.map(|c| c.to_string()),
                            count: n.count,
                        })
                        .collect(),
                    coverage: agent.coverage.clone(),
                    baseline_problems: agent.baseline.clone(),
                    results: agent.cases.iter().map(case_result).collect(),
                }
            })
            .collect();
        CheckRun {
            trees: Trees {
                cases: config.cases.display().to_string(),
                recorded: config.recorded.display().to_string(),
                baselines: config.baselines.display().to_string(),
            },
            case_count: report.case_count(),
            problems: report.problems().to_vec(),
            skipped: report.skipped().to_vec(),
            cases,
            agents,
        }
    }
}

fn case_view(result: &CaseReport) -> CaseView {
    let file = result.case_path.display().to_string();
    match Case::load(&result.case_path) {
        Ok(case) => CaseView {
            file,
            about: case.about.clone(),
            system: case.system.clone(),
            tools: case
                .catalog
                .tools()
                .iter()
                .map(|t| ToolView {
                    name: t.name.clone(),
                    description: t.description.clone(),
                })
                .collect(),
            parent_tools: case
                .parent
                .as_ref()
                .map(|p| p.names().map(str::to_owned).collect()),
            expect: match case.expect {
                toolcall_score::Expect::NoCall => "no_call",
                _ => "any",
            },
            transcript: case.transcript.clone(),
            drift: result.drift.iter().map(DriftView::from).collect(),
            error: None,
        },
        Err(e) => CaseView {
            file,
            about: None,
            system: String::new(),
            tools: Vec::new(),
            parent_tools: None,
            expect: "any",
            transcript: Transcript::default(),
            drift: Vec::new(),
            error: Some(e.to_string()),
        },
    }
}

fn case_result(result: &CaseReport) -> CaseResult {
    let (outcome, baseline) = match &result.outcome {
        Outcome::Pass => ("pass", None),
        Outcome::ExpectedFailure => ("expected_failure", Some(result.fingerprint.clone())),
        Outcome::Failure => ("failure", None),
        Outcome::Changed { old } => ("changed", Some(old.clone())),
        Outcome::NowPasses { old } => ("now_passes", Some(old.clone())),
        Outcome::Error(_) => ("error", None),
        _ => ("error", None),
    };
    let test = format!(
        "{}::{}",
        toolcall_score::escape(&result.agent),
        toolcall_score::escape(&result.case_id)
    );
    let accept = matches!(
        result.outcome,
        Outcome::Failure | Outcome::Changed { .. } | Outcome::NowPasses { .. }
    )
    .then(|| format!("toolcall baseline accept {test}"));
    let (file, line) = result.location();
    CaseResult {
        case: result.case_id.clone(),
        test,
        outcome,
        label: result.outcome.label(),
        location: Location {
            file: file.display().to_string(),
            line,
        },
        recording: result.recording.display().to_string(),
        fingerprint: result.fingerprint.clone(),
        baseline,
        message: result.message(),
        accept,
        samples: result
            .samples
            .iter()
            .map(|s| SampleView {
                line: s.line,
                response: s.response.clone(),
                verdict: s.verdict.clone(),
            })
            .collect(),
    }
}

/// `toolcall replay`: each flow, its steps and how it came out.
#[derive(Serialize)]
pub struct ReplayRun {
    /// The flows, in the order replayed.
    pub flows: Vec<FlowRun>,
}

/// One flow's replay.
#[derive(Serialize)]
pub struct FlowRun {
    /// The flow file.
    pub flow: String,
    /// `pass`, `expected_failure` (failed as its `expected_failure` says), `failure`,
    /// `skipped` (its `skip` or `skip_unless_env`; no server started) or `error` (the flow file
    /// cannot be read or is not a valid flow; `failure.message` says why).
    pub outcome: &'static str,
    /// Why the flow was skipped, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The one-line summary `toolcall replay` prints.
    pub summary: String,
    /// The flow's `expected_failure`, when it has one.
    pub expected_failure: Option<String>,
    /// The calls that went through.
    pub steps: Vec<StepView>,
    /// How many calls the flow has.
    pub planned: usize,
    /// The first failure.
    pub failure: Option<FailureView>,
    /// How many tools the server listed.
    pub tools: usize,
    /// The protocol the flow asked for: `auto`, `legacy` or `modern`.
    pub protocol: &'static str,
    /// The MCP version the handshake agreed on (`2025-11-25`, `2026-07-28`).
    pub protocol_version: Option<String>,
    /// Under `auto`: why `server/discover` failed, when the replay started again with
    /// `initialize`.
    pub discover_failed: Option<String>,
    /// Start-up plus the handshake, in milliseconds.
    pub startup_ms: f64,
    /// The whole replay, in milliseconds.
    pub total_ms: f64,
    /// The last lines the server wrote to stderr.
    pub stderr_tail: Vec<String>,
    /// How many bytes it wrote to stderr in all.
    pub stderr_bytes: u64,
    /// What the session check found on a stdio server's stream, in order.
    pub session: Vec<SessionView>,
    /// The labels of the `verify` steps whose new response `--update` wrote into the flow.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub updated: Vec<String>,
}

/// One thing the session check found.
#[derive(Serialize)]
pub struct SessionView {
    /// `stderr`, `stray_stdout`, `unknown_id`, `answered_twice` or `late`.
    pub kind: &'static str,
    /// The sentence that says it.
    pub message: String,
    /// Whether it failed the flow: under `--strict`, each one that breaks the stdio transport
    /// (output on stderr never does: a server may log there).
    pub fails: bool,
}

/// One call that went through.
#[derive(Serialize)]
pub struct StepView {
    /// 1-based.
    pub index: usize,
    /// The tool called.
    pub name: String,
    /// The arguments the flow sent.
    pub input: serde_json::Value,
    /// What came back: `structuredContent`, or the first text block.
    pub result: serde_json::Value,
    /// How long the call took, in milliseconds.
    pub elapsed_ms: f64,
    /// How many `tools/call` requests it took (more than one when the server asked for input).
    pub rounds: usize,
    /// Why the call was not made (its `skip` or `skip_unless_env`), when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// What broke, where.
#[derive(Serialize)]
pub struct FailureView {
    /// The 1-based step, when a call was under way.
    pub step: Option<usize>,
    /// `initialize`, `tools/list`, or `step 2: issue_refund`.
    pub phase: String,
    /// Which kind of failure (`unknown_tool`, `timeout`, …).
    pub kind: String,
    /// The sentence that says what broke; with a `FAIL` line's reason when the flow expected
    /// another failure or none.
    pub message: String,
    /// For an `expect` that did not hold: its JSON pointer, and the values expected and found
    /// there (`got` is `null` when the result holds nothing there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// See `pointer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    /// See `pointer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got: Option<Option<serde_json::Value>>,
    /// The tool the failing step called, when a step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The arguments the failing step sent (masked as in `steps`), when a step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
}

impl FlowRun {
    /// The model of `report`, a replay of `flow`, judged as `outcome`; under `strict`, a flow
    /// that passed fails on what the session check found that breaks the transport.
    pub fn of(
        flow: &toolcall_mcp::Flow,
        report: &toolcall_mcp::Report,
        outcome: &toolcall_mcp::Outcome,
        strict: bool,
    ) -> FlowRun {
        use toolcall_mcp::Outcome;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        // Step `index`'s input as the flow writes it (masked): what a step or a failure shows
        // when nothing was filled in (its `sent` is what was, `${steps.…}` and all).
        let written = |index: usize| {
            flow.calls
                .get(index.wrapping_sub(1))
                .map(|c| flow.mask_value(&c.input))
        };
        let session: Vec<SessionView> = report
            .session
            .iter()
            .map(|f| SessionView {
                kind: f.kind.name(),
                message: f.message.clone(),
                // The rule is toolcall_mcp's: under --strict, a transport-breaking finding fails
                // a flow that otherwise passed.
                fails: outcome.fails_by(f, strict),
            })
            .collect();
        let session_failure = session.iter().find(|f| f.fails).map(|first| FailureView {
            step: None,
            phase: "the session".into(),
            kind: "session".into(),
            message: format!(
                "the session check found {} thing(s) (--strict): {}",
                session.iter().filter(|f| f.fails).count(),
                first.message
            ),
            pointer: None,
            expected: None,
            got: None,
            name: None,
            input: None,
        });
        let (label, summary) = match outcome {
            _ if session_failure.is_some() => ("failure", report.summary()),
            Outcome::Passed => ("pass", report.summary()),
            Outcome::Skipped(_) => ("skipped", report.summary()),
            Outcome::FailedAsExpected(_) => ("expected_failure", report.summary_as_expected()),
            _ => ("failure", report.summary()),
        };
        let failure = report.failure.as_ref().map(|f| FailureView {
            step: f.step,
            phase: f.phase.clone(),
            kind: snake(&format!("{:?}", f.kind)),
            message: match outcome {
                Outcome::FailedDifferently { .. } => format!("{f}; {outcome}"),
                _ => f.to_string(),
            },
            pointer: f.mismatch.as_ref().map(|m| m.pointer.clone()),
            expected: f.mismatch.as_ref().map(|m| m.expected.clone()),
            got: f.mismatch.as_ref().map(|m| m.got.clone()),
            name: f
                .step
                .and_then(|s| flow.calls.get(s.wrapping_sub(1)))
                .map(|c| c.name.clone()),
            input: f
                .sent
                .as_deref()
                .cloned()
                .or_else(|| f.step.and_then(written)),
        });
        let failure = failure.or(session_failure).or_else(|| {
            matches!(outcome, Outcome::PassedUnexpectedly { .. }).then(|| FailureView {
                step: None,
                phase: "the flow".into(),
                kind: "passed_unexpectedly".into(),
                message: outcome.to_string(),
                pointer: None,
                expected: None,
                got: None,
                name: None,
                input: None,
            })
        });
        FlowRun {
            flow: report.flow.display().to_string(),
            outcome: label,
            skipped: report.skipped.clone(),
            summary,
            expected_failure: flow.expected_failure.clone(),
            steps: report
                .steps
                .iter()
                .map(|s| StepView {
                    index: s.index,
                    name: s.name.clone(),
                    input: s
                        .sent
                        .clone()
                        .or_else(|| written(s.index))
                        .unwrap_or_default(),
                    result: s.result.clone(),
                    elapsed_ms: ms(s.elapsed),
                    rounds: s.rounds,
                    skipped: s.skipped.clone(),
                })
                .collect(),
            planned: report.planned,
            failure,
            tools: report.tools,
            protocol: flow.protocol.name(),
            protocol_version: report.protocol_version.clone(),
            discover_failed: report.discover_failed.as_deref().map(|m| flow.mask(m)),
            startup_ms: ms(report.startup),
            total_ms: ms(report.total),
            stderr_tail: report.stderr_tail.clone(),
            stderr_bytes: report.stderr_bytes,
            session,
            updated: Vec::new(),
        }
    }
}

impl FlowRun {
    /// The model of a flow file that could not be read or is not a valid flow: an `error`,
    /// with nothing replayed.
    pub fn error(path: &std::path::Path, error: &toolcall_mcp::FlowError) -> FlowRun {
        FlowRun {
            flow: path.display().to_string(),
            outcome: "error",
            skipped: None,
            summary: format!("not replayed: {error}"),
            expected_failure: None,
            steps: Vec::new(),
            planned: 0,
            failure: Some(FailureView {
                step: None,
                phase: "the flow file".into(),
                kind: "flow_error".into(),
                message: error.to_string(),
                pointer: None,
                expected: None,
                got: None,
                name: None,
                input: None,
            }),
            tools: 0,
            protocol: toolcall_mcp::Protocol::default().name(),
            protocol_version: None,
            discover_failed: None,
            startup_ms: 0.0,
            total_ms: 0.0,
            stderr_tail: Vec::new(),
            stderr_bytes: 0,
            session: Vec::new(),
            updated: Vec::new(),
        }
    }
}

/// `UnknownTool` as `unknown_tool`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The collections a [`CheckRun`]'s JSON shell leaves out, and where they go.
struct CheckHoles<'a> {
    cases: &'a BTreeMap<String, CaseView>,
    results: &'a [Vec<CaseResult>],
}

impl super::stream::Hole for CheckHoles<'_> {
    fn fill(
        &mut self,
        path: &[super::stream::Step<'_>],
        out: &mut super::stream::Pretty<'_>,
    ) -> Option<std::io::Result<()>> {
        use super::stream::Step::{Index, Key};
        match path {
            [Key("cases")] => {
                Some(out.object(self.cases.iter().map(|(id, case)| (id.as_str(), case))))
            }
            [Key("agents"), Index(i), Key("results")] => Some(out.array(self.results.get(*i)?)),
            _ => None,
        }
    }
}

/// A [`CheckRun`]'s cases and results as the page reads them: each made a value only when
/// asked, the first failure to make one kept.
struct ModelParts<'a> {
    cases: &'a BTreeMap<String, CaseView>,
    results: &'a [Vec<CaseResult>],
    failed: Option<serde_json::Error>,
}

impl ModelParts<'_> {
    fn value<T: Serialize>(&mut self, item: Option<&T>) -> serde_json::Value {
        match item.map(serde_json::to_value) {
            Some(Ok(value)) => value,
            Some(Err(e)) => {
                self.failed.get_or_insert(e);
                serde_json::Value::Null
            }
            None => serde_json::Value::Null,
        }
    }
}

impl super::html::CheckParts for ModelParts<'_> {
    fn results(&mut self, agent: usize, each: &mut dyn FnMut(&serde_json::Value)) {
        let results = self.results;
        for result in results.get(agent).into_iter().flatten() {
            let value = self.value(Some(result));
            each(&value);
        }
    }

    fn result(&mut self, agent: usize, index: usize) -> serde_json::Value {
        let results = self.results;
        self.value(results.get(agent).and_then(|r| r.get(index)))
    }

    fn case(&mut self, id: &str) -> serde_json::Value {
        let cases = self.cases;
        self.value(cases.get(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed JSON against the old path (the whole value, pretty-printed) over the
    /// harness's fixture trees: the same bytes, so nothing reading the report sees a change.
    #[test]
    fn the_streamed_json_is_the_bytes_of_the_whole_value() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../toolcall-harness/tests/fixtures");
        for tree in ["green", "red"] {
            let config = Config::for_root(&fixtures.join(tree));
            let report = Report::build(&config);
            let mut run = CheckRun::of(&report, &config);
            let whole = super::super::value("check", report.is_ok(), &run).unwrap();
            let expected = format!("{}\n", toolcall_score::to_json_pretty(&whole).unwrap());
            let mut streamed = Vec::new();
            run.write_json(report.is_ok(), &mut streamed).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), expected, "{tree}");
            let mut junit = Vec::new();
            run.write_junit(report.is_ok(), &mut junit).unwrap();
            assert_eq!(
                String::from_utf8(junit).unwrap(),
                super::super::junit::render(&whole),
                "{tree}"
            );
            let mut html = Vec::new();
            run.write_html(report.is_ok(), &mut html).unwrap();
            assert_eq!(
                String::from_utf8(html).unwrap(),
                super::super::html::render(&whole),
                "{tree}"
            );
            // The collections taken out for the shell are back.
            assert_eq!(
                super::super::value("check", report.is_ok(), &run).unwrap(),
                whole
            );
        }
    }

    /// The page drawn from the model's parts against the old path (the whole value) over a
    /// generated tree of two agents, with failures among more passes than the page draws (so
    /// the order over agents, the filters and the folded passes all come into it).
    #[test]
    fn the_streamed_page_is_the_bytes_of_the_whole_value() {
        let root =
            std::env::temp_dir().join(format!("toolcall-html-streamed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let case = serde_json::json!({
            "tools": [{"name": "get_invoice", "description": "One invoice.",
                       "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "Show invoice 1"}]
        })
        .to_string();
        let response = |name: &str| {
            serde_json::json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}]})
            .to_string()
        };
        for dir in ["cases/many", "recorded/claude/many", "recorded/gpt/many"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for i in 0..1200 {
            std::fs::write(root.join(format!("cases/many/c{i:04}.json")), &case).unwrap();
            for (agent, every) in [("claude", 7), ("gpt", 11)] {
                let name = if i % every == 3 {
                    "getInvoice"
                } else {
                    "get_invoice"
                };
                std::fs::write(
                    root.join(format!("recorded/{agent}/many/c{i:04}.json")),
                    response(name),
                )
                .unwrap();
            }
        }
        let config = Config::for_root(&root);
        let report = Report::build(&config);
        let mut run = CheckRun::of(&report, &config);
        let whole = super::super::value("check", report.is_ok(), &run).unwrap();
        let expected = super::super::html::render(&whole);
        let mut html = Vec::new();
        run.write_html(report.is_ok(), &mut html).unwrap();
        let _ = std::fs::remove_dir_all(&root);
        assert!(expected.contains("passing case(s) are not drawn"));
        assert!(expected.contains("data-outcome=\"failure\""));
        assert!(String::from_utf8(html).unwrap() == expected);
    }
}
