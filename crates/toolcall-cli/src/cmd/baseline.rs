//! `toolcall baseline review` and `toolcall baseline accept`: baseline changes one case at a
//! time, the way `cargo insta review` takes snapshots, instead of the whole-suite rewrite of
//! `ATP_BASELINE_WRITE=1` (which stays, for after a deliberate change).

use std::io::{BufRead, IsTerminal, Write};

use toolcall_harness::accept::{self, Pending, PendingKind};
use toolcall_harness::Config;

use crate::cmd::check::Tree;
use crate::errors::{Outcome, Result};
use crate::output::{outln, write_stdout};

/// Arguments of `toolcall baseline`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with the baselines.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Show each new failure, changed fingerprint and fixed case with its findings and diff, and
    /// ask: accept (write it to the baseline), reject (leave the baseline; the test keeps failing
    /// until the cause is fixed) or skip. Answers are read a line at a time from standard input.
    Review {
        #[command(flatten)]
        tree: Tree,
    },
    /// Accept these case results into the baselines without asking: each `AGENT::CASE-ID` (a test
    /// name as `cargo test` prints it) or `CASE-ID` (that case, for every agent).
    Accept {
        /// The test names or case ids.
        #[arg(required = true, value_name = "CASE")]
        selected: Vec<String>,
        #[command(flatten)]
        tree: Tree,
    },
}

/// Runs `toolcall baseline`: 0 when done, 2 on bad input (a name that matches nothing, a baseline
/// that cannot be read or written).
pub fn run(args: &Args) -> Result {
    match &args.action {
        Action::Accept { selected, tree } => {
            let summary = accept::accept(&tree.config(), selected)?;
            write_stdout(format_args!("{summary}"));
            Ok(Outcome::Pass)
        }
        Action::Review { tree } => review(&tree.config()),
    }
}

fn review(config: &Config) -> Result {
    let pending = accept::pending(config);
    if pending.is_empty() {
        outln!("nothing to review: every case result is what its baseline says");
        return Ok(Outcome::Pass);
    }
    outln!(
        "{} change(s) to review (a: accept, r: reject, s: skip, q: quit)",
        pending.len()
    );
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut lines = stdin.lock().lines();
    let mut accepted = Vec::new();
    let (mut rejected, mut skipped) = (Vec::new(), 0usize);
    let total = pending.len();
    for (i, change) in pending.into_iter().enumerate() {
        outln!("\n[{}/{total}] {change}", i + 1);
        for line in change.message.lines() {
            outln!("  {line}");
        }
        outln!("  baseline entry: {}", entry_change(&change));
        let answer = loop {
            print!("accept? [a/r/s/q] ");
            let _ = std::io::stdout().flush();
            let Some(Ok(line)) = lines.next() else {
                // End of input: what was not answered is left as it is.
                if !interactive {
                    outln!("(end of input)");
                }
                break Answer::Quit;
            };
            match line.trim().to_ascii_lowercase().as_str() {
                "a" | "accept" => break Answer::Accept,
                "r" | "reject" => break Answer::Reject,
                "s" | "skip" | "" => break Answer::Skip,
                "q" | "quit" => break Answer::Quit,
                other => outln!("`{}`: answer a, r, s or q", toolcall_score::escape(other)),
            }
        };
        match answer {
            Answer::Accept => accepted.push(change),
            Answer::Reject => rejected.push(change.test_name()),
            Answer::Skip => skipped += 1,
            Answer::Quit => {
                skipped += total - i;
                break;
            }
        }
    }
    let accepted_count = accepted.len();
    let summary = accept::apply(config, accepted)?;
    outln!(
        "\naccepted {accepted_count}, rejected {}, skipped {skipped}",
        rejected.len()
    );
    write_stdout(format_args!("{summary}"));
    if !rejected.is_empty() {
        outln!(
            "rejected (the baseline is unchanged; fix the cause, and these tests pass): {}",
            rejected.join(", ")
        );
    }
    Ok(Outcome::Pass)
}

enum Answer {
    Accept,
    Reject,
    Skip,
    Quit,
}

/// `(none) -> a (invented)`, `a (invented) -> (removed)`.
fn entry_change(change: &Pending) -> String {
    let side = |entries: &[String], missing: &str| {
        if entries.is_empty() {
            missing.to_owned()
        } else {
            entries
                .iter()
                .map(|e| toolcall_score::escape(e).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let gone = if change.kind == PendingKind::Fixed {
        "(removed)"
    } else {
        "(none)"
    };
    format!(
        "{} -> {}",
        side(&change.old, "(none)"),
        side(&change.new, gone)
    )
}
