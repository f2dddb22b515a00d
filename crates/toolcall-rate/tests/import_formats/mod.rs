//! `import` of conversations in every request format the scorer reads besides OpenAI Chat and
//! Anthropic (which `rate.rs` covers): Responses API `input` items, Gemini `contents`, Bedrock
//! Converse `messages` and Ollama `/api/chat` messages, each written to the provider's documented
//! request shape. Every written case must read back as its conversation's format, every
//! recorded response as that format's body, and scoring them must pass every call except the one
//! the log renamed, which comes back as an `unknown_tool` finding.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolcall_rate::{import, rate_tree, Gate, ImportOptions, Report};
use toolcall_score::{Case, FindingKind, Format, Response, Verdict};

use super::{options, scratch, write};

/// One written case, read back with its recorded response and scored.
struct Scored {
    id: String,
    case_json: Value,
    case: Case,
    response_json: Value,
    response: Response,
    verdict: Verdict,
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Every case under `out/cases`, with its response under `out/recorded/<agent>`, in id order.
fn score_imported(out: &Path, agent: &str) -> Vec<Scored> {
    let cases = out.join("cases");
    let mut files = Vec::new();
    json_files(&cases, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let id = path
                .strip_prefix(&cases)
                .unwrap()
                .with_extension("")
                .display()
                .to_string();
            let recorded = out.join("recorded").join(agent).join(format!("{id}.json"));
            let case = Case::load(&path).unwrap_or_else(|e| panic!("{id}: {e}"));
            // Detected from the body alone, not told by the case.
            let response = Response::load(&recorded, None).unwrap_or_else(|e| panic!("{id}: {e}"));
            let verdict = toolcall_score::score(&case, &response);
            let read = |p: &Path| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            Scored {
                id,
                case_json: read(&path),
                case,
                response_json: read(&recorded),
                response,
                verdict,
            }
        })
        .collect()
}

/// The written cases read as `format`, their responses too, and every call passes but `renamed`,
/// which is the one unknown tool.
fn assert_read_back_as(scored: &[Scored], format: Format, renamed: &str) {
    let mut unknown = Vec::new();
    for one in scored {
        assert_eq!(one.case_json["format"], format.as_str(), "{}", one.id);
        assert_eq!(one.case.format, Some(format), "{}", one.id);
        assert!(
            one.case.request_format.is_none_or(|f| f == format),
            "{}: the request reads as {:?}",
            one.id,
            one.case.request_format
        );
        assert_eq!(one.response.format, format, "{}", one.id);
        assert!(!one.response.calls.is_empty(), "{}", one.id);
        for finding in one.verdict.findings() {
            assert_eq!(
                finding.kind,
                FindingKind::UnknownTool,
                "{}: {finding}",
                one.id
            );
            unknown.extend(finding.name.clone());
        }
    }
    assert_eq!(unknown, [renamed]);
}

fn rate(out: &Path, agent: &str) -> Report {
    let scan = rate_tree(
        &out.join("cases"),
        &out.join("recorded").join(agent),
        &options(),
    )
    .unwrap();
    assert_eq!(scan.unrecorded, 0);
    Report::new(scan.tally, Gate::default())
}

