//! The stdio server as a child process, with its stdout and stderr watched by us, not by rmcp.
//!
//! rmcp's own child-process transport skips a non-JSON stdout line silently, and text printed
//! without a newline glues itself to the next response, which is then lost: the call hangs until
//! a timeout with nothing to say why. So we read the child's stdout ourselves, line by line, pass
//! each valid JSON-RPC line on to rmcp through an in-memory pipe, and stop at the first line that
//! is not, remembering what it was. stderr is drained into a bounded ring buffer so a chatty server
//! never blocks on a full pipe, and its tail can be shown when anything fails. Each message
//! passed on, and each the client writes to stdin (`TeeStdin`), is also noted for the session
//! check (`session.rs`).
//!
//! Through the handshake a [`HandshakeWatch`] also sees the pipes from outside: how much of
//! its stdin the server has not read and how much stderr it wrote (second handles on both
//! pipes; FIONREAD on Linux), and it can write an answer into rmcp's pipe for a server that
//! never gives one; the stdout filter then keeps the server's own late answer from rmcp.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::leftovers::{self, Mark};
use crate::session::{SessionLog, Shared, TeeStdin};
use crate::StdioServer;

/// Something wrong on the child's stdout: the first one ends the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StdoutFault {
    /// A whole line that is not a JSON-RPC message.
    NotJsonRpc(String),
    /// Text printed without a newline, then a JSON-RPC message on the same line.
    GluedBefore(String),
    /// A JSON-RPC message, then text without a newline.
    GluedAfter(String),
    /// One line longer than the limit.
    TooLong(usize),
    /// Reading failed.
    Io(String),
}

/// Every `tools/list` page the server answered, each tool as its bytes had it: rmcp's `Tool`
/// keeps only the members it models, and a snapshot must keep them all (`execution`, and what
/// the protocol adds next), or a change of them could never show.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolPages(Arc<Mutex<Vec<Vec<serde_json::Value>>>>);

