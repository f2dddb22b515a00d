//! The provider parsers, driven by the fixture files under `tests/fixtures/<format>/`.
//!
//! What a fixture is, is an input: each directory's `index.txt` has one line per `NAME.json`,
//! `NAME KIND [FORMAT]`. What it reads to is the output, an insta snapshot beside it,
//! `NAME.snap` (a change of reading is a snapshot diff, reviewed with `cargo insta review`):
//!
//! - `response`: the fixture is a response body, parsed by `Response::from_json_str` (with
//!   `FORMAT` named, else detected): its `format`, serialized `calls`, `text`, `stop_reason` and
//!   `anomalies`; or its `error` (the loader's message, line and column, and the value parser's
//!   JSON pointer); or `unknown_shape` (detection's reason) or `ambiguous` (the candidates).
//! - `request`: a case file, parsed by `Case::from_json_str`: its `format` (the named one, else
//!   the one told from the shapes), `system`, the tool names, and the transcript summarized one
//!   line per message (see [`summarize`]); or its `error`.
//! - `tools`: a tools array for `Catalog::from_json`: the names, and how many carry a schema.
//!
//! Then the never-panic property tests.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolcall_score::provider::{detect, parse_request, parse_response, parse_tools};
use toolcall_score::{
    locate, Case, Catalog, Format, InputError, Message, ParseError, Response, Role,
};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One line of a directory's `index.txt`: how its fixture is read.
struct Indexed {
    name: String,
    kind: String,
    /// The format named to a response's reader; `None`: detected.
    given: Option<Format>,
}

/// The fixtures a directory's `index.txt` lists, in its order. Panics on a malformed line.
fn index(dir: &Path) -> Vec<Indexed> {
    let path = dir.join("index.txt");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let given = words.get(2).map(|f| {
                f.parse::<Format>()
                    .unwrap_or_else(|e| panic!("{}: {line}: {e}", path.display()))
            });
            match words[..] {
                [name, kind] | [name, kind, _] => Indexed {
                    name: name.to_owned(),
                    kind: kind.to_owned(),
                    given,
                },
                _ => panic!("{}: {line}: expected NAME KIND [FORMAT]", path.display()),
            }
        })
        .collect()
}

/// The `NAME.json` fixtures of a directory, sorted.
fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut fixtures: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    fixtures.sort();
    fixtures
}