#[test]
fn import_reads_responses_api_input_items() {
    let dir = scratch("import-responses");
    let input = dir.join("support.json");
    write(
        &input,
        &json!({
            "model": "gpt-5",
            "instructions": "You are the order support agent. Look orders up before refunding.",
            "tools": [
                {"type": "function", "name": "lookup_order", "description": "One order by id.",
                 "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                "required": ["order_id"], "additionalProperties": false},
                 "strict": true},
                {"type": "function", "name": "refund_order", "description": "Refund an order in full.",
                 "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                "required": ["order_id"], "additionalProperties": false},
                 "strict": true},
                {"type": "custom", "name": "run_sql", "description": "Runs one read-only SQL query."},
                {"type": "shell"}
            ],
            "input": [
                {"role": "user", "content": "Where is order 1042? Refund it if it is lost."},
                {"type": "reasoning", "id": "rs_68a1", "summary": []},
                {"type": "function_call", "id": "fc_68a1", "call_id": "call_Q1", "name": "lookup_order",
                 "arguments": "{\"order_id\":\"1042\"}", "status": "completed"},
                {"type": "function_call_output", "call_id": "call_Q1",
                 "output": "{\"order_id\":\"1042\",\"status\":\"lost_in_transit\"}"},
                {"type": "message", "id": "msg_68a2", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "It was lost in transit; refunding it now.",
                              "annotations": []}]},
                {"type": "function_call", "id": "fc_68a2", "call_id": "call_Q2", "name": "refund_orders",
                 "arguments": "{\"order_id\":\"1042\"}", "status": "completed"},
                {"type": "function_call_output", "call_id": "call_Q2",
                 "output": "error: unknown tool refund_orders"},
                {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "How many orders were lost this week? Check the disk too."}]},
                {"type": "custom_tool_call", "id": "ctc_68a3", "call_id": "call_Q3", "name": "run_sql",
                 "input": "SELECT count(*) FROM orders WHERE status = 'lost_in_transit'"},
                {"type": "shell_call", "id": "sh_68a3", "call_id": "call_Q4",
                 "action": {"commands": ["df -h /var/lib/orders"], "timeout_ms": 10000},
                 "status": "completed"},
                {"type": "custom_tool_call_output", "call_id": "call_Q3", "output": "3"},
                {"type": "shell_call_output", "call_id": "call_Q4",
                 "output": [{"stdout": "/dev/sda1  40G  12G  28G  30%", "stderr": "",
                             "outcome": {"type": "exit", "exit_code": 0}}]},
                {"type": "message", "id": "msg_68a4", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Three orders; the disk is at 30%."}]}
            ]
        }),
    );
    let out = dir.join("out");
    let summary = import(
        &input,
        &ImportOptions {
            out: out.clone(),
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        (summary.conversations, summary.cases, summary.calls),
        (1, 3, 4)
    );
    assert_eq!(summary.agents, ["gpt-5"]);

    let scored = score_imported(&out, "gpt-5");
    let ids: Vec<&str> = scored.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["support/0-1", "support/0-4", "support/0-8"]);
    assert_read_back_as(&scored, Format::OpenaiResponses, "refund_orders");
    let first = &scored[0];
    assert_eq!(first.case_json["input"].as_array().unwrap().len(), 1);
    assert_eq!(
        first.case_json["instructions"],
        "You are the order support agent. Look orders up before refunding."
    );
    assert_eq!(first.case.system, first.case_json["instructions"]);
    assert_eq!(first.case_json["tools"][0]["name"], "lookup_order");
    // The turn is every item the model produced in a row: reasoning and the call.
    assert_eq!(first.response_json["object"], "response");
    assert_eq!(first.response_json["status"], "completed");
    assert_eq!(first.response_json["output"][0]["type"], "reasoning");
    assert_eq!(first.response_json["output"][1]["call_id"], "call_Q1");
    // Text before a call stays in its response.
    assert_eq!(
        scored[1].response.text,
        ["It was lost in transit; refunding it now."]
    );
    // Parallel calls of a custom tool and a built-in one are one turn.
    let names: Vec<&str> = scored[2]
        .response
        .calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["run_sql", "shell"]);

    let report = rate(&out, "gpt-5");
    assert_eq!(
        (
            report.responses,
            report.calls,
            report.unknown,
            report.bad_lines
        ),
        (3, 4, 1, 0),
        "{:?}",
        report.errors
    );
}

