//! `toolcall score`: one response against a case or a bare tools array.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `toolcall score`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case file (system prompt, tools, transcript).
    #[arg(long, conflicts_with = "tools", required_unless_present = "tools")]
    pub case: Option<PathBuf>,
    /// A provider's own tools array, for the bare membership check.
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// The response file, in the provider's own JSON.
    #[arg(long)]
    pub response: PathBuf,
    /// The response format; detected from its shape when not given.
    #[arg(long)]
    pub format: Option<toolcall_score::Format>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcall score`.
pub fn run(args: &Args) -> ExitCode {
    let _ = args;
    ExitCode::SUCCESS
}
