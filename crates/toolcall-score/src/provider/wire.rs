//! What one wire format knows, as one value: a [`Wire`].
//!
//! Each format's module defines a `WIRE` and the registry in `format.rs` lists the
//! modules, one line each. The shared layers — detection, the single-pass reader's kept members, stream
//! assembly, the loop guard's answers, the names users type, every message that lists formats
//! and the import of logged conversations (`logged.rs`) — ask a format's `Wire` for what they
//! need instead of matching on [`Format`]. So a new format is its own module plus a registry
//! line, and a `Wire` field it forgets is a compile error (a struct literal must name every
//! field).

use serde_json::{Map, Value};

use super::collect::Tools;
use super::fold::{Assembled, Fault};
use super::live::RequestSettings;
use super::read::{At, Evidence, Object};
use crate::errors::ParseError;
use crate::{Arguments, Builtin, Case, Format, Response, Transcript};

/// Everything the shared layers need from one wire format.
pub(crate) struct Wire {
    /// The response shape, as error messages describe it ("`choices` (openai-chat)" reads
    /// "`choices`").
    pub(crate) shape: &'static str,
    /// Whether a response object has this format's shape. Sees only the members in
    /// `top_keys` (the single-pass reader keeps no others).
    pub(crate) fits: fn(&dyn Members) -> bool,
    /// The top-level members of a response object that `fits` and `read` look at.
    pub(crate) top_keys: &'static [&'static str],
    /// Reads a response body of this format.
    pub(crate) read: fn(&Value) -> Result<Response, ParseError>,
    /// How its recorded stream is read, or `None` when it has none that is text.
    pub(super) stream: Option<Stream>,
    /// How its requests are read: the members that hold the system prompt, tools and
    /// transcript, its own tool shapes, and the language of its input schemas.
    pub(crate) request: RequestHalf,
    /// Builds the request body live mode sends for a case (`None`: no live transport speaks it).
    pub(crate) live: Option<fn(&Value, &Case, &RequestSettings) -> Value>,
    /// The messages (or input items) that carry the loop guard's answers back, in call order.
    pub(crate) answers: fn(&[Answer<'_>]) -> Vec<Value>,
    /// Whether results are paired with calls by id only (others also pair by order and name),
    /// so a call without an id cannot be answered.
    pub(crate) pairs_by_id: bool,
    /// The stop reason the provider gives a turn that ends in tool calls, and one that ends in
    /// text (what the dummy agent's responses carry).
    pub(crate) stop_reasons: StopReasons,
    /// How a logged conversation in this format becomes cases and recorded responses
    /// (`toolcall import`, through [`super::Logged`]); `None` for a format that has no
    /// conversations (call lists).
    pub(crate) conversation: Option<Conversation>,
    /// A request and the response its provider returned, in this format: what `toolcall init`
    /// writes as a new project's first case and recording (`example-request.json` and
    /// `example-response.json` in the format's folder).
    pub(crate) example: crate::Example,
}

/// A format's request half: what `request.rs` reads of a request body in this format.
///
/// The request reader reads, of every format, the members it declares (a member several
/// formats share, such as `messages`, by the reader they name for it), so a body is read by
/// its shapes without a format named; with one named, that format's reader of a member is used.
pub(crate) struct RequestHalf {
    /// The request members it reads, each with its part and reader.
    pub(crate) members: &'static [Member],
    /// Reads a tools-array item of this format's own shape into the collector, or says it is
    /// not one (`None`). The shared tools reader asks every format in registry order, then
    /// reads what none claimed as a bare `{name, description, …}` definition.
    pub(crate) tool: Option<ToolClaim>,
    /// How an input schema in this format's own language (not JSON Schema) is turned into
    /// JSON Schema before it is compiled (Gemini's OpenAPI subset); `None` when every schema it
    /// takes is JSON Schema. A tool read in it has [`crate::SchemaDialect::Native`].
    #[cfg_attr(not(any(feature = "schema", feature = "serde")), allow(dead_code))]
    pub(crate) native_schema: Option<NativeSchema>,
}

/// A format's reader of the tools-array items of its own shape: `None` when `item` is not one.
pub(crate) type ToolClaim =
    fn(&Object, &At<'_>, &mut ToolItems<'_>) -> Option<Result<(), ParseError>>;

/// One request member a format reads.
pub(crate) struct Member {
    /// Its key, and the other spellings the provider's SDKs send (`system_instruction`).
    pub(crate) keys: &'static [&'static str],
    /// What it holds.
    pub(crate) part: Part,
    /// How it is read.
    pub(crate) read: Read,
}

