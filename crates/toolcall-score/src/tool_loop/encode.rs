//! Tool results in each provider's own wire shape.
//!
//! The loop decides *what* to answer; this module only knows how each provider wants it spelled:
//! where the call id goes, how an error is marked, and whether the answers share one message or
//! take one each. Every answer is emitted, in call order, whether or not it has an id.

use serde_json::{json, Map, Value};

use crate::Format;

/// One answer, ready to encode.
pub(super) struct Answer<'a> {
    pub id: Option<&'a str>,
    pub name: &'a str,
    /// Whether it answers an OpenAI custom tool call (free-text input), which the Responses API
    /// answers with its own item type.
    pub custom: bool,
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
/// custom tool call); no error flag either.
fn openai_responses(answer: &Answer<'_>) -> Value {
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
    use crate::Format;

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
                    output: &ok,
                    text: &text_of(&ok),
                },
                Answer {
                    id: None,
                    name: "nope",
                    custom: false,
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
}
