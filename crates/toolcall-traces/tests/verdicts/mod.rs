//! A body scored inside a trace gets the verdict it gets scored alone: the trace sources that
//! carry a provider's body hand it to the core's reader, and nothing of what the core would find
//! (arguments that are not JSON, a custom tool's free text) is lost on the way.

use serde_json::{json, Value};
use toolcall_score::{Arguments, Case, Catalog, Format, Response, Scorer};

/// Pass or fail, the kinds of the findings, in order, and the arguments of the calls judged.
pub type Outcome = (bool, Vec<String>, Vec<Arguments>);

fn outcome(case: &Case, response: &Response) -> Outcome {
    let verdict = Scorer::new(case).score(response);
    let kinds = verdict
        .findings()
        .iter()
        .map(|f| f.kind.as_str().to_owned())
        .collect();
    let arguments = response.calls.iter().map(|c| c.arguments.clone()).collect();
    (verdict.is_pass(), kinds, arguments)
}

/// The core's verdict on `body` alone, against `tools`.
pub fn alone(tools: &Value, body: &Value, format: Format) -> Result<Outcome, String> {
    let catalog = Catalog::from_json(tools).map_err(|e| e.to_string())?;
    let response = Response::from_value(body, Some(format)).map_err(|e| e.to_string())?;
    Ok(outcome(&Case::from_catalog(catalog), &response))
}

/// The verdict on each judged turn `text` holds, read as a trace (without naming its source).
pub fn through(text: &str) -> Result<Vec<Outcome>, String> {
    let (_, found) = toolcall_traces::read(text, "probe.json", None).map_err(|e| e.to_string())?;
    if let Some(bad) = found.bad.first() {
        return Err(format!("{}: {}", bad.at, bad.why));
    }
    Ok(found
        .turns
        .iter()
        .filter_map(|turn| Some(outcome(&turn.case(None)?, &turn.response)))
        .collect())
}

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#;

/// A Chat Completions response whose one call's arguments are not JSON (a model that stopped
/// mid-object).
fn broken_arguments() -> Value {
    json!({
        "id": "chatcmpl-AHUbdmGE0Bv6kGT9j2lW2ekYzqwbJ",
        "object": "chat.completion",
        "created": 1728680303,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_8xJ1mJqQ0b3QmZ1sX6cV2nLk",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Tok"}
                }],
                "refusal": null
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    })
}

/// A LangSmith ingest body (as `wrap_openai` posts it) whose run's outputs are `body`.
pub fn langsmith(tools: &Value, body: &Value) -> String {
    json!({"post": [{
        "id": "d0d84d31-923d-4cb5-94a8-40a0a0087578",
        "trace_id": "d0d84d31-923d-4cb5-94a8-40a0a0087578",
        "dotted_order": "20241011T205823298773Zd0d84d31-923d-4cb5-94a8-40a0a0087578",
        "name": "ChatOpenAI",
        "run_type": "llm",
        "start_time": "2024-10-11T20:58:23.298773+00:00",
        "extra": {
            "metadata": {"ls_provider": "openai", "ls_model_type": "chat", "ls_model_name": "gpt-4o-mini"},
            "invocation_params": {"tools": tools}
        },
        "inputs": {"messages": [{"role": "user", "content": "Weather in Tokyo?"}], "model": "gpt-4o-mini"},
        "outputs": body
    }]})
    .to_string()
}

/// A Langfuse trace export whose one generation's output is `body` (as a JSON string, as the
/// OpenAI integration stores it) and whose input is the request with `tools`.
pub fn langfuse(tools: &Value, body: &Value) -> String {
    let input =
        json!({"messages": [{"role": "user", "content": "Weather in Tokyo?"}], "tools": tools});
    json!({
        "trace": {"id": "fee618f96dc31e0ca38b2f7b26eb8b29", "name": "weather"},
        "observations": [{
            "id": "90d94774e8e3724d",
            "traceId": "fee618f96dc31e0ca38b2f7b26eb8b29",
            "type": "GENERATION",
            "name": "OpenAI-generation",
            "startTime": "2025-09-30T09:04:01.001Z",
            "model": "gpt-4o-mini",
            "input": input.to_string(),
            "output": body.to_string()
        }]
    })
    .to_string()
}

