//! `toolcall mcp record --guard`: the stdio proxy answers a `tools/call` of a name the server's
//! `tools/list` never offered with an `isError` result naming the offered tools (and the closest
//! one), without forwarding it, as the loop guard answers an unknown tool. Nothing is judged
//! before the server's first `tools/list` answer, and the names offered are every name any
//! answer offered in the session, so a tool dropped by a later list still passes: a call is
//! refused only when the server certainly never offered it.

use std::collections::{BTreeSet, HashSet};

use serde_json::{json, Value};
use toolcall_score::{escape, Catalog, Tool};

/// What the guard knows of the session.
#[derive(Debug, Default)]
pub(crate) struct CallGuard {
    /// The ids (as JSON text) of the client's `tools/list` requests not yet answered.
    lists: HashSet<String>,
    /// Every name a `tools/list` answer offered; `None` before the first.
    offered: Option<BTreeSet<String>>,
}

impl CallGuard {
    /// A client's line: the answer to send it instead of forwarding the line, for a call of a
    /// name never offered.
    pub(crate) fn client_line(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        let message: Value = serde_json::from_slice(line).ok()?;
        let method = message.get("method")?.as_str()?;
        let id = message.get("id")?;
        if method == "tools/list" {
            self.lists.insert(id.to_string());
            return None;
        }
        if method != "tools/call" {
            return None;
        }
        let name = message.get("params")?.get("name")?.as_str()?;
        let offered = self.offered.as_ref()?;
        if offered.contains(name) {
            return None;
        }
        let catalog = Catalog::new(offered.iter().map(|n| Tool::new(n.as_str(), "")));
        let closest = toolcall_score::suggest(name, &catalog);
        let listed: Vec<String> = offered.iter().map(|n| escape(n).to_string()).collect();
        let mut text = format!(
            "Unknown tool: `{}`. This server offers: {}.",
            escape(name),
            listed.join(", ")
        );
        if let Some(best) = closest.first() {
            text.push_str(&format!(" Did you mean `{}`?", escape(best)));
        }
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"content": [{"type": "text", "text": text}], "isError": true},
        });
        eprintln!(
            "note: toolcall mcp record --guard: answered tools/call of `{}` itself (the server \
             never offered it); not forwarded, not recorded",
            escape(name)
        );
        let mut bytes = answer.to_string().into_bytes();
        bytes.push(b'\n');
        Some(bytes)
    }

    /// A server's line: the names of an answer to a `tools/list`.
    pub(crate) fn server_line(&mut self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(id) = message.get("id").map(Value::to_string) else {
            return;
        };
        if !self.lists.contains(&id) {
            return;
        }
        let Some(result) = message.get("result") else {
            if message.get("error").is_some() {
                self.lists.remove(&id);
            }
            return;
        };
        self.lists.remove(&id);
        let names = result
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|tool| tool.get("name")?.as_str().map(str::to_owned));
        self.offered.get_or_insert_with(BTreeSet::new).extend(names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(value: Value) -> Vec<u8> {
        value.to_string().into_bytes()
    }

    #[test]
    fn a_call_is_answered_only_when_the_server_certainly_never_offered_it() {
        let mut guard = CallGuard::default();
        let call = |name: &str, id: u64| {
            line(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": {}}}))
        };
        assert!(
            guard.client_line(&call("anything", 1)).is_none(),
            "nothing known yet"
        );
        guard.client_line(&line(
            json!({"jsonrpc": "2.0", "id": "l1", "method": "tools/list"}),
        ));
        guard.server_line(&line(
            json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": [{"name": "x"}]}}),
        ));
        assert!(
            guard.offered.is_none(),
            "an answer to no tools/list of the client"
        );
        guard.server_line(&line(json!({"jsonrpc": "2.0", "id": "l1",
            "result": {"tools": [{"name": "search_orders"}, {"name": "refund"}]}})));
        assert!(guard.client_line(&call("search_orders", 2)).is_none());
        let answer = guard
            .client_line(&call("search_order", 3))
            .expect("answered");
        let answer: Value = serde_json::from_slice(&answer).expect("json");
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["isError"], true);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .expect("text");
        assert!(text.contains("refund, search_orders"), "{text}");
        assert!(text.contains("Did you mean `search_orders`?"), "{text}");
        // A later list that drops a tool does not make calls to it unknown.
        guard.client_line(&line(
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        ));
        guard.server_line(&line(
            json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}),
        ));
        assert!(guard.client_line(&call("refund", 5)).is_none());
        assert!(guard.client_line(b"not json").is_none());
    }
}