/// What a request member holds: the reader takes the parts in this order (a system prompt
/// joined from several members keeps their order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Part {
    /// Text of the system prompt.
    System,
    /// Tool definitions.
    Tools,
    /// The conversation so far. A request holds one format's transcript members only.
    Transcript,
}

/// How a member is read: by the format's own function, or by a reader the shared layer owns
/// for a member several formats share.
#[derive(Clone, Copy)]
pub(crate) enum Read {
    /// The format's own reader.
    Own(fn(&Value, &At<'_>, &mut Reading<'_>) -> Result<(), ParseError>),
    /// A tools array in any format's item shapes (`tools`).
    Tools,
    /// A `messages` array, each message (each block) read by its own shape
    /// (`provider/messages.rs`).
    Messages,
}

/// What the request reader has read so far, handed to each member's reader.
pub(crate) struct Reading<'r> {
    /// The format named for the request, if any: its shapes only.
    pub(crate) format: Option<Format>,
    /// Texts of the system prompt, in order.
    pub(crate) system: Vec<String>,
    /// The tools, gathered by the caller's collector.
    pub(crate) tools: &'r mut Tools,
    /// The conversation so far.
    pub(crate) transcript: Transcript,
    /// Which formats the shapes read so far belong to.
    pub(crate) evidence: Evidence,
    /// The shared reader of a tools array's items (handed down, so that a format's module
    /// need not depend on the layer that dispatches to it).
    pub(crate) items: ItemsReader,
}

/// The shared reader of a tools array's items, each by its own shape.
pub(crate) type ItemsReader = fn(&[Value], &At<'_>, &mut ToolItems<'_>) -> Result<(), ParseError>;

impl Reading<'_> {
    /// Reads `items`, a tools array in any format's item shapes, into the tools (for members
    /// that hold one inside, such as Bedrock's `toolConfig`).
    pub(crate) fn tool_items(&mut self, items: &[Value], at: &At<'_>) -> Result<(), ParseError> {
        let mut items_reader = ToolItems {
            out: self.tools,
            evidence: &mut self.evidence,
            top: true,
            each: self.items,
        };
        items_reader.read(items, at)
    }
}

/// A tools array being read, for a format's [`RequestHalf::tool`].
pub(crate) struct ToolItems<'r> {
    /// Where the tools go.
    pub(crate) out: &'r mut Tools,
    /// Which formats' shapes were seen.
    pub(crate) evidence: &'r mut Evidence,
    /// Whether the array is a request's own (`false` inside a Responses namespace group, which
    /// cannot nest).
    pub(crate) top: bool,
    /// The shared reader of the items.
    pub(crate) each: ItemsReader,
}

impl ToolItems<'_> {
    /// Reads the items of a tools array, each by its own shape (a nested group's, say).
    pub(crate) fn read(&mut self, items: &[Value], at: &At<'_>) -> Result<(), ParseError> {
        (self.each)(items, at, self)
    }
}

/// An input-schema language of a format's own, and how it becomes JSON Schema.
#[derive(Clone, Copy)]
pub(crate) struct NativeSchema {
    /// Its name in serialized tools (`gemini_open_api`).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) name: &'static str,
    /// The schema as JSON Schema.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(crate) to_json_schema: fn(&Value) -> Value,
}

/// What a format's requests and responses look like to the importer of logged conversations.
///
/// A turn is a range of transcript items; every function sees only JSON, so a format module
/// says in a few lines where its turn starts and ends and how its provider returned one.
pub(crate) struct Conversation {
    /// The request members the transcript is kept under (`messages`, `contents`, `input`):
    /// a logged transcript found under one of them is this format's.
    pub(crate) transcript: &'static [&'static str],
    /// The members of a logged request object, beside the transcript and the tools, that each
    /// case keeps: the system prompt, where the format sends it outside the transcript.
    pub(crate) carried: &'static [&'static str],
    /// The request member the tools go under (`tools`; Bedrock's `toolConfig`).
    pub(crate) tools_key: &'static str,
    /// The tools (a tools array in any shape, or what a logged request kept under `tools_key`)
    /// as this format's request sends them under `tools_key`: bare `{name, description,
    /// parameters}` definitions get the format's wrapper, the rest is kept as it is.
    pub(crate) tools: fn(&Value) -> Value,
    /// Where the assistant turn that starts at item `i` of a transcript ends (exclusive), or
    /// `None` when none starts there.
    pub(crate) turn: fn(&[Value], usize) -> Option<usize>,
    /// The response body this format's provider returned the turn `items` in.
    pub(crate) respond: fn(&[Value], &Meta<'_>) -> Value,
}

