//! Prints the parity dump (`toolcall_py::dump`) of the repository at the given root (default:
//! this checkout): what the Rust library says of every pair the Rust tests score, for the
//! Python parity test to compare with what the binding says.
//!
//! ```text
//! cargo run -p toolcall-py --example parity_dump -- [ROOT] > dump.json
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    match toolcall_py::dump::pairs(&root) {
        Ok(pairs) => {
            println!("{}", toolcall_py::dump::dump(&pairs));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
