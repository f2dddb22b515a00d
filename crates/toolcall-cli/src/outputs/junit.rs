//! JUnit XML, drawn from a run's JSON (the Jenkins shape most CI systems read): one
//! `<testsuite>` per agent (per flow for `replay`, one for `rate`), one `<testcase>` per test,
//! named as `cargo test` names it. A known failure is `<skipped type="xfail">` with its
//! fingerprint, as pytest reports an xfail, so it is neither a pass nor a failure to a reader.

use serde_json::Value;

/// The document for `run`.
pub fn render(run: &Value) -> String {
    render_with(run, &mut |agent, each| {
        for result in run["agents"][agent]["results"]
            .as_array()
            .into_iter()
            .flatten()
        {
            each(result);
        }
    })
}

/// Gives an agent's results (by its index in `agents`) one at a time, each result's value to
/// the function passed.
pub type Results<'a> = dyn FnMut(usize, &mut dyn FnMut(&Value)) + 'a;

/// [`render`] with `check`'s results given one at a time by `results` (agent by index, each
/// result's value to `each`), not read from `run`: a run too big to hold as one value passes
/// its shell and draws the results as it goes.
pub fn render_with(run: &Value, results: &mut Results<'_>) -> String {
    let suites = match run["command"].as_str() {
        Some("check") => check_suites(run, results),
        Some("replay") => replay_suites(run),
        Some("rate") => vec![rate_suite(run)],
        _ => Vec::new(),
    };
    let (tests, failures, skipped) = suites.iter().fold((0, 0, 0), |(t, f, s), suite| {
        (
            t + suite.cases.len(),
            f + suite.failures(),
            s + suite.skipped(),
        )
    });
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"toolcall {}\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skipped}\">\n",
        attr(run["command"].as_str().unwrap_or_default())
    ));
    for suite in &suites {
        suite.write(&mut out);
    }
    out.push_str("</testsuites>\n");
    out
}

struct Suite {
    name: String,
    cases: Vec<Case>,
}

struct Case {
    name: String,
    classname: String,
    result: Result_,
}

enum Result_ {
    Pass,
    Failure {
        kind: String,
        message: String,
        text: String,
    },
    Xfail {
        message: String,
    },
    /// Not run at all (a flow's `skip`): `<skipped>` with no type, unlike a known failure.
    Skipped {
        message: String,
    },
}

impl Suite {
    fn failures(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| matches!(c.result, Result_::Failure { .. }))
            .count()
    }

    fn skipped(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| matches!(c.result, Result_::Xfail { .. } | Result_::Skipped { .. }))
            .count()
    }

    fn write(&self, out: &mut String) {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
            attr(&self.name),
            self.cases.len(),
            self.failures(),
            self.skipped()
        ));
        for case in &self.cases {
            let open = format!(
                "    <testcase name=\"{}\" classname=\"{}\"",
                attr(&case.name),
                attr(&case.classname)
            );
            match &case.result {
                Result_::Pass => out.push_str(&format!("{open}/>\n")),
                Result_::Failure {
                    kind,
                    message,
                    text,
                } => out.push_str(&format!(
                    "{open}>\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    attr(kind),
                    attr(message),
                    text_node(text)
                )),
                Result_::Xfail { message } => out.push_str(&format!(
                    "{open}>\n      <skipped type=\"xfail\" message=\"{}\"/>\n    </testcase>\n",
                    attr(message)
                )),
                Result_::Skipped { message } => out.push_str(&format!(
                    "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    attr(message)
                )),
            }
        }
        out.push_str("  </testsuite>\n");
    }
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| items.iter().map(|v| str_of(v).to_owned()).collect())
        .unwrap_or_default()
}

