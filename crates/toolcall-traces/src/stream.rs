//! Reading a long trace file with flat memory.
//!
//! A night's export (JSON Lines of spans or of rows, a Parquet file of rows) is far larger than
//! any one trace in it, and no trace's turns need another trace's records. So such a file is
//! read record by record, and its records are held in **groups**: spans by their trace id, a
//! source's records as its [`Groups`] says. A group is handed to its source, and dropped, when
//! the records held pass [`BUDGET_BYTES`] (the group appended to least recently goes first) or
//! when the file ends. What a long file costs in memory is then the budget, not its length.
//!
//! The file's source is told from its first records ([`PREFIX_RECORDS`], [`PREFIX_BYTES`]), so
//! that telling it does not read the whole file first. When no source claims spans among them
//! (a service's export, its model spans few among its HTTP spans), the rest is looked through
//! for one that claims a later record, and the file is read again as that source. Spans of
//! another convention further on make the file ambiguous, as reading it whole finds it, once
//! the reading reaches them (unless `--from` named the source).
//!
//! A group whose records come again after it was read (its trace's records lay more than the
//! budget apart in the file) is read again as a new group, and counted in [`Found::split`]:
//! what needs records of both parts is lost (a call recorded in both is not folded; an
//! execution span is not joined to a content-less model turn in the other part). Its calls
//! are all still counted. One JSON document (OTLP, Jaeger, a trace
//! export) is read whole, within the input limit, by [`crate::read_document_each`]: an OTLP
//! document a span at a time, its turns handed on a trace at a time.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use crate::sources::{Groups, Reads, Source};
use crate::spans::{self, Span};
use crate::{Bad, Found, Records, TraceError};

/// About how many bytes of records are held in groups before the oldest is read.
pub(crate) const BUDGET_BYTES: usize = 16 << 20;

/// The most records a source is told from.
pub(crate) const PREFIX_RECORDS: usize = 1_000;

/// The most bytes of records a source is told from.
pub(crate) const PREFIX_BYTES: usize = 8 << 20;

/// One record of a file read record by record: a line's value, or a Parquet row's.
type Record = (String, Value);

/// Where a file's records come from.
enum Input {
    /// A JSON Lines file, from its first lines on.
    Lines(LineReader<BufReader<std::fs::File>>),
    /// A Parquet file's rows.
    Rows(crate::records::Rows),
}

impl Input {
    /// The next record, or a record that cannot be read.
    fn next(&mut self) -> Option<Result<Record, Bad>> {
        match self {
            Input::Lines(lines) => lines.next_record(),
            Input::Rows(rows) => rows.next(),
        }
    }
}

/// Reads `path` group by group, handing `each` what every group found; with `each` `None`,
/// only tells the file's source. `budget` is [`BUDGET_BYTES`] but in tests.
pub(crate) fn read_path_grouped(
    path: &Path,
    from: Option<&'static Source>,
    budget: usize,
    each: Option<&mut dyn FnMut(Found)>,
) -> Result<&'static Source, TraceError> {
    let file = std::fs::File::open(path)
        .map_err(|e| TraceError::Input(format!("{}: cannot open: {e}", path.display())))?;
    read_file_grouped(file, path, from, budget, each)
}

/// [`read_path_grouped`] from `file`, opened at `path`: the file is not opened again (a JSON
/// document is read whole from it, rewound), but in the rare read again that [`read_input`]
/// describes.
pub(crate) fn read_file_grouped(
    mut file: std::fs::File,
    path: &Path,
    from: Option<&'static Source>,
    budget: usize,
    each: Option<&mut dyn FnMut(Found)>,
) -> Result<&'static Source, TraceError> {
    let shown = path.display().to_string();
    // What the file is, told by its first bytes, whatever its name says: Parquet, or UTF-16
    // text (refused as every input is, rather than read as lines that are none of them JSON).
    let head = crate::records::head(&mut file)
        .map_err(|e| TraceError::Input(format!("{shown}: cannot be read: {e}")))?;
    if let Some(e) = toolcall_score::utf16_error(Some(path), &head) {
        return Err(TraceError::Input(e.to_string()));
    }
    let input = if head == *crate::records::PARQUET_MAGIC {
        Input::Rows(crate::records::parquet_rows(file, path)?)
    } else {
        match LineReader::probe(file, path)? {
            Ok(lines) => Input::Lines(lines),
            Err(file) => {
                // One document: read whole (only decoded, when only its source is asked).
                let text = toolcall_score::read_text_from(file, path)
                    .map_err(|e| TraceError::Input(e.to_string()))?;
                let Some(each) = each else {
                    return crate::decode(&text, &shown, from).map(|(source, _)| source);
                };
                return crate::read_document_each(text, &shown, from, each);
            }
        }
    };
    read_input(
        input,
        path,
        &shown,
        Told {
            source: from,
            named: from.is_some(),
            found: false,
            keep_all: false,
        },
        budget,
        each,
    )
}

/// What is known of a file before its records are read.
#[derive(Clone, Copy)]
struct Told {
    /// The source it is read as, when known.
    source: Option<&'static Source>,
    /// The source was named with `--from`: it must claim the file, and no other is asked.
    named: bool,
    /// The source was found claiming a record past the first ones: the file is read again as
    /// it, whatever its first records say.
    found: bool,
    /// Read again: other signals' records at its start are its records (it is not spans).
    keep_all: bool,
}

