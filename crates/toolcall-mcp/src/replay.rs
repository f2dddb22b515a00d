//! The replay itself: connect, list the tools, then check and make each call in order.
//!
//! Every await on the server is bounded by a timeout and raced against the stdout watcher, so a
//! broken server ends the replay with a sentence naming what broke, not with a hang. The child is
//! reaped on every path out of [`replay`].

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::{ClientServiceExt, ServiceError};
use serde_json::Value;
use tokio::sync::watch;
use toolcall_score::{escape, Catalog, SchemaError, Tool};

use crate::child::{ChildServer, StdoutFault};
use crate::expect::{
    check_content, check_expectations, check_text, printable_result, summarize, Mismatch,
};
use crate::{Call, ExpectError, Flow, Protocol, Server};

/// Replay settings that are not part of a flow. A flow's own `timeouts` win over these.
#[derive(Clone, Debug)]
pub struct Options {
    /// Start-up plus `initialize`.
    pub initialize_timeout: Duration,
    /// Each request after `initialize`.
    pub call_timeout: Duration,
    /// The longest single message accepted from a stdio server.
    pub max_message_bytes: usize,
    /// How much of the server's stderr is kept for the failure report.
    pub stderr_tail_bytes: usize,
    /// After the last call, how long the server gets to exit on its own once its stdin is
    /// closed, before it is killed.
    pub shutdown_grace: Duration,
    /// End the replay (and kill the server) on Ctrl-C, SIGTERM or SIGHUP instead of dying with
    /// the server left behind. A stdio server runs in its own process group, so a terminal's Ctrl-C does not
    /// reach it: a command-line caller wants this on; a library caller that handles SIGINT
    /// itself leaves it off (the default).
    pub handle_ctrl_c: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            initialize_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(30),
            max_message_bytes: 4 * 1024 * 1024,
            stderr_tail_bytes: 64 * 1024,
            shutdown_grace: Duration::from_secs(2),
            handle_ctrl_c: false,
        }
    }
}

/// One call that went through.
#[derive(Clone, Debug)]
pub struct Step {
    /// 1-based.
    pub index: usize,
    /// The tool called.
    pub name: String,
    /// How long the call took.
    pub elapsed: Duration,
    /// What came back, for the one-line summary: `structuredContent`, or the first text block.
    pub result: Value,
    /// How many `tools/call` requests the call took: more than one when the server answered
    /// `input_required` and the flow's `input_responses` answered it.
    pub rounds: usize,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.result.get("refused").is_some() {
            "refused as expected"
        } else {
            "ok"
        };
        let rounds = if self.rounds > 1 {
            format!(" (in {} rounds: input asked and answered)", self.rounds)
        } else {
            String::new()
        };
        write!(
            f,
            "step {}: {} {how}{rounds}  {}",
            self.index,
            escape(&self.name),
            printable_result(&self.result)
        )
    }
}

/// Why a replay stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// The server could not be started or reached.
    Start,
    /// The server process exited.
    Exited,
    /// No answer in time.
    Timeout,
    /// The server printed something that is not JSON-RPC to stdout.
    NotJsonRpc,
    /// The server printed text without a newline next to a JSON-RPC message.
    Glued,
    /// One message was over [`Options::max_message_bytes`].
    TooLarge,
    /// The server broke the protocol in some other way.
    Protocol,
    /// The server's catalog drifted from the snapshot the flow names: a breaking or security
    /// change.
    CatalogDrift,
    /// The server answered `input_required` with a request the flow's `input_responses` do not
    /// answer, or kept asking.
    InputRequired,
    /// The flow calls a tool the server does not list.
    UnknownTool,
    /// The flow's arguments do not match the tool's `inputSchema`.
    InvalidArguments,
    /// The tool answered with `isError: true`.
    ToolError,
    /// The tool declares an `outputSchema` and its result's `structuredContent` is missing or
    /// does not match it (the MCP specification: "servers MUST provide structured results that
    /// conform to this schema").
    InvalidOutput,
    /// The server answered the call with a JSON-RPC error.
    RpcError,
    /// An `expect` assertion did not hold.
    Expectation,
    /// Ctrl-C, SIGTERM or SIGHUP (with [`Options::handle_ctrl_c`]).
    Interrupted,
}

/// What broke, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The 1-based step, when a call was under way.
    pub step: Option<usize>,
    /// Where it broke: `initialize`, `tools/list`, or `step 2: issue_refund`.
    pub phase: String,
    /// Which kind of failure.
    pub kind: FailureKind,
    /// The sentence that says what broke (names escaped).
    pub message: String,
    /// For an `expect` that did not hold: the pointer, the value expected and the value found.
    pub mismatch: Option<Box<Mismatch>>,
    /// For a JSON-RPC error: its code and message, as the server sent them.
    pub rpc_error: Option<(i64, String)>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.phase, self.message)
    }
}

