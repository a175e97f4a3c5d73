//! `concurrency` (CONTRACT §4 "Concurrency"): calls made at the same time from many tasks
//! behave as if made one after another in some order: no lost writes, no torn reads, no
//! spurious "database is locked"; for persistent savers the same holds for two instances
//! opened on the same storage (bug scenarios S18, S19).
//!
//! Every case runs on a multi-thread runtime so that the tasks it spawns really run in
//! parallel. Counts are small (at most 50 tasks) so that a case takes milliseconds against
//! an in-memory saver.

use std::collections::BTreeMap;

use conformance_core::{Capability, CheckpointConfig, Failure, ListOptions, PendingWrite, TypedValue, ERROR};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::calls::Cx;
use crate::compare::{describe_writes, ensure, Checked, Diffs};
use crate::data::{jv, new_ids, pending, rich_step, Step};

mod readers;
use readers::{list_during_writes_returns_complete_tuples, reader_sees_none_or_all_of_a_checkpoint};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Concurrency, needs [Put, PutWrites, GetTuple] => [
        #[rules(concurrency.serial)] #[multi_thread] put_writes_of_many_tasks_all_kept,
        #[rules(concurrency.serial, put_writes.regular_first)] #[multi_thread] put_writes_of_one_key_keep_exactly_one,
        #[rules(concurrency.serial, put_writes.per_write)] #[multi_thread] mixed_put_writes_of_one_task_follow_a_serial_order,
        #[rules(concurrency.serial)] #[multi_thread] puts_from_many_tasks_all_land +[List] -[PutWrites],
        #[rules(concurrency.serial)] #[multi_thread] reader_sees_none_or_all_of_a_checkpoint -[PutWrites],
        #[rules(concurrency.serial)] #[multi_thread] list_during_writes_returns_complete_tuples +[List] -[GetTuple],
        #[rules(concurrency.serial, put_writes.early)] #[multi_thread] put_and_put_writes_of_one_checkpoint_at_once,
        #[rules(concurrency.two_instances)] #[multi_thread] two_instances_write_at_once,
        #[rules(concurrency.serial, get_tuple.latest)] #[multi_thread] latest_is_greatest_id_under_concurrent_puts +[List] -[PutWrites],
    ])
}

/// How many tasks write at once in the many-writer cases (S18 uses 50).
const WRITERS: usize = 50;

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

/// The verdict of a writer racing readers: the readers' failure, followed by the writer's
/// error when it failed too (a partial write seen by a reader is then what the failed call
/// left behind, and the message says so); else the writer's error; else `Ok`.
pub(crate) fn writer_and_readers<W, R>(writer: Result<W, Failure>, readers: Result<R, Failure>) -> Checked {
    match (writer, readers) {
        (Err(w), Err(r)) => Err(Failure::new(format!(
            "{}
(the writer had failed: {}; a failed call must leave nothing behind, CONTRACT §4)",
            r.message, w.message
        ))),
        (Err(f), Ok(_)) | (Ok(_), Err(f)) => Err(f),
        (Ok(_), Ok(_)) => Ok(()),
    }
}

/// S18: 50 tasks each call `put_writes(c1, [("ch", i)], task-i)` at once; all 50 writes
/// are kept (a read-modify-write of the writes without a lock loses some).
async fn put_writes_of_many_tasks_all_kept(cx: Cx) -> Checked {
    let cfg = cx.put(&cx.config("s18"), Step::fresh().value("a", json!(0), 1)).await?;
    let handles = (0..WRITERS)
        .map(|i| {
            let (cx, cfg) = (cx.clone(), cfg.clone());
            crate::compare::spawn(async move {
                cx.put_writes(&cfg, vec![("ch", jv(json!(i)))], &format!("task-{i:02}"), "").await
            })
        })
        .collect();
    join_tasks("concurrent put_writes", handles).await?;
    let got = cx
        .after(format!("after {WRITERS} concurrent put_writes(channel \"ch\", task-i, value i)"))
        .get_some(&cfg)
        .await?;
    let want: Vec<PendingWrite> =
        (0..WRITERS).map(|i| pending(&format!("task-{i:02}"), "", "ch", jv(json!(i)))).collect();
    // One comparator (Diffs::writes): a wrong order of all 50 says so, other values show.
    got.diffs().writes("pending_writes", &want, &got.pending_writes).finish()
}

