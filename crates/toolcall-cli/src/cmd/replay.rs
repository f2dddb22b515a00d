//! `toolcall replay`: replay scripted tool calls against a real MCP server.
//!
//! Prints one line per step, the failure line and the server's stderr tail on the first failure,
//! and a summary with timings. A flow with `expected_failure` passes when the replay fails
//! exactly so (`XFAIL <flow>: <the failure>`), and fails when it fails otherwise or passes
//! (`FAIL <flow>: ...`, saying which). A skipped flow (`skip`, `skip_unless_env`) is
//! `SKIP <flow>: <why>` and fails nothing. Exit code 0 when every flow passed or was skipped,
//! 1 when one failed, 2 when a flow file is unreadable or invalid: that flow is an `error` in
//! every report, the others are replayed, and the exit code (and the `error:` line naming each
//! such file) comes after the reports are written.

use std::path::PathBuf;
use std::time::Duration;
use toolcall_score::escape_path;

use toolcall_mcp::{replay_blocking, Flow, Options, Outcome, Report};

use crate::errors::{CliError, Result};
use crate::output::{annotate, annotation, outln};

/// Arguments of `toolcall replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The flow files (`{"server": {...}, "calls": [...]}`), or folders of them: every `*.json`
    /// below a folder, in path order.
    #[arg(required = true)]
    pub flows: Vec<PathBuf>,
    /// Seconds allowed for start-up plus `initialize` (a flow's `timeouts` take precedence).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub init_timeout: f64,
    /// Seconds allowed for each request after `initialize` (a flow's `timeouts` take precedence).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub call_timeout: f64,
    #[command(flatten)]
    pub limit: crate::cmd::mcp::MessageLimit,
    /// Print the run as JSON instead of the step lines (the shape README documents).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub files: crate::outputs::Files,
    /// A JSON pointer into each response (`/result/content/*/text`; `*` is any member or item)
    /// left out of every `verify` step's comparison, besides the flow's own `ignore_paths`.
    /// Repeatable.
    #[arg(long = "ignore-path", value_name = "POINTER")]
    pub ignore_paths: Vec<String>,
    /// Accept the new responses of the `verify` steps: write each one that differs from its
    /// `recorded` (or has none) into the flow, in place and atomically, and say what changed. A
    /// flow whose every step matched is not touched, nor is one that fails otherwise.
    #[arg(long)]
    pub update: bool,
    /// Fail a flow on what the session check finds breaking the stdio transport: a line on
    /// stdout that is not JSON-RPC, a response whose id matches no request (or that answers
    /// one twice), an answer after its call timed out. Without it they are printed as notes;
    /// output on stderr is always a note (a server may log there).
    #[arg(long)]
    pub strict: bool,
}

fn seconds(flag: &str, secs: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            CliError::usage(format!(
                "--{flag} must be a positive number of seconds, not {secs}"
            ))
        })
}

