//! `toolcall mcp record` as real clients and real servers use it: the official Python and
//! TypeScript SDK clients start the recorder as they start any stdio server, and end it as they
//! end one (stdin closed, SIGTERM two seconds later, SIGKILL two after that); and servers
//! nobody here wrote (server-everything, mcp-time) are recorded through it.
//!
//! Needs what `scripts/test` installs: `ATP_MCP_NPM_DIR` (a node_modules with
//! `@modelcontextprotocol/sdk` and `@modelcontextprotocol/server-everything`) and `ATP_MCP_VENV`
//! (a venv with the `mcp` package and `mcp-server-time`), by default under `.cache/` of the
//! repository. Nothing is skipped when they are missing: the test fails, saying how to install.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

const TOOLCALL: &str = env!("CARGO_BIN_EXE_toolcall");

const INSTALL_HINT: &str = "run scripts/test, which installs the pinned servers and SDKs into \
     .cache/ (or point ATP_MCP_NPM_DIR at a node_modules and ATP_MCP_VENV at a venv that have them)";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dir_from_env(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(default))
}

/// `path`, which must be there.
fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: {INSTALL_HINT}",
        path.display()
    );
    path
}

fn npm_dir() -> PathBuf {
    installed(dir_from_env("ATP_MCP_NPM_DIR", ".cache/npm/node_modules"))
}

fn venv_bin(name: &str) -> PathBuf {
    installed(
        dir_from_env("ATP_MCP_VENV", ".cache/venv")
            .join("bin")
            .join(name),
    )
}

fn fault_server() -> PathBuf {
    let path = Path::new(TOOLCALL).with_file_name("fault-server");
    assert!(
        path.is_file(),
        "{} is not built: build with -p toolcall-mcp-servers",
        path.display()
    );
    path
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("record-real")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The Python SDK's stdio client: starts `argv[1:]`, lists the tools, calls `echo` (or the
/// call given as JSON in `ATP_CALLS`: `[[name, arguments], …]`), prints each result's JSON, and
/// leaves as the SDK does.
const PYTHON_CLIENT: &str = r#"
import json, os, sys, anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    calls = json.loads(os.environ.get("ATP_CALLS", '[["echo", {"text": "hi"}]]'))
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                print(result.model_dump_json())

anyio.run(main)
"#;

/// The TypeScript SDK's stdio client, doing what [`PYTHON_CLIENT`] does.
const TS_CLIENT: &str = r#"
const sdk = process.env.ATP_TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);
const calls = JSON.parse(process.env.ATP_CALLS ?? '[["echo", {"text": "hi"}]]');
const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "atp-ts-client", version: "1.0.0" });
await client.connect(transport);
await client.listTools();
for (const [name, args] of calls) {
  console.log(JSON.stringify(await client.callTool({ name, arguments: args })));
}
await client.close();
"#;

/// Which SDK client drives the recorder.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

/// Runs `sdk`'s client in `dir` against `server` (a command and its arguments), with `env`
/// added, for at most 120 seconds.
fn client(sdk: Sdk, dir: &Path, server: &[String], env: &[(&str, &str)]) -> Output {
    let mut command = match sdk {
        Sdk::Python => {
            let script = dir.join("client.py");
            std::fs::write(&script, PYTHON_CLIENT).unwrap();
            let mut c = Command::new(venv_bin("python"));
            c.arg(script);
            c
        }
        Sdk::TypeScript => {
            let script = dir.join("client.mjs");
            std::fs::write(&script, TS_CLIENT).unwrap();
            let mut c = Command::new("node");
            c.arg(script).env(
                "ATP_TS_SDK",
                installed(npm_dir().join("@modelcontextprotocol/sdk")),
            );
            c
        }
    };
    command
        .args(server)
        .current_dir(dir)
        .envs(env.iter().copied());
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("the {sdk:?} client was still running after 120 s")
        }
    }
}

/// The fault servers whose command line holds `marker`, found in /proc.
fn marked(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        // The fault server itself, not the recorder whose arguments name it.
        let server = args.first().is_some_and(|a| a.ends_with(b"fault-server"));
        if server && args.contains(&marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Kills, when dropped, whatever still holds its marker.
struct Marked(String);

impl Drop for Marked {
    fn drop(&mut self) {
        for pid in marked(&self.0) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// Both SDK clients close stdin, wait two seconds and send SIGTERM; with the default `--grace
/// 2` and a server that ignores the end of its stdin (as mcp-cron does), the whole recording
/// was lost (the Python client's SIGTERM to the process group took the server along; the
/// TypeScript client's, the recorder alone, leaving the server running). The flow is written,
/// and no server is left.
#[test]
fn both_sdk_clients_leave_a_flow_of_a_server_that_ignores_the_end_of_stdin() {
    for sdk in [Sdk::Python, Sdk::TypeScript] {
        let dir = scratch(&format!("sdk-ignore-eof-{sdk:?}"));
        let out = dir.join("flows/cron.json");
        let marker = format!("atp-record-real-{sdk:?}-{}", std::process::id());
        let _cleanup = Marked(marker.clone());
        let server: Vec<String> = vec![
            TOOLCALL.into(),
            "mcp".into(),
            "record".into(),
            "--out".into(),
            out.display().to_string(),
            "--".into(),
            fault_server().display().to_string(),
            "ignore-eof".into(),
            marker.clone(),
        ];
        let run = client(sdk, &dir, &server, &[]);
        let said = format!("{}{}", text(&run.stdout), text(&run.stderr));
        assert!(run.status.success(), "{sdk:?}: {said}");
        assert!(said.contains("\"hi\""), "{sdk:?}: {said}");
        assert!(out.exists(), "{sdk:?}: no flow; {said}");
        let flow = read_json(&out);
        assert_eq!(
            flow["calls"][0]["expect"]["/text"], "hi",
            "{sdk:?}: {flow:#}"
        );
        assert!(
            !dir.join("flows/cron.json.partial").exists(),
            "{sdk:?}: {said}"
        );
        let started = Instant::now();
        while !marked(&marker).is_empty() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            marked(&marker),
            Vec::<u32>::new(),
            "{sdk:?}: the server was left running"
        );
    }
}

/// Every file under `dir`, with its text (lossy).
fn every_file(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                out.push((path.clone(), text(&std::fs::read(&path).unwrap())));
            }
        }
    }
    out
}

