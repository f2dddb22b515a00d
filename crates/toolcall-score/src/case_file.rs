//! Reading a case file: the provider's request read by `provider/`, and the case's own keys
//! (`about`, `format`, `parent_tools`, `expect`), with a key one typo away from them an error.
//! Above the wire readers, which see [`Case`] only as data.

use std::path::Path;

use serde_json::Value;

use crate::errors::{prefix, InputError, ParseError};
use crate::input::parse_json;
use crate::provider::Tools;
use crate::{Case, Catalog, Expect, Format};

/// The strings Ollama's own `format` request key takes: `"json"` for JSON output, and `""` for
/// none, which Go clients (langchaingo, Ollama's own `api` package) send when it is unset. Its
/// other value is a JSON Schema object.
const OLLAMA_FORMATS: [&str; 2] = ["json", ""];

impl Case {
    /// Reads a case file. Errors name the file, line and column; with the `schema` feature, a
    /// tool's input schema that does not compile is one (see `SchemaError`, with the `schema` feature).
    pub fn load(path: &Path) -> Result<Case, InputError> {
        let text = crate::input::read_text(path)?;
        Case::parse(Some(path), &text)
    }

    /// Parses a case from JSON text. Errors name the line and column.
    pub fn from_json_str(text: &str) -> Result<Case, InputError> {
        Case::parse(None, text)
    }

    fn parse(path: Option<&Path>, text: &str) -> Result<Case, InputError> {
        let mut value = parse_json(path, text)?;
        let (mut case, tools, parent) =
            Case::read(&value, Tools::deferring).map_err(|e| InputError::invalid(path, text, e))?;
        // A schema that does not compile is the case's fault, never a call's: an error with its
        // place, checked while the schemas are still in the document. (The parent's schemas
        // judge no call, so they are not compiled.)
        #[cfg(feature = "schema")]
        crate::provider::check_deferred(&tools, &value)
            .map_err(|e| InputError::invalid(path, text, e))?;
        // Everything is read: only now are the schemas moved out of the document, which is
        // dropped right after.
        if let (Some(parent), Some(document)) = (parent, value.get_mut("parent_tools")) {
            case.parent = Some(Catalog::new(parent.take_schemas(document)));
        }
        case.catalog = Catalog::new(tools.take_schemas(&mut value));
        Ok(case)
    }

    /// Builds a case from a parsed JSON value. Its schemas are not compiled here (this is the
    /// per-line path of a log): a schema that does not compile is
    /// `SchemaError::Uncompilable` when a call is validated, never a violation.
    pub fn from_value(value: &Value) -> Result<Case, ParseError> {
        let (mut case, tools, parent) = Case::read(value, Tools::cloning)?;
        case.catalog = Catalog::new(tools.into_tools());
        case.parent = parent.map(|parent| Catalog::new(parent.into_tools()));
        Ok(case)
    }

    /// Reads a case, gathering the request's tools and the parent's (when given) into fresh
    /// collectors made by `collector`; the case's catalogs are left empty for the caller to fill
    /// from those collectors.
    fn read(
        value: &Value,
        collector: fn() -> Tools,
    ) -> Result<(Case, Tools, Option<Tools>), ParseError> {
        Case::read_with(value, collector, crate::provider::PreRead::default())
    }

