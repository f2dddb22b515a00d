//! The loop guard's state machine: [`ToolLoop`], the policy it keeps, the replies it is handed
//! and the steps and outcomes it answers with (the module docs of `tool_loop` say why).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::metrics::LoopMetrics;
use super::results::{PendingResults, Slot, ToolOutput, ToolResults};
use crate::{escape, suggest, AnomalyKind, Catalog, Format, Response, ToolCall};

/// How far the loop lets a turn go. Build it with struct update syntax over [`Default`]:
///
/// ```
/// use toolcall_score::tool_loop::LoopPolicy;
/// let policy = LoopPolicy { max_steps: 4, ..LoopPolicy::default() };
/// assert_eq!(policy.max_unknown_per_turn, 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPolicy {
    /// Model responses per turn (default 10). A response with calls that would need response
    /// number `max_steps + 1` ends the turn with [`Outcome::StepBudgetExhausted`] instead of
    /// asking the caller to run tools whose results would never be read.
    pub max_steps: usize,
    /// Unknown-tool calls per turn (default 2). The response that brings the turn's count to this
    /// number ends the turn with [`Outcome::UnknownToolEscalation`] instead of another round of
    /// errors; with the default, the second unknown call escalates. `0` and `1` both escalate on
    /// the first; `usize::MAX` never escalates (the step budget still applies).
    pub max_unknown_per_turn: usize,
    /// Whether the error text for an unknown tool lists the available tool names and a
    /// did-you-mean from [`crate::suggest`] (default on). Off, it only says the tool does not
    /// exist.
    pub list_available_in_errors: bool,
}

impl Default for LoopPolicy {
    fn default() -> Self {
        LoopPolicy {
            max_steps: 10,
            max_unknown_per_turn: 2,
            list_available_in_errors: true,
        }
    }
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "outcome", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Outcome {
    /// The model answered without calling a tool.
    Finished,
    /// The turn reached [`LoopPolicy::max_unknown_per_turn`] unknown-tool calls; feeding more
    /// errors back would likely burn the step budget on the same names.
    UnknownToolEscalation {
        /// The distinct unknown names called in the turn, in the order they first appeared.
        names: Vec<String>,
    },
    /// The model still wanted tools after [`LoopPolicy::max_steps`] responses.
    StepBudgetExhausted {
        /// The responses handled in the turn.
        steps: usize,
    },
    /// The response could not be acted on: it did not parse, the provider reported a malformed
    /// call, or a call lacks the id its format needs to be answered.
    MalformedResponse {
        /// What was wrong, in words.
        reason: String,
    },
}

impl Outcome {
    /// Whether the model finished the turn normally.
    pub fn is_finished(&self) -> bool {
        matches!(self, Outcome::Finished)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Finished => f.write_str("finished"),
            Outcome::UnknownToolEscalation { names } => {
                f.write_str("escalated after calls to unknown tools: ")?;
                for (i, name) in names.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}", escape(name))?;
                }
                Ok(())
            }
            Outcome::StepBudgetExhausted { steps } => {
                write!(f, "step budget exhausted after {steps} response(s)")
            }
            Outcome::MalformedResponse { reason } => write!(f, "malformed response: {reason}"),
        }
    }
}

/// The end of a turn: the outcome, the last response, and the answers that keep the history valid.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnEnd {
    /// Why the turn ended.
    pub outcome: Outcome,
    /// The response that ended it (its text is the model's answer when the outcome is
    /// [`Outcome::Finished`]); `None` when the reply did not parse.
    pub response: Option<Response>,
    /// When the turn ended on a response whose calls will not be run (escalation, step budget),
    /// an error answer for each of them. Do not send them as a request of their own; append them
    /// to the history so that the next request (the next user message) is not rejected for
    /// unanswered calls. `None` when there was nothing to answer, or the response was malformed
    /// (drop it from the history instead).
    pub closing: Option<ToolResults>,
}

