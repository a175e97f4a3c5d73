//! Opening connections and creating the schema (idempotent, safe when several instances
//! open the same file at once).

use std::path::Path;
use std::time::{Duration, Instant};

use checkpoint_contract::CheckpointError;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::{SqliteOptions, Synchronous};

/// The schema version this crate writes and reads (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// The schema, version 1. See the crate docs for what each table holds.
const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    run_id TEXT,
    metadata TEXT NOT NULL,
    value_versions TEXT NOT NULL,
    checkpoint BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_id ON checkpoints (thread_id, checkpoint_id DESC, checkpoint_ns);
CREATE INDEX IF NOT EXISTS checkpoints_by_run ON checkpoints (run_id) WHERE run_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    task_path TEXT NOT NULL,
    channel TEXT NOT NULL,
    type_tag TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
CREATE TABLE IF NOT EXISTS blobs (
    thread_id TEXT NOT NULL,
    blob_id TEXT NOT NULL,
    type_tag TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, blob_id)
);
CREATE TABLE IF NOT EXISTS blob_refs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    blob_id TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, blob_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blob_refs_by_blob ON blob_refs (thread_id, blob_id);
";

/// True for the errors that mean "another connection holds the lock; try again".
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// True when a saver error was caused by a busy/locked database.
pub(crate) fn error_is_busy(e: &CheckpointError) -> bool {
    match e {
        CheckpointError::Storage { source: Some(s), .. } => s.downcast_ref::<rusqlite::Error>().is_some_and(is_busy),
        _ => false,
    }
}

/// A storage error with the rusqlite cause, saying what the saver was doing.
pub(crate) fn sql_err(doing: &str) -> impl FnOnce(rusqlite::Error) -> CheckpointError + '_ {
    move |e| CheckpointError::storage(doing.to_owned(), e)
}

/// Sleeps a little before retrying a busy operation (1, 2, 4 ... 64 ms).
pub(crate) fn backoff(attempt: u32) {
    std::thread::sleep(Duration::from_millis(1u64 << attempt.min(6)));
}

/// Checks the path before SQLite sees it, for clear errors.
pub(crate) fn check_path(path: &Path) -> Result<(), CheckpointError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            let what = if dir.exists() { "is not a directory" } else { "does not exist" };
            return Err(CheckpointError::Storage {
                message: format!("cannot open the SQLite database {}: {} {what}", path.display(), dir.display()),
                source: None,
            });
        }
    }
    if path.is_dir() {
        return Err(CheckpointError::Storage {
            message: format!("cannot open the SQLite database {}: it is a directory", path.display()),
            source: None,
        });
    }
    // A FIFO, socket or device would block or misbehave in open(2): refused unopened.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(CheckpointError::Storage {
            message: format!(
                "cannot open the SQLite database {}: it is not a regular file (a FIFO, socket or device)",
                path.display()
            ),
            source: None,
        }),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(CheckpointError::Storage {
            message: format!("cannot open the SQLite database {}: {e}", path.display()),
            source: None,
        }),
        _ => Ok(()),
    }
}

/// Maps an error met while opening `path`, naming a file that is not a database.
fn open_err(path: &Path) -> impl FnOnce(rusqlite::Error) -> CheckpointError + '_ {
    move |e| {
        let message = match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => {
                format!("cannot open {}: the file exists but is not an SQLite database", path.display())
            }
            Some(ErrorCode::CannotOpen) => format!("cannot open the SQLite database {}", path.display()),
            _ => format!("setting up the SQLite database {}", path.display()),
        };
        CheckpointError::storage(message, e)
    }
}