/// The records of `input` as spans or as a source's records, told from its first ones.
fn read_input(
    mut input: Input,
    path: &Path,
    shown: &str,
    told: Told,
    budget: usize,
    each: Option<&mut dyn FnMut(Found)>,
) -> Result<&'static Source, TraceError> {
    let from = told.source;
    let parquet = matches!(input, Input::Rows(_));
    // A JSON Lines file read again from its first line, knowing more.
    let read_again = |told: Told, each: Option<&mut dyn FnMut(Found)>| {
        let Some(lines) = LineReader::open(path)? else {
            return Err(TraceError::Input(format!(
                "{shown}: changed while it was read"
            )));
        };
        read_input(Input::Lines(lines), path, shown, told, budget, each)
    };
    let mut prefix: Vec<Result<Record, Bad>> = Vec::new();
    let (mut bytes, mut ended) = (0, false);
    // Other signals' records (metrics, logs) before the first span or record decide nothing
    // and are not kept: a file may begin with thousands of them.
    let mut skipped_other = false;
    while prefix.len() < PREFIX_RECORDS && bytes < PREFIX_BYTES {
        let Some(record) = input.next() else {
            ended = true;
            break;
        };
        if let Ok((_, value)) = &record {
            if !parquet && !told.keep_all && prefix.is_empty() && spans::other_signal(value) {
                skipped_other = true;
                continue;
            }
            bytes += held_bytes(value);
        }
        prefix.push(record);
    }
    // Spans when the first record is a span container (a Parquet file's rows never are).
    // Another signal's records (metrics, logs) may come between spans, and are passed over.
    let first = prefix.iter().find_map(|r| r.as_ref().ok());
    let first_not_other = prefix
        .iter()
        .flatten()
        .find(|(_, value)| !spans::other_signal(value));
    let as_spans = !parquet
        && first_not_other.is_some_and(|(at, value)| spans::container(value, at, &mut Vec::new()));
    if skipped_other && !as_spans {
        // Not spans after all: the records passed over are the source's to judge. Read again,
        // keeping them.
        let told = Told {
            keep_all: true,
            ..told
        };
        return read_again(told, each);
    }
    let source = if as_spans {
        let mut spans = Vec::new();
        for (at, value) in prefix.iter().flatten() {
            spans::container(value, at, &mut spans);
        }
        let claims_prefix = |source: &Source| match &source.reads {
            Reads::Spans { claims, .. } => claims(&spans),
            _ => false,
        };
        match (
            told.found.then_some(from).flatten(),
            crate::pick(shown, from, claims_prefix),
        ) {
            (_, Ok(source)) | (Some(source), Err(_)) => source,
            // The model's spans can be few among a service's others: a source that claims
            // none of the first records may claim a later one. Looked for, then read again.
            (_, Err(TraceError::NotATrace { .. } | TraceError::NotThisSource { .. })) if !ended => {
                match claimed_later(&mut input, from, shown)? {
                    Some(source) => {
                        let told = Told {
                            source: Some(source),
                            found: true,
                            keep_all: true,
                            ..told
                        };
                        return read_again(told, each);
                    }
                    None => crate::pick(shown, from, claims_prefix)?,
                }
            }
            (_, Err(e)) => return Err(e),
        }
    } else {
        let picked = crate::pick(shown, from, |source| match &source.reads {
            Reads::Records { claims, .. } => first.is_some_and(|(_, value)| claims(value)),
            _ => false,
        });
        match picked {
            // A Parquet file no source claims because its rows cannot be read: the reason is
            // the Parquet reader's, not that it is no trace.
            Err(TraceError::NotATrace { .. }) if parquet && first.is_none() => {
                if let Some(Err(bad)) = prefix.first() {
                    let at = bad.at.strip_prefix(&format!("{shown}:")).unwrap_or(&bad.at);
                    return Err(TraceError::Parquet {
                        path: shown.to_owned(),
                        why: format!("{at}: {}", bad.why),
                    });
                }
                picked?
            }
            picked => picked?,
        }
    };
    let Some(each) = each else {
        return Ok(source);
    };
    let mut records = prefix
        .into_iter()
        .chain(std::iter::from_fn(|| input.next()));
    match &source.reads {
        Reads::Spans { turns, .. } => {
            let mut held = Held::new(budget, |spans: Vec<Span>, found: &mut Found| {
                turns(&spans, found)
            });
            let mut also_claiming: Vec<&'static Source> = Vec::new();
            for record in records.by_ref() {
                let (at, value) = match record {
                    Ok(record) => record,
                    Err(bad) => {
                        each(bad_only(bad));
                        continue;
                    }
                };
                let mut spans = Vec::new();
                if spans::other_signal(&value) {
                    continue;
                }
                if !spans::container(&value, &at, &mut spans) {
                    each(bad_only(Bad {
                        at,
                        why: "expected a span, or spans in a container (resourceSpans, batches, \
                              a Jaeger trace), as the file's first line is"
                            .into(),
                    }));
                    continue;
                }
                // Not named with `--from`: another convention's spans further on make the file
                // as ambiguous as reading it whole finds it.
                if !told.named {
                    for other in crate::SOURCES.iter().copied() {
                        let claims = match &other.reads {
                            Reads::Spans { claims, .. } => claims(&spans),
                            _ => false,
                        };
                        if claims
                            && !std::ptr::eq(other, source)
                            && !also_claiming.iter().any(|c| std::ptr::eq(*c, other))
                        {
                            also_claiming.push(other);
                        }
                    }
                }
                for span in spans {
                    let size = span_bytes(&span);
                    let key = Key::Named(span.trace_id.clone());
                    held.add(key, span, size, each);
                }
            }
            held.finish(each);
            if !also_claiming.is_empty() {
                return Err(TraceError::Ambiguous {
                    path: shown.to_owned(),
                    candidates: std::iter::once(source)
                        .chain(also_claiming)
                        .map(|s| s.name)
                        .collect(),
                });
            }
        }
        Reads::Records { turns, groups, .. } => {
            let mut held = Held::new(budget, |values: Vec<Record>, found: &mut Found| {
                let records = Records {
                    values,
                    bad: Vec::new(),
                    lines: true,
                };
                turns(&records, found)
            });
            for record in records {
                let (at, value) = match record {
                    Ok(record) => record,
                    Err(bad) => {
                        each(bad_only(bad));
                        continue;
                    }
                };
                let key_of = match groups {
                    Groups::File => {
                        let size = held_bytes(&value);
                        held.add(Key::File, (at, value), size, each);
                        continue;
                    }
                    Groups::Record => {
                        held.add(Key::Alone, (at, value), 0, each);
                        continue;
                    }
                    Groups::Key(key_of) => key_of,
                };
                // A list of rows, each with a key: each row with its own.
                let items = match value {
                    Value::Array(items) if items.iter().all(|i| key_of(i).is_some()) => items,
                    value => vec![value],
                };
                for item in items {
                    let key = key_of(&item).map_or(Key::Alone, Key::Named);
                    let size = held_bytes(&item);
                    held.add(key, (at.clone(), item), size, each);
                }
            }
            held.finish(each);
        }
    }
    Ok(source)
}

