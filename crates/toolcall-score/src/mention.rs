//! Tool-like names mentioned in text.
//!
//! Two readers need them: scoring, for a response that writes a call in prose or as a
//! JSON-looking block inside a text part instead of making a structured call; and the drift lint,
//! for a prompt that tells the model to use a name the catalog no longer has.
//!
//! A bare identifier in text is weak evidence (`account_id` is a parameter, `snake_case` a style),
//! so a mention counts only in a context that says "this is a tool being called": a JSON object
//! with a name and arguments, call syntax (`get_balance(`), or a calling verb or the word "tool"
//! next to it ("call lookup_customer", "the `refund` tool"), unless negated ("I can't call x").

use std::ops::Range;

use serde_json::Value;

/// How a name was recognised as a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// A JSON object inside the text with a name and arguments.
    JsonBlock,
    /// `name(` call syntax.
    CallSyntax,
    /// A calling verb before it, or "tool"/"function" after it.
    Phrase,
}

/// A tool-like name found in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mention {
    /// The name as written.
    pub name: String,
    /// Why it counts.
    pub evidence: Evidence,
    /// The sentence it was found in, clipped.
    pub context: String,
}

const VERBS: &[&str] = &[
    "call",
    "calls",
    "calling",
    "called",
    "use",
    "uses",
    "using",
    "invoke",
    "invokes",
    "invoking",
    "run",
    "runs",
    "running",
    "execute",
    "executing",
    "trigger",
    "triggering",
    "try",
    "trying",
    "via",
];
const FILLERS: &[&str] = &["the", "a", "an", "tool", "function", "now", "first", "then"];
const NEGATIONS: &[&str] = &["not", "no", "never", "cannot", "without", "unable", "nor"];
const NOUNS: &[&str] = &["tool", "function", "endpoint", "action"];
const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "parameters",
    "input",
    "args",
    "params",
    "kwargs",
];
const NAME_KEYS: &[&str] = &[
    "name",
    "tool",
    "tool_name",
    "function_name",
    "recipient_name",
];

/// Longest name considered; longer runs are prose, not identifiers.
const MAX_NAME: usize = 128;
/// JSON blocks tried per text, so a text full of braces stays linear.
const MAX_JSON_ATTEMPTS: usize = 64;

/// The call-like mentions in `text`, in order of appearance, each name once.
pub(crate) fn mentions(text: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    let mut push = |name: &str, evidence: Evidence, at: usize| {
        if !name.is_empty() && name.len() <= MAX_NAME && !found.iter().any(|m| m.name == name) {
            found.push(Mention {
                name: name.to_owned(),
                evidence,
                context: sentence_around(text, at),
            });
        }
    };
    let (block_names, blocks) = json_blocks(text);
    for (name, at) in block_names {
        push(&name, Evidence::JsonBlock, at);
    }
    let tokens = tokenize(text);
    for (i, token) in tokens.iter().enumerate() {
        let in_block = blocks.iter().any(|b| b.contains(&token.start));
        // `<tool_call>` and `</tool_call>` are markup around a call, not a call.
        let in_tag = text[..token.start].ends_with('<') || text[..token.start].ends_with("</");
        if in_block || in_tag || !is_tool_like(token.text) {
            continue;
        }
        if text[token.end..].starts_with('(') {
            push(token.text, Evidence::CallSyntax, token.start);
        } else if called_by_phrase(&tokens, i) {
            push(token.text, Evidence::Phrase, token.start);
        }
    }
    found
}

