//! The file system rules of the workspace, in one place: every file a `toolcall` command writes
//! (baselines, imported cases and recordings, live recordings, JSON reports) is written by
//! [`write_atomic`] (many at once by a [`Batch`], which shares the waits for the disk), and every
//! tree it reads (cases, recordings) is walked by [`walk`].
//!
//! **Invariants:** a file is replaced whole or not at all (a temporary file in the same folder,
//! flushed to disk, then renamed over it), so a reader never sees half a file and a killed run
//! never leaves one; the temporary file is created with `O_EXCL` (`create_new`), so a link
//! planted at its name is refused rather than followed, and the rename replaces a link at the
//! target rather than writing through it; a replaced file keeps its permissions; and a temporary
//! file a killed run left behind is removed by the next write to the same target.
//!
//! **Invariants of a walk:** it never follows a link out of its root or into a directory it has
//! already walked (a loop, or a second way to the same files), it reads only regular files (a
//! FIFO would block the reader forever), and it says what it left out and why — a link that
//! leads nowhere too, whatever its name.
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
    write_via(path, fill, Commit::Replace)
}

/// Creates the file at `path` with `bytes`, atomically, creating its folder when missing, and
/// never replaces anything already there: a file (or link) at `path` is
/// [`io::ErrorKind::AlreadyExists`], and is left as it was. For scaffolding (`toolcall init`),
/// which must not overwrite a user's files even if one appears while it runs: the complete
/// temporary file is hard-linked into place, which fails rather than replaces.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_via(path, |file| file.write_all(bytes), Commit::New)
}

/// Creates a new file at `path` for a run to append to as it goes (a journal that must outlive
/// the run if it is killed), creating its folder when missing. Never opens what is already
/// there: a file or a link at `path` is [`io::ErrorKind::AlreadyExists`] (`create_new`, which
/// does not follow a link). The one file here that is not written whole: whoever finishes the
/// run writes the real output with [`write_atomic`] and removes the journal.
pub fn create_journal(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// Opens the file at `path` for a long run to append whole lines to (a log), creating it and its
/// folder when missing. Never opens a link: a link at `path` is [`io::ErrorKind::AlreadyExists`].
/// Each line should go in one `write_all`, so that a reader never meets half of one.
pub fn open_log(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a link is in the way; the log is never written through one",
        ));
    }
    OpenOptions::new().append(true).create(true).open(path)
}

/// How the finished temporary file takes its place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Commit {
    /// Renamed over whatever is at the path.
    Replace,
    /// Linked to the path, which must be free.
    New,
}

