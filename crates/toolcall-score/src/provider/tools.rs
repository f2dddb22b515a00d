//! Tools arrays in any provider's shape, each item told by its own shape, into [`Tool`]s: what
//! a request's `tools` (or a tools file, or a `tools/list` result) defines.
//!
//! Each format's module reads the items of its own shape (its `RequestHalf::tool`); this layer
//! asks every format in registry order and reads what none claims as a bare definition (MCP's
//! `{name, description, inputSchema}`, a tool named but not a function, which a model can still
//! call by that name).

use serde_json::Value;

use super::collect::{tool_fields, Tools};
use super::read::{array, get, get_any, object, opt_string, At, Evidence};
use super::wire::ToolItems;
use crate::errors::ParseError;
use crate::Format;

pub(super) fn tools_into(
    value: &Value,
    at: &At<'_>,
    out: &mut Tools,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    const EXPECTED: &str = "a tools array, or an object with `tools` (an MCP `tools/list` \
                            result, a Bedrock `toolConfig`)";
    let mut items = ToolItems {
        out,
        evidence,
        top: true,
        each: tool_items,
    };
    match value {
        Value::Array(list) => tool_items(list, at, &mut items),
        Value::Object(body) => {
            if let Some(tools) = get(body, "tools") {
                let at = at.key("tools");
                return tool_items(array(tools, &at, "an array of tools")?, &at, &mut items);
            }
            if let Some(tools) = body
                .get("result")
                .and_then(|r| get(r.as_object()?, "tools"))
            {
                let result_at = at.key("result");
                let at = result_at.key("tools");
                return tool_items(array(tools, &at, "an array of tools")?, &at, &mut items);
            }
            if get_any(body, &["functionDeclarations", "function_declarations"]).is_some() {
                return tool_item(value, at, &mut items);
            }
            Err(at.unexpected(EXPECTED, value))
        }
        other => Err(at.unexpected(EXPECTED, other)),
    }
}

/// The items of a tools array, each by its own shape (the shared [`super::wire::ItemsReader`]).
pub(super) fn tool_items(
    list: &[Value],
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Result<(), ParseError> {
    items.out.reserve(list.len());
    for (i, item) in list.iter().enumerate() {
        tool_item(item, &at.index(i), items)?;
    }
    Ok(())
}

/// One item of a tools array: the first format that claims its shape reads it, else it is a
/// bare definition.
fn tool_item(item: &Value, at: &At<'_>, items: &mut ToolItems<'_>) -> Result<(), ParseError> {
    let tool = object(item, at, "a tool definition object")?;
    // A `type` that is not a string is wrong whichever format the item is.
    let typed = opt_string(tool, "type", at)?.is_some();
    for format in Format::ALL {
        if let Some(claimed) = format
            .wire()
            .request
            .tool
            .and_then(|claim| claim(tool, at, items))
        {
            return claimed;
        }
    }
    match (typed, tool.contains_key("name")) {
        // A non-function tool: kept when it has a name the model can call it by.
        (true, true) => tool_fields(tool, at, &["input_schema", "parameters"], items.out),
        (true, false) => Ok(()),
        (false, true) => tool_fields(
            tool,
            at,
            &[
                "input_schema",
                "inputSchema",
                "parameters",
                "parametersJsonSchema",
            ],
            items.out,
        ),
        (false, false) => Err(at.unexpected(
            "a tool definition: {name, description, input_schema | inputSchema | \
             parameters}, {type: \"function\", function: {…}}, {functionDeclarations: […]}, \
             {toolSpec: {…}} or {systemTool: {…}}",
            item,
        )),
    }
}
