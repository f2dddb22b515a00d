//! The exit codes, and the one error type of the `toolcall` binary (after cargo-nextest's
//! `ExpectedError`): every error a user can expect is a [`CliError`] variant, and each variant
//! knows its exit code ([`CliError::exit_code`], the one map from errors to codes). A command
//! returns `Ok(`[`Outcome`]`)` when it ran, pass or fail, and a `CliError` when it could not;
//! `main` prints the error once ([`report`]) and exits with its code.
//!
//! The crates' own error types are the variants' sources, shown as their messages say them.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use toolcall_score::escape_path;

/// Everything passed.
pub const PASS: u8 = 0;
/// A finding, a gate exceeded, a server that failed.
pub const FAIL: u8 = 1;
/// The input could not be read or understood.
pub const BAD_INPUT: u8 = 2;

/// What a command returns: its outcome, or the error that stopped it.
pub type Result<T = Outcome, E = CliError> = std::result::Result<T, E>;

/// How a run that finished came out: not an error, whichever it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every result was what it should be (exit 0).
    Pass,
    /// A finding, an unexpected result, a gate exceeded (exit 1).
    Fail,
}

impl Outcome {
    /// [`Outcome::Pass`] when `passed`, else [`Outcome::Fail`].
    pub fn of(passed: bool) -> Outcome {
        if passed {
            Outcome::Pass
        } else {
            Outcome::Fail
        }
    }

    /// Its exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => PASS,
            Outcome::Fail => FAIL,
        }
    }
}

