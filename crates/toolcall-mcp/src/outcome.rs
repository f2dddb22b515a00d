//! A replay judged against its flow's `expected_failure`, as `toolcall replay` and the example
//! flows' test suite both judge it.
//!
//! A flow that demonstrates a failure says which, as the exact failure line. It passes when the
//! replay fails exactly so, and fails when the replay fails otherwise (a different failure is
//! never the one the flow shows) or passes: like a baseline entry whose case now passes, the
//! expectation is stale, and removing it is the fix.

use std::fmt;

use toolcall_score::escape;

use crate::{Failure, Flow, Report};

/// How a replay came out against its flow's `expected_failure`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every step passed, and the flow expects no failure.
    Passed,
    /// The replay failed exactly as the flow's `expected_failure` says.
    FailedAsExpected(Failure),
    /// The replay failed, and the flow expects no failure.
    Failed(Failure),
    /// The replay failed otherwise than the flow's `expected_failure` says.
    FailedDifferently {
        /// The flow's `expected_failure`.
        expected: String,
        /// What happened.
        got: Failure,
    },
    /// Every step passed, though the flow expects a failure.
    PassedUnexpectedly {
        /// The flow's `expected_failure`.
        expected: String,
    },
    /// The flow was not replayed (`skip`, or `skip_unless_env` naming an unset variable): the
    /// reason. Neither a pass nor a failure.
    Skipped(String),
}

impl Outcome {
    /// Judges `report`, a replay of `flow`.
    pub fn of(flow: &Flow, report: &Report) -> Outcome {
        if let Some(reason) = &report.skipped {
            return Outcome::Skipped(reason.clone());
        }
        match (&flow.expected_failure, &report.failure) {
            (None, None) => Outcome::Passed,
            (None, Some(failure)) => Outcome::Failed(failure.clone()),
            (Some(expected), None) => Outcome::PassedUnexpectedly {
                expected: expected.clone(),
            },
            (Some(expected), Some(failure)) if failure.to_string() == *expected => {
                Outcome::FailedAsExpected(failure.clone())
            }
            (Some(expected), Some(failure)) => Outcome::FailedDifferently {
                expected: expected.clone(),
                got: failure.clone(),
            },
        }
    }

    /// Whether the flow passes: every step passed as it expects, or it failed as it expects.
    /// A skipped flow does not pass (see [`Outcome::is_failure`]).
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Passed | Outcome::FailedAsExpected(_))
    }

    /// How many of `report`'s session findings fail this flow under `--strict` (`strict` true):
    /// a flow that otherwise passed fails when there is any; one that failed or was skipped
    /// already is judged by that, so none count (0).
    pub fn session_failures(&self, report: &Report, strict: bool) -> usize {
        report
            .session
            .iter()
            .filter(|f| self.fails_by(f, strict))
            .count()
    }

    /// Whether `finding` fails this flow under `--strict` (`strict` true): one that breaks the
    /// transport, in a flow that otherwise passed (`--json`'s and the HTML page's `fails`).
    pub fn fails_by(&self, finding: &crate::SessionFinding, strict: bool) -> bool {
        self.is_pass() && finding.fails_under(strict)
    }

    /// Whether the flow fails the run: it neither passed nor was skipped.
    pub fn is_failure(&self) -> bool {
        !self.is_pass() && !matches!(self, Outcome::Skipped(_))
    }
}

/// What the outcome means, in a sentence or three: the failure for [`Outcome::Failed`] and
/// [`Outcome::FailedAsExpected`], the expected and the actual failure, or why an expected
/// failure that did not happen fails. Text from the flow is escaped.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Passed => f.write_str("every step passed"),
            Outcome::Skipped(reason) => write!(f, "skipped ({})", escape(reason)),
            Outcome::FailedAsExpected(failure) | Outcome::Failed(failure) => {
                write!(f, "{failure}")
            }
            Outcome::FailedDifferently { expected, got } => write!(
                f,
                "expected the failure\n  {}\ngot\n  {got}",
                escape(expected)
            ),
            Outcome::PassedUnexpectedly { expected } => write!(
                f,
                "expected the replay to fail with\n  {}\nbut every step passed: the expected \
                 failure did not happen (if it is fixed for good, remove `expected_failure` \
                 from the flow)",
                escape(expected)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{EnvVars, FailureKind};

    fn flow(expected: Option<&str>) -> Flow {
        let mut flow = Flow::from_json_str(
            r#"{"server": {"command": "node"}, "calls": [{"name": "t"}]}"#,
            Path::new("x.json"),
            Path::new("."),
            &EnvVars,
        )
        .expect("a flow");
        flow.expected_failure = expected.map(str::to_owned);
        flow
    }

    fn report(failure: Option<&str>) -> Report {
        let mut report = Report::before_start(&flow(None));
        report.failure = failure.map(|message| Failure {
            step: Some(1),
            phase: "step 1: t".into(),
            kind: FailureKind::ToolError,
            message: message.into(),
            mismatch: None,
            rpc_error: None,
            sent: None,
        });
        report
    }

    /// Each pairing of expectation and result, and what it says; text from the flow escaped.
    #[test]
    fn each_outcome_of_an_expectation_and_a_result() {
        let line = "step 1: t: the tool returned isError: true";
        let cases = [
            (None, None, true, "every step passed".to_owned()),
            (None, Some("the tool returned isError: true"), false, line.to_owned()),
            (Some(line), Some("the tool returned isError: true"), true, line.to_owned()),
            (
                Some("step 1: t: boom\u{1b}"),
                Some("the tool returned isError: true"),
                false,
                format!("expected the failure\n  step 1: t: boom\\u{{1b}}\ngot\n  {line}"),
            ),
            (
                Some(line),
                None,
                false,
                format!("expected the replay to fail with\n  {line}\nbut every step passed: the expected failure did not happen (if it is fixed for good, remove `expected_failure` from the flow)"),
            ),
        ];
        for (expected, failure, pass, said) in cases {
            let outcome = Outcome::of(&flow(expected), &report(failure));
            assert_eq!(outcome.is_pass(), pass, "{outcome:?}");
            assert_eq!(outcome.to_string(), said, "{outcome:?}");
        }
    }

    /// Under --strict a transport-breaking session finding fails a flow that passed, never one
    /// that failed already; stderr output never fails one; without --strict nothing does.
    #[test]
    fn session_findings_fail_only_a_passing_flow_and_only_under_strict() {
        use crate::{SessionFinding, SessionFindingKind};
        let finding = |kind| SessionFinding {
            kind,
            message: "m".into(),
        };
        let mut passed = report(None);
        passed.session = vec![
            finding(SessionFindingKind::StrayStdout),
            finding(SessionFindingKind::Stderr),
            finding(SessionFindingKind::Late),
        ];
        let mut failed = report(Some("the tool returned isError: true"));
        failed.session = passed.session.clone();
        let pass = Outcome::of(&flow(None), &passed);
        let fail = Outcome::of(&flow(None), &failed);
        assert_eq!(pass.session_failures(&passed, true), 2);
        assert_eq!(pass.session_failures(&passed, false), 0);
        assert_eq!(fail.session_failures(&failed, true), 0);
        assert!(!fail.fails_by(&finding(SessionFindingKind::Late), true));
        assert!(!finding(SessionFindingKind::Stderr).fails_under(true));
        assert!(finding(SessionFindingKind::UnknownId).fails_under(true));
    }
}
