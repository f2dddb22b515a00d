//! A case: the request side of one model call, as a test pins it.

use crate::{Catalog, Format, Transcript};

/// What the case expects of a response beyond naming defined tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expect {
    /// Any call to a defined tool, or text, is fine.
    #[default]
    Any,
    /// No tool fits the request (the obvious tool is deliberately absent): any call is a finding
    /// of its own ([`crate::FindingKind::CallWhereNoToolFits`]), BFCL's irrelevance measure.
    NoCall,
}

/// What was sent: system prompt, tool catalog, transcript, and the parent agent's catalog when
/// this agent is a sub-agent.
///
/// A case file is a JSON object. The request part may be written in any supported provider's own
/// request shape (`messages` / `contents` / `input`, `system` / `systemInstruction` /
/// `instructions`, `tools` / `toolConfig.tools`); beside it sit the case's own keys:
///
/// | key | meaning |
/// |---|---|
/// | `about` | what the case is about, for humans |
/// | `format` | the provider format of the request and of recorded responses, when they should not be detected; Ollama's own `format` (`"json"` or a JSON Schema object, asking for structured output) is left to the request |
/// | `parent_tools` | the planner's tools, when this agent is a sub-agent (any tools format) |
/// | `expect` | `"any"` (default) or `"no_call"`: no tool fits, and any call is a finding |
/// | `$schema` | the JSON Schema the file names for editors (`toolcall schema case` prints it); not read |
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// What the case is about.
    pub about: Option<String>,
    /// The provider format named by the case's `format` key, if any: it applies to the request
    /// and to every response scored against the case.
    pub format: Option<Format>,
    /// The format the request was written in, when its shape tells. Informational: responses
    /// come back in their agent's format, which need not be the request's.
    pub request_format: Option<Format>,
    /// The system prompt, empty when there is none.
    pub system: String,
    /// The tools the request defined.
    pub catalog: Catalog,
    /// The transcript sent with the request.
    pub transcript: Transcript,
    /// The parent (planner) agent's tools, when this agent is a sub-agent.
    pub parent: Option<Catalog>,
    /// What the case expects.
    pub expect: Expect,
}

impl Case {
    /// The keys of the case format itself, beside the provider's request keys. No provider
    /// accepts them, so whoever sends a case's body to a provider removes them; and a key one
    /// edit away from one of them (but [`Case::SCHEMA_KEY`]) is a typo, reported rather than
    /// ignored.
    pub const KEYS: [&'static str; 5] = ["about", "format", "parent_tools", "expect", "$schema"];

    /// `"$schema"`: the JSON Schema a case file may name for editors. Nothing reads its value,
    /// so a misspelling of it changes nothing and is left alone (a provider's own key one edit
    /// away, such as a top-level `schema`, is not taken for a typo).
    pub const SCHEMA_KEY: &'static str = "$schema";

    /// A case with just a catalog: the bare membership check.
    pub fn from_catalog(catalog: Catalog) -> Case {
        Case {
            catalog,
            ..Case::default()
        }
    }
}
