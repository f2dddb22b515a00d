//! `toolcall lint`: prompt drift in case files.

use std::path::PathBuf;
use toolcall_score::escape_path;

use toolcall_score::{lint, Case};

use crate::errors::{CliError, Outcome, Result};
use crate::output;

/// Arguments of `toolcall lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case files to lint, or folders of them (every `*.json` under a folder, as `check`
    /// walks `--cases`).
    #[arg(required = true)]
    pub cases: Vec<PathBuf>,
    /// Print the drifts as JSON: [{"case", "name", "source", "context", "suggestions"}].
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcall lint`: exit 0 clean, 1 drift found, 2 a case could not be read.
pub fn run(args: &Args) -> Result {
    let cases = super::json_files(&args.cases, "case")?;
    let mut unreadable = Vec::new();
    let mut found = Vec::new();
    for path in &cases {
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
            output::outln!("no drift in {} case(s)", cases.len());
        }
    }
    if output::in_github_actions() {
        for (case, drift) in &found {
            let line = toolcall_score::read_text(case)
                .ok()
                .and_then(|text| drift.line_in(&text));
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
