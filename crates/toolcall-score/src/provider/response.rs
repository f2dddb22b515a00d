//! A response body in, its format told (or named) and its calls out: detection over every
//! format's `Wire::fits`, the single-pass reader first and the general reader when it declines.

use serde_json::Value;

use super::body::read_body;
use super::{fast, stream};
use crate::errors::ParseError;
use crate::{Format, Response};

/// Parses a provider's response body. With `format` `None` the format is detected.
///
/// A JSON array of stream chunks (see [`crate::provider::detect`]) is assembled into its format's body first;
/// an error inside a chunk has the chunk's pointer (`/3/delta/…`).
///
/// Each format's module says which parts are read; a value of the wrong type where a call, its
/// name or its container belongs is a [`ParseError::Unexpected`] with its JSON pointer. Arguments
/// sent as a string are kept as text ([`crate::Arguments::Json`]): not JSON is a finding, not an error.
pub fn parse_response(value: &Value, format: Option<Format>) -> Result<Response, ParseError> {
    match value {
        Value::Array(_) => stream::parse_array(value, format),
        _ => read_body(value, format),
    }
}

/// The response in `text` when the single-pass reader handles it (any valid response, bar a few
/// odd shapes), equal to what [`parse_response`] gives over the text's `Value`; `None` sends the
/// caller to the general path, which also makes every error.
pub(crate) fn fast_response(text: &str, format: Option<Format>) -> Option<Response> {
    fast::response(text, format)
}

impl Response {
    /// Parses a provider's response from JSON text; `format` `None` detects it from the shape.
    /// Errors name the line and column.
    ///
    /// The text may also be a recorded stream: server-sent events (`data:` lines, from OpenAI
    /// Chat Completions or Responses, Anthropic or Gemini's `alt=sse`), one JSON chunk per line
    /// (Ollama's NDJSON, and any format's chunks as SDK tests and loggers keep them), or a JSON
    /// array of chunks. It is assembled into the body the same request would have got
    /// without streaming, and gives exactly the response that body gives (see
    /// [`crate::provider`]). A payload that is not JSON is a syntax error at its line and column;
    /// an event that reports an error, or a stream with no event of a known kind, is a
    /// [`crate::ParseError::Stream`].
    pub fn from_json_str(
        text: &str,
        format: Option<Format>,
    ) -> Result<Response, crate::InputError> {
        Response::parse(None, text, format)
    }

    /// Reads a provider's response file; `format` `None` detects it from the shape. Errors name
    /// the file, line and column. The file may be a recorded stream, as for
    /// [`Response::from_json_str`]; a `.jsonl` file is one response per line by the
    /// [`crate::Recording`] convention, so its lines are one stream only when the first is an
    /// event no whole response looks like (a `chat.completion.chunk`, `message_start`, …).
    pub fn load(
        path: &std::path::Path,
        format: Option<Format>,
    ) -> Result<Response, crate::InputError> {
        let text = crate::input::read_text(path)?;
        Response::parse(Some(path), &text, format)
    }

    pub(crate) fn parse(
        path: Option<&std::path::Path>,
        text: &str,
        format: Option<Format>,
    ) -> Result<Response, crate::InputError> {
        // A recorded stream is told from its first bytes (server-sent events), or once the text
        // failed to be one JSON document (JSON lines), so a plain body costs nothing extra.
        use super::stream::{is_ndjson, is_sse, parse_text as parse_stream, Framing};
        if is_sse(text) {
            return parse_stream(path, text, format, Framing::Sse);
        }
        // A body is read in one pass without building a `Value` of the whole of it; what that
        // pass declines, and every error, takes the general path.
        if let Some(response) = fast_response(text, format) {
            return Ok(response);
        }
        if is_ndjson(text) {
            return parse_stream(path, text, format, Framing::Ndjson);
        }
        let value = crate::input::parse_json(path, text)?;
        parse_response(&value, format).map_err(|e| crate::InputError::invalid(path, text, e))
    }

    /// Parses a response from an already-parsed JSON value.
    pub fn from_value(
        value: &Value,
        format: Option<Format>,
    ) -> Result<Response, crate::ParseError> {
        parse_response(value, format)
    }
}
