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
use toolcall_score::escape_path;
use toolcall_traces::{Catalog, Source, Turn};

use crate::scan::{parallel_pull, ScanOptions};
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
    match toolcall_traces::read_path(path, from) {
        Ok((source, found)) => Ok(Some(TraceFile { source, found })),
        Err(toolcall_traces::TraceError::NotATrace { .. }) if from.is_none() => Ok(None),
        Err(e) => Err(RateError::Trace(e)),
    }
}

/// A catalog given with `--tools`: a tools array of any format the scorer reads.
pub fn tools_from(path: &Path) -> Result<toolcall_score::Catalog, RateError> {
    let text = toolcall_score::read_text(path)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| RateError::Import {
        path: path.to_path_buf(),
        why: format!("not JSON: {e}"),
    })?;
    toolcall_score::Catalog::from_json(&value).map_err(|e| RateError::Import {
        path: path.to_path_buf(),
        why: format!("not a tools array: {e}"),
    })
}

/// Catalogs given with `--tools [PATTERN=]FILE`, for the turns whose trace recorded none: the
/// first rule whose pattern (`*` matches any run of characters) matches the turn's agent or span
/// name, or its model, gives the catalog; a rule without a pattern matches every turn.
#[derive(Clone, Debug, Default)]
pub struct Supplied {
    rules: Vec<(Option<String>, toolcall_score::Catalog)>,
}

impl Supplied {
    /// Reads each `[PATTERN=]FILE` (an argument that names an existing file is a file, `=` and
    /// all).
    pub fn parse(args: &[String]) -> Result<Supplied, RateError> {
        let mut rules = Vec::new();
        for arg in args {
            let (pattern, file) = match arg.split_once('=') {
                Some((pattern, file)) if !Path::new(arg).is_file() => {
                    (Some(pattern.to_owned()), file)
                }
                _ => (None, arg.as_str()),
            };
            rules.push((pattern, tools_from(Path::new(file))?));
        }
        Ok(Supplied { rules })
    }

