//! `concurrency` (CONTRACT §4 "Concurrency"): calls made at the same time from many tasks
//! behave as if made one after another in some order: no lost writes, no torn reads, no
//! spurious "database is locked"; for persistent savers the same holds for two instances
//! opened on the same storage (bug scenarios S18, S19).
//!
//! Every case runs on a multi-thread runtime so that the tasks it spawns really run in
//! parallel. Counts are small (at most 50 tasks) so that a case takes milliseconds against
//! an in-memory saver.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use conformance_core::{Capability, CheckpointConfig, CheckpointTuple, Failure, ListOptions, PendingWrite, TypedValue};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::cx::{describe_writes, ensure, CaseResult, Cx};
use crate::fixtures::{jv, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Concurrency => [
        #[multi_thread] put_writes_of_many_tasks_all_kept,
        #[multi_thread] put_writes_of_one_key_keep_exactly_one,
        #[multi_thread] puts_from_many_tasks_all_land,
        #[multi_thread] reader_sees_none_or_all_of_a_checkpoint,
        #[multi_thread] list_during_writes_returns_complete_tuples,
        #[multi_thread] put_and_put_writes_of_one_checkpoint_at_once,
        #[multi_thread] two_instances_write_at_once,
    ])
}

/// How many tasks write at once in the many-writer cases (S18 uses 50).
const WRITERS: usize = 50;

/// A step whose every part says which step it is: `channels` channels `{tag}.c00`,
/// `{tag}.c01`, ..., each a new JSON value naming `tag`, `i` and the channel at version
/// `i + 1`; a `versions_seen` entry; metadata with `step = i`, `tag`, `i` and a nested
/// value. A reader can tell a complete copy from a partial one with [`tuple_difference`].
/// Steps of different tags on one thread use different channels, so their values never
/// share a (channel, version) key.
pub(crate) fn rich_step(tag: &str, i: usize, channels: usize) -> Step {
    let mut step = Step::fresh()
        .meta("step", json!(i))
        .meta("tag", json!(tag))
        .meta("i", json!(i))
        .meta("nested", json!({"list": [i, "é✓", null, true, 1.5], "obj": {"tag": tag}}))
        .seen("node", &format!("{tag}.c00"), i as i64);
    for c in 0..channels {
        let value = json!({"tag": tag, "i": i, "c": c, "pad": "x".repeat(48)});
        step = step.value(&format!("{tag}.c{c:02}"), value, i as i64 + 1);
    }
    step
}

/// The first way the checkpoint and metadata of `got` differ from what `step` put (every
/// channel of `step` must be in `new_versions`), or `None` when they match.
pub(crate) fn tuple_difference(got: &CheckpointTuple, step: &Step) -> Option<String> {
    let want = &step.checkpoint;
    let have = &*got.checkpoint;
    if have.id != want.id {
        return Some(format!("checkpoint.id: expected {}, got {}", want.id, have.id));
    }
    let missing: Vec<&String> = want.channel_values.keys().filter(|k| !have.channel_values.contains_key(*k)).collect();
    let extra: Vec<&String> = have.channel_values.keys().filter(|k| !want.channel_values.contains_key(*k)).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Some(format!(
            "checkpoint.channel_values has {} of {} channels (missing {missing:?}, unexpected {extra:?})",
            have.channel_values.len() - extra.len(),
            want.channel_values.len()
        ));
    }
    for (ch, v) in &want.channel_values {
        if have.channel_values.get(ch) != Some(v) {
            return Some(format!(
                "checkpoint.channel_values[{ch}]: expected {v:?}, got {:?}",
                have.channel_values.get(ch)
            ));
        }
    }
    if have.channel_versions != want.channel_versions {
        return Some(format!(
            "checkpoint.channel_versions: expected {:?}, got {:?}",
            want.channel_versions, have.channel_versions
        ));
    }
    if have.versions_seen != want.versions_seen {
        return Some(format!(
            "checkpoint.versions_seen: expected {:?}, got {:?}",
            want.versions_seen, have.versions_seen
        ));
    }
    if (have.v, &have.ts, &have.updated_channels) != (want.v, &want.ts, &want.updated_channels) {
        return Some(format!(
            "checkpoint (v, ts, updated_channels): expected ({}, {:?}, {:?}), got ({}, {:?}, {:?})",
            want.v, want.ts, want.updated_channels, have.v, have.ts, have.updated_channels
        ));
    }
    if got.metadata != step.metadata {
        return Some(format!(
            "metadata: expected {}, got {}",
            serde_json::Value::Object(step.metadata.clone()),
            serde_json::Value::Object(got.metadata.clone())
        ));
    }
    None
}

