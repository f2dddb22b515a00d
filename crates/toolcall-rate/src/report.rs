//! The report: the rate with its interval, the distinct names, and the gate's decision.
//!
//! The JSON shape (`toolcall rate --json`) is stable; new keys may be added, none removed or
//! renamed:
//!
//! ```json
//! {
//!   "responses": 120,                 // responses scored (the denominator's units)
//!   "calls": 310,                     // tool calls scored: the rate's denominator
//!   "unknown": 4,                     // calls naming a tool the request did not define
//!   "rate": 0.0129,                   // unknown / calls; null when no call was scored
//!   "interval": [0.0050, 0.0327],     // 95% Wilson score interval; null when no call
//!   "distinct": [                     // one entry per distinct unknown name, most calls first
//!     {"name": "search_invoices", "count": 3, "cause": "retired",
//!      "causes": {"retired": 3}, "suggestions": ["get_invoice"],
//!      "first_seen": "recorded/claude/billing/x.json",
//!      "first_file": "recorded/claude/billing/x.json", "first_line": null}
//!   ],
//!   "in_text": [ ... ],               // names written as calls only in text (same shape); not in the rate
//!   "no_tool_fits": {"responses": 6, "calls": 2},  // cases with "expect": "no_call"
//!   "other_findings": {"arguments_not_json": 1},
//!   "bad_lines": 0,                   // JSONL lines or recorded files that could not be read
//!   "errors": ["log.jsonl:17: ..."],  // the first of them, in input order
//!   "unrecorded": 0,                  // cases with no recorded response (tree mode)
//!   "traces": {"not_judged_turns": 3, // traces: turns whose trace recorded no catalog,
//!              "not_judged_calls": 5, //   their calls (not in the rate), turns judged by
//!              "names_only_turns": 0, //   names only, calls recorded twice and folded,
//!              "folded_calls": 2,     //   traces read in parts (their records far apart)
//!              "split_traces": 0,     //   (all zero for logs and trees)
//!              "not_judged_by_source": {"claude-code": {"turns": 3, "calls": 5}},
//!              "not_judged": [{"name": "Read", "at": "s.jsonl:4", "source": "claude-code"}],
//!                                     //   the first 20 calls not judged, in input order
//!              "notes": [{"at": "t.json", "note": "ATIF version `ATIF-v1.8` is newer …"}]},
//!                                     //   records read with a caveat (they fail nothing)
//!   "stopped": null,                  // why a live run stopped early, when it did
//!   "live": {"asked": 51, "resumed": 0, "failed": 0, "unasked": 0,
//!            "requests": 51, "tokens": 48210},  // live mode only (null otherwise)
//!   "gate": {"max_unknown": 0, "max_rate": null, "min_calls": null,
//!            "passed": false, "reasons": ["4 unknown > --max-unknown 0"]}
//! }
//! ```
//!
//! `first_seen` is for a reader (`log.jsonl:17 (req_8812)`); `first_file` and `first_line` say
//! the same for a tool (a GitHub annotation, an editor): the file alone (the case file in live
//! mode; `null` for standard input) and its line, when the input has lines.
//!
//! `cause` is the cause most of the name's calls had (ties go to the first in
//! [`toolcall_score::Cause`]'s order); `causes` has the full split.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use toolcall_score::{escape, Cause};

use crate::tally::{NameTally, Tally};

/// The z value of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `successes` out of `trials` at 95% confidence, or `None` when
/// there are no trials.
///
/// Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0 or n
/// successes: 0 unknown out of 1,164 calls still gives an upper bound (0.33%), which is the
/// honest statement of what a clean run shows.
pub fn wilson(successes: u64, trials: u64) -> Option<(f64, f64)> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At 0 and n successes the bound is exactly 0 (or 1); rounding would leave a 1e-19 there.
    let lo = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if successes == trials {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some((lo, hi))
}

