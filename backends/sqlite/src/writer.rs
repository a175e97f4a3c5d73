//! The writer thread: group commit of every change the saver makes (the changes themselves
//! are in `changes.rs`).
//!
//! One thread owns the only write connection of an instance. It takes every request queued
//! at that moment (up to `max_batch`), runs them in ONE `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint (a request that fails is rolled back alone and gets its error),
//! commits once, and only then answers each request (group commit: durable, one fsync for
//! the whole group). When another instance holds the write lock, SQLite's busy timeout
//! waits and the whole group is retried until `lock_timeout`, so "database is locked" does
//! not escape to callers.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use checkpoint_contract::CheckpointError;
use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::schema::{backoff, error_is_busy, is_busy, sql_err};
use crate::SqliteOptions;

/// A change, run inside the group's transaction and its own savepoint. It may run more than
/// once when the group is retried, so it must not consume its inputs.
pub(crate) type WriteOp = Box<dyn FnMut(&Connection) -> Result<(), CheckpointError> + Send>;

/// How long the writer waits for the callers of its last group to send their next
/// requests, when that group had several (see `writer_loop`): a fraction of one fsync.
const LINGER: std::time::Duration = std::time::Duration::from_micros(200);

struct Job {
    op: WriteOp,
    reply: oneshot::Sender<Result<(), CheckpointError>>,
}

/// Counters of the writer (for tests and benchmarks).
#[derive(Debug, Default)]
pub(crate) struct WriterStats {
    /// Counted by SQLite: its WAL hook runs once per commit of the writer's connection.
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
        let stats = Arc::new(WriterStats::default());
        let hook_stats = stats.clone();
        // SQLite runs the WAL hook after each commit: it keeps the WAL's size and counts
        // the commits (the bench's group-commit figure is SQLite's count, not ours).
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: std::ffi::c_int| {
            hook_pages.store(u64::try_from(pages).unwrap_or(0), Ordering::Relaxed);
            hook_stats.commits.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }))
        .map_err(sql_err("configuring WAL checkpoints"))?;
        let (tx, rx) = mpsc::channel::<Job>();
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
    // The size of the last group: how many callers were writing at once.
    let mut last_group = 1;
    loop {
        let first = match next.take() {
            Some(job) => job,
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        let max = options.max_batch.max(1);
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        // Callers answered by the last group send their next request a moment apart: when
        // several were writing at once, wait up to LINGER for as many before committing,
        // so one fsync serves them all instead of one, then the rest. A lone writer
        // (last group of 1) never waits.
        let linger_until = Instant::now() + LINGER;
        while batch.len() < last_group.min(max) {
            match rx.recv_timeout(linger_until.saturating_duration_since(Instant::now())) {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        last_group = batch.len();
        let results = run_batch(conn, &mut batch, options);
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