/// The source (`from`, or any) that claims the spans of one of `input`'s records, looked for
/// in all of them: two sources that claim records are an error naming both, as they are when
/// the first records tell the source.
fn claimed_later(
    input: &mut Input,
    from: Option<&'static Source>,
    shown: &str,
) -> Result<Option<&'static Source>, TraceError> {
    let mut claimed: Vec<&'static Source> = Vec::new();
    while let Some(record) = input.next() {
        let Ok((at, value)) = record else { continue };
        let mut spans = Vec::new();
        if !spans::container(&value, &at, &mut spans) {
            continue;
        }
        for source in crate::SOURCES.iter().copied() {
            let wanted = from.is_none_or(|from| std::ptr::eq(from, source));
            let claims = match &source.reads {
                Reads::Spans { claims, .. } => wanted && claims(&spans),
                _ => false,
            };
            if claims && !claimed.iter().any(|c| std::ptr::eq(*c, source)) {
                claimed.push(source);
            }
        }
        // `--from` names the one source asked for: found, it is read.
        if from.is_some() && !claimed.is_empty() {
            break;
        }
    }
    match claimed.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        many => Err(TraceError::Ambiguous {
            path: shown.to_owned(),
            candidates: many.iter().map(|s| s.name).collect(),
        }),
    }
}

fn bad_only(bad: Bad) -> Found {
    Found {
        bad: vec![bad],
        ..Found::default()
    }
}

/// Which group a record is held in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// The one group of a source read whole: never read before the file ends.
    File,
    /// A record of its own: read at once.
    Alone,
    /// A trace id, or a source's key.
    Named(String),
}

/// One group being held.
struct Group<T> {
    items: Vec<T>,
    bytes: usize,
    /// When it was first seen, for the order groups are read in at the end.
    first: u64,
    /// When it was last appended to, for which group goes first.
    touched: u64,
}

/// The groups held, read by `read` (a source's turns) when the budget is passed or the file
/// ends.
struct Held<T, F> {
    groups: HashMap<Key, Group<T>>,
    /// The groups by when they were last appended to.
    by_touch: BTreeMap<u64, Key>,
    /// The hashes of the groups already read, to count one that comes again.
    read_keys: HashSet<u64>,
    split: usize,
    bytes: usize,
    budget: usize,
    clock: u64,
    read: F,
}

impl<T, F: FnMut(Vec<T>, &mut Found)> Held<T, F> {
    fn new(budget: usize, read: F) -> Held<T, F> {
        Held {
            groups: HashMap::new(),
            by_touch: BTreeMap::new(),
            read_keys: HashSet::new(),
            split: 0,
            bytes: 0,
            budget,
            clock: 0,
            read,
        }
    }

    fn add(&mut self, key: Key, item: T, size: usize, each: &mut dyn FnMut(Found)) {
        if key == Key::Alone {
            self.read_group(vec![item], each);
            return;
        }
        self.clock += 1;
        let clock = self.clock;
        match self.groups.get_mut(&key) {
            Some(group) => {
                self.by_touch.remove(&group.touched);
                group.items.push(item);
                group.bytes += size;
                group.touched = clock;
            }
            None => {
                if self.read_keys.contains(&hash(&key)) {
                    self.split += 1;
                }
                self.groups.insert(
                    key.clone(),
                    Group {
                        items: vec![item],
                        bytes: size,
                        first: clock,
                        touched: clock,
                    },
                );
            }
        }
        if key != Key::File {
            self.by_touch.insert(clock, key);
        }
        self.bytes += size;
        while self.bytes > self.budget {
            let Some((_, oldest)) = self.by_touch.pop_first() else {
                break;
            };
            self.read_key(&oldest, each);
        }
    }

    fn read_key(&mut self, key: &Key, each: &mut dyn FnMut(Found)) {
        if let Some(group) = self.groups.remove(key) {
            self.bytes -= group.bytes;
            self.read_keys.insert(hash(key));
            self.read_group(group.items, each);
        }
    }

    fn read_group(&mut self, items: Vec<T>, each: &mut dyn FnMut(Found)) {
        let mut found = Found::default();
        (self.read)(items, &mut found);
        each(found);
    }

