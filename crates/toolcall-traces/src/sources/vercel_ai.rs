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

use crate::model::{arguments_of, text_of};
use crate::spans::Span;
use crate::{Call, Catalog, Found, Message, ToolDef, Turn};

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
    let v = otel_genai::structured(v).unwrap_or_else(|_| v.clone());
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
            Some(Value::Array(items)) => Catalog::Recorded(
                items
                    .iter()
                    .map(|t| otel_genai::structured(t).unwrap_or_else(|_| t.clone()))
                    .filter_map(|t| {
                        Some(ToolDef {
                            name: t.get("name")?.as_str()?.to_owned(),
                            description: t
                                .get("description")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            parameters: t
                                .get("inputSchema")
                                .or_else(|| t.get("parameters"))
                                .cloned(),
                        })
                    })
                    .collect(),
            ),
            _ => Catalog::NotRecorded,
        };
        let calls = match span.attr("ai.response.toolCalls").map(value) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|c| {
                    Some(Call {
                        id: c.get("toolCallId").and_then(Value::as_str).map(str::to_owned),
                        name: c.get("toolName")?.as_str()?.to_owned(),
                        arguments: arguments_of(c.get("input").or_else(|| c.get("args"))),
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        let (system, messages) = prompt(span);
        turns.push(Turn {
            at: place.clone(),
            id: if span.span_id.is_empty() {
                place
            } else {
                span.span_id.clone()
            },
            trace: (!span.trace_id.is_empty()).then(|| span.trace_id.clone()),
            model: span
                .str_attr("ai.response.model")
                .or_else(|| span.str_attr("ai.model.id")),
            name: span
                .str_attr("ai.telemetry.functionId")
                .or_else(|| (!span.name.is_empty()).then(|| span.name.clone())),
            catalog,
            system,
            messages,
            text: span.str_attr("ai.response.text").filter(|t| !t.is_empty()),
            calls,
        });
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
            "system" => out.push(Message::System(text.unwrap_or_default())),
            "user" => out.push(Message::User(text.unwrap_or_default())),
            "assistant" => out.push(Message::Assistant {
                text,
                calls: parts
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool-call"))
                    .map(|p| Call {
                        id: p.get("toolCallId").and_then(Value::as_str).map(str::to_owned),
                        name: p.get("toolName").map(text_of).unwrap_or_default(),
                        arguments: arguments_of(p.get("input").or_else(|| p.get("args"))),
                    })
                    .collect(),
            }),
            "tool" => {
                for p in &parts {
                    out.push(Message::Tool {
                        call_id: p.get("toolCallId").and_then(Value::as_str).map(str::to_owned),
                        content: p
                            .get("output")
                            .or_else(|| p.get("result"))
                            .map(text_of)
                            .unwrap_or_default(),
                    });
                }
            }
            _ => {}
        }
    }
    (system, out)
}