/// A pending write of `task_id` (empty task path) on `channel`.
pub(crate) fn pending(task_id: &str, channel: &str, value: TypedValue) -> PendingWrite {
    PendingWrite { task_id: task_id.to_owned(), task_path: String::new(), channel: channel.to_owned(), value }
}

/// Awaits every task and returns their results in order, or the first failure (a task
/// that panicked fails with its panic message).
pub(crate) async fn join_tasks<T: Send + 'static>(
    what: &str,
    handles: Vec<JoinHandle<Result<T, Failure>>>,
) -> Result<Vec<T>, Failure> {
    let mut out = Vec::with_capacity(handles.len());
    let mut first: Option<Failure> = None;
    for h in handles {
        match h.await {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(f)) => {
                first.get_or_insert(f);
            }
            Err(e) => {
                first.get_or_insert(Failure::new(format!("{what}: a task did not finish: {e}")));
            }
        }
    }
    match first {
        Some(f) => Err(f),
        None => Ok(out),
    }
}

/// S18: 50 tasks each call `put_writes(c1, [("ch", i)], task-i)` at once; all 50 writes
/// are kept (a read-modify-write of the writes without a lock loses some).
async fn put_writes_of_many_tasks_all_kept(cx: Cx) -> CaseResult {
    let cfg = cx.put(&cx.config("s18"), Step::fresh().value("a", json!(0), 1)).await?;
    let handles = (0..WRITERS)
        .map(|i| {
            let (cx, cfg) = (cx.clone(), cfg.clone());
            tokio::spawn(
                async move { cx.put_writes(&cfg, vec![("ch", jv(json!(i)))], &format!("task-{i:02}"), "").await },
            )
        })
        .collect();
    join_tasks("concurrent put_writes", handles).await?;
    let got = cx.get_some(&cfg).await?.pending_writes;
    let want: Vec<PendingWrite> = (0..WRITERS).map(|i| pending(&format!("task-{i:02}"), "ch", jv(json!(i)))).collect();
    let missing: Vec<&str> = want.iter().filter(|w| !got.contains(w)).map(|w| w.task_id.as_str()).collect();
    ensure(got == want, || {
        format!(
            "get_tuple({cfg}) after {WRITERS} concurrent put_writes(channel \"ch\", task-i, value i): expected \
             {WRITERS} pending writes, got {} (lost: {missing:?}); got {}",
            got.len(),
            describe_writes(&got)
        )
    })
}

