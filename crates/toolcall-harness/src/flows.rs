//! MCP flows and catalog contracts as tests of the suite: each flow below a folder is replayed
//! against its real server and judged against its `expected_failure`, as `toolcall replay`
//! judges it; each catalog snapshot is compared with its server's live catalog, as `toolcall mcp
//! diff` compares it. A server's regressions fail `cargo test` (and nextest) like a case does.

use std::path::Path;

use libtest_mimic::{Failed, Trial};

/// The `*.json` files below `dir`, or the failing trial that says why there are none.
fn json_files(dir: &Path, what: &str) -> Result<Vec<std::path::PathBuf>, Trial> {
    let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
    let hidden = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    match toolcall_fs::walk(dir, &hidden, &json) {
        Ok(walk) if !walk.files.is_empty() => Ok(walk.files),
        Ok(_) => Err(problem(what, dir, "holds no *.json file".into())),
        Err(e) => Err(problem(what, dir, format!("cannot be read: {e}"))),
    }
}

/// The test name of `path` below `dir`: `<kind>::<path without .json>`.
fn name(kind: &str, dir: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(dir).unwrap_or(path).with_extension("");
    format!(
        "{kind}::{}",
        toolcall_score::escape(&relative.to_string_lossy().replace('\\', "/"))
    )
}

/// One trial per catalog snapshot below `dir`, named `catalog::<path without .json>`: the
/// snapshot's server, listed live, must not have drifted by a breaking or security change.
/// With `accept` (`ATP_BASELINE_WRITE=1`) a drifted snapshot is rewritten instead.
pub(crate) fn contracts(dir: &Path, accept: bool) -> Vec<Trial> {
    match json_files(dir, "catalog") {
        Ok(files) => files
            .into_iter()
            .map(|path| Trial::test(name("catalog", dir, &path), move || contract(&path, accept)))
            .collect(),
        Err(trial) => vec![trial],
    }
}

/// One trial per flow below `dir`, named `flow::<path without .json>`; a flow that declares an
/// `expected_failure` is shown as `[xfail]` (not under `--list`, where nextest reads the names).
pub(crate) fn trials(dir: &Path, list: bool) -> Vec<Trial> {
    let files = match json_files(dir, "flow") {
        Ok(files) => files,
        Err(trial) => return vec![trial],
    };
    files
        .into_iter()
        .map(|path| {
            let name = name("flow", dir, &path);
            let declared = expects_failure(&path);
            let skipped = skipped(&path);
            let trial = Trial::test(name, move || replay(&path));
            // A skipped flow (`skip`, `skip_unless_env`) is an ignored test, never a pass.
            let trial = trial.with_ignored_flag(skipped);
            if declared && !list {
                trial.with_kind("xfail")
            } else {
                trial
            }
        })
        .collect()
}

/// A failing trial for a folder that cannot be used.
fn problem(kind: &str, dir: &Path, why: String) -> Trial {
    let message = format!("{}: {why}", toolcall_score::escape_path(dir));
    Trial::test(format!("{kind}::[discovery]"), move || {
        Err(Failed::from(message.clone()))
    })
}

fn expects_failure(path: &Path) -> bool {
    toolcall_score::read_text(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("expected_failure").is_some_and(|e| !e.is_null()))
}

/// Whether the flow at `path` says it is skipped; a flow that cannot be read is not (its trial
/// fails, saying why).
fn skipped(path: &Path) -> bool {
    #[cfg(feature = "mcp")]
    {
        toolcall_mcp::Flow::load(path).is_ok_and(|flow| flow.skip.is_some())
    }
    #[cfg(not(feature = "mcp"))]
    {
        let _ = path;
        false
    }
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

#[cfg(feature = "mcp")]
fn contract(path: &Path, accept: bool) -> Result<(), Failed> {
    use toolcall_mcp::catalog::{self, Severity};
    let shown = toolcall_score::escape_path(path);
    let text = toolcall_score::read_text(path).map_err(|e| Failed::from(e.to_string()))?;
    let old: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failed::from(format!("{shown}: not a catalog snapshot: {e}")))?;
    let flow_path = catalog::flow_of(&old, path).ok_or_else(|| {
        Failed::from(format!(
            "{shown}: names no flow; write it with toolcall mcp snapshot FLOW --out {shown}"
        ))
    })?;
    let flow = toolcall_mcp::Flow::load(&flow_path).map_err(|e| Failed::from(e.to_string()))?;
    let (tools, report) =
        toolcall_mcp::list_catalog_blocking(&flow, &toolcall_mcp::Options::default());
    let tools = tools.map_err(|f| {
        Failed::from(format!(
            "{shown}: cannot list the server of {}: {f}{}",
            toolcall_score::escape_path(&flow_path),
            report
                .stderr_tail
                .iter()
                .map(|l| format!("\n  | {}", toolcall_score::escape(l)))
                .collect::<String>()
        ))
    })?;
    let new = catalog::naming_flow(catalog::snapshot(&tools), &flow_path, path);
    let changes = catalog::diff(&old, &new);
    if accept && !changes.is_empty() {
        let text = toolcall_score::to_json_pretty(&new).map_err(|e| Failed::from(e.to_string()))?;
        return toolcall_fs::write_atomic(path, format!("{text}\n").as_bytes())
            .map_err(|e| Failed::from(format!("{shown}: cannot write: {e}")));
    }
    if changes.iter().all(|c| c.severity < Severity::Security) {
        return Ok(());
    }
    let lines: Vec<String> = changes.iter().map(|c| format!("  {c}")).collect();
    Err(Failed::from(format!(
        "{shown}: the server's catalog drifted:\n{}\nto accept it: toolcall mcp diff {} \
         --snapshot {shown} --write, or ATP_BASELINE_WRITE=1 cargo test",
        lines.join("\n"),
        toolcall_score::escape_path(&flow_path)
    )))
}

#[cfg(not(feature = "mcp"))]
fn contract(path: &Path, _accept: bool) -> Result<(), Failed> {
    replay(path)
}

#[cfg(not(feature = "mcp"))]
fn replay(path: &Path) -> Result<(), Failed> {
    Err(Failed::from(format!(
        "{}: replaying MCP flows needs toolcall-harness's feature `mcp` \
         (toolcall-harness = {{ …, features = [\"mcp\"] }})",
        toolcall_score::escape_path(path)
    )))
}
