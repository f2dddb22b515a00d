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
//! - a JSON array of export bodies, and a list of spans under `spans` or `data` (a span API's
//!   page, Phoenix's `{"data": [...], "next_cursor"}`);
//! - Phoenix's spans: the console shape with `span_kind` beside the attributes and RFC 3339
//!   times, or a row of its span dataframe saved as JSON (`context.span_id` and `attributes.*`
//!   columns);
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
    /// Its end, in nanoseconds since the epoch, when recorded (0 otherwise).
    pub end: u64,
    /// The kind its exporter wrote beside the attributes, when a string: Phoenix's span exports
    /// keep the OpenInference kind there (`"span_kind": "LLM"`), not among the attributes.
    pub kind: Option<String>,
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
    if let Some(spans) = document::otlp(trimmed, path) {
        return Some(spans);
    }
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

/// Whether `text` is one JSON value, as reading a `Value` would decide, without building it: a
/// one-line document of tens of megabytes is looked at before it is read.
pub(crate) use toolcall_score::is_json;

/// An OTLP JSON document read a span at a time.
///
/// A collector's file export, or an SDK's, can be tens of megabytes in one document, nearly all
/// of it spans. Read whole as a `Value`, with the spans made from it beside it, it took about
/// 26 times its size (59 MB → 1.55 GB; the same spans as JSON Lines, 8 times). Here the
/// document is walked with serde's visitors: `resourceSpans` (or `batches`), each resource's
/// `scopeSpans` (or `instrumentationLibrarySpans`), each scope's `spans`, and only one span is
/// a `Value` at a time, made into its [`Span`] and dropped; everything else is skipped
/// unread. What it finds is what [`container`] finds in the same document read whole (the
/// tests and the fuzz tier hold the two equal): a member that is not an array holds no spans,
/// the later of two members with one name wins, as serde_json's `Map` keeps it, and a text
/// that is not one JSON object with an OTLP member is left to the whole reading.
mod document {
    use std::fmt;

    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize;
    use serde_json::Value;

    use super::{otlp_span, Span};

