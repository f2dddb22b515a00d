//! `toolcall mcp snapshot` and `toolcall mcp diff`: an MCP server's catalog as a contract. The
//! snapshot is a reviewable file of its whole `tools/list`; the diff classifies every change
//! from it ([`toolcall_mcp::catalog`]) and fails at the severity asked for, so catalog drift
//! fails CI whether or not a flow calls the tool that drifted. `record` and `serve` (a session
//! recorded as a flow through a pass-through proxy, and a recording served as a mock) are
//! [`toolcall_mcp_record`]'s; they answer on stdout, so they say everything else on stderr.

use std::path::PathBuf;
use std::time::Duration;

use toolcall_mcp::catalog::{self, Severity};
use toolcall_mcp::{list_catalog_blocking, EnvVars, Flow, Options};
use toolcall_score::escape_path;

use crate::errors::{CliError, Outcome, Result};
use crate::output::{annotate, annotation, in_github_actions, outln, repo_relative, write_stdout};

/// Arguments of `toolcall mcp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with a server's catalog.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Write the server's whole catalog (every tools/list page, each tool as the server wrote
    /// it) as a stable, reviewable file: tools sorted by name, keys sorted, `required`, `type`
    /// lists and `enum` values sorted (an order-only change is no drift), volatile members
    /// (_meta, ttlMs, cacheScope, icon data) left out.
    Snapshot {
        #[command(flatten)]
        target: Target,
        /// The snapshot file to write.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        timeouts: Timeouts,
        #[command(flatten)]
        limit: MessageLimit,
    },
    /// Call each tool first with a valid input (the flow's first call of it, else one made from
    /// its schema), which it must answer, then with arguments its own inputSchema forbids (a
    /// required property missing, each property of the wrong type, null for required values,
    /// numbers past their bounds, strings past maxLength, an extra property where none is
    /// allowed, no arguments), each of which it must refuse (an isError result or a JSON-RPC
    /// error) in time. A crash, a hang, an accepted invalid input or a refused valid one is a
    /// finding (exit 1); a tool that refuses valid input proves nothing by refusing invalid
    /// input. Deterministic: the same schema gives the same inputs. The valid-input call runs
    /// the tool for real: only for tools annotated read-only or destructiveHint: false (by the
    /// MCP spec's defaults a tool without annotations is destructive) unless
    /// --include-destructive; tools annotated destructive are not probed at all without it.
    Probe {
        #[command(flatten)]
        target: Target,
        /// Probe only this tool (repeatable).
        #[arg(long = "tool", value_name = "NAME")]
        tools: Vec<String>,
        /// Probe tools annotated destructiveHint: true too, and make the valid-input call of
        /// tools destructive by the MCP spec's defaults (no readOnlyHint: true nor
        /// destructiveHint: false).
        #[arg(long)]
        include_destructive: bool,
        /// The most probes run per tool (the first ones, in their fixed order): a schema of
        /// thousands of properties plans thousands of probes; the output says how many more.
        #[arg(long, value_name = "N", default_value_t = toolcall_mcp::probe::DEFAULT_MAX_PER_TOOL)]
        max_probes_per_tool: usize,
        /// After the fixed probes, N random inputs per tool (the valid input with random
        /// changes): one its schema forbids must be refused, one it allows must not crash or
        /// hang the server.
        #[arg(long, value_name = "N", default_value_t = 0)]
        runs: usize,
        /// The seed of --runs' random inputs: the same seed makes the same inputs (without it,
        /// one is taken from the clock; the output says which, to run them again).
        #[arg(long, value_name = "S", requires = "runs")]
        seed: Option<u64>,
        /// Seconds a probe may take before it is a hang.
        #[arg(long, value_name = "SECS", default_value_t = 5.0)]
        call_timeout: f64,
        #[command(flatten)]
        timeouts: Timeouts,
        #[command(flatten)]
        limit: MessageLimit,
    },
    /// Compare the server's live catalog with a snapshot and classify every change, each with
    /// its JSON path and old -> new: breaking (a tool removed; the inputSchema narrowed: a
    /// property required or removed, a bound raised, a maxLength, pattern or enum added, a type
    /// narrowed; the outputSchema widened: a member no longer required, a type widened, the
    /// schema dropped; a tool now task-only), security (a hint's meaning, with the spec's
    /// defaults applied, flipped toward destructive, open world, not idempotent, not read-only;
    /// a tool added that may be destructive), info (the rest: a tool added, an input widened,
    /// an output narrowed or given an optional member, a description or title). Exit 1 when a
    /// change at or above --fail-on is found, 2 when the server cannot be reached.
    Diff {
        #[command(flatten)]
        target: Target,
        /// The snapshot to compare with.
        #[arg(long)]
        snapshot: PathBuf,
        /// The least severity that fails: info, security or breaking.
        #[arg(long, default_value = "breaking")]
        fail_on: Severity,
        /// Accept the drift: rewrite the snapshot from the live catalog (after printing the
        /// changes).
        #[arg(long)]
        write: bool,
        #[command(flatten)]
        timeouts: Timeouts,
        #[command(flatten)]
        limit: MessageLimit,
    },
    /// Which of a catalog's tools no flow calls: the snapshot's tools against the calls of the
    /// flows given (files, or folders of *.json flows); no server is started. Prints each tool
    /// no flow calls, each that is called with its flows, and called names the catalog lacks.
    /// Exit 1 when the flows call less than --fail-under percent of the tools.
    Coverage {
        /// The flows: files, or folders whose *.json files are flows.
        #[arg(required = true, value_name = "FLOW")]
        flows: Vec<PathBuf>,
        /// The catalog snapshot; without it, the snapshot each flow names (its "snapshot").
        #[arg(long)]
        snapshot: Option<PathBuf>,
        /// The least share of the catalog's tools, in percent, the flows must call.
        #[arg(long, value_name = "PERCENT", default_value_t = 0.0)]
        fail_under: f64,
    },
    /// Be a stdio MCP server to whatever client starts this, start the real server (`-- CMD
    /// ARGS…`), pass every message through unchanged both ways, and write the session as a flow:
    /// the server, each tools/call with its arguments, a suggested expect for each result
    /// (values that differed between identical calls or from the last recording, or named
    /// with --volatile, left out and listed in $comment), refused and undeclared calls
    /// with expect_error; and the catalog snapshot it names. Messages go on stdout; the summary
    /// on stderr.
    Record(RecordArgs),
    /// Be an MCP server (stdio, or streamable HTTP with --listen) that stands in for a recorded
    /// one: its serverInfo, instructions and capabilities, its catalog in its order, and each
    /// call, prompt and resource answered as recorded (an unknown tool as the server answered
    /// one, else JSON-RPC -32602), to test an MCP client against; at exit print what the client
    /// did (matched, unmatched, unknown names with did-you-mean, schema violations) on stderr.
    Serve(ServeArgs),
}

