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

/// The snapshot of `tools`: sorted by name, volatile members left out (at any depth), icons kept
/// without their data, keys sorted: a file that reads well in a diff and changes only when the
/// catalog does.
pub fn snapshot(tools: &[Value]) -> Value {
    let mut tools: Vec<Value> = tools.iter().map(stable).collect();
    tools.sort_by(|a, b| name(a).cmp(name(b)));
    serde_json::json!({ "tools": tools })
}

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

fn stable(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map {
                if VOLATILE.contains(&key.as_str()) {
                    continue;
                }
                if key == "icons" {
                    // An icon's data is bytes a review cannot read; its source and type stay.
                    let icons = v
                        .as_array()
                        .map(|icons| {
                            icons
                                .iter()
                                .map(|icon| {
                                    let mut icon = stable(icon);
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
                out.insert(key.clone(), stable(v));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(stable).collect()),
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
        changes.push(change(Severity::Info, name, "was added".into()));
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

fn tool_changes(name: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    let (old_in, new_in) = (&before["inputSchema"], &after["inputSchema"]);
    schema_changes(name, "", old_in, new_in, out);
    if before.get("outputSchema") != after.get("outputSchema") {
        out.push(change(
            Severity::Breaking,
            name,
            "changed its outputSchema (callers read its structuredContent by it)".into(),
        ));
    }
    // Annotations that, flipped this way, let a tool do more than its callers were written for.
    let hint = |tool: &Value, key: &str| tool["annotations"][key].as_bool();
    for (key, worse, what) in [
        ("destructiveHint", true, "may now be destructive"),
        ("openWorldHint", true, "may now reach an open world"),
        ("idempotentHint", false, "is no longer idempotent"),
        ("readOnlyHint", false, "is no longer read-only"),
    ] {
        let (was, now) = (hint(before, key), hint(after, key));
        if now == Some(worse) && was != Some(worse) {
            out.push(change(
                Severity::Security,
                name,
                format!("{what} (annotations.{key}: {} -> {worse})", shown(was)),
            ));
        }
    }
    for key in ["description", "title"] {
        if before.get(key) != after.get(key) {
            out.push(change(
                Severity::Info,
                name,
                format!("changed its {key} (a model reads it)"),
            ));
        }
    }
}

fn shown(hint: Option<bool>) -> String {
    hint.map_or("unset".to_owned(), |b| b.to_string())
}

/// The changes of one (sub)schema, `at` its path in words (`` of `address` ``).
fn schema_changes(name: &str, at: &str, old: &Value, new: &Value, out: &mut Vec<Change>) {
    let required = |s: &Value| -> Vec<String> {
        s.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old_required, new_required) = (required(old), required(new));
    for property in new_required.iter().filter(|p| !old_required.contains(p)) {
        out.push(change(
            Severity::Breaking,
            name,
            format!("now requires `{}`{at}", escape(property)),
        ));
    }
    let properties = |s: &Value| s.get("properties").and_then(Value::as_object).cloned();
    let (old_props, new_props) = (
        properties(old).unwrap_or_default(),
        properties(new).unwrap_or_default(),
    );
    for (property, before) in &old_props {
        let Some(after) = new_props.get(property) else {
            out.push(change(
                Severity::Breaking,
                name,
                format!("no longer has the property `{}`{at}", escape(property)),
            ));
            continue;
        };
        let here = format!(" of `{}`{at}", escape(property));
        let types = |s: &Value| -> Option<Vec<String>> {
            match s.get("type")? {
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
        if let (Some(was), Some(now)) = (types(before), types(after)) {
            let lost: Vec<&String> = was.iter().filter(|t| !now.contains(t)).collect();
            // `integer` inside `number` is a narrowing too; any type lost is one.
            if !lost.is_empty() {
                out.push(change(
                    Severity::Breaking,
                    name,
                    format!(
                        "narrowed the type{here}: {} -> {}",
                        was.join(" | "),
                        now.join(" | ")
                    ),
                ));
            }
        } else if types(before).is_none() && types(after).is_some() {
            out.push(change(
                Severity::Breaking,
                name,
                format!(
                    "narrowed the type{here}: any -> {}",
                    types(after).unwrap_or_default().join(" | ")
                ),
            ));
        }
        let values = |s: &Value| s.get("enum").and_then(Value::as_array).cloned();
        if let (Some(was), Some(now)) = (values(before), values(after)) {
            for value in was.iter().filter(|v| !now.contains(v)) {
                out.push(change(
                    Severity::Breaking,
                    name,
                    format!("no longer accepts {} for the property{here}", value),
                ));
            }
        }
        if before.get("properties").is_some() || after.get("properties").is_some() {
            schema_changes(name, &here, before, after, out);
        }
    }
    if old.get("additionalProperties") != Some(&Value::Bool(false))
        && new.get("additionalProperties") == Some(&Value::Bool(false))
    {
        out.push(change(
            Severity::Breaking,
            name,
            format!("now refuses properties it does not list{at}"),
        ));
    }
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
                "breaking: `delete_file` now requires `path`",
                "security: `delete_file` may now be destructive (annotations.destructiveHint: false -> true)",
                "security: `delete_file` is no longer idempotent (annotations.idempotentHint: true -> false)",
                "info: `convert_timezone` was added",
                "info: `delete_file` changed its description (a model reads it)",
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
            "breaking: `t` narrowed the type of `when`: string | integer -> string",
            "breaking: `t` no longer accepts \"ms\" for the property of `unit`",
            "breaking: `t` no longer has the property `city` of `address`",
            "breaking: `t` now requires `zip` of `address`",
            "breaking: `t` now refuses properties it does not list",
        ] {
            assert!(
                changes.iter().any(|c| c == want),
                "missing {want:?} in {changes:#?}"
            );
        }
    }
}