fn write_via(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
    commit: Commit,
) -> io::Result<()> {
    let (dir, name) = parts(path)?;
    fs::create_dir_all(&dir)?;
    remove_leftovers(&dir, name);
    let (temp, mut file) = create_temp(&dir, temp_names(name))?;
    let result = (|| {
        fill(&mut file)?;
        keep_mode(&file, path)?;
        file.sync_all()?;
        drop(file);
        match commit {
            Commit::Replace => fs::rename(&temp, path)?,
            Commit::New => match fs::hard_link(&temp, path) {
                Ok(()) => fs::remove_file(&temp)?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
                // A file system without hard links: check, then rename (a race remains).
                Err(_) if fs::symlink_metadata(path).is_ok() => {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!("{} exists", path.display()),
                    ))
                }
                Err(_) => fs::rename(&temp, path)?,
            },
        }
        sync_dir(&dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// How many files a [`Batch`] holds open before it flushes them: open files are a limited
/// resource (1,024 by default on Linux), and this many share one round of flushes.
const BATCH_FILES: usize = 512;

/// How many threads flush a batch's files: file systems commit concurrent flushes together
/// (ext4's journal does), so flushes waited for side by side cost about one.
const BATCH_THREADS: usize = 64;

/// Many files written together, each by [`write_atomic`]'s rules (a temporary file beside it,
/// flushed, renamed over the target), with the waits for the disk shared: the temporary files of
/// up to 512 writes are flushed side by side, then renamed, and each folder is
/// flushed once, by [`Batch::finish`]. One flush per file and one per folder, instead of two per
/// file one after the other (an import of 8,000 conversations waited on 32,000 flushes).
///
/// A file is in place once its round is renamed (by `finish` at the latest). When a round fails,
/// its files not yet renamed are left as they were; a batch dropped without `finish` leaves its
/// last round's targets as they were; either way no temporary file is left.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("toolcall-fs-batch-doc-{}", std::process::id()));
/// let mut batch = toolcall_fs::Batch::default();
/// batch.write(&dir.join("cases/a.json"), b"{}\n")?;
/// batch.write(&dir.join("recorded/agent/a.json"), b"{}\n")?;
/// batch.finish()?;
/// assert_eq!(std::fs::read(dir.join("cases/a.json"))?, b"{}\n");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Batch {
    /// Written and not yet flushed: (temporary file, target, open file).
    pending: Vec<(PathBuf, PathBuf, File)>,
    /// The folders renamed into, flushed by `finish`.
    dirs: std::collections::BTreeSet<PathBuf>,
}

impl Batch {
    /// Writes `bytes` as the file at `path` (creating its folder when missing), in place by the
    /// end of this round.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let (dir, name) = parts(path)?;
        fs::create_dir_all(&dir)?;
        remove_leftovers(&dir, name);
        let (temp, mut file) = create_temp(&dir, temp_names(name))?;
        let filled = file.write_all(bytes).and_then(|()| keep_mode(&file, path));
        if let Err(e) = filled {
            drop(file);
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        self.pending.push((temp, path.to_path_buf(), file));
        if self.pending.len() >= BATCH_FILES {
            self.commit()?;
        }
        Ok(())
    }

    /// Flushes every pending file (side by side), then renames each into place.
    fn commit(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let per_thread = pending.len().div_ceil(BATCH_THREADS).max(1);
        let synced = std::thread::scope(|scope| {
            let workers: Vec<_> = pending
                .chunks(per_thread)
                .map(|chunk| {
                    scope.spawn(move || chunk.iter().try_for_each(|(_, _, f)| f.sync_all()))
                })
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a flush thread panicked")))
            })
        });
        let mut result = synced;
        for (temp, path, file) in pending {
            drop(file);
            if result.is_ok() {
                result = fs::rename(&temp, &path);
                if result.is_ok() {
                    if let Ok((dir, _)) = parts(&path) {
                        self.dirs.insert(dir);
                    }
                    continue;
                }
            }
            let _ = fs::remove_file(&temp);
        }
        result
    }

    /// Puts the last round in place and flushes every folder renamed into.
    pub fn finish(mut self) -> io::Result<()> {
        self.commit()?;
        for dir in std::mem::take(&mut self.dirs) {
            sync_dir(&dir);
        }
        Ok(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        for (temp, _, file) in self.pending.drain(..) {
            drop(file);
            let _ = fs::remove_file(&temp);
        }
    }
}

/// `path`'s folder (`.` for a bare name) and file name.
fn parts(path: &Path) -> io::Result<(PathBuf, &std::ffi::OsStr)> {
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
    Ok((dir, name))
}

/// Gives `file` the permissions of the file it replaces at `path` (a baseline kept at 600
/// stays 600); a link at `path` is not followed for them.
fn keep_mode(file: &File, path: &Path) -> io::Result<()> {
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_file() {
            file.set_permissions(meta.permissions())?;
        }
    }
    Ok(())
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

/// How old a leftover must be before it is removed: a writer on another host sharing the folder
/// (an NFS mount, a container) has a pid this process cannot see, and no write takes this long.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Removes the temporary files of `name` that a run which no longer exists left in `dir` (a run
/// killed between creating and renaming one): ones whose pid no process here has and that are
/// older than [`LEFTOVER_AGE`]. A process that still runs keeps its own. Where whether a process
/// runs cannot be told (no `/proc`), nothing is removed. Each folder is listed once per process
/// ([`dead_leftovers`]), so writing many files into one folder does not list it for each.
fn remove_leftovers(dir: &Path, name: &std::ffi::OsStr) {
    type Listed = std::collections::HashMap<PathBuf, Vec<PathBuf>>;
    static LISTED: std::sync::Mutex<Option<Listed>> = std::sync::Mutex::new(None);
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(mut listed) = LISTED.lock() else {
        return;
    };
    let found = listed
        .get_or_insert_with(Listed::new)
        .entry(dir.to_path_buf())
        .or_insert_with(|| dead_leftovers(dir));
    let prefix = temp_prefix(name);
    let prefix = prefix.to_string_lossy();
    found.retain(|path| {
        let ours = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(prefix.as_ref()));
        if ours {
            let _ = fs::remove_file(path);
        }
        !ours
    });
}

/// The temporary files in `dir`, of any target, that a dead run left there long enough ago.
/// Links with such a name are listed too: removing a link does not touch what it points at.
fn dead_leftovers(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(at) = file_name.rfind(".toolcall-") else {
            continue;
        };
        if !file_name.starts_with('.') || !file_name.ends_with(".tmp") {
            continue;
        }
        let rest = &file_name[at + ".toolcall-".len()..];
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= LEFTOVER_AGE);
        let is_file = entry
            .file_type()
            .is_ok_and(|t| t.is_file() || t.is_symlink());
        if !alive && old && is_file {
            found.push(entry.path());
        }
    }
    found
}

