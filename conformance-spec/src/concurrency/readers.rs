//! `concurrency` readers (CONTRACT §4 "Concurrency", S18): a read that races a writer sees
//! none or all of a checkpoint. A read that differs is read again once the put of that
//! checkpoint has returned: what still differs then was not stored as put (and is said so,
//! with the difference); only a read that differs while a later read is whole was torn.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use conformance_core::{CheckpointConfig, CheckpointTuple, Failure, PendingWrite, TypedValue};
use serde_json::json;
use tokio::task::JoinHandle;

use super::{join_tasks, writer_and_readers};
use crate::calls::{Cx, Reply};
use crate::compare::{describe_writes, ensure, Checked, Diffs};
use crate::data::{jv, pending, rich_step, Step};

/// How a read that differs from what was put is described: `"returned part of it"` only
/// when the put of that checkpoint was in flight (it had not returned before the read
/// began); a checkpoint whose put had returned and that still reads otherwise was not
/// stored as put (its absent fields say `nothing (not stored)`, [`Diffs::step`]).
fn read_differs(read: impl Display, id: &str, in_flight: bool) -> String {
    if in_flight {
        format!("{read} while checkpoint {id} was being put: returned part of it")
    } else {
        format!("{read}: checkpoint {id}, whose put had returned before this read, does not read as it was put")
    }
}