/// 50 tasks write the same (task, channel) at once with different values: exactly one
/// write is kept, its value is one of the 50 byte for byte (never a mix), and it stays:
/// a later write of the same key is a no-op (first wins, CONTRACT §2 put_writes).
async fn put_writes_of_one_key_keep_exactly_one(cx: Cx) -> CaseResult {
    let cfg = cx.put(&cx.config("same-key"), Step::fresh().value("a", json!(0), 1)).await?;
    let value = |i: usize| jv(json!({"writer": i, "pad": format!("{i:03}").repeat(100 + i)}));
    let handles = (0..WRITERS)
        .map(|i| {
            let (cx, cfg, v) = (cx.clone(), cfg.clone(), value(i));
            tokio::spawn(async move { cx.put_writes(&cfg, vec![("ch", v)], "task", "").await })
        })
        .collect();
    join_tasks("concurrent put_writes of one key", handles).await?;
    let got = cx.get_some(&cfg).await?.pending_writes;
    let call = format!("get_tuple({cfg}) after {WRITERS} concurrent put_writes(channel \"ch\", task \"task\")");
    ensure(got.len() == 1, || format!("{call}: expected exactly 1 pending write, got {}", got.len()))?;
    let kept = &got[0];
    ensure(kept.task_id == "task" && kept.channel == "ch", || {
        format!("{call}: expected the write of task \"task\" on \"ch\", got {}", describe_writes(&got))
    })?;
    ensure((0..WRITERS).any(|i| kept.value == value(i)), || {
        format!("{call}: the kept value is none of the {WRITERS} values written (torn?): {:?}", kept.value)
    })?;
    cx.put_writes(&cfg, vec![("ch", jv(json!("late")))], "task", "").await?;
    let again = cx.get_some(&cfg).await?.pending_writes;
    ensure(again == got, || {
        format!(
            "get_tuple({cfg}) after one more put_writes of the same key: expected the first kept write {} \
             (first wins), got {}",
            describe_writes(&got),
            describe_writes(&again)
        )
    })
}

/// 8 tasks put 6 checkpoints each at once, half of them on their own thread and half on one
/// shared thread; every checkpoint lands, complete, and `list` of the shared thread shows
/// all of its checkpoints.
async fn puts_from_many_tasks_all_land(cx: Cx) -> CaseResult {
    const TASKS: usize = 8;
    const PUTS: usize = 6;
    let shared = cx.thread("shared");
    type Stored = Vec<(CheckpointConfig, Step)>;
    let handles: Vec<JoinHandle<Result<Stored, Failure>>> = (0..TASKS)
        .map(|t| {
            let cx = cx.clone();
            let thread = if t % 2 == 0 { shared.clone() } else { cx.thread(&format!("own{t}")) };
            tokio::spawn(async move {
                let mut parent = CheckpointConfig::new(thread);
                let mut stored = Vec::with_capacity(PUTS);
                for i in 0..PUTS {
                    let step = rich_step(&format!("task{t}"), i, 4);
                    parent = cx.put(&parent, step.clone()).await?;
                    stored.push((parent.clone(), step));
                }
                Ok(stored)
            })
        })
        .collect();
    let stored: Vec<(CheckpointConfig, Step)> =
        join_tasks("concurrent puts", handles).await?.into_iter().flatten().collect();
    for (cfg, step) in &stored {
        let t = cx.get_some(cfg).await?;
        if let Some(d) = tuple_difference(&t, step) {
            return Err(Failure::new(format!("get_tuple({cfg}) after concurrent puts: {d}")));
        }
    }
    let want: BTreeSet<String> =
        stored.iter().filter(|(c, _)| c.thread_id == shared).filter_map(|(c, _)| c.checkpoint_id.clone()).collect();
    let listed = cx.list_ids(&shared, &ListOptions::all()).await?;
    let got: BTreeSet<String> = listed.iter().cloned().collect();
    let missing: Vec<&String> = want.difference(&got).collect();
    ensure(got == want && listed.len() == want.len(), || {
        format!(
            "list(thread={shared}) after {} tasks put {PUTS} checkpoints each on it at once: expected {} ids, \
             got {} (missing {missing:?})",
            TASKS / 2,
            want.len(),
            listed.len()
        )
    })
}

