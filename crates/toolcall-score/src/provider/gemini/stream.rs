//! Gemini's recorded stream: which events are its own, and how they fold into its
//! non-streaming body (see `provider/stream.rs` for the framing and the rules every format's
//! assembly keeps).
//!
//! Events: `GenerateContentResponse` chunks (`streamGenerateContent?alt=sse`, or the JSON array it
//! sends without `alt=sse`).
//!
//! Assembled: `candidates[0].content.parts` of every chunk in order, adjacent plain text parts
//! merged; a function call whose arguments came in pieces (`streamFunctionCallArguments`) is one
//! part with its whole `args`: a `functionCall` with a `name` and `willContinue` or `partialArgs`
//! opens it, nameless ones with `partialArgs` (`{jsonPath, stringValue | numberValue | boolValue
//! | nullValue, willContinue}`) fill it in (a string continues the string at its path), and a
//! piece that continues nothing, or a bare `{"functionCall": {}}`, ends it (one still open at the
//! end keeps what it got); the last `finishReason` and `finishMessage`; the last `promptFeedback`.

use serde_json::{Map, Value};

use crate::errors::ParseError;
use crate::provider::read::{array, get, get_any, object, opt_array};
use crate::provider::read::{opt_object, At, Object};
use crate::provider::fold::{append_to, at_event};
use crate::provider::fold::{Assembled, Fault, Origin};

/// A `GenerateContentResponse` chunk: `candidates`, or only `promptFeedback`.
pub(super) fn is_event(event: &Object) -> bool {
    ["candidates", "promptFeedback", "prompt_feedback"]
        .iter()
        .any(|k| event.contains_key(*k))
}

/// The body `events` assemble into.
pub(super) fn assemble(events: &[Value]) -> Result<Assembled, Fault> {
    let mut origins = Vec::new();
    let mut candidate: Option<Object> = None;
    let mut parts: Vec<Value> = Vec::new();
    let mut open: Vec<OpenCall> = Vec::new();
    let mut feedback: Option<(&str, Value)> = None;
    for (e, event) in events.iter().enumerate() {
        let Some(body) = event.as_object() else {
            continue;
        };
        let fault = at_event(e);
        let at = At::ROOT;
        if let Some((key, value)) = get_any(body, &["promptFeedback", "prompt_feedback"]) {
            feedback = Some((key, value.clone()));
        }
        let candidates_at = at.key("candidates");
        let Some(candidates) = get(body, "candidates") else {
            continue;
        };
        let candidates =
            array(candidates, &candidates_at, "an array of candidates").map_err(&fault)?;
        let Some(first) = candidates.first() else {
            continue;
        };
        let candidate_at = candidates_at.index(0);
        let first = object(first, &candidate_at, "a candidate object").map_err(&fault)?;
        let merged = candidate.get_or_insert_with(Map::new);
        for key in [
            "finishReason",
            "finish_reason",
            "finishMessage",
            "finish_message",
        ] {
            if let Some(value) = get(first, key) {
                merged.insert(key.to_owned(), value.clone());
                origins.push(Origin::new(
                    format!("/candidates/0/{key}"),
                    e,
                    format!("/candidates/0/{key}"),
                ));
            }
        }
        let content_at = candidate_at.key("content");
        let Some(content) =
            opt_object(first, "content", &candidate_at, "a content object").map_err(&fault)?
        else {
            continue;
        };
        if let Some(role) = get(content, "role") {
            merged.insert("role".to_owned(), role.clone());
        }
        let parts_at = content_at.key("parts");
        for (j, part) in opt_array(content, "parts", &content_at, "an array of parts")
            .map_err(&fault)?
            .iter()
            .enumerate()
        {
            let part_at = parts_at.index(j);
            match streamed_call(part, &part_at, &mut parts, &mut open).map_err(&fault)? {
                Piece::Started(k) => {
                    origins.push(Origin::new(
                        format!("/candidates/0/content/parts/{k}"),
                        e,
                        part_at.to_string(),
                    ));
                    continue;
                }
                Piece::Folded => continue,
                Piece::Plain => {}
            }
            if let (Some(last), Some(text)) = (parts.last_mut(), plain_text(part)) {
                if plain_text(last).is_some() && last.get("thought") == part.get("thought") {
                    append_to(last, "text", text);
                    continue;
                }
            }
            origins.push(Origin::new(
                format!("/candidates/0/content/parts/{}", parts.len()),
                e,
                parts_at.index(j).to_string(),
            ));
            parts.push(part.clone());
        }
    }

    // A call still open when the stream ends keeps the arguments it got, as everything else in a
    // stream cut short does.
    while let Some(call) = open.pop() {
        close(&mut parts, call);
    }
    let mut body = Map::new();
    if let Some(mut merged) = candidate {
        let role = merged.remove("role").unwrap_or_else(|| "model".into());
        let mut content = Map::new();
        content.insert("role".into(), role);
        content.insert("parts".into(), parts.into());
        merged.insert("content".into(), content.into());
        body.insert("candidates".into(), vec![Value::Object(merged)].into());
    }
    if let Some((key, value)) = feedback {
        body.insert(key.to_owned(), value);
    }
    Ok(Assembled {
        body: body.into(),
        origins,
        invalid: Vec::new(),
    })
}

