//! `toolcall lint`: prompt drift in a case.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `toolcall lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case files to lint.
    #[arg(required = true)]
    pub cases: Vec<PathBuf>,
    /// Print the drifts as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcall lint`.
pub fn run(args: &Args) -> ExitCode {
    let _ = args;
    ExitCode::SUCCESS
}
