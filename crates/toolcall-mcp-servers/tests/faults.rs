//! Replays against the deliberately broken servers of `fault-server`: each fault must end the
//! replay with its own clear failure, within its timeout, and leave no process behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use libtest_mimic::Trial;
use serde_json::{json, Value};
use toolcall_mcp::{replay_blocking, EnvVars, FailureKind, Flow, Options, Report};

/// Every test of this module, each a trial `faults::<name>` (a test left out of the list is
/// dead code, which the lints refuse).
pub(crate) fn trials() -> Vec<Trial> {
    trials!(
        "faults",
        a_well_behaved_server_passes_and_exits_on_its_own,
        exit_before_initialize,
        an_exit_is_seen_though_a_grandchild_holds_stdout_open,
        never_answers_initialize,
        hangs_on_a_call,
        a_junk_line_on_stdout_is_quoted,
        text_glued_to_a_response_is_diagnosed_not_a_timeout,
        a_flood_on_stderr_does_not_block_the_server,
        the_stderr_tail_comes_with_a_failure,
        structured_content_is_checked_against_the_output_schema,
        a_result_over_the_limit_is_named,
        a_result_under_a_raised_limit_goes_through,
        a_crash_mid_flow_names_the_step_and_exit_code,
        a_missing_command_is_a_start_failure,
        the_child_gets_the_parent_environment_plus_the_flow_env_and_a_relative_cwd,
        what_the_server_started_dies_with_it,
        a_daemon_the_server_started_dies_with_it_too,
        a_failed_replay_times_what_it_reached,
        a_secret_from_the_environment_is_masked_everywhere,
        a_call_may_expect_to_be_refused,
        text_and_media_results_are_shown_and_checked,
        an_http_server_is_reached_with_a_bearer_token_from_the_environment,
        a_flow_starts_its_http_server_and_kills_it,
        each_protocol_era_is_spoken_as_pinned_and_named,
        a_legacy_server_is_reached_under_auto_and_refused_under_modern,
        auto_starts_again_with_initialize_when_discovery_kills_the_server,
        auto_starts_a_server_that_exits_at_start_once,
        auto_answers_for_a_legacy_server_silent_on_discover_and_hides_its_noise,
        auto_does_not_take_a_server_slow_to_start_for_legacy,
        auto_remembers_the_era_a_server_spoke_last,
        a_flow_naming_a_snapshot_fails_on_catalog_drift,
        an_input_required_result_is_answered_from_the_flow_as_one_call,
        a_call_to_an_undeclared_name_that_must_be_refused_is_sent,
    )
}

const FAULT_SERVER: &str = env!("CARGO_BIN_EXE_fault-server");

/// Timeouts for waits that are expected to end on their own: generous, so a loaded CI machine
/// cannot turn a slow start (or the 10 MB result of a debug build) into a spurious timeout.
const PATIENT_MS: u64 = 30_000;
/// The timeout of the wait under test, in the tests where the server never answers.
const SHORT_MS: u64 = 1500;

fn flow_in(dir: &Path, server: Value, calls: Value) -> Flow {
    flow_with_timeouts(dir, server, calls, PATIENT_MS, PATIENT_MS)
}

fn flow_with_timeouts(
    dir: &Path,
    server: Value,
    calls: Value,
    initialize_ms: u64,
    call_ms: u64,
) -> Flow {
    let text = json!({
        "server": server,
        "timeouts": {"initialize_ms": initialize_ms, "call_ms": call_ms},
        "calls": calls,
    })
    .to_string();
    Flow::from_json_str(&text, Path::new("fault.json"), dir, &EnvVars).expect("a valid flow")
}

fn fault_flow(mode: &str, calls: Value) -> Flow {
    fault_flow_with_timeouts(mode, calls, PATIENT_MS, PATIENT_MS)
}

fn fault_flow_with_timeouts(mode: &str, calls: Value, initialize_ms: u64, call_ms: u64) -> Flow {
    flow_with_timeouts(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        json!({"command": FAULT_SERVER, "args": [mode]}),
        calls,
        initialize_ms,
        call_ms,
    )
}

fn big_result_flow() -> Flow {
    fault_flow("big-result", echo(1))
}

fn echo(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"name": "echo", "input": {"text": format!("hi {i}")}}))
            .collect(),
    )
}

/// Replays, then proves the server process is gone (reaped, not a zombie, not orphaned).
fn run_with(flow: &Flow, options: &Options) -> Report {
    let report = replay_blocking(flow, options, &mut |_| {});
    let pid = report.server_pid.expect("the server was started");
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    assert!(
        !proc_dir.exists(),
        "server process {pid} is still in the process table after the replay: {}",
        std::fs::read_to_string(proc_dir.join("status")).unwrap_or_default()
    );
    report
}

fn run(flow: &Flow) -> Report {
    run_with(flow, &Options::default())
}

fn failure(report: &Report) -> (FailureKind, String) {
    let failure = report
        .failure
        .as_ref()
        .unwrap_or_else(|| panic!("expected a failure, got: {}", report.summary()));
    (failure.kind, failure.to_string())
}

