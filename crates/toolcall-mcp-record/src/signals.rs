//! Signals that end a recording or a mock: SIGINT, SIGTERM and SIGHUP (what a client's
//! shutdown, a CI runner's cancel or a closed terminal sends), waited for on a thread of their
//! own, so that the stdio recorder, the HTTP recorder and the mock alike stop cleanly and write
//! what they hold. Its own module because both recorders use it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

/// Sets `stop` on SIGINT, SIGTERM or SIGHUP (Ctrl-C alone off Unix); returns once the handlers
/// are in place, so a signal sent after it is never missed.
pub fn stop_on_signals(stop: Arc<AtomicBool>) {
    on_signals(move || stop.store(true, Ordering::SeqCst));
}

/// Calls `then` on the first SIGINT, SIGTERM or SIGHUP (Ctrl-C alone off Unix); returns once the
/// handlers are in place, so a signal sent after it is never missed. The handlers stay: a second
/// signal does not kill the process while it writes what the first one asked for.
pub fn on_signals(then: impl FnOnce() + Send + 'static) {
    let (ready_tx, ready) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            let _ = ready_tx.send(());
            return;
        };
        runtime.block_on(async move {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let term = signal(SignalKind::terminate());
                let hup = signal(SignalKind::hangup());
                let ctrl_c = tokio::signal::ctrl_c();
                let _ = ready_tx.send(());
                match (term, hup) {
                    (Ok(mut term), Ok(mut hup)) => {
                        tokio::select! {
                            _ = ctrl_c => {}
                            _ = term.recv() => {}
                            _ = hup.recv() => {}
                        }
                    }
                    _ => {
                        let _ = ctrl_c.await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = ready_tx.send(());
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        then();
    });
    let _ = ready.recv();
}
