//! What the kit's registrations leave on disk and the checks of a chosen `--sqlite-path`:
//! the per-case temporary directories (`<temp dir>/checkpoint-sqlite-<pid>-<n>`), the case
//! files beside a chosen path (`<base>.case-<pid>-<n>`), and how the next run removes what
//! a killed run left (`conformance_core::leftovers`, one sweep for the whole kit).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use conformance_core::leftovers::{self, ScratchDir};
use conformance_core::CheckpointError;
use rusqlite::{Connection, ErrorCode, OpenFlags};

/// The prefix of the per-case temporary directories.
const TEMP_PREFIX: &str = "checkpoint-sqlite-";

/// The first bytes of every SQLite 3 database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// A fresh per-case directory in the temporary directory; the first call of a process
/// removes the directories of runs whose process is gone, naming each on stderr.
pub(crate) fn temp_case_dir() -> std::io::Result<ScratchDir> {
    leftovers::temp_scratch_dir(TEMP_PREFIX)
}

/// The directory of `base` (`.` for a bare name).
fn dir_of(base: &Path) -> PathBuf {
    match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The marker of process `pid`'s case files beside `base`: `<base>.case-<pid>.kit`.
fn marker_path(base: &Path, pid: u32) -> PathBuf {
    let mut name = OsString::from(base.as_os_str());
    name.push(format!(".case-{pid}.kit"));
    PathBuf::from(name)
}

/// What a marker holds: only the kit writes this text, naming the process and the base.
fn marker_text(base: &Path, pid: u32) -> String {
    let name = base.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    format!("checkpoint-conformance: the case files {name}.case-{pid}-<n> beside {name} are process {pid}'s\n")
}

/// Whether the file at `path` is the kit's marker of `pid`'s case files beside `base`.
fn is_marker(path: &Path, base: &Path, pid: u32) -> bool {
    std::fs::read(path).is_ok_and(|b| b == marker_text(base, pid).as_bytes())
}

/// This process's marker beside a `--sqlite-path` base, written before its first case file
/// there: the proof that the case files `<base>.case-<pid>-<n>` are the kit's, which
/// [`sweep_case_files`] requires before it removes any (issue 40 row 6: a user's file named
/// like one was removed for its name and a dead pid). Removed on drop, after the case files
/// (the storage removes those first), and on an interrupt.
#[derive(Debug)]
pub(crate) struct CaseMarker {
    path: PathBuf,
    _on_interrupt: leftovers::InterruptGuard,
}

impl CaseMarker {
    /// Writes the marker of this process beside `base`; one already there with the kit's
    /// text (a killed process's with this pid) is taken over.
    ///
    /// # Errors
    /// What the file system answered, or a file of another content at the marker's name.
    pub(crate) fn write(base: &Path) -> std::io::Result<Self> {
        leftovers::claim();
        let pid = std::process::id();
        let path = marker_path(base, pid);
        let on_interrupt = {
            let path = path.clone();
            leftovers::on_interrupt(move || {
                let _ = leftovers::remove_file(&path);
            })
        };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => std::io::Write::write_all(&mut f, marker_text(base, pid).as_bytes())?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_marker(&path, base, pid) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(std::io::Error::other(format!(
                    "{} is not the kit's: rename it, or give another --sqlite-path",
                    path.display()
                )))
            }
            Err(e) => return Err(e),
        }
        Ok(Self { path, _on_interrupt: on_interrupt })
    }
}

impl Drop for CaseMarker {
    fn drop(&mut self) {
        let _ = leftovers::remove_file(&self.path);
    }
}