/// What a recorded response body says about where it came from.
pub(crate) struct Meta<'a> {
    /// The response id (where the format's bodies carry one).
    pub(crate) id: &'a str,
    /// The model that answered (where the format's bodies name it).
    pub(crate) model: &'a str,
}

/// A format's recorded stream: which events are its own and how they fold into its body (the
/// framing, server-sent events or JSON lines or a JSON array, is `stream.rs`'s).
#[derive(Clone, Copy)]
pub(super) struct Stream {
    /// Its events, as error messages describe them ("OpenAI `chat.completion.chunk`s").
    pub(super) events: &'static str,
    /// Whether an event is one of this format's. Formats' events never look alike.
    pub(super) is_event: fn(&Map<String, Value>) -> bool,
    /// Whether one of its events could as well be a whole body (a Gemini chunk is one), so that
    /// a `.jsonl` file of them is samples rather than one stream.
    pub(super) like_a_body: fn(&Map<String, Value>) -> bool,
    /// Folds the events, in order, into this format's non-streaming body.
    pub(super) assemble: fn(&[Value]) -> Result<Assembled, Fault>,
}

/// The stop reasons a format's provider reports.
#[derive(Clone, Copy)]
pub(crate) struct StopReasons {
    /// A turn that ends with tool calls.
    pub(crate) calls: Option<&'static str>,
    /// A turn that ends in text.
    pub(crate) text: Option<&'static str>,
}

/// The members of a response object that detection looks at: an object, or the members the
/// single-pass reader kept of one.
pub(crate) trait Members {
    /// The member `key`, when present (`null` included).
    fn member(&self, key: &str) -> Option<&Value>;
}

impl Members for Map<String, Value> {
    fn member(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

/// Typed looks at a response object's members, for `fits` predicates.
pub(crate) trait MembersExt: Members {
    /// The member `key` as a string.
    fn str_of(&self, key: &str) -> Option<&str> {
        self.member(key).and_then(Value::as_str)
    }
    /// Whether the member `key` is an array.
    fn is_array(&self, key: &str) -> bool {
        self.member(key).is_some_and(Value::is_array)
    }
    /// Whether the member `key` is an object.
    fn is_object(&self, key: &str) -> bool {
        self.member(key).is_some_and(Value::is_object)
    }
    /// Whether the member `key` is present (`null` included).
    fn has(&self, key: &str) -> bool {
        self.member(key).is_some()
    }
}

impl<M: Members + ?Sized> MembersExt for M {}

/// One answer of the loop guard, ready to encode.
pub(crate) struct Answer<'a> {
    pub(crate) id: Option<&'a str>,
    pub(crate) name: &'a str,
    /// The arguments of the call it answers (a format that pairs results with calls by their
    /// name and arguments, as Cohere v1 does, echoes them).
    pub(crate) arguments: &'a Arguments,
    /// Whether it answers an OpenAI custom tool call (free-text input), which the Responses API
    /// answers with its own item type.
    pub(crate) custom: bool,
    /// The Responses built-in tool it answers a call of, which takes its own output item type.
    pub(crate) builtin: Option<Builtin>,
    pub(crate) output: &'a Result<Value, String>,
    /// `text_of(output)`, computed once by the caller.
    pub(crate) text: &'a str,
}

impl Answer<'_> {
    /// The call id as a JSON value, when the call carried one (echoed only then).
    pub(crate) fn id_value(&self) -> Option<Value> {
        self.id.map(Value::from)
    }

    /// Whether the answer is an error result.
    pub(crate) fn is_error(&self) -> bool {
        self.output.is_err()
    }
}

/// An object from key/value pairs, skipping `None` values (optional ids are echoed only when the
/// call carried one).
pub(crate) fn object_of<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}
