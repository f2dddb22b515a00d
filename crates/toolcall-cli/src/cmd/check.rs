//! `toolcall check`: the harness's run as a report — per agent, how many cases pass, fail as
//! the baseline expects, or fail; the distinct unknown names with counts and causes; and every
//! unexpected result with its message. The same evaluation as `cargo test` (one code path:
//! [`toolcall_harness::Report`]), for a terminal or a CI log.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcall_harness::{github, Config, Report};

use crate::outputs::model::CheckRun;
use toolcall_score::{escape, escape_path};

use crate::errors::{Outcome, Result};
use crate::output::{annotate, write_stdout};

/// Where the suite is: the trees `check` and `baseline` read.
#[derive(Debug, clap::Args)]
pub struct Tree {
    /// The directory holding `cases/`, `recorded/` and `baselines/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The case tree, when not `<root>/cases` (`ATP_CASES` in the test harness).
    #[arg(long)]
    pub cases: Option<PathBuf>,
    /// The recorded responses, when not `<root>/recorded` (`ATP_RECORDED`).
    #[arg(long)]
    pub recorded: Option<PathBuf>,
    /// The baselines, when not `<root>/baselines` (`ATP_BASELINES`).
    #[arg(long)]
    pub baselines: Option<PathBuf>,
}

impl Tree {
    /// The harness configuration these paths describe.
    pub fn config(&self) -> Config {
        let mut config = Config::for_root(&self.root);
        config.front = toolcall_harness::Front::Cli;
        if let Some(cases) = &self.cases {
            config.cases = cases.clone();
        }
        if let Some(recorded) = &self.recorded {
            config.recorded = recorded.clone();
        }
        if let Some(baselines) = &self.baselines {
            config.baselines = baselines.clone();
        }
        config
    }
}

/// Arguments of `toolcall check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub tree: Tree,
    /// Rewrite the baselines from this run first (what `ATP_BASELINE_WRITE=1 cargo test` does):
    /// failing cases are accepted as known, passing ones leave, notes are kept.
    #[arg(long)]
    pub write_baselines: bool,
    /// Print the run as JSON instead of the text report (the shape README documents).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub files: crate::outputs::Files,
}

/// Runs `toolcall check`: exit 0 when every result is expected, 1 otherwise.
pub fn run(args: &Args) -> Result {
    let config = args.tree.config();
    if args.write_baselines {
        toolcall_harness::write_baselines(&config)?;
    }
    let report = Report::build(&config);
    let model = std::cell::RefCell::new(CheckRun::of(&report, &config));
    let ok = report.is_ok();
    if args.json || args.files.any() {
        // Every output is written as it is drawn, never the whole run as one value.
        use crate::outputs::Output;
        args.files.write_streamed(
            &[Output::Json, Output::Junit, Output::Html],
            &mut |output, out| match output {
                Output::Junit => model.borrow_mut().write_junit(ok, out),
                Output::Html => model.borrow_mut().write_html(ok, out),
                _ => model.borrow_mut().write_json(ok, out),
            },
            &mut || crate::outputs::value("check", ok, &*model.borrow()),
        )?;
        if args.json {
            crate::output::stream_stdout(|out| model.borrow_mut().write_json(ok, out));
            return Ok(Outcome::of(ok));
        }
    }
    let model = model.into_inner();
    write_stdout(format_args!("{}", render(&model, ok)));
    if crate::output::in_github_actions() {
        for line in annotations(&model) {
            annotate(&line);
        }
    }
    Ok(Outcome::of(ok))
}

