//! Finding, and killing, what a server started that left its process group.
//!
//! The server runs in its own process group, and one `kill(-pgid)` ends it and the wrapper chain
//! it came through (`npx`, `uv run`, a shell script). A process that calls `setsid` or `setpgid`
//! — a daemonising helper, a browser a test server launched — leaves that group, and once its
//! parent dies it is reparented to init, where no parent-child walk finds it either. So each
//! server is started with a mark in its environment ([`MARK_VAR`]), which every descendant
//! inherits whatever group or session it moves to, and the kill also sweeps `/proc` for it: the
//! same cookie Jenkins' process-tree killer uses for a build's leftovers. The parent-child walk
//! from the server catches, while the server is still alive, a descendant that cleared its
//! environment.
//!
//! On Linux only, where `/proc` holds environments; elsewhere the process-group kill is all.
//! `/proc` also says how much CPU a server's group has used, which the replay's handshake reads
//! to tell a server that is working on `server/discover` from one that ignores it.

use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable every server (and so everything it starts) carries.
pub(crate) const MARK_VAR: &str = "TOOLCALL_MCP_SERVER";

/// What marks one server's processes: unique within this machine while we run.
#[derive(Clone, Debug)]
pub(crate) struct Mark(String);

impl Mark {
    /// A fresh mark: our pid and a counter, so concurrent servers of one run stay apart.
    pub(crate) fn new() -> Mark {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Mark(format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// The value to give [`MARK_VAR`].
    pub(crate) fn value(&self) -> &str {
        &self.0
    }
}

/// The live processes that carry `mark`, or descend from `root`, other than ourselves.
#[cfg(target_os = "linux")]
pub(crate) fn find(mark: &Mark, root: Option<u32>) -> Vec<u32> {
    let needle = format!("{MARK_VAR}={}", mark.value()).into_bytes();
    let ours = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parents = Vec::new();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // Gone by now, or a zombie: nothing to kill.
        let Some(ppid) = live_parent(pid) else {
            continue;
        };
        if pid == ours {
            continue;
        }
        parents.push((pid, ppid));
        // Unreadable (another user's process) means not ours to kill.
        if std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle))
        {
            found.push(pid);
        }
    }
    if let Some(root) = root {
        let mut frontier = vec![root];
        while let Some(parent) = frontier.pop() {
            for &(pid, ppid) in &parents {
                if ppid == parent && !found.contains(&pid) {
                    found.push(pid);
                    frontier.push(pid);
                }
            }
        }
        if parents.iter().any(|&(pid, _)| pid == root) && !found.contains(&root) {
            found.push(root);
        }
    }
    found.sort_unstable();
    found
}

/// The parent of a process that is alive (not a zombie).
#[cfg(target_os = "linux")]
fn live_parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; the command name may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(") ")?;
    let mut fields = rest.split(' ');
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.next()?.parse().ok()
}

/// SIGKILL to each of `pids`; ESRCH (already gone) is the usual, happy answer.
#[cfg(target_os = "linux")]
pub(crate) fn kill(pids: &[u32]) {
    for &pid in pids {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Kills whatever still carries `mark`, again until nothing does (a process may have forked
/// between a look and its kill), for a few rounds at most.
#[cfg(target_os = "linux")]
pub(crate) fn kill_marked(mark: &Mark) {
    for _ in 0..4 {
        let left = find(mark, None);
        if left.is_empty() {
            return;
        }
        kill(&left);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// Whether `pid` is alive and not a zombie.
    fn alive(pid: u32) -> bool {
        live_parent(pid).is_some()
    }

    #[test]
    fn a_marked_process_is_found_in_any_group_and_killed() {
        use std::os::unix::process::CommandExt;
        let mark = Mark::new();
        let other = Mark::new();
        assert_ne!(mark.value(), other.value());
        let mut marked = Command::new("sleep")
            .arg("60")
            .env(MARK_VAR, mark.value())
            .process_group(0)
            .stdout(Stdio::null())
            .spawn()
            .expect("sleep runs");
        let mut unmarked = Command::new("sleep")
            .arg("60")
            .env(MARK_VAR, other.value())
            .stdout(Stdio::null())
            .spawn()
            .expect("sleep runs");
        let found = find(&mark, None);
        assert_eq!(found, [marked.id()], "only the marked sleep");
        kill_marked(&mark);
        marked.wait().expect("reaped");
        assert!(!alive(marked.id()));
        assert!(
            alive(unmarked.id()),
            "a process with another mark is left alone"
        );
        let _ = unmarked.kill();
        let _ = unmarked.wait();
    }

    #[test]
    fn descendants_of_the_root_are_found_without_the_mark() {
        // `env -i` clears the environment, mark included; the parent link still says whose it is.
        let mut parent = Command::new("sh")
            .args(["-c", "env -i sleep 60 & wait"])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh runs");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let child = loop {
            let found = find(&Mark::new(), Some(parent.id()));
            if found.len() == 2 || std::time::Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert_eq!(child.len(), 2, "the shell and its sleep: {child:?}");
        assert!(child.contains(&parent.id()));
        kill(&child);
        parent.wait().expect("reaped");
        for pid in child {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while alive(pid) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            assert!(!alive(pid), "{pid} survived");
        }
    }
}

/// The user plus system CPU time of every process in the process group `pgid`, from
/// `/proc/PID/stat` (the server runs in a group of its own, with any wrapper that started it).
#[cfg(target_os = "linux")]
pub(crate) fn group_cpu_ticks(pgid: u32) -> Option<u64> {
    let mut ticks = 0u64;
    let mut seen = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command in parentheses (which may hold anything): state, ppid, pgrp, ...,
        // utime (the 14th field) and stime (the 15th).
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) != Some(pgid) {
            continue;
        }
        let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
        if let (Some(user), Some(system)) = (field(11), field(12)) {
            ticks += user + system;
            seen = true;
        }
    }
    seen.then_some(ticks)
}
