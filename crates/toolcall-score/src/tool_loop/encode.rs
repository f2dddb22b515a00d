//! Tool results in each provider's own wire shape.
//!
//! The loop decides *what* to answer; each format's module (its `Wire::answers`) knows how its
//! provider wants it spelled: where the call id goes, how an error is marked, and whether the
//! answers share one message or take one each. Every answer is emitted, in call order, whether
//! or not it has an id. The tests here pin each format's spelling.

use serde_json::Value;

pub(super) use crate::provider::wire::Answer;
use crate::Format;

/// The text form of a result: strings as they are, other JSON as compact JSON text.
pub(super) fn text_of(output: &Result<Value, String>) -> String {
    match output {
        Ok(Value::String(text)) | Err(text) => text.clone(),
        Ok(other) => other.to_string(),
    }
}

/// The messages (or input items) that carry `answers` back to the model, in order, in
/// `format`'s shape (each format's module says how).
pub(super) fn encode(format: Format, answers: &[Answer<'_>]) -> Vec<Value> {
    (format.wire().answers)(answers)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{encode, text_of, Answer};
    use crate::{Builtin, Format};

    fn two_answers(format: Format) -> Vec<Value> {
        let ok = Ok(json!({"balance": 12}));
        let err = Err("Error: no tool named `nope` exists.".to_owned());
        encode(
            format,
            &[
                Answer {
                    id: Some("c1"),
                    name: "get_balance",
                    custom: false,
                    builtin: None,
                    output: &ok,
                    text: &text_of(&ok),
                },
                Answer {
                    id: None,
                    name: "nope",
                    custom: false,
                    builtin: None,
                    output: &err,
                    text: &text_of(&err),
                },
            ],
        )
    }

    #[test]
    fn anthropic_marks_errors_with_is_error() {
        assert_eq!(
            two_answers(Format::Anthropic),
            [json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "{\"balance\":12}"},
                {"type": "tool_result", "content": "Error: no tool named `nope` exists.",
                 "is_error": true}
            ]})]
        );
    }

    #[test]
    fn openai_formats_answer_each_call_in_its_own_item() {
        assert_eq!(
            two_answers(Format::OpenaiChat),
            [
                json!({"role": "tool", "tool_call_id": "c1", "content": "{\"balance\":12}"}),
                json!({"role": "tool", "content": "Error: no tool named `nope` exists."}),
            ]
        );
        assert_eq!(
            two_answers(Format::OpenaiResponses),
            [
                json!({"type": "function_call_output", "call_id": "c1",
                       "output": "{\"balance\":12}"}),
                json!({"type": "function_call_output",
                       "output": "Error: no tool named `nope` exists."}),
            ]
        );
    }

    #[test]
    fn gemini_uses_output_and_error_keys_and_echoes_ids_only_when_present() {
        assert_eq!(
            two_answers(Format::Gemini),
            [json!({"role": "user", "parts": [
                {"functionResponse": {"name": "get_balance", "id": "c1",
                                      "response": {"output": {"balance": 12}}}},
                {"functionResponse": {"name": "nope",
                                      "response": {"error": "Error: no tool named `nope` exists."}}}
            ]})]
        );
    }

    #[test]
    fn bedrock_marks_errors_with_status() {
        assert_eq!(
            two_answers(Format::Bedrock),
            [json!({"role": "user", "content": [
                {"toolResult": {"toolUseId": "c1", "content": [{"json": {"balance": 12}}]}},
                {"toolResult": {"content": [{"text": "Error: no tool named `nope` exists."}],
                                "status": "error"}}
            ]})]
        );
    }

    #[test]
    fn ollama_and_call_lists_answer_by_name() {
        assert_eq!(
            two_answers(Format::Ollama),
            [
                json!({"role": "tool", "tool_name": "get_balance", "content": "{\"balance\":12}"}),
                json!({"role": "tool", "tool_name": "nope",
                       "content": "Error: no tool named `nope` exists."}),
            ]
        );
        assert_eq!(
            two_answers(Format::CallList),
            [
                json!({"name": "get_balance", "id": "c1", "isError": false,
                       "content": [{"type": "text", "text": "{\"balance\":12}"}]}),
                json!({"name": "nope", "isError": true,
                       "content": [{"type": "text", "text": "Error: no tool named `nope` exists."}]}),
            ]
        );
    }

    /// One Responses answer to a call of `builtin`, with `output`.
    fn builtin_answer(builtin: Builtin, output: Result<Value, String>) -> Value {
        let text = text_of(&output);
        let mut items = encode(
            Format::OpenaiResponses,
            &[Answer {
                id: Some("call_1"),
                name: builtin.name(),
                custom: false,
                builtin: Some(builtin),
                output: &output,
                text: &text,
            }],
        );
        assert_eq!(items.len(), 1);
        items.remove(0)
    }

    #[test]
    fn shell_output_chunks_pass_as_they_are_and_errors_go_to_stderr() {
        let chunks = json!([
            {"stdout": "a", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
            {"stdout": "", "stderr": "", "outcome": {"type": "timeout"}}
        ]);
        assert_eq!(
            builtin_answer(Builtin::Shell, Ok(chunks.clone())),
            json!({"type": "shell_call_output", "call_id": "call_1", "output": chunks})
        );
        // An array that is not chunks is output like any other value.
        assert_eq!(
            builtin_answer(Builtin::Shell, Ok(json!(["a", "b"])))["output"],
            json!([{"stdout": "[\"a\",\"b\"]", "stderr": "",
                    "outcome": {"type": "exit", "exit_code": 0}}])
        );
        assert_eq!(
            builtin_answer(Builtin::Shell, Err("Error: denied".to_owned()))["output"],
            json!([{"stdout": "", "stderr": "Error: denied",
                    "outcome": {"type": "exit", "exit_code": 1}}])
        );
    }

    #[test]
    fn local_shell_and_apply_patch_answer_with_text() {
        assert_eq!(
            builtin_answer(Builtin::LocalShell, Ok(json!("ok"))),
            json!({"type": "local_shell_call_output", "call_id": "call_1", "output": "ok"})
        );
        assert_eq!(
            builtin_answer(Builtin::ApplyPatch, Ok(json!("patched"))),
            json!({"type": "apply_patch_call_output", "call_id": "call_1",
                   "status": "completed", "output": "patched"})
        );
    }

    #[test]
    fn a_computer_call_answered_with_text_falls_back_to_a_function_call_output() {
        let screenshot = json!({"type": "computer_screenshot", "file_id": "file_1"});
        assert_eq!(
            builtin_answer(Builtin::Computer, Ok(screenshot.clone())),
            json!({"type": "computer_call_output", "call_id": "call_1", "output": screenshot})
        );
        assert_eq!(
            builtin_answer(Builtin::Computer, Err("Error: no display".to_owned())),
            json!({"type": "function_call_output", "call_id": "call_1",
                   "output": "Error: no display"})
        );
    }
}
