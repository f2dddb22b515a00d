//! The tools a request defined: the set every call is checked against.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::errors::ParseError;

/// The language a tool's input schema is written in: what it means depends on who reads it.
///
/// Most providers take JSON Schema. Gemini's `functionDeclarations[].parameters` is Google's
/// `Schema` object, a subset of OpenAPI 3.0 (upper-case `type`, `nullable`, `propertyOrdering`,
/// int64 counts that may be strings); read as JSON Schema it does not compile, or rejects
/// arguments Gemini accepts. Gemini's `parametersJsonSchema` is JSON Schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum SchemaDialect {
    /// JSON Schema: Anthropic, OpenAI (Chat, Responses, strict mode), Bedrock, Ollama, MCP and
    /// Gemini's `parametersJsonSchema`.
    #[default]
    JsonSchema,
    /// Gemini's (and Vertex AI's) `Schema` object, the OpenAPI 3.0 subset of `parameters`;
    /// translated into JSON Schema before it is compiled.
    GeminiOpenApi,
}

impl SchemaDialect {
    /// Whether this is JSON Schema (the default, left out of serialized tools).
    pub fn is_json_schema(&self) -> bool {
        *self == SchemaDialect::JsonSchema
    }
}

/// One tool definition.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Tool {
    /// The name calls must use.
    pub name: String,
    /// The description shown to the model (empty when there is none).
    pub description: String,
    /// The schema of its input, when one was given, in [`Tool::schema_dialect`].
    pub input_schema: Option<Value>,
    /// The language `input_schema` is written in (JSON Schema unless the request said
    /// otherwise, as Gemini's `parameters` does).
    #[cfg_attr(
        feature = "serde",
        serde(skip_serializing_if = "SchemaDialect::is_json_schema")
    )]
    pub schema_dialect: SchemaDialect,
}

impl Tool {
    /// A tool with a name and description and no schema.
    pub fn new(name: &str, description: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: None,
            schema_dialect: SchemaDialect::JsonSchema,
        }
    }
}

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

    /// Reads a tools array in any supported format (Anthropic, OpenAI Chat or Responses, Gemini
    /// `functionDeclarations`, Bedrock `toolSpec`, MCP `tools/list` output); see
    /// [`crate::provider::parse_tools`].
    pub fn from_json(value: &Value) -> Result<Catalog, ParseError> {
        crate::provider::parse_tools(value).map(Catalog::new)
    }

    /// Reads a tools file (a tools array in any supported format). Errors name the file, line
    /// and column; with the `schema` feature, an input schema that does not compile is one.
    pub fn load(path: &std::path::Path) -> Result<Catalog, crate::InputError> {
        let text = crate::errors::read_text(path)?;
        let value = crate::errors::parse_json(Some(path), &text)?;
        let invalid = |e| crate::InputError::invalid(Some(path), &text, e);
        // The document is dropped after reading: its schemas are moved out, not cloned.
        let tools = crate::provider::parse_owned_tools(value).map_err(invalid)?;
        // A schema that does not compile is the file's fault, not a call's: said here, with
        // its place, rather than as a finding against every call to the tool.
        #[cfg(feature = "schema")]
        crate::schema::check_loaded(&tools, &text).map_err(invalid)?;
        Ok(Catalog::new(tools))
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
