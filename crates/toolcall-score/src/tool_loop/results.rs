//! Answering a response's calls: [`PendingResults`] is the only way to get the [`ToolResults`] to
//! send, and it cannot produce them until every executed call has a result.
//!
//! An unanswered tool call is a 400 on the very next request, so "forgot to answer one" must not
//! be expressible: the loop answers unknown tools and bad arguments itself, the caller supplies
//! exactly one output per call it was asked to execute, and the answers come out in call order.

use std::collections::HashSet;

use serde_json::Value;

use super::encode::{encode, text_of, Answer};
use crate::{Format, ToolCall, ToolResult};

/// What running one tool produced: `Ok` with the result (a JSON string is sent as plain text,
/// anything else as JSON), or `Err` with an error text the model will read, marked as an error
/// the provider's own way.
pub type ToolOutput = Result<Value, String>;

/// How each call of a response is answered.
#[derive(Clone, Debug)]
pub(super) enum Slot {
    /// A defined tool with valid arguments: the caller runs it.
    Execute,
    /// Answered by the loop with this error text.
    Error(String),
}

/// The calls of one response, waiting for the results of the ones the caller must execute.
///
/// Obtain it from [`super::Step::Continue`]; run each call of [`PendingResults::execute`]; then
/// complete it with [`PendingResults::answer_with`] (a closure run once per executed call, in
/// order) or [`PendingResults::answer`] (the outputs collected some other way, e.g. awaited one by
/// one). Either returns the [`ToolResults`] to send.
#[derive(Clone, Debug)]
#[must_use = "every tool call must be answered: complete it with `answer_with` or `answer` and send the results"]
pub struct PendingResults {
    format: Format,
    calls: Vec<ToolCall>,
    slots: Vec<Slot>,
    execute: Vec<usize>,
}

impl PendingResults {
    pub(super) fn new(format: Format, calls: Vec<ToolCall>, slots: Vec<Slot>) -> PendingResults {
        let execute = slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| matches!(slot, Slot::Execute))
            .map(|(i, _)| i)
            .collect();
        PendingResults {
            format,
            calls,
            slots,
            execute,
        }
    }

    /// The calls the caller must run, in order: calls to defined tools whose arguments are JSON
    /// (their [`ToolCall::arguments`] is always [`crate::Arguments::Parsed`]), and calls to
    /// defined OpenAI custom tools ([`crate::Arguments::Text`], the free-text input). Each carries the
    /// catalog's name of its tool: a Responses API call defined only with its `namespace`
    /// prefixed (`billing` + `get_balance`) comes as `billing__get_balance` (or `.`, `/`).
    pub fn execute(&self) -> impl ExactSizeIterator<Item = &ToolCall> + '_ {
        self.execute.iter().map(|&i| &self.calls[i])
    }

    /// Every call of the response, in order, including those the loop answers itself.
    pub fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// The response's format, which the results will be encoded in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Runs `run` once for each call of [`PendingResults::execute`], in order, and returns every
    /// answer. This is the common path: nothing can be left unanswered.
    pub fn answer_with(self, mut run: impl FnMut(&ToolCall) -> ToolOutput) -> ToolResults {
        let outputs: Vec<ToolOutput> = self.execute().map(&mut run).collect();
        self.complete(outputs)
    }

    /// Completes the answers with one output per call of [`PendingResults::execute`], in the same
    /// order. Any other number of outputs is an error, and nothing is sent.
    pub fn answer(
        self,
        outputs: impl IntoIterator<Item = ToolOutput>,
    ) -> Result<ToolResults, AnswerError> {
        let outputs: Vec<ToolOutput> = outputs.into_iter().collect();
        if outputs.len() != self.execute.len() {
            return Err(AnswerError::WrongCount {
                expected: self.execute.len(),
                given: outputs.len(),
            });
        }
        Ok(self.complete(outputs))
    }

    /// Answers every call with the loop's own error texts, and these outputs for the executed
    /// calls (`outputs.len() == self.execute.len()`).
    fn complete(self, outputs: Vec<ToolOutput>) -> ToolResults {
        let mut outputs = outputs.into_iter();
        let answers: Vec<ToolOutput> = self
            .slots
            .into_iter()
            .map(|slot| match slot {
                // `outputs` has exactly one item per `Execute` slot; the fallback is unreachable
                // but keeps this free of panics.
                Slot::Execute => outputs
                    .next()
                    .unwrap_or_else(|| Err("Error: no result was recorded".to_owned())),
                Slot::Error(text) => Err(text),
            })
            .collect();
        ToolResults::new(self.format, &self.calls, &answers)
    }
}

/// Why [`PendingResults::answer`] refused the outputs it was given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// Not one output per executed call.
    #[error("{given} tool output(s) given for {expected} executed call(s): give exactly one per call of `execute()`, in the same order")]
    WrongCount {
        /// How many calls were to be executed.
        expected: usize,
        /// How many outputs were given.
        given: usize,
    },
}

/// The answers to every call of one response, in the provider's own shape, ready to send.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResults {
    format: Format,
    messages: Vec<Value>,
    results: Vec<ToolResult>,
    duplicate_ids: Vec<String>,
}

