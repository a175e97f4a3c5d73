//! What a run leaves on disk while it goes (temporary directories, case databases beside a
//! chosen path, a throwaway PostgreSQL server) and how nothing of it outlives the run:
//!
//! - Every such entry is named `<prefix><pid>-<rest>`, `pid` being the process that made it.
//! - Each process that makes entries first [`claim`]s `<temp dir>/checkpoint-conformance/<pid>.lock`
//!   and holds an exclusive lock on it until it exits (the kernel drops the lock when the
//!   process dies, SIGKILL included). [`process_gone`] says a pid is gone when its lock file
//!   can be locked, or, without a lock file (a process of an older kit), when `kill(pid, 0)`
//!   answers ESRCH. A pid reused by an unrelated process so does not keep leftovers alive.
//! - [`sweep`] removes the entries of a directory whose process is gone; every maker calls it
//!   before it makes its first entry, so the next run removes what a killed run left.
//! - [`on_interrupt`] registers what to undo when the process is interrupted (SIGINT,
//!   SIGTERM): a front end that handles those signals calls [`run_interrupt_cleanups`]
//!   before it exits (`cargo xtask conformance` does).
//! - [`remove_dir`] removes a directory without needing a file descriptor when it is empty
//!   (`rmdir`), so a run out of file handles (EMFILE) still removes what it made.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The directory of the lock files, under the temporary directory.
pub const LOCK_DIR: &str = "checkpoint-conformance";

/// The lock file of this process, held (locked) for the process's lifetime.
static CLAIM: OnceLock<Option<File>> = OnceLock::new();

fn lock_dir() -> PathBuf {
    std::env::temp_dir().join(LOCK_DIR)
}

/// Takes this process's lock (`<temp dir>/checkpoint-conformance/<pid>.lock`) once, and
/// removes the lock files of processes that are gone, naming them in one stderr line
/// (`note: removed 2 lock files from DIR, left by earlier runs ... (processes 12, 34, gone)`). Call before making an entry named
/// after this process; [`sweep`] calls it. When the lock file cannot be made, liveness falls
/// back to `kill(pid, 0)` and nothing fails.
pub fn claim() {
    CLAIM.get_or_init(|| {
        let dir = lock_dir();
        let _ = std::fs::create_dir_all(&dir);
        let mut gone = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let name = e.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.strip_suffix(".lock")).and_then(|p| p.parse::<u32>().ok())
                else {
                    continue;
                };
                if pid != std::process::id()
                    && lock_is_free(&e.path()) == Some(true)
                    && std::fs::remove_file(e.path()).is_ok()
                {
                    gone.push(pid);
                }
            }
        }
        if let Some(note) = stale_locks_note(&dir, gone) {
            eprintln!("{note}");
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(lock_name(std::process::id())))
            .ok()?;
        file.try_lock().ok()?;
        Some(file)
    });
}

/// The one stderr line [`claim`] prints for the lock files it removed (`pids`: their
/// processes, gone: killed runs or crash-test children), or `None` when it removed none.
fn stale_locks_note(dir: &Path, mut pids: Vec<u32>) -> Option<String> {
    if pids.is_empty() {
        return None;
    }
    pids.sort_unstable();
    const SHOWN: usize = 8;
    let mut named: Vec<String> = pids.iter().take(SHOWN).map(u32::to_string).collect();
    if pids.len() > SHOWN {
        named.push(format!("and {} more", pids.len() - SHOWN));
    }
    let (files, processes) = if pids.len() == 1 { ("file", "process") } else { ("files", "processes") };
    Some(format!(
        "note: removed {} lock {files} from {}, left by earlier runs that did not finish ({processes} {}, gone)",
        pids.len(),
        dir.display(),
        named.join(", ")
    ))
}

/// Removes this process's lock file (a front end calls it when the run is over and
/// everything it made is gone); a later [`claim`] would take it again.
pub fn release() {
    if let Some(Some(_)) = CLAIM.get() {
        let _ = std::fs::remove_file(lock_dir().join(lock_name(std::process::id())));
        // The directory goes when it is empty (another process may be using it).
        let _ = std::fs::remove_dir(lock_dir());
    }
}

