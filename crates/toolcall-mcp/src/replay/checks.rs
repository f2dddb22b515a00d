//! What a call and its result are checked against, and the sentence when they fail: the
//! catalog (an unknown tool, with suggestions), the tool's `outputSchema`, and an
//! `expect_error` refusal.

use std::time::Duration;

use serde_json::Value;
use toolcall_score::{escape, Catalog, SchemaError};

use super::run::Phase;
use super::{Failure, FailureKind, Step};
use crate::{Call, ExpectError};

/// Checks a successful result against the tool's `outputSchema`, when it declares one: the
/// result must carry `structuredContent`, and it must match.
pub(super) fn check_output(outputs: &Catalog, name: &str, result: &Value) -> Result<(), String> {
    if !outputs.contains(name) {
        return Ok(());
    }
    let Some(structured) = result.get("structuredContent") else {
        return Err(
            "the tool declares an outputSchema, but its result has no structuredContent".into(),
        );
    };
    match outputs.validate(name, structured) {
        Ok(()) => Ok(()),
        Err(SchemaError::Violations(errors)) => Err(format!(
            "the structuredContent does not match the tool's outputSchema: {}",
            schema_errors(&errors)
        )),
        Err(SchemaError::Uncompilable(why)) => Err(format!(
            "the server's outputSchema does not compile, so its structuredContent cannot be \
             checked: {}",
            escape(&why)
        )),
        Err(_) => Ok(()),
    }
}

/// A schema check's errors on one line, each escaped (they quote the checked values).
pub(super) fn schema_errors(errors: &[String]) -> String {
    errors
        .iter()
        .map(|e| escape(e).to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn unknown_tool(name: &str, catalog: &Catalog) -> String {
    const SHOWN: usize = 20;
    let mut names: Vec<String> = catalog
        .names()
        .take(SHOWN)
        .map(|n| escape(n).to_string())
        .collect();
    if catalog.len() > SHOWN {
        names.push(format!("and {} more", catalog.len() - SHOWN));
    }
    let mut message = format!(
        "not a tool the server lists ({}: {})",
        match catalog.len() {
            1 => "1 tool".to_owned(),
            n => format!("{n} tools"),
        },
        names.join(", ")
    );
    // Every suggestion, as the scorer gives them: when two are about as close, the first is
    // not always the one meant.
    let suggestions = toolcall_score::suggest(name, catalog);
    if !suggestions.is_empty() {
        let names: Vec<String> = suggestions.iter().map(|n| escape(n).to_string()).collect();
        message.push_str(&format!("; did you mean {}?", names.join(" or ")));
    }
    message
}

/// How a server refused a call.
pub(super) enum Refusal<'a> {
    /// A JSON-RPC error: its code and message.
    Rpc(i64, &'a str),
    /// An `isError: true` result: its first text.
    IsError(&'a str),
}

/// What an `expect_error` asks for, in words.
pub(super) fn describe(wanted: &ExpectError) -> String {
    match wanted {
        ExpectError::Code(code) => format!("JSON-RPC error {code}"),
        ExpectError::Text(text) => format!("an error containing \"{}\"", escape(text)),
        _ => "an isError result or a JSON-RPC error".to_owned(),
    }
}

/// The step of a call the server refused as `wanted` asks, or the failure saying how the
/// refusal differed.
pub(super) fn refused(
    phase: &Phase,
    call: &Call,
    wanted: &ExpectError,
    refusal: &Refusal<'_>,
    elapsed: Duration,
) -> Result<Step, Failure> {
    let (text, got) = match refusal {
        Refusal::Rpc(code, message) => (
            *message,
            format!("JSON-RPC error {code}: {}", escape(message)),
        ),
        Refusal::IsError(text) => (*text, format!("an isError result: {}", escape(text))),
    };
    let matches = match wanted {
        ExpectError::Code(code) => matches!(refusal, Refusal::Rpc(c, _) if c == code),
        ExpectError::Text(want) => text.contains(want.as_str()),
        _ => true,
    };
    if !matches {
        return Err(phase.fail(
            FailureKind::Expectation,
            format!("expected {}, got {got}", describe(wanted)),
        ));
    }
    Ok(Step {
        index: phase.step.unwrap_or_default(),
        name: call.name.clone(),
        elapsed,
        rounds: 1,
        skipped: None,
        sent: None,
        result: match refusal {
            Refusal::Rpc(code, message) => {
                serde_json::json!({"refused": {"code": code, "message": message}})
            }
            Refusal::IsError(text) => {
                serde_json::json!({"refused": {"isError": true, "text": text}})
            }
        },
    })
}
