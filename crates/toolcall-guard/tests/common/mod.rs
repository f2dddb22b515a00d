//! What the guard's tests share: a stand-in upstream on loopback that answers each request with
//! a scripted body (its chunks sent as given, with pauses, a cut or a hang), a guard started on
//! a free port in front of it, and a client.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::channel::Channel;
use http_body_util::BodyExt;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use toolcall_guard::{Config, Upstream};

/// What the stand-in answers one request with.
#[derive(Clone, Debug)]
pub struct Script {
    pub status: u16,
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    /// A pause before each chunk after the first.
    pub pause: Duration,
    /// Close the connection after the chunks, mid-body.
    pub cut: bool,
}

impl Script {
    pub fn json(body: &str) -> Script {
        Script::new(200, "application/json", vec![body.as_bytes().to_vec()])
    }

    pub fn sse(chunks: Vec<Vec<u8>>) -> Script {
        Script::new(200, "text/event-stream", chunks)
    }

    pub fn new(status: u16, content_type: &str, chunks: Vec<Vec<u8>>) -> Script {
        Script {
            status,
            content_type: content_type.to_owned(),
            headers: Vec::new(),
            chunks,
            pause: Duration::ZERO,
            cut: false,
        }
    }

    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }
}

/// A request the stand-in saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

type Answer = Arc<dyn Fn(&Seen) -> Script + Send + Sync>;

/// The stand-in upstream.
pub struct Upstreamer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

pub async fn upstream(answer: impl Fn(&Seen) -> Script + Send + Sync + 'static) -> Upstreamer {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answer: Answer = Arc::new(answer);
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let answer = answer.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let answer = answer.clone();
                    let log = log.clone();
                    async move {
                        let path = request
                            .uri()
                            .path_and_query()
                            .map_or("/".to_owned(), |p| p.as_str().to_owned());
                        let headers = request
                            .headers()
                            .iter()
                            .map(|(k, v)| {
                                (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned())
                            })
                            .collect();
                        let body = request
                            .into_body()
                            .collect()
                            .await
                            .map(|c| c.to_bytes().to_vec())
                            .unwrap_or_default();
                        let seen = Seen {
                            path,
                            headers,
                            body,
                        };
                        let script = answer(&seen);
                        log.lock().expect("lock").push(seen);
                        let (mut tx, body) = Channel::<Bytes, std::io::Error>::new(1);
                        let mut response = hyper::Response::new(body);
                        *response.status_mut() =
                            hyper::StatusCode::from_u16(script.status).expect("status");
                        response.headers_mut().insert(
                            "content-type",
                            script.content_type.parse().expect("content type"),
                        );
                        for (k, v) in &script.headers {
                            response.headers_mut().insert(
                                hyper::header::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                                v.parse().expect("value"),
                            );
                        }
                        tokio::spawn(async move {
                            for (i, chunk) in script.chunks.iter().enumerate() {
                                if i > 0 && !script.pause.is_zero() {
                                    tokio::time::sleep(script.pause).await;
                                }
                                if tx.send_data(Bytes::from(chunk.clone())).await.is_err() {
                                    return;
                                }
                            }
                            if script.cut {
                                // Let what was sent leave before the connection is cut.
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                tx.abort(std::io::Error::other("cut"));
                            }
                        });
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Upstreamer { addr, seen }
}

/// A guard running in front of an upstream; dropped, nothing stops it: call `stop`.
pub struct Guard {
    pub addr: SocketAddr,
    pub log: Option<PathBuf>,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<Result<(), toolcall_guard::GuardError>>>,
}

impl Guard {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops it (as SIGTERM does) and waits for the drain and the log.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take() {
            done.await.expect("join").expect("guard run");
        }
    }

    /// The log's lines, after `stop`.
    pub fn lines(&self) -> Vec<serde_json::Value> {
        let path = self.log.as_ref().expect("a log");
        let text = std::str::from_utf8(&std::fs::read(path).expect("log"))
            .expect("utf8")
            .to_owned();
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a whole JSON line"))
            .collect()
    }
}

/// A config for `upstream` with a log in a fresh folder.
pub fn config(upstream: SocketAddr, name: &str) -> Config {
    let mut config = Config::new(vec![
        Upstream::parse(&format!("http://{upstream}")).expect("url")
    ]);
    config.listen = "127.0.0.1:0".parse().expect("addr");
    let dir = scratch(name);
    config.log = Some(dir.join("guard.jsonl"));
    config.idle_timeout = Duration::from_secs(10);
    config
}

/// A fresh folder under the target directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("guard-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

pub async fn start(config: Config) -> Guard {
    let log = config.log.clone();
    let bound = toolcall_guard::bind(config).await.expect("bind");
    let addr = bound.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let done = tokio::spawn(bound.run(async move {
        let _ = stopped.await;
    }));
    Guard {
        addr,
        log,
        stop: Some(stop),
        done: Some(done),
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

/// Splits `text` into pieces of `size` bytes: chunk boundaries that fall inside events.
pub fn pieces(text: &[u8], size: usize) -> Vec<Vec<u8>> {
    text.chunks(size).map(<[u8]>::to_vec).collect()
}
