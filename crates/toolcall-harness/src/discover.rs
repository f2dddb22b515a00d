//! Finding the suite on disk: the case files, the agents and their recorded responses, and the
//! baseline files, without reading any of them.
//!
//! A case id is the case file's path under the case tree without `.json`, joined with `/` on
//! every OS, so ids, test names and baseline keys are the same on Linux, macOS and Windows.
//!
//! Hidden entries (a leading `.`) are skipped, as every tool skips them. A hidden *directory* is
//! also noted ([`Suite::skipped`]): under `recorded/` it is an agent that never runs (an import
//! of a model named `.x` once made one), and nothing should vanish from a CI gate without a word.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};
use toolcall_score::escape_path;

use toolcall_score::Recording;

use crate::Config;

/// What is on disk.
#[derive(Debug, Default)]
pub(crate) struct Suite {
    /// Case id → case file.
    pub cases: BTreeMap<String, PathBuf>,
    /// Agent name → its recordings.
    pub agents: BTreeMap<String, AgentFiles>,
    /// Agents that have a baseline file.
    pub baselines: BTreeSet<String>,
    /// Things found that make the tree unusable in part (unreadable directories, odd names).
    pub problems: Vec<String>,
    /// Hidden directories that were skipped, one sentence each (not a failure).
    pub skipped: Vec<String>,
}

/// One agent's recorded responses.
#[derive(Debug, Default)]
pub(crate) struct AgentFiles {
    /// Case id → recorded response file (see [`Recording`]: `.json`, `.jsonl` for several
    /// samples, `.sse` or `.ndjson` for a recorded stream).
    pub recordings: BTreeMap<String, PathBuf>,
    /// Problems specific to this agent's directory (a case recorded under two names).
    pub problems: Vec<String>,
}

impl Suite {
    /// Walks the case tree, the recorded tree and the baseline directory.
    pub fn discover(config: &Config) -> Suite {
        let mut suite = Suite::default();
        let mut found = Found {
            problems: &mut suite.problems,
            skipped: &mut suite.skipped,
        };
        for (id, path) in walk(&config.cases, &["json"], &mut found) {
            suite.cases.insert(id, path);
        }
        for (name, dir) in subdirectories(&config.recorded, &mut found) {
            let mut files = AgentFiles::default();
            let mut found = Found {
                problems: &mut files.problems,
                skipped: &mut suite.skipped,
            };
            for (id, path) in walk(&dir, &Recording::EXTENSIONS, &mut found) {
                if let Some(first) = files.recordings.get(&id) {
                    files.problems.push(format!(
                        "case `{}` is recorded twice, as {} and {}: keep one",
                        toolcall_score::escape(&id),
                        escape_path(first),
                        escape_path(&path)
                    ));
                    continue;
                }
                files.recordings.insert(id, path);
            }
            suite.agents.insert(name, files);
        }
        if let Ok(entries) = fs::read_dir(&config.baselines) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_file() && path.extension().is_some_and(|e| e == "json") {
                    if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                        suite.baselines.insert(stem.to_owned());
                    }
                }
            }
        }
        suite
    }

    /// Every agent: those with recordings and those with only a baseline file.
    pub fn agent_names(&self) -> BTreeSet<&str> {
        self.agents
            .keys()
            .map(String::as_str)
            .chain(self.baselines.iter().map(String::as_str))
            .collect()
    }
}

/// The case file and recording of one test, found without walking anything: how `--exact`
/// (nextest's one-process-per-test mode) stays fast on a big tree. `None` when the id is not a
/// plain relative path or either file is missing or ambiguous; the caller then walks.
pub(crate) fn locate_one(config: &Config, agent: &str, id: &str) -> Option<(PathBuf, PathBuf)> {
    let relative = Path::new(id);
    let plain = !id.is_empty()
        && !id.contains('\\')
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !plain || agent.is_empty() || agent.contains(['/', '\\']) || agent.starts_with('.') {
        return None;
    }
    let case = config.cases.join(format!("{id}.json"));
    let dir = config.recorded.join(agent);
    let mut recordings = Recording::files(&dir, id);
    let recording = recordings.next()?;
    if recordings.next().is_some() {
        return None; // recorded twice: the walk reports it
    }
    case.is_file().then_some((case, recording))
}

/// Where a walk notes what it could not use.
struct Found<'a> {
    problems: &'a mut Vec<String>,
    skipped: &'a mut Vec<String>,
}

impl Found<'_> {
    fn hidden_directory(&mut self, path: &Path, what: &str) {
        self.skipped.push(format!(
            "skipped {}: its name starts with `.`, so it is hidden and {what}",
            toolcall_score::escape_path(path)
        ));
    }
}

