//! The host's end of one child process: spawning it so that it dies with the host, a
//! writer thread for requests, a reader thread that matches answers to requests by id,
//! the child's stderr tail, and the end of the child (docs/bridge-protocol.md,
//! "Lifetime").
//!
//! Everything here is plain threads and channels, so a connection serves calls from any
//! number of tokio runtimes at once (the runner gives every case a runtime of its own).

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use conformance_core::CallNote;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::{id_prefix, run_token, Answer, NoArgs, RemoteError, Request, PARENT_PID_ENV, RUN_TOKEN_ENV};

/// How many bytes of the child's stderr are kept for error messages.
const STDERR_TAIL: usize = 4096;
/// How long a dead child's reader waits for its exit status before failing the calls.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

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
/// Requests and answers from this size on are noted on the call ([`CallNote`]), so a
/// timeout names their size.
const LARGE: usize = 1 << 20;
/// How many times an operation may be the one call in flight of a child stopped as stuck
/// before its later calls fail at once, unsent (one blocked method must not cost every
/// later case a child and the ping deadline: issue 40 row 3).
pub(crate) const STUCK_LIMIT: u32 = 2;
/// The start of the line the Python child writes on stderr when its event loop is blocked.
const STALL_PREFIX: &str = "checkpoint-bridge: event loop blocked";
/// Writes go to the child's stdin in pieces of this size, each one progress.
const WRITE_CHUNK: usize = 1 << 20;

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

/// The operations that got a child stopped as stuck, with how often each was the only
/// call in flight then; shared by the children of one registration
/// ([`Connection::spawn_sharing`]).
pub(crate) type StuckOps = Arc<Mutex<HashMap<String, (u32, String)>>>;

/// How to start a child: program, arguments, extra environment, and a label for messages.
#[derive(Clone, Debug)]
pub struct ChildCommand {
    /// The program (a Python interpreter, the test binary, ...).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables added to the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// How messages name the child (`python:sqlite`).
    pub label: String,
}

/// Why a call got no answer from the saver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The child answered with an error.
    Remote(RemoteError),
    /// The child is gone, or the connection broke; the message says why.
    Dead(String),
    /// The child's answer to this call could not be read.
    BadAnswer(String),
    /// No answer in time (only for blocking calls).
    Timeout(Duration),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Remote(e) => write!(f, "{}: {}", e.kind, e.message),
            Self::Dead(m) | Self::BadAnswer(m) => f.write_str(m),
            Self::Timeout(d) => write!(f, "no answer within {:.1} s", d.as_secs_f64()),
        }
    }
}

type Reply = Box<dyn FnOnce(Result<Box<RawValue>, CallError>) + Send>;

/// A call in flight.
struct Flight {
    op: String,
    since: Instant,
    request_bytes: usize,
    /// The caller's note, told about a large request or answer.
    note: Option<CallNote>,
    reply: Reply,
}

#[derive(Default)]
struct Pending {
    replies: HashMap<u64, Flight>,
    /// The watchdog's last ping: when it was sent, and set once it was answered.
    ping: Option<(Instant, Arc<AtomicBool>)>,
    /// Calls still in flight whose caller stopped waiting (a case that timed out).
    abandoned: std::collections::HashSet<u64>,
    /// Set once the connection is broken: every later call fails with it at once.
    dead: Option<String>,
}

struct Shared {
    label: String,
    pid: u32,
    pending: Mutex<Pending>,
    stderr_tail: Mutex<VecDeque<u8>>,
    /// The exit status once the child was reaped.
    exit: Mutex<Option<ExitStatus>>,
    exited: Condvar,
    /// True once the child has exited (checked, under this lock, before signalling its pid).
    gone: Mutex<bool>,
    /// When bytes last moved on the child's pipes (a piece of a request written, a piece
    /// of an answer read).
    progress: Mutex<Instant>,
}

