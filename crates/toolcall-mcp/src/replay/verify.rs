//! `verify`: a step's whole response against the one recorded beside it; a difference fails
//! the step, or (with `--update`) goes into the report for `golden::update_flow` to write.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Value};
use toolcall_score::escape;

use super::golden::{comparable, differences, keep_redacted, Update};
use super::run::{Phase, Run};
use super::{Failure, FailureKind};
use crate::{Call, Listing, StepKind};

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
                let recorded = as_live(&call.kind, comparable(recorded));
                differences(&recorded, &response, &ignore, "", &mut out);
                if out.is_empty() {
                    return Ok(());
                }
                Some(out)
            }
            None => None,
        };
        if self.options.update {
            // What was redacted when it was recorded stays so, and the client's `_meta`
            // (`request_meta`, what `mcp serve --match strict` compares) stays beside it.
            let mut response = match &verify.recorded {
                Some(recorded) => keep_redacted(recorded, response),
                None => response,
            };
            if let (Some(meta), Some(out)) = (
                verify.recorded.as_ref().and_then(|r| r.get("request_meta")),
                response.as_object_mut(),
            ) {
                out.insert("request_meta".into(), meta.clone());
            }
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

/// The recorded response read through the model the live one went through: rmcp's types drop
/// the members they do not model and fill in their defaults, so comparing the recorded wire
/// with them would show a difference the server never made. A recorded result none of them
/// reads is compared as written.
fn as_live(kind: &StepKind, recorded: Value) -> Value {
    fn through<T: DeserializeOwned + Serialize>(value: &Value) -> Option<Value> {
        serde_json::to_value(serde_json::from_value::<T>(value.clone()).ok()?).ok()
    }
    fn items<T: DeserializeOwned + Serialize>(listing: Listing, result: &Value) -> Option<Value> {
        let member = listing.member();
        let items = result.get(member)?.as_array()?;
        let read: Option<Vec<Value>> = items.iter().map(through::<T>).collect();
        Some(json!({ member: read? }))
    }
    use rmcp::model as m;
    let Some(result) = recorded.get("result") else {
        return recorded;
    };
    let read = match kind {
        StepKind::Tool => through::<m::CallToolResult>(result),
        StepKind::Prompt => through::<m::GetPromptResult>(result),
        StepKind::Resource => through::<m::ReadResourceResult>(result),
        StepKind::Complete(_) => through::<m::CompleteResult>(result),
        StepKind::List(listing @ Listing::Tools) => items::<m::Tool>(*listing, result),
        StepKind::List(listing @ Listing::Prompts) => items::<m::Prompt>(*listing, result),
        StepKind::List(listing @ Listing::Resources) => items::<m::Resource>(*listing, result),
        StepKind::List(listing @ Listing::ResourceTemplates) => {
            items::<m::ResourceTemplate>(*listing, result)
        }
    };
    match read {
        Some(result) => json!({ "result": result }),
        None => recorded,
    }
}
