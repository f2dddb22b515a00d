//! The `expect` a recording suggests for a result, and what is left out of it as volatile.
//!
//! A recorded result pinned whole fails its first replay when part of it changes every run (a
//! clock, a fresh id, a counter). Which part does is a question of evidence, not of how a value
//! looks: `convert_time` answers with timestamps that are a pure function of its arguments, and
//! a result that looks plain may hold a count that moves. So each value of the result's document
//! (its `structuredContent`, or the first text block that parses as JSON, what `expect`
//! pointers address) becomes a pointer unless (first that fits):
//!
//! | reason | the evidence |
//! |---|---|
//! | `--volatile` | the user named it: `--volatile /pointer` (every call) or `--volatile TOOL:/pointer`, the pointer or anything under it |
//! | `differed between identical calls` | another call of the session, with the same name and arguments, answered something else there |
//! | `differed from the last recording` | the flow recorded over (`--force`) answered the same call with something else there |
//!
//! A value that only *looks* volatile (a timestamp, a uuid, a random id, an epoch time, a key
//! that names a time, a counter or an id the arguments do not hold: [`volatile`]) is pinned all
//! the same and named in the call's comment, so a reviewer knows where to look: record the call
//! twice in one session, or record again with `--force`, and what moves is left out by itself.
//! A result with no JSON document is pinned by its first text block (`expect_text`) by the same
//! rule. At most [`MAX_POINTERS`] values are pinned per call; the rest are counted in the comment.

use serde_json::{Map, Value};

/// The most `expect` entries suggested for one call: enough to catch a change, few enough to
/// review.
pub const MAX_POINTERS: usize = 24;

/// The longest string pinned; longer ones are left out as `long`.
const MAX_STRING: usize = 200;

/// The longest text a text-only result is pinned by with `expect_text`.
const MAX_TEXT: usize = 1000;

