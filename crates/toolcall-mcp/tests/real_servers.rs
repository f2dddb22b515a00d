//! Replays `flows/real-servers/*.json` against real third-party MCP servers (feature
//! `real-servers`; `scripts/test` installs them first).
//!
//! The servers are found through `ATP_MCP_NPM_DIR` (an npm `node_modules`) and `ATP_MCP_VENV` (a
//! Python venv), defaulting to where `scripts/test` puts them under `.cache/`. A missing server
//! fails its test and says what to run; nothing is skipped. Each flow gets a scratch directory
//! (`ATP_MCP_SCRATCH`, with `files/hello.txt` and a one-commit git repository `repo/`). A flow
//! with a `url` server runs against server-everything started in `streamableHttp` mode on a free
//! loopback port (`ATP_MCP_HTTP_PORT`). Each server also has its catalog listed twice, a probe,
//! and a replay in each protocol era (`protocol/<server>`).

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

fn main() {
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
        }
        trials.push(
            Trial::test(format!("real-servers/{stem}"), move || check(&path)).with_kind("replay"),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
