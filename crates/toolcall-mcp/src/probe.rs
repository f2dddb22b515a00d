//! The robustness probe: each tool called first with a valid input (the control call), then
//! with arguments its own `inputSchema` forbids, and every answer checked.
//!
//! A server must answer valid input, and refuse bad input cleanly, with an `isError` result or
//! a JSON-RPC error (-32602, invalid params), within the call timeout. A crash, a hang, or a
//! success on input the schema forbids is a finding naming the tool and the input: the same
//! bugs mcp-assert's schema-driven fuzzing found (null arguments crashing servers built on a
//! popular SDK). A refusal proves something only if the tool answers valid input: a server
//! that refuses everything (Playwright MCP without its browser) refused every bad input "as it
//! should", so the control call comes first, and a tool that refuses it is a finding whose
//! other refusals are marked as proving nothing. The valid input is the flow's first call of
//! the tool, else one made from the schema ([`valid_input`]); the bad inputs are derived from
//! the schema alone ([`inputs`]), so the same schema always gives the same probes.
//!
//! The control call runs the tool for real, so it is made only where the tool's annotations
//! say that is harmless by the MCP spec's own defaults: `readOnlyHint: true`, or
//! `destructiveHint: false`. A tool without annotations is, by those defaults, destructive: it
//! gets the bad inputs (which it must refuse before doing anything) but no control call, and
//! the report says so. A tool annotated `destructiveHint: true` (and not read-only) gets no
//! probe at all. `--include-destructive` lifts both.

use std::fmt;

use rmcp::model::CallToolRequestParams;
use serde_json::{json, Map, Value};
use toolcall_score::escape;

use crate::expect::printable_result;
use crate::replay::{block_on, Phase, Run};
use crate::{Failure, FailureKind, Flow, Options};

/// What to probe.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// The tools to probe; empty for every tool.
    pub tools: Vec<String>,
    /// Probe tools annotated `destructiveHint: true` too, and make the control call of tools
    /// that are destructive by the spec's defaults (no annotations saying otherwise).
    pub include_destructive: bool,
    /// The most probes run per tool ([`DEFAULT_MAX_PER_TOOL`]): the first ones, in the fixed
    /// order of [`inputs`]; how many more there were is in [`ProbeReport::capped`]. A server's
    /// schema, not the user, decides how many there are.
    pub max_per_tool: usize,
    /// Random inputs per tool after the fixed ones ([`random_inputs`]): 0 for none.
    pub runs: usize,
    /// The seed of the random inputs: the same seed gives the same inputs. Without one, a
    /// seed is taken from the clock, and [`ProbeReport::seed`] says which.
    pub seed: Option<u64>,
}

/// The default of [`ProbeOptions::max_per_tool`]: enough for a tool of thirty properties.
pub const DEFAULT_MAX_PER_TOOL: usize = 100;

impl Default for ProbeOptions {
    fn default() -> ProbeOptions {
        ProbeOptions {
            tools: Vec::new(),
            include_destructive: false,
            max_per_tool: DEFAULT_MAX_PER_TOOL,
            runs: 0,
            seed: None,
        }
    }
}

/// How the server answered one probe.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// Refused, as it should: the refusal's text.
    Refused(String),
    /// Accepted input its schema forbids: what it answered.
    Accepted(Value),
    /// No answer within the call timeout.
    Hang,
    /// The server died: how.
    Crash(String),
    /// Some other failure (a protocol error): what it was.
    Other(String),
}

/// One probe: a tool, an input that breaks its schema, and the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The tool.
    pub tool: String,
    /// How the input breaks the schema: `` `count` of the wrong type ``.
    pub breaks: String,
    /// The arguments sent, as printed: JSON, masked, cut after 200 characters (a probe of a
    /// tool of thousands of properties sends thousands; keeping each whole grew with the square
    /// of them).
    pub input: String,
    /// The answer.
    pub answer: Answer,
    /// What the input was meant to be.
    pub kind: ProbeKind,
    /// A refusal that proves nothing: the tool refused its valid input too.
    pub moot: bool,
    /// For a control call: whether its input is a flow's call of the tool (known good), not
    /// one made from the schema alone (which may be wrong in a way the schema does not say: a
    /// path outside the folders a file server serves).
    pub from_flow: bool,
}

/// What a probe's input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeKind {
    /// The control call: a valid input, which the tool must answer.
    Control,
    /// An input its schema forbids, which the tool must refuse.
    Invalid,
    /// A random input ([`random_inputs`]): one the schema forbids must be refused, one it
    /// allows may be answered or refused, but never crash or hang the server.
    Random {
        /// Whether the schema allows it.
        allowed: bool,
    },
}

impl Probe {
    /// Whether the answer is a finding: a control call not answered (refused, when its input
    /// came from a flow; a refusal of an input made from the schema alone only makes the
    /// tool's refusals moot, and [`ProbeReport::refuses_everything`] is the finding when every
    /// tool refuses), an invalid input not refused.
    pub fn is_finding(&self) -> bool {
        match self.kind {
            ProbeKind::Control => match self.answer {
                Answer::Accepted(_) => false,
                Answer::Refused(_) => self.from_flow,
                _ => true,
            },
            ProbeKind::Invalid | ProbeKind::Random { allowed: false } => {
                !matches!(self.answer, Answer::Refused(_))
            }
            ProbeKind::Random { allowed: true } => {
                !matches!(self.answer, Answer::Refused(_) | Answer::Accepted(_))
            }
        }
    }

