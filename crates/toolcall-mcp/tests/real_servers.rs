//! Replays `flows/real-servers/*.json` against real third-party MCP servers (feature
//! `real-servers`; `scripts/test` installs them first).
//!
//! The servers are found through `ATP_MCP_NPM_DIR` (an npm `node_modules`) and `ATP_MCP_VENV` (a
//! Python venv), defaulting to where `scripts/test` puts them under `.cache/`. A missing server
//! fails its test and says what to run; nothing is skipped. Each flow gets a scratch directory
//! (`ATP_MCP_SCRATCH`, with `files/hello.txt` and a one-commit git repository `repo/`). A flow
//! with a `url` server runs against server-everything started in `streamableHttp` mode on a free
//! loopback port (`ATP_MCP_HTTP_PORT`). Each server also has its catalog listed twice, a probe,
//! and a replay in each protocol era (`protocol/<server>`), and two under `auto` with a
//! protocol cache (`protocol-cache/<server>`). `record/everything-python-client`
//! records a session of the MCP Python SDK's client (`tests/data/python_client.py`) through
//! `toolcall mcp record` and replays it against the real server and against `toolcall mcp
//! serve`; for that, this binary doubles as both (`--as-record`, `--as-serve`).
//! `record/everything-http` records a replay through `--listen` in front of its streamable HTTP.
//! `serve/everything-*` record the Python SDK client's sessions against server-everything and
//! hold the mock of each to what the client saw of the server: its handshake, tools in order,
//! prompts, resources and completions (`surface`), an unknown name's answer, and the same over streamable
//! HTTP with nothing on the client's stderr.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use toolcall_mcp::{replay_blocking, FailureKind, Flow, Options, Protocol, Report, Server};

const INSTALL_HINT: &str = "run scripts/test, which installs the pinned servers into .cache/ \
     (or point ATP_MCP_NPM_DIR at a node_modules and ATP_MCP_VENV at a venv that have them)";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dir_from_env(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(default))
}

fn npm_dir() -> PathBuf {
    dir_from_env("ATP_MCP_NPM_DIR", ".cache/npm/node_modules")
}

fn venv() -> PathBuf {
    dir_from_env("ATP_MCP_VENV", ".cache/venv")
}

/// A scratch directory for one flow: `files/hello.txt` and a git repository with one commit.
fn scratch(name: &str) -> Result<PathBuf, Failed> {
    let dir = std::env::temp_dir().join(format!("atp-mcp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = dir.join("files");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&files).map_err(|e| format!("{}: {e}", files.display()))?;
    std::fs::create_dir_all(&repo).map_err(|e| format!("{}: {e}", repo.display()))?;
    std::fs::write(files.join("hello.txt"), "hello from a flow\n")
        .map_err(|e| format!("{}: {e}", files.display()))?;
    std::fs::write(repo.join("README.md"), "# scratch\n")
        .map_err(|e| format!("{}: {e}", repo.display()))?;
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "README.md"],
        &[
            "-c",
            "user.name=toolcall",
            "-c",
            "user.email=toolcall@example.com",
            "commit",
            "-q",
            "-m",
            "first commit",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .map_err(|e| format!("cannot run git (needed for the scratch repository): {e}"))?;
        if !status.success() {
            return Err(format!("git {} failed: {status}", args.join(" ")).into());
        }
    }
    Ok(dir)
}

/// Paths under the npm dir or the venv that the flow's server needs and that are missing.
fn missing(flow: &Flow) -> Vec<PathBuf> {
    let server = match &flow.server {
        Server::Stdio(server) => server,
        Server::Http {
            start: Some(server),
            ..
        } => server,
        Server::Http { start: None, .. } => return Vec::new(),
    };
    let roots = [npm_dir(), venv()];
    std::iter::once(server.command.clone())
        .chain(server.args.iter().map(PathBuf::from))
        .filter(|p| roots.iter().any(|r| p.starts_with(r)))
        .filter(|p| !p.exists())
        .collect()
}

/// A loopback port the OS says is free, to hand to a server.
fn free_port() -> Result<u16, Failed> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port())
}

