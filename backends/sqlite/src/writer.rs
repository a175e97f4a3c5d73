//! The writer thread and every change the saver makes.
//!
//! One thread owns the only write connection of an instance. It takes every request queued
//! at that moment (up to `max_batch`), runs them in ONE `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint (a request that fails is rolled back alone and gets its error),
//! commits once, and only then answers each request (group commit: durable, one fsync for
//! the whole group). When another instance holds the write lock, SQLite's busy timeout
//! waits and the whole group is retried until `lock_timeout`, so "database is locked" does
//! not escape to callers.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use checkpoint_contract::{write_index, ChannelVersions, Checkpoint, CheckpointError, TypedValue};
use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

use crate::codec::{
    decode_checkpoint, encode_checkpoint, encode_value_versions, version_sql, StoredCheckpoint, StoredValue,
    INLINE_LIMIT,
};
use crate::schema::{backoff, error_is_busy, is_busy, sql_err};
use crate::SqliteOptions;

/// A change, run inside the group's transaction and its own savepoint. It may run more than
/// once when the group is retried, so it must not consume its inputs.
pub(crate) type WriteOp = Box<dyn FnMut(&Connection) -> Result<(), CheckpointError> + Send>;

struct Job {
    op: WriteOp,
    reply: oneshot::Sender<Result<(), CheckpointError>>,
}

/// Counters of the writer (for tests and benchmarks).
#[derive(Debug, Default)]
pub(crate) struct WriterStats {
    pub commits: AtomicU64,
    pub requests: AtomicU64,
}

/// The handle to the writer thread; dropping it lets the thread finish its queue and exit.
pub(crate) struct Writer {
    tx: mpsc::Sender<Job>,
    pub stats: Arc<WriterStats>,
}

impl Writer {
    /// Starts the writer thread on `conn`. The connection's automatic checkpoints are
    /// turned off: the thread checkpoints itself after answering a group (see
    /// [`maybe_checkpoint`]), so an acknowledgement never waits for a checkpoint.
    pub(crate) fn spawn(mut conn: Connection, options: &SqliteOptions) -> Result<Self, CheckpointError> {
        conn.execute_batch("PRAGMA wal_autocheckpoint = 0").map_err(sql_err("configuring WAL checkpoints"))?;
        let wal_pages = Arc::new(AtomicU64::new(0));
        let hook_pages = wal_pages.clone();
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: std::ffi::c_int| {
            hook_pages.store(u64::try_from(pages).unwrap_or(0), Ordering::Relaxed);
            Ok(())
        }))
        .map_err(sql_err("configuring WAL checkpoints"))?;
        let (tx, rx) = mpsc::channel::<Job>();
        let stats = Arc::new(WriterStats::default());
        let thread_stats = stats.clone();
        let options = options.clone();
        std::thread::Builder::new()
            .name("checkpoint-sqlite-writer".into())
            .spawn(move || writer_loop(&conn, &rx, &options, &thread_stats, &wal_pages))
            .map_err(|e| CheckpointError::storage("starting the SQLite writer thread", e))?;
        Ok(Self { tx, stats })
    }

    /// Queues `op` and waits until its group has committed (or failed).
    pub(crate) async fn submit(&self, op: WriteOp) -> Result<(), CheckpointError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Job { op, reply })
            .map_err(|_| CheckpointError::storage_msg("the SQLite writer thread has stopped"))?;
        answer.await.map_err(|_| CheckpointError::storage_msg("the SQLite writer thread stopped before answering"))?
    }
}

/// WAL pages after which the writer checkpoints when it has nothing queued (SQLite's own
/// automatic threshold).
const CHECKPOINT_PAGES: u64 = 1000;
/// WAL pages after which the writer checkpoints even with requests queued.
const CHECKPOINT_PAGES_BUSY: u64 = 16 * 1024;

/// A passive checkpoint (never waits for readers or other writers) once the WAL has grown
/// past [`CHECKPOINT_PAGES`] and nothing is queued, or past [`CHECKPOINT_PAGES_BUSY`].
/// Errors are ignored: a checkpoint only bounds the WAL's size, it never loses data.
fn maybe_checkpoint(conn: &Connection, wal_pages: &AtomicU64, queue_empty: bool) {
    let pages = wal_pages.load(Ordering::Relaxed);
    let due = pages > CHECKPOINT_PAGES_BUSY || (pages > CHECKPOINT_PAGES && queue_empty);
    if due && conn.wal_checkpoint_v2(None::<&str>, rusqlite::wal::CheckpointMode::PASSIVE).is_ok() {
        wal_pages.store(0, Ordering::Relaxed);
    }
}

