//! Finding a JSON pointer's line and column in the original text.
//!
//! `serde_json::Value` keeps no positions, so an error found after parsing (a tool without a
//! name, say) would otherwise point at nothing. This scanner walks the text along the pointer,
//! skipping the values it passes, and stops at the value the pointer names.

/// The 1-based line and column (in characters) where the value at `pointer` starts in the JSON
/// `text`. When the pointer leads past what the text holds, the deepest value it reached is
/// returned; `None` only when the text is not JSON at all.
pub fn locate(text: &str, pointer: &str) -> Option<(usize, usize)> {
    locate_offset(text, pointer).map(|pos| line_column(text, pos))
}

/// [`locate`] as a byte offset into `text`.
pub(crate) fn locate_offset(text: &str, pointer: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    if pos >= bytes.len() {
        return None;
    }
    let tokens = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"));
    for token in tokens {
        match find_child(bytes, pos, &token) {
            Some(child) => pos = child,
            None => break,
        }
    }
    Some(pos)
}

/// The 1-based line and column (in characters) of the byte offset `pos` of `text` (an offset
/// inside a character counts as that character's start).
pub(crate) fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && matches!(bytes[pos], b' ' | b'\t' | b'\n' | b'\r') {
        pos += 1;
    }
    pos
}

/// The start of the child `token` of the container starting at `pos`.
fn find_child(bytes: &[u8], pos: usize, token: &str) -> Option<usize> {
    match bytes.get(pos)? {
        b'{' => {
            let mut p = skip_ws(bytes, pos + 1);
            while bytes.get(p) == Some(&b'"') {
                let key_end = skip_string(bytes, p)?;
                let key: String = serde_json::from_slice(&bytes[p..key_end]).ok()?;
                p = skip_ws(bytes, key_end);
                if bytes.get(p) != Some(&b':') {
                    return None;
                }
                let value = skip_ws(bytes, p + 1);
                if key == token {
                    return Some(value);
                }
                p = skip_ws(bytes, skip_value(bytes, value)?);
                if bytes.get(p) == Some(&b',') {
                    p = skip_ws(bytes, p + 1);
                }
            }
            None
        }
        b'[' => {
            let index: usize = token.parse().ok()?;
            let mut p = skip_ws(bytes, pos + 1);
            for _ in 0..index {
                if bytes.get(p) == Some(&b']') {
                    return None;
                }
                p = skip_ws(bytes, skip_value(bytes, p)?);
                if bytes.get(p) != Some(&b',') {
                    return None;
                }
                p = skip_ws(bytes, p + 1);
            }
            (bytes.get(p) != Some(&b']')).then_some(p)
        }
        _ => None,
    }
}

/// The position just past the string starting at `pos` (which holds `"`).
fn skip_string(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut p = pos + 1;
    while p < bytes.len() {
        match bytes[p] {
            b'\\' => p += 2,
            b'"' => return Some(p + 1),
            _ => p += 1,
        }
    }
    None
}

/// The position just past the value starting at `pos`.
fn skip_value(bytes: &[u8], pos: usize) -> Option<usize> {
    match bytes.get(pos)? {
        b'"' => skip_string(bytes, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut p = pos;
            while p < bytes.len() {
                match bytes[p] {
                    b'"' => {
                        p = skip_string(bytes, p)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(p + 1);
                        }
                    }
                    _ => {}
                }
                p += 1;
            }
            None
        }
        _ => {
            let mut p = pos;
            while p < bytes.len()
                && !matches!(bytes[p], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                p += 1;
            }
            Some(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::locate;

    const TEXT: &str = "{\n  \"tools\": [\n    {\"name\": \"a\"},\n    {\"description\": \"no name\"}\n  ],\n  \"a/b\": {\"x~y\": 1}\n}";

    #[test]
    fn finds_nested_values() {
        assert_eq!(locate(TEXT, ""), Some((1, 1)));
        assert_eq!(locate(TEXT, "/tools"), Some((2, 12)));
        assert_eq!(locate(TEXT, "/tools/1"), Some((4, 5)));
        assert_eq!(locate(TEXT, "/tools/0/name"), Some((3, 14)));
        assert_eq!(locate(TEXT, "/a~1b/x~0y"), Some((6, 18)));
    }

    #[test]
    fn stops_at_the_deepest_value_reached() {
        assert_eq!(locate(TEXT, "/tools/7/name"), Some((2, 12)));
        assert_eq!(locate(TEXT, "/missing"), Some((1, 1)));
        assert_eq!(locate("", "/x"), None);
    }

    #[test]
    fn never_panics_on_broken_text() {
        for text in ["{", "[", "{\"a\"", "{\"a\":", "[1,", "\"\\", "{\"a\":[}"] {
            assert!(locate(text, "/a/0/b").is_some(), "{text:?}");
        }
    }
}