impl TurnEnd {
    /// The model's text in the last response, parts joined by newlines (empty when none).
    pub fn text(&self) -> String {
        self.response
            .as_ref()
            .map(|r| r.text.join("\n"))
            .unwrap_or_default()
    }
}

/// What to do after a response.
#[derive(Debug)]
#[must_use = "a `Step::Continue` carries calls that must be answered"]
pub enum Step {
    /// Run the calls of [`PendingResults::execute`], complete the answers and send them.
    Continue(PendingResults),
    /// The turn is over.
    Done(TurnEnd),
}

/// A model's reply, as [`ToolLoop::step`] takes it: the provider's JSON, or a parsed [`Response`].
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A provider's response body; parsed with [`Response::from_value`].
    Json {
        /// The body.
        body: Value,
        /// Its format, or `None` to tell it from the shape.
        format: Option<Format>,
    },
    /// An already parsed response.
    Parsed(Response),
}

impl Reply {
    /// A response body in a named format.
    pub fn json(body: Value, format: Format) -> Reply {
        Reply::Json {
            body,
            format: Some(format),
        }
    }
}

impl From<Value> for Reply {
    /// A response body whose format is told from its shape.
    fn from(body: Value) -> Reply {
        Reply::Json { body, format: None }
    }
}

impl From<Response> for Reply {
    fn from(response: Response) -> Reply {
        Reply::Parsed(response)
    }
}

/// Most tool names an unknown-tool error lists; a huge catalog is cut with "and N more".
const MAX_LISTED: usize = 50;

/// The loop guard: handed each model response of a turn, it answers with the tool results to send
/// or with the end of the turn. See the [module docs](crate::tool_loop) for the why.
///
/// ```
/// use serde_json::json;
/// use toolcall_score::{Catalog, Format, Response, Tool, ToolCall};
/// use toolcall_score::tool_loop::{LoopPolicy, Outcome, Step, ToolLoop};
///
/// let catalog = Catalog::new([Tool::new("get_invoice", "One invoice by id.")]);
/// let mut guard = ToolLoop::new(catalog, LoopPolicy::default());
///
/// // The model calls a defined tool and one it was never given, in parallel.
/// let mut response = Response::empty(Format::Anthropic);
/// response.calls = vec![
///     ToolCall::new(Some("toolu_1"), "get_invoice", json!({"id": "inv_7"})),
///     ToolCall::new(Some("toolu_2"), "get_invoices", json!({})),
/// ];
/// let Step::Continue(pending) = guard.step(response) else { panic!("the turn goes on") };
///
/// // Only the defined tool is yours to run; the loop answers the other one itself.
/// let results = pending.answer_with(|call| {
///     assert_eq!(call.name, "get_invoice");
///     Ok(json!({"id": "inv_7", "paid": true}))
/// });
/// let blocks = &results.messages()[0]["content"];
/// assert_eq!(blocks[0]["tool_use_id"], "toolu_1");
/// assert_eq!(blocks[1]["tool_use_id"], "toolu_2");
/// assert_eq!(blocks[1]["is_error"], true);
/// assert!(blocks[1]["content"].as_str().unwrap().contains("Did you mean `get_invoice`?"));
///
/// // After sending `results.messages()`, the model answers in text: the turn is over.
/// let mut response = Response::empty(Format::Anthropic);
/// response.text.push("Invoice inv_7 is paid.".into());
/// let Step::Done(end) = guard.step(response) else { panic!("the model answered") };
/// assert_eq!(end.outcome, Outcome::Finished);
/// assert_eq!(guard.metrics().turn().unknown_calls(), 1);
/// assert_eq!(guard.metrics().turn().steps(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct ToolLoop {
    catalog: Catalog,
    policy: LoopPolicy,
    /// The " Available tools: …" sentence, built once.
    available: String,
    metrics: LoopMetrics,
    in_turn: bool,
}

