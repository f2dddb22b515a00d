//! The traces teams already keep, read as the model turns `toolcall-score` judges.
//!
//! Teams keep their production traffic where their observability puts it: OpenTelemetry spans,
//! OpenInference spans, agent transcripts. Each **source** here reads one such kind of record
//! into [`Turn`]s in the core's own values — the catalog the model was offered (a
//! `toolcall_score::Catalog`, or that none was recorded), the system prompt, the conversation so
//! far (a `toolcall_score::Transcript`) and the model's answer (a `toolcall_score::Response`) —
//! with the trace's metadata: each turn's place in the file, its id, trace, model and agent.
//! `toolcall import`, `rate` and `promote` take turns from here and never know a source's
//! shape: `rate` scores [`Turn::case`] against [`Turn::response`] as they are.
//!
//! ```
//! let text = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{
//!     "traceId": "t1", "spanId": "s1", "name": "chat gpt-4o",
//!     "attributes": [
//!         {"key": "gen_ai.tool.definitions",
//!          "value": {"stringValue": "[{\"type\": \"function\", \"name\": \"get_weather\"}]"}},
//!         {"key": "gen_ai.output.messages",
//!          "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"c1\", \"name\": \"get_wether\", \"arguments\": {}}]}]"}}
//!     ]}]}]}]}"#;
//! let (source, found) = toolcall_traces::read(text, "trace.json", None)?;
//! assert_eq!(source.name, "otel-genai");
//! let turn = &found.turns[0];
//! let case = turn.case(None).expect("the span recorded its tools");
//! let verdict = toolcall_score::score(&case, &turn.response);
//! assert_eq!(verdict.unknown().count(), 1);
//! # Ok::<(), toolcall_traces::TraceError>(())
//! ```
//!
//! A provider's shape inside a trace (a kept response body, a tools array, a Chat, Anthropic or
//! Gemini message) is read by the core's reader for it, so a body scores the same inside a
//! trace as alone: a call's arguments keep the text the model wrote.
//!
//! A source is one module in `sources/` behind one interface ([`Source`]), registered by one
//! line in `sources/mod.rs`. Span-based sources share the container decoding of [`spans`]
//! (OTLP JSON, Tempo, Jaeger, JSON Lines): they only read their convention's attributes.
//!
//! A file's source is told from its content, never guessed: [`read`] with no source asks every
//! source whether it claims the file, and two claims are an error naming both
//! ([`TraceError::Ambiguous`]), as is none.
//!
//! Two rules every source follows:
//! - **A missing catalog is not an empty one.** A turn whose trace did not record what the model
//!   was offered has [`Catalog::NotRecorded`]: its calls are not judged. An empty list is a
//!   catalog, and every call against it is unknown.
//! - **A malformed record is a [`Bad`] entry naming where it is and what was expected**; the
//!   other records still count.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod errors;
mod model;
#[cfg(feature = "parquet")]
mod pages;
mod records;
pub mod sources;
pub mod spans;
mod stream;

pub use errors::TraceError;
pub use model::{Catalog, Turn};
#[cfg(feature = "parquet")]
pub use records::RowsWriter;
pub use records::{in_caught_parquet_read, is_parquet, Records};
pub use sources::{source, Groups, Reads, Source, SOURCES};

/// What reading one file found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    /// The model turns, in the file's order (a trace's turns by start time).
    pub turns: Vec<Turn>,
    /// Records that could not be read, each with where it is and why.
    pub bad: Vec<Bad>,
    /// Records that were read, with a caveat a reader should see (an ATIF file newer than this
    /// reader, say: what of it was read). A note fails nothing, `--strict` included.
    pub notes: Vec<Bad>,
    /// Calls recorded more than once (two instrumentations, a step and its parent, an
    /// execution span) that were folded into one.
    pub folded: usize,
    /// Traces (groups of records) read in parts, because their records lay so far apart in a
    /// long file that the first part was read before the rest came: a call recorded in two
    /// parts is not folded. See [`read_path_each`].
    pub split: usize,
}

/// A record that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    /// `file:line`, or the file and the span or record id.
    pub at: String,
    /// What was expected.
    pub why: String,
}

impl Found {
    /// Adds what `other` found after what this found.
    pub fn append(&mut self, mut other: Found) {
        self.turns.append(&mut other.turns);
        self.bad.append(&mut other.bad);
        self.notes.append(&mut other.notes);
        self.folded += other.folded;
        self.split += other.split;
    }

    pub(crate) fn bad(&mut self, at: impl Into<String>, why: impl Into<String>) {
        self.bad.push(Bad {
            at: at.into(),
            why: why.into(),
        });
    }

    pub(crate) fn note(&mut self, at: impl Into<String>, what: impl Into<String>) {
        self.notes.push(Bad {
            at: at.into(),
            why: what.into(),
        });
    }
}

/// Reads the trace in the file at `path`: what [`read_path_each`] finds, all of it.
pub fn read_path(
    path: &std::path::Path,
    from: Option<&'static Source>,
) -> Result<(&'static Source, Found), TraceError> {
    let mut all = Found::default();
    let source = read_path_each(path, from, &mut |found| all.append(found))?;
    Ok((source, all))
}