/// Runs every fixture of one directory against its snapshot; returns the kinds of fixture it
/// holds. Panics listing every failure: a fixture the index does not list, an index line with no
/// fixture, a fixture that does not read, a reading that differs from its snapshot.
fn run_dir(dir: &str) -> BTreeSet<String> {
    let path = fixtures_dir().join(dir);
    let indexed = index(&path);
    let mut failures = Vec::new();
    for fixture in fixture_files(&path) {
        let name = fixture.file_stem().unwrap_or_default().to_string_lossy();
        if !indexed.iter().any(|i| i.name == name) {
            failures.push(format!("{}: not listed in index.txt", fixture.display()));
        }
    }
    let mut kinds = BTreeSet::new();
    for Indexed { name, kind, given } in &indexed {
        let fixture = path.join(format!("{name}.json"));
        let Ok(text) = fs::read_to_string(&fixture) else {
            failures.push(format!(
                "{}: listed in index.txt, not found",
                fixture.display()
            ));
            continue;
        };
        kinds.insert(kind.clone());
        let reading = match kind.as_str() {
            "response" => read_response(&text, *given),
            "request" => read_request(&text),
            "tools" => read_tools(&text),
            other => Err(format!("unknown kind {other:?}")),
        };
        match reading {
            Ok(reading) => {
                if let Err(why) = assert_snapshot(&path, name, &reading) {
                    failures.push(format!("{}: {why}", fixture.display()));
                }
            }
            Err(why) => failures.push(format!("{}: {why}", fixture.display())),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    kinds
}

/// `reading` against `dir/NAME.snap`; a mismatch is returned, not raised, so one run shows
/// (and `cargo insta review` offers) every changed fixture.
fn assert_snapshot(dir: &Path, name: &str, reading: &Value) -> Result<(), String> {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_input_file(dir.join(format!("{name}.json")));
    settings
        .bind(|| {
            catch_unwind(AssertUnwindSafe(|| {
                insta::assert_json_snapshot!(name, reading);
            }))
        })
        .map_err(|_| format!("reads other than {name}.snap (see above; `cargo insta review`)"))
}

fn read_response(text: &str, given: Option<Format>) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let response = match Response::from_json_str(text, given) {
        Ok(response) => response,
        Err(InputError::Invalid {
            error: ParseError::UnknownShape { .. },
            ..
        }) => {
            // The loader's error is detection's, which says why.
            return match detect(&value) {
                Err(ParseError::UnknownShape { why }) => Ok(json!({ "unknown_shape": why })),
                other => Err(format!(
                    "the loader found an unknown shape, detect {other:?}"
                )),
            };
        }
        Err(loaded) => {
            if given.is_none() {
                if let Err(ParseError::Ambiguous { candidates }) = detect(&value) {
                    return Ok(json!({ "ambiguous": candidates }));
                }
            }
            return error_reading(loaded, parse_response(&value, given).err());
        }
    };
    if given.is_none() {
        let detected = detect(&value).map_err(|e| e.to_string())?;
        if detected != response.format {
            return Err(format!(
                "detected {detected}, parsed as {}",
                response.format
            ));
        }
    }
    let anomalies: Vec<Value> = response
        .anomalies
        .iter()
        .map(|a| json!({"kind": a.kind, "detail": a.detail}))
        .collect();
    Ok(json!({
        "format": response.format,
        "calls": response.calls,
        "text": response.text,
        "stop_reason": response.stop_reason,
        "anomalies": anomalies,
    }))
}

/// One line per message: role, `text=N`, `call=[namespace/]name#id[[text]|[builtin]]` (`[text]`:
/// a custom tool call's free-text input; `[builtin]`: a Responses built-in tool's call),
/// `result=id|name[!error]`.
fn summarize(message: &Message) -> String {
    let mut line = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
    .to_owned();
    if !message.text.is_empty() {
        line.push_str(&format!(" text={}", message.text.len()));
    }
    for call in &message.calls {
        let namespace = call
            .namespace
            .as_deref()
            .map(|n| format!("{n}/"))
            .unwrap_or_default();
        let id = call.id.as_deref().unwrap_or("-");
        let text = if call.arguments.text().is_some() {
            "[text]"
        } else if call.builtin.is_some() {
            "[builtin]"
        } else {
            ""
        };
        line.push_str(&format!(" call={namespace}{}#{id}{text}", call.name));
    }
    for result in &message.results {
        let what = result
            .call_id
            .as_deref()
            .or(result.name.as_deref())
            .unwrap_or("-");
        let error = if result.is_error { "!error" } else { "" };
        line.push_str(&format!(" result={what}{error}"));
    }
    line
}

fn read_request(text: &str) -> Result<Value, String> {
    let case = match Case::from_json_str(text) {
        Ok(case) => case,
        Err(loaded) => {
            let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
            return error_reading(loaded, Case::from_value(&value).err());
        }
    };
    Ok(json!({
        "format": case.format.or(case.request_format),
        "system": case.system,
        "tools": case.catalog.names().collect::<Vec<_>>(),
        "transcript": case.transcript.messages.iter().map(summarize).collect::<Vec<_>>(),
    }))
}

fn read_tools(text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let catalog = Catalog::from_json(&value).map_err(|e| e.to_string())?;
    let with_schema = catalog
        .tools()
        .iter()
        .filter(|t| t.input_schema.is_some())
        .count();
    Ok(json!({
        "tools": catalog.names().collect::<Vec<_>>(),
        "with_schema": with_schema,
    }))
}

/// An error must come from the value parser too; the loader's names the line and column, the
/// value parser's the pointer.
fn error_reading(loaded: InputError, from_value: Option<ParseError>) -> Result<Value, String> {
    let from_value = from_value.ok_or(format!(
        "the loader failed ({loaded}), the value parser did not"
    ))?;
    let location = loaded
        .location()
        .ok_or_else(|| format!("no location in {loaded}"))?;
    Ok(json!({"error": {
        "message": loaded.to_string(),
        "line": location.line,
        "column": location.column,
        "pointer": from_value.pointer(),
    }}))
}

/// A fixture's JSON; `None` when it is missing or not JSON (`run_dir` reports those).
fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// A format's fixture directory under `tests/fixtures/`: its name, `_` for `-`.
fn dir_of(format: Format) -> String {
    format.as_str().replace('-', "_")
}

/// Completeness: every registered format has its fixture directory, holding at least a response
/// and a tools or request fixture, and every fixture reads as its snapshot says. A new format
/// fails here until it has them.
#[test]
fn every_format_reads_its_fixtures() {
    for format in Format::ALL {
        let dir = dir_of(format);
        let kinds = run_dir(&dir);
        assert!(
            kinds.contains("response"),
            "{format}: tests/fixtures/{dir}/ holds no response fixture"
        );
        assert!(
            kinds.contains("tools") || kinds.contains("request"),
            "{format}: tests/fixtures/{dir}/ holds no tools or request fixture"
        );
    }
}

/// Completeness of every format's request half: each format that has requests (all but call
/// lists) has a request fixture in `tests/fixtures/<format>/` that, read with the format named,
/// has tools, a system prompt and a non-empty transcript. A format whose requests read empty
/// (its members not declared, or read by another format's readers) fails here, by name.
#[test]
fn every_format_reads_a_whole_request_of_its_own() {
    const NO_REQUESTS: [Format; 1] = [Format::CallList];
    for format in Format::ALL {
        if NO_REQUESTS.contains(&format) {
            continue;
        }
        let dir = fixtures_dir().join(dir_of(format));
        let whole = index(&dir)
            .into_iter()
            .filter(|fixture| fixture.kind == "request")
            .filter_map(|fixture| read_json(&dir.join(format!("{}.json", fixture.name))))
            .filter_map(|value| parse_request(&value, Some(format)).ok())
            .any(|request| {
                !request.tools.is_empty()
                    && request.system.is_some()
                    && !request.transcript.messages.is_empty()
            });
        assert!(
            whole,
            "{format}: no request fixture in {} reads, with the format named, to tools, a \
             system prompt and a transcript",
            dir.display()
        );
    }
}

#[test]
fn detection_fixtures() {
    assert!(run_dir("detect").contains("response"));
}

#[test]
fn every_fixture_directory_is_run() {
    let mut dirs: Vec<String> = fs::read_dir(fixtures_dir())
        .expect("the fixtures directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    dirs.sort();
    // One per format, `detect`, `stream` (run by `stream.rs`: streams beside the bodies
    // they assemble into) and `answers` (the loop guard's answers in each format, pinned by
    // `tool_loop/encode.rs`) and `lint` (real prompts, read by `lint.rs`).
    let mut expected: Vec<String> = Format::ALL.into_iter().map(dir_of).collect();
    expected.extend(["answers", "detect", "lint", "stream"].map(str::to_owned));
    expected.sort();
    assert_eq!(dirs, expected);
}

/// Completeness: every registered format is detected, with no format named, from at least one
/// of its own response fixtures.
#[test]
fn every_format_is_detected_from_its_fixture() {
    for format in Format::ALL {
        let dir = fixtures_dir().join(dir_of(format));
        let detected = index(&dir)
            .into_iter()
            .filter(|fixture| fixture.kind == "response" && fixture.given.is_none())
            .filter_map(|fixture| read_json(&dir.join(format!("{}.json", fixture.name))))
            .any(|value| detect(&value).ok() == Some(format));
        assert!(
            detected,
            "{format}: no fixture in {} is detected as it",
            dir.display()
        );
    }
}

#[test]
fn unknown_and_ambiguous_shapes_are_clear_errors() {
    let unknown = Response::from_json_str(r#"{"answer": 42}"#, None).unwrap_err();
    let message = unknown.to_string();
    assert!(
        message.contains("found an object with keys [answer]"),
        "{message}"
    );
    assert!(message.contains("name the format explicitly"), "{message}");

    let both = json!({"type": "message", "content": [], "candidates": []});
    assert_eq!(
        detect(&both),
        Err(ParseError::Ambiguous {
            candidates: vec![Format::Anthropic, Format::Gemini]
        })
    );
    // Naming the format resolves it.
    let response = parse_response(&both, Some(Format::Anthropic)).expect("parses");
    assert!(response.calls.is_empty());
}

#[test]
fn tools_of_every_format_can_be_mixed_in_one_array() {
    let tools = json!([
        {"name": "a", "description": "A.", "input_schema": {"type": "object"}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}},
        {"type": "function", "name": "c", "parameters": {"type": "object"}},
        {"functionDeclarations": [{"name": "d"}, {"name": "e", "parametersJsonSchema": {}}]},
        {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}},
        {"name": "g", "inputSchema": {"type": "object"}},
        {"name": "h", "parameters": {"type": "object"}},
        {"type": "web_search"},
        {"googleSearch": {}},
        {"type": "custom", "name": "i", "description": "Free text."},
        {"type": "custom", "custom": {"name": "j", "description": "Chat's custom tool.",
                                      "format": {"type": "text"}}}
    ]);
    let parsed = parse_tools(&tools).expect("parses");
    let names: Vec<&str> = parsed.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
    assert_eq!(parsed[9].description, "Chat's custom tool.");
    let schemas: Vec<bool> = parsed.iter().map(|t| t.input_schema.is_some()).collect();
    assert_eq!(
        schemas,
        [true, true, true, false, true, true, true, true, false, false]
    );
}

#[test]
fn tools_errors_carry_the_pointer() {
    let cases = [
        (json!([{"name": "a"}, {"description": "no name"}]), "/1"),
        (
            json!([{"type": "function", "function": {"name": 7}}]),
            "/0/function/name",
        ),
        (
            json!({"tools": [{"toolSpec": {"name": "x", "inputSchema": 3}}]}),
            "/tools/0/toolSpec/inputSchema",
        ),
        (
            json!([{"functionDeclarations": [{"name": null}]}]),
            "/0/functionDeclarations/0/name",
        ),
        (json!("get_balance"), ""),
    ];
    for (value, pointer) in cases {
        let error = parse_tools(&value).expect_err("an error");
        assert_eq!(error.pointer(), Some(pointer), "{value}: {error}");
    }
}

#[test]
fn request_format_is_told_only_from_distinctive_shapes() {
    let plain = json!({"messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(parse_request(&plain, None).expect("parses").format, None);
    // OpenAI-style tools fit OpenAI Chat and Ollama alike; string arguments decide.
    let tools = json!([{"type": "function", "function": {"name": "f"}}]);
    let request = json!({"tools": tools, "messages": [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "function": {"name": "f", "arguments": "{}"}}]}
    ]});
    let parsed = parse_request(&request, None).expect("parses");
    assert_eq!(parsed.format, Some(Format::OpenaiChat));
    // Shapes of two formats in one request: no single format.
    let mixed = json!({"tools": [{"name": "f", "input_schema": {}}], "contents": []});
    assert_eq!(parse_request(&mixed, None).expect("parses").format, None);
}

