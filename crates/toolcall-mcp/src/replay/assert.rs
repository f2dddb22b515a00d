//! Checking a result against a call's `assert` ([`crate::Assertions`]): each assertion in
//! turn, the first that does not hold the failure, saying what it found.

use serde_json::Value;
use toolcall_score::escape;

use crate::assertions::Assertions;
use crate::expect::{document, printable_result, Mismatch};

/// The texts the text assertions search: the text blocks, joined by newlines (when there is
/// one), and the `structuredContent`'s values (when there is one). Two texts, not one: a server
/// that sends its JSON both ways would otherwise hold everything twice, and `in_order` would
/// hold whatever the order.
///
/// The `structuredContent` is searched as its values say themselves, each string as it is and
/// each number or boolean as JSON writes it, one a line (arrays in order, an object's members by
/// name), never as serialised JSON: that escaped what it held (`C:\tmp` was `C:\\tmp`, a quote
/// `\"`) and held its keys (`not_contains: "error"` failed on `{"error": null}`).
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
        let mut leaves = Vec::new();
        scalars(structured, &mut leaves);
        texts.push(leaves.join("\n"));
    }
    if texts.is_empty() {
        texts.push(String::new());
    }
    texts
}

/// The scalar values inside `value`, in order, as [`haystacks`] searches them.
fn scalars(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Number(_) | Value::Bool(_) => out.push(value.to_string()),
        Value::Null => {}
        Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
        Value::Object(members) => members.values().for_each(|v| scalars(v, out)),
    }
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

    /// The structured content is searched as its values say themselves: a Windows path, a
    /// quote and a line break are found as written (serialised JSON escaped them), and a key is
    /// not a value (`not_contains: "error"` held against `{"error": null}` failed).
    #[test]
    fn structured_content_is_searched_by_its_values_not_its_json() {
        let result = json!({
            "content": [],
            "structuredContent": {"path": "C:\\tmp\\a.txt", "said": "a \"quote\"\nnext",
                                  "error": null, "count": 3}
        });
        for holds in [
            json!({"contains": ["C:\\tmp\\a.txt", "a \"quote\"\nnext", "3"]}),
            json!({"not_contains": ["error", "path", "null"]}),
        ] {
            assert_eq!(check(&result, &read(holds.clone())), Ok(()), "{holds}");
        }
    }
}
