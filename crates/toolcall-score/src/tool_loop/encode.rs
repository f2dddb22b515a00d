//! Tool results in each provider's own wire shape.
//!
//! The loop decides *what* to answer; this module only knows how each provider wants it spelled:
//! where the call id goes, how an error is marked, and whether the answers share one message or
//! take one each. Every answer is emitted, in call order, whether or not it has an id.

use serde_json::{json, Map, Value};

use crate::{Builtin, Format};

/// One answer, ready to encode.
pub(super) struct Answer<'a> {
    pub id: Option<&'a str>,
    pub name: &'a str,
    /// Whether it answers an OpenAI custom tool call (free-text input), which the Responses API
    /// answers with its own item type.
    pub custom: bool,
    /// The Responses built-in tool it answers a call of, which takes its own output item type.
    pub builtin: Option<Builtin>,
    pub output: &'a Result<Value, String>,
    /// `text_of(output)`, computed once by the caller.
    pub text: &'a str,
}

/// The text form of a result: strings as they are, other JSON as compact JSON text.
pub(super) fn text_of(output: &Result<Value, String>) -> String {
    match output {
        Ok(Value::String(text)) | Err(text) => text.clone(),
        Ok(other) => other.to_string(),
    }
}

/// The messages (or input items) that carry `answers` back to the model, in order.
pub(super) fn encode(format: Format, answers: &[Answer<'_>]) -> Vec<Value> {
    match format {
        Format::Anthropic => vec![json!({
            "role": "user",
            "content": answers.iter().map(anthropic).collect::<Vec<_>>(),
        })],
        Format::OpenaiChat => answers.iter().map(openai_chat).collect(),
        Format::OpenaiResponses => answers.iter().map(openai_responses).collect(),
        Format::Gemini => vec![json!({
            "role": "user",
            "parts": answers.iter().map(gemini).collect::<Vec<_>>(),
        })],
        Format::Bedrock => vec![json!({
            "role": "user",
            "content": answers.iter().map(bedrock).collect::<Vec<_>>(),
        })],
        Format::Ollama => answers.iter().map(ollama).collect(),
        Format::CallList => answers.iter().map(call_list).collect(),
    }
}

/// An object from key/value pairs, skipping `None` values (optional ids are echoed only when the
/// call carried one).
fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

fn id(answer: &Answer<'_>) -> Option<Value> {
    answer.id.map(Value::from)
}

/// `{"type":"tool_result","tool_use_id":…,"content":…,"is_error":true}`.
fn anthropic(answer: &Answer<'_>) -> Value {
    object([
        ("type", Some("tool_result".into())),
        ("tool_use_id", id(answer)),
        ("content", Some(answer.text.into())),
        (
            "is_error",
            answer.output.is_err().then_some(Value::Bool(true)),
        ),
    ])
}

/// `{"role":"tool","tool_call_id":…,"content":…}`, for function and custom calls alike: Chat
/// Completions has no error flag, the text says it.
fn openai_chat(answer: &Answer<'_>) -> Value {
    object([
        ("role", Some("tool".into())),
        ("tool_call_id", id(answer)),
        ("content", Some(answer.text.into())),
    ])
}

/// `{"type":"function_call_output","call_id":…,"output":…}` (`custom_tool_call_output` for a
/// custom tool call); no error flag either. A built-in tool's call takes its own output item:
/// see [`responses_builtin`].
fn openai_responses(answer: &Answer<'_>) -> Value {
    if let Some(item) = answer.builtin.and_then(|b| responses_builtin(answer, b)) {
        return item;
    }
    let kind = if answer.custom {
        "custom_tool_call_output"
    } else {
        "function_call_output"
    };
    object([
        ("type", Some(kind.into())),
        ("call_id", id(answer)),
        ("output", Some(answer.text.into())),
    ])
}

/// The output item of a Responses built-in tool's call, in the shape of the OpenAI SDK types
/// (`openai-python`, `types/responses/response_input_item_param.py`); `None` when the answer
/// cannot take that shape.
///
/// - `local_shell_call_output`: `call_id`, `output` text. The SDK types key it by `id`; OpenAI's
///   local shell guide and the clients that run it send `call_id`, which is what is sent here.
/// - `shell_call_output`: `call_id`, `output` as chunks of `{stdout, stderr, outcome}`. An output
///   that is already such chunks is sent as is; other output is one chunk on stdout with exit
///   code 0, an error one chunk on stderr with exit code 1.
/// - `apply_patch_call_output`: `call_id`, `status` (`completed`, `failed` for an error),
///   `output` text.
/// - `computer_call_output`: `call_id`, `output` a screenshot (`{"type": "computer_screenshot",
///   "image_url" | "file_id"}`), which must be the output given, as an object. A screenshot has
///   no room for text, so a text answer (an error included) is `None`: it goes as a
///   `function_call_output` on the same `call_id` rather than be dropped.
fn responses_builtin(answer: &Answer<'_>, builtin: Builtin) -> Option<Value> {
    let text = || Some(Value::from(answer.text));
    let kind = || Some(Value::from(format!("{}_output", builtin.call_item())));
    Some(match builtin {
        Builtin::LocalShell => object([
            ("type", kind()),
            ("call_id", id(answer)),
            ("output", text()),
        ]),
        Builtin::Shell => {
            let chunks = match answer.output {
                Ok(Value::Array(chunks)) if chunks.iter().all(|c| c.get("outcome").is_some()) => {
                    Value::Array(chunks.clone())
                }
                Ok(_) => json!([{"stdout": answer.text, "stderr": "",
                                 "outcome": {"type": "exit", "exit_code": 0}}]),
                Err(_) => json!([{"stdout": "", "stderr": answer.text,
                                  "outcome": {"type": "exit", "exit_code": 1}}]),
            };
            object([
                ("type", kind()),
                ("call_id", id(answer)),
                ("output", Some(chunks)),
            ])
        }
        Builtin::ApplyPatch => {
            let status = if answer.output.is_ok() {
                "completed"
            } else {
                "failed"
            };
            object([
                ("type", kind()),
                ("call_id", id(answer)),
                ("status", Some(status.into())),
                ("output", text()),
            ])
        }
        Builtin::Computer => match answer.output {
            Ok(screenshot @ Value::Object(_)) => object([
                ("type", kind()),
                ("call_id", id(answer)),
                ("output", Some(screenshot.clone())),
            ]),
            _ => return None,
        },
    })
}

/// `{"functionResponse":{"name":…,"id":…,"response":{"output":…}|{"error":…}}}`: the keys Gemini
/// documents for a function's output and for its error details.
fn gemini(answer: &Answer<'_>) -> Value {
    let response = match answer.output {
        Ok(value) => json!({ "output": value }),
        Err(text) => json!({ "error": text }),
    };
    json!({
        "functionResponse": object([
            ("name", Some(answer.name.into())),
            ("id", id(answer)),
            ("response", Some(response)),
        ])
    })
}

/// `{"toolResult":{"toolUseId":…,"content":[{"text":…}|{"json":…}],"status":"error"}}`.
fn bedrock(answer: &Answer<'_>) -> Value {
    let content = match answer.output {
        Ok(value @ Value::Object(_)) => json!({ "json": value }),
        _ => json!({ "text": answer.text }),
    };
    json!({
        "toolResult": object([
            ("toolUseId", id(answer)),
            ("content", Some(json!([content]))),
            ("status", answer.output.is_err().then(|| "error".into())),
        ])
    })
}

/// `{"role":"tool","tool_name":…,"content":…}`: Ollama pairs results with calls by name and
/// order, not by id.
fn ollama(answer: &Answer<'_>) -> Value {
    json!({
        "role": "tool",
        "tool_name": answer.name,
        "content": answer.text,
    })
}

/// An MCP-style `CallToolResult` with the call's name (and id, when it had one).
fn call_list(answer: &Answer<'_>) -> Value {
    object([
        ("name", Some(answer.name.into())),
        ("id", id(answer)),
        (
            "content",
            Some(json!([{ "type": "text", "text": answer.text }])),
        ),
        ("isError", Some(answer.output.is_err().into())),
    ])
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
