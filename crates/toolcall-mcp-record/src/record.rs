//! `toolcall mcp record`: a stdio MCP server to whoever starts it, which starts the real server
//! and passes every byte through unchanged, both ways, while it writes the session down.
//!
//! **Pass-through invariant:** what the client writes reaches the server, and what the server
//! writes reaches the client, byte for byte: lines are read as bytes up to and with their
//! newline and written as read (a last line without one too). A copy of each line is parsed for
//! the recording; nothing forwarded is ever re-serialised, so framing, key order, spacing, ids,
//! notifications, errors and junk all arrive as they were sent. The server's stderr is the
//! proxy's own (inherited, not piped), so a client sees it as it would.
//!
//! **Journal invariant:** every line is appended to `NAME.json.partial` (JSONL: a header with
//! the server, then one `{"from", "line"}` per message) before it is forwarded. When the session
//! ends (the client closes stdin, the server exits, or SIGINT, SIGTERM or SIGHUP reaches the
//! recorder) the flow and the catalog snapshot are written atomically from it and the journal
//! is removed. The client's end is written at once, before the server's grace: the SDK clients
//! close stdin and send SIGTERM two seconds later, and a server that ignores the end of its
//! stdin must not cost the recording. A client killed mid-session closes our stdin, so it ends
//! the session like any other client; if the proxy itself is killed (SIGKILL), the journal stays
//! and [`recover`] finishes it (a new recording refuses to start over it, saying how).
//!
//! **No server left behind:** the server runs in a process group of its own, and the session's
//! end is the end of that group (after the grace, at once on a signal), as in `toolcall
//! replay`: a wrapper (`npx`, `uv run`) and what it started go with it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::errors::RecordError;
use crate::redact::Redaction;
use crate::session::{Direction, ServerSpec, Session};

/// What to record and where.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The flow to write (`flows/NAME.json`).
    pub out: PathBuf,
    /// The catalog snapshot to write; by default `catalog/NAME.json` beside the flow (in the
    /// flow's folder: `flows/NAME.json` gets `flows/catalog/NAME.json`, a folder of snapshots
    /// `Harness::mcp_contracts` reads, not read as flows, which are the `*.json` directly in
    /// the folder). Never relative to the working directory, which is the client's.
    pub snapshot: Option<PathBuf>,
    /// The server's program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables the server needs, by name (`--env NAME`): the flow gets
    /// `"NAME": "${NAME}"`, never the value, and the value is redacted everywhere in what is
    /// written ([`crate::redact`]).
    pub env: Vec<String>,
    /// `--redact-pattern REGEX`: what it matches in any string recorded is written `[REDACTED]`.
    pub redact_patterns: Vec<String>,
    /// `--redact-path JSONPATH`: what it selects in any message (`$.result.structuredContent.
    /// token`, `$.params.arguments.password`) is written `[REDACTED]`.
    pub redact_paths: Vec<String>,
    /// `--volatile`: JSON pointers into a result's document left out of `expect` (`/pointer`,
    /// that value and what is under it, in every call; `TOOL:/pointer`, in that tool's), beside
    /// what differed between identical calls ([`crate::expectation`]).
    pub volatile: Vec<String>,
    /// How long the server gets to exit after the client closed its side, before it is killed.
    pub grace: Duration,
    /// For an HTTP server: headers the flow sends, as written (`("Authorization", "Bearer
    /// ${MCP_TOKEN}")`); what the client sent is never written down.
    pub headers: Vec<(String, String)>,
    /// Record over an existing flow and snapshot (`--force`). Without it a recording refuses
    /// to start when either is there; with it, a session that made no call still replaces
    /// nothing.
    pub force: bool,
    /// Over HTTP (`--listen`): how long a connection may send nothing before it is closed.
    pub idle_timeout: Duration,
    /// Over stdio: end the session on SIGINT, SIGTERM or SIGHUP, writing the flow and ending the
    /// server's process group (what the command does). Off by default: the handlers, once in
    /// place, stay for the life of the process.
    pub handle_signals: bool,
    /// Over stdio (`--guard`): answer a `tools/call` of a name the server's `tools/list` never
    /// offered with an `isError` result naming the offered tools, without forwarding it
    /// (`call_guard.rs`).
    pub guard: bool,
}

