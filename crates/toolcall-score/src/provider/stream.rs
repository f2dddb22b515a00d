//! Recorded streams: a response as the wire carried it with `stream: true`, assembled into the
//! body the same request would have got without streaming.
//!
//! Agents mostly stream, so the response a team records is often the raw stream: server-sent
//! events (`event:` / `data:` lines), one JSON chunk per line (Ollama's NDJSON, and how SDK tests
//! and most loggers keep any provider's stream), or an SDK's dump of the chunk objects as a JSON
//! array. Each format's events are folded into a `serde_json::Value` of the provider's own
//! non-streaming shape, and that format's reader runs on it, so every rule of the
//! readers applies to a stream unchanged. Nothing is marked as streamed or as cut short: a stream
//! without its final event assembles what it has (its stop reason is what the events said, often
//! none).
//!
//! Each format's own module says which events are its stream's and how they fold into its body
//! (its `stream.rs`, registered as its `Wire::stream`); this module does the framing, tells the
//! format from the first event of a known kind, and maps the reader's errors back into the
//! events.
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

use std::ops::Range;
use std::path::Path;

use serde_json::Value;

use super::fold::{stream_error, Fault, Origin};
use super::read::json_string_arguments;
use super::registry::{chunk_array_format, event_format as kind};
use crate::errors::{describe, ParseError};
use crate::{Format, InputError, Recording, Response};

/// How a stream's events are framed in its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
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

/// A JSON array as a response: a stream's chunks (when its first item is an event of a known
/// kind, of the format named if one is) assembled, else a call list.
pub(crate) fn parse_array(array: &Value, format: Option<Format>) -> Result<Response, ParseError> {
    if let Value::Array(items) = array {
        if let Some(kind) = chunk_array_format(items) {
            if format.is_none_or(|f| f == kind) {
                return parse_items(items, format);
            }
        }
    }
    super::body::read_body(array, format)
}

/// The response a JSON array of chunks assembles into; an error's pointer is the item's (`/3/…`).
pub(crate) fn parse_items(items: &[Value], format: Option<Format>) -> Result<Response, ParseError> {
    response(items, format).map_err(|fault| match fault.event {
        Some(i) => match fault.error {
            ParseError::Stream { why } => ParseError::Stream {
                why: format!("{why} (item {i} of the array)"),
            },
            error => crate::errors::prefix(&format!("/{i}"), error),
        },
        None => fault.error,
    })
}

/// The response `events` assemble into.
pub(super) fn response(events: &[Value], format: Option<Format>) -> Result<Response, Fault> {
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
    // Only a format with a stream has events (`kind`), so there is one.
    let Some(stream) = format.wire().stream else {
        return Err(stream_error(
            first,
            format!("{format} has no stream read here"),
        ));
    };
    let assembled = (stream.assemble)(events)?;
    let mut response = super::body::read_body(&assembled.body, Some(format))
        .map_err(|error| trace(&assembled.origins, first, events, error))?;
    for (index, raw) in assembled.invalid {
        if let Some(call) = response.calls.get_mut(index) {
            call.arguments = json_string_arguments(&raw);
        }
    }
    Ok(response)
}

/// The events every format's stream is read from, for the errors that say none was found.
fn known() -> String {
    let events: Vec<String> = Format::ALL
        .into_iter()
        .filter_map(|f| f.wire().stream.map(|s| s.events.to_owned()))
        .collect();
    format!("known are {}", events.join(", "))
}

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
             format: found {}; {}; {hint}",
            describe(first),
            known()
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

/// Whether the first non-blank line of `text` is a stream event no whole response looks like.
pub(crate) fn starts_a_stream(text: &str) -> bool {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| serde_json::from_str::<Value>(line).ok())
        .is_some_and(|event| unambiguous(&event))
}

/// Whether `event` is a stream event no whole response looks like (a Gemini chunk has a body's
/// shape, and so has an Ollama chunk unless it says `"done": false`): each format says.
fn unambiguous(event: &Value) -> bool {
    let (Some(format), Some(object)) = (kind(event), event.as_object()) else {
        return false;
    };
    format
        .wire()
        .stream
        .is_some_and(|stream| !(stream.like_a_body)(object))
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
    format!("{saw}; {}", known())
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
pub(super) type Payload = (Value, Vec<Range<usize>>);

/// A syntax error, at a byte offset of the text.
pub(super) type SyntaxError = (usize, serde_json::Error);

/// The `data:` payloads of server-sent events, per the HTML standard's framing: fields until a
/// blank line make an event, `:` lines are comments, the `data:` lines of one event are joined by
/// `\n`, one space after the colon is dropped. `[DONE]` and empty payloads carry nothing. A log
/// that dropped the blank lines between events leaves several one-line JSON payloads in one
/// event: when the joined text does not parse but each line does, each line is an event.
pub(super) fn sse_payloads(text: &str) -> Result<Vec<Payload>, SyntaxError> {
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
pub(super) fn ndjson_payloads(text: &str) -> Result<Vec<Payload>, SyntaxError> {
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

impl Recording {
    /// The kind of the file at `path` holding `text`: as [`Recording::of`], but a `.jsonl` whose
    /// first non-blank line is a stream event no body looks like (a `chat.completion.chunk`, an
    /// Anthropic, Responses or Bedrock event, an Ollama chunk with `"done": false`) is one
    /// stream, not samples — as [`crate::Response::load`] reads it. Only that line is parsed.
    pub fn of_text(path: &std::path::Path, text: &str) -> Option<Recording> {
        match Recording::of(path)? {
            Recording::PerLine if starts_a_stream(text) => Some(Recording::One),
            kind => Some(kind),
        }
    }
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