/// The entries of `dir`; each one that cannot be read is noted in `problems` and left out. A
/// missing `dir` is a problem too, unless `missing_ok`.
fn entries(dir: &Path, missing_ok: bool, problems: &mut Vec<String>) -> Vec<fs::DirEntry> {
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            problems.push(format!("{}: cannot read directory: {e}", escape_path(dir)));
            return Vec::new();
        }
    };
    read.filter_map(|entry| {
        entry
            .map_err(|e| problems.push(format!("{}: cannot read directory: {e}", escape_path(dir))))
            .ok()
    })
    .collect()
}

/// The directories directly under `dir`, by name. A missing `dir` is no directories.
fn subdirectories(dir: &Path, notes: &mut Found<'_>) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for entry in entries(dir, true, notes.problems) {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        match entry.file_name().to_str() {
            Some(name) if name.starts_with('.') => {
                notes.hidden_directory(&path, "no agent (rename it to run its recordings)");
            }
            Some(name) => found.push((name.to_owned(), path)),
            None => notes.problems.push(format!(
                "{}: the name is not UTF-8, so it cannot be a test name",
                escape_path(&path)
            )),
        }
    }
    found.sort();
    found
}

/// Every file below `root` whose extension is one of `extensions`, as (id, path), sorted by id.
/// Hidden files and directories (a leading `.`) are skipped; a hidden directory is noted in
/// `notes.skipped`. A missing `root` is no files. The walk never follows a link out of `root`
/// or round a loop, and reads only regular files ([`toolcall_fs::walk`]); what it leaves out
/// that would have been a case or a recording is a problem, named.
fn walk(root: &Path, extensions: &[&str], notes: &mut Found<'_>) -> Vec<(String, PathBuf)> {
    let wanted = |path: &Path| {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e))
            && path.file_stem().is_some_and(|stem| !stem.is_empty())
    };
    let hidden_dirs = std::cell::RefCell::new(Vec::new());
    let hidden = |path: &Path| {
        let hidden = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if hidden && path.is_dir() {
            hidden_dirs.borrow_mut().push(path.to_path_buf());
        }
        hidden
    };
    let walk = toolcall_fs::walk(root, &hidden, &wanted);
    for dir in hidden_dirs.into_inner() {
        notes.hidden_directory(&dir, "none of its files is read");
    }
    let problems = &mut *notes.problems;
    let walk = match walk {
        Ok(walk) => walk,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            problems.push(format!("{}: cannot read directory: {e}", escape_path(root)));
            return Vec::new();
        }
    };
    for skipped in &walk.skipped {
        problems.push(format!("{}: {}", escape_path(&skipped.path), skipped.why));
    }
    // A link that leads nowhere under a name no case or recording has: it may have been a
    // folder of them, so it is said (a note, not a failure: it holds nothing to run).
    for link in &walk.unresolved {
        notes.skipped.push(format!(
            "skipped {}: a link that leads nowhere ({}); if it was a folder, none of its files is read",
            escape_path(&link.path),
            match &link.why {
                toolcall_fs::SkipReason::Unreadable(e) => e.to_string(),
                other => other.to_string(),
            }
        ));
    }
    let mut found = Vec::new();
    for path in walk.files {
        let id = path.strip_prefix(root).ok().and_then(|relative| {
            let relative = relative.with_extension("");
            let parts: Option<Vec<&str>> = relative
                .components()
                .map(|c| c.as_os_str().to_str())
                .collect();
            parts.map(|parts| parts.join("/"))
        });
        match id {
            Some(id) => found.push((id, path)),
            None => problems.push(format!(
                "{}: the name is not UTF-8, so it cannot be part of a case id",
                escape_path(&path)
            )),
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_use_forward_slashes_and_skip_hidden_and_other_files() {
        let root = std::env::temp_dir().join(format!("toolcall-discover-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for file in [
            "a/b/c.json",
            "top.json",
            "a/notes.md",
            ".hidden/x.json",
            "a/.y.json",
        ] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "{}").unwrap();
        }
        let (mut problems, mut skipped) = (Vec::new(), Vec::new());
        let mut notes = Found {
            problems: &mut problems,
            skipped: &mut skipped,
        };
        let ids: Vec<String> = walk(&root, &["json"], &mut notes)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, ["a/b/c", "top"]);
        assert!(problems.is_empty(), "{problems:?}");
        // The hidden directory is said; the hidden file is not (`.gitkeep` is routine).
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].contains(".hidden"), "{skipped:?}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_missing_tree_is_empty_not_an_error() {
        let (mut problems, mut skipped) = (Vec::new(), Vec::new());
        let mut notes = Found {
            problems: &mut problems,
            skipped: &mut skipped,
        };
        assert!(walk(Path::new("/nonexistent/toolcall"), &["json"], &mut notes).is_empty());
        assert!(problems.is_empty());
    }

    #[test]
    fn locate_one_rejects_paths_that_escape_the_tree() {
        let config = Config::default();
        assert_eq!(locate_one(&config, "agent", "../etc/passwd"), None);
        assert_eq!(locate_one(&config, "agent", "/abs"), None);
        assert_eq!(locate_one(&config, "../x", "case"), None);
        assert_eq!(locate_one(&config, "agent", ""), None);
    }
}