impl RecordOptions {
    /// Options to record `command args…` into `out`.
    pub fn new(out: impl Into<PathBuf>, command: impl Into<String>, args: Vec<String>) -> Self {
        RecordOptions {
            out: out.into(),
            snapshot: None,
            command: command.into(),
            args,
            env: Vec::new(),
            redact_patterns: Vec::new(),
            redact_paths: Vec::new(),
            volatile: Vec::new(),
            grace: Duration::from_secs(2),
            headers: Vec::new(),
            force: false,
            idle_timeout: Duration::from_secs(30),
            handle_signals: false,
            guard: false,
        }
    }

    /// What to redact: the values of [`RecordOptions::env`] in this environment, the patterns
    /// and the paths.
    pub fn redaction(&self) -> Result<Redaction, RecordError> {
        Redaction::new(&self.env, &self.redact_patterns, &self.redact_paths)
    }

    /// The session to record into: judging volatility by [`RecordOptions::volatile`] and by
    /// the flow at `out` if there is one (recorded over with `--force`: the last recording).
    /// Refuses a `--volatile` that is not a JSON pointer.
    pub(crate) fn session(&self) -> Result<Session, RecordError> {
        for named in &self.volatile {
            let pointer = match named.split_once(":/") {
                Some(_) if !named.starts_with('/') => true,
                _ => named.starts_with('/'),
            };
            if !pointer {
                return Err(RecordError::Invalid {
                    option: "--volatile",
                    value: named.clone(),
                    why: "a JSON pointer into the result's document is wanted: /created_at, \
                          or TOOL:/pointer for one tool's"
                        .into(),
                });
            }
        }
        let mut session = Session::new();
        session.set_volatile(self.volatile.clone());
        if let Ok(text) = toolcall_score::read_text(&self.out) {
            if let Ok(flow) = serde_json::from_str::<Value>(&text) {
                session.set_baseline(&flow);
            }
        }
        Ok(session)
    }

    /// The catalog snapshot's path: [`RecordOptions::snapshot`] or `catalog/NAME.json` beside
    /// the flow.
    fn snapshot_path(&self) -> PathBuf {
        self.snapshot
            .clone()
            .unwrap_or_else(|| default_snapshot(&self.out))
    }
}

/// What a finished recording wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The flow file.
    pub flow: PathBuf,
    /// The catalog snapshot, when the client listed the tools.
    pub snapshot: Option<PathBuf>,
    /// How many `tools/call`s it holds.
    pub calls: usize,
    /// Lines from the client and from the server.
    pub lines: (usize, usize),
    /// Lines that were not JSON-RPC (forwarded unchanged).
    pub notes: Vec<String>,
    /// Nothing was written: the session made no call and the flow already existed.
    pub kept: bool,
    /// Why the catalog snapshot could not be written, when it could not: the flow is written
    /// all the same (without naming a snapshot), and the command exits 1.
    pub snapshot_failed: Option<String>,
}

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "toolcall mcp record: {} call(s) ({} line(s) from the client, {} from the server) \
             {} {}",
            self.calls,
            self.lines.0,
            self.lines.1,
            if self.kept {
                "recorded; nothing written over"
            } else {
                "written to"
            },
            toolcall_score::escape_path(&self.flow)
        )?;
        if let Some(snapshot) = &self.snapshot {
            write!(
                f,
                ", the catalog to {}",
                toolcall_score::escape_path(snapshot)
            )?;
        }
        for note in &self.notes {
            write!(f, "\n  note: {}", toolcall_score::escape(note))?;
        }
        if let Some(why) = &self.snapshot_failed {
            write!(
                f,
                "\n  error: {}; the flow is written without naming a snapshot (--snapshot FILE \
                 to write it elsewhere)",
                toolcall_score::escape(why)
            )?;
        }
        Ok(())
    }
}

/// The journal of the flow at `out`: `out` with `.partial` appended.
pub fn journal_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// `catalog/NAME.json` beside the flow `DIR/NAME.json` (`DIR/catalog/NAME.json`), made
/// absolute (so that a recovery run elsewhere writes it to the same place). Beside the flow,
/// not under the working directory: that is the client's, which may be anywhere, unwritable
/// too.
fn default_snapshot(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "flow.json".into());
    let path = flow_dir(out).join("catalog").join(name);
    std::path::absolute(&path).unwrap_or(path)
}

