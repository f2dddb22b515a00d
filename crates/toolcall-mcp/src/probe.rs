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
#[derive(Clone, Debug, Default)]
pub struct ProbeOptions {
    /// The tools to probe; empty for every tool.
    pub tools: Vec<String>,
    /// Probe tools annotated `destructiveHint: true` too.
    pub include_destructive: bool,
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
    /// The arguments sent.
    pub input: Value,
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
        let input = printable_result(&self.input);
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
    /// Why the probe could not run at all (the server did not start, or list).
    pub failure: Option<Failure>,
}

impl ProbeReport {
    /// The probes whose answer was not a refusal.
    pub fn findings(&self) -> impl Iterator<Item = &Probe> {
        self.probes.iter().filter(|p| p.is_finding())
    }
}

/// The inputs that break `schema`, each with what it breaks, in a fixed order: no arguments
/// (when something is required), each required property missing, each property of the wrong
/// type, each required property `null`, numbers past their bounds, an integer with a fraction,
/// strings past `maxLength`, an enum's outsider, an extra property where none is allowed.
/// Every input but the one it breaks is valid as far as the schema's top level says.
pub fn inputs(schema: &Value) -> Vec<(String, Value)> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let valid: Map<String, Value> = properties
        .iter()
        .filter(|(name, _)| required.contains(name))
        .map(|(name, p)| (name.clone(), example(p)))
        .collect();
    let with = |name: &str, value: Value| {
        let mut input = valid.clone();
        input.insert(name.to_owned(), value);
        Value::Object(input)
    };
    let mut out = Vec::new();
    if !required.is_empty() {
        out.push(("with no arguments".to_owned(), json!({})));
    }
    for name in &required {
        let mut input = valid.clone();
        input.remove(name);
        out.push((
            format!("without the required `{}`", escape(name)),
            Value::Object(input),
        ));
    }
    for (name, property) in &properties {
        let shown = escape(name);
        if let Some(wrong) = wrong_type(property) {
            out.push((
                format!("with `{shown}` of the wrong type"),
                with(name, wrong),
            ));
        }
        if required.contains(name) && !allows_null(property) {
            out.push((format!("with `{shown}` null"), with(name, Value::Null)));
        }
        if let Some(min) = property.get("minimum").and_then(Value::as_f64) {
            out.push((
                format!("with `{shown}` below its minimum"),
                with(name, number(min - 1.0)),
            ));
        }
        if let Some(max) = property.get("maximum").and_then(Value::as_f64) {
            out.push((
                format!("with `{shown}` above its maximum"),
                with(name, number(max + 1.0)),
            ));
        }
        if property.get("type").and_then(Value::as_str) == Some("integer") {
            out.push((
                format!("with `{shown}` not a whole number"),
                with(name, json!(1.5)),
            ));
        }
        if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
            let long = "x".repeat(
                usize::try_from(max)
                    .unwrap_or(0)
                    .saturating_add(1)
                    .min(1 << 20),
            );
            out.push((
                format!("with `{shown}` past its maxLength"),
                with(name, json!(long)),
            ));
        }
        if let Some(values) = property.get("enum").and_then(Value::as_array) {
            let outsider = json!("__not_one_of_the_values__");
            if !values.contains(&outsider) {
                out.push((
                    format!("with `{shown}` not one of its values"),
                    with(name, outsider),
                ));
            }
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        out.push((
            "with a property it does not list".to_owned(),
            with("__unlisted__", json!("x")),
        ));
    }
    out
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
        for (breaks, input) in inputs(&schema) {
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
                input: flow.mask_value(&input),
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
        let got: Vec<String> = inputs(&schema)
            .into_iter()
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
        assert_eq!(inputs(&schema), inputs(&schema), "deterministic");
        assert!(
            inputs(&json!({"type": "object"})).is_empty(),
            "nothing to break"
        );
    }
}
