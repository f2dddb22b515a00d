//! A plain JSON list of calls, as an MCP replay transcript holds them:
//! `[{"name": …, "input" | "arguments": {...}, "id"?: …}]`.
//!
//! An item may also be a whole JSON-RPC `tools/call` request (`{"method": "tools/call",
//! "params": {"name", "arguments"}, "id"}`); the id is then the request's. Arguments are taken as
//! they are (MCP arguments are an object; a string is the caller's mistake, scored as non-object
//! arguments); absent arguments are `{}`, as MCP allows.

use serde_json::Value;

use super::read::{array, get, object, opt_id, opt_string, string, At, Object};
use super::wire::{Answer, Members, RequestHalf, StopReasons, Wire, object_of};
use crate::errors::ParseError;
use crate::{Arguments, Format, Response, ToolCall};

/// Call lists, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[],
        tool: None,
        native_schema: None,
    },
    shape: "an array of calls",
    fits,
    top_keys: &[],
    read: response,
    stream: None,
    live: None,
    answers,
    pairs_by_id: false,
    stop_reasons: StopReasons {
        calls: None,
        text: None,
    },
    // A call list is what a client sent a server, not a conversation with a model.
    conversation: None,
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// Never an object: a call list is a JSON array, which detection tells apart before any
/// object's shape is asked.
fn fits(_: &dyn Members) -> bool {
    false
}

/// An MCP-style `CallToolResult` for each, with the call's name (and id, when it had one).
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    answers
        .iter()
        .map(|answer| {
            object_of([
                ("name", Some(answer.name.into())),
                ("id", answer.id_value()),
                (
                    "content",
                    Some(serde_json::json!([{ "type": "text", "text": answer.text }])),
                ),
                ("isError", Some(answer.is_error().into())),
            ])
        })
        .collect()
}

/// The list.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let items = array(value, &at, "an array of calls")?;
    let mut response = Response::empty(Format::CallList);
    response.calls.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let item = object(item, &at, "a call object with `name`")?;
        let call = if opt_string(item, "method", &at)? == Some("tools/call") {
            let params_at = at.key("params");
            let params = object(
                get(item, "params").unwrap_or(&Value::Null),
                &params_at,
                "the `tools/call` params object",
            )?;
            let mut call = call(params, &params_at)?;
            call.id = opt_id(item, "id", &at)?;
            call
        } else {
            call(item, &at)?
        };
        response.calls.push(call);
    }
    Ok(response)
}

fn call(item: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(item, "name", at, "a tool name (a string)")?;
    let arguments = match (get(item, "input"), get(item, "arguments")) {
        (Some(_), Some(both)) => {
            return Err(at
                .key("arguments")
                .unexpected("either `input` or `arguments`, not both", both))
        }
        (Some(value), None) | (None, Some(value)) => value.clone(),
        (None, None) => Value::Object(Object::new()),
    };
    Ok(ToolCall {
        id: opt_id(item, "id", at)?,
        name: name.to_owned(),
        namespace: None,
        arguments: Arguments::Parsed(arguments),
        builtin: None,
    })
}
