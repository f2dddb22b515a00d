//! One module per wire format: responses, tools arrays and transcripts in, the provider-neutral
//! model ([`crate::Response`], [`crate::Transcript`], [`crate::Tool`]) out.
//!
//! Each provider's JSON is read straight from the `serde_json::Value` it was parsed into, without
//! deserializing into per-provider structs: only what scoring needs is copied out (names, ids,
//! arguments, text), and a value of the wrong type is an error carrying the JSON pointer of the
//! exact value, which [`crate::InputError`] turns into a line and column.
//!
//! **Invariant:** parsing never panics, whatever the input; a shape that fits no format, or
//! several, is an error, never a silently empty response.
//!
//! # What is read, per format
//!
//! | format | calls | deliberately not calls |
//! |---|---|---|
//! | anthropic | `tool_use` blocks | `server_tool_use` / `mcp_tool_use` (run by the API itself, never seen by the caller's loop); thinking blocks are not text |
//! | openai-chat | `choices[0].message.tool_calls` (arguments: a JSON string; not JSON is [`crate::Arguments::Invalid`]), `custom` tool calls among them (free-text input: [`crate::Arguments::Text`]); the legacy `function_call` when there are no `tool_calls` | other choices (`n > 1` asks for alternatives; the loop acts on choice 0) |
//! | openai-responses | `function_call` and `custom_tool_call` items (id: `call_id`; `namespace` kept; a custom call's input is [`crate::Arguments::Text`]); the call items of built-in tools the caller runs, `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call` (named after the tool, see [`crate::Builtin`]; arguments: the item's `action` or `operation`) | hosted tool items (`web_search_call`, `mcp_call`, …), `reasoning` |
//! | gemini | `candidates[0]` `functionCall` parts (no `args` reads as `{}`) | `thought` text parts |
//! | bedrock | `toolUse` blocks | `toolUse` typed `server_tool_use` (a system tool, run by Bedrock itself) |
//! | ollama | `message.tool_calls` (arguments: an object; no ids) | |
//! | cohere | `message.tool_calls` (arguments: a JSON string, as OpenAI Chat's); `tool_plan` is text | |
//! | call-list | each `{name, input \| arguments, id?}` or JSON-RPC `tools/call` request (no arguments reads as `{}`) | |
//!
//! A recorded stream (server-sent events, Ollama's NDJSON, or a JSON array of chunks) is first
//! assembled into the non-streaming body of its format (`stream.rs` says how, per format), then
//! read as above; Bedrock's `ConverseStream` is binary on the wire and is not read.
//!
//! Anomalies: OpenAI Chat's legacy `function_call` disagreeing with `tool_calls` (only
//! `tool_calls` are scored), Gemini's `UNEXPECTED_TOOL_CALL` and `MALFORMED_FUNCTION_CALL` finish
//! reasons (with `finishMessage`), Bedrock's `malformed_tool_use` stop reason. The stop reason is
//! the provider's own field (`stop_reason`, `finish_reason`, `incomplete_details.reason` or
//! `status`, `finishReason`, `stopReason`, `done_reason`). Gemini keys are read in camelCase (REST)
//! and snake_case (Python SDK dumps).
//!
//! # Tools
//!
//! [`parse_tools`] tells each item of a tools array by its shape, so a catalog may even mix
//! formats. Tools that are not functions are kept **by name when they have one** (Anthropic
//! server tools such as `{"type": "web_search_20250305", "name": "web_search"}`, OpenAI `custom`
//! tools, flat in the Responses API and under `custom` in Chat Completions, Bedrock
//! `{"systemTool": {"name": "nova_grounding"}}`) with no input schema, since a model can call
//! them by that name. The Responses built-ins the caller's own loop runs have no name but are
//! kept under the one their calls carry (`{"type": "shell"}` as `shell`, likewise `local_shell`
//! and `apply_patch`; `computer_use_preview` and `computer` both as `computer`). Other built-ins
//! without a name (OpenAI `{"type": "web_search"}`, Gemini `{"googleSearch": {}}`, Bedrock
//! `cachePoint`) are skipped, as nothing calls them as a function. A Responses `namespace` tool
//! group contributes its inner tools under their own names (calls carry the namespace
//! separately).
//!
//! # Logged conversations
//!
//! [`Logged`] reads a logged conversation back as its own format (told by [`parse_request`]'s
//! shapes) and makes of each assistant turn the request up to it and the response body that
//! returned it, for `toolcall import`. Each format's module says what its turns are and how its
//! provider wraps one; see `logged.rs`.

