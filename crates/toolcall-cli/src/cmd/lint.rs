//! `toolcall lint`: prompt drift in case files.

use std::path::PathBuf;
use toolcall_score::escape_path;

use toolcall_score::{lint, Case};

use crate::errors::{CliError, Outcome, Result};
use crate::output;

/// Arguments of `toolcall lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case files to lint.
    #[arg(required = true)]
    pub cases: Vec<PathBuf>,
    /// Print the drifts as JSON: [{"case", "name", "source", "context", "suggestions"}].
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcall lint`: exit 0 clean, 1 drift found, 2 a case could not be read.
pub fn run(args: &Args) -> Result {
    let mut unreadable = Vec::new();
    let mut found = Vec::new();
    for path in &args.cases {
        match Case::load(path) {
            Ok(case) => {
                for drift in lint(&case) {
                    found.push((path, drift));
                }
            }
            Err(e) => unreadable.push(CliError::from(e)),
        }
    }
    if args.json {
        let rows: Vec<serde_json::Value> = found
            .iter()
            .map(|(case, drift)| {
                let mut row = serde_json::json!({ "case": case.display().to_string() });
                if let (Some(row), Ok(serde_json::Value::Object(fields))) =
                    (row.as_object_mut(), serde_json::to_value(drift))
                {
                    row.extend(fields);
                }
                row
            })
            .collect();
        let json = toolcall_score::to_json_pretty(&rows).map_err(CliError::Serialize)?;
        output::outln!("{json}");
    } else {
        for (case, drift) in &found {
            output::outln!("{}: {drift}", escape_path(case));
        }
        if found.is_empty() && unreadable.is_empty() {
            output::outln!("no drift in {} case(s)", args.cases.len());
        }
    }
    if output::in_github_actions() {
        for (case, drift) in &found {
            let line = line_of(case, drift);
            let file = output::repo_relative(case);
            let message = drift.to_string();
            output::annotate(&output::annotation(&file, line, "prompt drift", &message));
        }
    }
    match unreadable.len() {
        0 => Ok(Outcome::of(found.is_empty())),
        1 => Err(unreadable.remove(0)),
        _ => Err(CliError::Each(unreadable)),
    }
}

/// The line of the case file where the drift is written: the first line holding both the name
/// and the start of the sentence it was found in, else the first holding the name.
fn line_of(case: &std::path::Path, drift: &toolcall_score::Drift) -> Option<usize> {
    let text = toolcall_score::read_text(case).ok()?;
    // The sentence as it appears inside a JSON string (quotes and newlines escaped).
    let quoted = serde_json::to_string(&drift.context).ok()?;
    let snippet: String = quoted.trim_matches('"').chars().take(30).collect();
    let lines = || text.lines().enumerate();
    lines()
        .find(|(_, l)| l.contains(&drift.name) && l.contains(&snippet))
        .or_else(|| lines().find(|(_, l)| l.contains(&drift.name)))
        .map(|(i, _)| i + 1)
}
