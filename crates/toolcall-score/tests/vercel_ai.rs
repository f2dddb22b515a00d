//! Real provider traffic: the 217 recorded responses and streams of the Vercel AI SDK's provider
//! tests (Anthropic, OpenAI Chat and Responses, Gemini and Vertex, Bedrock, OpenAI-compatible
//! providers; `../shared/external/vercel-ai`, whose README says what is true of each pair). Every
//! pair must read without an error — but for the streams that end in the provider's own error
//! event — with exactly the calls its manifest lists, and score with no finding at all: its tools
//! define every call by construction, so any finding is a false failure. Then a few of its
//! streams, one JSON chunk per line, with the names, ids and arguments of their calls.
//!
//! CI-only tier (feature `external-data`), reading `ATP_VERCEL_AI_DIR`.
//! Run with `cargo test -p toolcall-score --features external-data,schema --test vercel_ai`.

mod support;

use support::calls;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{json, Value};
use toolcall_score::{score, Arguments, Case, Catalog, Format, Response};

const VAR: &str = "ATP_VERCEL_AI_DIR";

fn data_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os(VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{VAR} is set to")),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/external/vercel-ai"),
            format!("{VAR} is not set; the default is"),
        ),
    };
    assert!(
        dir.join("manifest.json").is_file(),
        "{source} {}, which holds no manifest.json: set {VAR} to the vercel-ai data directory",
        dir.display()
    );
    dir
}