    /// Reads the groups still held, in the order they were first seen.
    fn finish(mut self, each: &mut dyn FnMut(Found)) {
        let mut left: Vec<(u64, Key)> = self
            .groups
            .iter()
            .map(|(key, group)| (group.first, key.clone()))
            .collect();
        left.sort_by_key(|(first, _)| *first);
        for (_, key) in left {
            self.read_key(&key, each);
        }
        if self.split > 0 {
            each(Found {
                split: self.split,
                ..Found::default()
            });
        }
    }
}

fn hash(key: &Key) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// About what `value` takes in memory: its strings and numbers, and a word for each value.
fn held_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => 24 + s.len(),
        Value::Array(items) => 24 + items.iter().map(held_bytes).sum::<usize>(),
        Value::Object(map) => {
            24 + map
                .iter()
                .map(|(k, v)| 24 + k.len() + held_bytes(v))
                .sum::<usize>()
        }
        _ => 24,
    }
}

fn span_bytes(span: &Span) -> usize {
    let attributes: usize = span
        .attributes
        .iter()
        .map(|(k, v)| 24 + k.len() + held_bytes(v))
        .sum();
    let events: usize = span
        .events
        .iter()
        .map(|e| {
            24 + e.name.len()
                + e.attributes
                    .iter()
                    .map(|(k, v)| 24 + k.len() + held_bytes(v))
                    .sum::<usize>()
        })
        .sum();
    128 + span.at.len() + span.name.len() + attributes + events
}

/// A JSON Lines file's lines, each within the input limit: a longer one is dropped as it is
/// read (a `Bad` entry), not held whole.
struct LineReader<R> {
    input: R,
    path: String,
    /// The number of the last line read.
    number: u64,
    limit: u64,
    buffer: Vec<u8>,
    /// Set when the file could not be read on: no more lines.
    failed: bool,
}

impl LineReader<BufReader<std::fs::File>> {
    /// The file's lines when it is JSON Lines: its first non-blank line is a whole JSON value
    /// and another non-blank line follows. `None` for one document (pretty-printed, or on one
    /// line).
    fn open(path: &Path) -> Result<Option<Self>, TraceError> {
        let file = std::fs::File::open(path)
            .map_err(|e| TraceError::Input(format!("{}: cannot open: {e}", path.display())))?;
        LineReader::probe(file, path).map(Result::ok)
    }

    /// [`LineReader::open`] on `file`, opened at `path` and read from its start.
    /// JSON Lines read from the top, or, when the file holds one document, the file itself
    /// given back at its start, to be read whole.
    fn probe(file: std::fs::File, path: &Path) -> Result<Result<Self, std::fs::File>, TraceError> {
        let shown = path.display().to_string();
        let size = file.metadata().map(|m| m.len());
        let mut probe = LineReader {
            input: BufReader::with_capacity(256 * 1024, file),
            path: shown,
            number: 0,
            limit: toolcall_score::max_input_bytes(),
            buffer: Vec::new(),
            failed: false,
        };
        let within_limit = size.is_ok_and(|len| len <= probe.limit);
        let mut whole_values = 0;
        while whole_values < 2 {
            match probe.next_line() {
                Err(e) => return Err(TraceError::Input(e)),
                Ok(None) => return probe.give_back(),
                Ok(Some(Line::Blank)) => {}
                Ok(Some(Line::Text(text))) if whole_values == 0 => {
                    // A pretty-printed document, unless the file is too long to be one (read
                    // whole, a document must fit the input limit): then JSON Lines whose first
                    // line is bad.
                    if !spans::is_json(text) && within_limit {
                        return probe.give_back();
                    }
                    whole_values += 1;
                }
                Ok(Some(_)) => whole_values += 1,
            }
        }
        // Start again from the top, now that the file is known to be JSON Lines.
        std::io::Seek::rewind(&mut probe.input)
            .map_err(|e| TraceError::Input(format!("{}: cannot be read: {e}", probe.path)))?;
        probe.number = 0;
        Ok(Ok(probe))
    }

    /// The file, rewound: it holds one document, not lines.
    fn give_back(self) -> Result<Result<Self, std::fs::File>, TraceError> {
        let mut file = self.input.into_inner();
        std::io::Seek::rewind(&mut file)
            .map_err(|e| TraceError::Input(format!("{}: cannot be read: {e}", self.path)))?;
        Ok(Err(file))
    }
}

/// One line of a [`LineReader`].
enum Line<'a> {
    Blank,
    Text(&'a str),
    /// Longer than the limit (its length), or not UTF-8 (why).
    Bad(String),
}

impl<R: BufRead> LineReader<R> {
    /// The next line; `Err` when the file cannot be read on.
    fn next_line(&mut self) -> Result<Option<Line<'_>>, String> {
        let failed = |e: std::io::Error| format!("{}: cannot be read: {e}", self.path);
        self.buffer.clear();
        let read = std::io::Read::take(&mut self.input, self.limit.saturating_add(1))
            .read_until(b'\n', &mut self.buffer)
            .map_err(failed)?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        let ended = self.buffer.last() == Some(&b'\n');
        if !ended && self.buffer.len() as u64 > self.limit {
            let mut bytes = self.buffer.len() as u64;
            loop {
                let available = self.input.fill_buf().map_err(failed)?;
                if available.is_empty() {
                    break;
                }
                let (used, end) = match available.iter().position(|&b| b == b'\n') {
                    Some(i) => (i + 1, true),
                    None => (available.len(), false),
                };
                self.input.consume(used);
                bytes += used as u64;
                if end {
                    break;
                }
            }
            return Ok(Some(Line::Bad(format!(
                "a line of {bytes} bytes, over the input limit of {} bytes (--max-input-bytes \
                 or ATP_MAX_INPUT_BYTES raises it)",
                self.limit
            ))));
        }
        let mut line = self.buffer.as_slice();
        if self.number == 1 {
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        match std::str::from_utf8(line) {
            Ok(text) if text.trim().is_empty() => Ok(Some(Line::Blank)),
            Ok(text) => Ok(Some(Line::Text(text.trim_end_matches(['\n', '\r'])))),
            Err(e) => Ok(Some(Line::Bad(format!("not UTF-8: {e}")))),
        }
    }

