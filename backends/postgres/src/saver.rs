//! [`PostgresSaver`]: every method of CONTRACT §2 and §3 over a deadpool-postgres pool.
//! This module holds the options, connecting, retries and each method's checks and
//! encoding; `read` and `write` hold the statements the methods run.

mod group;
mod read;
mod write;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use checkpoint_contract::{
    check_thread_id as check_thread, write_index, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory, ListOptions, PruneStrategy, TypedValue,
};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

use crate::encode::{classify_filter, has_nul, refuse_nul, refuse_nul_metadata, shell_json, version_json, FilterEntry};
use crate::schema::{self, valid_schema_name};
use group::{PutQueue, PutRequest};
use read::ListQuery;
use write::WriteRow;

/// How many times a transaction that PostgreSQL aborted with a serialization failure or a
/// deadlock is tried again before the error is returned.
const MAX_ATTEMPTS: usize = 8;

/// The default number of pooled connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10;

/// How [`PostgresSaver::connect_with`] connects.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    schema: Option<String>,
    create_schema: bool,
    max_connections: usize,
    connect_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            schema: None,
            create_schema: true,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl PostgresOptions {
    /// The defaults: the connection's own `search_path`, [`DEFAULT_MAX_CONNECTIONS`]
    /// connections, 10 s to open one.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the tables in `schema` (created by setup if missing): every connection of the
    /// pool starts with `search_path` set to it. The name must be 1 to 63 characters of
    /// `a-z`, `0-9` and `_`, not starting with a digit (`connect_with` answers
    /// `InvalidConfig` otherwise).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// Whether setup creates the [`schema`](Self::schema) when it is missing (the default),
    /// or fails on a missing one (`false`: the schema is made elsewhere, as the kit makes
    /// its test schemas, each with its marker, and a schema dropped meanwhile must not come
    /// back).
    pub fn create_schema(mut self, create: bool) -> Self {
        self.create_schema = create;
        self
    }

    /// At most `n` pooled connections (at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long opening one connection may take before it fails.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }
}

/// The reference PostgreSQL checkpointer: every method of CONTRACT §2 and §3, on the tables
/// described in the crate docs. Cheap to clone (clones share the pool); `Send + Sync`.
#[derive(Clone)]
pub struct PostgresSaver {
    pool: Pool,
    schema: Option<Arc<str>>,
    /// Whether setup creates the schema ([`PostgresOptions::create_schema`]).
    create_schema: bool,
    /// The puts waiting for the next group commit.
    puts: Arc<PutQueue>,
    /// Whether the connections run READ COMMITTED by default (opened by this crate), so
    /// that a statement outside BEGIN is a READ COMMITTED transaction.
    read_committed: bool,
}

impl std::fmt::Debug for PostgresSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresSaver").field("schema", &self.schema).field("pool", &self.pool.status()).finish()
    }
}

/// What a single attempt at an operation can fail with.
pub(crate) enum OpError {
    Db(tokio_postgres::Error),
    Pool(PoolError),
    Contract(CheckpointError),
}

impl From<tokio_postgres::Error> for OpError {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Db(e)
    }
}

impl From<PoolError> for OpError {
    fn from(e: PoolError) -> Self {
        Self::Pool(e)
    }
}

impl From<CheckpointError> for OpError {
    fn from(e: CheckpointError) -> Self {
        Self::Contract(e)
    }
}

impl OpError {
    /// A serialization failure or a deadlock: the transaction was rolled back and may be
    /// run again.
    fn retryable(&self) -> bool {
        match self {
            Self::Db(e) => {
                matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == SqlState::T_R_DEADLOCK_DETECTED)
            }
            _ => false,
        }
    }

    fn into_checkpoint_error(self, what: &str) -> CheckpointError {
        match self {
            Self::Db(e) => CheckpointError::storage(format!("PostgreSQL failed while {what}"), e),
            Self::Pool(e) => CheckpointError::storage(format!("no PostgreSQL connection while {what}"), e),
            Self::Contract(e) => e,
        }
    }
}

