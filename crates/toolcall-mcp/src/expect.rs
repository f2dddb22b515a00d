//! `expect` assertions: JSON pointers into the parsed result, never substrings.
//!
//! The document a pointer is resolved in is the result's `structuredContent` when the server sent
//! one, otherwise the first text block that parses as JSON. A substring check would pass on
//! `"refunded": false` when looking for `refunded`; a pointer cannot.

use serde_json::Value;

use crate::{ContentExpectation, TextExpectation};
use toolcall_score::escape;

/// An `expect` entry that did not hold, as data (for a report's expected-vs-got view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The JSON pointer into the result.
    pub pointer: String,
    /// What the flow expects there.
    pub expected: Value,
    /// What the result holds there; `None` when it holds nothing.
    pub got: Option<Value>,
}

/// The document `expect` pointers address in a `tools/call` result (wire shape).
pub(crate) fn document(result: &Value) -> Result<Value, String> {
    if let Some(structured) = result.get("structuredContent") {
        return Ok(structured.clone());
    }
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    texts
        .iter()
        .find_map(|t| serde_json::from_str::<Value>(t).ok())
        .ok_or_else(|| match texts.first() {
            Some(text) => format!(
                "the result has no structuredContent and no text block that parses as JSON (first text: {})",
                printable_result(&Value::String((*text).to_owned()))
            ),
            None => "the result has no structuredContent and no text block".to_owned(),
        })
}

/// Checks every `pointer -> value` pair; the first that does not hold is the error: its
/// sentence, and (when the result could be read) the mismatch as data.
pub(crate) fn check_expectations(
    result: &Value,
    expect: &[(String, Value)],
) -> Result<(), (String, Option<Mismatch>)> {
    if expect.is_empty() {
        return Ok(());
    }
    let doc = document(result).map_err(|why| {
        (
            format!("cannot check {}: {why}", escape(&expect[0].0)),
            None,
        )
    })?;
    for (pointer, expected) in expect {
        let mismatch = |got: Option<&Value>| {
            Some(Mismatch {
                pointer: pointer.clone(),
                expected: expected.clone(),
                got: got.cloned(),
            })
        };
        match doc.pointer(pointer) {
            Some(actual) if same(actual, expected) => {}
            Some(actual) => {
                return Err((
                    format!(
                        "expected {} = {}, got {}",
                        escape(pointer),
                        printable_result(expected),
                        printable_result(actual)
                    ),
                    mismatch(Some(actual)),
                ))
            }
            None => {
                return Err((
                    format!(
                        "expected {} = {}, but the result has no {}{}",
                        escape(pointer),
                        printable_result(expected),
                        escape(pointer),
                        keys_near(&doc, pointer)
                    ),
                    mismatch(None),
                ))
            }
        }
    }
    Ok(())
}

/// Checks the first text block against `wanted`: for a server that answers in text (or in a
/// language's repr), the fallback where no structured content exists. JSON pointers come first
/// where they can: a text check breaks when the wording does.
pub(crate) fn check_text(result: &Value, wanted: &TextExpectation) -> Result<(), String> {
    let Some(text) = first_text(result) else {
        return Err("expected a text block, but the result has none".to_owned());
    };
    match wanted {
        TextExpectation::Equals(want) if text == want => Ok(()),
        TextExpectation::Equals(want) => Err(format!(
            "expected the text {}, got {}",
            printable_result(&Value::String(want.clone())),
            printable_result(&Value::String(text.to_owned()))
        )),
        TextExpectation::Matches(pattern) => {
            // Compiled when the flow was read; an error here cannot happen, and fails the check.
            let matches = regex::Regex::new(pattern).is_ok_and(|re| re.is_match(text));
            if matches {
                Ok(())
            } else {
                Err(format!(
                    "expected the text to match /{}/, got {}",
                    shown_regex(pattern),
                    printable_result(&Value::String(text.to_owned()))
                ))
            }
        }
    }
}

/// A regular expression as its author wrote it, backslashes single (`\\+09:00$` shows as
/// `\+09:00$`, not `\\+09:00$`), with each invisible character written as the regex escape
/// that matches it (`\n`, `\u{202e}`): what it shows is still the same regex.
fn shown_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if toolcall_score::is_invisible(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// The first text block's text.
pub(crate) fn first_text(result: &Value) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("text"))?
        .get("text")?
        .as_str()
}

