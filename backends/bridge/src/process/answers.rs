//! Reading a child's answers: lines of any length read in pieces (each one progress for the
//! watchdog), large ones parsed and decoded on a thread of their own, notes on the calls
//! they answer, and the child's stderr tail.

use std::io::{BufRead, BufReader};
use std::sync::Arc;

use serde_json::value::RawValue;

use super::{CallError, Shared, LARGE};
use crate::protocol::{id_prefix, Answer};

/// A size for messages: `300.0 MB`, `12.3 KB`, `80 bytes`.
pub(crate) fn size_text(bytes: usize) -> String {
    if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else if bytes >= 1_000 {
        format!("{:.1} KB", bytes as f64 / 1e3)
    } else {
        format!("{bytes} bytes")
    }
}

/// `raw` read by `read`, or the error naming the operation and the answer's head.
pub(super) fn decode<T>(
    op: &str,
    raw: &RawValue,
    read: impl FnOnce(&str) -> serde_json::Result<T>,
) -> Result<T, CallError> {
    read(raw.get()).map_err(|e| {
        let text = raw.get();
        let head: String = text.chars().take(300).collect();
        let more = if text.len() > head.len() { "…" } else { "" };
        CallError::BadAnswer(format!("the bridge child's answer to {op} does not fit: {e}; the answer: {head}{more}"))
    })
}

/// Reads one line into `line` (cleared first), touching the connection's progress for each
/// piece read and noting a large answer's progress on its call. `Ok(false)` at the end of
/// the stream (a line cut by the child's end is dropped).
fn read_line(
    shared: &Shared,
    reader: &mut BufReader<std::process::ChildStdout>,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    line.clear();
    let mut noted = 0;
    loop {
        let piece = reader.fill_buf()?;
        if piece.is_empty() {
            return Ok(false);
        }
        shared.touch();
        let (take, done) = match piece.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (piece.len(), false),
        };
        line.extend_from_slice(&piece[..take]);
        reader.consume(take);
        if done {
            return Ok(true);
        }
        if line.len() >= LARGE && line.len() >= noted + LARGE {
            noted = line.len();
            if let Some(id) = id_prefix(line) {
                shared.note(id, |f| {
                    format!(
                        "through the bridge: its answer is arriving, {} of it read so far after {:.1} s",
                        size_text(noted),
                        f.since.elapsed().as_secs_f64()
                    )
                });
            }
        }
    }
}

/// Reads answer lines until the child's stdout closes, then fails what is left.
pub(super) fn read_answers(shared: &Arc<Shared>, stdout: std::process::ChildStdout) {
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let mut line = Vec::new();
    loop {
        match read_line(shared, &mut reader, &mut line) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let msg = shared.death_message(&format!("could not be read ({e})"));
                shared.kill();
                return shared.fail_all(msg);
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.len() >= LARGE {
            if let Some(id) = id_prefix(&line) {
                let size = line.len();
                shared.note(id, |f| {
                    format!(
                        "through the bridge: an answer of {} read after {:.1} s, being decoded",
                        size_text(size),
                        f.since.elapsed().as_secs_f64()
                    )
                });
            }
        }
        if line.len() >= LARGE {
            // Parsed and decoded on a thread of its own: the answers behind it (a ping's,
            // a close's) are not held up for the seconds a 100 MB answer takes.
            let (s, big) = (shared.clone(), std::mem::take(&mut line));
            let spawned = std::thread::Builder::new().name("bridge-large-answer".into()).spawn(move || {
                if let Err(broken) = deliver(&s, &big) {
                    broke(&s, &big, &broken);
                }
            });
            if spawned.is_err() {
                return broke(shared, b"", "cannot start a thread to read a large answer");
            }
            continue;
        }
        if let Err(broken) = deliver(shared, &line) {
            return broke(shared, &line, &broken);
        }
    }
    let msg = shared.death_message("exited");
    shared.fail_all(msg);
}

/// Ends a connection whose child sent `line`, which broke the protocol (`broken`).
fn broke(shared: &Shared, line: &[u8], broken: &str) {
    let head = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
    let msg = shared.death_message(&format!("broke the protocol: {broken}; the line: {}", head.trim_end()));
    shared.kill();
    shared.fail_all(msg);
}

/// Hands one answer line to its call. `Err` means the connection cannot go on.
fn deliver(shared: &Shared, line: &[u8]) -> Result<(), String> {
    let take = |id: u64| {
        let mut p = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.abandoned.remove(&id);
        let flight = p.replies.remove(&id)?;
        drop(p);
        shared.answered(&flight.op);
        Some(flight.reply)
    };
    let answer: Answer = match serde_json::from_slice(line) {
        Ok(a) => a,
        Err(e) => {
            // Not JSON: if it names its request, that request fails alone.
            let id = id_prefix(line).ok_or_else(|| format!("an answer that is not JSON ({e})"))?;
            let reply =
                take(id).ok_or_else(|| format!("an unreadable answer to request {id}, which is not in flight"))?;
            reply(Err(CallError::BadAnswer(format!("the bridge child's answer is not valid JSON: {e}"))));
            return Ok(());
        }
    };
    let Some(id) = answer.id else {
        let why = answer.error.map(|e| format!("{}: {}", e.kind, e.message)).unwrap_or_default();
        return Err(format!("the child could not read a request: {why}"));
    };
    if let (None, None, Some(progress)) = (&answer.error, &answer.ok, &answer.progress) {
        // Not the answer yet: the child announces a large one it is encoding.
        let bytes = progress.bytes.unwrap_or(0) as usize;
        shared.note(id, |f| {
            format!(
                "through the bridge: the child has the result, about {}, and is encoding it after {:.1} s",
                size_text(bytes),
                f.since.elapsed().as_secs_f64()
            )
        });
        return Ok(());
    }
    let reply = take(id).ok_or_else(|| format!("an answer to request {id}, which is not in flight"))?;
    match (answer.error, answer.ok) {
        (Some(e), _) => reply(Err(CallError::Remote(e))),
        (None, Some(ok)) => reply(Ok(ok)),
        (None, None) => reply(Err(CallError::BadAnswer("the bridge child's answer has neither ok nor error".into()))),
    }
    Ok(())
}
