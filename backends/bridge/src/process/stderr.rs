//! The last bytes a child wrote on stderr, kept for error messages, and whether its
//! stderr has ended (docs/bridge-protocol.md, "Lifetime").

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How many bytes of the child's stderr are kept for error messages.
const STDERR_TAIL: usize = 4096;

/// The tail of one child's stderr: at most [`STDERR_TAIL`] bytes, and whether the pipe
/// reached its end (the child and everything that inherited the pipe are gone).
#[derive(Default)]
pub(super) struct StderrTail {
    /// The kept bytes, and true once the pipe has ended.
    bytes: Mutex<(VecDeque<u8>, bool)>,
    ended: Condvar,
}

impl StderrTail {
    /// Reads `stderr` to its end, keeping its last bytes; run on a thread of its own.
    pub(super) fn keep(&self, mut stderr: impl Read) {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut kept = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
            kept.0.extend(&buf[..n]);
            let excess = kept.0.len().saturating_sub(STDERR_TAIL);
            kept.0.drain(..excess);
        }
        self.bytes.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.ended.notify_all();
    }

    /// The kept text on one line (lines joined by ` | `), or "(nothing on stderr)".
    ///
    /// With `wait`, first waits up to that long for the pipe to end, so the last words of
    /// a child that just exited are not lost to the race between its exit being seen on
    /// stdout and its stderr being read; a pipe a grandchild keeps open costs `wait` once.
    pub(super) fn text(&self, wait: Option<Duration>) -> String {
        let kept = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let kept = match wait {
            Some(wait) => self.ended.wait_timeout_while(kept, wait, |k| !k.1).unwrap_or_else(|e| e.into_inner()).0,
            None => kept,
        };
        let bytes: Vec<u8> = kept.0.iter().copied().collect();
        drop(kept);
        let text = String::from_utf8_lossy(&bytes);
        match text.trim() {
            "" => "(nothing on stderr)".to_owned(),
            text => text.replace('\n', " | "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_on_one_line() {
        let tail = StderrTail::default();
        assert_eq!(tail.text(None), "(nothing on stderr)");
        let mut long = vec![b'x'; 10_000];
        long.extend_from_slice(b"\nlast words\n");
        tail.keep(&long[..]);
        let text = tail.text(Some(Duration::from_secs(1)));
        assert!(text.ends_with("x | last words"), "{text}");
        assert!(text.len() < STDERR_TAIL + 10, "{}", text.len());
    }

    #[test]
    fn a_message_waits_for_the_end_of_stderr() {
        let tail = std::sync::Arc::new(StderrTail::default());
        let (r, mut w) = std::io::pipe().expect("a pipe");
        let t = tail.clone();
        let reader = std::thread::spawn(move || t.keep(r));
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            std::io::Write::write_all(&mut w, b"chaos: exiting\n").unwrap();
        });
        assert_eq!(tail.text(Some(Duration::from_secs(10))), "chaos: exiting");
        writer.join().unwrap();
        reader.join().unwrap();
    }
}
