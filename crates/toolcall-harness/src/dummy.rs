//! The dummy agent: a deterministic stand-in for a model, so the structural causes of unknown
//! tool names show up in CI with no model in the room.
//!
//! It behaves like a pattern-following model, trying in order:
//!
//! 1. **continue the pattern**: if the transcript shows tool calls, call the last one again, with
//!    the same arguments, whether or not the tool is still defined (a retired tool's name comes
//!    back exactly like this);
//! 2. **follow the prompt**: if the system prompt tells it to "use X" or "call X", call X (the
//!    instruction whose wording best matches the user's last message, else the first), whether
//!    or not X is defined (prompt drift);
//! 3. **pick the best tool**: call the defined tool whose name and description share the most
//!    words with the user's last message;
//! 4. otherwise, answer in text.
//!
//! Its response is a [`Response`] in the case's format (Anthropic when the case names none), so
//! the real scorer judges it. The verdict over every case is the harness's insta snapshot: any
//! change to a case, a catalog or the scorer shows up in review as a changed line.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};
use toolcall_score::{Arguments, Case, Format, Response, Role, ToolCall};

/// What the dummy agent answers to `case`.
pub fn respond(case: &Case) -> Response {
    let format = case.format.unwrap_or(Format::Anthropic);
    let mut response = Response::empty(format);
    let call = continue_pattern(case).or_else(|| {
        let name = follow_prompt(case).or_else(|| best_tool(case))?;
        Some((Arguments::Parsed(arguments_for(case, &name)), name))
    });
    match call {
        Some((arguments, name)) => {
            response.calls.push(ToolCall {
                id: Some("dummy_call_1".to_owned()),
                name,
                namespace: None,
                arguments,
                builtin: None,
            });
            response.stop_reason = stop_reason(format, true);
        }
        None => {
            response
                .text
                .push("I can answer that without calling a tool.".to_owned());
            response.stop_reason = stop_reason(format, false);
        }
    }
    response
}

/// Rule 1: the last call in the transcript, again.
fn continue_pattern(case: &Case) -> Option<(Arguments, String)> {
    let last = case.transcript.calls().last()?;
    let arguments = match &last.arguments {
        Arguments::Text { .. } => last.arguments.clone(),
        other => match other.value() {
            Some(Value::Object(_)) => other.clone(),
            _ => Arguments::Parsed(json!({})),
        },
    };
    Some((arguments, last.name.clone()))
}

/// Verbs that introduce a tool name in an instruction.
const VERBS: [&str; 7] = ["use", "call", "invoke", "using", "calling", "run", "prefer"];
/// Words that may stand between the verb and the name.
const FILLERS: [&str; 7] = ["the", "a", "an", "tool", "function", "to", "always"];

/// Rule 2: a tool name the system prompt tells the model to use.
fn follow_prompt(case: &Case) -> Option<String> {
    let known: BTreeSet<&str> = case
        .catalog
        .names()
        .chain(case.parent.iter().flat_map(|p| p.names()))
        .collect();
    let tokens: Vec<&str> = case.system.split_whitespace().collect();
    let mut instructions: Vec<(String, usize)> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if !VERBS.contains(&clean(token).to_lowercase().as_str()) {
            continue;
        }
        let named = tokens[i + 1..]
            .iter()
            .take(4)
            .map(|t| clean(t))
            .find(|t| !FILLERS.contains(&t.to_lowercase().as_str()))
            .filter(|t| looks_like_tool(t, &known));
        if let Some(name) = named {
            let context = tokens[i.saturating_sub(8)..(i + 12).min(tokens.len())].join(" ");
            instructions.push((name.to_owned(), overlap(&words(&context), case)));
        }
    }
    // The best-matching instruction; on a tie, the first.
    let best = instructions.iter().map(|(_, score)| *score).max()?;
    instructions
        .into_iter()
        .find(|(_, score)| *score == best)
        .map(|(name, _)| name)
}

/// Rule 3: the defined tool sharing the most words with the user's last message.
fn best_tool(case: &Case) -> Option<String> {
    let mut best: Option<(&str, usize)> = None;
    for tool in case.catalog.tools() {
        let mut vocabulary = words(&split_identifier(&tool.name));
        vocabulary.extend(words(&tool.description));
        let score = overlap(&vocabulary, case);
        if score > 0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((&tool.name, score));
        }
    }
    best.map(|(name, _)| name.to_owned())
}

/// How many distinct words of `vocabulary` the user's last message contains.
fn overlap(vocabulary: &BTreeSet<String>, case: &Case) -> usize {
    let asked = case
        .transcript
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User && !m.text.is_empty())
        .map(|m| words(&m.text.join(" ")))
        .unwrap_or_default();
    asked.intersection(vocabulary).count()
}

const STOP_WORDS: [&str; 24] = [
    "the", "and", "for", "with", "this", "that", "from", "you", "your", "are", "what", "any",
    "can", "please", "use", "tool", "tools", "call", "into", "have", "has", "was", "our", "one",
];

/// Lower-cased content words, with a plural `s` dropped.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
            _ => w,
        })
        .collect()
}

/// `getInvoiceById` / `get_invoice-by.id` → `get invoice by id`.
fn split_identifier(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase();
        out.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    out
}

/// A token without surrounding quotes, backticks, brackets and sentence punctuation.
fn clean(token: &str) -> &str {
    token
        .trim_matches(|c: char| "`'\"()[]{}<>,;:!?*".contains(c))
        .trim_end_matches('.')
}

