//! Offline rate runs: a recorded tree or JSONL logs in, a [`Tally`] out, on all cores and in
//! constant memory.
//!
//! The input is cut into chunks of about [`CHUNK_BYTES`] of whole lines (or a few recorded
//! files), and one worker per core parses, scores and counts them into a tally of its own; the
//! tallies are merged at the end. For JSONL logs (and trace files, a file at a time) the
//! workers take turns reading (`parallel_pull`): each reads its next chunk under a lock and works on it at once, while
//! it is in its core's cache, so no thread only reads and at most one chunk per worker is in
//! memory. A recorded tree is walked by the calling thread, which hands batches over a bounded
//! channel (`parallel`; at most `2 × workers` in flight). With one worker, everything runs on
//! the calling thread: `--threads 1` is one thread.
//!
//! # The JSONL line format
//!
//! One request/response pair per line:
//!
//! ```json
//! {"request": {...}, "response": {...}, "format": "openai-chat", "id": "req_8812"}
//! ```
//!
//! - `request`: what was sent — a case (see [`toolcall_score::Case`]: `"expect": "no_call"` and
//!   `parent_tools` go here) or a provider's own request body (OpenAI Chat, Anthropic Messages,
//!   Gemini, ...). A JSON *string* holding such a body is accepted too (logs often keep the raw
//!   body).
//! - `response`: the provider's response body, as it came back (or a string holding it, or
//!   holding the recorded stream it came as: server-sent events, Ollama's NDJSON).
//! - `format` (optional): the response's format; otherwise the request's, or detected.
//! - `id` (optional): shown instead of `file:line` where the report points at the line.
//!
//! Other keys are ignored (timestamps, latencies). Blank lines are skipped. A line that is not
//! JSON or lacks `request`/`response` is counted in `bad_lines` and reported as `file:line`,
//! never a crash; [`ScanOptions::strict`] makes the first one fatal. So is a line longer than
//! [`toolcall_score::max_input_bytes`], which is skipped without being held in memory.
//!
//! # The recorded tree
//!
//! `recorded/<agent>/<case-id>.json` holds one response body for `cases/<case-id>.json`;
//! `<case-id>.jsonl` holds several (one body per line, e.g. repeated samples).

use std::fs::File;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use toolcall_score::{escape, escape_path};

use serde_json::Value;
use toolcall_score::{Case, Format, Recording, Response, Scorer};

use crate::tally::{Origin, Tally};
use crate::RateError;

/// About how many bytes of whole lines one chunk carries.
pub const CHUNK_BYTES: usize = 1 << 20;

/// How a scan runs.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Worker threads; 0 means one per available core.
    pub threads: usize,
    /// Draw a progress line on stderr (the CLI turns it on only when stderr is a terminal).
    pub progress: bool,
    /// Make the first bad input fatal instead of counting it.
    pub strict: bool,
    /// The response format, when every response is in the same one and detection should not run.
    pub format: Option<Format>,
}

