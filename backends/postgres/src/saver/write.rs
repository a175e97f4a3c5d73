//! The writing side of [`PostgresSaver`]: one attempt of `put` (one transaction in one
//! round trip, BEGIN to COMMIT pipelined), `put_writes` (one statement), and the
//! maintenance operations (`delete_thread`, `delete_for_runs`, `copy_thread`, `prune`),
//! each one transaction.

use checkpoint_contract::{Checkpoint, CheckpointConfig};
use tokio_postgres::types::ToSql;

use super::{OpResult, PostgresSaver};
use crate::sql;

/// The channel values a `put` carries, as parallel arrays for `unnest`.
#[derive(Default)]
pub(super) struct Carried<'a> {
    pub(super) channels: Vec<&'a str>,
    pub(super) versions: Vec<String>,
    pub(super) type_tags: Vec<&'a str>,
    pub(super) data: Vec<&'a [u8]>,
}

/// The channels of a `put`'s `channel_versions` it neither carries nor has in
/// `new_versions`, as parallel arrays for `unnest`: each is resolved from stored values.
/// (A channel in `new_versions` without a value is empty: it has no value reference.)
#[derive(Default)]
pub(super) struct Uncarried<'a> {
    pub(super) channels: Vec<&'a str>,
    pub(super) versions: Vec<String>,
}

/// One `put_writes` row.
pub(super) struct WriteRow<'a> {
    pub(super) idx: i64,
    pub(super) channel: &'a str,
    pub(super) type_tag: &'a str,
    pub(super) data: &'a [u8],
}

impl PostgresSaver {
    pub(super) async fn put_once(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        shell: &str,
        metadata: &str,
        carried: &Carried<'_>,
        uncarried: &Uncarried<'_>,
    ) -> OpResult<()> {
        let client = self.client().await?;
        let (thread, ns, id) = (&config.thread_id, &config.checkpoint_ns, &checkpoint.id);
        let parent = config.checkpoint_id.as_deref();
        let (lock, mark, put) = tokio::try_join!(
            client.prepare_cached(sql::LOCK_FOR_PUT),
            client.prepare_cached(sql::MARK_OWN_VALUES),
            client.prepare_cached(sql::PUT_CHECKPOINT),
        )?;
        let key: [&(dyn ToSql + Sync); 3] = [thread, ns, id];
        let row: [&(dyn ToSql + Sync); 12] = [
            thread,
            ns,
            id,
            &parent,
            &shell,
            &metadata,
            &carried.channels,
            &carried.versions,
            &carried.type_tags,
            &carried.data,
            &uncarried.channels,
            &uncarried.versions,
        ];
        // The whole transaction in one round trip: every request is sent at the first poll
        // of `join!` (tokio-postgres sends a request when its future is first polled, and
        // runs them in that order), so once anything is sent, all of it is, COMMIT
        // included: a put dropped half-way leaves no transaction open on the pooled
        // connection. A failed statement makes the server refuse the rest, and COMMIT then
        // rolls back (without an error): the first error is the put's. (A request that
        // cannot even be encoded is not sent while the others are; the parameters' Rust
        // types are those of the prepared statements, so encoding does not fail.)
        let (begin, locked, marked, stored, commit) = tokio::join!(
            client.batch_execute("BEGIN"),
            client.execute(&lock, &key[..2]),
            client.execute(&mark, &key),
            client.execute(&put, &row),
            client.batch_execute("COMMIT"),
        );
        begin?;
        locked?;
        marked?;
        stored?;
        commit?;
        Ok(())
    }

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
        let tx = client.transaction().await?;
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&threads]).await?;
        for statement in sql::DELETE_THREADS {
            tx.execute(&tx.prepare_cached(statement).await?, &[&threads]).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn delete_for_runs_once(&self, run_ids: &[&str]) -> OpResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
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
        let tx = client.transaction().await?;
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
        let tx = client.transaction().await?;
        tx.execute(&tx.prepare_cached(sql::LOCK_THREADS_EXCLUSIVE).await?, &[&threads]).await?;
        for statement in sql::PRUNE_KEEP_LATEST {
            tx.execute(&tx.prepare_cached(statement).await?, &[&threads]).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