/// `toolcall mcp record`'s arguments (see [`Action::Record`]).
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The flow to write (its journal is FILE.partial until the session ends).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Where to write the catalog snapshot (default: catalog/NAME.json beside the flow, in its
    /// folder, whatever the working directory). If it cannot be written, the flow still is
    /// (without naming it) and the exit code is 1.
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// An environment variable the server needs (repeatable): the flow gets "NAME": "${NAME}",
    /// never its value, and the value is redacted everywhere it is written (the flow, where it
    /// becomes ${NAME}, the snapshot, the journal). With --listen, for the redaction alone.
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// A regex whose matches, in any string recorded (arguments, results, the catalog), are
    /// written `[REDACTED]` (repeatable); a redacted value is left out of expect.
    #[arg(long = "redact-pattern", value_name = "REGEX")]
    redact_patterns: Vec<String>,
    /// A JSONPath (RFC 9535) into each JSON-RPC message whose matches are written `[REDACTED]`
    /// (repeatable): '$.result.structuredContent.token', '$.params.arguments.password',
    /// '$..apiKey'.
    #[arg(long = "redact-path", value_name = "JSONPATH")]
    redact_paths: Vec<String>,
    /// A JSON pointer into results left out of expect (repeatable): /created_at (that value
    /// and what is under it, in every call) or TOOL:/pointer (in that tool's). Beside it, a
    /// value is left out when it differed between two calls of the session with the same
    /// arguments, or from the flow recorded over (--force); one that only looks volatile is
    /// pinned and named in $comment.
    #[arg(long = "volatile", value_name = "POINTER")]
    volatile: Vec<String>,
    /// Record over an existing --out flow and its snapshot (without it, either being there is
    /// an error). Even so, a session that made no call replaces nothing.
    #[arg(long)]
    force: bool,
    /// Finish the recording a killed session left in FILE.partial, instead of recording.
    #[arg(long)]
    recover: bool,
    /// Seconds the server gets to exit after the client closed its side.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    grace: f64,
    /// Record a streamable HTTP server instead: listen here (127.0.0.1:3002; port 0 for any),
    /// forward to --upstream; Ctrl-C, SIGTERM or SIGHUP ends the recording.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "recover"
    )]
    listen: Option<String>,
    /// Let --listen take an address other than loopback (0.0.0.0:3002), which other machines
    /// reach: nothing asks their clients for a token. Any Host is then accepted; a browser
    /// Origin must still be a loopback page.
    #[arg(long, requires = "listen")]
    insecure_listen: bool,
    /// The streamable HTTP endpoint --listen forwards to (http://127.0.0.1:3001/mcp).
    #[arg(long, value_name = "URL", requires = "listen")]
    upstream: Option<String>,
    /// A header the recorded flow sends to the --upstream server, as the flow should write it
    /// (repeatable): --header 'Authorization=Bearer ${MCP_TOKEN}'. What the client sent is
    /// never written down.
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "listen")]
    headers: Vec<String>,
    /// Answer a tools/call of a name the server's tools/list never offered with an isError
    /// result naming the offered tools (and the closest one), without forwarding it or recording
    /// it. Over stdio.
    #[arg(long, conflicts_with_all = ["listen", "recover"])]
    guard: bool,
    /// The server to start: `-- CMD ARGS…`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// `toolcall mcp serve`'s arguments (see [`Action::Serve`]).
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// A recorded flow (its catalog from the snapshot it names) or a catalog snapshot.
    recording: PathBuf,
    /// How a request is matched to a recorded one: by-params (the same params, _meta aside;
    /// answers are used in order, the last again once all are used), sequential (the next
    /// recorded request of its method, whatever its params), strict (the same params, _meta
    /// included; each answer once) or name (a tools/call by name alone).
    #[arg(long = "match", value_name = "HOW", default_value = "by-params")]
    matching: toolcall_mcp_record::serve::Matching,
    /// Also write what the client did as JSON.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Exit 1 on an unmatched call or request, an unknown name or a schema violation.
    #[arg(long)]
    strict: bool,
    /// Serve streamable HTTP on this loopback address instead of stdio (127.0.0.1:3001; port 0
    /// for any); Ctrl-C, SIGTERM or SIGHUP ends it and prints the report. A request whose Host
    /// or Origin is not loopback is refused.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Let --listen take an address other than loopback (0.0.0.0:3001), which other machines
    /// reach: nothing asks their clients for a token. Any Host is then accepted; a browser
    /// Origin must still be a loopback page.
    #[arg(long, requires = "listen")]
    insecure_listen: bool,
    #[command(flatten)]
    limit: MessageLimit,
}

