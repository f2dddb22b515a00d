//! One exchange: the request read (within the limit) and forwarded, the response passed back as
//! it arrives and judged as it passes. A stream's bytes go on as they come; with `block`, only
//! the bytes of events whose call names are not yet complete are held (usually one event), so
//! that an unknown name is replaced by the provider's in-stream error event before any of its
//! bytes went out. A body the guard cannot read is passed through and logged as unread
//! (`--fail-closed` blocks it); the upstream's own statuses and errors pass through unchanged.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::channel::{Channel, Sender};
use http_body_util::{BodyExt, Either, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use serde_json::{json, Value};
use toolcall_score::provider::{Framing, StreamWatch};
use toolcall_score::{Case, Finding, Format};

use crate::config::{Action, Config};
use crate::judge::{self, cause_name, unknown_calls};
use crate::log::{now_rfc3339, Log};
use crate::metrics::Metrics;
use crate::repair::{repair, Repaired, Resend};
use crate::route::route;
use crate::shape::{self, BLOCKED};

/// The body the guard answers with: whole, or fed as it arrives.
pub(crate) type Body = Either<Full<Bytes>, Channel<Bytes, std::io::Error>>;

/// The header a client sends the `--token` in.
pub const TOKEN_HEADER: &str = "x-toolcall-guard-token";

/// What every exchange shares.
pub(crate) struct State {
    pub(crate) config: Config,
    pub(crate) client: crate::upstream::Client,
    pub(crate) log: Option<Log>,
    pub(crate) metrics: Metrics,
}

/// Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), and the guard's
/// own.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | TOKEN_HEADER
    )
}

fn whole(status: StatusCode, headers: HeaderMap, bytes: Bytes) -> Response<Body> {
    let mut response = Response::new(Either::Left(Full::new(bytes)));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    whole(status, headers, Bytes::from(value.to_string()))
}

