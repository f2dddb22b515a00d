//! `--on-unknown repair`: what the project's loop guard does, on the client's behalf. The
//! response's calls are handed to the core's [`ToolLoop`] (default policy): each unknown call
//! is answered with its error result in the provider's own shape (naming the available tools,
//! paired by id), each defined call with an error saying it was not run, and the request is sent
//! again with the model's turn and those answers appended. A clean answer goes to the client,
//! which never sees the invented name; the loop's escalation (the second unknown name) gives up,
//! and the client then gets what `block` sends. Bodies only: a stream is blocked.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde_json::Value;
use toolcall_score::tool_loop::{LoopPolicy, Outcome, Reply, Step, ToolLoop};
use toolcall_score::{Case, Format};

use crate::judge::{self, unknown_calls};

/// How to ask the upstream again.
pub(crate) struct Resend {
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) headers: Vec<(http::HeaderName, http::HeaderValue)>,
    pub(crate) request: Value,
}

/// How a repair ended.
pub(crate) enum Repaired {
    /// A response without unknown names, after `tries` requests more.
    Fixed {
        status: StatusCode,
        headers: HeaderMap,
        body: Vec<u8>,
        tries: usize,
    },
    /// The loop escalated (or the turn could not go on): the client gets the block.
    GaveUp { why: String, tries: usize },
    /// The upstream answered the repair with an error of its own, passed on as it is.
    Upstream {
        status: StatusCode,
        headers: HeaderMap,
        body: Vec<u8>,
        tries: usize,
    },
    /// The repair could not be made (a body or request it cannot extend, no upstream).
    Failed { why: String, tries: usize },
}

/// The model's turn as the next request carries it, and the member the turn and its answers
/// are appended to.
fn turn(format: Format, body: &Value) -> Option<(&'static str, Vec<Value>)> {
    match format {
        Format::OpenaiChat => Some(("messages", vec![body["choices"][0]["message"].clone()])),
        Format::Anthropic => Some((
            "messages",
            vec![serde_json::json!({"role": "assistant", "content": body["content"].clone()})],
        )),
        Format::OpenaiResponses => Some(("input", body["output"].as_array()?.clone())),
        Format::Gemini => Some(("contents", vec![body["candidates"][0]["content"].clone()])),
        Format::Ollama | Format::Cohere => Some(("messages", vec![body["message"].clone()])),
        _ => None,
    }
    .filter(|(_, turn)| turn.iter().all(|m| !m.is_null()))
}

/// `request` with the model's turn and `answers` appended.
fn extend(format: Format, request: &mut Value, body: &Value, answers: &[Value]) -> Option<()> {
    let (member, turn) = turn(format, body)?;
    let object = request.as_object_mut()?;
    let list = object
        .entry(member)
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::String(text) = list {
        // The Responses API's `input` may be a string: the user's message.
        *list = serde_json::json!([{"role": "user", "content": text.clone()}]);
    }
    let list = list.as_array_mut()?;
    list.extend(turn);
    list.extend(answers.iter().cloned());
    Some(())
}

/// What a defined call in a response being repaired is answered with: the guard cannot run it.
const NOT_RUN: &str = "not run: toolcall guard asked again, because a call in the same response \
                       named a tool the request did not define; call this one again if it is \
                       still needed";

/// Repairs the response `first` to `case`'s request: see the module docs.
pub(crate) async fn repair(
    client: &crate::upstream::Client,
    resend: &Resend,
    case: &Case,
    format: Format,
    first: &[u8],
    limit: usize,
) -> Repaired {
    let mut tool_loop = ToolLoop::new(case.catalog.clone(), LoopPolicy::default());
    let mut request = resend.request.clone();
    let mut body: Value = match serde_json::from_slice(first) {
        Ok(body) => body,
        Err(e) => {
            return Repaired::Failed {
                why: format!("the response is not JSON ({e})"),
                tries: 0,
            }
        }
    };
    let mut tries = 0;
    loop {
        let pending = match tool_loop.step(Reply::json(body.clone(), format)) {
            Step::Continue(pending) => pending,
            Step::Done(end) => {
                let why = match end.outcome {
                    Outcome::UnknownToolEscalation { names } => format!(
                        "the model called unknown tools again ({}) after {tries} repair(s)",
                        names
                            .iter()
                            .map(|n| toolcall_score::escape(n).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    other => format!("the turn could not go on: {other:?}"),
                };
                return Repaired::GaveUp { why, tries };
            }
        };
        let answers = pending.answer_with(|_| Err(NOT_RUN.to_owned()));
        if extend(format, &mut request, &body, answers.messages()).is_none() {
            return Repaired::Failed {
                why: format!("the {format} turn could not be appended to the request"),
                tries,
            };
        }
        tries += 1;
        let mut headers = resend.headers.clone();
        headers.push((
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        ));
        let sent = client
            .send(
                resend.method.clone(),
                &resend.url,
                &headers,
                Bytes::from(request.to_string()),
            )
            .await;
        let mut upstream = match sent {
            Ok(upstream) => upstream,
            Err(e) => {
                return Repaired::Failed {
                    why: format!("asking again: {}", e.why),
                    tries,
                }
            }
        };
        let status = upstream.status;
        let mut headers = HeaderMap::new();
        for (name, value) in &upstream.headers {
            if !matches!(
                name.as_str(),
                "connection" | "keep-alive" | "transfer-encoding" | "content-length"
            ) {
                headers.append(name, value.clone());
            }
        }
        let mut bytes = Vec::new();
        loop {
            match upstream.chunk().await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > limit {
                        return Repaired::Failed {
                            why: format!(
                                "the repaired response is over the input limit ({limit} bytes)"
                            ),
                            tries,
                        };
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    return Repaired::Failed {
                        why: format!("reading the repaired response: {e}"),
                        tries,
                    }
                }
            }
        }
        if !status.is_success() {
            return Repaired::Upstream {
                status,
                headers,
                body: bytes,
                tries,
            };
        }
        let text = String::from_utf8_lossy(&bytes);
        let response = match toolcall_score::Response::from_json_str(&text, Some(format)) {
            Ok(response) => response,
            Err(e) => {
                return Repaired::Failed {
                    why: format!("the repaired response does not read as {format}: {e}"),
                    tries,
                }
            }
        };
        if unknown_calls(judge::verdict(case, &response).findings()).is_empty() {
            return Repaired::Fixed {
                status,
                headers,
                body: bytes,
                tries,
            };
        }
        body = match serde_json::from_slice(&bytes) {
            Ok(body) => body,
            Err(e) => {
                return Repaired::Failed {
                    why: format!("the repaired response is not JSON ({e})"),
                    tries,
                }
            }
        };
    }
}