/// Generous bound: the point is that the replay ended by itself, not how fast.
fn assert_bounded(report: &Report) {
    assert!(
        report.total < Duration::from_secs(10),
        "the replay took {:?}",
        report.total
    );
}

fn a_well_behaved_server_passes_and_exits_on_its_own() {
    let report = run(&fault_flow("ok", echo(3)));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.steps.len(), 3);
    assert_eq!(report.steps[2].result["text"], "hi 2");
    // Closing stdin was enough: it was not killed.
    assert_eq!(report.exit_status.and_then(|s| s.code()), Some(0));
}

fn exit_before_initialize() {
    let report = run(&fault_flow("exit-before-init", echo(1)));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Exited,
            "initialize: the server exited (exit code 3)".to_owned()
        )
    );
    assert_eq!(
        report.stderr_tail,
        ["fault-server: missing configuration, exiting before initialize"]
    );
}

/// A server that dies while a child it started still holds its stdout: the pipe never closes,
/// so only the server's own exit says it is gone. It used to be reported as "did not answer
/// initialize" once the whole initialize timeout had passed.
fn an_exit_is_seen_though_a_grandchild_holds_stdout_open() {
    let report = run(&fault_flow_with_timeouts(
        "exit-leaving-grandchild",
        echo(1),
        20_000,
        20_000,
    ));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Exited,
            "initialize: the server exited (exit code 4)".to_owned()
        )
    );
}

fn never_answers_initialize() {
    let report = run(&fault_flow_with_timeouts(
        "no-init",
        echo(1),
        SHORT_MS,
        PATIENT_MS,
    ));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Timeout,
            "initialize: the server did not answer initialize within 1.5 s".to_owned()
        )
    );
    assert_bounded(&report);
}

fn hangs_on_a_call() {
    let report = run(&fault_flow_with_timeouts(
        "hang-on-call",
        echo(2),
        PATIENT_MS,
        SHORT_MS,
    ));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Timeout,
            "step 1: echo: the tool did not answer within 1.5 s".to_owned()
        )
    );
    assert_bounded(&report);
}

fn a_junk_line_on_stdout_is_quoted() {
    let report = run(&fault_flow("junk-line", echo(1)));
    assert_eq!(
        failure(&report),
        (
            FailureKind::NotJsonRpc,
            "initialize: the server printed a line that is not JSON-RPC to stdout: \
             \"fault-server 1.0 listening on stdio\" (log to stderr instead)"
                .to_owned()
        )
    );
    assert_bounded(&report);
}

fn text_glued_to_a_response_is_diagnosed_not_a_timeout() {
    let report = run(&fault_flow("junk-glued", echo(1)));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Glued,
            "initialize: the server printed \"loading tools...\" to stdout without a newline, \
             glued to the JSON-RPC message after it (log to stderr instead)"
                .to_owned()
        )
    );
    assert_bounded(&report);
}

fn a_flood_on_stderr_does_not_block_the_server() {
    let report = run(&fault_flow("stderr-flood", echo(2)));
    assert!(report.passed(), "{:?}", report.failure);
    assert!(report.stderr_bytes > 2_000_000, "{}", report.stderr_bytes);
    assert_eq!(
        report.stderr_tail.last().map(String::as_str),
        Some("fault-server: flood done")
    );
}

fn the_stderr_tail_comes_with_a_failure() {
    let report = run(&fault_flow(
        "stderr-flood",
        json!([{"name": "echo_all", "input": {}}]),
    ));
    assert_eq!(
        failure(&report),
        (
            FailureKind::UnknownTool,
            "step 1: echo_all: not a tool the server lists (1 tool: echo); did you mean echo?"
                .to_owned()
        )
    );
    assert_eq!(report.stderr_tail.len(), 20);
    assert_eq!(report.stderr_tail[19], "fault-server: flood done");
    assert!(report.stderr_tail[0].starts_with("fault-server: debug: xxx"));
}

/// A tool that declares an `outputSchema` must answer with `structuredContent` that matches it;
/// the `ok` mode's results match theirs, so every passing fault test checks the positive side.
fn structured_content_is_checked_against_the_output_schema() {
    let report = run(&fault_flow("ok", echo(1)));
    assert!(report.passed(), "{:?}", report.failure);

    let (kind, message) = failure(&run(&fault_flow("output-mismatch", echo(1))));
    assert_eq!(kind, FailureKind::InvalidOutput, "{message}");
    assert!(
        message.starts_with(
            "step 1: echo: the structuredContent does not match the tool's outputSchema: "
        ) && message.contains("echoed"),
        "{message}"
    );

    assert_eq!(
        failure(&run(&fault_flow("output-missing", echo(1)))),
        (
            FailureKind::InvalidOutput,
            "step 1: echo: the tool declares an outputSchema, but its result has no structuredContent"
                .to_owned()
        )
    );
}

