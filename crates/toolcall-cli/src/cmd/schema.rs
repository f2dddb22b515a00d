//! `toolcall schema KIND`: the JSON Schema of a case, flow or baseline file, for editors.
//!
//! The text is the committed `schemas/<kind>.schema.json`, embedded when the binary is built, so
//! what it prints is that file byte for byte (a test holds them equal). A file names its schema
//! with a top-level `"$schema"`, which every reader accepts.

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
    /// The schema's text, as committed under `schemas/`.
    pub fn schema(self) -> &'static str {
        match self {
            Kind::Case => include_str!("../../../../schemas/case.schema.json"),
            Kind::Flow => include_str!("../../../../schemas/flow.schema.json"),
            Kind::Baseline => include_str!("../../../../schemas/baseline.schema.json"),
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
