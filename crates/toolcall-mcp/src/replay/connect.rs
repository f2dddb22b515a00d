//! Reaching the server: spawning a stdio server or connecting over streamable HTTP (starting
//! the HTTP server the flow names first), and the handshake of the flow's protocol era, with
//! `"protocol": "auto"`'s fallback to `initialize` on a fresh connection.

#[cfg(feature = "http")]
use std::time::{Duration, Instant};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::ClientLifecycleMode;
use rmcp::ClientServiceExt;
#[cfg(feature = "http")]
use toolcall_score::escape;

#[cfg(feature = "http")]
use super::explain::describe_exit;
#[cfg(feature = "http")]
use super::report::ms;
use super::run::{Client, Phase, Run};
use super::{Failure, FailureKind};
use crate::child::ChildServer;
use crate::{Protocol, Server};

impl Run<'_> {
    /// Starts (or reaches) the server and completes the handshake the flow's protocol asks for.
    pub(crate) async fn connect(&mut self) -> Result<Client, Failure> {
        // Under `auto` the phase keeps the name of the handshake every legacy server ends in.
        let phase = Phase::new(match self.flow.protocol {
            Protocol::Modern => "server/discover",
            _ => "initialize",
        });
        #[cfg(feature = "http")]
        if let Server::Http {
            url,
            start: Some(server),
            ..
        } = &self.flow.server
        {
            self.start_http(&phase, server, url).await?;
        }
        let client = match self.flow.protocol {
            Protocol::Legacy => {
                self.handshake(&phase, ClientLifecycleMode::Initialize)
                    .await
            }
            Protocol::Modern => {
                let modern = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                };
                self.handshake(&phase, modern).await.map_err(|mut failure| {
                    if failure.kind == FailureKind::RpcError {
                        failure.message.push_str(
                            " (a server that answers server/discover with an error speaks only \
                             legacy MCP: \"protocol\": \"auto\" or \"legacy\" reaches it)",
                        );
                    }
                    failure
                })
            }
            Protocol::Auto => {
                let auto = ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                    legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
                };
                match self.handshake(&phase, auto).await {
                    // rmcp falls back by itself when the server says it is legacy; this is the
                    // other kind of legacy server: one that drops the connection or answers an
                    // HTTP error to `server/discover`. Start again, the old way.
                    // Not a refusal of `server/discover` either: an interrupt, a timeout, or
                    // a server out of reach (an HTTP 401 or 403 refuses `initialize` alike).
                    Err(failure)
                        if !matches!(
                            failure.kind,
                            FailureKind::Interrupted | FailureKind::Timeout | FailureKind::Start
                        ) =>
                    {
                        self.report.discover_failed = Some(failure.message);
                        if matches!(self.flow.server, Server::Stdio(_)) {
                            self.finish(false).await;
                        }
                        self.handshake(&phase, ClientLifecycleMode::Initialize)
                            .await
                    }
                    other => other,
                }
            }
        }?;
        self.report.protocol_version = client
            .peer_info()
            .map(|info| info.protocol_version.to_string());
        Ok(client)
    }

    /// One connection and one handshake: a stdio server is spawned for it.
    pub(super) async fn handshake(
        &mut self,
        phase: &Phase,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Client, Failure> {
        let mut config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolcall-replay", env!("CARGO_PKG_VERSION")),
        );
        // rmcp's default is its latest version, which has no `initialize`: an `initialize`
        // names the newest version that has one.
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        let timeout = self.init_timeout;
        match &self.flow.server {
            Server::Stdio(server) => {
                let (child, pipes) = ChildServer::spawn(
                    server,
                    self.options.max_message_bytes,
                    self.options.stderr_tail_bytes,
                )
                .map_err(|e| phase.cannot_start(server, &e))?;
                self.report.server_pid = child.pid();
                self.faults = Some(child.faults());
                self.session = child.session();
                let pages = child.tool_pages();
                // Nothing before the handshake lists tools; pages are noted from here on.
                pages.take();
                self.pages = Some(pages);
                self.child = Some(child);
                self.guarded(
                    phase,
                    timeout,
                    config.serve_with_lifecycle(pipes, lifecycle),
                )
                .await
            }
            #[cfg(feature = "http")]
            Server::Http { url, headers, .. } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    // Checked when the flow was read; anything else is refused here too.
                    match (
                        http::HeaderName::from_bytes(name.as_bytes()),
                        http::HeaderValue::from_str(value),
                    ) {
                        (Ok(name), Ok(value)) => {
                            custom.insert(name, value);
                        }
                        _ => {
                            return Err(phase.fail(
                                FailureKind::Start,
                                format!("the header `{}` cannot be sent", escape(name)),
                            ))
                        }
                    }
                }
                // rmcp's reqwest client, but with `tools/list` answers kept as written.
                let pages = crate::child::ToolPages::default();
                self.pages = Some(pages.clone());
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    super::wire::Tapped::new(pages),
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom),
                );
                self.guarded(
                    phase,
                    timeout,
                    config.serve_with_lifecycle(transport, lifecycle),
                )
                .await
            }
            #[cfg(not(feature = "http"))]
            Server::Http { .. } => Err(phase.fail(
                FailureKind::Start,
                "this build of toolcall-mcp has no streamable HTTP client (feature `http`)",
            )),
        }
    }

    /// Starts the HTTP server a flow names with its `command`, and waits (within the start-up
    /// timeout) until its `url`'s port takes a connection; its exit before that is the failure.
    #[cfg(feature = "http")]
    pub(super) async fn start_http(
        &mut self,
        phase: &Phase,
        server: &crate::StdioServer,
        url: &str,
    ) -> Result<(), Failure> {
        let child = ChildServer::spawn_http(server, self.options.stderr_tail_bytes)
            .map_err(|e| phase.cannot_start(server, &e))?;
        self.report.server_pid = child.pid();
        self.child = Some(child);
        let authority = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        let address = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            authority.to_owned()
        } else if url.starts_with("https://") {
            format!("{authority}:443")
        } else {
            format!("{authority}:80")
        };
        let deadline = Instant::now() + self.init_timeout;
        loop {
            if tokio::net::TcpStream::connect(&address).await.is_ok() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut() {
                if let Some(status) = child.exit_status(Duration::ZERO).await {
                    return Err(phase.fail(
                        FailureKind::Exited,
                        format!(
                            "the server the flow starts exited before it listened on {} ({})",
                            escape(&address),
                            describe_exit(status)
                        ),
                    ));
                }
            }
            if Instant::now() >= deadline {
                return Err(phase.fail(
                    FailureKind::Timeout,
                    format!(
                        "the server the flow starts did not listen on {} within {}",
                        escape(&address),
                        ms(self.init_timeout)
                    ),
                ));
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                signal = self.interrupts.next() => {
                    return Err(phase.fail(
                        FailureKind::Interrupted,
                        format!("interrupted ({signal}); the server was killed"),
                    ));
                }
            }
        }
    }
}