fn writer_loop(
    conn: &Connection,
    rx: &mpsc::Receiver<Job>,
    options: &SqliteOptions,
    stats: &WriterStats,
    wal_pages: &AtomicU64,
) {
    let mut next: Option<Job> = None;
    loop {
        let first = match next.take() {
            Some(job) => job,
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        let mut batch = vec![first];
        while batch.len() < options.max_batch.max(1) {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let results = run_batch(conn, &mut batch, options);
        stats.commits.fetch_add(1, Ordering::Relaxed);
        stats.requests.fetch_add(batch.len() as u64, Ordering::Relaxed);
        for (job, result) in batch.into_iter().zip(results) {
            let _ = job.reply.send(result);
        }
        // Peek at the queue without losing what is taken: it starts the next group.
        next = rx.try_recv().ok();
        maybe_checkpoint(conn, wal_pages, next.is_none());
    }
}

/// Why a group attempt ended without a commit.
enum Abort {
    /// Another connection holds the lock: retry the whole group.
    Busy(String),
    /// Anything else: every request of the group fails with this message.
    Fatal(String),
}

fn run_batch(conn: &Connection, batch: &mut [Job], options: &SqliteOptions) -> Vec<Result<(), CheckpointError>> {
    let deadline = Instant::now() + options.lock_timeout;
    let mut attempt = 0;
    loop {
        match try_batch(conn, batch) {
            Ok(results) => return results,
            Err(Abort::Busy(_)) if Instant::now() < deadline => {
                backoff(attempt);
                attempt += 1;
            }
            Err(Abort::Busy(m)) => {
                let message = format!(
                    "the database stayed locked by another connection for {:.1} s",
                    options.lock_timeout.as_secs_f64()
                );
                return batch.iter().map(|_| Err(CheckpointError::storage(message.clone(), m.clone()))).collect();
            }
            Err(Abort::Fatal(m)) => {
                return batch
                    .iter()
                    .map(|_| Err(CheckpointError::storage("committing a group of writes", m.clone())))
                    .collect()
            }
        }
    }
}

fn exec(conn: &Connection, sql: &str) -> Result<(), rusqlite::Error> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn abort_of(e: rusqlite::Error) -> Abort {
    if is_busy(&e) {
        Abort::Busy(e.to_string())
    } else {
        Abort::Fatal(e.to_string())
    }
}

fn try_batch(conn: &Connection, batch: &mut [Job]) -> Result<Vec<Result<(), CheckpointError>>, Abort> {
    exec(conn, "BEGIN IMMEDIATE").map_err(abort_of)?;
    let mut results = Vec::with_capacity(batch.len());
    for job in batch.iter_mut() {
        if let Err(e) = exec(conn, "SAVEPOINT request") {
            let _ = exec(conn, "ROLLBACK");
            return Err(abort_of(e));
        }
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| (job.op)(conn)))
            .unwrap_or_else(|_| Err(CheckpointError::storage_msg("a write request panicked; it was rolled back")));
        match outcome {
            Ok(()) => {
                if let Err(e) = exec(conn, "RELEASE request") {
                    let _ = exec(conn, "ROLLBACK");
                    return Err(abort_of(e));
                }
                results.push(Ok(()));
            }
            Err(e) if error_is_busy(&e) => {
                let _ = exec(conn, "ROLLBACK");
                return Err(Abort::Busy(e.display_chain()));
            }
            Err(e) => {
                let undone = exec(conn, "ROLLBACK TO request").and_then(|()| exec(conn, "RELEASE request"));
                if let Err(u) = undone {
                    let _ = exec(conn, "ROLLBACK");
                    return Err(abort_of(u));
                }
                results.push(Err(e));
            }
        }
    }
    if let Err(e) = exec(conn, "COMMIT") {
        let _ = exec(conn, "ROLLBACK");
        return Err(abort_of(e));
    }
    Ok(results)
}

