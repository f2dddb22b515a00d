//! Tests of the harness itself, on the fixture trees under `tests/fixtures/`:
//!
//! - `green/`: two agents in two provider formats, every test passes, three as expected
//!   failures, and the dummy agent's snapshot matches;
//! - `red/`: one of every failure (a new failure, a changed failure, a baselined case that now
//!   passes, a malformed case, a stale baseline entry, a missing and a stale recording) and a
//!   dummy snapshot that no longer matches.
//!
//! The data-level checks call [`Report::build`]; the process-level ones (exit codes, `--list`,
//! `--exact`, the write mode and its refusals, annotations, the snapshot) run *this binary* as
//! the harness under test: with `ATP_HARNESS_SELF_TEST=child` in its environment, `main` is a
//! plain `Harness::new().run()` configured by `ATP_*` variables, exactly as an embedding crate's
//! would be.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};

use libtest_mimic::{Arguments, Failed, Trial};
use toolcall_harness::{Harness, Outcome, Report};

const CHILD: &str = "ATP_HARNESS_SELF_TEST";

type Test = fn() -> Result<(), Failed>;
/// Arguments, extra environment, and the reason the refusal must give.
type Refusal<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return Harness::new().run();
    }
    let args = Arguments::from_args();
    let tests: Vec<(&str, Test)> = vec![
        ("report::each_baseline_outcome", each_baseline_outcome),
        (
            "report::messages_name_the_tool_cause_and_suggestion",
            messages_name_the_tool_cause_and_suggestion,
        ),
        ("report::changed_shows_a_diff", changed_shows_a_diff),
        ("report::stale_entry_and_coverage", stale_entry_and_coverage),
        (
            "report::jsonl_fingerprint_is_the_union",
            jsonl_fingerprint_is_the_union,
        ),
        (
            "report::bad_case_fails_its_own_test_only",
            bad_case_fails_its_own_test_only,
        ),
        (
            "report::a_recorded_stream_is_one_response",
            a_recorded_stream_is_one_response,
        ),
        (
            "report::prompt_drift_fails_the_case_whatever_the_model_answers",
            prompt_drift_fails_the_case_whatever_the_model_answers,
        ),
        (
            "process::green_tree_exits_zero_with_xfail",
            green_tree_exits_zero_with_xfail,
        ),
        ("process::red_tree_exits_non_zero", red_tree_exits_non_zero),
        ("process::zero_cases_is_a_failure", zero_cases_is_a_failure),
        ("process::list_terse_is_clean", list_terse_is_clean),
        (
            "process::names_from_the_tree_are_listed_escaped",
            names_from_the_tree_are_listed_escaped,
        ),
        (
            "process::exact_does_not_walk_the_tree",
            exact_does_not_walk_the_tree,
        ),
        ("process::github_annotations", github_annotations),
        (
            "snapshot::changed_verdict_fails_and_writes_nothing_in_ci",
            snapshot_catches_a_changed_verdict,
        ),
        (
            "write::rewrites_from_a_full_run",
            write_rewrites_from_a_full_run,
        ),
        ("write::is_idempotent", write_is_idempotent),
        (
            "write::empties_the_baseline_of_a_vanished_agent",
            write_empties_a_vanished_agent,
        ),
        ("write::refuses_partial_runs", write_refuses_partial_runs),
        (
            "write::rejects_invalid_values",
            write_rejects_invalid_values,
        ),
    ];
    let trials = tests
        .into_iter()
        .map(|(name, test)| Trial::test(name, test))
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

