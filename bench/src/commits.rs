//! Counting the transactions a PostgreSQL saver commits (issue 38, group commit): the
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
