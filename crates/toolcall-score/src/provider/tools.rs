//! Tools arrays in any provider's shape, each item told by its own shape, into [`Tool`]s: what
//! a request's `tools` (or a tools file, or a `tools/list` result) defines.

use serde_json::Value;

use super::collect::Tools;
use super::read::{
    array, get, get_any, object, opt_array, opt_string, string, At, Evidence, Object,
};
use super::{bedrock, gemini, openai_chat, openai_responses};
use crate::errors::ParseError;
use crate::{Format, Tool};

pub(super) fn tools_into(
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

pub(super) fn tool_items(
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
pub(super) fn legacy_functions(
    items: &[Value],
    at: &At<'_>,
    out: &mut Tools,
) -> Result<(), ParseError> {
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
pub(super) fn tool_fields(
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
pub(super) fn named_tool(tool: &Object, at: &At<'_>) -> Result<Tool, ParseError> {
    Ok(Tool::new(
        string(tool, "name", at, "a tool name (a string)")?,
        opt_string(tool, "description", at)?.unwrap_or_default(),
    ))
}