/// Everything a replay found out.
#[derive(Clone, Debug)]
pub struct Report {
    /// The flow file.
    pub flow: PathBuf,
    /// The calls that went through, in order.
    pub steps: Vec<Step>,
    /// How many calls the flow has.
    pub planned: usize,
    /// The first failure; `None` when every step passed.
    pub failure: Option<Failure>,
    /// Spawning (or connecting) plus `initialize`.
    pub startup: Duration,
    /// `tools/list`, every page.
    pub list: Duration,
    /// The calls, the one that failed included.
    pub calls: Duration,
    /// The whole replay, shutdown included.
    pub total: Duration,
    /// How many tools the server listed.
    pub tools: usize,
    /// The stdio server's process id.
    pub server_pid: Option<u32>,
    /// How the stdio server exited (after being asked to, or killed).
    pub exit_status: Option<ExitStatus>,
    /// The last lines the server wrote to stderr.
    pub stderr_tail: Vec<String>,
    /// How many bytes the server wrote to stderr in all.
    pub stderr_bytes: u64,
    /// The MCP protocol version the server and the replay agreed on (`2025-11-25`,
    /// `2026-07-28`); `None` when the handshake did not finish.
    pub protocol_version: Option<String>,
    /// Under `"protocol": "auto"`: why `server/discover` failed when the replay had to start
    /// again with `initialize` on a fresh connection.
    pub discover_failed: Option<String>,
}

impl Report {
    /// The report of a replay of `flow` that has not started: no steps, no failure, no times.
    pub(crate) fn before_start(flow: &Flow) -> Report {
        Report {
            flow: flow.path.clone(),
            steps: Vec::new(),
            planned: flow.calls.len(),
            failure: None,
            startup: Duration::ZERO,
            list: Duration::ZERO,
            calls: Duration::ZERO,
            total: Duration::ZERO,
            tools: 0,
            server_pid: None,
            exit_status: None,
            stderr_tail: Vec::new(),
            stderr_bytes: 0,
            protocol_version: None,
            discover_failed: None,
        }
    }

    /// Whether every step passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// The summary line: `6 steps passed in 41 ms (start-up + initialize 12 ms, ...)`, or
    /// `FAILED after 1 of 2 steps in 40 ms (...)`.
    pub fn summary(&self) -> String {
        self.summary_with("FAILED")
    }

    /// The summary line of a replay that failed as its flow expects: `failed as expected after
    /// 1 of 2 steps in 40 ms (...)`; [`Report::summary`] when every step passed.
    pub fn summary_as_expected(&self) -> String {
        self.summary_with("failed as expected")
    }

    fn summary_with(&self, failed: &str) -> String {
        // The phases the replay reached, each with its time, the one that failed included; a
        // phase it never reached is left out rather than shown as 0.0 ms.
        let reached = match &self.failure {
            None => 3,
            Some(f) if f.step.is_some() => 3,
            Some(f) if f.phase == "tools/list" => 2,
            Some(_) => 1,
        };
        let parts = [
            ("start-up + handshake", self.startup),
            ("tools/list", self.list),
            ("calls", self.calls),
        ];
        let timings: Vec<String> = parts[..reached]
            .iter()
            .map(|(what, d)| format!("{what} {}", ms(*d)))
            .collect();
        let mut timings = format!(" ({})", timings.join(", "));
        if let Some(version) = &self.protocol_version {
            timings.push_str(&format!(" over MCP {version}"));
            if self.discover_failed.is_some() {
                timings.push_str(" (server/discover failed: started again with initialize)");
            }
        }
        match &self.failure {
            None => format!(
                "{} steps passed in {}{timings}",
                self.steps.len(),
                ms(self.total)
            ),
            Some(_) => format!(
                "{failed} after {} of {} steps in {}{timings}",
                self.steps.len(),
                self.planned,
                ms(self.total)
            ),
        }
    }
}

