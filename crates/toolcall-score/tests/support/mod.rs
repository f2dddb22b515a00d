//! What the core's integration tests share: finding the data files they run over, and reading
//! recorded streams back.

use std::path::{Path, PathBuf};

use toolcall_score::Response;

/// Every file under `dir`, recursively, whose name ends in one of `suffixes`, sorted.
#[allow(dead_code)] // Not every suite that shares this module walks fixtures.
pub fn files(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, suffixes, out);
            } else if suffixes
                .iter()
                .any(|suffix| path.to_string_lossy().ends_with(suffix))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffixes, &mut out);
    out.sort();
    out
}

/// Each call's name, id and parsed arguments.
#[allow(dead_code)] // Not every suite that shares this module reads streams.
pub fn calls(response: &Response) -> Vec<(&str, Option<&str>, Option<serde_json::Value>)> {
    response
        .calls
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.id.as_deref(),
                c.arguments.value().cloned(),
            )
        })
        .collect()
}

/// A stream one chunk per line, read from its text and as the JSON array of its lines (how an
/// SDK dumps a stream): both must give the same response, which is returned.
#[allow(dead_code)]
pub fn read_lines(text: &str) -> Response {
    let response = Response::from_json_str(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let array = format!("[{}]", lines.join(",\n"));
    let from_array = Response::from_json_str(&array, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(from_array, response, "as a JSON array");
    response
}
