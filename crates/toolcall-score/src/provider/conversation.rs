//! What a format's `Conversation` (how `toolcall import` writes its logged turns) is written
//! with: where a single-message turn ends, and a tools array's bare definitions in the
//! format's own wrapper. Below `logged.rs`, which reads a conversation through each format's
//! `Wire`.

use serde_json::{Map, Value};

/// For formats whose turns are single messages: the turn at `i` when item `i` has one of
/// `roles`.
pub(crate) fn message_turn(items: &[Value], i: usize, roles: &[&str]) -> Option<usize> {
    let role = items.get(i)?.get("role")?.as_str()?;
    roles.contains(&role).then_some(i + 1)
}

/// The keys a bare function definition may keep its schema under, in every family's spelling.
const SCHEMA_KEYS: [&str; 5] = [
    "parameters",
    "input_schema",
    "inputSchema",
    "parametersJsonSchema",
    "parameters_json_schema",
];

/// A bare function definition: `{name, description?, <schema>?}` with no `type` and none of the
/// keys that make it a provider's own item (Gemini's `functionDeclarations`, Bedrock's
/// `toolSpec`, Chat's `function`).
pub(crate) fn bare(item: &Value) -> Option<&Map<String, Value>> {
    let tool = item.as_object()?;
    let own = [
        "type",
        "function",
        "functionDeclarations",
        "function_declarations",
        "toolSpec",
    ];
    (tool.get("name").is_some_and(Value::is_string) && !own.iter().any(|k| tool.contains_key(*k)))
        .then_some(tool)
}

/// The schema of a bare definition, under whichever key it was written.
pub(crate) fn bare_schema(tool: &Map<String, Value>) -> Option<&Value> {
    SCHEMA_KEYS.iter().find_map(|key| tool.get(*key))
}

/// A bare definition with its schema moved under `key` (other members, `strict` say, kept).
pub(crate) fn with_schema(tool: &Map<String, Value>, key: &str) -> Map<String, Value> {
    let schema = bare_schema(tool).cloned();
    let mut tool = tool.clone();
    for other in SCHEMA_KEYS {
        tool.remove(other);
    }
    if let Some(schema) = schema {
        tool.insert(key.to_owned(), schema);
    }
    tool
}

/// A tools array with each bare definition replaced by `wrap(it)`; anything else as it is.
pub(crate) fn wrap_bare(tools: &Value, wrap: impl Fn(&Map<String, Value>) -> Value) -> Value {
    match tools {
        Value::Array(items) => items
            .iter()
            .map(|item| bare(item).map_or_else(|| item.clone(), &wrap))
            .collect(),
        other => other.clone(),
    }
}
