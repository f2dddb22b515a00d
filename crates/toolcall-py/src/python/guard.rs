//! The loop guard for a Python dispatcher: the core's sans-IO [`toolcall_score::ToolLoop`],
//! handed each model response, answering with the calls to run (`Pending`) or the end of the
//! turn (`TurnEnd`), and its counters. Every decision is the Rust guard's.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use toolcall_score::tool_loop::{self, LoopPolicy, Reply, Step};
use toolcall_score::{Arguments, Response};

use super::convert::{body, to_json, to_py, Body};
use super::scoring::{catalog_of, format_arg};
use super::{error_type, guarded};

fn json_err(e: serde_json::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// One tool call of a response: run it when it is in `Pending.execute`.
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct ToolCall(toolcall_score::ToolCall);

#[pymethods]
impl ToolCall {
    /// The call's id (`None` when the format or the model gave none).
    #[getter]
    fn id(&self) -> Option<&str> {
        self.0.id.as_deref()
    }

    /// The catalog's name of the tool.
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }

    /// The arguments: the parsed JSON (usually a dict), the text of arguments that are not JSON,
    /// or a custom tool's free text.
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.0.arguments {
            Arguments::Parsed(value) => to_py(py, value),
            Arguments::Text { text } => Ok(text.into_pyobject(py)?.into_any()),
            // Sent as a string: its value, or the text when it is not JSON.
            Arguments::Json(text) => match text.value() {
                Some(value) => to_py(py, value),
                None => Ok(text.raw().into_pyobject(py)?.into_any()),
            },
        }
    }

    fn __repr__(&self) -> String {
        format!("<ToolCall {} id={:?}>", self.0.name, self.0.id)
    }
}

/// The answers to every call of one response, in the provider's own shape.
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct ToolResults(tool_loop::ToolResults);

#[pymethods]
impl ToolResults {
    /// The messages to append to the conversation (one `user` message of `tool_result` blocks
    /// for Anthropic, one `tool` message per call for OpenAI Chat, …).
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Array(self.0.messages().to_vec()))
    }

    /// The same answers, provider-neutral: `{"call_id", "name", "is_error", "content"}` per
    /// call, in call order.
    #[getter]
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.0.results()).map_err(json_err)?;
        to_py(py, &value)
    }

    /// Ids more than one call carried.
    #[getter]
    fn duplicate_ids(&self) -> Vec<String> {
        self.0.duplicate_ids().to_vec()
    }

    /// The format the answers are in (the response's).
    #[getter]
    fn format(&self) -> &'static str {
        self.0.format().as_str()
    }

    fn __repr__(&self) -> String {
        format!("<ToolResults {} answer(s)>", self.0.results().len())
    }
}

/// The calls of one response, waiting for the results of those the caller runs. The turn goes
/// on: run each call of `execute`, then `answer(outputs)` (one per call, in order) or
/// `answer_with(run)`, and send the messages of the `ToolResults` it returns.
#[pyclass(module = "toolcall_score")]
pub(crate) struct Pending(Option<tool_loop::PendingResults>);

impl Pending {
    fn inner(&self) -> PyResult<&tool_loop::PendingResults> {
        self.0
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("these calls were already answered"))
    }
}

/// A tool's output: a raised `ToolError` (or an exception instance given as an output) is an
/// error result the model reads; anything else is the result, as JSON.
fn output_of(py: Python<'_>, output: &Bound<'_, PyAny>) -> PyResult<tool_loop::ToolOutput> {
    let _ = py;
    if output.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        return Ok(Err(output.str()?.extract::<String>()?));
    }
    Ok(Ok(to_json(output, 0)?))
}

#[pymethods]
impl Pending {
    /// `False`: the turn goes on (a `TurnEnd` has `done = True`).
    #[getter]
    fn done(&self) -> bool {
        false
    }

    /// The calls to run, in order: calls to defined tools with JSON arguments.
    #[getter]
    fn execute(&self) -> PyResult<Vec<ToolCall>> {
        Ok(self.inner()?.execute().cloned().map(ToolCall).collect())
    }

