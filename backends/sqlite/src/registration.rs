//! The kit's registrations of this saver.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use conformance_core::{BoxError, CheckpointError, Fixture, Registration};

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

/// The registration named `sqlite`: each case gets a fresh database file
/// (`checkpoints.sqlite`) in a fresh temporary directory, which its cleanup removes; the
/// fixture can open a second instance on the same file ([`Fixture::with_reopen`]), which
/// enables the two-instance and durability cases (CONTRACT §4), and names the file
/// ([`Fixture::with_location`]) so that the durability crash test's child process can
/// open it ([`Registration::open_at`]). Uses [`kit_options`].
pub fn registration() -> Registration {
    registration_with(kit_options())
}

/// [`registration`] with the given options (a synchronous level, reader count, ...).
pub fn registration_with(options: SqliteOptions) -> Registration {
    let open_options = options.clone();
    Registration::new("sqlite", move || {
        let options = options.clone();
        async move {
            let dir = crate::leftovers::temp_case_dir()?;
            let path = dir.path().join("checkpoints.sqlite");
            let fixture = match fixture(path.clone(), options).await {
                Ok(f) => f,
                Err(e) => {
                    let _ = remove_database(&path);
                    return Err(e);
                }
            };
            Ok(fixture.with_cleanup(move || async move {
                remove_database(&path)?;
                dir.close().map_err(BoxError::from)
            }))
        }
    })
    .open_at(open_at(open_options))
}

/// The registration named `sqlite` with each case's file beside `base`: the n-th case of
/// this process uses `<base>.case-<pid>-<n>` (plus SQLite's `-wal` and `-shm` files next to
/// it). A leftover file of that name is removed before the case and the case's files are
/// removed after it. `base` itself is never created, written or removed; this is for
/// running the suite on a chosen filesystem (`cargo xtask conformance --sqlite-path FILE`).
/// Uses [`kit_options`].
///
/// # Errors
/// `Storage` when the directory of `base` does not exist, `base` is a directory or another
/// file that is not a regular one (a FIFO: refused without opening it), `base` exists and
/// is not an SQLite database or is locked by another process, or the case files' names
/// would be too long for the filesystem.
pub fn registration_at(base: impl AsRef<Path>) -> Result<Registration, CheckpointError> {
    let base = base.as_ref().to_path_buf();
    crate::schema::check_path(&base)?;
    if base.exists() {
        crate::leftovers::check_is_database(&base)?;
    }
    crate::leftovers::check_case_names(&base, &case_path(&base, u64::MAX))?;
    crate::leftovers::sweep_case_files(&base);
    let options = kit_options();
    let counter = Arc::new(AtomicU64::new(0));
    let open_options = options.clone();
    Ok(Registration::new("sqlite", move || {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let path = case_path(&base, n);
        let options = options.clone();
        async move {
            remove_database(&path)?;
            // Removed on an interrupt too (a front end that handles SIGINT / SIGTERM).
            let p = path.clone();
            let guard = conformance_core::leftovers::on_interrupt(move || {
                let _ = remove_database(&p);
            });
            let fixture = match fixture(path.clone(), options).await {
                Ok(f) => f,
                Err(e) => {
                    let _ = remove_database(&path);
                    return Err(e);
                }
            };
            Ok(fixture.with_cleanup(move || async move {
                let r = remove_database(&path).map_err(BoxError::from);
                drop(guard);
                r
            }))
        }
    })
    .open_at(open_at(open_options)))
}

/// The [`Registration::open_at`] function: opens the database file named by a fixture's
/// location (its path) with `options`, in this or another process.
fn open_at(
    options: SqliteOptions,
) -> impl Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Fixture, BoxError>> + Send>>
       + Send
       + Sync
       + 'static {
    move |location| {
        let options = options.clone();
        Box::pin(async move { Ok(Fixture::new(SqliteSaver::open_async(PathBuf::from(location), options).await?)) })
    }
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

/// A fixture on `path` that can reopen the same file, with the path as its location.
async fn fixture(path: PathBuf, options: SqliteOptions) -> Result<Fixture, BoxError> {
    let saver = SqliteSaver::open_async(path.clone(), options.clone()).await?;
    let location = path.to_str().ok_or_else(|| format!("{} is not valid UTF-8", path.display()))?.to_owned();
    Ok(Fixture::new(saver).with_location(location).with_reopen(move || {
        let (path, options) = (path.clone(), options.clone());
        async move { SqliteSaver::open_async(path, options).await.map_err(BoxError::from) }
    }))
}
