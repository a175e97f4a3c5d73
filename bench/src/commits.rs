//! Counting the transactions a saver commits (issue 38, group commit). SQLite: the
//! reference saver's writer counts its connection's commits in SQLite's WAL hook, which
//! SQLite runs once per commit ([`sqlite_commits_per_put`]). PostgreSQL: the
//! server's transaction ids. Every transaction that writes takes exactly one id, and reading
//! the current id takes one itself, so the write transactions between two readings are their
//! difference minus one. Counted, not timed; it also counts any other writer of the server
//! (none during the bench but autovacuum's ANALYZE, so it can only overcount).

use tokio_postgres::NoTls;

/// A connection for reading transaction ids, to `url` ($CHECKPOINT_POSTGRES_URL); `None`
/// when there is no URL or it cannot connect (the figure is then left out, with a warning).
pub struct XactCounter {
    client: tokio_postgres::Client,
}

impl XactCounter {
    /// Connects to `url`.
    pub async fn connect(url: &str) -> Option<Self> {
        match tokio_postgres::connect(url, NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(connection);
                Some(Self { client })
            }
            Err(e) => {
                eprintln!("warning: cannot connect to count commits: {e}");
                None
            }
        }
    }

    /// The next transaction id (taking it).
    pub async fn take_id(&self) -> Option<i64> {
        let row = self.client.query_one("SELECT pg_current_xact_id()::text::bigint", &[]).await.ok()?;
        Some(row.get(0))
    }

    /// The write transactions committed while `work` ran, and its output.
    pub async fn count<T>(&self, work: impl std::future::Future<Output = T>) -> (Option<i64>, T) {
        let before = self.take_id().await;
        let out = work.await;
        let after = self.take_id().await;
        (before.zip(after).map(|(b, a)| a - b - 1), out)
    }
}

/// Commits per put of `per_task` chained puts from each of 8 tasks on a fresh reference
/// SQLite saver in a temporary directory, as SQLite counts them (the writer's WAL hook,
/// `SqliteSaver::writer_stats`); `None` (with a warning) when the saver cannot be opened.
/// The same saver, with the same defaults, as the `sqlite` target's registration.
pub async fn sqlite_commits_per_put(tag: &str, per_task: usize) -> Option<f64> {
    let dir = tempfile::tempdir().ok()?;
    let saver = match checkpoint_sqlite::SqliteSaver::open(dir.path().join("commits.sqlite")) {
        Ok(s) => std::sync::Arc::new(s),
        Err(e) => {
            eprintln!("warning: cannot open a SQLite saver to count commits: {e}");
            return None;
        }
    };
    let before = saver.writer_stats().commits;
    let dyn_saver: crate::Saver = saver.clone();
    crate::workload::concurrent_put_rate(&dyn_saver, tag, per_task).await;
    let commits = saver.writer_stats().commits - before;
    Some(commits as f64 / (8 * per_task) as f64)
}
