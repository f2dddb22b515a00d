//! Recorded streams: a response as the wire carried it with `stream: true`, assembled into the
//! body the same request would have got without streaming.
//!
//! Agents mostly stream, so the response a team records is often the raw stream: server-sent
//! events (`event:` / `data:` lines), one JSON chunk per line (Ollama's NDJSON, and how SDK tests
//! and most loggers keep any provider's stream), or an SDK's dump of the chunk objects as a JSON
//! array. Each format's events are folded here into a `serde_json::Value` of the
//! provider's own non-streaming shape, and that format's reader runs on it, so every rule of the
//! readers applies to a stream unchanged. Nothing is marked as streamed or as cut short: a stream
//! without its final event assembles what it has (its stop reason is what the events said, often
//! none).
//!
//! | format | events | assembled |
//! |---|---|---|
//! | openai-chat | `chat.completion.chunk`s, then `data: [DONE]` | choice 0 only: `delta.content` and `delta.refusal` concatenated; `delta.tool_calls` merged by `index` (the first `id`, the last `type`, `function.name` / `function.arguments` and `custom.name` / `custom.input` concatenated); the legacy `delta.function_call` likewise; the last non-null `finish_reason` |
//! | anthropic | `message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`, `ping` | the `message_start` skeleton; blocks by `index`, those of every message a `message_stop` ended first when another follows (a multi-step run in one recording), while a message a new `message_start` cut off is dropped for it (a retry spliced in); `text_delta` appended to the text; `input_json_delta`'s `partial_json` concatenated into the block's `input` (none keeps the start's `{}`; not JSON is [`crate::Arguments::Invalid`], as OpenAI's string arguments are); `message_delta`'s `stop_reason`; thinking, signature and citation deltas ignored |
//! | openai-responses | `response.*` events | the `response` of `response.completed`, `.incomplete` or `.failed`, or without one (a stream cut short) the `response.created` skeleton; its `output`, when that final response leaves it out and always for a skeleton, is the output items in `output_index` order, each the `.done` item, else the `.added` one with its argument, custom input and text deltas applied |
//! | gemini | `GenerateContentResponse` chunks (`streamGenerateContent?alt=sse`, or the JSON array it sends without `alt=sse`) | `candidates[0].content.parts` of every chunk in order, adjacent plain text parts merged; a function call whose arguments came in pieces (`streamFunctionCallArguments`) is one part with its whole `args`: a `functionCall` with a `name` and `willContinue` or `partialArgs` opens it, nameless ones with `partialArgs` (`{jsonPath, stringValue \| numberValue \| boolValue \| nullValue, willContinue}`) fill it in (a string continues the string at its path), and a piece that continues nothing, or a bare `{"functionCall": {}}`, ends it (one still open at the end keeps what it got); the last `finishReason` and `finishMessage`; the last `promptFeedback` |
//! | bedrock | `ConverseStream` events as the AWS SDKs decode them, one member each: `messageStart`, `contentBlockStart` / `Delta` / `Stop`, `messageStop`, `metadata` | a Converse body: blocks by `contentBlockIndex`, a `toolUse` from its `contentBlockStart` with `input` the concatenated `delta.toolUse.input` (none or empty is `{}`; not JSON is [`crate::Arguments::Invalid`]), `delta.text` appended to its block's text (which has no start); `messageStop`'s `stopReason`; `metadata`'s `usage` and `metrics`; reasoning and citation deltas ignored |
//! | ollama | NDJSON chunks (`"done": false`, then `"done": true` with `done_reason`) | `message.content` concatenated, `message.tool_calls` collected, the last `done_reason` |
//!
//! Bedrock's `ConverseStream` framing itself, AWS's binary event-stream encoding that the HTTP body
//! carries, is not read (it is not text); the events the SDKs decode from it are, as a JSON array
//! or one per line.
//!
//! A stream is told from its first bytes before any JSON parsing (`data:`, `event:`, `id:`,
//! `retry:` or a `:` comment: server-sent events), so a plain body costs nothing extra. JSON lines
//! are tried only once the single-pass read has declined a text (they are never one JSON
//! document), and only when its first non-blank line is one whole JSON value with more lines after
//! it; that first line must then be an event of some format, or the error says what it is instead.
//!
//! Which files hold one stream follows the recording convention ([`crate::Recording`]): a `.jsonl`
//! file is one response per line (samples), so its lines are one stream only when the first is an
//! event no whole response looks like (a `chat.completion.chunk`, an Anthropic or Responses event,
//! a Bedrock event, an Ollama chunk with `"done": false`). A Gemini chunk, or an Ollama one with
//! `"done": true`, has a body's shape: in a `.jsonl` it is a sample, and several lines of them are
//! an error that says so. Any other file (`.json`, `.ndjson`, `.chunks.txt`, …) holds one
//! response, so its JSON lines are one stream, whatever their format.
//!
//! Errors point into the original text: a payload or line that is not JSON is a syntax error at
//! its line and column; a value of the wrong type is an error with the JSON pointer *inside its
//! event* and that event's line and column (an item's pointer, `/3/…`, in a JSON array of
//! chunks). An event reporting an error (`{"type": "error"}`, `{"error": …}`, Bedrock's
//! `{"throttlingException": …}`) makes the stream an error, not a response.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};

use super::read::{array, get, get_any, json_string_arguments, object, opt_array, opt_id};
use super::read::{opt_object, opt_string, required, string, At, Object};
use crate::errors::{describe, ParseError};
use crate::{Format, InputError, Recording, Response};

/// How a recorded stream's events are framed in its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events: `data:` lines, events ended by blank lines.
    Sse,
    /// One JSON value per line (NDJSON, JSON Lines): Ollama's stream, and any format's chunks as
    /// SDK tests and loggers keep them.
    Ndjson,
}

/// Whether `text` is server-sent events, told from its first non-blank bytes alone: `data:`,
/// `event:`, `id:`, `retry:` or a `:` comment.
pub(crate) fn is_sse(text: &str) -> bool {
    let start = text.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    start.starts_with(':')
        || ["data:", "event:", "id:", "retry:"]
            .iter()
            .any(|field| start.starts_with(field))
}

/// Whether `text` is JSON lines (NDJSON): a first non-blank line that is one whole JSON value, and
/// more non-blank lines after it. Such a text is never one JSON document, so it is asked only once
/// the single-pass read has declined the text, and a plain body never pays for it; which stream,
/// if any, the lines are is [`parse_text`]'s to say.
pub(crate) fn is_ndjson(text: &str) -> bool {
    let mut lines = lines(text).filter(|(_, line)| !line.trim().is_empty());
    let Some((_, first)) = lines.next() else {
        return false;
    };
    lines.next().is_some() && serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok()
}

/// The response a recorded stream assembles into; errors name the line and column in `text`.
/// JSON lines from a `.jsonl` file (`path`) are one response per line by the recording
/// convention, so they are one stream only when the first line is an unambiguous stream event.
pub(crate) fn parse_text(
    path: Option<&Path>,
    text: &str,
    format: Option<Format>,
    framing: Framing,
) -> Result<Response, InputError> {
    let payloads = match framing {
        Framing::Sse => sse_payloads(text),
        Framing::Ndjson => ndjson_payloads(text),
    };
    let payloads =
        payloads.map_err(|(offset, error)| InputError::syntax_at(path, text, offset, &error))?;
    let (events, sources): (Vec<Value>, Vec<Vec<Range<usize>>>) = payloads.into_iter().unzip();
    if framing == Framing::Ndjson {
        let samples = path.is_some_and(|p| Recording::of(p) == Some(Recording::PerLine));
        if let Some(why) = not_one_stream(&events, samples) {
            // The first line for a value that is no event, the second for a second sample.
            let line = usize::from(samples && events.first().and_then(kind).is_some());
            let offset = sources
                .get(line)
                .and_then(|r| r.first())
                .map_or(0, |r| r.start);
            return Err(InputError::invalid_at(
                path,
                text,
                offset,
                ParseError::Stream { why },
            ));
        }
    }
    response(&events, format).map_err(|fault| {
        let offset = match fault.event {
            Some(i) => {
                let ranges = &sources[i];
                let payload = join(text, ranges);
                let inside = fault
                    .error
                    .pointer()
                    .and_then(|p| crate::span::locate_offset(&payload, p))
                    .unwrap_or(0);
                offset_in(ranges, inside)
            }
            None => sources
                .first()
                .and_then(|r| r.first())
                .map_or(0, |r| r.start),
        };
        InputError::invalid_at(path, text, offset, fault.error)
    })
}