/// What reading and scoring one pair gave, against what its manifest says.
fn check(dir: &std::path::Path, pair: &Value) -> Result<(), String> {
    let pair_dir = dir.join(pair["dir"].as_str().ok_or("no dir")?);
    let response_path = pair_dir.join(pair["response_file"].as_str().ok_or("no response_file")?);
    let catalog = Catalog::load(&pair_dir.join("tools.json")).map_err(|e| e.to_string())?;
    let response = Response::load(&response_path, None);
    if pair["expect_error"].as_bool() == Some(true) || pair["expect_error"].is_string() {
        return match response {
            Err(_) => Ok(()),
            Ok(_) => Err("read, but the stream ends in the provider's error".into()),
        };
    }
    let response = response.map_err(|e| format!("not read: {e}"))?;
    // The manifest lists the distinct names of the caller's function calls, sorted, and their
    // number; the calls of the Responses built-in tools (`shell_call`, …) are under
    // `server_calls` there, by item type, whoever runs them.
    let strings = |key: &str| -> Vec<&str> {
        pair[key]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let (builtin, functions): (Vec<_>, Vec<_>) =
        response.calls.iter().partition(|c| c.builtin.is_some());
    let mut names: Vec<&str> = functions.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let expected = pair["n_client_calls"].as_u64().unwrap_or(0);
    if names != strings("called") || functions.len() as u64 != expected {
        return Err(format!(
            "{} call(s) named {names:?}; the manifest says {expected} named {:?}",
            functions.len(),
            strings("called")
        ));
    }
    let server = strings("server_calls");
    if let Some(call) = builtin
        .iter()
        .find(|c| !server.contains(&c.builtin.map_or("", |b| b.call_item())))
    {
        return Err(format!(
            "a built-in tool's call `{}` the manifest does not list",
            call.name
        ));
    }
    let verdict = score(&Case::from_catalog(catalog), &response);
    if !verdict.is_pass() {
        let mut why = String::from("findings:");
        for finding in verdict.findings() {
            let _ = write!(why, " [{finding}]");
        }
        return Err(why);
    }
    Ok(())
}

#[test]
fn every_pair_reads_with_its_calls_and_no_finding() {
    let dir = data_dir();
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("the manifest");
    let manifest: Vec<Value> = serde_json::from_str(&text).expect("the manifest is JSON");
    assert_eq!(manifest.len(), 217);
    let mut per_format: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for pair in &manifest {
        let kind = match pair["stream"].as_bool() {
            Some(true) => "stream",
            _ => "body",
        };
        let key = format!("{} {kind}", pair["format"].as_str().unwrap_or("?"));
        let tally = per_format.entry(key).or_default();
        tally.1 += 1;
        match check(&dir, pair) {
            Ok(()) => tally.0 += 1,
            Err(why) => wrong.push(format!("{}: {why}", pair["id"].as_str().unwrap_or("?"))),
        }
    }
    for (format, (right, all)) in &per_format {
        eprintln!("{format:<24} {right:>4} / {all}");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} pairs read wrong:\n{}",
        wrong.len(),
        manifest.len(),
        wrong.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Real streams, one JSON chunk per line as the SDK's tests keep them, with the calls each holds:
// every format's, Gemini's streamed function-call arguments, Bedrock's `ConverseStream` events.

/// The `response.chunks.txt` of the pair recorded from `name` (the source file's name).
fn real(name: &str) -> PathBuf {
    let dir = data_dir();
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("the manifest");
    let manifest: Vec<Value> = serde_json::from_str(&text).expect("the manifest is JSON");
    let pair = manifest
        .iter()
        .find(|p| {
            p["path"]
                .as_str()
                .is_some_and(|path| path.ends_with(&format!("/{name}")))
                && p["response_file"] == "response.chunks.txt"
        })
        .unwrap_or_else(|| panic!("no pair recorded from {name}"));
    dir.join(pair["dir"].as_str().expect("a dir"))
        .join("response.chunks.txt")
}

/// A real stream, read from its file, from its text and as the JSON array of its lines (how an
/// SDK dumps a stream): all three must give the same response.
fn read_real(name: &str) -> Response {
    let path = real(name);
    let loaded = Response::load(&path, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = std::fs::read_to_string(&path).expect("readable");
    let from_text = Response::from_json_str(&text, None).expect("from text");
    assert_eq!(from_text, loaded, "{name} from text");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let array = format!("[{}]", lines.join(",\n"));
    let from_array =
        Response::from_json_str(&array, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(from_array, loaded, "{name} as a JSON array");
    loaded
}

#[test]
fn real_chunks_one_per_line_are_their_formats_stream() {
    let chat = read_real("mistral-incremental-tool-call.chunks.txt");
    assert_eq!(chat.format, Format::OpenaiChat);
    assert_eq!(
        calls(&chat),
        [(
            "webSearchTool",
            Some("chatcmpl-tool-9f149c74c42f265b"),
            Some(json!({"query": "current Berlin weather"}))
        )]
    );
    assert_eq!(chat.stop_reason.as_deref(), Some("tool_calls"));

    let anthropic = read_real("anthropic-json-other-tool.1.chunks.txt");
    assert_eq!(anthropic.format, Format::Anthropic);
    assert_eq!(
        calls(&anthropic),
        [(
            "weather",
            Some("toolu_019Zvehfe1XQWweT1pm7okyt"),
            Some(json!({"location": "San Francisco"}))
        )]
    );
    assert_eq!(anthropic.stop_reason.as_deref(), Some("tool_use"));

    let responses = read_real("openai-custom-tool.1.chunks.txt");
    assert_eq!(responses.format, Format::OpenaiResponses);
    assert_eq!(responses.calls.len(), 1);
    assert_eq!(responses.calls[0].name, "write_sql");
    assert_eq!(
        responses.calls[0].id.as_deref(),
        Some("call_custom_sql_001")
    );
    assert_eq!(
        responses.calls[0].arguments,
        Arguments::Text {
            text: "SELECT * FROM users WHERE age > 25".into()
        }
    );

    let gemini = read_real("google-tool-call.chunks.txt");
    assert_eq!(gemini.format, Format::Gemini);
    assert_eq!(
        calls(&gemini),
        [("weather", None, Some(json!({"location": "San Francisco"})))]
    );
    assert_eq!(gemini.stop_reason.as_deref(), Some("STOP"));
}

#[test]
fn real_gemini_streamed_function_call_arguments_assemble_into_args() {
    // Two calls, each opened by a part with `name` and `willContinue`, its `partialArgs` in the
    // chunks after it, and ended by a bare `{"functionCall": {}}`.
    let response = read_real("google-stream-tool-call-arguments.chunks.txt");
    assert_eq!(response.format, Format::Gemini);
    assert_eq!(
        calls(&response),
        [
            ("getWeather", None, Some(json!({"location": "Boston"}))),
            (
                "getWeather",
                None,
                Some(json!({"location": "San Francisco"}))
            ),
        ]
    );
    assert_eq!(response.stop_reason.as_deref(), Some("STOP"));

    // Paths into an array of objects, numbers, and no terminal part: the last piece that does
    // not continue ends the call.
    let response = read_real(
        "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt",
    );
    assert_eq!(
        calls(&response),
        [(
            "writeItems",
            None,
            Some(json!({"operations": [
                {"action": "add", "description": "Fresh red apple", "itemid": "apple_001",
                 "price": 0.5},
                {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001",
                 "price": 0.3},
            ]}))
        )]
    );
}

#[test]
fn real_bedrock_converse_stream_events_assemble_into_a_converse_body() {
    let response = read_real("amazon-bedrock-tool-call.1.chunks.txt");
    assert_eq!(response.format, Format::Bedrock);
    assert_eq!(
        calls(&response),
        [(
            "test-tool",
            Some("tool-use-id"),
            Some(json!({"value": "Sparkle Day"}))
        )]
    );
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));

    // Text blocks without a `contentBlockStart`, between calls.
    let response = read_real("amazon-bedrock-json-with-tools.1.chunks.txt");
    assert_eq!(
        calls(&response),
        [
            ("tool-a", Some("tool-1"), Some(json!({"a": "1"}))),
            ("tool-b", Some("tool-2"), Some(json!({"b": "2"}))),
            (
                "json",
                Some("json-tool-id"),
                Some(json!({"final": "result"}))
            ),
        ]
    );
    assert_eq!(response.text, ["Multiple tools.", "Final JSON."]);

    // An empty `input` is a call without arguments.
    let response = read_real("amazon-bedrock-tool-no-args.chunks.txt");
    assert_eq!(
        calls(&response),
        [("updateIssueList", Some("tool-use-id"), Some(json!({})))]
    );
    assert_eq!(response.text, ["I'll update the issue list for you."]);
}

#[test]
fn real_spliced_message_start_gives_way_to_the_new_message() {
    // A message cut off by a new `message_start` (a retry spliced in) gives way to it.
    let response = read_real("spliced-message-start.chunks.txt");
    assert_eq!(
        calls(&response),
        [(
            "test-tool",
            Some("toolu_second"),
            Some(json!({"value": "Sparkle Day"}))
        )]
    );
}