/// The server: a flow naming it (its calls are not made), a URL, or a command after `--`.
#[derive(Debug, clap::Args)]
#[group(required = true, multiple = false)]
pub struct Target {
    /// A flow naming the server (`{"server": …, "calls": []}` will do).
    flow: Option<PathBuf>,
    /// A streamable HTTP server, instead of a flow: `--url http://127.0.0.1:3001/mcp`.
    #[arg(long)]
    url: Option<String>,
    /// A stdio server, instead of a flow: its command and arguments after `--`
    /// (`-- npx -y @modelcontextprotocol/server-everything`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

impl Target {
    /// The flow to reach the server with: read from its file, or made from the command line
    /// (no calls, relative paths against the working directory, `${VAR}` expanded).
    fn flow(&self) -> Result<Flow> {
        if let Some(path) = &self.flow {
            return Ok(Flow::load(path)?);
        }
        let server = match (&self.url, self.command.split_first()) {
            (Some(url), _) => serde_json::json!({ "url": url }),
            (None, Some((command, args))) => {
                serde_json::json!({ "command": command, "args": args })
            }
            (None, None) => {
                return Err(CliError::usage(
                    "name the server: a flow, --url URL or -- COMMAND",
                ))
            }
        };
        let text = serde_json::json!({ "server": server, "calls": [] }).to_string();
        let cwd = std::env::current_dir().unwrap_or_default();
        Ok(Flow::from_json_str(
            &text,
            std::path::Path::new(&self.shown()),
            &cwd,
            &EnvVars,
        )?)
    }

