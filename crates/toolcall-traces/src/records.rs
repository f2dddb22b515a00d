//! The records of a source that is not spans: one JSON document, or JSON Lines.

use serde_json::Value;

use crate::Bad;

/// A file's JSON values with where each is: the whole document (`file`), or each line of a JSON
/// Lines file (`file:line`). A line that is not JSON is in `bad`, and the others are kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    /// The values, in order, with where each is.
    pub values: Vec<(String, Value)>,
    /// Lines that are not JSON.
    pub bad: Vec<Bad>,
    /// Whether the file is JSON Lines (else one document).
    pub lines: bool,
}

impl Records {
    /// Parses `text`, the content of `path`.
    pub fn parse(text: &str, path: &str) -> Records {
        let text = text.trim_start_matches('\u{feff}');
        if let Ok(doc) = serde_json::from_str::<Value>(text) {
            return Records {
                values: vec![(path.to_owned(), doc)],
                bad: Vec::new(),
                lines: false,
            };
        }
        let mut records = Records {
            lines: true,
            ..Records::default()
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{path}:{}", i + 1);
            match serde_json::from_str::<Value>(line) {
                Ok(v) => records.values.push((at, v)),
                Err(e) => records.bad.push(Bad {
                    at,
                    why: format!("not JSON: {e}"),
                }),
            }
        }
        records
    }

    /// The first value, which a source's claim is judged on.
    pub fn first(&self) -> Option<&(String, Value)> {
        self.values.first()
    }
}

/// Whether the file at `path` is Parquet (it starts with the magic `PAR1`).
pub fn is_parquet(path: &std::path::Path) -> bool {
    std::fs::File::open(path)
        .and_then(|mut f| head(&mut f))
        .is_ok_and(|head| head == *PARQUET_MAGIC)
}

/// Parquet's magic, the first (and last) bytes of every Parquet file.
pub(crate) const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// The first four bytes of `file` (fewer when it is shorter), which tell what it is: Parquet
/// (`PAR1`), UTF-16 text, or else; it is read from its start again after.
pub(crate) fn head(file: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek};
    let mut head = Vec::with_capacity(4);
    file.by_ref().take(4).read_to_end(&mut head)?;
    file.rewind()?;
    Ok(head)
}

/// A file's rows, each with where it is, or why it cannot be read.
pub(crate) type Rows = Box<dyn Iterator<Item = Result<(String, Value), Bad>>>;

/// A Parquet file's rows, each as a JSON object (`file:row N`), read row group by row group as
/// they are asked for.
///
/// A row is held to the input limit by its decoded size, as a line of JSON Lines is by its
/// length: a longer row is a bad entry and the rows after it are read. Before a row group is
/// read, its page headers are (`pages.rs`): a row group with a page that declares more than
/// the limit, or a column chunk past the end of the file, is one bad entry naming its rows,
/// never an allocation of what the file declares.
///
/// The `parquet` crate panics on some malformed files (the fuzz tier found one in its footer
/// decoding); a panic is caught and reported as the file's error, or the row's, like any
/// other, and the rows after a row that cannot be read are not read (the reader does not move
/// past it).
#[cfg(feature = "parquet")]
pub(crate) fn parquet_rows(
    file: std::fs::File,
    path: &std::path::Path,
) -> Result<Rows, crate::TraceError> {
    use parquet::file::reader::SerializedFileReader;
    use parquet::file::serialized_reader::ReadOptionsBuilder;
    use std::cell::RefCell;
    use std::rc::Rc;
    let shown = path.display().to_string();
    let fail = |why: String| crate::TraceError::Parquet {
        path: shown.clone(),
        why,
    };
    let limit = toolcall_score::max_input_bytes();
    let unreadable = |e: std::io::Error| fail(format!("cannot be read: {e}"));
    let file_len = file.metadata().map_err(unreadable)?.len();
    let pages = file.try_clone().map_err(unreadable)?;
    let planned: Rc<RefCell<Vec<Planned>>> = Rc::default();
    let plan = Rc::clone(&planned);
    let options = ReadOptionsBuilder::new()
        .with_predicate(Box::new(move |group, _| {
            let refused = crate::pages::refusal(&pages, file_len, group, limit);
            let keep = refused.is_none();
            let rows = u64::try_from(group.num_rows()).unwrap_or(0);
            plan.borrow_mut().push((rows, refused));
            keep
        }))
        .build();
    let reader = caught(move || SerializedFileReader::new_with_options(file, options))
        .map_err(|panic| fail(format!("not Parquet: its reader failed: {panic}")))?
        .map_err(|e| fail(format!("not Parquet: {e}")))?;
    let mut groups: std::collections::VecDeque<Planned> =
        std::mem::take(&mut *planned.borrow_mut()).into();
    let mut rows = reader.into_iter();
    // The rows of the current row group not read yet; the rows read or passed over.
    let (mut left, mut number, mut failed, mut ended) = (0u64, 0u64, false, false);
    Ok(Box::new(std::iter::from_fn(move || loop {
        if failed {
            return None;
        }
        if left == 0 {
            let (count, refused) = groups.pop_front()?;
            let Some(why) = refused else {
                left = if ended { 0 } else { count };
                continue;
            };
            let first = number + 1;
            number += count;
            let at = if count <= 1 {
                format!("{shown}:row {first}")
            } else {
                format!("{shown}:rows {first}-{number}")
            };
            return Some(Err(Bad {
                at,
                why: format!(
                    "{why}; its row group ({count} row{}) is not read",
                    if count == 1 { "" } else { "s" }
                ),
            }));
        }
        left -= 1;
        number += 1;
        let at = format!("{shown}:row {number}");
        let next = caught(|| {
            rows.next().map(|row| {
                row.map(|row| match row_bytes(&row) {
                    bytes if bytes > limit => Err(bytes),
                    _ => Ok(row.to_json_value()),
                })
            })
        });
        let why = match next {
            Ok(None) => {
                // Fewer rows than the row groups declare: what is left is their refusals.
                (left, ended) = (0, true);
                continue;
            }
            Ok(Some(Ok(Ok(value)))) => return Some(Ok((at, value))),
            Ok(Some(Ok(Err(bytes)))) => {
                return Some(Err(Bad {
                    at,
                    why: format!(
                        "a row of {bytes} bytes, over the input limit of {limit} bytes \
                         (--max-input-bytes or ATP_MAX_INPUT_BYTES raises it)"
                    ),
                }))
            }
            Ok(Some(Err(e))) => format!("an unreadable row: {e}"),
            Err(panic) => format!("the Parquet reader failed on it: {panic}"),
        };
        failed = true;
        return Some(Err(Bad {
            at,
            why: format!("{why}; the rows after it are not read"),
        }));
    })))
}