#[test]
fn request_errors_carry_the_pointer() {
    let cases = [
        (json!({"messages": {"role": "user"}}), "/messages"),
        (json!({"messages": [], "contents": []}), "/contents"),
        (json!({"system": 3}), "/system"),
        (json!({"instructions": ["x"]}), "/instructions"),
        (json!({"toolConfig": {"tools": {}}}), "/toolConfig/tools"),
        (
            json!({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}),
            "/contents/0/parts/0/functionCall/name",
        ),
        (
            json!({"input": [{"type": "function_call", "name": "f", "arguments": {}}]}),
            "/input/0/arguments",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"toolResult": {"content": "x"}}]}]}),
            "/messages/0/content/0/toolResult/content",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "is_error": "yes"}]}]}),
            "/messages/0/content/0/is_error",
        ),
    ];
    for (value, pointer) in cases {
        let error = parse_request(&value, None).expect_err("an error");
        assert_eq!(error.pointer(), Some(pointer), "{value}: {error}");
    }
    // A named format rejects another format's calls instead of dropping them.
    let openai_in_anthropic = json!({"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}
    ]});
    let error = parse_request(&openai_in_anthropic, Some(Format::Anthropic)).expect_err("error");
    assert_eq!(error.pointer(), Some("/messages/0/tool_calls"));
}