fn a_result_over_the_limit_is_named() {
    let report = run(&big_result_flow());
    assert_eq!(
        failure(&report),
        (
            FailureKind::TooLarge,
            "step 1: echo: the server sent a message longer than 4194304 bytes \
             (raise the limit with --max-message-bytes)"
                .to_owned()
        )
    );
    assert_bounded(&report);
}

fn a_result_under_a_raised_limit_goes_through() {
    let options = Options {
        max_message_bytes: 12 * 1000 * 1000,
        ..Options::default()
    };
    let report = run_with(&big_result_flow(), &options);
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(
        report.steps[0].result.as_str().map(str::len),
        Some(10 * 1000 * 1000)
    );
}

fn a_crash_mid_flow_names_the_step_and_exit_code() {
    let report = run(&fault_flow("crash-mid-flow", echo(3)));
    assert_eq!(
        failure(&report),
        (
            FailureKind::Exited,
            "step 2: echo: the server exited (exit code 101)".to_owned()
        )
    );
    assert_eq!(report.steps.len(), 1);
    assert_eq!(
        report.stderr_tail,
        ["fault-server: segfault in call 2 (simulated)"]
    );
}

fn a_missing_command_is_a_start_failure() {
    let flow = flow_in(
        Path::new("/nonexistent-dir"),
        json!({"command": "./no-such-server"}),
        echo(1),
    );
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    assert_eq!(report.server_pid, None);
    assert_eq!(
        failure(&report),
        (
            FailureKind::Start,
            "initialize: cannot start the server `/nonexistent-dir/./no-such-server` \
             (in /nonexistent-dir): No such file or directory (os error 2)"
                .to_owned()
        )
    );
}

fn the_child_gets_the_parent_environment_plus_the_flow_env_and_a_relative_cwd() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let flow = flow_in(
        dir,
        json!({"command": FAULT_SERVER, "args": ["ok"], "cwd": "src",
               "env": {"ATP_FLOW_VAR": "from the flow"}}),
        echo(1),
    );
    let report = run(&flow);
    assert!(report.passed(), "{:?}", report.failure);
    let seen = &report.steps[0].result;
    assert_eq!(seen["flow_var"], "from the flow");
    assert_eq!(
        seen["path"].as_str(),
        std::env::var("PATH").ok().as_deref(),
        "PATH is inherited"
    );
    assert_eq!(
        seen["cwd"].as_str().map(PathBuf::from),
        Some(dir.join("src").canonicalize().unwrap())
    );
}

/// Whether a process is still running (a zombie waiting for init to reap it is not).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn what_the_server_started_dies_with_it() {
    assert_the_grandchild_dies("grandchild");
}

fn a_daemon_the_server_started_dies_with_it_too() {
    // Its own process group and init for a parent: only the environment mark still says whose.
    assert_the_grandchild_dies("escaped-grandchild");
}

fn assert_the_grandchild_dies(mode: &str) {
    let report = run(&fault_flow_with_timeouts(
        mode,
        echo(1),
        PATIENT_MS,
        SHORT_MS,
    ));
    assert_eq!(failure(&report).0, FailureKind::Timeout);
    let pid: u32 = report
        .stderr_tail
        .iter()
        .find_map(|l| l.strip_prefix("fault-server: grandchild pid "))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no grandchild pid in {:?}", report.stderr_tail));
    // SIGKILL is delivered at once, but the state changes when the kernel gets to it.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while running(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !running(pid),
        "the server's child {pid} (sleep 600, {mode}) outlived the replay"
    );
}

/// A failed replay times what it reached, the failing phase included, and leaves out what it
/// never reached: it used to say `start-up + initialize 0.0 ms` and `calls 0.0 ms`.
fn a_failed_replay_times_what_it_reached() {
    let report = run(&fault_flow_with_timeouts(
        "no-init",
        echo(1),
        SHORT_MS,
        PATIENT_MS,
    ));
    let summary = report.summary();
    assert!(
        report.startup >= Duration::from_millis(SHORT_MS),
        "{summary}"
    );
    assert!(
        !summary.contains("tools/list") && !summary.contains("calls"),
        "{summary}"
    );
    let report = run(&fault_flow_with_timeouts(
        "hang-on-call",
        echo(1),
        PATIENT_MS,
        SHORT_MS,
    ));
    let summary = report.summary();
    assert!(report.calls >= Duration::from_millis(SHORT_MS), "{summary}");
    let shown: f64 = summary
        .split("calls ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(
        shown >= SHORT_MS as f64,
        "the failed call's time is in the summary: {summary}"
    );
}

