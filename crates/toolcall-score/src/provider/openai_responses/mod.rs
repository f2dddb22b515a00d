//! OpenAI Responses API: `output` items of type `function_call`, `custom_tool_call`, the
//! built-in tools' call items the caller runs, and `message`; and the request's `input` (a
//! string, or items including those calls and their outputs).
//!
//! A call's id is its `call_id` (what the output item must echo), not the item `id` (`fc_…`,
//! `ctc_…`). `namespace`, set when the tool came from a namespace tool group, is kept. A
//! `custom_tool_call` (GPT-5's free-text tools) is read in order with the function calls, its
//! `input` as [`Arguments::Text`]: its name is checked like any other, its input is not JSON and
//! is not checked as JSON.
//!
//! Some built-in tools are not run by OpenAI but handed to the caller's loop, exactly like a
//! function call, so they are read as calls (with [`ToolCall::builtin`] set): a model that was not
//! given `shell` but emits a `shell_call` is the plumbing bug scoring exists to catch. Each is
//! named after its tool (see [`Builtin::name`]), its arguments are the item's `action` (or
//! `operation`), as the OpenAI SDK types (`openai-python`, `src/openai/types/responses/`) define
//! them:
//!
//! | item | tool `type` | arguments | answered by (id key) |
//! |---|---|---|---|
//! | `computer_call` | `computer_use_preview`, `computer` | `action`, or `{"actions": […]}` (batched) | `computer_call_output` (`call_id`) |
//! | `local_shell_call` | `local_shell` | `action` (`{"type": "exec", "command": […], …}`) | `local_shell_call_output` (`id` in the SDK types, `call_id` in OpenAI's guide) |
//! | `shell_call` | `shell` | `action` (`{"commands": […], …}`) | `shell_call_output` (`call_id`) |
//! | `apply_patch_call` | `apply_patch` | `operation` (`{"type": "update_file", "path", "diff"}`, …) | `apply_patch_call_output` (`call_id`) |
//!
//! Items run by OpenAI itself (`web_search_call`, `file_search_call`, `mcp_call`,
//! `code_interpreter_call`, …) are skipped; so are `reasoning` items. The stop reason is
//! `incomplete_details.reason` when the response is incomplete, its `status` otherwise.

mod stream;

use serde_json::{json, Value};

use super::conversation;
use super::read::{array, get, json_string_arguments, object, opt_id, opt_object, opt_string};
use super::read::{push_text, required, string, At, Object};
use super::wire::{Answer, Conversation, Member, Members, MembersExt, Part, Read, Reading, RequestHalf, StopReasons, Stream, ToolItems, Wire, object_of};
use crate::errors::ParseError;
use crate::{Arguments, Builtin, Format, Message, Response, Role, ToolCall, ToolResult};

/// The OpenAI Responses API, for the registry.
pub(crate) const WIRE: Wire = Wire {
    request: RequestHalf {
        members: &[Member { keys: &["instructions"], part: Part::System, read: Read::Own(instructions) }, Member { keys: &["tools"], part: Part::Tools, read: Read::Tools }, Member { keys: &["input"], part: Part::Transcript, read: Read::Own(input) }],
        tool: Some(tool_item),
        native_schema: None,
    },
    shape: "an `output` array",
    fits,
    top_keys: &["object", "output", "incomplete_details", "status"],
    read: response,
    stream: Some(Stream {
        events: "OpenAI Responses `response.*` events",
        is_event: stream::is_event,
        like_a_body: |_| false,
        assemble: stream::assemble,
    }),
    live: None,
    answers,
    pairs_by_id: true,
    stop_reasons: StopReasons {
        calls: Some("completed"),
        text: Some("completed"),
    },
    conversation: Some(Conversation {
        transcript: &["input"],
        carried: &["instructions"],
        tools_key: "tools",
        // Flat: `{"type": "function", "name", "description", "parameters"}`.
        tools: |tools| {
            conversation::wrap_bare(tools, |tool| {
                let mut tool = conversation::with_schema(tool, "parameters");
                tool.insert("type".into(), "function".into());
                Value::Object(tool)
            })
        },
        turn,
        respond: |turn, meta| {
            json!({
                "id": meta.id,
                "object": "response",
                "status": "completed",
                "model": meta.model,
                "output": turn,
            })
        },
    }),
    example: crate::Example {
        request: include_str!("example-request.json"),
        response: include_str!("example-response.json"),
    },
};

