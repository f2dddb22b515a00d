//! OpenTelemetry's GenAI semantic conventions: model spans and `execute_tool` spans.
//!
//! What a model span says, in every shape instrumentations emit:
//! - the current attributes: `gen_ai.input.messages` and `gen_ai.output.messages` (messages of
//!   `parts`: `text`, `tool_call`, `tool_call_response` — whose result the conventions call both
//!   `response` and `result`), `gen_ai.system_instructions`, `gen_ai.tool.definitions`; each as
//!   structure or as a JSON string;
//! - the legacy flattened attributes still emitted by default by many instrumentations:
//!   `gen_ai.prompt.N.role|content|tool_call_id|tool_calls.M.*`, `gen_ai.completion.N.*`, and
//!   OpenLLMetry's `llm.request.functions.N.name|description|parameters` for the catalog;
//! - the legacy events: `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`, and
//!   the older `gen_ai.content.prompt` / `gen_ai.content.completion` with the messages as JSON.
//!   A choice's `message` may be a message, its content blocks alone or its text, and a
//!   message event's content may be the provider's content blocks as JSON text (Strands writes
//!   Bedrock's `[{"toolUse": …}]`); an `execute_tool` span's events never make it a model turn.
//!
//! The tool definitions are opt-in in the conventions, so many spans have none: such a turn's
//! catalog is [`Catalog::NotRecorded`], never an empty one. An `execute_tool` span whose call id
//! a model span already holds is folded into it; one whose model span was not recorded is a
//! turn of its own, with no catalog, so its call is counted and not judged.
//!
//! The messages are opt-in too: with content capture off (the conventions' default) an
//! inference span (`gen_ai.operation.name` `chat`, `text_completion`, `generate_content`) keeps
//! only its metadata and, maybe, its tool definitions. It is still a turn, unless it only wraps
//! a model span that has the content (Google ADK's `generate_content` around OpenLLMetry's
//! `openai.chat`). Its calls are then known from the `execute_tool` spans alone: an execution
//! no model span holds belongs to the content-less turn of its trace that started last before
//! it, as its parent or its sibling.

use std::collections::HashSet;

use serde_json::Value;
use toolcall_score::{Message, Role, ToolCall};

use crate::model::{structured, arguments_of, assistant, call, chat_calls, indexed_calls, joined, read_message, reply, result, system_message, text_of, tool, user_message};

use crate::spans::Span;
use crate::{Catalog, Found, Turn};

use super::{Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "otel-genai",
    about: "OpenTelemetry spans with GenAI attributes (gen_ai.input.messages, \
            gen_ai.output.messages, gen_ai.prompt.N.*, gen_ai.completion.N.*, execute_tool spans)",
    reads: Reads::Spans { claims, turns },
};

fn claims(spans: &[Span]) -> bool {
    spans
        .iter()
        .any(|s| is_model_span(s) || is_inference_span(s) || is_tool_span(s))
}

/// An inference operation by name, whatever content it records.
fn is_inference_span(s: &Span) -> bool {
    matches!(
        s.str_attr("gen_ai.operation.name").as_deref(),
        Some("chat" | "text_completion" | "generate_content")
    )
}

/// A span that records a model's answer. An `execute_tool` span is never one, whatever events it
/// carries (Strands records the tool's result as a `gen_ai.choice` of it).
fn is_model_span(s: &Span) -> bool {
    if is_tool_span(s) {
        return false;
    }
    s.attr("gen_ai.output.messages").is_some()
        || s.attr("gen_ai.input.messages").is_some()
        || s.has_prefix("gen_ai.completion.")
        || s.has_prefix("gen_ai.prompt.")
        || s.events.iter().any(|e| {
            matches!(
                e.name.as_str(),
                "gen_ai.choice" | "gen_ai.content.completion" | "gen_ai.content.prompt"
            )
        })
}

fn is_tool_span(s: &Span) -> bool {
    s.str_attr("gen_ai.operation.name").as_deref() == Some("execute_tool")
        && s.attr("gen_ai.tool.name").is_some()
}

