//! The kit's registrations of this saver: one [`Storage`] impl ([`SqliteStorage`]) from
//! which [`Registration::persistent`] derives the factory, reopen, location, crash-child
//! opening and cleanup. Behind the `kit` feature, so a normal build has none of it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use async_trait::async_trait;
use conformance_core::leftovers::{InterruptGuard, ScratchDir};
use conformance_core::{BoxError, CheckpointError, Registration, Storage};

use crate::leftovers::CaseMarker;
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
/// `Storage` when the directory of `base` does not exist, `base` is a directory or another
/// file that is not a regular one (a FIFO: refused without opening it), `base` exists and
/// is not an SQLite database or is locked by another process, its name is not UTF-8, its
/// directory does not let this process create files, or the case files' names would be
/// too long for the filesystem.
pub fn registration_at(base: impl AsRef<Path>) -> Result<Registration, CheckpointError> {
    Ok(Registration::persistent("sqlite", SqliteStorage::beside(base, kit_options())?))
}

/// Where [`SqliteStorage`] puts each case's database file.
#[derive(Debug)]
enum Place {
    /// `checkpoints.sqlite` in a fresh temporary directory per case.
    TempDirs,
    /// `<base>.case-<pid>-<n>` for the n-th case of the process, after its marker.
    Beside { base: PathBuf, counter: AtomicU64, marker: Mutex<Option<CaseMarker>> },
}

/// The SQLite saver's storage for the kit ([`Storage`]): a database file per case, opened
/// with the storage's options; a location is the file's path (UTF-8).
#[derive(Debug)]
pub struct SqliteStorage {
    options: SqliteOptions,
    place: Place,
    /// What each live location holds until `destroy`: its temporary directory, or the
    /// interrupt cleanup of a case file beside a path (both remove the files on SIGINT /
    /// SIGTERM through `conformance_core::leftovers`).
    live: Mutex<HashMap<String, Held>>,
}

/// What [`SqliteStorage`] keeps for a live location.
#[derive(Debug)]
enum Held {
    /// The case's temporary directory (removed on drop or interrupt).
    Dir(ScratchDir),
    /// The interrupt cleanup of a case file beside a path.
    Guard(#[allow(dead_code)] InterruptGuard),
}

impl SqliteStorage {
    /// Each case's file is `checkpoints.sqlite` in a fresh temporary directory
    /// (`checkpoint-sqlite-<pid>-<n>` under the system's temporary directory); destroying
    /// the location removes the directory, and the first case of a process removes the
    /// directories of runs whose process is gone.
    pub fn temp(options: SqliteOptions) -> Self {
        Self { options, place: Place::TempDirs, live: Mutex::default() }
    }

    /// Each case's file is beside `base`: the n-th case of this process uses
    /// `<base>.case-<pid>-<n>` (plus SQLite's `-wal` and `-shm` files next to it); a name
    /// where a file already is (not the kit's) is passed over, and the case's files are
    /// removed after it. Before the first, the process writes its marker
    /// `<base>.case-<pid>.kit`, removed at the end. `base` itself is never created, written
    /// or removed.
    ///
    /// Case files that runs whose process is gone left beside `base` are removed (and named
    /// on stderr), only those of a process whose marker is there: a user's file merely
    /// named like one stays.
    ///
    /// # Errors
    /// As [`registration_at`].
    pub fn beside(base: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, CheckpointError> {
        let base = base.as_ref().to_path_buf();
        crate::schema::check_path(&base)?;
        crate::leftovers::check_usable(&base)?;
        if base.exists() {
            crate::leftovers::check_is_database(&base)?;
        }
        crate::leftovers::check_case_names(&base, &case_path(&base, u64::MAX))?;
        crate::leftovers::sweep_case_files(&base);
        let place = Place::Beside { base, counter: AtomicU64::new(0), marker: Mutex::default() };
        Ok(Self { options, place, live: Mutex::default() })
    }

    /// Keeps `held` for `location` until [`Storage::destroy`].
    fn hold(&self, location: &str, held: Held) {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).insert(location.to_owned(), held);
    }
}

/// A case that timed out never reaches `destroy` (its thread is abandoned): when the
/// registration goes, at the end of the run, the files of every location still live are
/// removed (temporary directories go with their `ScratchDir`).
impl Drop for SqliteStorage {
    fn drop(&mut self) {
        let live = std::mem::take(&mut *self.live.lock().unwrap_or_else(|e| e.into_inner()));
        for (location, held) in live {
            if let Held::Guard(_) = held {
                let _ = remove_database(Path::new(&location));
            }
        }
    }
}

#[async_trait]
impl Storage for SqliteStorage {
    type Saver = SqliteSaver;

    async fn create(&self) -> Result<String, BoxError> {
        match &self.place {
            Place::TempDirs => {
                let dir = crate::leftovers::temp_case_dir()?;
                // A failed conversion drops (removes) the directory.
                let location = utf8(&dir.path().join(DB_FILE))?;
                self.hold(&location, Held::Dir(dir));
                Ok(location)
            }
            Place::Beside { base, counter, marker } => {
                {
                    let mut marker = marker.lock().unwrap_or_else(|e| e.into_inner());
                    if marker.is_none() {
                        *marker = Some(CaseMarker::write(base)?);
                    }
                }
                let path = loop {
                    let path = case_path(base, counter.fetch_add(1, Ordering::Relaxed));
                    if !crate::leftovers::taken(&path) {
                        break path;
                    }
                };
                let location = utf8(&path)?;
                let guard = conformance_core::leftovers::on_interrupt(move || {
                    let _ = remove_database(&path);
                });
                self.hold(&location, Held::Guard(guard));
                Ok(location)
            }
        }
    }

    async fn open(&self, location: &str) -> Result<SqliteSaver, BoxError> {
        Ok(SqliteSaver::open_async(PathBuf::from(location), self.options.clone()).await?)
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let held = self.live.lock().unwrap_or_else(|e| e.into_inner()).remove(location);
        remove_database(Path::new(location))?;
        match (&self.place, held) {
            // The case's own directory, made by `create`; nothing else is removed (unlink
            // and rmdir only: a run out of file descriptors still cleans up).
            (_, Some(Held::Dir(dir))) => dir.close()?,
            (Place::TempDirs, _) => return Err(format!("{location:?} is not a location this storage created").into()),
            (Place::Beside { .. }, _) => {}
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

/// Removes the database file and its `-wal`, `-shm` and `-journal` companions (unlink
/// only: needs no file descriptor).
pub(crate) fn remove_database(path: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = OsString::from(path.as_os_str());
        name.push(suffix);
        conformance_core::leftovers::remove_file(Path::new(&name))?;
    }
    Ok(())
}