#[test]
fn ollama_named_format_keeps_string_arguments_as_strings() {
    let request = json!({"messages": [
        {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{\"a\": 1}"}}]}
    ]});
    let calls = |format| {
        let parsed = parse_request(&request, format).expect("parses");
        let call = parsed.transcript.calls().next().expect("a call").clone();
        call.arguments
    };
    assert_eq!(
        calls(Some(Format::Ollama)).value(),
        Some(&json!("{\"a\": 1}"))
    );
    assert_eq!(calls(None).value(), Some(&json!({"a": 1})));
}

/// Reads a fixture (a real body; its source is cited in the test that uses it).
fn fixture(file: &str) -> String {
    fs::read_to_string(fixtures_dir().join(file)).expect("a readable fixture")
}

/// OpenAI Chat's deprecated `functions` is still accepted by the API (openai-python's
/// `CompletionCreateParams.functions`, "Deprecated in favor of `tools`"), and a request using it
/// is answered by the legacy `function_call`. Its definitions are the catalog: dropping them made
/// every legacy call an unknown tool. Body: OpenAI's June 2023 function-calling guide
/// (platform.openai.com/docs/guides/gpt/function-calling).
#[test]
fn legacy_chat_functions_are_the_catalog() {
    let case =
        Case::from_json_str(&fixture("openai_chat/request-legacy-functions.json")).expect("parses");
    let tools = case.catalog.tools();
    assert_eq!(
        case.catalog.names().collect::<Vec<_>>(),
        ["get_current_weather"]
    );
    assert!(tools[0].input_schema.is_some());
    assert_eq!(
        tools[0].description,
        "Get the current weather in a given location"
    );
    assert_eq!(case.request_format, Some(Format::OpenaiChat));
    let not_an_array = json!({"functions": {"name": "f"}});
    let error = parse_request(&not_an_array, None).expect_err("an error");
    assert_eq!(error.pointer(), Some("/functions"));
}

