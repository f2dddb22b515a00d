//! What a newcomer's first builds cost: each built from nothing, in CPU-seconds.
//!
//! Rows (full runs only: each takes minutes, so `--quick` prints them as not measured):
//! - the README's main job, `cargo run -p toolcall-cli -- check`, from a fresh clone's state (target:
//!   at most 5 minutes wall on an idle machine of two cores, which is ≤ 540 CPU-seconds at the
//!   parallelism the build reaches);
//! - the test command's compile: `cargo test --workspace --no-run`, what `scripts/test`'s first
//!   tier builds before running anything (a reference: the tiers after it rebuild a few crates
//!   with their own features);
//! - `toolcall-score` as a dev-dependency of a throwaway crate, without and with its `schema`
//!   feature: the crates in its `cargo tree`, and `cargo build --tests`.
//!
//! Each build runs in a target directory of its own under this bench's `CARGO_TARGET_TMPDIR`,
//! removed before and after, with `--offline` (the registry sources must already be downloaded:
//! nothing is fetched, so the figure is compile time alone). The figure is CPU time, user + sys
//! of cargo and everything it ran, from `/usr/bin/time`: on a machine shared with other builds,
//! wall time says more about the others than about us. Wall time and the load average are
//! printed beside it.
//!
//! `cargo bench -p toolcall-bench --bench cold_build` (`-- --only main-job` for one row).

use std::path::Path;
use std::process::{Command, Stdio};

use toolcall_bench::{load_average, quick, workspace_root, Row};

/// The main job's target: 5 minutes wall on two idle cores, with the parallelism a cold cargo
/// build of this tree reaches (about 1.8 of 2 cores busy on average).
const MAIN_JOB_CPU_SECONDS: f64 = 540.0;
/// The core as a dev-dependency: 15 s wall on two idle cores.
const CORE_CPU_SECONDS: f64 = 30.0;
const CORE_CRATES: usize = 15;

/// What one cold build cost.
struct Cost {
    wall: f64,
    cpu: f64,
    /// The one-minute load average when it started.
    load: f64,
}

/// The cargo that runs this bench (`CARGO`), or `cargo` on the PATH.
fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// `command` without the target directory the bench itself was built with.
fn own_target<'a>(command: &'a mut Command, target: Option<&Path>) -> &'a mut Command {
    command
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    if let Some(target) = target {
        command.env("CARGO_TARGET_DIR", target);
    }
    command
}

/// Runs `cargo ARGS` in `dir` with a fresh target directory `target` under `/usr/bin/time`.
fn cold(dir: &Path, target: &Path, args: &[&str]) -> Cost {
    let _ = std::fs::remove_dir_all(target);
    std::fs::create_dir_all(target).expect("the target dir is writable");
    let times = target.with_extension("time");
    let log = target.with_extension("log");
    let load = load_average();
    let status = own_target(&mut Command::new("/usr/bin/time"), Some(target))
        .arg("-f")
        .arg("%e %U %S")
        .arg("-o")
        .arg(&times)
        .arg(cargo_program())
        .args(&args[..1])
        .args(["--offline", "--quiet"])
        .args(&args[1..])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("the log file"))
        .status()
        .expect("/usr/bin/time runs (Debian package `time`)");
    let _ = std::fs::remove_dir_all(target);
    assert!(
        status.success(),
        "`cargo {}` in {} failed: {}",
        args.join(" "),
        dir.display(),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let times = std::fs::read_to_string(&times).expect("/usr/bin/time's output");
    let figures: Vec<f64> = times
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let [wall, user, sys] = figures[..] else {
        panic!("no `wall user sys` in /usr/bin/time's output {times:?}")
    };
    Cost {
        wall,
        cpu: user + sys,
        load,
    }
}

/// The distinct packages `cargo tree ARGS` run in `dir` lists, less `skip`.
fn crates(dir: &Path, args: &[&str], skip: &str) -> Vec<String> {
    let out = own_target(&mut Command::new(cargo_program()), None)
        .arg("tree")
        .args(args)
        .args(["--offline", "--prefix", "none", "--format", "{p}"])
        .current_dir(dir)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(" (").next())
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.split(' ').next() != Some(skip))
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A throwaway crate with `toolcall-score` (with `features`) as its one dev-dependency, as
/// README's "Install" tells a user to add it; the workspace's lock file keeps the versions.
fn user_crate(dir: &Path, features: &[&str]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src")).expect("the target dir is writable");
    let core = workspace_root().join("crates/toolcall-score");
    let features = features
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"user-crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dev-dependencies]\ntoolcall-score = {{ path = {:?}, features = [{features}] }}\n\n[workspace]\n",
            core.display().to_string()
        ),
    )
    .expect("Cargo.toml");
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").expect("main.rs");
    std::fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("Cargo.lock");
}

