//! The tools a reader collects, and where their input schemas come from.
//!
//! Schemas are most of a request's bytes. Read from a borrowed document they must be cloned; but
//! a case or tools file parsed from text owns its document and drops it right after reading, so
//! there each schema's place is only noted while reading, and the schemas are moved out once
//! everything else has been read — a clone and a second drop saved per schema.

use serde_json::Value;

use super::read::{get_any, opt_string, string, At, Object};
use crate::errors::ParseError;
use crate::Tool;

/// The tools read so far, in document order (duplicate names included).
pub(crate) struct Tools {
    tools: Vec<Tool>,
    /// `None`: schemas are cloned as they are read. `Some`: the caller owns the document, and each
    /// schema waits here, as its tool's index and its JSON pointer, for [`Tools::take_schemas`].
    deferred: Option<Vec<(usize, String)>>,
}

impl Tools {
    /// A collector that clones each schema out of a borrowed document.
    pub(crate) fn cloning() -> Tools {
        Tools {
            tools: Vec::new(),
            deferred: None,
        }
    }

    /// A collector for a document the caller owns: schemas are left in place for
    /// [`Tools::take_schemas`].
    pub(crate) fn deferring() -> Tools {
        Tools {
            tools: Vec::new(),
            deferred: Some(Vec::new()),
        }
    }

    /// Room for `additional` more tools.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.tools.reserve(additional);
    }

    /// Adds `tool`, read without its schema, with the schema found at `schema` (if any).
    pub(super) fn push(&mut self, mut tool: Tool, schema: Option<(&Value, At<'_>)>) {
        if let Some((schema, at)) = schema {
            match &mut self.deferred {
                None => tool.input_schema = Some(schema.clone()),
                Some(deferred) => {
                    let mut pointer = String::new();
                    at.push_pointer(&mut pointer);
                    deferred.push((self.tools.len(), pointer));
                }
            }
        }
        self.tools.push(tool);
    }

    /// Each tool whose schema a deferring collector left in the document: its index, the tool,
    /// and the schema's JSON pointer (none for a cloning collector).
    #[cfg(feature = "schema")]
    pub(crate) fn deferred(&self) -> impl Iterator<Item = (usize, &Tool, &str)> {
        self.deferred
            .iter()
            .flatten()
            .map(|(index, pointer)| (*index, &self.tools[*index], pointer.as_str()))
    }

    /// The tools of a cloning collector.
    pub(crate) fn into_tools(self) -> Vec<Tool> {
        debug_assert!(
            self.deferred.is_none(),
            "a deferring collector's schemas are taken with `take_schemas`"
        );
        self.tools
    }

    /// The tools, their deferred schemas moved out of `document` (the value the pointers are
    /// relative to, which is left with `null` in their places). Called only once everything is
    /// read from `document`: nothing may read a schema after this.
    pub(crate) fn take_schemas(self, document: &mut Value) -> Vec<Tool> {
        let mut tools = self.tools;
        for (index, pointer) in self.deferred.into_iter().flatten() {
            tools[index].input_schema = find_mut(document, &pointer).map(Value::take);
        }
        tools
    }
}

/// `Value::pointer_mut` without its two `String`s per segment: a segment is unescaped only when
/// it holds a `~`, which the pointers recorded here almost never do.
fn find_mut<'v>(document: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    let mut here = document;
    for segment in pointer.split('/').skip(1) {
        here = match here {
            Value::Object(map) => {
                if segment.contains('~') {
                    map.get_mut(&segment.replace("~1", "/").replace("~0", "~"))?
                } else {
                    map.get_mut(segment)?
                }
            }
            // As RFC 6901 (and `pointer_mut`): no sign, no leading zero.
            Value::Array(_) if segment.starts_with('+') => return None,
            Value::Array(_) if segment.len() > 1 && segment.starts_with('0') => return None,
            Value::Array(items) => items.get_mut(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

/// The fields every function definition shares: a required string `name`, an optional string
/// `description`, and the schema under the first of `schema_keys` present; added to `out`.
pub(crate) fn tool_fields(
    tool: &Object,
    at: &At<'_>,
    schema_keys: &[&str],
    out: &mut Tools,
) -> Result<(), ParseError> {
    let named = named_tool(tool, at)?;
    out.push(
        named,
        get_any(tool, schema_keys).map(|(key, schema)| (schema, at.key(key))),
    );
    Ok(())
}

/// A tool's required string `name` and optional string `description`, without its schema.
pub(crate) fn named_tool(tool: &Object, at: &At<'_>) -> Result<Tool, ParseError> {
    Ok(Tool::new(
        string(tool, "name", at, "a tool name (a string)")?,
        opt_string(tool, "description", at)?.unwrap_or_default(),
    ))
}

/// Checks that the schema of every tool a deferring collector read from `document` compiles:
/// the first that does not is an error at its place (the request's fault, reported when the
/// case or tools file is loaded rather than against a call). Compiled schemas are cached, so
/// scoring later compiles nothing again.
#[cfg(feature = "schema")]
pub(crate) fn check_deferred(tools: &Tools, document: &Value) -> Result<(), ParseError> {
    for (_, tool, pointer) in tools.deferred() {
        let Some(schema) = document.pointer(pointer) else {
            continue;
        };
        if let Err(why) = crate::schema::compile(schema, tool.schema_dialect) {
            return Err(ParseError::Schema {
                pointer: pointer.to_owned(),
                tool: tool.name.clone(),
                why,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_mut_agrees_with_pointer_mut() {
        let mut document = serde_json::json!({
            "tools": [{"a/b": {"c~d": {"x": 1}}}, {"parameters": [10, 20]}],
            "": {"empty": true}
        });
        for pointer in [
            "",
            "/tools",
            "/tools/0/a~1b",
            "/tools/0/a~1b/c~0d/x",
            "/tools/1/parameters/1",
            "/tools/2",
            "/tools/x",
            "/tools/0/missing",
            "/tools/1/parameters/1/deeper",
            "/",
            "/~1",
            "/tools/01",
        ] {
            let expected = document.clone().pointer_mut(pointer).cloned();
            assert_eq!(
                find_mut(&mut document, pointer).cloned(),
                expected,
                "{pointer:?}"
            );
        }
    }
}
