//! The extension module `toolcall_score._native`: the classes and functions the Python package
//! re-exports, and what every entry point shares (the panic guard, the typed errors).

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

mod convert;
mod guard;
mod scoring;
mod suite;

/// Runs core code so that a panic in it becomes `toolcall_score.InternalError` (a
/// `RuntimeError`) rather than PyO3's `PanicException`, a `BaseException` that test runners and
/// `except Exception` do not catch.
pub(crate) fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            let message = format!(
                "toolcall-score panicked: {what} (a bug in toolcall-score, not in your input: \
                 please report it with the input that caused it)"
            );
            Err(error_type(py, "InternalError")?
                .call1((message,))
                .map(PyErr::from_value)?)
        }
    }
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// An exception class of `toolcall_score._errors` (defined in Python, so it carries typed
/// attributes and pickles like any other).
pub(crate) fn error_type<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module = ERRORS.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("toolcall_score._errors")?.unbind())
    })?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// Panics, for the test that a core panic reaches Python as `InternalError`.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guarded(py, || panic!("the test asked for a panic"))
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scoring::score, m)?)?;
    m.add_function(wrap_pyfunction!(scoring::assert_tool_calls_defined, m)?)?;
    m.add_function(wrap_pyfunction!(scoring::formats, m)?)?;
    m.add_function(wrap_pyfunction!(suite::suite_results, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_class::<scoring::Scorer>()?;
    m.add_class::<scoring::Verdict>()?;
    m.add_class::<scoring::Finding>()?;
    m.add_class::<guard::ToolLoop>()?;
    m.add_class::<guard::Pending>()?;
    m.add_class::<guard::TurnEnd>()?;
    m.add_class::<guard::ToolResults>()?;
    m.add_class::<guard::ToolCall>()?;
    m.add_class::<guard::Counts>()?;
    Ok(())
}
