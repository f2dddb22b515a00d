//! The JSON report written as it is drawn, never held whole: over 100,000 cases the run as one
//! `serde_json::Value` and its string took 1.7 GB. The bytes are the ones
//! `to_json_pretty(&whole_value)` writes (keys sorted, as a `Value` sorts them, two-space
//! indentation): a small shell of the run (its big collections left empty) is walked by hand in
//! its own key order, and in the places a [`Hole`] names, the collection is written one element
//! at a time, each element turned into a `Value` (which sorts its keys, as the whole value did)
//! and pretty-printed at its depth.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

/// A step of the path from the top of the JSON to a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// An object's key.
    Key(&'a str),
    /// An array's index.
    Index(usize),
}

/// What a hole is filled with: the elements of an array or the entries of an object, written
/// one at a time.
pub trait Hole {
    /// Writes the collection whose place is `path`, if this hole has one there (`None`
    /// otherwise: the shell's own value is written).
    fn fill(&mut self, path: &[Step<'_>], out: &mut Pretty<'_>) -> Option<io::Result<()>>;
}

/// A writer of pretty-printed JSON at a depth.
pub struct Pretty<'w> {
    out: &'w mut dyn Write,
    depth: usize,
}

impl Pretty<'_> {
    /// Writes an array of `items` at the current depth, each element serialized on its own.
    pub fn array<T: Serialize>(&mut self, items: impl IntoIterator<Item = T>) -> io::Result<()> {
        self.collection(b'[', b']', items.into_iter().map(|item| (None, item)))
    }

    /// Writes an object of `entries` (already in sorted key order) at the current depth.
    pub fn object<'k, T: Serialize>(
        &mut self,
        entries: impl IntoIterator<Item = (&'k str, T)>,
    ) -> io::Result<()> {
        self.collection(
            b'{',
            b'}',
            entries.into_iter().map(|(key, value)| (Some(key), value)),
        )
    }

    fn collection<'k, T: Serialize>(
        &mut self,
        open: u8,
        close: u8,
        items: impl Iterator<Item = (Option<&'k str>, T)>,
    ) -> io::Result<()> {
        self.out.write_all(&[open])?;
        let mut empty = true;
        for (key, item) in items {
            self.separator(empty, key)?;
            empty = false;
            let value = serde_json::to_value(item).map_err(io::Error::other)?;
            self.depth += 1;
            self.scalar(&value)?;
            self.depth -= 1;
        }
        self.end(empty, close)
    }

    fn separator(&mut self, first: bool, key: Option<&str>) -> io::Result<()> {
        self.out.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(self.depth + 1)?;
        if let Some(key) = key {
            self.out.write_all(json(key)?.as_bytes())?;
            self.out.write_all(b": ")?;
        }
        Ok(())
    }

    fn end(&mut self, empty: bool, close: u8) -> io::Result<()> {
        if !empty {
            self.out.write_all(b"\n")?;
            self.indent(self.depth)?;
        }
        self.out.write_all(&[close])
    }

    fn indent(&mut self, depth: usize) -> io::Result<()> {
        for _ in 0..depth {
            self.out.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Writes `value` whole at the current depth: its lines after the first indented to it (a
    /// newline in serde_json's output is always its own, a string's is escaped).
    fn scalar(&mut self, value: &Value) -> io::Result<()> {
        let text = json(value)?;
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
                self.indent(self.depth)?;
            }
            self.out.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// Walks `shell`, writing the holes' collections in their places.
    fn walk<'s>(
        &mut self,
        shell: &'s Value,
        path: &[Step<'s>],
        hole: &mut dyn Hole,
    ) -> io::Result<()> {
        if let Some(done) = hole.fill(path, self) {
            return done;
        }
        match shell {
            Value::Object(map) if !map.is_empty() => {
                self.out.write_all(b"{")?;
                for (i, (key, value)) in map.iter().enumerate() {
                    self.separator(i == 0, Some(key))?;
                    self.depth += 1;
                    let inner = [path, &[Step::Key(key)]].concat();
                    self.walk(value, &inner, hole)?;
                    self.depth -= 1;
                }
                self.end(false, b'}')
            }
            Value::Array(items) if !items.is_empty() => {
                self.out.write_all(b"[")?;
                for (i, value) in items.iter().enumerate() {
                    self.separator(i == 0, None)?;
                    self.depth += 1;
                    let inner = [path, &[Step::Index(i)]].concat();
                    self.walk(value, &inner, hole)?;
                    self.depth -= 1;
                }
                self.end(false, b']')
            }
            other => self.scalar(other),
        }
    }
}

/// Writes `shell` pretty-printed to `out`, with a final newline, the holes' collections in their
/// places: byte for byte what the whole value would have been.
pub fn write(out: &mut dyn Write, shell: &Value, hole: &mut dyn Hole) -> io::Result<()> {
    let mut pretty = Pretty { out, depth: 0 };
    pretty.walk(shell, &[], hole)?;
    pretty.out.write_all(b"\n")
}

fn json<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    toolcall_score::to_json_pretty(value).map_err(io::Error::other)
}
