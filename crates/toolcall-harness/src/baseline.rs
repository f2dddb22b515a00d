//! Baseline files: `baselines/<agent>.json` maps a case id to the fingerprint of its known
//! failure and an optional human note. A top-level `"$schema"` (the file's JSON Schema, for
//! editors: `toolcall schema baseline`) is no case id; it is kept apart and written back first.
//!
//! The file is read strictly (unknown keys are typos, and an error names the file, line and
//! column) and written atomically: the new content goes to a temporary file in the same directory,
//! which is then renamed over the old one, so an interrupted write leaves the old file intact.
//! Keys are sorted and the JSON is pretty-printed with two spaces and a trailing newline, so a
//! rewrite that changes nothing changes no byte.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use toolcall_score::{escape, is_invisible, InputError};

use crate::errors::BaselineError;

/// One known failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The failure's fingerprint: [`toolcall_score::Verdict::fingerprint`], the sorted distinct
    /// offending names with their causes (for a `.jsonl` recording, the union over its samples).
    pub fingerprint: Vec<String>,
    /// Why it is accepted for now, for humans; kept when the baseline is rewritten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The known failures of one agent, by case id (sorted), and the JSON Schema the file names.
///
/// In the file, one object: `"$schema"` (optional, a string) beside the case ids, each mapped to
/// its [`Entry`]. `"$schema"` is never a case id: it is kept apart, and written back first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    /// The file's `"$schema"`, for editors (`toolcall schema baseline`); kept by a rewrite.
    pub schema: Option<String>,
    /// The known failures, by case id.
    pub entries: BTreeMap<String, Entry>,
}

/// The key a baseline file names its JSON Schema under.
pub const SCHEMA_KEY: &str = "$schema";

impl Baseline {
    /// A baseline with no entries and no `"$schema"`.
    pub fn new() -> Baseline {
        Baseline::default()
    }
}

