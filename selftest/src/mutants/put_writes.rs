//! Mutants of CONTRACT §2 put_writes: required ids, where writes land, their indexes and
//! keys, which write wins, and what is stored of each value.

use super::id_support::*;
use super::prelude::*;

/// `put_writes` without `checkpoint_id` returns `Ok` and stores nothing.
#[derive(Default)]
pub struct WritesWithoutCheckpointIdAccepted;

#[async_trait]
impl Bug for WritesWithoutCheckpointIdAccepted {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::PutWrites(w) if w.config.checkpoint_id.is_none() => Ok(Reply::Done),
            _ => saver.forward(call).await,
        }
    }
}

/// `put_writes` with an empty list fails with `InvalidInput` (S14).
#[derive(Default)]
pub struct EmptyWritesRejected;

#[async_trait]
impl Bug for EmptyWritesRejected {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::PutWrites(w) if w.writes.is_empty() => {
                Err(CheckpointError::InvalidInput("put_writes: no writes given".into()))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// `put_writes` stores writes in the root namespace whatever the config's.
#[derive(Default)]
pub struct WritesIgnoreNamespace;

impl Bug for WritesIgnoreNamespace {
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.config.checkpoint_ns.clear();
    }
}

/// Writes for a checkpoint that is not stored yet are dropped (S05).
#[derive(Default)]
pub struct WritesBeforeCheckpointDropped;

#[async_trait]
impl Bug for WritesBeforeCheckpointDropped {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &call {
            if w.config.checkpoint_id.is_some() && saver.saver().get_tuple(&w.config).await?.is_none() {
                return Ok(Reply::Done);
            }
        }
        saver.forward(call).await
    }
}

/// Writes go to the latest checkpoint of the namespace, not the one named.
#[derive(Default)]
pub struct WritesAttachToLatest;

#[async_trait]
impl Bug for WritesAttachToLatest {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &mut call {
            if w.config.checkpoint_id.is_some() {
                if let Some(latest) = saver.saver().get_tuple(&w.config.clone().without_id()).await? {
                    w.config.checkpoint_id = latest.config.checkpoint_id;
                }
            }
        }
        saver.forward(call).await
    }
}

/// A mutant that keeps its own copy of each checkpoint's writes under the wrong rule `R`
/// and reads that copy instead of the saver's writes.
#[derive(Default)]
pub struct Mirrored<R>(R, Mutex<HashMap<CpKey, Vec<KeptWrite>>>);

impl<R: WriteRule> Bug for Mirrored<R> {
    fn put_writes_input(&self, w: &mut PutWrites) {
        if let Some(id) = &w.config.checkpoint_id {
            let key = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id.clone());
            apply_writes(&self.0, lock(&self.1).entry(key).or_default(), &w.writes, &w.task_id, &w.task_path);
        }
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let (false, Some(kept)) = (t.pending_writes.is_empty(), lock(&self.1).get(&key_of(t))) {
            t.pending_writes = sorted_writes(kept.clone());
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.1).retain(|k, _| k.0 != *thread_id);
    }
}

/// A repeated regular write replaces the first (last wins).
#[derive(Default)]
pub struct RegularWriteLastWins;

impl WriteRule for RegularWriteLastWins {
    fn replaces(&self, _special: bool, _all_special_call: bool) -> Option<bool> {
        Some(true)
    }
}

/// A repeated special write is ignored (first wins).
#[derive(Default)]
pub struct SpecialWriteFirstWins;

impl WriteRule for SpecialWriteFirstWins {
    fn replaces(&self, _special: bool, _all_special_call: bool) -> Option<bool> {
        Some(false)
    }
}

/// Replace-or-ignore is decided per call: only all-special calls replace (S02).
#[derive(Default)]
pub struct WriteRuleDecidedPerCall;

impl WriteRule for WriteRuleDecidedPerCall {
    fn replaces(&self, _special: bool, all_special_call: bool) -> Option<bool> {
        Some(all_special_call)
    }
}

/// Special channels get their position as index, colliding with regular writes (S03).
#[derive(Default)]
pub struct SpecialIndexIsPosition;

impl WriteRule for SpecialIndexIsPosition {
    fn index(&self, _channel: &str, pos: usize, _regular_before: i64) -> i64 {
        pos as i64
    }
}

