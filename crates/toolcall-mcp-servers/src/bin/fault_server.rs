//! Deliberately broken MCP stdio servers, one per way a real server goes wrong.
//!
//! `fault-server MODE`; every mode speaks just enough MCP by hand (no SDK: the faults are about
//! bytes on the wire) to get to its fault. The tool it lists is `echo {"text": string}`, which
//! answers with the text and what the server sees: its working directory, `PATH` and
//! `ATP_FLOW_VAR`, as `structuredContent` that its `outputSchema` (a `text` member) describes
//! (`big-result` declares no output schema: its answer is text alone). Every mode that answers
//! calls refuses a `text` that is not a string with JSON-RPC error -32602, and answers the text
//! `please fail` with an `isError` result.
//!
//! | mode | what it does |
//! |---|---|
//! | `ok` | behaves |
//! | `exit-before-init` | writes to stderr and exits with code 3 before reading anything |
//! | `no-init` | reads requests and never answers |
//! | `hang-on-call` | answers `initialize` and `tools/list`, never a `tools/call` |
//! | `junk-line` | prints a banner line to stdout before its first answer |
//! | `junk-glued` | prints text without a newline, then the `initialize` answer |
//! | `stderr-flood` | writes 2 MiB to stderr before answering, then behaves |
//! | `big-result` | answers `tools/call` with a 10 MB text block |
//! | `crash-mid-flow` | exits with code 101 on the second `tools/call` |
//! | `grandchild` | starts `sleep 600` (its pid on stderr), then hangs on every `tools/call` |
//! | `escaped-grandchild` | like `grandchild`, but the `sleep 600` is a daemon: in a process group of its own, its parent gone |
//! | `exit-leaving-grandchild` | starts `sleep 600` holding its stdout open, then exits with code 4 before initialize |
//! | `output-mismatch` | declares an `outputSchema` that requires `echoed`, which its results lack |
//! | `drifted` | the catalog of `ok`, drifted: `echo` now requires `text` and is marked destructive, and a tool `echo_twice`, annotated destructive, is added |
//! | `lax` | declares a strict schema for `echo` (`text` of at most 5 characters, `count` from 1 to 3, nothing else) but checks only that `text` is a string |
//! | `null-crash` | exits with code 101 when a call's arguments hold a `null`, as servers on some SDKs did |
//! | `text-only` | declares no `outputSchema` and answers in plain text: `echo: <text> (page 3 of 7)` |
//! | `media-result` | declares no `outputSchema` and answers with an image (a 1×1 PNG), audio and a `resource_link` |
//! | `http-bearer` | streamable HTTP on 127.0.0.1, port `ATP_FAULT_PORT` or a free one (its port the first line on stdout) that answers only requests with `Authorization: Bearer s3cret-token` (else 401), as `ok` does |
//! | `output-missing` | declares its `outputSchema`, then answers with text alone |
//! | `wide` | behaves, but `echo` declares 3,000 more required string properties (`p0`…), which it does not check |
//! | `big-catalog` | behaves, but its `tools/list` page is over 5 MB (a 5 MB description of `echo`) |
//! | `ignore-eof` | behaves, but keeps running when its stdin ends (as mcp-cron does), until it is killed |
//! | `counter` | behaves, but each `echo` result also holds `call` (1, 2, … in the session) and `pid` (its process id: another on every run) |
//! | `stray-at-exit` | behaves, then prints `fault-server: bye` to stdout once its stdin closes |
//! | `wrong-id` | answers its first `tools/call` twice: first with id 9999, which no request had, then as it should |
//! | `late-result` | answers each `tools/call` 600 ms late |
//! | `tasks` | behaves, but `echo` declares `execution: {"taskSupport": "optional"}` (MCP tasks), a member rmcp's `Tool` does not model |
//! | `shuffled` | behaves, but also lists a tool `pick`; the order of the two tools and of `pick`'s `required`, `type` and `enum` lists changes with every start (rotated by `ATP_FAULT_SEED`, else by its process id), as a server building them from a hash set does |
//! | `lax-deep` | declares `echo` with constraints the probes of exclusive bounds, patterns, minimum lengths and counts, nested objects and array items break (`count` > 0, `code` matching `^[A-Z]{3}$`, `text` of at least 2 characters, `tags` a non-empty array of strings, `options` an object requiring an integer `depth`), but checks only that `text` is a string |
//! | `http-oauth` | streamable HTTP on 127.0.0.1 as `http-bearer` is, but refuses every request as an MCP OAuth server does: 401 with `WWW-Authenticate: Bearer error="invalid_token", resource_metadata="…/.well-known/oauth-protected-resource"` and a JSON body; with `Authorization: Bearer low-scope`, 403 with `error="insufficient_scope"` |
//! | `folder` | as a file server does: `echo` (read-only) behaves, and `read_file` (read-only, a `path` string required) refuses with an `isError` result every path outside `/srv`, a bad one too |
//! | `legacy-silent` | behaves (legacy: `initialize` only), but takes `server/discover` in, writes 6 KB of validation errors to stderr 50 ms later and never answers it, as Python SDK 1.0 servers do; it starts as a Python server does (a line on stderr, then 500 ms before it reads stdin), and each `tools/call` writes `fault-server: echo called` to stderr |
//! | `legacy-noisy` | like `legacy-silent`, but answers `server/discover` with JSON-RPC error -32602 after its 6 KB of errors, as later Python SDK 1.x servers do |
//! | `modern-only` | behaves, but speaks only MCP 2026-07-28: answers `server/discover`, and refuses `initialize` with JSON-RPC error -32601, as a server that dropped the legacy handshake would |
//! | `refuse-all` | like Playwright MCP without its browser: `echo` (annotated `readOnlyHint: true`, `text` required) refuses every call with an `isError` result |
//!
//! Arguments after the mode are ignored: a test passes a marker there to find the process.
//!
//! With `ATP_FAULT_LOG` set, each start appends `start` to that file, and each request read
//! its method: how a test counts start-ups and `server/discover` requests from the server's
//! side.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let known = [
        "ok",
        "exit-before-init",
        "no-init",
        "hang-on-call",
        "junk-line",
        "junk-glued",
        "stderr-flood",
        "big-result",
        "crash-mid-flow",
        "grandchild",
        "escaped-grandchild",
        "exit-leaving-grandchild",
        "output-mismatch",
        "output-missing",
        "text-only",
        "media-result",
        "drifted",
        "lax",
        "null-crash",
        "http-bearer",
        "legacy-strict",
        "input-required",
        "big-catalog",
        "wide",
        "ignore-eof",
        "counter",
        "stray-at-exit",
        "wrong-id",
        "late-result",
        "tasks",
        "shuffled",
        "refuse-all",
        "folder",
        "lax-deep",
        "http-oauth",
        "legacy-silent",
        "legacy-noisy",
        "modern-only",
    ];
    if !known.contains(&mode.as_str()) {
        eprintln!(
            "usage: fault-server MODE, MODE one of: {}",
            known.join(", ")
        );
        return ExitCode::from(2);
    }
    log_event("start");
    if mode == "http-bearer" {
        return http_bearer();
    }
    if mode == "http-oauth" {
        return http_oauth();
    }
    if mode == "exit-leaving-grandchild" {
        // A wrapper that started a helper sharing its stdout, then died: the pipe stays open.
        if let Err(e) = std::process::Command::new("sleep")
            .arg("600")
            .stdin(std::process::Stdio::null())
            .spawn()
        {
            eprintln!("fault-server: cannot start sleep: {e}");
        }
        eprintln!("fault-server: exiting, a helper still holds stdout");
        return ExitCode::from(4);
    }
    if mode == "exit-before-init" {
        eprintln!("fault-server: missing configuration, exiting before initialize");
        return ExitCode::from(3);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if mode == "legacy-silent" || mode == "legacy-noisy" {
        // A Python server's start-up: a line, and imports that take a while before it reads.
        eprintln!("fault-server: {mode} starting");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    if mode == "junk-line" {
        let _ = writeln!(out, "fault-server 1.0 listening on stdio");
        let _ = out.flush();
    }
    if mode == "stderr-flood" {
        let line = "fault-server: debug: ".to_owned() + &"x".repeat(1000) + "\n";
        let mut err = std::io::stderr().lock();
        for _ in 0..2 * 1024 {
            // A client that does not drain stderr blocks us right here.
            if err.write_all(line.as_bytes()).is_err() {
                return ExitCode::from(1);
            }
        }
        let _ = writeln!(err, "fault-server: flood done");
    }

    if mode == "grandchild" {
        // Like a wrapper (npx, uv run) that started the real server: ours must die with us.
        match std::process::Command::new("sleep")
            .arg("600")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => eprintln!("fault-server: grandchild pid {}", child.id()),
            Err(e) => eprintln!("fault-server: cannot start sleep: {e}"),
        }
    }

    #[cfg(unix)]
    if mode == "escaped-grandchild" {
        // A daemonising helper: a group of its own (what `setsid` also gives), and its parent
        // exits at once, so it belongs to init, out of reach of the server's process group.
        use std::os::unix::process::CommandExt;
        match std::process::Command::new("sh")
            .args(["-c", "sleep 600 </dev/null >/dev/null 2>&1 & echo $!"])
            .stdin(std::process::Stdio::null())
            .process_group(0)
            .output()
        {
            Ok(out) => eprintln!(
                "fault-server: grandchild pid {}",
                String::from_utf8_lossy(&out.stdout).trim()
            ),
            Err(e) => eprintln!("fault-server: cannot start sh: {e}"),
        }
    }

    let mut calls = 0;
    let mut initialized = false;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue; // a notification
        };
        if mode == "no-init" {
            continue;
        }
        let method = request["method"].as_str().unwrap_or_default();
        log_event(method);
        let pydantic = mode == "legacy-silent" || mode == "legacy-noisy";
        if pydantic && method == "server/discover" {
            // What a Python SDK 1.x server logs for a method its request union lacks, once it
            // has passed the request between its tasks and validated it.
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "fault-server: Failed to validate request: 60 validation errors for ClientRequest"
            );
            for i in 0..60 {
                let _ = writeln!(
                    err,
                    "fault-server: validation error {i}: Input should be 'initialize' \
                     [type=literal_error, input_value='server/discover', input_type=str]"
                );
            }
            if mode == "legacy-silent" {
                continue;
            }
            let response = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32602, "message": "Invalid request parameters"}});
            let _ = writeln!(out, "{response}");
            let _ = out.flush();
            continue;
        }
        if mode == "modern-only" && method == "initialize" {
            let response = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "no method initialize"}});
            let _ = writeln!(out, "{response}");
            let _ = out.flush();
            continue;
        }
        if pydantic && method == "tools/call" {
            eprintln!("fault-server: echo called");
        }
        if mode == "legacy-strict" && !initialized && method != "initialize" {
            // Like servers on older SDKs: anything before `initialize` ends the session.
            eprintln!("fault-server: received request before initialization was complete");
            return ExitCode::from(1);
        }
        let result = match method {
            "server/discover" if mode == "modern-only" => json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo":
                          {"name": "fault-server", "version": "1.0"}}
            }),
            "initialize" => {
                initialized = true;
                if mode == "junk-glued" {
                    let _ = write!(out, "loading tools...");
                }
                json!({
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fault-server", "version": "1.0"}
                })
            }
            "tools/list" => {
                let mut echo = json!({
                    "name": "echo",
                    "description": "Echoes its text.",
                    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                    "outputSchema": {"type": "object", "required": ["text"],
                                     "properties": {"text": {"type": ["string", "null"]}}}
                });
                match mode.as_str() {
                    // Text alone, as a tool without an output schema answers.
                    "big-result" | "text-only" | "media-result" => {
                        echo.as_object_mut().map(|tool| tool.remove("outputSchema"));
                    }
                    "output-mismatch" => {
                        echo["outputSchema"] = json!({"type": "object", "required": ["echoed"],
                            "properties": {"echoed": {"type": "string"}}});
                    }
                    _ => {}
                }
                if mode == "lax" {
                    echo["inputSchema"] = json!({"type": "object", "additionalProperties": false,
                        "properties": {"text": {"type": "string", "maxLength": 5},
                                       "count": {"type": "integer", "minimum": 1, "maximum": 3}},
                        "required": ["text"]});
                }
                if mode == "wide" {
                    let names: Vec<String> = (0..3000).map(|i| format!("p{i}")).collect();
                    for name in &names {
                        echo["inputSchema"]["properties"][name] = json!({"type": "string"});
                    }
                    echo["inputSchema"]["required"] = json!(names);
                }
                if mode == "big-catalog" {
                    echo["description"] = json!("d".repeat(5 * 1000 * 1000));
                }
                if mode == "null-crash" {
                    echo["inputSchema"]["required"] = json!(["text"]);
                }
                if mode == "lax-deep" {
                    echo["inputSchema"] = json!({"type": "object", "required": ["text"],
                        "properties": {
                            "text": {"type": "string", "minLength": 2},
                            "count": {"type": "integer", "exclusiveMinimum": 0},
                            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                            "tags": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                            "options": {"type": "object", "required": ["depth"],
                                        "properties": {"depth": {"type": "integer"}}}}});
                }
                if mode == "refuse-all" || mode == "folder" {
                    echo["inputSchema"]["required"] = json!(["text"]);
                    echo["annotations"] = json!({"readOnlyHint": true});
                }
                if mode == "tasks" {
                    echo["execution"] = json!({"taskSupport": "optional"});
                }
                if mode == "shuffled" {
                    let seed = std::env::var("ATP_FAULT_SEED")
                        .ok()
                        .and_then(|s| s.parse::<usize>().ok())
                        .unwrap_or(std::process::id() as usize);
                    let rotated = |items: &[Value]| {
                        let mut items = items.to_vec();
                        let by = seed % items.len();
                        items.rotate_left(by);
                        Value::Array(items)
                    };
                    let pick = json!({"name": "pick", "description": "Picks a unit.",
                        "inputSchema": {"type": "object",
                            "required": rotated(&[json!("unit"), json!("text"), json!("count")]),
                            "properties": {
                                "unit": {"enum": rotated(&[json!("s"), json!("ms"), json!("us")])},
                                "text": {"type": rotated(&[json!("string"), json!("null")])},
                                "count": {"type": "integer"}}}});
                    let tools = if seed & 1 == 0 {
                        [pick, echo]
                    } else {
                        [echo, pick]
                    };
                    json!({"tools": tools})
                } else if mode == "drifted" {
                    echo["inputSchema"]["required"] = json!(["text"]);
                    echo["annotations"] = json!({"destructiveHint": true});
                    let twice = json!({"name": "echo_twice", "description": "Echoes its text twice.",
                        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                        "annotations": {"destructiveHint": true}});
                    json!({"tools": [echo, twice]})
                } else if mode == "folder" {
                    let read = json!({"name": "read_file", "description": "Reads a file under /srv.",
                        "inputSchema": {"type": "object", "required": ["path"],
                            "properties": {"path": {"type": "string"}}},
                        "annotations": {"readOnlyHint": true}});
                    json!({"tools": [echo, read]})
                } else {
                    json!({"tools": [echo]})
                }
            }
            "tools/call" => {
                calls += 1;
                match mode.as_str() {
                    "hang-on-call" | "grandchild" | "escaped-grandchild" => continue,
                    // A path it does not serve, as a file server answers one: any but /srv/….
                    "folder"
                        if request["params"]["name"] == "read_file"
                            && !request["params"]["arguments"]["path"]
                                .as_str()
                                .is_some_and(|p| p.starts_with("/srv/")) =>
                    {
                        json!({
                            "content": [{"type": "text", "text":
                                "Access denied - path outside allowed directories: /srv"}],
                            "isError": true
                        })
                    }
                    "folder" if request["params"]["name"] == "read_file" => json!({
                        "content": [{"type": "text", "text": "the file's contents"}]
                    }),
                    // Whatever it is asked: what a server whose backend is missing answers.
                    "refuse-all" => json!({
                        "content": [{"type": "text", "text":
                            "Browser is not installed: run `npx playwright install chrome`"}],
                        "isError": true
                    }),
                    "crash-mid-flow" if calls == 2 => {
                        eprintln!("fault-server: segfault in call 2 (simulated)");
                        return ExitCode::from(101);
                    }
                    // MCP 2026-07-28's multi round-trip request: the first answer asks the
                    // client to confirm; the retry carries the answer and the state back.
                    "input-required" => {
                        let params = &request["params"];
                        let answer = &params["inputResponses"]["confirm"];
                        match params["requestState"].as_str() {
                            Some("fault-state-1") if answer["action"] == "accept" => json!({
                                "content": [{"type": "text", "text": "confirmed"}],
                                "structuredContent": {"text": params["arguments"]["text"],
                                                      "confirmed": answer["content"]}
                            }),
                            Some("fault-state-1") => json!({
                                "content": [{"type": "text", "text": "not confirmed"}],
                                "isError": true
                            }),
                            _ => json!({
                                "resultType": "input_required",
                                "inputRequests": {"confirm": {
                                    "method": "elicitation/create",
                                    "params": {"mode": "form", "message": "Echo this for real?",
                                        "requestedSchema": {"type": "object", "properties":
                                            {"sure": {"type": "boolean"}}}}}},
                                "requestState": "fault-state-1"
                            }),
                        }
                    }
                    // A response to a request nobody made, then the right one.
                    "wrong-id" if calls == 1 => {
                        let stray = json!({"jsonrpc": "2.0", "id": 9999, "result": {
                            "content": [{"type": "text", "text": "for nobody"}]}});
                        let _ = writeln!(out, "{stray}");
                        let text = &request["params"]["arguments"]["text"];
                        json!({"content": [{"type": "text", "text": text}],
                               "structuredContent": {"text": text}})
                    }
                    // An answer after the client has given up on it.
                    "late-result" => {
                        std::thread::sleep(std::time::Duration::from_millis(600));
                        let text = &request["params"]["arguments"]["text"];
                        json!({"content": [{"type": "text", "text": text}],
                               "structuredContent": {"text": text}})
                    }
                    "big-result" => json!({
                        "content": [{"type": "text", "text": "y".repeat(10 * 1000 * 1000)}]
                    }),
                    "null-crash"
                        if request["params"]["arguments"]
                            .as_object()
                            .is_some_and(|a| a.values().any(Value::is_null)) =>
                    {
                        eprintln!("fault-server: TypeError: cannot read properties of null");
                        return ExitCode::from(101);
                    }
                    "text-only" if request["params"]["arguments"]["text"].is_string() => json!({
                        "content": [{"type": "text", "text": format!(
                            "echo: {} (page 3 of 7)",
                            request["params"]["arguments"]["text"].as_str().unwrap_or_default()
                        )}]
                    }),
                    "media-result" => json!({
                        "content": [
                            {"type": "image", "mimeType": "image/png", "data":
                                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="},
                            {"type": "audio", "mimeType": "audio/wav", "data": "UklGRiQAAABXQVZF"},
                            {"type": "resource_link", "uri": "file:///srv/report.pdf",
                             "name": "report.pdf", "mimeType": "application/pdf", "size": 48213}
                        ]
                    }),
                    "output-missing" => json!({
                        "content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]
                    }),
                    _ if !request["params"]["arguments"]["text"].is_string() => {
                        // Refuses arguments its schema forbids, as a careful server does.
                        let response = json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": -32602, "message": "invalid params: `text` must be a string"}});
                        let _ = writeln!(out, "{response}");
                        let _ = out.flush();
                        continue;
                    }
                    _ if request["params"]["arguments"]["text"] == "please fail" => json!({
                        "content": [{"type": "text", "text": "the echo failed on purpose"}],
                        "isError": true
                    }),
                    _ => {
                        // What the server sees of its environment, for the tests of what
                        // the replayer passes on.
                        let seen = json!({
                            "text": request["params"]["arguments"]["text"],
                            "cwd": std::env::current_dir().ok(),
                            "path": std::env::var("PATH").ok(),
                            "flow_var": std::env::var("ATP_FLOW_VAR").ok(),
                        });
                        let mut seen = seen;
                        if mode == "counter" {
                            seen["call"] = json!(calls);
                            seen["pid"] = json!(std::process::id());
                        }
                        json!({
                            "content": [{"type": "text", "text": seen.to_string()}],
                            "structuredContent": seen
                        })
                    }
                }
            }
            _ => {
                let response = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("no method {method}")}});
                let _ = writeln!(out, "{response}");
                let _ = out.flush();
                continue;
            }
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if writeln!(out, "{response}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
    if mode == "ignore-eof" {
        // Its stdin is gone and it does not care: only a signal ends it.
        loop {
            std::thread::sleep(std::time::Duration::from_secs(600));
        }
    }
    if mode == "stray-at-exit" {
        // A goodbye on the protocol channel, after the last answer.
        let _ = writeln!(out, "fault-server: bye");
        let _ = out.flush();
    }
    ExitCode::SUCCESS
}