/// Whether `name` occurs in `text` as a whole word (not inside a longer identifier).
pub(crate) fn mentions_word(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Identifier shapes tool names take: snake_case (`get_balance`), camelCase with a real first
/// word (`getBalance`), or namespaced (`github.create_issue`, `fs/read_file`).
pub(crate) fn is_tool_like(token: &str) -> bool {
    let Some(first) = token.chars().next() else {
        return false;
    };
    if token.len() < 3 || token.len() > MAX_NAME || !(first.is_ascii_alphabetic() || first == '_') {
        return false;
    }
    if token.contains("://") || token.contains("..") {
        return false;
    }
    let core = token.trim_matches('_');
    if core.contains('_') && core.chars().any(|c| c.is_ascii_alphabetic()) {
        return true;
    }
    // camelCase: at least two lower-case letters, then an upper-case one.
    let lower_run = token.chars().take_while(|c| c.is_ascii_lowercase()).count();
    lower_run >= 2
        && token.chars().all(|c| c.is_ascii_alphanumeric())
        && token.chars().any(|c| c.is_ascii_uppercase())
}

struct Token<'a> {
    text: &'a str,
    lower: String,
    start: usize,
    end: usize,
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-' | '\'' | '’')
}

fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, is_token_char(c)) {
            (None, true) => start = Some(at),
            (Some(s), false) => {
                start = None;
                let raw = &text[s..at];
                let trimmed = raw.trim_matches(|c| matches!(c, '.' | ':' | '/' | '-' | '\'' | '’'));
                if trimmed.is_empty() {
                    continue;
                }
                let offset = s + raw.find(trimmed).unwrap_or(0);
                tokens.push(Token {
                    text: trimmed,
                    lower: trimmed.to_lowercase(),
                    start: offset,
                    end: offset + trimmed.len(),
                });
            }
            _ => {}
        }
    }
    tokens
}

/// A calling verb up to two filler words before token `i`, or a noun like "tool" right after it,
/// with no negation just before.
fn called_by_phrase(tokens: &[Token<'_>], i: usize) -> bool {
    let mut j = i;
    let mut anchor = None;
    for _ in 0..3 {
        if j == 0 {
            break;
        }
        j -= 1;
        let word = tokens[j].lower.as_str();
        if VERBS.contains(&word) {
            anchor = Some(j);
            break;
        }
        if !FILLERS.contains(&word) {
            break;
        }
    }
    if anchor.is_none()
        && tokens
            .get(i + 1)
            .is_some_and(|t| NOUNS.contains(&t.lower.as_str()))
    {
        anchor = Some(i);
    }
    let Some(anchor) = anchor else {
        return false;
    };
    !tokens[anchor.saturating_sub(3)..anchor].iter().any(|t| {
        NEGATIONS.contains(&t.lower.as_str())
            || t.lower.ends_with("n't")
            || t.lower.ends_with("n’t")
    })
}

/// Names of calls written as JSON values inside the text, with the byte offset of each block,
/// and the byte ranges of every JSON object or array found.
fn json_blocks(text: &str) -> (Vec<(String, usize)>, Vec<Range<usize>>) {
    let mut names = Vec::new();
    let mut blocks = Vec::new();
    if !text.contains('"') {
        return (names, blocks);
    }
    let mut attempts = 0;
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let at = from + offset;
        attempts += 1;
        if attempts > MAX_JSON_ATTEMPTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                collect_call_names(&value, &mut names, at);
                let end = at + stream.byte_offset().max(1);
                blocks.push(at..end);
                from = end;
            }
            _ => from = at + 1,
        }
    }
    (names, blocks)
}

/// Call names in a JSON value: objects with a name key and an arguments key, or a
/// `{"function": {"name": ..}}` wrapper; arrays and wrapper objects are searched, argument
/// values are not (they may hold a `name` of their own).
fn collect_call_names(value: &Value, names: &mut Vec<(String, usize)>, at: usize) {
    match value {
        Value::Array(items) => {
            for item in items {
                collect_call_names(item, names, at);
            }
        }
        Value::Object(object) => {
            let has_arguments = ARGUMENT_KEYS.iter().any(|k| object.contains_key(*k));
            if let Some(Value::Object(function)) = object.get("function") {
                if let Some(Value::String(name)) = function.get("name") {
                    names.push((name.clone(), at));
                    return;
                }
            }
            if has_arguments {
                let named = NAME_KEYS
                    .iter()
                    .chain(std::iter::once(&"function"))
                    .find_map(|k| object.get(*k).and_then(Value::as_str));
                if let Some(name) = named {
                    names.push((name.to_owned(), at));
                    return;
                }
            }
            for (key, child) in object {
                if !ARGUMENT_KEYS.contains(&key.as_str()) {
                    collect_call_names(child, names, at);
                }
            }
        }
        _ => {}
    }
}