/// The format of a JSON array of stream chunks (an SDK's dump of a stream), when it is one:
/// its first item is an event of a known kind (and not a call, which has a `name`).
pub(crate) fn chunk_array_format(items: &[Value]) -> Option<Format> {
    let first = items.first()?;
    if first.get("name").is_some() {
        return None;
    }
    kind(first)
}

/// The response a JSON array of chunks assembles into; an error's pointer is the item's (`/3/…`).
pub(crate) fn parse_items(items: &[Value], format: Option<Format>) -> Result<Response, ParseError> {
    response(items, format).map_err(|fault| match fault.event {
        Some(i) => match fault.error {
            ParseError::Stream { why } => ParseError::Stream {
                why: format!("{why} (item {i} of the array)"),
            },
            error => crate::case::prefix(&format!("/{i}"), error),
        },
        None => fault.error,
    })
}

/// An error, with the event (by index) its pointer is inside of; `None` for the whole stream.
struct Fault {
    event: Option<usize>,
    error: ParseError,
}

/// A closure turning an error inside event `event` into a [`Fault`].
fn at_event(event: usize) -> impl Fn(ParseError) -> Fault {
    move |error| Fault {
        event: Some(event),
        error,
    }
}

/// Where a part of the assembled body came from: the value at `body` (a JSON pointer into the
/// body) is, or was built from, the value at `source` inside event `event`.
struct Origin {
    body: String,
    event: usize,
    source: String,
}

impl Origin {
    fn new(body: impl Into<String>, event: usize, source: impl Into<String>) -> Origin {
        Origin {
            body: body.into(),
            event,
            source: source.into(),
        }
    }
}

/// A stream folded into its format's non-streaming body.
struct Assembled {
    body: Value,
    origins: Vec<Origin>,
    /// Calls (by their index among the response's calls) whose arguments arrived as JSON text
    /// that does not parse, with that text.
    invalid: Vec<(usize, String)>,
}

/// The response `events` assemble into.
fn response(events: &[Value], format: Option<Format>) -> Result<Response, Fault> {
    let mut stream_format = None;
    for (i, event) in events.iter().enumerate() {
        if let Some(message) = reported_error(event) {
            return Err(Fault {
                event: Some(i),
                error: ParseError::Stream {
                    why: format!("it reports an error: {}", crate::escape(&message)),
                },
            });
        }
        let Some(kind) = kind(event) else { continue };
        match (stream_format, format) {
            (None, Some(named)) if named != kind => {
                return Err(stream_error(
                    i,
                    format!("its events are {kind}'s, not {named}'s"),
                ))
            }
            (None, _) => stream_format = Some((kind, i)),
            (Some((first, _)), _) if first != kind => {
                return Err(stream_error(
                    i,
                    format!("an event of {kind} in a stream of {first} events"),
                ))
            }
            _ => {}
        }
    }
    let Some((format, first)) = stream_format else {
        return Err(Fault {
            event: None,
            error: ParseError::Stream {
                why: unknown_why(events),
            },
        });
    };
    let assembled = match format {
        Format::OpenaiChat => openai_chat(events)?,
        Format::Anthropic => anthropic(events)?,
        Format::OpenaiResponses => openai_responses(events)?,
        Format::Gemini => gemini(events)?,
        Format::Ollama => ollama(events)?,
        Format::Bedrock => bedrock(events)?,
        Format::CallList => {
            return Err(stream_error(
                first,
                format!("{format} has no stream read here"),
            ))
        }
    };
    let mut response = super::parse_response(&assembled.body, Some(format))
        .map_err(|error| trace(&assembled.origins, first, events, error))?;
    for (index, raw) in assembled.invalid {
        if let Some(call) = response.calls.get_mut(index) {
            call.arguments = json_string_arguments(&raw);
        }
    }
    Ok(response)
}

fn stream_error(event: usize, why: String) -> Fault {
    Fault {
        event: Some(event),
        error: ParseError::Stream { why },
    }
}

/// The events this module reads, for the errors that say none was found.
const KNOWN: &str = "known are OpenAI `chat.completion.chunk`s, Anthropic `message_start` and \
     `content_block_*` events, OpenAI Responses `response.*` events, Gemini chunks with \
     `candidates`, Bedrock ConverseStream events (`messageStart`, `contentBlockDelta`, …) and \
     Ollama chunks with `message` and `done`";

/// Why JSON lines are not one stream, when they are not: the first line is no stream event (nor
/// an error one reports), or the file is a `.jsonl` recording (`samples`: one response per line)
/// and the first line is an event that could as well be a whole response (a Gemini chunk, an
/// Ollama chunk with `"done": true`).
fn not_one_stream(events: &[Value], samples: bool) -> Option<String> {
    let first = events.first()?;
    if reported_error(first).is_some() {
        return None;
    }
    let n = events.len();
    if kind(first).is_none() {
        let hint = if samples {
            "a `.jsonl` recording holds one response per line, which `toolcall check` and \
             `toolcall rate` read one by one"
        } else {
            "several responses, one per line, are a `.jsonl` recording (samples), which \
             `toolcall check` and `toolcall rate` read one by one"
        };
        return Some(format!(
            "several JSON values ({n}), one per line, but the first is not a stream event of any \
             format: found {}; {KNOWN}; {hint}",
            describe(first)
        ));
    }
    (samples && !unambiguous(first)).then(|| {
        format!(
            "a `.jsonl` file holds one response per line (samples), not one stream, and this one \
             holds {n}: `toolcall check` and `toolcall rate` score each line; a stream's chunks, \
             one per line, go in a `.ndjson` file (or any other name), unless its first line is \
             an event no response looks like (a `chat.completion.chunk`, `message_start`, \
             `response.created`, a Bedrock `messageStart` …)"
        )
    })
}

/// Whether `event` is a stream event no whole response looks like. A Gemini chunk has a body's
/// shape, and so has an Ollama chunk unless it says `"done": false`.
fn unambiguous(event: &Value) -> bool {
    match kind(event) {
        Some(Format::Gemini) | None => false,
        Some(Format::Ollama) => event.get("done") == Some(&Value::Bool(false)),
        Some(_) => true,
    }
}

/// Why no event was of a known kind: what the stream held.
fn unknown_why(events: &[Value]) -> String {
    let saw = match events.first() {
        None => "it holds no events".to_owned(),
        Some(first) => format!(
            "none of its {} event(s) is of a known kind; the first is {}",
            events.len(),
            describe(first)
        ),
    };
    format!("{saw}; {KNOWN}")
}

