//! `toolcall guard`: a proxy in front of a model API that scores every response against the
//! request it answers, live, and observes or blocks a call to a tool the request did not define.
//!
//! Point a client's base URL at it (`OPENAI_BASE_URL=http://127.0.0.1:8787/v1`): the route
//! tells the wire format (`route.rs`), the request is read through that format's request half
//! and the response through the core's readers (`judge.rs`); a stream passes through as it
//! arrives and is judged as soon as a tool call's name is complete, by the core's
//! [`toolcall_score::provider::StreamWatch`] (`proxy.rs`). A blocked client gets its
//! provider's own error shape (`shape.rs`). Verdicts go to a JSON Lines log that `toolcall
//! rate` reads (`log.rs`) and to `/metrics` (`metrics.rs`).
//!
//! This crate is the only one in the workspace with a server stack (tokio, hyper, hyper-rustls
//! over rustls); the `toolcall` binary has it behind its default `guard` feature.

mod config;
mod judge;
mod log;
mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
mod proxy;
mod repair;
mod route;
mod server;
mod shape;
mod upstream;

use std::net::SocketAddr;
use std::path::PathBuf;

pub use config::{Action, Config, Upstream};
pub use proxy::TOKEN_HEADER;
pub use server::{bind, serve, Bound};

/// What stops a guard from running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The configuration cannot run.
    #[error("{0}")]
    Config(String),
    /// The address cannot be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The log cannot be opened or written.
    #[error("the log {}", toolcall_score::escape_path(path))]
    Log {
        /// The log file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The runtime cannot start.
    #[error("cannot start the runtime")]
    Runtime(#[source] std::io::Error),
}