fn turns(spans: &[Span], found: &mut Found) {
    let mut order: Vec<&Span> = spans.iter().collect();
    // Stable: spans without a start keep the file's order.
    order.sort_by_key(|s| (s.trace_id.clone(), s.start));
    // Content-less inference spans that wrap a model span with content are not turns of their own.
    let wrappers: HashSet<(&str, &str)> = order
        .iter()
        .filter(|s| is_model_span(s))
        .filter_map(|s| Some((s.trace_id.as_str(), s.parent_id.as_deref()?)))
        .collect();
    let blind: Vec<&Span> = order
        .iter()
        .copied()
        .filter(|s| {
            !is_model_span(s)
                && is_inference_span(s)
                && !wrappers.contains(&(s.trace_id.as_str(), s.span_id.as_str()))
        })
        .collect();
    let blind_ids: HashSet<(&str, &str)> = blind
        .iter()
        .map(|s| (s.trace_id.as_str(), s.span_id.as_str()))
        .collect();
    let mut turns: Vec<Turn> = Vec::new();
    for span in order.iter().filter(|s| {
        is_model_span(s) || blind_ids.contains(&(s.trace_id.as_str(), s.span_id.as_str()))
    }) {
        match model_turn(span) {
            Ok(Some(turn)) => turns.push(turn),
            Ok(None) => {}
            Err(why) => found.bad(format!("{} (span {})", span.at, span.span_id), why),
        }
    }
    let turns = fold_duplicates(turns, found);
    let known: HashSet<(String, String)> = turns
        .iter()
        .flat_map(|t| {
            let trace = t.trace.clone().unwrap_or_default();
            t.calls()
                .iter()
                .filter_map(move |c| Some((trace.clone(), c.id.clone()?)))
        })
        .collect();
    let mut all = turns;
    for span in order.iter().filter(|s| is_tool_span(s)) {
        let id = span.str_attr("gen_ai.tool.call.id");
        if let Some(id) = &id {
            if known.contains(&(span.trace_id.clone(), id.clone())) {
                found.folded += 1;
                continue;
            }
        }
        let call = call(
            id.clone(),
            span.str_attr("gen_ai.tool.name").unwrap_or_default(),
            arguments_of(span.attr("gen_ai.tool.call.arguments")),
        );
        // An execution of a turn whose output was not recorded: that turn's call.
        if let Some(turn) = blind_turn(&blind, span).and_then(|model| {
            all.iter_mut().find(|t| {
                t.id == model.span_id && t.trace.as_deref() == Some(model.trace_id.as_str())
            })
        }) {
            turn.response.calls.push(call);
            continue;
        }
        // An execution whose model turn was not recorded: a call with no catalog.
        let mut turn = Turn::at(
            format!("{} (span {})", span.at, span.span_id),
            span.span_id.clone(),
        );
        turn.trace = Some(span.trace_id.clone());
        turn.name = (!span.name.is_empty()).then(|| span.name.clone());
        turn.response = reply(None, vec![call]);
        all.push(turn);
    }
    found.turns.extend(all);
}

/// The content-less inference span an execution belongs to: of its trace, its parent or a
/// sibling, the one that started last, not after it. Only when both starts are recorded.
fn blind_turn<'a>(blind: &[&'a Span], tool: &Span) -> Option<&'a Span> {
    if tool.start == 0 {
        return None;
    }
    blind
        .iter()
        .copied()
        .filter(|m| {
            m.trace_id == tool.trace_id
                && m.start != 0
                && m.start <= tool.start
                && (tool.parent_id.as_deref() == Some(m.span_id.as_str())
                    || (m.parent_id.is_some() && m.parent_id == tool.parent_id))
        })
        .max_by_key(|m| m.start)
}

/// Whether a turn holds the call `id`: an execution record of it folds into that turn.
pub(crate) fn held(turns: &[Turn], id: &str) -> bool {
    turns
        .iter()
        .any(|t| t.calls().iter().any(|c| c.id.as_deref() == Some(id)))
}

/// Two model spans of one trace that hold the same calls are one turn recorded twice (two
/// instrumentations, an outer span repeating its steps): the one that says more (a catalog,
/// then more of the conversation) is kept, and its calls counted once. The same calls are
/// told by their ids; when only one record carries the ids (an OpenInference span beside a
/// GenAI span of the same call, say), by what both record: the calls' names and arguments, in
/// order, at overlapping times.
pub(crate) fn fold_duplicates(turns: Vec<Turn>, found: &mut Found) -> Vec<Turn> {
    let kept = fold_by_id(turns, found);
    fold_without_ids(kept, found)
}

/// The names and arguments of a turn's calls, in order: what two records of one call share
/// whatever ids they carry. Arguments by their value (one record may keep the text the model
/// sent, the other the object), or by their text when it is not JSON.
fn calls_said(t: &Turn) -> String {
    t.calls()
        .iter()
        .map(|c| match c.arguments.value() {
            Some(value) => format!("{}\u{0}{value}", c.name),
            None => format!("{}\u{0}{:?}", c.name, c.arguments),
        })
        .collect::<Vec<_>>()
        .join("\u{1}")
}

/// Whether every call of `t` has an id (`Some(true)`), none has (`Some(false)`), or some have.
fn ids(t: &Turn) -> Option<bool> {
    let with = t.calls().iter().filter(|c| c.id.is_some()).count();
    match with {
        0 => Some(false),
        n if n == t.calls().len() => Some(true),
        _ => None,
    }
}

fn overlap(a: Option<(u64, u64)>, b: Option<(u64, u64)>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.0 <= b.1 && b.0 <= a.1)
}