/// Removes the case files (`<base>.case-<pid>-<n>` and their `-wal`, `-shm`, `-journal`)
/// that runs whose process is gone left beside `base`, naming each on stderr, then their
/// marker: only those of a process whose marker (`<base>.case-<pid>.kit`, the kit's text)
/// is there. A file merely named like one, without its marker, is the user's and stays.
pub(crate) fn sweep_case_files(base: &Path) {
    let Some(name) = base.file_name().and_then(|n| n.to_str()) else { return };
    let dir = dir_of(base);
    let prefix = format!("{name}.case-");
    leftovers::claim();
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let names: Vec<String> = entries.flatten().filter_map(|e| e.file_name().into_string().ok()).collect();
    let mut swept = Vec::new();
    for marker in &names {
        let Some(pid) = leftovers::pid_in_name(marker, &prefix) else { continue };
        let marker_path = dir.join(marker);
        if *marker != format!("{prefix}{pid}.kit")
            || !leftovers::process_gone(pid)
            || !is_marker(&marker_path, base, pid)
        {
            continue;
        }
        let own = format!("{prefix}{pid}");
        for file in &names {
            if file.strip_prefix(&own).is_some_and(|tail| leftovers::Tail::CounterWithSqliteSide.matches(tail)) {
                let path = dir.join(file);
                let result = leftovers::remove_file(&path);
                swept.push(leftovers::Swept { path, pid, result });
            }
        }
        let _ = leftovers::remove_file(&marker_path);
    }
    swept.sort_by(|a, b| a.path.cmp(&b.path));
    for s in swept {
        eprintln!("note: {}", s.describe());
    }
}

/// Whether `path` or one of its side files (`-wal`, `-shm`, `-journal`) exists: a name the
/// kit must not use for a case file (it would open, then remove, a file it did not make).
pub(crate) fn taken(path: &Path) -> bool {
    ["", "-wal", "-shm", "-journal"].iter().any(|side| {
        let mut name = OsString::from(path.as_os_str());
        name.push(side);
        std::fs::symlink_metadata(Path::new(&name)).is_ok()
    })
}

