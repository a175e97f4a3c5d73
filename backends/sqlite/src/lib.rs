//! # checkpoint-sqlite
//!
//! The reference SQLite checkpointer of the conformance kit: every method of
//! docs/contract.md §2 and §3 and the §4 properties (two instances on one file, durable
//! acknowledgements), on a file in WAL mode through `rusqlite` with a bundled SQLite.
//!
//! ```no_run
//! # async fn demo() -> Result<(), checkpoint_contract::CheckpointError> {
//! use checkpoint_sqlite::SqliteSaver;
//! let saver = SqliteSaver::open("checkpoints.sqlite")?;
//! # Ok(()) }
//! ```
//!
//! ## Threads: nothing blocks the async runtime
//!
//! An instance owns one **writer thread** (the only write connection) and a pool of
//! **reader threads** (one WAL reader connection each, with its own cache of prepared
//! statements). Async methods only build a request, hand it to a thread and await the
//! answer on a oneshot channel, so they never block a runtime thread and work on any
//! runtime (or several: the threads are not tied to one).
//!
//! **Group commit.** The writer takes every request queued at that moment (and, when its
//! last group had several callers, waits up to 200 µs for as many), runs them in
//! one `BEGIN IMMEDIATE` transaction, each inside its own savepoint (a failing request is
//! rolled back alone and gets its own error; the others commit), commits once and only
//! then answers each request. Alone, a put is one commit; under load, one fsync serves the
//! whole group. With the default `synchronous = FULL`, an `Ok` from `put`/`put_writes`
//! means the data is in the fsynced WAL (CONTRACT §4 durability). SQLite's automatic
//! checkpoint (which would run inside a commit and delay its acknowledgement) is off on the
//! writer's connection; the writer runs a passive checkpoint itself after answering a
//! group, once the WAL has passed 1,000 pages and nothing is queued (or 16,384 pages in
//! any case).
//!
//! **Two instances.** SQLite's busy timeout waits for a lock another instance holds, and
//! a group that still meets `SQLITE_BUSY` is retried whole until
//! [`SqliteOptions::lock_timeout`]; readers retry the same way. Setup (WAL switch, schema)
//! is idempotent and serialised by `BEGIN IMMEDIATE`, so two instances may open the same
//! new file at once.
//!
//! **Reads** run on the reader pool: `get_tuple` is one SQL statement (the checkpoint row,
//! its writes and its large values; one snapshot), `list` one statement for the page plus
//! one for the page's writes inside one read transaction. Connections enable SQLite's
//! query-planner stability guarantee (QPSG): without it SQLite marks most statements
//! "re-prepare when re-bound", and since rusqlite's statement cache clears bindings when a
//! statement goes back to the cache, every cached statement was being compiled again on
//! each use.
//!
//! **Read cache.** Every commit to a WAL database, by any connection of any process,
//! rewrites the wal-index header in the shared `-shm` memory. A `get_tuple` or `list`
//! result is kept with the header seen just before its read transaction and served again,
//! from memory and without a thread hand-off, only while the header is unchanged, i.e.
//! while nothing at all has been committed since. So a cached read is never stale, also
//! across instances and processes (see `cache.rs`; [`SqliteOptions::read_cache`] turns it
//! off). It serves repeated reads of an unchanged database (polling, a UI, `list` after
//! `list`); a workload that writes between reads always reads SQLite.
//!
//! ## Schema (version [`SCHEMA_VERSION`], kept in `PRAGMA user_version`)
//!
//! - `checkpoints` — key (`thread_id`, `checkpoint_ns`, `checkpoint_id`): the parent id,
//!   `run_id` (metadata `run_id` when it is a string, indexed for `delete_for_runs`),
//!   `metadata` (JSON text), `value_versions` (JSON object: each channel that has a value
//!   -> its version) and `checkpoint` (the MessagePack body: `v`, `ts`, versions,
//!   `versions_seen`, `updated_channels`, the resolved inline values and the blob ids of
//!   the large ones). Indexed also by (`thread_id`, `checkpoint_id` DESC,
//!   `checkpoint_ns`) so that `list` over every namespace streams in order and stops at
//!   its limit.
//! - `writes` — key (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `task_id`, `idx`):
//!   `task_path`, `channel`, `type_tag`, `value`.
//! - `blobs` — key (`thread_id`, `blob_id`): channel values longer than 16 KiB, stored once
//!   and shared by every checkpoint that reads them; `blob_refs` says which checkpoint
//!   reads which blob, so `prune`, `delete_for_runs` and re-puts drop unreferenced blobs.
//!
//! ## Channel values: resolved at put, stored with the checkpoint
//!
//! At `put`, each channel of `channel_versions` gets its value (CONTRACT §2 put): the value
//! the checkpoint carries; else none when the channel is in `new_versions`; else, when the
//! parent has the same version, the parent's value or none (a channel emptied there stays
//! empty, CONTRACT §2 put.emptied); else the newest value stored at
//! that (channel, version) in the thread and namespace. The resolved map is stored with the
//! checkpoint, small values inline and large ones by reference. Why this layout:
//! - **Siblings never collide** (their values are keyed by checkpoint, not by version), a
//!   read needs no version lookup, and `prune(keep_latest)` keeps every value a kept
//!   checkpoint reads by construction.
//! - **Reads are one row**: `get_tuple` is one statement (checkpoint row, its writes, its
//!   large values) and `list` decodes one row per checkpoint plus one query for the
//!   page's writes, which is what makes them fast.
//! - **Large values are not copied**: a value over 16 KiB that the child carries unchanged
//!   (same version, same bytes as the parent's) or inherits is referenced, not rewritten.
//!
//! MessagePack (`rmp-serde`) is used for the body because it is self-describing (so a
//! channel version keeps its kind, integer or string) and stores bytes as bytes.
//! Metadata is JSON text so that `list`'s filter runs in SQL (`json_each`, bound
//! parameters only; no key or value is ever pasted into SQL text).
//!
//! ## Registration (feature `kit`)
//!
//! The conformance kit's wiring is behind the `kit` feature, so a normal build carries
//! none of it (nor `tempfile`). `SqliteStorage` is the saver's one
//! [`conformance_core::Storage`] impl (a database file per case, its path as the
//! location); `Registration::persistent` derives the rest from it. `registration` gives
//! each case a fresh file in a fresh temporary directory (removed by the cleanup);
//! `registration_at` puts each case's file beside a path the user chose. Both use
//! `kit_options` (`synchronous = NORMAL`, see there why); `registration_with` takes any
//! options.