/// Opens one connection with the per-connection settings (busy timeout, synchronous level,
/// statement cache). `reader` connections also get `query_only` and a memory map.
pub(crate) fn open_connection(
    path: &Path,
    options: &SqliteOptions,
    reader: bool,
) -> Result<Connection, CheckpointError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(open_err(path))?;
    conn.busy_timeout(options.busy_timeout).map_err(open_err(path))?;
    conn.set_prepared_statement_cache_capacity(64);
    // Query-planner stability: plans never depend on bound values. Without it SQLite marks
    // most of our statements "re-prepare when rebound", and rusqlite's statement cache
    // clears bindings when a statement goes back to the cache, so every cached statement
    // would be compiled again on each use (measured: ~100 us per get_tuple).
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(open_err(path))?;
    let sync = sync_pragma(options.synchronous);
    retry_busy(options.lock_timeout, || {
        conn.execute_batch(&format!("PRAGMA synchronous = {sync}; PRAGMA foreign_keys = OFF;"))
    })
    .map_err(open_err(path))?;
    if reader {
        retry_busy(options.lock_timeout, || {
            conn.execute_batch("PRAGMA query_only = ON; PRAGMA mmap_size = 268435456;")
        })
        .map_err(open_err(path))?;
    }
    Ok(conn)
}

fn sync_pragma(level: Synchronous) -> &'static str {
    match level {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
        Synchronous::Off => "OFF",
    }
}

/// Runs `f` again while it fails with a busy/locked error, until `limit` has passed.
pub(crate) fn retry_busy<T>(
    limit: Duration,
    mut f: impl FnMut() -> Result<T, rusqlite::Error>,
) -> Result<T, rusqlite::Error> {
    let deadline = Instant::now() + limit;
    let mut attempt = 0;
    loop {
        match f() {
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                backoff(attempt);
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Switches the file to WAL and creates (or checks) the schema. Idempotent; two instances
/// doing it at once serialise on `BEGIN IMMEDIATE` and the second finds the schema made.
///
/// On a `fresh` file (missing or empty before this open) the setup runs without fsyncs
/// (`synchronous = OFF`, then the configured level again): there is nothing yet to
/// protect, and a setup lost to a power cut is simply done again by the next open. This
/// saves the five or so fsyncs of switching a new file to WAL.
pub(crate) fn setup(
    conn: &Connection,
    path: &Path,
    options: &SqliteOptions,
    fresh: bool,
) -> Result<(), CheckpointError> {
    if fresh {
        conn.execute_batch("PRAGMA synchronous = OFF").map_err(open_err(path))?;
    }
    let result = setup_inner(conn, path, options);
    if fresh {
        let sync = sync_pragma(options.synchronous);
        conn.execute_batch(&format!("PRAGMA synchronous = {sync}")).map_err(open_err(path))?;
    }
    result
}

fn setup_inner(conn: &Connection, path: &Path, options: &SqliteOptions) -> Result<(), CheckpointError> {
    let mode: String =
        retry_busy(options.lock_timeout, || conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)))
            .map_err(open_err(path))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(CheckpointError::storage_msg(format!(
            "cannot switch {} to WAL mode (journal_mode is {mode})",
            path.display()
        )));
    }
    retry_busy(options.lock_timeout, || create_schema(conn))
        .map_err(open_err(path))?
        .map_err(|found| CheckpointError::storage_msg(format!("{}: {found}", path.display())))
}

/// One attempt at creating the schema in a transaction. The outer error is SQLite's (retried
/// when busy); the inner one says why the file cannot be used.
fn create_schema(conn: &Connection) -> Result<Result<(), String>, rusqlite::Error> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == SCHEMA_VERSION {
            return Ok(Ok(()));
        }
        if version > SCHEMA_VERSION {
            return Ok(Err(format!(
                "the database has schema version {version}, newer than this saver's {SCHEMA_VERSION}"
            )));
        }
        if version != 0 {
            return Ok(Err(format!("the database has unknown schema version {version}")));
        }
        let foreign: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'writes', 'blobs')",
            [],
            |r| r.get(0),
        )?;
        if foreign > 0 {
            return Ok(Err(
                "the database already has checkpoint tables that this saver did not create (user_version 0)".into(),
            ));
        }
        conn.execute_batch(SCHEMA_V1)?;
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
        Ok(Ok(()))
    })();
    match result {
        Ok(Ok(())) => {
            conn.execute_batch("COMMIT")?;
            Ok(Ok(()))
        }
        Ok(Err(found)) => {
            let _ = conn.execute_batch("ROLLBACK");
            Ok(Err(found))
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}
