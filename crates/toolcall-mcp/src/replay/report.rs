//! What a replay hands back: the steps that passed, the failure that ended it, the report around
//! them, and how each is written (a step's line, the failure line, the summary line).
//!
//! Changes here are changes to what `toolcall replay` prints and what a library caller reads.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use serde_json::Value;
use toolcall_score::escape;

use crate::expect::{printable_result, Mismatch};
use crate::Flow;

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
    /// Why the call was not made (its `skip` or `skip_unless_env`): `None` for a call made.
    pub skipped: Option<String>,
    /// The arguments as sent, when `${steps.…}` references in the flow's `input` were filled
    /// in (masked as the rest of the report); `None` when the flow's `input` went as written.
    pub sent: Option<Value>,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(reason) = &self.skipped {
            return write!(
                f,
                "step {}: {} skipped ({})",
                self.index,
                escape(&self.name),
                escape(reason)
            );
        }
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
    /// One message was over [`Options::max_message_bytes`](crate::Options::max_message_bytes).
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
    /// A `${steps.ID…}` reference in a call's `input` found no value: the step has no result,
    /// or no value at the path.
    Capture,
    /// Ctrl-C, SIGTERM or SIGHUP (with [`Options::handle_ctrl_c`](crate::Options::handle_ctrl_c)).
    Interrupted,
    /// A step under `verify` answered other than its recorded response, or has none recorded.
    Verify,
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
    /// The failing call's arguments as sent, when `${steps.…}` references in the flow's
    /// `input` were filled in (masked as the rest of the report), as [`Step::sent`].
    pub sent: Option<Box<Value>>,
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
    /// How many of them are left out of [`Report::stderr_tail`]: what a legacy server wrote
    /// while refusing `server/discover` under `"protocol": "auto"`.
    pub stderr_hidden: u64,
    /// How many times the server was started (0 for an HTTP server the flow does not start):
    /// 2 when `"protocol": "auto"` started it again after `server/discover` ended it.
    pub server_starts: u32,
    /// How many `server/discover` requests were sent to a stdio server.
    pub discover_requests: u32,
    /// Under `"protocol": "auto"`: the era came from the protocol cache, spoken at once
    /// (`initialize` for a server that spoke legacy MCP last time, no `server/discover`; for a
    /// modern one `server/discover` with no fallback).
    pub protocol_remembered: bool,
    /// What went wrong with the protocol cache: unreadable (ignored), or wrong about the
    /// server (forgotten, and the server probed afresh).
    pub protocol_notes: Vec<String>,
    /// The MCP protocol version the server and the replay agreed on (`2025-11-25`,
    /// `2026-07-28`); `None` when the handshake did not finish.
    pub protocol_version: Option<String>,
    /// Under `"protocol": "auto"`: why `server/discover` failed when the replay had to start
    /// again with `initialize` on a fresh connection.
    pub discover_failed: Option<String>,
    /// With [`Options::update`](crate::Options::update): each step under `verify` whose
    /// response differs from the recorded one (or has none recorded), to write into the flow.
    pub updates: Vec<crate::replay::golden::Update>,
    /// What the session check found on a stdio server's stream: stderr output, a stray stdout
    /// line no step saw, a response whose id matches no request or that came twice or late.
    /// Findings under `toolcall replay --strict` ([`Options::strict`](crate::Options::strict)),
    /// notes otherwise.
    pub session: Vec<crate::SessionFinding>,
    /// Why the flow was not replayed (its `skip` or `skip_unless_env`): no server was started.
    pub skipped: Option<String>,
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
            stderr_hidden: 0,
            server_starts: 0,
            discover_requests: 0,
            protocol_remembered: false,
            protocol_notes: Vec::new(),
            protocol_version: None,
            discover_failed: None,
            updates: Vec::new(),
            session: Vec::new(),
            skipped: flow.skip.as_deref().map(|reason| flow.mask(reason)),
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
        if let Some(reason) = &self.skipped {
            return format!("skipped ({})", escape(reason));
        }
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
        // Skipped steps are counted apart: a skipped step never passed.
        let skipped = self.steps.iter().filter(|s| s.skipped.is_some()).count();
        let and_skipped = if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        };
        match &self.failure {
            None => format!(
                "{} steps passed{and_skipped} in {}{timings}",
                self.steps.len() - skipped,
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

pub(super) fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}
