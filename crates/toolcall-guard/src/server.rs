//! The listener: connections accepted and served by hyper's HTTP/1.1, each watched by a
//! graceful shutdown, so that a signal stops the accepting, lets the exchanges in flight finish
//! (within the drain timeout), and only then closes the log.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::config::Config;
use crate::log::Log;
use crate::metrics::Metrics;
use crate::proxy::{handle, State};
use crate::GuardError;

/// A guard bound to its address, not yet serving.
pub struct Bound {
    listener: TcpListener,
    state: Arc<State>,
}

/// Checks `config`, opens the log and binds the address. Needs a tokio runtime.
pub async fn bind(config: Config) -> Result<Bound, GuardError> {
    config.check()?;
    let client = crate::upstream::Client::new(config.connect_timeout)
        .map_err(|e| GuardError::Config(format!("the upstream client: {e}")))?;
    let log = if config.log.is_some() || config.record.is_some() {
        Some(
            Log::open(config.log.as_deref()).map_err(|source| GuardError::Log {
                path: config.log.clone().unwrap_or_default(),
                source,
            })?,
        )
    } else {
        None
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| GuardError::Bind {
            addr: config.listen,
            source,
        })?;
    let state = Arc::new(State {
        config,
        client,
        log,
        metrics: Metrics::new(),
    });
    Ok(Bound { listener, state })
}

impl Bound {
    /// The address it listens on (the port chosen, for `:0`).
    pub fn local_addr(&self) -> Result<SocketAddr, GuardError> {
        self.listener
            .local_addr()
            .map_err(|source| GuardError::Bind {
                addr: self.state.config.listen,
                source,
            })
    }

    /// Serves until `shutdown` completes, then drains and closes the log.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), GuardError> {
        let graceful = GracefulShutdown::new();
        let idle = self.state.config.idle_timeout;
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    // A failed accept (too many files open) is that connection's, not the guard's.
                    let Ok((stream, _)) = accepted else { continue };
                    let _ = stream.set_nodelay(true);
                    let state = self.state.clone();
                    let service = service_fn(move |request| handle(state.clone(), request));
                    let connection = http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(idle)
                        .serve_connection(TokioIo::new(stream), service);
                    let watched = graceful.watch(connection);
                    tokio::spawn(async move {
                        let _ = watched.await;
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(self.listener);
        let drain = self.state.config.drain_timeout;
        let _ = tokio::time::timeout(drain, graceful.shutdown()).await;
        match &self.state.log {
            Some(log) => log.close().map_err(|source| GuardError::Log {
                path: self.state.config.log.clone().unwrap_or_default(),
                source,
            }),
            None => Ok(()),
        }
    }
}

/// Runs a guard on a runtime of its own until SIGTERM or SIGINT; `ready` is told the address
/// once it listens.
pub fn serve(config: Config, ready: impl FnOnce(SocketAddr)) -> Result<(), GuardError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(GuardError::Runtime)?;
    runtime.block_on(async move {
        let bound = bind(config).await?;
        ready(bound.local_addr()?);
        bound.run(signal()).await
    })
}

/// SIGTERM or SIGINT (Ctrl-C elsewhere).
async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