/// The format an event belongs to, told from its shape.
fn kind(event: &Value) -> Option<Format> {
    let event = event.as_object()?;
    let str_of = |key: &str| event.get(key).and_then(Value::as_str);
    if str_of("object") == Some("chat.completion.chunk")
        || event
            .get("choices")
            .and_then(|c| c.get(0))
            .is_some_and(|choice| choice.get("delta").is_some())
    {
        return Some(Format::OpenaiChat);
    }
    match str_of("type") {
        Some(
            "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
            | "ping",
        ) => return Some(Format::Anthropic),
        Some(t) if t.starts_with("response.") => return Some(Format::OpenaiResponses),
        _ => {}
    }
    if ["candidates", "promptFeedback", "prompt_feedback"]
        .iter()
        .any(|k| event.contains_key(*k))
    {
        return Some(Format::Gemini);
    }
    if event.get("message").is_some_and(Value::is_object) && event.contains_key("done") {
        return Some(Format::Ollama);
    }
    if bedrock_event(event).is_some() {
        return Some(Format::Bedrock);
    }
    None
}

/// The events of Bedrock's `ConverseStream`, as the AWS SDKs decode its binary event stream:
/// each an object with one member, named for the event.
const BEDROCK_EVENTS: [&str; 6] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

/// A Bedrock `ConverseStream` event's name and body: `{"contentBlockDelta": {...}}`.
fn bedrock_event(event: &Object) -> Option<(&str, &Value)> {
    let mut members = event.iter();
    let (name, body) = members.next()?;
    (members.next().is_none() && body.is_object() && BEDROCK_EVENTS.contains(&name.as_str()))
        .then_some((name.as_str(), body))
}

/// The message of an event that reports an error: Anthropic's and the Responses API's `{"type":
/// "error"}`, the `{"error": …}` the others send mid-stream, and Bedrock's exception events
/// (`{"throttlingException": {"message": …}}`).
fn reported_error(event: &Value) -> Option<String> {
    let body = event.as_object()?;
    if let (1, Some((name, error))) = (body.len(), body.iter().next()) {
        if name.ends_with("Exception") {
            let message = error.get("message").and_then(Value::as_str);
            return Some(format!(
                "{name}: {}",
                message.map_or_else(|| describe(error), str::to_owned)
            ));
        }
    }
    let typed = body.get("type").and_then(Value::as_str) == Some("error");
    if !typed && (!body.contains_key("error") || kind(event).is_some()) {
        return None;
    }
    let error = body.get("error").unwrap_or(event);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .or_else(|| body.get("message").and_then(Value::as_str));
    Some(message.map_or_else(|| describe(error), str::to_owned))
}