mod collect;
mod fast;
mod logged;
mod messages;
mod read;
mod repeated;
pub(crate) mod request;
mod stream;
pub(crate) mod wire;

use serde_json::Value;

pub(crate) use self::collect::Tools;
pub use self::logged::Logged;
pub(crate) use self::read::Evidence;
use self::read::Object;
use self::read::{array, get, get_any, object, opt_array, opt_string, string, At};
pub use self::repeated::{RequestReader, RequestSeed};
use self::wire::Wire;
pub(crate) use self::wire::{fitting, Members};
use crate::errors::{describe, ParseError};
use crate::{Catalog, Request, Response, Role, Tool, Transcript};

/// Declares each format's module, [`Format`], [`Format::ALL`] and the lookup of each format's
/// `Wire`, from one list of `Variant => module` lines.
macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, )*) => {
        $( pub(crate) mod $module; )*

        /// A provider's wire format, for responses, tool arrays and transcripts alike.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Format {
            $( $(#[$doc])* $variant, )*
        }

        impl Format {
            /// Every format, in the registry's order (the order detection tries them in).
            pub const ALL: [Format; [$(stringify!($variant)),*].len()] = [$(Format::$variant),*];

            /// Everything the shared layers need to know about this format.
            pub(crate) const fn wire(self) -> &'static Wire {
                match self {
                    $( Format::$variant => &$module::WIRE, )*
                }
            }
        }
    };
}

// The registry: one line per wire format. Adding a format is its module, with its `WIRE`, and a
// line here (ARCHITECTURE.md, "Adding a wire format").
registry! {
    /// Anthropic Messages API (`content` blocks of type `tool_use` / `tool_result`).
    Anthropic => anthropic,
    /// OpenAI Chat Completions (`choices[].message.tool_calls`, `arguments` as a JSON string).
    OpenaiChat => openai_chat,
    /// OpenAI Responses API (`output` items of type `function_call`).
    OpenaiResponses => openai_responses,
    /// Gemini `generateContent` (`candidates[].content.parts[].functionCall`).
    Gemini => gemini,
    /// Amazon Bedrock Converse (`output.message.content[].toolUse`).
    Bedrock => bedrock,
    /// Ollama `/api/chat` (`message.tool_calls`, `arguments` as an object).
    Ollama => ollama,
    /// Cohere v2 chat (`message.tool_calls`, `tool_plan`, `finish_reason`).
    Cohere => cohere,
    /// A plain JSON list of `{name, input}` calls, as in an MCP replay transcript.
    CallList => call_list,
}

/// The format of a response, told from the JSON's shape.
///
/// | format | shape |
/// |---|---|
/// | anthropic | `{"type": "message", "content": [...]}` (or `content` with `role: "assistant"` or `stop_reason`) |
/// | openai-chat | `{"object": "chat.completion", "choices": [...]}`, or just `choices` |
/// | openai-responses | `{"object": "response", "output": [...]}`, or `output` as an array |
/// | gemini | `{"candidates": [...]}` |
/// | bedrock | `{"output": {"message": {...}}, "stopReason": ...}` |
/// | ollama | `{"model", "message": {...}, "done": ...}` (`message` and `done` both) |
/// | cohere | `{"id", "message": {...}, "finish_reason": ...}` (`message` and `finish_reason` both) |
/// | call-list | a JSON array (of `{name, input \| arguments}`) |
///
/// Each format's module holds its own predicate (its `Wire::fits`); detection asks them all.
/// A JSON array whose first item is a stream event (a `chat.completion.chunk`, an Anthropic or
/// Responses event, a Gemini chunk, an Ollama chunk) is that format's stream, not a call list.
///
/// A shape that fits none is [`ParseError::UnknownShape`], saying what it saw and which formats
/// it resembles (those whose members it has); one that fits several is
/// [`ParseError::Ambiguous`].
pub fn detect(value: &Value) -> Result<Format, ParseError> {
    let body = match value {
        Value::Array(items) => {
            return Ok(stream::chunk_array_format(items).unwrap_or(Format::CallList))
        }
        Value::Object(body) => body,
        other => {
            return Err(ParseError::UnknownShape {
                why: format!(
                    "found {} where a response object or a call array was expected",
                    describe(other)
                ),
            })
        }
    };
    fitting(body).map_err(|candidates| {
        if candidates.is_empty() {
            ParseError::UnknownShape {
                why: unknown_why(value, body),
            }
        } else {
            ParseError::Ambiguous { candidates }
        }
    })
}