pub(crate) type OpResult<T> = Result<T, OpError>;

/// Runs `attempt` until it succeeds, fails for a reason other than a serialization failure
/// or deadlock, or has been tried [`MAX_ATTEMPTS`] times. Every attempt is one transaction,
/// so a failed attempt left nothing behind (CONTRACT §4).
async fn retrying<T, F, Fut>(what: &str, mut attempt: F) -> Result<T, CheckpointError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = OpResult<T>>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) if e.retryable() && tries < MAX_ATTEMPTS => {
                tokio::time::sleep(Duration::from_millis(5 * tries as u64)).await;
            }
            Err(e) => return Err(e.into_checkpoint_error(what)),
        }
    }
}

fn config_of(thread_id: &str, ns: &str, id: String) -> CheckpointConfig {
    CheckpointConfig { thread_id: thread_id.to_owned(), checkpoint_ns: ns.to_owned(), checkpoint_id: Some(id) }
}

impl PostgresSaver {
    /// Connects to `url` (a `postgresql://` URL or a `key=value` connection string, as
    /// tokio-postgres parses it) and runs [`PostgresSaver::setup`]. Every connection runs
    /// with `synchronous_commit = on`, `jit = off`, `enable_seqscan = off` and READ COMMITTED,
    /// whatever the URL's `options` or the server's defaults say (the URL's other options are
    /// kept). They are the pool's ([`PostgresSaver::pool`]) connections too.
    ///
    /// # Errors
    /// `InvalidConfig` for an unparsable URL; `Storage` when the server cannot be reached or
    /// the setup fails.
    pub async fn connect(url: &str) -> Result<Self, CheckpointError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// [`PostgresSaver::connect`] with options (a schema of its own, the pool size).
    ///
    /// # Errors
    /// As [`PostgresSaver::connect`]; `InvalidConfig` for an invalid schema name.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, CheckpointError> {
        let saver = Self::open(url, &options)?;
        saver.setup().await?;
        Ok(saver)
    }

    /// A saver over `url` with `options`, without running setup (no connection is made
    /// until the first call).
    ///
    /// # Errors
    /// `InvalidConfig` for an unparsable URL or an invalid schema name; `Storage` when the
    /// pool cannot be built.
    pub fn open(url: &str, options: &PostgresOptions) -> Result<Self, CheckpointError> {
        let mut pg: tokio_postgres::Config =
            url.parse().map_err(|e| CheckpointError::InvalidConfig(format!("cannot parse the PostgreSQL URL: {e}")))?;
        let mut startup = pg.get_options().map(str::to_owned).unwrap_or_default();
        // Durable commits whatever the server's default (CONTRACT §4 durability).
        startup.push_str(" -c synchronous_commit=on");
        // Every statement is a few key lookups; JIT compiling one whose generic plan is costed
        // for a large thread took 20 to 40 ms where running it takes 0.1 ms.
        startup.push_str(" -c jit=off");
        // What follows an advisory lock must see what was committed before it was granted
        // (a REPEATABLE READ default would read an older snapshot and lose values).
        startup.push_str(r" -c default_transaction_isolation=read\ committed");
        // Every statement reads by a key an index starts with. Plans are generic (prepared),
        // and costed from statistics: where one thread holds most pending writes (one value
        // of thread_id, one of checkpoint_id), a key lookup looks as dear as the whole table,
        // and a list of 1,000 scanned checkpoint_writes once per listed checkpoint (2.3 s
        // where the lookups take 1 ms). Off, a scan is taken only where no index serves.
        startup.push_str(" -c enable_seqscan=off");
        if let Some(schema) = &options.schema {
            if !valid_schema_name(schema) {
                return Err(CheckpointError::InvalidConfig(format!(
                    "schema name {schema:?} must be 1 to 63 characters of a-z, 0-9 and _, not starting with a digit"
                )));
            }
            startup.push_str(&format!(" -c search_path={schema}"));
        }
        pg.options(startup.trim());
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(options.connect_timeout);
        }
        let manager = Manager::from_config(pg, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        // Last in, first out: under little concurrency the connection just returned, whose
        // server process is warm, serves the next call. First in, first out rotated a single
        // caller's reads over every connection the pool had grown to, and halved get_tuple's
        // rate once a burst of 8 writers had opened 8 (`cargo xtask bench`, issue 38).
        let pool = Pool::builder(manager)
            .queue_mode(deadpool_postgres::QueueMode::Lifo)
            .max_size(options.max_connections)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| CheckpointError::storage("building the connection pool", e))?;
        Ok(Self {
            create_schema: options.create_schema,
            read_committed: true,
            ..Self::from_pool_in(pool, options.schema.clone())
        })
    }

    /// A saver over an existing pool whose connections already point at the right schema;
    /// call [`PostgresSaver::setup`] before first use. Connections should run with
    /// `synchronous_commit = on` for the durability the contract asks for, and with `jit = off`
    /// (a put turns it off for its own transaction) and `enable_seqscan = off` (see
    /// [`PostgresSaver::open`]: generic plans costed from skewed statistics scan a table once
    /// per row read).
    pub fn from_pool(pool: Pool) -> Self {
        Self::from_pool_in(pool, None)
    }

    fn from_pool_in(pool: Pool, schema: Option<String>) -> Self {
        Self {
            pool,
            schema: schema.map(Arc::from),
            create_schema: true,
            puts: group::new_queue(),
            read_committed: false,
        }
    }

    /// Creates the schema (when one was configured) and the tables, applying each migration
    /// not yet recorded in `checkpoint_migrations`, in one transaction under an advisory
    /// lock: idempotent, and safe when several instances run it at once.
    ///
    /// # Errors
    /// `Storage` when the server cannot be reached or a statement fails; `InvalidConfig` when
    /// a newer version of this crate migrated the tables further than this one knows.
    pub async fn setup(&self) -> Result<(), CheckpointError> {
        retrying("running the migrations", || async {
            let mut client = self.client().await?;
            schema::setup(&mut client, self.schema.as_deref(), self.create_schema).await?;
            Ok(())
        })
        .await
    }

    /// The pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The schema the tables live in, when one was configured.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    async fn client(&self) -> OpResult<Object> {
        Ok(self.pool.get().await?)
    }
}

