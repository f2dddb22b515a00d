//! The provider-neutral model every wire format is parsed into.
//!
//! Parsers in `provider/` turn a provider's JSON into these types; everything downstream
//! (scoring, the loop guard, the rate report) sees only these, never a provider's shapes.

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::{Catalog, Format};

/// One tool call, in the order the response carried it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ToolCall {
    /// The call id, when the format has one (Gemini and Ollama ids are optional).
    pub id: Option<String>,
    /// The tool name exactly as the model wrote it.
    pub name: String,
    /// The OpenAI Responses API `namespace`, when present.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub namespace: Option<String>,
    /// The arguments.
    pub arguments: Arguments,
    /// Which built-in tool of the OpenAI Responses API this calls, when it is one the caller's
    /// own loop runs (a `shell_call` item, say) rather than a function; `None` for every other
    /// call.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub builtin: Option<Builtin>,
}

impl ToolCall {
    /// A call with parsed arguments, mostly for tests and scripted transports.
    pub fn new(id: Option<&str>, name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            namespace: None,
            arguments: Arguments::Parsed(arguments),
            builtin: None,
        }
    }

    /// A call to an OpenAI custom tool, with free-text input.
    pub fn custom(id: Option<&str>, name: &str, input: &str) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            namespace: None,
            arguments: Arguments::Text {
                text: input.to_owned(),
            },
            builtin: None,
        }
    }

    /// A call to an OpenAI Responses built-in tool, named as [`Builtin::name`] says, with the
    /// item's `action` (or `operation`) as its arguments.
    pub fn builtin(id: Option<&str>, builtin: Builtin, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: builtin.name().to_owned(),
            namespace: None,
            arguments: Arguments::Parsed(arguments),
            builtin: Some(builtin),
        }
    }
}

/// A built-in tool of the OpenAI Responses API that the API does not run itself: the model emits
/// a call item of the tool's own type, the caller's loop executes it and sends back an output
/// item of the matching type. Hosted tools (`web_search`, `file_search`, `mcp`, …) run on
/// OpenAI's side and never become calls.
///
/// Such a call has no function name: it is named after the tool's `type` in the request's
/// `tools` (see [`Builtin::name`]), so a request that did not declare the tool gets an
/// `unknown_tool` finding like any undefined function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Builtin {
    /// Computer use: `computer_call` items, declared as `{"type": "computer_use_preview", …}` or
    /// (generally available) `{"type": "computer"}`, answered with `computer_call_output`.
    Computer,
    /// Codex's local shell: `local_shell_call` items, declared as `{"type": "local_shell"}`,
    /// answered with `local_shell_call_output`.
    LocalShell,
    /// The shell tool: `shell_call` items, declared as `{"type": "shell"}`, answered with
    /// `shell_call_output`.
    Shell,
    /// File edits as diffs: `apply_patch_call` items, declared as `{"type": "apply_patch"}`,
    /// answered with `apply_patch_call_output`.
    ApplyPatch,
}

impl Builtin {
    /// Every built-in tool the caller runs.
    pub(crate) const ALL: [Builtin; 4] = [
        Builtin::Computer,
        Builtin::LocalShell,
        Builtin::Shell,
        Builtin::ApplyPatch,
    ];

    /// The type of its call items (`shell_call`); the output item answering one has that type
    /// with `_output` after it.
    pub fn call_item(self) -> &'static str {
        match self {
            Builtin::Computer => "computer_call",
            Builtin::LocalShell => "local_shell_call",
            Builtin::Shell => "shell_call",
            Builtin::ApplyPatch => "apply_patch_call",
        }
    }

    /// The name its calls carry and its declaration is catalogued under: the request's tool
    /// `type`, `computer` for both computer-use types.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Computer => "computer",
            Builtin::LocalShell => "local_shell",
            Builtin::Shell => "shell",
            Builtin::ApplyPatch => "apply_patch",
        }
    }
}