/// Runs `toolcall replay`.
pub fn run(args: &Args) -> Result {
    let options = Options {
        initialize_timeout: seconds("init-timeout", args.init_timeout)?,
        call_timeout: seconds("call-timeout", args.call_timeout)?,
        max_message_bytes: args.limit.max_message_bytes,
        handle_ctrl_c: true,
        ignore_paths: args.ignore_paths.clone(),
        update: args.update,
        strict: args.strict,
        // `protocol: auto` remembers what each server spoke last (TOOLCALL_CACHE_DIR).
        protocol_cache: toolcall_mcp::default_protocol_cache(),
        ..Options::default()
    };
    if let Some(bad) = args
        .ignore_paths
        .iter()
        .find(|p| !(p.is_empty() || p.starts_with('/')))
    {
        return Err(CliError::usage(format!(
            "--ignore-path {} is not a JSON pointer; write /{}",
            toolcall_score::escape(bad),
            toolcall_score::escape(bad)
        )));
    }
    // Read every flow first, so that a typo is said before any server starts; a flow that
    // cannot be read is an error of its own, and the others still run.
    let files = super::json_files(&args.flows, "flow")?;
    let flows: Vec<(&PathBuf, std::result::Result<Flow, toolcall_mcp::FlowError>)> =
        files.iter().map(|path| (path, Flow::load(path))).collect();
    let inputs: Vec<&std::path::Path> = args.flows.iter().map(PathBuf::as_path).collect();
    if let Some((output, path)) = args.files.clobbers(&inputs) {
        return Err(CliError::usage(format!(
            "{} {} is a flow file: it would be overwritten; write the report elsewhere",
            output.flag(),
            escape_path(&path)
        )));
    }
    let mut failed = false;
    let (mut passed, mut as_expected, mut failures) = (0, 0, Vec::new());
    let (mut skipped, mut errors) = (0, Vec::new());
    // A flow --update could not write: the run goes on, and its reports are still written.
    let mut update_errors: Vec<CliError> = Vec::new();
    let mut runs = Vec::with_capacity(flows.len());
    for (path, flow) in &flows {
        if flows.len() > 1 && !args.json {
            outln!("replay {}", escape_path(path));
        }
        let flow = match flow {
            Ok(flow) => flow,
            Err(error) => {
                // One flow alone is said once, as the `error:` line.
                if flows.len() > 1 && !args.json {
                    outln!("ERROR {}: {error}", escape_path(path));
                }
                annotate(&annotation(
                    &escape_path(path).to_string(),
                    None,
                    "toolcall replay",
                    &error.to_string(),
                ));
                runs.push(crate::outputs::model::FlowRun::error(path, error));
                errors.push(error);
                continue;
            }
        };
        let report = replay_blocking(flow, &options, &mut |step| {
            if !args.json {
                outln!("{step}")
            }
        });
        let outcome = Outcome::of(flow, &report);
        let strict_findings = outcome.session_failures(&report, args.strict);
        if !args.json {
            print_end(&report, &outcome);
            for finding in &report.session {
                // A transport-breaking finding is said as one under --strict even in a flow
                // that failed otherwise (the JSON's `fails` is only for what failed the flow).
                let said = if finding.fails_under(args.strict) {
                    "finding"
                } else {
                    "note"
                };
                outln!("{said}: session: {finding}");
            }
            // The protocol cache was unreadable, or wrong about the server.
            for note in &report.protocol_notes {
                outln!("note: protocol: {}", toolcall_score::escape(note));
            }
        }
        let updated = match update(flow, &report, args.json) {
            Ok(updated) => updated,
            Err(error) => {
                if !args.json {
                    outln!("ERROR {}: not updated: {error}", escape_path(&flow.path));
                }
                update_errors.push(error);
                Vec::new()
            }
        };
        let strict_failed = strict_findings > 0;
        if strict_failed && !args.json {
            outln!(
                "FAIL {}: the session check found {strict_findings} thing(s) (--strict)",
                escape_path(&flow.path),
            );
        }
        failed |= outcome.is_failure() || strict_failed;
        match outcome {
            _ if strict_failed => failures.push(escape_path(&flow.path).to_string()),
            Outcome::Passed => passed += 1,
            Outcome::FailedAsExpected(_) => as_expected += 1,
            Outcome::Skipped(_) => skipped += 1,
            _ => failures.push(escape_path(&flow.path).to_string()),
        }
        let mut run = crate::outputs::model::FlowRun::of(flow, &report, &outcome, args.strict);
        run.updated = updated;
        runs.push(run);
    }
    if flows.len() > 1 && !args.json {
        outln!(
            "\nreplayed {} flow(s): {passed} passed, {as_expected} failed as expected, {} failed{}{}{}",
            flows.len(),
            failures.len(),
            if failures.is_empty() {
                String::new()
            } else {
                format!(" ({})", failures.join(", "))
            },
            if skipped > 0 {
                format!(", {skipped} skipped")
            } else {
                String::new()
            },
            if errors.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} could not be read ({})",
                    errors.len(),
                    flows
                        .iter()
                        .filter(|(_, f)| f.is_err())
                        .map(|(p, _)| escape_path(p).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    }
    failed |= !errors.is_empty() || !update_errors.is_empty();
    if args.json || args.files.any() {
        let model = crate::outputs::model::ReplayRun { flows: runs };
        let run = crate::outputs::value("replay", !failed, &model)?;
        if args.json {
            crate::output::write_stdout(format_args!(
                "{}",
                crate::outputs::Output::Json.render(&run)
            ));
        }
        args.files.write(&run)?;
    }
    // Bad input, as one flow alone has always been, or a flow that could not be written: exit
    // 2, now with every report written.
    if !errors.is_empty() || !update_errors.is_empty() {
        let mut errors: Vec<CliError> = flows
            .into_iter()
            .filter_map(|(_, f)| f.err())
            .map(CliError::Flow)
            .chain(update_errors)
            .collect();
        return Err(if errors.len() == 1 {
            errors.remove(0)
        } else {
            CliError::Each(errors)
        });
    }
    Ok(crate::errors::Outcome::of(!failed))
}

/// Under `--update`, writes the `verify` steps' new responses into a flow that otherwise
/// passed; the labels of the steps written.
fn update(flow: &Flow, report: &Report, json: bool) -> Result<Vec<String>> {
    if report.updates.is_empty() {
        return Ok(Vec::new());
    }
    if report.failure.is_some() {
        if !json {
            outln!(
                "not updated: {} fails for another reason; fix that first",
                escape_path(&flow.path)
            );
        }
        return Ok(Vec::new());
    }
    let updated = toolcall_mcp::update_flow(flow, &report.updates)?;
    if !json {
        outln!("{updated}");
    }
    Ok(report.updates.iter().map(|u| u.label.clone()).collect())
}

fn print_end(report: &Report, outcome: &Outcome) {
    let flow = escape_path(&report.flow).to_string();
    if let Outcome::Skipped(reason) = outcome {
        outln!("SKIP {flow}: {}", toolcall_score::escape(reason));
        return;
    }
    if let Outcome::FailedAsExpected(failure) = outcome {
        outln!("{}", report.summary_as_expected());
        outln!("XFAIL {flow}: {failure}");
        return;
    }
    if let Some(failure) = &report.failure {
        outln!("{failure}");
        if !report.stderr_tail.is_empty() {
            outln!(
                "server stderr (last {} lines, {} bytes in all):",
                report.stderr_tail.len(),
                report.stderr_bytes
            );
            for line in &report.stderr_tail {
                outln!("  | {}", toolcall_score::escape(line));
            }
        }
    }
    outln!("{}", report.summary());
    let failure = match outcome {
        Outcome::Passed | Outcome::FailedAsExpected(_) | Outcome::Skipped(_) => return,
        Outcome::Failed(failure) => failure.to_string(),
        Outcome::FailedDifferently { .. } | Outcome::PassedUnexpectedly { .. } => {
            outln!("FAIL {flow}: {outcome}");
            outcome.to_string()
        }
    };
    annotate(&annotation(&flow, None, "toolcall replay", &failure));
}
