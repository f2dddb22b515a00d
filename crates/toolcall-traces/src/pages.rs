//! A Parquet file's declared sizes, checked before the `parquet` crate trusts them.
//!
//! The crate allocates what a file declares: a page's uncompressed size before it decompresses
//! the page, a page's compressed size before it reads it. A 14 KB file whose first page header
//! claimed 2 GiB made it allocate 2 GiB (and abort under a memory limit). So before a row group
//! is handed to the reader, every page header of its column chunks is read here — a few bytes
//! each, the page itself skipped — and a row group is refused, its rows one bad entry, when a
//! column chunk lies past the end of the file or a page declares more than the input limit
//! ([`toolcall_score::max_input_bytes`], which JSON Lines records are held to). A page holds
//! whole values, so a value over the limit is refused with its page, before it is read.
//!
//! A page header is Thrift's compact encoding; the two sizes are read from it and everything
//! else is skipped, each declared length held to the bytes the column chunk has left (the
//! crate's own decoding is not used here: it would allocate a length a hostile header declares).

use std::io::{BufReader, Read, Seek, SeekFrom};

use parquet::file::metadata::RowGroupMetaData;

/// Why a row group of the file cannot be read within the input limit, or `None` when every
/// page header of its column chunks declares sizes within it. `file_len` is the file's length.
pub(crate) fn refusal(
    file: &std::fs::File,
    file_len: u64,
    group: &RowGroupMetaData,
    limit: u64,
) -> Option<String> {
    group.columns().iter().find_map(|column| {
        let name = column.column_path().string();
        let start = column
            .dictionary_page_offset()
            .unwrap_or_else(|| column.data_page_offset());
        let len = column.compressed_size();
        let end = start.checked_add(len);
        let (Ok(start), Ok(len), Some(Ok(end))) = (
            u64::try_from(start),
            u64::try_from(len),
            end.map(u64::try_from),
        ) else {
            return Some(format!(
                "column `{name}` declares {len} bytes at offset {start}: not a place in the file"
            ));
        };
        if end > file_len {
            return Some(format!(
                "column `{name}` declares {len} bytes at offset {start}, past the end of the \
                     file ({file_len} bytes)"
            ));
        }
        check_pages(file, start, len, limit)
            .err()
            .map(|why| format!("column `{name}`: {why}"))
    })
}

/// Reads the page headers of the column chunk of `len` bytes at `start`, each page skipped.
fn check_pages(file: &std::fs::File, start: u64, len: u64, limit: u64) -> Result<(), String> {
    let mut file = file
        .try_clone()
        .map_err(|e| format!("cannot be read: {e}"))?;
    file.seek(SeekFrom::Start(start))
        .map_err(|e| format!("cannot be read: {e}"))?;
    let mut input = Counted {
        input: BufReader::with_capacity(8 * 1024, file),
        left: len,
    };
    let mut number = 0u64;
    while input.left > 0 {
        number += 1;
        let sizes = page_sizes(&mut input).map_err(|why| format!("page {number}: {why}"))?;
        let (Some(compressed), Some(uncompressed)) = sizes else {
            return Err(format!("page {number}: its header has no page sizes"));
        };
        let (Ok(compressed), Ok(uncompressed)) =
            (u64::try_from(compressed), u64::try_from(uncompressed))
        else {
            return Err(format!(
                "page {number} declares a negative size ({compressed} bytes compressed, \
                 {uncompressed} uncompressed)"
            ));
        };
        for (size, what) in [(compressed, "compressed"), (uncompressed, "uncompressed")] {
            if size > limit {
                return Err(format!(
                    "page {number} declares {size} bytes {what}, over the input limit of {limit} \
                     bytes (--max-input-bytes or ATP_MAX_INPUT_BYTES raises it)"
                ));
            }
        }
        if compressed > input.left {
            return Err(format!(
                "page {number} declares {compressed} bytes, past the end of its column chunk"
            ));
        }
        input.skip(compressed)?;
    }
    Ok(())
}

/// A column chunk's bytes, read no further than its end.
struct Counted<R> {
    input: BufReader<R>,
    /// The bytes of the column chunk not read yet.
    left: u64,
}

impl<R: Read + Seek> Counted<R> {
    fn byte(&mut self) -> Result<u8, String> {
        if self.left == 0 {
            return Err("its header runs past the end of its column chunk".into());
        }
        let mut byte = [0u8; 1];
        self.input
            .read_exact(&mut byte)
            .map_err(|e| format!("its header cannot be read: {e}"))?;
        self.left -= 1;
        Ok(byte[0])
    }

    fn skip(&mut self, bytes: u64) -> Result<(), String> {
        if bytes > self.left {
            return Err("its header runs past the end of its column chunk".into());
        }
        let by = i64::try_from(bytes).map_err(|_| "a length past any file".to_owned())?;
        self.input
            .seek_relative(by)
            .map_err(|e| format!("cannot be read: {e}"))?;
        self.left -= bytes;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most 64 bits.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("its header holds a number longer than 64 bits".into())
    }