/// A call's arguments. OpenAI-style formats send them as a JSON *string*, which a model can get
/// wrong; that is a finding, not a parse error.
///
/// Serialized (with the `serde` feature) as the JSON value itself when the arguments are JSON,
/// `{"raw", "error"}` when they were sent as a string that is not, and `{"custom_input"}` for
/// [`Arguments::Text`]: not a bare string, which would read as arguments that parsed to a JSON
/// string, nor a key a function's own arguments commonly use.
///
/// Equality is by meaning: arguments sent as the text `{"a": 1}` equal arguments sent as the
/// value `{"a": 1}`, whatever the spacing; arguments that are not JSON are equal when their text
/// is.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum Arguments {
    /// Arguments sent as a JSON value (Anthropic's `input`, Gemini's `args`), or built by hand;
    /// not necessarily an object (see [`crate::FindingKind`]).
    Parsed(Value),
    /// Arguments sent as a JSON *string* (OpenAI Chat and Responses, and the streams whose
    /// argument deltas are concatenated text), kept as the model wrote it: it may not be JSON.
    Json(JsonText),
    /// The free-text input of an OpenAI *custom* tool call (`custom.input` in Chat Completions,
    /// `input` of a Responses `custom_tool_call`). It is not JSON and is not checked as JSON: a
    /// custom tool takes any text (or text its grammar allows, which is the API's to enforce).
    Text {
        /// The input as the model wrote it.
        #[cfg_attr(feature = "serde", serde(rename = "custom_input"))]
        text: String,
    },
}

impl Arguments {
    /// Arguments sent as the JSON text `raw` (which may not be JSON).
    pub fn from_json_text(raw: impl Into<String>) -> Arguments {
        Arguments::Json(JsonText::new(raw))
    }

    /// The value, if the arguments are JSON (text sent as a string is parsed on first use).
    pub fn value(&self) -> Option<&Value> {
        match self {
            Arguments::Parsed(value) => Some(value),
            Arguments::Json(text) => text.value(),
            Arguments::Text { .. } => None,
        }
    }

    /// The text and the parser's message, if the arguments were sent as a string that is not
    /// JSON.
    pub fn invalid(&self) -> Option<(&str, &str)> {
        match self {
            Arguments::Json(text) => text.error().map(|error| (text.raw(), error)),
            Arguments::Parsed(_) | Arguments::Text { .. } => None,
        }
    }

    /// The free-text input, if this is a custom tool call's.
    pub fn text(&self) -> Option<&str> {
        match self {
            Arguments::Text { text } => Some(text),
            Arguments::Parsed(_) | Arguments::Json(_) => None,
        }
    }

    /// What the arguments are as JSON, deciding without parsing text into a value where it can:
    /// an object's value is built only when `want_value` asks for it (to validate it against a
    /// schema, say). `None` for a custom tool's free text, which is not JSON to check.
    pub(crate) fn syntax(&self, want_value: bool) -> Option<ArgumentsSyntax<'_>> {
        match self {
            Arguments::Parsed(value) if value.is_object() => {
                Some(ArgumentsSyntax::Object(Some(value)))
            }
            Arguments::Parsed(value) => Some(ArgumentsSyntax::NotObject(value)),
            Arguments::Json(text) => Some(text.syntax(want_value)),
            Arguments::Text { .. } => None,
        }
    }
}

impl PartialEq for Arguments {
    fn eq(&self, other: &Arguments) -> bool {
        match (self, other) {
            (Arguments::Text { text: a }, Arguments::Text { text: b }) => a == b,
            (Arguments::Text { .. }, _) | (_, Arguments::Text { .. }) => false,
            (Arguments::Json(a), Arguments::Json(b)) if a.raw == b.raw => true,
            _ => match (self.value(), other.value()) {
                (Some(a), Some(b)) => a == b,
                (None, None) => self.invalid() == other.invalid(),
                _ => false,
            },
        }
    }
}

