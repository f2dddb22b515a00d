//! Typed accessors over a `serde_json::Value` that say exactly where a value is wrong.
//!
//! Parsers walk large logs, so the JSON pointer of the value being read is kept as a chain of
//! borrowed segments on the stack ([`At`]) and only rendered into a `String` when an error is
//! built: reading a well-formed response allocates nothing for pointers.

use std::fmt;

use serde_json::{Map, Value};

use crate::errors::ParseError;
use crate::{Arguments, Format, Role};

/// A JSON object.
pub(crate) type Object = Map<String, Value>;

/// Where a value sits in the document: a linked list of pointer segments, innermost first.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    parent: Option<&'a At<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    /// The whole document.
    pub(crate) const ROOT: At<'static> = At {
        parent: None,
        segment: Segment::Root,
    };

    /// The member `key` of the object here.
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }

    /// The item `index` of the array here.
    pub(crate) fn index(&self, index: usize) -> At<'_> {
        At {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    /// Appends the RFC 6901 pointer of this place to `out` (a key needs escaping only when it
    /// holds `~` or `/`, which is rare, so the common case is a plain copy).
    pub(crate) fn push_pointer(&self, out: &mut String) {
        if let Some(parent) = self.parent {
            parent.push_pointer(out);
        }
        match self.segment {
            Segment::Root => {}
            Segment::Index(i) => {
                // Writing to a `String` cannot fail.
                let _ = fmt::Write::write_fmt(out, format_args!("/{i}"));
            }
            Segment::Key(key) => {
                out.push('/');
                if key.contains(['~', '/']) {
                    out.push_str(&key.replace('~', "~0").replace('/', "~1"));
                } else {
                    out.push_str(key);
                }
            }
        }
    }

    /// A wrong-type error at this place.
    pub(crate) fn unexpected(&self, expected: impl Into<String>, found: &Value) -> ParseError {
        ParseError::unexpected(self.to_string(), expected, found)
    }

    /// An error at this place with a hand-written description of what was found.
    pub(crate) fn error(
        &self,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ParseError {
        ParseError::Unexpected {
            pointer: self.to_string(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// A required key that is absent (the pointer names the key, so the location is its parent).
    pub(crate) fn missing(&self, expected: impl Into<String>) -> ParseError {
        self.error(expected, "nothing (the key is missing)")
    }
}

impl fmt::Display for At<'_> {
    /// The RFC 6901 JSON pointer (`""` for the root).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pointer = String::new();
        self.push_pointer(&mut pointer);
        f.write_str(&pointer)
    }
}

/// `value` as an object.
pub(crate) fn object<'v>(
    value: &'v Value,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v Object, ParseError> {
    value
        .as_object()
        .ok_or_else(|| at.unexpected(expected, value))
}

/// `value` as an array.
pub(crate) fn array<'v>(
    value: &'v Value,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v [Value], ParseError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(at.unexpected(expected, other)),
    }
}

/// The member `key`, absent or `null` being `None`.
pub(crate) fn get<'v>(object: &'v Object, key: &str) -> Option<&'v Value> {
    object.get(key).filter(|v| !v.is_null())
}

/// The first of `keys` that is present and not `null`, with the key it was found under.
pub(crate) fn get_any<'v, 'k>(
    object: &'v Object,
    keys: &[&'k str],
) -> Option<(&'k str, &'v Value)> {
    keys.iter().find_map(|&k| get(object, k).map(|v| (k, v)))
}

/// A member that must be there (and not `null`): a `null` one is named as `null`, not as a
/// missing key.
pub(crate) fn required<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v Value, ParseError> {
    match object.get(key) {
        None => Err(at.key(key).missing(expected)),
        Some(Value::Null) => Err(at.key(key).unexpected(expected, &Value::Null)),
        Some(value) => Ok(value),
    }
}

/// A member that must be there and be an object.
pub(crate) fn required_object<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v Object, ParseError> {
    self::object(required(object, key, at, expected)?, &at.key(key), expected)
}

/// A required string member.
pub(crate) fn string<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v str, ParseError> {
    let value = required(object, key, at, expected)?;
    value
        .as_str()
        .ok_or_else(|| at.key(key).unexpected(expected, value))
}

/// An optional string member: absent or `null` is `None`, any other type an error.
pub(crate) fn opt_string<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
) -> Result<Option<&'v str>, ParseError> {
    match get(object, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(at.key(key).unexpected("a string", other)),
    }
}

/// An optional array member: absent or `null` is empty, any other type an error.
pub(crate) fn opt_array<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
    expected: &str,
) -> Result<&'v [Value], ParseError> {
    match get(object, key) {
        None => Ok(&[]),
        Some(value) => array(value, &at.key(key), expected),
    }
}

/// An optional object member: absent or `null` is `None`, any other type an error.
pub(crate) fn opt_object<'v>(
    object: &'v Object,
    key: &str,
    at: &At<'_>,
    expected: &str,
) -> Result<Option<&'v Object>, ParseError> {
    get(object, key)
        .map(|value| self::object(value, &at.key(key), expected))
        .transpose()
}

