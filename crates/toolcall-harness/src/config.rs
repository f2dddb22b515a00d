//! Where the suite lives and how a run behaves: one [`Config`] struct, filled from defaults, then
//! from the builder, then from `ATP_*` environment variables (the environment wins, so a CI job
//! can point an already-compiled suite somewhere else without touching code).

use std::env;
use std::path::{Path, PathBuf};

use crate::errors::ConfigError;

/// The settings of one harness run. Every field has one builder method on
/// [`crate::Harness`] and one environment variable; see the table in the crate docs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The case tree: every `**/*.json` below it is a case (`ATP_CASES`).
    pub cases: PathBuf,
    /// The recorded responses: `<recorded>/<agent>/<case-id>.json` (or `.jsonl`, `.sse`,
    /// `.ndjson`: see [`toolcall_score::Recording`]) (`ATP_RECORDED`).
    pub recorded: PathBuf,
    /// The baselines: `<baselines>/<agent>.json` (`ATP_BASELINES`).
    pub baselines: PathBuf,
    /// Where the dummy agent's verdict snapshot (`dummy-agent.snap`) lives; `None` runs no
    /// snapshot check (`ATP_SNAPSHOTS`).
    pub snapshots: Option<PathBuf>,
    /// A folder of MCP flows, each replayed as a test (`flow::<path>`, feature `mcp`);
    /// `None` replays none (`ATP_FLOWS`).
    pub flows: Option<PathBuf>,
    /// A folder of MCP catalog snapshots (`toolcall mcp snapshot`), each a test that its server's
    /// live catalog has not drifted (`catalog::<name>`, feature `mcp`; `ATP_MCP_CONTRACTS`).
    pub mcp_contracts: Option<PathBuf>,
    /// Rewrite the baselines from this run's results before testing (`ATP_BASELINE_WRITE=1`).
    pub baseline_write: bool,
    /// Print GitHub Actions `::error` annotations for failures (`GITHUB_ACTIONS=true`).
    pub annotations: bool,
    /// Who runs the suite: what a message tells the user to run is a command they have.
    pub front: Front,
}

/// Who runs a suite. Its messages name commands (accept a result, rewrite every baseline, point
/// at another case tree), and a repository gated by `toolcall check` may have no Cargo at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Front {
    /// A `cargo test` target built on [`crate::Harness`].
    #[default]
    CargoTest,
    /// The `toolcall check` command.
    Cli,
    /// The pytest plugin of the Python package (`crates/toolcall-py`).
    Pytest,
}

impl Front {
    /// The command that rewrites every baseline from a whole run.
    pub fn rewrite_baselines(self) -> &'static str {
        match self {
            Front::CargoTest => "ATP_BASELINE_WRITE=1 cargo test",
            Front::Cli => "toolcall check --write-baselines",
            Front::Pytest => "ATP_BASELINE_WRITE=1 pytest",
        }
    }

    /// What sets the case tree's path.
    pub fn cases_setting(self) -> &'static str {
        match self {
            Front::CargoTest => "Harness::cases or ATP_CASES",
            Front::Cli => "--cases or --root",
            Front::Pytest => "--toolcall-root, the ini key toolcall_root, or ATP_CASES",
        }
    }
}

impl Default for Config {
    /// `cases/`, `recorded/` and `baselines/` relative to the working directory (the package
    /// directory under `cargo test`), no snapshot, no writing, no annotations.
    fn default() -> Config {
        Config::for_root(Path::new(""))
    }
}

/// The environment variables the harness reads, in the order of the table in the crate docs.
pub const ENV_CASES: &str = "ATP_CASES";
/// See [`Config::recorded`].
pub const ENV_RECORDED: &str = "ATP_RECORDED";
/// See [`Config::baselines`].
pub const ENV_BASELINES: &str = "ATP_BASELINES";
/// See [`Config::snapshots`].
pub const ENV_SNAPSHOTS: &str = "ATP_SNAPSHOTS";
/// See [`Config::flows`].
pub const ENV_FLOWS: &str = "ATP_FLOWS";
/// See [`Config::mcp_contracts`].
pub const ENV_MCP_CONTRACTS: &str = "ATP_MCP_CONTRACTS";
/// See [`Config::baseline_write`].
pub const ENV_BASELINE_WRITE: &str = "ATP_BASELINE_WRITE";

