//! Logged conversations, read back as requests and responses of their own format: what
//! `toolcall import` needs to turn a real run into cases and recorded responses.
//!
//! A log keeps a conversation the way its request did: Chat, Anthropic, Bedrock and Ollama under
//! `messages`, Gemini under `contents`, the Responses API under `input`. Each assistant turn that
//! called tools is a case (the request up to that turn) and a recorded response (the turn,
//! wrapped as the body the provider returned it in). What that takes differs per format — which
//! items make a turn, how a body wraps it, where the tools and the system prompt go — and lives
//! in each format's `Wire` ([`Conversation`]); this module is the part they share and the public
//! face of it, [`Logged`].
//!
//! The format is not guessed here: the transcript is read by [`super::parse_request`], whose
//! shapes say which format it is ([`crate::Request::format`]). A transcript whose shapes say
//! nothing (plain text messages, which Chat and Ollama share) is OpenAI Chat's.

use std::ops::Range;

use serde_json::{Map, Value};

use super::wire::{Conversation, Meta};
use crate::errors::ParseError;
use crate::{Format, Response};

/// The format a transcript with no distinctive shape is read as, and its conversation: plain-text
/// `messages` are OpenAI Chat's as much as Ollama's, and Chat is what most logs hold.
const DEFAULT: (Format, &Conversation) = match &Format::OpenaiChat.wire().conversation {
    Some(conversation) => (Format::OpenaiChat, conversation),
    None => panic!("OpenAI Chat has conversations"),
};

/// A logged conversation's transcript, read as one request format.
///
/// ```
/// use serde_json::json;
/// use toolcall_score::provider::Logged;
/// use toolcall_score::Format;
///
/// let contents = json!([
///     {"role": "user", "parts": [{"text": "Weather in Lisbon?"}]},
///     {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Lisbon"}}}]},
/// ]);
/// let items = contents.as_array().unwrap();
/// let logged = Logged::read(items, Some("contents"))?;
/// assert_eq!(logged.format(), Format::Gemini);
/// let turn = logged.turns().next().unwrap();
/// assert_eq!(turn, 1..2);
/// let (body, response) = logged.response(turn, "imported-1", "gemini-2.5-flash")?;
/// assert_eq!(body["candidates"][0]["finishReason"], "STOP");
/// assert_eq!(response.calls[0].name, "get_weather");
/// let tools = json!([{"name": "get_weather", "parameters": {"type": "object"}}]);
/// let request = logged.request(1, &tools, None);
/// assert_eq!(request["contents"].as_array().unwrap().len(), 1);
/// assert_eq!(request["tools"][0]["functionDeclarations"][0]["name"], "get_weather");
/// # Ok::<(), toolcall_score::ParseError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Logged<'a> {
    format: Format,
    wire: &'static Conversation,
    items: &'a [Value],
}

impl std::fmt::Debug for Logged<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logged")
            .field("format", &self.format)
            .field("items", &self.items.len())
            .finish()
    }
}

impl<'a> Logged<'a> {
    /// Reads `items`, a logged transcript found under the member `key` of a conversation object
    /// (`None` for a bare list), and tells its format from its shapes.
    ///
    /// The items are read as the transcript of a request, by [`super::parse_request`]: under
    /// `key` when it is where some format keeps its transcript (`messages`, `contents`,
    /// `input`), otherwise (tau-bench's `traj`, a bare list) as `messages`, whose reader also
    /// tells Gemini `parts` apart. A transcript whose shapes name no format is OpenAI Chat's
    /// (see the module docs). Errors are the reader's, with pointers under that key.
    pub fn read(items: &'a [Value], key: Option<&str>) -> Result<Logged<'a>, ParseError> {
        let key = key
            .and_then(|key| {
                Format::ALL.into_iter().find_map(|format| {
                    let transcript = format.wire().conversation.as_ref()?.transcript;
                    transcript.iter().copied().find(|member| *member == key)
                })
            })
            .unwrap_or(DEFAULT.1.transcript[0]);
        let mut request = Map::new();
        request.insert(key.to_owned(), Value::Array(items.to_vec()));
        let read = super::parse_request(&Value::Object(request), None)?;
        let (format, wire) = read
            .format
            .and_then(|format| Some((format, format.wire().conversation.as_ref()?)))
            .unwrap_or(DEFAULT);
        Ok(Logged {
            format,
            wire,
            items,
        })
    }

    /// The request members formats keep a transcript under, without repeats, in the
    /// registry's order: `messages`, `input`, `contents`.
    pub fn transcript_keys() -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = Vec::new();
        for format in Format::ALL {
            if let Some(conversation) = &format.wire().conversation {
                for key in conversation.transcript {
                    if !keys.contains(key) {
                        keys.push(key);
                    }
                }
            }
        }
        keys
    }