/// The Responses API's built-in tools the caller's loop runs are declared by `type` alone
/// (openai-python `types/responses/tool.py`: `shell`, `apply_patch`, `local_shell`,
/// `computer_use_preview`, `computer`): each is catalogued under the name its calls carry, with no
/// schema, both computer-use types as `computer`. Hosted tools stay out of the catalog.
#[test]
fn responses_builtin_tools_are_named_after_their_type() {
    let tools = json!([
        {"type": "shell"},
        {"type": "apply_patch"},
        {"type": "local_shell"},
        {"type": "computer_use_preview", "display_width": 1024, "display_height": 768,
         "environment": "browser"},
        {"type": "web_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}}
    ]);
    let parsed = parse_tools(&tools).expect("parses");
    let names: Vec<&str> = parsed.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["shell", "apply_patch", "local_shell", "computer"]);
    assert!(parsed.iter().all(|t| t.input_schema.is_none()));
    let ga = parse_tools(&json!([{"type": "computer"}])).expect("parses");
    assert_eq!(ga[0].name, "computer");
    let request = parse_request(&json!({"tools": [{"type": "shell"}]}), None).expect("parses");
    assert_eq!(request.format, Some(Format::OpenaiResponses));
}

/// Bedrock system tools (`toolConfig.tools[].systemTool`) are tools Bedrock provides and runs
/// itself, as Nova's code interpreter and web grounding: the request is valid and names them,
/// and a `toolUse` typed `server_tool_use` is Bedrock running one, not a call for the caller's
/// loop. Bodies: https://docs.aws.amazon.com/nova/latest/userguide/tool-built-in.html (the
/// request and the `toolUse` block) and .../nova/latest/userguide/grounding.html.
#[test]
fn bedrock_system_tools_are_named_and_their_runs_are_not_calls() {
    let case = Case::from_json_str(&fixture("bedrock/request-system-tool.json")).expect("parses");
    assert_eq!(
        case.catalog.names().collect::<Vec<_>>(),
        ["nova_code_interpreter"]
    );
    let grounding = json!({"toolConfig": {"tools": [{"systemTool": {"name": "nova_grounding"}}]}});
    let request = parse_request(&grounding, None).expect("parses");
    assert_eq!(
        request.tools.names().collect::<Vec<_>>(),
        ["nova_grounding"]
    );
    assert_eq!(request.format, Some(Format::Bedrock));

    let response =
        Response::from_json_str(&fixture("bedrock/server-tool-use.json"), None).expect("parses");
    assert!(response.calls.is_empty(), "{:?}", response.calls);
    // Replayed in a transcript, the server's run is not the assistant's call either.
    let replayed: Value =
        serde_json::from_str(&fixture("bedrock/server-tool-use.json")).expect("JSON");
    let transcript = json!({"messages": [replayed["output"]["message"]]});
    let request = parse_request(&transcript, None).expect("parses");
    assert_eq!(request.transcript.calls().count(), 0);
}

/// A case that names its format `bedrock` reads Bedrock's own content blocks, which carry no
/// `type` (they are keyed by kind: `text`, `toolUse`, `toolResult`); a typed block is what it
/// refuses.
#[test]
fn a_case_named_bedrock_reads_its_untyped_blocks() {
    let case = json!({"format": "bedrock", "messages": [
        {"role": "user", "content": [{"text": "Top song on WZPZ?"}]},
        {"role": "assistant", "content": [{"text": "Looking."},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "top_song", "input": {"sign": "WZPZ"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1",
            "content": [{"json": {"song": "Elemental Hotel"}}]}}]}
    ]});
    let case = Case::from_value(&case).expect("a bedrock case reads");
    assert_eq!(case.transcript.calls().count(), 1);
    assert_eq!(case.transcript.messages[0].text, ["Top song on WZPZ?"]);
    let typed = json!({"format": "bedrock", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]});
    let error = Case::from_value(&typed).expect_err("a typed block is not Bedrock's");
    assert_eq!(error.pointer(), Some("/messages/0/content/0"));
}

