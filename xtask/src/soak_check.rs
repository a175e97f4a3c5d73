//! What `cargo xtask soak` ([`crate::soak`]) checks after each run, and the places it gives
//! a run: a `$TMPDIR` and a reports directory of its own, the user's files beside
//! `--sqlite-path`, a given PostgreSQL server with look-alike schemas planted on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::soak::MARK_ENV;

/// The soak's own directory (`<target>/soak-<pid>`), removed when dropped.
pub(crate) struct Root {
    path: PathBuf,
    next: std::cell::Cell<u32>,
}

impl Root {
    pub(crate) fn new() -> std::io::Result<Self> {
        let path = crate::soak::soak_dir();
        std::fs::create_dir_all(&path)?;
        Ok(Self { path, next: std::cell::Cell::new(0) })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Fresh directories and a mark for the next run. `fresh_bridge`: the bridge's managed
    /// environments start empty (a first-use install); else they live in `bridge_home`.
    pub(crate) fn run_env(&self, fresh_bridge: bool, bridge_home: &Path) -> std::io::Result<RunEnv> {
        let i = self.next.get();
        self.next.set(i + 1);
        let dir = self.path.join(format!("run-{i}"));
        let env = RunEnv {
            mark: format!("soak-{}-{i}", std::process::id()),
            tmp: dir.join("tmp"),
            reports: dir.join("reports"),
            cargo_target: if fresh_bridge { dir.join("cargo") } else { bridge_home.to_path_buf() },
            dir,
        };
        std::fs::create_dir_all(&env.tmp)?;
        std::fs::create_dir_all(&env.reports)?;
        Ok(env)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One run's places and mark.
pub(crate) struct RunEnv {
    /// The value of [`MARK_ENV`] in every process of the run.
    pub(crate) mark: String,
    /// The run's `$TMPDIR`: empty at its start, and must be empty after it.
    pub(crate) tmp: PathBuf,
    /// Where the run writes `--json` and `--junit`.
    pub(crate) reports: PathBuf,
    /// The run's `CARGO_TARGET_DIR`: the bridge keeps its managed environments and run
    /// directories in `<it>/checkpoint-bridge`.
    pub(crate) cargo_target: PathBuf,
    dir: PathBuf,
}

/// The user's files beside `--sqlite-path`: an SQLite database with a row, and files named
/// like the kit's case files and markers that the kit did not make.
pub(crate) struct UserFiles {
    dir: PathBuf,
    snapshot: BTreeMap<String, Vec<u8>>,
}

impl UserFiles {
    pub(crate) fn plant(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // Empty: the kit takes it as a new database, and must never write it.
        std::fs::write(dir.join("user.db"), b"").map_err(|e| format!("{}: {e}", dir.display()))?;
        for name in ["user.db.case-99999-3", "user.db.case-1-0", "user.db-wal.bak", ".checkpoint-report-99999-0"] {
            std::fs::write(dir.join(name), format!("{name}: the user's, not the kit's\n"))
                .map_err(|e| e.to_string())?;
        }
        let snapshot = read_dir_bytes(dir);
        Ok(Self { dir: dir.to_path_buf(), snapshot })
    }

    pub(crate) fn database(&self) -> PathBuf {
        self.dir.join("user.db")
    }
}

fn read_dir_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let bytes = std::fs::read(e.path()).unwrap_or_else(|_| b"<not a readable file>".to_vec());
        out.insert(e.file_name().to_string_lossy().into_owned(), bytes);
    }
    out
}

/// A PostgreSQL server the soak starts and gives to its runs with `--postgres-url`, with
/// look-alike schemas planted on it.
pub(crate) struct GivenServer {
    server: conformance_backends::postgres::test_server::TestServer,
    psql: PathBuf,
}

/// Schemas named like the kit's, without its marker: never removed by a run.
const LOOK_ALIKES: [&str; 3] = ["checkpoint_test_lookalike", "checkpoint_test_0a1b2c3d_1", "checkpoint_test_"];

impl GivenServer {
    pub(crate) fn start() -> Result<Self, String> {
        let server = conformance_backends::postgres::test_server::TestServer::start()
            .map_err(|e| format!("could not start a PostgreSQL server: {e}"))?;
        let psql = find_psql().ok_or("no psql (Debian's postgresql-client) on PATH or in /usr/lib/postgresql")?;
        let s = Self { server, psql };
        s.plant()?;
        Ok(s)
    }

    fn plant(&self) -> Result<(), String> {
        for schema in LOOK_ALIKES {
            self.sql(&format!(
                "CREATE SCHEMA IF NOT EXISTS \"{schema}\"; \
                 CREATE TABLE IF NOT EXISTS \"{schema}\".mine(x text); \
                 INSERT INTO \"{schema}\".mine SELECT 'keep me' WHERE NOT EXISTS (SELECT 1 FROM \"{schema}\".mine); \
                 COMMENT ON SCHEMA \"{schema}\" IS 'the user''s own schema'"
            ))?;
        }
        Ok(())
    }

    pub(crate) fn url(&self) -> &str {
        self.server.url()
    }

