//! Mutants of CONTRACT §4 Durability (bug scenario S20): acknowledged calls that another
//! instance, or the same storage after a kill, does not see.

use super::prelude::*;

/// A `put` or `put_writes` acknowledged and not yet stored, as [`AckBeforeCommit`] keeps it.
enum Unstored {
    /// A put of this checkpoint.
    Put(CpKey),
    /// A put_writes on this checkpoint: (task_id, channel, value) of each write.
    Writes(CpKey, Vec<(String, String, TypedValue)>),
}

/// `put` and `put_writes` acknowledge before storing: another instance sees an instance's
/// last such call only once that instance makes its next put, put_writes or delete_thread
/// (S20). The calls reach the inner saver at once; reads of other instances hide them.
#[derive(Default)]
pub struct AckBeforeCommit(Mutex<BTreeMap<u64, Unstored>>);

impl AckBeforeCommit {
    /// `t` as instance `me` sees it: none when it is another instance's unstored put,
    /// without the writes of another instance's unstored put_writes.
    fn committed(&self, me: u64, mut t: CheckpointTuple) -> Option<CheckpointTuple> {
        let key = key_of(&t);
        for (_, op) in lock(&self.0).iter().filter(|(instance, _)| **instance != me) {
            match op {
                Unstored::Put(k) if *k == key => return None,
                Unstored::Writes(k, ws) if *k == key => t.pending_writes.retain(|w| {
                    !ws.iter().any(|(task, ch, v)| *task == w.task_id && *ch == w.channel && *v == w.value)
                }),
                _ => {}
            }
        }
        Some(t)
    }
}

#[async_trait]
impl Bug for AckBeforeCommit {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let me = saver.instance();
        let unstored = match &call {
            Invocation::Put(p) => Some(Unstored::Put((
                p.config.thread_id.clone(),
                p.config.checkpoint_ns.clone(),
                p.checkpoint.id.clone(),
            ))),
            Invocation::PutWrites(w) if !w.writes.is_empty() => w.config.checkpoint_id.clone().map(|id| {
                let ws = w.writes.iter().map(|(ch, v)| (w.task_id.clone(), ch.clone(), v.clone())).collect();
                Unstored::Writes((w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id), ws)
            }),
            Invocation::DeleteThread { .. } => {
                lock(&self.0).remove(&me);
                None
            }
            Invocation::GetTuple { config: cfg } => {
                let found = saver.saver().get_tuple(cfg).await?.map(|t| self.committed(me, t));
                let found = match (found, &cfg.checkpoint_id) {
                    (Some(None), None) => {
                        let ns = ListOptions::all().ns(cfg.checkpoint_ns.clone());
                        saver.saver().list(&cfg.thread_id, &ns).await?.into_iter().find_map(|t| self.committed(me, t))
                    }
                    (found, _) => found.flatten(),
                };
                return Ok(Reply::Tuple(found));
            }
            Invocation::List { thread_id: thread, options: o } => {
                let all = saver.saver().list(thread, &ListOptions { limit: None, ..o.clone() }).await?;
                let r = all.into_iter().filter_map(|t| self.committed(me, t)).collect();
                return Ok(Reply::Tuples(truncate(r, o.limit)));
            }
            _ => None,
        };
        let reply = saver.forward(call).await?;
        if let Some(op) = unstored {
            lock(&self.0).insert(me, op);
        }
        Ok(reply)
    }
}

/// `delete_thread` acknowledges before storing: another instance still sees the thread
/// until the deleting instance makes its next put or put_writes.
#[derive(Default)]
pub struct DeleteBeforeCommit(Mutex<BTreeMap<u64, (String, Vec<CheckpointTuple>)>>);

impl DeleteBeforeCommit {
    /// What another instance's unstored `delete_thread(thread)` still shows instance `me`.
    fn still_visible(&self, me: u64, thread: &str) -> Option<Vec<CheckpointTuple>> {
        let deletes = lock(&self.0);
        deletes.iter().find(|(i, (t, _))| **i != me && t == thread).map(|(_, (_, snapshot))| snapshot.clone())
    }
}