/// What a recording suggests checking in one successful result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Suggestion {
    /// `pointer -> value` entries, in document order.
    pub expect: Vec<(String, Value)>,
    /// For a result with no JSON document: its first text block, whole.
    pub expect_text: Option<String>,
    /// For a result with no JSON document: the first image, audio or resource block's kind,
    /// MIME type and URI (an `expect_content`).
    pub expect_content: Option<Value>,
    /// What was left out, as `(pointer, reason)`.
    pub left_out: Vec<(String, &'static str)>,
    /// Pinned values that look volatile, as `(pointer, what they look like)`: pinned on the
    /// evidence (nothing differed), named for the reviewer.
    pub looks_volatile: Vec<(String, &'static str)>,
    /// How many values past [`MAX_POINTERS`] were not pinned.
    pub not_pinned: usize,
}

impl Suggestion {
    /// The comment that lists what was left out, and what was pinned though it looks volatile.
    pub fn comment(&self) -> Option<String> {
        let list = |items: &[(String, &'static str)]| {
            items
                .iter()
                .map(|(pointer, why)| format!("{pointer} ({why})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.left_out.is_empty() {
            parts.push(format!("left out: {}", list(&self.left_out)));
        }
        if !self.looks_volatile.is_empty() {
            parts.push(format!(
                "pinned though they look volatile: {} (if they change between runs, call the \
                 tool twice in the session or record again with --force, or give --volatile \
                 POINTER)",
                list(&self.looks_volatile)
            ));
        }
        if self.not_pinned > 0 {
            parts.push(format!(
                "{} more value(s) not pinned (at most {MAX_POINTERS} per call)",
                self.not_pinned
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// What is known about which parts of one call's result move.
#[derive(Clone, Debug, Default)]
pub struct Evidence<'a> {
    /// Other answers to the same call (name and arguments), each with the reason a difference
    /// from it is written as; compared as written ([`crate::redact::plain_value`]).
    pub samples: Vec<(Value, &'static str)>,
    /// The pointers the user named volatile for this tool (`--volatile`).
    pub volatile: &'a [String],
}

/// Whether `pointer` is `named` or under it (`/a` covers `/a` and `/a/b`, not `/ab`).
fn covers(named: &str, pointer: &str) -> bool {
    pointer == named
        || named.is_empty()
        || (pointer.starts_with(named) && pointer.as_bytes().get(named.len()) == Some(&b'/'))
}

/// The suggestion for `result` (a `tools/call` result, wire shape) of a call made with `input`,
/// given the `evidence` of what moves.
pub fn suggest(result: &Value, input: &Value, evidence: &Evidence<'_>) -> Suggestion {
    let mut out = Suggestion::default();
    if let Some(doc) = document(result) {
        let mut inputs = Vec::new();
        scalars(input, &mut inputs);
        let samples: Vec<(Value, &'static str)> = evidence
            .samples
            .iter()
            .filter_map(|(sample, why)| Some((document(sample)?, *why)))
            .collect();
        let judge = Judge {
            inputs: &inputs,
            samples: &samples,
            volatile: evidence.volatile,
        };
        walk(&doc, String::new(), None, &judge, &mut out);
        return out;
    }
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let text = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .find_map(|b| b.get("text").and_then(Value::as_str));
    if let Some(text) = text {
        let at = "/content/0/text";
        let written = crate::redact::plain_text(text);
        let moved = evidence.samples.iter().find(|(sample, _)| {
            first_text(sample).map(crate::redact::plain_text) != Some(written.clone())
        });
        if evidence.volatile.iter().any(|named| covers(named, at)) {
            out.left_out.push((at.to_owned(), "--volatile"));
        } else if let Some((_, why)) = moved {
            out.left_out.push((at.to_owned(), why));
        } else if text.chars().count() > MAX_TEXT {
            out.left_out.push((at.to_owned(), "long"));
        } else {
            if let Some(looks) = volatile_text(text) {
                out.looks_volatile.push((at.to_owned(), looks));
            }
            out.expect_text = Some(text.to_owned());
        }
    }
    let media = blocks.iter().find(|b| {
        let kind = b.get("type").and_then(Value::as_str).unwrap_or_default();
        ["image", "audio", "resource_link", "resource"].contains(&kind)
    });
    if let Some(block) = media {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut content = Map::new();
        content.insert("type".into(), Value::String(kind.to_owned()));
        let mime = block
            .get("mimeType")
            .or_else(|| block.pointer("/resource/mimeType"));
        if let Some(mime) = mime.and_then(Value::as_str) {
            content.insert("mime_type".into(), Value::String(mime.to_owned()));
        }
        let uri = block.get("uri").or_else(|| block.pointer("/resource/uri"));
        if let Some(uri) = uri.and_then(Value::as_str) {
            content.insert("uri".into(), Value::String(uri.to_owned()));
        }
        out.expect_content = Some(Value::Object(content));
    }
    out
}

/// The first text block of a result.
fn first_text(result: &Value) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .find_map(|b| b.get("text").and_then(Value::as_str))
}

/// The document `expect` pointers address: `structuredContent`, else the first text block that
/// parses as JSON (as the replay reads it).
fn document(result: &Value) -> Option<Value> {
    if let Some(structured) = result.get("structuredContent") {
        return Some(structured.clone());
    }
    result
        .get("content")?
        .as_array()?
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .find_map(|t| serde_json::from_str::<Value>(t).ok())
        // A bare number or string parsed from text ("42") is text, not a document.
        .filter(|v| v.is_object() || v.is_array())
}

fn scalars(value: &Value, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => map.values().for_each(|v| scalars(v, out)),
        Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
        other => out.push(other.clone()),
    }
}

fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// What one result's values are judged by.
struct Judge<'a> {
    inputs: &'a [Value],
    samples: &'a [(Value, &'static str)],
    volatile: &'a [String],
}

impl Judge<'_> {
    /// Why the value at `at` is left out, if it is.
    fn left_out(&self, at: &str, value: &Value) -> Option<&'static str> {
        if self.volatile.iter().any(|named| covers(named, at)) {
            return Some("--volatile");
        }
        let written = crate::redact::plain_value(value);
        if let Some((_, why)) = self
            .samples
            .iter()
            .find(|(sample, _)| sample.pointer(at) != Some(&written))
        {
            return Some(why);
        }
        // Too long to review as a pin.
        value
            .as_str()
            .is_some_and(|s| s.chars().count() > MAX_STRING)
            .then_some("long")
    }
}

fn walk(value: &Value, at: String, key: Option<&str>, judge: &Judge<'_>, out: &mut Suggestion) {
    let leaf = match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                walk(v, format!("{at}/{}", escape_token(k)), Some(k), judge, out);
            }
            return;
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{at}/{i}"), key, judge, out);
            }
            return;
        }
        leaf => leaf,
    };
    if let Some(why) = judge.left_out(&at, leaf) {
        out.left_out.push((at, why));
    } else if out.expect.len() < MAX_POINTERS {
        if let Some(looks) = volatile(key, leaf, judge.inputs) {
            out.looks_volatile.push((at.clone(), looks));
        }
        out.expect.push((at, leaf.clone()));
    } else {
        out.not_pinned += 1;
    }
}

