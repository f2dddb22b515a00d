//! Tidy: the repository's own rules, checked on every `cargo test` (after rust-analyzer's
//! `xtask/src/tidy.rs`). Each failure says which file breaks which rule.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "node_modules" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_says_why_it_exists() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("examples"), &mut files);
    assert!(files.len() > 10, "found only {} Rust files", files.len());
    let undocumented: Vec<String> = files
        .iter()
        .filter(|path| path.components().any(|c| c.as_os_str() == "src"))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "modules without a `//!` doc: {undocumented:#?}"
    );
}

#[test]
fn no_test_is_ignored() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("examples"), &mut files);
    let marker = concat!("#[", "ignore");
    let ignored: Vec<String> = files
        .iter()
        .filter(|path| std::fs::read_to_string(path).unwrap().contains(marker))
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        ignored.is_empty(),
        "assert today's behaviour with a FIXME instead of ignoring: {ignored:#?}"
    );
}

#[test]
fn readme_has_the_two_set_up_commands_and_they_exist() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("## Set up")
        .nth(1)
        .expect("README has a `## Set up` section");
    let block = section
        .split("```sh")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "exactly two set-up commands: {commands:#?}"
    );
    let script = commands[1].split_whitespace().next().unwrap();
    let path = root.join(script);
    assert!(path.is_file(), "{script} does not exist");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{script} is not executable");
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run exists");
    assert!(
        ci.contains(script),
        ".ci/run must call the README's test command {script}"
    );
    // The main-job command names a real subcommand.
    let subcommand = commands[0]
        .split(" -- ")
        .nth(1)
        .and_then(|a| a.split_whitespace().next())
        .unwrap();
    let help = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args([subcommand, "--help"])
        .output()
        .unwrap();
    assert!(
        help.status.success(),
        "`toolcall {subcommand}` does not exist"
    );
}

/// Workspace packages and their normal (non-dev) dependencies.
fn dependencies() -> Vec<(String, Vec<String>)> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn dependencies_point_one_way() {
    let packages = dependencies();
    let deps = |name: &str| {
        packages
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| panic!("no package {name}"))
    };
    let mut core = deps("toolcall-score");
    core.sort();
    assert_eq!(
        core,
        ["jsonschema", "serde", "serde_json", "thiserror"],
        "the core stays small"
    );
    for (name, deps) in &packages {
        if name == "toolcall-cli" {
            continue;
        }
        assert!(
            !deps.iter().any(|d| d == "toolcall-cli"),
            "{name} depends on the cli"
        );
        if name == "toolcall-harness" || name == "toolcall-score" {
            assert!(
                !deps
                    .iter()
                    .any(|d| d == "tokio" || d == "rmcp" || d == "toolcall-mcp"),
                "{name} must not pull in async or MCP: {deps:?}"
            );
        }
    }
}

/// The lines of library and binary code (not tests, benches, examples or the example MCP
/// servers) that hold one of `patterns`, outside the files `allowed`, as `path:line: text`.
fn library_lines_holding(patterns: &[&str], allowed: &[&str]) -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut offenders = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let library = relative.contains("/src/")
            && !allowed.iter().any(|a| relative.starts_with(a))
            && !relative.starts_with("crates/toolcall-bench/")
            && !relative.starts_with("crates/toolcall-mcp-servers/");
        if !library {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests sit after the module's `#[cfg(test)]`; they may read and write scratch files.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            if patterns.iter().any(|w| line.contains(w)) && !line.trim_start().starts_with("//") {
                offenders.push(format!("{relative}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    offenders
}

/// Every file the tool writes goes through `toolcall_fs::write_atomic` (atomically, never
/// through a link): no library or binary code outside `crates/toolcall-fs` opens a file for
/// writing itself.
#[test]
fn no_code_outside_toolcall_fs_writes_files() {
    let offenders = library_lines_holding(
        &[
            "fs::write(",
            "File::create(",
            "OpenOptions::new()",
            "fs::rename(",
            "create_dir_all(",
        ],
        &["crates/toolcall-fs/"],
    );
    assert!(
        offenders.is_empty(),
        "write files with toolcall_fs::write_atomic:\n{}",
        offenders.join("\n")
    );
}

/// Every input file read whole is read through `toolcall_score::read_text`, so the input limit,
/// the encoding checks and their messages hold for all of them (the log scan streams its lines
/// and bounds each itself). `leftovers.rs` reads `/proc`.
#[test]
fn every_input_is_read_through_read_text() {
    let offenders = library_lines_holding(
        &["fs::read_to_string(", "fs::read("],
        &[
            "crates/toolcall-score/src/errors.rs",
            "crates/toolcall-fs/",
            "crates/toolcall-mcp/src/leftovers.rs",
        ],
    );
    assert!(
        offenders.is_empty(),
        "read input files with toolcall_score::read_text:\n{}",
        offenders.join("\n")
    );
}

/// `bench/run` without the tau-bench data says what is missing and where to get it, before it
/// spends minutes building (it used to build for three and exit 1 without a word).
#[cfg(unix)]
#[test]
fn bench_run_names_missing_data_before_building() {
    let output = std::process::Command::new(root().join("bench/run"))
        .arg("--quick")
        .env("ATP_TAU_BENCH_DIR", "/nonexistent/tau-bench")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tau-bench airline data is missing")
            && stderr.contains("ATP_TAU_BENCH_DIR=/nonexistent/tau-bench")
            && !stderr.contains("building the benches"),
        "{stderr}"
    );
}

/// README opens for someone who has never heard of the project: what it is, how to install it,
/// `toolcall init` and the first red and green test, and only then the repository's own set-up.
/// Every `toolcall` command in the first-gate section parses as this binary's command line
/// (tests/newcomer.rs runs them all, in the newcomer tier).
#[test]
fn readme_opens_with_install_then_the_first_gate() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = |heading: &str| {
        readme
            .find(heading)
            .unwrap_or_else(|| panic!("README has no {heading:?}"))
    };
    let (install, first, setup) = (
        at("\n## Install"),
        at("\n## Your first gate"),
        at("\n## Set up"),
    );
    assert!(
        install < first && first < setup,
        "the order: Install, Your first gate, Set up"
    );
    assert_eq!(
        readme[..install].matches("\n## ").count(),
        0,
        "nothing but the introduction before Install"
    );
    let section = &readme[first..setup];
    let mut checked = 0;
    for line in section.lines() {
        let command = line.split("  #").next().unwrap_or_default().trim();
        let Some(args) = command.strip_prefix("toolcall ") else {
            continue;
        };
        let mut words: Vec<&str> = args.split_whitespace().collect();
        // `--help` after the arguments: clap parses them all, then prints help and exits 0.
        words.push("--help");
        let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
            .args(&words)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README's `{command}` is not a toolcall command line: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 3, "the section's toolcall commands: {checked}");
}