impl ToolResults {
    pub(super) fn new(format: Format, calls: &[ToolCall], outputs: &[ToolOutput]) -> ToolResults {
        let texts: Vec<String> = outputs.iter().map(text_of).collect();
        let answers: Vec<Answer<'_>> = calls
            .iter()
            .zip(outputs)
            .zip(&texts)
            .map(|((call, output), text)| Answer {
                id: call.id.as_deref(),
                name: &call.name,
                arguments: &call.arguments,
                custom: call.arguments.text().is_some(),
                builtin: call.builtin,
                output,
                text,
            })
            .collect();
        let messages = encode(format, &answers);
        drop(answers);
        let results = calls
            .iter()
            .zip(outputs)
            .zip(texts)
            .map(|((call, output), content)| ToolResult {
                call_id: call.id.clone(),
                name: Some(call.name.clone()),
                is_error: output.is_err(),
                content,
            })
            .collect();
        ToolResults {
            format,
            messages,
            results,
            duplicate_ids: duplicate_ids(calls),
        }
    }

    /// The format the answers are encoded in (the response's).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The messages (OpenAI Responses: input items; call lists: results) to append to the
    /// conversation, in order:
    ///
    /// | format | messages |
    /// |---|---|
    /// | Anthropic | one `user` message of `tool_result` blocks (`tool_use_id`, `is_error: true`) |
    /// | OpenAI Chat | one `{"role":"tool","tool_call_id",…,"content"}` per call; errors as text |
    /// | OpenAI Responses | one `function_call_output` item (`call_id`, `output`) per call, `custom_tool_call_output` for a custom tool call; errors as text. A built-in tool's call takes its own item: `local_shell_call_output`, `shell_call_output` (`{stdout, stderr, outcome}` chunks), `apply_patch_call_output` (`status: "failed"` for an error), `computer_call_output` (the output given must be the screenshot object; text goes as a `function_call_output`) |
    /// | Gemini | one `user` content of `functionResponse` parts (`name`, `id` when the call had one, `response: {output}` or `{error}`) |
    /// | Bedrock | one `user` message of `toolResult` blocks (`toolUseId`, `status: "error"`) |
    /// | Ollama | one `{"role":"tool","tool_name",…,"content"}` per call |
    /// | call list | one MCP-style `{name, id?, content, isError}` per call |
    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// The messages, by value.
    pub fn into_messages(self) -> Vec<Value> {
        self.messages
    }

    /// The messages as one JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(self.messages.clone())
    }

    /// The same answers, provider-neutral: one per call, in call order.
    pub fn results(&self) -> &[ToolResult] {
        &self.results
    }

    /// Ids that more than one call of the response carried, each listed once. Every such call is
    /// still answered in its own place, with the id it carried: answers are never merged, and
    /// whether the provider accepts the repetition is left to the provider.
    pub fn duplicate_ids(&self) -> &[String] {
        &self.duplicate_ids
    }
}

/// The ids carried by more than one call, each once, in the order they repeated. Linear.
pub(super) fn duplicate_ids(calls: &[ToolCall]) -> Vec<String> {
    let mut seen = HashSet::with_capacity(calls.len());
    let mut reported = HashSet::new();
    let mut duplicates = Vec::new();
    for id in calls.iter().filter_map(|c| c.id.as_deref()) {
        if !seen.insert(id) && reported.insert(id) {
            duplicates.push(id.to_owned());
        }
    }
    duplicates
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{AnswerError, PendingResults, Slot};
    use crate::{Format, ToolCall};

    fn pending() -> PendingResults {
        PendingResults::new(
            Format::OpenaiChat,
            vec![
                ToolCall::new(Some("a"), "known", json!({})),
                ToolCall::new(Some("b"), "ghost", json!({})),
                ToolCall::new(Some("a"), "known", json!({"n": 2})),
            ],
            vec![Slot::Execute, Slot::Error("no".into()), Slot::Execute],
        )
    }

    #[test]
    fn answers_come_out_in_call_order() {
        let mut seen = Vec::new();
        let results = pending().answer_with(|call| {
            seen.push(call.arguments.value().cloned());
            Ok(json!(format!("ran {}", seen.len())))
        });
        assert_eq!(seen, [Some(json!({})), Some(json!({"n": 2}))]);
        let contents: Vec<_> = results.results().iter().map(|r| &r.content[..]).collect();
        assert_eq!(contents, ["ran 1", "no", "ran 2"]);
        let errors: Vec<_> = results.results().iter().map(|r| r.is_error).collect();
        assert_eq!(errors, [false, true, false]);
        assert_eq!(results.duplicate_ids(), ["a"]);
        assert_eq!(results.messages().len(), 3);
    }

    #[test]
    fn answer_refuses_the_wrong_number_of_outputs() {
        assert_eq!(
            pending().answer(vec![Ok(json!(1))]),
            Err(AnswerError::WrongCount {
                expected: 2,
                given: 1
            })
        );
        assert_eq!(
            pending()
                .answer(vec![Ok(json!(1)), Ok(json!(2)), Ok(json!(3))])
                .unwrap_err(),
            AnswerError::WrongCount {
                expected: 2,
                given: 3
            }
        );
        let results = pending()
            .answer(vec![Ok(json!(1)), Err("boom".into())])
            .expect("two outputs for two executed calls");
        let errors: Vec<_> = results.results().iter().map(|r| r.is_error).collect();
        assert_eq!(errors, [false, true, true]);
    }
}
