//! The generator: turns a raw choice (a kind and six numbers, which proptest generates
//! and shrinks towards zero) into an [`Op`] over the sequence's [`World`], reading the
//! [`Model`] so that every op is one whose result the contract settles (see
//! [`Model::settled_value`], [`Model::has_orphan_writes`]). An op of a capability the saver
//! does not implement (detected `Unsupported`) becomes a `get_tuple`.

use std::collections::BTreeSet;

use conformance_core::{
    Capability, Checkpoint, CheckpointConfig, CheckpointMetadata, Invocation, ListOptions, PruneStrategy, Put,
    PutWrites,
};
use serde_json::{json, Value};

use super::domain::{confusable, next_version_inputs, values, World, SOURCES, SPECIAL};
use super::exec::{may_refuse, on_empty_thread, serial_orders};
use super::trace::{Branch, Op};
use crate::model::Model;

/// One raw choice.
pub type Raw = (u8, [u16; 6]);

/// The number of op kinds a raw choice picks from.
pub const KINDS: u8 = 17;

/// What the saver under test can do.
#[derive(Clone, Debug)]
pub struct Abilities {
    /// The detected extended capabilities.
    pub extended: BTreeSet<Capability>,
    /// True when another instance can be opened on the same storage.
    pub reopen: bool,
}

fn pick<T: Clone>(items: &[T], n: u16) -> T {
    items[usize::from(n) % items.len()].clone()
}

/// Like [`pick`], but the first item half the time, so that a sequence builds a deeper
/// history on one thread (more checkpoints, parents and writes to collide with).
fn pick_skewed<T: Clone>(items: &[T], n: u16) -> T {
    if n.is_multiple_of(2) {
        items[0].clone()
    } else {
        pick(items, n >> 1)
    }
}

