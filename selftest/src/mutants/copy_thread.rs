//! Mutants of CONTRACT §3 copy_thread: what is copied, the configs in the copy, the
//! source, copying twice and from a missing source.

use super::prelude::*;

/// A copy made by replaying the source's tuples, chosen and changed by `f`, under the
/// target's thread id; other calls go to the inner saver.
async fn copy_changed(
    saver: &Inner<'_>,
    call: Invocation,
    f: impl FnOnce(Vec<CheckpointTuple>) -> Vec<CheckpointTuple> + Send,
) -> Result<Reply, CheckpointError> {
    let Invocation::CopyThread { source, target } = &call else { return saver.forward(call).await };
    let mut tuples = f(saver.snapshot(source).await?);
    for t in &mut tuples {
        t.config.thread_id.clone_from(target);
        if let Some(p) = &mut t.parent_config {
            p.thread_id.clone_from(target);
        }
    }
    saver.replay(tuples).await?;
    Ok(Reply::Done)
}

/// Copy target -> source, for the mutants whose reads of a copy name the source.
#[derive(Default)]
pub struct CopiedFrom(Mutex<HashMap<String, String>>);

impl CopiedFrom {
    /// Copies and remembers the source of a non-empty copy.
    async fn copy(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::CopyThread { source, target } = &call else { return saver.forward(call).await };
        saver.saver().copy_thread(source, target).await?;
        if !saver.snapshot(source).await?.is_empty() {
            lock(&self.0).insert(target.clone(), source.clone());
        }
        Ok(Reply::Done)
    }

    fn source_of(&self, thread: &str) -> Option<String> {
        lock(&self.0).get(thread).cloned()
    }
}

/// Copied tuples name the source thread in `config` and `parent_config`.
#[derive(Default)]
pub struct CopyKeepsSourceThreadId(CopiedFrom);

#[async_trait]
impl Bug for CopyKeepsSourceThreadId {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        self.0.copy(saver, call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(source) = self.0.source_of(&t.config.thread_id) {
            if let Some(p) = &mut t.parent_config {
                p.thread_id.clone_from(&source);
            }
            t.config.thread_id = source;
        }
    }
}

/// Copied tuples name the source thread in `parent_config`.
#[derive(Default)]
pub struct CopyParentNamesSource(CopiedFrom);

#[async_trait]
impl Bug for CopyParentNamesSource {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        self.0.copy(saver, call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let (Some(source), Some(p)) = (self.0.source_of(&t.config.thread_id), &mut t.parent_config) {
            p.thread_id = source;
        }
    }
}

/// Only the latest checkpoint of each namespace is copied.
#[derive(Default)]
pub struct CopyLatestOnly;

#[async_trait]
impl Bug for CopyLatestOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        copy_changed(saver, call, latest_per_namespace).await
    }
}

/// A second copy duplicates the writes.
#[derive(Default)]
pub struct CopyTwiceDuplicatesWrites;

#[async_trait]
impl Bug for CopyTwiceDuplicatesWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::CopyThread { source, target } = &call else { return saver.forward(call).await };
        let before: BTreeSet<(String, Option<String>)> = saver
            .snapshot(target)
            .await?
            .into_iter()
            .map(|t| (t.config.checkpoint_ns, t.config.checkpoint_id))
            .collect();
        saver.saver().copy_thread(source, target).await?;
        for t in saver.snapshot(source).await? {
            if before.contains(&(t.config.checkpoint_ns.clone(), t.config.checkpoint_id.clone())) {
                // The regular writes again, twice: the first copy of each is ignored (its
                // key exists), the second lands at new indexes.
                let cfg = CheckpointConfig { thread_id: target.clone(), ..t.config.clone() };
                let regular = t.pending_writes.iter().filter(|w| special_write_index(&w.channel).is_none());
                let doubled: Vec<PendingWrite> = regular.clone().chain(regular).cloned().collect();
                saver.replay_writes(&cfg, &doubled).await?;
            }
        }
        Ok(Reply::Done)
    }
}

/// Only the root namespace is copied.
#[derive(Default)]
pub struct CopyRootOnly;

#[async_trait]
impl Bug for CopyRootOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        copy_changed(saver, call, |ts| ts.into_iter().filter(|t| t.config.checkpoint_ns.is_empty()).collect()).await
    }
}

