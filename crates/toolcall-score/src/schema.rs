//! JSON Schema validation of call arguments, behind the `schema` feature.
//!
//! Uses the `jsonschema` crate with its default features off (no network resolution of remote
//! `$ref`s). Each tool's schema is compiled on first use and kept with the catalog, so scoring many
//! responses against one case compiles each schema once. Clones of a catalog share the compiled
//! schemas (a catalog never changes once built), so cases built from one tools file compile
//! each schema once between them and keep one copy in memory.
//!
//! A schema is read as its provider reads it, so that a call the provider accepts is never a
//! violation because the schema was written in another language than JSON Schema: Gemini's
//! `parameters` (Google's `Schema`, an OpenAPI 3.0 subset) is translated into JSON Schema first,
//! and in every dialect `"required": null` (which SDKs send) means no required properties.
//!
//! Only a real violation is the arguments' fault ([`SchemaError`]): a schema that does not
//! compile is the fault of whoever wrote it (a case or tools file is checked when it is loaded,
//! [`check_deferred`]), and a `pattern` the regex engine gives up on decides nothing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::{SchemaDialect, Tool};

/// Why arguments were not accepted by a tool's input schema. Only
/// [`SchemaError::Violations`] is the arguments' (the model's) fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The arguments fail the schema: one message per failure, each naming its location.
    #[error("arguments fail the input schema: {}", .0.join("; "))]
    Violations(Vec<String>),
    /// The schema itself does not compile: whoever wrote it is at fault (the request, an MCP
    /// server's `tools/list`), not the arguments.
    #[error("the input schema does not compile: {0}")]
    Uncompilable(String),
    /// The validator could not decide: the regex engine gave up on a `pattern` (its
    /// backtracking limit). Neither a pass nor a violation.
    #[error("the arguments could not be checked against the input schema: {0}")]
    Undecided(String),
}

pub(crate) type Compiled = Result<Arc<jsonschema::Validator>, String>;

/// Compiled schemas shared by every catalog in the process, keyed by the schema's dialect and
/// JSON text.
///
/// A suite's cases mostly repeat a few tool sets, and a log repeats one request shape on every
/// line, but each case or line builds its own catalog; compiling a schema costs far more than
/// scoring a call (it was most of a harness run's scoring time). Equal text in one dialect means
/// an equal schema, so the compiled validator is the same. Bounded, so memory stays flat over any
/// input. The key is the schema as written: translating it is left to a miss.
pub(crate) fn compile(schema: &Value, dialect: SchemaDialect) -> Compiled {
    const MAX_SHARED: usize = 1024;
    static SHARED: OnceLock<Mutex<HashMap<Vec<u8>, Compiled>>> = OnceLock::new();
    let fresh = || {
        jsonschema::validator_for(&as_json_schema(schema, dialect))
            .map(Arc::new)
            .map_err(|e| e.to_string())
    };
    let mut key = vec![match dialect {
        SchemaDialect::JsonSchema => 0,
        SchemaDialect::Native(format) => 1 + format as u8,
    }];
    if serde_json::to_writer(&mut key, schema).is_err() {
        return fresh();
    }
    let shared = SHARED.get_or_init(Mutex::default);
    if let Some(compiled) = shared.lock().ok().and_then(|map| map.get(&key).cloned()) {
        return compiled;
    }
    let compiled = fresh();
    if let Ok(mut map) = shared.lock() {
        if map.len() < MAX_SHARED {
            map.insert(key, compiled.clone());
        }
    }
    compiled
}

/// The schema as JSON Schema: Gemini's OpenAPI subset translated, keywords set to `null`
/// (`"required": null`, `"type": null`) dropped.
fn as_json_schema(schema: &Value, dialect: SchemaDialect) -> Cow<'_, Value> {
    match dialect {
        SchemaDialect::Native(format) => match format.wire().request.native_schema {
            Some(native) => Cow::Owned((native.to_json_schema)(schema)),
            None => Cow::Borrowed(schema),
        },
        SchemaDialect::JsonSchema if has_null_required(schema) => {
            let mut schema = schema.clone();
            drop_null_required(&mut schema);
            Cow::Owned(schema)
        }
        SchemaDialect::JsonSchema => Cow::Borrowed(schema),
    }
}

/// The JSON Schema keywords whose value is a schema, an array of schemas, or a map of them:
/// where a nested schema can hold a `"required": null` of its own. Keywords holding data
/// (`enum`, `const`, `default`, `examples`) are never walked.
fn subschemas(key: &str) -> bool {
    matches!(
        key,
        "properties"
            | "patternProperties"
            | "$defs"
            | "definitions"
            | "dependentSchemas"
            | "items"
            | "prefixItems"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "additionalProperties"
            | "additionalItems"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
    )
}

