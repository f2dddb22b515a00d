//! Flow files: the scripted calls a model would have made, and the server to replay them against.
//!
//! A flow is read once, checked completely (every `expect` key is a JSON pointer, every `input` is
//! an object, every `${VAR}` is set) and its relative paths are resolved, so that a replay never
//! fails half-way through because of a typo in the file. A top-level `"$schema"` (the flow's
//! JSON Schema, for editors: `toolcall schema flow`) is accepted and not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::errors::FlowError;

mod kinds;

pub use kinds::{Completion, CompletionRef, Listing, StepKind, Verify};

/// A flow: a server and the calls to replay against it, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// The file it was read from (empty for a flow built from a string).
    pub path: PathBuf,
    /// What the flow shows, for people reading it.
    pub about: Option<String>,
    /// The server to start or connect to.
    pub server: Server,
    /// Which era of the MCP protocol to speak to it (`server.protocol`).
    pub protocol: Protocol,
    /// The catalog snapshot the server's live `tools/list` must still honour (`"snapshot"`,
    /// relative to the flow's folder): a breaking or security change from it fails the replay.
    pub snapshot: Option<Snapshot>,
    /// Timeouts the flow asks for; [`crate::Options`] fills in the rest.
    pub timeouts: FlowTimeouts,
    /// The calls, in order.
    pub calls: Vec<Call>,
    /// For example flows that demonstrate a failure: the exact failure line a replay must end
    /// with. [`crate::Outcome`] judges a replay against it, for `toolcall replay` and the tests.
    pub expected_failure: Option<String>,
    /// Every value a `${VAR}` expanded to, with its variable, longest first: what
    /// [`Flow::mask`] hides wherever the replay prints or reports.
    pub(crate) expanded: Vec<(String, String)>,
    /// Why the whole flow is not replayed (`"skip"`, or `"skip_unless_env"` naming a variable
    /// that is unset or empty); `None` when it is.
    pub skip: Option<String>,
}

/// Values this short are not masked: `${N}` = `1` would turn every `1` in a report into `${N}`.
const MIN_MASKED_CHARS: usize = 4;

impl Flow {
    /// `text` with every value a `${VAR}` of this flow expanded to written as `${VAR}` again: a
    /// token from the environment never appears in a step line, a failure, the server's stderr
    /// tail or a report, whichever part of the flow (an `env`, an argument, an `expect`) it went
    /// into.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (value, var) in &self.expanded {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("${{{var}}}"));
            }
        }
        out
    }

    /// [`Flow::mask`] over every string inside `value`.
    pub fn mask_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.mask(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.mask_value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.mask(k), self.mask_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Where the server is.
#[derive(Clone, Debug, PartialEq)]
pub enum Server {
    /// A child process speaking MCP over stdin/stdout.
    Stdio(StdioServer),
    /// A streamable HTTP endpoint (`http://127.0.0.1:3001/mcp`).
    Http {
        /// The endpoint URL.
        url: String,
        /// HTTP headers sent with every request (`Authorization: Bearer ${TOKEN}`), values
        /// expanded from the environment.
        headers: Vec<(String, String)>,
        /// The command that starts the server, when the flow starts it (`command` and `url`
        /// together): run first, waited for until `url` answers, killed at the end.
        start: Option<StdioServer>,
    },
}

/// A committed catalog snapshot (`toolcall mcp snapshot`), read when the flow is.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its content, as [`crate::catalog::snapshot`] writes it.
    pub catalog: Value,
}

/// Which era of the MCP protocol a replay speaks (`"protocol"` in a flow's `server`).
///
/// MCP 2026-07-28 ("modern") drops `initialize`: a client asks `server/discover` and sends its
/// version and capabilities with every request. Versions up to 2025-11-25 ("legacy") start with
/// `initialize`. The two do not interoperate in every combination, so a flow can pin one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// `server/discover` first, `initialize` when the server turns out to be legacy. When
    /// discovery fails in a way that is not the server saying it is legacy (some deployed
    /// servers close the connection, or answer an HTTP error), the replay starts again with
    /// `initialize` on a fresh connection, and says so.
    #[default]
    Auto,
    /// Only `initialize` (2025-11-25 and earlier).
    Legacy,
    /// Only `server/discover` (2026-07-28): a legacy server is a start-up failure.
    Modern,
}

impl Protocol {
    /// The name a flow writes.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Legacy => "legacy",
            Protocol::Modern => "modern",
        }
    }

    fn parse(name: &str) -> Option<Protocol> {
        [Protocol::Auto, Protocol::Legacy, Protocol::Modern]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// A server started as a child process.
///
/// The child's environment is **this process's environment plus [`StdioServer::env`]** (the MCP
/// Python SDK does the opposite: it passes only `HOME`, `PATH` and a few others).
#[derive(Clone, Debug, PartialEq)]
pub struct StdioServer {
    /// The program. A bare name (`node`) is looked up in `PATH`; a path written relative in the
    /// flow (`./bin/server`) resolves against the flow file's directory.
    pub command: PathBuf,
    /// Arguments, passed as written.
    pub args: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: BTreeMap<String, String>,
    /// The working directory: the flow file's directory unless the flow names one (a relative
    /// `cwd` also resolves against the flow file's directory).
    pub cwd: PathBuf,
}

/// One scripted call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool name, as the model would have written it.
    pub name: String,
    /// The arguments (a JSON object).
    pub input: Value,
    /// Assertions on the parsed result: JSON pointer -> expected value.
    pub expect: Vec<(String, Value)>,
    /// The call must fail, the server refusing it: the negative test (`"expect_error"`).
    pub expect_error: Option<ExpectError>,
    /// For a server that answers in text: the first text block, whole (`"expect_text"`) or
    /// matched by a regular expression (`"expect_match"`).
    pub expect_text: Option<TextExpectation>,
    /// A content block of a kind the result must hold (`"expect_content"`): an image, audio, a
    /// `resource_link` or an embedded resource, with its MIME type, URI or size.
    pub expect_content: Option<ContentExpectation>,
    /// What the replay answers when the server replies `input_required` (MCP 2026-07-28):
    /// request key, or request method (`elicitation/create`, `roots/list`,
    /// `sampling/createMessage`), to the client's result for it (`"input_responses"`).
    pub input_responses: BTreeMap<String, Value>,
    /// What the step asks: a tool call, or `prompts/get`, `resources/read`,
    /// `completion/complete` or a listing ([`Call::name`] is then the prompt, the URI, the
    /// completed prompt or template, or the method).
    pub kind: StepKind,
    /// The step's whole response compared with its recorded one (`"verify"`), when asked.
    pub verify: Option<Verify>,
    /// The call's name for later calls (`"id"`): `${steps.ID.result.PATH}` in a later call's
    /// `input` is a value from this call's result.
    pub id: Option<String>,
    /// The strings of `input` that hold a `${steps.…}` reference, filled in when the call is
    /// made.
    pub captures: Vec<crate::capture::Capture>,
    /// Assertions on the result beyond `expect` (`"assert"`): texts it contains, JSON paths,
    /// array lengths.
    pub assert: crate::assertions::Assertions,
    /// Why this call is not made (`"skip"`, or `"skip_unless_env"`); `None` when it is.
    pub skip: Option<String>,
}

