//! The golden responses of `verify`: where a response and its recorded one differ, and
//! `update_flow`, which writes the new responses into the flow.
//!
//! The comparison is of the response as the wire has it, wrapped as the recorder writes it
//! (`{"result": …}` or `{"error": {"code", "message"}}`), so an ignored path reads the same in
//! the flow, on the command line and in the recorded answer. Numbers compare by value. An
//! update is a golden snapshot accepted, as insta's `accept` is: only the `recorded` member of
//! each step that changed is rewritten, in place (the rest of the file keeps its bytes), the file
//! is replaced atomically, and a flow whose every step matched is never touched. Data and files
//! only: the step that compares is `verify.rs`.

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;
use toolcall_score::escape;

use crate::errors::FlowError;
use crate::expect::printable_result;
use crate::{escape_template, Flow};

/// One place where a response and the recorded one differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The JSON pointer into the response (`/result/content/0/text`).
    pub pointer: String,
    /// What the recorded response holds there; `None` when it holds nothing.
    pub recorded: Option<Value>,
    /// What the response holds there; `None` when it holds nothing.
    pub got: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Option<Value>| v.as_ref().map_or("nothing".to_owned(), printable_result);
        write!(
            f,
            "{}: recorded {}, got {}",
            escape(&self.pointer),
            shown(&self.recorded),
            shown(&self.got)
        )
    }
}

/// A `verify` step's new response, for `--update` to write into its flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The step's index in [`Flow::calls`] (0-based).
    pub call: usize,
    /// What the step goes by ([`crate::Call::label`]).
    pub label: String,
    /// The response, as the wire had it: `{"result": …}` or `{"error": …}`.
    pub response: Value,
    /// Where it differs from the recorded one; empty when nothing was recorded.
    pub differences: Vec<Difference>,
}

/// The recorded response as a live one is compared with it: an error is its code and message
/// (what a replay learns of a JSON-RPC error).
pub(super) fn comparable(recorded: &Value) -> Value {
    match recorded.get("error") {
        Some(error) => serde_json::json!({"error": {
            "code": error.get("code").cloned().unwrap_or(Value::Null),
            "message": error.get("message").cloned().unwrap_or(Value::Null),
        }}),
        None => recorded.clone(),
    }
}

/// What the recorder writes in place of a value it redacted (`--redact-pattern`,
/// `--redact-path`): never compared, and kept when a response is accepted.
pub const REDACTED: &str = "[REDACTED]";

/// `response` to be written as the new recorded one: each place `recorded` holds
/// [`REDACTED`] keeps it, so that accepting a response never writes the secret it hid.
pub(super) fn keep_redacted(recorded: &Value, response: Value) -> Value {
    match (recorded, response) {
        (Value::String(s), _) if s == REDACTED => Value::String(REDACTED.to_owned()),
        (Value::Object(a), Value::Object(b)) => Value::Object(
            b.into_iter()
                .map(|(key, value)| {
                    let value = match a.get(&key) {
                        Some(was) => keep_redacted(was, value),
                        None => value,
                    };
                    (key, value)
                })
                .collect(),
        ),
        (Value::Array(a), Value::Array(b)) => Value::Array(
            b.into_iter()
                .enumerate()
                .map(|(i, value)| match a.get(i) {
                    Some(was) => keep_redacted(was, value),
                    None => value,
                })
                .collect(),
        ),
        (_, response) => response,
    }
}

/// Whether `pointer` is at or under one of `ignore` (a `*` token matches any one token).
fn ignored(pointer: &str, ignore: &[&str]) -> bool {
    let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
    ignore.iter().any(|pattern| {
        if pattern.is_empty() {
            return true;
        }
        let wanted: Vec<&str> = pattern.split('/').skip(1).collect();
        wanted.len() <= tokens.len()
            && wanted
                .iter()
                .zip(&tokens)
                .all(|(want, token)| *want == "*" || want == token)
    })
}

/// Every place under `at` where `recorded` and `got` differ, outside `ignore`.
pub(super) fn differences(
    recorded: &Value,
    got: &Value,
    ignore: &[&str],
    at: &str,
    out: &mut Vec<Difference>,
) {
    if ignored(at, ignore) {
        return;
    }
    let token = |key: &str| format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
    match (recorded, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(other) => differences(value, other, ignore, &token(key), out),
                    None if !ignored(&token(key), ignore) => out.push(Difference {
                        pointer: token(key),
                        recorded: Some(value.clone()),
                        got: None,
                    }),
                    None => {}
                }
            }
            for (key, value) in b {
                if !a.contains_key(key) && !ignored(&token(key), ignore) {
                    out.push(Difference {
                        pointer: token(key),
                        recorded: None,
                        got: Some(value.clone()),
                    });
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let at = format!("{at}/{i}");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => differences(x, y, ignore, &at, out),
                    (x, y) if !ignored(&at, ignore) => out.push(Difference {
                        pointer: at,
                        recorded: x.cloned(),
                        got: y.cloned(),
                    }),
                    _ => {}
                }
            }
        }
        // A value the recorder redacted is not known, so not compared (nor shown).
        (Value::String(s), _) if s == REDACTED => {}
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            pointer: at.to_owned(),
            recorded: Some(a.clone()),
            got: Some(b.clone()),
        }),
    }
}

