//! The subcommands, one module each.

pub mod baseline;
pub mod check;
#[cfg(feature = "guard")]
pub mod guard;
pub mod import;
pub mod init;
pub mod lint;
pub mod mcp;
pub mod promote;
pub mod rate;
pub mod replay;
pub mod schema;
pub mod score;

use std::path::{Path, PathBuf};

use toolcall_score::escape_path;

use crate::errors::CliError;

/// `paths` with each folder among them replaced by the `*.json` files under it, in path order
/// (hidden entries skipped, links never followed out of the folder or round a loop, as
/// [`toolcall_fs::walk`] walks; what it leaves out is a note on standard error). A folder with no
/// such file is an error naming it and `what` it should hold (`"flow"`, `"case"`). Files are
/// passed through unread, so a missing one is reported by whoever reads it.
pub(crate) fn json_files(paths: &[PathBuf], what: &str) -> Result<Vec<PathBuf>, CliError> {
    let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
    let hidden = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let walk = toolcall_fs::walk(path, &hidden, &json).map_err(|source| CliError::Read {
            path: path.clone(),
            source,
        })?;
        if walk.files.is_empty() {
            return Err(CliError::File {
                path: path.clone(),
                why: format!("holds no {what} (*.json)"),
            });
        }
        for skipped in &walk.skipped {
            eprintln!("note: {}: {}", escape_path(&skipped.path), skipped.why);
        }
        files.extend(walk.files);
    }
    Ok(files)
}
