//! `toolcall check`: the harness's run as a report — per agent, how many cases pass, fail as
//! the baseline expects, or fail; the distinct unknown names with counts and causes; and every
//! unexpected result with its message. The same evaluation as `cargo test` (one code path:
//! [`toolcall_harness::Report`]), for a terminal or a CI log.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use toolcall_harness::{github, Config, Outcome, Report};
use toolcall_score::{escape, escape_path};

use crate::output::{in_github_actions, outln, write_stdout, FAIL, PASS};

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
pub fn run(args: &Args) -> ExitCode {
    let config = args.tree.config();
    if args.write_baselines {
        if let Err(e) = toolcall_harness::write_baselines(&config) {
            return crate::output::bad_input(&e);
        }
    }
    let report = Report::build(&config);
    if args.json || args.files.any() {
        let model = crate::outputs::model::CheckRun::of(&report, &config);
        let run = match crate::outputs::value("check", report.is_ok(), &model) {
            Ok(run) => run,
            Err(e) => return crate::output::bad_input(&e),
        };
        if let Err(e) = args.files.write(&run) {
            return crate::output::bad_input(&e);
        }
        if args.json {
            write_stdout(format_args!(
                "{}",
                crate::outputs::Output::Json.render(&run)
            ));
            return ExitCode::from(if report.is_ok() { PASS } else { FAIL });
        }
    }
    write_stdout(format_args!("{}", render(&report, &config)));
    if in_github_actions() {
        for line in annotations(&report) {
            outln!("{line}");
        }
    }
    ExitCode::from(if report.is_ok() { PASS } else { FAIL })
}

/// The report as plain text: aligned columns, no colour, every name escaped.
fn render(report: &Report, config: &Config) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} case(s) under {}, {} agent(s) under {}, baselines under {}",
        report.case_count(),
        escape_path(&config.cases),
        report.agents().len(),
        escape_path(&config.recorded),
        escape_path(&config.baselines)
    );
    for note in report.skipped() {
        let _ = writeln!(out, "note: {note}");
    }
    for problem in report.problems() {
        let _ = writeln!(out, "\nproblem: {}", problem);
    }
    if !report.agents().is_empty() {
        let rows: Vec<[String; 5]> = report
            .agents()
            .iter()
            .map(|a| {
                let c = a.counts();
                [
                    escape(&a.name).to_string(),
                    if a.example { "example" } else { "recorded" }.to_owned(),
                    c.pass.to_string(),
                    c.expected_failure.to_string(),
                    c.failure.to_string(),
                ]
            })
            .collect();
        out.push('\n');
        table(
            &mut out,
            ["agent", "responses", "pass", "expected failure", "failure"],
            &rows,
        );
        if report.agents().iter().any(|a| a.example) {
            let _ = writeln!(
                out,
                "(example: responses written by hand to the provider's shape, not recorded\n \
                 from a model, so their counts measure the suite; see the agent's {})",
                toolcall_harness::EXAMPLE_MARKER
            );
        }
    }
    for agent in report.agents() {
        let names = agent.unknown_names();
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
                        n.cause.map_or("-".to_owned(), |c| c.to_string()),
                    ]
                })
                .collect();
            table(&mut out, ["", "count", "name", "cause"], &rows);
        }
        let unexpected: Vec<String> = agent
            .cases
            .iter()
            .filter_map(|c| {
                let message = c.message()?;
                Some(format!(
                    "{} ({})\n{}",
                    escape(&c.case_id),
                    c.outcome.label(),
                    indent(&message)
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
                    .baseline
                    .iter()
                    .map(|p| format!("[baseline]\n{}", indent(p))),
            )
            .collect();
        let notes: Vec<String> = agent
            .cases
            .iter()
            .flat_map(|c| {
                c.notes()
                    .map(move |n| format!("{}: {n}", escape(&c.case_id)))
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
    let _ = writeln!(out, "\n{}", verdict_line(report));
    out
}

/// The last line: ok, or what would fix what failed. Only case results can be accepted as
/// known; a missing recording or a broken baseline file cannot, so the line does not say so.
fn verdict_line(report: &Report) -> String {
    if report.is_ok() {
        return "ok: every result is expected".to_owned();
    }
    let mut fixes = Vec::new();
    let acceptable = report.agents().iter().any(|a| {
        a.cases.iter().any(|c| {
            matches!(
                c.outcome,
                Outcome::Failure | Outcome::Changed { .. } | Outcome::NowPasses { .. }
            )
        })
    });
    if acceptable {
        fixes.push(
            "to accept the case results as known: toolcall check --write-baselines, or \
             ATP_BASELINE_WRITE=1 cargo test",
        );
    }
    if report.agents().iter().any(|a| !a.coverage.is_empty()) {
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

/// One `::error` line per unexpected result.
fn annotations(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for agent in report.agents() {
        for case in &agent.cases {
            if let Some(message) = case.message() {
                let (file, line) = case.location();
                lines.push(github::annotation(
                    &github::repo_relative(file),
                    line,
                    &format!(
                        "{}::{} ({})",
                        agent.name,
                        case.case_id,
                        case.outcome.label()
                    ),
                    &message,
                ));
            }
            for note in case.notes() {
                let (file, line) = case.location();
                lines.push(github::warning(
                    &github::repo_relative(file),
                    line,
                    &format!("{}::{} (note)", agent.name, case.case_id),
                    &note.to_string(),
                ));
            }
        }
    }
    lines
}
