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

/// Removes the case files (`<base>.case-<pid>-<n>` and their `-wal`, `-shm`, `-journal`)
/// that runs whose process is gone left beside `base`, naming each on stderr.
pub(crate) fn sweep_case_files(base: &Path) {
    let Some(name) = base.file_name().and_then(|n| n.to_str()) else { return };
    let dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    for s in
        leftovers::sweep(&dir, &format!("{name}.case-"), leftovers::Tail::CounterWithSqliteSide, leftovers::remove_file)
    {
        eprintln!("note: {}", s.describe());
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
fn probe_case_file(base: &Path, probe: &Path) -> Result<(), CheckpointError> {
    let opened = Connection::open(probe).and_then(|c| c.execute_batch("BEGIN; CREATE TABLE probe(x); ROLLBACK;"));
    for side in ["", "-journal", "-wal", "-shm"] {
        let mut name = OsString::from(probe.as_os_str());
        name.push(side);
        let _ = leftovers::remove_file(Path::new(&name));
    }
    let Err(e) = opened else { return Ok(()) };
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