/// What `value` (under `key`) looks like if it looks volatile: a `timestamp` (ISO 8601 date or
/// date-time), a `uuid`, a `random id` (16 or more hex digits, or 20 or more letters and digits
/// mixing both), an `epoch time` (an integer of 10⁹..10¹⁰ or 10¹²..10¹³), a `time` key (`*_at`,
/// `*At`, or holding `time`, `date`, `elapsed`, `duration`, `latency`, `uptime`, `expires`), a
/// `counter` key, or an `id` key whose value the call's arguments do not hold. A hint for the
/// reviewer: what is left out is decided by evidence ([`suggest`]).
pub fn volatile(key: Option<&str>, value: &Value, inputs: &[Value]) -> Option<&'static str> {
    if let Value::String(s) = value {
        if is_timestamp(s) {
            return Some("timestamp");
        }
        if is_uuid(s) {
            return Some("uuid");
        }
        if is_random(s) {
            return Some("random id");
        }
    }
    if let Some(n) = value.as_i64() {
        if (1_000_000_000..10_000_000_000).contains(&n)
            || (1_000_000_000_000..10_000_000_000_000).contains(&n)
        {
            return Some("epoch time");
        }
    }
    if let Some(key) = key {
        let lower = key.to_ascii_lowercase();
        let words: String = lower
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let time_word = [
            "time", "date", "elapsed", "duration", "latency", "uptime", "expires",
        ]
        .iter()
        .any(|w| words.contains(w));
        if time_word || lower.ends_with("_at") || key.ends_with("At") {
            return Some("time");
        }
        if [
            "seq",
            "sequence",
            "counter",
            "nonce",
            "revision",
            "generation",
        ]
        .iter()
        .any(|w| words == *w || lower.ends_with(&format!("_{w}")))
        {
            return Some("counter");
        }
        let id_key = lower == "id"
            || lower.ends_with("_id")
            || lower.ends_with("-id")
            || key.ends_with("Id")
            || ["uuid", "guid", "token", "etag"]
                .iter()
                .any(|w| words.ends_with(w));
        if id_key && !value.is_null() && !inputs.contains(value) {
            return Some("id");
        }
    }
    None
}

/// What a whole text block looks like if it looks volatile: holding a timestamp, a uuid or a
/// random id among its words.
fn volatile_text(text: &str) -> Option<&'static str> {
    text.split(|c: char| c.is_whitespace() || ",;()[]{}\"'".contains(c))
        .map(|w| w.trim_end_matches(['.', ':']))
        .find_map(|w| volatile(None, &Value::String(w.to_owned()), &[]))
}

fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    if !(b.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-') {
        return false;
    }
    if !digits(8..10) {
        return false;
    }
    if b.len() == 10 {
        return true;
    }
    // A time after the date: `T` or a space, then hh:mm.
    (b[10] == b'T' || b[10] == b' ') && digits(11..13) && b.get(13) == Some(&b':') && digits(14..16)
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|c| c.is_ascii_hexdigit()))
}

