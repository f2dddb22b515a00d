//! `toolcall import`: logged conversations in, cases and recorded responses out (see
//! `toolcall_rate::import` for the layout and the accepted inputs).

use std::path::PathBuf;
use toolcall_score::{escape, escape_path};

use toolcall_rate::{import, ImportOptions};

use crate::errors::{CliError, Outcome, Result};
use crate::output;

/// Arguments of `toolcall import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A conversation file (one conversation, a list, or objects carrying the messages, in any
    /// request format the scorer reads), a trace (OpenTelemetry GenAI spans, …: see --from), or
    /// a directory of them (a tools.json there is the catalog).
    pub input: PathBuf,
    /// Read the input as this trace source instead of telling it from the content.
    #[arg(long, value_name = "SOURCE", value_parser = crate::output::trace_source_parser())]
    pub from: Option<&'static toolcall_traces::Source>,
    /// Where cases/ and recorded/ are written.
    #[arg(long)]
    pub out: PathBuf,
    /// A tools array to use as the catalog (replaces tools found in the input).
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// The key holding each conversation's message list (default: messages, input, contents,
    /// traj, trajectory, conversation, history, turns).
    #[arg(long, value_name = "KEY")]
    pub messages_key: Option<String>,
    /// The agent directory under recorded/ (default: the conversation's model, else `imported`).
    #[arg(long)]
    pub agent: Option<String>,
    /// The group under cases/ (default: the input file's name without extension).
    #[arg(long)]
    pub prefix: Option<String>,
    /// Overwrite files that exist (otherwise nothing is written and the command fails).
    #[arg(long)]
    pub force: bool,
}

/// Runs `toolcall import`: exit 0 when written, 2 on bad input or files in the way.
pub fn run(args: &Args) -> Result {
    // `--agent` and `--prefix` are checked by the import itself, with every name it derives
    // (`toolcall_rate::import::safe_component`).
    let options = ImportOptions {
        out: args.out.clone(),
        agent: args.agent.clone(),
        prefix: args.prefix.clone(),
        messages_key: args.messages_key.clone(),
        tools: args.tools.clone(),
        force: args.force,
        from: args.from,
    };
    let summary = import(&args.input, &options)?;
    // A case is an assistant turn that called tools: none means the input is not what the user
    // thinks (a wrong `--messages-key`, logs without tool calls).
    let nothing = |why: String| {
        Err(CliError::File {
            path: args.input.clone(),
            why,
        })
    };
    match summary {
        summary if summary.cases == 0 && summary.not_judged > 0 => nothing(format!(
            "{} turn(s) made tool calls, but the trace recorded no catalog for any of them, so \
             there is nothing to judge them against: pass --tools FILE (a tools array)",
            summary.not_judged
        )),
        summary if summary.cases == 0 => nothing(format!(
            "read {} conversation(s), but no assistant turn in them calls a tool, so there is no \
             case to import (is `--messages-key` right for these logs?)",
            summary.conversations
        )),
        summary => {
            let agents: Vec<String> = summary
                .agents
                .iter()
                .map(|a| escape(a).to_string())
                .collect();
            output::outln!(
                "imported {} conversation(s): {} case(s) with {} tool call(s) into {}/cases and {}/recorded/{}",
                summary.conversations,
                summary.cases,
                summary.calls,
                escape_path(&args.out),
                escape_path(&args.out),
                agents.join(", ")
            );
            if summary.not_judged > 0 {
                output::outln!(
                    "left out {} turn(s) with calls whose trace recorded no catalog (--tools FILE \
                     supplies one)",
                    summary.not_judged
                );
            }
            if summary.folded > 0 {
                output::outln!("folded {} call(s) recorded more than once", summary.folded);
            }
            for note in &summary.notes {
                eprintln!("note: {}", escape(note));
            }
            for bad in &summary.bad {
                eprintln!("warning: skipped {}", escape(bad));
            }
            Ok(Outcome::Pass)
        }
    }
}
