//! `score`, `Scorer`, `Verdict`, `Finding` and `assert_tool_calls_defined`: the core's scorer
//! over Python inputs, its verdict as Python objects, and its parse errors as
//! `toolcall_score.ParseError`.

use std::str::FromStr;
use std::sync::Arc;

use pyo3::exceptions::{PyAssertionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolcall_score::{Case, Catalog, Format, InputError, ParseError, Response};

use super::convert::{body, to_py, Body};
use super::{error_type, guarded};

/// A format named by the caller, or an error listing the names.
pub(crate) fn format_arg(name: Option<&str>) -> PyResult<Option<Format>> {
    name.map(|n| Format::from_str(n).map_err(|e| PyValueError::new_err(e.to_string())))
        .transpose()
}

/// `toolcall_score.ParseError` for a body that could not be read: the message the CLI prints,
/// and the format tried, the member (a JSON pointer) and the position as attributes.
fn parse_error_from(
    py: Python<'_>,
    what: &str,
    named: Option<Format>,
    input: Option<&InputError>,
    parse: Option<&ParseError>,
    message: String,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        let parse = parse.or(match input {
            Some(InputError::Invalid { error, .. }) => Some(error),
            _ => None,
        });
        let (mut format, mut detected) = (named.map(Format::as_str), None);
        if let Some(ParseError::FormatMismatch {
            named, detected: d, ..
        }) = parse
        {
            format = Some(named.as_str());
            detected = Some(d.as_str());
        }
        let candidates: Option<Vec<&str>> = match parse {
            Some(ParseError::Ambiguous { candidates }) => {
                Some(candidates.iter().map(|f| f.as_str()).collect())
            }
            _ => None,
        };
        kwargs.set_item("what", what)?;
        kwargs.set_item("format", format)?;
        kwargs.set_item("detected", detected)?;
        kwargs.set_item("candidates", candidates)?;
        kwargs.set_item("member", parse.and_then(ParseError::pointer))?;
        let location = input.and_then(InputError::location);
        kwargs.set_item("line", location.map(|l| l.line))?;
        kwargs.set_item("column", location.map(|l| l.column))?;
        let error = error_type(py, "ParseError")?.call((message,), Some(&kwargs))?;
        Ok(PyErr::from_value(error))
    };
    build().unwrap_or_else(|e| e)
}

fn input_error(py: Python<'_>, what: &str, named: Option<Format>, e: &InputError) -> PyErr {
    parse_error_from(py, what, named, Some(e), None, format!("the {what}: {e}"))
}

fn value_error(py: Python<'_>, what: &str, named: Option<Format>, e: &ParseError) -> PyErr {
    parse_error_from(py, what, named, None, Some(e), format!("the {what}: {e}"))
}

/// The case from `tools=` or `request=`, exactly one of them.
pub(crate) fn case_of(
    py: Python<'_>,
    tools: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
) -> PyResult<Case> {
    match (tools, request) {
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "give tools= (a tools array) or request= (the request sent), not both",
        )),
        (None, None) => Err(PyValueError::new_err(
            "give tools= (a tools array) or request= (the request sent): without them every \
             call is unknown",
        )),
        (Some(tools), None) => catalog_of(py, tools).map(Case::from_catalog),
        (None, Some(request)) => match body(request)? {
            Body::Text(text) => {
                Case::from_json_str(&text).map_err(|e| input_error(py, "request", None, &e))
            }
            Body::Value(value) => {
                Case::from_value(&value).map_err(|e| value_error(py, "request", None, &e))
            }
        },
    }
}

/// A tools array in any provider's shape (or a request holding one).
pub(crate) fn catalog_of(py: Python<'_>, tools: &Bound<'_, PyAny>) -> PyResult<Catalog> {
    let value = match body(tools)? {
        Body::Value(value) => value,
        Body::Text(text) => serde_json::from_str(&text)
            .map_err(|e| input_error(py, "tools", None, &InputError::syntax(None, &e)))?,
    };
    Catalog::from_json(&value).map_err(|e| value_error(py, "tools", None, &e))
}

