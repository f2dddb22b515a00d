//! The `messages` array, which Anthropic, OpenAI Chat, Bedrock and Ollama requests share.
//!
//! The four differ in their parts, not in the array: Anthropic (and OpenAI content parts) tag each
//! content block with a `type`, Bedrock keys it by kind (`{"toolUse": …}`), OpenAI and Ollama put
//! calls in `tool_calls` and results in `role: "tool"` messages. Without a named format each
//! message (each block) is read by its own shape, so a hand-written case need not say which
//! provider it imitates. With a named format, a shape foreign to it is an error rather than
//! something silently skipped: a case that says `anthropic` but carries OpenAI `tool_calls` would
//! otherwise lose its calls.

use serde_json::Value;

use super::read::Object;
use super::read::{array, get, object, opt_id, opt_string, push_text, string, At, Evidence};
use super::{anthropic, bedrock, gemini, openai_chat};
use crate::errors::ParseError;
use crate::{Format, Message, Role, ToolResult, Transcript};

/// Reads `value` (the `messages` member at `at`) into `transcript`; system and developer messages
/// also add their text to `system`.
pub(super) fn messages_into(
    value: &Value,
    at: &At<'_>,
    format: Option<Format>,
    transcript: &mut Transcript,
    system: &mut Vec<String>,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    let items = array(value, at, "an array of messages")?;
    transcript.messages.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let item = object(item, &at, "a message object")?;
        let gemini_shaped = format.is_none() && item.contains_key("parts");
        let message = if format == Some(Format::Gemini) || gemini_shaped {
            gemini::content(item, &at, evidence)?
        } else {
            message(item, &at, format, evidence)?
        };
        if message.role == Role::System {
            system.extend(message.text.iter().cloned());
        }
        transcript.messages.push(message);
    }
    Ok(())
}

fn message(
    item: &Object,
    at: &At<'_>,
    format: Option<Format>,
    evidence: &mut Evidence,
) -> Result<Message, ParseError> {
    let role = super::read::role(item, at)?;
    let mut message = Message::new(role);
    // A tool message's content is its result, not text the model reads as conversation.
    let is_result = role == Role::Tool;
    let mut result_parts: Vec<&str> = Vec::new();
    let content_at = at.key("content");
    match get(item, "content") {
        None => {}
        Some(Value::String(s)) if is_result => result_parts.push(s),
        Some(Value::String(s)) => push_text(&mut message.text, s),
        Some(Value::Array(blocks)) => {
            for (j, value) in blocks.iter().enumerate() {
                let at = content_at.index(j);
                let block = object(value, &at, "a content block")?;
                if block.contains_key("type") {
                    if format == Some(Format::Bedrock) {
                        return Err(at.unexpected(
                            "a Bedrock content block (`text`, `toolUse`, `toolResult`, …; the \
                             case's format is bedrock)",
                            value,
                        ));
                    }
                    if is_result {
                        if string(block, "type", &at, "a content part type")? == "text" {
                            result_parts.push(string(block, "text", &at, "a string")?);
                        }
                    } else {
                        anthropic::block_into(block, &at, &mut message, evidence)?;
                    }
                } else {
                    // Bedrock's blocks are the untyped ones: only other named formats refuse them.
                    if let Some(format) = format.filter(|f| *f != Format::Bedrock) {
                        return Err(at.unexpected(
                            format!(
                                "a content block with a `type` (the case's format is {format})"
                            ),
                            value,
                        ));
                    }
                    bedrock::block_into(block, &at, &mut message, evidence)?;
                }
            }
        }
        Some(other) => {
            return Err(content_at.unexpected("a string, null or an array of content blocks", other))
        }
    }

    if get(item, "tool_calls").is_some() {
        if let Some(format @ (Format::Anthropic | Format::Bedrock)) = format {
            return Err(at.key("tool_calls").error(
                format!(
                    "no `tool_calls` in a {format} message (the case's format is {format}, \
                     whose calls are content blocks)"
                ),
                "OpenAI-style `tool_calls`",
            ));
        }
        let json_strings = format != Some(Format::Ollama);
        let calls = openai_chat::tool_calls(item, at, json_strings, evidence)?;
        message.calls.extend(calls);
    }
    if let Some(legacy) = openai_chat::legacy_function_call(item, at)? {
        // A transcript is what was sent; a legacy call that duplicates `tool_calls` is not a
        // second call.
        if message.calls.is_empty() {
            message.calls.push(legacy);
        }
    }

    if is_result {
        let call_id = opt_id(item, "tool_call_id", at)?;
        if call_id.is_some() {
            evidence.saw(&[Format::OpenaiChat]);
        }
        let name = match opt_string(item, "tool_name", at)? {
            Some(name) => {
                evidence.saw(&[Format::Ollama]);
                Some(name)
            }
            None => opt_string(item, "name", at)?,
        };
        message.results.push(ToolResult {
            call_id,
            name: name.map(str::to_owned),
            is_error: false,
            content: result_parts.join("\n"),
        });
    }
    Ok(message)
}
