//! The harness's tests as data for the pytest plugin: [`toolcall_harness::results`] over the
//! tree the plugin was pointed at, after the baseline rewrite `ATP_BASELINE_WRITE=1` asks for.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolcall_harness::{Config, Front, Status};

use super::guarded;

/// Every test of the suite: a list of dicts `{"name", "status" ("pass" | "xfail" | "fail"),
/// "message", "file", "line", "notes"}`. `ATP_*` variables apply as in the Rust harness; with
/// `ATP_BASELINE_WRITE=1` the baselines are rewritten first.
#[pyfunction]
#[pyo3(signature = (root, *, cases=None, recorded=None, baselines=None))]
pub(crate) fn suite_results<'py>(
    py: Python<'py>,
    root: PathBuf,
    cases: Option<PathBuf>,
    recorded: Option<PathBuf>,
    baselines: Option<PathBuf>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut config = Config::for_root(&root);
    config.front = Front::Pytest;
    if let Some(cases) = cases {
        config.cases = cases;
    }
    if let Some(recorded) = recorded {
        config.recorded = recorded;
    }
    if let Some(baselines) = baselines {
        config.baselines = baselines;
    }
    let config = config
        .with_env()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let results = guarded(py, || {
        if config.baseline_write {
            toolcall_harness::write_baselines(&config)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        Ok(toolcall_harness::results(&config))
    })?;
    results
        .into_iter()
        .map(|r| {
            let dict = PyDict::new(py);
            dict.set_item("name", r.name)?;
            dict.set_item(
                "status",
                match r.status {
                    Status::Pass => "pass",
                    Status::ExpectedFailure => "xfail",
                    _ => "fail",
                },
            )?;
            dict.set_item("message", r.message)?;
            dict.set_item("file", r.file)?;
            dict.set_item("line", r.line)?;
            dict.set_item("notes", r.notes)?;
            Ok(dict)
        })
        .collect()
}
