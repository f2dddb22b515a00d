//! Why a file could not be read as a trace at all (a record that cannot be read is a
//! [`crate::Bad`] entry instead, and the rest of the file still counts).

/// A file no source reads, or more than one would.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// No source claims the file.
    #[error(
        "{path}: not a trace any source reads (sources: {}); name one with --from to see what it \
         expected",
        crate::sources::names()
    )]
    NotATrace {
        /// The file.
        path: String,
    },
    /// More than one source claims the file.
    #[error(
        "{path}: could be read as {}: name the source with --from",
        candidates.join(" or ")
    )]
    Ambiguous {
        /// The file.
        path: String,
        /// The sources that claim it.
        candidates: Vec<&'static str>,
    },
    /// The file could not be read (too large, not UTF-8, not there).
    #[error("{0}")]
    Input(String),
    /// A Parquet file this build cannot read, or that is not valid Parquet.
    #[error("{path}: {why}")]
    Parquet {
        /// The file.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// `--from` named a source that does not claim the file.
    #[error("{path}: not a {name} trace: expected {expected}")]
    NotThisSource {
        /// The file.
        path: String,
        /// The source named.
        name: &'static str,
        /// What that source reads.
        expected: &'static str,
    },
}