fn check_suites(run: &Value, results: &mut Results<'_>) -> Vec<Suite> {
    let mut suites = Vec::new();
    let problems = strings(&run["problems"]);
    suites.push(Suite {
        name: "suite".into(),
        cases: vec![Case {
            name: toolcall_harness::DISCOVERY_TEST.into(),
            classname: "suite".into(),
            result: if problems.is_empty() {
                Result_::Pass
            } else {
                Result_::Failure {
                    kind: "suite".into(),
                    message: problems[0].clone(),
                    text: problems.join("\n"),
                }
            },
        }],
    });
    for (index, agent) in run["agents"].as_array().into_iter().flatten().enumerate() {
        let name = str_of(&agent["name"]).to_owned();
        let mut cases = Vec::new();
        for (check, key) in [
            ("[baseline]", "baseline_problems"),
            ("[coverage]", "coverage"),
        ] {
            let problems = strings(&agent[key]);
            cases.push(Case {
                name: format!("{}::{check}", toolcall_score::escape(&name)),
                classname: name.clone(),
                result: if problems.is_empty() {
                    Result_::Pass
                } else {
                    Result_::Failure {
                        kind: check.trim_matches(['[', ']']).into(),
                        message: problems[0].lines().next().unwrap_or_default().into(),
                        text: problems.join("\n"),
                    }
                },
            });
        }
        results(index, &mut |result| {
            let outcome = str_of(&result["outcome"]);
            let message = str_of(&result["message"]).to_owned();
            cases.push(Case {
                name: str_of(&result["test"]).to_owned(),
                classname: name.clone(),
                result: match outcome {
                    "pass" => Result_::Pass,
                    "expected_failure" => Result_::Xfail {
                        message: format!(
                            "a known failure: {}",
                            strings(&result["fingerprint"]).join(", ")
                        ),
                    },
                    _ => Result_::Failure {
                        kind: outcome.into(),
                        message: message.lines().next().unwrap_or_default().into(),
                        text: message,
                    },
                },
            });
        });
        suites.push(Suite { name, cases });
    }
    suites
}

fn replay_suites(run: &Value) -> Vec<Suite> {
    run["flows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|flow| {
            let name = str_of(&flow["flow"]).to_owned();
            let outcome = str_of(&flow["outcome"]);
            let summary = str_of(&flow["summary"]).to_owned();
            Suite {
                name: name.clone(),
                cases: vec![Case {
                    name: name.clone(),
                    classname: "replay".into(),
                    result: match outcome {
                        "pass" => Result_::Pass,
                        "expected_failure" => Result_::Xfail { message: summary },
                        "skipped" => Result_::Skipped { message: summary },
                        _ => Result_::Failure {
                            kind: outcome.into(),
                            message: summary.clone(),
                            text: str_of(&flow["failure"]["message"]).to_owned(),
                        },
                    },
                }],
            }
        })
        .collect()
}

fn rate_suite(run: &Value) -> Suite {
    let passed = run["gate"]["passed"].as_bool().unwrap_or(false);
    let reasons = strings(&run["gate"]["reasons"]);
    Suite {
        name: "rate".into(),
        cases: vec![Case {
            name: "rate::[gate]".into(),
            classname: "rate".into(),
            result: if passed {
                Result_::Pass
            } else {
                Result_::Failure {
                    kind: "gate".into(),
                    message: reasons.first().cloned().unwrap_or_default(),
                    text: reasons.join("\n"),
                }
            },
        }],
    }
}

/// Text an XML 1.0 document may hold: a control character (which XML cannot carry even as a
/// reference) is written as `escape` writes it, `\u{1b}`, like every other output.
fn xml_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && !matches!(c, '\n' | '\t'))
            || toolcall_score::is_invisible(c) && c != '\n' && c != '\t'
        {
            out.push_str(&toolcall_score::escape(c.encode_utf8(&mut [0; 4])).to_string());
        } else {
            out.push(c);
        }
    }
    out
}

fn attr(text: &str) -> String {
    xml_safe(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
}

fn text_node(text: &str) -> String {
    xml_safe(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
