//! Escaping model-generated text before it reaches a terminal.
//!
//! A tool name comes from the model and can hold anything: ANSI escape sequences, carriage
//! returns, bidirectional overrides that make `rm_all` display as something else. So can a
//! conversation id, an agent directory's name or a path a user typed. One rule covers every
//! output mode:
//!
//! - text for a human goes through [`escape`] (or [`escape_path`] for a path, which is never
//!   cut short);
//! - JSON goes through [`to_json_pretty`]: serde_json already writes control characters as
//!   `\u00XX`, but passes C1 controls, bidi overrides and zero-width characters through raw, so
//!   a `--json` consumer's terminal (`jq`, `cat`) could still be fooled. There they are written
//!   as `\uXXXX` too: the JSON is as valid and decodes to the same string.
//!
//! Both escape the same characters ([`is_invisible`]), so the two modes cannot drift apart.

use std::fmt;
use std::io;
use std::path::Path;

/// Longest rendering, in characters, before the rest is elided.
const MAX_CHARS: usize = 200;

/// Displays `text` with control characters, bidi overrides and other invisible format
/// characters escaped as `\u{..}` (and `\n`, `\t`, `\r`, `\\` as themselves), cut at 200
/// characters.
///
/// ```
/// assert_eq!(toolcall_score::escape("get\u{1b}[31m_x\n").to_string(), "get\\u{1b}[31m_x\\n");
/// ```
pub fn escape(text: &str) -> Escaped<'_> {
    Escaped {
        text,
        limit: Some(MAX_CHARS),
    }
}

/// Displays `path` (lossily decoded, as `Path::display` does) escaped as [`escape`] does, but
/// never cut: a path is only useful whole.
///
/// ```
/// let path = std::path::Path::new("out/recorded/evil\u{1b}[2J");
/// assert_eq!(toolcall_score::escape_path(path).to_string(), "out/recorded/evil\\u{1b}[2J");
/// ```
pub fn escape_path(path: &Path) -> EscapedPath<'_> {
    EscapedPath(path)
}

/// The [`fmt::Display`] returned by [`escape`].
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a> {
    text: &'a str,
    /// Characters shown before the rest is elided; `None` shows everything.
    limit: Option<usize>,
}

/// The [`fmt::Display`] returned by [`escape_path`].
#[derive(Clone, Copy, Debug)]
pub struct EscapedPath<'a>(&'a Path);

impl fmt::Display for EscapedPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string_lossy();
        fmt::Display::fmt(
            &Escaped {
                text: &text,
                limit: None,
            },
            f,
        )
    }
}

/// Whether `c` is escaped on output: control characters (C0 and C1), and the invisible format
/// characters that reorder or hide text (bidi embeddings, overrides and isolates, zero-width
/// characters, the byte order mark, the soft hyphen).
pub fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'   // zero-width and directional marks
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2069}' // word joiner, bidi isolates
            | '\u{FEFF}'              // byte order mark
            | '\u{00AD}'              // soft hyphen
        )
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for (i, c) in self.text.chars().enumerate() {
            if Some(i) == self.limit {
                let rest = self.text.chars().count() - i;
                return write!(f, "…({rest} more characters)");
            }
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\\' => f.write_str("\\\\")?,
                c if is_invisible(c) => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// `value` as pretty-printed JSON (serde_json's layout) with every [`is_invisible`] character
/// written as a `\uXXXX` escape, so the text is safe to print to a terminal and still decodes
/// to the same value.
///
/// ```
/// let json = toolcall_score::to_json_pretty(&["rm_all\u{202e}txt.exe"]).unwrap();
/// assert_eq!(json, "[\n  \"rm_all\\u202etxt.exe\"\n]");
/// let back: Vec<String> = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, ["rm_all\u{202e}txt.exe"]);
/// ```
pub fn to_json_pretty<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut out,
        Invisible(serde_json::ser::PrettyFormatter::new()),
    );
    value.serialize(&mut serializer)?;
    // serde_json writes only valid UTF-8 (`from_utf8` cannot fail on its output).
    String::from_utf8(out)
        .map_err(|e| serde_json::Error::io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// A serde_json formatter that writes invisible characters inside strings as escapes and
/// leaves everything else to the formatter it wraps.
struct Invisible<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Invisible<F> {
    // serde_json has escaped `"`, `\` and C0 controls before a fragment reaches this: what is
    // left to catch is the characters it passes through.
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_invisible(c) {
                self.0.write_string_fragment(writer, &fragment[start..i])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        self.0.write_string_fragment(writer, &fragment[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, escape_path, to_json_pretty};

    #[test]
    fn escapes_what_could_drive_a_terminal() {
        assert_eq!(escape("plain_name").to_string(), "plain_name");
        assert_eq!(
            escape("a\u{1b}]0;pwned\u{7}").to_string(),
            "a\\u{1b}]0;pwned\\u{7}"
        );
        assert_eq!(escape("x\u{202e}fdp.exe").to_string(), "x\\u{202e}fdp.exe");
        assert_eq!(escape("a\\b\r\n").to_string(), "a\\\\b\\r\\n");
        assert_eq!(escape("naïve_工具").to_string(), "naïve_工具");
    }

    #[test]
    fn cuts_very_long_names() {
        let long = "x".repeat(1000);
        let shown = escape(&long).to_string();
        assert!(shown.starts_with(&"x".repeat(200)));
        assert!(shown.ends_with("…(800 more characters)"));
        let path = std::path::PathBuf::from("x".repeat(300));
        assert_eq!(escape_path(&path).to_string(), "x".repeat(300));
    }

    #[test]
    fn json_escapes_what_serde_json_lets_through_and_decodes_the_same() {
        let name = "a\u{202e}b\u{200b}c\u{9b}d\u{1b}e\n\"f\\工";
        let json = to_json_pretty(&serde_json::json!({"name": name, "n": [1, 2]})).unwrap();
        assert_eq!(
            json,
            "{\n  \"n\": [\n    1,\n    2\n  ],\n  \"name\": \"a\\u202eb\\u200bc\\u009bd\\u001be\\n\\\"f\\\\工\"\n}"
        );
        assert!(!json.contains(['\u{202e}', '\u{200b}', '\u{9b}', '\u{1b}']));
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["name"], name);
    }
}
