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

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::collect::Tools;
use super::read::{At, Evidence};
use super::request::PreRead;
use super::tools::tools_into;
use crate::{Arguments, Case, Catalog, Format, Message, Role, ToolCall, ToolResult, Transcript};

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
    /// Where [`RequestReader::with_tools_cut`] put its placeholder, and what it stands for;
    /// the seed takes it only when it reads it as the request's `tools`.
    placeholder: Option<Placeholder>,
    /// Whether `messages` are read typed (see [`TypedMessages`]).
    typed_messages: bool,
    /// The buffer [`RequestReader::with_tools_cut`] writes its copies into, kept between lines.
    copy: String,
    /// The messages of a case handed back ([`RequestReader::recycle`]): the next typed read
    /// writes into their buffers instead of allocating its own.
    spare: Vec<Message>,
}

#[derive(Debug)]
struct KeptArray {
    text: Box<str>,
    read: Arc<ReadTools>,
}

/// A kept tools array cut out of a line: the address of the `0` standing in its place.
#[derive(Debug)]
struct Placeholder {
    address: usize,
    read: Arc<ReadTools>,
}

/// What [`RequestReader::with_tools_cut`] looks for a kept array after.
const TOOLS_KEY: &[u8] = b"\"tools\":";

/// The most messages [`RequestReader::recycle`] keeps.
const MAX_SPARE_MESSAGES: usize = 1024;

/// How many of the most recently seen arrays [`RequestReader::with_tools_cut`] looks for.
const LOOKED_FOR: usize = 4;

/// A tools array as read: its catalog and what its shapes said of the request's format.
#[derive(Debug)]
struct ReadTools {
    catalog: Catalog,
    evidence: Evidence,
}

impl RequestReader {
    /// A reader with nothing kept.
    pub fn new() -> RequestReader {
        RequestReader {
            typed_messages: true,
            ..RequestReader::default()
        }
    }

    /// Reads `messages` typed (the default: quickest, for messages of the OpenAI Chat shape,
    /// the commonest; any other shape is an error) or as values with their texts dropped (for
    /// every shape the general path reads). A caller whose read failed tries again with this
    /// off before taking the general path.
    pub fn set_typed_messages(&mut self, typed: bool) {
        self.typed_messages = typed;
    }