/// A turn is the run of consecutive items the model produced, from `i` on when `i` starts one:
/// what one response's `output` held (a message, reasoning, parallel calls) before the caller
/// answered.
fn turn(items: &[Value], i: usize) -> Option<usize> {
    if !produced(items.get(i)?)
        || i.checked_sub(1)
            .and_then(|p| items.get(p))
            .is_some_and(produced)
    {
        return None;
    }
    let run = items[i..].iter().take_while(|item| produced(item)).count();
    Some(i + run)
}

/// Whether an input item is one the model produced: an assistant message, or any typed item
/// but what the caller sends (`*_output` and `*_response` items, tools added mid-conversation,
/// references to stored items). Output items the caller never sees run (hosted tools'
/// `web_search_call`, …) are the model's too.
fn produced(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        None | Some("message") => item.get("role").and_then(Value::as_str) == Some("assistant"),
        Some("additional_tools" | "item_reference") => false,
        Some(kind) => !(kind.ends_with("_output") || kind.ends_with("_response")),
    }
}

/// `{"object": "response", …}`, or an `output` array.
fn fits(body: &dyn Members) -> bool {
    body.str_of("object") == Some("response") || body.is_array("output")
}

/// One input item for each: `{"type":"function_call_output","call_id":…,"output":…}`
/// (`custom_tool_call_output` for a custom tool call), with no error flag; a built-in tool's
/// call takes its own output item (see [`builtin_answer`]).
fn answers(answers: &[Answer<'_>]) -> Vec<Value> {
    answers.iter().map(answer).collect()
}

fn answer(answer: &Answer<'_>) -> Value {
    if let Some(item) = answer.builtin.and_then(|b| builtin_answer(answer, b)) {
        return item;
    }
    let kind = if answer.custom {
        "custom_tool_call_output"
    } else {
        "function_call_output"
    };
    object_of([
        ("type", Some(kind.into())),
        ("call_id", answer.id_value()),
        ("output", Some(answer.text.into())),
    ])
}

/// The output item of a built-in tool's call, in the shape of the OpenAI SDK types
/// (`openai-python`, `types/responses/response_input_item_param.py`); `None` when the answer
/// cannot take that shape.
///
/// - `local_shell_call_output`: `call_id`, `output` text. The SDK types key it by `id`; OpenAI's
///   local shell guide and the clients that run it send `call_id`, which is what is sent here.
/// - `shell_call_output`: `call_id`, `output` as chunks of `{stdout, stderr, outcome}`. An output
///   that is already such chunks is sent as is; other output is one chunk on stdout with exit
///   code 0, an error one chunk on stderr with exit code 1.
/// - `apply_patch_call_output`: `call_id`, `status` (`completed`, `failed` for an error),
///   `output` text.
/// - `computer_call_output`: `call_id`, `output` a screenshot (`{"type": "computer_screenshot",
///   "image_url" | "file_id"}`), which must be the output given, as an object. A screenshot has
///   no room for text, so a text answer (an error included) is `None`: it goes as a
///   `function_call_output` on the same `call_id` rather than be dropped.
fn builtin_answer(answer: &Answer<'_>, builtin: Builtin) -> Option<Value> {
    let text = || Some(Value::from(answer.text));
    let kind = || Some(Value::from(format!("{}_output", builtin.call_item())));
    Some(match builtin {
        Builtin::LocalShell => object_of([
            ("type", kind()),
            ("call_id", answer.id_value()),
            ("output", text()),
        ]),
        Builtin::Shell => {
            let chunks = match answer.output {
                Ok(Value::Array(chunks)) if chunks.iter().all(|c| c.get("outcome").is_some()) => {
                    Value::Array(chunks.clone())
                }
                Ok(_) => json!([{"stdout": answer.text, "stderr": "",
                                 "outcome": {"type": "exit", "exit_code": 0}}]),
                Err(_) => json!([{"stdout": "", "stderr": answer.text,
                                  "outcome": {"type": "exit", "exit_code": 1}}]),
            };
            object_of([
                ("type", kind()),
                ("call_id", answer.id_value()),
                ("output", Some(chunks)),
            ])
        }
        Builtin::ApplyPatch => {
            let status = if answer.is_error() {
                "failed"
            } else {
                "completed"
            };
            object_of([
                ("type", kind()),
                ("call_id", answer.id_value()),
                ("status", Some(status.into())),
                ("output", text()),
            ])
        }
        Builtin::Computer => match answer.output {
            Ok(screenshot @ Value::Object(_)) => object_of([
                ("type", kind()),
                ("call_id", answer.id_value()),
                ("output", Some(screenshot.clone())),
            ]),
            _ => return None,
        },
    })
}

/// A response body: `{"object": "response", "output": [...], "status": ...}`.
pub(super) fn response(value: &Value) -> Result<Response, ParseError> {
    let at = At::ROOT;
    let body = object(value, &at, "a Responses API response object")?;
    let output_at = at.key("output");
    let output = array(
        required(body, "output", &at, "an array of output items")?,
        &output_at,
        "an array of output items",
    )?;
    let mut response = Response::empty(Format::OpenaiResponses);
    for (i, item) in output.iter().enumerate() {
        let at = output_at.index(i);
        let item = object(item, &at, "an output item")?;
        match string(item, "type", &at, "an output item type")? {
            "function_call" => response.calls.push(function_call(item, &at)?),
            "custom_tool_call" => response.calls.push(custom_tool_call(item, &at)?),
            "message" => content_into(item, &at, &mut response.text)?,
            kind => {
                if let Some(builtin) = call_builtin(kind) {
                    let call = builtin_call(item, &at, builtin)?;
                    if !answered_in(output, &call) {
                        response.calls.push(call);
                    }
                }
            }
        }
    }
    let incomplete = opt_object(body, "incomplete_details", &at, "an object")?;
    let reason = match incomplete {
        Some(details) => opt_string(details, "reason", &at.key("incomplete_details"))?,
        None => None,
    };
    response.stop_reason = match reason {
        Some(reason) => Some(reason.to_owned()),
        None => opt_string(body, "status", &at)?.map(str::to_owned),
    };
    Ok(response)
}

/// A `function_call` item: `{"type": "function_call", "id": "fc_…", "call_id": "call_…",
/// "name": …, "arguments": "{…}", "namespace"?: …}`.
pub(super) fn function_call(item: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(item, "name", at, "a function name (a string)")?;
    // No `arguments` (or `null`) is a call with no arguments.
    let arguments = match opt_string(item, "arguments", at)? {
        Some(raw) => json_string_arguments(raw),
        None => Arguments::Parsed(Value::Object(Object::new())),
    };
    Ok(ToolCall {
        id: opt_id(item, "call_id", at)?,
        name: name.to_owned(),
        namespace: opt_string(item, "namespace", at)?.map(str::to_owned),
        arguments,
        builtin: None,
    })
}

/// A `custom_tool_call` item: `{"type": "custom_tool_call", "id": "ctc_…", "call_id": "call_…",
/// "name": …, "input": "free text", "namespace"?: …}`. The input is kept as the text it is.
pub(super) fn custom_tool_call(item: &Object, at: &At<'_>) -> Result<ToolCall, ParseError> {
    let name = string(item, "name", at, "a custom tool name (a string)")?;
    let input = string(item, "input", at, "the call's `input` (a string)")?;
    Ok(ToolCall {
        id: opt_id(item, "call_id", at)?,
        name: name.to_owned(),
        namespace: opt_string(item, "namespace", at)?.map(str::to_owned),
        arguments: Arguments::Text {
            text: input.to_owned(),
        },
        builtin: None,
    })
}

/// The built-in tool whose call items have type `kind`, if it is one the caller runs.
/// Whether a built-in tool's call is answered in the same output: its `*_output` item, with its
/// `call_id`, is there too. Then OpenAI ran the tool itself (the hosted shell in a container,
/// say) and the call never reaches the caller's loop, as Anthropic's `server_tool_use` does not.
fn answered_in(output: &[Value], call: &ToolCall) -> bool {
    let (Some(builtin), Some(id)) = (call.builtin, call.id.as_deref()) else {
        return false;
    };
    output.iter().any(|item| {
        item.get("type")
            .and_then(Value::as_str)
            .and_then(output_builtin)
            == Some(builtin)
            && item.get("call_id").and_then(Value::as_str) == Some(id)
    })
}

fn call_builtin(kind: &str) -> Option<Builtin> {
    Builtin::ALL.into_iter().find(|b| b.call_item() == kind)
}

/// The built-in tool whose output items have type `kind`.
fn output_builtin(kind: &str) -> Option<Builtin> {
    kind.strip_suffix("_output").and_then(call_builtin)
}

/// The built-in tool a request's tool of type `kind` declares, if it is one the caller runs.
pub(super) fn declared_builtin(kind: &str) -> Option<Builtin> {
    match kind {
        "computer_use_preview" | "computer" => Some(Builtin::Computer),
        "local_shell" => Some(Builtin::LocalShell),
        "shell" => Some(Builtin::Shell),
        "apply_patch" => Some(Builtin::ApplyPatch),
        _ => None,
    }
}

/// A built-in tool's call item: `{"type": "shell_call", "id": "…", "call_id": "call_…",
/// "action": {…}, "status": …}` (`operation` for `apply_patch_call`). The action is the call's
/// arguments, whatever its type (one that is not an object is a finding, not a parse error). A
/// `computer_call` carries one `action`, or (with the generally available `computer` tool) a
/// batch under `actions`, read as `{"actions": […]}`.
fn builtin_call(item: &Object, at: &At<'_>, builtin: Builtin) -> Result<ToolCall, ParseError> {
    let arguments = match builtin {
        Builtin::Computer => match (get(item, "action"), get(item, "actions")) {
            (Some(action), _) => action.clone(),
            (None, Some(actions)) => json!({ "actions": actions }),
            (None, None) => {
                return Err(at
                    .key("action")
                    .missing("the call's `action` (or `actions`)"))
            }
        },
        Builtin::ApplyPatch => required(item, "operation", at, "the call's `operation`")?.clone(),
        _ => required(item, "action", at, "the call's `action`")?.clone(),
    };
    let id = opt_id(item, "call_id", at)?;
    Ok(ToolCall::builtin(id.as_deref(), builtin, arguments))
}

/// A message item's `content`: a string or an array of parts (`output_text`, `input_text`,
/// `text`, `refusal`); other parts (images, files) carry no text.
fn content_into(item: &Object, at: &At<'_>, out: &mut Vec<String>) -> Result<(), ParseError> {
    super::read::content_text_into(item, at, &["output_text", "input_text", "text"], out)
}

/// The request's `input`: a string (one user message) or an array of items. System and
/// developer messages also add to `system`.
fn input(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    reading.evidence.saw(&[Format::OpenaiResponses]);
    let items = match value {
        Value::String(s) => {
            let mut message = Message::new(Role::User);
            push_text(&mut message.text, s);
            reading.transcript.messages.push(message);
            return Ok(());
        }
        Value::Array(items) => items,
        other => return Err(at.unexpected("a string or an array of input items", other)),
    };
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let item = object(item, &at, "an input item")?;
        match opt_string(item, "type", &at)? {
            None | Some("message") => {
                let role = super::read::role(item, &at)?;
                let mut message = Message::new(role);
                content_into(item, &at, &mut message.text)?;
                if role == Role::System {
                    reading.system.extend(message.text.iter().cloned());
                }
                reading.transcript.messages.push(message);
            }
            Some("function_call") => push_call(&mut reading.transcript.messages, function_call(item, &at)?),
            Some("custom_tool_call") => push_call(&mut reading.transcript.messages, custom_tool_call(item, &at)?),
            // A custom tool's output has the shape of a function's.
            Some("function_call_output" | "custom_tool_call_output") => {
                push_result(&mut reading.transcript.messages, function_call_output(item, &at)?)
            }
            // Tools added mid-conversation: Codex sends its whole catalog as an
            // `additional_tools` item (with an empty top-level `tools`), and a client-run tool
            // search answers with the tools it loaded. Both are defined for the calls after them.
            Some("additional_tools" | "tool_search_output") => {
                let tools_at = at.key("tools");
                let items = super::read::opt_array(item, "tools", &at, "an array of tools")?;
                reading.tool_items(items, &tools_at)?;
            }
            Some(kind) => {
                if let Some(builtin) = call_builtin(kind) {
                    push_call(&mut reading.transcript.messages, builtin_call(item, &at, builtin)?);
                } else if let Some(builtin) = output_builtin(kind) {
                    push_result(&mut reading.transcript.messages, builtin_output(item, &at, builtin)?);
                }
            }
        }
    }
    Ok(())
}

