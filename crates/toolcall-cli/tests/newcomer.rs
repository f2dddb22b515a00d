//! The newcomer's path, end to end, with every command taken from README's "Your first gate":
//! a fresh `cargo new` crate, `toolcall init`, the example green, a typo red with its finding,
//! `toolcall baseline accept`, green, the fix, the ratchet red, accept again, green. Each
//! command's comment says what it must do: `# red: <text>` fails and prints the text up to its
//! first ` …` or `,`; every other command succeeds. The only change to the README's commands:
//! `toolcall init` gets `--path <this checkout>`, so the crate builds without network.
//!
//! Feature `newcomer-tier` (it compiles toolcall-harness into a new crate, about a minute the
//! first time); `scripts/test` runs it. The build shares `target/newcomer` across runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shell commands of the README section `heading`, in order, with their comments.
fn commands(readme: &str, heading: &str) -> Vec<(String, String)> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"));
    let section = &readme[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut out = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_block = line == "```sh";
            continue;
        }
        if in_block && !line.trim().is_empty() {
            let (command, comment) = line.split_once("  #").unwrap_or((line, ""));
            out.push((command.trim().to_owned(), comment.trim().to_owned()));
        }
    }
    out
}

#[test]
fn the_first_gate_as_the_readme_tells_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap();
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let workspace = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let steps = commands(&readme, "## Your first gate");
    assert!(
        steps.len() >= 8 && steps[0].0 == "toolcall init",
        "the section's commands: {steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|(c, _)| c.starts_with("toolcall baseline accept")),
        "{steps:?}"
    );

    // Outside this workspace's folder: `cargo new` inside it would add the crate to the
    // workspace's members, which is not the newcomer's situation.
    let scratch = std::env::temp_dir().join(format!("toolcall-newcomer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let status = Command::new("cargo")
        .args(["new", "--vcs", "none", "--quiet", "agent"])
        .current_dir(&scratch)
        .status()
        .unwrap();
    assert!(status.success(), "cargo new");
    let crate_dir = scratch.join("agent");
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_toolcall"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../newcomer");

    for (command, comment) in steps {
        let command = match command.strip_prefix("toolcall init") {
            Some(rest) => format!("toolcall init --path {}{rest}", repo.display()),
            None => command,
        };
        let mut shell = Command::new("sh");
        shell
            .args(["-c", &command])
            .current_dir(&crate_dir)
            .env("PATH", &path)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("GITHUB_ACTIONS");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ATP_") {
                shell.env_remove(key);
            }
        }
        let out = shell.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        match comment.strip_prefix("red: ") {
            Some(says) => {
                let says = says.split([',', '…']).next().unwrap_or(says).trim();
                assert!(!out.status.success(), "`{command}` should fail:\n{text}");
                assert!(
                    text.contains(says),
                    "`{command}` should say {says:?}:\n{text}"
                );
            }
            None => assert!(out.status.success(), "`{command}` failed:\n{text}"),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        std::fs::read_to_string(repo.join("Cargo.toml")).unwrap(),
        workspace,
        "the newcomer's crate must not join this workspace"
    );
}