    /// The next non-blank line as a record; a line that is not JSON as a `Bad` entry.
    fn next_record(&mut self) -> Option<Result<Record, Bad>> {
        loop {
            if self.failed {
                return None;
            }
            let line = match self.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(why) => {
                    // The rest of the file is lost: say where, once, and stop.
                    let at = format!("{}:{}", self.path, self.number + 1);
                    self.failed = true;
                    return Some(Err(Bad { at, why }));
                }
            };
            let parsed = match line {
                Line::Blank => continue,
                Line::Text(text) => {
                    serde_json::from_str::<Value>(text).map_err(|e| format!("not JSON: {e}"))
                }
                Line::Bad(why) => Err(why),
            };
            let at = format!("{}:{}", self.path, self.number);
            return Some(match parsed {
                Ok(value) => Ok((at, value)),
                Err(why) => Err(Bad { at, why }),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::json;

    use super::*;

    /// Every turn, bad entry and count of `found`, in an order that does not depend on the
    /// order groups were read in.
    fn summary(found: &Found) -> (Vec<String>, Vec<String>, usize, usize) {
        let mut turns: Vec<String> = found.turns.iter().map(|t| format!("{t:?}")).collect();
        turns.sort();
        let mut bad: Vec<String> = found.bad.iter().map(|b| format!("{b:?}")).collect();
        bad.sort();
        (turns, bad, found.folded, found.split)
    }

    fn read_grouped(path: &Path, budget: usize) -> (&'static Source, Found) {
        read_as(path, None, budget)
    }

    /// All a file's groups found, read as `from` (or its source).
    fn read_as(
        path: &Path,
        from: Option<&'static Source>,
        budget: usize,
    ) -> (&'static Source, Found) {
        let mut all = Found::default();
        let source = read_path_grouped(path, from, budget, Some(&mut |f| all.append(f)))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        (source, all)
    }

    fn otel() -> Option<&'static Source> {
        crate::source("otel-genai")
    }

    fn scratch(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("atp-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The invariant: a file read group by group finds what reading its text whole finds, on
    /// every fixture, with the real budget and with one so small that every group is read as
    /// soon as another comes.
    #[test]
    fn every_fixture_reads_grouped_as_it_reads_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                if path.is_file()
                    && path
                        .extension()
                        .is_some_and(|e| e == "json" || e == "jsonl")
                {
                    if path.file_name().is_some_and(|n| n == "expected.json") {
                        continue;
                    }
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 40, "{} fixtures", files.len());
        let mut lines_files = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let shown = path.display().to_string();
            let (source, whole) =
                crate::read(&text, &shown, None).unwrap_or_else(|e| panic!("{shown}: {e}"));
            if text.lines().filter(|l| !l.trim().is_empty()).count() > 1
                && serde_json::from_str::<Value>(text.lines().next().unwrap_or("")).is_ok()
            {
                lines_files += 1;
            }
            // A budget that holds one small record: groups are read as soon as another comes.
            for budget in [BUDGET_BYTES, 1] {
                let (grouped_source, grouped) = read_grouped(path, budget);
                assert_eq!(grouped_source.name, source.name, "{shown}");
                let (turns, bad, folded, split) = summary(&grouped);
                let (whole_turns, whole_bad, whole_folded, _) = summary(&whole);
                assert_eq!(bad, whole_bad, "{shown}, budget {budget}");
                if split == 0 {
                    assert_eq!(turns, whole_turns, "{shown}, budget {budget}");
                    assert_eq!(folded, whole_folded, "{shown}, budget {budget}");
                } else {
                    // Read in parts, a trace loses only folding: every call is still there.
                    assert!(budget < BUDGET_BYTES, "{shown}: split at the real budget");
                    let calls = |found: &Found| -> Vec<String> {
                        let mut calls: Vec<String> = found
                            .turns
                            .iter()
                            .flat_map(|t| t.calls())
                            .map(|c| format!("{} {:?}", c.name, c.id))
                            .collect();
                        calls.sort();
                        calls.dedup();
                        calls
                    };
                    assert_eq!(calls(&grouped), calls(&whole), "{shown}, budget {budget}");
                }
            }
        }
        assert!(lines_files >= 5, "only {lines_files} JSON Lines fixtures");
    }

    fn row(trace: usize, kind: &str, n: usize, name: &str) -> Value {
        let call = format!("call_{trace}");
        let (input, output, metadata) = if kind == "GENERATION" {
            (
                json!({"messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"type": "function", "function": {"name": "get_weather",
                                  "parameters": {"type": "object"}}}]})
                .to_string(),
                json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": null, "tool_calls": [
                        {"id": call, "type": "function",
                         "function": {"name": name, "arguments": "{}"}}]}}]})
                .to_string(),
                "{}".to_owned(),
            )
        } else {
            (
                "{}".to_owned(),
                "{}".to_owned(),
                json!({"attributes": {"gen_ai.tool.call.id": call}}).to_string(),
            )
        };
        json!({"id": format!("{kind}-{trace}"), "trace_id": format!("trace-{trace}"),
               "type": kind, "name": name,
               "start_time": format!("2026-11-30 10:00:{n:02}.000000"),
               "input": input, "output": output, "metadata": metadata})
    }

    fn jsonl(rows: &[Value]) -> String {
        rows.iter().map(|r| format!("{r}\n")).collect()
    }

    /// Rows of interleaved traces are grouped by trace: each tool row folds into its own
    /// trace's generation, whatever lies between them, as long as the budget holds them.
    #[test]
    fn interleaved_traces_fold_within_the_budget() {
        let rows = [
            row(1, "GENERATION", 1, "get_weather"),
            row(2, "GENERATION", 2, "get_weather"),
            row(1, "TOOL", 3, "get_weather"),
            row(3, "GENERATION", 4, "get_wether"),
            row(2, "TOOL", 5, "get_weather"),
            row(3, "TOOL", 6, "get_wether"),
        ];
        let path = scratch("interleaved.jsonl", &jsonl(&rows));
        let (source, found) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!(source.name, "langfuse");
        assert_eq!(found.turns.len(), 3);
        assert_eq!(found.folded, 3);
        assert_eq!(found.split, 0);
        let traces: Vec<_> = found.turns.iter().map(|t| t.trace.clone()).collect();
        assert_eq!(
            traces,
            [1, 2, 3].map(|n| Some(format!("trace-{n}"))),
            "groups are read in the order they were first seen"
        );
    }

    /// A trace whose rows lie further apart than the budget is read in two parts: counted as
    /// split, and its tool row, read apart from its generation, is not folded.
    #[test]
    fn a_trace_read_in_parts_is_counted() {
        let rows = [
            row(1, "GENERATION", 1, "get_weather"),
            row(2, "GENERATION", 2, "get_weather"),
            row(1, "TOOL", 3, "get_weather"),
        ];
        let path = scratch("split.jsonl", &jsonl(&rows));
        let (_, found) = read_grouped(&path, 1);
        assert_eq!(found.turns.len(), 2);
        assert_eq!(found.split, 1);
        assert_eq!(found.folded, 0);
        let (_, whole) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!((whole.split, whole.folded), (0, 1));
    }

    /// A line that is not JSON is a bad entry with its line number; the lines around it count.
    #[test]
    fn a_bad_line_is_named_and_the_rest_counts() {
        let text = format!(
            "{}\n{{not json\n\n{}\n",
            row(1, "GENERATION", 1, "get_weather"),
            row(2, "GENERATION", 2, "get_weather")
        );
        let path = scratch("bad-line.jsonl", &text);
        let (_, found) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!(found.turns.len(), 2);
        assert_eq!(found.bad.len(), 1);
        assert_eq!(found.bad[0].at, format!("{}:2", path.display()));
        assert!(
            found.bad[0].why.starts_with("not JSON"),
            "{}",
            found.bad[0].why
        );
    }

    /// A line over the limit is dropped as it is read, named with its length, and the next
    /// line is read from its start.
    #[test]
    fn a_line_over_the_limit_is_dropped_and_the_next_read() {
        let long = format!("{{\"a\": \"{}\"}}", "x".repeat(5_000));
        let text = format!("{{\"n\": 1}}\n{long}\n{{\"n\": 3}}\n");
        let mut lines = LineReader {
            // A small buffer: the long line spans many refills.
            input: BufReader::with_capacity(64, text.as_bytes()),
            path: "log.jsonl".into(),
            number: 0,
            limit: 1_000,
            buffer: Vec::new(),
            failed: false,
        };
        let first = lines.next_record().unwrap().unwrap();
        assert_eq!(first, ("log.jsonl:1".to_owned(), json!({"n": 1})));
        let bad = lines.next_record().unwrap().unwrap_err();
        assert_eq!(bad.at, "log.jsonl:2");
        assert!(
            bad.why
                .contains(&format!("a line of {} bytes", long.len() + 1)),
            "{}",
            bad.why
        );
        assert!(lines.buffer.capacity() < 2_000, "the long line was held");
        let third = lines.next_record().unwrap().unwrap();
        assert_eq!(third, ("log.jsonl:3".to_owned(), json!({"n": 3})));
        assert!(lines.next_record().is_none());
    }

    /// A service's export where the model's spans come only after more than the first records
    /// the source is told from (HTTP spans before them): found further on and read, without
    /// `--from` and with it.
    #[test]
    fn model_spans_after_the_first_records_are_still_found() {
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        let line = |id: usize, attributes: Value| {
            json!({"resourceSpans": [{"scopeSpans": [{"spans": [
                {"traceId": format!("t{id}"), "spanId": format!("s{id}"), "name": "span",
                 "startTimeUnixNano": "1", "attributes": attributes}]}]}]})
        };
        let mut lines: Vec<Value> = (0..PREFIX_RECORDS + 5)
            .map(|i| line(i, json!([attr("http.method", "GET")])))
            .collect();
        lines.push(line(
            99_999,
            json!([
                attr("gen_ai.operation.name", "chat"),
                attr(
                    "gen_ai.tool.definitions",
                    r#"[{"type": "function", "name": "get_weather"}]"#
                ),
                attr(
                    "gen_ai.output.messages",
                    r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1",
                        "name": "get_wether", "arguments": {}}]}]"#
                ),
            ]),
        ));
        let path = scratch("late-model-spans.jsonl", &jsonl(&lines));
        for from in [None, otel()] {
            let (source, all) = read_as(&path, from, BUDGET_BYTES);
            assert_eq!(source.name, "otel-genai");
            assert_eq!(all.turns.len(), 1, "{:?}", all.turns);
            assert_eq!(all.turns[0].calls()[0].name, "get_wether");
            assert!(all.bad.is_empty(), "{:?}", all.bad);
        }
        // A file no record of which a source claims is still not a trace.
        lines.pop();
        let path = scratch("no-model-spans.jsonl", &jsonl(&lines));
        assert!(matches!(
            read_path_grouped(&path, None, BUDGET_BYTES, None),
            Err(TraceError::NotATrace { .. })
        ));
    }

    /// Whole and grouped readings of `text` agree, the turns in any order.
    fn reads_as_whole(name: &str, text: &str) -> Found {
        let path = scratch(name, text);
        let (whole_source, whole) = crate::read(text, &path.display().to_string(), None).unwrap();
        let (source, grouped) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!(source.name, whole_source.name, "{name}");
        assert_eq!(summary(&grouped), summary(&whole), "{name}");
        grouped
    }

    /// Lines that each hold a list of rows of several traces: grouped row by row, so a trace's
    /// rows meet whatever lines they are on; and a numeric trace id is a trace id.
    #[test]
    fn rows_in_lists_and_numeric_trace_ids_group_by_their_trace() {
        let lists = jsonl(&[
            json!([
                row(1, "GENERATION", 1, "get_weather"),
                row(2, "GENERATION", 2, "get_wether")
            ]),
            json!([
                row(2, "TOOL", 3, "get_wether"),
                row(1, "TOOL", 4, "get_weather")
            ]),
        ]);
        let found = reads_as_whole("lists.jsonl", &lists);
        assert_eq!((found.turns.len(), found.folded), (2, 2));
        let mut numeric = [
            row(7, "GENERATION", 1, "get_weather"),
            row(7, "TOOL", 2, "get_weather"),
        ];
        for r in &mut numeric {
            r["trace_id"] = json!(7);
        }
        let found = reads_as_whole("numeric.jsonl", &jsonl(&numeric));
        assert_eq!((found.turns.len(), found.folded), (1, 1));
    }

    fn chat_line(trace: &str, call: &str) -> Value {
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace, "spanId": format!("s-{trace}"), "name": "chat",
         "startTimeUnixNano": "10", "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.tool.definitions", r#"[{"type": "function", "name": "get_weather"}]"#),
            attr("gen_ai.output.messages", &format!(
                r#"[{{"role": "assistant", "parts": [{{"type": "tool_call", "id": "{call}",
                    "name": "get_weather", "arguments": {{}}}}]}}]"#)),
        ]}]}]}]})
    }

    /// More metric records than the first records a source is told from, before any span:
    /// the spans after them are still read, with `--from` and without.
    #[test]
    fn metrics_before_the_first_span_are_passed_over() {
        let mut lines: Vec<Value> = (0..PREFIX_RECORDS + 1)
            .map(|i| json!({"type": "metric", "name": format!("m{i}")}))
            .collect();
        lines.push(chat_line("t1", "c1"));
        lines.push(chat_line("t2", "c2"));
        let text = jsonl(&lines);
        reads_as_whole("metrics-first.jsonl", &text);
        let path = scratch("metrics-first-from.jsonl", &text);
        let (_, all) = read_as(&path, otel(), BUDGET_BYTES);
        assert_eq!(all.turns.len(), 2);
        // Records of a source after the metrics: not spans, so read again keeping the
        // metrics, and told from the first record, as read whole: a metric, no source's.
        let mut rows: Vec<Value> = (0..PREFIX_RECORDS + 1)
            .map(|i| json!({"type": "metric", "name": format!("m{i}")}))
            .collect();
        rows.push(row(1, "GENERATION", 1, "get_weather"));
        let text = jsonl(&rows);
        let path = scratch("metrics-then-rows.jsonl", &text);
        let whole = crate::read(&text, &path.display().to_string(), None);
        assert!(
            matches!(whole, Err(TraceError::NotATrace { .. })),
            "{whole:?}"
        );
        let grouped = read_path_grouped(&path, None, BUDGET_BYTES, None);
        assert!(
            matches!(grouped, Err(TraceError::NotATrace { .. })),
            "{grouped:?}"
        );
    }

    /// Two sources that claim records past the first ones: an error naming both, as reading
    /// the file whole says; `--from` picks one.
    #[test]
    fn two_sources_claiming_later_records_are_ambiguous() {
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        let http = |i: usize| {
            json!({"resourceSpans": [{"scopeSpans": [{"spans": [
                {"traceId": format!("h{i}"), "spanId": format!("h{i}"), "name": "GET",
                 "attributes": [attr("http.method", "GET")]}]}]}]})
        };
        let mut lines: Vec<Value> = (0..PREFIX_RECORDS + 1).map(http).collect();
        lines.push(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "v1", "spanId": "v1", "name": "ai.toolCall",
             "attributes": [attr("ai.toolCall.name", "f")]}]}]}]}));
        lines.push(chat_line("t1", "c1"));
        let text = jsonl(&lines);
        let path = scratch("two-later.jsonl", &text);
        let whole = crate::read(&text, &path.display().to_string(), None);
        assert!(
            matches!(whole, Err(TraceError::Ambiguous { .. })),
            "{whole:?}"
        );
        let grouped = read_path_grouped(&path, None, BUDGET_BYTES, None);
        assert!(
            matches!(&grouped, Err(TraceError::Ambiguous { candidates, .. }) if candidates.len() == 2),
            "{grouped:?}"
        );
        let (_, all) = read_as(&path, otel(), BUDGET_BYTES);
        assert_eq!(all.turns.len(), 1);

        // The first records told one source, and another's spans come later: ambiguous too,
        // as reading the file whole says, once the reading reaches them.
        let mut lines: Vec<Value> = (0..PREFIX_RECORDS + 1)
            .map(|i| chat_line(&format!("t{i}"), &format!("c{i}")))
            .collect();
        lines.push(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "v1", "spanId": "v1", "name": "ai.toolCall",
             "attributes": [attr("ai.toolCall.name", "f")]}]}]}]}));
        let text = jsonl(&lines);
        let path = scratch("second-source-later.jsonl", &text);
        let whole = crate::read(&text, &path.display().to_string(), None);
        assert!(
            matches!(whole, Err(TraceError::Ambiguous { .. })),
            "{whole:?}"
        );
        let grouped = read_path_grouped(&path, None, BUDGET_BYTES, Some(&mut |_| {}));
        assert!(
            matches!(&grouped, Err(TraceError::Ambiguous { candidates, .. })
                if candidates == &["otel-genai", "vercel-ai"]),
            "{grouped:?}"
        );
        let (_, all) = read_as(&path, otel(), BUDGET_BYTES);
        assert_eq!(all.turns.len(), PREFIX_RECORDS + 1);
    }

    /// A Parquet file whose second row group's page header is garbled: the page walk refuses
    /// that row group before the reader sees it, as one bad entry naming its rows, and the rows
    /// of the groups before and after it count. (Before, the reading ended at its first row.)
    #[cfg(feature = "parquet")]
    #[test]
    fn a_parquet_row_group_that_cannot_be_read_is_one_bad_entry_naming_its_rows() {
        use parquet::file::reader::{FileReader, SerializedFileReader};

        let path = scratch("three-groups.parquet", "");
        let mut writer =
            crate::RowsWriter::create(&path, &crate::RowsWriter::LANGFUSE_COLUMNS).unwrap();
        for group in 0..3 {
            let rows: Vec<Value> = (0..50)
                .map(|i| row(group * 100 + i, "GENERATION", 1, "get_weather"))
                .collect();
            writer.group(&rows).unwrap();
        }
        writer.close().unwrap();
        // Garble the second row group's first column chunk.
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let chunk = reader.metadata().row_group(1).column(0);
        let start = chunk.byte_range().0 as usize;
        drop(reader);
        let mut bytes = std::fs::read(&path).unwrap();
        for byte in &mut bytes[start..start + 16] {
            *byte = 0xff;
        }
        std::fs::write(&path, &bytes).unwrap();

        let (source, found) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!(source.name, "langfuse");
        assert_eq!(found.turns.len(), 100, "the first and third groups' rows");
        assert_eq!(found.bad.len(), 1, "{:?}", found.bad);
        assert!(
            found.bad[0].why.contains("column `id`: page 1: its header"),
            "{:?}",
            found.bad
        );
        assert!(found.bad[0].at.ends_with(":rows 51-100"), "{:?}", found.bad);
    }

    /// OTLP documents one a line (the collector's file exporter) are spans: the source is told
    /// from the first lines, and a trace's spans on different lines make one trace's turns.
    #[test]
    fn otlp_lines_group_a_traces_spans_across_lines() {
        let span = |trace: &str, id: &str, name: &str, attributes: Value| {
            json!({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [
                {"traceId": trace, "spanId": id, "name": name, "startTimeUnixNano": "1",
                 "attributes": attributes}]}]}]})
        };
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        let chat = |trace: &str, id: &str| {
            span(
                trace,
                id,
                "chat gpt-4o",
                json!([
                    attr("gen_ai.operation.name", "chat"),
                    attr("gen_ai.request.model", "gpt-4o"),
                    attr(
                        "gen_ai.tool.definitions",
                        r#"[{"type": "function", "name": "get_weather"}]"#
                    ),
                    attr(
                        "gen_ai.output.messages",
                        &format!(
                            r#"[{{"role": "assistant", "parts": [{{"type": "tool_call",
                                "id": "call-{id}", "name": "get_weather", "arguments": {{}}}}]}}]"#
                        )
                    ),
                ]),
            )
        };
        let tool = |trace: &str, id: &str, of: &str| {
            span(
                trace,
                id,
                "execute_tool get_weather",
                json!([
                    attr("gen_ai.operation.name", "execute_tool"),
                    attr("gen_ai.tool.name", "get_weather"),
                    attr("gen_ai.tool.call.id", &format!("call-{of}")),
                ]),
            )
        };
        let lines = [
            chat("t1", "a1"),
            chat("t2", "b1"),
            tool("t1", "a2", "a1"),
            tool("t2", "b2", "b1"),
        ];
        let path = scratch("spans.jsonl", &jsonl(&lines));
        let text = std::fs::read_to_string(&path).unwrap();
        let (whole_source, whole) = crate::read(&text, &path.display().to_string(), None).unwrap();
        let (source, found) = read_grouped(&path, BUDGET_BYTES);
        assert_eq!(source.name, "otel-genai");
        assert_eq!(whole_source.name, "otel-genai");
        assert_eq!(found.turns.len(), 2, "{found:?}");
        assert_eq!(summary(&found), summary(&whole));
        assert_eq!(found.folded, whole.folded);
    }
}
