//! `Harness::flows` as a user's `cargo test` would have it: a folder of flows, each a test
//! `flow::<path>` judged against its `expected_failure`. This module's one test runs the test
//! binary again as that suite (with `ATP_HARNESS_FLOWS_CHILD` set, which [`child`] answers
//! before anything else runs) and checks the child's tests and exit code.

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::flows_dir;

const CHILD: &str = "ATP_HARNESS_FLOWS_CHILD";

/// When this process is the child [`check`] starts: the suite's exit code.
pub(crate) fn child() -> Option<ExitCode> {
    let dir = std::env::var_os(CHILD)?;
    Some(suite(Path::new(&dir)))
}

/// The parent's one trial: the child is a test binary like any other, so cargo test and
/// nextest can list and run it.
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    vec![libtest_mimic::Trial::test(
        "harness::flows_as_tests",
        || check().map_err(libtest_mimic::Failed::from),
    )]
}

/// The suite the child runs: the flows under `dir` alone.
fn suite(dir: &Path) -> ExitCode {
    // A suite of flows and catalog contracts alone: no case tree, no recordings.
    let nowhere = dir.join("no-such-tree");
    toolcall_harness::Harness::new()
        .cases(nowhere.join("cases"))
        .recorded(nowhere.join("recorded"))
        .baselines(nowhere.join("baselines"))
        .flows(dir.join("flows"))
        .mcp_contracts(dir.join("catalog"))
        .run()
}

/// Runs the suite as a child over two example flows, then with a stale `expected_failure`.
fn check() -> Result<(), String> {
    let scratch =
        std::env::temp_dir().join(format!("toolcall-harness-flows-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let billing = scratch.join("flows/billing");
    std::fs::create_dir_all(&billing).unwrap();
    for name in ["refund.json", "renamed-tool.json"] {
        std::fs::copy(flows_dir().join(name), billing.join(name)).unwrap();
    }
    // A catalog contract: the fault server's catalog as `toolcall mcp snapshot` writes it.
    let server_flow = |mode: &str| {
        let flow = serde_json::json!({
            "server": {"command": env!("CARGO_BIN_EXE_fault-server"), "args": [mode]},
            "calls": []
        });
        std::fs::create_dir_all(scratch.join("servers")).unwrap();
        std::fs::write(scratch.join("servers/fault.json"), flow.to_string()).unwrap();
    };
    server_flow("ok");
    let flow_path = scratch.join("servers/fault.json");
    let snapshot_path = scratch.join("catalog/fault.json");
    let flow = toolcall_mcp::Flow::load(&flow_path).unwrap();
    let (tools, _) = toolcall_mcp::list_catalog_blocking(&flow, &toolcall_mcp::Options::default());
    let snapshot = toolcall_mcp::catalog::naming_flow(
        toolcall_mcp::catalog::snapshot(&tools.unwrap()),
        &flow_path,
        &snapshot_path,
    );
    std::fs::create_dir_all(scratch.join("catalog")).unwrap();
    std::fs::write(&snapshot_path, snapshot.to_string()).unwrap();
    let run_with = |dir: &Path, write: bool| {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .env(CHILD, dir)
            .env("ATP_REFUND_SERVER", env!("CARGO_BIN_EXE_refund-server"))
            .env_remove("ATP_CASES")
            .env_remove("ATP_RECORDED")
            .env_remove("ATP_BASELINE_WRITE");
        // Under nextest the child would count as a one-test process, where a baseline write
        // is refused as a partial run: it is a whole suite of its own.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("NEXTEST") {
                command.env_remove(key);
            }
        }
        if write {
            command.env("ATP_BASELINE_WRITE", "1");
        }
        command.output().unwrap()
    };
    let run = |dir: &Path| run_with(dir, false);
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
        "test catalog::fault ... ok",
    ] {
        if !text.contains(line) {
            failed.push(format!("missing {line:?} in:\n{text}"));
        }
    }
    // The server's catalog drifts: its contract fails, naming the change; ATP_BASELINE_WRITE=1
    // accepts it, and the contract holds again.
    server_flow("drifted");
    let out = run(&scratch);
    let text = collapsed(&out.stdout);
    if out.status.code() != Some(101)
        || !text.contains("catalog::fault ... FAILED")
        || !text.contains("breaking: `echo` now requires `text`")
    {
        failed.push(format!("a drifted catalog must fail its contract:\n{text}"));
    }
    let _ = run_with(&scratch, true);
    let out = run(&scratch);
    if !collapsed(&out.stdout).contains("test catalog::fault ... ok") {
        failed.push(format!(
            "after ATP_BASELINE_WRITE=1 the contract holds:\n{}",
            collapsed(&out.stdout)
        ));
    }
    server_flow("ok");
    // A flow whose expected failure no longer happens fails its test, saying so.
    let mut flow: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(billing.join("refund.json")).unwrap())
            .unwrap();
    flow["expected_failure"] =
        serde_json::json!("step 1: search_orders: a failure that does not happen");
    std::fs::write(billing.join("refund.json"), flow.to_string()).unwrap();
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
