//! The session check at the end of a stdio replay: what the teed stream noted (`session.rs`),
//! the server's stderr, and a stray stdout line no step was waiting to see, as
//! [`super::Report::session`].

use std::time::{Duration, Instant};

use toolcall_score::escape;

use super::run::Run;
use super::FailureKind;
use crate::child::StdoutFault;
use crate::{SessionFinding, SessionFindingKind};

impl Run<'_> {
    /// Under [`super::Options::strict`], after a call timed out: up to the shutdown grace for
    /// the server to send the answers the replay gave up on, so that they can be named late
    /// rather than lost with the killed server.
    pub(super) async fn await_late_answers(&mut self) {
        let timed_out = self
            .report
            .failure
            .as_ref()
            .is_some_and(|f| f.kind == FailureKind::Timeout);
        let Some(session) = self.session.clone() else {
            return;
        };
        if !self.options.strict || !timed_out || self.child.is_none() {
            return;
        }
        let deadline = Instant::now() + self.options.shutdown_grace;
        while Instant::now() < deadline {
            let waiting = session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .awaits_abandoned();
            if !waiting {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Fills in [`super::Report::session`] once the server is gone.
    pub(super) fn check_session(&mut self) {
        let Some(session) = &self.session else {
            return;
        };
        let mut findings = session.lock().unwrap_or_else(|e| e.into_inner()).findings();
        // A fault a step saw is that step's failure already.
        let seen = self.report.failure.as_ref().is_some_and(|f| {
            matches!(
                f.kind,
                FailureKind::NotJsonRpc | FailureKind::Glued | FailureKind::TooLarge
            )
        });
        let fault = self.faults.as_ref().and_then(|f| f.borrow().clone());
        if let (Some(fault), false) = (fault, seen) {
            let what = match fault {
                StdoutFault::NotJsonRpc(line) => Some(format!("\"{}\"", escape(&line))),
                StdoutFault::GluedBefore(text) | StdoutFault::GluedAfter(text) => {
                    Some(format!("\"{}\" glued to a JSON-RPC message", escape(&text)))
                }
                StdoutFault::TooLong(limit) => Some(format!("a line over {limit} bytes")),
                StdoutFault::Io(_) => None,
            };
            if let Some(what) = what {
                findings.push(SessionFinding {
                    kind: SessionFindingKind::StrayStdout,
                    message: format!(
                        "the server printed {what} to stdout, which is not JSON-RPC, when no \
                         step was waiting (log to stderr instead)"
                    ),
                });
            }
        }
        // What a legacy server wrote while refusing `server/discover` is the probe's doing.
        let shown = self.report.stderr_bytes - self.report.stderr_hidden;
        if shown > 0 {
            let last = self
                .report
                .stderr_tail
                .last()
                .map(|l| format!(" (the last line: \"{}\")", escape(&self.flow.mask(l))))
                .unwrap_or_default();
            findings.push(SessionFinding {
                kind: SessionFindingKind::Stderr,
                message: format!("the server wrote {shown} bytes to stderr{last}"),
            });
        }
        self.report.session = findings
            .into_iter()
            .map(|f| SessionFinding {
                message: self.flow.mask(&f.message),
                ..f
            })
            .collect();
    }
}
