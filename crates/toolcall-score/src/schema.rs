//! JSON Schema validation of call arguments, behind the `schema` feature.
//!
//! Uses the `jsonschema` crate with its default features off (no network resolution of remote
//! `$ref`s). Each tool's schema is compiled on first use and kept with the catalog, so scoring many
//! responses against one case compiles each schema once. Clones of a catalog share the compiled
//! schemas (a catalog never changes once built), so cases built from one tools file compile
//! each schema once between them and keep one copy in memory.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::Tool;

type Compiled = Result<Arc<jsonschema::Validator>, String>;

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
        let compiled = self.slots[index].get_or_init(|| {
            jsonschema::validator_for(schema)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        match compiled {
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
