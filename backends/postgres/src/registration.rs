//! The kit's registration of [`PostgresSaver`]: a fresh schema per case on one server, from
//! one [`Storage`] impl ([`PostgresStorage`]). Behind the `kit` feature.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use conformance_core::leftovers::InterruptGuard;
use conformance_core::{BoxError, Capability, Fixture, Registration, Storage};
use tokio_postgres::NoTls;

use crate::leftovers::{create_marked_schema, fence_and_drop_now, sweep_gone_runs, RunLock};
use crate::schema::valid_schema_name;
use crate::{PostgresOptions, PostgresSaver, REQUIRED_ENV, URL_ENV};

/// The prefix of every schema [`registration`] creates.
pub const TEST_SCHEMA_PREFIX: &str = "checkpoint_test_";

/// Connections per saver instance in the test fixtures: enough for the concurrency cases,
/// small enough that many cases at once (each with two instances) stay under a server's
/// default `max_connections` of 100.
const FIXTURE_CONNECTIONS: usize = 4;

fn short_token(len: usize) -> String {
    uuid::Uuid::new_v4().simple().to_string()[..len].to_owned()
}

/// Opens one plain connection to `url` (its task runs on the current runtime).
pub(crate) async fn connect_plain(url: &str) -> Result<tokio_postgres::Client, BoxError> {
    let mut config: tokio_postgres::Config = url.parse()?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        // The connection ends when the client is dropped; its error, if any, surfaces on
        // the client's calls.
        let _ = connection.await;
    });
    Ok(client)
}

/// Drops `schema` and everything in it, if it exists.
///
/// # Errors
/// The connection or statement error; an invalid schema name.
pub async fn drop_schema(url: &str, schema: &str) -> Result<(), BoxError> {
    if !valid_schema_name(schema) {
        return Err(format!("refusing to drop {schema:?}: not a schema name this crate creates").into());
    }
    let client = connect_plain(url).await?;
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await?;
    Ok(())
}

/// Drops every schema whose name starts with `prefix` (which must itself be a valid schema
/// name); returns how many were dropped.
///
/// # Errors
/// The connection or statement error.
pub async fn drop_schemas_with_prefix(url: &str, prefix: &str) -> Result<usize, BoxError> {
    if !valid_schema_name(prefix) {
        return Err(format!("{prefix:?} is not a valid schema name prefix").into());
    }
    let client = connect_plain(url).await?;
    let rows =
        client.query("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname::text, $1)", &[&prefix]).await?;
    let mut dropped = 0;
    for row in rows {
        let name: String = row.get(0);
        if valid_schema_name(&name) {
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")).await?;
            dropped += 1;
        }
    }
    Ok(dropped)
}