#![warn(missing_docs)]

mod cache;
mod changes;
mod codec;
#[cfg(feature = "kit")]
mod leftovers;
mod reader;
#[cfg(feature = "kit")]
mod registration;
mod schema;
mod writer;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use checkpoint_contract::{
    check_thread_id as check_thread, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory, ListOptions, PruneStrategy, TypedValue,
};

#[cfg(feature = "kit")]
pub use registration::{kit_options, registration, registration_at, registration_with, SqliteStorage};
pub use schema::SCHEMA_VERSION;

/// SQLite's `PRAGMA synchronous` level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Every commit is fsynced before it is acknowledged: survives a process kill and a
    /// power loss (the default; CONTRACT §4 durability).
    #[default]
    Full,
    /// Commits are fsynced at WAL checkpoints only: survives a process kill, may lose the
    /// last commits on a power loss.
    Normal,
    /// No fsync at all (tests and benchmarks only).
    Off,
}

/// Options of [`SqliteSaver::open_with`].
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// The synchronous level (default [`Synchronous::Full`]).
    pub synchronous: Synchronous,
    /// How long SQLite itself waits for a lock held by another connection before
    /// answering busy (default 5 s).
    pub busy_timeout: Duration,
    /// How long a request keeps retrying while the database stays busy before it fails
    /// with a `Storage` error (default 30 s).
    pub lock_timeout: Duration,
    /// Reader threads (default: the number of CPUs, at least 2, at most 8).
    pub readers: usize,
    /// The most write requests committed in one group (default 1024).
    pub max_batch: usize,
    /// Serve a repeated `get_tuple`/`list` from memory while nothing at all has been
    /// committed to the file since it was read (default true; see the crate docs).
    pub read_cache: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self {
            synchronous: Synchronous::Full,
            busy_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_secs(30),
            readers: cpus.clamp(2, 8),
            max_batch: 1024,
            read_cache: true,
        }
    }
}