/// Everything `put` needs, owned by its request.
pub(crate) struct PutArgs {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub parent: Option<String>,
    pub checkpoint: Checkpoint,
    pub metadata_json: String,
    pub run_id: Option<String>,
    pub new_versions: ChannelVersions,
}

/// The body of the parent, loaded at most once per put.
struct ParentCache<'a> {
    args: &'a PutArgs,
    loaded: Option<Option<StoredCheckpoint>>,
}

impl ParentCache<'_> {
    fn get(&mut self, conn: &Connection) -> Result<Option<&StoredCheckpoint>, CheckpointError> {
        if self.loaded.is_none() {
            let body = match &self.args.parent {
                None => None,
                Some(parent) => conn
                    .prepare_cached(
                        "SELECT checkpoint FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
                    )
                    .and_then(|mut s| {
                        s.query_row(params![self.args.thread_id, self.args.checkpoint_ns, parent], |r| {
                            r.get::<_, Vec<u8>>(0)
                        })
                        .optional()
                    })
                    .map_err(sql_err("reading the parent checkpoint"))?
                    .map(|b| decode_checkpoint(&b))
                    .transpose()?,
            };
            self.loaded = Some(body);
        }
        Ok(self.loaded.as_ref().and_then(Option::as_ref))
    }

    /// The parent's value of `ch` when the parent has `ch` at the same version.
    fn value(
        &mut self,
        conn: &Connection,
        ch: &str,
        version: &checkpoint_contract::ChannelVersion,
    ) -> Result<Option<StoredValue>, CheckpointError> {
        Ok(self.get(conn)?.filter(|p| p.channel_versions.get(ch) == Some(version)).and_then(|p| p.value(ch)))
    }
}

/// The newest stored value of (`ch`, `version`) in the thread and namespace, from any
/// checkpoint that has one (latest put first).
fn newest_value(
    conn: &Connection,
    a: &PutArgs,
    ch: &str,
    version: &checkpoint_contract::ChannelVersion,
) -> Result<Option<StoredValue>, CheckpointError> {
    let body: Option<Vec<u8>> = conn
        .prepare_cached(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2
               AND EXISTS (SELECT 1 FROM json_each(value_versions) j WHERE j.key = ?3 AND j.value = ?4)
             ORDER BY rowid DESC LIMIT 1",
        )
        .and_then(|mut s| {
            s.query_row(params![a.thread_id, a.checkpoint_ns, ch, version_sql(version)], |r| r.get(0)).optional()
        })
        .map_err(sql_err("looking up a stored channel value"))?;
    match body {
        None => Ok(None),
        Some(b) => Ok(decode_checkpoint(&b)?.value(ch)),
    }
}

/// True when blob `blob_id` of the thread holds exactly `value`.
fn blob_equals(conn: &Connection, thread_id: &str, blob_id: &str, value: &TypedValue) -> Result<bool, CheckpointError> {
    conn.prepare_cached(
        "SELECT 1 FROM blobs WHERE thread_id = ?1 AND blob_id = ?2 AND type_tag = ?3 AND length(data) = ?4 AND data = ?5",
    )
    .and_then(|mut s| s.exists(params![thread_id, blob_id, value.type_tag, value.data.len() as i64, value.data]))
    .map_err(sql_err("comparing a channel value with the stored one"))
}

/// Deletes the thread's blobs that no checkpoint references any more.
fn gc_blobs(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    conn.prepare_cached(
        "DELETE FROM blobs WHERE thread_id = ?1
           AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.thread_id = ?1 AND r.blob_id = blobs.blob_id)",
    )
    .and_then(|mut s| s.execute([thread_id]))
    .map(|_| ())
    .map_err(sql_err("deleting unreferenced channel values"))
}

