//! `toolcall mcp serve`: a recording as an MCP server, to test an agent's own MCP client
//! against (its namespacing, its retries, what it does with an unknown tool or an `isError`)
//! without the real server.
//!
//! It declares the recorded catalog (the snapshot the flow names, or the snapshot given), in
//! the order the server listed it, introduces itself as the recorded server did (the
//! handshake's `serverInfo`, `instructions` and `capabilities`, from the flow's `recorded`) and
//! answers each `tools/call`, and each prompts, resources or completion request, with the
//! recorded answer of a request that matches ([`Matching`]: the same params by default, as
//! mcp-recorder's replay does). A name the catalog lacks gets what the server answered it (a
//! recorded call of it, or of another name the catalog lacks, the name put in); arguments are
//! checked against the recorded `inputSchema`. Everything the client did is kept in a [`ServeReport`]: calls matched and
//! unmatched, unknown names with the cause and did-you-mean the scorer gives a model's unknown
//! name, schema violations. rmcp's server speaks both protocol eras (`initialize`, and the
//! stateless `server/discover` of 2026-07-28), on stdio ([`serve`]) or streamable HTTP
//! ([`serve_http`]). Recorded calls are used in order over the server's whole life, whichever
//! HTTP session a call comes in: one client session per serve, as over stdio. A client message
//! over the limit, or a `tools/call` without a string name, is answered before rmcp sees it
//! ([`crate::screen`]), and kept in [`ServeReport::refused`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Serialize;
use serde_json::{json, Value};
use toolcall_mcp::{Flow, Vars};
use toolcall_score::{Case, Catalog, FindingKind, Format, Response, SchemaError, ToolCall};

use crate::errors::ServeError;

/// How a request is matched to a recorded one (`--match`), after mcp-recorder's replay
/// strategies (`method_params`, `sequential`, `strict`), plus [`Matching::Name`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Matching {
    /// The same method and params, `_meta` aside (for a `tools/call`: the same name and
    /// arguments, JSON equality). Recorded answers are used in order, the last one again once
    /// all are used.
    #[default]
    ByParams,
    /// The next recorded request of the same method not yet answered, whatever its params;
    /// none once all are used.
    Sequential,
    /// The same method and params, `_meta` included; each recorded answer is used once.
    Strict,
    /// A `tools/call` by its name alone, whatever the arguments (other requests as
    /// [`Matching::ByParams`]).
    Name,
}

impl Matching {
    /// Whether a recorded answer is used at most once (else the last match answers again).
    fn once(self) -> bool {
        matches!(self, Matching::Sequential | Matching::Strict)
    }

    /// Why nothing recorded answered a request under this mode, for the client to read.
    fn unmatched(self) -> &'static str {
        match self {
            Matching::ByParams => "with these params (--match name answers a call by name alone)",
            Matching::Sequential => {
                "left to answer it (--match sequential answers each recorded one once, in order)"
            }
            Matching::Strict => {
                "unused with these params and _meta (--match strict answers each recorded one once)"
            }
            Matching::Name => "of this name",
        }
    }
}

impl std::str::FromStr for Matching {
    type Err = String;
    fn from_str(s: &str) -> Result<Matching, String> {
        match s {
            // `exact` is what 0.x called by-params.
            "by-params" | "exact" => Ok(Matching::ByParams),
            "sequential" => Ok(Matching::Sequential),
            "strict" => Ok(Matching::Strict),
            "name" => Ok(Matching::Name),
            _ => Err(format!(
                "`{}` is not a way to match: by-params, sequential, strict or name",
                toolcall_score::escape(s)
            )),
        }
    }
}

/// What the recording answers a call with.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Result(Value),
    Error(Value),
    /// A recorded call with no answer (the session ended first).
    Nothing,
}

#[derive(Clone, Debug)]
struct Recorded {
    name: String,
    input: Value,
    answer: Answer,
    /// The `_meta` the client sent with it (`--match strict`).
    meta: Option<Value>,
}

/// A recorded prompts, resources or completion request and its answer.
#[derive(Clone, Debug)]
struct RecordedRequest {
    method: String,
    params: Value,
    answer: Answer,
}

fn answer_of(recorded: Option<&Value>) -> Answer {
    // Written with its `$`s escaped, as everything a recorded session said.
    let unescaped = |v: &Value| toolcall_mcp::unescape_templates(v.clone());
    match recorded {
        Some(r) if r.get("result").is_some() => Answer::Result(unescaped(&r["result"])),
        Some(r) if r.get("error").is_some() => Answer::Error(unescaped(&r["error"])),
        _ => Answer::Nothing,
    }
}

/// A recording loaded for serving: the catalog and the recorded calls.
#[derive(Debug)]
pub struct Recording {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The tools as `tools/list` answers them: in the recorded order.
    tools: Vec<Value>,
    catalog: Catalog,
    calls: Vec<Recorded>,
    /// The recorded handshake's result (`initialize`, or `server/discover`).
    handshake: Option<Value>,
    /// Its `capabilities` as recorded, member for member.
    capabilities: Option<Value>,
    /// The recorded refusal of `server/discover` (a legacy server's), if the client tried it.
    discover_refused: Option<Value>,
    requests: Vec<RecordedRequest>,
    /// What the loader had to make do with (no snapshot found, say).
    pub notes: Vec<String>,
}

/// `${VAR}` from the environment, and left as written when unset: serving needs no server
/// environment, and arguments are matched as the client sends them.
struct Lenient;

impl Vars for Lenient {
    fn get(&self, name: &str) -> Option<String> {
        Some(std::env::var(name).unwrap_or_else(|_| format!("${{{name}}}")))
    }
}

fn read_json(path: &Path) -> Result<Value, ServeError> {
    let text = toolcall_score::read_text(path)?;
    serde_json::from_str(&text).map_err(|e| ServeError::NotARecording {
        path: path.to_owned(),
        why: format!("not JSON: {e}"),
    })
}

