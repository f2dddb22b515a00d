//! The errors of this crate. Each names the variable or file involved and what was expected.

use std::path::PathBuf;
use toolcall_score::escape_path;

/// A setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An environment variable has a value outside the allowed set.
    #[error("{variable}={value:?} is not valid: expected {allowed}")]
    InvalidValue {
        /// The variable.
        variable: &'static str,
        /// What it was set to.
        value: String,
        /// What it may be set to.
        allowed: &'static str,
    },
    /// A path variable is set but empty.
    #[error("{variable} is set but empty: expected a path (or unset it)")]
    EmptyPath {
        /// The variable.
        variable: &'static str,
    },
}

/// A baseline file that cannot be read, understood or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The file exists but could not be read.
    #[error("{}: cannot read: {source}", escape_path(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is too large or not UTF-8 text.
    #[error(transparent)]
    Input(#[from] toolcall_score::InputError),
    /// The file is not a baseline: invalid JSON, or not `{"case-id": {"fingerprint": [...],
    /// "note": "..."}}`.
    #[error("{}:{line}:{column}: not a baseline file: {message} (expected {{\"case-id\": {{\"fingerprint\": [\"name (cause)\", ...], \"note\": \"optional\"}}}})", escape_path(path))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The file could not be written; the old file, if any, is unchanged.
    #[error(
        "{}: cannot write (the old file is unchanged): {source}",
        escape_path(path)
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
