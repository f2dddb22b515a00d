//! What a guard run is told: where it listens, the upstreams, what it does with an unknown name,
//! where it writes its verdicts, and its limits. Checked whole before anything binds.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::GuardError;

/// What the guard does with a response that calls a tool the request did not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Pass everything through unchanged; record the verdict.
    Observe,
    /// Answer with the provider's own error shape (in a stream: its in-stream error event in
    /// place of what was not yet sent).
    Block,
    /// Ask the upstream again with the unknown call answered by an error result, as the loop
    /// guard does; give up as `Block` does. Streams are blocked.
    Repair,
}

impl Action {
    /// The name `--on-unknown` takes and the log writes.
    pub fn name(self) -> &'static str {
        match self {
            Action::Observe => "observe",
            Action::Block => "block",
            Action::Repair => "repair",
        }
    }
}

/// One upstream: a base URL, and the name a path prefix or a route's provider picks it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// `None` for the default upstream (`--upstream URL`).
    pub name: Option<String>,
    /// Scheme, host and any path prefix, without a trailing `/`.
    pub base: String,
}

impl Upstream {
    /// Reads `URL` or `NAME=URL`; the URL must be `http://` or `https://`.
    pub fn parse(text: &str) -> Result<Upstream, GuardError> {
        let (name, url) = match text.split_once('=') {
            Some((name, url)) if !name.contains('/') && !name.contains(':') => {
                (Some(name.to_owned()), url)
            }
            _ => (None, text),
        };
        if let Some(name) = &name {
            let ok = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !ok {
                return Err(GuardError::Config(format!(
                    "upstream name {:?}: letters, digits, `-` and `_` only",
                    toolcall_score::escape(name).to_string()
                )));
            }
        }
        let parsed = url::Url::parse(url).map_err(|e| {
            GuardError::Config(format!(
                "upstream {}: not a URL ({e})",
                toolcall_score::escape(url)
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(GuardError::Config(format!(
                "upstream {}: an http:// or https:// URL with a host",
                toolcall_score::escape(url)
            )));
        }
        if parsed.query().is_some() || !parsed.username().is_empty() || parsed.password().is_some()
        {
            return Err(GuardError::Config(format!(
                "upstream {}: no query or credentials in the URL (clients send their own key)",
                toolcall_score::escape(url)
            )));
        }
        Ok(Upstream {
            name,
            base: url.trim_end_matches('/').to_owned(),
        })
    }
}

/// Everything a guard run needs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where it listens: 127.0.0.1:8787 unless told.
    pub listen: SocketAddr,
    /// The upstreams, at least one.
    pub upstreams: Vec<Upstream>,
    /// What an unknown name makes it do.
    pub action: Action,
    /// The JSON Lines log of verdicts, appended to.
    pub log: Option<PathBuf>,
    /// `--record DIR`: each exchange as a case (`cases/guard/<id>.json`, the request) and its
    /// recording (`recorded/<agent>/guard/<id>.json|.sse|.ndjson`, the response as it came).
    pub record: Option<PathBuf>,
    /// The agent folder of the recordings.
    pub record_agent: String,
    /// Record only the exchanges with an unknown name.
    pub record_unknown_only: bool,
    /// `--otlp URL`: each verdict as a `gen_ai.evaluation.result` event (feature `otlp`).
    #[cfg(feature = "otlp")]
    pub otlp: Option<String>,
    /// A shared secret clients send as `x-toolcall-guard-token`.
    pub token: Option<String>,
    /// Listen on a non-loopback address with no token.
    pub insecure_listen: bool,
    /// Block an exchange the guard cannot read instead of passing it through.
    pub fail_closed: bool,
    /// The most bytes of a request or a response body it reads.
    pub max_body_bytes: usize,
    /// Connecting to the upstream.
    pub connect_timeout: Duration,
    /// The longest wait for the next bytes from the upstream, or from a client's request.
    pub idle_timeout: Duration,
    /// How long SIGTERM waits for the exchanges in flight.
    pub drain_timeout: Duration,
}

impl Config {
    /// A configuration for `upstreams` with every other setting at its default.
    pub fn new(upstreams: Vec<Upstream>) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            upstreams,
            action: Action::Observe,
            log: None,
            record: None,
            record_agent: "guard".to_owned(),
            record_unknown_only: false,
            #[cfg(feature = "otlp")]
            otlp: None,
            token: None,
            insecure_listen: false,
            fail_closed: false,
            max_body_bytes: usize::try_from(toolcall_score::max_input_bytes())
                .unwrap_or(usize::MAX),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            drain_timeout: Duration::from_secs(30),
        }
    }

    /// Refuses what must not run: no upstream, two defaults or two of one name, a non-loopback
    /// address without `--token` or `--insecure-listen`.
    pub fn check(&self) -> Result<(), GuardError> {
        if self.upstreams.is_empty() {
            return Err(GuardError::Config(
                "no upstream: --upstream URL (or NAME=URL) is required".into(),
            ));
        }
        for (i, a) in self.upstreams.iter().enumerate() {
            if self.upstreams[..i].iter().any(|b| b.name == a.name) {
                let what = a.name.as_deref().map_or_else(
                    || "two default upstreams (URL without NAME=)".to_owned(),
                    |n| format!("two upstreams named {n}"),
                );
                return Err(GuardError::Config(what));
            }
        }
        if !self.listen.ip().is_loopback() && self.token.is_none() && !self.insecure_listen {
            return Err(GuardError::Config(format!(
                "--listen {} is not a loopback address: anyone who reaches it could spend the \
                 keys clients send; give --token SECRET (clients send it as \
                 x-toolcall-guard-token) or --insecure-listen",
                self.listen
            )));
        }
        let agent = &self.record_agent;
        let safe = !agent.is_empty()
            && !agent.starts_with('.')
            && agent
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !safe {
            return Err(GuardError::Config(format!(
                "--record-agent {}: letters, digits, `-`, `_` and `.` only, not first",
                toolcall_score::escape(agent)
            )));
        }
        if self.token.as_deref() == Some("") {
            return Err(GuardError::Config("--token is empty".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstreams_are_a_url_or_a_name_and_a_url() {
        let plain = Upstream::parse("https://api.openai.com/").expect("plain");
        assert_eq!(plain.name, None);
        assert_eq!(plain.base, "https://api.openai.com");
        let named = Upstream::parse("anthropic=https://api.anthropic.com").expect("named");
        assert_eq!(named.name.as_deref(), Some("anthropic"));
        for bad in [
            "api.openai.com",
            "ftp://x",
            "a b=https://x",
            "https://user:key@x",
            "https://x/?key=1",
        ] {
            assert!(Upstream::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_public_address_needs_a_token_or_the_insecure_flag() {
        let mut config = Config::new(vec![Upstream::parse("http://127.0.0.1:1").expect("url")]);
        config.check().expect("loopback");
        config.listen = "0.0.0.0:8787".parse().expect("addr");
        assert!(config.check().is_err());
        config.token = Some("s3cret".into());
        config.check().expect("token");
        config.token = None;
        config.insecure_listen = true;
        config.check().expect("insecure");
        config.upstreams.push(config.upstreams[0].clone());
        assert!(config.check().is_err(), "two defaults");
    }
}
