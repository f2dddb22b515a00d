//! One self-contained HTML page per run, drawn from the run's JSON.
//!
//! A failing tool-call test is a conversation, so each case is drawn as its timeline: the
//! request (system prompt and catalog, folded), the transcript's turns with every call and the
//! result that answered it (joined by id), and the recorded response at the end, the offending
//! call marked with its rule, cause and suggestions. `rate` draws its names and a chart of
//! unknown names per cause; `replay` each flow's steps and the failure.
//!
//! The page must be safe to open from a CI artifact whatever the model wrote:
//! - every piece of text from input is escaped here ([`text`]): HTML's five characters, and the
//!   characters no terminal should see raw ([`toolcall_score::is_invisible`]: controls,
//!   bidirectional overrides, zero-width) written as `\u{202e}`, so they cannot reorder or hide
//!   anything;
//! - all style and script are inline and constant, allowed by their hashes in a
//!   Content-Security-Policy whose `default-src 'none'` forbids every fetch, image, font, frame
//!   and connection; the page references no URL at all;
//! - it reads with JavaScript off: folding is `<details>`, every count is a plain link to its
//!   cases, "unexpected only" is a `:target` rule, and the script only adds the filters
//!   (agent, outcome, cause; a count's link sets them) and opens the case an anchor points at;
//! - a `check` page leads with what needs attention, over all agents ([`rank`]), and counts
//!   every problem in the header and the agents table;
//! - it stays small enough to open: a `check` page draws every failure and expected failure
//!   but at most [`PASSES_DRAWN`] passing cases, and says how many it left out.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::Value;
use sha2::Digest as _;

/// The most passing results a `check` page draws; the rest are counted and the page says so.
pub const PASSES_DRAWN: usize = 1_000;

const STYLE: &str = include_str!("html/style.css");
const SCRIPT: &str = include_str!("html/script.js");

/// The page for `run`.
pub fn render(run: &Value) -> String {
    render_with(run, &mut Whole(run))
}

/// What a `check` page reads of a run's results and cases: each result's value in turn for the
/// small facts it orders, counts and filters by, and then only the results and cases it draws.
/// A run too big to hold as one value passes its shell (cases and results taken out) to
/// [`render_with`] and makes each value only when asked.
pub trait CheckParts {
    /// Gives agent `agent`'s results (by its index in `agents`) one at a time to `each`.
    fn results(&mut self, agent: usize, each: &mut dyn FnMut(&Value));
    /// Agent `agent`'s result at `index` (`null` when there is none).
    fn result(&mut self, agent: usize, index: usize) -> Value;
    /// The case `id` (`null` when there is none).
    fn case(&mut self, id: &str) -> Value;
}

/// The parts of a whole run's value.
struct Whole<'a>(&'a Value);

impl CheckParts for Whole<'_> {
    fn results(&mut self, agent: usize, each: &mut dyn FnMut(&Value)) {
        for result in items(&self.0["agents"][agent]["results"]) {
            each(result);
        }
    }

    fn result(&mut self, agent: usize, index: usize) -> Value {
        self.0["agents"][agent]["results"][index].clone()
    }

    fn case(&mut self, id: &str) -> Value {
        self.0["cases"][id].clone()
    }
}

/// [`render`] with `check`'s results and cases read from `parts`, not from `run`: the same page.
pub fn render_with(run: &Value, parts: &mut dyn CheckParts) -> String {
    let command = str_of(&run["command"]);
    let ok = run["ok"].as_bool().unwrap_or(false);
    let mut body = String::new();
    let facts = if command == "check" {
        check_facts(run, parts)
    } else {
        Vec::new()
    };
    match command {
        "check" => check(&mut body, run, &facts, parts),
        "rate" => rate(&mut body, run),
        "replay" => replay(&mut body, run),
        _ => {}
    }
    let verdict = if ok {
        "ok: every result is expected".to_owned()
    } else if command == "check" {
        check_verdict(run, &facts)
    } else {
        "FAILED: unexpected results below".to_owned()
    };
    let mut page = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 1024);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>toolcall {}: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header class=\"{}\"><h1>toolcall {}</h1><p class=\"verdict\">{}</p></header>\n\
         <main>\n{body}</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        content_security_policy(),
        text(command),
        if ok { "ok" } else { "FAILED" },
        if ok { "ok" } else { "failed" },
        text(command),
        verdict,
    );
    page
}

/// Nothing but the page's own inline style and script, by hash; no source of any kind.
pub fn content_security_policy() -> String {
    let hash = |s: &str| {
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(s.as_bytes()))
    };
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src 'none'; \
         connect-src 'none'; font-src 'none'; frame-src 'none'; form-action 'none'; \
         base-uri 'none'",
        hash(STYLE),
        hash(SCRIPT)
    )
}