/// Adds a call to the transcript. Parallel calls are consecutive items: they stay in one
/// assistant turn.
fn push_call(messages: &mut Vec<Message>, call: ToolCall) {
    match messages.last_mut() {
        Some(last) if last.role == Role::Assistant && last.results.is_empty() => {
            last.calls.push(call)
        }
        _ => {
            let mut message = Message::new(Role::Assistant);
            message.calls.push(call);
            messages.push(message);
        }
    }
}

/// Adds a call's output to the transcript, consecutive outputs in one tool message.
fn push_result(messages: &mut Vec<Message>, result: ToolResult) {
    match messages.last_mut() {
        Some(last) if last.role == Role::Tool => last.results.push(result),
        _ => {
            let mut message = Message::new(Role::Tool);
            message.results.push(result);
            messages.push(message);
        }
    }
}

/// `{"type": "function_call_output" | "custom_tool_call_output", "call_id": …, "output": "…"}`;
/// the output may also be an array of content parts.
fn function_call_output(item: &Object, at: &At<'_>) -> Result<ToolResult, ParseError> {
    let content = output_text(item, at, "a content part", &["text"])?;
    Ok(ToolResult {
        call_id: opt_id(item, "call_id", at)?,
        name: None,
        is_error: false,
        content,
    })
}

