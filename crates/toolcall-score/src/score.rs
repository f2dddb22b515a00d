//! Scoring: a case and a response in, a verdict out.
//!
//! The order of checks is the order of the findings: provider-reported anomalies, then each call
//! in turn (membership first; arguments only for defined tools, so an unknown call gives one
//! finding, not three), then names written only in text, then the transcript.
//!
//! What depends only on the case (the transcript's unanswered calls, the parameter names, the
//! defined names split into words for suggestions) is worked out once by [`Scorer::new`], so
//! scoring one more response against the same case costs only what that response brings.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::mention::{is_constant_case, mentions, mentions_word, Evidence, Reader};
use crate::model::ArgumentsSyntax;
use crate::suggest::{suggestion_indexes, Prepared};
use crate::{AnomalyKind, Case, Cause, Expect, Finding, FindingKind, Response, ToolCall, Verdict};

/// Scores `response` against `case`: pass, or the findings, each naming the offending tool with
/// its probable [`Cause`] and the defined names it was likely meant to be.
///
/// This is `Scorer::new(case).score(response)`: right for one response. To score many responses
/// against one case, build a [`Scorer`] once and reuse it.
pub fn score(case: &Case, response: &Response) -> Verdict {
    Scorer::new(case).score(response)
}

/// A case prepared for scoring many responses: [`score`] with the work that depends only on the
/// case done once.
///
/// Use it when one case answers many responses (a recording's samples, a log of one request
/// shape, a benchmark); for a single response [`score`] does the same in one call. Both give the
/// same [`Verdict`]. Checking the transcript is the part of scoring that grows with the case
/// rather than the response, so a long transcript is where a `Scorer` pays off most.
///
/// ```
/// use toolcall_score::{Case, Response, Scorer};
///
/// let case = Case::from_json_str(r#"{
///     "tools": [{"name": "get_invoice", "description": "One invoice by id.",
///                "input_schema": {"type": "object"}}],
///     "messages": [{"role": "user", "content": "Show me my invoices"}]
/// }"#)?;
/// let scorer = Scorer::new(&case);
/// for name in ["get_invoice", "get_invoices"] {
///     let response = Response::from_json_str(&format!(r#"{{
///         "type": "message", "role": "assistant", "stop_reason": "tool_use",
///         "content": [{{"type": "tool_use", "id": "toolu_1", "name": "{name}", "input": {{}}}}]
///     }}"#), None)?;
///     let verdict = scorer.score(&response);
///     assert_eq!(verdict.is_pass(), name == "get_invoice");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Scorer<'c> {
    case: &'c Case,
    /// The transcript's findings: the same for every response.
    transcript: Vec<Finding>,
    /// The case's words that are not tools (parameter names, constants); built at the first
    /// name found in text.
    not_tools: OnceLock<NotTools<'c>>,
    /// The defined names prepared for suggestions; built at the first unknown name.
    defined: OnceLock<Prepared<'c>>,
    /// What an unknown name was found to be, by name, for every response this scorer scores: a
    /// model repeats its invented names. Bounded: at most [`CACHED_NAMES`] names of at most
    /// [`CACHED_NAME_BYTES`] bytes.
    seen: Mutex<HashMap<Box<str>, Seen>>,
}

/// An unknown name's suggestions (catalog indexes) and, once it was called, its cause: both
/// depend only on the name and the case.
#[derive(Debug, Clone)]
struct Seen {
    suggestions: Vec<u32>,
    cause: Option<Cause>,
}

/// How many unknown names a [`Scorer`] keeps the suggestions of; later ones are worked out
/// each time they come.
const CACHED_NAMES: usize = 4096;

/// The longest unknown name whose suggestions are kept: any real name fits, and the cache's
/// keys stay under a megabyte.
const CACHED_NAME_BYTES: usize = 256;

