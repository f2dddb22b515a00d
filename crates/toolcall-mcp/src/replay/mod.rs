//! The replay itself: connect, list the tools, then check and make each call in order.
//!
//! Every await on the server is bounded by a timeout and raced against the stdout watcher, so a
//! broken server ends the replay with a sentence naming what broke, not with a hang. The child is
//! reaped on every path out of [`replay`].
//!
//! This file holds the entry points and their [`Options`]; each other job has its own file:
//!
//! - `report.rs` — what a replay hands back ([`Report`], [`Step`], [`Failure`]) and how each is
//!   written: the step line, the failure line, the summary line.
//! - `run.rs` — one connection's state (`Run`) and the guard every await on the server goes
//!   through (timeout, stdout fault, exit, signals).
//! - `connect.rs` — spawning or reaching the server and the handshake of the flow's protocol
//!   era, `auto`'s fallback to `initialize` included.
//! - `discover.rs` — under `auto`, `server/discover` time-boxed from the moment a stdio server
//!   read it, answered for when the server says nothing, and its stderr noise marked.
//! - `steps.rs` — `tools/list`, the snapshot drift check, and each call with its
//!   `input_required` rounds.
//! - `checks.rs` — what a call and its result are checked against (catalog, `outputSchema`,
//!   `expect_error`) and the sentences when they fail.
//! - `assert.rs` — a result checked against the call's `assert`.
//! - `references.rs` — a call's `${steps.ID…}` references filled in from earlier results.
//! - `explain.rs` — error wording: what went wrong awaiting the server, as a failure's sentence.
//! - `interrupts.rs` — Ctrl-C, SIGTERM and SIGHUP, when [`Options::handle_ctrl_c`] asks.

mod assert;
mod checks;
mod connect;
mod discover;
mod explain;
mod golden;
mod interrupts;
mod references;
mod report;
mod run;
mod session_check;
mod steps;
mod steps_of_kind;
mod verify;
#[cfg(feature = "http")]
mod wire;

use std::time::{Duration, Instant};

use serde_json::Value;

pub use golden::{update_flow, Difference, Update, Updated, REDACTED};
pub use report::{Failure, FailureKind, Report, Step};
pub(crate) use run::{Phase, Run};

use crate::Flow;

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
    /// JSON pointers left out of every `verify` comparison, besides the flow's own
    /// (`toolcall replay --ignore-path`).
    pub ignore_paths: Vec<String>,
    /// A `verify` step whose response differs from the recorded one does not fail the replay:
    /// it goes into [`Report::updates`], for the caller to write into the flow
    /// ([`crate::update_flow`], `toolcall replay --update`).
    pub update: bool,
    /// `toolcall replay --strict`: after a call timed out, the server gets up to
    /// [`Options::shutdown_grace`] to send the answers the replay gave up on, so the session
    /// check can name them late ([`Report::session`]); the caller fails a run with findings.
    pub strict: bool,
    /// Where `"protocol": "auto"` remembers the era each stdio server spoke last
    /// ([`default_protocol_cache`](crate::default_protocol_cache) is where the command line
    /// keeps it); `None`, the default, remembers nothing.
    pub protocol_cache: Option<std::path::PathBuf>,
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
            ignore_paths: Vec::new(),
            update: false,
            strict: false,
            protocol_cache: None,
        }
    }
}

/// Replays `flow` on a fresh single-threaded tokio runtime; `on_step` sees each step as it
/// passes.
pub fn replay_blocking(flow: &Flow, options: &Options, on_step: &mut dyn FnMut(&Step)) -> Report {
    block_on(replay(flow, options, on_step)).unwrap_or_else(|failure| Report {
        failure: Some(failure),
        ..Report::before_start(flow)
    })
}

/// Replays `flow`; `on_step` sees each step as it passes.
pub async fn replay(flow: &Flow, options: &Options, on_step: &mut dyn FnMut(&Step)) -> Report {
    // A skipped flow starts no server: its report says why, and nothing else.
    if flow.skip.is_some() {
        return Report::before_start(flow);
    }
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
        // As the server wrote them: rmcp's model keeps only the members it knows.
        Ok::<Vec<Value>, Failure>(run.wire_tools(&tools))
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
    block_on(list_catalog(flow, options)).unwrap_or_else(|failure| {
        let report = Report {
            failure: Some(failure.clone()),
            ..Report::before_start(flow)
        };
        (Err(failure), report)
    })
}

/// Runs `future` on a fresh single-threaded tokio runtime (what the `_blocking` entry points
/// share); the failure says the runtime could not be built.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Failure> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => Ok(runtime.block_on(future)),
        Err(e) => Err(Phase::new("start").fail(
            FailureKind::Start,
            format!("cannot start the async runtime: {e}"),
        )),
    }
}
