//! Reading the requests of a log, where every line repeats its tools array.
//!
//! A logged request is mostly its tools (their schemas) and the conversation so far (its texts).
//! Whether the line's response passes needs neither in full: it needs the catalog, which a day
//! of one agent's traffic repeats byte for byte, and the transcript's calls and results, not its
//! texts. So [`RequestReader`] reads a request straight from the deserializer, with no `Value`
//! of the whole body:
//!
//! - the `tools` member is taken as raw text and looked up among the tools arrays read before
//!   (a length and byte comparison): an array seen before costs no parse, no schema clone and no
//!   schema compile, since its [`Catalog`] (compiled validators included) is shared;
//! - a `content` string of a `messages` item is checked as JSON and dropped;
//! - every other member is read as a `Value`, and the case is built from those by the reader
//!   behind [`Case::from_value`], so the two cannot disagree on what a request means.
//!
//! **What the case is for.** Its catalog, expectation, formats, parent catalog and the
//! transcript's calls and results equal [`Case::from_value`]'s; its texts (system prompt, message
//! text, tool results' content) are left out. Whether a response passes depends only on the
//! former, so [`crate::Scorer`] passes a response against this case exactly when it passes it
//! against the full one. A verdict with findings is not final: their causes read the texts, so
//! the caller reads the request again with [`Case::from_value`] (the general path) and scores
//! that.
//!
//! Every error here means only "not read here": the caller takes the general path, whose error
//! says what is wrong. This reader may refuse what the general path accepts (a `content` that is
//! neither a string, `null`, an array nor an object), never the reverse.

use std::fmt;
use std::sync::Arc;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::read::{At, Evidence};
use super::{tools_into, Tools};
use crate::{Case, Catalog};

/// How many distinct tools arrays a reader keeps; the least recently seen goes first.
const KEPT_ARRAYS: usize = 32;

/// The most bytes of tools-array text a reader keeps (an array longer than this is read every
/// time it comes).
const KEPT_BYTES: usize = 32 << 20;

/// The deepest tools array kept. Its text was checked on its own, not at its place in the line,
/// where up to three enclosing levels count against serde_json's limit of 128: anything this
/// shallow passes both.
const KEPT_DEPTH: usize = 100;

/// Reads log requests into cases fit to tell a passing response (see the module docs), keeping
/// each distinct tools array's catalog.
///
/// One reader per thread: [`RequestReader::seed`] borrows it mutably. Memory is bounded: at most
/// 32 arrays and 32 MiB of their text.
///
/// ```
/// use serde::de::DeserializeSeed;
/// use toolcall_score::{RequestReader, Response, Scorer};
///
/// let mut reader = RequestReader::new();
/// let line = r#"{"tools": [{"name": "get_invoice", "input_schema": {"type": "object"}}],
///                "messages": [{"role": "user", "content": "Show me invoice 7"}]}"#;
/// let mut deserializer = serde_json::Deserializer::from_str(line);
/// let case = reader.seed().deserialize(&mut deserializer)?;
/// deserializer.end()?;
/// let response = Response::from_json_str(r#"{"type": "message", "role": "assistant",
///     "content": [{"type": "tool_use", "id": "t1", "name": "get_invoice", "input": {}}]}"#, None)?;
/// assert!(Scorer::new(&case).score(&response).is_pass());
/// assert_eq!(reader.kept(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct RequestReader {
    /// Most recently seen first.
    arrays: Vec<KeptArray>,
    bytes: usize,
}

#[derive(Debug)]
struct KeptArray {
    text: Box<str>,
    read: Arc<ReadTools>,
}

/// A tools array as read: its catalog and what its shapes said of the request's format.
#[derive(Debug)]
struct ReadTools {
    catalog: Catalog,
    evidence: Evidence,
}

impl RequestReader {
    /// A reader with nothing kept.
    pub fn new() -> RequestReader {
        RequestReader::default()
    }

    /// How many distinct tools arrays are kept.
    pub fn kept(&self) -> usize {
        self.arrays.len()
    }

