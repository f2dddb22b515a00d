//! Python values to JSON and back: what a caller hands the scorer (a `dict`, JSON text, an SDK
//! object with `model_dump()`) becomes the JSON the core reads, and the core's JSON (tool
//! results, dumps) becomes plain Python objects.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Deeper nesting than this is refused rather than risking the stack (no real body nests so).
const MAX_DEPTH: usize = 512;

/// What a caller passed: JSON text, or a value already built.
pub(crate) enum Body {
    /// `str` or UTF-8 `bytes`: a body, or a recorded stream.
    Text(String),
    /// A `dict`, a `list`, or what an SDK object's `model_dump()` gave.
    Value(Value),
}

/// Reads what a caller passed as a body.
pub(crate) fn body(obj: &Bound<'_, PyAny>) -> PyResult<Body> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Body::Text(s.extract::<String>()?));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return match String::from_utf8(b.as_bytes().to_vec()) {
            Ok(text) => Ok(Body::Text(text)),
            Err(e) => Err(PyValueError::new_err(format!(
                "the body is not UTF-8 text: {e}"
            ))),
        };
    }
    to_json(obj, 0).map(Body::Value)
}

/// An SDK object's wire shape: pydantic's `model_dump` with the API's own key names and only
/// the fields the server sent (the OpenAI and Anthropic SDKs' response objects).
fn model_dump<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Ok(dump) = obj.getattr("model_dump") else {
        return Ok(None);
    };
    let kwargs = PyDict::new(obj.py());
    kwargs.set_item("mode", "json")?;
    kwargs.set_item("by_alias", true)?;
    kwargs.set_item("exclude_unset", true)?;
    match dump.call((), Some(&kwargs)) {
        Ok(value) => Ok(Some(value)),
        // Not pydantic's signature: the plain call.
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => dump.call0().map(Some),
        Err(e) => Err(e),
    }
}

/// A Python value as JSON: `None`, `bool`, `int`, `float`, `str`, `dict` with `str` keys,
/// `list` and `tuple`, and objects with `model_dump()`.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "the value nests deeper than {MAX_DEPTH} levels"
        )));
    }
    // Most frequent first: a body is mostly strings, objects and arrays.
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "a JSON object's keys are strings, found the key {}",
                    k.repr()?
                )));
            };
            map.insert(key.to_cow()?.into_owned(), to_json(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|v| to_json(&v, depth + 1)).collect();
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        let f: f64 = obj.extract()?;
        return float(f);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return float(f.value());
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|v| to_json(&v, depth + 1)).collect();
    }
    if let Some(dumped) = model_dump(obj)? {
        return to_json(&dumped, depth + 1);
    }
    Err(PyTypeError::new_err(format!(
        "{} is not JSON: give a dict, a list, JSON text, or an SDK object with model_dump()",
        obj.get_type().name()?
    )))
}

fn float(f: f64) -> PyResult<Value> {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| PyValueError::new_err(format!("{f} is not a JSON number")))
}

/// JSON as plain Python objects.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
