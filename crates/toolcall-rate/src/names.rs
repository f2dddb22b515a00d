//! The names an import or a promotion gives the files it writes: one safe path component
//! each, and an agent's directory named from `--agent` or the model; and [`Planned`], the plan
//! of every path both check before they write the first file. `import` and `traces` both name
//! and plan files; neither asks the other how.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use toolcall_score::is_invisible;

use crate::RateError;

/// Why `name` cannot be one path component of an import's output, or `None` when it can.
///
/// A safe component is not empty; is not `.` or `..` and does not start with `.` (the harness
/// and `toolcall check` skip hidden files and directories, so such a case would never run);
/// and holds no `/`, `\`, NUL, control character or invisible format character (which would
/// split the path, leave the output tree, or hide the name on a terminal).
pub fn safe_component(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." {
        Some("it would leave its directory")
    } else if name.starts_with('.') {
        Some("it starts with `.`, and a hidden file or directory is never run by check")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.chars().any(is_invisible) {
        Some("it holds a control or invisible character")
    } else {
        None
    }
}

/// The path component a file written for the record `id` is named by: `id` itself when it is a
/// [`safe_component`], else `id` with what a component cannot hold written as `%XX` (each byte
/// of a path separator, a control or invisible character, a leading `.`, and `%` itself), so
/// that two ids never share a name. Ids are data: a base64 span id (`/ECvKZUCzd4=`) names a file
/// as `%2FECvKZUCzd4=`, never a reason to refuse the trace.
pub fn id_component(id: &str) -> String {
    if safe_component(id).is_none() && !id.contains('%') {
        return id.to_owned();
    }
    let mut out = String::with_capacity(id.len() + 8);
    for (i, c) in id.char_indices() {
        let unsafe_here = matches!(c, '/' | '\\' | '%') || is_invisible(c) || (i == 0 && c == '.');
        if unsafe_here {
            let mut bytes = [0; 4];
            for b in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}

/// `name` as an [`RateError::UnsafeName`] when it is not a [`safe_component`].
pub(crate) fn check_name(
    path: Option<&Path>,
    whose: String,
    what: &'static str,
    name: &str,
) -> Result<(), RateError> {
    match safe_component(name) {
        None => Ok(()),
        Some(why) => Err(RateError::UnsafeName {
            path: path.map(Path::to_path_buf),
            whose,
            what,
            value: name.to_owned(),
            why,
        }),
    }
}

/// The directory under `recorded/` that `whose` (a conversation or a turn of `file`) is written
/// under: `agent` (`--agent`, checked once by the caller), else `model` with `/`, `\` and `:`
/// made `_` (`meta-llama/Llama-3` is one directory, not two), else `imported`. A model that is
/// still not a safe name after that (`..`, `.hidden`, an escape sequence) is refused, not
/// guessed.
pub(crate) fn agent_dir(
    agent: Option<&str>,
    model: Option<&str>,
    file: &Path,
    whose: &str,
) -> Result<String, RateError> {
    match (agent, model) {
        (Some(agent), _) => Ok(agent.to_owned()),
        (None, Some(model)) => {
            let agent = model.replace(['/', '\\', ':'], "_");
            check_name(
                Some(file),
                whose.to_owned(),
                "model (as an agent directory; pass --agent NAME)",
                &agent,
            )?;
            Ok(agent)
        }
        (None, None) => Ok("imported".to_owned()),
    }
}

/// What makes two names one file, or one case to a reader: letter case (macOS's and Windows'
/// default file systems fold it), white space at either end (which nobody sees in a test name)
/// and dots at the end (which Windows drops). Two names with one key clash.
pub(crate) fn name_key(name: &str) -> String {
    name.trim().trim_end_matches('.').trim_end().to_lowercase()
}

/// [`name_key`] of each `/`-separated part of a case id.
pub(crate) fn id_key(id: &str) -> String {
    id.split('/').map(name_key).collect::<Vec<_>>().join("/")
}

/// The longest file or directory name, in bytes, that Linux's and macOS's file systems take
/// (`NAME_MAX`); Windows' limit is 255 UTF-16 units, which this never exceeds.
pub(crate) const NAME_MAX: usize = 255;

/// The longest path, in bytes, that Linux opens (`PATH_MAX` less its NUL).
pub(crate) const PATH_MAX: usize = 4095;

/// The two files one case writes under `out`: the case, and its recording under `agent`.
pub(crate) fn outputs(out: &Path, agent: &str, id: &str) -> [PathBuf; 2] {
    [
        out.join("cases").join(format!("{id}.json")),
        out.join("recorded").join(agent).join(format!("{id}.json")),
    ]
}

/// Every output path an import or a promotion will write, checked before any is written: two
/// cases that would write one file ([`name_key`]), a name too long for a file system, something
/// in the way of a path, and files (or links, dangling ones too) that are there already.
/// `import` and `promote` both plan through it.
#[derive(Default)]
pub(crate) struct Planned {
    /// Each path's key → the path and who writes it.
    paths: HashMap<String, (PathBuf, String)>,
    /// Planned paths where something is already.
    existing: Vec<PathBuf>,
}

impl Planned {
    /// Plans the two files of the case `id` (its recording under `agent`), written by `by`
    /// (`conversation 3 of log.json`, a turn's place): an error if another planned case writes
    /// either (by `key`, the id's [`id_key`] — the caller's, as an import's turn suffix is not part
    /// of a name), if a name of either path is too long, or if something that is not a directory
    /// stands where a directory of the path must be.
    pub(crate) fn add(
        &mut self,
        out: &Path,
        agent: &str,
        id: &str,
        key: &str,
        by: String,
    ) -> Result<(), RateError> {
        let keys = [
            format!("cases/{key}"),
            format!("recorded/{}/{key}", name_key(agent)),
        ];
        for (path, key) in outputs(out, agent, id).into_iter().zip(keys) {
            if let Some((first, first_by)) = self.paths.get(&key) {
                return Err(RateError::SameOutput {
                    path: first.clone(),
                    first: first_by.clone(),
                    second: by,
                });
            }
            let below = path.strip_prefix(out).unwrap_or(&path);
            let long = below
                .components()
                .map(|c| c.as_os_str().len())
                .find(|&len| len > NAME_MAX);
            let total = path.as_os_str().len();
            if long.is_some() || total > PATH_MAX {
                return Err(RateError::TooLong {
                    path,
                    by,
                    why: match long {
                        Some(len) => format!(
                            "a name of it is {len} bytes, over the {NAME_MAX} a file system takes"
                        ),
                        None => format!("it is {total} bytes, over the {PATH_MAX} a path can have"),
                    },
                });
            }
            if path.is_dir() {
                return Err(RateError::InTheWay {
                    planned: path.clone(),
                    found: path,
                });
            }
            // Only inside `out`: above it is the user's business, and `create_dir_all` says so.
            // A dangling link is in the way too: nothing can be made through it.
            if let Some(found) = path
                .ancestors()
                .skip(1)
                .take_while(|dir| *dir != out)
                .find(|dir| std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir())
            {
                return Err(RateError::InTheWay {
                    found: found.to_path_buf(),
                    planned: path.clone(),
                });
            }
            // Not `exists`, which follows a link: a dangling one is there, and is replaced only
            // with --force.
            if std::fs::symlink_metadata(&path).is_ok() {
                self.existing.push(path.clone());
            }
            self.paths.insert(key, (path, by.clone()));
        }
        Ok(())
    }

    /// An error naming the first planned file that is there already, unless `force`.
    pub(crate) fn check_existing(&mut self, force: bool) -> Result<(), RateError> {
        if force || self.existing.is_empty() {
            return Ok(());
        }
        Err(RateError::WouldOverwrite {
            count: self.existing.len(),
            first: self.existing.swap_remove(0),
        })
    }
}

/// Writes `bytes` to `path` in `batch` (through a temporary file and a rename, so a reader never
/// sees half a file).
pub(crate) fn write_in(
    batch: &mut toolcall_fs::Batch,
    path: &Path,
    bytes: &[u8],
) -> Result<(), RateError> {
    batch.write(path, bytes).map_err(|source| RateError::Write {
        path: path.to_path_buf(),
        source,
    })
}