/// The second pass of [`fold_duplicates`]: one record of a call carries its ids, the other none.
fn fold_without_ids(turns: Vec<Turn>, found: &mut Found) -> Vec<Turn> {
    let mut by_calls: std::collections::HashMap<(Option<String>, String), Vec<usize>> =
        std::collections::HashMap::new();
    let mut kept: Vec<Turn> = Vec::new();
    for turn in turns {
        let (Some(has_ids), false) = (ids(&turn), turn.calls().is_empty()) else {
            kept.push(turn);
            continue;
        };
        let key = (turn.trace.clone(), calls_said(&turn));
        let twin = by_calls.get(&key).and_then(|at| {
            at.iter().copied().find(|&i| {
                ids(&kept[i]) == Some(!has_ids) && overlap(kept[i].window, turn.window)
            })
        });
        match twin {
            Some(i) => {
                found.folded += turn.calls().len();
                let existing = &mut kept[i];
                let better = (turn.catalog.is_recorded(), turn.transcript.messages.len())
                    > (
                        existing.catalog.is_recorded(),
                        existing.transcript.messages.len(),
                    );
                let (mut keep, other) = if better {
                    (turn, std::mem::replace(existing, Turn::at(String::new(), String::new())))
                } else {
                    (std::mem::replace(existing, Turn::at(String::new(), String::new())), turn)
                };
                // The call keeps the id the other record gave it.
                for (call, twin) in keep.response.calls.iter_mut().zip(other.calls()) {
                    if call.id.is_none() {
                        call.id.clone_from(&twin.id);
                    }
                }
                kept[i] = keep;
            }
            None => {
                by_calls.entry(key).or_default().push(kept.len());
                kept.push(turn);
            }
        }
    }
    kept
}

/// The first pass of [`fold_duplicates`]: turns whose calls all carry ids, by those ids.
fn fold_by_id(turns: Vec<Turn>, found: &mut Found) -> Vec<Turn> {
    let key = |t: &Turn| -> Option<(Option<String>, Vec<String>)> {
        let ids: Option<Vec<String>> = t.calls().iter().map(|c| c.id.clone()).collect();
        ids.filter(|ids| !ids.is_empty())
            .map(|ids| (t.trace.clone(), ids))
    };
    // Each kept turn by its key: a file of many traces folds in one pass, not one per pair.
    let mut by_key: std::collections::HashMap<(Option<String>, Vec<String>), usize> =
        std::collections::HashMap::new();
    let mut kept: Vec<Turn> = Vec::new();
    for turn in turns {
        let Some(k) = key(&turn) else {
            kept.push(turn);
            continue;
        };
        match by_key.get(&k) {
            Some(&i) => {
                let existing = &mut kept[i];
                found.folded += turn.calls().len();
                let better = (turn.catalog.is_recorded(), turn.transcript.messages.len())
                    > (
                        existing.catalog.is_recorded(),
                        existing.transcript.messages.len(),
                    );
                if better {
                    *existing = turn;
                }
            }
            None => {
                by_key.insert(k, kept.len());
                kept.push(turn);
            }
        }
    }
    kept
}

pub(crate) fn model_turn(span: &Span) -> Result<Option<Turn>, String> {
    let catalog = catalog(span)?;
    let system = match span.attr("gen_ai.system_instructions") {
        Some(v) => {
            let v = structured(v).map_err(|e| format!("gen_ai.system_instructions {e}"))?;
            Some(parts_text(&v))
        }
        None => None,
    };
    let (mut messages, output) = if span.attr("gen_ai.output.messages").is_some()
        || span.attr("gen_ai.input.messages").is_some()
    {
        let input = match span.attr("gen_ai.input.messages") {
            Some(v) => structured(v).map_err(|e| format!("gen_ai.input.messages {e}"))?,
            None => Value::Array(Vec::new()),
        };
        let output = match span.attr("gen_ai.output.messages") {
            Some(v) => structured(v).map_err(|e| format!("gen_ai.output.messages {e}"))?,
            None => Value::Array(Vec::new()),
        };
        let input = parts_messages(&input, "gen_ai.input.messages")?;
        let output = parts_messages(&output, "gen_ai.output.messages")?;
        (input, output)
    } else if span.has_prefix("gen_ai.completion.") || span.has_prefix("gen_ai.prompt.") {
        (
            flattened(span, "gen_ai.prompt"),
            flattened(span, "gen_ai.completion"),
        )
    } else {
        events(span)?
    };
    // The model's answer: its last assistant message (a choice; the first when there are several).
    let (text, calls) = output
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .map_or((None, Vec::new()), |m| (joined(&m.text), m.calls));
    let leading_system = messages
        .first()
        .filter(|m| m.role == Role::System)
        .map(|m| m.text.join("\n\n"));
    let system = system.or(leading_system.clone());
    if system.is_some() && leading_system.is_some() {
        messages.remove(0);
    }
    let at = if span.span_id.is_empty() {
        span.at.clone()
    } else {
        format!("{} (span {})", span.at, span.span_id)
    };
    let id = if span.span_id.is_empty() {
        at.clone()
    } else {
        span.span_id.clone()
    };
    let mut turn = Turn::at(at, id);
    turn.trace = (!span.trace_id.is_empty()).then(|| span.trace_id.clone());
    turn.model = span
        .str_attr("gen_ai.response.model")
        .or_else(|| span.str_attr("gen_ai.request.model"));
    turn.name = (!span.name.is_empty()).then(|| span.name.clone());
    turn.window = Turn::window_of(span);
    turn.catalog = catalog;
    turn.system = system;
    turn.transcript.messages = messages;
    turn.response = reply(text, calls);
    Ok(Some(turn))
}