/// Fails when `base`'s name is not UTF-8 (SQLite takes UTF-8 file names), or when its
/// directory does not let this process create files there, where the case files go. The
/// probe is a new file, removed at once; a name already there is not ours and is left.
pub(crate) fn check_usable(base: &Path) -> Result<(), CheckpointError> {
    let fail = |message: String| CheckpointError::Storage { message, source: None };
    if base.to_str().is_none() {
        return Err(fail(format!("{} is not valid UTF-8 (SQLite takes UTF-8 file names); rename it", base.display())));
    }
    let dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let made = (0..100).find_map(|n| {
        let probe = dir.join(format!(".conformance-write-probe-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
            other => Some(other.map(|_| probe)),
        }
    });
    match made.unwrap_or_else(|| Err(std::io::ErrorKind::AlreadyExists.into())) {
        Ok(probe) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(fail(format!(
            "cannot create files in {} ({e}); the case databases are created beside {}",
            dir.display(),
            base.display()
        ))),
    }
}

/// Fails when a case file's name (`longest`, with `-journal`) is too long for the
/// filesystem, or SQLite cannot make a database at `longest` (its path too long for SQLite,
/// [`SQLITE_MAX_PATH`]), before any case runs.
pub(crate) fn check_case_names(base: &Path, longest: &Path) -> Result<(), CheckpointError> {
    let mut name = OsString::from(longest.as_os_str());
    name.push("-journal");
    match std::fs::symlink_metadata(Path::new(&name)) {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => Err(CheckpointError::Storage {
            message: format!(
                "{}: the case files beside it ({}) would have names too long for the filesystem ({e}); give a shorter path",
                base.display(),
                Path::new(&name).file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            ),
            source: None,
        }),
        _ => probe_case_file(base, longest),
    }
}

/// The longest full path SQLite's unix VFS opens: a database whose path, symbolic links
/// resolved, is longer is refused (`MAX_PATHNAME` 512, including the terminating NUL).
const SQLITE_MAX_PATH: usize = 511;

/// Creates an SQLite database at `probe` (a case file's name, so a killed run's sweep takes
/// it), writes it in a transaction (which makes its `-journal`) and removes it with its side
/// files: a path SQLite refuses (too long for it, however the filesystem takes it) fails
/// here, before any case runs, rather than in every case.
///
/// Made and removed under the interrupt's fence ([`leftovers::unless_interrupted`]): the
/// probe precedes the run's marker, so one a signal cut short would be left for good, a
/// case-named file no sweep may take (the interrupt soak of issue 40 found one after a
/// SIGTERM at 3.6 s). An interrupt waits for a probe under way to be removed, and none is
/// made after it.
fn probe_case_file(base: &Path, probe: &Path) -> Result<(), CheckpointError> {
    if taken(probe) {
        // A file of that name is not the kit's: it is neither opened nor removed.
        return Ok(());
    }
    let probed = leftovers::unless_interrupted(|| {
        let opened = Connection::open(probe).and_then(|c| c.execute_batch("BEGIN; CREATE TABLE probe(x); ROLLBACK;"));
        for side in ["", "-journal", "-wal", "-shm"] {
            let mut name = OsString::from(probe.as_os_str());
            name.push(side);
            let _ = leftovers::remove_file(Path::new(&name));
        }
        opened
    });
    // Interrupted: the run is exiting, nothing to check.
    let Some(Err(e)) = probed else { return Ok(()) };
    let full = probe
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()
        .map(|d| d.join(probe.file_name().unwrap_or_default()).as_os_str().len())
        .unwrap_or(0);
    let why = if full > SQLITE_MAX_PATH {
        format!(
            "a case file's full path would be {full} bytes, more than the {SQLITE_MAX_PATH} SQLite takes; give a shorter path"
        )
    } else {
        format!("SQLite cannot create a database there ({e})")
    };
    Err(CheckpointError::Storage {
        message: format!("{}: the case databases beside it cannot be made: {why}", base.display()),
        source: None,
    })
}

/// Fails unless the file at `path` (a regular file, `schema::check_path`) is empty or an
/// SQLite database that no other process holds locked. Nothing is changed and no side file
/// is made: the header is read first; a WAL-mode database (header byte 18 = 2) is opened
/// with `immutable=1` (no `-wal` / `-shm` created), a rollback-journal one read-only with no
/// busy wait, so a lock is reported at once as a lock.
pub(crate) fn check_is_database(path: &Path) -> Result<(), CheckpointError> {
    let storage = |message: String| CheckpointError::Storage { message, source: None };
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)
        .and_then(|f| f.take(100).read_to_end(&mut header))
        .map_err(|e| storage(format!("cannot read {}: {e}", path.display())))?;
    if header.is_empty() {
        return Ok(());
    }
    if header.len() < 100 || &header[..16] != SQLITE_HEADER {
        return Err(storage(format!("{} exists but is not an SQLite database", path.display())));
    }
    let wal = header[18] == 2;
    let conn = if wal {
        let uri = format!("file:{}?immutable=1", uri_path(path));
        Connection::open_with_flags(uri, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI)
    } else {
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }
    .map_err(|e| CheckpointError::storage(format!("cannot open {}", path.display()), e))?;
    let _ = conn.busy_timeout(std::time::Duration::ZERO);
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).map(|_| ()).map_err(|e| {
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => storage(format!(
                "{} is an SQLite database that another process holds locked ({e}); the run does not write it, \
                 but it cannot be checked while locked: give another path or wait for the lock to go",
                path.display()
            )),
            _ if hot_journal(&e) => storage(format!(
                "{} has a hot journal ({}-journal): a writer stopped in the middle of a transaction, and \
                 opening the database read-write would roll it back; the run does not write it, so \
                 recover it first (open it once with sqlite3) or give another path",
                path.display(),
                path.display()
            )),
            _ => CheckpointError::storage(format!("{} exists but is not an SQLite database", path.display()), e),
        }
    })
}

/// True when SQLite refused a read-only read because the database has a hot journal to roll
/// back (`SQLITE_READONLY_ROLLBACK`).
fn hot_journal(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK)
}

/// `path` for an SQLite `file:` URI: absolute, with `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for c in abs.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}
