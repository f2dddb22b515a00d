//! `toolcall init`: a project's first gate, scaffolded. The trees the harness reads (`cases/`,
//! `recorded/<agent>/`, `baselines/`) with one example case and its recorded response in the
//! format asked for, and — in a Cargo package — the `harness = false` test target with its
//! five-line `tests/toolcall.rs`; plus a GitHub workflow for the project's kind.
//!
//! It never overwrites: every file is created with `toolcall_fs::write_new`, which refuses a
//! path that is taken, and a file already there is reported as kept. `Cargo.toml` is the one
//! file edited, through `toml_edit` so its comments and layout stay, and only to add what is
//! missing.

use std::path::{Path, PathBuf};

use toolcall_score::{escape, escape_path, Format};

use crate::errors::{CliError, Outcome, Result};
use crate::output::outln;

/// Arguments of `toolcall init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project folder.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// The wire format of the example case and recording: the provider your agent calls.
    #[arg(long, default_value = "openai-chat", value_parser = crate::output::format_parser())]
    pub format: Format,
    /// The agent the example recording belongs to: `recorded/<AGENT>/`.
    #[arg(long, default_value = "my-agent")]
    pub agent: String,
    /// In a Cargo package, depend on this local checkout of toolcall-score instead of its git
    /// repository (for a vendored copy, or a machine without network); on a package already
    /// set up, switch its dependency to the checkout.
    #[arg(long, value_name = "CHECKOUT")]
    pub path: Option<PathBuf>,
}

/// The repository the git dependency points at.
const REPOSITORY: &str = "https://github.com/toolcall-score/toolcall-score";

/// The case id of the example.
const EXAMPLE_ID: &str = "example/get-invoice";

