//! The errors of this crate: what stops a recording or a serve before it starts or as it ends.
//!
//! A malformed message from either side of a recorded session is not one of them: it is
//! forwarded unchanged and noted in the summary, because a proxy that stops on what it does
//! not understand changes what the client sees.

use std::path::PathBuf;

/// Why `record` (or `recover`) could not write its flow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// A journal of an earlier session that did not finish is in the way.
    #[error(
        "{}: an earlier recording did not finish (its client or this proxy was killed); \
         recover it with `toolcall mcp record --recover --out {}`, or delete it to start again",
        journal.display(), out.display()
    )]
    Leftover {
        /// The journal (`NAME.json.partial`).
        journal: PathBuf,
        /// The flow it is the journal of.
        out: PathBuf,
    },
    /// The flow (or its catalog snapshot) is already there, and `--force` was not given: a
    /// reviewed flow is not replaced by whatever the next session does.
    #[error(
        "{}: already exists; a recording would replace it (give --force to record over it, \
         or another --out)",
        path.display()
    )]
    Exists {
        /// The file that is in the way.
        path: PathBuf,
    },
    /// There is no journal to recover.
    #[error("{}: no journal to recover (a finished recording leaves none)", journal.display())]
    NoJournal {
        /// Where it was looked for.
        journal: PathBuf,
    },
    /// The journal is not one this crate wrote.
    #[error("{}: not a recording journal: {why}", journal.display())]
    BadJournal {
        /// The journal.
        journal: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// `--upstream` is not an http:// or https:// URL.
    #[error("--upstream `{url}` is not an http:// or https:// URL (http://127.0.0.1:3001/mcp)")]
    Upstream {
        /// What was given.
        url: String,
    },
    /// `--upstream` never answered: every request forwarded to it failed, so the session is
    /// no recording of it and nothing is written.
    #[error("the upstream server {url} was never reached ({count} request(s) failed, the client was answered 502): {why}; nothing was written")]
    Unreachable {
        /// The upstream URL.
        url: String,
        /// How many requests failed.
        count: usize,
        /// Why the last one did.
        why: String,
    },
    /// `--listen` names an address it must not listen on (not loopback, without
    /// `--insecure-listen`), or none.
    #[error("{why}")]
    Listen {
        /// What is wrong with it, naming the rule.
        why: String,
    },
    /// A `--redact-pattern` that is not a regex, a `--redact-path` that is not JSONPath, a
    /// `--volatile` that is not a JSON pointer.
    #[error("{option} `{value}` is not valid: {why}")]
    Invalid {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
        /// Why it is not valid.
        why: String,
    },
    /// The server could not be started.
    #[error("cannot start the server `{command}`: {source}")]
    Spawn {
        /// The command as given.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The journal could not be read.
    #[error(transparent)]
    Input(Box<toolcall_score::InputError>),
}

impl From<toolcall_score::InputError> for RecordError {
    fn from(e: toolcall_score::InputError) -> RecordError {
        RecordError::Input(Box::new(e))
    }
}

/// Why `serve` could not serve a recording.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The file is too large, not UTF-8, or cannot be read.
    #[error(transparent)]
    Input(Box<toolcall_score::InputError>),
    /// The flow the file is or names is not a valid flow.
    #[error(transparent)]
    Flow(Box<toolcall_mcp::FlowError>),
    /// The file is neither a flow nor a catalog snapshot.
    #[error("{}: {why}", path.display())]
    NotARecording {
        /// The file.
        path: PathBuf,
        /// What it is not.
        why: String,
    },
    /// The MCP session could not be served (the runtime or the transport failed).
    #[error("serving on stdio failed: {0}")]
    Transport(String),
    /// The report could not be written.
    #[error("{}: cannot write the report: {source}", path.display())]
    Report {
        /// The report file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl From<toolcall_score::InputError> for ServeError {
    fn from(e: toolcall_score::InputError) -> ServeError {
        ServeError::Input(Box::new(e))
    }
}

impl From<toolcall_mcp::FlowError> for ServeError {
    fn from(e: toolcall_mcp::FlowError) -> ServeError {
        ServeError::Flow(Box::new(e))
    }
}