/// A value `${VAR}` brought in from the environment never appears in what the replay prints
/// or reports: not in a step's result (the server echoes it), not in the failure line of an
/// `expect` it went into, not in the mismatch data. It is written as `${VAR}` instead.
fn a_secret_from_the_environment_is_masked_everywhere() {
    let secret = "tok-3f9a8b7c6d5e";
    let vars: std::collections::BTreeMap<String, String> =
        [("API_TOKEN".to_owned(), secret.to_owned())].into();
    let text = json!({
        "server": {"command": FAULT_SERVER, "args": ["ok"], "env": {"ATP_FLOW_VAR": "${API_TOKEN}"}},
        "timeouts": {"initialize_ms": PATIENT_MS, "call_ms": PATIENT_MS},
        "calls": [
            {"name": "echo", "input": {"text": "first"}},
            {"name": "echo", "input": {"text": "${API_TOKEN}"}, "expect": {"/text": "${API_TOKEN}x"}}
        ]
    })
    .to_string();
    let dir = std::env::temp_dir();
    let flow = Flow::from_json_str(&text, Path::new("secret.json"), &dir, &vars).unwrap();
    let mut printed = Vec::new();
    let report = replay_blocking(&flow, &Options::default(), &mut |step| {
        printed.push(step.to_string())
    });
    let (kind, line) = failure(&report);
    assert_eq!(kind, FailureKind::Expectation);
    let everything = format!(
        "{}\n{}\n{:?}\n{}\n{}",
        line,
        printed.join("\n"),
        report.failure.as_ref().unwrap().mismatch,
        serde_json::to_string(&report.steps.iter().map(|s| &s.result).collect::<Vec<_>>()).unwrap(),
        report.stderr_tail.join("\n")
    );
    assert!(
        !everything.contains(secret),
        "the secret leaked:\n{everything}"
    );
    assert!(
        line.contains("${API_TOKEN}x") && line.contains("got \"${API_TOKEN}\""),
        "{line}"
    );
    assert!(
        printed[0].contains("${API_TOKEN}"),
        "the server's echo of it: {}",
        printed[0]
    );
}

/// A call may expect the server to refuse it (`expect_error`): `true` for any refusal, a
/// JSON-RPC code, or a text the error must contain. Its arguments go out as written, without
/// the client-side schema check. A call that succeeds, or is refused otherwise, fails the flow.
fn a_call_may_expect_to_be_refused() {
    let flow = |call: Value| fault_flow("ok", json!([call]));
    let report = run(&fault_flow(
        "ok",
        json!([
            {"name": "echo", "input": {}, "expect_error": -32602},
            {"name": "echo", "input": {"text": 7}, "expect_error": true},
            {"name": "echo", "input": {"text": "please fail"}, "expect_error": "on purpose"},
            {"name": "echo", "input": {"text": "after the refusals"}}
        ]),
    ));
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(report.steps.len(), 4);
    assert!(
        report.steps[0].to_string().contains("refused as expected"),
        "{}",
        report.steps[0]
    );
    assert_eq!(report.steps[0].result["refused"]["code"], -32602);
    for (call, says) in [
        (
            json!({"name": "echo", "input": {"text": "hi"}, "expect_error": true}),
            "expected the call to be refused (an isError result or a JSON-RPC error), but it succeeded",
        ),
        (
            json!({"name": "echo", "input": {}, "expect_error": -32000}),
            "expected JSON-RPC error -32000, got JSON-RPC error -32602: invalid params",
        ),
        (
            json!({"name": "echo", "input": {"text": "please fail"}, "expect_error": "timeout"}),
            "expected an error containing \"timeout\", got an isError result: the echo failed on purpose",
        ),
    ] {
        let report = run(&flow(call));
        let (kind, line) = failure(&report);
        assert_eq!(kind, FailureKind::Expectation, "{line}");
        assert!(line.contains(says), "{line}");
    }
}