// ---------- helpers ----------

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh copy of a fixture tree, for tests that write.
fn scratch(name: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("harness-tests")
        .join(test);
    let _ = fs::remove_dir_all(&dir);
    copy_dir(&fixture(name), &dir);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn report(tree: &Path) -> Report {
    Report::build(&toolcall_harness::Config::for_root(tree))
}

/// Runs this binary as the harness over `tree` with `args`, in a clean environment (`CI=true`
/// so insta never writes) plus `env`.
fn harness(tree: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("ATP_")
            || key.starts_with("NEXTEST")
            || key.starts_with("INSTA_")
            || key.starts_with("GITHUB_")
            || key == "CI"
        {
            command.env_remove(&*key);
        }
    }
    command
        .current_dir(tree)
        .env(CHILD, "child")
        .env("ATP_SNAPSHOTS", "snapshots")
        .env("CI", "true")
        .args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The names of the tests a run reports as failed.
fn failed(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("test ")?
                .trim_end()
                .strip_suffix("... FAILED")
        })
        .map(|name| name.trim().trim_start_matches("[xfail]").trim().to_owned())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

fn outcome_of<'a>(report: &'a Report, agent: &str, id: &str) -> &'a toolcall_harness::CaseReport {
    report
        .agents()
        .iter()
        .find(|a| a.name == agent)
        .and_then(|a| a.cases.iter().find(|c| c.case_id == id))
        .unwrap_or_else(|| panic!("no result for {agent}::{id}"))
}

// ---------- report-level ----------

fn each_baseline_outcome() -> Result<(), Failed> {
    let report = report(&fixture("red"));
    let expect = [
        ("billing/clean", "pass"),
        ("billing/expected", "expected failure"),
        ("billing/new-failure", "failure"),
        ("billing/changed", "changed"),
        ("billing/now-passes", "now passes"),
        ("broken/bad-syntax", "error"),
    ];
    for (id, label) in expect {
        let case = outcome_of(&report, "claude", id);
        ensure!(
            case.outcome.label() == label,
            "{id}: expected {label}, got {:?}",
            case.outcome
        );
        ensure!(
            case.outcome.is_ok() == matches!(label, "pass" | "expected failure"),
            "{id}: is_ok disagrees"
        );
    }
    let now = outcome_of(&report, "claude", "billing/now-passes");
    let message = now.message().unwrap_or_default();
    ensure!(
        message.starts_with("now passes: remove it from")
            && message.contains(
                "claude.json (toolcall baseline accept claude::billing/now-passes (or the whole \
                 suite: ATP_BASELINE_WRITE=1 cargo test))"
            ),
        "{message}"
    );
    ensure!(
        outcome_of(&report, "claude", "billing/expected")
            .message()
            .is_none(),
        "an expected failure has no failure message"
    );
    let counts = report.agents()[0].counts();
    ensure!(
        (counts.pass, counts.expected_failure, counts.failure) == (1, 1, 4),
        "{counts:?}"
    );
    ensure!(!report.is_ok(), "the red tree is not ok");
    Ok(())
}

fn messages_name_the_tool_cause_and_suggestion() -> Result<(), Failed> {
    let report = report(&fixture("red"));
    let case = outcome_of(&report, "claude", "billing/new-failure");
    let message = case.message().unwrap_or_default();
    for needle in [
        "`get_invoices`",
        "(invented)",
        "did you mean `get_invoice`",
        "does not list it",
        "ATP_BASELINE_WRITE=1 cargo test",
    ] {
        ensure!(
            message.contains(needle),
            "missing {needle:?} in:\n{message}"
        );
    }
    ensure!(
        case.fingerprint == ["get_invoices (invented)"],
        "{:?}",
        case.fingerprint
    );
    Ok(())
}

fn changed_shows_a_diff() -> Result<(), Failed> {
    let report = report(&fixture("red"));
    let case = outcome_of(&report, "claude", "billing/changed");
    let message = case.message().unwrap_or_default();
    for needle in [
        "--- baseline",
        "+++ now",
        "-get_invoice_list (invented)",
        "+get_invoices (invented)",
    ] {
        ensure!(
            message.contains(needle),
            "missing {needle:?} in:\n{message}"
        );
    }
    Ok(())
}