    /// Whether this is a refusal as it should be, one that proves something.
    pub fn is_proof(&self) -> bool {
        matches!(
            self.kind,
            ProbeKind::Invalid | ProbeKind::Random { allowed: false }
        ) && !self.moot
            && matches!(self.answer, Answer::Refused(_))
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = &self.input;
        let tool = escape(&self.tool);
        match (&self.answer, self.kind) {
            (Answer::Accepted(result), ProbeKind::Control) => write!(
                f,
                "ok     `{tool}` {}: answered: {}",
                self.breaks,
                printable_result(result)
            ),
            (Answer::Refused(why), ProbeKind::Control) if self.from_flow => write!(
                f,
                "REFUSE `{tool}` {}: {input} was refused ({}); its refusals of invalid input \
                 prove nothing",
                self.breaks,
                escape(why)
            ),
            (Answer::Refused(why), ProbeKind::Control) => write!(
                f,
                "note   `{tool}` {}: {input} was refused ({}); its refusals of invalid input \
                 prove nothing (an input made from the schema alone may be wrong in a way the \
                 schema does not say; give the tool a call in a flow: the probe takes a \
                 flow's first call of each tool as its valid input)",
                self.breaks,
                escape(why)
            ),
            (Answer::Accepted(_), ProbeKind::Random { allowed: true }) => write!(
                f,
                "ok     `{tool}` {}, which its schema allows: answered",
                self.breaks
            ),
            (Answer::Refused(why), ProbeKind::Random { allowed: true }) => write!(
                f,
                "ok     `{tool}` {}, which its schema allows: refused ({})",
                self.breaks,
                escape(why)
            ),
            (Answer::Refused(why), _) if self.moot => write!(
                f,
                "moot   `{tool}` {}: refused ({}), which proves nothing: it refused valid \
                 input too",
                self.breaks,
                escape(why)
            ),
            (Answer::Refused(why), _) => write!(
                f,
                "ok     `{tool}` {}: refused ({})",
                self.breaks,
                escape(why)
            ),
            (Answer::Accepted(result), _) => write!(
                f,
                "ACCEPT `{tool}` {}: {input} was accepted though its schema forbids it: {}",
                self.breaks,
                printable_result(result)
            ),
            (Answer::Hang, _) => write!(
                f,
                "HANG   `{tool}` {}: {input} got no answer in time",
                self.breaks
            ),
            (Answer::Crash(how), _) => write!(
                f,
                "CRASH  `{tool}` {}: {input} killed the server: {}",
                self.breaks,
                escape(how)
            ),
            (Answer::Other(what), _) => write!(
                f,
                "ERROR  `{tool}` {}: {input}: {}",
                self.breaks,
                escape(what)
            ),
        }
    }
}

/// What a probe run found.
#[derive(Clone, Debug, Default)]
pub struct ProbeReport {
    /// Every probe, in tool order.
    pub probes: Vec<Probe>,
    /// The tools left out, with why.
    pub skipped: Vec<(String, String)>,
    /// The tools probed without a control call, with why: their refusals are unproven.
    pub uncontrolled: Vec<(String, String)>,
    /// The tools with more probes than [`ProbeOptions::max_per_tool`], with how many they had
    /// (only the first ones ran).
    pub capped: Vec<(String, usize)>,
    /// Why the probe could not run at all (the server did not start, or list).
    pub failure: Option<Failure>,
    /// The seed of the random inputs, when there were any: `--seed` with it makes them again.
    pub seed: Option<u64>,
}

impl ProbeReport {
    /// The probes whose answer was not a refusal.
    pub fn findings(&self) -> impl Iterator<Item = &Probe> {
        self.probes.iter().filter(|p| p.is_finding())
    }

    /// Whether every control call was refused (and there was at least one): a server that
    /// refuses everything (Playwright MCP without its browser), whose refusals of invalid
    /// input prove nothing. A finding, whatever each refusal alone is.
    pub fn refuses_everything(&self) -> bool {
        let mut controls = self
            .probes
            .iter()
            .filter(|p| p.kind == ProbeKind::Control)
            .peekable();
        controls.peek().is_some() && controls.all(|p| matches!(p.answer, Answer::Refused(_)))
    }

    /// How many control calls were answered.
    pub fn answered(&self) -> usize {
        self.probes
            .iter()
            .filter(|p| p.kind == ProbeKind::Control && matches!(p.answer, Answer::Accepted(_)))
            .count()
    }

    /// How many refusals prove nothing, their tool having refused valid input too.
    pub fn moot(&self) -> usize {
        self.probes.iter().filter(|p| p.moot).count()
    }

    /// How many invalid inputs were refused as they should be, by tools that answer valid
    /// input (or got no control call).
    pub fn refused(&self) -> usize {
        self.probes.iter().filter(|p| p.is_proof()).count()
    }
}

/// One step into a value: an object's member, or an array's first item.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Item,
}

/// What a probe does at its path.
#[derive(Clone, Debug)]
enum Change {
    /// Puts this value there.
    Set(Value),
    /// Takes the member away.
    Remove,
    /// A string of this many characters (made when the probe is: up to a MiB).
    Long(u64),
    /// An array of this many copies of a valid item.
    Items(Value, u64),
}

/// How one probe breaks the schema: what it says, where, and how. A probe of a nested value
/// starts from `base`, the valid value of the top-level property it lies in (which need not be
/// required, so need not be in the valid arguments).
#[derive(Clone, Debug)]
struct Breach {
    breaks: String,
    path: Vec<Seg>,
    base: Option<Value>,
    change: Change,
}

/// The inputs that break a schema, made one at a time ([`inputs`]): a tool's schema decides
/// how many there are (three or so per property), and each is a copy of the valid arguments, so
/// holding them all took memory in the square of the properties (3,000 properties: 3.2 GB).
/// The plan is one small entry per probe; [`Iterator::next`] builds its input.
#[derive(Clone, Debug)]
pub struct Inputs {
    valid: Map<String, Value>,
    plan: std::vec::IntoIter<Breach>,
}

impl Iterator for Inputs {
    type Item = (String, Value);

    fn next(&mut self) -> Option<(String, Value)> {
        let breach = self.plan.next()?;
        let mut input = Value::Object(self.valid.clone());
        if let (Some(base), Some(Seg::Key(top))) = (&breach.base, breach.path.first()) {
            input[top.as_str()] = base.clone();
        }
        apply(&mut input, &breach.path, &breach.change);
        Some((breach.breaks, input))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.plan.size_hint()
    }
}

impl ExactSizeIterator for Inputs {}

/// Makes `change` at `path` inside `value` (the whole value for an empty path).
fn apply(value: &mut Value, path: &[Seg], change: &Change) {
    match path {
        [] => {
            *value = match change {
                Change::Set(v) => v.clone(),
                Change::Remove => Value::Null,
                Change::Long(n) => {
                    json!("x".repeat(usize::try_from(*n).unwrap_or(0).min(1 << 20)))
                }
                Change::Items(item, n) => {
                    Value::Array(vec![item.clone(); usize::try_from(*n).unwrap_or(0)])
                }
            }
        }
        [Seg::Key(key), rest @ ..] => {
            if let Some(object) = value.as_object_mut() {
                if rest.is_empty() && matches!(change, Change::Remove) {
                    object.remove(key);
                } else {
                    apply(
                        object.entry(key.clone()).or_insert(Value::Null),
                        rest,
                        change,
                    );
                }
            }
        }
        [Seg::Item, rest @ ..] => {
            if let Some(items) = value.as_array_mut() {
                if items.is_empty() {
                    items.push(Value::Null);
                }
                apply(&mut items[0], rest, change);
            }
        }
    }
}