impl SqliteOptions {
    /// The same options with `synchronous` set.
    pub fn synchronous(mut self, level: Synchronous) -> Self {
        self.synchronous = level;
        self
    }

    /// The same options with the read cache on or off.
    pub fn read_cache(mut self, enabled: bool) -> Self {
        self.read_cache = enabled;
        self
    }

    /// The same options with `readers` reader threads (at least 1).
    pub fn readers(mut self, readers: usize) -> Self {
        self.readers = readers.max(1);
        self
    }
}

/// Counters of an instance's writer, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Transactions the writer's connection committed, as SQLite counts them (its WAL
    /// hook runs once per commit); a group that failed commits nothing.
    pub commits: u64,
    /// Write requests those transactions carried.
    pub requests: u64,
}

struct Inner {
    path: PathBuf,
    writer: writer::Writer,
    readers: reader::Readers,
    cache: Arc<cache::ReadCache>,
}

/// The SQLite checkpointer. Cheap to clone (clones share the threads and connections);
/// `Send + Sync`. See the crate docs for its threads, schema and value layout.
#[derive(Clone)]
pub struct SqliteSaver {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteSaver").field("path", &self.inner.path).finish()
    }
}

impl SqliteSaver {
    /// Opens (creating if needed) the database file at `path` with default options.
    ///
    /// Blocks while it sets the file up; from async code prefer [`SqliteSaver::open_async`].
    ///
    /// # Errors
    /// `Storage` with a clear message when the directory does not exist, the path is a
    /// directory, the file is not an SQLite database, it holds a newer schema version or
    /// tables this saver did not create, or SQLite fails (the rusqlite error is the cause);
    /// also once a front end's interrupt cleanup began (nothing is made then:
    /// `conformance_core::leftovers::unless_interrupted`).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens the database file at `path` with `options` (see [`SqliteSaver::open`]).
    ///
    /// # Errors
    /// As [`SqliteSaver::open`].
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, CheckpointError> {
        let path = path.as_ref().to_path_buf();
        // No file is made once a front end's interrupt cleanup began: it would outlive it.
        conformance_core::leftovers::unless_interrupted(|| Self::open_files(path, options))
            .unwrap_or_else(|| Err(CheckpointError::storage_msg("the run is being interrupted: no database is opened")))
    }

    /// [`SqliteSaver::open_with`]'s work: checks the path, makes and sets up the files.
    fn open_files(path: PathBuf, options: SqliteOptions) -> Result<Self, CheckpointError> {
        schema::check_path(&path)?;
        let fresh = std::fs::metadata(&path).map_or(true, |m| m.len() == 0);
        let write_conn = schema::open_connection(&path, &options, false)?;
        schema::setup(&write_conn, &path, &options, fresh)?;
        let mut read_conns = Vec::with_capacity(options.readers.max(1));
        for _ in 0..options.readers.max(1) {
            read_conns.push(schema::open_connection(&path, &options, true)?);
        }
        let cache = Arc::new(cache::ReadCache::open(&path, &options, options.read_cache)?);
        let writer = writer::Writer::spawn(write_conn, &options)?;
        let readers = reader::Readers::spawn(read_conns, &options)?;
        Ok(Self { inner: Arc::new(Inner { path, writer, readers, cache }) })
    }

