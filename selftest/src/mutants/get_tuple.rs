//! Mutants of CONTRACT §2 get_tuple: which checkpoint is found, what an absent one gives,
//! the tuple's config, and the order of its pending writes.

use super::id_support::*;
use super::prelude::*;

/// "Latest" is the checkpoint put last, not the greatest id.
#[derive(Default)]
pub struct LatestByInsertionOrder(Mutex<HashMap<(String, String), String>>);

#[async_trait]
impl Bug for LatestByInsertionOrder {
    fn put_input(&self, put: &mut Put) {
        let key = (put.config.thread_id.clone(), put.config.checkpoint_ns.clone());
        lock(&self.0).insert(key, put.checkpoint.id.clone());
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: cfg } = &call else { return saver.forward(call).await };
        let last = lock(&self.0).get(&(cfg.thread_id.clone(), cfg.checkpoint_ns.clone())).cloned();
        if let (None, Some(id)) = (&cfg.checkpoint_id, last) {
            if let Some(t) = saver.saver().get_tuple(&cfg.clone().with_id(id)).await? {
                return Ok(Reply::Tuple(Some(t)));
            }
        }
        saver.forward(call).await
    }
}

/// With an id, the namespace is ignored.
#[derive(Default)]
pub struct GetByIdIgnoresNamespace;

#[async_trait]
impl Bug for GetByIdIgnoresNamespace {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: CheckpointConfig { thread_id, checkpoint_id: Some(id), .. } } = &call else {
            return saver.forward(call).await;
        };
        let found = saver.saver().list(thread_id, &ListOptions::all().id(id.clone())).await?;
        Ok(Reply::Tuple(found.into_iter().next()))
    }
}

/// Without an id in the root namespace, the latest of any namespace is returned (S10).
#[derive(Default)]
pub struct RootLatestSpansNamespaces;

#[async_trait]
impl Bug for RootLatestSpansNamespaces {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() && cfg.checkpoint_ns.is_empty() => {
                let found = saver.saver().list(&cfg.thread_id, &ListOptions::all().limit(1)).await?;
                Ok(Reply::Tuple(found.into_iter().next()))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// An id that is not stored falls back to the latest checkpoint.
#[derive(Default)]
pub struct MissingIdFallsBackToLatest;

#[async_trait]
impl Bug for MissingIdFallsBackToLatest {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: cfg } = &call else { return saver.forward(call).await };
        let found = saver.saver().get_tuple(cfg).await?;
        if found.is_none() && cfg.checkpoint_id.is_some() {
            return Ok(Reply::Tuple(saver.saver().get_tuple(&cfg.clone().without_id()).await?));
        }
        Ok(Reply::Tuple(found))
    }
}

/// The thread is ignored: by id in any thread, latest over every thread.
#[derive(Default)]
pub struct GetTupleIgnoresThread;

#[async_trait]
impl Bug for GetTupleIgnoresThread {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: cfg } = &call else { return saver.forward(call).await };
        let mut best: Option<CheckpointTuple> = None;
        for thread_id in saver.threads().into_iter().chain([cfg.thread_id.clone()]) {
            let other = CheckpointConfig { thread_id, ..cfg.clone() };
            if let Some(t) = saver.saver().get_tuple(&other).await? {
                if best.as_ref().is_none_or(|b| t.config.checkpoint_id > b.config.checkpoint_id) {
                    best = Some(t);
                }
            }
        }
        Ok(Reply::Tuple(best))
    }
}

/// A checkpoint that is not stored comes back as an empty tuple instead of none.
#[derive(Default)]
pub struct GetTupleMissingGivesEmpty;

impl Bug for GetTupleMissingGivesEmpty {
    fn get_tuple_output(&self, caller: &CheckpointConfig, out: &mut Option<CheckpointTuple>) {
        if out.is_none() {
            let id = caller.checkpoint_id.clone().unwrap_or_default();
            *out = Some(CheckpointTuple {
                config: caller.clone(),
                checkpoint: Arc::new(Checkpoint { id, ..Default::default() }),
                metadata: CheckpointMetadata::new(),
                parent_config: None,
                pending_writes: Vec::new(),
            });
        }
    }
}

/// The tuple's config is the caller's config as given (no id when the latest was asked
/// for).
#[derive(Default)]
pub struct GetTupleReturnsCallerConfig;

impl Bug for GetTupleReturnsCallerConfig {
    fn get_tuple_output(&self, caller: &CheckpointConfig, out: &mut Option<CheckpointTuple>) {
        if let Some(t) = out {
            t.config = caller.clone();
        }
    }
}

