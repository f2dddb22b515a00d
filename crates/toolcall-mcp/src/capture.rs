//! `${steps.ID.result.PATH}`: a value from an earlier call's result in a later call's `input`.
//!
//! Multi-step flows need it: a server that mints an id (`create_issue` → `#42`) is called with
//! that id next (`close_issue`), and no recording can pin a value that differs on every run.
//!
//! A reference is read with the flow (so a reference to a step that does not exist, or comes
//! later, is the flow file's error, naming the place), and filled in when its call is made, from
//! the results of the calls before it. `PATH` is dotted: `result.orders.0.id` is the JSON
//! pointer `/orders/0/id` into the same document `expect` reads (the `structuredContent`, else
//! the first text block that parses as JSON); `result` alone is the whole of it, and `text` the
//! first text block. A string that is one reference and nothing else takes the value as it is
//! (a number stays a number); a reference inside a longer string is written into it (a string
//! as it is, any other value as JSON).

use serde_json::Value;
use toolcall_score::escape;

use crate::errors::FlowError;

/// The start of a reference; what follows up to `}` is `ID.result[.PATH]` or `ID.text`.
const PREFIX: &str = "${steps.";

/// A string of a call's `input` that holds `${steps.…}` references: where it is, and its
/// pieces.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    /// The JSON pointer of the string inside `input`.
    pub(crate) pointer: String,
    pub(crate) pieces: Vec<Piece>,
}

impl Capture {
    /// The ids of the steps this string refers to.
    pub(crate) fn steps(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Ref(reference) => Some(reference.step.as_str()),
            Piece::Text(_) => None,
        })
    }
}

/// A piece of such a string: text (its `${VAR}`s already expanded), or a reference.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Ref(StepRef),
}

/// `${steps.ID.result.PATH}` or `${steps.ID.text}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StepRef {
    /// As the flow writes it, for messages.
    pub(crate) written: String,
    pub(crate) step: String,
    /// `None` for `text` (the first text block); the path's segments for `result`.
    pub(crate) path: Option<Vec<String>>,
}

/// Why `input` could not be taken apart.
pub(crate) enum TakeApart {
    /// An unset `${VAR}`, as any other part of a flow names it.
    Flow(FlowError),
    /// A reference that is not one, or names no earlier step.
    Invalid { at: String, message: String },
}

/// `value` (found at `at` in the flow, and at `pointer` inside the call's `input`) with each
/// string that holds a reference noted in `captures` and written back escaped (`$$`), so that
/// expanding `${VAR}` in it afterwards leaves it as it reads. `ids` are the earlier calls' ids.
pub(crate) fn take_apart(
    value: Value,
    at: &str,
    pointer: &str,
    ids: &[Option<String>],
    captures: &mut Vec<Capture>,
    expand: &dyn Fn(&str, &str) -> Result<String, FlowError>,
) -> Result<Value, TakeApart> {
    Ok(match value {
        Value::String(text) if text.contains(PREFIX) => {
            let pieces = pieces(&text, at, ids, expand)?;
            // `$${steps.…}` is those characters: no reference, the string as any other.
            if !pieces.iter().any(|p| matches!(p, Piece::Ref(_))) {
                return Ok(Value::String(text));
            }
            let shown: String = pieces
                .iter()
                .map(|p| match p {
                    Piece::Text(t) => t.replace('$', "$$"),
                    Piece::Ref(r) => r.written.replace('$', "$$"),
                })
                .collect();
            captures.push(Capture {
                pointer: pointer.to_owned(),
                pieces,
            });
            Value::String(shown)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    take_apart(
                        v,
                        &format!("{at}/{i}"),
                        &format!("{pointer}/{i}"),
                        ids,
                        captures,
                        expand,
                    )
                })
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let token = pointer_token(&k);
                    let v = take_apart(
                        v,
                        &format!("{at}/{token}"),
                        &format!("{pointer}/{token}"),
                        ids,
                        captures,
                        expand,
                    )?;
                    Ok((k, v))
                })
                .collect::<Result<_, TakeApart>>()?,
        ),
        other => other,
    })
}

/// `text` cut at its references; `$$` (a `$`) is never the start of one.
fn pieces(
    text: &str,
    at: &str,
    ids: &[Option<String>],
    expand: &dyn Fn(&str, &str) -> Result<String, FlowError>,
) -> Result<Vec<Piece>, TakeApart> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    let flush = |literal: &mut String, pieces: &mut Vec<Piece>| -> Result<(), TakeApart> {
        if !literal.is_empty() {
            let expanded = expand(at, literal).map_err(TakeApart::Flow)?;
            pieces.push(Piece::Text(expanded));
            literal.clear();
        }
        Ok(())
    };
    while let Some(i) = rest.find('$') {
        literal.push_str(&rest[..i]);
        let here = &rest[i..];
        if let Some(after) = here.strip_prefix("$$") {
            literal.push_str("$$");
            rest = after;
        } else if here.starts_with(PREFIX) {
            let Some(end) = here.find('}') else {
                return Err(TakeApart::Invalid {
                    at: at.to_owned(),
                    message: format!("`{}` has no closing `}}`", escape(here)),
                });
            };
            flush(&mut literal, &mut pieces)?;
            let written = &here[..=end];
            pieces.push(Piece::Ref(step_ref(written, at, ids)?));
            rest = &here[end + 1..];
        } else {
            literal.push('$');
            rest = &here[1..];
        }
    }
    literal.push_str(rest);
    flush(&mut literal, &mut pieces)?;
    Ok(pieces)
}

/// `${steps.ID.result[.PATH]}` or `${steps.ID.text}`, naming an earlier call's id.
fn step_ref(written: &str, at: &str, ids: &[Option<String>]) -> Result<StepRef, TakeApart> {
    let invalid = |message: String| TakeApart::Invalid {
        at: at.to_owned(),
        message: format!("`{}` {message}", escape(written)),
    };
    let body = &written[PREFIX.len()..written.len() - 1];
    let mut segments = body.split('.');
    let step = segments.next().unwrap_or_default().to_owned();
    let part = segments.next();
    let rest: Vec<String> = segments.map(str::to_owned).collect();
    let shape = "is not a step reference: write ${steps.ID.result} (the result's JSON), \
                 ${steps.ID.result.PATH} (a dotted path into it, `orders.0.id`) or \
                 ${steps.ID.text} (its first text block)";
    let path = match part {
        Some("result") if rest.iter().all(|s| !s.is_empty()) => Some(rest),
        Some("text") if rest.is_empty() => None,
        _ => return Err(invalid(shape.to_owned())),
    };
    if step.is_empty() {
        return Err(invalid(shape.to_owned()));
    }
    if !ids.iter().any(|id| id.as_deref() == Some(step.as_str())) {
        let known: Vec<String> = ids
            .iter()
            .flatten()
            .map(|id| format!("`{}`", escape(id)))
            .collect();
        return Err(invalid(format!(
            "names step `{}`, which no earlier call has as its \"id\" ({})",
            escape(&step),
            if known.is_empty() {
                "no earlier call has an id".to_owned()
            } else {
                format!("earlier ids: {}", known.join(", "))
            }
        )));
    }
    Ok(StepRef {
        written: written.to_owned(),
        step,
        path,
    })
}

/// `key` as one token of a JSON pointer (`~` and `/` escaped), as a flow's reader writes one.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