/// 50 tasks write the same (task, channel) at once with different values: exactly one
/// write is kept, its value is one of the 50 byte for byte (never a mix), and it stays:
/// a later write of the same key is a no-op (first wins, CONTRACT §2 put_writes).
async fn put_writes_of_one_key_keep_exactly_one(cx: Cx) -> Checked {
    let cfg = cx.put(&cx.config("same-key"), Step::fresh().value("a", json!(0), 1)).await?;
    let value = |i: usize| jv(json!({"writer": i, "pad": format!("{i:03}").repeat(100 + i)}));
    let handles = (0..WRITERS)
        .map(|i| {
            let (cx, cfg, v) = (cx.clone(), cfg.clone(), value(i));
            crate::compare::spawn(async move { cx.put_writes(&cfg, vec![("ch", v)], "task", "").await })
        })
        .collect();
    join_tasks("concurrent put_writes of one key", handles).await?;
    let after = cx.after(format!("after {WRITERS} concurrent put_writes(channel \"ch\", task \"task\")"));
    let got = after.get_some(&cfg).await?;
    let writes = &got.pending_writes;
    ensure(writes.len() == 1, || format!("{got}: expected exactly 1 pending write, got {}", writes.len()))?;
    let kept = &writes[0];
    ensure(kept.task_id == "task" && kept.channel == "ch", || {
        format!("{got}: expected the write of task \"task\" on \"ch\", got {}", describe_writes(writes))
    })?;
    ensure((0..WRITERS).any(|i| kept.value == value(i)), || {
        format!("{got}: the kept value is none of the {WRITERS} values written (a mix of the concurrent writes, or not what any writer put): {:?}", kept.value)
    })?;
    cx.put_writes(&cfg, vec![("ch", jv(json!("late")))], "task", "").await?;
    let again = cx.after("after one more put_writes of the same key").get_some(&cfg).await?;
    ensure(again.pending_writes == *writes, || {
        format!(
            "{again}: expected the first kept write {} (first wins), got {}",
            describe_writes(writes),
            describe_writes(&again.pending_writes)
        )
    })
}

/// CONTRACT §4 "Concurrency" with §2 put_writes (regular writes: first wins; special
/// writes: last wins; decided per write). Two calls of one task on one checkpoint,
/// `A = [("x", a), ("__error__", a)]` and `B = [("x", b), ("__error__", b)]`, made at the
/// same time, must end as one of the two serial orders:
///
/// | order  | `x` (index 0, first wins) | `__error__` (index -1, last wins) |
/// |--------|---------------------------|-----------------------------------|
/// | A, B   | a                         | b                                 |
/// | B, A   | b                         | a                                 |
///
/// So (`x`, `__error__`) is (a, b) or (b, a), never (a, a) or (b, b): those need one call's
/// special write to land after the other call's, while its regular write landed first,
/// which a saver that stores a call's regular writes and then, in a second step, its
/// special ones allows. Repeated on 20 checkpoints at once (40 calls).
async fn mixed_put_writes_of_one_task_follow_a_serial_order(cx: Cx) -> Checked {
    const ROUNDS: usize = 20;
    let base = cx.config("mixed");
    let value = |call: &str, r: usize| jv(json!({"call": call, "round": r}));
    let mut configs = Vec::with_capacity(ROUNDS);
    for r in 0..ROUNDS {
        configs.push(cx.put(&base, Step::fresh().value("a", json!(r), 1)).await?);
    }
    let mut handles: Vec<JoinHandle<Result<(), Failure>>> = Vec::new();
    for (r, cfg) in configs.iter().enumerate() {
        for call in ["a", "b"] {
            let (cx, cfg, v) = (cx.clone(), cfg.clone(), value(call, r));
            handles.push(crate::compare::spawn(async move {
                cx.put_writes(&cfg, vec![("x", v.clone()), (ERROR, v)], "T", "").await
            }));
        }
    }
    join_tasks("concurrent mixed put_writes of one task", handles).await?;
    for (r, cfg) in configs.iter().enumerate() {
        let (a, b) = (value("a", r), value("b", r));
        // get_tuple order: __error__ (index -1) before x (index 0).
        let allowed = [
            ("A then B: x = a, __error__ = b", [pending("T", "", ERROR, b.clone()), pending("T", "", "x", a.clone())]),
            ("B then A: x = b, __error__ = a", [pending("T", "", ERROR, a.clone()), pending("T", "", "x", b.clone())]),
        ];
        let got = cx.get_some(cfg).await?;
        ensure(allowed.iter().any(|(_, w)| *w == *got.pending_writes), || {
            format!(
                "{got} after put_writes(x=a, __error__=a) and put_writes(x=b, __error__=b) of task \"T\" ran at \
                 once (a = {:?}, b = {:?}): expected the result of a serial order, one of [{}], got {} (regular \
                 writes: first wins; special writes: last wins)",
                a,
                b,
                allowed.iter().map(|(o, w)| format!("{o}: {}", describe_writes(w))).collect::<Vec<_>>().join("; "),
                describe_writes(&got.pending_writes)
            )
        })?;
    }
    Ok(())
}

