//! A response body's format told from its shape (detection over every format's `Wire::fits`),
//! and the body read as its format's: below the stream framing, which reads the body its
//! events fold into, and below `response.rs`, which sends arrays and streams there.

use serde_json::Value;

use super::read::Object;
use super::registry::fitting;
use super::registry::{chunk_array_format, is_event};
use crate::errors::{describe, ParseError};
use crate::{Format, Response};

/// The format of a response, told from the JSON's shape.
///
/// | format | shape |
/// |---|---|
/// | anthropic | `{"type": "message", "content": [...]}` (or `content` with `role: "assistant"` or `stop_reason`) |
/// | openai-chat | `{"object": "chat.completion", "choices": [...]}`, or just `choices` |
/// | openai-responses | `{"object": "response", "output": [...]}`, or `output` as an array |
/// | gemini | `{"candidates": [...]}` |
/// | bedrock | `{"output": {"message": {...}}, "stopReason": ...}` |
/// | ollama | `{"model", "message": {...}, "done": ...}` (`message` and `done` both) |
/// | cohere | `{"id", "message": {...}, "finish_reason": ...}` (`message` and `finish_reason` both) |
/// | call-list | a JSON array (of `{name, input \| arguments}`) |
///
/// Each format's module holds its own predicate (its `Wire::fits`); detection asks them all.
/// A JSON array whose first item is a stream event (a `chat.completion.chunk`, an Anthropic or
/// Responses event, a Gemini chunk, an Ollama chunk) is that format's stream, not a call list.
///
/// A shape that fits none is [`ParseError::UnknownShape`], saying what it saw and which formats
/// it resembles (those whose members it has); one that fits several is
/// [`ParseError::Ambiguous`].
pub fn detect(value: &Value) -> Result<Format, ParseError> {
    let body = match value {
        Value::Array(items) => return Ok(chunk_array_format(items).unwrap_or(Format::CallList)),
        Value::Object(body) => body,
        other => {
            return Err(ParseError::UnknownShape {
                why: format!(
                    "found {} where a response object or a call array was expected",
                    describe(other)
                ),
            })
        }
    };
    fitting(body).map_err(|candidates| {
        if candidates.is_empty() {
            ParseError::UnknownShape {
                why: unknown_why(value, body),
            }
        } else {
            ParseError::Ambiguous { candidates }
        }
    })
}

/// Why a response object fits no format: what it holds, which formats it resembles, and what
/// each format would need.
fn unknown_why(value: &Value, body: &Object) -> String {
    let mut why = format!("found {}", describe(value));
    if let Some(error) = body.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .unwrap_or("");
        why.push_str(&format!(
            ", which looks like an API error body ({}), not a response",
            crate::escape(message)
        ));
    } else if is_event(value) {
        why.push_str(", which looks like one event of a stream: record the assembled response");
    } else {
        let resembles: Vec<String> = Format::ALL
            .into_iter()
            .filter_map(|format| {
                let shared: Vec<&str> = format
                    .wire()
                    .top_keys
                    .iter()
                    .copied()
                    .filter(|key| body.contains_key(*key))
                    .collect();
                (!shared.is_empty()).then(|| format!("{format}'s `{}`", shared.join("`, `")))
            })
            .collect();
        if !resembles.is_empty() {
            why.push_str(&format!(
                "; it has {} but not the rest of that shape",
                resembles.join(" and ")
            ));
        }
    }
    let shapes: Vec<String> = Format::ALL
        .into_iter()
        .map(|format| format!("{} ({format})", format.wire().shape))
        .collect();
    why.push_str(&format!("; a response needs {}", shapes.join(", ")));
    why
}

/// A response body (not a JSON array: see [`super::response::parse_response`]) read as
/// `format`'s, or as the format detected when `format` is `None`. A body that is another
/// format's, named as this one, is a [`ParseError::FormatMismatch`] saying which it is.
pub(crate) fn read_body(value: &Value, format: Option<Format>) -> Result<Response, ParseError> {
    let Some(named) = format else {
        return read_as(value, detect(value)?);
    };
    read_as(value, named).map_err(|error| match detect(value) {
        // The body is another format's: the named one is what is wrong, not the value.
        Ok(detected) if detected != named => ParseError::FormatMismatch {
            named,
            detected,
            error: Box::new(error),
        },
        _ => error,
    })
}

/// The response in `value`, read as `format`'s.
fn read_as(value: &Value, format: Format) -> Result<Response, ParseError> {
    (format.wire().read)(value)
}