/// An error from rmcp as a person wants to read it: without the Rust type names it carries in
/// brackets (`[rmcp::transport::worker::WorkerTransport<…>]`), whole (the reason, a status and
/// a body, comes last), and escaped (controls, bidi overrides).
fn readable_error(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('[') {
        // The bracket's end, past any nested brackets of a generic type.
        let mut depth = 0usize;
        let close = rest[open..].char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + i);
                    }
                }
                _ => {}
            }
            None
        });
        let Some(close) = close else { break };
        let inside = &rest[open + 1..close];
        if inside.contains("::") {
            out.push_str(rest[..open].trim_end());
        } else {
            out.push_str(&rest[..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out.chars()
        .map(|c| {
            if toolcall_score::is_invisible(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// How a server refused a call.
enum Refusal<'a> {
    /// A JSON-RPC error: its code and message.
    Rpc(i64, &'a str),
    /// An `isError: true` result: its first text.
    IsError(&'a str),
}

/// What an `expect_error` asks for, in words.
fn describe(wanted: &ExpectError) -> String {
    match wanted {
        ExpectError::Code(code) => format!("JSON-RPC error {code}"),
        ExpectError::Text(text) => format!("an error containing \"{}\"", escape(text)),
        _ => "an isError result or a JSON-RPC error".to_owned(),
    }
}

/// The step of a call the server refused as `wanted` asks, or the failure saying how the
/// refusal differed.
fn refused(
    phase: &Phase,
    call: &Call,
    wanted: &ExpectError,
    refusal: &Refusal<'_>,
    elapsed: Duration,
) -> Result<Step, Failure> {
    let (text, got) = match refusal {
        Refusal::Rpc(code, message) => (
            *message,
            format!("JSON-RPC error {code}: {}", escape(message)),
        ),
        Refusal::IsError(text) => (*text, format!("an isError result: {}", escape(text))),
    };
    let matches = match wanted {
        ExpectError::Code(code) => matches!(refusal, Refusal::Rpc(c, _) if c == code),
        ExpectError::Text(want) => text.contains(want.as_str()),
        _ => true,
    };
    if !matches {
        return Err(phase.fail(
            FailureKind::Expectation,
            format!("expected {}, got {got}", describe(wanted)),
        ));
    }
    Ok(Step {
        index: phase.step.unwrap_or_default(),
        name: call.name.clone(),
        elapsed,
        rounds: 1,
        result: match refusal {
            Refusal::Rpc(code, message) => {
                serde_json::json!({"refused": {"code": code, "message": message}})
            }
            Refusal::IsError(text) => {
                serde_json::json!({"refused": {"isError": true, "text": text}})
            }
        },
    })
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

/// Replays `flow` on a fresh single-threaded tokio runtime; `on_step` sees each step as it
/// passes.
pub fn replay_blocking(flow: &Flow, options: &Options, on_step: &mut dyn FnMut(&Step)) -> Report {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(replay(flow, options, on_step)),
        Err(e) => Report {
            failure: Some(Failure {
                step: None,
                phase: "start".into(),
                kind: FailureKind::Start,
                message: format!("cannot start the async runtime: {e}"),
                mismatch: None,
                rpc_error: None,
            }),
            ..Report::before_start(flow)
        },
    }
}

/// Replays `flow`; `on_step` sees each step as it passes.
pub async fn replay(flow: &Flow, options: &Options, on_step: &mut dyn FnMut(&Step)) -> Report {
    let started = Instant::now();
    let mut run = Run::new(flow, options);
    let outcome = run.drive(on_step).await;
    let clean = outcome.is_ok();
    if let Err(failure) = outcome {
        run.report.failure = Some(failure);
    }
    run.finish(clean).await;
    run.report.total = started.elapsed();
    // What the environment put into the flow is never printed or reported (the steps were
    // masked as they passed).
    let mut report = run.report;
    if let Some(failure) = &mut report.failure {
        failure.message = flow.mask(&failure.message);
        if let Some(m) = &mut failure.mismatch {
            m.expected = flow.mask_value(&m.expected);
            m.got = m.got.as_ref().map(|g| flow.mask_value(g));
        }
    }
    for line in &mut report.stderr_tail {
        *line = flow.mask(line);
    }
    report
}

/// The server's whole catalog: every page of `tools/list`, each tool as the wire has it. The
/// flow's calls are not made. The report says how the start-up went and holds the stderr tail.
pub async fn list_catalog(flow: &Flow, options: &Options) -> (Result<Vec<Value>, Failure>, Report) {
    let started = Instant::now();
    let mut run = Run::new(flow, options);
    let listed = async {
        let client = run.connect().await;
        run.report.startup = started.elapsed();
        let client = client?;
        let phase = Phase::new("tools/list");
        let timeout = run.call_timeout;
        let tools = run.guarded(&phase, timeout, client.list_all_tools()).await;
        let _ = tokio::time::timeout(options.shutdown_grace, client.cancel()).await;
        let tools = tools?;
        tools
            .iter()
            .map(|t| {
                serde_json::to_value(t).map_err(|e| {
                    phase.fail(FailureKind::Protocol, format!("cannot re-read a tool: {e}"))
                })
            })
            .collect::<Result<Vec<Value>, Failure>>()
    }
    .await;
    if let Err(failure) = &listed {
        run.report.failure = Some(Failure {
            message: flow.mask(&failure.message),
            ..failure.clone()
        });
    }
    run.finish(listed.is_ok()).await;
    run.report.total = started.elapsed();
    (listed, run.report)
}

/// [`list_catalog`] on a fresh single-threaded tokio runtime.
pub fn list_catalog_blocking(
    flow: &Flow,
    options: &Options,
) -> (Result<Vec<Value>, Failure>, Report) {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(list_catalog(flow, options)),
        Err(e) => {
            let failure = Failure {
                step: None,
                phase: "start".into(),
                kind: FailureKind::Start,
                message: format!("cannot start the async runtime: {e}"),
                mismatch: None,
                rpc_error: None,
            };
            let report = Report {
                failure: Some(failure.clone()),
                ..Report::before_start(flow)
            };
            (Err(failure), report)
        }
    }
}

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// Rounds of `input_required` one call may take, as rmcp's own helper allows.
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// One connection to a flow's server, from start-up to shutdown, and what it found out.
pub(crate) struct Run<'a> {
    flow: &'a Flow,
    options: &'a Options,
    init_timeout: Duration,
    pub(crate) call_timeout: Duration,
    child: Option<ChildServer>,
    faults: Option<watch::Receiver<Option<StdoutFault>>>,
    interrupts: Interrupts,
    pub(crate) report: Report,
}

/// Where a request was made, for the failure line.
#[derive(Clone)]
pub(crate) struct Phase {
    pub(crate) step: Option<usize>,
    pub(crate) label: String,
}

impl Phase {
    pub(crate) fn new(label: &str) -> Phase {
        Phase {
            step: None,
            label: label.to_owned(),
        }
    }

    pub(crate) fn fail(&self, kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure {
            step: self.step,
            phase: self.label.clone(),
            kind,
            message: message.into(),
            mismatch: None,
            rpc_error: None,
        }
    }

    /// The failure of a server process that could not be started, naming its command and folder.
    fn cannot_start(&self, server: &crate::StdioServer, error: &dyn std::fmt::Display) -> Failure {
        self.fail(
            FailureKind::Start,
            format!(
                "cannot start the server `{}` (in {}): {error}",
                escape(&server.command.to_string_lossy()),
                escape(&server.cwd.to_string_lossy())
            ),
        )
    }
}

impl<'a> Run<'a> {
    /// A run of `flow` that has not started.
    pub(crate) fn new(flow: &'a Flow, options: &'a Options) -> Run<'a> {
        Run {
            flow,
            options,
            init_timeout: flow
                .timeouts
                .initialize
                .unwrap_or(options.initialize_timeout),
            call_timeout: flow.timeouts.call.unwrap_or(options.call_timeout),
            child: None,
            faults: None,
            interrupts: Interrupts::new(options.handle_ctrl_c),
            report: Report::before_start(flow),
        }
    }
}

impl Run<'_> {
    async fn drive(&mut self, on_step: &mut dyn FnMut(&Step)) -> Result<(), Failure> {
        let started = Instant::now();
        let client = self.connect().await;
        // Timed whether it worked or not: a failed start-up's time is what the summary shows.
        self.report.startup = started.elapsed();
        let client = client?;
        let result = self.calls(&client, on_step).await;
        // Closing the client closes the server's stdin: the polite way to ask it to exit.
        let _ = tokio::time::timeout(self.options.shutdown_grace, client.cancel()).await;
        result
    }

    /// Starts (or reaches) the server and completes the handshake the flow's protocol asks for.
    pub(crate) async fn connect(&mut self) -> Result<Client, Failure> {
        // Under `auto` the phase keeps the name of the handshake every legacy server ends in.
        let phase = Phase::new(match self.flow.protocol {
            Protocol::Modern => "server/discover",
            _ => "initialize",
        });
        #[cfg(feature = "http")]
        if let Server::Http {
            url,
            start: Some(server),
            ..
        } = &self.flow.server
        {
            self.start_http(&phase, server, url).await?;
        }
        let client = match self.flow.protocol {
            Protocol::Legacy => {
                self.handshake(&phase, ClientLifecycleMode::Initialize)
                    .await
            }
            Protocol::Modern => {
                let modern = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                };
                self.handshake(&phase, modern).await.map_err(|mut failure| {
                    if failure.kind == FailureKind::RpcError {
                        failure.message.push_str(
                            " (a server that answers server/discover with an error speaks only \
                             legacy MCP: \"protocol\": \"auto\" or \"legacy\" reaches it)",
                        );
                    }
                    failure
                })
            }
            Protocol::Auto => {
                let auto = ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                    legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
                };
                match self.handshake(&phase, auto).await {
                    // rmcp falls back by itself when the server says it is legacy; this is the
                    // other kind of legacy server: one that drops the connection or answers an
                    // HTTP error to `server/discover`. Start again, the old way.
                    Err(failure)
                        if !matches!(
                            failure.kind,
                            FailureKind::Interrupted | FailureKind::Timeout
                        ) =>
                    {
                        self.report.discover_failed = Some(failure.message);
                        if matches!(self.flow.server, Server::Stdio(_)) {
                            self.finish(false).await;
                        }
                        self.handshake(&phase, ClientLifecycleMode::Initialize)
                            .await
                    }
                    other => other,
                }
            }
        }?;
        self.report.protocol_version = client
            .peer_info()
            .map(|info| info.protocol_version.to_string());
        Ok(client)
    }

    /// One connection and one handshake: a stdio server is spawned for it.
    async fn handshake(
        &mut self,
        phase: &Phase,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Client, Failure> {
        let mut config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolcall-replay", env!("CARGO_PKG_VERSION")),
        );
        // rmcp's default is its latest version, which has no `initialize`: an `initialize`
        // names the newest version that has one.
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        let timeout = self.init_timeout;
        match &self.flow.server {
            Server::Stdio(server) => {
                let (child, pipes) = ChildServer::spawn(
                    server,
                    self.options.max_message_bytes,
                    self.options.stderr_tail_bytes,
                )
                .map_err(|e| phase.cannot_start(server, &e))?;
                self.report.server_pid = child.pid();
                self.faults = Some(child.faults());
                self.child = Some(child);
                self.guarded(
                    phase,
                    timeout,
                    config.serve_with_lifecycle(pipes, lifecycle),
                )
                .await
            }
            #[cfg(feature = "http")]
            Server::Http { url, headers, .. } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    // Checked when the flow was read; anything else is refused here too.
                    match (
                        http::HeaderName::from_bytes(name.as_bytes()),
                        http::HeaderValue::from_str(value),
                    ) {
                        (Ok(name), Ok(value)) => {
                            custom.insert(name, value);
                        }
                        _ => {
                            return Err(phase.fail(
                                FailureKind::Start,
                                format!("the header `{}` cannot be sent", escape(name)),
                            ))
                        }
                    }
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom),
                );
                self.guarded(
                    phase,
                    timeout,
                    config.serve_with_lifecycle(transport, lifecycle),
                )
                .await
            }
            #[cfg(not(feature = "http"))]
            Server::Http { .. } => Err(phase.fail(
                FailureKind::Start,
                "this build of toolcall-mcp has no streamable HTTP client (feature `http`)",
            )),
        }
    }

    async fn calls(
        &mut self,
        client: &Client,
        on_step: &mut dyn FnMut(&Step),
    ) -> Result<(), Failure> {
        let started = Instant::now();
        let phase = Phase::new("tools/list");
        let timeout = self.call_timeout;
        let listed = self.guarded(&phase, timeout, client.list_all_tools()).await;
        self.report.list = started.elapsed();
        let listed = listed?;
        self.report.tools = listed.len();
        if let Some(snapshot) = &self.flow.snapshot {
            let live: Vec<Value> = listed
                .iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect();
            let drift: Vec<String> =
                crate::catalog::diff(&snapshot.catalog, &crate::catalog::snapshot(&live))
                    .iter()
                    .filter(|c| c.severity >= crate::catalog::Severity::Security)
                    .map(ToString::to_string)
                    .collect();
            if !drift.is_empty() {
                let file = escape(&snapshot.path.to_string_lossy()).to_string();
                return Err(phase.fail(
                    FailureKind::CatalogDrift,
                    format!(
                        "the catalog drifted from {file}: {}; to accept it: toolcall mcp diff {} \
                         --snapshot {file} --write",
                        drift.join("; "),
                        escape(&self.flow.path.to_string_lossy())
                    ),
                ));
            }
        }
        // The output schemas as a catalog of their own: a catalog checks a value against each
        // tool's schema, whichever side of the call the schema describes.
        let outputs = Catalog::new(listed.iter().filter_map(|t| {
            let mut tool = Tool::new(&t.name, "");
            tool.input_schema = Some(Value::Object((**t.output_schema.as_ref()?).clone()));
            Some(tool)
        }));
        let catalog = Catalog::new(listed.into_iter().map(|t| {
            let mut tool = Tool::new(&t.name, t.description.as_deref().unwrap_or_default());
            tool.input_schema = Some(Value::Object((*t.input_schema).clone()));
            tool
        }));
        let catalogs = Catalogs {
            tools: catalog,
            outputs,
        };

        for (i, call) in self.flow.calls.iter().enumerate() {
            let phase = Phase {
                step: Some(i + 1),
                label: format!("step {}: {}", i + 1, escape(&call.name)),
            };
            let started = Instant::now();
            let step = self.call(client, &catalogs, call, &phase).await;
            self.report.calls += started.elapsed();
            let mut step = step?;
            step.result = self.flow.mask_value(&step.result);
            on_step(&step);
            self.report.steps.push(step);
        }
        Ok(())
    }

    /// One logical call: `tools/call`, and while the server answers `input_required`, the
    /// flow's answers to what it asked, sent back with its `requestState` (MCP 2026-07-28's
    /// multi round-trip requests). Each round has the call timeout.
    async fn rounds(
        &mut self,
        client: &Client,
        call: &Call,
        phase: &Phase,
        mut params: CallToolRequestParams,
    ) -> Result<(rmcp::model::CallToolResult, usize), Failure> {
        use rmcp::model::CallToolResponse;
        let timeout = self.call_timeout;
        for round in 1..=MAX_INPUT_ROUNDS {
            let response = self
                .guarded(phase, timeout, client.call_tool_once(params.clone()))
                .await?;
            let asked =
                match response {
                    CallToolResponse::Complete(result) => return Ok((result, round)),
                    CallToolResponse::InputRequired(asked) => asked,
                    CallToolResponse::Task(_) => return Err(phase.fail(
                        FailureKind::Protocol,
                        "the server answered with a task (SEP-2663), which a replay does not poll",
                    )),
                    _ => {
                        return Err(phase.fail(
                            FailureKind::Protocol,
                            "the server answered tools/call with a result of an unknown type",
                        ))
                    }
                };
            let requests = asked.input_requests.unwrap_or_default();
            if requests.is_empty() && asked.request_state.is_none() {
                return Err(phase.fail(
                    FailureKind::Protocol,
                    "the server answered input_required with neither inputRequests nor \
                     requestState",
                ));
            }
            let mut answers = std::collections::BTreeMap::new();
            for (key, request) in requests {
                let request = serde_json::to_value(&request).unwrap_or_default();
                let method = request["method"].as_str().unwrap_or_default();
                let Some(answer) = call
                    .input_responses
                    .get(&key)
                    .or_else(|| call.input_responses.get(method))
                else {
                    let message = request["params"]["message"]
                        .as_str()
                        .map(|m| format!(": \"{}\"", escape(m)))
                        .unwrap_or_default();
                    return Err(phase.fail(
                        FailureKind::InputRequired,
                        format!(
                            "the server asked for input `{}` ({}{message}), which the call's \
                             input_responses do not answer (by that key or by the method)",
                            escape(&key),
                            escape(method)
                        ),
                    ));
                };
                answers.insert(key, answer.clone());
            }
            params.input_responses = (!answers.is_empty()).then_some(answers);
            params.request_state = asked.request_state;
        }
        Err(phase.fail(
            FailureKind::InputRequired,
            format!(
                "the server still asked for input after {MAX_INPUT_ROUNDS} rounds (the flow's \
                 answers do not satisfy it)"
            ),
        ))
    }

    async fn call(
        &mut self,
        client: &Client,
        catalogs: &Catalogs,
        call: &Call,
        phase: &Phase,
    ) -> Result<Step, Failure> {
        let catalog = &catalogs.tools;
        // A call that must be refused may name a tool the server does not list: what the
        // server answers such a call (an agent's namespacing bug, recorded) is the test.
        if !catalog.contains(&call.name) && call.expect_error.is_none() {
            return Err(phase.fail(FailureKind::UnknownTool, unknown_tool(&call.name, catalog)));
        }
        // A call that must be refused is sent as written: the server's refusal is the test.
        if call.expect_error.is_none() {
            match catalog.validate(&call.name, &call.input) {
                Ok(()) => {}
                Err(SchemaError::Violations(errors)) => {
                    return Err(phase.fail(
                        FailureKind::InvalidArguments,
                        format!(
                            "the arguments do not match the tool's inputSchema: {}",
                            schema_errors(&errors)
                        ),
                    ))
                }
                // The server listed a schema nothing can be checked against: its fault, not the
                // call's (which was never sent).
                Err(SchemaError::Uncompilable(why)) => {
                    return Err(phase.fail(
                        FailureKind::Protocol,
                        format!(
                            "the server's inputSchema for `{}` does not compile, so no call can be \
                             checked against it (the server is at fault, not the call): {}",
                            escape(&call.name),
                            escape(&why)
                        ),
                    ))
                }
                // The regex engine gave up on a `pattern`: nothing is known against the call, and
                // the server checks its own input.
                Err(_) => {}
            }
        }
        let mut params = CallToolRequestParams::new(call.name.clone());
        params.arguments = call.input.as_object().cloned();

        let started = Instant::now();
        let result = self.rounds(client, call, phase, params).await;
        let elapsed = started.elapsed();
        let (result, rounds) = match result {
            Ok((result, rounds)) => (Ok(result), rounds),
            Err(failure) => (Err(failure), 1),
        };
        let result = match (result, &call.expect_error) {
            (Ok(result), _) => result,
            (Err(failure), Some(wanted)) => match &failure.rpc_error {
                Some((code, message)) => {
                    let refusal = Refusal::Rpc(*code, message);
                    return refused(phase, call, wanted, &refusal, elapsed);
                }
                None => return Err(failure),
            },
            (Err(failure), None) => return Err(failure),
        };
        // Work on the wire shape: it is what the flow's pointers are written against.
        let result = serde_json::to_value(&result).map_err(|e| {
            phase.fail(
                FailureKind::Protocol,
                format!("cannot re-read the result: {e}"),
            )
        })?;
        if let Some(wanted) = &call.expect_error {
            let text = first_text(&result).unwrap_or(Value::Null);
            if result.get("isError") == Some(&Value::Bool(true)) {
                let text = text.as_str().unwrap_or_default().to_owned();
                return refused(phase, call, wanted, &Refusal::IsError(&text), elapsed);
            }
            return Err(phase.fail(
                FailureKind::Expectation,
                format!(
                    "expected the call to be refused ({}), but it succeeded: {}",
                    describe(wanted),
                    printable_result(&result.get("structuredContent").cloned().unwrap_or(text))
                ),
            ));
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(phase.fail(
                FailureKind::ToolError,
                format!(
                    "the tool returned isError: true: {}",
                    printable_result(&first_text(&result).unwrap_or(Value::Null))
                ),
            ));
        }
        check_output(&catalogs.outputs, &call.name, &result)
            .map_err(|message| phase.fail(FailureKind::InvalidOutput, message))?;
        check_expectations(&result, &call.expect).map_err(|(message, mismatch)| Failure {
            mismatch: mismatch.map(Box::new),
            ..phase.fail(FailureKind::Expectation, message)
        })?;
        if let Some(wanted) = &call.expect_text {
            check_text(&result, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        if let Some(wanted) = &call.expect_content {
            check_content(&result, wanted)
                .map_err(|message| phase.fail(FailureKind::Expectation, message))?;
        }
        Ok(Step {
            index: phase.step.unwrap_or_default(),
            name: call.name.clone(),
            elapsed,
            rounds,
            // Structured content, else the first text; else what the blocks are (an image's
            // type, MIME type and size, never its data).
            result: result
                .get("structuredContent")
                .cloned()
                .or_else(|| first_text(&result))
                .or_else(|| {
                    let blocks = result.get("content")?.as_array()?;
                    (!blocks.is_empty())
                        .then(|| Value::Array(blocks.iter().map(summarize).collect()))
                })
                .unwrap_or(Value::Null),
        })
    }

    /// Awaits `op` with a timeout, racing it against stdout faults; turns every way it can fail
    /// into a [`Failure`] that says what happened.
    pub(crate) async fn guarded<T, E>(
        &mut self,
        phase: &Phase,
        timeout: Duration,
        op: impl Future<Output = Result<T, E>>,
    ) -> Result<T, Failure>
    where
        E: Into<OpError>,
    {
        let fault = watch_fault(self.faults.clone());
        let exited = server_exit(self.child.as_mut());
        let outcome = tokio::select! {
            r = op => r.map_err(Into::into),
            f = fault => Err(OpError::Stdout(f)),
            status = exited => Err(OpError::Exited(status)),
            () = tokio::time::sleep(timeout) => Err(OpError::TimedOut),
            signal = self.interrupts.next() => Err(OpError::Interrupted(signal)),
        };
        match outcome {
            Ok(v) => Ok(v),
            Err(error) => Err(self.explain(phase, timeout, error).await),
        }
    }

    async fn explain(&mut self, phase: &Phase, timeout: Duration, error: OpError) -> Failure {
        // A stdout fault closes the pipe rmcp reads, so it also shows up as "closed": the fault
        // is the real reason and is always recorded first.
        let fault = self.faults.as_ref().and_then(|rx| rx.borrow().clone());
        if let Some(fault) = fault {
            return fault_failure(phase, fault);
        }
        match error {
            OpError::Interrupted(signal) => phase.fail(
                FailureKind::Interrupted,
                format!("interrupted ({signal}); the server was killed"),
            ),
            OpError::TimedOut => {
                let waiting = if phase.step.is_some() {
                    "the tool did not answer"
                } else if phase.label == "initialize" {
                    "the server did not answer initialize"
                } else if phase.label == "server/discover" {
                    "the server did not answer server/discover"
                } else {
                    "the server did not answer"
                };
                phase.fail(
                    FailureKind::Timeout,
                    format!("{waiting} within {}", secs(timeout)),
                )
            }
            OpError::Stdout(fault) => fault_failure(phase, fault),
            OpError::Exited(status) => phase.fail(
                FailureKind::Exited,
                format!("the server exited ({})", describe_exit(status)),
            ),
            OpError::Rpc { code, message } => Failure {
                rpc_error: Some((code.into(), message.clone())),
                ..phase.fail(
                    FailureKind::RpcError,
                    format!(
                        "the server answered with JSON-RPC error {code}: {}",
                        escape(&message)
                    ),
                )
            },
            OpError::Other(message) => {
                let status = match self.child.as_mut() {
                    Some(child) => child.exit_status(Duration::from_millis(500)).await,
                    None => None,
                };
                match status {
                    Some(status) => phase.fail(
                        FailureKind::Exited,
                        format!("the server exited ({})", describe_exit(status)),
                    ),
                    None => phase.fail(
                        FailureKind::Protocol,
                        format!("the connection failed: {}", readable_error(&message)),
                    ),
                }
            }
        }
    }

    /// Starts the HTTP server a flow names with its `command`, and waits (within the start-up
    /// timeout) until its `url`'s port takes a connection; its exit before that is the failure.
    #[cfg(feature = "http")]
    async fn start_http(
        &mut self,
        phase: &Phase,
        server: &crate::StdioServer,
        url: &str,
    ) -> Result<(), Failure> {
        let child = ChildServer::spawn_http(server, self.options.stderr_tail_bytes)
            .map_err(|e| phase.cannot_start(server, &e))?;
        self.report.server_pid = child.pid();
        self.child = Some(child);
        let authority = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        let address = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            authority.to_owned()
        } else if url.starts_with("https://") {
            format!("{authority}:443")
        } else {
            format!("{authority}:80")
        };
        let deadline = Instant::now() + self.init_timeout;
        loop {
            if tokio::net::TcpStream::connect(&address).await.is_ok() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut() {
                if let Some(status) = child.exit_status(Duration::ZERO).await {
                    return Err(phase.fail(
                        FailureKind::Exited,
                        format!(
                            "the server the flow starts exited before it listened on {} ({})",
                            escape(&address),
                            describe_exit(status)
                        ),
                    ));
                }
            }
            if Instant::now() >= deadline {
                return Err(phase.fail(
                    FailureKind::Timeout,
                    format!(
                        "the server the flow starts did not listen on {} within {}",
                        escape(&address),
                        ms(self.init_timeout)
                    ),
                ));
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                signal = self.interrupts.next() => {
                    return Err(phase.fail(
                        FailureKind::Interrupted,
                        format!("interrupted ({signal}); the server was killed"),
                    ));
                }
            }
        }
    }

    /// Shuts the server down (politely after a clean run, at once after a failure) and collects
    /// its stderr tail.
    pub(crate) async fn finish(&mut self, clean: bool) {
        if let Some(child) = self.child.take() {
            // An HTTP server does not stop when the client goes: it is killed at once.
            let http = matches!(self.flow.server, Server::Http { .. });
            let grace = if clean && !http {
                self.options.shutdown_grace
            } else {
                Duration::ZERO
            };
            let child = child.shutdown(grace).await;
            self.report.exit_status = child.status;
            self.report.stderr_tail = child.stderr_tail;
            self.report.stderr_bytes = child.stderr_bytes;
        }
    }
}

