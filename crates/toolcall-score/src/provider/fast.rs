//! A typed, single-pass reader for OpenAI Chat Completions response bodies: the common case of
//! scoring a log, read straight from the text without building a `serde_json::Value` of the whole
//! body.
//!
//! The general path ([`super::parse_response`]) parses the body into a `Value` and walks it; for a
//! typical Chat Completions body most of that time is spent allocating the map of fields nobody
//! reads (`usage`, ids, timestamps, other choices). Here only `choices[0].message` is
//! materialised; every other value is checked and dropped by [`Skip`].
//!
//! **Invariant:** this path is an accelerator, never a second opinion. It returns `None` (and
//! the caller takes the general path, with its errors and messages) for anything it does not
//! handle exactly as the general path would: another format or an ambiguous shape, a duplicated
//! key it reads, a value of an unexpected type, invalid JSON. When it returns `Some`, the
//! response is equal to the general path's (tests parse every fixture both ways).
//!
//! [`Skip`] goes through `deserialize_any`, not `IgnoredAny`: serde_json's `IgnoredAny` neither
//! applies the recursion limit nor range-checks floats, so a body the general path rejects could
//! otherwise be accepted here.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::openai_chat;
use super::read::{json_string_arguments, opt_string, push_text, At};
use crate::{Anomaly, AnomalyKind, Arguments, Format, Response, ToolCall};

/// The response in `text`, when it is a Chat Completions body this path reads exactly as the
/// general path would; `None` otherwise (including every error).
pub(crate) fn response(text: &str, format: Option<Format>) -> Option<Response> {
    if !matches!(format, None | Some(Format::OpenaiChat)) {
        return None;
    }
    let body: Body = serde_json::from_str(text).ok()?;
    if format.is_none() && !body.detected_as_chat() {
        return None;
    }
    body.into_response()
}

/// Any JSON value, validated exactly as parsing it into a `Value` would, and dropped.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Skip, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_none<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

/// The error that sends a body to the general path; its text is never shown.
fn fallback<E: de::Error>() -> E {
    E::custom("not for the fast path")
}

/// Reads a map's keys as one of `names` (its index) or `None` for any other key, without
/// allocating.
struct KeyOf(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyOf {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|name| *name == key))
    }
}

/// Sets `slot` once; a second value for the same key (where the general path would keep the
/// last) sends the body to the general path.
fn set_once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(fallback());
    }
    *slot = Some(value);
    Ok(())
}

/// What a top-level value looks like, for format detection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Object,
    Array,
    Other,
}

/// A value whose kind (and, for a string, text) is kept, for the shape keys of [`detect`].
///
/// [`detect`]: super::detect
struct Shape {
    kind: Kind,
    text: Option<String>,
}