    /// Every call of the response, including those the guard answers itself.
    #[getter]
    fn calls(&self) -> PyResult<Vec<ToolCall>> {
        Ok(self
            .inner()?
            .calls()
            .iter()
            .cloned()
            .map(ToolCall)
            .collect())
    }

    /// The response's format, which the answers are encoded in.
    #[getter]
    fn format(&self) -> PyResult<&'static str> {
        Ok(self.inner()?.format().as_str())
    }

    /// Completes the answers with one output per call of `execute`, in order: a JSON value (a
    /// `str` goes as plain text), or an exception instance for an error result.
    fn answer(&mut self, py: Python<'_>, outputs: Vec<Bound<'_, PyAny>>) -> PyResult<ToolResults> {
        let converted = outputs
            .iter()
            .map(|o| output_of(py, o))
            .collect::<PyResult<Vec<_>>>()?;
        let expected = self.inner()?.execute().len();
        if converted.len() != expected {
            return Err(PyValueError::new_err(format!(
                "{} tool output(s) given for {expected} executed call(s): give exactly one per \
                 call of `execute`, in the same order",
                converted.len()
            )));
        }
        let pending = self
            .0
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("already answered"))?;
        guarded(py, || {
            pending
                .answer(converted)
                .map(ToolResults)
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    /// Calls `run(call)` for each call of `execute`, in order: its return value is the result;
    /// a `ToolError` it raises is an error result the model reads; any other exception
    /// propagates and nothing is answered.
    fn answer_with(&mut self, py: Python<'_>, run: &Bound<'_, PyAny>) -> PyResult<ToolResults> {
        let tool_error = error_type(py, "ToolError")?;
        let mut outputs = Vec::new();
        for call in self.inner()?.execute() {
            match run.call1((ToolCall(call.clone()),)) {
                Ok(value) => outputs.push(Ok(to_json(&value, 0)?)),
                Err(e) if e.is_instance(py, &tool_error) => {
                    outputs.push(Err(e.value(py).str()?.extract::<String>()?))
                }
                Err(e) => return Err(e),
            }
        }
        let pending = self
            .0
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("already answered"))?;
        guarded(py, || {
            pending
                .answer(outputs)
                .map(ToolResults)
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    fn __repr__(&self) -> String {
        match &self.0 {
            Some(p) => format!(
                "<Pending {} call(s), {} to run>",
                p.calls().len(),
                p.execute().len()
            ),
            None => "<Pending answered>".to_owned(),
        }
    }
}

/// The end of a turn: why (`outcome`), the model's text, and the answers that keep the history
/// valid (`closing`: append its messages, do not send them as a request of their own).
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct TurnEnd(tool_loop::TurnEnd);

#[pymethods]
impl TurnEnd {
    /// `True`: the turn is over (a `Pending` has `done = False`).
    #[getter]
    fn done(&self) -> bool {
        true
    }

    /// `finished`, `unknown_tool_escalation`, `step_budget_exhausted` or
    /// `malformed_response`.
    #[getter]
    fn outcome(&self) -> PyResult<String> {
        let value = serde_json::to_value(&self.0.outcome).map_err(json_err)?;
        Ok(value["outcome"].as_str().unwrap_or_default().to_owned())
    }

    /// Whether the model finished the turn normally.
    #[getter]
    fn finished(&self) -> bool {
        self.0.outcome.is_finished()
    }

    /// The outcome's details as JSON: `names` (escalation), `steps` (budget), `reason`
    /// (malformed), beside `outcome`.
    fn outcome_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.0.outcome).map_err(json_err)?;
        to_py(py, &value)
    }

    /// The distinct unknown names of an escalated turn, in order (empty otherwise).
    #[getter]
    fn names(&self) -> Vec<String> {
        match &self.0.outcome {
            tool_loop::Outcome::UnknownToolEscalation { names } => names.clone(),
            _ => Vec::new(),
        }
    }

    /// The model's text in the last response, parts joined by newlines.
    #[getter]
    fn text(&self) -> String {
        self.0.text()
    }

    /// Error answers for the calls of the last response that will not run, or `None`.
    #[getter]
    fn closing(&self) -> Option<ToolResults> {
        self.0.closing.clone().map(ToolResults)
    }

    fn __str__(&self) -> String {
        self.0.outcome.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<TurnEnd {}>", self.0.outcome)
    }
}

/// What the guard counted, in a turn or in total.
#[pyclass(module = "toolcall_score", frozen)]
pub(crate) struct Counts(tool_loop::Counts);

#[pymethods]
impl Counts {
    /// Model responses handled.
    #[getter]
    fn steps(&self) -> usize {
        self.0.steps()
    }
    /// Tool calls seen.
    #[getter]
    fn calls(&self) -> usize {
        self.0.calls()
    }
    /// Calls to tools the catalog does not define.
    #[getter]
    fn unknown_calls(&self) -> usize {
        self.0.unknown_calls()
    }
    /// Calls whose arguments were not a JSON object.
    #[getter]
    fn invalid_arguments(&self) -> usize {
        self.0.invalid_arguments()
    }
    /// Calls whose id another call of the same response carried.
    #[getter]
    fn duplicate_ids(&self) -> usize {
        self.0.duplicate_ids()
    }
    /// Each unknown name and how often it was called, in first-seen order.
    #[getter]
    fn unknown_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, count) in self.0.unknown_names() {
            dict.set_item(name, count)?;
        }
        Ok(dict)
    }
    fn __repr__(&self) -> String {
        format!(
            "<Counts steps={} calls={} unknown_calls={}>",
            self.0.steps(),
            self.0.calls(),
            self.0.unknown_calls()
        )
    }
}