/// The run as plain text: aligned columns, no colour, every name escaped.
fn render(run: &CheckRun, ok: bool) -> String {
    let mut out = String::new();
    let path = |p: &str| escape_path(Path::new(p)).to_string();
    let _ = writeln!(
        out,
        "{} case(s) under {}, {} agent(s) under {}, baselines under {}",
        run.case_count,
        path(&run.trees.cases),
        run.agents.len(),
        path(&run.trees.recorded),
        path(&run.trees.baselines)
    );
    for note in &run.skipped {
        let _ = writeln!(out, "note: {note}");
    }
    for problem in &run.problems {
        let _ = writeln!(out, "\nproblem: {}", problem);
    }
    if !run.agents.is_empty() {
        let rows: Vec<[String; 5]> = run
            .agents
            .iter()
            .map(|a| {
                [
                    escape(&a.name).to_string(),
                    if a.example { "example" } else { "recorded" }.to_owned(),
                    a.counts.pass.to_string(),
                    a.counts.expected_failure.to_string(),
                    a.counts.failure.to_string(),
                ]
            })
            .collect();
        out.push('\n');
        table(
            &mut out,
            ["agent", "responses", "pass", "expected failure", "failure"],
            &rows,
        );
        if run.agents.iter().any(|a| a.example) {
            let _ = writeln!(
                out,
                "(example: responses written by hand to the provider's shape, not recorded\n \
                 from a model, so their counts measure the suite; see the agent's {})",
                toolcall_harness::EXAMPLE_MARKER
            );
        }
    }
    for agent in &run.agents {
        let names = &agent.unknown_names;
        if !names.is_empty() {
            let _ = writeln!(
                out,
                "\n{}: {} distinct unknown tool name(s)",
                escape(&agent.name),
                names.len()
            );
            let rows: Vec<[String; 4]> = names
                .iter()
                .map(|n| {
                    [
                        String::new(),
                        n.count.to_string(),
                        escape(&n.name).to_string(),
                        n.cause.clone().unwrap_or_else(|| "-".to_owned()),
                    ]
                })
                .collect();
            table(&mut out, ["", "count", "name", "cause"], &rows);
        }
        let unexpected: Vec<String> = agent
            .results
            .iter()
            .filter_map(|c| {
                let message = c.message.as_deref()?;
                Some(format!(
                    "{} ({})\n{}",
                    escape(&c.case),
                    c.label,
                    indent(message)
                ))
            })
            .chain(
                agent
                    .coverage
                    .iter()
                    .map(|p| format!("[coverage]\n{}", indent(p))),
            )
            .chain(
                agent
                    .baseline_problems
                    .iter()
                    .map(|p| format!("[baseline]\n{}", indent(p))),
            )
            .collect();
        let notes: Vec<String> = agent
            .results
            .iter()
            .flat_map(|c| {
                c.samples
                    .iter()
                    .flat_map(|s| s.verdict.notes())
                    .map(move |n| format!("{}: {n}", escape(&c.case)))
            })
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "\n{}: {} note(s), which fail nothing",
                escape(&agent.name),
                notes.len()
            );
            for note in notes {
                let _ = writeln!(out, "  {note}");
            }
        }
        if !unexpected.is_empty() {
            let _ = writeln!(
                out,
                "\n{}: {} unexpected result(s)",
                escape(&agent.name),
                unexpected.len()
            );
            for item in unexpected {
                let _ = writeln!(out, "  {item}");
            }
        }
    }
    let _ = writeln!(out, "\n{}", verdict_line(run, ok));
    out
}

/// The last line: ok, or what would fix what failed. Only case results can be accepted as
/// known; a missing recording or a broken baseline file cannot, so the line does not say so.
fn verdict_line(run: &CheckRun, ok: bool) -> String {
    if ok {
        return "ok: every result is expected".to_owned();
    }
    let mut fixes = Vec::new();
    if run
        .agents
        .iter()
        .any(|a| a.results.iter().any(|c| c.accept.is_some()))
    {
        fixes.push("to accept the case results as known: toolcall check --write-baselines");
    }
    if run.agents.iter().any(|a| !a.coverage.is_empty()) {
        fixes.push("record each missing response where its [coverage] entry says");
    }
    if fixes.is_empty() {
        "FAILED: unexpected results above".to_owned()
    } else {
        format!("FAILED: unexpected results above ({})", fixes.join("; "))
    }
}

/// Right-aligns numbers, left-aligns text; the first column is left-aligned.
fn table<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let numeric = |i: usize| rows.iter().all(|r| r[i].parse::<usize>().is_ok());
    let line = |cells: [&str; N]| {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if widths[i] == 0 {
                continue;
            }
            if i > 0 {
                line.push_str("  ");
            }
            if i > 0 && numeric(i) {
                let _ = write!(line, "{cell:>width$}", width = widths[i]);
            } else {
                let _ = write!(line, "{cell:<width$}", width = widths[i]);
            }
        }
        line.trim_end().to_owned()
    };
    let _ = writeln!(out, "{}", line(header));
    for row in rows {
        let _ = writeln!(out, "{}", line(row.each_ref().map(String::as_str)));
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One `::error` line per unexpected result, one `::warning` per note.
fn annotations(run: &CheckRun) -> Vec<String> {
    let mut lines = Vec::new();
    for agent in &run.agents {
        for case in &agent.results {
            let file = github::repo_relative(Path::new(&case.location.file));
            if let Some(message) = &case.message {
                lines.push(github::annotation(
                    &file,
                    case.location.line,
                    &format!("{}::{} ({})", agent.name, case.case, case.label),
                    message,
                ));
            }
            for note in case.samples.iter().flat_map(|s| s.verdict.notes()) {
                lines.push(github::warning(
                    &file,
                    case.location.line,
                    &format!("{}::{} (note)", agent.name, case.case),
                    &note.to_string(),
                ));
            }
        }
    }
    lines
}
