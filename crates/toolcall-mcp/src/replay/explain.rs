//! Error wording: what went wrong while awaiting the server, as the one sentence of a
//! [`Failure`]. rmcp's errors lose their Rust type names, stdout faults say what was printed,
//! an exit says how the process ended.

use std::process::ExitStatus;
use std::time::Duration;

use toolcall_score::escape;

use super::run::{OpError, Phase, Run};
use super::{Failure, FailureKind};
use crate::child::StdoutFault;

impl Run<'_> {
    pub(super) async fn explain(
        &mut self,
        phase: &Phase,
        timeout: Duration,
        error: OpError,
    ) -> Failure {
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
            OpError::Auth { status, challenge } => {
                let body = self.auth_body(status).await;
                phase.fail(FailureKind::Start, auth_message(status, &challenge, body))
            }
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
}

impl Run<'_> {
    /// The body of the server's 401 or 403, which rmcp drops once it has the challenge: the
    /// same refusal asked for again with a bare `initialize` (within a second, at most 4 KiB),
    /// or none if it answers otherwise.
    async fn auth_body(&self, status: u16) -> Option<String> {
        #[cfg(feature = "http")]
        if let crate::Server::Http { url, headers, .. } = &self.flow.server {
            let client = reqwest::Client::new();
            let mut request = client
                .post(url.as_str())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream");
            for (name, value) in headers {
                request = request.header(name.as_str(), value.as_str());
            }
            let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "toolcall-replay", "version": env!("CARGO_PKG_VERSION")}}});
            let asked = async {
                let mut response = request.body(initialize.to_string()).send().await.ok()?;
                if response.status().as_u16() != status {
                    return None;
                }
                let mut body = Vec::new();
                while let Ok(Some(chunk)) = response.chunk().await {
                    body.extend_from_slice(&chunk);
                    if body.len() >= 4096 {
                        body.truncate(4096);
                        break;
                    }
                }
                Some(String::from_utf8_lossy(&body).into_owned())
            };
            return tokio::time::timeout(Duration::from_secs(1), asked)
                .await
                .ok()
                .flatten();
        }
        let _ = status;
        None
    }
}

/// The sentence of an HTTP 401 or 403 with a `WWW-Authenticate` challenge: the status, the
/// challenge whole, its `resource_metadata` (where an OAuth client learns which authorization
/// server to ask), and the body.
pub(super) fn auth_message(status: u16, challenge: &str, body: Option<String>) -> String {
    let reason = if status == 401 {
        "401 Unauthorized"
    } else {
        "403 Forbidden"
    };
    let mut message = format!(
        "the server answered HTTP {reason} with WWW-Authenticate: {}",
        escape(challenge)
    );
    if let Some(metadata) = challenge_param(challenge, "resource_metadata") {
        message.push_str(&format!(
            " (its OAuth protected resource metadata: {})",
            escape(&metadata)
        ));
    }
    match body.as_deref().map(str::trim) {
        Some("") => message.push_str("; the body is empty"),
        Some(body) => message.push_str(&format!("; the body: {}", escape(body))),
        None => {}
    }
    message.push_str(if status == 401 {
        "; a flow sends a token with its `headers`: \"Authorization\": \"Bearer ${TOKEN}\""
    } else {
        "; the token lacks a scope the server asks for"
    });
    message
}

/// A parameter of a `WWW-Authenticate` challenge (`resource_metadata="https://…"`), quoted or
/// not.
fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let mut rest = challenge;
    while let Some(at) = rest.to_ascii_lowercase().find(&name.to_ascii_lowercase()) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        return Some(match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default().to_owned(),
            None => value
                .split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_owned(),
        });
    }
    None
}

pub(super) fn fault_failure(phase: &Phase, fault: StdoutFault) -> Failure {
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

pub(super) fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

pub(super) fn describe_exit(status: ExitStatus) -> String {
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

/// An error from rmcp as a person wants to read it: without the Rust type names it carries in
/// brackets (`[rmcp::transport::worker::WorkerTransport<…>]`), whole (the reason, a status and
/// a body, comes last), and escaped (controls, bidi overrides).
pub(super) fn readable_error(message: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_names_its_resource_metadata() {
        let challenge = r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource""#;
        assert_eq!(
            challenge_param(challenge, "resource_metadata").as_deref(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            challenge_param("Bearer scope=files:read, error=x", "scope").as_deref(),
            Some("files:read")
        );
        assert_eq!(
            challenge_param("Bearer realm=\"x\"", "resource_metadata"),
            None
        );
        let message = auth_message(401, challenge, Some("{\"error\":\"expired\"}".into()));
        assert!(
            message.starts_with("the server answered HTTP 401 Unauthorized with WWW-Authenticate: Bearer error=\"invalid_token\"")
                && message.contains("(its OAuth protected resource metadata: http://127.0.0.1:1/.well-known/oauth-protected-resource)")
                && message.contains("; the body: {\"error\":\"expired\"}"),
            "{message}"
        );
    }

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
