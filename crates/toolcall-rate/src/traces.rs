//! Traces (OpenTelemetry spans, agent transcripts: see `toolcall-traces`) as rate runs and as
//! cases: each model turn a source finds is scored as a request and its response, or written
//! as a case and its recording.
//!
//! A turn whose trace recorded no catalog is **not judged** — counted, never scored as if every
//! call were unknown — unless a catalog is supplied (`--tools FILE`): then it is judged against
//! that one.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde_json::Value;
use toolcall_score::{escape_path, Case, Format, Response};
use toolcall_traces::{Catalog, Source, ToolDef, Turn};

use crate::scan::{parallel, ScanOptions};
use crate::tally::{Origin, Tally};
use crate::RateError;

/// What a trace file held.
pub struct TraceFile {
    /// The source that read it.
    pub source: &'static Source,
    /// What it found.
    pub found: toolcall_traces::Found,
}

/// Reads `path` as a trace: `Ok(None)` when no source claims it and none was named (it is some
/// other input, such as a log of request/response lines).
pub fn read_trace(
    path: &Path,
    from: Option<&'static Source>,
) -> Result<Option<TraceFile>, RateError> {
    let text = toolcall_score::read_text(path)?;
    let shown = path.display().to_string();
    match toolcall_traces::read(&text, &shown, from) {
        Ok((source, found)) => Ok(Some(TraceFile { source, found })),
        Err(toolcall_traces::TraceError::NotATrace { .. }) if from.is_none() => Ok(None),
        Err(e) => Err(RateError::Config(e.to_string())),
    }
}

/// Whether the first non-blank line of `path` is a `{"request", "response"}` log line (what
/// `rate` read before it read traces, and still reads first).
pub fn is_log(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    // One line, bounded: a huge line is not looked at whole here.
    while reader
        .by_ref()
        .take(1 << 20)
        .read_line(&mut line)
        .is_ok_and(|n| n > 0)
    {
        if line.trim().is_empty() {
            line.clear();
            continue;
        }
        return serde_json::from_str::<Value>(&line)
            .is_ok_and(|v| v.get("request").is_some() && v.get("response").is_some());
    }
    false
}

/// A catalog given with `--tools`: a tools array of any format the scorer reads, as tool
/// definitions.
pub fn tools_from(path: &Path) -> Result<Vec<ToolDef>, RateError> {
    let text = toolcall_score::read_text(path)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| RateError::Import {
        path: path.to_path_buf(),
        why: format!("not JSON: {e}"),
    })?;
    let tools = toolcall_score::Catalog::from_json(&value).map_err(|e| RateError::Import {
        path: path.to_path_buf(),
        why: format!("not a tools array: {e}"),
    })?;
    Ok(tools
        .tools()
        .iter()
        .map(|t| ToolDef {
            name: t.name.clone(),
            description: (!t.description.is_empty()).then(|| t.description.clone()),
            parameters: t.input_schema.clone(),
        })
        .collect())
}

/// `turn` as a case and its response, the catalog supplied when the trace had none; `None`
/// when it has neither.
pub fn judged(turn: &Turn, supplied: Option<&[ToolDef]>) -> Option<Turn> {
    match (&turn.catalog, supplied) {
        (Catalog::Recorded(_), _) => Some(turn.clone()),
        (Catalog::NotRecorded, Some(tools)) => Some(Turn {
            catalog: Catalog::Recorded(tools.to_vec()),
            ..turn.clone()
        }),
        (Catalog::NotRecorded, None) => None,
    }
}

/// Scores every model turn of every trace in `paths`, one file per worker at a time.
pub fn rate_traces(
    paths: &[PathBuf],
    from: Option<&'static Source>,
    supplied: Option<&[ToolDef]>,
    options: &ScanOptions,
) -> Result<Tally, RateError> {
    let failure: std::sync::Mutex<Option<RateError>> = std::sync::Mutex::new(None);
    let tally = parallel(
        options,
        None,
        |sender, stop| {
            for (i, path) in paths.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if sender.send((i, path.clone())).is_err() {
                    break;
                }
            }
            Ok(())
        },
        |tally, (index, path): (usize, PathBuf)| {
            let file = match read_trace(&path, from) {
                Ok(Some(file)) => file,
                Ok(None) => {
                    let shown = escape_path(&path).to_string();
                    let e = toolcall_traces::TraceError::NotATrace { path: shown };
                    tally.bad_input(origin(index, &path, 0, None), e.to_string());
                    return;
                }
                Err(e) => {
                    if let Ok(mut slot) = failure.lock() {
                        slot.get_or_insert(e);
                    }
                    return;
                }
            };
            add_found(tally, index, &path, &file.found, supplied);
        },
    )?;
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(tally)
}

fn origin(index: usize, path: &Path, order: u64, at: Option<&str>) -> Origin {
    Origin {
        order: (index, order),
        shown: at.map_or_else(|| path.display().to_string(), str::to_owned),
        file: Some(path.display().to_string()),
        line: None,
    }
}

/// Adds what one file found to `tally`.
pub fn add_found(
    tally: &mut Tally,
    index: usize,
    path: &Path,
    found: &toolcall_traces::Found,
    supplied: Option<&[ToolDef]>,
) {
    for (n, bad) in found.bad.iter().enumerate() {
        tally.bad_input(
            origin(index, path, n as u64, Some(&bad.at)),
            format!("{}: {}", bad.at, bad.why),
        );
    }
    tally.traces.folded_calls += found.folded as u64;
    for (n, turn) in found.turns.iter().enumerate() {
        let order = (found.bad.len() + n) as u64;
        let Some(turn) = judged(turn, supplied) else {
            tally.traces.not_judged_turns += 1;
            tally.traces.not_judged_calls += turn.calls.len() as u64;
            continue;
        };
        if turn.catalog.is_names_only() {
            tally.traces.names_only_turns += 1;
        }
        let at = origin(index, path, order, Some(&turn.at));
        let case = match Case::from_value(&turn.chat_request()) {
            Ok(case) => case,
            Err(e) => {
                tally.bad_input(at, format!("{}: the turn's request: {e}", turn.at));
                continue;
            }
        };
        match Response::from_value(&turn.chat_response(), Some(Format::OpenaiChat)) {
            Ok(response) => tally.add(&case, &response, &at),
            Err(e) => tally.bad_input(at, format!("{}: the turn's response: {e}", turn.at)),
        }
    }
}