/// A function call whose arguments a Gemini stream sends in pieces (`streamFunctionCallArguments`):
/// the index of its part among the assembled parts, and its arguments so far.
struct OpenCall {
    part: usize,
    args: Value,
}

/// What [`streamed_call`] made of a part.
enum Piece {
    /// It opened a streamed call, whose part is assembled part `k`.
    Started(usize),
    /// It continued or ended one, or carried nothing.
    Folded,
    /// It is an ordinary part, for the caller to keep.
    Plain,
}

/// Folds a part of a Gemini chunk that is a piece of a streamed function call into `parts` and
/// `open`, and says what it was.
///
/// As the Google SDKs and the Vercel AI SDK read them: a `functionCall` with a `name` and
/// `willContinue: true` or `partialArgs` opens a call (its part, `thoughtSignature` and `id`
/// included, is the assembled call's); a `functionCall` without a `name` and with `partialArgs`
/// adds them to the call opened last; the call is done when a piece neither continues
/// (`willContinue`) nor has a partial argument that does, or at a bare `{"functionCall": {}}`.
/// A `functionCall` with only `willContinue: true` carries nothing.
fn streamed_call(
    part: &Value,
    at: &At<'_>,
    parts: &mut Vec<Value>,
    open: &mut Vec<OpenCall>,
) -> Result<Piece, ParseError> {
    let Some(part) = part.as_object() else {
        return Ok(Piece::Plain);
    };
    let Some((key, Value::Object(call))) = get_any(part, &["functionCall", "function_call"]) else {
        return Ok(Piece::Plain);
    };
    let call_at = at.key(key);
    let partial = get_any(call, &["partialArgs", "partial_args"]);
    let continues = flag(call, &["willContinue", "will_continue"], &call_at)?;
    let named = get(call, "name").is_some();
    let args = get(call, "args");
    let mut piece = Piece::Folded;
    if named && (partial.is_some() || continues == Some(true)) {
        let mut started = part.clone();
        if let Some(Value::Object(call)) = started.get_mut(key) {
            for piece in [
                "partialArgs",
                "partial_args",
                "willContinue",
                "will_continue",
            ] {
                call.remove(piece);
            }
        }
        let args = args
            .filter(|a| a.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        piece = Piece::Started(parts.len());
        open.push(OpenCall {
            part: parts.len(),
            args,
        });
        parts.push(Value::Object(started));
    } else if named || args.is_some() {
        return Ok(Piece::Plain);
    } else if partial.is_none() {
        // `{"functionCall": {}}` ends the open call; `{"willContinue": true}` alone carries
        // nothing.
        if continues != Some(true) {
            if let Some(call) = open.pop() {
                close(parts, call);
            }
        }
        return Ok(Piece::Folded);
    }
    let done = match partial {
        None => continues != Some(true),
        Some((partial_key, items)) => {
            let Some(call) = open.last_mut() else {
                return Err(call_at.key("name").missing(
                    "a function name (a string): a part without one continues a call an \
                     earlier chunk opened (with `willContinue`), and none is open",
                ));
            };
            let pieces_continue =
                add_partial_args(&mut call.args, items, &call_at.key(partial_key))?;
            continues != Some(true) && !pieces_continue
        }
    };
    if done {
        if let Some(call) = open.pop() {
            close(parts, call);
        }
    }
    Ok(piece)
}

/// Gives a streamed call's part its arguments.
fn close(parts: &mut [Value], call: OpenCall) {
    let Some(Value::Object(part)) = parts.get_mut(call.part) else {
        return;
    };
    let key = if part.contains_key("function_call") {
        "function_call"
    } else {
        "functionCall"
    };
    if let Some(Value::Object(function_call)) = part.get_mut(key) {
        function_call.insert("args".into(), call.args);
    }
}

/// An optional boolean under one of `keys`: absent or `null` is `None`.
fn flag(object: &Object, keys: &[&str], at: &At<'_>) -> Result<Option<bool>, ParseError> {
    match get_any(object, keys) {
        None => Ok(None),
        Some((_, Value::Bool(b))) => Ok(Some(*b)),
        Some((key, other)) => Err(at.key(key).unexpected("a boolean", other)),
    }
}

/// Adds `partialArgs` (`[{"jsonPath": "$.recipe.items[0].name", "stringValue": "Noodles",
/// "willContinue": true}, …]`) to `args`, and says whether any of them continues. A string value
/// for a path that holds a string already continues it; a number, boolean or `nullValue` sets the
/// path, creating the objects and arrays on the way. A piece with no value carries nothing.
fn add_partial_args(args: &mut Value, items: &Value, at: &At<'_>) -> Result<bool, ParseError> {
    const PATH: &str = "a JSON path (`$.key`, `$.list[0].key`)";
    let items = array(items, at, "an array of partial arguments")?;
    let mut continues = false;
    for (k, item) in items.iter().enumerate() {
        let at = at.index(k);
        let item = object(item, &at, "a partial argument object")?;
        let Some((path_key, path)) = get_any(item, &["jsonPath", "json_path"]) else {
            return Err(at.key("jsonPath").missing(PATH));
        };
        let path_at = at.key(path_key);
        let segments = path
            .as_str()
            .and_then(json_path)
            .ok_or_else(|| path_at.unexpected(PATH, path))?;
        continues |= flag(item, &["willContinue", "will_continue"], &at)? == Some(true);
        let Some(value) = partial_value(item, &at)? else {
            continue;
        };
        if segments.is_empty() {
            continue;
        }
        let slot = slot(args, &segments).ok_or_else(|| {
            path_at.unexpected(
                "a JSON path whose array indexes follow on from what was sent",
                path,
            )
        })?;
        match (slot, value) {
            (Value::String(so_far), Value::String(piece)) => so_far.push_str(&piece),
            (slot, value) => *slot = value,
        }
    }
    Ok(continues)
}

/// The value of a partial argument: the first of `stringValue`, `numberValue` and `boolValue`
/// that is there, else `null` for a `nullValue`; `None` when it has none.
fn partial_value(item: &Object, at: &At<'_>) -> Result<Option<Value>, ParseError> {
    /// A typed value's keys (camelCase and the Python SDK's snake_case), what it must be, and
    /// whether a value is that.
    type Typed = (&'static str, &'static str, &'static str, fn(&Value) -> bool);
    const TYPED: [Typed; 3] = [
        ("stringValue", "string_value", "a string", Value::is_string),
        ("numberValue", "number_value", "a number", Value::is_number),
        ("boolValue", "bool_value", "a boolean", Value::is_boolean),
    ];
    for (camel, snake, expected, fits) in TYPED {
        if let Some((key, value)) = get_any(item, &[camel, snake]) {
            return if fits(value) {
                Ok(Some(value.clone()))
            } else {
                Err(at.key(key).unexpected(expected, value))
            };
        }
    }
    let null = item.contains_key("nullValue") || item.contains_key("null_value");
    Ok(null.then_some(Value::Null))
}

/// One step of a partial argument's path: a key or an array index.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The steps of a JSONPath as Gemini writes them (`$.recipe.ingredients[0].name`, also
/// `$['key']`); `None` when it is not one. `$` alone is no step at all.
fn json_path(path: &str) -> Option<Vec<Step>> {
    let (mut rest, mut dotted) = match path.strip_prefix('$') {
        Some(rest) => (rest, true),
        None => (path, false),
    };
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            match inner.chars().next() {
                Some(quote @ ('\'' | '"')) => {
                    let key = &inner[1..];
                    let end = key.find(quote)?;
                    steps.push(Step::Key(key[..end].to_owned()));
                    rest = key[end + 1..].strip_prefix(']')?;
                }
                _ => {
                    let end = inner.find(']')?;
                    steps.push(Step::Index(inner[..end].parse().ok()?));
                    rest = &inner[end + 1..];
                }
            }
        } else {
            let key = if dotted {
                rest.strip_prefix('.')?
            } else {
                rest
            };
            let end = key.find(['.', '[']).unwrap_or(key.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(key[..end].to_owned()));
            rest = &key[end..];
        }
        dotted = true;
    }
    Some(steps)
}