/// 8 tasks put 6 checkpoints each at once, half of them on their own thread and half on one
/// shared thread; every checkpoint lands, complete, and `list` of the shared thread shows
/// all of its checkpoints.
async fn puts_from_many_tasks_all_land(cx: Cx) -> Checked {
    const TASKS: usize = 8;
    const PUTS: usize = 6;
    let shared = cx.thread("shared");
    type Stored = Vec<(CheckpointConfig, Step)>;
    let handles: Vec<JoinHandle<Result<Stored, Failure>>> = (0..TASKS)
        .map(|t| {
            let cx = cx.clone();
            let thread = if t % 2 == 0 { shared.clone() } else { cx.thread(&format!("own{t}")) };
            crate::compare::spawn(async move {
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
    let after = cx.after("after concurrent puts");
    let mut d = Diffs::new();
    for (cfg, step) in &stored {
        let t = after.get_some(cfg).await?;
        d.of(&t).step(step, &t);
    }
    d.finish()?;
    // Every checkpoint of the shared thread, newest id first (list's order).
    let mut want: Vec<&str> =
        stored.iter().filter(|(c, _)| c.thread_id == shared).filter_map(|(c, _)| c.checkpoint_id.as_deref()).collect();
    want.sort_unstable_by(|a, b| b.cmp(a));
    cx.after(format!("after {} tasks put {PUTS} checkpoints each on it at once", TASKS / 2))
        .expect_ids(&shared, &ListOptions::all(), &want)
        .await
}

/// `put` of a checkpoint and 4 `put_writes` for it run at once, for 8 checkpoints of one
/// thread at the same time: afterwards each checkpoint is complete and has all 8 writes
/// (writes that arrive before their checkpoint are kept, CONTRACT §2 put_writes).
async fn put_and_put_writes_of_one_checkpoint_at_once(cx: Cx) -> Checked {
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
        handles.push(crate::compare::spawn(async move { cx2.put(&base2, step).await.map(|_| ()) }));
        for t in 0..TASKS {
            let (cx2, cfg) = (cx.clone(), base.clone().with_id(steps[i].id()));
            let writes = writes_of(i, t);
            handles.push(crate::compare::spawn(
                async move { cx2.put_writes(&cfg, writes, &format!("task-{t}"), "").await },
            ));
        }
    }
    join_tasks("concurrent put and put_writes", handles).await?;
    let after = cx.after(format!("after its put raced with {TASKS} put_writes"));
    let mut d = Diffs::new();
    for (i, step) in steps.iter().enumerate() {
        let t = after.get_some(&base.clone().with_id(step.id())).await?;
        let want: Vec<PendingWrite> = (0..TASKS)
            .flat_map(|t| writes_of(i, t).into_iter().map(move |(ch, v)| pending(&format!("task-{t}"), "", ch, v)))
            .collect();
        d.of(&t).step(step, &t).writes("pending_writes", &want, &t.pending_writes);
    }
    d.finish()
}

/// S19 (persistent savers; passes trivially when the registration cannot open a second
/// instance): two instances are opened on the same storage at the same time, then both
/// write at once (10 tasks each: a checkpoint on a shared thread and a write on a shared
/// checkpoint); no call fails (no "database is locked" escapes) and every acknowledged
/// checkpoint and write is visible through both instances and the first one.
async fn two_instances_write_at_once(cx: Cx) -> Checked {
    const TASKS: usize = 10;
    if !cx.can_reopen() {
        return Ok(());
    }
    let thread = cx.thread("two");
    let shared = cx.put(&CheckpointConfig::new(thread.clone()), rich_step("two", 0, 2)).await?;
    let (a, b) = tokio::join!(cx.reopen(), cx.reopen());
    let instances = [
        cx.through(a?, "instance 1 of 2 on the same storage, writing at once"),
        cx.through(b?, "instance 2 of 2 on the same storage, writing at once"),
    ];
    let mut handles: Vec<JoinHandle<Result<(CheckpointConfig, Step), Failure>>> = Vec::new();
    for (n, inst) in instances.iter().enumerate() {
        for k in 0..TASKS {
            let (inst, shared) = (inst.clone(), shared.clone());
            let step = rich_step(&format!("inst{n}"), k + 1, 2);
            handles.push(crate::compare::spawn(async move {
                let stored = inst.put(&shared, step.clone()).await?;
                inst.put_writes(&shared, vec![("ch", jv(json!([n, k])))], &format!("inst{n}-task{k:02}"), "").await?;
                Ok((stored, step))
            }));
        }
    }
    let stored = join_tasks("two instances writing at once", handles).await?;
    let want_writes: BTreeMap<String, PendingWrite> = (0..2)
        .flat_map(|n| {
            (0..TASKS).map(move |k| {
                let task = format!("inst{n}-task{k:02}");
                (task.clone(), pending(&task, "", "ch", jv(json!([n, k]))))
            })
        })
        .collect();
    let want_writes: Vec<PendingWrite> = want_writes.into_values().collect();
    let [one, two] = instances;
    for reader in [cx.after("through the first instance"), one, two] {
        let reader = reader.after("after two instances wrote at once");
        let got = reader.get_some(&shared).await?;
        let mut d = got.diffs();
        d.writes("pending_writes", &want_writes, &got.pending_writes);
        for (cfg, step) in &stored {
            let t = reader.get_some(cfg).await?;
            d.of(&t).step(step, &t);
        }
        d.finish()?;
    }
    Ok(())
}

#[cfg(test)]
mod verdict_tests {
    use super::writer_and_readers;
    use conformance_core::Failure;

    #[test]
    fn a_readers_failure_shows_the_writers_error_too() {
        let w: Result<(), Failure> = Err(Failure::new("put_writes(…): returned error Storage: disk full"));
        let r: Result<(), Failure> = Err(Failure::new("list(…): tuple (…) is incomplete"));
        let m = writer_and_readers(w, r).unwrap_err().message;
        assert!(m.starts_with("list(…): tuple (…) is incomplete\n(the writer had failed: put_writes"), "{m}");
        let w: Result<(), Failure> = Err(Failure::new("disk full"));
        assert_eq!(writer_and_readers(w, Ok::<(), Failure>(())).unwrap_err().message, "disk full");
        assert!(writer_and_readers(Ok::<(), Failure>(()), Ok::<(), Failure>(())).is_ok());
    }
}

/// CONTRACT §2 get_tuple ("without it: the greatest id") under §4 Concurrency: 16 puts of
/// one thread, started at once greatest id first (so the ids arrive out of order), then
/// `get_tuple` without an id gives the greatest id and `list` starts with it; three rounds,
/// each on a thread of its own.
async fn latest_is_greatest_id_under_concurrent_puts(cx: Cx) -> Checked {
    const PUTS: usize = 16;
    for round in 0..3 {
        let thread = cx.thread(&format!("latest{round}"));
        let ids = new_ids(PUTS);
        let handles: Vec<JoinHandle<Result<(), Failure>>> = ids
            .iter()
            .rev()
            .map(|id| {
                let (cx, cfg, step) = (cx.clone(), CheckpointConfig::new(&thread), Step::new(id));
                crate::compare::spawn(async move { cx.put(&cfg, step).await.map(drop) })
            })
            .collect();
        join_tasks("concurrent puts", handles).await?;
        let after = cx.after(format!("after {PUTS} puts at once, started greatest id first (round {round})"));
        let latest = after.get_some(&CheckpointConfig::new(&thread)).await?;
        latest.diffs().eq("checkpoint.id (the greatest put)", &ids[PUTS - 1], &latest.checkpoint.id).finish()?;
        after.expect_ids(&thread, &ListOptions::all().limit(1), &[&ids[PUTS - 1]]).await?;
    }
    Ok(())
}