    /// The target as it is written on a command line, for messages and suggested commands.
    fn shown(&self) -> String {
        if let Some(path) = &self.flow {
            return escape_path(path).to_string();
        }
        if let Some(url) = &self.url {
            return format!("--url {}", toolcall_score::escape(url));
        }
        let words: Vec<String> = self
            .command
            .iter()
            .map(|w| {
                let w = toolcall_score::escape(w).to_string();
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("'{w}'")
                } else {
                    w
                }
            })
            .collect();
        format!("-- {}", words.join(" "))
    }
}

/// How long the server may take.
#[derive(Debug, clap::Args)]
pub struct Timeouts {
    /// Seconds allowed for start-up plus `initialize` (a flow's `timeouts` take precedence).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub init_timeout: f64,
}

/// How long a single message may be: one flag for every command that reads a server's (or a
/// client's) messages, so the advice a too-long message gets works with each of them.
#[derive(Debug, clap::Args)]
pub struct MessageLimit {
    /// The longest single message accepted (from a stdio server; for `mcp serve`, from the
    /// client), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024)]
    pub max_message_bytes: usize,
}

/// Runs `toolcall mcp`.
pub fn run(args: &Args) -> Result {
    match &args.action {
        Action::Record(args) => record(args),
        Action::Serve(args) => serve(args),
        Action::Snapshot {
            target,
            out,
            timeouts,
            limit,
        } => {
            let tools = live(target, timeouts, limit)?;
            let snap = named(catalog::snapshot(&tools), target, out);
            write(out, &snap)?;
            outln!(
                "wrote {} tool(s) of {} to {}",
                snap["tools"].as_array().map_or(0, Vec::len),
                target.shown(),
                escape_path(out)
            );
            Ok(Outcome::Pass)
        }
        Action::Coverage {
            flows,
            snapshot,
            fail_under,
        } => coverage(flows, snapshot.as_deref(), *fail_under),
        Action::Probe {
            target,
            tools,
            include_destructive,
            max_probes_per_tool,
            runs,
            seed,
            call_timeout,
            timeouts,
            limit,
        } => {
            let what = toolcall_mcp::probe::ProbeOptions {
                tools: tools.to_vec(),
                include_destructive: *include_destructive,
                max_per_tool: *max_probes_per_tool,
                runs: *runs,
                seed: *seed,
            };
            probe(target, &what, *call_timeout, timeouts, limit)
        }
        Action::Diff {
            target,
            snapshot,
            fail_on,
            write: accept,
            timeouts,
            limit,
        } => {
            let text = toolcall_score::read_text(snapshot)?;
            let old: serde_json::Value =
                serde_json::from_str(&text).map_err(|source| CliError::NotJson {
                    path: snapshot.clone(),
                    expected: "a snapshot",
                    source,
                })?;
            // Exit 1 is drift: a server that cannot be reached is exit 2, not drift.
            let tools = live(target, timeouts, limit).map_err(|e| match e {
                CliError::Server { .. } => CliError::Unreachable(Box::new(e)),
                other => other,
            })?;
            let new = named(catalog::snapshot(&tools), target, snapshot);
            let changes = catalog::diff(&old, &new);
            let mut out = String::new();
            for severity in [Severity::Breaking, Severity::Security, Severity::Info] {
                let group: Vec<_> = changes.iter().filter(|c| c.severity == severity).collect();
                if group.is_empty() {
                    continue;
                }
                out.push_str(&format!("{severity} ({}):\n", group.len()));
                for change in group {
                    out.push_str(&format!("  {change}\n"));
                }
            }
            let failing = changes.iter().filter(|c| c.severity >= *fail_on).count();
            out.push_str(&if changes.is_empty() {
                format!("the catalog matches {}\n", escape_path(snapshot))
            } else if failing == 0 || *accept {
                format!(
                    "{} change(s), none at or above --fail-on {fail_on}{}\n",
                    changes.len(),
                    if *accept { " that stays: accepted" } else { "" }
                )
            } else {
                format!(
                    "FAILED: {failing} change(s) at or above --fail-on {fail_on}; to accept them: \
                     toolcall mcp diff --snapshot {} --write {}\n",
                    escape_path(snapshot),
                    target.shown()
                )
            });
            write_stdout(format_args!("{out}"));
            if in_github_actions() {
                for change in changes.iter().filter(|c| c.severity >= *fail_on) {
                    annotate(&annotation(
                        &repo_relative(snapshot),
                        None,
                        &format!("catalog drift ({})", change.severity),
                        &change.to_string(),
                    ));
                }
            }
            if *accept && !changes.is_empty() {
                write(snapshot, &new)?;
                outln!("rewrote {}", escape_path(snapshot));
                return Ok(Outcome::Pass);
            }
            Ok(Outcome::of(failing == 0))
        }
    }
}