    /// The spans of `text` when it is one JSON object whose `resourceSpans` (or, without it,
    /// `batches`) is an array; `None` otherwise.
    pub(super) fn otlp(text: &str, at: &str) -> Option<Vec<Span>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let spans = de.deserialize_map(Document(at)).ok()??;
        de.end().ok()?;
        Some(spans)
    }

    /// A level of the document that holds spans: it adds those it holds to `spans`.
    trait Level: Copy {
        fn read<'de, D: Deserializer<'de>>(
            self,
            de: D,
            spans: &mut Vec<Span>,
        ) -> Result<(), D::Error>;
    }

    /// Implements a visitor's methods for every kind of value but the ones it reads: each is
    /// consumed (an array's or object's members skipped unread) and gives `$none`.
    macro_rules! passed_over {
        ($none:expr; $($not:ident),*) => {
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> { Ok($none) }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> { Ok($none) }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> { Ok($none) }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> { Ok($none) }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> { Ok($none) }
            fn visit_unit<E>(self) -> Result<Self::Value, E> { Ok($none) }
            $(passed_over!(@$not $none);)*
        };
        (@seq $none:expr) => {
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok($none)
            }
        };
        (@map $none:expr) => {
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok($none)
            }
        };
    }

    /// The document: `{"resourceSpans": [resource, …]}` or `{"batches": [resource, …]}`.
    #[derive(Clone, Copy)]
    struct Document<'a>(&'a str);

    impl<'de> Visitor<'de> for Document<'_> {
        type Value = Option<Vec<Span>>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an OTLP JSON document")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let (mut resource_spans, mut batches) = (None, None);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "resourceSpans" => {
                        resource_spans = Some(map.next_value_seed(List(Resource(self.0)))?);
                    }
                    "batches" => batches = Some(map.next_value_seed(List(Resource(self.0)))?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            // A `resourceSpans` that is not an array is not OTLP, even beside `batches`.
            Ok(match resource_spans {
                Some(listed) => listed,
                None => batches.flatten(),
            })
        }
    }

    /// An array of `L`s: their spans, or `None` when the value is not an array.
    #[derive(Clone, Copy)]
    struct List<L>(L);

    impl<'de, L: Level> DeserializeSeed<'de> for List<L> {
        type Value = Option<Vec<Span>>;

        fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
            de.deserialize_any(self)
        }
    }

    impl<'de, L: Level> Visitor<'de> for List<L> {
        type Value = Option<Vec<Span>>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut spans = Vec::new();
            while seq
                .next_element_seed(Item {
                    level: self.0,
                    spans: &mut spans,
                })?
                .is_some()
            {}
            Ok(Some(spans))
        }

        passed_over!(None; map);
    }

    /// One item of a [`List`], read into `spans`.
    struct Item<'s, L> {
        level: L,
        spans: &'s mut Vec<Span>,
    }

    impl<'de, L: Level> DeserializeSeed<'de> for Item<'_, L> {
        type Value = ();

        fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            self.level.read(de, self.spans)
        }
    }

    /// A resource: `{"scopeSpans": [scope, …]}` (older files: `instrumentationLibrarySpans`).
    #[derive(Clone, Copy)]
    struct Resource<'a>(&'a str);

    impl Level for Resource<'_> {
        fn read<'de, D: Deserializer<'de>>(
            self,
            de: D,
            spans: &mut Vec<Span>,
        ) -> Result<(), D::Error> {
            spans.extend(de.deserialize_any(self)?);
            Ok(())
        }
    }

    impl<'de> Visitor<'de> for Resource<'_> {
        type Value = Vec<Span>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a resource")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let (mut scope_spans, mut library_spans) = (None, None);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "scopeSpans" => scope_spans = Some(map.next_value_seed(List(Scope(self.0)))?),
                    "instrumentationLibrarySpans" => {
                        library_spans = Some(map.next_value_seed(List(Scope(self.0)))?);
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            let listed = match scope_spans {
                Some(listed) => listed,
                None => library_spans.flatten(),
            };
            Ok(listed.unwrap_or_default())
        }

        passed_over!(Vec::new(); seq);
    }

    /// A scope: `{"spans": [span, …]}`.
    #[derive(Clone, Copy)]
    struct Scope<'a>(&'a str);

    impl Level for Scope<'_> {
        fn read<'de, D: Deserializer<'de>>(
            self,
            de: D,
            spans: &mut Vec<Span>,
        ) -> Result<(), D::Error> {
            spans.extend(de.deserialize_any(self)?);
            Ok(())
        }
    }

    impl<'de> Visitor<'de> for Scope<'_> {
        type Value = Vec<Span>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a scope")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut listed = None;
            while let Some(key) = map.next_key::<String>()? {
                if key == "spans" {
                    listed = Some(map.next_value_seed(List(One(self.0)))?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(listed.flatten().unwrap_or_default())
        }

        passed_over!(Vec::new(); seq);
    }

    /// One span: the only value read whole, and dropped once it is a [`Span`].
    #[derive(Clone, Copy)]
    struct One<'a>(&'a str);

    impl Level for One<'_> {
        fn read<'de, D: Deserializer<'de>>(
            self,
            de: D,
            spans: &mut Vec<Span>,
        ) -> Result<(), D::Error> {
            let value = Value::deserialize(de)?;
            spans.push(otlp_span(&value, self.0));
            Ok(())
        }
    }
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
    // A list of spans under `spans` or `data`, as span APIs answer (`{"data": [span, …],
    // "next_cursor"}`) and exporters save them (`{"spans": [span, …]}`).
    for key in ["spans", "data"] {
        if let Some(items) = doc.get(key).and_then(Value::as_array) {
            if !items.is_empty() && items.iter().all(is_single_span) {
                spans.extend(items.iter().map(|s| single_span(s, at)));
                return true;
            }
        }
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
        // A list of export bodies (`[{"resourceSpans": …}, …]`), as viewers and demo apps keep
        // the requests they received: each read as it would be alone.
        if !items.is_empty() && items.iter().all(is_document) {
            for item in items {
                container(item, at, spans);
            }
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

/// An OTLP (or Tempo) export body, or Jaeger's: what a list of bodies is made of.
fn is_document(v: &Value) -> bool {
    v.get("resourceSpans")
        .or_else(|| v.get("batches"))
        .is_some_and(Value::is_array)
        || v.get("data")
            .and_then(Value::as_array)
            .is_some_and(|traces| {
                !traces.is_empty() && traces.iter().all(|t| t.get("spans").is_some())
            })
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
    (has_id && (v.get("attributes").is_some() || v.get("tags").is_some())) || is_frame_row(v)
}

/// A row of a span dataframe (Phoenix's `get_spans_dataframe()`, saved as JSON records):
/// `context.span_id` and `attributes.*` as columns of their own.
fn is_frame_row(v: &Value) -> bool {
    v.get("context.span_id").is_some()
        && v.as_object()
            .is_some_and(|m| m.keys().any(|k| k.starts_with("attributes.")))
}

/// [`is_frame_row`]'s row: its `attributes.*` columns are the attributes.
fn frame_row(v: &Value, at: &str) -> Span {
    let parent = string(v.get("parent_id"));
    Span {
        at: at.to_owned(),
        trace_id: string(v.get("context.trace_id")),
        span_id: string(v.get("context.span_id")),
        parent_id: (!parent.is_empty()).then_some(parent),
        name: string(v.get("name")),
        start: start(v),
        end: end(v),
        kind: v
            .get("span_kind")
            .and_then(Value::as_str)
            .map(str::to_owned),
        attributes: v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, value)| !value.is_null())
            .filter_map(|(k, value)| {
                Some((k.strip_prefix("attributes.")?.to_owned(), value.clone()))
            })
            .collect(),
        events: events(v, |a| {
            a.and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        }),
    }
}