#[async_trait]
impl CheckpointSaver for PostgresSaver {
    /// CONTRACT §2 put. Values are resolved when the checkpoint is put (see the crate docs).
    /// Puts that arrive while a transaction of puts runs share the next one: one commit for
    /// all of them (group commit, `saver::group`); each returns once it is committed.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `InvalidInput`, with nothing stored, for a NUL
    /// character in the thread id, namespace, checkpoint or parent id, a channel name, a
    /// string version, a type tag, or anywhere in the metadata; `Storage` on a database
    /// failure (after retrying serialization failures and deadlocks).
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        check_thread(&config.thread_id)?;
        refuse_nul(|| "config.thread_id".into(), &config.thread_id)?;
        refuse_nul(|| "config.checkpoint_ns".into(), &config.checkpoint_ns)?;
        if let Some(parent) = &config.checkpoint_id {
            refuse_nul(|| "config.checkpoint_id (the parent id)".into(), parent)?;
        }
        refuse_nul(|| "checkpoint.id".into(), &checkpoint.id)?;
        refuse_nul_metadata(&metadata)?;
        let what = format!(
            "putting checkpoint {}",
            config_of(&config.thread_id, &config.checkpoint_ns, checkpoint.id.clone())
        );
        let shell = shell_json(&checkpoint)?;
        let metadata = serde_json::to_string(&metadata)
            .map_err(|e| CheckpointError::storage("encoding the metadata as JSON", e))?;
        let mut request = PutRequest {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: checkpoint.id.clone(),
            parent_id: config.checkpoint_id.clone(),
            shell,
            metadata,
            channels: Vec::new(),
            versions: Vec::new(),
            type_tags: Vec::new(),
            data: Vec::new(),
            digests: Vec::new(),
            resolve_channels: Vec::new(),
            resolve_versions: Vec::new(),
            what,
        };
        let mut values = checkpoint.channel_values;
        for (channel, version) in checkpoint.channel_versions {
            refuse_nul(|| format!("channel name {channel:?}"), &channel)?;
            if let checkpoint_contract::ChannelVersion::Str(s) = &version {
                refuse_nul(|| format!("the version of channel {channel:?}"), s)?;
            }
            if let Some(value) = values.remove(&channel) {
                refuse_nul(|| format!("the type tag of channel {channel:?}"), &value.type_tag)?;
                request.versions.push(version_json(&version));
                request.channels.push(channel);
                request.digests.push(group::value_digest(&value.type_tag, &value.data));
                request.type_tags.push(value.type_tag);
                request.data.push(value.data);
            } else if !new_versions.contains_key(&channel) {
                request.resolve_versions.push(version_json(&version));
                request.resolve_channels.push(channel);
            }
            // Else in new_versions without a value: the channel is empty in this checkpoint.
        }
        let id = request.checkpoint_id.clone();
        self.put_grouped(request).await?;
        Ok(config_of(&config.thread_id, &config.checkpoint_ns, id))
    }

    /// CONTRACT §2 put_writes, in one statement.
    ///
    /// # Errors
    /// `InvalidConfig` without `checkpoint_id` or with an empty thread id; `InvalidInput`
    /// for a NUL character in an id, the task id or path, a channel name or a type tag;
    /// `Storage` on a database failure.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let checkpoint_id = config.write_checkpoint_id()?;
        if writes.is_empty() {
            return Ok(());
        }
        refuse_nul(|| "config.thread_id".into(), &config.thread_id)?;
        refuse_nul(|| "config.checkpoint_ns".into(), &config.checkpoint_ns)?;
        refuse_nul(|| "config.checkpoint_id".into(), checkpoint_id)?;
        refuse_nul(|| "task_id".into(), task_id)?;
        refuse_nul(|| "task_path".into(), task_path)?;
        let mut rows: Vec<WriteRow<'_>> = Vec::with_capacity(writes.len());
        for (position, (channel, value)) in writes.iter().enumerate() {
            refuse_nul(|| format!("write channel name {channel:?}"), channel)?;
            refuse_nul(|| format!("the type tag of the write to {channel:?}"), &value.type_tag)?;
            let row =
                WriteRow { idx: write_index(channel, position), channel, type_tag: &value.type_tag, data: &value.data };
            // A special channel repeated within one call: the last one wins, like a repeat
            // in a later call (one INSERT cannot touch the same key twice).
            match rows.iter_mut().find(|r| r.idx < 0 && r.idx == row.idx) {
                Some(existing) => *existing = row,
                None => rows.push(row),
            }
        }
        let what = format!("storing writes of task {task_id:?} for {config}");
        retrying(&what, || self.put_writes_once(config, checkpoint_id, task_id, task_path, &rows)).await
    }

    /// CONTRACT §2 get_tuple, from one snapshot.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `Storage` on a database failure.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        check_thread(&config.thread_id)?;
        // Nothing stored has a NUL character in its key.
        if has_nul(&config.thread_id)
            || has_nul(&config.checkpoint_ns)
            || config.checkpoint_id.as_deref().is_some_and(has_nul)
        {
            return Ok(None);
        }
        retrying(&format!("reading {config}"), || self.get_tuple_once(config)).await
    }

    /// CONTRACT §2 list, filtered, cut and limited in SQL, from one snapshot.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `Storage` on a database failure.
    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        check_thread(thread_id)?;
        let limit = options.limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
        if limit == Some(0)
            || has_nul(thread_id)
            || options.checkpoint_ns.as_deref().is_some_and(has_nul)
            || options.checkpoint_id.as_deref().is_some_and(has_nul)
        {
            return Ok(Vec::new());
        }
        // A `before` with a NUL character: no stored id has one, so `id < before` holds
        // exactly for the ids up to and including the part before the NUL.
        let (before, before_inclusive) = match options.before.as_deref() {
            Some(b) => match b.find('\0') {
                Some(at) => (Some(&b[..at]), true),
                None => (Some(b), false),
            },
            None => (None, false),
        };
        let mut query = ListQuery { before, before_inclusive, keys: Vec::new(), values: Vec::new(), limit };
        for (key, value) in &options.filter {
            match classify_filter(key, value) {
                FilterEntry::AlwaysTrue => {}
                FilterEntry::NeverTrue => return Ok(Vec::new()),
                FilterEntry::Sql => {
                    query.keys.push(key);
                    query.values.push(value.to_string());
                }
            }
        }
        retrying(&format!("listing thread {thread_id}"), || self.list_once(thread_id, options, &query)).await
    }

    /// CONTRACT §2 delete_thread, in one transaction.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `Storage` on a database failure.
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        check_thread(thread_id)?;
        if has_nul(thread_id) {
            return Ok(());
        }
        let threads = [thread_id];
        retrying(&format!("deleting thread {thread_id}"), || self.delete_threads_once(&threads)).await
    }

    /// CONTRACT §3 delete_for_runs, in one transaction.
    ///
    /// # Errors
    /// `Storage` on a database failure.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let runs: Vec<&str> = run_ids.iter().map(String::as_str).filter(|r| !has_nul(r)).collect();
        if runs.is_empty() {
            return Ok(());
        }
        retrying("deleting the checkpoints of runs", || self.delete_for_runs_once(&runs)).await
    }

    /// CONTRACT §3 copy_thread, in SQL (`INSERT ... SELECT`), in one transaction.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `InvalidInput` for a target with a NUL
    /// character; `Storage` on a database failure.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        check_thread(source)?;
        check_thread(target)?;
        if source == target || has_nul(source) {
            return Ok(());
        }
        refuse_nul(|| "the target thread id".into(), target)?;
        retrying(&format!("copying thread {source} to {target}"), || self.copy_thread_once(source, target)).await
    }

    /// CONTRACT §3 prune, in SQL, in one transaction.
    ///
    /// # Errors
    /// `Storage` on a database failure.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let threads: Vec<&str> =
            thread_ids.iter().map(String::as_str).filter(|t| !t.is_empty() && !has_nul(t)).collect();
        if threads.is_empty() {
            return Ok(());
        }
        let what = format!("pruning {} thread(s) ({strategy})", threads.len());
        match strategy {
            PruneStrategy::Delete => retrying(&what, || self.delete_threads_once(&threads)).await,
            PruneStrategy::KeepLatest => retrying(&what, || self.prune_keep_latest_once(&threads)).await,
        }
    }

    /// CONTRACT §3 delta_channel_history: one recursive query over `parent_checkpoint_id`,
    /// from one snapshot.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `Storage` on a database failure.
    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        check_thread(&config.thread_id)?;
        let mut out: BTreeMap<String, DeltaChannelHistory> =
            channels.iter().map(|c| (c.clone(), DeltaChannelHistory::default())).collect();
        // Channels with a NUL character have no writes and no values: their entries stay empty.
        let mut wanted: Vec<&str> = out.keys().map(String::as_str).filter(|c| !has_nul(c)).collect();
        wanted.dedup();
        if wanted.is_empty()
            || has_nul(&config.thread_id)
            || has_nul(&config.checkpoint_ns)
            || config.checkpoint_id.as_deref().is_some_and(has_nul)
        {
            return Ok(out);
        }
        let what = format!("reading the delta channel history of {config}");
        let found = retrying(&what, || self.delta_once(config, &wanted)).await?;
        for (channel, history) in found {
            out.insert(channel, history);
        }
        Ok(out)
    }
}
