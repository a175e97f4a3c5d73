//! The host's end of one child process: spawning it so that it dies with the host, a
//! writer thread for requests, a reader thread that matches answers to requests by id,
//! the child's stderr tail, and the end of the child (docs/bridge-protocol.md,
//! "Lifetime").
//!
//! Everything here is plain threads and channels, so a connection serves calls from any
//! number of tokio runtimes at once (the runner gives every case a runtime of its own).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use conformance_core::CallNote;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::{run_token, NoArgs, RemoteError, Request, PARENT_PID_ENV, RUN_TOKEN_ENV};

mod answers;
mod stderr;
mod watchdog;

pub(crate) use answers::size_text;
use answers::{decode, read_answers};
use stderr::StderrTail;
use watchdog::watch;
pub(crate) use watchdog::{StuckOps, PING_DEADLINE};

/// How long a dead child's reader waits for its exit status before failing the calls.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

/// Requests and answers from this size on are noted on the call ([`CallNote`]), so a
/// timeout names their size.
const LARGE: usize = 1 << 20;
/// Writes go to the child's stdin in pieces of this size, each one progress.
const WRITE_CHUNK: usize = 1 << 20;

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
    /// The cases ([`CallNote::case`]) whose calls were in flight when it broke.
    dead_with: std::collections::BTreeSet<Option<u64>>,
}

struct Shared {
    label: String,
    pid: u32,
    pending: Mutex<Pending>,
    stderr_tail: StderrTail,
    /// The exit status once the child was reaped.
    exit: Mutex<Option<ExitStatus>>,
    exited: Condvar,
    /// True once the child has exited (checked, under this lock, before signalling its pid).
    gone: Mutex<bool>,
    /// When bytes last moved on the child's pipes (a piece of a request written, a piece
    /// of an answer read).
    progress: Mutex<Instant>,
    /// Operations that got a child of this registration stopped as stuck; an operation's
    /// entry goes when a call of it is answered (the child is not stuck in every call of it).
    stuck_ops: StuckOps,
}

impl Shared {
    /// The child's stderr tail as it is now ([`StderrTail::text`]).
    fn stderr_tail(&self) -> String {
        self.stderr_tail.text(None)
    }

    /// Waits briefly (at most [`EXIT_STATUS_WAIT`] in all) for the exit status and the end of
    /// its stderr, and describes the end of the child.
    fn death_message(&self, what: &str) -> String {
        let start = Instant::now();
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
            self.stderr_tail.text(Some(EXIT_STATUS_WAIT.saturating_sub(start.elapsed())))
        )
    }

    /// Marks the connection broken and fails every call in flight with `message`.
    ///
    /// Which of the calls of several cases in flight made the child die or block is not
    /// known (the oldest may await while a later one blocks): then each is marked disturbed
    /// by another call ([`CallNote::disturbed`]), and the runner runs its case again alone,
    /// where the calls to blame are its own. Calls of one case only are that case's doing.
    fn fail_all(&self, message: String) {
        let (flights, with) = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let flights: Vec<Flight> = p.replies.drain().map(|(_, f)| f).collect();
            let with: std::collections::BTreeSet<Option<u64>> =
                flights.iter().filter(|f| f.op != "ping").map(|f| f.note.as_ref().and_then(CallNote::case)).collect();
            if p.dead.is_none() {
                p.dead = Some(message.clone());
                p.dead_with.clone_from(&with);
            }
            p.abandoned.clear();
            p.ping = None;
            (flights, with)
        };
        if with.len() > 1 {
            let calls = flights.iter().filter(|f| f.op != "ping").count();
            let why = format!(
                "one of its calls was in flight when the bridge child {} stopped serving with {calls} calls of {} \
                 cases in flight (which one to blame is not known)",
                self.label,
                with.len()
            );
            flights.iter().filter_map(|f| f.note.as_ref()).for_each(|n| n.disturbed(why.clone()));
        }
        for f in flights {
            (f.reply)(Err(CallError::Dead(message.clone())));
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
    /// was the one call in flight of [`watchdog::STUCK_LIMIT`] children stopped as stuck, with no
    /// call of it answered in between, fails at once, unsent.
    pub(crate) fn spawn_sharing(
        command: &ChildCommand,
        workdir: Option<tempfile::TempDir>,
        stuck_ops: StuckOps,
    ) -> Result<Arc<Self>, String> {
        let (tx, rx) = mpsc::channel();
        let cmd = command.clone();
        let ops = stuck_ops.clone();
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
                stderr_tail: StderrTail::default(),
                exit: Mutex::new(None),
                exited: Condvar::new(),
                gone: Mutex::new(false),
                progress: Mutex::new(Instant::now()),
                stuck_ops: ops,
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
            .spawn(move || s.stderr_tail.keep(stderr))
            .map_err(|e| format!("cannot start the stderr thread: {e}"))?;
        let child_pid = shared.pid;
        let dying = shared.clone();
        let conn = Arc::new(Self {
            shared,
            writer: Mutex::new(Some(wtx)),
            next_id: AtomicU64::new(0),
            workdir: Mutex::new(workdir.map(|w| {
                let path = w.path().to_path_buf();
                let guard = conformance_core::leftovers::on_interrupt(move || {
                    // A connection dropped while its child still closes its savers keeps
                    // this guard (not the one that kills the child): the child goes
                    // first, so it writes nothing in the directory being removed.
                    dying.kill();
                    let exit = dying.exit.lock().unwrap_or_else(|e| e.into_inner());
                    drop(dying.exited.wait_timeout_while(exit, Duration::from_secs(2), |s| s.is_none()));
                    let _ = conformance_core::leftovers::remove_dir(&path);
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
        let note = CallNote::current();
        // A case run again alone is sent its calls: its verdict must be the saver's.
        let refused = self.shared.refusal(op).filter(|_| !note.as_ref().is_some_and(CallNote::alone));
        if let Some(refused) = refused {
            if let Some(n) = &note {
                n.refused(refused.clone());
            }
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
                // The saver lived in a child that had stopped serving: not this case's doing
                // unless its own calls, and only its, were in flight then.
                let own = p.dead_with.len() == 1 && p.dead_with.contains(&note.as_ref().and_then(CallNote::case));
                drop(p);
                if let Some(n) = note.as_ref().filter(|_| !own) {
                    n.disturbed(format!(
                        "its saver lived in the bridge child {}, which had stopped serving before this call",
                        self.shared.label
                    ));
                }
                reply(Err(CallError::Dead(dead)));
                return id;
            }
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
    pub(crate) async fn call<A, T>(&self, op: &str, handle: Option<u64>, args: &A) -> Result<T, CallError>
    where
        A: Serialize,
        T: DeserializeOwned + Send + 'static,
    {
        self.call_read(op, handle, args, |json| serde_json::from_str(json)).await
    }

    /// Calls `op` and reads its result with `read` (from the answer's JSON text).
    pub(crate) async fn call_read<A: Serialize, T: Send + 'static>(
        &self,
        op: &str,
        handle: Option<u64>,
        args: &A,
        read: fn(&str) -> serde_json::Result<T>,
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
                let _ = tx.send(r.and_then(|raw| decode(&what, &raw, read)));
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
                let _ = tx.send(r.and_then(|raw| decode(&what, &raw, |json| serde_json::from_str::<T>(json))));
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
