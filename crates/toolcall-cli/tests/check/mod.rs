//! `toolcall check` and `toolcall baseline` over the harness's fixture trees: the report, its exit
//! code, annotations, and accepting baseline changes one case at a time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{stderr, stdout, toolcall, well_formed};
use serde_json::{json, Value};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolcall-harness/tests/fixtures")
        .join(name)
}

/// `toolcall check --root ROOT ARGS…`, outside GitHub Actions: the exit code and stdout.
fn check_with(root: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("check")
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn check(root: &Path, github: bool) -> (Option<i32>, String) {
    let Output { status, stdout, .. } = check_output(root, github);
    (status.code(), String::from_utf8(stdout).unwrap())
}

fn check_output(root: &Path, github: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolcall"));
    command.arg("check").arg("--root").arg(root);
    command
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKSPACE");
    if github {
        command
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", root);
    }
    command.output().unwrap()
}

#[test]
fn a_green_tree_reports_counts_and_names_and_exits_zero() {
    let (code, out) = check(&fixture("green"), false);
    assert_eq!(code, Some(0), "{out}");
    // The whole report: counts per agent, the names, the verdict; no annotations, no colour.
    insta::assert_snapshot!(crate::support::normalised(&out));
    assert!(!out.contains('\u{1b}'), "no colour codes: {out}");
}

#[test]
fn a_red_tree_lists_every_unexpected_result_and_exits_one() {
    let (code, out) = check(&fixture("red"), false);
    assert_eq!(code, Some(1), "{out}");
    // Every unexpected result with its diff, the bad case, the coverage gap, the stale baseline
    // entries, and the verdict line naming both ways to accept.
    insta::assert_snapshot!(crate::support::normalised(&out));
    // In words for a repository without Cargo: `toolcall` commands and flags, never the harness's
    // environment variables or `cargo test` (they used to be all it offered).
    for cargo_only in ["cargo test", "ATP_", "Harness::"] {
        assert!(!out.contains(cargo_only), "`{cargo_only}` in:\n{out}");
    }
    let (_, empty) = check(&crate::support::scratch("check", "no-cases"), false);
    assert!(empty.contains("it is set by --cases or --root"), "{empty}");
}

/// A case with no recording is named with the file to record, and the verdict line does not
/// offer `--write-baselines`, which cannot accept it (it used to).
#[test]
fn a_missing_recording_says_which_file_to_record() {
    let root = crate::support::scratch("check", "missing-recording");
    copy_dir(&fixture("green"), &root);
    std::fs::remove_file(root.join("recorded/gpt/billing/clean.json")).unwrap();
    let (code, out) = check(&root, false);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("`gpt` has no recorded response for case `billing/clean`")
            && out.contains(&format!(
                "as {}",
                root.join("recorded/gpt/billing/clean.json").display()
            )),
        "{out}"
    );
    assert!(
        out.ends_with(
            "FAILED: unexpected results above (record each missing response where its \
             [coverage] entry says)\n"
        ),
        "{out}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A tree with no test target can accept its failures from the command line.
#[test]
fn write_baselines_accepts_the_current_failures() {
    let root = crate::support::scratch("check", "write-baselines");
    copy_dir(&fixture("green"), &root);
    let baseline = root.join("baselines/claude.json");
    std::fs::remove_file(&baseline).unwrap();
    let (code, out) = check(&root, false);
    assert_eq!(
        code,
        Some(1),
        "claude's failures are new without its baseline: {out}"
    );

    let output = toolcall(&[
        "check",
        "--write-baselines",
        "--root",
        root.to_str().unwrap(),
    ]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(out.ends_with("ok: every result is expected\n"), "{out}");
    let written = std::fs::read_to_string(&baseline).unwrap();
    assert!(written.contains("billing/invented"), "{written}");
}

/// A case whose tool schema does not compile fails its own test as a bad case, naming the
/// schema's place and the tool, and `--write-baselines` never accepts it as the model's known
/// failure.
#[test]
fn a_schema_that_does_not_compile_is_a_bad_case_not_a_known_failure() {
    let root = crate::support::scratch("check", "uncompilable-schema");
    copy_dir(&fixture("green"), &root);
    let clean = std::fs::read_to_string(root.join("cases/billing/clean.json")).unwrap();
    // The balance tool's schema, with a type JSON Schema does not have.
    let broken = clean.replacen("\"type\": \"object\"", "\"type\": \"notatype\"", 1);
    assert_ne!(broken, clean);
    std::fs::write(root.join("cases/billing/broken-schema.json"), broken).unwrap();
    for agent in ["claude", "gpt"] {
        let dir = root.join("recorded").join(agent).join("billing");
        std::fs::copy(dir.join("clean.json"), dir.join("broken-schema.json")).unwrap();
    }
    let (code, out) = check(&root, false);
    assert_eq!(code, Some(1), "{out}");
    let expected = "cases/billing/broken-schema.json:8:23: tool `get_balance`: its input schema \
                    does not compile: ";
    assert!(out.contains(expected), "{out}");
    assert!(!out.contains("schema_violation"), "{out}");

    let output = toolcall(&[
        "check",
        "--write-baselines",
        "--root",
        root.to_str().unwrap(),
    ]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    for agent in ["claude", "gpt"] {
        let written =
            std::fs::read_to_string(root.join(format!("baselines/{agent}.json"))).unwrap();
        assert!(!written.contains("broken-schema"), "{written}");
    }
}

/// On standard error, as every command prints them: `check` printed them on standard output,
/// while `score`, `lint` and `rate` used standard error. Each points where the fix is: a failing
/// call at its line in the recording (they all pointed at the case file, with no line), a drifted
/// prompt at its line in the case file, a case that now passes at its baseline entry.
#[test]
fn github_actions_gets_annotations_at_the_failing_line() {
    let output = check_output(&fixture("red"), true);
    assert_eq!(output.status.code(), Some(1));
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(!report.contains("::error"), "{report}");
    let out = String::from_utf8(output.stderr).unwrap();
    insta::assert_snapshot!(crate::support::normalised(&out));
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("::error")).collect();
    assert!(!errors.is_empty(), "{out}");
    let at_recordings = errors
        .iter()
        .filter(|l| l.starts_with("::error file=recorded/"))
        .count();
    assert!(at_recordings > 0, "no annotation at a recording:\n{out}");
    for line in errors
        .iter()
        .filter(|l| l.contains("::") && l.contains("file=recorded/"))
    {
        assert!(line.contains(",line="), "no line: {line}");
    }
}

#[test]
fn an_empty_root_is_a_failure() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check-empty");
    std::fs::create_dir_all(&dir).unwrap();
    let (code, out) = check(&dir, false);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("finding zero cases is a failure"), "{out}");
}

/// Links that fan out or loop, and a FIFO where a recording is expected: `check` used to run
/// past a minute growing to gigabytes on `a -> .` and `b -> .`, add phantom cases for a loop,
/// and block forever reading the FIFO. Now each is named and left out, and the real cases are
/// checked as before.
#[cfg(unix)]
#[test]
fn links_that_loop_and_a_fifo_are_named_not_followed_or_read() {
    use std::os::unix::fs::symlink;
    let root = crate::support::scratch("cli-check", "links-and-fifo");
    copy_dir(&fixture("green"), &root);
    let claude = root.join("recorded/claude");
    symlink(".", claude.join("a")).unwrap();
    symlink(".", claude.join("b")).unwrap();
    symlink("../billing", root.join("cases/billing/loop")).unwrap();
    let fifo = root.join("recorded/gpt/billing/stuck.json");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let output = crate::support::toolcall_within(
        &["check", "--root", &root.display().to_string()],
        std::time::Duration::from_secs(60),
    );
    let out = format!("{}{}", stdout(&output), crate::support::stderr(&output));
    assert_ne!(output.status.code(), Some(0), "{out}");
    assert!(out.contains("4 case(s) under"), "no phantom cases: {out}");
    assert!(out.contains("a link to a folder already walked"), "{out}");
    assert!(out.contains("not a regular file"), "{out}");
    assert!(!out.contains("loop/"), "{out}");
}

/// A chain of links round a loop (`Aa -> B`, `B -> Aa`) under the cases tree leads nowhere: it
/// may have been a folder of cases, so the report says it was skipped (a note, since it holds
/// nothing to run); it used to vanish without a word.
#[cfg(unix)]
#[test]
fn a_link_loop_is_said_to_be_skipped() {
    use std::os::unix::fs::symlink;
    let root = crate::support::scratch("check", "link-chain-loop");
    copy_dir(&fixture("green"), &root);
    symlink("B", root.join("cases/Aa")).unwrap();
    symlink("Aa", root.join("cases/B")).unwrap();
    let (code, out) = check(&root, false);
    assert_eq!(code, Some(0), "a note, not a failure: {out}");
    for link in ["cases/Aa", "cases/B"] {
        assert!(
            out.contains(&format!("{link}: a link that leads nowhere")),
            "{link}: {out}"
        );
    }
}

/// An agent directory that starts with `.` (what importing a model named `.x` used to make) is
/// hidden, so it never runs: the report says it was skipped instead of leaving it out silently.
#[test]
fn a_hidden_agent_directory_is_said_to_be_skipped() {
    let root = crate::support::scratch("check", "hidden-agent");
    copy_dir(&fixture("green"), &root);
    copy_dir(
        &root.join("recorded/claude"),
        &root.join("recorded/.claude-draft"),
    );
    let (code, out) = check(&root, false);
    assert_eq!(code, Some(0), "a note, not a failure: {out}");
    assert!(
        out.contains("note: skipped ")
            && out.contains("recorded/.claude-draft: its name starts with `.`"),
        "{out}"
    );
}

/// An agent directory whose name holds ESC and a newline (a model name an older import copied
/// into a path): the coverage message, the failure message and the table print it escaped.
#[test]
fn control_characters_in_an_agent_name_are_printed_escaped() {
    let root = crate::support::scratch("check", "control-agent");
    copy_dir(&fixture("green"), &root);
    let evil = root.join("recorded/evil\u{1b}[31m\nname/billing");
    std::fs::create_dir_all(&evil).unwrap();
    for case in ["clean", "invented"] {
        std::fs::copy(
            root.join(format!("recorded/claude/billing/{case}.json")),
            evil.join(format!("{case}.json")),
        )
        .unwrap();
    }
    let (code, out) = check(&root, false);
    assert_eq!(code, Some(1), "{out}");
    assert!(!out.contains('\u{1b}'), "printed raw: {out:?}");
    assert!(
        out.contains("`evil\\u{1b}[31m\\nname` has no recorded response for case"),
        "the coverage message: {out}"
    );
    assert!(
        out.contains("agent `evil\\u{1b}[31m\\nname` fails case `billing/invented`"),
        "the failure: {out}"
    );
}

fn baseline(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("baselines/claude.json")).unwrap())
        .unwrap()
}