/// The inputs that break `schema`, each with what it breaks, in a fixed order: no arguments
/// (when something is required), each required property missing, then for each property: of
/// the wrong type, `null` when required, numbers past their bounds (`minimum`, `maximum`, and at
/// an `exclusiveMinimum` / `exclusiveMaximum`, pydantic's `gt=` / `lt=`), an integer with a
/// fraction, strings past `maxLength` or short of `minLength`, one its `pattern` does not match,
/// an enum's outsider, arrays short of `minItems` or past `maxItems`, and the same again inside
/// a nested object's members and an array's first item; last an extra property where none is
/// allowed. Every input but the one it breaks is valid as far as the schema says. Made one at a
/// time, as they are asked for; [`ExactSizeIterator::len`] says how many there are.
pub fn inputs(schema: &Value) -> Inputs {
    let valid = match valid_input(schema) {
        Value::Object(valid) => valid,
        _ => Map::new(),
    };
    let mut plan = Vec::new();
    if !required_names(schema).is_empty() {
        plan.push(Breach {
            breaks: "with no arguments".into(),
            path: Vec::new(),
            base: None,
            change: Change::Set(json!({})),
        });
    }
    plan_object(schema, &[], "", None, 0, &mut plan);
    Inputs {
        valid,
        plan: plan.into_iter(),
    }
}

/// `path` followed by `seg`.
fn joined(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut path = path.to_vec();
    path.push(seg);
    path
}

/// The breaches of an object's members at `path` (shown as `shown`): each required member
/// missing, each member's own breaches, an unlisted member where none is allowed. `base` is the
/// valid value of the top-level property the object lies in (none at the top).
fn plan_object(
    schema: &Value,
    path: &[Seg],
    shown: &str,
    base: Option<&Value>,
    depth: usize,
    plan: &mut Vec<Breach>,
) {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required = required_names(schema);
    let member = |name: &str| {
        let name = escape(name).to_string();
        if shown.is_empty() {
            name
        } else {
            format!("{shown}.{name}")
        }
    };
    // Required names in the order the schema lists them, as before.
    let listed: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for name in listed {
        if !seen.insert(name) {
            continue;
        }
        plan.push(Breach {
            breaks: format!("without the required `{}`", member(name)),
            path: joined(path, Seg::Key(name.to_owned())),
            base: base.cloned(),
            change: Change::Remove,
        });
    }
    for (name, property) in properties {
        let here = joined(path, Seg::Key(name.clone()));
        plan_value(
            property,
            &here,
            &member(name),
            base,
            required.contains(name.as_str()),
            depth,
            plan,
        );
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        plan.push(Breach {
            breaks: if shown.is_empty() {
                "with a property it does not list".into()
            } else {
                format!("with `{shown}` holding a property it does not list")
            },
            path: joined(path, Seg::Key("__unlisted__".into())),
            base: base.cloned(),
            change: Change::Set(json!("x")),
        });
    }
}

/// The breaches of one value at `path` (shown as `shown`), of schema `property`; then those
/// inside it, when it is an object with members or an array with an `items` schema.
fn plan_value(
    property: &Value,
    path: &[Seg],
    shown: &str,
    base: Option<&Value>,
    required: bool,
    depth: usize,
    plan: &mut Vec<Breach>,
) {
    let mut push = |breaks: String, change: Change| {
        plan.push(Breach {
            breaks,
            path: path.to_vec(),
            base: base.cloned(),
            change,
        });
    };
    if let Some(wrong) = wrong_type(property) {
        push(
            format!("with `{shown}` of the wrong type"),
            Change::Set(wrong),
        );
    }
    if required && !allows_null(property) {
        push(format!("with `{shown}` null"), Change::Set(Value::Null));
    }
    if let Some(min) = property.get("minimum").and_then(Value::as_f64) {
        push(
            format!("with `{shown}` below its minimum"),
            Change::Set(number(min - 1.0)),
        );
    }
    if let Some(max) = property.get("maximum").and_then(Value::as_f64) {
        push(
            format!("with `{shown}` above its maximum"),
            Change::Set(number(max + 1.0)),
        );
    }
    if property.get("type").and_then(Value::as_str) == Some("integer") {
        push(
            format!("with `{shown}` not a whole number"),
            Change::Set(json!(1.5)),
        );
    }
    if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
        push(
            format!("with `{shown}` past its maxLength"),
            Change::Long(max.saturating_add(1)),
        );
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        if !values.contains(&json!("__not_one_of_the_values__")) {
            push(
                format!("with `{shown}` not one of its values"),
                Change::Set(json!("__not_one_of_the_values__")),
            );
        }
    }
    // The exclusive bounds: the bound itself is what they forbid.
    if let Some((low, true)) = lower(property) {
        push(
            format!("with `{shown}` at its exclusive minimum"),
            Change::Set(number(low)),
        );
    }
    if let Some((high, true)) = upper(property) {
        push(
            format!("with `{shown}` at its exclusive maximum"),
            Change::Set(number(high)),
        );
    }
    if let Some(min) = property
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
    {
        push(
            format!("with `{shown}` short of its minLength"),
            Change::Long(min - 1),
        );
    }
    if let Some(unmatched) = unmatched(property) {
        push(
            format!("with `{shown}` not matching its pattern"),
            Change::Set(json!(unmatched)),
        );
    }
    let item = || {
        property
            .get("items")
            .map_or_else(|| json!("x"), |items| example_at(items, depth + 1))
    };
    if let Some(min) = property
        .get("minItems")
        .and_then(Value::as_u64)
        .filter(|&n| n > 0 && n <= 10_000)
    {
        push(
            format!("with `{shown}` short of its minItems"),
            Change::Items(item(), min - 1),
        );
    }
    if let Some(max) = property
        .get("maxItems")
        .and_then(Value::as_u64)
        .filter(|&n| n < 10_000)
    {
        push(
            format!("with `{shown}` past its maxItems"),
            Change::Items(item(), max + 1),
        );
    }
    if depth >= MAX_DEPTH {
        return;
    }
    // Inside: the value made valid first (it may be optional, so absent), then broken within.
    let Some(Seg::Key(top)) = path.first() else {
        return;
    };
    let mut inner = match base {
        Some(base) => json!({ top.as_str(): base }),
        None => json!({}),
    };
    let is_object = property.get("properties").is_some_and(Value::is_object);
    let items = property.get("items").filter(|i| i.is_object());
    if is_object {
        apply(
            &mut inner,
            path,
            &Change::Set(example_at(property, depth + 1)),
        );
        let base = inner[top.as_str()].clone();
        plan_object(property, path, shown, Some(&base), depth + 1, plan);
    } else if let Some(items) = items {
        let mut array = example_at(property, depth + 1);
        if array.as_array().is_some_and(Vec::is_empty) {
            array = json!([example_at(items, depth + 1)]);
        }
        apply(&mut inner, path, &Change::Set(array));
        let base = inner[top.as_str()].clone();
        plan_value(
            items,
            &joined(path, Seg::Item),
            &format!("{shown}[0]"),
            Some(&base),
            true,
            depth + 1,
            plan,
        );
    }
}

