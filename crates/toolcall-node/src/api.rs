//! The addon's operations over JSON text: what the napi functions call, with errors as JSON the
//! JavaScript half turns into `ParseError` and `Error`.

use std::str::FromStr;

use serde_json::{json, Value};
use toolcall_score::tool_loop::{self, LoopPolicy, Reply, Step};
use toolcall_score::{Case, Catalog, Format, InputError, ParseError, Response};

/// An error the JavaScript half throws: `{"error": {"kind", "message", ...}}`.
pub type ApiError = Value;

fn error(kind: &str, message: String) -> ApiError {
    json!({ "error": { "kind": kind, "message": message } })
}

fn parse_error(
    what: &str,
    named: Option<Format>,
    input: Option<&InputError>,
    parse: Option<&ParseError>,
) -> ApiError {
    let parse = parse.or(match input {
        Some(InputError::Invalid { error, .. }) => Some(error),
        _ => None,
    });
    let message = match (input, parse) {
        (Some(e), _) => format!("the {what}: {e}"),
        (None, Some(e)) => format!("the {what}: {e}"),
        (None, None) => format!("the {what} could not be read"),
    };
    let location = input.and_then(InputError::location);
    json!({ "error": {
        "kind": "parse",
        "message": message,
        "what": what,
        "format": named.map(Format::as_str),
        "member": parse.and_then(ParseError::pointer),
        "line": location.map(|l| l.line),
        "column": location.map(|l| l.column),
    }})
}

fn format_of(name: Option<&str>) -> Result<Option<Format>, ApiError> {
    name.map(|n| Format::from_str(n).map_err(|e| error("value", e.to_string())))
        .transpose()
}

fn catalog_of(tools: &str) -> Result<Catalog, ApiError> {
    let value: Value = serde_json::from_str(tools)
        .map_err(|e| parse_error("tools", None, Some(&InputError::syntax(None, &e)), None))?;
    Catalog::from_json(&value).map_err(|e| parse_error("tools", None, None, Some(&e)))
}

fn case_of(tools: Option<&str>, request: Option<&str>) -> Result<Case, ApiError> {
    match (tools, request) {
        (Some(_), Some(_)) => Err(error("value", "give tools or request, not both".into())),
        (None, None) => Err(error(
            "value",
            "give tools (a tools array) or request (the request sent): without them every call is unknown".into(),
        )),
        (Some(tools), None) => catalog_of(tools).map(Case::from_catalog),
        (None, Some(request)) => {
            Case::from_json_str(request).map_err(|e| parse_error("request", None, Some(&e), None))
        }
    }
}

/// The verdict as `toolcall score --json` prints it, plus `"message"`: what the CLI prints of it.
pub fn verdict_json(verdict: &toolcall_score::Verdict) -> Value {
    let mut value = serde_json::to_value(verdict).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("message".into(), Value::String(verdict.to_string()));
    }
    value
}

/// Scores `response` (JSON text or a recorded stream) against `tools` or `request` (JSON text).
pub fn score(
    response: &str,
    tools: Option<&str>,
    request: Option<&str>,
    format: Option<&str>,
) -> Result<Value, ApiError> {
    let case = case_of(tools, request)?;
    let format = format_of(format)?.or(case.format);
    let response = Response::from_json_str(response, format)
        .map_err(|e| parse_error("response", format, Some(&e), None))?;
    Ok(verdict_json(&toolcall_score::score(&case, &response)))
}

/// A case prepared once for scoring many responses (`Scorer` in JavaScript).
#[derive(Debug)]
pub struct Prepared {
    case: Case,
}

impl Prepared {
    /// The case from `tools` or `request` (JSON text).
    pub fn new(tools: Option<&str>, request: Option<&str>) -> Result<Prepared, ApiError> {
        Ok(Prepared {
            case: case_of(tools, request)?,
        })
    }

    /// [`score`] against the prepared case.
    pub fn score(&self, response: &str, format: Option<&str>) -> Result<Value, ApiError> {
        let format = format_of(format)?.or(self.case.format);
        let response = Response::from_json_str(response, format)
            .map_err(|e| parse_error("response", format, Some(&e), None))?;
        Ok(verdict_json(&toolcall_score::score(&self.case, &response)))
    }
}

/// The loop guard with the calls of its last `Continue` kept until they are answered.
#[derive(Debug)]
pub struct Guard {
    inner: toolcall_score::ToolLoop,
    pending: Option<tool_loop::PendingResults>,
}

fn calls_json(calls: &[toolcall_score::ToolCall]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|c| {
                let arguments = match &c.arguments {
                    toolcall_score::Arguments::Parsed(v) => v.clone(),
                    toolcall_score::Arguments::Text { text } => Value::String(text.clone()),
                    toolcall_score::Arguments::Json(text) => text
                        .value()
                        .cloned()
                        .unwrap_or_else(|| Value::String(text.raw().to_owned())),
                };
                json!({ "id": c.id, "name": c.name, "arguments": arguments })
            })
            .collect(),
    )
}

fn results_json(results: &tool_loop::ToolResults) -> Value {
    json!({
        "format": results.format().as_str(),
        "messages": results.messages(),
        "results": serde_json::to_value(results.results()).unwrap_or(Value::Null),
        "duplicateIds": results.duplicate_ids(),
    })
}

