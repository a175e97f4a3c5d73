//! The writing side of [`PostgresSaver`] besides `put` (in `group`): one attempt of
//! `put_writes` (one statement), and the
//! maintenance operations (`delete_thread`, `delete_for_runs`, `copy_thread`, `prune`),
//! each one transaction.

use checkpoint_contract::CheckpointConfig;
use deadpool_postgres::{Object, Transaction};
use tokio_postgres::types::ToSql;
use tokio_postgres::IsolationLevel;

use super::{OpResult, PostgresSaver};
use crate::sql;

/// A transaction at READ COMMITTED, whatever the session's default: each statement after
/// the advisory locks must see what was committed before they were granted, which a
/// REPEATABLE READ snapshot (taken at the transaction's first statement, before the locks)
/// does not.
async fn read_committed(client: &mut Object) -> Result<Transaction<'_>, tokio_postgres::Error> {
    client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start().await
}

/// One `put_writes` row.
pub(super) struct WriteRow<'a> {
    pub(super) idx: i64,
    pub(super) channel: &'a str,
    pub(super) type_tag: &'a str,
    pub(super) data: &'a [u8],
}

impl PostgresSaver {
    pub(super) async fn put_writes_once(
        &self,
        config: &CheckpointConfig,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        rows: &[WriteRow<'_>],
    ) -> OpResult<()> {
        let client = self.client().await?;
        let idx: Vec<i64> = rows.iter().map(|r| r.idx).collect();
        let channels: Vec<&str> = rows.iter().map(|r| r.channel).collect();
        let type_tags: Vec<&str> = rows.iter().map(|r| r.type_tag).collect();
        let data: Vec<&[u8]> = rows.iter().map(|r| r.data).collect();
        let params: [&(dyn ToSql + Sync); 9] = [
            &config.thread_id,
            &config.checkpoint_ns,
            &checkpoint_id,
            &task_id,
            &task_path,
            &idx,
            &channels,
            &type_tags,
            &data,
        ];
        // One statement: atomic without an explicit transaction.
        client.execute(&client.prepare_cached(sql::INSERT_WRITES).await?, &params).await?;
        Ok(())
    }

    pub(super) async fn delete_threads_once(&self, threads: &[&str]) -> OpResult<()> {
        let mut client = self.client().await?;
        let tx = read_committed(&mut client).await?;
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&threads]).await?;
        for statement in sql::DELETE_THREADS {
            tx.execute(&tx.prepare_cached(statement).await?, &[&threads]).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn delete_for_runs_once(&self, run_ids: &[&str]) -> OpResult<()> {
        let mut client = self.client().await?;
        let tx = read_committed(&mut client).await?;
        let rows = tx.query(&tx.prepare_cached(sql::SELECT_RUN_THREADS).await?, &[&run_ids]).await?;
        let threads: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        if threads.is_empty() {
            return Ok(());
        }
        // Only the threads locked here: a checkpoint of another thread committed since the
        // query above counts as put after this call.
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&threads]).await?;
        tx.execute(&tx.prepare_cached(sql::MARK_FOR_RUNS).await?, &[&run_ids, &threads]).await?;
        tx.execute(&tx.prepare_cached(sql::DELETE_FOR_RUNS).await?, &[&run_ids, &threads]).await?;
        tx.execute(&tx.prepare_cached(sql::DELETE_UNREAD_VALUES_OF_THREADS).await?, &[&threads]).await?;
        tx.execute(&tx.prepare_cached(sql::COMPACT_MARKS_OF_THREADS).await?, &[&threads]).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn copy_thread_once(&self, source: &str, target: &str) -> OpResult<()> {
        let mut client = self.client().await?;
        let tx = read_committed(&mut client).await?;
        let both = [source, target];
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&&both[..]]).await?;
        for statement in sql::COPY_THREAD {
            tx.execute(&tx.prepare_cached(statement).await?, &[&source, &target]).await?;
        }
        let targets = [target];
        tx.execute(&tx.prepare_cached(sql::DELETE_UNREAD_VALUES_OF_THREADS).await?, &[&&targets[..]]).await?;
        tx.execute(&tx.prepare_cached(sql::COMPACT_MARKS_OF_THREADS).await?, &[&&targets[..]]).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn prune_keep_latest_once(&self, threads: &[&str]) -> OpResult<()> {
        let mut client = self.client().await?;
        let tx = read_committed(&mut client).await?;
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&threads]).await?;
        for statement in sql::PRUNE_KEEP_LATEST {
            tx.execute(&tx.prepare_cached(statement).await?, &[&threads]).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