/// A response from what the caller passed.
pub(crate) fn response_of(
    py: Python<'_>,
    response: &Bound<'_, PyAny>,
    format: Option<Format>,
) -> PyResult<Response> {
    match body(response)? {
        Body::Text(text) => Response::from_json_str(&text, format)
            .map_err(|e| input_error(py, "response", format, &e)),
        Body::Value(value) => Response::from_value(&value, format)
            .map_err(|e| value_error(py, "response", format, &e)),
    }
}

/// One thing wrong with a response, as `toolcall score` prints it (`str(finding)`).
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct Finding(pub(crate) toolcall_score::Finding);

#[pymethods]
impl Finding {
    /// What is wrong: `unknown_tool`, `schema_violation`, …
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.kind.as_str()
    }

    /// The tool name, exactly as the model wrote it.
    #[getter]
    fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }

    /// Why an unknown name probably appeared: `retired`, `subset`, `namespace`,
    /// `prompt_drift`, `prose`, `invented`.
    #[getter]
    fn cause(&self) -> Option<&'static str> {
        self.0.cause.map(|c| c.as_str())
    }

    /// The defined names it was likely meant to be, closest first.
    #[getter]
    fn suggestions(&self) -> Vec<String> {
        self.0.suggestions().to_vec()
    }

    /// The call's id, when it has one.
    #[getter]
    fn call_id(&self) -> Option<&str> {
        self.0.call_id.as_deref()
    }

    /// Where: `response call 2`, `response text 1`, `transcript message 4`.
    #[getter]
    fn location(&self) -> &str {
        &self.0.location
    }

    /// The explanation.
    #[getter]
    fn detail(&self) -> &str {
        &self.0.detail
    }

    /// The JSON pointers into the call's arguments that fail the tool's schema (schema
    /// violations only; empty otherwise), in the order the validator reported them.
    #[getter]
    fn argument_paths(&self) -> Vec<String> {
        argument_paths(&self.0)
    }

    /// The first of `argument_paths`, or `None`.
    #[getter]
    fn argument_path(&self) -> Option<String> {
        argument_paths(&self.0).into_iter().next()
    }

    /// What a baseline pins of it: `name (cause)`, `kind: name` or `kind`.
    #[getter]
    fn fingerprint(&self) -> String {
        self.0.fingerprint()
    }

    /// The finding as JSON (`toolcall score --json`'s shape).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value =
            serde_json::to_value(&self.0).map_err(|e| PyValueError::new_err(e.to_string()))?;
        to_py(py, &value)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<Finding {}>", self.0)
    }
}

/// The argument paths of a schema violation: its detail lists one failure per `; `, each
/// `"<pointer>: <message>"` as the core's schema check writes them (a failure of the whole
/// object has no pointer and is left out).
fn argument_paths(finding: &toolcall_score::Finding) -> Vec<String> {
    if finding.kind != toolcall_score::FindingKind::SchemaViolation {
        return Vec::new();
    }
    let Some(list) = finding
        .detail
        .strip_prefix("arguments fail the input schema: ")
    else {
        return Vec::new();
    };
    list.split("; ")
        .filter(|part| part.starts_with('/'))
        .filter_map(|part| part.split_once(": ").map(|(path, _)| path.to_owned()))
        .collect()
}

/// The outcome of scoring one response: `passed` when there are no findings, whatever the
/// notes. `str(verdict)` is what `toolcall score` prints.
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct Verdict(pub(crate) toolcall_score::Verdict);

#[pymethods]
impl Verdict {
    /// Whether nothing was found.
    #[getter]
    fn passed(&self) -> bool {
        self.0.is_pass()
    }

    /// The findings, in the order they were found.
    #[getter]
    fn findings(&self) -> Vec<Finding> {
        self.0.findings().iter().cloned().map(Finding).collect()
    }

