//! OpenInference (Arize Phoenix's conventions): spans with `openinference.span.kind`, their
//! messages and catalog flattened into indexed attributes:
//! `llm.input_messages.N.message.{role,content,tool_call_id}`,
//! `llm.input_messages.N.message.tool_calls.M.tool_call.{id,function.name,function.arguments}`,
//! the same under `llm.output_messages`, and `llm.tools.N.tool.json_schema` for the catalog.
//!
//! Phoenix's span exports (its REST API, its JSON and JSON Lines downloads) write the kind beside
//! the attributes (`"span_kind": "LLM"`), often with no `openinference.span.kind` among them,
//! and the attributes in their logical shape: `"llm.input_messages": [{"message.role": …,
//! "message.tool_calls": [{"tool_call.function.name": …}]}]`, or nested objects (`{"llm":
//! {"model_name": …}}`). Such a span is read as its OTLP export would be: the kind from either
//! place, the attributes flattened to the indexed keys.
//!
//! Each `LLM` span is a turn. A `json_schema` of `"{}"` names no tool: a catalog made only of
//! such entries is not a catalog (the turn is not judged), never an empty one. A `TOOL` span
//! whose `tool_call.id` a turn holds is folded into it.

use std::borrow::Cow;

use serde_json::Value;

use toolcall_score::{Message, Role};

use crate::model::{
    assistant, indexed_calls, reply, joined, result, system_message, text_of, tool, user_message,
};
use crate::spans::Span;
use crate::{Catalog, Found, Turn};

use super::{otel_genai, Reads, Source};

/// The source.
pub static SOURCE: Source = Source {
    name: "openinference",
    about: "OpenInference spans (openinference.span.kind, llm.input_messages.N.*, \
            llm.output_messages.N.*, llm.tools.N.tool.json_schema)",
    reads: Reads::Spans { claims, turns },
};

/// OpenInference's span kinds: what a `span_kind` beside the attributes must be to be one (an
/// OTLP kind such as `SPAN_KIND_INTERNAL` is not).
const KINDS: [&str; 11] = [
    "LLM",
    "CHAIN",
    "TOOL",
    "AGENT",
    "RETRIEVER",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
    "UNKNOWN",
];

fn kind(s: &Span) -> Option<String> {
    s.str_attr("openinference.span.kind").or_else(|| {
        s.kind
            .as_deref()
            .filter(|k| KINDS.contains(k))
            .map(str::to_owned)
    })
}

fn claims(spans: &[Span]) -> bool {
    spans.iter().any(|s| kind(s).is_some())
}

fn turns(spans: &[Span], found: &mut Found) {
    let flat: Vec<Cow<Span>> = spans.iter().map(flattened).collect();
    let spans: Vec<&Span> = flat.iter().map(|s| s.as_ref()).collect();
    let mut turns = Vec::new();
    for span in spans.iter().copied().filter(|s| kind(s).as_deref() == Some("LLM")) {
        let place = if span.span_id.is_empty() {
            span.at.clone()
        } else {
            format!("{} (span {})", span.at, span.span_id)
        };
        let (text, calls) = messages(span, "llm.output_messages")
            .into_iter()
            .find(|m| m.role == Role::Assistant)
            .map_or((None, Vec::new()), |m| (joined(&m.text), m.calls));
        let mut turn = Turn::at(
            place.clone(),
            if span.span_id.is_empty() {
                place
            } else {
                span.span_id.clone()
            },
        );
        turn.trace = (!span.trace_id.is_empty()).then(|| span.trace_id.clone());
        turn.model = span.str_attr("llm.model_name");
        turn.name = (!span.name.is_empty()).then(|| span.name.clone());
        turn.window = Turn::window_of(span);
        turn.catalog = catalog(span);
        turn.transcript.messages = messages(span, "llm.input_messages");
        turn.response = reply(text, calls);
        turns.push(turn);
    }
    let turns = otel_genai::fold_duplicates(turns, found);
    for span in spans.iter().copied().filter(|s| kind(s).as_deref() == Some("TOOL")) {
        if span
            .str_attr("tool_call.id")
            .is_some_and(|id| otel_genai::held(&turns, &id))
        {
            found.folded += 1;
        }
    }
    found.turns.extend(turns);
}

