//! Turning the suite into libtest-mimic trials, and the baseline write mode.
//!
//! Test names never depend on baseline status: `<agent>::<case-id>` for a test, and a bracketed
//! last segment for the suite-level checks (`suite::[discovery]`, `<agent>::[coverage]`,
//! `<agent>::[baseline]`, `dummy-agent::[snapshot]`). Whole-suite checks are trials of their own
//! because nextest runs each test in its own process: nothing may happen "after all tests".

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use toolcall_score::{escape, escape_path};

use libtest_mimic::{Arguments, Failed, Trial};

use crate::baseline::{self, Baseline, Changes, Entry};
use crate::discover::{locate_one, Suite};
use crate::evaluate::{evaluate, CaseReport, Outcome};
use crate::github::{annotation, repo_relative};
use crate::report::{
    baseline_problems, coverage_problems, load_baseline, missing_recordings, suite_problems,
};
use crate::{Config, Report};

/// The name of the whole-suite discovery check.
pub const DISCOVERY_TEST: &str = "suite::[discovery]";
/// The name of the dummy agent's snapshot check.
pub const SNAPSHOT_TEST: &str = "dummy-agent::[snapshot]";

/// Exit code for a configuration the harness refuses to run with.
const USAGE: u8 = 2;

/// Runs the harness with already-parsed arguments; see [`crate::Harness::run`].
pub(crate) fn run(config: Config, args: &Arguments) -> ExitCode {
    let config = match config.with_env() {
        Ok(config) => relativized(config),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE);
        }
    };
    if config.baseline_write {
        if let Some(why) = partial_run(args, std::env::var_os("NEXTEST").is_some()) {
            eprintln!(
                "error: ATP_BASELINE_WRITE=1 refuses to rewrite baselines from a partial run \
                 ({why}): the tests that did not run would lose their entries. Nothing was \
                 written. Run the whole suite with plain `cargo test` and no test name filter, \
                 e.g. `ATP_BASELINE_WRITE=1 cargo test --test <this target>`."
            );
            return ExitCode::from(USAGE);
        }
        if !args.list {
            if let Err(e) = write_baselines(&config) {
                eprintln!("error: {e}");
                return ExitCode::from(USAGE);
            }
        }
    }
    if std::env::var_os("NEXTEST").is_some() && args.exact && !args.list {
        if let Some(code) = args
            .filter
            .as_deref()
            .and_then(|name| run_exact_under_nextest(&config, name))
        {
            return code;
        }
    }
    let expected = Arc::new(AtomicUsize::new(0));
    let trials = trials(&config, args, &expected);
    let conclusion = libtest_mimic::run(args, trials);
    let expected = expected.load(Ordering::Relaxed);
    if expected > 0 && !args.list {
        eprintln!(
            "note: {expected} expected failure(s) passed as known (listed under {}); \
             they are shown as [xfail]",
            escape_path(&config.baselines)
        );
    }
    conclusion.exit_code()
}

/// Why a run would not see every test, if it would not.
pub(crate) fn partial_run(args: &Arguments, nextest: bool) -> Option<&'static str> {
    if nextest {
        Some("nextest runs one process per test")
    } else if args.exact {
        Some("--exact")
    } else if !args.skip.is_empty() {
        Some("--skip")
    } else if args.ignored {
        Some("--ignored")
    } else if args.filter.is_some() {
        Some("a test name filter")
    } else {
        None
    }
}

/// Absolute paths below the working directory become relative, so messages stay short.
fn relativized(mut config: Config) -> Config {
    let Ok(cwd) = std::env::current_dir().and_then(|d| d.canonicalize()) else {
        return config;
    };
    let shorten = |path: &mut std::path::PathBuf| {
        if !path.is_absolute() {
            return;
        }
        if let Ok(canonical) = path.canonicalize() {
            *path = match canonical.strip_prefix(&cwd) {
                Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
                Ok(rest) => rest.to_path_buf(),
                Err(_) => canonical,
            };
        }
    };
    shorten(&mut config.cases);
    shorten(&mut config.recorded);
    shorten(&mut config.baselines);
    if let Some(snapshots) = &mut config.snapshots {
        shorten(snapshots);
    }
    config
}

