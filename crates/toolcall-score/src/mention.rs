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

use std::borrow::Cow;
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
pub(crate) struct Mention<'t> {
    /// The name as written (borrowed from the text unless it was a JSON string).
    pub name: Cow<'t, str>,
    /// Why it counts.
    pub evidence: Evidence,
    /// The byte offset it was found at, for [`Mention::context`].
    at: usize,
}

impl Mention<'_> {
    /// The sentence of `text` (the text it was found in) it was found in, clipped. Computed on
    /// demand: most mentions name a defined tool and are never reported.
    pub(crate) fn context(&self, text: &str) -> String {
        sentence_around(text, self.at)
    }
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
pub(crate) fn mentions<'a>(text: &'a str) -> Vec<Mention<'a>> {
    let mut found: Vec<Mention<'a>> = Vec::new();
    let mut push = |name: Cow<'a, str>, evidence: Evidence, at: usize| {
        if !name.is_empty() && name.len() <= MAX_NAME && !found.iter().any(|m| m.name == name) {
            found.push(Mention { name, evidence, at });
        }
    };
    let (block_names, blocks) = json_blocks(text);
    for (name, at) in block_names {
        push(Cow::Owned(name), Evidence::JsonBlock, at);
    }
    // Most text names no tool at all: without a tool-like token there is nothing to tokenize.
    if !any_tool_like(text) {
        return found;
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
            push(Cow::Borrowed(token.text), Evidence::CallSyntax, token.start);
        } else if called_by_phrase(&tokens, i) {
            push(Cow::Borrowed(token.text), Evidence::Phrase, token.start);
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
    start: usize,
    end: usize,
}

impl Token<'_> {
    /// The token in lower case, for comparing with the word lists. Only the few tokens around a
    /// tool-like one are ever compared, so this is computed on demand, and borrowed when the
    /// token has no upper-case letter (texts are long: one allocation per word was a hot spot).
    fn lower(&self) -> std::borrow::Cow<'_, str> {
        if self
            .text
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            std::borrow::Cow::Borrowed(self.text)
        } else {
            std::borrow::Cow::Owned(self.text.to_lowercase())
        }
    }
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-' | '\'' | '’')
}

/// What [`tokenize`] trims off a run of token characters.
fn trim_token(raw: &str) -> &str {
    raw.trim_matches(|c| matches!(c, '.' | ':' | '/' | '-' | '\'' | '’'))
}

/// Whether any token [`tokenize`] would cut from `text` [`is_tool_like`], without tokenizing.
///
/// A tool-like token holds a `_` (snake_case), or an ASCII upper-case letter right after an ASCII
/// letter or digit (camelCase: it starts with two lower-case letters and is all ASCII letters and
/// digits), and neither is trimmed off a token. So only the tokens around such bytes are cut
/// out and tested, and prose without them is one pass over its bytes.
fn any_tool_like(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let candidate =
            b == b'_' || (b.is_ascii_uppercase() && i > 0 && bytes[i - 1].is_ascii_alphanumeric());
        if !candidate {
            i += 1;
            continue;
        }
        // `i` is an ASCII byte, so both slices below are cut on character boundaries.
        let start = text[..i]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_token_char(c))
            .last()
            .map_or(i, |(at, _)| at);
        let end = text[i..]
            .char_indices()
            .find(|&(_, c)| !is_token_char(c))
            .map_or(text.len(), |(at, _)| i + at);
        if is_tool_like(trim_token(&text[start..end])) {
            return true;
        }
        i = end;
    }
    false
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
                let trimmed = trim_token(raw);
                if trimmed.is_empty() {
                    continue;
                }
                let offset = s + raw.find(trimmed).unwrap_or(0);
                tokens.push(Token {
                    text: trimmed,
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
        let word = tokens[j].lower();
        let word = word.as_ref();
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
            .is_some_and(|t| NOUNS.contains(&t.lower().as_ref()))
    {
        anchor = Some(i);
    }
    let Some(anchor) = anchor else {
        return false;
    };
    !tokens[anchor.saturating_sub(3)..anchor].iter().any(|t| {
        let lower = t.lower();
        NEGATIONS.contains(&lower.as_ref()) || lower.ends_with("n't") || lower.ends_with("n’t")
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
        mentions(text)
            .into_iter()
            .map(|m| m.name.into_owned())
            .collect()
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
        let text = "First line. Then use lookup_customer to find it! Done.";
        assert_eq!(
            mentions(text)[0].context(text),
            "Then use lookup_customer to find it"
        );
        let text = "Refunds up to 50.00 are fine; above that, call escalate_to_human. Stop.";
        assert_eq!(
            mentions(text)[0].context(text),
            "Refunds up to 50.00 are fine; above that, call escalate_to_human"
        );
    }

    #[test]
    fn the_quick_test_agrees_with_tokenizing() {
        let pieces = [
            "get_balance",
            "getBalance",
            "McDonald",
            "iPhone",
            "ab1C",
            "_",
            "__",
            "a_",
            "é_x",
            "x’_y",
            "’",
            "-",
            ".",
            "..",
            "://",
            " ",
            "\n",
            "Hello",
            "ID",
            "(",
            "{\"",
            "naïveX",
            "ñ",
            "3_items",
            "_get",
        ];
        let slow = |text: &str| tokenize(text).iter().any(|t| is_tool_like(t.text));
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}{b}{c}");
                    assert_eq!(any_tool_like(&text), slow(&text), "{text:?}");
                    let text = format!("{a} {b}{c}");
                    assert_eq!(any_tool_like(&text), slow(&text), "{text:?}");
                }
            }
        }
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
