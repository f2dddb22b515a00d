//! Spans out of the files people call "OTel traces", whatever container holds them.
//!
//! The span conventions (OpenTelemetry GenAI, OpenInference, the Vercel AI SDK's) are read by
//! their own sources; the containers are read once, here, for all of them:
//!
//! - OTLP JSON, as the collector's file exporter and the SDKs write it:
//!   `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}` (older files say
//!   `instrumentationLibrarySpans`), attributes as `[{"key", "value": {"stringValue": …}}]`;
//! - Grafana Tempo's export: the same under `"batches"`;
//! - Jaeger's JSON (`{"data": [{"traceID", "spans": [{"spanID", "tags": [...], "logs": [...]}]}]}`);
//! - JSON Lines of any of these, or of single spans (OTLP-shaped, the Python SDK's console
//!   exporter shape with `context` and attributes as an object, or the JS SDK's shape with
//!   `startTime` as `[seconds, nanoseconds]`), possibly with the other signals' records between
//!   them (`resourceMetrics` / `resourceLogs`, or `{"type": "metric"}` / `{"type": "log"}`),
//!   which are passed over.
//!
//! Every attribute value comes out as plain JSON (`intValue` strings as numbers, arrays and
//! key-value lists as arrays and objects), so a convention reads `gen_ai.input.messages` the
//! same whether an exporter kept it as a string or as structure.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// One span, as every convention reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    /// Where it is: `file:line` of its JSON Lines line, or the file.
    pub at: String,
    /// Its trace's id.
    pub trace_id: String,
    /// Its id.
    pub span_id: String,
    /// Its parent's id, when it has one.
    pub parent_id: Option<String>,
    /// Its name (`chat gpt-4o`, `execute_tool get_weather`, `ai.generateText.doGenerate`).
    pub name: String,
    /// Its start, in nanoseconds since the epoch, when recorded (0 otherwise): turns are ordered
    /// by it.
    pub start: u64,
    /// Its attributes, flattened to JSON values.
    pub attributes: BTreeMap<String, Value>,
    /// Its events (and Jaeger's logs), in order.
    pub events: Vec<Event>,
}

/// A span event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event {
    /// Its name (`gen_ai.user.message`, `gen_ai.choice`).
    pub name: String,
    /// Its attributes.
    pub attributes: BTreeMap<String, Value>,
}

impl Span {
    /// The attributes flattened as `prefix.N.field`, grouped by `N` in numeric order (`10`
    /// after `9`), each group keyed by `field` with `strip` taken off its front when present:
    /// how OpenInference and the legacy GenAI conventions flatten a list of messages.
    pub(crate) fn indexed(
        &self,
        prefix: &str,
        strip: &str,
    ) -> BTreeMap<usize, BTreeMap<String, Value>> {
        let start = format!("{prefix}.");
        let mut by_index: BTreeMap<usize, BTreeMap<String, Value>> = BTreeMap::new();
        for (key, value) in self.attributes.range(start.clone()..) {
            let Some(rest) = key.strip_prefix(&start) else {
                break;
            };
            let Some((index, field)) = rest.split_once('.') else {
                continue;
            };
            let field = field.strip_prefix(strip).unwrap_or(field);
            if let Ok(index) = index.parse::<usize>() {
                by_index
                    .entry(index)
                    .or_default()
                    .insert(field.to_owned(), value.clone());
            }
        }
        by_index
    }

    /// An attribute's value.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    /// An attribute as a string (numbers written out).
    pub fn str_attr(&self, key: &str) -> Option<String> {
        match self.attributes.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Whether any attribute key starts with `prefix`.
    pub fn has_prefix(&self, prefix: &str) -> bool {
        self.attributes
            .range(prefix.to_owned()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix))
    }
}

