//! Live mode: the bundled cases sent to a real model, each response recorded as it arrives and
//! scored, under a hard budget.
//!
//! - Each case becomes a request in the provider's shape, which that format's module builds
//!   ([`Format::request_body`]): sent as written when it is already in that shape, rebuilt from
//!   the parsed case otherwise. `tool_choice` is sent explicitly (`auto` unless told otherwise).
//! - The budget: `max_requests` counts every HTTP request sent, retries included; `max_tokens`
//!   counts the `usage` blocks of the responses (OpenAI `prompt_tokens + completion_tokens`,
//!   Anthropic `input_tokens + output_tokens`) and stops before the next case once reached (so a
//!   run can overshoot by one response). A stop is clean and says why; the report covers what
//!   was scored.
//! - Retries: see [`http`]. A status that no request can get past (401, 403, 404) stops the run;
//!   so do three failed cases in a row.
//! - Recording: with a record directory, each 2xx body is written byte for byte to
//!   `<record-dir>/<case-id>.json` (temp file + rename) as it arrives. **Resume is the default**:
//!   a case already recorded there is scored from disk and not asked again (`fresh` asks again
//!   and overwrites). A body that is not a response is counted as bad and not recorded, so the
//!   next run asks again.
//!
//! Requests are sent one at a time: rate limits, not the client, bound a nightly run's speed.

pub mod http;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;
use toolcall_score::escape_path;

use serde_json::Value;
use toolcall_score::{Case, Format, Response};

pub use http::{CallError, RetryPolicy};
pub use toolcall_score::RequestSettings;

use crate::scan::{case_id, walk};
use crate::tally::{Origin, Tally};
use crate::RateError;

/// The provider API a live run talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI-compatible Chat Completions: `POST {base}/chat/completions`, `Authorization:
    /// Bearer`. The base URL includes the version (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:8080/v1` for llama.cpp).
    OpenAi,
    /// Anthropic Messages: `POST {base}/v1/messages`, `x-api-key`, `anthropic-version`. The base
    /// URL is the host (`https://api.anthropic.com`).
    Anthropic,
}

impl Provider {
    /// The format its responses are recorded in.
    pub fn format(self) -> Format {
        match self {
            Provider::OpenAi => Format::OpenaiChat,
            Provider::Anthropic => Format::Anthropic,
        }
    }

    /// The environment variable the key is read from by default.
    pub fn key_variable(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The base URL used when none is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The endpoint for `base` (a base that already ends in the endpoint path is used as is).
    pub fn endpoint(self, base: &str) -> String {
        let base = base.trim_end_matches('/');
        let path = match self {
            Provider::OpenAi => "/chat/completions",
            Provider::Anthropic => "/v1/messages",
        };
        if base.ends_with(path) {
            base.to_owned()
        } else {
            format!("{base}{path}")
        }
    }

    fn compiled(self) -> bool {
        match self {
            Provider::OpenAi => cfg!(feature = "openai"),
            Provider::Anthropic => cfg!(feature = "anthropic"),
        }
    }
}

impl FromStr for Provider {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-chat" | "chat" => Ok(Provider::OpenAi),
            "anthropic" | "claude" | "messages" => Ok(Provider::Anthropic),
            _ => Err(format!(
                "unknown live provider `{}`: expected openai or anthropic",
                toolcall_score::escape(s)
            )),
        }
    }
}

/// Everything a live run needs.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Which API.
    pub provider: Provider,
    /// The base URL (see [`Provider`]).
    pub base_url: String,
    /// The API key, if any (a local server needs none).
    pub api_key: Option<String>,
    /// The cases directory.
    pub cases: PathBuf,
    /// Where responses are recorded, one file per case id.
    pub record_dir: Option<PathBuf>,
    /// Ask cases that are recorded already (and overwrite their recordings).
    pub fresh: bool,
    /// The most HTTP requests to send, retries included.
    pub max_requests: Option<u64>,
    /// The most tokens to spend, from the responses' `usage`.
    pub max_tokens: Option<u64>,
    /// Retries and backoff.
    pub retry: RetryPolicy,
    /// How long one request may take, end to end (the first request to a local server can be
    /// slow: it loads the model).
    pub timeout: Duration,
    /// The body settings that do not come from the case.
    pub settings: RequestSettings,
    /// Print one line per case on stderr.
    pub verbose: bool,
}