impl Shared {
    fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            "(nothing on stderr)".to_owned()
        } else {
            text.replace('\n', " | ")
        }
    }

    /// Waits briefly for the exit status and describes the end of the child.
    fn death_message(&self, what: &str) -> String {
        let exit = self.exit.lock().unwrap_or_else(|e| e.into_inner());
        let (exit, _) =
            self.exited.wait_timeout_while(exit, EXIT_STATUS_WAIT, |s| s.is_none()).unwrap_or_else(|e| e.into_inner());
        let status = match *exit {
            Some(s) => s.to_string(),
            None => "no exit status yet".to_owned(),
        };
        format!(
            "the bridge child {} (pid {}) {what} ({status}); its stderr ends: {}",
            self.label,
            self.pid,
            self.stderr_tail()
        )
    }

    /// Marks the connection broken and fails every call in flight with `message`.
    fn fail_all(&self, message: String) {
        let replies: Vec<Reply> = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            if p.dead.is_none() {
                p.dead = Some(message.clone());
            }
            p.abandoned.clear();
            p.ping = None;
            p.replies.drain().map(|(_, f)| f.reply).collect()
        };
        for r in replies {
            r(Err(CallError::Dead(message.clone())));
        }
    }

    fn touch(&self) {
        *self.progress.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Tells the note of call `id`, if it has one, `text`.
    fn note(&self, id: u64, text: impl FnOnce(&Flight) -> String) {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = p.replies.get(&id) {
            if let Some(n) = &f.note {
                n.set(text(f));
            }
        }
    }

    /// SIGKILLs the child unless it has already exited (never a recycled pid: the child is
    /// reaped only after `gone` is set under the same lock).
    fn kill(&self) {
        let gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
        if !*gone {
            // SAFETY: kill(2) with the pid of our own unreaped child.
            unsafe {
                libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// A running child and the calls in flight to it. Dropping the last handle closes the
/// child's stdin (it then exits) and kills it if it has not exited after a grace time.
pub(crate) struct Connection {
    shared: Arc<Shared>,
    writer: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    next_id: AtomicU64,
    /// Operations that got a child of this registration stopped as stuck.
    stuck_ops: StuckOps,
    /// The run's work directory, removed after the child is gone, and by the interrupt
    /// cleanup (`conformance_core::leftovers::on_interrupt`) while it lives.
    workdir: Mutex<Option<(tempfile::TempDir, conformance_core::leftovers::InterruptGuard)>>,
    /// An interrupt kills the child first (the newest cleanup runs first): a child left
    /// running while the run's other cleanups go (its PostgreSQL schemas dropped, its work
    /// directory removed) could make them again before it dies with the host.
    _killed_on_interrupt: conformance_core::leftovers::InterruptGuard,
}

impl Connection {
    /// Starts the child (see the module docs) with `workdir` as its run directory.
    ///
    /// # Errors
    /// A message when the program cannot be started.
    #[cfg(test)]
    pub(crate) fn spawn(command: &ChildCommand, workdir: Option<tempfile::TempDir>) -> Result<Arc<Self>, String> {
        Self::spawn_sharing(command, workdir, StuckOps::default())
    }

    /// [`Connection::spawn`], sharing what earlier children found stuck: an operation that
    /// was the one call in flight of [`STUCK_LIMIT`] children stopped as stuck fails at
    /// once, unsent.
    pub(crate) fn spawn_sharing(
        command: &ChildCommand,
        workdir: Option<tempfile::TempDir>,
        stuck_ops: StuckOps,
    ) -> Result<Arc<Self>, String> {
        let (tx, rx) = mpsc::channel();
        let cmd = command.clone();
        // The thread that spawns the child also waits for it and lives exactly as long as
        // it: PR_SET_PDEATHSIG fires when the spawning *thread* ends, so it must not be a
        // short-lived runtime thread.
        let spawned = std::thread::Builder::new().name(format!("bridge-child-{}", command.label)).spawn(move || {
            let mut c = Command::new(&cmd.program);
            c.args(&cmd.args)
                .envs(cmd.env.iter().map(|(k, v)| (k, v)))
                .env(PARENT_PID_ENV, std::process::id().to_string())
                .env(RUN_TOKEN_ENV, run_token())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            die_with_parent(&mut c);
            let mut child = match c.spawn() {
                Ok(child) => child,
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start {} ({}): {e}", cmd.label, cmd.program.display())));
                    return;
                }
            };
            let pid = child.id();
            let shared = Arc::new(Shared {
                label: cmd.label.clone(),
                pid,
                pending: Mutex::new(Pending::default()),
                stderr_tail: Mutex::new(VecDeque::with_capacity(STDERR_TAIL)),
                exit: Mutex::new(None),
                exited: Condvar::new(),
                gone: Mutex::new(false),
                progress: Mutex::new(Instant::now()),
            });
            let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
            let _ = tx.send(Ok((shared.clone(), pipes)));
            wait_without_reaping(pid);
            *shared.gone.lock().unwrap_or_else(|e| e.into_inner()) = true;
            let status = child.wait().ok();
            *shared.exit.lock().unwrap_or_else(|e| e.into_inner()) = status;
            shared.exited.notify_all();
        });
        if let Err(e) = spawned {
            return Err(format!("cannot start a thread for {}: {e}", command.label));
        }
        let (shared, (stdin, stdout, stderr)) =
            rx.recv().map_err(|_| format!("the thread starting {} died", command.label))??;
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            shared.kill();
            return Err(format!("{}: the child's pipes were not set up", command.label));
        };
        let (wtx, wrx) = mpsc::channel::<Vec<u8>>();
        let s = shared.clone();
        std::thread::Builder::new()
            .name("bridge-writer".into())
            .spawn(move || {
                let mut stdin = stdin;
                for line in wrx {
                    let written = line.chunks(WRITE_CHUNK).try_for_each(|piece| {
                        stdin.write_all(piece)?;
                        s.touch();
                        Ok::<_, std::io::Error>(())
                    });
                    if let Err(e) = written.and_then(|()| stdin.flush()) {
                        let msg = s.death_message(&format!("stopped reading requests: {e}"));
                        s.kill();
                        s.fail_all(msg);
                        return;
                    }
                }
                // The sender is gone: dropping stdin tells the child to exit.
            })
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        let s = shared.clone();
        std::thread::Builder::new()
            .name("bridge-reader".into())
            .spawn(move || read_answers(&s, stdout))
            .map_err(|e| format!("cannot start the reader thread: {e}"))?;
        let s = shared.clone();
        std::thread::Builder::new()
            .name("bridge-stderr".into())
            .spawn(move || keep_stderr_tail(&s, stderr))
            .map_err(|e| format!("cannot start the stderr thread: {e}"))?;
        let child_pid = shared.pid;
        let conn = Arc::new(Self {
            shared,
            writer: Mutex::new(Some(wtx)),
            next_id: AtomicU64::new(0),
            stuck_ops,
            workdir: Mutex::new(workdir.map(|w| {
                let path = w.path().to_path_buf();
                let guard = conformance_core::leftovers::on_interrupt(move || {
                    let _ = std::fs::remove_dir_all(&path);
                });
                (w, guard)
            })),
            _killed_on_interrupt: conformance_core::leftovers::on_interrupt(move || {
                conformance_core::leftovers::kill_and_release_child(child_pid)
            }),
        });
        let weak = Arc::downgrade(&conn);
        std::thread::Builder::new()
            .name("bridge-watchdog".into())
            .spawn(move || watch(&weak))
            .map_err(|e| format!("cannot start the watchdog thread: {e}"))?;
        Ok(conn)
    }

    /// The child's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.shared.pid
    }

    /// True while the connection works (the child has not died or broken the protocol).
    pub(crate) fn is_alive(&self) -> bool {
        self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()).dead.is_none()
    }

    /// Sends a request; `reply` gets its answer, or the error that ended the connection.
    fn start<A: Serialize>(&self, op: &str, handle: Option<u64>, args: &A, reply: Reply) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let refused = self.stuck_ops.lock().unwrap_or_else(|e| e.into_inner()).get(op).and_then(|(n, why)| {
            (*n >= STUCK_LIMIT).then(|| {
                format!(
                    "not sent: {op} was the call in flight of {n} bridge children of {} stopped as stuck, so later \
                     calls of it fail at once; the last: {why}",
                    self.shared.label
                )
            })
        });
        if let Some(refused) = refused {
            reply(Err(CallError::Dead(refused)));
            return id;
        }
        let mut line = match serde_json::to_vec(&Request { id, op, handle, args }) {
            Ok(l) => l,
            Err(e) => {
                reply(Err(CallError::BadAnswer(format!("{op}: the request cannot be written: {e}"))));
                return id;
            }
        };
        line.push(b'\n');
        {
            let mut p = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(dead) = &p.dead {
                let dead = dead.clone();
                drop(p);
                reply(Err(CallError::Dead(dead)));
                return id;
            }
            let note = CallNote::current();
            if line.len() >= LARGE {
                if let Some(n) = &note {
                    n.set(format!("through the bridge: a request of {}, no answer yet", size_text(line.len())));
                }
            }
            p.replies.insert(
                id,
                Flight { op: op.to_owned(), since: Instant::now(), request_bytes: line.len(), note, reply },
            );
        }
        let sent = match &*self.writer.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(w) => w.send(line).is_ok(),
            None => false,
        };
        if !sent {
            let r = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()).replies.remove(&id);
            if let Some(f) = r {
                (f.reply)(Err(CallError::Dead(format!("the bridge child {} was shut down", self.shared.label))));
            }
        }
        id
    }

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
                let mut stuck = self.stuck_ops.lock().unwrap_or_else(|e| e.into_inner());
                let entry = stuck.entry("hello".into()).or_default();
                entry.0 += 1;
                entry.1.clone_from(&message);
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
            None | Some((_, true))
                if oldest.is_some_and(|since| due(since)) && ping.is_none_or(|(sent, _)| due(sent)) =>
            {
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
        let mut calls: Vec<(Instant, String, usize)> = {
            let p = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.replies.values().filter(|f| f.op != "ping").map(|f| (f.since, f.op.clone(), f.request_bytes)).collect()
        };
        calls.sort_by_key(|(since, _, _)| *since);
        let Some((since, op, bytes)) = calls.first().cloned() else { return };
        let size = if bytes >= LARGE { format!(", a request of {}", size_text(bytes)) } else { String::new() };
        let others = match calls.len() - 1 {
            0 => String::new(),
            n => {
                let ops: Vec<&str> = calls[1..].iter().take(3).map(|(_, op, _)| op.as_str()).collect();
                format!(" and {n} more ({})", ops.join(", "))
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
            let mut stuck = self.stuck_ops.lock().unwrap_or_else(|e| e.into_inner());
            let entry = stuck.entry(op).or_insert((0, String::new()));
            entry.0 += 1;
            entry.1 = message.clone();
        }
        self.shared.kill();
        self.shared.fail_all(message);
    }

    /// Marks call `id` abandoned when it is still in flight (its caller stopped waiting).
    fn abandon(&self, id: u64) {
        let mut p = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        if p.replies.contains_key(&id) {
            p.abandoned.insert(id);
        }
    }

    /// True while a call whose caller stopped waiting (a case timed out) has no answer:
    /// the child may be stuck, and [`Connection::answers_within`] tells.
    pub(crate) fn has_abandoned_calls(&self) -> bool {
        !self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()).abandoned.is_empty()
    }

    /// True when the child answers a `ping` within `limit`: any answer, an error from a
    /// child that does not know the op included (docs/bridge-protocol.md "Operations").
    pub(crate) async fn answers_within(&self, limit: Duration) -> bool {
        let answer = tokio::time::timeout(limit, self.call::<_, serde_json::Value>("ping", None, &NoArgs {})).await;
        matches!(answer, Ok(Ok(_) | Err(CallError::Remote(_))))
    }

    /// Calls `op` and decodes its result as `T`.
    pub(crate) async fn call<A: Serialize, T: DeserializeOwned + Send + 'static>(
        &self,
        op: &str,
        handle: Option<u64>,
        args: &A,
    ) -> Result<T, CallError> {
        /// Marks the call abandoned when the future is dropped before its answer.
        struct Waiting<'a>(&'a Connection, u64, bool);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                if !self.2 {
                    self.0.abandon(self.1);
                }
            }
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        // The answer is decoded where it arrives (the reader thread), not on the caller's
        // runtime: a 300 MB answer then costs the caller time, never its ability to time out.
        let what = op.to_owned();
        let id = self.start(
            op,
            handle,
            args,
            Box::new(move |r| {
                let _ = tx.send(r.and_then(|raw| decode::<T>(&what, &raw)));
            }),
        );
        let mut waiting = Waiting(self, id, false);
        let answer = rx.await;
        waiting.2 = true;
        answer.map_err(|_| CallError::Dead("the bridge connection dropped the call".into()))?
    }

    /// Calls `op` and waits for it on this thread, at most `timeout` (for the trait's one
    /// sync method, `get_next_version`, and for closing an instance on drop).
    pub(crate) fn call_blocking<A: Serialize, T: DeserializeOwned + Send + 'static>(
        &self,
        op: &str,
        handle: Option<u64>,
        args: &A,
        timeout: Duration,
    ) -> Result<T, CallError> {
        let (tx, rx) = mpsc::channel();
        let what = op.to_owned();
        let id = self.start(
            op,
            handle,
            args,
            Box::new(move |r| {
                let _ = tx.send(r.and_then(|raw| decode::<T>(&what, &raw)));
            }),
        );
        rx.recv_timeout(timeout).map_err(|_| {
            self.abandon(id);
            CallError::Timeout(timeout)
        })?
    }

    /// Closes the child's stdin and waits up to `grace` for it to exit; kills it after
    /// that. Calls still in flight fail.
    pub(crate) fn shutdown(&self, grace: Duration) {
        self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let exit = self.shared.exit.lock().unwrap_or_else(|e| e.into_inner());
        let (exit, _) =
            self.shared.exited.wait_timeout_while(exit, grace, |s| s.is_none()).unwrap_or_else(|e| e.into_inner());
        let exited = exit.is_some();
        drop(exit);
        if !exited {
            self.shared.kill();
        }
        self.shared.fail_all(format!("the bridge child {} was shut down", self.shared.label));
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Close stdin; a thread gives the child a grace time to close its savers, then
        // kills it and removes the run directory.
        self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let shared = self.shared.clone();
        let workdir = self.workdir.lock().unwrap_or_else(|e| e.into_inner()).take();
        if shared.exit.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            // Already gone (after shutdown): remove the run directory now, not in a thread
            // the process may not wait for.
            drop(workdir);
            return;
        }
        let _ = std::thread::Builder::new().name("bridge-end".into()).spawn(move || {
            let exit = shared.exit.lock().unwrap_or_else(|e| e.into_inner());
            let (exit, _) = shared
                .exited
                .wait_timeout_while(exit, Duration::from_secs(10), |s| s.is_none())
                .unwrap_or_else(|e| e.into_inner());
            let exited = exit.is_some();
            drop(exit);
            if !exited {
                shared.kill();
            }
            drop(workdir);
        });
    }
}

