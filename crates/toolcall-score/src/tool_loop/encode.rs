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

    /// The arguments of a call whose answer does not depend on them.
    const EMPTY: crate::Arguments = crate::Arguments::Parsed(serde_json::Value::Null);

    fn two_answers(format: Format) -> Vec<Value> {
        let ok = Ok(json!({"balance": 12}));
        let err = Err("Error: no tool named `nope` exists.".to_owned());
        let asked = crate::Arguments::Parsed(json!({"account_id": "acc_1"}));
        encode(
            format,
            &[
                Answer {
                    id: Some("c1"),
                    name: "get_balance",
                    arguments: &asked,
                    custom: false,
                    builtin: None,
                    output: &ok,
                    text: &text_of(&ok),
                },
                Answer {
                    id: None,
                    name: "nope",
                    arguments: &EMPTY,
                    custom: false,
                    builtin: None,
                    output: &err,
                    text: &text_of(&err),
                },
            ],
        )
    }

    /// Completeness: every registered format has its answers pinned in
    /// `tests/fixtures/answers/<format>.json` (an answer to a known call with an id, and an
    /// error answer to an unknown call without one). A new format fails here until it has them.
    #[test]
    fn every_format_has_its_answers_pinned() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/answers");
        for format in Format::ALL {
            let path = dir.join(format!("{format}.json"));
            let got = Value::Array(two_answers(format));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{}: {e}; {format} answers with:\n{got:#}", path.display())
            });
            let pinned: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(got, pinned, "{}", path.display());
        }
    }

    /// One Responses answer to a call of `builtin`, with `output`.
    fn builtin_answer(builtin: Builtin, output: Result<Value, String>) -> Value {
        let text = text_of(&output);
        let mut items = encode(
            Format::OpenaiResponses,
            &[Answer {
                id: Some("call_1"),
                name: builtin.name(),
                arguments: &EMPTY,
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