const TEST_FILE: &str = "\
// The toolcall gate: every case under cases/, for every agent under recorded/, is a test.
fn main() -> std::process::ExitCode {
    toolcall_harness::Harness::new().cases(\"cases\").recorded(\"recorded\").baselines(\"baselines\").run()
}
";

const NEXTEST_CONFIG: &str = "\
# cargo-nextest settings for the toolcall gate (tests/toolcall.rs).
# A known failure passes, and nextest shows it as PASS: the gate prints an `XFAIL ...` line for
# it, which this shows as the test passes and keeps in the JUnit report
# (`cargo nextest run --profile ci` writes target/nextest/ci/junit.xml).
[[profile.default.overrides]]
filter = \"binary(toolcall)\"
success-output = \"immediate\"
junit.store-success-output = true

[profile.ci.junit]
path = \"junit.xml\"
";

// The workflows are the templates of examples/workflows/, as README documents them (the crate's
// copies under assets/, so the packaged crate builds; tidy holds the two equal).
const WORKFLOW_CARGO: &str = include_str!("../../assets/workflows/toolcall-gate-cargo.yml");
const WORKFLOW_ACTION: &str = include_str!("../../assets/workflows/toolcall-gate.yml");

/// One file `init` makes, and what it is for.
struct Planned {
    path: PathBuf,
    text: String,
    what: &'static str,
}

/// Runs `toolcall init`: 0 when the scaffold is there (made now or kept), 2 on bad input or a
/// file that cannot be written.
pub fn run(args: &Args) -> Result {
    if let Some(why) = unsafe_agent_name(&args.agent) {
        return Err(CliError::usage(format!(
            "--agent `{}` {why}; it names the folder recorded/<agent>/",
            escape(&args.agent)
        )));
    }
    let dir = &args.dir;
    let manifest = dir.join("Cargo.toml");
    let in_manifest = |why: String| CliError::File {
        path: manifest.clone(),
        why,
    };
    let package = cargo_package(&manifest).map_err(in_manifest)?;
    let example = args.format.example();
    let agent_dir = format!("recorded/{}", args.agent);
    let mut planned = vec![
        Planned {
            path: dir.join(format!("cases/{EXAMPLE_ID}.json")),
            text: example.request.to_owned(),
            what: "the example case: a request your agent sends",
        },
        Planned {
            path: dir.join(format!("{agent_dir}/{EXAMPLE_ID}.json")),
            text: example.response.to_owned(),
            what: "what the model answered, an example: record your own",
        },
        Planned {
            path: dir.join(format!("{agent_dir}/{}", toolcall_harness::EXAMPLE_MARKER)),
            text: format!(
                "# {agent}: example responses\n\n\
                 `toolcall init` wrote these responses by hand, to show the gate working; no model \
                 produced them.\nReplace them with what your agent's model really answered, then \
                 delete this file:\nwhile it is here, `toolcall check` lists `{agent}` as an example, \
                 not a recorded agent.\n",
                agent = args.agent
            ),
            what: "marks the agent's responses as examples",
        },
        Planned {
            path: dir.join("baselines/README.md"),
            text: "# Known failures\n\n\
                   One file per agent, `<agent>.json`: each case it is known to fail, with the \
                   fingerprint of how it fails.\nWritten by `toolcall baseline accept AGENT::CASE-ID` \
                   (or `toolcall baseline review`, or `ATP_BASELINE_WRITE=1 cargo test` for the \
                   whole suite); commit it.\nA known failure that fails differently, or starts \
                   passing, fails the gate until the baseline says so.\n"
                .to_owned(),
            what: "where known failures go",
        },
    ];
    if package {
        planned.push(Planned {
            path: dir.join("tests/toolcall.rs"),
            text: TEST_FILE.to_owned(),
            what: "the test target: one test per case and agent",
        });
        planned.push(Planned {
            path: dir.join(".config/nextest.toml"),
            text: NEXTEST_CONFIG.to_owned(),
            what: "under cargo nextest, known failures say XFAIL, in JUnit too",
        });
    }
    planned.push(Planned {
        path: dir.join(".github/workflows/toolcall.yml"),
        text: if package {
            WORKFLOW_CARGO
        } else {
            WORKFLOW_ACTION
        }
        .to_owned(),
        what: if package {
            "runs cargo test --test toolcall on every push"
        } else {
            "runs toolcall check with the toolcall Action on every push"
        },
    });

    let mut made = 0;
    // A tests/toolcall.rs of the user's own (`#[test]` functions, no `main`) is kept, and then
    // the package must not get a `harness = false` target of that name: its tests would no
    // longer build (`main function not found`).
    let mut foreign_test_file = false;
    for file in &planned {
        let shown = escape_path(file.path.strip_prefix(dir).unwrap_or(&file.path));
        match toolcall_fs::write_new(&file.path, file.text.as_bytes()) {
            Ok(()) => {
                made += 1;
                outln!("created {shown}  ({})", file.what);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                outln!("kept    {shown}  (it exists; not overwritten)");
                if file.text == TEST_FILE && !has_main(&file.path) {
                    foreign_test_file = true;
                }
                if file.text == NEXTEST_CONFIG && !has_nextest_settings(&file.path) {
                    outln!(
                        "        to see known failures under nextest, add to it:\n{}",
                        NEXTEST_CONFIG
                            .lines()
                            .filter(|l| !l.starts_with('#'))
                            .map(|l| format!("          {l}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    );
                }
            }
            Err(source) => {
                return Err(CliError::Write {
                    path: file.path.clone(),
                    source,
                })
            }
        }
    }
    if package && foreign_test_file && !has_toolcall_target(&manifest) {
        outln!(
            "kept    Cargo.toml  (left alone: tests/toolcall.rs is a test file of your own, \
             with no `main`, and a `harness = false` target named toolcall would stop it \
             building; to add the gate, put the five lines below in another file, say \
             tests/toolcall_gate.rs, with `[[test]] name = \"toolcall_gate\"`, `harness = \
             false` and the dev-dependency toolcall-harness in Cargo.toml)\n{}",
            TEST_FILE
                .lines()
                .map(|l| format!("          {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    } else if package {
        match add_test_target(&manifest, args.path.as_deref()) {
            Ok(added) if added.is_empty() => {
                outln!("kept    Cargo.toml  (it has the toolcall test target and dependency)")
            }
            Ok(added) => {
                made += 1;
                outln!("updated Cargo.toml  ({})", added.join(", "));
            }
            Err(why) => return Err(in_manifest(why)),
        }
    }
    let next = if package {
        "cargo test --test toolcall"
    } else {
        "toolcall check"
    };
    let cd = if dir == Path::new(".") {
        String::new()
    } else {
        format!("cd {} && ", escape_path(dir))
    };
    outln!(
        "\n{}next: {cd}{next}",
        if made == 0 {
            "nothing to do: everything is there. "
        } else {
            ""
        }
    );
    outln!(
        "then put each request your agent sends under cases/ and what its model answered under \
         {agent_dir}/ (same path, same name)"
    );
    Ok(Outcome::Pass)
}

/// Why `name` cannot be a folder under `recorded/`, if it cannot.
fn unsafe_agent_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.starts_with('.') {
        Some("starts with `.` (hidden folders are skipped)")
    } else if name.contains(['/', '\\']) {
        Some("holds a path separator")
    } else if name.chars().any(toolcall_score::is_invisible) {
        Some("holds a control or invisible character")
    } else {
        None
    }
}

/// Whether `manifest` is a Cargo package's (`[package]`): the folder gets a test target.
fn cargo_package(manifest: &Path) -> Result<bool, String> {
    if !manifest.is_file() {
        return Ok(false);
    }
    let text = toolcall_score::read_text(manifest).map_err(|e| e.to_string())?;
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML: {e}"))?;
    Ok(doc.get("package").is_some_and(toml_edit::Item::is_table))
}

/// Whether the Rust file at `path` defines a `main` function (a `harness = false` target must),
/// read as text: an unreadable file counts as having one, so nothing is held back on a guess.
fn has_main(path: &Path) -> bool {
    let Ok(text) = toolcall_score::read_text(path) else {
        return true;
    };
    text.lines().any(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("pub ").unwrap_or(line);
        line.starts_with("fn main(") || line.starts_with("fn main (")
    })
}

/// Whether the nextest config at `path` already holds every setting `init` writes (its own
/// earlier run, or the user's copy of them): then there is nothing to tell the user to add.
fn has_nextest_settings(path: &Path) -> bool {
    let Ok(text) = toolcall_score::read_text(path) else {
        return false;
    };
    let theirs: Vec<&str> = text.lines().map(str::trim).collect();
    NEXTEST_CONFIG
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .all(|l| theirs.contains(&l))
}

/// Whether `manifest` already declares a `[[test]]` target named `toolcall` (the user's own
/// arrangement, then, which `init` does not question).
fn has_toolcall_target(manifest: &Path) -> bool {
    let Ok(text) = toolcall_score::read_text(manifest) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return false;
    };
    doc.get("test")
        .and_then(toml_edit::Item::as_array_of_tables)
        .is_some_and(|tests| {
            tests
                .iter()
                .any(|t| t.get("name").and_then(|n| n.as_str()) == Some("toolcall"))
        })
}

/// Adds the `[[test]] name = "toolcall", harness = false` target and the `toolcall-harness`
/// dev-dependency where missing, and with `checkout` (`--path`) points a dependency that comes
/// from elsewhere at it (asking for the checkout is asking to switch); returns what was changed.
fn add_test_target(manifest: &Path, checkout: Option<&Path>) -> Result<Vec<String>, String> {
    let text = toolcall_score::read_text(manifest).map_err(|e| e.to_string())?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML: {e}"))?;
    let mut added = Vec::new();

    let has_target = doc
        .get("test")
        .and_then(toml_edit::Item::as_array_of_tables)
        .is_some_and(|tests| {
            tests
                .iter()
                .any(|t| t.get("name").and_then(|n| n.as_str()) == Some("toolcall"))
        });
    if !has_target {
        let tests = doc
            .entry("test")
            .or_insert(toml_edit::Item::ArrayOfTables(Default::default()))
            .as_array_of_tables_mut()
            .ok_or("`test` is not an array of tables ([[test]])")?;
        let mut target = toml_edit::Table::new();
        target["name"] = toml_edit::value("toolcall");
        target["harness"] = toml_edit::value(false);
        tests.push(target);
        added.push("[[test]] toolcall, harness = false".to_owned());
    }

    let dev = doc
        .entry("dev-dependencies")
        .or_insert(toml_edit::table())
        .as_table_like_mut()
        .ok_or("`dev-dependencies` is not a table")?;
    let path = checkout
        .map(|checkout| {
            let path = checkout.join("crates/toolcall-harness");
            path.to_str()
                .map(str::to_owned)
                .ok_or("the --path checkout is not valid UTF-8")
        })
        .transpose()?;
    let mut source = toml_edit::InlineTable::new();
    match &path {
        Some(path) => source.insert("path", path.as_str().into()),
        None => source.insert("git", REPOSITORY.into()),
    };
    match dev.get("toolcall-harness") {
        None => {
            dev.insert("toolcall-harness", toml_edit::value(source));
            added.push("dev-dependency toolcall-harness".to_owned());
        }
        Some(existing) => {
            let from_path = existing
                .as_table_like()
                .and_then(|t| t.get("path"))
                .and_then(toml_edit::Item::as_str);
            if let Some(path) = path.as_deref().filter(|p| from_path != Some(*p)) {
                // Its other keys (features, default-features) stay; its source is the checkout.
                let mut switched = toml_edit::InlineTable::new();
                switched.insert("path", path.into());
                if let Some(table) = existing.as_table_like() {
                    for (key, value) in table.iter() {
                        if !matches!(key, "git" | "path" | "branch" | "tag" | "rev" | "version") {
                            if let Some(value) = value.as_value() {
                                switched.insert(key, value.clone());
                            }
                        }
                    }
                }
                dev.insert("toolcall-harness", toml_edit::value(switched));
                added.push(format!("dev-dependency toolcall-harness now from {path}"));
            }
        }
    }
    if !added.is_empty() {
        toolcall_fs::write_atomic(manifest, doc.to_string().as_bytes())
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    Ok(added)
}
