//! A server's catalog as a contract: a stable snapshot of its `tools/list`, and every change
//! from it classified by what it does to the agents written against it.
//!
//! A renamed tool, a newly required property or an annotation flipped to destructive shows up
//! in a replay only if some flow calls that tool. Diffing the whole catalog against a committed
//! snapshot catches it whatever the flows do, and says how much it matters: a removed tool
//! breaks every caller, a longer description breaks none (though a model reads it).
//!
//! Pure functions over JSON: the caller lists the tools ([`crate::list_catalog`]) and writes
//! the file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toolcall_score::escape;

/// Members that change from one listing to the next without the tool changing: left out of a
/// snapshot so that it diffs clean.
const VOLATILE: [&str; 4] = ["_meta", "ttlMs", "cacheScope", "sessionId"];

/// Schema keywords whose value is data, not a schema: nothing inside is put in order or left
/// out (a `default` may well hold a list whose order matters).
const DATA: [&str; 4] = ["const", "default", "enum", "examples"];

/// Schema keywords whose value maps names to schemas (or to lists of names): its keys are a
/// tool's parameter names, never protocol members, so a parameter called `sessionId` or
/// `_meta` is kept.
const NAMES: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependentRequired",
];

/// The snapshot of `tools` (each as the wire has it, members the client library does not model
/// included): a file that reads well in a diff and changes only when the catalog does.
///
/// Canonical where the protocol gives an order no meaning, so that a server that lists the same
/// catalog in another order (Python's set order changes with every start) snapshots the same:
/// tools sorted by name (a client finds a tool by its name, never by its place); object keys
/// sorted; in a schema, `required` and a list of `type`s sorted and de-duplicated (a set
/// either way), and `enum` values sorted (their order may guide a UI, never what is valid: an
/// order-only change is not drift). Volatile protocol members are left out at any depth, but
/// never a parameter's name (a key under `properties`, say) nor anything inside data (`default`,
/// `enum`…); icons are kept without their data.
pub fn snapshot(tools: &[Value]) -> Value {
    let mut tools: Vec<Value> = tools.iter().map(stable).collect();
    tools.sort_by(|a, b| name(a).cmp(name(b)));
    serde_json::json!({ "tools": tools })
}

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

fn stable(value: &Value) -> Value {
    canonical(value, false)
}

/// `value` with volatile members left out and the sets put in order; `data`: a value inside a
/// data keyword, kept as it is.
fn canonical(value: &Value, data: bool) -> Value {
    canonical_in(value, data, false)
}