fn single_span(v: &Value, at: &str) -> Span {
    if v.get("tags").is_some() {
        return jaeger_span(v, at);
    }
    if v.get("attributes").is_none() && is_frame_row(v) {
        return frame_row(v, at);
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
/// `[seconds, nanoseconds]` (its `HrTime`), else an RFC 3339 `start_time` (Phoenix's exports,
/// the Python SDK's console exporter).
fn start(v: &Value) -> u64 {
    time(v, "startTimeUnixNano", "startTime", "start_time")
}

/// A span's end, read as [`start`] reads its start.
fn end(v: &Value) -> u64 {
    time(v, "endTimeUnixNano", "endTime", "end_time")
}

/// An RFC 3339 time in nanoseconds since the epoch; 0 when it is not one (or before 1970).
pub(crate) fn rfc3339_nanos(t: &str) -> u64 {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .and_then(|t| t.timestamp_nanos_opt())
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

fn time(v: &Value, unix_nano: &str, hr_time: &str, rfc3339: &str) -> u64 {
    if let Some(t) = v.get(unix_nano) {
        return nanos(Some(t));
    }
    if let Some(t) = v.get(rfc3339).and_then(Value::as_str) {
        return rfc3339_nanos(t);
    }
    match v.get(hr_time).and_then(Value::as_array).map(Vec::as_slice) {
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
        end: end(v),
        kind: None,
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
        end: nanos(v.get("startTime"))
            .saturating_add(nanos(v.get("duration")))
            .saturating_mul(1000),
        kind: None,
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
        end: end(v),
        kind: v
            .get("span_kind")
            .and_then(Value::as_str)
            .map(str::to_owned),
        attributes: object(v.get("attributes")),
        events: events(v, object),
    }
}

#[cfg(test)]
mod tests {
    /// The document read a span at a time finds what [`container`] finds in it read whole:
    /// on the OTLP and Tempo fixtures, and on the odd shapes a document can take (members that
    /// are not arrays, repeated members, both names of a level, items that are not objects).
    #[test]
    fn an_otlp_document_read_by_span_is_the_document_read_whole() {
        use serde_json::json;
        let whole = |text: &str| {
            let doc: Value = serde_json::from_str(text).ok()?;
            let mut spans = Vec::new();
            container(&doc, "f", &mut spans).then_some(spans)
        };
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut texts: Vec<String> = [
            "otel-genai/semconv-examples-llm-calls-tool-calls.otlp.json",
            "otel-genai/agentevals-helm.tempo.json",
        ]
        .iter()
        .map(|f| std::fs::read_to_string(fixtures.join(f)).unwrap())
        .collect();
        let span = |id: &str| json!({"traceId": "t", "spanId": id, "attributes": []});
        for odd in [
            json!({"resourceSpans": [{"scopeSpans": [{"spans": [span("a")]}]}],
                   "batches": [{"scopeSpans": [{"spans": [span("b")]}]}]}),
            json!({"batches": [{"scopeSpans": [{"spans": [span("b")]}]}], "resourceSpans": 3}),
            json!({"resourceSpans": {"a": 1}, "batches": []}),
            json!({"batches": [{"scopeSpans": [{"spans": [span("b")]}]}], "data": [1]}),
            json!({"resourceSpans": [1, null, "x", [span("a")], {"scopeSpans": [{"spans": [
                span("a"), 1, [], {}]}]}]}),
            json!({"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [span("l")]}],
                   "scopeSpans": [{"spans": [span("s")]}]}]}),
            json!({"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [span("l")]}],
                   "scopeSpans": null}]}),
            json!({"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [span("l")]}]}]}),
            json!({"resourceSpans": [{"scopeSpans": [{"spans": 1}, 2, {"scope": {}}]}]}),
            json!([{"resourceSpans": []}]),
            json!({"data": [{"spans": [{"spanID": "j", "tags": []}]}]}),
        ] {
            texts.push(odd.to_string());
        }
        // Repeated members: the later wins, as serde_json's `Map` keeps it.
        texts.push(
            r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}], "spans": [{"spanId": "2"}]}]}],
                "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "3"}]}], "scopeSpans": []}]}"#
                .to_owned(),
        );
        texts.push(r#"{"resourceSpans": []} {"resourceSpans": []}"#.to_owned());
        for text in &texts {
            let streamed = decode(text, "f");
            assert_eq!(streamed, whole(text), "{text}");
            let direct = document::otlp(text, "f");
            assert!(direct.is_none() || direct == streamed, "{text}");
        }
        assert!(document::otlp(&texts[0], "f").is_some_and(|s| !s.is_empty()));
    }

    /// `is_json` says what reading a `Value` says, on what tells them apart from a plain
    /// skip: the nesting limit, numbers out of range, lone surrogates, control characters.
    #[test]
    fn is_json_agrees_with_reading_a_value() {
        let mut texts: Vec<String> = [126, 127, 128, 129, 400]
            .iter()
            .map(|&d| format!("{}{}", "[".repeat(d), "]".repeat(d)))
            .collect();
        texts.push(format!("{}1{}", "{\"a\":".repeat(128), "}".repeat(128)));
        for text in [
            "1e999999",
            "[1e999999]",
            "-1e400",
            "1e-400",
            "\"\\ud800\"",
            "{\"\\ud800\": 1}",
            "\"a\u{1}b\"",
            "{\"a\": 1} x",
            "{\"a\": 1}  ",
            "",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\": [1, {\"b\": null}], \"c\": \"\\u00e9\"}",
            "18446744073709551616",
        ] {
            texts.push(text.to_owned());
        }
        for text in &texts {
            assert_eq!(
                is_json(text),
                serde_json::from_str::<Value>(text).is_ok(),
                "{text:?}"
            );
        }
    }

    fn fixture(name: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    /// A JSON array of export bodies, as viewers and demo apps keep the requests they received,
    /// holds the spans of each body read alone, in order (here two real bodies: an OTLP
    /// document and a Tempo export).
    #[test]
    fn a_json_array_of_export_bodies_is_each_body_read() {
        let bodies = [
            fixture("otel-genai/semconv-examples-llm-calls-tool-calls.otlp.json"),
            fixture("otel-genai/agentevals-helm.tempo.json"),
        ];
        let alone: Vec<Vec<Span>> = bodies.iter().map(|b| decode(b, "f").unwrap()).collect();
        assert!(alone.iter().all(|s| !s.is_empty()));
        let array = format!("[{}, {}]", bodies[0], bodies[1]);
        let read = decode(&array, "f").expect("an array of bodies is spans");
        assert_eq!(read, alone.concat());
        // An array with anything else in it is not spans.
        assert_eq!(decode(&format!("[{}, 1]", bodies[0]), "f"), None);
        assert_eq!(decode(&format!("[{}, {{}}]", bodies[0]), "f"), None);
    }

    /// Spans listed under `spans` or `data` (a span API's page, `{"data": [...],
    /// "next_cursor"}`; an exporter's `{"spans": [...]}`) are the spans listed.
    #[test]
    fn a_list_of_spans_under_spans_or_data_is_those_spans() {
        let lines = fixture("openinference/phoenix_llm_spans_span_kind.jsonl");
        let listed: Vec<Value> = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let plain = decode(&Value::Array(listed.clone()).to_string(), "f").unwrap();
        assert_eq!(plain.len(), 2);
        assert_eq!(plain[0].kind.as_deref(), Some("LLM"));
        assert!(plain[0].start > 0 && plain[0].end > plain[0].start);
        for doc in [
            json!({"data": listed, "next_cursor": null}),
            json!({"spans": listed}),
        ] {
            assert_eq!(
                decode(&doc.to_string(), "f").as_ref(),
                Some(&plain),
                "{doc}"
            );
        }
        // Jaeger's `data` (traces with their spans) is still Jaeger's.
        let jaeger = json!({"data": [{"traceID": "t", "spans": [{"spanID": "s", "tags": []}]}]});
        assert_eq!(decode(&jaeger.to_string(), "f").map(|s| s.len()), Some(1));
        // A list of something else is not spans.
        assert_eq!(decode(&json!({"data": [{"id": 1}]}).to_string(), "f"), None);
    }

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
