//! An agent's code would live here; this crate exists to show `tests/toolcall.rs`, the five
//! lines that gate its tool calls in CI with `cargo test` and `cargo nextest run`.
