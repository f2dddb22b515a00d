//! The errors of this crate. A bad line or a bad recorded file is not an error: it is counted and
//! reported (see [`crate::Report::bad_lines`]); these are the failures that stop a run.

use std::path::{Path, PathBuf};

use toolcall_score::{escape, escape_path};

/// What stopped a rate run, an import or a live run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RateError {
    /// A file or directory could not be read.
    #[error("{}: cannot read: {source}", escape_path(path))]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("{}: cannot write: {source}", escape_path(path))]
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
    #[error("{}: {why}", escape_path(path))]
    Import {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        why: String,
    },
    /// Import would overwrite files that exist.
    #[error(
        "{} file(s) exist already, e.g. {}; pass --force to overwrite them",
        count,
        escape_path(first)
    )]
    WouldOverwrite {
        /// How many.
        count: usize,
        /// The first of them.
        first: PathBuf,
    },
    /// A conversation id, a model name, `--agent` or `--prefix` that cannot be one component
    /// of an output path (see [`crate::import::safe_component`]).
    #[error("{}: its {what} `{}` cannot name a file or directory: {why}", place(path.as_deref(), whose), escape(value))]
    UnsafeName {
        /// The input file, unless the value came from the command line.
        path: Option<PathBuf>,
        /// Which conversation (`conversation 3`), or the flag the value came from.
        whose: String,
        /// Which value: `id`, `model`, `agent`, `prefix`.
        what: &'static str,
        /// The value, as it was given.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Two conversations of one import, or two turns of one promotion, would write the same
    /// file (ids `5` and `"5"`, or names that differ only in case or in white space at an end).
    #[error("{first} and {second} would both write {}: give each its own `id` (5 and \"5\", A and a, or x and `x `, are one name); nothing was written", escape_path(path))]
    SameOutput {
        /// The file both would write.
        path: PathBuf,
        /// The conversation planned first (`conversation 0 of log.json`).
        first: String,
        /// The one that clashes with it.
        second: String,
    },
    /// A file an import or a promotion would write has a name (or a path) too long for a file
    /// system.
    #[error(
        "{by} would write {}, but {why}: give it a shorter id or --prefix; nothing was written",
        escape_path(path)
    )]
    TooLong {
        /// The file.
        path: PathBuf,
        /// The conversation or turn that writes it.
        by: String,
        /// Which name, and how long.
        why: String,
    },
    /// Something that is not a directory stands where an import must make or write one.
    #[error("{} is in the way of {}: it is not a directory (or it is one where a file goes); nothing was written", escape_path(found), escape_path(planned))]
    InTheWay {
        /// What was found.
        found: PathBuf,
        /// The file the import would write.
        planned: PathBuf,
    },
    /// A file that is not a trace any source reads, more than one would, or not the named
    /// source's; or a trace file that cannot be read.
    #[error(transparent)]
    Trace(#[from] toolcall_traces::TraceError),
    /// Live mode was asked to do something it cannot (missing key, bad URL).
    #[error("{0}")]
    Config(String),
    /// A folder given to `rate` that is not one `import` wrote (see [`crate::inputs`]).
    #[error(
        "{} is a folder without cases/ and recorded/: give log or trace files, or a folder \
         `toolcall import --out` wrote",
        toolcall_score::escape_path(path)
    )]
    NotImported {
        /// The folder.
        path: PathBuf,
    },
    /// A tree to walk holds what cannot be read as part of it: a link out of it or round a
    /// loop, or a file that is not a regular one (a FIFO would block the read forever).
    #[error(
        "{}: {why}; remove it, or point at the tree it belongs to",
        toolcall_score::escape_path(path)
    )]
    Tree {
        /// The entry.
        path: PathBuf,
        /// What it is.
        why: String,
    },
}

/// `path: whose`, or `whose` alone for a value from the command line.
fn place(path: Option<&Path>, whose: &str) -> String {
    match path {
        Some(path) => format!("{}: {whose}", escape_path(path)),
        None => whose.to_owned(),
    }
}
