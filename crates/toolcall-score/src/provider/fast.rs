//! The single-pass reader of response bodies: every format read straight from the text, without
//! first building a `serde_json::Value` of the whole body.
//!
//! The general path ([`super::response::parse_response`]) parses the body into a `Value` and walks it; most
//! of that time goes into allocating the members nobody reads (`usage`, ids, timestamps, the
//! `tools` and `instructions` a Responses body echoes back). Here the top level is read member by
//! member: the members that format detection or some format's reader looks at ([`TOP_KEYS`]) are
//! kept as values, every other member is checked and dropped by [`Skip`]. Detection
//! ([`super::registry::fitting`]) and the general path's own per-format reader then run over the kept
//! members, so the two paths cannot disagree on what a format means. OpenAI Chat Completions
//! bodies, the bulk of most logs, go one step further: `choices[0].message` is read typed, with no
//! `Value` at all: each call's arguments string is kept as its text, checked and parsed only when
//! scoring asks ([`crate::JsonText`]).
//!
//! **Invariant:** this path is an accelerator, never a second opinion. It returns `None` (and the
//! caller takes the general path, with its errors and messages) for every error, and for the rare
//! valid shape the typed Chat reader does not read (a value of an unexpected type where it looks,
//! as in the first of two duplicated keys). When it returns `Some`, the response is equal to the
//! general path's: a duplicated key keeps its last value, as in a `Value`. Tests parse every
//! fixture and recording both ways under every format, and property tests arbitrary values and
//! bytes.
//!
//! # What is checked
//!
//! Exactly what parsing the body into a `Value` checks, skipped members included: [`Skip`]
//! (`crate::json_check`'s) accepts what a `Value` parse accepts, so a body the general path
//! rejects (`"usage": {"n": 1e400}`) is not accepted here. Skipping with `IgnoredAny` instead
//! saved 6% of the parse on the scoring bench's corpus (callgrind): too little for two contracts.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::read::{json_string_arguments, opt_string, push_text, At};
use super::registry::TOP_KEYS;
use super::{openai_chat, Members};
use crate::json_check::Skip;
use crate::{Anomaly, AnomalyKind, Arguments, Format, Response, ToolCall};

/// The response in `text`, when this path reads it exactly as the general path would; `None`
/// otherwise (including every error).
pub(crate) fn response(text: &str, format: Option<Format>) -> Option<Response> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let response = Body { format }.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    response
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

/// A JSON object read member by member: the members named in `KEYS` are handed to `field` (by
/// index), every other member is skipped. A key given twice is read twice; the reader keeps the
/// last value, as a `Value` does.
trait Fields<'de>: Default {
    const KEYS: &'static [&'static str];

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error>;

    /// The members of `map`, read into a fresh value.
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = Self::default();
        while let Some(key) = map.next_key_seed(KeyOf(Self::KEYS))? {
            match key {
                Some(key) => fields.field(key, &mut map)?,
                None => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(fields)
    }
}

/// A JSON object (and nothing else) read as `T`'s [`Fields`].
struct Obj<T>(T);

impl<'de, T: Fields<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Obj<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Fields<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::read(map).map(Obj)
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

// The top-level members some reader looks at (`TOP_KEYS`) are the union of every format's
// `top_keys`, from the registry: the shape keys detection looks at and the members each
// format's reader reads. `choices` is read typed, for Chat Completions.
const CHOICES: usize = {
    let mut i = 0;
    while !matches!(TOP_KEYS[i].as_bytes(), b"choices") {
        i += 1;
    }
    i
};

/// A response body (an object, or a call list), read into the response when this path reads it
/// exactly as the general path would.
struct Body {
    format: Option<Format>,
}

impl<'de> DeserializeSeed<'de> for Body {
    type Value = Option<Response>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Body {
    type Value = Option<Response>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a response object or a call array")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(Top::read(map)?.into_response(self.format))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let items = Vec::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(super::stream::parse_array(&Value::Array(items), self.format).ok())
    }
}

/// A response object's kept members.
#[derive(Default)]
struct Top {
    /// The members of [`TOP_KEYS`], by index, as the general path's object holds them; but
    /// `choices`, read into `choices` instead, is only a `null` placeholder here.
    kept: [Option<Value>; TOP_KEYS.len()],
    /// `None`: no `choices`, or `null`; `Some(None)`: an empty array.
    choices: Option<Option<First>>,
}

impl<'de> Fields<'de> for Top {
    const KEYS: &'static [&'static str] = &TOP_KEYS;

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error> {
        self.kept[key] = Some(if key == CHOICES {
            self.choices = map.next_value::<Option<Choices>>()?.map(|c| c.0);
            Value::Null
        } else {
            map.next_value()?
        });
        Ok(())
    }
}

