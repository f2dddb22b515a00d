//! `toolcall rate`: the rate of unknown tool names over recorded responses, JSONL logs, or a live
//! model, with the distinct names and a gate.
//!
//! Exit codes: 0 the gate held (or none was set), 1 the gate was exceeded (the names are printed
//! either way), 2 bad input or an incomplete live run (a case whose request failed).

use std::path::{Path, PathBuf};
use std::time::Duration;
use toolcall_score::escape_path;

use toolcall_rate::live::{self, LiveOptions, Provider, RequestSettings, RetryPolicy};
use toolcall_rate::{rate_jsonl, rate_tree, Gate, LiveCounts, Report, ScanOptions};
use toolcall_score::Format;

use crate::errors::{CliError, Outcome, Result};
use crate::output;

/// Arguments of `toolcall rate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSONL logs, one {"request": ..., "response": ...} per line (`-` for stdin); traces
    /// (OpenTelemetry GenAI spans, …: see --from), read straight from their files; or a folder
    /// `toolcall import --out` wrote.
    #[arg(conflicts_with_all = ["recorded", "live"])]
    pub logs: Vec<PathBuf>,
    /// Read every input as this trace source instead of telling it from the content.
    #[arg(long, value_name = "SOURCE", value_parser = crate::output::trace_source_parser())]
    pub from: Option<&'static toolcall_traces::Source>,
    /// A tools array to judge trace turns against when their trace recorded no catalog
    /// (otherwise they are counted as not judged); `PATTERN=FILE` for the turns whose agent or
    /// span name, or model, matches PATTERN (`*` for any run of characters). Repeatable: the
    /// first that matches a turn gives its catalog.
    #[arg(long, value_name = "[PATTERN=]FILE", conflicts_with_all = ["recorded", "live"])]
    pub tools: Vec<String>,
    /// The cases directory (tree and live modes).
    #[arg(long, default_value = "cases")]
    pub cases: PathBuf,
    /// One agent's recorded responses: recorded/<agent> (tree mode).
    #[arg(long, conflicts_with = "live")]
    pub recorded: Option<PathBuf>,
    /// Ask a live model over the cases: openai (Chat Completions) or anthropic (Messages).
    #[arg(long, value_name = "PROVIDER")]
    pub live: Option<Provider>,
    /// The API base URL (default https://api.openai.com/v1, https://api.anthropic.com).
    #[arg(long, requires = "live")]
    pub base_url: Option<String>,
    /// The model name to ask.
    #[arg(
        long,
        requires = "live",
        required_if_eq("live", "openai"),
        required_if_eq("live", "anthropic")
    )]
    pub model: Option<String>,
    /// The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY;
    /// a local server needs none).
    #[arg(long, requires = "live", value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Write each live response to DIR/<case-id>.json as it arrives; cases recorded there are
    /// not asked again (resume is the default).
    #[arg(long, requires = "live", value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Ask every case, even those recorded in --record-dir (their files are overwritten).
    #[arg(long, requires = "live")]
    pub fresh: bool,
    /// Stop after this many HTTP requests (retries included).
    #[arg(long, requires = "live")]
    pub max_requests: Option<u64>,
    /// Stop once this many tokens were used, from the responses' `usage`.
    #[arg(long, requires = "live")]
    pub max_tokens: Option<u64>,
    /// Retries on 429, 5xx and dropped connections.
    #[arg(long, requires = "live", default_value_t = 4)]
    pub max_retries: u32,
    /// The longest wait between retries, in seconds (a longer Retry-After fails the case).
    #[arg(long, requires = "live", default_value_t = 60.0)]
    pub max_backoff: f64,
    /// Seconds one request may take (the first request to a local server loads the model).
    #[arg(long, requires = "live", default_value_t = 600.0)]
    pub timeout: f64,
    /// The tool_choice sent with every request that has tools.
    #[arg(long, requires = "live", default_value = "auto")]
    pub tool_choice: String,
    /// The output token limit per request (Anthropic default 1024; OpenAI sends none unless set).
    #[arg(long, requires = "live")]
    pub max_output_tokens: Option<u64>,
    /// Sampling temperature.
    #[arg(long, requires = "live")]
    pub temperature: Option<f64>,
    /// Fail (exit 1) when more calls than this name an unknown tool.
    #[arg(long, value_name = "N")]
    pub max_unknown: Option<u64>,
    /// Fail (exit 1) when unknown / calls is above this (e.g. 0.01).
    #[arg(long, value_name = "R")]
    pub max_rate: Option<f64>,
    /// Fail (exit 1) when fewer calls than this were scored.
    #[arg(long, value_name = "N")]
    pub min_calls: Option<u64>,
    /// The response format, when detection should not run.
    #[arg(long, value_parser = crate::output::format_parser())]
    pub format: Option<Format>,
    /// Make the first unreadable line or file fatal (exit 2).
    #[arg(long)]
    pub strict: bool,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print the report as JSON (the stable shape documented in toolcall_rate::Report).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub files: crate::outputs::Files,
    /// No progress output on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Rates the positional inputs, each what `toolcall_rate::inputs` tells it is (a folder
