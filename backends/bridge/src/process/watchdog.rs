//! The watchdog of a connection (docs/bridge-protocol.md "Stuck children"): pings a child
//! with a call unanswered for a while, stops one that does not answer, and remembers which
//! operation got children stopped (issue 40 row 3).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::{size_text, Connection, LARGE};
use crate::protocol::NoArgs;

/// How long a call may go unanswered before the watchdog pings the child.
pub(crate) const PING_AFTER: Duration = Duration::from_secs(2);
/// How long the child has to answer that ping (counted from the last byte that moved on
/// its pipes: a ping queued behind a large request or answer is not late) before it is
/// stopped as stuck (docs/bridge-protocol.md, `ping`).
pub(crate) const PING_DEADLINE: Duration = Duration::from_secs(5);
/// How long a child may take to answer the handshake (start, import the saver's module)
/// before it is stopped.
pub(crate) const HELLO_DEADLINE: Duration = Duration::from_secs(60);
/// How often the watchdog looks.
const WATCH_TICK: Duration = Duration::from_millis(250);
/// How many times an operation may be the one call in flight of a child stopped as stuck,
/// with no call of it answered in between, before its later calls fail at once, unsent
/// (one blocked method must not cost every later case a child and the ping deadline:
/// issue 40 row 3).
pub(crate) const STUCK_LIMIT: u32 = 2;
/// The start of the line the Python child writes on stderr when its event loop is blocked.
const STALL_PREFIX: &str = "checkpoint-bridge: event loop blocked";

/// The operations that got a child stopped as stuck, with how often each was the only
/// call in flight then; shared by the children of one registration
/// ([`Connection::spawn_sharing`]).
pub(crate) type StuckOps = Arc<Mutex<HashMap<String, Stuck>>>;

/// Cases by [`conformance_core::CallNote::case`] (`None`: a call of no case).
type Cases = std::collections::BTreeSet<Option<u64>>;

/// How often an operation got a child stopped as stuck, the last message, and the cases
/// ([`conformance_core::CallNote::case`]) whose calls those were: a case counts once (a
/// case run twice, by `--repeat` or alone again, is one case that blocks).
#[derive(Debug, Default)]
pub(crate) struct Stuck {
    pub(crate) times: u32,
    pub(crate) message: String,
    cases: Cases,
}

/// The watchdog of a connection: [`Connection::watch_once`] every [`WATCH_TICK`] until the
/// connection is dropped or broken.
pub(super) fn watch(conn: &Weak<Connection>) {
    loop {
        std::thread::sleep(WATCH_TICK);
        let Some(conn) = conn.upgrade() else { return };
        if !conn.is_alive() {
            return;
        }
        conn.watch_once();
    }
}