/// Arguments as [`Arguments::syntax`] found them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ArgumentsSyntax<'a> {
    /// A JSON object: its value when it was asked for or already built.
    Object(Option<&'a Value>),
    /// JSON, but not an object.
    NotObject(&'a Value),
    /// Text that is not JSON.
    NotJson {
        /// The text as the model sent it.
        raw: &'a str,
        /// What the JSON parser said.
        error: &'a str,
    },
}

/// Arguments sent as a JSON string, kept as text and parsed into a value on first use.
///
/// Most arguments are only ever asked whether they are a JSON object, which is answered without
/// building a value (checked as a `Value` parse would check it); a value is built, once, when
/// something needs it — a schema to validate against, a result to encode, a serializer.
#[derive(Clone)]
pub struct JsonText {
    raw: String,
    parsed: OnceLock<Result<Value, String>>,
}

impl JsonText {
    /// Text as the model sent it.
    pub fn new(raw: impl Into<String>) -> JsonText {
        JsonText {
            raw: raw.into(),
            parsed: OnceLock::new(),
        }
    }

    /// The text as the model sent it.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The value, if the text is JSON.
    pub fn value(&self) -> Option<&Value> {
        self.parsed().as_ref().ok()
    }

    /// What the JSON parser said, if the text is not JSON.
    pub fn error(&self) -> Option<&str> {
        self.parsed().as_ref().err().map(String::as_str)
    }

    fn parsed(&self) -> &Result<Value, String> {
        self.parsed
            .get_or_init(|| serde_json::from_str(&self.raw).map_err(|e| e.to_string()))
    }

    fn syntax(&self, want_value: bool) -> ArgumentsSyntax<'_> {
        let unparsed_object = self.parsed.get().is_none()
            && !want_value
            && self.raw.trim_start().starts_with('{')
            && crate::json_check::is_json(&self.raw);
        if unparsed_object {
            return ArgumentsSyntax::Object(None);
        }
        match self.parsed() {
            Ok(value) if value.is_object() => ArgumentsSyntax::Object(Some(value)),
            Ok(value) => ArgumentsSyntax::NotObject(value),
            Err(error) => ArgumentsSyntax::NotJson {
                raw: &self.raw,
                error,
            },
        }
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonText").field(&self.raw).finish()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for JsonText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self.parsed() {
            Ok(value) => value.serialize(serializer),
            Err(error) => {
                let mut invalid = serializer.serialize_struct("Invalid", 2)?;
                invalid.serialize_field("raw", &self.raw)?;
                invalid.serialize_field("error", error)?;
                invalid.end()
            }
        }
    }
}

/// Something about a response, other than its calls, that makes it wrong on its face.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Anomaly {
    /// What kind of anomaly.
    pub kind: AnomalyKind,
    /// A human-readable explanation, with the provider's own words where it gave any.
    pub detail: String,
}

/// The kinds of [`Anomaly`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum AnomalyKind {
    /// The provider itself says a call was malformed (Gemini `MALFORMED_FUNCTION_CALL`).
    MalformedCall,
    /// The provider says the model called a tool it was not offered (Gemini `UNEXPECTED_TOOL_CALL`).
    UnexpectedToolCall,
    /// A legacy field (OpenAI `function_call`) disagrees with `tool_calls`.
    LegacyMismatch,
}

/// A provider's response, parsed: the calls, the text, the stop reason.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Response {
    /// The format it was parsed as.
    pub format: Format,
    /// The tool calls, in order.
    pub calls: Vec<ToolCall>,
    /// The text parts, in order.
    pub text: Vec<String>,
    /// The stop or finish reason, as the provider spelled it.
    pub stop_reason: Option<String>,
    /// Provider-reported problems that are not calls.
    pub anomalies: Vec<Anomaly>,
}

impl Response {
    /// An empty response of the given format, to fill in.
    pub fn empty(format: Format) -> Response {
        Response {
            format,
            calls: Vec::new(),
            text: Vec::new(),
            stop_reason: None,
            anomalies: Vec::new(),
        }
    }
}

