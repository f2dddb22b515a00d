//! The file system rules of the workspace, in one place: every file a `toolcall` command writes
//! (baselines, imported cases and recordings, live recordings, JSON reports) is written by
//! [`write_atomic`].
//!
//! **Invariants:** a file is replaced whole or not at all (a temporary file in the same folder,
//! flushed to disk, then renamed over it), so a reader never sees half a file and a killed run
//! never leaves one; the temporary file is created with `O_EXCL` (`create_new`), so a link
//! planted at its name is refused rather than followed, and the rename replaces a link at the
//! target rather than writing through it; a replaced file keeps its permissions; and a temporary
//! file a killed run left behind is removed by the next write to the same target.
//!
//! No dependencies beyond `std`: the crates that use it should not pay for it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many temporary names are tried before giving up (each taken one is another file, or a
/// link someone planted).
const ATTEMPTS: u32 = 64;

/// Replaces the file at `path` with `bytes`, atomically, creating its folder when missing.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("toolcall-fs-doc-{}", std::process::id()));
/// let path = dir.join("baselines/agent.json");
/// toolcall_fs::write_atomic(&path, b"{}\n")?;
/// assert_eq!(std::fs::read(&path)?, b"{}\n");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// [`write_atomic`] with the contents written by `fill` into the temporary file.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    fs::create_dir_all(&dir)?;
    remove_leftovers(&dir, name);
    let (temp, mut file) = create_temp(&dir, temp_names(name))?;
    let result = (|| {
        fill(&mut file)?;
        // The replaced file's permissions carry over (a baseline kept at 600 stays 600); a link
        // at `path` is not followed for them.
        if let Ok(meta) = fs::symlink_metadata(path) {
            if meta.file_type().is_file() {
                file.set_permissions(meta.permissions())?;
            }
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)?;
        sync_dir(&dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The prefix of every temporary file written for the target `name`: `.<name>.toolcall-`.
fn temp_prefix(name: &std::ffi::OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".toolcall-");
    prefix
}

/// The names a temporary file for the target `name` may take, in the order they are tried:
/// `.<name>.toolcall-<pid>-<n>-<nanos>.tmp`.
fn temp_names(name: &std::ffi::OsStr) -> impl Iterator<Item = OsString> + '_ {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    (0..ATTEMPTS).map(move |_| {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut file_name = temp_prefix(name);
        file_name.push(format!("{}-{n}-{}.tmp", std::process::id(), nanos()));
        file_name
    })
}

/// A new temporary file in `dir`, under the first of `names` that is free: each is created with
/// `create_new`, so nothing already there (a file, a planted link) is opened or followed.
fn create_temp(
    dir: &Path,
    names: impl IntoIterator<Item = OsString>,
) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for file_name in names {
        let temp = dir.join(file_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file could be created")))
}

/// The low bits of the clock, so names differ across runs that reuse a pid.
fn nanos() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

/// Removes the temporary files of `name` that a run which no longer exists left in `dir` (a run
/// killed between creating and renaming one). A process that still runs keeps its own. Where
/// whether a process runs cannot be told (no `/proc`), nothing is removed.
fn remove_leftovers(dir: &Path, name: &std::ffi::OsStr) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = temp_prefix(name);
    let prefix = prefix.to_string_lossy();
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(rest) = file_name.strip_prefix(prefix.as_ref()) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        // Only regular files: a link with our name is not ours to follow or keep, but it is
        // removed like any leftover (removing a link does not touch what it points at).
        let is_ours = entry
            .file_type()
            .is_ok_and(|t| t.is_file() || t.is_symlink());
        if !alive && is_ours {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Flushes the folder's entry for the rename, where the platform can (a crash right after a
/// rename could otherwise lose it).
fn sync_dir(dir: &Path) {
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolcall-fs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch folder");
        dir
    }

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = scratch("whole");
        let path = dir.join("a.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["a.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_never_written_through() {
        use std::os::unix::fs::symlink;
        let dir = scratch("link");
        let outside = dir.join("outside.txt");
        fs::write(&outside, b"precious").unwrap();
        let tree = dir.join("baselines");
        fs::create_dir_all(&tree).unwrap();
        // A link planted at the first name a temporary file would take: it is skipped, not
        // opened.
        let planted = OsString::from(".agent.json.toolcall-1-0-0.tmp");
        symlink(&outside, tree.join(&planted)).unwrap();
        let (temp, mut file) =
            create_temp(&tree, [planted.clone(), OsString::from("free.tmp")]).unwrap();
        assert_eq!(temp, tree.join("free.tmp"));
        file.write_all(b"x").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"precious");
        // Every name taken: an error, and still nothing written through.
        assert!(create_temp(&tree, [planted]).is_err());
        // A link at the target itself is replaced by the file, not written through.
        let target = tree.join("agent.json");
        symlink(&outside, &target).unwrap();
        write_atomic(&target, b"{}").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"precious");
        assert!(fs::symlink_metadata(&target).unwrap().file_type().is_file());
        assert_eq!(fs::read(&target).unwrap(), b"{}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let path = dir.join("agent.json");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"new").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dead_runs_leftover_is_removed_and_a_live_ones_kept() {
        let dir = scratch("leftover");
        let dead = dir.join(".agent.json.toolcall-4000000000-0-0.tmp");
        let live = dir.join(format!(
            ".agent.json.toolcall-{}-99-0.tmp",
            std::process::id()
        ));
        let other = dir.join(".other.json.toolcall-4000000000-0-0.tmp");
        for path in [&dead, &live, &other] {
            fs::write(path, b"half").unwrap();
        }
        write_atomic(&dir.join("agent.json"), b"{}").unwrap();
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists(), "a dead run's leftover is removed");
        }
        assert!(live.exists(), "this run's own file is not touched");
        assert!(other.exists(), "another target's file is not touched");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("fail");
        let path = dir.join("a.json");
        fs::write(&path, b"old").unwrap();
        let error = write_atomic_with(&path, |_| Err(io::Error::other("disk full")));
        assert!(error.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
