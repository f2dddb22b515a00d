//! Where the provider-cassettes corpus is, shared by the suites over it:
//! `ATP_PROVIDER_CASSETTES_DIR`, or `../shared/external/provider-cassettes` beside the workspace.
//! 786 real request/response pairs from seven projects' VCR cassettes, one folder per project
//! (its README names the repository, commit and licence). A wrong or missing directory fails the
//! run; it never skips it.

use std::path::PathBuf;

use serde_json::Value;
use toolcall_score::Format;

const VAR: &str = "ATP_PROVIDER_CASSETTES_DIR";

/// One recorded pair: the request as sent and the response as recorded.
#[allow(dead_code)] // The lint suite reads only the requests.
pub struct Pair {
    /// `<project>/<id>`.
    pub id: String,
    pub request: PathBuf,
    pub response: PathBuf,
    pub format: Format,
}

pub fn data_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os(VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{VAR} is set to")),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/external/provider-cassettes"),
            format!("{VAR} is not set; the default is"),
        ),
    };
    assert!(
        dir.join("README.md").is_file() && dir.join("crewai/manifest.json").is_file(),
        "{source} {}, which holds no README.md and crewai/manifest.json: set {VAR} to the \
         provider-cassettes data directory",
        dir.display()
    );
    dir
}

/// Every pair of every project, in the manifests' order.
pub fn pairs() -> Vec<Pair> {
    let dir = data_dir();
    let mut projects: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    projects.sort();
    let mut pairs = Vec::new();
    for project in projects {
        let path = project.join("manifest.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let manifest: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = project
            .file_name()
            .expect("a folder name")
            .to_string_lossy()
            .into_owned();
        for entry in manifest.as_array().expect("a manifest is a list of pairs") {
            let field = |key: &str| {
                entry[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("{key} in {entry}"))
            };
            let pair_dir = project.join(field("dir"));
            pairs.push(Pair {
                id: format!("{name}/{}", field("id")),
                request: pair_dir.join(field("request_file")),
                response: pair_dir.join(field("response_file")),
                format: field("format").parse().unwrap_or_else(|e| panic!("{e}")),
            });
        }
    }
    assert!(
        pairs.len() >= 786,
        "{} pairs under {}",
        pairs.len(),
        dir.display()
    );
    pairs
}
