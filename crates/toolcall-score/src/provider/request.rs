//! The request side of a call (system prompt, tools, transcript) in any provider's shape: what
//! a case file or a logged request holds, read into a [`Request`].
//!
//! Which members a request has, and how each is read, is each format's (its `Wire::request`):
//! this layer reads, in part order (system prompt, tools, transcript), every member some format
//! declares, by the reader of the format named for the request or else of the first format
//! that declares it, and holds a request to one format's transcript.

use serde_json::Value;

use super::body::detect;
use super::collect::Tools;
use super::messages;
use super::read::{get, get_any, object, At, Evidence};
use super::tools::{tool_items, tools_into};
use super::wire::{Member, Part, Read, Reading};
use crate::errors::ParseError;
use crate::{Catalog, Format, Request, Transcript};

/// Every member some format's request holds, with the first format (registry order) that
/// declares each: the format a member's reader is taken from when none is named.
fn declared() -> impl Iterator<Item = (Format, &'static Member)> {
    Format::ALL.into_iter().flat_map(|format| {
        format
            .wire()
            .request
            .members
            .iter()
            .map(move |m| (format, m))
    })
}

/// Each member some format's request holds, once per key, in reading order (part, then
/// registry order), with the first format that declares it: worked out once, since every
/// request of a log asks.
fn distinct() -> &'static [(Format, &'static Member)] {
    static DISTINCT: std::sync::OnceLock<Vec<(Format, &'static Member)>> =
        std::sync::OnceLock::new();
    DISTINCT.get_or_init(|| {
        let mut distinct: Vec<(Format, &'static Member)> = Vec::new();
        for part in [Part::System, Part::Tools, Part::Transcript] {
            for (format, member) in declared().filter(|(_, m)| m.part == part) {
                if !distinct.iter().any(|(_, d)| d.keys[0] == member.keys[0]) {
                    distinct.push((format, member));
                }
            }
        }
        distinct
    })
}

/// Whether `key` is a member some format's request is read from.
pub(super) fn is_request_key(key: &str) -> bool {
    distinct()
        .iter()
        .any(|(_, member)| member.keys.contains(&key))
}

/// The reader of the member `member` declares, as `named` reads it when it declares a member of
/// the same key.
fn reader_for(member: &'static Member, named: Option<Format>) -> &'static Member {
    named
        .and_then(|format| {
            format
                .wire()
                .request
                .members
                .iter()
                .find(|own| own.part == member.part && own.keys.contains(&member.keys[0]))
        })
        .unwrap_or(member)
}

/// Parses the request side of a call (system prompt, tools, transcript) in any supported shape.
///
/// - system prompt: `system` (a string, Anthropic text blocks or Bedrock `[{text}]`),
///   `systemInstruction` / `system_instruction` (Gemini), `instructions` (Responses), and the
///   text of `system` / `developer` role messages (which also stay in the transcript); parts are
///   joined by blank lines;
/// - tools: `tools`, `toolConfig.tools` (see [`crate::provider::parse_tools`]) and OpenAI Chat's deprecated
///   `functions` (bare `{name, description, parameters}` definitions, still accepted by the API);
/// - transcript: `messages` (Anthropic, OpenAI Chat, Bedrock, Ollama), `contents` (Gemini) or
///   `input` (Responses) — at most one of them.
///
/// Missing keys are fine (a case may hold only tools); values of the wrong type are errors with
/// their pointer. With `format` given, `messages` are read in that format's shapes only;
/// otherwise each message is read by its own shape, and [`Request::format`] is set when the
/// distinctive shapes seen all agree on one format.
pub fn parse_request(value: &Value, format: Option<Format>) -> Result<Request, ParseError> {
    let mut tools = Tools::cloning();
    let mut request = read_request(value, format, &mut tools)?;
    request.tools = Catalog::new(tools.into_tools());
    Ok(request)
}

/// [`parse_request`] with the tools read into `tools`, and the returned request's catalog left
/// empty for the caller to fill from them.
pub(crate) fn read_request(
    value: &Value,
    format: Option<Format>,
    tools: &mut Tools,
) -> Result<Request, ParseError> {
    read_request_with(value, format, tools, PreRead::default())
}

/// Members of a request read before the rest, straight from its text, by
/// [`crate::RequestReader`]; what reading each saw of the format comes with it.
#[derive(Debug, Default)]
pub(crate) struct PreRead {
    /// The `tools` member was read (its catalog is the caller's to set).
    pub(crate) tools: Option<Evidence>,
    /// The `messages` member was read, as `messages_into` reads it with no format named (its
    /// texts left out).
    pub(crate) messages: Option<(Transcript, Evidence)>,
}

/// [`read_request`], with the members in `pre` already read.
pub(crate) fn read_request_with(
    value: &Value,
    format: Option<Format>,
    tools: &mut Tools,
    pre: PreRead,
) -> Result<Request, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a request object")?;
    // A response body has none of a request's keys, and would read as an empty request: say
    // what it is instead (a format is detected or named, never guessed silently).
    // (`message` is a Cohere v1 request's and also the top member of Ollama's and Cohere v2's
    // bodies: a member a response has too does not make a request.)
    let response_key = |key: &str| super::registry::TOP_KEYS.contains(&key);
    if !body
        .keys()
        .any(|key| is_request_key(key) && !response_key(key))
    {
        if let Ok(format) = detect(value) {
            return Err(ParseError::Unexpected {
                pointer: String::new(),
                expected: "a request (`messages`, `contents` or `input`, `tools`, `system`)".into(),
                found: format!("a response body ({format}): score it as the response"),
            });
        }
    }
    let mut reading = Reading {
        format,
        system: Vec::new(),
        tools,
        transcript: Transcript::default(),
        evidence: Evidence::default(),
        items: tool_items,
    };
    if let Some(seen) = &pre.tools {
        reading.evidence.merge(seen);
    }
    for (_, member) in distinct()
        .iter()
        .filter(|(_, m)| m.part != Part::Transcript)
    {
        {
            let Some((key, value)) = get_any(body, member.keys) else {
                continue;
            };
            if matches!(member.read, Read::Tools) && pre.tools.is_some() {
                continue;
            }
            read_member(
                reader_for(member, format),
                value,
                &at.key(key),
                &mut reading,
            )?;
        }
    }

    if let Some((read, seen)) = pre.messages {
        if format.is_some() {
            return Err(at.key("messages").error(
                "no format named when the messages were read",
                "a named format",
            ));
        }
        if let Some((_, member)) = distinct()
            .iter()
            .filter(|(_, m)| m.part == Part::Transcript)
            .find(|(_, m)| get_any(body, m.keys).is_some())
        {
            let key = get_any(body, member.keys).map_or(member.keys[0], |(key, _)| key);
            return Err(at.key(key).error("one transcript", "a second one"));
        }
        reading.transcript = read;
        reading.evidence.merge(&seen);
    }
    transcript_into(body, &at, &mut reading)?;

    let Reading {
        system,
        transcript,
        evidence,
        ..
    } = reading;
    Ok(Request {
        format: format.or_else(|| evidence.format()),
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        tools: Catalog::default(),
        transcript,
    })
}

/// The transcript: the members present must all be one format's (the named one's, else the
/// first that declares them all), and are read in that format's order.
fn transcript_into(
    body: &super::read::Object,
    at: &At<'_>,
    reading: &mut Reading<'_>,
) -> Result<(), ParseError> {
    let mut present: Vec<&str> = Vec::new();
    for (_, member) in distinct()
        .iter()
        .filter(|(_, m)| m.part == Part::Transcript)
    {
        if let Some((key, _)) = get_any(body, member.keys) {
            present.push(key);
        }
    }
    let Some(first) = present.first().copied() else {
        return Ok(());
    };
    let covers = |format: Format| present.iter().all(|key| declares(format, key));
    let owner = reading
        .format
        .filter(|f| covers(*f))
        .or_else(|| Format::ALL.into_iter().find(|f| covers(*f)));
    let Some(owner) = owner else {
        // Two formats' transcripts: name the first member no format of the first one has.
        let with_first: Vec<Format> = Format::ALL
            .into_iter()
            .filter(|f| declares(*f, first))
            .collect();
        let second = present
            .iter()
            .copied()
            .find(|key| !with_first.iter().any(|f| declares(*f, key)))
            .unwrap_or(present[present.len() - 1]);
        let other = get(body, second).unwrap_or(&Value::Null);
        return Err(at.key(second).unexpected(
            format!("one transcript, not both `{first}` and `{second}`"),
            other,
        ));
    };
    for member in owner.wire().request.members {
        if member.part != Part::Transcript {
            continue;
        }
        if let Some((key, value)) = get_any(body, member.keys) {
            read_member(member, value, &at.key(key), reading)?;
        }
    }
    Ok(())
}

/// Whether `format`'s transcript has a member `key`.
fn declares(format: Format, key: &str) -> bool {
    format
        .wire()
        .request
        .members
        .iter()
        .any(|m| m.part == Part::Transcript && m.keys.contains(&key))
}

/// Reads one member with the reader it names.
fn read_member(
    member: &Member,
    value: &Value,
    at: &At<'_>,
    reading: &mut Reading<'_>,
) -> Result<(), ParseError> {
    match member.read {
        Read::Own(read) => read(value, at, reading),
        Read::Tools => tools_into(value, at, reading.tools, &mut reading.evidence),
        Read::Messages => messages::messages_into(
            value,
            at,
            reading.format,
            &mut reading.transcript,
            &mut reading.system,
            &mut reading.evidence,
        ),
    }
}