/// Every trial of the suite, or just the one `--exact NAME` asks for when it can be found
/// without walking the trees.
fn trials(config: &Config, args: &Arguments, expected: &Arc<AtomicUsize>) -> Vec<Trial> {
    let config = Arc::new(config.clone());
    if let (true, Some(name)) = (args.exact, &args.filter) {
        if let Some(trial) = exact_trial(&config, name, args.list, expected) {
            return vec![trial];
        }
    }
    let suite = Arc::new(Suite::discover(&config));
    // On stderr, and not under `--list`: nextest reads the list from stdout.
    if !args.list {
        for note in &suite.skipped {
            eprintln!("note: {note}");
        }
    }
    let mut trials = Vec::new();
    {
        let (config, suite) = (config.clone(), suite.clone());
        trials.push(Trial::test(DISCOVERY_TEST, move || {
            check(&config, &config.cases, suite_problems(&config, &suite))
        }));
    }
    for agent in suite.agent_names() {
        let baseline = if args.list {
            Arc::new((Baseline::new(), None))
        } else {
            Arc::new(load_baseline(&config, agent))
        };
        {
            let (config, suite, baseline, agent) = (
                config.clone(),
                suite.clone(),
                baseline.clone(),
                agent.to_owned(),
            );
            trials.push(Trial::test(trial_name(&agent, "[baseline]"), move || {
                let problems =
                    baseline_problems(&config, &suite, &agent, &baseline.0, baseline.1.clone());
                check(&config, &config.baseline_file(&agent), problems)
            }));
        }
        let Some(files) = suite.agents.get(agent) else {
            continue;
        };
        {
            let (config, suite, agent) = (config.clone(), suite.clone(), agent.to_owned());
            trials.push(Trial::test(trial_name(&agent, "[coverage]"), move || {
                let problems = coverage_problems(&config, &suite, &agent);
                check(&config, &config.recorded.join(&agent), problems)
            }));
        }
        for (id, recording) in &files.recordings {
            let Some(case_path) = suite.cases.get(id) else {
                continue;
            };
            let entry = baseline.0.entries.get(id).cloned();
            let listed = entry.is_some();
            let trial = case_trial(
                &config,
                agent,
                id,
                case_path.clone(),
                recording.clone(),
                entry,
                expected,
            );
            // The kind is display only, and libtest-mimic prints it in `--list` too, where it
            // would corrupt the names nextest reads: leave it out there.
            trials.push(if listed && !args.list {
                trial.with_kind("xfail")
            } else {
                trial
            });
        }
        // A case with no recording is that case's own failure, saying which file to record.
        for (id, message) in missing_recordings(&config, &suite, agent) {
            let annotate = (config.annotations, config.cases.join(format!("{id}.json")));
            trials.push(Trial::test(trial_name(agent, &id), move || {
                if annotate.0 {
                    println!(
                        "{}",
                        annotation(
                            &repo_relative(&annotate.1),
                            None,
                            "missing recording",
                            &message
                        )
                    );
                }
                Err(Failed::from(message))
            }));
        }
    }
    if let Some(dir) = config.flows.clone() {
        trials.extend(crate::flows::trials(&dir, args.list));
    }
    if let Some(dir) = config.mcp_contracts.clone() {
        trials.extend(crate::flows::contracts(&dir, config.baseline_write));
    }
    if let Some(dir) = config.snapshots.clone() {
        let suite = suite.clone();
        trials.push(Trial::test(SNAPSHOT_TEST, move || {
            let vector = crate::snapshot::verdict_vector(&suite.cases);
            crate::snapshot::assert_vector(&dir, &vector);
            Ok(())
        }));
    }
    trials
}

/// A trial's name, `agent::case-id`, escaped: test runners print names as they are, and an agent
/// or case named with a control character must not reach the terminal raw.
fn trial_name(agent: &str, rest: &str) -> String {
    format!("{}::{}", escape(agent), escape(rest))
}

/// How one test of [`results`] came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// It passed.
    Pass,
    /// It failed exactly as the baseline records: a pass, shown as an expected failure.
    ExpectedFailure,
    /// It failed; the message says how.
    Failure,
}

