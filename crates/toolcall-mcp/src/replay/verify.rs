//! `verify`: a step's whole response against the one recorded beside it; a difference fails
//! the step, or (with `--update`) goes into the report for `golden::update_flow` to write.

use serde_json::Value;
use toolcall_score::escape;

use super::golden::{comparable, differences, Update};
use super::run::{Phase, Run};
use super::{Failure, FailureKind};
use crate::Call;

impl Run<'_> {
    /// Checks a `verify` step's response against its recorded one: a difference is the step's
    /// failure, or (with [`crate::Options::update`]) an [`Update`] for the report.
    pub(super) fn verify_step(
        &mut self,
        index: usize,
        call: &Call,
        phase: &Phase,
        response: Option<Value>,
    ) -> Result<(), Failure> {
        let Some(verify) = &call.verify else {
            return Ok(());
        };
        let Some(response) = response else {
            return Ok(());
        };
        let ignore: Vec<&str> = verify
            .ignore_paths
            .iter()
            .chain(&self.options.ignore_paths)
            .map(String::as_str)
            .collect();
        let differences = match &verify.recorded {
            Some(recorded) => {
                let mut out = Vec::new();
                differences(&comparable(recorded), &response, &ignore, "", &mut out);
                if out.is_empty() {
                    return Ok(());
                }
                Some(out)
            }
            None => None,
        };
        if self.options.update {
            self.report.updates.push(Update {
                call: index,
                label: call.label(),
                response,
                differences: differences.unwrap_or_default(),
            });
            return Ok(());
        }
        let flow = escape(&self.flow.path.to_string_lossy()).to_string();
        let message = match differences {
            None => format!(
                "nothing is recorded to verify the response against; to record it: toolcall \
                 replay {flow} --update"
            ),
            Some(differences) => {
                const SHOWN: usize = 3;
                let mut said: Vec<String> = differences
                    .iter()
                    .take(SHOWN)
                    .map(ToString::to_string)
                    .collect();
                if differences.len() > SHOWN {
                    said.push(format!("and {} more", differences.len() - SHOWN));
                }
                format!(
                    "the response differs from the recorded one at {} {}: {}; to accept it: \
                     toolcall replay {flow} --update (or leave a path out with --ignore-path)",
                    differences.len(),
                    if differences.len() == 1 {
                        "place"
                    } else {
                        "places"
                    },
                    said.join("; ")
                )
            }
        };
        Err(phase.fail(FailureKind::Verify, message))
    }
}