/// A `${VAR}` left as it is written: coverage reads only the names a flow calls, so a variable
/// the shell lacks is no reason to stop.
struct Unexpanded;

impl toolcall_mcp::Vars for Unexpanded {
    fn get(&self, name: &str) -> Option<String> {
        Some(format!("${{{name}}}"))
    }
}

/// A catalog (its file and content) and the flows counted against it, each with the names it
/// calls.
type Group = (PathBuf, serde_json::Value, Vec<(String, Vec<String>)>);

/// `toolcall mcp coverage`: the flows' calls against the catalog (one, or each one the flows
/// name).
fn coverage(paths: &[PathBuf], snapshot: Option<&std::path::Path>, fail_under: f64) -> Result {
    if !(0.0..=100.0).contains(&fail_under) {
        return Err(CliError::usage(
            "--fail-under takes a percentage from 0 to 100",
        ));
    }
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(Flow::files_in(path)?);
        } else {
            files.push(path.clone());
        }
    }
    // Each catalog with the flows checked against it, in the order first seen.
    let mut groups: Vec<Group> = Vec::new();
    if let Some(path) = snapshot {
        let text = toolcall_score::read_text(path)?;
        let catalog = serde_json::from_str(&text).map_err(|source| CliError::NotJson {
            path: path.to_path_buf(),
            expected: "a snapshot",
            source,
        })?;
        groups.push((path.to_path_buf(), catalog, Vec::new()));
    }
    let mut unnamed = Vec::new();
    for file in &files {
        let flow = Flow::load_with(file, &Unexpanded)?;
        let shown = escape_path(file).to_string();
        // Tool calls only: a prompt's or a resource's step names no tool.
        let names: Vec<String> = flow
            .calls
            .iter()
            .filter(|c| c.kind == toolcall_mcp::StepKind::Tool)
            .map(|c| c.name.clone())
            .collect();
        let index = match (snapshot, &flow.snapshot) {
            (Some(_), _) => 0,
            (None, Some(named)) => match groups.iter().position(|g| g.0 == named.path) {
                Some(i) => i,
                None => {
                    groups.push((named.path.clone(), named.catalog.clone(), Vec::new()));
                    groups.len() - 1
                }
            },
            (None, None) => {
                unnamed.push(shown);
                continue;
            }
        };
        groups[index].2.push((shown, names));
    }
    if groups.is_empty() {
        return Err(CliError::usage(
            "name the catalog: --snapshot FILE, or flows that name one (\"snapshot\")",
        ));
    }
    let mut out = String::new();
    let mut short = false;
    for (path, catalog, flows) in &groups {
        let got = catalog::coverage(
            catalog,
            flows
                .iter()
                .map(|(f, names)| (f.as_str(), names.iter().map(String::as_str).collect())),
        );
        let all = got.called.len() + got.uncalled.len();
        out.push_str(&format!(
            "{}: {} of {all} tool(s) called by {} flow(s) ({:.0}%)\n",
            escape_path(path),
            got.called.len(),
            flows.len(),
            got.percent()
        ));
        let tick = |t: &str| format!("`{}`", toolcall_score::escape(t));
        for tool in &got.uncalled {
            out.push_str(&format!("  uncalled  {}\n", tick(tool)));
        }
        for (tool, by) in &got.called {
            out.push_str(&format!("  called    {}: {}\n", tick(tool), by.join(", ")));
        }
        for (name, by) in &got.unknown {
            out.push_str(&format!(
                "  unknown   {}: {} (not in the catalog)\n",
                tick(name),
                by.join(", ")
            ));
        }
        short |= got.percent() < fail_under;
    }
    for flow in &unnamed {
        out.push_str(&format!(
            "note: {flow} names no snapshot (--snapshot FILE checks it against one)\n"
        ));
    }
    if short {
        out.push_str(&format!(
            "FAILED: the flows call less than --fail-under {fail_under}% of the tools\n"
        ));
    }
    write_stdout(format_args!("{out}"));
    Ok(Outcome::of(!short))
}

