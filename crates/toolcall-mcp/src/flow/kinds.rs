//! Steps that are not tool calls, and `verify`: what a flow asks of a server besides
//! `tools/call`, and the recorded answer a step's whole response must still equal.
//!
//! A server team tests its prompts, resources and completions as much as its tools, so a step
//! may be `prompts/get` (`"prompt"`), `resources/read` (`"resource"`), `completion/complete`
//! (`"complete"`) or a listing (`"list"`) instead of a tool call (`"name"`). Each reads its
//! result with the same `expect` machinery: the pointers address the method's whole result, the
//! text and content checks its text and content blocks. `verify` compares a step's whole
//! response with what `toolcall mcp record` wrote beside it (`recorded`), leaving out the JSON
//! pointers the flow or the command line names (`ignore_paths`): a golden snapshot that
//! `toolcall replay --update` accepts anew.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{pointer_token, Call, Reader};
use crate::errors::FlowError;

/// What a step asks the server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepKind {
    /// `tools/call` of the tool [`Call::name`] with [`Call::input`] (`"name"`).
    #[default]
    Tool,
    /// `prompts/get` of the prompt [`Call::name`], its arguments [`Call::input`] (each a
    /// string, as the protocol has them) (`"prompt"`).
    Prompt,
    /// `resources/read` of the URI [`Call::name`] (`"resource"`).
    Resource,
    /// `completion/complete` (`"complete"`).
    Complete(Completion),
    /// A whole listing, every page (`"list"`).
    List(Listing),
}

/// A `completion/complete` request: which prompt or resource template, and the argument being
/// typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What is completed.
    pub reference: CompletionRef,
    /// The argument's name.
    pub argument: String,
    /// What has been typed of it so far.
    pub value: String,
    /// Arguments already chosen (`context.arguments`), which a server may narrow by.
    pub context: BTreeMap<String, String>,
}

/// What a completion is for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionRef {
    /// `ref/prompt`: a prompt's name.
    Prompt(String),
    /// `ref/resource`: a resource template's URI.
    Resource(String),
}

/// Which listing a `"list"` step asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Listing {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
}

impl Listing {
    const ALL: [(Listing, &'static str); 4] = [
        (Listing::Tools, "tools"),
        (Listing::Prompts, "prompts"),
        (Listing::Resources, "resources"),
        (Listing::ResourceTemplates, "resource_templates"),
    ];

    /// The name a flow writes (`"list": "prompts"`).
    pub fn name(self) -> &'static str {
        Listing::ALL
            .iter()
            .find(|(l, _)| *l == self)
            .map_or("", |(_, n)| n)
    }

    /// The JSON-RPC method.
    pub fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Prompts => "prompts/list",
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
        }
    }

    /// The member of the result that holds the items (`resourceTemplates`).
    pub fn member(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Prompts => "prompts",
            Listing::Resources => "resources",
            Listing::ResourceTemplates => "resourceTemplates",
        }
    }
}

/// A step's whole response compared with its recorded one (`"verify"`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verify {
    /// JSON pointers into the response (`{"result": …}` or `{"error": …}`) left out of the
    /// comparison: the flow's own and the step's; a `*` token matches every member or item
    /// (`/result/content/*/text`).
    pub ignore_paths: Vec<String>,
    /// What the server answered when the step was recorded (`"recorded"`): `{"result": …}` or
    /// `{"error": …}`; `None` when nothing is recorded yet (`toolcall replay --update` writes
    /// it).
    pub recorded: Option<Value>,
}

impl Call {
    /// The JSON-RPC method the step sends.
    pub fn method(&self) -> &'static str {
        match &self.kind {
            StepKind::Tool => "tools/call",
            StepKind::Prompt => "prompts/get",
            StepKind::Resource => "resources/read",
            StepKind::Complete(_) => "completion/complete",
            StepKind::List(listing) => listing.method(),
        }
    }

    /// The step as its line and its failures name it: a tool's name alone (as always), the
    /// method and its object for the other kinds (`prompts/get args-prompt`).
    pub fn label(&self) -> String {
        match &self.kind {
            StepKind::Tool => self.name.clone(),
            StepKind::List(listing) => listing.method().to_owned(),
            _ => format!("{} {}", self.method(), self.name),
        }
    }
}

/// `"complete"` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawComplete {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    argument: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    context: BTreeMap<String, String>,
}

/// The keys that say what a step asks, as written.
pub(super) struct RawKind {
    pub(super) name: Option<String>,
    pub(super) prompt: Option<String>,
    pub(super) resource: Option<String>,
    pub(super) complete: Option<Value>,
    pub(super) list: Option<String>,
}