/// What [`update_flow`] did to a flow file.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Updated {
    /// Every `verify` step matched: the file was not touched.
    Unchanged,
    /// The file was rewritten with these steps' new responses.
    Written {
        /// The flow file.
        path: PathBuf,
        /// The steps, with what changed in each.
        steps: Vec<Update>,
    },
}

impl fmt::Display for Updated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Updated::Written { path, steps } = self else {
            return Ok(());
        };
        write!(
            f,
            "updated {}: {} recorded response(s)",
            escape(&path.to_string_lossy()),
            steps.len()
        )?;
        for step in steps {
            write!(f, "\n  step {}: {}: ", step.call + 1, escape(&step.label))?;
            if step.differences.is_empty() {
                write!(f, "recorded (nothing was)")?;
            } else {
                let said: Vec<String> = step.differences.iter().map(ToString::to_string).collect();
                write!(f, "{}", said.join("; "))?;
            }
        }
        Ok(())
    }
}

/// Writes the responses of `updates` (a replay's [`super::Report::updates`]) into `flow`'s file
/// as each step's `recorded`: the member is replaced where it is, or added at the end of the
/// step, and the rest of the file keeps its bytes. Strings are written as the recorder writes
/// them (each `$` doubled), and each value a `${VAR}` of the flow expanded to is written as that
/// `${VAR}` again, so no secret from the environment lands in the file. Nothing to update, the
/// file is not touched.
pub fn update_flow(flow: &Flow, updates: &[Update]) -> Result<Updated, FlowError> {
    if updates.is_empty() {
        return Ok(Updated::Unchanged);
    }
    let path = &flow.path;
    let mut text = toolcall_score::read_text(path).map_err(|e| match e {
        toolcall_score::InputError::Read { source, .. } => FlowError::Read {
            path: path.clone(),
            source,
        },
        other => FlowError::Input(other),
    })?;
    let invalid = |pointer: String, message: &str| FlowError::Invalid {
        path: path.clone(),
        pointer,
        message: message.to_owned(),
    };
    // The last step first: an edit never moves the places of the steps before it.
    let mut ordered: Vec<&Update> = updates.iter().collect();
    ordered.sort_by_key(|u| std::cmp::Reverse(u.call));
    for update in ordered {
        let at = format!("/calls/{}", update.call);
        let spans = splice::member_of_step(&text, update.call).ok_or_else(|| {
            invalid(
                at.clone(),
                "the file changed since it was read: no such step",
            )
        })?;
        let written = serde_json::to_string(&as_template(flow, &update.response))
            .map_err(|e| invalid(at.clone(), &e.to_string()))?;
        text = match spans {
            splice::Place::Replace(range) => {
                format!("{}{written}{}", &text[..range.start], &text[range.end..])
            }
            splice::Place::Insert { at, indent } => {
                let sep = match indent {
                    Some(indent) => format!(",\n{indent}"),
                    None => ", ".to_owned(),
                };
                format!("{}{sep}\"recorded\": {written}{}", &text[..at], &text[at..])
            }
        };
    }
    toolcall_fs::write_atomic(path, text.as_bytes()).map_err(|source| FlowError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(Updated::Written {
        path: path.clone(),
        steps: updates.to_vec(),
    })
}

/// `value` as a flow holds it: each `$` doubled, then each value a `${VAR}` expanded to written
/// as the `${VAR}`.
fn as_template(flow: &Flow, value: &Value) -> Value {
    match value {
        Value::String(s) => {
            let mut out = escape_template(s);
            for (expanded, var) in &flow.expanded {
                out = out.replace(&escape_template(expanded), &format!("${{{var}}}"));
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| as_template(flow, v)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_template(flow, v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Where a step's `recorded` member is in a flow file's text, found by a scanner that knows
/// only JSON's nesting and strings: the file has been read as a flow already, so it is JSON.
mod splice {
    use std::ops::Range;

    /// Where the new `recorded` goes.
    pub(super) enum Place {
        /// Over the present member's value.
        Replace(Range<usize>),
        /// After the step's last member (`at`), on a line of its own at `indent` when the step's
        /// members are each on one.
        Insert { at: usize, indent: Option<String> },
    }

    fn ws(text: &[u8], mut i: usize) -> usize {
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// The end of the string starting at `i` (its opening quote).
    fn string_end(text: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        while i < text.len() {
            match text[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    /// The end of the value starting at `i`.
    fn value_end(text: &[u8], i: usize) -> Option<usize> {
        match text.get(i)? {
            b'"' => string_end(text, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                while j < text.len() {
                    match text[j] {
                        b'"' => {
                            j = string_end(text, j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                None
            }
            _ => {
                let mut j = i;
                while j < text.len() && !b",}] \t\r\n".contains(&text[j]) {
                    j += 1;
                }
                Some(j)
            }
        }
    }

    /// The members of the object at `i`: (key's start, key, value's range); and where the
    /// object's closing brace is.
    #[allow(clippy::type_complexity)]
    fn members(text: &[u8], i: usize) -> Option<(Vec<(usize, String, Range<usize>)>, usize)> {
        if text.get(i) != Some(&b'{') {
            return None;
        }
        let mut out = Vec::new();
        let mut j = ws(text, i + 1);
        loop {
            match text.get(j)? {
                b'}' => return Some((out, j)),
                b',' => j = ws(text, j + 1),
                b'"' => {
                    let end = string_end(text, j)?;
                    let key: String = serde_json::from_slice(&text[j..end]).ok()?;
                    let colon = ws(text, end);
                    if text.get(colon) != Some(&b':') {
                        return None;
                    }
                    let start = ws(text, colon + 1);
                    let stop = value_end(text, start)?;
                    out.push((j, key, start..stop));
                    j = ws(text, stop);
                }
                _ => return None,
            }
        }
    }

    /// Where the `recorded` of step `index` of the flow in `text` goes.
    pub(super) fn member_of_step(text: &str, index: usize) -> Option<Place> {
        let bytes = text.as_bytes();
        let (top, _) = members(bytes, ws(bytes, 0))?;
        let (_, _, calls) = top.into_iter().find(|(_, key, _)| key == "calls")?;
        let mut j = ws(bytes, calls.start + 1);
        let mut n = 0;
        loop {
            match bytes.get(j)? {
                b']' => return None,
                b',' => j = ws(bytes, j + 1),
                _ => {
                    let end = value_end(bytes, j)?;
                    if n == index {
                        let (members, _) = members(bytes, j)?;
                        if let Some((_, _, range)) =
                            members.iter().find(|(_, key, _)| key == "recorded")
                        {
                            return Some(Place::Replace(range.clone()));
                        }
                        let (first, _, _) = members.first()?;
                        let (_, _, last_value) = members.last()?;
                        // The indentation of the step's members, when the first starts a line.
                        let line = text[..*first].rfind('\n').map_or(0, |nl| nl + 1);
                        let lead = &text[line..*first];
                        let indent = (line > j && lead.chars().all(|c| c == ' ' || c == '\t'))
                            .then(|| lead.to_owned());
                        return Some(Place::Insert {
                            at: last_value.end,
                            indent,
                        });
                    }
                    n += 1;
                    j = ws(bytes, end);
                }
            }
        }
    }
}

/// The response of a refusal that was a JSON-RPC error, as [`Update::response`] holds it.
pub(super) fn error_response(code: i64, message: &str) -> Value {
    serde_json::json!({"error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_leave_out_ignored_paths_and_compare_numbers_by_value() {
        let recorded = json!({"result": {"content": [{"type": "text", "text": "at 10:00"}],
                                         "n": 1, "gone": true}});
        let got = json!({"result": {"content": [{"type": "text", "text": "at 10:01"}],
                                    "n": 1.0, "new": 2}});
        let mut out = Vec::new();
        differences(&recorded, &got, &[], "", &mut out);
        let said: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                r#"/result/content/0/text: recorded "at 10:00", got "at 10:01""#,
                "/result/gone: recorded true, got nothing",
                "/result/new: recorded nothing, got 2",
            ]
        );
        let mut out = Vec::new();
        let ignore = ["/result/content/*/text", "/result/gone", "/result/new"];
        differences(&recorded, &got, &ignore, "", &mut out);
        assert_eq!(out, []);
    }

    #[test]
    fn a_recorded_member_is_replaced_in_place_or_added_on_a_line_of_its_own() {
        let text = "{\n  \"server\": {\"command\": \"x\"},\n  \"calls\": [\n    {\"name\": \"a\", \"recorded\": {\"result\": 1}},\n    {\n      \"name\": \"b\",\n      \"input\": {}\n    }\n  ]\n}\n";
        let Some(splice::Place::Replace(range)) = splice::member_of_step(text, 0) else {
            panic!("step 0 has a recorded member")
        };
        assert_eq!(&text[range], "{\"result\": 1}");
        let Some(splice::Place::Insert { at, indent }) = splice::member_of_step(text, 1) else {
            panic!("step 1 has none")
        };
        assert_eq!(&text[at - 2..at], "{}");
        assert_eq!(indent.as_deref(), Some("      "));
        assert!(splice::member_of_step(text, 2).is_none());
    }
}