/// Why a response object fits no format: what it holds, which formats it resembles, and what
/// each format would need.
fn unknown_why(value: &Value, body: &Object) -> String {
    let mut why = format!("found {}", describe(value));
    if let Some(error) = body.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .unwrap_or("");
        why.push_str(&format!(
            ", which looks like an API error body ({}), not a response",
            crate::escape(message)
        ));
    } else if stream::is_event(value) {
        why.push_str(", which looks like one event of a stream: record the assembled response");
    } else {
        let resembles: Vec<String> = Format::ALL
            .into_iter()
            .filter_map(|format| {
                let shared: Vec<&str> = format
                    .wire()
                    .top_keys
                    .iter()
                    .copied()
                    .filter(|key| body.contains_key(*key))
                    .collect();
                (!shared.is_empty()).then(|| format!("{format}'s `{}`", shared.join("`, `")))
            })
            .collect();
        if !resembles.is_empty() {
            why.push_str(&format!(
                "; it has {} but not the rest of that shape",
                resembles.join(" and ")
            ));
        }
    }
    let shapes: Vec<String> = Format::ALL
        .into_iter()
        .map(|format| format!("{} ({format})", format.wire().shape))
        .collect();
    why.push_str(&format!("; a response needs {}", shapes.join(", ")));
    why
}

/// Parses a provider's response body. With `format` `None` the format is detected.
///
/// A JSON array of stream chunks (see [`detect`]) is assembled into its format's body first;
/// an error inside a chunk has the chunk's pointer (`/3/delta/…`).
///
/// Each format's module says which parts are read; a value of the wrong type where a call, its
/// name or its container belongs is a [`ParseError::Unexpected`] with its JSON pointer. Arguments
/// that are not valid JSON are not an error: they become [`crate::Arguments::Invalid`].
pub fn parse_response(value: &Value, format: Option<Format>) -> Result<Response, ParseError> {
    if let Value::Array(items) = value {
        if let Some(kind) = stream::chunk_array_format(items) {
            if format.is_none_or(|f| f == kind) {
                return stream::parse_items(items, format);
            }
        }
    }
    let Some(named) = format else {
        return read_as(value, detect(value)?);
    };
    read_as(value, named).map_err(|error| match detect(value) {
        // The body is another format's: the named one is what is wrong, not the value.
        Ok(detected) if detected != named => ParseError::FormatMismatch {
            named,
            detected,
            error: Box::new(error),
        },
        _ => error,
    })
}

/// Whether `format` has a recorded stream that is read (see [`Format::streams`]).
pub(crate) fn streams(format: Format) -> bool {
    format.wire().stream.is_some()
}

/// The response in `value`, read as `format`'s.
fn read_as(value: &Value, format: Format) -> Result<Response, ParseError> {
    (format.wire().read)(value)
}

pub(crate) use self::stream::Framing;
pub(crate) use self::stream::{is_ndjson, is_sse, parse_text as parse_stream, starts_a_stream};

/// The response in `text` when the single-pass reader handles it (any valid response, bar a few
/// odd shapes), equal to what [`parse_response`] gives over the text's `Value`; `None` sends the
/// caller to the general path, which also makes every error.
pub(crate) fn fast_response(text: &str, format: Option<Format>) -> Option<Response> {
    fast::response(text, format)
}

/// Parses a tools array in any supported format; each item's format is told from its shape.
///
/// Accepted: an array of Anthropic `{name, description, input_schema}`, OpenAI Chat (and Ollama)
/// `{type: "function", function: {name, description, parameters}}`, Responses `{type:
/// "function", name, description, parameters}`, bare function definitions `{name, description,
/// parameters}`, Gemini `{functionDeclarations: [...]}`, Bedrock `{toolSpec: {name, description,
/// inputSchema: {json}}}` (and `{systemTool: {name}}`) and MCP `{name, description,
/// inputSchema}` items, and the Responses built-ins the caller runs (`{type: "shell" |
/// "local_shell" | "apply_patch" | "computer_use_preview" | "computer"}`, named after their calls,
/// without a schema); or an object holding such an array under `tools` (an MCP `tools/list`
/// result, a Bedrock `toolConfig`) or `result.tools` (a whole JSON-RPC `tools/list` response);
/// or a whole request body, whose tools are read as [`parse_request`] reads them. Non-function
/// tools: see the module docs.
pub fn parse_tools(value: &Value) -> Result<Vec<Tool>, ParseError> {
    let mut tools = Tools::cloning();
    read_tools(value, &mut tools)?;
    Ok(tools.into_tools())
}

