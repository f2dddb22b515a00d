//! Scoring: a case and a response in, a verdict out.
//!
//! The order of checks is the order of the findings: provider-reported anomalies, then each call
//! in turn (membership first; arguments only for defined tools, so an unknown call gives one
//! finding, not three), then names written only in text, then the transcript.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::mention::{mentions, mentions_word};
use crate::{
    namespace, suggest, AnomalyKind, Arguments, Case, Cause, Expect, Finding, FindingKind,
    Response, ToolCall, Verdict,
};

/// Scores `response` against `case`: pass, or the findings, each naming the offending tool with
/// its probable [`Cause`] and the defined names it was likely meant to be.
pub fn score(case: &Case, response: &Response) -> Verdict {
    let mut findings = Vec::new();
    for anomaly in &response.anomalies {
        let kind = match anomaly.kind {
            AnomalyKind::MalformedCall => FindingKind::MalformedCall,
            AnomalyKind::UnexpectedToolCall => FindingKind::UnexpectedToolCall,
            AnomalyKind::LegacyMismatch => FindingKind::LegacyMismatch,
        };
        findings.push(Finding::new(kind, "response", anomaly.detail.clone()));
    }
    score_calls(case, response, &mut findings);
    score_text(case, response, &mut findings);
    check_transcript(case, &mut findings);
    Verdict::new(findings)
}

fn score_calls(case: &Case, response: &Response, findings: &mut Vec<Finding>) {
    let mut seen_ids: HashSet<&str> = HashSet::with_capacity(response.calls.len());
    for (i, call) in response.calls.iter().enumerate() {
        let location = format!("response call {}", i + 1);
        if let Some(id) = call.id.as_deref() {
            if !seen_ids.insert(id) {
                let mut finding = Finding::new(
                    FindingKind::DuplicateCallId,
                    location.clone(),
                    "another call in this response has the same id; results cannot be paired",
                );
                finding.name = Some(call.name.clone());
                finding.call_id = Some(id.to_owned());
                findings.push(finding);
            }
        }
        if case.expect == Expect::NoCall {
            let mut finding = Finding::new(
                FindingKind::CallWhereNoToolFits,
                location.clone(),
                "the case says no tool fits this request, but the model called one",
            );
            finding.name = Some(call.name.clone());
            finding.call_id = call.id.clone();
            findings.push(finding);
        }
        match resolve(case, call) {
            Some(defined) => check_arguments(case, call, defined, &location, findings),
            None => findings.push(unknown(case, &call.name, call.id.clone(), location, false)),
        }
    }
}

/// The defined name a call refers to: its own name, or with its Responses API `namespace`.
fn resolve<'a>(case: &'a Case, call: &ToolCall) -> Option<&'a str> {
    if let Some(tool) = case.catalog.get(&call.name) {
        return Some(&tool.name);
    }
    let namespace = call.namespace.as_deref()?;
    ["__", ".", "/"].iter().find_map(|sep| {
        case.catalog
            .get(&format!("{namespace}{sep}{}", call.name))
            .map(|tool| tool.name.as_str())
    })
}

/// An unknown-name finding with its cause and suggestions.
fn unknown(
    case: &Case,
    name: &str,
    call_id: Option<String>,
    location: String,
    in_text: bool,
) -> Finding {
    let cause = if in_text {
        Cause::Prose
    } else {
        cause(case, name)
    };
    let detail = match cause {
        Cause::Retired => "not defined; the transcript shows it called earlier, so it was probably retired while the transcript still shows it".to_owned(),
        Cause::Subset => "not defined for this agent; it is in the parent agent's catalog, so this sub-agent was handed a subset".to_owned(),
        Cause::Namespace => "not defined; it is a defined tool with a namespace prefix added or removed".to_owned(),
        Cause::PromptDrift => "not defined; the system prompt or a tool description still tells the model to use it".to_owned(),
        Cause::Prose => "not defined; the response names it as a call in its text instead of making a structured call".to_owned(),
        Cause::Invented => "not defined, and nothing in the request mentions it".to_owned(),
    };
    let mut finding = Finding::new(FindingKind::UnknownTool, location, detail);
    finding.name = Some(name.to_owned());
    finding.cause = Some(cause);
    finding.suggestions = Some(suggest(name, &case.catalog));
    finding.call_id = call_id;
    finding
}