/// The spans of a file's content: `Some` when it is one of the containers (possibly with no
/// span), `None` when it is not spans at all. `path` is used for `at`.
pub fn decode(text: &str, path: &str) -> Option<Vec<Span>> {
    let trimmed = text.trim_start_matches('\u{feff}');
    if let Ok(doc) = serde_json::from_str::<Value>(trimmed) {
        let mut spans = Vec::new();
        return container(&doc, path, &mut spans).then_some(spans);
    }
    // JSON Lines: every non-blank line must be a container, a span, or another signal's record
    // (exporters that write every signal to one file), and one at least must hold spans.
    let mut spans = Vec::new();
    let mut any = false;
    for (i, line) in trimmed.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{path}:{}", i + 1);
        let value: Value = serde_json::from_str(line).ok()?;
        if other_signal(&value) {
            continue;
        }
        if !container(&value, &at, &mut spans) {
            return None;
        }
        any = true;
    }
    any.then_some(spans)
}

/// Reads `doc` into `spans` when it is a container or a single span.
pub(crate) fn container(doc: &Value, at: &str, spans: &mut Vec<Span>) -> bool {
    if let Some(resources) = doc
        .get("resourceSpans")
        .or_else(|| doc.get("batches"))
        .and_then(Value::as_array)
    {
        for resource in resources {
            let scopes = resource
                .get("scopeSpans")
                .or_else(|| resource.get("instrumentationLibrarySpans"))
                .and_then(Value::as_array);
            for scope in scopes.into_iter().flatten() {
                for span in scope
                    .get("spans")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    spans.push(otlp_span(span, at));
                }
            }
        }
        return true;
    }
    if let Some(traces) = doc.get("data").and_then(Value::as_array) {
        if traces.iter().all(|t| t.get("spans").is_some()) && !traces.is_empty() {
            for trace in traces {
                for span in trace
                    .get("spans")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    spans.push(jaeger_span(span, at));
                }
            }
            return true;
        }
    }
    if let Some(items) = doc.as_array() {
        // A list of spans (some tools save `[span, span, …]`).
        if !items.is_empty() && items.iter().all(is_single_span) {
            spans.extend(items.iter().map(|s| single_span(s, at)));
            return true;
        }
        return false;
    }
    if is_single_span(doc) {
        spans.push(single_span(doc, at));
        return true;
    }
    // One span's attributes alone, as converters' tests keep them (an OpenInference span
    // kind among the keys), or LangWatch's `{"spanName", "attributes": {…}}`.
    if let Some(map) = doc.as_object() {
        if map.contains_key("openinference.span.kind") {
            spans.push(Span {
                at: at.to_owned(),
                attributes: map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                ..Span::default()
            });
            return true;
        }
        if map.contains_key("spanName") && map.get("attributes").is_some_and(Value::is_object) {
            let mut span = console_span(doc, at);
            span.name = string(map.get("spanName"));
            spans.push(span);
            return true;
        }
    }
    false
}

/// A record of another signal than traces: the collector's `{"resourceMetrics"}` or
/// `{"resourceLogs"}`, or a JS file exporter's `{"type": "metric"}` / `{"type": "log"}`.
pub(crate) fn other_signal(v: &Value) -> bool {
    v.get("resourceMetrics").is_some()
        || v.get("resourceLogs").is_some()
        || matches!(
            v.get("type").and_then(Value::as_str),
            Some("metric" | "log")
        )
}

fn is_single_span(v: &Value) -> bool {
    let has_id = v.get("spanId").is_some()
        || v.get("spanID").is_some()
        || v.get("span_id").is_some()
        || v.pointer("/context/span_id").is_some();
    has_id && (v.get("attributes").is_some() || v.get("tags").is_some())
}

fn single_span(v: &Value, at: &str) -> Span {
    if v.get("tags").is_some() {
        return jaeger_span(v, at);
    }
    match v.get("attributes") {
        Some(Value::Object(_)) => console_span(v, at),
        _ => otlp_span(v, at),
    }
}

fn string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn nanos(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// A span's start: OTLP's `startTimeUnixNano`, else the JS SDK's `startTime` as
/// `[seconds, nanoseconds]` (its `HrTime`).
fn start(v: &Value) -> u64 {
    if let Some(t) = v.get("startTimeUnixNano") {
        return nanos(Some(t));
    }
    match v
        .get("startTime")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([secs, ns]) => secs
            .as_u64()
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(ns.as_u64().unwrap_or(0)),
        _ => 0,
    }
}