/// S18: while one task puts a chain of checkpoints with 16 channels each, three readers poll
/// `get_tuple` of the checkpoint being put and of the latest one: each read is none or the
/// whole checkpoint (every channel value, versions, metadata, parent), never part of it.
pub(super) async fn reader_sees_none_or_all_of_a_checkpoint(cx: Cx) -> Checked {
    const STEPS: usize = 40;
    let base = cx.config("reader");
    let steps: Arc<Vec<Step>> = Arc::new((0..STEPS).map(|i| rich_step("whole", i, 16)).collect());
    let current = Arc::new(AtomicUsize::new(0));
    // How many puts had returned: checkpoints below this index are not in flight.
    let acked = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<JoinHandle<Result<usize, Failure>>> = (0..3)
        .map(|_| {
            let (cx, base, steps, current, acked, done) =
                (cx.clone(), base.clone(), steps.clone(), current.clone(), acked.clone(), done.clone());
            crate::compare::spawn(async move {
                let mut reads = 0usize;
                let index = |got: &Reply<Option<CheckpointTuple>>, t: &CheckpointTuple| {
                    steps.iter().position(|s| s.id() == t.checkpoint.id).ok_or_else(|| {
                        Failure::new(format!(
                            "{got} while checkpoints were being put: returned checkpoint {} that was never put",
                            t.checkpoint.id
                        ))
                    })
                };
                let diffs = |i: usize, t: &CheckpointTuple| {
                    let parent = (i > 0).then(|| base.clone().with_id(steps[i - 1].id()));
                    let mut d = Diffs::new();
                    d.step(&steps[i], t).parent_config(parent.as_ref(), t.parent_config.as_ref());
                    d
                };
                while !done.load(Ordering::Acquire) {
                    let i = current.load(Ordering::Acquire);
                    for cfg in [base.clone().with_id(steps[i].id()), base.clone()] {
                        let acked_before = acked.load(Ordering::Acquire);
                        let got = cx.get(&cfg).await?;
                        reads += 1;
                        let Some(t) = &*got else { continue };
                        let j = index(&got, t)?;
                        let mut d = diffs(j, t);
                        if d.is_empty() {
                            continue;
                        }
                        let id = t.checkpoint.id.clone();
                        if j < acked_before {
                            return d.finish_at(|| read_differs(&got, &id, false)).map(|()| reads);
                        }
                        // Its put was in flight: read it again once the put has returned. What
                        // still differs then was not stored; only what is whole then was torn.
                        while acked.load(Ordering::Acquire) <= j && !done.load(Ordering::Acquire) {
                            tokio::task::yield_now().await;
                        }
                        let later = cx.after(format!("after the put of checkpoint {id} returned"));
                        let again = later.get(&base.clone().with_id(id.clone())).await?;
                        if let Some(t2) = &*again {
                            let mut d2 = diffs(j, t2);
                            if !d2.is_empty() {
                                return d2.finish_at(|| read_differs(&again, &id, false)).map(|()| reads);
                            }
                        }
                        return d.finish_at(|| read_differs(&got, &id, true)).map(|()| reads);
                    }
                    tokio::task::yield_now().await;
                }
                Ok(reads)
            })
        })
        .collect();
    let writer = {
        let (cx, base, steps, current, done) = (cx.clone(), base.clone(), steps.clone(), current.clone(), done.clone());
        crate::compare::spawn(async move {
            let mut parent = base;
            let mut result = Ok(());
            for (i, step) in steps.iter().enumerate() {
                current.store(i, Ordering::Release);
                match cx.put(&parent, step.clone()).await {
                    Ok(c) => {
                        parent = c;
                        acked.store(i + 1, Ordering::Release);
                    }
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
    writer_and_readers(writer, join_tasks("the readers", readers).await)?;
    // Once every put has returned, the latest reads whole: a saver that does not store a
    // field fails here whatever the readers' timing (a fast writer can finish before any
    // reader is scheduled).
    let last = steps.len() - 1;
    let id = steps[last].id();
    let got = cx.after("after the writer finished").get(&base).await?;
    let t = (*got).as_ref().ok_or_else(|| Failure::new(format!("{got}: expected checkpoint {id}, got none")))?;
    ensure(t.checkpoint.id == id, || format!("{got}: expected the latest, checkpoint {id}, got {}", t.checkpoint.id))?;
    let mut d = Diffs::new();
    d.step(&steps[last], t).parent_config(Some(&base.clone().with_id(steps[last - 1].id())), t.parent_config.as_ref());
    d.finish_at(|| read_differs(&got, id, false))
}

/// S18 for `list`: while one task puts checkpoints (8 channels each) and then 3 writes for
/// each, readers call `list` on the thread; every tuple listed is complete (values,
/// versions, metadata, parent) and its pending writes are none or all 3.
///
/// A listed tuple whose put and put_writes had returned before the list began must read as
/// it was put. One that differs while they were in flight is listed again once they have
/// returned: what still differs then was not stored as put; only a tuple that differed
/// then and is whole now was listed incomplete.
pub(super) async fn list_during_writes_returns_complete_tuples(cx: Cx) -> Checked {
    const STEPS: usize = 16;
    fn writes_of(i: usize) -> Vec<(&'static str, TypedValue)> {
        vec![("w0", jv(json!({"i": i, "w": 0}))), ("w1", jv(json!({"i": i, "w": 1}))), ("w2", jv(json!([i, "x"])))]
    }
    /// The differences of listed tuple `t` from checkpoint `i` as put: the step, the parent,
    /// and the pending writes (all of them when `returned`, the put_writes having returned;
    /// else none or all, a wrong order of all of them named by [`Diffs::writes`]).
    fn differs(t: &CheckpointTuple, i: usize, steps: &[Step], base: &CheckpointConfig, returned: bool) -> Diffs {
        let parent = (i > 0).then(|| base.clone().with_id(steps[i - 1].id()));
        let want: Vec<PendingWrite> = writes_of(i).into_iter().map(|(ch, v)| pending("task", "", ch, v)).collect();
        let mut d = Diffs::new();
        d.step(&steps[i], t).parent_config(parent.as_ref(), t.parent_config.as_ref());
        let got = &t.pending_writes;
        if !returned && !got.is_empty() && got.len() != want.len() {
            d.push("pending_writes", format_args!("none or all of {}", describe_writes(&want)), describe_writes(got));
        } else if returned || !got.is_empty() {
            // All of them (a wrong value or order named by the comparator), or none in flight.
            d.writes("pending_writes", &want, got);
        }
        d
    }
    /// The index of listed tuple `t` among the steps.
    fn index(listed: &Reply<Vec<CheckpointTuple>>, t: &CheckpointTuple, steps: &[Step]) -> Result<usize, Failure> {
        steps.iter().position(|s| s.id() == t.checkpoint.id).ok_or_else(|| {
            Failure::new(format!(
                "{listed}: listed checkpoint {} (config {}) that was never put",
                t.checkpoint.id, t.config
            ))
        })
    }
    /// "Does not read as it was put", for a tuple whose put and put_writes had returned.
    fn not_as_put(listed: &Reply<Vec<CheckpointTuple>>, t: &CheckpointTuple) -> String {
        format!(
            "{listed}: tuple ({}), whose put and put_writes had returned before this list, does not read as it \
             was put",
            t.config
        )
    }
    /// Every tuple of a listing made once all puts and writes had returned.
    fn check_all(listed: &Reply<Vec<CheckpointTuple>>, steps: &[Step], base: &CheckpointConfig) -> Checked {
        for t in listed.iter() {
            let i = index(listed, t, steps)?;
            differs(t, i, steps, base, true).finish_at(|| not_as_put(listed, t))?;
        }
        Ok(())
    }
    let thread = cx.thread("list-reader");
    let base = CheckpointConfig::new(thread.clone());
    let steps: Arc<Vec<Step>> = Arc::new((0..STEPS).map(|i| rich_step("list", i, 8)).collect());
    let done = Arc::new(AtomicBool::new(false));
    // How many checkpoints had their put and put_writes returned: those are not in flight.
    let acked = Arc::new(AtomicUsize::new(0));
    let readers: Vec<JoinHandle<Result<(), Failure>>> = (0..2)
        .map(|_| {
            let (cx, thread, base, steps, done, acked) =
                (cx.clone(), thread.clone(), base.clone(), steps.clone(), done.clone(), acked.clone());
            crate::compare::spawn(async move {
                let during = cx.after("while checkpoints and writes were being put");
                while !done.load(Ordering::Acquire) {
                    let acked_before = acked.load(Ordering::Acquire);
                    let listed = during.list_all(&thread).await?;
                    for t in listed.iter() {
                        let i = index(&listed, t, &steps)?;
                        let mut d = differs(t, i, &steps, &base, i < acked_before);
                        if d.is_empty() {
                            continue;
                        }
                        if i < acked_before {
                            return d.finish_at(|| not_as_put(&listed, t));
                        }
                        // In flight: list again once its put and put_writes have returned.
                        // What still differs then was not stored; only what is whole then
                        // was listed incomplete.
                        let id = t.checkpoint.id.clone();
                        while acked.load(Ordering::Acquire) <= i && !done.load(Ordering::Acquire) {
                            tokio::task::yield_now().await;
                        }
                        let returned = acked.load(Ordering::Acquire) > i;
                        let later = cx.after(format!("after the put and put_writes of checkpoint {id} returned"));
                        let again = later.list_all(&thread).await?;
                        if let Some(t2) = again.iter().find(|t2| t2.checkpoint.id == id) {
                            let mut d2 = differs(t2, i, &steps, &base, returned);
                            if returned && !d2.is_empty() {
                                return d2.finish_at(|| not_as_put(&again, t2));
                            }
                        }
                        return d.finish_at(|| format!("{listed}: tuple ({}) is incomplete", t.config));
                    }
                    tokio::task::yield_now().await;
                }
                Ok(())
            })
        })
        .collect();
    let writer = {
        let (cx, steps, done) = (cx.clone(), steps.clone(), done.clone());
        crate::compare::spawn(async move {
            let run = async {
                let mut parent = base;
                for (i, step) in steps.iter().enumerate() {
                    parent = cx.put(&parent, step.clone()).await?;
                    cx.put_writes(&parent, writes_of(i), "task", "").await?;
                    acked.store(i + 1, Ordering::Release);
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
    writer_and_readers(writer, join_tasks("the readers", readers).await)?;
    let listed = cx.after("after the writer finished").list_all(&thread).await?;
    ensure(listed.len() == STEPS, || format!("{listed}: expected {STEPS} tuples, got {}", listed.len()))?;
    check_all(&listed, &steps, &CheckpointConfig::new(thread.clone()))
}
