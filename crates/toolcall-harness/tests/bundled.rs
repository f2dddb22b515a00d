//! The repository's own suite: every case under `cases/` for every agent under `recorded/`,
//! against `baselines/`, plus the dummy agent's snapshot (`tests/snapshots/dummy-agent.snap`).
//! It is the embedding API used exactly as an outside crate would, pointed at the workspace
//! root. Until `cases/` holds cases, `suite::[discovery]` fails: finding zero cases is a failure.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    toolcall_harness::Harness::new()
        .root(root.canonicalize().unwrap_or(root))
        .snapshots(here.join("tests/snapshots"))
        .run()
}