fn toolcall_in(root: &Path, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `toolcall baseline accept` takes the named results into the baseline and leaves every other
/// pending change as it was; a name that matches nothing is refused and nothing is written.
#[test]
fn baseline_accept_takes_the_named_cases_only() {
    let root = crate::support::scratch("check", "baseline-accept");
    copy_dir(&fixture("red"), &root);
    let before = baseline(&root);
    for (name, why) in [
        ("claude::billing/nope", "no such case result"),
        (
            "claude::billing/expected",
            "nothing to accept (expected failure",
        ),
        ("claude::broken/bad-syntax", "cannot be read"),
    ] {
        let (code, _, err) = toolcall_in(
            &root,
            &["baseline", "accept", "claude::billing/new-failure", name],
            "",
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(why), "{name}: {err}");
        assert_eq!(baseline(&root), before, "nothing is written");
    }
    let (code, out, err) = toolcall_in(
        &root,
        &[
            "baseline",
            "accept",
            "claude::billing/new-failure",
            "billing/now-passes",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("1 added, 1 removed, 0 changed"), "{out}");
    let after = baseline(&root);
    assert_eq!(
        after["billing/new-failure"]["fingerprint"],
        json!(["get_invoices (invented)"])
    );
    assert!(after.get("billing/now-passes").is_none());
    assert_eq!(
        after["billing/changed"], before["billing/changed"],
        "not named: untouched"
    );
    let (_, report) = check(&root, false);
    assert!(
        !report.contains("billing/new-failure (failure)")
            && report.contains("billing/changed (changed)"),
        "{report}"
    );
}

/// `toolcall baseline review` asks about each pending change in turn: accept writes it, reject
/// and skip leave it, and the end of input stops the review, keeping what was accepted.
#[test]
fn baseline_review_asks_about_each_change() {
    let root = crate::support::scratch("check", "baseline-review");
    copy_dir(&fixture("red"), &root);
    let before = baseline(&root);
    let (code, out, err) = toolcall_in(&root, &["baseline", "review"], "r\nhuh\na\n");
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "3 change(s) to review",
        "[1/3] claude::billing/changed (changed)",
        "-get_invoice_list (invented)\n  +get_invoices (invented)",
        "[2/3] claude::billing/new-failure (new failure)",
        "`huh`: answer a, r, s or q",
        "baseline entry: (none) -> get_invoices (invented)",
        "[3/3] claude::billing/now-passes (now passes)",
        "(end of input)",
        "accepted 1, rejected 1, skipped 1",
        "rejected (the baseline is unchanged; fix the cause, and these tests pass): claude::billing/changed",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    let after = baseline(&root);
    assert_eq!(
        after["billing/changed"], before["billing/changed"],
        "rejected"
    );
    assert!(after.get("billing/new-failure").is_some(), "accepted");
    assert_eq!(
        after["billing/now-passes"], before["billing/now-passes"],
        "unanswered"
    );
}

/// `toolcall init` in an empty folder makes a tree `toolcall check` passes, in every format;
/// run again it keeps everything; a file already there (a link included) is never overwritten.
#[test]
fn init_scaffolds_a_green_gate_and_never_overwrites() {
    for format in toolcall_score::Format::ALL {
        let root = crate::support::scratch("check", &format!("init-{format}"));
        let out = toolcall(&["init", root.to_str().unwrap(), "--format", format.as_str()]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stdout(&out));
        assert!(
            stdout(&out).contains("created cases/example/get-invoice.json")
                && stdout(&out).contains(".github/workflows/toolcall.yml")
                && stdout(&out).contains("next: cd "),
            "{}",
            stdout(&out)
        );
        assert!(
            !root.join("tests/toolcall.rs").exists(),
            "not a Cargo package"
        );
        let (code, report) = check(&root, false);
        assert_eq!(code, Some(0), "{format}: {report}");
        assert!(report.contains("my-agent  example       1"), "{report}");
    }
    // The openai-chat tree made above, again.
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check/init-openai-chat");
    let case = root.join("cases/example/get-invoice.json");
    std::fs::write(&case, "{\"tools\": [], \"mine\": true}").unwrap();
    #[cfg(unix)]
    {
        let readme = root.join("baselines/README.md");
        std::fs::remove_file(&readme).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere.md"), &readme).unwrap();
    }
    let out = toolcall(&["init", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("kept    cases/example/get-invoice.json"),
        "{text}"
    );
    assert!(text.contains("nothing to do"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&case).unwrap(),
        "{\"tools\": [], \"mine\": true}"
    );
    assert!(
        !root.join("elsewhere.md").exists(),
        "not written through a link"
    );

    let out = toolcall(&["init", root.to_str().unwrap(), "--agent", "team/agent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds a path separator"),
        "{}",
        stderr(&out)
    );
}

/// In a Cargo package, `init` adds the test target and the dev-dependency to Cargo.toml,
/// keeping its comments, writes the five-line tests/toolcall.rs, and adds nothing twice.
#[test]
fn init_in_a_cargo_package_adds_the_test_target_once() {
    let root = crate::support::scratch("check", "init-cargo");
    let manifest = root.join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[package]\nname = \"agent\" # our agent\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dev-dependencies]\nserde_json = \"1\"\n",
    )
    .unwrap();
    let out = toolcall(&["init", root.to_str().unwrap(), "--format", "anthropic"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("updated Cargo.toml")
            && stdout(&out).contains("next: cd ")
            && stdout(&out).contains("cargo test --test toolcall"),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("name = \"agent\" # our agent"), "{text}");
    assert!(
        text.contains("[[test]]\nname = \"toolcall\"\nharness = false"),
        "{text}"
    );
    assert!(
        text.contains("serde_json = \"1\"\ntoolcall-harness = { git = \"https://github.com/toolcall-score/toolcall-score\" }"),
        "{text}"
    );
    assert!(std::fs::read_to_string(root.join("tests/toolcall.rs"))
        .unwrap()
        .contains("toolcall_harness::Harness::new()"));
    // The same override as this repository's own nextest config, whose effect the harness's
    // nextest tier checks.
    let nextest = std::fs::read_to_string(root.join(".config/nextest.toml")).unwrap();
    let ours = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.config/nextest.toml"),
    )
    .unwrap();
    let block = "[[profile.default.overrides]]\nfilter = \"binary(toolcall)\"\n\
                 success-output = \"immediate\"\njunit.store-success-output = true\n";
    assert!(nextest.contains(block) && ours.contains(block), "{nextest}");
    assert!(
        std::fs::read_to_string(root.join(".github/workflows/toolcall.yml"))
            .unwrap()
            .contains("cargo test --test toolcall")
    );
    let out = toolcall(&["init", root.to_str().unwrap()]);
    assert!(
        stdout(&out).contains("kept    Cargo.toml"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        text,
        "added once"
    );
}

/// `init --path CHECKOUT` on a package it already set up switches the dependency to the checkout
/// (it kept the git one and said "kept Cargo.toml"), keeping the dependency's other keys; and it
/// no longer tells the user to add nextest settings its first run wrote.
#[test]
fn init_path_on_a_package_it_set_up_switches_the_dependency() {
    let root = crate::support::scratch("check", "init-path");
    let manifest = root.join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[package]\nname = \"agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let out = toolcall(&["init", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "toolcall-harness = { git = \"https://github.com/toolcall-score/toolcall-score\" }",
            "toolcall-harness = { git = \"https://github.com/toolcall-score/toolcall-score\", features = [\"mcp\"] }",
        ),
    )
    .unwrap();
    let checkout = root.join("checkout");
    let out = toolcall(&[
        "init",
        root.to_str().unwrap(),
        "--path",
        checkout.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("updated Cargo.toml  (dev-dependency toolcall-harness now from "),
        "{said}"
    );
    assert!(
        !said.contains("add to it"),
        "it wrote those settings itself:\n{said}"
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    let expected = format!(
        "toolcall-harness = {{ path = {:?}, features = [\"mcp\"] }}",
        checkout.join("crates/toolcall-harness").to_str().unwrap()
    );
    assert!(text.contains(&expected), "{text}");
    assert!(!text.contains("git ="), "{text}");
    let again = toolcall(&[
        "init",
        root.to_str().unwrap(),
        "--path",
        checkout.to_str().unwrap(),
    ]);
    assert!(
        stdout(&again).contains("kept    Cargo.toml"),
        "{}",
        stdout(&again)
    );
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        text,
        "switched once"
    );
}

/// A package whose tests/toolcall.rs is the user's own `#[test]` file: `init` keeps the file and
/// leaves Cargo.toml alone, saying why and how to add the gate; it used to add `[[test]]
/// toolcall, harness = false`, after which the user's tests no longer built (`main function not
/// found`).
#[test]
fn init_leaves_cargo_toml_alone_when_tests_toolcall_rs_is_the_users() {
    let root = crate::support::scratch("check", "init-cargo-own-test");
    let manifest = root.join("Cargo.toml");
    let text = "[package]\nname = \"agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    std::fs::write(&manifest, text).unwrap();
    let own = "#[test]\nfn calls_the_tool() {\n    assert_eq!(1 + 1, 2);\n}\n";
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/toolcall.rs"), own).unwrap();
    let out = toolcall(&["init", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        text,
        "left alone"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("tests/toolcall.rs")).unwrap(),
        own
    );
    assert!(
        stdout(&out).contains(
            "kept    Cargo.toml  (left alone: tests/toolcall.rs is a test file of your own"
        ),
        "{}",
        stdout(&out)
    );
}

/// A run with more passing cases than a page draws: the HTML page draws the first
/// `PASSES_DRAWN` (1,000) of them and says how many it left out; it used to draw every case
/// (100,000 made a 105 MB page no browser opens).
#[test]
fn the_html_page_of_a_huge_run_says_what_it_folded() {
    let root = crate::support::scratch("check", "html-folded");
    let case = serde_json::json!({
        "tools": [{"name": "get_invoice", "description": "One invoice.",
                   "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Show invoice 1"}]
    });
    let response = serde_json::json!({"type": "message", "role": "assistant",
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {}}]});
    for i in 0..1003 {
        for (path, value) in [
            (root.join(format!("cases/many/c{i:04}.json")), &case),
            (
                root.join(format!("recorded/claude/many/c{i:04}.json")),
                &response,
            ),
        ] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, value.to_string()).unwrap();
        }
    }
    let page = root.join("report.html");
    let out = toolcall(&[
        "check",
        "--root",
        root.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<details class=\"result pass\"").count(), 1000);
    assert!(
        html.contains("3 of 1003 passing case(s) are not drawn"),
        "the page says what it folded"
    );
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
}

