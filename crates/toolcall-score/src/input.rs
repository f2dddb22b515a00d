//! Input files read the one way every input is read: within the input limit, as UTF-8 text
//! (a byte order mark dropped, UTF-16 and bad bytes named), then as JSON with syntax errors at
//! their line and column. `tidy.rs` checks that no other code reads a whole file.

use std::path::Path;

#[cfg(test)]
use crate::errors::human_bytes;
use crate::errors::{InputError, Location, MAX_INPUT_BYTES_VAR};

/// Reads the file at `path` as UTF-8 text, the way every input file is read. A UTF-8 byte order
/// mark (which some editors write) is dropped; a UTF-16 file (told by its byte order mark) and
/// bytes that are not UTF-8 are [`InputError::Encoding`], saying which and, for a bad byte, its
/// byte offset, line and column, rather than a bare "not valid JSON".
///
/// A file over [`max_input_bytes`] is [`InputError::TooLarge`], told before it is read.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let file = std::fs::File::open(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    read_text_from(file, path)
}

/// [`read_text`] of `file`, already open at `path`, from where it is (rewind a file that was
/// probed first): for a caller that looked at a file's first bytes to tell what it is, so that
/// the file is opened once.
pub fn read_text_from(file: std::fs::File, path: &Path) -> Result<String, InputError> {
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

/// [`read_text`] over bytes already read.
pub(crate) fn text_of(path: Option<&Path>, bytes: Vec<u8>) -> Result<String, InputError> {
    if let Some(error) = utf16_error(path, &bytes) {
        return Err(error);
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

/// [`InputError::Encoding`] when `head`, the first bytes of the input at `path`, is UTF-16
/// text: by its byte order mark, or, without one, by its shape (its first two characters are
/// ASCII, each with a NUL byte after it, or before it) — what no UTF-8 JSON text or line can
/// start with. For a reader that looks at a file's first bytes before it reads on (JSON Lines,
/// a trace), so that such a file is named once rather than as so many unreadable lines.
pub fn utf16_error(path: Option<&Path>, head: &[u8]) -> Option<InputError> {
    let ascii = |b: u8| b != 0 && b.is_ascii();
    let (order, told) = match head {
        [0xFF, 0xFE, ..] => ("LE", "its byte order mark says so"),
        [0xFE, 0xFF, ..] => ("BE", "its byte order mark says so"),
        [a, 0, b, 0, ..] if ascii(*a) && ascii(*b) => ("LE", "a NUL byte follows each character"),
        [0, a, 0, b, ..] if ascii(*a) && ascii(*b) => {
            ("BE", "a NUL byte comes before each character")
        }
        _ => return None,
    };
    Some(InputError::Encoding {
        location: Location {
            path: path.map(Path::to_path_buf),
            line: 1,
            column: 1,
        },
        why: format!("the file is UTF-16{order} ({told}); save it as UTF-8"),
    })
}

/// Parses JSON text, reporting syntax errors with their line and column.
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
        // Without a byte order mark, told by its NUL bytes (else "not valid JSON" at 1:2).
        for (bytes, order) in [(b"{\0}\0".to_vec(), "LE"), (b"\0{\0}".to_vec(), "BE")] {
            let utf16 = text_of(None, bytes).expect_err("UTF-16 without a mark");
            let message = utf16.to_string();
            assert!(
                message.contains(&format!("UTF-16{order} (a NUL")),
                "{message}"
            );
        }
        assert!(utf16_error(None, b"{\"a\": 1}").is_none());
        assert!(utf16_error(None, b"{").is_none());

        let bad = text_of(None, b"{\n  \"name\": \"caf\xE9\"\n}".to_vec()).expect_err("Latin-1");
        let message = bad.to_string();
        assert!(message.contains("byte 16 is 0xE9"), "{message}");
        let location = bad.location().expect("a place");
        assert_eq!((location.line, location.column), (2, 15), "{message}");
    }
}
