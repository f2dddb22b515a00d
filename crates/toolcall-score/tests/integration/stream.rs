//! Recorded streams, driven by `tests/fixtures/stream/`: every `NAME.sse`, `NAME.ndjson` and
//! `NAME.chunks.json` there must parse to exactly the `Response` its hand-written non-streamed
//! body `NAME.body.json` parses to. Then what differs from a plain body: cut-short streams,
//! arguments that do not parse, and errors with their positions in the stream's text. Last,
//! streams as SDK tests and loggers keep them, one JSON chunk per line: every format's, Gemini's
//! streamed function-call arguments and Bedrock's `ConverseStream` events. These are written
//! here to each provider's documented event shapes; the real recordings they follow (the Vercel
//! AI SDK's) are read by the external-data suite `tests/vercel_ai.rs`.

use crate::support::{calls, read_lines};

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use toolcall_score::{score, Arguments, Case, Format, InputError, ParseError, Response};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stream")
}

fn read(name: &str) -> String {
    let path = dir().join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The stream and its body parse to the same response, detected and with the format named.
fn assert_same(stream: &str, body: &str, format: Format) -> Response {
    let text = read(stream);
    let streamed = Response::from_json_str(&text, None).unwrap_or_else(|e| panic!("{stream}: {e}"));
    let plain =
        Response::from_json_str(&read(body), None).unwrap_or_else(|e| panic!("{body}: {e}"));
    assert_eq!(streamed, plain, "{stream}");
    assert_eq!(streamed.format, format, "{stream}");
    let named = Response::from_json_str(&text, Some(format)).expect("the named format reads it");
    assert_eq!(named, plain, "{stream} with its format named");
    let loaded = Response::load(&dir().join(stream), None).expect("the file loads");
    assert_eq!(loaded, plain, "{stream} loaded");
    streamed
}

#[test]
fn every_stream_fixture_matches_its_body() {
    let mut streams: Vec<String> = fs::read_dir(dir())
        .expect("the stream fixtures")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_file()))
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| !name.ends_with(".body.json"))
        .collect();
    streams.sort();
    // Each streamed format has at least one (`every_streamed_format_has_a_stream_fixture`).
    assert!(!streams.is_empty());
    for stream in &streams {
        let stem = stream.split('.').next().expect("a name");
        let body = format!("{stem}.body.json");
        let text = read(&body);
        let format = Response::from_json_str(&text, None)
            .unwrap_or_else(|e| panic!("{body}: {e}"))
            .format;
        assert_same(stream, &body, format);
    }
}

/// Completeness: every registered format that has a stream has a stream fixture here beside
/// the body it assembles into (`<format>-<name>.<sse|ndjson|chunks.json>`); the formats that have
/// none are listed. A new format fails here until it has one or is listed.
#[test]
fn every_streamed_format_has_a_stream_fixture() {
    const NOT_STREAMED: [Format; 1] = [Format::CallList];
    for format in Format::ALL {
        let prefix = format!("{format}-");
        let has_fixture = fs::read_dir(dir())
            .expect("the stream fixtures")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .any(|name| name.starts_with(&prefix) && !name.ends_with(".body.json"));
        assert_eq!(
            format.streams(),
            !NOT_STREAMED.contains(&format),
            "{format}: streamed, or listed as not"
        );
        assert_eq!(
            has_fixture,
            format.streams(),
            "{format}: a streamed format needs tests/fixtures/stream/{prefix}*, a stream beside \
             the body it assembles into"
        );
    }
}

