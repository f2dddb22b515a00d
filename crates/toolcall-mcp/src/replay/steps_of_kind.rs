//! The steps that are not tool calls: `prompts/get`, `resources/read`, `completion/complete` and
//! the listings, each sent as the flow writes it and its result read with the checks a tool's
//! result gets.
//!
//! The checks were written for a `tools/call` result, so each other result is read as one: its
//! whole result is the document `expect` pointers address (as `structuredContent` is a tool's),
//! and its content blocks are a prompt's messages' content, or a read resource's contents as
//! embedded `resource` blocks (a text resource also as a `text` block), for `expect_text`,
//! `expect_match` and `expect_content`.

use std::time::Instant;

use serde_json::{json, Value};

use super::checks::{describe, refused, Refusal};
use super::golden::error_response;
use super::run::{Client, OpError, Phase, Run};
use super::{Failure, FailureKind, Step};
use crate::expect::{check_content, check_expectations, check_text, printable_result};
use crate::{Call, CompletionRef, Listing, StepKind};

impl Run<'_> {
    /// One step that is not a tool call: sent, then checked as the flow asks.
    pub(super) async fn step_of_kind(
        &mut self,
        client: &Client,
        index: usize,
        call: &Call,
        phase: &Phase,
    ) -> Result<Step, Failure> {
        let timeout = self.call_timeout;
        // `${steps.…}` references filled in from the results before this step.
        let filled;
        let input = if call.captures.is_empty() {
            &call.input
        } else {
            filled = super::references::fill_in(call, &self.flow.calls, &self.captured)
                .map(|input| match call.kind {
                    // A prompt's arguments are strings: a number filled in is sent as its text.
                    StepKind::Prompt => stringified(input),
                    _ => input,
                })
                .map_err(|message| phase.fail(FailureKind::Capture, message))?;
            &filled
        };
        let started = Instant::now();
        let answer = self
            .guarded(phase, timeout, request(client, call, input))
            .await;
        let elapsed = started.elapsed();
        let result = match (answer, &call.expect_error) {
            (Ok(result), _) => result,
            (Err(failure), Some(wanted)) => match &failure.rpc_error {
                Some((code, message)) => {
                    let refusal = Refusal::Rpc(*code, message);
                    let mut step = refused(phase, call, wanted, &refusal, elapsed)?;
                    step.name = call.label();
                    let response = error_response(*code, message);
                    self.verify_step(index, call, phase, Some(response))?;
                    return Ok(step);
                }
                None => return Err(failure),
            },
            (Err(failure), None) => return Err(failure),
        };
        if let Some(wanted) = &call.expect_error {
            return Err(phase.fail(
                FailureKind::Expectation,
                format!(
                    "expected the call to be refused ({}), but it succeeded: {}",
                    describe(wanted),
                    printable_result(&shown(&call.kind, &result))
                ),
            ));
        }
        let read = as_tool_result(&call.kind, &result);
        check_expectations(&read, &call.expect).map_err(|(message, mismatch)| Failure {
            mismatch: mismatch.map(Box::new),
            ..phase.fail(FailureKind::Expectation, message)
        })?;
        if let Some(wanted) = &call.expect_text {
            check_text(&read, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        if let Some(wanted) = &call.expect_content {
            check_content(&read, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        super::assert::check(&read, &call.assert).map_err(|(message, mismatch)| Failure {
            mismatch: mismatch.map(Box::new),
            ..phase.fail(FailureKind::Expectation, message)
        })?;
        let shown = shown(&call.kind, &result);
        self.verify_step(index, call, phase, Some(json!({ "result": result })))?;
        if let Some(id) = &call.id {
            self.captured.insert(id.clone(), read);
        }
        Ok(Step {
            index: phase.step.unwrap_or_default(),
            name: call.label(),
            elapsed,
            rounds: 1,
            result: shown,
            skipped: None,
            sent: (!call.captures.is_empty()).then(|| self.flow.mask_value(input)),
        })
    }
}

/// An object's members that are not strings, as JSON writes them.
fn stringified(input: Value) -> Value {
    match input {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(key, value)| match value {
                    Value::String(_) => (key, value),
                    other => (key, Value::String(other.to_string())),
                })
                .collect(),
        ),
        other => other,
    }
}

/// Sends the step's request; its result as the wire has it.
async fn request(client: &Client, call: &Call, input: &Value) -> Result<Value, OpError> {
    fn params<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, OpError> {
        serde_json::from_value(value)
            .map_err(|e| OpError::Other(format!("cannot build the request: {e}")))
    }
    fn wire<T: serde::Serialize>(value: &T) -> Result<Value, OpError> {
        serde_json::to_value(value)
            .map_err(|e| OpError::Other(format!("cannot re-read the result: {e}")))
    }
    fn listed<T: serde::Serialize>(listing: Listing, items: &[T]) -> Result<Value, OpError> {
        Ok(json!({ listing.member(): wire(&items)? }))
    }
    match &call.kind {
        StepKind::Prompt => {
            let params = params(json!({"name": call.name, "arguments": input}))?;
            wire(&client.get_prompt(params).await?)
        }
        StepKind::Resource => {
            let params = params(json!({ "uri": call.name }))?;
            wire(&client.read_resource(params).await?)
        }
        StepKind::Complete(completion) => {
            let reference = match &completion.reference {
                CompletionRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
                CompletionRef::Resource(uri) => json!({"type": "ref/resource", "uri": uri}),
            };
            let mut request = json!({
                "ref": reference,
                "argument": {"name": completion.argument, "value": completion.value},
            });
            if !completion.context.is_empty() {
                request["context"] = json!({ "arguments": completion.context });
            }
            wire(&client.complete(params(request)?).await?)
        }
        StepKind::List(listing) => match listing {
            Listing::Prompts => listed(*listing, &client.list_all_prompts().await?),
            Listing::Resources => listed(*listing, &client.list_all_resources().await?),
            Listing::ResourceTemplates => {
                listed(*listing, &client.list_all_resource_templates().await?)
            }
            _ => listed(*listing, &client.list_all_tools().await?),
        },
        // A tool call never comes here (steps.rs sends it with its rounds).
        _ => Err(OpError::Other(format!(
            "{} is not a step of its own kind",
            call.method()
        ))),
    }
}

/// `result` read as a `tools/call` result: itself as the `structuredContent` the pointers
/// address, and its content blocks.
fn as_tool_result(kind: &StepKind, result: &Value) -> Value {
    let items = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let content: Vec<Value> = match kind {
        StepKind::Prompt => items("messages")
            .iter()
            .filter_map(|m| m.get("content").cloned())
            .collect(),
        StepKind::Resource => items("contents")
            .into_iter()
            .flat_map(|c| {
                let text = c.get("text").map(|t| json!({"type": "text", "text": t}));
                text.into_iter()
                    .chain(std::iter::once(json!({"type": "resource", "resource": c})))
            })
            .collect(),
        _ => Vec::new(),
    };
    json!({"structuredContent": result, "content": content})
}

/// What a step's line shows of its result: a prompt's or a resource's first text, a
/// completion's values, a listing's names (or URIs); else the result.
fn shown(kind: &StepKind, result: &Value) -> Value {
    let first_text = |blocks: &Value| {
        blocks
            .get("content")?
            .as_array()?
            .iter()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))?
            .get("text")
            .cloned()
    };
    match kind {
        StepKind::Prompt | StepKind::Resource => {
            first_text(&as_tool_result(kind, result)).unwrap_or_else(|| result.clone())
        }
        StepKind::Complete(_) => result
            .pointer("/completion/values")
            .cloned()
            .unwrap_or_else(|| result.clone()),
        StepKind::List(listing) => {
            let items = result.get(listing.member()).and_then(Value::as_array);
            let names: Option<Vec<Value>> = items.map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.get("name").or_else(|| i.get("uri")).cloned())
                    .collect()
            });
            names.map_or_else(|| result.clone(), Value::Array)
        }
        _ => result.clone(),
    }
}