/// `import` wrote, a log, a trace file); the tallies of all of them added up.
fn rate_inputs(args: &Args, scan: &ScanOptions) -> Result<toolcall_rate::Tally> {
    use toolcall_rate::inputs::{classify, Input};
    let mut tally = toolcall_rate::Tally::default();
    let mut files = Vec::new();
    for path in &args.logs {
        // A folder is told by `classify`'s rules; a file is told while it is read, by
        // `rate_traces_or_logs`, which opens it once.
        if path.is_dir() {
            if let Input::Imported(tree) = classify(path, args.from.is_some())? {
                for agent in &tree.agents {
                    tally.merge(rate_tree(&tree.cases, agent, scan)?.tally);
                }
                continue;
            }
        }
        files.push(path.clone());
    }
    // Each file is opened once: a trace is rated as it is told from its first records, and
    // what is not one comes back for the log reader.
    let (traced, logs) =
        toolcall_rate::traces::rate_traces_or_logs(&files, args.from, &args.tools, scan)?;
    if !logs.is_empty() {
        tally.merge(rate_jsonl(&logs, scan)?);
    }
    tally.merge(traced);
    Ok(tally)
}

/// Runs `toolcall rate`.
pub fn run(args: &Args) -> Result {
    if let Some(rate) = args.max_rate {
        if !(0.0..=1.0).contains(&rate) {
            return Err(CliError::usage(format!(
                "--max-rate {rate}: expected a rate from 0 to 1"
            )));
        }
    }
    let inputs: Vec<&Path> = args.logs.iter().map(PathBuf::as_path).collect();
    if let Some((output, path)) = args.files.clobbers(&inputs) {
        return Err(CliError::usage(format!(
            "{} {} is an input log: it would be overwritten; write the report elsewhere",
            output.flag(),
            escape_path(&path)
        )));
    }
    let gate = Gate {
        max_unknown: args.max_unknown,
        max_rate: args.max_rate,
        min_calls: args.min_calls,
    };
    let scan = ScanOptions {
        threads: args.threads,
        progress: !args.quiet && toolcall_rate::scan::progress_wanted(),
        strict: args.strict,
        format: args.format,
    };
    let mut incomplete = false;
    let report = if let Some(provider) = args.live {
        let (report, failed) = live_report(args, provider, gate)?;
        incomplete = failed;
        report
    } else if let Some(recorded) = &args.recorded {
        let tree = rate_tree(&args.cases, recorded, &scan)?;
        let mut report = Report::new(tree.tally, gate);
        report.unrecorded = tree.unrecorded;
        report
    } else if !args.logs.is_empty() {
        Report::new(rate_inputs(args, &scan)?, gate)
    } else {
        return Err(CliError::usage(
            "nothing to rate: give JSONL logs, --recorded recorded/<agent>, or --live PROVIDER",
        ));
    };
    let run = crate::outputs::value("rate", report.passed(), &report)?;
    if args.json {
        output::write_stdout(format_args!(
            "{}",
            crate::outputs::Output::Json.render(&run)
        ));
    } else {
        output::outln!("{report}");
    }
    // After the report is printed, so a file that cannot be written costs nothing of it; its
    // folder is made when missing, and a half-written report is never left.
    args.files.write(&run)?;
    if output::in_github_actions() && !report.passed() {
        for d in &report.distinct {
            // The file and line go in their own properties (GitHub places the annotation by
            // them); `first_seen`, which may carry a log line's `id`, goes in the message.
            let mut message = format!(
                "`{}` called {} time(s) ({})",
                toolcall_score::escape(&d.name),
                d.count,
                d.cause
            );
            if let Some(seen) = &d.first_seen {
                message.push_str(&format!(", first in {}", toolcall_score::escape(seen)));
            }
            let file = d
                .first_file
                .as_deref()
                .map(|f| output::repo_relative(Path::new(f)))
                .unwrap_or_default();
            let line = d.first_line.and_then(|l| usize::try_from(l).ok());
            output::annotate(&output::annotation(&file, line, "unknown_tool", &message));
        }
    }
    if incomplete {
        return Err(CliError::LiveIncomplete);
    }
    // Some unreadable lines in a day of logs are expected; all of them is a wrong path or
    // format, and a gate that scored nothing must not pass.
    // (Turns that were read but not judged, for want of a catalog, were read.)
    if report.responses == 0 && report.bad_lines > 0 && report.traces.not_judged_turns == 0 {
        return Err(CliError::NothingRead {
            unreadable: report.bad_lines,
        });
    }
    Ok(Outcome::of(report.passed()))
}

