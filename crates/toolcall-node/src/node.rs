//! The napi-rs exports: thin wrappers of [`crate::api`], JSON text in and out, an error thrown
//! as its JSON, and a core panic thrown as an `InternalError`'s JSON rather than aborting node.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::{Error, Result};
use napi_derive::napi;
use serde_json::{json, Value};

use crate::api::{self, Guard, Prepared};

fn guarded(f: impl FnOnce() -> std::result::Result<Value, Value>) -> Result<String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value.to_string()),
        Ok(Err(error)) => Err(Error::from_reason(error.to_string())),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let error = json!({ "error": { "kind": "internal", "message": format!(
                "toolcall-score panicked: {what} (a bug in toolcall-score, not in your input: please report it)"
            )}});
            Err(Error::from_reason(error.to_string()))
        }
    }
}

/// `api::score` over JSON text.
#[napi(js_name = "scoreJson")]
pub fn score_json(
    response: String,
    tools: Option<String>,
    request: Option<String>,
    format: Option<String>,
) -> Result<String> {
    guarded(|| {
        api::score(
            &response,
            tools.as_deref(),
            request.as_deref(),
            format.as_deref(),
        )
    })
}

/// Panics, for the test that a core panic is thrown, not an abort.
#[napi(js_name = "panicForTest")]
pub fn panic_for_test() -> Result<String> {
    guarded(|| panic!("the test asked for a panic"))
}

/// A prepared case (`api::Prepared`), JSON text in and out.
#[napi(js_name = "NativeScorer")]
pub struct NativeScorer {
    prepared: Prepared,
}

#[napi]
impl NativeScorer {
    /// The case from `tools` or `request` (JSON text).
    #[napi(constructor)]
    pub fn new(tools: Option<String>, request: Option<String>) -> Result<Self> {
        let prepared = Prepared::new(tools.as_deref(), request.as_deref())
            .map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(NativeScorer { prepared })
    }

    /// `Prepared::score`.
    #[napi]
    pub fn score(&self, response: String, format: Option<String>) -> Result<String> {
        guarded(|| self.prepared.score(&response, format.as_deref()))
    }
}

/// The loop guard (`api::Guard`), JSON text in and out.
#[napi(js_name = "NativeToolLoop")]
pub struct NativeToolLoop {
    guard: Guard,
}

fn count(n: f64) -> usize {
    if n.is_finite() && n >= 0.0 && n < usize::MAX as f64 {
        n as usize
    } else {
        usize::MAX
    }
}

#[napi]
impl NativeToolLoop {
    /// A guard over `tools` (JSON text).
    #[napi(constructor)]
    pub fn new(
        tools: String,
        max_steps: f64,
        max_unknown_per_turn: f64,
        list_available: bool,
    ) -> Result<Self> {
        let guard = Guard::new(
            &tools,
            count(max_steps),
            count(max_unknown_per_turn),
            list_available,
        )
        .map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(NativeToolLoop { guard })
    }

    /// `Guard::step`.
    #[napi]
    pub fn step(&mut self, response: String, format: Option<String>) -> Result<String> {
        let guard = &mut self.guard;
        guarded(|| guard.step(&response, format.as_deref()))
    }

    /// `Guard::answer`.
    #[napi]
    pub fn answer(&mut self, outputs: String) -> Result<String> {
        let guard = &mut self.guard;
        guarded(|| guard.answer(&outputs))
    }

    /// `Guard::reset_turn`.
    #[napi(js_name = "resetTurn")]
    pub fn reset_turn(&mut self) {
        self.guard.reset_turn();
    }

    /// `Guard::metrics`.
    #[napi]
    pub fn metrics(&self) -> String {
        self.guard.metrics().to_string()
    }
}
