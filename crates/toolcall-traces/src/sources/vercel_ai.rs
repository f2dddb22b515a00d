//! The Vercel AI SDK's telemetry (`experimental_telemetry`): spans named after the operation
//! (`ai.generateText`, `ai.streamText`, and per model call `ai.generateText.doGenerate` /
//! `ai.streamText.doStream`), with `ai.*` attributes.
//!
//! Each `doGenerate` / `doStream` span is a turn — the outer span repeats its steps' calls and
//! is not a model call of its own. Its catalog is `ai.prompt.tools` (one JSON string per tool:
//! `{"type": "function", "name", "description", "inputSchema"}`; absent: not recorded), its
//! conversation `ai.prompt.messages` (content parts `text`, `tool-call`, `tool-result`), its
//! calls `ai.response.toolCalls` (`[{"toolCallId", "toolName", "input" | "args"}]`). An
//! `ai.toolCall` span whose `ai.toolCall.id` a turn holds is folded into it.

use serde_json::Value;
use toolcall_score::{Message};

use crate::model::{arguments_of, reply, assistant, call, result, system_message, text_of, tool, user_message};

use crate::spans::Span;
use crate::{Catalog, Found, Turn};

use super::{otel_genai, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "vercel-ai",
    about: "Vercel AI SDK telemetry spans (ai.generateText.doGenerate / ai.streamText.doStream \
            with ai.prompt.tools, ai.prompt.messages, ai.response.toolCalls)",
    reads: Reads::Spans { claims, turns },
};

fn operation(s: &Span) -> String {
    s.str_attr("ai.operationId").unwrap_or_else(|| s.name.clone())
}

fn is_model_call(s: &Span) -> bool {
    let op = operation(s);
    op.starts_with("ai.") && (op.ends_with(".doGenerate") || op.ends_with(".doStream"))
}

fn claims(spans: &[Span]) -> bool {
    spans.iter().any(|s| {
        s.has_prefix("ai.prompt")
            || s.attr("ai.response.toolCalls").is_some()
            || s.attr("ai.toolCall.name").is_some()
            || (is_model_call(s) && s.attr("ai.model.id").is_some())
    })
}

/// An attribute value: JSON in a string parsed, OTLP's `{"values": [...]}` wrapper (left in
/// some exports) unwrapped.
fn value(v: &Value) -> Value {
    let v = crate::model::structured(v).unwrap_or_else(|_| v.clone());
    match v.get("values").and_then(Value::as_array) {
        Some(items) if v.as_object().is_some_and(|m| m.len() == 1) => Value::Array(
            items
                .iter()
                .map(|i| i.get("stringValue").cloned().unwrap_or_else(|| i.clone()))
                .collect(),
        ),
        _ => v,
    }
}

fn turns(spans: &[Span], found: &mut Found) {
    let mut turns = Vec::new();
    for span in spans.iter().filter(|s| is_model_call(s)) {
        let place = if span.span_id.is_empty() {
            span.at.clone()
        } else {
            format!("{} (span {})", span.at, span.span_id)
        };
        let catalog = match span.attr("ai.prompt.tools").map(value) {
            Some(Value::Array(items)) => Catalog::of(
                items
                    .iter()
                    .map(|t| crate::model::structured(t).unwrap_or_else(|_| t.clone()))
                    .filter_map(|t| {
                        Some(tool(
                            t.get("name")?.as_str()?,
                            t.get("description").and_then(Value::as_str),
                            t.get("inputSchema").or_else(|| t.get("parameters")).cloned(),
                        ))
                    }),
            ),
            _ => Catalog::NotRecorded,
        };
        let calls = match span.attr("ai.response.toolCalls").map(value) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|c| {
                    Some(call(c.get("toolCallId").and_then(Value::as_str).map(str::to_owned), c.get("toolName")?.as_str()?.to_owned(), arguments_of(c.get("input").or_else(|| c.get("args")))))
                })
                .collect(),
            _ => Vec::new(),
        };
        let (system, messages) = prompt(span);
        let mut turn = Turn::at(
            place.clone(),
            if span.span_id.is_empty() {
                place
            } else {
                span.span_id.clone()
            },
        );
        turn.trace = (!span.trace_id.is_empty()).then(|| span.trace_id.clone());
        turn.model = span
            .str_attr("ai.response.model")
            .or_else(|| span.str_attr("ai.model.id"));
        turn.name = span
            .str_attr("ai.telemetry.functionId")
            .or_else(|| (!span.name.is_empty()).then(|| span.name.clone()));
        turn.window = Turn::window_of(span);
        turn.catalog = catalog;
        turn.system = system;
        turn.transcript.messages = messages;
        turn.response = reply(span.str_attr("ai.response.text"), calls);
        turns.push(turn);
    }
    let turns = otel_genai::fold_duplicates(turns, found);
    for span in spans {
        if span
            .str_attr("ai.toolCall.id")
            .is_some_and(|id| otel_genai::held(&turns, &id))
        {
            found.folded += 1;
        }
    }
    found.turns.extend(turns);
}

/// `ai.prompt.messages`: the system prompt and the conversation.
fn prompt(span: &Span) -> (Option<String>, Vec<Message>) {
    let Some(Value::Array(items)) = span.attr("ai.prompt.messages").map(value) else {
        return (None, Vec::new());
    };
    let mut system = None;
    let mut out = Vec::new();
    for m in &items {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let parts: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(parts)) => parts.clone(),
            _ => Vec::new(),
        };
        let texts: Vec<String> = parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").map(text_of))
            .collect();
        let text = (!texts.is_empty()).then(|| texts.join("\n\n"));
        match role {
            "system" if system.is_none() && out.is_empty() => system = text,
            "system" => out.push(system_message(text.unwrap_or_default())),
            "user" => out.push(user_message(text.unwrap_or_default())),
            "assistant" => out.push(assistant(
                text,
                parts
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool-call"))
                    .map(|p| call(p.get("toolCallId").and_then(Value::as_str).map(str::to_owned), p.get("toolName").map(text_of).unwrap_or_default(), arguments_of(p.get("input").or_else(|| p.get("args")))))
                    .collect(),
            )),
            "tool" => {
                for p in &parts {
                    out.push(result(p.get("toolCallId").and_then(Value::as_str).map(str::to_owned), p
                            .get("output")
                            .or_else(|| p.get("result"))
                            .map(text_of)
                            .unwrap_or_default()));
                }
            }
            _ => {}
        }
    }
    (system, out)
}
