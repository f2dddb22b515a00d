//! The robustness probe: each tool called with arguments its own `inputSchema` forbids, and
//! every answer checked to be a refusal.
//!
//! A server must refuse bad input cleanly, with an `isError` result or a JSON-RPC error
//! (-32602, invalid params), within the call timeout. A crash, a hang, or a success on input
//! the schema forbids is a finding naming the tool and the input: the same bugs mcp-assert's
//! schema-driven fuzzing found (null arguments crashing servers built on a popular SDK). The
//! inputs are derived from the schema alone ([`inputs`]), so the same schema always gives the
//! same probes. Tools annotated `destructiveHint: true` are skipped unless asked for.

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
    /// Probe tools annotated `destructiveHint: true` too.
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
}

impl Probe {
    /// Whether the answer is a finding (anything but a refusal).
    pub fn is_finding(&self) -> bool {
        !matches!(self.answer, Answer::Refused(_))
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = &self.input;
        let tool = escape(&self.tool);
        match &self.answer {
            Answer::Refused(why) => write!(
                f,
                "ok     `{tool}` {}: refused ({})",
                self.breaks,
                escape(why)
            ),
            Answer::Accepted(result) => write!(
                f,
                "ACCEPT `{tool}` {}: {input} was accepted though its schema forbids it: {}",
                self.breaks,
                printable_result(result)
            ),
            Answer::Hang => write!(
                f,
                "HANG   `{tool}` {}: {input} got no answer in time",
                self.breaks
            ),
            Answer::Crash(how) => write!(
                f,
                "CRASH  `{tool}` {}: {input} killed the server: {}",
                self.breaks,
                escape(how)
            ),
            Answer::Other(what) => write!(
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

/// A value of `property`'s type (its first enum value, or its minimum, when it has one).
fn example(property: &Value) -> Value {
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|v| v.first())
    {
        return first.clone();
    }
    let min = property.get("minimum").and_then(Value::as_f64);
    match types(property).first().copied() {
        Some("integer") => json!(min.map_or(1, |m| m.ceil() as i64)),
        Some("number") => json!(min.unwrap_or(1.0)),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        Some("null") => Value::Null,
        _ => json!("x"),
    }
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
        let destructive = tool
            .annotations
            .as_ref()
            .and_then(|a| a.destructive_hint)
            .unwrap_or(false);
        if destructive && !what.include_destructive {
            report.skipped.push((
                name,
                "annotated destructive (--include-destructive probes it)".into(),
            ));
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let planned = inputs(&schema);
        if planned.len() > what.max_per_tool {
            report.capped.push((name.clone(), planned.len()));
        }
        for (breaks, input) in planned.take(what.max_per_tool) {
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
            let restart = matches!(answer, Answer::Crash(_) | Answer::Hang);
            report.probes.push(Probe {
                tool: name.clone(),
                breaks,
                input: printable_result(&flow.mask_value(&input)),
                answer,
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
