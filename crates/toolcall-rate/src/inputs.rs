//! What each input of a rate run is: a folder `import` wrote, a log, or a trace file.
//!
//! `toolcall rate` takes any mix of them as its positional inputs and adds their tallies up, so
//! it must tell them apart before it reads any of them; the rules live here, beside the readers
//! they choose between, rather than in the command. In order, the first that applies:
//!
//! 1. **A directory** is a tree [`import`](crate::import()) wrote: it must hold `cases/` and
//!    `recorded/`, and its cases are rated against every agent folder under `recorded/`, in
//!    path order. A directory without them is an error naming it (a folder of logs or traces is
//!    not walked: name its files).
//! 2. **With a source named** (`--from`), every other input is a trace of that source.
//! 3. **Standard input** (`-`) is a log; it is not read ahead.
//! 4. **A file that starts with Parquet's magic `PAR1`** is a trace, whatever its name: a
//!    damaged one is reported with the Parquet reader's error, never read as lines.
//! 5. **A file whose first non-blank line is a `{"request", "response"}` pair** is a log, as it
//!    was before traces were read (such a line is never taken for a span).
//! 6. **A file some trace source claims** ([`toolcall_traces::source_of`], from its first
//!    records) is a trace; a file two sources claim is a trace too, and reading it says which
//!    two. A UTF-16 file is a trace too, which its reader refuses as every input is refused
//!    (`toolcall_score::utf16_error`: save it as UTF-8).
//! 7. **Anything else** is a log, whose reader reports what it cannot read line by line (or that
//!    the path is missing).

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::RateError;

/// What one input is, by the rules of the [module](self).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Input {
    /// A folder `import` wrote: its cases against each of its recorded agents.
    Imported(ImportedTree),
    /// JSON Lines logs, one `{"request", "response"}` pair a line (or standard input).
    Log,
    /// A trace file, read by the trace source named or the one that claims it.
    Trace,
}

/// The trees of a folder `import` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTree {
    /// `DIR/cases`.
    pub cases: PathBuf,
    /// Each folder under `DIR/recorded`, in path order: one agent's recorded responses.
    pub agents: Vec<PathBuf>,
}

/// What `path` is; `source_named` when `--from` named the trace source for every input. An
/// error only for a directory that is not an imported tree, or whose `recorded/` cannot be
/// listed; a file is never read past its first records.
pub fn classify(path: &Path, source_named: bool) -> Result<Input, RateError> {
    if path.is_dir() {
        return imported_tree(path).map(Input::Imported);
    }
    if source_named || is_trace(path) {
        Ok(Input::Trace)
    } else {
        Ok(Input::Log)
    }
}

fn imported_tree(dir: &Path) -> Result<ImportedTree, RateError> {
    let (cases, recorded) = (dir.join("cases"), dir.join("recorded"));
    if !(cases.is_dir() && recorded.is_dir()) {
        return Err(RateError::NotImported {
            path: dir.to_path_buf(),
        });
    }
    let entries = std::fs::read_dir(&recorded).map_err(|source| RateError::Read {
        path: recorded.clone(),
        source,
    })?;
    let mut agents: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    agents.sort();
    Ok(ImportedTree { cases, agents })
}

/// Whether `path` is a trace some source claims, rather than a log (rules 3 to 7).
fn is_trace(path: &Path) -> bool {
    if path.as_os_str() == "-" || !path.is_file() {
        return false;
    }
    if toolcall_traces::is_parquet(path) {
        return true;
    }
    if is_log(path) {
        return false;
    }
    !matches!(
        toolcall_traces::source_of(path, None),
        Err(toolcall_traces::TraceError::NotATrace { .. })
    )
}

/// Whether the first non-blank line of `path` is a `{"request", "response"}` log line (rule 5).
fn is_log(path: &Path) -> bool {
    std::fs::File::open(path)
        .is_ok_and(|file| starts_with_log_line(&mut std::io::BufReader::new(file)))
}

/// Whether `reader`, at a file's start, gives Parquet's magic `PAR1` first (it is not consumed).
pub(crate) fn starts_parquet(reader: &mut impl BufRead) -> bool {
    reader
        .fill_buf()
        .is_ok_and(|head| head.starts_with(b"PAR1"))
}

