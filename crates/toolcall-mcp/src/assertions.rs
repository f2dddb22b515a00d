//! A call's `assert`: what the result must say, beyond the exact values `expect` pins.
//!
//! The shapes server teams already write for mcp-assert: texts the result `contains`,
//! `not_contains`, `contains_any` of, or holds `in_order`; `json_path` values; array lengths
//! (`min_results`, `max_results`); `not_empty`. Two texts are searched: the result's text
//! blocks, joined by newlines, and its `structuredContent` as JSON; a text holds when it holds
//! in either (`in_order`: all of it in one), and `not_contains` when it holds in both, so a
//! check holds whichever of the two a server fills. Paths (`$.orders[0].id`, or a JSON pointer
//! `/orders/0/id`) address the document `expect` reads: the `structuredContent`, else the first
//! text block that parses as JSON. A path is turned into a JSON pointer when the flow is read,
//! so one that cannot address a single value (`$..id`, `$.orders[*]`) is the file's error.

use serde::Deserialize;
use serde_json::Value;
use toolcall_score::escape;

use crate::expect::{document, printable_result, Mismatch};

/// A call's `assert`, checked and ready.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assertions {
    contains: Vec<String>,
    not_contains: Vec<String>,
    contains_any: Vec<String>,
    in_order: Vec<String>,
    /// `(the path as written, its JSON pointer, the value it must hold)`.
    json_path: Vec<(String, String, Value)>,
    /// `(the path as written, its pointer, the fewest items)`.
    min_results: Vec<(String, String, u64)>,
    /// `(the path as written, its pointer, the most items)`.
    max_results: Vec<(String, String, u64)>,
    /// `not_empty: true`: the result holds something.
    not_empty: bool,
    /// `not_empty: [paths]`: `(as written, pointer)`, each holding something.
    not_empty_at: Vec<(String, String)>,
}

/// One text or several (`"contains": "ok"` is `["ok"]`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Texts {
    One(String),
    Many(Vec<String>),
}

/// A count of the document's root (`3`), or of the array at each path (`{"$.orders": 3}`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Counts {
    Root(u64),
    At(serde_json::Map<String, Value>),
}