/// A built-in tool's output item, keyed by the call's `call_id` like a function's output; a local
/// shell's is keyed by `id` in the SDK types but by `call_id` in OpenAI's local shell guide, so
/// `id` is read when `call_id` is absent. Its output is a string (local shell, apply patch), a
/// screenshot object (computer, kept as its JSON text) or chunks of `{stdout, stderr, outcome}`
/// (shell, joined); an `apply_patch_call_output` with `status: "failed"` is an error.
fn builtin_output(item: &Object, at: &At<'_>, builtin: Builtin) -> Result<ToolResult, ParseError> {
    let call_id = match (builtin, opt_id(item, "call_id", at)?) {
        (Builtin::LocalShell, None) => opt_id(item, "id", at)?,
        (_, call_id) => call_id,
    };
    let content = output_text(item, at, "an output chunk", &["stdout", "stderr", "text"])?;
    let is_error =
        builtin == Builtin::ApplyPatch && opt_string(item, "status", at)? == Some("failed");
    Ok(ToolResult {
        call_id,
        name: None,
        is_error,
        content,
    })
}

/// An output item's `output` as text: a string as it is; an array of `part`s (objects), their
/// `keys`' strings joined by lines; any other value as its JSON text; none, empty.
fn output_text(
    item: &Object,
    at: &At<'_>,
    part: &str,
    keys: &[&str],
) -> Result<String, ParseError> {
    Ok(match get(item, "output") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let mut texts = Vec::new();
            let output_at = at.key("output");
            for (i, item) in items.iter().enumerate() {
                let at = output_at.index(i);
                let item = object(item, &at, part)?;
                for key in keys {
                    if let Some(text) = opt_string(item, key, &at)? {
                        push_text(&mut texts, text);
                    }
                }
            }
            texts.join("\n")
        }
        Some(other) => other.to_string(),
    })
}

