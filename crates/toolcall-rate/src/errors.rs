//! The errors of this crate. A bad line or a bad recorded file is not an error: it is counted and
//! reported (see [`crate::Report::bad_lines`]); these are the failures that stop a run.

use std::path::PathBuf;

/// What stopped a rate run, an import or a live run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RateError {
    /// A file or directory could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// With `--strict`, the first input that could not be read or understood.
    #[error("{message} (--strict makes any bad input fatal)")]
    Strict {
        /// `file:line: what is wrong`.
        message: String,
    },
    /// A case, tools or conversation file is not what was expected.
    #[error("{0}")]
    Input(#[from] toolcall_score::InputError),
    /// An import input that holds no conversation the importer understands.
    #[error("{}: {why}", path.display())]
    Import {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        why: String,
    },
    /// Import would overwrite files that exist.
    #[error("{} file(s) exist already, e.g. {}; pass --force to overwrite them", count, first.display())]
    WouldOverwrite {
        /// How many.
        count: usize,
        /// The first of them.
        first: PathBuf,
    },
    /// Live mode was asked to do something it cannot (missing key, bad URL).
    #[error("{0}")]
    Config(String),
    /// A tree to walk holds what cannot be read as part of it: a link out of it or round a
    /// loop, or a file that is not a regular one (a FIFO would block the read forever).
    #[error("{}: {why}; remove it, or point at the tree it belongs to", path.display())]
    Tree {
        /// The entry.
        path: PathBuf,
        /// What it is.
        why: String,
    },
}