/// A string the schema's `pattern` does not match (of its length bounds when one is), when it
/// has one the regex engine reads.
fn unmatched(property: &Value) -> Option<String> {
    let pattern = regex::Regex::new(property.get("pattern")?.as_str()?).ok()?;
    let min = property
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let max = property.get("maxLength").and_then(Value::as_u64);
    let candidates = ["!", "x", "0", " ", "__not_matching__", "", "\u{1f600}"];
    let wrong: Vec<String> = candidates
        .iter()
        .map(|c| {
            let n = c.chars().count() as u64;
            if n < min && !c.is_empty() {
                c.repeat(usize::try_from(min.div_ceil(n)).unwrap_or(1).min(1 << 20))
            } else {
                (*c).to_owned()
            }
        })
        .filter(|c| !pattern.is_match(c))
        .collect();
    let fits = |s: &&String| {
        let n = s.chars().count() as u64;
        n >= min && max.is_none_or(|max| n <= max)
    };
    wrong.iter().find(fits).or(wrong.first()).cloned()
}

/// `count` random inputs for tool `tool` of input schema `schema`, from `seed`: each the valid
/// input with one to three random changes (a member, at any depth the schema describes, set to
/// a random value, or taken away; an unlisted member added): a value of another type, an edge
/// of a number's range, an empty, long or odd string (controls, bidi overrides, emoji, paths,
/// format strings), a deep array or object. The same seed, tool and schema always give the
/// same inputs (the generator is SplitMix64, written out here so that no dependency's update
/// can change them); whether the schema allows each one is for the caller to check.
pub fn random_inputs(schema: &Value, seed: u64, tool: &str, count: usize) -> Vec<Value> {
    let mut rng = SplitMix(seed ^ fnv1a(tool.as_bytes()));
    let valid = valid_input(schema);
    let mut places = Vec::new();
    places_in(schema, &mut Vec::new(), 0, &mut places);
    (0..count)
        .map(|_| {
            let mut input = valid.clone();
            for _ in 0..1 + rng.below(3) {
                let change = match rng.below(4) {
                    0 => Change::Remove,
                    _ => Change::Set(random_value(&mut rng, 0)),
                };
                let path = if places.is_empty() || rng.below(6) == 0 {
                    vec![Seg::Key(format!("__random_{}__", rng.below(1000)))]
                } else {
                    places[rng.below(places.len() as u64) as usize].clone()
                };
                // A nested place needs its parents: set them valid first.
                for depth in 1..path.len() {
                    let parent = &path[..depth];
                    if lookup(&input, parent).is_none_or(|v| !(v.is_object() || v.is_array())) {
                        if let Some(sub) = schema_at(schema, parent) {
                            let mut value = example_at(sub, depth);
                            if let (Value::Array(items), Some(item)) =
                                (&mut value, sub.get("items"))
                            {
                                if items.is_empty() {
                                    items.push(example_at(item, depth + 1));
                                }
                            }
                            apply(&mut input, parent, &Change::Set(value));
                        }
                    }
                }
                apply(&mut input, &path, &change);
            }
            input
        })
        .collect()
}

/// Every place in a schema's objects a random change can go: each member, each array's first
/// item, to [`MAX_DEPTH`].
fn places_in(schema: &Value, path: &mut Vec<Seg>, depth: usize, out: &mut Vec<Vec<Seg>>) {
    if depth >= MAX_DEPTH {
        return;
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            path.push(Seg::Key(name.clone()));
            out.push(path.clone());
            places_in(sub, path, depth + 1, out);
            path.pop();
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        if !path.is_empty() {
            path.push(Seg::Item);
            out.push(path.clone());
            places_in(items, path, depth + 1, out);
            path.pop();
        }
    }
}

/// The value at `path`, if there is one.
fn lookup<'a>(value: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get(k.as_str()),
        Seg::Item => v.get(0),
    })
}

/// The schema of the value at `path`.
fn schema_at<'a>(schema: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(schema, |s, seg| match seg {
        Seg::Key(k) => s.get("properties")?.get(k.as_str()),
        Seg::Item => s.get("items"),
    })
}

/// Strings that break careless code.
const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "\u{202e}gnp.exe",
    "\u{1f4a5}",
    "../../../../etc/passwd",
    "${HOME}",
    "%s%s%s%n",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "null",
    "-1",
    "NaN",
    "\r\n",
];

fn random_value(rng: &mut SplitMix, depth: usize) -> Value {
    let deep = depth < 3;
    match rng.below(if deep { 9 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => [
            json!(0),
            json!(-1),
            json!(1),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(9_007_199_254_740_993_i64),
        ][rng.below(7) as usize]
            .clone(),
        3 => [
            json!(0.5),
            json!(-0.0),
            json!(1e308),
            json!(-1e308),
            json!(1e-308),
        ][rng.below(5) as usize]
            .clone(),
        4 => json!(ODD_STRINGS[rng.below(ODD_STRINGS.len() as u64) as usize]),
        5 => json!("x".repeat([1, 100, 10_000, 100_000][rng.below(4) as usize])),
        6 => json!(format!("r{}", rng.next())),
        7 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|i| (format!("k{i}"), random_value(rng, depth + 1)))
                .collect(),
        ),
    }
}

