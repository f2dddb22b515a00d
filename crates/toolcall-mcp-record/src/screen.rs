//! What `mcp serve` answers itself, before rmcp sees a client's message: the two requests
//! rmcp would otherwise leave a client waiting on or answer with the wrong error.
//!
//! - A message over the limit (`--max-message-bytes`): rmcp's stdio transport drops a line over
//!   its own cap without a word, so the client waits for ever. It is answered with JSON-RPC
//!   error -32600, the id recovered from the part that was read when it comes before the bulk
//!   (else `null`), and never held whole.
//! - A `tools/call` whose `params.name` is not a string (`null`, a number): rmcp cannot read it
//!   as a `tools/call`, so it answered -32601 (no such method); it is invalid params, -32602.

use serde::Serialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// How much of an oversized message is kept to find its id in.
const KEPT: usize = 64 * 1024;

/// One line read by [`next_line`].
pub(crate) enum Line {
    /// A whole line (its newline included, if it had one), at most the limit.
    Whole(Vec<u8>),
    /// A line over the limit: its first bytes (at most [`KEPT`]) and its whole length.
    Over(Vec<u8>, usize),
}

/// The next line of `from`, or `None` at its end; a line over `limit` is read past, not held.
pub(crate) async fn next_line(
    from: &mut (impl AsyncBufRead + Unpin),
    limit: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut over: Option<(Vec<u8>, usize)> = None;
    loop {
        let buf = from.fill_buf().await?;
        if buf.is_empty() {
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let chunk = &buf[..take];
        match &mut over {
            Some((kept, bytes)) => {
                let room = KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..room.min(chunk.len())]);
                *bytes += take;
            }
            None if line.len() + take > limit => {
                let bytes = line.len() + take;
                line.extend_from_slice(&chunk[..KEPT.saturating_sub(line.len()).min(take)]);
                line.truncate(KEPT);
                over = Some((std::mem::take(&mut line), bytes));
            }
            None => line.extend_from_slice(chunk),
        }
        from.consume(take);
        if done {
            break;
        }
    }
    Ok(match over {
        Some((kept, bytes)) => Some(Line::Over(kept, bytes)),
        None if line.is_empty() => None,
        None => Some(Line::Whole(line)),
    })
}

/// A client message `mcp serve` answered itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refused {
    /// The request's id, when it could be read (`null` otherwise).
    pub id: Value,
    /// The JSON-RPC error code it was answered with.
    pub code: i64,
    /// Why, as the error's message says.
    pub why: String,
}

impl Refused {
    /// The JSON-RPC error response, one line with its newline.
    pub(crate) fn response(&self) -> Vec<u8> {
        let mut line = json!({"jsonrpc": "2.0", "id": self.id,
            "error": {"code": self.code, "message": self.why}})
        .to_string()
        .into_bytes();
        line.push(b'\n');
        line
    }
}

/// The answer to a message of `bytes` bytes over `limit`, whose first bytes are `kept`.
pub(crate) fn oversized(kept: &[u8], bytes: usize, limit: usize) -> Refused {
    Refused {
        id: id_in(kept).unwrap_or(Value::Null),
        code: -32600,
        why: format!(
            "toolcall mcp serve: the message is {bytes} bytes, over the limit of {limit} \
             (raise it with --max-message-bytes)"
        ),
    }
}

/// The answer to `message` when `mcp serve` answers it itself: a `tools/call` request whose
/// `params.name` is not a string.
pub(crate) fn refusal(message: &[u8]) -> Option<Refused> {
    let value: Value = serde_json::from_slice(message).ok()?;
    let id = value.get("id")?;
    if value.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let name = value.get("params").and_then(|p| p.get("name"));
    if name.is_some_and(Value::is_string) {
        return None;
    }
    let found = match name {
        None => "none".to_owned(),
        Some(other) => toolcall_score::escape(&other.to_string()).to_string(),
    };
    Some(Refused {
        id: id.clone(),
        code: -32602,
        why: format!(
            "Invalid params: tools/call needs params.name, the tool's name as a string; found \
             {found}"
        ),
    })
}

/// The top-level `id` of the JSON object that `prefix` begins, if it comes before the prefix
/// ends (the rest of the object may be cut off).
fn id_in(prefix: &[u8]) -> Option<Value> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    use std::cell::RefCell;

    struct FindId<'a>(&'a RefCell<Option<Value>>);
    impl<'de> Visitor<'de> for FindId<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    let id: Value = map.next_value()?;
                    *self.0.borrow_mut() = Some(id);
                    return Err(serde::de::Error::custom("found"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(prefix);
    let _ = (&mut de).deserialize_map(FindId(&found));
    found
        .into_inner()
        .filter(|id| matches!(id, Value::String(_) | Value::Number(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_found_in_a_cut_off_message_when_it_comes_first() {
        assert_eq!(
            id_in(
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"t":"xxx"#
            ),
            Some(json!(7))
        );
        assert_eq!(
            id_in(br#"{"jsonrpc": "2.0", "params": {"a": [1, {"b": "}"}]}, "id": "s-1", "x"#),
            Some(json!("s-1"))
        );
        assert_eq!(id_in(br#"{"jsonrpc":"2.0","params":{"a":"xxxxx"#), None);
        assert_eq!(id_in(b"not json"), None);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_read_past_and_kept_in_part() {
        let mut input = vec![b'a'; 10];
        input.push(b'\n');
        input.extend(std::iter::repeat_n(b'b', 200_000));
        input.extend_from_slice(b"\nend");
        let mut from = tokio::io::BufReader::with_capacity(7, &input[..]);
        let mut got = Vec::new();
        while let Some(line) = next_line(&mut from, 100).await.unwrap() {
            got.push(match line {
                Line::Whole(l) => format!("whole {}", l.len()),
                Line::Over(kept, bytes) => format!("over {} of {bytes}", kept.len()),
            });
        }
        assert_eq!(got, ["whole 11", "over 65536 of 200001", "whole 3"]);
    }

    #[test]
    fn a_call_whose_name_is_not_a_string_is_invalid_params() {
        for params in [json!({"name": null}), json!({"name": 5}), json!({})] {
            let message =
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
            let refused = refusal(message.to_string().as_bytes()).unwrap();
            assert_eq!(
                (refused.id.clone(), refused.code),
                (json!(3), -32602),
                "{params}"
            );
        }
        let fine =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}});
        assert_eq!(refusal(fine.to_string().as_bytes()), None);
        let note = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": null}});
        assert_eq!(refusal(note.to_string().as_bytes()), None);
    }
}
