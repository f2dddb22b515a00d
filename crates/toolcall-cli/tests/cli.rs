//! The `toolcall` binary as users run it: exit codes, human and JSON output, input errors.
//!
//! The default tier's one integration binary: `check` and `rate` are modules of it rather than
//! binaries of their own, so a change to the CLI links one test binary, not three (the tidy,
//! fuzz, newcomer and browser tiers stay separate).

mod check;
mod exit_codes;
mod flowcheck;
mod import_lint;
mod rate;
mod record_serve;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{stderr, stdout, toolcall, toolcall_json, well_formed};

use serde_json::{json, Value};

fn scratch(test: &str) -> PathBuf {
    support::scratch("cli", test)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const CASE: &str = r#"{
  "system": "You are the billing assistant. Use get_balance for balances.",
  "tools": [
    {"name": "get_balance", "description": "Current balance of an account.",
     "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}},
                      "required": ["account_id"]}},
    {"name": "get_invoice", "description": "One invoice by id.",
     "input_schema": {"type": "object", "properties": {"invoice_id": {"type": "string"}}}}
  ],
  "messages": [{"role": "user", "content": "Show me my invoices for acc_771"}]
}"#;

fn chat_response(name: &str, arguments: &str) -> String {
    json!({
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1718000000, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_abc", "type": "function",
                            "function": {"name": name, "arguments": arguments}}]}}]
    })
    .to_string()
}

/// The top-level `--help`: every command with its one line, as a user first meets them. Without
/// `COLUMNS`, which clap wraps to, the text is wrapped at clap's default of 100 columns.
#[test]
fn help_lists_every_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