/// `gen_ai.tool.definitions`, else OpenLLMetry's `llm.request.functions.N.*`, else not recorded.
pub(crate) fn catalog(span: &Span) -> Result<Catalog, String> {
    if let Some(v) = span.attr("gen_ai.tool.definitions") {
        let v = structured(v).map_err(|e| format!("gen_ai.tool.definitions {e}"))?;
        let Some(items) = v.as_array() else {
            return Err("gen_ai.tool.definitions: expected a list of tool definitions".into());
        };
        let mut tools = Vec::new();
        for item in items {
            // `{"type": "function", "name", "description", "parameters"}`, or Chat's wrapper.
            let def = item.get("function").unwrap_or(item);
            let Some(name) = def.get("name").and_then(Value::as_str) else {
                return Err(format!(
                    "gen_ai.tool.definitions: a definition without a name: {item}"
                ));
            };
            tools.push(tool(
                name,
                def.get("description").and_then(Value::as_str),
                def.get("parameters")
                    .or_else(|| def.get("input_schema"))
                    .map(|p| structured(p).unwrap_or_else(|_| p.clone())),
            ));
        }
        return Ok(Catalog::of(tools));
    }
    let mut tools = Vec::new();
    for i in 0.. {
        let prefix = format!("llm.request.functions.{i}.");
        let Some(name) = span.str_attr(&format!("{prefix}name")) else {
            break;
        };
        tools.push(tool(
            &name,
            span.str_attr(&format!("{prefix}description")).as_deref(),
            span.attr(&format!("{prefix}parameters"))
                .map(|p| structured(p).unwrap_or_else(|_| p.clone())),
        ));
    }
    Ok(if tools.is_empty() {
        Catalog::NotRecorded
    } else {
        Catalog::of(tools)
    })
}

/// The text parts of a `parts` list (or a plain string), joined.
pub(crate) fn parts_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.clone()),
                p if p.get("type").and_then(Value::as_str) == Some("text") => {
                    p.get("content").map(text_of)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        other => text_of(other),
    }
}

/// Messages in the current conventions' shape: `[{"role", "parts": [...]}]`.
pub(crate) fn parts_messages(v: &Value, what: &str) -> Result<Vec<Message>, String> {
    // Some instrumentations (Gemini CLI's) record the one output message bare, not in a list.
    let one;
    let items = match v {
        Value::Array(items) => items,
        Value::Object(_) if v.get("parts").is_some() => {
            one = vec![v.clone()];
            &one
        }
        _ => return Err(format!("{what}: expected a list of messages")),
    };
    let output = what.ends_with("output.messages") || what == "output";
    let mut out = Vec::new();
    for item in items {
        let role = item
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or(if output { "assistant" } else { "" });
        let Some(parts) = item.get("parts").and_then(Value::as_array) else {
            // A message in the older, Chat-like shape.
            out.extend(read_message(item));
            continue;
        };
        // Parts without a `type` are Gemini's (`{"text"}`, `{"functionCall"}`,
        // `{"functionResponse"}`): the message is a Gemini content, which the core reads.
        if parts.iter().all(|p| p.get("type").is_none()) {
            out.extend(read_message(item));
            continue;
        }
        let mut text = Vec::new();
        let mut calls = Vec::new();
        for part in parts {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => text.push(part.get("content").map(text_of).unwrap_or_default()),
                Some("tool_call") => calls.push(call(part.get("id").and_then(Value::as_str).map(str::to_owned), part
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(), arguments_of(part.get("arguments")))),
                Some("tool_call_response") => out.push(result(part.get("id").and_then(Value::as_str).map(str::to_owned), part
                        .get("response")
                        .or_else(|| part.get("result"))
                        .map(text_of)
                        .unwrap_or_default())),
                _ => {}
            }
        }
        let text = (!text.is_empty()).then(|| text.join("\n\n"));
        match role {
            "system" => out.push(system_message(text.unwrap_or_default())),
            "user" => out.push(user_message(text.unwrap_or_default())),
            "assistant" => out.push(assistant(text, calls)),
            // `tool` messages came out as their responses above.
            _ => {}
        }
    }
    Ok(out)
}