/// The thresholds a run is gated on; `None` means not gated on that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Gate {
    /// Fail when more calls than this name an unknown tool.
    pub max_unknown: Option<u64>,
    /// Fail when the rate (unknown / calls, the point estimate) is above this.
    pub max_rate: Option<f64>,
    /// Fail when fewer calls than this were scored. Unset, a run that scored no response at all
    /// fails anyway (it proves nothing); `Some(0)` accepts one.
    pub min_calls: Option<u64>,
}

/// The gate's decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateResult {
    /// The thresholds.
    #[serde(flatten)]
    pub gate: Gate,
    /// Whether every threshold held.
    pub passed: bool,
    /// One sentence per threshold that did not hold.
    pub reasons: Vec<String>,
}

/// One distinct unknown name in a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distinct {
    /// The name exactly as the model wrote it (escape it before printing: see
    /// [`toolcall_score::escape`]).
    pub name: String,
    /// How many calls (or, in `in_text`, responses) used it.
    pub count: u64,
    /// The cause most of them had.
    pub cause: Cause,
    /// Every cause seen, with its count.
    pub causes: BTreeMap<Cause, u64>,
    /// The defined names it was likely meant to be, closest first.
    pub suggestions: Vec<String>,
    /// Where it was first seen, in input order: `path:line (id)`, for a reader.
    pub first_seen: Option<String>,
    /// The file of `first_seen` alone.
    pub first_file: Option<String>,
    /// The line of `first_seen` in `first_file`, when it has lines.
    pub first_line: Option<u64>,
}

/// Responses to cases that say no tool fits (`"expect": "no_call"`), counted apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NoToolFits {
    /// Responses to such cases.
    pub responses: u64,
    /// Calls made in them: each is a call where no tool fits.
    pub calls: u64,
}

/// What a live run sent: the counts that show the budget held and a resume asked only what was
/// left. Requests count every HTTP request, retries included; `asked + resumed + unasked` is the
/// number of cases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LiveCounts {
    /// Cases asked in this run.
    pub asked: u64,
    /// Cases scored from an earlier recording instead of being asked.
    pub resumed: u64,
    /// Cases whose request failed (counted in `asked` too).
    pub failed: u64,
    /// Cases not asked because the run stopped early.
    pub unasked: u64,
    /// HTTP requests sent, retries included.
    pub requests: u64,
    /// Tokens spent, from the responses' `usage`.
    pub tokens: u64,
}

/// A finished rate report. Serializes to the stable JSON shape documented on this module.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Responses scored.
    pub responses: u64,
    /// Calls scored: the denominator.
    pub calls: u64,
    /// Calls naming a tool the request did not define.
    pub unknown: u64,
    /// `unknown / calls`, `None` when no call was scored.
    pub rate: Option<f64>,
    /// The 95% Wilson interval of the rate.
    pub interval: Option<(f64, f64)>,
    /// The distinct unknown names, most calls first, then by name.
    pub distinct: Vec<Distinct>,
    /// Names written as calls only in text, most responses first.
    pub in_text: Vec<Distinct>,
    /// Cases where no tool fits.
    pub no_tool_fits: NoToolFits,
    /// Other findings (arguments, duplicate ids, transcript), by kind.
    pub other_findings: BTreeMap<String, u64>,
    /// Inputs (JSONL lines, recorded files, live responses) that could not be read.
    pub bad_lines: u64,
    /// The first of those errors, in input order.
    pub errors: Vec<String>,
    /// Cases with no recorded response (tree mode).
    pub unrecorded: u64,
    /// What reading traces left out or folded (all zero for logs and trees).
    pub traces: crate::tally::TraceCounts,
    /// Why a live run stopped before asking every case, when it did.
    pub stopped: Option<String>,
    /// What a live run sent (live mode only).
    pub live: Option<LiveCounts>,
    /// The gate's decision.
    pub gate: GateResult,
}