impl ScanOptions {
    fn workers(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// The progress line's shared counters and its drawing thread's stop flag.
pub(crate) struct Progress {
    total: u64,
    unit: &'static str,
    done: AtomicU64,
    responses: AtomicU64,
    finished: AtomicBool,
}

impl Progress {
    fn new(total: u64, unit: &'static str) -> Progress {
        Progress {
            total,
            unit,
            done: AtomicU64::new(0),
            responses: AtomicU64::new(0),
            finished: AtomicBool::new(false),
        }
    }

    /// Redraws the line every 200 ms until `finished`, then clears it.
    fn draw(&self) {
        let start = Instant::now();
        let mut stderr = std::io::stderr();
        while !self.finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            let done = self.done.load(Ordering::Relaxed);
            let pct = if self.total > 0 {
                done as f64 * 100.0 / self.total as f64
            } else {
                0.0
            };
            let secs = start.elapsed().as_secs_f64().max(1e-3);
            let (shown, total) = if self.unit == "MB" {
                (done as f64 / 1e6, self.total as f64 / 1e6)
            } else {
                (done as f64, self.total as f64)
            };
            let _ = std::io::Write::write_fmt(
                &mut stderr,
                format_args!(
                    "\r\x1b[2K{pct:5.1}%  {shown:.0}/{total:.0} {}  {} responses  {:.0} responses/s",
                    self.unit,
                    self.responses.load(Ordering::Relaxed),
                    self.responses.load(Ordering::Relaxed) as f64 / secs
                ),
            );
        }
        let _ = std::io::Write::write_all(&mut stderr, b"\r\x1b[2K");
    }
}

/// Hands one item to the workers: `false` once they are gone (stopped early).
pub(crate) type Hand<'h, I> = &'h mut dyn FnMut(I) -> bool;

/// Runs `produce` on this thread and `work` on `workers` threads over a bounded channel, then
/// merges the workers' tallies. `stop` tells the producer (and workers) to give up early.
///
/// With one worker there is no channel and no other thread: `work` runs on this thread as
/// each item is produced, so "one thread" is one thread (and a chunk is worked on while it is
/// still in this core's cache).
pub(crate) fn parallel<I: Send>(
    options: &ScanOptions,
    progress: Option<&Progress>,
    produce: impl FnOnce(Hand<'_, I>, &AtomicBool) -> Result<(), RateError>,
    work: impl Fn(&mut Tally, I) + Sync,
) -> Result<Tally, RateError> {
    let workers = options.workers();
    let stop = AtomicBool::new(false);
    let (produced, total) = with_progress(progress, || {
        if workers == 1 {
            let mut tally = Tally::default();
            let produced = produce(
                &mut |item| {
                    if stop.load(Ordering::Relaxed) {
                        return false;
                    }
                    work(&mut tally, item);
                    if options.strict && tally.bad() > 0 {
                        stop.store(true, Ordering::Relaxed);
                    }
                    true
                },
                &stop,
            );
            (produced, tally)
        } else {
            on_workers(options, workers, &stop, produce, &work)
        }
    });
    produced?;
    strict_outcome(options, total)
}

/// Runs `run` while `progress` (when there is one) is drawn on a thread of its own.
fn with_progress<T>(progress: Option<&Progress>, run: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let drawer = progress.map(|p| scope.spawn(move || p.draw()));
        let done = run();
        if let Some(p) = progress {
            p.finished.store(true, Ordering::Relaxed);
        }
        if let Some(drawer) = drawer {
            let _ = drawer.join();
        }
        done
    })
}

/// A run's tally, or with `--strict` its first unreadable input as the error.
fn strict_outcome(options: &ScanOptions, total: Tally) -> Result<Tally, RateError> {
    if options.strict {
        if let Some((_, message)) = total.errors.first() {
            return Err(RateError::Strict {
                message: message.clone(),
            });
        }
    }
    Ok(total)
}

/// [`parallel`] on `workers` threads, fed over a bounded channel.
fn on_workers<I: Send>(
    options: &ScanOptions,
    workers: usize,
    stop: &AtomicBool,
    produce: impl FnOnce(Hand<'_, I>, &AtomicBool) -> Result<(), RateError>,
    work: &(impl Fn(&mut Tally, I) + Sync),
) -> (Result<(), RateError>, Tally) {
    let (sender, receiver) = sync_channel::<I>(workers * 2);
    let receiver: Mutex<Receiver<I>> = Mutex::new(receiver);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let receiver = &receiver;
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    loop {
                        // The lock is held only to take one chunk; chunks are large.
                        let item = match receiver.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => break,
                        };
                        let Ok(item) = item else { break };
                        if stop.load(Ordering::Relaxed) {
                            continue;
                        }
                        work(&mut tally, item);
                        if options.strict && tally.bad() > 0 {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    tally
                })
            })
            .collect();
        let produced = produce(&mut |item| sender.send(item).is_ok(), stop);
        drop(sender);
        let mut total = Tally::default();
        for handle in handles {
            match handle.join() {
                Ok(tally) => total.merge(tally),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (produced, total)
    })
}

