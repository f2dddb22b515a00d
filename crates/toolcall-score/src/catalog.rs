//! The tools a request defined: the set every call is checked against.

use std::collections::HashMap;
use std::sync::Arc;

#[cfg(feature = "schema")]
use serde_json::Value;

use crate::Tool;

/// The set of tools a request defined, in their original order, with lookup by name.
///
/// A name defined twice is kept once (the first definition wins) and remembered in
/// [`Catalog::duplicates`]: providers reject such requests, so [`crate::lint`] reports it.
///
/// A clone shares the definitions and their compiled schemas (one reference count): a log's
/// lines that repeat one tools array share one catalog.
#[derive(Clone, Debug)]
pub struct Catalog {
    defined: Arc<Defined>,
    #[cfg(feature = "schema")]
    validators: crate::schema::ValidatorCache,
}

/// The empty catalog, shared: a case starts with one for every log line read, so making it
/// costs a reference count, not two allocations (what a catalog is built into is copied on
/// its first tool).
impl Default for Catalog {
    fn default() -> Catalog {
        static EMPTY: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        EMPTY
            .get_or_init(|| Catalog {
                defined: Arc::default(),
                #[cfg(feature = "schema")]
                validators: crate::schema::ValidatorCache::default(),
            })
            .clone()
    }
}

/// What a catalog holds, shared by its clones.
#[derive(Clone, Debug, Default)]
struct Defined {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    duplicates: Vec<String>,
    /// The tools' indexes by name length and then bytes, built at the first scoring: a lookup
    /// there mostly compares lengths and hashes nothing (see [`Catalog::index_of`]).
    by_length: std::sync::OnceLock<Vec<u32>>,
}

impl Catalog {
    /// A catalog of the given tools.
    pub fn new(tools: impl IntoIterator<Item = Tool>) -> Catalog {
        let mut catalog = Catalog::default();
        for tool in tools {
            catalog.push(tool);
        }
        catalog
    }

    /// Adds a definition; only while the catalog is built, before it can be cloned.
    fn push(&mut self, tool: Tool) {
        let defined = Arc::make_mut(&mut self.defined);
        defined.by_length = std::sync::OnceLock::new();
        if defined.by_name.contains_key(&tool.name) {
            defined.duplicates.push(tool.name);
            return;
        }
        defined
            .by_name
            .insert(tool.name.clone(), defined.tools.len());
        defined.tools.push(tool);
        #[cfg(feature = "schema")]
        self.validators.push();
    }

    /// The index in [`Catalog::tools`] of the tool of this exact name: what scoring asks of
    /// every call, answered by a binary search of the names ordered by length, kept by the
    /// catalog (and so shared by every scorer of every clone).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        let tools = &self.defined.tools;
        let order = self.defined.by_length.get_or_init(|| {
            let mut order: Vec<u32> = (0..tools.len() as u32).collect();
            order.sort_unstable_by(|a, b| {
                by_length(&tools[*a as usize].name, &tools[*b as usize].name)
            });
            order
        });
        order
            .binary_search_by(|i| by_length(&tools[*i as usize].name, name))
            .ok()
            .map(|found| order[found] as usize)
    }

    /// Whether a tool of this exact name is defined.
    pub fn contains(&self, name: &str) -> bool {
        self.defined.by_name.contains_key(name)
    }

    /// The tool of this exact name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.defined
            .by_name
            .get(name)
            .map(|&i| &self.defined.tools[i])
    }

    /// The tools, in definition order.
    pub fn tools(&self) -> &[Tool] {
        &self.defined.tools
    }

    /// The tool names, in definition order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defined.tools.iter().map(|t| t.name.as_str())
    }

    /// How many distinct tools are defined.
    pub fn len(&self) -> usize {
        self.defined.tools.len()
    }

    /// Whether no tool is defined.
    pub fn is_empty(&self) -> bool {
        self.defined.tools.is_empty()
    }

    /// Names that were defined more than once.
    pub fn duplicates(&self) -> &[String] {
        &self.defined.duplicates
    }

    /// This catalog without the named tool: how a test shows that calls to a dropped tool are
    /// caught.
    pub fn without(&self, name: &str) -> Catalog {
        Catalog::new(
            self.defined
                .tools
                .iter()
                .filter(|t| t.name != name)
                .cloned(),
        )
    }

    /// Validates arguments against the named tool's input schema; the schema is compiled once per
    /// catalog. `Ok(())` when the tool has no schema. Only [`SchemaError::Violations`] is the
    /// arguments' fault; each of its errors names the failing location.
    ///
    /// [`SchemaError::Violations`]: crate::SchemaError::Violations
    #[cfg(feature = "schema")]
    pub fn validate(&self, name: &str, arguments: &Value) -> Result<(), crate::SchemaError> {
        match self.defined.by_name.get(name) {
            Some(&i) => self.validate_at(i, arguments),
            None => Ok(()),
        }
    }

    /// Whether the tool at `index` in [`Catalog::tools`] has an input schema to validate against.
    #[cfg(feature = "schema")]
    pub(crate) fn has_schema(&self, index: usize) -> bool {
        self.defined.tools[index].input_schema.is_some()
    }

    /// [`Catalog::validate`] for the tool at `index` in [`Catalog::tools`].
    #[cfg(feature = "schema")]
    pub(crate) fn validate_at(
        &self,
        index: usize,
        arguments: &Value,
    ) -> Result<(), crate::SchemaError> {
        self.validators
            .validate(index, &self.defined.tools[index], arguments)
    }
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.defined, &other.defined) || self.defined.tools == other.defined.tools
    }
}

/// Names ordered by length, then bytes: most names differ in length, so most comparisons are
/// one.
pub(crate) fn by_length(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}