/// [`parse_tools`] of a document the caller owns and no longer needs: the schemas are moved out
/// of it rather than cloned.
pub(crate) fn parse_owned_tools(mut value: Value) -> Result<Vec<Tool>, ParseError> {
    let mut tools = Tools::deferring();
    read_tools(&value, &mut tools)?;
    Ok(tools.take_schemas(&mut value))
}

/// Reads a tools array (see [`parse_tools`]) into `tools`.
///
/// A whole request body is read too (`--tools request.json`, or a planner's request as
/// `parent_tools`): its tools wherever the request keeps them, as [`parse_request`] reads them
/// (`tools`, Bedrock's `toolConfig.tools`, Chat's legacy `functions`, Responses input items
/// that add tools), and none for a request that sent none.
pub(crate) fn read_tools(value: &Value, tools: &mut Tools) -> Result<(), ParseError> {
    if let Value::Object(body) = value {
        let is_request = REQUEST_KEYS
            .iter()
            .any(|key| *key != "tools" && body.contains_key(*key));
        if is_request {
            return read_request(value, None, tools).map(drop);
        }
    }
    tools_into(value, &At::ROOT, tools, &mut Evidence::default())
}

fn tools_into(
    value: &Value,
    at: &At<'_>,
    out: &mut Tools,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    const EXPECTED: &str = "a tools array, or an object with `tools` (an MCP `tools/list` \
                            result, a Bedrock `toolConfig`)";
    match value {
        Value::Array(items) => tool_items(items, at, out, evidence, true),
        Value::Object(body) => {
            if let Some(tools) = get(body, "tools") {
                let at = at.key("tools");
                return tool_items(
                    array(tools, &at, "an array of tools")?,
                    &at,
                    out,
                    evidence,
                    true,
                );
            }
            if let Some(tools) = body
                .get("result")
                .and_then(|r| get(r.as_object()?, "tools"))
            {
                let result_at = at.key("result");
                let at = result_at.key("tools");
                return tool_items(
                    array(tools, &at, "an array of tools")?,
                    &at,
                    out,
                    evidence,
                    true,
                );
            }
            if get_any(body, &["functionDeclarations", "function_declarations"]).is_some() {
                return tool_item(value, at, out, evidence, true);
            }
            Err(at.unexpected(EXPECTED, value))
        }
        other => Err(at.unexpected(EXPECTED, other)),
    }
}

fn tool_items(
    items: &[Value],
    at: &At<'_>,
    out: &mut Tools,
    evidence: &mut Evidence,
    top: bool,
) -> Result<(), ParseError> {
    out.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        tool_item(item, &at.index(i), out, evidence, top)?;
    }
    Ok(())
}

/// Gemini's built-in tools: objects keyed by the tool, with no `name` (the REST API's camelCase
/// keys and the Python SDK's snake_case ones, as the SDKs' `Tool` types list them).
const GEMINI_BUILTINS: [&str; 23] = [
    "googleSearch",
    "google_search",
    "googleSearchRetrieval",
    "google_search_retrieval",
    "codeExecution",
    "code_execution",
    "urlContext",
    "url_context",
    "googleMaps",
    "google_maps",
    "computerUse",
    "computer_use",
    "fileSearch",
    "file_search",
    "enterpriseWebSearch",
    "enterprise_web_search",
    "parallelAiSearch",
    "parallel_ai_search",
    "exaAiSearch",
    "exa_ai_search",
    "mcpServers",
    "mcp_servers",
    "retrieval",
];