/// [`canonical`]; `names`: `value` is the map of a [`NAMES`] keyword, whose keys are names.
fn canonical_in(value: &Value, data: bool, names: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map {
                if !data && !names && VOLATILE.contains(&key.as_str()) {
                    continue;
                }
                // A keyword's name only where keywords are: under `properties`, a parameter
                // may be called `icons`, `default` or `required`.
                let keyword = !data && !names;
                if key == "icons" && keyword {
                    // An icon's data is bytes a review cannot read; its source and type stay.
                    let icons = v
                        .as_array()
                        .map(|icons| {
                            icons
                                .iter()
                                .map(|icon| {
                                    let mut icon = canonical(icon, false);
                                    if let Some(o) = icon.as_object_mut() {
                                        o.remove("data");
                                    }
                                    icon
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    out.insert(key.clone(), Value::Array(icons));
                    continue;
                }
                let inner = data || (keyword && DATA.contains(&key.as_str()));
                let mut v = canonical_in(v, inner, keyword && NAMES.contains(&key.as_str()));
                if keyword && matches!(key.as_str(), "required" | "type" | "enum") {
                    if let Value::Array(items) = &mut v {
                        // Compared as their JSON text: a total order over any values.
                        items.sort_by_cached_key(Value::to_string);
                        if key != "enum" {
                            items.dedup();
                        }
                    }
                }
                out.insert(key.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| canonical(v, data)).collect()),
        other => other.clone(),
    }
}

/// `snapshot` naming the flow whose server it is (`"flow"`, relative to the snapshot file's
/// folder), so that the snapshot alone is a test: [`flow_of`] finds the flow again.
pub fn naming_flow(mut snapshot: Value, flow: &Path, snapshot_file: &Path) -> Value {
    let from = absolute(snapshot_file.parent().unwrap_or(Path::new("")));
    let to = absolute(flow);
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut relative = PathBuf::new();
    for _ in from.components().skip(common) {
        relative.push("..");
    }
    for part in to.components().skip(common) {
        relative.push(part);
    }
    if let Some(map) = snapshot.as_object_mut() {
        let shown = relative.to_string_lossy().replace('\\', "/");
        map.insert("flow".into(), Value::String(shown));
    }
    snapshot
}

/// The flow a snapshot at `snapshot_file` names (see [`naming_flow`]).
pub fn flow_of(snapshot: &Value, snapshot_file: &Path) -> Option<PathBuf> {
    let flow = snapshot.get("flow")?.as_str()?;
    Some(snapshot_file.parent().unwrap_or(Path::new("")).join(flow))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// How much a change matters to the agents written against the catalog, least first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// Nothing breaks, though a model may read it differently (an added tool, a description).
    Info,
    /// A tool may now do more harm than callers were written for (an annotation flipped toward
    /// destructive, open-world or non-idempotent).
    Security,
    /// A call that worked may now fail (a removed tool, a newly required property).
    Breaking,
}

impl Severity {
    /// `info`, `security`, `breaking`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Security => "security",
            Severity::Breaking => "breaking",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Severity {
    type Err = String;
    fn from_str(s: &str) -> Result<Severity, String> {
        match s {
            "info" => Ok(Severity::Info),
            "security" => Ok(Severity::Security),
            "breaking" => Ok(Severity::Breaking),
            _ => Err(format!(
                "`{}` is not a severity: info, security or breaking",
                escape(s)
            )),
        }
    }
}

/// One change between the snapshot and the live catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// How much it matters.
    pub severity: Severity,
    /// The tool it is in.
    pub tool: String,
    /// What changed, in a sentence.
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` {}",
            self.severity,
            escape(&self.tool),
            self.what
        )
    }
}

/// Every change from `old` (a snapshot) to `new` (another, or the live catalog's), most severe
/// first, then by tool.
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let tools = |v: &Value| -> BTreeMap<String, Value> {
        v.get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|t| (name(t).to_owned(), stable(t)))
            .collect()
    };
    let (old, new) = (tools(old), tools(new));
    let mut changes = Vec::new();
    let added: Vec<&String> = new.keys().filter(|n| !old.contains_key(*n)).collect();
    let catalog_of_added = toolcall_score::Catalog::new(
        added
            .iter()
            .map(|n| toolcall_score::Tool::new(n.as_str(), "")),
    );
    for (name, before) in &old {
        let Some(after) = new.get(name) else {
            let suggestions = toolcall_score::suggest(name, &catalog_of_added);
            let hint = if suggestions.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = suggestions
                    .iter()
                    .map(|s| format!("`{}`", escape(s)))
                    .collect();
                format!("; renamed to {}?", names.join(" or "))
            };
            changes.push(change(
                Severity::Breaking,
                name,
                format!("was removed{hint}"),
            ));
            continue;
        };
        tool_changes(name, before, after, &mut changes);
    }
    for name in added {
        // A new tool that says it destroys is what a review must see, not an aside. One that
        // says nothing is destructive only by the spec's defaults: most servers annotate no
        // tool, so calling each new one a security change would fail every replay that names
        // a snapshot whenever such a server grows a tool. It is said, as information.
        let hints = Hints::of(&new[name]);
        let what = match (hints.destructive.value, hints.destructive.from) {
            (true, Source::Written) => Some(Severity::Security),
            (true, _) => None,
            (false, _) => Some(Severity::Info),
        };
        match what {
            Some(Severity::Security) => changes.push(change(
                Severity::Security,
                name,
                format!(
                    "was added, and may be destructive (annotations.destructiveHint: {})",
                    hints.destructive
                ),
            )),
            None => changes.push(change(
                Severity::Info,
                name,
                format!(
                    "was added, with no annotations: destructive by the spec's defaults \
                     (annotations.destructiveHint: {})",
                    hints.destructive
                ),
            )),
            Some(_) => changes.push(change(Severity::Info, name, "was added".into())),
        }
    }
    changes.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.tool.cmp(&b.tool))
    });
    changes
}

fn change(severity: Severity, tool: &str, what: String) -> Change {
    Change {
        severity,
        tool: tool.to_owned(),
        what,
    }
}

/// A value as a change line shows it: compact JSON, `unset` when absent, long ones cut.
fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "unset".to_owned();
    };
    let text = value.to_string();
    const MOST: usize = 80;
    if text.chars().count() <= MOST {
        return escape(&text).to_string();
    }
    let cut: String = text.chars().take(MOST).collect();
    format!("{}…", escape(&cut))
}

fn tool_changes(name: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    let empty = Value::Object(Map::new());
    let mut schemas = Schemas { tool: name, out };
    schemas.compare(
        Side::Input,
        &mut At::root("inputSchema"),
        before.get("inputSchema").unwrap_or(&empty),
        after.get("inputSchema").unwrap_or(&empty),
    );
    match (before.get("outputSchema"), after.get("outputSchema")) {
        (None, None) => {}
        (Some(was), Some(now)) => {
            schemas.compare(Side::Output, &mut At::root("outputSchema"), was, now)
        }
        (was, now) => {
            // No schema promises nothing: dropping it widens what a caller may receive.
            let effect = if was.is_none() {
                Effect::Narrows
            } else {
                Effect::Widens
            };
            let verb = if was.is_none() {
                "now declares"
            } else {
                "no longer declares"
            };
            schemas.push(
                Side::Output,
                effect,
                format!(
                    "{verb} an outputSchema (callers read its structuredContent by it) \
                     (outputSchema: {} -> {})",
                    if was.is_some() { "{…}" } else { "unset" },
                    if now.is_some() { "{…}" } else { "unset" },
                ),
            );
        }
    }
    annotation_changes(name, before, after, out);
    for key in ["description", "title"] {
        if before.get(key) != after.get(key) {
            out.push(change(
                Severity::Info,
                name,
                format!(
                    "changed its {key} (a model reads it) ({key}: {} -> {})",
                    shown(before.get(key)),
                    shown(after.get(key))
                ),
            ));
        }
    }
    // What the protocol adds to a tool beyond these (`execution`, `icons`, what comes next):
    // each change named by its path, breaking only where the protocol says a call now fails.
    let known = [
        "name",
        "description",
        "title",
        "inputSchema",
        "outputSchema",
        "annotations",
    ];
    let keys: std::collections::BTreeSet<&String> = before
        .as_object()
        .into_iter()
        .chain(after.as_object())
        .flat_map(Map::keys)
        .filter(|k| !known.contains(&k.as_str()))
        .collect();
    for key in keys {
        let mut leaves = Vec::new();
        leaf_changes(key, before.get(key), after.get(key), &mut leaves);
        for (path, was, now) in leaves {
            let task =
                |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("forbidden").to_owned();
            let (severity, what) = if path == "execution.taskSupport" {
                match (task(was.as_ref()).as_str(), task(now.as_ref()).as_str()) {
                    (w, "required") if w != "required" => (
                        Severity::Breaking,
                        "now runs only as a task (a plain tools/call fails)",
                    ),
                    ("optional" | "required", "forbidden") => (
                        Severity::Breaking,
                        "no longer runs as a task (a task-augmented call fails)",
                    ),
                    (w, n) if w == n => (
                        Severity::Info,
                        "wrote out how it runs as a task, the same by the default (forbidden)",
                    ),
                    _ => (Severity::Info, "changed how it runs as a task"),
                }
            } else {
                (Severity::Info, "changed a member")
            };
            out.push(change(
                severity,
                name,
                format!(
                    "{what} ({path}: {} -> {})",
                    shown(was.as_ref()),
                    shown(now.as_ref())
                ),
            ));
        }
    }
}

/// Every leaf under `path` that differs between `was` and `now`: objects are walked, anything
/// else is a leaf.
fn leaf_changes(
    path: &str,
    was: Option<&Value>,
    now: Option<&Value>,
    out: &mut Vec<(String, Option<Value>, Option<Value>)>,
) {
    if was == now {
        return;
    }
    // An object is walked against an object or against nothing (a member added or gone).
    let (a, b) = (
        was.and_then(Value::as_object),
        now.and_then(Value::as_object),
    );
    if (a.is_some() || was.is_none()) && (b.is_some() || now.is_none()) {
        let keys: std::collections::BTreeSet<&String> =
            a.into_iter().chain(b).flat_map(Map::keys).collect();
        for key in keys {
            leaf_changes(
                &format!("{path}.{key}"),
                a.and_then(|m| m.get(key)),
                b.and_then(|m| m.get(key)),
                out,
            );
        }
        return;
    }
    out.push((path.to_owned(), was.cloned(), now.cloned()));
}

/// One behaviour hint as the spec's defaults make it: its value, and where that comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Hint {
    value: bool,
    from: Source,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Written in the annotations.
    Written,
    /// Not written: the spec's default.
    Default,
    /// Not meaningful: the tool is read-only, which settles it.
    ReadOnly,
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.from {
            Source::Written => write!(f, "{}", self.value),
            Source::Default => write!(f, "{} (unset)", self.value),
            Source::ReadOnly => write!(f, "{} (read-only)", self.value),
        }
    }
}

/// A tool's four behaviour hints with the MCP spec's defaults applied (`ToolAnnotations`:
/// readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true; the
/// destructive and idempotent hints "meaningful only when readOnlyHint == false": a tool that
/// changes nothing destroys nothing, and calling it again changes nothing more).
struct Hints {
    read_only: Hint,
    destructive: Hint,
    idempotent: Hint,
    open_world: Hint,
}

impl Hints {
    fn of(tool: &Value) -> Hints {
        let written = |key: &str| tool["annotations"][key].as_bool();
        let hint = |key: &str, default: bool| match written(key) {
            Some(value) => Hint {
                value,
                from: Source::Written,
            },
            None => Hint {
                value: default,
                from: Source::Default,
            },
        };
        let read_only = hint("readOnlyHint", false);
        let settled = |value| Hint {
            value,
            from: Source::ReadOnly,
        };
        Hints {
            read_only,
            destructive: if read_only.value {
                settled(false)
            } else {
                hint("destructiveHint", true)
            },
            idempotent: if read_only.value {
                settled(true)
            } else {
                hint("idempotentHint", false)
            },
            open_world: hint("openWorldHint", true),
        }
    }
}

/// The annotations compared by what they mean: a hint whose meaning flipped toward harm is a
/// security change, one that flipped toward safety is info, and one spelled out with the same
/// meaning (unset → its default) is info that says so.
fn annotation_changes(name: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    let (was, now) = (Hints::of(before), Hints::of(after));
    for (key, was, now, worse, harm, safety) in [
        (
            "readOnlyHint",
            was.read_only,
            now.read_only,
            false,
            "is no longer read-only",
            "is now read-only",
        ),
        (
            "destructiveHint",
            was.destructive,
            now.destructive,
            true,
            "may now be destructive",
            "is no longer destructive",
        ),
        (
            "idempotentHint",
            was.idempotent,
            now.idempotent,
            false,
            "is no longer idempotent",
            "is now idempotent",
        ),
        (
            "openWorldHint",
            was.open_world,
            now.open_world,
            true,
            "may now reach an open world",
            "no longer reaches an open world",
        ),
    ] {
        let detail = format!("(annotations.{key}: {was} -> {now})");
        if was.value != now.value {
            let (severity, what) = if now.value == worse {
                (Severity::Security, harm)
            } else {
                (Severity::Info, safety)
            };
            out.push(change(severity, name, format!("{what} {detail}")));
        } else if was != now && was.from != Source::ReadOnly && now.from != Source::ReadOnly {
            out.push(change(
                Severity::Info,
                name,
                format!("wrote out a hint, the same by the spec's defaults {detail}"),
            ));
        }
    }
    let hints = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];
    let others = |tool: &Value| -> Map<String, Value> {
        tool["annotations"]
            .as_object()
            .map(|a| {
                a.iter()
                    .filter(|(k, _)| !hints.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (others(before), others(after));
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if a.get(key) != b.get(key) {
            out.push(change(
                Severity::Info,
                name,
                format!(
                    "changed an annotation (annotations.{key}: {} -> {})",
                    shown(a.get(key)),
                    shown(b.get(key))
                ),
            ));
        }
    }
}

/// Which schema: what a caller may send, or what it may receive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// What a change does to the set of values a schema accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Effect {
    /// Fewer values are valid.
    Narrows,
    /// More values are valid.
    Widens,
    /// Some values left, others came (a pattern replaced, a property gone).
    Changes,
    /// Nothing about validity: a description, a title, a property added as optional.
    Describes,
}

impl Effect {
    /// Input: narrowing refuses a call that worked. Output: widening hands a caller what it was
    /// not written for; narrowing only keeps a promise tighter.
    fn severity(self, side: Side) -> Severity {
        match (self, side) {
            (Effect::Describes, _)
            | (Effect::Widens, Side::Input)
            | (Effect::Narrows, Side::Output) => Severity::Info,
            _ => Severity::Breaking,
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Effect::Narrows => "narrowed",
            Effect::Widens => "widened",
            Effect::Changes | Effect::Describes => "changed",
        }
    }

    fn why(self, side: Side) -> &'static str {
        match (self, side) {
            (Effect::Narrows, Side::Input) => "narrows what a caller may send",
            (Effect::Widens, Side::Input) => "widens what a caller may send",
            (Effect::Narrows, Side::Output) => "narrows what a caller may receive",
            (Effect::Widens, Side::Output) => "widens what a caller may receive",
            (Effect::Changes, Side::Input) => "refuses some of what a caller sent",
            (Effect::Changes, Side::Output) => "a caller may receive what it never did",
            (Effect::Describes, _) => "a model reads it",
        }
    }
}

/// Where in a tool a schema change is: its JSON path (`inputSchema.properties.tz.maximum`) and
/// the innermost property it is in, for the sentence.
struct At {
    parts: Vec<String>,
    properties: Vec<String>,
}

impl At {
    fn root(name: &str) -> At {
        At {
            parts: vec![name.to_owned()],
            properties: Vec::new(),
        }
    }

    fn with<T>(&mut self, part: &str, property: Option<String>, f: impl FnOnce(&mut At) -> T) -> T {
        let simple = !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '-'));
        self.parts.push(if simple {
            format!(".{part}")
        } else {
            format!("[{}]", Value::String(part.to_owned()))
        });
        let pushed = property.is_some();
        if let Some(p) = property {
            self.properties.push(p);
        }
        let out = f(self);
        if pushed {
            self.properties.pop();
        }
        self.parts.pop();
        out
    }

    fn index<T>(&mut self, key: &str, i: usize, f: impl FnOnce(&mut At) -> T) -> T {
        self.parts.push(format!(".{key}[{i}]"));
        let out = f(self);
        self.parts.pop();
        out
    }

    fn shown(&self) -> String {
        self.parts.concat()
    }

    /// `` of `city` `` (nothing at the top of a schema).
    fn of(&self) -> String {
        match self.properties.last() {
            Some(p) => format!(" of `{}`", escape(p)),
            None => String::new(),
        }
    }
}

/// The schema walk of one tool: every change it finds, classified by its side.
struct Schemas<'a> {
    tool: &'a str,
    out: &'a mut Vec<Change>,
}

/// Keywords that only describe: a change of one is info.
/// The JSON Schema keywords (draft-04 to 2020-12) that validate and are not weighed one by one
/// above: a change of one is breaking on either side.
const VALIDATING: [&str; 19] = [
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$dynamicRef",
    "$recursiveRef",
    "contentSchema",
];

/// Lower bounds (raising one narrows) and upper bounds (lowering one narrows).
const LOWER: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Keywords whose appearance narrows, whose removal widens, and whose change is both.
const RESTRICTING: [&str; 5] = ["pattern", "format", "const", "multipleOf", "$ref"];

impl Schemas<'_> {
    fn push(&mut self, side: Side, effect: Effect, what: String) {
        self.out
            .push(change(effect.severity(side), self.tool, what));
    }

    /// One keyword's change: `sentence (path: old -> new; why)`.
    fn keyword(
        &mut self,
        side: Side,
        path: &mut At,
        key: &str,
        effect: Effect,
        was: Option<&Value>,
        now: Option<&Value>,
    ) {
        let of = path.of();
        let words = match key {
            "enum" => "the values it takes (enum)".to_owned(),
            "type" => "the type".to_owned(),
            "additionalProperties" => "the properties it does not list".to_owned(),
            "items" => "the items".to_owned(),
            "required" => "what it requires".to_owned(),
            other => format!("the {other}"),
        };
        let why = effect.why(side);
        let at = path.with(key, None, |p| p.shown());
        let what = format!(
            "{} {words}{of} ({at}: {} -> {}; {why})",
            effect.verb(),
            shown(was),
            shown(now)
        );
        self.push(side, effect, what);
    }

    /// Every change from the (sub)schema `old` to `new` at `path`.
    fn compare(&mut self, side: Side, path: &mut At, old: &Value, new: &Value) {
        if old == new {
            return;
        }
        let (Some(a), Some(b)) = (old.as_object(), new.as_object()) else {
            // `true` / `false` schemas, or something that is no schema: compared whole.
            let effect = match (old, new) {
                (Value::Bool(true), _) | (_, Value::Bool(false)) => Effect::Narrows,
                (Value::Bool(false), _) | (_, Value::Bool(true)) => Effect::Widens,
                _ => Effect::Changes,
            };
            let what = format!(
                "{} the schema{} ({}: {} -> {}; {})",
                effect.verb(),
                path.of(),
                path.shown(),
                shown(Some(old)),
                shown(Some(new)),
                effect.why(side)
            );
            self.push(side, effect, what);
            return;
        };
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for key in keys {
            let (was, now) = (a.get(key), b.get(key));
            if was == now {
                continue;
            }
            match key.as_str() {
                "properties" => self.properties(side, path, a, b),
                "required" => self.required(side, path, was, now),
                "type" => {
                    let effect = type_effect(was, now);
                    self.keyword(side, path, key, effect, was, now);
                }
                "enum" => {
                    let effect = set_effect(was, now);
                    self.keyword(side, path, key, effect, was, now);
                }
                k if LOWER.contains(&k) || UPPER.contains(&k) => {
                    let number = |v: Option<&Value>| v.and_then(Value::as_f64);
                    let effect = match (number(was), number(now)) {
                        (None, Some(_)) => Effect::Narrows,
                        (Some(_), None) => Effect::Widens,
                        // `10` -> `10.0`: the same bound.
                        (Some(w), Some(n)) if w == n => continue,
                        (Some(w), Some(n)) if (n > w) == LOWER.contains(&k) => Effect::Narrows,
                        (Some(_), Some(_)) => Effect::Widens,
                        (None, None) => Effect::Changes,
                    };
                    self.keyword(side, path, key, effect, was, now);
                }
                k if RESTRICTING.contains(&k) => {
                    let effect = match (was, now) {
                        (None, Some(_)) => Effect::Narrows,
                        (Some(_), None) => Effect::Widens,
                        _ => Effect::Changes,
                    };
                    self.keyword(side, path, key, effect, was, now);
                }
                "uniqueItems" => {
                    let on = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
                    let effect = if on(now) {
                        Effect::Narrows
                    } else {
                        Effect::Widens
                    };
                    self.keyword(side, path, key, effect, was, now);
                }
                "additionalProperties" | "items" => match (was, now) {
                    (Some(w @ Value::Object(_)), Some(n @ Value::Object(_))) => {
                        let label = path.properties.last().map(|p| format!("{p}[]"));
                        path.with(key, label, |p| self.compare(side, p, w, n));
                    }
                    _ => {
                        // Unset and `true` accept anything; `false` nothing; a schema between.
                        let rank = |v: Option<&Value>| match v {
                            None | Some(Value::Bool(true)) => 2,
                            Some(Value::Bool(false)) => 0,
                            Some(_) => 1,
                        };
                        let effect = match rank(now).cmp(&rank(was)) {
                            std::cmp::Ordering::Less => Effect::Narrows,
                            std::cmp::Ordering::Greater => Effect::Widens,
                            std::cmp::Ordering::Equal => Effect::Changes,
                        };
                        self.keyword(side, path, key, effect, was, now);
                    }
                },
                "anyOf" | "oneOf" | "allOf" => self.alternatives(side, path, key, was, now),
                "$defs" | "definitions" => {
                    let empty = Map::new();
                    let (w, n) = (
                        was.and_then(Value::as_object).unwrap_or(&empty),
                        now.and_then(Value::as_object).unwrap_or(&empty),
                    );
                    let names: std::collections::BTreeSet<&String> =
                        w.keys().chain(n.keys()).collect();
                    for def in names {
                        path.with(key, None, |p| match (w.get(def), n.get(def)) {
                            (Some(x), Some(y)) => {
                                p.with(def, None, |p| self.compare(side, p, x, y))
                            }
                            (x, y) => {
                                // A definition nothing refers to any more, or one not yet
                                // used: a `$ref` change, if any, is what matters (a `$ref`
                                // to one removed is its own change).
                                let effect = Effect::Describes;
                                p.with(def, None, |p| {
                                    let what = format!(
                                        "{} a definition ({}: {} -> {}; {})",
                                        if x.is_none() { "added" } else { "removed" },
                                        p.shown(),
                                        shown(x),
                                        shown(y),
                                        effect.why(side)
                                    );
                                    self.push(side, effect, what);
                                })
                            }
                        });
                    }
                }
                // Validation keywords not weighed one by one (`not`, `if`, `patternProperties`…):
                // a change may refuse anything. Every other keyword (`description`, `title`,
                // `default`, `$schema`, `x-` extensions, `discriminator`, `propertyOrder`…) a
                // validator does not refuse by, so its change refuses nothing.
                k => {
                    let effect = if VALIDATING.contains(&k) {
                        Effect::Changes
                    } else {
                        Effect::Describes
                    };
                    self.keyword(side, path, key, effect, was, now);
                }
            }
        }
    }

    fn properties(
        &mut self,
        side: Side,
        path: &mut At,
        a: &Map<String, Value>,
        b: &Map<String, Value>,
    ) {
        let empty = Map::new();
        let props = |s: &Map<String, Value>| -> Map<String, Value> {
            s.get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty)
                .clone()
        };
        let (old, new) = (props(a), props(b));
        let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        path.with("properties", None, |path| {
            for property in names {
                path.with(property, Some(property.clone()), |p| {
                    match (old.get(property), new.get(property)) {
                        (Some(w), Some(n)) => self.compare(side, p, w, n),
                        (Some(w), None) => {
                            // Input: the server no longer reads it (or refuses it). Output: a
                            // caller reading it finds nothing promised.
                            let what = match side {
                                Side::Input => "no longer has the property",
                                Side::Output => "no longer returns the property",
                            };
                            let text = format!(
                                "{what} `{}` ({}: {} -> unset; {})",
                                escape(property),
                                p.shown(),
                                shown(Some(w)),
                                Effect::Changes.why(side)
                            );
                            self.push(side, Effect::Changes, text);
                        }
                        (None, Some(n)) => {
                            let what = match side {
                                Side::Input => "now accepts the property",
                                Side::Output => "may now return the property",
                            };
                            let text = format!(
                                "{what} `{}` ({}: unset -> {})",
                                escape(property),
                                p.shown(),
                                shown(Some(n))
                            );
                            self.push(side, Effect::Describes, text);
                        }
                        (None, None) => {}
                    }
                })
            }
        });
    }

    fn required(&mut self, side: Side, path: &mut At, was: Option<&Value>, now: Option<&Value>) {
        let names = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let (old, new) = (names(was), names(now));
        let of = path.of();
        let at = path.with("required", None, |p| p.shown());
        for property in new.iter().filter(|p| !old.contains(p)) {
            let what = match side {
                Side::Input => "now requires",
                Side::Output => "now always returns",
            };
            let text = format!(
                "{what} `{}`{of} ({at}: {} -> {}; {})",
                escape(property),
                shown(was),
                shown(now),
                Effect::Narrows.why(side)
            );
            self.push(side, Effect::Narrows, text);
        }
        for property in old.iter().filter(|p| !new.contains(p)) {
            let what = match side {
                Side::Input => "no longer requires",
                Side::Output => "may now leave out",
            };
            let text = format!(
                "{what} `{}`{of} ({at}: {} -> {}; {})",
                escape(property),
                shown(was),
                shown(now),
                Effect::Widens.why(side)
            );
            self.push(side, Effect::Widens, text);
        }
    }

    /// `anyOf` / `oneOf` (more alternatives: wider) and `allOf` (more conditions: narrower);
    /// lists of the same length compared one by one.
    fn alternatives(
        &mut self,
        side: Side,
        path: &mut At,
        key: &str,
        was: Option<&Value>,
        now: Option<&Value>,
    ) {
        let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
        let (old, new) = (list(was), list(now));
        if was.is_some() && now.is_some() && old.len() == new.len() {
            // Branches are a set: one found on both sides is unchanged wherever it stands, and
            // the rest are compared in order (`Union[str, int]` -> `Union[int, str]` is no
            // change; `[str, int]` -> `[str, float]` is `int` -> `float`).
            let gone: Vec<(usize, &Value)> = old
                .iter()
                .enumerate()
                .filter(|(_, o)| !new.contains(o))
                .collect();
            let came: Vec<&Value> = new.iter().filter(|n| !old.contains(n)).collect();
            if gone.len() == came.len() {
                for ((i, w), n) in gone.into_iter().zip(came) {
                    path.index(key, i, |p| self.compare(side, p, w, n));
                }
                return;
            }
        }
        let kept = old.iter().all(|o| new.contains(o));
        let nothing_new = new.iter().all(|n| old.contains(n));
        let (more, fewer) = (kept && !nothing_new, nothing_new && !kept);
        let union = key != "allOf";
        let effect = match (more, fewer) {
            _ if was.is_none() || now.is_none() => Effect::Changes,
            (true, false) if union => Effect::Widens,
            (true, false) => Effect::Narrows,
            (false, true) if union => Effect::Narrows,
            (false, true) => Effect::Widens,
            _ => Effect::Changes,
        };
        self.keyword(side, path, key, effect, was, now);
    }
}

/// The effect of a `type` change: types as sets (unset: any), `integer` inside `number`.
fn type_effect(was: Option<&Value>, now: Option<&Value>) -> Effect {
    let types = |v: Option<&Value>| -> Option<Vec<String>> {
        match v? {
            Value::String(t) => Some(vec![t.clone()]),
            Value::Array(ts) => Some(
                ts.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            ),
            _ => None,
        }
    };
    let covered = |t: &String, by: &[String]| {
        by.contains(t) || (t == "integer" && by.iter().any(|b| b == "number"))
    };
    match (types(was), types(now)) {
        (None, None) => Effect::Changes,
        (None, Some(_)) => Effect::Narrows,
        (Some(_), None) => Effect::Widens,
        (Some(w), Some(n)) => {
            let kept = w.iter().all(|t| covered(t, &n));
            let within = n.iter().all(|t| covered(t, &w));
            match (kept, within) {
                (true, true) => Effect::Describes,
                (true, false) => Effect::Widens,
                (false, true) => Effect::Narrows,
                (false, false) => Effect::Changes,
            }
        }
    }
}

/// The effect of an `enum` change: the values as a set (unset: any value).
fn set_effect(was: Option<&Value>, now: Option<&Value>) -> Effect {
    match (was.and_then(Value::as_array), now.and_then(Value::as_array)) {
        (None, None) => Effect::Changes,
        (None, Some(_)) => Effect::Narrows,
        (Some(_), None) => Effect::Widens,
        (Some(w), Some(n)) => {
            let kept = w.iter().all(|v| n.contains(v));
            let within = n.iter().all(|v| w.contains(v));
            match (kept, within) {
                (true, true) => Effect::Describes,
                (true, false) => Effect::Widens,
                (false, true) => Effect::Narrows,
                (false, false) => Effect::Changes,
            }
        }
    }
}

/// Which of a catalog's tools the flows call: a tool no flow calls is one whose drift only a
/// catalog diff would catch, and whose behaviour nothing checks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Each tool of the catalog some flow calls, with the flows that call it (in the order
    /// given, each once).
    pub called: BTreeMap<String, Vec<String>>,
    /// The catalog's tools no flow calls, by name.
    pub uncalled: Vec<String>,
    /// Names the flows call that the catalog lacks (a typo, a tool removed, a flow's
    /// `expect_error` of an unknown name), with the flows that call them.
    pub unknown: BTreeMap<String, Vec<String>>,
}

impl Coverage {
    /// The share of the catalog's tools called, in percent (100 for an empty catalog).
    pub fn percent(&self) -> f64 {
        let all = self.called.len() + self.uncalled.len();
        if all == 0 {
            100.0
        } else {
            100.0 * self.called.len() as f64 / all as f64
        }
    }
}

/// The coverage of `snapshot`'s tools by `flows`: each flow's name (as shown) with the tool
/// names it calls.
pub fn coverage<'a>(
    snapshot: &Value,
    flows: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
) -> Coverage {
    let tools: std::collections::BTreeSet<&str> = snapshot
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(name)
        .collect();
    let mut out = Coverage::default();
    for (flow, names) in flows {
        for called in names {
            let into = if tools.contains(called) {
                &mut out.called
            } else {
                &mut out.unknown
            };
            let by = into.entry(called.to_owned()).or_default();
            if !by.iter().any(|f| f == flow) {
                by.push(flow.to_owned());
            }
        }
    }
    out.uncalled = tools
        .into_iter()
        .filter(|t| !out.called.contains_key(*t))
        .map(str::to_owned)
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Value {
        json!({"name": name, "description": "d", "inputSchema": schema})
    }

    #[test]
    fn a_snapshot_is_sorted_and_leaves_out_what_changes_by_itself() {
        let tools = [
            json!({"name": "b", "_meta": {"x": 1}, "inputSchema": {"type": "object"},
                   "icons": [{"src": "b.png", "mimeType": "image/png", "data": "AAAA"}]}),
            json!({"name": "a", "ttlMs": 500, "inputSchema": {"type": "object"}}),
        ];
        let snap = snapshot(&tools);
        assert_eq!(snap["tools"][0]["name"], "a");
        // Only protocol members are volatile: a parameter may be called `sessionId` or
        // `_meta`, or `icons`, `default` and `required`, and data is kept as it is.
        let params = snapshot(&[tool(
            "p",
            json!({"type": "object",
                   "properties": {"sessionId": {"type": "string", "default": {"ttlMs": 1}},
                                  "_meta": {"type": "object"},
                                  "icons": {"type": "array"},
                                  "required": {"enum": ["b", "a"]}},
                   "required": ["sessionId", "_meta"],
                   "$defs": {"cacheScope": {"type": "string"}}}),
        )]);
        let schema = &params["tools"][0]["inputSchema"];
        assert_eq!(
            schema,
            &json!({"type": "object",
                    "properties": {"sessionId": {"type": "string", "default": {"ttlMs": 1}},
                                   "_meta": {"type": "object"},
                                   "icons": {"type": "array"},
                                   "required": {"enum": ["a", "b"]}},
                    "required": ["_meta", "sessionId"],
                    "$defs": {"cacheScope": {"type": "string"}}}),
            "{schema:#}"
        );
        assert!(snap["tools"][0].get("ttlMs").is_none());
        assert!(snap["tools"][1].get("_meta").is_none());
        assert_eq!(
            snap["tools"][1]["icons"][0],
            json!({"src": "b.png", "mimeType": "image/png"})
        );
        assert!(diff(&snap, &snapshot(&tools)).is_empty());
    }

    #[test]
    fn a_snapshot_names_its_flow_relative_to_itself() {
        let snap = naming_flow(
            json!({"tools": []}),
            Path::new("flows/x.json"),
            Path::new("catalog/x.json"),
        );
        assert_eq!(snap["flow"], "../flows/x.json");
        assert_eq!(
            flow_of(&snap, Path::new("catalog/x.json")),
            Some(PathBuf::from("catalog/../flows/x.json"))
        );
        assert!(
            diff(&snap, &json!({"tools": []})).is_empty(),
            "the flow is not a change"
        );
    }

    #[test]
    fn every_kind_of_change_is_classified() {
        let old = snapshot(&[
            tool(
                "convert_time",
                json!({"type": "object",
                "properties": {"tz": {"type": "string"}, "when": {"type": ["string", "integer"]},
                               "unit": {"enum": ["s", "ms"]}, "note": {"type": "string"}},
                "required": ["tz"]}),
            ),
            json!({"name": "delete_file", "description": "Deletes.", "inputSchema": {"type": "object"},
                   "annotations": {"destructiveHint": false, "idempotentHint": true}}),
        ]);
        let new = snapshot(&[
            tool("convert_timezone", json!({"type": "object"})),
            json!({"name": "delete_file", "description": "Deletes a file.", "inputSchema": {"type": "object",
                       "properties": {"path": {"type": "string"}}, "required": ["path"]},
                   "annotations": {"destructiveHint": true, "idempotentHint": false}}),
        ]);
        let changes: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
        assert_eq!(
            changes,
            [
                "breaking: `convert_time` was removed; renamed to `convert_timezone`?",
                "breaking: `delete_file` now requires `path` (inputSchema.required: unset -> [\"path\"]; \
                 narrows what a caller may send)",
                "security: `delete_file` may now be destructive (annotations.destructiveHint: false -> true)",
                "security: `delete_file` is no longer idempotent (annotations.idempotentHint: true -> false)",
                "info: `convert_timezone` was added, with no annotations: destructive by the spec's \
                 defaults (annotations.destructiveHint: true (unset))",
                "info: `delete_file` now accepts the property `path` (inputSchema.properties.path: unset -> \
                 {\"type\":\"string\"})",
                "info: `delete_file` changed its description (a model reads it) \
                 (description: \"Deletes.\" -> \"Deletes a file.\")",
            ]
        );
        // Narrowed types, removed enum values and properties, inside nested objects too.
        let old = snapshot(&[tool(
            "t",
            json!({"type": "object", "properties": {
            "when": {"type": ["string", "integer"]}, "unit": {"enum": ["s", "ms"]},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
        )]);
        let new = snapshot(&[tool(
            "t",
            json!({"type": "object", "additionalProperties": false, "properties": {
            "when": {"type": "string"}, "unit": {"enum": ["s"]},
            "address": {"type": "object", "properties": {}, "required": ["zip"]}}}),
        )]);
        let changes: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
        for want in [
            "breaking: `t` narrowed the type of `when` (inputSchema.properties.when.type: \
             [\"integer\",\"string\"] -> \"string\"; narrows what a caller may send)",
            "breaking: `t` narrowed the values it takes (enum) of `unit` \
             (inputSchema.properties.unit.enum: [\"ms\",\"s\"] -> [\"s\"]; narrows what a caller may send)",
            "breaking: `t` no longer has the property `city` (inputSchema.properties.address.properties.city: \
             {\"type\":\"string\"} -> unset; refuses some of what a caller sent)",
            "breaking: `t` now requires `zip` of `address` (inputSchema.properties.address.required: \
             unset -> [\"zip\"]; narrows what a caller may send)",
            "breaking: `t` narrowed the properties it does not list (inputSchema.additionalProperties: \
             unset -> false; narrows what a caller may send)",
        ] {
            assert!(
                changes.iter().any(|c| c == want),
                "missing {want:?} in {changes:#?}"
            );
        }
    }

    fn lines(old: &[Value], new: &[Value]) -> Vec<String> {
        diff(&snapshot(old), &snapshot(new))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn annotated(name: &str, annotations: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object"}, "annotations": annotations})
    }

    /// Annotations mean what the spec's defaults make them: dropping `readOnlyHint: true` makes
    /// a tool destructive, non-idempotent (and, here, open-world); spelling out a default is no
    /// change of meaning; a new tool that may destroy is a security change.
    #[test]
    fn annotations_are_compared_with_the_spec_defaults() {
        let read_only = annotated("t", json!({"readOnlyHint": true, "openWorldHint": false}));
        let bare = json!({"name": "t", "inputSchema": {"type": "object"}});
        assert_eq!(
            lines(std::slice::from_ref(&read_only), std::slice::from_ref(&bare)),
            [
                "security: `t` is no longer read-only (annotations.readOnlyHint: true -> false (unset))",
                "security: `t` may now be destructive (annotations.destructiveHint: false (read-only) -> true (unset))",
                "security: `t` is no longer idempotent (annotations.idempotentHint: true (read-only) -> false (unset))",
                "security: `t` may now reach an open world (annotations.openWorldHint: false -> true (unset))",
            ]
        );
        // The other way is safer: info.
        let back = lines(std::slice::from_ref(&bare), &[read_only]);
        assert!(
            back.iter().all(|l| l.starts_with("info: ")) && back.len() == 4,
            "{back:#?}"
        );
        // unset -> its default: the same meaning, said once as info.
        let spelled = annotated("t", json!({"destructiveHint": true}));
        assert_eq!(
            lines(std::slice::from_ref(&bare), &[spelled]),
            [
                "info: `t` wrote out a hint, the same by the spec's defaults \
              (annotations.destructiveHint: true (unset) -> true)"
            ]
        );
        // A destructive hint under readOnlyHint: true means nothing either way.
        let noise = annotated("t", json!({"readOnlyHint": true, "destructiveHint": true}));
        let quiet = annotated("t", json!({"readOnlyHint": true}));
        assert!(lines(&[quiet], &[noise]).is_empty());
        // New tools: one that writes destructiveHint: true is a security change; unannotated
        // (destructive only by the spec's defaults, as most servers' tools are) is said as
        // information, so that a server growing a tool fails no replay; read-only is not news.
        let added = lines(
            &[],
            &[
                bare,
                annotated("u", json!({"readOnlyHint": true})),
                annotated("v", json!({"destructiveHint": true})),
            ],
        );
        assert_eq!(
            added,
            [
                "security: `v` was added, and may be destructive (annotations.destructiveHint: true)",
                "info: `t` was added, with no annotations: destructive by the spec's defaults \
                 (annotations.destructiveHint: true (unset))",
                "info: `u` was added",
            ]
        );
    }

    fn with_input(properties: Value) -> Value {
        tool("t", json!({"type": "object", "properties": properties}))
    }

    /// An input constraint that refuses a call that worked is breaking, one that accepts more
    /// is info; each change names its JSON path and its old and new value.
    #[test]
    fn input_constraints_are_classified_by_what_a_caller_may_send() {
        let old = with_input(json!({
            "count": {"type": "integer", "minimum": 1, "description": "How many."},
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "size": {"type": "integer", "maximum": 10},
        }));
        let new = with_input(json!({
            "count": {"type": "integer", "minimum": 2, "description": "How many to make."},
            "name": {"type": "string", "maxLength": 8, "pattern": "^[a-z]+$", "enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "size": {"type": "integer", "maximum": 20},
        }));
        let got = lines(&[old], &[new]);
        for want in [
            "breaking: `t` narrowed the minimum of `count` (inputSchema.properties.count.minimum: 1 -> 2; \
             narrows what a caller may send)",
            "breaking: `t` narrowed the maxLength of `name` (inputSchema.properties.name.maxLength: unset -> 8; \
             narrows what a caller may send)",
            "breaking: `t` narrowed the pattern of `name` (inputSchema.properties.name.pattern: unset -> \
             \"^[a-z]+$\"; narrows what a caller may send)",
            "breaking: `t` narrowed the values it takes (enum) of `name` (inputSchema.properties.name.enum: \
             unset -> [\"a\",\"b\"]; narrows what a caller may send)",
            "breaking: `t` changed the type of `tags[]` (inputSchema.properties.tags.items.type: \"string\" -> \
             \"integer\"; refuses some of what a caller sent)",
            "info: `t` changed the description of `count` (inputSchema.properties.count.description: \
             \"How many.\" -> \"How many to make.\"; a model reads it)",
            "info: `t` widened the maximum of `size` (inputSchema.properties.size.maximum: 10 -> 20; \
             widens what a caller may send)",
        ] {
            assert!(got.iter().any(|c| c == want), "missing {want:?} in {got:#?}");
        }
        assert_eq!(got.len(), 7, "{got:#?}");
    }

    /// What a validator reads the same way is no drift, and what it ignores refuses nothing:
    /// alternatives reordered, a bound written `10.0` for `10`, an unused definition removed, a
    /// keyword no validator reads changed. Each was breaking; a real validating keyword still is.
    #[test]
    fn what_refuses_nothing_new_is_not_breaking() {
        let old = tool(
            "t",
            json!({"type": "object", "$defs": {"unused": {"type": "string"}},
                   "properties": {
                       "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                       "size": {"type": "number", "maximum": 10},
                       "mode": {"type": "string", "enumDescriptions": ["a"], "propertyOrder": 1},
                       "kind": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                       "code": {"type": "string", "not": {"const": "x"}}}}),
        );
        let new = tool(
            "t",
            json!({"type": "object",
                   "properties": {
                       "id": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                       "size": {"type": "number", "maximum": 10.0},
                       "mode": {"type": "string", "enumDescriptions": ["b"], "propertyOrder": 2},
                       "kind": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
                       "code": {"type": "string", "not": {"const": "y"}}}}),
        );
        let got = lines(&[old], &[new]);
        let breaking: Vec<&String> = got.iter().filter(|c| c.starts_with("breaking")).collect();
        assert_eq!(breaking.len(), 2, "{got:#?}");
        // The one branch that changed, compared with the one it replaced; and `not`.
        assert!(
            breaking[0].contains("inputSchema.properties.code.not"),
            "{got:#?}"
        );
        assert!(
            breaking[1]
                .contains("inputSchema.properties.kind.anyOf[1].type: \"integer\" -> \"boolean\""),
            "{got:#?}"
        );
        assert!(
            !got.iter().any(|c| c.contains(".id") || c.contains(".size")),
            "{got:#?}"
        );
        for info in ["$defs", "enumDescriptions", "propertyOrder"] {
            assert!(
                got.iter()
                    .any(|c| c.starts_with("info") && c.contains(info)),
                "no info line for {info} in {got:#?}"
            );
        }
    }

    /// The output schema the other way round: what a caller may now receive and was not written
    /// for is breaking; a promise made tighter (or a new optional member) is info.
    #[test]
    fn output_changes_are_classified_by_what_a_caller_may_receive() {
        let with_output = |schema: Value| json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema});
        let old = with_output(json!({"type": "object", "required": ["id", "when"],
            "properties": {"id": {"type": "integer"}, "when": {"type": "string"}}}));
        let added = with_output(json!({"type": "object", "required": ["id", "when"],
            "properties": {"id": {"type": "integer"}, "when": {"type": "string"},
                           "note": {"type": "string"}}}));
        assert_eq!(
            lines(std::slice::from_ref(&old), &[added]),
            ["info: `t` may now return the property `note` (outputSchema.properties.note: unset -> \
              {\"type\":\"string\"})"]
        );
        let looser = with_output(json!({"type": "object", "required": ["id"],
            "properties": {"id": {"type": ["integer", "null"]}, "when": {"type": "string", "maxLength": 30}}}));
        assert_eq!(
            lines(std::slice::from_ref(&old), &[looser]),
            [
                "breaking: `t` widened the type of `id` (outputSchema.properties.id.type: \"integer\" -> \
                 [\"integer\",\"null\"]; widens what a caller may receive)",
                "breaking: `t` may now leave out `when` (outputSchema.required: [\"id\",\"when\"] -> [\"id\"]; \
                 widens what a caller may receive)",
                "info: `t` narrowed the maxLength of `when` (outputSchema.properties.when.maxLength: unset -> 30; \
                 narrows what a caller may receive)",
            ]
        );
        let none = json!({"name": "t", "inputSchema": {"type": "object"}});
        assert_eq!(
            lines(&[old], &[none]),
            ["breaking: `t` no longer declares an outputSchema (callers read its structuredContent by it) \
              (outputSchema: {…} -> unset)"]
        );
    }

    /// A member the client library does not model is kept and compared: a tool that now runs
    /// only as a task fails every plain call.
    #[test]
    fn members_beyond_the_model_are_compared() {
        let task = |support: &str| {
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": support}})
        };
        let snap = snapshot(&[task("optional")]);
        assert_eq!(snap["tools"][0]["execution"]["taskSupport"], "optional");
        assert_eq!(
            lines(&[task("optional")], &[task("required")]),
            [
                "breaking: `t` now runs only as a task (a plain tools/call fails) \
              (execution.taskSupport: \"optional\" -> \"required\")"
            ]
        );
        let plain = json!({"name": "t", "inputSchema": {"type": "object"}});
        assert_eq!(
            lines(&[task("forbidden")], &[plain]),
            [
                "info: `t` wrote out how it runs as a task, the same by the default (forbidden) \
              (execution.taskSupport: \"forbidden\" -> unset)"
            ]
        );
        assert_eq!(
            lines(&[task("forbidden")], &[task("optional")]),
            ["info: `t` changed how it runs as a task (execution.taskSupport: \"forbidden\" -> \"optional\")"]
        );
    }

    /// The order a server lists in where the protocol gives it no meaning does not reach the
    /// snapshot: tools, keys, `required`, `type` lists and `enum` values; data keeps its order.
    #[test]
    fn a_snapshot_is_canonical_where_order_means_nothing() {
        let one = [
            tool(
                "b",
                json!({"type": "object", "required": ["x", "y"], "properties": {
                "x": {"type": ["string", "null"], "enum": ["p", "q", null]},
                "y": {"type": "array", "default": ["second", "first"]}}}),
            ),
            tool("a", json!({"type": "object"})),
        ];
        let two = [
            tool("a", json!({"type": "object"})),
            tool(
                "b",
                json!({"properties": {
                "y": {"default": ["second", "first"], "type": "array"},
                "x": {"enum": [null, "q", "p"], "type": ["null", "string"]}},
                "required": ["y", "x"], "type": "object"}),
            ),
        ];
        let (one, two) = (snapshot(&one), snapshot(&two));
        assert_eq!(
            toolcall_score::to_json_pretty(&one).unwrap(),
            toolcall_score::to_json_pretty(&two).unwrap()
        );
        let b = &one["tools"][1]["inputSchema"];
        assert_eq!(b["required"], json!(["x", "y"]));
        assert_eq!(b["properties"]["x"]["enum"], json!(["p", "q", null]));
        assert_eq!(b["properties"]["x"]["type"], json!(["null", "string"]));
        assert_eq!(b["properties"]["y"]["default"], json!(["second", "first"]));
    }

    /// Coverage names the tools no flow calls and the names no catalog has.
    #[test]
    fn coverage_names_the_tools_no_flow_calls() {
        let snap = snapshot(&[
            tool("read", json!({})),
            tool("write", json!({})),
            tool("delete", json!({})),
        ]);
        let got = coverage(
            &snap,
            [
                ("a.json", vec!["read", "read", "wirte"]),
                ("b.json", vec!["read", "write"]),
            ],
        );
        assert_eq!(got.uncalled, ["delete"]);
        assert_eq!(got.called["read"], ["a.json", "b.json"]);
        assert_eq!(got.called["write"], ["b.json"]);
        assert_eq!(got.unknown["wirte"], ["a.json"]);
        assert!((got.percent() - 200.0 / 3.0).abs() < 1e-9);
    }
}