#[test]
fn openai_chat_parallel_calls_merge_by_index() {
    let response = assert_same(
        "openai-chat-parallel.sse",
        "openai-chat-parallel.body.json",
        Format::OpenaiChat,
    );
    let calls: Vec<(&str, Option<&str>, _)> = response
        .calls
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.id.as_deref(),
                c.arguments.value().cloned(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "get_weather",
                Some("call_qOfTGgDrItLORNfC6VwUbyLL"),
                Some(json!({"location": "Shanghai"}))
            ),
            (
                "get_weather",
                Some("call_Xs9vJ2kQm81pLrT0aZcWfH3e"),
                Some(json!({"location": "Paris"}))
            ),
        ]
    );
    assert_eq!(response.text, ["Checking both cities."]);
    assert_eq!(response.stop_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn anthropic_split_input_json_is_the_tool_input() {
    let response = assert_same(
        "anthropic-tool-use.sse",
        "anthropic-tool-use.body.json",
        Format::Anthropic,
    );
    assert_eq!(
        response.calls[0].arguments,
        Arguments::Parsed(json!({"location": "San Francisco, CA", "unit": "fahrenheit"}))
    );
    // No `input_json_delta` at all: the start's `{}`.
    assert_eq!(response.calls[1].arguments, Arguments::Parsed(json!({})));
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
}

#[test]
fn a_responses_stream_cut_short_keeps_its_items() {
    let response = assert_same(
        "openai-responses-cut-short.sse",
        "openai-responses-cut-short.body.json",
        Format::OpenaiResponses,
    );
    assert_eq!(response.text, ["Let me look that up."]);
    assert_eq!(response.calls[0].name, "search_orders");
    assert_eq!(response.stop_reason.as_deref(), Some("in_progress"));
}

#[test]
fn gemini_chunks_as_sse_and_as_a_json_array() {
    let response = assert_same(
        "gemini-function-call.chunks.json",
        "gemini-function-call.body.json",
        Format::Gemini,
    );
    assert_eq!(response.text, ["I'll turn on the lights."]);
    assert_eq!(response.calls.len(), 2);
    assert_eq!(response.stop_reason.as_deref(), Some("STOP"));
}

#[test]
fn ollama_ndjson_collects_tool_calls() {
    let response = assert_same(
        "ollama-tool-calls.ndjson",
        "ollama-tool-calls.body.json",
        Format::Ollama,
    );
    let names: Vec<&str> = response.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_current_weather", "get_current_weather"]);
    assert_eq!(response.text, ["I'll check the weather."]);
}

#[test]
fn an_unknown_tool_in_a_stream_is_found() {
    let case = Case::from_value(&json!({
        "tools": [{"type": "function", "function": {"name": "get_weather",
                   "parameters": {"type": "object"}}}],
        "messages": [{"role": "user", "content": "Weather in Shanghai and Paris, and the time?"}]
    }))
    .expect("the case parses");
    let text = read("openai-chat-parallel.sse").replacen(
        r#""id":"call_Xs9vJ2kQm81pLrT0aZcWfH3e","type":"function","function":{"name":"get_weather""#,
        r#""id":"call_Xs9vJ2kQm81pLrT0aZcWfH3e","type":"function","function":{"name":"get_wea"}}]},"logprobs":null,"finish_reason":null}]}

data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"ther_at""#,
        1,
    );
    let response = Response::from_json_str(&text, None).expect("the stream parses");
    assert_eq!(
        response.calls[1].name, "get_weather_at",
        "names concatenate"
    );
    let verdict = score(&case, &response);
    let unknown: Vec<_> = verdict.unknown().collect();
    assert_eq!(unknown.len(), 1, "{:#?}", verdict.findings());
    assert_eq!(unknown[0].name.as_deref(), Some("get_weather_at"));
    assert_eq!(unknown[0].suggestions(), ["get_weather"]);
}

#[test]
fn concatenated_arguments_that_are_not_json_are_invalid_not_an_error() {
    // Chat: the string arguments go to the reader as they are.
    let chat = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"location\\\": \\\"Par\"}}]},\"finish_reason\":null}]}\n\n";
    let response = Response::from_json_str(chat, None).expect("a cut-short stream parses");
    assert!(
        matches!(response.calls[0].arguments.invalid(), Some((raw, _)) if raw == "{\"location\": \"Par"),
        "{:?}",
        response.calls[0].arguments
    );
    assert_eq!(response.stop_reason, None);

    // Anthropic: the concatenated `partial_json` of the second call, cut off mid-string.
    let anthropic = read("anthropic-tool-use.sse").replace(
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01Ab2CdEfGhIjKlMnOpQrStU","name":"get_time","input":{}}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01Ab2CdEfGhIjKlMnOpQrStU","name":"get_time","input":{}}}

data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"zone\": \"Europe/Par"}}"#,
    );
    let response = Response::from_json_str(&anthropic, None).expect("the stream parses");
    let Some((raw, error)) = response.calls[1].arguments.invalid() else {
        panic!("{:?}", response.calls[1].arguments);
    };
    assert_eq!(raw, "{\"zone\": \"Europe/Par");
    assert!(error.contains("EOF"), "{error}");
    assert!(response.calls[0].arguments.value().is_some());
}