fn stale_entry_and_coverage() -> Result<(), Failed> {
    let report = report(&fixture("red"));
    let agent = &report.agents()[0];
    let baseline = agent.baseline.join("\n");
    ensure!(
        baseline.contains("billing/gone") && baseline.contains("no longer exist"),
        "{baseline}"
    );
    ensure!(
        !baseline.contains("billing/changed"),
        "only the stale entry is reported: {baseline}"
    );
    let coverage = agent.coverage.join("\n");
    ensure!(
        coverage.contains("no recorded response") && coverage.contains("billing/uncovered"),
        "{coverage}"
    );
    ensure!(
        coverage.contains("have no case") && coverage.contains("billing/orphan"),
        "{coverage}"
    );
    let green = crate::report(&fixture("green"));
    ensure!(
        green.is_ok(),
        "green: {:?}",
        green
            .agents()
            .iter()
            .map(|a| (&a.coverage, &a.baseline))
            .collect::<Vec<_>>()
    );
    Ok(())
}

fn jsonl_fingerprint_is_the_union() -> Result<(), Failed> {
    let report = report(&fixture("green"));
    let case = outcome_of(&report, "claude", "billing/sampled");
    ensure!(case.samples.len() == 3, "{} samples", case.samples.len());
    ensure!(case.samples[0].verdict.is_pass(), "the first sample passes");
    ensure!(
        case.fingerprint == ["fetch_balance (invented)", "get_balances (invented)"],
        "{:?}",
        case.fingerprint
    );
    ensure!(
        case.outcome == Outcome::ExpectedFailure,
        "{:?}",
        case.outcome
    );
    let lines: Vec<Option<usize>> = case.samples.iter().map(|s| s.line).collect();
    ensure!(lines == [Some(1), Some(2), Some(3)], "{lines:?}");
    Ok(())
}

/// The Anthropic stream of `recorded/claude/billing/invented.json`: the same call, in events.
const INVENTED_STREAM: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01H8","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":412,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_invoices","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"account_id\": "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"acc_2\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":61}}

event: message_stop
data: {"type":"message_stop"}
"#;

/// A `.sse` recording is one response, scored like the body it assembles into; a case recorded
/// under two names is a coverage problem that names both files.
fn a_recorded_stream_is_one_response() -> Result<(), Failed> {
    let tree = scratch("green", "recorded-stream");
    let billing = tree.join("recorded/claude/billing");
    fs::remove_file(billing.join("invented.json"))?;
    fs::write(billing.join("invented.sse"), INVENTED_STREAM)?;
    let streamed = report(&tree);
    let case = outcome_of(&streamed, "claude", "billing/invented");
    ensure!(case.samples.len() == 1, "{} samples", case.samples.len());
    ensure!(
        case.fingerprint == ["get_invoices (invented)"],
        "{:?}",
        case.fingerprint
    );
    ensure!(
        case.outcome == Outcome::ExpectedFailure,
        "{:?}",
        case.outcome
    );
    ensure!(
        streamed.is_ok(),
        "the stream stands in for the body: {streamed:?}"
    );

    // The same events one per line in a `.jsonl`: its first line is no body, so it is one
    // stream, not samples.
    fs::remove_file(billing.join("invented.sse"))?;
    let lines: Vec<&str> = INVENTED_STREAM
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .collect();
    fs::write(billing.join("invented.jsonl"), lines.join("\n") + "\n")?;
    let per_line = report(&tree);
    let case = outcome_of(&per_line, "claude", "billing/invented");
    ensure!(case.samples.len() == 1, "{} samples", case.samples.len());
    ensure!(
        case.fingerprint == ["get_invoices (invented)"],
        "{:?}",
        case.fingerprint
    );
    fs::remove_file(billing.join("invented.jsonl"))?;
    fs::write(billing.join("invented.sse"), INVENTED_STREAM)?;

    fs::copy(billing.join("clean.json"), billing.join("clean.sse"))?;
    let twice = report(&tree);
    let claude = twice.agents().iter().find(|a| a.name == "claude");
    let coverage = claude.map(|a| a.coverage.join("\n")).unwrap_or_default();
    ensure!(
        coverage.contains("recorded twice") && coverage.contains("clean.sse"),
        "{coverage}"
    );
    Ok(())
}