    /// The format the transcript reads as: the format of every case and response made from it.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The tools a logged request object sent, where this format sends them (Bedrock's
    /// `toolConfig`), else under `tools`.
    pub fn tools_in<'v>(&self, object: &'v Map<String, Value>) -> Option<&'v Value> {
        let key = self.wire.tools_key;
        object
            .get(key)
            .or_else(|| object.get("tools"))
            .filter(|tools| !tools.is_null())
    }

    /// The assistant turns, as ranges of transcript items (one message, or for the Responses API
    /// the consecutive items the model produced), whether or not they call a tool:
    /// [`Logged::response`] says what each one calls.
    pub fn turns(&self) -> impl Iterator<Item = Range<usize>> + 'a {
        let turn = self.wire.turn;
        let items = self.items;
        let mut next = 0;
        std::iter::from_fn(move || {
            while next < items.len() {
                let start = next;
                match turn(items, start) {
                    Some(end) if end > start => {
                        next = end.min(items.len());
                        return Some(start..next);
                    }
                    _ => next += 1,
                }
            }
            None
        })
    }

    /// The response body that returned the assistant turn `turn` (one of [`Logged::turns`]),
    /// with the response `id` and `model` it reports, and that body read back as this format's
    /// response (its calls are what scoring will see).
    pub fn response(
        &self,
        turn: Range<usize>,
        id: &str,
        model: &str,
    ) -> Result<(Value, Response), ParseError> {
        let items = self.items.get(turn).unwrap_or_default();
        let body = (self.wire.respond)(items, &Meta { id, model });
        let response = (self.format.wire().read)(&body)?;
        Ok((body, response))
    }

    /// The request up to transcript item `upto` (exclusive), as this format sends it: the
    /// transcript under its own key, `tools` in this format's shape under its own key (bare
    /// `{name, description, parameters}` definitions get the format's wrapper, see
    /// [`super::parse_tools`] for the shapes; items already in a provider's shape are kept as
    /// they are), and from the `logged` request object, the members this format keeps beside its
    /// transcript (the system prompt: `system`, `systemInstruction`, `instructions`).
    pub fn request(
        &self,
        upto: usize,
        tools: &Value,
        logged: Option<&Map<String, Value>>,
    ) -> Map<String, Value> {
        let wire = self.wire;
        let mut request = Map::new();
        if let Some(logged) = logged {
            for key in wire.carried {
                if let Some(value) = logged.get(*key).filter(|v| !v.is_null()) {
                    request.insert((*key).to_owned(), value.clone());
                }
            }
        }
        request.insert(wire.tools_key.to_owned(), (wire.tools)(tools));
        let upto = upto.min(self.items.len());
        request.insert(
            // A logged conversation is one list of items: its format's first member.
            wire.transcript[0].to_owned(),
            Value::Array(self.items[..upto].to_vec()),
        );
        request
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn format_of(items: Value, key: Option<&str>) -> Format {
        let items = items.as_array().cloned().unwrap_or_default();
        Logged::read(&items, key)
            .map(|l| l.format())
            .unwrap_or(Format::CallList)
    }

    /// Plain text names no format: Chat, as the importer always read it. The shapes decide the
    /// rest, under whatever key the log used.
    #[test]
    fn the_request_reader_tells_the_format_and_plain_text_is_chat() {
        let plain =
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
        assert_eq!(format_of(plain, Some("traj")), Format::OpenaiChat);
        let ollama = json!([{"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": {"a": 1}}}]}]);
        assert_eq!(format_of(ollama, None), Format::Ollama);
        let gemini = json!([{"role": "model", "parts": [{"functionCall": {"name": "f"}}]}]);
        assert_eq!(format_of(gemini, Some("history")), Format::Gemini);
        let responses = json!([{"role": "user", "content": "hi"}]);
        assert_eq!(format_of(responses, Some("input")), Format::OpenaiResponses);
    }

    /// A Responses turn is the run of items the model produced; an output or a user message
    /// ends it.
    #[test]
    fn responses_turns_are_runs_of_produced_items() {
        let items = json!([
            {"role": "user", "content": "go"},
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1"},
            {"type": "function_call_output", "call_id": "c2", "output": "2"},
            {"type": "message", "role": "assistant", "content": "done"}
        ]);
        let items = items.as_array().cloned().unwrap_or_default();
        let logged = Logged::read(&items, Some("input")).expect("reads");
        assert_eq!(logged.turns().collect::<Vec<_>>(), [1..4, 6..7]);
        let (_, response) = logged.response(1..4, "r", "m").expect("reads back");
        assert_eq!(response.calls.len(), 2);
    }
}