    fn zigzag(&mut self) -> Result<i64, String> {
        let n = self.varint()?;
        Ok((n >> 1) as i64 ^ -((n & 1) as i64))
    }
}

/// Thrift compact types (the low nibble of a field header).
const STOP: u8 = 0;
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// Nesting deeper than any page header has: a deeper one is refused, not followed.
const MAX_DEPTH: usize = 32;

/// A `PageHeader`'s `compressed_page_size` (field 3) and `uncompressed_page_size` (field 2).
fn page_sizes<R: Read + Seek>(
    input: &mut Counted<R>,
) -> Result<(Option<i64>, Option<i64>), String> {
    let (mut compressed, mut uncompressed) = (None, None);
    let mut last_id = 0i64;
    loop {
        let header = input.byte()?;
        let kind = header & 0x0f;
        if kind == STOP {
            return Ok((compressed, uncompressed));
        }
        let id = match header >> 4 {
            0 => input.zigzag()?,
            delta => last_id + i64::from(delta),
        };
        last_id = id;
        match (id, kind) {
            (2, I32) => uncompressed = Some(input.zigzag()?),
            (3, I32) => compressed = Some(input.zigzag()?),
            _ => skip(input, kind, 1)?,
        }
    }
}

/// Skips one value of compact type `kind`, nested `depth` deep.
fn skip<R: Read + Seek>(input: &mut Counted<R>, kind: u8, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("its header nests deeper than {MAX_DEPTH} levels"));
    }
    match kind {
        BOOL_TRUE | BOOL_FALSE => Ok(()),
        BYTE => input.byte().map(drop),
        I16 | I32 | I64 => input.varint().map(drop),
        DOUBLE => input.skip(8),
        UUID => input.skip(16),
        BINARY => {
            let len = input.varint()?;
            input.skip(len)
        }
        LIST | SET => {
            let header = input.byte()?;
            let element = header & 0x0f;
            let count = match header >> 4 {
                15 => input.varint()?,
                n => u64::from(n),
            };
            elements(input, count, &[element], depth)
        }
        MAP => {
            let count = input.varint()?;
            if count == 0 {
                return Ok(());
            }
            let kinds = input.byte()?;
            elements(input, count, &[kinds >> 4, kinds & 0x0f], depth)
        }
        STRUCT => loop {
            let header = input.byte()?;
            let kind = header & 0x0f;
            if kind == STOP {
                return Ok(());
            }
            if header >> 4 == 0 {
                input.zigzag()?;
            }
            skip(input, kind, depth + 1)?;
        },
        other => Err(format!("its header holds a value of unknown type {other}")),
    }
}

/// Skips `count` elements of a list, set or map, each of `kinds` in turn. Every element takes
/// a byte at least, so a count past the bytes left is refused before any is read.
fn elements<R: Read + Seek>(
    input: &mut Counted<R>,
    count: u64,
    kinds: &[u8],
    depth: usize,
) -> Result<(), String> {
    if count > input.left {
        return Err(format!(
            "its header declares {count} elements, more than the bytes left in its column chunk"
        ));
    }
    for _ in 0..count {
        for &kind in kinds {
            // In a collection, a boolean is a byte of its own.
            if matches!(kind, BOOL_TRUE | BOOL_FALSE) {
                input.byte()?;
            } else {
                skip(input, kind, depth + 1)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(header: &[u8]) -> Result<(Option<i64>, Option<i64>), String> {
        let mut input = Counted {
            input: BufReader::new(std::io::Cursor::new(header.to_vec())),
            left: header.len() as u64,
        };
        page_sizes(&mut input)
    }

    /// A data page header as the `parquet` crate writes it: the two sizes read, the data page
    /// header (a struct of i32s) and the CRC skipped.
    #[test]
    fn the_sizes_are_read_and_the_rest_skipped() {
        // type 0, uncompressed 300 (zigzag 600), compressed 150 (zigzag 300), crc, then field
        // 5 a struct {1: i32 10}, stop.
        let header = [
            0x15, 0x00, 0x15, 0xd8, 0x04, 0x15, 0xac, 0x02, 0x15, 0x02, 0x2c, 0x15, 0x14, 0x00,
            0x00,
        ];
        assert_eq!(sizes(&header), Ok((Some(150), Some(300))));
    }

    /// Declared lengths and counts are held to the bytes left, and nesting to a depth: a
    /// hostile header is refused, never followed or allocated.
    #[test]
    fn a_header_declaring_more_than_it_holds_is_refused() {
        // Field 4 binary of 2^31 bytes.
        let binary = [0x15, 0x00, 0x38, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        assert!(sizes(&binary).unwrap_err().contains("runs past the end"));
        // Field 4 a list of 2^31 i32s.
        let list = [0x15, 0x00, 0x39, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        assert!(sizes(&list).unwrap_err().contains("2147483648 elements"));
        // Structs nested 100 deep.
        let mut deep = vec![0x15, 0x00];
        deep.extend(std::iter::repeat_n(0x1c, 100));
        assert!(sizes(&deep).unwrap_err().contains("deeper than"));
        // Cut short.
        assert!(sizes(&[0x15, 0x00, 0x15]).is_err());
    }
}