/// Maps an error the reader found in the assembled body to the event the offending value came
/// from (the longest origin whose body pointer leads to it), with the pointer rewritten into that
/// event and cut back to a value the event holds (or a missing key of one). What no origin
/// leads to is event `first`'s, at the same pointer.
fn trace(origins: &[Origin], first: usize, events: &[Value], error: ParseError) -> Fault {
    let Some(pointer) = error.pointer() else {
        return Fault { event: None, error };
    };
    let fallback = Origin::new("", first, "");
    let origin = origins
        .iter()
        .filter(|o| {
            pointer
                .strip_prefix(o.body.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
        .max_by_key(|o| o.body.len())
        .unwrap_or(&fallback);
    let mut source = format!("{}{}", origin.source, &pointer[origin.body.len()..]);
    if let Some(event) = events.get(origin.event) {
        while !source.is_empty()
            && event.pointer(&source).is_none()
            && event.pointer(parent(&source)).is_none()
        {
            source.truncate(parent(&source).len());
        }
    }
    let error = match error {
        ParseError::Unexpected {
            expected, found, ..
        } => ParseError::Unexpected {
            pointer: source,
            expected,
            found,
        },
        other => other,
    };
    Fault {
        event: Some(origin.event),
        error,
    }
}

fn parent(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |at| &pointer[..at])
}

// ---------------------------------------------------------------------------------------------
// Framing: the text of each event's payload, with where it sits.

/// The lines of `text` with their byte offsets, without their `\n` or `\r\n`.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// One payload: its value, and the byte ranges of `text` it was read from (one per `data:` line).
type Payload = (Value, Vec<Range<usize>>);

/// A syntax error, at a byte offset of the text.
type SyntaxError = (usize, serde_json::Error);

/// The `data:` payloads of server-sent events, per the HTML standard's framing: fields until a
/// blank line make an event, `:` lines are comments, the `data:` lines of one event are joined by
/// `\n`, one space after the colon is dropped. `[DONE]` and empty payloads carry nothing. A log
/// that dropped the blank lines between events leaves several one-line JSON payloads in one
/// event: when the joined text does not parse but each line does, each line is an event.
fn sse_payloads(text: &str) -> Result<Vec<Payload>, SyntaxError> {
    let mut payloads = Vec::new();
    let mut data: Vec<Range<usize>> = Vec::new();
    for (start, line) in lines(text) {
        // The standard ignores a byte order mark at the start of the stream.
        let (start, line) = match line.strip_prefix('\u{feff}') {
            Some(rest) if start == 0 => (start + '\u{feff}'.len_utf8(), rest),
            _ => (start, line),
        };
        if line.is_empty() {
            flush(text, &mut data, &mut payloads)?;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.find(':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (
                    &line[..colon],
                    colon + 1 + usize::from(value.starts_with(' ')),
                )
            }
            None => (line, line.len()),
        };
        if field == "data" {
            data.push(start + value..start + line.len());
        }
    }
    flush(text, &mut data, &mut payloads)?;
    Ok(payloads)
}

/// Ends an event: parses the payload of its `data` lines (see [`sse_payloads`]).
fn flush(
    text: &str,
    data: &mut Vec<Range<usize>>,
    payloads: &mut Vec<Payload>,
) -> Result<(), SyntaxError> {
    let ranges = std::mem::take(data);
    let joined = join(text, &ranges);
    let trimmed = joined.trim();
    if trimmed.is_empty() || trimmed == "[DONE]" {
        return Ok(());
    }
    match serde_json::from_str(&joined) {
        Ok(value) => payloads.push((value, ranges)),
        Err(error) => {
            let each: Option<Vec<Payload>> = (ranges.len() > 1)
                .then(|| {
                    ranges
                        .iter()
                        .filter(|r| !text[(*r).clone()].trim().is_empty())
                        .map(|r| {
                            Some((
                                serde_json::from_str(&text[r.clone()]).ok()?,
                                vec![r.clone()],
                            ))
                        })
                        .collect()
                })
                .flatten();
            match each {
                Some(each) => payloads.extend(each),
                None => return Err((syntax_offset(&ranges, &error), error)),
            }
        }
    }
    Ok(())
}

/// The payloads of NDJSON: each non-blank line one JSON value.
fn ndjson_payloads(text: &str) -> Result<Vec<Payload>, SyntaxError> {
    let mut payloads = Vec::new();
    for (start, line) in lines(text) {
        if line.trim().is_empty() {
            continue;
        }
        let range = start..start + line.len();
        match serde_json::from_str(line) {
            Ok(value) => payloads.push((value, vec![range])),
            Err(error) => {
                let ranges = [range];
                return Err((syntax_offset(&ranges, &error), error));
            }
        }
    }
    Ok(payloads)
}

/// The payload of `ranges`: their text joined by `\n`.
fn join(text: &str, ranges: &[Range<usize>]) -> String {
    let parts: Vec<&str> = ranges.iter().map(|r| &text[r.clone()]).collect();
    parts.join("\n")
}

/// The offset in the text of byte `inside` of the payload joined from `ranges`.
fn offset_in(ranges: &[Range<usize>], mut inside: usize) -> usize {
    for range in ranges {
        if inside <= range.len() {
            return range.start + inside;
        }
        inside -= range.len() + 1;
    }
    ranges.last().map_or(0, |r| r.end)
}

/// The offset in the text of a syntax error in the payload joined from `ranges` (serde_json
/// counts lines from 1, and columns from 1 in bytes; 0 at the very start).
fn syntax_offset(ranges: &[Range<usize>], error: &serde_json::Error) -> usize {
    let line = error.line().max(1) - 1;
    let Some(range) = ranges.get(line).or(ranges.last()) else {
        return 0;
    };
    range.start + (error.column().max(1) - 1).min(range.len())
}

// ---------------------------------------------------------------------------------------------
// Assembly, one function per format.

/// A chunk's non-negative integer member `key` (`index`, `output_index`); absent is `default`.
fn index(body: &Object, key: &str, at: &At<'_>, default: Option<u64>) -> Result<u64, ParseError> {
    match (get(body, key), default) {
        (Some(value), _) => value.as_u64().ok_or_else(|| {
            at.key(key)
                .unexpected("an index (a non-negative integer)", value)
        }),
        (None, Some(default)) => Ok(default),
        (None, None) => Err(at.key(key).missing("an index (a non-negative integer)")),
    }
}

/// Appends the optional string member `key` of `body` to `out`.
fn append(
    out: &mut Option<String>,
    body: &Object,
    key: &str,
    at: &At<'_>,
) -> Result<(), ParseError> {
    if let Some(piece) = opt_string(body, key, at)? {
        out.get_or_insert_with(String::new).push_str(piece);
    }
    Ok(())
}

/// Appends a string delta to the string member `key` of `target` (creating it when absent; a
/// member of another type is left alone, for the reader to report).
fn append_to(target: &mut Value, key: &str, piece: &str) {
    let Some(target) = target.as_object_mut() else {
        return;
    };
    let slot = target.entry(key).or_insert(Value::Null);
    match slot {
        Value::String(s) => s.push_str(piece),
        Value::Null => *slot = Value::String(piece.to_owned()),
        _ => {}
    }
}

fn opt_value(value: Option<String>) -> Value {
    value.map_or(Value::Null, Value::String)
}

/// One tool call of a Chat Completions stream, merged from its deltas.
struct ChatCall {
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    custom_name: Option<String>,
    input: Option<String>,
    /// The event and pointer of its first delta.
    origin: (usize, String),
}

fn openai_chat(events: &[Value]) -> Result<Assembled, Fault> {
    let mut seen = false;
    let mut content = None;
    let mut refusal = None;
    let mut finish = None;
    let mut calls: BTreeMap<u64, ChatCall> = BTreeMap::new();
    let mut legacy: Option<(Option<String>, Option<String>)> = None;
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        let choices_at = at.key("choices");
        let choices = opt_array(body, "choices", &at, "an array of choices").map_err(&fault)?;
        for (c, choice) in choices.iter().enumerate() {
            let choice_at = choices_at.index(c);
            let choice = object(choice, &choice_at, "a choice object").map_err(&fault)?;
            if index(choice, "index", &choice_at, Some(0)).map_err(&fault)? != 0 {
                continue;
            }
            seen = true;
            if let Some(reason) = opt_string(choice, "finish_reason", &choice_at).map_err(&fault)? {
                finish = Some(reason.to_owned());
            }
            let delta_at = choice_at.key("delta");
            let Some(delta) =
                opt_object(choice, "delta", &choice_at, "a delta object").map_err(&fault)?
            else {
                continue;
            };
            append(&mut content, delta, "content", &delta_at).map_err(&fault)?;
            append(&mut refusal, delta, "refusal", &delta_at).map_err(&fault)?;
            let calls_at = delta_at.key("tool_calls");
            let items = opt_array(delta, "tool_calls", &delta_at, "an array of tool calls")
                .map_err(&fault)?;
            for (j, item) in items.iter().enumerate() {
                let at = calls_at.index(j);
                let item = object(item, &at, "a tool call delta").map_err(&fault)?;
                let slot = index(item, "index", &at, Some(j as u64)).map_err(&fault)?;
                let call = calls.entry(slot).or_insert_with(|| ChatCall {
                    id: None,
                    kind: None,
                    name: None,
                    arguments: None,
                    custom_name: None,
                    input: None,
                    origin: (e, at.to_string()),
                });
                if call.id.is_none() {
                    call.id = opt_id(item, "id", &at).map_err(&fault)?;
                }
                if let Some(kind) = opt_string(item, "type", &at).map_err(&fault)? {
                    call.kind = Some(kind.to_owned());
                }
                let function_at = at.key("function");
                if let Some(function) =
                    opt_object(item, "function", &at, "a `function` object").map_err(&fault)?
                {
                    append(&mut call.name, function, "name", &function_at).map_err(&fault)?;
                    append(&mut call.arguments, function, "arguments", &function_at)
                        .map_err(&fault)?;
                }
                let custom_at = at.key("custom");
                if let Some(custom) =
                    opt_object(item, "custom", &at, "a `custom` object").map_err(&fault)?
                {
                    append(&mut call.custom_name, custom, "name", &custom_at).map_err(&fault)?;
                    append(&mut call.input, custom, "input", &custom_at).map_err(&fault)?;
                }
            }
            let legacy_at = delta_at.key("function_call");
            if let Some(function) = opt_object(
                delta,
                "function_call",
                &delta_at,
                "a `function_call` object",
            )
            .map_err(&fault)?
            {
                let (name, arguments) = legacy.get_or_insert((None, None));
                append(name, function, "name", &legacy_at).map_err(&fault)?;
                append(arguments, function, "arguments", &legacy_at).map_err(&fault)?;
            }
        }
    }

    let mut origins = Vec::new();
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), opt_value(content));
    if refusal.is_some() {
        message.insert("refusal".into(), opt_value(refusal));
    }
    if !calls.is_empty() {
        let mut items = Vec::with_capacity(calls.len());
        for (k, call) in calls.into_values().enumerate() {
            let (event, source) = call.origin;
            origins.push(Origin::new(
                format!("/choices/0/message/tool_calls/{k}"),
                event,
                source,
            ));
            let mut item = Map::new();
            item.insert("id".into(), opt_value(call.id));
            let custom = call.kind.as_deref() == Some("custom");
            item.insert(
                "type".into(),
                call.kind.unwrap_or_else(|| "function".into()).into(),
            );
            let (key, name, value_key, value) = if custom {
                ("custom", call.custom_name, "input", call.input)
            } else {
                ("function", call.name, "arguments", call.arguments)
            };
            let mut inner = Map::new();
            if let Some(name) = name {
                inner.insert("name".into(), name.into());
            }
            inner.insert(value_key.into(), value.unwrap_or_default().into());
            item.insert(key.into(), inner.into());
            items.push(Value::Object(item));
        }
        message.insert("tool_calls".into(), items.into());
    }
    if let Some((name, arguments)) = legacy {
        let mut function = Map::new();
        if let Some(name) = name {
            function.insert("name".into(), name.into());
        }
        function.insert("arguments".into(), arguments.unwrap_or_default().into());
        message.insert("function_call".into(), function.into());
    }
    let choices = if seen {
        let mut choice = Map::new();
        choice.insert("index".into(), 0.into());
        choice.insert("message".into(), message.into());
        choice.insert("finish_reason".into(), opt_value(finish));
        vec![Value::Object(choice)]
    } else {
        Vec::new()
    };
    let mut body = Map::new();
    body.insert("object".into(), "chat.completion".into());
    body.insert("choices".into(), choices.into());
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}

/// One content block of an Anthropic stream.
struct Block {
    block: Value,
    /// The concatenated `partial_json` of its `input_json_delta`s.
    json: String,
    event: usize,
}