/// The schemas directly inside a subschema keyword's value (`properties` is a map of them,
/// `anyOf` an array, `items` either one or, before 2020-12, an array).
fn children<'v>(key: &str, value: &'v Value) -> Vec<&'v Value> {
    match value {
        Value::Object(map)
            if matches!(
                key,
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
            ) =>
        {
            map.values().collect()
        }
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// Keywords whose `null` is a value, not "unset": `const: null` only accepts null, and a `null`
/// default or example is data.
fn null_is_a_value(key: &str) -> bool {
    matches!(key, "const" | "default" | "examples" | "example")
}

fn has_null_required(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.iter()
        .any(|(key, value)| value.is_null() && !null_is_a_value(key))
        || map
            .iter()
            .filter(|(key, _)| subschemas(key))
            .any(|(key, value)| children(key, value).into_iter().any(has_null_required))
}

/// Removes every keyword set to `null` (but those whose `null` is data) from the schema and
/// every schema inside it: SDKs serialize unset optional fields as `null` (`"required": null`,
/// `"type": null` in Codex's tools, as proxies in front of it normalize), which providers read
/// as unset and JSON Schema as a schema that does not compile.
fn drop_null_required(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.retain(|key, value| !value.is_null() || null_is_a_value(key));
    for (key, value) in map.iter_mut() {
        if !subschemas(key) {
            continue;
        }
        let by_name = matches!(
            key.as_str(),
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        );
        match value {
            Value::Object(children) if by_name => {
                children.values_mut().for_each(drop_null_required)
            }
            Value::Array(items) => items.iter_mut().for_each(drop_null_required),
            other => drop_null_required(other),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct ValidatorCache {
    slots: Arc<Vec<OnceLock<Compiled>>>,
}

impl ValidatorCache {
    /// A slot for the next tool; only while the catalog is built, before it can be cloned.
    pub(crate) fn push(&mut self) {
        Arc::make_mut(&mut self.slots).push(OnceLock::new());
    }

    pub(crate) fn validate(
        &self,
        index: usize,
        tool: &Tool,
        arguments: &Value,
    ) -> Result<(), SchemaError> {
        let Some(schema) = &tool.input_schema else {
            return Ok(());
        };
        let compiled = self.slots[index].get_or_init(|| compile(schema, tool.schema_dialect));
        let validator = match compiled {
            // Most arguments are valid: the yes/no check is far cheaper than collecting errors.
            Ok(validator) if validator.is_valid(arguments) => return Ok(()),
            Ok(validator) => validator,
            Err(e) => return Err(SchemaError::Uncompilable(e.clone())),
        };
        let mut violations = Vec::new();
        let mut undecided = Vec::new();
        for e in validator.iter_errors(arguments) {
            let at = e.instance_path().to_string();
            let message = if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            };
            // The engine could not finish a match, and the outcomes it tried disagree: what the
            // arguments' fault would be is unknown.
            if matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::BacktrackLimitExceeded { .. }
            ) {
                undecided.push(message);
            } else {
                violations.push(message);
            }
        }
        if !violations.is_empty() {
            Err(SchemaError::Violations(violations))
        } else if !undecided.is_empty() {
            Err(SchemaError::Undecided(undecided.join("; ")))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_schemas_compile_once_per_process() {
        let schema =
            json!({"type": "object", "properties": {"shared_cache_probe": {"type": "string"}}});
        let dialect = SchemaDialect::JsonSchema;
        let (Ok(first), Ok(second)) =
            (compile(&schema, dialect), compile(&schema.clone(), dialect))
        else {
            panic!("the schema compiles");
        };
        assert!(Arc::ptr_eq(&first, &second));
        let other = json!({"type": "object", "required": ["shared_cache_probe"]});
        let Ok(third) = compile(&other, dialect) else {
            panic!("the schema compiles");
        };
        assert!(!Arc::ptr_eq(&first, &third));
        assert!(third.is_valid(&json!({"shared_cache_probe": 1})));
        assert!(!third.is_valid(&json!({})));
        // The same text in another dialect is another schema.
        let Ok(fourth) = compile(&schema, SchemaDialect::Native(crate::Format::Gemini)) else {
            panic!("the schema compiles");
        };
        assert!(!Arc::ptr_eq(&first, &fourth));
    }
}