impl ToolLoop {
    /// A loop over the tools of `catalog`.
    pub fn new(catalog: Catalog, policy: LoopPolicy) -> ToolLoop {
        let available = available_sentence(&catalog);
        ToolLoop {
            catalog,
            policy,
            available,
            metrics: LoopMetrics::default(),
            in_turn: false,
        }
    }

    /// The tools calls are checked against.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The policy.
    pub fn policy(&self) -> &LoopPolicy {
        &self.policy
    }

    /// What the loop has counted.
    pub fn metrics(&self) -> &LoopMetrics {
        &self.metrics
    }

    /// Forgets the turn in progress (e.g. after a transport error): the next response starts a
    /// new turn. The totals keep what the abandoned turn counted. A turn also ends by itself with
    /// every [`Step::Done`].
    pub fn reset_turn(&mut self) {
        self.in_turn = false;
    }

    /// Handles the next model response of the turn. The first response after a [`Step::Done`]
    /// (or after [`ToolLoop::reset_turn`]) starts a new turn.
    ///
    /// Work is linear in the number of calls: ids and names are looked up in hash sets, and the
    /// error text for an unknown name is built once per distinct name.
    pub fn step(&mut self, reply: impl Into<Reply>) -> Step {
        if !self.in_turn {
            self.metrics.begin_turn();
            self.in_turn = true;
        }
        let mut response = match reply.into() {
            Reply::Parsed(response) => response,
            Reply::Json { body, format } => match Response::from_value(&body, format) {
                Ok(response) => response,
                Err(error) => {
                    self.metrics.step(0);
                    let reason = format!("the reply did not parse: {error}");
                    return self.end(Outcome::MalformedResponse { reason }, None, None);
                }
            },
        };
        self.metrics.step(response.calls.len());

        if let Some(reason) = malformed(&response) {
            return self.end(Outcome::MalformedResponse { reason }, Some(response), None);
        }
        if response.calls.is_empty() {
            return self.end(Outcome::Finished, Some(response), None);
        }

        let (slots, unknown_here) = self.classify(&mut response.calls);
        if unknown_here > 0
            && self.metrics.turn().unknown_calls() >= self.policy.max_unknown_per_turn
        {
            let names = self.metrics.turn().names();
            return self.close(Outcome::UnknownToolEscalation { names }, response, slots);
        }
        let steps = self.metrics.turn().steps();
        if steps >= self.policy.max_steps {
            return self.close(Outcome::StepBudgetExhausted { steps }, response, slots);
        }
        Step::Continue(PendingResults::new(response.format, response.calls, slots))
    }

    /// Decides how each call is answered, counting unknown names, bad arguments and repeated ids.
    /// Returns the slots and how many calls of this response named unknown tools.
    ///
    /// A Responses API call whose `name` is defined only with its `namespace` prefixed (as the
    /// scorer resolves it) is renamed to the defined name, so handlers are found by catalog name.
    fn classify(&mut self, calls: &mut [ToolCall]) -> (Vec<Slot>, usize) {
        for call in calls.iter_mut() {
            if let Some(defined) = resolve_namespaced(&self.catalog, call) {
                call.name = defined;
            }
        }
        let mut texts: HashMap<&str, String> = HashMap::new();
        let mut ids = HashSet::with_capacity(calls.len());
        let mut unknown = 0;
        let mut slots = Vec::with_capacity(calls.len());
        for call in calls.iter() {
            if let Some(id) = call.id.as_deref() {
                if !ids.insert(id) {
                    self.metrics.duplicate_id();
                }
            }
            let slot = if !self.catalog.contains(&call.name) {
                unknown += 1;
                self.metrics.unknown(&call.name);
                let text = match texts.get(call.name.as_str()) {
                    Some(text) => text.clone(),
                    None => {
                        let text = self.unknown_text(&call.name);
                        texts.insert(&call.name, text.clone());
                        text
                    }
                };
                Slot::Error(text)
            } else if let Some((_, error)) = call.arguments.invalid() {
                self.metrics.invalid_arguments();
                Slot::Error(format!(
                    "Error: the arguments for `{}` are not valid JSON ({error}); call it again with a JSON object.",
                    escape(&call.name)
                ))
            } else {
                Slot::Execute
            };
            slots.push(slot);
        }
        (slots, unknown)
    }

