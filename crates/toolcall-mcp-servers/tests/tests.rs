//! The crate's one integration-test binary (one link instead of three): the fault-server
//! replays, each example flow under `flows/`, and `Harness::flows` run as a user's suite.
//!
//! `harness = false` with libtest-mimic, for the flows (one trial a file) and for the harness
//! test, which runs this binary again as a child suite: [`harness_flows::child`] answers that
//! before any trial is listed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Trials `"<module>::<fn>"`, one for each test function named (a function that panics fails).
/// Defined before the modules, which use it.
macro_rules! trials {
    ($module:literal, $($test:ident),* $(,)?) => {
        vec![$(libtest_mimic::Trial::test(concat!($module, "::", stringify!($test)), || {
            $test();
            Ok(())
        })),*]
    };
}

mod faults;
mod flow_steps;
mod flows;
mod harness_flows;
mod session_check;

/// `flows/` at the repository root.
fn flows_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../flows")
}

fn main() -> ExitCode {
    if let Some(code) = harness_flows::child() {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = faults::trials();
    trials.extend(flows::trials());
    trials.extend(flow_steps::trials());
    trials.extend(session_check::trials());
    trials.extend(harness_flows::trials());
    libtest_mimic::run(&args, trials).exit_code()
}
