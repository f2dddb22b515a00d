//! The wire formats this crate reads, named the way users type them on a command line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// A provider's wire format, for responses, tool arrays and transcripts alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Format {
    /// Anthropic Messages API (`content` blocks of type `tool_use` / `tool_result`).
    Anthropic,
    /// OpenAI Chat Completions (`choices[].message.tool_calls`, `arguments` as a JSON string).
    OpenaiChat,
    /// OpenAI Responses API (`output` items of type `function_call`).
    OpenaiResponses,
    /// Gemini `generateContent` (`candidates[].content.parts[].functionCall`).
    Gemini,
    /// Amazon Bedrock Converse (`output.message.content[].toolUse`).
    Bedrock,
    /// Ollama `/api/chat` (`message.tool_calls`, `arguments` as an object).
    Ollama,
    /// A plain JSON list of `{name, input}` calls, as in an MCP replay transcript.
    CallList,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 7] = [
        Format::Anthropic,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Gemini,
        Format::Bedrock,
        Format::Ollama,
        Format::CallList,
    ];

    /// The name used on the command line, in case files and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::OpenaiChat => "openai-chat",
            Format::OpenaiResponses => "openai-responses",
            Format::Gemini => "gemini",
            Format::Bedrock => "bedrock",
            Format::Ollama => "ollama",
            Format::CallList => "call-list",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{given}`: expected one of anthropic, openai-chat, openai-responses, gemini, bedrock, ollama, call-list")]
pub struct UnknownFormat {
    /// What was given.
    pub given: String,
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalized = s.trim().to_ascii_lowercase().replace('_', "-");
        let format = match normalized.as_str() {
            "anthropic" | "claude" | "messages" => Format::Anthropic,
            "openai-chat" | "openai" | "chat" | "chat-completions" => Format::OpenaiChat,
            "openai-responses" | "responses" => Format::OpenaiResponses,
            "gemini" | "google" | "vertex" => Format::Gemini,
            "bedrock" | "converse" | "bedrock-converse" => Format::Bedrock,
            "ollama" => Format::Ollama,
            "call-list" | "calls" | "mcp" => Format::CallList,
            _ => {
                return Err(UnknownFormat {
                    given: s.to_owned(),
                })
            }
        };
        Ok(format)
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