/// `true` (the result), or the paths that must each hold something.
#[derive(Deserialize)]
#[serde(untagged)]
enum NotEmpty {
    All(bool),
    At(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAssertions {
    #[serde(default)]
    contains: Option<Texts>,
    #[serde(default)]
    not_contains: Option<Texts>,
    #[serde(default)]
    contains_any: Option<Texts>,
    #[serde(default)]
    in_order: Option<Texts>,
    #[serde(default)]
    json_path: serde_json::Map<String, Value>,
    #[serde(default)]
    min_results: Option<Counts>,
    #[serde(default)]
    max_results: Option<Counts>,
    #[serde(default)]
    not_empty: Option<NotEmpty>,
}

impl Texts {
    fn into_vec(self) -> Vec<String> {
        match self {
            Texts::One(t) => vec![t],
            Texts::Many(ts) => ts,
        }
    }
}

impl Assertions {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        *self == Assertions::default()
    }

    /// Reads an `assert` object; the error is `(a JSON pointer inside it, what is wrong)`.
    pub(crate) fn read(value: Value) -> Result<Assertions, (String, String)> {
        const SHAPE: &str = "expected {\"contains\", \"not_contains\", \"contains_any\", \
            \"in_order\": a text or a list of texts; \"json_path\": {\"$.path\": value}; \
            \"min_results\", \"max_results\": a count, or {\"$.path\": count}; \"not_empty\": \
            true or a list of paths}";
        let raw: RawAssertions =
            serde_json::from_value(value).map_err(|e| (String::new(), format!("{SHAPE}: {e}")))?;
        let texts = |t: Option<Texts>| t.map(Texts::into_vec).unwrap_or_default();
        let mut json_path = Vec::with_capacity(raw.json_path.len());
        for (path, value) in raw.json_path {
            let pointer = to_pointer(&path).map_err(|why| (at("json_path", &path), why))?;
            json_path.push((path, pointer, value));
        }
        let counts = |key: &str, counts: Option<Counts>| -> Result<_, (String, String)> {
            Ok(match counts {
                None => Vec::new(),
                Some(Counts::Root(n)) => vec![("$".to_owned(), String::new(), n)],
                Some(Counts::At(map)) => {
                    let mut out = Vec::with_capacity(map.len());
                    for (path, n) in map {
                        let pointer = to_pointer(&path).map_err(|why| (at(key, &path), why))?;
                        let Some(n) = n.as_u64() else {
                            return Err((
                                at(key, &path),
                                format!(
                                    "expected a count (a whole number, 0 or more), found {}",
                                    escape(&n.to_string())
                                ),
                            ));
                        };
                        out.push((path, pointer, n));
                    }
                    out
                }
            })
        };
        let min_results = counts("min_results", raw.min_results)?;
        let max_results = counts("max_results", raw.max_results)?;
        let (not_empty, not_empty_at) = match raw.not_empty {
            None | Some(NotEmpty::All(false)) => (false, Vec::new()),
            Some(NotEmpty::All(true)) => (true, Vec::new()),
            Some(NotEmpty::At(paths)) => {
                let mut out = Vec::with_capacity(paths.len());
                for (i, path) in paths.into_iter().enumerate() {
                    let pointer =
                        to_pointer(&path).map_err(|why| (format!("/not_empty/{i}"), why))?;
                    out.push((path, pointer));
                }
                (false, out)
            }
        };
        Ok(Assertions {
            contains: texts(raw.contains),
            not_contains: texts(raw.not_contains),
            contains_any: texts(raw.contains_any),
            in_order: texts(raw.in_order),
            json_path,
            min_results,
            max_results,
            not_empty,
            not_empty_at,
        })
    }
}

/// The pointer of `key` inside the `assert` object's member `member`.
fn at(member: &str, key: &str) -> String {
    format!("/{member}/{}", crate::flow::pointer_token(key))
}

/// A path as a JSON pointer: a pointer (`/orders/0/id`, `""` for the whole) as it is, or a
/// JSONPath that names one value (`$`, `$.orders[0].id`, `$['a.b']`).
fn to_pointer(path: &str) -> Result<String, String> {
    if path.is_empty() || path.starts_with('/') {
        return Ok(path.to_owned());
    }
    let refuse = |why: &str| {
        format!(
            "`{}` is not a path to one value ({why}): write $.orders[0].id, $['a key'] or a \
             JSON pointer (/orders/0/id)",
            escape(path)
        )
    };
    let Some(mut rest) = path.strip_prefix('$') else {
        return Err(refuse("it starts with neither `$` nor `/`"));
    };
    let mut pointer = String::new();
    while !rest.is_empty() {
        if rest.starts_with("..") {
            return Err(refuse("`..` searches at every depth"));
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() || name == "*" {
                return Err(refuse("a name is missing after `.`, or is `*`"));
            }
            pointer.push('/');
            pointer.push_str(&crate::flow::pointer_token(name));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let quote = after.chars().next().filter(|c| *c == '\'' || *c == '"');
            let (token, tail) = match quote {
                Some(q) => {
                    let inner = &after[1..];
                    let Some(close) = inner.find(q) else {
                        return Err(refuse("a quote is not closed"));
                    };
                    let tail = inner[close + 1..]
                        .strip_prefix(']')
                        .ok_or_else(|| refuse("`]` must follow the closing quote"))?;
                    (crate::flow::pointer_token(&inner[..close]), tail)
                }
                None => {
                    let Some(close) = after.find(']') else {
                        return Err(refuse("a `[` is not closed"));
                    };
                    let index = &after[..close];
                    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(refuse(
                            "an index must be a number: `*`, slices and filters name many",
                        ));
                    }
                    (index.to_owned(), &after[close + 1..])
                }
            };
            pointer.push('/');
            pointer.push_str(&token);
            rest = tail;
        } else {
            return Err(refuse("expected `.name` or `[…]`"));
        }
    }
    Ok(pointer)
}

/// The texts the text assertions search: the text blocks, joined by newlines (when there is
/// one), and the `structuredContent` as JSON (when there is one). Two texts, not one: a server
/// that sends its JSON both ways would otherwise hold everything twice, and `in_order` would
/// hold whatever the order.
fn haystacks(result: &Value) -> Vec<String> {
    let blocks: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    let mut texts = Vec::with_capacity(2);
    if !blocks.is_empty() {
        texts.push(blocks.join("\n"));
    }
    if let Some(structured) = result.get("structuredContent") {
        texts.push(structured.to_string());
    }
    if texts.is_empty() {
        texts.push(String::new());
    }
    texts
}

