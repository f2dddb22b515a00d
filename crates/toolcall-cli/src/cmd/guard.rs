//! `toolcall guard`: run the model-API proxy of `toolcall-guard` in the foreground until SIGTERM
//! or Ctrl-C. The flags map one to one onto [`toolcall_guard::Config`]; what the guard does is
//! that crate's.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use toolcall_guard::{Action, Config, Upstream};

use crate::errors::{CliError, Outcome, Result};

/// Arguments of `toolcall guard`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model API to forward to: `URL` (the default upstream), or `NAME=URL`, picked by a
    /// first path segment `/NAME/…` or by a route's provider (openai, anthropic, gemini,
    /// ollama, cohere). Repeatable.
    #[arg(long = "upstream", value_name = "[NAME=]URL", required = true)]
    pub upstreams: Vec<String>,
    /// Where to listen. A non-loopback address needs --token or --insecure-listen.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// What to do with a response that calls a tool the request did not define: pass it and
    /// record the verdict (observe), answer with the provider's own error (block), or ask the
    /// upstream again with the unknown call answered by an error result (repair; streams are
    /// blocked).
    #[arg(long, value_name = "ACTION", default_value = "observe", value_parser = ["observe", "block", "repair"])]
    pub on_unknown: String,
    /// Append one JSON line per exchange here (the verdict, and the request and response
    /// `toolcall rate` reads).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write each exchange into DIR as a case (cases/guard/<id>.json, the request) and its
    /// recording (recorded/<agent>/guard/<id>.json, .sse or .ndjson, the response as it came),
    /// ready for `toolcall check --root DIR`.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// The agent folder of --record's recordings.
    #[arg(long, value_name = "NAME", default_value = "guard")]
    pub record_agent: String,
    /// Record only the exchanges whose response calls a tool the request did not define.
    #[arg(long, requires = "record")]
    pub record_unknown_only: bool,
    /// Send each verdict to this OTLP/HTTP collector (URL/v1/logs) as a gen_ai.evaluation.result
    /// event named toolcall.membership.
    #[cfg(feature = "otlp")]
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// A shared secret every client must send as the x-toolcall-guard-token header (default:
    /// TOOLCALL_GUARD_TOKEN, which keeps it out of the process list).
    #[arg(long, value_name = "SECRET")]
    pub token: Option<String>,
    /// Listen on a non-loopback address without a token.
    #[arg(long)]
    pub insecure_listen: bool,
    /// Block an exchange the guard cannot read (an unknown shape, a body over the limit)
    /// instead of passing it through.
    #[arg(long)]
    pub fail_closed: bool,
    /// Seconds to wait for the next bytes from the upstream or a client.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub idle_timeout: u64,
    /// Seconds to wait for the exchanges in flight on SIGTERM.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub drain_timeout: u64,
}

/// Runs `toolcall guard`.
pub fn run(args: &Args) -> Result<Outcome> {
    let upstreams = args
        .upstreams
        .iter()
        .map(|u| Upstream::parse(u))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut config = Config::new(upstreams);
    config.listen = args.listen;
    config.action = match args.on_unknown.as_str() {
        "block" => Action::Block,
        "repair" => Action::Repair,
        "observe" => Action::Observe,
        other => return Err(CliError::usage(format!("--on-unknown {other}"))),
    };
    config.log.clone_from(&args.log);
    config.record.clone_from(&args.record);
    config.record_agent.clone_from(&args.record_agent);
    config.record_unknown_only = args.record_unknown_only;
    #[cfg(feature = "otlp")]
    config.otlp.clone_from(&args.otlp);
    config.token = args
        .token
        .clone()
        .or_else(|| std::env::var("TOOLCALL_GUARD_TOKEN").ok());
    config.insecure_listen = args.insecure_listen;
    config.fail_closed = args.fail_closed;
    config.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    config.drain_timeout = Duration::from_secs(args.drain_timeout);
    let action = config.action.name();
    toolcall_guard::serve(config, |addr| {
        eprintln!("toolcall guard: listening on http://{addr} (on unknown: {action})");
    })?;
    Ok(Outcome::Pass)
}
