//! Running a flow's steps: `tools/list` (and the snapshot's drift check), then each call in
//! order, with its `input_required` rounds, its refusal when the flow expects one, and the
//! checks its result must pass.

use std::time::Instant;

use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use toolcall_score::{escape, Catalog, SchemaError, Tool};

use super::checks::{check_output, describe, refused, schema_errors, unknown_tool, Refusal};
use super::run::{Client, Phase, Run};
use super::{Failure, FailureKind, Step};
use crate::expect::{check_content, check_expectations, check_text, printable_result, summarize};
use crate::Call;

/// Rounds of `input_required` one call may take, as rmcp's own helper allows.
pub(super) const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What `tools/list` declared: the tools with their input schemas, and the output schemas of
/// those that declare one.
pub(super) struct Catalogs {
    pub(super) tools: Catalog,
    pub(super) outputs: Catalog,
}

impl Run<'_> {
    pub(super) async fn calls(
        &mut self,
        client: &Client,
        on_step: &mut dyn FnMut(&Step),
    ) -> Result<(), Failure> {
        let started = Instant::now();
        let phase = Phase::new("tools/list");
        let timeout = self.call_timeout;
        let listed = self.guarded(&phase, timeout, client.list_all_tools()).await;
        self.report.list = started.elapsed();
        let listed = listed?;
        self.report.tools = listed.len();
        if let Some(snapshot) = &self.flow.snapshot {
            let live = self.wire_tools(&listed);
            let drift: Vec<String> =
                crate::catalog::diff(&snapshot.catalog, &crate::catalog::snapshot(&live))
                    .iter()
                    .filter(|c| c.severity >= crate::catalog::Severity::Security)
                    .map(ToString::to_string)
                    .collect();
            if !drift.is_empty() {
                let file = escape(&snapshot.path.to_string_lossy()).to_string();
                return Err(phase.fail(
                    FailureKind::CatalogDrift,
                    format!(
                        "the catalog drifted from {file}: {}; to accept it: toolcall mcp diff {} \
                         --snapshot {file} --write",
                        drift.join("; "),
                        escape(&self.flow.path.to_string_lossy())
                    ),
                ));
            }
        }
        // The output schemas as a catalog of their own: a catalog checks a value against each
        // tool's schema, whichever side of the call the schema describes.
        let outputs = Catalog::new(listed.iter().filter_map(|t| {
            let mut tool = Tool::new(&t.name, "");
            tool.input_schema = Some(Value::Object((**t.output_schema.as_ref()?).clone()));
            Some(tool)
        }));
        let catalog = Catalog::new(listed.into_iter().map(|t| {
            let mut tool = Tool::new(&t.name, t.description.as_deref().unwrap_or_default());
            tool.input_schema = Some(Value::Object((*t.input_schema).clone()));
            tool
        }));
        let catalogs = Catalogs {
            tools: catalog,
            outputs,
        };

        // The ids of the steps skipped so far.
        let mut skipped = std::collections::BTreeSet::new();
        for (i, call) in self.flow.calls.iter().enumerate() {
            let phase = Phase {
                step: Some(i + 1),
                label: format!("step {}: {}", i + 1, escape(&call.label())),
            };
            // A skipped call is never sent; it is a step of its own, said to be skipped. So is
            // one that refers to a skipped step's result, which will not be there.
            let after_skipped = call
                .captures
                .iter()
                .flat_map(crate::capture::Capture::steps)
                .find(|id| skipped.contains(*id))
                .map(|id| format!("it refers to step `{}`, which was skipped", escape(id)));
            if let Some(reason) = call.skip.clone().or(after_skipped) {
                if let Some(id) = &call.id {
                    skipped.insert(id.clone());
                }
                let step = Step {
                    index: i + 1,
                    name: call.label(),
                    elapsed: std::time::Duration::ZERO,
                    result: Value::Null,
                    rounds: 0,
                    skipped: Some(self.flow.mask(&reason)),
                    sent: None,
                };
                on_step(&step);
                self.report.steps.push(step);
                continue;
            }
            let started = Instant::now();
            let step = match call.kind {
                crate::StepKind::Tool => self.call(client, &catalogs, call, &phase).await,
                _ => self.step_of_kind(client, i, call, &phase).await,
            };
            self.report.calls += started.elapsed();
            let mut step = step?;
            step.result = self.flow.mask_value(&step.result);
            on_step(&step);
            self.report.steps.push(step);
        }
        Ok(())
    }

    /// One logical call: `tools/call`, and while the server answers `input_required`, the
    /// flow's answers to what it asked, sent back with its `requestState` (MCP 2026-07-28's
    /// multi round-trip requests). Each round has the call timeout.
    pub(super) async fn rounds(
        &mut self,
        client: &Client,
        call: &Call,
        phase: &Phase,
        mut params: CallToolRequestParams,
    ) -> Result<(rmcp::model::CallToolResult, usize), Failure> {
        use rmcp::model::CallToolResponse;
        let timeout = self.call_timeout;
        for round in 1..=MAX_INPUT_ROUNDS {
            let response = self
                .guarded(phase, timeout, client.call_tool_once(params.clone()))
                .await?;
            let asked =
                match response {
                    CallToolResponse::Complete(result) => return Ok((result, round)),
                    CallToolResponse::InputRequired(asked) => asked,
                    CallToolResponse::Task(_) => return Err(phase.fail(
                        FailureKind::Protocol,
                        "the server answered with a task (SEP-2663), which a replay does not poll",
                    )),
                    _ => {
                        return Err(phase.fail(
                            FailureKind::Protocol,
                            "the server answered tools/call with a result of an unknown type",
                        ))
                    }
                };
            let requests = asked.input_requests.unwrap_or_default();
            if requests.is_empty() && asked.request_state.is_none() {
                return Err(phase.fail(
                    FailureKind::Protocol,
                    "the server answered input_required with neither inputRequests nor \
                     requestState",
                ));
            }
            let mut answers = std::collections::BTreeMap::new();
            for (key, request) in requests {
                let request = serde_json::to_value(&request).unwrap_or_default();
                let method = request["method"].as_str().unwrap_or_default();
                let Some(answer) = call
                    .input_responses
                    .get(&key)
                    .or_else(|| call.input_responses.get(method))
                else {
                    let message = request["params"]["message"]
                        .as_str()
                        .map(|m| format!(": \"{}\"", escape(m)))
                        .unwrap_or_default();
                    return Err(phase.fail(
                        FailureKind::InputRequired,
                        format!(
                            "the server asked for input `{}` ({}{message}), which the call's \
                             input_responses do not answer (by that key or by the method)",
                            escape(&key),
                            escape(method)
                        ),
                    ));
                };
                answers.insert(key, answer.clone());
            }
            params.input_responses = (!answers.is_empty()).then_some(answers);
            params.request_state = asked.request_state;
        }
        Err(phase.fail(
            FailureKind::InputRequired,
            format!(
                "the server still asked for input after {MAX_INPUT_ROUNDS} rounds (the flow's \
                 answers do not satisfy it)"
            ),
        ))
    }

    pub(super) async fn call(
        &mut self,
        client: &Client,
        catalogs: &Catalogs,
        call: &Call,
        phase: &Phase,
    ) -> Result<Step, Failure> {
        // `${steps.…}` references filled in from the results before this call.
        let filled;
        let input = if call.captures.is_empty() {
            &call.input
        } else {
            filled = super::references::fill_in(call, &self.flow.calls, &self.captured)
                .map_err(|message| phase.fail(FailureKind::Capture, message))?;
            &filled
        };
        let sent = (!call.captures.is_empty()).then(|| self.flow.mask_value(input));
        self.call_with(client, catalogs, call, phase, input, sent.clone())
            .await
            .map_err(|failure| Failure {
                sent: sent.map(Box::new),
                ..failure
            })
    }

    /// [`Self::call`] with its `input` filled in (and `sent`, the masked copy a report shows).
    async fn call_with(
        &mut self,
        client: &Client,
        catalogs: &Catalogs,
        call: &Call,
        phase: &Phase,
        input: &Value,
        sent: Option<Value>,
    ) -> Result<Step, Failure> {
        let catalog = &catalogs.tools;
        // A call that must be refused may name a tool the server does not list: what the
        // server answers such a call (an agent's namespacing bug, recorded) is the test.
        if !catalog.contains(&call.name) && call.expect_error.is_none() {
            return Err(phase.fail(FailureKind::UnknownTool, unknown_tool(&call.name, catalog)));
        }
        // A call that must be refused is sent as written: the server's refusal is the test.
        if call.expect_error.is_none() {
            match catalog.validate(&call.name, input) {
                Ok(()) => {}
                Err(SchemaError::Violations(errors)) => {
                    return Err(phase.fail(
                        FailureKind::InvalidArguments,
                        format!(
                            "the arguments do not match the tool's inputSchema: {}",
                            schema_errors(&errors)
                        ),
                    ))
                }
                // The server listed a schema nothing can be checked against: its fault, not the
                // call's (which was never sent).
                Err(SchemaError::Uncompilable(why)) => {
                    return Err(phase.fail(
                        FailureKind::Protocol,
                        format!(
                            "the server's inputSchema for `{}` does not compile, so no call can be \
                             checked against it (the server is at fault, not the call): {}",
                            escape(&call.name),
                            escape(&why)
                        ),
                    ))
                }
                // The regex engine gave up on a `pattern`: nothing is known against the call, and
                // the server checks its own input.
                Err(_) => {}
            }
        }
        let mut params = CallToolRequestParams::new(call.name.clone());
        params.arguments = input.as_object().cloned();

        let started = Instant::now();
        let result = self.rounds(client, call, phase, params).await;
        let elapsed = started.elapsed();
        let (result, rounds) = match result {
            Ok((result, rounds)) => (Ok(result), rounds),
            Err(failure) => (Err(failure), 1),
        };
        let result = match (result, &call.expect_error) {
            (Ok(result), _) => result,
            (Err(failure), Some(wanted)) => match &failure.rpc_error {
                Some((code, message)) => {
                    let refusal = Refusal::Rpc(*code, message);
                    let step = refused(phase, call, wanted, &refusal, elapsed)?;
                    let response = super::golden::error_response(*code, message);
                    self.verify_step(index_of(phase), call, phase, Some(response))?;
                    return Ok(step);
                }
                None => return Err(failure),
            },
            (Err(failure), None) => return Err(failure),
        };
        // Work on the wire shape: it is what the flow's pointers are written against.
        let result = serde_json::to_value(&result).map_err(|e| {
            phase.fail(
                FailureKind::Protocol,
                format!("cannot re-read the result: {e}"),
            )
        })?;
        if let Some(wanted) = &call.expect_error {
            let text = first_text(&result).unwrap_or(Value::Null);
            if result.get("isError") == Some(&Value::Bool(true)) {
                let text = text.as_str().unwrap_or_default().to_owned();
                let step = refused(phase, call, wanted, &Refusal::IsError(&text), elapsed)?;
                let response = serde_json::json!({ "result": result.clone() });
                self.verify_step(index_of(phase), call, phase, Some(response))?;
                return Ok(step);
            }
            return Err(phase.fail(
                FailureKind::Expectation,
                format!(
                    "expected the call to be refused ({}), but it succeeded: {}",
                    describe(wanted),
                    printable_result(&result.get("structuredContent").cloned().unwrap_or(text))
                ),
            ));
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(phase.fail(
                FailureKind::ToolError,
                format!(
                    "the tool returned isError: true: {}",
                    printable_result(&first_text(&result).unwrap_or(Value::Null))
                ),
            ));
        }
        check_output(&catalogs.outputs, &call.name, &result)
            .map_err(|message| phase.fail(FailureKind::InvalidOutput, message))?;
        check_expectations(&result, &call.expect).map_err(|(message, mismatch)| Failure {
            mismatch: mismatch.map(Box::new),
            ..phase.fail(FailureKind::Expectation, message)
        })?;
        if let Some(wanted) = &call.expect_text {
            check_text(&result, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        if let Some(wanted) = &call.expect_content {
            check_content(&result, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        super::assert::check(&result, &call.assert).map_err(|(message, mismatch)| Failure {
            mismatch: mismatch.map(Box::new),
            ..phase.fail(FailureKind::Expectation, message)
        })?;
        if call.verify.is_some() {
            let response = serde_json::json!({ "result": result.clone() });
            self.verify_step(index_of(phase), call, phase, Some(response))?;
        }
        if let Some(id) = &call.id {
            self.captured.insert(id.clone(), result.clone());
        }
        Ok(Step {
            index: phase.step.unwrap_or_default(),
            name: call.name.clone(),
            elapsed,
            rounds,
            skipped: None,
            sent,
            // Structured content, else the first text; else what the blocks are (an image's
            // type, MIME type and size, never its data).
            result: result
                .get("structuredContent")
                .cloned()
                .or_else(|| first_text(&result))
                .or_else(|| {
                    let blocks = result.get("content")?.as_array()?;
                    (!blocks.is_empty())
                        .then(|| Value::Array(blocks.iter().map(summarize).collect()))
                })
                .unwrap_or(Value::Null),
        })
    }
}

/// The 0-based index in the flow's calls of the step `phase` is of.
fn index_of(phase: &Phase) -> usize {
    phase.step.unwrap_or_default().saturating_sub(1)
}

pub(super) fn first_text(result: &Value) -> Option<Value> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|c| c.get("text"))
        .cloned()
}
