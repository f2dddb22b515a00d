//! The subcommands, one module each.

pub mod check;
pub mod import;
pub mod lint;
pub mod rate;
pub mod replay;
pub mod schema;
pub mod score;