/// Text from input, safe inside an element or a quoted attribute.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if toolcall_score::is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A stable anchor for a string: letters, digits, `-` and `_` kept, anything else as `.xx`
/// (its UTF-8 bytes in hex), so two names never share one.
pub fn anchor(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            let _ = write!(out, ".{b:02x}");
        }
    }
    out
}

/// `s` as it may stand in a URL fragment: what a fragment allows kept (`/` among it, so
/// `#r-claude--billing/new-failure` reads as the README writes it), every other byte as `%XX`.
pub fn fragment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:@!$*+,;=".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The element id of `agent`'s result for `case`: `r-<agent>--<case-id>` as written, `/` and
/// all (HTML5 allows any character but whitespace in an id). One with whitespace takes the
/// [`anchor`] form; one already taken (agent `a--b` case `c` and agent `a` case `b--c`) gets
/// `-2`, `-3`, … so ids stay unique.
fn result_id(agent: &str, case: &str, taken: &mut BTreeSet<String>) -> String {
    let plain = format!("r-{agent}--{case}");
    let base = if plain.chars().any(char::is_whitespace) {
        format!("r-{}--{}", anchor(agent), anchor(case))
    } else {
        plain
    };
    let mut id = base.clone();
    let mut n = 1;
    while !taken.insert(id.clone()) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// Whether a result fails the test: anything but a pass or an expected failure.
fn unexpected(outcome: &str) -> bool {
    !matches!(outcome, "pass" | "expected_failure")
}

/// The order a `check` page draws results in: what the baseline did not predict (a changed
/// fingerprint, a case that now passes) and errors first, then new failures, then expected
/// failures, then passes.
fn rank(outcome: &str) -> u8 {
    match outcome {
        "failure" => 1,
        "expected_failure" => 2,
        "pass" => 3,
        _ => 0,
    }
}

/// The header's verdict of a failed `check`: how many results are unexpected and how many
/// problems there are, each a link to them.
fn check_verdict(run: &Value, facts: &[Vec<Fact>]) -> String {
    let agents: Vec<&Value> = items(&run["agents"]).collect();
    let failing = facts
        .iter()
        .flatten()
        .filter(|r| unexpected(&r.outcome))
        .count();
    let problems = items(&run["problems"]).count()
        + agents
            .iter()
            .map(|a| items(&a["coverage"]).count() + items(&a["baseline_problems"]).count())
            .sum::<usize>();
    let mut parts = Vec::new();
    if failing > 0 {
        parts.push(format!(
            "<a href=\"#only-unexpected\">{failing} unexpected result(s)</a>"
        ));
    }
    if problems > 0 {
        parts.push(format!("<a href=\"#problems\">{problems} problem(s)</a>"));
    }
    if parts.is_empty() {
        "FAILED".to_owned()
    } else {
        format!("FAILED: {}", parts.join(", "))
    }
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// A tool result's content: a short JSON object or array indented, anything else as it is.
fn content(s: &str) -> String {
    match serde_json::from_str::<Value>(s) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => {
            let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
            text(if pretty.lines().count() <= 12 {
                &pretty
            } else {
                s
            })
        }
        _ => text(s),
    }
}

/// A tool's result, indented, as text: a text block that holds JSON (what a server answering
/// in text sends) is that JSON, not a string of it; other text as it is.
fn result_json(v: &Value) -> String {
    match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => json(&parsed),
            _ => text(s),
        },
        other => json(other),
    }
}

/// JSON, indented, as text.
fn json(v: &Value) -> String {
    text(&serde_json::to_string_pretty(v).unwrap_or_default())
}

fn outcome_label(outcome: &str) -> &str {
    match outcome {
        "pass" => "pass",
        "expected_failure" => "expected failure",
        "failure" => "new failure",
        "changed" => "changed fingerprint",
        "now_passes" => "now passes",
        "error" => "error",
        "skipped" => "skipped",
        other => other,
    }
}

// ---- check -----------------------------------------------------------------------------------

/// What a `check` page orders, counts and filters a result by, without drawing it.
struct Fact {
    case: String,
    outcome: String,
    causes: BTreeSet<String>,
}

/// Every agent's results' facts, read one result at a time.
fn check_facts(run: &Value, parts: &mut dyn CheckParts) -> Vec<Vec<Fact>> {
    (0..items(&run["agents"]).count())
        .map(|agent| {
            let mut facts = Vec::new();
            parts.results(agent, &mut |result| {
                facts.push(Fact {
                    case: str_of(&result["case"]).to_owned(),
                    outcome: str_of(&result["outcome"]).to_owned(),
                    causes: result_causes(result),
                });
            });
            facts
        })
        .collect()
}