/// Gemini's `Tool` has more built-in kinds than function declarations, none of them with a name
/// (googleapis' genai SDKs: `parallelAiSearch`, `enterpriseWebSearch`, `exaAiSearch`,
/// `mcpServers`, and the Python SDK's snake_case spellings): a request using one is valid and
/// adds nothing to the catalog. Body: Vertex AI's grounding with Parallel
/// (https://docs.cloud.google.com/vertex-ai/generative-ai/docs/grounding/grounding-with-parallel).
#[test]
fn gemini_grounding_tools_are_skipped_not_rejected() {
    let case =
        Case::from_json_str(&fixture("gemini/request-parallel-grounding.json")).expect("parses");
    assert_eq!(case.catalog.names().count(), 0);
    assert_eq!(case.request_format, Some(Format::Gemini));
    let tools = json!([
        {"function_declarations": [{"name": "get_weather"}]},
        {"enterprise_web_search": {}},
        {"parallel_ai_search": {}}
    ]);
    let parsed = parse_tools(&tools).expect("parses");
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].name, "get_weather");
}

mod never_panics {
    //! Malformed input never panics: arbitrary JSON values (biased toward the keys and values
    //! the parsers look for), real fixtures with one sub-value replaced, and arbitrary bytes, run
    //! through every entry point. Case counts are fixed so the suite takes a few seconds.

    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::Config;

    const KEYS: &[&str] = &[
        "type",
        "content",
        "choices",
        "message",
        "tool_calls",
        "function",
        "function_call",
        "name",
        "arguments",
        "input",
        "candidates",
        "parts",
        "functionCall",
        "functionResponse",
        "args",
        "output",
        "toolUse",
        "toolResult",
        "toolSpec",
        "stopReason",
        "done",
        "role",
        "text",
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "tools",
        "messages",
        "contents",
        "system",
        "systemInstruction",
        "instructions",
        "toolConfig",
        "functionDeclarations",
        "inputSchema",
        "input_schema",
        "parameters",
        "finishReason",
        "finishMessage",
        "object",
        "status",
        "method",
        "params",
        "result",
        "is_error",
        "response",
        "namespace",
        "error",
        "refusal",
        "format",
        "parent_tools",
        "expect",
        "about",
        "json",
        "thought",
        "incomplete_details",
        "reason",
        "promptFeedback",
    ];

    const STRINGS: &[&str] = &[
        "message",
        "tool_use",
        "tool_result",
        "text",
        "function",
        "function_call",
        "function_call_output",
        "chat.completion",
        "chat.completion.chunk",
        "response",
        "assistant",
        "user",
        "tool",
        "system",
        "model",
        "developer",
        "namespace",
        "UNEXPECTED_TOOL_CALL",
        "MALFORMED_FUNCTION_CALL",
        "malformed_tool_use",
        "tools/call",
        "{}",
        "{\"a\": 1}",
        "[1",
        "not json",
        "anthropic",
        "gemini",
        "ollama",
        "no_call",
        "",
        "get_balance",
        "a/b~c",
        "\u{1b}[31m",
    ];

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            prop::sample::select(STRINGS).prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(KEYS).prop_map(str::to_owned),
            1 => "[a-z_]{0,6}",
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(key(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Every fixture, parsed (read once per test binary).
    fn fixtures() -> &'static [Value] {
        static FIXTURES: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
        FIXTURES.get_or_init(read_fixtures)
    }

    fn read_fixtures() -> Vec<Value> {
        let mut values = Vec::new();
        for dir in fs::read_dir(fixtures_dir()).expect("fixtures") {
            for file in fs::read_dir(dir.expect("entry").path()).expect("a directory") {
                let path = file.expect("entry").path();
                // Recorded streams (`.sse`, `.ndjson`) are not JSON documents.
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let text = fs::read_to_string(&path).expect("readable");
                values.push(serde_json::from_str(&text).expect("fixtures are JSON"));
            }
        }
        values
    }

    /// The recorded streams of `fixtures/stream/` (read once per test binary).
    fn streams() -> &'static [String] {
        static STREAMS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        STREAMS.get_or_init(|| {
            let mut streams = Vec::new();
            for file in fs::read_dir(fixtures_dir().join("stream")).expect("the stream fixtures") {
                let path = file.expect("entry").path();
                if path
                    .extension()
                    .is_some_and(|e| e == "sse" || e == "ndjson")
                {
                    streams.push(fs::read_to_string(&path).expect("readable"));
                }
            }
            streams
        })
    }

