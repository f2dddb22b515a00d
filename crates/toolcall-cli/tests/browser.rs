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
    let out = Command::new(chromium())
        .args(browser_args(proxy))
        .args(extra)
        .arg(format!("file://{}", page.display()))
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
        .find("id=\"r-claude--billing.2fnew-failure\"")
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
