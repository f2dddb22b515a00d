//! The robustness probe: each tool called first with a valid input (the control call), then
//! with arguments its own `inputSchema` forbids, and every answer checked.
//!
//! A server must answer valid input, and refuse bad input cleanly, with an `isError` result or
//! a JSON-RPC error (-32602, invalid params), within the call timeout. A crash, a hang, or a
//! success on input the schema forbids is a finding naming the tool and the input: the same
//! bugs mcp-assert's schema-driven fuzzing found (null arguments crashing servers built on a
//! popular SDK). A refusal proves something only if the tool answers valid input: a server
//! that refuses everything (Playwright MCP without its browser) refused every bad input "as it
//! should", so the control call comes first, and a tool that refuses it is a finding whose
//! other refusals are marked as proving nothing. The valid input is the flow's first call of
//! the tool, else one made from the schema ([`valid_input`]); the bad inputs are derived from
//! the schema alone ([`inputs`]), so the same schema always gives the same probes.
//!
//! The control call runs the tool for real, so it is made only where the tool's annotations
//! say that is harmless by the MCP spec's own defaults: `readOnlyHint: true`, or
//! `destructiveHint: false`. A tool without annotations is, by those defaults, destructive: it
//! gets the bad inputs (which it must refuse before doing anything) but no control call, and
//! the report says so. A tool annotated `destructiveHint: true` (and not read-only) gets no
//! probe at all. `--include-destructive` lifts both.

use std::fmt;

use rmcp::model::CallToolRequestParams;
use serde_json::{json, Map, Value};
use toolcall_score::escape;

use crate::expect::printable_result;
use crate::replay::{block_on, Phase, Run};
use crate::{Failure, FailureKind, Flow, Options};

/// What to probe.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// The tools to probe; empty for every tool.
    pub tools: Vec<String>,
    /// Probe tools annotated `destructiveHint: true` too, and make the control call of tools
    /// that are destructive by the spec's defaults (no annotations saying otherwise).
    pub include_destructive: bool,
    /// The most probes run per tool ([`DEFAULT_MAX_PER_TOOL`]): the first ones, in the fixed
    /// order of [`inputs`]; how many more there were is in [`ProbeReport::capped`]. A server's
    /// schema, not the user, decides how many there are.
    pub max_per_tool: usize,
}

/// The default of [`ProbeOptions::max_per_tool`]: enough for a tool of thirty properties.
pub const DEFAULT_MAX_PER_TOOL: usize = 100;

impl Default for ProbeOptions {
    fn default() -> ProbeOptions {
        ProbeOptions {
            tools: Vec::new(),
            include_destructive: false,
            max_per_tool: DEFAULT_MAX_PER_TOOL,
        }
    }
}

/// How the server answered one probe.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// Refused, as it should: the refusal's text.
    Refused(String),
    /// Accepted input its schema forbids: what it answered.
    Accepted(Value),
    /// No answer within the call timeout.
    Hang,
    /// The server died: how.
    Crash(String),
    /// Some other failure (a protocol error): what it was.
    Other(String),
}

/// One probe: a tool, an input that breaks its schema, and the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The tool.
    pub tool: String,
    /// How the input breaks the schema: `` `count` of the wrong type ``.
    pub breaks: String,
    /// The arguments sent, as printed: JSON, masked, cut after 200 characters (a probe of a
    /// tool of thousands of properties sends thousands; keeping each whole grew with the square
    /// of them).
    pub input: String,
    /// The answer.
    pub answer: Answer,
    /// What the input was meant to be.
    pub kind: ProbeKind,
    /// A refusal that proves nothing: the tool refused its valid input too.
    pub moot: bool,
}

/// What a probe's input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeKind {
    /// The control call: a valid input, which the tool must answer.
    Control,
    /// An input its schema forbids, which the tool must refuse.
    Invalid,
}

