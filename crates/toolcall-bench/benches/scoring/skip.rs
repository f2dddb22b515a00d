//! The **skip** reference: a hand-written scalar JSON pass that reads nothing and checks every
//! byte as parsing into a `serde_json::Value` does (the check the scorer's own reader makes, so
//! that it agrees with the general path on every input).
//!
//! It answers one question the ratio against `IgnoredAny` leaves open: could a reader of our
//! own walk the bytes much faster than serde_json does, leaving room for the reading and the
//! scoring? It cannot by much: this pass runs at about serde_json's own speed. [`self_check`]
//! runs before every measurement, so the reference cannot be fast by checking less.

use serde_json::Value;

/// The deepest nesting a `Value` parse accepts.
const MAX_DEPTH: u32 = 127;

/// Whether `text` is one JSON value, checked as a `Value` parse checks it.
pub fn accepts(text: &str) -> bool {
    let mut scan = Scan {
        text,
        pos: 0,
        depth: 0,
    };
    scan.value().is_some() && scan.peek().is_none()
}

/// Panics unless [`accepts`] agrees with `serde_json::from_str::<Value>` on JSON's edges.
pub fn self_check() {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let mut texts: Vec<String> = [
        "",
        "null",
        "nul",
        "true",
        "false",
        "0",
        "-0",
        "01",
        "-",
        "1.",
        ".5",
        "1.5",
        "1e5",
        "1E+5",
        "1e-5",
        "1e",
        "1e400",
        "-1e400",
        "1e-400",
        "1.7976931348623159e308",
        "[]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{}",
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        "{1:1}",
        r#"{"a":1}"#,
        r#""a\"b""#,
        r#""a\qb""#,
        r#""\u00e9""#,
        r#""\ud800""#,
        r#""\udc00""#,
        r#""\ud800\udc00""#,
        r#""\u12""#,
        "\"a\tb\"",
        "\"é\"",
        r#""open"#,
        " [ 1 , { \"a\" : [ ] } ] ",
        "[1]x",
        "\u{a0}1",
    ]
    .map(str::to_owned)
    .to_vec();
    texts.extend([126, 127, 128].map(deep));
    texts.push(format!("1{}", "0".repeat(400)));
    for text in &texts {
        let expected = serde_json::from_str::<Value>(text).is_ok();
        assert_eq!(
            accepts(text),
            expected,
            "the skip reference disagrees on {text:?}"
        );
    }
}

struct Scan<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
}

impl Scan<'_> {
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' => self.container(b'}', true),
            b'[' => self.container(b']', false),
            b'-' | b'0'..=b'9' => self.number(),
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.text.as_bytes()[self.pos..]
            .starts_with(word)
            .then(|| self.pos += word.len())
    }

    /// An object (`keyed`) or an array, up to `close`.
    fn container(&mut self, close: u8, keyed: bool) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        if self.peek()? == close {
            self.pos += 1;
        } else {
            loop {
                if keyed {
                    if self.peek()? != b'"' {
                        return None;
                    }
                    self.string()?;
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                }
                self.value()?;
                match self.peek()? {
                    b',' => self.pos += 1,
                    b if b == close => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    fn string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut i = start + 1;
        let mut unicode = false;
        loop {
            i = plain_until(bytes, i);
            match bytes.get(i)? {
                b'"' => break,
                b'\\' => match bytes.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        if !bytes.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        unicode = true;
                        i += 6;
                    }
                    _ => return None,
                },
                _ => return None, // a control character
            }
        }
        self.pos = i + 1;
        // Lone surrogates: serde_json's verdict, on this string alone (rare).
        if unicode && serde_json::from_str::<Value>(&self.text[start..self.pos]).is_err() {
            return None;
        }
        Some(())
    }

    fn number(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let digits = |mut i: usize| {
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let start = self.pos;
        let mut i = start + usize::from(bytes[start] == b'-');
        i = match bytes.get(i)? {
            b'0' => i + 1,
            b'1'..=b'9' => digits(i + 1),
            _ => return None,
        };
        let integer_digits = i - start;
        if bytes.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return None;
            }
            i = end;
        }
        let mut exponent = false;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1 + usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
            let end = digits(i);
            if end == i {
                return None;
            }
            i = end;
            exponent = true;
        }
        self.pos = i;
        // Whether it fits an f64: serde_json's verdict, on this number alone (rare).
        if (exponent || integer_digits > 300)
            && serde_json::from_str::<Value>(&self.text[start..i]).is_err()
        {
            return None;
        }
        Some(())
    }
}

/// The first `"`, `\` or control byte at or after `i`, eight bytes at a time (the zero-byte
/// test serde_json's own string skip uses).
fn plain_until(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::MAX / 255;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let found = (control
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash))
            & (ONES << 7);
        if found != 0 {
            return i + found.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while bytes
        .get(i)
        .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
    {
        i += 1;
    }
    i
}