/// Every file under `dir` (recursively), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Case and baseline files may name their JSON Schema with `"$schema"`: a tree whose every case
/// and baseline names one reports exactly as without, and a baseline rewrite keeps the key
/// (first, in the rewritten file's stable form) and every entry.
#[test]
fn schema_keys_change_no_result_and_survive_a_baseline_rewrite() {
    let root = crate::support::scratch("check", "schema-keys");
    copy_dir(&fixture("green"), &root);
    let (code, plain) = check(&root, false);
    assert_eq!(code, Some(0), "{plain}");
    // Inserted on the first line, so every line and column below it stays where it was.
    let name = |path: &Path, schema: &str| {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("{\n  \""), "{}", path.display());
        let named = text.replacen('{', &format!("{{\"$schema\": \"{schema}\", "), 1);
        std::fs::write(path, named).unwrap();
        text
    };
    for case in files_under(&root.join("cases")) {
        name(&case, "../../schemas/case.schema.json");
    }
    let baselines = files_under(&root.join("baselines"));
    assert_eq!(baselines.len(), 2);
    let originals: Vec<String> = baselines
        .iter()
        .map(|b| name(b, "../schemas/baseline.schema.json"))
        .collect();
    let (code, named) = check(&root, false);
    assert_eq!((code, named.as_str()), (Some(0), plain.as_str()));

    let output = toolcall(&[
        "check",
        "--write-baselines",
        "--root",
        root.to_str().unwrap(),
    ]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    for (path, original) in baselines.iter().zip(&originals) {
        let expected = original.replacen(
            "{\n",
            "{\n  \"$schema\": \"../schemas/baseline.schema.json\",\n",
            1,
        );
        assert_eq!(std::fs::read_to_string(path).unwrap(), expected);
    }
    assert_eq!(check(&root, false), (Some(0), plain));
}

