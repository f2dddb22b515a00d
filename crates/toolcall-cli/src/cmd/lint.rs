//! `toolcall lint`: prompt drift in case files.

use std::path::PathBuf;
use std::process::ExitCode;

use toolcall_score::{lint, Case};

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
pub fn run(args: &Args) -> ExitCode {
    let mut bad_input = false;
    let mut found = Vec::new();
    for path in &args.cases {
        match Case::load(path) {
            Ok(case) => {
                for drift in lint(&case) {
                    found.push((path.display().to_string(), drift));
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                bad_input = true;
            }
        }
    }
    if args.json {
        let rows: Vec<serde_json::Value> = found
            .iter()
            .map(|(case, drift)| {
                let mut row = serde_json::json!({ "case": case });
                if let (Some(row), Ok(serde_json::Value::Object(fields))) =
                    (row.as_object_mut(), serde_json::to_value(drift))
                {
                    row.extend(fields);
                }
                row
            })
            .collect();
        match serde_json::to_string_pretty(&rows) {
            Ok(json) => println!("{json}"),
            Err(e) => return output::bad_input(&e),
        }
    } else {
        for (case, drift) in &found {
            println!("{case}: {drift}");
        }
        if found.is_empty() && !bad_input {
            println!("no drift in {} case(s)", args.cases.len());
        }
    }
    if output::in_github_actions() {
        for (case, drift) in &found {
            eprintln!(
                "{}",
                output::annotation(case, None, "prompt drift", &drift.to_string())
            );
        }
    }
    let code = if bad_input {
        output::BAD_INPUT
    } else if found.is_empty() {
        output::PASS
    } else {
        output::FAIL
    };
    ExitCode::from(code)
}