/// An optional boolean member: absent or `null` is `false`.
pub(crate) fn opt_bool(object: &Object, key: &str, at: &At<'_>) -> Result<bool, ParseError> {
    match get(object, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(at.key(key).unexpected("a boolean", other)),
    }
}

/// An optional id: a string, or (JSON-RPC style) a number; absent or `null` is `None`.
pub(crate) fn opt_id(
    object: &Object,
    key: &str,
    at: &At<'_>,
) -> Result<Option<String>, ParseError> {
    match get(object, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(at.key(key).unexpected("an id (a string)", other)),
    }
}

/// Arguments sent as a JSON *string* (OpenAI Chat and Responses), kept as text: one that is not
/// JSON is a finding when scored, not a parse error.
pub(crate) fn json_string_arguments(raw: &str) -> Arguments {
    Arguments::from_json_text(raw)
}

/// The text of a message's `content` into `out`: a string, or an array of parts of which those
/// typed one of `text_types` (and `refusal`) carry text; other parts (images, files, audio) are
/// skipped, and absent or `null` content is none. OpenAI Chat's parts are `text`; the Responses
/// API's `output_text` / `input_text`; Cohere's `text`.
pub(crate) fn content_text_into(
    message: &Object,
    at: &At<'_>,
    text_types: &[&str],
    out: &mut Vec<String>,
) -> Result<(), ParseError> {
    match get(message, "content") {
        None => Ok(()),
        Some(Value::String(s)) => {
            push_text(out, s);
            Ok(())
        }
        Some(Value::Array(parts)) => {
            let parts_at = at.key("content");
            for (i, part) in parts.iter().enumerate() {
                let at = parts_at.index(i);
                let part = object(part, &at, "a content part")?;
                match string(part, "type", &at, "a content part type")? {
                    "refusal" => push_text(out, string(part, "refusal", &at, "a string")?),
                    kind if text_types.contains(&kind) => {
                        push_text(out, string(part, "text", &at, "a string")?)
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Some(other) => Err(at
            .key("content")
            .unexpected("null, a string or an array of content parts", other)),
    }
}

/// Pushes `text` unless it is empty: empty text parts carry nothing to score.
pub(crate) fn push_text(out: &mut Vec<String>, text: &str) {
    if !text.is_empty() {
        out.push(text.to_owned());
    }
}

/// What a request's shapes say about its format: the intersection of the formats each
/// distinctive shape fits. Shapes every format shares (a plain text message) say nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Evidence {
    /// Bit `i` set: `Format::ALL[i]` still fits.
    fits: u64,
    /// Whether any shape said anything.
    seen: bool,
}

// One bit per format.
const _: () = assert!(Format::ALL.len() <= u64::BITS as usize);

impl Default for Evidence {
    fn default() -> Self {
        Evidence {
            fits: u64::MAX,
            seen: false,
        }
    }
}

impl Evidence {
    /// A shape was seen that only these formats use.
    pub(crate) fn saw(&mut self, formats: &[Format]) {
        let mask = formats.iter().fold(0, |m, f| m | bit(*f));
        self.fits &= mask;
        self.seen = true;
    }

    /// Adds what `other` saw, as if its shapes had been seen here (the intersection is the
    /// same in any order).
    pub(crate) fn merge(&mut self, other: &Evidence) {
        self.fits &= other.fits;
        self.seen |= other.seen;
    }

    /// The one format every distinctive shape fits, if there were any and they agree.
    pub(crate) fn format(&self) -> Option<Format> {
        if !self.seen {
            return None;
        }
        let mut fitting = Format::ALL.iter().filter(|f| self.fits & bit(**f) != 0);
        match (fitting.next(), fitting.next()) {
            (Some(one), None) => Some(*one),
            _ => None,
        }
    }
}

fn bit(format: Format) -> u64 {
    let index = Format::ALL.iter().position(|f| *f == format).unwrap_or(0);
    1 << index
}

/// A message's required `role`.
pub(crate) fn role(message: &Object, at: &At<'_>) -> Result<Role, ParseError> {
    const EXPECTED: &str = "a role: system, developer, user, assistant or tool";
    match string(message, "role", at, EXPECTED)? {
        "system" | "developer" => Ok(Role::System),
        "user" => Ok(Role::User),
        "assistant" | "model" => Ok(Role::Assistant),
        "tool" | "function" => Ok(Role::Tool),
        _ => {
            let found = message.get("role").unwrap_or(&Value::Null);
            Err(at.key("role").unexpected(EXPECTED, found))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_tilde_and_slash() {
        let root = At::ROOT;
        let tools = root.key("tools");
        let item = tools.index(3);
        let odd = item.key("a/b~c");
        assert_eq!(odd.to_string(), "/tools/3/a~1b~0c");
        assert_eq!(root.to_string(), "");
    }

    #[test]
    fn evidence_intersects() {
        let mut ev = Evidence::default();
        assert_eq!(ev.format(), None);
        ev.saw(&[Format::OpenaiChat, Format::Ollama]);
        assert_eq!(ev.format(), None);
        ev.saw(&[Format::OpenaiChat]);
        assert_eq!(ev.format(), Some(Format::OpenaiChat));
        ev.saw(&[Format::Anthropic]);
        assert_eq!(ev.format(), None);
    }
}