/// What the first text block of a result must be.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextExpectation {
    /// Exactly this text.
    Equals(String),
    /// A match of this regular expression (checked to compile when the flow is read).
    Matches(String),
}

/// A content block a result must hold: the first of `kind` must have every field given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentExpectation {
    /// `image`, `audio`, `resource_link` or `resource`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its `mimeType`.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Its `uri` (a link's, or an embedded resource's).
    #[serde(default)]
    pub uri: Option<String>,
    /// The fewest bytes it may hold (decoded `data`, a resource's text or blob, a link's `size`).
    #[serde(default)]
    pub min_bytes: Option<u64>,
    /// The most bytes it may hold.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// How a call that must fail has to fail (`"expect_error"` in a flow).
///
/// A refusal is an `isError: true` result or a JSON-RPC error; either passes `true`. Its
/// arguments are sent as written, without the check against the tool's `inputSchema` other
/// calls get first: the point is to see the server refuse them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpectError {
    /// `true`: refused either way.
    Any,
    /// A number: a JSON-RPC error with this code (`-32602`, invalid params).
    Code(i64),
    /// A string: refused either way, with an error text that contains it.
    Text(String),
}

/// Per-flow timeouts; `None` means "use the [`crate::Options`] default".
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowTimeouts {
    /// Start-up plus `initialize`.
    pub initialize: Option<Duration>,
    /// Each request after it (`tools/list`, every `tools/call`).
    pub call: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    /// The JSON Schema the file names for editors (`toolcall schema flow`): a string, not read.
    #[serde(default, rename = "$schema")]
    _schema: Option<String>,
    #[serde(default)]
    about: Option<String>,
    server: RawServer,
    #[serde(default)]
    timeouts: RawTimeouts,
    calls: Vec<RawCall>,
    #[serde(default)]
    expected_failure: Option<String>,
    #[serde(default)]
    snapshot: Option<String>,
    #[serde(default)]
    verify: Option<Value>,
    skip: Option<Value>,
    #[serde(default)]
    skip_unless_env: Option<String>,
    /// What the recorded server showed of itself besides its calls (the handshake's answer,
    /// the tools' order, prompts and resources exchanges): what `toolcall mcp serve` answers
    /// with; a replay does not read it.
    #[serde(default, rename = "recorded")]
    _recorded: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    protocol: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    #[serde(default)]
    initialize_ms: Option<u64>,
    #[serde(default)]
    call_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    complete: Option<Value>,
    #[serde(default)]
    list: Option<String>,
    #[serde(default)]
    verify: Option<Value>,
    #[serde(default = "empty_object")]
    input: Value,
    #[serde(default)]
    expect: serde_json::Map<String, Value>,
    #[serde(default)]
    expect_error: Option<Value>,
    #[serde(default)]
    expect_text: Option<String>,
    #[serde(default)]
    expect_match: Option<String>,
    #[serde(default)]
    expect_content: Option<Value>,
    #[serde(default)]
    input_responses: serde_json::Map<String, Value>,
    /// For people reading the flow (`toolcall mcp record` lists the values it left out of
    /// `expect` here): a string, not read.
    #[serde(default, rename = "$comment")]
    _comment: Option<String>,
    /// What the server answered when the call was recorded (`{"result": …}` or `{"error": …}`):
    /// what `toolcall mcp serve` answers with; a replay reads it only to `verify` the step.
    #[serde(default)]
    recorded: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    assert: Option<Value>,
    #[serde(default)]
    skip: Option<Value>,
    #[serde(default)]
    skip_unless_env: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Where `${VAR}` references in a flow get their values.
pub trait Vars {
    /// The value of `name`, if set.
    fn get(&self, name: &str) -> Option<String>;
}

/// `${VAR}` from the process environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct EnvVars;

impl Vars for EnvVars {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Vars for BTreeMap<String, String> {
    fn get(&self, name: &str) -> Option<String> {
        BTreeMap::get(self, name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

impl Flow {
    /// The flow files (`*.json`) directly in `dir`, sorted: what a suite turns into one test
    /// each. A folder that cannot be read, or holds no flow, is an error, so a suite can never
    /// pass by running nothing.
    pub fn files_in(dir: &Path) -> Result<Vec<std::path::PathBuf>, FlowError> {
        let folder = |why: String| FlowError::Folder {
            dir: dir.to_owned(),
            why,
        };
        let entries = std::fs::read_dir(dir).map_err(|e| folder(format!("cannot list: {e}")))?;
        let mut paths: Vec<std::path::PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
            .collect();
        if paths.is_empty() {
            return Err(folder("holds no flow (*.json)".to_owned()));
        }
        paths.sort();
        Ok(paths)
    }

    /// Reads a flow file; `${VAR}` references take their values from the environment.
    pub fn load(path: &Path) -> Result<Flow, FlowError> {
        Flow::load_with(path, &EnvVars)
    }

    /// Reads a flow file; `${VAR}` references take their values from `vars`.
    pub fn load_with(path: &Path, vars: &dyn Vars) -> Result<Flow, FlowError> {
        let text = toolcall_score::read_text(path).map_err(|e| match e {
            toolcall_score::InputError::Read { source, .. } => FlowError::Read {
                path: path.to_owned(),
                source,
            },
            other => FlowError::Input(other),
        })?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Flow::from_json_str(&text, path, dir, vars)
    }

    /// Parses a flow. `path` names it in errors; relative paths resolve against `dir`.
    pub fn from_json_str(
        text: &str,
        path: &Path,
        dir: &Path,
        vars: &dyn Vars,
    ) -> Result<Flow, FlowError> {
        let raw: RawFlow = serde_json::from_str(text).map_err(|e| FlowError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        // A skipped flow is still read whole (a typo in it is an error), but a variable it
        // uses may be unset: most often the very one `skip_unless_env` names.
        let skip = skip_reason(
            path,
            "",
            raw.skip.as_ref(),
            raw.skip_unless_env.as_deref(),
            vars,
        )?;
        let lenient = AsWrittenWhenUnset(vars);
        let reader = Reader {
            path,
            dir,
            vars: if skip.is_some() { &lenient } else { vars },
            used: std::cell::RefCell::new(Vec::new()),
            ids: std::cell::RefCell::new(Vec::new()),
        };
        // Read in the file's order, so that of two errors the first in the file is the one named.
        let server = reader.server(&raw.server)?;
        let protocol = reader.protocol(raw.server.protocol.as_deref())?;
        let snapshot = reader.snapshot(raw.snapshot.as_deref())?;
        let verify = reader.flow_verify(raw.verify)?;
        let calls = raw
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, call)| reader.call(i, call, verify.as_ref()))
            .collect::<Result<Vec<Call>, FlowError>>()?;
        Ok(Flow {
            expanded: reader.masked(),
            path: path.to_owned(),
            about: raw.about,
            server,
            protocol,
            snapshot,
            timeouts: FlowTimeouts {
                initialize: raw.timeouts.initialize_ms.map(Duration::from_millis),
                call: raw.timeouts.call_ms.map(Duration::from_millis),
            },
            calls,
            expected_failure: raw.expected_failure,
            skip,
        })
    }
}

/// Reads the parts of one flow file after it parsed as JSON: each part checked, its `${VAR}`s
/// expanded (each value noted, to be masked) and its paths resolved, every error naming the file
/// and the JSON pointer of what is wrong.
struct Reader<'a> {
    /// The flow file, for errors.
    path: &'a Path,
    /// Where relative paths resolve.
    dir: &'a Path,
    vars: &'a dyn Vars,
    /// Every `(value, NAME)` a `${NAME}` expanded to.
    used: std::cell::RefCell<Vec<(String, String)>>,
    /// The `id` of each call read so far (`None` for a call without one), in order: what a
    /// `${steps.ID…}` reference may name.
    ids: std::cell::RefCell<Vec<Option<String>>>,
}

impl Reader<'_> {
    /// A value not allowed at `pointer`.
    fn invalid(&self, pointer: impl Into<String>, message: impl Into<String>) -> FlowError {
        FlowError::Invalid {
            path: self.path.to_owned(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// `text`, found at `pointer`, with its `${VAR}`s expanded.
    fn expand(&self, pointer: &str, text: &str) -> Result<String, FlowError> {
        expand_vars(text, self.vars, &mut self.used.borrow_mut()).map_err(|var| {
            FlowError::UnsetVariable {
                path: self.path.to_owned(),
                pointer: pointer.to_owned(),
                var,
            }
        })
    }

    /// `value`, found at `pointer`, with the `${VAR}`s of every string in it expanded.
    fn expand_strings(&self, value: Value, pointer: &str) -> Result<Value, FlowError> {
        expand_strings(value, pointer, &|at, text| self.expand(at, text))
    }

    /// The expanded values long enough to be worth masking, longest first, each once.
    fn masked(self) -> Vec<(String, String)> {
        let mut expanded: Vec<(String, String)> = self
            .used
            .into_inner()
            .into_iter()
            .filter(|(value, _): &(String, String)| value.chars().count() >= MIN_MASKED_CHARS)
            .collect();
        expanded.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        expanded.dedup();
        expanded
    }

    /// `/server`: a stdio server (`command`), a streamable HTTP one (`url`), or an HTTP server
    /// the flow starts (both); what applies to one kind only is refused on the other.
    fn server(&self, raw: &RawServer) -> Result<Server, FlowError> {
        Ok(match (&raw.command, &raw.url) {
            (None, None) => {
                return Err(self.invalid(
                    "/server",
                    "needs \"command\" (a stdio server) or \"url\" (streamable HTTP)",
                ))
            }
            // An HTTP server the flow starts: `command` runs it, `url` is where it answers.
            (Some(command), Some(url)) => {
                let (url, headers) = self.http_server(raw, url)?;
                Server::Http {
                    url,
                    headers,
                    start: Some(self.stdio_server(raw, command)?),
                }
            }
            (None, Some(url)) => {
                if raw.cwd.is_some() || !raw.args.is_empty() || !raw.env.is_empty() {
                    return Err(self.invalid(
                        "/server",
                        "\"args\", \"env\" and \"cwd\" only apply to a \"command\" server",
                    ));
                }
                let (url, headers) = self.http_server(raw, url)?;
                Server::Http {
                    url,
                    headers,
                    start: None,
                }
            }
            (Some(_), None) if !raw.headers.is_empty() => {
                return Err(self.invalid("/server/headers", "only applies to a \"url\" server"))
            }
            (Some(command), None) => Server::Stdio(self.stdio_server(raw, command)?),
        })
    }

    /// The process `/server/command` names, with its `args`, `env` and `cwd` (the flow's folder
    /// by default); a command with a slash is a path, resolved like `cwd`.
    fn stdio_server(&self, raw: &RawServer, command: &str) -> Result<StdioServer, FlowError> {
        let cwd = match &raw.cwd {
            Some(cwd) => resolve_path(self.dir, cwd, &self.expand("/server/cwd", cwd)?),
            None => self.dir.to_owned(),
        };
        let expanded = self.expand("/server/command", command)?;
        if expanded.is_empty() {
            return Err(self.invalid("/server/command", "is empty"));
        }
        // A bare program name goes through PATH; anything with a slash is a path.
        let command_path = if expanded.contains('/') {
            resolve_path(self.dir, command, &expanded)
        } else {
            PathBuf::from(expanded)
        };
        let args = raw
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| self.expand(&format!("/server/args/{i}"), a))
            .collect::<Result<_, _>>()?;
        let env = raw
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.expand(&format!("/server/env/{k}"), v)?)))
            .collect::<Result<_, FlowError>>()?;
        Ok(StdioServer {
            command: command_path,
            args,
            env,
            cwd,
        })
    }

    /// `/server/url` (http or https) and its `headers`, each a valid HTTP header: the headers
    /// are checked first.
    fn http_server(
        &self,
        raw: &RawServer,
        url: &str,
    ) -> Result<(String, Vec<(String, String)>), FlowError> {
        let mut headers = Vec::with_capacity(raw.headers.len());
        for (name, value) in &raw.headers {
            let at = format!("/server/headers/{}", pointer_token(name));
            // RFC 9110 token characters for the name; no line break in the value.
            let token = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err(self.invalid(at, "is not an HTTP header name"));
            }
            let value = self.expand(&at, value)?;
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(self.invalid(at, "an HTTP header value holds no line break"));
            }
            headers.push((name.clone(), value));
        }
        let before = self.used.borrow().len();
        let url = self.expand("/server/url", url)?;
        // A variable read as written (`${MCP_URL}`: unset in a skipped flow, or read by
        // `mcp coverage`, which reads no variable) stands in for a URL not known here: its
        // form is checked when the flow is read with the variable set.
        let stand_in = self.used.borrow()[before..]
            .iter()
            .any(|(value, name)| *value == format!("${{{name}}}"));
        if !stand_in && !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(self.invalid(
                "/server/url",
                format!(
                    "expected an http:// URL, found \"{}\"",
                    toolcall_score::escape(&url)
                ),
            ));
        }
        Ok((url, headers))
    }

    /// `/server/protocol`: `auto` when absent.
    fn protocol(&self, name: Option<&str>) -> Result<Protocol, FlowError> {
        let Some(name) = name else {
            return Ok(Protocol::default());
        };
        Protocol::parse(name).ok_or_else(|| {
            self.invalid(
                "/server/protocol",
                format!(
                    "`{}` is not a protocol: \"auto\" (the default), \"legacy\" \
                     (initialize, 2025-11-25 and earlier) or \"modern\" (server/discover, \
                     2026-07-28)",
                    toolcall_score::escape(name)
                ),
            )
        })
    }

    /// `/snapshot`: the catalog snapshot file, relative to the flow's folder, read now (a JSON
    /// object with a `tools` array).
    fn snapshot(&self, file: Option<&str>) -> Result<Option<Snapshot>, FlowError> {
        let Some(file) = file else {
            return Ok(None);
        };
        let at = self.dir.join(file);
        let why = match toolcall_score::read_text(&at) {
            Err(e) => Err(e.to_string()),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(catalog) if catalog["tools"].is_array() => Ok(catalog),
                Ok(_) => Err("has no \"tools\" array".to_owned()),
                Err(e) => Err(format!("is not JSON: {e}")),
            },
        };
        match why {
            Ok(catalog) => Ok(Some(Snapshot { path: at, catalog })),
            Err(why) => Err(self.invalid(
                "/snapshot",
                format!(
                    "`{}` is not a catalog snapshot (`toolcall mcp snapshot` writes one): {why}",
                    toolcall_score::escape(file)
                ),
            )),
        }
    }

    /// `/calls/{i}`: its `input` (an object), its expectations, and its `input_responses`.
    /// A call that must fail (`expect_error`) has no result to check, so it has no other
    /// expectation.
    fn call(
        &self,
        i: usize,
        mut call: RawCall,
        verify: Option<&Verify>,
    ) -> Result<Call, FlowError> {
        let at = format!("/calls/{i}");
        call.id = self.call_id(i, call.id.take())?;
        let skip = skip_reason(
            self.path,
            &at,
            call.skip.as_ref(),
            call.skip_unless_env.as_deref(),
            self.vars,
        )?;
        // A skipped call is read whole, as a skipped flow is, its unset variables as written.
        if skip.is_some() {
            let lenient = AsWrittenWhenUnset(self.vars);
            let reader = Reader {
                path: self.path,
                dir: self.dir,
                vars: &lenient,
                used: std::cell::RefCell::new(Vec::new()),
                ids: std::cell::RefCell::new(self.ids.borrow().clone()),
            };
            let read = reader.call_parts(i, call, verify)?;
            self.used.borrow_mut().extend(reader.used.into_inner());
            self.ids.borrow_mut().push(read.id.clone());
            return Ok(Call { skip, ..read });
        }
        let read = self.call_parts(i, call, verify)?;
        self.ids.borrow_mut().push(read.id.clone());
        Ok(read)
    }

    /// `/calls/{i}/id`: a name of letters, digits, `_` and `-`, no other call's.
    fn call_id(&self, i: usize, id: Option<String>) -> Result<Option<String>, FlowError> {
        let Some(id) = id else { return Ok(None) };
        let at = format!("/calls/{i}/id");
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(self.invalid(
                at,
                format!(
                    "\"{}\" is not a step id: letters, digits, `_` and `-` (it is written \
                     ${{steps.ID.result…}})",
                    toolcall_score::escape(&id)
                ),
            ));
        }
        if let Some(j) = self
            .ids
            .borrow()
            .iter()
            .position(|o| o.as_deref() == Some(&id))
        {
            return Err(self.invalid(
                at,
                format!(
                    "\"{}\" is already the id of /calls/{j}",
                    toolcall_score::escape(&id)
                ),
            ));
        }
        Ok(Some(id))
    }

    /// `/calls/{i}/input` with each string that holds a `${steps.…}` reference taken apart
    /// (its `${VAR}`s expanded now, its references filled in when the call is made) and
    /// written back as it reads: `$$` for each `$`, so that expanding the input leaves it be.
    fn captures(
        &self,
        i: usize,
        input: Value,
    ) -> Result<(Value, Vec<crate::capture::Capture>), FlowError> {
        let mut captures = Vec::new();
        let ids = self.ids.borrow().clone();
        let input = crate::capture::take_apart(
            input,
            &format!("/calls/{i}/input"),
            "",
            &ids,
            &mut captures,
            &|at, text| self.expand(at, text),
        )
        .map_err(|e| match e {
            crate::capture::TakeApart::Flow(e) => e,
            crate::capture::TakeApart::Invalid { at, message } => self.invalid(at, message),
        })?;
        Ok((input, captures))
    }

    /// `/calls/{i}/assert`: each assertion checked now (a JSON path that addresses one value,
    /// counts that are numbers), its strings' `${VAR}`s expanded.
    fn assertions(
        &self,
        i: usize,
        assert: Option<Value>,
    ) -> Result<crate::assertions::Assertions, FlowError> {
        let Some(value) = assert else {
            return Ok(crate::assertions::Assertions::default());
        };
        let at = format!("/calls/{i}/assert");
        let value = self.expand_strings(value, &at)?;
        crate::assertions::Assertions::read(value)
            .map_err(|(pointer, message)| self.invalid(format!("{at}{pointer}"), message))
    }

    /// [`Reader::call`] once the call's `skip` is known: everything else.
    fn call_parts(
        &self,
        i: usize,
        call: RawCall,
        verify: Option<&Verify>,
    ) -> Result<Call, FlowError> {
        let (kind, name) = self.kind(
            i,
            kinds::RawKind {
                name: call.name,
                prompt: call.prompt,
                resource: call.resource,
                complete: call.complete,
                list: call.list,
            },
        )?;
        if !call.input.is_object() {
            return Err(self.invalid(
                format!("/calls/{i}/input"),
                "expected a JSON object of arguments",
            ));
        }
        let (input, captures) = self.captures(i, call.input)?;
        let input = self.expand_strings(input, &format!("/calls/{i}/input"))?;
        let expect = self.expect(i, call.expect)?;
        let expect_error = self.expect_error(i, call.expect_error)?;
        if expect_error.is_some() && !expect.is_empty() {
            return Err(self.invalid(
                format!("/calls/{i}"),
                "has both \"expect\" and \"expect_error\": a call that must fail has no \
                 result to check",
            ));
        }
        let expect_text = self.expect_text(i, call.expect_text, call.expect_match)?;
        let expect_content = self.expect_content(i, call.expect_content)?;
        if expect_error.is_some() && (expect_text.is_some() || expect_content.is_some()) {
            return Err(self.invalid(
                format!("/calls/{i}"),
                "has \"expect_error\" and an expectation of its result: a call that must fail \
                 has no result to check",
            ));
        }
        let input_responses = self.input_responses(i, call.input_responses)?;
        let assert = self.assertions(i, call.assert)?;
        if expect_error.is_some() && !assert.is_empty() {
            return Err(self.invalid(
                format!("/calls/{i}"),
                "has \"expect_error\" and \"assert\": a call that must fail has no result to \
                 check",
            ));
        }
        let verify = self.verify(i, verify, call.verify, call.recorded)?;
        let call = Call {
            name,
            input,
            expect,
            expect_error,
            expect_text,
            expect_content,
            input_responses,
            kind,
            verify,
            id: call.id,
            captures,
            assert,
            skip: None,
        };
        self.check_kind(i, &call)?;
        Ok(call)
    }

    /// `/calls/{i}/expect`: JSON pointers (each key) to the values the result must hold there.
    fn expect(
        &self,
        i: usize,
        expect: serde_json::Map<String, Value>,
    ) -> Result<Vec<(String, Value)>, FlowError> {
        let mut checked = Vec::with_capacity(expect.len());
        for (pointer, value) in expect {
            let value = self.expand_strings(
                value,
                &format!("/calls/{i}/expect/{}", pointer_token(&pointer)),
            )?;
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(self.invalid(
                    format!("/calls/{i}/expect"),
                    format!(
                        "key \"{}\" is not a JSON pointer; write \"/{}\"",
                        toolcall_score::escape(&pointer),
                        toolcall_score::escape(&pointer)
                    ),
                ));
            }
            checked.push((pointer, value));
        }
        Ok(checked)
    }

    /// `/calls/{i}/expect_error`: `true` (any refusal), a JSON-RPC error code, or a text the
    /// error must contain; `false` or absent, none.
    fn expect_error(
        &self,
        i: usize,
        expect_error: Option<Value>,
    ) -> Result<Option<ExpectError>, FlowError> {
        Ok(match expect_error {
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(ExpectError::Any),
            Some(Value::Number(code)) if code.as_i64().is_some() => {
                code.as_i64().map(ExpectError::Code)
            }
            Some(Value::String(text)) => Some(ExpectError::Text(
                self.expand(&format!("/calls/{i}/expect_error"), &text)?,
            )),
            Some(other) => {
                return Err(self.invalid(
                    format!("/calls/{i}/expect_error"),
                    format!(
                        "expected true, a JSON-RPC error code (-32602) or a text the error \
                         must contain, found {}",
                        toolcall_score::escape(&other.to_string())
                    ),
                ))
            }
        })
    }

    /// `/calls/{i}/expect_text` (the exact text) or `expect_match` (a regular expression,
    /// compiled now so a bad one is the file's error), not both.
    fn expect_text(
        &self,
        i: usize,
        text: Option<String>,
        pattern: Option<String>,
    ) -> Result<Option<TextExpectation>, FlowError> {
        Ok(match (text, pattern) {
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    format!("/calls/{i}"),
                    "has both \"expect_text\" and \"expect_match\"; use one",
                ))
            }
            (Some(text), None) => Some(TextExpectation::Equals(
                self.expand(&format!("/calls/{i}/expect_text"), &text)?,
            )),
            (None, Some(pattern)) => {
                if let Err(e) = regex::Regex::new(&pattern) {
                    return Err(self.invalid(
                        format!("/calls/{i}/expect_match"),
                        format!("not a regular expression: {e}"),
                    ));
                }
                Some(TextExpectation::Matches(pattern))
            }
            (None, None) => None,
        })
    }

    /// `/calls/{i}/expect_content`: a content block's type and what it must carry.
    fn expect_content(
        &self,
        i: usize,
        expect_content: Option<Value>,
    ) -> Result<Option<ContentExpectation>, FlowError> {
        let Some(value) = expect_content else {
            return Ok(None);
        };
        let value = self.expand_strings(value, &format!("/calls/{i}/expect_content"))?;
        let content: ContentExpectation = serde_json::from_value(value).map_err(|e| {
            self.invalid(
                format!("/calls/{i}/expect_content"),
                format!(
                    "expected {{\"type\": \"image\" | \"audio\" | \"resource_link\" | \
                     \"resource\", \"mime_type\", \"uri\", \"min_bytes\", \"max_bytes\"}}: {e}"
                ),
            )
        })?;
        if !["image", "audio", "resource_link", "resource", "text"].contains(&content.kind.as_str())
        {
            return Err(self.invalid(
                format!("/calls/{i}/expect_content/type"),
                format!(
                    "\"{}\" is not a content type: image, audio, resource_link, resource or text",
                    toolcall_score::escape(&content.kind)
                ),
            ));
        }
        Ok(Some(content))
    }

    /// `/calls/{i}/input_responses`: the client's result (an object) for each request the
    /// server may make with `input_required`, by its key or its method.
    fn input_responses(
        &self,
        i: usize,
        input_responses: serde_json::Map<String, Value>,
    ) -> Result<BTreeMap<String, Value>, FlowError> {
        let mut answers = BTreeMap::new();
        for (key, answer) in input_responses {
            let at = format!("/calls/{i}/input_responses/{}", pointer_token(&key));
            if !answer.is_object() {
                return Err(self.invalid(
                    at,
                    "expected the client's result for the request, an object \
                     ({\"action\": \"accept\", \"content\": {…}} for an elicitation)",
                ));
            }
            answers.insert(key, self.expand_strings(answer, &at)?);
        }
        Ok(answers)
    }
}

