//! `Harness::flows` as a user's `cargo test` would have it: a folder of flows, each a test
//! `flow::<path>` judged against its `expected_failure`. This binary's one test runs the binary
//! again as that suite (with `ATP_HARNESS_FLOWS_CHILD` set) and checks the child's tests and
//! exit code.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const CHILD: &str = "ATP_HARNESS_FLOWS_CHILD";

fn flows_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../flows")
}

fn main() -> ExitCode {
    if let Some(dir) = std::env::var_os(CHILD) {
        return suite(Path::new(&dir));
    }
    // The parent is a test binary like any other, so cargo test and nextest can list and run it.
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![libtest_mimic::Trial::test(
        "harness::flows_as_tests",
        || check().map_err(libtest_mimic::Failed::from),
    )];
    libtest_mimic::run(&args, trials).exit_code()
}

/// The suite the child runs: the flows under `dir` alone.
fn suite(dir: &Path) -> ExitCode {
    // A suite of flows alone: no case tree, no recordings.
    let nowhere = dir.join("no-such-tree");
    toolcall_harness::Harness::new()
        .cases(nowhere.join("cases"))
        .recorded(nowhere.join("recorded"))
        .baselines(nowhere.join("baselines"))
        .flows(dir)
        .run()
}

/// Runs the suite as a child over two example flows, then with a stale `expected_failure`.
fn check() -> Result<(), String> {
    let scratch =
        std::env::temp_dir().join(format!("toolcall-harness-flows-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("billing")).unwrap();
    for name in ["refund.json", "renamed-tool.json"] {
        std::fs::copy(flows_dir().join(name), scratch.join("billing").join(name)).unwrap();
    }
    let run = |dir: &Path| {
        Command::new(std::env::current_exe().unwrap())
            .env(CHILD, dir)
            .env("ATP_REFUND_SERVER", env!("CARGO_BIN_EXE_refund-server"))
            .env_remove("ATP_CASES")
            .env_remove("ATP_RECORDED")
            .output()
            .unwrap()
    };
    // libtest pads the names into a column: compare with the padding collapsed.
    let collapsed = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let out = run(&scratch);
    let text = collapsed(&out.stdout);
    let mut failed = Vec::new();
    if out.status.code() != Some(0) {
        failed.push(format!(
            "the flows suite failed:\n{text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    for line in [
        "test flow::billing/refund ... ok",
        "test [xfail] flow::billing/renamed-tool ... ok",
    ] {
        if !text.contains(line) {
            failed.push(format!("missing {line:?} in:\n{text}"));
        }
    }
    // A flow whose expected failure no longer happens fails its test, saying so.
    let mut flow: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.join("billing/refund.json")).unwrap(),
    )
    .unwrap();
    flow["expected_failure"] =
        serde_json::json!("step 1: search_orders: a failure that does not happen");
    std::fs::write(scratch.join("billing/refund.json"), flow.to_string()).unwrap();
    let out = run(&scratch);
    let text = collapsed(&out.stdout);
    if out.status.code() != Some(101) || !text.contains("flow::billing/refund ... FAILED") {
        failed.push(format!(
            "a flow that passes against its expected_failure must fail:\n{text}"
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n\n"))
    }
}
