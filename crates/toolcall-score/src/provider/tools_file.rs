//! A tools file or value: a tools array in any provider's shape, or a whole request whose tools
//! are taken as the request reader reads them, into [`Tool`]s or a [`Catalog`].

use serde_json::Value;

use super::collect::Tools;
use super::read::{At, Evidence};
use super::request::{is_request_key, read_request};
use super::tools::tools_into;
use crate::errors::ParseError;
use crate::{Catalog, Tool};

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
/// or a whole request body, whose tools are read as [`crate::provider::parse_request`] reads them. Non-function
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
        let is_request = body.keys().any(|key| key != "tools" && is_request_key(key));
        if is_request {
            return read_request(value, None, tools).map(drop);
        }
    }
    tools_into(value, &At::ROOT, tools, &mut Evidence::default())
}

impl Catalog {
    /// Reads a tools array in any supported format (Anthropic, OpenAI Chat or Responses, Gemini
    /// `functionDeclarations`, Bedrock `toolSpec`, MCP `tools/list` output); see
    /// [`parse_tools`].
    pub fn from_json(value: &Value) -> Result<Catalog, ParseError> {
        parse_tools(value).map(Catalog::new)
    }

    /// Reads a tools file (a tools array in any supported format). Errors name the file, line
    /// and column; with the `schema` feature, an input schema that does not compile is one.
    pub fn load(path: &std::path::Path) -> Result<Catalog, crate::InputError> {
        let text = crate::input::read_text(path)?;
        let value = crate::input::parse_json(Some(path), &text)?;
        let invalid = |e| crate::InputError::invalid(Some(path), &text, e);
        // The document is dropped after reading: its schemas are moved out, not cloned.
        let tools = parse_owned_tools(value).map_err(invalid)?;
        // A schema that does not compile is the file's fault, not a call's: said here, with
        // its place, rather than as a finding against every call to the tool.
        #[cfg(feature = "schema")]
        check_loaded(&tools, &text).map_err(invalid)?;
        Ok(Catalog::new(tools))
    }
}

#[cfg(feature = "schema")]
/// `check_deferred` for tools already moved out of the document read from `text`: the
/// schema's place is found by reading `text` again, only when one does not compile.
pub(crate) fn check_loaded(tools: &[Tool], text: &str) -> Result<(), ParseError> {
    for (index, tool) in tools.iter().enumerate() {
        let Some(schema) = &tool.input_schema else {
            continue;
        };
        if let Err(why) = crate::schema::compile(schema, tool.schema_dialect) {
            let pointer = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|document| {
                    let mut again = Tools::deferring();
                    read_tools(&document, &mut again).ok()?;
                    let found = again.deferred().find(|(i, _, _)| *i == index);
                    found.map(|(_, _, pointer)| pointer.to_owned())
                })
                .unwrap_or_default();
            return Err(ParseError::Schema {
                pointer,
                tool: tool.name.clone(),
                why,
            });
        }
    }
    Ok(())
}
