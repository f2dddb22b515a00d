//! The registry of trace sources: one module each, one line each in `registry!`.
//!
//! A source is a [`Source`]: its name (what `--from` takes), a sentence on what it reads, and
//! how: a claim on a file's spans or first record, and the reader of its turns. Adding a source
//! is its module and its line here; the completeness tests in `tests/sources.rs` then ask for
//! its fixtures.

use serde_json::Value;

use crate::spans::Span;
use crate::{Found, Records};

/// One kind of trace.
#[derive(Debug)]
pub struct Source {
    /// The name `--from` takes.
    pub name: &'static str,
    /// What it reads, in a phrase (shown when `--from` names it for a file it does not claim).
    pub about: &'static str,
    /// How it reads.
    pub reads: Reads,
}

/// How a source reads a file.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reads {
    /// Spans, in any container [`crate::spans`] decodes.
    Spans {
        /// Whether these spans are this source's convention.
        claims: fn(&[Span]) -> bool,
        /// Their turns.
        turns: fn(&[Span], &mut Found),
    },
    /// Records of its own: one JSON document or JSON Lines.
    Records {
        /// Whether the first record is this source's.
        claims: fn(&Value) -> bool,
        /// Their turns.
        turns: fn(&Records, &mut Found),
        /// How a JSON Lines file's (or a Parquet file's) records divide into groups that are
        /// read on their own, so that a long export is read with flat memory.
        groups: Groups,
    },
}

/// How a source's records divide into groups whose turns need no other record: the unit
/// [`crate::read_path_each`] reads a long file in. (Spans are always grouped by trace.)
#[derive(Debug)]
#[non_exhaustive]
pub enum Groups {
    /// The whole file is one group (a session transcript, whose turns are told apart across
    /// all its records).
    File,
    /// Every record stands alone (a batch body, a trace export per line).
    Record,
    /// Records with the same key belong together (an export's rows, by trace id); a record
    /// without one stands alone. A record that is a list (of rows) is taken item by item,
    /// each with its own key.
    Key(fn(&Value) -> Option<String>),
}

macro_rules! registry {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every source, in the order `--help` lists them.
        pub static SOURCES: &[&Source] = &[$(&$module::SOURCE),*];
    };
}

registry! {
    otel_genai,
    claude_code,
    atif,
    langfuse,
    openinference,
    vercel_ai,
    openai_agents,
    langsmith,
}

/// The source named `name`.
pub fn source(name: &str) -> Option<&'static Source> {
    SOURCES.iter().copied().find(|s| s.name == name)
}

/// Every source's name, comma-separated.
pub fn names() -> String {
    SOURCES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}