/// [`drop_schemas_with_prefix`] until none is left or `within` has passed: a schema whose
/// drop fails is tried again, and the others are dropped meanwhile. An interrupt drops the
/// run's schemas while its cases still use them, and the server breaks a deadlock between
/// the drop (it holds a schema, then waits for its tables) and a case's transaction (it
/// holds a table, then makes one in that schema) by failing the drop: the interrupt soak
/// (issue 40) found 2 of 50 interrupted runs leaving one schema that way.
///
/// # Errors
/// The schemas still there at the end, with the last error.
pub(crate) async fn drop_schemas_with_prefix_retrying(
    url: &str,
    prefix: &str,
    within: Duration,
) -> Result<usize, BoxError> {
    if !valid_schema_name(prefix) {
        return Err(format!("{prefix:?} is not a valid schema name prefix").into());
    }
    let start = std::time::Instant::now();
    let mut dropped = 0;
    let mut client = None;
    loop {
        let mut failed: Vec<(String, String)> = Vec::new();
        let attempt = async {
            if client.is_none() {
                client = Some(connect_plain(url).await?);
            }
            let c = client.as_ref().ok_or("no connection")?;
            let rows = c
                .query("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname::text, $1)", &[&prefix])
                .await?;
            for row in rows {
                let name: String = row.get(0);
                if !valid_schema_name(&name) {
                    continue;
                }
                match c.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")).await {
                    Ok(()) => dropped += 1,
                    Err(e) => failed.push((name, e.to_string())),
                }
            }
            Ok::<_, BoxError>(())
        };
        let last = match attempt.await {
            Ok(()) if failed.is_empty() => return Ok(dropped),
            Ok(()) => {
                let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
                format!("{}: {}", names.join(", "), failed[0].1)
            }
            Err(e) => {
                // A broken connection is opened again.
                client = None;
                e.to_string()
            }
        };
        if start.elapsed() >= within {
            return Err(format!("schemas of run {prefix} not dropped within {} s: {last}", within.as_secs()).into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The kit's registration of [`PostgresSaver`] on the server at `url`, named `postgres`.
///
/// Each case gets its own schema (`checkpoint_test_<run>_<case>`, created by the saver's
/// setup) and a saver whose connections use it, so cases run in parallel against one server
/// without seeing each other: [`PostgresStorage`], from which [`Registration::persistent`]
/// derives the second instance on the same schema (its own pool, its own setup; it enables
/// the durability and two-instance cases), the location (the schema name, which the crash
/// test's child process opens; it needs the same URL, so a front end passes it through the
/// environment) and the cleanup (dropping the schema). The lifespan checks the server
/// answers before any case runs and, at the end, drops any schema of this run a timed-out
/// case left behind.
pub fn registration(url: &str) -> Registration {
    registration_with_schema_prefix(url, &format!("{TEST_SCHEMA_PREFIX}{}_", short_token(8)))
}

/// [`registration`] with the schemas of this run named `<run_prefix><case>`; the teardown
/// drops every schema whose name starts with `run_prefix`, so give each run its own prefix.
/// A prefix that is not a valid schema name (see [`crate::PostgresOptions::schema`]) makes
/// every case fail with the factory's `InvalidConfig`.
pub fn registration_with_schema_prefix(url: &str, run_prefix: &str) -> Registration {
    Registration::persistent("postgres", PostgresStorage::new(url, run_prefix))
}

/// How long the drop of a run's schemas may keep trying ([`drop_schemas_with_prefix_retrying`]).
pub(crate) const DROP_WITHIN: Duration = Duration::from_secs(20);

/// `drop_schemas_with_prefix_retrying` from a signal handler's thread (an interrupt
/// cleanup): on a runtime of its own, within 25 s; a failure is a warning on stderr (the
/// process is exiting; the next run drops what is left). Called from
/// inside a runtime (a cleanup registered after the interruption began runs at once, on the
/// registering thread: a lifespan setup's), it runs on a thread of its own and waits for it,
/// since a runtime cannot be started within another (issue 40 row 1).
pub fn drop_schemas_now(url: &str, prefix: &str) {
    let drop_all = || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        // The timer is made inside the runtime (it needs its reactor).
        let dropped = rt.block_on(async {
            tokio::time::timeout(
                DROP_WITHIN + Duration::from_secs(5),
                drop_schemas_with_prefix_retrying(url, prefix, DROP_WITHIN),
            )
            .await
        });
        warn_not_dropped(prefix, dropped);
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            let _ = s.spawn(drop_all).join();
        });
    } else {
        drop_all();
    }
}

/// One line on stderr when the interrupt's drop of run `prefix`'s schemas failed or timed out.
pub(crate) fn warn_not_dropped<T>(prefix: &str, dropped: Result<Result<T, BoxError>, tokio::time::error::Elapsed>) {
    let why = match dropped {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(_) => "no answer from the server in time".to_owned(),
    };
    eprintln!("warning: the schemas of this run ({prefix}...) may be left on the server ({why})");
}

/// The PostgreSQL saver's storage for the kit ([`Storage`]): a schema per case on one
/// server; a location is the schema's name, `<run_prefix><12 hex digits>`. Its lifespan
/// checks the server answers before any case runs and, at the end, drops any schema of this
/// run a timed-out case left behind; while the run lives, a SIGINT/SIGTERM drops its
/// schemas too (the teardown will not run), and a lock on the server says it lives (what a
/// killed run left, a later run drops).
#[derive(Clone)]
pub struct PostgresStorage {
    url: String,
    run_prefix: String,
    /// From the setup to the teardown: the interrupt's cleanup and the run's lock.
    running: Arc<Mutex<Option<(InterruptGuard, RunLock)>>>,
}

impl std::fmt::Debug for PostgresStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStorage").field("run_prefix", &self.run_prefix).finish_non_exhaustive()
    }
}

