//! The names an import or a promotion gives the files it writes: one safe path component
//! each, and an agent's directory named from `--agent` or the model. `import` and `traces`
//! both name files; neither asks the other how.

use std::path::Path;

use toolcall_score::is_invisible;

use crate::RateError;

/// Why `name` cannot be one path component of an import's output, or `None` when it can.
///
/// A safe component is not empty; is not `.` or `..` and does not start with `.` (the harness
/// and `toolcall check` skip hidden files and directories, so such a case would never run);
/// and holds no `/`, `\`, NUL, control character or invisible format character (which would
/// split the path, leave the output tree, or hide the name on a terminal).
pub fn safe_component(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." {
        Some("it would leave its directory")
    } else if name.starts_with('.') {
        Some("it starts with `.`, and a hidden file or directory is never run by check")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.chars().any(is_invisible) {
        Some("it holds a control or invisible character")
    } else {
        None
    }
}

/// `name` as an [`RateError::UnsafeName`] when it is not a [`safe_component`].
pub(crate) fn check_name(
    path: Option<&Path>,
    whose: String,
    what: &'static str,
    name: &str,
) -> Result<(), RateError> {
    match safe_component(name) {
        None => Ok(()),
        Some(why) => Err(RateError::UnsafeName {
            path: path.map(Path::to_path_buf),
            whose,
            what,
            value: name.to_owned(),
            why,
        }),
    }
}

/// The directory under `recorded/` that `whose` (a conversation or a turn of `file`) is written
/// under: `agent` (`--agent`, checked once by the caller), else `model` with `/`, `\` and `:`
/// made `_` (`meta-llama/Llama-3` is one directory, not two), else `imported`. A model that is
/// still not a safe name after that (`..`, `.hidden`, an escape sequence) is refused, not
/// guessed.
pub(crate) fn agent_dir(
    agent: Option<&str>,
    model: Option<&str>,
    file: &Path,
    whose: &str,
) -> Result<String, RateError> {
    match (agent, model) {
        (Some(agent), _) => Ok(agent.to_owned()),
        (None, Some(model)) => {
            let agent = model.replace(['/', '\\', ':'], "_");
            check_name(
                Some(file),
                whose.to_owned(),
                "model (as an agent directory; pass --agent NAME)",
                &agent,
            )?;
            Ok(agent)
        }
        (None, None) => Ok("imported".to_owned()),
    }
}