    /// Replaces the value reached by following `path` (each step picks a child modulo the
    /// container's size) with `replacement`.
    fn mutate(mut value: Value, path: &[usize], replacement: Value) -> Value {
        replace_at(&mut value, path, replacement);
        value
    }

    fn replace_at(value: &mut Value, path: &[usize], replacement: Value) {
        let Some((step, rest)) = path.split_first() else {
            *value = replacement;
            return;
        };
        match value {
            Value::Array(items) if !items.is_empty() => {
                let len = items.len();
                replace_at(&mut items[step % len], rest, replacement);
            }
            Value::Object(map) if !map.is_empty() => {
                let len = map.len();
                if let Some(child) = map.values_mut().nth(step % len) {
                    replace_at(child, rest, replacement);
                }
            }
            _ => *value = replacement,
        }
    }

    /// Everything that can be done with one value; panics are the failure.
    fn exercise(value: &Value) {
        let text = value.to_string();
        let detected = detect(value);
        for format in std::iter::once(None).chain(Format::ALL.map(Some)) {
            let parsed = parse_response(value, format);
            if let (None, Ok(response)) = (format, &parsed) {
                assert_eq!(detected.as_ref().ok(), Some(&response.format));
            }
            if let Err(error) = &parsed {
                assert_pointer_is_inside(value, error);
            }
            assert_text_path_agrees(&text, format);
            if let Err(error) = parse_request(value, format) {
                assert_pointer_is_inside(value, &error);
            }
        }
        let _ = Case::from_json_str(&text);
        if let Err(error) = Catalog::from_json(value) {
            assert_pointer_is_inside(value, &error);
        }
    }

    /// Parsing text (which takes the single-pass reader where it can) gives what the general
    /// path gives over the `Value` of the same text, or fails where it fails.
    fn assert_text_path_agrees(text: &str, format: Option<Format>) {
        let general = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|value| parse_response(&value, format).ok());
        assert_eq!(
            Response::from_json_str(text, format).ok(),
            general,
            "{text}"
        );
    }

    /// An error's pointer names a value in the document, or a missing key of one.
    fn assert_pointer_is_inside(value: &Value, error: &ParseError) {
        let Some(pointer) = error.pointer() else {
            return;
        };
        let parent = pointer.rfind('/').map_or("", |at| &pointer[..at]);
        assert!(
            value.pointer(pointer).is_some() || value.pointer(parent).is_some(),
            "{error} points outside {value}"
        );
        assert!(locate(&value.to_string(), pointer).is_some());
    }

    proptest! {
        #![proptest_config(Config { cases: 600, ..Config::default() })]

        #[test]
        fn arbitrary_values(value in json_value()) {
            exercise(&value);
        }

        #[test]
        fn fixtures_with_one_value_replaced(
            index in any::<prop::sample::Index>(),
            path in prop::collection::vec(any::<usize>(), 0..8),
            replacement in json_value(),
        ) {
            let all = fixtures();
            let fixture = all[index.index(all.len())].clone();
            exercise(&mutate(fixture, &path, replacement));
        }

        #[test]
        fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let text = String::from_utf8_lossy(&bytes);
            assert_text_path_agrees(&text, None);
            let _ = Case::from_json_str(&text);
            if let Ok(value) = serde_json::from_str::<Value>(&text) {
                exercise(&value);
            }
        }

        #[test]
        fn stream_text_with_bytes_flipped(
            index in any::<prop::sample::Index>(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let all = streams();
            let mut text = all[index.index(all.len())].clone().into_bytes();
            for (at, byte) in flips {
                let i = at.index(text.len());
                text[i] = byte;
            }
            let text = String::from_utf8_lossy(&text);
            for format in std::iter::once(None).chain(Format::ALL.map(Some)) {
                if let Err(error) = Response::from_json_str(&text, format) {
                    let location = error.location().expect("a stream's errors have a place");
                    assert!(location.line <= text.matches('\n').count() + 1, "{error}");
                }
            }
        }

        #[test]
        fn fixture_text_with_bytes_flipped(
            index in any::<prop::sample::Index>(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let all = fixtures();
            let mut text = all[index.index(all.len())].to_string().into_bytes();
            for (at, byte) in flips {
                let i = at.index(text.len());
                text[i] = byte;
            }
            let text = String::from_utf8_lossy(&text);
            for format in std::iter::once(None).chain(Format::ALL.map(Some)) {
                assert_text_path_agrees(&text, format);
            }
            let _ = Case::from_json_str(&text);
        }
    }
}