/// What went wrong while awaiting the server.
pub(crate) enum OpError {
    TimedOut,
    Interrupted(&'static str),
    Stdout(StdoutFault),
    /// The stdio server's process ended (whether or not its stdout closed with it).
    Exited(ExitStatus),
    Rpc {
        code: i32,
        message: String,
    },
    Other(String),
}

impl From<ServiceError> for OpError {
    fn from(e: ServiceError) -> OpError {
        match e {
            ServiceError::McpError(data) => OpError::Rpc {
                code: data.code.0,
                message: data.message.into_owned(),
            },
            other => OpError::Other(other.to_string()),
        }
    }
}

impl From<rmcp::service::ClientInitializeError> for OpError {
    fn from(e: rmcp::service::ClientInitializeError) -> OpError {
        match e {
            rmcp::service::ClientInitializeError::JsonRpcError(data) => OpError::Rpc {
                code: data.code.0,
                message: data.message.into_owned(),
            },
            other => OpError::Other(other.to_string()),
        }
    }
}

/// The signals that end a replay: Ctrl-C (SIGINT), SIGTERM and SIGHUP (what `timeout`, CI
/// runners and a closed terminal send). Listened for from the start of the replay, when
/// [`Options::handle_ctrl_c`] asks, so one that arrives between two requests is still seen; any
/// of them ends the replay the same way, the server and its process group killed, then the
/// report.
struct Interrupts {
    #[cfg(unix)]
    streams: Vec<(tokio::signal::unix::Signal, &'static str)>,
    #[cfg(not(unix))]
    watch: bool,
}

impl Interrupts {
    fn new(watch: bool) -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let kinds = [
                (SignalKind::interrupt(), "Ctrl-C"),
                (SignalKind::terminate(), "SIGTERM"),
                (SignalKind::hangup(), "SIGHUP"),
            ];
            let streams = if watch {
                kinds
                    .into_iter()
                    .filter_map(|(kind, name)| signal(kind).ok().map(|s| (s, name)))
                    .collect()
            } else {
                Vec::new()
            };
            Interrupts { streams }
        }
        #[cfg(not(unix))]
        Interrupts { watch }
    }