/// A server that answers in text is checked on its text, whole or by a regular expression; one
/// that answers with an image, audio or a link prints what they are (type, MIME type, size,
/// never the data) and is checked on them.
fn text_and_media_results_are_shown_and_checked() {
    let report = run(&fault_flow(
        "text-only",
        json!([
            {"name": "echo", "input": {"text": "hi"}, "expect_text": "echo: hi (page 3 of 7)"},
            {"name": "echo", "input": {"text": "x"}, "expect_match": "page \\d+ of \\d+"}
        ]),
    ));
    assert!(report.failure.is_none(), "{:?}", report.failure);
    let report = run(&fault_flow(
        "text-only",
        json!([{"name": "echo", "input": {"text": "hi"}, "expect_match": "^page"}]),
    ));
    let (kind, line) = failure(&report);
    assert_eq!(kind, FailureKind::Expectation);
    assert!(
        line.contains("expected the text to match /^page/, got \"echo: hi (page 3 of 7)\""),
        "{line}"
    );

    let report = run(&fault_flow(
        "media-result",
        json!([
            {"name": "echo", "input": {"text": "a"},
             "expect_content": {"type": "image", "mime_type": "image/png", "min_bytes": 60, "max_bytes": 100}},
            {"name": "echo", "input": {"text": "b"},
             "expect_content": {"type": "resource_link", "uri": "file:///srv/report.pdf"}}
        ]),
    ));
    assert!(report.failure.is_none(), "{:?}", report.failure);
    let line = report.steps[0].to_string();
    assert!(
        line.contains(r#"{"bytes":70,"mimeType":"image/png","type":"image"}"#)
            && report.steps[0].result[2]["uri"] == "file:///srv/report.pdf"
            && !line.contains("iVBOR"),
        "{line}"
    );
    let report = run(&fault_flow(
        "media-result",
        json!([{"name": "echo", "input": {"text": "a"}, "expect_content": {"type": "image", "mime_type": "image/jpeg"}}]),
    ));
    assert!(
        failure(&report)
            .1
            .contains("expected mimeType image/jpeg, got {\"bytes\":70"),
        "{}",
        failure(&report).1
    );
}

/// A flow reaches an authenticated HTTP server with `headers`, the token from the environment
/// (`Authorization: Bearer ${TOKEN}`), and the token appears in nothing the replay prints;
/// without it the server's 401 is the failure.
fn an_http_server_is_reached_with_a_bearer_token_from_the_environment() {
    use std::io::BufRead as _;
    /// Killed however the test ends: a server left running would hold the test's pipes open.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut server = Killed(
        std::process::Command::new(FAULT_SERVER)
            .arg("http-bearer")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut port = String::new();
    std::io::BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let flow = |headers: Value, token: &str| {
        let vars: std::collections::BTreeMap<String, String> =
            [("TOKEN".to_owned(), token.to_owned())].into();
        let text = json!({
            "server": {"url": url, "headers": headers},
            "timeouts": {"initialize_ms": PATIENT_MS, "call_ms": PATIENT_MS},
            "calls": [{"name": "echo", "input": {"text": "hi"}}]
        })
        .to_string();
        Flow::from_json_str(&text, Path::new("http.json"), Path::new("."), &vars).unwrap()
    };
    let replay = |flow: &Flow| replay_blocking(flow, &Options::default(), &mut |_| {});
    let report = replay(&flow(
        json!({"Authorization": "Bearer ${TOKEN}"}),
        "s3cret-token",
    ));
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(report.steps[0].result, json!("hi"));
    let report = replay(&flow(
        json!({"Authorization": "Bearer ${TOKEN}"}),
        "wrong-token",
    ));
    let (_, line) = failure(&report);
    assert!(
        line.contains("HTTP 401 Unauthorized") && !line.contains("rmcp::"),
        "the reason whole, without rmcp's type names: {line}"
    );
    assert!(!line.contains("wrong-token"), "the token is masked: {line}");
}

/// A flow may start its HTTP server (`command` with `url`): the replay runs it, waits until the
/// port answers, replays, and kills it (and what it started) at the end. A server that exits
/// before it listens is the failure, with its output.
fn a_flow_starts_its_http_server_and_kills_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let flow = |mode: &str| {
        let text = json!({
            "server": {
                "command": FAULT_SERVER, "args": [mode],
                "env": {"ATP_FAULT_PORT": port.to_string()},
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": {"Authorization": "Bearer s3cret-token"}
            },
            "timeouts": {"initialize_ms": SHORT_MS, "call_ms": PATIENT_MS},
            "calls": [{"name": "echo", "input": {"text": "started by the flow"}}]
        })
        .to_string();
        Flow::from_json_str(&text, Path::new("start.json"), Path::new("."), &EnvVars).unwrap()
    };
    let report = run(&flow("http-bearer"));
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(report.steps[0].result, json!("started by the flow"));
    // `exit-before-init` exits at once: said, not waited for until the timeout.
    let report = run(&flow("exit-before-init"));
    let (kind, line) = failure(&report);
    assert_eq!(kind, FailureKind::Exited, "{line}");
    assert!(
        line.contains("exited before it listened on 127.0.0.1:"),
        "{line}"
    );
}

/// A flow against `command` with `protocol` (or the default, for `None`) and `calls`.
fn protocol_flow(command: &str, args: &[&str], protocol: Option<&str>, calls: Value) -> Flow {
    let mut server = json!({"command": command, "args": args});
    if let Some(protocol) = protocol {
        server["protocol"] = json!(protocol);
    }
    flow_in(Path::new(env!("CARGO_MANIFEST_DIR")), server, calls)
}

fn each_protocol_era_is_spoken_as_pinned_and_named() {
    const REFUND_SERVER: &str = env!("CARGO_BIN_EXE_refund-server");
    // refund-server is built on rmcp, which speaks both eras.
    for (protocol, version) in [
        (None, "2026-07-28"),
        (Some("auto"), "2026-07-28"),
        (Some("modern"), "2026-07-28"),
        (Some("legacy"), "2025-11-25"),
    ] {
        let report = run(&protocol_flow(REFUND_SERVER, &[], protocol, json!([])));
        assert!(report.passed(), "{protocol:?}: {:?}", report.failure);
        assert_eq!(
            report.protocol_version.as_deref(),
            Some(version),
            "{protocol:?}"
        );
        assert_eq!(report.discover_failed, None, "{protocol:?}");
        assert!(
            report.summary().ends_with(&format!(" over MCP {version}")),
            "{protocol:?}: {}",
            report.summary()
        );
    }
}

