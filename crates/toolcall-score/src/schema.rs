//! JSON Schema validation of call arguments, behind the `schema` feature.
//!
//! Uses the `jsonschema` crate with its default features off (no network resolution of remote
//! `$ref`s). Each tool's schema is compiled on first use and kept with the catalog, so scoring many
//! responses against one case compiles each schema once. Clones of a catalog share the compiled
//! schemas (a catalog never changes once built), so cases built from one tools file compile
//! each schema once between them and keep one copy in memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::Tool;

type Compiled = Result<Arc<jsonschema::Validator>, String>;

/// Compiled schemas shared by every catalog in the process, keyed by the schema's JSON text.
///
/// A suite's cases mostly repeat a few tool sets, and a log repeats one request shape on every
/// line, but each case or line builds its own catalog; compiling a schema costs far more than
/// scoring a call (it was most of a harness run's scoring time). Equal text means an equal
/// schema, so the compiled validator is the same. Bounded, so memory stays flat over any input.
fn compile(schema: &Value) -> Compiled {
    const MAX_SHARED: usize = 1024;
    static SHARED: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let fresh = || {
        jsonschema::validator_for(schema)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    };
    let Ok(key) = serde_json::to_string(schema) else {
        return fresh();
    };
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
    ) -> Result<(), Vec<String>> {
        let Some(schema) = &tool.input_schema else {
            return Ok(());
        };
        let compiled = self.slots[index].get_or_init(|| compile(schema));
        match compiled {
            // Most arguments are valid: the yes/no check is far cheaper than collecting errors.
            Ok(validator) if validator.is_valid(arguments) => Ok(()),
            Ok(validator) => {
                let errors: Vec<String> = validator
                    .iter_errors(arguments)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        if at.is_empty() {
                            e.to_string()
                        } else {
                            format!("{at}: {e}")
                        }
                    })
                    .collect();
                if errors.is_empty() {
                    Ok(())
                } else {
                    Err(errors)
                }
            }
            Err(e) => Err(vec![format!(
                "the tool's input schema does not compile: {e}"
            )]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_schemas_compile_once_per_process() {
        let schema = serde_json::json!({"type": "object", "properties": {"shared_cache_probe": {"type": "string"}}});
        let (Ok(first), Ok(second)) = (compile(&schema), compile(&schema.clone())) else {
            panic!("the schema compiles");
        };
        assert!(Arc::ptr_eq(&first, &second));
        let other = serde_json::json!({"type": "object", "required": ["shared_cache_probe"]});
        let Ok(third) = compile(&other) else {
            panic!("the schema compiles");
        };
        assert!(!Arc::ptr_eq(&first, &third));
        assert!(third.is_valid(&serde_json::json!({"shared_cache_probe": 1})));
        assert!(!third.is_valid(&serde_json::json!({})));
    }
}
