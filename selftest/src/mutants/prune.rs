//! Mutants of CONTRACT §3 prune: what `keep_latest` keeps, which threads it touches,
//! `delete`, empty inputs.

use super::prelude::*;

/// A `keep_latest` prune made by deleting each named thread and replaying the tuples `f`
/// keeps of it; other calls (and the `delete` strategy) go to the inner saver.
async fn prune_keeping(
    saver: &Inner<'_>,
    call: Invocation,
    f: impl Fn(Vec<CheckpointTuple>) -> Vec<CheckpointTuple> + Send + Sync,
) -> Result<Reply, CheckpointError> {
    let Invocation::Prune { thread_ids: threads, strategy: PruneStrategy::KeepLatest } = &call else {
        return saver.forward(call).await;
    };
    for thread in threads {
        let kept = f(saver.take_thread(thread).await?);
        saver.replay(kept).await?;
    }
    Ok(Reply::Done)
}

/// `keep_latest` keeps the oldest checkpoint.
#[derive(Default)]
pub struct PruneKeepsOldest;

#[async_trait]
impl Bug for PruneKeepsOldest {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |mut ts| {
            ts.reverse();
            latest_per_namespace(ts)
        })
        .await
    }
}

/// `keep_latest` drops the kept checkpoint's writes.
#[derive(Default)]
pub struct PruneDropsWrites;

#[async_trait]
impl Bug for PruneDropsWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |ts| {
            let mut kept = latest_per_namespace(ts);
            kept.iter_mut().for_each(|t| t.pending_writes.clear());
            kept
        })
        .await
    }
}

/// `keep_latest` keeps only the values the kept checkpoint's own put carried (S15): a value
/// kept at an unchanged version without being carried (CONTRACT §2 put, kept channels, a
/// SHOULD rule) is lost; under LangGraph's runtime, which carries every value, nothing is.
#[derive(Default)]
pub struct PruneDropsInheritedValues(ChannelSets);

#[async_trait]
impl Bug for PruneDropsInheritedValues {
    fn put_input(&self, put: &mut Put) {
        self.0.record(put, put.checkpoint.channel_values.keys());
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |ts| {
            let mut kept = latest_per_namespace(ts);
            kept.iter_mut().for_each(|t| self.0.retain(t));
            kept
        })
        .await
    }
}

/// A saver that stores each (channel, version) of a thread and namespace once, with the put
/// that first carried it, and whose `keep_latest` deletes what the pruned checkpoints
/// stored: the kept checkpoint loses every value an older checkpoint stored first, carried
/// again or not (S15; CONTRACT §2 put lets a saver skip a value already stored at that
/// version, §3 prune keeps every value the kept checkpoint reads).
#[derive(Default)]
pub struct PruneDropsValuesStoredOnce {
    /// The (thread, namespace, channel, version) of every value stored so far.
    stored: Mutex<BTreeSet<(String, String, String, String)>>,
    /// Per checkpoint, the channels whose value its put stored first.
    first: ChannelSets,
}

#[async_trait]
impl Bug for PruneDropsValuesStoredOnce {
    fn put_input(&self, put: &mut Put) {
        let (thread, ns) = (&put.config.thread_id, &put.config.checkpoint_ns);
        let mut stored = lock(&self.stored);
        let versions = &put.checkpoint.channel_versions;
        let first: Vec<&String> = put
            .checkpoint
            .channel_values
            .keys()
            .filter(|ch| {
                let version = versions.get(*ch).map(|v| format!("{v:?}")).unwrap_or_default();
                stored.insert((thread.clone(), ns.clone(), (*ch).clone(), version))
            })
            .collect();
        self.first.record(put, first.into_iter());
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |ts| {
            let mut kept = latest_per_namespace(ts);
            kept.iter_mut().for_each(|t| self.first.retain(t));
            kept
        })
        .await
    }
}

/// `keep_latest` also prunes threads that were not named.
#[derive(Default)]
pub struct PruneOtherThreads;

#[async_trait]
impl Bug for PruneOtherThreads {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::Prune { thread_ids: threads, strategy: PruneStrategy::KeepLatest } => {
                let all: Vec<String> = saver.threads().into_iter().chain(threads).collect();
                saver.forward(Invocation::Prune { thread_ids: all, strategy: PruneStrategy::KeepLatest }).await
            }
            call => saver.forward(call).await,
        }
    }
}

