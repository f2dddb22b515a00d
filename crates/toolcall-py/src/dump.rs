//! Verdicts as one JSON dump, for the parity test: the pairs the Rust tests score (the corpus
//! of real traffic and the bundled suite), each with the verdict the Rust library gives, so the
//! Python side can score the same files through the binding and compare.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolcall_score::{score, Case, Catalog, Response};

/// One request/response pair the Rust tests score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// A name for messages: `corpus/<source>/<id>` or `suite/<agent>/<case-id>`.
    pub id: String,
    /// The request (a case file or a provider request body), or a bare tools array.
    pub request: PathBuf,
    /// Whether `request` is a bare tools array rather than a request.
    pub tools_only: bool,
    /// The response file.
    pub response: PathBuf,
}

/// The pairs under the repository at `root`: every `corpus/*/manifest.json` entry, then every
/// `recorded/<agent>/<case-id>.json` that has its `cases/<case-id>.json`. Sorted, so the dump
/// is the same on every machine.
pub fn pairs(root: &Path) -> Result<Vec<Pair>, String> {
    let mut pairs = Vec::new();
    for source in sorted_dirs(&root.join("corpus"))? {
        let manifest = source.join("manifest.json");
        if !manifest.is_file() {
            continue;
        }
        let text = toolcall_score::read_text(&manifest).map_err(|e| e.to_string())?;
        let entries: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let source_name = source.file_name().unwrap_or_default().to_string_lossy();
        for entry in entries.as_array().into_iter().flatten() {
            let field = |key: &str| entry[key].as_str().map(str::to_owned);
            let (Some(id), Some(dir), Some(response)) =
                (field("id"), field("dir"), field("response_file"))
            else {
                return Err(format!(
                    "{}: an entry without id, dir or response_file",
                    manifest.display()
                ));
            };
            let dir = source.join(dir);
            let (request, tools_only) = match (field("request_file"), field("tools_file")) {
                (Some(request), _) => (dir.join(request), false),
                (None, Some(tools)) => (dir.join(tools), true),
                (None, None) => continue,
            };
            pairs.push(Pair {
                id: format!("corpus/{source_name}/{id}"),
                request,
                tools_only,
                response: dir.join(response),
            });
        }
    }
    for agent in sorted_dirs(&root.join("recorded"))? {
        let agent_name = agent
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut recordings = Vec::new();
        json_files(&agent, &mut recordings)?;
        recordings.sort();
        for recording in recordings {
            let Ok(relative) = recording.strip_prefix(&agent) else {
                continue;
            };
            let case = root.join("cases").join(relative);
            if !case.is_file() {
                continue;
            }
            let id = relative
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            pairs.push(Pair {
                id: format!("suite/{agent_name}/{id}"),
                request: case,
                tools_only: false,
                response: recording,
            });
        }
    }
    Ok(pairs)
}

/// The dump of `pairs`: a JSON array of `{"id", "request", "tools_only", "response",
/// "verdict"}`, `verdict` as `toolcall score --json` prints it, or `{"error": message}` when a
/// file does not read.
pub fn dump(pairs: &[Pair]) -> Value {
    let entries = pairs
        .iter()
        .map(|pair| {
            json!({
                "id": pair.id,
                "request": pair.request,
                "tools_only": pair.tools_only,
                "response": pair.response,
                "verdict": verdict_of(pair),
            })
        })
        .collect();
    Value::Array(entries)
}

fn verdict_of(pair: &Pair) -> Value {
    let case = if pair.tools_only {
        Catalog::load(&pair.request).map(Case::from_catalog)
    } else {
        Case::load(&pair.request)
    };
    let verdict = case.and_then(|case| {
        let response = Response::load(&pair.response, case.format)?;
        Ok(score(&case, &response))
    });
    match verdict {
        Ok(verdict) => serde_json::to_value(&verdict).unwrap_or(Value::Null),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            json_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dump_covers_the_corpus_and_the_suite_with_failures_among_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let pairs = pairs(&root).unwrap();
        assert!(pairs.iter().filter(|p| p.id.starts_with("corpus/")).count() >= 27);
        assert!(pairs.iter().filter(|p| p.id.starts_with("suite/")).count() >= 20);
        let dump = dump(&pairs);
        let verdicts: Vec<&str> = dump
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["verdict"]["verdict"].as_str())
            .collect();
        assert_eq!(verdicts.len(), pairs.len(), "every pair reads");
        assert!(verdicts.contains(&"pass") && verdicts.contains(&"fail"));
    }
}
