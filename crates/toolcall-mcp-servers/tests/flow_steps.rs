//! `verify` and `--update` against the fault server: a step's whole response compared with
//! the recorded one, and the golden snapshot accepted into the flow file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::{json, Value};
use toolcall_mcp::{replay_blocking, update_flow, FailureKind, Flow, Options, Updated};

pub(crate) fn trials() -> Vec<Trial> {
    trials!(
        "flow_steps",
        a_verify_step_fails_until_update_records_it_then_compares_it,
        an_update_writes_a_secret_as_its_variable_and_reads_back_green,
        a_recording_is_compared_as_the_live_answer_is_read_and_redactions_stay,
        a_step_that_refers_to_a_skipped_one_is_skipped_too,
    )
}

const FAULT_SERVER: &str = env!("CARGO_BIN_EXE_fault-server");

/// A scratch folder of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atp-flow-steps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(path: &Path, vars: &BTreeMap<String, String>) -> Flow {
    Flow::load_with(path, vars).unwrap_or_else(|e| panic!("{e}"))
}

fn a_verify_step_fails_until_update_records_it_then_compares_it() {
    let dir = scratch("verify");
    let path = dir.join("verify.json");
    // Hand-written, one step on several lines: an update must keep the rest of the bytes.
    let text = format!(
        "{{\n  \"server\": {{\"command\": {}, \"args\": [\"ok\"]}},\n  \
         \"verify\": {{\"ignore_paths\": [\"/result/structuredContent/path\"]}},\n  \
         \"calls\": [\n    {{\"name\": \"echo\", \"input\": {{\"text\": \"hi\"}}}},\n    {{\n      \
         \"name\": \"echo\",\n      \"input\": {{\"text\": \"there\"}}\n    }},\n    \
         {{\"name\": \"echo\", \"input\": {{\"text\": 3}}, \"expect_error\": -32602}}\n  ]\n}}\n",
        json!(FAULT_SERVER)
    );
    std::fs::write(&path, &text).unwrap();
    let vars = BTreeMap::new();

    // Nothing recorded: the first verify step fails, and says how to record it.
    let flow = load(&path, &vars);
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    let failure = report.failure.clone().expect("nothing is recorded");
    assert_eq!(failure.kind, FailureKind::Verify, "{failure}");
    assert!(
        failure.to_string().contains("nothing is recorded") && failure.message.contains("--update"),
        "{failure}"
    );

    // --update: every step runs, each response goes into the flow.
    let update = Options {
        update: true,
        ..Options::default()
    };
    let report = replay_blocking(&flow, &update, &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.updates.len(), 3);
    let Updated::Written { steps, .. } = update_flow(&flow, &report.updates).unwrap() else {
        panic!("the flow was not written")
    };
    assert_eq!(steps.len(), 3);
    let written = std::fs::read_to_string(&path).unwrap();
    let value: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        value["calls"][1]["recorded"]["result"]["structuredContent"]["text"],
        "there"
    );
    assert_eq!(
        value["calls"][2]["recorded"]["error"]["code"], -32602,
        "{written}"
    );
    // The hand-written lines are still there; the new member has a line of its own.
    assert!(
        written.contains("      \"input\": {\"text\": \"there\"},\n      \"recorded\": {"),
        "{written}"
    );

    // Recorded: the replay passes, and an update leaves the file as it is.
    let flow = load(&path, &vars);
    let report = replay_blocking(&flow, &update, &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    assert_eq!(report.updates, []);
    assert_eq!(
        update_flow(&flow, &report.updates).unwrap(),
        Updated::Unchanged
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);

    // A recorded answer that no longer holds fails the step, naming the place...
    std::fs::write(
        &path,
        written.replace("\"text\":\"there\"}", "\"text\":\"where\"}"),
    )
    .unwrap();
    let flow = load(&path, &vars);
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    let failure = report.failure.clone().expect("a changed response");
    assert_eq!((failure.kind, failure.step), (FailureKind::Verify, Some(2)));
    assert!(
        failure.message.contains(
            "at 1 place: /result/structuredContent/text: recorded \"where\", got \"there\""
        ),
        "{failure}"
    );
    // ...unless the command line leaves it out.
    let ignoring = Options {
        ignore_paths: vec!["/result/structuredContent/*".to_owned()],
        ..Options::default()
    };
    let report = replay_blocking(&flow, &ignoring, &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    let _ = std::fs::remove_dir_all(&dir);
}

fn an_update_writes_a_secret_as_its_variable_and_reads_back_green() {
    let dir = scratch("secret");
    let path = dir.join("secret.json");
    let flow = json!({
        "server": {"command": FAULT_SERVER, "args": ["ok"], "env": {"ATP_FLOW_VAR": "${ATP_STEPS_TOKEN}"}},
        "calls": [{"name": "echo", "input": {"text": "costs $5"}, "verify": true}],
    });
    std::fs::write(&path, flow.to_string()).unwrap();
    let vars = BTreeMap::from([("ATP_STEPS_TOKEN".to_owned(), "tok-8c1f2e".to_owned())]);
    let loaded = load(&path, &vars);
    let update = Options {
        update: true,
        ..Options::default()
    };
    let report = replay_blocking(&loaded, &update, &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    update_flow(&loaded, &report.updates).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(!written.contains("tok-8c1f2e"), "{written}");
    assert!(
        written.contains(r#""flow_var":"${ATP_STEPS_TOKEN}""#),
        "{written}"
    );
    assert!(written.contains("costs $$5"), "{written}");
    let report = replay_blocking(&load(&path, &vars), &Options::default(), &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recorded response is compared as the live one is read: a member the client library does
/// not model (which it drops from the live answer) is no difference, and neither is a value the
/// recorder redacted (`[REDACTED]`), which is not known. Accepting a changed response keeps each
/// redaction and the call's recorded `request_meta`, so `--update` never writes a secret the
/// recording hid. Before, the step failed on both (and showed the secret in the failure).
fn a_recording_is_compared_as_the_live_answer_is_read_and_redactions_stay() {
    let dir = scratch("as-live");
    let path = dir.join("as-live.json");
    let recorded = |text: &str| {
        json!({"result": {
            "content": [{"type": "text", "text": "ignored"}],
            "structuredContent": {"text": text, "cwd": "[REDACTED]", "flow_var": null},
            "x-unmodelled": {"by": "the client library"}
        }, "request_meta": {"trace": "t-1"}})
    };
    let flow = |text: &str| {
        json!({
            "server": {"command": FAULT_SERVER, "args": ["ok"]},
            "verify": {"ignore_paths": ["/result/content", "/result/structuredContent/path"]},
            "calls": [{"name": "echo", "input": {"text": "hi"}, "recorded": recorded(text)}],
        })
    };
    std::fs::write(&path, flow("hi").to_string()).unwrap();
    let vars = BTreeMap::new();
    let report = replay_blocking(&load(&path, &vars), &Options::default(), &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);

    // A real change fails, and is accepted with the redaction and request_meta kept.
    std::fs::write(&path, flow("old").to_string()).unwrap();
    let loaded = load(&path, &vars);
    let report = replay_blocking(&loaded, &Options::default(), &mut |_| {});
    let failure = report.failure.clone().expect("the text changed");
    assert!(
        failure
            .message
            .contains("at 1 place: /result/structuredContent/text"),
        "{failure}"
    );
    assert!(!failure.message.contains("cwd"), "{failure}");
    let update = Options {
        update: true,
        ..Options::default()
    };
    let report = replay_blocking(&loaded, &update, &mut |_| {});
    update_flow(&loaded, &report.updates).unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let now = &written["calls"][0]["recorded"];
    assert_eq!(now["result"]["structuredContent"]["text"], "hi", "{now:#}");
    assert_eq!(
        now["result"]["structuredContent"]["cwd"], "[REDACTED]",
        "{now:#}"
    );
    assert_eq!(now["request_meta"], json!({"trace": "t-1"}), "{now:#}");
    let report = replay_blocking(&load(&path, &vars), &Options::default(), &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A step whose input refers to a skipped step's result is skipped too, saying why: the result
/// it needs is not there (a fork's run without the token a step needs failed with a `capture`
/// failure, though a skip never fails a run). A step after them runs.
fn a_step_that_refers_to_a_skipped_one_is_skipped_too() {
    let text = json!({
        "server": {"command": FAULT_SERVER, "args": ["ok"]},
        "calls": [
            {"name": "echo", "id": "made", "input": {"text": "a"},
             "skip_unless_env": "ATP_FLOW_STEPS_NEVER_SET"},
            {"name": "echo", "id": "then", "input": {"text": "${steps.made.result.text}"}},
            {"name": "echo", "input": {"text": "${steps.then.text}"}},
            {"name": "echo", "input": {"text": "runs"}, "expect": {"/text": "runs"}}
        ],
    })
    .to_string();
    let flow = Flow::from_json_str(
        &text,
        Path::new("skips.json"),
        Path::new("."),
        &BTreeMap::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = replay_blocking(&flow, &Options::default(), &mut |_| {});
    assert!(report.passed(), "{:?}", report.failure);
    let skipped: Vec<Option<&str>> = report.steps.iter().map(|s| s.skipped.as_deref()).collect();
    assert_eq!(
        skipped,
        [
            Some("skip_unless_env: ATP_FLOW_STEPS_NEVER_SET is not set"),
            Some("it refers to step `made`, which was skipped"),
            Some("it refers to step `then`, which was skipped"),
            None
        ]
    );
}