impl Probe {
    /// Whether the answer is a finding: a control call not answered, an invalid input not
    /// refused.
    pub fn is_finding(&self) -> bool {
        match self.kind {
            ProbeKind::Control => !matches!(self.answer, Answer::Accepted(_)),
            ProbeKind::Invalid => !matches!(self.answer, Answer::Refused(_)),
        }
    }

    /// Whether this is a refusal as it should be, one that proves something.
    pub fn is_proof(&self) -> bool {
        self.kind == ProbeKind::Invalid && !self.moot && matches!(self.answer, Answer::Refused(_))
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = &self.input;
        let tool = escape(&self.tool);
        match (&self.answer, self.kind) {
            (Answer::Accepted(result), ProbeKind::Control) => write!(
                f,
                "ok     `{tool}` {}: answered: {}",
                self.breaks,
                printable_result(result)
            ),
            (Answer::Refused(why), ProbeKind::Control) => write!(
                f,
                "REFUSE `{tool}` {}: {input} was refused ({}); its refusals of invalid input \
                 prove nothing (if the input is wrong in a way its schema does not say, give \
                 the tool a call in a flow: the probe takes a flow's first call of each tool \
                 as its valid input)",
                self.breaks,
                escape(why)
            ),
            (Answer::Refused(why), _) if self.moot => write!(
                f,
                "moot   `{tool}` {}: refused ({}), which proves nothing: it refused valid \
                 input too",
                self.breaks,
                escape(why)
            ),
            (Answer::Refused(why), _) => write!(
                f,
                "ok     `{tool}` {}: refused ({})",
                self.breaks,
                escape(why)
            ),
            (Answer::Accepted(result), _) => write!(
                f,
                "ACCEPT `{tool}` {}: {input} was accepted though its schema forbids it: {}",
                self.breaks,
                printable_result(result)
            ),
            (Answer::Hang, _) => write!(
                f,
                "HANG   `{tool}` {}: {input} got no answer in time",
                self.breaks
            ),
            (Answer::Crash(how), _) => write!(
                f,
                "CRASH  `{tool}` {}: {input} killed the server: {}",
                self.breaks,
                escape(how)
            ),
            (Answer::Other(what), _) => write!(
                f,
                "ERROR  `{tool}` {}: {input}: {}",
                self.breaks,
                escape(what)
            ),
        }
    }
}

/// What a probe run found.
#[derive(Clone, Debug, Default)]
pub struct ProbeReport {
    /// Every probe, in tool order.
    pub probes: Vec<Probe>,
    /// The tools left out, with why.
    pub skipped: Vec<(String, String)>,
    /// The tools probed without a control call, with why: their refusals are unproven.
    pub uncontrolled: Vec<(String, String)>,
    /// The tools with more probes than [`ProbeOptions::max_per_tool`], with how many they had
    /// (only the first ones ran).
    pub capped: Vec<(String, usize)>,
    /// Why the probe could not run at all (the server did not start, or list).
    pub failure: Option<Failure>,
}

impl ProbeReport {
    /// The probes whose answer was not a refusal.
    pub fn findings(&self) -> impl Iterator<Item = &Probe> {
        self.probes.iter().filter(|p| p.is_finding())
    }

    /// How many control calls were answered.
    pub fn answered(&self) -> usize {
        self.probes
            .iter()
            .filter(|p| p.kind == ProbeKind::Control && !p.is_finding())
            .count()
    }

    /// How many refusals prove nothing, their tool having refused valid input too.
    pub fn moot(&self) -> usize {
        self.probes.iter().filter(|p| p.moot).count()
    }

    /// How many invalid inputs were refused as they should be, by tools that answer valid
    /// input (or got no control call).
    pub fn refused(&self) -> usize {
        self.probes.iter().filter(|p| p.is_proof()).count()
    }
}

/// How one probe breaks the schema: which property (an index into the properties), and how.
#[derive(Clone, Debug)]
enum Breach {
    NoArguments,
    Missing(String),
    WrongType(usize, Value),
    Null(usize),
    BelowMinimum(usize, Value),
    AboveMaximum(usize, Value),
    Fraction(usize),
    TooLong(usize, u64),
    Outsider(usize),
    Unlisted,
}

