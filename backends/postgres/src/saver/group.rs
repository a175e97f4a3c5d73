//! Group commit for `put`: the puts that arrive while a transaction of puts is running wait
//! for it, then all go into the next transaction, with one commit (one WAL flush) for all
//! of them. Under 8 tasks putting at once this takes the commits per put from 1 to about
//! 1/7 (`cargo xtask bench`, `put_8_tasks_commits_per_put`), and the throughput with them,
//! where every commit waits for the disk (`synchronous_commit = on`).
//!
//! A put is acknowledged only after the transaction holding it committed (CONTRACT §4
//! durability). When a transaction of several puts fails, nothing of it was stored, and each
//! of its puts is then run alone, so every put gets its own outcome and error (CONTRACT §2
//! put), exactly as without grouping. Outside a Tokio runtime a put runs alone.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use checkpoint_contract::CheckpointError;
use tokio::sync::{oneshot, Notify};
use tokio_postgres::types::ToSql;

use super::{retrying, OpResult, PostgresSaver};
use crate::sql;

/// At most this many puts in one transaction.
const MAX_GROUP: usize = 64;

/// How long the next transaction waits for the callers of the last one to come back with
/// their next puts, while fewer are waiting than the last one held (as PostgreSQL's
/// `commit_delay`): without it, the first caller back goes alone, the others wait for it,
/// and groups alternate between one put and the rest. A put that arrives ends the wait
/// early; one caller putting in a row never waits (its next put is the one awaited).
const GATHER: Duration = Duration::from_millis(1);

/// One `put`, owned, as its statements bind it (see `sql::PUT_CARRIED` and
/// `sql::PUT_CHECKPOINT`).
pub(super) struct PutRequest {
    pub(super) thread_id: String,
    pub(super) checkpoint_ns: String,
    pub(super) checkpoint_id: String,
    pub(super) parent_id: Option<String>,
    /// The checkpoint's shell as JSON text.
    pub(super) shell: String,
    /// The metadata as JSON text.
    pub(super) metadata: String,
    /// The carried values, ordered by channel: channels, version JSON texts, type tags, data
    /// and digests (pairwise; see [`value_digest`]).
    pub(super) channels: Vec<String>,
    pub(super) versions: Vec<String>,
    pub(super) type_tags: Vec<String>,
    pub(super) data: Vec<Vec<u8>>,
    pub(super) digests: Vec<Vec<u8>>,
    /// The channels to resolve from stored values, and their version JSON texts.
    pub(super) resolve_channels: Vec<String>,
    pub(super) resolve_versions: Vec<String>,
    /// What the put is, for errors ("putting checkpoint ...").
    pub(super) what: String,
}

/// The digest of a stored value: sha256 of its type tag, a NUL byte and its data (type tags
/// cannot hold a NUL in PostgreSQL), the key that tells apart the values siblings put at the
/// same (channel, version). The same as migration 1's, so older rows keep theirs.
pub(super) fn value_digest(type_tag: &str, data: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::new().chain_update(type_tag.as_bytes()).chain_update([0]).chain_update(data).finalize().to_vec()
}

impl PutRequest {
    /// True when the put resolves no channel: it carries every value it reads, and is put by
    /// `PUT_CARRIED` (one statement), else by `MARK_OWN_VALUES` and `PUT_CHECKPOINT`.
    fn carries_all(&self) -> bool {
        self.resolve_channels.is_empty()
    }

    /// The parameters of `PUT_CARRIED` when [`Self::carries_all`], else of `PUT_CHECKPOINT`.
    fn put_params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &self.thread_id,
            &self.checkpoint_ns,
            &self.checkpoint_id,
            &self.parent_id,
            &self.shell,
            &self.metadata,
            &self.channels,
            &self.versions,
        ];
        if self.carries_all() {
            params.extend::<[&(dyn ToSql + Sync); 3]>([&self.digests, &self.type_tags, &self.data]);
        } else {
            params.extend::<[&(dyn ToSql + Sync); 4]>([
                &self.type_tags,
                &self.data,
                &self.resolve_channels,
                &self.resolve_versions,
            ]);
        }
        params
    }
}

type Waiting = (PutRequest, oneshot::Sender<Result<(), CheckpointError>>);

/// The puts waiting for the next transaction of a saver (shared by its clones).
#[derive(Default)]
pub(super) struct PutQueue {
    state: Mutex<QueueState>,
    /// A put was queued.
    arrived: Notify,
}

#[derive(Default)]
struct QueueState {
    waiting: Vec<Waiting>,
    /// A task is running transactions of waiting puts until none is left.
    draining: bool,
}

impl std::fmt::Debug for PutQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PutQueue").finish_non_exhaustive()
    }
}

type Sent<'a> = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send + 'a>>;

/// Polls every future in order until all are done: each request of tokio-postgres is sent
/// at its future's first poll, so they reach the server in this order, in one round trip.
async fn all_in_order(mut futures: Vec<Sent<'_>>) -> Vec<Result<(), tokio_postgres::Error>> {
    let mut done: Vec<Option<Result<(), tokio_postgres::Error>>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, d) in futures.iter_mut().zip(done.iter_mut()) {
            if d.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(r) => *d = Some(r),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    done.into_iter().flatten().collect()
}

