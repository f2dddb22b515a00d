//! The subcommands, one module each.

pub mod baseline;
pub mod check;
pub mod import;
pub mod init;
pub mod lint;
pub mod mcp;
pub mod promote;
pub mod rate;
pub mod replay;
pub mod schema;
pub mod score;