impl PostgresStorage {
    /// Schemas named `<run_prefix>...` on the server at `url`. Each saver opened on one has
    /// its own pool of `FIXTURE_CONNECTIONS` connections and runs the saver's setup.
    pub fn new(url: &str, run_prefix: &str) -> Self {
        Self { url: url.to_owned(), run_prefix: run_prefix.to_owned(), running: Arc::default() }
    }
}

#[async_trait]
impl Storage for PostgresStorage {
    type Saver = PostgresSaver;

    async fn create(&self) -> Result<String, BoxError> {
        if conformance_core::leftovers::interrupted() {
            // The run's schemas are being dropped: none is made after.
            return Err("the run is being interrupted".into());
        }
        // With the kit's marker, so that a run killed before it drops the schema leaves one
        // a later run can tell from a user's (the saver's setup, on open, makes its tables).
        let schema = format!("{}{}", self.run_prefix, short_token(12));
        create_marked_schema(&self.url, &schema, &self.run_prefix).await?;
        Ok(schema)
    }

    async fn open(&self, location: &str) -> Result<PostgresSaver, BoxError> {
        // The schema is `create`'s, with its marker: one dropped meanwhile (an interrupt)
        // is not made again, unmarked, by the saver's setup.
        let options = PostgresOptions::new().schema(location).create_schema(false).max_connections(FIXTURE_CONNECTIONS);
        Ok(PostgresSaver::connect_with(&self.url, options).await?)
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        drop_schema(&self.url, location).await
    }

    async fn setup(&self) -> Result<(), BoxError> {
        let (url, prefix) = (self.url.clone(), self.run_prefix.clone());
        let client = connect_plain(&url)
            .await
            .map_err(|e| format!("cannot connect to the PostgreSQL server named by the URL: {e}"))?;
        client.simple_query("SELECT 1").await?;
        for note in sweep_gone_runs(&url).await? {
            eprintln!("{note}");
        }
        let lock = {
            let (url, prefix) = (url.clone(), prefix.clone());
            tokio::task::spawn_blocking(move || RunLock::take(&url, &prefix)).await??
        };
        let cleanup = move || fence_and_drop_now(&url, &prefix);
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((conformance_core::leftovers::on_interrupt(cleanup), lock));
        Ok(())
    }

    async fn teardown(&self) -> Result<(), BoxError> {
        let held = self.running.lock().unwrap_or_else(|e| e.into_inner()).take();
        // The interrupt's cleanup goes first; the run's lock stays until its schemas are
        // gone, so that another run's sweep never takes them for a gone run's and drops them
        // at the same time (two drops of one schema: "db error").
        let run_lock = held.map(|(interrupt_cleanup, lock)| {
            drop(interrupt_cleanup);
            lock
        });
        let dropped = drop_schemas_with_prefix_retrying(&self.url, &self.run_prefix, DROP_WITHIN).await;
        drop(run_lock);
        dropped?;
        Ok(())
    }
}

/// Why the cases do not run when [`URL_ENV`] is not set.
pub const NO_URL_REASON: &str = "CHECKPOINT_POSTGRES_URL is not set; start a throwaway server with \
                                 `export CHECKPOINT_POSTGRES_URL=$(scripts/pg-test-server.sh start)`";

/// [`registration`] on the server named by `CHECKPOINT_POSTGRES_URL`.
///
/// Without the variable, every capability is skipped with [`NO_URL_REASON`], so a front end
/// reports each case as skipped (ignored, under `checkpointer_test!`) with the reason rather
/// than passing silently; with `CHECKPOINT_POSTGRES_REQUIRED=1` the factory fails instead,
/// so every case fails with the reason.
pub fn registration_from_env() -> Registration {
    if let Ok(url) = std::env::var(URL_ENV) {
        return registration(&url);
    }
    let required = std::env::var(REQUIRED_ENV).is_ok_and(|v| v == "1");
    let registration = Registration::new("postgres", || async {
        Err::<Fixture, BoxError>(format!("{NO_URL_REASON} (and {REQUIRED_ENV}=1)").into())
    });
    if required {
        return registration;
    }
    Capability::ALL.iter().fold(registration, |r, cap| r.skip(*cap, NO_URL_REASON))
}
