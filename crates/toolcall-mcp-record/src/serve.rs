//! `toolcall mcp serve`: a recording as an MCP server, to test an agent's own MCP client
//! against (its namespacing, its retries, what it does with an unknown tool or an `isError`)
//! without the real server.
//!
//! It declares the recorded catalog (the snapshot the flow names, or the snapshot given) and
//! answers each `tools/call` with the recorded answer of a call that matches (same name and
//! arguments by default, [`Matching::Name`] by name alone; recorded calls are used in order, the
//! last one again once all are used). A name the catalog lacks is refused as real servers do
//! (JSON-RPC -32602 `Unknown tool: NAME`); arguments are checked against the recorded
//! `inputSchema`. Everything the client did is kept in a [`ServeReport`]: calls matched and
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
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Serialize;
use serde_json::{json, Value};
use toolcall_mcp::{Flow, Vars};
use toolcall_score::{Case, Catalog, FindingKind, Format, Response, SchemaError, ToolCall};

use crate::errors::ServeError;

/// How a call is matched to a recorded one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Matching {
    /// The same name and the same arguments (JSON equality).
    #[default]
    Exact,
    /// The same name, whatever the arguments.
    Name,
}

impl std::str::FromStr for Matching {
    type Err = String;
    fn from_str(s: &str) -> Result<Matching, String> {
        match s {
            "exact" => Ok(Matching::Exact),
            "name" => Ok(Matching::Name),
            _ => Err(format!(
                "`{}` is not a way to match: exact or name",
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
}

/// A recording loaded for serving: the catalog and the recorded calls.
#[derive(Debug)]
pub struct Recording {
    /// The file it was loaded from.
    pub path: PathBuf,
    tools: Vec<Value>,
    catalog: Catalog,
    calls: Vec<Recorded>,
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
        if let Some(flow_path) = &flow_path {
            let flow = Flow::load_with(flow_path, &Lenient)?;
            let raw = if flow_path == path {
                value.clone()
            } else {
                read_json(flow_path)?
            };
            for (i, call) in flow.calls.iter().enumerate() {
                let recorded = raw.pointer(&format!("/calls/{i}/recorded"));
                // Written with its `$`s escaped, as everything a recorded session said.
                let unescaped = |v: &Value| toolcall_mcp::unescape_templates(v.clone());
                let answer = match recorded {
                    Some(r) if r.get("result").is_some() => Answer::Result(unescaped(&r["result"])),
                    Some(r) if r.get("error").is_some() => Answer::Error(unescaped(&r["error"])),
                    _ => Answer::Nothing,
                };
                calls.push(Recorded {
                    name: call.name.clone(),
                    input: call.input.clone(),
                    answer,
                });
            }
        }
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
        Ok(Recording {
            path: path.to_owned(),
            tools,
            catalog,
            calls,
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
    /// Client messages answered with an error before rmcp saw them: one over the message limit
    /// (which rmcp would drop without a word, leaving the client waiting), a `tools/call` whose
    /// `params.name` is not a string.
    pub refused: Vec<crate::screen::Refused>,
    /// How the session broke, when it did not end with the client closing it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ServeReport {
    /// Whether anything is wrong: an unmatched call, an unknown name or a schema violation
    /// (what `--strict` fails on).
    pub fn has_findings(&self) -> bool {
        !(self.unmatched.is_empty()
            && self.unknown.is_empty()
            && self.schema_violations.is_empty()
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
    report: ServeReport,
}

/// The rmcp handler over a [`Recording`].
#[derive(Clone)]
struct Mock {
    recording: Arc<Recording>,
    case: Arc<Case>,
    matching: Matching,
    state: Arc<Mutex<State>>,
}

impl Mock {
    fn new(recording: Recording, matching: Matching) -> Mock {
        let case = Case {
            catalog: recording.catalog.clone(),
            ..Case::default()
        };
        let used = vec![false; recording.calls.len()];
        Mock {
            recording: Arc::new(recording),
            case: Arc::new(case),
            matching,
            state: Arc::new(Mutex::new(State {
                used,
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

    fn answer(&self, name: &str, input: Value) -> Result<CallToolResponse, ErrorData> {
        let mut state = self.state();
        state.report.calls += 1;
        if !self.recording.catalog.contains(name) {
            let unknown = self.unknown(name);
            state.report.unknown.push(unknown);
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        }
        let violation = match self.recording.catalog.validate(name, &input) {
            Err(SchemaError::Violations(errors)) => Some(errors),
            _ => None,
        };
        if let Some(errors) = &violation {
            state.report.schema_violations.push(Violation {
                name: name.to_owned(),
                input: input.clone(),
                errors: errors.clone(),
            });
        }
        let fits =
            |c: &Recorded| c.name == name && (self.matching == Matching::Name || c.input == input);
        let candidates: Vec<usize> = (0..self.recording.calls.len())
            .filter(|&i| fits(&self.recording.calls[i]))
            .collect();
        let chosen = candidates
            .iter()
            .copied()
            .find(|&i| !state.used[i])
            .or(candidates.last().copied());
        let Some(i) = chosen else {
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
                    "toolcall mcp serve: no recorded call of {name} with these arguments \
                     (--match name answers by name alone)"
                )),
            ])));
        };
        state.used[i] = true;
        state.report.matched.push(ClientCall {
            name: name.to_owned(),
            input,
            answered_by: Some(i + 1),
        });
        match &self.recording.calls[i].answer {
            Answer::Result(result) => serde_json::from_value::<CallToolResult>(result.clone())
                .map(CallToolResponse::Complete)
                .map_err(|e| {
                    ErrorData::internal_error(
                        format!("toolcall mcp serve: the recorded result cannot be sent: {e}"),
                        None,
                    )
                }),
            Answer::Error(error) => Err(ErrorData::new(
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
            )),
            Answer::Nothing => Err(ErrorData::internal_error(
                "toolcall mcp serve: the recording holds no answer to this call".to_owned(),
                None,
            )),
        }
    }
}

impl ServerHandler for Mock {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("toolcall-mcp-serve", env!("CARGO_PKG_VERSION")),
        )
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        self.answer(&request.name, input)
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
        let copier = tokio::spawn(copy_lines(from_rmcp, out));
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

/// Copies rmcp's lines to `out`, each whole under the lock.
async fn copy_lines(
    from: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    out: Arc<tokio::sync::Mutex<tokio::io::Stdout>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    let mut from = tokio::io::BufReader::new(from);
    loop {
        let mut line = Vec::new();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
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
                tokio::spawn(async move {
                    let _ = connection(stream, service, &listen, &state).await;
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
            write.write_all(data).await?;
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