/// SplitMix64: small, fast, and the same numbers for a seed on every platform and release.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// FNV-1a: a tool's name mixed into the seed, so that which tools are probed does not change
/// another tool's inputs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A seed from the clock, for a random run without `--seed`.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        % 1_000_000_000
}

/// A whole number as an integer, else a float.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

fn types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_null(property: &Value) -> bool {
    types(property).contains(&"null") || property.get("type").is_none()
}

/// A valid input for a tool of input schema `schema`: each required property (at every depth)
/// with a value its own schema allows, as far as that can be made from the schema alone (a
/// `const`, the first `enum` value or `examples` entry, its `default`, a number within its
/// bounds, a string of its length and `pattern` and `format`, an array of `minItems` valid
/// items). A schema may ask what it cannot say (a time zone name, a file that exists): a flow's
/// call of the tool is the better valid input, and [`probe`] takes it when there is one.
pub fn valid_input(schema: &Value) -> Value {
    example_at(schema, 0)
}

/// How deep [`valid_input`] follows nested objects and arrays.
const MAX_DEPTH: usize = 8;

fn example_at(property: &Value, depth: usize) -> Value {
    if let Some(value) = property.get("const") {
        return value.clone();
    }
    for listed in ["enum", "examples"] {
        if let Some(first) = property
            .get(listed)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return first.clone();
        }
    }
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    // The first branch of a choice; every part of an `allOf` is taken as the first is.
    for choice in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = property
            .get(choice)
            .and_then(Value::as_array)
            .and_then(|v| v.iter().find(|b| b.get("type") != Some(&json!("null"))))
        {
            return example_at(first, depth);
        }
    }
    let kinds = types(property);
    let kind = kinds
        .iter()
        .copied()
        .find(|t| *t != "null")
        .or(kinds.first().copied());
    let kind = kind.or(if property.get("properties").is_some() {
        Some("object")
    } else if property.get("items").is_some() {
        Some("array")
    } else {
        None
    });
    match kind {
        Some("integer") => json!(whole_within(property)),
        Some("number") => number(number_within(property)),
        Some("boolean") => json!(true),
        Some("array") => {
            let count = property
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let item = match property.get("items") {
                Some(items) if depth < MAX_DEPTH => example_at(items, depth + 1),
                _ => json!("x"),
            };
            Value::Array(vec![item; usize::try_from(count.min(64)).unwrap_or(0)])
        }
        Some("object") => {
            let mut object = Map::new();
            if depth < MAX_DEPTH {
                let required = required_names(property);
                if let Some(properties) = property.get("properties").and_then(Value::as_object) {
                    for (name, sub) in properties {
                        if required.contains(name.as_str()) {
                            let value = named_string(name, sub)
                                .unwrap_or_else(|| example_at(sub, depth + 1));
                            object.insert(name.clone(), value);
                        }
                    }
                }
            }
            Value::Object(object)
        }
        Some("null") => Value::Null,
        _ => json!(string_within(property)),
    }
}

/// A plain string member's value from its name alone, where the name says what it holds (a
/// time zone, a URL, an e-mail address, a date or a time) and the schema says nothing more: `x`
/// is not a time zone, and a server that refuses it refuses no valid input.
fn named_string(name: &str, property: &Value) -> Option<Value> {
    let plain = types(property) == ["string"]
        && [
            "enum",
            "const",
            "default",
            "examples",
            "format",
            "pattern",
            "minLength",
            "maxLength",
        ]
        .iter()
        .all(|k| property.get(k).is_none());
    if !plain {
        return None;
    }
    let name = name.to_ascii_lowercase();
    let value = if name.ends_with("timezone") || name == "tz" || name.ends_with("_tz") {
        "UTC"
    } else if name.ends_with("url") || name.ends_with("uri") {
        "https://example.com"
    } else if name.ends_with("email") {
        "a@example.com"
    } else if name.ends_with("date") {
        "2026-01-01"
    } else if name == "time" {
        "12:00"
    } else {
        return None;
    };
    Some(json!(value))
}

