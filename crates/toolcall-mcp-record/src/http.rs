//! `toolcall mcp record --listen ADDR --upstream URL`: the recording for a streamable HTTP
//! server, as a reverse proxy in front of it.
//!
//! Each request the client sends to `ADDR` (any path, any method: `POST` messages, the `GET`
//! stream, the session's `DELETE`) goes to `URL` with its headers (less the hop-by-hop ones and
//! `Host`) and its body unchanged; the answer comes back with its status, headers and body
//! unchanged, streamed as it arrives (a `text/event-stream` event reaches the client when the
//! server sends it). The connection is closed after each answer, the one liberty taken with the
//! framing. A copy of each message (a request body; a JSON answer, or each event's `data` of an
//! event stream) is journaled and recorded as over stdio.
//!
//! It listens on loopback only, unless told otherwise, and refuses a request whose `Host` or
//! `Origin` is not this machine's loopback, as `mcp serve --listen` does (one rule for both,
//! [`crate::loopback`]): a DNS-rebound page must not reach, through the recorder, a local
//! server that would refuse it directly (the recorder rewrites `Host` for the upstream). A
//! request whose body is cut off (the client went away mid-body) is dropped, never forwarded
//! short; a connection that sends nothing for [`RecordOptions::idle_timeout`] is closed, and at
//! most [`MAX_CONNECTIONS`] are served at once.
//!
//! HTTP has no end of session a proxy can see (a modern-era client never says goodbye), so the
//! recording ends when [`HttpRecording::stop`] is called: on SIGINT, SIGTERM or SIGHUP from the
//! command. A recorder killed otherwise leaves its journal, which `--recover` finishes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::errors::RecordError;
use crate::loopback::{forbidden, refusal, Listen};
use crate::record::{finish, lock, start_journal, Event, Journal, RecordOptions, Recorded};
use crate::session::{Direction, ServerSpec};

/// The most a request head (request line and headers) may hold.
const MAX_HEAD: usize = 64 * 1024;

/// The most connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;

/// Headers that belong to one connection, not to the message: never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// A recording in progress over HTTP: listening, forwarding, journaling.
pub struct HttpRecording {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    done: mpsc::Receiver<Result<Recorded, RecordError>>,
}

