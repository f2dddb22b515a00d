//! What keeps the HTTP servers of this crate (`mcp serve --listen`, `mcp record --listen`) to
//! this machine: one rule for both, so the recorder is not a way round the mock's guard or a
//! local server's own.
//!
//! Neither asks for a token, so neither listens on an address other machines reach unless told
//! to ([`Listen::insecure`], `--insecure-listen`). And a loopback listener is still reachable
//! from a browser on this machine (a page's `fetch`, or a DNS-rebound name that resolves to
//! 127.0.0.1), so every request must name a loopback `Host`, and an `Origin`, when it carries
//! one, must be a loopback page too ([`refusal`]): what a client that is not a browser never
//! trips over, and what MCP's transport asks a local server to check.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Where one of our HTTP servers listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listen {
    /// The address as given (`127.0.0.1:3001`, `localhost:0`, `[::1]:3001`).
    pub addr: String,
    /// Listen on an address other than loopback although nothing asks for a token
    /// (`--insecure-listen`); then any `Host` is taken (a remote client names this machine as
    /// it knows it), and the `Origin` check stays.
    pub insecure: bool,
}

impl From<&str> for Listen {
    /// A loopback-only listener on `addr`.
    fn from(addr: &str) -> Listen {
        Listen {
            addr: addr.to_owned(),
            insecure: false,
        }
    }
}

impl Listen {
    /// The socket addresses to bind, or why not: `addr` does not resolve, or resolves to an
    /// address that is not loopback without [`Listen::insecure`].
    pub fn addresses(&self) -> Result<Vec<SocketAddr>, String> {
        let shown = toolcall_score::escape(&self.addr);
        let addrs: Vec<SocketAddr> = self
            .addr
            .to_socket_addrs()
            .map_err(|e| format!("--listen {shown}: not an address to listen on: {e}"))?
            .collect();
        if addrs.is_empty() {
            return Err(format!("--listen {shown}: resolves to no address"));
        }
        if !self.insecure {
            if let Some(open) = addrs.iter().find(|a| !a.ip().is_loopback()) {
                return Err(format!(
                    "--listen {shown}: {} is not a loopback address, and nothing here asks a \
                     client for a token: every machine that reaches it could use it. Listen on \
                     127.0.0.1 (or [::1]), or give --insecure-listen to mean it",
                    open.ip()
                ));
            }
        }
        Ok(addrs)
    }
}

/// Whether `host` (a `Host` header's host, or an origin's) names this machine's loopback.
fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Why a request with these `Host` and `Origin` headers is refused (403), or `None` when it may
/// pass: the `Host` must be loopback (any, under [`Listen::insecure`]), and an `Origin` a
/// loopback `http://` or `https://` page (`null`, a sandboxed or file page, is refused).
pub fn refusal(host: Option<&str>, origin: Option<&str>, listen: &Listen) -> Option<String> {
    if !listen.insecure {
        let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
            return Some("the request names no Host".to_owned());
        };
        let name = match host.parse::<http::uri::Authority>() {
            Ok(authority) => authority.host().to_owned(),
            Err(_) => host.to_owned(),
        };
        if !is_loopback_name(&name) {
            return Some(format!(
                "Host `{}` is not this machine's loopback",
                toolcall_score::escape(host)
            ));
        }
    }
    if let Some(origin) = origin.map(str::trim) {
        let allowed = origin
            .parse::<http::Uri>()
            .ok()
            .filter(|uri| matches!(uri.scheme_str(), Some("http" | "https")))
            .and_then(|uri| uri.host().map(is_loopback_name))
            .unwrap_or(false);
        if !allowed {
            return Some(format!(
                "Origin `{}` is not a page of this machine's loopback",
                toolcall_score::escape(origin)
            ));
        }
    }
    None
}

/// The 403 answer to a refused request, as bytes to write.
pub(crate) fn forbidden(why: &str) -> Vec<u8> {
    let body = format!("toolcall: {why}\n");
    format!(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_pass() {
        let local = Listen::from("127.0.0.1:0");
        for host in [
            "127.0.0.1:3001",
            "localhost",
            "LOCALHOST:80",
            "[::1]:3001",
            "127.0.0.2",
        ] {
            assert_eq!(refusal(Some(host), None, &local), None, "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:3001",
            "10.0.0.1:3001",
            "0.0.0.0:3001",
        ] {
            assert!(refusal(Some(host), None, &local).is_some(), "{host}");
        }
        assert!(refusal(None, None, &local).is_some());
        let host = Some("127.0.0.1:3001");
        for origin in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert_eq!(refusal(host, Some(origin), &local), None, "{origin}");
        }
        for origin in [
            "https://evil.example",
            "null",
            "file://",
            "http://localhost.evil.example",
        ] {
            assert!(refusal(host, Some(origin), &local).is_some(), "{origin}");
        }
        let open = Listen {
            addr: "0.0.0.0:0".into(),
            insecure: true,
        };
        assert_eq!(refusal(Some("build-box:3001"), None, &open), None);
        assert!(refusal(Some("build-box:3001"), Some("https://evil.example"), &open).is_some());
    }

    #[test]
    fn an_address_other_machines_reach_needs_insecure() {
        let err = Listen::from("0.0.0.0:0").addresses().unwrap_err();
        assert!(
            err.contains("0.0.0.0 is not a loopback address") && err.contains("--insecure-listen"),
            "{err}"
        );
        assert!(Listen::from("127.0.0.1:0").addresses().is_ok());
        assert!(Listen::from("localhost:0").addresses().is_ok());
        let open = Listen {
            addr: "0.0.0.0:0".into(),
            insecure: true,
        };
        assert!(open.addresses().is_ok());
    }
}