/// The op `raw` stands for in `world` given the model's state.
pub fn interpret(raw: &Raw, world: &World, model: &Model, can: &Abilities) -> Op {
    let (kind, p) = raw;
    let (mut thread, mut ns, mut id) =
        (pick_skewed(&world.threads, p[0]), pick(&world.namespaces, p[1]), pick(&world.ids, p[2]));
    // Mostly aim at a stored checkpoint, so that writes and reads collide with it.
    if p[2] % 4 != 0 && !model.checkpoints.is_empty() && !matches!(kind % KINDS, 0..=3) {
        let keys: Vec<_> = model.checkpoints.keys().collect();
        (thread, ns, id) = pick(&keys, p[2] >> 2).clone();
    }
    // The thread "" of some worlds: refusing it is a SHOULD rule (CONTRACT §1 Config;
    // LangGraph's InMemorySaver stores the thread ""), so the run allows the refusal and
    // otherwise judges "" as an ordinary id (fuzz/mod.rs, `on_empty_thread`).
    let get_config =
        CheckpointConfig::new(thread.clone()).with_ns(ns.clone()).with_id(id.clone()).without_id_if(p[3] % 3 == 0);
    let get = move || Op::Call(Invocation::GetTuple { config: get_config });
    let has = |c: Capability| can.extended.contains(&c);
    match kind % KINDS {
        0..=3 => put(world, model, &thread, &ns, &id, p),
        4..=5 => {
            let n = usize::from(p[5] % 4);
            let channels: Vec<String> =
                world.channels.iter().cloned().chain(SPECIAL.iter().map(|s| (*s).to_owned())).collect();
            let vals = values();
            let writes = (0..n)
                .map(|i| {
                    let c = pick(&channels, p[5] >> (2 + 3 * i as u16));
                    (c, pick(vals, p[4].wrapping_add(i as u16 * 5)))
                })
                .collect();
            Op::Call(Invocation::PutWrites(PutWrites {
                // Now and then without a checkpoint id (CONTRACT §2 put_writes: InvalidConfig).
                config: CheckpointConfig::new(thread).with_ns(ns).with_id(id).without_id_if(p[3] % 19 == 18),
                writes,
                task_id: pick(&world.tasks, p[3]),
                task_path: pick(&world.paths, p[4] >> 4),
            }))
        }
        6 => get(),
        7..=8 => {
            let mut options = ListOptions::all();
            if p[1] % 3 != 0 {
                options.checkpoint_ns = Some(ns);
            }
            if p[2] % 7 == 6 {
                options.checkpoint_id = Some(id.clone());
            }
            if p[3] % 3 == 1 {
                options.before = Some(pick(&world.ids, p[3] >> 2));
            }
            if p[4] % 3 == 1 {
                options.limit = Some(usize::from((p[4] >> 2) % 4));
            }
            if p[5] % 3 == 1 {
                options.filter = filter(world, model, p[5] >> 2);
            }
            Op::Call(Invocation::List { thread_id: thread, options })
        }
        9 => Op::Call(Invocation::DeleteThread { thread_id: thread }),
        10 if has(Capability::DeleteForRuns) => {
            let mut run_ids: Vec<String> =
                world.run_ids.iter().enumerate().filter(|(i, _)| p[3] >> i & 1 == 1).map(|(_, r)| r.clone()).collect();
            if p[3] & 4 != 0 {
                run_ids.push("r-unknown".into());
            }
            Op::Call(Invocation::DeleteForRuns { run_ids })
        }
        11 if has(Capability::CopyThread) => {
            let target = pick(&world.threads, p[0].wrapping_add(1 + p[3] % 2));
            if copy_is_settled(model, &thread, &target) {
                Op::Call(Invocation::CopyThread { source: thread, target })
            } else {
                get()
            }
        }
        12 if has(Capability::Prune) => {
            let mut thread_ids = vec![thread];
            if p[3] % 2 == 1 {
                thread_ids.push(pick(&world.threads, p[0].wrapping_add(1)));
            }
            if p[3] % 5 == 4 {
                // An empty input (CONTRACT §3: a no-op, not an error).
                thread_ids.clear();
            }
            let strategy = if p[4] % 3 == 0 { PruneStrategy::Delete } else { PruneStrategy::KeepLatest };
            if strategy == PruneStrategy::KeepLatest && thread_ids.iter().any(|t| model.has_orphan_writes(t)) {
                get()
            } else {
                Op::Call(Invocation::Prune { thread_ids, strategy })
            }
        }
        13 if has(Capability::DeltaChannelHistory) => Op::Call(Invocation::DeltaChannelHistory {
            config: CheckpointConfig::new(thread).with_ns(ns).with_id(id).without_id_if(p[3] % 3 == 0),
            channels: world
                .channels
                .iter()
                .enumerate()
                .filter(|(i, _)| p[4] >> i & 1 == 1)
                .map(|(_, c)| c.clone())
                .collect(),
        }),
        15 => Op::Call(Invocation::GetNextVersion { current: pick(&next_version_inputs(&world.versions), p[4]) }),
        14 if can.reopen => {
            if p[0] % 2 == 0 {
                Op::Reopen
            } else {
                Op::Instance { index: usize::from(p[1] % 2) }
            }
        }
        // A request for a batch: [`next`] makes it of the choices that follow.
        16 if has(Capability::Concurrency) => Op::Concurrent { calls: Vec::new() },
        _ => get(),
    }
}

