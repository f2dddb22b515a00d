//! The repository's own suite: every case under `cases/` for every agent under `recorded/`,
//! against `baselines/`, plus the dummy agent's snapshot. It is the embedding API used exactly as
//! an outside crate would, pointed at the workspace root.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    toolcall_harness::Harness::new()
        .root(&root)
        .snapshots(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots"))
        .run()
}