impl Connection {
    /// One look of the watchdog: pings a child with a call unanswered for [`PING_AFTER`];
    /// a child that leaves that ping unanswered for [`PING_DEADLINE`] after the last byte
    /// moved on its pipes is stopped, and every call in flight fails naming the oldest
    /// (issue 40 row 3: a saver's async method that blocks the child's event loop).
    fn watch_once(&self) {
        let now = Instant::now();
        let (ping, oldest, hello) = {
            let p = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            // The handshake is not pinged (a child answers pings only once it has started
            // and imported the saver's module) but has a deadline of its own.
            let oldest = p.replies.values().filter(|f| f.op != "ping" && f.op != "hello").map(|f| f.since).min();
            let hello = p.replies.values().filter(|f| f.op == "hello").map(|f| f.since).min();
            (p.ping.as_ref().map(|(sent, answered)| (*sent, answered.load(Ordering::SeqCst))), oldest, hello)
        };
        if hello.is_some_and(|since| now.duration_since(since) >= HELLO_DEADLINE) {
            let message = format!(
                "the bridge child {} (pid {}) did not answer the handshake (hello) within {} s: it hangs while \
                 starting or importing the saver's module; the child was stopped; its stderr ends: {}",
                self.shared.label,
                self.shared.pid,
                HELLO_DEADLINE.as_secs(),
                self.shared.stderr_tail()
            );
            {
                let mut stuck = self.shared.stuck_ops.lock().unwrap_or_else(|e| e.into_inner());
                let entry = stuck.entry("hello".into()).or_default();
                entry.times += 1;
                entry.message.clone_from(&message);
            }
            self.shared.kill();
            return self.shared.fail_all(message);
        }
        // One ping per PING_AFTER at most while a call is unanswered that long.
        let due = |sent: Instant| now.duration_since(sent) >= PING_AFTER;
        match ping {
            Some((sent, false)) => {
                let moved = *self.shared.progress.lock().unwrap_or_else(|e| e.into_inner());
                if now.duration_since(sent.max(moved)) >= PING_DEADLINE {
                    self.stop_stuck(now);
                }
            }
            None | Some((_, true)) if oldest.is_some_and(due) && ping.is_none_or(|(sent, _)| due(sent)) => {
                let answered = Arc::new(AtomicBool::new(false));
                self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()).ping = Some((now, answered.clone()));
                self.start(
                    "ping",
                    None,
                    &NoArgs {},
                    Box::new(move |_| {
                        answered.store(true, Ordering::SeqCst);
                    }),
                );
            }
            _ => {}
        }
    }

    /// Stops a child that answered no ping in time: the message names the calls in flight
    /// (oldest first) and what is likely (a blocking call in the saver's method blocks the
    /// child's event loop); an operation that was the only call in flight counts towards
    /// [`STUCK_LIMIT`].
    fn stop_stuck(&self, now: Instant) {
        let (mut calls, cases): (Vec<(Instant, String, usize)>, Cases) = {
            let p = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            let flights: Vec<_> = p.replies.values().filter(|f| f.op != "ping").collect();
            let cases = flights.iter().map(|f| f.note.as_ref().and_then(conformance_core::CallNote::case)).collect();
            (flights.iter().map(|f| (f.since, f.op.clone(), f.request_bytes)).collect(), cases)
        };
        calls.sort_by_key(|(since, _, _)| *since);
        let Some((since, op, bytes)) = calls.first().cloned() else { return };
        let size = if bytes >= LARGE { format!(", a request of {}", size_text(bytes)) } else { String::new() };
        // Every other operation in flight, with how many of it and its largest request
        // (the oldest call need not be the one that blocks: "6 open; 1 put, a request of
        // 16.0 MiB").
        let others = match calls.len() - 1 {
            0 => String::new(),
            n => {
                let mut ops: std::collections::BTreeMap<&str, (usize, usize)> = std::collections::BTreeMap::new();
                for (_, op, bytes) in &calls[1..] {
                    let e = ops.entry(op.as_str()).or_default();
                    e.0 += 1;
                    e.1 = e.1.max(*bytes);
                }
                let ops: Vec<String> = ops
                    .iter()
                    .map(|(op, (k, most))| match *most >= LARGE {
                        true => format!("{k} {op}, a request of {}", size_text(*most)),
                        false => format!("{k} {op}"),
                    })
                    .collect();
                format!(" and {n} more ({})", ops.join("; "))
            }
        };
        // The Python child says on stderr where its event loop is stuck (STALL_PREFIX in
        // bridges/python/checkpoint_bridge/server.py): the blocking call itself.
        let said = self.shared.stderr_tail();
        let said = said
            .rsplit(" | ")
            .find_map(|l| l.trim().strip_prefix(STALL_PREFIX))
            .map(|at| format!("; the child says its event loop is blocked{at}"))
            .unwrap_or_default();
        let message = format!(
            "the bridge child {} (pid {}) answered no ping within {:.0} s while in {op} (unanswered for {:.1} s{size}){others}: \
             the child's event loop is blocked, most likely by a blocking call in an async method of the saver (one \
             that does not await){said}; the child was stopped, and a new one serves the next case",
            self.shared.label,
            self.shared.pid,
            PING_DEADLINE.as_secs_f64(),
            now.duration_since(since).as_secs_f64(),
        );
        // Unambiguous only when every call in flight is of the one operation.
        if calls.iter().all(|(_, o, _)| *o == op) {
            let mut stuck = self.shared.stuck_ops.lock().unwrap_or_else(|e| e.into_inner());
            let entry = stuck.entry(op).or_default();
            if !cases.is_subset(&entry.cases) {
                entry.times += 1;
                entry.cases.extend(cases);
            }
            entry.message = message.clone();
        }
        self.shared.kill();
        self.shared.fail_all(message);
    }
}

impl super::Shared {
    /// A call of `op` was answered: the child is not stuck in every call of it (a 16 MiB
    /// value that blocked one child is no reason to refuse the small ones after it), so
    /// `op`'s count of stuck children starts again.
    pub(super) fn answered(&self, op: &str) {
        self.stuck_ops.lock().unwrap_or_else(|e| e.into_inner()).remove(op);
    }

    /// Why a call of `op` is not sent: `op` was the call in flight of [`STUCK_LIMIT`]
    /// children stopped as stuck (counting each case once), with no call of it answered
    /// since; `None` when it is sent.
    pub(super) fn refusal(&self, op: &str) -> Option<String> {
        let stuck = self.stuck_ops.lock().unwrap_or_else(|e| e.into_inner());
        let stuck = stuck.get(op).filter(|s| s.times >= STUCK_LIMIT)?;
        Some(format!(
            "not sent: {op} was the call in flight of {} bridge children of {} stopped as stuck, so later calls of \
             it fail at once; the last: {}",
            stuck.times, self.label, stuck.message
        ))
    }
}