/// A prompt that names a tool the case does not define fails the case's test for every agent,
/// even one whose recorded call is fine: the renamed tool is the regression (issue 19: the drift
/// lint is part of each case's test, not a separate command to remember).
fn prompt_drift_fails_the_case_whatever_the_model_answers() -> Result<(), Failed> {
    let tree = scratch("green", "drift");
    let case = tree.join("cases/billing/clean.json");
    let text = fs::read_to_string(&case)?.replace(
        "Use get_balance for balances.",
        "Use get_balance for balances. Always call lookup_account first.",
    );
    fs::write(&case, text)?;
    let report = report(&tree);
    for agent in ["claude", "gpt"] {
        let clean = outcome_of(&report, agent, "billing/clean");
        ensure!(
            clean.outcome == Outcome::Failure,
            "{agent}: {:?}",
            clean.outcome
        );
        ensure!(
            clean.fingerprint == ["drift: lookup_account"],
            "{agent}: {:?}",
            clean.fingerprint
        );
        let message = clean.message().unwrap_or_default();
        ensure!(
            message.contains(
                "- drift (in the case, whatever the model answers): `lookup_account` is not \
                 defined, but the system prompt says: \"Always call lookup_account first\""
            ),
            "{message}"
        );
    }
    Ok(())
}

fn bad_case_fails_its_own_test_only() -> Result<(), Failed> {
    let report = report(&fixture("red"));
    let case = outcome_of(&report, "claude", "broken/bad-syntax");
    let Outcome::Error(message) = &case.outcome else {
        return Err(format!("{:?}", case.outcome).into());
    };
    ensure!(
        message.contains("bad-syntax.json:4:1"),
        "the error names file:line:col: {message}"
    );
    ensure!(
        outcome_of(&report, "claude", "billing/clean").outcome == Outcome::Pass,
        "the other tests still run"
    );
    Ok(())
}

// ---------- process-level ----------

fn green_tree_exits_zero_with_xfail() -> Result<(), Failed> {
    let output = harness(&fixture("green"), &[], &[]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.code() == Some(0), "{stdout}\n{stderr}");
    ensure!(
        stdout.contains("[xfail] claude::billing/retired"),
        "expected failures are shown as such:\n{stdout}"
    );
    ensure!(
        stdout.contains("dummy-agent::[snapshot]"),
        "the snapshot is a test:\n{stdout}"
    );
    ensure!(
        stderr.contains("6 expected failure(s)"),
        "a summary of expected failures:\n{stderr}"
    );
    Ok(())
}

fn red_tree_exits_non_zero() -> Result<(), Failed> {
    let output = harness(&fixture("red"), &[], &[]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.code() == Some(101), "{stdout}\n{stderr}");
    let failed = failed(&stdout);
    let expected = names(&[
        "claude::billing/new-failure",
        "claude::billing/changed",
        "claude::billing/now-passes",
        "claude::broken/bad-syntax",
        "claude::[baseline]",
        "claude::[coverage]",
        // No recording: the case's own test fails, naming the file to record.
        "claude::billing/uncovered",
        "dummy-agent::[snapshot]",
    ]);
    ensure!(failed == expected, "failed: {failed:?}\n{stdout}");
    ensure!(
        stdout.contains("`claude` has no recorded response for case `billing/uncovered`"),
        "{stdout}"
    );
    Ok(())
}

fn zero_cases_is_a_failure() -> Result<(), Failed> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness-tests/empty");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("cases")).unwrap();
    let output = harness(&dir, &[], &[("ATP_SNAPSHOTS", "")]);
    let (stdout, stderr) = text(&output);
    // An empty ATP_SNAPSHOTS is itself refused: check that, then run without it.
    ensure!(
        output.status.code() == Some(2) && stderr.contains("ATP_SNAPSHOTS"),
        "{stdout}\n{stderr}"
    );
    let mut command = Command::new(std::env::current_exe().unwrap());
    let output = command
        .current_dir(&dir)
        .env(CHILD, "child")
        .env_remove("ATP_SNAPSHOTS")
        .env_remove("ATP_CASES")
        .env_remove("NEXTEST")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    ensure!(output.status.code() == Some(101), "{stdout}\n{stderr}");
    ensure!(
        stdout.contains("finding zero cases is a failure"),
        "{stdout}"
    );
    Ok(())
}