impl Members for Top {
    fn member(&self, key: &str) -> Option<&Value> {
        let i = TOP_KEYS.iter().position(|k| *k == key)?;
        self.kept[i].as_ref()
    }
}

impl Top {
    fn into_response(self, format: Option<Format>) -> Option<Response> {
        let format = match format {
            Some(format) => format,
            None => super::registry::fitting(&self).ok()?,
        };
        if format == Format::OpenaiChat {
            // `choices` missing, `null` or empty: the general path's error.
            return self.choices??.into_response();
        }
        // The other formats' readers look only at the kept members, never at `choices`. The
        // keys are distinct: inserted one by one, not collected (which sorts a buffer first).
        let mut kept = Map::new();
        for (key, value) in TOP_KEYS.iter().zip(self.kept) {
            if let Some(value) = value {
                kept.insert((*key).to_owned(), value);
            }
        }
        super::body::read_body(&Value::Object(kept), Some(format)).ok()
    }
}

/// `choices`: the first item read as a choice, the rest skipped (the general path never
/// looks at them).
struct Choices(Option<First>);

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Choices, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Choices;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Choices, A::Error> {
                let first = seq.next_element::<Obj<First>>()?;
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Choices(first.map(|f| f.0)))
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// `choices[0]`: its message and finish reason.
#[derive(Default)]
struct First {
    message: Option<Message>,
    finish_reason: Option<String>,
}

impl<'de> Fields<'de> for First {
    const KEYS: &'static [&'static str] = &["message", "finish_reason"];

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error> {
        match key {
            0 => self.message = map.next_value::<Option<Obj<Message>>>()?.map(|m| m.0),
            _ => self.finish_reason = map.next_value()?,
        }
        Ok(())
    }
}

/// `choices[0].message`: the calls typed; the rarer text fields kept as values (absent when
/// `null`, as the general path reads them), to be read by the general path's own functions.
#[derive(Default)]
struct Message {
    calls: Vec<ToolCall>,
    content: Option<Value>,
    refusal: Option<Value>,
    function_call: Option<Value>,
}

impl<'de> Fields<'de> for Message {
    const KEYS: &'static [&'static str] = &["tool_calls", "content", "refusal", "function_call"];

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error> {
        match key {
            0 => {
                self.calls = map
                    .next_value::<Option<Calls>>()?
                    .map_or_else(Vec::new, |c| c.0)
            }
            1 => self.content = map.next_value()?,
            2 => self.refusal = map.next_value()?,
            _ => self.function_call = map.next_value()?,
        }
        Ok(())
    }
}

/// `tool_calls`: the calls the general path reads, in order.
struct Calls(Vec<ToolCall>);

impl<'de> Deserialize<'de> for Calls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Calls, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Calls;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of tool calls")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Calls, A::Error> {
                let mut calls = Vec::new();
                while let Some(Obj(call)) = seq.next_element::<Obj<Call>>()? {
                    if let Some(call) = call.into_call()? {
                        calls.push(call);
                    }
                }
                Ok(Calls(calls))
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// One item of `tool_calls`. A call whose `type` is neither `function` nor `custom` is skipped,
/// as the general path skips it.
#[derive(Default)]
struct Call {
    kind: Option<CallType>,
    function: Option<Inner>,
    custom: Option<Inner>,
    id: Option<Id>,
}

impl<'de> Fields<'de> for Call {
    const KEYS: &'static [&'static str] = &["type", "function", "custom", "id"];

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error> {
        match key {
            0 => self.kind = map.next_value()?,
            1 => self.function = map.next_value::<Option<Obj<Inner>>>()?.map(|f| f.0),
            2 => self.custom = map.next_value::<Option<Obj<Inner>>>()?.map(|c| c.0),
            _ => self.id = map.next_value()?,
        }
        Ok(())
    }
}

impl Call {
    /// The call, or `None` for a call of another type than `function` or `custom`; an error
    /// (whose text is never shown) where the general path fails: no `function` (`custom`)
    /// object, no string `name` (no string `input`). No `arguments` is no arguments, `{}`.
    fn into_call<E: de::Error>(self) -> Result<Option<ToolCall>, E> {
        let rejected = || E::custom("a call the general path rejects");
        let (name, arguments) = match self.kind {
            None | Some(CallType::Function) => match self.function {
                Some(Inner {
                    name: Some(name),
                    arguments,
                    ..
                }) => (
                    name,
                    arguments.map_or_else(|| Arguments::Parsed(Value::Object(Map::new())), |a| a.0),
                ),
                _ => return Err(rejected()),
            },
            Some(CallType::Custom) => match self.custom {
                Some(Inner {
                    name: Some(name),
                    input: Some(text),
                    ..
                }) => (name, Arguments::Text { text }),
                _ => return Err(rejected()),
            },
            Some(CallType::Other) => return Ok(None),
        };
        Ok(Some(ToolCall {
            id: self.id.map(|id| id.0),
            name,
            namespace: None,
            arguments,
            builtin: None,
        }))
    }
}