/// The inputs that break a schema, made one at a time ([`inputs`]): a tool's schema decides
/// how many there are (three or so per property), and each is a copy of the valid arguments, so
/// holding them all took memory in the square of the properties (3,000 properties: 3.2 GB).
/// The plan is one small entry per probe; [`Iterator::next`] builds its input.
#[derive(Clone, Debug)]
pub struct Inputs {
    names: Vec<String>,
    valid: Map<String, Value>,
    plan: std::vec::IntoIter<Breach>,
}

impl Iterator for Inputs {
    type Item = (String, Value);

    fn next(&mut self) -> Option<(String, Value)> {
        let breach = self.plan.next()?;
        let shown = |i: usize| escape(&self.names[i]).to_string();
        let with = |i: usize, value: Value| {
            let mut input = self.valid.clone();
            input.insert(self.names[i].clone(), value);
            Value::Object(input)
        };
        Some(match breach {
            Breach::NoArguments => ("with no arguments".to_owned(), json!({})),
            Breach::Missing(name) => {
                let mut input = self.valid.clone();
                input.remove(&name);
                (
                    format!("without the required `{}`", escape(&name)),
                    Value::Object(input),
                )
            }
            Breach::WrongType(i, wrong) => (
                format!("with `{}` of the wrong type", shown(i)),
                with(i, wrong),
            ),
            Breach::Null(i) => (format!("with `{}` null", shown(i)), with(i, Value::Null)),
            Breach::BelowMinimum(i, n) => {
                (format!("with `{}` below its minimum", shown(i)), with(i, n))
            }
            Breach::AboveMaximum(i, n) => {
                (format!("with `{}` above its maximum", shown(i)), with(i, n))
            }
            Breach::Fraction(i) => (
                format!("with `{}` not a whole number", shown(i)),
                with(i, json!(1.5)),
            ),
            Breach::TooLong(i, max) => {
                let long = "x".repeat(
                    usize::try_from(max)
                        .unwrap_or(0)
                        .saturating_add(1)
                        .min(1 << 20),
                );
                (
                    format!("with `{}` past its maxLength", shown(i)),
                    with(i, json!(long)),
                )
            }
            Breach::Outsider(i) => (
                format!("with `{}` not one of its values", shown(i)),
                with(i, json!("__not_one_of_the_values__")),
            ),
            Breach::Unlisted => {
                let mut input = self.valid.clone();
                input.insert("__unlisted__".to_owned(), json!("x"));
                (
                    "with a property it does not list".to_owned(),
                    Value::Object(input),
                )
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.plan.size_hint()
    }
}

impl ExactSizeIterator for Inputs {}

/// The inputs that break `schema`, each with what it breaks, in a fixed order: no arguments
/// (when something is required), each required property missing, each property of the wrong
/// type, each required property `null`, numbers past their bounds, an integer with a fraction,
/// strings past `maxLength`, an enum's outsider, an extra property where none is allowed.
/// Every input but the one it breaks is valid as far as the schema's top level says. Made one
/// at a time, as they are asked for; [`ExactSizeIterator::len`] says how many there are.
pub fn inputs(schema: &Value) -> Inputs {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: std::collections::BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = properties.keys().cloned().collect();
    let valid: Map<String, Value> = properties
        .iter()
        .filter(|(name, _)| required.contains(name.as_str()))
        .map(|(name, p)| (name.clone(), example(p)))
        .collect();
    let mut plan = Vec::new();
    if !required.is_empty() {
        plan.push(Breach::NoArguments);
    }
    // Required names in the order the schema lists them, as before.
    let listed: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for name in listed {
        if !seen.insert(name) {
            continue;
        }
        plan.push(Breach::Missing(name.to_owned()));
    }
    for (i, (name, property)) in properties.iter().enumerate() {
        if let Some(wrong) = wrong_type(property) {
            plan.push(Breach::WrongType(i, wrong));
        }
        if required.contains(name.as_str()) && !allows_null(property) {
            plan.push(Breach::Null(i));
        }
        if let Some(min) = property.get("minimum").and_then(Value::as_f64) {
            plan.push(Breach::BelowMinimum(i, number(min - 1.0)));
        }
        if let Some(max) = property.get("maximum").and_then(Value::as_f64) {
            plan.push(Breach::AboveMaximum(i, number(max + 1.0)));
        }
        if property.get("type").and_then(Value::as_str) == Some("integer") {
            plan.push(Breach::Fraction(i));
        }
        if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
            plan.push(Breach::TooLong(i, max));
        }
        if let Some(values) = property.get("enum").and_then(Value::as_array) {
            if !values.contains(&json!("__not_one_of_the_values__")) {
                plan.push(Breach::Outsider(i));
            }
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        plan.push(Breach::Unlisted);
    }
    Inputs {
        names,
        valid,
        plan: plan.into_iter(),
    }
}

/// A whole number as an integer, else a float.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

fn types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_null(property: &Value) -> bool {
    types(property).contains(&"null") || property.get("type").is_none()
}

/// A valid input for a tool of input schema `schema`: each required property (at every depth)
/// with a value its own schema allows, as far as that can be made from the schema alone (a
/// `const`, the first `enum` value or `examples` entry, its `default`, a number within its
/// bounds, a string of its length and `pattern` and `format`, an array of `minItems` valid
/// items). A schema may ask what it cannot say (a time zone name, a file that exists): a flow's
/// call of the tool is the better valid input, and [`probe`] takes it when there is one.
pub fn valid_input(schema: &Value) -> Value {
    example_at(schema, 0)
}

/// How deep [`valid_input`] follows nested objects and arrays.
const MAX_DEPTH: usize = 8;

fn example(property: &Value) -> Value {
    example_at(property, 1)
}

fn example_at(property: &Value, depth: usize) -> Value {
    if let Some(value) = property.get("const") {
        return value.clone();
    }
    for listed in ["enum", "examples"] {
        if let Some(first) = property
            .get(listed)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return first.clone();
        }
    }
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    // The first branch of a choice; every part of an `allOf` is taken as the first is.
    for choice in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = property
            .get(choice)
            .and_then(Value::as_array)
            .and_then(|v| v.iter().find(|b| b.get("type") != Some(&json!("null"))))
        {
            return example_at(first, depth);
        }
    }
    let kinds = types(property);
    let kind = kinds
        .iter()
        .copied()
        .find(|t| *t != "null")
        .or(kinds.first().copied());
    let kind = kind.or(if property.get("properties").is_some() {
        Some("object")
    } else if property.get("items").is_some() {
        Some("array")
    } else {
        None
    });
    match kind {
        Some("integer") => json!(whole_within(property)),
        Some("number") => number(number_within(property)),
        Some("boolean") => json!(true),
        Some("array") => {
            let count = property
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let item = match property.get("items") {
                Some(items) if depth < MAX_DEPTH => example_at(items, depth + 1),
                _ => json!("x"),
            };
            Value::Array(vec![item; usize::try_from(count.min(64)).unwrap_or(0)])
        }
        Some("object") => {
            let mut object = Map::new();
            if depth < MAX_DEPTH {
                let required = required_names(property);
                if let Some(properties) = property.get("properties").and_then(Value::as_object) {
                    for (name, sub) in properties {
                        if required.contains(name.as_str()) {
                            object.insert(name.clone(), example_at(sub, depth + 1));
                        }
                    }
                }
            }
            Value::Object(object)
        }
        Some("null") => Value::Null,
        _ => json!(string_within(property)),
    }
}

fn required_names(schema: &Value) -> std::collections::BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The lower bound a number schema sets, and whether it is exclusive (draft 6's number form,
/// or draft 4's `exclusiveMinimum: true` beside `minimum`).
fn lower(property: &Value) -> Option<(f64, bool)> {
    match (
        property.get("minimum").and_then(Value::as_f64),
        property.get("exclusiveMinimum"),
    ) {
        (_, Some(Value::Number(n))) => n.as_f64().map(|n| (n, true)),
        (Some(min), Some(Value::Bool(true))) => Some((min, true)),
        (Some(min), _) => Some((min, false)),
        (None, _) => None,
    }
}

/// [`lower`] for the upper bound.
fn upper(property: &Value) -> Option<(f64, bool)> {
    match (
        property.get("maximum").and_then(Value::as_f64),
        property.get("exclusiveMaximum"),
    ) {
        (_, Some(Value::Number(n))) => n.as_f64().map(|n| (n, true)),
        (Some(max), Some(Value::Bool(true))) => Some((max, true)),
        (Some(max), _) => Some((max, false)),
        (None, _) => None,
    }
}

/// A whole number within the schema's bounds (1 when it has none, as before).
fn whole_within(property: &Value) -> i64 {
    let low = lower(property).map(
        |(n, exclusive)| {
            if exclusive {
                n.floor() + 1.0
            } else {
                n.ceil()
            }
        },
    );
    let high = upper(property).map(
        |(n, exclusive)| {
            if exclusive {
                n.ceil() - 1.0
            } else {
                n.floor()
            }
        },
    );
    let pick = match (low, high) {
        (Some(low), _) => low,
        (None, Some(high)) => high.min(1.0),
        (None, None) => 1.0,
    };
    // Past i64 a bound is not one a probe can meet.
    if pick.abs() < 9e15 {
        pick as i64
    } else {
        1
    }
}

/// A number within the schema's bounds.
fn number_within(property: &Value) -> f64 {
    match (lower(property), upper(property)) {
        (Some((low, false)), _) => low,
        (Some((low, true)), Some((high, _))) => (low + high) / 2.0,
        (Some((low, true)), None) => low + 1.0,
        (None, Some((high, exclusive))) => {
            if high > 1.0 || (high == 1.0 && !exclusive) {
                1.0
            } else {
                high - 1.0
            }
        }
        (None, None) => 1.0,
    }
}

/// Strings a `format` or a `pattern` commonly asks for, tried in order.
const STRING_CANDIDATES: &[&str] = &[
    "x",
    "abc",
    "a",
    "A",
    "1",
    "123",
    "UTC",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "00:00:00",
    "https://example.com",
    "a@example.com",
    "00000000-0000-0000-0000-000000000000",
    "127.0.0.1",
    "a-b",
    "a_b",
    "ab12",
];

/// A string of the schema's length, `format` and `pattern` (the first candidate that fits;
/// `x`, as before, when none does or nothing is asked).
fn string_within(property: &Value) -> String {
    let min = property
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let max = property.get("maxLength").and_then(Value::as_u64);
    let by_format = match property.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2026-01-01T00:00:00Z"),
        Some("date") => Some("2026-01-01"),
        Some("time") => Some("00:00:00Z"),
        Some("uri" | "url" | "iri" | "uri-reference") => Some("https://example.com"),
        Some("email" | "idn-email") => Some("a@example.com"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("ipv4") => Some("127.0.0.1"),
        Some("ipv6") => Some("::1"),
        Some("hostname" | "idn-hostname") => Some("example.com"),
        _ => None,
    };
    let pattern = property
        .get("pattern")
        .and_then(Value::as_str)
        .and_then(|p| regex::Regex::new(p).ok());
    let fits = |s: &str| {
        let n = s.chars().count() as u64;
        n >= min && max.is_none_or(|max| n <= max) && pattern.as_ref().is_none_or(|p| p.is_match(s))
    };
    let padded = |s: &str| {
        let n = s.chars().count() as u64;
        if n >= min {
            s.to_owned()
        } else {
            let pad = usize::try_from(min - n).unwrap_or(0).min(1 << 20);
            format!("{s}{}", "x".repeat(pad))
        }
    };
    by_format
        .into_iter()
        .chain(STRING_CANDIDATES.iter().copied())
        .map(padded)
        .find(|s| fits(s))
        .unwrap_or_else(|| padded("x"))
}

/// A value of none of `property`'s types, when it declares some.
fn wrong_type(property: &Value) -> Option<Value> {
    let types = types(property);
    if types.is_empty() {
        return None;
    }
    [
        ("string", json!(12345)),
        ("integer", json!("not a number")),
        ("number", json!("not a number")),
        ("boolean", json!("yes")),
        ("array", json!({"not": "an array"})),
        ("object", json!("not an object")),
    ]
    .into_iter()
    .find(|(t, _)| types.contains(t))
    .map(|(_, v)| v)
    .filter(|v| !types.contains(&json_type(v)))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// Probes the tools of `flow`'s server (the flow's calls are not made). A server that crashes
/// is started again for the probes after it.
pub async fn probe(flow: &Flow, options: &Options, what: &ProbeOptions) -> ProbeReport {
    let mut report = ProbeReport::default();
    let mut run = Run::new(flow, options);
    let mut client = match run.connect().await {
        Ok(client) => client,
        Err(failure) => {
            run.finish(false).await;
            report.failure = Some(failure);
            return report;
        }
    };
    let listed = run
        .guarded(
            &Phase::new("tools/list"),
            run.call_timeout,
            client.list_all_tools(),
        )
        .await;
    let tools = match listed {
        Ok(tools) => tools,
        Err(failure) => {
            run.finish(false).await;
            report.failure = Some(failure);
            return report;
        }
    };
    for tool in tools {
        let name = tool.name.to_string();
        if !what.tools.is_empty() && !what.tools.contains(&name) {
            continue;
        }
        let harm = Harm::of(tool.annotations.as_ref());
        if harm == Harm::Destructive && !what.include_destructive {
            report.skipped.push((
                name,
                "annotated destructive (--include-destructive probes it)".into(),
            ));
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let mut planned: Vec<(ProbeKind, String, Value)> = Vec::new();
        match control(flow, &name, &schema, harm, what.include_destructive) {
            Ok((breaks, input)) => planned.push((ProbeKind::Control, breaks, input)),
            Err(why) => report.uncontrolled.push((name.clone(), why)),
        }
        let invalid = inputs(&schema);
        if invalid.len() > what.max_per_tool {
            report.capped.push((name.clone(), invalid.len()));
        }
        let mut refused_valid = false;
        let invalid = invalid
            .take(what.max_per_tool)
            .map(|(breaks, input)| (ProbeKind::Invalid, breaks, input));
        for (kind, breaks, input) in planned.into_iter().chain(invalid) {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = input.as_object().cloned();
            let phase = Phase::new(&format!("probe {}", escape(&name)));
            let answer = match run
                .guarded(&phase, run.call_timeout, client.call_tool(params))
                .await
            {
                Ok(result) => {
                    let result = serde_json::to_value(&result).unwrap_or_default();
                    let text = result["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if result.get("isError") == Some(&Value::Bool(true)) {
                        Answer::Refused(format!("isError: {text}"))
                    } else {
                        Answer::Accepted(
                            result
                                .get("structuredContent")
                                .cloned()
                                .unwrap_or(Value::String(text)),
                        )
                    }
                }
                Err(failure) => match failure.kind {
                    FailureKind::RpcError => Answer::Refused(failure.message.clone()),
                    FailureKind::Timeout => Answer::Hang,
                    FailureKind::Exited | FailureKind::Protocol => {
                        Answer::Crash(failure.message.clone())
                    }
                    FailureKind::Interrupted => {
                        report.failure = Some(failure);
                        run.finish(false).await;
                        return report;
                    }
                    _ => Answer::Other(failure.message.clone()),
                },
            };
            if kind == ProbeKind::Control && matches!(answer, Answer::Refused(_)) {
                refused_valid = true;
            }
            let restart = matches!(answer, Answer::Crash(_) | Answer::Hang);
            report.probes.push(Probe {
                tool: name.clone(),
                breaks,
                input: printable_result(&flow.mask_value(&input)),
                moot: refused_valid
                    && kind == ProbeKind::Invalid
                    && matches!(answer, Answer::Refused(_)),
                answer,
                kind,
            });
            if restart {
                // A dead or stuck server answers nothing more: start it again for the rest.
                run.finish(false).await;
                run = Run::new(flow, options);
                client = match run.connect().await {
                    Ok(client) => client,
                    Err(failure) => {
                        run.finish(false).await;
                        report.failure = Some(failure);
                        return report;
                    }
                };
            }
        }
    }
    let _ = tokio::time::timeout(options.shutdown_grace, client.cancel()).await;
    run.finish(true).await;
    report
}

/// How much harm calling a tool for real may do, by its annotations with the MCP spec's
/// defaults applied (`readOnlyHint` false, `destructiveHint` true, the latter meaningful only
/// when the tool is not read-only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Harm {
    /// Read-only, or says it only adds: a control call is harmless.
    None,
    /// No annotation says it is harmless, none says it destroys: destructive by the defaults.
    ByDefault,
    /// Annotated `destructiveHint: true`, and not read-only.
    Destructive,
}

impl Harm {
    fn of(annotations: Option<&rmcp::model::ToolAnnotations>) -> Harm {
        let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let destructive = annotations.and_then(|a| a.destructive_hint);
        match (read_only, destructive) {
            (true, _) | (false, Some(false)) => Harm::None,
            (false, Some(true)) => Harm::Destructive,
            (false, None) => Harm::ByDefault,
        }
    }
}

/// The control call of tool `name`: the flow's first call of it, else a valid input made from
/// its schema, checked against the schema; or why it gets none.
fn control(
    flow: &Flow,
    name: &str,
    schema: &Value,
    harm: Harm,
    include_destructive: bool,
) -> Result<(String, Value), String> {
    if harm == Harm::ByDefault && !include_destructive {
        return Err(
            "no valid-input control call: no annotation says the tool is read-only \
             (readOnlyHint) or not destructive (destructiveHint: false), and by the MCP spec's \
             defaults that makes it destructive; its refusals are unproven \
             (--include-destructive calls it)"
                .into(),
        );
    }
    if let Some(call) = flow.calls.iter().find(|c| c.name == name) {
        return Ok((
            "with the valid input of the flow's call".into(),
            call.input.clone(),
        ));
    }
    let input = valid_input(schema);
    let mut tool = toolcall_score::Tool::new(name, "");
    tool.input_schema = Some(schema.clone());
    match toolcall_score::Catalog::new([tool]).validate(name, &input) {
        Ok(()) | Err(toolcall_score::SchemaError::Undecided(_)) => {
            Ok(("with a valid input".into(), input))
        }
        Err(why) => Err(format!(
            "no valid-input control call: no valid input could be made from its schema ({}); \
             give the tool a call in a flow (its input is the control call's)",
            escape(&why.to_string())
        )),
    }
}

/// [`probe`] on a fresh single-threaded tokio runtime.
pub fn probe_blocking(flow: &Flow, options: &Options, what: &ProbeOptions) -> ProbeReport {
    block_on(probe(flow, options, what)).unwrap_or_else(|failure| ProbeReport {
        failure: Some(failure),
        ..ProbeReport::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inputs_break_the_schema_one_way_each_and_always_the_same() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"text": {"type": "string", "maxLength": 3},
                           "count": {"type": "integer", "minimum": 1, "maximum": 5},
                           "mode": {"enum": ["a", "b"]}},
            "required": ["text", "count"]});
        assert_eq!(inputs(&schema).len(), 13);
        let got: Vec<String> = inputs(&schema)
            .map(|(why, input)| format!("{why}: {input}"))
            .collect();
        assert_eq!(
            got,
            [
                "with no arguments: {}",
                "without the required `text`: {\"count\":1}",
                "without the required `count`: {\"text\":\"x\"}",
                "with `count` of the wrong type: {\"count\":\"not a number\",\"text\":\"x\"}",
                "with `count` null: {\"count\":null,\"text\":\"x\"}",
                "with `count` below its minimum: {\"count\":0,\"text\":\"x\"}",
                "with `count` above its maximum: {\"count\":6,\"text\":\"x\"}",
                "with `count` not a whole number: {\"count\":1.5,\"text\":\"x\"}",
                "with `mode` not one of its values: {\"count\":1,\"mode\":\"__not_one_of_the_values__\",\"text\":\"x\"}",
                "with `text` of the wrong type: {\"count\":1,\"text\":12345}",
                "with `text` null: {\"count\":1,\"text\":null}",
                "with `text` past its maxLength: {\"count\":1,\"text\":\"xxxx\"}",
                "with a property it does not list: {\"__unlisted__\":\"x\",\"count\":1,\"text\":\"x\"}",
            ]
        );
        assert!(inputs(&schema).eq(inputs(&schema)), "deterministic");
        assert_eq!(
            inputs(&json!({"type": "object"})).len(),
            0,
            "nothing to break"
        );
    }

    /// The control call's input meets what the schema says: bounds (exclusive ones too), length,
    /// pattern, format, items, nested required properties; and it validates.
    #[test]
    fn the_valid_input_meets_its_schema() {
        let schema = json!({"type": "object", "required": ["n", "x", "s", "p", "when", "tags", "inner", "tz"],
            "properties": {
                "n": {"type": "integer", "exclusiveMinimum": 0},
                "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "s": {"type": "string", "minLength": 5},
                "p": {"type": "string", "pattern": "^[0-9]+$"},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "inner": {"type": "object", "required": ["k"], "properties": {"k": {"type": "boolean"}, "o": {"type": "string"}}},
                "tz": {"type": "string", "default": "UTC"},
                "optional": {"type": "string"}}});
        let input = valid_input(&schema);
        assert_eq!(
            input,
            json!({"n": 1, "x": 0.5, "s": "xxxxx", "p": "1", "when": "2026-01-01T00:00:00Z",
                   "tags": ["x", "x"], "inner": {"k": true}, "tz": "UTC"})
        );
        let mut tool = toolcall_score::Tool::new("t", "");
        tool.input_schema = Some(schema);
        assert_eq!(
            toolcall_score::Catalog::new([tool]).validate("t", &input),
            Ok(())
        );
    }

    #[test]
    fn harm_applies_the_spec_defaults() {
        use rmcp::model::ToolAnnotations;
        let with = |read_only: Option<bool>, destructive: Option<bool>| {
            let mut a = ToolAnnotations::default();
            a.read_only_hint = read_only;
            a.destructive_hint = destructive;
            Harm::of(Some(&a))
        };
        assert_eq!(Harm::of(None), Harm::ByDefault);
        assert_eq!(with(None, None), Harm::ByDefault);
        assert_eq!(with(Some(true), None), Harm::None);
        assert_eq!(with(Some(true), Some(true)), Harm::None, "read-only wins");
        assert_eq!(with(None, Some(false)), Harm::None);
        assert_eq!(with(Some(false), Some(true)), Harm::Destructive);
    }

    /// A schema of 3,000 required properties plans 9,001 probes, each a copy of the 3,000 valid
    /// arguments: they are made one at a time, as asked for (all at once took 3.2 GB).
    #[test]
    fn the_inputs_of_a_wide_schema_are_planned_not_made() {
        let properties: Map<String, Value> = (0..3000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let required: Vec<String> = properties.keys().cloned().collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let mut planned = inputs(&schema);
        assert_eq!(planned.len(), 1 + 3000 + 3000 * 2);
        let (breaks, first) = planned.nth(1).unwrap();
        assert_eq!(breaks, "without the required `p0`");
        assert_eq!(first.as_object().unwrap().len(), 2999);
        assert_eq!(planned.len(), 1 + 3000 + 3000 * 2 - 2);
    }
}