fn check(out: &mut String, run: &Value, facts: &[Vec<Fact>], parts: &mut dyn CheckParts) {
    let agents: Vec<&Value> = items(&run["agents"]).collect();
    // Every result in the order drawn (see [`rank`]; by agent, then case order, within a
    // rank), each with its element id, so the table's counts can link to the cases.
    let mut order: Vec<(usize, usize, &Fact)> = facts
        .iter()
        .enumerate()
        .flat_map(|(i, a)| a.iter().enumerate().map(move |(j, r)| (i, j, r)))
        .collect();
    order.sort_by_key(|(i, _, r)| (rank(&r.outcome), *i));
    let mut taken = BTreeSet::new();
    let ids: Vec<String> = order
        .iter()
        .map(|(i, _, r)| result_id(str_of(&agents[*i]["name"]), &r.case, &mut taken))
        .collect();
    // The first drawn case of agent `i` whose outcome `fits`.
    let first = |i: usize, fits: &dyn Fn(&str) -> bool| {
        order
            .iter()
            .zip(&ids)
            .find(|((a, _, r), _)| *a == i && fits(&r.outcome))
            .map(|(_, id)| id.clone())
    };

    for note in items(&run["skipped"]) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", text(str_of(note)));
    }
    let agent_problems = |a: &Value| {
        items(&a["coverage"])
            .chain(items(&a["baseline_problems"]))
            .count()
    };
    // The summary per agent, as `toolcall check` prints it, each count a link to its cases
    // (with the script, also a filter to them).
    out.push_str(
        "<section class=\"summary\"><h2>Agents</h2>\n<table><thead><tr><th>agent</th>\
         <th>responses</th><th>pass</th><th>expected failure</th><th>failure</th>\
         <th>problems</th></tr></thead><tbody>\n",
    );
    let link = |n: &Value, target: Option<String>, agent: &str, filter: &str| match target {
        Some(target) if n.as_u64().unwrap_or(0) > 0 => format!(
            "<a href=\"#{}\" data-filter-agent=\"{}\" data-filter-outcome=\"{filter}\">{n}</a>",
            text(&fragment(&target)),
            text(agent)
        ),
        _ => n.to_string(),
    };
    for (i, agent) in agents.iter().enumerate() {
        let counts = &agent["counts"];
        let name = str_of(&agent["name"]);
        let problems = agent_problems(agent);
        let _ = writeln!(
            out,
            "<tr data-agent=\"{}\"><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n{}\">{}</td><td class=\"n{}\">{}</td></tr>",
            text(name),
            text(name),
            if agent["example"].as_bool() == Some(true) {
                "example"
            } else {
                "recorded"
            },
            link(&counts["pass"], first(i, &|o| o == "pass"), name, "pass"),
            link(
                &counts["expected_failure"],
                first(i, &|o| o == "expected_failure"),
                name,
                "expected_failure"
            ),
            if counts["failure"].as_u64().unwrap_or(0) > 0 {
                " bad"
            } else {
                ""
            },
            link(
                &counts["failure"],
                first(i, &unexpected),
                name,
                "unexpected"
            ),
            if problems > 0 { " bad" } else { "" },
            if problems > 0 {
                format!(
                    "<a href=\"#{}\">{problems}</a>",
                    text(&fragment(&format!("problems-{}", id_text(name))))
                )
            } else {
                "0".to_owned()
            }
        );
    }
    out.push_str("</tbody></table>\n");
    // Every problem, right under the table (where the header's and the rows' counts link).
    let any_problem = !run["problems"].as_array().is_none_or(Vec::is_empty)
        || agents.iter().any(|a| agent_problems(a) > 0);
    if any_problem {
        out.push_str("<section class=\"problems\" id=\"problems\"><h2>Problems</h2>\n");
    }
    for problem in items(&run["problems"]) {
        let _ = writeln!(out, "<p class=\"problem\">{}</p>", text(str_of(problem)));
    }
    for agent in &agents {
        let name = str_of(&agent["name"]);
        for (i, problem) in items(&agent["coverage"])
            .chain(items(&agent["baseline_problems"]))
            .enumerate()
        {
            let _ = writeln!(
                out,
                "<p class=\"problem\"{} data-agent=\"{}\">{}</p>",
                if i == 0 {
                    format!(" id=\"problems-{}\"", text(&id_text(name)))
                } else {
                    String::new()
                },
                text(name),
                text(str_of(problem))
            );
        }
    }
    if any_problem {
        out.push_str("</section>\n");
    }
    let with_names = agents
        .iter()
        .filter(|a| a["unknown_names"].as_array().is_some_and(|n| !n.is_empty()))
        .count();
    if with_names > 0 {
        let _ = writeln!(
            out,
            "<details class=\"names\" open><summary>Distinct unknown tool names, {with_names} agent(s)</summary>\
             <div class=\"grid\">"
        );
    }
    for agent in &agents {
        let names: Vec<&Value> = items(&agent["unknown_names"]).collect();
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<div><h3>{}: {} distinct unknown tool name(s)</h3>\n<table class=\"names\"><thead><tr>\
             <th>count</th><th>name</th><th>cause</th></tr></thead><tbody>",
            text(str_of(&agent["name"])),
            names.len()
        );
        for name in names {
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td>{}</td></tr>",
                name["count"],
                text(str_of(&name["name"])),
                text(name["cause"].as_str().unwrap_or("-"))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if with_names > 0 {
        out.push_str("</div></details>\n");
    }
    out.push_str("</section>\n");

    // The filters: drawn hidden, shown by the script (they need it to work).
    let mut outcomes = BTreeSet::new();
    let mut causes = BTreeSet::new();
    for result in facts.iter().flatten() {
        outcomes.insert(result.outcome.clone());
        causes.extend(result.causes.iter().cloned());
    }
    out.push_str("<nav id=\"filters\" hidden><label>agent <select name=\"agent\"><option value=\"\">all</option>");
    for agent in &agents {
        let name = text(str_of(&agent["name"]));
        let _ = write!(out, "<option value=\"{name}\">{name}</option>");
    }
    out.push_str(
        "</select></label> <label>outcome <select name=\"outcome\"><option value=\"\">all</option>\
         <option value=\"unexpected\">unexpected only</option>",
    );
    for outcome in &outcomes {
        let _ = write!(
            out,
            "<option value=\"{}\">{}</option>",
            text(outcome),
            text(outcome_label(outcome))
        );
    }
    out.push_str(
        "</select></label> <label>cause <select name=\"cause\"><option value=\"\">all</option>",
    );
    for cause in &causes {
        let cause = text(cause);
        let _ = write!(out, "<option value=\"{cause}\">{cause}</option>");
    }
    out.push_str("</select></label> <output id=\"shown\"></output></nav>\n");

    out.push_str("<section class=\"results\" id=\"cases\"><h2>Cases</h2>\n");
    // The "unexpected only" view without a script: a link to `#only-unexpected` makes this
    // marker the :target, and the style hides every result after it that is not unexpected.
    out.push_str(
        "<p class=\"views\">show <a href=\"#only-unexpected\" data-filter-outcome=\"unexpected\">\
         unexpected only</a> · <a href=\"#cases\" data-filter-outcome=\"\">all</a></p>\n\
         <span id=\"only-unexpected\"></span>\n",
    );
    // Past PASSES_DRAWN passing results the page would be too big to open (100,000 cases made
    // 105 MB): the rest are counted, not drawn, and the page says so before the first case.
    let passes = order.iter().filter(|(_, _, r)| r.outcome == "pass").count();
    let folded = passes.saturating_sub(PASSES_DRAWN);
    if folded > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note folded\">{folded} of {passes} passing case(s) are not drawn, only \
             counted in the table above: a page of every one would be too large to open. Every \
             failure and expected failure is drawn; <code>--json-out</code> holds every case.</p>"
        );
    }
    let mut drawn_passes = 0;
    for ((i, j, fact), id) in order.iter().zip(&ids) {
        if fact.outcome == "pass" {
            if drawn_passes == PASSES_DRAWN {
                continue;
            }
            drawn_passes += 1;
        }
        // Only what is drawn is made a value, one result and its case at a time.
        let result = parts.result(*i, *j);
        let case = parts.case(&fact.case);
        case_result(out, str_of(&agents[*i]["name"]), id, &result, &case);
    }
    out.push_str("</section>\n");
}

