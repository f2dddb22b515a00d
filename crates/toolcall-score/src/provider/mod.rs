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
//! | openai-chat | `choices[0].message.tool_calls` (arguments: a JSON string, kept as text in [`crate::Arguments::Json`] and a finding when not JSON), `custom` tool calls among them (free-text input: [`crate::Arguments::Text`]); the legacy `function_call` when there are no `tool_calls` | other choices (`n > 1` asks for alternatives; the loop acts on choice 0) |
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

mod body;
mod collect;
mod conversation;
mod fast;
mod fold;
pub(crate) mod live;
mod logged;
mod messages;
mod read;
mod registry;
mod repeated;
mod request;
mod response;
mod stream;
mod tools;
mod tools_file;
mod watch;
pub(crate) mod wire;

pub use self::body::detect;
#[cfg(feature = "schema")]
pub(crate) use self::collect::check_deferred;
pub(crate) use self::collect::Tools;
pub use self::logged::Logged;
pub use self::repeated::{RequestReader, RequestSeed};
pub use self::request::parse_request;
pub(crate) use self::request::{read_request_with, PreRead};
pub use self::response::parse_response;
pub use self::stream::Framing;
pub use self::tools_file::parse_tools;
pub(crate) use self::tools_file::read_tools;
pub use self::watch::StreamWatch;
pub(crate) use self::wire::Members;

macro_rules! declare_modules {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, $name:literal, [$($alias:literal),*]; )*) => {
        $( pub(crate) mod $module; )*
    };
}
// One module per format, from the registry in `format.rs`.
crate::format::formats!(declare_modules);