    /// The next signal's name; never resolves when none is watched.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                return std::future::pending().await;
            }
            std::future::poll_fn(|cx| {
                for (stream, name) in &mut self.streams {
                    if stream.poll_recv(cx).is_ready() {
                        return std::task::Poll::Ready(*name);
                    }
                }
                std::task::Poll::Pending
            })
            .await
        }
        #[cfg(not(unix))]
        {
            if self.watch && tokio::signal::ctrl_c().await.is_ok() {
                return "Ctrl-C";
            }
            std::future::pending().await
        }
    }
}

async fn watch_fault(faults: Option<watch::Receiver<Option<StdoutFault>>>) -> StdoutFault {
    if let Some(mut rx) = faults {
        if let Ok(fault) = rx.wait_for(Option::is_some).await {
            if let Some(fault) = fault.clone() {
                return fault;
            }
        }
    }
    std::future::pending().await
}

fn fault_failure(phase: &Phase, fault: StdoutFault) -> Failure {
    match fault {
        StdoutFault::NotJsonRpc(line) => phase.fail(
            FailureKind::NotJsonRpc,
            format!(
                "the server printed a line that is not JSON-RPC to stdout: \"{}\" (log to stderr instead)",
                escape(&line)
            ),
        ),
        StdoutFault::GluedBefore(text) => phase.fail(
            FailureKind::Glued,
            format!(
                "the server printed \"{}\" to stdout without a newline, glued to the JSON-RPC message after it (log to stderr instead)",
                escape(&text)
            ),
        ),
        StdoutFault::GluedAfter(text) => phase.fail(
            FailureKind::Glued,
            format!(
                "the server printed \"{}\" to stdout right after a JSON-RPC message, without a newline (log to stderr instead)",
                escape(&text)
            ),
        ),
        StdoutFault::TooLong(limit) => phase.fail(
            FailureKind::TooLarge,
            format!(
                "the server sent a message longer than {limit} bytes (raise the limit with --max-message-bytes)"
            ),
        ),
        StdoutFault::Io(e) => phase.fail(
            FailureKind::Protocol,
            format!("cannot read the server's stdout: {}", escape(&e)),
        ),
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => status.to_string(),
    }
}

