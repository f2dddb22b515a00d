//! `toolcall promote`: one turn (or trace) of a trace file into a case and its recording — and,
//! with `--baseline AGENT`, into that agent's baseline as a known failure with a note — so an
//! incident becomes a test in one command.

use std::path::PathBuf;

use toolcall_harness::accept::{self, AcceptError};
use toolcall_harness::Config;
use toolcall_rate::traces::{promote, PromoteOptions};
use toolcall_score::escape_path;

use crate::errors::{CliError, Outcome, Result};
use crate::output::{self, outln};

/// Arguments of `toolcall promote`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace file (OpenTelemetry GenAI spans, …; see --from).
    pub trace: PathBuf,
    /// The turn (span id, record uuid, step id) or the trace (trace id: every turn of it that made
    /// calls) to promote.
    #[arg(long)]
    pub id: String,
    /// The folder holding cases/, recorded/ and baselines/.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Read the file as this trace source instead of telling it from the content.
    #[arg(long, value_name = "SOURCE", value_parser = crate::output::trace_source_parser())]
    pub from: Option<&'static toolcall_traces::Source>,
    /// A tools array for a turn whose trace recorded no catalog (`PATTERN=FILE` as in `toolcall
    /// rate`; repeatable).
    #[arg(long, value_name = "[PATTERN=]FILE")]
    pub tools: Vec<String>,
    /// Record the response under recorded/AGENT and accept the case's failure into
    /// baselines/AGENT.json, with a note saying where it came from (the build stays green
    /// until the fix, and then the ratchet asks for the entry's removal).
    #[arg(long, value_name = "AGENT")]
    pub baseline: Option<String>,
    /// The agent directory under recorded/, without --baseline (default `incident`).
    #[arg(long, conflicts_with = "baseline")]
    pub agent: Option<String>,
    /// The group under cases/.
    #[arg(long, default_value = "incidents")]
    pub prefix: String,
    /// The baseline entry's note (default: the file and the turn it came from).
    #[arg(long, requires = "baseline")]
    pub note: Option<String>,
    /// Overwrite a case or recording that exists.
    #[arg(long)]
    pub force: bool,
}

/// Runs `toolcall promote`: 0 when written, 2 on bad input or a truncated trace.
pub fn run(args: &Args) -> Result {
    let agent = args
        .baseline
        .clone()
        .or_else(|| args.agent.clone())
        .unwrap_or_else(|| "incident".to_owned());
    for (what, name) in [("--baseline/--agent", agent.as_str())]
        .into_iter()
        .chain(args.prefix.split('/').map(|p| ("--prefix", p)))
    {
        if let Some(why) = toolcall_rate::import::safe_component(name) {
            return Err(CliError::usage(format!(
                "{what} `{}` cannot name a folder: {why}",
                toolcall_score::escape(name)
            )));
        }
    }
    let options = PromoteOptions {
        out: args.out.clone(),
        from: args.from,
        tools: args.tools.clone(),
        agent: agent.clone(),
        prefix: args.prefix.clone(),
        force: args.force,
    };
    let promoted = promote(&args.trace, &args.id, &options)?;
    for file in &promoted.files {
        outln!("wrote {}", escape_path(file));
    }
    let Some(baseline) = &args.baseline else {
        outln!(
            "promoted {} case(s); `toolcall check --root {}` runs them",
            promoted.cases.len(),
            escape_path(&args.out)
        );
        return Ok(Outcome::Pass);
    };
    let config = Config::for_root(&args.out);
    let selected: Vec<String> = promoted
        .cases
        .iter()
        .map(|case| format!("{baseline}::{case}"))
        .collect();
    match accept::accept(&config, &selected) {
        Ok(summary) => output::write_stdout(format_args!("{summary}")),
        Err(AcceptError::Nothing(e)) => {
            outln!(
                "the promoted case(s) pass: the scorer finds nothing wrong with the recorded \
                 answer, so there is no failure to put in the baseline ({e})"
            );
            return Ok(Outcome::Pass);
        }
        Err(e) => return Err(e.into()),
    }
    let note = args.note.clone().unwrap_or_else(|| {
        format!(
            "promoted from {} (--id {}): a known failure until it is fixed",
            args.trace.display(),
            args.id
        )
    });
    let file = config.baselines.join(format!("{baseline}.json"));
    set_notes(&file, &promoted.cases, &note)?;
    outln!(
        "noted in {}: {}",
        escape_path(&file),
        toolcall_score::escape(&note)
    );
    Ok(Outcome::Pass)
}

/// Puts `note` on the entries of `cases` in the baseline `file` (the rest untouched).
fn set_notes(file: &std::path::Path, cases: &[String], note: &str) -> Result<()> {
    let text = toolcall_score::read_text(file)?;
    let mut baseline: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| CliError::NotJson {
            path: file.to_path_buf(),
            expected: "JSON",
            source,
        })?;
    for case in cases {
        if let Some(entry) = baseline.get_mut(case).and_then(|e| e.as_object_mut()) {
            entry.insert("note".into(), serde_json::Value::from(note));
        }
    }
    let text = toolcall_score::to_json_pretty(&baseline).map_err(CliError::Serialize)?;
    toolcall_fs::write_atomic(file, format!("{text}\n").as_bytes()).map_err(|source| {
        CliError::Write {
            path: file.to_path_buf(),
            source,
        }
    })
}