/// Flushes the folder's entry for the rename, where the platform can (a crash right after a
/// rename could otherwise lose it).
fn sync_dir(dir: &Path) {
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

/// What a [`walk`] found: the regular files it kept, sorted, and what it left out.
#[derive(Debug, Default)]
pub struct Walk {
    /// The files below the root that the filter kept, sorted by path.
    pub files: Vec<PathBuf>,
    /// What was left out, and why; in the order met.
    pub skipped: Vec<Skipped>,
    /// Links that lead nowhere — dangling, or round a loop of links (`a -> b`, `b -> a`) — whose
    /// own name `keep` does not hold for: as a file it would not have been read, but it may have
    /// been a folder, so it is the caller's to mention (a link `keep` holds for is in `skipped`).
    pub unresolved: Vec<Skipped>,
}

/// An entry a [`walk`] left out.
#[derive(Debug)]
pub struct Skipped {
    /// The entry, as met under the root.
    pub path: PathBuf,
    /// Why.
    pub why: SkipReason,
}

/// Why a [`walk`] left an entry out.
#[derive(Debug)]
#[non_exhaustive]
pub enum SkipReason {
    /// A link whose target is outside the root.
    LinkOutside,
    /// A link to a directory the walk has already been through (a loop such as `a -> .`, or a
    /// second way to the same files).
    AlreadyWalked,
    /// Not a regular file or a directory (a FIFO, a socket, a device), or a link to one.
    NotRegular,
    /// It could not be read (a broken link, no permission).
    Unreadable(io::Error),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::LinkOutside => f.write_str("a link out of the tree, not followed"),
            SkipReason::AlreadyWalked => {
                f.write_str("a link to a folder already walked (a loop), not followed")
            }
            SkipReason::NotRegular => f.write_str("not a regular file (a FIFO, socket or device)"),
            SkipReason::Unreadable(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

/// Every regular file below `root` that `keep` holds for (given the path as met under the root,
/// which is where a link sits, not where it points), sorted; entries `skip` holds for (hidden
/// files, say) are passed over, files and folders alike, and are the caller's to note.
///
/// Real folders are walked first and links to folders after, so the path a file is found under
/// is its real one whenever it has one; a link is followed only to a folder inside the root that
/// was not walked yet. A `root` that does not exist is an error; one that is a link is followed
/// (the tree's boundary is where it points).
pub fn walk(
    root: &Path,
    skip: &dyn Fn(&Path) -> bool,
    keep: &dyn Fn(&Path) -> bool,
) -> io::Result<Walk> {
    let boundary = fs::canonicalize(root)?;
    let mut walked = std::collections::HashSet::from([boundary.clone()]);
    let mut out = Walk::default();
    let mut links: Vec<PathBuf> = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    loop {
        while let Some(dir) = pending.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) => {
                    out.skipped.push(Skipped {
                        path: dir,
                        why: SkipReason::Unreadable(e),
                    });
                    continue;
                }
            };
            let mut entries: Vec<fs::DirEntry> = entries.flatten().collect();
            entries.sort_by_key(fs::DirEntry::file_name);
            for entry in entries {
                let path = entry.path();
                if skip(&path) {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    // A real folder met inside a linked subtree may have been walked already,
                    // through another link: once is all.
                    let first = fs::canonicalize(&path).map_or(true, |real| walked.insert(real));
                    if first {
                        pending.push(path);
                    } else {
                        out.skipped.push(Skipped {
                            path,
                            why: SkipReason::AlreadyWalked,
                        });
                    }
                } else if kind.is_file() {
                    if keep(&path) {
                        out.files.push(path);
                    }
                } else if kind.is_symlink() {
                    links.push(path);
                } else if keep(&path) {
                    out.skipped.push(Skipped {
                        path,
                        why: SkipReason::NotRegular,
                    });
                }
            }
        }
        // The links met, once every real folder reachable so far is walked.
        let Some(link) = links.pop() else { break };
        let real = match fs::canonicalize(&link) {
            Ok(real) => real,
            Err(e) => {
                let skipped = Skipped {
                    path: link.clone(),
                    why: SkipReason::Unreadable(e),
                };
                if keep(&link) {
                    out.skipped.push(skipped);
                } else {
                    out.unresolved.push(skipped);
                }
                continue;
            }
        };
        let why = match fs::metadata(&real) {
            _ if !real.starts_with(&boundary) => Some(SkipReason::LinkOutside),
            Ok(meta) if meta.is_dir() => {
                if walked.insert(real) {
                    pending.push(link.clone());
                    None
                } else {
                    Some(SkipReason::AlreadyWalked)
                }
            }
            Ok(meta) if meta.is_file() => {
                if keep(&link) {
                    out.files.push(link.clone());
                }
                None
            }
            Ok(_) => keep(&link).then_some(SkipReason::NotRegular),
            Err(e) => Some(SkipReason::Unreadable(e)),
        };
        if let Some(why) = why {
            out.skipped.push(Skipped { path: link, why });
        }
    }
    out.files.sort();
    Ok(out)
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
    fn create_journal_opens_only_a_new_file() {
        let dir = scratch("journal");
        let path = dir.join("flows/a.json.partial");
        let mut file = create_journal(&path).unwrap();
        file.write_all(b"one\n").unwrap();
        let again = create_journal(&path).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"one\n", "left as it was");
        #[cfg(unix)]
        {
            let link = dir.join("flows/b.json.partial");
            std::os::unix::fs::symlink(dir.join("elsewhere"), &link).unwrap();
            let err = create_journal(&link).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
            assert!(
                !dir.join("elsewhere").exists(),
                "not written through the link"
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_new_creates_and_never_replaces() {
        let dir = scratch("new");
        let path = dir.join("cases/a.json");
        write_new(&path, b"one").unwrap();
        let again = write_new(&path, b"two").unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"one", "left as it was");
        #[cfg(unix)]
        {
            // Not through a link either: a dangling one still holds the name.
            let link = dir.join("cases/b.json");
            std::os::unix::fs::symlink(dir.join("elsewhere.json"), &link).unwrap();
            let err = write_new(&link, b"x").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
            assert!(!dir.join("elsewhere.json").exists());
        }
        let names: Vec<_> = fs::read_dir(dir.join("cases"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "no temporary file left: {names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Every file of a batch lands whole, across rounds and folders, with no temporary file
    /// left; a link at a target is replaced, not written through; a batch dropped before
    /// `finish` leaves its unfinished round's targets untouched.
    #[test]
    fn a_batch_writes_every_file_and_a_dropped_one_nothing_more() {
        let dir = scratch("batch");
        let mut batch = Batch::default();
        let paths: Vec<PathBuf> = (0..BATCH_FILES * 2 + 7)
            .map(|i| dir.join(format!("d{}/f{i}.json", i % 3)))
            .collect();
        #[cfg(unix)]
        {
            fs::create_dir_all(dir.join("d0")).unwrap();
            std::os::unix::fs::symlink(dir.join("outside"), &paths[0]).unwrap();
        }
        for (i, path) in paths.iter().enumerate() {
            batch.write(path, format!("{i}").as_bytes()).unwrap();
        }
        batch.finish().unwrap();
        for (i, path) in paths.iter().enumerate() {
            assert_eq!(fs::read_to_string(path).unwrap(), i.to_string());
        }
        assert!(
            !dir.join("outside").exists(),
            "not written through the link"
        );
        for d in 0..3 {
            let temps: Vec<_> = fs::read_dir(dir.join(format!("d{d}")))
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
                .collect();
            assert!(temps.is_empty(), "{temps:?}");
        }
        let mut dropped = Batch::default();
        dropped.write(&paths[1], b"new").unwrap();
        dropped.write(&dir.join("d9/never.json"), b"new").unwrap();
        drop(dropped);
        assert_eq!(fs::read_to_string(&paths[1]).unwrap(), "1");
        assert!(!dir.join("d9/never.json").exists());
        assert_eq!(
            fs::read_dir(dir.join("d9")).unwrap().count(),
            0,
            "no temporary file"
        );
        fs::remove_dir_all(&dir).unwrap();
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
        let recent = dir.join(".agent.json.toolcall-4000000001-0-0.tmp");
        let long_ago = std::time::SystemTime::now() - LEFTOVER_AGE * 2;
        for path in [&dead, &live, &other, &recent] {
            fs::write(path, b"half").unwrap();
            if path != &recent {
                File::options()
                    .write(true)
                    .open(path)
                    .and_then(|f| f.set_modified(long_ago))
                    .unwrap();
            }
        }
        write_atomic(&dir.join("agent.json"), b"{}").unwrap();
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists(), "a dead run's leftover is removed");
        }
        assert!(live.exists(), "this run's own file is not touched");
        assert!(
            recent.exists(),
            "a recent one may be another host's write in flight"
        );
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

    fn names(walk: &Walk, root: &Path) -> Vec<String> {
        walk.files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    fn no_hidden(path: &Path) -> bool {
        path.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'))
    }

    #[cfg(unix)]
    #[test]
    fn links_never_lead_out_of_the_tree_or_round_a_loop() {
        use std::os::unix::fs::symlink;
        let dir = scratch("walk-links");
        let root = dir.join("recorded/agent");
        fs::create_dir_all(root.join("billing")).unwrap();
        fs::write(root.join("billing/a.json"), b"{}").unwrap();
        fs::write(dir.join("secret.json"), b"{}").unwrap();
        // The fan-out that hung `toolcall check`: two links to the root itself.
        symlink(".", root.join("a")).unwrap();
        symlink(".", root.join("b")).unwrap();
        // A loop into an ancestor, and a link out of the tree.
        symlink("../billing", root.join("billing/loop")).unwrap();
        symlink("../../secret.json", root.join("outside.json")).unwrap();
        symlink(&dir, root.join("up")).unwrap();
        let walk = walk(&root, &no_hidden, &|_| true).unwrap();
        assert_eq!(names(&walk, &root), ["billing/a.json"]);
        let mut skipped: Vec<String> = walk
            .skipped
            .iter()
            .map(|s| {
                format!(
                    "{} {:?}",
                    s.path.strip_prefix(&root).unwrap().display(),
                    s.why
                )
            })
            .collect();
        skipped.sort();
        assert_eq!(
            skipped,
            [
                "a AlreadyWalked",
                "b AlreadyWalked",
                "billing/loop AlreadyWalked",
                "outside.json LinkOutside",
                "up LinkOutside"
            ]
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A chain of links round a loop (`Aa -> B`, `B -> Aa`) or a dangling link leads nowhere:
    /// under a name the filter keeps it is skipped, under any other it is unresolved (it may
    /// have been a folder); it used to be dropped without a word.
    #[cfg(unix)]
    #[test]
    fn a_link_that_leads_nowhere_is_always_named() {
        use std::os::unix::fs::symlink;
        let dir = scratch("walk-nowhere");
        fs::write(dir.join("a.json"), b"{}").unwrap();
        symlink("B", dir.join("Aa")).unwrap();
        symlink("Aa", dir.join("B")).unwrap();
        symlink("gone", dir.join("billing")).unwrap();
        symlink("x.json", dir.join("y.json")).unwrap();
        symlink("y.json", dir.join("x.json")).unwrap();
        let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
        let walk = walk(&dir, &no_hidden, &json).unwrap();
        assert_eq!(names(&walk, &dir), ["a.json"]);
        let named = |list: &[Skipped]| {
            let mut names: Vec<String> = list
                .iter()
                .map(|s| s.path.strip_prefix(&dir).unwrap().display().to_string())
                .collect();
            names.sort();
            names
        };
        assert_eq!(named(&walk.unresolved), ["Aa", "B", "billing"]);
        assert_eq!(named(&walk.skipped), ["x.json", "y.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_folder_in_the_tree_is_walked_once_under_its_real_name() {
        use std::os::unix::fs::symlink;
        let dir = scratch("walk-alias");
        fs::create_dir_all(dir.join("zeta")).unwrap();
        fs::write(dir.join("zeta/x.json"), b"{}").unwrap();
        fs::create_dir_all(dir.join("other")).unwrap();
        fs::write(dir.join("other/y.json"), b"{}").unwrap();
        // `alpha` sorts before `zeta`, but the files are found under their real folder once.
        symlink("zeta", dir.join("alpha")).unwrap();
        let walk = walk(&dir, &no_hidden, &|_| true).unwrap();
        assert_eq!(names(&walk, &dir), ["other/y.json", "zeta/x.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_reached_through_two_links_is_walked_once() {
        use std::os::unix::fs::symlink;
        let dir = scratch("walk-two-links");
        fs::create_dir_all(dir.join(".shared/g/sub")).unwrap();
        fs::write(dir.join(".shared/g/sub/case.json"), b"{}").unwrap();
        symlink(".shared/g", dir.join("a")).unwrap();
        symlink(".shared/g/sub", dir.join("b")).unwrap();
        let walk = walk(&dir, &no_hidden, &|_| true).unwrap();
        assert_eq!(walk.files.len(), 1, "{:?}", walk.files);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_left_out_not_read() {
        let dir = scratch("walk-fifo");
        fs::write(dir.join("a.json"), b"{}").unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(dir.join("b.json"))
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
        let walk = walk(&dir, &no_hidden, &|_| true).unwrap();
        assert_eq!(names(&walk, &dir), ["a.json"]);
        assert!(matches!(walk.skipped[0].why, SkipReason::NotRegular));
        fs::remove_dir_all(&dir).unwrap();
    }
}
