//! What `toolcall mcp record` keeps out of every file it writes: the values of the variables
//! named with `--env`, what `--redact-pattern REGEX` matches, and what `--redact-path JSONPATH`
//! selects in a message.
//!
//! A secret reaches a recording by many ways: a server that prints its environment (the
//! everything server's `get-env`), a result that echoes a token, a client that sends one as an
//! argument, a tool description. So redaction sits where a message is first copied down, before
//! the journal and the session see it ([`Redaction::line`]): the journal, the flow and the
//! snapshot are all made from the redacted copy, and what is forwarded between client and server
//! is never touched. A secret is replaced by a *mark* (private-use characters around the
//! variable's name, or around nothing for a pattern or a path), which only the writing turns
//! into text:
//!
//! | redacted by | in the flow ([`flow_value`]) | in the snapshot ([`plain_value`]) |
//! |---|---|---|
//! | `--env NAME` | `${NAME}`: a variable, which the replay expands back to the value | `${NAME}` |
//! | `--redact-pattern`, `--redact-path` | `[REDACTED]` | `[REDACTED]` |
//!
//! The protocol's names are never redacted by a variable's value: a tool's, prompt's or
//! resource's name or URI in a request or a listing, and object keys (a pattern still reaches
//! keys). A short value would otherwise rewrite them (`read` in `read_file`), and a flow's
//! reader expands neither a tool's name nor a pointer's keys.
//!
//! In a flow every other `$` of what the session said is written `$$` (the rule of
//! [`toolcall_mcp::escape_template`]), so the one `${NAME}` in a recorded string is the one the
//! redaction put there, and a replay reads the value from its own environment: an `expect` of
//! a redacted value still passes. A value redacted to `[REDACTED]` cannot be expected; the
//! recording leaves it out of `expect` and says so.

use regex::Regex;
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use crate::errors::RecordError;

/// Opens a mark.
const OPEN: char = '\u{F8F0}';
/// Closes a mark.
const CLOSE: char = '\u{F8F1}';
/// What a pattern or a path redaction is written as: the replay's `verify` knows it by this
/// (it never compares it, and `--update` keeps it).
pub const REDACTED: &str = toolcall_mcp::REDACTED;

/// What to redact, ready to apply.
#[derive(Clone, Debug, Default)]
pub struct Redaction {
    /// `(value, NAME)`, the longest value first (one that holds another is taken whole).
    values: Vec<(String, String)>,
    patterns: Vec<Regex>,
    paths: Vec<JsonPath>,
}

impl Redaction {
    /// The redaction of the variables `env` names (their values in this process's environment;
    /// an unset or empty one has nothing to redact), `patterns` and `paths`. A pattern that is
    /// not a regex, or a path that is not JSONPath, is refused, naming the option and the value.
    pub fn new(env: &[String], patterns: &[String], paths: &[String]) -> Result<Self, RecordError> {
        let values = env
            .iter()
            .filter_map(|name| {
                let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
                Some((value, name.clone()))
            })
            .collect();
        Redaction::with_values(values, patterns, paths)
    }

