//! `toolcall rate` and `toolcall import` as users run them: the gate's exit codes with the names
//! printed either way, the JSON report, JSONL input, and import's refusal to overwrite.

use std::path::{Path, PathBuf};

use crate::support::{stderr, stdout, toolcall, toolcall_json, well_formed};

use serde_json::{json, Value};

fn scratch(test: &str) -> PathBuf {
    crate::support::scratch("cli-rate", test)
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn case() -> Value {
    json!({
        "tools": [{"name": "get_invoice", "description": "One invoice by id.",
                   "input_schema": {"type": "object", "properties": {"invoice_id": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "Show my invoices"}]
    })
}

fn response(name: &str) -> Value {
    json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
           "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}]})
}

/// A generated tree: 20 cases, 2 responses call `get_invoices` (not defined), 1 calls
/// `search_invoices`, the rest call `get_invoice`.
fn tree(dir: &Path) -> (String, String) {
    for i in 0..20 {
        write(&dir.join(format!("cases/billing/c{i:02}.json")), &case());
        let name = match i {
            3 | 11 => "get_invoices",
            7 => "search_invoices",
            _ => "get_invoice",
        };
        write(
            &dir.join(format!("recorded/claude/billing/c{i:02}.json")),
            &response(name),
        );
    }
    (
        dir.join("cases").display().to_string(),
        dir.join("recorded/claude").display().to_string(),
    )
}

#[test]
fn over_the_threshold_exits_1_and_prints_the_names() {
    let dir = scratch("over");
    let (cases, recorded) = tree(&dir);
    let output = toolcall(&[
        "rate",
        "--cases",
        &cases,
        "--recorded",
        &recorded,
        "--max-unknown",
        "2",
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // The counts, the unknown names sorted by count (the repeated one first), the gate's line.
    insta::assert_snapshot!(crate::support::normalised(&text));

    let output = toolcall(&[
        "rate",
        "--cases",
        &cases,
        "--recorded",
        &recorded,
        "--max-rate",
        "0.1",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).contains("rate 0.1500 > --max-rate 0.1"));
}

#[test]
fn under_the_threshold_exits_0_and_prints_the_names_too() {
    let dir = scratch("under");
    let (cases, recorded) = tree(&dir);
    let output = toolcall(&[
        "rate",
        "--cases",
        &cases,
        "--recorded",
        &recorded,
        "--max-unknown",
        "3",
        "--max-rate",
        "0.2",
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    insta::assert_snapshot!(crate::support::normalised(&text));
}

#[test]
fn json_output_is_the_documented_shape() {
    let dir = scratch("json");
    let (cases, recorded) = tree(&dir);
    let saved = dir.join("report.json");
    let value = toolcall_json(
        &[
            "rate",
            "--cases",
            &cases,
            "--recorded",
            &recorded,
            "--max-unknown",
            "0",
            "--json",
            "--json-out",
            &saved.display().to_string(),
        ],
        1,
    );
    assert_eq!(
        value,
        serde_json::from_slice::<Value>(&std::fs::read(&saved).unwrap()).unwrap()
    );
    assert_eq!(
        (
            value["responses"].as_u64(),
            value["calls"].as_u64(),
            value["unknown"].as_u64()
        ),
        (Some(20), Some(20), Some(3))
    );
    assert!((value["rate"].as_f64().unwrap() - 0.15).abs() < 1e-12);
    assert_eq!(
        value["distinct"][0],
        json!({"name": "get_invoices", "count": 2, "cause": "invented",
        "causes": {"invented": 2}, "suggestions": ["get_invoice"],
        "first_seen": format!("{recorded}/billing/c03.json"),
        "first_file": format!("{recorded}/billing/c03.json"), "first_line": null})
    );
    assert_eq!(value["gate"]["passed"], false);
    assert_eq!(value["bad_lines"], 0);
}

#[test]
fn jsonl_logs_with_a_bad_line_are_scored_and_the_line_named() {
    let dir = scratch("jsonl");
    let log = dir.join("traffic.jsonl");
    let line = |name: &str| json!({"request": case(), "response": response(name)}).to_string();
    std::fs::write(
        &log,
        format!(
            "{}\n{}\nnot json\n{}\n",
            line("get_invoice"),
            line("x_tool"),
            line("get_invoice")
        ),
    )
    .unwrap();
    let shown = log.display().to_string();
    let output = toolcall(&["rate", &shown]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "no gate set: {text}");
    assert!(text.contains("scored 3 response(s), 3 call(s)"), "{text}");
    assert!(text.contains("x_tool"), "{text}");
    assert!(
        text.contains(&format!("{shown}:3: not a log line")),
        "{text}"
    );
    let output = toolcall(&["rate", &shown, "--strict"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains(&format!("{shown}:3")));
}

/// A log longer than the input limit whose first line is torn (cut by rotation or `tail -c`) is
/// still a log: its lines are scored and the torn one named. (It cannot be one JSON document:
/// a document is read whole, within the limit.)
#[test]
fn a_long_log_with_a_torn_first_line_is_still_a_log() {
    let dir = scratch("torn-log");
    let log = dir.join("traffic.jsonl");
    let line = json!({"request": case(), "response": response("get_invoice")}).to_string();
    let mut text = format!("{}\n", &line[line.len() / 2..]);
    for _ in 0..100 {
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(&log, &text).unwrap();
    assert!(text.len() > 8_000);
    let shown = log.display().to_string();
    let output = toolcall(&["rate", "--max-input-bytes", "4KB", &shown]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(out.contains("scored 100 response(s)"), "{out}");
    assert!(out.contains(&format!("{shown}:1: not a log line")), "{out}");
}

/// A log line over the input limit is named and skipped, never held whole; the lines after it
/// keep their numbers. The limit comes from `--max-input-bytes` or `ATP_MAX_INPUT_BYTES`.
#[test]
fn a_log_line_over_the_input_limit_is_named_and_skipped() {
    let dir = scratch("line-limit");
    let log = dir.join("traffic.jsonl");
    let line = |name: &str| json!({"request": case(), "response": response(name)}).to_string();
    let padded = json!({"request": case(), "response": response("get_invoice"),
                        "note": "x".repeat(300_000)})
    .to_string();
    std::fs::write(
        &log,
        format!(
            "{}
{padded}
{}
",
            line("get_invoice"),
            line("x_tool")
        ),
    )
    .unwrap();
    let shown = log.display().to_string();
    for (flag, env) in [(Some("200KiB"), None), (None, Some("204800"))] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_toolcall"));
        command
            .env_remove("ATP_MAX_INPUT_BYTES")
            .arg("rate")
            .arg(&shown);
        if let Some(flag) = flag {
            command.args(["--max-input-bytes", flag]);
        }
        if let Some(env) = env {
            command.env("ATP_MAX_INPUT_BYTES", env);
        }
        let output = command.output().unwrap();
        let text = stdout(&output);
        assert!(text.contains("scored 2 response(s), 2 call(s)"), "{text}");
        assert!(
            text.contains(&format!("{shown}:2: 293."))
                && text.contains("KiB is over the input limit of 200 KiB"),
            "{text}"
        );
        assert!(
            text.contains("--max-input-bytes or ATP_MAX_INPUT_BYTES"),
            "{text}"
        );
        assert!(text.contains("x_tool"), "line 3 is still read: {text}");
    }
    // The default limit (64 MiB) takes the line.
    let output = toolcall(&["rate", &shown]);
    assert!(
        stdout(&output).contains("scored 3 response(s)"),
        "{}",
        stdout(&output)
    );
}

/// Nothing readable at all is bad input (exit 2), not a pass with no gate set.
#[test]
fn nothing_readable_exits_2() {
    let dir = scratch("nothing-readable");
    let log = dir.join("traffic.jsonl");
    std::fs::write(&log, "not json\n{\"request\": 1}\n").unwrap();
    let output = toolcall(&["rate", &log.display().to_string()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no response could be read (2 unreadable input(s)"),
        "{stderr}"
    );
}

/// Conversations without a single tool call are not a silent "0 cases".
#[test]
fn import_of_conversations_without_tool_calls_is_bad_input() {
    let dir = scratch("import-no-calls");
    let input = dir.join("log.json");
    let conversation = json!({"tools": case()["tools"], "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]});
    write(&input, &conversation);
    let out = dir.join("out");
    let output = toolcall(&[
        "import",
        &input.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("read 1 conversation(s), but no assistant turn in them calls a tool"),
        "{stderr}"
    );
}

/// A folder of conversations is read one level deep through the walker: a FIFO named `*.json`
/// (which would block forever) or a link out of the folder is refused, named, and nothing is
/// written; a link inside the folder and a subfolder are fine.
#[cfg(unix)]
#[test]
fn import_of_a_folder_reads_regular_files_inside_it_only() {
    let dir = scratch("import-folder");
    let input = dir.join("logs");
    let conversation = json!({"tools": case()["tools"], "messages": [
        {"role": "user", "content": "invoice inv_1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {"invoice_id": "inv_1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "{}"}]}
    ]});
    write(&input.join("one.json"), &conversation);
    write(&dir.join("outside.json"), &conversation);
    let run = |out: &str| {
        toolcall(&[
            "import",
            &input.display().to_string(),
            "--out",
            &dir.join(out).display().to_string(),
        ])
    };
    std::os::unix::fs::symlink(dir.join("outside.json"), input.join("two.json")).unwrap();
    let output = run("out-link");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("two.json") && stderr.contains("a link out of the tree"),
        "{stderr}"
    );
    assert!(!dir.join("out-link").exists(), "nothing is written");

    std::fs::remove_file(input.join("two.json")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(input.join("pipe.json"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let output = run("out-fifo");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("pipe.json") && stderr.contains("not a regular file"),
        "{stderr}"
    );

    std::fs::remove_file(input.join("pipe.json")).unwrap();
    std::os::unix::fs::symlink(input.join("one.json"), input.join("again.json")).unwrap();
    write(&input.join("nested/deeper.json"), &json!({"not": "read"}));
    let output = run("out-ok");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout(&output).contains("2 case(s)"), "{}", stdout(&output));
}

#[test]
fn import_refuses_to_overwrite_without_force() {
    let dir = scratch("import");
    let log = dir.join("run.json");
    write(
        &log,
        &json!({"tools": case()["tools"], "messages": [
            {"role": "user", "content": "invoice inv_1"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {"invoice_id": "inv_1"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "{}"}]}
        ]}),
    );
    let out = dir.join("out").display().to_string();
    let args = [
        "import",
        &log.display().to_string(),
        "--out",
        &out,
        "--agent",
        "claude",
    ];
    let first = toolcall(&args);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        stdout(&first).contains("1 case(s) with 1 tool call(s)"),
        "{}",
        stdout(&first)
    );
    let again = toolcall(&args);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let mut forced = args.to_vec();
    forced.push("--force");
    assert_eq!(toolcall(&forced).status.code(), Some(0));
    let rate = toolcall(&[
        "rate",
        "--cases",
        &format!("{out}/cases"),
        "--recorded",
        &format!("{out}/recorded/claude"),
        "--max-unknown",
        "0",
    ]);
    assert_eq!(rate.status.code(), Some(0), "{}", stdout(&rate));
}

/// `--json-out` pointed at the input log is refused before anything is read or written (it
/// used to overwrite the log with the report); one in a folder that does not exist yet is
/// written there, and the text report is printed as well.
#[test]
fn json_out_never_overwrites_the_log_and_makes_its_folder() {
    let dir = scratch("json-out");
    let log = dir.join("traffic.jsonl");
    let line = json!({"request": case(), "response": response("get_invoice")});
    std::fs::write(&log, format!("{line}\n")).unwrap();
    let before = std::fs::read(&log).unwrap();
    let output = toolcall(&[
        "rate",
        &log.display().to_string(),
        "--json-out",
        &log.display().to_string(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("would be overwritten"), "{stderr}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");

    let saved = dir.join("reports/nightly/rate.json");
    let output = toolcall(&[
        "rate",
        &log.display().to_string(),
        "--json-out",
        &saved.display().to_string(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("scored 1 response(s)"),
        "{}",
        stdout(&output)
    );
    let value: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(value["calls"].as_u64(), Some(1));
}

/// Links that fan out under an agent's folder (`a -> .`, `b -> .`) made `rate` hang; a FIFO
/// named as a recording blocked it. Now it stops at once, naming what it will not walk.
#[cfg(unix)]
#[test]
fn a_tree_with_looping_links_or_a_fifo_is_named_not_walked() {
    use std::os::unix::fs::symlink;
    let dir = scratch("links");
    let (cases, recorded) = tree(&dir);
    let agent = std::path::Path::new(&recorded);
    symlink(".", agent.join("a")).unwrap();
    symlink(".", agent.join("b")).unwrap();
    let args = ["rate", "--cases", &cases, "--recorded", &recorded];
    let output = crate::support::toolcall_within(&args, std::time::Duration::from_secs(60));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = crate::support::stderr(&output);
    assert!(
        stderr.contains("a link to a folder already walked"),
        "{stderr}"
    );

    std::fs::remove_file(agent.join("a")).unwrap();
    std::fs::remove_file(agent.join("b")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(agent.join("billing/stuck.json"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let output = crate::support::toolcall_within(&args, std::time::Duration::from_secs(60));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        crate::support::stderr(&output).contains("not a regular file"),
        "{output:?}"
    );
}

/// A model named `..` would put the recordings beside `recorded/`: the import refuses it with
/// exit 2, naming the conversation and the value, and writes nothing.
#[test]
fn import_of_a_model_named_dotdot_exits_2_naming_it() {
    let dir = scratch("import-dotdot");
    let log = dir.join("run.json");
    write(
        &log,
        &json!({"model": "..", "tools": case()["tools"], "messages": [
            {"role": "user", "content": "invoice inv_1"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {"invoice_id": "inv_1"}}]}
        ]}),
    );
    let out = dir.join("out");
    let output = toolcall(&[
        "import",
        &log.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "run.json: conversation 0: its model (as an agent directory; pass --agent NAME) `..`"
        ),
        "{stderr}"
    );
    assert!(
        !out.exists() && !dir.join("run").exists(),
        "nothing written"
    );
}

/// The same for `rate --json` (and `--json-out`): the distinct name is escaped, not raw.
#[test]
fn rate_json_escapes_bidi_overrides() {
    let dir = scratch("json-bidi");
    let name = "x\u{202e}fdp.exe";
    write(&dir.join("cases/c.json"), &case());
    write(&dir.join("recorded/a/c.json"), &response(name));
    let json_out = dir.join("report.json");
    let output = toolcall(&[
        "rate",
        "--cases",
        &dir.join("cases").display().to_string(),
        "--recorded",
        &dir.join("recorded/a").display().to_string(),
        "--json",
        "--json-out",
        &json_out.display().to_string(),
    ]);
    let text = stdout(&output);
    for json in [text.clone(), std::fs::read_to_string(&json_out).unwrap()] {
        assert!(!json.contains('\u{202e}'), "raw: {json:?}");
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["distinct"][0]["name"], name);
    }
}

/// `import`'s summary prints the output path through the escaping rule: a directory name
/// holding ESC and a newline is not sent to the terminal raw.
#[test]
fn import_summary_escapes_what_it_prints() {
    let dir = scratch("import-escaped-summary");
    let log = dir.join("run.json");
    write(
        &log,
        &json!({"tools": case()["tools"], "messages": [
            {"role": "user", "content": "invoice inv_1"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_invoice", "input": {"invoice_id": "inv_1"}}]}
        ]}),
    );
    let out = dir.join("out\u{1b}[2J\nx");
    let output = toolcall(&[
        "import",
        &log.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--agent",
        "claude",
    ]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(!text.contains('\u{1b}'), "raw: {text:?}");
    assert!(text.contains("out\\u{1b}[2J\\nx/recorded/claude"), "{text}");
}

/// Under GitHub Actions a failed gate annotates each distinct name where it was first seen.
/// The line used to be folded into the file name (`file=two.jsonl%3A1`, which GitHub cannot
/// place) and a log line's `id`, ESC included, went into `file=` raw. Now `file=` is the path,
/// `line=` the line, and the id and name are in the message, escaped.
#[test]
fn rate_annotations_carry_file_and_line_apart_and_nothing_raw() {
    let dir = scratch("annotations");
    let log = dir.join("two.jsonl");
    let line = |name: &str, id: &str| {
        json!({"request": case(), "response": response(name), "id": id}).to_string()
    };
    std::fs::write(
        &log,
        format!(
            "{}\n{}\n",
            line("get_invoice", "ok"),
            line("x\u{1b}[31m_tool", "req\u{1b}]0;pwned\u{7},9")
        ),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .current_dir(&dir)
        .args(["rate", "two.jsonl", "--max-unknown", "0"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", &dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let annotation = stderr
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation: {stderr}"));
    assert!(
        annotation.starts_with("::error file=two.jsonl,line=2,title=unknown_tool::"),
        "{annotation}"
    );
    assert!(
        !annotation.contains(['\u{1b}', '\u{7}']),
        "raw: {annotation:?}"
    );
    assert!(annotation.contains("x\\u{1b}[31m_tool"), "{annotation}");
    assert!(
        annotation.contains("req\\u{1b}]0;pwned\\u{7},9"),
        "{annotation}"
    );
}

/// `rate --html` draws the rate, its interval and a bar per cause of unknown names from the
/// same JSON `--json` prints; `--junit` is one gate testcase.
#[test]
fn rate_reports_say_what_json_says() {
    let dir = scratch("rate-reports");
    let (cases, recorded) = tree(&dir);
    let (page, junit) = (dir.join("rate.html"), dir.join("rate.xml"));
    let run = toolcall_json(
        &[
            "rate",
            "--cases",
            &cases,
            "--recorded",
            &recorded,
            "--max-unknown",
            "0",
            "--json",
            "--html",
            page.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        1,
    );
    assert_eq!(run["command"], "rate");
    assert_eq!(run["ok"], false);
    let html = std::fs::read_to_string(&page).unwrap();
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        html.contains(&format!(
            "<b>{}</b> of {} call(s)",
            run["unknown"], run["calls"]
        )),
        "{html}"
    );
    let causes: std::collections::BTreeSet<&str> = run["distinct"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["causes"].as_object().unwrap().keys().map(String::as_str))
        .collect();
    assert_eq!(html.matches("class=\"bar\"").count(), causes.len());
    for name in run["distinct"].as_array().unwrap() {
        assert!(html.contains(&format!("<code>{}</code>", name["name"].as_str().unwrap())));
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    well_formed(&xml).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        xml.contains(
            "<testcase name=\"rate::[gate]\" classname=\"rate\">\n      <failure type=\"gate\""
        ),
        "{xml}"
    );
}

/// The trace fixtures of toolcall-traces (real exports, see their SOURCES.md).
fn trace_fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolcall-traces/tests/fixtures")
        .join(path)
}

/// `toolcall rate` reads traces straight from their files: the turns it could judge are in the
/// rate, the turns whose trace recorded no catalog are counted apart (never as unknown), folded
/// duplicates are said, and `--json` carries the same counts.
#[test]
fn rate_reads_traces_and_counts_what_it_cannot_judge() {
    let files = [
        trace_fixture("langfuse/pydantic-ai-tools-2025-12-04.trace.json"),
        trace_fixture("langfuse/claude-agent-2025-12-22.trace.json"),
        trace_fixture("langsmith/handwritten_langchain_tool_calls.json"),
    ];
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let report = toolcall_json(&[&["rate", "--json", "-q"], &args[..]].concat(), 0);
    // pydantic-ai: 4 judged turns with 4 calls, 3 tool spans folded; claude-agent: 4 turns with
    // 2 calls and no catalog; the LangSmith run: 1 call, outside its catalog.
    assert_eq!(
        (report["responses"].clone(), report["calls"].clone()),
        (json!(5), json!(5))
    );
    assert_eq!(report["unknown"], 1);
    assert_eq!(report["distinct"][0]["name"], "get_wether");
    let claude = trace_fixture("langfuse/claude-agent-2025-12-22.trace.json");
    let claude = claude.to_str().unwrap();
    let unjudged = &report["traces"]["not_judged"];
    assert_eq!(unjudged.as_array().map(Vec::len), Some(2), "{unjudged}");
    for call in unjudged.as_array().unwrap() {
        assert_eq!(call["source"], "langfuse", "{call}");
        assert!(call["at"].as_str().unwrap().starts_with(claude), "{call}");
    }
    let mut traces = report["traces"].clone();
    traces.as_object_mut().unwrap().remove("not_judged");
    assert_eq!(
        traces,
        json!({"not_judged_turns": 4, "not_judged_calls": 2, "names_only_turns": 0,
               "folded_calls": 3, "split_traces": 0,
               "not_judged_by_source": {"langfuse": {"turns": 4, "calls": 2}}, "notes": []})
    );
    let text = stdout(&toolcall(&[&["rate", "-q"], &args[..]].concat()));
    // Each call not judged is named, with its turn and the source that read it.
    let named: Vec<String> = unjudged
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "  `{}` at {} (langfuse): not judged, no catalog recorded",
                c["name"].as_str().unwrap(),
                c["at"].as_str().unwrap()
            )
        })
        .collect();
    for line in [
        "not judged: no catalog recorded: 4 turn(s), 2 call(s)",
        "  langfuse: 4 turn(s), 2 call(s) with no catalog recorded",
        named[0].as_str(),
        named[1].as_str(),
        "calls recorded more than once, folded into one: 3",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

/// An ATIF trajectory newer than the reader is rated with a note saying what of it was read,
/// which fails nothing; one of another major version is refused, its version named.
#[test]
fn an_atif_version_the_reader_was_not_written_for_is_said() {
    let dir = scratch("trace-atif-versions");
    let real =
        std::fs::read_to_string(trace_fixture("atif/parallel_tools_mixed_results.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&real).unwrap();
    doc["schema_version"] = json!("ATIF-v1.9");
    let newer = dir.join("newer.json");
    write(&newer, &doc);
    let out = toolcall(&["rate", "--min-calls", "0", newer.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("is newer than ATIF-v1.7, which this reader was written for"),
        "{text}"
    );
    let report = toolcall_json(
        &[
            "rate",
            "--json",
            "--min-calls",
            "0",
            newer.to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(report["traces"]["notes"].as_array().map(Vec::len), Some(1));
    // A note is not a bad record: --strict reads on.
    let out = toolcall(&[
        "rate",
        "--strict",
        "--min-calls",
        "0",
        newer.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    doc["schema_version"] = json!("ATIF-v2.0");
    let other = dir.join("other.json");
    write(&other, &doc);
    let out = toolcall(&["rate", "-q", "--strict", other.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("ATIF version `ATIF-v2.0`"), "{said}");
}

/// A file no source claims, a source named for a file it does not claim: each said with the
/// file and what was expected, and the sources listed.
#[test]
fn a_file_that_is_not_a_trace_is_named() {
    let dir = scratch("trace-errors");
    let odd = dir.join("odd.json");
    write(&odd, &json!({"hello": "world"}));
    let out = toolcall(&["rate", "-q", odd.to_str().unwrap()]);
    let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{text}");
    // Not a source's: read as a log, whose error says both.
    assert!(
        text.contains("odd.json:1: not a log line ({\"request\", \"response\"}), nor in a trace"),
        "{text}"
    );
    let out = toolcall(&["rate", "-q", "--from", "langfuse", odd.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("odd.json: not a langfuse trace: expected Langfuse exports"),
        "{text}"
    );
    let claude = trace_fixture("claude-code/spotter_short.jsonl");
    let out = toolcall(&["rate", "-q", "--from", "atif", claude.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("spotter_short.jsonl: not a atif trace: expected ATIF"),
        "{text}"
    );
}

/// `toolcall import` writes a trace's judged turns as cases, and `toolcall rate DIR` on what it
/// wrote gives the rate the trace gives read directly.
#[test]
fn an_imported_trace_rates_as_the_trace_does() {
    let dir = scratch("trace-import");
    let trace = trace_fixture("langfuse/langfuse-csharp-agent-gemini-2026-03-09.trace.json");
    let out_dir = dir.join("out");
    let out = toolcall(&[
        "import",
        trace.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).contains("2 case(s) with 2 tool call(s)"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("folded 2 call(s)"),
        "{}",
        stdout(&out)
    );
    let rate = |path: &Path| toolcall_json(&["rate", "--json", "-q", path.to_str().unwrap()], 0);
    let (direct, imported) = (rate(&trace), rate(&out_dir));
    for key in ["calls", "unknown", "rate"] {
        assert_eq!(direct[key], imported[key], "{key}: {direct} vs {imported}");
    }
    assert_eq!(imported["calls"], 2);
}

/// `toolcall promote`: one turn becomes a case and its recording, and with `--baseline` a known
/// failure with a note, so `check` is green until the fix; a turn the trace holds no catalog
/// for, or whose conversation has a call without its result, is refused with nothing written.
#[test]
fn promote_turns_an_incident_into_a_known_failure() {
    let dir = scratch("trace-promote");
    let run = trace_fixture("langsmith/handwritten_langchain_tool_calls.json");
    let root = dir.join("suite");
    let out = toolcall(&[
        "promote",
        run.to_str().unwrap(),
        "--id",
        "run-1",
        "--out",
        root.to_str().unwrap(),
        "--baseline",
        "gpt-4o",
    ]);
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("+ incidents/run-1: get_wether"), "{text}");
    let baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("baselines/gpt-4o.json")).unwrap())
            .unwrap();
    assert!(
        baseline["incidents/run-1"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("promoted from")),
        "{baseline}"
    );
    let out = toolcall(&["check", "--root", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // Claude Code sessions record no catalog.
    let session = trace_fixture("claude-code/spotter_short.jsonl");
    let refused = dir.join("refused");
    let out = toolcall(&[
        "promote",
        session.to_str().unwrap(),
        "--id",
        "msg_01MKH1ccEGrZGNPvu8pYiiQa",
        "--out",
        refused.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("recorded no catalog for this turn"), "{text}");
    // A session that lost a record: claude-code-viewer's, without line 5 (the result of the
    // first TodoWrite call). The next turn's conversation has a call without its result.
    let session = trace_fixture("claude-code/ccv_5c0375b4_inline_sidechains.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&session)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 4)
        .map(|(_, l)| l.to_owned())
        .collect();
    let lost = dir.join("lost-a-record.jsonl");
    std::fs::write(&lost, lines.join("\n")).unwrap();
    let tools = dir.join("tools.json");
    write(&tools, &json!([{"name": "TodoWrite"}, {"name": "Glob"}]));
    let out = toolcall(&[
        "promote",
        lost.to_str().unwrap(),
        "--id",
        "msg_014fJ8dncc8t7mNss9o1poH3",
        "--tools",
        tools.to_str().unwrap(),
        "--out",
        refused.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("has a call to `TodoWrite` without its result in the trace"),
        "{text}"
    );
    // The same turn of the whole session is promoted.
    let out = toolcall(&[
        "promote",
        session.to_str().unwrap(),
        "--id",
        "msg_014fJ8dncc8t7mNss9o1poH3",
        "--tools",
        tools.to_str().unwrap(),
        "--out",
        dir.join("whole").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!refused.exists(), "nothing written");
}

/// A LangSmith export of one `llm` run per `(run id, trace id)`, each calling `get_weather`
/// with the tool defined.
fn langsmith_runs(runs: &[(&str, &str)]) -> Value {
    let runs: Vec<Value> = runs
        .iter()
        .enumerate()
        .map(|(i, (id, trace))| {
            json!({"id": id, "trace_id": trace, "dotted_order": format!("20250101T00000{i}000000Z{id}"),
              "run_type": "llm", "name": "ChatOpenAI",
              "extra": {"metadata": {"ls_model_name": "gpt-4o"},
                        "invocation_params": {"tools": [{"type": "function", "function": {
                          "name": "get_weather", "parameters": {"type": "object"}}}]}},
              "inputs": {"messages": [[{"lc": 1, "type": "constructor",
                "id": ["langchain", "schema", "messages", "HumanMessage"],
                "kwargs": {"content": "Weather in Paris?"}}]]},
              "outputs": {"generations": [[{"text": "", "message": {"lc": 1, "type": "constructor",
                "id": ["langchain", "schema", "messages", "AIMessage"],
                "kwargs": {"content": "", "tool_calls": [
                  {"name": "get_weather", "args": {}, "id": format!("call_{i}")}]}}}]]}})
        })
        .collect();
    json!({ "runs": runs })
}

/// `promote` plans every path before it writes one, as `import` does: one span id in two
/// traces used to write one file and report two cases; `Abc`/`abc` and `x`/`x ` two files
/// that are one on macOS and Windows or to a reader; a 300-character id on the second turn
/// failed after the first turn's files were written. Each is refused with nothing written; a
/// dangling link where a file goes is there already (replaced only with `--force`).
#[test]
fn promote_plans_every_path_before_writing_any() {
    let dir = scratch("promote-plan");
    let long = "r".repeat(300);
    for (runs, id, says) in [
        (
            vec![("dup", "t1"), ("dup", "t2")],
            "dup",
            "would both write",
        ),
        (vec![("Abc", "t"), ("abc", "t")], "t", "would both write"),
        (vec![("x", "t"), ("x ", "t")], "t", "would both write"),
        (
            vec![("first", "t"), (long.as_str(), "t")],
            "t",
            "over the 255 a file system takes",
        ),
    ] {
        let trace = dir.join("runs.json");
        write(&trace, &langsmith_runs(&runs));
        let out_dir = dir.join("suite");
        let out = toolcall(&[
            "promote",
            trace.to_str().unwrap(),
            "--id",
            id,
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{runs:?}: {text}{}",
            stdout(&out)
        );
        assert!(text.contains(says), "{runs:?}: {text}");
        assert!(text.contains("nothing was written"), "{runs:?}: {text}");
        assert!(!out_dir.exists(), "{runs:?}: nothing is written");
    }
    #[cfg(unix)]
    {
        let trace = dir.join("one.json");
        write(&trace, &langsmith_runs(&[("run-1", "t")]));
        let out_dir = dir.join("linked");
        let case = out_dir.join("cases/incidents/run-1.json");
        std::fs::create_dir_all(case.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere.json"), &case).unwrap();
        let args = |force: bool| {
            let mut args = vec![
                "promote".to_owned(),
                trace.display().to_string(),
                "--id".into(),
                "run-1".into(),
                "--out".into(),
                out_dir.display().to_string(),
            ];
            if force {
                args.push("--force".into());
            }
            args
        };
        let run = |force: bool| {
            let args = args(force);
            toolcall(&args.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let out = run(false);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("exist already"), "{text}");
        assert!(std::fs::symlink_metadata(&case)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!out_dir.join("recorded").exists(), "nothing is written");
        assert_eq!(run(true).status.code(), Some(0));
        assert!(std::fs::symlink_metadata(&case).unwrap().is_file());
        assert!(
            !dir.join("nowhere.json").exists(),
            "not written through the link"
        );
    }
}

/// Writes `rows` as one row group of a Parquet file with the columns of Langfuse's blob export
/// (a row's other members are not written, a missing one is empty).
#[cfg(feature = "parquet")]
fn write_parquet(path: &Path, rows: &[Value]) {
    let mut writer =
        toolcall_traces::RowsWriter::create(path, &toolcall_traces::RowsWriter::LANGFUSE_COLUMNS)
            .unwrap();
    writer.group(rows).unwrap();
    writer.close().unwrap();
}

/// A Parquet export reads as the same rows in JSON Lines do: Langfuse's blob export rows, here
/// written by the test (no licensed Parquet export was found), rated straight from the file.
#[cfg(feature = "parquet")]
#[test]
fn a_parquet_export_rates_as_its_rows_in_json_lines() {
    let dir = scratch("trace-parquet");
    let jsonl = trace_fixture("langfuse/handwritten_blob_export_rows.jsonl");
    let rows: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.is_object())
        .collect();
    assert_eq!(rows.len(), 2);
    let parquet = dir.join("observations.parquet");
    write_parquet(&parquet, &rows);
    let report = toolcall_json(&["rate", "--json", "-q", parquet.to_str().unwrap()], 0);
    assert_eq!(
        (report["calls"].clone(), report["unknown"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(report["distinct"][0]["name"], "refund_order");
    assert_eq!(report["traces"]["folded_calls"], 1);
    // Parquet that is not: named with the file.
    let broken = dir.join("broken.parquet");
    std::fs::write(&broken, b"PAR1 and then nothing").unwrap();
    let out = toolcall(&["rate", "-q", broken.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("broken.parquet: not Parquet:"), "{text}");
    // A file the `parquet` crate panics on (found by the fuzz tier): the file's error, and no
    // panic printed.
    let garbled = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolcall-traces/tests/data/fuzz-garbled-footer.parquet");
    let out = toolcall(&["rate", "-q", garbled.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("not Parquet: its reader failed"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// An export far longer than the input limit is read row by row, a trace at a time, from JSON
/// Lines and from Parquet: the limit is a row's, not the file's (before, the JSON Lines file was
/// taken for a log and every row was a bad line, and the Parquet file was refused).
#[cfg(feature = "parquet")]
#[test]
fn an_export_longer_than_the_input_limit_rates_row_by_row() {
    let dir = scratch("trace-long-export");
    let fixture = trace_fixture("langfuse/handwritten_blob_export_rows.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let pair: Vec<&str> = text.lines().take(2).collect();
    let mut lines = String::new();
    let mut rows = Vec::new();
    for n in 0..200 {
        for line in &pair {
            let line = line
                .replace("trace-1", &format!("trace-{n}"))
                .replace("call_9", &format!("call_{n}"))
                .replace("obs-", &format!("obs-{n}-"));
            lines.push_str(&line);
            lines.push('\n');
            let row: Value = serde_json::from_str(&line).unwrap();
            rows.push(row);
        }
    }
    let jsonl = dir.join("observations.jsonl");
    std::fs::write(&jsonl, &lines).unwrap();
    // A page is read whole, so it is held to the limit too: row groups of 40 rows keep each
    // page within 20 KB.
    let parquet = dir.join("observations.parquet");
    let groups: Vec<Vec<Value>> = rows.chunks(40).map(<[Value]>::to_vec).collect();
    write_parquet_groups(&parquet, &groups);
    assert!(lines.len() > 100_000);
    for file in [&jsonl, &parquet] {
        let out = toolcall(&[
            "rate",
            "--json",
            "-q",
            "--max-input-bytes",
            "20KB",
            file.to_str().unwrap(),
        ]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            (
                report["calls"].clone(),
                report["unknown"].clone(),
                report["bad_lines"].clone()
            ),
            (json!(200), json!(200), json!(0)),
            "{}",
            file.display()
        );
        assert_eq!(report["traces"]["folded_calls"], 200);
        assert_eq!(report["traces"]["split_traces"], 0);
    }
}

/// The rows of Langfuse's blob export fixture: a generation calling `refund_order` (not
/// defined) and its tool span.
#[cfg(feature = "parquet")]
fn langfuse_rows() -> Vec<Value> {
    let jsonl = trace_fixture("langfuse/handwritten_blob_export_rows.jsonl");
    let rows: Vec<Value> = std::fs::read_to_string(jsonl)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect();
    assert_eq!(rows.len(), 2);
    rows
}

/// Writes each of `groups` as a row group of a Parquet file with Langfuse's columns.
#[cfg(feature = "parquet")]
fn write_parquet_groups(path: &Path, groups: &[Vec<Value>]) {
    let mut writer =
        toolcall_traces::RowsWriter::create(path, &toolcall_traces::RowsWriter::LANGFUSE_COLUMNS)
            .unwrap();
    for rows in groups {
        writer.group(rows).unwrap();
    }
    writer.close().unwrap();
}

/// A Parquet file whose first page header (at byte 4, after `PAR1`) claims 134,217,727 bytes
/// uncompressed, twice the default input limit, in a file of a few KB: a first row group of
/// one row whose `id` is 1.1 MB of one letter (its page's size takes four bytes of the header),
/// that size then rewritten to the largest four bytes hold; then `rest` as a second row group.
#[cfg(feature = "parquet")]
fn parquet_claiming_a_huge_first_page(path: &Path, rest: &[Value]) {
    let huge = json!({"id": "x".repeat(1_100_000), "trace_id": "t0", "type": "SPAN"});
    let mut groups = vec![vec![huge]];
    if !rest.is_empty() {
        groups.push(rest.to_vec());
    }
    write_parquet_groups(path, &groups);
    let mut bytes = std::fs::read(path).unwrap();
    // The header's fields 1 (`type`) and 2 (`uncompressed_page_size`), Thrift compact: a field
    // byte 0x15 (field +1, i32), then a zigzag varint each.
    assert_eq!(bytes[4], 0x15, "a page header at byte 4");
    let mut at = 5;
    while bytes[at] & 0x80 != 0 {
        at += 1;
    }
    at += 1;
    assert_eq!(bytes[at], 0x15, "field 2 of the page header");
    let size = &mut bytes[at + 1..at + 5];
    assert!(
        size[..3].iter().all(|b| b & 0x80 != 0) && size[3] & 0x80 == 0,
        "a four-byte size"
    );
    size.copy_from_slice(&[0xFE, 0xFF, 0xFF, 0x7F]); // zigzag 134,217,727
    std::fs::write(path, &bytes).unwrap();
    assert!(bytes.len() < 100 * 1024, "{} bytes", bytes.len());
}

/// A Parquet page whose header declares more than the input limit is refused before it is read
/// (it allocated what it declared: 2 GiB from a 14 KB file, and under a memory limit the
/// process aborted): its row group is one bad entry naming the page, column and limit, and the
/// file's other row groups are rated. Run under an address-space limit that the declared size
/// alone would pass (Linux), so reading the page would abort.
#[cfg(feature = "parquet")]
#[test]
fn a_parquet_page_declaring_more_than_the_input_limit_is_refused_unread() {
    let dir = scratch("parquet-huge-page");
    let path = dir.join("observations.parquet");
    parquet_claiming_a_huge_first_page(&path, &langfuse_rows());
    let limited = |args: &[&str]| {
        let mut command = if cfg!(target_os = "linux") {
            // 96 MiB of address space on top of what the same run takes on a valid file.
            let mut command = std::process::Command::new("sh");
            command
                .arg("-c")
                .arg("ulimit -v $((LIMIT_KB)) && exec \"$0\" \"$@\"")
                .arg(env!("CARGO_BIN_EXE_toolcall"));
            command
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_toolcall"))
        };
        command.args(args).env_remove("GITHUB_ACTIONS");
        command
    };
    // The address space of a run over a valid file, measured as the limit it needs.
    let valid = dir.join("valid.parquet");
    write_parquet_groups(&valid, &[langfuse_rows()]);
    let needs_kb = (1..=64u64)
        .map(|n| n * 16 * 1024)
        .find(|kb| {
            limited(&[
                "rate",
                "--json",
                "-q",
                "--threads",
                "1",
                valid.to_str().unwrap(),
            ])
            .env("LIMIT_KB", kb.to_string())
            .output()
            .unwrap()
            .status
            .success()
        })
        .expect("a rate run within 1 GiB of address space");
    let out = limited(&[
        "rate",
        "--json",
        "-q",
        "--threads",
        "1",
        path.to_str().unwrap(),
    ])
    .env("LIMIT_KB", (needs_kb + 96 * 1024).to_string())
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["calls"].clone(), report["unknown"].clone()),
        (json!(1), json!(1)),
        "{report}"
    );
    assert_eq!(report["bad_lines"], 1, "{report}");
    let error = report["errors"][0].as_str().unwrap();
    assert!(
        error.contains(
            "observations.parquet:row 1: column `id`: page 1 declares 134217727 bytes \
                        uncompressed, over the input limit of 67108864 bytes"
        ),
        "{error}"
    );
    // The file alone: that row group is all there is, and the refusal is the file's error.
    let alone = dir.join("alone.parquet");
    parquet_claiming_a_huge_first_page(&alone, &[]);
    let out = toolcall(&["rate", "-q", alone.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("alone.parquet: row 1: column `id`: page 1 declares 134217727 bytes"),
        "{text}"
    );
    assert!(!text.contains("not a log line"), "{text}");
}

/// The input limit is a record's, by its decoded size, in Parquet as in JSON Lines: a row over
/// it (three values of 400 KB under a 1 MiB limit, each page within it; or one value of 2 MB,
/// whose page is not) is a bad entry, as its line is, and the other rows are rated (before, the
/// Parquet rows were read and scored).
#[cfg(feature = "parquet")]
#[test]
fn a_parquet_row_over_the_input_limit_is_a_bad_record_as_its_line_is() {
    let dir = scratch("parquet-big-row");
    let rows = langfuse_rows();
    let wide = "w".repeat(400_000);
    let spread = json!({"id": "obs-spread", "trace_id": "t-spread", "type": "SPAN",
                        "input": wide, "output": wide, "metadata": wide});
    let single = json!({"id": "obs-single", "trace_id": "t-single", "type": "SPAN",
                        "input": "s".repeat(2_000_000)});
    let groups = vec![
        vec![rows[0].clone()],
        vec![spread.clone()],
        vec![single.clone()],
        vec![rows[1].clone()],
    ];
    let parquet = dir.join("observations.parquet");
    write_parquet_groups(&parquet, &groups);
    let jsonl = dir.join("observations.jsonl");
    let lines: String = [&rows[0], &spread, &single, &rows[1]]
        .iter()
        .map(|row| format!("{row}\n"))
        .collect();
    std::fs::write(&jsonl, lines).unwrap();
    let mut reports = Vec::new();
    for file in [&jsonl, &parquet] {
        let args = ["rate", "--json", "-q", "--max-input-bytes", "1MiB"];
        let out = toolcall(&[&args[..], &[file.to_str().unwrap()]].concat());
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            (
                report["calls"].clone(),
                report["unknown"].clone(),
                report["bad_lines"].clone()
            ),
            (json!(1), json!(1), json!(2)),
            "{}: {report}",
            file.display()
        );
        for error in report["errors"].as_array().unwrap() {
            assert!(
                error
                    .as_str()
                    .unwrap()
                    .contains("over the input limit of 1048576 bytes"),
                "{error}"
            );
        }
        reports.push(report);
    }
    let errors = &reports[1]["errors"];
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("observations.parquet:row 2: a row of 1200"),
        "{errors}"
    );
    assert!(
        errors[1]
            .as_str()
            .unwrap()
            .contains("observations.parquet:row 3: column `input`: page 1 declares 2000"),
        "{errors}"
    );
}

/// What a file is, is told by its first bytes: a damaged Parquet file, whatever its name, is
/// reported with the Parquet reader's error, and a UTF-16 JSON Lines file (with a byte order
/// mark or without) as UTF-16 to save as UTF-8, as every other input is — before, each was
/// "N unreadable log lines", its binary lines read as JSON.
#[cfg(feature = "parquet")]
#[test]
fn a_file_is_told_by_its_magic_bytes_not_read_as_log_lines() {
    let dir = scratch("magic-bytes");
    let valid = dir.join("valid.parquet");
    write_parquet_groups(&valid, &[langfuse_rows()]);
    // A row whose `id` is 1.1 MB of one letter: its first page is some 50 KB of Snappy data,
    // garbled here in its middle (its header and the file's footer intact): its rows cannot
    // be read.
    let huge = json!({"id": "x".repeat(1_100_000), "trace_id": "t0", "type": "SPAN"});
    write_parquet_groups(&valid, &[vec![huge]]);
    let mut bytes = std::fs::read(&valid).unwrap();
    for b in &mut bytes[10_000..10_016] {
        *b = 0xEE;
    }
    for name in ["damaged.parquet", "damaged.jsonl", "damaged"] {
        let damaged = dir.join(name);
        std::fs::write(&damaged, &bytes).unwrap();
        let out = toolcall(&["rate", "-q", damaged.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{name}: {text}");
        assert!(text.contains(&format!("{name}: row 1: ")), "{name}: {text}");
        assert!(!text.contains("not a log line"), "{name}: {text}");
        // `import` and `promote` say the same (before, "not UTF-8 text" or "no assistant
        // turn").
        let out_dir = dir.join(format!("out-{name}"));
        for args in [
            vec![
                "import",
                damaged.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
            vec![
                "promote",
                damaged.to_str().unwrap(),
                "--id",
                "obs-1",
                "--out",
                out_dir.to_str().unwrap(),
            ],
        ] {
            let out = toolcall(&args);
            let text = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
            assert!(
                text.contains(&format!("{name}: row 1: ")),
                "{args:?}: {text}"
            );
        }
        assert!(!out_dir.exists(), "nothing written");
    }
    // Valid Parquet that no source reads: that, not log lines.
    let other = dir.join("other.parquet");
    let mut writer = toolcall_traces::RowsWriter::create(&other, &["a", "b"]).unwrap();
    writer.group(&[json!({"a": "1", "b": "2"})]).unwrap();
    writer.close().unwrap();
    let out = toolcall(&["rate", other.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("other.parquet: not a trace any source reads"),
        "{text}"
    );
    assert!(!text.contains("not a log line"), "{text}");

    // UTF-16 JSON Lines: a log, and a trace.
    let log_line = r#"{"request": {"tools": []}, "response": {"choices": []}}"#;
    let rows = langfuse_rows();
    let trace = format!("{}\n{}\n", rows[0], rows[1]);
    for (name, text) in [
        ("log.jsonl", log_line.to_owned() + "\n"),
        ("trace.jsonl", trace),
    ] {
        for (order, bom) in [("LE", true), ("BE", false)] {
            let units = text.encode_utf16().flat_map(|u| match order {
                "LE" => u.to_le_bytes(),
                _ => u.to_be_bytes(),
            });
            let mark: &[u8] = match (bom, order) {
                (true, "LE") => &[0xFF, 0xFE],
                (true, _) => &[0xFE, 0xFF],
                _ => &[],
            };
            let path = dir.join(format!("{order}-{name}"));
            std::fs::write(&path, [mark.to_vec(), units.collect()].concat()).unwrap();
            let out = toolcall(&["rate", "-q", path.to_str().unwrap()]);
            let said = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(2), "{said}");
            assert!(
                said.contains(&format!("the file is UTF-16{order}"))
                    && said.contains("save it as UTF-8"),
                "{name} ({order}): {said}"
            );
            assert!(!said.contains("not a log line"), "{said}");
        }
    }
    // Standard input too.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(["rate", "-q", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(log_line.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &utf16).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("the file is UTF-16LE"), "{said}");
}

/// `--strict` makes a trace's first unreadable record fatal, naming it.
#[test]
fn strict_makes_a_bad_trace_record_fatal() {
    let edge = trace_fixture("claude-code/ccl_edge_cases.jsonl");
    let out = toolcall(&["rate", "-q", "--strict", edge.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("ccl_edge_cases.jsonl:11: a `user` record whose `message` is not an object"),
        "{text}"
    );
    // Without --strict the other records count: nothing could be judged (no catalog), which a
    // gate does not pass, and says why.
    let out = toolcall(&["rate", "-q", edge.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("unreadable inputs: 5"), "{text}");
    assert!(
        text.contains("4 trace turn(s) were read but not judged, their trace recorded no catalog"),
        "{text}"
    );
    // The gate names the flags that accept it: a catalog, or an empty run.
    for flag in [
        "--tools FILE supplies one",
        "--min-calls 0 accepts an empty run",
    ] {
        assert!(text.contains(flag), "missing {flag:?} in:\n{text}");
    }
    assert!(
        text.contains("  claude-code: 4 turn(s), "),
        "no count by source in:\n{text}"
    );
    let out = toolcall(&["rate", "-q", "--min-calls", "0", edge.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // A session viewer's `{"loglines"}` has no bad record: --strict does not stop it.
    let loglines = trace_fixture("claude-code/cct_sample_session.loglines.json");
    let out = toolcall(&["rate", "-q", "--strict", loglines.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("15 trace turn(s) were read but not judged"),
        "{text}"
    );
}

/// `--tools PATTERN=FILE` gives each agent its own catalog: Claude Code's sub-agents (the
/// inline sidechains of claude-code-viewer's session) against a catalog without Bash, the main
/// agent against the full one; the first rule that matches a turn wins.
#[test]
fn each_agent_may_get_its_own_catalog() {
    let dir = scratch("trace-tools-per-agent");
    let (side, main) = (dir.join("side.json"), dir.join("main.json"));
    write(&side, &json!([{"name": "Glob"}, {"name": "Read"}]));
    write(
        &main,
        &json!([
            "TodoWrite",
            "Glob",
            "Task",
            "Read",
            "Bash",
            "Edit",
            "MultiEdit"
        ]
        .iter()
        .map(|n| json!({"name": n}))
        .collect::<Vec<_>>()),
    );
    let session = trace_fixture("claude-code/ccv_5c0375b4_inline_sidechains.jsonl");
    let side_rule = format!("sidechain={}", side.display());
    let report = toolcall_json(
        &[
            "rate",
            "--json",
            "-q",
            "--tools",
            &side_rule,
            "--tools",
            main.to_str().unwrap(),
            session.to_str().unwrap(),
        ],
        0,
    );
    // 21 calls; the sub-agents' five Bash calls are outside their catalog.
    assert_eq!(
        (report["calls"].clone(), report["unknown"].clone()),
        (json!(21), json!(5))
    );
    assert_eq!(report["distinct"][0]["name"], "Bash");
    assert_eq!(report["traces"]["not_judged_turns"], 0);
}

/// An OpenAI Agents export with a span that is its own parent, a repeated id, spans without
/// ids under `parent_id: ""`, and a chain of 5,000 nested spans: `rate`, `import` and
/// `promote` each read it (before, each overflowed its stack and aborted, exit 134). The spans
/// the tree cannot hold are named bad records (fatal under `--strict`); the rest are counted.
#[test]
fn a_hostile_openai_agents_export_is_read_by_rate_import_and_promote() {
    let dir = scratch("openai-agents-hostile");
    let span = |id: Value, parent: Value, data: Value| {
        json!({"object": "trace.span", "id": id, "trace_id": "trace_1", "parent_id": parent,
               "span_data": data})
    };
    let function = |id: &str, parent: &str, name: &str| {
        span(
            json!(id),
            json!(parent),
            json!({"type": "function", "name": name, "input": "{}"}),
        )
    };
    let mut spans = vec![
        span(
            json!("a"),
            Value::Null,
            json!({"type": "agent", "name": "triage", "tools": ["lookup"]}),
        ),
        function("self", "self", "lookup"),
        function("a", "a", "lookup"),
        span(Value::Null, json!(""), json!({"type": "agent"})),
        span(
            Value::Null,
            json!(""),
            json!({"type": "function", "name": "lookup"}),
        ),
        function("f0", "a", "lookpu"),
    ];
    // A chain of 5,000 nested spans, a call at its end: each span the child of the one before.
    spans.extend((1..5_000).map(|i| {
        let parent = if i == 1 {
            "a".to_owned()
        } else {
            format!("c{}", i - 1)
        };
        span(
            json!(format!("c{i}")),
            json!(parent),
            json!({"type": "custom"}),
        )
    }));
    spans.push(function("end", "c4999", "lookup"));
    let export = dir.join("export.json");
    write(&export, &json!({ "data": spans }));
    let path = export.to_str().unwrap();

    let report = toolcall_json(&["rate", "--json", "-q", "--max-rate", "1", path], 0);
    assert_eq!(
        (report["calls"].clone(), report["unknown"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(report["bad_lines"], 4, "{report}");
    let errors = report["errors"].to_string();
    for said in [
        "(span self, data[1]): a parent cycle (self → self by `parent_id`)",
        "(span a, data[2]): a second span with the id `a`",
        "(data[3]): a span without an `id`",
        "(data[4]): a span without an `id`",
    ] {
        assert!(errors.contains(said), "{said:?} not in {errors}");
    }
    let out = toolcall(&["rate", "-q", "--strict", path]);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--strict makes any bad input fatal"),
        "{text}"
    );

    let out = toolcall(&[
        "import",
        path,
        "--out",
        dir.join("imported").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("2 case(s) with 2 tool call(s)"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("a parent cycle"), "{}", stderr(&out));

    let out = toolcall(&[
        "promote",
        path,
        "--id",
        "f0",
        "--out",
        dir.join("promoted").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let case = std::fs::read_to_string(dir.join("promoted/recorded/incident/incidents/f0.json"));
    assert!(case.is_ok_and(|c| c.contains("lookpu")));
}