impl Config {
    /// `cases/`, `recorded/` and `baselines/` under `root`.
    pub fn for_root(root: &Path) -> Config {
        Config {
            cases: root.join("cases"),
            recorded: root.join("recorded"),
            baselines: root.join("baselines"),
            snapshots: None,
            flows: None,
            mcp_contracts: None,
            baseline_write: false,
            annotations: false,
            front: Front::CargoTest,
        }
    }

    /// This config with every `ATP_*` variable that is set (and `GITHUB_ACTIONS`) applied.
    ///
    /// An `ATP_BASELINE_WRITE` other than `0` or `1` is an error naming the variable and the
    /// allowed values; so is a path variable set to an empty string.
    pub fn with_env(self) -> Result<Config, ConfigError> {
        self.with_vars(|name| env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// [`Config::with_env`] over any source of variables: what the tests use.
    pub(crate) fn with_vars(
        mut self,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let path = |name: &'static str| -> Result<Option<PathBuf>, ConfigError> {
            match var(name) {
                None => Ok(None),
                Some(v) if v.is_empty() => Err(ConfigError::EmptyPath { variable: name }),
                Some(v) => Ok(Some(PathBuf::from(v))),
            }
        };
        if let Some(p) = path(ENV_CASES)? {
            self.cases = p;
        }
        if let Some(p) = path(ENV_RECORDED)? {
            self.recorded = p;
        }
        if let Some(p) = path(ENV_BASELINES)? {
            self.baselines = p;
        }
        if let Some(p) = path(ENV_SNAPSHOTS)? {
            self.snapshots = Some(p);
        }
        if let Some(p) = path(ENV_FLOWS)? {
            self.flows = Some(p);
        }
        if let Some(p) = path(ENV_MCP_CONTRACTS)? {
            self.mcp_contracts = Some(p);
        }
        match var(ENV_BASELINE_WRITE).as_deref() {
            None => {}
            Some("0") => self.baseline_write = false,
            Some("1") => self.baseline_write = true,
            Some(other) => {
                return Err(ConfigError::InvalidValue {
                    variable: ENV_BASELINE_WRITE,
                    value: other.to_owned(),
                    allowed: "unset, `0` or `1`",
                })
            }
        }
        if var("GITHUB_ACTIONS").as_deref() == Some("true") {
            self.annotations = true;
        }
        Ok(self)
    }

    /// The baseline file of `agent`.
    pub fn baseline_file(&self, agent: &str) -> PathBuf {
        self.baselines.join(format!("{agent}.json"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn environment_overrides_the_builder() {
        let config = Config::for_root(Path::new("repo"))
            .with_vars(vars(&[
                ("ATP_CASES", "elsewhere/cases"),
                ("ATP_BASELINE_WRITE", "1"),
                ("ATP_SNAPSHOTS", "snaps"),
                ("GITHUB_ACTIONS", "true"),
            ]))
            .unwrap();
        assert_eq!(config.cases, Path::new("elsewhere/cases"));
        assert_eq!(config.recorded, Path::new("repo/recorded"));
        assert_eq!(config.snapshots.as_deref(), Some(Path::new("snaps")));
        assert!(config.baseline_write);
        assert!(config.annotations);
    }

    #[test]
    fn baseline_write_zero_turns_it_off() {
        let config = Config {
            baseline_write: true,
            ..Config::default()
        };
        let config = config
            .with_vars(vars(&[("ATP_BASELINE_WRITE", "0")]))
            .unwrap();
        assert!(!config.baseline_write);
    }

    #[test]
    fn other_values_are_an_error_naming_the_variable_and_the_allowed_values() {
        for bad in ["true", "yes", "", " 1", "2"] {
            let err = Config::default()
                .with_vars(vars(&[("ATP_BASELINE_WRITE", bad)]))
                .unwrap_err()
                .to_string();
            assert!(err.contains("ATP_BASELINE_WRITE"), "{err}");
            assert!(err.contains("unset, `0` or `1`"), "{err}");
        }
        let err = Config::default()
            .with_vars(vars(&[("ATP_CASES", "")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ATP_CASES"), "{err}");
    }
}