impl Recording {
    /// Loads a flow (its catalog from the snapshot it names) or a catalog snapshot (its calls
    /// from the flow it names, if any).
    pub fn load(path: &Path) -> Result<Recording, ServeError> {
        let value = read_json(path)?;
        let mut notes = Vec::new();
        let (flow_path, tools) = if let Some(tools) = value.get("tools").and_then(Value::as_array) {
            let flow = toolcall_mcp::catalog::flow_of(&value, path).filter(|f| f.is_file());
            if flow.is_none() {
                notes.push("the snapshot names no flow: every call is unmatched".to_owned());
            }
            (flow, Some(tools.clone()))
        } else if value.get("calls").is_some() {
            let tools = Flow::load_with(path, &Lenient)?
                .snapshot
                .and_then(|s| s.catalog.get("tools").and_then(Value::as_array).cloned());
            (Some(path.to_owned()), tools)
        } else {
            return Err(ServeError::NotARecording {
                path: path.to_owned(),
                why: "neither a flow (\"calls\") nor a catalog snapshot (\"tools\")".into(),
            });
        };
        let mut calls = Vec::new();
        let mut surface = None;
        if let Some(flow_path) = &flow_path {
            let flow = Flow::load_with(flow_path, &Lenient)?;
            let raw = if flow_path == path {
                value.clone()
            } else {
                read_json(flow_path)?
            };
            for (i, call) in flow.calls.iter().enumerate() {
                let recorded = raw.pointer(&format!("/calls/{i}/recorded"));
                calls.push(Recorded {
                    name: call.name.clone(),
                    input: call.input.clone(),
                    answer: answer_of(recorded),
                    meta: recorded
                        .and_then(|r| r.get("request_meta"))
                        .and_then(|m| meta_of(toolcall_mcp::unescape_templates(m.clone()))),
                });
            }
            surface = raw.get("recorded").cloned();
        }
        // Written with its `$`s escaped, as everything a recorded session said: each part is
        // read back once.
        let surface = surface.unwrap_or(Value::Null);
        let handshake =
            ["initialize", "discover"]
                .iter()
                .find_map(|key| match answer_of(surface.get(*key)) {
                    Answer::Result(result) if result.is_object() => Some(result),
                    _ => None,
                });
        let capabilities = handshake
            .as_ref()
            .and_then(|h| h.get("capabilities"))
            .cloned();
        let discover_refused = match answer_of(surface.get("discover")) {
            Answer::Error(error) => Some(error),
            _ => None,
        };
        let requests = surface
            .get("requests")
            .and_then(Value::as_array)
            .map(|requests| {
                requests
                    .iter()
                    .filter_map(|r| {
                        Some(RecordedRequest {
                            method: r.get("method")?.as_str()?.to_owned(),
                            params: r
                                .get("params")
                                .map(|p| toolcall_mcp::unescape_templates(p.clone()))
                                .unwrap_or(Value::Null),
                            answer: answer_of(Some(r)),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let order: Option<Vec<String>> = surface.get("tools").map(|names| {
            let names = toolcall_mcp::unescape_templates(names.clone());
            names
                .as_array()
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        });
        let tools = match tools {
            Some(tools) => tools,
            None => {
                notes.push(format!(
                    "{} names no catalog snapshot (\"snapshot\"): the catalog is the names \
                     the flow calls, with no schema",
                    path.display()
                ));
                let mut names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                names
                    .into_iter()
                    .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
                    .collect()
            }
        };
        let catalog = Catalog::from_json(&json!({ "tools": tools })).map_err(|e| {
            ServeError::NotARecording {
                path: path.to_owned(),
                why: format!("its catalog cannot be read: {e}"),
            }
        })?;
        // The snapshot sorts the tools by name; the server listed them in its own order, which a
        // client may depend on (the first tool, a prompt built from the list). A tool the
        // recorded order lacks (added to the snapshot by hand) comes after, as sorted.
        let mut tools = tools;
        if let Some(order) = &order {
            let place = |tool: &Value| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                order.iter().position(|n| n == name).unwrap_or(order.len())
            };
            tools.sort_by_key(place);
        }
        Ok(Recording {
            path: path.to_owned(),
            tools,
            catalog,
            calls,
            handshake,
            capabilities,
            discover_refused,
            requests,
            notes,
        })
    }

    /// How many recorded calls it can answer from.
    pub fn calls(&self) -> usize {
        self.calls.len()
    }

    /// The declared tools' names.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.catalog.names()
    }
}

/// One call the client made.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientCall {
    /// The tool name it sent.
    pub name: String,
    /// Its arguments.
    pub input: Value,
    /// The recorded call that answered it (1-based, as a flow's steps), if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<usize>,
}

/// One prompts, resources or completion request the client made.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientRequest {
    /// Its method (`prompts/get`, …).
    pub method: String,
    /// Its params.
    pub params: Value,
    /// The recorded request that answered it (1-based, in the flow's `recorded.requests`), if
    /// one did: `None` is a finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<usize>,
}

/// A name the catalog lacks, as the scorer sees a model's unknown name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnknownName {
    /// The name the client called.
    pub name: String,
    /// Why it probably appeared (`namespace`, `invented`, …).
    pub cause: Option<String>,
    /// The declared names it was likely meant to be, best first.
    pub suggestions: Vec<String>,
    /// The scorer's sentence.
    pub detail: String,
}

/// Arguments the recorded `inputSchema` refuses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// The tool.
    pub name: String,
    /// The arguments sent.
    pub input: Value,
    /// One message per failure, each naming its place.
    pub errors: Vec<String>,
}

/// What the client under test did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServeReport {
    /// Every `tools/call`.
    pub calls: usize,
    /// Calls answered from the recording.
    pub matched: Vec<ClientCall>,
    /// Calls to declared tools that no recorded call matched.
    pub unmatched: Vec<ClientCall>,
    /// Calls to names the catalog lacks.
    pub unknown: Vec<UnknownName>,
    /// Calls whose arguments the recorded `inputSchema` refuses.
    pub schema_violations: Vec<Violation>,
    /// Every prompts, resources and completion request, answered from the recording or not.
    pub requests: Vec<ClientRequest>,
    /// Client messages answered with an error before rmcp saw them: one over the message limit
    /// (which rmcp would drop without a word, leaving the client waiting), a `tools/call` whose
    /// `params.name` is not a string.
    pub refused: Vec<crate::screen::Refused>,
    /// How the session broke, when it did not end with the client closing it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ServeReport {
    /// Whether anything is wrong: an unmatched call or request, an unknown name or a schema
    /// violation (what `--strict` fails on).
    pub fn has_findings(&self) -> bool {
        !(self.unmatched.is_empty()
            && self.unknown.is_empty()
            && self.schema_violations.is_empty()
            && self.requests.iter().all(|r| r.answered_by.is_some())
            && self.refused.is_empty()
            && self.error.is_none())
    }
}

