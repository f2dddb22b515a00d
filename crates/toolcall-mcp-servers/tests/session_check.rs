//! The session check against the fault server: what the raw stdio stream shows beyond the
//! steps' results (`Report::session`), each a finding under `toolcall replay --strict`.

use std::path::Path;

use libtest_mimic::Trial;
use serde_json::json;
use toolcall_mcp::{
    replay_blocking, EnvVars, FailureKind, Flow, Options, Report, SessionFindingKind,
};

pub(crate) fn trials() -> Vec<Trial> {
    trials!(
        "session_check",
        a_well_behaved_server_has_a_clean_session,
        a_stray_line_after_the_last_answer_is_found,
        a_response_to_no_request_is_found,
        stderr_output_is_found_with_its_last_line,
        an_answer_after_the_call_timed_out_is_found_late_under_strict,
    )
}

const FAULT_SERVER: &str = env!("CARGO_BIN_EXE_fault-server");

fn replay(mode: &str, call_ms: u64, options: &Options) -> Report {
    let text = json!({
        "server": {"command": FAULT_SERVER, "args": [mode]},
        "timeouts": {"initialize_ms": 30_000, "call_ms": call_ms},
        "calls": [{"name": "echo", "input": {"text": "hi"}, "expect": {"/text": "hi"}}],
    })
    .to_string();
    let flow = Flow::from_json_str(&text, Path::new("session.json"), Path::new("."), &EnvVars)
        .expect("a valid flow");
    replay_blocking(&flow, options, &mut |_| {})
}

/// The kinds found and their sentences, of a replay that passed.
fn found(mode: &str) -> Vec<(SessionFindingKind, String)> {
    let report = replay(mode, 30_000, &Options::default());
    assert!(report.passed(), "{mode}: {:?}", report.failure);
    report
        .session
        .iter()
        .map(|f| (f.kind, f.message.clone()))
        .collect()
}

fn a_well_behaved_server_has_a_clean_session() {
    assert_eq!(found("ok"), []);
}

fn a_stray_line_after_the_last_answer_is_found() {
    assert_eq!(
        found("stray-at-exit"),
        [(
            SessionFindingKind::StrayStdout,
            "the server printed \"fault-server: bye\" to stdout, which is not JSON-RPC, when no \
             step was waiting (log to stderr instead)"
                .to_owned()
        )]
    );
}

fn a_response_to_no_request_is_found() {
    assert_eq!(
        found("wrong-id"),
        [(
            SessionFindingKind::UnknownId,
            "the server sent a response with id 9999, which matches no request".to_owned()
        )]
    );
}

fn stderr_output_is_found_with_its_last_line() {
    let found = found("stderr-flood");
    assert_eq!(found.len(), 1, "{found:?}");
    let (kind, message) = &found[0];
    assert_eq!(*kind, SessionFindingKind::Stderr);
    assert!(
        message.starts_with("the server wrote 20")
            && message.ends_with("bytes to stderr (the last line: \"fault-server: flood done\")"),
        "{message}"
    );
}

fn an_answer_after_the_call_timed_out_is_found_late_under_strict() {
    // The server answers 600 ms late; the call gives up at 200 ms; under strict the server has
    // the whole (generous) grace to send it before it is killed.
    let strict = Options {
        strict: true,
        shutdown_grace: std::time::Duration::from_secs(20),
        ..Options::default()
    };
    let report = replay("late-result", 200, &strict);
    let failure = report.failure.clone().expect("the call timed out");
    assert_eq!(failure.kind, FailureKind::Timeout, "{failure}");
    let late: Vec<&str> = report
        .session
        .iter()
        .filter(|f| f.kind == SessionFindingKind::Late)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(late.len(), 1, "{:?}", report.session);
    assert!(
        late[0].ends_with("(tools/call) after the call had timed out"),
        "{}",
        late[0]
    );
}
