//! The session check: what a stdio session's raw stream shows beyond the steps' results, as
//! mcpsnoop's `check` reads a captured session.
//!
//! rmcp drops a response whose id matches no request, and a response that comes after the
//! replay gave up on its request, without a word; a server that writes to stderr or prints a
//! line to stdout after its last answer passes every step. So the child's stdio is teed: every
//! request the client writes (its id and method) and every response the server sends (its id)
//! is noted here as it passes, and the replay's report ends with what the notes show. Each is a
//! finding under `toolcall replay --strict`, and a note otherwise.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncWrite;
use toolcall_score::escape;

/// What a session check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionFindingKind {
    /// The server wrote to stderr.
    Stderr,
    /// A line on stdout that is not JSON-RPC, which no step saw (after the last answer).
    StrayStdout,
    /// A response whose id matches no request the client made.
    UnknownId,
    /// A second response to a request already answered.
    AnsweredTwice,
    /// A response to a request the replay had stopped waiting for (its call timed out).
    Late,
}

impl SessionFindingKind {
    /// Whether it breaks the stdio transport, so that `toolcall replay --strict` fails a flow
    /// on it. Output on stderr does not: the transport lets a server log there ("The server
    /// MAY write UTF-8 strings to its standard error (stderr) for logging purposes"), and
    /// most real servers do (server-everything at start, every Python SDK server per request),
    /// so a gate failing on it would fail every flow of theirs. It is always a note.
    pub fn breaks_the_transport(self) -> bool {
        !matches!(self, SessionFindingKind::Stderr)
    }

    /// The kind as the JSON report names it (`stray_stdout`).
    pub fn name(self) -> &'static str {
        match self {
            SessionFindingKind::Stderr => "stderr",
            SessionFindingKind::StrayStdout => "stray_stdout",
            SessionFindingKind::UnknownId => "unknown_id",
            SessionFindingKind::AnsweredTwice => "answered_twice",
            SessionFindingKind::Late => "late",
        }
    }
}

/// One thing the session check found, with the sentence that says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFinding {
    /// Which kind.
    pub kind: SessionFindingKind,
    /// What happened (escaped).
    pub message: String,
}

impl SessionFinding {
    /// Whether this finding counts against a flow under `--strict` (`strict` true): what breaks
    /// the transport does; output on stderr is a note either way (see
    /// [`SessionFindingKind::breaks_the_transport`]). Without `--strict` every finding is a note.
    pub fn fails_under(&self, strict: bool) -> bool {
        strict && self.kind.breaks_the_transport()
    }
}

impl fmt::Display for SessionFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A request the client made: its method, and whether the replay stopped waiting for it.
#[derive(Debug)]
struct Request {
    method: String,
    abandoned: bool,
}

/// What passed on one session's stdio, as far as the check needs it.
#[derive(Debug, Default)]
pub(crate) struct SessionLog {
    /// Requests by id (as JSON text: `1` and `"1"` are different ids).
    requests: BTreeMap<String, Request>,
    answered: BTreeSet<String>,
    findings: Vec<SessionFinding>,
    /// Bytes the client has written that do not end a line yet.
    partial: Vec<u8>,
    /// Bytes the client has written in all.
    written: u64,
    /// The `server/discover` requests the replay answered itself (a server that took one in
    /// and said nothing): the server's own answer, should it come, is left out of the stream.
    refused: BTreeSet<String>,
    /// Whether a server answered a refused `server/discover` with a result after all.
    late_discover_result: bool,
    /// The ids of the `server/discover` requests the client sent.
    discovers: BTreeSet<String>,
    /// Whether the client sent `initialize`.
    initialize_sent: bool,
}