/// server-everything in streamableHttp mode; killed and reaped on drop.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start() -> Result<HttpServer, Failed> {
        let script = npm_dir().join("@modelcontextprotocol/server-everything/dist/index.js");
        if !script.exists() {
            return Err(format!("{} is missing: {INSTALL_HINT}", script.display()).into());
        }
        let port = free_port()?;
        let child = Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start node: {e}"))?;
        let mut server = HttpServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("server-everything (streamableHttp) exited: {status}").into());
            }
            if Instant::now() > deadline {
                return Err(
                    format!("server-everything did not listen on {addr} within 30 s").into(),
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A flow read with the suite's variables and a scratch folder of its own (`purpose` keeps the
/// folders of tests that run at once apart); a `url` flow comes with server-everything started
/// on a free port, which lives as long as the returned guard.
struct Loaded {
    flow: Flow,
    scratch: PathBuf,
    _http: Option<HttpServer>,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

fn load(path: &Path, purpose: &str) -> Result<Loaded, Failed> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let scratch = scratch(&format!("{purpose}-{stem}"))?;
    let mut vars = BTreeMap::from([
        (
            "ATP_MCP_NPM_DIR".to_owned(),
            npm_dir().display().to_string(),
        ),
        ("ATP_MCP_VENV".to_owned(), venv().display().to_string()),
        ("ATP_MCP_SCRATCH".to_owned(), scratch.display().to_string()),
    ]);
    // Read once without a port to learn the server kind; a url flow gets a server and a port.
    vars.insert("ATP_MCP_HTTP_PORT".to_owned(), "0".to_owned());
    let probe = Flow::load_with(path, &vars).map_err(|e| e.to_string())?;
    let http = match probe.server {
        Server::Http { start: None, .. } => {
            let server = HttpServer::start()?;
            vars.insert("ATP_MCP_HTTP_PORT".to_owned(), server.port.to_string());
            Some(server)
        }
        // The flow starts its server: it only needs a free port.
        Server::Http { start: Some(_), .. } => {
            vars.insert("ATP_MCP_HTTP_PORT".to_owned(), free_port()?.to_string());
            None
        }
        Server::Stdio(_) => None,
    };
    let flow = Flow::load_with(path, &vars).map_err(|e| e.to_string())?;
    let missing = missing(&flow);
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
        return Err(format!("missing {}: {INSTALL_HINT}", list.join(", ")).into());
    }
    Ok(Loaded {
        flow,
        scratch,
        _http: http,
    })
}

fn options() -> Options {
    Options {
        // npx-free, but node and Python start-up on a loaded two-core machine is slow.
        initialize_timeout: Duration::from_secs(60),
        ..Options::default()
    }
}

/// The replay's outcome against the flow's own verdict: a pass, or its `expected_failure`.
fn judge(flow: &Flow, report: &Report) -> Result<(), Failed> {
    let stderr: String = report
        .stderr_tail
        .iter()
        .map(|l| format!("\n  | {l}"))
        .collect();
    match (&flow.expected_failure, &report.failure) {
        (None, None) => Ok(()),
        (None, Some(failure)) => Err(format!("{failure}{stderr}").into()),
        (Some(expected), None) => Err(format!(
            "expected the replay to fail with\n  {expected}\nbut every step passed"
        )
        .into()),
        (Some(expected), Some(failure)) if failure.to_string() == *expected => Ok(()),
        (Some(expected), Some(failure)) => {
            Err(format!("expected the failure line\n  {expected}\ngot\n  {failure}{stderr}").into())
        }
    }
}

fn check(path: &Path) -> Result<(), Failed> {
    let loaded = load(path, "replay")?;
    let report = replay_blocking(&loaded.flow, &options(), &mut |_| {});
    judge(&loaded.flow, &report)
}

/// Whether the server a flow starts speaks MCP 2026-07-28, read from the SDK it is built on (not
/// from a replay): the Python SDK 2.x lists it in `mcp_types.version.MODERN_PROTOCOL_VERSIONS`;
/// the TypeScript SDK 1.x (server-everything, -filesystem, -memory) stops at 2025-11-25
/// (`LATEST_PROTOCOL_VERSION` in its `types.js`).
fn speaks_modern(flow: &Flow) -> bool {
    match &flow.server {
        Server::Stdio(server) => server.command.starts_with(venv()),
        Server::Http { .. } => false,
    }
}

/// Each era against a real server: `legacy` reaches every server here; `modern` reaches the
/// modern ones and is refused by the others at `server/discover`, with the server's own
/// answer rather than a timeout; `auto` reaches every one, over the newest version it speaks,
/// and the replay ends as the flow says.
fn protocols(path: &Path) -> Result<(), Failed> {
    let mut seen = Vec::new();
    for protocol in [Protocol::Legacy, Protocol::Modern, Protocol::Auto] {
        let mut loaded = load(path, protocol.name())?;
        loaded.flow.protocol = protocol;
        let modern = speaks_modern(&loaded.flow);
        let report = replay_blocking(&loaded.flow, &options(), &mut |_| {});
        let version = report.protocol_version.clone();
        let context = || {
            format!(
                "{}: {}{}",
                protocol.name(),
                report.summary(),
                report
                    .failure
                    .as_ref()
                    .map(|f| format!("\n  {f}"))
                    .unwrap_or_default()
            )
        };
        match (protocol, modern) {
            (Protocol::Modern, false) => {
                let Some(failure) = &report.failure else {
                    return Err(
                        format!("a legacy server took server/discover: {}", context()).into(),
                    );
                };
                if failure.phase != "server/discover" || failure.kind == FailureKind::Timeout {
                    return Err(format!("not a clear refusal: {}", context()).into());
                }
            }
            (Protocol::Legacy, _) => {
                judge(&loaded.flow, &report)
                    .map_err(|e| format!("{}: {}", context(), e.message().unwrap_or_default()))?;
                if version.as_deref().is_none_or(|v| v >= "2026-07-28") {
                    return Err(format!("legacy agreed on {version:?}: {}", context()).into());
                }
            }
            _ => {
                judge(&loaded.flow, &report)
                    .map_err(|e| format!("{}: {}", context(), e.message().unwrap_or_default()))?;
                let want = if modern { "2026-07-28" } else { "2025-11-25" };
                if version.as_deref() != Some(want) {
                    return Err(
                        format!("expected MCP {want}, got {version:?}: {}", context()).into(),
                    );
                }
            }
        }
        seen.push(format!(
            "{} -> {}",
            protocol.name(),
            version.as_deref().unwrap_or("refused")
        ));
        if let Some(why) = &report.discover_failed {
            seen.push(format!("(discovery failed first: {why})"));
        }
    }
    println!("    {}", seen.join(", "));
    Ok(())
}

/// `auto` with a protocol cache against a real stdio server: one start and one
/// `server/discover` the first time; the second replay speaks the era the first agreed on, a
/// legacy server (the TypeScript SDK's) getting `initialize` at once without being probed
/// again, and each ends as the flow says.
fn remembered(path: &Path) -> Result<(), Failed> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let cache = std::env::temp_dir().join(format!("atp-mcp-{}-eras-{stem}", std::process::id()));
    let options = Options {
        protocol_cache: Some(cache.join("protocol-eras.json")),
        ..options()
    };
    // Each replay in a fresh scratch (a server may keep state there), at the same path: the
    // same command line, so the same server to the cache.
    let replay = |which: &str| -> Result<(Report, bool), Failed> {
        let loaded = load(path, "cache")?;
        let report = replay_blocking(&loaded.flow, &options, &mut |_| {});
        judge(&loaded.flow, &report)
            .map_err(|e| format!("{which}: {}", e.message().unwrap_or_default()))?;
        Ok((report, speaks_modern(&loaded.flow)))
    };
    let runs = (|| Ok::<_, Failed>((replay("first")?, replay("second")?)))();
    let _ = std::fs::remove_dir_all(&cache);
    let ((first, modern), (second, _)) = runs?;
    let counts = |r: &Report| (r.server_starts, r.discover_requests, r.protocol_remembered);
    // A modern server may be started twice the first time: on a loaded machine a Python server
    // can take longer than rmcp's ten seconds to answer `server/discover`, and is then asked
    // again on a fresh start; remembered, it is asked once, with no such box; a legacy one is
    // never started twice.
    let fine = if modern {
        counts(&second) == (1, 1, true)
    } else {
        counts(&first) == (1, 1, false) && counts(&second) == (1, 0, true)
    };
    if !fine {
        return Err(format!(
            "(starts, discover requests, remembered): first {:?}, second {:?}; discovery \
             failed: {:?}, {:?}; versions {:?}, {:?}",
            counts(&first),
            counts(&second),
            first.discover_failed,
            second.discover_failed,
            first.protocol_version,
            second.protocol_version
        )
        .into());
    }
    if first.protocol_version != second.protocol_version {
        return Err(format!(
            "the era changed: {:?}, then {:?}",
            first.protocol_version, second.protocol_version
        )
        .into());
    }
    println!(
        "    {} -> {}",
        first.protocol_version.as_deref().unwrap_or("?"),
        if modern {
            "remembered modern"
        } else {
            "remembered legacy"
        }
    );
    Ok(())
}

