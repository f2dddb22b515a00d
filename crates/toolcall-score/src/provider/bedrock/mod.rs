//! Amazon Bedrock Converse: `output.message.content[]` blocks keyed by kind (`text`, `toolUse`,
//! `toolResult`) rather than tagged with a `type`, and `toolConfig.tools[].toolSpec`.
//!
//! A `stopReason` of `malformed_tool_use` (the model produced a tool call Bedrock could not parse)
//! becomes an [`AnomalyKind::MalformedCall`]. A `toolResult` with `status: "error"` is an error
//! result; its `json` content is kept as JSON text.
//!
//! A `toolUse` typed `server_tool_use` is not a call: it is a system tool (`toolConfig.tools[]
//! .systemTool`, such as Nova's `nova_code_interpreter`) that Bedrock ran itself, as Anthropic's
//! `server_tool_use` blocks are. System tools are kept in the catalog by name, with no schema.

mod stream;

use serde_json::Value;

use super::read::{required_object, array, get, object, opt_id, opt_string, push_text, required, string};
use super::read::{At, Evidence, Object};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, Part, Read, Reading, RequestHalf, StopReasons, Stream, ToolItems, Wire, object_of};
use crate::errors::ParseError;
use crate::ToolResult;
use crate::{Anomaly, AnomalyKind, Arguments, Format, Message, Response, ToolCall};