/// The legacy flattened messages under `prefix` (`gen_ai.prompt`, `gen_ai.completion`).
fn flattened(span: &Span, prefix: &str) -> Vec<Message> {
    let by_index = span.indexed(prefix, "");
    let mut out = Vec::new();
    let mut from_content = 0;
    for fields in by_index.values() {
        let get = |k: &str| fields.get(k).map(text_of);
        let role = get("role").unwrap_or_else(|| {
            if prefix.ends_with("completion") {
                "assistant".into()
            } else {
                "user".into()
            }
        });
        let content = get("content");
        let mut calls = indexed_calls(fields, |j| format!("tool_calls.{j}."), "name", "arguments");
        // Some instrumentations (JetBrains Koog) write a completion's calls as Chat's
        // `tool_calls` array, in JSON, as its content: one completion index per call.
        if calls.is_empty() && role != "user" && role != "system" {
            if let Some(listed) = content.as_deref().and_then(calls_in_content) {
                calls = listed;
                from_content += 1;
            }
        }
        let content = if from_content > 0 && !calls.is_empty() {
            None
        } else {
            content
        };
        if let Some(name) = get("function_call.name") {
            calls.push(call(
                None,
                name,
                arguments_of(fields.get("function_call.arguments")),
            ));
        }
        out.push(match role.as_str() {
            "system" => system_message(content.unwrap_or_default()),
            "user" => user_message(content.unwrap_or_default()),
            "tool" => result(get("tool_call_id"), content.unwrap_or_default()),
            _ => assistant(content.filter(|c| !c.is_empty()), calls),
        });
    }
    // Those instrumentations write one index per call of a single answer: one message again.
    if from_content > 1 && from_content == out.len() {
        let calls = out.drain(..).flat_map(|m| m.calls).collect();
        out.push(assistant(None, calls));
    }
    out
}

/// A content string that is exactly Chat's `tool_calls` array (`[{"id", "type": "function",
/// "function": {"name", "arguments"}}]`): an instrumentation's record of the calls, not text the
/// model wrote.
fn calls_in_content(content: &str) -> Option<Vec<ToolCall>> {
    let value: Value = serde_json::from_str(content.trim()).ok()?;
    let items = value.as_array()?;
    let structured = !items.is_empty()
        && items.iter().all(|c| {
            c.get("type").and_then(Value::as_str) == Some("function")
                && c.pointer("/function/name").and_then(Value::as_str).is_some()
        });
    structured.then(|| chat_calls(Some(&value)))
}

/// An event's content as the provider's content blocks when it holds them as JSON text (Strands
/// writes Bedrock's `[{"text": …}, {"toolUse": …}]` so), else as it is.
fn blocks(v: &Value) -> Value {
    match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_object) => {
                Value::Array(items)
            }
            _ => v.clone(),
        },
        other => other.clone(),
    }
}

/// The legacy events: per-message events and `gen_ai.choice`, or the older content events with
/// the messages as JSON.
fn events(span: &Span) -> Result<(Vec<Message>, Vec<Message>), String> {
    let mut input = Vec::new();
    let mut output = Vec::new();
    for event in &span.events {
        let body = |key: &str| event.attributes.get(key).cloned();
        match event.name.as_str() {
            "gen_ai.content.prompt" | "gen_ai.content.completion" => {
                let key = if event.name.ends_with("prompt") {
                    "gen_ai.prompt"
                } else {
                    "gen_ai.completion"
                };
                let Some(v) = body(key) else { continue };
                let v = structured(&v).map_err(|e| format!("event {} {e}", event.name))?;
                let messages: Vec<Message> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(read_message)
                    .collect();
                if key == "gen_ai.prompt" {
                    input.extend(messages);
                } else {
                    output.extend(messages);
                }
            }
            "gen_ai.choice" => {
                let message = match body("message").map(|m| structured(&m).unwrap_or(m)) {
                    // A message, its content blocks alone (Strands writes Bedrock's
                    // `[{"text"}, {"toolUse"}]`), or its text.
                    Some(Value::Object(mut m)) => {
                        m.entry("role").or_insert_with(|| Value::from("assistant"));
                        Value::Object(m)
                    }
                    Some(Value::Array(blocks)) => {
                        serde_json::json!({"role": "assistant", "content": blocks})
                    }
                    Some(Value::String(text)) => {
                        serde_json::json!({"role": "assistant", "content": text})
                    }
                    Some(_) => continue,
                    None => {
                        let mut m = serde_json::Map::new();
                        for (k, v) in &event.attributes {
                            m.insert(k.clone(), v.clone());
                        }
                        m.entry("role").or_insert_with(|| Value::from("assistant"));
                        Value::Object(m)
                    }
                };
                output.extend(read_message(&message));
            }
            name if name.starts_with("gen_ai.") && name.ends_with(".message") => {
                let role = name
                    .trim_start_matches("gen_ai.")
                    .trim_end_matches(".message");
                let mut m = serde_json::Map::new();
                for (k, v) in &event.attributes {
                    m.insert(k.clone(), blocks(v));
                }
                m.insert("role".into(), Value::from(role));
                input.extend(read_message(&Value::Object(m)));
            }
            _ => {}
        }
    }
    Ok((input, output))
}