/// The size in bytes of a content block: decoded `data` (image, audio), an embedded resource's
/// text or decoded blob, a link's declared `size`.
fn content_bytes(block: &Value) -> Option<u64> {
    let base64 = |s: &str| (s.trim_end_matches('=').len() as u64 * 3) / 4;
    if let Some(data) = block.get("data").and_then(Value::as_str) {
        return Some(base64(data));
    }
    if let Some(resource) = block.get("resource") {
        if let Some(text) = resource.get("text").and_then(Value::as_str) {
            return Some(text.len() as u64);
        }
        if let Some(blob) = resource.get("blob").and_then(Value::as_str) {
            return Some(base64(blob));
        }
    }
    block.get("size").and_then(Value::as_u64)
}

/// A content block as a report shows it: its type, MIME type, URI and size, never its data.
pub(crate) fn summarize(block: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
    out.insert("type".into(), Value::String(kind.to_owned()));
    let resource = block.get("resource");
    for key in ["mimeType", "uri", "name"] {
        if let Some(v) = block.get(key).or_else(|| resource.and_then(|r| r.get(key))) {
            out.insert(key.into(), v.clone());
        }
    }
    if kind == "text" {
        if let Some(text) = block.get("text") {
            out.insert("text".into(), text.clone());
        }
    } else if let Some(bytes) = content_bytes(block) {
        out.insert("bytes".into(), bytes.into());
    }
    Value::Object(out)
}

/// Checks that the result holds a content block as `wanted` describes.
pub(crate) fn check_content(result: &Value, wanted: &ContentExpectation) -> Result<(), String> {
    let blocks: Vec<&Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let Some(block) = blocks
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some(wanted.kind.as_str()))
    else {
        let kinds: Vec<String> = blocks
            .iter()
            .map(|b| escape(b.get("type").and_then(Value::as_str).unwrap_or("?")).to_string())
            .collect();
        return Err(format!(
            "expected a {} block, but the result has {}",
            escape(&wanted.kind),
            if kinds.is_empty() {
                "no content".to_owned()
            } else {
                kinds.join(", ")
            }
        ));
    };
    let field = |key: &str| {
        block
            .get(key)
            .or_else(|| block.get("resource").and_then(|r| r.get(key)))
            .and_then(Value::as_str)
    };
    let shown = || printable_result(&summarize(block));
    if let Some(mime) = &wanted.mime_type {
        if field("mimeType") != Some(mime.as_str()) {
            return Err(format!(
                "expected mimeType {}, got {}",
                escape(mime),
                shown()
            ));
        }
    }
    if let Some(uri) = &wanted.uri {
        if field("uri") != Some(uri.as_str()) {
            return Err(format!("expected uri {}, got {}", escape(uri), shown()));
        }
    }
    let bytes = content_bytes(block);
    if let Some(min) = wanted.min_bytes {
        if bytes.is_none_or(|b| b < min) {
            return Err(format!("expected at least {min} bytes, got {}", shown()));
        }
    }
    if let Some(max) = wanted.max_bytes {
        if bytes.is_none_or(|b| b > max) {
            return Err(format!("expected at most {max} bytes, got {}", shown()));
        }
    }
    Ok(())
}

/// JSON equality where numbers compare by value (`9164` equals `9164.0`).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// " (keys there: a, b)" for the deepest object on the pointer's path, to show what to write.
fn keys_near(doc: &Value, pointer: &str) -> String {
    let mut parent = pointer;
    while let Some(i) = parent.rfind('/') {
        parent = &parent[..i];
        if let Some(Value::Object(o)) = doc.pointer(parent) {
            let keys: Vec<String> = o.keys().take(12).map(|k| escape(k).to_string()).collect();
            let at = if parent.is_empty() { "" } else { parent };
            return format!(" (keys at \"{}\": {})", escape(at), keys.join(", "));
        }
    }
    String::new()
}

