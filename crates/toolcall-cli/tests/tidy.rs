//! Tidy: the repository's own rules, checked on every `cargo test` (after rust-analyzer's
//! `xtask/src/tidy.rs`). Each failure says which file breaks which rule.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "tidy/modules.rs"]
mod modules;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "node_modules" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_says_why_it_exists() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("examples"), &mut files);
    assert!(files.len() > 10, "found only {} Rust files", files.len());
    let undocumented: Vec<String> = files
        .iter()
        .filter(|path| path.components().any(|c| c.as_os_str() == "src"))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "modules without a `//!` doc: {undocumented:#?}"
    );
}

#[test]
fn no_test_is_ignored() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("examples"), &mut files);
    let marker = concat!("#[", "ignore");
    let ignored: Vec<String> = files
        .iter()
        .filter(|path| std::fs::read_to_string(path).unwrap().contains(marker))
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        ignored.is_empty(),
        "assert today's behaviour with a FIXME instead of ignoring: {ignored:#?}"
    );
}

#[test]
fn readme_has_the_two_set_up_commands_and_they_exist() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("## Set up")
        .nth(1)
        .expect("README has a `## Set up` section");
    let block = section
        .split("```sh")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "exactly two set-up commands: {commands:#?}"
    );
    let script = commands[1].split_whitespace().next().unwrap();
    let path = root.join(script);
    assert!(path.is_file(), "{script} does not exist");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{script} is not executable");
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run exists");
    assert!(
        ci.contains(script),
        ".ci/run must call the README's test command {script}"
    );
    // The main-job command names a real subcommand.
    let subcommand = commands[0]
        .split(" -- ")
        .nth(1)
        .and_then(|a| a.split_whitespace().next())
        .unwrap();
    let help = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args([subcommand, "--help"])
        .output()
        .unwrap();
    assert!(
        help.status.success(),
        "`toolcall {subcommand}` does not exist"
    );
    // A cold release build of the tree is many times the dev one the README's figures are for.
    assert!(
        !commands[0].contains("--release"),
        "the main job builds in the dev profile, as README's figures say: {}",
        commands[0]
    );
}

/// Workspace packages and their normal (non-dev) dependencies, the optional ones (behind a
/// feature) included or not.
fn dependencies(optional: bool) -> Vec<(String, Vec<String>)> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter(|d| optional || d["optional"] != true)
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn dependencies_point_one_way() {
    let packages = dependencies(true);
    let deps = |name: &str| {
        packages
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| panic!("no package {name}"))
    };
    let mut core = deps("toolcall-score");
    core.sort();
    // `memchr` is serde_json's own dependency: named directly, it adds no crate to the tree.
    assert_eq!(
        core,
        ["jsonschema", "memchr", "serde", "serde_json", "thiserror"],
        "the core stays small"
    );
    for (name, deps) in &packages {
        if name == "toolcall-cli" {
            continue;
        }
        assert!(
            !deps.iter().any(|d| d == "toolcall-cli"),
            "{name} depends on the cli"
        );
    }
    // The harness may replay MCP flows, behind its feature `mcp`; by default neither it nor the
    // core pulls in async or MCP.
    for (name, deps) in dependencies(false) {
        if name == "toolcall-harness" || name == "toolcall-score" {
            assert!(
                !deps
                    .iter()
                    .any(|d| d == "tokio" || d == "rmcp" || d == "toolcall-mcp"),
                "{name} must not pull in async or MCP by default: {deps:?}"
            );
        }
    }
}