/// A tree whose model wrote everything a page must not run or be restyled by: a tool name that
/// closes the script, an agent folder that is an image with an onerror, a bidi override.
fn hostile_tree(test: &str) -> PathBuf {
    let root = crate::support::scratch("check", test);
    copy_dir(&fixture("green"), &root);
    let evil =
        "</script><img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">";
    let agent = root.join("recorded/<img src=x onerror=alert(1)>\u{202e}");
    std::fs::rename(root.join("recorded/claude"), &agent).unwrap();
    std::fs::rename(
        root.join("baselines/claude.json"),
        root.join("baselines/gone.json"),
    )
    .unwrap();
    let recording = agent.join("billing/invented.json");
    let text = std::fs::read_to_string(&recording)
        .unwrap()
        .replace("get_invoices", evil.replace('"', "\\\"").as_str());
    std::fs::write(&recording, text).unwrap();
    root
}

/// `--html` writes one self-contained page drawn from what `--json` prints: well-formed, no
/// URL of any kind, a Content-Security-Policy that forbids every fetch, one section per result
/// with its outcome, and model text escaped so it can neither run nor restyle anything.
#[test]
fn the_html_report_is_self_contained_escaped_and_says_what_json_says() {
    let root = hostile_tree("html-hostile");
    let page = root.join("out/report.html");
    let json = root.join("out/report.json");
    let (code, _) = check_with(
        &root,
        &[
            "--html",
            page.to_str().unwrap(),
            "--json-out",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(1));
    let html = std::fs::read_to_string(&page).unwrap();
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
    for forbidden in ["http://", "https://", "@import", "url("] {
        assert!(!html.contains(forbidden), "the page holds {forbidden:?}");
    }
    // Model text is escaped, so every `<` starts one of the page's own tags: none loads
    // anything, and every link stays on the page.
    for tag in html
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or_default())
    {
        let name = tag.split_whitespace().next().unwrap_or_default();
        assert!(
            !["img", "link", "iframe", "object", "embed", "audio", "video", "base"].contains(&name),
            "<{tag}>"
        );
        // Attribute names only: a quoted value is inert text (its `<` and `"` are escaped).
        let names: String = tag.split('"').step_by(2).collect();
        assert!(
            !names.contains(" src=") && !names.contains(" on"),
            "<{tag}>"
        );
        if let Some((_, href)) = tag.split_once(" href=\"") {
            assert!(href.starts_with('#'), "<{tag}>");
        }
    }
    assert!(
        html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
    );
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(
        !html.contains('\u{202e}'),
        "a bidi override is shown, not obeyed"
    );
    assert!(html.contains("\\u{202e}"));
    assert!(
        html.contains("&lt;/script&gt;&lt;img src=x onerror="),
        "the name shows as text"
    );
    // One section per result, each with the outcome the JSON gives it.
    let results: Vec<&Value> = run["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["results"].as_array().unwrap())
        .collect();
    assert_eq!(
        html.matches("<details class=\"result ").count(),
        results.len()
    );
    for outcome in [
        "pass",
        "expected_failure",
        "failure",
        "changed",
        "now_passes",
        "error",
    ] {
        let want = results.iter().filter(|r| r["outcome"] == outcome).count();
        assert_eq!(
            html.matches(&format!("data-outcome=\"{outcome}\"")).count(),
            want,
            "{outcome}"
        );
    }
    // The offending call is marked in its case's timeline.
    assert!(html.contains("<div class=\"call offending\""));
}

/// `--junit` writes JUnit XML whose counts are the JSON's: a known failure is skipped (type
/// xfail), a new failure a failure, a pass a bare testcase.
#[test]
fn the_junit_report_counts_as_the_json_does() {
    let root = crate::support::scratch("check", "junit");
    copy_dir(&fixture("red"), &root);
    let junit = root.join("junit.xml");
    let (code, _) = check_with(&root, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    well_formed(&xml).unwrap_or_else(|e| panic!("{e}"));
    let (_, json) = check_with(&root, &["--json"]);
    let run: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(run["toolcall"], 1);
    assert_eq!(run["command"], "check");
    assert_eq!(run["ok"], false);
    let results: Vec<&Value> = run["agents"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let xfail = results
        .iter()
        .filter(|r| r["outcome"] == "expected_failure")
        .count();
    assert_eq!(xml.matches("<skipped type=\"xfail\"").count(), xfail);
    // suite + [baseline] + [coverage] + one per result.
    assert_eq!(xml.matches("<testcase ").count(), 3 + results.len());
    insta::assert_snapshot!(crate::support::normalised(&xml));
}

/// A tree of `n` passing cases (one agent, one tool call each).
fn passing_tree(test: &str, n: usize) -> PathBuf {
    let root = crate::support::scratch("check", test);
    let case = json!({
        "tools": [{"name": "get_invoice", "description": "One invoice.",
                   "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Show invoice 1"}]
    })
    .to_string();
    let response = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {}}]})
    .to_string();
    for dir in ["cases/many", "recorded/claude/many"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    for i in 0..n {
        std::fs::write(root.join(format!("cases/many/c{i:05}.json")), &case).unwrap();
        std::fs::write(
            root.join(format!("recorded/claude/many/c{i:05}.json")),
            &response,
        )
        .unwrap();
    }
    root
}