/// The folder of the flow at `out`.
fn flow_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The path from `from` (a folder) to `to`, both made absolute first.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in from.components().skip(common) {
        out.push("..");
    }
    for part in to.components().skip(common) {
        out.push(part);
    }
    out
}

/// The server as the flow at `out` names it: a command with a `/` written relative to the
/// flow's folder, which is what a flow resolves it against (absolute, it would name this
/// machine's paths; as typed, the folder it was run from), a bare name as typed (found on
/// PATH), and the working directory written relative to the flow's folder when it is another.
fn server_spec(options: &RecordOptions, redaction: &Redaction) -> ServerSpec {
    let cwd = std::env::current_dir().unwrap_or_default();
    let command = if options.command.contains('/') && Path::new(&options.command).is_relative() {
        let path = relative(&flow_dir(&options.out), &cwd.join(&options.command));
        let path = path.to_string_lossy().replace('\\', "/");
        // Still a path, not a name looked up on PATH.
        let path = if path.contains('/') {
            path
        } else {
            format!("./{path}")
        };
        // The folder is found, not written: its `$`s are not a template's.
        toolcall_mcp::escape_template(&path)
    } else {
        options.command.clone()
    };
    let cwd = relative(&flow_dir(&options.out), &cwd);
    // The command line is a template as typed: a secret in it becomes its `${NAME}`.
    let typed = |text: &str| crate::redact::plain_text(&redaction.text(text));
    ServerSpec {
        command: typed(&command),
        url: None,
        headers: Vec::new(),
        args: options.args.iter().map(|a| typed(a)).collect(),
        env: options.env.clone(),
        cwd: (!cwd.as_os_str().is_empty()).then(|| cwd.to_string_lossy().replace('\\', "/")),
    }
}

/// Creates the journal of `options.out` and writes its header; refuses to start over the
/// journal of a session that did not finish.
pub(crate) fn start_journal(
    options: &RecordOptions,
    spec: &ServerSpec,
) -> Result<Journal, RecordError> {
    let journal_path = journal_path(&options.out);
    if std::fs::symlink_metadata(&journal_path).is_ok() {
        return Err(RecordError::Leftover {
            journal: journal_path,
            out: options.out.clone(),
        });
    }
    if !options.force {
        // `symlink_metadata`: a dangling link in the way is in the way too.
        for path in [options.out.clone(), options.snapshot_path()] {
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(RecordError::Exists { path });
            }
        }
    }
    let file = match toolcall_fs::create_journal(&journal_path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(RecordError::Leftover {
                journal: journal_path,
                out: options.out.clone(),
            })
        }
        Err(source) => {
            return Err(RecordError::Io {
                path: journal_path,
                source,
            })
        }
    };
    let mut journal = Journal {
        path: journal_path,
        file,
        failed: None,
    };
    journal.append(&json!({
        "journal": "toolcall mcp record",
        "version": 1,
        "server": spec,
        "snapshot": options.snapshot_path(),
        "volatile": options.volatile,
    }));
    Ok(journal)
}

pub(crate) enum Event {
    Line(Direction, Vec<u8>),
    /// A line over the input limit, forwarded and not recorded: its size.
    Skipped(Direction, usize),
    Closed(Direction),
    /// A signal asked the recording to end.
    Stop,
}

/// Appends journal lines; a failed write is noted once and the recording goes on (the session
/// itself must not break because the disk filled up).
pub(crate) struct Journal {
    path: PathBuf,
    file: std::fs::File,
    pub(crate) failed: Option<String>,
}

impl Journal {
    /// Appends one line: `value` as JSON.
    pub(crate) fn append(&mut self, value: &Value) {
        if self.failed.is_some() {
            return;
        }
        let mut line = value.to_string();
        line.push('\n');
        if let Err(e) = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
        {
            self.failed = Some(format!(
                "{}: the journal could not be written ({e}); a killed session would be lost",
                self.path.display()
            ));
        }
    }
}

/// How a recorded session ended.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ended {
    /// The server closed its stdout.
    Server,
    /// The client closed its side and the server did not end within the grace.
    Grace,
    /// SIGINT, SIGTERM or SIGHUP to the recorder.
    Signal,
}

