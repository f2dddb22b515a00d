//! One connection to a flow's server and the guard every await on it goes through.
//!
//! [`Run`] holds the child process, its stdout-fault watch and the report being filled in;
//! [`Run::guarded`] races each request against its timeout, a stdout fault, the server's exit
//! and the interrupt signals, so that no await on the server can hang the replay.

use std::future::Future;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use rmcp::model::ClientConfig;
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceError;
use tokio::sync::watch;
use toolcall_score::escape;

use super::interrupts::Interrupts;
use super::{Failure, FailureKind, Options, Report, Step};
use crate::child::{ChildServer, StdoutFault, ToolPages};
use crate::{Flow, Server};

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// One connection to a flow's server, from start-up to shutdown, and what it found out.
pub(crate) struct Run<'a> {
    pub(super) flow: &'a Flow,
    pub(super) options: &'a Options,
    pub(super) init_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(super) child: Option<ChildServer>,
    pub(super) faults: Option<watch::Receiver<Option<StdoutFault>>>,
    /// The `tools/list` pages as the server wrote them (stdio: read off its stdout; HTTP: off
    /// the response body), for a snapshot that keeps what rmcp's model drops.
    pub(super) pages: Option<ToolPages>,
    pub(super) interrupts: Interrupts,
    pub(crate) report: Report,
    /// The session check's notes of the stdio server's stream.
    pub(super) session: Option<crate::session::Shared>,
    /// The wire result of each call with an `id` that went through, by id: what a later
    /// call's `${steps.ID…}` reads.
    pub(super) captured: std::collections::BTreeMap<String, serde_json::Value>,
    /// A server answered a `server/discover` with a result after the replay had given up on
    /// it: a modern server that was slow, not a legacy one.
    pub(super) late_discover_result: bool,
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
            sent: None,
        }
    }

    /// The failure of a server process that could not be started, naming its command and folder.
    pub(super) fn cannot_start(
        &self,
        server: &crate::StdioServer,
        error: &dyn std::fmt::Display,
    ) -> Failure {
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
            pages: None,
            interrupts: Interrupts::new(options.handle_ctrl_c),
            report: Report::before_start(flow),
            session: None,
            captured: std::collections::BTreeMap::new(),
            late_discover_result: false,
        }
    }
}

impl Run<'_> {
    /// The catalog rmcp listed as `typed`, each tool as the wire had it when the raw pages were
    /// seen and hold the same tools (by name, in order); else rmcp's model of it.
    pub(crate) fn wire_tools(&self, typed: &[rmcp::model::Tool]) -> Vec<serde_json::Value> {
        let raw: Vec<serde_json::Value> = self
            .pages
            .as_ref()
            .map(|p| p.take().into_iter().flatten().collect())
            .unwrap_or_default();
        let same = raw.len() == typed.len()
            && raw
                .iter()
                .zip(typed)
                .all(|(r, t)| r.get("name").and_then(serde_json::Value::as_str) == Some(&*t.name));
        if same {
            return raw;
        }
        typed
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect()
    }

    pub(super) async fn drive(&mut self, on_step: &mut dyn FnMut(&Step)) -> Result<(), Failure> {
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
            () = tokio::time::sleep(timeout) => {
                // What the server answers to it from now on is late (the session check).
                if let Some(session) = &self.session {
                    session.lock().unwrap_or_else(|e| e.into_inner()).abandon_outstanding();
                }
                Err(OpError::TimedOut)
            }
            signal = self.interrupts.next() => Err(OpError::Interrupted(signal)),
        };
        match outcome {
            Ok(v) => Ok(v),
            Err(error) => Err(self.explain(phase, timeout, error).await),
        }
    }

    /// Shuts the server down (politely after a clean run, at once after a failure) and collects
    /// its stderr tail.
    pub(crate) async fn finish(&mut self, clean: bool) {
        self.await_late_answers().await;
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
            self.report.stderr_hidden = child.stderr_hidden;
        }
        self.check_session();
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
    /// An HTTP 401 or 403 with a `WWW-Authenticate` challenge (what MCP's OAuth servers
    /// answer), whose body rmcp does not keep: [`Run::explain`] asks for it again.
    Auth {
        status: u16,
        challenge: String,
    },
    Other(String),
}