/// `pending_writes` come back in reverse order.
#[derive(Default)]
pub struct PendingWritesReversed;

impl Bug for PendingWritesReversed {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        t.pending_writes.reverse();
    }
}

/// `pending_writes` are ordered by task id, ignoring `task_path`.
#[derive(Default)]
pub struct PendingWritesIgnoreTaskPath;

impl Bug for PendingWritesIgnoreTaskPath {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        t.pending_writes.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    }
}

/// `pending_writes` indexes are compared unsigned (special writes last).
#[derive(Default)]
pub struct PendingWritesIndexUnsigned;

impl Bug for PendingWritesIndexUnsigned {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        // Within one (task_path, task_id) the inner order is by signed index; unsigned, the
        // special (negative) indexes come after every regular one.
        t.pending_writes
            .sort_by_key(|w| (w.task_path.clone(), w.task_id.clone(), special_write_index(&w.channel).is_some()));
    }
}

/// `pending_writes` indexes are compared as text (`-1 < -2`, `10 < 2`).
#[derive(Default)]
pub struct PendingWritesIndexAsText(Mutex<HashMap<(CpKey, String, String), i64>>);

impl Bug for PendingWritesIndexAsText {
    fn put_writes_input(&self, w: &mut PutWrites) {
        let Some(id) = &w.config.checkpoint_id else { return };
        let key: CpKey = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id.clone());
        let mut indexes = lock(&self.0);
        for (pos, (ch, _)) in w.writes.iter().enumerate() {
            let idx = write_index(ch, pos);
            let k = (key.clone(), w.task_id.clone(), ch.clone());
            if idx < 0 {
                indexes.insert(k, idx);
            } else {
                indexes.entry(k).or_insert(idx);
            }
        }
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        let (key, indexes) = (key_of(t), lock(&self.0));
        let idx = |w: &PendingWrite| {
            let stored = indexes.get(&(key.clone(), w.task_id.clone(), w.channel.clone())).copied();
            stored.or_else(|| special_write_index(&w.channel)).unwrap_or(0).to_string()
        };
        t.pending_writes.sort_by_cached_key(|w| (w.task_path.clone(), w.task_id.clone(), idx(w)));
    }
}

/// `get_tuple` with an id returns that checkpoint with the pending writes of the latest
/// checkpoint of its thread and namespace (writes looked up by thread, not by id).
#[derive(Default)]
pub struct ByIdGivesLatestWrites;

#[async_trait]
impl Bug for ByIdGivesLatestWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: cfg } = &call else { return saver.forward(call).await };
        if cfg.checkpoint_id.is_none() {
            return saver.forward(call).await;
        }
        let latest = CheckpointConfig { checkpoint_id: None, ..cfg.clone() };
        let latest_writes = saver.saver().get_tuple(&latest).await?.map(|t| t.pending_writes);
        let mut found = saver.forward(call).await?.tuple()?;
        if let (Some(t), Some(writes)) = (found.as_mut(), latest_writes) {
            t.pending_writes = writes;
        }
        Ok(Reply::Tuple(found))
    }
}

/// A config without a thread reads the thread `"undefined"`, as a JavaScript saver that
/// spells the missing `thread_id` with a template string does (issue 35).
#[derive(Default)]
pub struct MissingThreadReadsUndefined;

impl Bug for MissingThreadReadsUndefined {
    fn thread_input(&self, thread_id: &mut String) {
        if thread_id.is_empty() && conformance_core::Omitted::current().thread_id {
            *thread_id = "undefined".to_owned();
        }
    }
}

/// "Latest" is the checkpoint with the greatest `ts` (ties by id), not the greatest id.
#[derive(Default)]
pub struct LatestByTs;

#[async_trait]
impl Bug for LatestByTs {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() => {
                latest_by(saver, cfg, |t| t.checkpoint.ts.clone()).await
            }
            _ => saver.forward(call).await,
        }
    }
}

/// "Latest" is the checkpoint with the greatest metadata `step` (ties by id), not the
/// greatest id: wrong after time travel, whose fork has a smaller step.
#[derive(Default)]
pub struct LatestByMetadataStep;

#[async_trait]
impl Bug for LatestByMetadataStep {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() => {
                latest_by(saver, cfg, |t| t.metadata.get("step").and_then(Value::as_i64).unwrap_or(i64::MIN)).await
            }
            _ => saver.forward(call).await,
        }
    }
}

/// `get_tuple` looks its namespace up with `WHERE checkpoint_ns LIKE ?`: a namespace with
/// `%` or `_` finds the checkpoint (by id, or the greatest) of every namespace of the
/// thread the pattern matches (`"sub%"` finds `"subab"`'s).
#[derive(Default)]
pub struct GetTupleNamespaceLike;