/// A value as one line of JSON, safe for a terminal, cut at 200 characters. serde_json has
/// escaped quotes, backslashes and control characters once already; only what it leaves raw
/// ([`toolcall_score::is_invisible`]: bidi overrides, zero-width characters) is written as a
/// `\uXXXX` escape, so a text block holding JSON reads `"{\"page\": 3}"`, not escaped twice.
pub(crate) fn printable_result(value: &Value) -> String {
    use std::fmt::Write as _;
    const MAX_CHARS: usize = 200;
    let json = serde_json::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(json.len().min(MAX_CHARS * 4));
    for (i, c) in json.chars().enumerate() {
        if i == MAX_CHARS {
            let rest = json.chars().count() - i;
            let _ = write!(out, "…({rest} more characters)");
            break;
        }
        if toolcall_score::is_invisible(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// The sentence alone, as the replay prints it.
    fn message(result: Result<(), (String, Option<Mismatch>)>) -> Result<(), String> {
        result.map_err(|(message, _)| message)
    }

    #[test]
    fn results_print_as_json_escaped_once() {
        assert_eq!(
            printable_result(&json!("{\"page\": 3}")),
            r#""{\"page\": 3}""#
        );
        assert_eq!(
            printable_result(&json!({"a": "x\u{202e}y\n"})),
            r#"{"a":"x\u202ey\n"}"#
        );
        let long = printable_result(&json!("x".repeat(300)));
        assert!(long.ends_with("…(102 more characters)"), "{long}");
    }

    #[test]
    fn a_regex_is_shown_as_written_and_still_the_same_regex() {
        let result = json!({"content": [{"type": "text", "text": "12:00+01:00"}]});
        for (pattern, shown) in [
            (r"\+09:00$", r"/\+09:00$/"),
            (r"\d+\.\d", r"/\d+\.\d/"),
            ("a\n\u{202e}b", r"/a\n\u{202e}b/"),
        ] {
            let said =
                check_text(&result, &TextExpectation::Matches(pattern.to_owned())).unwrap_err();
            assert!(said.contains(shown), "{pattern:?}: {said}");
            // What is shown compiles to a regex that matches what the pattern matches.
            let back = regex::Regex::new(&shown[1..shown.len() - 1]).unwrap();
            let original = regex::Regex::new(pattern).unwrap();
            for text in ["+09:00", "12.3", "a\n\u{202e}b"] {
                assert_eq!(
                    back.is_match(text),
                    original.is_match(text),
                    "{shown} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_mismatch_is_also_data() {
        let result = json!({"structuredContent": {"status": "pending"}});
        let (_, mismatch) =
            check_expectations(&result, &expect(&[("/status", json!("refunded"))])).unwrap_err();
        assert_eq!(
            mismatch,
            Some(Mismatch {
                pointer: "/status".into(),
                expected: json!("refunded"),
                got: Some(json!("pending")),
            })
        );
        let (_, mismatch) = check_expectations(&result, &expect(&[("/id", json!(1))])).unwrap_err();
        assert_eq!(mismatch.and_then(|m| m.got), None, "nothing there");
    }

    #[test]
    fn pointers_go_into_structured_content() {
        let result = json!({"content": [], "structuredContent": {"refund": {"status": "pending", "amount_cents": 9164}}});
        assert_eq!(
            message(check_expectations(
                &result,
                &expect(&[("/refund/amount_cents", json!(9164.0))])
            )),
            Ok(())
        );
        assert_eq!(
            message(check_expectations(
                &result,
                &expect(&[("/refund/status", json!("refunded"))])
            )),
            Err(r#"expected /refund/status = "refunded", got "pending""#.to_owned())
        );
        assert_eq!(
            message(check_expectations(&result, &expect(&[("/refund/id", json!("rf_1"))]))),
            Err(r#"expected /refund/id = "rf_1", but the result has no /refund/id (keys at "/refund": amount_cents, status)"#.to_owned())
        );
    }

    #[test]
    fn text_blocks_are_parsed_as_json_not_searched() {
        let result = json!({"content": [{"type": "text", "text": "{\"refunded\": false}"}]});
        assert_eq!(
            message(check_expectations(
                &result,
                &expect(&[("/refunded", json!(true))])
            )),
            Err("expected /refunded = true, got false".to_owned())
        );
        let prose = json!({"content": [{"type": "text", "text": "refunded: true"}]});
        assert_eq!(
            message(check_expectations(&prose, &expect(&[("/refunded", json!(true))]))),
            Err(r#"cannot check /refunded: the result has no structuredContent and no text block that parses as JSON (first text: "refunded: true")"#.to_owned())
        );
    }
}