/// A flat function tool `{"type": "function", "name", "description", "parameters"}`.
pub(super) fn tool(item: &Object, at: &At<'_>, out: &mut super::collect::Tools) -> Result<(), ParseError> {
    super::collect::tool_fields(item, at, &["parameters"], out)
}

/// A tools-array item of the Responses API's shape: a flat `{type: "function", name, …}`, a
/// `namespace` group of tools (top level only), or a built-in the caller's loop runs
/// (`{"type": "shell"}`, …), named after its calls.
pub(super) fn tool_item(
    tool: &Object,
    at: &At<'_>,
    items: &mut ToolItems<'_>,
) -> Option<Result<(), ParseError>> {
    let kind = tool.get("type").and_then(Value::as_str)?;
    let read = match kind {
        "function" if get(tool, "function").is_none() => self::tool(tool, at, items.out),
        "namespace" if items.top => {
            let tools_at = at.key("tools");
            match super::read::opt_array(tool, "tools", at, "an array of tools") {
                Ok(inner) => {
                    let mut nested = ToolItems {
                        out: &mut *items.out,
                        evidence: &mut *items.evidence,
                        top: false,
                        each: items.each,
                    };
                    nested.read(inner, &tools_at)
                }
                Err(e) => Err(e),
            }
        }
        _ => {
            let builtin = declared_builtin(kind)?;
            items.out.push(crate::Tool::new(builtin.name(), ""), None);
            Ok(())
        }
    };
    items.evidence.saw(&[Format::OpenaiResponses]);
    Some(read)
}

/// `instructions`: the system prompt, a string.
fn instructions(value: &Value, at: &At<'_>, reading: &mut Reading<'_>) -> Result<(), ParseError> {
    match value {
        Value::String(s) => {
            reading.evidence.saw(&[Format::OpenaiResponses]);
            push_text(&mut reading.system, s);
            Ok(())
        }
        other => Err(at.unexpected("a string", other)),
    }
}