impl<'c> Scorer<'c> {
    /// Prepares `case` for scoring.
    pub fn new(case: &'c Case) -> Scorer<'c> {
        Scorer {
            case,
            transcript: check_transcript(case),
            not_tools: OnceLock::new(),
            defined: OnceLock::new(),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The case responses are scored against.
    pub fn case(&self) -> &'c Case {
        self.case
    }

    /// Scores `response` against the case: the same verdict as [`score`].
    pub fn score(&self, response: &Response) -> Verdict {
        let mut findings = Vec::new();
        for anomaly in &response.anomalies {
            let kind = match anomaly.kind {
                AnomalyKind::MalformedCall => FindingKind::MalformedCall,
                AnomalyKind::UnexpectedToolCall => FindingKind::UnexpectedToolCall,
                AnomalyKind::LegacyMismatch => FindingKind::LegacyMismatch,
            };
            findings.push(Finding::new(kind, "response", anomaly.detail.clone()));
        }
        let mut notes = Vec::new();
        self.score_calls(response, &mut findings, &mut notes);
        self.score_text(response, &mut findings);
        findings.extend_from_slice(&self.transcript);
        notes.extend(unpaired_calls(response));
        Verdict::new(findings).with_notes(notes)
    }

    fn score_calls(
        &self,
        response: &Response,
        findings: &mut Vec<Finding>,
        notes: &mut Vec<Finding>,
    ) {
        // Most responses carry a handful of calls: a linear look-back beats hashing every id.
        let mut seen_ids: Option<HashSet<&str>> =
            (response.calls.len() > 16).then(|| HashSet::with_capacity(response.calls.len()));
        for (i, call) in response.calls.iter().enumerate() {
            // Built only when there is a finding to carry it.
            let location = || format!("response call {}", i + 1);
            if let Some(id) = call.id.as_deref() {
                let repeated = match &mut seen_ids {
                    Some(seen) => !seen.insert(id),
                    None => response.calls[..i]
                        .iter()
                        .any(|earlier| earlier.id.as_deref() == Some(id)),
                };
                if repeated {
                    let mut finding = Finding::new(
                        FindingKind::DuplicateCallId,
                        location(),
                        "another call in this response has the same id; results cannot be paired",
                    );
                    finding.name = Some(call.name.clone());
                    finding.call_id = Some(id.to_owned());
                    findings.push(finding);
                }
            }
            if self.case.expect == Expect::NoCall {
                let mut finding = Finding::new(
                    FindingKind::CallWhereNoToolFits,
                    location(),
                    "the case says no tool fits this request, but the model called one",
                );
                finding.name = Some(call.name.clone());
                finding.call_id = call.id.clone();
                findings.push(finding);
            }
            match self.resolve(call) {
                Some(defined) => self.check_arguments(call, defined, &location, findings, notes),
                None => findings.push(self.unknown(&call.name, call.id.clone(), location(), false)),
            }
        }
    }

    /// The index of the defined tool a call refers to: its own name, or with its Responses API
    /// `namespace`.
    fn resolve(&self, call: &ToolCall) -> Option<usize> {
        if let Some(index) = self.index_of(&call.name) {
            return Some(index);
        }
        let namespace = call.namespace.as_deref()?;
        ["__", ".", "/"]
            .iter()
            .find_map(|sep| self.index_of(&format!("{namespace}{sep}{}", call.name)))
    }

    /// The catalog index of the tool of this exact name.
    fn index_of(&self, name: &str) -> Option<usize> {
        self.case.catalog.index_of(name)
    }

    /// The defined names, prepared for suggestions on first use.
    fn defined(&self) -> &Prepared<'c> {
        self.defined
            .get_or_init(|| crate::suggest::prepare(&self.case.catalog))
    }

    /// An unknown-name finding with its cause and suggestions.
    fn unknown(
        &self,
        name: &str,
        call_id: Option<String>,
        location: String,
        in_text: bool,
    ) -> Finding {
        let seen = self.seen(name, !in_text);
        let cause = if in_text {
            Cause::Prose
        } else {
            seen.cause.unwrap_or_else(|| self.cause(name))
        };
        let detail = match cause {
            Cause::Retired => "not defined; the transcript shows it called earlier, so it was probably retired while the transcript still shows it",
            Cause::Subset => "not defined for this agent; it is in the parent agent's catalog, so this sub-agent was handed a subset",
            Cause::Namespace => "not defined; it is a defined tool with a namespace prefix added or removed",
            Cause::PromptDrift => "not defined; the system prompt or a tool description still tells the model to use it",
            Cause::Prose => "not defined; the response names it as a call in its text instead of making a structured call",
            Cause::Invented => "not defined, and nothing in the request mentions it",
        };
        let mut finding = Finding::new(FindingKind::UnknownTool, location, detail);
        finding.name = Some(name.to_owned());
        finding.cause = Some(cause);
        finding.suggestions = Some(self.defined().names(&seen.suggestions));
        finding.call_id = call_id;
        finding
    }

    /// An unknown name's suggestions, and its cause when `called`, from the cache when the name
    /// was seen before. A poisoned lock only means no cache: both are worked out again.
    fn seen(&self, name: &str, called: bool) -> Seen {
        let cacheable = name.len() <= CACHED_NAME_BYTES;
        let cached = cacheable
            .then(|| self.seen.lock().ok()?.get(name).cloned())
            .flatten();
        if let Some(seen) = cached.as_ref().filter(|s| !called || s.cause.is_some()) {
            return seen.clone();
        }
        let seen = Seen {
            suggestions: match cached {
                Some(seen) => seen.suggestions,
                None => suggestion_indexes(name, self.defined()),
            },
            cause: called.then(|| self.cause(name)),
        };
        if let Some(mut cache) = self.seen.lock().ok().filter(|_| cacheable) {
            let room = cache.len() < CACHED_NAMES;
            match cache.get_mut(name) {
                Some(entry) => entry.cause = entry.cause.or(seen.cause),
                None if room => {
                    cache.insert(name.into(), seen.clone());
                }
                None => {}
            }
        }
        seen
    }

    /// Why an unknown name in a structured call probably appeared; the first [`Cause`] that fits.
    fn cause(&self, name: &str) -> Cause {
        let case = self.case;
        let transcript = &case.transcript;
        if transcript.calls().any(|c| c.name == name)
            || transcript
                .results()
                .any(|r| r.name.as_deref() == Some(name))
        {
            return Cause::Retired;
        }
        if case.parent.as_ref().is_some_and(|p| p.contains(name)) {
            return Cause::Subset;
        }
        if self.defined().relates(name) {
            return Cause::Namespace;
        }
        if mentions_word(&case.system, name)
            || case
                .catalog
                .tools()
                .iter()
                .any(|t| mentions_word(&t.description, name))
        {
            return Cause::PromptDrift;
        }
        Cause::Invented
    }

    fn check_arguments(
        &self,
        call: &ToolCall,
        defined: usize,
        location: &dyn Fn() -> String,
        findings: &mut Vec<Finding>,
        notes: &mut Vec<Finding>,
    ) {
        let mut finding = |kind, detail: String| {
            let mut f = Finding::new(kind, location(), detail);
            f.name = Some(call.name.clone());
            f.call_id = call.id.clone();
            findings.push(f);
        };
        // A value is built from arguments sent as text only when a schema will look at it.
        #[cfg(feature = "schema")]
        let want_value = self.case.catalog.has_schema(defined);
        #[cfg(not(feature = "schema"))]
        let want_value = false;
        match call.arguments.syntax(want_value) {
            Some(ArgumentsSyntax::NotJson { raw, error }) => finding(
                FindingKind::ArgumentsNotJson,
                format!(
                    "the arguments string is not valid JSON ({error}): {}",
                    crate::errors::describe(&Value::String(raw.to_owned()))
                ),
            ),
            Some(ArgumentsSyntax::NotObject(value)) => finding(
                FindingKind::ArgumentsNotObject,
                format!(
                    "arguments must be a JSON object, found {}",
                    crate::errors::describe(value)
                ),
            ),
            // A custom tool's free-text input: nothing about it is JSON to check.
            None => {}
            // An object no schema looks at.
            Some(ArgumentsSyntax::Object(None)) => {}
            Some(ArgumentsSyntax::Object(Some(value))) => {
                // Only a violation is the model's fault: a schema that does not compile (a case
                // loaded from a file says so when it is read) judges nothing about the call, and
                // a `pattern` the regex engine gives up on is a note that it went unchecked.
                #[cfg(feature = "schema")]
                match self.case.catalog.validate_at(defined, value) {
                    Err(violation @ crate::SchemaError::Violations(_)) => {
                        finding(FindingKind::SchemaViolation, violation.to_string());
                    }
                    Err(crate::SchemaError::Undecided(why)) => {
                        let mut note = Finding::new(
                            FindingKind::SchemaUnchecked,
                            location(),
                            format!(
                                "the arguments went unchecked against the input schema: the \
                                 regex engine gave up on a `pattern` ({why}); not a failure"
                            ),
                        );
                        note.name = Some(call.name.clone());
                        note.call_id = call.id.clone();
                        notes.push(note);
                    }
                    _ => {}
                }
                #[cfg(not(feature = "schema"))]
                let _ = (defined, value, &notes);
            }
        }
    }

    /// Names written as calls in the response's text that are not defined and were not also
    /// called for real (those already have their finding).
    fn score_text(&self, response: &Response, findings: &mut Vec<Finding>) {
        // Names are few per response: linear scans, and nothing allocated until a finding.
        let mut reported: Vec<String> = Vec::new();
        for (i, text) in response.text.iter().enumerate() {
            for mention in mentions(text, Reader::Response) {
                let name = mention.name.as_ref();
                if self.index_of(name).is_some()
                    || response.calls.iter().any(|c| c.name == name)
                    || self
                        .not_tools
                        .get_or_init(|| NotTools::in_responses(self.case))
                        .contains(name)
                    || reported.iter().any(|r| r == name)
                    || (mention.evidence == Evidence::CallSyntax && self.is_method_call(name))
                {
                    continue;
                }
                let location = format!("response text {}", i + 1);
                let mut finding = self.unknown(name, None, location, true);
                finding.detail = format!(
                    "{}: \"{}\"",
                    finding.detail,
                    crate::escape(&mention.context(text))
                );
                reported.push(name.to_owned());
                findings.push(finding);
            }
        }
    }
}

/// Namespaces models put before the tools they call, whatever the catalog: OpenAI's
/// `functions.get_weather`, Gemini's `default_api.get_weather` in its `tool_code`.
const TOOL_NAMESPACES: &[&str] = &["functions", "default_api", "tools", "multi_tool_use", "mcp"];

impl Scorer<'_> {
    /// Whether `receiver.method(…)` written in a response's text is a method called on an
    /// object in code (`FastAPIInstrumentor.instrument_app(app, …)`) rather than a namespaced
    /// tool: its receiver is no namespace models give tools, no defined name holds it, and no
    /// defined name is the same tool behind another namespace.
    fn is_method_call(&self, name: &str) -> bool {
        let Some((receiver, _)) = name.rsplit_once('.') else {
            return false;
        };
        let root = receiver.split('.').next().unwrap_or(receiver);
        !TOOL_NAMESPACES.contains(&root)
            && !self
                .case
                .catalog
                .names()
                .any(|defined| defined.contains(receiver))
            && !self.defined().relates(name)
    }
}