    /// As [`Redaction::new`], with the values given as `(value, NAME)`.
    pub fn with_values(
        mut values: Vec<(String, String)>,
        patterns: &[String],
        paths: &[String],
    ) -> Result<Self, RecordError> {
        values.retain(|(value, _)| !value.is_empty());
        values.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.1.cmp(&b.1)));
        let patterns = patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|e| RecordError::Invalid {
                    option: "--redact-pattern",
                    value: p.clone(),
                    why: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let paths = paths
            .iter()
            .map(|p| {
                JsonPath::parse(p).map_err(|e| RecordError::Invalid {
                    option: "--redact-path",
                    value: p.clone(),
                    why: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Redaction {
            values,
            patterns,
            paths,
        })
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.patterns.is_empty() && self.paths.is_empty()
    }

    /// The copy of one line to journal and record: the line itself when there is nothing to
    /// redact; else the message it holds, redacted ([`Redaction::message`]), or, for a line that
    /// is not JSON, its text redacted.
    pub fn line<'a>(&self, line: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if self.is_empty() {
            return std::borrow::Cow::Borrowed(line);
        }
        let text = String::from_utf8_lossy(line);
        let redacted = match serde_json::from_str::<Value>(text.trim()) {
            Ok(message) => {
                let mut out = self.message(&message).to_string();
                if text.ends_with('\n') {
                    out.push('\n');
                }
                out
            }
            Err(_) => self.text(&text),
        };
        std::borrow::Cow::Owned(redacted.into_bytes())
    }

    /// `message` with what each path selects replaced by a mark, then every string redacted by
    /// [`Redaction::text`], but for the protocol's names: the tool, prompt or resource a
    /// request names (`params.name`, `params.uri`) and the names a listing gives, and, of a
    /// variable's value, object keys. Those are identifiers a flow and a
    /// snapshot must keep as the server has them (the reader never expands a tool's name:
    /// `--env MODE` with the value `read` made `read_file` the unknown tool `${MODE}_file`).
    pub fn message(&self, message: &Value) -> Value {
        let mut message = message.clone();
        for path in &self.paths {
            let pointers: Vec<String> = path
                .query_located(&message)
                .locations()
                .map(|l| l.to_json_pointer())
                .collect();
            for pointer in pointers {
                if let Some(value) = message.pointer_mut(&pointer) {
                    *value = Value::String(mark(""));
                }
            }
        }
        let mut redacted = self.value(&message);
        for pointer in names(&message) {
            if let (Some(name), Some(slot)) =
                (message.pointer(&pointer), redacted.pointer_mut(&pointer))
            {
                *slot = name.clone();
            }
        }
        redacted
    }

    /// An object key: what a pattern matches is redacted (the user named its shape, a token
    /// used as a key), a variable's value is not (a key is a name a pointer or a schema holds;
    /// a value that is part of one, `read` in `read_mode`, is no secret there).
    fn key(&self, key: &str) -> String {
        let mut key = key.to_owned();
        for pattern in &self.patterns {
            key = pattern.replace_all(&key, mark("").as_str()).into_owned();
        }
        key
    }

    fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.key(k), self.value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// `text` with each variable's value replaced by its mark, then what each pattern matches
    /// (between the marks, never inside one) by the redacted mark. The values go first: a
    /// pattern that matched part of a secret would leave the rest of it.
    pub fn text(&self, text: &str) -> String {
        if self.values.is_empty() && self.patterns.is_empty() {
            return text.to_owned();
        }
        let mut pieces = vec![Piece::Text(text.to_owned())];
        for (value, name) in &self.values {
            pieces = pieces
                .into_iter()
                .flat_map(|piece| match piece {
                    Piece::Text(t) if t.contains(value.as_str()) => {
                        let mut out = Vec::new();
                        for (i, part) in t.split(value.as_str()).enumerate() {
                            if i > 0 {
                                out.push(Piece::Mark(name.clone()));
                            }
                            out.push(Piece::Text(part.to_owned()));
                        }
                        out
                    }
                    other => vec![other],
                })
                .collect();
        }
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Mark(name) => out.push_str(&mark(&name)),
                Piece::Text(t) => {
                    let mut t = t;
                    for pattern in &self.patterns {
                        t = pattern.replace_all(&t, mark("").as_str()).into_owned();
                    }
                    out.push_str(&t);
                }
            }
        }
        out
    }
}

/// The JSON pointers of the names in a message: what a request names (`/params/name`,
/// `/params/uri`, a completion's `/params/ref/name`) and each listed tool's, prompt's,
/// resource's or template's `name` (and `uri`, `uriTemplate`).
fn names(message: &Value) -> Vec<String> {
    let mut out: Vec<String> = [
        "/params/name",
        "/params/uri",
        "/params/ref/name",
        "/params/ref/uri",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for list in ["tools", "prompts", "resources", "resourceTemplates"] {
        let count = message["result"][list].as_array().map_or(0, Vec::len);
        for i in 0..count {
            for member in ["name", "uri", "uriTemplate"] {
                out.push(format!("/result/{list}/{i}/{member}"));
            }
        }
    }
    out
}

enum Piece {
    Text(String),
    Mark(String),
}

/// The mark of the variable `name` (`""`: of a pattern or a path).
fn mark(name: &str) -> String {
    format!("{OPEN}{name}{CLOSE}")
}

/// `text` cut into plain runs and marks (`Err(name)`).
fn split_marks(text: &str) -> Vec<Result<&str, &str>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len_utf8()..];
        let Some(end) = after.find(CLOSE) else { break };
        let name = &after[..end];
        // A mark holds a variable's name or nothing; anything else is the text it looks like.
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(Ok(&rest[..start + OPEN.len_utf8()]));
            rest = after;
            continue;
        }
        if start > 0 {
            out.push(Ok(&rest[..start]));
        }
        out.push(Err(name));
        rest = &after[end + CLOSE.len_utf8()..];
    }
    if !rest.is_empty() {
        out.push(Ok(rest));
    }
    out
}

/// A recorded string as a flow writes it: each `$` of what was said doubled (it reads back as
/// itself), each variable's mark as `${NAME}` (the replay's own value), each other mark as
/// [`REDACTED`].
pub fn flow_text(text: &str) -> String {
    written(text, toolcall_mcp::escape_template)
}

/// A recorded string as a file that is not a template writes it (a snapshot, a note): marks as
/// in [`flow_text`], every other character as it is.
pub fn plain_text(text: &str) -> String {
    written(text, str::to_owned)
}

fn written(text: &str, plain: impl Fn(&str) -> String) -> String {
    if !text.contains(OPEN) {
        return plain(text);
    }
    split_marks(text)
        .into_iter()
        .map(|piece| match piece {
            Ok(run) => plain(run),
            Err("") => REDACTED.to_owned(),
            Err(name) => format!("${{{name}}}"),
        })
        .collect()
}

/// [`flow_text`] over every string inside `value`; keys, which a flow's reader never expands,
/// as [`plain_text`].
pub fn flow_value(value: &Value) -> Value {
    map_strings(value, &flow_text)
}

