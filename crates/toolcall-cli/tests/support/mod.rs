//! What the CLI's integration tests share: a scratch directory per test, running the
//! `toolcall` binary the way a user's shell does (outside GitHub Actions), and the text of its
//! output made the same on every machine for a snapshot.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh, empty directory for one test's files, under cargo's per-target temporary directory.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `toolcall` with `args`, without `GITHUB_ACTIONS`, and waits for it.
#[allow(dead_code)] // not every suite runs the binary this way
pub fn toolcall(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// Standard output, lossily decoded.
#[allow(dead_code)] // not every suite reads stdout
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error, lossily decoded.
#[allow(dead_code)] // not every suite reads stderr
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `text` as a snapshot holds it: what differs between machines and runs replaced by a
/// placeholder. The scratch directories' root (cargo's per-target temporary directory) becomes
/// `[tmp]`, this crate's directory `[crate]`, and the workspace's `[workspace]`, so a report
/// that names its files reads the same in every checkout.
#[allow(dead_code)] // not every suite snapshots text
pub fn normalised(text: &str) -> String {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let places = [
        (PathBuf::from(env!("CARGO_TARGET_TMPDIR")), "[tmp]"),
        (crate_dir.to_path_buf(), "[crate]"),
        (crate_dir.join("../.."), "[workspace]"),
    ];
    let mut text = text.to_owned();
    for (place, placeholder) in &places {
        text = text.replace(&place.display().to_string(), placeholder);
    }
    text
}

/// Runs `toolcall` with `args` as [`toolcall`] does, asserts that it exits with `code` (showing
/// its stderr when not), and returns its standard output read as JSON: what every `--json` test
/// does first.
#[allow(dead_code)] // not every suite reads JSON
pub fn toolcall_json(args: &[&str], code: i32) -> serde_json::Value {
    let out = toolcall(args);
    let shown = args.join(" ");
    assert_eq!(
        out.status.code(),
        Some(code),
        "toolcall {shown}\n{}",
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "toolcall {shown}: standard output is not JSON ({e}):\n{}",
            stdout(&out)
        )
    })
}

/// Runs `toolcall` with `args` as [`toolcall`] does, but kills it and panics if it has not
/// finished within `limit`: a hang is the failure the caller tests for.
#[allow(dead_code)] // not every suite guards against hangs
pub fn toolcall_within(args: &[&str], limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolcall {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[allow(dead_code)] // not every suite reads reports
/// Every element of `doc` (HTML as `toolcall` writes it, or XML) closed in order; `<style>` and
/// `<script>` content read raw. Returns how many elements it saw.
pub fn well_formed(doc: &str) -> Result<usize, String> {
    const VOID: [&str; 5] = ["meta", "br", "hr", "img", "input"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = doc;
    let mut count = 0;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let end = rest.find('>').ok_or("a tag is not closed")?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name.trim() => continue,
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.is_empty() {
            return Err(format!("not a tag: <{tag}>"));
        }
        count += 1;
        if tag.ends_with('/') || VOID.contains(&name.as_str()) {
            continue;
        }
        if name == "style" || name == "script" {
            let close = format!("</{name}>");
            let end = rest.find(&close).ok_or(format!("{close} missing"))?;
            rest = &rest[end + close.len()..];
            continue;
        }
        stack.push(name);
    }
    if stack.is_empty() {
        Ok(count)
    } else {
        Err(format!("never closed: {stack:?}"))
    }
}
