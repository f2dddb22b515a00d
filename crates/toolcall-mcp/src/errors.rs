//! The errors of this crate.
//!
//! Two kinds, kept apart on purpose: a [`FlowError`] means the flow file itself is wrong (exit code
//! 2: fix the file), a [`crate::Failure`] means the replay ran and the server did not do what the
//! flow says (exit code 1: a regression, or a broken server).

use std::path::PathBuf;

/// A flow file that cannot be read or does not describe a valid flow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// The flow file is too large or not UTF-8 text.
    #[error(transparent)]
    Input(#[from] toolcall_score::InputError),
    /// A folder of flows could not be listed, or holds no flow.
    #[error("{}: {why}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The file could not be read.
    #[error("{}: cannot read the flow: {source}", path.display())]
    Read {
        /// The flow file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file could not be written (`toolcall replay --update`).
    #[error("{}: cannot write the flow: {source}", path.display())]
    Write {
        /// The flow file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid JSON, or not the shape of a flow.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The flow file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// The JSON is well-formed but a value is not allowed there.
    #[error("{}: at {pointer}: {message}", path.display())]
    Invalid {
        /// The flow file.
        path: PathBuf,
        /// Where, as a JSON pointer.
        pointer: String,
        /// What was expected.
        message: String,
    },
    /// A `${VAR}` reference whose variable is not set.
    #[error("{}: {pointer} uses ${{{var}}}, which is not set", path.display())]
    UnsetVariable {
        /// The flow file.
        path: PathBuf,
        /// Where, as a JSON pointer.
        pointer: String,
        /// The variable.
        var: String,
    },
}
