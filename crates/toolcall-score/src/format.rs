//! The wire formats this crate reads, by the names users type for them: [`Format`] and its
//! names, and nothing else, so every layer can name a format without depending on the readers.
//!
//! The registry below (`formats!`) is the one list of formats: each line gives the variant, its
//! module under `provider/`, its name and its aliases. [`Format`], [`Format::ALL`] (the order
//! detection tries them in), the names `--format` accepts and the messages that list formats
//! are derived from it here; the provider layer derives its modules and each format's `Wire`
//! from the same list (`provider/registry.rs`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// Calls `$then!` with the registry: one line per wire format, `Variant => module, "name",
/// ["alias", …];`. Adding a format is its module under `provider/`, with its `WIRE`, and a
/// line here (ARCHITECTURE.md, "Adding a wire format").
macro_rules! formats {
    ($then:ident) => {
        $then! {
            /// Anthropic Messages API (`content` blocks of type `tool_use` / `tool_result`).
            Anthropic => anthropic, "anthropic", ["claude", "messages"];
            /// OpenAI Chat Completions (`choices[].message.tool_calls`, `arguments` as a JSON string).
            OpenaiChat => openai_chat, "openai-chat", ["openai", "chat", "chat-completions"];
            /// OpenAI Responses API (`output` items of type `function_call`).
            OpenaiResponses => openai_responses, "openai-responses", ["responses"];
            /// Gemini `generateContent` (`candidates[].content.parts[].functionCall`).
            Gemini => gemini, "gemini", ["google", "vertex"];
            /// Amazon Bedrock Converse (`output.message.content[].toolUse`).
            Bedrock => bedrock, "bedrock", ["converse", "bedrock-converse"];
            /// Ollama `/api/chat` (`message.tool_calls`, `arguments` as an object).
            Ollama => ollama, "ollama", [];
            /// Cohere v2 chat (`message.tool_calls`, `tool_plan`, `finish_reason`).
            Cohere => cohere, "cohere", ["cohere-v2"];
            /// Cohere v1 chat (`message`, `chat_history`, `parameter_definitions`; `text` and
            /// `tool_calls` in the response).
            CohereV1 => cohere_v1, "cohere-v1", [];
            /// A plain JSON list of `{name, input}` calls, as in an MCP replay transcript.
            CallList => call_list, "call-list", ["calls", "mcp"];
        }
    };
}
pub(crate) use formats;

macro_rules! declare_format {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, $name:literal, [$($alias:literal),*]; )*) => {
        /// A provider's wire format, for responses, tool arrays and transcripts alike.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Format {
            $( $(#[$doc])* $variant, )*
        }

        impl Format {
            /// Every format, in the registry's order (the order detection tries them in).
            pub const ALL: [Format; [$(stringify!($variant)),*].len()] = [$(Format::$variant),*];

            /// The name used on the command line, in case files and in JSON output.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( Format::$variant => $name, )*
                }
            }

            /// Other names `--format` and a case's `format` accept (compared lower-cased, `_`
            /// as `-`).
            pub(crate) const fn aliases(self) -> &'static [&'static str] {
                match self {
                    $( Format::$variant => &[$($alias),*], )*
                }
            }
        }
    };
}
formats!(declare_format);

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

/// Every format's name, comma-separated, for messages that list them.
pub(crate) fn names() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    names.join(", ")
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
            .find(|f| f.as_str() == normalized || f.aliases().contains(&normalized.as_str()))
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
            assert_eq!(format.as_str().parse::<Format>(), Ok(format));
            for name in std::iter::once(&format.as_str()).chain(format.aliases()) {
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
