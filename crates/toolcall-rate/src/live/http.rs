//! One request with bounded retries: 429 and 5xx back off exponentially with jitter, honouring
//! `Retry-After`; other 4xx fail at once; a 500 that repeats fails clearly instead of being
//! retried (servers answer 500 to requests they reject — llama.cpp does for some `tool_choice`
//! values — and asking again only spends the budget).

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

/// The retry policy.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Retries after the first attempt (429, 5xx other than a repeated 500, transport errors).
    pub max_retries: u32,
    /// The first backoff; each retry doubles it, with jitter.
    pub base: Duration,
    /// The longest wait; a `Retry-After` longer than this fails instead of waiting.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// Why a request did not bring back a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The request cap was reached before (or between) attempts.
    Cap,
    /// The server answered with an error status, after any retries.
    Status {
        /// The last status.
        status: u16,
        /// The start of the last error body.
        body: String,
        /// Attempts made.
        attempts: u32,
        /// Why it was not retried (further).
        why: String,
    },
    /// The connection failed (refused, reset, timed out), after any retries.
    Transport {
        /// What failed.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
}

impl CallError {
    /// Whether no other request of this run can succeed either (bad key, wrong model or path).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            CallError::Status {
                status: 401 | 403 | 404,
                ..
            }
        )
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Cap => f.write_str("the request cap was reached"),
            CallError::Status {
                status,
                body,
                attempts,
                why,
            } => write!(
                f,
                "HTTP {status} after {attempts} attempt(s) ({why}): {}",
                toolcall_score::escape(body)
            ),
            CallError::Transport { message, attempts } => {
                write!(f, "no response after {attempts} attempt(s): {message}")
            }
        }
    }
}

/// A successful response: the body as it came back.
pub struct Reply {
    /// The body bytes, exactly as received.
    pub body: Vec<u8>,
    /// Attempts made (1 when the first succeeded).
    pub attempts: u32,
}

/// A uniform number in [0, 1) from the standard library's randomly keyed hasher: jitter needs no
/// more than that, and no extra crate.
fn unit_random() -> f64 {
    let bits = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait before retry number `retry` (0-based): the server's `Retry-After` when it gave one,
/// else `base × 2^retry` with "equal jitter" (half fixed, half random), capped at `max_wait`.
fn backoff(policy: &RetryPolicy, retry: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after {
        return wait;
    }
    let full = policy
        .base
        .saturating_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX))
        .min(policy.max_wait);
    full / 2 + full.mul_f64(unit_random() / 2.0)
}

/// `Retry-After` in seconds (HTTP dates are not used by the APIs this talks to), or OpenAI's
/// `retry-after-ms`.
fn retry_after(response: &ureq::http::Response<ureq::Body>) -> Option<Duration> {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    header("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| header("retry-after").map(Duration::from_secs_f64))
}

/// Posts `body` to `url` with `headers`, retrying per `policy`. `may_send` is asked before every
/// attempt (the request cap); `sent` is told after each attempt was sent.
pub fn post(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    policy: &RetryPolicy,
    may_send: &mut dyn FnMut() -> bool,
    sleep: &mut dyn FnMut(Duration),
) -> Result<Reply, CallError> {
    let mut attempts = 0u32;
    let mut last_500: Option<String> = None;
    loop {
        if !may_send() {
            return Err(CallError::Cap);
        }
        attempts += 1;
        let mut request = agent.post(url).header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let retries_left = attempts <= policy.max_retries;
        let wait = match request.send(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let after = retry_after(&response);
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(64 * 1024 * 1024)
                    .read_to_vec();
                let bytes = match text {
                    Ok(bytes) => bytes,
                    // The connection dropped mid-body: a transport failure, retried as one.
                    Err(_) if retries_left => {
                        sleep(backoff(policy, attempts - 1, None));
                        continue;
                    }
                    Err(e) => {
                        return Err(CallError::Transport {
                            message: format!("reading the body: {e}"),
                            attempts,
                        })
                    }
                };
                if (200..300).contains(&status) {
                    return Ok(Reply {
                        body: bytes,
                        attempts,
                    });
                }
                let snippet: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
                let fail = |why: &str| CallError::Status {
                    status,
                    body: snippet.clone(),
                    attempts,
                    why: why.to_owned(),
                };
                let retryable = status == 429 || status >= 500;
                if !retryable {
                    return Err(fail("not retried: a client error does not change on retry"));
                }
                if status == 500 {
                    if last_500.is_some() {
                        return Err(fail(
                            "a repeated 500 means the server rejects this request (e.g. an unsupported tool_choice); not retried further",
                        ));
                    }
                    last_500 = Some(snippet.clone());
                }
                if !retries_left {
                    return Err(fail(&format!(
                        "gave up after {} retries",
                        policy.max_retries
                    )));
                }
                if let Some(after) = after.filter(|a| *a > policy.max_wait) {
                    return Err(fail(&format!(
                        "the server asked to wait {:.0} s, longer than the {:.0} s allowed",
                        after.as_secs_f64(),
                        policy.max_wait.as_secs_f64()
                    )));
                }
                backoff(policy, attempts - 1, after)
            }
            Err(e) => {
                if !retries_left {
                    return Err(CallError::Transport {
                        message: e.to_string(),
                        attempts,
                    });
                }
                backoff(policy, attempts - 1, None)
            }
        };
        sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            base: Duration::from_millis(100),
            max_wait: Duration::from_millis(1000),
        };
        for retry in 0..8 {
            let full = Duration::from_millis(100 * (1 << retry)).min(policy.max_wait);
            let wait = backoff(&policy, retry, None);
            assert!(wait >= full / 2 && wait <= full, "retry {retry}: {wait:?}");
        }
        assert_eq!(
            backoff(&policy, 3, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
    }
}
