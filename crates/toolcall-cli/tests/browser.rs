//! The HTML report in a real browser: headless Chromium opens the page `toolcall check --html`
//! wrote, runs its script under its Content-Security-Policy, and the DOM it leaves is checked
//! against what `toolcall check --json` says of the same run. Every request Chromium makes goes
//! through a proxy this test runs: a request the page made (anything but Chromium's own
//! update and time services, which it contacts whatever the page) fails the test.
//! Screenshots at a desktop and a narrow width go to `target/browser-shots/`, which CI keeps.
//!
//! Feature `browser-tier`; `scripts/test` installs Chromium (Debian's `chromium`) and runs it.
//! `ATP_CHROMIUM` names the browser when it is not `chromium` on `PATH`; without one the test
//! fails, saying so.

mod support;

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

fn chromium() -> String {
    let browser = std::env::var("ATP_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let found = Command::new(&browser).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "no browser: `{browser} --version` failed. Install Chromium (apt-get install chromium) \
         or set ATP_CHROMIUM; scripts/test installs it"
    );
    browser
}

/// A proxy that answers nothing and remembers the first line of every request.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut buf = [0u8; 512];
                let n = stream.read(&mut buf).unwrap_or(0);
                let line = String::from_utf8_lossy(&buf[..n])
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                log.lock().unwrap().push(line);
            }
        });
        Proxy { port, seen }
    }

    /// The requests a page made: everything but Chromium's own services, and but connections
    /// that sent nothing (Chromium opens spare connections to its proxy ahead of need).
    fn page_requests(&self) -> Vec<String> {
        const CHROMIUM_SERVICES: [&str; 5] = [
            "google.com",
            "googleapis.com",
            "gvt1.com",
            "gstatic.com",
            "googleusercontent.com",
        ];
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|line| !line.trim().is_empty())
            .filter(|line| {
                let target = line.split_whitespace().nth(1).unwrap_or_default();
                let host = target
                    .trim_start_matches("http://")
                    .split(['/', ':'])
                    .next()
                    .unwrap_or_default();
                !CHROMIUM_SERVICES
                    .iter()
                    .any(|s| host == *s || host.ends_with(&format!(".{s}")))
            })
            .cloned()
            .collect()
    }
}

fn browser_args(proxy: &Proxy) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=3000",
        "--proxy-bypass-list=<-loopback>",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([format!("--proxy-server=http://127.0.0.1:{}", proxy.port)])
    .collect()
}

/// Chromium with the test's flags and `extra`, opening `page`; its standard output.
fn open(page: &Path, proxy: &Proxy, extra: &[String]) -> Vec<u8> {
    open_at(page, "", proxy, extra)
}

/// As [`open`], at `fragment` (`#…`, as a link would write it).
fn open_at(page: &Path, fragment: &str, proxy: &Proxy, extra: &[String]) -> Vec<u8> {
    let out = Command::new(chromium())
        .args(browser_args(proxy))
        .args(extra)
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The DOM after the page's script ran.
fn dom(page: &Path, proxy: &Proxy) -> String {
    String::from_utf8(open(page, proxy, &["--dump-dom".to_owned()])).unwrap()
}

fn screenshot(page: &Path, proxy: &Proxy, name: &str, width: u32, height: u32) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../browser-shots");
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    open(
        page,
        proxy,
        &[
            format!("--window-size={width},{height}"),
            format!("--screenshot={}", shot.display()),
        ],
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "{}: {size} bytes, blank?", shot.display());
    shot
}

/// `toolcall check --root ROOT --html PAGE --json`: the page and the JSON of the same run.
fn report(root: &Path, name: &str) -> (PathBuf, Value) {
    let dir = support::scratch("browser", name);
    let page = dir.join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .args(["check", "--json", "--html"])
        .arg(&page)
        .arg("--root")
        .arg(root)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (page, json)
}