impl std::fmt::Display for ServeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use toolcall_score::escape;
        writeln!(
            f,
            "toolcall mcp serve: {} call(s): {} matched, {} unmatched, {} unknown name(s), {} \
             schema violation(s)",
            self.calls,
            self.matched.len(),
            self.unmatched.len(),
            self.unknown.len(),
            self.schema_violations.len()
        )?;
        for call in &self.unmatched {
            writeln!(
                f,
                "  unmatched `{}` {}: no recorded call with these arguments",
                escape(&call.name),
                escape(&call.input.to_string())
            )?;
        }
        for unknown in &self.unknown {
            let hint = if unknown.suggestions.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = unknown
                    .suggestions
                    .iter()
                    .map(|s| escape(s).to_string())
                    .collect();
                format!("; did you mean {}?", names.join(" or "))
            };
            writeln!(
                f,
                "  unknown `{}` ({}): {}{hint}",
                escape(&unknown.name),
                unknown.cause.as_deref().unwrap_or("unknown"),
                unknown.detail
            )?;
        }
        for request in self.requests.iter().filter(|r| r.answered_by.is_none()) {
            writeln!(
                f,
                "  unmatched {} {}: no recorded request with these params",
                escape(&request.method),
                escape(&request.params.to_string())
            )?;
        }
        for violation in &self.schema_violations {
            writeln!(
                f,
                "  schema `{}`: {}",
                escape(&violation.name),
                escape(&violation.errors.join("; "))
            )?;
        }
        for refused in &self.refused {
            writeln!(
                f,
                "  refused (id {}, error {}): {}",
                escape(&refused.id.to_string()),
                refused.code,
                escape(&refused.why)
            )?;
        }
        if let Some(error) = &self.error {
            writeln!(f, "  error: {}", escape(error))?;
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct State {
    used: Vec<bool>,
    used_requests: Vec<bool>,
    report: ServeReport,
}

/// The rmcp handler over a [`Recording`].
#[derive(Clone)]
struct Mock {
    recording: Arc<Recording>,
    case: Arc<Case>,
    matching: Matching,
    /// What `initialize` answers (rmcp asks for it on many requests: made once).
    info: Arc<ServerConfig>,
    state: Arc<Mutex<State>>,
}

/// The `initialize` answer: the recorded server's `serverInfo`, `instructions` and
/// `capabilities` when the recording has its handshake (rmcp negotiates the protocol version
/// anew), else the mock's own name and the tools capability.
fn server_config(handshake: Option<&Value>) -> ServerConfig {
    let own = || {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("toolcall-mcp-serve", env!("CARGO_PKG_VERSION")),
        )
    };
    let Some(handshake) = handshake else {
        return own();
    };
    let mut config = own();
    if let Some(capabilities) = handshake
        .get("capabilities")
        .and_then(|c| serde_json::from_value::<ServerCapabilities>(c.clone()).ok())
    {
        config.capabilities = capabilities;
    }
    // The legacy era's `serverInfo`; the modern era's `server/discover` carries it in `_meta`.
    let server_info = handshake.get("serverInfo").or_else(|| {
        handshake
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
    });
    if let Some(info) =
        server_info.and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok())
    {
        config.server_info = info;
    }
    config.instructions = handshake
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    config
}

/// The recorded handshake's `capabilities` put back into rmcp's answer to `initialize` or
/// `server/discover` (`text`, one JSON-RPC message), as recorded: rmcp's `ServerCapabilities`
/// keeps only the members it models, and drops others a server declares (2025-11-25's `tasks`,
/// which server-everything declares). `None` when `text` is no such answer.
fn with_recorded_capabilities(text: &[u8], capabilities: &Value) -> Option<Vec<u8>> {
    // Cheap test first: every line rmcp writes passes here.
    if !text.windows(14).any(|w| w == b"\"capabilities\"") {
        return None;
    }
    let mut message: Value = serde_json::from_slice(text).ok()?;
    let result = message.get_mut("result")?.as_object_mut()?;
    let handshake = result.contains_key("serverInfo") && result.contains_key("protocolVersion")
        || result.contains_key("supportedVersions");
    if !handshake || !result.contains_key("capabilities") {
        return None;
    }
    result.insert("capabilities".into(), capabilities.clone());
    serde_json::to_vec(&message).ok()
}

/// [`with_recorded_capabilities`] over one line, its end kept.
fn restore_line(line: &[u8], capabilities: Option<&Value>) -> Option<Vec<u8>> {
    let capabilities = capabilities?;
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let mut out = with_recorded_capabilities(body, capabilities)?;
    out.extend_from_slice(&line[body.len()..]);
    Some(out)
}

/// [`with_recorded_capabilities`] over an HTTP body frame: a JSON answer, or server-sent
/// events whose `data:` lines each hold one message.
fn restore_frame(frame: &[u8], capabilities: Option<&Value>) -> Option<Vec<u8>> {
    let capabilities = capabilities?;
    if let Some(whole) = with_recorded_capabilities(frame, capabilities) {
        return Some(whole);
    }
    let mut out = Vec::with_capacity(frame.len());
    let mut changed = false;
    for line in frame.split_inclusive(|b| *b == b'\n') {
        match line
            .strip_prefix(b"data: ".as_slice())
            .or(line.strip_prefix(b"data:".as_slice()))
        {
            Some(data) => match restore_line(data, Some(capabilities)) {
                Some(restored) => {
                    out.extend_from_slice(b"data: ");
                    out.extend_from_slice(&restored);
                    changed = true;
                }
                None => out.extend_from_slice(line),
            },
            None => out.extend_from_slice(line),
        }
    }
    changed.then_some(out)
}

/// `params` as compared: `{}` for none, without `_meta` unless `strict`.
fn comparable(params: Value, strict: bool) -> Value {
    let mut params = match params {
        Value::Null => Value::Object(Default::default()),
        params => params,
    };
    if let Some(object) = params.as_object_mut() {
        if !strict
            || object
                .get("_meta")
                .is_some_and(|m| meta_of(m.clone()).is_none())
        {
            object.remove("_meta");
        }
    }
    params
}

/// A request's `_meta` as compared: `None` for none, null or an empty object (rmcp leaves an
/// empty one where it took the client's out).
fn meta_of(meta: Value) -> Option<Value> {
    match meta {
        Value::Null => None,
        Value::Object(object) if object.is_empty() => None,
        meta => Some(meta),
    }
}

/// The `_meta` the client sent with a request: rmcp moves it out of the params into the
/// request's context before a handler sees them.
fn context_meta(context: &RequestContext<RoleServer>) -> Option<Value> {
    serde_json::to_value(&context.meta).ok().and_then(meta_of)
}

/// A recorded result as rmcp's type: `resultType` filled in where the server (a legacy one)
/// sent none, which rmcp drops again for a legacy client.
fn typed<R: serde::de::DeserializeOwned>(result: &Value, what: &str) -> Result<R, ErrorData> {
    let mut result = result.clone();
    if let Some(object) = result.as_object_mut() {
        object
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".into()));
    }
    serde_json::from_value(result).map_err(|e| {
        ErrorData::internal_error(
            format!("toolcall mcp serve: the recorded {what} result cannot be sent: {e}"),
            None,
        )
    })
}