/// Orders names by length, then bytes: most names differ in length, which is one comparison.
/// Notes for the calls whose results cannot be paired: no id, in a format that pairs by id.
fn unpaired_calls(response: &Response) -> Vec<Finding> {
    if !response.format.wire().pairs_by_id {
        return Vec::new();
    }
    let mut notes = Vec::new();
    for (i, call) in response.calls.iter().enumerate() {
        if call.id.as_deref().is_none_or(str::is_empty) {
            let mut note = Finding::new(
                FindingKind::CallWithoutId,
                format!("response call {}", i + 1),
                format!(
                    "no id, and {} pairs each result with its call's id: a loop that answers it \
                     must make one up (the tool loop here refuses it)",
                    response.format
                ),
            );
            note.name = Some(call.name.clone());
            notes.push(note);
        }
    }
    notes
}

/// The words of a case that read as tool names in text but name something else: argument names
/// (`account_id`), and constants (`GITHUB_TOKEN`) unless the catalog writes its tools that way.
/// What a response says is read against the top-level argument names only; a prompt or a tool
/// description explains its tools' arguments at every depth and their values too ("use the
/// `str_replace` command" is a value of `str_replace_editor`'s `command`), which
/// [`NotTools::in_prompts`] adds.
#[derive(Debug)]
pub(crate) struct NotTools<'c> {
    /// Sorted and distinct.
    words: Vec<&'c str>,
    /// Whether some defined name is in constant case.
    constant_case_tools: bool,
}

