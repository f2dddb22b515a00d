//! The toolcall-score core, its loop guard and the harness's baseline ratchet as a Python
//! extension module (`pip install toolcall-score`, `import toolcall_score`), built with PyO3
//! and maturin as one abi3 wheel for every CPython from 3.9.
//!
//! Nothing is re-implemented for Python: [`toolcall_score::score`] gives every verdict,
//! [`toolcall_score::ToolLoop`] every loop decision, and [`toolcall_harness::results`] every
//! test the pytest plugin reports, so a finding, a loop answer or a baseline message in Python
//! is the one Rust and the `toolcall` CLI give.
//!
//! # Building
//!
//! ```text
//! pip install maturin
//! maturin develop --release -m crates/toolcall-py/Cargo.toml   # into the active venv
//! maturin build --release -m crates/toolcall-py/Cargo.toml     # a wheel under target/wheels
//! ```
//!
//! # Why the module is behind the feature `python`
//!
//! The crate is a workspace member like every other (`members = ["crates/*"]`), so it is
//! formatted, linted and documented with the rest; but its PyO3 half compiles only with the
//! feature `python`, which maturin turns on (`pyproject.toml`). Without it the crate is its
//! plain-Rust half (the [`dump`] of verdicts the parity test compares), so `cargo test
//! --workspace`, `cargo clippy --workspace --all-targets` and `cargo doc --workspace` build
//! without a Python interpreter or a libpython to link against. Excluding the crate from the
//! workspace would have done the same at the price of a second lock file and of the crate
//! escaping the workspace's lints and tidy rules.
#![warn(missing_docs)]

pub mod dump;

#[cfg(feature = "python")]
mod python;