impl ToolPages {
    /// Keeps the tools of `message` (or of each message of a batch) if it is a response whose
    /// result lists tools.
    pub(crate) fn note(&self, message: &serde_json::Value) {
        match message {
            serde_json::Value::Array(batch) => batch.iter().for_each(|m| self.note(m)),
            serde_json::Value::Object(m) => {
                if let Some(tools) = m
                    .get("result")
                    .and_then(|r| r.get("tools"))
                    .and_then(serde_json::Value::as_array)
                {
                    if let Ok(mut pages) = self.0.lock() {
                        pages.push(tools.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The pages noted so far, which are then forgotten.
    pub(crate) fn take(&self) -> Vec<Vec<serde_json::Value>> {
        self.0
            .lock()
            .map(|mut pages| std::mem::take(&mut *pages))
            .unwrap_or_default()
    }
}

/// The bytes most recently written to stderr, up to a fixed size, and how many were written in
/// all.
#[derive(Debug)]
pub(crate) struct StderrRing {
    tail: VecDeque<u8>,
    cap: usize,
    total: u64,
    /// Bytes in this range of positions (counted from the first byte ever written) are left out
    /// of the tail: what a legacy server wrote while refusing `server/discover`, which says
    /// nothing about why a flow failed and would fill the whole tail (Python SDK 1.x servers
    /// log 5 to 7 KB of validation errors for it).
    hidden: Option<(u64, u64)>,
}

impl StderrRing {
    /// An empty ring of `cap` bytes, shared between its drain tasks and the server.
    fn shared(cap: usize) -> Arc<Mutex<StderrRing>> {
        Arc::new(Mutex::new(StderrRing::new(cap)))
    }

    fn new(cap: usize) -> StderrRing {
        StderrRing {
            tail: VecDeque::with_capacity(cap.min(64 * 1024)),
            cap: cap.max(1),
            total: 0,
            hidden: None,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let over = (self.tail.len() + bytes.len()).saturating_sub(self.cap);
        self.tail.drain(..over);
        self.tail.extend(bytes);
    }

    /// The last `lines` complete-or-not lines, lossily decoded, the hidden range left out.
    pub(crate) fn tail_lines(&self, lines: usize) -> Vec<String> {
        let first = self.total - self.tail.len() as u64;
        let (from, to) = self.hidden.unwrap_or((0, 0));
        let mut bytes = Vec::with_capacity(self.tail.len());
        // Whether the kept bytes begin at the ring's first byte, which may be inside a line.
        let mut starts_cut = first > 0;
        for (pos, &b) in (first..).zip(self.tail.iter()) {
            if (from..to).contains(&pos) {
                if bytes.is_empty() {
                    starts_cut = false;
                } else if pos == from && bytes.last() != Some(&b'\n') {
                    // What is left out may begin inside a line: the seam ends it.
                    bytes.push(b'\n');
                }
                continue;
            }
            bytes.push(b);
        }
        let text = String::from_utf8_lossy(&bytes);
        let all: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
        // The first line may be cut by the ring unless it holds everything ever written.
        let skip_partial = usize::from(starts_cut && all.len() > 1);
        let start = all.len().saturating_sub(lines).max(skip_partial);
        all[start..]
            .iter()
            .map(|l| l.trim_end_matches('\r').to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// How many of the bytes written are left out of the tail.
    fn hidden_bytes(&self) -> u64 {
        self.hidden.map_or(0, |(from, to)| to.saturating_sub(from))
    }
}

/// A running stdio server.
pub(crate) struct ChildServer {
    child: Child,
    pid: Option<u32>,
    mark: Mark,
    stderr: Arc<Mutex<StderrRing>>,
    faults: watch::Receiver<Option<StdoutFault>>,
    pages: ToolPages,
    /// A second handle on the server's stdin pipe, kept through the handshake only: it tells
    /// how much of what was sent the server has not read ([`HandshakeWatch::unread_stdin`]).
    #[cfg(unix)]
    stdin_probe: Option<Arc<std::os::fd::OwnedFd>>,
    /// A second handle on the read end of its stderr pipe, through the handshake only: what
    /// the server wrote that the drain has not taken in yet counts too, or a line written just
    /// before the server read its input would seem written after.
    #[cfg(unix)]
    stderr_probe: Option<Arc<std::os::fd::OwnedFd>>,
    /// The pipe's end rmcp reads the server's messages from, shared with the stdout filter: a
    /// handshake watch writes an answer there for a server that never gives one.
    to_rmcp: Option<Arc<tokio::sync::Mutex<tokio::io::DuplexStream>>>,
    tasks: Vec<JoinHandle<()>>,
    /// What the session check notes of a stdio server's stream (none for an HTTP server).
    session: Option<Shared>,
}

/// The pipe rmcp talks through: it reads the filtered stdout and writes to the child's stdin.
pub(crate) type Pipes = (tokio::io::DuplexStream, TeeStdin<ChildStdin>);

/// How big the in-memory pipe between our stdout reader and rmcp is.
const PIPE_BYTES: usize = 256 * 1024;

impl ChildServer {
    /// Starts the server. The environment is inherited, plus the flow's `env`.
    pub(crate) fn spawn(
        server: &StdioServer,
        max_message_bytes: usize,
        stderr_tail_bytes: usize,
    ) -> std::io::Result<(ChildServer, Pipes)> {
        let mark = Mark::new();
        let mut child = command(server, &mark, Stdio::piped()).spawn()?;
        let pid = child.id();
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        #[cfg(unix)]
        let stdin_probe = {
            use std::os::fd::AsFd;
            stdin.as_fd().try_clone_to_owned().ok().map(Arc::new)
        };
        #[cfg(unix)]
        let stderr_probe = {
            use std::os::fd::AsFd;
            stderr.as_fd().try_clone_to_owned().ok().map(Arc::new)
        };

        let ring = StderrRing::shared(stderr_tail_bytes);
        let (fault_tx, faults) = watch::channel(None);
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let ours = Arc::new(tokio::sync::Mutex::new(ours));
        let session = SessionLog::shared();
        let pages = ToolPages::default();

        let stderr_task = tokio::spawn(drain_stderr(stderr, Arc::clone(&ring)));
        let stdout_task = tokio::spawn(filter_stdout(
            BufReader::with_capacity(64 * 1024, stdout),
            Arc::clone(&ours),
            fault_tx,
            max_message_bytes,
            Some(Arc::clone(&session)),
            pages.clone(),
        ));
        Ok((
            ChildServer {
                child,
                pid,
                mark,
                stderr: ring,
                faults,
                pages,
                #[cfg(unix)]
                stdin_probe,
                #[cfg(unix)]
                stderr_probe,
                to_rmcp: Some(ours),
                tasks: vec![stderr_task, stdout_task],
                session: Some(Arc::clone(&session)),
            },
            (theirs, TeeStdin::new(stdin, session)),
        ))
    }

    /// Starts an HTTP server a flow names with its `command`: its own process group and mark as
    /// a stdio server has, stdin closed, and stdout and stderr both drained into the tail (an
    /// HTTP server logs to either, and nothing on them is protocol).
    #[cfg(feature = "http")]
    pub(crate) fn spawn_http(
        server: &StdioServer,
        stderr_tail_bytes: usize,
    ) -> std::io::Result<ChildServer> {
        let mark = Mark::new();
        let mut child = command(server, &mark, Stdio::null()).spawn()?;
        let pid = child.id();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let ring = StderrRing::shared(stderr_tail_bytes);
        // No stdout fault for an HTTP server: nothing ever sends one.
        let (_, faults) = watch::channel(None);
        let tasks = vec![
            tokio::spawn(drain_stderr(stderr, Arc::clone(&ring))),
            tokio::spawn(drain_stderr(stdout, Arc::clone(&ring))),
        ];
        Ok(ChildServer {
            child,
            pid,
            mark,
            stderr: ring,
            faults,
            pages: ToolPages::default(),
            #[cfg(unix)]
            stdin_probe: None,
            #[cfg(unix)]
            stderr_probe: None,
            to_rmcp: None,
            tasks,
            session: None,
        })
    }

    /// The `tools/list` pages read from the server's stdout, as they were written.
    pub(crate) fn tool_pages(&self) -> ToolPages {
        self.pages.clone()
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The session check's notes of this server's stream.
    pub(crate) fn session(&self) -> Option<Shared> {
        self.session.clone()
    }

    /// A receiver that changes to `Some` on the first stdout fault.
    pub(crate) fn faults(&self) -> watch::Receiver<Option<StdoutFault>> {
        self.faults.clone()
    }

    /// What the handshake's watch reads of this stdio server's pipes; `None` for an HTTP
    /// server.
    pub(crate) fn handshake_watch(&self) -> Option<HandshakeWatch> {
        Some(HandshakeWatch {
            pid: self.pid,
            session: self.session.clone()?,
            to_rmcp: Arc::clone(self.to_rmcp.as_ref()?),
            stderr: Arc::clone(&self.stderr),
            #[cfg(unix)]
            stdin_probe: self.stdin_probe.clone(),
            #[cfg(unix)]
            stderr_probe: self.stderr_probe.clone(),
        })
    }

    /// Lets go of the second handle on the server's stdin once the handshake is over: from now
    /// on closing the client's side is the server's end of input.
    pub(crate) fn release_stdin(&mut self) {
        #[cfg(unix)]
        {
            self.stdin_probe = None;
            self.stderr_probe = None;
        }
    }

    /// Leaves the stderr bytes from position `from` to what was written by now out of the tail
    /// shown.
    pub(crate) fn hide_stderr_since(&self, from: u64) {
        let mut ring = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let to = ring.total;
        if to > from {
            ring.hidden = Some((from, to));
        }
    }

    /// Waits for the child to exit (cancel-safe: dropping the future leaves the child as it was).
    /// A grandchild that keeps the server's stdout open keeps the pipe from closing, so the
    /// server's own exit is what says it is gone.
    pub(crate) async fn exited(&mut self) -> Option<ExitStatus> {
        self.child.wait().await.ok()
    }

    /// The exit status, if the child has exited or exits within `grace`.
    pub(crate) async fn exit_status(&mut self, grace: Duration) -> Option<ExitStatus> {
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        }
    }

    /// The stderr tail.
    pub(crate) fn stderr(&self) -> (Vec<String>, u64) {
        let ring = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        (ring.tail_lines(STDERR_TAIL_LINES), ring.total())
    }

    /// How many stderr bytes are left out of the tail.
    pub(crate) fn stderr_hidden(&self) -> u64 {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .hidden_bytes()
    }

    /// Ends the child: waits up to `grace` for it to exit on its own (its stdin is closed by now
    /// when the session ended cleanly), then kills it, and always reaps it.
    pub(crate) async fn shutdown(mut self, grace: Duration) -> Ended {
        // Our own handle on its stdin would keep the server from ever seeing its input end.
        self.release_stdin();
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => {
                // The server is gone; anything it started and left behind goes too.
                self.kill_group();
                self.kill_marked();
                Some(status)
            }
            _ => {
                // Who descends from the server is known only while it is alive to be asked.
                #[cfg(target_os = "linux")]
                let tree = leftovers::find(&self.mark, self.pid);
                self.kill_group();
                #[cfg(target_os = "linux")]
                leftovers::kill(&tree);
                let _ = self.child.start_kill();
                let status = self.child.wait().await.ok();
                self.kill_marked();
                status
            }
        };
        // The readers end on EOF now that the child is gone; give them a moment to take in the
        // last of stderr, but a grandchild holding the pipes open must not keep us waiting.
        let tasks = std::mem::take(&mut self.tasks);
        let aborts: Vec<_> = tasks.iter().map(JoinHandle::abort_handle).collect();
        let _ = tokio::time::timeout(Duration::from_millis(200), async {
            for task in tasks {
                let _ = task.await;
            }
        })
        .await;
        for abort in aborts {
            abort.abort();
        }
        let (stderr_tail, stderr_bytes) = self.stderr();
        Ended {
            status,
            stderr_tail,
            stderr_bytes,
            stderr_hidden: self.stderr_hidden(),
        }
    }
}

impl ChildServer {
    /// SIGKILL to the server's process group (the server and everything it started).
    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                // ESRCH (nothing left in the group) is the usual, happy answer.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

impl ChildServer {
    /// SIGKILL to whatever left the group but still carries this server's mark.
    fn kill_marked(&self) {
        #[cfg(target_os = "linux")]
        leftovers::kill_marked(&self.mark);
    }
}

/// The command that starts `server`: its arguments, its environment plus `mark`, its folder,
/// stdout and stderr piped, stdin as given, killed with the handle. Its own process group: a
/// wrapper (`npx`, `uv run`, a shell script) and whatever it started are killed together. It
/// also keeps a terminal's Ctrl-C away from the server; the caller handles that (see
/// `Options::handle_ctrl_c`).
fn command(server: &StdioServer, mark: &Mark, stdin: Stdio) -> Command {
    let mut command = Command::new(&server.command);
    command
        .args(&server.args)
        .envs(&server.env)
        .env(leftovers::MARK_VAR, mark.value())
        .current_dir(&server.cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// What is left of a child once it is reaped.
pub(crate) struct Ended {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stderr_tail: Vec<String>,
    pub(crate) stderr_bytes: u64,
    /// How many of those are left out of the tail (what the server wrote while refusing
    /// `server/discover`).
    pub(crate) stderr_hidden: u64,
}

/// What the handshake's watch reads of a stdio server's pipes while `server/discover` is
/// awaited: whether the server has read the request, whether it answered, what it wrote to
/// stderr; and the way to answer for a server that does not.
#[derive(Clone)]
pub(crate) struct HandshakeWatch {
    pid: Option<u32>,
    session: Shared,
    to_rmcp: Arc<tokio::sync::Mutex<tokio::io::DuplexStream>>,
    stderr: Arc<Mutex<StderrRing>>,
    #[cfg(unix)]
    stdin_probe: Option<Arc<std::os::fd::OwnedFd>>,
    #[cfg(unix)]
    stderr_probe: Option<Arc<std::os::fd::OwnedFd>>,
}

impl HandshakeWatch {
    /// How many bytes written to the server's stdin it has not read (Linux, where either end of
    /// a pipe says how full it is); `None` when that cannot be told.
    pub(crate) fn unread_stdin(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            self.stdin_probe
                .as_deref()
                .and_then(|fd| rustix::io::ioctl_fionread(fd).ok())
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The CPU time (in clock ticks) the server's process group has used: a server that uses
    /// none is waiting, not working (Linux; `None` elsewhere, or when `/proc` cannot be read).
    pub(crate) fn cpu_ticks(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            crate::leftovers::group_cpu_ticks(self.pid?)
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// How many bytes the client has written to the server's stdin.
    pub(crate) fn written(&self) -> u64 {
        self.log().written()
    }

    /// How many bytes the server has written to stderr: those drained, and (on Linux) those
    /// still in the pipe.
    pub(crate) fn stderr_total(&self) -> u64 {
        // The pipe first: a byte drained in between is then counted twice, never missed; a
        // mark that comes late leaves less out of the tail, which is the safe side.
        #[cfg(target_os = "linux")]
        let pending = self
            .stderr_probe
            .as_deref()
            .and_then(|fd| rustix::io::ioctl_fionread(fd).ok())
            .unwrap_or(0);
        #[cfg(not(target_os = "linux"))]
        let pending = 0;
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).total + pending
    }

    /// The id (as JSON text) of the `server/discover` request awaiting its answer, if any.
    pub(crate) fn awaited_discover(&self) -> Option<String> {
        self.log().awaited_discover()
    }

    /// How many `server/discover` requests the client sent.
    pub(crate) fn discover_requests(&self) -> u32 {
        self.log().discover_requests()
    }

    /// Whether the server answered a `server/discover` with a result after the replay had
    /// answered it with a refusal: a modern server that was only slow.
    pub(crate) fn answered_discover_late(&self) -> bool {
        self.log().answered_discover_late()
    }

    /// Answers the awaited `server/discover` (`id`) with a JSON-RPC error for the server, which
    /// took it in and said nothing: rmcp's `auto` then goes on with `initialize` on the same
    /// connection, and the server's own answer, should one come, is left out of the stream.
    pub(crate) async fn refuse_discover(&self, id: &str, message: &str) -> bool {
        let Ok(id_value) = serde_json::from_str::<serde_json::Value>(id) else {
            return false;
        };
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id_value,
            "error": {"code": -32601, "message": message},
        });
        let mut line = answer.to_string().into_bytes();
        line.push(b'\n');
        // Marked before it is written, so that a real answer racing it is left out.
        if !self.log().refuse_discover(id) {
            return false;
        }
        let mut pipe = self.to_rmcp.lock().await;
        pipe.write_all(&line).await.is_ok()
    }

    fn log(&self) -> std::sync::MutexGuard<'_, SessionLog> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How many stderr lines a failure shows.
pub(crate) const STDERR_TAIL_LINES: usize = 20;

async fn drain_stderr(mut stderr: impl tokio::io::AsyncRead + Unpin, ring: Arc<Mutex<StderrRing>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => ring
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(&buf[..n]),
        }
    }
}

enum Line {
    Complete,
    Eof,
    TooLong,
}

/// Reads one line (without its `\n`) into `buf`, giving up past `limit` bytes.
async fn read_line_limited<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                buf.extend_from_slice(&available[..i]);
                reader.consume(i + 1);
                return Ok(if buf.len() > limit {
                    Line::TooLong
                } else {
                    Line::Complete
                });
            }
            None => {
                let n = available.len();
                buf.extend_from_slice(available);
                reader.consume(n);
                if buf.len() > limit {
                    return Ok(Line::TooLong);
                }
            }
        }
    }
}

async fn filter_stdout<R: AsyncBufRead + Unpin>(
    mut stdout: R,
    to_rmcp: Arc<tokio::sync::Mutex<tokio::io::DuplexStream>>,
    faults: watch::Sender<Option<StdoutFault>>,
    limit: usize,
    session: Option<Shared>,
    pages: ToolPages,
) {
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        let fault = match read_line_limited(&mut stdout, &mut line, limit).await {
            Err(e) => Some(StdoutFault::Io(e.to_string())),
            Ok(Line::Eof) => return,
            Ok(Line::TooLong) => Some(StdoutFault::TooLong(limit)),
            Ok(Line::Complete) => classify(&line).err(),
        };
        if let Some(fault) = fault {
            // Record the fault before rmcp sees the pipe close, so whoever asks why knows.
            faults.send_replace(Some(fault));
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(session) = &session {
            let mut log = session.lock().unwrap_or_else(|e| e.into_inner());
            // The answer to a `server/discover` the client stopped waiting for would be taken
            // for the answer to its `initialize`.
            if log.drops_discover_answer(&line) {
                continue;
            }
            log.server_line(&line);
        }
        // Only a line that names `tools` is read twice (rmcp reads it too, into its model).
        if line.windows(7).any(|w| w == b"\"tools\"") {
            if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&line) {
                pages.note(&message);
            }
        }
        line.push(b'\n');
        // One whole line at a time: a handshake watch may write one of its own.
        if to_rmcp.lock().await.write_all(&line).await.is_err() {
            return;
        }
    }
}

fn is_json_rpc(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(o) => o.get("jsonrpc").is_some_and(|v| v == "2.0"),
        // A batch.
        serde_json::Value::Array(items) => !items.is_empty() && items.iter().all(is_json_rpc),
        _ => false,
    }
}

/// Whether a stdout line is one JSON-RPC message; if not, what it is instead.
fn classify(line: &[u8]) -> Result<(), StdoutFault> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Ok(());
    }
    let text = || String::from_utf8_lossy(trimmed).into_owned();
    let mut values = serde_json::Deserializer::from_slice(trimmed).into_iter::<serde_json::Value>();
    match values.next() {
        Some(Ok(value)) if is_json_rpc(&value) => {
            let end = values.byte_offset();
            if trimmed[end..].trim_ascii().is_empty() {
                Ok(())
            } else {
                Err(StdoutFault::GluedAfter(
                    String::from_utf8_lossy(trimmed[end..].trim_ascii()).into_owned(),
                ))
            }
        }
        Some(Ok(_)) => Err(StdoutFault::NotJsonRpc(text())),
        _ => {
            // Text printed without a newline before a message: find where the message starts.
            for (i, _) in trimmed.iter().enumerate().filter(|(_, &b)| b == b'{') {
                let mut rest = serde_json::Deserializer::from_slice(&trimmed[i..])
                    .into_iter::<serde_json::Value>();
                if let Some(Ok(value)) = rest.next() {
                    if is_json_rpc(&value) {
                        return Err(StdoutFault::GluedBefore(
                            String::from_utf8_lossy(&trimmed[..i]).into_owned(),
                        ));
                    }
                }
            }
            Err(StdoutFault::NotJsonRpc(text()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_stdout_lines() {
        assert_eq!(classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Ok(()));
        assert_eq!(classify(b"  "), Ok(()));
        assert_eq!(
            classify(b"Server listening on stdio"),
            Err(StdoutFault::NotJsonRpc("Server listening on stdio".into()))
        );
        assert_eq!(
            classify(br#"{"level":"info"}"#),
            Err(StdoutFault::NotJsonRpc(r#"{"level":"info"}"#.into()))
        );
        assert_eq!(
            classify(br#"loading {model}...{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Err(StdoutFault::GluedBefore("loading {model}...".into()))
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}done"#),
            Err(StdoutFault::GluedAfter("done".into()))
        );
    }

    #[test]
    fn the_stderr_ring_keeps_the_tail() {
        let mut ring = StderrRing::new(16);
        ring.push(b"first line\nsecond line\n");
        ring.push(b"third\n");
        assert_eq!(ring.total(), 29);
        assert_eq!(ring.tail_lines(5), ["third"]);
        let mut small = StderrRing::new(100);
        small.push(b"a\nb\nc");
        assert_eq!(small.tail_lines(2), ["b", "c"]);
    }

    #[test]
    fn the_hidden_range_is_left_out_of_the_tail() {
        // Hidden in the middle: what comes before and after is kept, the seam ends a line.
        let mut ring = StderrRing::new(100);
        ring.push(b"start\nhalf");
        let from = ring.total();
        ring.push(b"noise\nnoise\n");
        ring.hidden = Some((from, ring.total()));
        ring.push(b"real\n");
        assert_eq!(ring.tail_lines(5), ["start", "half", "real"]);
        assert_eq!(ring.hidden_bytes(), 12);
        // The ring begins inside the hidden part: the first kept line is whole.
        let mut cut = StderrRing::new(8);
        cut.hidden = Some((0, 6));
        cut.push(b"noise\nreal\n");
        assert_eq!(cut.tail_lines(5), ["real"]);
        // The ring begins after it, inside a line: that line is cut and left out.
        let mut after = StderrRing::new(8);
        after.hidden = Some((0, 2));
        after.push(b"xxlong line\nok\n");
        assert_eq!(after.tail_lines(5), ["ok"]);
    }

    #[tokio::test]
    async fn long_lines_stop_at_the_limit() {
        let data = [vec![b'x'; 100], b"\nok\n".to_vec()].concat();
        let mut reader = &data[..];
        let mut buf = Vec::new();
        assert!(matches!(
            read_line_limited(&mut reader, &mut buf, 50).await.unwrap(),
            Line::TooLong
        ));
        let mut reader = &data[..];
        buf.clear();
        assert!(matches!(
            read_line_limited(&mut reader, &mut buf, 100).await.unwrap(),
            Line::Complete
        ));
        assert_eq!(buf.len(), 100);
    }
}
