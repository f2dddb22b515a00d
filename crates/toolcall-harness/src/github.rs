//! GitHub Actions workflow commands: with `GITHUB_ACTIONS=true`, each failure is also printed as
//! an `::error file=…,line=…::…` line, which GitHub shows on the pull request at that file.
//!
//! This is the one annotation writer: the harness's trials, `toolcall check`, `score`, `lint`
//! and `rate` all print through [`annotation`], so they escape alike. It lives in the harness
//! because the harness is its first user and the CLI depends on it; the rate crate prints no
//! annotations itself (its report carries the file and line apart, the CLI writes the line).

use std::path::{Path, PathBuf};

use toolcall_score::{escape, is_invisible};

/// An `::error` annotation. `file` is a path alone (its line goes in `line`, never folded into
/// the file name, or GitHub cannot place it); an empty `file` leaves the property out.
///
/// Two escapings, in order. First the project's rule for terminals: a control or invisible
/// character anywhere is written as `escape` writes it (`\u{1b}`), except the line breaks of
/// the message, which GitHub shows as line breaks. Callers escape model text in the message
/// already; this catches what slips through (a directory name in a title) without touching
/// what is escaped, so nothing is escaped twice. Then the workflow-command syntax: `%`, CR and
/// LF everywhere, and also `:` and `,` in properties.
pub fn annotation(file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    command("error", file, line, title, message)
}

/// A `::warning` annotation, for what is worth saying and fails nothing; otherwise as
/// [`annotation`].
pub fn warning(file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    command("warning", file, line, title, message)
}

fn command(level: &str, file: &str, line: Option<usize>, title: &str, message: &str) -> String {
    fn visible(s: &str, keep_lines: bool) -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            if is_invisible(c) && !(keep_lines && matches!(c, '\n' | '\r')) {
                out.push_str(&escape(c.encode_utf8(&mut [0; 4])).to_string());
            } else {
                out.push(c);
            }
        }
        out
    }
    fn data(s: &str) -> String {
        visible(s, true)
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    }
    fn property(s: &str) -> String {
        data(&visible(s, false))
            .replace(':', "%3A")
            .replace(',', "%2C")
    }
    let file = if file.is_empty() {
        String::new()
    } else {
        format!("file={},", property(file))
    };
    let line = line.map(|l| format!("line={l},")).unwrap_or_default();
    format!(
        "::{level} {file}{line}title={}::{}",
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
        assert_eq!(annotation("", None, "t", "m"), "::error title=t::m");
    }

    #[test]
    fn no_control_character_is_left_raw() {
        assert_eq!(
            annotation(
                "recorded/a\u{1b}[2J/x.json",
                Some(1),
                "a\u{1b}]0;t\u{7}\nb::c",
                "`n\\u{1b}` and \u{202e}raw\nnext"
            ),
            "::error file=recorded/a\\u{1b}[2J/x.json,line=1,title=a\\u{1b}]0;t\\u{7}\\nb%3A%3Ac::`n\\u{1b}` and \\u{202e}raw%0Anext"
        );
    }
}