fn a_legacy_server_is_reached_under_auto_and_refused_under_modern() {
    // fault-server `ok` knows only `initialize` and answers `server/discover` with -32601:
    // the server saying it is legacy, so auto falls back on the same connection.
    let report = run(&protocol_flow(FAULT_SERVER, &["ok"], None, echo(1)));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(report.discover_failed, None);

    let report = run(&protocol_flow(
        FAULT_SERVER,
        &["ok"],
        Some("modern"),
        echo(1),
    ));
    let (kind, message) = failure(&report);
    let failed = report.failure.as_ref().expect("a failure");
    assert_eq!(failed.phase, "server/discover", "{message}");
    assert_eq!(kind, FailureKind::RpcError, "{message}");
    assert_eq!(
        message,
        "server/discover: the server answered with JSON-RPC error -32601: no method \
         server/discover (a server that answers server/discover with an error speaks only \
         legacy MCP: \"protocol\": \"auto\" or \"legacy\" reaches it)"
    );
    assert_eq!(report.steps.len(), 0);
    assert_eq!(report.protocol_version, None);
    assert_bounded(&report);
}

fn auto_starts_again_with_initialize_when_discovery_kills_the_server() {
    // `legacy-strict` exits on any request before `initialize`, as servers on older SDKs do.
    let report = run(&protocol_flow(
        FAULT_SERVER,
        &["legacy-strict"],
        Some("auto"),
        echo(2),
    ));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.steps.len(), 2);
    assert_eq!(report.protocol_version.as_deref(), Some("2025-11-25"));
    let why = report
        .discover_failed
        .as_deref()
        .expect("the failed discovery");
    assert!(why.contains("exit code 1"), "{why}");
    assert!(
        report.summary().ends_with(
            "over MCP 2025-11-25 (server/discover failed: started again with initialize)"
        ),
        "{}",
        report.summary()
    );

    let report = run(&protocol_flow(
        FAULT_SERVER,
        &["legacy-strict"],
        Some("legacy"),
        echo(2),
    ));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.discover_failed, None);

    let report = run(&protocol_flow(
        FAULT_SERVER,
        &["legacy-strict"],
        Some("modern"),
        echo(2),
    ));
    let (kind, message) = failure(&report);
    assert_eq!(kind, FailureKind::Exited, "{message}");
    assert_eq!(
        message, "server/discover: the server exited (exit code 1)",
        "{message}"
    );
    assert_bounded(&report);
}

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atp-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// A flow against `fault-server` run as `command args` (in `dir`), which logs each start and
/// each request's method to `log` (`ATP_FAULT_LOG`).
fn logged_flow(dir: &Path, command: &str, args: &[&str], log: &Path, calls: Value) -> Flow {
    let server = json!({
        "command": command,
        "args": args,
        "env": {"ATP_FAULT_LOG": log},
    });
    flow_in(dir, server, calls)
}

/// What `fault-server` logged, and the log emptied for the next run.
fn events(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_owned).collect()
}

