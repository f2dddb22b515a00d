//! Hostile exports: shapes no exporter should write but a file can hold, each read to named bad
//! records and the rest of the file counted, in time and memory its size decides — never a
//! stack overflow (which aborts the process, whatever catches panics), never a hang.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use toolcall_traces::{Catalog, Found};

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `read` on another thread, a hang turned into a failure after `limit`.
fn within<T: Send + 'static>(limit: Duration, read: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(read());
    });
    receive
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("no answer in {limit:?}: the reader hangs or died"))
}

/// Reads `doc` as a file the CLI reads (`read_path`, as `rate`, `import` and `promote` do) and
/// from its text, the two agreeing; `None` for the source: told from the content.
fn read_both(name: &str, doc: &Value) -> Found {
    let text = doc.to_string();
    let path = scratch(name, &text);
    let (source, from_file) = toolcall_traces::read_path(&path, None).expect("read");
    assert_eq!(source.name, "openai-agents");
    let (_, from_text) =
        toolcall_traces::read(&text, &path.display().to_string(), None).expect("read");
    assert_eq!(from_file, from_text);
    from_file
}

mod openai_agents {
    use super::*;

    fn span(id: Value, parent: Value, data: Value) -> Value {
        json!({"object": "trace.span", "id": id, "trace_id": "trace_1", "parent_id": parent,
               "span_data": data})
    }

    fn agent(id: &str, tools: &[&str]) -> Value {
        span(
            json!(id),
            Value::Null,
            json!({"type": "agent", "name": "triage", "tools": tools}),
        )
    }

    fn function(id: &str, parent: &str, name: &str) -> Value {
        span(
            json!(id),
            json!(parent),
            json!({"type": "function", "name": name, "input": "{}"}),
        )
    }

    fn ids(found: &Found) -> Vec<&str> {
        found.turns.iter().map(|t| t.id.as_str()).collect()
    }

    /// Each shape that overflowed the stack or was dropped unsaid: a span that is its own
    /// parent, a second span with an id already seen (which named itself as its parent), a
    /// span with no id whose `parent_id` is `""` beside a root with no id, and a cycle of two
    /// with a call under it. Each is a named bad record; the calls of the well-formed spans
    /// around them are read, judged against their agent's tools.
    #[test]
    fn cycles_repeated_and_missing_ids_are_named_and_the_rest_read() {
        let export = json!({"data": [
            agent("a", &["lookup"]),
            function("f1", "a", "lookup"),
            // Its own parent.
            function("self", "self", "lookup"),
            // The id of the agent again, under itself.
            function("a", "a", "lookup"),
            // No id, no parent; and no id under the empty parent.
            span(Value::Null, json!(""), json!({"type": "agent", "tools": []})),
            {"object": "trace.span", "trace_id": "trace_1", "parent_id": "",
             "span_data": {"type": "function", "name": "lookup"}},
            // A cycle of two, a call under it.
            function("c1", "c2", "lookup"),
            function("c2", "c1", "lookup"),
            function("c3", "c2", "lookpu"),
            function("f2", "a", "lookpu"),
        ]});
        let found = within(Duration::from_secs(60), move || {
            read_both("openai-agents-hostile.json", &export)
        });
        assert_eq!(ids(&found), ["f1", "f2"], "{:?}", found.bad);
        for turn in &found.turns {
            assert_eq!(
                turn.catalog,
                Catalog::of([toolcall_score::Tool::new("lookup", "")])
            );
        }
        let bad: Vec<(String, String)> = found
            .bad
            .iter()
            .map(|b| (b.at.rsplit('(').next().unwrap().to_owned(), b.why.clone()))
            .collect();
        let expect = [
            ("span a, data[3])", "a second span with the id `a` (the first is data[0])"),
            ("data[4])", "a span without an `id` (found null)"),
            ("data[5])", "a span without an `id` (found none)"),
            ("span self, data[2])", "a parent cycle (self → self by `parent_id`): 1 span(s) in it are not read"),
            ("span c1, data[6])", "a parent cycle (c1 → c2 → c1 by `parent_id`): 2 span(s) in it and 1 under it are not read"),
        ];
        assert_eq!(bad.len(), expect.len(), "{bad:#?}");
        for ((at, why), (want_at, want_why)) in bad.iter().zip(expect) {
            assert_eq!(at, want_at, "{bad:#?}");
            assert!(why.starts_with(want_why), "{why:?}, expected {want_why:?}");
        }
    }