/// Whether the first non-blank line `reader` gives is a `{"request", "response"}` log line (read
/// from a file already open, so that a trace file is opened once).
pub(crate) fn starts_with_log_line(reader: &mut impl BufRead) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch folder of its own per test, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "toolcall-rate-inputs-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn file(&self, name: &str, text: &str) -> PathBuf {
            let path = self.0.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const LOG_LINE: &str = r#"{"request": {"tools": []}, "response": {"choices": []}}"#;

    /// One OTLP JSON span with the GenAI conventions: what the `otel-genai` source claims.
    const OTLP_TRACE: &str = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "t1", "spanId": "s1", "name": "chat gpt-4.1",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}}
        ]}]}]}]}"#;

    #[test]
    fn an_imported_folder_is_its_cases_against_each_agent_in_path_order() {
        let dir = Scratch::new("imported");
        dir.file("cases/g/a.json", "{}");
        dir.file("recorded/zeta/g/a.json", "{}");
        dir.file("recorded/alpha/g/a.json", "{}");
        dir.file("recorded/README.md", "not an agent");
        let input = classify(&dir.0, false).unwrap();
        assert_eq!(
            input,
            Input::Imported(ImportedTree {
                cases: dir.0.join("cases"),
                agents: vec![dir.0.join("recorded/alpha"), dir.0.join("recorded/zeta")],
            })
        );
        // A folder is a tree even when a source is named: --from is about files.
        assert_eq!(classify(&dir.0, true).unwrap(), input);
    }

    #[test]
    fn a_folder_without_cases_and_recorded_is_an_error_naming_it() {
        let dir = Scratch::new("not-imported");
        dir.file("cases/g/a.json", "{}");
        let err = classify(&dir.0, false).unwrap_err();
        assert!(matches!(&err, RateError::NotImported { path } if *path == dir.0));
        assert_eq!(
            err.to_string(),
            format!(
                "{} is a folder without cases/ and recorded/: give log or trace files, or a \
                 folder `toolcall import --out` wrote",
                toolcall_score::escape_path(&dir.0)
            )
        );
    }

    #[test]
    fn standard_input_is_a_log_and_a_named_source_makes_it_a_trace() {
        assert_eq!(classify(Path::new("-"), false).unwrap(), Input::Log);
        assert_eq!(classify(Path::new("-"), true).unwrap(), Input::Trace);
    }

    #[test]
    fn a_file_opening_with_a_log_line_is_a_log_even_past_blank_lines() {
        let dir = Scratch::new("log");
        let log = dir.file("a.jsonl", &format!("\n  \n{LOG_LINE}\n"));
        assert_eq!(classify(&log, false).unwrap(), Input::Log);
        // --from overrides the content: the source then reports what it cannot read.
        assert_eq!(classify(&log, true).unwrap(), Input::Trace);
    }

    #[test]
    fn a_file_a_trace_source_claims_is_a_trace() {
        let dir = Scratch::new("trace");
        let trace = dir.file("spans.json", OTLP_TRACE);
        assert_eq!(classify(&trace, false).unwrap(), Input::Trace);
    }

    /// Told by its first bytes: a UTF-16 file is a trace whose reader refuses it as UTF-16, and a file starting with
    /// `PAR1` is a trace whatever its name.
    #[test]
    fn a_utf16_or_parquet_file_is_a_trace_for_its_reader_to_refuse() {
        let dir = Scratch::new("magic");
        // Two lines, without a byte order mark: before, every line was a bad log line.
        let utf16 = dir.0.join("log.jsonl");
        let text = format!("{LOG_LINE}\n{LOG_LINE}\n");
        let units: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(&utf16, units).unwrap();
        let parquet = dir.file("export.jsonl", "PAR1 and nothing a reader could use");
        for path in [utf16, parquet] {
            assert_eq!(classify(&path, false).unwrap(), Input::Trace, "{path:?}");
        }
    }

    #[test]
    fn anything_else_is_a_log_for_its_reader_to_report() {
        let dir = Scratch::new("other");
        let other = dir.file("other.json", r#"{"a": 1}"#);
        let not_json = dir.file("notes.txt", "hello\n");
        for path in [other, not_json, dir.0.join("missing.jsonl")] {
            assert_eq!(classify(&path, false).unwrap(), Input::Log, "{path:?}");
        }
    }
}