/// `keep_latest` only prunes the root namespace.
#[derive(Default)]
pub struct PruneRootOnly;

#[async_trait]
impl Bug for PruneRootOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |ts| {
            let (root, children): (Vec<_>, Vec<_>) = ts.into_iter().partition(|t| t.config.checkpoint_ns.is_empty());
            latest_per_namespace(root).into_iter().chain(children).collect()
        })
        .await
    }
}

/// `keep_latest` keeps one checkpoint per thread, not per namespace.
#[derive(Default)]
pub struct PruneLatestPerThread;

#[async_trait]
impl Bug for PruneLatestPerThread {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |ts| ts.into_iter().take(1).collect()).await
    }
}

/// `keep_latest` does nothing.
#[derive(Default)]
pub struct PruneNoop;

#[async_trait]
impl Bug for PruneNoop {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::Prune { strategy: PruneStrategy::KeepLatest, .. } => Ok(Reply::Done),
            call => saver.forward(call).await,
        }
    }
}

/// `delete` keeps the latest checkpoint.
#[derive(Default)]
pub struct PruneDeleteKeepsLatest;

impl Bug for PruneDeleteKeepsLatest {
    fn prune_input(&self, _thread_ids: &mut Vec<String>, strategy: &mut PruneStrategy) {
        if *strategy == PruneStrategy::Delete {
            *strategy = PruneStrategy::KeepLatest;
        }
    }
}

/// `prune([])` fails (S14).
#[derive(Default)]
pub struct PruneEmptyFails;

#[async_trait]
impl Bug for PruneEmptyFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::Prune { thread_ids: threads, .. } if threads.is_empty() => {
                Err(CheckpointError::InvalidInput("prune: no thread ids given".into()))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// `keep_latest` keeps the checkpoint with the greatest `ts` of each namespace (an
/// `ORDER BY ts DESC` where the id was meant), ties by id: the same as by id while `ts`
/// follows the ids.
#[derive(Default)]
pub struct PruneKeepsLatestTs;

#[async_trait]
impl Bug for PruneKeepsLatestTs {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        prune_keeping(saver, call, |mut ts| {
            ts.sort_by(|a, b| (&b.checkpoint.ts, &b.checkpoint.id).cmp(&(&a.checkpoint.ts, &a.checkpoint.id)));
            latest_per_namespace(ts)
        })
        .await
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        PruneKeepsOldest,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest keeps the oldest checkpoint of each namespace"
    ),
    mutant!(
        PruneDropsWrites,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest drops the kept checkpoint's writes"
    ),
    mutant!(should
        PruneDropsInheritedValues,
        &[PR],
        [R("prune.keep_latest"), S("S15"), G("7.3-prune"), R("put.kept_values")],
        "keep_latest keeps only the values the kept checkpoint's put carried: kept channels lose theirs"
    ),
    mutant!(
        PruneDropsValuesStoredOnce,
        &[PR],
        [R("prune.keep_latest"), S("S15"), G("7.3-prune")],
        "keep_latest deletes the values the pruned checkpoints stored first, which the kept one carried again"
    ),
    mutant!(
        PruneOtherThreads,
        &[PR],
        [R("prune.others"), S("S15")],
        "keep_latest also prunes threads that were not named"
    ),
    mutant!(PruneRootOnly, &[PR], [R("prune.keep_latest"), S("S15")], "keep_latest prunes the root namespace only"),
    mutant!(
        PruneLatestPerThread,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest keeps one checkpoint per thread instead of per namespace"
    ),
    mutant!(PruneNoop, &[PR], [R("prune.keep_latest")], "keep_latest does nothing"),
    mutant!(PruneDeleteKeepsLatest, &[PR], [R("prune.delete")], "the delete strategy keeps the latest checkpoint"),
    mutant!(PruneEmptyFails, &[PR], [R("extended.noop_inputs"), S("S14")], "prune([]) fails"),
    mutant!(
        PruneKeepsLatestTs,
        &[PR],
        [R("prune.keep_latest")],
        "keep_latest keeps the checkpoint with the greatest ts of each namespace, not the greatest id"
    ),
];
