//! `langgraph-rs-sqlite`: `langgraph_checkpoint_sqlite_rs::SqliteSaver`, one database file
//! per case, opened with the saver's own `from_conn_string` and `setup`.

use conformance_core::{BoxError, Registration};
use langgraph_checkpoint_sqlite_rs::SqliteSaver;

use crate::LgAdapter;

crate::list_via_alist!(SqliteSaver);

/// Opens the database file at `path` as the saver's README does:
/// `SqliteSaver::from_conn_string("sqlite:<path>")` then `setup()`.
///
/// # Errors
/// The saver's error.
pub async fn open(path: &str) -> Result<LgAdapter<SqliteSaver>, BoxError> {
    let saver = SqliteSaver::from_conn_string(&format!("sqlite:{path}")).await?;
    saver.setup().await?;
    Ok(LgAdapter::new(saver))
}

/// The registration: a temporary file per case, reopenable (so `durability` runs) and
/// openable from another process by its path (the crash test).
pub fn registration() -> Registration {
    Registration::new("langgraph-rs-sqlite", || async {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("checkpoints.db").to_string_lossy().into_owned();
        let saver = open(&path).await?;
        let reopen_path = path.clone();
        Ok(crate::fixture(saver)
            .with_reopen(move || {
                let path = reopen_path.clone();
                async move { open(&path).await }
            })
            .with_location(path)
            .with_cleanup(move || async move { Ok(dir.close()?) }))
    })
    .open_at(|location| async move { Ok(crate::fixture(open(&location).await?)) })
}