/// A recorded JSON-RPC error as rmcp's.
fn recorded_error(error: &Value) -> ErrorData {
    ErrorData::new(
        ErrorCode(
            error
                .get("code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok())
                .unwrap_or(ErrorCode::INTERNAL_ERROR.0),
        ),
        error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("recorded error")
            .to_owned(),
        error.get("data").cloned(),
    )
}

/// `value` with every string's `from` replaced by `to`: a recorded answer to one unknown name
/// made the answer to another. Only `from` as a whole name is replaced (not inside a longer
/// word: the unknown name `a` must not rewrite every `a` of "Tool a not found").
fn renamed(value: &Value, from: &str, to: &str) -> Value {
    match value {
        Value::String(s) => Value::String(replace_name(s, from, to)),
        Value::Array(items) => Value::Array(items.iter().map(|v| renamed(v, from, to)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), renamed(v, from, to)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `text` with each occurrence of the name `from` that is no part of a longer name (the
/// characters a tool's name is made of: letters, digits, `_`, `-`, `.`, `/`) replaced by `to`.
fn replace_name(text: &str, from: &str, to: &str) -> String {
    let part_of_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    if from.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices(from) {
        let (before, after) = (&text[..at], &text[at + from.len()..]);
        let starts = before.chars().next_back().is_none_or(|c| !part_of_name(c));
        // A full stop after the name ends a sentence, unless a name goes on after it.
        let ends = match after.strip_prefix('.') {
            Some(more) => more.chars().next().is_none_or(|c| !part_of_name(c)),
            None => after.chars().next().is_none_or(|c| !part_of_name(c)),
        };
        if starts && ends && at >= copied {
            out.push_str(&text[copied..at]);
            out.push_str(to);
            copied = at + from.len();
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The first of `candidates` (in recorded order) not yet `used`; else, unless `once`, the last
/// of them again.
fn choose(candidates: &[usize], used: &[bool], once: bool) -> Option<usize> {
    let fresh = candidates.iter().copied().find(|&i| !used[i]);
    if once {
        fresh
    } else {
        fresh.or(candidates.last().copied())
    }
}

impl Mock {
    fn new(recording: Recording, matching: Matching) -> Mock {
        let case = Case {
            catalog: recording.catalog.clone(),
            ..Case::default()
        };
        let used = vec![false; recording.calls.len()];
        let used_requests = vec![false; recording.requests.len()];
        let info = server_config(recording.handshake.as_ref());
        Mock {
            recording: Arc::new(recording),
            case: Arc::new(case),
            matching,
            info: Arc::new(info),
            state: Arc::new(Mutex::new(State {
                used,
                used_requests,
                report: ServeReport::default(),
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The scorer's finding for an unknown name: cause and suggestions as for a model's call.
    fn unknown(&self, name: &str) -> UnknownName {
        let mut response = Response::empty(Format::ALL[0]);
        response
            .calls
            .push(ToolCall::new(None, name, Value::Object(Default::default())));
        let verdict = toolcall_score::score(&self.case, &response);
        let finding = verdict
            .findings()
            .iter()
            .find(|f| f.kind == FindingKind::UnknownTool);
        UnknownName {
            name: name.to_owned(),
            cause: finding.and_then(|f| f.cause).map(|c| c.as_str().to_owned()),
            suggestions: finding
                .and_then(|f| f.suggestions.clone())
                .unwrap_or_default(),
            detail: finding
                .map(|f| f.detail.clone())
                .unwrap_or_else(|| "not defined".to_owned()),
        }
    }

    fn answer(
        &self,
        name: &str,
        input: Value,
        meta: Option<Value>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut state = self.state();
        state.report.calls += 1;
        let known = self.recording.catalog.contains(name);
        if !known {
            let unknown = self.unknown(name);
            state.report.unknown.push(unknown);
        }
        let violation = match self.recording.catalog.validate(name, &input) {
            Err(SchemaError::Violations(errors)) if known => Some(errors),
            _ => None,
        };
        if let Some(errors) = &violation {
            state.report.schema_violations.push(Violation {
                name: name.to_owned(),
                input: input.clone(),
                errors: errors.clone(),
            });
        }
        let fits = |c: &Recorded| match self.matching {
            Matching::Sequential => true,
            Matching::Name => c.name == name,
            Matching::ByParams => c.name == name && c.input == input,
            Matching::Strict => c.name == name && c.input == input && c.meta == meta,
        };
        let candidates: Vec<usize> = (0..self.recording.calls.len())
            .filter(|&i| fits(&self.recording.calls[i]))
            .collect();
        let Some(i) = choose(&candidates, &state.used, self.matching.once()) else {
            if !known {
                return self.unknown_answer(name);
            }
            state.report.unmatched.push(ClientCall {
                name: name.to_owned(),
                input: input.clone(),
                answered_by: None,
            });
            if let Some(errors) = violation {
                return Err(ErrorData::invalid_params(
                    format!("Invalid arguments for tool {name}: {}", errors.join("; ")),
                    None,
                ));
            }
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(format!(
                    "toolcall mcp serve: no recorded call of {name} {}",
                    self.matching.unmatched()
                )),
            ])));
        };
        state.used[i] = true;
        state.report.matched.push(ClientCall {
            name: name.to_owned(),
            input,
            answered_by: Some(i + 1),
        });
        respond(&self.recording.calls[i].answer)
    }

    /// The answer to a name the catalog lacks that no recorded call of it answers: what the
    /// server answered another name it lacked, when the recording has one (the TypeScript
    /// SDK's servers, FastMCP and Playwright answer an `isError` result, others -32602), that
    /// name replaced by this one. With none recorded, JSON-RPC -32602 `Unknown tool: NAME`: the
    /// spec's answer to an unknown tool, and what rmcp's and the Python SDK's servers send; a
    /// guess, since how this server answers is not known.
    fn unknown_answer(&self, name: &str) -> Result<CallToolResponse, ErrorData> {
        let recorded = self
            .recording
            .calls
            .iter()
            .find(|c| !self.recording.catalog.contains(&c.name) && c.answer != Answer::Nothing);
        match recorded {
            Some(call) => respond(&match &call.answer {
                Answer::Result(result) => Answer::Result(renamed(result, &call.name, name)),
                Answer::Error(error) => Answer::Error(renamed(error, &call.name, name)),
                Answer::Nothing => Answer::Nothing,
            }),
            None => Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            )),
        }
    }

    /// The recorded answer to a prompts, resources or completion request, matched as
    /// [`Matching`] says; `P` is the params' type, through which the recorded params are read
    /// too (so that both sides compare in one shape).
    fn request<P, R>(&self, method: &str, params: &P, meta: Option<Value>) -> Result<R, ErrorData>
    where
        P: Serialize + serde::de::DeserializeOwned,
        R: serde::de::DeserializeOwned,
    {
        let strict = self.matching == Matching::Strict;
        let mut incoming = serde_json::to_value(params).unwrap_or(Value::Null);
        // The params as the client sent them: with its `_meta`, which rmcp took out.
        if let Some(object) = incoming.as_object_mut() {
            object.remove("_meta");
        }
        if let Some(meta) = meta {
            match &mut incoming {
                Value::Object(object) => {
                    object.insert("_meta".into(), meta);
                }
                other => *other = json!({"_meta": meta}),
            }
        }
        let wanted = comparable(incoming.clone(), strict);
        let candidates: Vec<usize> = (0..self.recording.requests.len())
            .filter(|&i| {
                let recorded = &self.recording.requests[i];
                if recorded.method != method {
                    return false;
                }
                if self.matching == Matching::Sequential {
                    return true;
                }
                let shaped = serde_json::from_value::<P>(recorded.params.clone())
                    .ok()
                    .and_then(|p| serde_json::to_value(p).ok())
                    .unwrap_or_else(|| recorded.params.clone());
                comparable(shaped, strict) == wanted
            })
            .collect();
        let mut state = self.state();
        let chosen = choose(&candidates, &state.used_requests, self.matching.once());
        state.report.requests.push(ClientRequest {
            method: method.to_owned(),
            params: incoming,
            answered_by: chosen.map(|i| i + 1),
        });
        let Some(i) = chosen else {
            return Err(ErrorData::invalid_params(
                format!(
                    "toolcall mcp serve: no recorded {method} {}",
                    match self.matching {
                        // Other requests than a call are matched by their params.
                        Matching::Name => Matching::ByParams.unmatched(),
                        matching => matching.unmatched(),
                    }
                ),
                None,
            ));
        };
        state.used_requests[i] = true;
        match &self.recording.requests[i].answer {
            Answer::Result(result) => typed(result, method),
            Answer::Error(error) => Err(recorded_error(error)),
            Answer::Nothing => Err(ErrorData::internal_error(
                "toolcall mcp serve: the recording holds no answer to this request".to_owned(),
                None,
            )),
        }
    }
}

/// A recorded `tools/call` answer as rmcp's.
fn respond(answer: &Answer) -> Result<CallToolResponse, ErrorData> {
    match answer {
        Answer::Result(result) => serde_json::from_value::<CallToolResult>(result.clone())
            .map(CallToolResponse::Complete)
            .map_err(|e| {
                ErrorData::internal_error(
                    format!("toolcall mcp serve: the recorded result cannot be sent: {e}"),
                    None,
                )
            }),
        Answer::Error(error) => Err(recorded_error(error)),
        Answer::Nothing => Err(ErrorData::internal_error(
            "toolcall mcp serve: the recording holds no answer to this call".to_owned(),
            None,
        )),
    }
}

impl ServerHandler for Mock {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result: ListToolsResult =
            serde_json::from_value(json!({ "tools": self.recording.tools })).map_err(|e| {
                ErrorData::internal_error(
                    format!("toolcall mcp serve: the recorded catalog cannot be sent: {e}"),
                    None,
                )
            })?;
        if result.result_type.is_none() {
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        self.answer(&request.name, input, context_meta(&context))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.request("prompts/list", &request, context_meta(&context))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.request::<_, GetPromptResult>("prompts/get", &request, context_meta(&context))
            .map(GetPromptResponse::Complete)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.request("resources/list", &request, context_meta(&context))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.request("resources/templates/list", &request, context_meta(&context))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.request::<_, ReadResourceResult>("resources/read", &request, context_meta(&context))
            .map(ReadResourceResponse::Complete)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.request("completion/complete", &request, context_meta(&context))
    }

    /// Refused as the recorded server refused it (a legacy server: the client falls back to
    /// `initialize`, as it did against the server); else rmcp's answer from [`Self::get_info`].
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        match &self.recording.discover_refused {
            Some(error) => Err(recorded_error(error)),
            None => Ok(DiscoverResult::from_server_info(
                self.supported_protocol_versions().into_owned(),
                self.get_info(),
            )),
        }
    }

    /// Taken when the recorded server declared `logging` (as it would have), refused as rmcp
    /// refuses it otherwise; the mock logs nothing either way. (Logging is deprecated from
    /// 2026-07-28 on; the clients of the eras before it still set a level.)
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.info.capabilities.logging.is_some() {
            Ok(())
        } else {
            Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >())
        }
    }
}

/// The longest client message [`serve`] takes (`--max-message-bytes`'s default).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Serves `recording` on this process's stdin and stdout until the client closes them, and
/// returns what the client did (a session that broke off is in [`ServeReport::error`], with
/// what the client did until then). Only a runtime that cannot start is an error. A client
/// message over [`DEFAULT_MAX_MESSAGE_BYTES`] is answered with an error.
pub fn serve(recording: Recording, matching: Matching) -> Result<ServeReport, ServeError> {
    serve_limited(recording, matching, DEFAULT_MAX_MESSAGE_BYTES)
}

/// [`serve`], with client messages of up to `max_message_bytes`: a longer one is answered with
/// JSON-RPC error -32600 (its id, when it comes before the bulk; else `null`) and is in
/// [`ServeReport::refused`], never dropped in silence nor held whole.
pub fn serve_limited(
    recording: Recording,
    matching: Matching,
    max_message_bytes: usize,
) -> Result<ServeReport, ServeError> {
    use rmcp::transport::async_rw::AsyncRwTransport;

    let mock = Mock::new(recording, matching);
    let state = Arc::clone(&mock.state);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    let ended = runtime.block_on(async move {
        // The client's lines pass through `screen_stdin` to rmcp, and rmcp's, with the answers
        // the screen gives itself, go out through one writer, a whole line at a time.
        let (ours, theirs) = tokio::io::duplex(256 * 1024);
        let (from_rmcp, to_rmcp) = tokio::io::split(ours);
        let out = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
        let screen = tokio::spawn(screen_stdin(
            max_message_bytes,
            to_rmcp,
            Arc::clone(&out),
            Arc::clone(&mock.state),
        ));
        let capabilities = mock.recording.capabilities.clone();
        let copier = tokio::spawn(copy_lines(from_rmcp, out, capabilities));
        let (read, write) = tokio::io::split(theirs);
        let transport = AsyncRwTransport::new_server(read, write)
            .with_max_line_length(max_message_bytes.saturating_add(2));
        let served = async {
            let service = mock
                .serve(transport)
                .await
                .map_err(|e| format!("the session did not start: {e}"))?;
            service
                .waiting()
                .await
                .map_err(|e| format!("the session broke off: {e}"))?;
            Ok::<(), String>(())
        }
        .await;
        // rmcp has closed its side: what it wrote is written out before the report.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), copier).await;
        screen.abort();
        served
    });
    // A read of stdin in flight cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    let mut report = state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .report
        .clone();
    report.error = ended.err();
    Ok(report)
}

/// Reads the client's lines from stdin and hands each to rmcp, except those the screen answers
/// itself ([`crate::screen`]): written to `out` and kept in the report.
async fn screen_stdin(
    limit: usize,
    mut to_rmcp: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    out: Arc<tokio::sync::Mutex<tokio::io::Stdout>>,
    state: Arc<Mutex<State>>,
) {
    use crate::screen::{next_line, oversized, refusal, Line};
    use tokio::io::AsyncWriteExt;

    let mut stdin = tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    loop {
        let refused = match next_line(&mut stdin, limit).await {
            Ok(Some(Line::Whole(mut line))) => match refusal(&line) {
                Some(refused) => {
                    state.lock().unwrap_or_else(|e| e.into_inner()).report.calls += 1;
                    refused
                }
                None => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                    continue;
                }
            },
            Ok(Some(Line::Over(kept, bytes))) => {
                let refused = oversized(&kept, bytes, limit);
                eprintln!(
                    "toolcall mcp serve: a client message of {bytes} bytes is over \
                     --max-message-bytes {limit}: answered with error -32600"
                );
                refused
            }
            Ok(None) | Err(_) => break,
        };
        {
            let mut out = out.lock().await;
            if out.write_all(&refused.response()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        state.report.refused.push(refused);
    }
    let _ = to_rmcp.shutdown().await;
}

/// Copies rmcp's lines to `out`, each whole under the lock, its answer to the handshake with
/// the recorded `capabilities` ([`with_recorded_capabilities`]).
async fn copy_lines(
    from: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    out: Arc<tokio::sync::Mutex<tokio::io::Stdout>>,
    capabilities: Option<Value>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    let mut from = tokio::io::BufReader::new(from);
    loop {
        let mut line = Vec::new();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = restore_line(&line, capabilities.as_ref()).unwrap_or(line);
                let mut out = out.lock().await;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        }
    }
}

/// Serves `recording` over streamable HTTP on `listen` (a loopback address unless
/// [`Listen::insecure`](crate::loopback::Listen::insecure); a request whose `Host` or `Origin`
/// is not loopback is refused, [`crate::loopback`]) until `stop` is set, and returns what the
/// client did. `ready` gets the address listened on (the port the OS chose for `:0`) once it
/// accepts connections.
///
/// Each connection carries one request (rmcp's answer, an event stream included, is streamed
/// back, then the connection is closed). Sessions (legacy era) and stateless requests (modern)
/// are rmcp's.
pub fn serve_http(
    recording: Recording,
    matching: Matching,
    listen: impl Into<crate::loopback::Listen>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<ServeReport, ServeError> {
    let listen = Arc::new(listen.into());
    let addrs = listen.addresses().map_err(ServeError::Transport)?;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use std::sync::atomic::Ordering;

    let mock = Mock::new(recording, matching);
    let state = Arc::clone(&mock.state);
    let state_of_connections = Arc::clone(&mock.state);
    let capabilities = Arc::new(mock.recording.capabilities.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addrs[..])
            .await
            .map_err(|e| {
                ServeError::Transport(format!(
                    "cannot listen on {}: {e}",
                    toolcall_score::escape(&listen.addr)
                ))
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::Transport(e.to_string()))?;
        // rmcp's own Host check stays as a second line behind ours, and goes with it.
        let config = if listen.insecure {
            StreamableHttpServerConfig::default().disable_allowed_hosts()
        } else {
            StreamableHttpServerConfig::default()
        };
        // No SSE priming event (an event with an id, a `retry` and empty data, before the
        // answer): it is there for a client to resume a stream from an event store, which the
        // mock keeps none of, and a 2025-06-18 client, which expects none, fails to parse it
        // (the Python SDK 1.x logs a traceback per stream). Real servers without an event
        // store send none either. rmcp primes in two places: its service and its sessions.
        let config = config.with_sse_retry(None);
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.sse_retry = None;
        let service =
            StreamableHttpService::new(move || Ok(mock.clone()), Arc::new(sessions), config);
        ready(addr);
        while !stop.load(Ordering::SeqCst) {
            let accepted =
                tokio::time::timeout(std::time::Duration::from_millis(100), listener.accept())
                    .await;
            if let Ok(Ok((stream, _))) = accepted {
                let (service, listen) = (service.clone(), Arc::clone(&listen));
                let state = Arc::clone(&state_of_connections);
                let capabilities = Arc::clone(&capabilities);
                tokio::spawn(async move {
                    let _ = connection(
                        stream,
                        service,
                        &listen,
                        &state,
                        capabilities.as_ref().as_ref(),
                    )
                    .await;
                });
            }
        }
        Ok::<(), ServeError>(())
    })?;
    let report = state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .report
        .clone();
    Ok(report)
}

/// One HTTP/1.1 request read from `stream`, handed to rmcp, and its answer written back.
async fn connection<M>(
    stream: tokio::net::TcpStream,
    service: rmcp::transport::StreamableHttpService<Mock, M>,
    listen: &crate::loopback::Listen,
    state: &Mutex<State>,
    capabilities: Option<&Value>,
) -> std::io::Result<()>
where
    M: rmcp::transport::streamable_http_server::SessionManager,
{
    use http_body_util::BodyExt;
    use tokio::io::AsyncWriteExt;

    let (read, mut write) = stream.into_split();
    // A client that connects and sends nothing is let go after a while, not held.
    let request = tokio::time::timeout(IDLE, read_request(read, listen, state)).await;
    let request = match request {
        Ok(Ok(Ok(request))) => request,
        Ok(Ok(Err(refused))) => return write.write_all(&refused).await,
        Ok(Err(e)) => return Err(e),
        Err(_) => return Ok(()),
    };
    let delete = request.method() == http::Method::DELETE;
    let response = service.handle(request).await;
    let (mut parts, mut body) = response.into_parts();
    // rmcp answers a session's DELETE with 202 Accepted; the spec's servers answer 200 (the
    // TypeScript SDK's, FastMCP), and the Python SDK's client takes anything but 200 or 204 for
    // a failed termination ("Session termination failed: 202"). The session is closed by then.
    if delete && parts.status == http::StatusCode::ACCEPTED {
        parts.status = http::StatusCode::OK;
    }
    let mut out = format!(
        "HTTP/1.1 {} {}\r\n",
        parts.status.as_u16(),
        parts.status.canonical_reason().unwrap_or("")
    );
    for (name, value) in &parts.headers {
        if name == http::header::CONNECTION || name == http::header::TRANSFER_ENCODING {
            continue;
        }
        out.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    out.push_str("connection: close\r\n\r\n");
    write.write_all(out.as_bytes()).await?;
    write.flush().await?;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame;
        if let Some(data) = frame.data_ref() {
            // A JSON answer's length was fixed before: the handshake's is restored only in
            // an event stream, and a JSON answer loses what rmcp does not model.
            let restored = if parts.headers.contains_key(http::header::CONTENT_LENGTH) {
                None
            } else {
                restore_frame(data, capabilities)
            };
            write.write_all(restored.as_deref().unwrap_or(data)).await?;
            write.flush().await?;
        }
    }
    write.shutdown().await
}

/// How long a connection may take to send its request.
const IDLE: std::time::Duration = std::time::Duration::from_secs(30);

/// The 400 answer, for a request that cannot be read.
const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

/// One HTTP/1.1 request, read whole: the request for rmcp, or the bytes that answer it instead
/// (a 400 for a head cut off or too long, a 403 for a `Host` or `Origin` that is not loopback,
/// a 413 for a body over the input limit, the screen's JSON-RPC error for a `tools/call`
/// without a string name). A body cut off (the client went away) is an error:
/// nothing is handed on.
async fn read_request(
    read: tokio::net::tcp::OwnedReadHalf,
    listen: &crate::loopback::Listen,
    state: &Mutex<State>,
) -> std::io::Result<Result<http::Request<http_body_util::Full<bytes::Bytes>>, Vec<u8>>> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};

    const MAX_HEAD: usize = 64 * 1024;
    let mut reader = tokio::io::BufReader::new(read);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = (&mut reader)
            .take(MAX_HEAD as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 || head.len() > MAX_HEAD {
            return Ok(Err(BAD_REQUEST.to_vec()));
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        head.extend_from_slice(&line);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let mut request_line = lines.next().unwrap_or_default().split_whitespace();
    let method = request_line.next().unwrap_or_default().to_owned();
    let target = request_line.next().unwrap_or("/").to_owned();
    let mut request = http::Request::builder()
        .method(method.as_str())
        .uri(target.as_str());
    let mut length = 0u64;
    let (mut host, mut origin) = (None, None);
    for (name, value) in lines.filter_map(|l| l.split_once(':')) {
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            match value.parse() {
                Ok(n) => length = n,
                Err(_) => return Ok(Err(BAD_REQUEST.to_vec())),
            }
        } else if name.eq_ignore_ascii_case("host") {
            host = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("origin") {
            origin = Some(value.to_owned());
        }
        request = request.header(name, value);
    }
    if let Some(why) = crate::loopback::refusal(host.as_deref(), origin.as_deref(), listen) {
        return Ok(Err(crate::loopback::forbidden(&why)));
    }
    if length > toolcall_score::max_input_bytes() {
        return Ok(Err(
            b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\n\
                        connection: close\r\n\r\n"
                .to_vec(),
        ));
    }
    let mut body = Vec::new();
    (&mut reader).take(length).read_to_end(&mut body).await?;
    if (body.len() as u64) < length {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the request body is cut off",
        ));
    }
    if let Some(refused) = crate::screen::refusal(&body) {
        let answer = refused.response();
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        state.report.calls += 1;
        state.report.refused.push(refused);
        let mut out = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n",
            answer.len()
        )
        .into_bytes();
        out.extend_from_slice(&answer);
        return Ok(Err(out));
    }
    Ok(request
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .map_err(|_| BAD_REQUEST.to_vec()))
}

/// Writes `report` as JSON to `path`, atomically.
pub fn write_report(report: &ServeReport, path: &Path) -> Result<(), ServeError> {
    let value = serde_json::to_value(report).map_err(|e| ServeError::Report {
        path: path.to_owned(),
        source: std::io::Error::other(e),
    })?;
    let text = toolcall_score::to_json_pretty(&value).map_err(|e| ServeError::Report {
        path: path.to_owned(),
        source: std::io::Error::other(e),
    })?;
    toolcall_fs::write_atomic(path, format!("{text}\n").as_bytes()).map_err(|source| {
        ServeError::Report {
            path: path.to_owned(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("serve-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A flow with its snapshot (tools `b`, `a`, `c`, sorted in the snapshot), its calls
    /// and its `recorded`, loaded as `toolcall mcp serve` loads it.
    fn load(name: &str, calls: Value, recorded: Value) -> Recording {
        let dir = scratch(name);
        let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
        let snapshot = json!({"flow": "flow.json", "tools": [tool("a"), tool("b"), tool("c")]});
        std::fs::write(dir.join("catalog.json"), snapshot.to_string()).unwrap();
        let flow = json!({"server": {"command": "srv"}, "snapshot": "catalog.json",
                          "calls": calls, "recorded": recorded});
        std::fs::write(dir.join("flow.json"), flow.to_string()).unwrap();
        Recording::load(&dir.join("flow.json")).unwrap()
    }

    fn text_result(text: &str) -> Value {
        json!({"result": {"content": [{"type": "text", "text": text}]}})
    }

    fn call(name: &str, input: Value, text: &str) -> Value {
        json!({"name": name, "input": input, "recorded": text_result(text)})
    }

    fn said(answer: Result<CallToolResponse, ErrorData>) -> String {
        match answer {
            Ok(CallToolResponse::Complete(result)) => {
                let value = serde_json::to_value(&result).unwrap();
                let text = value["content"][0]["text"].as_str().unwrap_or_default();
                if result.is_error == Some(true) {
                    format!("isError: {text}")
                } else {
                    text.to_owned()
                }
            }
            Ok(other) => format!("{other:?}"),
            Err(e) => format!("error {}: {}", e.code.0, e.message),
        }
    }

    /// mcp-recorder's three strategies, and `name`: which recorded answer each call gets.
    #[test]
    fn each_matching_mode_picks_the_answer_mcp_recorder_would() {
        let mut progress = call("b", json!({}), "b with progress");
        progress["recorded"]["request_meta"] = json!({"progressToken": 7});
        let calls = json!([
            call("a", json!({"x": 1}), "a1"),
            call("a", json!({"x": 2}), "a2"),
            progress,
        ]);
        let mock = |m| Mock::new(load("modes", calls.clone(), json!({})), m);
        let meta = Some(json!({"progressToken": 7}));
        let ask = |mock: &Mock, name: &str, input: Value, meta: &Option<Value>| {
            said(mock.answer(name, input, meta.clone()))
        };

        let by_params = mock(Matching::ByParams);
        assert_eq!(ask(&by_params, "a", json!({"x": 2}), &None), "a2");
        assert_eq!(
            ask(&by_params, "a", json!({"x": 2}), &None),
            "a2",
            "used again"
        );
        assert!(ask(&by_params, "a", json!({"x": 3}), &None).starts_with("isError: "));
        assert_eq!(ask(&by_params, "b", json!({}), &None), "b with progress");

        let sequential = mock(Matching::Sequential);
        assert_eq!(ask(&sequential, "b", json!({}), &None), "a1");
        assert_eq!(ask(&sequential, "a", json!({"x": 9}), &None), "a2");
        assert_eq!(ask(&sequential, "a", json!({}), &None), "b with progress");
        assert!(ask(&sequential, "a", json!({"x": 1}), &None).starts_with("isError: "));

        let strict = mock(Matching::Strict);
        assert!(ask(&strict, "b", json!({}), &None).starts_with("isError: "));
        assert_eq!(ask(&strict, "b", json!({}), &meta), "b with progress");
        assert!(
            ask(&strict, "b", json!({}), &meta).starts_with("isError: "),
            "each answer once"
        );

        let name = mock(Matching::Name);
        assert_eq!(ask(&name, "a", json!({"x": 9}), &None), "a1");
        assert_eq!(ask(&name, "a", json!({"x": 9}), &None), "a2");
        assert_eq!(ask(&name, "a", json!({"x": 9}), &None), "a2");
        let report = name.state().report.clone();
        assert_eq!(report.matched.len(), 3);
        assert_eq!(report.matched[2].answered_by, Some(2));
    }

    /// Prompts and resources are answered as recorded, matched on their params (`_meta` aside
    /// unless strict); one never recorded is an error and a finding.
    #[test]
    fn prompts_and_resources_are_answered_as_recorded() {
        let recorded = json!({"requests": [
            {"method": "prompts/get", "params": {"name": "p", "arguments": {"city": "Paris"},
                                                  "_meta": {"progressToken": 1}},
             "result": {"messages": [{"role": "user", "content": {"type": "text", "text": "Paris $$$$?"}}]}},
            {"method": "resources/read", "params": {"uri": "demo://x"},
             "error": {"code": -32002, "message": "Resource demo://x not found"}},
            {"method": "prompts/list", "result": {"prompts": [{"name": "p"}]}},
        ]});
        let get = |city: &str| -> GetPromptRequestParams {
            serde_json::from_value(json!({"name": "p", "arguments": {"city": city}})).unwrap()
        };
        let mock = Mock::new(
            load("requests", json!([]), recorded.clone()),
            Matching::ByParams,
        );
        let prompt: GetPromptResult = mock.request("prompts/get", &get("Paris"), None).unwrap();
        assert_eq!(
            serde_json::to_value(&prompt.messages).unwrap()[0]["content"]["text"],
            "Paris $$?"
        );
        let listed: ListPromptsResult = mock
            .request("prompts/list", &None::<PaginatedRequestParams>, None)
            .unwrap();
        assert_eq!(listed.prompts[0].name, "p");
        let read: ReadResourceRequestParams =
            serde_json::from_value(json!({"uri": "demo://x"})).unwrap();
        let refused = mock
            .request::<_, ReadResourceResult>("resources/read", &read, None)
            .unwrap_err();
        assert_eq!(
            (refused.code.0, refused.message.as_ref()),
            (-32002, "Resource demo://x not found")
        );
        let missing = mock
            .request::<_, GetPromptResult>("prompts/get", &get("Rome"), None)
            .unwrap_err();
        assert!(
            missing.message.contains("no recorded prompts/get"),
            "{missing:?}"
        );
        let report = mock.state().report.clone();
        let answered: Vec<Option<usize>> = report.requests.iter().map(|r| r.answered_by).collect();
        assert_eq!(answered, [Some(1), Some(3), Some(2), None]);
        assert!(report.has_findings());
        assert!(
            report.to_string().contains("unmatched prompts/get"),
            "{report}"
        );

        // Strict compares `_meta` too: the client sent none, the recorded request had one.
        let strict = Mock::new(load("requests", json!([]), recorded), Matching::Strict);
        assert!(strict
            .request::<_, GetPromptResult>("prompts/get", &get("Paris"), None)
            .is_err());
        // With the `_meta` rmcp took out of the params and handed over beside them, it matches,
        // once; an empty `_meta` is none.
        let meta = Some(json!({"progressToken": 1}));
        assert!(strict
            .request::<_, GetPromptResult>("prompts/get", &get("Paris"), meta.clone())
            .is_ok());
        assert!(strict
            .request::<_, GetPromptResult>("prompts/get", &get("Paris"), meta)
            .is_err());
        assert_eq!(meta_of(json!({})), None);
    }

    /// A name the catalog lacks gets what the server answered it, or what it answered another
    /// name it lacked (the name put in); with no such answer recorded, -32602.
    #[test]
    fn an_unknown_name_is_answered_as_the_server_answered_one() {
        let unknown = json!({"name": "nope", "input": {}, "recorded": {"result": {
            "content": [{"type": "text", "text": "MCP error -32602: Tool nope not found"}],
            "isError": true}}});
        let mock = Mock::new(
            load("unknown", json!([unknown]), json!({})),
            Matching::ByParams,
        );
        assert_eq!(
            said(mock.answer("nope", json!({}), None)),
            "isError: MCP error -32602: Tool nope not found"
        );
        assert_eq!(
            said(mock.answer("get_sum", json!({"a": 1}), None)),
            "isError: MCP error -32602: Tool get_sum not found"
        );
        let report = mock.state().report.clone();
        assert_eq!(report.unknown.len(), 2);
        assert_eq!(report.matched.len(), 1);
        assert!(report.unmatched.is_empty() && report.schema_violations.is_empty());

        let none = Mock::new(
            load(
                "unknown-none",
                json!([call("a", json!({}), "a")]),
                json!({}),
            ),
            Matching::ByParams,
        );
        assert_eq!(
            said(none.answer("get_sum", json!({}), None)),
            "error -32602: Unknown tool: get_sum"
        );
    }

    /// The name is put in where the recorded unknown name stands as a name, never inside a
    /// word or a longer name (a recorded unknown `a` would otherwise rewrite every `a`).
    #[test]
    fn only_the_recorded_name_itself_is_replaced() {
        let cases = [
            ("Tool a not found", "a", "x", "Tool x not found"),
            (
                "Tool 'a' not found. Try a_b or a.b.",
                "a",
                "xy",
                "Tool 'xy' not found. Try a_b or a.b.",
            ),
            (
                "Unknown tool: nope.",
                "nope",
                "get-sum",
                "Unknown tool: get-sum.",
            ),
            ("nope/nope-2 nope", "nope", "z", "nope/nope-2 z"),
            (
                "MCP error -32602: Tool no-such found",
                "no-such",
                "b",
                "MCP error -32602: Tool b found",
            ),
        ];
        for (text, from, to, want) in cases {
            assert_eq!(replace_name(text, from, to), want, "{text:?}");
        }
        let result = json!({"content": [{"type": "text", "text": "Tool a not found"}],
                            "isError": true, "a": "a"});
        assert_eq!(
            renamed(&result, "a", "b"),
            json!({"content": [{"type": "text", "text": "Tool b not found"}],
                   "isError": true, "a": "b"})
        );
    }

    /// `initialize` answers with the recorded `serverInfo`, `instructions` and
    /// `capabilities`, and `tools/list` lists in the recorded order.
    #[test]
    fn the_handshake_and_the_tools_order_are_as_recorded() {
        let recorded = json!({
            "initialize": {"result": {"protocolVersion": "2025-06-18",
                           "serverInfo": {"name": "everything", "version": "2.0.0"},
                           "instructions": "Call echo first ($$$$5).",
                           "capabilities": {"tools": {"listChanged": true}, "prompts": {},
                                            "logging": {}}}},
            "discover": {"error": {"code": -32601, "message": "Method not found"}},
            "tools": ["c", "a", "b"],
        });
        let recording = load("handshake", json!([]), recorded);
        let names: Vec<&str> = recording
            .tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(
            recording.discover_refused,
            Some(json!({"code": -32601, "message": "Method not found"}))
        );
        let info = server_config(recording.handshake.as_ref());
        assert_eq!(info.server_info.name, "everything");
        assert_eq!(info.server_info.version, "2.0.0");
        // Read back once, as written: `$$` is a `$`.
        assert_eq!(info.instructions.as_deref(), Some("Call echo first ($$5)."));
        assert_eq!(
            serde_json::to_value(&info.capabilities).unwrap(),
            json!({"tools": {"listChanged": true}, "prompts": {}, "logging": {}})
        );
        // The modern era's server/discover carries serverInfo in `_meta`.
        let discover = json!({"capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}});
        assert_eq!(server_config(Some(&discover)).server_info.name, "modern");
        // A recording without a handshake keeps the mock's own.
        assert_eq!(server_config(None).server_info.name, "toolcall-mcp-serve");
    }

    /// rmcp's typed capabilities drop what it does not model (2025-11-25's `tasks`): the
    /// handshake's answer gets the recorded ones back, on a stdio line and in an event stream,
    /// and nothing else is touched.
    #[test]
    fn the_handshake_answer_gets_the_recorded_capabilities_back() {
        let recorded = json!({"tools": {}, "tasks": {"list": {}}});
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "serverInfo": {"name": "s", "version": "1"}, "capabilities": {"tools": {}}}});
        let line = format!("{answer}\n");
        let restored = restore_line(line.as_bytes(), Some(&recorded)).unwrap();
        assert!(restored.ends_with(b"}\n"));
        let restored: Value = serde_json::from_slice(&restored).unwrap();
        assert_eq!(restored["result"]["capabilities"], recorded);
        let event = format!("id: 0\ndata: {answer}\n\n");
        let restored = restore_frame(event.as_bytes(), Some(&recorded)).unwrap();
        let text = String::from_utf8(restored).unwrap();
        let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        let data: Value = serde_json::from_str(data).unwrap();
        assert_eq!(data["result"]["capabilities"], recorded);
        assert!(
            text.starts_with("id: 0\n") && text.ends_with("\n\n"),
            "{text:?}"
        );
        // A tool's result that mentions capabilities is no handshake.
        let call = json!({"jsonrpc": "2.0", "id": 1, "result": {"structuredContent":
            {"capabilities": {}}, "content": []}});
        assert!(restore_line(call.to_string().as_bytes(), Some(&recorded)).is_none());
        assert!(restore_line(line.as_bytes(), None).is_none());
    }
}
