//! Real recorded provider traffic, in the default test tier: every pair under `corpus/`.
//!
//! The fixtures under `tests/fixtures/` are written to the documented wire shapes; these pairs are
//! what providers actually sent. Each `corpus/<source>/` folder is a small set of request/response
//! pairs cut from the VCR cassettes (vcrpy and Ruby VCR YAML, langchaingo's httprr) of a public,
//! permissively licensed test suite, with its `README.md` (repository, the commit each file was
//! read at, licence), `LICENSE` and `manifest.json`. The manifest's `called` was read by
//! `corpus/extract.py`'s own reader of each format, independent of this crate.
//!
//! For each pair: the request loads as a case (its tools came with it), the response loads with
//! its format detected, the detected format is the manifest's, the calls' names are the
//! manifest's `called` in order, and scoring passes with no finding (no real call in the corpus
//! named a tool its request did not define). A right/total line per format (and stream kind) is
//! printed; every pair must be right, and each of the six formats must have at least one pair.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolcall_score::{score, Case, Catalog, Response};

/// The formats the corpus must cover, as the manifests name them.
const FORMATS: [&str; 6] = [
    "anthropic",
    "openai-chat",
    "openai-responses",
    "gemini",
    "bedrock",
    "ollama",
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// One manifest entry, with the folder its paths are relative to.
struct Pair {
    source: String,
    dir: PathBuf,
    entry: Value,
}

impl Pair {
    fn name(&self) -> String {
        format!("{}/{}", self.source, self.str("id"))
    }

    fn str(&self, key: &str) -> &str {
        self.entry[key].as_str().unwrap_or_else(|| {
            let id = self.entry["id"].as_str().unwrap_or("(no id)");
            panic!("{}/{id}: manifest key `{key}` is not a string", self.source)
        })
    }

    fn label(&self) -> String {
        let stream = self.entry["stream"].as_bool() == Some(true);
        format!(
            "{}{}",
            self.str("format"),
            if stream { " stream" } else { "" }
        )
    }
}

/// Every pair of every `corpus/*/manifest.json`, in source then manifest order.
fn pairs() -> Vec<Pair> {
    let root = corpus_dir();
    let mut sources: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("a directory entry of corpus/").path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    sources.sort();
    let mut out = Vec::new();
    for source in sources {
        let manifest = source.join("manifest.json");
        let text =
            fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let entries: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a JSON array of pairs: {e}", manifest.display()));
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for entry in entries {
            let dir = entry["dir"]
                .as_str()
                .map(|d| source.join(d))
                .unwrap_or_else(|| panic!("{}: an entry without `dir`", manifest.display()));
            out.push(Pair {
                source: name.clone(),
                dir,
                entry,
            });
        }
    }
    out
}

/// Checks one pair; `Err` says what was wrong.
fn check(pair: &Pair) -> Result<(), String> {
    let e = &pair.entry;
    if e["expect_error"].as_bool() == Some(true)
        || e["undefined"].as_array().is_some_and(|u| !u.is_empty())
    {
        return Err(
            "this test scores only pairs that should pass (no `expect_error`, no \
                    `undefined`); the manifest says otherwise"
                .into(),
        );
    }
    let case = match e["request_file"].as_str() {
        Some(request) => Case::load(&pair.dir.join(request))
            .map_err(|err| format!("the request does not load as a case: {err}"))?,
        None => {
            let tools = pair.dir.join(pair.str("tools_file"));
            let catalog = Catalog::load(&tools)
                .map_err(|err| format!("the tools file does not load: {err}"))?;
            Case::from_catalog(catalog)
        }
    };
    let response = Response::load(&pair.dir.join(pair.str("response_file")), None)
        .map_err(|err| format!("the response does not load: {err}"))?;
    if response.format.to_string() != pair.str("format") {
        return Err(format!(
            "the response was read as {}, the manifest says {}",
            response.format,
            pair.str("format")
        ));
    }
    let called: Vec<&str> = response.calls.iter().map(|c| c.name.as_str()).collect();
    let want: Vec<&str> = e["called"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if called != want {
        return Err(format!(
            "read the calls {called:?}, the manifest has {want:?}"
        ));
    }
    let verdict = score(&case, &response);
    if !verdict.is_pass() {
        return Err(format!("scoring found {:?}", verdict.findings()));
    }
    Ok(())
}

#[test]
fn every_real_pair_reads_its_calls_and_passes() {
    let pairs = pairs();
    assert!(
        !pairs.is_empty(),
        "no pairs under {}",
        corpus_dir().display()
    );
    // label -> (right, total)
    let mut table: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for pair in &pairs {
        let row = table.entry(pair.label()).or_default();
        row.1 += 1;
        match check(pair) {
            Ok(()) => row.0 += 1,
            Err(why) => wrong.push(format!("{} ({}): {why}", pair.name(), pair.label())),
        }
    }
    let (right, total) = table
        .values()
        .fold((0, 0), |(r, t), (r1, t1)| (r + r1, t + t1));
    for (label, (r, t)) in &table {
        println!("{label:<26} {r:>3} / {t}");
    }
    println!("{:<26} {right:>3} / {total}", "all");
    for format in FORMATS {
        assert!(
            pairs.iter().any(|p| p.str("format") == format),
            "the corpus has no {format} pair"
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {total} real pairs read wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