fn anthropic(events: &[Value]) -> Result<Assembled, Fault> {
    let mut message: Option<(Object, usize)> = None;
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    // The blocks of the messages a `message_stop` ended, when another message follows (a
    // multi-step run recorded as one stream); their `index`es start again at 0.
    let mut earlier: Vec<Block> = Vec::new();
    let mut stopped = false;
    let mut stop: Vec<(String, Value)> = Vec::new();
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        match opt_string(body, "type", &at).map_err(&fault)? {
            Some("message_start") => {
                let value = required(body, "message", &at, "a message object").map_err(&fault)?;
                let skeleton = object(value, &at.key("message"), "a message object");
                message = Some((skeleton.map_err(&fault)?.clone(), e));
                // A message ended keeps its blocks; one a new `message_start` cut off (a retry
                // spliced in) is replaced by it.
                if stopped {
                    earlier.extend(std::mem::take(&mut blocks).into_values());
                }
                blocks.clear();
                stopped = false;
            }
            Some("message_stop") => stopped = true,
            Some("content_block_start") => {
                let slot = index(body, "index", &at, None).map_err(&fault)?;
                let block_at = at.key("content_block");
                let block = required(body, "content_block", &at, "a content block")
                    .and_then(|b| object(b, &block_at, "a content block"))
                    .map_err(&fault)?;
                blocks.insert(
                    slot,
                    Block {
                        block: Value::Object(block.clone()),
                        json: String::new(),
                        event: e,
                    },
                );
            }
            Some("content_block_delta") => {
                let slot = index(body, "index", &at, None).map_err(&fault)?;
                let Some(block) = blocks.get_mut(&slot) else {
                    let found = body.get("index").unwrap_or(&Value::Null);
                    return Err(fault(at.key("index").unexpected(
                        "the index of a block a `content_block_start` opened",
                        found,
                    )));
                };
                let delta_at = at.key("delta");
                let delta = required(body, "delta", &at, "a delta object")
                    .and_then(|d| object(d, &delta_at, "a delta object"))
                    .map_err(&fault)?;
                match opt_string(delta, "type", &delta_at).map_err(&fault)? {
                    Some("text_delta") => {
                        let text = string(delta, "text", &delta_at, "a string").map_err(&fault)?;
                        append_to(&mut block.block, "text", text);
                    }
                    Some("input_json_delta") => {
                        let partial =
                            string(delta, "partial_json", &delta_at, "a string").map_err(&fault)?;
                        block.json.push_str(partial);
                    }
                    // Thinking, signatures and citations are not what scoring reads.
                    _ => {}
                }
            }
            Some("message_delta") => {
                let delta_at = at.key("delta");
                if let Some(delta) =
                    opt_object(body, "delta", &at, "a delta object").map_err(&fault)?
                {
                    for key in ["stop_reason", "stop_sequence"] {
                        if let Some(value) = delta.get(key) {
                            if !value.is_null() && !value.is_string() {
                                return Err(fault(delta_at.key(key).unexpected("a string", value)));
                            }
                            stop.push((key.to_owned(), value.clone()));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    let mut invalid = Vec::new();
    let mut body = match message {
        Some((skeleton, e)) => {
            origins.push(Origin::new("", e, "/message"));
            skeleton
        }
        None => {
            let mut skeleton = Map::new();
            skeleton.insert("type".into(), "message".into());
            skeleton.insert("role".into(), "assistant".into());
            skeleton
        }
    };
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = 0;
    for (k, block) in earlier.into_iter().chain(blocks.into_values()).enumerate() {
        let Block {
            mut block,
            json,
            event,
        } = block;
        origins.push(Origin::new(
            format!("/content/{k}"),
            event,
            "/content_block",
        ));
        let is_call = block.get("type").and_then(Value::as_str) == Some("tool_use");
        if !json.is_empty() {
            let input = match serde_json::from_str::<Value>(&json) {
                Ok(input) => input,
                Err(_) => {
                    if is_call {
                        invalid.push((calls, json.clone()));
                    }
                    Value::String(json)
                }
            };
            if let Some(block) = block.as_object_mut() {
                block.insert("input".into(), input);
            }
        }
        calls += usize::from(is_call);
        content.push(block);
    }
    body.insert("content".into(), content.into());
    for (key, value) in stop {
        body.insert(key, value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid,
    })
}

/// One output item of a Responses stream, with the event that last set it.
struct Item {
    item: Value,
    event: usize,
}

fn openai_responses(events: &[Value]) -> Result<Assembled, Fault> {
    let mut skeleton: Option<(Value, usize)> = None;
    let mut last: Option<(Value, usize)> = None;
    let mut items: BTreeMap<u64, Item> = BTreeMap::new();
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        let Some(kind) = opt_string(body, "type", &at).map_err(&fault)? else {
            continue;
        };
        let response = || {
            let value = required(body, "response", &at, "a response object")?;
            object(value, &at.key("response"), "a response object").map(|_| value.clone())
        };
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                skeleton = Some((response().map_err(&fault)?, e));
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                last = Some((response().map_err(&fault)?, e));
            }
            "response.output_item.added" | "response.output_item.done" => {
                let slot = index(body, "output_index", &at, None).map_err(&fault)?;
                let value = required(body, "item", &at, "an output item").map_err(&fault)?;
                object(value, &at.key("item"), "an output item").map_err(&fault)?;
                items.insert(
                    slot,
                    Item {
                        item: value.clone(),
                        event: e,
                    },
                );
            }
            "response.function_call_arguments.delta"
            | "response.custom_tool_call_input.delta"
            | "response.content_part.added"
            | "response.output_text.delta" => {
                let slot = index(body, "output_index", &at, None).map_err(&fault)?;
                let Some(Item { item, .. }) = items.get_mut(&slot) else {
                    let found = body.get("output_index").unwrap_or(&Value::Null);
                    return Err(fault(at.key("output_index").unexpected(
                        "the index of an item a `response.output_item.added` opened",
                        found,
                    )));
                };
                apply_item_delta(kind, body, &at, item).map_err(&fault)?;
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    // The final response's `output` is the stream's own, unless it left it out; a skeleton's is
    // the empty array it started with, so the items are the stream's.
    let (mut body, fill) = match (last, skeleton) {
        (Some((response, e)), _) => {
            origins.push(Origin::new("", e, "/response"));
            let fill = response.get("output").is_none_or(Value::is_null);
            (response, fill)
        }
        (None, Some((response, e))) => {
            origins.push(Origin::new("", e, "/response"));
            (response, true)
        }
        (None, None) => {
            let mut body = Map::new();
            body.insert("object".into(), "response".into());
            (Value::Object(body), true)
        }
    };
    if fill {
        let mut output = Vec::with_capacity(items.len());
        for (k, Item { item, event }) in items.into_values().enumerate() {
            origins.push(Origin::new(format!("/output/{k}"), event, "/item"));
            output.push(item);
        }
        if let Some(body) = body.as_object_mut() {
            body.insert("output".into(), output.into());
        }
    }
    Ok(Assembled {
        body,
        origins,
        invalid: Vec::new(),
    })
}

/// Applies a delta event of an output item not yet done to the item.
fn apply_item_delta(
    kind: &str,
    body: &Object,
    at: &At<'_>,
    item: &mut Value,
) -> Result<(), ParseError> {
    match kind {
        "response.function_call_arguments.delta" => {
            append_to(item, "arguments", string(body, "delta", at, "a string")?);
        }
        "response.custom_tool_call_input.delta" => {
            append_to(item, "input", string(body, "delta", at, "a string")?);
        }
        "response.content_part.added" => {
            let part = required(body, "part", at, "a content part")?;
            object(part, &at.key("part"), "a content part")?;
            if let Some(item) = item.as_object_mut() {
                let content = item
                    .entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(parts) = content {
                    parts.push(part.clone());
                }
            }
        }
        _ => {
            let text = string(body, "delta", at, "a string")?;
            let part = index(body, "content_index", at, Some(0))?;
            let part = usize::try_from(part).ok().and_then(|p| {
                item.get_mut("content")
                    .and_then(Value::as_array_mut)
                    .and_then(|parts| parts.get_mut(p))
            });
            if let Some(part) = part {
                append_to(part, "text", text);
            }
        }
    }
    Ok(())
}

fn gemini(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut candidate: Option<Object> = None;
    let mut parts: Vec<Value> = Vec::new();
    let mut open: Vec<OpenCall> = Vec::new();
    let mut feedback: Option<(&str, Value)> = None;
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        if let Some((key, value)) = get_any(body, &["promptFeedback", "prompt_feedback"]) {
            feedback = Some((key, value.clone()));
        }
        let candidates_at = at.key("candidates");
        let Some(candidates) = get(body, "candidates") else {
            continue;
        };
        let candidates =
            array(candidates, &candidates_at, "an array of candidates").map_err(&fault)?;
        let Some(first) = candidates.first() else {
            continue;
        };
        let candidate_at = candidates_at.index(0);
        let first = object(first, &candidate_at, "a candidate object").map_err(&fault)?;
        let merged = candidate.get_or_insert_with(Map::new);
        for key in [
            "finishReason",
            "finish_reason",
            "finishMessage",
            "finish_message",
        ] {
            if let Some(value) = get(first, key) {
                merged.insert(key.to_owned(), value.clone());
                origins.push(Origin::new(
                    format!("/candidates/0/{key}"),
                    e,
                    format!("/candidates/0/{key}"),
                ));
            }
        }
        let content_at = candidate_at.key("content");
        let Some(content) =
            opt_object(first, "content", &candidate_at, "a content object").map_err(&fault)?
        else {
            continue;
        };
        if let Some(role) = get(content, "role") {
            merged.insert("role".to_owned(), role.clone());
        }
        let parts_at = content_at.key("parts");
        for (j, part) in opt_array(content, "parts", &content_at, "an array of parts")
            .map_err(&fault)?
            .iter()
            .enumerate()
        {
            let part_at = parts_at.index(j);
            match streamed_call(part, &part_at, &mut parts, &mut open).map_err(&fault)? {
                Piece::Started(k) => {
                    origins.push(Origin::new(
                        format!("/candidates/0/content/parts/{k}"),
                        e,
                        part_at.to_string(),
                    ));
                    continue;
                }
                Piece::Folded => continue,
                Piece::Plain => {}
            }
            if let (Some(last), Some(text)) = (parts.last_mut(), plain_text(part)) {
                if plain_text(last).is_some() && last.get("thought") == part.get("thought") {
                    append_to(last, "text", text);
                    continue;
                }
            }
            origins.push(Origin::new(
                format!("/candidates/0/content/parts/{}", parts.len()),
                e,
                parts_at.index(j).to_string(),
            ));
            parts.push(part.clone());
        }
    }

    // A call still open when the stream ends keeps the arguments it got, as everything else in a
    // stream cut short does.
    while let Some(call) = open.pop() {
        close(&mut parts, call);
    }
    let mut body = Map::new();
    if let Some(mut merged) = candidate {
        let role = merged.remove("role").unwrap_or_else(|| "model".into());
        let mut content = Map::new();
        content.insert("role".into(), role);
        content.insert("parts".into(), parts.into());
        merged.insert("content".into(), content.into());
        body.insert("candidates".into(), vec![Value::Object(merged)].into());
    }
    if let Some((key, value)) = feedback {
        body.insert(key.to_owned(), value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}

/// A function call whose arguments a Gemini stream sends in pieces (`streamFunctionCallArguments`):
/// the index of its part among the assembled parts, and its arguments so far.
struct OpenCall {
    part: usize,
    args: Value,
}

/// What [`streamed_call`] made of a part.
enum Piece {
    /// It opened a streamed call, whose part is assembled part `k`.
    Started(usize),
    /// It continued or ended one, or carried nothing.
    Folded,
    /// It is an ordinary part, for the caller to keep.
    Plain,
}

/// Folds a part of a Gemini chunk that is a piece of a streamed function call into `parts` and
/// `open`, and says what it was.
///
/// As the Google SDKs and the Vercel AI SDK read them: a `functionCall` with a `name` and
/// `willContinue: true` or `partialArgs` opens a call (its part, `thoughtSignature` and `id`
/// included, is the assembled call's); a `functionCall` without a `name` and with `partialArgs`
/// adds them to the call opened last; the call is done when a piece neither continues
/// (`willContinue`) nor has a partial argument that does, or at a bare `{"functionCall": {}}`.
/// A `functionCall` with only `willContinue: true` carries nothing.
fn streamed_call(
    part: &Value,
    at: &At<'_>,
    parts: &mut Vec<Value>,
    open: &mut Vec<OpenCall>,
) -> Result<Piece, ParseError> {
    let Some(part) = part.as_object() else {
        return Ok(Piece::Plain);
    };
    let Some((key, Value::Object(call))) = get_any(part, &["functionCall", "function_call"]) else {
        return Ok(Piece::Plain);
    };
    let call_at = at.key(key);
    let partial = get_any(call, &["partialArgs", "partial_args"]);
    let continues = flag(call, &["willContinue", "will_continue"], &call_at)?;
    let named = get(call, "name").is_some();
    let args = get(call, "args");
    let mut piece = Piece::Folded;
    if named && (partial.is_some() || continues == Some(true)) {
        let mut started = part.clone();
        if let Some(Value::Object(call)) = started.get_mut(key) {
            for piece in [
                "partialArgs",
                "partial_args",
                "willContinue",
                "will_continue",
            ] {
                call.remove(piece);
            }
        }
        let args = args
            .filter(|a| a.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        piece = Piece::Started(parts.len());
        open.push(OpenCall {
            part: parts.len(),
            args,
        });
        parts.push(Value::Object(started));
    } else if named || args.is_some() {
        return Ok(Piece::Plain);
    } else if partial.is_none() {
        // `{"functionCall": {}}` ends the open call; `{"willContinue": true}` alone carries
        // nothing.
        if continues != Some(true) {
            if let Some(call) = open.pop() {
                close(parts, call);
            }
        }
        return Ok(Piece::Folded);
    }
    let done = match partial {
        None => continues != Some(true),
        Some((partial_key, items)) => {
            let Some(call) = open.last_mut() else {
                return Err(call_at.key("name").missing(
                    "a function name (a string): a part without one continues a call an \
                     earlier chunk opened (with `willContinue`), and none is open",
                ));
            };
            let pieces_continue =
                add_partial_args(&mut call.args, items, &call_at.key(partial_key))?;
            continues != Some(true) && !pieces_continue
        }
    };
    if done {
        if let Some(call) = open.pop() {
            close(parts, call);
        }
    }
    Ok(piece)
}

/// Gives a streamed call's part its arguments.
fn close(parts: &mut [Value], call: OpenCall) {
    let Some(Value::Object(part)) = parts.get_mut(call.part) else {
        return;
    };
    let key = if part.contains_key("function_call") {
        "function_call"
    } else {
        "functionCall"
    };
    if let Some(Value::Object(function_call)) = part.get_mut(key) {
        function_call.insert("args".into(), call.args);
    }
}

/// An optional boolean under one of `keys`: absent or `null` is `None`.
fn flag(object: &Object, keys: &[&str], at: &At<'_>) -> Result<Option<bool>, ParseError> {
    match get_any(object, keys) {
        None => Ok(None),
        Some((_, Value::Bool(b))) => Ok(Some(*b)),
        Some((key, other)) => Err(at.key(key).unexpected("a boolean", other)),
    }
}

/// Adds `partialArgs` (`[{"jsonPath": "$.recipe.items[0].name", "stringValue": "Noodles",
/// "willContinue": true}, …]`) to `args`, and says whether any of them continues. A string value
/// for a path that holds a string already continues it; a number, boolean or `nullValue` sets the
/// path, creating the objects and arrays on the way. A piece with no value carries nothing.
fn add_partial_args(args: &mut Value, items: &Value, at: &At<'_>) -> Result<bool, ParseError> {
    const PATH: &str = "a JSON path (`$.key`, `$.list[0].key`)";
    let items = array(items, at, "an array of partial arguments")?;
    let mut continues = false;
    for (k, item) in items.iter().enumerate() {
        let at = at.index(k);
        let item = object(item, &at, "a partial argument object")?;
        let Some((path_key, path)) = get_any(item, &["jsonPath", "json_path"]) else {
            return Err(at.key("jsonPath").missing(PATH));
        };
        let path_at = at.key(path_key);
        let segments = path
            .as_str()
            .and_then(json_path)
            .ok_or_else(|| path_at.unexpected(PATH, path))?;
        continues |= flag(item, &["willContinue", "will_continue"], &at)? == Some(true);
        let Some(value) = partial_value(item, &at)? else {
            continue;
        };
        if segments.is_empty() {
            continue;
        }
        let slot = slot(args, &segments).ok_or_else(|| {
            path_at.unexpected(
                "a JSON path whose array indexes follow on from what was sent",
                path,
            )
        })?;
        match (slot, value) {
            (Value::String(so_far), Value::String(piece)) => so_far.push_str(&piece),
            (slot, value) => *slot = value,
        }
    }
    Ok(continues)
}

/// The value of a partial argument: the first of `stringValue`, `numberValue` and `boolValue`
/// that is there, else `null` for a `nullValue`; `None` when it has none.
fn partial_value(item: &Object, at: &At<'_>) -> Result<Option<Value>, ParseError> {
    /// A typed value's keys (camelCase and the Python SDK's snake_case), what it must be, and
    /// whether a value is that.
    type Typed = (&'static str, &'static str, &'static str, fn(&Value) -> bool);
    const TYPED: [Typed; 3] = [
        ("stringValue", "string_value", "a string", Value::is_string),
        ("numberValue", "number_value", "a number", Value::is_number),
        ("boolValue", "bool_value", "a boolean", Value::is_boolean),
    ];
    for (camel, snake, expected, fits) in TYPED {
        if let Some((key, value)) = get_any(item, &[camel, snake]) {
            return if fits(value) {
                Ok(Some(value.clone()))
            } else {
                Err(at.key(key).unexpected(expected, value))
            };
        }
    }
    let null = item.contains_key("nullValue") || item.contains_key("null_value");
    Ok(null.then_some(Value::Null))
}

/// One step of a partial argument's path: a key or an array index.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The steps of a JSONPath as Gemini writes them (`$.recipe.ingredients[0].name`, also
/// `$['key']`); `None` when it is not one. `$` alone is no step at all.
fn json_path(path: &str) -> Option<Vec<Step>> {
    let (mut rest, mut dotted) = match path.strip_prefix('$') {
        Some(rest) => (rest, true),
        None => (path, false),
    };
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            match inner.chars().next() {
                Some(quote @ ('\'' | '"')) => {
                    let key = &inner[1..];
                    let end = key.find(quote)?;
                    steps.push(Step::Key(key[..end].to_owned()));
                    rest = key[end + 1..].strip_prefix(']')?;
                }
                _ => {
                    let end = inner.find(']')?;
                    steps.push(Step::Index(inner[..end].parse().ok()?));
                    rest = &inner[end + 1..];
                }
            }
        } else {
            let key = if dotted {
                rest.strip_prefix('.')?
            } else {
                rest
            };
            let end = key.find(['.', '[']).unwrap_or(key.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(key[..end].to_owned()));
            rest = &key[end..];
        }
        dotted = true;
    }
    Some(steps)
}

/// The value at `steps` in `root`, made (objects and arrays on the way, `null` at the end) where
/// it is missing or of the wrong kind; `None` for an index far past an array's end, which no
/// stream sends (a bound on what a malformed one can make us allocate).
fn slot<'v>(root: &'v mut Value, steps: &[Step]) -> Option<&'v mut Value> {
    const GAP: usize = 1024;
    let mut here = root;
    for step in steps {
        here = match step {
            Step::Key(key) => {
                if !here.is_object() {
                    *here = Value::Object(Map::new());
                }
                let Value::Object(members) = here else {
                    return None;
                };
                members.entry(key.clone()).or_insert(Value::Null)
            }
            Step::Index(i) => {
                if !here.is_array() {
                    *here = Value::Array(Vec::new());
                }
                let Value::Array(items) = here else {
                    return None;
                };
                if *i >= items.len() {
                    if *i - items.len() > GAP {
                        return None;
                    }
                    items.resize(*i + 1, Value::Null);
                }
                items.get_mut(*i)?
            }
        };
    }
    Some(here)
}

/// The text of a part that is only text (and perhaps a `thought` flag), which can merge with its
/// neighbour; parts with anything else (a `thoughtSignature`, a call) stay as they came.
fn plain_text(part: &Value) -> Option<&str> {
    let part = part.as_object()?;
    let only_text = part.keys().all(|k| k == "text" || k == "thought");
    only_text.then(|| part.get("text")?.as_str()).flatten()
}

fn ollama(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut content: Option<String> = None;
    let mut calls: Vec<Value> = Vec::new();
    let mut body = Map::new();
    for (e, event) in events.iter().enumerate() {
        let Some(chunk) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        for key in ["model", "done", "done_reason"] {
            if let Some(value) = get(chunk, key) {
                body.insert(key.to_owned(), value.clone());
                if key == "done_reason" {
                    origins.push(Origin::new("/done_reason", e, "/done_reason"));
                }
            }
        }
        let message_at = at.key("message");
        let Some(message) =
            opt_object(chunk, "message", &at, "a message object").map_err(&fault)?
        else {
            continue;
        };
        append(&mut content, message, "content", &message_at).map_err(&fault)?;
        let calls_at = message_at.key("tool_calls");
        let items = opt_array(message, "tool_calls", &message_at, "an array of tool calls")
            .map_err(&fault)?;
        for (j, call) in items.iter().enumerate() {
            origins.push(Origin::new(
                format!("/message/tool_calls/{}", calls.len()),
                e,
                calls_at.index(j).to_string(),
            ));
            calls.push(call.clone());
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), content.unwrap_or_default().into());
    if !calls.is_empty() {
        message.insert("tool_calls".into(), calls.into());
    }
    body.insert("message".into(), message.into());
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}

/// One content block of a Bedrock stream: a `toolUse` its `contentBlockStart` opened (with its
/// `input` JSON text so far), or text its deltas brought.
struct BedrockBlock {
    block: Object,
    json: Option<String>,
    /// The event and pointer it came from.
    origin: (usize, &'static str),
}

fn bedrock(events: &[Value]) -> Result<Assembled, Fault> {
    let mut role = None;
    let mut blocks: BTreeMap<u64, BedrockBlock> = BTreeMap::new();
    let mut stop: Option<(Value, usize)> = None;
    let mut extra: Vec<(String, Value)> = Vec::new();
    for (e, event) in events.iter().enumerate() {
        let Some((name, body)) = event.as_object().and_then(bedrock_event) else {
            continue;
        };
        let fault = at_event(e);
        let root = At::ROOT;
        let at = root.key(name);
        let Some(body) = body.as_object() else {
            continue;
        };
        match name {
            "messageStart" => {
                if let Some(value) = get(body, "role") {
                    role = Some(value.clone());
                }
            }
            "contentBlockStart" => {
                let slot = index(body, "contentBlockIndex", &at, Some(0)).map_err(&fault)?;
                let start_at = at.key("start");
                let start = opt_object(body, "start", &at, "a `start` object").map_err(&fault)?;
                if let Some(tool_use) = start.and_then(|s| get(s, "toolUse")) {
                    let tool_use = object(tool_use, &start_at.key("toolUse"), "a toolUse object")
                        .map_err(&fault)?;
                    let mut block = Map::new();
                    block.insert("toolUse".into(), Value::Object(tool_use.clone()));
                    let origin = (e, "/contentBlockStart/start");
                    blocks.insert(
                        slot,
                        BedrockBlock {
                            block,
                            json: Some(String::new()),
                            origin,
                        },
                    );
                }
            }
            "contentBlockDelta" => {
                let slot = index(body, "contentBlockIndex", &at, Some(0)).map_err(&fault)?;
                let delta_at = at.key("delta");
                let delta = required(body, "delta", &at, "a delta object")
                    .and_then(|d| object(d, &delta_at, "a delta object"))
                    .map_err(&fault)?;
                if let Some(text) = opt_string(delta, "text", &delta_at).map_err(&fault)? {
                    let block = blocks.entry(slot).or_insert_with(|| BedrockBlock {
                        block: Map::new(),
                        json: None,
                        origin: (e, "/contentBlockDelta/delta"),
                    });
                    match block.block.get_mut("text") {
                        Some(Value::String(so_far)) => so_far.push_str(text),
                        _ => {
                            block.block.insert("text".into(), text.into());
                        }
                    }
                }
                let use_at = delta_at.key("toolUse");
                if let Some(tool_use) =
                    opt_object(delta, "toolUse", &delta_at, "a toolUse delta").map_err(&fault)?
                {
                    let piece = string(tool_use, "input", &use_at, "a string").map_err(&fault)?;
                    let Some(json) = blocks.get_mut(&slot).and_then(|b| b.json.as_mut()) else {
                        let found = body.get("contentBlockIndex").unwrap_or(&Value::Null);
                        return Err(fault(at.key("contentBlockIndex").unexpected(
                            "the index of a block a `contentBlockStart` opened with a `toolUse`",
                            found,
                        )));
                    };
                    json.push_str(piece);
                }
                // Reasoning and citations are not what scoring reads.
            }
            "messageStop" => {
                if let Some(reason) = get(body, "stopReason") {
                    stop = Some((reason.clone(), e));
                }
            }
            "metadata" => {
                for (key, value) in body {
                    extra.push((key.clone(), value.clone()));
                }
            }
            _ => {}
        }
    }

    let mut origins = Vec::new();
    let mut invalid = Vec::new();
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = 0;
    for (k, block) in blocks.into_values().enumerate() {
        let BedrockBlock {
            mut block,
            json,
            origin: (event, source),
        } = block;
        origins.push(Origin::new(
            format!("/output/message/content/{k}"),
            event,
            source,
        ));
        if let (Some(json), Some(Value::Object(tool_use))) = (json, block.get_mut("toolUse")) {
            // A call without arguments streams no `input` (or an empty one): `{}`, as the
            // non-streaming body has it.
            let is_call = tool_use.get("type").and_then(Value::as_str) != Some("server_tool_use");
            let input = if json.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                match serde_json::from_str::<Value>(&json) {
                    Ok(input) => input,
                    Err(_) => {
                        if is_call {
                            invalid.push((calls, json.clone()));
                        }
                        Value::String(json)
                    }
                }
            };
            calls += usize::from(is_call);
            tool_use.insert("input".into(), input);
        }
        content.push(Value::Object(block));
    }
    let mut message = Map::new();
    message.insert("role".into(), role.unwrap_or_else(|| "assistant".into()));
    message.insert("content".into(), content.into());
    let mut output = Map::new();
    output.insert("message".into(), message.into());
    let mut body = Map::new();
    body.insert("output".into(), output.into());
    if let Some((reason, e)) = stop {
        origins.push(Origin::new("/stopReason", e, "/messageStop/stopReason"));
        body.insert("stopReason".into(), reason);
    }
    for (key, value) in extra {
        body.insert(key, value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_server_sent_events_from_their_first_bytes() {
        for text in [
            "data: {}",
            "\n\nevent: x\n",
            ": keep-alive\n",
            "id: 1",
            "retry: 10",
        ] {
            assert!(is_sse(text), "{text:?}");
        }
        for text in ["{\"data\": 1}", "[]", "dat", ""] {
            assert!(!is_sse(text), "{text:?}");
        }
    }

    #[test]
    fn tells_json_lines_by_a_whole_value_on_the_first_line_and_more_lines() {
        assert!(is_ndjson("{\"done\": false}\n{\"done\": true}\n"));
        assert!(is_ndjson("\n{\"done\": true}\r\n\r\n{\"done\": true}"));
        assert!(is_ndjson("[1]\nnot json"), "the stream reader says where");
        assert!(!is_ndjson("{\"done\": false}\n\n  \n"));
        assert!(!is_ndjson("{\n\"done\": false}\n"), "a pretty-printed body");
        assert!(!is_ndjson(""));
    }

    #[test]
    fn reads_gemini_json_paths() {
        use Step::{Index, Key};
        let key = |k: &str| Key(k.to_owned());
        assert_eq!(json_path("$.location"), Some(vec![key("location")]));
        assert_eq!(
            json_path("$.recipe.ingredients[0].name"),
            Some(vec![
                key("recipe"),
                key("ingredients"),
                Index(0),
                key("name")
            ])
        );
        assert_eq!(
            json_path("$['a.b'][\"c\"][12]"),
            Some(vec![key("a.b"), key("c"), Index(12)])
        );
        assert_eq!(json_path("plain.key"), Some(vec![key("plain"), key("key")]));
        assert_eq!(json_path("$"), Some(vec![]));
        for bad in ["$..a", "$.a[", "$.a[x]", "$.a[-1]", "$['a]", "$a", "$.a."] {
            assert_eq!(json_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_slot_is_made_on_the_way_but_not_far_past_an_array() {
        let mut root = Value::Object(Map::new());
        let steps = [Step::Key("a".into()), Step::Index(2), Step::Key("b".into())];
        *slot(&mut root, &steps).expect("a slot") = Value::Bool(true);
        assert_eq!(root, serde_json::json!({"a": [null, null, {"b": true}]}));
        assert!(slot(&mut root, &[Step::Key("a".into()), Step::Index(1 << 40)]).is_none());
    }

    #[test]
    fn joins_data_lines_and_splits_them_when_blank_lines_were_lost() {
        let text =
            "data: {\"a\":\ndata: 1}\n\ndata: {\"b\": 2}\ndata: {\"c\": 3}\n\ndata: [DONE]\n";
        let values: Vec<Value> = sse_payloads(text)
            .map_err(|(_, e)| e.to_string())
            .expect("payloads")
            .into_iter()
            .map(|(v, _)| v)
            .collect();
        assert_eq!(
            values,
            [
                serde_json::json!({"a": 1}),
                serde_json::json!({"b": 2}),
                serde_json::json!({"c": 3})
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_first_field_is_ignored() {
        let text = "\u{feff}data: {\"a\": 1}\r\n\r\ndata: [DONE]\r\n";
        let payloads = sse_payloads(text)
            .map_err(|(_, e)| e.to_string())
            .expect("payloads");
        assert_eq!(payloads.len(), 1);
        let (value, ranges) = &payloads[0];
        assert_eq!(value, &serde_json::json!({"a": 1}));
        assert_eq!(&text[ranges[0].clone()], "{\"a\": 1}");
    }

    #[test]
    fn positions_map_back_into_the_text() {
        let ranges = [10..15, 20..30];
        assert_eq!(offset_in(&ranges, 0), 10);
        assert_eq!(offset_in(&ranges, 5), 15);
        assert_eq!(offset_in(&ranges, 6), 20);
        assert_eq!(offset_in(&ranges, 99), 30);
    }
}
