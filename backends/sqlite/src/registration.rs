//! The kit's registrations of this saver: one [`Storage`] impl ([`SqliteStorage`]) from
//! which [`Registration::persistent`] derives the factory, reopen, location, crash-child
//! opening and cleanup. Behind the `kit` feature, so a normal build has none of it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use conformance_core::{BoxError, CheckpointError, Registration, Storage};
use rusqlite::{Connection, OpenFlags};

use crate::{SqliteOptions, SqliteSaver};

/// The options the kit's registrations use: the defaults with `synchronous = NORMAL`.
///
/// In WAL mode NORMAL still writes every commit to the WAL file before acknowledging it, so
/// a killed process loses nothing (what the durability cases check, CONTRACT §4); it only
/// skips the per-commit fsync that protects against power loss, which no in-process case
/// can observe and which would make the conformance run several times slower. Pass
/// [`SqliteOptions::default`] to [`registration_with`] to run the kit with FULL.
pub fn kit_options() -> SqliteOptions {
    SqliteOptions::default().synchronous(crate::Synchronous::Normal)
}

/// The name of the database file in each case's temporary directory.
const DB_FILE: &str = "checkpoints.sqlite";

/// The prefix of each case's temporary directory.
const DIR_PREFIX: &str = "checkpoint-sqlite-";

/// The registration named `sqlite` on [`SqliteStorage::temp`] with [`kit_options`]: each
/// case gets a fresh database file in a fresh temporary directory, which its cleanup
/// removes; a second instance can be opened on the same file, which enables the
/// two-instance and durability cases (CONTRACT §4), and the durability crash test's child
/// process opens the file from its path (see [`Registration::persistent`]).
pub fn registration() -> Registration {
    registration_with(kit_options())
}

/// [`registration`] with the given options (a synchronous level, reader count, ...).
pub fn registration_with(options: SqliteOptions) -> Registration {
    Registration::persistent("sqlite", SqliteStorage::temp(options))
}

/// The registration named `sqlite` on [`SqliteStorage::beside`] `base` with
/// [`kit_options`], for running the suite on a chosen filesystem
/// (`cargo xtask conformance --sqlite-path FILE`).
///
/// # Errors
/// `Storage` when the directory of `base` does not exist, `base` is a directory, or `base`
/// exists and is not an SQLite database.
pub fn registration_at(base: impl AsRef<Path>) -> Result<Registration, CheckpointError> {
    Ok(Registration::persistent("sqlite", SqliteStorage::beside(base, kit_options())?))
}

/// Where [`SqliteStorage`] puts each case's database file.
#[derive(Debug)]
enum Place {
    /// `checkpoints.sqlite` in a fresh temporary directory per case.
    TempDirs,
    /// `<base>.case-<pid>-<n>` for the n-th case of the process.
    Beside { base: PathBuf, counter: AtomicU64 },
}

/// The SQLite saver's storage for the kit ([`Storage`]): a database file per case, opened
/// with the storage's options; a location is the file's path (UTF-8).
#[derive(Debug)]
pub struct SqliteStorage {
    options: SqliteOptions,
    place: Place,
}

impl SqliteStorage {
    /// Each case's file is `checkpoints.sqlite` in a fresh temporary directory
    /// (`checkpoint-sqlite-*` under the system's temporary directory); destroying the
    /// location removes the directory.
    pub fn temp(options: SqliteOptions) -> Self {
        Self { options, place: Place::TempDirs }
    }

    /// Each case's file is beside `base`: the n-th case of this process uses
    /// `<base>.case-<pid>-<n>` (plus SQLite's `-wal` and `-shm` files next to it). A leftover
    /// file of that name is removed before the case and the case's files are removed after
    /// it. `base` itself is never created, written or removed.
    ///
    /// # Errors
    /// `Storage` when the directory of `base` does not exist, `base` is a directory, or
    /// `base` exists and is not an SQLite database.
    pub fn beside(base: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, CheckpointError> {
        let base = base.as_ref().to_path_buf();
        crate::schema::check_path(&base)?;
        if base.exists() {
            check_is_database(&base)?;
        }
        Ok(Self { options, place: Place::Beside { base, counter: AtomicU64::new(0) } })
    }
}

#[async_trait]
impl Storage for SqliteStorage {
    type Saver = SqliteSaver;

    async fn create(&self) -> Result<String, BoxError> {
        match &self.place {
            Place::TempDirs => {
                let dir = tempfile::Builder::new().prefix(DIR_PREFIX).tempdir()?;
                let location = utf8(&dir.path().join(DB_FILE))?;
                // Kept until `destroy`; a failed conversion above drops (removes) it.
                let _ = dir.keep();
                Ok(location)
            }
            Place::Beside { base, counter } => {
                let path = case_path(base, counter.fetch_add(1, Ordering::Relaxed));
                remove_database(&path)?;
                utf8(&path)
            }
        }
    }

    async fn open(&self, location: &str) -> Result<SqliteSaver, BoxError> {
        Ok(SqliteSaver::open_async(PathBuf::from(location), self.options.clone()).await?)
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let path = Path::new(location);
        remove_database(path)?;
        if let Place::TempDirs = self.place {
            // The case's own directory, made by `create`; nothing else is removed.
            let dir = path.parent().filter(|d| {
                d.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(DIR_PREFIX))
                    && path.file_name().is_some_and(|f| f == DB_FILE)
            });
            match dir {
                Some(dir) => std::fs::remove_dir_all(dir)?,
                None => return Err(format!("{location:?} is not a location this storage created").into()),
            }
        }
        Ok(())
    }
}

/// The path as a location.
fn utf8(path: &Path) -> Result<String, BoxError> {
    Ok(path.to_str().ok_or_else(|| format!("{} is not valid UTF-8", path.display()))?.to_owned())
}

/// `<base>.case-<pid>-<n>`.
fn case_path(base: &Path, n: u64) -> PathBuf {
    let mut name = OsString::from(base.as_os_str());
    name.push(format!(".case-{}-{n}", std::process::id()));
    PathBuf::from(name)
}

/// Removes the database file and its `-wal`, `-shm` and `-journal` companions.
fn remove_database(path: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = OsString::from(path.as_os_str());
        name.push(suffix);
        match std::fs::remove_file(PathBuf::from(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Fails unless the file at `path` is an SQLite database (read only; nothing is changed).
fn check_is_database(path: &Path) -> Result<(), CheckpointError> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| CheckpointError::storage(format!("cannot open {}", path.display()), e))?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
        .map(|_| ())
        .map_err(|e| CheckpointError::storage(format!("{} exists but is not an SQLite database", path.display()), e))
}
