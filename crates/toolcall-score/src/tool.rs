//! One tool definition, and the language its input schema is written in: what a catalog holds
//! and what a schema is compiled from, below both.

use serde_json::Value;

/// The language a tool's input schema is written in: what it means depends on who reads it.
///
/// Most providers take JSON Schema. Gemini's `functionDeclarations[].parameters` is Google's
/// `Schema` object, a subset of OpenAPI 3.0 (upper-case `type`, `nullable`, `propertyOrdering`,
/// int64 counts that may be strings); read as JSON Schema it does not compile, or rejects
/// arguments Gemini accepts. Gemini's `parametersJsonSchema` is JSON Schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaDialect {
    /// JSON Schema: Anthropic, OpenAI (Chat, Responses, strict mode), Bedrock, Ollama, MCP and
    /// Gemini's `parametersJsonSchema`.
    #[default]
    JsonSchema,
    /// A format's own schema language, translated into JSON Schema before it is compiled:
    /// Gemini's (and Vertex AI's) `Schema` object, the OpenAPI 3.0 subset of `parameters`;
    /// Cohere v1's `parameter_definitions`.
    Native(crate::Format),
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
