//! A call's `assert`: what the result must say, beyond the exact values `expect` pins.
//!
//! The shapes server teams already write for mcp-assert: texts the result `contains`,
//! `not_contains`, `contains_any` of, or holds `in_order`; `json_path` values; array lengths
//! (`min_results`, `max_results`); `not_empty`. Two texts are searched: the result's text
//! blocks, joined by newlines, and its `structuredContent`'s values (strings as they are,
//! numbers and booleans as JSON writes them; never its keys or escapes); a text holds when it holds
//! in either (`in_order`: all of it in one), and `not_contains` when it holds in both, so a
//! check holds whichever of the two a server fills. Paths (`$.orders[0].id`, or a JSON pointer
//! `/orders/0/id`) address the document `expect` reads: the `structuredContent`, else the first
//! text block that parses as JSON. A path is turned into a JSON pointer when the flow is read,
//! so one that cannot address a single value (`$..id`, `$.orders[*]`) is the file's error.

use serde::Deserialize;
use serde_json::Value;
use toolcall_score::escape;

/// A call's `assert`, checked and ready.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assertions {
    pub(crate) contains: Vec<String>,
    pub(crate) not_contains: Vec<String>,
    pub(crate) contains_any: Vec<String>,
    pub(crate) in_order: Vec<String>,
    /// `(the path as written, its JSON pointer, the value it must hold)`.
    pub(crate) json_path: Vec<(String, String, Value)>,
    /// `(the path as written, its pointer, the fewest items)`.
    pub(crate) min_results: Vec<(String, String, u64)>,
    /// `(the path as written, its pointer, the most items)`.
    pub(crate) max_results: Vec<(String, String, u64)>,
    /// `not_empty: true`: the result holds something.
    pub(crate) not_empty: bool,
    /// `not_empty: [paths]`: `(as written, pointer)`, each holding something.
    pub(crate) not_empty_at: Vec<(String, String)>,
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
    format!("/{member}/{}", pointer_token(key))
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
            pointer.push_str(&pointer_token(name));
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
                    (pointer_token(&inner[..close]), tail)
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

/// `key` as one token of a JSON pointer (`~` and `/` escaped), as a flow's reader writes one.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
