//! Reading from text moves the tools' schemas out of the parsed document instead of cloning
//! them; these tests pin that it reads exactly what the by-reference API reads from the same
//! document, over every case under `cases/`, every fixture, and a request mixing every tools
//! shape.

use crate::support;

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use toolcall_score::{Case, Catalog};

fn assert_same_catalog(owned: &Catalog, cloned: &Catalog, what: &str) {
    assert_eq!(owned.tools(), cloned.tools(), "{what}: tools");
    assert_eq!(
        owned.duplicates(),
        cloned.duplicates(),
        "{what}: duplicates"
    );
}

/// `Case::from_json_str(text)` reads what `Case::from_value` reads from `text`'s value, or both
/// fail; likewise `Catalog::load` and `Catalog::from_json` (the fixture as a tools file). Returns
/// whether the case parsed.
fn assert_same(text: &str, what: &str, path: Option<&Path>) -> bool {
    let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(path) = path {
        match (Catalog::load(path), Catalog::from_json(&value)) {
            (Ok(owned), Ok(cloned)) => assert_same_catalog(&owned, &cloned, what),
            (Err(_), Err(_)) => {}
            (owned, cloned) => panic!("{what} as tools: {owned:?} vs {cloned:?}"),
        }
    }
    match (Case::from_json_str(text), Case::from_value(&value)) {
        (Ok(owned), Ok(cloned)) => {
            assert_same_catalog(&owned.catalog, &cloned.catalog, what);
            match (&owned.parent, &cloned.parent) {
                (Some(owned), Some(cloned)) => assert_same_catalog(owned, cloned, what),
                (None, None) => {}
                _ => panic!("{what}: parent tools differ"),
            }
            assert_eq!(owned.transcript, cloned.transcript, "{what}: transcript");
            assert_eq!(owned.system, cloned.system, "{what}: system");
            assert_eq!(owned.about, cloned.about, "{what}: about");
            assert_eq!(owned.format, cloned.format, "{what}: format");
            assert_eq!(
                owned.request_format, cloned.request_format,
                "{what}: request format"
            );
            assert_eq!(owned.expect, cloned.expect, "{what}: expect");
            true
        }
        (Err(owned), Err(cloned)) => {
            let cloned = cloned.to_string();
            assert!(
                owned.to_string().contains(&cloned),
                "{what}: errors differ: {owned} vs {cloned}"
            );
            false
        }
        (owned, cloned) => panic!("{what}: {owned:?} vs {cloned:?}"),
    }
}

#[test]
fn every_case_and_fixture_reads_the_same_from_text() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = support::files(&manifest.join("../../cases"), &[".json"]);
    let cases = files.len();
    // Every `.json` under the fixtures is an input (their readings are `.snap` files).
    files.extend(support::files(&manifest.join("tests/fixtures"), &[".json"]));
    assert!(cases >= 40, "found only {cases} cases");
    let mut parsed = 0;
    let mut with_schemas = 0;
    for path in &files {
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if assert_same(&text, &path.display().to_string(), Some(path)) {
            parsed += 1;
            let case = Case::from_json_str(&text).expect("parsed above");
            with_schemas += usize::from(
                case.catalog
                    .tools()
                    .iter()
                    .any(|t| t.input_schema.is_some()),
            );
        }
    }
    // Every case file parses, and most of them define schemas: the comparison has teeth.
    assert!(parsed >= cases, "{parsed} of {} files parsed", files.len());
    assert!(
        with_schemas >= cases / 2,
        "only {with_schemas} with schemas"
    );
}

#[test]
fn every_tools_shape_reads_the_same_from_text() {
    let schema = |p: &str| json!({"type": "object", "properties": {p: {"type": "string"}}});
    let request = json!({
        "about": "every tools shape at once",
        "tools": [
            {"name": "anthropic", "description": "d", "input_schema": schema("a")},
            {"type": "function", "function": {"name": "chat", "parameters": schema("b")}},
            {"type": "function", "name": "responses", "parameters": schema("c")},
            {"type": "namespace", "name": "ns", "tools": [
                {"type": "function", "name": "inner", "parameters": schema("d")},
                {"type": "function", "name": "anthropic", "parameters": schema("dup")}
            ]},
            {"functionDeclarations": [
                {"name": "gemini", "parameters": schema("e")},
                {"name": "gemini_json", "parametersJsonSchema": schema("f")}
            ]},
            {"function_declarations": [{"name": "snake", "parameters": schema("g")}]},
            {"toolSpec": {"name": "bedrock", "inputSchema": {"json": schema("h")}}},
            {"toolSpec": {"name": "bedrock_bare"}},
            {"name": "mcp", "inputSchema": schema("i")},
            {"name": "no_schema"},
            {"name": "null_schema", "input_schema": null},
            {"type": "custom", "custom": {"name": "custom"}},
            {"name": "chat", "parameters": schema("dup again")}
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "config", "inputSchema": {"json": schema("j")}}},
            {"cachePoint": {"type": "default"}}
        ]},
        "parent_tools": {"tools": [
            {"name": "planner", "input_schema": schema("k")},
            {"name": "planner", "input_schema": schema("dup")}
        ]},
        "messages": [{"role": "user", "content": "hi"}]
    });
    let text = request.to_string();
    assert!(assert_same(&text, "every shape", None));
    let case = Case::from_json_str(&text).expect("the request parses");
    assert_eq!(case.catalog.duplicates(), ["anthropic", "chat"]);
    // The first definition of a duplicated name wins, schema included.
    assert_eq!(
        case.catalog
            .get("anthropic")
            .and_then(|t| t.input_schema.as_ref()),
        Some(&schema("a"))
    );
    assert_eq!(
        case.catalog
            .get("config")
            .and_then(|t| t.input_schema.as_ref()),
        Some(&schema("j"))
    );
    assert_eq!(
        case.catalog.get("null_schema").map(|t| &t.input_schema),
        Some(&None)
    );
    let parent = case.parent.expect("parent tools");
    assert_eq!(parent.duplicates(), ["planner"]);
    assert_eq!(
        parent.get("planner").and_then(|t| t.input_schema.as_ref()),
        Some(&schema("k"))
    );

    // And as a tools file: an MCP `tools/list` result.
    let dir = std::env::temp_dir().join(format!("owned-parse-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("tools.json");
    fs::write(&path, request["tools"].to_string()).expect("the tools file is written");
    let owned = Catalog::load(&path).expect("the tools load");
    let cloned = Catalog::from_json(&request["tools"]).expect("the tools parse");
    assert_same_catalog(&owned, &cloned, "tools file");
    assert_eq!(owned.len(), 13);
    fs::remove_dir_all(&dir).expect("the temporary directory is removed");
}