fn list_terse_is_clean() -> Result<(), Failed> {
    let output = harness(&fixture("red"), &["--list", "--format", "terse"], &[]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.success(), "{stderr}");
    let mut names = Vec::new();
    for line in stdout.lines() {
        let Some(name) = line.strip_suffix(": test") else {
            return Err(format!("not a `name: test` line: {line:?}").into());
        };
        ensure!(
            !name.starts_with('['),
            "a kind leaked into the list: {line}"
        );
        names.push(name);
    }
    ensure!(
        names.contains(&"claude::billing/expected") && names.contains(&"suite::[discovery]"),
        "{names:?}"
    );
    ensure!(names.len() == 11, "{} names: {names:?}", names.len());
    let ignored = harness(
        &fixture("red"),
        &["--list", "--format", "terse", "--ignored"],
        &[],
    );
    ensure!(
        ignored.status.success() && ignored.stdout.is_empty(),
        "{:?}",
        text(&ignored)
    );
    Ok(())
}

/// An agent directory and a case file named with ESC and a right-to-left override: the test
/// names libtest prints carry them escaped, and the tests still run.
fn names_from_the_tree_are_listed_escaped() -> Result<(), Failed> {
    let tree = scratch("red", "hostile-names");
    let hostile = "ev\u{1b}[2Jil\u{202e}";
    std::fs::rename(
        tree.join("recorded/claude"),
        tree.join("recorded").join(hostile),
    )?;
    let output = harness(&tree, &["--list", "--format", "terse"], &[]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.success(), "{stderr}");
    ensure!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{202e}'),
        "raw control characters in the list: {stdout:?}"
    );
    ensure!(
        stdout.contains("ev\\u{1b}[2Jil\\u{202e}::billing/expected: test"),
        "{stdout}"
    );
    let output = harness(&tree, &[], &[]);
    let (stdout, _) = text(&output);
    ensure!(
        !stdout.contains('\u{1b}')
            && stdout.contains("ev\\u{1b}[2Jil\\u{202e}::billing/new-failure"),
        "{stdout}"
    );
    Ok(())
}

fn exact_does_not_walk_the_tree() -> Result<(), Failed> {
    let output = harness(
        &fixture("red"),
        &["--exact", "claude::billing/new-failure", "--nocapture"],
        &[],
    );
    let (stdout, stderr) = text(&output);
    ensure!(output.status.code() == Some(101), "{stdout}\n{stderr}");
    ensure!(stdout.contains("running 1 test"), "{stdout}");
    // Only the named trial was built: nothing was filtered out of a walked tree.
    ensure!(stdout.contains("0 filtered out"), "{stdout}");
    let output = harness(
        &fixture("red"),
        &["--exact", "claude::billing/expected"],
        &[],
    );
    let (stdout, stderr) = text(&output);
    ensure!(output.status.success(), "{stdout}\n{stderr}");
    ensure!(
        stdout.contains("[xfail] claude::billing/expected"),
        "{stdout}"
    );
    // A suite-level check needs the walk, and still runs alone.
    let output = harness(&fixture("red"), &["--exact", "claude::[coverage]"], &[]);
    let (stdout, _) = text(&output);
    ensure!(
        stdout.contains("running 1 test") && output.status.code() == Some(101),
        "{stdout}"
    );
    Ok(())
}