/// The members of a message the check reads; the rest (a result of megabytes) is skipped.
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct RawRequest {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

pub(crate) type Shared = Arc<Mutex<SessionLog>>;

/// The method of the modern handshake.
const DISCOVER: &str = "server/discover";

impl SessionLog {
    pub(crate) fn shared() -> Shared {
        Arc::new(Mutex::new(SessionLog::default()))
    }

    /// A line the client wrote: a request is noted by its id.
    fn client_line(&mut self, line: &[u8]) {
        let notes = |r: RawRequest| (r.id, r.method);
        let parsed: Vec<(Option<Value>, Option<String>)> =
            match serde_json::from_slice::<Vec<RawRequest>>(line) {
                Ok(batch) => batch.into_iter().map(notes).collect(),
                Err(_) => serde_json::from_slice::<RawRequest>(line)
                    .map(notes)
                    .into_iter()
                    .collect(),
            };
        for (id, method) in parsed {
            if let (Some(id), Some(method)) = (id, method) {
                match method.as_str() {
                    DISCOVER => {
                        self.discovers.insert(id.to_string());
                    }
                    "initialize" => self.initialize_sent = true,
                    _ => {}
                }
                self.requests.insert(
                    id.to_string(),
                    Request {
                        method,
                        abandoned: false,
                    },
                );
            }
        }
    }

    /// A JSON-RPC line the server sent: a response is matched to its request.
    pub(crate) fn server_line(&mut self, line: &[u8]) {
        let messages: Vec<Message> = match serde_json::from_slice::<Vec<Message>>(line) {
            Ok(batch) => batch,
            Err(_) => serde_json::from_slice::<Message>(line)
                .into_iter()
                .collect(),
        };
        for message in messages {
            // A request or notification of the server's own, or a response without an id.
            let (Some(id), None) = (message.id, message.method) else {
                continue;
            };
            let key = id.to_string();
            let (kind, message) = match self.requests.get(&key) {
                None => (
                    SessionFindingKind::UnknownId,
                    format!(
                        "the server sent a response with id {}, which matches no request",
                        escape(&key)
                    ),
                ),
                Some(_) if self.answered.contains(&key) => (
                    SessionFindingKind::AnsweredTwice,
                    format!(
                        "the server answered request {} ({}) twice",
                        escape(&key),
                        escape(&self.requests[&key].method)
                    ),
                ),
                Some(request) if request.abandoned => (
                    SessionFindingKind::Late,
                    format!(
                        "the server answered request {} ({}) after the call had timed out",
                        escape(&key),
                        escape(&request.method)
                    ),
                ),
                Some(_) => {
                    self.answered.insert(key);
                    continue;
                }
            };
            self.answered.insert(key);
            self.findings.push(SessionFinding { kind, message });
        }
    }

    /// Bytes the client has written in all.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// How many `server/discover` requests the client sent.
    pub(crate) fn discover_requests(&self) -> u32 {
        u32::try_from(self.discovers.len()).unwrap_or(u32::MAX)
    }

    /// The id of a `server/discover` request nobody answered yet.
    pub(crate) fn awaited_discover(&self) -> Option<String> {
        self.discovers
            .iter()
            .find(|id| !self.answered.contains(*id) && !self.refused.contains(*id))
            .cloned()
    }

    /// Notes that the replay answers the awaited `server/discover` `id` itself; false when it
    /// is no such request (answered meanwhile).
    pub(crate) fn refuse_discover(&mut self, id: &str) -> bool {
        if self.awaited_discover().as_deref() != Some(id) {
            return false;
        }
        self.refused.insert(id.to_owned())
    }

    /// Whether the server answered a refused `server/discover` with a result after all.
    pub(crate) fn answered_discover_late(&self) -> bool {
        self.late_discover_result
    }

    /// Whether `line` is the server's answer to a `server/discover` the client no longer
    /// awaits: one the replay answered itself, or one rmcp gave up on when it sent
    /// `initialize` instead. Such a line is noted here and kept from rmcp, which would take it
    /// for the answer to `initialize`.
    pub(crate) fn drops_discover_answer(&mut self, line: &[u8]) -> bool {
        // Nothing to drop unless a `server/discover` is unanswered (most of a session).
        if self.discovers.iter().all(|id| self.answered.contains(id)) {
            return false;
        }
        let Ok(Message {
            id: Some(id),
            method: None,
            result,
        }) = serde_json::from_slice::<Message>(line)
        else {
            return false;
        };
        let key = id.to_string();
        let gave_up =
            self.refused.contains(&key) || (!self.answered.contains(&key) && self.initialize_sent);
        if !(self.discovers.contains(&key) && gave_up) {
            return false;
        }
        self.answered.insert(key);
        self.late_discover_result |= result.is_some();
        true
    }

    /// The replay stopped waiting: every request not answered yet is abandoned.
    pub(crate) fn abandon_outstanding(&mut self) {
        for (id, request) in &mut self.requests {
            if !self.answered.contains(id) {
                request.abandoned = true;
            }
        }
    }

    /// Whether a request the replay abandoned is still unanswered.
    pub(crate) fn awaits_abandoned(&self) -> bool {
        self.requests
            .iter()
            .any(|(id, r)| r.abandoned && !self.answered.contains(id))
    }

    /// What the check found on the stream.
    pub(crate) fn findings(&self) -> Vec<SessionFinding> {
        self.findings.clone()
    }
}

/// The child's stdin as rmcp writes to it, each line the client writes noted in the log.
pub(crate) struct TeeStdin<W> {
    inner: W,
    log: Shared,
}

impl<W> TeeStdin<W> {
    pub(crate) fn new(inner: W, log: Shared) -> TeeStdin<W> {
        TeeStdin { inner, log }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for TeeStdin<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let written = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &written {
            let mut log = this.log.lock().unwrap_or_else(|e| e.into_inner());
            log.written += *n as u64;
            let mut rest = &buf[..*n];
            while let Some(end) = rest.iter().position(|&b| b == b'\n') {
                let mut line = std::mem::take(&mut log.partial);
                line.extend_from_slice(&rest[..end]);
                log.client_line(&line);
                rest = &rest[end + 1..];
            }
            log.partial.extend_from_slice(rest);
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discover_answered_for_or_given_up_on_is_kept_from_the_client() {
        let mut log = SessionLog::default();
        log.client_line(br#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#);
        assert_eq!(log.discover_requests(), 1);
        assert_eq!(log.awaited_discover().as_deref(), Some("0"));
        assert!(log.refuse_discover("0"));
        assert!(!log.refuse_discover("0"), "refused once");
        assert_eq!(log.awaited_discover(), None);
        // The server's own answer, late: dropped, and a result says it was a modern server.
        assert!(log.drops_discover_answer(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#));
        assert!(log.answered_discover_late());
        assert!(log.findings().is_empty());

        // rmcp gave up by itself and sent `initialize`: the discover answer is not its answer.
        let mut log = SessionLog::default();
        log.client_line(br#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#);
        log.client_line(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
        let refused = br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}"#;
        assert!(log.drops_discover_answer(refused));
        assert!(!log.answered_discover_late());
        assert!(!log.drops_discover_answer(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));

        // Answered while awaited: passed on.
        let mut log = SessionLog::default();
        log.client_line(br#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#);
        assert!(!log.drops_discover_answer(refused));
    }

    #[test]
    fn responses_are_matched_to_requests_by_id() {
        let mut log = SessionLog::default();
        log.client_line(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        log.client_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        log.client_line(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#);
        log.server_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        log.server_line(br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#);
        log.server_line(br#"{"jsonrpc":"2.0","id":"1","result":{}}"#);
        log.server_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        log.abandon_outstanding();
        assert!(log.awaits_abandoned());
        log.server_line(br#"[{"jsonrpc":"2.0","id":"a","result":{}}]"#);
        assert!(!log.awaits_abandoned());
        let said: Vec<String> = log.findings().iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "the server sent a response with id \"1\", which matches no request",
                "the server answered request 1 (initialize) twice",
                "the server answered request \"a\" (tools/call) after the call had timed out",
            ]
        );
    }
}