impl Serialize for Baseline {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(
            self.entries.len() + usize::from(self.schema.is_some()),
        ))?;
        if let Some(schema) = &self.schema {
            map.serialize_entry(SCHEMA_KEY, schema)?;
        }
        for (id, entry) in &self.entries {
            map.serialize_entry(id, entry)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Baseline {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Baseline;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of case ids, each with its `fingerprint` (and `note`)")
            }
            // Each value is read where it stands, so an error keeps its line and column.
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Baseline, A::Error> {
                let mut baseline = Baseline::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == SCHEMA_KEY {
                        baseline.schema = Some(map.next_value()?);
                    } else {
                        let entry = map.next_value()?;
                        baseline.entries.insert(key, entry);
                    }
                }
                Ok(baseline)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// Reads a baseline file; a missing file is `None` (no known failures).
pub fn load(path: &Path) -> Result<Option<Baseline>, BaselineError> {
    let text = match toolcall_score::read_text(path) {
        Ok(text) => text,
        Err(InputError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(InputError::Read { source, .. }) => {
            return Err(BaselineError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
        Err(e) => return Err(e.into()),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| BaselineError::Invalid {
            path: path.to_path_buf(),
            line: e.line().max(1),
            column: e.column().max(1),
            message: strip_position(&e.to_string()),
        })
}

/// serde_json ends its messages with " at line L column C", which the error says already.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// A fingerprint entry for a terminal. The core's entries have their names escaped already
/// and are shown as they are (escaping them again would double every backslash, and the two
/// sides of a diff would differ where the entries do not); an entry read from a baseline file
/// holds whatever someone wrote, so one with a raw control or invisible character is escaped.
pub(crate) fn shown(entry: &str) -> std::borrow::Cow<'_, str> {
    if entry.chars().any(is_invisible) {
        escape(entry).to_string().into()
    } else {
        entry.into()
    }
}

/// A fingerprint for a terminal: `name (cause), …`, each entry [`shown`].
pub(crate) fn joined(entries: &[String]) -> String {
    let entries: Vec<_> = entries.iter().map(|e| shown(e)).collect();
    entries.join(", ")
}

/// The stable text of a baseline: `"$schema"` first, then the case ids sorted, two-space
/// indentation, a trailing newline.
pub fn render(baseline: &Baseline) -> String {
    // Serializing a map of plain strings cannot fail.
    let mut text = serde_json::to_string_pretty(baseline).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), BaselineError> {
    write_atomic_via(path, text.as_bytes(), |file, bytes| file.write_all(bytes))
}

/// [`write_atomic`] with the step that fills the temporary file injected, so a test can make it
/// fail midway and check that the old file survives.
fn write_atomic_via(
    path: &Path,
    bytes: &[u8],
    fill: impl FnOnce(&mut fs::File, &[u8]) -> io::Result<()>,
) -> Result<(), BaselineError> {
    let error = |source| BaselineError::Write {
        path: path.to_path_buf(),
        source,
    };
    toolcall_fs::write_atomic_with(path, |file| fill(file, bytes)).map_err(error)
}

/// What a rewrite changes in one baseline file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// New entries: (case id, fingerprint).
    pub added: Vec<(String, Vec<String>)>,
    /// Entries dropped: (case id, old fingerprint).
    pub removed: Vec<(String, Vec<String>)>,
    /// Entries whose fingerprint changed: (case id, old, new).
    pub changed: Vec<(String, Vec<String>, Vec<String>)>,
}

impl Changes {
    /// The differences between `old` and `new` entries.
    pub fn between(old: &Baseline, new: &Baseline) -> Changes {
        let (old, new) = (&old.entries, &new.entries);
        let mut changes = Changes::default();
        for (id, entry) in new {
            match old.get(id) {
                None => changes.added.push((id.clone(), entry.fingerprint.clone())),
                Some(before) if before.fingerprint != entry.fingerprint => changes.changed.push((
                    id.clone(),
                    before.fingerprint.clone(),
                    entry.fingerprint.clone(),
                )),
                Some(_) => {}
            }
        }
        for (id, entry) in old {
            if !new.contains_key(id) {
                changes
                    .removed
                    .push((id.clone(), entry.fingerprint.clone()));
            }
        }
        changes
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// A summary for stderr: one count line, then one line per entry.
    pub fn summary(&self, file: &str) -> String {
        let mut out = format!(
            "{file}: {} added, {} removed, {} changed\n",
            self.added.len(),
            self.removed.len(),
            self.changed.len()
        );
        for (id, fingerprint) in &self.added {
            out.push_str(&format!("  + {}: {}\n", escape(id), joined(fingerprint)));
        }
        for (id, fingerprint) in &self.removed {
            out.push_str(&format!("  - {}: {}\n", escape(id), joined(fingerprint)));
        }
        for (id, old, new) in &self.changed {
            out.push_str(&format!(
                "  ~ {}: {} -> {}\n",
                escape(id),
                joined(old),
                joined(new)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolcall-baseline-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entry(fingerprint: &[&str], note: Option<&str>) -> Entry {
        Entry {
            fingerprint: fingerprint.iter().map(|s| (*s).to_owned()).collect(),
            note: note.map(str::to_owned),
        }
    }

    #[test]
    fn renders_sorted_two_space_json_with_a_trailing_newline() {
        let mut baseline = Baseline::new();
        baseline
            .entries
            .insert("z/last".into(), entry(&["b (invented)"], None));
        baseline
            .entries
            .insert("a/first".into(), entry(&["a (retired)"], Some("known")));
        assert_eq!(
            render(&baseline),
            "{\n  \"a/first\": {\n    \"fingerprint\": [\n      \"a (retired)\"\n    ],\n    \"note\": \"known\"\n  },\n  \"z/last\": {\n    \"fingerprint\": [\n      \"b (invented)\"\n    ]\n  }\n}\n"
        );
        assert_eq!(render(&Baseline::new()), "{}\n");
    }

    /// `"$schema"` is read apart from the entries (it is no case id, and its string is no
    /// entry) and rendered first, so a file that names its schema reads back to the same text.
    #[test]
    fn a_schema_key_is_no_entry_and_is_rendered_first() {
        let dir = scratch("schema");
        let path = dir.join("agent.json");
        let text = "{\n  \"$schema\": \"../schemas/baseline.schema.json\",\n  \"a/b\": {\n    \"fingerprint\": [\n      \"x (invented)\"\n    ]\n  }\n}\n";
        fs::write(&path, text).unwrap();
        let baseline = load(&path).unwrap().expect("a baseline");
        assert_eq!(
            baseline.schema.as_deref(),
            Some("../schemas/baseline.schema.json")
        );
        assert_eq!(baseline.entries.keys().collect::<Vec<_>>(), ["a/b"]);
        assert_eq!(render(&baseline), text);
        fs::write(&path, "{\n  \"$schema\": {\"fingerprint\": []}\n}\n").unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(
            err.contains("agent.json:2:") && err.contains("expected a string"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_file_names_file_line_and_column() {
        let dir = scratch("malformed");
        let path = dir.join("agent.json");
        fs::write(
            &path,
            "{\n  \"case\": {\"fingerprint\": [], \"nots\": \"x\"}\n}\n",
        )
        .unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("agent.json:2:"), "{err}");
        assert!(err.contains("nots"), "{err}");
        assert_eq!(load(&dir.join("absent.json")).unwrap(), None);
    }

    #[test]
    fn a_write_interrupted_midway_leaves_the_old_file_intact() {
        let dir = scratch("interrupted");
        let path = dir.join("agent.json");
        let old = "{\n  \"old\": {\n    \"fingerprint\": []\n  }\n}\n";
        fs::write(&path, old).unwrap();
        let err = write_atomic_via(
            &path,
            b"{\"new\": {\"fingerprint\": []}}\n",
            |file, bytes| {
                file.write_all(&bytes[..bytes.len() / 2])?;
                Err(io::Error::other("disk full"))
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("the old file is unchanged"),
            "{err}"
        );
        assert_eq!(fs::read(&path).unwrap(), old.as_bytes());
        let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(leftovers.len(), 1, "the temporary file is removed");

        write_atomic(&path, "{}\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
    }

    #[test]
    fn changes_list_added_removed_and_changed() {
        let mut old = Baseline::new();
        old.entries
            .insert("kept".into(), entry(&["a (invented)"], Some("n")));
        old.entries
            .insert("gone".into(), entry(&["b (invented)"], None));
        old.entries
            .insert("moved".into(), entry(&["c (invented)"], None));
        let mut new = Baseline::new();
        new.entries
            .insert("kept".into(), entry(&["a (invented)"], Some("n")));
        new.entries
            .insert("moved".into(), entry(&["d (retired)"], None));
        new.entries
            .insert("fresh".into(), entry(&["e (subset)"], None));
        let changes = Changes::between(&old, &new);
        assert_eq!(
            changes.summary("baselines/x.json"),
            "baselines/x.json: 1 added, 1 removed, 1 changed\n  + fresh: e (subset)\n  - gone: b (invented)\n  ~ moved: c (invented) -> d (retired)\n"
        );
        assert!(Changes::between(&new, &new).is_empty());
    }
}