impl Reader<'_> {
    /// `/calls/{i}`'s kind and the name its step goes by: exactly one of `name` (a tool),
    /// `prompt`, `resource`, `complete` and `list`.
    pub(super) fn kind(&self, i: usize, raw: RawKind) -> Result<(StepKind, String), FlowError> {
        let at = format!("/calls/{i}");
        let given: Vec<&str> = [
            ("name", raw.name.is_some()),
            ("prompt", raw.prompt.is_some()),
            ("resource", raw.resource.is_some()),
            ("complete", raw.complete.is_some()),
            ("list", raw.list.is_some()),
        ]
        .iter()
        .filter(|(_, set)| *set)
        .map(|(key, _)| *key)
        .collect();
        if given.len() != 1 {
            return Err(self.invalid(
                at,
                format!(
                    "needs exactly one of \"name\" (a tool), \"prompt\", \"resource\", \
                     \"complete\" and \"list\"{}",
                    if given.is_empty() {
                        String::new()
                    } else {
                        format!("; found {}", given.join(", "))
                    }
                ),
            ));
        }
        if let Some(name) = raw.name {
            return Ok((StepKind::Tool, name));
        }
        if let Some(prompt) = raw.prompt {
            return Ok((
                StepKind::Prompt,
                self.expand(&format!("{at}/prompt"), &prompt)?,
            ));
        }
        if let Some(uri) = raw.resource {
            return Ok((
                StepKind::Resource,
                self.expand(&format!("{at}/resource"), &uri)?,
            ));
        }
        if let Some(list) = raw.list {
            let found = Listing::ALL.iter().find(|(_, n)| *n == list);
            return match found {
                Some((listing, _)) => Ok((StepKind::List(*listing), listing.method().to_owned())),
                None => Err(self.invalid(
                    format!("{at}/list"),
                    format!(
                        "\"{}\" is not a listing: tools, prompts, resources or \
                         resource_templates",
                        toolcall_score::escape(&list)
                    ),
                )),
            };
        }
        let value = raw.complete.unwrap_or_default();
        let at = format!("{at}/complete");
        let value = self.expand_strings(value, &at)?;
        let shape = "expected {\"prompt\": NAME or \"resource\": URI_TEMPLATE, \"argument\": \
                     NAME, \"value\": TYPED, \"context\": {NAME: VALUE}}";
        let complete: RawComplete = serde_json::from_value(value)
            .map_err(|e| self.invalid(&at, format!("{shape}: {e}")))?;
        let (reference, name) = match (complete.prompt, complete.resource) {
            (Some(prompt), None) => (CompletionRef::Prompt(prompt.clone()), prompt),
            (None, Some(uri)) => (CompletionRef::Resource(uri.clone()), uri),
            _ => {
                return Err(self.invalid(
                    &at,
                    "needs one of \"prompt\" (a prompt's name) and \"resource\" (a resource \
                     template's URI)",
                ))
            }
        };
        Ok((
            StepKind::Complete(Completion {
                reference,
                argument: complete.argument,
                value: complete.value,
                context: complete.context,
            }),
            name,
        ))
    }

    /// What a step of `kind` may not hold: an `input` but for a tool or a prompt (whose
    /// arguments are strings), `input_responses` but for a tool, a text or content check on a
    /// completion or a listing (their results have neither; `expect` reads them).
    pub(super) fn check_kind(&self, i: usize, call: &Call) -> Result<(), FlowError> {
        let at = format!("/calls/{i}");
        let has_input = call.input.as_object().is_some_and(|o| !o.is_empty());
        match &call.kind {
            StepKind::Tool => return Ok(()),
            StepKind::Prompt => {
                for (key, value) in call.input.as_object().into_iter().flatten() {
                    if !value.is_string() {
                        return Err(self.invalid(
                            format!("{at}/input/{}", pointer_token(key)),
                            "a prompt's arguments are strings",
                        ));
                    }
                }
            }
            _ if has_input => {
                return Err(self.invalid(
                    format!("{at}/input"),
                    format!("a {} step takes no input", call.method()),
                ))
            }
            _ => {}
        }
        if !call.input_responses.is_empty() {
            return Err(self.invalid(
                format!("{at}/input_responses"),
                "only a tool call answers input_required here",
            ));
        }
        let textless = matches!(call.kind, StepKind::Complete(_) | StepKind::List(_));
        if textless && (call.expect_text.is_some() || call.expect_content.is_some()) {
            return Err(self.invalid(
                at,
                format!(
                    "a {} result has no text or content blocks: check it with \"expect\"",
                    call.method()
                ),
            ));
        }
        Ok(())
    }

    /// `/calls/{i}/verify` against the flow's `/verify`: whether the step's whole response is
    /// compared, and without what; `recorded` is read (its `${VAR}`s expanded, `$$` a `$`) only
    /// for a step that is.
    pub(super) fn verify(
        &self,
        i: usize,
        flow: Option<&Verify>,
        step: Option<Value>,
        recorded: Option<serde_json::Map<String, Value>>,
    ) -> Result<Option<Verify>, FlowError> {
        let at = format!("/calls/{i}/verify");
        let mut verify = match (flow, step) {
            (_, Some(Value::Bool(false))) | (None, None) => return Ok(None),
            (Some(flow), None | Some(Value::Bool(true))) => flow.clone(),
            (None, Some(Value::Bool(true))) => Verify::default(),
            (flow, Some(value)) => {
                let mut verify = flow.cloned().unwrap_or_default();
                verify
                    .ignore_paths
                    .extend(self.ignore_paths(&at, value)?.ignore_paths);
                verify
            }
        };
        if let Some(recorded) = recorded {
            let at = format!("/calls/{i}/recorded");
            let recorded = self.expand_strings(Value::Object(recorded), &at)?;
            if recorded.get("result").is_none() && recorded.get("error").is_none() {
                return Err(self.invalid(
                    at,
                    "expected {\"result\": …} or {\"error\": …}, what the server answered",
                ));
            }
            verify.recorded = Some(recorded);
        }
        Ok(Some(verify))
    }

    /// `/verify` (the flow's): `true`, `false`, or `{"ignore_paths": [POINTER, …]}`.
    pub(super) fn flow_verify(&self, value: Option<Value>) -> Result<Option<Verify>, FlowError> {
        match value {
            None | Some(Value::Bool(false)) => Ok(None),
            Some(Value::Bool(true)) => Ok(Some(Verify::default())),
            Some(value) => self.ignore_paths("/verify", value).map(Some),
        }
    }

    /// `{"ignore_paths": [POINTER, …]}` at `at`, each a JSON pointer.
    fn ignore_paths(&self, at: &str, value: Value) -> Result<Verify, FlowError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(default)]
            ignore_paths: Vec<String>,
        }
        let raw: Raw = serde_json::from_value(value).map_err(|e| {
            self.invalid(
                at,
                format!("expected true, false or {{\"ignore_paths\": [JSON pointer, …]}}: {e}"),
            )
        })?;
        for (n, path) in raw.ignore_paths.iter().enumerate() {
            if !(path.is_empty() || path.starts_with('/')) {
                return Err(self.invalid(
                    format!("{at}/ignore_paths/{n}"),
                    format!(
                        "\"{}\" is not a JSON pointer; write \"/{}\"",
                        toolcall_score::escape(path),
                        toolcall_score::escape(path)
                    ),
                ));
            }
        }
        Ok(Verify {
            ignore_paths: raw.ignore_paths,
            recorded: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::Flow;

    fn parse(calls: &str) -> Result<Flow, FlowError> {
        let text = format!(r#"{{"server": {{"command": "node"}}, "calls": [{calls}]}}"#);
        Flow::from_json_str(
            &text,
            Path::new("flows/x.json"),
            Path::new("/repo/flows"),
            &BTreeMap::from([("URI".to_owned(), "demo://r/1".to_owned())]),
        )
    }

    fn refusal(calls: &str) -> String {
        match parse(calls) {
            Ok(_) => format!("ACCEPTED {calls}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn each_kind_of_step_reads_with_its_method_and_label() {
        let flow = parse(
            r#"{"prompt": "args-prompt", "input": {"city": "Paris"}, "expect_text": "x"},
               {"resource": "${URI}", "expect_content": {"type": "resource"}},
               {"complete": {"resource": "demo://r/{id}", "argument": "id", "value": "1",
                             "context": {"kind": "text"}}, "expect": {"/completion/total": 1}},
               {"list": "resource_templates"},
               {"name": "echo"}"#,
        )
        .unwrap();
        let labels: Vec<(String, &str)> =
            flow.calls.iter().map(|c| (c.label(), c.method())).collect();
        assert_eq!(
            labels,
            [
                ("prompts/get args-prompt".to_owned(), "prompts/get"),
                ("resources/read demo://r/1".to_owned(), "resources/read"),
                (
                    "completion/complete demo://r/{id}".to_owned(),
                    "completion/complete"
                ),
                (
                    "resources/templates/list".to_owned(),
                    "resources/templates/list"
                ),
                ("echo".to_owned(), "tools/call"),
            ]
        );
        assert_eq!(
            flow.calls[2].kind,
            StepKind::Complete(Completion {
                reference: CompletionRef::Resource("demo://r/{id}".to_owned()),
                argument: "id".to_owned(),
                value: "1".to_owned(),
                context: BTreeMap::from([("kind".to_owned(), "text".to_owned())]),
            })
        );
        assert_eq!(flow.calls[4].kind, StepKind::Tool);
    }

    #[test]
    fn a_step_of_no_kind_or_two_kinds_and_what_a_kind_cannot_hold_are_refused() {
        let said: Vec<String> = [
            r#"{"input": {}}"#,
            r#"{"name": "echo", "prompt": "p"}"#,
            r#"{"list": "roots"}"#,
            r#"{"prompt": "p", "input": {"n": 1}}"#,
            r#"{"resource": "demo://r", "input": {"a": "b"}}"#,
            r#"{"list": "prompts", "expect_text": "x"}"#,
            r#"{"complete": {"argument": "a"}}"#,
            r#"{"complete": {"prompt": "p"}}"#,
            r#"{"prompt": "p", "input_responses": {"confirm": {}}}"#,
        ]
        .iter()
        .map(|c| refusal(c))
        .collect();
        assert_eq!(
            said,
            [
                "flows/x.json: at /calls/0: needs exactly one of \"name\" (a tool), \"prompt\", \
                 \"resource\", \"complete\" and \"list\"",
                "flows/x.json: at /calls/0: needs exactly one of \"name\" (a tool), \"prompt\", \
                 \"resource\", \"complete\" and \"list\"; found name, prompt",
                "flows/x.json: at /calls/0/list: \"roots\" is not a listing: tools, prompts, \
                 resources or resource_templates",
                "flows/x.json: at /calls/0/input/n: a prompt's arguments are strings",
                "flows/x.json: at /calls/0/input: a resources/read step takes no input",
                "flows/x.json: at /calls/0: a prompts/list result has no text or content \
                 blocks: check it with \"expect\"",
                "flows/x.json: at /calls/0/complete: needs one of \"prompt\" (a prompt's name) \
                 and \"resource\" (a resource template's URI)",
                "flows/x.json: at /calls/0/complete: expected {\"prompt\": NAME or \"resource\": \
                 URI_TEMPLATE, \"argument\": NAME, \"value\": TYPED, \"context\": {NAME: VALUE}}: \
                 missing field `argument`",
                "flows/x.json: at /calls/0/input_responses: only a tool call answers \
                 input_required here",
            ]
        );
    }

    #[test]
    fn verify_is_the_flows_and_the_steps_with_the_recorded_answer() {
        let text = r#"{"server": {"command": "node"},
            "verify": {"ignore_paths": ["/result/meta"]},
            "calls": [
                {"name": "a", "recorded": {"result": {"n": "$$1"}}},
                {"name": "b", "verify": {"ignore_paths": ["/result/content/*/text"]}},
                {"name": "c", "verify": false, "recorded": {"oops": 1}}
            ]}"#;
        let flow = Flow::from_json_str(text, Path::new("x.json"), Path::new("/"), &BTreeMap::new())
            .unwrap();
        let verify: Vec<Option<Verify>> = flow.calls.iter().map(|c| c.verify.clone()).collect();
        assert_eq!(
            verify,
            [
                Some(Verify {
                    ignore_paths: vec!["/result/meta".to_owned()],
                    recorded: Some(serde_json::json!({"result": {"n": "$1"}})),
                }),
                Some(Verify {
                    ignore_paths: vec![
                        "/result/meta".to_owned(),
                        "/result/content/*/text".to_owned()
                    ],
                    recorded: None,
                }),
                None,
            ]
        );
        for (bad, said) in [
            (
                r#""verify": {"ignore_paths": ["result"]}"#,
                "at /verify/ignore_paths/0: \"result\" is not a JSON pointer; write \"/result\"",
            ),
            (
                r#""verify": "yes""#,
                "at /verify: expected true, false or {\"ignore_paths\": [JSON pointer, …]}",
            ),
        ] {
            let text = format!(r#"{{"server": {{"command": "node"}}, {bad}, "calls": []}}"#);
            let err =
                Flow::from_json_str(&text, Path::new("x.json"), Path::new("/"), &BTreeMap::new())
                    .unwrap_err()
                    .to_string();
            assert!(err.contains(said), "{err}");
        }
        let err = refusal(r#"{"name": "a", "verify": true, "recorded": {"oops": 1}}"#);
        assert!(err.ends_with("at /calls/0/recorded: expected {\"result\": …} or {\"error\": …}, what the server answered"), "{err}");
    }
}