/// What a live run did.
#[derive(Debug, Default)]
pub struct LiveRun {
    /// The totals over every scored response (asked now or recorded before).
    pub tally: Tally,
    /// Cases asked in this run.
    pub asked: u64,
    /// Cases scored from an earlier recording instead of being asked.
    pub resumed: u64,
    /// Cases that were not asked because the run stopped.
    pub unasked: u64,
    /// Cases whose request failed.
    pub failed: u64,
    /// HTTP requests sent, retries included.
    pub requests: u64,
    /// Tokens spent, from `usage`.
    pub tokens: u64,
    /// Why the run stopped before the last case, when it did.
    pub stopped: Option<String>,
}

/// Tokens used according to a response's `usage` block (0 when it has none).
fn usage(body: &Value) -> u64 {
    let usage = &body["usage"];
    let n = |k: &str| usage[k].as_u64().unwrap_or(0);
    match usage["total_tokens"].as_u64() {
        Some(total) => total,
        None => {
            n("prompt_tokens") + n("completion_tokens") + n("input_tokens") + n("output_tokens")
        }
    }
}

/// Sends every case under `options.cases` (sorted by id) to the live model, within the budget,
/// recording and scoring each response.
pub fn run(options: &LiveOptions) -> Result<LiveRun, RateError> {
    if !options.provider.compiled() {
        return Err(RateError::Config(format!(
            "live mode for {:?} is not compiled in: build with the cargo feature `{}`",
            options.provider,
            match options.provider {
                Provider::OpenAi => "openai",
                Provider::Anthropic => "anthropic",
            }
        )));
    }
    let mut ids = Vec::new();
    walk(
        &options.cases,
        &|p| p.extension().is_some_and(|e| e == "json"),
        &mut |path| {
            if let Some(id) = case_id(&options.cases, &path) {
                ids.push((id, path));
            }
            Ok(())
        },
    )?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(options.timeout))
        .timeout_connect(Some(Duration::from_secs(30)))
        .build()
        .into();
    let url = options.provider.endpoint(&options.base_url);
    let mut headers = Vec::new();
    match (options.provider, &options.api_key) {
        (Provider::OpenAi, Some(key)) => {
            headers.push(("authorization".into(), format!("Bearer {key}")))
        }
        (Provider::Anthropic, Some(key)) => headers.push(("x-api-key".into(), key.clone())),
        (_, None) => {}
    }
    if options.provider == Provider::Anthropic {
        headers.push(("anthropic-version".into(), "2023-06-01".into()));
    }
    let format = options.provider.format();
    let mut run = LiveRun::default();
    let mut failed_in_a_row = 0u32;
    for (order, (id, path)) in ids.iter().enumerate() {
        // A live response has no file of its own: the case that asked for it is where to look.
        let origin = Origin {
            order: (order, 0),
            shown: id.clone(),
            file: Some(path.display().to_string()),
            line: None,
        };
        let recorded = options
            .record_dir
            .as_ref()
            .map(|dir| dir.join(format!("{id}.json")));
        let case = match Case::load(path) {
            Ok(case) => case,
            Err(e) => {
                run.tally.bad_input(origin, e.to_string());
                continue;
            }
        };
        if let Some(recorded) = recorded
            .as_deref()
            .filter(|r| !options.fresh && r.is_file())
        {
            run.resumed += 1;
            match Response::load(recorded, Some(format)) {
                Ok(response) => run.tally.add(&case, &response, &origin),
                Err(e) => run.tally.bad_input(origin, e.to_string()),
            }
            continue;
        }
        if run.stopped.is_none() {
            if let Some(max) = options.max_tokens.filter(|max| run.tokens >= *max) {
                run.stopped = Some(format!(
                    "token cap reached: {} tokens used, --max-tokens {max}",
                    run.tokens
                ));
            }
        }
        if run.stopped.is_some() {
            run.unasked += 1;
            continue;
        }
        let body = match read_raw(path) {
            Ok(raw) => {
                // Each format's module builds its own request body (`Format::request_body`).
                let format = options.provider.format();
                format
                    .request_body(&raw, &case, &options.settings)
                    .ok_or_else(|| format!("no request body is built for {format}"))
                    .and_then(|body| serde_json::to_vec(&body).map_err(|e| e.to_string()))
            }
            Err(e) => Err(e),
        };
        let body = match body {
            Ok(body) => body,
            Err(e) => {
                run.tally
                    .bad_input(origin, format!("{}: {e}", escape_path(path)));
                continue;
            }
        };
        let requests = &mut run.requests;
        let max_requests = options.max_requests;
        let result = http::post(
            &agent,
            &url,
            &headers,
            &body,
            &options.retry,
            &mut || {
                if max_requests.is_some_and(|max| *requests >= max) {
                    return false;
                }
                *requests += 1;
                true
            },
            &mut std::thread::sleep,
        );
        let reply = match result {
            Ok(reply) => reply,
            Err(CallError::Cap) => {
                run.stopped = Some(format!(
                    "request cap reached: {} request(s) sent, --max-requests {}",
                    run.requests,
                    options.max_requests.unwrap_or(0)
                ));
                run.unasked += 1;
                continue;
            }
            Err(e) => {
                run.asked += 1;
                run.failed += 1;
                failed_in_a_row += 1;
                let mut message = format!("{}: {e}", toolcall_score::escape(id));
                // llama.cpp's chatml-function-calling answers any tool_choice but `auto`,
                // `none` or a named function with a bare 500 whose message is empty.
                if matches!(e, CallError::Status { status: 500, .. })
                    && options.settings.tool_choice != "auto"
                {
                    message.push_str(&format!(
                        "; the server may not support --tool-choice `{}` (llama.cpp's \
                         chatml-function-calling takes only auto, none or a tool name)",
                        toolcall_score::escape(&options.settings.tool_choice)
                    ));
                }
                if options.verbose {
                    eprintln!("{message}");
                }
                if e.is_fatal() {
                    run.stopped = Some(format!("{message}; no other request can succeed"));
                } else if failed_in_a_row >= 3 {
                    run.stopped = Some(format!("3 cases in a row failed; the last: {message}"));
                }
                run.tally.bad_input(origin, message);
                continue;
            }
        };
        run.asked += 1;
        failed_in_a_row = 0;
        let parsed = serde_json::from_slice::<Value>(&reply.body)
            .map_err(|e| format!("the response body is not JSON: {e}"))
            .and_then(|value| {
                run.tokens += usage(&value);
                Response::from_value(&value, Some(format))
                    .map_err(|e| format!("the response is not a {format} response: {e}"))
            });
        match parsed {
            Ok(response) => {
                if let Some(recorded) = &recorded {
                    crate::import::write_atomically(recorded, &reply.body)?;
                }
                if options.verbose {
                    eprintln!("{}", progress_line(id, &case, &response, reply.attempts));
                }
                run.tally.add(&case, &response, &origin);
            }
            Err(message) => {
                let snippet: String = String::from_utf8_lossy(&reply.body)
                    .chars()
                    .take(200)
                    .collect();
                run.tally.bad_input(
                    origin,
                    format!(
                        "{}: {message} (body starts: {})",
                        toolcall_score::escape(id),
                        toolcall_score::escape(&snippet)
                    ),
                );
            }
        }
    }
    Ok(run)
}

/// The line printed for each case asked: `<id>: <n> call(s)[ after <k> attempts]: pass` or
/// `...: fail: <fingerprint entries, comma-separated>`. Stable, so a script can compare a live
/// run's verdicts with the recorded responses re-scored offline (`scripts/live-local` does).
pub fn progress_line(id: &str, case: &Case, response: &Response, attempts: u32) -> String {
    let verdict = toolcall_score::score(case, response);
    let retries = if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    };
    let outcome = if verdict.is_pass() {
        "pass".to_owned()
    } else {
        format!("fail: {}", verdict.fingerprint().join(", "))
    };
    format!(
        "{}: {} call(s){retries}: {outcome}",
        toolcall_score::escape(id),
        response.calls.len()
    )
}

fn read_raw(path: &Path) -> Result<Value, String> {
    let text = toolcall_score::read_text(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}