fn detail(cost: &Cost, crates: usize, what: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    format!(
        "{:.0} s wall ({:.0} s if the {cores} cores were idle and fully used), {crates} crates; {what}; load {:.1} at start",
        cost.wall,
        cost.cpu / cores as f64,
        cost.load
    )
}

fn main() {
    let only = std::env::args().skip_while(|a| a != "--only").nth(1);
    let wanted = |row: &str| only.as_deref().is_none_or(|o| o == row);
    let root = workspace_root();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cold-build");
    let quick = quick();
    let not_measured = |name: &str, target: &str| {
        Row {
            name,
            measured: "not measured".into(),
            target,
            ok: None,
            detail: "full run only (bench/run without --quick): it takes minutes".into(),
        }
        .print();
    };

    let name = "build: main job, cold (cargo run -p toolcall-cli -- check), CPU";
    let target = "<= 540 CPU s (5 min wall, 2 idle cores)";
    if wanted("main-job") {
        if quick {
            not_measured(name, target);
        } else {
            let cost = cold(
                &root,
                &scratch.join("main-job"),
                &["run", "-p", "toolcall-cli", "--", "check"],
            );
            let count = crates(&root, &["-p", "toolcall-cli", "-e", "normal,build"], "");
            Row {
                name,
                measured: format!("{:.0} CPU s", cost.cpu),
                target,
                ok: Some(cost.cpu <= MAIN_JOB_CPU_SECONDS),
                detail: detail(&cost, count.len(), "the dev profile, every default feature"),
            }
            .print();
        }
    }

    let name = "build: test command's compile, cold (cargo test --workspace --no-run), CPU";
    if wanted("test-command") {
        if quick {
            not_measured(name, "no target");
        } else {
            let cost = cold(
                &root,
                &scratch.join("test-command"),
                &["test", "--workspace", "--no-run"],
            );
            let count = crates(&root, &["--workspace", "-e", "normal,build,dev"], "");
            Row {
                name,
                measured: format!("{:.0} CPU s", cost.cpu),
                target: "no target",
                ok: None,
                detail: detail(&cost, count.len(), "every test binary of the default tier"),
            }
            .print();
        }
    }

    for (row, features, target) in [
        ("core", &[][..], Some((CORE_CRATES, CORE_CPU_SECONDS))),
        ("core-schema", &["schema"][..], None),
    ] {
        if !wanted(row) {
            continue;
        }
        let dir = scratch.join(format!("{row}-user"));
        user_crate(&dir, features);
        let count = crates(&dir, &["-e", "normal,build,dev"], "user-crate");
        let with = if features.is_empty() {
            String::new()
        } else {
            format!(" with `{}`", features.join(", "))
        };
        let name = format!("build: toolcall-score{with} as a dev-dependency, crates");
        let crates_target =
            target.map_or_else(|| "no target".to_owned(), |(n, _)| format!("<= {n} crates"));
        Row {
            name: &name,
            measured: format!("{} crates", count.len()),
            target: &crates_target,
            ok: target.map(|(n, _)| count.len() <= n),
            detail: count
                .iter()
                .map(|c| c.split(' ').next().unwrap_or(c))
                .collect::<Vec<_>>()
                .join(" "),
        }
        .print();
        let name = format!("build: toolcall-score{with} as a dev-dependency, cold, CPU");
        let cpu_target = target.map_or_else(
            || "no target".to_owned(),
            |(_, s)| format!("<= {s:.0} CPU s (15 s wall, 2 idle cores)"),
        );
        if quick {
            not_measured(&name, &cpu_target);
        } else {
            let cost = cold(
                &dir,
                &scratch.join(format!("{row}-target")),
                &["build", "--tests"],
            );
            Row {
                name: &name,
                measured: format!("{:.1} CPU s", cost.cpu),
                target: &cpu_target,
                ok: target.map(|(_, s)| cost.cpu <= s),
                detail: detail(&cost, count.len(), "cargo build --tests, dev profile"),
            }
            .print();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