/// The sentence (or line) around byte offset `at`, clipped to 160 characters.
fn sentence_around(text: &str, at: usize) -> String {
    // A sentence ends at a newline, or at `.`, `!` or `?` followed by white space (not the
    // point in `50.00` or `github.create_issue`).
    let bytes = text.as_bytes();
    let ends_sentence = |i: usize| {
        bytes[i] == b'\n'
            || (matches!(bytes[i], b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()))
    };
    let start = (0..at)
        .rev()
        .find(|&i| ends_sentence(i))
        .map_or(0, |i| i + 1);
    let end = (at..bytes.len())
        .find(|&i| ends_sentence(i))
        .unwrap_or(bytes.len());
    let sentence = text[start..end].trim();
    match sentence.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &sentence[..cut]),
        None => sentence.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        mentions(text).into_iter().map(|m| m.name).collect()
    }

    #[test]
    fn finds_names_in_calling_phrases() {
        assert_eq!(names("I will call get_balance now."), ["get_balance"]);
        assert_eq!(
            names("Use lookup_customer to find an account."),
            ["lookup_customer"]
        );
        assert_eq!(
            names("Calling the `search_flights` tool first"),
            ["search_flights"]
        );
        assert_eq!(
            names("the refund_payment tool handles it"),
            ["refund_payment"]
        );
        assert_eq!(names("Let me try getWeather."), ["getWeather"]);
    }

    #[test]
    fn finds_call_syntax_and_json_blocks() {
        assert_eq!(names("get_balance(account_id=\"acc_1\")"), ["get_balance"]);
        let block =
            "Sure:\n```json\n{\"name\": \"cancel_order\", \"arguments\": {\"name\": \"x\"}}\n```";
        assert_eq!(names(block), ["cancel_order"]);
        let wrapped = "<tool_call>{\"function\": {\"name\": \"issue_refund\"}}</tool_call>";
        assert_eq!(names(wrapped), ["issue_refund"]);
        let list = "[{\"tool\": \"a_b\", \"input\": {}}, {\"tool\": \"c_d\", \"args\": {}}]";
        assert_eq!(names(list), ["a_b", "c_d"]);
    }

    #[test]
    fn ignores_plain_and_negated_mentions() {
        assert!(names("The account_id field is required.").is_empty());
        assert!(names("I can't call delete_account for you.").is_empty());
        assert!(names("I do not use snake_case here.").is_empty());
        assert!(names("See https://example.com/some_path for more.").is_empty());
        assert!(names("Braces { without json } and {\"just\": \"data\"}.").is_empty());
    }

    #[test]
    fn gives_the_sentence_as_context() {
        let found = mentions("First line. Then use lookup_customer to find it! Done.");
        assert_eq!(found[0].context, "Then use lookup_customer to find it");
        let found =
            mentions("Refunds up to 50.00 are fine; above that, call escalate_to_human. Stop.");
        assert_eq!(
            found[0].context,
            "Refunds up to 50.00 are fine; above that, call escalate_to_human"
        );
    }

    #[test]
    fn matches_whole_words_only() {
        assert!(mentions_word("use lookup_customer.", "lookup_customer"));
        assert!(!mentions_word("use lookup_customer_v2", "lookup_customer"));
        assert!(!mentions_word("my_lookup_customer", "lookup_customer"));
        assert!(!mentions_word("anything", ""));
    }

    #[test]
    fn recognises_tool_like_identifiers() {
        for yes in [
            "get_balance",
            "getBalance",
            "github.create_issue",
            "_private_tool",
        ] {
            assert!(is_tool_like(yes), "{yes}");
        }
        for no in [
            "hello",
            "iPhone",
            "e.g",
            "__",
            "a_",
            "3_items",
            "http://x_y",
        ] {
            assert!(!is_tool_like(no), "{no}");
        }
    }
}