/// Each workspace package and the workspace packages it may depend on (normal dependencies,
/// optional ones included): the layers of ARCHITECTURE.md's bird's-eye view. A package not listed
/// here fails, so a new crate is placed in the layers when it is added.
const LAYERS: &[(&str, &[&str])] = &[
    ("toolcall-fs", &[]),
    ("toolcall-score", &[]),
    ("toolcall-traces", &["toolcall-score", "toolcall-fs"]),
    ("toolcall-mcp", &["toolcall-score", "toolcall-fs"]),
    (
        "toolcall-mcp-record",
        &["toolcall-mcp", "toolcall-score", "toolcall-fs"],
    ),
    (
        "toolcall-harness",
        &["toolcall-score", "toolcall-fs", "toolcall-mcp"],
    ),
    (
        "toolcall-rate",
        &["toolcall-score", "toolcall-traces", "toolcall-fs"],
    ),
    ("toolcall-mcp-servers", &[]),
    ("toolcall-guard", &["toolcall-score", "toolcall-fs"]),
    (
        "toolcall-cli",
        &[
            "toolcall-score",
            "toolcall-fs",
            "toolcall-traces",
            "toolcall-mcp",
            "toolcall-mcp-record",
            "toolcall-guard",
            "toolcall-harness",
            "toolcall-rate",
        ],
    ),
    (
        "toolcall-bench",
        &[
            "toolcall-score",
            "toolcall-harness",
            "toolcall-rate",
            "toolcall-traces",
        ],
    ),
    ("toolcall-embedding-example", &["toolcall-score"]),
    ("toolcall-py", &["toolcall-score", "toolcall-harness"]),
    ("toolcall-node", &["toolcall-score"]),
];

