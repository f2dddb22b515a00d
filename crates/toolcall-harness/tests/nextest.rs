//! The harness under `cargo nextest run`, one process per test: the embedding example's test
//! binary (`examples/embedding/tests/toolcall.rs`) is pointed at this crate's fixture trees with
//! `ATP_*` variables and run by nextest, which lists it with `--list --format terse` (and
//! `--ignored`), then runs each test with `--exact NAME --nocapture`.
//!
//! Needs `cargo-nextest` on PATH, so it sits behind the `nextest-tests` feature and is run by
//! `scripts/test`; without nextest it fails rather than skips.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};

use libtest_mimic::{Arguments, Failed, Trial};

const PACKAGE: &str = "toolcall-embedding-example";

type Test = fn() -> Result<(), Failed>;

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let tests: [(&str, Test); 6] = [
        ("nextest::green_tree_passes", green_tree_passes),
        (
            "nextest::known_failures_say_so_in_the_output_and_junit",
            known_failures_say_so,
        ),
        (
            "nextest::red_tree_fails_with_the_right_tests",
            red_tree_fails,
        ),
        (
            "nextest::partitions_cover_every_test_once",
            partitions_cover_every_test_once,
        ),
        ("nextest::list_names_every_test", list_names_every_test),
        (
            "nextest::baseline_write_is_refused",
            baseline_write_is_refused,
        ),
    ];
    // Each test runs cargo, which serialises on the build directory anyway.
    let mut args = args;
    args.test_threads = Some(1);
    let trials = tests
        .into_iter()
        .map(|(name, test)| Trial::test(name, test))
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `cargo nextest <args>` on the embedding example, pointed at a fixture tree.
fn nextest(tree: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let tree = fixture(tree);
    let mut command = Command::new(env!("CARGO"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("ATP_") || key.starts_with("INSTA_") || key.starts_with("GITHUB_") {
            command.env_remove(&*key);
        }
    }
    command
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .arg("nextest")
        .args(args)
        .args(["-p", PACKAGE, "--test", "toolcall"])
        .env("ATP_CASES", tree.join("cases"))
        .env("ATP_RECORDED", tree.join("recorded"))
        .env("ATP_BASELINES", tree.join("baselines"))
        .env("ATP_SNAPSHOTS", tree.join("snapshots"))
        .env("CI", "true")
        .env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("cargo runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Test names nextest reports with `status` (`PASS`, `FAIL`).
fn reported(output: &str, status: &str) -> BTreeSet<String> {
    output
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{status} [")))
        .filter_map(|l| l.split(&format!("{PACKAGE}::toolcall ")).nth(1))
        .map(|name| name.trim().to_owned())
        .collect()
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

fn green_tree_passes() -> Result<(), Failed> {
    let output = nextest("green", &["run"], &[]);
    let out = text(&output);
    ensure!(output.status.success(), "{out}");
    ensure!(out.contains("14 tests run: 14 passed"), "{out}");
    ensure!(
        reported(&out, "PASS").contains("claude::billing/retired"),
        "{out}"
    );
    Ok(())
}

/// nextest shows a known failure as PASS; its `XFAIL` line (shown by this repository's
/// `.config/nextest.toml` override, the one `toolcall init` writes) says what it is, in the
/// terminal and in the JUnit report, and a clean case prints nothing at all.
fn known_failures_say_so() -> Result<(), Failed> {
    // nextest writes its store (the JUnit report with it) under the workspace root's `target/`,
    // whatever CARGO_TARGET_DIR says (nextest-rs/nextest#883), and no command prints where: so
    // the run is told where, by a tool config file (the repository's own config still decides
    // the profile), under cargo's scratch directory for this test.
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nextest-junit");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let store = scratch.join("store");
    let tool_config = scratch.join("tool-config.toml");
    // A JSON string is a TOML basic string: the same escapes.
    let store_toml = serde_json::to_string(&store.to_string_lossy()).map_err(|e| e.to_string())?;
    std::fs::write(&tool_config, format!("[store]\ndir = {store_toml}\n"))
        .map_err(|e| format!("{}: {e}", tool_config.display()))?;
    let tool_config = format!("toolcall-tests:{}", tool_config.display());
    let output = nextest(
        "green",
        &["run", "--profile", "ci", "--tool-config-file", &tool_config],
        &[],
    );
    let out = text(&output);
    ensure!(output.status.success(), "{out}");
    let xfail = "XFAIL claude::billing/invented: a known failure";
    ensure!(out.contains(xfail), "{out}");
    ensure!(
        out.matches("XFAIL ").count() == 6,
        "the six known failures of the green tree:\n{out}"
    );
    ensure!(
        !out.contains("test claude::billing/clean ... ok"),
        "no libtest framing around a case test:\n{out}"
    );
    let junit = store.join("ci/junit.xml");
    let junit = std::fs::read_to_string(&junit).map_err(|e| format!("{}: {e}", junit.display()))?;
    ensure!(junit.contains(xfail), "{junit}");
    Ok(())
}

fn red_tree_fails() -> Result<(), Failed> {
    let output = nextest("red", &["run", "--no-fail-fast"], &[]);
    let out = text(&output);
    ensure!(!output.status.success(), "{out}");
    let failed = reported(&out, "FAIL");
    let expected: BTreeSet<String> = [
        "claude::billing/new-failure",
        "claude::billing/changed",
        "claude::billing/now-passes",
        "claude::broken/bad-syntax",
        "claude::[baseline]",
        "claude::[coverage]",
        "claude::billing/uncovered",
        "dummy-agent::[snapshot]",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    ensure!(failed == expected, "{failed:?}\n{out}");
    ensure!(
        out.contains("did you mean `get_invoice`?"),
        "the failure names the tool, cause and suggestion:\n{out}"
    );
    Ok(())
}

fn partitions_cover_every_test_once() -> Result<(), Failed> {
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for part in ["hash:1/2", "hash:2/2"] {
        let output = nextest("green", &["run", "--partition", part], &[]);
        let out = text(&output);
        ensure!(output.status.success(), "{part}: {out}");
        let passed = reported(&out, "PASS");
        ensure!(!passed.is_empty(), "{part} ran nothing:\n{out}");
        total += passed.len();
        seen.extend(passed);
    }
    ensure!(
        total == 14 && seen.len() == 14,
        "{total} runs, {} distinct",
        seen.len()
    );
    Ok(())
}

fn list_names_every_test() -> Result<(), Failed> {
    let output = nextest("red", &["list"], &[]);
    let out = text(&output);
    ensure!(output.status.success(), "{out}");
    let prefix = format!("{PACKAGE}::toolcall ");
    let listed: BTreeSet<&str> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix(&prefix))
        .collect();
    for name in [
        "suite::[discovery]",
        "claude::[coverage]",
        "claude::billing/expected",
        "dummy-agent::[snapshot]",
    ] {
        ensure!(listed.contains(name), "{name} not listed:\n{out}");
    }
    ensure!(listed.len() == 11, "{} listed:\n{out}", listed.len());
    Ok(())
}

fn baseline_write_is_refused() -> Result<(), Failed> {
    let output = nextest("green", &["run"], &[("ATP_BASELINE_WRITE", "1")]);
    let out = text(&output);
    ensure!(!output.status.success(), "{out}");
    ensure!(
        out.contains(
            "refuses to rewrite baselines from a partial run (nextest runs one process per test)"
        ),
        "{out}"
    );
    Ok(())
}