fn probe(wrap: fn(&Value, &Value) -> String) {
    let tools: Value = serde_json::from_str(TOOLS).unwrap();
    let body = broken_arguments();
    let want = alone(&tools, &body, Format::OpenaiChat).unwrap();
    assert_eq!(
        (want.0, &want.1),
        (false, &vec!["arguments_not_json".to_owned()]),
        "the body alone"
    );
    assert!(
        matches!(&want.2[..], [args] if args.invalid().is_some_and(|(raw, _)| raw == "{\"city\": \"Tok"))
    );
    assert_eq!(through(&wrap(&tools, &body)).unwrap(), vec![want]);
}

/// Through LangSmith such a call passed: its arguments became `{}`.
#[test]
fn langsmith_arguments_that_are_not_json_fail_as_they_do_alone() {
    probe(langsmith);
}

/// Through Langfuse its arguments became Rust's `Debug` text of them.
#[test]
fn langfuse_arguments_that_are_not_json_fail_as_they_do_alone() {
    probe(langfuse);
}

/// The core's response fixtures (`crates/toolcall-score/tests/fixtures/<format>/`), each with
/// its format: every `NAME.json` its directory's `index.txt` lists as a response.
fn core_responses() -> Vec<(String, Format, Value)> {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolcall-score/tests/fixtures");
    let mut out = Vec::new();
    for format in Format::ALL {
        let dir = root.join(format.as_str().replace('-', "_"));
        let Ok(index) = std::fs::read_to_string(dir.join("index.txt")) else {
            continue;
        };
        for line in index.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.split_whitespace();
            let (Some(stem), Some("response")) = (fields.next(), fields.next()) else {
                continue;
            };
            let body = dir.join(format!("{stem}.json"));
            let body: Value =
                serde_json::from_str(&std::fs::read_to_string(&body).unwrap()).unwrap();
            out.push((format!("{}/{stem}", format.as_str()), format, body));
        }
    }
    out
}

/// Chat-shaped tools of these names, without schemas.
fn named(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"type": "function", "function": {"name": n}}))
        .collect()
}

/// Every response fixture of the core that a source carries as a provider's body (a LangSmith
/// run's `outputs`, a Langfuse generation's `output`) gets, through the trace, the verdict it
/// gets alone: pass or fail, the findings' kinds in order, the calls' arguments. Each is judged
/// twice, against a catalog of every name it calls and against one without its first call's.
/// A body is carried when the core tells its format from its shape, as a trace's reader must
/// (a body whose format only a name tells, or a call list, which is no provider's body, no
/// trace source carries).
#[test]
fn every_core_response_fixture_a_source_carries_gets_the_same_verdict() {
    let (mut problems, mut compared) = (Vec::new(), 0);
    for (name, format, body) in core_responses() {
        // A run's outputs and a generation's output are a provider's body: an object.
        if !body.is_object() || toolcall_score::provider::detect(&body).ok() != Some(format) {
            continue;
        }
        let Ok(response) = Response::from_value(&body, Some(format)) else {
            continue;
        };
        let calls: Vec<&str> = response.calls.iter().map(|c| c.name.as_str()).collect();
        let catalogs = [named(&calls), named(calls.get(1..).unwrap_or_default())];
        for tools in &catalogs {
            let want = alone(tools, &body, format).unwrap();
            for (source, text) in [
                ("langsmith", langsmith(tools, &body)),
                ("langfuse", langfuse(tools, &body)),
            ] {
                compared += 1;
                match through(&text) {
                    Ok(got) if got == [want.clone()] => {}
                    Ok(got) => problems.push(format!(
                        "{name} through {source} ({} tools): {got:?}, alone {want:?}",
                        tools.as_array().map_or(0, Vec::len)
                    )),
                    Err(e) => problems.push(format!("{name} through {source}: {e}")),
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared >= 100, "only {compared} comparisons");
}