fn otlp_span(v: &Value, at: &str) -> Span {
    let parent = string(v.get("parentSpanId"));
    Span {
        at: at.to_owned(),
        trace_id: string(v.get("traceId")),
        span_id: string(v.get("spanId")),
        parent_id: (!parent.is_empty()).then_some(parent),
        name: string(v.get("name")),
        start: start(v),
        attributes: otlp_attributes(v.get("attributes")),
        events: events(v, otlp_attributes),
    }
}

/// A span's `events`, each `{"name", "attributes"}` with its attributes read by `attributes`.
fn events(v: &Value, attributes: impl Fn(Option<&Value>) -> BTreeMap<String, Value>) -> Vec<Event> {
    v.get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| Event {
            name: string(e.get("name")),
            attributes: attributes(e.get("attributes")),
        })
        .collect()
}

/// `[{"key", "value": AnyValue}]` as a map of plain values.
fn otlp_attributes(v: Option<&Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for kv in v.and_then(Value::as_array).into_iter().flatten() {
        if let Some(key) = kv.get("key").and_then(Value::as_str) {
            out.insert(
                key.to_owned(),
                any_value(kv.get("value").unwrap_or(&Value::Null)),
            );
        }
    }
    out
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(map) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = map.get("stringValue") {
        return s.clone();
    }
    if let Some(b) = map.get("boolValue") {
        return b.clone();
    }
    if let Some(i) = map.get("intValue") {
        return match i {
            Value::String(s) => s
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| i.clone()),
            other => other.clone(),
        };
    }
    if let Some(d) = map.get("doubleValue") {
        return d.clone();
    }
    if let Some(a) = map.get("arrayValue") {
        return Value::Array(
            a.get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(any_value)
                .collect(),
        );
    }
    if let Some(kv) = map.get("kvlistValue") {
        let mut out = Map::new();
        for item in kv
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(key) = item.get("key").and_then(Value::as_str) {
                out.insert(
                    key.to_owned(),
                    any_value(item.get("value").unwrap_or(&Value::Null)),
                );
            }
        }
        return Value::Object(out);
    }
    if let Some(b) = map.get("bytesValue") {
        return b.clone();
    }
    if map.is_empty() {
        return Value::Null;
    }
    v.clone()
}

fn jaeger_span(v: &Value, at: &str) -> Span {
    let parent = v
        .get("references")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|r| r.get("refType").and_then(Value::as_str) == Some("CHILD_OF"))
        .map(|r| string(r.get("spanID")))
        .or_else(|| {
            v.get("parentSpanID")
                .map(|p| string(Some(p)))
                .filter(|p| !p.is_empty())
        });
    Span {
        at: at.to_owned(),
        trace_id: string(v.get("traceID")),
        span_id: string(v.get("spanID")),
        parent_id: parent,
        name: string(v.get("operationName")),
        // Jaeger's times are microseconds.
        start: nanos(v.get("startTime")).saturating_mul(1000),
        attributes: jaeger_tags(v.get("tags")),
        events: v
            .get("logs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|log| {
                let attributes = jaeger_tags(log.get("fields"));
                Event {
                    name: attributes
                        .get("event")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    attributes,
                }
            })
            .collect(),
    }
}

/// Jaeger's `[{"key", "type", "value"}]`.
fn jaeger_tags(v: Option<&Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for tag in v.and_then(Value::as_array).into_iter().flatten() {
        if let Some(key) = tag.get("key").and_then(Value::as_str) {
            out.insert(
                key.to_owned(),
                tag.get("value").cloned().unwrap_or(Value::Null),
            );
        }
    }
    out
}

