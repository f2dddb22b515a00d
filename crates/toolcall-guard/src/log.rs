//! `--log FILE`: one JSON line per exchange, appended by one writer thread so that a line is
//! written whole or not at all, and closed after the drain on SIGTERM. The same thread writes
//! `--record DIR`'s files, each atomically (`toolcall_fs::write_atomic`). A line carries the
//! request and the response as they came (`request`, `response`, `format`), which is the line
//! `toolcall rate` reads, and the guard's own verdict beside them. No header and no query is
//! ever written: keys travel in those, and the bodies are all the guard logs.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

enum Message {
    Line(Vec<u8>),
    /// Files written whole, in order.
    Files(Vec<(PathBuf, Vec<u8>)>),
    Stop,
}

/// The log writer.
pub(crate) struct Log {
    tx: Mutex<Option<Sender<Message>>>,
    thread: Mutex<Option<JoinHandle<io::Result<()>>>>,
}

impl Log {
    /// Opens (or creates) `path` for appending, when there is one; the writer of recordings
    /// either way.
    pub(crate) fn open(path: Option<&Path>) -> io::Result<Log> {
        let mut file = path.map(toolcall_fs::open_log).transpose()?;
        let (tx, rx) = channel::<Message>();
        let thread = std::thread::Builder::new()
            .name("toolcall-guard-log".into())
            .spawn(move || {
                let mut failed = None;
                loop {
                    match rx.recv() {
                        Ok(Message::Line(line)) => {
                            if let Some(file) = file.as_mut() {
                                file.write_all(&line)?;
                            }
                        }
                        Ok(Message::Files(files)) => {
                            for (path, bytes) in files {
                                // A recording that cannot be written is reported at the end;
                                // the exchanges go on.
                                if let Err(e) = toolcall_fs::write_atomic(&path, &bytes) {
                                    failed.get_or_insert(io::Error::new(
                                        e.kind(),
                                        format!("{}: {e}", path.display()),
                                    ));
                                }
                            }
                        }
                        Ok(Message::Stop) | Err(_) => break,
                    }
                }
                if let Some(file) = file.as_mut() {
                    file.sync_all()?;
                }
                failed.map_or(Ok(()), Err)
            })?;
        Ok(Log {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues one entry; nothing after [`Log::close`] is written.
    pub(crate) fn write(&self, entry: &Value) {
        let mut line = entry.to_string().into_bytes();
        line.push(b'\n');
        if let Ok(tx) = self.tx.lock() {
            if let Some(tx) = tx.as_ref() {
                // The writer is gone only after an I/O error, which `close` reports.
                let _ = tx.send(Message::Line(line));
            }
        }
    }

    /// Queues files to write whole.
    pub(crate) fn files(&self, files: Vec<(PathBuf, Vec<u8>)>) {
        if let Ok(tx) = self.tx.lock() {
            if let Some(tx) = tx.as_ref() {
                let _ = tx.send(Message::Files(files));
            }
        }
    }

    /// Writes what is queued, then stops and syncs the file.
    pub(crate) fn close(&self) -> io::Result<()> {
        if let Some(tx) = self.tx.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(Message::Stop);
        }
        match self.thread.lock().ok().and_then(|mut t| t.take()) {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the log writer panicked"))),
            None => Ok(()),
        }
    }
}

/// The time now as RFC 3339 in UTC, to the millisecond.
pub(crate) fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

/// `secs` after the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the civil-from-days algorithm).
fn rfc3339(secs: u64, millis: u32) -> String {
    let days = secs / 86_400;
    let rest = secs % 86_400;
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_in_utc() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_796_220_000, 999), "2026-12-02T14:00:00.999Z");
    }
}