fn distinct(table: std::collections::HashMap<String, NameTally>) -> Vec<Distinct> {
    let mut list: Vec<Distinct> = table
        .into_iter()
        .map(|(name, t)| {
            // Most frequent cause; ties to the earliest in Cause order (BTreeMap iterates in it).
            let cause = t
                .causes
                .iter()
                .fold(None::<(Cause, u64)>, |best, (&c, &n)| match best {
                    Some((_, m)) if m >= n => best,
                    _ => Some((c, n)),
                })
                .map_or(Cause::Invented, |(c, _)| c);
            Distinct {
                name,
                count: t.count,
                cause,
                causes: t.causes,
                suggestions: t.suggestions,
                first_file: t.first.as_ref().and_then(|o| o.file.clone()),
                first_line: t.first.as_ref().and_then(|o| o.line),
                first_seen: t.first.map(|o| o.shown),
            }
        })
        .collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    list
}

impl Report {
    /// Turns a finished tally into a report, gated by `gate`.
    pub fn new(tally: Tally, gate: Gate) -> Report {
        let rate = (tally.calls > 0).then(|| tally.unknown as f64 / tally.calls as f64);
        let interval = wilson(tally.unknown, tally.calls);
        let mut reasons = Vec::new();
        if let Some(max) = gate.max_unknown {
            if tally.unknown > max {
                reasons.push(format!(
                    "{} unknown name(s) > --max-unknown {max}",
                    tally.unknown
                ));
            }
        }
        if let (Some(max), Some(rate)) = (gate.max_rate, rate) {
            if rate > max {
                reasons.push(format!("rate {rate:.4} > --max-rate {max}"));
            }
        }
        // A run that scored nothing at all (an empty log, every line bad) proves nothing, gate
        // or no gate: it fails unless `--min-calls 0` says that is expected.
        if tally.responses == 0 && gate.min_calls != Some(0) {
            let unjudged = match tally.traces.not_judged_turns {
                0 => String::new(),
                n => format!(
                    "; {n} trace turn(s) were read but not judged, their trace recorded no \
                     catalog (--tools FILE supplies one)"
                ),
            };
            reasons.push(format!(
                "no response was scored: a nightly gate over nothing is not a pass \
                 (--min-calls 0 accepts an empty run){unjudged}"
            ));
        }
        if let Some(min) = gate.min_calls {
            if tally.calls < min {
                reasons.push(format!(
                    "{} call(s) scored < --min-calls {min}",
                    tally.calls
                ));
            }
        }
        let mut errors = tally.errors;
        errors.sort_by(|a, b| a.0.cmp(&b.0));
        Report {
            responses: tally.responses,
            calls: tally.calls,
            unknown: tally.unknown,
            rate,
            interval,
            distinct: distinct(tally.names),
            in_text: distinct(tally.in_text),
            no_tool_fits: NoToolFits {
                responses: tally.no_call_responses,
                calls: tally.no_call_calls,
            },
            other_findings: tally
                .other_findings
                .into_iter()
                .map(|(k, n)| (k.as_str().to_owned(), n))
                .collect(),
            bad_lines: tally.bad,
            errors: errors
                .into_iter()
                .take(crate::tally::KEPT_ERRORS)
                .map(|(_, m)| m)
                .collect(),
            unrecorded: 0,
            traces: tally.traces,
            stopped: None,
            live: None,
            gate: GateResult {
                gate,
                passed: reasons.is_empty(),
                reasons,
            },
        }
    }

    /// Whether the gate held.
    pub fn passed(&self) -> bool {
        self.gate.passed
    }
}

/// What a zero rate does and does not show, printed under every clean report.
pub const ZERO_MEANS: &str = "note: zero unknown names means none of these calls named a tool \
     outside its request. Under grammar-constrained decoding (llama.cpp's \
     chatml-function-calling, vLLM guided decoding, strict structured outputs) an unknown name \
     cannot occur at all: there a zero checks the pipeline, not the model's honesty.";