#[async_trait]
impl Bug for DeleteBeforeCommit {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let me = saver.instance();
        match &call {
            Invocation::DeleteThread { thread_id: thread } => {
                let snapshot = saver.snapshot(thread).await?;
                lock(&self.0).insert(me, (thread.clone(), snapshot));
            }
            Invocation::Put(_) | Invocation::PutWrites(_) => {
                let reply = saver.forward(call).await?;
                lock(&self.0).remove(&me);
                return Ok(reply);
            }
            Invocation::GetTuple { config: cfg } => {
                if let Some(snapshot) = self.still_visible(me, &cfg.thread_id) {
                    let found = snapshot.into_iter().find(|t| {
                        t.config.checkpoint_ns == cfg.checkpoint_ns
                            && (cfg.checkpoint_id.is_none() || t.config.checkpoint_id == cfg.checkpoint_id)
                    });
                    return Ok(Reply::Tuple(found));
                }
            }
            Invocation::List { thread_id: thread, options: o } => {
                if let Some(snapshot) = self.still_visible(me, thread) {
                    let scoped = snapshot.into_iter().filter(|t| {
                        o.checkpoint_ns.as_ref().is_none_or(|ns| *ns == t.config.checkpoint_ns)
                            && o.checkpoint_id.as_ref().is_none_or(|id| Some(id) == t.config.checkpoint_id.as_ref())
                    });
                    return Ok(Reply::Tuples(truncate(scoped.collect(), o.limit)));
                }
            }
            _ => {}
        }
        saver.forward(call).await
    }
}

/// `put` and `put_writes` answer `Ok` at once and reach the inner saver only at the start
/// of the same instance's next call (so that instance reads its own calls): another
/// instance, or the storage after the process is killed, misses the last acknowledged call
/// (S20). Wraps a saver other processes can open, so the durability crash test kills it.
#[derive(Default)]
pub struct AckDeferredToNextCall(Mutex<HashMap<u64, Invocation>>);

#[async_trait]
impl Bug for AckDeferredToNextCall {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let pending = lock(&self.0).remove(&saver.instance());
        if let Some(pending) = pending {
            saver.forward(pending).await?;
        }
        let reply = match &call {
            Invocation::Put(p) => Reply::Config(p.config.clone().with_id(p.checkpoint.id.clone())),
            Invocation::PutWrites(_) => Reply::Done,
            _ => return saver.forward(call).await,
        };
        lock(&self.0).insert(saver.instance(), call);
        Ok(reply)
    }
}

/// Regular writes are deduplicated per instance: a write an instance re-delivers for a key
/// another instance wrote first replaces it (last wins across instances), while within one
/// instance the first write wins (S04). One instance alone behaves as the contract says.
#[derive(Default)]
pub struct FirstWinsPerInstance(Mutex<HashMap<CpKey, Vec<(u64, KeptWrite)>>>);

#[async_trait]
impl Bug for FirstWinsPerInstance {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &call {
            if let Some(id) = &w.config.checkpoint_id {
                let key = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id.clone());
                let me = saver.instance();
                let mut kept = lock(&self.0);
                let list = kept.entry(key).or_default();
                for (pos, (channel, value)) in w.writes.iter().enumerate() {
                    let special = special_write_index(channel).is_some();
                    let new = KeptWrite {
                        task_id: w.task_id.clone(),
                        task_path: w.task_path.clone(),
                        idx: write_index(channel, pos),
                        channel: channel.clone(),
                        value: value.clone(),
                    };
                    match list.iter_mut().find(|(_, k)| k.idx == new.idx && k.task_id == new.task_id) {
                        Some(entry) if special || entry.0 != me => *entry = (me, new),
                        Some(_) => {}
                        None => list.push((me, new)),
                    }
                }
            }
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(list) = lock(&self.0).get(&key_of(t)) {
            t.pending_writes = sorted_writes(list.iter().map(|(_, w)| w.clone()).collect());
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 != *thread_id);
    }
}