/// Reads the trace in the file at `path` a group of records at a time, handing `each` what
/// every group found, and returns the source that read it.
///
/// A JSON Lines file (of spans, or of a source's records) and a Parquet file's rows are read
/// record by record, each line within the input limit, in groups: spans by trace, records as
/// their source's [`Groups`] says. Memory stays flat however long the file is. The source is
/// told from the file's first records. One JSON document is read whole, within the input
/// limit ([`toolcall_score::read_text`]); an OTLP document a span at a time, and its spans'
/// turns handed to `each` a trace at a time.
pub fn read_path_each(
    path: &std::path::Path,
    from: Option<&'static Source>,
    each: &mut dyn FnMut(Found),
) -> Result<&'static Source, TraceError> {
    stream::read_path_grouped(path, from, stream::BUDGET_BYTES, Some(each))
}

/// [`read_path_each`] on `file`, already open at `path` and read from its start (a caller
/// that looked at its first line hands the same file on): the file is not opened again,
/// but to read one JSON document whole, which the core's text reader opens itself.
pub fn read_file_each(
    file: std::fs::File,
    path: &std::path::Path,
    from: Option<&'static Source>,
    each: &mut dyn FnMut(Found),
) -> Result<&'static Source, TraceError> {
    stream::read_file_grouped(file, path, from, stream::BUDGET_BYTES, Some(each))
}

/// The source that reads the file at `path` (`from`, when it claims the file), told as
/// [`read_path_each`] tells it: from the first records of a long file.
pub fn source_of(
    path: &std::path::Path,
    from: Option<&'static Source>,
) -> Result<&'static Source, TraceError> {
    stream::read_path_grouped(path, from, stream::BUDGET_BYTES, None)
}

/// The source that claims a file: `from` when it does, else the only one that does.
pub(crate) fn pick(
    path: &str,
    from: Option<&'static Source>,
    claims: impl Fn(&Source) -> bool,
) -> Result<&'static Source, TraceError> {
    match from {
        Some(source) if claims(source) => Ok(source),
        Some(source) => Err(TraceError::NotThisSource {
            path: path.to_owned(),
            name: source.name,
            expected: source.about,
        }),
        None => {
            let candidates: Vec<&'static Source> =
                SOURCES.iter().copied().filter(|s| claims(s)).collect();
            match candidates.as_slice() {
                [one] => Ok(*one),
                [] => Err(TraceError::NotATrace {
                    path: path.to_owned(),
                }),
                many => Err(TraceError::Ambiguous {
                    path: path.to_owned(),
                    candidates: many.iter().map(|s| s.name).collect(),
                }),
            }
        }
    }
}

/// Reads the trace in `text` (the content of `path`) as `from`, or as the one source that claims
/// it.
pub fn read(
    text: &str,
    path: &str,
    from: Option<&'static Source>,
) -> Result<(&'static Source, Found), TraceError> {
    let (source, decoded) = decode(text, path, from)?;
    let mut found = Found::default();
    match (&source.reads, decoded) {
        (Reads::Spans { turns, .. }, Decoded::Spans(spans)) => turns(&spans, &mut found),
        (Reads::Records { turns, .. }, Decoded::Records(records)) => {
            found.bad.extend(records.bad.iter().cloned());
            turns(&records, &mut found)
        }
        _ => {}
    }
    Ok((source, found))
}

/// [`read`] of one whole document, handing `each` what every trace in it found: a document of
/// spans is read a trace at a time (its spans grouped by trace id, the traces in the order
/// they first appear, as JSON Lines of spans are grouped), so that one trace's turns are held
/// at once, not the document's. The text is dropped once it is decoded (the spans hold their
/// own values).
pub(crate) fn read_document_each(
    text: String,
    path: &str,
    from: Option<&'static Source>,
    each: &mut dyn FnMut(Found),
) -> Result<&'static Source, TraceError> {
    let (source, decoded) = decode(&text, path, from)?;
    drop(text);
    match (&source.reads, decoded) {
        (Reads::Spans { turns, .. }, Decoded::Spans(spans)) => {
            for trace in by_trace(spans) {
                let mut found = Found::default();
                turns(&trace, &mut found);
                each(found);
            }
        }
        (Reads::Records { turns, .. }, Decoded::Records(records)) => {
            let mut found = Found::default();
            found.bad.extend(records.bad.iter().cloned());
            turns(&records, &mut found);
            each(found);
        }
        _ => {}
    }
    Ok(source)
}

/// `spans` grouped by trace id, the traces in the order they first appear, each trace's spans
/// in their order.
fn by_trace(spans: Vec<spans::Span>) -> Vec<Vec<spans::Span>> {
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut traces: Vec<Vec<spans::Span>> = Vec::new();
    for span in spans {
        let at = *index.entry(span.trace_id.clone()).or_insert_with(|| {
            traces.push(Vec::new());
            traces.len() - 1
        });
        traces[at].push(span);
    }
    traces
}

/// A text's spans, or its records when it is not spans.
enum Decoded {
    Spans(Vec<spans::Span>),
    Records(Records),
}

/// The text decoded once, and the source that claims it (what [`read`] reads its turns with;
/// telling a file's source needs no more).
pub(crate) fn decode(
    text: &str,
    path: &str,
    from: Option<&'static Source>,
) -> Result<(&'static Source, Decoded), TraceError> {
    let decoded = match spans::decode(text, path) {
        Some(spans) => Decoded::Spans(spans),
        None => Decoded::Records(Records::parse(text, path)),
    };
    let claims = |source: &Source| match (&source.reads, &decoded) {
        (Reads::Spans { claims, .. }, Decoded::Spans(spans)) => claims(spans),
        (Reads::Records { claims, .. }, Decoded::Records(records)) => {
            records.first().is_some_and(|(_, v)| claims(v))
        }
        _ => false,
    };
    let source = pick(path, from, claims)?;
    Ok((source, decoded))
}