    /// The seed that reads one request (an object, or a string holding one) from a
    /// deserializer. Errors only mean "read it with [`Case::from_value`]".
    pub fn seed(&mut self) -> RequestSeed<'_> {
        RequestSeed {
            reader: self,
            in_string: false,
        }
    }

    /// The tools array of this text, read now or kept from before.
    fn tools(&mut self, text: &str) -> Result<Arc<ReadTools>, String> {
        if let Some(at) = self
            .arrays
            .iter()
            .position(|kept| kept.text.len() == text.len() && *kept.text == *text)
        {
            let read = Arc::clone(&self.arrays[at].read);
            self.arrays[..=at].rotate_right(1);
            return Ok(read);
        }
        let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut evidence = Evidence::default();
        let mut tools = Tools::deferring();
        // `null` is no tools, as the general path's `get` reads it.
        if !value.is_null() {
            tools_into(&value, &At::ROOT, &mut tools, &mut evidence).map_err(|e| e.to_string())?;
        }
        let deep = depth(&value) > KEPT_DEPTH;
        let read = Arc::new(ReadTools {
            catalog: Catalog::new(tools.take_schemas(&mut value)),
            evidence,
        });
        if deep {
            return Err("a tools array nested too deep to be read apart".into());
        }
        if text.len() <= KEPT_BYTES {
            self.bytes += text.len();
            self.arrays.insert(
                0,
                KeptArray {
                    text: text.into(),
                    read: Arc::clone(&read),
                },
            );
            while self.arrays.len() > KEPT_ARRAYS || self.bytes > KEPT_BYTES {
                if let Some(gone) = self.arrays.pop() {
                    self.bytes -= gone.text.len();
                }
            }
        }
        Ok(read)
    }
}

/// How deeply `value` nests (a scalar is 0).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Reads one request for a [`RequestReader`]; see [`RequestReader::seed`].
pub struct RequestSeed<'r> {
    reader: &'r mut RequestReader,
    /// Inside a string that held the request: a string there is not unwrapped again.
    in_string: bool,
}

impl fmt::Debug for RequestSeed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestSeed").finish_non_exhaustive()
    }
}

impl<'de> DeserializeSeed<'de> for RequestSeed<'_> {
    type Value = Case;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Case, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RequestSeed<'_> {
    type Value = Case;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object, or a string holding one")
    }

    /// A request logged as the string of its body, read as the general path reads it: parsed on
    /// its own.
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Case, E> {
        if self.in_string {
            return Err(E::custom("a string in a string"));
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let case = RequestSeed {
            reader: self.reader,
            in_string: true,
        }
        .deserialize(&mut deserializer)
        .map_err(E::custom)?;
        deserializer.end().map_err(E::custom)?;
        Ok(case)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Case, A::Error> {
        let mut members = Map::new();
        let mut tools: Option<&'de RawValue> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "tools" => {
                    // The raw text needs serde_json's own borrowed deserializer; any other
                    // fails here, and the caller reads the line the general way.
                    tools = Some(map.next_value::<&'de RawValue>()?);
                    members.insert(key, Value::Null);
                }
                "messages" => {
                    let messages = map.next_value_seed(Messages)?;
                    members.insert(key, messages);
                }
                _ => {
                    let value = map.next_value::<Value>()?;
                    members.insert(key, value);
                }
            }
        }
        let read = match tools {
            Some(raw) => Some(self.reader.tools(raw.get()).map_err(de::Error::custom)?),
            None => None,
        };
        let request = Value::Object(members);
        let (mut case, collected, parent) =
            Case::read_with(&request, Tools::cloning, read.as_ref().map(|r| &r.evidence))
                .map_err(de::Error::custom)?;
        let collected = collected.into_tools();
        case.catalog = match read {
            Some(read) if collected.is_empty() => read.catalog.clone(),
            // Tools from elsewhere in the request too (`functions`, Responses input items):
            // rare enough to be read the general way.
            Some(_) => return Err(de::Error::custom("tools outside `tools`")),
            None => Catalog::new(collected),
        };
        case.parent = parent.map(|parent| Catalog::new(parent.into_tools()));
        Ok(case)
    }
}

/// A `messages` array with each item's `content` string checked and dropped.
struct Messages;

impl<'de> DeserializeSeed<'de> for Messages {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Messages {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Item)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
}

/// One `messages` item: an object, whose `content` string is dropped.
struct Item;

impl<'de> DeserializeSeed<'de> for Item {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Item {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if key == "content" {
                map.next_value_seed(Content)?
            } else {
                map.next_value::<Value>()?
            };
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// A message's `content`: a string is checked (as reading it into a `Value` checks it) and
/// read as empty; blocks and `null` are kept as they are.
struct Content;

impl<'de> DeserializeSeed<'de> for Content {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Content {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, null, or content blocks")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Value, E> {
        Ok(Value::String(String::new()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Response, Scorer};

    fn read(reader: &mut RequestReader, text: &str) -> Result<Case, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let case = reader.seed().deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(case)
    }