/// A server that exits before it reads anything died at start-up: under `auto` that is its
/// failure, said once; it used to be started a second time, to die alike, because any exit
/// during `server/discover` was taken for a legacy server killed by it.
fn auto_starts_a_server_that_exits_at_start_once() {
    let dir = scratch("exit-at-start");
    let log = dir.join("events");
    let flow = logged_flow(&dir, FAULT_SERVER, &["exit-before-init"], &log, echo(1));
    let report = run(&flow);
    assert_eq!(
        failure(&report),
        (
            FailureKind::Exited,
            "initialize: the server exited (exit code 3)".to_owned()
        )
    );
    assert_eq!(events(&log), ["start"], "started once");
    assert_eq!(report.server_starts, 1);
    assert_eq!(report.discover_failed, None);
    // One that reads `server/discover` and exits of it is still started again, the old way.
    let flow = logged_flow(&dir, FAULT_SERVER, &["legacy-strict"], &log, echo(1));
    let report = run(&flow);
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(
        events(&log),
        [
            "start",
            "server/discover",
            "start",
            "initialize",
            "tools/list",
            "tools/call"
        ]
    );
    assert_eq!(report.server_starts, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A legacy server that takes `server/discover` in and never answers (Python SDK 1.0) is
/// answered for soon after it read the request, not after rmcp's ten seconds, and reached with
/// `initialize` on the same start; what it and one that refuses (later 1.x) log about the
/// request (6 KB of validation errors) is kept out of the stderr tail of a failing flow, and
/// out of the session check's count, so the tail shows what the server said at start-up and
/// what the failing step caused.
fn auto_answers_for_a_legacy_server_silent_on_discover_and_hides_its_noise() {
    let dir = scratch("legacy-noise");
    let log = dir.join("events");
    let failing = json!([{"name": "echo", "input": {"text": "hi"}, "expect": {"/text": "bye"}}]);
    for mode in ["legacy-silent", "legacy-noisy"] {
        let report = run(&logged_flow(
            &dir,
            FAULT_SERVER,
            &[mode],
            &log,
            failing.clone(),
        ));
        let failed = report.failure.as_ref().expect("the expectation fails");
        assert!(failed.step.is_some(), "{mode}: {failed}");
        assert_eq!(
            events(&log),
            [
                "start",
                "server/discover",
                "initialize",
                "tools/list",
                "tools/call"
            ],
            "{mode}: one start, one server/discover"
        );
        assert_eq!(report.protocol_version.as_deref(), Some("2025-11-25"));
        assert_eq!(report.discover_failed, None, "{mode}");
        assert_eq!(report.discover_requests, 1, "{mode}");
        assert_eq!(
            report.stderr_tail,
            [
                format!("fault-server: {mode} starting").as_str(),
                "fault-server: echo called"
            ],
            "{mode}: its start-up and its call in the tail, no discovery noise"
        );
        assert!(
            report.stderr_hidden > 6000,
            "{mode}: {}",
            report.stderr_hidden
        );
        let shown = report.stderr_bytes - report.stderr_hidden;
        let stderr: Vec<&str> = report
            .session
            .iter()
            .filter(|f| f.kind == toolcall_mcp::SessionFindingKind::Stderr)
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(
            stderr,
            [format!(
                "the server wrote {shown} bytes to stderr (the last line: \"fault-server: echo \
                 called\")"
            )],
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server still starting has not read `server/discover`: however long that takes (here 3 s,
/// longer than an idle server is given once it has read the request), it is not answered for,
/// and a modern server is reached over the modern era.
fn auto_does_not_take_a_server_slow_to_start_for_legacy() {
    const REFUND_SERVER: &str = env!("CARGO_BIN_EXE_refund-server");
    let server = json!({"command": "sh", "args": ["-c", "sleep 3; exec \"$0\"", REFUND_SERVER]});
    let report = run(&flow_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        server,
        json!([]),
    ));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(report.discover_failed, None);
    assert_eq!(report.discover_requests, 1);
}

/// With a protocol cache, `auto` remembers the era each server spoke: a legacy server gets
/// `initialize` straight away the next time; a memory gone wrong (the server now speaks only
/// the modern era) costs one more start, not a failure, and is corrected; a corrupt cache is
/// ignored with a note.
fn auto_remembers_the_era_a_server_spoke_last() {
    let dir = scratch("eras");
    let log = dir.join("events");
    let cache = dir.join("cache/protocol-eras.json");
    let options = Options {
        protocol_cache: Some(cache.clone()),
        ..Options::default()
    };
    // One command line, whose server changes between runs as an upgraded one does.
    let mode_file = dir.join("mode");
    let flow = logged_flow(
        &dir,
        "sh",
        &["-c", "exec \"$0\" \"$(cat mode)\"", FAULT_SERVER],
        &log,
        echo(1),
    );
    let replay = |mode: &str| {
        std::fs::write(&mode_file, mode).unwrap();
        let report = run_with(&flow, &options);
        assert!(report.passed(), "{mode}: {:?}", report.failure);
        (report, events(&log))
    };

    let (report, seen) = replay("legacy-noisy");
    assert_eq!(
        seen,
        [
            "start",
            "server/discover",
            "initialize",
            "tools/list",
            "tools/call"
        ]
    );
    assert!(
        report.protocol_notes.is_empty(),
        "{:?}",
        report.protocol_notes
    );
    assert!(cache.exists());

    let (report, seen) = replay("legacy-noisy");
    assert_eq!(seen, ["start", "initialize", "tools/list", "tools/call"]);
    assert_eq!(report.discover_requests, 0);
    assert_eq!(report.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(report.protocol_remembered);
    assert!(
        report.protocol_notes.is_empty(),
        "{:?}",
        report.protocol_notes
    );

    let (report, seen) = replay("modern-only");
    assert_eq!(
        seen,
        [
            "start",
            "initialize",
            "start",
            "server/discover",
            "tools/list",
            "tools/call"
        ]
    );
    assert_eq!(report.protocol_version.as_deref(), Some("2026-07-28"));
    assert!(
        report.protocol_notes[0]
            .contains("the protocol cache said legacy MCP, but initialize failed"),
        "{:?}",
        report.protocol_notes
    );
    let (report, seen) = replay("modern-only");
    assert_eq!(
        seen,
        ["start", "server/discover", "tools/list", "tools/call"]
    );
    assert!(report.protocol_remembered, "modern, remembered");
    assert!(
        report.protocol_notes.is_empty(),
        "{:?}",
        report.protocol_notes
    );

    std::fs::write(&cache, "{not json").unwrap();
    let (report, seen) = replay("legacy-noisy");
    assert_eq!(
        seen,
        [
            "start",
            "server/discover",
            "initialize",
            "tools/list",
            "tools/call"
        ]
    );
    assert!(
        report.protocol_notes[0].contains("is not what toolcall writes"),
        "{:?}",
        report.protocol_notes
    );
    let (_, seen) = replay("legacy-noisy");
    assert_eq!(seen, ["start", "initialize", "tools/list", "tools/call"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn a_flow_naming_a_snapshot_fails_on_catalog_drift() {
    let dir = std::env::temp_dir().join(format!("atp-faults-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (tools, _) =
        toolcall_mcp::list_catalog_blocking(&fault_flow("ok", json!([])), &Options::default());
    let snapshot = toolcall_mcp::catalog::snapshot(&tools.expect("the ok catalog"));
    std::fs::write(dir.join("fault.json"), snapshot.to_string()).unwrap();
    let flow = |mode: &str, snapshot: &str| {
        let text = json!({
            "server": {"command": FAULT_SERVER, "args": [mode]},
            "snapshot": snapshot,
            "calls": echo(1),
        });
        Flow::from_json_str(&text.to_string(), Path::new("drift.json"), &dir, &EnvVars)
    };
    let report = run(&flow("ok", "fault.json").unwrap());
    assert!(report.passed(), "{:?}", report.failure);

    let report = run(&flow("drifted", "fault.json").unwrap());
    let (kind, message) = failure(&report);
    assert_eq!(kind, FailureKind::CatalogDrift, "{message}");
    let file = dir.join("fault.json");
    assert_eq!(
        message,
        format!(
            "tools/list: the catalog drifted from {file}: breaking: `echo` now requires `text` \
             (inputSchema.required: unset -> [\"text\"]; narrows what a caller may send); \
             security: `echo_twice` was added, and may be destructive \
             (annotations.destructiveHint: true); \
             to accept it: toolcall mcp diff \
             drift.json --snapshot {file} --write",
            file = file.display()
        )
    );
    assert!(report.steps.is_empty(), "no call after the drift");

    let error = flow("ok", "missing.json").expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("/snapshot: `missing.json` is not a catalog snapshot"),
        "{error}"
    );
    std::fs::write(dir.join("not.json"), "{\"tool\": []}").unwrap();
    let error = flow("ok", "not.json").expect_err("refused");
    assert!(
        error.to_string().contains("has no \"tools\" array"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn an_input_required_result_is_answered_from_the_flow_as_one_call() {
    let calls = |responses: Value| {
        json!([{"name": "echo", "input": {"text": "hi"}, "input_responses": responses,
                "expect": {"/confirmed/sure": true}}])
    };
    // By the request's key.
    let report = run(&fault_flow(
        "input-required",
        calls(json!({"confirm": {"action": "accept", "content": {"sure": true}}})),
    ));
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.steps.len(), 1, "one logical call");
    assert_eq!(report.steps[0].rounds, 2);
    assert!(
        report.steps[0]
            .to_string()
            .starts_with("step 1: echo ok (in 2 rounds: input asked and answered)"),
        "{}",
        report.steps[0]
    );
    // By the request's method, for servers whose keys are not stable.
    let report = run(&fault_flow(
        "input-required",
        calls(json!({"elicitation/create": {"action": "accept", "content": {"sure": true}}})),
    ));
    assert!(report.passed(), "{:?}", report.failure);

    // Not answered: the failure names what the server asked.
    let report = run(&fault_flow("input-required", calls(json!({}))));
    let (kind, message) = failure(&report);
    assert_eq!(kind, FailureKind::InputRequired, "{message}");
    assert_eq!(
        message,
        "step 1: echo: the server asked for input `confirm` (elicitation/create: \"Echo this for \
         real?\"), which the call's input_responses do not answer (by that key or by the method)"
    );
    // Declined: the server's own answer decides.
    let report = run(&fault_flow(
        "input-required",
        calls(json!({"confirm": {"action": "decline"}})),
    ));
    let (kind, message) = failure(&report);
    assert_eq!(kind, FailureKind::ToolError, "{message}");
}

fn a_call_to_an_undeclared_name_that_must_be_refused_is_sent() {
    // A recorded client bug: the name is not in tools/list. refund-server (rmcp) refuses it; the
    // fault server answers any name, which the flow then reports.
    const REFUND_SERVER: &str = env!("CARGO_BIN_EXE_refund-server");
    let call = json!([{"name": "refund_order", "input": {}, "expect_error": true}]);
    let report = run(&protocol_flow(REFUND_SERVER, &[], None, call.clone()));
    assert!(report.passed(), "{:?}", report.failure);
    assert!(
        report.steps[0].to_string().contains("refused as expected"),
        "{}",
        report.steps[0]
    );
    let report = run(&protocol_flow(
        FAULT_SERVER,
        &["ok"],
        None,
        json!([{"name": "mcp__fault__echo", "input": {"text": "hi"}, "expect_error": true}]),
    ));
    let (kind, message) = failure(&report);
    assert_eq!(kind, FailureKind::Expectation, "{message}");
    assert!(message.contains("but it succeeded"), "{message}");
    // Without expect_error an unknown name fails before anything is sent.
    let report = run(&protocol_flow(
        REFUND_SERVER,
        &[],
        None,
        json!([{"name": "refund_order", "input": {}}]),
    ));
    assert_eq!(failure(&report).0, FailureKind::UnknownTool);
}