fn live_report(args: &Args, provider: Provider, gate: Gate) -> Result<(Report, bool)> {
    let Some(model) = args.model.clone().filter(|m| !m.is_empty()) else {
        return Err(CliError::usage(
            "--live needs --model NAME (the model the requests name)",
        ));
    };
    let variable = args
        .api_key_env
        .clone()
        .unwrap_or_else(|| provider.key_variable().to_owned());
    let api_key = match std::env::var(&variable) {
        Ok(key) if !key.is_empty() => Some(key),
        _ if args.api_key_env.is_some() => {
            return Err(CliError::usage(format!(
                "--api-key-env {variable}: the variable is not set or empty"
            )))
        }
        _ => None,
    };
    let seconds = |name: &str, s: f64| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| CliError::usage(format!("{name} {s}: expected seconds >= 0")))
    };
    let options = LiveOptions {
        provider,
        base_url: args
            .base_url
            .clone()
            .unwrap_or_else(|| provider.default_base_url().to_owned()),
        api_key,
        cases: args.cases.clone(),
        record_dir: args.record_dir.clone(),
        fresh: args.fresh,
        max_requests: args.max_requests,
        max_tokens: args.max_tokens,
        retry: RetryPolicy {
            max_retries: args.max_retries,
            max_wait: seconds("--max-backoff", args.max_backoff)?,
            ..RetryPolicy::default()
        },
        timeout: seconds("--timeout", args.timeout)?,
        settings: RequestSettings {
            model,
            tool_choice: args.tool_choice.clone(),
            max_output_tokens: args.max_output_tokens,
            temperature: args.temperature,
        },
        verbose: !args.quiet,
    };
    let run = live::run(&options)?;
    // The live counts are printed once, by the report (its `live:` line, or `"live"` in JSON).
    let failed = run.failed > 0;
    let mut report = Report::new(run.tally, gate);
    report.stopped = run.stopped;
    report.unrecorded = run.unasked;
    report.live = Some(LiveCounts {
        asked: run.asked,
        resumed: run.resumed,
        failed: run.failed,
        unasked: run.unasked,
        requests: run.requests,
        tokens: run.tokens,
    });
    Ok((report, failed))
}
