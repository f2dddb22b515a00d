//! Where the tau-bench airline data is, shared by the suites over it: `ATP_TAU_BENCH_DIR`, or
//! `../shared/external/tau-bench-airline` beside the workspace. A wrong or missing directory
//! fails the run; it never skips it.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;

const VAR: &str = "ATP_TAU_BENCH_DIR";

pub fn data_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os(VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{VAR} is set to")),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/external/tau-bench-airline"),
            format!("{VAR} is not set; the default is"),
        ),
    };
    assert!(
        dir.join("tools.json").is_file() && dir.join("trajectories.json").is_file(),
        "{source} {}, which holds no tools.json and trajectories.json: set {VAR} to the \
         tau-bench-airline data directory",
        dir.display()
    );
    dir
}

pub fn read(name: &str) -> Value {
    let path = data_dir().join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
