//! The wire formats this crate reads, by the names users type for them.
//!
//! [`Format`] itself is declared by the registry in `provider/mod.rs`, one line per format; its
//! names, aliases and stop reasons come from each format's `Wire`. Every list of formats —
//! [`Format::ALL`], the names `--format` accepts, the messages that name the formats, the order
//! detection tries them in — is derived from that registry.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

pub use crate::provider::Format;

impl Format {
    /// The name used on the command line, in case files and in JSON output.
    pub fn as_str(self) -> &'static str {
        self.wire().name
    }

    /// The stop reason this format's provider reports for a turn that ends with tool calls
    /// (`called`) or in text; `None` where the format has no such field (call lists).
    pub fn stop_reason(self, called: bool) -> Option<&'static str> {
        let reasons = self.wire().stop_reasons;
        if called {
            reasons.calls
        } else {
            reasons.text
        }
    }
}

/// A request and the response its provider returned, in one format's own wire shape: a new
/// project's first case and recording (`toolcall init --format`). The response calls a tool the
/// request defines, so it scores as a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Example {
    /// The request body, with the case file's `about` sentence: a case file as it is.
    pub request: &'static str,
    /// The response body, as a recording.
    pub response: &'static str,
}

impl Format {
    /// This format's [`Example`].
    pub fn example(self) -> Example {
        self.wire().example
    }
}

/// Every format's name, comma-separated, for messages that list them.
pub(crate) fn names() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    names.join(", ")
}

impl Format {
    /// Whether a response in this format can be read from a recorded stream (server-sent
    /// events, one JSON chunk per line, a JSON array of chunks).
    pub fn streams(self) -> bool {
        crate::provider::streams(self)
    }

    /// The request body live mode sends for `case` in this format (`raw` is the case file's
    /// JSON, sent as written when it already is this format's request), or `None` when no live
    /// transport speaks this format.
    pub fn request_body(
        self,
        raw: &serde_json::Value,
        case: &crate::Case,
        settings: &crate::RequestSettings,
    ) -> Option<serde_json::Value> {
        self.wire().request.map(|body| body(raw, case, settings))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The error for a format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{given}`: expected one of {}", names())]
pub struct UnknownFormat {
    /// What was given.
    pub given: String,
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalized = s.trim().to_ascii_lowercase().replace('_', "-");
        Format::ALL
            .into_iter()
            .find(|f| {
                let wire = f.wire();
                wire.name == normalized || wire.aliases.contains(&normalized.as_str())
            })
            .ok_or_else(|| UnknownFormat {
                given: s.to_owned(),
            })
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_parse_back() {
        let mut seen = std::collections::BTreeSet::new();
        for format in Format::ALL {
            let wire = format.wire();
            assert_eq!(wire.name.parse::<Format>(), Ok(format));
            for name in std::iter::once(&wire.name).chain(wire.aliases) {
                assert!(seen.insert(*name), "`{name}` names two formats");
                assert_eq!(name.parse::<Format>(), Ok(format), "{name}");
                assert_eq!(*name, name.to_ascii_lowercase().replace('_', "-"));
            }
        }
        assert_eq!("OpenAI_Chat".parse::<Format>(), Ok(Format::OpenaiChat));
        let unknown = "mistral-native".parse::<Format>().unwrap_err().to_string();
        assert!(unknown.contains("anthropic, openai-chat"), "{unknown}");
    }
}
