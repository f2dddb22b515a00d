//! The provider's own error shapes, so that a blocked client's SDK raises its own error type:
//! the status and body of an error response, and the in-stream error event each streaming API
//! sends (and each SDK raises on) in place of what the guard did not forward.
//!
//! The status is 422: SDKs map it to their "unprocessable" error and, unlike a 5xx, do not
//! retry it; the body says the guard blocked it, so it is never taken for the provider's.

use http::StatusCode;
use serde_json::{json, Value};
use toolcall_score::Format;

/// The status of a blocked response.
pub(crate) const BLOCKED: StatusCode = StatusCode::UNPROCESSABLE_ENTITY;

/// The code the error bodies carry, where the shape has one.
const CODE: &str = "toolcall_unknown_tool";

/// An error body of `format`'s provider with `message`, for `status`. `kind` is the error's
/// type where the shape has one (`api_error`, `invalid_request_error`).
pub(crate) fn error_body(format: Option<Format>, status: StatusCode, message: &str) -> Value {
    match format {
        Some(Format::Anthropic) => json!({
            "type": "error",
            "error": {"type": anthropic_type(status), "message": message},
        }),
        Some(Format::Gemini) => json!({
            "error": {"code": status.as_u16(), "message": message, "status": google_status(status)},
        }),
        Some(Format::Ollama) => json!({"error": message}),
        Some(Format::Cohere) => json!({"message": message}),
        // OpenAI's shape, which OpenAI-compatible servers share.
        _ => json!({
            "error": {"message": message, "type": openai_type(status), "param": null, "code": CODE},
        }),
    }
}

fn openai_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        422 => "invalid_response_error",
        413 => "invalid_request_error",
        _ => "server_error",
    }
}

fn anthropic_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        413 => "request_too_large",
        _ => "api_error",
    }
}

fn google_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        413 | 422 => "INVALID_ARGUMENT",
        502 | 504 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

/// The in-stream error event of `format`'s stream, framed as it is sent (SSE, or an NDJSON line
/// for Ollama), which its SDK raises on.
pub(crate) fn stream_error(format: Format, message: &str) -> String {
    match format {
        Format::Anthropic => sse(
            Some("error"),
            &json!({"type": "error", "error": {"type": "api_error", "message": message}}),
        ),
        // The Responses API's `error` event, with the `error` member the Chat stream's has:
        // the OpenAI SDKs raise on that member, and yield a bare `error` event as data.
        Format::OpenaiResponses => sse(
            Some("error"),
            &json!({"type": "error", "code": CODE, "message": message, "param": null,
                    "error": {"message": message, "type": "invalid_response_error", "code": CODE}}),
        ),
        Format::Ollama => format!("{}\n", json!({"error": message})),
        Format::Gemini => sse(
            None,
            &json!({"error": {"code": BLOCKED.as_u16(), "message": message, "status": "INVALID_ARGUMENT"}}),
        ),
        Format::Cohere => sse(None, &json!({"type": "error", "message": message})),
        // OpenAI Chat's: `data: {"error": …}`, which the SDKs raise as an API error.
        _ => sse(
            None,
            &json!({"error": {"message": message, "type": "invalid_response_error", "param": null, "code": CODE}}),
        ),
    }
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}