/// Writes for a checkpoint that is not stored yet are held in the instance that took them
/// (a pending-writes buffer flushed when that instance puts the checkpoint), not stored:
/// one instance alone shows them once it puts the checkpoint; a checkpoint put through
/// another instance, or after a reopen, shows none of them.
#[derive(Default)]
pub struct EarlyWritesHeldByInstance(Mutex<HashMap<(u64, CpKey), Vec<PutWrites>>>);

#[async_trait]
impl Bug for EarlyWritesHeldByInstance {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let me = saver.instance();
        match &call {
            Invocation::PutWrites(w) if !w.writes.is_empty() && w.config.checkpoint_id.is_some() => {
                if saver.saver().get_tuple(&w.config).await?.is_none() {
                    let id = w.config.checkpoint_id.clone().unwrap_or_default();
                    let key = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id);
                    lock(&self.0).entry((me, key)).or_default().push(w.clone());
                    return Ok(Reply::Done);
                }
            }
            Invocation::Put(p) => {
                let key = (p.config.thread_id.clone(), p.config.checkpoint_ns.clone(), p.checkpoint.id.clone());
                let reply = saver.forward(call.clone()).await?;
                let held = lock(&self.0).remove(&(me, key)).unwrap_or_default();
                for w in held {
                    saver.forward(Invocation::PutWrites(w)).await?;
                }
                return Ok(reply);
            }
            Invocation::DeleteThread { thread_id } => lock(&self.0).retain(|(_, k), _| k.0 != *thread_id),
            _ => {}
        }
        saver.forward(call).await
    }
}

/// Special writes are last-wins only over the instance's own earlier write: the saver
/// remembers which special keys it wrote and inserts-or-ignores the others, so a special
/// write another instance made first is kept over a later one. One instance alone
/// behaves as the contract says.
#[derive(Default)]
pub struct SpecialLastWinsPerInstance(Mutex<HashMap<(CpKey, String, i64), (u64, TypedValue)>>);

#[async_trait]
impl Bug for SpecialLastWinsPerInstance {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &call {
            if let Some(id) = &w.config.checkpoint_id {
                let cp = (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), id.clone());
                let me = saver.instance();
                let mut kept = lock(&self.0);
                for (channel, value) in &w.writes {
                    let Some(idx) = special_write_index(channel) else { continue };
                    match kept.entry((cp.clone(), w.task_id.clone(), idx)) {
                        std::collections::hash_map::Entry::Occupied(e) if e.get().0 != me => {}
                        e => {
                            let _ = e.insert_entry((me, value.clone()));
                        }
                    }
                }
            }
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        let cp = key_of(t);
        let kept = lock(&self.0);
        for w in &mut t.pending_writes {
            if let Some(idx) = special_write_index(&w.channel) {
                if let Some((_, value)) = kept.get(&(cp.clone(), w.task_id.clone(), idx)) {
                    w.value = value.clone();
                }
            }
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 .0 != *thread_id);
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        AckBeforeCommit,
        &[DU],
        [R("durability.acknowledged"), S("S20")],
        "put and put_writes acknowledge before storing: a new instance misses the last acknowledged call"
    ),
    mutant!(
        DeleteBeforeCommit,
        &[DU],
        [R("durability.acknowledged")],
        "delete_thread acknowledges before storing: a new instance still sees the deleted thread"
    ),
    mutant!(
        FirstWinsPerInstance,
        &[DU],
        [R("put_writes.regular_first"), S("S04")],
        "regular writes are deduplicated per instance: a re-delivery through another instance replaces the first write"
    ),
    mutant!(
        Sqlite: AckDeferredToNextCall,
        &[DU],
        [R("durability.acknowledged"), S("S20")],
        "put and put_writes of the SQLite saver answer Ok before storing: a killed process loses the last acknowledged call"
    ),
    mutant!(
        EarlyWritesHeldByInstance,
        &[DU],
        [R("put_writes.early"), R("durability.acknowledged")],
        "writes for a checkpoint not yet stored are held in the instance that took them: a checkpoint put through another instance shows none"
    ),
    mutant!(
        SpecialLastWinsPerInstance,
        &[DU],
        [R("put_writes.special_last")],
        "special writes are last-wins only over the instance's own: a later special write through another instance is ignored"
    ),
];