/// The loop guard: `step(response)` for each model response of a turn.
#[pyclass(module = "toolcall_score")]
pub(crate) struct ToolLoop(toolcall_score::ToolLoop);

#[pymethods]
impl ToolLoop {
    #[new]
    #[pyo3(signature = (tools, *, max_steps=10, max_unknown_per_turn=2, list_available_in_errors=true))]
    fn new(
        py: Python<'_>,
        tools: &Bound<'_, PyAny>,
        max_steps: usize,
        max_unknown_per_turn: usize,
        list_available_in_errors: bool,
    ) -> PyResult<ToolLoop> {
        let catalog = catalog_of(py, tools)?;
        let policy = LoopPolicy {
            max_steps,
            max_unknown_per_turn,
            list_available_in_errors,
        };
        Ok(ToolLoop(toolcall_score::ToolLoop::new(catalog, policy)))
    }

    /// Handles the next model response of the turn (a body as `dict`, JSON text, a recorded
    /// stream, or an SDK object): a `Pending` when the turn goes on, a `TurnEnd` when it is over.
    #[pyo3(signature = (response, *, format=None))]
    fn step(
        &mut self,
        py: Python<'_>,
        response: &Bound<'_, PyAny>,
        format: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let format = format_arg(format)?;
        let reply = match body(response)? {
            Body::Value(body) => Reply::Json { body, format },
            Body::Text(text) => match serde_json::from_str::<Value>(&text) {
                Ok(body) => Reply::Json { body, format },
                // A recorded stream; what does not read is handed on as text, which the guard
                // answers as a malformed response.
                Err(_) => match Response::from_json_str(&text, format) {
                    Ok(parsed) => Reply::Parsed(parsed),
                    Err(_) => Reply::Json {
                        body: Value::String(text),
                        format,
                    },
                },
            },
        };
        let step = guarded(py, || Ok(self.0.step(reply)))?;
        Ok(match step {
            Step::Continue(pending) => Py::new(py, Pending(Some(pending)))?.into_any(),
            Step::Done(end) => Py::new(py, TurnEnd(end))?.into_any(),
        })
    }

    /// Forgets the turn in progress (after a transport error, say).
    fn reset_turn(&mut self) {
        self.0.reset_turn();
    }

    /// Turns begun.
    #[getter]
    fn turns(&self) -> usize {
        self.0.metrics().turns()
    }

    /// The counts of the current (or last) turn.
    #[getter]
    fn turn(&self) -> Counts {
        Counts(self.0.metrics().turn().clone())
    }

    /// The counts over every turn.
    #[getter]
    fn total(&self) -> Counts {
        Counts(self.0.metrics().total().clone())
    }

    /// Every counter as JSON: `{"turns", "turn", "total"}`.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.0.metrics()).map_err(json_err)?;
        to_py(py, &value)
    }
}