/// The status and `WWW-Authenticate` challenge of an HTTP 401 or 403 somewhere under `error`.
fn auth_challenge(error: &(dyn std::error::Error + 'static)) -> Option<(u16, String)> {
    #[cfg(feature = "http")]
    {
        use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
        let mut at = Some(error);
        while let Some(e) = at {
            if let Some(auth) = e.downcast_ref::<AuthRequiredError>() {
                return Some((401, auth.www_authenticate_header.clone()));
            }
            if let Some(scope) = e.downcast_ref::<InsufficientScopeError>() {
                return Some((403, scope.www_authenticate_header.clone()));
            }
            at = next_cause(e);
        }
    }
    #[cfg(not(feature = "http"))]
    let _ = error;
    None
}

impl From<ServiceError> for OpError {
    fn from(e: ServiceError) -> OpError {
        match e {
            ServiceError::McpError(data) => OpError::Rpc {
                code: data.code.0,
                message: data.message.into_owned(),
            },
            other => match auth_challenge(&other) {
                Some((status, challenge)) => OpError::Auth { status, challenge },
                None => OpError::Other(with_cause(other.to_string(), &other)),
            },
        }
    }
}

impl From<rmcp::service::ClientInitializeError> for OpError {
    fn from(e: rmcp::service::ClientInitializeError) -> OpError {
        use rmcp::service::ClientInitializeError;
        match e {
            ClientInitializeError::JsonRpcError(data) => OpError::Rpc {
                code: data.code.0,
                message: data.message.into_owned(),
            },
            // Its transport error is a field, not a `source`: the chain starts there.
            ClientInitializeError::TransportError { ref error, .. } => {
                match auth_challenge(error) {
                    Some((status, challenge)) => OpError::Auth { status, challenge },
                    None => OpError::Other(with_cause(e.to_string(), error)),
                }
            }
            other => match auth_challenge(&other) {
                Some((status, challenge)) => OpError::Auth { status, challenge },
                None => OpError::Other(with_cause(other.to_string(), &other)),
            },
        }
    }
}

/// `message` with the root cause of `error` after it, unless it says it already: reqwest says
/// "error sending request for url (…)" and only its last source says "Connection refused".
/// A refused connection is named so, in words a person searches for.
pub(super) fn with_cause(message: String, error: &(dyn std::error::Error + 'static)) -> String {
    let mut root = error;
    while let Some(next) = next_cause(root) {
        root = next;
    }
    let cause = match root.downcast_ref::<std::io::Error>() {
        Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("connection refused ({io})")
        }
        _ => root.to_string(),
    };
    if std::ptr::addr_eq(root, error) || message.contains(&cause) {
        message
    } else {
        format!("{message}: {cause}")
    }
}

/// The error under `error`: its `source`, or the client error rmcp's HTTP transport holds
/// without naming it as one.
fn next_cause<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    #[cfg(feature = "http")]
    {
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        if let Some(StreamableHttpError::Client(client)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(client);
        }
    }
    error.source()
}

pub(super) async fn watch_fault(
    faults: Option<watch::Receiver<Option<StdoutFault>>>,
) -> StdoutFault {
    if let Some(mut rx) = faults {
        if let Ok(fault) = rx.wait_for(Option::is_some).await {
            if let Some(fault) = fault.clone() {
                return fault;
            }
        }
    }
    std::future::pending().await
}

/// The stdio server's exit, for racing a request against it; never, for an HTTP server or once
/// the exit cannot be waited for.
pub(super) async fn server_exit(child: Option<&mut ChildServer>) -> ExitStatus {
    match child {
        Some(child) => match child.exited().await {
            Some(status) => status,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}