impl<'c> NotTools<'c> {
    /// For names in a response's text: top-level argument names, and constants.
    pub(crate) fn in_responses(case: &'c Case) -> NotTools<'c> {
        let words = case
            .catalog
            .tools()
            .iter()
            .filter_map(|t| t.input_schema.as_ref()?.get("properties")?.as_object())
            .flat_map(|properties| properties.keys().map(String::as_str))
            .collect();
        NotTools::new(case, words)
    }

    /// For names in a system prompt or a tool description: argument names at any depth, the
    /// string values an argument's `enum` or `const` allows, and constants.
    pub(crate) fn in_prompts(case: &'c Case) -> NotTools<'c> {
        let mut words = Vec::new();
        for schema in case
            .catalog
            .tools()
            .iter()
            .filter_map(|t| t.input_schema.as_ref())
        {
            schema_words(schema, &mut words);
        }
        NotTools::new(case, words)
    }

    fn new(case: &Case, mut words: Vec<&'c str>) -> NotTools<'c> {
        words.sort_unstable();
        words.dedup();
        NotTools {
            words,
            constant_case_tools: case.catalog.names().any(is_constant_case),
        }
    }

    /// Whether `name`, found in text, is one of these words rather than a tool.
    pub(crate) fn contains(&self, name: &str) -> bool {
        (is_constant_case(name) && !self.constant_case_tools)
            || self.words.binary_search(&name).is_ok()
    }
}

/// Every property name and every string an `enum` or `const` allows, anywhere in `schema`.
fn schema_words<'v>(schema: &'v Value, words: &mut Vec<&'v str>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                match (key.as_str(), value) {
                    ("properties", Value::Object(properties)) => {
                        words.extend(properties.keys().map(String::as_str));
                    }
                    ("enum", Value::Array(values)) => {
                        words.extend(values.iter().filter_map(Value::as_str));
                    }
                    ("const", Value::String(value)) => words.push(value),
                    _ => {}
                }
                schema_words(value, words);
            }
        }
        Value::Array(items) => {
            for item in items {
                schema_words(item, words);
            }
        }
        _ => {}
    }
}

