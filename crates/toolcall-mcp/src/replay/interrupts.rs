//! The signals that end a replay (Ctrl-C, SIGTERM, SIGHUP), watched only when
//! [`Options::handle_ctrl_c`](crate::Options::handle_ctrl_c) asks.

/// The signals that end a replay: Ctrl-C (SIGINT), SIGTERM and SIGHUP (what `timeout`, CI
/// runners and a closed terminal send). Listened for from the start of the replay, when
/// [`Options::handle_ctrl_c`](crate::Options::handle_ctrl_c) asks, so one that arrives between
/// two requests is still seen; any of them ends the replay the same way, the server and its
/// process group killed, then the report.
pub(super) struct Interrupts {
    #[cfg(unix)]
    streams: Vec<(tokio::signal::unix::Signal, &'static str)>,
    #[cfg(not(unix))]
    watch: bool,
}

impl Interrupts {
    pub(super) fn new(watch: bool) -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let kinds = [
                (SignalKind::interrupt(), "Ctrl-C"),
                (SignalKind::terminate(), "SIGTERM"),
                (SignalKind::hangup(), "SIGHUP"),
            ];
            let streams = if watch {
                kinds
                    .into_iter()
                    .filter_map(|(kind, name)| signal(kind).ok().map(|s| (s, name)))
                    .collect()
            } else {
                Vec::new()
            };
            Interrupts { streams }
        }
        #[cfg(not(unix))]
        Interrupts { watch }
    }

    /// The next signal's name; never resolves when none is watched.
    pub(super) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                return std::future::pending().await;
            }
            std::future::poll_fn(|cx| {
                for (stream, name) in &mut self.streams {
                    if stream.poll_recv(cx).is_ready() {
                        return std::task::Poll::Ready(*name);
                    }
                }
                std::task::Poll::Pending
            })
            .await
        }
        #[cfg(not(unix))]
        {
            if self.watch && tokio::signal::ctrl_c().await.is_ok() {
                return "Ctrl-C";
            }
            std::future::pending().await
        }
    }
}