/// Records one session: `client_in` is what the client writes (our stdin), `client_out` what
/// it reads (our stdout). Returns when the session ended and the flow is written.
///
/// The flow is written as soon as the client's side ends, before the server gets its grace: an
/// SDK client closes stdin and sends SIGTERM two seconds later, and a server that ignores the
/// end of its stdin must not cost the recording. What the server still writes in its grace is
/// recorded and the flow written again. With [`RecordOptions::handle_signals`], SIGINT, SIGTERM
/// and SIGHUP end the session the same way: the flow is written and the server's process group
/// ended.
pub fn record(
    options: &RecordOptions,
    client_in: impl Read + Send + 'static,
    client_out: impl Write + Send + 'static,
) -> Result<Recorded, RecordError> {
    let journal_path = journal_path(&options.out);
    let redaction = Arc::new(options.redaction()?);
    let mut session = options.session()?;
    let spec = server_spec(options, &redaction);
    let journal = start_journal(options, &spec)?;

    let mut command = Command::new(&options.command);
    command
        .args(&options.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // A group of its own: a wrapper (npx, uv run) and whatever it started end together, and a
    // signal to the client's group reaches the recorder alone, which writes the flow first.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(source) => {
            drop(journal);
            let _ = std::fs::remove_file(&journal_path);
            return Err(RecordError::Spawn {
                command: options.command.clone(),
                source,
            });
        }
    };
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        end_server(&mut child, Duration::ZERO);
        return Err(RecordError::Spawn {
            command: options.command.clone(),
            source: std::io::Error::other("no pipe to the server"),
        });
    };

    let journal = Arc::new(Mutex::new(journal));
    let (tx, rx) = mpsc::channel::<Event>();
    if options.handle_signals {
        let tx = tx.clone();
        crate::signals::on_signals(move || {
            let _ = tx.send(Event::Stop);
        });
    }
    // The client's output is written by the server's pump and, with --guard, by the client's
    // (its answers to unknown calls): one line at a time under a lock.
    let client_out = Shared(Arc::new(Mutex::new(client_out)));
    let guard = options
        .guard
        .then(|| Arc::new(Mutex::new(crate::call_guard::CallGuard::default())));
    let hooks = guard.map(|guard| Hooks {
        guard,
        client: client_out.clone(),
    });
    pump(
        client_in,
        server_in,
        Direction::Client,
        tx.clone(),
        Arc::clone(&journal),
        Arc::clone(&redaction),
        hooks.clone(),
    );
    pump(
        server_out,
        client_out,
        Direction::Server,
        tx,
        Arc::clone(&journal),
        redaction,
        hooks,
    );

    let take = |event: Event, session: &mut Session| match event {
        Event::Line(direction, line) => session.feed(direction, &line),
        Event::Skipped(direction, bytes) => session.skip(direction, bytes),
        Event::Closed(_) | Event::Stop => {}
    };
    // The flow as last written, and the lines the session had then.
    let mut written: Option<(Recorded, (usize, usize))> = None;
    let mut grace_ends: Option<std::time::Instant> = None;
    let ended = loop {
        let event = match grace_ends {
            None => rx.recv().ok(),
            Some(at) => {
                match rx.recv_timeout(at.saturating_duration_since(std::time::Instant::now())) {
                    Ok(event) => Some(event),
                    Err(_) => break Ended::Grace,
                }
            }
        };
        match event {
            // Every sender gone: nothing more can come.
            None => break Ended::Server,
            Some(Event::Closed(Direction::Server)) => break Ended::Server,
            Some(Event::Stop) => break Ended::Signal,
            Some(Event::Closed(Direction::Client)) => {
                if grace_ends.is_none() {
                    // Everything the client sent came before its end (one channel, in order):
                    // the session is whole from its side, so it is written now.
                    match finish(&session, &spec, options) {
                        Ok(recorded) => written = Some((recorded, session.lines())),
                        Err(e) => {
                            end_server(&mut child, Duration::ZERO);
                            return Err(e);
                        }
                    }
                    grace_ends = Some(std::time::Instant::now() + options.grace);
                }
            }
            Some(event) => take(event, &mut session),
        }
    };
    // What either side sent meanwhile is already in the channel.
    while let Ok(event) = rx.try_recv() {
        take(event, &mut session);
    }
    // A server that closed its stdout is exiting: it gets the grace to say how; otherwise its
    // group is ended now.
    let wait = if ended == Ended::Server {
        options.grace
    } else {
        Duration::ZERO
    };
    let status = end_server(&mut child, wait);
    let failed = lock(&journal).failed.take();
    drop(journal);
    let mut recorded = match written {
        Some((recorded, lines)) if lines == session.lines() => recorded,
        _ => finish(&session, &spec, options)?,
    };
    match ended {
        Ended::Server => {
            if grace_ends.is_none() {
                let status = status.map_or_else(|| "still running".to_owned(), |s| s.to_string());
                recorded.notes.push(format!(
                    "the server ended the session (it closed its stdout; {status}), not the client"
                ));
            }
        }
        Ended::Grace => recorded.notes.push(format!(
            "the server was still running {:?} after the client closed its side; its process \
             group was ended",
            options.grace
        )),
        Ended::Signal => recorded.notes.push(
            "a signal (SIGINT, SIGTERM or SIGHUP) ended the recording; the server's process \
             group was ended"
                .to_owned(),
        ),
    }
    recorded.notes.extend(failed);
    let _ = std::fs::remove_file(&journal_path);
    Ok(recorded)
}