fn required_names(schema: &Value) -> std::collections::BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The lower bound a number schema sets, and whether it is exclusive (draft 6's number form,
/// or draft 4's `exclusiveMinimum: true` beside `minimum`).
fn lower(property: &Value) -> Option<(f64, bool)> {
    match (
        property.get("minimum").and_then(Value::as_f64),
        property.get("exclusiveMinimum"),
    ) {
        (_, Some(Value::Number(n))) => n.as_f64().map(|n| (n, true)),
        (Some(min), Some(Value::Bool(true))) => Some((min, true)),
        (Some(min), _) => Some((min, false)),
        (None, _) => None,
    }
}

/// [`lower`] for the upper bound.
fn upper(property: &Value) -> Option<(f64, bool)> {
    match (
        property.get("maximum").and_then(Value::as_f64),
        property.get("exclusiveMaximum"),
    ) {
        (_, Some(Value::Number(n))) => n.as_f64().map(|n| (n, true)),
        (Some(max), Some(Value::Bool(true))) => Some((max, true)),
        (Some(max), _) => Some((max, false)),
        (None, _) => None,
    }
}

/// A whole number within the schema's bounds (1 when it has none, as before).
fn whole_within(property: &Value) -> i64 {
    let low = lower(property).map(
        |(n, exclusive)| {
            if exclusive {
                n.floor() + 1.0
            } else {
                n.ceil()
            }
        },
    );
    let high = upper(property).map(
        |(n, exclusive)| {
            if exclusive {
                n.ceil() - 1.0
            } else {
                n.floor()
            }
        },
    );
    let pick = match (low, high) {
        (Some(low), _) => low,
        (None, Some(high)) => high.min(1.0),
        (None, None) => 1.0,
    };
    // Past i64 a bound is not one a probe can meet.
    if pick.abs() < 9e15 {
        pick as i64
    } else {
        1
    }
}

/// A number within the schema's bounds.
fn number_within(property: &Value) -> f64 {
    match (lower(property), upper(property)) {
        (Some((low, false)), _) => low,
        (Some((low, true)), Some((high, _))) => (low + high) / 2.0,
        (Some((low, true)), None) => low + 1.0,
        (None, Some((high, exclusive))) => {
            if high > 1.0 || (high == 1.0 && !exclusive) {
                1.0
            } else {
                high - 1.0
            }
        }
        (None, None) => 1.0,
    }
}

/// Strings a `format` or a `pattern` commonly asks for, tried in order.
const STRING_CANDIDATES: &[&str] = &[
    "x",
    "abc",
    "a",
    "A",
    "1",
    "123",
    "UTC",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "00:00:00",
    "https://example.com",
    "a@example.com",
    "00000000-0000-0000-0000-000000000000",
    "127.0.0.1",
    "a-b",
    "a_b",
    "ab12",
];

/// A string of the schema's length, `format` and `pattern` (the first candidate that fits;
/// `x`, as before, when none does or nothing is asked).
fn string_within(property: &Value) -> String {
    let min = property
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let max = property.get("maxLength").and_then(Value::as_u64);
    let by_format = match property.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2026-01-01T00:00:00Z"),
        Some("date") => Some("2026-01-01"),
        Some("time") => Some("00:00:00Z"),
        Some("uri" | "url" | "iri" | "uri-reference") => Some("https://example.com"),
        Some("email" | "idn-email") => Some("a@example.com"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("ipv4") => Some("127.0.0.1"),
        Some("ipv6") => Some("::1"),
        Some("hostname" | "idn-hostname") => Some("example.com"),
        _ => None,
    };
    let pattern = property
        .get("pattern")
        .and_then(Value::as_str)
        .and_then(|p| regex::Regex::new(p).ok());
    let fits = |s: &str| {
        let n = s.chars().count() as u64;
        n >= min && max.is_none_or(|max| n <= max) && pattern.as_ref().is_none_or(|p| p.is_match(s))
    };
    let padded = |s: &str| {
        let n = s.chars().count() as u64;
        if n >= min {
            s.to_owned()
        } else {
            let pad = usize::try_from(min - n).unwrap_or(0).min(1 << 20);
            format!("{s}{}", "x".repeat(pad))
        }
    };
    by_format
        .into_iter()
        .chain(STRING_CANDIDATES.iter().copied())
        .map(padded)
        .find(|s| fits(s))
        .unwrap_or_else(|| padded("x"))
}

/// A value of none of `property`'s types, when it declares some.
fn wrong_type(property: &Value) -> Option<Value> {
    let types = types(property);
    if types.is_empty() {
        return None;
    }
    [
        ("string", json!(12345)),
        ("integer", json!("not a number")),
        ("number", json!("not a number")),
        ("boolean", json!("yes")),
        ("array", json!({"not": "an array"})),
        ("object", json!("not an object")),
    ]
    .into_iter()
    .find(|(t, _)| types.contains(t))
    .map(|(_, v)| v)
    .filter(|v| !types.contains(&json_type(v)))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// Probes the tools of `flow`'s server (the flow's calls are not made). A server that crashes
/// is started again for the probes after it.
pub async fn probe(flow: &Flow, options: &Options, what: &ProbeOptions) -> ProbeReport {
    let mut report = ProbeReport {
        seed: (what.runs > 0).then(|| what.seed.unwrap_or_else(clock_seed)),
        ..ProbeReport::default()
    };
    let mut run = Run::new(flow, options);
    let mut client = match run.connect().await {
        Ok(client) => client,
        Err(failure) => {
            run.finish(false).await;
            report.failure = Some(failure);
            return report;
        }
    };
    let listed = run
        .guarded(
            &Phase::new("tools/list"),
            run.call_timeout,
            client.list_all_tools(),
        )
        .await;
    let tools = match listed {
        Ok(tools) => tools,
        Err(failure) => {
            run.finish(false).await;
            report.failure = Some(failure);
            return report;
        }
    };
    for tool in tools {
        let name = tool.name.to_string();
        if !what.tools.is_empty() && !what.tools.contains(&name) {
            continue;
        }
        let harm = Harm::of(tool.annotations.as_ref());
        if harm == Harm::Destructive && !what.include_destructive {
            report.skipped.push((
                name,
                "annotated destructive (--include-destructive probes it)".into(),
            ));
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let mut planned: Vec<(ProbeKind, String, Value)> = Vec::new();
        let mut from_flow = false;
        match control(flow, &name, &schema, harm, what.include_destructive) {
            Ok((breaks, input, known_good)) => {
                from_flow = known_good;
                planned.push((ProbeKind::Control, breaks, input));
            }
            Err(why) => report.uncontrolled.push((name.clone(), why)),
        }
        let invalid = inputs(&schema);
        if invalid.len() > what.max_per_tool {
            report.capped.push((name.clone(), invalid.len()));
        }
        let mut refused_valid = false;
        let invalid = invalid
            .take(what.max_per_tool)
            .map(|(breaks, input)| (ProbeKind::Invalid, breaks, input));
        let random = match report.seed {
            Some(seed) => {
                let mut checked = toolcall_score::Tool::new(&name, "");
                checked.input_schema = Some(schema.clone());
                let checked = toolcall_score::Catalog::new([checked]);
                // A random input the schema allows is a real call: not to a tool that may
                // destroy unless asked, as the control call is not.
                let may_call = harm != Harm::ByDefault || what.include_destructive;
                random_inputs(&schema, seed, &name, what.runs)
                    .into_iter()
                    .enumerate()
                    .filter_map(|(i, input)| {
                        let allowed = checked.validate(&name, &input).is_ok();
                        (may_call || !allowed).then(|| {
                            (
                                ProbeKind::Random { allowed },
                                format!("with random input #{}", i + 1),
                                input,
                            )
                        })
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        for (kind, breaks, input) in planned.into_iter().chain(invalid).chain(random) {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = input.as_object().cloned();
            let phase = Phase::new(&format!("probe {}", escape(&name)));
            let answer = match run
                .guarded(&phase, run.call_timeout, client.call_tool(params))
                .await
            {
                Ok(result) => {
                    let result = serde_json::to_value(&result).unwrap_or_default();
                    let text = result["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if result.get("isError") == Some(&Value::Bool(true)) {
                        Answer::Refused(format!("isError: {text}"))
                    } else {
                        Answer::Accepted(
                            result
                                .get("structuredContent")
                                .cloned()
                                .unwrap_or(Value::String(text)),
                        )
                    }
                }
                Err(failure) => match failure.kind {
                    FailureKind::RpcError => Answer::Refused(failure.message.clone()),
                    FailureKind::Timeout => Answer::Hang,
                    FailureKind::Exited | FailureKind::Protocol => {
                        Answer::Crash(failure.message.clone())
                    }
                    FailureKind::Interrupted => {
                        report.failure = Some(failure);
                        run.finish(false).await;
                        return report;
                    }
                    _ => Answer::Other(failure.message.clone()),
                },
            };
            if kind == ProbeKind::Control && matches!(answer, Answer::Refused(_)) {
                refused_valid = true;
            }
            let restart = matches!(answer, Answer::Crash(_) | Answer::Hang);
            report.probes.push(Probe {
                tool: name.clone(),
                breaks,
                input: printable_result(&flow.mask_value(&input)),
                moot: refused_valid
                    && matches!(
                        kind,
                        ProbeKind::Invalid | ProbeKind::Random { allowed: false }
                    )
                    && matches!(answer, Answer::Refused(_)),
                answer,
                kind,
                from_flow: from_flow && kind == ProbeKind::Control,
            });
            if restart {
                // A dead or stuck server answers nothing more: start it again for the rest.
                run.finish(false).await;
                run = Run::new(flow, options);
                client = match run.connect().await {
                    Ok(client) => client,
                    Err(failure) => {
                        run.finish(false).await;
                        report.failure = Some(failure);
                        return report;
                    }
                };
            }
        }
    }
    let _ = tokio::time::timeout(options.shutdown_grace, client.cancel()).await;
    run.finish(true).await;
    report
}

/// How much harm calling a tool for real may do, by its annotations with the MCP spec's
/// defaults applied (`readOnlyHint` false, `destructiveHint` true, the latter meaningful only
/// when the tool is not read-only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Harm {
    /// Read-only, or says it only adds: a control call is harmless.
    None,
    /// No annotation says it is harmless, none says it destroys: destructive by the defaults.
    ByDefault,
    /// Annotated `destructiveHint: true`, and not read-only.
    Destructive,
}

impl Harm {
    fn of(annotations: Option<&rmcp::model::ToolAnnotations>) -> Harm {
        let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let destructive = annotations.and_then(|a| a.destructive_hint);
        match (read_only, destructive) {
            (true, _) | (false, Some(false)) => Harm::None,
            (false, Some(true)) => Harm::Destructive,
            (false, None) => Harm::ByDefault,
        }
    }
}

/// The control call of tool `name`: the flow's first call of it, else a valid input made from
/// its schema, checked against the schema; or why it gets none.
fn control(
    flow: &Flow,
    name: &str,
    schema: &Value,
    harm: Harm,
    include_destructive: bool,
) -> Result<(String, Value, bool), String> {
    if harm == Harm::ByDefault && !include_destructive {
        return Err(
            "no valid-input control call: no annotation says the tool is read-only \
             (readOnlyHint) or not destructive (destructiveHint: false), and by the MCP spec's \
             defaults that makes it destructive; its refusals are unproven \
             (--include-destructive calls it)"
                .into(),
        );
    }
    let mut tool = toolcall_score::Tool::new(name, "");
    tool.input_schema = Some(schema.clone());
    let catalog = toolcall_score::Catalog::new([tool]);
    let valid = |input: &Value| {
        matches!(
            catalog.validate(name, input),
            Ok(()) | Err(toolcall_score::SchemaError::Undecided(_))
        )
    };
    // A flow's call of the tool is a known good input, if it is one as written: a tool call
    // that is sent as it stands (not skipped, not filled in from another step's result), that
    // must not be refused, and that its schema allows.
    let known_good = flow.calls.iter().find(|c| {
        c.kind == crate::StepKind::Tool
            && c.name == name
            && c.expect_error.is_none()
            && c.skip.is_none()
            && c.captures.is_empty()
            && valid(&c.input)
    });
    if let Some(call) = known_good {
        return Ok((
            "with the valid input of the flow's call".into(),
            call.input.clone(),
            true,
        ));
    }
    let input = valid_input(schema);
    match catalog.validate(name, &input) {
        Ok(()) | Err(toolcall_score::SchemaError::Undecided(_)) => {
            Ok(("with a valid input".into(), input, false))
        }
        Err(why) => Err(format!(
            "no valid-input control call: no valid input could be made from its schema ({}); \
             give the tool a call in a flow (its input is the control call's)",
            escape(&why.to_string())
        )),
    }
}

/// [`probe`] on a fresh single-threaded tokio runtime.
pub fn probe_blocking(flow: &Flow, options: &Options, what: &ProbeOptions) -> ProbeReport {
    block_on(probe(flow, options, what)).unwrap_or_else(|failure| ProbeReport {
        failure: Some(failure),
        ..ProbeReport::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inputs_break_the_schema_one_way_each_and_always_the_same() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"text": {"type": "string", "maxLength": 3},
                           "count": {"type": "integer", "minimum": 1, "maximum": 5},
                           "mode": {"enum": ["a", "b"]}},
            "required": ["text", "count"]});
        assert_eq!(inputs(&schema).len(), 13);
        let got: Vec<String> = inputs(&schema)
            .map(|(why, input)| format!("{why}: {input}"))
            .collect();
        assert_eq!(
            got,
            [
                "with no arguments: {}",
                "without the required `text`: {\"count\":1}",
                "without the required `count`: {\"text\":\"x\"}",
                "with `count` of the wrong type: {\"count\":\"not a number\",\"text\":\"x\"}",
                "with `count` null: {\"count\":null,\"text\":\"x\"}",
                "with `count` below its minimum: {\"count\":0,\"text\":\"x\"}",
                "with `count` above its maximum: {\"count\":6,\"text\":\"x\"}",
                "with `count` not a whole number: {\"count\":1.5,\"text\":\"x\"}",
                "with `mode` not one of its values: {\"count\":1,\"mode\":\"__not_one_of_the_values__\",\"text\":\"x\"}",
                "with `text` of the wrong type: {\"count\":1,\"text\":12345}",
                "with `text` null: {\"count\":1,\"text\":null}",
                "with `text` past its maxLength: {\"count\":1,\"text\":\"xxxx\"}",
                "with a property it does not list: {\"__unlisted__\":\"x\",\"count\":1,\"text\":\"x\"}",
            ]
        );
        assert!(inputs(&schema).eq(inputs(&schema)), "deterministic");
        assert_eq!(
            inputs(&json!({"type": "object"})).len(),
            0,
            "nothing to break"
        );
    }

    /// The control call's input meets what the schema says: bounds (exclusive ones too), length,
    /// pattern, format, items, nested required properties; and it validates.
    #[test]
    fn the_valid_input_meets_its_schema() {
        let schema = json!({"type": "object", "required": ["n", "x", "s", "p", "when", "tags", "inner", "tz"],
            "properties": {
                "n": {"type": "integer", "exclusiveMinimum": 0},
                "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "s": {"type": "string", "minLength": 5},
                "p": {"type": "string", "pattern": "^[0-9]+$"},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "inner": {"type": "object", "required": ["k"], "properties": {"k": {"type": "boolean"}, "o": {"type": "string"}}},
                "tz": {"type": "string", "default": "UTC"},
                "optional": {"type": "string"}}});
        let input = valid_input(&schema);
        assert_eq!(
            input,
            json!({"n": 1, "x": 0.5, "s": "xxxxx", "p": "1", "when": "2026-01-01T00:00:00Z",
                   "tags": ["x", "x"], "inner": {"k": true}, "tz": "UTC"})
        );
        let mut tool = toolcall_score::Tool::new("t", "");
        tool.input_schema = Some(schema);
        assert_eq!(
            toolcall_score::Catalog::new([tool]).validate("t", &input),
            Ok(())
        );
    }

    #[test]
    fn harm_applies_the_spec_defaults() {
        use rmcp::model::ToolAnnotations;
        let with = |read_only: Option<bool>, destructive: Option<bool>| {
            let mut a = ToolAnnotations::default();
            a.read_only_hint = read_only;
            a.destructive_hint = destructive;
            Harm::of(Some(&a))
        };
        assert_eq!(Harm::of(None), Harm::ByDefault);
        assert_eq!(with(None, None), Harm::ByDefault);
        assert_eq!(with(Some(true), None), Harm::None);
        assert_eq!(with(Some(true), Some(true)), Harm::None, "read-only wins");
        assert_eq!(with(None, Some(false)), Harm::None);
        assert_eq!(with(Some(false), Some(true)), Harm::Destructive);
    }

    #[test]
    fn the_inputs_break_nested_and_exclusive_constraints() {
        let schema = json!({"type": "object", "required": ["n"],
            "properties": {
                "n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
                "old": {"type": "integer", "minimum": 5, "exclusiveMinimum": true},
                "s": {"type": "string", "minLength": 2, "pattern": "^a+$"},
                "list": {"type": "array", "minItems": 1, "maxItems": 2,
                         "items": {"type": "object", "required": ["id"], "additionalProperties": false,
                                   "properties": {"id": {"type": "integer"}}}}}});
        let got: Vec<String> = inputs(&schema)
            .map(|(why, input)| format!("{why}: {input}"))
            .collect();
        assert_eq!(
            got,
            [
                "with no arguments: {}",
                "without the required `n`: {}",
                "with `list` of the wrong type: {\"list\":{\"not\":\"an array\"},\"n\":5}",
                "with `list` short of its minItems: {\"list\":[],\"n\":5}",
                "with `list` past its maxItems: {\"list\":[{\"id\":1},{\"id\":1},{\"id\":1}],\"n\":5}",
                "with `list[0]` of the wrong type: {\"list\":[\"not an object\"],\"n\":5}",
                "with `list[0]` null: {\"list\":[null],\"n\":5}",
                "without the required `list[0].id`: {\"list\":[{}],\"n\":5}",
                "with `list[0].id` of the wrong type: {\"list\":[{\"id\":\"not a number\"}],\"n\":5}",
                "with `list[0].id` null: {\"list\":[{\"id\":null}],\"n\":5}",
                "with `list[0].id` not a whole number: {\"list\":[{\"id\":1.5}],\"n\":5}",
                "with `list[0]` holding a property it does not list: {\"list\":[{\"__unlisted__\":\"x\",\"id\":1}],\"n\":5}",
                "with `n` of the wrong type: {\"n\":\"not a number\"}",
                "with `n` null: {\"n\":null}",
                "with `n` at its exclusive minimum: {\"n\":0}",
                "with `n` at its exclusive maximum: {\"n\":10}",
                "with `old` of the wrong type: {\"n\":5,\"old\":\"not a number\"}",
                "with `old` below its minimum: {\"n\":5,\"old\":4}",
                "with `old` not a whole number: {\"n\":5,\"old\":1.5}",
                "with `old` at its exclusive minimum: {\"n\":5,\"old\":5}",
                "with `s` of the wrong type: {\"n\":5,\"s\":12345}",
                "with `s` short of its minLength: {\"n\":5,\"s\":\"x\"}",
                "with `s` not matching its pattern: {\"n\":5,\"s\":\"!!\"}",
            ]
        );
    }

    #[test]
    fn random_inputs_are_the_same_for_a_seed() {
        let schema = json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "string"},
                           "o": {"type": "object", "properties": {"b": {"type": "integer"}}}}});
        let one = random_inputs(&schema, 42, "t", 20);
        assert_eq!(one.len(), 20);
        assert_eq!(one, random_inputs(&schema, 42, "t", 20));
        assert_ne!(one, random_inputs(&schema, 43, "t", 20));
        assert_ne!(
            one,
            random_inputs(&schema, 42, "u", 20),
            "the tool's name is mixed in"
        );
        assert!(
            one.iter().all(Value::is_object),
            "arguments are always an object"
        );
        assert!(
            one.iter()
                .any(|i| i.get("o").is_some_and(|o| o.get("b").is_some())),
            "a nested member is reached: {one:?}"
        );
    }

    /// A schema of 3,000 required properties plans 9,001 probes, each a copy of the 3,000 valid
    /// arguments: they are made one at a time, as asked for (all at once took 3.2 GB).
    #[test]
    fn the_inputs_of_a_wide_schema_are_planned_not_made() {
        let properties: Map<String, Value> = (0..3000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let required: Vec<String> = properties.keys().cloned().collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let mut planned = inputs(&schema);
        assert_eq!(planned.len(), 1 + 3000 + 3000 * 2);
        let (breaks, first) = planned.nth(1).unwrap();
        assert_eq!(breaks, "without the required `p0`");
        assert_eq!(first.as_object().unwrap().len(), 2999);
        assert_eq!(planned.len(), 1 + 3000 + 3000 * 2 - 2);
    }
}
