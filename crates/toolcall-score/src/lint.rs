//! Drift lint: the prompt or a tool description names a tool the catalog no longer has.
//!
//! A renamed tool is a one-line change in the catalog and a silent regression in the prompt:
//! "use lookup_customer to find an account" keeps teaching the model a name that no longer
//! exists. The lint reads the system prompt and every tool description for names written as
//! calls (see the `mention` module for what counts) and reports those the catalog lacks.
//!
//! A name the prompt explains rather than hands to the model is not drift: an argument, or a
//! value one takes ("the `str_replace` command" of `str_replace_editor`), a constant
//! (`GITHUB_TOKEN`), and the examples of a prompt that says they use notional tools.

use std::fmt;

use crate::mention::{mentions, Evidence, Reader};
use crate::score::NotTools;
use crate::{escape, suggest, Case};

/// Where a drifted name was found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "in", rename_all = "snake_case"))]
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
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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

impl Drift {
    /// The 1-based line of `text` (the case file as written) where this drift is: the first line
    /// holding both the name and the start of the sentence it was found in, else the first
    /// holding the name; `None` when the name is not written there.
    pub fn line_in(&self, text: &str) -> Option<usize> {
        // The sentence as it appears inside a JSON string (quotes and newlines escaped).
        let quoted = serde_json::to_string(&self.context).ok()?;
        let snippet: String = quoted.trim_matches('"').chars().take(30).collect();
        let lines = || text.lines().enumerate();
        lines()
            .find(|(_, l)| l.contains(&self.name) && l.contains(&snippet))
            .or_else(|| lines().find(|(_, l)| l.contains(&self.name)))
            .map(|(i, _)| i + 1)
    }
}

impl fmt::Display for DriftSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriftSource::SystemPrompt => f.write_str("the system prompt"),
            DriftSource::ToolDescription { tool } => {
                write!(f, "the description of `{}`", escape(tool))
            }
        }
    }
}

impl fmt::Display for Drift {
    /// `` `lookup_customer` is not defined, but the system prompt says: "…"; did you mean `find_customer`? ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not defined, but {} says: \"{}\"",
            escape(&self.name),
            self.source,
            escape(&self.context)
        )?;
        if !self.suggestions.is_empty() {
            let names: Vec<String> = self
                .suggestions
                .iter()
                .map(|n| format!("`{}`", escape(n)))
                .collect();
            write!(f, "; did you mean {}?", names.join(" or "))?;
        }
        Ok(())
    }
}

/// Lints a case for prompt drift: every name the system prompt or a tool description tells the
/// model to call that the catalog does not define, once per place it is found.
///
/// ```
/// use toolcall_score::{lint, Case};
///
/// let case = Case::from_json_str(r#"{
///     "system": "Use lookup_customer to find an account.",
///     "tools": [{"name": "find_customer", "description": "Find a customer by email."}]
/// }"#)?;
/// let drifts = lint(&case);
/// assert_eq!(drifts[0].name, "lookup_customer");
/// assert_eq!(drifts[0].suggestions, ["find_customer"]);
/// # Ok::<(), toolcall_score::InputError>(())
/// ```
pub fn lint(case: &Case) -> Vec<Drift> {
    let not_tools = NotTools::in_prompts(case);
    let sources = std::iter::once((DriftSource::SystemPrompt, case.system.as_str())).chain(
        case.catalog.tools().iter().map(|tool| {
            let source = DriftSource::ToolDescription {
                tool: tool.name.clone(),
            };
            (source, tool.description.as_str())
        }),
    );
    let mut drifts = Vec::new();
    for (source, text) in sources {
        let notional = notional_examples(text);
        for mention in mentions(text, Reader::Prompt) {
            if case.catalog.contains(&mention.name) || not_tools.contains(mention.name.as_ref()) {
                continue;
            }
            let example = match &notional {
                None => false,
                Some(examples) => {
                    let shown =
                        matches!(mention.evidence, Evidence::JsonBlock | Evidence::CallSyntax);
                    let at = mention.offset();
                    (shown && at < examples.end) || examples.contains(&at)
                }
            };
            if example {
                continue;
            }
            drifts.push(Drift {
                suggestions: suggest(&mention.name, &case.catalog),
                context: mention.context(text),
                name: mention.name.into_owned(),
                source: source.clone(),
            });
        }
    }
    drifts
}

/// What a prompt says when the calls it shows are examples of the format, not tools to use:
/// smolagents' prompts show calls to `image_transformer` and `document_qa` and then say "Above
/// example were using notional tools that might not exist for you".
const NOTIONAL: &[&str] = &[
    "notional tool",
    "hypothetical tool",
    "fictional tool",
    "fictitious tool",
    "imaginary tool",
    "made-up tool",
    "tools that might not exist",
    "tools that may not exist",
    "tools which might not exist",
    "tools which may not exist",
];

/// Where `text` says that the calls it shows use tools that may not exist, the span between its
/// first and last such disclaimer (empty when it makes one): smolagents' prompts open their
/// examples with "Here are a few examples using notional tools:" and close them with "Above
/// example were using notional tools that might not exist for you". Then a call shown before
/// the last disclaimer (a JSON call block, `name(…)`) is an example, and so is any name between
/// the two disclaimers ("Thought: I will use the tool `wikipedia_search`"); a call shown after
/// the last one, and the names the text tells the model to use in words outside the span, are
/// drift. `None` when the text makes no such disclaimer.
fn notional_examples(text: &str) -> Option<std::ops::Range<usize>> {
    // ASCII lower case keeps every byte offset of `text`.
    let lower = text.to_ascii_lowercase();
    let places: Vec<usize> = NOTIONAL
        .iter()
        .flat_map(|phrase| lower.match_indices(phrase).map(|(at, _)| at))
        .collect();
    let first = *places.iter().min()?;
    let last = *places.iter().max()?;
    Some(first..last)
}