/// Every crate depends only on the crates below it: no workspace dependency outside its row of
/// [`LAYERS`].
#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let packages = dependencies(true);
    let workspace: Vec<&str> = packages.iter().map(|(n, _)| n.as_str()).collect();
    let mut problems = Vec::new();
    for (name, deps) in &packages {
        let Some((_, allowed)) = LAYERS.iter().find(|(n, _)| n == name) else {
            problems.push(format!("{name} is not in LAYERS: place it in the layers"));
            continue;
        };
        for dep in deps.iter().filter(|d| workspace.contains(&d.as_str())) {
            if !allowed.contains(&dep.as_str()) {
                problems.push(format!("{name} depends on {dep}, which is not below it"));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The lines of library and binary code (not tests, benches, examples or the example MCP
/// servers) that hold one of `patterns`, outside the files `allowed`, as `path:line: text`.
fn library_lines_holding(patterns: &[&str], allowed: &[&str]) -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut offenders = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let library = relative.contains("/src/")
            && !allowed.iter().any(|a| relative.starts_with(a))
            && !relative.starts_with("crates/toolcall-bench/")
            && !relative.starts_with("crates/toolcall-mcp-servers/");
        if !library {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests sit after the module's `#[cfg(test)]`; they may read and write scratch files.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            if patterns.iter().any(|w| line.contains(w)) && !line.trim_start().starts_with("//") {
                offenders.push(format!("{relative}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    offenders
}

/// Every file the tool writes goes through `toolcall_fs::write_atomic` (atomically, never
/// through a link): no library or binary code outside `crates/toolcall-fs` opens a file for
/// writing itself.
#[test]
fn no_code_outside_toolcall_fs_writes_files() {
    let offenders = library_lines_holding(
        &[
            "fs::write(",
            "File::create(",
            "OpenOptions::new()",
            "fs::rename(",
            "create_dir_all(",
        ],
        &["crates/toolcall-fs/"],
    );
    assert!(
        offenders.is_empty(),
        "write files with toolcall_fs::write_atomic:\n{}",
        offenders.join("\n")
    );
}

/// Every input file read whole is read through `toolcall_score::read_text`, so the input limit,
/// the encoding checks and their messages hold for all of them (the log scan streams its lines
/// and bounds each itself). `leftovers.rs` reads `/proc`.
#[test]
fn every_input_is_read_through_read_text() {
    let offenders = library_lines_holding(
        &["fs::read_to_string(", "fs::read("],
        &[
            "crates/toolcall-score/src/errors.rs",
            "crates/toolcall-fs/",
            "crates/toolcall-mcp/src/leftovers.rs",
        ],
    );
    assert!(
        offenders.is_empty(),
        "read input files with toolcall_score::read_text:\n{}",
        offenders.join("\n")
    );
}

/// The files the `toolcall` binary embeds live in its own crate (`assets/`), so the crate that
/// `cargo package` packs builds on its own; the repository keeps its copies where users and
/// their editors find them (`schemas/`, `examples/workflows/`). Each pair must be the same
/// bytes, or `toolcall schema` and `toolcall init` would hand out other text than the documented
/// files.
#[test]
fn the_clis_embedded_files_are_the_repositorys_copies() {
    let root = root();
    let assets = Path::new("crates/toolcall-cli/assets");
    let mut pairs: Vec<(PathBuf, PathBuf)> = ["case", "flow", "baseline"]
        .iter()
        .map(|kind| {
            let name = format!("{kind}.schema.json");
            (
                assets.join("schemas").join(&name),
                Path::new("schemas").join(name),
            )
        })
        .collect();
    for name in ["toolcall-gate.yml", "toolcall-gate-cargo.yml"] {
        pairs.push((
            assets.join("workflows").join(name),
            Path::new("examples/workflows").join(name),
        ));
    }
    let embedded = std::fs::read_dir(root.join(assets.join("schemas")))
        .unwrap()
        .chain(std::fs::read_dir(root.join(assets.join("workflows"))).unwrap())
        .count();
    assert_eq!(
        embedded,
        pairs.len(),
        "crates/toolcall-cli/assets/ holds a file this test does not pair with a repository copy"
    );
    let differ: Vec<String> = pairs
        .iter()
        .filter(|(ours, theirs)| {
            std::fs::read(root.join(ours)).unwrap() != std::fs::read(root.join(theirs)).unwrap()
        })
        .map(|(ours, theirs)| {
            format!(
                "{} differs from {} (edit both, or `cp` the edited one over the other)",
                ours.display(),
                theirs.display()
            )
        })
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// `bench/run` without the tau-bench data says what is missing and where to get it, before it
/// spends minutes building (it used to build for three and exit 1 without a word).
#[cfg(unix)]
#[test]
fn bench_run_names_missing_data_before_building() {
    let output = std::process::Command::new(root().join("bench/run"))
        .arg("--quick")
        .env("ATP_TAU_BENCH_DIR", "/nonexistent/tau-bench")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tau-bench airline data is missing")
            && stderr.contains("ATP_TAU_BENCH_DIR=/nonexistent/tau-bench")
            && !stderr.contains("building the benches"),
        "{stderr}"
    );
}

/// README opens for someone who has never heard of the project: what it is, how to install it,
/// `toolcall init` and the first red and green test, and only then the repository's own set-up.
/// Every `toolcall` command in the first-gate section parses as this binary's command line
/// (tests/newcomer.rs runs them all, in the newcomer tier).
#[test]
fn readme_opens_with_install_then_the_first_gate() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = |heading: &str| {
        readme
            .find(heading)
            .unwrap_or_else(|| panic!("README has no {heading:?}"))
    };
    let (install, first, setup) = (
        at("\n## Install"),
        at("\n## Your first gate"),
        at("\n## Set up"),
    );
    assert!(
        install < first && first < setup,
        "the order: Install, Your first gate, Set up"
    );
    assert_eq!(
        readme[..install].matches("\n## ").count(),
        0,
        "nothing but the introduction before Install"
    );
    let section = &readme[first..setup];
    let mut checked = 0;
    for line in section.lines() {
        let command = line.split("  #").next().unwrap_or_default().trim();
        let Some(args) = command.strip_prefix("toolcall ") else {
            continue;
        };
        let mut words: Vec<&str> = args.split_whitespace().collect();
        // `--help` after the arguments: clap parses them all, then prints help and exits 0.
        words.push("--help");
        let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
            .args(&words)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README's `{command}` is not a toolcall command line: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 3, "the section's toolcall commands: {checked}");
}

// --- The JSON Schemas of case, flow and baseline files (`schemas/`) -----------------------------
//
// The direction that matters is "the reader accepts it, so the schema does": a schema that
// rejects a file the tool reads is a false failure in someone's editor or CI. So every
// committed file of each kind is first read by its reader, then validated; the invalid files
// below are refused by both.

/// `schemas/<kind>.schema.json`: a valid draft 2020-12 schema, compiled.
fn schema(kind: &str) -> jsonschema::Validator {
    let path = root().join(format!("schemas/{kind}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema",
        "{}",
        path.display()
    );
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("{}: not a valid JSON Schema: {e}", path.display());
    }
    jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{}: does not compile: {e}", path.display()))
}

/// What the schema has against `value`, one `pointer: message` each.
fn violations(schema: &jsonschema::Validator, value: &Value) -> Vec<String> {
    schema
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The `*.json` files under `dir`, recursively, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A reader of one kind of file: `Ok` when it accepts the text.
type Reader = fn(&str) -> Result<(), String>;

/// Every `${VAR}` is set (to a path), so a flow naming any variable reads.
struct AnyVar;

impl toolcall_mcp::Vars for AnyVar {
    fn get(&self, _: &str) -> Option<String> {
        Some("/opt/x".to_owned())
    }
}

fn read_case(text: &str) -> Result<(), String> {
    toolcall_score::Case::from_json_str(text)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn read_flow(text: &str) -> Result<(), String> {
    toolcall_mcp::Flow::from_json_str(text, Path::new("x.json"), Path::new("/repo"), &AnyVar)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// What `toolcall_harness`'s baseline loader does with a file's text.
fn read_baseline(text: &str) -> Result<(), String> {
    serde_json::from_str::<toolcall_harness::Baseline>(text)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The committed files of one kind, as (path, text), with the reader of that kind.
fn committed(kind: &str) -> Vec<(PathBuf, String)> {
    let root = root();
    let harness = root.join("crates/toolcall-harness/tests/fixtures");
    let mut files = Vec::new();
    match kind {
        "case" => {
            files.extend(json_files(&root.join("cases")));
            files.extend(json_files(&root.join("examples/embedding/cases")));
            files.extend(json_files(&harness.join("green/cases")));
            files.extend(json_files(&harness.join("red/cases")));
            // The harness's example of a case file that is not JSON.
            files.retain(|f| !f.ends_with("red/cases/broken/bad-syntax.json"));
            // Real request bodies from other projects' recorded traffic.
            files.extend(
                json_files(&root.join("corpus"))
                    .into_iter()
                    .filter(|f| f.ends_with("request.json")),
            );
            // The provider fixtures that are case files (`request` in their directory's
            // `index.txt`) read without an error (none in their `NAME.snap`).
            for fixture in json_files(&root.join("crates/toolcall-score/tests/fixtures")) {
                let dir = fixture.parent().unwrap();
                let name = fixture.file_stem().unwrap().to_string_lossy();
                let index = std::fs::read_to_string(dir.join("index.txt")).unwrap_or_default();
                let is_request = index.lines().any(|line| {
                    line.split_whitespace()
                        .take(2)
                        .eq([name.as_ref(), "request"])
                });
                let snapshot =
                    std::fs::read_to_string(dir.join(format!("{name}.snap"))).unwrap_or_default();
                let reading = snapshot.splitn(3, "---\n").nth(2).unwrap_or_default();
                let reading: Value = serde_json::from_str(reading).unwrap_or(Value::Null);
                if is_request && reading.get("error").is_none() {
                    files.push(fixture);
                }
            }
        }
        "flow" => files.extend(json_files(&root.join("flows"))),
        "baseline" => {
            files.extend(json_files(&root.join("baselines")));
            files.extend(json_files(&root.join("examples/embedding/baselines")));
            files.extend(json_files(&harness.join("green/baselines")));
            files.extend(json_files(&harness.join("red/baselines")));
        }
        other => panic!("no kind {other}"),
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

/// Every case, flow and baseline file in the repository that its reader accepts, the schema
/// accepts too (and every one of them is read by its reader: none is skipped).
#[test]
fn every_committed_data_file_validates_against_its_schema() {
    let root = root();
    let readers: [(&str, Reader, usize); 3] = [
        ("case", read_case, 100),
        ("flow", read_flow, 13),
        ("baseline", read_baseline, 11),
    ];
    let mut problems = Vec::new();
    for (kind, read, at_least) in readers {
        let validator = schema(kind);
        let files = committed(kind);
        assert!(
            files.len() >= at_least,
            "found only {} {kind} files",
            files.len()
        );
        for (path, text) in &files {
            let shown = path.strip_prefix(&root).unwrap().display();
            if let Err(e) = read(text) {
                problems.push(format!("{shown}: the {kind} reader refuses it: {e}"));
                continue;
            }
            let value: Value = serde_json::from_str(text).unwrap();
            for violation in violations(&validator, &value) {
                problems.push(format!("{shown}: schemas/{kind}.schema.json: {violation}"));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Files the readers refuse, and the schemas too; and files at the edges of what the readers
/// accept (nulls for absent keys, a format in capitals, a URL server's empty `args`), which the
/// schemas must not refuse.
#[test]
fn the_schemas_refuse_what_the_readers_refuse_and_no_more() {
    let refused: [(&str, Reader, &[&str]); 3] = [
        (
            "case",
            read_case,
            &[
                r#"[]"#,
                r#"{"about": 3}"#,
                r#"{"expect": "none"}"#,
                r#"{"format": "olama", "messages": []}"#,
                r#"{"format": "JSON", "messages": []}"#,
                r#"{"format": 7, "messages": []}"#,
                r#"{"parent_tools": "planner", "messages": []}"#,
                r#"{"tools": "get_balance"}"#,
                r#"{"tools": ["get_balance"]}"#,
                r#"{"system": 7, "messages": []}"#,
                r#"{"instructions": ["be brief"], "input": "hi"}"#,
                r#"{"messages": [{"role": "user", "content": "a"}], "input": "b"}"#,
                r#"{"messages": {"role": "user", "content": "a"}}"#,
                r#"{"toolConfig": {"tools": {}}}"#,
            ],
        ),
        (
            "flow",
            read_flow,
            &[
                r#"[]"#,
                r#"{"server": {"command": "node"}}"#,
                r#"{"server": {"command": "node"}, "calls": [], "cals": []}"#,
                r#"{"server": {"command": "node", "headers": {"A": "b"}}, "calls": []}"#,
                r#"{"server": {}, "calls": []}"#,
                r#"{"server": {"command": ""}, "calls": []}"#,
                r#"{"server": {"url": "http://x/mcp", "args": ["a"]}, "calls": []}"#,
                r#"{"server": {"url": "http://x/mcp", "cwd": "data"}, "calls": []}"#,
                r#"{"server": {"command": "node", "env": {"N": 1}}, "calls": []}"#,
                r#"{"server": {"command": "node"}, "calls": [{"input": {}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "input": []}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "expect": {"status": "ok"}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "inputs": {}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [], "timeouts": {"call_ms": "5s"}}"#,
                r#"{"server": {"command": "node"}, "calls": [], "timeouts": {"call_ms": -1}}"#,
                r#"{"$schema": 1, "server": {"command": "node"}, "calls": []}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "$comment": ["a"]}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "recorded": "ok"}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "prompt": "p"}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"list": "roots"}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"complete": {"argument": "a"}}]}"#,
                r#"{"server": {"command": "node"}, "verify": {"ignore_paths": ["a"]}, "calls": []}"#,
                r#"{"server": {"command": "node"}, "calls": [], "skip": 1}"#,
                r#"{"server": {"command": "node"}, "calls": [], "skip": ""}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "skip_unless_env": "${T}"}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "id": "a.b"}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"contain": "x"}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"contains": 1}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"json_path": {"status": 1}}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"min_results": -1}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"max_results": {"$.a": "2"}}}]}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "assert": {"not_empty": "yes"}}]}"#,
            ],
        ),
        (
            "baseline",
            read_baseline,
            &[
                r#"[]"#,
                r#"{"a/b": {}}"#,
                r#"{"a/b": {"fingerprint": "x (invented)"}}"#,
                r#"{"a/b": {"fingerprint": [], "nots": "typo"}}"#,
                r#"{"a/b": {"fingerprint": [1]}}"#,
                r#"{"a/b": ["x (invented)"]}"#,
                r#"{"$schema": {"fingerprint": []}}"#,
            ],
        ),
    ];
    let accepted: [(&str, Reader, &[&str]); 3] = [
        (
            "case",
            read_case,
            &[
                r#"{"about": "nothing yet"}"#,
                r#"{"$schema": "x", "about": null, "format": null, "expect": null, "parent_tools": null,
                    "system": null, "tools": null, "messages": null, "input": "hi"}"#,
                r#"{"format": "OpenAI_Chat", "messages": [{"role": "user", "content": "hi"}]}"#,
                r#"{"format": " gemini ", "contents": "hi"}"#,
                r#"{"format": "", "model": "llama3.2", "messages": []}"#,
                r#"{"format": {"type": "object"}, "messages": [], "stream": false}"#,
                r#"{"expect": "no_call", "tools": {"tools": [{"name": "a"}]}}"#,
                r#"{"parent_tools": {"model": "m", "messages": [], "tools": [{"name": "a"}]}}"#,
                r#"{"system": [{"type": "text", "text": "be brief"}], "messages": []}"#,
                r#"{"systemInstruction": "be brief", "contents": []}"#,
                r#"{"toolConfig": {"tools": null}, "messages": []}"#,
            ],
        ),
        (
            "flow",
            read_flow,
            &[
                r#"{"server": {"url": "http://x/mcp", "args": [], "env": {}, "command": null}, "calls": []}"#,
                r#"{"server": {"command": "node", "args": ["s.js"], "url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer t"}}, "calls": []}"#,
                r#"{"server": {"command": "${SERVER}", "url": null, "cwd": null}, "calls": [{"name": "t",
                    "expect": {"": {"ok": true}, "/a~1b": 1}}], "about": null, "expected_failure": null,
                    "timeouts": {"initialize_ms": null, "call_ms": 5000}}"#,
                r#"{"server": {"command": "node"}, "calls": [{"name": "t", "expect_error": -32602,
                    "$comment": "left out as volatile: /id (id)",
                    "recorded": {"error": {"code": -32602, "message": "Unknown tool: t"}}}]}"#,
                r#"{"server": {"command": "node"}, "verify": {"ignore_paths": ["/result/meta", ""]},
                    "calls": [{"prompt": "p", "input": {"a": "b"}, "verify": false},
                    {"complete": {"resource": "r://{id}", "argument": "id", "context": {"k": "v"}}},
                    {"resource": "r://1", "verify": true, "recorded": {"result": {"contents": []}}},
                    {"list": "resource_templates"}]}"#,
                r#"{"server": {"command": "node"}, "skip": "no sandbox here", "skip_unless_env": "T", "calls": []}"#,
                r#"{"server": {"command": "node"}, "skip": false, "calls": [{"name": "a", "id": "a-1", "skip": true},
                    {"name": "b", "input": {"x": "${steps.a-1.result.items.0}"}, "skip_unless_env": "T",
                     "assert": {"contains": "a", "not_contains": ["b"], "contains_any": [], "in_order": ["a", "b"],
                                "json_path": {"$.a[0]['b c']": 1, "/a/0": 2, "": {}}, "min_results": 1,
                                "max_results": {"$.a": 3}, "not_empty": ["$.a", "/b"]}},
                    {"name": "c", "assert": {"not_empty": true}}]}"#,
            ],
        ),
        (
            "baseline",
            read_baseline,
            &[
                r#"{}"#,
                r#"{"$schema": "x"}"#,
                r#"{"a/b": {"fingerprint": [], "note": null}}"#,
            ],
        ),
    ];
    let mut problems = Vec::new();
    for (kind, read, texts) in refused {
        let validator = schema(kind);
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap();
            if read(text).is_ok() {
                problems.push(format!("the {kind} reader accepts {text}"));
            }
            if violations(&validator, &value).is_empty() {
                problems.push(format!("schemas/{kind}.schema.json accepts {text}"));
            }
        }
    }
    for (kind, read, texts) in accepted {
        let validator = schema(kind);
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap();
            if let Err(e) = read(text) {
                problems.push(format!("the {kind} reader refuses {text}: {e}"));
            }
            for violation in violations(&validator, &value) {
                problems.push(format!(
                    "schemas/{kind}.schema.json refuses {text}: {violation}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The case schema's `format` names are the reader's: every format's name is listed for
/// completion, every listed name is one, and a name in capitals, with `_` for `-` or with
/// spaces around it is accepted by both, a misspelt one by neither.
#[test]
fn the_case_schema_knows_the_format_names() {
    let validator = schema("case");
    let text = std::fs::read_to_string(root().join("schemas/case.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let listed: Vec<&str> = schema["properties"]["format"]["anyOf"][0]["enum"]
        .as_array()
        .expect("the first branch of `format` lists the names")
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for format in toolcall_score::Format::ALL {
        assert!(listed.contains(&format.as_str()), "{format} is not listed");
    }
    let mut candidates: Vec<String> = Vec::new();
    for name in &listed {
        assert!(name.parse::<toolcall_score::Format>().is_ok(), "{name}");
        candidates.push(name.to_ascii_uppercase().replace('-', "_"));
        candidates.push(format!(" {name}\t"));
        candidates.push(format!("{name}s"));
        candidates.push(name[1..].to_owned());
    }
    candidates.extend(["json", "", "JSON", "openai chat", "openai--chat", "gpt"].map(String::from));
    let mut problems = Vec::new();
    for candidate in &candidates {
        let case = serde_json::json!({"format": candidate, "messages": []});
        let read = toolcall_score::Case::from_value(&case).is_ok();
        let valid = validator.is_valid(&case);
        if read != valid {
            problems.push(format!(
                "{candidate:?}: the reader {}, the schema {}",
                if read { "accepts it" } else { "refuses it" },
                if valid { "accepts it" } else { "refuses it" }
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Imports that still point up, each one module's dependency on one above it, left so far: the
/// note of each says why. A circle through any other edge fails, and an edge listed here that
/// is gone must be taken out of the list.
const UPWARD: &[(&str, &str, &str)] = &[
    (
        "toolcall-score",
        "schema -> provider::registry",
        "a format's own schema language (Gemini's OpenAPI subset, Cohere v1's parameter \
         definitions) is translated by its module, which the schema compiler finds through the \
         registry (`Wire::request.native_schema`)",
    ),
    (
        "toolcall-traces",
        "errors -> sources",
        "\"not a trace\" lists the sources by name",
    ),
];

/// No crate's modules import one another in a circle: each module can be read knowing only
/// the modules below it (rust-analyzer's rule for its crates, kept here per module). In the
/// core every module counts, `lib.rs` and each `mod.rs` included (they declare and re-export,
/// and define nothing their children use); in the other crates, what a `lib.rs`, `main.rs` or
/// `mod.rs` defines for its modules is not counted as a circle.
#[test]
fn no_module_imports_in_a_circle() {
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = entry.file_name().to_string_lossy().into_owned();
        let graph = match krate.as_str() {
            "toolcall-score" => modules::Graph::of(&src),
            _ => modules::Graph::of(&src).without_parent_items(),
        };
        let allowed: Vec<(&str, &str)> = UPWARD
            .iter()
            .filter(|(c, _, _)| *c == krate)
            .map(|(_, edge, _)| edge.split_once(" -> ").expect("`from -> to`"))
            .collect();
        for (from, to) in &allowed {
            if !graph.has(from, to) {
                problems.push(format!(
                    "{krate}: {from} -> {to} is gone: take it out of UPWARD"
                ));
            }
        }
        let graph = graph.without(&allowed);
        for circle in graph.circles() {
            problems.push(format!(
                "{krate}: a circle through {}:\n    {}",
                circle.join(", "),
                graph.edges_within(&circle).join("\n    ")
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