fn probe(
    target: &Target,
    what: &toolcall_mcp::probe::ProbeOptions,
    call_timeout: f64,
    timeouts: &Timeouts,
    limit: &MessageLimit,
) -> Result {
    let flow = target.flow()?;
    let path = flow.path.as_path();
    let seconds = |s: f64| Duration::try_from_secs_f64(s).ok().filter(|d| !d.is_zero());
    let (Some(init), Some(call)) = (seconds(timeouts.init_timeout), seconds(call_timeout)) else {
        return Err(CliError::usage(
            "--init-timeout and --call-timeout must be positive numbers of seconds",
        ));
    };
    let options = Options {
        initialize_timeout: init,
        call_timeout: call,
        max_message_bytes: limit.max_message_bytes,
        handle_ctrl_c: true,
        // `protocol: auto` remembers what each server spoke last (TOOLCALL_CACHE_DIR).
        protocol_cache: toolcall_mcp::default_protocol_cache(),
        ..Options::default()
    };
    let report = toolcall_mcp::probe::probe_blocking(&flow, &options, what);
    if let Some(failure) = report.failure {
        return Err(CliError::Server {
            target: target.shown(),
            failure: Box::new(failure),
            stderr_tail: Vec::new(),
        });
    }
    for probe in &report.probes {
        outln!("{probe}");
    }
    for (tool, why) in &report.skipped {
        outln!("skip   `{}`: {why}", toolcall_score::escape(tool));
    }
    for (tool, why) in &report.uncontrolled {
        outln!("nocall `{}`: {why}", toolcall_score::escape(tool));
    }
    for (tool, planned) in &report.capped {
        outln!(
            "cap    `{}`: {} of its {planned} probes ran, the first in their order (at most {} \
             per tool; --max-probes-per-tool N for more)",
            toolcall_score::escape(tool),
            what.max_per_tool,
            what.max_per_tool
        );
    }
    let findings: Vec<String> = report
        .findings()
        .map(ToString::to_string)
        .chain(report.refuses_everything().then(|| {
            "the server refused every valid-input control call: it refuses everything (is \
             it set up: a browser, a token, a folder?), so no refusal of invalid input proves \
             anything"
                .to_owned()
        }))
        .collect();
    if let Some(last) = findings.last().filter(|_| report.refuses_everything()) {
        outln!("REFUSE {last}");
    }
    let mut summary = format!(
        "\n{} probe(s) of {} tool(s): {} valid input(s) answered, {} refused as they should be, \
         {} finding(s)",
        report.probes.len(),
        {
            let mut names: Vec<&str> = report.probes.iter().map(|p| p.tool.as_str()).collect();
            names.dedup();
            names.len()
        },
        report.answered(),
        report.refused(),
        findings.len()
    );
    if report.moot() > 0 {
        summary.push_str(&format!(
            "; {} refusal(s) prove nothing, their tool refusing valid input too",
            report.moot()
        ));
    }
    if !report.uncontrolled.is_empty() {
        summary.push_str(&format!(
            "; {} tool(s) without a control call, their refusals unproven (nocall above)",
            report.uncontrolled.len()
        ));
    }
    outln!("{summary}");
    if let Some(seed) = report.seed {
        outln!(
            "random inputs from seed {seed} (--runs {} --seed {seed} makes them again)",
            what.runs
        );
    }
    if in_github_actions() {
        for finding in &findings {
            annotate(&annotation(
                &repo_relative(path),
                None,
                "toolcall mcp probe",
                finding,
            ));
        }
    }
    Ok(Outcome::of(findings.is_empty()))
}

