//! `toolcall`: the command-line face of toolcall-score.
//!
//! One module per subcommand under `cmd/`; each owns its clap arguments and returns its
//! [`errors::Outcome`] (exit 0 pass, 1 fail: a finding, a gate exceeded) or the
//! [`errors::CliError`] that stopped it, which `main` prints once and exits with its code (2 bad
//! input, 1 a server that failed).

// Doc comments on clap arguments are `--help` text, written for a terminal, not for rustdoc.
#![allow(rustdoc::bare_urls, rustdoc::invalid_html_tags)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod errors;
mod output;
mod outputs;

/// Gate CI on tool-call correctness: every tool call must name a tool defined in the request.
#[derive(Debug, Parser)]
#[command(name = "toolcall", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The largest input read whole: a case, tools, response, baseline or flow file, or one log
    /// line (read whole, JSON takes up to 10× its size in memory). Bytes, or with a unit: 200MB,
    /// 1GiB. Default 64MiB, or ATP_MAX_INPUT_BYTES.
    #[arg(long, global = true, value_name = "SIZE", value_parser = input_limit)]
    max_input_bytes: Option<u64>,
}

fn input_limit(text: &str) -> Result<u64, String> {
    toolcall_score::parse_bytes(text)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{text}` is not a size (bytes, or with a unit: 200MB, 1GiB)"))
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Scaffold a first gate here: cases/, recorded/, baselines/, an example, the test target.
    Init(cmd::init::Args),
    /// Score one response against a case (or a bare tools array).
    Score(cmd::score::Args),
    /// Lint a case for prompt drift: names the prompt tells the model to use that are not defined.
    Lint(cmd::lint::Args),
    /// Replay scripted tool calls against a real MCP server (stdio or streamable HTTP).
    Replay(cmd::replay::Args),
    /// Run every case for every recorded agent against the baselines, as a report.
    Check(cmd::check::Args),
    /// The rate of unknown tool names over recorded responses, JSONL logs or a live model.
    Rate(Box<cmd::rate::Args>),
    /// Turn logged conversations into cases and recorded responses.
    Import(cmd::import::Args),
    /// Turn one turn or trace of a trace file into a case (and, with --baseline, a known failure).
    Promote(cmd::promote::Args),
    /// Review or accept baseline changes one case at a time.
    Baseline(cmd::baseline::Args),
    /// An MCP server's catalog as a contract: a snapshot, and the classified drift from it.
    Mcp(cmd::mcp::Args),
    /// A proxy in front of a model API that checks every response against its own request, live.
    #[cfg(feature = "guard")]
    Guard(Box<cmd::guard::Args>),
    /// Print the JSON Schema of a case, flow or baseline file (for editors: name it with "$schema").
    Schema(cmd::schema::Args),
}

fn main() -> ExitCode {
    // The `parquet` crate panics on some malformed files; those panics are caught and reported
    // as the file's error, so they are not printed as crashes.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !toolcall_traces::in_caught_parquet_read() {
            report(info);
        }
    }));
    let cli = Cli::parse();
    if let Some(limit) = cli.max_input_bytes {
        toolcall_score::set_max_input_bytes(limit);
    }
    errors::exit(match cli.command {
        Command::Score(args) => cmd::score::run(&args),
        Command::Lint(args) => cmd::lint::run(&args),
        Command::Replay(args) => cmd::replay::run(&args),
        Command::Check(args) => cmd::check::run(&args),
        Command::Rate(args) => cmd::rate::run(&args),
        Command::Import(args) => cmd::import::run(&args),
        Command::Promote(args) => cmd::promote::run(&args),
        Command::Baseline(args) => cmd::baseline::run(&args),
        Command::Init(args) => cmd::init::run(&args),
        Command::Schema(args) => cmd::schema::run(&args),
        Command::Mcp(args) => cmd::mcp::run(&args),
        #[cfg(feature = "guard")]
        Command::Guard(args) => cmd::guard::run(&args),
    })
}

#[cfg(test)]
mod tests {
    /// clap checks its definitions (unique names, valid defaults) only when a command is built:
    /// this builds every subcommand, so a clash fails here rather than in a user's terminal.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