/// Ends the server: waits up to `wait` for it to exit by itself, then kills its process group
/// (the server and everything it started; after it exited too, for what it left behind) and
/// reaps it. Its exit status, if it was reaped.
fn end_server(child: &mut std::process::Child, wait: Duration) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + wait;
    let mut status = child.try_wait().ok().flatten();
    while status.is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        status = child.try_wait().ok().flatten();
    }
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        // ESRCH (nothing left in the group) is the usual, happy answer.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    if status.is_none() {
        let _ = child.kill();
        status = child.wait().ok();
    }
    status
}

pub(crate) fn lock(journal: &Mutex<Journal>) -> std::sync::MutexGuard<'_, Journal> {
    journal.lock().unwrap_or_else(|e| e.into_inner())
}

/// A writer shared by both pumps: each `write` is written whole under the lock, so a line put
/// out with one `write_all` is never interleaved with another.
struct Shared<W>(Arc<Mutex<W>>);

impl<W> Clone for Shared<W> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<W: Write> Write for Shared<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

/// `--guard`'s share of the pumps: the guard, and the client's output for its answers.
struct Hooks<W> {
    guard: Arc<Mutex<crate::call_guard::CallGuard>>,
    client: Shared<W>,
}

impl<W> Clone for Hooks<W> {
    fn clone(&self) -> Self {
        Hooks {
            guard: Arc::clone(&self.guard),
            client: self.client.clone(),
        }
    }
}

/// Copies `from` to `to` line by line; each line is in the journal and handed to the recorder
/// before it is written, so whatever the other side has seen, the journal holds. Both get the
/// line redacted; the other side gets it as it came. With `hooks` (`--guard`), a client's call
/// of a name never offered is answered to the client and neither forwarded nor recorded.
fn pump<W: Write + Send + 'static>(
    from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    direction: Direction,
    tx: mpsc::Sender<Event>,
    journal: Arc<Mutex<Journal>>,
    redaction: Arc<Redaction>,
    hooks: Option<Hooks<W>>,
) {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        let limit = usize::try_from(toolcall_score::max_input_bytes()).unwrap_or(usize::MAX);
        while let Some(line) = next_line(&mut from, &mut to, limit) {
            if let (Some(hooks), Line::Whole(line)) = (&hooks, &line) {
                let mut guard = hooks.guard.lock().unwrap_or_else(|e| e.into_inner());
                match direction {
                    Direction::Server => guard.server_line(line),
                    Direction::Client => {
                        if let Some(answer) = guard.client_line(line) {
                            drop(guard);
                            let mut client = hooks.client.clone();
                            if client
                                .write_all(&answer)
                                .and_then(|()| client.flush())
                                .is_err()
                            {
                                break;
                            }
                            continue;
                        }
                    }
                }
            }
            let forwarded = match line {
                Line::Whole(line) => {
                    let copy = redaction.line(&line);
                    lock(&journal).append(&json!({
                        "from": direction,
                        "line": String::from_utf8_lossy(&copy),
                    }));
                    let _ = tx.send(Event::Line(direction, copy.into_owned()));
                    to.write_all(&line).and_then(|()| to.flush())
                }
                // Already forwarded as it came; recorded as skipped.
                Line::Over(held, rest) => {
                    let bytes = held.len() + rest;
                    lock(&journal).append(&json!({"from": direction, "skipped": bytes}));
                    let _ = tx.send(Event::Skipped(direction, bytes));
                    Ok(())
                }
                Line::Broken => Err(std::io::Error::other("write failed")),
            };
            if forwarded.is_err() {
                break;
            }
        }
        // Closing our end tells the other side (the server's stdin, or the client's stdout).
        drop(to);
        let _ = tx.send(Event::Closed(direction));
    });
}