    /// [`Case::read`], with the request members in `pre` already read by the caller (see
    /// [`crate::provider::read_request_with`]).
    pub(crate) fn read_with(
        value: &Value,
        collector: fn() -> Tools,
        pre: crate::provider::PreRead,
    ) -> Result<(Case, Tools, Option<Tools>), ParseError> {
        let Some(object) = value.as_object() else {
            return Err(ParseError::unexpected("", "a case object", value));
        };
        for key in object.keys() {
            if let Some(meant) = Case::KEYS
                .iter()
                // The length check first: most keys are far longer or shorter than these.
                .find(|k| **k != key && **k != Case::SCHEMA_KEY && near_miss(k, key))
            {
                return Err(ParseError::Unexpected {
                    pointer: format!("/{}", key.replace('~', "~0").replace('/', "~1")),
                    expected: format!("`{meant}` (a case key)"),
                    found: format!("`{}`", crate::escape(key)),
                });
            }
        }
        let about = match object.get("about") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(ParseError::unexpected("/about", "a string", other)),
        };
        let format = match object.get("format") {
            // Ollama's request key of the same name: structured output, not a case format.
            None | Some(Value::Null | Value::Object(_)) => None,
            Some(Value::String(s)) if OLLAMA_FORMATS.contains(&s.as_str()) => None,
            Some(Value::String(s)) => {
                Some(s.parse::<Format>().map_err(|e| ParseError::Unexpected {
                    pointer: "/format".into(),
                    expected: "a format name".into(),
                    found: e.to_string(),
                })?)
            }
            Some(other) => {
                return Err(ParseError::unexpected(
                    "/format",
                    "a format name (or Ollama's \"json\", \"\" or a schema object)",
                    other,
                ))
            }
        };
        let expect = match object.get("expect") {
            None | Some(Value::Null) => Expect::Any,
            Some(Value::String(s)) if s == "any" => Expect::Any,
            Some(Value::String(s)) if s == "no_call" => Expect::NoCall,
            Some(other) => {
                return Err(ParseError::unexpected(
                    "/expect",
                    "\"any\" or \"no_call\"",
                    other,
                ))
            }
        };
        let parent = match object.get("parent_tools") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let mut tools = collector();
                crate::provider::read_tools(value, &mut tools)
                    .map_err(|e| prefix("/parent_tools", e))?;
                Some(tools)
            }
        };
        let mut tools = collector();
        let request = crate::provider::read_request_with(value, format, &mut tools, pre)?;
        let case = Case {
            about,
            format,
            request_format: request.format,
            system: request.system.unwrap_or_default(),
            catalog: Catalog::default(),
            transcript: request.transcript,
            parent: None,
            expect,
        };
        Ok((case, tools, parent))
    }
}

