//! Mutants of CONTRACT §4 Concurrency (bug scenarios S18, S19): each opens a window
//! ([`race_window`]) in which calls made at the same time from other tasks or instances
//! see, or undo, part of a call.

use super::prelude::*;

/// The writes of each checkpoint as a mutant that keeps them itself stores them; a read
/// shows these instead of the saver's.
#[derive(Default)]
pub struct KeptWrites(Mutex<HashMap<CpKey, Vec<KeptWrite>>>);

impl KeptWrites {
    fn show(&self, t: &mut CheckpointTuple) {
        if let Some(ws) = lock(&self.0).get(&key_of(t)) {
            t.pending_writes = sorted_writes(ws.clone());
        }
    }
    fn forget(&self, thread: &str) {
        lock(&self.0).retain(|k, _| k.0 != thread);
    }
}

/// A `put_writes` call and the key of the checkpoint it names, if it names one.
fn keyed_writes(call: &Invocation) -> Option<(&PutWrites, CpKey)> {
    let Invocation::PutWrites(w) = call else { return None };
    Some((w, (w.config.thread_id.clone(), w.config.checkpoint_ns.clone(), w.config.checkpoint_id.clone()?)))
}

/// `put_writes` reads the checkpoint's writes, yields, and writes the list back: a
/// read-modify-write without a lock, which loses concurrent writes (S18).
#[derive(Default)]
pub struct LostUpdate(KeptWrites);

#[async_trait]
impl Bug for LostUpdate {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Some((w, key)) = keyed_writes(&call) {
            let mut list = lock(&self.0 .0).get(&key).cloned().unwrap_or_default();
            race_window().await;
            apply_writes(&ContractRule, &mut list, &w.writes, &w.task_id, &w.task_path);
            lock(&self.0 .0).insert(key, list);
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        self.0.show(t);
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        self.0.forget(thread_id);
    }
}

/// `put` makes the checkpoint visible without its values, yields, then stores them: a
/// reader sees part of a checkpoint (S18).
#[derive(Default)]
pub struct TornRead;

#[async_trait]
impl Bug for TornRead {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(p) = &call {
            let mut bare = p.checkpoint.clone();
            bare.channel_values.clear();
            saver.saver().put(&p.config, bare, p.metadata.clone(), p.new_versions.clone()).await?;
            race_window().await;
        }
        saver.forward(call).await
    }
}

/// A call that finds the storage held by a call of another instance fails with "database
/// is locked" (S19).
#[derive(Default)]
pub struct BusyAcrossInstances(Mutex<Option<(u64, usize)>>);

/// Holds the storage lock of [`BusyAcrossInstances`] for one call.
struct Held<'a>(&'a Mutex<Option<(u64, usize)>>);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut lock = lock(self.0);
        if let Some((_, calls)) = &mut *lock {
            *calls -= 1;
            if *calls == 0 {
                *lock = None;
            }
        }
    }
}

#[async_trait]
impl Bug for BusyAcrossInstances {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let base = matches!(
            call,
            Invocation::Put(_)
                | Invocation::PutWrites(_)
                | Invocation::GetTuple { .. }
                | Invocation::List { .. }
                | Invocation::DeleteThread { .. }
        );
        if !base {
            return saver.forward(call).await;
        }
        let held = {
            let mut lock = lock(&self.0);
            match &mut *lock {
                Some((owner, _)) if *owner != saver.instance() => {
                    return Err(CheckpointError::storage_msg("database is locked"));
                }
                Some((_, calls)) => *calls += 1,
                None => *lock = Some((saver.instance(), 1)),
            }
            Held(&self.0)
        };
        race_window().await;
        let reply = saver.forward(call).await;
        drop(held);
        reply
    }
}

/// `put_writes` stores its writes one at a time, yielding in between: a concurrent reader
/// sees part of a call's writes (S18).
#[derive(Default)]
pub struct WritesNotAtomic;

#[async_trait]
impl Bug for WritesNotAtomic {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &call {
            // One call per write, each repeating the ones before (no-ops: first wins) so
            // every write keeps its position; a reader between two sees part of the call.
            for n in 1..w.writes.len() {
                saver.saver().put_writes(&w.config, w.writes[..n].to_vec(), &w.task_id, &w.task_path).await?;
                race_window().await;
            }
        }
        saver.forward(call).await
    }
}

/// `put_writes` stores a call's leading regular writes (those before its first special
/// write), yields, then stores the rest: a concurrent call of the same task lands in
/// between, so the pair (regular, special) of two calls mixes (one call's regular value
/// with the same call's special value surviving), which no serial order gives.
#[derive(Default)]
pub struct WritesSpecialAfterRegular;

#[async_trait]
impl Bug for WritesSpecialAfterRegular {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::PutWrites(w) = &call {
            // The regular writes before the first special one (their positions are the
            // same in the prefix), then a window, then the whole call: the repeated regular
            // writes are no-ops (first wins), the rest lands now.
            let first_special = w.writes.iter().position(|(ch, _)| special_write_index(ch).is_some());
            if let Some(n) = first_special.filter(|n| *n > 0) {
                saver.saver().put_writes(&w.config, w.writes[..n].to_vec(), &w.task_id, &w.task_path).await?;
                tokio::task::yield_now().await;
            }
        }
        saver.forward(call).await
    }
}

/// `put_writes` checks whether a write's key exists, yields, then inserts: racing writers
/// of one key all insert (S18).
#[derive(Default)]
pub struct CheckThenInsertRace(KeptWrites);

