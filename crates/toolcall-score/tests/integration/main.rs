//! The core's default-tier integration tests, one binary (as ripgrep's are): each suite is a
//! module, so a test is named `<suite>::<test>` and `cargo test` links one executable instead of
//! seven. None of them sets process-wide state (the input-size limit, environment variables, the
//! working directory), so they run in parallel in one process as they did in seven; the two that
//! write temporary files name their directories apart (`owned-parse-<pid>`,
//! `toolcall-stream-test-<pid>-<name>`).
//!
//! The suites over external data (`tau_bench`, `tau_bench_parse`, `vercel_ai`,
//! `prose_precision`) stay binaries of their own, gated by the `external-data` feature and run by
//! name from `.ci/run`.

// Shared with the external-data suites, which include it from its own path.
#[path = "../support/mod.rs"]
mod support;

mod causes;
mod lint;
mod owned_parse;
mod providers;
mod real_traffic;
mod renames;
mod scorer;
mod stream;
mod tool_loop;