#[cfg(test)]
mod tests {
    //! Shapes no licensed recording was found for (the fixtures' SOURCES.md say where we
    //! looked), written by hand to the conventions' text: the legacy per-message events, the
    //! older content events, names-only definitions, and calls with no catalog recorded.
    use super::*;
    use crate::spans::Event;

    fn span(attributes: Value, events: Vec<Event>) -> Span {
        Span {
            at: "f".into(),
            trace_id: "t".into(),
            span_id: "s".into(),
            attributes: attributes
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            events,
            ..Span::default()
        }
    }

    fn event(name: &str, attributes: Value) -> Event {
        Event {
            name: name.into(),
            attributes: attributes
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
        }
    }

    #[test]
    fn the_legacy_message_events_read_as_a_turn() {
        let s = span(
            serde_json::json!({"gen_ai.tool.definitions": "[{\"type\": \"function\", \"name\": \"get_weather\"}]"}),
            vec![
                event("gen_ai.user.message", serde_json::json!({"content": "weather?"})),
                event(
                    "gen_ai.choice",
                    serde_json::json!({"message": {"tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "get_wether", "arguments": "{}"}}]}}),
                ),
            ],
        );
        assert!(claims(std::slice::from_ref(&s)));
        let turn = model_turn(&s).unwrap().unwrap();
        assert_eq!(turn.transcript.messages, vec![user_message("weather?".into())]);
        assert_eq!(turn.calls()[0].name, "get_wether");
        assert!(turn.catalog.is_names_only(), "{:?}", turn.catalog);
    }

    #[test]
    fn the_older_content_events_carry_the_messages_as_json() {
        let s = span(
            serde_json::json!({}),
            vec![
                event(
                    "gen_ai.content.prompt",
                    serde_json::json!({"gen_ai.prompt": "[{\"role\": \"system\", \"content\": \"be brief\"}, {\"role\": \"user\", \"content\": \"hi\"}]"}),
                ),
                event(
                    "gen_ai.content.completion",
                    serde_json::json!({"gen_ai.completion": "[{\"role\": \"assistant\", \"content\": \"hello\"}]"}),
                ),
            ],
        );
        let turn = model_turn(&s).unwrap().unwrap();
        assert_eq!(turn.system.as_deref(), Some("be brief"));
        assert_eq!(turn.text().as_deref(), Some("hello"));
        assert_eq!(turn.catalog, Catalog::NotRecorded, "no definitions: not an empty catalog");
    }

    #[test]
    fn an_empty_definition_list_is_a_catalog_and_a_missing_one_is_not() {
        let with = |defs: Option<&str>| {
            let mut attrs = serde_json::json!({"gen_ai.output.messages":
                "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"c\", \"name\": \"x\"}]}]"});
            if let Some(d) = defs {
                attrs["gen_ai.tool.definitions"] = Value::from(d);
            }
            model_turn(&span(attrs, Vec::new())).unwrap().unwrap().catalog
        };
        assert_eq!(with(Some("[]")), Catalog::of([]));
        assert_eq!(with(None), Catalog::NotRecorded);
        assert!(catalog(&span(
            serde_json::json!({"gen_ai.tool.definitions": "[{\"type\": \"function\"}]"}),
            Vec::new()
        ))
        .is_err_and(|e| e.contains("a definition without a name")));
    }

    #[test]
    fn a_content_less_inference_span_is_a_turn_and_holds_the_executions_that_follow_it() {
        // Content capture off, as GitHub Copilot CLI records by default: the chat spans keep
        // their (names-only) definitions, the calls are known from the execute_tool spans, which
        // are the chat spans' siblings and start while they are open.
        let at = |id: &str, parent: &str, start: u64, attributes: Value| Span {
            span_id: id.into(),
            parent_id: Some(parent.into()),
            start,
            ..span(attributes, Vec::new())
        };
        let defs = "[{\"type\": \"function\", \"name\": \"bash\"}]";
        let chat = |id: &str, start: u64| {
            at(
                id,
                "agent",
                start,
                serde_json::json!({"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": defs}),
            )
        };
        let tool = |id: &str, start: u64, call: &str| {
            at(
                id,
                "agent",
                start,
                serde_json::json!({"gen_ai.operation.name": "execute_tool",
                                   "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": call}),
            )
        };
        // A wrapper around a span with the content is not a turn of its own (ADK's
        // generate_content around openai.chat).
        let wrapper = at(
            "wrap",
            "agent",
            50,
            serde_json::json!({"gen_ai.operation.name": "generate_content"}),
        );
        let inner = at(
            "inner",
            "wrap",
            51,
            serde_json::json!({"gen_ai.output.messages": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"hi\"}]}]"}),
        );
        let spans = vec![
            tool("t2", 25, "c2"),
            chat("m1", 10),
            tool("t1", 15, "c1"),
            chat("m2", 20),
            chat("m3", 30),
            wrapper,
            inner,
        ];
        assert!(claims(&spans[1..2]));
        let mut found = Found::default();
        turns(&spans, &mut found);
        let by_id = |id: &str| found.turns.iter().find(|t| t.id == id).expect(id);
        assert_eq!(found.turns.len(), 4, "{:?}", found.turns);
        let ids = |id: &str| -> Vec<Option<String>> {
            by_id(id).calls().iter().map(|c| c.id.clone()).collect()
        };
        assert_eq!(ids("m1"), vec![Some("c1".to_owned())]);
        assert_eq!(ids("m2"), vec![Some("c2".to_owned())]);
        assert!(ids("m3").is_empty());
        assert!(by_id("m1").catalog.is_names_only());
        assert_eq!(by_id("inner").text().as_deref(), Some("hi"));
        assert_eq!(found.folded, 0);
    }

    /// Gemini contents in the GenAI attributes (untyped `functionCall` / `functionResponse`
    /// parts) are read by the core's Gemini reader: the call, its arguments, its answer.
    #[test]
    fn gemini_contents_are_read_as_the_core_reads_them() {
        let s = span(
            serde_json::json!({
                "gen_ai.input.messages": r#"[{"role": "user", "parts": [{"text": "weather?"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 3}}}]}]"#,
                "gen_ai.output.messages": r#"[{"role": "model", "parts": [{"functionCall": {"name": "get_wether", "args": {"city": "Bergen"}}}]}]"#,
                "gen_ai.tool.definitions": r#"[{"type": "function", "name": "get_weather"}]"#
            }),
            Vec::new(),
        );
        let turn = model_turn(&s).unwrap().unwrap();
        assert_eq!(turn.calls()[0].name, "get_wether");
        assert_eq!(
            turn.calls()[0].arguments,
            toolcall_score::Arguments::Parsed(serde_json::json!({"city": "Bergen"}))
        );
        let results: Vec<_> = turn.transcript.results().collect();
        assert_eq!(results.len(), 1, "{:?}", turn.transcript);
        assert_eq!(results[0].name.as_deref(), Some("get_weather"));
        let verdict = toolcall_score::score(&turn.case(None).unwrap(), &turn.response);
        let kinds: Vec<_> = verdict.findings().iter().map(|f| f.kind.as_str()).collect();
        assert_eq!(kinds, ["unknown_tool"], "the transcript's call is answered");
    }
}

#[cfg(test)]
mod choices {
    use super::*;
    use crate::spans::Event;

    /// A `gen_ai.choice` whose `message` is not an object (text, content blocks, a number) is
    /// read or passed over, never indexed as an object: reading must not panic.
    #[test]
    fn a_choice_of_any_shape_is_read_without_a_panic() {
        for (message, calls) in [
            (Value::from("plain text"), 0),
            (Value::from(r#"[{"toolUse": {"toolUseId": "c1", "name": "f", "input": {}}}]"#), 1),
            (Value::from(3), 0),
            (Value::from("[1, 2]"), 0),
            (Value::Null, 0),
        ] {
            let span = Span {
                events: vec![Event {
                    name: "gen_ai.choice".into(),
                    attributes: [("message".to_owned(), message.clone())].into_iter().collect(),
                }],
                ..Span::default()
            };
            let (_, output) = events(&span).unwrap();
            let got: usize = output.iter().map(|m| m.calls.len()).sum();
            assert_eq!(got, calls, "{message}");
        }
    }
}

#[cfg(test)]
mod folding {
    //! One call recorded by two instrumentations, its id on one side only. No licensed
    //! recording of this was found (the Langfuse framework traces and OpenInference's fixtures
    //! were searched), so the records are written by hand in each convention's shape.
    use serde_json::{json, Value};

    /// A GenAI span of trace `t1`, running from `start` to `end` (seconds), with `attributes`.
    fn span(id: &str, start: u64, end: u64, attributes: Value) -> Value {
        let attributes: Vec<Value> = attributes
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
            .collect();
        json!({"traceId": "t1", "spanId": id, "name": "chat gpt-4o",
               "startTimeUnixNano": (start * 1_000_000_000).to_string(),
               "endTimeUnixNano": (end * 1_000_000_000).to_string(),
               "attributes": attributes})
    }

    /// The framework's span, with the call's id, and OpenLLMetry's legacy attributes of the
    /// same call, without it.
    fn pair(with_id: (u64, u64), without: (u64, u64), arguments: &str) -> String {
        let current = span(
            "a",
            with_id.0,
            with_id.1,
            json!({"gen_ai.tool.definitions": "[{\"type\": \"function\", \"name\": \"get_weather\"}]",
                   "gen_ai.output.messages": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"call_1\", \"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]}]"}),
        );
        let legacy = span(
            "b",
            without.0,
            without.1,
            json!({"gen_ai.completion.0.role": "assistant",
                   "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                   "gen_ai.completion.0.tool_calls.0.arguments": arguments}),
        );
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [current, legacy]}]}]}).to_string()
    }

    fn read(text: &str) -> crate::Found {
        crate::read(text, "f.json", None).expect("read").1
    }

    #[test]
    fn a_call_recorded_twice_with_its_id_once_is_folded_on_time_name_and_arguments() {
        let found = read(&pair((10, 12), (10, 12), "{\"city\": \"Paris\"}"));
        assert_eq!(found.turns.len(), 1, "{:?}", found.turns);
        assert_eq!(found.folded, 1);
        let call = &found.turns[0].calls()[0];
        assert_eq!((call.name.as_str(), call.id.as_deref()), ("get_weather", Some("call_1")));
        assert!(found.turns[0].catalog.is_recorded(), "the record with the catalog is kept");
        // Arguments written another way are the same arguments.
        let found = read(&pair((10, 12), (11, 13), "{ \"city\" : \"Paris\" }"));
        assert_eq!((found.turns.len(), found.folded), (1, 1));
    }

    #[test]
    fn calls_that_differ_in_time_or_arguments_are_two_calls() {
        // Apart in time: a second call with the same arguments.
        let found = read(&pair((10, 12), (20, 22), "{\"city\": \"Paris\"}"));
        assert_eq!((found.turns.len(), found.folded), (2, 0));
        // Other arguments.
        let found = read(&pair((10, 12), (10, 12), "{\"city\": \"Lyon\"}"));
        assert_eq!((found.turns.len(), found.folded), (2, 0));
        // No times recorded: nothing says they are one call.
        let strip = |text: String| {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            for s in v["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array_mut()
                .unwrap()
            {
                s.as_object_mut().unwrap().remove("endTimeUnixNano");
            }
            v.to_string()
        };
        let found = read(&strip(pair((10, 12), (10, 12), "{\"city\": \"Paris\"}")));
        assert_eq!((found.turns.len(), found.folded), (2, 0));
    }

    /// A Langfuse export holding the OpenInference record of a call (the raw Chat body in
    /// `output`, its id in it, as agno's instrumentation keeps it) and a GenAI one (parts, no
    /// id), as two GENERATION observations, the second inside the first.
    #[test]
    fn an_openinference_and_a_genai_generation_of_one_call_fold_in_a_langfuse_export() {
        let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
                "content": null, "tool_calls": [{"id": "call_V", "type": "function", "function": {
                    "name": "duckduckgo_search", "arguments": "{\"query\":\"trends\"}"}}]}}]});
        let oi = json!({"id": "oi", "traceId": "t1", "type": "GENERATION", "name": "OpenAIChat.invoke",
            "startTime": "2025-06-11T14:01:32.600Z", "endTime": "2025-06-11T14:01:33.560Z",
            "output": body.to_string(),
            "metadata": {"attributes": {
                "openinference.span.kind": "LLM",
                "llm.tools.0.tool.json_schema": "{\"type\": \"function\", \"function\": {\"name\": \"duckduckgo_search\"}}"}}});
        let genai = json!({"id": "ga", "traceId": "t1", "type": "GENERATION", "name": "chat gpt-4o-mini",
            "parentObservationId": "oi",
            "startTime": "2025-06-11T14:01:32.606Z", "endTime": "2025-06-11T14:01:33.559Z",
            "output": [{"role": "assistant", "parts": [{"type": "tool_call", "name": "duckduckgo_search",
                        "arguments": {"query": "trends"}}]}]});
        let export = json!({"trace": {"id": "t1"}, "observations": [oi, genai]}).to_string();
        let (source, found) = crate::read(&export, "t.json", None).expect("read");
        assert_eq!(source.name, "langfuse");
        let calls: Vec<(String, Option<String>)> = found
            .turns
            .iter()
            .flat_map(|t| t.calls().iter().map(|c| (c.name.clone(), c.id.clone())))
            .collect();
        assert_eq!(calls, [("duckduckgo_search".into(), Some("call_V".into()))]);
        assert_eq!(found.folded, 1);
    }
}
