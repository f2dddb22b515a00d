//! MCP flows as tests of the suite: each `*.json` below a folder is replayed against its real
//! server and judged against its `expected_failure`, as `toolcall replay` judges it, so a
//! server's regressions fail `cargo test` (and nextest) like a case does.

use std::path::Path;

use libtest_mimic::{Failed, Trial};

/// One trial per flow below `dir`, named `flow::<path without .json>`; a flow that declares an
/// `expected_failure` is shown as `[xfail]` (not under `--list`, where nextest reads the names).
pub(crate) fn trials(dir: &Path, list: bool) -> Vec<Trial> {
    let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
    let hidden = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    let walk = match toolcall_fs::walk(dir, &hidden, &json) {
        Ok(walk) if !walk.files.is_empty() => walk,
        Ok(_) => return vec![problem(dir, "holds no flow (*.json)".into())],
        Err(e) => return vec![problem(dir, format!("cannot be read: {e}"))],
    };
    walk.files
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(dir).unwrap_or(&path).with_extension("");
            let name = format!(
                "flow::{}",
                toolcall_score::escape(&relative.to_string_lossy().replace('\\', "/"))
            );
            let declared = expects_failure(&path);
            let trial = Trial::test(name, move || replay(&path));
            if declared && !list {
                trial.with_kind("xfail")
            } else {
                trial
            }
        })
        .collect()
}

/// A failing trial for a flows folder that cannot be used.
fn problem(dir: &Path, why: String) -> Trial {
    let message = format!("{}: {why}", toolcall_score::escape_path(dir));
    Trial::test("flow::[discovery]", move || {
        Err(Failed::from(message.clone()))
    })
}

fn expects_failure(path: &Path) -> bool {
    toolcall_score::read_text(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("expected_failure").is_some_and(|e| !e.is_null()))
}

#[cfg(feature = "mcp")]
fn replay(path: &Path) -> Result<(), Failed> {
    use toolcall_mcp::{replay_blocking, Flow, Options, Outcome};
    let flow = Flow::load(path).map_err(|e| Failed::from(e.to_string()))?;
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    let outcome = Outcome::of(&flow, &report);
    if outcome.is_pass() {
        return Ok(());
    }
    let mut message = format!("{}: {outcome}", toolcall_score::escape_path(path));
    if !report.stderr_tail.is_empty() {
        message.push_str("\nserver stderr (last lines):");
        for line in &report.stderr_tail {
            message.push_str(&format!("\n  | {}", toolcall_score::escape(line)));
        }
    }
    Err(Failed::from(message))
}

#[cfg(not(feature = "mcp"))]
fn replay(path: &Path) -> Result<(), Failed> {
    Err(Failed::from(format!(
        "{}: replaying MCP flows needs toolcall-harness's feature `mcp` \
         (toolcall-harness = {{ …, features = [\"mcp\"] }})",
        toolcall_score::escape_path(path)
    )))
}