/// Whether `b` is `a` with one character changed, added or removed, or two adjacent ones
/// swapped (`expcet` for `expect`: the commonest typo, and two edits to Levenshtein). Every
/// key of every request is checked, so nothing is allocated.
fn near_miss(a: &str, b: &str) -> bool {
    let (a_chars, b_chars) = (a.chars().count(), b.chars().count());
    let (long, short) = if a_chars >= b_chars { (a, b) } else { (b, a) };
    match a_chars.abs_diff(b_chars) {
        0 => {
            let mut differ = long
                .chars()
                .zip(short.chars())
                .enumerate()
                .filter(|(_, (x, y))| x != y);
            match (differ.next(), differ.next(), differ.next()) {
                (_, None, _) => true,
                (Some((i, (a1, b1))), Some((j, (a2, b2))), None) => {
                    j == i + 1 && a1 == b2 && a2 == b1
                }
                _ => false,
            }
        }
        1 => {
            // The longer one with one character left out is the shorter one.
            let (mut long, mut short) = (long.chars(), short.chars().peekable());
            let mut skipped = false;
            for c in long.by_ref() {
                if short.peek() == Some(&c) {
                    short.next();
                } else if skipped {
                    return false;
                } else {
                    skipped = true;
                }
            }
            short.next().is_none()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_near_miss_is_one_edit_or_one_adjacent_swap() {
        // The definition, spelled out the slow way.
        fn reference(a: &str, b: &str) -> bool {
            let (x, y): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            let swapped = x.len() == y.len() && {
                let differ: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
                matches!(differ[..], [i, j] if j == i + 1 && x[i] == y[j] && x[j] == y[i])
            };
            x.len().abs_diff(y.len()) <= 1 && (crate::suggest::edit_distance(a, b) <= 1 || swapped)
        }
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "bac",
            "abcd",
            "expect",
            "expcet",
            "epect",
            "expects",
            "format",
            "fromat",
            "formta",
            "tools",
            "model",
            "about",
            "abuot",
            "é",
            "éa",
            "aé",
            "ab́",
            "parent_tools",
            "parent_tool",
            "$schema",
            "schema",
            "aab",
            "aba",
        ];
        for a in words {
            for b in words {
                assert_eq!(near_miss(a, b), reference(a, b), "{a:?} {b:?}");
            }
        }
    }

    const OLLAMA_TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#;

    fn ollama_request(format: Value) -> Value {
        let tools: Value = serde_json::from_str(OLLAMA_TOOLS).expect("JSON");
        json!({
            "model": "llama3.2",
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "tools": tools,
            "stream": false,
            "format": format,
        })
    }

    /// An Ollama request asking for structured output (or, as Go clients send it, for none:
    /// `"format": ""`, seen in langchaingo's recorded requests) is a case as it is: its `format`
    /// is the request's, not the case's.
    #[test]
    fn ollamas_own_format_key_is_left_to_the_request() {
        let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}});
        for format in [json!("json"), json!(""), schema] {
            let case = Case::from_value(&ollama_request(format.clone()))
                .unwrap_or_else(|e| panic!("{format}: {e}"));
            assert_eq!(case.format, None, "{format}");
            assert_eq!(case.catalog.names().collect::<Vec<_>>(), ["get_weather"]);
        }
    }

    /// A response body given where a case belongs is named as one, not read as an empty case.
    #[test]
    fn a_response_body_is_not_a_case() {
        let body = json!({"object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]});
        let error = Case::from_value(&body).expect_err("a response").to_string();
        assert!(
            error.contains("found a response body (openai-chat): score it as the response"),
            "{error}"
        );
        let anthropic = json!({"type": "message", "role": "assistant", "content": []});
        let error = Case::from_value(&anthropic)
            .expect_err("a response")
            .to_string();
        assert!(error.contains("a response body (anthropic)"), "{error}");
        // A case with only its own keys is still a case (the bare membership check).
        assert!(Case::from_value(&json!({"about": "nothing yet"})).is_ok());
    }

    /// A case's own `format` still names a format, and anything else there is an error that
    /// says what it takes.
    #[test]
    fn a_case_format_is_a_format_name() {
        let case = Case::from_value(&ollama_request(json!("ollama"))).expect("a case");
        assert_eq!(case.format, Some(Format::Ollama));
        for bad in [json!("olama"), json!(7), json!(["ollama"])] {
            let error = Case::from_value(&ollama_request(bad.clone()))
                .expect_err("not a format")
                .to_string();
            assert!(error.contains("/format"), "{bad}: {error}");
        }
    }

    /// A misspelt case key is an error naming the key it was meant to be, whether a letter is
    /// missing, extra, wrong, or two letters are swapped (the commonest typo); a provider's own
    /// keys are left alone.
    #[test]
    fn a_misspelt_case_key_is_named() {
        for (typo, meant) in [
            ("expct", "expect"),
            ("expecct", "expect"),
            ("expcet", "expect"),
            ("abuot", "about"),
            ("parnet_tools", "parent_tools"),
            ("fromat", "format"),
            ("abotu", "about"),
        ] {
            let mut case = ollama_request(Value::Null);
            case[typo] = json!("no_call");
            let error = Case::from_value(&case).expect_err(typo).to_string();
            assert!(
                error.contains(&format!("/{typo}")) && error.contains(&format!("`{meant}`")),
                "{typo}: {error}"
            );
        }
        let mut case = ollama_request(Value::Null);
        // One longer than a case key, and not a misspelling of one.
        case["abcdefg"] = json!(1);
        case["expectxy"] = json!(1);
        let case = Case::from_value(&case).expect("no case key misspelt");
        assert_eq!(case.format, None);
    }

    /// A case naming its JSON Schema reads as the same case without it; a key near `$schema`
    /// (a provider's `schema`, a misspelling) is no error, since nothing reads the key; and
    /// live mode sends the key to no provider.
    #[test]
    fn a_schema_key_is_read_by_no_one_and_sent_to_no_provider() {
        let plain = ollama_request(Value::Null);
        let mut named = plain.clone();
        named["$schema"] = json!("../../schemas/case.schema.json");
        let (a, b) = (
            Case::from_value(&plain).expect("a case"),
            Case::from_value(&named).expect("a case with $schema"),
        );
        assert_eq!(
            (b.catalog.names().collect::<Vec<_>>(), b.format, b.system),
            (a.catalog.names().collect::<Vec<_>>(), a.format, a.system)
        );
        for near in ["schema", "$schem", "$schemas"] {
            let mut case = plain.clone();
            case[near] = json!("x");
            assert!(Case::from_value(&case).is_ok(), "{near}");
        }
        // Written in the target's shape, the case is sent as written, less the case's keys.
        let tools: Value = serde_json::from_str(OLLAMA_TOOLS).expect("JSON");
        let written = json!({
            "$schema": "../../schemas/case.schema.json",
            "about": "a Chat case",
            "format": "openai-chat",
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "tools": tools,
        });
        let case = Case::from_value(&written).expect("a Chat case");
        let settings = crate::RequestSettings {
            model: "m".into(),
            tool_choice: "auto".into(),
            max_output_tokens: None,
            temperature: None,
        };
        let body = Format::OpenaiChat
            .request_body(&written, &case, &settings)
            .expect("a Chat body");
        assert_eq!(body["messages"], written["messages"], "sent as written");
        for key in ["$schema", "about", "format"] {
            assert!(body.get(key).is_none(), "{key} sent: {body:#}");
        }
    }
}