/// What `tools/list` declared: the tools with their input schemas, and the output schemas of
/// those that declare one.
struct Catalogs {
    tools: Catalog,
    outputs: Catalog,
}

/// Checks a successful result against the tool's `outputSchema`, when it declares one: the
/// result must carry `structuredContent`, and it must match.
fn check_output(outputs: &Catalog, name: &str, result: &Value) -> Result<(), String> {
    if !outputs.contains(name) {
        return Ok(());
    }
    let Some(structured) = result.get("structuredContent") else {
        return Err(
            "the tool declares an outputSchema, but its result has no structuredContent".into(),
        );
    };
    match outputs.validate(name, structured) {
        Ok(()) => Ok(()),
        Err(SchemaError::Violations(errors)) => Err(format!(
            "the structuredContent does not match the tool's outputSchema: {}",
            schema_errors(&errors)
        )),
        Err(SchemaError::Uncompilable(why)) => Err(format!(
            "the server's outputSchema does not compile, so its structuredContent cannot be \
             checked: {}",
            escape(&why)
        )),
        Err(_) => Ok(()),
    }
}

/// A schema check's errors on one line, each escaped (they quote the checked values).
fn schema_errors(errors: &[String]) -> String {
    errors
        .iter()
        .map(|e| escape(e).to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

fn unknown_tool(name: &str, catalog: &Catalog) -> String {
    const SHOWN: usize = 20;
    let mut names: Vec<String> = catalog
        .names()
        .take(SHOWN)
        .map(|n| escape(n).to_string())
        .collect();
    if catalog.len() > SHOWN {
        names.push(format!("and {} more", catalog.len() - SHOWN));
    }
    let mut message = format!(
        "not a tool the server lists ({}: {})",
        match catalog.len() {
            1 => "1 tool".to_owned(),
            n => format!("{n} tools"),
        },
        names.join(", ")
    );
    // Every suggestion, as the scorer gives them: when two are about as close, the first is
    // not always the one meant.
    let suggestions = toolcall_score::suggest(name, catalog);
    if !suggestions.is_empty() {
        let names: Vec<String> = suggestions.iter().map(|n| escape(n).to_string()).collect();
        message.push_str(&format!("; did you mean {}?", names.join(" or ")));
    }
    message
}

fn first_text(result: &Value) -> Option<Value> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|c| c.get("text"))
        .cloned()
}

/// The stdio server's exit, for racing a request against it; never, for an HTTP server or once
/// the exit cannot be waited for.
async fn server_exit(child: Option<&mut ChildServer>) -> ExitStatus {
    match child {
        Some(child) => match child.exited().await {
            Some(status) => status,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rmcp_error_reads_without_its_type_names() {
        let message = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::a::B<reqwest::Client>>] error: unexpected server response: HTTP 401 Unauthorized {\"error\":\"no [token]\"}";
        assert_eq!(
            readable_error(message),
            "Send message error Transport error: unexpected server response: HTTP 401 Unauthorized {\"error\":\"no [token]\"}"
        );
        assert_eq!(readable_error("bad\u{202e}"), "bad\\u{202e}");
    }
}
