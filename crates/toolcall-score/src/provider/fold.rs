//! What every format's stream assembly (its module's `stream.rs`) is written with: the body it
//! folds the events into, where each part of that body came from, and the helpers that read an
//! event's pieces. Below the framing in `stream.rs`, which asks each format's `Wire` to fold.

use serde_json::Value;

use super::read::{get, opt_string, At, Object};
use crate::errors::ParseError;

/// An error, with the event (by index) its pointer is inside of; `None` for the whole stream.
pub(super) struct Fault {
    pub(super) event: Option<usize>,
    pub(super) error: ParseError,
}

/// A closure turning an error inside event `event` into a [`Fault`].
pub(super) fn at_event(event: usize) -> impl Fn(ParseError) -> Fault {
    move |error| Fault {
        event: Some(event),
        error,
    }
}

/// Where a part of the assembled body came from: the value at `body` (a JSON pointer into the
/// body) is, or was built from, the value at `source` inside event `event`.
pub(super) struct Origin {
    pub(super) body: String,
    pub(super) event: usize,
    pub(super) source: String,
}

impl Origin {
    pub(super) fn new(body: impl Into<String>, event: usize, source: impl Into<String>) -> Origin {
        Origin {
            body: body.into(),
            event,
            source: source.into(),
        }
    }
}

/// A stream folded into its format's non-streaming body.
pub(super) struct Assembled {
    pub(super) body: Value,
    pub(super) origins: Vec<Origin>,
    /// Calls (by their index among the response's calls) whose arguments arrived as JSON text
    /// that does not parse, with that text.
    pub(super) invalid: Vec<(usize, String)>,
}

pub(super) fn stream_error(event: usize, why: String) -> Fault {
    Fault {
        event: Some(event),
        error: ParseError::Stream { why },
    }
}

/// A chunk's non-negative integer member `key` (`index`, `output_index`); absent is `default`.
pub(super) fn index(
    body: &Object,
    key: &str,
    at: &At<'_>,
    default: Option<u64>,
) -> Result<u64, ParseError> {
    match (get(body, key), default) {
        (Some(value), _) => value.as_u64().ok_or_else(|| {
            at.key(key)
                .unexpected("an index (a non-negative integer)", value)
        }),
        (None, Some(default)) => Ok(default),
        (None, None) => Err(at.key(key).missing("an index (a non-negative integer)")),
    }
}

/// Appends the optional string member `key` of `body` to `out`.
pub(super) fn append(
    out: &mut Option<String>,
    body: &Object,
    key: &str,
    at: &At<'_>,
) -> Result<(), ParseError> {
    if let Some(piece) = opt_string(body, key, at)? {
        out.get_or_insert_with(String::new).push_str(piece);
    }
    Ok(())
}

/// Appends a string delta to the string member `key` of `target` (creating it when absent; a
/// member of another type is left alone, for the reader to report).
pub(super) fn append_to(target: &mut Value, key: &str, piece: &str) {
    let Some(target) = target.as_object_mut() else {
        return;
    };
    let slot = target.entry(key).or_insert(Value::Null);
    match slot {
        Value::String(s) => s.push_str(piece),
        Value::Null => *slot = Value::String(piece.to_owned()),
        _ => {}
    }
}

pub(super) fn opt_value(value: Option<String>) -> Value {
    value.map_or(Value::Null, Value::String)
}
