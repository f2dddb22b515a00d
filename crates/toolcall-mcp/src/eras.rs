//! What protocol era each stdio server spoke last, remembered between replays.
//!
//! Under `"protocol": "auto"` a legacy server costs a probe at every start: `server/discover`,
//! refused or never answered (a Python SDK 1.0 server takes it in and says nothing), then
//! `initialize`, sometimes on a second start. A server that spoke legacy last time very likely
//! does again, so a remembered `legacy` goes straight to `initialize`; a memory that is wrong
//! (the server was upgraded and no longer takes `initialize`) costs one fallback to the probe,
//! never a failure.
//!
//! The memory is a small JSON file outside the checkout (a CI checkout may be read-only, and a
//! cache is no part of the project): `$TOOLCALL_CACHE_DIR/protocol-eras.json`, else under
//! `$XDG_CACHE_HOME/toolcall/`, else `~/.cache/toolcall/`. `TOOLCALL_CACHE_DIR=""` turns it
//! off. Servers are keyed by a hash of their command, arguments and folder (arguments may hold
//! secrets; the hash does not). It is written whole to a temporary file and renamed, so a
//! reader never sees half of it; a file that cannot be read or parsed is ignored with a note,
//! and one that cannot be written is left as it was: a cache never fails a replay.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::StdioServer;

/// The file's name in the cache folder.
const FILE: &str = "protocol-eras.json";

/// How long a memory is trusted: after that the server is probed again, so that one upgraded
/// to the modern era is found speaking it.
const TRUSTED_FOR: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The era a server spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Era {
    /// `initialize` (MCP 2025-11-25 and earlier).
    Legacy,
    /// `server/discover` (MCP 2026-07-28).
    Modern,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Entry {
    era: Era,
    /// When it was noted, in seconds since the Unix epoch.
    at: u64,
}

/// The default place of the memory, from the environment; `None` when it is turned off or no
/// home folder is known.
pub fn default_protocol_cache() -> Option<PathBuf> {
    let dir = match std::env::var_os("TOOLCALL_CACHE_DIR") {
        Some(dir) if dir.is_empty() => return None,
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
            Some(xdg) => PathBuf::from(xdg).join("toolcall"),
            None => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?)
                .join(".cache/toolcall"),
        },
    };
    Some(dir.join(FILE))
}

/// The key of `server`: a hash of what starts it.
fn key(server: &StdioServer) -> String {
    let mut hash = Sha256::new();
    let mut part = |bytes: &[u8]| {
        // Each part's length first: `a b` and `ab` are different commands.
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    part(server.command.as_os_str().as_encoded_bytes());
    for arg in &server.args {
        part(arg.as_bytes());
    }
    part(server.cwd.as_os_str().as_encoded_bytes());
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Reads the file; a missing one is empty, one that cannot be read is empty with a note.
fn read(path: &Path) -> (File, Option<String>) {
    let text = match toolcall_score::read_text(path) {
        Ok(text) => text,
        Err(toolcall_score::InputError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return (File::default(), None)
        }
        Err(e) => {
            return (
                File::default(),
                Some(format!(
                    "the protocol cache {} cannot be read ({e}): ignored",
                    path.display()
                )),
            )
        }
    };
    match serde_json::from_str(&text) {
        Ok(file) => (file, None),
        Err(e) => (
            File::default(),
            Some(format!(
                "the protocol cache {} is not what toolcall writes ({e}): ignored, and written \
                 anew",
                path.display()
            )),
        ),
    }
}

/// The era `server` spoke last, if it is remembered and recent, and a note when the file was
/// unreadable.
pub(crate) fn recall(path: &Path, server: &StdioServer) -> (Option<Era>, Option<String>) {
    let (file, note) = read(path);
    let era = file
        .servers
        .get(&key(server))
        .filter(|e| now().saturating_sub(e.at) < TRUSTED_FOR.as_secs())
        .map(|e| e.era);
    (era, note)
}

/// Remembers that `server` spoke `era` (`None`: forgets it). Failing to write is no failure.
pub(crate) fn remember(path: &Path, server: &StdioServer, era: Option<Era>) {
    let (mut file, _) = read(path);
    let key = key(server);
    let before = file.servers.get(&key).map(|e| e.era);
    match era {
        Some(era) => {
            file.servers.insert(key, Entry { era, at: now() });
        }
        None if before.is_none() => return,
        None => {
            file.servers.remove(&key);
        }
    }
    let _ = write(path, &file);
}

/// Writes the file whole, atomically (its folder made when missing).
fn write(path: &Path, file: &File) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    toolcall_fs::write_atomic(path, (text + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(args: &[&str]) -> StdioServer {
        StdioServer {
            command: "srv".into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: "/tmp".into(),
        }
    }

    #[test]
    fn a_server_is_remembered_by_its_command_args_and_folder() {
        let dir = std::env::temp_dir().join(format!("toolcall-eras-{}", std::process::id()));
        let path = dir.join("sub").join(FILE);
        let legacy = server(&["a", "b"]);
        assert_eq!(recall(&path, &legacy), (None, None));
        remember(&path, &legacy, Some(Era::Legacy));
        assert_eq!(recall(&path, &legacy).0, Some(Era::Legacy));
        // Other arguments, or the same ones split otherwise, are another server.
        assert_eq!(recall(&path, &server(&["ab"])).0, None);
        assert_eq!(recall(&path, &server(&["a"])).0, None);
        // The arguments are not written, only their hash.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("srv"), "{text}");
        remember(&path, &legacy, None);
        assert_eq!(recall(&path, &legacy).0, None);
        // A file that is not the cache's is ignored with a note, and written anew.
        std::fs::write(&path, "{not json").unwrap();
        let (era, note) = recall(&path, &legacy);
        assert_eq!(era, None);
        assert!(note.unwrap().contains("ignored"));
        remember(&path, &legacy, Some(Era::Modern));
        assert_eq!(recall(&path, &legacy), (Some(Era::Modern), None));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