/// The error of `text`, with its line and column.
fn error_of(text: &str) -> (InputError, usize, usize) {
    let error = Response::from_json_str(text, None).expect_err("an error");
    let location = error.location().expect("a location").clone();
    (error, location.line, location.column)
}

#[test]
fn a_malformed_payload_is_a_syntax_error_at_its_place() {
    let text = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\" \"text\":\"\"}}\n\n";
    let (error, line, column) = error_of(text);
    assert!(matches!(error, InputError::Syntax { .. }), "{error}");
    assert_eq!((line, column), (5, 78), "{error}");

    let ndjson = "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"b\"},\"done\":tru}\n";
    let (error, line, column) = error_of(ndjson);
    assert!(matches!(error, InputError::Syntax { .. }), "{error}");
    assert_eq!((line, column), (2, 73), "{error}");
}

#[test]
fn a_value_of_the_wrong_type_points_into_its_event() {
    // The arguments delta of the third chunk is a number.
    let text = read("openai-chat-parallel.sse").replacen(
        r#""arguments":"cation\": \"Shang""#,
        r#""arguments":7"#,
        1,
    );
    let (error, line, column) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        inner.pointer(),
        Some("/choices/0/delta/tool_calls/0/function/arguments")
    );
    let expected_line = text
        .lines()
        .position(|l| l.contains(r#""arguments":7"#))
        .expect("the line")
        + 1;
    let expected_column = text
        .lines()
        .nth(expected_line - 1)
        .expect("the line")
        .find(r#":7"#)
        .expect("the value")
        + 2;
    assert_eq!((line, column), (expected_line, expected_column), "{error}");

    // A tool name the reader rejects, traced back to the `content_block_start` it came from.
    let text =
        read("anthropic-tool-use.sse").replacen(r#""name":"get_weather""#, r#""name":42"#, 1);
    let (error, line, column) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(inner.pointer(), Some("/content_block/name"), "{error}");
    let expected_line = text
        .lines()
        .position(|l| l.contains(r#""name":42"#))
        .expect("the line")
        + 1;
    let expected_column = text
        .lines()
        .nth(expected_line - 1)
        .expect("the line")
        .find("42")
        .expect("the value")
        + 1;
    assert_eq!((line, column), (expected_line, expected_column), "{error}");
}

/// An error in the final response of a Responses stream points at the value inside the
/// `response` of its event, not at the event's top level.
#[test]
fn a_wrong_value_in_the_final_response_points_inside_it() {
    let text = "data: {\"type\":\"response.completed\",\"response\":{\"object\":\"response\",\"output\":7}}\n\n";
    let (error, line, column) = error_of(text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(inner.pointer(), Some("/response/output"), "{error}");
    let expected = text.find(":7").expect("the value") + 2;
    assert_eq!((line, column), (1, expected), "{error}");
}

#[test]
fn streams_that_are_not_responses_say_what_they_saw() {
    let (error, line, _) = error_of("event: hello\ndata: {\"greeting\": \"hi\"}\n\n");
    assert!(
        matches!(&error, InputError::Invalid { error: ParseError::Stream { why }, .. }
            if why.contains("none of its 1 event(s) is of a known kind") && why.contains("greeting")),
        "{error}"
    );
    assert_eq!(line, 2);

    let (error, _, _) = error_of(": keep-alive\n\n");
    assert!(error.to_string().contains("it holds no events"), "{error}");

    let overloaded = read("anthropic-tool-use.sse").replace(
        "event: message_stop\ndata: {\"type\":\"message_stop\"}",
        "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}",
    );
    let (error, line, column) = error_of(&overloaded);
    assert!(
        error
            .to_string()
            .contains("it reports an error: Overloaded"),
        "{error}"
    );
    let expected = overloaded
        .lines()
        .position(|l| l.contains("overloaded_error"))
        .expect("the line")
        + 1;
    assert_eq!((line, column), (expected, 7), "{error}");

    let named = Response::from_json_str(&read("anthropic-tool-use.sse"), Some(Format::OpenaiChat))
        .expect_err("not a chat stream");
    assert!(
        named
            .to_string()
            .contains("its events are anthropic's, not openai-chat's"),
        "{named}"
    );
}

#[test]
fn a_single_chunk_still_gets_the_hint() {
    let chunk =
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#;
    let error = Response::from_json_str(chunk, None).expect_err("one event is not a response");
    assert!(
        error.to_string().contains("one event of a stream"),
        "{error}"
    );
}

/// A Gemini stream of `parts`, one chunk per line.
fn gemini_lines(parts: &[serde_json::Value]) -> String {
    parts
        .iter()
        .map(|part| {
            json!({"candidates": [{"content": {"role": "model", "parts": [part]}}]}).to_string()
                + "\n"
        })
        .collect()
}

#[test]
fn gemini_partial_args_of_every_type_and_a_call_cut_short() {
    let text = gemini_lines(&[
        json!({"text": "Setting it up."}),
        json!({"functionCall": {"name": "configure", "id": "fc_1", "willContinue": true},
               "thoughtSignature": "c2ln"}),
        json!({"functionCall": {"partialArgs": [
            {"jsonPath": "$.name", "stringValue": "Lamp \"A\"", "willContinue": true}],
            "willContinue": true}}),
        json!({"functionCall": {"partialArgs": [
            {"jsonPath": "$.name", "stringValue": " and B"},
            {"jsonPath": "$.brightness", "numberValue": 50},
            {"jsonPath": "$.on", "boolValue": true},
            {"jsonPath": "$['color']", "nullValue": null},
            {"jsonPath": "$.tags[1]", "stringValue": "second"}],
            "willContinue": true}}),
        json!({"functionCall": {"willContinue": true}}),
        json!({"functionCall": {}}),
        // A call the stream never ends keeps what it got.
        json!({"functionCall": {"name": "report", "willContinue": true}}),
        json!({"functionCall": {"partialArgs": [
            {"jsonPath": "$.summary", "stringValue": "Half", "willContinue": true}],
            "willContinue": true}}),
    ]);
    let response = Response::from_json_str(&text, None).expect("the stream parses");
    assert_eq!(
        calls(&response),
        [
            (
                "configure",
                Some("fc_1"),
                Some(
                    json!({"name": "Lamp \"A\" and B", "brightness": 50, "on": true,
                            "color": null, "tags": [null, "second"]})
                )
            ),
            ("report", None, Some(json!({"summary": "Half"}))),
        ]
    );
    assert_eq!(response.text, ["Setting it up."]);
}

#[test]
fn gemini_partial_args_that_cannot_be_read_say_where() {
    // A continuation with no call open.
    let text = gemini_lines(&[json!({"functionCall": {"partialArgs": [
        {"jsonPath": "$.a", "stringValue": "x"}]}})]);
    let text = format!("{text}{text}");
    let (error, line, _) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        inner.pointer(),
        Some("/candidates/0/content/parts/0/functionCall/name"),
        "{error}"
    );
    assert!(error.to_string().contains("none is open"), "{error}");
    assert_eq!(line, 1);

    // A path that is not one, on the second line.
    let text = gemini_lines(&[
        json!({"functionCall": {"name": "f", "willContinue": true}}),
        json!({"functionCall": {"partialArgs": [{"jsonPath": "$..a[", "stringValue": "x"}]}}),
    ]);
    let (error, line, column) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        inner.pointer(),
        Some("/candidates/0/content/parts/0/functionCall/partialArgs/0/jsonPath"),
        "{error}"
    );
    let second = text.lines().nth(1).expect("two lines");
    assert_eq!(
        (line, column),
        (2, second.find("\"$..a[\"").expect("the path") + 1),
        "{error}"
    );
}

#[test]
fn bedrock_stream_input_that_is_not_json_and_events_that_are_errors() {
    let start = r#"{"messageStart":{"role":"assistant"}}
{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"get_weather"}}}}
"#;
    let text = format!(
        "{start}{}\n",
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"city\": \"Par"}}}}"#
    );
    let response = Response::from_json_str(&text, None).expect("a cut-short stream parses");
    let Some((raw, _)) = response.calls[0].arguments.invalid() else {
        panic!("{:?}", response.calls[0].arguments);
    };
    assert_eq!(raw, "{\"city\": \"Par");
    assert_eq!(response.stop_reason, None);

    let text = format!(
        "{start}{}\n",
        r#"{"throttlingException":{"message":"Too many requests, please wait before trying again."}}"#
    );
    let (error, line, _) = error_of(&text);
    assert!(
        error
            .to_string()
            .contains("it reports an error: throttlingException: Too many requests"),
        "{error}"
    );
    assert_eq!(line, 3);

    // A `toolUse` delta for a block no `contentBlockStart` opened.
    let text = format!(
        "{start}{}\n",
        r#"{"contentBlockDelta":{"contentBlockIndex":4,"delta":{"toolUse":{"input":"{}"}}}}"#
    );
    let (error, line, _) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        inner.pointer(),
        Some("/contentBlockDelta/contentBlockIndex")
    );
    assert_eq!(line, 3);
}