impl HttpRecording {
    /// The address it listens on (the port the OS chose for `:0`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A handle that ends the recording when set (from a signal handler, say).
    pub fn stopper(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Ends the recording and writes the flow and the snapshot.
    pub fn stop(self) -> Result<Recorded, RecordError> {
        self.stop.store(true, Ordering::SeqCst);
        self.wait()
    }

    /// Waits until the recording is stopped (through [`HttpRecording::stopper`]) and written.
    pub fn wait(self) -> Result<Recorded, RecordError> {
        self.done.recv().unwrap_or_else(|_| {
            Err(RecordError::Io {
                path: PathBuf::new(),
                source: std::io::Error::other("the recorder thread died"),
            })
        })
    }
}

/// Starts recording: listens on `listen` (a loopback address, unless [`Listen::insecure`]) and
/// forwards to `upstream`. `options.out` and `options.snapshot` say where the flow goes; its
/// command and arguments are not used.
pub fn record_http(
    options: &RecordOptions,
    listen: impl Into<Listen>,
    upstream: &str,
) -> Result<HttpRecording, RecordError> {
    let listen: Listen = listen.into();
    let valid = (upstream.starts_with("http://") || upstream.starts_with("https://"))
        && upstream.parse::<ureq::http::Uri>().is_ok();
    if !valid {
        return Err(RecordError::Upstream {
            url: toolcall_score::escape(upstream).to_string(),
        });
    }
    let addrs = listen
        .addresses()
        .map_err(|why| RecordError::Listen { why })?;
    let listener = TcpListener::bind(&addrs[..]).map_err(|source| RecordError::Io {
        path: PathBuf::from(&listen.addr),
        source,
    })?;
    let addr = listener.local_addr().map_err(|source| RecordError::Io {
        path: PathBuf::from(&listen.addr),
        source,
    })?;
    let spec = ServerSpec {
        url: Some(upstream.to_owned()),
        headers: options.headers.clone(),
        ..ServerSpec::default()
    };
    let redaction = Arc::new(options.redaction()?);
    let mut session = options.session()?;
    let journal = Arc::new(Mutex::new(start_journal(options, &spec)?));
    // Requests the upstream did not answer (the client got a 502): how many, and the last why.
    let unreached = Arc::new(Mutex::new((0usize, String::new())));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Event>();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    {
        let journal = Arc::clone(&journal);
        let upstream = upstream.to_owned();
        let listen = Arc::new(listen);
        let idle = options.idle_timeout;
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let unreached = Arc::clone(&unreached);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                // A client that connects and says nothing holds a thread until the timeout,
                // never for ever; and only so many at once.
                if stream.set_read_timeout(Some(idle)).is_err() {
                    continue;
                }
                if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    open.fetch_sub(1, Ordering::SeqCst);
                    let _ = reply(
                        &mut stream,
                        "503 Service Unavailable",
                        "too many connections at once",
                    );
                    continue;
                }
                let (agent, upstream) = (agent.clone(), upstream.clone());
                let (journal, tx) = (Arc::clone(&journal), tx.clone());
                let redaction = Arc::clone(&redaction);
                let (listen, open) = (Arc::clone(&listen), Arc::clone(&open));
                let unreached = Arc::clone(&unreached);
                std::thread::spawn(move || {
                    let copy = Copy {
                        journal: &journal,
                        tx: &tx,
                        redaction: &redaction,
                    };
                    let _ = forward(stream, &agent, &upstream, &listen, &copy, &unreached);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
    }
    let (done_tx, done) = mpsc::channel();
    let options = options.clone();
    let stopping = Arc::clone(&stop);
    std::thread::spawn(move || {
        while !stopping.load(Ordering::SeqCst) {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Event::Line(direction, line)) => session.feed(direction, &line),
                Ok(Event::Skipped(direction, bytes)) => session.skip(direction, bytes),
                Ok(Event::Closed(_) | Event::Stop) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        while let Ok(event) = rx.try_recv() {
            match event {
                Event::Line(direction, line) => session.feed(direction, &line),
                Event::Skipped(direction, bytes) => session.skip(direction, bytes),
                Event::Closed(_) | Event::Stop => {}
            }
        }
        let failed = lock(&journal).failed.take();
        let (count, why) =
            std::mem::take(&mut *unreached.lock().unwrap_or_else(|e| e.into_inner()));
        let url = toolcall_score::escape(spec.url.as_deref().unwrap_or_default()).to_string();
        let result = if count > 0 && session.lines().1 == 0 {
            // Not one answer from the upstream: a flow of it would be a flow of nothing.
            let _ = std::fs::remove_file(crate::record::journal_path(&options.out));
            Err(RecordError::Unreachable { url, count, why })
        } else {
            finish(&session, &spec, &options).map(|mut recorded| {
                recorded.notes.extend(failed);
                if count > 0 {
                    recorded.notes.push(format!(
                        "{count} request(s) did not reach the upstream server {url} (the client was answered 502): {why}"
                    ));
                }
                let _ = std::fs::remove_file(crate::record::journal_path(&options.out));
                recorded
            })
        };
        let _ = done_tx.send(result);
    });
    Ok(HttpRecording { addr, stop, done })
}

/// Where a copy of each message goes: the journal and the recorder, redacted.
struct Copy<'a> {
    journal: &'a Mutex<Journal>,
    tx: &'a mpsc::Sender<Event>,
    redaction: &'a crate::redact::Redaction,
}

/// Journals and hands over one message that went `direction`, redacted.
fn note(copy: &Copy<'_>, direction: Direction, bytes: &[u8]) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let redacted = copy.redaction.line(bytes);
    lock(copy.journal).append(&json!({
        "from": direction,
        "line": String::from_utf8_lossy(&redacted),
    }));
    let _ = copy.tx.send(Event::Line(direction, redacted.into_owned()));
}

/// One request from the client, forwarded, and its answer streamed back.
fn forward(
    stream: TcpStream,
    agent: &ureq::Agent,
    upstream: &str,
    listen: &Listen,
    copy: &Copy<'_>,
    unreached: &Mutex<(usize, String)>,
) -> std::io::Result<()> {
    let mut client = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .by_ref()
            .take(MAX_HEAD as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return reply(
                &mut client,
                "400 Bad Request",
                "the request head is cut off",
            );
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return reply(
                &mut client,
                "431 Request Header Fields Too Large",
                "the request head is too long",
            );
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if let Some(why) = refusal(header("host"), header("origin"), listen) {
        client.write_all(&forbidden(&why))?;
        return client.flush();
    }
    let body = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(&mut reader)?
    } else {
        let length: u64 = match header("content-length").map(str::parse) {
            Some(Ok(length)) => length,
            Some(Err(_)) => {
                return reply(
                    &mut client,
                    "400 Bad Request",
                    "a Content-Length that is not a number",
                )
            }
            None => 0,
        };
        let limit = toolcall_score::max_input_bytes();
        if length > limit {
            return reply(
                &mut client,
                "413 Content Too Large",
                "the request body is over the input limit",
            );
        }
        let mut body = Vec::new();
        reader.by_ref().take(length).read_to_end(&mut body)?;
        if (body.len() as u64) < length {
            // The client went away mid-body: what arrived is not the request it meant.
            return Ok(());
        }
        body
    };
    note(copy, Direction::Client, &body);

    let mut request = ureq::http::Request::builder()
        .method(method.as_str())
        .uri(upstream);
    for (name, value) in &headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || lower == "content-length" {
            continue;
        }
        request = request.header(name.as_str(), value.as_str());
    }
    let request = match request.body(body) {
        Ok(request) => request,
        Err(e) => return reply(&mut client, "400 Bad Request", &e.to_string()),
    };
    let response = match agent.run(request) {
        Ok(response) => response,
        Err(e) => {
            {
                let mut unreached = unreached.lock().unwrap_or_else(|e| e.into_inner());
                unreached.0 += 1;
                unreached.1 = e.to_string();
            }
            return reply(
                &mut client,
                "502 Bad Gateway",
                &format!("the upstream server: {e}"),
            );
        }
    };
    let status = response.status();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let mut event_stream = false;
    for (name, value) in response.headers() {
        let lower = name.as_str().to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) {
            continue;
        }
        if lower == "content-type" {
            event_stream = value.as_bytes().starts_with(b"text/event-stream");
        }
        out.push_str(name.as_str());
        out.push_str(": ");
        out.push_str(&String::from_utf8_lossy(value.as_bytes()));
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    client.write_all(out.as_bytes())?;
    client.flush()?;
    let mut body = response.into_body().into_reader();
    let mut buf = [0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        if event_stream {
            // Each complete event is recorded before its bytes are written on.
            while let Some(end) = event_end(&pending) {
                let event: Vec<u8> = pending.drain(..end).collect();
                note(copy, Direction::Server, &event_data(&event));
                client.write_all(&event)?;
            }
        } else if pending.len() > toolcall_score::max_input_bytes() as usize {
            // Too large to record: forwarded, not kept.
            client.write_all(&pending)?;
            pending.clear();
        }
        client.flush()?;
    }
    if event_stream {
        note(copy, Direction::Server, &event_data(&pending));
    } else {
        note(copy, Direction::Server, &pending);
    }
    client.write_all(&pending)?;
    client.flush()
}

