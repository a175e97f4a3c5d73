//! `langgraph-rs-sqlite`: `langgraph_checkpoint_sqlite_rs::SqliteSaver`, one database file
//! per case, opened with the saver's own `from_conn_string` and `setup`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use conformance_core::{async_trait, BoxError, Feature, Registration, Storage};
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

/// The storage: a temporary directory per case holding one database file, whose path is
/// the location (reopenable, so `durability` runs, and openable from another process by
/// its path: the crash test).
#[derive(Default)]
pub struct Files(Mutex<HashMap<String, tempfile::TempDir>>);

#[async_trait]
impl Storage for Files {
    type Saver = LgAdapter<SqliteSaver>;

    async fn create(&self) -> Result<String, BoxError> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("checkpoints.db").to_string_lossy().into_owned();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(path.clone(), dir);
        Ok(path)
    }

    async fn open(&self, location: &str) -> Result<LgAdapter<SqliteSaver>, BoxError> {
        open(location).await
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let dir = self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(location);
        Ok(dir.map(tempfile::TempDir::close).transpose().map(drop)?)
    }

    fn lacks(&self, _: &str) -> BTreeSet<Feature> {
        crate::lacks()
    }
}

/// The registration: [`Files`].
pub fn registration() -> Registration {
    Registration::persistent("langgraph-rs-sqlite", Files::default())
}
