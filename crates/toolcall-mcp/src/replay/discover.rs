//! `"protocol": "auto"` against a stdio server: `server/discover` time-boxed by what the pipes
//! show, not by rmcp's fixed ten seconds.
//!
//! A legacy server that takes `server/discover` in and never answers (Python SDK 1.0) and a
//! server that is slow look alike from the client's side: no answer yet. The pipes and `/proc`
//! tell them apart. While the request sits unread in the server's stdin, the server is starting
//! (an `npx` download, a slow import) and may take the whole start-up timeout. Once it has read
//! it, a server that uses CPU is working on an answer (a Python server building its models on
//! a loaded machine can take seconds), and is waited for; one that has read the request and
//! used no CPU for [`IDLE_BOX`] is waiting for something else: it is answered for, with the
//! error a legacy server gives (the stdout filter keeps any late answer of its own from rmcp),
//! and rmcp's `auto` goes on with `initialize` on the same connection, without a second start.
//! rmcp's own ten seconds from the request stay the outer bound.
//!
//! The same watch marks where the server's stderr stood when the request was first seen read:
//! what it writes from there to the end of a legacy handshake is its refusal of
//! `server/discover` (a Python SDK 1.x server logs 5 to 7 KB of validation errors), which is
//! left out of the stderr tail a failure shows. The mark errs on the side of showing: all a
//! server wrote before it read the request (its start-up lines, often written just before it
//! reads) stays in the tail, and so does what it wrote within one look ([`POLL`]) of reading
//! it, or when it read and answered between two looks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::child::HandshakeWatch;

/// How long a server that has read `server/discover` may sit idle (no CPU time used by its
/// process group) without answering before it is answered for.
pub(crate) const IDLE_BOX: Duration = Duration::from_secs(1);

/// How often the server's CPU time is read (a walk of `/proc`).
const CPU_EVERY: Duration = Duration::from_millis(100);

/// How often the pipes are looked at while `server/discover` is awaited (an ioctl and two
/// locks: cheap, and only during start-up).
const POLL: Duration = Duration::from_millis(2);

/// What the watch of one handshake found out.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    /// The server's stderr position when `server/discover` was first seen read (all its
    /// start-up output is before it); `None` when it was never seen read and unanswered (a
    /// server that reads and answers between two looks), and then nothing is left out: what is
    /// not surely the refusal's noise is shown.
    pub(crate) stderr_at_read: Option<u64>,
}

pub(crate) type SharedNotes = Arc<Mutex<Notes>>;

/// Watches the handshake on `pipes` until `server/discover` is answered (or answered for);
/// never returns, so that it can be raced against the handshake.
pub(crate) async fn watch(pipes: HandshakeWatch, notes: SharedNotes) -> std::convert::Infallible {
    // Since when the server has read the request and used no CPU, and what it had used then.
    let mut idle: Option<(Instant, Option<u64>)> = None;
    let mut cpu_read = Instant::now();
    loop {
        tokio::time::sleep(POLL).await;
        let Some(id) = pipes.awaited_discover() else {
            if pipes.discover_requests() > 0 {
                // Answered (or given up on by rmcp, which has sent `initialize`).
                break;
            }
            continue;
        };
        match pipes.unread_stdin() {
            Some(0) => {}
            Some(_) => {
                idle = None;
                continue;
            }
            // Not to be told here: rmcp's own time-box stands.
            None => break,
        }
        let Some((since, ticks)) = idle else {
            lock(&notes).stderr_at_read = Some(pipes.stderr_total());
            idle = Some((Instant::now(), pipes.cpu_ticks()));
            cpu_read = Instant::now();
            continue;
        };
        if cpu_read.elapsed() < CPU_EVERY {
            continue;
        }
        cpu_read = Instant::now();
        let now_ticks = pipes.cpu_ticks();
        if now_ticks.is_none() {
            // Working or waiting cannot be told: rmcp's own time-box stands.
            break;
        }
        if now_ticks != ticks {
            idle = Some((Instant::now(), now_ticks));
            continue;
        }
        if since.elapsed() >= IDLE_BOX {
            let message = format!(
                "no answer to server/discover: the server read it and then sat idle for {} ms",
                IDLE_BOX.as_millis()
            );
            // False when the server answered in between: its answer stands.
            let _ = pipes.refuse_discover(&id, &message).await;
            break;
        }
    }
    std::future::pending().await
}

pub(crate) fn lock(notes: &SharedNotes) -> std::sync::MutexGuard<'_, Notes> {
    notes.lock().unwrap_or_else(|e| e.into_inner())
}