fn is_random(s: &str) -> bool {
    if s.len() >= 16 && s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return true;
    }
    s.len() >= 20
        && s.bytes().all(|c| c.is_ascii_alphanumeric())
        && s.bytes().any(|c| c.is_ascii_digit())
        && s.bytes().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alone(result: &Value, input: &Value) -> Suggestion {
        suggest(result, input, &Evidence::default())
    }

    /// One call is no evidence that anything moves: everything is pinned, and what looks
    /// volatile is named for the reviewer.
    #[test]
    fn a_single_call_is_pinned_whole_and_what_looks_volatile_is_named() {
        let result = json!({"structuredContent": {
            "order_id": "ord_1042", "refund_id": "rf_0001", "status": "pending",
            "created_at": "2026-12-01T14:05:09Z", "request": "6f1c2a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6",
            "amounts": [9164, 1733059509], "seq": 7, "count": 2, "hash": "9f86d081884c7d659a2feaa0c55ad015"
        }});
        let got = alone(&result, &json!({"order_id": "ord_1042"}));
        assert_eq!(got.expect.len(), 10, "{:?}", got.expect);
        assert_eq!(got.left_out, []);
        assert_eq!(
            got.looks_volatile,
            [
                ("/amounts/1".to_owned(), "epoch time"),
                ("/created_at".to_owned(), "timestamp"),
                ("/hash".to_owned(), "random id"),
                ("/refund_id".to_owned(), "id"),
                ("/request".to_owned(), "uuid"),
                ("/seq".to_owned(), "counter"),
            ]
        );
        let comment = got.comment().unwrap();
        assert!(
            comment.starts_with("pinned though they look volatile: /amounts/1 (epoch time)"),
            "{comment}"
        );
    }

    /// What differed between identical calls, or from the last recording, is left out; what
    /// the user named is left out; what agreed is pinned, however it looks.
    #[test]
    fn what_differed_or_was_named_is_left_out() {
        let result = json!({"structuredContent": {"at": "2026-12-01T14:05:09Z", "n": 2,
            "pid": 41, "tz": "Asia/Tokyo", "nested": {"a": 1, "b": 2}}});
        let same_call = json!({"structuredContent": {"at": "2026-12-01T14:05:09Z", "n": 1,
            "pid": 41, "tz": "Asia/Tokyo", "nested": {"a": 1, "b": 2}}});
        let last_run = json!({"structuredContent": {"at": "2026-12-01T14:05:09Z", "n": 2,
            "pid": 97, "tz": "Asia/Tokyo", "nested": {"a": 1, "b": 2}}});
        let volatile = ["/nested".to_owned()];
        let evidence = Evidence {
            samples: vec![
                (same_call, "differed between identical calls"),
                (last_run, "differed from the last recording"),
            ],
            volatile: &volatile,
        };
        let got = suggest(&result, &json!({}), &evidence);
        assert_eq!(
            got.expect,
            [
                ("/at".to_owned(), json!("2026-12-01T14:05:09Z")),
                ("/tz".to_owned(), json!("Asia/Tokyo")),
            ]
        );
        assert_eq!(
            got.left_out,
            [
                ("/n".to_owned(), "differed between identical calls"),
                ("/nested/a".to_owned(), "--volatile"),
                ("/nested/b".to_owned(), "--volatile"),
                ("/pid".to_owned(), "differed from the last recording"),
            ]
        );
        assert!(covers("/a", "/a/b") && covers("/a", "/a") && !covers("/a", "/ab"));
    }

    #[test]
    fn text_results_are_pinned_whole_unless_they_differed() {
        let plain = json!({"content": [{"type": "text", "text": "Echo: hello"}]});
        assert_eq!(
            alone(&plain, &json!({})).expect_text.as_deref(),
            Some("Echo: hello")
        );
        let stamped =
            json!({"content": [{"type": "text", "text": "It is 2026-12-01T14:05:09Z now."}]});
        let got = alone(&stamped, &json!({}));
        assert_eq!(
            got.expect_text.as_deref(),
            Some("It is 2026-12-01T14:05:09Z now.")
        );
        assert_eq!(
            got.looks_volatile,
            [("/content/0/text".to_owned(), "timestamp")]
        );
        let later =
            json!({"content": [{"type": "text", "text": "It is 2026-12-01T14:05:10Z now."}]});
        let evidence = Evidence {
            samples: vec![(later, "differed between identical calls")],
            volatile: &[],
        };
        let got = suggest(&stamped, &json!({}), &evidence);
        assert_eq!(got.expect_text, None);
        assert_eq!(
            got.left_out,
            [(
                "/content/0/text".to_owned(),
                "differed between identical calls"
            )]
        );
        let json_text = json!({"content": [{"type": "text", "text": "{\"a\": 1}"}]});
        assert_eq!(
            alone(&json_text, &json!({})).expect,
            [("/a".to_owned(), json!(1))]
        );
    }

    #[test]
    fn media_results_suggest_their_kind() {
        let image =
            json!({"content": [{"type": "image", "mimeType": "image/png", "data": "iVBO"}]});
        assert_eq!(
            alone(&image, &json!({})).expect_content,
            Some(json!({"type": "image", "mime_type": "image/png"}))
        );
        // Beside a caption, both are pinned.
        let captioned = json!({"content": [{"type": "text", "text": "Here:"},
            {"type": "resource_link", "uri": "test://static/1", "name": "r"}]});
        let got = alone(&captioned, &json!({}));
        assert_eq!(got.expect_text.as_deref(), Some("Here:"));
        assert_eq!(
            got.expect_content,
            Some(json!({"type": "resource_link", "uri": "test://static/1"}))
        );
    }

    #[test]
    fn at_most_max_pointers_are_pinned() {
        let many: Map<String, Value> = (0..40).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let got = alone(&json!({"structuredContent": many}), &json!({}));
        assert_eq!(got.expect.len(), MAX_POINTERS);
        assert_eq!(got.not_pinned, 40 - MAX_POINTERS);
    }
}