    /// Hands back a case this reader read, once it is scored: the next request's messages are
    /// read into its messages' buffers (their call ids and names, their lists), so a log of
    /// long conversations costs few allocations per line.
    pub fn recycle(&mut self, case: Case) {
        let messages = case.transcript.messages;
        // A huge conversation is not kept for every line after it.
        if messages.len() <= MAX_SPARE_MESSAGES {
            self.spare = messages;
        }
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

    /// Calls `read` with `text`, or with a copy of it that has a kept tools array cut out, when
    /// one of the most recently seen is in it. `read` reads the request with
    /// [`RequestReader::seed`], and gets the same case either way, only sooner from the copy.
    ///
    /// The array's text is replaced by a `0`, which the seed reads as that array only if the
    /// `0` is where it reads the request's `tools` member. Then reading the copy is reading the
    /// line: the bytes before the cut are the same, so a value starts there in both; an array or
    /// object ends where its text ends; and it was checked, and found no deeper than the request's
    /// `tools` allows, when it was first read. If the seed did not take the `0` for the request's
    /// `tools` (the array's text is elsewhere too: a `parent_tools`, a message, the response,
    /// where the copy may read unlike the line), the copy's reading is dropped and `read` is
    /// called again with `text` itself: so `read` must have no effect but its result. What this
    /// saves is skipping the array's bytes, most of a request's.
    pub fn with_tools_cut<R>(
        &mut self,
        text: &str,
        mut read: impl FnMut(&mut Self, &str) -> R,
    ) -> R {
        // A `"tools":` outside a string is a key (a quote inside one is escaped): the array is
        // looked for right after each. (Forward: the reverse search has no SIMD prefilter, and
        // cost more than reading the line.)
        static TOOLS: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
            std::sync::OnceLock::new();
        let finder = TOOLS.get_or_init(|| memchr::memmem::Finder::new(TOOLS_KEY));
        let bytes = text.as_bytes();
        let found = finder.find_iter(bytes).find_map(|key| {
            let at = key + TOOLS_KEY.len();
            let at = at
                + bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            let kept = self.arrays.iter().take(LOOKED_FOR).find(|kept| {
                matches!(kept.text.as_bytes().first(), Some(b'[' | b'{'))
                    && bytes[at..].starts_with(kept.text.as_bytes())
            })?;
            Some((at, kept))
        });
        let Some((at, kept)) = found else {
            return read(self, text);
        };
        let mut copy = std::mem::take(&mut self.copy);
        copy.clear();
        copy.push_str(&text[..at]);
        copy.push('0');
        copy.push_str(&text[at + kept.text.len()..]);
        self.placeholder = Some(Placeholder {
            address: copy.as_ptr() as usize + at,
            read: Arc::clone(&kept.read),
        });
        let out = read(self, &copy);
        self.copy = copy;
        if self.placeholder.take().is_none() {
            out
        } else {
            // The array was found somewhere other than the request's `tools` (a `parent_tools`,
            // a message, the response), where the copy may read unlike the line (deeper than
            // the line allows there, say): what was read from the copy is dropped, and the
            // line itself read.
            read(self, text)
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
        let mut transcript: Option<(Transcript, Evidence)> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                // Taken as raw text, which nothing checks but its reading as an array: a first
                // value a second one replaced would never be read.
                "tools" if tools.is_some() => return Err(de::Error::custom("a second `tools`")),
                "tools" => {
                    // The raw text needs serde_json's own borrowed deserializer; any other
                    // fails here, and the caller reads the line the general way.
                    tools = Some(map.next_value::<&'de RawValue>()?);
                    members.insert(key, Value::Null);
                }
                "messages" if self.reader.typed_messages => {
                    let spare = std::mem::take(&mut self.reader.spare);
                    transcript = Some(map.next_value_seed(TypedMessages { spare })?);
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
        let placeholder = &mut self.reader.placeholder;
        let read = match tools {
            Some(raw)
                if raw.get() == "0"
                    && placeholder
                        .as_ref()
                        .is_some_and(|cut| raw.get().as_ptr() as usize == cut.address) =>
            {
                placeholder.take().map(|cut| cut.read)
            }
            Some(raw) => Some(self.reader.tools(raw.get()).map_err(de::Error::custom)?),
            None => None,
        };
        let request = Value::Object(members);
        let pre = PreRead {
            tools: read.as_ref().map(|r| r.evidence),
            messages: transcript,
        };
        let (mut case, collected, parent) =
            Case::read_with(&request, Tools::cloning, pre).map_err(de::Error::custom)?;
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

/// A `messages` array read without `Value`s, for items of the OpenAI Chat shape: a role, a
/// `content` string or `null`, `tool_calls` of `function` calls, a tool result's
/// `tool_call_id` and `name` (or Ollama's `tool_name`). It reads what `messages.rs` reads of
/// such an item with no format named: the same calls (their ids and names; arguments are not
/// kept), the same results (without their content) and the same evidence of the format. Any
/// other shape (content blocks, Gemini `parts`, the legacy `function_call`, `custom` calls, a
/// numeric id) is an error, and the caller reads the request with [`Messages`] instead. A
/// member this reader does not look at is read as a `Value` (checked as the general path
/// checks it) and dropped.
///
/// The differential tests of `toolcall-rate`'s fast path hold both readers to the general
/// path's answer, line by line.
struct TypedMessages {
    /// Messages to write into (see [`RequestReader::recycle`]).
    spare: Vec<Message>,
}

impl<'de> DeserializeSeed<'de> for TypedMessages {
    type Value = (Transcript, Evidence);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TypedMessages {
    type Value = (Transcript, Evidence);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((Transcript::default(), Evidence::default()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut messages = self.spare;
        let mut evidence = Evidence::default();
        let mut read = 0;
        loop {
            let old = messages.get_mut(read).map(take_message);
            let Some(message) = seq.next_element_seed(TypedMessage {
                evidence: &mut evidence,
                old,
            })?
            else {
                break;
            };
            match messages.get_mut(read) {
                Some(slot) => *slot = message,
                None => messages.push(message),
            }
            read += 1;
        }
        messages.truncate(read);
        Ok((Transcript { messages }, evidence))
    }
}

/// The members of a message (or call) the typed reader looks at; any other is `Other`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    Role,
    Content,
    ToolCalls,
    ToolCallId,
    Name,
    ToolName,
    Id,
    Type,
    Function,
    Arguments,
    /// A member whose presence sends the request to [`Messages`].
    Unread,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Member, E> {
                Ok(match key {
                    "role" => Member::Role,
                    "content" => Member::Content,
                    "tool_calls" => Member::ToolCalls,
                    "tool_call_id" => Member::ToolCallId,
                    "name" => Member::Name,
                    "tool_name" => Member::ToolName,
                    "id" => Member::Id,
                    "type" => Member::Type,
                    "function" => Member::Function,
                    "arguments" => Member::Arguments,
                    "parts" | "function_call" | "custom" => Member::Unread,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

/// A message moved out of its place, an empty one left there.
fn take_message(message: &mut Message) -> Message {
    std::mem::replace(message, Message::new(Role::User))
}

/// A string member read into a buffer kept from an earlier line: `null` is none; any other
/// value is not read here (an error: the request is read with values instead).
struct OptString(String);

impl<'de> DeserializeSeed<'de> for OptString {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OptString {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_str<E: de::Error>(mut self, text: &str) -> Result<Self::Value, E> {
        self.0.clear();
        self.0.push_str(text);
        Ok(Some(self.0))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

fn unread<E: de::Error>(what: &str) -> E {
    E::custom(format_args!("{what}: read with values"))
}

/// Checks a raw string as reading it into a `Value` would (serde_json's skip leaves out the
/// pairing of `\u` surrogates).
fn check_string<E: de::Error>(text: &str) -> Result<(), E> {
    static ESCAPE: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let escape = ESCAPE.get_or_init(|| memchr::memmem::Finder::new(b"\\u"));
    if escape.find(text.as_bytes()).is_some() {
        serde_json::from_str::<String>(text).map_err(E::custom)?;
    }
    Ok(())
}

struct TypedMessage<'e> {
    evidence: &'e mut Evidence,
    /// A message of an earlier line whose buffers this one is read into.
    old: Option<Message>,
}

impl<'de> DeserializeSeed<'de> for TypedMessage<'_> {
    type Value = Message;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Message, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TypedMessage<'_> {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let (mut role, mut call_id, mut name, mut tool_name) = (None, None, None, None);
        let Message {
            text: mut old_text,
            calls: old_calls,
            results: mut old_results,
            ..
        } = self.old.unwrap_or_else(|| Message::new(Role::User));
        let mut old_calls = Some(old_calls);
        let mut old_result = old_results.pop();
        let buffer = |taken: Option<String>| taken.unwrap_or_default();
        let mut calls: Option<Option<(Vec<ToolCall>, Evidence)>> = None;
        let mut content = false;
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Role => role = map.next_value_seed(RoleSeed)?,
                Member::Content if content => return Err(unread("a second `content`")),
                Member::Content => {
                    content = true;
                    let raw = map.next_value::<&'de RawValue>()?;
                    match raw.get().as_bytes().first() {
                        Some(b'"') => check_string(raw.get())?,
                        Some(b'n') => {}
                        _ => return Err(unread("content blocks")),
                    }
                }
                Member::ToolCalls if calls.is_some() => {
                    return Err(unread("a second `tool_calls`"))
                }
                Member::ToolCalls => {
                    let old = old_calls.take().unwrap_or_default();
                    calls = Some(map.next_value_seed(TypedCalls { old })?);
                }
                Member::ToolCallId => {
                    let old = old_result.as_mut().and_then(|r| r.call_id.take());
                    call_id = map.next_value_seed(OptString(buffer(old)))?;
                }
                Member::Name => {
                    let old = old_result.as_mut().and_then(|r| r.name.take());
                    name = map.next_value_seed(OptString(buffer(old)))?;
                }
                Member::ToolName => tool_name = map.next_value_seed(OptString(String::new()))?,
                Member::Unread => return Err(unread("a member only values read")),
                _ => {
                    map.next_value::<Value>()?;
                }
            }
        }
        let Some(role) = role else {
            return Err(unread("a message without a role"));
        };
        old_text.clear();
        old_results.clear();
        let mut message = Message {
            role,
            text: old_text,
            calls: Vec::new(),
            results: old_results,
        };
        match calls.flatten() {
            Some((read, seen)) => {
                message.calls = read;
                self.evidence.merge(&seen);
            }
            None => {
                if let Some(mut old) = old_calls {
                    old.clear();
                    message.calls = old;
                }
            }
        }
        if role == Role::Tool {
            // As `opt_id` reads it, but for a numeric id (which `OptString` does not read).
            if call_id.is_some() {
                self.evidence.saw(&[Format::OpenaiChat]);
            }
            let name = match tool_name {
                Some(name) => {
                    self.evidence.saw(&[Format::Ollama]);
                    Some(name)
                }
                None => name,
            };
            message.results.push(ToolResult {
                call_id,
                name,
                is_error: false,
                content: String::new(),
            });
        }
        Ok(message)
    }
}

/// A message's `role`, as `provider::role` reads it; `None` for any other value.
struct RoleSeed;

impl<'de> DeserializeSeed<'de> for RoleSeed {
    type Value = Option<Role>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RoleSeed {
    type Value = Option<Role>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a role")
    }

    fn visit_str<E: de::Error>(self, role: &str) -> Result<Self::Value, E> {
        Ok(match role {
            "system" | "developer" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" | "model" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A message's `tool_calls`: `null` (none), or `function` calls, with what they saw.
struct TypedCalls {
    /// Calls of an earlier line whose buffers these are read into.
    old: Vec<ToolCall>,
}

impl<'de> DeserializeSeed<'de> for TypedCalls {
    type Value = Option<(Vec<ToolCall>, Evidence)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TypedCalls {
    type Value = Option<(Vec<ToolCall>, Evidence)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of tool calls")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut calls = self.old;
        let mut evidence = Evidence::default();
        let mut read = 0;
        loop {
            let (id, name) = match calls.get_mut(read) {
                Some(old) => (old.id.take(), std::mem::take(&mut old.name)),
                None => (None, String::new()),
            };
            let Some(call) = seq.next_element_seed(TypedCall {
                evidence: &mut evidence,
                id,
                name,
            })?
            else {
                break;
            };
            match calls.get_mut(read) {
                Some(slot) => *slot = call,
                None => calls.push(call),
            }
            read += 1;
        }
        calls.truncate(read);
        Ok(Some((calls, evidence)))
    }
}

/// One `{"id", "type": "function", "function": {"name", "arguments"}}` call.
struct TypedCall<'e> {
    evidence: &'e mut Evidence,
    /// Buffers of an earlier line's call, for its id and name.
    id: Option<String>,
    name: String,
}

impl<'de> DeserializeSeed<'de> for TypedCall<'_> {
    type Value = ToolCall;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ToolCall, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TypedCall<'_> {
    type Value = ToolCall;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool call object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolCall, A::Error> {
        let (mut id, mut function) = (None, None);
        let (mut id_buffer, mut name_buffer) = (self.id, Some(self.name));
        // Absent is a function call, as `null` is.
        let mut function_type = true;
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Id => {
                    let buffer = id_buffer.take().or_else(|| id.take()).unwrap_or_default();
                    id = map.next_value_seed(OptString(buffer))?;
                }
                Member::Type => function_type = map.next_value_seed(FunctionType)?,
                Member::Function if function.is_some() => {
                    return Err(unread("a second `function`"))
                }
                Member::Function => {
                    let name = name_buffer.take().unwrap_or_default();
                    function = Some(map.next_value_seed(TypedFunction { name })?);
                }
                Member::Unread => return Err(unread("a custom call")),
                _ => {
                    map.next_value::<Value>()?;
                }
            }
        }
        if !function_type {
            return Err(unread("a call type other than `function`"));
        }
        let Some((name, seen)) = function.flatten() else {
            return Err(unread("a call without its `function`"));
        };
        if let Some(format) = seen {
            self.evidence.saw(&[format]);
        }
        Ok(ToolCall {
            id,
            name,
            namespace: None,
            // Not kept: a transcript call's arguments judge nothing.
            arguments: Arguments::Parsed(Value::Null),
            builtin: None,
        })
    }
}

/// A call's `type`: whether it is `function` (or `null`), read without allocating.
struct FunctionType;

impl<'de> DeserializeSeed<'de> for FunctionType {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FunctionType {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a call type")
    }

    fn visit_str<E: de::Error>(self, kind: &str) -> Result<bool, E> {
        Ok(kind == "function")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(true)
    }
}

/// A call's `function`: its name, and the format its arguments are the shape of (a string:
/// OpenAI Chat; an object: Ollama). `null` is no function.
struct TypedFunction {
    /// A buffer of an earlier line's, for the name.
    name: String,
}

impl<'de> DeserializeSeed<'de> for TypedFunction {
    type Value = Option<(String, Option<Format>)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TypedFunction {
    type Value = Option<(String, Option<Format>)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a `function` object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut name, mut arguments) = (None, None);
        let mut buffer = Some(self.name);
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Name => {
                    let reuse = buffer.take().or_else(|| name.take()).unwrap_or_default();
                    // `null` is no name: not read here, as a value that is not a string.
                    name = Some(
                        map.next_value_seed(OptString(reuse))?
                            .ok_or_else(|| unread("a function name"))?,
                    );
                }
                Member::Arguments => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    arguments = Some(match raw.get().as_bytes().first() {
                        Some(b'"') => {
                            check_string(raw.get())?;
                            Some(Format::OpenaiChat)
                        }
                        Some(b'n') => None,
                        _ => return Err(unread("arguments other than a string")),
                    });
                }
                _ => {
                    map.next_value::<Value>()?;
                }
            }
        }
        let Some(name) = name else {
            return Err(unread("a function name"));
        };
        Ok(Some((name, arguments.flatten())))
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
///
/// It is taken as raw text first, which skips a string without unescaping it: serde_json's
/// skip checks what a `Value` parse checks of a string (escapes, control characters; the text
/// is a `str`, so UTF-8 too) but for the pairing of `\u` surrogates, checked here when the text
/// has a `\u` at all.
struct Content;

/// The most `{` and `[` a content value other than a string may hold: it is parsed apart from
/// the line, where up to four enclosing levels count against serde_json's depth limit of 128.
const CONTENT_BRACKETS: usize = 120;

impl<'de> DeserializeSeed<'de> for Content {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        let raw = <&'de RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => {
                check_string(text)?;
                Ok(Value::String(String::new()))
            }
            Some(b'n') => Ok(Value::Null),
            Some(b'[' | b'{')
                if text.bytes().filter(|&b| b == b'{' || b == b'[').count() <= CONTENT_BRACKETS =>
            {
                serde_json::from_str(text).map_err(de::Error::custom)
            }
            _ => Err(de::Error::custom("content read the general way")),
        }
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

    /// A request read into the buffers of a recycled case reads as it does into new ones,
    /// whether the conversation before it was longer or shorter, with more calls or fewer,
    /// and whatever shape it was read in.
    #[test]
    fn a_recycled_case_leaves_nothing_of_itself_in_the_next() {
        let long = r#"{"messages": [
            {"role": "user", "content": "two orders"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}},
                {"id": "a2", "type": "function", "function": {"name": "get_order", "arguments": "{}"}},
                {"id": "a3", "type": "function", "function": {"name": "cancel_order", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a1", "name": "get_order", "content": "x"},
            {"role": "tool", "tool_call_id": "a2", "content": "y"},
            {"role": "tool", "tool_call_id": "a3", "tool_name": "cancel_order", "content": "z"},
            {"role": "assistant", "content": "done"}]}"#;
        let short = r#"{"messages": [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "refund", "arguments": "{}"}}]},
            {"role": "tool", "content": "no id"},
            {"role": "user", "content": "and?", "name": "ann"}]}"#;
        // Read as values: content blocks, a message with two results.
        let contents = r#"{"messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "b"}]}]}"#;
        let fresh = |text: &str| read(&mut RequestReader::new(), text).unwrap().transcript;
        for order in [
            [long, short, long, contents, short],
            [short, long, contents, long, short],
            [contents, long, contents, short, long],
        ] {
            let mut reader = RequestReader::new();
            for text in order {
                let typed = text != contents;
                reader.set_typed_messages(typed);
                let case = read(&mut reader, text).unwrap();
                let mut alone = RequestReader::new();
                alone.set_typed_messages(typed);
                let expected = read(&mut alone, text).unwrap().transcript;
                assert_eq!(case.transcript, expected, "{text}");
                if typed {
                    assert_eq!(case.transcript, fresh(text), "{text}");
                }
                reader.recycle(case);
            }
        }
    }

    #[test]
    fn the_case_has_the_general_paths_catalog_transcript_and_formats_but_no_texts() {
        let general = Case::from_json_str(REQUEST).unwrap();
        for typed in [true, false] {
            let mut reader = RequestReader::new();
            reader.set_typed_messages(typed);
            let case = read(&mut reader, REQUEST).unwrap();
            same_reading(&case, &general);
        }
        // Content blocks are read as values only.
        let blocks = REQUEST.replace(
            r#""content": "Where is order 7?""#,
            r#""content": [{"type": "text", "text": "Where is order 7?"}]"#,
        );
        let general = Case::from_json_str(&blocks).unwrap();
        let mut reader = RequestReader::new();
        assert!(read(&mut reader, &blocks).is_err());
        reader.set_typed_messages(false);
        same_reading(&read(&mut reader, &blocks).unwrap(), &general);
    }

    fn same_reading(case: &Case, general: &Case) {
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
        assert_eq!(calls(case), calls(general));
        assert_eq!(results(case), results(general));
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
