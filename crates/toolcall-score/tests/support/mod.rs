//! What the core's integration tests share: finding the data files they run over.

use std::path::{Path, PathBuf};

/// Every file under `dir`, recursively, whose name ends in one of `suffixes`, sorted.
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