fn results(run: &Value) -> Vec<&Value> {
    run["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["results"].as_array().unwrap())
        .collect()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn fixture(name: &str) -> PathBuf {
    repo()
        .join("crates/toolcall-harness/tests/fixtures")
        .join(name)
}

/// The bundled suite and a red tree: the script ran (so its hash is right), the filters show
/// every result, and each result is in the DOM with the JSON's outcome.
#[test]
fn the_page_in_a_browser_shows_what_json_says() {
    let proxy = Proxy::start();
    for (root, name) in [(repo(), "bundled"), (fixture("red"), "red")] {
        let (page, run) = report(&root, name);
        let dom = dom(&page, &proxy);
        assert!(
            dom.contains("<html lang=\"en\" data-js=\"on\">"),
            "{name}: the script did not run"
        );
        let results = results(&run);
        assert_eq!(
            dom.matches("<details class=\"result ").count(),
            results.len(),
            "{name}"
        );
        assert!(
            dom.contains(&format!(
                "<output id=\"shown\">{} of {} shown</output>",
                results.len(),
                results.len()
            )),
            "{name}: the filters count every result"
        );
        assert!(
            dom.contains("<nav id=\"filters\">"),
            "{name}: the filters are shown"
        );
        for outcome in [
            "pass",
            "expected_failure",
            "failure",
            "changed",
            "now_passes",
        ] {
            let want = results.iter().filter(|r| r["outcome"] == outcome).count();
            assert_eq!(
                dom.matches(&format!("data-outcome=\"{outcome}\"")).count(),
                want,
                "{name}: {outcome}"
            );
        }
        screenshot(&page, &proxy, &format!("{name}-desktop"), 1280, 2000);
        screenshot(&page, &proxy, &format!("{name}-narrow"), 390, 1600);
    }
    // The red tree's new failure: its timeline shows the offending call, open.
    let (page, _) = report(&fixture("red"), "red");
    let dom = dom(&page, &proxy);
    let start = dom
        .find("id=\"r-claude--billing/new-failure\"")
        .expect("the case's anchor");
    let section = &dom[start..start + dom[start..].find("</details>\n<details").unwrap_or(4000)];
    assert!(section.contains(" open=\"\""), "a failing case is open");
    assert!(
        section.contains("<div class=\"call offending\" id=\"call-toolu_01\">call <code class=\"name\">get_invoices</code>"),
        "{section}"
    );
    assert!(section.contains("did you mean <code>get_invoice</code>?"));
    assert_eq!(
        proxy.page_requests(),
        Vec::<String>::new(),
        "the page made requests"
    );
}

/// A tool name that closes the script and adds an image with an onerror, and a bidi override,
/// render as text: no element comes from them and nothing they hold runs.
#[test]
fn hostile_text_renders_as_text_and_runs_nothing() {
    let proxy = Proxy::start();
    let root = support::scratch("browser", "hostile-tree");
    copy(&fixture("green"), &root);
    let payload = "</script><img src=x onerror=\\\"document.documentElement.setAttribute('data-pwned','1')\\\"><script>document.title='pwned'</script>\u{202e}";
    let recording = root.join("recorded/claude/billing/invented.json");
    let text = std::fs::read_to_string(&recording)
        .unwrap()
        .replace("get_invoices", payload);
    std::fs::write(&recording, text).unwrap();
    let (page, run) = report(&root, "hostile");
    assert!(run["ok"] == false);
    let dom = dom(&page, &proxy);
    assert!(
        dom.contains("data-js=\"on\""),
        "the page's own script still runs"
    );
    assert!(!dom.contains("data-pwned=\""), "the payload's handler ran");
    assert!(!dom.contains("<title>pwned"), "the payload's script ran");
    assert!(!dom.contains("<img"), "the payload made an element");
    assert!(
        dom.contains("&lt;/script&gt;&lt;img src=x onerror="),
        "it shows as text"
    );
    assert!(!dom.contains('\u{202e}') && dom.contains("\\u{202e}"));
    assert_eq!(
        proxy.page_requests(),
        Vec::<String>::new(),
        "the page made requests"
    );
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The DOM after the page's script ran, opened at `fragment`.
fn dom_at(page: &Path, fragment: &str, proxy: &Proxy) -> String {
    String::from_utf8(open_at(page, fragment, proxy, &["--dump-dom".to_owned()])).unwrap()
}

/// Each start tag that begins with `open`, in document order.
fn start_tags<'a>(dom: &'a str, open: &str) -> Vec<&'a str> {
    dom.match_indices(open)
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .collect()
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// The red tree beside an agent, `a-first` (drawn first by name), with one passing recording
/// and none of the other cases': its first result is a pass, its failures are missing
/// recordings.
fn two_agents() -> (PathBuf, Value) {
    let root = support::scratch("browser", "two-agents-tree");
    copy(&fixture("red"), &root);
    let first = root.join("recorded/a-first/billing");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::copy(
        root.join("recorded/claude/billing/clean.json"),
        first.join("clean.json"),
    )
    .unwrap();
    report(&root, "two-agents")
}

/// The first view: the first result drawn is an unexpected one, results come in the order
/// unexpected, new failure, expected failure, pass whatever agent they belong to, every count
/// of the agents table and the header is a link whose target is on the page, and an agent
/// whose only problems are missing recordings shows them counted in its row.
#[test]
fn unexpected_results_come_first_and_every_count_links_to_its_cases() {
    let proxy = Proxy::start();
    let (page, run) = two_agents();
    let dom = dom(&page, &proxy);
    let tags = start_tags(&dom, "<details class=\"result ");
    assert_eq!(tags.len(), results(&run).len());
    assert!(tags[0].contains(" unexpected"), "first drawn: {}", tags[0]);
    let rank = |tag: &str| match attribute(tag, "data-outcome").unwrap() {
        "failure" => 1,
        "expected_failure" => 2,
        "pass" => 3,
        _ => 0,
    };
    let ranks: Vec<u8> = tags.iter().map(|t| rank(t)).collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    assert_eq!(
        ranks.iter().filter(|r| **r < 2).count(),
        results(&run)
            .iter()
            .filter(|r| !matches!(r["outcome"].as_str(), Some("pass" | "expected_failure")))
            .count()
    );

    // Every link on the page lands on an element of the page.
    let links: Vec<&str> = dom
        .match_indices("href=\"#")
        .map(|(i, _)| {
            let start = i + "href=\"#".len();
            &dom[start..start + dom[start..].find('"').unwrap()]
        })
        .collect();
    assert!(links.len() > 10, "{links:?}");
    for link in &links {
        let id = percent_decode(link);
        assert!(
            dom.contains(&format!(" id=\"{id}\"")),
            "the link #{link} goes nowhere"
        );
    }
    // The header's count of unexpected results is a link to them.
    let header = &dom[dom.find("<header").unwrap()..dom.find("</header>").unwrap()];
    assert!(
        header.contains(&format!(
            "<a href=\"#only-unexpected\">{} unexpected result(s)</a>",
            ranks.iter().filter(|r| **r < 2).count()
        )),
        "{header}"
    );
    // Each agent's row: every count above zero is a link; the problems are counted.
    for agent in run["agents"].as_array().unwrap() {
        let name = agent["name"].as_str().unwrap();
        let row_start = dom
            .find(&format!("<tr data-agent=\"{name}\">"))
            .expect("a row per agent");
        let row = &dom[row_start..row_start + dom[row_start..].find("</tr>").unwrap()];
        let cells: Vec<&str> = row.split("<td").skip(3).collect();
        assert_eq!(
            cells.len(),
            4,
            "pass, expected failure, failure, problems: {row}"
        );
        let counts = &agent["counts"];
        let problems = agent["coverage"].as_array().unwrap().len()
            + agent["baseline_problems"].as_array().unwrap().len();
        for (cell, n) in cells.iter().zip([
            counts["pass"].as_u64().unwrap(),
            counts["expected_failure"].as_u64().unwrap(),
            counts["failure"].as_u64().unwrap(),
            problems as u64,
        ]) {
            if n > 0 {
                assert!(cell.contains(&format!("\">{n}</a>")), "{name}: {cell}");
            } else {
                assert!(
                    cell.contains(">0</td>") || cell.ends_with(">0</td>"),
                    "{name}: {cell}"
                );
            }
        }
    }
    let first = &run["agents"][0];
    assert_eq!(first["name"], "a-first");
    assert_eq!(first["counts"]["failure"], 0);
    assert!(
        first["coverage"].as_array().unwrap().len() >= 3,
        "{}",
        first["coverage"]
    );

    // "unexpected only": at that fragment only the unexpected results are shown.
    let only = dom_at(&page, "#only-unexpected", &proxy);
    let shown: Vec<&str> = start_tags(&only, "<details class=\"result ")
        .into_iter()
        .filter(|t| !t.contains(" hidden=\""))
        .collect();
    assert!(!shown.is_empty());
    assert!(shown.iter().all(|t| t.contains(" unexpected")), "{shown:?}");
    assert_eq!(shown.len(), ranks.iter().filter(|r| **r < 2).count());
    screenshot(&page, &proxy, "first-view", 1000, 900);
}

/// `#r-<agent>--<case-id>` with the case id's `/` as it is (as the README and CI links write
/// it) lands on that case's element, which names its agent and case in data attributes; the
/// script opens it, folded as a passing case is.
#[test]
fn a_readme_style_anchor_lands_on_the_case() {
    let proxy = Proxy::start();
    let (page, _) = report(&fixture("red"), "anchor");
    let dom = dom_at(&page, "#r-claude--billing/clean", &proxy);
    let tags = start_tags(&dom, "<details class=\"result ");
    let target: Vec<&&str> = tags
        .iter()
        .filter(|t| attribute(t, "id") == Some("r-claude--billing/clean"))
        .collect();
    assert_eq!(target.len(), 1, "{tags:?}");
    assert_eq!(attribute(target[0], "data-agent"), Some("claude"));
    assert_eq!(attribute(target[0], "data-case"), Some("billing/clean"));
    assert_eq!(attribute(target[0], "data-outcome"), Some("pass"));
    assert!(
        target[0].contains(" open=\"\""),
        "the anchor opened it: {}",
        target[0]
    );
    // Ids are unique.
    let ids: std::collections::BTreeSet<&str> =
        tags.iter().filter_map(|t| attribute(t, "id")).collect();
    assert_eq!(ids.len(), tags.len());
}

/// `replay --html`: the failing step's arguments are on the page, as indented JSON, in the
/// failure's block (the step never went through, so it is not among the steps).
#[test]
fn the_replay_page_shows_what_the_failing_step_sent() {
    let proxy = Proxy::start();
    let dir = support::scratch("browser", "replay");
    let page = dir.join("replay.html");
    let server = Path::new(env!("CARGO_BIN_EXE_toolcall"))
        .with_file_name(format!("refund-server{}", std::env::consts::EXE_SUFFIX));
    assert!(server.is_file(), "{} is not built", server.display());
    let out = Command::new(env!("CARGO_BIN_EXE_toolcall"))
        .arg("replay")
        .arg(repo().join("flows/wrong-status.json"))
        .arg("--html")
        .arg(&page)
        .env("ATP_REFUND_SERVER", &server)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = dom(&page, &proxy);
    let start = dom.find("<li class=\"turn failed\">").expect("the failure");
    let failure = &dom[start..start + dom[start..].find("</li>").unwrap()];
    assert!(
        failure.contains(
            "call <code class=\"name\">issue_refund</code><pre class=\"arguments\">{\n  \
             \"amount_cents\": 9164,\n  \"order_id\": \"ord_1042\",\n  \"reason\": \
             \"damaged in transit\"\n}</pre>"
        ),
        "{failure}"
    );
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}