    /// The error text the model reads for a call to `name`, which is not defined.
    fn unknown_text(&self, name: &str) -> String {
        let mut text = format!("Error: no tool named `{}` exists.", escape(name));
        if self.policy.list_available_in_errors {
            let suggestions = suggest(name, &self.catalog);
            if let Some((first, rest)) = suggestions.split_first() {
                text.push_str(&format!(" Did you mean `{first}`"));
                for other in rest.iter().take(2) {
                    text.push_str(&format!(" or `{other}`"));
                }
                text.push('?');
            }
            text.push_str(&self.available);
        }
        text
    }

    /// Ends the turn on a response whose calls will not be run: every call gets an error answer
    /// for the history ([`TurnEnd::closing`]).
    fn close(&mut self, outcome: Outcome, response: Response, slots: Vec<Slot>) -> Step {
        let not_run =
            format!("Error: not run: the turn ended before this call was executed ({outcome}).");
        let outputs: Vec<ToolOutput> = slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Execute => Err(not_run.clone()),
                Slot::Error(text) => Err(text),
            })
            .collect();
        let closing = ToolResults::new(response.format, &response.calls, &outputs);
        self.end(outcome, Some(response), Some(closing))
    }

    fn end(
        &mut self,
        outcome: Outcome,
        response: Option<Response>,
        closing: Option<ToolResults>,
    ) -> Step {
        self.in_turn = false;
        Step::Done(TurnEnd {
            outcome,
            response,
            closing,
        })
    }
}

/// The defined name of a call that names a tool only together with its Responses API
/// `namespace` (`billing` + `get_balance` → `billing__get_balance`, `billing.get_balance` or
/// `billing/get_balance`), the way the scorer resolves it. `None` when the name is defined as it
/// is, or not at all.
fn resolve_namespaced(catalog: &Catalog, call: &ToolCall) -> Option<String> {
    let namespace = call.namespace.as_deref()?;
    if catalog.contains(&call.name) {
        return None;
    }
    ["__", ".", "/"]
        .iter()
        .map(|sep| format!("{namespace}{sep}{}", call.name))
        .find(|name| catalog.contains(name))
}

/// Why a response cannot be acted on, if it cannot.
fn malformed(response: &Response) -> Option<String> {
    if let Some(anomaly) = response
        .anomalies
        .iter()
        .find(|a| a.kind == AnomalyKind::MalformedCall)
    {
        return Some(format!(
            "the provider reported a malformed call: {}",
            anomaly.detail
        ));
    }
    if response.calls.is_empty() {
        if let Some(anomaly) = response
            .anomalies
            .iter()
            .find(|a| a.kind == AnomalyKind::UnexpectedToolCall)
        {
            return Some(format!(
                "the provider reported a call to a tool it was not offered, without the call: {}",
                anomaly.detail
            ));
        }
    }
    if response.format.wire().pairs_by_id {
        let missing = response
            .calls
            .iter()
            .position(|c| c.id.as_deref().is_none_or(str::is_empty));
        if let Some(at) = missing {
            return Some(format!(
                "call #{} (`{}`) has no id, and {} pairs every result with its call's id",
                at + 1,
                escape(&response.calls[at].name),
                response.format
            ));
        }
    }
    None
}

fn available_sentence(catalog: &Catalog) -> String {
    if catalog.is_empty() {
        return " No tools are available.".to_owned();
    }
    let mut sentence = String::from(" Available tools: ");
    for (i, name) in catalog.names().take(MAX_LISTED).enumerate() {
        if i > 0 {
            sentence.push_str(", ");
        }
        sentence.push_str(name);
    }
    if catalog.len() > MAX_LISTED {
        sentence.push_str(&format!(" and {} more", catalog.len() - MAX_LISTED));
    }
    sentence.push('.');
    sentence
}
