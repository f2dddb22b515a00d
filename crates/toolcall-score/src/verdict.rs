//! What scoring concludes: a [`Verdict`] made of [`Finding`]s.

use std::fmt;

use crate::escape;

/// Why an unknown tool name probably appeared. The order of the variants is the order they are
/// tried in: the first that fits is the cause a finding carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Cause {
    /// The name was called (or answered) earlier in the replayed transcript: a tool that was
    /// removed while the transcript still shows it.
    Retired,
    /// The name is in the parent (planner) agent's catalog but not this agent's.
    Subset,
    /// The name matches a defined tool once an MCP-style prefix (`server__`, `server.`,
    /// `server/`, `mcp__server__`) is added or removed.
    Namespace,
    /// The system prompt or a tool description mentions the name.
    PromptDrift,
    /// The name appears only in text, not in a structured call.
    Prose,
    /// None of the above: model behaviour to absorb rather than a plumbing bug to fix.
    Invented,
}

impl Cause {
    /// The name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Retired => "retired",
            Cause::Subset => "subset",
            Cause::Namespace => "namespace",
            Cause::PromptDrift => "prompt_drift",
            Cause::Prose => "prose",
            Cause::Invented => "invented",
        }
    }
}

impl fmt::Display for Cause {
    /// The name, honouring width and alignment (`{:<12}`), so report columns line up.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum FindingKind {
    /// A call (or, with cause [`Cause::Prose`], a call-like mention in text) names a tool the
    /// request did not define.
    UnknownTool,
    /// A call's arguments string is not valid JSON.
    ArgumentsNotJson,
    /// A call's arguments are valid JSON but not an object.
    ArgumentsNotObject,
    /// A call's arguments fail the tool's input schema.
    SchemaViolation,
    /// Two calls in one response share an id.
    DuplicateCallId,
    /// A call in the transcript has no matching tool result: the next request is rejected.
    UnansweredCall,
    /// The provider reported a malformed call (Gemini `MALFORMED_FUNCTION_CALL`).
    MalformedCall,
    /// The provider reported a call to a tool it was not offered (Gemini `UNEXPECTED_TOOL_CALL`).
    UnexpectedToolCall,
    /// A legacy field (OpenAI `function_call`) disagrees with the structured calls.
    LegacyMismatch,
    /// The case says no tool fits, and the model called one anyway.
    CallWhereNoToolFits,
    /// A call without an id in a format that pairs each result with its call's id. A note, not
    /// a failure: OpenAI-compatible servers (Gemini's, LM Studio, llama.cpp's) send such calls
    /// and many loops make an id up, so failing on it would cry wolf.
    CallWithoutId,
    /// A call's arguments could not be checked against its tool's input schema: the regex engine
    /// gave up on a `pattern` (its backtracking limit). A note, not a failure: nothing is known
    /// against the call, and a false failure would be worse than an unchecked pattern.
    SchemaUnchecked,
}

impl FindingKind {
    /// The name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::UnknownTool => "unknown_tool",
            FindingKind::ArgumentsNotJson => "arguments_not_json",
            FindingKind::ArgumentsNotObject => "arguments_not_object",
            FindingKind::SchemaViolation => "schema_violation",
            FindingKind::DuplicateCallId => "duplicate_call_id",
            FindingKind::UnansweredCall => "unanswered_call",
            FindingKind::MalformedCall => "malformed_call",
            FindingKind::UnexpectedToolCall => "unexpected_tool_call",
            FindingKind::LegacyMismatch => "legacy_mismatch",
            FindingKind::CallWhereNoToolFits => "call_where_no_tool_fits",
            FindingKind::CallWithoutId => "call_without_id",
            FindingKind::SchemaUnchecked => "schema_unchecked",
        }
    }
}

impl fmt::Display for FindingKind {
    /// The name, honouring width and alignment, like [`Cause`]'s.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// One thing wrong with a response (or with the transcript it answers).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Finding {
    /// What is wrong.
    pub kind: FindingKind,
    /// The tool name involved, exactly as the model wrote it.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub name: Option<String>,
    /// Why an unknown name probably appeared (unknown-name findings only).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub cause: Option<Cause>,
    /// The defined names it was most likely meant to be, closest first (unknown-name findings
    /// only; empty when nothing is close).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub suggestions: Option<Vec<String>>,
    /// The call id involved, when there is one.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub call_id: Option<String>,
    /// Where it was found: `response call 2`, `response text 1`, `transcript message 4`.
    pub location: String,
    /// A human-readable explanation.
    pub detail: String,
}

impl Finding {
    /// A finding of `kind` at `location`, to fill in.
    pub fn new(
        kind: FindingKind,
        location: impl Into<String>,
        detail: impl Into<String>,
    ) -> Finding {
        Finding {
            kind,
            name: None,
            cause: None,
            suggestions: None,
            call_id: None,
            location: location.into(),
            detail: detail.into(),
        }
    }

