//! The verdict on one exchange, by the core: the request read through its format's request half
//! into a case, the response through its format's reader, scored; what the actions act on (a
//! call naming a tool the request did not define) and the words that say so.

use serde_json::Value;
use toolcall_score::{escape, Case, Cause, Finding, FindingKind, Format, Response, Verdict};

/// A request as the guard read it.
pub(crate) struct Read {
    /// The case, when the body reads as one.
    pub(crate) case: Option<Case>,
    /// Why it does not.
    pub(crate) unread: Option<String>,
    /// The body as JSON, for the log (`request`, which `toolcall rate` reads).
    pub(crate) value: Option<Value>,
    /// `model`, or Gemini's model from the path.
    pub(crate) model: Option<String>,
}

/// Reads a request body of `format` sent to `path`.
pub(crate) fn read_request(format: Format, path: &str, body: &[u8]) -> Read {
    let gemini_model = || {
        let path = path.split('?').next().unwrap_or(path);
        let name = path.rsplit('/').next()?;
        Some(name.split(':').next()?.to_owned())
    };
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => {
            return Read {
                case: None,
                unread: Some(format!("the request is not JSON ({e})")),
                value: None,
                model: None,
            }
        }
    };
    let model = match value.get("model").and_then(Value::as_str) {
        Some(model) => Some(model.to_owned()),
        None if format == Format::Gemini => gemini_model(),
        None => None,
    };
    match Case::from_value(&value) {
        Ok(mut case) => {
            case.format = Some(format);
            Read {
                case: Some(case),
                unread: None,
                value: Some(value),
                model,
            }
        }
        Err(e) => Read {
            case: None,
            unread: Some(format!(
                "the request does not read as a {format} request ({e})"
            )),
            value: Some(value),
            model,
        },
    }
}

/// The findings an action acts on: calls naming a tool the request did not define (a name
/// mentioned in text is reported, never acted on).
pub(crate) fn unknown_calls(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.kind == FindingKind::UnknownTool && f.cause != Some(Cause::Prose))
        .collect()
}

/// Scores `response` against the case: the verdict.
pub(crate) fn verdict(case: &Case, response: &Response) -> Verdict {
    toolcall_score::score(case, response)
}

/// What a blocked client reads: each unknown name, its cause and the closest defined names.
pub(crate) fn message(unknown: &[&Finding]) -> String {
    let each: Vec<String> = unknown
        .iter()
        .map(|f| {
            let name = f.name.as_deref().unwrap_or("");
            let cause = f.cause.map_or_else(|| "unknown".to_owned(), cause_name);
            let closest = match f.suggestions() {
                [] => "no defined name is close".to_owned(),
                names => format!(
                    "closest defined: {}",
                    names
                        .iter()
                        .map(|n| escape(n).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            format!(
                "it calls `{}`, a tool the request did not define (cause: {cause}; {closest})",
                escape(name)
            )
        })
        .collect();
    format!("toolcall guard blocked this response: {}", each.join("; "))
}

/// A cause as the log and the metrics spell it (its serde name).
pub(crate) fn cause_name(cause: Cause) -> String {
    serde_json::to_value(cause)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{cause:?}").to_lowercase())
}
