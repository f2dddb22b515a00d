//! Filling in a call's `${steps.ID…}` references ([`crate::Capture`]) from the results of the
//! calls before it, when the call is made.

use std::collections::BTreeMap;

use serde_json::Value;
use toolcall_score::escape;

use crate::capture::{Piece, StepRef};
use crate::expect::printable_result;
use crate::Call;

/// `call`'s input with every reference filled in from `results` (the wire result of each
/// earlier call that has an id and went through); `calls` are the flow's, to say why a step
/// has no result. The error names the reference, the step and the path.
pub(crate) fn fill_in(
    call: &Call,
    calls: &[Call],
    results: &BTreeMap<String, Value>,
) -> Result<Value, String> {
    let mut input = call.input.clone();
    for capture in &call.captures {
        let mut values = Vec::with_capacity(capture.pieces.len());
        for piece in &capture.pieces {
            values.push(match piece {
                Piece::Text(text) => Value::String(text.clone()),
                Piece::Ref(r) => resolve(r, calls, results)?,
            });
        }
        let value = match (capture.pieces.as_slice(), values.as_slice()) {
            ([Piece::Ref(_)], [one]) => one.clone(),
            _ => Value::String(
                values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
            ),
        };
        if let Some(slot) = input.pointer_mut(&capture.pointer) {
            *slot = value;
        } else if capture.pointer.is_empty() {
            input = value;
        }
    }
    Ok(input)
}

/// The value `r` names.
fn resolve(
    r: &StepRef,
    calls: &[Call],
    results: &BTreeMap<String, Value>,
) -> Result<Value, String> {
    let written = escape(&r.written);
    let step = escape(&r.step);
    let Some(result) = results.get(&r.step) else {
        let why = match calls
            .iter()
            .find(|c| c.id.as_deref() == Some(r.step.as_str()))
        {
            Some(c) if c.skip.is_some() => format!(
                "was skipped ({}), so it has no result",
                escape(c.skip.as_deref().unwrap_or_default())
            ),
            Some(c) if c.expect_error.is_some() => {
                "was refused (expect_error), so it has no result".to_owned()
            }
            _ => "has no result".to_owned(),
        };
        return Err(format!("`{written}`: step `{step}` {why}"));
    };
    let Some(path) = &r.path else {
        return crate::expect::first_text(result)
            .map(|t| Value::String(t.to_owned()))
            .ok_or_else(|| format!("`{written}`: step `{step}`'s result has no text block"));
    };
    let doc = crate::expect::document(result)
        .map_err(|why| format!("`{written}`: step `{step}`: {why}"))?;
    let mut here = &doc;
    for (n, segment) in path.iter().enumerate() {
        let next = match here {
            Value::Object(map) => map.get(segment),
            Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(v) => here = v,
            None => {
                let reached = if n == 0 {
                    "result".to_owned()
                } else {
                    format!("result.{}", path[..n].join("."))
                };
                return Err(format!(
                    "`{written}`: step `{step}`'s result has no `{}` (at `{}`: {})",
                    escape(&path[..=n].join(".")),
                    escape(&reached),
                    printable_result(here)
                ));
            }
        }
    }
    Ok(here.clone())
}
