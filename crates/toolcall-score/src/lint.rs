//! Drift lint: the prompt or a tool description names a tool the catalog no longer has.

use serde::Serialize;

use crate::Case;

/// Where a drifted name was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "in", rename_all = "snake_case")]
pub enum DriftSource {
    /// The system prompt.
    SystemPrompt,
    /// A tool's description.
    ToolDescription {
        /// The tool whose description names it.
        tool: String,
    },
}

/// A tool-like name that the prompt or a description tells the model to use, but the catalog
/// does not define.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The name as written.
    pub name: String,
    /// Where it was found.
    pub source: DriftSource,
    /// The sentence or line it was found in.
    pub context: String,
    /// Defined names it was likely meant to be.
    pub suggestions: Vec<String>,
}

/// Lints a case for prompt drift.
pub fn lint(case: &Case) -> Vec<Drift> {
    let _ = case;
    Vec::new()
}
