//! The request side of a call (system prompt, tools, transcript) in any provider's shape: what
//! a case file or a logged request holds, read into a [`Request`].

use serde_json::Value;

use super::collect::Tools;
use super::read::{array, get, get_any, object, opt_string, string, At, Evidence, Object};
use super::response::detect;
use super::tools::{legacy_functions, tool_items, tools_into};
use super::{gemini, messages, openai_responses, read};
use crate::errors::ParseError;
use crate::{Catalog, Format, Request, Role, Transcript};

/// A message's required `role`.
pub(super) fn role(message: &Object, at: &At<'_>) -> Result<Role, ParseError> {
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

/// Every key a request is read from: system prompts, tools and transcripts of every family.
pub(super) const REQUEST_KEYS: [&str; 10] = [
    "system",
    "systemInstruction",
    "system_instruction",
    "instructions",
    "tools",
    "functions",
    "toolConfig",
    "messages",
    "contents",
    "input",
];

/// The keys that hold a transcript, one per request family.
const TRANSCRIPT_KEYS: [&str; 3] = ["messages", "contents", "input"];

/// Parses the request side of a call (system prompt, tools, transcript) in any supported shape.
///
/// - system prompt: `system` (a string, Anthropic text blocks or Bedrock `[{text}]`),
///   `systemInstruction` / `system_instruction` (Gemini), `instructions` (Responses), and the
///   text of `system` / `developer` role messages (which also stay in the transcript); parts are
///   joined by blank lines;
/// - tools: `tools`, `toolConfig.tools` (see [`parse_tools`]) and OpenAI Chat's deprecated
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
    if !REQUEST_KEYS.iter().any(|key| body.contains_key(*key)) {
        if let Ok(format) = detect(value) {
            return Err(ParseError::Unexpected {
                pointer: String::new(),
                expected: "a request (`messages`, `contents` or `input`, `tools`, `system`)".into(),
                found: format!("a response body ({format}): score it as the response"),
            });
        }
    }
    let mut evidence = Evidence::default();
    let mut system = Vec::new();

    if let Some(value) = get(body, "system") {
        system_into(value, &at.key("system"), &mut system)?;
    }
    if let Some((key, value)) = get_any(body, &["systemInstruction", "system_instruction"]) {
        gemini::system_instruction_into(value, &at.key(key), &mut system, &mut evidence)?;
    }
    match get(body, "instructions") {
        None => {}
        Some(Value::String(s)) => {
            evidence.saw(&[Format::OpenaiResponses]);
            read::push_text(&mut system, s);
        }
        Some(other) => return Err(at.key("instructions").unexpected("a string", other)),
    }

    match &pre.tools {
        Some(seen) => evidence.merge(seen),
        None => {
            if let Some(value) = get(body, "tools") {
                tools_into(value, &at.key("tools"), tools, &mut evidence)?;
            }
        }
    }
    if let Some(functions) = get(body, "functions") {
        evidence.saw(&[Format::OpenaiChat]);
        let functions_at = at.key("functions");
        let items = array(functions, &functions_at, "an array of function definitions")?;
        legacy_functions(items, &functions_at, tools)?;
    }
    if let Some(config) = get(body, "toolConfig") {
        // Bedrock's `toolConfig` holds the tools; Gemini's holds only `functionCallingConfig`.
        let config_at = at.key("toolConfig");
        let config = object(config, &config_at, "a `toolConfig` object")?;
        if let Some(value) = get(config, "tools") {
            evidence.saw(&[Format::Bedrock]);
            let tools_at = config_at.key("tools");
            let items = array(value, &tools_at, "an array of tools")?;
            tool_items(items, &tools_at, tools, &mut evidence, true)?;
        }
    }

    let mut transcript = Transcript::default();
    if let Some((read, seen)) = pre.messages {
        if format.is_some() {
            return Err(at.key("messages").error(
                "no format named when the messages were read",
                "a named format",
            ));
        }
        if let Some(key) = TRANSCRIPT_KEYS.iter().find(|k| get(body, k).is_some()) {
            return Err(at.key(key).error("one transcript", "a second one"));
        }
        transcript = read;
        evidence.merge(&seen);
    }
    let mut present = TRANSCRIPT_KEYS
        .iter()
        .filter_map(|k| get(body, k).map(|v| (*k, v)));
    if let Some((key, value)) = present.next() {
        if let Some((second, other)) = present.next() {
            return Err(at.key(second).unexpected(
                format!("one transcript, not both `{key}` and `{second}`"),
                other,
            ));
        }
        let transcript_at = at.key(key);
        match key {
            "messages" => messages::messages_into(
                value,
                &transcript_at,
                format,
                &mut transcript,
                &mut system,
                &mut evidence,
            )?,
            "contents" => gemini::contents_into(
                value,
                &transcript_at,
                &mut transcript,
                &mut system,
                &mut evidence,
            )?,
            _ => openai_responses::input_into(
                value,
                &transcript_at,
                &mut transcript.messages,
                &mut system,
                tools,
                &mut evidence,
            )?,
        }
    }

    Ok(Request {
        format: format.or_else(|| evidence.format()),
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        tools: Catalog::default(),
        transcript,
    })
}

/// A top-level `system`: a string, or blocks (`{"type": "text", "text"}` for Anthropic,
/// `{"text"}` for Bedrock; cache points and guard content carry no prompt text).
fn system_into(value: &Value, at: &At<'_>, system: &mut Vec<String>) -> Result<(), ParseError> {
    match value {
        Value::String(s) => read::push_text(system, s),
        Value::Array(blocks) => {
            for (i, block) in blocks.iter().enumerate() {
                let at = at.index(i);
                let block = object(block, &at, "a system content block")?;
                let typed = opt_string(block, "type", &at)?;
                if matches!(typed, None | Some("text")) {
                    if let Some(text) = opt_string(block, "text", &at)? {
                        read::push_text(system, text);
                    }
                }
            }
        }
        other => {
            return Err(at.unexpected("a string or an array of text blocks", other));
        }
    }
    Ok(())
}
