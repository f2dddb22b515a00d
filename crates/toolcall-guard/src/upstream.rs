//! The client side: hyper-util's pooled HTTP/1.1 client over hyper-rustls (rustls with ring,
//! Mozilla's roots from `webpki-roots`, certificates verified), for `http://` and `https://`
//! upstreams alike. Bodies go as bytes and come back frame by frame, never decompressed.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as Pool;
use hyper_util::rt::TokioExecutor;

/// The upstream client, shared by every exchange.
#[derive(Clone)]
pub(crate) struct Client {
    pool: Pool<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// Why a request got no answer. Its words never hold the URL (a query may carry a key).
#[derive(Debug)]
pub(crate) struct SendError {
    pub(crate) why: String,
    pub(crate) timeout: bool,
}

impl Client {
    pub(crate) fn new(connect_timeout: Duration) -> Result<Client, String> {
        let provider = rustls::crypto::ring::default_provider();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(provider)
            .map_err(|e| format!("TLS: {e}"))?
            .https_or_http()
            .enable_http1()
            .wrap_connector({
                let mut http = HttpConnector::new();
                http.enforce_http(false);
                http.set_connect_timeout(Some(connect_timeout));
                http.set_nodelay(true);
                http
            });
        let pool = Pool::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(https);
        Ok(Client { pool })
    }

    /// Sends a request; the response's head, its body still to read.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<Answer, SendError> {
        let uri: http::Uri = url.parse().map_err(|e| SendError {
            why: format!("not a URL ({e})"),
            timeout: false,
        })?;
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        for (name, value) in headers {
            request.headers_mut().append(name.clone(), value.clone());
        }
        match self.pool.request(request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                })
            }
            Err(e) => {
                let mut why = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(inner) = source {
                    why = format!("{why}: {inner}");
                    source = inner.source();
                }
                let timeout = why.contains("timed out") || why.contains("timeout");
                Err(SendError { why, timeout })
            }
        }
    }
}

/// An upstream's answer: its head, and its body read frame by frame.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    body: Incoming,
}

impl Answer {
    /// The next bytes of the body; `None` at its end, an error when it broke off.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, hyper::Error> {
        loop {
            match self.body.frame().await {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            return Ok(Some(data));
                        }
                    }
                }
            }
        }
    }
}