/// [`plain_text`] over every string and key inside `value`.
pub fn plain_value(value: &Value) -> Value {
    map_strings(value, &plain_text)
}

fn map_strings(value: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (plain_text(k), map_strings(v, f)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// Whether a string inside `value` holds a mark that is written [`REDACTED`] (a value that
/// cannot be expected: the replay would compare the server's answer with the word).
pub fn holds_redacted(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains(OPEN) && split_marks(s).contains(&Err("")),
        Value::Array(items) => items.iter().any(holds_redacted),
        Value::Object(map) => map.values().any(holds_redacted),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redaction(patterns: &[&str], paths: &[&str]) -> Redaction {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Redaction::with_values(
            vec![
                ("s3cr3t".into(), "TOKEN".into()),
                ("s3cr3t-long".into(), "LONG".into()),
            ],
            &own(patterns),
            &own(paths),
        )
        .unwrap()
    }

    /// A value named with `--env` is redacted in what is said, never in the protocol's names:
    /// a tool's name in a call and in a listing, and object keys, stay as the server has them.
    #[test]
    fn names_and_keys_are_never_redacted() {
        let r = Redaction::with_values(vec![("read".into(), "MODE".into())], &[], &[]).unwrap();
        let call = r.message(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"read_mode": "read it"}}}));
        assert_eq!(call["params"]["name"], "read_file");
        let arguments = call["params"]["arguments"].as_object().unwrap();
        assert_eq!(arguments.keys().collect::<Vec<_>>(), ["read_mode"]);
        assert_eq!(
            flow_text(arguments["read_mode"].as_str().unwrap()),
            "${MODE} it"
        );
        let listed = r.message(&json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "read_file", "description": "Reads a file."}]}}));
        assert_eq!(listed["result"]["tools"][0]["name"], "read_file");
        assert_eq!(
            plain_text(
                listed["result"]["tools"][0]["description"]
                    .as_str()
                    .unwrap()
            ),
            "Reads a file."
        );
        let said = r.message(&json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [
            {"type": "text", "text": "I read it"}]}}));
        assert_eq!(
            flow_text(said["result"]["content"][0]["text"].as_str().unwrap()),
            "I ${MODE} it"
        );
    }

    #[test]
    fn values_become_variables_and_other_dollars_stay_data() {
        let r = redaction(&["tok_[a-z0-9]+"], &[]);
        let said = r.text("a $5 s3cr3t-long, s3cr3t and tok_ab12 ${HOME}");
        assert_eq!(
            flow_text(&said),
            "a $$5 ${LONG}, ${TOKEN} and [REDACTED] $${HOME}"
        );
        assert_eq!(
            plain_text(&said),
            "a $5 ${LONG}, ${TOKEN} and [REDACTED] ${HOME}"
        );
        // A pattern never cuts into a variable's mark.
        let r = redaction(&["[A-Z]+"], &[]);
        assert_eq!(flow_text(&r.text("s3cr3t")), "${TOKEN}");
        assert_eq!(flow_text(&r.text("s3cr3t XY")), "${TOKEN} [REDACTED]");
    }

    #[test]
    fn paths_select_in_the_message_and_patterns_reach_keys() {
        let r = redaction(
            &["tok_[a-z0-9]+"],
            &["$.result.structuredContent.session", "$..password"],
        );
        let message = json!({"id": 1, "result": {"structuredContent": {
            "session": {"id": "x"}, "user": {"password": "hunter2"}, "s3cr3t": 1, "tok_ab1": 2}}});
        let got = plain_value(&r.message(&message));
        assert_eq!(
            got,
            json!({"id": 1, "result": {"structuredContent": {
                "session": "[REDACTED]", "user": {"password": "[REDACTED]"}, "s3cr3t": 1,
                "[REDACTED]": 2}}})
        );
        assert!(holds_redacted(&r.message(&message)));
        assert!(!holds_redacted(&r.message(&json!({"a": "s3cr3t"}))));
    }

    #[test]
    fn a_line_is_redacted_as_the_message_it_holds_or_as_text() {
        let r = redaction(&[], &[]);
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"s3cr3t\\u0021\"}}\n";
        let got = String::from_utf8(r.line(line).into_owned()).unwrap();
        assert!(!got.contains("s3cr3t") && got.ends_with('\n'), "{got}");
        let junk = String::from_utf8(r.line(b"banner s3cr3t\n").into_owned()).unwrap();
        assert_eq!(plain_text(&junk), "banner ${TOKEN}\n");
        // Nothing to redact: the line itself.
        let none = Redaction::default();
        assert!(matches!(none.line(line), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_bad_pattern_or_path_is_refused_naming_it() {
        let e = Redaction::with_values(vec![], &["(".into()], &[]).unwrap_err();
        assert!(e.to_string().contains("--redact-pattern `(`"), "{e}");
        let e = Redaction::with_values(vec![], &[], &["result.x".into()]).unwrap_err();
        assert!(e.to_string().contains("--redact-path `result.x`"), "{e}");
    }
}