/// `s` as an id: as it is, or in the [`anchor`] form when it holds whitespace (no id may).
fn id_text(s: &str) -> String {
    if s.chars().any(char::is_whitespace) {
        anchor(s)
    } else {
        s.to_owned()
    }
}

/// The causes of a result's unknown names, for the cause filter.
fn result_causes(result: &Value) -> BTreeSet<String> {
    items(&result["samples"])
        .flat_map(|s| items(&s["verdict"]["findings"]))
        .filter_map(|f| f["cause"].as_str())
        .map(str::to_owned)
        .collect()
}

fn case_result(out: &mut String, agent: &str, element: &str, result: &Value, case: &Value) {
    let id = str_of(&result["case"]);
    let outcome = str_of(&result["outcome"]);
    let causes: Vec<String> = result_causes(result).into_iter().collect();
    let failing = unexpected(outcome);
    let _ = writeln!(
        out,
        "<details class=\"result {outcome}{}\" id=\"{}\" data-agent=\"{}\" data-case=\"{}\" \
         data-outcome=\"{outcome}\" data-causes=\"{}\"{}>",
        if failing { " unexpected" } else { "" },
        text(element),
        text(agent),
        text(id),
        text(&causes.join(" ")),
        if failing { " open" } else { "" }
    );
    let _ = writeln!(
        out,
        "<summary><span class=\"badge {outcome}\">{}</span> <b>{}</b> <span class=\"agent\">{}</span>{}</summary>",
        text(outcome_label(outcome)),
        text(id),
        text(agent),
        if result["fingerprint"].as_array().is_some_and(|f| !f.is_empty()) {
            format!(
                " <span class=\"fingerprint\">{}</span>",
                text(&fingerprint(&result["fingerprint"]))
            )
        } else {
            String::new()
        }
    );
    if let Some(about) = case["about"].as_str() {
        let _ = writeln!(out, "<p class=\"about\">{}</p>", text(about));
    }
    let _ = writeln!(
        out,
        "<p class=\"files\">case <code>{}</code> · recording <code>{}</code> · <a href=\"#{}\">link</a></p>",
        text(str_of(&case["file"])),
        text(str_of(&result["recording"])),
        text(&fragment(element))
    );
    if let Some(error) = case["error"].as_str() {
        let _ = writeln!(out, "<p class=\"problem\">{}</p>", text(error));
    }
    // A baseline change: the old and new fingerprint side by side, and the command that takes it.
    if matches!(outcome, "failure" | "changed" | "now_passes") {
        let old = result["baseline"]
            .as_array()
            .map(|_| fingerprint_lines(&result["baseline"]))
            .unwrap_or_else(|| "(not listed)".into());
        let new = if outcome == "now_passes" {
            "(passes)".to_owned()
        } else {
            fingerprint_lines(&result["fingerprint"])
        };
        let _ = writeln!(
            out,
            "<div class=\"baseline\"><table><thead><tr><th>baseline</th><th>now</th></tr></thead>\
             <tbody><tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></tbody></table>",
            text(&old),
            text(&new)
        );
        if let Some(accept) = result["accept"].as_str() {
            let _ = writeln!(
                out,
                "<p>to accept it: <code class=\"command\">{}</code></p>",
                text(accept)
            );
        }
        out.push_str("</div>\n");
    }
    if outcome == "error" {
        let _ = writeln!(
            out,
            "<pre class=\"message\">{}</pre>",
            text(str_of(&result["message"]))
        );
    }
    request(out, case, &causes);
    timeline(out, case, result);
    out.push_str("</details>\n");
}