#[test]
fn json_lines_that_are_no_stream_say_what_they_saw() {
    // Two whole responses in a file that holds one.
    let body = r#"{"type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}]}"#;
    let (error, line, column) = error_of(&format!("{body}\n{body}\n"));
    let message = error.to_string();
    assert!(
        message.contains("several JSON values (2), one per line, but the first is not a stream event of any format: found an object with keys [content, role, type]"),
        "{message}"
    );
    assert!(message.contains(".jsonl"), "{message}");
    assert_eq!((line, column), (1, 1));

    // A line that is not JSON: its own line and column.
    let text = "{\"object\":\"chat.completion.chunk\",\"choices\":[]}\n{\"object\": chat}\n";
    let (error, line, column) = error_of(text);
    assert!(matches!(error, InputError::Syntax { .. }), "{error}");
    assert_eq!((line, column), (2, 12), "{error}");

    // A value of the wrong type: the pointer inside its chunk, at its line.
    let text = CHAT_LINES.replacen(r#""name":"get_weather""#, r#""name":7"#, 1);
    let (error, line, column) = error_of(&text);
    let InputError::Invalid { error: inner, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        inner.pointer(),
        Some("/choices/0/delta/tool_calls/0/function/name"),
        "{error}"
    );
    let first = text.lines().next().expect("a line");
    assert_eq!(
        (line, column),
        (1, first.find(":7").expect("the value") + 2)
    );
}

/// A file in a fresh temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let dir = std::env::temp_dir().join(format!(
            "toolcall-stream-test-{}-{name}",
            std::process::id()
        ));
        fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join(name);
        fs::write(&path, text).expect("writable");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One JSON chunk per line, for every format. Written to each provider's documented events.