#[async_trait]
impl Bug for CheckThenInsertRace {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Some((w, key)) = keyed_writes(&call) {
            let idxs: Vec<i64> = w.writes.iter().enumerate().map(|(pos, (ch, _))| write_index(ch, pos)).collect();
            let present: Vec<bool> = {
                let kept = lock(&self.0 .0);
                let has =
                    |i: &i64| kept.get(&key).is_some_and(|l| l.iter().any(|k| k.task_id == w.task_id && k.idx == *i));
                idxs.iter().map(has).collect()
            };
            race_window().await;
            let mut kept = lock(&self.0 .0);
            let list = kept.entry(key).or_default();
            for ((idx, (channel, value)), present) in idxs.iter().zip(&w.writes).zip(present) {
                let (task_id, task_path) = (w.task_id.clone(), w.task_path.clone());
                let new = KeptWrite { task_id, task_path, idx: *idx, channel: channel.clone(), value: value.clone() };
                if *idx < 0 {
                    list.retain(|k| !(k.task_id == w.task_id && k.idx == *idx));
                    list.push(new);
                } else if !present {
                    list.push(new);
                }
            }
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        self.0.show(t);
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        self.0.forget(thread_id);
    }
}

/// `put` updates the thread's index of checkpoints by a read-modify-write without a lock:
/// `list` misses checkpoints put at the same time (S18).
#[derive(Default)]
pub struct ThreadIndexLostUpdate(Mutex<HashMap<String, Vec<CpKey>>>);

#[async_trait]
impl Bug for ThreadIndexLostUpdate {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::Put(p) => {
                let thread = p.config.thread_id.clone();
                let key = (thread.clone(), p.config.checkpoint_ns.clone(), p.checkpoint.id.clone());
                let mut index = lock(&self.0).get(&thread).cloned().unwrap_or_default();
                race_window().await;
                if !index.contains(&key) {
                    index.push(key);
                }
                lock(&self.0).insert(thread, index);
                saver.forward(call).await
            }
            Invocation::List { thread_id: thread, options: o } => {
                let r = saver.saver().list(thread, &ListOptions { limit: None, ..o.clone() }).await?;
                let listed = match lock(&self.0).get(thread) {
                    Some(index) => r
                        .into_iter()
                        .filter(|t| {
                            index
                                .iter()
                                .any(|k| k.1 == t.config.checkpoint_ns && Some(&k.2) == t.config.checkpoint_id.as_ref())
                        })
                        .collect(),
                    None => r,
                };
                Ok(Reply::Tuples(truncate(listed, o.limit)))
            }
            _ => saver.forward(call).await,
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).remove(thread_id.as_str());
    }
}

/// The thread's latest checkpoint is a pointer that `put` moves with a compare-then-write
/// without a lock: it reads the pointer, and, when its id is greater, writes its own id
/// (after a window in which another put may have moved the pointer further). `get_tuple`
/// without an id follows the pointer. Calls one after another keep the greatest id; puts
/// at once whose ids arrive out of order leave a smaller one.
#[derive(Default)]
pub struct LatestPointerRace(Mutex<HashMap<(String, String), String>>);

#[async_trait]
impl Bug for LatestPointerRace {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::Put(p) => {
                let key = (p.config.thread_id.clone(), p.config.checkpoint_ns.clone());
                let id = p.checkpoint.id.clone();
                let reply = saver.forward(call).await?;
                let seen = lock(&self.0).get(&key).cloned();
                race_window().await;
                if seen.is_none_or(|s| id > s) {
                    lock(&self.0).insert(key, id);
                }
                Ok(reply)
            }
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() => {
                let pointer = lock(&self.0).get(&(cfg.thread_id.clone(), cfg.checkpoint_ns.clone())).cloned();
                match pointer {
                    Some(id) => Ok(Reply::Tuple(saver.saver().get_tuple(&cfg.clone().with_id(id)).await?)),
                    None => saver.forward(call).await,
                }
            }
            _ => saver.forward(call).await,
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 != *thread_id);
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        LostUpdate,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes is a read-modify-write without a lock: concurrent writes are lost"
    ),
    mutant!(
        TornRead,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put makes the checkpoint visible before its values: a concurrent reader sees part of it"
    ),
    mutant!(
        BusyAcrossInstances,
        &[CC],
        [R("concurrency.serial"), S("S19"), R("concurrency.two_instances")],
        "a call that finds the storage held by another instance fails with \"database is locked\""
    ),
    mutant!(
        WritesNotAtomic,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes stores its writes one at a time: a concurrent reader sees part of a call"
    ),
    mutant!(
        WritesSpecialAfterRegular,
        &[CC],
        [R("concurrency.serial"), R("put_writes.per_write"), S("S18")],
        "put_writes stores a call's regular writes, yields, then its special ones: two concurrent calls of one task mix"
    ),
    mutant!(
        CheckThenInsertRace,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes checks whether a key exists, then inserts: racing writers of one key all insert"
    ),
    mutant!(
        ThreadIndexLostUpdate,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put updates the thread's index by a read-modify-write without a lock: list misses concurrent puts"
    ),
    mutant!(
        LatestPointerRace,
        &[CC],
        [R("concurrency.serial"), R("get_tuple.latest")],
        "put moves the thread's latest pointer by compare-then-write without a lock: concurrent puts leave a smaller id latest"
    ),
];