fn fingerprint(entries: &Value) -> String {
    items(entries).map(str_of).collect::<Vec<_>>().join(", ")
}

fn fingerprint_lines(entries: &Value) -> String {
    items(entries).map(str_of).collect::<Vec<_>>().join("\n")
}

/// The request, folded: system prompt, catalog, and for a sub-agent the planner's tools it was
/// not handed (what a `subset` cause is about).
fn request(out: &mut String, case: &Value, causes: &[String]) {
    let tools: Vec<&Value> = items(&case["tools"]).collect();
    let _ = writeln!(
        out,
        "<details class=\"request\"{}><summary>System prompt and catalog ({} tool(s))</summary>",
        if causes.iter().any(|c| c == "subset" || c == "namespace") {
            " open"
        } else {
            ""
        },
        tools.len()
    );
    let system = str_of(&case["system"]);
    if !system.is_empty() {
        let _ = writeln!(out, "<pre class=\"system\">{}</pre>", text(system));
    }
    out.push_str("<ul class=\"catalog\">");
    for tool in &tools {
        let _ = write!(
            out,
            "<li><code>{}</code> {}</li>",
            text(str_of(&tool["name"])),
            text(str_of(&tool["description"]))
        );
    }
    out.push_str("</ul>\n");
    if let Some(parent) = case["parent_tools"].as_array() {
        let defined: BTreeSet<&str> = tools.iter().map(|t| str_of(&t["name"])).collect();
        let withheld: Vec<&str> = parent
            .iter()
            .map(str_of)
            .filter(|n| !defined.contains(n))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"diff\">the planner has {} tool(s); this agent was handed {}; not handed: {}</p>",
            parent.len(),
            tools.len(),
            withheld
                .iter()
                .map(|n| format!("<code class=\"removed\">{}</code>", text(n)))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    for drift in items(&case["drift"]) {
        let _ = writeln!(
            out,
            "<p class=\"drift\">drift: <code class=\"offending\">{}</code> is not defined, but {} says: \
             “{}”{}</p>",
            text(str_of(&drift["name"])),
            text(str_of(&drift["source"])),
            text(str_of(&drift["context"])),
            suggestions(&drift["suggestions"])
        );
    }
    out.push_str("</details>\n");
}

fn suggestions(list: &Value) -> String {
    let names: Vec<String> = items(list)
        .map(|n| format!("<code>{}</code>", text(str_of(n))))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", names.join(" or "))
    }
}