    /// [`SqliteSaver::open_with`] on a separate thread, so an async caller's runtime thread
    /// is not blocked while the file is set up (which may wait for another instance's lock).
    ///
    /// # Errors
    /// As [`SqliteSaver::open`].
    pub async fn open_async(path: impl Into<PathBuf>, options: SqliteOptions) -> Result<Self, CheckpointError> {
        let path = path.into();
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("checkpoint-sqlite-open".into())
            .spawn(move || {
                let _ = tx.send(Self::open_with(path, options));
            })
            .map_err(|e| CheckpointError::storage("starting a thread to open the database", e))?;
        rx.await.map_err(|_| CheckpointError::storage_msg("the thread opening the database stopped"))?
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The writer's counters so far.
    pub fn writer_stats(&self) -> WriterStats {
        let s = &self.inner.writer.stats;
        WriterStats { commits: s.commits.load(Ordering::Relaxed), requests: s.requests.load(Ordering::Relaxed) }
    }
}

#[async_trait]
impl CheckpointSaver for SqliteSaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        config.validate()?;
        let stored = CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: Some(checkpoint.id.clone()),
        };
        let args = changes::PutArgs {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            parent: config.checkpoint_id.clone(),
            metadata_json: codec::encode_metadata(&metadata)?,
            run_id: codec::run_id_of(&metadata).map(str::to_owned),
            checkpoint,
            new_versions,
        };
        self.inner.writer.submit(Box::new(move |conn| changes::put(conn, &args))).await?;
        Ok(stored)
    }

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
        let args = changes::PutWritesArgs {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: checkpoint_id.to_owned(),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
            writes,
        };
        self.inner.writer.submit(Box::new(move |conn| changes::put_writes(conn, &args))).await
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        config.validate()?;
        if let Some(hit) = self.inner.cache.get(config) {
            return Ok(hit);
        }
        let cfg = config.clone();
        let cache = self.inner.cache.clone();
        self.inner
            .readers
            .run(move |conn| {
                let at = cache.snapshot();
                let t = reader::get_tuple(conn, &cfg)?;
                if let Some(at) = at {
                    cache.put_get(&cfg, at, &t);
                }
                Ok(t)
            })
            .await
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        check_thread(thread_id)?;
        if options.limit == Some(0) {
            return Ok(Vec::new());
        }
        if let Some(hit) = self.inner.cache.list(thread_id, options) {
            return Ok(hit);
        }
        let thread_id = thread_id.to_owned();
        let options = options.clone();
        let cache = self.inner.cache.clone();
        self.inner
            .readers
            .run(move |conn| {
                let at = cache.snapshot();
                let l = reader::list(conn, &thread_id, &options)?;
                if let Some(at) = at {
                    cache.put_list(&thread_id, &options, at, &l);
                }
                Ok(l)
            })
            .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        check_thread(thread_id)?;
        let thread_id = thread_id.to_owned();
        self.inner.writer.submit(Box::new(move |conn| changes::delete_thread(conn, &thread_id))).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let json = serde_json::to_string(run_ids).map_err(|e| CheckpointError::storage("encoding run ids", e))?;
        self.inner.writer.submit(Box::new(move |conn| changes::delete_for_runs(conn, &json))).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        check_thread(source)?;
        check_thread(target)?;
        if source == target {
            return Ok(());
        }
        let (source, target) = (source.to_owned(), target.to_owned());
        self.inner.writer.submit(Box::new(move |conn| changes::copy_thread(conn, &source, &target))).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let threads: BTreeSet<String> = thread_ids.iter().filter(|t| !t.is_empty()).cloned().collect();
        if threads.is_empty() {
            return Ok(());
        }
        self.inner
            .writer
            .submit(Box::new(move |conn| {
                for t in &threads {
                    match strategy {
                        PruneStrategy::Delete => changes::delete_thread(conn, t)?,
                        PruneStrategy::KeepLatest => changes::prune_keep_latest(conn, t)?,
                    }
                }
                Ok(())
            }))
            .await
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        config.validate()?;
        if channels.is_empty() {
            return Ok(BTreeMap::new());
        }
        let cfg = config.clone();
        let channels = channels.to_vec();
        self.inner.readers.run(move |conn| reader::delta_channel_history(conn, &cfg, &channels)).await
    }
}

#[cfg(test)]
mod perf {
    //! CPU cost of the read paths without the thread hand-off (run with
    //! `cargo test --release -p checkpoint-sqlite perf -- --ignored --nocapture`).
    use super::*;
    use checkpoint_contract::ChannelVersion;