/// Removes the lock file of child process `pid` once it is gone (a crash-test child this
/// process killed with SIGKILL and reaped), so the next run does not name it as a run that
/// did not finish. A lock still held (the process lives) is kept.
pub fn release_child(pid: u32) {
    let path = lock_dir().join(lock_name(pid));
    if pid != std::process::id() && lock_is_free(&path) == Some(true) {
        let _ = std::fs::remove_file(path);
    }
}

fn lock_name(pid: u32) -> String {
    format!("{pid}.lock")
}

/// `Some(true)` when the lock file at `path` could be locked (its holder is gone), `Some(false)`
/// when another process holds it, `None` when it cannot be opened.
fn lock_is_free(path: &Path) -> Option<bool> {
    let f = File::options().read(true).open(path).ok()?;
    match f.try_lock() {
        Ok(()) => Some(true),
        Err(std::fs::TryLockError::WouldBlock) => Some(false),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Whether process `pid` is gone: its lock file (see the module docs) can be locked, or it
/// has none and `kill(pid, 0)` answers ESRCH. This process is never gone; when nothing can
/// be told (not Unix, no lock file), the answer is `false` (keep).
pub fn process_gone(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    if let Some(free) = lock_is_free(&lock_dir().join(lock_name(pid))) {
        return free;
    }
    pid_gone(pid)
}

#[cfg(unix)]
fn pid_gone(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks whether the process exists.
    unsafe { libc::kill(pid, 0) != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) }
}

#[cfg(not(unix))]
fn pid_gone(_pid: u32) -> bool {
    false
}

/// Sends SIGKILL to the child process `pid` that this process started (Unix; elsewhere
/// nothing). For an interrupt cleanup ([`on_interrupt`]) that must not leave a child
/// running after the front end exits.
pub fn kill_child(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a pid this process spawned and has not reaped yet.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// For an interrupt cleanup ([`on_interrupt`]) of a child process `pid` this process
/// started and that takes a lock file of its own (the durability crash test's child):
/// [`kill_child`], reap it, and [`release_child`] its lock file, so the next run does not
/// name the interrupted run's child as a run that did not finish. Waits at most 2 s for the
/// lock to be let go.
pub fn kill_and_release_child(pid: u32) {
    kill_child(pid);
    #[cfg(unix)]
    if let Ok(raw) = i32::try_from(pid) {
        // SAFETY: waitpid(2) on a child of this process, no status wanted; another thread
        // reaping it first makes this answer ECHILD, which is fine.
        unsafe {
            libc::waitpid(raw, std::ptr::null_mut(), 0);
        }
    }
    let path = lock_dir().join(lock_name(pid));
    let start = std::time::Instant::now();
    while path.exists() && start.elapsed() < std::time::Duration::from_secs(2) {
        release_child(pid);
        if path.exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// In a child process the kit started: asks the kernel to SIGKILL it when its parent
/// goes (Linux's `PR_SET_PDEATHSIG`, which also covers a parent killed by SIGKILL), and
/// exits at once when the parent is already gone. Elsewhere nothing.
pub fn die_with_parent() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_PDEATHSIG) and getppid take no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() == 1 {
            std::process::exit(137);
        }
    }
}

/// The pid in an entry name `<prefix><pid>-<rest>` or `<prefix><pid>.<rest>`, if it has one.
pub fn pid_in_name(name: &str, prefix: &str) -> Option<u32> {
    pid_and_tail(name, prefix).map(|(pid, _)| pid)
}

/// The pid and the rest after it (starting at its `-` or `.`).
fn pid_and_tail<'a>(name: &'a str, prefix: &str) -> Option<(u32, &'a str)> {
    let rest = name.strip_prefix(prefix)?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    if end == 0 || !matches!(rest.as_bytes()[end], b'-' | b'.') {
        return None;
    }
    Some((rest[..end].parse().ok()?, &rest[end..]))
}

/// The shape of what follows `<prefix><pid>` in the names a front end makes, so that a
/// sweep never takes a user's entry that merely starts like one (`db.case-123-1.bak`).
#[derive(Clone, Copy, Debug)]
pub enum Tail {
    /// `-<n>`: a decimal counter.
    Counter,
    /// `-<n>` plus nothing or one of SQLite's side suffixes (`-wal`, `-shm`, `-journal`).
    CounterWithSqliteSide,
    /// `-` and exactly `len` ASCII letters or digits (a random suffix).
    Random(usize),
}

