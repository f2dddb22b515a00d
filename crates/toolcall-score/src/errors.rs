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
    fn at(path: Option<&Path>, text: &str, offset: usize) -> Location {
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
    /// The file is larger than the input limit ([`max_input_bytes`]): read whole, a JSON file
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

/// Parses JSON text, reporting syntax errors with their line and column.
/// Reads the file at `path` as UTF-8 text, the way every input file is read. A UTF-8 byte order
/// mark (which some editors write) is dropped; a UTF-16 file (told by its byte order mark) and
/// bytes that are not UTF-8 are [`InputError::Encoding`], saying which and, for a bad byte, its
/// byte offset, line and column, rather than a bare "not valid JSON".
///
/// A file over [`max_input_bytes`] is [`InputError::TooLarge`], told before it is read.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    use std::io::Read as _;
    let read_error = |source| InputError::Read {
        path: path.to_path_buf(),
        source,
    };
    let limit = max_input_bytes();
    let too_large = |bytes| InputError::TooLarge {
        path: path.to_path_buf(),
        bytes,
        limit,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let size = file.metadata().map_err(read_error)?.len();
    if size > limit {
        return Err(too_large(size));
    }
    // The size can be wrong (a file still growing, a device): the read itself stops past it.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    text_of(Some(path), bytes)
}

/// The input limit's default: 64 MiB, a thousand times a large recorded response.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The environment variable that sets the input limit, in bytes (`ATP_MAX_INPUT_BYTES=200000000`),
/// for runs with no command line to pass `--max-input-bytes` on, such as `cargo test`.
pub const MAX_INPUT_BYTES_VAR: &str = "ATP_MAX_INPUT_BYTES";

/// The limit as set, or 0 before anything set it.
static MAX_INPUT_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The largest input read whole, in bytes: a case, tools, response, baseline or flow file, or
/// one line of a log. What [`set_max_input_bytes`] set, else [`MAX_INPUT_BYTES_VAR`] when it
/// holds a number, else [`DEFAULT_MAX_INPUT_BYTES`]. One limit for the process, like a ulimit:
/// it guards the machine, not one call.
pub fn max_input_bytes() -> u64 {
    use std::sync::atomic::Ordering;
    match MAX_INPUT_BYTES.load(Ordering::Relaxed) {
        0 => {
            let limit = std::env::var(MAX_INPUT_BYTES_VAR)
                .ok()
                .and_then(|v| parse_bytes(&v))
                .unwrap_or(DEFAULT_MAX_INPUT_BYTES);
            MAX_INPUT_BYTES.store(limit, Ordering::Relaxed);
            limit
        }
        limit => limit,
    }
}

/// Sets [`max_input_bytes`] for the rest of the process (0 is taken as 1).
pub fn set_max_input_bytes(bytes: u64) {
    MAX_INPUT_BYTES.store(bytes.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// A byte count as people write it: `200000000`, `200MB`, `64MiB`, `1G`, `512k` (a `B` is
/// optional; `K`/`M`/`G` are powers of 1024, as with `ulimit` and `head -c`).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits].parse().ok()?;
    let unit = text[digits..].trim().to_ascii_lowercase();
    let scale: u64 = match unit.trim_end_matches('b').trim_end_matches('i') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// `1.5 GiB`, `64 MiB`, `900 bytes`.
fn human_bytes(bytes: u64) -> String {
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

/// [`read_text`] over bytes already read.
pub(crate) fn text_of(path: Option<&Path>, bytes: Vec<u8>) -> Result<String, InputError> {
    let start = Location {
        path: path.map(Path::to_path_buf),
        line: 1,
        column: 1,
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        let order = if bytes[0] == 0xFF { "LE" } else { "BE" };
        return Err(InputError::Encoding {
            location: start,
            why: format!(
                "the file is UTF-16{order} (its byte order mark says so); save it as UTF-8"
            ),
        });
    }
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = String::from_utf8_lossy(&e.as_bytes()[..offset]).into_owned();
        let bad = e.as_bytes().get(offset).copied().unwrap_or_default();
        InputError::Encoding {
            location: Location::at(path, &valid, offset),
            why: format!("byte {offset} is 0x{bad:02X}, which does not start a UTF-8 character"),
        }
    })
}

pub(crate) fn parse_json(path: Option<&Path>, text: &str) -> Result<serde_json::Value, InputError> {
    serde_json::from_str(text).map_err(|e| InputError::syntax(path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_bytes("200000000"), Some(200_000_000));
        assert_eq!(parse_bytes("64MiB"), Some(64 << 20));
        assert_eq!(parse_bytes("200MB"), Some(200 << 20));
        assert_eq!(parse_bytes("1 G"), Some(1 << 30));
        assert_eq!(parse_bytes("512k"), Some(512 << 10));
        for bad in ["", "MB", "1.5G", "12 apples", "99999999999999999999G"] {
            assert_eq!(parse_bytes(bad), None, "{bad:?}");
        }
        assert_eq!(human_bytes(900), "900 bytes");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_utf16_and_bad_bytes_are_named() {
        let text =
            text_of(None, b"\xEF\xBB\xBF{\"tools\": []}".to_vec()).expect("UTF-8 with a BOM");
        assert_eq!(text, "{\"tools\": []}");

        let utf16 = text_of(None, vec![0xFF, 0xFE, b'{', 0, b'}', 0]).expect_err("UTF-16");
        assert!(
            utf16.to_string().contains("the file is UTF-16LE"),
            "{utf16}"
        );

        let bad = text_of(None, b"{\n  \"name\": \"caf\xE9\"\n}".to_vec()).expect_err("Latin-1");
        let message = bad.to_string();
        assert!(message.contains("byte 16 is 0xE9"), "{message}");
        let location = bad.location().expect("a place");
        assert_eq!((location.line, location.column), (2, 15), "{message}");
    }
}