/// Whether the token a request carries is the configured one (compared in time independent of
/// where they differ).
fn token_ok(config: &Config, headers: &HeaderMap) -> bool {
    let Some(expected) = config.token.as_deref() else {
        return true;
    };
    let given = headers
        .get(TOKEN_HEADER)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default();
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected.as_bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// One exchange as the log and the metrics see it.
struct Exchange {
    start: Instant,
    route: &'static str,
    format: Option<Format>,
    path: String,
    model: Option<String>,
    request: Option<Value>,
    stream: bool,
    status: u16,
    /// The guard's own time (reading, scoring), not the upstream's or the client's.
    added: Duration,
    /// The request as it came, for `--record`.
    raw_request: Option<Bytes>,
}

/// How an exchange was judged.
#[derive(Default)]
struct Judged {
    verdict: &'static str,
    action: &'static str,
    calls: usize,
    findings: Vec<Finding>,
    unread: Option<String>,
    decided_at: Option<usize>,
    bytes: usize,
    end: &'static str,
    response: Option<Value>,
    /// The response as it came and the extension of its recording, for `--record`.
    recorded: Option<(Vec<u8>, &'static str)>,
    /// Requests the repair sent.
    repairs: Option<usize>,
}

fn finish(state: &State, exchange: &Exchange, judged: Judged) {
    let route = exchange.route;
    state.metrics.response(route, judged.verdict);
    state.metrics.calls(route, judged.calls);
    for f in unknown_calls(&judged.findings) {
        let cause = f.cause.map_or_else(|| "unknown".to_owned(), cause_name);
        state
            .metrics
            .unknown(route, f.name.as_deref().unwrap_or(""), &cause);
    }
    if judged.action != "none" {
        state.metrics.action(judged.action);
    }
    state.metrics.added(exchange.added.as_secs_f64());
    #[cfg(feature = "otlp")]
    if let Some(url) = &state.config.otlp {
        let unknown = unknown_calls(&judged.findings);
        let document =
            crate::otlp::document(route, exchange.model.as_deref(), judged.verdict, &unknown);
        if let Some(document) = document {
            let client = state.client.clone();
            let endpoint = crate::otlp::endpoint(url);
            let headers = [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )];
            tokio::spawn(async move {
                let body = Bytes::from(document.to_string());
                if let Ok(mut answer) = client.send(Method::POST, &endpoint, &headers, body).await {
                    // Read to the end, so the connection goes back to the pool.
                    while let Ok(Some(_)) = answer.chunk().await {}
                }
            });
        }
    }
    let Some(log) = &state.log else { return };
    record(&state.config, log, exchange, &judged);
    if state.config.log.is_none() {
        return;
    }
    let mut entry = json!({
        "time": now_rfc3339(),
        "route": route,
        "path": exchange.path,
        "model": exchange.model,
        "status": exchange.status,
        "stream": exchange.stream,
        "verdict": judged.verdict,
        "action": judged.action,
        "calls": judged.calls,
        "findings": judged.findings,
        "latency_added_ms": exchange.added.as_secs_f64() * 1000.0,
        "total_ms": exchange.start.elapsed().as_secs_f64() * 1000.0,
        "end": judged.end,
    });
    let fields = entry.as_object_mut();
    if let Some(fields) = fields {
        if let Some(n) = judged.repairs {
            fields.insert("repairs".into(), json!(n));
        }
        if let Some(why) = judged.unread {
            fields.insert("unread".into(), Value::String(why));
        }
        if let Some(at) = judged.decided_at {
            fields.insert("decided_at_byte".into(), json!(at));
            fields.insert("stream_bytes".into(), json!(judged.bytes));
        }
        if let Some(format) = exchange.format {
            fields.insert("format".into(), Value::String(format.as_str().to_owned()));
        }
        // The pair `toolcall rate` reads.
        if let (Some(request), Some(response)) = (&exchange.request, judged.response) {
            fields.insert("request".into(), request.clone());
            fields.insert("response".into(), response);
        }
    }
    log.write(&entry);
}

/// A count that makes each recording's id unique within a run.
static RECORDED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `--record DIR`: the exchange as a case and its recording, when it was judged.
fn record(config: &Config, log: &Log, exchange: &Exchange, judged: &Judged) {
    let Some(dir) = &config.record else { return };
    let judged_at_all = matches!(judged.verdict, "pass" | "findings" | "unknown");
    if !judged_at_all || (config.record_unknown_only && judged.verdict != "unknown") {
        return;
    }
    let (Some(request), Some((response, ext))) = (&exchange.raw_request, &judged.recorded) else {
        return;
    };
    let n = RECORDED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = format!("{}-{n}", now_rfc3339().replace([':', '.'], ""));
    let case = dir.join("cases").join("guard").join(format!("{id}.json"));
    let recording = dir
        .join("recorded")
        .join(&config.record_agent)
        .join("guard")
        .join(format!("{id}.{ext}"));
    // The recording first: a case is never there without its response.
    log.files(vec![
        (recording, response.clone()),
        (case, request.to_vec()),
    ]);
}

/// Serves one request.
pub(crate) async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let start = Instant::now();
    let config = &state.config;
    if !token_ok(config, request.headers()) {
        return Ok(json_response(
            StatusCode::UNAUTHORIZED,
            &json!({"error": {"message": format!("toolcall guard: send the guard's token as {TOKEN_HEADER}")}}),
        ));
    }
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if request.uri().path() == "/metrics" && request.method() == Method::GET {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        return Ok(whole(
            StatusCode::OK,
            headers,
            Bytes::from(state.metrics.render()),
        ));
    }
    let Some(route) = route(&config.upstreams, &path_and_query) else {
        return Ok(json_response(
            StatusCode::BAD_GATEWAY,
            &shape::error_body(
                None,
                StatusCode::BAD_GATEWAY,
                "toolcall guard: no upstream serves this path (name one with --upstream NAME=URL, \
                 or give a default --upstream URL)",
            ),
        ));
    };
    let format = route.format.filter(|_| request.method() == Method::POST);
    let (parts, body) = request.into_parts();
    let limit = config.max_body_bytes;
    let body = match tokio::time::timeout(config.idle_timeout, Limited::new(body, limit).collect())
        .await
    {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            let message = format!(
                "toolcall guard: the request is over the input limit ({limit} bytes; \
                 --max-input-bytes)"
            );
            let status = StatusCode::PAYLOAD_TOO_LARGE;
            return Ok(json_response(
                status,
                &shape::error_body(format, status, &message),
            ));
        }
        Ok(Err(_)) | Err(_) => {
            let status = StatusCode::REQUEST_TIMEOUT;
            return Ok(json_response(
                status,
                &shape::error_body(
                    format,
                    status,
                    "toolcall guard: the request body did not arrive",
                ),
            ));
        }
    };
    let read = format.map(|f| judge::read_request(f, &route.path, &body));
    let path = route.path.split('?').next().unwrap_or("").to_owned();
    let mut exchange = Exchange {
        start,
        route: format.map_or("unchecked", Format::as_str),
        format,
        path,
        model: read.as_ref().and_then(|r| r.model.clone()),
        request: read.as_ref().and_then(|r| r.value.clone()),
        stream: false,
        status: 0,
        added: start.elapsed(),
        raw_request: config.record.is_some().then(|| body.clone()),
    };
    let url = format!("{}{}", route.upstream.base, route.path);
    let mut forwarded: Vec<(HeaderName, HeaderValue)> = parts
        .headers
        .iter()
        .filter(|(name, _)| {
            let recoded = format.is_some() && *name == header::ACCEPT_ENCODING;
            !hop_by_hop(name) && !recoded
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    if format.is_some() {
        // The guard reads what it judges: no compression from the upstream.
        forwarded.push((
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        ));
    }
    let resend = match (&read, config.action) {
        (Some(read), Action::Repair) => read.value.clone().map(|request| Resend {
            method: parts.method.clone(),
            url: url.clone(),
            headers: forwarded
                .iter()
                .filter(|(n, _)| *n != header::CONTENT_TYPE)
                .cloned()
                .collect(),
            request,
        }),
        _ => None,
    };
    let sent = state
        .client
        .send(parts.method.clone(), &url, &forwarded, body)
        .await;
    let upstream = match sent {
        Ok(upstream) => upstream,
        Err(e) => {
            let status = if e.timeout {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            };
            // The words of a send error never hold the URL, whose query may carry a key.
            let message = format!("toolcall guard could not reach the upstream: {}", e.why);
            exchange.status = status.as_u16();
            finish(
                &state,
                &exchange,
                Judged {
                    verdict: "upstream_error",
                    action: "none",
                    end: "upstream_error",
                    ..Judged::default()
                },
            );
            return Ok(json_response(
                status,
                &shape::error_body(format, status, &message),
            ));
        }
    };
    let status = upstream.status;
    exchange.status = status.as_u16();
    let mut headers = HeaderMap::new();
    for (name, value) in &upstream.headers {
        if !hop_by_hop(name) {
            headers.append(name, value.clone());
        }
    }
    let content_type = upstream
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let framing = if content_type.starts_with("text/event-stream") {
        Some(Framing::Sse)
    } else if content_type.starts_with("application/x-ndjson") {
        Some(Framing::Ndjson)
    } else {
        None
    };
    exchange.stream = framing.is_some();
    // What is passed through unjudged: unchecked routes, the upstream's own errors.
    let (Some(format), Some(read)) = (format, read) else {
        return Ok(pass(state, upstream, status, headers, exchange, None));
    };
    if !status.is_success() {
        let judged = Judged {
            verdict: "upstream_status",
            action: "none",
            ..Judged::default()
        };
        return Ok(pass(
            state,
            upstream,
            status,
            headers,
            exchange,
            Some(judged),
        ));
    }
    let Some(case) = read.case else {
        let why = read.unread.unwrap_or_default();
        return Ok(unread(state, upstream, status, headers, exchange, why));
    };
    match framing {
        Some(framing) => Ok(stream(
            state, upstream, status, headers, exchange, case, format, framing,
        )),
        None => Ok(body_whole(
            state, upstream, status, headers, exchange, case, format, resend,
        )
        .await),
    }
}

/// An exchange whose request the guard could not read: passed through (logged as unread), or,
/// with `--fail-closed`, refused.
fn unread(
    state: Arc<State>,
    upstream: crate::upstream::Answer,
    status: StatusCode,
    headers: HeaderMap,
    exchange: Exchange,
    why: String,
) -> Response<Body> {
    if state.config.fail_closed {
        let message = format!("toolcall guard could not read this exchange (--fail-closed): {why}");
        let body = shape::error_body(exchange.format, StatusCode::BAD_GATEWAY, &message);
        finish(
            &state,
            &exchange,
            Judged {
                verdict: "unread",
                action: "fail_closed",
                unread: Some(why),
                end: "blocked",
                ..Judged::default()
            },
        );
        return json_response(StatusCode::BAD_GATEWAY, &body);
    }
    let judged = Judged {
        verdict: "unread",
        action: "pass_unread",
        unread: Some(why),
        ..Judged::default()
    };
    pass(state, upstream, status, headers, exchange, Some(judged))
}

/// Streams the upstream's body through unread; `judged` is logged when it ends (unchecked
/// routes are not logged).
fn pass(
    state: Arc<State>,
    upstream: crate::upstream::Answer,
    status: StatusCode,
    headers: HeaderMap,
    exchange: Exchange,
    judged: Option<Judged>,
) -> Response<Body> {
    let (tx, body) = Channel::new(4);
    tokio::spawn(async move {
        let idle = state.config.idle_timeout;
        let (end, bytes) = copy(upstream, tx, idle, Vec::new()).await;
        if let Some(mut judged) = judged {
            judged.end = end;
            judged.bytes = bytes;
            finish(&state, &exchange, judged);
        }
    });
    let mut response = Response::new(Either::Right(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Copies `first` and then the rest of the upstream's body to the client as it arrives; how it
/// ended and the bytes sent.
async fn copy(
    mut upstream: crate::upstream::Answer,
    mut tx: Sender<Bytes, std::io::Error>,
    idle: Duration,
    first: Vec<u8>,
) -> (&'static str, usize) {
    let mut bytes = first.len();
    if !first.is_empty() && send(&mut tx, Bytes::from(first), idle).await.is_err() {
        return ("client_closed", bytes);
    }
    loop {
        match next_chunk(&mut upstream, idle).await {
            Next::Chunk(chunk) => {
                bytes += chunk.len();
                if send(&mut tx, chunk, idle).await.is_err() {
                    return ("client_closed", bytes);
                }
            }
            Next::End => return ("complete", bytes),
            Next::Broken(end) => {
                abort(tx, end).await;
                return (end, bytes);
            }
        }
    }
}

/// Cuts the client's body as the upstream's was cut, once what was sent before has left.
async fn abort(mut tx: Sender<Bytes, std::io::Error>, end: &'static str) {
    for _ in 0..100 {
        if tx.capacity() == tx.max_capacity() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // hyper writes a frame it took before it reads the error that ends the connection.
    tokio::time::sleep(Duration::from_millis(20)).await;
    tx.abort(std::io::Error::other(end));
}

enum Next {
    Chunk(Bytes),
    End,
    /// The upstream closed mid-body or went quiet: how the log says it.
    Broken(&'static str),
}

async fn next_chunk(upstream: &mut crate::upstream::Answer, idle: Duration) -> Next {
    match tokio::time::timeout(idle, upstream.chunk()).await {
        Ok(Ok(Some(chunk))) => Next::Chunk(chunk),
        Ok(Ok(None)) => Next::End,
        Ok(Err(_)) => Next::Broken("upstream_closed"),
        Err(_) => Next::Broken("upstream_timeout"),
    }
}

/// Sends bytes to the client; an error when it is gone or stopped reading for `idle`.
async fn send(
    tx: &mut Sender<Bytes, std::io::Error>,
    bytes: Bytes,
    idle: Duration,
) -> Result<(), ()> {
    match tokio::time::timeout(idle, tx.send_data(bytes)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}

/// A body that is not a stream: read whole (within the limit), scored, then sent as it came or,
/// for `block` and an unknown name, replaced by the provider's error (for `repair`, by the
/// repaired response, or the error when the repair gave up).
#[allow(clippy::too_many_arguments)]
async fn body_whole(
    state: Arc<State>,
    mut upstream: crate::upstream::Answer,
    status: StatusCode,
    headers: HeaderMap,
    mut exchange: Exchange,
    case: Case,
    format: Format,
    resend: Option<Resend>,
) -> Response<Body> {
    let config = &state.config;
    let mut body = Vec::new();
    loop {
        match next_chunk(&mut upstream, config.idle_timeout).await {
            Next::Chunk(chunk) => {
                body.extend_from_slice(&chunk);
                if body.len() > config.max_body_bytes {
                    // Too big to judge: what came so far, then the rest, unread.
                    let why = format!(
                        "the response is over the input limit ({} bytes)",
                        config.max_body_bytes
                    );
                    return over_limit(state, upstream, status, headers, exchange, body, why);
                }
            }
            Next::End => break,
            Next::Broken(end) => {
                let why = format!("the upstream's body ended early ({end})");
                finish(
                    &state,
                    &exchange,
                    Judged {
                        verdict: "unread",
                        action: "none",
                        unread: Some(why),
                        end,
                        ..Judged::default()
                    },
                );
                // The client sees the body cut as the upstream cut it.
                let (mut tx, channel) = Channel::new(1);
                let idle = config.idle_timeout;
                tokio::spawn(async move {
                    if send(&mut tx, Bytes::from(body), idle).await.is_ok() {
                        abort(tx, end).await;
                    }
                });
                let mut response = Response::new(Either::Right(channel));
                *response.status_mut() = status;
                *response.headers_mut() = headers;
                return response;
            }
        }
    }
    let began = Instant::now();
    let text = String::from_utf8_lossy(&body);
    let parsed = toolcall_score::Response::from_json_str(&text, Some(format));
    let mut judged = Judged {
        end: "complete",
        action: "none",
        bytes: body.len(),
        ..Judged::default()
    };
    let response = match parsed {
        Ok(response) => response,
        Err(e) => {
            exchange.added += began.elapsed();
            let why = format!("the response does not read as {format}: {e}");
            if config.fail_closed {
                let message =
                    format!("toolcall guard could not read this exchange (--fail-closed): {why}");
                judged.verdict = "unread";
                judged.action = "fail_closed";
                judged.unread = Some(why);
                finish(&state, &exchange, judged);
                return json_response(
                    StatusCode::BAD_GATEWAY,
                    &shape::error_body(Some(format), StatusCode::BAD_GATEWAY, &message),
                );
            }
            judged.verdict = "unread";
            judged.action = "pass_unread";
            judged.unread = Some(why);
            finish(&state, &exchange, judged);
            return whole(status, headers, Bytes::from(body));
        }
    };
    let verdict = judge::verdict(&case, &response);
    let unknown = unknown_calls(verdict.findings());
    let blocked = !unknown.is_empty() && config.action != Action::Observe;
    let mut message = blocked.then(|| judge::message(&unknown));
    judged.verdict = verdict_name(&verdict);
    judged.calls = response.calls.len();
    judged.findings = verdict.findings().to_vec();
    judged.response = serde_json::from_slice(&body).ok();
    if config.record.is_some() {
        judged.recorded = Some((body.clone(), "json"));
    }
    exchange.added += began.elapsed();
    if let (Some(resend), true) = (&resend, blocked) {
        let outcome = repair(
            &state.client,
            resend,
            &case,
            format,
            &body,
            config.max_body_bytes,
        )
        .await;
        match outcome {
            Repaired::Fixed {
                status,
                headers,
                body,
                tries,
            } => {
                judged.action = "repair";
                judged.repairs = Some(tries);
                finish(&state, &exchange, judged);
                return whole(status, headers, Bytes::from(body));
            }
            Repaired::Upstream {
                status,
                headers,
                body,
                tries,
            } => {
                judged.action = "repair";
                judged.repairs = Some(tries);
                finish(&state, &exchange, judged);
                return whole(status, headers, Bytes::from(body));
            }
            Repaired::GaveUp { why, tries } | Repaired::Failed { why, tries } => {
                judged.repairs = Some(tries);
                message = message.map(|m| format!("{m}; the repair gave up: {why}"));
            }
        }
    }
    if let Some(message) = message {
        judged.action = "block";
        finish(&state, &exchange, judged);
        return json_response(BLOCKED, &shape::error_body(Some(format), BLOCKED, &message));
    }
    finish(&state, &exchange, judged);
    whole(status, headers, Bytes::from(body))
}

fn verdict_name(verdict: &toolcall_score::Verdict) -> &'static str {
    if !unknown_calls(verdict.findings()).is_empty() {
        "unknown"
    } else if verdict.is_pass() {
        "pass"
    } else {
        "findings"
    }
}

fn over_limit(
    state: Arc<State>,
    upstream: crate::upstream::Answer,
    status: StatusCode,
    headers: HeaderMap,
    exchange: Exchange,
    first: Vec<u8>,
    why: String,
) -> Response<Body> {
    if state.config.fail_closed {
        let message = format!("toolcall guard could not read this exchange (--fail-closed): {why}");
        finish(
            &state,
            &exchange,
            Judged {
                verdict: "unread",
                action: "fail_closed",
                unread: Some(why),
                end: "blocked",
                ..Judged::default()
            },
        );
        return json_response(
            StatusCode::BAD_GATEWAY,
            &shape::error_body(exchange.format, StatusCode::BAD_GATEWAY, &message),
        );
    }
    let (tx, body) = Channel::new(4);
    tokio::spawn(async move {
        let (end, bytes) = copy(upstream, tx, state.config.idle_timeout, first).await;
        let judged = Judged {
            verdict: "unread",
            action: "pass_unread",
            unread: Some(why),
            end,
            bytes,
            ..Judged::default()
        };
        finish(&state, &exchange, judged);
    });
    let mut response = Response::new(Either::Right(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Where the first event carrying one of the `unknown` calls began.
fn first_call_start(watch: &StreamWatch, unknown: &[&Finding]) -> usize {
    first_unknown_start(watch.calls(), |i| watch.call_start(i), unknown).unwrap_or(0)
}

/// The byte at which the first of `calls` that an `unknown` finding names starts (`start`
/// gives call `i`'s), if any does.
fn first_unknown_start(
    calls: &[toolcall_score::ToolCall],
    start: impl Fn(usize) -> Option<usize>,
    unknown: &[&Finding],
) -> Option<usize> {
    calls
        .iter()
        .enumerate()
        .filter(|(_, call)| {
            unknown
                .iter()
                .any(|f| f.name.as_deref() == Some(&call.name))
        })
        .filter_map(|(i, _)| start(i))
        .min()
}

/// Ends a blocked stream: the first `upto` bytes held (what came before the event naming the
/// call) go on, then the provider's in-stream error; the rest held is never sent. A client that
/// left is nothing to tell.
async fn end_blocked(
    tx: &mut Sender<Bytes, std::io::Error>,
    held: &mut Vec<u8>,
    upto: usize,
    format: Format,
    message: &str,
    idle: Duration,
) {
    let before: Vec<u8> = held.drain(..upto.min(held.len())).collect();
    held.clear();
    if !before.is_empty() {
        let _ = send(tx, Bytes::from(before), idle).await;
    }
    let _ = send(tx, Bytes::from(shape::stream_error(format, message)), idle).await;
}

/// A stream: passed on as it arrives and watched; see the module docs.
#[allow(clippy::too_many_arguments)]
fn stream(
    state: Arc<State>,
    upstream: crate::upstream::Answer,
    status: StatusCode,
    headers: HeaderMap,
    exchange: Exchange,
    case: Case,
    format: Format,
    framing: Framing,
) -> Response<Body> {
    let (tx, body) = Channel::new(8);
    tokio::spawn(watch_stream(
        state, upstream, tx, exchange, case, format, framing,
    ));
    let mut response = Response::new(Either::Right(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

async fn watch_stream(
    state: Arc<State>,
    mut upstream: crate::upstream::Answer,
    mut tx: Sender<Bytes, std::io::Error>,
    mut exchange: Exchange,
    case: Case,
    format: Format,
    framing: Framing,
) {
    let config = &state.config;
    let idle = config.idle_timeout;
    // A stream is not repaired: it is blocked.
    let block = config.action != Action::Observe;
    let keep = config.log.is_some() || config.record.is_some();
    let mut watch = Some(StreamWatch::new(format, framing));
    let mut raw: Vec<u8> = Vec::new();
    let mut held: Vec<u8> = Vec::new();
    let mut sent = 0usize;
    let mut received = 0usize;
    let mut judged_calls = 0usize;
    let mut judged = Judged {
        action: "none",
        ..Judged::default()
    };
    let mut end = "complete";
    loop {
        let chunk = match next_chunk(&mut upstream, idle).await {
            Next::Chunk(chunk) => chunk,
            Next::End => break,
            Next::Broken(why) => {
                end = why;
                break;
            }
        };
        received += chunk.len();
        if !block || watch.is_none() {
            if send(&mut tx, chunk.clone(), idle).await.is_err() {
                end = "client_closed";
                break;
            }
            sent += chunk.len();
        } else {
            held.extend_from_slice(&chunk);
        }
        let began = Instant::now();
        if let Some(w) = watch.as_mut() {
            if keep {
                raw.extend_from_slice(&chunk);
            }
            let outcome = if received > config.max_body_bytes {
                Err(format!(
                    "the stream is over the input limit ({} bytes)",
                    config.max_body_bytes
                ))
            } else {
                w.push(&chunk)
                    .map_err(|e| format!("the stream does not read as {format}: {e}"))
            };
            match outcome {
                Err(why) => {
                    watch = None;
                    raw = Vec::new();
                    judged.unread = Some(why.clone());
                    judged.verdict = "unread";
                    if block && config.fail_closed {
                        judged.action = "fail_closed";
                        let message = format!(
                            "toolcall guard could not read this exchange (--fail-closed): {why}"
                        );
                        let _ = send(
                            &mut tx,
                            Bytes::from(shape::stream_error(format, &message)),
                            idle,
                        )
                        .await;
                        end = "blocked";
                        break;
                    }
                    judged.action = "pass_unread";
                }
                Ok(()) => {
                    if w.calls().len() > judged_calls {
                        judged_calls = w.calls().len();
                        judged.decided_at = w.first_complete_at().or(Some(received));
                        let partial = toolcall_score::Response {
                            calls: w.calls().to_vec(),
                            ..toolcall_score::Response::empty(format)
                        };
                        let verdict = judge::verdict(&case, &partial);
                        let unknown = unknown_calls(verdict.findings());
                        if block && !unknown.is_empty() {
                            let message = judge::message(&unknown);
                            exchange.added += began.elapsed();
                            // What came before the call's event goes on; the event naming the
                            // call, and any after it, never do.
                            let upto = first_call_start(w, &unknown).saturating_sub(sent);
                            end_blocked(&mut tx, &mut held, upto, format, &message, idle).await;
                            judged.action = "block";
                            judged.verdict = "unknown";
                            if config.record.is_some() {
                                // What came, up to the call that was blocked.
                                let ext = if framing == Framing::Ndjson {
                                    "ndjson"
                                } else {
                                    "sse"
                                };
                                judged.recorded = Some((raw.clone(), ext));
                            }
                            judged.calls = partial.calls.len();
                            judged.findings = verdict.findings().to_vec();
                            end = "blocked";
                            break;
                        }
                    }
                }
            }
        }
        exchange.added += began.elapsed();
        // With `block`, what is checked goes on; without a watch, everything held.
        if block && !held.is_empty() {
            let upto = watch.as_ref().map_or(received, StreamWatch::checked);
            let n = upto.saturating_sub(sent).min(held.len());
            if n > 0 {
                let out: Vec<u8> = held.drain(..n).collect();
                if send(&mut tx, Bytes::from(out), idle).await.is_err() {
                    end = "client_closed";
                    break;
                }
                sent += n;
            }
        }
    }
    if end != "blocked" {
        if let Some(w) = watch.take() {
            let began = Instant::now();
            let starts: Vec<usize> = (0..).map_while(|i| w.call_start(i)).collect();
            match w.finish() {
                Ok(response) => {
                    let verdict = judge::verdict(&case, &response);
                    let unknown = unknown_calls(verdict.findings());
                    judged.decided_at.get_or_insert(received);
                    judged.verdict = verdict_name(&verdict);
                    judged.calls = response.calls.len();
                    if block && !unknown.is_empty() && end == "complete" {
                        let message = judge::message(&unknown);
                        // What came before the first unknown call's event goes on.
                        let upto = first_unknown_start(
                            &response.calls,
                            |i| starts.get(i).copied(),
                            &unknown,
                        )
                        .unwrap_or(sent)
                        .saturating_sub(sent);
                        end_blocked(&mut tx, &mut held, upto, format, &message, idle).await;
                        judged.action = "block";
                        end = "blocked";
                    }
                    judged.findings = verdict.findings().to_vec();
                    if keep {
                        let text = String::from_utf8_lossy(&raw).into_owned();
                        if config.record.is_some() {
                            let ext = if framing == Framing::Ndjson {
                                "ndjson"
                            } else {
                                "sse"
                            };
                            judged.recorded = Some((text.clone().into_bytes(), ext));
                        }
                        judged.response = Some(Value::String(text));
                    }
                }
                Err(e) => {
                    judged.verdict = "unread";
                    judged.action = "pass_unread";
                    judged.unread = Some(format!("the stream does not read as {format}: {e}"));
                }
            }
            exchange.added += began.elapsed();
        }
        if !held.is_empty() && end != "client_closed" {
            let out = std::mem::take(&mut held);
            if send(&mut tx, Bytes::from(out), idle).await.is_err() {
                end = "client_closed";
            }
        }
        if matches!(end, "upstream_closed" | "upstream_timeout") {
            abort(tx, end).await;
        }
    }
    judged.end = end;
    judged.bytes = received;
    finish(&state, &exchange, judged);
}