    /// The catalog for `turn`, when a rule gives one.
    pub fn for_turn(&self, turn: &Turn) -> Option<&toolcall_score::Catalog> {
        self.rules
            .iter()
            .find(|(pattern, _)| match pattern {
                None => true,
                Some(p) => [&turn.name, &turn.model]
                    .into_iter()
                    .flatten()
                    .any(|text| glob(p, text)),
            })
            .map(|(_, tools)| tools)
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// `turn` with the catalog supplied when the trace had none; `None` when it has neither.
pub fn judged(turn: &Turn, supplied: Option<&toolcall_score::Catalog>) -> Option<Turn> {
    match (&turn.catalog, supplied) {
        (Catalog::Recorded(_), _) => Some(turn.clone()),
        (Catalog::NotRecorded, Some(tools)) => Some(Turn {
            catalog: Catalog::Recorded(tools.clone()),
            ..turn.clone()
        }),
        (Catalog::NotRecorded, None) => None,
    }
}

/// Scores every model turn of every trace in `paths`, one file per worker at a time.
pub fn rate_traces(
    paths: &[PathBuf],
    from: Option<&'static Source>,
    supplied: &Supplied,
    options: &ScanOptions,
) -> Result<Tally, RateError> {
    let supplied = std::sync::OnceLock::from(Ok(supplied.clone()));
    rate_each(paths, from, &supplied, &[], false, options).map(|(tally, _)| tally)
}

/// Which of `paths` are traces, each opened once: those are rated as [`rate_traces`] rates
/// them, and the others (`-`, what is not a regular file, a file whose first line is a
/// `{"request", "response"}` pair, a file no source claims) are handed back, in order, for
/// the log reader. With `from`, every file is read as that source's trace. `tools` are the
/// `--tools [PATTERN=]FILE` arguments, read when the first trace is found.
pub fn rate_traces_or_logs(
    paths: &[PathBuf],
    from: Option<&'static Source>,
    tools: &[String],
    options: &ScanOptions,
) -> Result<(Tally, Vec<PathBuf>), RateError> {
    let supplied = std::sync::OnceLock::new();
    rate_each(paths, from, &supplied, tools, true, options)
}

/// A file that is a trace, open at its start, or `None` when it is a log for the log reader.
/// A Parquet file (told by its magic, whatever its name) is always a trace.
fn open_trace(path: &Path, from: Option<&'static Source>) -> Result<Option<std::fs::File>, String> {
    if path.as_os_str() == "-" || (from.is_none() && !path.is_file()) {
        return Ok(None);
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(_) if from.is_none() => return Ok(None),
        Err(e) => return Err(format!("{}: cannot open: {e}", path.display())),
    };
    if from.is_some() {
        return Ok(Some(file));
    }
    let mut reader = std::io::BufReader::new(file);
    let parquet = crate::inputs::starts_parquet(&mut reader);
    if !parquet && crate::inputs::starts_with_log_line(&mut reader) {
        return Ok(None);
    }
    let mut file = reader.into_inner();
    match std::io::Seek::rewind(&mut file) {
        Ok(()) => Ok(Some(file)),
        Err(_) => Ok(None),
    }
}

/// The files of `paths` rated as traces; with `tell_logs`, those that are not traces handed
/// back (else each is a bad input). `supplied` is the `--tools` catalogs, read from `tools`
/// the first time a trace needs them.
fn rate_each(
    paths: &[PathBuf],
    from: Option<&'static Source>,
    supplied: &std::sync::OnceLock<Result<Supplied, String>>,
    tools: &[String],
    tell_logs: bool,
    options: &ScanOptions,
) -> Result<(Tally, Vec<PathBuf>), RateError> {
    let failure: std::sync::Mutex<Option<RateError>> = std::sync::Mutex::new(None);
    let logs: std::sync::Mutex<Vec<(usize, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let fail = |e: RateError| {
        if let Ok(mut slot) = failure.lock() {
            slot.get_or_insert(e);
        }
    };
    let log = |index: usize, path: PathBuf| {
        if let Ok(mut logs) = logs.lock() {
            logs.push((index, path));
        }
    };
    let mut files = paths.iter().enumerate();
    let tally = parallel_pull(
        options,
        None,
        move |stop| {
            Ok(files
                .next()
                .filter(|_| !stop.load(Ordering::Relaxed))
                .map(|(i, path)| (i, path.clone())))
        },
        |tally, (index, path): (usize, PathBuf)| {
            let file = if tell_logs {
                match open_trace(&path, from) {
                    Ok(Some(file)) => Ok(file),
                    Ok(None) => return log(index, path),
                    Err(e) => return fail(RateError::Config(e)),
                }
            } else {
                std::fs::File::open(&path)
                    .map_err(|e| format!("{}: cannot open: {e}", path.display()))
            };
            let file = match file {
                Ok(file) => file,
                Err(e) => return fail(RateError::Config(e)),
            };
            // Each group of the file (a trace) is scored as soon as it is read.
            let mut order = 0u64;
            let mut refused = None;
            let before = tally.traces.mark();
            let read = toolcall_traces::read_file_each(file, &path, from, &mut |found| {
                let supplied =
                    supplied.get_or_init(|| Supplied::parse(tools).map_err(|e| e.to_string()));
                match supplied {
                    Ok(supplied) => add_found(tally, index, &path, &found, supplied, &mut order),
                    Err(e) => {
                        refused.get_or_insert_with(|| e.clone());
                    }
                }
            });
            if let Some(e) = refused {
                return fail(RateError::Config(e));
            }
            match read {
                Ok(source) => tally.traces.read_by(source.name, before),
                // A Parquet file is never read as a log: no source claiming it is its error.
                Err(toolcall_traces::TraceError::NotATrace { .. })
                    if from.is_none() && tell_logs && !toolcall_traces::is_parquet(&path) =>
                {
                    log(index, path);
                }
                Err(toolcall_traces::TraceError::NotATrace { .. }) if from.is_none() => {
                    let shown = escape_path(&path).to_string();
                    let e = toolcall_traces::TraceError::NotATrace { path: shown };
                    tally.bad_input(origin(index, &path, order, None), e.to_string());
                }
                Err(e) => fail(RateError::Trace(e)),
            }
        },
    )?;
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut logs = logs.into_inner().unwrap_or_default();
    logs.sort();
    Ok((tally, logs.into_iter().map(|(_, path)| path).collect()))
}

fn origin(index: usize, path: &Path, order: u64, at: Option<&str>) -> Origin {
    Origin {
        order: (index, order),
        shown: at.map_or_else(|| path.display().to_string(), str::to_owned),
        file: Some(path.display().to_string()),
        line: None,
    }
}

/// Adds what one file (or one group of its records) found to `tally`; `order` is how many
/// entries of the file were added before, and counts these.
pub fn add_found(
    tally: &mut Tally,
    index: usize,
    path: &Path,
    found: &toolcall_traces::Found,
    supplied: &Supplied,
    order: &mut u64,
) {
    for bad in &found.bad {
        tally.bad_input(
            origin(index, path, *order, Some(&bad.at)),
            format!("{}: {}", bad.at, bad.why),
        );
        *order += 1;
    }
    for note in &found.notes {
        if tally.traces.notes.len() < crate::tally::LISTED_NOT_JUDGED {
            tally.traces.notes.push(crate::tally::TraceNote {
                at: note.at.clone(),
                note: note.why.clone(),
                order: (index, *order),
            });
        }
    }
    tally.traces.folded_calls += found.folded as u64;
    tally.traces.split_traces += found.split as u64;
    for turn in &found.turns {
        let order = {
            *order += 1;
            *order - 1
        };
        // The turn is scored as the source read it: the core's transcript and response.
        let Some(case) = turn.case(supplied.for_turn(turn)) else {
            let names: Vec<String> = turn.calls().iter().map(|c| c.name.clone()).collect();
            tally.traces.not_judged(&names, &turn.at, (index, order));
            continue;
        };
        if Catalog::Recorded(case.catalog.clone()).is_names_only() {
            tally.traces.names_only_turns += 1;
        }
        tally.add(
            &case,
            &turn.response,
            &origin(index, path, order, Some(&turn.at)),
        );
    }
}

/// How `promote` runs.
#[derive(Clone, Debug, Default)]
pub struct PromoteOptions {
    /// The folder holding `cases/` and `recorded/`.
    pub out: PathBuf,
    /// The source, when it should not be told from the content.
    pub from: Option<&'static Source>,
    /// Catalogs for turns whose trace recorded none (`[PATTERN=]FILE`, see [`Supplied`]).
    pub tools: Vec<String>,
    /// The agent directory under `recorded/`.
    pub agent: String,
    /// The group under `cases/`.
    pub prefix: String,
    /// Overwrite a case or recording that exists.
    pub force: bool,
}

/// What `promote` wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Promoted {
    /// The case ids written (`<prefix>/<turn id>`), in the trace's order.
    pub cases: Vec<String>,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// Turns one model turn (by its id) or one trace (by its id: every turn of it that made calls)
/// into cases and their recordings. A truncated selection is refused before anything is written:
/// a turn without its response, a transcript call without its result, a turn whose trace
/// recorded no catalog (unless `tools` gives one).
pub fn promote(path: &Path, id: &str, options: &PromoteOptions) -> Result<Promoted, RateError> {
    let refuse = |why: String| RateError::Import {
        path: path.to_path_buf(),
        why,
    };
    // Each part of an output path from the caller names one folder under `out`: an empty
    // prefix (a case id `/…`, which joins as an absolute path) or `..` would write elsewhere.
    crate::names::check_name(None, "promote".into(), "agent", &options.agent)?;
    for part in options.prefix.split('/') {
        crate::names::check_name(None, "promote".into(), "prefix", part)?;
    }
    let Some(trace) = read_trace(path, options.from)? else {
        let e = toolcall_traces::TraceError::NotATrace {
            path: path.display().to_string(),
        };
        return Err(RateError::Trace(e));
    };
    let supplied = Supplied::parse(&options.tools)?;
    let turns = &trace.found.turns;
    let by_turn: Vec<&Turn> = turns.iter().filter(|t| t.id == id).collect();
    let selected: Vec<&Turn> = if by_turn.is_empty() {
        turns
            .iter()
            .filter(|t| t.trace.as_deref() == Some(id) && !t.calls().is_empty())
            .collect()
    } else {
        by_turn
    };
    if selected.is_empty() {
        let mut ids: Vec<String> = turns
            .iter()
            .filter(|t| !t.calls().is_empty())
            .map(|t| t.id.clone())
            .collect();
        let more = ids.len().saturating_sub(8);
        ids.truncate(8);
        return Err(refuse(format!(
            "no turn or trace with the id `{}` (turns with calls: {}{})",
            toolcall_score::escape(id),
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            },
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    let mut planned = Vec::new();
    // Every path planned and checked before the first is written, by import's own plan: one id
    // twice (in two traces), names one file to a file system or a reader (`Abc` and `abc`, `x`
    // and `x `), a name too long, something in the way, a file (or link) already there.
    let mut plan = crate::names::Planned::default();
    for turn in &selected {
        if turn.calls().is_empty() && turn.response.text.is_empty() {
            return Err(refuse(format!(
                "{}: the trace holds this turn's request but not its response: nothing to promote",
                turn.at
            )));
        }
        if let Some(unanswered) = unanswered(turn) {
            return Err(refuse(format!(
                "{}: the conversation before this turn has a call to `{}` without its result in \
                 the trace; the case would fail on the transcript, not on the model's answer",
                turn.at,
                toolcall_score::escape(&unanswered)
            )));
        }
        let Some(judged) = judged(turn, supplied.for_turn(turn)) else {
            return Err(refuse(format!(
                "{}: the trace recorded no catalog for this turn, so there is nothing to judge \
                 its calls against: pass --tools FILE (a tools array)",
                turn.at
            )));
        };
        let case_id = format!(
            "{}/{}",
            options.prefix,
            crate::names::id_component(&turn.id)
        );
        let key = crate::names::id_key(&case_id);
        plan.add(
            &options.out,
            &options.agent,
            &case_id,
            &key,
            turn.at.clone(),
        )?;
        let [case_path, response_path] =
            crate::names::outputs(&options.out, &options.agent, &case_id);
        planned.push((
            case_id,
            [
                (case_path, judged.chat_request()),
                (response_path, judged.chat_response()),
            ],
        ));
    }
    plan.check_existing(options.force)?;
    let mut promoted = Promoted::default();
    let mut batch = toolcall_fs::Batch::default();
    for (case_id, files) in planned {
        for (path, value) in files {
            let mut bytes =
                serde_json::to_vec_pretty(&value).map_err(|e| RateError::Config(e.to_string()))?;
            bytes.push(b'\n');
            crate::names::write_in(&mut batch, &path, &bytes)?;
            promoted.files.push(path);
        }
        promoted.cases.push(case_id);
    }
    batch.finish().map_err(|source| RateError::Write {
        path: options.out.clone(),
        source,
    })?;
    Ok(promoted)
}

/// The name of a call in the conversation before `turn` that no later tool result answers.
fn unanswered(turn: &Turn) -> Option<String> {
    let messages = &turn.transcript.messages;
    for (i, message) in messages.iter().enumerate() {
        for call in &message.calls {
            let answered = messages[i + 1..]
                .iter()
                .flat_map(|m| &m.results)
                .any(|r| call.id.is_none() || r.call_id == call.id);
            if !answered {
                return Some(call.name.clone());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use super::*;
    use crate::ScanOptions;

    fn one_thread() -> ScanOptions {
        ScanOptions {
            threads: 1,
            ..ScanOptions::default()
        }
    }

    /// Rates every agent's recordings under `root` (what `import` or `promote` wrote).
    fn rate_written(root: &Path) -> (u64, u64) {
        let (mut calls, mut unknown) = (0, 0);
        let Ok(agents) = std::fs::read_dir(root.join("recorded")) else {
            return (0, 0);
        };
        for agent in agents {
            let scan = crate::rate_tree(&root.join("cases"), &agent.unwrap().path(), &one_thread())
                .unwrap();
            calls += scan.tally.calls();
            unknown += scan.tally.unknown();
        }
        (calls, unknown)
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("atp-rate-traces-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Every real trace fixture of `toolcall-traces` through the three commands: rated straight
    /// from its file, imported and the written tree rated, and every judged turn with calls
    /// promoted and rated. Each way counts the calls and unknown names its ground truth
    /// (`expected.json`, written from reading the files) says.
    #[test]
    fn every_fixture_rates_imports_and_promotes_to_its_ground_truth() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolcall-traces/tests/fixtures");
        let (mut checked, mut imported_calls, mut all_promoted) = (0, 0, 0);
        for source in toolcall_traces::SOURCES {
            let dir = root.join(source.name);
            let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
            let expected: std::collections::BTreeMap<String, Value> =
                serde_json::from_str(&text).unwrap();
            for (n, (file, want)) in expected.iter().enumerate() {
                let path = dir.join(file);
                let shown = format!("{}/{file}", source.name);
                let want_calls = want["calls"].as_array().map_or(0, Vec::len) as u64;
                let want_unknown = want["unknown"].as_u64().unwrap();

                let tally = rate_traces(
                    std::slice::from_ref(&path),
                    None,
                    &Supplied::default(),
                    &one_thread(),
                )
                .unwrap_or_else(|e| panic!("{shown}: {e}"));
                assert_eq!(
                    tally.calls() + tally.traces.not_judged_calls,
                    want_calls,
                    "{shown}: calls judged and not"
                );
                assert_eq!(tally.unknown(), want_unknown, "{shown}: unknown");
                assert_eq!(
                    tally.traces.folded_calls,
                    want["folded"].as_u64().unwrap(),
                    "{shown}: folded"
                );

                let out = scratch(&format!("import-{}-{n}", source.name));
                let imported = crate::import(
                    &path,
                    &crate::ImportOptions {
                        out: out.clone(),
                        ..crate::ImportOptions::default()
                    },
                );
                match imported {
                    Ok(summary) => {
                        imported_calls += summary.calls;
                        assert_eq!(summary.calls as u64, tally.calls(), "{shown}: imported");
                        assert_eq!(
                            rate_written(&out),
                            (tally.calls(), tally.unknown()),
                            "{shown}: the imported tree rated"
                        );
                    }
                    // A trace with nothing to judge imports nothing, and says so.
                    Err(e) => assert_eq!(tally.calls(), 0, "{shown}: import failed: {e}"),
                }

                let (_, found) = toolcall_traces::read_path(&path, None).unwrap();
                let promoted_root = scratch(&format!("promote-{}-{n}", source.name));
                let mut promoted_calls = 0;
                for (i, turn) in found.turns.iter().enumerate() {
                    let once = found.turns.iter().filter(|t| t.id == turn.id).count() == 1;
                    if turn.calls().is_empty() || !turn.catalog.is_recorded() || !once {
                        continue;
                    }
                    let options = PromoteOptions {
                        out: promoted_root.clone(),
                        agent: "promoted".into(),
                        prefix: format!("t{i}"),
                        ..PromoteOptions::default()
                    };
                    match promote(&path, &turn.id, &options) {
                        Ok(done) => {
                            assert_eq!(done.cases.len(), 1, "{shown}: {}", turn.id);
                            promoted_calls += turn.calls().len() as u64;
                        }
                        Err(e) => assert!(
                            e.to_string().contains("without its result"),
                            "{shown}: {} refused: {e}",
                            turn.id
                        ),
                    }
                }
                let (calls, unknown) = rate_written(&promoted_root);
                assert_eq!(calls, promoted_calls, "{shown}: promoted and rated");
                assert!(unknown <= want_unknown, "{shown}: promoted unknown");
                all_promoted += promoted_calls;
                checked += 1;
            }
        }
        assert!(checked >= 50, "{checked} fixtures");
        // Not a vacuous walk: most judged calls go through import and promote.
        assert!(
            imported_calls >= 50 && all_promoted >= 50,
            "{imported_calls} calls imported, {all_promoted} promoted"
        );
    }

    /// Span ids in base64, as OTLP's protobuf JSON mapping writes bytes (`/ECvKZUCzd4=`): the
    /// id is data, so import and promote name the files by its safe form and refuse nothing;
    /// `promote --id` still takes the id as the trace wrote it.
    #[test]
    fn base64_span_ids_name_safe_files_and_refuse_nothing() {
        let span = |id: &str, call: &str| {
            serde_json::json!({"traceId": "Q2XB/fAqmpI5d1vBq3Yg4A==", "spanId": id,
                "name": "chat gpt-4o", "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.tool.definitions", "value": {"stringValue":
                    "[{\"type\": \"function\", \"name\": \"get_weather\"}]"}},
                {"key": "gen_ai.output.messages", "value": {"stringValue": format!(
                    "[{{\"role\": \"assistant\", \"parts\": [{{\"type\": \"tool_call\",                      \"id\": \"{call}\", \"name\": \"get_weather\", \"arguments\": {{}}}}]}}]")}}]})
        };
        let body = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            span("/ECvKZUCzd4=", "c1"), span("..", "c2"), span("a/b", "c3"), span("a%2Fb", "c4")]}]}]});
        let dir = scratch("base64-ids");
        let path = dir.join("trace.json");
        std::fs::write(&path, body.to_string()).unwrap();
        let out = dir.join("imported");
        let summary = crate::import(
            &path,
            &crate::ImportOptions {
                out: out.clone(),
                ..crate::ImportOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("refused: {e}"));
        assert_eq!(summary.calls, 4);
        assert_eq!(rate_written(&out), (4, 0));
        let promoted = scratch("base64-ids-promoted");
        let done = promote(
            &path,
            "/ECvKZUCzd4=",
            &PromoteOptions {
                out: promoted.clone(),
                agent: "promoted".into(),
                prefix: "incidents".into(),
                ..PromoteOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("refused: {e}"));
        assert_eq!(done.cases.len(), 1);
        assert_eq!(done.cases, ["incidents/%2FECvKZUCzd4="]);
        assert_eq!(rate_written(&promoted), (1, 0));
        // The library refuses what the CLI refuses: an empty prefix made the case id `/…`, a
        // path that joins as absolute (a file was written at `/`), and `..` leaves `out`.
        let outside = scratch("base64-ids-outside");
        for (agent, prefix) in [
            ("promoted", ""),
            ("promoted", "a//b"),
            ("promoted", ".."),
            ("", "x"),
        ] {
            let refused = promote(
                &path,
                "/ECvKZUCzd4=",
                &PromoteOptions {
                    out: outside.join("out"),
                    agent: agent.into(),
                    prefix: prefix.into(),
                    ..PromoteOptions::default()
                },
            );
            assert!(
                matches!(refused, Err(RateError::UnsafeName { .. })),
                "{agent:?} {prefix:?}: {refused:?}"
            );
        }
        assert!(!outside.join("out").exists(), "nothing written");
    }

    /// A real Strands Agents trace as LangWatch received it (base64 ids, span `aLJ/OoH/T68=`):
    /// imported with a catalog, its turn is written under the id's safe name.
    #[test]
    fn a_real_trace_with_base64_ids_imports_and_promotes() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../toolcall-traces/tests/fixtures/otel-genai/langwatch-strands-agents-v1_14.otlp.json",
        );
        let dir = scratch("strands-base64");
        let tools = dir.join("tools.json");
        std::fs::write(&tools, r#"[{"name": "get_user_location"}]"#).unwrap();
        let out = dir.join("imported");
        let summary = crate::import(
            &path,
            &crate::ImportOptions {
                out: out.clone(),
                tools: Some(tools.clone()),
                ..crate::ImportOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("refused: {e}"));
        assert_eq!((summary.cases, summary.calls, summary.folded), (1, 1, 2));
        let written: Vec<String> =
            std::fs::read_dir(out.join("cases/langwatch-strands-agents-v1_14.otlp"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
        assert_eq!(written, ["aLJ%2FOoH%2FT68=.json"]);
        assert_eq!(rate_written(&out), (1, 0));
        let promoted = scratch("strands-base64-promoted");
        let done = promote(
            &path,
            "QVLR+yxI/4fXWruWRwsT0w==",
            &PromoteOptions {
                out: promoted.clone(),
                agent: "promoted".into(),
                prefix: "incidents".into(),
                tools: vec![tools.display().to_string()],
                ..PromoteOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("refused: {e}"));
        assert_eq!(done.cases, ["incidents/aLJ%2FOoH%2FT68="]);
        assert_eq!(rate_written(&promoted), (1, 0));
    }

    #[test]
    fn an_id_names_one_safe_component_and_two_ids_never_one() {
        use crate::names::{id_component, safe_component};
        let ids = [
            "/ECvKZUCzd4=",
            "a/b",
            "a%2Fb",
            "a\\b",
            "..",
            ".",
            ".hidden",
            "x\u{1b}[31m",
            "plain-id",
            "%",
        ];
        let names: Vec<String> = ids.iter().map(|id| id_component(id)).collect();
        for (id, name) in ids.iter().zip(&names) {
            assert_eq!(safe_component(name), None, "{id:?} -> {name:?}");
        }
        assert_eq!(names[0], "%2FECvKZUCzd4=");
        assert_eq!(names[8], "plain-id");
        let distinct: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
    }

    #[test]
    fn a_pattern_matches_with_stars_anywhere() {
        assert!(glob("chat*", "chat gpt-4o"));
        assert!(glob("*gpt-4o*", "chat gpt-4o-mini"));
        assert!(glob("a*c*e", "abcde"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(!glob("*-mini", "gpt-4o"));
        assert!(glob("*", ""));
    }
}
