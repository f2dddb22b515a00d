//! `toolcall score`: one response against a case or a bare tools array.

use std::path::PathBuf;
use toolcall_score::escape_path;

use toolcall_score::{score, Case, Catalog, Format, Response};

use crate::errors::{Outcome, Result};
use crate::output;

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
    #[arg(long, value_parser = crate::output::format_parser())]
    pub format: Option<Format>,
    /// Print the verdict as JSON: {"verdict": "pass"|"fail", "findings": [...]}.
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcall score`: exit 0 pass, 1 fail, 2 bad input.
pub fn run(args: &Args) -> Result {
    let case = match (&args.case, &args.tools) {
        (Some(path), _) => Case::load(path),
        (None, Some(path)) => Catalog::load(path).map(Case::from_catalog),
        (None, None) => unreachable!("clap requires --case or --tools"),
    };
    let case = case?;
    let response = Response::load(&args.response, args.format.or(case.format))?;
    let source = args.case.as_ref().or(args.tools.as_ref());
    if let Some(path) = source.filter(|_| case.catalog.is_empty() && !response.calls.is_empty()) {
        // Every call will be "invented"; the likelier story is a misplaced or misspelt key.
        eprintln!(
            "note: {} defines no tools, so every call is unknown; is the tools array there, \
             under the provider's own key (`tools`, `toolConfig.tools`, …)?",
            escape_path(path)
        );
    }
    let verdict = score(&case, &response);
    let shown = escape_path(&args.response).to_string();
    if args.json {
        // The verdict's own keys in the envelope every command's JSON shares.
        let run = crate::outputs::value("score", verdict.is_pass(), &verdict)?;
        output::write_stdout(format_args!(
            "{}",
            crate::outputs::Output::Json.render(&run)
        ));
    } else if verdict.is_pass() {
        output::outln!(
            "PASS {shown}: {} call(s), all defined",
            response.calls.len()
        );
    } else {
        let n = verdict.findings().len();
        output::outln!("FAIL {shown}: {n} finding(s)");
        for finding in verdict.findings() {
            output::outln!("  {finding}");
        }
    }
    if !args.json {
        for note in verdict.notes() {
            output::outln!("  note (fails nothing): {note}");
        }
    }
    if output::in_github_actions() {
        let file = output::repo_relative(&args.response);
        for finding in verdict.findings() {
            let line = output::annotation(&file, None, finding.kind.as_str(), &finding.to_string());
            output::annotate(&line);
        }
        for note in verdict.notes() {
            output::annotate(&output::warning(
                &file,
                None,
                note.kind.as_str(),
                &note.to_string(),
            ));
        }
    }
    Ok(Outcome::of(verdict.is_pass()))
}