/// One test of the suite as data: the name, outcome and message of the trial
/// [`crate::Harness::run`] runs under that name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    /// The test's name, `<agent>::<case-id>` or a suite-level check (`<agent>::[coverage]`).
    pub name: String,
    /// How it came out.
    pub status: Status,
    /// What a failing test prints; for an expected failure, the fingerprint it is known by.
    pub message: Option<String>,
    /// The file the result points at (the case, the recording, the baseline, a tree).
    pub file: std::path::PathBuf,
    /// The line in `file`, when one is known.
    pub line: Option<usize>,
    /// What was said without failing anything (notes on calls), one line each.
    pub notes: Vec<String>,
}

/// Every test of the suite under `config`, evaluated, in the order and with the names and
/// messages of the harness's trials: what a test runner other than libtest (the pytest plugin)
/// reports test by test. MCP flows, catalog contracts and the snapshot check are not included
/// (they need the harness's `mcp` feature or insta's runner).
pub fn results(config: &Config) -> Vec<TestResult> {
    let suite = Suite::discover(config);
    let suite_check = |name: String, file: std::path::PathBuf, problems: Vec<String>| {
        let failed = !problems.is_empty();
        TestResult {
            name,
            status: if failed {
                Status::Failure
            } else {
                Status::Pass
            },
            message: failed.then(|| problems.join("\n")),
            file,
            line: None,
            notes: Vec::new(),
        }
    };
    let mut results = vec![suite_check(
        DISCOVERY_TEST.to_owned(),
        config.cases.clone(),
        suite_problems(config, &suite),
    )];
    for agent in suite.agent_names() {
        let (baseline, problem) = load_baseline(config, agent);
        results.push(suite_check(
            trial_name(agent, "[baseline]"),
            config.baseline_file(agent),
            baseline_problems(config, &suite, agent, &baseline, problem),
        ));
        let Some(files) = suite.agents.get(agent) else {
            continue;
        };
        results.push(suite_check(
            trial_name(agent, "[coverage]"),
            config.recorded.join(agent),
            coverage_problems(config, &suite, agent),
        ));
        for (id, recording) in &files.recordings {
            let Some(case_path) = suite.cases.get(id) else {
                continue;
            };
            let report = evaluate(
                config,
                agent,
                id,
                case_path,
                recording,
                baseline.entries.get(id),
            );
            let (file, line) = report.location();
            let (file, line) = (file.to_path_buf(), line);
            let notes = report.notes().map(|n| n.to_string()).collect();
            let (status, message) = match (&report.outcome, report.message()) {
                (Outcome::ExpectedFailure, _) => (
                    Status::ExpectedFailure,
                    Some(format!(
                        "a known failure ({}): {}",
                        escape_path(&config.baseline_file(agent)),
                        report
                            .fingerprint
                            .iter()
                            .map(|e| escape(e).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                ),
                (_, None) => (Status::Pass, None),
                (_, Some(message)) => (Status::Failure, Some(message)),
            };
            results.push(TestResult {
                name: trial_name(agent, id),
                status,
                message,
                file,
                line,
                notes,
            });
        }
        for (id, message) in missing_recordings(config, &suite, agent) {
            results.push(TestResult {
                name: trial_name(agent, &id),
                status: Status::Failure,
                message: Some(message),
                file: config.cases.join(format!("{id}.json")),
                line: None,
                notes: Vec::new(),
            });
        }
    }
    results
}

/// The trial `--exact agent::case-id` names, found by path alone; `None` when the name is a
/// suite-level check or the files are not where the name says.
fn exact_trial(
    config: &Arc<Config>,
    name: &str,
    list: bool,
    expected: &Arc<AtomicUsize>,
) -> Option<Trial> {
    let (agent, id) = name.split_once("::")?;
    if id.ends_with(']') {
        return None;
    }
    let (case_path, recording) = locate_one(config, agent, id)?;
    let (baseline, _) = load_baseline(config, agent);
    let entry = baseline.entries.get(id).cloned();
    let trial = case_trial(config, agent, id, case_path, recording, entry, expected);
    Some(if baseline.entries.contains_key(id) && !list {
        trial.with_kind("xfail")
    } else {
        trial
    })
}

fn case_trial(
    config: &Arc<Config>,
    agent: &str,
    id: &str,
    case_path: std::path::PathBuf,
    recording: std::path::PathBuf,
    entry: Option<Entry>,
    expected: &Arc<AtomicUsize>,
) -> Trial {
    let (config, agent, id, expected) = (
        config.clone(),
        agent.to_owned(),
        id.to_owned(),
        expected.clone(),
    );
    Trial::test(trial_name(&agent, &id), move || {
        let case = CaseFiles {
            agent: &agent,
            id: &id,
            case_path: &case_path,
            recording: &recording,
            entry: entry.as_ref(),
        };
        run_case(&config, &case, &expected).map_err(Failed::from)
    })
}

/// One case test's files and baseline entry.
struct CaseFiles<'a> {
    agent: &'a str,
    id: &'a str,
    case_path: &'a std::path::Path,
    recording: &'a std::path::Path,
    entry: Option<&'a Entry>,
}

/// A case test: its failure message, or `Ok` (an expected failure counted in `expected`).
fn run_case(config: &Config, case: &CaseFiles<'_>, expected: &AtomicUsize) -> Result<(), String> {
    let report = evaluate(
        config,
        case.agent,
        case.id,
        case.case_path,
        case.recording,
        case.entry,
    );
    if report.outcome == Outcome::ExpectedFailure {
        expected.fetch_add(1, Ordering::Relaxed);
        // nextest runs one test per process and shows a pass as PASS, so the kind libtest-mimic
        // prints ([xfail]) is lost there: this line says it, shown and kept in JUnit by the
        // override `toolcall init` writes into .config/nextest.toml.
        if std::env::var_os("NEXTEST").is_some() {
            println!(
                "XFAIL {}: a known failure ({}): {}",
                trial_name(case.agent, case.id),
                escape_path(&config.baseline_file(case.agent)),
                report
                    .fingerprint
                    .iter()
                    .map(|e| escape(e).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for note in report.notes() {
        eprintln!("note: {}: {note}", trial_name(case.agent, case.id));
    }
    match report.message() {
        None => Ok(()),
        Some(message) => {
            if config.annotations {
                annotate_case(&report, &message);
            }
            Err(message)
        }
    }
}

/// Under nextest, `--exact agent::case-id` runs one case test without libtest-mimic's framing
/// (`running 1 test`, `test result: ok`), so a passing test prints nothing and an expected
/// failure exactly its `XFAIL` line: what nextest's `success-output` then shows. `None` when the
/// name is not a case found by path; the caller runs the trials as usual.
fn run_exact_under_nextest(config: &Config, name: &str) -> Option<ExitCode> {
    let (agent, id) = name.split_once("::")?;
    if id.ends_with(']') {
        return None;
    }
    let (case_path, recording) = locate_one(config, agent, id)?;
    let (baseline, _) = load_baseline(config, agent);
    let case = CaseFiles {
        agent,
        id,
        case_path: &case_path,
        recording: &recording,
        entry: baseline.entries.get(id),
    };
    Some(match run_case(config, &case, &AtomicUsize::new(0)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // As libtest reports a failure: the message, then exit code 101.
            println!("---- {} ----\n{message}", trial_name(agent, id));
            ExitCode::from(101)
        }
    })
}

fn annotate_case(report: &CaseReport, message: &str) {
    let (file, line) = &report.annotate;
    println!(
        "{}",
        annotation(
            &repo_relative(file),
            *line,
            &format!(
                "{}::{} ({})",
                report.agent,
                report.case_id,
                report.outcome.label()
            ),
            message
        )
    );
}

/// A suite-level check: fails with its problems, one paragraph each.
fn check(config: &Config, file: &std::path::Path, problems: Vec<String>) -> Result<(), Failed> {
    if problems.is_empty() {
        return Ok(());
    }
    let message = problems.join("\n");
    if config.annotations {
        println!(
            "{}",
            annotation(&repo_relative(file), None, "toolcall suite check", &message)
        );
    }
    Err(message.into())
}

/// Rewrites every agent's baseline from a full run: failing cases get an entry with their
/// current fingerprint (keeping the note of an entry that stays, and the file's `$schema`),
/// passing cases lose theirs,
/// entries of vanished cases go. Entries that cannot be judged this run (an unreadable case or
/// recording, a missing recording) are kept as they are. Nothing is written unless every old
/// baseline could be read. A summary goes to stderr.
///
/// What `ATP_BASELINE_WRITE=1 cargo test` does before testing, and `toolcall check
/// --write-baselines` for a tree with no test target.
pub fn write_baselines(config: &Config) -> Result<(), crate::BaselineError> {
    let report = Report::build(config);
    let mut plans = Vec::new();
    for agent in report.agents() {
        let file = config.baseline_file(&agent.name);
        let old = baseline::load(&file)?;
        let new = rebuild(old.as_ref().unwrap_or(&Baseline::new()), agent, &report);
        plans.push((file, old, new));
    }
    let mut written = 0;
    for (file, old, new) in plans {
        let changes = Changes::between(old.as_ref().unwrap_or(&Baseline::new()), &new);
        let unchanged_text = old.as_ref().is_some_and(|o| {
            toolcall_score::read_text(&file).is_ok_and(|t| t == baseline::render(o))
        });
        if changes.is_empty() && (old.is_none() || unchanged_text) {
            continue;
        }
        baseline::write_atomic(&file, &baseline::render(&new))?;
        written += 1;
        eprint!("{}", changes.summary(&escape_path(&file).to_string()));
    }
    if written == 0 {
        eprintln!(
            "baselines under {} are up to date",
            escape_path(&config.baselines)
        );
    }
    Ok(())
}

fn rebuild(old: &Baseline, agent: &crate::AgentReport, report: &Report) -> Baseline {
    // The file's `$schema` stays whatever becomes of its entries.
    let mut new = Baseline {
        schema: old.schema.clone(),
        entries: BTreeMap::new(),
    };
    if !agent.has_recordings {
        return new;
    }
    let judged: BTreeMap<&str, &CaseReport> = agent
        .cases
        .iter()
        .map(|c| (c.case_id.as_str(), c))
        .collect();
    for case in &agent.cases {
        if matches!(case.outcome, Outcome::Error(_)) {
            continue;
        }
        if case.has_findings() {
            new.entries.insert(
                case.case_id.clone(),
                Entry {
                    fingerprint: case.fingerprint.clone(),
                    note: old.entries.get(&case.case_id).and_then(|e| e.note.clone()),
                },
            );
        }
    }
    for (id, entry) in &old.entries {
        let unjudged = match judged.get(id.as_str()) {
            Some(case) => matches!(case.outcome, Outcome::Error(_)),
            None => report.has_case(id),
        };
        if unjudged {
            new.entries.insert(id.clone(), entry.clone());
        }
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Arguments {
        Arguments::from_iter(std::iter::once("test").chain(list.iter().copied()))
    }

    /// `results` lists exactly the trials the harness runs, in the same order.
    #[test]
    fn results_name_the_trials() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let config = Config::for_root(&root);
        let expected = Arc::new(AtomicUsize::new(0));
        let trials: Vec<String> = trials(&config, &args(&[]), &expected)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let results: Vec<String> = results(&config).into_iter().map(|r| r.name).collect();
        assert!(results.len() > 10, "{results:?}");
        assert_eq!(results, trials);
    }

    #[test]
    fn partial_runs_are_recognised() {
        assert_eq!(partial_run(&args(&[]), false), None);
        assert_eq!(partial_run(&args(&["--nocapture"]), false), None);
        assert_eq!(
            partial_run(&args(&[]), true),
            Some("nextest runs one process per test")
        );
        assert_eq!(
            partial_run(&args(&["--exact", "a::b"]), false),
            Some("--exact")
        );
        assert_eq!(partial_run(&args(&["--skip", "a"]), false), Some("--skip"));
        assert_eq!(
            partial_run(&args(&["billing"]), false),
            Some("a test name filter")
        );
        assert_eq!(partial_run(&args(&["--ignored"]), false), Some("--ignored"));
    }
}