/// S18: while one task puts a chain of checkpoints with 16 channels each, three readers poll
/// `get_tuple` of the checkpoint being put and of the latest one: each read is none or the
/// whole checkpoint (every channel value, versions, metadata, parent), never part of it.
async fn reader_sees_none_or_all_of_a_checkpoint(cx: Cx) -> CaseResult {
    const STEPS: usize = 40;
    let base = cx.config("torn");
    let steps: Arc<Vec<Step>> = Arc::new((0..STEPS).map(|i| rich_step("torn", i, 16)).collect());
    let current = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<JoinHandle<Result<usize, Failure>>> = (0..3)
        .map(|_| {
            let (cx, base, steps, current, done) =
                (cx.clone(), base.clone(), steps.clone(), current.clone(), done.clone());
            tokio::spawn(async move {
                let mut reads = 0usize;
                let check = |cfg: &CheckpointConfig, t: &CheckpointTuple| -> CaseResult {
                    let Some(i) = steps.iter().position(|s| s.id() == t.checkpoint.id) else {
                        return Err(Failure::new(format!(
                            "get_tuple({cfg}) while checkpoints were being put: returned checkpoint {} that was \
                             never put",
                            t.checkpoint.id
                        )));
                    };
                    let parent = (i > 0).then(|| base.clone().with_id(steps[i - 1].id()));
                    let diff = tuple_difference(t, &steps[i]).or_else(|| {
                        (t.parent_config != parent)
                            .then(|| format!("parent_config: expected {parent:?}, got {:?}", t.parent_config))
                    });
                    match diff {
                        None => Ok(()),
                        Some(d) => Err(Failure::new(format!(
                            "get_tuple({cfg}) while checkpoint {} was being put: returned part of it: {d}",
                            t.checkpoint.id
                        ))),
                    }
                };
                while !done.load(Ordering::Acquire) {
                    let i = current.load(Ordering::Acquire);
                    for cfg in [base.clone().with_id(steps[i].id()), base.clone()] {
                        if let Some(t) = cx.get(&cfg).await? {
                            check(&cfg, &t)?;
                        }
                        reads += 1;
                    }
                    tokio::task::yield_now().await;
                }
                Ok(reads)
            })
        })
        .collect();
    let writer = {
        let (cx, base, steps, current, done) = (cx.clone(), base.clone(), steps.clone(), current.clone(), done.clone());
        tokio::spawn(async move {
            let mut parent = base;
            let mut result = Ok(());
            for (i, step) in steps.iter().enumerate() {
                current.store(i, Ordering::Release);
                match cx.put(&parent, step.clone()).await {
                    Ok(c) => parent = c,
                    Err(f) => {
                        result = Err(f);
                        break;
                    }
                }
                tokio::task::yield_now().await;
            }
            done.store(true, Ordering::Release);
            result
        })
    };
    let writer = join_tasks("the writer", vec![writer]).await;
    done.store(true, Ordering::Release);
    join_tasks("the readers", readers).await?;
    writer?;
    Ok(())
}

