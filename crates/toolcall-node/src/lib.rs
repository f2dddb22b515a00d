//! The toolcall-score core and its loop guard as a Node-API addon (`npm install
//! toolcall-score`): `score`, `assertToolCallsDefined`, `ToolLoop` and the Vitest/Jest matcher
//! `toCallOnlyDefinedTools` in TypeScript's idiom, on the same Rust core as the CLI and the
//! Python package.
//!
//! The addon's boundary is JSON text both ways ([`api`]): the JavaScript half (`js/`)
//! `JSON.stringify`s what it is handed and parses what comes back, renaming keys to camelCase,
//! so nothing here depends on napi's value conversions and the plain-Rust half is testable with
//! `cargo test`.
//!
//! # Why the addon is behind the feature `node`
//!
//! As with `toolcall-py`: the crate is a workspace member, but napi compiles only with the
//! feature `node` (scripts/test-node and the release build turn it on), so the workspace's
//! `cargo test`, clippy and rustdoc need neither Node nor napi.
#![warn(missing_docs)]

pub mod api;

#[cfg(feature = "node")]
pub mod node;
