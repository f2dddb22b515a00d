//! `--otlp URL` (feature `otlp`): each verdict as an OpenTelemetry `gen_ai.evaluation.result`
//! event, sent as OTLP/HTTP JSON logs to `URL/v1/logs`. The evaluation is named
//! `toolcall.membership`; a passing exchange is one event labelled `pass` (score 1), each call
//! naming a tool the request did not define one event labelled with its cause (score 0) and
//! explained by its did-you-mean. Sent from a task of its own: a collector that is down costs
//! the exchange nothing.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use toolcall_score::{escape, Finding};

use crate::judge::cause_name;

/// The endpoint logs are posted to: `URL` as given when it ends in `/v1/logs`, else with it.
pub(crate) fn endpoint(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.ends_with("/v1/logs") {
        url.to_owned()
    } else {
        format!("{url}/v1/logs")
    }
}

fn attribute(key: &str, value: Value) -> Value {
    let value = match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Number(n) if n.is_f64() => json!({"doubleValue": n}),
        Value::Number(n) => json!({"intValue": n.to_string()}),
        other => json!({"stringValue": other.to_string()}),
    };
    json!({"key": key, "value": value})
}

/// The OTLP logs document of one exchange's verdict; `None` when there is nothing judged.
pub(crate) fn document(
    route: &str,
    model: Option<&str>,
    verdict: &str,
    unknown: &[&Finding],
) -> Option<Value> {
    let time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_string();
    let common = |label: String, score: f64, explanation: Option<String>| {
        let mut attributes = vec![
            attribute("gen_ai.evaluation.name", json!("toolcall.membership")),
            attribute("gen_ai.evaluation.score.label", json!(label)),
            attribute("gen_ai.evaluation.score.value", json!(score)),
            attribute("gen_ai.provider.name", json!(route)),
        ];
        if let Some(model) = model {
            attributes.push(attribute("gen_ai.request.model", json!(model)));
        }
        if let Some(explanation) = explanation {
            attributes.push(attribute(
                "gen_ai.evaluation.explanation",
                json!(explanation),
            ));
        }
        json!({
            "timeUnixNano": time,
            "eventName": "gen_ai.evaluation.result",
            "severityNumber": 9,
            "body": {"stringValue": "gen_ai.evaluation.result"},
            "attributes": attributes,
        })
    };
    let records: Vec<Value> = match verdict {
        "pass" | "findings" => vec![common("pass".into(), 1.0, None)],
        "unknown" => unknown
            .iter()
            .map(|f| {
                let name = escape(f.name.as_deref().unwrap_or("")).to_string();
                let explanation = match f.suggestions() {
                    [] => format!("`{name}` is not a tool the request defined"),
                    names => format!(
                        "`{name}` is not a tool the request defined; did you mean `{}`?",
                        escape(&names[0])
                    ),
                };
                let cause = f.cause.map_or_else(|| "unknown".to_owned(), cause_name);
                common(cause, 0.0, Some(explanation))
            })
            .collect(),
        _ => return None,
    };
    Some(json!({"resourceLogs": [{
        "resource": {"attributes": [attribute("service.name", json!("toolcall-guard"))]},
        "scopeLogs": [{"scope": {"name": "toolcall-guard"}, "logRecords": records}],
    }]}))
}