/// S18 for `list`: while one task puts checkpoints (8 channels each) and then 3 writes for
/// each, readers call `list` on the thread; every tuple listed is complete (values,
/// versions, metadata, parent) and its pending writes are none or all 3.
async fn list_during_writes_returns_complete_tuples(cx: Cx) -> CaseResult {
    const STEPS: usize = 16;
    let thread = cx.thread("list-torn");
    let base = CheckpointConfig::new(thread.clone());
    let steps: Arc<Vec<Step>> = Arc::new((0..STEPS).map(|i| rich_step("list", i, 8)).collect());
    let writes_of = |i: usize| -> Vec<(&'static str, TypedValue)> {
        vec![("w0", jv(json!({"i": i, "w": 0}))), ("w1", jv(json!({"i": i, "w": 1}))), ("w2", jv(json!([i, "x"])))]
    };
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<JoinHandle<Result<(), Failure>>> = (0..2)
        .map(|_| {
            let (cx, thread, base, steps, done) =
                (cx.clone(), thread.clone(), base.clone(), steps.clone(), done.clone());
            tokio::spawn(async move {
                let call = format!("list(thread={thread}) while checkpoints and writes were being put");
                while !done.load(Ordering::Acquire) {
                    for t in cx.list(&thread, &ListOptions::all()).await? {
                        let Some(i) = steps.iter().position(|s| s.id() == t.checkpoint.id) else {
                            return Err(Failure::new(format!(
                                "{call}: listed checkpoint {} that was never put",
                                t.config
                            )));
                        };
                        let parent = (i > 0).then(|| base.clone().with_id(steps[i - 1].id()));
                        let want_writes: Vec<PendingWrite> =
                            writes_of(i).into_iter().map(|(ch, v)| pending("task", ch, v)).collect();
                        let diff = tuple_difference(&t, &steps[i])
                            .or_else(|| {
                                (t.parent_config != parent)
                                    .then(|| format!("parent_config: expected {parent:?}, got {:?}", t.parent_config))
                            })
                            .or_else(|| {
                                (!t.pending_writes.is_empty() && t.pending_writes != want_writes).then(|| {
                                    format!(
                                        "pending_writes: expected none or all of {}, got {}",
                                        describe_writes(&want_writes),
                                        describe_writes(&t.pending_writes)
                                    )
                                })
                            });
                        if let Some(d) = diff {
                            return Err(Failure::new(format!("{call}: tuple {} is incomplete: {d}", t.config)));
                        }
                    }
                    tokio::task::yield_now().await;
                }
                Ok(())
            })
        })
        .collect();
    let writer = {
        let (cx, steps, done) = (cx.clone(), steps.clone(), done.clone());
        tokio::spawn(async move {
            let run = async {
                let mut parent = base;
                for (i, step) in steps.iter().enumerate() {
                    parent = cx.put(&parent, step.clone()).await?;
                    cx.put_writes(&parent, writes_of(i), "task", "").await?;
                }
                Ok(())
            };
            let r = run.await;
            done.store(true, Ordering::Release);
            r
        })
    };
    let writer = join_tasks("the writer", vec![writer]).await;
    done.store(true, Ordering::Release);
    join_tasks("the readers", readers).await?;
    writer?;
    let listed = cx.list(&thread, &ListOptions::all()).await?;
    ensure(listed.len() == STEPS, || {
        format!("list(thread={thread}) after the writer finished: expected {STEPS} tuples, got {}", listed.len())
    })
}

/// `put` of a checkpoint and 4 `put_writes` for it run at once, for 8 checkpoints of one
/// thread at the same time: afterwards each checkpoint is complete and has all 8 writes
/// (writes that arrive before their checkpoint are kept, CONTRACT §2 put_writes).
async fn put_and_put_writes_of_one_checkpoint_at_once(cx: Cx) -> CaseResult {
    const CHECKPOINTS: usize = 8;
    const TASKS: usize = 4;
    let base = cx.config("put-and-writes");
    let steps: Vec<Step> = (0..CHECKPOINTS).map(|i| rich_step("pw", i, 4)).collect();
    let writes_of = |i: usize, t: usize| -> Vec<(&'static str, TypedValue)> {
        vec![("a", jv(json!({"i": i, "t": t}))), ("b", jv(json!([i, t])))]
    };
    let mut handles: Vec<JoinHandle<Result<(), Failure>>> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let (cx2, base2, step) = (cx.clone(), base.clone(), step.clone());
        handles.push(tokio::spawn(async move { cx2.put(&base2, step).await.map(|_| ()) }));
        for t in 0..TASKS {
            let (cx2, cfg) = (cx.clone(), base.clone().with_id(steps[i].id()));
            let writes = writes_of(i, t);
            handles.push(tokio::spawn(async move { cx2.put_writes(&cfg, writes, &format!("task-{t}"), "").await }));
        }
    }
    join_tasks("concurrent put and put_writes", handles).await?;
    for (i, step) in steps.iter().enumerate() {
        let cfg = base.clone().with_id(step.id());
        let t = cx.get_some(&cfg).await?;
        if let Some(d) = tuple_difference(&t, step) {
            return Err(Failure::new(format!("get_tuple({cfg}) after its put raced with its put_writes: {d}")));
        }
        let want: Vec<PendingWrite> = (0..TASKS)
            .flat_map(|t| writes_of(i, t).into_iter().map(move |(ch, v)| pending(&format!("task-{t}"), ch, v)))
            .collect();
        ensure(t.pending_writes == want, || {
            format!(
                "get_tuple({cfg}) after its put raced with {TASKS} put_writes: pending_writes: expected {}, got {}",
                describe_writes(&want),
                describe_writes(&t.pending_writes)
            )
        })?;
    }
    Ok(())
}