/// server-everything's `get-env` answers with the server's whole environment: `--env NAME`
/// kept the value out of `expect` but wrote it in the recorded result. Now no file the
/// recording writes holds it: the flow has `${ATP_REAL_SECRET}` where it was.
#[test]
fn a_secret_the_everything_server_shows_is_in_no_file_the_recording_writes() {
    let everything =
        installed(npm_dir().join("@modelcontextprotocol/server-everything/dist/index.js"));
    let dir = scratch("everything-get-env");
    let out = dir.join("flows/env.json");
    let secret = "atp-real-secret-6b1f0c";
    let server: Vec<String> = vec![
        TOOLCALL.into(),
        "mcp".into(),
        "record".into(),
        "--env".into(),
        "ATP_REAL_SECRET".into(),
        "--out".into(),
        out.display().to_string(),
        "--".into(),
        "node".into(),
        everything.display().to_string(),
        "stdio".into(),
    ];
    let run = client(
        Sdk::Python,
        &dir,
        &server,
        &[
            ("ATP_REAL_SECRET", secret),
            ("ATP_CALLS", r#"[["get-env", {}]]"#),
        ],
    );
    let said = format!("{}{}", text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{said}");
    // The client saw it: what passes is unchanged.
    assert!(said.contains(secret), "{said}");
    let written = every_file(&dir);
    assert!(written.iter().any(|(p, _)| p == &out), "{said}");
    for (path, text) in &written {
        if path.extension().is_some_and(|e| e == "json") {
            assert!(
                !text.contains(secret),
                "the secret is in {}: {text}",
                path.display()
            );
        }
    }
    let flow = read_json(&out);
    assert_eq!(flow["calls"][0]["name"], "get-env");
    assert!(
        flow["calls"][0]["recorded"]
            .to_string()
            .contains("${ATP_REAL_SECRET}"),
        "{flow:#}"
    );
    // Expected as the variable, which a replay reads from its own environment.
    assert_eq!(
        flow["calls"][0]["expect"]["/ATP_REAL_SECRET"], "${ATP_REAL_SECRET}",
        "{flow:#}"
    );
}

/// mcp-time's `convert_time` answers with a pure function of its arguments that is full of
/// timestamps and time-named keys: recorded once, it got no assertion but `day_of_week` and
/// `is_dst`. Nothing in the session says those values move, so they are pinned (and named as
/// looking volatile), and the flow replays green.
#[test]
fn a_deterministic_result_full_of_timestamps_is_pinned_and_replays_green() {
    let dir = scratch("time-convert");
    let out = dir.join("flows/time.json");
    let server: Vec<String> = vec![
        TOOLCALL.into(),
        "mcp".into(),
        "record".into(),
        "--out".into(),
        out.display().to_string(),
        "--".into(),
        venv_bin("mcp-server-time").display().to_string(),
        "--local-timezone".into(),
        "UTC".into(),
    ];
    let calls = r#"[["convert_time", {"source_timezone": "UTC", "time": "12:00",
                     "target_timezone": "Asia/Tokyo"}]]"#;
    let run = client(Sdk::Python, &dir, &server, &[("ATP_CALLS", calls)]);
    let said = format!("{}{}", text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{said}");
    let flow = read_json(&out);
    let call = &flow["calls"][0];
    let expect = &call["expect"];
    assert_eq!(expect["/time_difference"], "+9.0h", "{call:#}");
    assert_eq!(expect["/target/timezone"], "Asia/Tokyo", "{call:#}");
    assert!(
        expect["/target/datetime"]
            .as_str()
            .is_some_and(|d| d.ends_with("T21:00:00+09:00")),
        "{call:#}"
    );
    assert!(
        expect["/source/datetime"]
            .as_str()
            .is_some_and(|d| d.ends_with("T12:00:00+00:00")),
        "{call:#}"
    );
    let comment = call["$comment"].as_str().unwrap_or_default();
    assert!(
        comment.starts_with("pinned though they look volatile:")
            && comment.contains("/target/datetime (timestamp)"),
        "{call:#}"
    );
    let replay = Command::new(TOOLCALL)
        .arg("replay")
        .arg(&out)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
}
