//! `toolcall schema KIND`: the JSON Schema of a case, flow or baseline file, for editors.
//!
//! The text is the crate's `assets/schemas/<kind>.schema.json`, embedded when the binary is built
//! (inside the crate, so the packaged crate builds on its own). The repository's
//! `schemas/<kind>.schema.json` is the same bytes (tidy holds them equal), so what it prints is
//! the committed file byte for byte. A file names its schema with a top-level `"$schema"`, which
//! every reader accepts.

use crate::errors::{Outcome, Result};
use crate::output::write_stdout;

/// Which file's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A case file (`cases/<group>/<name>.json`): a provider request plus the case's own keys.
    Case,
    /// A flow file for `toolcall replay` (`flows/<name>.json`).
    Flow,
    /// A baseline file (`baselines/<agent>.json`): known failures by case id.
    Baseline,
}

impl Kind {
    /// The schema's text, as committed under `schemas/` (and `assets/schemas/`).
    pub fn schema(self) -> &'static str {
        match self {
            Kind::Case => include_str!("../../assets/schemas/case.schema.json"),
            Kind::Flow => include_str!("../../assets/schemas/flow.schema.json"),
            Kind::Baseline => include_str!("../../assets/schemas/baseline.schema.json"),
        }
    }
}

/// Arguments of `toolcall schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The kind of file.
    #[arg(value_enum)]
    pub kind: Kind,
}

/// Runs `toolcall schema`: prints the schema, exit 0.
pub fn run(args: &Args) -> Result {
    write_stdout(format_args!("{}", args.kind.schema()));
    Ok(Outcome::Pass)
}