/// Appends `event` to the file `ATP_FAULT_LOG` names, if any.
fn log_event(event: &str) {
    let Some(path) = std::env::var_os("ATP_FAULT_LOG") else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "{event}"));
    if let Err(e) = appended {
        eprintln!("fault-server: cannot write ATP_FAULT_LOG: {e}");
    }
}

/// The token `http-bearer` wants.
const BEARER: &str = "Bearer s3cret-token";

/// Streamable HTTP by hand, as little of it as a client needs: one JSON response per POST,
/// 202 for a notification, 405 for the GET that would open an event stream, and 401 for a
/// request without the bearer token.
fn http_bearer() -> ExitCode {
    use std::io::Read;
    // A port given (ATP_FAULT_PORT) is for a flow that starts this server and names its url.
    let port = std::env::var("ATP_FAULT_PORT").unwrap_or_else(|_| "0".into());
    let Ok(listener) = std::net::TcpListener::bind(format!("127.0.0.1:{port}")) else {
        return ExitCode::from(1);
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("{port}");
    let _ = std::io::stdout().flush();
    for stream in listener.incoming().flatten() {
        let mut stream = stream;
        let mut reader = std::io::BufReader::new(match stream.try_clone() {
            Ok(s) => s,
            Err(_) => continue,
        });
        let mut head = String::new();
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
            head.push_str(&line);
            line.clear();
        }
        let header = |name: &str| {
            head.lines()
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                })
                .map(|(_, v)| v.trim().to_owned())
        };
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        let _ = reader.read_exact(&mut body);
        let reply = |status: &str, extra: &str, body: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        let response = if header("authorization").as_deref() != Some(BEARER) {
            reply(
                "401 Unauthorized",
                "",
                r#"{"error":"missing or wrong bearer token"}"#,
            )
        } else if !head.starts_with("POST") {
            reply("405 Method Not Allowed", "", "")
        } else {
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            match (
                request.get("id").cloned(),
                request["method"].as_str().unwrap_or_default(),
            ) {
                (None, _) => reply("202 Accepted", "", ""),
                (Some(id), method) => {
                    let result = match method {
                        "initialize" => {
                            json!({"protocolVersion": request["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "fault-server", "version": "1.0"}})
                        }
                        "tools/list" => {
                            json!({"tools": [{"name": "echo", "description": "Echoes its text.",
                            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]})
                        }
                        "tools/call" => json!({"content": [{"type": "text",
                            "text": request["params"]["arguments"]["text"]}]}),
                        _ => json!({}),
                    };
                    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                    reply("200 OK", "mcp-session-id: fault-session\r\n", &body)
                }
            }
        };
        let _ = stream.write_all(response.as_bytes());
    }
    ExitCode::SUCCESS
}

/// `http-oauth`: every request refused the way an MCP server behind OAuth refuses it, with a
/// challenge naming its protected resource metadata, and a body saying why.
fn http_oauth() -> ExitCode {
    use std::io::Read;
    let port = std::env::var("ATP_FAULT_PORT").unwrap_or_else(|_| "0".into());
    let Ok(listener) = std::net::TcpListener::bind(format!("127.0.0.1:{port}")) else {
        return ExitCode::from(1);
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("{port}");
    let _ = std::io::stdout().flush();
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource");
    for stream in listener.incoming().flatten() {
        let mut stream = stream;
        let mut reader = std::io::BufReader::new(match stream.try_clone() {
            Ok(s) => s,
            Err(_) => continue,
        });
        let mut head = String::new();
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
            head.push_str(&line);
            line.clear();
        }
        let header = |name: &str| {
            head.lines()
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                })
                .map(|(_, v)| v.trim().to_owned())
        };
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        let _ = reader.read_exact(&mut body);
        let (status, challenge, body) = if header("authorization").as_deref()
            == Some("Bearer low-scope")
        {
            (
                    "403 Forbidden",
                    format!(
                        "Bearer error=\"insufficient_scope\", scope=\"tools:call\", resource_metadata=\"{metadata}\""
                    ),
                    r#"{"error":"insufficient_scope","error_description":"the token lacks tools:call"}"#,
                )
        } else {
            (
                "401 Unauthorized",
                format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""),
                r#"{"error":"invalid_token","error_description":"the access token expired"}"#,
            )
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nwww-authenticate: {challenge}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes());
    }
    ExitCode::SUCCESS
}