/// The Python SDK's console exporter: `{"name", "context": {"trace_id", "span_id"},
/// "parent_id", "attributes": {…}, "events": [{"name", "attributes": {…}}]}`.
fn console_span(v: &Value, at: &str) -> Span {
    let object = |v: Option<&Value>| -> BTreeMap<String, Value> {
        v.and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let id = |key: &str, flat: &str| {
        let s = string(
            v.pointer(&format!("/context/{key}"))
                .or_else(|| v.get(flat)),
        );
        s.strip_prefix("0x").map(str::to_owned).unwrap_or(s)
    };
    let parent = string(v.get("parent_id").or_else(|| v.get("parentSpanId")));
    Span {
        at: at.to_owned(),
        trace_id: id("trace_id", "traceId"),
        span_id: id("span_id", "spanId"),
        parent_id: (!parent.is_empty()).then(|| parent.trim_start_matches("0x").to_owned()),
        name: string(v.get("name")),
        start: start(v),
        attributes: object(v.get("attributes")),
        events: events(v, object),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_attribute_map_alone_is_one_span() {
        let map = serde_json::json!({"openinference.span.kind": "LLM", "llm.model_name": "m"});
        let spans = decode(&map.to_string(), "f").expect("a span");
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].str_attr("llm.model_name").as_deref(), Some("m"));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn every_container_gives_the_same_span() {
        let otlp = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
            "traceId": "t1", "spanId": "s1", "name": "chat",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "n", "value": {"intValue": "3"}},
                {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}
            ]
        }]}]}]});
        let tempo = json!({"batches": otlp["resourceSpans"].clone()});
        let jaeger = json!({"data": [{"traceID": "t1", "spans": [{
            "traceID": "t1", "spanID": "s1", "operationName": "chat",
            "tags": [
                {"key": "gen_ai.operation.name", "type": "string", "value": "chat"},
                {"key": "n", "type": "int64", "value": 3},
                {"key": "list", "type": "string", "value": ["a"]}
            ]
        }]}]});
        let read = |v: &Value| decode(&v.to_string(), "f").expect("spans");
        let (a, b, c) = (read(&otlp), read(&tempo), read(&jaeger));
        assert_eq!(a.len(), 1);
        assert_eq!(a, b);
        assert_eq!(a[0].attributes, c[0].attributes);
        assert_eq!(a[0].attr("n"), Some(&json!(3)));
        assert_eq!(
            (c[0].trace_id.as_str(), c[0].span_id.as_str()),
            ("t1", "s1")
        );
    }

    #[test]
    fn json_lines_of_spans_name_their_line_and_other_json_is_not_spans() {
        let line = json!({"name": "x", "context": {"trace_id": "0xab", "span_id": "0xcd"},
                          "attributes": {"k": "v"}});
        let spans = decode(&format!("\n{line}\n{line}\n"), "f.jsonl").expect("spans");
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[1].at, "f.jsonl:3");
        assert_eq!(spans[0].span_id, "cd");
        assert_eq!(decode(r#"{"messages": []}"#, "f"), None);
        assert_eq!(decode("{\"a\":1}\nnot json", "f"), None);
    }

    #[test]
    fn other_signals_between_the_spans_are_passed_over_and_hr_times_read() {
        // The JS SDK's span shape, as GitHub Copilot CLI's file exporter writes it, with its
        // metrics in the same file; and the collector's file exporter, all signals in one file.
        let span = json!({"type": "span", "traceId": "t", "spanId": "s", "name": "chat m",
                          "startTime": [1785772223, 288000000], "attributes": {"k": "v"}});
        let metric = json!({"type": "metric", "name": "gen_ai.client.token.usage"});
        let spans = decode(&format!("{metric}\n{span}\n{metric}\n"), "f.jsonl").expect("spans");
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].at, "f.jsonl:2");
        assert_eq!(spans[0].start, 1_785_772_223_288_000_000);
        let otlp = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t",
                          "spanId": "s", "attributes": []}]}]}]});
        let metrics = json!({"resourceMetrics": []});
        let logs = json!({"resourceLogs": []});
        let mixed = format!("{metrics}\n{otlp}\n{logs}\n");
        assert_eq!(decode(&mixed, "f.jsonl").map(|s| s.len()), Some(1));
        // Other signals alone are not spans.
        assert_eq!(decode(&format!("{metric}\n{metric}\n"), "f.jsonl"), None);
    }
}