    /// The suggestions, or an empty slice.
    pub fn suggestions(&self) -> &[String] {
        self.suggestions.as_deref().unwrap_or(&[])
    }

    /// The 1-based line of `text` (the response as recorded: a body, a stream, one line of a
    /// `.jsonl`) where this finding's call is written, for an annotation or an editor: the first
    /// line holding its call id as a JSON string, else the first holding its name as one; `None`
    /// when neither is written there (a finding about the transcript, say).
    pub fn line_in(&self, text: &str) -> Option<usize> {
        let quoted = |s: &str| serde_json::to_string(s).ok();
        let needles = [self.call_id.as_deref(), self.name.as_deref()];
        needles
            .into_iter()
            .flatten()
            .filter_map(quoted)
            .find_map(|needle| {
                text.lines()
                    .position(|line| line.contains(&needle))
                    .map(|i| i + 1)
            })
    }

    /// The fingerprint entry of this finding: `name (cause)` for unknown names, `kind: name` or
    /// `kind` otherwise. Names are escaped.
    pub fn fingerprint(&self) -> String {
        match (&self.name, self.cause) {
            (Some(name), Some(cause)) => format!("{} ({cause})", escape(name)),
            (Some(name), None) => format!("{}: {}", self.kind, escape(name)),
            (None, _) => self.kind.to_string(),
        }
    }
}

impl fmt::Display for Finding {
    /// One line: `unknown_tool get_invoices (invented) at response call 1: … did you mean get_invoice?`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(name) = &self.name {
            write!(f, " `{}`", escape(name))?;
        }
        if let Some(cause) = self.cause {
            write!(f, " ({cause})")?;
        }
        write!(f, " at {}", self.location)?;
        if let Some(id) = &self.call_id {
            write!(f, " [id {}]", escape(id))?;
        }
        write!(f, ": {}", self.detail)?;
        match self.suggestions() {
            [] if self.kind == FindingKind::UnknownTool => {
                f.write_str("; no defined tool is close")
            }
            [] => Ok(()),
            names => {
                let names: Vec<String> = names.iter().map(|n| format!("`{}`", escape(n))).collect();
                write!(f, "; did you mean {}?", names.join(" or "))
            }
        }
    }
}

/// The outcome of scoring one response: pass when there are no findings, whatever the notes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    findings: Vec<Finding>,
    notes: Vec<Finding>,
}

impl Verdict {
    /// A verdict made of these findings.
    pub fn new(findings: Vec<Finding>) -> Verdict {
        Verdict {
            findings,
            notes: Vec::new(),
        }
    }

    /// The same verdict with these notes: things worth saying that fail nothing.
    pub fn with_notes(mut self, notes: Vec<Finding>) -> Verdict {
        self.notes = notes;
        self
    }

    /// What was noticed without failing the response (a call without an id, say), in order.
    /// Neither [`Verdict::is_pass`] nor the fingerprint looks at them.
    pub fn notes(&self) -> &[Finding] {
        &self.notes
    }

    /// Whether nothing was found.
    pub fn is_pass(&self) -> bool {
        self.findings.is_empty()
    }

    /// The findings, in the order they were found.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Panics unless the verdict passes, with every finding — its name, cause and did-you-mean —
    /// in the message: `verdict.assert_pass()` in a `#[test]` says what `assert!(verdict.is_pass())`
    /// cannot. Notes are shown too, and fail nothing.
    #[track_caller]
    pub fn assert_pass(&self) {
        if !self.is_pass() {
            panic!("{self}");
        }
    }

    /// The unknown-name findings.
    pub fn unknown(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.kind == FindingKind::UnknownTool)
    }

    /// The sorted, distinct fingerprint entries of the findings: what a baseline pins, so a
    /// *different* failure of a known-failing case is still noticed.
    pub fn fingerprint(&self) -> Vec<String> {
        let mut entries: Vec<String> = self.findings.iter().map(Finding::fingerprint).collect();
        entries.sort();
        entries.dedup();
        entries
    }
}

impl fmt::Display for Verdict {
    /// `pass`, or `fail: N finding(s)` and one finding a line; then any notes, one a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_pass() {
            f.write_str("pass")?;
        } else {
            write!(f, "fail: {} finding(s)", self.findings.len())?;
            for finding in &self.findings {
                write!(f, "\n  {finding}")?;
            }
        }
        for note in &self.notes {
            write!(f, "\n  note (fails nothing): {note}")?;
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Verdict {
    /// `{"verdict": "pass" | "fail", "findings": [...]}`, plus `"notes": [...]` when there are
    /// any: the stable JSON shape of `--json`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Verdict", 3)?;
        s.serialize_field("verdict", if self.is_pass() { "pass" } else { "fail" })?;
        s.serialize_field("findings", &self.findings)?;
        if self.notes.is_empty() {
            s.skip_field("notes")?;
        } else {
            s.serialize_field("notes", &self.notes)?;
        }
        s.end()
    }
}