/// Where the first complete server-sent event in `bytes` ends (after its blank line).
fn event_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// An event's `data:` lines, joined by newlines (the message it carries).
fn event_data(event: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(event);
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    data.join("\n").into_bytes()
}

/// A chunked request body, decoded (bounded by the input limit).
fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let limit = toolcall_score::max_input_bytes();
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = size.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size, 16)
            .map_err(|_| std::io::Error::other("a chunk size that is not hex"))?;
        if size == 0 {
            let mut trailer = String::new();
            while reader.read_line(&mut trailer)? > 2 {
                trailer.clear();
            }
            return Ok(body);
        }
        if body.len() as u64 + size > limit {
            return Err(std::io::Error::other("a chunked body over the input limit"));
        }
        let before = body.len();
        reader.by_ref().take(size).read_to_end(&mut body)?;
        if ((body.len() - before) as u64) < size {
            return Err(std::io::Error::other("a chunked body cut off mid-chunk"));
        }
        let mut crlf = String::new();
        reader.read_line(&mut crlf)?;
    }
}

fn reply(client: &mut TcpStream, status: &str, why: &str) -> std::io::Result<()> {
    let body = format!("toolcall mcp record: {why}\n");
    write!(
        client,
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    client.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_their_blank_line_and_carry_their_data() {
        let stream = b"event: message\ndata: {\"a\":\ndata: 1}\n\nid: 2\r\ndata: x\r\n\r\npart";
        let end = event_end(stream).unwrap();
        assert_eq!(event_data(&stream[..end]), b"{\"a\":\n1}");
        let rest = &stream[end..];
        let end = event_end(rest).unwrap();
        assert_eq!(event_data(&rest[..end]), b"x");
        assert_eq!(event_end(&rest[end..]), None);
    }

    #[test]
    fn an_upstream_that_is_not_an_http_url_is_refused_before_anything_is_written() {
        let out = std::env::temp_dir().join(format!("toolcall-http-{}.json", std::process::id()));
        let options = RecordOptions::new(&out, "", Vec::new());
        let Err(e) = record_http(&options, "127.0.0.1:0", "ftp://example.com/mcp") else {
            panic!("ftp accepted")
        };
        assert!(
            e.to_string().contains("is not an http:// or https:// URL"),
            "{e}"
        );
        assert!(!crate::record::journal_path(&out).exists());
    }

    /// An upstream that answers every request with an empty JSON-RPC result and keeps each
    /// body it was sent.
    fn upstream() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                kept.lock().unwrap().push(body);
                let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                let _ = write!(
                    &stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, seen)
    }

    fn recording(test: &str, upstream: &str, idle: Duration) -> (HttpRecording, PathBuf) {
        let dir = std::env::temp_dir().join(format!("toolcall-http-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let options = RecordOptions {
            snapshot: Some(dir.join("catalog.json")),
            idle_timeout: idle,
            ..RecordOptions::new(dir.join("flow.json"), "", Vec::new())
        };
        (record_http(&options, "127.0.0.1:0", upstream).unwrap(), dir)
    }

    /// Sends `request` (then closes the writing side) and returns the answer's status line.
    fn send(addr: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.lines().next().unwrap_or_default().to_owned()
    }

    fn post(host: &str, extra: &str, body: &str) -> String {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n{extra}\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    /// A DNS-rebinding-shaped request (a name that is not loopback in `Host`, or a page of
    /// another site in `Origin`) does not reach the server behind the recorder.
    #[test]
    fn a_request_that_is_not_from_loopback_is_refused_and_never_forwarded() {
        let (url, seen) = upstream();
        let (recording, _dir) = recording("origin", &url, Duration::from_secs(30));
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let addr = recording.addr();
        assert_eq!(
            send(addr, &post("rebound.evil.example:3002", "", body)),
            "HTTP/1.1 403 Forbidden"
        );
        assert_eq!(
            send(
                addr,
                &post("127.0.0.1", "origin: https://evil.example\r\n", body)
            ),
            "HTTP/1.1 403 Forbidden"
        );
        assert!(
            seen.lock().unwrap().is_empty(),
            "a refused request was forwarded"
        );
        assert_eq!(
            send(addr, &post("localhost:3002", "", body)),
            "HTTP/1.1 200 OK"
        );
        assert_eq!(seen.lock().unwrap().len(), 1);
        recording.stop().unwrap();
    }

    /// A client that goes away mid-body: the part that arrived is not forwarded.
    #[test]
    fn a_body_cut_off_is_dropped_not_forwarded_short() {
        let (url, seen) = upstream();
        let (recording, _dir) = recording("cut", &url, Duration::from_secs(30));
        let whole = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
        let request = post("127.0.0.1", "", whole);
        let cut = &request[..request.len() - 20];
        send(recording.addr(), cut);
        let chunked = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n\
                       40\r\n{\"jsonrpc\":";
        send(recording.addr(), chunked);
        let recorded = recording.stop().unwrap();
        assert!(
            seen.lock().unwrap().is_empty(),
            "{:?}",
            seen.lock().unwrap()
        );
        assert_eq!(recorded.calls, 0);
    }

    /// A connection that says nothing is closed after the idle timeout, not held for ever.
    #[test]
    fn an_idle_connection_is_closed_after_the_idle_timeout() {
        let (url, _) = upstream();
        let (recording, _dir) = recording("idle", &url, Duration::from_millis(200));
        let mut stream = TcpStream::connect(recording.addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let started = std::time::Instant::now();
        let mut buf = [0u8; 64];
        // The recorder closes its side: end of file, not our own read timeout.
        let n = stream.read(&mut buf);
        assert!(
            matches!(n, Ok(0))
                || n.as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "{n:?} after {:?}",
            started.elapsed()
        );
        assert!(started.elapsed() < Duration::from_secs(15));
        recording.stop().unwrap();
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let mut input = &b"4\r\n{\"a\"\r\n3;x=1\r\n:1}\r\n0\r\n\r\n"[..];
        assert_eq!(read_chunked(&mut input).unwrap(), b"{\"a\":1}");
    }
}