/// The catalog contract against a real server: two listings make the same snapshot (what is
/// volatile is left out), which names at least one tool and diffs clean against itself; one
/// tool removed from it is a breaking change.
fn catalog_is_stable(path: &Path) -> Result<(), Failed> {
    let loaded = load(path, "catalog")?;
    let list = || {
        let (tools, report) = toolcall_mcp::list_catalog_blocking(&loaded.flow, &options());
        tools.map_err(|f| format!("{f}; stderr: {:?}", report.stderr_tail))
    };
    let first = toolcall_mcp::catalog::snapshot(&list()?);
    let second = toolcall_mcp::catalog::snapshot(&list()?);
    let tools = first["tools"].as_array().map_or(0, Vec::len);
    if tools == 0 {
        return Err("the server listed no tool".into());
    }
    let drift = toolcall_mcp::catalog::diff(&first, &second);
    if !drift.is_empty() || first != second {
        return Err(format!("two listings differ: {drift:?}").into());
    }
    let mut fewer = first.clone();
    let removed = fewer["tools"].as_array_mut().and_then(|t| t.pop());
    let changes = toolcall_mcp::catalog::diff(&first, &fewer);
    let gone = removed
        .and_then(|t| t["name"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if !changes
        .iter()
        .any(|c| c.severity == toolcall_mcp::catalog::Severity::Breaking && c.tool == gone)
    {
        return Err(format!("removing `{gone}` was not breaking: {changes:?}").into());
    }
    Ok(())
}

/// server-everything declares `execution.taskSupport` on each of its tools, a member rmcp's
/// `Tool` does not model: the snapshot keeps it, over stdio and over streamable HTTP alike (as
/// `record`'s snapshot of the same server does).
fn catalog_keeps_the_wire(path: &Path) -> Result<(), Failed> {
    let loaded = load(path, "wire")?;
    let (tools, report) = toolcall_mcp::list_catalog_blocking(&loaded.flow, &options());
    let tools = tools.map_err(|f| format!("{f}; stderr: {:?}", report.stderr_tail))?;
    let snapshot = toolcall_mcp::catalog::snapshot(&tools);
    let listed = snapshot["tools"].as_array().cloned().unwrap_or_default();
    let without: Vec<&str> = listed
        .iter()
        .filter(|t| !t["execution"]["taskSupport"].is_string())
        .filter_map(|t| t["name"].as_str())
        .collect();
    if listed.is_empty() || !without.is_empty() {
        return Err(format!(
            "{} tool(s), these without execution.taskSupport: {without:?}",
            listed.len()
        )
        .into());
    }
    Ok(())
}

/// The robustness probe against a real server: it runs to the end (the server started, every
/// tool with something to break probed, a crashed server started again), and prints each probe.
/// What a third-party server accepts is its own business; that the probe completes is ours.
fn probe_completes(path: &Path) -> Result<(), Failed> {
    let loaded = load(path, "probe")?;
    let options = Options {
        call_timeout: Duration::from_secs(10),
        ..options()
    };
    let report = toolcall_mcp::probe::probe_blocking(
        &loaded.flow,
        &options,
        &toolcall_mcp::probe::ProbeOptions::default(),
    );
    if let Some(failure) = &report.failure {
        return Err(format!("the probe did not complete: {failure}").into());
    }
    if report.probes.is_empty() {
        return Err("no tool had anything to probe".into());
    }
    for probe in &report.probes {
        println!("    {probe}");
    }
    Ok(())
}

/// The test binary doubles as `toolcall mcp record` and `toolcall mcp serve` for the Python
/// client to start (this crate cannot depend on the CLI): `real_servers --as-record OUT -- CMD
/// ARGS…` records, `real_servers --as-serve RECORDING REPORT` serves and writes its report.
fn act_as_proxy() -> Option<i32> {
    use toolcall_mcp_record::serve;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--as-record") if args.len() > 3 && args[2] == "--" => {
            let options =
                toolcall_mcp_record::RecordOptions::new(&args[1], &args[3], args[4..].to_vec());
            let recorded =
                toolcall_mcp_record::record::record(&options, std::io::stdin(), std::io::stdout());
            Some(match recorded {
                Ok(recorded) => {
                    eprintln!("{recorded}");
                    0
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    2
                }
            })
        }
        Some("--as-serve") if args.len() == 3 => {
            let served = serve::Recording::load(Path::new(&args[1]))
                .and_then(|recording| serve::serve(recording, serve::Matching::ByParams))
                .and_then(|report| {
                    eprint!("{report}");
                    serve::write_report(&report, Path::new(&args[2]))
                });
            Some(match served {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: {e}");
                    2
                }
            })
        }
        _ => None,
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Waits for a file a process that outlives its client writes as it exits.
fn wait_for(path: &Path) -> Result<(), Failed> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        if Instant::now() > deadline {
            return Err(format!("{} was not written within 20 s", path.display()).into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Runs the Python SDK client (`tests/data/python_client.py MODE`) with `server` as its server.
/// The client, and so the server it starts, runs in `dir`.
fn python_client(mode: &str, server: &[&std::ffi::OsStr], dir: &Path) -> Result<String, Failed> {
    python_client_said(mode, server, dir).map(|(stdout, _)| stdout)
}

/// [`python_client`], with what it wrote on stderr too.
fn python_client_said(
    mode: &str,
    server: &[&std::ffi::OsStr],
    dir: &Path,
) -> Result<(String, String), Failed> {
    let python = venv().join("bin/python");
    if !python.exists() {
        return Err(format!("{} is missing: {INSTALL_HINT}", python.display()).into());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/python_client.py");
    let run = Command::new(&python)
        .arg(&script)
        .arg(mode)
        .args(server)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    if !run.status.success() {
        return Err(format!(
            "the Python client ({mode}) failed: {}\n{stdout}\n{}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        )
        .into());
    }
    Ok((stdout, String::from_utf8_lossy(&run.stderr).into_owned()))
}

/// A session of the MCP Python SDK's client against server-everything, recorded through
/// `toolcall mcp record`: the flow replays green against the real server and against `toolcall
/// mcp serve` of its own recording, and the Python client calling a renamed tool gets -32602
/// from the mock, whose report names the name and the did-you-mean.
fn record_python_session() -> Result<(), Failed> {
    let everything = npm_dir().join("@modelcontextprotocol/server-everything/dist/index.js");
    if !everything.exists() {
        return Err(format!("{} is missing: {INSTALL_HINT}", everything.display()).into());
    }
    let dir = scratch("record-python")?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = dir.join("flows/everything.json");
    python_client(
        "session",
        &[
            me.as_os_str(),
            "--as-record".as_ref(),
            out.as_os_str(),
            "--".as_ref(),
            "node".as_ref(),
            everything.as_os_str(),
            "stdio".as_ref(),
        ],
        &dir,
    )?;
    wait_for(&out)?;
    let recorded = read_json(&out)?;
    let calls = recorded["calls"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = calls.iter().filter_map(|c| c["name"].as_str()).collect();
    if names
        != [
            "echo",
            "get-sum",
            "get-structured-content",
            "get-tiny-image",
            "get-sum",
        ]
    {
        return Err(format!("recorded calls: {names:?}").into());
    }
    // The Python SDK's client starts with initialize: the flow pins the legacy era.
    if calls[2]["expect"]["/temperature"] != 36
        || calls[4]["expect_error"] != true
        || recorded["server"]["protocol"] != "legacy"
    {
        return Err(format!("recorded expectations: {recorded:#}").into());
    }

    // Against the real server.
    let flow = Flow::load(&out).map_err(|e| e.to_string())?;
    let report = replay_blocking(&flow, &options(), &mut |_| {});
    judge(&flow, &report)?;
    if report.steps.len() != 5 {
        return Err(format!("{} steps against the real server", report.steps.len()).into());
    }

    // Against the mock of its own recording.
    let served = dir.join("served.json");
    let mock = dir.join("mock.json");
    let mock_flow = serde_json::json!({
        "server": {"command": me, "args": ["--as-serve", out, served]},
        "calls": calls,
    });
    std::fs::write(&mock, mock_flow.to_string()).map_err(|e| e.to_string())?;
    let flow = Flow::load(&mock).map_err(|e| e.to_string())?;
    let report = replay_blocking(&flow, &options(), &mut |_| {});
    judge(&flow, &report)?;
    wait_for(&served)?;
    let served = read_json(&served)?;
    if served["matched"].as_array().map(Vec::len) != Some(5)
        || served["unknown"] != serde_json::json!([])
    {
        return Err(format!("the mock's report: {served:#}").into());
    }

    // The Python client calls a renamed tool against the mock.
    let renamed = dir.join("renamed.json");
    python_client(
        "renamed",
        &[
            me.as_os_str(),
            "--as-serve".as_ref(),
            out.as_os_str(),
            renamed.as_os_str(),
        ],
        &dir,
    )?;
    wait_for(&renamed)?;
    let renamed = read_json(&renamed)?;
    let unknown = &renamed["unknown"][0];
    let suggested = unknown["suggestions"]
        .as_array()
        .is_some_and(|s| s.contains(&serde_json::json!("get-sum")));
    if unknown["name"] != "get_sum" || !suggested {
        return Err(format!("the mock's report: {renamed:#}").into());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Records the Python SDK client's session `mode` against server-everything (stdio) through
/// this binary as `toolcall mcp record`, into `dir/flows/MODE.json`; returns that flow and what
/// the client saw.
fn record_everything(mode: &str, dir: &Path) -> Result<(PathBuf, String), Failed> {
    let everything = npm_dir().join("@modelcontextprotocol/server-everything/dist/index.js");
    if !everything.exists() {
        return Err(format!("{} is missing: {INSTALL_HINT}", everything.display()).into());
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = dir.join(format!("flows/{mode}.json"));
    let seen = python_client(
        mode,
        &[
            me.as_os_str(),
            "--as-record".as_ref(),
            out.as_os_str(),
            "--".as_ref(),
            "node".as_ref(),
            everything.as_os_str(),
            "stdio".as_ref(),
        ],
        dir,
    )?;
    wait_for(&out)?;
    Ok((out, seen))
}

/// The Python SDK client's session `mode` recorded against server-everything, then run against
/// this binary as `toolcall mcp serve` of that recording: the client must see the same, and the
/// mock's report must have answered every request.
fn served_as_recorded(mode: &str) -> Result<(), Failed> {
    let dir = scratch(&format!("serve-{mode}"))?;
    let (out, real) = record_everything(mode, &dir)?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let report = dir.join("report.json");
    let mock = python_client(
        mode,
        &[
            me.as_os_str(),
            "--as-serve".as_ref(),
            out.as_os_str(),
            report.as_os_str(),
        ],
        &dir,
    )?;
    if mock != real {
        return Err(format!(
            "{mode}: the client saw the mock otherwise than the server\nserver: {real}\nmock:   {mock}"
        )
        .into());
    }
    wait_for(&report)?;
    let report = read_json(&report)?;
    let unanswered = report["requests"]
        .as_array()
        .is_some_and(|r| r.iter().any(|r| r.get("answered_by").is_none()));
    if unanswered || report["unmatched"] != serde_json::json!([]) {
        return Err(format!("{mode}: the mock's report: {report:#}").into());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The Python SDK's client sees `toolcall mcp serve` as it saw server-everything (a TypeScript
/// SDK server) when recorded: the same `serverInfo`, `instructions` and `capabilities`, the
/// tools in the server's order, its prompts and resources, one prompt got, one resource read
/// and one completion.
fn serve_shows_what_was_recorded() -> Result<(), Failed> {
    served_as_recorded("surface")
}

/// A call of a name server-everything lacks got an `isError` result from it; from the mock of
/// that recording it gets the same, not JSON-RPC -32602.
fn serve_answers_an_unknown_name_as_recorded() -> Result<(), Failed> {
    served_as_recorded("unknown")
}

/// The Python SDK's client over streamable HTTP against the mock (in this process) sees what it
/// saw of server-everything over stdio, and logs no traceback and no failed session
/// termination (it did: rmcp's SSE priming event, and its 202 to the session's DELETE).
fn serve_over_http_speaks_as_servers_do() -> Result<(), Failed> {
    use toolcall_mcp_record::serve;
    let dir = scratch("serve-http")?;
    let (out, real) = record_everything("surface", &dir)?;
    let recording = serve::Recording::load(&out).map_err(|e| e.to_string())?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let stopper = std::sync::Arc::clone(&stop);
    let mock = std::thread::spawn(move || {
        serve::serve_http(
            recording,
            serve::Matching::ByParams,
            "127.0.0.1:0",
            stopper,
            |a| {
                let _ = tx.send(a);
            },
        )
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(20))
        .map_err(|e| format!("the mock did not listen: {e}"))?;
    let url = format!("http://{addr}/mcp");
    let said = python_client_said("http", &[url.as_ref()], &dir);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = mock.join();
    let (seen, stderr) = said?;
    if stderr.contains("Traceback") || stderr.contains("Session termination failed") {
        return Err(format!("the Python client over HTTP said: {stderr}").into());
    }
    if seen != real {
        return Err(format!("over HTTP the client saw\n{seen}\nnot\n{real}").into());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// `toolcall mcp record --listen` in front of server-everything's streamable HTTP (answers as
/// event streams): a replay through it passes, and the recorded flow replays green against the
/// server. The proxy runs in this process.
fn record_http_session() -> Result<(), Failed> {
    let server = HttpServer::start()?;
    let upstream = format!("http://127.0.0.1:{}/mcp", server.port);
    let dir = scratch("record-http")?;
    let out = dir.join("flows/everything-http.json");
    let record = toolcall_mcp_record::RecordOptions {
        snapshot: Some(dir.join("catalog/everything-http.json")),
        ..toolcall_mcp_record::RecordOptions::new(&out, "", Vec::new())
    };
    let recording = toolcall_mcp_record::http::record_http(&record, "127.0.0.1:0", &upstream)
        .map_err(|e| e.to_string())?;
    let drive = dir.join("drive.json");
    let calls = serde_json::json!([
        {"name": "echo", "input": {"message": "through the recorder"}},
        {"name": "get-sum", "input": {"a": 20, "b": 22}},
        {"name": "get-structured-content", "input": {"location": "New York"}}
    ]);
    let flow = serde_json::json!({
        "server": {"url": format!("http://{}/mcp", recording.addr())},
        "calls": calls,
    });
    std::fs::write(&drive, flow.to_string()).map_err(|e| e.to_string())?;
    let flow = Flow::load(&drive).map_err(|e| e.to_string())?;
    let report = replay_blocking(&flow, &options(), &mut |_| {});
    judge(&flow, &report)?;
    let recorded = recording.stop().map_err(|e| e.to_string())?;
    if recorded.calls != 3 {
        return Err(format!("{recorded}").into());
    }
    // The recorder's snapshot (the raw tools/list it passed on) is the one `mcp snapshot`
    // takes of the same server.
    let recorded_catalog = read_json(&dir.join("catalog/everything-http.json"))?;
    let direct = Flow::from_json_str(
        &serde_json::json!({"server": {"url": upstream}, "calls": []}).to_string(),
        Path::new("direct.json"),
        &dir,
        &toolcall_mcp::EnvVars,
    )
    .map_err(|e| e.to_string())?;
    let (tools, _) = toolcall_mcp::list_catalog_blocking(&direct, &options());
    let listed = toolcall_mcp::catalog::snapshot(&tools.map_err(|f| f.to_string())?);
    if listed["tools"] != recorded_catalog["tools"] {
        let drift = toolcall_mcp::catalog::diff(&recorded_catalog, &listed);
        return Err(format!("mcp snapshot and record's snapshot differ: {drift:?}").into());
    }
    let written = read_json(&out)?;
    if written["calls"][2]["expect"]["/temperature"] != 33 {
        return Err(format!("recorded: {written:#}").into());
    }
    let flow = Flow::load(&out).map_err(|e| e.to_string())?;
    let report = replay_blocking(&flow, &options(), &mut |_| {});
    judge(&flow, &report)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    if let Some(code) = act_as_proxy() {
        std::process::exit(code);
    }
    let args = Arguments::from_args();
    let dir = repo_root().join("flows/real-servers");
    let paths = Flow::files_in(&dir).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let mut trials: Vec<Trial> = Vec::new();
    for path in paths {
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        // Each server's catalog, listed twice; its probe and each protocol era: once per
        // server, not per flow (the flows named `server-purpose` share a server; the HTTP
        // flow is server-everything over the other transport).
        if !stem.contains('-') || stem.ends_with("-http") {
            let catalog = path.clone();
            trials.push(
                Trial::test(format!("catalog/{stem}"), move || {
                    catalog_is_stable(&catalog)
                })
                .with_kind("catalog"),
            );
            if stem.starts_with("everything") {
                let wire = path.clone();
                trials.push(
                    Trial::test(format!("catalog/{stem}-wire"), move || {
                        catalog_keeps_the_wire(&wire)
                    })
                    .with_kind("catalog"),
                );
            }
            let probed = path.clone();
            trials.push(
                Trial::test(format!("probe/{stem}"), move || probe_completes(&probed))
                    .with_kind("probe"),
            );
            let pinned = path.clone();
            trials.push(
                Trial::test(format!("protocol/{stem}"), move || protocols(&pinned))
                    .with_kind("protocol"),
            );
            // The cache remembers stdio servers only.
            if !stem.ends_with("-http") {
                let cached = path.clone();
                trials.push(
                    Trial::test(format!("protocol-cache/{stem}"), move || {
                        remembered(&cached)
                    })
                    .with_kind("protocol"),
                );
            }
        }
        trials.push(
            Trial::test(format!("real-servers/{stem}"), move || check(&path)).with_kind("replay"),
        );
    }
    trials.push(
        Trial::test("record/everything-python-client", record_python_session).with_kind("record"),
    );
    trials.push(Trial::test("record/everything-http", record_http_session).with_kind("record"));
    trials.push(
        Trial::test("serve/everything-surface", serve_shows_what_was_recorded).with_kind("serve"),
    );
    trials.push(
        Trial::test(
            "serve/everything-unknown-name",
            serve_answers_an_unknown_name_as_recorded,
        )
        .with_kind("serve"),
    );
    trials.push(
        Trial::test(
            "serve/everything-http",
            serve_over_http_speaks_as_servers_do,
        )
        .with_kind("serve"),
    );
    libtest_mimic::run(&args, trials).exit();
}