    /// Runs `sql` and returns its rows, one per line (`psql -At`).
    fn sql(&self, sql: &str) -> Result<String, String> {
        let out = Command::new(&self.psql)
            .args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", self.url(), "-c", sql])
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if !out.status.success() {
            return Err(format!("psql: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// What a run left on the server (schemas named like the kit's, not planted), and
    /// planted look-alikes it touched; both are put back as they were.
    fn leftovers(&self) -> Vec<String> {
        let mut left = Vec::new();
        let listed = match self.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'checkpoint\\_test\\_%'") {
            Ok(s) => s,
            Err(e) => return vec![format!("could not list the server's schemas: {e}")],
        };
        for schema in listed.lines().filter(|s| !s.is_empty() && !LOOK_ALIKES.contains(s)) {
            left.push(format!("schema {schema} on the given server"));
            let _ = self.sql(&format!("DROP SCHEMA \"{schema}\" CASCADE"));
        }
        for schema in LOOK_ALIKES {
            match self.sql(&format!("SELECT x FROM \"{schema}\".mine")) {
                Ok(rows) if rows.trim() == "keep me" => {}
                Ok(rows) => left.push(format!("the user's schema {schema} changed: {rows:?}")),
                Err(e) => left.push(format!("the user's schema {schema} is gone or broken: {e}")),
            }
        }
        if let Err(e) = self.plant() {
            left.push(format!("could not plant the look-alikes again: {e}"));
        }
        left
    }

    pub(crate) fn stop(self) {
        let _ = self.server.stop();
    }
}

fn find_psql() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("psql")).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin").join("psql"))
        .collect();
    debian.sort();
    on_path.into_iter().chain(debian.into_iter().rev()).find(|p| p.is_file())
}

/// Sends the run's signal: SIGINT to its whole process group (a terminal's Ctrl-C), SIGTERM
/// to the front end alone (a harness's stop).
pub(crate) fn signal(pid: u32, sigint: bool) {
    let Ok(pid) = i32::try_from(pid) else { return };
    // SAFETY: kill(2) on a pid (or group) this process started; no memory is involved.
    unsafe {
        if sigint {
            libc::kill(-pid, libc::SIGINT);
        } else {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

/// The pids of live processes whose environment holds `MARK_ENV=mark`.
fn marked(mark: &str) -> Vec<(i32, String)> {
    let needle = format!("{MARK_ENV}={mark}\0");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(e.path().join("environ")) else { continue };
        if environ.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd: String = String::from_utf8_lossy(&cmd).replace('\0', " ").chars().take(120).collect();
            out.push((pid, cmd));
        }
    }
    out
}

/// Reaps the orphans this process adopted (it is their subreaper) that have ended.
fn reap() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) with WNOHANG on any child; `status` is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

/// Every path under `dir`, relative, a few at most.
fn entries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What the run of `env` left, each named in a line; everything found is removed after.
pub(crate) fn leftovers(env: &RunEnv, user: &UserFiles, server: Option<&GivenServer>) -> Vec<String> {
    let mut left = Vec::new();
    // Processes: the front end has exited; give what it ended a moment to go.
    let t0 = Instant::now();
    let mut procs = marked(&env.mark);
    while !procs.is_empty() && t0.elapsed() < Duration::from_secs(5) {
        reap();
        std::thread::sleep(Duration::from_millis(50));
        procs = marked(&env.mark);
    }
    for (pid, cmd) in &procs {
        left.push(format!("process {pid}: {cmd}"));
        // SAFETY: kill(2) on a leftover of this soak's run.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    reap();
    let tmp = entries(&env.tmp);
    if !tmp.is_empty() {
        left.push(format!("in $TMPDIR: {}", shown(&tmp)));
    }
    let runs = env.cargo_target.join("checkpoint-bridge").join("runs");
    let run_dirs = entries(&runs);
    let run_dirs: Vec<&String> = run_dirs.iter().filter(|p| !p.contains('/')).collect();
    if !run_dirs.is_empty() {
        left.push(format!("bridge run directories in {}: {run_dirs:?}", runs.display()));
        for d in run_dirs {
            let _ = std::fs::remove_dir_all(runs.join(d));
        }
    }
    left.extend(report_problems(&env.reports));
    let now = read_dir_bytes(&user.dir);
    if now != user.snapshot {
        let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
        let changed: Vec<&String> =
            user.snapshot.iter().filter(|(k, v)| now.get(*k) != Some(*v)).map(|(k, _)| k).collect();
        left.push(format!(
            "beside --sqlite-path: {:?} before, {:?} after; changed or removed: {changed:?}",
            names(&user.snapshot),
            names(&now)
        ));
        for name in now.keys().filter(|k| !user.snapshot.contains_key(*k)) {
            let _ = std::fs::remove_file(user.dir.join(name));
        }
        for (name, bytes) in &user.snapshot {
            let _ = std::fs::write(user.dir.join(name), bytes);
        }
    }
    if let Some(s) = server {
        left.extend(s.leftovers());
    }
    let _ = std::fs::remove_dir_all(&env.dir);
    left
}

/// A report is whole or absent, and nothing else is in the reports directory (a
/// `.checkpoint-report-*` temporary file).
fn report_problems(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for name in entries(dir) {
        let p = dir.join(&name);
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        match name.as_str() {
            "report.json" if serde_json::from_str::<serde_json::Value>(&text).is_err() => {
                out.push(format!("a half-written JSON report ({} bytes)", text.len()));
            }
            "report.xml" if !text.trim_end().ends_with("</testsuites>") => {
                out.push(format!("a half-written JUnit report ({} bytes)", text.len()));
            }
            "report.json" | "report.xml" => {}
            other => out.push(format!("in the reports' directory: {other}")),
        }
    }
    out
}

fn shown(paths: &[String]) -> String {
    let mut s = paths.iter().take(6).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 6 {
        s.push_str(&format!(" and {} more", paths.len() - 6));
    }
    s
}