/// One line read by [`next_line`].
enum Line {
    /// A line (with its newline, if it had one) of at most the input limit: not yet forwarded.
    Whole(Vec<u8>),
    /// A line over the input limit: the part held when that was known (forwarded then) and how
    /// many bytes followed (forwarded as they came). Never held whole.
    Over(Vec<u8>, usize),
    /// Writing an over-long line on failed.
    Broken,
}

/// The next line of `from`, or `None` at its end. A line over `limit` bytes is written to `to`
/// as it is read instead of being held (the input limit: nothing is read whole past it).
fn next_line(from: &mut impl BufRead, to: &mut impl Write, limit: usize) -> Option<Line> {
    let mut line = Vec::new();
    let mut over: Option<(Vec<u8>, usize)> = None;
    loop {
        let buf = match from.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => &[],
        };
        if buf.is_empty() {
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let chunk = &buf[..take];
        match &mut over {
            Some((_, rest)) => {
                if to.write_all(chunk).is_err() {
                    return Some(Line::Broken);
                }
                *rest += take;
            }
            None if line.len() + take > limit => {
                if to
                    .write_all(&line)
                    .and_then(|()| to.write_all(chunk))
                    .is_err()
                {
                    return Some(Line::Broken);
                }
                line.extend_from_slice(chunk);
                over = Some((std::mem::take(&mut line), 0));
            }
            None => line.extend_from_slice(chunk),
        }
        from.consume(take);
        if done {
            break;
        }
    }
    match over {
        Some((held, rest)) => {
            let _ = to.flush();
            Some(Line::Over(held, rest))
        }
        None if line.is_empty() => None,
        None => Some(Line::Whole(line)),
    }
}

pub(crate) fn finish(
    session: &Session,
    spec: &ServerSpec,
    options: &RecordOptions,
) -> Result<Recorded, RecordError> {
    if session.calls().is_empty() && std::fs::symlink_metadata(&options.out).is_ok() {
        // A client that started and stopped (every start of an MCP client configured to run
        // the recorder) must not wipe the flow a person reviewed.
        let mut notes = session.notes().to_vec();
        notes.push(format!(
            "the session made no call: {} and its snapshot are kept as they were",
            options.out.display()
        ));
        return Ok(Recorded {
            flow: options.out.clone(),
            snapshot: None,
            calls: 0,
            lines: session.lines(),
            notes,
            kept: true,
            snapshot_failed: None,
        });
    }
    // The snapshot first: the flow names it, and reading the flow reads it. A snapshot that
    // cannot be written costs the flow its `snapshot`, never the flow.
    let mut snapshot_failed = None;
    let snapshot = match session.snapshot() {
        Some(snapshot) => {
            let path = options.snapshot_path();
            let named = toolcall_mcp::catalog::naming_flow(snapshot, &options.out, &path);
            // Not a template: a redacted value is written as its `${NAME}` or `[REDACTED]`.
            match write_json(&path, &crate::redact::plain_value(&named)) {
                Ok(()) => Some(path),
                Err(e) => {
                    snapshot_failed = Some(format!("the catalog snapshot was not written: {e}"));
                    None
                }
            }
        }
        None => None,
    };
    let from_flow = snapshot.as_deref().map(|path| {
        relative(flow_dir(&options.out).as_path(), path)
            .to_string_lossy()
            .replace('\\', "/")
    });
    let flow = session.flow(spec, from_flow.as_deref());
    write_json(&options.out, &flow)?;
    Ok(Recorded {
        flow: options.out.clone(),
        snapshot,
        calls: session.calls().len(),
        lines: session.lines(),
        notes: session.notes().to_vec(),
        kept: false,
        snapshot_failed,
    })
}

