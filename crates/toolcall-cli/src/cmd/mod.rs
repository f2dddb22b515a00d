//! The subcommands, one module each.

pub mod check;
pub mod lint;
pub mod score;
