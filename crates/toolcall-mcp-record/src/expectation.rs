//! The `expect` a recording suggests for a result, and the heuristic that leaves volatile values
//! out of it.
//!
//! A recorded result pinned whole fails its first replay: a timestamp, a fresh uuid or an id the
//! server minted differs every run. So each value of the result's document (its
//! `structuredContent`, or the first text block that parses as JSON, what `expect` pointers
//! address) becomes a pointer, unless it looks volatile; what is left out is listed with the
//! reason, so a reviewer can put back what is in fact stable.
//!
//! A value looks volatile when (first that fits):
//!
//! | reason | value |
//! |---|---|
//! | `timestamp` | a string that is an ISO 8601 date or date-time (`2026-12-01`, `2026-12-01T14:05:09.123Z`) |
//! | `uuid` | a string of 8-4-4-4-12 hex digits |
//! | `random id` | a string of 16 or more hex digits, or of 20 or more letters and digits mixing both with no separator (a hash, a token) |
//! | `epoch time` | an integer between 10⁹ and 10¹⁰ (seconds) or 10¹² and 10¹³ (milliseconds) |
//! | `time` | its key names a time or duration: `*_at`, `*At`, or holds `time`, `date`, `elapsed`, `duration`, `latency`, `uptime`, `expires` |
//! | `counter` | its key names a counter: `seq`, `sequence`, `counter`, `nonce`, `revision`, `generation` |
//! | `id` | its key is `id` or ends in `_id`, `Id`, `-id`, `uuid`, `guid`, `token`, `etag`, and the value is not one the call's arguments hold (an id echoed from the input is stable) |
//! | `long` | a string over 200 characters |
//!
//! At most [`MAX_POINTERS`] values are pinned per call; the rest are counted in the comment.

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
    /// How many values past [`MAX_POINTERS`] were not pinned.
    pub not_pinned: usize,
}

impl Suggestion {
    /// The comment that lists what was left out, if anything was.
    pub fn comment(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.left_out.is_empty() {
            let listed: Vec<String> = self
                .left_out
                .iter()
                .map(|(pointer, why)| format!("{pointer} ({why})"))
                .collect();
            parts.push(format!("left out as volatile: {}", listed.join(", ")));
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

/// The suggestion for `result` (a `tools/call` result, wire shape) of a call made with `input`.
pub fn suggest(result: &Value, input: &Value) -> Suggestion {
    let mut out = Suggestion::default();
    if let Some(doc) = document(result) {
        let mut inputs = Vec::new();
        scalars(input, &mut inputs);
        walk(&doc, String::new(), None, &inputs, &mut out);
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
        match volatile_text(text) {
            Some(why) => out.left_out.push(("/content/0/text".to_owned(), why)),
            None => out.expect_text = Some(text.to_owned()),
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

fn walk(value: &Value, at: String, key: Option<&str>, inputs: &[Value], out: &mut Suggestion) {
    let leaf = match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                walk(v, format!("{at}/{}", escape_token(k)), Some(k), inputs, out);
            }
            return;
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{at}/{i}"), key, inputs, out);
            }
            return;
        }
        leaf => leaf,
    };
    if let Some(why) = volatile(key, leaf, inputs) {
        out.left_out.push((at, why));
    } else if out.expect.len() < MAX_POINTERS {
        out.expect.push((at, leaf.clone()));
    } else {
        out.not_pinned += 1;
    }
}

/// Why `value` (under `key`) looks volatile, if it does: the table in the module docs.
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
    if value
        .as_str()
        .is_some_and(|s| s.chars().count() > MAX_STRING)
    {
        return Some("long");
    }
    None
}

/// Why a whole text block looks volatile, if it does: too long, or holding a timestamp, a uuid
/// or a random id among its words.
fn volatile_text(text: &str) -> Option<&'static str> {
    if text.chars().count() > MAX_TEXT {
        return Some("long");
    }
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

    #[test]
    fn stable_values_are_pinned_and_volatile_ones_listed() {
        let result = json!({"structuredContent": {
            "order_id": "ord_1042", "refund_id": "rf_0001", "status": "pending",
            "created_at": "2026-12-01T14:05:09Z", "request": "6f1c2a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6",
            "amounts": [9164, 1733059509], "seq": 7, "count": 2, "hash": "9f86d081884c7d659a2feaa0c55ad015"
        }});
        let got = suggest(&result, &json!({"order_id": "ord_1042"}));
        assert_eq!(
            got.expect,
            [
                ("/amounts/0".to_owned(), json!(9164)),
                ("/count".to_owned(), json!(2)),
                ("/order_id".to_owned(), json!("ord_1042")),
                ("/status".to_owned(), json!("pending")),
            ]
        );
        assert_eq!(
            got.left_out,
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
            comment.starts_with("left out as volatile: /amounts/1 (epoch time)"),
            "{comment}"
        );
    }

    #[test]
    fn text_results_are_pinned_whole_unless_they_hold_a_volatile_word() {
        let plain = json!({"content": [{"type": "text", "text": "Echo: hello"}]});
        assert_eq!(
            suggest(&plain, &json!({})).expect_text.as_deref(),
            Some("Echo: hello")
        );
        let stamped =
            json!({"content": [{"type": "text", "text": "It is 2026-12-01T14:05:09Z now."}]});
        let got = suggest(&stamped, &json!({}));
        assert_eq!(got.expect_text, None);
        assert_eq!(got.left_out, [("/content/0/text".to_owned(), "timestamp")]);
        let json_text = json!({"content": [{"type": "text", "text": "{\"a\": 1}"}]});
        assert_eq!(
            suggest(&json_text, &json!({})).expect,
            [("/a".to_owned(), json!(1))]
        );
    }

    #[test]
    fn media_results_suggest_their_kind() {
        let image =
            json!({"content": [{"type": "image", "mimeType": "image/png", "data": "iVBO"}]});
        assert_eq!(
            suggest(&image, &json!({})).expect_content,
            Some(json!({"type": "image", "mime_type": "image/png"}))
        );
        // Beside a caption, both are pinned.
        let captioned = json!({"content": [{"type": "text", "text": "Here:"},
            {"type": "resource_link", "uri": "test://static/1", "name": "r"}]});
        let got = suggest(&captioned, &json!({}));
        assert_eq!(got.expect_text.as_deref(), Some("Here:"));
        assert_eq!(
            got.expect_content,
            Some(json!({"type": "resource_link", "uri": "test://static/1"}))
        );
    }

    #[test]
    fn at_most_max_pointers_are_pinned() {
        let many: Map<String, Value> = (0..40).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let got = suggest(&json!({"structuredContent": many}), &json!({}));
        assert_eq!(got.expect.len(), MAX_POINTERS);
        assert_eq!(got.not_pinned, 40 - MAX_POINTERS);
    }
}