/// Special entries do not count towards the positions of regular writes.
#[derive(Default)]
pub struct PositionsSkipSpecials;

impl WriteRule for PositionsSkipSpecials {
    fn index(&self, channel: &str, _pos: usize, regular_before: i64) -> i64 {
        special_write_index(channel).unwrap_or(regular_before)
    }
}

/// The write key ignores the task id: two tasks collide on the same index.
#[derive(Default)]
pub struct WriteKeyIgnoresTask;

impl WriteRule for WriteKeyIgnoresTask {
    fn key_ignores_task(&self) -> bool {
        true
    }
}

/// Repeated regular writes are stored again (no dedup).
#[derive(Default)]
pub struct RegularWritesDuplicated;

impl WriteRule for RegularWritesDuplicated {
    fn replaces(&self, special: bool, _all_special_call: bool) -> Option<bool> {
        special.then_some(true)
    }
}

/// The regular writes of one call get their indexes in channel order, not call order.
#[derive(Default)]
pub struct WritesSortedByChannel;

impl Bug for WritesSortedByChannel {
    fn put_writes_input(&self, call: &mut PutWrites) {
        let is_regular = |c: &str| special_write_index(c).is_none();
        let mut regular: Vec<(String, TypedValue)> =
            call.writes.iter().filter(|(c, _)| is_regular(c)).cloned().collect();
        regular.sort_by(|a, b| a.0.cmp(&b.0));
        let mut sorted = regular.into_iter();
        for w in call.writes.iter_mut().filter(|(c, _)| is_regular(c)) {
            if let Some(next) = sorted.next() {
                *w = next;
            }
        }
    }
}

/// The write key leaves out the checkpoint id: every checkpoint of the namespace shows the
/// same writes.
#[derive(Default)]
pub struct WriteKeyIgnoresCheckpoint(Mutex<HashMap<(String, String), Vec<KeptWrite>>>);

impl Bug for WriteKeyIgnoresCheckpoint {
    fn put_writes_input(&self, w: &mut PutWrites) {
        if w.config.checkpoint_id.is_some() {
            let key = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone());
            apply_writes(&ContractRule, lock(&self.0).entry(key).or_default(), &w.writes, &w.task_id, &w.task_path);
        }
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(ws) = lock(&self.0).get(&(t.config.thread_id.clone(), t.config.checkpoint_ns.clone())) {
            t.pending_writes = sorted_writes(ws.clone());
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 != *thread_id);
    }
}

/// Written values are stored without their type tag.
#[derive(Default)]
pub struct WriteTypeTagDropped;

impl Bug for WriteTypeTagDropped {
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.writes.iter_mut().for_each(|(_, v)| v.type_tag.clear());
    }
}

/// Written values are truncated to 1 MiB.
#[derive(Default)]
pub struct WriteValueTruncated;

impl Bug for WriteValueTruncated {
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.writes.iter_mut().for_each(|(_, v)| v.data.truncate(1 << 20));
    }
}

/// Writes whose config has no namespace are acknowledged and lost (a JavaScript saver that
/// files them under the namespace `undefined`, which no read looks up; issue 35).
#[derive(Default)]
pub struct WritesWithoutNamespaceDropped;

#[async_trait]
impl Bug for WritesWithoutNamespaceDropped {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::PutWrites(_) if conformance_core::Omitted::current().checkpoint_ns => Ok(Reply::Done),
            other => saver.forward(other).await,
        }
    }
}

/// A read returns each write's `task_path` cut at its first `", "` (a saver keeping only
/// the first segment of LangGraph's task paths, `"~__pregel_push, ..."`).
#[derive(Default)]
pub struct TaskPathCutOnRead;