/// OpenAI Chat Completions chunks, arguments in pieces.
const CHAT_LINES: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}
{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}
{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"Berlin\"}"}}]},"finish_reason":null}]}
{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
"#;

/// One Anthropic message's events, its input in `input_json_delta`s.
const ANTHROPIC_LINES: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null}}
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San"}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" Francisco\"}"}}
{"type":"content_block_stop","index":0}
{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}
{"type":"message_stop"}
"#;

/// Responses API events for a custom tool call.
const RESPONSES_LINES: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}
{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":""}}
{"type":"response.custom_tool_call_input.delta","sequence_number":2,"output_index":0,"item_id":"ctc_1","delta":"SELECT * FROM users"}
{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":"SELECT * FROM users"}}
{"type":"response.completed","sequence_number":4,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":"SELECT * FROM users"}]}}
"#;

/// Gemini chunks: text, then a whole call.
const GEMINI_LINES: &str = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Checking."}]}}]}
{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"location":"San Francisco"}}}]},"finishReason":"STOP"}]}
"#;

/// Decoded Bedrock `ConverseStream` events: a text block without a start event, a call whose
/// input comes in pieces, and a call with an empty input.
const BEDROCK_LINES: &str = r#"{"messageStart":{"role":"assistant"}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Two tools."}}}
{"contentBlockStop":{"contentBlockIndex":0}}
{"contentBlockStart":{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tool-1","name":"tool-a"}}}}
{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":"}}}}
{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"1\"}"}}}}
{"contentBlockStop":{"contentBlockIndex":1}}
{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"tool-2","name":"refresh"}}}}
{"contentBlockDelta":{"contentBlockIndex":2,"delta":{"toolUse":{"input":""}}}}
{"contentBlockStop":{"contentBlockIndex":2}}
{"messageStop":{"stopReason":"tool_use"}}
{"metadata":{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":100}}}
"#;

#[test]
fn chunks_one_per_line_are_their_formats_stream() {
    let chat = read_lines(CHAT_LINES);
    assert_eq!(chat.format, Format::OpenaiChat);
    assert_eq!(
        calls(&chat),
        [(
            "get_weather",
            Some("call_1"),
            Some(json!({"city": "Berlin"}))
        )]
    );
    assert_eq!(chat.stop_reason.as_deref(), Some("tool_calls"));

    let anthropic = read_lines(ANTHROPIC_LINES);
    assert_eq!(anthropic.format, Format::Anthropic);
    assert_eq!(
        calls(&anthropic),
        [(
            "weather",
            Some("toolu_1"),
            Some(json!({"location": "San Francisco"}))
        )]
    );
    assert_eq!(anthropic.stop_reason.as_deref(), Some("tool_use"));

    let responses = read_lines(RESPONSES_LINES);
    assert_eq!(responses.format, Format::OpenaiResponses);
    assert_eq!(responses.calls.len(), 1);
    assert_eq!(responses.calls[0].name, "write_sql");
    assert_eq!(responses.calls[0].id.as_deref(), Some("call_sql"));
    assert_eq!(
        responses.calls[0].arguments,
        Arguments::Text {
            text: "SELECT * FROM users".into()
        }
    );

    let gemini = read_lines(GEMINI_LINES);
    assert_eq!(gemini.format, Format::Gemini);
    assert_eq!(
        calls(&gemini),
        [("weather", None, Some(json!({"location": "San Francisco"})))]
    );
    assert_eq!(gemini.text, ["Checking."]);
    assert_eq!(gemini.stop_reason.as_deref(), Some("STOP"));
}

#[test]
fn bedrock_converse_stream_events_assemble_into_a_converse_body() {
    let response = read_lines(BEDROCK_LINES);
    assert_eq!(response.format, Format::Bedrock);
    assert_eq!(
        calls(&response),
        [
            ("tool-a", Some("tool-1"), Some(json!({"a": "1"}))),
            // An empty `input` is a call without arguments.
            ("refresh", Some("tool-2"), Some(json!({}))),
        ]
    );
    assert_eq!(response.text, ["Two tools."]);
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
}

#[test]
fn a_jsonl_file_is_samples_unless_its_first_line_is_an_unambiguous_event() {
    // Gemini chunks look like bodies: in a `.jsonl` they are samples, one per line, which a
    // single response cannot hold; under any other name they are one stream.
    let samples = TempFile::new("gemini.jsonl", GEMINI_LINES);
    let error = Response::load(&samples.0, None).expect_err("samples are not one response");
    let message = error.to_string();
    assert!(
        message.contains("holds one response per line (samples)"),
        "{message}"
    );
    assert_eq!(error.location().map(|l| l.line), Some(2), "{message}");
    let stream = TempFile::new("gemini.ndjson", GEMINI_LINES);
    let response = Response::load(&stream.0, None).expect("one stream");
    assert_eq!(response.calls.len(), 1);

    // A `chat.completion.chunk` is no response: a stream wherever it is.
    let chunks = TempFile::new("chat.jsonl", CHAT_LINES);
    let response = Response::load(&chunks.0, None).expect("a stream");
    assert_eq!(response.calls[0].name, "get_weather");
}

#[test]
fn an_anthropic_stream_of_several_messages_keeps_each_ended_ones_calls() {
    // Two turns recorded as one stream, each ended by its `message_stop`: both calls count, though
    // the second message's block indexes start again at 0.
    let second = ANTHROPIC_LINES
        .replace("toolu_1", "toolu_second")
        .replace(r#""name":"weather""#, r#""name":"forecast""#);
    let response = Response::from_json_str(&format!("{ANTHROPIC_LINES}{second}"), None)
        .expect("the stream parses");
    assert_eq!(
        calls(&response),
        [
            (
                "weather",
                Some("toolu_1"),
                Some(json!({"location": "San Francisco"}))
            ),
            (
                "forecast",
                Some("toolu_second"),
                Some(json!({"location": "San Francisco"}))
            ),
        ]
    );

    // A message cut off by a new `message_start` (a retry spliced in) gives way to it.
    let cut_off: String = ANTHROPIC_LINES
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    let response =
        Response::from_json_str(&format!("{cut_off}{second}"), None).expect("the stream parses");
    assert_eq!(
        calls(&response),
        [(
            "forecast",
            Some("toolu_second"),
            Some(json!({"location": "San Francisco"}))
        )]
    );
}