/// A snapshot naming its flow, when the server came from one (so the snapshot alone is a test);
/// a server from the command line has no file to name.
fn named(
    snapshot: serde_json::Value,
    target: &Target,
    snapshot_file: &std::path::Path,
) -> serde_json::Value {
    match &target.flow {
        Some(flow) => catalog::naming_flow(snapshot, flow, snapshot_file),
        None => snapshot,
    }
}

/// The live catalog of the target's server, or why not.
fn live(
    target: &Target,
    timeouts: &Timeouts,
    limit: &MessageLimit,
) -> Result<Vec<serde_json::Value>> {
    let flow = target.flow()?;
    let options = Options {
        initialize_timeout: Duration::try_from_secs_f64(timeouts.init_timeout)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                CliError::usage("--init-timeout must be a positive number of seconds")
            })?,
        max_message_bytes: limit.max_message_bytes,
        handle_ctrl_c: true,
        // `protocol: auto` remembers what each server spoke last (TOOLCALL_CACHE_DIR).
        protocol_cache: toolcall_mcp::default_protocol_cache(),
        ..Options::default()
    };
    let (tools, report) = list_catalog_blocking(&flow, &options);
    tools.map_err(|failure| CliError::Server {
        target: target.shown(),
        failure: Box::new(failure),
        stderr_tail: report.stderr_tail,
    })
}