/// The op the raw choices at the start of `raws` stand for, and how many of them it takes:
/// one, or for a concurrent batch its own choice and the two or three after it, which
/// become its calls (`put`, `put_writes`, `get_tuple` and `list` only, each on the current
/// instance or, when the saver can open another, on instance 0 or 1), at most one put per
/// thread and namespace. Calls are left out
/// from the end until every serial order leaves the same state (`order_free`), so that
/// the steps after the batch have one expected result; a batch of fewer than two calls is
/// its one call, or a `get_tuple`.
pub fn next(raws: &[Raw], world: &World, model: &Model, can: &Abilities) -> (Op, usize) {
    let op = interpret(&raws[0], world, model, can);
    if !matches!(op, Op::Concurrent { .. }) {
        return (op, 1);
    }
    let p = raws[0].1;
    let n = (2 + usize::from(p[0] % 2)).min(raws.len() - 1);
    let batchable = |op: &Op| {
        matches!(
            op,
            Op::Call(Invocation::Put(Put { .. }))
                | Op::Call(Invocation::PutWrites(PutWrites { .. }))
                | Op::Call(Invocation::GetTuple { .. })
                | Op::Call(Invocation::List { .. })
        ) && !may_refuse(op)
            && !on_empty_thread(op)
    };
    // Every call is made against the state before the batch, so the guards that keep a
    // put's result settled (a value stored on a version another checkpoint carries without
    // one, CONTRACT §2 put) cannot see the batch's other puts: at most one put per thread
    // and namespace (the fuzzer's sqlite run found the false divergence this prevents).
    let mut put_at = BTreeSet::new();
    let mut one_put_per_place = |op: &Op| match op {
        Op::Call(Invocation::Put(Put { config, .. })) => {
            put_at.insert((config.thread_id.clone(), config.checkpoint_ns.clone()))
        }
        _ => true,
    };
    let mut calls: Vec<Branch> = raws[1..=n]
        .iter()
        .map(|r| interpret(r, world, model, can))
        .filter(batchable)
        .filter(|op| one_put_per_place(op))
        .enumerate()
        .map(|(i, op)| Branch {
            instance: (can.reopen && p[1] >> i & 1 == 1).then_some(usize::from(p[2] >> i & 1)),
            op,
        })
        .collect();
    while calls.len() > 1 && !order_free(model, &calls) {
        calls.pop();
    }
    let op = match calls.len() {
        0 => Op::Call(Invocation::GetTuple { config: CheckpointConfig::new(world.threads[0].clone()) }),
        1 => calls.remove(0).op,
        _ => Op::Concurrent { calls },
    };
    (op, 1 + n)
}

/// True when every serial order of `calls` leaves the model in the same state.
fn order_free(model: &Model, calls: &[Branch]) -> bool {
    let ops: Vec<&Op> = calls.iter().map(|c| &c.op).collect();
    let all = serial_orders(model, &ops);
    all.iter().all(|(_, m)| m == &all[0].1)
}

trait WithoutIdIf {
    fn without_id_if(self, cond: bool) -> Self;
}

impl WithoutIdIf for CheckpointConfig {
    fn without_id_if(self, cond: bool) -> Self {
        if cond {
            self.without_id()
        } else {
            self
        }
    }
}

/// True when copying `source` onto `target` has one right answer: no writes without a
/// checkpoint on either side, no channel version stored with different values on the
/// two sides (CONTRACT §3 copy_thread does not say which would win), and no value copied
/// onto a version the other side carries without one ([`Model::dangling`]).
fn copy_is_settled(model: &Model, source: &str, target: &str) -> bool {
    source != target
        && !model.has_orphan_writes(source)
        && !model.has_orphan_writes(target)
        && model.blobs.iter().filter(|(k, _)| k.0 == source).all(|((_, ns, ch, v), val)| {
            model.settled_value(target, ns, ch, v).is_none_or(|t| &t == val) && !model.dangling(target, ns, ch, v)
        })
        && model.checkpoints.iter().filter(|(k, _)| k.0 == source).all(|((_, ns, _), s)| {
            s.checkpoint
                .channel_versions
                .iter()
                .all(|(ch, v)| !model.dangling(source, ns, ch, v) || model.settled_value(target, ns, ch, v).is_none())
        })
}