/// The source is deleted after the copy (a move).
#[derive(Default)]
pub struct CopyMovesSource;

#[async_trait]
impl Bug for CopyMovesSource {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::CopyThread { source, target } = &call else { return saver.forward(call).await };
        saver.saver().copy_thread(source, target).await?;
        saver.saver().delete_thread(source).await?;
        Ok(Reply::Done)
    }
}

/// Writes are not copied.
#[derive(Default)]
pub struct CopyDropsWrites;

#[async_trait]
impl Bug for CopyDropsWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        copy_changed(saver, call, |mut ts| {
            ts.iter_mut().for_each(|t| t.pending_writes.clear());
            ts
        })
        .await
    }
}

/// The target is cleared before copying, even from a missing source.
#[derive(Default)]
pub struct CopyClearsTarget;

#[async_trait]
impl Bug for CopyClearsTarget {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::CopyThread { target, .. } = &call {
            saver.saver().delete_thread(target).await?;
        }
        saver.forward(call).await
    }
}

/// Copied writes lose their `task_path`.
#[derive(Default)]
pub struct CopyDropsTaskPath;

#[async_trait]
impl Bug for CopyDropsTaskPath {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        copy_changed(saver, call, |mut ts| {
            ts.iter_mut().flat_map(|t| &mut t.pending_writes).for_each(|w| w.task_path.clear());
            ts
        })
        .await
    }
}

/// Channel values are not copied.
#[derive(Default)]
pub struct CopyDropsValues;

#[async_trait]
impl Bug for CopyDropsValues {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        copy_changed(saver, call, |mut ts| {
            ts.iter_mut().for_each(|t| Arc::make_mut(&mut t.checkpoint).channel_values.clear());
            ts
        })
        .await
    }
}

/// Copying a missing source fails.
#[derive(Default)]
pub struct CopyMissingSourceFails;

#[async_trait]
impl Bug for CopyMissingSourceFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::CopyThread { source, .. } = &call {
            if saver.snapshot(source).await?.is_empty() {
                return Err(CheckpointError::storage_msg(format!("copy_thread: no thread {source}")));
            }
        }
        saver.forward(call).await
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        CopyKeepsSourceThreadId,
        &[CT],
        [R("copy_thread.target_configs"), S("S16"), G("7.3-copy-configs")],
        "copied tuples name the source thread in config and parent_config"
    ),
    mutant!(
        CopyParentNamesSource,
        &[CT],
        [R("copy_thread.target_configs"), S("S16"), G("7.3-copy-configs")],
        "copied tuples name the source thread in parent_config"
    ),
    mutant!(
        CopyLatestOnly,
        &[CT],
        [R("copy_thread.copies"), S("S16")],
        "only the latest checkpoint of each namespace is copied"
    ),
    mutant!(
        CopyTwiceDuplicatesWrites,
        &[CT],
        [R("copy_thread.twice"), S("S16"), R("copy_thread.onto_existing")],
        "a second copy duplicates the writes"
    ),
    mutant!(CopyRootOnly, &[CT], [R("copy_thread.copies"), S("S16")], "only the root namespace is copied"),
    mutant!(
        CopyMovesSource,
        &[CT],
        [R("copy_thread.source_unchanged"), S("S16")],
        "the source is deleted after the copy (a move)"
    ),
    mutant!(CopyDropsWrites, &[CT], [R("copy_thread.copies"), S("S16"), G("7.3-copy-writes")], "writes are not copied"),
    mutant!(
        CopyClearsTarget,
        &[CT],
        [R("copy_thread.missing_source"), G("7.3-copy-target")],
        "the target is cleared before copying, even from a missing source"
    ),
    mutant!(
        CopyDropsTaskPath,
        &[CT],
        [R("copy_thread.copies"), G("7.3-copy-writes")],
        "copied writes lose their task_path"
    ),
    mutant!(CopyDropsValues, &[CT], [R("copy_thread.copies")], "channel values are not copied"),
    mutant!(
        CopyMissingSourceFails,
        &[CT],
        [R("extended.noop_inputs"), R("copy_thread.missing_source")],
        "copying a missing source fails"
    ),
];