impl Tail {
    /// Whether `tail` (from the separator after the pid) has this shape.
    pub fn matches(self, tail: &str) -> bool {
        let Some(t) = tail.strip_prefix('-') else { return false };
        let counter = |c: &str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit());
        match self {
            Tail::Counter => counter(t),
            Tail::CounterWithSqliteSide => {
                ["", "-wal", "-shm", "-journal"].iter().any(|side| t.strip_suffix(side).is_some_and(counter))
            }
            Tail::Random(len) => t.len() == len && t.bytes().all(|b| b.is_ascii_alphanumeric()),
        }
    }
}

/// An entry that [`sweep`] found and tried to remove.
#[derive(Debug)]
pub struct Swept {
    /// The entry.
    pub path: PathBuf,
    /// The process that made it (gone).
    pub pid: u32,
    /// Whether removing it worked.
    pub result: io::Result<()>,
}

impl Swept {
    /// One line for stderr: `removed PATH, left by an earlier run (process PID, gone)`, or
    /// what could not be removed and why.
    pub fn describe(&self) -> String {
        match &self.result {
            Ok(()) => format!("removed {}, left by an earlier run (process {}, gone)", self.path.display(), self.pid),
            Err(e) => format!(
                "{} was left by an earlier run (process {}, gone) and could not be removed: {e}",
                self.path.display(),
                self.pid
            ),
        }
    }
}