/// The transcript's turns, then each recorded response, with findings where they happen.
fn timeline(out: &mut String, case: &Value, result: &Value) {
    let samples: Vec<&Value> = items(&result["samples"]).collect();
    let findings: Vec<&Value> = samples
        .iter()
        .flat_map(|s| items(&s["verdict"]["findings"]))
        .collect();
    out.push_str("<ol class=\"timeline\">\n");
    for (i, message) in items(&case["transcript"]["messages"]).enumerate() {
        let role = str_of(&message["role"]);
        let _ = writeln!(
            out,
            "<li class=\"turn {}\"><div class=\"who\">{}</div>",
            text(role),
            text(role)
        );
        for part in items(&message["text"]) {
            let _ = writeln!(out, "<p class=\"text\">{}</p>", text(str_of(part)));
        }
        for call in items(&message["calls"]) {
            call_block(out, call, None);
        }
        for answer in items(&message["results"]) {
            let id = answer["call_id"].as_str();
            let _ = writeln!(
                out,
                "<div class=\"answer{}\">result{}{}<pre>{}</pre></div>",
                if answer["is_error"].as_bool() == Some(true) {
                    " error"
                } else {
                    ""
                },
                match id {
                    Some(id) => format!(
                        " for <a href=\"#call-{}\">call <code>{}</code></a>",
                        anchor(id),
                        text(id)
                    ),
                    None => String::new(),
                },
                answer["name"]
                    .as_str()
                    .map(|n| format!(" of <code>{}</code>", text(n)))
                    .unwrap_or_default(),
                content(str_of(&answer["content"]))
            );
        }
        let location = format!("transcript message {}", i + 1);
        for finding in findings
            .iter()
            .filter(|f| str_of(&f["location"]) == location)
        {
            finding_block(out, finding);
        }
        out.push_str("</li>\n");
    }
    for sample in &samples {
        let response = &sample["response"];
        let _ = writeln!(
            out,
            "<li class=\"turn recorded\"><div class=\"who\">recorded response{}{}</div>",
            sample["line"]
                .as_u64()
                .map(|l| format!(" (line {l})"))
                .unwrap_or_default(),
            response["stop_reason"]
                .as_str()
                .map(|r| format!(" · stop: {}", text(r)))
                .unwrap_or_default()
        );
        for part in items(&response["text"]) {
            let _ = writeln!(out, "<p class=\"text\">{}</p>", text(str_of(part)));
        }
        let sample_findings: Vec<&Value> = items(&sample["verdict"]["findings"]).collect();
        for (i, call) in items(&response["calls"]).enumerate() {
            let location = format!("response call {}", i + 1);
            let marked: Vec<&Value> = sample_findings
                .iter()
                .copied()
                .filter(|f| str_of(&f["location"]) == location)
                .collect();
            call_block(out, call, Some(&marked));
        }
        for finding in sample_findings
            .iter()
            .filter(|f| !str_of(&f["location"]).starts_with("response call "))
            .filter(|f| !str_of(&f["location"]).starts_with("transcript message "))
        {
            finding_block(out, finding);
        }
        for note in items(&sample["verdict"]["notes"]) {
            let _ = writeln!(
                out,
                "<p class=\"note\">note (fails nothing): {} at {}: {}</p>",
                text(str_of(&note["kind"])),
                text(str_of(&note["location"])),
                text(str_of(&note["detail"]))
            );
        }
        out.push_str("</li>\n");
    }
    if str_of(&case["expect"]) == "no_call" {
        out.push_str(
            "<li class=\"turn expect\">the case expects no call: no defined tool fits</li>\n",
        );
    }
    out.push_str("</ol>\n");
}