impl PostgresSaver {
    /// Stores `request` in the next group commit (alone outside a Tokio runtime) and waits
    /// until it is committed.
    pub(super) async fn put_grouped(&self, request: PutRequest) -> Result<(), CheckpointError> {
        if tokio::runtime::Handle::try_current().is_err() {
            let what = request.what.clone();
            return retrying(&what, || self.put_group_once(std::slice::from_ref(&request))).await;
        }
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut state = self.puts.state.lock().unwrap_or_else(|e| e.into_inner());
            state.waiting.push((request, tx));
            !std::mem::replace(&mut state.draining, true)
        };
        self.puts.arrived.notify_one();
        if start {
            // A task of its own, so a caller that stops waiting does not strand the others.
            let saver = self.clone();
            tokio::spawn(async move { saver.drain_puts().await });
        }
        rx.await.unwrap_or_else(|_| {
            Err(CheckpointError::storage_msg("the transaction of this put was abandoned (the runtime shut down)"))
        })
    }

    /// Runs transactions of the waiting puts until none is left.
    async fn drain_puts(self) {
        let mut last = 0;
        loop {
            let deadline = tokio::time::Instant::now() + GATHER;
            while self.waiting() < last && tokio::time::timeout_at(deadline, self.puts.arrived.notified()).await.is_ok()
            {
            }
            let group: Vec<Waiting> = {
                let mut state = self.puts.state.lock().unwrap_or_else(|e| e.into_inner());
                if state.waiting.is_empty() {
                    state.draining = false;
                    return;
                }
                let n = state.waiting.len().min(MAX_GROUP);
                state.waiting.drain(..n).collect()
            };
            last = group.len();
            let (requests, senders): (Vec<PutRequest>, Vec<_>) = group.into_iter().unzip();
            let outcomes = self.commit_group(&requests).await;
            for (sender, outcome) in senders.into_iter().zip(outcomes) {
                // A caller that stopped waiting does not want the outcome.
                let _ = sender.send(outcome);
            }
        }
    }

    /// How many puts are waiting.
    fn waiting(&self) -> usize {
        self.puts.state.lock().unwrap_or_else(|e| e.into_inner()).waiting.len()
    }

    /// Every put of `requests` in one transaction; when that fails, each alone.
    async fn commit_group(&self, requests: &[PutRequest]) -> Vec<Result<(), CheckpointError>> {
        if requests.len() > 1 && self.put_group_once(requests).await.is_ok() {
            return requests.iter().map(|_| Ok(())).collect();
        }
        let mut outcomes = Vec::with_capacity(requests.len());
        for r in requests {
            outcomes.push(retrying(&r.what, || self.put_group_once(std::slice::from_ref(r))).await);
        }
        outcomes
    }

    /// One attempt at storing every put of `requests`, in this order, in one transaction in
    /// one round trip, BEGIN to COMMIT pipelined. The locks of every (thread, namespace)
    /// come first, in sorted order, so two groups cannot deadlock on them. Once anything is
    /// sent, all of it is, COMMIT included: a group dropped half-way leaves no transaction
    /// open on the pooled connection. A failed statement makes the server refuse the rest,
    /// and COMMIT then rolls back (without an error): the first error is the group's. A
    /// group of one put that resolves no channel is one statement, its own transaction, on
    /// connections this crate opened (READ COMMITTED by default); the transaction is READ
    /// COMMITTED either way (see `write::read_committed`).
    pub(super) async fn put_group_once(&self, requests: &[PutRequest]) -> OpResult<()> {
        let client = self.client().await?;
        let (lock, mark, put, carried) = tokio::try_join!(
            client.prepare_cached(sql::LOCK_FOR_PUT),
            client.prepare_cached(sql::MARK_OWN_VALUES),
            client.prepare_cached(sql::PUT_CHECKPOINT),
            client.prepare_cached(sql::PUT_CARRIED),
        )?;
        if let [one] = requests {
            if one.carries_all() && self.read_committed {
                // One statement, its own transaction: committed when it returns.
                client.execute(&carried, &one.put_params()).await?;
                return Ok(());
            }
        }
        let mut sorted: Vec<(&String, &String)> = requests.iter().map(|r| (&r.thread_id, &r.checkpoint_ns)).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let keys: Vec<[&(dyn ToSql + Sync); 2]> = sorted.iter().map(|(t, n)| [*t as _, *n as _]).collect();
        let ids: Vec<[&(dyn ToSql + Sync); 3]> =
            requests.iter().map(|r| [&r.thread_id as _, &r.checkpoint_ns as _, &r.checkpoint_id as _]).collect();
        let rows: Vec<Vec<&(dyn ToSql + Sync)>> = requests.iter().map(PutRequest::put_params).collect();
        let mut sent: Vec<Sent<'_>> = vec![Box::pin(client.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED"))];
        for k in &keys {
            let (client, lock) = (&client, &lock);
            sent.push(Box::pin(async move { client.execute(lock, &k[..]).await.map(drop) }));
        }
        for ((request, id), row) in requests.iter().zip(&ids).zip(&rows) {
            let (client, mark, put, carried) = (&client, &mark, &put, &carried);
            if request.carries_all() {
                sent.push(Box::pin(async move { client.execute(carried, &row[..]).await.map(drop) }));
            } else {
                sent.push(Box::pin(async move { client.execute(mark, &id[..]).await.map(drop) }));
                sent.push(Box::pin(async move { client.execute(put, &row[..]).await.map(drop) }));
            }
        }
        sent.push(Box::pin(client.batch_execute("COMMIT")));
        for outcome in all_in_order(sent).await {
            outcome?;
        }
        Ok(())
    }
}

/// Shared by every clone of a saver.
pub(super) fn new_queue() -> Arc<PutQueue> {
    Arc::new(PutQueue::default())
}
