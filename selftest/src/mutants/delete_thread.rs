//! Mutants of CONTRACT §2 delete_thread: what is deleted, what is left behind, unknown
//! threads.

use super::id_support::like_str;
use super::prelude::*;

/// `delete_thread` does nothing (S17).
#[derive(Default)]
pub struct DeleteThreadNoop;

#[async_trait]
impl Bug for DeleteThreadNoop {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::DeleteThread { .. } => Ok(Reply::Done),
            _ => saver.forward(call).await,
        }
    }
}

/// `delete_thread` only deletes the root namespace.
#[derive(Default)]
pub struct DeleteThreadRootOnly;

#[async_trait]
impl Bug for DeleteThreadRootOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id: thread } = &call else { return saver.forward(call).await };
        let kept = saver.take_thread(thread).await?.into_iter().filter(|t| !t.config.checkpoint_ns.is_empty());
        saver.replay(kept.collect()).await?;
        Ok(Reply::Done)
    }
}

/// `delete_thread` leaves the writes behind; a re-put shows them (S13).
#[derive(Default)]
pub struct DeleteThreadLeavesWrites;

#[async_trait]
impl Bug for DeleteThreadLeavesWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id: thread } = &call else { return saver.forward(call).await };
        for t in saver.take_thread(thread).await? {
            saver.replay_writes(&t.config, &t.pending_writes).await?;
        }
        Ok(Reply::Done)
    }
}

/// `delete_thread` forgets the checkpoint ids it deleted everywhere: another thread's
/// checkpoint with one of those ids reads as none (a store keyed by checkpoint id alone).
#[derive(Default)]
pub struct DeleteThreadHidesSameIdsElsewhere(Mutex<BTreeSet<String>>);

#[async_trait]
impl Bug for DeleteThreadHidesSameIdsElsewhere {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::DeleteThread { thread_id: thread } => {
                let gone = saver.snapshot(&thread).await?;
                lock(&self.0).extend(gone.into_iter().map(|t| t.checkpoint.id.clone()));
                saver.forward(Invocation::DeleteThread { thread_id: thread }).await
            }
            Invocation::GetTuple { config } => {
                let got = saver.forward(Invocation::GetTuple { config }).await?.tuple()?;
                let hidden = lock(&self.0);
                Ok(Reply::Tuple(got.filter(|t| !hidden.contains(&t.checkpoint.id))))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// (thread, namespace, channel, version).
type BlobKey = (String, String, String, ChannelVersion);

/// `delete_thread` leaves the stored channel values behind; a re-put reads them (S13).
#[derive(Default)]
pub struct DeleteThreadLeavesValues(Mutex<HashMap<BlobKey, TypedValue>>);

#[async_trait]
impl Bug for DeleteThreadLeavesValues {
    fn put_input(&self, put: &mut Put) {
        let (cfg, cp, left) = (&put.config, &mut put.checkpoint, lock(&self.0));
        for (ch, version) in &cp.channel_versions {
            if cp.channel_values.contains_key(ch) || put.new_versions.contains_key(ch) {
                continue;
            }
            let key = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), ch.clone(), version.clone());
            if let Some(v) = left.get(&key) {
                cp.channel_values.insert(ch.clone(), v.clone());
            }
        }
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id: thread } = &call else { return saver.forward(call).await };
        for t in saver.take_thread(thread).await? {
            for (ch, v) in &t.checkpoint.channel_values {
                if let Some(version) = t.checkpoint.channel_versions.get(ch) {
                    let key = (thread.clone(), t.config.checkpoint_ns.clone(), ch.clone(), version.clone());
                    lock(&self.0).insert(key, v.clone());
                }
            }
        }
        Ok(Reply::Done)
    }
}

/// `delete_thread` deletes every thread.
#[derive(Default)]
pub struct DeleteThreadDeletesAll;

#[async_trait]
impl Bug for DeleteThreadDeletesAll {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id: thread } = &call else { return saver.forward(call).await };
        for t in saver.threads().iter().chain([thread]) {
            saver.saver().delete_thread(t).await?;
        }
        Ok(Reply::Done)
    }
}

/// `delete_thread` of an unknown thread fails (S14).
#[derive(Default)]
pub struct DeleteUnknownThreadFails;