/// Who wrote a transcript message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Role {
    /// A system or developer message.
    System,
    /// The user (Anthropic and Gemini also carry tool results here).
    User,
    /// The model.
    Assistant,
    /// A tool result message (OpenAI `tool` role, Gemini `function` role).
    Tool,
}

/// The answer to one earlier tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ToolResult {
    /// The id of the call it answers, when the format carries one.
    pub call_id: Option<String>,
    /// The tool name, when the format carries one (Gemini `functionResponse.name`).
    pub name: Option<String>,
    /// Whether it was marked as an error the provider's way.
    pub is_error: bool,
    /// The result's text content (JSON content is kept as its JSON text).
    pub content: String,
}

/// One transcript message, reduced to what scoring needs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text parts.
    pub text: Vec<String>,
    /// The tool calls it made (assistant messages).
    pub calls: Vec<ToolCall>,
    /// The tool results it carried.
    pub results: Vec<ToolResult>,
}

impl Message {
    /// A message with no parts yet.
    pub fn new(role: Role) -> Message {
        Message {
            role,
            text: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
        }
    }
}

/// The conversation sent with a request, oldest message first.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Transcript {
    /// The messages.
    pub messages: Vec<Message>,
}

impl Transcript {
    /// Every tool call made in the transcript, oldest first.
    pub fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.messages.iter().flat_map(|m| m.calls.iter())
    }

    /// Every tool result in the transcript, oldest first.
    pub fn results(&self) -> impl Iterator<Item = &ToolResult> {
        self.messages.iter().flat_map(|m| m.results.iter())
    }
}

/// The request side of one provider call, parsed: system prompt, tools, transcript.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The format it was read as, when it could be told from the shape.
    pub format: Option<Format>,
    /// The system prompt (several system parts joined by blank lines).
    pub system: Option<String>,
    /// The tools the request defined.
    pub tools: Catalog,
    /// The transcript.
    pub transcript: Transcript,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Arguments, ArgumentsSyntax, JsonText};

    #[test]
    fn an_object_sent_as_text_is_checked_without_a_value_until_one_is_wanted() {
        let text = JsonText::new(r#" {"city": "Paris", "days": [1, 2]} "#);
        let arguments = Arguments::Json(text.clone());
        assert_eq!(arguments.syntax(false), Some(ArgumentsSyntax::Object(None)));
        let Arguments::Json(kept) = &arguments else {
            unreachable!()
        };
        assert!(kept.parsed.get().is_none(), "no value built for a yes/no");
        let value = json!({"city": "Paris", "days": [1, 2]});
        assert_eq!(
            arguments.syntax(true),
            Some(ArgumentsSyntax::Object(Some(&value)))
        );
        assert!(kept.parsed.get().is_some(), "built once when wanted");
        // Once built, the value is what every later question reads.
        assert_eq!(
            arguments.syntax(false),
            Some(ArgumentsSyntax::Object(Some(&value)))
        );
        assert_eq!(arguments, Arguments::Parsed(value));
    }

    #[test]
    fn text_that_is_not_an_object_says_what_it_is() {
        let array = Arguments::from_json_text("[1]");
        assert_eq!(
            array.syntax(false),
            Some(ArgumentsSyntax::NotObject(&json!([1])))
        );
        // Starts like an object, is not JSON: the parser's own message.
        let cut = Arguments::from_json_text(r#"{"city": "Par"#);
        let Some(ArgumentsSyntax::NotJson { raw, error }) = cut.syntax(false) else {
            panic!("{:?}", cut.syntax(false));
        };
        assert_eq!(raw, r#"{"city": "Par"#);
        assert!(error.contains("EOF"), "{error}");
        assert_eq!(cut.invalid(), Some((raw, error)));
        assert_eq!(cut.value(), None);
        // Equal by text when neither is JSON; never equal to a value.
        assert_eq!(cut, Arguments::from_json_text(r#"{"city": "Par"#));
        assert_ne!(cut, Arguments::Parsed(json!({})));
        assert_ne!(
            Arguments::from_json_text("{}"),
            Arguments::Text { text: "{}".into() }
        );
    }
}