/// `put` (CONTRACT §2): resolves every channel of `channel_versions` (carried value; else
/// absent when in `new_versions`; else the parent's value at the same version; else the
/// newest stored value at that version), stores the resolved map with the checkpoint, and
/// replaces an existing row of the same id (its writes stay: they live in `writes`).
pub(crate) fn put(conn: &Connection, a: &PutArgs) -> Result<(), CheckpointError> {
    let cp = &a.checkpoint;
    let mut parent = ParentCache { args: a, loaded: None };
    let mut values: BTreeMap<String, StoredValue> = BTreeMap::new();
    for (ch, version) in &cp.channel_versions {
        let value = if let Some(v) = cp.channel_values.get(ch) {
            if v.data.len() > INLINE_LIMIT {
                let reuse = match parent.value(conn, ch, version)? {
                    Some(StoredValue::Blob(id)) if blob_equals(conn, &a.thread_id, &id, v)? => Some(id),
                    _ => None,
                };
                let id = match reuse {
                    Some(id) => id,
                    None => {
                        let id = uuid::Uuid::new_v4().simple().to_string();
                        conn.prepare_cached(
                            "INSERT INTO blobs (thread_id, blob_id, type_tag, data) VALUES (?1, ?2, ?3, ?4)",
                        )
                        .and_then(|mut s| s.execute(params![a.thread_id, id, v.type_tag, v.data]))
                        .map_err(sql_err("storing a large channel value"))?;
                        id
                    }
                };
                Some(StoredValue::Blob(id))
            } else {
                Some(StoredValue::Inline(v.clone()))
            }
        } else if a.new_versions.contains_key(ch) {
            None
        } else {
            match parent.value(conn, ch, version)? {
                Some(v) => Some(v),
                None => newest_value(conn, a, ch, version)?,
            }
        };
        if let Some(v) = value {
            values.insert(ch.clone(), v);
        }
    }
    let body = encode_checkpoint(cp, &values)?;
    let value_versions = encode_value_versions(cp, &values)?;

    // Blob references: replace the old row's, then drop blobs nobody references any more.
    let old_refs: Vec<String> = conn
        .prepare_cached(
            "DELETE FROM blob_refs WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 RETURNING blob_id",
        )
        .and_then(|mut s| {
            s.query_map(params![a.thread_id, a.checkpoint_ns, cp.id], |r| r.get(0))?.collect::<Result<Vec<_>, _>>()
        })
        .map_err(sql_err("replacing the checkpoint's value references"))?;
    let mut new_refs: Vec<&str> = Vec::new();
    for v in values.values() {
        if let StoredValue::Blob(id) = v {
            new_refs.push(id);
            conn.prepare_cached(
                "INSERT OR IGNORE INTO blob_refs (thread_id, checkpoint_ns, checkpoint_id, blob_id) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(params![a.thread_id, a.checkpoint_ns, cp.id, id]))
            .map_err(sql_err("storing the checkpoint's value references"))?;
        }
    }
    for old in old_refs.iter().filter(|o| !new_refs.contains(&o.as_str())) {
        conn.prepare_cached(
            "DELETE FROM blobs WHERE thread_id = ?1 AND blob_id = ?2
               AND NOT EXISTS (SELECT 1 FROM blob_refs WHERE thread_id = ?1 AND blob_id = ?2)",
        )
        .and_then(|mut s| s.execute(params![a.thread_id, old]))
        .map_err(sql_err("deleting an unreferenced channel value"))?;
    }

    conn.prepare_cached(
        "INSERT OR REPLACE INTO checkpoints
           (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut s| {
        s.execute(params![
            a.thread_id,
            a.checkpoint_ns,
            cp.id,
            a.parent,
            a.run_id,
            a.metadata_json,
            value_versions,
            body
        ])
    })
    .map(|_| ())
    .map_err(sql_err("storing the checkpoint"))
}

/// Everything `put_writes` needs, owned by its request.
pub(crate) struct PutWritesArgs {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub task_id: String,
    pub task_path: String,
    pub writes: Vec<(String, TypedValue)>,
}

/// `put_writes` (CONTRACT §2): each write gets its index; a regular write is
/// `INSERT OR IGNORE` (first wins), a special one `INSERT OR REPLACE` (last wins), decided
/// per row.
pub(crate) fn put_writes(conn: &Connection, a: &PutWritesArgs) -> Result<(), CheckpointError> {
    const COLUMNS: &str =
        "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    let mut first_wins = conn
        .prepare_cached(&format!("INSERT OR IGNORE INTO writes {COLUMNS}"))
        .map_err(sql_err("preparing to store writes"))?;
    let mut last_wins = conn
        .prepare_cached(&format!("INSERT OR REPLACE INTO writes {COLUMNS}"))
        .map_err(sql_err("preparing to store writes"))?;
    for (position, (channel, value)) in a.writes.iter().enumerate() {
        let idx = write_index(channel, position);
        let stmt = if idx < 0 { &mut last_wins } else { &mut first_wins };
        stmt.execute(params![
            a.thread_id,
            a.checkpoint_ns,
            a.checkpoint_id,
            a.task_id,
            idx,
            a.task_path,
            channel,
            value.type_tag,
            value.data
        ])
        .map_err(sql_err("storing a write"))?;
    }
    Ok(())
}

fn run_sql(conn: &Connection, sql: &str, params: impl rusqlite::Params, doing: &str) -> Result<(), CheckpointError> {
    conn.prepare_cached(sql).and_then(|mut s| s.execute(params)).map(|_| ()).map_err(sql_err(doing))
}

/// `delete_thread` (CONTRACT §2): every row of the thread in every table.
pub(crate) fn delete_thread(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    for table in ["checkpoints", "writes", "blob_refs", "blobs"] {
        run_sql(conn, &format!("DELETE FROM {table} WHERE thread_id = ?1"), [thread_id], "deleting a thread")?;
    }
    Ok(())
}

/// `delete_for_runs` (CONTRACT §3): checkpoints whose `metadata.run_id` is one of
/// `run_ids_json` (a JSON array of strings), with their writes and values.
pub(crate) fn delete_for_runs(conn: &Connection, run_ids_json: &str) -> Result<(), CheckpointError> {
    const DOOMED: &str = "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
                           WHERE run_id IN (SELECT value FROM json_each(?1))";
    let threads: Vec<String> = conn
        .prepare_cached("SELECT DISTINCT thread_id FROM checkpoints WHERE run_id IN (SELECT value FROM json_each(?1))")
        .and_then(|mut s| s.query_map([run_ids_json], |r| r.get(0))?.collect::<Result<Vec<_>, _>>())
        .map_err(sql_err("finding the checkpoints of the runs"))?;
    if threads.is_empty() {
        return Ok(());
    }
    run_sql(
        conn,
        &format!("DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN ({DOOMED})"),
        [run_ids_json],
        "deleting the writes of the runs",
    )?;
    run_sql(
        conn,
        &format!("DELETE FROM blob_refs WHERE (thread_id, checkpoint_ns, checkpoint_id) IN ({DOOMED})"),
        [run_ids_json],
        "deleting the value references of the runs",
    )?;
    run_sql(
        conn,
        "DELETE FROM checkpoints WHERE run_id IN (SELECT value FROM json_each(?1))",
        [run_ids_json],
        "deleting the checkpoints of the runs",
    )?;
    for t in &threads {
        gc_blobs(conn, t)?;
    }
    Ok(())
}

/// `copy_thread` (CONTRACT §3): every row of `source` in every table, under `target`, in
/// SQL. Rows of the target with the same keys are replaced, so a second copy changes
/// nothing; a missing source copies nothing.
pub(crate) fn copy_thread(conn: &Connection, source: &str, target: &str) -> Result<(), CheckpointError> {
    let p = params![source, target];
    run_sql(
        conn,
        "DELETE FROM blob_refs WHERE thread_id = ?2 AND (checkpoint_ns, checkpoint_id) IN
           (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?1)",
        p,
        "copying a thread (value references)",
    )?;
    // CONTRACT §3 copy_thread: a copied checkpoint's writes replace the target
    // checkpoint's writes, also when the source checkpoint has none (found by the fuzzer).
    run_sql(
        conn,
        "DELETE FROM writes WHERE thread_id = ?2 AND (checkpoint_ns, checkpoint_id) IN
           (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?1)",
        p,
        "copying a thread (replaced writes)",
    )?;
    run_sql(
        conn,
        "INSERT OR REPLACE INTO checkpoints
           (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint)
         SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint
           FROM checkpoints WHERE thread_id = ?1 ORDER BY rowid",
        p,
        "copying a thread (checkpoints)",
    )?;
    run_sql(
        conn,
        "INSERT OR REPLACE INTO writes
           (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value)
         SELECT ?2, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value
           FROM writes WHERE thread_id = ?1",
        p,
        "copying a thread (writes)",
    )?;
    run_sql(
        conn,
        "INSERT OR IGNORE INTO blobs (thread_id, blob_id, type_tag, data)
         SELECT ?2, blob_id, type_tag, data FROM blobs WHERE thread_id = ?1",
        p,
        "copying a thread (large values)",
    )?;
    run_sql(
        conn,
        "INSERT OR IGNORE INTO blob_refs (thread_id, checkpoint_ns, checkpoint_id, blob_id)
         SELECT ?2, checkpoint_ns, checkpoint_id, blob_id FROM blob_refs WHERE thread_id = ?1",
        p,
        "copying a thread (value references)",
    )?;
    gc_blobs(conn, target)
}

/// `prune(keep_latest)` (CONTRACT §3) of one thread: the newest checkpoint of each
/// namespace stays with its writes and every value it reads (values are resolved per
/// checkpoint, so nothing older is needed); everything else of the thread goes.
pub(crate) fn prune_keep_latest(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    run_sql(
        conn,
        "DELETE FROM checkpoints WHERE thread_id = ?1 AND checkpoint_id <
           (SELECT max(c.checkpoint_id) FROM checkpoints c
             WHERE c.thread_id = ?1 AND c.checkpoint_ns = checkpoints.checkpoint_ns)",
        [thread_id],
        "pruning checkpoints",
    )?;
    for table in ["writes", "blob_refs"] {
        run_sql(
            conn,
            &format!(
                "DELETE FROM {table} WHERE thread_id = ?1 AND NOT EXISTS
                   (SELECT 1 FROM checkpoints c WHERE c.thread_id = ?1
                      AND c.checkpoint_ns = {table}.checkpoint_ns AND c.checkpoint_id = {table}.checkpoint_id)"
            ),
            [thread_id],
            "pruning writes and value references",
        )?;
    }
    gc_blobs(conn, thread_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn insert(conn: &Connection, id: &str) -> Result<(), CheckpointError> {
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value)
             VALUES ('g', '', ?1, 't', 0, '', 'c', 'json', x'31')",
            [id],
        )
        .map(|_| ())
        .map_err(sql_err("test insert"))
    }

    /// A request that fails inside a group is rolled back alone (its savepoint); the others
    /// of the same group commit and succeed, and every answer comes after the commit.
    #[test]
    fn a_failing_request_does_not_fail_its_group() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("g.sqlite");
        let options = SqliteOptions::default();
        let conn = crate::schema::open_connection(&path, &options, false).expect("conn");
        crate::schema::setup(&conn, &path, &options, true).expect("setup");
        let writer = Arc::new(Writer::spawn(conn, &options).expect("writer"));
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
        rt.block_on(async {
            // The first request holds the writer so that the next ones queue into one group.
            let w = writer.clone();
            let first = tokio::spawn(async move {
                w.submit(Box::new(|c: &Connection| {
                    std::thread::sleep(Duration::from_millis(300));
                    insert(c, "first")
                }))
                .await
            });
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut others = Vec::new();
            for i in 0..5 {
                let w = writer.clone();
                others.push(tokio::spawn(async move {
                    w.submit(Box::new(move |c: &Connection| {
                        insert(c, &format!("ok-{i}"))?;
                        if i == 2 {
                            // Half-done work, then a failure: the row must not survive.
                            return Err(CheckpointError::InvalidInput("refused on purpose".into()));
                        }
                        Ok(())
                    }))
                    .await
                }));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert!(first.await.expect("task").is_ok());
            for (i, o) in others.into_iter().enumerate() {
                let r = o.await.expect("task");
                assert_eq!(r.is_ok(), i != 2, "request {i}: {r:?}");
            }
        });
        let stats = &writer.stats;
        assert_eq!(stats.requests.load(Ordering::Relaxed), 6);
        assert_eq!(stats.commits.load(Ordering::Relaxed), 2, "the five queued requests shared one commit");
        let check = rusqlite::Connection::open(&path).expect("check");
        let ids: Vec<String> = check
            .prepare("SELECT checkpoint_id FROM writes ORDER BY checkpoint_id")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("ids");
        assert_eq!(ids, ["first", "ok-0", "ok-1", "ok-3", "ok-4"]);
    }
}
