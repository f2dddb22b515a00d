//! The errors of this crate: bad input is always an error that says where and what was expected.

use crate::escape_path;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::Format;

/// What is wrong with a JSON value that was meant to be a response, a tools array or a transcript.
///
/// Carries a JSON pointer (`/messages/3/content/0`) to the offending value; [`InputError`] turns
/// it into a line and column of the file it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// A value had the wrong type or a required key was missing.
    #[error("at {}: expected {expected}, found {found}", place(.pointer))]
    Unexpected {
        /// Where, as a JSON pointer (`""` is the whole document).
        pointer: String,
        /// What was expected there.
        expected: String,
        /// What was there instead (a short, escaped rendering).
        found: String,
    },
    /// The shape matches no supported format.
    #[error(
        "the JSON's shape matches no supported format: {why}; name the format explicitly ({})",
        crate::format::names()
    )]
    UnknownShape {
        /// What the shape looked like and why nothing matched.
        why: String,
    },
    /// A recorded stream (server-sent events, NDJSON chunks) that cannot be assembled into a
    /// response: it holds no event of a known kind, mixes two formats' events, or reports an
    /// error of its own.
    #[error("the stream cannot be assembled into a response: {why}")]
    Stream {
        /// What the stream held, and why it is not a response.
        why: String,
    },
    /// The body could not be read as the format it was named (by `--format`, or a case's
    /// `format`), and its shape is another format's.
    #[error("{error}; the body's shape is {detected}'s, not {named}'s: name {detected}, or leave the format out to detect it")]
    FormatMismatch {
        /// The format the body was read as.
        named: Format,
        /// The format its shape fits.
        detected: Format,
        /// Why it could not be read as `named`.
        error: Box<ParseError>,
    },
    /// A tool's input schema does not compile (checked, with the `schema` feature, when a case
    /// or tools file is loaded). The request is at fault, not any call: a provider rejects it
    /// or reads the schema otherwise, so no call could be judged against it.
    #[error("tool `{}`: its input schema does not compile: {why}", crate::escape(.tool))]
    Schema {
        /// Where the schema is, as a JSON pointer.
        pointer: String,
        /// The tool it belongs to.
        tool: String,
        /// What the compiler said.
        why: String,
    },
    /// The shape matches more than one format and the format was not named.
    #[error("the JSON's shape fits more than one format ({}); name the one it is", list(.candidates))]
    Ambiguous {
        /// The formats it fits.
        candidates: Vec<Format>,
    },
}

fn list(formats: &[Format]) -> String {
    let names: Vec<&str> = formats.iter().map(|f| f.as_str()).collect();
    names.join(", ")
}

impl ParseError {
    /// A wrong-type error at `pointer`.
    pub fn unexpected(
        pointer: impl Into<String>,
        expected: impl Into<String>,
        found: &serde_json::Value,
    ) -> ParseError {
        ParseError::Unexpected {
            pointer: pointer.into(),
            expected: expected.into(),
            found: describe(found),
        }
    }

    /// The JSON pointer of the offending value, when there is one.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            ParseError::Unexpected { pointer, .. } | ParseError::Schema { pointer, .. } => {
                Some(pointer)
            }
            ParseError::FormatMismatch { error, .. } => error.pointer(),
            _ => None,
        }
    }
}

/// A short description of a JSON value for error messages: its type, and a clipped, escaped
/// rendering of scalars.
pub(crate) fn describe(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string \"{}\"", crate::escape(&clip(s, 60))),
        Value::Array(a) => format!("an array of {} item(s)", a.len()),
        Value::Object(o) => {
            let keys: Vec<String> = o
                .keys()
                .take(6)
                .map(|k| crate::escape(k).to_string())
                .collect();
            let more = if o.len() > 6 { ", …" } else { "" };
            format!("an object with keys [{}{more}]", keys.join(", "))
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// Where in an input file something is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, when the input came from one.
    pub path: Option<PathBuf>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Location {
    /// The place of byte `offset` of `text`.
    pub(crate) fn at(path: Option<&Path>, text: &str, offset: usize) -> Location {
        let (line, column) = crate::span::line_column(text, offset);
        Location {
            path: path.map(Path::to_path_buf),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}:{}:{}", escape_path(path), self.line, self.column),
            None => write!(f, "line {}, column {}", self.line, self.column),
        }
    }
}

