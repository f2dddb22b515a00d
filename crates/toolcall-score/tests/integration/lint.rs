//! The drift lint on real prompts: what a prompt explains rather than hands to the model is not a
//! renamed tool, and a renamed tool is still found beside it.
//!
//! The prompts are real: smolagents' tool-calling agent as openinference recorded its request
//! (`tests/fixtures/lint/`, see its README), and the sentences of the OpenHands trajectory that
//! Harbor recorded (`crates/toolcall-traces/tests/fixtures/atif/harbor_openhands.json`, which
//! `toolcall import` turns into a case; the CLI's `import_lint` tests lint that import whole).

use std::path::PathBuf;

use serde_json::{json, Value};
use toolcall_score::{lint, Case};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lint")
        .join(name)
}

fn names(case: &Case) -> Vec<String> {
    lint(case).into_iter().map(|d| d.name).collect()
}

/// The request with `more` appended to its system prompt.
fn smolagents_with(more: &str) -> Case {
    let path = fixture("smolagents-tool-calling-agent.request.json");
    let text = std::fs::read_to_string(&path).expect("the fixture reads");
    let mut request: Value = serde_json::from_str(&text).expect("the fixture is JSON");
    let system = &mut request["messages"][0]["content"][0]["text"];
    let prompt = format!("{}{more}", system.as_str().expect("a text part"));
    *system = Value::String(prompt);
    Case::from_value(&request).expect("the request reads as a case")
}

#[test]
fn a_prompt_s_notional_examples_are_not_drift() {
    // Before: `image_transformer`, `document_qa`, `image_generator`, `python_interpreter` and
    // `web_search`, each quoted as `"{"`, the first line of its JSON block.
    let case = Case::load(&fixture("smolagents-tool-calling-agent.request.json"))
        .expect("the request reads as a case");
    assert!(lint(&case).is_empty(), "{:#?}", lint(&case));
    // Told in words to use a tool it lacks, the same prompt still drifts.
    let case = smolagents_with("\nAlways use lookup_customer before answering.");
    assert_eq!(names(&case), ["lookup_customer"]);
    // So does a call written out after the examples' disclaimer: an instruction, not an example.
    let case = smolagents_with("\nAlways call lookup_customer(email) first.");
    assert_eq!(names(&case), ["lookup_customer"]);
}

#[test]
fn an_example_block_without_a_disclaimer_is_still_drift() {
    let case = Case::from_value(&json!({
        "system": "Answer with a call, like this:\nAction:\n{\n  \"name\": \"lookup_customer\",\n  \"arguments\": {\"email\": \"a@b.c\"}\n}",
        "tools": [{"name": "find_customer", "description": "Find a customer."}]
    }))
    .expect("the case reads");
    let drifts = lint(&case);
    assert_eq!(drifts.len(), 1, "{drifts:#?}");
    assert_eq!(drifts[0].name, "lookup_customer");
    // Quoted by the line that names it, not the block's lone `{`.
    assert_eq!(drifts[0].context, "\"name\": \"lookup_customer\",");
}