#[async_trait]
impl Bug for DeleteUnknownThreadFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::DeleteThread { thread_id: thread } = &call {
            if saver.saver().list(thread, &ListOptions::all().limit(1)).await?.is_empty() {
                return Err(CheckpointError::storage_msg(format!("delete_thread: no thread {thread}")));
            }
        }
        saver.forward(call).await
    }
}

/// `delete_thread` before the saver's first `put` fails: its tables are made on the first
/// put, and delete does not make them (LangGraph's `AsyncSqliteSaver.adelete_thread`, B8).
#[derive(Default)]
pub struct DeleteBeforeFirstPutFails(std::sync::atomic::AtomicBool);

#[async_trait]
impl Bug for DeleteBeforeFirstPutFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        use std::sync::atomic::Ordering::SeqCst;
        match &call {
            Invocation::Put(_) => self.0.store(true, SeqCst),
            Invocation::DeleteThread { .. } if !self.0.load(SeqCst) => {
                return Err(CheckpointError::storage_msg("delete_thread: no such table: checkpoints"));
            }
            _ => {}
        }
        saver.forward(call).await
    }
}

/// `delete_thread` deletes every known thread equal to its argument case-insensitively.
#[derive(Default)]
pub struct DeleteThreadCaseInsensitive;

#[async_trait]
impl Bug for DeleteThreadCaseInsensitive {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id } = &call else { return saver.forward(call).await };
        let folded = thread_id.to_lowercase();
        for other in saver.threads().into_iter().filter(|t| t.to_lowercase() == folded && t != thread_id) {
            saver.saver().delete_thread(&other).await?;
        }
        saver.forward(call).await
    }
}

/// `delete_thread` deletes with `WHERE thread_id LIKE ?`: a thread id with `%` or `_`
/// also deletes every thread the pattern matches (`"a%"` deletes `"ab"`).
#[derive(Default)]
pub struct DeleteThreadLike;

#[async_trait]
impl Bug for DeleteThreadLike {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteThread { thread_id } = &call else { return saver.forward(call).await };
        for other in saver.threads().into_iter().filter(|t| t != thread_id && like_str(thread_id, t)) {
            saver.saver().delete_thread(&other).await?;
        }
        saver.forward(call).await
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        DeleteThreadNoop,
        &[DT],
        [R("delete_thread.everything"), S("S17")],
        "delete_thread does nothing"
    ),
    mutant!(
        DeleteThreadRootOnly,
        &[DT],
        [R("delete_thread.everything"), S("S13")],
        "delete_thread deletes the root namespace only"
    ),
    mutant!(
        DeleteThreadLeavesWrites,
        &[DT],
        [R("delete_thread.nothing_back"), S("S13"), G("7.3-delete-leaks")],
        "delete_thread leaves the writes behind; a re-put shows them"
    ),
    mutant!(
        DeleteThreadLeavesValues,
        &[DT],
        [R("delete_thread.nothing_back"), S("S13"), G("7.3-delete-leaks")],
        "delete_thread leaves the stored channel values behind; a re-put reads them"
    ),
    mutant!(
        DeleteThreadDeletesAll,
        &[DT],
        [R("delete_thread.others"), G("7.3-delete-leaks")],
        "delete_thread deletes every thread"
    ),
    mutant!(
        DeleteThreadHidesSameIdsElsewhere,
        &[DT],
        [R("delete_thread.others")],
        "delete_thread forgets its checkpoint ids everywhere: another thread's checkpoint with the same id reads as none"
    ),
    mutant!(
        DeleteUnknownThreadFails,
        &[DT],
        [R("delete_thread.unknown"), S("S14")],
        "delete_thread of an unknown thread fails"
    ),
    mutant!(
        DeleteBeforeFirstPutFails,
        &[DT],
        [R("delete_thread.unknown")],
        "delete_thread before the saver's first put fails (no tables yet)"
    ),
    mutant!(
        DeleteThreadCaseInsensitive,
        &[DT],
        [R("ids.opaque"), R("delete_thread.others")],
        "delete_thread also deletes the threads equal to it case-insensitively"
    ),
    mutant!(
        DeleteThreadLike,
        &[DT],
        [R("ids.opaque"), R("delete_thread.others")],
        "delete_thread deletes WHERE thread_id LIKE ?: \"a%\" also deletes the thread \"ab\""
    ),
];