/// `--format` lists every format name in `--help`, and a misspelt one is refused with them.
#[test]
fn format_names_are_listed_and_checked() {
    let help = stdout(&toolcall(&["score", "--help"]));
    let names = toolcall_score::Format::ALL.map(|f| f.as_str()).join(", ");
    assert!(
        help.replace(char::is_whitespace, "")
            .contains(&names.replace(' ', "")),
        "{help}"
    );
    let output = toolcall(&["score", "--response", "r.json", "--format", "olama"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("'ollama'"));
}

#[test]
fn score_passes_a_defined_call() {
    let dir = scratch("pass");
    let case = write(&dir, "case.json", CASE);
    let response = write(
        &dir,
        "r.json",
        &chat_response("get_balance", r#"{"account_id":"acc_771"}"#),
    );
    let out = toolcall(&[
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        response.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).starts_with("PASS "), "{}", stdout(&out));
}

/// A call without an id passes (many loops make one up), and says so: in the text, in `--json`
/// as `notes`, and as a `::warning` under GitHub Actions.
#[test]
fn score_notes_a_call_without_an_id() {
    let dir = scratch("no-id");
    let case = write(&dir, "case.json", CASE);
    let mut body: Value =
        serde_json::from_str(&chat_response("get_balance", r#"{"account_id":"acc_771"}"#)).unwrap();
    body["choices"][0]["message"]["tool_calls"][0]
        .as_object_mut()
        .unwrap()
        .remove("id");
    let response = write(&dir, "r.json", &body.to_string());
    let args = [
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        response.to_str().unwrap(),
    ];
    let out = toolcall(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.starts_with("PASS "), "{text}");
    assert!(
        text.contains("note (fails nothing): call_without_id `get_balance` at response call 1"),
        "{text}"
    );
    let json = toolcall_json(&[&args[..], &["--json"]].concat(), 0);
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["findings"], json!([]));
    assert_eq!(json["notes"][0]["kind"], "call_without_id");
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("::warning file="), "{}", stderr(&out));
}

/// A file over the input limit is refused before it is read, naming the file, its size, the
/// limit and how to raise it; a bad size is refused by the flag itself.
#[test]
fn an_input_over_the_limit_is_refused_up_front() {
    let dir = scratch("input-limit");
    let case = write(&dir, "case.json", CASE);
    let padding = " ".repeat(3000);
    let response = write(
        &dir,
        "r.json",
        &format!(
            "{}{padding}",
            chat_response("get_balance", r#"{"account_id":"a"}"#)
        ),
    );
    let args = |limit: &str| {
        toolcall(&[
            "score",
            "--max-input-bytes",
            limit,
            "--case",
            case.to_str().unwrap(),
            "--response",
            response.to_str().unwrap(),
        ])
    };
    let out = args("2KiB");
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}: 3.", response.display()))
            && err.contains("KiB is over the input limit of 2 KiB")
            && err.contains("--max-input-bytes"),
        "{err}"
    );
    assert_eq!(args("1MB").status.code(), Some(0));
    let out = args("lots");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`lots` is not a size"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn score_fails_an_unknown_name_with_cause_and_suggestion() {
    let dir = scratch("fail");
    let case = write(&dir, "case.json", CASE);
    let response = write(&dir, "r.json", &chat_response("get_invoices", "{}"));
    let args = [
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        response.to_str().unwrap(),
    ];
    let out = toolcall(&args);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(support::normalised(&stdout(&out)));

    let json = toolcall_json(&[&args[..], &["--json"]].concat(), 1);
    assert_eq!(json["verdict"], "fail");
    let finding = &json["findings"][0];
    assert_eq!(finding["kind"], "unknown_tool");
    assert_eq!(finding["name"], "get_invoices");
    assert_eq!(finding["cause"], "invented");
    assert_eq!(finding["suggestions"], json!(["get_invoice"]));
    assert_eq!(finding["call_id"], "call_abc");
}

#[test]
fn score_checks_schemas_in_the_cli() {
    let dir = scratch("schema");
    let case = write(&dir, "case.json", CASE);
    let response = write(&dir, "r.json", &chat_response("get_balance", "{}"));
    let json = toolcall_json(
        &[
            "score",
            "--case",
            case.to_str().unwrap(),
            "--response",
            response.to_str().unwrap(),
            "--json",
        ],
        1,
    );
    assert_eq!(json["findings"][0]["kind"], "schema_violation");
    assert!(json["findings"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("account_id"));
}

#[test]
fn score_with_a_bare_tools_array() {
    let dir = scratch("tools");
    let tools = write(
        &dir,
        "tools.json",
        r#"[{"type": "function", "function": {"name": "get_balance", "parameters": {"type": "object"}}}]"#,
    );
    let good = write(&dir, "good.json", &chat_response("get_balance", "{}"));
    let bad = write(
        &dir,
        "bad.json",
        &chat_response("github__get_balance", "{}"),
    );
    let run = |r: &Path| {
        toolcall(&[
            "score",
            "--tools",
            tools.to_str().unwrap(),
            "--response",
            r.to_str().unwrap(),
        ])
    };
    assert_eq!(run(&good).status.code(), Some(0));
    let out = run(&bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("(namespace)"), "{}", stdout(&out));
}

#[test]
fn bad_input_names_the_file_line_and_column() {
    let dir = scratch("bad");
    let case = write(&dir, "case.json", CASE);
    let broken = write(
        &dir,
        "broken.json",
        "{\n  \"choices\": [\n    {\"message\": }\n  ]\n}",
    );
    let out = toolcall(&[
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        broken.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3:", broken.display())), "{err}");

    let unknown = write(&dir, "unknown.json", r#"{"result": "ok"}"#);
    let out = toolcall(&[
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        unknown.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("matches no supported format"),
        "{}",
        stderr(&out)
    );

    let bad_tools = write(
        &dir,
        "case2.json",
        "{\n  \"tools\": [\n    {\"description\": \"no name\"}\n  ]\n}",
    );
    let out = toolcall(&["lint", bad_tools.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("{}:3:5", bad_tools.display())),
        "{}",
        stderr(&out)
    );
}

/// A case or tools file whose tool schema does not compile is bad input (exit 2) naming the
/// file, the schema's line and column and the tool, for `score` and `lint` alike: the request is
/// at fault, not the call.
#[test]
fn a_schema_that_does_not_compile_is_bad_input() {
    let dir = scratch("uncompilable");
    let case = write(
        &dir,
        "case.json",
        r#"{
  "tools": [
    {"name": "get_weather", "description": "Weather in a city.",
     "input_schema": {"type": "notatype", "properties": {"city": {"type": "string"}}}}
  ],
  "messages": [{"role": "user", "content": "Weather in Oslo?"}]
}"#,
    );
    let tools = write(
        &dir,
        "tools.json",
        r#"[
  {"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "required": "city"}}}
]"#,
    );
    let response = write(
        &dir,
        "r.json",
        &chat_response("get_weather", r#"{"city": "Oslo"}"#),
    );
    let (case, tools, response) = (
        case.to_str().unwrap(),
        tools.to_str().unwrap(),
        response.to_str().unwrap(),
    );
    for (args, place) in [
        (
            vec!["score", "--case", case, "--response", response],
            format!("{case}:4:22"),
        ),
        (
            vec!["score", "--tools", tools, "--response", response],
            format!("{tools}:3:19"),
        ),
        (vec!["lint", case], format!("{case}:4:22")),
    ] {
        let out = toolcall(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let expected = format!("{place}: tool `get_weather`: its input schema does not compile: ");
        assert!(err.contains(&expected), "{args:?}: {err}");
        assert!(!stdout(&out).contains("schema_violation"), "{args:?}");
    }
}

#[test]
fn lint_names_the_drifted_tool() {
    let dir = scratch("lint");
    let drifted = write(
        &dir,
        "drift.json",
        r#"{
        "system": "You are support. Use lookup_customer to find an account first.",
        "tools": [{"name": "find_customer", "description": "Find a customer by email."}]
    }"#,
    );
    let clean = write(&dir, "clean.json", CASE);
    let out = toolcall(&["lint", drifted.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(support::normalised(&stdout(&out)));
    assert_eq!(
        toolcall(&["lint", clean.to_str().unwrap()]).status.code(),
        Some(0)
    );
}

/// `toolcall lint DIR` lints every case under the folder, as `check --cases DIR` walks it (it
/// used to fail with "Is a directory"); an empty folder is bad input naming it.
#[test]
fn lint_walks_a_folder_of_cases() {
    let dir = scratch("lint-folder");
    let cases = dir.join("cases");
    std::fs::create_dir_all(cases.join("support")).unwrap();
    write(
        &cases.join("support"),
        "drift.json",
        r#"{"system": "Use lookup_customer first.", "tools": [{"name": "find_customer"}]}"#,
    );
    write(&cases, "clean.json", CASE);
    write(&cases, "notes.md", "not a case");
    let out = toolcall_json(&["lint", "--json", cases.to_str().unwrap()], 1);
    let rows = out.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["name"], "lookup_customer");
    assert!(
        rows[0]["case"].as_str().unwrap().ends_with("drift.json"),
        "{out}"
    );
    let out = toolcall(&["lint", cases.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = toolcall(&["lint", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds no case (*.json)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn github_actions_get_annotations() {
    let dir = scratch("gha");
    let case = write(&dir, "case.json", CASE);
    let response = write(&dir, "r.json", &chat_response("get_invoices", "{}"));
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args([
            "score",
            "--case",
            case.to_str().unwrap(),
            "--response",
            response.to_str().unwrap(),
        ])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("::error file="), "{}", stderr(&out));
}

/// `toolcall score … | head` closes the pipe early: the output stops quietly and the exit code
/// still reports the verdict, where `println!` would panic (exit 101, a backtrace on stderr).
#[test]
fn a_closed_stdout_ends_the_output_without_a_panic() {
    let dir = scratch("closed-stdout");
    let case = write(&dir, "case.json", CASE);
    let response = write(&dir, "r.json", &chat_response("list_invoices", "{}"));
    // A pipe with no reader left: every write to it fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(["score", "--case", case.to_str().unwrap()])
        .args(["--response", response.to_str().unwrap()])
        .env_remove("GITHUB_ACTIONS")
        .stdout(writer)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A case whose tools sit under a misspelt key (or an empty tools file) defines no tools, so
/// every call is "invented": the output says why instead of leaving the user to guess.
#[test]
fn a_case_with_no_tools_says_so() {
    let dir = scratch("no-tools");
    let case = write(&dir, "case.json", &CASE.replace("\"tools\"", "\"tool\""));
    let tools = write(&dir, "tools.json", "[]");
    let response = write(&dir, "r.json", &chat_response("get_balance", "{}"));
    for (flag, path) in [("--case", &case), ("--tools", &tools)] {
        let out = toolcall(&[
            "score",
            flag,
            path.to_str().unwrap(),
            "--response",
            response.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{} defines no tools", path.display())),
            "{flag}: {err}"
        );
    }
}

/// A name holding U+202E (right-to-left override) displays reversed in the terminal that shows
/// `--json` output; serde_json's writer let it through raw. It is written as `\u202e` now: the
/// same JSON string, and nothing for a terminal to act on.
#[test]
fn json_output_escapes_bidi_overrides_and_decodes_to_the_same_name() {
    let dir = scratch("json-bidi");
    let case = write(&dir, "case.json", CASE);
    let name = "get_\u{202e}eciovni\u{200b}\u{9b}2J";
    let response = write(&dir, "r.json", &chat_response(name, "{}"));
    let out = toolcall(&[
        "score",
        "--case",
        case.to_str().unwrap(),
        "--response",
        response.to_str().unwrap(),
        "--json",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        !text.contains(['\u{202e}', '\u{200b}', '\u{9b}']),
        "raw in the JSON: {text:?}"
    );
    assert!(
        text.contains("get_\\u202eeciovni\\u200b\\u009b2J"),
        "{text}"
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["findings"][0]["name"], name);
}

/// `toolcall schema KIND` prints the committed `schemas/KIND.schema.json` byte for byte, for
/// each kind; another kind is refused with the ones there are.
#[test]
fn schema_prints_each_committed_schema_byte_for_byte() {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    for kind in ["case", "flow", "baseline"] {
        let out = toolcall(&["schema", kind]);
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", stderr(&out));
        let committed = std::fs::read(schemas.join(format!("{kind}.schema.json"))).unwrap();
        assert!(
            out.stdout == committed,
            "`toolcall schema {kind}` differs from the file"
        );
    }
    let out = toolcall(&["schema", "recording"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("[possible values: case, flow, baseline]"),
        "{}",
        stderr(&out)
    );
}

/// The workspace's example MCP server `name`, which `toolcall-mcp-servers` builds into the same
/// target directory as `toolcall`. `cargo test` (or `cargo nextest run`) over the workspace
/// builds both before running any test; `cargo test -p toolcall-cli` alone builds only
/// `toolcall`, so add `-p toolcall-mcp-servers` to it.
fn example_server(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_toolcall"))
        .with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built: run the tests over the workspace, or add -p toolcall-mcp-servers",
        path.display()
    );
    path
}

/// `toolcall replay FLOW...` with the example refund server as `${ATP_REFUND_SERVER}`.
fn replay(flows: &[&Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .args(flows)
        .env("ATP_REFUND_SERVER", example_server("refund-server"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

fn flows_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../flows")
}

/// The example flows that demonstrate a failure pass `replay`, each printed as failed as
/// expected, beside the flow that passes; and a flow replays the same with its `"$schema"` (as
/// the examples have it) and without.
#[test]
fn replay_passes_flows_that_fail_as_they_expect() {
    let dir = flows_dir();
    let failing = [
        "missing-reason",
        "refund-too-much",
        "renamed-tool",
        "wrong-status",
    ];
    let mut flows: Vec<PathBuf> = failing
        .iter()
        .map(|f| dir.join(format!("{f}.json")))
        .collect();
    flows.push(dir.join("refund.json"));
    let out = replay(&flows.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    for (name, path) in failing.iter().zip(&flows) {
        let flow: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let expected = flow["expected_failure"].as_str().unwrap();
        let line = format!("XFAIL {}: {expected}\n", path.display());
        assert!(text.contains(&line), "{name}: no {line:?} in\n{text}");
    }
    assert_eq!(
        text.matches("failed as expected after ").count(),
        4,
        "{text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("FAIL ")), "{text}");
    assert!(text.contains("6 steps passed in "), "{text}");

    // The example flows name their schema; without it, a flow replays the same.
    let refund = std::fs::read_to_string(dir.join("refund.json")).unwrap();
    let mut plain: Value = serde_json::from_str(&refund).unwrap();
    assert!(plain["$schema"].is_string(), "{refund}");
    plain.as_object_mut().unwrap().remove("$schema");
    let plain = write(
        &scratch("replay-no-schema-key"),
        "refund.json",
        &plain.to_string(),
    );
    let out = replay(&[&plain]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("6 steps passed in "), "{text}");
}

/// A flow that fails, but not the way its `expected_failure` says, fails, saying both.
#[test]
fn replay_fails_a_flow_that_fails_otherwise_than_it_expects() {
    let dir = scratch("replay-other-failure");
    let renamed = std::fs::read_to_string(flows_dir().join("renamed-tool.json")).unwrap();
    let mut flow: Value = serde_json::from_str(&renamed).unwrap();
    let actual = flow["expected_failure"].as_str().unwrap().to_owned();
    let expected = "step 2: refund_order: the tool returned isError: true: \"no such order\"";
    flow["expected_failure"] = json!(expected);
    let path = write(&dir, "renamed-tool.json", &flow.to_string());
    let out = replay(&[&path]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    let said = format!(
        "FAIL {}: expected the failure\n  {}\ngot\n  {actual}\n",
        path.display(),
        expected
    );
    assert!(text.contains(&said), "no {said:?} in\n{text}");
    assert!(!text.contains("XFAIL"), "{text}");
}

/// A flow whose expected failure did not happen (every step passed) fails, and says to remove
/// `expected_failure` if the fix is for good: the ratchet of a baseline entry that now passes.
#[test]
fn replay_fails_a_flow_whose_expected_failure_did_not_happen() {
    let dir = scratch("replay-unexpected-pass");
    let refund = std::fs::read_to_string(flows_dir().join("refund.json")).unwrap();
    let mut flow: Value = serde_json::from_str(&refund).unwrap();
    let expected = "step 2: issue_refund: expected /status = \"refunded\", got \"pending\"";
    flow["expected_failure"] = json!(expected);
    let path = write(&dir, "refund.json", &flow.to_string());
    let out = replay(&[&path]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("6 steps passed in "), "{text}");
    let said = format!(
        "FAIL {}: expected the replay to fail with\n  {}\nbut every step passed: the expected \
         failure did not happen (if it is fixed for good, remove `expected_failure` from the \
         flow)\n",
        path.display(),
        expected
    );
    assert!(text.contains(&said), "no {said:?} in\n{text}");
}

/// `replay --json`, `--junit` and `--html` draw the same run: each flow with its outcome (the
/// example failure flows as expected failures), its steps with the inputs the flow sent, and a
/// page that is well-formed and names each flow.
#[test]
fn replay_reports_say_what_json_says() {
    let dir = scratch("replay-reports");
    let flows = [
        flows_dir().join("refund.json"),
        flows_dir().join("renamed-tool.json"),
        flows_dir().join("wrong-status.json"),
    ];
    let flow_args: Vec<&Path> = flows.iter().map(PathBuf::as_path).collect();
    let (page, junit) = (dir.join("replay.html"), dir.join("replay.xml"));
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .args(&flow_args)
        .args(["--json", "--html"])
        .arg(&page)
        .arg("--junit")
        .arg(&junit)
        .env("ATP_REFUND_SERVER", example_server("refund-server"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            run["toolcall"].clone(),
            run["command"].clone(),
            run["ok"].clone()
        ),
        (json!(1), json!("replay"), json!(true))
    );
    let flows = run["flows"].as_array().unwrap();
    assert_eq!(flows[0]["outcome"], "pass");
    assert_eq!(
        flows[0]["steps"][1]["input"]["order_id"], "ord_1042",
        "{}",
        flows[0]
    );
    // refund-server speaks both eras; the default, auto, takes the modern one.
    assert_eq!(
        (&flows[0]["protocol"], &flows[0]["protocol_version"]),
        (&json!("auto"), &json!("2026-07-28"))
    );
    assert_eq!(flows[1]["outcome"], "expected_failure");
    assert_eq!(flows[1]["failure"]["kind"], "unknown_tool");
    // A failed expect is data too: the page draws expected beside got.
    let failure = &flows[2]["failure"];
    assert_eq!(
        (
            &failure["kind"],
            &failure["pointer"],
            &failure["expected"],
            &failure["got"]
        ),
        (
            &json!("expectation"),
            &json!("/status"),
            &json!("refunded"),
            &json!("pending")
        )
    );
    let html = std::fs::read_to_string(&page).unwrap();
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(html.matches("<details class=\"result ").count(), 3);
    assert!(
        html.contains("<th>expected at <code>/status</code></th>"),
        "{html}"
    );
    assert!(html.contains("data-outcome=\"expected_failure\""));
    let xml = std::fs::read_to_string(&junit).unwrap();
    well_formed(&xml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(xml.matches("<skipped type=\"xfail\"").count(), 2, "{xml}");
}

/// The processes whose environment carries the mark of a server `toolcall` (pid `parent`)
/// started: the server and everything it started, in any process group.
#[cfg(target_os = "linux")]
fn marked_by(parent: u32) -> Vec<u32> {
    let needle = format!("TOOLCALL_MCP_SERVER={parent}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|&b| b == 0)
                    .any(|var| var.starts_with(needle.as_bytes()))
            })
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// The processes `parent` started, once there are `count` of them or `deadline` has passed.
#[cfg(target_os = "linux")]
fn marked_within(parent: u32, count: usize, deadline: std::time::Instant) -> Vec<u32> {
    let mut started = Vec::new();
    while started.len() < count && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        started = marked_by(parent);
    }
    started
}

/// Sends `SIG<signal>` to a running `toolcall replay`, which must exit 1 saying it was
/// interrupted and killed the server.
#[cfg(target_os = "linux")]
fn interrupted(child: std::process::Child, signal: &str) {
    let kill = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("interrupted (SIG{signal}); the server was killed")),
        "{text}"
    );
}

/// Waits up to five seconds for every one of `started` to be gone, and fails naming any left.
#[cfg(target_os = "linux")]
fn assert_all_gone(started: Vec<u32>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while started.iter().any(|p| alive(*p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left: Vec<u32> = started.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Running, not a zombie.
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// SIGTERM (what `timeout` and CI runners send) ends a replay as Ctrl-C does: the server and
/// what it started are killed and the report says why. It used to kill `toolcall` at once and
/// leave the server running.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_to_replay_kills_the_server_and_what_it_started() {
    let dir = scratch("sigterm");
    let flow = write(
        &dir,
        "hang.json",
        &json!({
            "server": {"command": example_server("fault-server"), "args": ["grandchild"]},
            "timeouts": {"initialize_ms": 30000, "call_ms": 60000},
            "calls": [{"name": "echo", "input": {"text": "hi"}}]
        })
        .to_string(),
    );
    let child = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .arg(&flow)
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = marked_within(
        child.id(),
        2,
        std::time::Instant::now() + std::time::Duration::from_secs(20),
    );
    assert!(started.len() >= 2, "the server and its sleep: {started:?}");
    // Give the replay time to reach the hanging call.
    std::thread::sleep(std::time::Duration::from_millis(500));
    interrupted(child, "TERM");
    assert_all_gone(started);
}

/// SIGHUP while a flow waits for the HTTP server it started to listen: the wait ends at once
/// (it used to run to the start-up timeout), and the server and what it started are killed.
#[cfg(target_os = "linux")]
#[test]
fn sighup_while_a_flow_waits_for_its_http_server_kills_it() {
    let dir = scratch("sighup-http");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    // A server that never listens, with a helper of its own.
    let flow = write(
        &dir,
        "never-listens.json",
        &json!({
            "server": {"command": "sh", "args": ["-c", "sleep 600 & sleep 600"],
                       "url": format!("http://127.0.0.1:{port}/mcp")},
            "timeouts": {"initialize_ms": 60000},
            "calls": [{"name": "echo", "input": {"text": "hi"}}]
        })
        .to_string(),
    );
    let started_at = std::time::Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .arg(&flow)
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = marked_within(
        child.id(),
        3,
        started_at + std::time::Duration::from_secs(20),
    );
    assert!(started.len() >= 3, "sh and its two sleeps: {started:?}");
    interrupted(child, "HUP");
    assert!(
        started_at.elapsed() < std::time::Duration::from_secs(30),
        "the wait ran on after the signal: {:?}",
        started_at.elapsed()
    );
    assert_all_gone(started);
}

/// `toolcall replay DIR` replays every flow below the folder, in path order, and ends with one
/// summary line.
#[test]
fn replay_of_a_folder_runs_each_flow_and_sums_up() {
    let dir = scratch("replay-folder");
    let flows = dir.join("flows/nested");
    std::fs::create_dir_all(&flows).unwrap();
    for name in ["refund.json", "renamed-tool.json"] {
        std::fs::copy(flows_dir().join(name), flows.join(name)).unwrap();
    }
    std::fs::write(dir.join("flows/notes.txt"), "not a flow").unwrap();
    let out = replay(&[&dir.join("flows")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("replayed 2 flow(s): 1 passed, 1 failed as expected, 0 failed"),
        "{text}"
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = replay(&[&empty]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds no flow (*.json)"),
        "{}",
        stderr(&out)
    );
}

/// A flow in `dir` naming the fault server in `mode`, with no calls: what `toolcall mcp` takes.
fn server_flow(dir: &Path, mode: &str) -> PathBuf {
    let flow = json!({
        "server": {"command": example_server("fault-server"), "args": [mode]},
        "calls": []
    });
    write(dir, &format!("{mode}.json"), &flow.to_string())
}

/// The catalog contract: `toolcall mcp snapshot` writes the server's catalog as a stable file;
/// `toolcall mcp diff` against a server whose catalog drifted prints every change by severity
/// and fails at --fail-on; `--write` accepts the drift, after which the diff is clean.
#[test]
fn mcp_snapshot_and_diff_gate_catalog_drift() {
    let dir = scratch("mcp-drift");
    let flow = |mode: &str| server_flow(&dir, mode);
    let (ok, drifted) = (flow("ok"), flow("drifted"));
    let snapshot = dir.join("catalog/fault-server.json");
    let out = toolcall(&[
        "mcp",
        "snapshot",
        ok.to_str().unwrap(),
        "--out",
        snapshot.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    assert_eq!(snap["tools"][0]["name"], "echo");
    let diff = |flow: &Path, extra: &[&str]| {
        toolcall(
            &[
                &[
                    "mcp",
                    "diff",
                    flow.to_str().unwrap(),
                    "--snapshot",
                    snapshot.to_str().unwrap(),
                ],
                extra,
            ]
            .concat(),
        )
    };
    let out = diff(&ok, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("the catalog matches"),
        "{}",
        stdout(&out)
    );
    let out = diff(&drifted, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for line in [
        "breaking (1):\n  breaking: `echo` now requires `text`",
        "security (1):\n  security: `echo_twice` was added, and may be destructive",
        // `destructiveHint: true` where none was: the spec's default, spelled out.
        "info (1):\n  info: `echo` wrote out a hint, the same by the spec's defaults",
        "FAILED: 1 change(s) at or above --fail-on breaking",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    assert_eq!(
        diff(&drifted, &["--fail-on", "security"]).status.code(),
        Some(1)
    );
    let out = diff(&drifted, &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = diff(&drifted, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("the catalog matches"));
}

/// `toolcall mcp snapshot` keeps the tools as the server wrote them, members rmcp's `Tool` does
/// not model included (`execution.taskSupport`, as `record`'s snapshot keeps it), so that a change
/// of one shows in `mcp diff`.
#[test]
fn mcp_snapshot_keeps_members_the_client_library_does_not_model() {
    let dir = scratch("mcp-raw");
    let (tasks, ok) = (server_flow(&dir, "tasks"), server_flow(&dir, "ok"));
    let snapshot = dir.join("catalog/tasks.json");
    let snapshot = snapshot.to_str().unwrap();
    let out = toolcall(&[
        "mcp",
        "snapshot",
        tasks.to_str().unwrap(),
        "--out",
        snapshot,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(snapshot).unwrap()).unwrap();
    assert_eq!(
        snap["tools"][0]["execution"],
        json!({"taskSupport": "optional"}),
        "{snap}"
    );
    // The same server diffs clean; one that dropped the member says so, path and values.
    let out = toolcall(&[
        "mcp",
        "diff",
        tasks.to_str().unwrap(),
        "--snapshot",
        snapshot,
    ]);
    assert!(
        stdout(&out).contains("the catalog matches"),
        "{}",
        stdout(&out)
    );
    // Unset is `forbidden`: a client that called it as a task now fails.
    let out = toolcall(&["mcp", "diff", ok.to_str().unwrap(), "--snapshot", snapshot]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "breaking: `echo` no longer runs as a task (a task-augmented call fails) \
             (execution.taskSupport: \"optional\" -> unset)"
        ),
        "{}",
        stdout(&out)
    );
}

/// A server that lists its sets in another order at every start (`required`, `enum`, a list of
/// `type`s, the tools themselves) snapshots to the same file every time.
#[test]
fn mcp_snapshots_of_a_reordering_server_are_one_file() {
    let dir = scratch("mcp-canonical");
    let mut files = Vec::new();
    for seed in ["0", "1", "2"] {
        let flow = json!({
            "server": {"command": example_server("fault-server"), "args": ["shuffled"],
                       "env": {"ATP_FAULT_SEED": seed}},
            "calls": []
        });
        let flow = write(&dir, &format!("shuffled-{seed}.json"), &flow.to_string());
        let snapshot = dir.join(format!("catalog/shuffled-{seed}.json"));
        let out = toolcall(&[
            "mcp",
            "snapshot",
            "--out",
            snapshot.to_str().unwrap(),
            flow.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = std::fs::read_to_string(&snapshot).unwrap();
        // Each names its own flow; the catalog is what must be the same.
        let mut snap: Value = serde_json::from_str(&text).unwrap();
        snap.as_object_mut().unwrap().remove("flow");
        files.push(toolcall_score::to_json_pretty(&snap).unwrap());
    }
    assert!(files[0].contains("\"pick\""), "{}", files[0]);
    assert_eq!(files[0], files[1]);
    assert_eq!(files[1], files[2]);
}

/// `toolcall mcp coverage`: the tools of a catalog no flow calls, those that are called with
/// their flows, and called names the catalog lacks; a folder of flows counts as its flows, each
/// flow's own snapshot serves when --snapshot is not given, and --fail-under gates.
#[test]
fn mcp_coverage_names_the_tools_no_flow_calls() {
    let dir = scratch("mcp-coverage");
    for sub in ["catalog", "flows"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
    let snapshot = write(
        &dir,
        "catalog/files.json",
        &json!({"tools": [tool("read"), tool("write"), tool("delete")]}).to_string(),
    );
    let flow = |name: &str, calls: &[&str]| {
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| json!({"name": c, "input": {}}))
            .collect();
        // An unset variable does not stop coverage: it never starts the server, nor connects
        // to one (a URL from a variable is not checked for its form).
        let server = if name == "a" {
            json!({"command": "${ATP_COVERAGE_UNSET}"})
        } else {
            json!({"url": "${ATP_COVERAGE_UNSET_URL}"})
        };
        let text = json!({"server": server, "snapshot": "../catalog/files.json", "calls": calls});
        write(&dir, &format!("flows/{name}.json"), &text.to_string())
    };
    flow("a", &["read", "wirte"]);
    flow("b", &["read", "write"]);
    let flows = dir.join("flows");
    let out = toolcall(&["mcp", "coverage", flows.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let (a, b) = (flows.join("a.json"), flows.join("b.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for line in [
        "2 of 3 tool(s) called by 2 flow(s) (67%)\n".to_owned(),
        "  uncalled  `delete`\n".to_owned(),
        format!("  called    `read`: {a}, {b}\n"),
        format!("  called    `write`: {b}\n"),
        format!("  unknown   `wirte`: {a} (not in the catalog)\n"),
    ] {
        assert!(text.contains(&line), "missing {line:?} in:\n{text}");
    }
    let out = toolcall(&[
        "mcp",
        "coverage",
        "--snapshot",
        snapshot.to_str().unwrap(),
        b,
        "--fail-under",
        "100",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("2 of 3 tool(s) called by 1 flow(s) (67%)"),
        "{text}"
    );
    assert!(
        text.contains("FAILED: the flows call less than --fail-under 100%"),
        "{text}"
    );
}

/// `toolcall mcp` without a flow: the server named on the command line (`-- COMMAND ARGS…` or
/// `--url`). The snapshot names no flow (there is none to name), and the accept command it
/// suggests repeats the server as given.
#[test]
fn mcp_commands_take_a_server_on_the_command_line() {
    let dir = scratch("mcp-spec");
    let server = example_server("fault-server");
    let server = server.to_str().unwrap();
    let snapshot = dir.join("fault.json");
    let snapshot = snapshot.to_str().unwrap();
    let out = toolcall(&["mcp", "snapshot", "--out", snapshot, "--", server, "ok"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(snapshot).unwrap()).unwrap();
    assert_eq!(snap["tools"][0]["name"], "echo");
    assert_eq!(snap.get("flow"), None, "{snap}");

    let out = toolcall(&[
        "mcp",
        "diff",
        "--snapshot",
        snapshot,
        "--",
        server,
        "drifted",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!(
            "to accept them: toolcall mcp diff --snapshot {snapshot} --write -- {server} drifted"
        )),
        "{text}"
    );

    let out = toolcall(&["mcp", "probe", "--", server, "null-crash"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("CRASH  `echo` with `text` null"),
        "{}",
        stdout(&out)
    );

    // Nothing listens on port 9 of the loopback: a clear failure naming the target.
    let out = toolcall(&[
        "mcp",
        "snapshot",
        "--out",
        snapshot,
        "--url",
        "http://127.0.0.1:9/mcp",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("error: --url http://127.0.0.1:9/mcp: initialize: "),
        "{}",
        stderr(&out)
    );
    // A flow and a command at once is a usage error.
    let out = toolcall(&["mcp", "probe", "flow.json", "--", server, "ok"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `toolcall mcp probe`: a server that refuses what its schema forbids passes; one that accepts
/// it, or crashes on a null, is named with the tool and the input, and the probing goes on
/// after a crash.
#[test]
fn mcp_probe_finds_what_a_server_should_have_refused() {
    let dir = scratch("mcp-probe");
    let flow = |mode: &str| server_flow(&dir, mode);
    let probe = |mode: &str| {
        toolcall(&[
            "mcp",
            "probe",
            flow(mode).to_str().unwrap(),
            "--call-timeout",
            "5",
        ])
    };
    let out = probe("null-crash");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("CRASH  `echo` with `text` null: {\"text\":null} killed the server"),
        "{text}"
    );
    assert!(
        text.contains("ok     `echo` with `text` of the wrong type: refused"),
        "probing went on: {text}"
    );
    let out = probe("lax");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for accepted in [
        "ACCEPT `echo` with `text` past its maxLength",
        "ACCEPT `echo` with `count` above its maximum",
        "ACCEPT `echo` with a property it does not list",
    ] {
        assert!(text.contains(accepted), "missing {accepted:?}:\n{text}");
    }
    assert!(
        text.contains("ok     `echo` without the required `text`: refused"),
        "{text}"
    );
    // The refund server refuses everything its schemas forbid.
    let refund = write(
        &dir,
        "refund.json",
        &json!({"server": {"command": example_server("refund-server")}, "calls": []}).to_string(),
    );
    let out = toolcall(&["mcp", "probe", refund.to_str().unwrap()]);
    assert!(
        stdout(&out).contains("probe(s) of"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// A server that refuses every call (Playwright MCP without its browser) passed the probe, each
/// bad input "refused as it should be", exit 0. The control call with a valid input comes first
/// now: refused, the tool's other refusals are marked as proving nothing, and a server whose
/// every tool refuses its control call is a finding.
/// A tool without annotations (destructive by the spec's defaults) gets no control call unless
/// --include-destructive, and the output says so; a flow's call of a tool is its valid input.
#[test]
fn mcp_probe_fails_a_server_that_refuses_valid_input() {
    let dir = scratch("mcp-probe-refuse-all");
    let flow = server_flow(&dir, "refuse-all");
    let out = toolcall(&["mcp", "probe", flow.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "note   `echo` with a valid input: {\"text\":\"x\"} was refused (isError: Browser \
             is not installed"
        ),
        "{text}"
    );
    assert!(
        text.contains("REFUSE the server refused every valid-input control call"),
        "{text}"
    );
    assert!(
        text.contains("moot   `echo` without the required `text`: refused"),
        "{text}"
    );
    assert!(
        text.contains(": 0 valid input(s) answered, 0 refused as they should be, 1 finding(s); "),
        "{text}"
    );
    // A flow's call of the tool is the valid input.
    let called = write(
        &dir,
        "called.json",
        &json!({
            "server": {"command": example_server("fault-server"), "args": ["refuse-all"]},
            "calls": [{"name": "echo", "input": {"text": "hello"}}]
        })
        .to_string(),
    );
    let out = toolcall(&["mcp", "probe", called.to_str().unwrap()]);
    assert!(
        stdout(&out).contains(
            "REFUSE `echo` with the valid input of the flow's call: {\"text\":\"hello\"} was refused"
        ),
        "{}",
        stdout(&out)
    );
    // `ok` lists `echo` without annotations: no control call unless asked, and said so.
    let ok = server_flow(&dir, "ok");
    let out = toolcall(&["mcp", "probe", ok.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("nocall `echo`: no valid-input control call")
            && text.contains("1 tool(s) without a control call"),
        "{text}"
    );
    let ok_called = write(
        &dir,
        "ok-called.json",
        &json!({
            "server": {"command": example_server("fault-server"), "args": ["ok"]},
            "calls": [{"name": "echo", "input": {"text": "hi"}}]
        })
        .to_string(),
    );
    let out = toolcall(&[
        "mcp",
        "probe",
        ok_called.to_str().unwrap(),
        "--include-destructive",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("ok     `echo` with the valid input of the flow's call: answered: ")
            && text.contains(": 1 valid input(s) answered, "),
        "{text}"
    );
}

/// The probes that were missing: exclusive bounds (pydantic's `gt=`), `pattern`, `minLength`,
/// `minItems`, a nested object's members and an array's items; a server that declares them and
/// checks none is named for each. `--runs N --seed S` adds random inputs, the same for a seed,
/// and the output names the seed to make them again.
#[test]
fn mcp_probe_breaks_every_constraint_and_random_runs_repeat() {
    let dir = scratch("mcp-probe-deep");
    let flow = server_flow(&dir, "lax-deep");
    let flow = flow.to_str().unwrap();
    let out = toolcall(&["mcp", "probe", flow]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    for accepted in [
        "ACCEPT `echo` with `count` at its exclusive minimum: {\"count\":0,\"text\":\"xx\"}",
        "ACCEPT `echo` with `code` not matching its pattern: {\"code\":\"!\",\"text\":\"xx\"}",
        "ACCEPT `echo` with `text` short of its minLength: {\"text\":\"x\"}",
        "ACCEPT `echo` with `tags` short of its minItems: {\"tags\":[],\"text\":\"xx\"}",
        "ACCEPT `echo` with `tags[0]` of the wrong type: {\"tags\":[12345],\"text\":\"xx\"}",
        "ACCEPT `echo` without the required `options.depth`: {\"options\":{},\"text\":\"xx\"}",
        "ACCEPT `echo` with `options.depth` of the wrong type",
    ] {
        assert!(text.contains(accepted), "missing {accepted:?}:\n{text}");
    }
    let random = |seed: &str| {
        let out = toolcall(&["mcp", "probe", flow, "--runs", "12", "--seed", seed]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stdout(&out)
    };
    let first = random("7");
    assert!(
        first.contains("`echo` with random input #12")
            && first.contains("random inputs from seed 7 (--runs 12 --seed 7 makes them again)"),
        "{first}"
    );
    assert_eq!(first, random("7"), "the same seed makes the same inputs");
    assert_ne!(first, random("8"), "another seed, other inputs");
    let out = toolcall(&["mcp", "probe", flow, "--runs", "2"]);
    assert!(
        stdout(&out).contains("random inputs from seed "),
        "a seed from the clock is named: {}",
        stdout(&out)
    );
}

/// `--max-message-bytes`, which a too-long message's error advises, is taken by every command
/// that reads a server: a catalog page over the 4 MiB default fails `snapshot`, `diff` and
/// `probe` with that advice, and passes each of them with the limit raised.
#[test]
fn mcp_commands_take_the_message_limit_they_advise() {
    let dir = scratch("mcp-message-limit");
    let flow = server_flow(&dir, "big-catalog");
    let flow = flow.to_str().unwrap();
    let snapshot = dir.join("catalog/big.json");
    let snapshot = snapshot.to_str().unwrap();
    let raised = ["--max-message-bytes", "8000000"];
    let out = toolcall(&["mcp", "snapshot", flow, "--out", snapshot]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("raise the limit with --max-message-bytes"),
        "{}",
        stderr(&out)
    );
    let commands: [&[&str]; 3] = [
        &["mcp", "snapshot", flow, "--out", snapshot],
        &["mcp", "diff", flow, "--snapshot", snapshot],
        &["mcp", "probe", flow],
    ];
    for command in commands {
        let out = toolcall(&[command, &raised[..]].concat());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(snapshot).unwrap()).unwrap();
    assert_eq!(snap["tools"][0]["name"], "echo");
    let out = toolcall(&["mcp", "diff", flow, "--snapshot", snapshot]);
    assert!(
        stderr(&out).contains("raise the limit with --max-message-bytes"),
        "{}",
        stderr(&out)
    );
}

/// A server decides how many probes its schema plans (3,000 properties: 9,002, each a copy of
/// 3,000 arguments; made all at once they took 3.2 GB): the probes are made one at a time and
/// at most `--max-probes-per-tool` run, the output saying how many more there were.
#[test]
fn mcp_probe_of_a_wide_schema_is_capped_and_says_so() {
    let dir = scratch("mcp-probe-wide");
    let flow = server_flow(&dir, "wide");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(toolcall(&["mcp", "probe", flow.to_str().unwrap()]));
    });
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the probe of a wide schema did not end within 120 s");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("cap    `echo`: 100 of its 9002 probes ran")
            && text.contains("--max-probes-per-tool"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
    assert!(
        text.contains("\n100 probe(s) of 1 tool(s)"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
}

/// An MCP server behind OAuth refuses with 401 and a `WWW-Authenticate` challenge naming its
/// protected resource metadata (403 and `insufficient_scope` for a token without the scope):
/// every command that connects over HTTP printed only rmcp's "Auth required" / "Insufficient
/// scope"; each prints the status, the challenge, its `resource_metadata` and the body.
#[test]
fn an_oauth_refusal_shows_its_status_challenge_and_body() {
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let dir = scratch("http-oauth");
    let mut server = Killed(
        Command::new(example_server("fault-server"))
            .arg("http-oauth")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.take().unwrap()),
        &mut port,
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource",
        port.trim()
    );
    let flow = write(
        &dir,
        "flow.json",
        &json!({"server": {"url": url}, "calls": [{"name": "echo", "input": {}}]}).to_string(),
    );
    let snapshot = write(&dir, "snapshot.json", "{}");
    let out_path = dir.join("out.json");
    let flow = flow.to_str().unwrap();
    let runs: [Vec<&str>; 4] = [
        vec!["replay", flow],
        vec!["mcp", "snapshot", flow, "--out", out_path.to_str().unwrap()],
        vec![
            "mcp",
            "diff",
            flow,
            "--snapshot",
            snapshot.to_str().unwrap(),
        ],
        vec!["mcp", "probe", "--url", &url],
    ];
    for words in &runs {
        let out = toolcall(words);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_ne!(
            out.status.code(),
            Some(0),
            "toolcall {}: {said}",
            words.join(" ")
        );
        for part in [
            "the server answered HTTP 401 Unauthorized with WWW-Authenticate: Bearer \
             error=\"invalid_token\"",
            &format!("(its OAuth protected resource metadata: {metadata})"),
            "the body: {\"error\":\"invalid_token\",\"error_description\":\"the access token expired\"}",
        ] {
            assert!(
                said.contains(part),
                "toolcall {}: no {part:?} in {said}",
                words.join(" ")
            );
        }
    }
    let scoped = write(
        &dir,
        "scoped.json",
        &json!({"server": {"url": url, "headers": {"Authorization": "Bearer low-scope"}},
                "calls": [{"name": "echo", "input": {}}]})
        .to_string(),
    );
    let out = toolcall(&["replay", scoped.to_str().unwrap()]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains(
            "HTTP 403 Forbidden with WWW-Authenticate: Bearer error=\"insufficient_scope\""
        ) && said.contains("the token lacks tools:call"),
        "{said}"
    );
}

/// A streamable HTTP server that refuses the connection is named so, by every command that
/// reaches one: reqwest's own message ("error sending request for url") never said why.
#[test]
fn a_refused_http_connection_says_connection_refused() {
    let dir = scratch("http-refused");
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let flow = write(
        &dir,
        "flow.json",
        &json!({"server": {"url": url}, "calls": [{"name": "echo", "input": {}}]}).to_string(),
    );
    let snapshot = write(&dir, "snapshot.json", "{}");
    let flow = flow.to_str().unwrap();
    let out_path = dir.join("out.json");
    let runs: [Vec<&str>; 4] = [
        vec!["replay", flow],
        vec![
            "mcp",
            "snapshot",
            "--url",
            &url,
            "--out",
            out_path.to_str().unwrap(),
        ],
        vec![
            "mcp",
            "diff",
            "--url",
            &url,
            "--snapshot",
            snapshot.to_str().unwrap(),
        ],
        vec!["mcp", "probe", "--url", &url],
    ];
    for words in &runs {
        let out = toolcall(words);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_ne!(
            out.status.code(),
            Some(0),
            "toolcall {}: {said}",
            words.join(" ")
        );
        assert!(
            said.contains("connection refused"),
            "toolcall {}: {said}",
            words.join(" ")
        );
    }
}

/// `replay --strict` fails a flow on what breaks the stdio transport (a stray stdout line after
/// the last answer, a response to no request), in its exit code and in `--json` alike, and
/// never on output on stderr: the transport lets a server log there, and most real ones do
/// (it failed every flow of server-everything's). Without `--strict` each is a note.
#[test]
fn replay_strict_fails_on_a_broken_transport_never_on_stderr() {
    let dir = scratch("replay-strict");
    let flow = |mode: &str| {
        let flow = json!({
            "server": {"command": example_server("fault-server"), "args": [mode]},
            "calls": [{"name": "echo", "input": {"text": "hi"}, "expect": {"/text": "hi"}}]
        });
        write(&dir, &format!("{mode}.json"), &flow.to_string())
    };
    let replay = |flow: &Path, extra: &[&str]| {
        toolcall(&[&["replay", flow.to_str().unwrap()], extra].concat())
    };
    for (mode, kind) in [
        ("stray-at-exit", "stray_stdout"),
        ("wrong-id", "unknown_id"),
    ] {
        let path = flow(mode);
        let out = replay(&path, &[]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stdout(&out));
        assert!(stdout(&out).contains("note: session: "), "{}", stdout(&out));
        let out = replay(&path, &["--strict"]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{mode}: {text}");
        assert!(text.contains("finding: session: "), "{text}");
        assert!(
            text.contains("the session check found 1 thing(s) (--strict)"),
            "{text}"
        );
        let report = toolcall_json(&["replay", path.to_str().unwrap(), "--strict", "--json"], 1);
        let run = &report["flows"][0];
        assert_eq!(run["outcome"], "failure", "{run:#}");
        assert_eq!(run["failure"]["kind"], "session", "{run:#}");
        assert_eq!(run["session"][0]["kind"], kind, "{run:#}");
        assert_eq!(run["session"][0]["fails"], true, "{run:#}");
    }
    let path = flow("stderr-flood");
    let out = replay(&path, &["--strict"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("note: session: the server wrote "), "{text}");
    let report = toolcall_json(&["replay", path.to_str().unwrap(), "--strict", "--json"], 0);
    let run = &report["flows"][0];
    assert_eq!(run["outcome"], "pass", "{run:#}");
    assert_eq!(run["session"][0]["kind"], "stderr", "{run:#}");
    assert_eq!(run["session"][0]["fails"], false, "{run:#}");
}

/// An input made from a schema alone can be wrong in a way the schema does not say: a file
/// server refuses `read_file {"path": "x"}` (outside the folders it serves), as the reference
/// filesystem server does. That refusal is a note that the tool's refusals prove nothing, not a
/// finding, while another tool answers its control call; a flow's call of the tool is the
/// control input, but not one that must fail, is skipped or is filled in from another step.
#[test]
fn mcp_probe_takes_a_refused_made_up_input_as_unproven_not_as_a_finding() {
    let dir = scratch("mcp-probe-folder");
    let flow = |name: &str, calls: Value| {
        let flow = json!({
            "server": {"command": example_server("fault-server"), "args": ["folder"]},
            "calls": calls
        });
        write(&dir, name, &flow.to_string())
    };
    let made_up = flow("made-up.json", json!([]));
    let out = toolcall(&["mcp", "probe", made_up.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "note   `read_file` with a valid input: {\"path\":\"x\"} was refused (isError: \
             Access denied"
        ),
        "{text}"
    );
    assert!(
        text.contains("ok     `echo` with a valid input: answered"),
        "{text}"
    );
    assert!(text.contains(", 0 finding(s); "), "{text}");
    assert!(
        !text.contains("refused every valid-input control call"),
        "{text}"
    );

    // A call that must be refused, or a skipped one, is not a valid input: the made-up one is
    // used. The flow's good call is.
    let calls = json!([
        {"name": "read_file", "input": {"path": "/etc/passwd"}, "expect_error": "any"},
        {"name": "read_file", "input": {"path": "/srv/${NOT_SET}"}, "skip": "later"},
        {"name": "read_file", "input": {"path": "/srv/a.txt"}}
    ]);
    let good = flow("good.json", calls);
    let out = toolcall(&["mcp", "probe", good.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("ok     `read_file` with the valid input of the flow's call: answered"),
        "{text}"
    );
    let refused = flow(
        "refused.json",
        json!([{"name": "read_file", "input": {"path": "/etc/passwd"}, "expect_error": "any"}]),
    );
    let out = toolcall(&["mcp", "probe", refused.to_str().unwrap()]);
    assert!(
        stdout(&out).contains("note   `read_file` with a valid input: {\"path\":\"x\"}"),
        "{}",
        stdout(&out)
    );
}

/// `replay --update` that cannot write one flow (its file changed under the replay: here the
/// server's own start rewrites it) says so for that flow, replays the rest, writes every report
/// and exits 2 — a write error does not end the run before the reports.
#[test]
fn replay_update_goes_on_past_a_flow_it_cannot_write() {
    let dir = scratch("replay-update-error");
    let refund = example_server("refund-server");
    let refund = refund.to_str().unwrap();
    let call = json!({"name": "get_ledger", "input": {}, "verify": true});
    let broken = dir.join("broken.json");
    let server = json!({"command": "sh",
        "args": ["-c", "printf '{}' > \"$0\"; exec \"$1\"", broken.to_str().unwrap(), refund]});
    write(
        &dir,
        "broken.json",
        &json!({"server": server, "calls": [call]}).to_string(),
    );
    let fine = write(
        &dir,
        "fine.json",
        &json!({"server": {"command": refund}, "calls": [call]}).to_string(),
    );
    let junit = dir.join("junit.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(["replay", "--update", "--junit"])
        .arg(&junit)
        .arg(&broken)
        .arg(&fine)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}{err}");
    assert!(
        text.contains("not updated:") && text.contains("broken.json"),
        "{text}{err}"
    );
    assert!(err.contains("no such step"), "{err}");
    // The other flow was replayed and written, and the report names both.
    let fine_text = std::fs::read_to_string(&fine).unwrap();
    assert!(fine_text.contains("\"recorded\""), "{fine_text}");
    let report = std::fs::read_to_string(&junit).expect("the JUnit report is written");
    assert!(
        report.contains("broken.json") && report.contains("fine.json"),
        "{report}"
    );
}

/// `replay --json`: the failing step's `input` is what was sent, `${steps.…}` filled in (as a
/// step that passed shows it) — not the flow's template.
#[test]
fn replay_json_failure_input_is_what_was_sent() {
    let dir = scratch("replay-failure-input");
    let flow = write(
        &dir,
        "f.json",
        &json!({"server": {"command": "${ATP_REFUND_SERVER}"}, "calls": [
            {"id": "find", "name": "search_orders", "input": {"customer_email": "ada@example.com"}},
            {"name": "issue_refund",
             "input": {"order_id": "${steps.find.result.orders.0.order_id}", "amount_cents": 1,
                       "reason": "r"},
             "expect": {"/status": "not-a-status"}}]})
        .to_string(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(["replay", "--json"])
        .arg(&flow)
        .env("ATP_REFUND_SERVER", example_server("refund-server"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let flow = &run["flows"][0];
    assert_eq!(flow["failure"]["step"], 2, "{flow:#}");
    assert_eq!(flow["failure"]["input"]["order_id"], "ord_1042", "{flow:#}");
}
