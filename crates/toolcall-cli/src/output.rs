//! Shared output conventions: exit codes, and GitHub Actions annotations.

use std::process::ExitCode;

/// Everything passed.
pub const PASS: u8 = 0;
/// A finding, or a gate exceeded.
pub const FAIL: u8 = 1;
/// The input could not be read or understood.
pub const BAD_INPUT: u8 = 2;

/// Prints an input error and returns the bad-input exit code.
pub fn bad_input(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(BAD_INPUT)
}

/// Whether we run inside GitHub Actions (`GITHUB_ACTIONS=true`).
pub fn in_github_actions() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// GitHub Actions annotations, shared with the harness so both escape alike.
pub use toolcall_harness::github::{annotation, repo_relative};