/// Runs `work` on `workers` threads, each taking its next item from `next` (called under a
/// lock, one worker at a time), then merges the workers' tallies; an error from `next` stops
/// the run and is returned.
///
/// No thread only reads: a worker reads its own chunk and works on it at once, while the
/// chunk is still in its core's cache, and one worker's reading overlaps the others' work.
/// With one worker, it all runs on this thread.
pub(crate) fn parallel_pull<I, N>(
    options: &ScanOptions,
    progress: Option<&Progress>,
    next: N,
    work: impl Fn(&mut Tally, I) + Sync,
) -> Result<Tally, RateError>
where
    N: FnMut(&AtomicBool) -> Result<Option<I>, RateError> + Send,
{
    let workers = options.workers();
    let stop = AtomicBool::new(false);
    let next = Mutex::new(next);
    let failure: Mutex<Option<RateError>> = Mutex::new(None);
    let worker = || {
        let mut tally = Tally::default();
        loop {
            let item = match next.lock() {
                Ok(mut next) => next(&stop),
                Err(_) => break,
            };
            let item = match item {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(e) => {
                    if let Ok(mut slot) = failure.lock() {
                        slot.get_or_insert(e);
                    }
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            };
            work(&mut tally, item);
            if options.strict && tally.bad() > 0 {
                stop.store(true, Ordering::Relaxed);
            }
        }
        tally
    };
    let total = with_progress(progress, || {
        if workers == 1 {
            return worker();
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
            let mut total = Tally::default();
            for handle in handles {
                match handle.join() {
                    Ok(tally) => total.merge(tally),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            total
        })
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    strict_outcome(options, total)
}

/// A run of whole lines from one input.
struct Chunk {
    source: usize,
    first_line: u64,
    data: Vec<u8>,
    /// The lines over the input limit, by number, with their length: each is an empty line in
    /// `data`, so the numbers of the lines after it stay right.
    too_long: Vec<(u64, u64)>,
    /// Where each `\n` in `data` is: found once, by the reader, for the line count it needs
    /// and for the worker's split.
    ends: Vec<usize>,
}

/// Chunk buffers handed back by the workers, for the reader to fill again: a run allocates (and
/// faults in) only as many as are in flight at once.
type Pool = Mutex<Vec<Vec<u8>>>;

/// Cuts one input into [`Chunk`]s of whole lines, reading straight into the chunk's buffer: a
/// byte is copied once, from the kernel, and a chunk costs one search for its last line end.
///
/// A line longer than `limit` (its `\n` not counted) is dropped as soon as the part read
/// passes the limit, and read on to its end in a small buffer, so one huge line costs a buffer,
/// not its size in memory; the chunk keeps an empty line in its place. (A whole line over the
/// limit that fits in a chunk is left for the worker to refuse: the limit can be set below a
/// chunk's size.)
struct Chunker<'p, R> {
    input: R,
    source: usize,
    limit: u64,
    /// The number of the next chunk's first line.
    line: u64,
    /// The start of a line the last chunk did not end, for the next one.
    pending: Vec<u8>,
    eof: bool,
    pool: &'p Pool,
}

impl<R: Read> Chunker<'_, R> {
    fn next(&mut self) -> std::io::Result<Option<Chunk>> {
        if self.eof && self.pending.is_empty() {
            return Ok(None);
        }
        let mut data = self
            .pool
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .unwrap_or_else(|| Vec::with_capacity(CHUNK_BYTES + CHUNK_BYTES / 16));
        data.append(&mut self.pending);
        let mut too_long = Vec::new();
        while !self.eof {
            let read = (&mut self.input)
                .take(CHUNK_BYTES as u64)
                .read_to_end(&mut data)?;
            if read == 0 {
                self.eof = true;
                break;
            }
            let line_start = memchr::memrchr(b'\n', &data).map_or(0, |i| i + 1);
            if (data.len() - line_start) as u64 > self.limit {
                let number =
                    self.line + memchr::memchr_iter(b'\n', &data[..line_start]).count() as u64;
                let mut bytes = (data.len() - line_start) as u64;
                data.truncate(line_start);
                bytes += self.skip_line(&mut data)?;
                too_long.push((number, bytes));
            }
            if data.len() >= CHUNK_BYTES && data.contains(&b'\n') {
                break;
            }
        }
        if !self.eof {
            let cut = memchr::memrchr(b'\n', &data).map_or(0, |i| i + 1);
            self.pending.extend_from_slice(&data[cut..]);
            data.truncate(cut);
        }
        let ends: Vec<usize> = memchr::memchr_iter(b'\n', &data).collect();
        let chunk = Chunk {
            source: self.source,
            first_line: self.line,
            ends,
            too_long,
            data,
        };
        self.line += chunk.ends.len() as u64;
        Ok(Some(chunk))
    }

    /// Reads the rest of a dropped line, through its `\n`; appends the `\n` (the empty line in
    /// its place) and what follows it in the last read to `data`. Returns the bytes dropped.
    fn skip_line(&mut self, data: &mut Vec<u8>) -> std::io::Result<u64> {
        let mut buffer = [0u8; 64 * 1024];
        let mut dropped = 0u64;
        loop {
            let n = match self.input.read(&mut buffer) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
                return Ok(dropped);
            }
            if let Some(end) = memchr::memchr(b'\n', &buffer[..n]) {
                data.extend_from_slice(&buffer[end..n]);
                return Ok(dropped + end as u64 + 1);
            }
            dropped += n as u64;
        }
    }
}

/// One JSONL line, as logged.
#[derive(serde::Deserialize)]
struct LogLine {
    request: Value,
    response: Value,
    #[serde(default)]
    format: Option<Format>,
    #[serde(default)]
    id: Option<String>,
}

/// A value, or the JSON document a string value holds (raw request bodies kept as strings).
fn unwrap_string(value: Value) -> Result<Value, serde_json::Error> {
    match value {
        Value::String(text) => serde_json::from_str(&text),
        other => Ok(other),
    }
}

pub(crate) fn score_line(
    tally: &mut Tally,
    bytes: &[u8],
    format: Option<Format>,
    origin: Origin,
) -> Result<(), String> {
    let line: LogLine =
        serde_json::from_slice(bytes).map_err(|e| {
            format!("not a log line ({{\"request\", \"response\"}}), nor in a trace a source reads (--from names one): {e}")
        })?;
    let request =
        unwrap_string(line.request).map_err(|e| format!("`request` string is not JSON: {e}"))?;
    let case = Case::from_value(&request).map_err(|e| format!("request: {e}"))?;
    let format = line.format.or(format).or(case.format);
    // A string holds the body as it came, or the stream it came as (see `Response::from_json_str`).
    let response = match line.response {
        Value::String(text) => {
            Response::from_json_str(&text, format).map_err(|e| format!("`response` string: {e}"))?
        }
        value => Response::from_value(&value, format).map_err(|e| format!("response: {e}"))?,
    };
    let origin = match line.id {
        Some(id) => Origin {
            shown: format!("{} ({id})", origin.shown),
            ..origin
        },
        None => origin,
    };
    tally.add(&case, &response, &origin);
    Ok(())
}

/// Scores JSONL logs (see the module docs for the line format). `-` reads standard input.
pub fn rate_jsonl(paths: &[PathBuf], options: &ScanOptions) -> Result<Tally, RateError> {
    let total: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let progress = options.progress.then(|| Progress::new(total, "MB"));
    let progress = progress.as_ref();
    let limit = toolcall_score::max_input_bytes();
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let pool = Pool::default();
    let pool = &pool;
    let mut inputs = paths.iter().enumerate();
    let mut current: Option<(&PathBuf, Chunker<'_, Box<dyn Read + Send>>)> = None;
    let next = move |stop: &AtomicBool| -> Result<Option<Chunk>, RateError> {
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            if let Some((path, chunker)) = &mut current {
                let chunk = chunker.next().map_err(|source| RateError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                if let Some(chunk) = chunk {
                    // A UTF-16 log is refused as every input is, not read as so many bad lines.
                    if chunk.first_line == 1 {
                        if let Some(e) = toolcall_score::utf16_error(Some(path), &chunk.data) {
                            return Err(RateError::Input(e));
                        }
                    }
                    if let Some(p) = progress {
                        p.done.fetch_add(chunk.data.len() as u64, Ordering::Relaxed);
                    }
                    return Ok(Some(chunk));
                }
                current = None;
            }
            let Some((source, path)) = inputs.next() else {
                return Ok(None);
            };
            let input: Box<dyn Read + Send> = if path.as_os_str() == "-" {
                Box::new(std::io::stdin())
            } else {
                Box::new(File::open(path).map_err(|source| RateError::Read {
                    path: path.clone(),
                    source,
                })?)
            };
            let chunker = Chunker {
                input,
                source,
                limit,
                line: 1,
                pending: Vec::new(),
                eof: false,
                pool,
            };
            current = Some((path, chunker));
        }
    };
    parallel_pull(options, progress, next, |tally, chunk: Chunk| {
        let before = tally.responses();
        let origin = |number: u64| Origin {
            order: (chunk.source, number),
            shown: format!("{}:{number}", shown[chunk.source]),
            file: (paths[chunk.source].as_os_str() != "-").then(|| shown[chunk.source].clone()),
            line: Some(number),
        };
        let too_long = |tally: &mut Tally, number: u64, bytes: u64| {
            let origin = origin(number);
            // The file's own error, with `file:line` for its name.
            let message = toolcall_score::InputError::TooLarge {
                path: origin.shown.clone().into(),
                bytes,
                limit,
            }
            .to_string();
            tally.bad_input(origin, message);
        };
        for &(number, bytes) in &chunk.too_long {
            too_long(tally, number, bytes);
        }
        let mut start = 0;
        let ends = chunk.ends.iter().copied().chain([chunk.data.len()]);
        for (i, end) in ends.enumerate() {
            let bytes = &chunk.data[start..end];
            start = end + 1;
            let number = chunk.first_line + i as u64;
            if bytes.len() as u64 > limit {
                let newline = u64::from(end < chunk.data.len());
                too_long(tally, number, bytes.len() as u64 + newline);
                continue;
            }
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // Most lines pass: counted on the fast path, with no origin to build.
            if crate::fast::add_if_passing(tally, bytes, options.format) {
                continue;
            }
            let origin = origin(number);
            if let Err(message) = score_line(tally, bytes, options.format, origin.clone()) {
                let message = format!("{}: {message}", escape(&origin.shown));
                tally.bad_input(origin, message);
            }
        }
        if let Some(p) = progress {
            p.responses
                .fetch_add(tally.responses() - before, Ordering::Relaxed);
        }
        let mut data = chunk.data;
        data.clear();
        if let Ok(mut pool) = pool.lock() {
            pool.push(data);
        }
    })
}

/// The files under `dir`, recursively, in sorted order, for which `keep` holds. The walk never
/// follows a link out of `dir` or round a loop, and reads only regular files
/// ([`toolcall_fs::walk`]); an entry it has to leave out is an error naming it, rather than a
/// hang or phantom cases.
pub(crate) fn walk(
    dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
    each: &mut dyn FnMut(PathBuf) -> Result<(), RateError>,
) -> Result<(), RateError> {
    let walk = toolcall_fs::walk(dir, &|_| false, keep).map_err(|source| RateError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    // A link that leads nowhere may have been a folder of recordings: left out, so named too.
    if let Some(skipped) = walk.skipped.into_iter().chain(walk.unresolved).next() {
        return Err(RateError::Tree {
            path: skipped.path,
            why: skipped.why.to_string(),
        });
    }
    for path in walk.files {
        each(path)?;
    }
    Ok(())
}

/// The case id of a file under `root`: its relative path without the extension, `/`-separated.
pub(crate) fn case_id(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?.with_extension("");
    let parts: Vec<&str> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.contains(&e))
}

/// One recorded file and the case it answers.
struct Recorded {
    order: usize,
    id: String,
    case: PathBuf,
    recorded: PathBuf,
}

/// What a tree scan found.
#[derive(Debug)]
pub struct TreeScan {
    /// The totals.
    pub tally: Tally,
    /// Cases under the cases directory with no recorded response.
    pub unrecorded: u64,
}

/// Scores every recorded response under `recorded` (one agent's directory) against its case
/// under `cases`.
pub fn rate_tree(
    cases: &Path,
    recorded: &Path,
    options: &ScanOptions,
) -> Result<TreeScan, RateError> {
    for dir in [cases, recorded] {
        let error = |source| RateError::Read {
            path: dir.to_path_buf(),
            source,
        };
        // A missing tree says so (a typo'd agent name), rather than "not a directory".
        let metadata = std::fs::metadata(dir).map_err(error)?;
        if !metadata.is_dir() {
            return Err(error(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
    }
    let progress = options.progress.then(|| Progress::new(0, "files"));
    let progress = progress.as_ref();
    let tally = parallel(
        options,
        progress,
        |hand, stop| {
            let mut order = 0usize;
            let mut batch = Vec::with_capacity(16);
            walk(recorded, &|p| Recording::of(p).is_some(), &mut |path| {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let Some(id) = case_id(recorded, &path) else {
                    return Ok(());
                };
                order += 1;
                batch.push(Recorded {
                    order,
                    case: cases.join(format!("{id}.json")),
                    id,
                    recorded: path,
                });
                if batch.len() == 16 {
                    hand(std::mem::take(&mut batch));
                }
                Ok(())
            })?;
            if !batch.is_empty() {
                hand(batch);
            }
            Ok(())
        },
        |tally, batch: Vec<Recorded>| {
            for item in batch {
                score_recorded(tally, &item, options.format);
                if let Some(p) = progress {
                    p.done.fetch_add(1, Ordering::Relaxed);
                    p.responses.store(tally.responses(), Ordering::Relaxed);
                }
            }
        },
    )?;
    let mut unrecorded = 0;
    walk(cases, &|p| has_extension(p, &["json"]), &mut |path| {
        if let Some(id) = case_id(cases, &path) {
            if Recording::files(recorded, &id).next().is_none() {
                unrecorded += 1;
            }
        }
        Ok(())
    })?;
    Ok(TreeScan { tally, unrecorded })
}

fn score_recorded(tally: &mut Tally, item: &Recorded, format: Option<Format>) {
    let shown = escape_path(&item.recorded).to_string();
    // The origin keeps the path as it is (a report escapes it when printing it).
    let raw = item.recorded.display().to_string();
    let origin = Origin {
        order: (item.order, 0),
        shown: raw.clone(),
        file: Some(raw.clone()),
        line: None,
    };
    let case = match Case::load(&item.case) {
        Ok(case) => case,
        Err(e) if !item.case.exists() => {
            let message = format!(
                "{shown}: no case file {} for case id `{}` ({e})",
                escape_path(&item.case),
                escape(&item.id)
            );
            return tally.bad_input(origin, message);
        }
        Err(e) => return tally.bad_input(origin, e.to_string()),
    };
    let format = format.or(case.format);
    // A case recorded under two names is scored once, from the first in `EXTENSIONS` order.
    let siblings = Recording::EXTENSIONS.map(|extension| item.recorded.with_extension(extension));
    if let Some(first) = siblings.iter().find(|path| path.is_file()) {
        if *first != item.recorded {
            let message = format!(
                "{shown}: case `{}` is recorded twice; only {} is scored",
                escape(&item.id),
                escape_path(first)
            );
            return tally.bad_input(origin, message);
        }
    }
    // A `.jsonl` is samples, one response per line, unless its first line is a stream event no
    // body looks like: then it is one stream (`Recording::of_text`), read whole below.
    let samples = match Recording::of(&item.recorded) {
        Some(Recording::PerLine) => match toolcall_score::read_text(&item.recorded) {
            Ok(text) => (Recording::of_text(&item.recorded, &text) == Some(Recording::PerLine))
                .then_some(text),
            Err(e) => return tally.bad_input(origin, e.to_string()),
        },
        _ => None,
    };
    if let Some(text) = samples {
        let scorer = Scorer::new(&case);
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let origin = Origin {
                order: (item.order, i as u64 + 1),
                shown: format!("{raw}:{}", i + 1),
                file: Some(raw.clone()),
                line: Some(i as u64 + 1),
            };
            match Response::from_json_str(line, format) {
                Ok(response) => tally.add_scored(&scorer, &response, &origin),
                Err(e) => {
                    let message = format!("{}: {e}", escape(&origin.shown));
                    tally.bad_input(origin, message);
                }
            }
        }
    } else {
        match Response::load(&item.recorded, format) {
            Ok(response) => tally.add(&case, &response, &origin),
            Err(e) => tally.bad_input(origin, e.to_string()),
        }
    }
}

/// Whether a progress line should be drawn: stderr is a terminal and not in CI.
pub fn progress_wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk `input` is cut into, read a few bytes at a time (as a pipe gives them).
    fn chunks(input: &[u8], limit: u64) -> Vec<Chunk> {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(1000);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let pool = Pool::default();
        let mut chunker = Chunker {
            input: Trickle(input),
            source: 0,
            limit,
            line: 1,
            pending: Vec::new(),
            eof: false,
            pool: &pool,
        };
        std::iter::from_fn(|| chunker.next().unwrap()).collect()
    }

    #[test]
    fn a_line_over_the_limit_is_dropped_without_being_held() {
        let data = [
            b"short\n".as_slice(),
            &vec![b'x'; 3 * CHUNK_BYTES],
            b"\nlast",
        ]
        .concat();
        let chunks = chunks(&data, 10_000);
        let kept: Vec<u8> = chunks.iter().flat_map(|c| c.data.clone()).collect();
        assert_eq!(kept, b"short\n\nlast", "nothing of the long line is kept");
        let dropped: Vec<(u64, u64)> = chunks.iter().flat_map(|c| c.too_long.clone()).collect();
        assert_eq!(dropped, [(2, 3 * CHUNK_BYTES as u64 + 1)]);
        let held = chunks.iter().map(|c| c.data.capacity()).max().unwrap();
        assert!(held < 3 * CHUNK_BYTES, "held {held} bytes");
    }

    #[test]
    fn chunks_end_on_line_ends_and_count_their_lines() {
        let lines: Vec<String> = (0..200_000).map(|i| format!("{{\"n\": {i}}}")).collect();
        let data = lines.join("\n");
        let chunks = chunks(data.as_bytes(), 1 << 20);
        assert!(chunks.len() > 1);
        let mut next = 1;
        for chunk in &chunks {
            assert_eq!(chunk.first_line, next);
            let text = std::str::from_utf8(&chunk.data).unwrap();
            let first = text.lines().next().unwrap();
            assert_eq!(first, lines[next as usize - 1]);
            next += text.matches('\n').count() as u64;
        }
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.data.clone()).collect();
        assert_eq!(joined, data.as_bytes());
    }
}