fn write_json(path: &Path, value: &Value) -> Result<(), RecordError> {
    let text = toolcall_score::to_json_pretty(value).map_err(|e| RecordError::Io {
        path: path.to_owned(),
        source: std::io::Error::other(e),
    })?;
    toolcall_fs::write_atomic(path, format!("{text}\n").as_bytes()).map_err(|source| {
        RecordError::Io {
            path: path.to_owned(),
            source,
        }
    })
}

/// Finishes the recording a killed proxy left in `out`'s journal: writes the flow and snapshot
/// from what the journal holds (a last line cut off mid-write is dropped and noted) and removes
/// the journal.
pub fn recover(out: &Path) -> Result<Recorded, RecordError> {
    let journal = journal_path(out);
    if !journal.exists() {
        return Err(RecordError::NoJournal { journal });
    }
    let text = toolcall_score::read_text(&journal)?;
    let bad = |why: String| RecordError::BadJournal {
        journal: journal.clone(),
        why,
    };
    let mut lines = text.lines();
    let header: Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| bad("its first line is not the journal header".into()))?;
    if header.get("journal").and_then(Value::as_str) != Some("toolcall mcp record") {
        return Err(bad("its first line is not the journal header".into()));
    }
    let spec: ServerSpec = serde_json::from_value(header["server"].clone())
        .map_err(|e| bad(format!("its header names no server: {e}")))?;
    let snapshot = header
        .get("snapshot")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    let volatile = header
        .get("volatile")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| Some(v.as_str()?.to_owned()))
        .collect();
    let options = RecordOptions {
        snapshot,
        volatile,
        ..RecordOptions::new(out, spec.command.clone(), spec.args.clone())
    };
    let mut session = options.session()?;
    let mut cut = 0;
    for line in lines {
        let entry = serde_json::from_str::<Value>(line).ok();
        let direction = entry
            .as_ref()
            .and_then(|v| serde_json::from_value::<Direction>(v.get("from")?.clone()).ok());
        let text = entry.as_ref().and_then(|v| v.get("line")?.as_str());
        let skipped = entry.as_ref().and_then(|v| v.get("skipped")?.as_u64());
        match (direction, text, skipped) {
            (Some(direction), Some(text), _) => session.feed(direction, text.as_bytes()),
            (Some(direction), None, Some(bytes)) => {
                session.skip(direction, usize::try_from(bytes).unwrap_or(usize::MAX))
            }
            _ => cut += 1,
        }
    }
    let mut recorded = finish(&session, &spec, &options)?;
    if cut > 0 {
        recorded.notes.push(format!(
            "{cut} journal line(s) were cut off (the proxy was killed mid-write) and are not in the flow"
        ));
    }
    let _ = std::fs::remove_file(&journal);
    Ok(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_over_the_limit_is_forwarded_as_it_comes_and_not_held() {
        let input = b"short\nthis line is far too long\nend";
        // A reader that hands out three bytes at a time, as a pipe may.
        let mut from = BufReader::with_capacity(3, &input[..]);
        let mut to = Vec::new();
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut from, &mut to, 8) {
            lines.push(match line {
                Line::Whole(line) => {
                    to.extend_from_slice(&line);
                    format!("whole {}", String::from_utf8_lossy(&line).trim_end())
                }
                Line::Over(held, rest) => format!("over {} + {rest}", held.len()),
                Line::Broken => "broken".to_owned(),
            });
        }
        assert_eq!(lines, ["whole short", "over 9 + 17", "whole end"]);
        assert_eq!(to, input, "every byte forwarded, in order");
    }

    #[test]
    fn the_journal_sits_beside_the_flow() {
        assert_eq!(
            journal_path(Path::new("flows/a.json")),
            Path::new("flows/a.json.partial")
        );
        assert!(default_snapshot(Path::new("flows/a.json")).ends_with("flows/catalog/a.json"));
        assert_eq!(
            default_snapshot(Path::new("/srv/p/flows/a.json")),
            Path::new("/srv/p/flows/catalog/a.json")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/c/d")),
            Path::new("../c/d")
        );
    }
}