fn decode<T: DeserializeOwned>(op: &str, raw: &RawValue) -> Result<T, CallError> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let text = raw.get();
        let head: String = text.chars().take(300).collect();
        let more = if text.len() > head.len() { "…" } else { "" };
        CallError::BadAnswer(format!("the bridge child's answer to {op} does not fit: {e}; the answer: {head}{more}"))
    })
}

/// The watchdog of a connection: [`Connection::watch_once`] every [`WATCH_TICK`] until the
/// connection is dropped or broken.
fn watch(conn: &Weak<Connection>) {
    loop {
        std::thread::sleep(WATCH_TICK);
        let Some(conn) = conn.upgrade() else { return };
        if !conn.is_alive() {
            return;
        }
        conn.watch_once();
    }
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
fn read_answers(shared: &Arc<Shared>, stdout: std::process::ChildStdout) {
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
        p.replies.remove(&id).map(|f| f.reply)
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

fn keep_stderr_tail(shared: &Shared, mut stderr: std::process::ChildStderr) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut tail = shared.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        tail.extend(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}

/// Blocks until child `pid` has exited, without reaping it (so its pid stays ours).
fn wait_without_reaping(pid: u32) {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid(2).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with WNOWAIT leaves it to be reaped by wait().
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// On Linux: the child gets SIGKILL when the thread that spawned it ends (the host
/// died), and exits at once if the host is already gone by the time it runs.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid() before fork; in the child only async-signal-safe calls
    // (prctl, getppid, _exit).
    let parent = unsafe { libc::getpid() };
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}