impl<'de> de::Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Shape, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::other())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::other())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::other())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::other())
            }
            fn visit_str<E>(self, s: &str) -> Result<Shape, E> {
                Ok(Shape {
                    kind: Kind::Other,
                    text: Some(s.to_owned()),
                })
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape {
                    kind: Kind::Null,
                    text: None,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
                SkipVisitor.visit_seq(seq)?;
                Ok(Shape {
                    kind: Kind::Array,
                    text: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape, A::Error> {
                SkipVisitor.visit_map(map)?;
                Ok(Shape {
                    kind: Kind::Object,
                    text: None,
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl Shape {
    fn other() -> Shape {
        Shape {
            kind: Kind::Other,
            text: None,
        }
    }
}

/// The top-level keys [`super::detect`] looks at, besides `choices`.
const SHAPE_KEYS: [&str; 11] = [
    "object",
    "type",
    "content",
    "role",
    "stop_reason",
    "output",
    "candidates",
    "stopReason",
    "message",
    "done",
    "choices",
];
const CHOICES: usize = 10;

/// The response body: its shape keys, and `choices[0]` when `choices` is an array.
struct Body {
    shapes: [Option<Shape>; 10],
    /// `None`: no `choices` key; `Some(None)`: `choices` is `null` or not an array we read.
    choices: Option<Option<First>>,
}

impl<'de> de::Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Body, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a response object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
                let mut body = Body {
                    shapes: Default::default(),
                    choices: None,
                };
                while let Some(key) = map.next_key_seed(KeyOf(&SHAPE_KEYS))? {
                    match key {
                        Some(CHOICES) => {
                            let first = map.next_value::<Choices>()?.0;
                            set_once(&mut body.choices, first)?;
                        }
                        Some(i) => {
                            let shape = map.next_value::<Shape>()?;
                            set_once(&mut body.shapes[i], shape)?;
                        }
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(body)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl Body {
    fn shape(&self, key: &str) -> Option<&Shape> {
        let i = SHAPE_KEYS.iter().position(|k| *k == key)?;
        self.shapes.get(i)?.as_ref()
    }

    /// Whether [`super::detect`] would say `openai-chat` and nothing else: the same predicates
    /// as its `fits`, over the kept shapes.
    fn detected_as_chat(&self) -> bool {
        let str_of = |key: &str| self.shape(key).and_then(|s| s.text.as_deref());
        let kind = |key: &str| self.shape(key).map(|s| s.kind);
        let present = |key: &str| key == "choices" && self.choices.is_some() || kind(key).is_some();
        let chat = str_of("object") == Some("chat.completion")
            || (present("choices") && str_of("object") != Some("chat.completion.chunk"));
        let anthropic = str_of("type") == Some("message")
            || (kind("content") == Some(Kind::Array)
                && (str_of("role") == Some("assistant") || present("stop_reason")));
        let responses = str_of("object") == Some("response") || kind("output") == Some(Kind::Array);
        let gemini = present("candidates");
        let bedrock = kind("output") == Some(Kind::Object) || present("stopReason");
        let ollama = kind("message") == Some(Kind::Object) || present("done");
        chat && !(anthropic || responses || gemini || bedrock || ollama)
    }

    fn into_response(self) -> Option<Response> {
        // `choices` missing, `null`, not an array or empty: the general path's error.
        let first = self.choices??;
        first.into_response()
    }
}

/// `choices`: the first item read as a choice, the rest skipped (the general path never
/// looks at them). `None` for `null`; any other non-array fails.
struct Choices(Option<First>);

impl<'de> de::Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Choices, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Choices;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E>(self) -> Result<Choices, E> {
                Ok(Choices(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Choices, A::Error> {
                let first = seq.next_element::<First>()?;
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Choices(first))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `choices[0]`: its message and finish reason.
struct First {
    message: Option<Message>,
    finish_reason: Option<Value>,
}

const CHOICE_KEYS: [&str; 2] = ["message", "finish_reason"];

impl<'de> de::Deserialize<'de> for First {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<First, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = First;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a choice object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<First, A::Error> {
                let (mut message, mut finish_reason) = (None, None);
                while let Some(key) = map.next_key_seed(KeyOf(&CHOICE_KEYS))? {
                    match key {
                        Some(0) => set_once(&mut message, map.next_value::<Message>()?)?,
                        Some(_) => set_once(&mut finish_reason, map.next_value::<Value>()?)?,
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(First {
                    message,
                    finish_reason,
                })
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// `choices[0].message`: the calls typed; the rarer text fields kept as values, to be read by
/// the general path's own functions.
struct Message {
    calls: Option<Vec<Call>>,
    /// `content`, `refusal`, `function_call`, as the general path's object would hold them.
    rest: Map<String, Value>,
}

const MESSAGE_KEYS: [&str; 4] = ["tool_calls", "content", "refusal", "function_call"];

impl<'de> de::Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Message, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
                let mut calls = None;
                let mut rest = Map::new();
                while let Some(key) = map.next_key_seed(KeyOf(&MESSAGE_KEYS))? {
                    match key {
                        Some(0) => set_once(&mut calls, map.next_value::<Calls>()?.0)?,
                        Some(i) => {
                            let value = map.next_value::<Value>()?;
                            if rest.insert(MESSAGE_KEYS[i].to_owned(), value).is_some() {
                                return Err(fallback());
                            }
                        }
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(Message {
                    calls: calls.flatten(),
                    rest,
                })
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// `tool_calls`: `null` is none; otherwise an array of call objects.
struct Calls(Option<Vec<Call>>);

impl<'de> de::Deserialize<'de> for Calls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Calls, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Calls;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of tool calls")
            }
            fn visit_unit<E>(self) -> Result<Calls, E> {
                Ok(Calls(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Calls, A::Error> {
                let mut calls = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(call) = seq.next_element::<Call>()? {
                    calls.push(call);
                }
                Ok(Calls(Some(calls)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One item of `tool_calls`. `kind` is `None` for `function` (or no type); a call of another
/// type is skipped, as the general path skips it.
struct Call {
    skipped: bool,
    id: Option<String>,
    name: String,
    arguments: Value,
}

const CALL_KEYS: [&str; 3] = ["type", "function", "id"];
const FUNCTION_KEYS: [&str; 2] = ["name", "arguments"];

impl<'de> de::Deserialize<'de> for Call {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Call, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Call;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tool call object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Call, A::Error> {
                let (mut kind, mut function, mut id) = (None, None, None);
                while let Some(key) = map.next_key_seed(KeyOf(&CALL_KEYS))? {
                    match key {
                        Some(0) => set_once(&mut kind, map.next_value::<Value>()?)?,
                        Some(1) => set_once(&mut function, map.next_value::<Function>()?)?,
                        Some(_) => set_once(&mut id, map.next_value::<Value>()?)?,
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                let skipped = match kind {
                    None | Some(Value::Null) => false,
                    Some(Value::String(kind)) => kind != "function",
                    Some(_) => return Err(fallback()),
                };
                let id = match id {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    Some(_) => return Err(fallback()),
                };
                // `function` must be an object (`Function` only reads objects) with a string
                // `name` and non-null `arguments`, unless the call is skipped.
                let (name, arguments) = match function {
                    Some(Function {
                        name: Some(Value::String(name)),
                        arguments: Some(arguments),
                    }) if !arguments.is_null() => (name, arguments),
                    _ if skipped => (String::new(), Value::Null),
                    _ => return Err(fallback()),
                };
                Ok(Call {
                    skipped,
                    id,
                    name,
                    arguments,
                })
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A call's `function` object (`null` reads as absent: a failure unless the call is skipped).
struct Function {
    name: Option<Value>,
    arguments: Option<Value>,
}

impl<'de> de::Deserialize<'de> for Function {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Function, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Function;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a function object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Function, A::Error> {
                let (mut name, mut arguments) = (None, None);
                while let Some(key) = map.next_key_seed(KeyOf(&FUNCTION_KEYS))? {
                    match key {
                        Some(0) => set_once(&mut name, map.next_value::<Value>()?)?,
                        Some(_) => set_once(&mut arguments, map.next_value::<Value>()?)?,
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(Function { name, arguments })
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl First {
    /// The response, built as [`openai_chat::response`] builds it; `None` where it would fail.
    fn into_response(self) -> Option<Response> {
        let message = self.message?;
        let mut response = Response::empty(Format::OpenaiChat);
        // Text fields through the general path's own readers, over the same values.
        let at = At::ROOT;
        openai_chat::content_into(&message.rest, &at, &mut response.text).ok()?;
        if let Some(refusal) = opt_string(&message.rest, "refusal", &at).ok()? {
            push_text(&mut response.text, refusal);
        }
        for call in message.calls.into_iter().flatten() {
            if call.skipped {
                continue;
            }
            let arguments = match call.arguments {
                Value::String(raw) => json_string_arguments(&raw),
                other => Arguments::Parsed(other),
            };
            response.calls.push(ToolCall {
                id: call.id,
                name: call.name,
                namespace: None,
                arguments,
            });
        }
        if let Some(legacy) = openai_chat::legacy_function_call(&message.rest, &at).ok()? {
            if response.calls.is_empty() {
                response.calls.push(legacy);
            } else if let Some(detail) = openai_chat::mismatch(&legacy, &response.calls) {
                response.anomalies.push(Anomaly {
                    kind: AnomalyKind::LegacyMismatch,
                    detail,
                });
            }
        }
        response.stop_reason = match self.finish_reason {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => return None,
        };
        Some(response)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// The general path over the same text: parse into a `Value`, then read it.
    fn general(text: &str, format: Option<Format>) -> Option<Response> {
        let value: Value = serde_json::from_str(text).ok()?;
        super::super::parse_response(&value, format).ok()
    }

    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("a fixture directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "json" || e == "jsonl")
            {
                out.push(path);
            }
        }
    }

    /// Every provider fixture and every recording in the repository (each line of a `.jsonl`),
    /// under every format: wherever the fast path answers, it answers what the general path
    /// does, and it answers for every Chat Completions recording.
    #[test]
    fn equals_the_general_path_on_every_fixture_and_recording() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        files(&crate_dir.join("tests/fixtures"), &mut paths);
        files(&crate_dir.join("../../recorded"), &mut paths);
        let (mut fast, mut chat) = (0, 0);
        for path in &paths {
            let text = std::fs::read_to_string(path).expect("readable");
            let texts: Vec<&str> = if path.extension().is_some_and(|e| e == "jsonl") {
                text.lines().filter(|l| !l.trim().is_empty()).collect()
            } else {
                vec![&text]
            };
            for text in texts {
                for format in std::iter::once(None).chain(Format::ALL.map(Some)) {
                    let expected = general(text, format);
                    if expected
                        .as_ref()
                        .is_some_and(|r| r.format == Format::OpenaiChat)
                    {
                        chat += 1;
                    }
                    if let Some(got) = response(text, format) {
                        fast += 1;
                        assert_eq!(Some(&got), expected.as_ref(), "{}", path.display());
                    }
                }
            }
        }
        assert!(
            chat > 60,
            "only {chat} Chat Completions parses among the fixtures"
        );
        assert_eq!(
            fast, chat,
            "the fast path declined some Chat Completions bodies"
        );
    }

    const BODY: &str = r#"{"object": "chat.completion", "usage": {"total_tokens": 1},
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
        "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_balance", "arguments": "{\"account_id\": \"a\"}"}}]}}]}"#;

    #[test]
    fn reads_a_plain_body() {
        let got = response(BODY, None).expect("the fast path reads it");
        assert_eq!(got.calls[0].name, "get_balance");
        assert_eq!(got.calls[0].id.as_deref(), Some("c1"));
        assert_eq!(got.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(Some(got), general(BODY, None));
    }

    /// What the general path rejects or reads differently, the fast path leaves to it.
    #[test]
    fn declines_what_it_cannot_read_exactly() {
        let declined = [
            // Out-of-range float and deep nesting in a skipped field: `Value` rejects both.
            BODY.replace(r#""total_tokens": 1"#, r#""total_tokens": 1e400"#),
            BODY.replace(
                r#""total_tokens": 1"#,
                &format!(r#""x": {}1{}"#, "[".repeat(200), "]".repeat(200)),
            ),
            // A duplicated key the general path reads: it keeps the last one.
            BODY.replace(
                r#""type": "function","#,
                r#""type": "function", "id": "c2","#,
            ),
            BODY.replace(r#""index": 0,"#, r#""finish_reason": "stop", "index": 0,"#),
            // Another format fits as well.
            BODY.replace(r#""usage""#, r#""candidates": [], "usage""#),
            BODY.replace(r#""object": "chat.completion""#, r#""object": "response""#),
            // Wrong types where the general path names the error.
            BODY.replace(r#""c1""#, "[]"),
            BODY.replace(r#""name": "get_balance""#, r#""name": 7"#),
            BODY.replace(r#""content": null"#, r#""content": 7"#),
            // Not JSON at all.
            BODY.replace(r#""object""#, r#"object"#),
        ];
        for text in &declined {
            assert_ne!(text, BODY);
            assert_eq!(response(text, None), None, "{text}");
        }
    }

    #[test]
    fn matches_the_general_path_on_the_edges_it_does_read() {
        let edges = [
            // A numeric id, a skipped custom call, other choices of any shape.
            BODY.replace(r#""c1""#, "12"),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "custom", "custom": {"name": "x", "input": "y"}}, "#,
            ),
            BODY.replace(r#"}}]}}]}"#, r#"}}]}}, 7, {"message": null}]}"#),
            // Arguments that are not JSON, or an object (OpenAI-compatible servers).
            BODY.replace(r#""{\"account_id\": \"a\"}""#, r#""{\"account_id\": ""#),
            BODY.replace(r#""{\"account_id\": \"a\"}""#, r#"{"account_id": "a"}"#),
            // Text, a refusal, escaped keys, a legacy call that disagrees.
            BODY.replace(r#""content": null"#, r#""content": "let me \u0063heck""#),
            BODY.replace(
                r#""content": null"#,
                r#""refusal": "no", "content": [{"type": "text", "text": "a"}]"#,
            ),
            BODY.replace(r#""role""#, r#""r\u006fle""#),
            BODY.replace(
                r#""content": null"#,
                r#""content": null, "function_call": {"name": "other", "arguments": "{}"}"#,
            ),
            // No `object` key: told by `choices` alone.
            BODY.replace(r#""object": "chat.completion","#, ""),
        ];
        for text in &edges {
            assert_ne!(text, BODY);
            let got = response(text, None);
            assert!(got.is_some(), "declined: {text}");
            assert_eq!(got, general(text, None), "{text}");
        }
    }
}