/// A case, response or tools file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", escape_path(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than the input limit ([`crate::max_input_bytes`]): read whole, a JSON file
    /// takes up to ten times its size in memory, so a file this size is refused up front.
    #[error(
        "{}: {} is over the input limit of {} (read whole, JSON takes up to 10× its size in memory); \
         if it is meant to be this big, raise the limit with --max-input-bytes or \
         {MAX_INPUT_BYTES_VAR}",
        escape_path(path),
        human_bytes(*bytes),
        human_bytes(*limit)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, or as much of it as was read before the limit was passed.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is not UTF-8 text: another encoding (UTF-16, said by its byte order mark), or
    /// bytes that are not UTF-8 at `location` (its byte offset in `why`).
    #[error("{location}: not UTF-8 text: {why}")]
    Encoding {
        /// Where the first bad byte is (line 1, column 1 for a whole-file encoding).
        location: Location,
        /// What was found, and what to do.
        why: String,
    },
    /// The file is not valid JSON.
    #[error("{location}: not valid JSON: {message}")]
    Syntax {
        /// Where the parser stopped.
        location: Location,
        /// What the parser said.
        message: String,
    },
    /// The JSON is valid but not what was expected.
    #[error("{location}: {error}")]
    Invalid {
        /// Where the offending value starts.
        location: Location,
        /// What is wrong with it.
        #[source]
        error: ParseError,
    },
}

impl InputError {
    /// The location of the problem, when it is inside the file.
    pub fn location(&self) -> Option<&Location> {
        match self {
            InputError::Read { .. } | InputError::TooLarge { .. } => None,
            InputError::Syntax { location, .. }
            | InputError::Invalid { location, .. }
            | InputError::Encoding { location, .. } => Some(location),
        }
    }

    /// The file, when the input came from one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            InputError::Read { path, .. } | InputError::TooLarge { path, .. } => Some(path),
            InputError::Syntax { location, .. }
            | InputError::Invalid { location, .. }
            | InputError::Encoding { location, .. } => location.path.as_deref(),
        }
    }

    /// A syntax error serde_json found in the file at `path`, at the line and column it gives
    /// (its message without the " at line L column C" it appends).
    pub fn syntax(path: Option<&Path>, error: &serde_json::Error) -> InputError {
        let message = syntax_message(error);
        InputError::Syntax {
            location: Location {
                path: path.map(Path::to_path_buf),
                line: error.line().max(1),
                column: error.column().max(1),
            },
            message,
        }
    }

    /// A syntax error of JSON text that sits at byte `offset` of the file's `text` (an event's
    /// payload inside a recorded stream).
    pub(crate) fn syntax_at(
        path: Option<&Path>,
        text: &str,
        offset: usize,
        error: &serde_json::Error,
    ) -> InputError {
        InputError::Syntax {
            location: Location::at(path, text, offset),
            message: syntax_message(error),
        }
    }

    /// An error about the value at byte `offset` of the file's `text`.
    pub(crate) fn invalid_at(
        path: Option<&Path>,
        text: &str,
        offset: usize,
        error: ParseError,
    ) -> InputError {
        InputError::Invalid {
            location: Location::at(path, text, offset),
            error,
        }
    }

    /// An error about the value its pointer leads to in the file's `text` (the start when
    /// it has none).
    pub(crate) fn invalid(path: Option<&Path>, text: &str, error: ParseError) -> InputError {
        let offset = error
            .pointer()
            .and_then(|p| crate::span::locate_offset(text, p))
            .unwrap_or(0);
        InputError::invalid_at(path, text, offset, error)
    }
}

/// A JSON pointer as a place in a message: the empty pointer is the whole document.
fn place(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the top level"
    } else {
        pointer
    }
}

/// What serde_json says of a syntax error, without the " at line L column C" it appends (the
/// location says that already).
fn syntax_message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    }
}

/// `1.5 GiB`, `64 MiB`, `900 bytes`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            return if value.fract() == 0.0 {
                format!("{value:.0} {unit}")
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// The environment variable that sets the input limit, in bytes (`ATP_MAX_INPUT_BYTES=200000000`),
/// for runs with no command line to pass `--max-input-bytes` on, such as `cargo test`.
pub const MAX_INPUT_BYTES_VAR: &str = "ATP_MAX_INPUT_BYTES";

/// Re-roots an error found inside a sub-value.
pub(crate) fn prefix(at: &str, error: ParseError) -> ParseError {
    match error {
        ParseError::Unexpected {
            pointer,
            expected,
            found,
        } => ParseError::Unexpected {
            pointer: format!("{at}{pointer}"),
            expected,
            found,
        },
        other => other,
    }
}