    /// A legitimate chain of 5,000 nested spans (an agent, then each function span the child of
    /// the one before): every call is read, under the agent's tools, with no bad record.
    #[test]
    fn a_chain_of_five_thousand_nested_spans_is_read() {
        let mut spans = vec![agent("s0", &["step"])];
        for i in 1..5_000 {
            spans.push(function(&format!("s{i}"), &format!("s{}", i - 1), "step"));
        }
        let export = json!({ "data": spans });
        let found = within(Duration::from_secs(60), move || {
            read_both("openai-agents-deep.json", &export)
        });
        assert!(found.bad.is_empty(), "{:?}", &found.bad[..1]);
        assert_eq!(found.turns.len(), 4_999);
        assert_eq!(found.turns[4_998].id, "s4999", "in the tree's order");
        assert!(found.turns.iter().all(|t| t.catalog.is_recorded()));
    }

    /// A span whose parent is not in the file (the exporter posts spans in batches) is read as
    /// a root: its call is counted, not judged (its agent is unknown), never dropped.
    #[test]
    fn a_span_whose_parent_is_elsewhere_is_counted_not_judged() {
        let export = json!({"data": [
            agent("a", &["lookup"]),
            function("f1", "a", "lookup"),
            function("f2", "in-another-batch", "lookup"),
        ]});
        let found = read_both("openai-agents-orphan.json", &export);
        assert!(found.bad.is_empty(), "{:?}", found.bad);
        assert_eq!(ids(&found), ["f1", "f2"]);
        assert_eq!(found.turns[1].catalog, Catalog::NotRecorded);
    }

    /// 20,000 spans (3 MB) under one agent: read in time linear in the spans (the bench row
    /// `traces: OpenAI Agents export` holds the ratio); here only a hang guard — the
    /// quadratic reader gave no answer in 120 s.
    #[test]
    fn twenty_thousand_spans_are_read_without_a_hang() {
        let mut spans = vec![agent("a", &["lookup", "search"])];
        spans.extend((1..20_000).map(|i| function(&format!("f{i}"), "a", "lookup")));
        let export = json!({ "data": spans });
        let found = within(Duration::from_secs(30), move || {
            read_both("openai-agents-wide.json", &export)
        });
        assert_eq!(found.turns.len(), 19_999);
    }
}

mod otlp {
    use super::*;

    fn chat(trace: &str, id: &str, call: &str) -> Value {
        let attr = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        json!({"traceId": trace, "spanId": id, "name": "chat", "startTimeUnixNano": "1",
               "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.tool.definitions", r#"[{"type": "function", "name": "get_weather"}]"#),
            attr("gen_ai.output.messages", &format!(
                r#"[{{"role": "assistant", "parts": [{{"type": "tool_call", "id": "{call}",
                    "name": "get_weather", "arguments": {{}}}}]}}]"#)),
        ]})
    }

    /// One OTLP document of three traces, their spans interleaved (over two resources and the
    /// older `instrumentationLibrarySpans`): read from its file as `rate`, `import` and
    /// `promote` read it, each trace's turns are handed on by themselves, in the order the
    /// traces first appear, and together they are the document's turns read whole. (Before,
    /// the document was one `Value` with every span and every turn beside it: 26 times its
    /// size; the bench row `traces: peak RSS of an OTLP JSON document` holds the figure.)
    #[test]
    fn an_otlp_document_is_read_a_trace_at_a_time() {
        let doc = json!({"resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {}, "spans": [
                chat("t1", "a1", "c1"), chat("t2", "b1", "c2")]}]},
            {"resource": {}, "instrumentationLibrarySpans": [{"spans": [
                chat("t1", "a2", "c3"), chat("t3", "d1", "c4")]}]},
        ]});
        let text = doc.to_string();
        let path = scratch("three-traces.otlp.json", &text);
        let mut parts: Vec<Vec<String>> = Vec::new();
        let source = toolcall_traces::read_path_each(&path, None, &mut |found| {
            assert!(found.bad.is_empty(), "{:?}", found.bad);
            parts.push(found.turns.iter().map(|t| t.id.clone()).collect());
        })
        .expect("read");
        assert_eq!(source.name, "otel-genai");
        assert_eq!(parts, [vec!["a1", "a2"], vec!["b1"], vec!["d1"]]);
        let (_, whole) =
            toolcall_traces::read(&text, &path.display().to_string(), None).expect("read");
        let mut ids: Vec<String> = whole.turns.iter().map(|t| t.id.clone()).collect();
        ids.sort();
        assert_eq!(ids, ["a1", "a2", "b1", "d1"]);
    }
}
