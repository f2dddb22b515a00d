//! The subcommands, one module each.

pub mod check;
pub mod import;
pub mod lint;
pub mod replay;
pub mod rate;
pub mod score;
