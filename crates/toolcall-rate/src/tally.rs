//! The aggregate: what scoring many responses adds up to.
//!
//! A [`Tally`] is built per worker thread and merged at the end, so scoring needs no lock. Its
//! size is bounded except for the distinct-name tables (one entry per distinct unknown name),
//! which is the one thing a report has to keep; the error list keeps only its first entries.

use std::collections::{BTreeMap, HashMap};

use toolcall_score::{Case, Cause, Expect, FindingKind, Response, Scorer};

/// How many bad-input messages a tally keeps; the rest are only counted.
pub const KEPT_ERRORS: usize = 20;

/// Where a scored response came from, in a total order (so "first seen" does not depend on
/// which thread got there first) and as it is shown to a reader.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// The order key: input number, then line (or 0 for a whole file).
    pub order: (usize, u64),
    /// `path:line`, `path`, or a case id.
    pub shown: String,
    /// The file it came from, as given (a recording, a log, the case file in live mode); `None`
    /// for standard input. Kept apart from `shown` so an annotation can point at it.
    pub file: Option<String>,
    /// The line of `file` (a JSONL log line, a `.jsonl` recording's sample).
    pub line: Option<u64>,
}

/// One distinct name as it is being counted.
#[derive(Clone, Debug, Default)]
pub(crate) struct NameTally {
    pub(crate) count: u64,
    pub(crate) causes: BTreeMap<Cause, u64>,
    pub(crate) suggestions: Vec<String>,
    pub(crate) first: Option<Origin>,
}

impl NameTally {
    fn add(&mut self, cause: Option<Cause>, suggestions: &[String], origin: &Origin) {
        self.count += 1;
        *self
            .causes
            .entry(cause.unwrap_or(Cause::Invented))
            .or_default() += 1;
        if self.first.as_ref().is_none_or(|f| origin < f) {
            self.first = Some(origin.clone());
            self.suggestions = suggestions.to_vec();
        }
    }

    fn merge(&mut self, other: NameTally) {
        self.count += other.count;
        for (cause, n) in other.causes {
            *self.causes.entry(cause).or_default() += n;
        }
        if let Some(first) = other.first {
            if self.first.as_ref().is_none_or(|f| first < *f) {
                self.first = Some(first);
                self.suggestions = other.suggestions;
            }
        }
    }
}

/// Running totals over scored responses. Merge per-thread tallies with [`Tally::merge`], then
/// turn the result into a [`crate::Report`].
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub(crate) responses: u64,
    pub(crate) calls: u64,
    pub(crate) unknown: u64,
    pub(crate) names: HashMap<String, NameTally>,
    pub(crate) in_text: HashMap<String, NameTally>,
    pub(crate) no_call_responses: u64,
    pub(crate) no_call_calls: u64,
    pub(crate) other_findings: BTreeMap<FindingKind, u64>,
    pub(crate) bad: u64,
    pub(crate) errors: Vec<(Origin, String)>,
    pub(crate) traces: TraceCounts,
}

/// How many calls not judged for want of a catalog a report names one by one (the counts by
/// source cover them all).
pub const LISTED_NOT_JUDGED: usize = 20;

/// What reading traces adds to a tally: turns that could not be judged, calls folded.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TraceCounts {
    /// Model turns whose trace recorded no catalog: not judged.
    pub not_judged_turns: u64,
    /// Their calls, which are not in the rate.
    pub not_judged_calls: u64,
    /// The same, by the source that read them (`claude-code`, `otel-genai`, …).
    pub not_judged_by_source: BTreeMap<String, NotJudged>,
    /// The first of those calls (at most [`LISTED_NOT_JUDGED`]) in the inputs' order, each
    /// with where its turn is and its source.
    pub not_judged: Vec<UnjudgedCall>,
    /// What a source said of records it read with a caveat (an ATIF file newer than its
    /// reader: what of it was read), the first [`LISTED_NOT_JUDGED`] in the inputs' order.
    /// They fail nothing.
    pub notes: Vec<TraceNote>,
    /// Turns judged against a catalog of names only (arguments not validated).
    pub names_only_turns: u64,
    /// Calls recorded more than once, folded into one.
    pub folded_calls: u64,
    /// Traces read in parts: their records lay so far apart in a long file that the first
    /// part was read before the rest came (a call recorded in two parts is not folded).
    pub split_traces: u64,
}

/// Turns and calls not judged, for want of a catalog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NotJudged {
    /// Model turns.
    pub turns: u64,
    /// Their calls.
    pub calls: u64,
}

/// A source's note on a record it read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceNote {
    /// Where the record is.
    pub at: String,
    /// What was read of it, and what was not.
    pub note: String,
    /// Its place in the inputs.
    #[serde(skip)]
    pub(crate) order: (usize, u64),
}

/// One call not judged: its trace recorded no catalog for its turn.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UnjudgedCall {
    /// The name it called.
    pub name: String,
    /// Where its turn is (`file:line`, or the file and the span or record id).
    pub at: String,
    /// The source that read it.
    pub source: String,
    /// Its place in the inputs, which orders the list whichever thread read it.
    #[serde(skip)]
    pub(crate) order: (usize, u64),
}