/// `span` with its attributes in the indexed keys OTLP exports flatten them to: a list of
/// objects under `llm.input_messages` as `llm.input_messages.N.…`, an object's members as
/// `key.member` (the span itself when nothing needs it).
fn flattened(span: &Span) -> Cow<'_, Span> {
    let nested = |v: &Value| match v {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(Value::is_object),
        _ => false,
    };
    if !span.attributes.values().any(nested) {
        return Cow::Borrowed(span);
    }
    let mut out = span.clone();
    out.attributes.clear();
    for (key, value) in &span.attributes {
        flatten(key, value, &mut out.attributes);
    }
    Cow::Owned(out)
}

/// Attributes whose value is JSON of its own (a schema, a call's arguments, the raw input):
/// an object there is the value, not more attributes.
const JSON_VALUED: [&str; 5] = [
    "json_schema",
    "arguments",
    "parameters",
    "invocation_parameters",
    "value",
];

fn flatten(key: &str, value: &Value, into: &mut std::collections::BTreeMap<String, Value>) {
    let last = key.rsplit('.').next().unwrap_or(key);
    match value {
        // A namespace (`{"llm": {"model_name": …}}`) or a list item (a message, a tool call);
        // an object under a JSON-valued name (`tool.json_schema`) is that attribute's value.
        Value::Object(members) if !JSON_VALUED.contains(&last) => {
            for (k, v) in members {
                flatten(&format!("{key}.{k}"), v, into);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{key}.{i}"), v, into);
            }
        }
        other => {
            into.insert(key.to_owned(), other.clone());
        }
    }
}

fn catalog(span: &Span) -> Catalog {
    let mut tools = Vec::new();
    for i in 0.. {
        let Some(schema) = span.attr(&format!("llm.tools.{i}.tool.json_schema")) else {
            break;
        };
        let schema = crate::model::structured(schema).unwrap_or_else(|_| schema.clone());
        let def = schema.get("function").unwrap_or(&schema);
        if let Some(name) = def.get("name").and_then(Value::as_str) {
            tools.push(tool(
                name,
                def.get("description").and_then(Value::as_str),
                def.get("parameters").cloned(),
            ));
        }
    }
    if tools.is_empty() {
        Catalog::NotRecorded
    } else {
        Catalog::of(tools)
    }
}

