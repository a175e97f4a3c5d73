//! `langgraph-rs-postgres`: `langgraph_checkpoint_postgres_rs::PostgresSaver`, one schema per
//! case on the server named by `CHECKPOINT_POSTGRES_URL`, through the saver's own
//! `PostgresSaver::new(pool)` and `setup()`. The pool is the only thing built here: a sqlx
//! pool whose connections start with `search_path` set to the case's schema.

use std::collections::BTreeSet;
use std::str::FromStr;

use conformance_core::{async_trait, BoxError, Feature, Registration, Storage};
use langgraph_checkpoint_postgres_rs::PostgresSaver;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};

use crate::LgAdapter;

/// The variable naming the server (the kit's own Postgres tests use it too).
pub const URL_VAR: &str = "CHECKPOINT_POSTGRES_URL";

crate::list_via_alist!(PostgresSaver);

fn url() -> Result<String, BoxError> {
    std::env::var(URL_VAR).map_err(|_| format!("set {URL_VAR} to a PostgreSQL URL to run langgraph-rs-postgres").into())
}

/// Creates a fresh schema named `compat_lg_<uuid>` and returns its name.
///
/// # Errors
/// No server URL, or the server's error.
pub async fn create_schema() -> Result<String, BoxError> {
    let schema = format!("compat_lg_{}", uuid::Uuid::new_v4().simple());
    execute(&format!("CREATE SCHEMA {schema}")).await?;
    Ok(schema)
}

/// Drops `schema` and everything in it.
///
/// # Errors
/// The server's error.
pub async fn drop_schema(schema: &str) -> Result<(), BoxError> {
    execute(&format!("DROP SCHEMA {schema} CASCADE")).await
}

/// Runs one statement on a connection of its own.
async fn execute(sql: &str) -> Result<(), BoxError> {
    let mut conn = PgConnectOptions::from_str(&url()?)?.connect().await?;
    sqlx::query(sql).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}

/// Opens the saver on `schema`: a pool whose connections use it, then `setup()`.
///
/// # Errors
/// A connection or the saver's migration error.
pub async fn open(schema: &str) -> Result<LgAdapter<PostgresSaver>, BoxError> {
    let options = PgConnectOptions::from_str(&url()?)?.options([("search_path", schema)]);
    let pool = PgPoolOptions::new().max_connections(5).connect_with(options).await?;
    let saver = PostgresSaver::new(pool);
    saver.setup().await?;
    Ok(LgAdapter::new(saver))
}

/// The storage: a fresh schema per case, dropped after it; reopenable, and openable by
/// schema name from the crash test's child process.
pub struct Schemas;

#[async_trait]
impl Storage for Schemas {
    type Saver = LgAdapter<PostgresSaver>;

    async fn create(&self) -> Result<String, BoxError> {
        create_schema().await
    }

    async fn open(&self, location: &str) -> Result<LgAdapter<PostgresSaver>, BoxError> {
        open(location).await
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        drop_schema(location).await
    }

    fn lacks(&self, _: &str) -> BTreeSet<Feature> {
        crate::lacks()
    }
}

/// The registration: [`Schemas`].
pub fn registration() -> Registration {
    Registration::persistent("langgraph-rs-postgres", Schemas)
}