/// Where `needles` are not in order in `text`: the message, or `None` when they are.
fn out_of_order(text: &str, needles: &[String]) -> Option<String> {
    let mut from = 0;
    for (n, needle) in needles.iter().enumerate() {
        match text[from..].find(needle.as_str()) {
            Some(i) => from += i + needle.len(),
            None if n == 0 || !text.contains(needle.as_str()) => {
                return Some(format!(
                    "assert.in_order: expected the result to contain {}",
                    quoted(needle)
                ))
            }
            None => {
                return Some(format!(
                    "assert.in_order: expected {} after {}, but it comes only before it",
                    quoted(needle),
                    quoted(&needles[n - 1])
                ))
            }
        }
    }
    None
}

/// Text quoted in a message, as JSON writes it (escaped, cut at 200 characters).
fn quoted(text: &str) -> String {
    printable_result(&Value::String(text.to_owned()))
}

/// A list of quoted texts: `"a", "b"`.
fn quoted_all(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| quoted(t))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `value` holds nothing: null, `""`, `[]` or `{}`.
fn empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Checks `wanted` against `result` (wire shape); the first that does not hold is the error:
/// `assert.KIND: what was expected, what was found`, and for `json_path` the mismatch as data.
pub(crate) fn check(result: &Value, wanted: &Assertions) -> Result<(), (String, Option<Mismatch>)> {
    if wanted.is_empty() {
        return Ok(());
    }
    let plain = |message: String| (message, None);
    let texts = haystacks(result);
    // What a failure shows: the text blocks, or the structured content when there are none.
    let holds = || format!("the result holds {}", quoted(&texts[0]));
    let anywhere = |needle: &str| texts.iter().any(|t| t.contains(needle));
    for needle in &wanted.contains {
        if !anywhere(needle) {
            return Err(plain(format!(
                "assert.contains: expected the result to contain {}; {}",
                quoted(needle),
                holds()
            )));
        }
    }
    for needle in &wanted.not_contains {
        for text in &texts {
            let Some(i) = text.find(needle.as_str()) else {
                continue;
            };
            // Where it is, with a little on either side.
            let from = text[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
            let to = text[i + needle.len()..]
                .char_indices()
                .nth(40)
                .map_or(text.len(), |(j, _)| i + needle.len() + j);
            return Err(plain(format!(
                "assert.not_contains: expected the result not to contain {}, but it does: {}",
                quoted(needle),
                quoted(&text[from..to])
            )));
        }
    }
    if !wanted.contains_any.is_empty() && !wanted.contains_any.iter().any(|n| anywhere(n)) {
        return Err(plain(format!(
            "assert.contains_any: expected the result to contain one of {}; {}",
            quoted_all(&wanted.contains_any),
            holds()
        )));
    }
    if !wanted.in_order.is_empty() {
        let errors: Vec<String> = texts
            .iter()
            .filter_map(|t| out_of_order(t, &wanted.in_order))
            .collect();
        if errors.len() == texts.len() {
            return Err(plain(format!("{}; {}", errors[0], holds())));
        }
    }
    if wanted.not_empty {
        let blocks = result
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks.iter().any(|b| {
                    b.get("type").and_then(Value::as_str) != Some("text")
                        || b.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| !t.trim().is_empty())
                })
            })
            .unwrap_or(false);
        let structured = result.get("structuredContent").is_some_and(|s| !empty(s));
        if !blocks && !structured {
            return Err(plain(format!(
                "assert.not_empty: expected the result to hold something, but it is empty: {}",
                printable_result(result.get("content").unwrap_or(&Value::Null))
            )));
        }
    }
    let paths = !wanted.json_path.is_empty()
        || !wanted.min_results.is_empty()
        || !wanted.max_results.is_empty()
        || !wanted.not_empty_at.is_empty();
    if !paths {
        return Ok(());
    }
    let doc =
        document(result).map_err(|why| plain(format!("assert: cannot read a path: {why}")))?;
    for (path, pointer) in &wanted.not_empty_at {
        match doc.pointer(pointer) {
            Some(v) if !empty(v) => {}
            Some(v) => {
                return Err(plain(format!(
                    "assert.not_empty: expected {} to hold something, found {}",
                    escape(path),
                    printable_result(v)
                )))
            }
            None => {
                return Err(plain(format!(
                    "assert.not_empty: expected {} to hold something, but the result has no {}",
                    escape(path),
                    escape(path)
                )))
            }
        }
    }
    for (path, pointer, expected) in &wanted.json_path {
        let mismatch = |got: Option<&Value>| {
            Some(Mismatch {
                pointer: pointer.clone(),
                expected: expected.clone(),
                got: got.cloned(),
            })
        };
        match doc.pointer(pointer) {
            Some(actual) if crate::expect::same(actual, expected) => {}
            Some(actual) => {
                return Err((
                    format!(
                        "assert.json_path: expected {} = {}, got {}",
                        escape(path),
                        printable_result(expected),
                        printable_result(actual)
                    ),
                    mismatch(Some(actual)),
                ))
            }
            None => {
                return Err((
                    format!(
                        "assert.json_path: expected {} = {}, but the result has no {}",
                        escape(path),
                        printable_result(expected),
                        escape(path)
                    ),
                    mismatch(None),
                ))
            }
        }
    }
    let count = |key: &str, path: &str, pointer: &str| -> Result<u64, (String, Option<Mismatch>)> {
        match doc.pointer(pointer) {
            Some(Value::Array(items)) => Ok(items.len() as u64),
            Some(other) => Err(plain(format!(
                "assert.{key}: expected an array at {}, found {}",
                escape(path),
                printable_result(other)
            ))),
            None => Err(plain(format!(
                "assert.{key}: expected an array at {}, but the result has no {}",
                escape(path),
                escape(path)
            ))),
        }
    };
    for (path, pointer, min) in &wanted.min_results {
        let n = count("min_results", path, pointer)?;
        if n < *min {
            return Err(plain(format!(
                "assert.min_results: expected at least {min} items at {}, found {n}",
                escape(path)
            )));
        }
    }
    for (path, pointer, max) in &wanted.max_results {
        let n = count("max_results", path, pointer)?;
        if n > *max {
            return Err(plain(format!(
                "assert.max_results: expected at most {max} items at {}, found {n}",
                escape(path)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Assertions {
        Assertions::read(value).expect("assertions")
    }

    fn text_result(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}]})
    }

    #[test]
    fn json_paths_become_pointers_and_paths_to_many_values_are_refused() {
        for (path, pointer) in [
            ("$", ""),
            ("$.orders[0].order_id", "/orders/0/order_id"),
            ("$['a.b'][\"c/d\"]", "/a.b/c~1d"),
            ("/orders/0", "/orders/0"),
        ] {
            assert_eq!(to_pointer(path).as_deref(), Ok(pointer), "{path}");
        }
        for path in [
            "$..id",
            "$.orders[*]",
            "$.orders[1:2]",
            "orders",
            "$.",
            "$['a",
        ] {
            let err = to_pointer(path).unwrap_err();
            assert!(err.contains("is not a path to one value"), "{path}: {err}");
        }
    }

    /// Each assertion, holding and failing, with what its failure says it found.
    #[test]
    fn each_assertion_says_what_it_expected_and_what_it_found() {
        let result = json!({
            "content": [{"type": "text", "text": "found 2 orders: ord_1042, ord_1043"}],
            "structuredContent": {"orders": [{"id": "ord_1042"}, {"id": "ord_1043"}], "note": ""}
        });
        let cases = [
            (json!({"contains": ["ord_1042", "orders"]}), None),
            (
                json!({"contains": "ord_9"}),
                Some("assert.contains: expected the result to contain \"ord_9\"; the result holds \"found 2 orders"),
            ),
            (json!({"not_contains": ["error"]}), None),
            (
                json!({"not_contains": "ord_1043"}),
                Some("assert.not_contains: expected the result not to contain \"ord_1043\", but it does: \"found 2 orders: ord_1042, ord_1043"),
            ),
            (json!({"contains_any": ["nope", "ord_1043"]}), None),
            (
                json!({"contains_any": ["a1", "b2"]}),
                Some("assert.contains_any: expected the result to contain one of \"a1\", \"b2\";"),
            ),
            (json!({"in_order": ["ord_1042", "ord_1043"]}), None),
            (
                json!({"in_order": ["ord_1043", "ord_1042"]}),
                Some("assert.in_order: expected \"ord_1042\" after \"ord_1043\", but it comes only before it;"),
            ),
            (json!({"json_path": {"$.orders[1].id": "ord_1043", "/orders/0/id": "ord_1042"}}), None),
            (
                json!({"json_path": {"$.orders[0].id": "ord_1"}}),
                Some("assert.json_path: expected $.orders[0].id = \"ord_1\", got \"ord_1042\""),
            ),
            (
                json!({"json_path": {"$.total": 1}}),
                Some("assert.json_path: expected $.total = 1, but the result has no $.total"),
            ),
            (json!({"min_results": {"$.orders": 2}, "max_results": {"/orders": 2}}), None),
            (
                json!({"min_results": {"$.orders": 3}}),
                Some("assert.min_results: expected at least 3 items at $.orders, found 2"),
            ),
            (
                json!({"max_results": {"$.orders": 1}}),
                Some("assert.max_results: expected at most 1 items at $.orders, found 2"),
            ),
            (
                json!({"min_results": 1}),
                Some("assert.min_results: expected an array at $, found {"),
            ),
            (json!({"not_empty": true}), None),
            (json!({"not_empty": ["$.orders"]}), None),
            (
                json!({"not_empty": ["$.note"]}),
                Some("assert.not_empty: expected $.note to hold something, found \"\""),
            ),
        ];
        for (assert, failure) in cases {
            let got = check(&result, &read(assert.clone())).map_err(|(m, _)| m);
            match failure {
                None => assert_eq!(got, Ok(()), "{assert}"),
                Some(start) => {
                    let message = got.expect_err(&assert.to_string());
                    assert!(
                        message.starts_with(start),
                        "{assert}:\n{message}\nnot {start}"
                    );
                }
            }
        }
        let empty = check(&text_result("  "), &read(json!({"not_empty": true})));
        assert_eq!(
            empty.map_err(|(m, _)| m),
            Err("assert.not_empty: expected the result to hold something, but it is empty: [{\"text\":\"  \",\"type\":\"text\"}]".to_owned())
        );
    }

    /// A server that sends its JSON twice (a text block and `structuredContent`, as most do)
    /// holds each text twice: the order is still the order within one of them.
    #[test]
    fn in_order_holds_within_one_text_not_across_two() {
        let structured = json!({"orders": ["ord_1042", "ord_1043"]});
        let result = json!({
            "content": [{"type": "text", "text": structured.to_string()}],
            "structuredContent": structured
        });
        let wrong = check(
            &result,
            &read(json!({"in_order": ["ord_1043", "ord_1042"]})),
        );
        assert!(
            wrong.as_ref().is_err_and(|(m, _)| m.starts_with(
                "assert.in_order: expected \"ord_1042\" after \"ord_1043\", but it comes only before it"
            )),
            "{wrong:?}"
        );
        let right = check(
            &result,
            &read(json!({"in_order": ["ord_1042", "ord_1043"]})),
        );
        assert_eq!(right, Ok(()));
    }

    #[test]
    fn a_json_path_mismatch_is_data_too() {
        let (_, mismatch) = check(
            &json!({"structuredContent": {"status": "pending"}}),
            &read(json!({"json_path": {"$.status": "refunded"}})),
        )
        .unwrap_err();
        assert_eq!(
            mismatch,
            Some(Mismatch {
                pointer: "/status".into(),
                expected: json!("refunded"),
                got: Some(json!("pending")),
            })
        );
    }

    #[test]
    fn an_assert_of_no_known_shape_is_refused_with_the_place() {
        let (at, why) = Assertions::read(json!({"contain": "x"})).unwrap_err();
        assert_eq!(at, "");
        assert!(why.contains("unknown field `contain`"), "{why}");
        let (at, why) = Assertions::read(json!({"json_path": {"$.a[*]": 1}})).unwrap_err();
        assert_eq!(at, "/json_path/$.a[*]");
        assert!(why.contains("not a path to one value"), "{why}");
        let (at, why) = Assertions::read(json!({"min_results": {"$.a": -1}})).unwrap_err();
        assert_eq!(
            (at.as_str(), why.contains("expected a count")),
            ("/min_results/$.a", true)
        );
    }
}