/// A row group in the file's order: its rows, and why it is not read, when it is not.
#[cfg(feature = "parquet")]
type Planned = (u64, Option<String>);

/// A row's decoded size: its column names, the bytes of its strings and byte arrays, and 8
/// bytes for any other value (walked without recursion: a schema can nest deep).
#[cfg(feature = "parquet")]
fn row_bytes(row: &parquet::record::Row) -> u64 {
    use parquet::record::Field;
    let mut bytes = 0u64;
    let mut fields: Vec<&Field> = Vec::new();
    for (name, field) in row.get_column_iter() {
        bytes += name.len() as u64;
        fields.push(field);
    }
    while let Some(field) = fields.pop() {
        bytes += match field {
            Field::Str(s) => s.len() as u64,
            Field::Bytes(b) => b.len() as u64,
            Field::Group(row) => {
                for (name, field) in row.get_column_iter() {
                    bytes += name.len() as u64;
                    fields.push(field);
                }
                0
            }
            Field::ListInternal(list) => {
                fields.extend(list.elements());
                0
            }
            Field::MapInternal(map) => {
                for (key, value) in map.entries() {
                    fields.push(key);
                    fields.push(value);
                }
                0
            }
            _ => 8,
        };
    }
    bytes
}

std::thread_local! {
    /// Set while this thread is inside a Parquet read whose panics are caught.
    static IN_CAUGHT_READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is inside a Parquet read whose panic is caught and reported as the
/// file's (or a row's) error: a binary's panic hook can then stay quiet rather than print, as
/// a crash, a panic that is not one.
pub fn in_caught_parquet_read() -> bool {
    IN_CAUGHT_READ.with(std::cell::Cell::get)
}

/// `read`, its panic caught (and this thread marked as in a caught read while it runs).
#[cfg(feature = "parquet")]
fn caught<T>(read: impl FnOnce() -> T) -> Result<T, String> {
    IN_CAUGHT_READ.with(|flag| flag.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read));
    IN_CAUGHT_READ.with(|flag| flag.set(false));
    result.map_err(|panic| panic_text(&*panic))
}

/// What a caught panic said.
#[cfg(feature = "parquet")]
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// A Parquet file of rows written as Langfuse's blob export writes its own: one required UTF-8
/// column per name, Snappy-compressed, a row group per [`RowsWriter::group`]. It exists for
/// the tests and benches of the reader (a few thousand rows, or many more a group at a time:
/// the rows are never held whole, the file's compressed bytes are, until [`RowsWriter::close`]
/// writes them atomically). A value that is not a string is written as its JSON text.
#[cfg(feature = "parquet")]
pub struct RowsWriter {
    writer: parquet::file::writer::SerializedFileWriter<Vec<u8>>,
    columns: Vec<String>,
    path: std::path::PathBuf,
}

