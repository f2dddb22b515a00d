//! GitHub Actions workflow commands: with `GITHUB_ACTIONS=true`, each failure is also printed as
//! an `::error file=…,line=…::…` line, which GitHub shows on the pull request at that file.

use std::path::{Path, PathBuf};

/// An `::error` annotation. Property and message values are escaped as the workflow-command
/// syntax requires: `%`, CR and LF everywhere, and also `:` and `,` in properties.
pub fn annotation(file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    fn data(s: &str) -> String {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn property(s: &str) -> String {
        data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let line = line.map(|l| format!(",line={l}")).unwrap_or_default();
    format!(
        "::error file={}{line},title={}::{}",
        property(file),
        property(title),
        data(message)
    )
}

/// `path` as GitHub wants it in an annotation: relative to the repository checkout
/// (`GITHUB_WORKSPACE`, else the working directory), with `/` separators.
pub fn repo_relative(path: &Path) -> String {
    let base = std::env::var_os("GITHUB_WORKSPACE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let relative = base
        .and_then(|b| b.canonicalize().ok())
        .and_then(|b| absolute.strip_prefix(b).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::annotation;

    #[test]
    fn escapes_per_the_workflow_command_rules() {
        assert_eq!(
            annotation(
                "cases/a,b:c.json",
                Some(3),
                "agent::case",
                "100% bad\nnext\r"
            ),
            "::error file=cases/a%2Cb%3Ac.json,line=3,title=agent%3A%3Acase::100%25 bad%0Anext%0D"
        );
        assert_eq!(
            annotation("x.json", None, "t", "m"),
            "::error file=x.json,title=t::m"
        );
    }
}