/// Bedrock Converse, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["system"], part: Part::System, read: Read::Own(super::anthropic::system) }, Member { keys: &["toolConfig"], part: Part::Tools, read: Read::Own(tool_config_member) }, Member { keys: &["messages"], part: Part::Transcript, read: Read::Messages }],
        tool: Some(tool_item),
        native_schema: None,
    },
    shape: "`output.message`",
    fits,
    top_keys: &["output", "stopReason"],
    read: response,
    stream: Some(Stream {
        events: "Bedrock ConverseStream events (`messageStart`, `contentBlockDelta`, …)",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: None,
    answers,
    pairs_by_id: true,
    stop_reasons: StopReasons {
        calls: Some("tool_use"),
        text: Some("end_turn"),
    },
    conversation: Some(Conversation {
        transcript: &["messages"],
        carried: &["system"],
        tools_key: "toolConfig",
        tools: tool_config,
        turn: |items, i| super::conversation::message_turn(items, i, &["assistant"]),
        // Converse bodies carry no id or model name (the model is the request's `modelId`).
        respond: |turn, _| {
            serde_json::json!({
                "output": {"message": turn.first()},
                "stopReason": "tool_use",
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A `toolConfig`: a tools array becomes `{"tools": [...]}`, each bare definition a
/// `{"toolSpec": {name, description, inputSchema: {json}}}`; a logged `toolConfig` keeps its
/// other members (`toolChoice`).
fn tool_config(tools: &Value) -> Value {
    let specs = |tools: &Value| {
        super::conversation::wrap_bare(tools, |tool| {
            let mut spec = super::conversation::with_schema(tool, "inputSchema");
            if let Some(schema) = spec.remove("inputSchema") {
                spec.insert("inputSchema".into(), serde_json::json!({ "json": schema }));
            }
            serde_json::json!({ "toolSpec": spec })
        })
    };
    match tools {
        Value::Object(config) => {
            let mut config = config.clone();
            if let Some(inner) = config.get_mut("tools") {
                *inner = specs(inner);
            }
            Value::Object(config)
        }
        other => serde_json::json!({ "tools": specs(other) }),
    }
}

/// An `output` object, or a `stopReason`.
fn fits(body: &dyn Members) -> bool {
    body.is_object("output") || body.has("stopReason")
}

/// One user message of `{"toolResult":{"toolUseId":…,"content":[{"text":…}|{"json":…}],
/// "status":"error"}}` blocks.
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    let blocks = answers.iter().map(|answer| {
        let content = match answer.output {
            Ok(value @ Value::Object(_)) => serde_json::json!({ "json": value }),
            _ => serde_json::json!({ "text": answer.text }),
        };
        serde_json::json!({
            "toolResult": object_of([
                ("toolUseId", answer.id_value()),
                ("content", Some(serde_json::json!([content]))),
                ("status", answer.is_error().then(|| "error".into())),
            ])
        })
    });
    vec![serde_json::json!({"role": "user", "content": blocks.collect::<Vec<_>>()})]
}

/// A Converse response: `{"output": {"message": {"role", "content": [...]}}, "stopReason"}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a Converse response object")?;
    let output_at = at.key("output");
    let output = required_object(body, "output", &at, "an `output` object")?;
    let message_at = output_at.key("message");
    let message = required_object(output, "message", &output_at, "a message object")?;
    let content_at = message_at.key("content");
    let content = array(
        required(
            message,
            "content",
            &message_at,
            "an array of content blocks",
        )?,
        &content_at,
        "an array of content blocks",
    )?;
    let mut response = Response::empty(Format::Bedrock);
    for (i, block) in content.iter().enumerate() {
        let at = content_at.index(i);
        let block = object(block, &at, "a content block")?;
        if let Some(text) = opt_string(block, "text", &at)? {
            push_text(&mut response.text, text);
        }
        if let Some(tool_use) = get(block, "toolUse") {
            let use_at = at.key("toolUse");
            let tool_use = object(tool_use, &use_at, "a toolUse object")?;
            if !ran_by_bedrock(tool_use, &use_at)? {
                response.calls.push(tool_use_call(tool_use, &use_at)?);
            }
        }
    }
    let reason = opt_string(body, "stopReason", &at)?;
    if reason == Some("malformed_tool_use") {
        response.anomalies.push(Anomaly {
            kind: AnomalyKind::MalformedCall,
            detail: "Bedrock stopReason malformed_tool_use: the model produced a tool call that \
                     could not be parsed"
                .to_owned(),
        });
    }
    response.stop_reason = reason.map(str::to_owned);
    Ok(response)
}

/// Whether a `toolUse` is a system tool's, run by Bedrock itself (`"type": "server_tool_use"`);
/// a client tool's `toolUse` has no `type`.
fn ran_by_bedrock(tool_use: &Object, at: &At<'_>) -> Result<bool, ParseError> {
    Ok(opt_string(tool_use, "type", at)? == Some("server_tool_use"))
}

/// `{"toolUseId": "tooluse_…", "name": …, "input": {...}}`.
fn tool_use_call(tool_use: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    Ok(ToolCall {
        id: opt_id(tool_use, "toolUseId", at)?,
        name: string(tool_use, "name", at, "a tool name (a string)")?.to_owned(),
        namespace: None,
        arguments: Arguments::Parsed(
            required(tool_use, "input", at, "the call's `input`")?.clone(),
        ),
        builtin: None,
    })
}

/// `{"toolUseId": …, "content": [{"text"} | {"json"} | …], "status"?: "success" | "error"}`.
fn tool_result(result: &Object, at: &At<'_>) -> Result<ToolResult, ParseError> {
    let mut parts = Vec::new();
    let content_at = at.key("content");
    for (i, block) in super::read::opt_array(result, "content", at, "an array of content blocks")?
        .iter()
        .enumerate()
    {
        let at = content_at.index(i);
        let block = object(block, &at, "a content block")?;
        if let Some(text) = opt_string(block, "text", &at)? {
            parts.push(text.to_owned());
        } else if let Some(json) = get(block, "json") {
            parts.push(json.to_string());
        }
    }
    Ok(ToolResult {
        call_id: opt_id(result, "toolUseId", at)?,
        name: None,
        is_error: opt_string(result, "status", at)? == Some("error"),
        content: parts.join("\n"),
    })
}

/// One untyped content block of a request message (`{"text"}`, `{"toolUse"}`, `{"toolResult"}`;
/// images, documents and reasoning carry nothing to score), added to `message`.
pub(super) fn block_into(
    block: &Object,
    at: &At<'_>,
    message: &mut Message,
    evidence: &mut Evidence,
) -> Result<(), ParseError> {
    evidence.saw(&[Format::Bedrock]);
    if let Some(text) = opt_string(block, "text", at)? {
        push_text(&mut message.text, text);
    }
    if let Some(tool_use) = get(block, "toolUse") {
        let use_at = at.key("toolUse");
        let tool_use = object(tool_use, &use_at, "a toolUse object")?;
        if !ran_by_bedrock(tool_use, &use_at)? {
            message.calls.push(tool_use_call(tool_use, &use_at)?);
        }
    }
    if let Some(result) = get(block, "toolResult") {
        let result_at = at.key("toolResult");
        let result = tool_result(
            object(result, &result_at, "a toolResult object")?,
            &result_at,
        )?;
        message.results.push(result);
    }
    Ok(())
}

/// A `toolSpec`: `{"name", "description", "inputSchema": {"json": {...}}}`.
pub(super) fn tool_spec(
    spec: &Value,
    at: &At<'_>,
    out: &mut super::collect::Tools,
) -> Result<(), ParseError> {
    let spec = object(spec, at, "a toolSpec object")?;
    let tool = super::collect::named_tool(spec, at)?;
    let schema_at = at.key("inputSchema");
    let json = match get(spec, "inputSchema") {
        Some(schema) => get(
            object(schema, &schema_at, "an `inputSchema` object with `json`")?,
            "json",
        ),
        None => None,
    };
    out.push(tool, json.map(|json| (json, schema_at.key("json"))));
    Ok(())
}

/// A `systemTool`: `{"name": "nova_grounding"}`, a tool Bedrock provides and runs; kept by name.
pub(super) fn system_tool(
    tool: &Value,
    at: &At<'_>,
    out: &mut super::collect::Tools,
) -> Result<(), ParseError> {
    let tool = object(tool, at, "a systemTool object")?;
    out.push(super::collect::named_tool(tool, at)?, None);
    Ok(())
}

/// A tools-array item of Bedrock's shape: `{toolSpec}`, `{systemTool}` or a `{cachePoint}`
/// (which defines nothing).
pub(super) fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    let read = if let Some(spec) = get(tool, "toolSpec") {
        tool_spec(spec, &at.key("toolSpec"), items.out)
    } else if let Some(system) = get(tool, "systemTool") {
        system_tool(system, &at.key("systemTool"), items.out)
    } else if tool.contains_key("cachePoint") {
        Ok(())
    } else {
        return None;
    };
    items.evidence.saw(&[Format::Bedrock]);
    Some(read)
}

/// `toolConfig`: Bedrock's holds the tools (Gemini's holds only `functionCallingConfig`).
fn tool_config_member(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    let config = object(value, at, "a `toolConfig` object")?;
    if let Some(tools) = get(config, "tools") {
        reading.evidence.saw(&[Format::Bedrock]);
        let tools_at = at.key("tools");
        let items = array(tools, &tools_at, "an array of tools")?;
        reading.tool_items(items, &tools_at)?;
    }
    Ok(())
}
