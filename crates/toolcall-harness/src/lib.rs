//! A CI gate for LLM tool calls: every case under `cases/`, for every agent whose responses are
//! recorded under `recorded/<agent>/`, becomes its own test in `cargo test` and
//! `cargo nextest run`, scored by [`toolcall_score::score`]. Known failures committed under
//! `baselines/` pass as expected failures; a new failure, a *different* failure, or a known
//! failure that starts passing fails the build, so the baseline only ever ratchets tighter.
//!
//! # From the top
//!
//! In any crate, add a test target that does not use the default harness:
//!
//! ```toml
//! [[test]]
//! name = "toolcall"
//! harness = false
//!
//! [dev-dependencies]
//! toolcall-harness = "0.1"
//! ```
//!
//! and give it a five-line `tests/toolcall.rs`:
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! fn main() -> ExitCode {
//!     toolcall_harness::Harness::new().cases("cases").recorded("recorded").baselines("baselines").run()
//! }
//! ```
//!
//! Relative paths are relative to the package directory (where `cargo test` runs test
//! binaries). The tree it reads:
//!
//! ```text
//! cases/<group>/<name>.json              a case: system prompt, tools, transcript
//! recorded/<agent>/<group>/<name>.json   that agent's response, in the provider's own JSON
//! recorded/<agent>/<group>/<name>.jsonl  ... or several sampled responses, one per line
//! baselines/<agent>.json                 that agent's known failures
//! ```
//!
//! # What the tests are
//!
//! | test name | passes when |
//! |---|---|
//! | `<agent>::<case-id>` | the recording scores clean and is not in the baseline, or fails with exactly the baseline's fingerprint (shown as `[xfail]`) |
//! | `<agent>::[coverage]` | every recording of this agent has a case (a case with no recording fails as its own test, `<agent>::<case-id>`, naming the file to record) |
//! | `<agent>::[baseline]` | the baseline file reads, and every entry's case still exists |
//! | `suite::[discovery]` | at least one case and one agent were found, and every directory could be read |
//! | `dummy-agent::[snapshot]` | (with [`Harness::snapshots`]) the [`dummy`] agent's verdicts match the insta snapshot |
//!
//! A case id is the case file's path under `cases/` without `.json`, with `/` separators on every
//! OS. Names never depend on baseline status. For a `.jsonl` recording every line is scored; the
//! test fails if any line has findings, and its fingerprint is the union of the lines'.
//!
//! A failing `<agent>::<case-id>` says which of the four baseline outcomes it is:
//!
//! - not listed, failing: each offending tool with its cause and the defined names it was likely
//!   meant to be;
//! - listed, failing differently: the old and new fingerprints as a diff;
//! - listed, passing: `now passes: remove it from baselines/<agent>.json
//!   (ATP_BASELINE_WRITE=1 cargo test)`;
//! - a case or recording that cannot be read: the file, line and column. One bad file fails its
//!   own test and no other.
//!
//! # Settings
//!
//! Each setting is a [`Config`] field, a [`Harness`] method, and an environment variable; the
//! environment wins, so CI can point a compiled suite at another tree.
//!
//! | environment | method | meaning |
//! |---|---|---|
//! | `ATP_CASES` | [`Harness::cases`] | the case tree (default `cases`) |
//! | `ATP_RECORDED` | [`Harness::recorded`] | the recorded responses (default `recorded`) |
//! | `ATP_BASELINES` | [`Harness::baselines`] | the baseline directory (default `baselines`) |
//! | `ATP_SNAPSHOTS` | [`Harness::snapshots`] | where `dummy-agent.snap` lives (default: no snapshot test) |
//! | `ATP_FLOWS` | [`Harness::flows`] | a folder of MCP flows, each replayed as a test `flow::<path>` (feature `mcp`) |
//! | `ATP_MCP_CONTRACTS` | [`Harness::mcp_contracts`] | a folder of MCP catalog snapshots, each a test `catalog::<name>` against its server's live catalog (feature `mcp`) |
//! | `ATP_BASELINE_WRITE` | [`Harness::baseline_write`] | `1`: rewrite the baselines, then test; `0` or unset: don't; anything else is an error |
//! | `ATP_MAX_INPUT_BYTES` | [`toolcall_score::set_max_input_bytes`] (which wins here) | the largest file read whole (default 64 MiB; `200MB`, `1GiB`) |
//! | `GITHUB_ACTIONS=true` | [`Harness::annotations`] | also print failures as `::error file=…,line=…::` annotations |
//!
//! # Rewriting the baselines
//!
//! `ATP_BASELINE_WRITE=1 cargo test` rewrites `baselines/<agent>.json` from the current results
//! before the tests run: failing cases get their current fingerprint (an entry that stays keeps
//! its `note`), passing cases and vanished cases lose their entries, and cases that cannot be
//! judged this run keep theirs. Each file is written atomically (a temporary file in the same
//! directory, renamed over the old one), with sorted keys, two-space indentation and a trailing
//! newline; a summary of added, removed and changed entries goes to stderr. It refuses, writing
//! nothing, on a partial run — a test name filter, `--exact`, `--skip`, `--ignored`, or nextest
//! (`NEXTEST` set: one process per test) — because the tests that did not run would lose their
//! entries.
//!
//! # nextest
//!
//! `--list --format terse` prints only `name: test` lines; `--exact NAME` for an
//! `<agent>::<case-id>` finds its two files by path without walking the trees; suite-level
//! checks are tests of their own, so `--partition hash:1/2` shards them like any other test.
//! nextest does not run doctests: run `cargo test --doc` as well.
//!
//! # Run as data
//!
//! [`Report::build`] runs the same evaluation without the test runner: what `toolcall check`
//! prints.
//!
//! ```no_run
//! use toolcall_harness::{Config, Report};
//!
//! let report = Report::build(&Config::for_root(std::path::Path::new(".")));
//! for agent in report.agents() {
//!     let counts = agent.counts();
//!     println!("{}: {} pass, {} expected, {} failing", agent.name, counts.pass,
//!              counts.expected_failure, counts.failure);
//! }
//! std::process::exit(if report.is_ok() { 0 } else { 1 });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::PathBuf;
use std::process::ExitCode;

pub mod accept;
mod baseline;
mod config;
mod discover;
pub mod dummy;
mod errors;
mod evaluate;
mod flows;
pub mod github;
mod report;
mod run;
mod snapshot;

pub use baseline::{Baseline, Entry};
pub use config::{
    Config, Front, ENV_BASELINES, ENV_BASELINE_WRITE, ENV_CASES, ENV_FLOWS, ENV_MCP_CONTRACTS,
    ENV_RECORDED, ENV_SNAPSHOTS,
};
pub use errors::{BaselineError, ConfigError};
pub use evaluate::{CaseReport, Outcome, Sample};
pub use libtest_mimic::Arguments;
pub use report::{AgentReport, Counts, Report, UnknownName, EXAMPLE_MARKER};
pub use run::{results, write_baselines, Status, TestResult, DISCOVERY_TEST, SNAPSHOT_TEST};
pub use snapshot::SNAPSHOT_NAME;

/// The test harness: set the paths, then [`Harness::run`] from a `harness = false` test's
/// `main`.
#[derive(Clone, Debug, Default)]
pub struct Harness {
    config: Config,
}

impl Harness {
    /// A harness with the default [`Config`]: `cases/`, `recorded/`, `baselines/` under the
    /// working directory, no snapshot.
    pub fn new() -> Harness {
        Harness::default()
    }

    /// A harness with this configuration.
    pub fn with_config(config: Config) -> Harness {
        Harness { config }
    }

    /// `cases/`, `recorded/` and `baselines/` under `root`.
    pub fn root(mut self, root: impl Into<PathBuf>) -> Harness {
        let snapshots = self.config.snapshots.take();
        let (write, annotations) = (self.config.baseline_write, self.config.annotations);
        self.config = Config::for_root(&root.into());
        self.config.snapshots = snapshots;
        self.config.baseline_write = write;
        self.config.annotations = annotations;
        self
    }

    /// The case tree (`ATP_CASES`).
    pub fn cases(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.cases = dir.into();
        self
    }

    /// The recorded responses, one directory per agent (`ATP_RECORDED`).
    pub fn recorded(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.recorded = dir.into();
        self
    }

    /// The baseline directory (`ATP_BASELINES`).
    pub fn baselines(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.baselines = dir.into();
        self
    }

    /// Check the dummy agent's verdicts against `<dir>/dummy-agent.snap` (`ATP_SNAPSHOTS`).
    pub fn snapshots(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.snapshots = Some(dir.into());
        self
    }

    /// Replay every MCP flow below `dir` (`*.json`) as a test of its own, `flow::<path>`, judged
    /// against its `expected_failure` as `toolcall replay` judges it (`ATP_FLOWS`). Needs the
    /// feature `mcp`; without it the flows are one failing test that says so.
    pub fn flows(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.flows = Some(dir.into());
        self
    }

    /// Make every catalog snapshot below `dir` (written by `toolcall mcp snapshot`, which names
    /// the flow of its server) a test of its own, `catalog::<name>`: the server's live catalog
    /// must not have drifted from it by a breaking or security change (`ATP_MCP_CONTRACTS`).
    /// `ATP_BASELINE_WRITE=1` accepts the drift, rewriting the snapshots. Needs the feature `mcp`.
    pub fn mcp_contracts(mut self, dir: impl Into<PathBuf>) -> Harness {
        self.config.mcp_contracts = Some(dir.into());
        self
    }

    /// Rewrite the baselines before testing (`ATP_BASELINE_WRITE=1`).
    pub fn baseline_write(mut self, write: bool) -> Harness {
        self.config.baseline_write = write;
        self
    }

    /// Print GitHub Actions annotations for failures (`GITHUB_ACTIONS=true`).
    pub fn annotations(mut self, annotations: bool) -> Harness {
        self.config.annotations = annotations;
        self
    }

    /// The configuration as built so far (before the environment is applied).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Parses the test binary's arguments (libtest's: `--list`, `--exact`, a filter, ...), runs
    /// the tests and returns the exit code: 0 when everything passed, 101 when a test failed, 2
    /// when the settings are unusable or a baseline rewrite is refused.
    pub fn run(self) -> ExitCode {
        self.run_with_args(&Arguments::from_args())
    }

    /// [`Harness::run`] with arguments parsed elsewhere.
    pub fn run_with_args(self, args: &Arguments) -> ExitCode {
        run::run(self.config, args)
    }
}