/// One item of a tools array. `top` is false inside a namespace group, which cannot nest.
fn tool_item(
    item: &Value,
    at: &At<'_>,
    out: &mut Tools,
    evidence: &mut Evidence,
    top: bool,
) -> Result<(), ParseError> {
    let tool = object(item, at, "a tool definition object")?;
    if let Some((key, declarations)) =
        get_any(tool, &["functionDeclarations", "function_declarations"])
    {
        evidence.saw(&[Format::Gemini]);
        return gemini::declarations_into(declarations, &at.key(key), out);
    }
    if let Some(spec) = get(tool, "toolSpec") {
        evidence.saw(&[Format::Bedrock]);
        return bedrock::tool_spec(spec, &at.key("toolSpec"), out);
    }
    if let Some(system) = get(tool, "systemTool") {
        evidence.saw(&[Format::Bedrock]);
        return bedrock::system_tool(system, &at.key("systemTool"), out);
    }
    if tool.contains_key("cachePoint") {
        evidence.saw(&[Format::Bedrock]);
        return Ok(());
    }
    match opt_string(tool, "type", at)? {
        Some("function") => match get(tool, "function") {
            Some(function) => {
                evidence.saw(&[Format::OpenaiChat, Format::Ollama]);
                let function_at = at.key("function");
                let function = object(function, &function_at, "a `function` object")?;
                openai_chat::tool(function, &function_at, out)?;
            }
            None => {
                evidence.saw(&[Format::OpenaiResponses]);
                openai_responses::tool(tool, at, out)?;
            }
        },
        // A Chat Completions custom tool nests its name under `custom` (the Responses API's is
        // flat, and is read below with the other named tools).
        Some("custom") if get(tool, "custom").is_some() => {
            evidence.saw(&[Format::OpenaiChat]);
            let custom_at = at.key("custom");
            let custom = object(&tool["custom"], &custom_at, "a `custom` object")?;
            tool_fields(custom, &custom_at, &[], out)?;
        }
        Some("namespace") if top => {
            evidence.saw(&[Format::OpenaiResponses]);
            let tools_at = at.key("tools");
            let inner = opt_array(tool, "tools", at, "an array of tools")?;
            tool_items(inner, &tools_at, out, evidence, false)?;
        }
        Some(kind) => match openai_responses::declared_builtin(kind) {
            // A Responses built-in the caller's loop runs (`{"type": "shell"}`, …): its calls
            // carry no function name but are named after it.
            Some(builtin) => {
                evidence.saw(&[Format::OpenaiResponses]);
                out.push(Tool::new(builtin.name(), ""), None);
            }
            // Any other non-function tool: kept when it has a name the model can call it by.
            None => {
                if tool.contains_key("name") {
                    if tool.contains_key("input_schema") {
                        evidence.saw(&[Format::Anthropic]);
                    }
                    tool_fields(tool, at, &["input_schema", "parameters"], out)?;
                }
            }
        },
        None if tool.contains_key("name") => {
            if tool.contains_key("input_schema") {
                evidence.saw(&[Format::Anthropic]);
            }
            tool_fields(
                tool,
                at,
                &[
                    "input_schema",
                    "inputSchema",
                    "parameters",
                    "parametersJsonSchema",
                ],
                out,
            )?;
        }
        // A Chat Completions function tool without its `"type": "function"` discriminator, as
        // some SDKs send it; the API reads it as a function.
        None if get(tool, "function").is_some_and(Value::is_object) => {
            evidence.saw(&[Format::OpenaiChat, Format::Ollama]);
            let function_at = at.key("function");
            let function = object(&tool["function"], &function_at, "a `function` object")?;
            openai_chat::tool(function, &function_at, out)?;
        }
        None if GEMINI_BUILTINS.iter().any(|k| tool.contains_key(*k)) => {
            evidence.saw(&[Format::Gemini]);
        }
        None => {
            return Err(at.unexpected(
                "a tool definition: {name, description, input_schema | inputSchema | \
                 parameters}, {type: \"function\", function: {…}}, {functionDeclarations: […]}, \
                 {toolSpec: {…}} or {systemTool: {…}}",
                item,
            ))
        }
    }
    Ok(())
}

/// OpenAI Chat's deprecated `functions`: each item a bare `{name, description, parameters}`.
fn legacy_functions(items: &[Value], at: &At<'_>, out: &mut Tools) -> Result<(), ParseError> {
    out.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let function = object(item, &at, "a function definition object")?;
        openai_chat::tool(function, &at, out)?;
    }
    Ok(())
}

/// The fields every function definition shares: a required string `name`, an optional string
/// `description`, and the schema under the first of `schema_keys` present; added to `out`.
fn tool_fields(
    tool: &Object,
    at: &At<'_>,
    schema_keys: &[&str],
    out: &mut Tools,
) -> Result<(), ParseError> {
    let named = named_tool(tool, at)?;
    out.push(
        named,
        get_any(tool, schema_keys).map(|(key, schema)| (schema, at.key(key))),
    );
    Ok(())
}

/// A tool's required string `name` and optional string `description`, without its schema.
fn named_tool(tool: &Object, at: &At<'_>) -> Result<Tool, ParseError> {
    Ok(Tool::new(
        string(tool, "name", at, "a tool name (a string)")?,
        opt_string(tool, "description", at)?.unwrap_or_default(),
    ))
}

/// A message's required `role`.
fn role(message: &Object, at: &At<'_>) -> Result<Role, ParseError> {
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
const REQUEST_KEYS: [&str; 10] = [
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