fn filter(world: &World, model: &Model, p: u16) -> CheckpointMetadata {
    let mut f = CheckpointMetadata::new();
    // A custom key, now and then one of LangGraph's keys every checkpoint carries.
    let key =
        if p % 7 == 6 { pick(&["source".to_owned(), "step".to_owned()], p >> 4) } else { pick(&world.meta_keys, p) };
    // Half the time a value some checkpoint has, so that filters also match.
    let existing: Vec<Value> = model.checkpoints.values().filter_map(|s| s.metadata.get(&key).cloned()).collect();
    // A third of the time a value some checkpoint has, a third one confusable with it, so
    // that filters match and nearly match.
    let value = match p >> 3 & 3 {
        1 | 2 if !existing.is_empty() => {
            let v = pick(&existing, p >> 5);
            if p >> 3 & 3 == 2 {
                confusable(&v, p >> 12)
            } else {
                v
            }
        }
        _ => pick(&world.json_values, p >> 5),
    };
    f.insert(key, value);
    if p >> 9 & 1 == 1 {
        f.insert("run_id".into(), Value::String(pick(&world.run_ids, p >> 10)));
    }
    f
}

fn put(world: &World, model: &Model, thread: &str, ns: &str, id: &str, p: &[u16; 6]) -> Op {
    let smaller: Vec<&String> = world.ids.iter().filter(|i| i.as_bytes() < id.as_bytes()).collect();
    let parent =
        if p[3].is_multiple_of(3) || smaller.is_empty() { None } else { Some(pick(&smaller, p[3] >> 2).clone()) };
    let mut config = CheckpointConfig::new(thread).with_ns(ns);
    config.checkpoint_id = parent;
    let vers = &world.versions;
    let vals = values();
    // Format 4, what LangGraph's runtimes write, for a checkpoint with a parent: LangGraph's
    // savers migrate an older one on read, from its parent's writes (LangGraph JS's
    // MemorySaver adds an empty `__pregel_tasks`; docs/langgraph-savers.md J-S3). Other
    // formats on root checkpoints, where `v` only round-trips.
    let v = if config.checkpoint_id.is_some() { 4 } else { pick(&[1, 2, 4, 0], p[2] >> 4) };
    let mut checkpoint = Checkpoint { v, id: id.to_owned(), ..Checkpoint::default() };
    checkpoint.ts = pick(&["", "2024-07-01T00:00:00+00:00", "ts é"], p[2] >> 6).to_owned();
    let mut new_versions = conformance_core::ChannelVersions::new();
    for (i, ch) in world.channels.iter().enumerate() {
        let state = (p[4] >> (2 * i)) & 3;
        let version = pick(vers, p[5] >> (4 * i));
        let settled = model.settled_value(thread, ns, ch, &version);
        let state = if model.dangling(thread, ns, ch, &version) { 3 } else { state };
        match state {
            0 => continue,
            3 => {
                // Carry the channel without a value: only at a version a stored checkpoint
                // of this thread and namespace reads, or one nothing was ever stored at (or
                // whose thread was deleted): either reads one answer. Else leave it out.
                if model.version_in_use(thread, ns, ch, &version) || settled.is_none() {
                    checkpoint.channel_versions.insert(ch.clone(), version);
                }
                continue;
            }
            _ => {}
        }
        let value = match settled {
            Some(v) => v,
            None if state == 2 => None,
            None => Some(pick(vals, p[5].wrapping_add(i as u16 * 3) >> 1)),
        };
        checkpoint.channel_versions.insert(ch.clone(), version.clone());
        new_versions.insert(ch.clone(), version);
        if let Some(v) = value {
            checkpoint.channel_values.insert(ch.clone(), v);
        }
    }
    if p[1] >> 3 & 1 == 1 {
        let node = pick(&world.channels, p[1] >> 4);
        let inner = checkpoint.channel_versions.clone();
        checkpoint.versions_seen.insert(format!("node:{node}"), inner);
    }
    checkpoint.updated_channels = match p[0] >> 4 & 3 {
        0 => None,
        1 => Some(Vec::new()),
        _ => Some(new_versions.keys().cloned().collect()),
    };
    // LangGraph-shaped metadata on every put (CONTRACT §5), then custom keys of any JSON
    // value and a run id.
    let mut metadata = CheckpointMetadata::new();
    metadata.insert("source".into(), json!(pick(SOURCES, p[4] >> 8)));
    metadata.insert("step".into(), json!(i64::from(p[4] >> 10 & 3) - 1));
    let parents = if p[0] >> 10 & 1 == 1 { json!({"": pick(&world.ids, p[0] >> 11)}) } else { json!({}) };
    metadata.insert("parents".into(), parents);
    let jv = &world.json_values;
    for (i, key) in world.meta_keys.iter().enumerate() {
        if p[3] >> (4 + i) & 1 == 1 {
            metadata.insert(key.clone(), pick(jv, p[1].wrapping_add(p[2]).wrapping_add(i as u16 * 7)));
        }
    }
    match p[0] >> 7 & 3 {
        0 => {}
        n => {
            metadata.insert("run_id".into(), Value::String(pick(&world.run_ids, n)));
        }
    }
    Op::Call(Invocation::Put(Put { config, checkpoint, metadata, new_versions }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch never holds two puts of one thread and namespace (their settledness guards
    /// cannot see each other), and every serial order of a batch leaves the same state.
    #[test]
    fn batches_hold_one_put_per_place_and_are_order_free() {
        let can = Abilities { extended: [Capability::Concurrency].into_iter().collect(), reopen: true };
        let mut batches = 0;
        for seed in 0..4000u32 {
            let r = |k: u32| (seed.wrapping_mul(2_654_435_761).rotate_left(k) & 0xffff) as u16;
            let world = World::new(&[r(1), r(2), r(3), r(4), r(5), r(6), r(7), r(8)]);
            let raws: Vec<Raw> = (0..4u32)
                .map(|i| {
                    (
                        if i == 0 { 16 } else { (r(9 + i) % 9) as u8 },
                        [r(i), r(i + 3), r(i + 5), r(i + 7), r(i + 11), r(i + 13)],
                    )
                })
                .collect();
            let (op, _) = next(&raws, &world, &Model::new(), &can);
            if let Op::Concurrent { calls } = op {
                batches += 1;
                let places: Vec<_> = calls
                    .iter()
                    .filter_map(|c| match &c.op {
                        Op::Call(Invocation::Put(Put { config, .. })) => {
                            Some((config.thread_id.clone(), config.checkpoint_ns.clone()))
                        }
                        _ => None,
                    })
                    .collect();
                assert_eq!(places.len(), places.iter().collect::<BTreeSet<_>>().len(), "{calls:?}");
                assert!(order_free(&Model::new(), &calls));
            }
        }
        assert!(batches > 100, "only {batches} batches were made");
    }

    /// CONTRACT §5: every put the fuzzer makes carries LangGraph-shaped metadata (`source`
    /// one of input|loop|update|fork, an integer `step`, an object `parents`), so a saver
    /// whose typed metadata requires them is fuzzed on everything else.
    #[test]
    fn every_put_carries_langgraph_metadata() {
        let can = Abilities { extended: BTreeSet::new(), reopen: false };
        for seed in 0..2000u32 {
            let r = |k: u32| (seed.wrapping_mul(2_654_435_761).rotate_left(k) & 0xffff) as u16;
            let world = World::new(&[r(1), r(2), r(3), r(4), r(5), r(6), r(7), r(8)]);
            let raw: Raw = ((seed % 4) as u8, [r(9), r(10), r(11), r(12), r(13), r(14)]);
            let Op::Call(Invocation::Put(put)) = interpret(&raw, &world, &Model::new(), &can) else {
                panic!("kind {} is not a put", raw.0);
            };
            let md = &put.metadata;
            assert!(md.get("source").and_then(Value::as_str).is_some_and(|s| SOURCES.contains(&s)), "{md:?}");
            assert!(md.get("step").is_some_and(Value::is_i64), "{md:?}");
            assert!(md.get("parents").is_some_and(Value::is_object), "{md:?}");
        }
    }
}