/// Removes, with `remove`, every entry of `dir` named `<prefix><pid><tail>` with `tail` of
/// the given shape whose process is gone ([`process_gone`]), after [`claim`]ing this
/// process's lock. Returns what it found (an unreadable or missing `dir` gives nothing).
pub fn sweep(dir: &Path, prefix: &str, tail: Tail, mut remove: impl FnMut(&Path) -> io::Result<()>) -> Vec<Swept> {
    claim();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, rest)) = name.to_str().and_then(|n| pid_and_tail(n, prefix)) else { continue };
        if !tail.matches(rest) {
            continue;
        }
        if process_gone(pid) {
            let path = entry.path();
            let result = remove(&path);
            found.push(Swept { path, pid, result });
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Removes the directory `path` and everything in it; an empty directory is removed with a
/// bare `rmdir`, which needs no file descriptor (a run out of them still cleans up). A
/// missing directory is not an error.
///
/// # Errors
/// What `remove_dir_all` answered for a directory that is not empty.
pub fn remove_dir(path: &Path) -> io::Result<()> {
    match std::fs::remove_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => match std::fs::remove_dir_all(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    }
}

/// Removes a file; a missing file is not an error.
///
/// # Errors
/// What `unlink` answered otherwise.
pub fn remove_file(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

type Cleanup = Box<dyn Fn() + Send + Sync>;

fn registry() -> &'static Mutex<BTreeMap<u64, Cleanup>> {
    static REGISTRY: OnceLock<Mutex<BTreeMap<u64, Cleanup>>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A cleanup registered with [`on_interrupt`]; dropping it unregisters the cleanup (without
/// running it: the normal path cleans up on its own).
#[must_use = "dropping the guard unregisters the cleanup at once"]
#[derive(Debug)]
pub struct InterruptGuard(u64);

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        registry().lock().unwrap_or_else(|e| e.into_inner()).remove(&self.0);
    }
}

/// Registers `cleanup` to run if the process is interrupted while the guard lives (see
/// [`run_interrupt_cleanups`]).
///
/// Registered once the interruption began (a worker that made something while
/// [`run_interrupt_cleanups`] was running), the cleanup runs at once: the process exits
/// after the cleanups it took, and would leave this one undone.
pub fn on_interrupt(cleanup: impl Fn() + Send + Sync + 'static) -> InterruptGuard {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut registry = registry().lock().unwrap_or_else(|e| e.into_inner());
    if INTERRUPTED.load(Ordering::SeqCst) {
        drop(registry);
        cleanup();
    } else {
        registry.insert(id, Box::new(cleanup));
    }
    InterruptGuard(id)
}

/// Set by [`run_interrupt_cleanups`]: the process is being interrupted.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the process is being interrupted ([`run_interrupt_cleanups`] was called): from
/// then on `run::run` starts no new case.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Held shared while something that outlives the process is made ([`unless_interrupted`]),
/// exclusively by [`run_interrupt_cleanups`] before its cleanups run.
static FENCE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs `make` (which creates files an interrupt cleanup removes, e.g. an SQLite database
/// and its `-wal` / `-shm`) unless the process is being interrupted; `None` then, and
/// nothing is made. [`run_interrupt_cleanups`] waits for a `make` under way to end before
/// its cleanups run: the interrupt soak (issue 40) found case files made beside
/// `--sqlite-path` after the cleanup had removed the case's files, left with no marker.
pub fn unless_interrupted<T>(make: impl FnOnce() -> T) -> Option<T> {
    let _shared = FENCE.read().unwrap_or_else(|e| e.into_inner());
    (!interrupted()).then(make)
}

/// Marks the process as interrupted ([`interrupted`]: no new case starts), then runs (and
/// unregisters) every registered interrupt cleanup, newest first, and last gives up the
/// process's lock file ([`release`]): the cleanup is done, so the next run must not name
/// this one as a run that did not finish. A front end's SIGINT / SIGTERM handler calls it
/// before the process exits.
pub fn run_interrupt_cleanups() {
    // Set under the registry's lock: a cleanup registered from now on runs at once
    // ([`on_interrupt`]), none falls between the flag and the take.
    let all = {
        let mut registry = registry().lock().unwrap_or_else(|e| e.into_inner());
        INTERRUPTED.store(true, Ordering::SeqCst);
        std::mem::take(&mut *registry)
    };
    // Waits for the files being made ([`unless_interrupted`]) to be there, so that the
    // cleanups find them; none is made after this.
    drop(FENCE.write().unwrap_or_else(|e| e.into_inner()));
    for (_, cleanup) in all.into_iter().rev() {
        cleanup();
    }
    release();
}

/// A directory `<parent>/<prefix><pid>-<n>` made for the run: removed by [`ScratchDir::close`]
/// or on drop, and by [`run_interrupt_cleanups`] while it lives.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    _guard: InterruptGuard,
}

impl ScratchDir {
    /// Makes a fresh directory in `parent` (after [`claim`]), named after this process.
    ///
    /// # Errors
    /// What `mkdir` answered.
    pub fn new_in(parent: &Path, prefix: &str) -> io::Result<Self> {
        claim();
        if interrupted() {
            // The process is exiting: nothing new is made (its cleanup may have run).
            return Err(io::Error::other("the run is being interrupted"));
        }
        static SEQ: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = SEQ.fetch_add(1, Ordering::Relaxed);
            let path = parent.join(format!("{prefix}{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    let p = path.clone();
                    let guard = on_interrupt(move || {
                        let _ = remove_dir(&p);
                    });
                    return Ok(Self { path, _guard: guard });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory now ([`remove_dir`]).
    ///
    /// # Errors
    /// What the removal answered.
    pub fn close(self) -> io::Result<()> {
        // Drop then finds the directory gone (NotFound is not an error).
        remove_dir(&self.path)
    }
}

/// A fresh [`ScratchDir`] `<temp dir>/<prefix><pid>-<n>`. The first call of a process for a
/// prefix first removes the directories of that prefix whose process is gone (a run killed
/// with SIGKILL), naming each on stderr: the helper of every per-case temporary directory
/// of the kit (the SQLite registrations', the SQLite mutants').
///
/// # Errors
/// What `mkdir` answered.
pub fn temp_scratch_dir(prefix: &str) -> io::Result<ScratchDir> {
    static SWEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let tmp = std::env::temp_dir();
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !swept.iter().any(|p| p == prefix) {
            swept.push(prefix.to_owned());
            for s in sweep(&tmp, prefix, Tail::Counter, remove_dir) {
                eprintln!("note: {}", s.describe());
            }
        }
    }
    ScratchDir::new_in(&tmp, prefix)
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_pid() {
        assert_eq!(pid_in_name("checkpoint-pg-123-abc", "checkpoint-pg-"), Some(123));
        assert_eq!(pid_in_name("db.sqlite.case-77-3-wal", "db.sqlite.case-"), Some(77));
        assert_eq!(pid_in_name("checkpoint-pg-abc", "checkpoint-pg-"), None);
        assert_eq!(pid_in_name("checkpoint-pg-12", "checkpoint-pg-"), None);
        assert_eq!(pid_in_name("other-12-x", "checkpoint-pg-"), None);
    }

    #[test]
    fn removed_lock_files_are_named_in_one_line() {
        assert_eq!(stale_locks_note(Path::new("/t"), vec![]), None);
        let one = stale_locks_note(Path::new("/t"), vec![42]).unwrap();
        assert_eq!(
            one,
            "note: removed 1 lock file from /t, left by earlier runs that did not finish (process 42, gone)"
        );
        let many = stale_locks_note(Path::new("/t"), (1..=10).rev().collect()).unwrap();
        assert!(
            many.contains("removed 10 lock files")
                && many.contains("(processes 1, 2, 3, 4, 5, 6, 7, 8, and 2 more, gone)"),
            "{many}"
        );
    }

    #[test]
    fn this_process_is_alive_and_a_free_lock_is_gone() {
        claim();
        assert!(!process_gone(std::process::id()));
        // A lock file nobody holds: its pid counts as gone even if the pid exists (pid 1).
        let path = lock_dir().join(lock_name(1));
        let had = path.exists();
        if !had {
            // Another test of this binary may have released this process's lock, which
            // removes the directory when it is empty.
            std::fs::create_dir_all(lock_dir()).unwrap();
            std::fs::write(&path, b"").unwrap();
            assert!(process_gone(1));
            std::fs::remove_file(&path).unwrap();
        }
        // Without a lock file, pid 1 exists: kept.
        if !had {
            assert!(!process_gone(1));
        }
    }

    #[test]
    fn sweep_removes_only_entries_of_gone_processes() {
        let dir = std::env::temp_dir().join(format!("leftovers-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        // A pid above the kernel's limit (2^22) is gone (ESRCH).
        let dead = 4_194_400u32;
        let users = [format!("x-{dead}-1.bak"), format!("x-{dead}-mydata"), format!("x-{dead}.y")];
        for n in [format!("x-{me}-1"), format!("x-{dead}-1"), format!("x-{dead}-2-wal"), "x-nopid".into()] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        for n in &users {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let swept = sweep(&dir, "x-", Tail::CounterWithSqliteSide, |p| std::fs::remove_file(p));
        let names: Vec<_> = swept.iter().map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, [format!("x-{dead}-1"), format!("x-{dead}-2-wal")]);
        assert!(dir.join(format!("x-{me}-1")).exists() && dir.join("x-nopid").exists());
        // A user's entry that merely starts like the kit's is never taken.
        assert!(users.iter().all(|n| dir.join(n).exists()), "a user's file was swept");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The interrupt marks the whole process as interrupted, which would stop every other
    /// test of this binary under `cargo test` (one process for all): the test runs itself
    /// again alone in a child process, where the interrupt is its own.
    #[test]
    fn scratch_dirs_go_on_close_drop_and_interrupt() {
        const ALONE: &str = "CHECKPOINT_LEFTOVERS_TEST_ALONE";
        if std::env::var_os(ALONE).is_none() {
            let name = "leftovers::tests::scratch_dirs_go_on_close_drop_and_interrupt";
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([name, "--exact", "--test-threads", "1"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "{text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        let parent = std::env::temp_dir();
        let a = ScratchDir::new_in(&parent, "leftovers-scratch-").unwrap();
        let b = ScratchDir::new_in(&parent, "leftovers-scratch-").unwrap();
        let c = ScratchDir::new_in(&parent, "leftovers-scratch-").unwrap();
        let (pa, pb, pc) = (a.path().to_owned(), b.path().to_owned(), c.path().to_owned());
        std::fs::write(pa.join("f"), b"x").unwrap();
        a.close().unwrap();
        drop(b);
        run_interrupt_cleanups();
        assert!(!pa.exists() && !pb.exists() && !pc.exists());
        drop(c);
    }
}