/// A call's `function` object (its `name` and `arguments`) or `custom` object (its `name` and
/// free-text `input`); the member the other kind has is read too, and never used.
#[derive(Default)]
struct Inner {
    name: Option<String>,
    arguments: Option<Args>,
    input: Option<String>,
}

impl<'de> Fields<'de> for Inner {
    const KEYS: &'static [&'static str] = &["name", "arguments", "input"];

    fn field<A: MapAccess<'de>>(&mut self, key: usize, map: &mut A) -> Result<(), A::Error> {
        match key {
            0 => self.name = map.next_value()?,
            1 => self.arguments = map.next_value()?,
            _ => self.input = map.next_value()?,
        }
        Ok(())
    }
}

/// A call's `type`.
enum CallType {
    Function,
    Custom,
    /// A type the general path skips.
    Other,
}

impl<'de> Deserialize<'de> for CallType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CallType, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CallType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a call type")
            }
            fn visit_str<E>(self, kind: &str) -> Result<CallType, E> {
                Ok(match kind {
                    "function" => CallType::Function,
                    "custom" => CallType::Custom,
                    _ => CallType::Other,
                })
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// An id as [`super::read::opt_id`] reads it: a string, or a number in its JSON spelling.
struct Id(String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id")
            }
            fn visit_str<E>(self, id: &str) -> Result<Id, E> {
                Ok(Id(id.to_owned()))
            }
            fn visit_i64<E>(self, id: i64) -> Result<Id, E> {
                Ok(Id(id.to_string()))
            }
            fn visit_u64<E>(self, id: u64) -> Result<Id, E> {
                Ok(Id(id.to_string()))
            }
            fn visit_f64<E>(self, id: f64) -> Result<Id, E> {
                Ok(Id(Value::from(id).to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A call's `arguments`: a JSON string kept as its text (checked and parsed only when scored), or
/// any other value as it is.
struct Args(Arguments);

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Args, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("arguments")
            }
            fn visit_str<E>(self, raw: &str) -> Result<Args, E> {
                Ok(Args(json_string_arguments(raw)))
            }
            fn visit_bool<E>(self, b: bool) -> Result<Args, E> {
                Ok(Args(Arguments::Parsed(Value::Bool(b))))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Args, E> {
                Ok(Args(Arguments::Parsed(Value::from(n))))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Args, E> {
                Ok(Args(Arguments::Parsed(Value::from(n))))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Args, E> {
                Ok(Args(Arguments::Parsed(Value::from(n))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Args, A::Error> {
                let value = Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(Args(Arguments::Parsed(value)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Args, A::Error> {
                let value = Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Args(Arguments::Parsed(value)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl First {
    /// The response, built as [`openai_chat::response`] builds it; `None` where it would fail.
    fn into_response(self) -> Option<Response> {
        let message = self.message?;
        let mut response = Response::empty(Format::OpenaiChat);
        // String content (or none) is read as `content_into` reads it, the string moved rather
        // than copied; the rarer fields go through the general path's own readers, over the
        // same values, with an object built for them only when there is one.
        let content = match message.content {
            Some(Value::String(text)) => {
                if !text.is_empty() {
                    response.text.push(text);
                }
                None
            }
            other => other,
        };
        let mut rest = Map::new();
        for (key, value) in [
            ("content", content),
            ("refusal", message.refusal),
            ("function_call", message.function_call),
        ] {
            if let Some(value) = value {
                rest.insert(key.to_owned(), value);
            }
        }
        if rest.is_empty() {
            response.calls = message.calls;
            response.stop_reason = self.finish_reason;
            return Some(response);
        }
        let at = At::ROOT;
        openai_chat::content_into(&rest, &at, &mut response.text).ok()?;
        if let Some(refusal) = opt_string(&rest, "refusal", &at).ok()? {
            push_text(&mut response.text, refusal);
        }
        response.calls = message.calls;
        if let Some(legacy) = openai_chat::legacy_function_call(&rest, &at).ok()? {
            if response.calls.is_empty() {
                response.calls.push(legacy);
            } else if let Some(detail) = openai_chat::mismatch(&legacy, &response.calls) {
                response.anomalies.push(Anomaly {
                    kind: AnomalyKind::LegacyMismatch,
                    detail,
                });
            }
        }
        response.stop_reason = self.finish_reason;
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
        super::super::response::parse_response(&value, format).ok()
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
    /// does, and it answers wherever the general path does.
    #[test]
    fn equals_the_general_path_on_every_fixture_and_recording() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        files(&crate_dir.join("tests/fixtures"), &mut paths);
        files(&crate_dir.join("../../recorded"), &mut paths);
        let mut parsed = [0; Format::ALL.len()];
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
                    assert_eq!(response(text, format), expected, "{}", path.display());
                    if let Some(response) = expected {
                        let i = Format::ALL.iter().position(|f| *f == response.format);
                        parsed[i.expect("a format")] += 1;
                    }
                }
            }
        }
        for (format, n) in Format::ALL.iter().zip(parsed) {
            assert!(n >= 3, "only {n} {format} parses among the fixtures");
        }
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
            // Another format fits as well.
            BODY.replace(r#""usage""#, r#""candidates": [], "usage""#),
            BODY.replace(r#""object": "chat.completion""#, r#""object": "response""#),
            // Wrong types where the general path names the error.
            BODY.replace(r#""c1""#, "[]"),
            BODY.replace(r#""name": "get_balance""#, r#""name": 7"#),
            BODY.replace(r#""content": null"#, r#""content": 7"#),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "custom", "custom": {"name": "x", "input": {}}}, "#,
            ),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "custom", "custom": {"input": "y"}}, "#,
            ),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "custom", "custom": null}, "#,
            ),
            // A member only the other kind of call has, of a type the typed reader cannot read.
            BODY.replace(
                r#""name": "get_balance""#,
                r#""input": 7, "name": "get_balance""#,
            ),
            // A value the typed reader cannot read, though a later duplicate replaces it.
            BODY.replace(r#""object""#, r#""choices": 7, "object""#),
            // Not JSON at all.
            BODY.replace(r#""object""#, r#"object"#),
        ];
        for text in &declined {
            assert_ne!(text, BODY);
            assert_eq!(response(text, None), None, "{text}");
        }
    }

    /// A member no reader looks at is still checked as a `Value` parse checks it: an
    /// out-of-range number or nesting past serde_json's limit there is the error it always
    /// was, in every format, with the general path's message.
    #[test]
    fn unread_members_are_checked_as_a_value_parse_checks_them() {
        let bodies = [
            (None, BODY.to_owned()),
            (
                Some(Format::Anthropic),
                r#"{"type": "message", "content": [], "usage": {"total_tokens": 1}}"#.to_owned(),
            ),
            (
                Some(Format::OpenaiResponses),
                r#"{"object": "response", "output": [], "usage": {"total_tokens": 1}}"#.to_owned(),
            ),
        ];
        let deep = format!(r#""x": {}1{}"#, "[".repeat(200), "]".repeat(200));
        for (format, body) in &bodies {
            assert!(response(body, None).is_some(), "{body}");
            for (bad, message) in [
                (r#""total_tokens": 1e400"#, "number out of range"),
                (deep.as_str(), "recursion limit exceeded"),
            ] {
                let text = body.replace(r#""total_tokens": 1"#, bad);
                assert_eq!(response(&text, None), None, "{text}");
                assert_eq!(response(&text, *format), None, "{text}");
                match Response::from_json_str(&text, *format) {
                    Err(crate::InputError::Syntax { message: got, .. }) => {
                        assert_eq!(got, message, "{text}")
                    }
                    other => panic!("{text}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn matches_the_general_path_on_the_edges_it_does_read() {
        let edges = [
            // A numeric id, a custom call, a skipped call of another type, other choices of any
            // shape.
            BODY.replace(r#""c1""#, "12"),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "custom", "id": "c0", "custom": {"name": "x", "input": "{y"}}, "#,
            ),
            BODY.replace(
                r#""tool_calls": ["#,
                r#""tool_calls": [{"type": "future", "future": {"name": 7}}, "#,
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
            // String content beside the rarer fields, and empty content (no text).
            BODY.replace(
                r#""content": null"#,
                r#""content": "a", "function_call": {"name": "other", "arguments": "{}"}"#,
            ),
            BODY.replace(r#""content": null"#, r#""content": "", "refusal": "no""#),
            BODY.replace(r#""content": null"#, r#""content": """#),
            // A duplicated key: the last one counts, as in a `Value`.
            BODY.replace(
                r#""type": "function","#,
                r#""type": "function", "id": "c2","#,
            ),
            BODY.replace(r#""index": 0,"#, r#""finish_reason": "stop", "index": 0,"#),
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