/// An error a user can expect: what it says is the whole message `main` prints after `error: `.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A case, tools, response, snapshot or baseline file that cannot be read or understood.
    #[error(transparent)]
    Input(#[from] toolcall_score::InputError),
    /// What stopped a rate run, an import or a promotion.
    #[error(transparent)]
    Rate(#[from] toolcall_rate::RateError),
    /// A flow file that cannot be read or is not a valid flow.
    #[error(transparent)]
    Flow(#[from] toolcall_mcp::FlowError),
    /// A baseline that cannot be read, understood or written.
    #[error(transparent)]
    Baseline(#[from] toolcall_harness::BaselineError),
    /// `baseline accept` named nothing a baseline could take.
    #[error("nothing was written:\n{0}")]
    NothingToAccept(#[source] toolcall_harness::accept::NothingToAccept),
    /// A recording that could not start or be written (starting the server is its failure).
    #[error(transparent)]
    Record(#[from] toolcall_mcp_record::RecordError),
    /// A recording to serve that cannot be read, or a serve report that cannot be written.
    #[error(transparent)]
    ServeInput(toolcall_mcp_record::ServeError),
    /// Serving failed (the runtime or the transport).
    #[error(transparent)]
    Serve(toolcall_mcp_record::ServeError),
    /// A server that could not be started, initialized or listed, with the last lines of its
    /// stderr.
    #[error("{target}: {failure}{}", stderr_tail.iter().map(|l| format!("\n  | {}", toolcall_score::escape(l))).collect::<String>())]
    Server {
        /// The target as given on the command line.
        target: String,
        /// What broke.
        failure: Box<toolcall_mcp::Failure>,
        /// The server's stderr, its last lines.
        stderr_tail: Vec<String>,
    },
    /// `mcp diff` could not reach its server ([`CliError::Server`] inside): exit 2, so that its
    /// exit 1 means drift and nothing else.
    #[error(transparent)]
    Unreachable(Box<CliError>),
    /// A flag or argument value that cannot be used, or that conflicts with another.
    #[error("{0}")]
    Usage(String),
    /// `toolcall guard` could not start, or its log failed.
    #[cfg(feature = "guard")]
    #[error(transparent)]
    Guard(#[from] toolcall_guard::GuardError),
    /// A file or folder that is not what the command needs (`why` says what it is instead).
    #[error("{}: {why}", escape_path(path))]
    File {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A file or folder that could not be read.
    #[error("{}: cannot read: {source}", escape_path(path))]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A JSON file that does not parse.
    #[error("{}: not {expected}: {source}", escape_path(path))]
    NotJson {
        /// The file.
        path: PathBuf,
        /// What it should have been: `JSON`, `a snapshot`.
        expected: &'static str,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// A file the command writes (a snapshot, a baseline, a scaffold) could not be written.
    #[error("{}: cannot write: {source}", escape_path(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A report asked for with `--json-out`, `--junit` or `--html` could not be written.
    #[error("{flag} {}: cannot write: {source}", escape_path(path))]
    Output {
        /// The flag that asked for it.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A report or file could not be turned into JSON.
    #[error("cannot serialize the report: {0}")]
    Serialize(#[source] serde_json::Error),
    /// A live rate in which some requests failed: the report is incomplete.
    #[error("some live requests failed (see `errors` in the report)")]
    LiveIncomplete,
    /// A rate run in which no response could be read at all.
    #[error(
        "no response could be read ({unreadable} unreadable input(s), listed above): check the \
         paths, the case ids under --cases, and the log line format"
    )]
    NothingRead {
        /// How many inputs could not be read.
        unreadable: u64,
    },
    /// Several files that could not be read (`lint` reads every case it is given).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\nerror: "))]
    Each(Vec<CliError>),
}

impl CliError {
    /// The exit code of this error: the one map from errors to codes.
    pub fn exit_code(&self) -> u8 {
        use toolcall_mcp_record::RecordError;
        match self {
            // The server is the one that failed, not the input naming it.
            CliError::Record(RecordError::Spawn { .. } | RecordError::Unreachable { .. })
            | CliError::Serve(_)
            | CliError::Server { .. } => FAIL,
            #[cfg(feature = "guard")]
            CliError::Guard(toolcall_guard::GuardError::Config(_)) => BAD_INPUT,
            #[cfg(feature = "guard")]
            CliError::Guard(_) => FAIL,
            CliError::Input(_)
            | CliError::Rate(_)
            | CliError::Flow(_)
            | CliError::Baseline(_)
            | CliError::NothingToAccept(_)
            | CliError::Record(_)
            | CliError::ServeInput(_)
            | CliError::Unreachable(_)
            | CliError::Usage(_)
            | CliError::File { .. }
            | CliError::Read { .. }
            | CliError::NotJson { .. }
            | CliError::Write { .. }
            | CliError::Output { .. }
            | CliError::Serialize(_)
            | CliError::LiveIncomplete
            | CliError::NothingRead { .. }
            | CliError::Each(_) => BAD_INPUT,
        }
    }

    /// A [`CliError::Usage`] from its message.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }
}

impl From<toolcall_harness::accept::AcceptError> for CliError {
    fn from(e: toolcall_harness::accept::AcceptError) -> CliError {
        use toolcall_harness::accept::AcceptError;
        match e {
            AcceptError::Nothing(nothing) => CliError::NothingToAccept(nothing),
            AcceptError::Baseline(e) => CliError::Baseline(e),
            // A kind added later: its own message, as bad input.
            other => CliError::Usage(other.to_string()),
        }
    }
}

/// The text `main` prints for `error`: `error: ` and its message, then each cause in its source
/// chain that the text so far does not already say, one `caused by:` line each.
///
/// The crates' errors mostly put their source in their own message too (`x.json: cannot read:
/// No such file or directory`) and also return it from `source()`; a wrapper made with
/// `#[error("{0}")]` and `#[from]` returns as its source the very error its message is. A
/// printer that walked the chain blindly would say each of those twice.
pub fn report(error: &dyn std::error::Error) -> String {
    let mut text = format!("error: {error}");
    let mut cause = error.source();
    while let Some(e) = cause {
        let said = e.to_string();
        if !text.contains(&said) {
            let _ = write!(text, "\n  caused by: {said}");
        }
        cause = e.source();
    }
    text
}

/// The process's exit: the outcome's code, or the error printed once and its code.
pub fn exit(result: Result) -> ExitCode {
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        Err(error) => {
            eprintln!("{}", report(&error));
            ExitCode::from(error.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain a blind walk prints: each link's message on its own line.
    fn every_link(error: &dyn std::error::Error) -> Vec<String> {
        let mut links = vec![error.to_string()];
        let mut cause = error.source();
        while let Some(e) = cause {
            links.push(e.to_string());
            cause = e.source();
        }
        links
    }

    fn unreadable() -> toolcall_score::InputError {
        toolcall_score::read_text(std::path::Path::new("no/such/case.json")).unwrap_err()
    }

    /// `RateError::Input` is `#[error("{0}")]` with `#[from]`: its source is the error its
    /// message already is, whose source the message says again. Walked blindly the chain says
    /// the path twice and the OS error three times; `report` says each once.
    #[test]
    fn a_source_the_message_already_says_is_not_printed_again() {
        let error = CliError::Rate(toolcall_rate::RateError::Input(unreadable()));
        let blind = every_link(&error).join("\n");
        assert_eq!(blind.matches("no/such/case.json").count(), 2, "{blind}");
        assert_eq!(blind.matches("os error").count(), 3, "{blind}");
        let text = report(&error);
        assert_eq!(text.matches("no/such/case.json").count(), 1, "{text}");
        assert_eq!(text.matches("os error").count(), 1, "{text}");
        assert!(
            text.starts_with("error: no/such/case.json: cannot read: "),
            "{text}"
        );
        assert!(!text.contains("caused by"), "{text}");
    }

    /// A cause the message does not say is printed, once, on its own line.
    #[test]
    fn a_cause_the_message_leaves_out_gets_its_line() {
        let error = CliError::NothingToAccept(toolcall_harness::accept::NothingToAccept(vec![
            "`x`: no such case result".to_owned(),
        ]));
        assert_eq!(
            report(&error),
            "error: nothing was written:\n`x`: no such case result"
        );
        #[derive(Debug, thiserror::Error)]
        #[error("the outer message")]
        struct Outer(#[source] std::io::Error);
        let text = report(&Outer(std::io::Error::other("the inner reason")));
        assert_eq!(
            text,
            "error: the outer message\n  caused by: the inner reason"
        );
    }

    #[test]
    fn each_error_knows_its_code() {
        assert_eq!(CliError::from(unreadable()).exit_code(), BAD_INPUT);
        assert_eq!(CliError::usage("--max-rate 2").exit_code(), BAD_INPUT);
        assert_eq!(CliError::LiveIncomplete.exit_code(), BAD_INPUT);
        let spawn = toolcall_mcp_record::RecordError::Spawn {
            command: "no-such-server".to_owned(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(CliError::from(spawn).exit_code(), FAIL);
        assert_eq!(Outcome::of(true).exit_code(), PASS);
        assert_eq!(Outcome::of(false).exit_code(), FAIL);
    }
}