impl TraceCounts {
    /// Counts `turn`'s calls as not judged; its source is stamped by
    /// [`TraceCounts::read_by`] once the file's source is known.
    pub(crate) fn not_judged(&mut self, names: &[String], at: &str, order: (usize, u64)) {
        self.not_judged_turns += 1;
        self.not_judged_calls += names.len() as u64;
        for name in names {
            if self.not_judged.len() >= LISTED_NOT_JUDGED {
                break;
            }
            self.not_judged.push(UnjudgedCall {
                name: name.clone(),
                at: at.to_owned(),
                source: String::new(),
                order,
            });
        }
    }

    /// Says that what was counted not judged since `before` (the counts as they were then) was
    /// read by `source`.
    pub(crate) fn read_by(&mut self, source: &str, before: (u64, u64, usize)) {
        let (turns, calls, listed) = before;
        let added = NotJudged {
            turns: self.not_judged_turns - turns,
            calls: self.not_judged_calls - calls,
        };
        if added.turns > 0 {
            let entry = self
                .not_judged_by_source
                .entry(source.to_owned())
                .or_default();
            entry.turns += added.turns;
            entry.calls += added.calls;
        }
        for call in self.not_judged.iter_mut().skip(listed) {
            call.source = source.to_owned();
        }
    }

    /// The counts [`TraceCounts::read_by`] takes as `before`.
    pub(crate) fn mark(&self) -> (u64, u64, usize) {
        (
            self.not_judged_turns,
            self.not_judged_calls,
            self.not_judged.len(),
        )
    }
}

impl Tally {
    /// Scores one response against its case and adds the result.
    pub fn add(&mut self, case: &Case, response: &Response, origin: &Origin) {
        self.add_scored(&Scorer::new(case), response, origin);
    }

    /// [`Tally::add`] with the case already prepared: for many responses to one case.
    pub fn add_scored(&mut self, scorer: &Scorer<'_>, response: &Response, origin: &Origin) {
        self.add_pass(response.calls.len(), scorer.case().expect);
        for finding in scorer.score(response).findings() {
            match finding.kind {
                FindingKind::UnknownTool => {
                    let Some(name) = finding.name.as_deref() else {
                        continue;
                    };
                    // A name written only in text is not a call: it is shown, but it is not
                    // in the rate (whose denominator is calls).
                    let table = if finding.cause == Some(Cause::Prose) {
                        &mut self.in_text
                    } else {
                        self.unknown += 1;
                        &mut self.names
                    };
                    table.entry(name.to_owned()).or_default().add(
                        finding.cause,
                        finding.suggestions(),
                        origin,
                    );
                }
                FindingKind::CallWhereNoToolFits => self.no_call_calls += 1,
                kind => *self.other_findings.entry(kind).or_default() += 1,
            }
        }
    }

    /// Counts a response and its `calls`: all [`Tally::add`] adds for a verdict without
    /// findings, and what the fast path adds for a line it found passing.
    pub(crate) fn add_pass(&mut self, calls: usize, expect: Expect) {
        self.responses += 1;
        self.calls += calls as u64;
        if expect == Expect::NoCall {
            self.no_call_responses += 1;
        }
    }

    /// Counts an input that could not be read or understood, keeping the first few messages.
    pub fn bad_input(&mut self, origin: Origin, message: String) {
        self.bad += 1;
        self.errors.push((origin, message));
        if self.errors.len() > KEPT_ERRORS * 2 {
            self.trim_errors();
        }
    }

    fn trim_errors(&mut self) {
        self.errors.sort_by(|a, b| a.0.cmp(&b.0));
        self.errors.truncate(KEPT_ERRORS);
    }

    /// Adds another tally (from another thread) to this one.
    pub fn merge(&mut self, other: Tally) {
        self.responses += other.responses;
        self.calls += other.calls;
        self.unknown += other.unknown;
        for (name, tally) in other.names {
            self.names.entry(name).or_default().merge(tally);
        }
        for (name, tally) in other.in_text {
            self.in_text.entry(name).or_default().merge(tally);
        }
        self.no_call_responses += other.no_call_responses;
        self.no_call_calls += other.no_call_calls;
        for (kind, n) in other.other_findings {
            *self.other_findings.entry(kind).or_default() += n;
        }
        self.bad += other.bad;
        self.traces.not_judged_turns += other.traces.not_judged_turns;
        self.traces.not_judged_calls += other.traces.not_judged_calls;
        for (source, n) in other.traces.not_judged_by_source {
            let entry = self.traces.not_judged_by_source.entry(source).or_default();
            entry.turns += n.turns;
            entry.calls += n.calls;
        }
        self.traces.notes.extend(other.traces.notes);
        self.traces.notes.sort_by_key(|n| n.order);
        self.traces.notes.truncate(LISTED_NOT_JUDGED);
        self.traces.not_judged.extend(other.traces.not_judged);
        self.traces.not_judged.sort_by_key(|c| c.order);
        self.traces.not_judged.truncate(LISTED_NOT_JUDGED);
        self.traces.names_only_turns += other.traces.names_only_turns;
        self.traces.folded_calls += other.traces.folded_calls;
        self.traces.split_traces += other.traces.split_traces;
        self.errors.extend(other.errors);
        self.trim_errors();
    }

    /// Responses scored so far.
    pub fn responses(&self) -> u64 {
        self.responses
    }

    /// Calls scored so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Calls naming a tool that was not defined, so far.
    pub fn unknown(&self) -> u64 {
        self.unknown
    }

    /// Inputs that could not be read or understood, so far.
    pub fn bad(&self) -> u64 {
        self.bad
    }
}