fn percent(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

fn write_names(f: &mut fmt::Formatter<'_>, list: &[Distinct]) -> fmt::Result {
    let width = list
        .iter()
        .map(|d| escape(&d.name).to_string().chars().count())
        .max()
        .unwrap_or(0);
    for d in list {
        let name = escape(&d.name).to_string();
        // `prompt_drift` is the longest cause: pad to it so the columns after line up.
        write!(f, "  {:>6}  {name:<width$}  {:<12}", d.count, d.cause)?;
        if d.causes.len() > 1 {
            let split: Vec<String> = d.causes.iter().map(|(c, n)| format!("{c} {n}")).collect();
            write!(f, " ({})", split.join(", "))?;
        }
        if let Some(first) = d.suggestions.first() {
            write!(f, "  did you mean `{}`?", escape(first))?;
        }
        if let Some(seen) = &d.first_seen {
            write!(f, "  first in {}", escape(seen))?;
        }
        writeln!(f)?;
    }
    Ok(())
}

impl fmt::Display for Report {
    /// The human report: totals, the rate with its interval, the distinct names (always), and
    /// the gate's decision on the last line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "scored {} response(s), {} call(s)",
            self.responses, self.calls
        )?;
        match (self.rate, self.interval) {
            (Some(rate), Some((lo, hi))) => writeln!(
                f,
                "unknown tool names: {} of {} call(s) = {} (95% CI {} to {})",
                self.unknown,
                self.calls,
                percent(rate),
                percent(lo),
                percent(hi)
            )?,
            _ => writeln!(
                f,
                "unknown tool names: {} (no call scored: the rate is undefined)",
                self.unknown
            )?,
        }
        if self.distinct.is_empty() {
            writeln!(f, "distinct unknown names: none")?;
        } else {
            writeln!(
                f,
                "distinct unknown names: {} (count, name, cause)",
                self.distinct.len()
            )?;
            write_names(f, &self.distinct)?;
        }
        if !self.in_text.is_empty() {
            writeln!(
                f,
                "names written as calls in text only (not in the rate): {}",
                self.in_text.len()
            )?;
            write_names(f, &self.in_text)?;
        }
        if self.no_tool_fits.responses > 0 {
            writeln!(
                f,
                "calls where no tool fits: {} in {} response(s) to no-call cases",
                self.no_tool_fits.calls, self.no_tool_fits.responses
            )?;
        }
        if !self.other_findings.is_empty() {
            let parts: Vec<String> = self
                .other_findings
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            writeln!(f, "other findings: {}", parts.join(", "))?;
        }
        if self.unrecorded > 0 {
            writeln!(f, "cases with no recorded response: {}", self.unrecorded)?;
        }
        let traces = &self.traces;
        if traces.not_judged_turns > 0 {
            writeln!(
                f,
                "not judged: no catalog recorded: {} turn(s), {} call(s) (not in the rate; \
                 --tools FILE supplies one)",
                traces.not_judged_turns, traces.not_judged_calls
            )?;
            for (source, n) in &traces.not_judged_by_source {
                writeln!(
                    f,
                    "  {source}: {} turn(s), {} call(s) with no catalog recorded",
                    n.turns, n.calls
                )?;
            }
            for call in &traces.not_judged {
                writeln!(
                    f,
                    "  `{}` at {} ({}): not judged, no catalog recorded",
                    toolcall_score::escape(&call.name),
                    toolcall_score::escape(&call.at),
                    call.source
                )?;
            }
            let more = traces
                .not_judged_calls
                .saturating_sub(traces.not_judged.len() as u64);
            if more > 0 {
                writeln!(f, "  and {more} more call(s) not judged")?;
            }
        }
        for note in &traces.notes {
            writeln!(
                f,
                "note: {}: {}",
                toolcall_score::escape(&note.at),
                note.note
            )?;
        }
        if traces.names_only_turns > 0 {
            writeln!(
                f,
                "judged against tool names only (arguments not validated): {} turn(s)",
                traces.names_only_turns
            )?;
        }
        if traces.folded_calls > 0 {
            writeln!(
                f,
                "calls recorded more than once, folded into one: {}",
                traces.folded_calls
            )?;
        }
        if traces.split_traces > 0 {
            writeln!(
                f,
                "traces read in parts, their records far apart in the file (a call recorded in \
                 two parts is not folded): {}",
                traces.split_traces
            )?;
        }
        if self.bad_lines > 0 {
            writeln!(f, "unreadable inputs: {}", self.bad_lines)?;
            for error in &self.errors {
                writeln!(f, "  {error}")?;
            }
            if self.bad_lines > self.errors.len() as u64 {
                writeln!(
                    f,
                    "  ... and {} more",
                    self.bad_lines - self.errors.len() as u64
                )?;
            }
        }
        if let Some(stopped) = &self.stopped {
            writeln!(f, "stopped early: {stopped}")?;
        }
        if let Some(live) = &self.live {
            writeln!(
                f,
                "live: {} case(s) asked, {} resumed from recordings, {} failed, {} not asked; {} request(s), {} token(s)",
                live.asked, live.resumed, live.failed, live.unasked, live.requests, live.tokens
            )?;
        }
        if self.unknown == 0 && self.calls > 0 {
            writeln!(f, "{ZERO_MEANS}")?;
        }
        let gate = &self.gate;
        if gate.gate == Gate::default() && gate.passed {
            write!(f, "gate: none set (--max-unknown, --max-rate, --min-calls)")
        } else if gate.passed {
            write!(f, "gate: PASS")
        } else {
            write!(f, "gate: FAIL: {}", gate.reasons.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_published_values() {
        // Reference values: Newcombe (1998), Statistics in Medicine 17, table I, method 3.
        let (lo, hi) = wilson(81, 263).unwrap();
        assert!(
            (lo - 0.2553).abs() < 5e-4 && (hi - 0.3662).abs() < 5e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(15, 148).unwrap();
        assert!(
            (lo - 0.0624).abs() < 5e-4 && (hi - 0.1605).abs() < 5e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(0, 20).unwrap();
        assert!(lo == 0.0 && (hi - 0.1611).abs() < 5e-4, "{lo} {hi}");
        let (lo, hi) = wilson(1, 29).unwrap();
        assert!(
            (lo - 0.0061).abs() < 5e-4 && (hi - 0.1718).abs() < 5e-4,
            "{lo} {hi}"
        );
    }

    #[test]
    fn wilson_is_undefined_without_trials_and_bounded_at_the_ends() {
        assert_eq!(wilson(0, 0), None);
        let (lo, hi) = wilson(10, 10).unwrap();
        assert!(
            (hi - 1.0).abs() < 1e-12 && (lo - 0.7225).abs() < 5e-4,
            "{lo} {hi}"
        );
    }

    #[test]
    fn gate_reasons_name_each_threshold_exceeded() {
        let tally = Tally {
            responses: 90,
            calls: 100,
            unknown: 3,
            ..Tally::default()
        };
        let report = Report::new(
            tally.clone(),
            Gate {
                max_unknown: Some(2),
                max_rate: Some(0.01),
                min_calls: Some(200),
            },
        );
        assert!(!report.passed());
        assert_eq!(report.gate.reasons.len(), 3, "{:?}", report.gate.reasons);
        let report = Report::new(
            tally,
            Gate {
                max_unknown: Some(3),
                max_rate: Some(0.03),
                min_calls: Some(100),
            },
        );
        assert!(report.passed(), "{:?}", report.gate.reasons);
    }

    #[test]
    fn a_run_that_scored_nothing_fails_unless_told_to_expect_it() {
        let report = Report::new(Tally::default(), Gate::default());
        assert!(!report.passed());
        assert!(
            report
                .to_string()
                .contains("gate: FAIL: no response was scored"),
            "{report}"
        );
        let expected = Gate {
            min_calls: Some(0),
            ..Gate::default()
        };
        assert!(Report::new(Tally::default(), expected).passed());
    }
}