/// Expands `${VAR}` in every string inside `value` (not in object keys).
fn expand_strings(
    value: Value,
    pointer: &str,
    expand: &dyn Fn(&str, &str) -> Result<String, FlowError>,
) -> Result<Value, FlowError> {
    Ok(match value {
        Value::String(s) if s.contains('$') => Value::String(expand(pointer, &s)?),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| expand_strings(v, &format!("{pointer}/{i}"), expand))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let at = format!("{pointer}/{}", pointer_token(&k));
                    Ok((k, expand_strings(v, &at, expand)?))
                })
                .collect::<Result<_, FlowError>>()?,
        ),
        other => other,
    })
}

/// Resolves a path against the flow's directory, but only when the text *written in the flow* is
/// relative: a value substituted from `${VAR}` is used as given.
fn resolve_path(dir: &Path, written: &str, expanded: &str) -> PathBuf {
    let path = PathBuf::from(expanded);
    if written.starts_with("${") || path.is_absolute() {
        path
    } else {
        dir.join(path)
    }
}

/// `text` as a flow writes it so that it reads back as `text`: each `$` doubled (`$$` is a `$`),
/// so nothing in it is a `${VAR}`. What `toolcall mcp record` does to everything a session said
/// (a client's argument `${GITHUB_TOKEN}` must replay as those characters, not as the token):
/// only what a person writes in a flow is a template.
pub fn escape_template(text: &str) -> String {
    text.replace('$', "$$")
}