#[async_trait]
impl Bug for GetTupleNamespaceLike {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::GetTuple { config: cfg } = &call else { return saver.forward(call).await };
        if !cfg.checkpoint_ns.contains(['%', '_']) {
            return saver.forward(call).await;
        }
        let scope = ListOptions { checkpoint_id: cfg.checkpoint_id.clone(), ..ListOptions::all() };
        let found = saver.saver().list(&cfg.thread_id, &scope).await?;
        Ok(Reply::Tuple(found.into_iter().find(|t| like_str(&cfg.checkpoint_ns, &t.config.checkpoint_ns))))
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        LatestByInsertionOrder,
        &[GT],
        [R("get_tuple.latest"), S("S12"), G("7.2-latest-insertion-order"), G("7.2-out-of-order-ids")],
        "the latest checkpoint is the one put last, not the greatest id"
    ),
    mutant!(
        ByIdGivesLatestWrites,
        &[GT],
        [R("get_tuple.by_id"), R("put_writes.belongs")],
        "get_tuple with an id returns the pending writes of the thread's latest checkpoint"
    ),
    mutant!(
        GetByIdIgnoresNamespace,
        &[GT],
        [R("get_tuple.by_id"), G("7.2-ns-isolation")],
        "get_tuple with an id ignores the namespace"
    ),
    mutant!(
        RootLatestSpansNamespaces,
        &[GT],
        [R("get_tuple.latest"), S("S10")],
        "get_tuple without id in the root namespace returns the latest of any namespace"
    ),
    mutant!(
        MissingIdFallsBackToLatest,
        &[GT],
        [R("get_tuple.by_id")],
        "get_tuple of an id that is not stored returns the latest checkpoint"
    ),
    mutant!(
        GetTupleIgnoresThread,
        &[GT],
        [R("get_tuple.by_id"), R("get_tuple.latest")],
        "get_tuple ignores the thread: an id is found in any thread, the latest is over every thread"
    ),
    mutant!(
        GetTupleMissingGivesEmpty,
        &[GT],
        [R("get_tuple.by_id"), R("get_tuple.latest")],
        "get_tuple of a checkpoint that is not stored returns an empty tuple instead of none"
    ),
    mutant!(
        GetTupleReturnsCallerConfig,
        &[GT],
        [R("get_tuple.latest")],
        "the tuple's config is the caller's as given, with no id when the latest was asked for (upstream quirk)"
    ),
    mutant!(
        PendingWritesReversed,
        &[GT, LS],
        [R("get_tuple.writes_order"), G("7.2-writes-order")],
        "pending_writes come back in reverse order"
    ),
    mutant!(
        PendingWritesIgnoreTaskPath,
        &[GT, LS],
        [R("get_tuple.writes_order"), G("7.2-writes-order")],
        "pending_writes are ordered by task id, ignoring task_path (upstream SQLite 3.1.1)"
    ),
    mutant!(
        PendingWritesIndexUnsigned,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes indexes are compared unsigned: special writes sort last"
    ),
    mutant!(
        PendingWritesIndexAsText,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes indexes are compared as text (-1 < -2, 10 < 2)"
    ),
    mutant!(
        MissingThreadReadsUndefined,
        &[GT],
        [R("config.missing_thread")],
        "a config without thread_id reads the thread \"undefined\" (a JS saver stringifying the missing value)"
    ),
    mutant!(
        LatestByTs,
        &[GT],
        [R("get_tuple.latest")],
        "get_tuple without id returns the checkpoint with the greatest ts, not the greatest id"
    ),
    mutant!(
        "thread_ids_case_folded",
        ThreadIds<CaseFold>,
        &[GT],
        [R("ids.opaque")],
        "thread ids are lower-cased: \"a\" and \"A\" are one thread (a case-insensitive collation)"
    ),
    mutant!(
        "thread_ids_nfc_normalised",
        ThreadIds<Nfc>,
        &[GT],
        [R("ids.opaque")],
        "thread ids are NFC-composed: \"e\\u{301}\" and \"\\u{e9}\" are one thread"
    ),
    mutant!(
        "thread_ids_trimmed",
        ThreadIds<Trim>,
        &[GT],
        [R("ids.opaque")],
        "thread ids are trimmed: \"a\", \"a \" and \" a\" are one thread"
    ),
    mutant!(
        "thread_ids_separators_stripped",
        ThreadIds<StripSeparators>,
        &[GT],
        [R("ids.opaque")],
        "the separators (colon, bar, slash, dot) are stripped from thread ids: \"a:b\" and \"ab\" are one thread"
    ),
    mutant!(
        "thread_ids_truncated_at_255_bytes",
        ThreadIds<Truncate255>,
        &[GT],
        [R("ids.opaque")],
        "thread ids are cut to 255 bytes (a VARCHAR(255) that truncates): long ids collide"
    ),
    mutant!(
        "get_tuple_thread_like_pattern",
        GetTupleThreadLike,
        &[GT],
        [R("ids.opaque"), R("get_tuple.latest")],
        "get_tuple looks its thread up with LIKE: \"a%\" and \"a_\" find the thread \"ab\""
    ),
    mutant!(
        GetTupleThreadPrefix,
        &[GT],
        [R("ids.opaque"), R("get_tuple.latest")],
        "get_tuple without id looks its thread up by prefix: \"t\" finds the latest of \"t1\""
    ),
    mutant!(
        "namespaces_nfc_normalised",
        Namespaces<Nfc>,
        &[GT],
        [R("ids.opaque")],
        "namespaces are NFC-composed: \"e\\u{301}\" and \"\\u{e9}\" are one namespace"
    ),
    mutant!(
        "checkpoint_ids_ordered_by_utf16",
        CheckpointIdsOrdered<Utf16>,
        &[GT, LS],
        [R("get_tuple.latest"), R("list.order")],
        "checkpoint ids order by UTF-16 code units (JavaScript's sort): \"\\u{FF61}\" after \"\\u{1F600}\""
    ),
    mutant!(
        "checkpoint_ids_ordered_case_insensitively",
        CheckpointIdsOrdered<NoCase>,
        &[GT, LS],
        [R("get_tuple.latest"), R("list.order")],
        "checkpoint ids order case-insensitively (a database collation): \"B\" after \"a\""
    ),
    mutant!(
        "pending_writes_ordered_by_utf16",
        PendingWritesOrdered<Utf16>,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes order task paths and ids by UTF-16 code units"
    ),
    mutant!(
        "pending_writes_ordered_case_insensitively",
        PendingWritesOrdered<NoCase>,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes order task paths and ids case-insensitively"
    ),
    mutant!(
        "checkpoint_ids_case_folded",
        CheckpointIds<CaseFold>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.by_id")],
        "checkpoint ids are lower-cased: \"...a\" and \"...A\" are one checkpoint"
    ),
    mutant!(
        "checkpoint_ids_truncated_at_255_bytes",
        CheckpointIds<Truncate255>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.by_id")],
        "checkpoint ids are cut to 255 bytes: long ids that differ past that are one checkpoint"
    ),
    mutant!(
        GetTupleNamespaceLike,
        &[GT],
        [R("ids.opaque"), R("get_tuple.by_id"), R("get_tuple.latest")],
        "get_tuple looks its namespace up with LIKE: \"sub%\" finds the checkpoint of the namespace \"subab\""
    ),
    mutant!(
        "get_tuple_thread_fallback_trimmed",
        GetTupleFallback<Trim, OnThread>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.latest")],
        "get_tuple retries a thread it does not find trimmed: \" t\" finds the thread \"t\" (exact threads still win)"
    ),
    mutant!(
        "get_tuple_namespace_fallback_case_folded",
        GetTupleFallback<CaseFold, OnNamespace>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.latest")],
        "get_tuple retries a namespace it does not find case-insensitively: \"subA\" finds \"suba\" (exact namespaces still win)"
    ),
    mutant!(
        "get_tuple_checkpoint_id_fallback_case_folded",
        GetTupleFallback<CaseFold, OnCheckpointId>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.by_id")],
        "get_tuple retries a checkpoint id it does not find case-insensitively (exact ids still win)"
    ),
    mutant!(
        "get_tuple_checkpoint_id_fallback_nfc",
        GetTupleFallback<Nfc, OnCheckpointId>,
        &[GT],
        [R("ids.opaque"), R("get_tuple.by_id")],
        "get_tuple retries a checkpoint id it does not find NFC-composed: \"e\\u{301}\" finds \"\\u{e9}\""
    ),
    mutant!(
        LatestByMetadataStep,
        &[GT],
        [R("get_tuple.latest")],
        "get_tuple without id returns the checkpoint with the greatest metadata step, not the greatest id"
    ),
    mutant!(
        "checkpoint_ids_ordered_length_first",
        CheckpointIdsOrdered<LengthFirst>,
        &[GT, LS],
        [R("get_tuple.latest"), R("list.order")],
        "checkpoint ids order by length, then bytes (a numeric sort, a (length, id) index): \"b\" before \"ab\""
    ),
];