/// Whether a word in a prompt is a tool name rather than prose: a known name, or an identifier
/// with an inner `_`, `.`, `/`, `-` or a camelCase hump.
fn looks_like_tool(token: &str, known: &BTreeSet<&str>) -> bool {
    if token.is_empty() {
        return false;
    }
    if known.contains(token) {
        return true;
    }
    let identifier = token
        .chars()
        .all(|c| c.is_alphanumeric() || "_.-/".contains(c));
    let inner = &token[1..];
    let humped = token
        .chars()
        .zip(token.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    identifier && (inner.contains(['_', '.', '/', '-']) || humped)
}

/// Arguments a call to `name` would plausibly carry: a placeholder for each required property.
fn arguments_for(case: &Case, name: &str) -> Value {
    let mut arguments = Map::new();
    let Some(schema) = case.catalog.get(name).and_then(|t| t.input_schema.as_ref()) else {
        return Value::Object(arguments);
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for key in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(key));
        arguments.insert(key.to_owned(), placeholder(property));
    }
    Value::Object(arguments)
}

fn placeholder(schema: Option<&Value>) -> Value {
    let Some(schema) = schema else {
        return json!("example");
    };
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ => "string",
    };
    match kind {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        "null" => Value::Null,
        _ => json!("example"),
    }
}

/// The stop reason `format`'s provider gives such a turn.
fn stop_reason(format: Format, called: bool) -> Option<String> {
    format.stop_reason(called).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcall_score::{Catalog, Message, Tool, Transcript};

    fn case(system: &str, tools: &[(&str, &str)], transcript: Vec<Message>) -> Case {
        let mut case = Case::from_catalog(Catalog::new(tools.iter().map(|(n, d)| Tool::new(n, d))));
        case.system = system.to_owned();
        case.transcript = Transcript {
            messages: transcript,
        };
        case
    }

    fn user(text: &str) -> Message {
        let mut m = Message::new(Role::User);
        m.text.push(text.to_owned());
        m
    }

    fn called(name: &str) -> Message {
        let mut m = Message::new(Role::Assistant);
        m.calls
            .push(ToolCall::new(Some("c1"), name, json!({"id": 7})));
        m
    }

    fn names(response: &Response) -> Vec<&str> {
        response.calls.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn continues_the_pattern_even_with_a_retired_tool() {
        let c = case(
            "Use get_balance for balances.",
            &[("get_balance", "Current balance.")],
            vec![
                user("invoices?"),
                called("search_invoices"),
                user("balance?"),
            ],
        );
        let response = respond(&c);
        assert_eq!(names(&response), ["search_invoices"]);
        assert_eq!(
            response.calls[0].arguments,
            Arguments::Parsed(json!({"id": 7}))
        );
    }

    #[test]
    fn continues_a_custom_tool_call_with_its_free_text() {
        let mut last = Message::new(Role::Assistant);
        last.calls
            .push(ToolCall::custom(Some("c1"), "run_sql", "SELECT 1"));
        let c = case("", &[("run_sql", "Runs SQL.")], vec![user("again"), last]);
        let response = respond(&c);
        assert_eq!(names(&response), ["run_sql"]);
        assert_eq!(response.calls[0].arguments.text(), Some("SELECT 1"));
    }

    #[test]
    fn follows_the_instruction_that_best_matches_the_question() {
        let c = case(
            "To look up a customer, use `lookup_customer`. For refunds, call issue_refund.",
            &[("find_customer", "Find a customer.")],
            vec![user("Please refund order 12")],
        );
        assert_eq!(names(&respond(&c)), ["issue_refund"]);
        let c = case(
            "Always use the lookup_customer tool.",
            &[("find_customer", "Find a customer.")],
            vec![user("who is this?")],
        );
        assert_eq!(names(&respond(&c)), ["lookup_customer"]);
    }

    #[test]
    fn picks_the_catalog_tool_sharing_most_words_else_answers_in_text() {
        let c = case(
            "You are helpful. Use your judgement.",
            &[
                ("get_weather", "Weather forecast for a city."),
                ("listInvoices", "Invoices of an account."),
            ],
            vec![user("Show the invoices of account 9")],
        );
        assert_eq!(names(&respond(&c)), ["listInvoices"]);
        let c = case(
            "",
            &[("get_weather", "Weather forecast.")],
            vec![user("Tell me a joke")],
        );
        let response = respond(&c);
        assert!(response.calls.is_empty());
        assert_eq!(response.text.len(), 1);
    }

    #[test]
    fn fills_required_arguments_from_the_schema() {
        let mut c = case("", &[], vec![user("balance of acc_1")]);
        let mut tool = Tool::new("get_balance", "Balance of an account.");
        tool.input_schema = Some(json!({
            "type": "object",
            "properties": {"account_id": {"type": "string"}, "days": {"type": ["null", "integer"]},
                           "unit": {"enum": ["eur", "usd"]}, "verbose": {"type": "boolean"}},
            "required": ["account_id", "days", "unit"]
        }));
        c.catalog = Catalog::new([tool]);
        let response = respond(&c);
        assert_eq!(
            response.calls[0].arguments,
            Arguments::Parsed(json!({"account_id": "example", "days": 1, "unit": "eur"}))
        );
    }
}