#[test]
fn import_reads_gemini_contents_with_a_directory_tools_file() {
    let dir = scratch("import-gemini");
    let logs = dir.join("logs");
    // Bare definitions beside the log, as tau-bench keeps them.
    write(
        &logs.join("tools.json"),
        &json!([
            {"name": "get_weather", "description": "Current weather for a city.",
             "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                            "required": ["location"]}},
            {"name": "find_flights", "description": "Flights between two airports on a date.",
             "parameters": {"type": "object",
                            "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
                                           "date": {"type": "string"}},
                            "required": ["origin", "destination", "date"]}},
            {"name": "book_hotel", "description": "Book a hotel in a city.",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"},
                                                               "nights": {"type": "integer"}},
                              "required": ["city"]}}
        ]),
    );
    write(
        &logs.join("trip.json"),
        &json!({
            "id": "trip-7",
            "model": "gemini-2.5-flash",
            "systemInstruction": {"parts": [{"text": "You are a travel assistant."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Lisbon, and flights from Porto to Lisbon on 2 June?"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"location": "Lisbon"}}},
                    {"functionCall": {"name": "find_flights",
                                      "args": {"origin": "OPO", "destination": "LIS", "date": "2025-06-02"}}}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get_weather",
                                          "response": {"output": {"temp_c": 24, "sky": "clear"}}}},
                    {"functionResponse": {"name": "find_flights",
                                          "response": {"output": {"flights": [{"number": "TP1943"}]}}}}]},
                {"role": "model", "parts": [{"text": "It is 24°C and clear; TP1943 flies that day."}]},
                {"role": "user", "parts": [{"text": "Book me two nights there."}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "book_hotels", "args": {"city": "Lisbon", "nights": 2}}}]}
            ]
        }),
    );
    let out = dir.join("out");
    let summary = import(
        &logs,
        &ImportOptions {
            out: out.clone(),
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        (summary.conversations, summary.cases, summary.calls),
        (1, 2, 3)
    );
    let scored = score_imported(&out, "gemini-2.5-flash");
    let ids: Vec<&str> = scored.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["trip/trip-7-1", "trip/trip-7-5"]);
    assert_read_back_as(&scored, Format::Gemini, "book_hotels");
    let last = &scored[1];
    assert_eq!(last.case_json["contents"].as_array().unwrap().len(), 5);
    assert_eq!(last.case.system, "You are a travel assistant.");
    assert_eq!(last.case.request_format, Some(Format::Gemini));
    // The bare definitions became one declaration group; a JSON Schema written as
    // `input_schema` is Gemini's `parametersJsonSchema`.
    let declarations = &last.case_json["tools"][0]["functionDeclarations"];
    assert_eq!(declarations.as_array().unwrap().len(), 3);
    assert_eq!(
        declarations[2]["parametersJsonSchema"]["required"],
        json!(["city"])
    );
    assert_eq!(last.case.catalog.len(), 3);
    assert_eq!(
        last.response_json["candidates"][0]["finishReason"], "STOP",
        "{}",
        last.response_json
    );
    assert_eq!(
        last.response_json["candidates"][0]["content"]["role"],
        "model"
    );
    let report = rate(&out, "gemini-2.5-flash");
    assert_eq!(
        (report.calls, report.unknown),
        (3, 1),
        "{:?}",
        report.errors
    );
}