/// A body read as a format it is not says which format its shape is, keeping the place of the
/// first thing that did not fit.
#[test]
fn a_body_named_as_another_format_says_which_it_is() {
    let text = "{\n  \"object\": \"chat.completion\",\n  \"choices\": [{\"index\": 0,\n    \"message\": {\"role\": \"assistant\", \"content\": \"hi\"}}]\n}";
    let error = Response::from_json_str(text, Some(Format::Anthropic)).expect_err("not anthropic");
    let message = error.to_string();
    assert!(
        message.ends_with(
            "the body's shape is openai-chat's, not anthropic's: name openai-chat, or leave the \
             format out to detect it"
        ),
        "{message}"
    );
    assert!(message.contains("at /content"), "{message}");
    // Read as what it is, or detected, it is fine.
    assert!(Response::from_json_str(text, Some(Format::OpenaiChat)).is_ok());
    assert!(Response::from_json_str(text, None).is_ok());
    // A body of the named format that is merely wrong keeps its own error, with no hint.
    let broken = r#"{"type": "message", "role": "assistant", "content": 7}"#;
    let message = Response::from_json_str(broken, Some(Format::Anthropic))
        .expect_err("content is not an array")
        .to_string();
    assert!(!message.contains("shape is"), "{message}");
}

/// Every format's example (what `toolcall init --format` writes) is a case that loads, and a
/// response detected as that format that calls a defined tool; renamed by one letter, the call
/// is an unknown name with its did-you-mean. A new format's example is checked as it is added.
#[test]
fn every_format_has_an_example_that_passes_and_can_fail() {
    for format in Format::ALL {
        let example = format.example();
        let case = Case::from_json_str(example.request)
            .unwrap_or_else(|e| panic!("{format}: the example request: {e}"));
        assert!(
            case.catalog.len() >= 2,
            "{format}: a catalog to choose from"
        );
        let response = Response::from_json_str(example.response, None)
            .unwrap_or_else(|e| panic!("{format}: the example response: {e}"));
        assert_eq!(response.format, format, "detected as its own format");
        assert!(
            !response.calls.is_empty(),
            "{format}: the example calls a tool"
        );
        let verdict = toolcall_score::score(&case, &response);
        assert!(
            verdict.is_pass() && verdict.notes().is_empty(),
            "{format}: {verdict}"
        );

        let typo = example
            .response
            .replace("\"get_invoice\"", "\"get_invoices\"");
        let response = Response::from_json_str(&typo, None).unwrap();
        let verdict = toolcall_score::score(&case, &response);
        assert_eq!(
            verdict.fingerprint(),
            ["get_invoices (invented)"],
            "{format}: {verdict}"
        );
        assert_eq!(
            verdict.findings()[0].suggestions()[0],
            "get_invoice",
            "closest first"
        );
    }
}

/// Cohere v1's `parameter_definitions` are its own schema language (Python type names,
/// `required: true`), checked as the JSON Schema they mean.
#[cfg(feature = "schema")]
#[test]
fn cohere_v1_parameter_definitions_are_checked_as_json_schema() {
    let case = Case::from_json_str(Format::CohereV1.example().request).expect("the example reads");
    let tool = case.catalog.get("get_invoice").expect("defined");
    assert_eq!(
        tool.schema_dialect,
        toolcall_score::SchemaDialect::Native(Format::CohereV1)
    );
    let answer = |parameters: &str| {
        let body = format!(
            r#"{{"text": "", "generation_id": "g1", "finish_reason": "COMPLETE",
                "tool_calls": [{{"name": "get_invoice", "parameters": {parameters}}}]}}"#
        );
        let response = Response::from_json_str(&body, None).expect("a v1 body");
        assert_eq!(response.format, Format::CohereV1);
        toolcall_score::score(&case, &response)
    };
    assert!(answer(r#"{"invoice_id": "inv_1042"}"#).is_pass());
    for wrong in [r#"{"invoice_id": 1042}"#, "{}"] {
        let verdict = answer(wrong);
        assert!(!verdict.is_pass(), "{wrong}");
        assert_eq!(
            verdict.findings()[0].kind,
            toolcall_score::FindingKind::SchemaViolation,
            "{wrong}"
        );
    }
}