/// The messages flattened under `prefix`, in index order (numeric: `10` after `9`).
fn messages(span: &Span, prefix: &str) -> Vec<Message> {
    let by_index = span.indexed(prefix, "message.");
    let mut out = Vec::new();
    for fields in by_index.values() {
        let get = |k: &str| fields.get(k).map(text_of);
        let role = get("role").unwrap_or_default();
        let mut content = get("content");
        if content.is_none() {
            let texts: Vec<String> = (0..)
                .map_while(|k| get(&format!("contents.{k}.message_content.text")))
                .collect();
            content = (!texts.is_empty()).then(|| texts.join("\n\n"));
        }
        let calls = indexed_calls(
            fields,
            |m| format!("tool_calls.{m}.tool_call."),
            "function.name",
            "function.arguments",
        );
        out.push(match role.as_str() {
            "system" => system_message(content.unwrap_or_default()),
            "user" => user_message(content.unwrap_or_default()),
            "tool" => result(get("tool_call_id"), content.unwrap_or_default()),
            _ => assistant(content.filter(|c| !c.is_empty()), calls),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Phoenix's logical attributes and its nested ones read as the indexed keys; a schema
    /// kept as an object stays the schema.
    #[test]
    fn nested_attributes_are_flattened_but_json_values_are_kept() {
        let mut span = Span {
            kind: Some("LLM".into()),
            ..Span::default()
        };
        span.attributes.insert(
            "llm".into(),
            serde_json::json!({"model_name": "m", "tools": [{"tool": {"json_schema":
                {"type": "function", "function": {"name": "get_weather"}}}}]}),
        );
        span.attributes.insert(
            "llm.output_messages".into(),
            serde_json::json!([{"message.role": "assistant", "message.tool_calls": [
                {"tool_call.function.name": "get_weather",
                 "tool_call.function.arguments": {"city": "Paris"}}]}]),
        );
        let flat = flattened(&span);
        assert_eq!(flat.str_attr("llm.model_name").as_deref(), Some("m"));
        assert_eq!(catalog(&flat), Catalog::of([tool("get_weather", None, None)]));
        assert_eq!(
            flat.attr("llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"),
            Some(&serde_json::json!({"city": "Paris"}))
        );
        assert_eq!(kind(&flat).as_deref(), Some("LLM"));
        // An OTLP kind beside the attributes is not an OpenInference one.
        span.kind = Some("SPAN_KIND_INTERNAL".into());
        assert_eq!(kind(&span), None);
    }

    /// Phoenix's spans as `get_spans_dataframe()` lays them out, saved as JSON records: the
    /// real spans of `phoenix_llm_spans_span_kind.jsonl` put in its columns (`context.span_id`,
    /// `attributes.llm.input_messages`, …, the layout phoenix-client's tests assert; absent
    /// columns null) read as those spans do.
    #[test]
    fn a_span_dataframe_saved_as_records_reads_as_its_spans() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let text =
            std::fs::read_to_string(dir.join("openinference/phoenix_llm_spans_span_kind.jsonl"))
                .unwrap();
        let (_, want) = crate::read(&text, "f", None).unwrap();
        let rows: Vec<Value> = text
            .lines()
            .map(|line| {
                let span: Value = serde_json::from_str(line).unwrap();
                let mut row = serde_json::Map::new();
                for key in ["name", "span_kind", "parent_id", "start_time", "end_time"] {
                    row.insert(key.into(), span[key].clone());
                }
                row.insert("context.span_id".into(), span["context"]["span_id"].clone());
                row.insert("context.trace_id".into(), span["context"]["trace_id"].clone());
                for (k, v) in span["attributes"].as_object().unwrap() {
                    row.insert(format!("attributes.{k}"), v.clone());
                }
                row.insert("attributes.retrieval.documents".into(), Value::Null);
                Value::Object(row)
            })
            .collect();
        for text in [
            Value::Array(rows.clone()).to_string(),
            rows.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"),
        ] {
            let (source, found) = crate::read(&text, "f", None).expect("rows are spans");
            assert_eq!(source.name, "openinference");
            assert_eq!(found.turns.len(), want.turns.len());
            for (got, want) in found.turns.iter().zip(&want.turns) {
                assert_eq!((got.calls(), &got.transcript), (want.calls(), &want.transcript));
                assert_eq!(got.window, want.window);
            }
        }
    }

    /// Phoenix keeps tool entries whose schema is `"{}"` (seen in its own data, which is not
    /// under a licence this repository can take): they name no tool, so they are no catalog.
    #[test]
    fn a_schema_that_names_no_tool_is_no_catalog() {
        let mut span = Span::default();
        span.attributes
            .insert("openinference.span.kind".into(), Value::from("LLM"));
        span.attributes
            .insert("llm.tools.0.tool.json_schema".into(), Value::from("{}"));
        assert_eq!(catalog(&span), Catalog::NotRecorded);
        span.attributes.insert(
            "llm.tools.1.tool.json_schema".into(),
            Value::from(r#"{"type": "function", "function": {"name": "get_weather"}}"#),
        );
        assert_eq!(catalog(&span), Catalog::of([tool("get_weather", None, None)]));
    }
}
