//! A throwaway PostgreSQL server for tests and `cargo xtask conformance --backend postgres`
//! (feature `test-server`).
//!
//! [`TestServer::start`] runs the repository's `scripts/pg-test-server.sh` (embedded in this
//! crate at build time) to create a cluster in a fresh directory of the temporary directory
//! (`$TMPDIR`, else `/tmp`: [`server_root`], the root of the lock files too) with Debian's
//! binaries (`/usr/lib/postgresql/*/bin`, installing the `postgresql` package first when
//! they are missing and we are root), listening on 127.0.0.1 only on a free port; dropping
//! the server (or [`TestServer::stop`]) stops it and removes the directory.
//!
//! Nothing outlives the process: the directory is `<root>/checkpoint-pg-<pid>-<n>`, named after
//! the process that owns it (`conformance_core::leftovers`: a pid file and a lock in
//! `<temp dir>/checkpoint-conformance/`), and [`TestServer::start`] first stops and removes the
//! servers of processes that are gone (a run killed with SIGKILL), naming each on stderr.
//! While a server lives it is registered with `conformance_core::leftovers::on_interrupt`, so
//! a front end's SIGINT / SIGTERM handler stops it too (the server runs in a session of its
//! own and the script, pg_ctl included, in a process group of its own, so a terminal's
//! Ctrl-C, however often repeated, reaches neither).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use conformance_core::leftovers::{self, InterruptGuard};

/// The server script, embedded so the helper works from any working directory.
const SCRIPT: &str = include_str!("../../../scripts/pg-test-server.sh");

/// A running throwaway server; stopped and removed when dropped.
#[derive(Debug)]
pub struct TestServer {
    dir: PathBuf,
    url: String,
    running: bool,
    _interrupt: InterruptGuard,
}

/// Whether the start script is running; [`Starting::wait`] returns once it is not.
#[derive(Debug, Default)]
struct Starting {
    running: Mutex<bool>,
    ended: Condvar,
}

/// Marks the start script as ended when dropped (also when the start fails).
struct Running<'a>(&'a Starting);

impl Starting {
    fn begin(&self) -> Running<'_> {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = true;
        Running(self)
    }

    /// Waits until no start script runs, for at most [`START_WAIT`] (the script gives up on
    /// a server that is not ready well before that).
    fn wait(&self) {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.ended.wait_timeout_while(running, START_WAIT, |r| *r);
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.0.ended.notify_all();
    }
}

/// The longest an interrupt waits for a start script to end before stopping anyway.
const START_WAIT: Duration = Duration::from_secs(120);

/// The prefix of the servers' directories in [`server_root`].
const DIR_PREFIX: &str = "checkpoint-pg-";

/// Stops the server in `dir` (if any) and removes the directory.
fn stop_dir(dir: &Path) -> io::Result<()> {
    let out = run_script(&["stop", &dir.to_string_lossy()])?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(String::from_utf8_lossy(&out.stderr).trim_end().to_owned()))
    }
}

/// The longest unix socket path the server can listen on (`sun_path`, 108 bytes with its
/// NUL), which the server's directory must leave room for.
const MAX_SOCKET_PATH: usize = 107;

/// Where the servers' directories go: the temporary directory (`$TMPDIR`, else `/tmp`), as
/// the lock files (issue 40 row 14: the servers ignored `$TMPDIR`). A temporary directory
/// too long for the server's unix socket (`<dir>/sock/.s.PGSQL.<port>`) gives `/tmp`.
pub fn server_root() -> PathBuf {
    let tmp = std::env::temp_dir();
    let longest = format!("/{DIR_PREFIX}{}-xxxxxxxx/sock/.s.PGSQL.65535", u32::MAX);
    if tmp.as_os_str().len() + longest.len() <= MAX_SOCKET_PATH {
        tmp
    } else {
        PathBuf::from("/tmp")
    }
}

/// Stops and removes the throwaway servers (`<root>/checkpoint-pg-<pid>-<rest>`, in
/// [`server_root`] and in `/tmp`, where older kits made them) whose owning process is gone
/// (a run killed with SIGKILL), naming each on stderr. [`TestServer::start`] calls it; a
/// front end calls it at the start of every run, whatever the backend, so an orphan does
/// not wait for the next run that needs a server.
pub fn sweep_orphans() {
    let mut roots = vec![server_root()];
    if roots[0] != Path::new("/tmp") {
        roots.push(PathBuf::from("/tmp"));
    }
    for root in roots {
        for s in leftovers::sweep(&root, DIR_PREFIX, leftovers::Tail::Random(8), stop_dir) {
            eprintln!("note: {} (a throwaway PostgreSQL server, stopped)", s.describe());
        }
    }
}

/// Runs the server script in a process group of its own: a terminal's Ctrl-C (sent to the
/// whole foreground group, again while the user waits) never reaches it, so an interrupt's
/// `stop` (pg_ctl, then removing the directory) runs to its end.
fn run_script(args: &[&str]) -> io::Result<Output> {
    let mut command = Command::new("bash");
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command
        .arg("-c")
        .arg(SCRIPT)
        .arg("pg-test-server.sh")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
}

impl TestServer {
    /// Creates and starts a cluster; returns once `pg_isready` answers.
    ///
    /// # Errors
    /// An `io::Error` whose message carries the script's own explanation (no binaries, initdb
    /// failed, not ready in time, ...).
    pub fn start() -> io::Result<Self> {
        if leftovers::interrupted() {
            // The process is exiting: no server is started that its cleanup would miss.
            return Err(io::Error::other("the run is being interrupted"));
        }
        sweep_orphans();
        let dir = server_root().join(format!(
            "{DIR_PREFIX}{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ));
        let dir_text = dir.to_string_lossy().into_owned();
        // Registered before the script runs: an interrupt during initdb removes it too. It
        // first waits for a running start to end: stopping while pg_ctl was still bringing
        // the server up removed the directory under it, and the server then ran on forever
        // with nothing left that a later sweep could find it by.
        let stop_on_interrupt = dir.clone();
        let starting = Arc::new(Starting::default());
        let start_ended = starting.clone();
        let interrupt = leftovers::on_interrupt(move || {
            start_ended.wait();
            if let Err(e) = stop_dir(&stop_on_interrupt) {
                eprintln!("stopping the PostgreSQL test server in {} failed: {e}", stop_on_interrupt.display());
            }
        });
        let out = {
            let _running = starting.begin();
            run_script(&["start", &dir_text])?
        };
        if !out.status.success() {
            // Whatever was made is removed; the script's explanation is the error.
            let _ = run_script(&["stop", &dir_text]);
            return Err(io::Error::other(format!(
                "starting a throwaway PostgreSQL server failed:\n{}",
                String::from_utf8_lossy(&out.stderr).trim_end()
            )));
        }
        let url = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if url.is_empty() {
            let _ = run_script(&["stop", &dir_text]);
            return Err(io::Error::other("the PostgreSQL test server script printed no URL"));
        }
        Ok(Self { dir, url, running: true, _interrupt: interrupt })
    }

    /// The connection URL, `postgresql://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server and removes its directory.
    ///
    /// # Errors
    /// An `io::Error` with the script's message when stopping failed.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> io::Result<()> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        let out = run_script(&["stop", &self.dir.to_string_lossy()])?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "stopping the PostgreSQL test server failed:\n{}",
                String::from_utf8_lossy(&out.stderr).trim_end()
            )));
        }
        Ok(())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Err(e) = self.stop_inner() {
            eprintln!("{e}");
        }
    }
}