impl Guard {
    /// A guard over `tools` (JSON text: any provider's tools array, or a request).
    pub fn new(
        tools: &str,
        max_steps: usize,
        max_unknown_per_turn: usize,
        list_available: bool,
    ) -> Result<Guard, ApiError> {
        let policy = LoopPolicy {
            max_steps,
            max_unknown_per_turn,
            list_available_in_errors: list_available,
        };
        Ok(Guard {
            inner: toolcall_score::ToolLoop::new(catalog_of(tools)?, policy),
            pending: None,
        })
    }

    /// Handles the next response: `{"done": false, "execute", "calls", "format"}` (answer it
    /// with [`Guard::answer`]) or `{"done": true, "outcome", "text", "closing"}`.
    pub fn step(&mut self, response: &str, format: Option<&str>) -> Result<Value, ApiError> {
        let format = format_of(format)?;
        let reply = match serde_json::from_str::<Value>(response) {
            Ok(body) => Reply::Json { body, format },
            Err(_) => match Response::from_json_str(response, format) {
                Ok(parsed) => Reply::Parsed(parsed),
                Err(_) => Reply::Json {
                    body: Value::String(response.to_owned()),
                    format,
                },
            },
        };
        self.pending = None;
        Ok(match self.inner.step(reply) {
            Step::Continue(pending) => {
                let execute: Vec<toolcall_score::ToolCall> = pending.execute().cloned().collect();
                let value = json!({
                    "done": false,
                    "format": pending.format().as_str(),
                    "execute": calls_json(&execute),
                    "calls": calls_json(pending.calls()),
                });
                self.pending = Some(pending);
                value
            }
            Step::Done(end) => json!({
                "done": true,
                "outcome": serde_json::to_value(&end.outcome).unwrap_or(Value::Null),
                "message": end.outcome.to_string(),
                "text": end.text(),
                "closing": end.closing.as_ref().map(results_json),
            }),
        })
    }

    /// Answers the last `Continue`: `outputs` is a JSON array, one `{"ok": value}` or
    /// `{"error": text}` per executed call, in order.
    pub fn answer(&mut self, outputs: &str) -> Result<Value, ApiError> {
        let outputs: Vec<Value> =
            serde_json::from_str(outputs).map_err(|e| error("value", e.to_string()))?;
        let outputs: Vec<tool_loop::ToolOutput> = outputs
            .into_iter()
            .map(|o| match o {
                Value::Object(mut m) if m.contains_key("error") => Err(m
                    .remove("error")
                    .and_then(|e| e.as_str().map(str::to_owned))
                    .unwrap_or_default()),
                Value::Object(mut m) => Ok(m.remove("ok").unwrap_or(Value::Null)),
                other => Ok(other),
            })
            .collect();
        let pending = self.pending.take().ok_or_else(|| {
            error(
                "state",
                "no calls are waiting to be answered (already answered, or the turn moved on)"
                    .into(),
            )
        })?;
        // A wrong count is refused with the calls still waiting, as in Python.
        let expected = pending.execute().len();
        if outputs.len() != expected {
            self.pending = Some(pending);
            return Err(error(
                "value",
                format!(
                    "{} tool output(s) given for {expected} executed call(s): give exactly one \
                     per call of `execute`, in the same order",
                    outputs.len()
                ),
            ));
        }
        pending
            .answer(outputs)
            .map(|results| results_json(&results))
            .map_err(|e| error("value", e.to_string()))
    }

    /// Forgets the turn in progress.
    pub fn reset_turn(&mut self) {
        self.pending = None;
        self.inner.reset_turn();
    }

    /// The counters: `{"turns", "turn", "total"}`.
    pub fn metrics(&self) -> Value {
        serde_json::to_value(self.inner.metrics()).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &str = r#"[{"name": "get_weather", "input_schema": {"type": "object"}}]"#;
    const CALL: &str = r#"{"type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "tu_1", "name": "fetch_weather", "input": {}}]}"#;

    #[test]
    fn a_verdict_carries_the_clis_message() {
        let verdict = score(CALL, Some(TOOLS), None, None).unwrap();
        assert_eq!(verdict["verdict"], "fail");
        assert_eq!(verdict["findings"][0]["suggestions"][0], "get_weather");
        assert!(verdict["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `get_weather`?"));
        let e = score("{nope", Some(TOOLS), None, None).unwrap_err();
        assert_eq!(
            (e["error"]["kind"].as_str(), e["error"]["line"].as_u64()),
            (Some("parse"), Some(1))
        );
    }

    #[test]
    fn the_guard_answers_by_id_and_counts() {
        let mut guard = Guard::new(TOOLS, 10, 2, true).unwrap();
        let step = guard.step(CALL, None).unwrap();
        assert_eq!(step["done"], false);
        let results = guard.answer("[]").unwrap();
        assert_eq!(results["messages"][0]["content"][0]["tool_use_id"], "tu_1");
        assert_eq!(guard.metrics()["turn"]["unknown_calls"], 1);
        assert!(guard.answer("[]").is_err());
    }
}