#[test]
fn import_reads_bedrock_converse_messages_with_their_tool_config() {
    let dir = scratch("import-bedrock");
    let input = dir.join("radio.json");
    let top_song = json!({"toolSpec": {
        "name": "top_song",
        "description": "Get the most popular song played on a radio station.",
        "inputSchema": {"json": {"type": "object",
                                 "properties": {"sign": {"type": "string",
                                                         "description": "The call sign, e.g. WZPZ."}},
                                 "required": ["sign"]}}}});
    let lyrics = json!({"toolSpec": {
        "name": "get_lyrics",
        "description": "The lyrics of a song.",
        "inputSchema": {"json": {"type": "object",
                                 "properties": {"song": {"type": "string"}, "artist": {"type": "string"}},
                                 "required": ["song"]}}}});
    write(
        &input,
        &json!([{
            "modelId": "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "system": [{"text": "You are a radio DJ's assistant."}],
            "toolConfig": {"tools": [top_song, lyrics], "toolChoice": {"auto": {}}},
            "messages": [
                {"role": "user", "content": [{"text": "What is the most popular song on WZPZ?"}]},
                {"role": "assistant", "content": [
                    {"text": "Let me look that up."},
                    {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "top_song",
                                 "input": {"sign": "WZPZ"}}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                                    "content": [{"json": {"song": "Elemental Hotel", "artist": "8 Storey Hike"}}]}}]},
                {"role": "assistant", "content": [{"text": "Elemental Hotel by 8 Storey Hike."}]},
                {"role": "user", "content": [{"text": "And on WKRP? Show me the lyrics too."}]},
                {"role": "assistant", "content": [
                    {"toolUse": {"toolUseId": "tooluse_2", "name": "top_song", "input": {"sign": "WKRP"}}},
                    {"toolUse": {"toolUseId": "tooluse_3", "name": "get_lyric",
                                 "input": {"song": "Elemental Hotel"}}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "tooluse_2", "content": [{"text": "Venus"}]}},
                    {"toolResult": {"toolUseId": "tooluse_3", "content": [{"text": "no such tool"}],
                                    "status": "error"}}]}
            ]
        }]),
    );
    let out = dir.join("out");
    let summary = import(
        &input,
        &ImportOptions {
            out: out.clone(),
            agent: Some("claude-bedrock".into()),
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        (summary.conversations, summary.cases, summary.calls),
        (1, 2, 3)
    );
    let scored = score_imported(&out, "claude-bedrock");
    let ids: Vec<&str> = scored.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["radio/0-1", "radio/0-5"]);
    assert_read_back_as(&scored, Format::Bedrock, "get_lyric");
    let first = &scored[0];
    assert_eq!(
        first.case_json["system"],
        json!([{"text": "You are a radio DJ's assistant."}])
    );
    assert_eq!(
        first.case_json["toolConfig"]["toolChoice"],
        json!({"auto": {}})
    );
    assert_eq!(first.case.catalog.len(), 2);
    assert_eq!(first.response_json["stopReason"], "tool_use");
    assert_eq!(
        first.response_json["output"]["message"]["role"],
        "assistant"
    );
    assert_eq!(first.response.text, ["Let me look that up."]);
    assert_eq!(scored[1].case.request_format, Some(Format::Bedrock));
    let report = rate(&out, "claude-bedrock");
    assert_eq!(
        (report.calls, report.unknown),
        (3, 1),
        "{:?}",
        report.errors
    );
    assert_eq!(report.distinct[0].name, "get_lyric");
}

#[test]
fn import_reads_ollama_chat_messages_with_object_arguments() {
    let dir = scratch("import-ollama");
    let input = dir.join("weather.json");
    write(
        &input,
        &json!({
            "model": "llama3.2:3b",
            "messages": [
                {"role": "system", "content": "You are a weather bot. Use the tools."},
                {"role": "user", "content": "What is the weather today in Paris?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_current_weather",
                                  "arguments": {"location": "Paris, FR", "format": "celsius"}}}]},
                {"role": "tool", "tool_name": "get_current_weather", "content": "22 degrees celsius"},
                {"role": "assistant", "content": "It is 22 °C in Paris."},
                {"role": "user", "content": "And tomorrow in Toronto?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_forecast_weather",
                                  "arguments": {"location": "Toronto, CA", "days": 1}}}]}
            ]
        }),
    );
    let tools = dir.join("tools.json");
    write(
        &tools,
        &json!([
            {"name": "get_current_weather", "description": "The current weather for a location.",
             "parameters": {"type": "object",
                            "properties": {"location": {"type": "string"},
                                           "format": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                            "required": ["location"]}},
            {"name": "get_weather_forecast", "description": "The forecast for the next days.",
             "parameters": {"type": "object",
                            "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
                            "required": ["location"]}}
        ]),
    );
    let out = dir.join("out");
    let summary = import(
        &input,
        &ImportOptions {
            out: out.clone(),
            tools: Some(tools),
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!((summary.cases, summary.calls), (2, 2));
    assert_eq!(summary.agents, ["llama3.2_3b"]);
    let scored = score_imported(&out, "llama3.2_3b");
    assert_read_back_as(&scored, Format::Ollama, "get_forecast_weather");
    let last = &scored[1];
    assert_eq!(last.case.request_format, Some(Format::Ollama));
    assert_eq!(last.case_json["tools"][1]["type"], "function");
    assert_eq!(
        last.case_json["tools"][1]["function"]["name"],
        "get_weather_forecast"
    );
    assert_eq!(last.response_json["done"], true);
    assert_eq!(last.response_json["model"], "llama3.2:3b");
    assert_eq!(
        last.response.calls[0].arguments,
        toolcall_score::Arguments::Parsed(json!({"location": "Toronto, CA", "days": 1}))
    );
}
