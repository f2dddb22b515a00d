//! Reaching the server: spawning a stdio server or connecting over streamable HTTP (starting
//! the HTTP server the flow names first), and the handshake of the flow's protocol era, with
//! `"protocol": "auto"`'s fallback to `initialize` on a fresh connection.
//!
//! Under `auto` a stdio server's era is remembered between replays ([`crate::eras`]): a server
//! that spoke legacy last time gets `initialize` straight away. Otherwise `server/discover` is
//! time-boxed from the moment the server read it (`discover.rs`), and a server that exited
//! without reading it died at start-up: that is its failure, not a reason to start it again.

#[cfg(feature = "http")]
use std::time::{Duration, Instant};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::ClientLifecycleMode;
use rmcp::ClientServiceExt;
#[cfg(feature = "http")]
use toolcall_score::escape;

use super::discover;
#[cfg(feature = "http")]
use super::explain::describe_exit;
#[cfg(feature = "http")]
use super::report::ms;
use super::run::{Client, Phase, Run};
use super::{Failure, FailureKind};
use crate::child::ChildServer;
use crate::eras::{self, Era};
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
                self.handshake(&phase, ClientLifecycleMode::Initialize, None)
                    .await
            }
            Protocol::Modern => {
                let modern = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                };
                let client = self.handshake(&phase, modern, None).await;
                client.map_err(|mut failure| {
                    if failure.kind == FailureKind::RpcError {
                        failure.message.push_str(
                            " (a server that answers server/discover with an error speaks only \
                             legacy MCP: \"protocol\": \"auto\" or \"legacy\" reaches it)",
                        );
                    }
                    failure
                })
            }
            Protocol::Auto => self.auto(&phase).await,
        }?;
        self.report.protocol_version = client
            .peer_info()
            .map(|info| info.protocol_version.to_string());
        // The second handle on its stdin has told what it could.
        if let Some(child) = self.child.as_mut() {
            child.release_stdin();
        }
        Ok(client)
    }

    /// `"protocol": "auto"`: the remembered era first, then `server/discover` with the fallback
    /// to `initialize`; what the server spoke is remembered for the next time.
    async fn auto(&mut self, phase: &Phase) -> Result<Client, Failure> {
        let memory = match (&self.flow.server, &self.options.protocol_cache) {
            (Server::Stdio(server), Some(path)) => Some((server, path.as_path())),
            _ => None,
        };
        if let Some((server, path)) = memory {
            let (era, note) = eras::recall(path, server);
            self.report.protocol_notes.extend(note);
            // A remembered era is spoken at once: `initialize` for a legacy server, and for a
            // modern one `server/discover` without rmcp's ten-second box (a slow modern
            // server would fall to `initialize` after it, and be started again).
            let lifecycle = era.map(|era| match era {
                Era::Legacy => ClientLifecycleMode::Initialize,
                Era::Modern => ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                },
            });
            if let (Some(era), Some(lifecycle)) = (era, lifecycle) {
                match self.handshake(phase, lifecycle, None).await {
                    Ok(client) => {
                        self.report.protocol_remembered = true;
                        return Ok(client);
                    }
                    // The memory is wrong (the server refuses the handshake of that era with a
                    // JSON-RPC error): forgotten, and the server probed afresh. Any other
                    // failure is the server's own (one that crashes on it is not started again).
                    Err(failure) if failure.kind == FailureKind::RpcError => {
                        let (said, asked) = match era {
                            Era::Legacy => ("legacy", "initialize"),
                            Era::Modern => ("modern", "server/discover"),
                        };
                        self.report.protocol_notes.push(format!(
                            "the protocol cache said {said} MCP, but {asked} failed ({}): \
                             forgotten, and the server probed afresh",
                            failure.message
                        ));
                        eras::remember(path, server, None);
                        self.finish(false).await;
                    }
                    Err(failure) => return Err(failure),
                }
            }
        }
        let client = self.probe(phase).await;
        if let (Some((server, path)), Ok(client)) = (memory, &client) {
            let legacy = client
                .peer_info()
                .is_some_and(|info| info.protocol_version.has_initialize());
            // A modern server that only answered late is not remembered as legacy.
            let era = match (legacy, self.late_discover_result) {
                (false, _) => Some(Era::Modern),
                (true, false) => Some(Era::Legacy),
                (true, true) => None,
            };
            eras::remember(path, server, era);
        }
        client
    }

    /// `server/discover`, falling back to `initialize`: on the same connection when the server
    /// says it is legacy or reads the request and says nothing, on a fresh one when discovery
    /// ended the connection (some deployed servers close it, or answer an HTTP error).
    async fn probe(&mut self, phase: &Phase) -> Result<Client, Failure> {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let notes = discover::SharedNotes::default();
        match self.handshake(phase, auto, Some(notes.clone())).await {
            // rmcp falls back by itself when the server says it is legacy; this is the other
            // kind of legacy server: one that drops the connection or answers an HTTP error to
            // `server/discover`. Start again, the old way.
            // Not a refusal of `server/discover` either: an interrupt, a timeout, or a server
            // out of reach (an HTTP 401 or 403 refuses `initialize` alike), or one that exited
            // before it read what it was sent (it died at start-up; a second start dies alike).
            Err(failure)
                if !matches!(
                    failure.kind,
                    FailureKind::Interrupted | FailureKind::Timeout | FailureKind::Start
                ) && self.server_read_its_input() =>
            {
                self.report.discover_failed = Some(failure.message);
                if matches!(self.flow.server, Server::Stdio(_)) {
                    self.finish(false).await;
                }
                // The server answered `server/discover` with a result after the replay (or
                // rmcp, after its ten seconds) had given up on it, then refused `initialize`: a
                // modern server that was only slow; asked the modern way, with time to answer.
                let lifecycle = if self.late_discover_result {
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::LATEST],
                    }
                } else {
                    ClientLifecycleMode::Initialize
                };
                self.handshake(phase, lifecycle, None).await
            }
            Ok(client) => {
                let legacy = client
                    .peer_info()
                    .is_some_and(|info| info.protocol_version.has_initialize());
                let from = discover::lock(&notes).stderr_at_read;
                if let (true, Some(from), Some(child)) = (legacy, from, self.child.as_ref()) {
                    child.hide_stderr_since(from);
                }
                Ok(client)
            }
            Err(failure) => Err(failure),
        }
    }

    /// Whether the stdio server read what the replay sent it (true when that cannot be told, or
    /// for an HTTP server): one that did not, and exited, died of something else.
    fn server_read_its_input(&self) -> bool {
        let Some(pipes) = self.child.as_ref().and_then(|c| c.handshake_watch()) else {
            return true;
        };
        match pipes.unread_stdin() {
            Some(unread) => pipes.written() > unread,
            None => true,
        }
    }

    /// One connection and one handshake: a stdio server is spawned for it.
    pub(super) async fn handshake(
        &mut self,
        phase: &Phase,
        lifecycle: ClientLifecycleMode,
        watch: Option<discover::SharedNotes>,
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
                self.report.server_starts += 1;
                self.faults = Some(child.faults());
                self.session = child.session();
                let pages = child.tool_pages();
                // Nothing before the handshake lists tools; pages are noted from here on.
                pages.take();
                self.pages = Some(pages);
                let handshake_watch = child.handshake_watch();
                self.child = Some(child);
                let handshake = config.serve_with_lifecycle(pipes, lifecycle);
                let watched = async {
                    match (handshake_watch.clone(), watch) {
                        (Some(pipes), Some(notes)) => {
                            tokio::select! {
                                r = handshake => r,
                                never = discover::watch(pipes, notes) => match never {},
                            }
                        }
                        _ => handshake.await,
                    }
                };
                let client = self.guarded(phase, timeout, watched).await;
                if let Some(pipes) = handshake_watch {
                    self.report.discover_requests += pipes.discover_requests();
                    self.late_discover_result |= pipes.answered_discover_late();
                }
                client
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
        self.report.server_starts += 1;
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