fn call_block(out: &mut String, call: &Value, findings: Option<&[&Value]>) {
    let offending = findings.is_some_and(|f| !f.is_empty());
    let id = call["id"].as_str();
    let _ = write!(
        out,
        "<div class=\"call{}\"{}>call <code class=\"name\">{}</code>{}",
        if offending { " offending" } else { "" },
        id.map(|id| format!(" id=\"call-{}\"", anchor(id)))
            .unwrap_or_default(),
        text(str_of(&call["name"])),
        id.map(|id| format!(" <span class=\"id\">[id {}]</span>", text(id)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "<pre class=\"arguments\">{}</pre>",
        json(&call["arguments"])
    );
    for finding in findings.unwrap_or_default() {
        finding_block(out, finding);
    }
    out.push_str("</div>\n");
}

fn finding_block(out: &mut String, finding: &Value) {
    let _ = writeln!(
        out,
        "<div class=\"finding\" data-kind=\"{}\"><span class=\"rule\">{}</span>{}{} {}{}</div>",
        text(str_of(&finding["kind"])),
        text(str_of(&finding["kind"])),
        finding["name"]
            .as_str()
            .map(|n| format!(" <code>{}</code>", text(n)))
            .unwrap_or_default(),
        finding["cause"]
            .as_str()
            .map(|c| format!(" <span class=\"cause\">{}</span>", text(c)))
            .unwrap_or_default(),
        text(str_of(&finding["detail"])),
        suggestions(&finding["suggestions"])
    );
}

// ---- rate ------------------------------------------------------------------------------------

fn rate(out: &mut String, run: &Value) {
    let percent = |v: &Value| {
        v.as_f64()
            .map(|r| format!("{:.2}%", r * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    let _ = writeln!(
        out,
        "<section class=\"summary\"><h2>Unknown tool names</h2><p class=\"rate\"><b>{}</b> of {} \
         call(s) = <b>{}</b> (95% CI {} to {}), over {} response(s)</p>",
        run["unknown"],
        run["calls"],
        percent(&run["rate"]),
        percent(&run["interval"][0]),
        percent(&run["interval"][1]),
        run["responses"]
    );
    let gate = &run["gate"];
    let reasons: Vec<String> = items(&gate["reasons"]).map(|r| text(str_of(r))).collect();
    let _ = writeln!(
        out,
        "<p class=\"gate {}\">gate: {}</p>",
        if gate["passed"].as_bool() == Some(true) {
            "ok"
        } else {
            "failed"
        },
        if reasons.is_empty() {
            "passed".to_owned()
        } else {
            reasons.join("; ")
        }
    );
    // Unknown calls per cause, drawn as bars.
    let mut per_cause: std::collections::BTreeMap<String, u64> = Default::default();
    for name in items(&run["distinct"]) {
        if let Some(causes) = name["causes"].as_object() {
            for (cause, n) in causes {
                *per_cause.entry(cause.clone()).or_default() += n.as_u64().unwrap_or(0);
            }
        }
    }
    if !per_cause.is_empty() {
        let max = per_cause.values().copied().max().unwrap_or(1).max(1);
        let height = 26 * per_cause.len() + 8;
        let _ = writeln!(
            out,
            "<svg class=\"chart\" role=\"img\" aria-label=\"unknown calls per cause\" viewBox=\"0 0 520 {height}\" \
             width=\"520\" height=\"{height}\">"
        );
        for (i, (cause, n)) in per_cause.iter().enumerate() {
            let y = 4 + 26 * i;
            let width = 1 + (*n as usize * 300) / max as usize;
            let _ = writeln!(
                out,
                "<text x=\"0\" y=\"{}\" class=\"label\">{}</text><rect x=\"130\" y=\"{y}\" width=\"{width}\" \
                 height=\"18\" class=\"bar\"/><text x=\"{}\" y=\"{}\" class=\"value\">{n}</text>",
                y + 14,
                text(cause),
                136 + width,
                y + 14
            );
        }
        out.push_str("</svg>\n");
    }
    for (key, title) in [
        ("distinct", "Distinct unknown names"),
        ("in_text", "Names written as calls in text"),
    ] {
        let names: Vec<&Value> = items(&run[key]).collect();
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<h3>{title}</h3><table class=\"names\"><thead><tr><th>count</th><th>name</th>\
             <th>cause</th><th>did you mean</th><th>first seen</th></tr></thead><tbody>"
        );
        for name in names {
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                name["count"],
                text(str_of(&name["name"])),
                text(name["cause"].as_str().unwrap_or("-")),
                items(&name["suggestions"])
                    .map(|s| format!("<code>{}</code>", text(str_of(s))))
                    .collect::<Vec<_>>()
                    .join(" "),
                text(str_of(&name["first_seen"]))
            );
        }
        out.push_str("</tbody></table>\n");
    }
    let errors: Vec<&Value> = items(&run["errors"]).collect();
    if !errors.is_empty() {
        let _ = writeln!(out, "<h3>Unreadable inputs ({})</h3><ul>", run["bad_lines"]);
        for error in errors {
            let _ = writeln!(out, "<li class=\"problem\">{}</li>", text(str_of(error)));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

// ---- replay ----------------------------------------------------------------------------------

fn replay(out: &mut String, run: &Value) {
    out.push_str("<section class=\"results\"><h2>Flows</h2>\n");
    for flow in items(&run["flows"]) {
        let name = str_of(&flow["flow"]);
        let outcome = str_of(&flow["outcome"]);
        let failing = !matches!(outcome, "pass" | "expected_failure" | "skipped");
        let _ = writeln!(
            out,
            "<details class=\"result {outcome}\" id=\"f-{}\" data-outcome=\"{outcome}\"{}>\
             <summary><span class=\"badge {outcome}\">{}</span> <b>{}</b></summary>",
            anchor(name),
            if failing { " open" } else { "" },
            text(outcome_label(outcome)),
            text(name)
        );
        let _ = writeln!(out, "<p>{}</p>", text(str_of(&flow["summary"])));
        out.push_str("<ol class=\"timeline\">\n");
        for step in items(&flow["steps"]) {
            if let Some(reason) = step["skipped"].as_str() {
                let _ = writeln!(
                    out,
                    "<li class=\"turn step skipped\"><div class=\"who\">step {}</div><div class=\"call\">\
                     <code class=\"name\">{}</code> skipped: {}</div></li>",
                    step["index"],
                    text(str_of(&step["name"])),
                    text(reason)
                );
                continue;
            }
            let _ = writeln!(
                out,
                "<li class=\"turn step\"><div class=\"who\">step {}</div><div class=\"call\">call \
                 <code class=\"name\">{}</code><pre class=\"arguments\">{}</pre></div>\
                 <div class=\"answer\">result<pre>{}</pre></div></li>",
                step["index"],
                text(str_of(&step["name"])),
                json(&step["input"]),
                result_json(&step["result"])
            );
        }
        if let Some(failure) = flow["failure"].as_object() {
            let _ = writeln!(
                out,
                "<li class=\"turn failed\"><div class=\"who\">{}</div><div class=\"finding\">\
                 <span class=\"rule\">{}</span> {}</div>",
                failure
                    .get("step")
                    .and_then(Value::as_u64)
                    .map(|s| format!("step {s}"))
                    .unwrap_or_else(|| "the server".into()),
                text(
                    failure
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                ),
                text(
                    failure
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                )
            );
            // What the failing step sent, so the failure can be read without the flow file.
            if let Some(input) = failure.get("input") {
                let _ = writeln!(
                    out,
                    "<div class=\"call offending\">call <code class=\"name\">{}</code>\
                     <pre class=\"arguments\">{}</pre></div>",
                    text(
                        failure
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                    ),
                    json(input)
                );
            }
            if let (Some(expected), Some(got)) = (failure.get("expected"), failure.get("got")) {
                let _ = writeln!(
                    out,
                    "<table class=\"baseline\"><thead><tr><th>expected at <code>{}</code></th>\
                     <th>got</th></tr></thead><tbody><tr><td><pre>{}</pre></td><td><pre>{}</pre></td>\
                     </tr></tbody></table>",
                    text(failure.get("pointer").and_then(Value::as_str).unwrap_or_default()),
                    json(expected),
                    if got.is_null() {
                        "(nothing there)".to_owned()
                    } else {
                        json(got)
                    }
                );
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ol>\n");
        // What the session check found on the stdio stream: a finding when it failed the flow
        // (--json's `fails`: under --strict, in a flow that otherwise passed), a note otherwise.
        let session: Vec<&Value> = items(&flow["session"]).collect();
        if !session.is_empty() {
            out.push_str("<ul class=\"session\">\n");
            for found in session {
                let said = if found["fails"].as_bool() == Some(true) {
                    "finding"
                } else {
                    "note"
                };
                let _ = writeln!(
                    out,
                    "<li class=\"{said}\" data-kind=\"{}\">{said}: session: {}</li>",
                    text(str_of(&found["kind"])),
                    text(str_of(&found["message"]))
                );
            }
            out.push_str("</ul>\n");
        }
        let stderr: Vec<&Value> = items(&flow["stderr_tail"]).collect();
        if !stderr.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"stderr\"><summary>the server's stderr (last {} line(s))</summary><pre>{}</pre></details>",
                stderr.len(),
                text(&stderr.iter().map(|l| str_of(l)).collect::<Vec<_>>().join("\n"))
            );
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// A server answering in text sends its JSON as a text block: the replay page shows that
    /// JSON indented, not a quoted string of it, and markup in it stays text.
    #[test]
    fn a_text_result_holding_json_is_drawn_as_json() {
        let run = json!({"command": "replay", "ok": true, "flows": [{
            "flow": "f.json", "outcome": "pass", "summary": "",
            "steps": [{"index": 1, "name": "get", "input": {"id": 1},
                       "result": "{\"note\":\"<b>hi</b>\",\"n\":2}"}]
        }]});
        let page = super::render(&run);
        assert!(
            page.contains(
                "result<pre>{\n  &quot;n&quot;: 2,\n  &quot;note&quot;: &quot;&lt;b&gt;hi&lt;/b&gt;&quot;\n}</pre>"
            ),
            "{page}"
        );
        assert!(!page.contains("<b>hi"));
    }

    /// The session check's findings are on the page: a finding when it failed the flow (its
    /// `fails`), a note otherwise, the server's text kept as text.
    #[test]
    fn the_session_check_is_drawn_finding_or_note() {
        let run = json!({"command": "replay", "ok": false, "flows": [{
            "flow": "f.json", "outcome": "failure", "summary": "", "steps": [],
            "session": [
                {"kind": "stray_stdout", "message": "line 3 <script>x</script>", "fails": true},
                {"kind": "stderr", "message": "the server wrote 2 line(s) to stderr", "fails": false}]
        }]});
        let page = super::render(&run);
        assert!(
            page.contains("<li class=\"finding\" data-kind=\"stray_stdout\">finding: session: line 3 &lt;script&gt;x&lt;/script&gt;</li>"),
            "{page}"
        );
        assert!(
            page.contains("<li class=\"note\" data-kind=\"stderr\">note: session: the server wrote 2 line(s) to stderr</li>"),
            "{page}"
        );
    }
}