/// Whether `toolcall check ARGS…` over `root` succeeds with its address space limited to
/// `kib` KiB (`ulimit -v`).
#[cfg(target_os = "linux")]
fn check_fits(root: &Path, args: &[&str], kib: u64) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_toolcall"))
        .arg("check")
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// `check --json-out`, `--junit` and `--html` write their reports as they are drawn: they need
/// little more memory than `check` alone. All three used to draw from the whole run held as one
/// JSON value, twice what `check` needs at 5,000 cases (136 MB of address space against 68 MB;
/// at 100,000 cases, 1.7 GB). The limit is found for `check` alone, so the bound is a ratio, not
/// a machine's figure.
#[cfg(target_os = "linux")]
#[test]
fn json_out_junit_and_html_need_little_more_memory_than_check_alone() {
    let root = passing_tree("json-out-memory", 5000);
    let report = root.join("report.json");
    let mut kib = 16 * 1024;
    while !check_fits(&root, &[], kib) {
        kib += 4 * 1024;
        assert!(
            kib < 4 * 1024 * 1024,
            "check alone does not run under 4 GiB"
        );
    }
    let bound = kib * 5 / 4;
    let junit = root.join("report.xml");
    assert!(
        check_fits(&root, &["--junit", junit.to_str().unwrap()], bound),
        "check runs in {kib} KiB, check --junit not in {bound} KiB"
    );
    assert!(
        check_fits(&root, &["--json-out", report.to_str().unwrap()], bound),
        "check runs in {kib} KiB, check --json-out not in {bound} KiB"
    );
    let page = root.join("report.html");
    assert!(
        check_fits(&root, &["--html", page.to_str().unwrap()], bound),
        "check runs in {kib} KiB, check --html not in {bound} KiB"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 5000 + 3);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<details class=\"result pass\"").count(), 1000);
    assert!(html.contains("4000 of 5000 passing case(s) are not drawn"));
    let run: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(run["agents"][0]["counts"]["pass"], 5000);
    assert_eq!(run["cases"].as_object().map(|c| c.len()), Some(5000));
}

/// The streamed JSON is what the whole value pretty-printed was: keys sorted at every depth,
/// two-space indentation, empty collections as `[]` / `{}`, a final newline; and `--json`
/// prints the same bytes `--json-out` writes.
#[test]
fn the_streamed_json_is_the_whole_value_pretty_printed() {
    let empty = crate::support::scratch("check", "json-streamed-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let trees = [
        fixture("green"),
        fixture("red"),
        hostile_tree("json-streamed-hostile"),
        passing_tree("json-streamed-many", 300),
        empty,
    ];
    let out = crate::support::scratch("check", "json-streamed-out");
    for (i, root) in trees.iter().enumerate() {
        let file = out.join(format!("{i}.json"));
        let (code, printed) = check_with(root, &["--json", "--json-out", file.to_str().unwrap()]);
        assert!(matches!(code, Some(0 | 1)), "{}: {code:?}", root.display());
        let written = std::fs::read_to_string(&file).unwrap();
        assert_eq!(printed, written, "{}", root.display());
        let whole: Value = serde_json::from_str(&written).unwrap();
        let expected = format!("{}\n", toolcall_score::to_json_pretty(&whole).unwrap());
        assert!(
            written == expected,
            "{}: the streamed JSON differs",
            root.display()
        );
    }
}