    /// What was noticed without failing the response.
    #[getter]
    fn notes(&self) -> Vec<Finding> {
        self.0.notes().iter().cloned().map(Finding).collect()
    }

    /// The sorted, distinct fingerprint entries of the findings: what a baseline pins.
    #[getter]
    fn fingerprint(&self) -> Vec<String> {
        self.0.fingerprint()
    }

    /// The verdict as `toolcall score --json` prints it, as text.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.0).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The verdict as `toolcall score --json` prints it: `{"verdict", "findings", "notes"?}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value =
            serde_json::to_value(&self.0).map_err(|e| PyValueError::new_err(e.to_string()))?;
        to_py(py, &value)
    }

    fn __bool__(&self) -> bool {
        self.0.is_pass()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        let n = self.0.findings().len();
        if self.0.is_pass() {
            "<Verdict pass>".to_owned()
        } else {
            format!("<Verdict fail: {n} finding(s)>")
        }
    }
}

/// A case prepared once (its tools parsed, its schemas compiled on first use) for scoring many
/// responses: `Scorer(tools=...).score(response)` gives what `score(response, tools=...)` gives.
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct Scorer {
    case: Arc<Case>,
}

#[pymethods]
impl Scorer {
    #[new]
    #[pyo3(signature = (*, tools=None, request=None))]
    fn new(
        py: Python<'_>,
        tools: Option<&Bound<'_, PyAny>>,
        request: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Scorer> {
        guarded(py, || {
            Ok(Scorer {
                case: Arc::new(case_of(py, tools, request)?),
            })
        })
    }

    /// Scores one response against the prepared case.
    #[pyo3(signature = (response, *, format=None))]
    fn score(
        &self,
        py: Python<'_>,
        response: &Bound<'_, PyAny>,
        format: Option<&str>,
    ) -> PyResult<Verdict> {
        guarded(py, || {
            let format = format_arg(format)?.or(self.case.format);
            let response = response_of(py, response, format)?;
            Ok(Verdict(toolcall_score::score(&self.case, &response)))
        })
    }

    /// The names of the tools the case defines, in order.
    #[getter]
    fn tool_names(&self) -> Vec<String> {
        self.case.catalog.names().map(str::to_owned).collect()
    }
}

/// Scores `response` against the tools it was offered (`tools=`, any provider's tools array)
/// or the request it answers (`request=`, any provider's request body or a case file's JSON).
#[pyfunction]
#[pyo3(signature = (response, *, tools=None, request=None, format=None))]
pub(crate) fn score(
    py: Python<'_>,
    response: &Bound<'_, PyAny>,
    tools: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
    format: Option<&str>,
) -> PyResult<Verdict> {
    guarded(py, || {
        let case = case_of(py, tools, request)?;
        let format = format_arg(format)?.or(case.format);
        let response = response_of(py, response, format)?;
        Ok(Verdict(toolcall_score::score(&case, &response)))
    })
}

/// Raises `AssertionError` unless every call of `response` names a tool `request` defined (and
/// nothing else is wrong with it); the message is `str(verdict)`: each finding as `toolcall
/// score` prints it, with its cause and did-you-mean.
#[pyfunction]
#[pyo3(signature = (request, response, *, format=None))]
pub(crate) fn assert_tool_calls_defined(
    py: Python<'_>,
    request: &Bound<'_, PyAny>,
    response: &Bound<'_, PyAny>,
    format: Option<&str>,
) -> PyResult<Verdict> {
    let verdict = score(py, response, None, Some(request), format)?;
    if verdict.0.is_pass() {
        Ok(verdict)
    } else {
        Err(PyAssertionError::new_err(verdict.0.to_string()))
    }
}

/// The format names `format=` takes, in the order detection tries them.
#[pyfunction]
pub(crate) fn formats() -> Vec<&'static str> {
    Format::ALL.iter().map(|f| f.as_str()).collect()
}
