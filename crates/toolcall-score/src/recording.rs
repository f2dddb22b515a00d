//! Which files under `recorded/<agent>/` hold responses, and how many each holds: the one
//! convention the harness, `toolcall check` and `toolcall rate` share, kept here so that they
//! cannot drift apart.

use std::path::{Path, PathBuf};

/// How a recorded response file holds its responses, told by its extension.
///
/// | extension | holds |
/// |---|---|
/// | `.json` | one response body |
/// | `.jsonl` | one response body per non-blank line (repeated samples) |
/// | `.sse` | one recorded stream of server-sent events (OpenAI, Anthropic, Gemini) |
/// | `.ndjson` | one recorded stream, one JSON chunk per line (Ollama's, or any format's) |
///
/// Streams are read by [`crate::Response::load`], which assembles them into their format's body.
/// A `.json` (or any other name outside this table, such as an SDK's `.chunks.txt` given to
/// `toolcall score --response`) is one response, so JSON lines in it are one stream whatever
/// their format. A `.jsonl` is samples: a Gemini or Ollama chunk looks just like a body, so only a
/// first line that no body looks like (a `chat.completion.chunk`, an Anthropic, Responses or
/// Bedrock event, an Ollama chunk with `"done": false`) makes `Response::load` read the file as
/// one stream. A case recorded under two of these names at once is ambiguous; the callers report
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// The whole file is one response (a body or a stream).
    One,
    /// Each non-blank line is a response body.
    PerLine,
}

impl Recording {
    /// Every extension a recording may have, in order of preference (the first is what a
    /// recorder writes).
    pub const EXTENSIONS: [&'static str; 4] = ["json", "jsonl", "sse", "ndjson"];

    /// The kind of the file at `path`; `None` when its extension is not a recording's.
    pub fn of(path: &Path) -> Option<Recording> {
        match path.extension()?.to_str()? {
            "jsonl" => Some(Recording::PerLine),
            "json" | "sse" | "ndjson" => Some(Recording::One),
            _ => None,
        }
    }

    /// The files under `dir` that record case `id` (`<dir>/<id>.<extension>`), in
    /// [`Recording::EXTENSIONS`] order; more than one is a case recorded twice.
    pub fn files<'a>(dir: &'a Path, id: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
        Recording::EXTENSIONS
            .iter()
            .map(move |extension| dir.join(format!("{id}.{extension}")))
            .filter(|path| path.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_extension_has_a_kind_and_nothing_else_does() {
        for extension in Recording::EXTENSIONS {
            let path = format!("recorded/gpt-4o/billing/refund.{extension}");
            assert!(Recording::of(Path::new(&path)).is_some(), "{path}");
        }
        assert_eq!(
            Recording::of(Path::new("a.jsonl")),
            Some(Recording::PerLine)
        );
        assert_eq!(Recording::of(Path::new("a.sse")), Some(Recording::One));
        for other in ["a.txt", "a", "a.json.bak", ".json"] {
            assert_eq!(Recording::of(Path::new(other)), None, "{other}");
        }
    }

    #[test]
    fn a_jsonl_of_stream_events_is_one_stream_and_of_bodies_samples() {
        let path = Path::new("recorded/a/case.jsonl");
        let chunks = "\n{\"object\":\"chat.completion.chunk\",\"choices\":[]}\n{\"object\":\"chat.completion.chunk\",\"choices\":[]}\n";
        assert_eq!(Recording::of_text(path, chunks), Some(Recording::One));
        let bodies = "{\"candidates\":[]}\n{\"candidates\":[]}\n";
        assert_eq!(Recording::of_text(path, bodies), Some(Recording::PerLine));
        assert_eq!(
            Recording::of_text(path, "not json\n"),
            Some(Recording::PerLine)
        );
        assert_eq!(
            Recording::of_text(Path::new("a.json"), chunks),
            Some(Recording::One)
        );
    }
}