/// Every call in the transcript must have a result, or the provider rejects the next request.
/// Calls are paired with results by id; calls without ids (Gemini, Ollama) by name, in order.
fn check_transcript(case: &Case) -> Vec<Finding> {
    let mut findings = Vec::new();
    let transcript = &case.transcript;
    if transcript.calls().next().is_none() {
        return findings;
    }
    // Most transcripts answer a handful of calls: a sorted list beats hashing every id.
    let mut answered_ids: Vec<&str> = transcript
        .results()
        .filter_map(|r| r.call_id.as_deref())
        .collect();
    answered_ids.sort_unstable();
    let mut answers_by_name: HashMap<&str, usize> = HashMap::new();
    let mut anonymous_answers = 0usize;
    for result in transcript.results().filter(|r| r.call_id.is_none()) {
        match result.name.as_deref() {
            Some(name) => *answers_by_name.entry(name).or_default() += 1,
            None => anonymous_answers += 1,
        }
    }
    for (m, message) in transcript.messages.iter().enumerate() {
        for call in &message.calls {
            let answered = match call.id.as_deref() {
                Some(id) => answered_ids.binary_search(&id).is_ok(),
                None => match answers_by_name.get_mut(call.name.as_str()) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ if anonymous_answers > 0 => {
                        anonymous_answers -= 1;
                        true
                    }
                    _ => false,
                },
            };
            if !answered {
                let mut finding = Finding::new(
                    FindingKind::UnansweredCall,
                    format!("transcript message {}", m + 1),
                    "this call has no tool result in the transcript; providers reject the next request (HTTP 400)",
                );
                finding.name = Some(call.name.clone());
                finding.call_id = call.id.clone();
                findings.push(finding);
            }
        }
    }
    findings
}
