//! Shared output conventions: standard output, and GitHub Actions annotations. (Exit codes and
//! errors are `errors.rs`'s.)

use std::io::Write;

/// `println!` for the command's output: a closed pipe (`toolcall rate --json | head`) ends the
/// output quietly instead of panicking, so the exit code still reports the verdict.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Writes to standard output; see [`outln`]. A reader that went away is not an error (the rest
/// of the output is dropped); any other failure is reported on stderr once per write.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {e}");
        }
    }
}

/// [`write_stdout`] for a report written as it is drawn by `fill` (buffered, and a closed pipe
/// is as quiet as there).
pub fn stream_stdout(fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if let Err(e) = fill(&mut out).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {e}");
        }
    }
}

/// Whether we run inside GitHub Actions (`GITHUB_ACTIONS=true`).
pub fn in_github_actions() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// GitHub Actions annotations, shared with the harness so both escape alike.
pub use toolcall_harness::github::{annotation, repo_relative, warning};

/// Prints an annotation line (made by [`annotation`] or [`warning`]) when running inside GitHub
/// Actions. Every command's annotations go to standard error, like its other diagnostics:
/// standard output is the report, and with `--json` JSON alone, which a line of workflow
/// command would break. The runner reads workflow commands from both streams.
pub fn annotate(line: &str) {
    if in_github_actions() {
        eprintln!("{line}");
    }
}

/// `--from`: one of the registered trace sources, the list derived from the registry.
pub fn trace_source_parser(
) -> impl clap::builder::TypedValueParser<Value = &'static toolcall_traces::Source> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(toolcall_traces::SOURCES.iter().map(|s| s.name))
        .try_map(|name| {
            toolcall_traces::source(&name).ok_or_else(|| format!("no trace source `{name}`"))
        })
}

/// `--format`: one of the core's format names, listed in `--help` and in the error for any
/// other value.
pub fn format_parser() -> impl clap::builder::TypedValueParser<Value = toolcall_score::Format> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(toolcall_score::Format::ALL.map(|f| f.as_str()))
        .try_map(|name| name.parse::<toolcall_score::Format>())
}