/// Why an unknown name in a structured call probably appeared; the first [`Cause`] that fits.
fn cause(case: &Case, name: &str) -> Cause {
    let transcript = &case.transcript;
    if transcript.calls().any(|c| c.name == name)
        || transcript
            .results()
            .any(|r| r.name.as_deref() == Some(name))
    {
        return Cause::Retired;
    }
    if case.parent.as_ref().is_some_and(|p| p.contains(name)) {
        return Cause::Subset;
    }
    if case
        .catalog
        .names()
        .any(|defined| namespace::relates(name, defined))
    {
        return Cause::Namespace;
    }
    if mentions_word(&case.system, name)
        || case
            .catalog
            .tools()
            .iter()
            .any(|t| mentions_word(&t.description, name))
    {
        return Cause::PromptDrift;
    }
    Cause::Invented
}

fn check_arguments(
    case: &Case,
    call: &ToolCall,
    defined: &str,
    location: &str,
    findings: &mut Vec<Finding>,
) {
    let mut finding = |kind, detail: String| {
        let mut f = Finding::new(kind, location, detail);
        f.name = Some(call.name.clone());
        f.call_id = call.id.clone();
        findings.push(f);
    };
    match &call.arguments {
        Arguments::Invalid { raw, error } => finding(
            FindingKind::ArgumentsNotJson,
            format!(
                "the arguments string is not valid JSON ({error}): {}",
                crate::errors::describe(&Value::String(raw.clone()))
            ),
        ),
        Arguments::Parsed(value) if !value.is_object() => finding(
            FindingKind::ArgumentsNotObject,
            format!(
                "arguments must be a JSON object, found {}",
                crate::errors::describe(value)
            ),
        ),
        Arguments::Parsed(value) => {
            #[cfg(feature = "schema")]
            if let Err(errors) = case.catalog.validate(defined, value) {
                finding(
                    FindingKind::SchemaViolation,
                    format!("arguments fail the input schema: {}", errors.join("; ")),
                );
            }
            #[cfg(not(feature = "schema"))]
            let _ = (case, defined, value);
        }
    }
}

/// Names written as calls in the response's text that are not defined and were not also called
/// for real (those already have their finding).
fn score_text(case: &Case, response: &Response, findings: &mut Vec<Finding>) {
    if response.text.is_empty() {
        return;
    }
    let called: HashSet<&str> = response.calls.iter().map(|c| c.name.as_str()).collect();
    let parameters = parameter_names(case);
    let mut reported: HashSet<String> = HashSet::new();
    for (i, text) in response.text.iter().enumerate() {
        for mention in mentions(text) {
            let name = mention.name;
            if case.catalog.contains(&name)
                || called.contains(name.as_str())
                || parameters.contains(name.as_str())
                || reported.contains(&name)
            {
                continue;
            }
            let location = format!("response text {}", i + 1);
            let mut finding = unknown(case, &name, None, location, true);
            finding.detail = format!(
                "{}: \"{}\"",
                finding.detail,
                crate::escape(&mention.context)
            );
            reported.insert(name);
            findings.push(finding);
        }
    }
}

/// Top-level property names of every tool's input schema: words that look like tool names in
/// prose but are arguments (`account_id`).
pub(crate) fn parameter_names(case: &Case) -> HashSet<&str> {
    case.catalog
        .tools()
        .iter()
        .filter_map(|t| t.input_schema.as_ref()?.get("properties")?.as_object())
        .flat_map(|properties| properties.keys().map(String::as_str))
        .collect()
}

/// Every call in the transcript must have a result, or the provider rejects the next request.
/// Calls are paired with results by id; calls without ids (Gemini, Ollama) by name, in order.
fn check_transcript(case: &Case, findings: &mut Vec<Finding>) {
    let transcript = &case.transcript;
    let answered_ids: HashSet<&str> = transcript
        .results()
        .filter_map(|r| r.call_id.as_deref())
        .collect();
    let mut answers_by_name: HashMap<&str, usize> = HashMap::new();
    let mut anonymous_answers = 0usize;
    for result in transcript.results().filter(|r| r.call_id.is_none()) {
        match result.name.as_deref() {
            Some(name) => *answers_by_name.entry(name).or_default() += 1,
            None => anonymous_answers += 1,
        }
    }
    for (m, message) in transcript.messages.iter().enumerate() {
        for call in &message.calls {
            let answered = match call.id.as_deref() {
                Some(id) => answered_ids.contains(id),
                None => match answers_by_name.get_mut(call.name.as_str()) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ if anonymous_answers > 0 => {
                        anonymous_answers -= 1;
                        true
                    }
                    _ => false,
                },
            };
            if !answered {
                let mut finding = Finding::new(
                    FindingKind::UnansweredCall,
                    format!("transcript message {}", m + 1),
                    "this call has no tool result in the transcript; providers reject the next request (HTTP 400)",
                );
                finding.name = Some(call.name.clone());
                finding.call_id = call.id.clone();
                findings.push(finding);
            }
        }
    }
}