/// The value at `steps` in `root`, made (objects and arrays on the way, `null` at the end) where
/// it is missing or of the wrong kind; `None` for an index far past an array's end or an array
/// longer than any call's arguments (a bound on what a malformed stream can make us allocate:
/// without the second, items each a gap further would grow an array by a thousand per 40 bytes).
fn slot<'v>(root: &'v mut Value, steps: &[Step]) -> Option<&'v mut Value> {
    const GAP: usize = 1024;
    const LONGEST: usize = 1 << 16;
    let mut here = root;
    for step in steps {
        here = match step {
            Step::Key(key) => {
                if !here.is_object() {
                    *here = Value::Object(Map::new());
                }
                let Value::Object(members) = here else {
                    return None;
                };
                members.entry(key.clone()).or_insert(Value::Null)
            }
            Step::Index(i) => {
                if !here.is_array() {
                    *here = Value::Array(Vec::new());
                }
                let Value::Array(items) = here else {
                    return None;
                };
                if *i >= items.len() {
                    if *i - items.len() > GAP || *i >= LONGEST {
                        return None;
                    }
                    items.resize(*i + 1, Value::Null);
                }
                items.get_mut(*i)?
            }
        };
    }
    Some(here)
}

/// The text of a part that is only text (and perhaps a `thought` flag), which can merge with its
/// neighbour; parts with anything else (a `thoughtSignature`, a call) stay as they came.
fn plain_text(part: &Value) -> Option<&str> {
    let part = part.as_object()?;
    let only_text = part.keys().all(|k| k == "text" || k == "thought");
    only_text.then(|| part.get("text")?.as_str()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gemini_json_paths() {
        use Step::{Index, Key};
        let key = |k: &str| Key(k.to_owned());
        assert_eq!(json_path("$.location"), Some(vec![key("location")]));
        assert_eq!(
            json_path("$.recipe.ingredients[0].name"),
            Some(vec![
                key("recipe"),
                key("ingredients"),
                Index(0),
                key("name")
            ])
        );
        assert_eq!(
            json_path("$['a.b'][\"c\"][12]"),
            Some(vec![key("a.b"), key("c"), Index(12)])
        );
        assert_eq!(json_path("plain.key"), Some(vec![key("plain"), key("key")]));
        assert_eq!(json_path("$"), Some(vec![]));
        for bad in ["$..a", "$.a[", "$.a[x]", "$.a[-1]", "$['a]", "$a", "$.a."] {
            assert_eq!(json_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_slot_is_made_on_the_way_but_not_far_past_an_array() {
        let mut root = Value::Object(Map::new());
        let steps = [Step::Key("a".into()), Step::Index(2), Step::Key("b".into())];
        *slot(&mut root, &steps).expect("a slot") = Value::Bool(true);
        assert_eq!(root, serde_json::json!({"a": [null, null, {"b": true}]}));
        assert!(slot(&mut root, &[Step::Key("a".into()), Step::Index(1 << 40)]).is_none());
    }
}