    const REQUEST: &str = r#"{"model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": "get_order",
                   "parameters": {"type": "object", "properties": {"id": {"type": "string"}},
                                  "required": ["id"]}}}],
        "messages": [{"role": "system", "content": "Use get_order; never cancel_order."},
                     {"role": "user", "content": "Where is order 7?"},
                     {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                      "type": "function", "function": {"name": "get_order",
                      "arguments": "{\"id\": \"7\"}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "{\"status\": \"late\"}"}]}"#;

    #[test]
    fn the_case_has_the_general_paths_catalog_transcript_and_formats_but_no_texts() {
        let general = Case::from_json_str(REQUEST).unwrap();
        let mut reader = RequestReader::new();
        let case = read(&mut reader, REQUEST).unwrap();
        assert_eq!(case.catalog, general.catalog);
        assert_eq!(case.request_format, general.request_format);
        assert_eq!(case.format, general.format);
        assert_eq!(case.expect, general.expect);
        let calls = |c: &Case| {
            c.transcript
                .calls()
                .map(|call| (call.id.clone(), call.name.clone()))
                .collect::<Vec<_>>()
        };
        let results = |c: &Case| {
            c.transcript
                .results()
                .map(|r| (r.call_id.clone(), r.name.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&case), calls(&general));
        assert_eq!(results(&case), results(&general));
        assert!(general.system.contains("never cancel_order"));
        assert_eq!(case.system, "");
    }

    #[test]
    fn a_tools_array_seen_before_is_shared_not_read_again() {
        let mut reader = RequestReader::new();
        let first = read(&mut reader, REQUEST).unwrap();
        let second = read(&mut reader, REQUEST).unwrap();
        assert_eq!(reader.kept(), 1);
        assert!(std::ptr::eq(first.catalog.tools(), second.catalog.tools()));
        // Another array is kept beside it; the same bytes in a string-held request hit it too.
        let other = REQUEST.replace("get_order", "get_refund");
        read(&mut reader, &other).unwrap();
        assert_eq!(reader.kept(), 2);
        let held = serde_json::to_string(REQUEST).unwrap();
        let third = read(&mut reader, &held).unwrap();
        assert_eq!(reader.kept(), 2);
        assert!(std::ptr::eq(first.catalog.tools(), third.catalog.tools()));
    }

    #[test]
    fn memory_is_bounded_by_the_count_of_arrays_kept() {
        let mut reader = RequestReader::new();
        for i in 0..(KEPT_ARRAYS + 5) {
            read(
                &mut reader,
                &REQUEST.replace("get_order", &format!("get_{i}")),
            )
            .unwrap();
        }
        assert_eq!(reader.kept(), KEPT_ARRAYS);
    }

    #[test]
    fn what_the_general_path_refuses_is_refused_here() {
        let mut reader = RequestReader::new();
        for bad in [
            // Out of f64 range, in the tools (checked when the array is first read) and in a
            // dropped content string's neighbour.
            REQUEST.replace(r#""type": "object""#, r#""type": "object", "x": 1e400"#),
            REQUEST.replace(r#""model": "gpt-4o""#, r#""model": 1e400"#),
            // A lone surrogate in a content string that is dropped.
            REQUEST.replace("Where is order 7?", r"\ud800"),
            // A typo of a case key, a string in a string, a tools array that is not one.
            REQUEST.replace(r#""model""#, r#""expcet""#),
            serde_json::to_string(&serde_json::to_string(REQUEST).unwrap()).unwrap(),
            REQUEST.replace(r#""tools": ["#, r#""tools": 7, "x": ["#),
        ] {
            let general = serde_json::from_str::<Value>(&bad)
                .ok()
                .and_then(|v| match v {
                    Value::String(s) => serde_json::from_str::<Value>(&s).ok(),
                    v => Some(v),
                })
                .map(|v| Case::from_value(&v).is_ok());
            assert_ne!(general, Some(true), "the general path accepts {bad}");
            assert!(read(&mut reader, &bad).is_err(), "accepted here: {bad}");
        }
    }

    #[test]
    fn a_pass_against_the_case_is_a_pass_against_the_full_case() {
        let mut reader = RequestReader::new();
        let case = read(&mut reader, REQUEST).unwrap();
        let general = Case::from_json_str(REQUEST).unwrap();
        for name in ["get_order", "cancel_order"] {
            let body = format!(
                r#"{{"choices": [{{"message": {{"role": "assistant", "tool_calls": [{{"id": "c2",
                    "type": "function", "function": {{"name": "{name}",
                    "arguments": "{{\"id\": \"7\"}}"}}}}]}}, "finish_reason": "tool_calls"}}]}}"#
            );
            let response = Response::from_json_str(&body, None).unwrap();
            assert_eq!(
                Scorer::new(&case).score(&response).is_pass(),
                Scorer::new(&general).score(&response).is_pass(),
                "{name}"
            );
        }
    }
}
