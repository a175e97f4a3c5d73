//! The check after a kill (see the parent module): every checkpoint present is whole, with
//! the right parent and writes in whole calls, and every acknowledged call is there.

use std::collections::BTreeMap;

use conformance_core::{CheckpointConfig, CheckpointTuple, Failure, PendingWrite};

use super::child::{crash_step, expected_group, ns_of, previous_in_ns};
use super::kill::Ack;
use crate::calls::Cx;
use crate::compare::{describe_writes, Diffs};

/// Waits until the killed child's unacknowledged work has landed or vanished: a database
/// server may still commit a call whose COMMIT it received before the client died (allowed:
/// an unacknowledged call is all there or not there), and checking while that happens would
/// compare two different states. Two equal `list` snapshots a few milliseconds apart count as
/// settled; at most 2 s (a storage that keeps changing after that is checked as it is).
pub(super) async fn settle(cx: &Cx, thread: &str) -> Result<(), Failure> {
    let start = std::time::Instant::now();
    let mut last = cx.list_all(thread).await?.into_value();
    while start.elapsed() < std::time::Duration::from_secs(2) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let now = cx.list_all(thread).await?.into_value();
        if now == last {
            return Ok(());
        }
        last = now;
    }
    Ok(())
}

/// Checks every checkpoint of `thread` that is present (complete, parent right, writes in
/// whole calls) and every acknowledged item (present). Returns the number of acks checked.
pub(super) async fn verify_thread(cx: &Cx, thread: &str, acks: &[Ack]) -> Result<usize, Failure> {
    let listed = cx.list_all(thread).await?;
    let mut by_i: BTreeMap<usize, &CheckpointTuple> = BTreeMap::new();
    for t in listed.iter() {
        let Some(i) = t.metadata.get("step").and_then(|v| v.as_u64()).map(|i| i as usize) else {
            return Err(Failure::new(format!(
                "{listed}: checkpoint {} has no integer metadata \"step\" (torn: metadata missing or partial): {}",
                t.config,
                serde_json::Value::Object(t.metadata.clone())
            )));
        };
        if let Some(other) = by_i.insert(i, t) {
            return Err(Failure::new(format!(
                "{listed}: step {i} was put once but appears twice: {} and {}",
                other.config, t.config
            )));
        }
    }
    for (&i, t) in &by_i {
        let what = format!("{listed}: checkpoint {} (step {i})", t.config);
        if t.config.checkpoint_ns != ns_of(i) {
            return Err(Failure::new(format!("{what}: expected namespace {:?}", ns_of(i))));
        }
        Diffs::new()
            .of(format_args!("{what} is present but torn"))
            .step(&crash_step(i, &t.checkpoint.id), t)
            .finish()?;
        let want_parent = match previous_in_ns(i) {
            None => None,
            Some(p) => match by_i.get(&p) {
                Some(pt) => Some(pt.config.clone()),
                None => {
                    return Err(Failure::new(format!(
                        "{what} is present but its parent, step {p}, which was put before it, is missing"
                    )))
                }
            },
        };
        if t.parent_config != want_parent {
            return Err(Failure::new(format!(
                "{what}: parent_config: expected {want_parent:?}, got {:?}",
                t.parent_config
            )));
        }
        let mut groups: BTreeMap<&str, Vec<PendingWrite>> = BTreeMap::new();
        for w in &t.pending_writes {
            groups.entry(w.task_id.as_str()).or_default().push(w.clone());
        }
        for (task, got) in groups {
            match expected_group(i, task) {
                Some(want) if want == got => {}
                Some(want) => {
                    return Err(Failure::new(format!(
                        "{what}: the writes of task {task} are torn: expected {}, got {}",
                        describe_writes(&want),
                        describe_writes(&got)
                    )))
                }
                None => {
                    return Err(Failure::new(format!(
                        "{what}: writes of a task that never wrote to it: {}",
                        describe_writes(&got)
                    )))
                }
            }
        }
    }
    for ack in acks {
        let (i, id) = match ack {
            Ack::Put { i, id } | Ack::Writes { i, id, .. } => (*i, id),
        };
        let present = by_i.get(&i).filter(|t| t.checkpoint.id == *id);
        let Some(t) = present else {
            return Err(Failure::new(format!(
                "step {i} (thread={thread}, ns={:?}, id={id}): put returned Ok before the kill, but list after \
                 reopening does not have it",
                ns_of(i)
            )));
        };
        if let Ack::Writes { task, .. } = ack {
            if !t.pending_writes.iter().any(|w| &w.task_id == task) {
                let want = expected_group(i, task).map_or_else(|| "its writes".to_owned(), |w| describe_writes(&w));
                return Err(Failure::new(format!(
                    "step {i} ({}): put_writes of task {task} returned Ok before the kill, but its writes are gone \
                     after reopening: pending_writes: expected {want} among them, got {}",
                    t.config,
                    describe_writes(&t.pending_writes)
                )));
            }
        }
    }
    // get_tuple must agree with list for the acknowledged checkpoints.
    for ack in acks {
        if let Ack::Put { i, id } = ack {
            let cfg = CheckpointConfig::new(thread).with_ns(ns_of(*i)).with_id(id.clone());
            let got = cx.get_some(&cfg).await?;
            match by_i.get(i) {
                Some(listed_tuple) => got
                    .diffs()
                    .of(format_args!("{got}, compared with what {listed} returned for it"))
                    .tuple(listed_tuple, &got)
                    .finish()?,
                None => return Err(Failure::new(format!("{got}: {listed} did not return step {i}"))),
            }
        }
    }
    Ok(acks.len())
}
