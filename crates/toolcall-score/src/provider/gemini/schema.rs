//! Gemini's `Schema` object (`functionDeclarations[].parameters`, a subset of OpenAPI 3.0) as
//! JSON Schema: the language Gemini's input schemas are written in, turned into the one the
//! validator compiles.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

/// Google's `Schema` object (Gemini API and Vertex AI `parameters`, an OpenAPI 3.0 subset) as
/// the JSON Schema it means:
///
/// - `type` names are upper case (`STRING`, `OBJECT`, …; the API takes either case): lowered;
///   `TYPE_UNSPECIFIED` is no type; a number is the `Type` enum's (`6` is `OBJECT`);
/// - `nullable: true` also allows `null` (in `type`, `enum` and `anyOf`, whichever are there);
/// - a member that is `null` is unset, as protobuf's JSON mapping reads it (`"required": null`,
///   and the `None`s of the Python SDK's `model_dump()`);
/// - keys may be snake_case (`any_of`, `min_items`, the proto field names) or camelCase;
/// - int64 counts (`minItems`, `maxLength`, …) may be strings (`"1"`), as protobuf writes them,
///   and so may `minimum` / `maximum`;
/// - an `INTEGER` or `NUMBER` enum is written as strings (`["101", "201"]`): read as numbers;
/// - Vertex's `defs` and `ref` (`#/defs/Pet`) are `$defs` and `$ref`;
/// - what the object has and JSON Schema does not (`propertyOrdering`, `example`), and anything
///   it does not have at all, is left out.
///
/// Recursively through `properties`, `items`, `anyOf`, `additionalProperties` and `defs`.
/// What remains invalid (an unknown `type`) is left for the compiler to reject: the provider
/// rejects it too.
/// Google's `Type` enum by number: TYPE_UNSPECIFIED (no type), STRING, NUMBER, INTEGER, BOOLEAN,
/// ARRAY, OBJECT, NULL.
const TYPE_NUMBERS: [Option<&str>; 8] = [
    None,
    Some("string"),
    Some("number"),
    Some("integer"),
    Some("boolean"),
    Some("array"),
    Some("object"),
    Some("null"),
];

pub(crate) fn from_openapi(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut nullable = false;
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        let key = camel_case(key);
        match key.as_ref() {
            "type" => match value {
                Value::String(name) if name.eq_ignore_ascii_case("TYPE_UNSPECIFIED") => {}
                Value::String(name) => {
                    out.insert("type".into(), Value::String(name.to_ascii_lowercase()));
                }
                // The `Type` enum's number, from clients that ask for `enum-encoding=int` (the Go
                // SDK); 0 is TYPE_UNSPECIFIED.
                Value::Number(n) => match n.as_u64().and_then(|i| TYPE_NUMBERS.get(i as usize)) {
                    Some(Some(name)) => {
                        out.insert("type".into(), Value::String((*name).to_owned()));
                    }
                    Some(None) => {}
                    None => {
                        out.insert("type".into(), value.clone());
                    }
                },
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "nullable" => nullable = value == &Value::Bool(true),
            "properties" | "defs" | "$defs" => {
                let name = if key == "properties" {
                    "properties"
                } else {
                    "$defs"
                };
                let translated = match value {
                    Value::Object(members) => Value::Object(
                        members
                            .iter()
                            .map(|(name, schema)| (name.clone(), from_openapi(schema)))
                            .collect(),
                    ),
                    other => other.clone(),
                };
                out.insert(name.into(), translated);
            }
            "items" | "additionalProperties" => {
                out.insert(key.into_owned(), from_openapi(value));
            }
            "anyOf" => {
                let translated = match value {
                    Value::Array(items) => Value::Array(items.iter().map(from_openapi).collect()),
                    other => other.clone(),
                };
                out.insert("anyOf".into(), translated);
            }
            "minItems" | "maxItems" | "minLength" | "maxLength" | "minProperties"
            | "maxProperties" | "minimum" | "maximum" => {
                out.insert(key.into_owned(), number(value));
            }
            "ref" | "$ref" => {
                let translated = match value {
                    Value::String(to) => match to.strip_prefix("#/defs/") {
                        Some(name) => Value::String(format!("#/$defs/{name}")),
                        None => value.clone(),
                    },
                    other => other.clone(),
                };
                out.insert("$ref".into(), translated);
            }
            "enum" | "required" | "format" | "pattern" | "title" | "description" | "default" => {
                out.insert(key.into_owned(), value.clone());
            }
            _ => {}
        }
    }
    let numeric = matches!(
        out.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    );
    if let (true, Some(Value::Array(values))) = (numeric, out.get_mut("enum")) {
        for value in values.iter_mut() {
            *value = number(value);
        }
    }
    if nullable {
        match out.get_mut("type") {
            Some(Value::String(name)) => {
                let name = std::mem::take(name);
                out.insert("type".into(), serde_json::json!([name, "null"]));
            }
            Some(Value::Array(names)) => names.push(Value::from("null")),
            _ => {}
        }
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            values.push(Value::Null);
        }
        if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
            branches.push(serde_json::json!({"type": "null"}));
        }
    }
    Value::Object(out)
}

/// A proto field name in snake_case (`min_items`) as its JSON name (`minItems`).
fn camel_case(key: &str) -> Cow<'_, str> {
    if !key.contains('_') {
        return Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A number protobuf's JSON mapping may write as a string (`"1"`, `"2.5"`) as a number; any
/// other value as it is.
fn number(value: &Value) -> Value {
    let Value::String(text) = value else {
        return value.clone();
    };
    let text = text.trim();
    if let Ok(n) = text.parse::<u64>() {
        return Value::Number(n.into());
    }
    if let Ok(n) = text.parse::<i64>() {
        return Value::Number(n.into());
    }
    match text.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) => Value::Number(n),
        None => value.clone(),
    }
}
