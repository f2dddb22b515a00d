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

/// A GitHub Actions `::error` annotation. Property and message values are escaped as the
/// workflow-command syntax requires (`%`, CR, LF; and `:` `,` in properties).
pub fn annotation(file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    fn data(s: &str) -> String {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn property(s: &str) -> String {
        data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let line = line.map(|l| format!(",line={l}")).unwrap_or_default();
    format!(
        "::error file={}{line},title={}::{}",
        property(file),
        property(title),
        data(message)
    )
}
