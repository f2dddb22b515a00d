//! Which wire format a request speaks, told by its path as each API is served, and which
//! upstream it goes to: a first path segment naming an upstream, else the upstream named after
//! the route's provider, else the default one. Paths no route claims pass through unchecked
//! (model lists, token counts, files).

use toolcall_score::Format;

use crate::config::Upstream;

/// A request's route: its format (`None`: passed through unchecked), the upstream and the path
/// to ask it for.
#[derive(Debug)]
pub(crate) struct Route<'a> {
    pub(crate) format: Option<Format>,
    pub(crate) upstream: &'a Upstream,
    /// The path (and query) sent upstream, without the upstream's name.
    pub(crate) path: String,
}

/// The format and provider of a path (without its query), as each API serves it.
pub(crate) fn format_of(path: &str) -> Option<(Format, &'static str)> {
    let path = path.trim_end_matches('/');
    if path.ends_with("/chat/completions") {
        return Some((Format::OpenaiChat, "openai"));
    }
    if path.ends_with("/v1/responses") || path == "/responses" {
        return Some((Format::OpenaiResponses, "openai"));
    }
    if path.ends_with("/v1/messages") || path == "/messages" {
        return Some((Format::Anthropic, "anthropic"));
    }
    if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        return Some((Format::Gemini, "gemini"));
    }
    if path.ends_with("/api/chat") {
        return Some((Format::Ollama, "ollama"));
    }
    if path.ends_with("/v2/chat") {
        return Some((Format::Cohere, "cohere"));
    }
    None
}

/// The route of `path_and_query` among `upstreams`; `None` when no upstream serves it.
pub(crate) fn route<'a>(upstreams: &'a [Upstream], path_and_query: &str) -> Option<Route<'a>> {
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    let prefixed = upstreams
        .iter()
        .find(|u| u.name.as_deref() == Some(first) && !first.is_empty());
    let (upstream, path) = match prefixed {
        Some(upstream) => (Some(upstream), &path[1 + first.len()..]),
        None => (None, path),
    };
    let path = if path.is_empty() { "/" } else { path };
    let found = format_of(path);
    let provider = found.map_or("", |(_, p)| p);
    let upstream = upstream
        .or_else(|| {
            upstreams
                .iter()
                .find(|u| !provider.is_empty() && u.name.as_deref() == Some(provider))
        })
        .or_else(|| upstreams.iter().find(|u| u.name.is_none()))?;
    let path = match query {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    Some(Route {
        format: found.map(|(f, _)| f),
        upstream,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ups() -> Vec<Upstream> {
        [
            "http://default:1",
            "anthropic=http://a:1",
            "local=http://l:1",
        ]
        .iter()
        .map(|u| Upstream::parse(u).expect("url"))
        .collect()
    }

    #[test]
    fn each_api_is_told_by_its_path() {
        let cases = [
            ("/v1/chat/completions", Some(Format::OpenaiChat)),
            ("/openai/v1/chat/completions", Some(Format::OpenaiChat)),
            ("/v1/responses", Some(Format::OpenaiResponses)),
            ("/v1/responses/resp_1", None),
            ("/v1/messages", Some(Format::Anthropic)),
            ("/v1/messages/count_tokens", None),
            (
                "/v1beta/models/gemini-2.5-flash:generateContent",
                Some(Format::Gemini),
            ),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                Some(Format::Gemini),
            ),
            ("/api/chat", Some(Format::Ollama)),
            ("/v2/chat", Some(Format::Cohere)),
            ("/v1/models", None),
        ];
        for (path, format) in cases {
            assert_eq!(format_of(path).map(|(f, _)| f), format, "{path}");
        }
    }

    #[test]
    fn a_prefix_or_the_provider_picks_the_upstream() {
        let ups = ups();
        let r = route(&ups, "/v1/messages").expect("route");
        assert_eq!(r.upstream.base, "http://a:1");
        let r = route(&ups, "/local/v1/chat/completions?x=1").expect("route");
        assert_eq!(r.upstream.base, "http://l:1");
        assert_eq!(r.path, "/v1/chat/completions?x=1");
        assert_eq!(r.format, Some(Format::OpenaiChat));
        let r = route(&ups, "/v1/chat/completions").expect("route");
        assert_eq!(r.upstream.base, "http://default:1");
        let only_named = vec![Upstream::parse("anthropic=http://a:1").expect("url")];
        assert!(route(&only_named, "/v1/chat/completions").is_none());
    }
}