fn write(path: &std::path::Path, snap: &serde_json::Value) -> Result<()> {
    let text = toolcall_score::to_json_pretty(snap).map_err(CliError::Serialize)?;
    toolcall_fs::write_atomic(path, format!("{text}\n").as_bytes()).map_err(|source| {
        CliError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// `toolcall mcp record`: stdout is the client's channel, so everything else goes to stderr.
fn record(args: &RecordArgs) -> Result {
    let recorded = if args.recover {
        toolcall_mcp_record::recover(&args.out)
    } else if let (Some(listen), Some(upstream)) = (&args.listen, &args.upstream) {
        if !args.command.is_empty() {
            return Err(CliError::usage(
                "--listen records the --upstream server: no command after `--`",
            ));
        }
        let mut headers = Vec::new();
        for header in &args.headers {
            let Some((name, value)) = header.split_once('=') else {
                return Err(CliError::usage(
                    "--header takes NAME=VALUE: --header 'Authorization=Bearer ${MCP_TOKEN}'",
                ));
            };
            headers.push((name.trim().to_owned(), value.to_owned()));
        }
        let options = toolcall_mcp_record::RecordOptions {
            snapshot: args.snapshot.clone(),
            headers,
            env: args.env.clone(),
            redact_patterns: args.redact_patterns.clone(),
            redact_paths: args.redact_paths.clone(),
            volatile: args.volatile.clone(),
            force: args.force,
            ..toolcall_mcp_record::RecordOptions::new(&args.out, "", Vec::new())
        };
        use toolcall_mcp_record::http;
        let listen = toolcall_mcp_record::loopback::Listen {
            addr: listen.clone(),
            insecure: args.insecure_listen,
        };
        match http::record_http(&options, listen, upstream) {
            Ok(recording) => {
                toolcall_mcp_record::signals::stop_on_signals(recording.stopper());
                eprintln!(
                    "toolcall mcp record: listening on http://{}, forwarding to {}; Ctrl-C ends the recording",
                    recording.addr(),
                    toolcall_score::escape(upstream)
                );
                recording.wait()
            }
            Err(e) => Err(e),
        }
    } else {
        let Some((command, rest)) = args.command.split_first() else {
            return Err(CliError::usage("name the server to record after `--`: toolcall mcp record --out flows/NAME.json -- CMD ARGS…"));
        };
        let Some(grace) = Duration::try_from_secs_f64(args.grace).ok() else {
            return Err(CliError::usage("--grace must be a number of seconds"));
        };
        let options = toolcall_mcp_record::RecordOptions {
            snapshot: args.snapshot.clone(),
            env: args.env.clone(),
            redact_patterns: args.redact_patterns.clone(),
            redact_paths: args.redact_paths.clone(),
            volatile: args.volatile.clone(),
            grace,
            force: args.force,
            handle_signals: true,
            guard: args.guard,
            ..toolcall_mcp_record::RecordOptions::new(&args.out, command, rest.to_vec())
        };
        toolcall_mcp_record::record::record(&options, std::io::stdin(), std::io::stdout())
    };
    let recorded = recorded?;
    eprintln!("{recorded}");
    // The flow is written; a snapshot that is not fails the command, saying so above.
    Ok(Outcome::of(recorded.snapshot_failed.is_none()))
}

/// `toolcall mcp serve`: stdout is the client's channel, so the report goes to stderr.
fn serve(args: &ServeArgs) -> Result {
    use toolcall_mcp_record::serve;
    let recording = serve::Recording::load(&args.recording).map_err(CliError::ServeInput)?;
    for note in &recording.notes {
        eprintln!("note: {}", toolcall_score::escape(note));
    }
    let served = match &args.listen {
        None => serve::serve_limited(recording, args.matching, args.limit.max_message_bytes),
        Some(listen) => {
            let listen = toolcall_mcp_record::loopback::Listen {
                addr: listen.clone(),
                insecure: args.insecure_listen,
            };
            // Refused before anything is served: a usage error, not a server that failed.
            listen.addresses().map_err(CliError::usage)?;
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            toolcall_mcp_record::signals::stop_on_signals(std::sync::Arc::clone(&stop));
            serve::serve_http(recording, args.matching, listen, stop, |addr| {
                eprintln!("toolcall mcp serve: listening on http://{addr}/mcp; Ctrl-C ends it");
            })
        }
    };
    let report = served.map_err(CliError::Serve)?;
    eprint!("{report}");
    if let Some(path) = &args.report {
        serve::write_report(&report, path).map_err(CliError::ServeInput)?;
    }
    Ok(Outcome::of(!(args.strict && report.has_findings())))
}
