//! The streamable HTTP client rmcp talks through, with `tools/list` answers kept as the server
//! wrote them.
//!
//! rmcp hands its caller each tool as its `Tool` model, which drops every member it does not
//! model (`execution.taskSupport`, and what the protocol adds next); a catalog snapshot must keep
//! them all, or their change could never show. Over stdio the raw lines pass through our own
//! reader ([`crate::child`]); over HTTP this client does: every request goes to rmcp's own
//! reqwest client, except a `tools/list`, which it sends the same way (the headers rmcp chose,
//! its session, its limits), reads the body itself, notes the tools, and hands rmcp the message
//! it would have parsed: JSON, or the event stream.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::child::ToolPages;

/// rmcp's reqwest client, and the pages of every `tools/list` it was answered.
#[derive(Clone)]
pub(crate) struct Tapped {
    inner: reqwest::Client,
    pages: ToolPages,
}

impl Tapped {
    pub(crate) fn new(pages: ToolPages) -> Tapped {
        // As rmcp's default client: no idle pool, and only same-origin 307/308 redirects (which
        // keep the method and body), at most 10.
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            if same && keeps_body && attempt.previous().len() <= 10 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .build()
            .unwrap_or_default();
        Tapped { inner, pages }
    }

    /// A `tools/list` sent as rmcp's client sends it, its answer noted before rmcp reads it.
    async fn list_tools(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let mut request = self.inner.post(uri.as_ref()).header(
            reqwest::header::ACCEPT,
            "text/event-stream, application/json",
        );
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &session_id {
            request = request.header("Mcp-Session-Id", session.as_ref());
        }
        let response = request
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        let session = response
            .headers()
            .get("Mcp-Session-Id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            let body: String = body.chars().take(limits.max_error_response_size).collect();
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("tools/list answered HTTP {status}: {body}").into(),
            ));
        }
        if content_type.starts_with("text/event-stream") {
            let pages = self.pages.clone();
            let events: BoxStream<'static, Result<Sse, SseError>> =
                SseStream::from_bytes_stream(response.bytes_stream())
                    .inspect(move |event| {
                        if let Ok(Sse {
                            data: Some(data), ..
                        }) = event
                        {
                            if let Ok(message) = serde_json::from_str(data) {
                                pages.note(&message);
                            }
                        }
                    })
                    .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        if !content_type.starts_with("application/json") {
            return Err(StreamableHttpError::UnexpectedContentType(Some(
                content_type,
            )));
        }
        let body = response
            .bytes()
            .await
            .map_err(StreamableHttpError::Client)?;
        if body.len() > limits.max_json_response_size {
            return Err(StreamableHttpError::ResponseBodyTooLarge {
                max_size: limits.max_json_response_size,
            });
        }
        let raw: serde_json::Value = serde_json::from_slice(&body)?;
        self.pages.note(&raw);
        let message: ServerJsonRpcMessage = serde_json::from_value(raw)?;
        Ok(StreamableHttpPostResponse::Json(message, session))
    }
}

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, rmcp::model::JsonRpcMessage::Request(r) if r.request.method() == "tools/list")
}

impl StreamableHttpClient for Tapped {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        if is_tools_list(&message) {
            return self
                .list_tools(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
        }
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