/// S19 (persistent savers; passes trivially when the registration cannot open a second
/// instance): two instances are opened on the same storage at the same time, then both
/// write at once (10 tasks each: a checkpoint on a shared thread and a write on a shared
/// checkpoint); no call fails (no "database is locked" escapes) and every acknowledged
/// checkpoint and write is visible through both instances and the first one.
async fn two_instances_write_at_once(cx: Cx) -> CaseResult {
    const TASKS: usize = 10;
    if !cx.ctx.can_reopen() {
        return Ok(());
    }
    let thread = cx.thread("two");
    let shared = cx.put(&CheckpointConfig::new(thread.clone()), rich_step("two", 0, 2)).await?;
    let (a, b) = tokio::join!(cx.ctx.reopen(), cx.ctx.reopen());
    let instances = [Cx { saver: a?, ..cx.clone() }, Cx { saver: b?, ..cx.clone() }];
    let mut handles: Vec<JoinHandle<Result<(CheckpointConfig, Step), Failure>>> = Vec::new();
    for (n, inst) in instances.iter().enumerate() {
        for k in 0..TASKS {
            let (inst, shared) = (inst.clone(), shared.clone());
            let step = rich_step(&format!("inst{n}"), k + 1, 2);
            handles.push(tokio::spawn(async move {
                let stored = inst.put(&shared, step.clone()).await.map_err(|f| {
                    Failure::new(format!("instance {} of 2 on the same storage, writing at once: {f}", n + 1))
                })?;
                inst.put_writes(&shared, vec![("ch", jv(json!([n, k])))], &format!("inst{n}-task{k:02}"), "")
                    .await
                    .map_err(|f| {
                        Failure::new(format!("instance {} of 2 on the same storage, writing at once: {f}", n + 1))
                    })?;
                Ok((stored, step))
            }));
        }
    }
    let stored = join_tasks("two instances writing at once", handles).await?;
    let want_writes: BTreeMap<String, PendingWrite> = (0..2)
        .flat_map(|n| {
            (0..TASKS).map(move |k| {
                let task = format!("inst{n}-task{k:02}");
                (task.clone(), pending(&task, "ch", jv(json!([n, k]))))
            })
        })
        .collect();
    let want_writes: Vec<PendingWrite> = want_writes.into_values().collect();
    for (name, reader) in [("the first instance", &cx), ("instance 1", &instances[0]), ("instance 2", &instances[1])] {
        let got = reader.get_some(&shared).await?.pending_writes;
        ensure(got == want_writes, || {
            format!(
                "get_tuple({shared}) through {name} after two instances wrote at once: pending_writes: expected {} \
                 writes, got {}: {}",
                want_writes.len(),
                got.len(),
                describe_writes(&got)
            )
        })?;
        for (cfg, step) in &stored {
            let t = reader.get_some(cfg).await.map_err(|f| Failure::new(format!("through {name}: {f}")))?;
            if let Some(d) = tuple_difference(&t, step) {
                return Err(Failure::new(format!(
                    "get_tuple({cfg}) through {name} after two instances wrote at once: {d}"
                )));
            }
        }
    }
    Ok(())
}