/// `str_replace_editor` as OpenHands defines it (its `command` enum and the start of its
/// description), and the system prompt's line about credentials.
fn openhands(system: &str, description: &str) -> Case {
    Case::from_value(&json!({
        "system": system,
        "tools": [{"type": "function", "function": {
            "name": "str_replace_editor",
            "description": description,
            "parameters": {"type": "object", "required": ["command", "path"], "properties": {
                "command": {"type": "string", "description": "The commands to run. Allowed options are: `view`, `create`, `str_replace`, `insert`, `undo_edit`.",
                            "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                "path": {"type": "string"},
                "old_str": {"type": "string"},
                "new_str": {"type": "string"}}}}}]
    }))
    .expect("the case reads")
}

const CREDENTIALS: &str = "<SECURITY>\n* Only use GITHUB_TOKEN and other credentials in ways the user has explicitly requested and would expect.\n</SECURITY>";
const EDITOR: &str = "Custom editing tool for viewing, creating and editing files in plain-text format\n\nNotes for using the `str_replace` command:\n* The `old_str` parameter should match EXACTLY one or more consecutive lines from the original file.";

#[test]
fn a_constant_or_an_argument_s_value_is_not_drift() {
    assert!(names(&openhands(CREDENTIALS, EDITOR)).is_empty());
    // A renamed tool beside them still is, in the prompt and in a description.
    let system = format!("{CREDENTIALS}\nUse run_shell to run commands.");
    assert_eq!(names(&openhands(&system, EDITOR)), ["run_shell"]);
    let description = format!("{EDITOR}\n* To see a file first, call view_file.");
    assert_eq!(names(&openhands(CREDENTIALS, &description)), ["view_file"]);
    // "the X command" names a command, whether or not the schema lists it.
    let description = "Notes for using the `find_replace` command: it edits in place.";
    assert!(names(&openhands(CREDENTIALS, description)).is_empty());
}

#[test]
fn a_constant_case_name_is_a_tool_where_the_catalog_writes_tools_so() {
    // Composio's tools are written in constant case: there a renamed one is drift.
    let case = Case::from_value(&json!({
        "system": "Use GITHUB_STAR_REPO to star a repository.",
        "tools": [{"name": "GITHUB_STAR_A_REPOSITORY_FOR_THE_AUTHENTICATED_USER",
                   "description": "Stars a repository."}]
    }))
    .expect("the case reads");
    assert_eq!(names(&case), ["GITHUB_STAR_REPO"]);
}

/// smolagents' `CodeAgent` prompt (`src/smolagents/prompts/code_agent.yaml` of
/// huggingface/smolagents at e3a5b899, Apache-2.0): its examples' opening line, its last example
/// and the disclaimer after them, verbatim but for its code-block tags, rendered as `<code>`.
/// The examples call and name tools in words ("I will use the tool `wikipedia_search`").
const CODE_AGENT: &str = "Here are a few examples using notional tools:\n---\nTask: \"What is the current age of the pope, raised to the power 0.36?\"\n\nThought: I will use the tool `wikipedia_search` to get the age of the pope, and confirm that with a web search.\n<code>\npope_age_wiki = wikipedia_search(query=\"current pope age\")\nprint(\"Pope age as per wikipedia:\", pope_age_wiki)\npope_age_search = web_search(query=\"current pope age\")\nprint(\"Pope age as per google search:\", pope_age_search)\n</code>\nObservation:\nPope age: \"The pope Francis is currently 88 years old.\"\n\nThought: I know that the pope is 88 years old. Let's compute the result using Python code.\n<code>\npope_current_age = 88 ** 0.36\nfinal_answer(pope_current_age)\n</code>\n\nAbove examples were using notional tools that might not exist for you. On top of performing computations in the Python code snippets that you create, you only have access to these tools, behaving like regular python functions:";

#[test]
fn names_between_a_prompt_s_disclaimers_are_examples() {
    let case = Case::from_value(&json!({
        "system": CODE_AGENT,
        "tools": [{"name": "web_search", "description": "Searches the web."},
                  {"name": "final_answer", "description": "Gives the final answer."}]
    }))
    .expect("the case reads");
    assert!(lint(&case).is_empty(), "{:#?}", lint(&case));
    // Outside the examples, words still count.
    let system = format!("{CODE_AGENT}\nAlways use lookup_customer first.");
    let case = Case::from_value(&json!({
        "system": system,
        "tools": [{"name": "web_search", "description": "Searches the web."}]
    }))
    .expect("the case reads");
    assert_eq!(names(&case), ["lookup_customer"]);
}

/// In a prompt "you" is the model: "you can call x(…)" tells it to call x, and a described
/// call describes a tool it is taught, so both are drift there (in a response they hand code to
/// the reader, see `causes::prose_on_code_is_not_a_call`).
#[test]
fn a_prompt_s_you_is_the_model() {
    for system in [
        "You should always use lookup_customer before answering.",
        "You can call lookup_customer(email) to find an account.",
        "If you call lookup_customer first, the answer is faster.",
        "`lookup_customer(email)` returns the account.",
    ] {
        let case = Case::from_value(&json!({
            "system": system,
            "tools": [{"name": "find_customer", "description": "Find a customer."}]
        }))
        .expect("the case reads");
        assert_eq!(names(&case), ["lookup_customer"], "{system}");
    }
}