/// [`escape_template`] over every string inside `value`. Object keys are left as they are: the
/// reader never expands them.
pub fn escape_templates(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(escape_template(s)),
        Value::Array(items) => Value::Array(items.iter().map(escape_templates).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), escape_templates(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What [`escape_templates`] wrote, read back without any variable: `$$` is a `$`, and a
/// `${NAME}` (which it never writes) stays as written. For the parts of a flow a replay does not
/// read (`recorded`), which `toolcall mcp serve` answers with.
pub fn unescape_templates(value: Value) -> Value {
    /// Every `${NAME}` as written.
    struct AsWritten;
    impl Vars for AsWritten {
        fn get(&self, name: &str) -> Option<String> {
            Some(format!("${{{name}}}"))
        }
    }
    let mut used = Vec::new();
    match value {
        Value::String(s) if s.contains('$') => {
            Value::String(expand_vars(&s, &AsWritten, &mut used).unwrap_or(s))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(unescape_templates).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, unescape_templates(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Replaces `${NAME}` with the variable's value, noting `(value, NAME)` in `used`; `Err(NAME)`
/// when one is unset. `$$` is a `$`.
fn expand_vars(
    text: &str,
    vars: &dyn Vars,
    used: &mut Vec<(String, String)>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            match body.find('}') {
                Some(end) => {
                    let name = &body[..end];
                    let value = vars.get(name).ok_or_else(|| name.to_owned())?;
                    out.push_str(&value);
                    used.push((value, name.to_owned()));
                    rest = &body[end + 1..];
                }
                None => {
                    out.push_str(&rest[i..]);
                    rest = "";
                }
            }
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Why a flow (`at` empty) or the call at `at` is skipped: its `skip` (`true`, or the reason),
/// or its `skip_unless_env` naming a variable that is unset or empty (a CI secret a fork's run
/// does not get is set to nothing).
fn skip_reason(
    path: &Path,
    at: &str,
    skip: Option<&Value>,
    skip_unless_env: Option<&str>,
    vars: &dyn Vars,
) -> Result<Option<String>, FlowError> {
    let invalid = |key: &str, message: String| FlowError::Invalid {
        path: path.to_owned(),
        pointer: format!("{at}/{key}"),
        message,
    };
    let skip = match skip {
        None | Some(Value::Null | Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("skip: true".to_owned()),
        Some(Value::String(reason)) if !reason.trim().is_empty() => Some(reason.clone()),
        Some(other) => {
            return Err(invalid(
                "skip",
                format!(
                    "expected true, false or the reason (a string that is not empty), found {}",
                    toolcall_score::escape(&other.to_string())
                ),
            ))
        }
    };
    let Some(name) = skip_unless_env else {
        return Ok(skip);
    };
    if name.is_empty() || name.contains(['$', '{', '}', '=']) {
        return Err(invalid(
            "skip_unless_env",
            format!(
                "expected the name of an environment variable (CI_TOKEN), found \"{}\"",
                toolcall_score::escape(name)
            ),
        ));
    }
    if skip.is_some() {
        return Ok(skip);
    }
    Ok(match vars.get(name) {
        Some(value) if !value.is_empty() => None,
        Some(_) => Some(format!("skip_unless_env: {name} is empty")),
        None => Some(format!("skip_unless_env: {name} is not set")),
    })
}

/// The variables of a skipped flow or call: an unset one reads as written (`${TOKEN}`), so
/// that what is never sent cannot stop the flow from being read.
struct AsWrittenWhenUnset<'a>(&'a dyn Vars);

impl Vars for AsWrittenWhenUnset<'_> {
    fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).or_else(|| Some(format!("${{{name}}}")))
    }
}

/// `key` as one token of a JSON pointer (`~` and `/` escaped).
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_in_lists_sorted_flows_and_refuses_an_empty_folder() {
        let dir =
            std::env::temp_dir().join(format!("toolcall-mcp-files-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("nested.json")).unwrap();
        let empty = Flow::files_in(&dir).unwrap_err().to_string();
        assert!(empty.contains("holds no flow"), "{empty}");
        for name in ["b.json", "a.json", "notes.md"] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        let names: Vec<String> = Flow::files_in(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.json", "b.json"]);
        let missing = Flow::files_in(&dir.join("missing"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot list"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(text: &str) -> Result<Flow, FlowError> {
        Flow::from_json_str(
            text,
            Path::new("flows/x.json"),
            Path::new("/repo/flows"),
            &vars(&[("SERVER", "/opt/server"), ("REL", "rel/server")]),
        )
    }

    #[test]
    fn resolves_relative_paths_against_the_flow_directory() {
        let flow = parse(
            r#"{"server": {"command": "./bin/server", "cwd": "data", "args": ["a"]},
                "calls": [{"name": "t"}]}"#,
        )
        .unwrap();
        let Server::Stdio(s) = flow.server else {
            panic!("stdio")
        };
        assert_eq!(s.command, Path::new("/repo/flows/./bin/server"));
        assert_eq!(s.cwd, Path::new("/repo/flows/data"));
        assert_eq!(flow.calls[0].input, serde_json::json!({}));
    }

    #[test]
    fn bare_commands_use_path_and_cwd_defaults_to_the_flow_directory() {
        let flow = parse(r#"{"server": {"command": "node"}, "calls": []}"#).unwrap();
        let Server::Stdio(s) = flow.server else {
            panic!("stdio")
        };
        assert_eq!(s.command, Path::new("node"));
        assert_eq!(s.cwd, Path::new("/repo/flows"));
    }

    #[test]
    fn substituted_values_are_used_as_given() {
        let flow = parse(
            r#"{"server": {"command": "${REL}", "env": {"K": "x${SERVER}$$"}}, "calls": []}"#,
        )
        .unwrap();
        let Server::Stdio(s) = flow.server else {
            panic!("stdio")
        };
        assert_eq!(s.command, Path::new("rel/server"));
        assert_eq!(s.env["K"], "x/opt/server$");
    }

    #[test]
    fn variables_expand_in_inputs_and_expectations() {
        let flow = parse(
            r#"{"server": {"command": "node"}, "calls": [{"name": "t",
                "input": {"path": "${SERVER}/a", "n": [1, "$$5"]},
                "expect": {"/dir": "${SERVER}"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            flow.calls[0].input,
            serde_json::json!({"path": "/opt/server/a", "n": [1, "$5"]})
        );
        assert_eq!(
            flow.calls[0].expect,
            [("/dir".to_owned(), serde_json::json!("/opt/server"))]
        );
        let err = parse(r#"{"server": {"command": "node"}, "calls": [{"name": "t", "input": {"a": ["${NOPE_ATP_Y}"]}}]}"#)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "flows/x.json: /calls/0/input/a/0 uses ${NOPE_ATP_Y}, which is not set"
        );
    }

    #[test]
    fn an_unset_variable_is_named() {
        let err = parse(r#"{"server": {"command": "${NOPE_ATP_X}"}, "calls": []}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "flows/x.json: /server/command uses ${NOPE_ATP_X}, which is not set"
        );
    }

    #[test]
    fn expect_keys_must_be_pointers() {
        let err = parse(
            r#"{"server": {"url": "http://127.0.0.1:1/mcp"},
                "calls": [{"name": "t", "expect": {"status": "ok"}}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "flows/x.json: at /calls/0/expect: key \"status\" is not a JSON pointer; write \"/status\""
        );
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = parse("{\"server\": {\"url\": \"http://x\"},\n \"calls\": [,]}").unwrap_err();
        let FlowError::Syntax { line, column, .. } = err else {
            panic!("syntax error expected, got {err}")
        };
        assert_eq!((line, column), (2, 12));
    }

    /// A flow may name its JSON Schema; the key changes nothing, and must be a string.
    #[test]
    fn a_schema_key_is_accepted() {
        let text = r#"{"server": {"command": "node"}, "calls": [{"name": "t"}]}"#;
        let named = text.replacen('{', r#"{"$schema": "../schemas/flow.schema.json", "#, 1);
        assert_eq!(parse(&named).unwrap(), parse(text).unwrap());
        let err = parse(&text.replacen('{', r#"{"$schema": 1, "#, 1)).unwrap_err();
        assert!(err.to_string().contains("expected a string"), "{err}");
    }

    /// Every way a flow file can be refused once it is read, with the whole message (the file,
    /// the line or the JSON pointer, what to write instead): `cargo insta review` shows a change.
    #[test]
    fn every_refusal_names_the_file_and_the_place() {
        const SERVER: &str = r#""server": {"command": "node"}"#;
        let call = |fields: &str| format!(r#"{{{SERVER}, "calls": [{{"name": "t", {fields}}}]}}"#);
        let cases: Vec<(&str, String)> = vec![
            (
                "not JSON",
                "{\"server\": {\"url\": \"http://x\"},\n \"calls\": [,]}".into(),
            ),
            ("no calls", format!("{{{SERVER}}}")),
            (
                "an unknown key",
                r#"{"server": {"url": "http://x"}, "calls": [], "cals": []}"#.into(),
            ),
            (
                "neither command nor url",
                r#"{"server": {}, "calls": []}"#.into(),
            ),
            (
                "args on a url server",
                r#"{"server": {"url": "http://x", "args": ["a"]}, "calls": []}"#.into(),
            ),
            (
                "headers on a command server",
                r#"{"server": {"command": "node", "headers": {"A": "b"}}, "calls": []}"#.into(),
            ),
            (
                "an empty command",
                r#"{"server": {"command": ""}, "calls": []}"#.into(),
            ),
            (
                "an unset variable",
                r#"{"server": {"command": "node", "env": {"K": "${NOPE_ATP_Z}"}}, "calls": []}"#
                    .into(),
            ),
            (
                "a header name that is not a token",
                r#"{"server": {"url": "http://x", "headers": {"a/b c": "v"}}, "calls": []}"#.into(),
            ),
            (
                "a header value with a line break",
                r#"{"server": {"url": "http://x", "headers": {"A": "v\r\nB: c"}}, "calls": []}"#
                    .into(),
            ),
            (
                "a url that is not http",
                r#"{"server": {"url": "ftp://x"}, "calls": []}"#.into(),
            ),
            (
                "an unknown protocol",
                r#"{"server": {"command": "x", "protocol": "2025-11-25"}, "calls": []}"#.into(),
            ),
            (
                "a missing snapshot",
                format!(r#"{{{SERVER}, "snapshot": "missing.json", "calls": []}}"#),
            ),
            ("an input that is not an object", call(r#""input": [1]"#)),
            (
                "an expect key that is not a pointer",
                call(r#""expect": {"status": "ok"}"#),
            ),
            (
                "an expect_error of no known shape",
                call(r#""expect_error": {"code": 1}"#),
            ),
            (
                "expect and expect_error",
                call(r#""expect": {"/a": 1}, "expect_error": true"#),
            ),
            (
                "expect_text and expect_match",
                call(r#""expect_text": "a", "expect_match": "a""#),
            ),
            (
                "an expect_match that does not compile",
                call(r#""expect_match": "(""#),
            ),
            (
                "an expect_content of no known shape",
                call(r#""expect_content": {"kind": 1}"#),
            ),
            (
                "an expect_content of an unknown type",
                call(r#""expect_content": {"type": "video"}"#),
            ),
            (
                "expect_text and expect_error",
                call(r#""expect_text": "a", "expect_error": true"#),
            ),
            (
                "an input response that is not an object",
                call(r#""input_responses": {"a/b": "yes"}"#),
            ),
            ("a skip that is a number", call(r#""skip": 1"#)),
            (
                "a skip_unless_env that is not a name",
                call(r#""skip_unless_env": "${X}""#),
            ),
            (
                "a flow skip that is empty",
                format!(r#"{{{SERVER}, "skip": " ", "calls": []}}"#),
            ),
            ("an id with a dot", call(r#""id": "a.b""#)),
            (
                "a step reference with no id before it",
                call(r#""input": {"a": "${steps.x.result}"}"#),
            ),
            (
                "an assert of an unknown kind",
                call(r#""assert": {"contain": "ok"}"#),
            ),
            (
                "an assert path to many values",
                call(r#""assert": {"json_path": {"$..id": 1}}"#),
            ),
            (
                "assert and expect_error",
                call(r#""assert": {"contains": "a"}, "expect_error": true"#),
            ),
        ];
        let refusals: String = cases
            .iter()
            .map(|(what, text)| match parse(text) {
                Ok(_) => format!("{what}:\n  {text}\n  ACCEPTED\n"),
                Err(e) => format!("{what}:\n  {text}\n  {e}\n"),
            })
            .collect();
        insta::assert_snapshot!(refusals);
    }

    /// `skip` and `skip_unless_env`, on a flow and on a call: the reason kept, and a variable a
    /// skipped part uses may be unset (the token `skip_unless_env` is about, most often).
    #[test]
    fn skip_and_skip_unless_env_on_a_flow_and_a_call() {
        let flow = parse(
            r#"{"skip_unless_env": "NOPE_ATP_TOKEN",
                "server": {"url": "https://x/mcp", "headers": {"A": "Bearer ${NOPE_ATP_TOKEN}"}},
                "calls": [{"name": "t", "input": {"k": "${NOPE_ATP_TOKEN}"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            flow.skip.as_deref(),
            Some("skip_unless_env: NOPE_ATP_TOKEN is not set")
        );
        // The URL itself from the unset variable: the most common shape of a flow run only where
        // a server is given. Skipped, not refused for a URL it cannot know.
        let flow = parse(
            r#"{"skip_unless_env": "NOPE_ATP_URL", "server": {"url": "${NOPE_ATP_URL}"},
                "calls": [{"name": "t"}]}"#,
        )
        .unwrap();
        assert_eq!(
            flow.skip.as_deref(),
            Some("skip_unless_env: NOPE_ATP_URL is not set")
        );
        // A variable that is set is checked for what it holds.
        let err =
            parse(r#"{"server": {"url": "${SERVER}"}, "calls": [{"name": "t"}]}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains(r#"expected an http:// URL, found "/opt/server""#),
            "{err}"
        );
        let flow = parse(
            r#"{"server": {"command": "node"}, "calls": [
                {"name": "a", "skip": "the sandbox has no ledger"},
                {"name": "b", "skip_unless_env": "NOPE_ATP_T2", "input": {"k": "${NOPE_ATP_T2}"}},
                {"name": "c", "skip_unless_env": "SERVER", "skip": false},
                {"name": "d", "skip": true}]}"#,
        )
        .unwrap();
        let skips: Vec<Option<&str>> = flow.calls.iter().map(|c| c.skip.as_deref()).collect();
        assert_eq!(
            skips,
            [
                Some("the sandbox has no ledger"),
                Some("skip_unless_env: NOPE_ATP_T2 is not set"),
                None,
                Some("skip: true")
            ]
        );
        assert_eq!(flow.skip, None);
        // A call that is not skipped still needs its variables.
        let err = parse(
            r#"{"server": {"command": "node"}, "calls": [{"name": "t", "skip_unless_env": "SERVER",
                "input": {"k": "${NOPE_ATP_T3}"}}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("uses ${NOPE_ATP_T3}"), "{err}");
    }

    /// `${steps.ID.result.PATH}` is kept for the replay to fill in; a reference to a step no
    /// earlier call names is the file's error, naming the place and the ids there are.
    #[test]
    fn step_references_are_kept_and_checked_against_earlier_ids() {
        let flow = parse(
            r##"{"server": {"command": "node"}, "calls": [
                {"name": "create", "id": "create"},
                {"name": "close", "input": {"n": "${steps.create.result.id}",
                  "s": "#${steps.create.result.id} by ${SERVER}", "lit": "$${steps.create.text}"}}]}"##,
        )
        .unwrap();
        let close = &flow.calls[1];
        assert_eq!(
            close.input,
            serde_json::json!({"n": "${steps.create.result.id}",
                "s": "#${steps.create.result.id} by /opt/server", "lit": "${steps.create.text}"})
        );
        let pointers: Vec<&str> = close.captures.iter().map(|c| c.pointer.as_str()).collect();
        assert_eq!(pointers, ["/n", "/s"]);
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            err(
                r#"{"server": {"command": "node"}, "calls": [{"name": "a", "id": "a"},
                {"name": "b", "input": {"x": ["${steps.later.result.id}"]}}, {"name": "c", "id": "later"}]}"#
            ),
            "flows/x.json: at /calls/1/input/x/0: `${steps.later.result.id}` names step `later`, \
             which no earlier call has as its \"id\" (earlier ids: `a`)"
        );
        assert!(err(
            r#"{"server": {"command": "node"}, "calls": [{"name": "a", "id": "a"},
                {"name": "b", "input": {"x": "${steps.a.output}"}}]}"#
        )
        .contains("is not a step reference"));
        assert_eq!(
            err(
                r#"{"server": {"command": "node"}, "calls": [{"name": "a", "id": "a"}, {"name": "b", "id": "a"}]}"#
            ),
            "flows/x.json: at /calls/1/id: \"a\" is already the id of /calls/0"
        );
    }

    #[test]
    fn a_server_is_command_or_url() {
        let err = parse(r#"{"server": {}, "calls": []}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "flows/x.json: at /server: needs \"command\" (a stdio server) or \"url\" (streamable HTTP)"
        );
    }
}
