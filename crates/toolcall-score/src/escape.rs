//! Escaping model-generated text before it reaches a terminal.
//!
//! A tool name comes from the model and can hold anything: ANSI escape sequences, carriage
//! returns, bidirectional overrides that make `rm_all` display as something else. Every name this
//! project prints goes through [`escape`].

use std::fmt;

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
    Escaped(text)
}

/// The [`fmt::Display`] returned by [`escape`].
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(&'a str);

fn needs_escape(c: char) -> bool {
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
        for (i, c) in self.0.chars().enumerate() {
            if i == MAX_CHARS {
                let rest = self.0.chars().count() - MAX_CHARS;
                return write!(f, "…({rest} more characters)");
            }
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\\' => f.write_str("\\\\")?,
                c if needs_escape(c) => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

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
    }
}