fn github_annotations() -> Result<(), Failed> {
    let tree = fixture("red");
    let output = harness(
        &tree,
        &["--exact", "claude::billing/new-failure"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKSPACE", tree.to_str().unwrap()),
        ],
    );
    let (stdout, _) = text(&output);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .ok_or_else(|| format!("no annotation:\n{stdout}"))?;
    // The whole annotation, on one line: the recording relative to the workspace at the line of
    // the failing call, the test's name as its title, the message with its newlines escaped.
    // Kept apart from tests/snapshots, the bundled suite's.
    insta::with_settings!({ snapshot_path => "harness-snapshots" }, {
        insta::assert_snapshot!(line);
    });
    let quiet = harness(&tree, &["--exact", "claude::billing/new-failure"], &[]);
    ensure!(
        !text(&quiet).0.contains("::error"),
        "no annotations outside GitHub Actions"
    );
    let bad = harness(
        &tree,
        &["--exact", "claude::broken/bad-syntax"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKSPACE", tree.to_str().unwrap()),
        ],
    );
    ensure!(
        text(&bad)
            .0
            .contains("::error file=cases/broken/bad-syntax.json,line=4,"),
        "{}",
        text(&bad).0
    );
    Ok(())
}

fn snapshot_catches_a_changed_verdict() -> Result<(), Failed> {
    let tree = scratch("red", "snapshot");
    for env in [
        &[("CI", "true")][..],
        &[("INSTA_UPDATE", "no"), ("CI", "")][..],
    ] {
        let output = harness(&tree, &["--exact", "dummy-agent::[snapshot]"], env);
        let (stdout, stderr) = text(&output);
        ensure!(
            output.status.code() == Some(101),
            "{env:?}\n{stdout}\n{stderr}"
        );
        ensure!(
            failed(&stdout) == names(&["dummy-agent::[snapshot]"]),
            "{stdout}"
        );
        ensure!(
            stdout.contains("-billing/clean: call get_balances -> fail: get_balances (invented)")
                || stderr.contains("-billing/clean: call get_balances"),
            "insta shows the changed line:\n{stdout}\n{stderr}"
        );
        let pending: Vec<_> = fs::read_dir(tree.join("snapshots"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        ensure!(pending.len() == 1, "insta wrote nothing: {pending:?}");
    }
    // The same check passes on a tree whose snapshot matches.
    let output = harness(
        &fixture("green"),
        &["--exact", "dummy-agent::[snapshot]"],
        &[],
    );
    ensure!(output.status.success(), "{:?}", text(&output));
    Ok(())
}

// ---------- write mode ----------

fn write_rewrites_from_a_full_run() -> Result<(), Failed> {
    let tree = scratch("red", "write-full");
    let list = |tree: &Path| harness(tree, &["--list"], &[]).stdout;
    let listed_before = list(&tree);
    let output = harness(&tree, &[], &[("ATP_BASELINE_WRITE", "1")]);
    ensure!(
        list(&tree) == listed_before,
        "test names do not depend on baseline status"
    );
    let (stdout, stderr) = text(&output);
    let written = fs::read_to_string(tree.join("baselines/claude.json")).unwrap();
    let expected = r#"{
  "billing/changed": {
    "fingerprint": [
      "get_invoices (invented)"
    ],
    "note": "the note of an entry that stays is kept"
  },
  "billing/expected": {
    "fingerprint": [
      "get_invoices (invented)"
    ]
  },
  "billing/new-failure": {
    "fingerprint": [
      "get_invoices (invented)"
    ]
  }
}
"#;
    ensure!(
        written == expected,
        "written:\n{written}\nstderr:\n{stderr}"
    );
    for needle in [
        "claude.json: 1 added, 2 removed, 1 changed",
        "+ billing/new-failure: get_invoices (invented)",
        "- billing/gone: lookup_customer (prompt_drift)",
        "- billing/now-passes: get_balances (invented)",
        "~ billing/changed: get_invoice_list (invented) -> get_invoices (invented)",
    ] {
        ensure!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }
    // After the rewrite the ratchet tests pass; what is left is what a baseline cannot fix.
    let failed = failed(&stdout);
    let left = names(&[
        "claude::broken/bad-syntax",
        "claude::[coverage]",
        "claude::billing/uncovered",
        "dummy-agent::[snapshot]",
    ]);
    ensure!(failed == left, "{failed:?}\n{stdout}");
    Ok(())
}

fn write_is_idempotent() -> Result<(), Failed> {
    let tree = scratch("green", "write-idempotent");
    let before = fs::read(tree.join("baselines/claude.json")).unwrap();
    let output = harness(&tree, &[], &[("ATP_BASELINE_WRITE", "1")]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.success(), "{stdout}\n{stderr}");
    ensure!(stderr.contains("up to date"), "{stderr}");
    ensure!(
        fs::read(tree.join("baselines/claude.json")).unwrap() == before,
        "an up-to-date baseline is not touched"
    );
    Ok(())
}

fn write_refuses_partial_runs() -> Result<(), Failed> {
    let tree = scratch("red", "write-refused");
    let file = tree.join("baselines/claude.json");
    let before = fs::read(&file).unwrap();
    let cases: [Refusal; 5] = [
        (&["billing"], &[], "a test name filter"),
        (&["--exact", "claude::billing/clean"], &[], "--exact"),
        (&["--skip", "billing"], &[], "--skip"),
        (&["--ignored"], &[], "--ignored"),
        (
            &[],
            &[("NEXTEST", "1")],
            "nextest runs one process per test",
        ),
    ];
    for (args, extra, why) in cases {
        let mut env = vec![("ATP_BASELINE_WRITE", "1")];
        env.extend_from_slice(extra);
        let output = harness(&tree, args, &env);
        let (stdout, stderr) = text(&output);
        ensure!(
            output.status.code() == Some(2),
            "{args:?}: {stdout}\n{stderr}"
        );
        ensure!(
            stderr.contains(&format!("partial run ({why})"))
                && stderr.contains("Nothing was written"),
            "{args:?}: {stderr}"
        );
        ensure!(
            fs::read(&file).unwrap() == before,
            "{args:?}: the file changed"
        );
    }
    Ok(())
}

fn write_rejects_invalid_values() -> Result<(), Failed> {
    let tree = scratch("red", "write-invalid");
    let before = fs::read(tree.join("baselines/claude.json")).unwrap();
    for value in ["true", "yes", ""] {
        let output = harness(&tree, &[], &[("ATP_BASELINE_WRITE", value)]);
        let (_, stderr) = text(&output);
        ensure!(output.status.code() == Some(2), "{value:?}: {stderr}");
        ensure!(
            stderr.contains("ATP_BASELINE_WRITE") && stderr.contains("unset, `0` or `1`"),
            "{stderr}"
        );
    }
    ensure!(
        fs::read(tree.join("baselines/claude.json")).unwrap() == before,
        "nothing was written"
    );
    let output = harness(
        &tree,
        &["--exact", "claude::billing/clean"],
        &[("ATP_BASELINE_WRITE", "0")],
    );
    ensure!(
        output.status.success(),
        "`0` is allowed: {:?}",
        text(&output)
    );
    Ok(())
}

fn write_empties_a_vanished_agent() -> Result<(), Failed> {
    let tree = scratch("green", "write-vanished-agent");
    let ghost = tree.join("baselines/ghost.json");
    fs::write(
        &ghost,
        "{\"billing/clean\": {\"fingerprint\": [\"x (invented)\"]}}\n",
    )
    .unwrap();
    let output = harness(&tree, &[], &[]);
    let (stdout, _) = text(&output);
    ensure!(failed(&stdout) == names(&["ghost::[baseline]"]), "{stdout}");
    ensure!(stdout.contains("which has no recordings"), "{stdout}");
    let output = harness(&tree, &[], &[("ATP_BASELINE_WRITE", "1")]);
    let (stdout, stderr) = text(&output);
    ensure!(output.status.success(), "{stdout}\n{stderr}");
    ensure!(fs::read_to_string(&ghost).unwrap() == "{}\n", "emptied");
    ensure!(
        stderr.contains("ghost.json: 0 added, 1 removed"),
        "{stderr}"
    );
    Ok(())
}