#[cfg(feature = "parquet")]
impl RowsWriter {
    /// The columns of Langfuse's blob export that the reader looks at, in its snake_case.
    pub const LANGFUSE_COLUMNS: [&'static str; 8] = [
        "id",
        "trace_id",
        "type",
        "name",
        "start_time",
        "input",
        "output",
        "metadata",
    ];

    /// A file to be written at `path` with these columns.
    pub fn create(
        path: &std::path::Path,
        columns: &[&str],
    ) -> Result<RowsWriter, parquet::errors::ParquetError> {
        use parquet::file::properties::WriterProperties;
        use std::sync::Arc;
        let fields: String = columns
            .iter()
            .map(|k| format!("REQUIRED BYTE_ARRAY {k} (UTF8);"))
            .collect();
        let schema = Arc::new(parquet::schema::parser::parse_message_type(&format!(
            "message rows {{ {fields} }}"
        ))?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build(),
        );
        Ok(RowsWriter {
            writer: parquet::file::writer::SerializedFileWriter::new(Vec::new(), schema, props)?,
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            path: path.to_path_buf(),
        })
    }

    /// Adds `rows` as one row group.
    pub fn group(&mut self, rows: &[Value]) -> Result<(), parquet::errors::ParquetError> {
        use parquet::data_type::{ByteArray, ByteArrayType};
        let mut group = self.writer.next_row_group()?;
        for key in &self.columns {
            let values: Vec<ByteArray> = rows
                .iter()
                .map(|row| match &row[key.as_str()] {
                    Value::String(s) => ByteArray::from(s.as_str()),
                    Value::Null => ByteArray::from(""),
                    other => ByteArray::from(other.to_string().as_str()),
                })
                .collect();
            let Some(mut column) = group.next_column()? else {
                break;
            };
            column
                .typed::<ByteArrayType>()
                .write_batch(&values, None, None)?;
            column.close()?;
        }
        group.close()?;
        Ok(())
    }

    /// Writes the file (atomically, as every file this workspace writes).
    pub fn close(self) -> Result<(), parquet::errors::ParquetError> {
        let bytes = self.writer.into_inner()?;
        toolcall_fs::write_atomic(&self.path, &bytes)?;
        Ok(())
    }
}

/// Without the `parquet` feature, a Parquet file is refused saying how to read it.
#[cfg(not(feature = "parquet"))]
pub(crate) fn parquet_rows(
    _file: std::fs::File,
    path: &std::path::Path,
) -> Result<Rows, crate::TraceError> {
    Err(crate::TraceError::Parquet {
        path: path.display().to_string(),
        why: "a Parquet file, and this build has no Parquet reader: install a release binary, \
              or build with `--features parquet` (cargo install toolcall-cli --features parquet)"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    /// A mutant of a Parquet export that the fuzz tier found makes the `parquet` crate panic
    /// while it decodes the file's metadata: the panic is the file's error, never a crash.
    /// (The file is the fuzz tier's mutant of its own Parquet seed, which it writes from
    /// `langfuse/handwritten_blob_export_rows.jsonl`.)
    #[cfg(feature = "parquet")]
    #[test]
    fn a_parquet_file_the_reader_panics_on_is_an_error() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fuzz-garbled-footer.parquet");
        match super::parquet_rows(std::fs::File::open(&path).unwrap(), &path) {
            Err(e) => assert!(e.to_string().contains("not Parquet"), "{e}"),
            Ok(rows) => {
                let rows: Vec<_> = rows.collect();
                assert!(rows.iter().any(Result::is_err), "a bad row is named");
            }
        }
    }

    /// Built without the `parquet` feature (scripts/test's "traces without Parquet" tier), a
    /// Parquet file is refused with the way to a reader; with it, the file is read.
    #[test]
    fn a_parquet_file_is_read_or_refused_saying_how_to_read_it() {
        let path = std::env::temp_dir().join(format!("atp-not-{}.parquet", std::process::id()));
        std::fs::write(&path, b"PAR1 and nothing a reader could use").unwrap();
        assert!(super::is_parquet(&path));
        let error = super::parquet_rows(std::fs::File::open(&path).unwrap(), &path)
            .err()
            .expect("refused")
            .to_string();
        let _ = std::fs::remove_file(&path);
        if cfg!(feature = "parquet") {
            assert!(error.contains("not Parquet"), "{error}");
        } else {
            assert!(error.contains("build with `--features parquet`"), "{error}");
        }
    }
}