impl Bug for TaskPathCutOnRead {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        for w in &mut t.pending_writes {
            if let Some((first, _)) = w.task_path.split_once(", ") {
                w.task_path = first.to_string();
            }
        }
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(should
        TaskPathCutOnRead,
        &[PW, GT, LS, CT, DH, TR],
        [R("put_writes.task_path")],
        "a read returns each write's task_path cut at its first \", \" (a LangGraph push path loses its tail)"
    ),
    mutant!(
        WritesWithoutCheckpointIdAccepted,
        &[PW],
        [R("put_writes.id_required")],
        "put_writes without checkpoint_id returns Ok and stores nothing"
    ),
    mutant!(
        EmptyWritesRejected,
        &[PW],
        [R("put_writes.empty"), S("S14"), G("7.2-empty-writes")],
        "put_writes with an empty list fails with InvalidInput"
    ),
    mutant!(
        WritesIgnoreNamespace,
        &[PW],
        [R("put_writes.belongs"), R("put_writes.key"), G("7.2-ns-isolation")],
        "put_writes stores writes in the root namespace whatever the config's"
    ),
    mutant!(
        WritesBeforeCheckpointDropped,
        &[PW],
        [R("put_writes.early"), S("S05"), G("7.2-writes-missing-checkpoint")],
        "writes for a checkpoint not stored yet are dropped"
    ),
    mutant!(
        WritesAttachToLatest,
        &[PW],
        [R("put_writes.belongs")],
        "writes go to the latest checkpoint of the namespace, not the one named"
    ),
    mutant!(
        "regular_write_last_wins",
        Mirrored<RegularWriteLastWins>,
        &[PW],
        [R("put_writes.regular_first"), S("S04"), G("7.2-regular-last-wins")],
        "a repeated regular write replaces the first"
    ),
    mutant!(
        "special_write_first_wins",
        Mirrored<SpecialWriteFirstWins>,
        &[PW],
        [R("put_writes.special_last"), G("7.2-special-first-wins")],
        "a repeated special write is ignored"
    ),
    mutant!(
        "write_rule_decided_per_call",
        Mirrored<WriteRuleDecidedPerCall>,
        &[PW],
        [R("put_writes.per_write"), S("S02"), G("7.2-mixed-batches")],
        "replace-or-ignore is decided per call: a special write in a mixed retry keeps the stale value"
    ),
    mutant!(
        "special_index_is_position",
        Mirrored<SpecialIndexIsPosition>,
        &[PW],
        [R("put_writes.index"), S("S03"), G("7.2-mixed-batches")],
        "special channels get their position as index and collide with regular writes"
    ),
    mutant!(
        "positions_skip_specials",
        Mirrored<PositionsSkipSpecials>,
        &[PW],
        [R("put_writes.index"), G("7.2-mixed-batches")],
        "special entries do not count towards the positions of regular writes"
    ),
    mutant!(
        "write_key_ignores_task",
        Mirrored<WriteKeyIgnoresTask>,
        &[PW],
        [R("put_writes.key")],
        "the write key ignores the task id: two tasks collide on the same index"
    ),
    mutant!(
        WritesSortedByChannel,
        &[PW],
        [R("put_writes.index")],
        "the regular writes of one call get their indexes in channel order, not call order"
    ),
    mutant!(
        WriteKeyIgnoresCheckpoint,
        &[PW],
        [R("put_writes.key"), R("put_writes.belongs")],
        "the write key leaves out the checkpoint id: every checkpoint of the namespace shows the same writes"
    ),
    mutant!(
        WriteTypeTagDropped,
        &[PW, GT],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "written values are stored without their type tag"
    ),
    mutant!(
        WriteValueTruncated,
        &[PW],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "written values are truncated to 1 MiB"
    ),
    mutant!(
        "regular_writes_duplicated",
        Mirrored<RegularWritesDuplicated>,
        &[PW],
        [R("put_writes.regular_first"), S("S04")],
        "a repeated regular write is stored again"
    ),
    mutant!(
        WritesWithoutNamespaceDropped,
        &[PW],
        [R("config.missing_namespace")],
        "put_writes whose config has no checkpoint_ns returns Ok and stores nothing"
    ),
    mutant!(
        "task_ids_case_folded",
        TaskIds<CaseFold>,
        &[PW],
        [R("ids.opaque"), R("put_writes.key")],
        "task ids are lower-cased: the writes of tasks \"a\" and \"A\" share a key"
    ),
    mutant!(
        "write_channels_trimmed",
        WriteChannels<Trim>,
        &[PW],
        [R("ids.opaque")],
        "write channel names are trimmed: \"a \" comes back as \"a\""
    ),
];
