//! The subcommands, one module each.

pub mod lint;
pub mod replay;
pub mod score;
