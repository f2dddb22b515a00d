//! The flow checks server teams write against the refund server: `${steps.ID.result…}`
//! references between calls, `assert` on a result, `skip` / `skip_unless_env`, and a folder run
//! in which one flow cannot be read (it is an `error` in every report; the rest still run).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use super::support::{stderr, stdout, well_formed};
use super::{example_server, flows_dir, scratch, write};

/// `toolcall replay ARGS…` with the refund server as `${ATP_REFUND_SERVER}` and neither
/// `ATP_REFUND_LIVE` nor the variable the skipped flows name set.
fn replay(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .args(args)
        .env("ATP_REFUND_SERVER", example_server("refund-server"))
        .env_remove("ATP_REFUND_LIVE")
        .env_remove("ATP_FLOWCHECK_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

fn os(path: &Path) -> &std::ffi::OsStr {
    path.as_os_str()
}

/// A reference fills in what an earlier step's result holds, a whole value keeping its type
/// (the amount is an integer, which the tool's inputSchema demands) and one inside a string
/// written into it; every kind of assertion holds; the step behind `skip_unless_env` is not
/// sent and is said to be skipped, never counted as passed.
#[test]
fn a_reference_carries_a_value_from_one_step_to_the_next() {
    let flow = flows_dir().join("refund-by-reference.json");
    let out = replay(&[os(&flow)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "step 4: issue_refund skipped (skip_unless_env: ATP_REFUND_LIVE is not set)\n"
        ),
        "{text}"
    );
    assert!(text.contains("3 steps passed, 1 skipped in "), "{text}");

    let out = replay(&[os(&flow), std::ffi::OsStr::new("--json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = &run["flows"][0]["steps"];
    // What was sent, the references filled in.
    assert_eq!(
        steps[1]["input"],
        json!({"order_id": "ord_1042", "amount_cents": 9164,
               "reason": "refund of ord_1042, damaged in transit"})
    );
    assert_eq!(steps[1]["result"]["refund_id"], "rf_0001");
    assert_eq!(
        (&steps[3]["skipped"], &steps[3]["result"]),
        (
            &json!("skip_unless_env: ATP_REFUND_LIVE is not set"),
            &Value::Null
        )
    );
    assert!(steps[2].get("skipped").is_none(), "{}", steps[2]);
}

/// A reference to a value the step's result does not hold, and an assertion that does not
/// hold: each fails naming the step, the reference or the assertion, and what was found there
/// (the exact lines are the flows' `expected_failure`, which `replay` holds them to).
#[test]
fn a_missing_reference_and_a_failed_assertion_say_what_they_found() {
    let flows = [
        flows_dir().join("reference-missing.json"),
        flows_dir().join("assert-too-few.json"),
    ];
    let out = replay(&flows.iter().map(|p| os(p)).collect::<Vec<_>>());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    for path in &flows {
        let flow: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let line = format!(
            "XFAIL {}: {}\n",
            path.display(),
            flow["expected_failure"].as_str().unwrap()
        );
        assert!(text.contains(&line), "no {line:?} in\n{text}");
    }
    assert!(
        text.contains("step `find`'s result has no `orders.1` (at `result.orders`: [{"),
        "{text}"
    );
    assert!(
        text.contains("assert.min_results: expected at least 2 items at $.orders, found 1"),
        "{text}"
    );
    // The same failure, as data: a failed `json_path` carries its pointer and both values.
    let dir = scratch("flowcheck-json-path");
    let path = write(
        &dir,
        "status.json",
        &json!({"server": {"command": "${ATP_REFUND_SERVER}"},
                "calls": [{"name": "issue_refund",
                           "input": {"order_id": "ord_1042", "amount_cents": 1, "reason": "r"},
                           "assert": {"json_path": {"$.status": "refunded"}}}]})
        .to_string(),
    );
    let out = replay(&[os(&path), std::ffi::OsStr::new("--json")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failure = &run["flows"][0]["failure"];
    assert_eq!(
        (
            &failure["message"],
            &failure["pointer"],
            &failure["expected"],
            &failure["got"]
        ),
        (
            &json!("step 1: issue_refund: assert.json_path: expected $.status = \"refunded\", got \"pending\""),
            &json!("/status"),
            &json!("refunded"),
            &json!("pending")
        )
    );
}

/// A folder with a flow that is skipped until its token is set (the token it would send, unset
/// too), beside one that runs: the skipped flow starts no server, is `SKIP` in the text,
/// `skipped` in JSON, `<skipped/>` (not an xfail) in JUnit and on the page; the run passes.
#[test]
fn a_skipped_flow_is_reported_as_skipped_everywhere() {
    let dir = scratch("flowcheck-skip");
    let flows = dir.join("flows");
    std::fs::create_dir_all(&flows).unwrap();
    std::fs::copy(flows_dir().join("refund.json"), flows.join("a-refund.json")).unwrap();
    let skipped = write(
        &flows,
        "b-live.json",
        &json!({"skip_unless_env": "ATP_FLOWCHECK_TOKEN",
                "server": {"url": "https://refunds.example/mcp",
                           "headers": {"Authorization": "Bearer ${ATP_FLOWCHECK_TOKEN}"}},
                "calls": [{"name": "search_orders"}]})
        .to_string(),
    );
    let out = replay(&[os(&flows)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!(
            "SKIP {}: skip_unless_env: ATP_FLOWCHECK_TOKEN is not set\n",
            skipped.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("replayed 2 flow(s): 1 passed, 0 failed as expected, 0 failed, 1 skipped"),
        "{text}"
    );

    let (page, junit) = (dir.join("replay.html"), dir.join("replay.xml"));
    let out = replay(&[
        os(&flows),
        std::ffi::OsStr::new("--json"),
        std::ffi::OsStr::new("--junit"),
        os(&junit),
        std::ffi::OsStr::new("--html"),
        os(&page),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["ok"], true);
    let outcomes: Vec<&Value> = run["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["outcome"])
        .collect();
    assert_eq!(outcomes, [&json!("pass"), &json!("skipped")]);
    assert_eq!(
        run["flows"][1]["skipped"],
        "skip_unless_env: ATP_FLOWCHECK_TOKEN is not set"
    );
    assert_eq!(run["flows"][1]["steps"], json!([]));
    let xml = std::fs::read_to_string(&junit).unwrap();
    well_formed(&xml).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        xml.contains(
            "<skipped message=\"skipped (skip_unless_env: ATP_FLOWCHECK_TOKEN is not set)\"/>"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"2\" failures=\"0\" skipped=\"1\""),
        "{xml}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("data-outcome=\"skipped\""), "{html}");
}

/// One flow of a folder uses a variable that is not set: it is an `error` in the text, the
/// JSON, the JUnit file and the page, the other flow is still replayed, and the exit code is
/// 2 (bad input, as for one such flow alone) once every report is written, with one `error:`
/// line naming the file, the place and the variable.
#[test]
fn a_flow_that_cannot_be_read_is_an_error_and_the_rest_still_run() {
    let dir = scratch("flowcheck-error");
    let flows = dir.join("flows");
    std::fs::create_dir_all(&flows).unwrap();
    let broken = write(
        &flows,
        "a-unset.json",
        r#"{"server": {"command": "${ATP_FLOWCHECK_UNSET}"}, "calls": []}"#,
    );
    std::fs::copy(flows_dir().join("refund.json"), flows.join("b-refund.json")).unwrap();
    let said = format!(
        "{}: /server/command uses ${{ATP_FLOWCHECK_UNSET}}, which is not set",
        broken.display()
    );

    let out = replay(&[os(&flows)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("ERROR {}: {said}\n", broken.display())),
        "{text}"
    );
    assert!(text.contains("6 steps passed in "), "{text}");
    assert!(
        text.contains(&format!(
            "replayed 2 flow(s): 1 passed, 0 failed as expected, 0 failed, 1 could not be read ({})",
            broken.display()
        )),
        "{text}"
    );
    assert_eq!(
        stderr(&out).matches("error:").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains(&said), "{}", stderr(&out));

    let (page, junit) = (dir.join("replay.html"), dir.join("replay.xml"));
    let out = replay(&[
        os(&flows),
        std::ffi::OsStr::new("--json"),
        std::ffi::OsStr::new("--junit"),
        os(&junit),
        std::ffi::OsStr::new("--html"),
        os(&page),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["ok"], false);
    let flows_run = run["flows"].as_array().unwrap();
    assert_eq!(flows_run.len(), 2, "{run}");
    assert_eq!(
        (
            &flows_run[0]["outcome"],
            &flows_run[0]["failure"]["kind"],
            &flows_run[0]["failure"]["message"]
        ),
        (&json!("error"), &json!("flow_error"), &json!(said))
    );
    assert_eq!(flows_run[1]["outcome"], "pass");
    let xml = std::fs::read_to_string(&junit).unwrap();
    well_formed(&xml).unwrap_or_else(|e| panic!("{e}"));
    assert!(xml.contains("<failure type=\"error\""), "{xml}");
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    let html = std::fs::read_to_string(&page).unwrap();
    well_formed(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("data-outcome=\"error\""), "{html}");
    assert!(html.contains("ATP_FLOWCHECK_UNSET"), "{html}");
}