    /// This thread's CPU time (user + system) from /proc, in seconds (10 ms ticks).
    fn thread_cpu() -> f64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (ticks(11) + ticks(12)) / 100.0
    }

    fn measure(label: &str, n: usize, mut f: impl FnMut()) {
        let (w, c) = (std::time::Instant::now(), thread_cpu());
        for _ in 0..n {
            f();
        }
        let cpu = thread_cpu() - c;
        println!(
            "{label}: {:.2} us cpu/op, {:.2} us wall/op",
            cpu * 1e6 / n as f64,
            w.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }

    fn params_t() -> [&'static str; 2] {
        ["t", ""]
    }

    #[test]
    #[ignore]
    fn read_paths_cpu_cost() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("perf.sqlite");
        let opts = SqliteOptions::default().synchronous(Synchronous::Off);
        let saver = SqliteSaver::open_with(&path, opts.clone()).expect("open");
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("rt");
        let mut parent = CheckpointConfig::new("t");
        for i in 0..1000i64 {
            let mut cp = Checkpoint { v: 1, id: format!("1f0{i:029}"), ..Checkpoint::default() };
            for ch in ["messages", "count", "branch:a"] {
                cp.channel_values.insert(ch.into(), TypedValue::json(&serde_json::json!({"i": i, "text": "hello"})));
                cp.channel_versions.insert(ch.into(), ChannelVersion::Int(i + 1));
            }
            let meta = serde_json::json!({"source": "loop", "step": i, "parents": {}});
            let nv = cp.channel_versions.clone();
            parent =
                rt.block_on(saver.put(&parent, cp, meta.as_object().cloned().unwrap_or_default(), nv)).expect("put");
            let w = vec![("messages".to_owned(), TypedValue::json(&1.into()))];
            rt.block_on(saver.put_writes(&parent, w, "task", "")).expect("put_writes");
        }
        let conn = schema::open_connection(&path, &opts, true).expect("conn");
        if std::env::var_os("PERF_GET_ONLY").is_some() {
            let latest = CheckpointConfig::new("t");
            measure("get_tuple latest (direct)", 200_000, || {
                std::hint::black_box(reader::get_tuple(&conn, &latest).expect("get").expect("some"));
            });
            return;
        }
        if std::env::var_os("PERF_LIST_ONLY").is_some() {
            measure("list 1,000 (direct)", 300, || {
                std::hint::black_box(reader::list(&conn, "t", &ListOptions::all()).expect("list"));
            });
            return;
        }
        let latest = CheckpointConfig::new("t");
        measure("get_tuple latest (direct)", 20_000, || {
            std::hint::black_box(reader::get_tuple(&conn, &latest).expect("get").expect("some"));
        });
        {
            let t = reader::get_tuple(&conn, &latest).expect("get").expect("some");
            let body = codec::encode_checkpoint(
                &t.checkpoint,
                &t.checkpoint
                    .channel_values
                    .iter()
                    .map(|(k, v)| (k.clone(), codec::StoredValue::Inline(v.clone())))
                    .collect(),
            )
            .expect("encode");
            measure("decode body", 20_000, || {
                std::hint::black_box(codec::decode_checkpoint(&body).expect("decode"));
            });
            let meta = codec::encode_metadata(&t.metadata).expect("meta");
            measure("decode metadata", 20_000, || {
                std::hint::black_box(codec::decode_metadata(&meta).expect("decode"));
            });
            let mut stmt = conn
                .prepare("SELECT checkpoint FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id DESC LIMIT 1")
                .expect("prepare");
            measure("select latest body only", 20_000, || {
                let b: Vec<u8> = stmt.query_row(params_t(), |r| r.get(0)).expect("row");
                std::hint::black_box(b);
            });
        }
        measure("get_tuple latest (through the pool)", 20_000, || {
            std::hint::black_box(rt.block_on(saver.get_tuple(&latest)).expect("get").expect("some"));
        });
        measure("list 1,000 (direct)", 50, || {
            std::hint::black_box(reader::list(&conn, "t", &ListOptions::all()).expect("list"));
        });
        measure("list 1,000 in ns (direct)", 50, || {
            std::hint::black_box(reader::list(&conn, "t", &ListOptions::all().ns("")).expect("list"));
        });
        let f = ListOptions::all().filter("source", serde_json::json!("loop"));
        measure("list 1,000 filtered (direct)", 50, || {
            std::hint::black_box(reader::list(&conn, "t", &f).expect("list"));
        });
        measure("list limit 10 (direct)", 5_000, || {
            std::hint::black_box(reader::list(&conn, "t", &ListOptions::all().limit(10)).expect("list"));
        });
    }
}
