//! The crash child's side (see the parent module): it reads its request, opens the storage
//! and runs the workload, acknowledging each `Ok` call on stdout, until it is killed. The
//! workload's data functions are shared with the parent's check (`verify.rs`).

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use conformance_core::{
    Call, CheckpointConfig, CheckpointSaver, PendingWrite, PutHead, Registration, TypedValue, WritesHead,
};
use serde_json::json;

use super::{CRASH_CHILD_ENV, MAX_STEPS, PREFIX};
use crate::data::{jv, new_id, pending, Step};

fn protocol_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PREFIX} {line}");
    let _ = out.flush();
}

pub(super) fn run_child(raw: &str, registrations: &[Registration]) -> ExitCode {
    // A front end interrupted or killed mid-crash-test must not leave this child running.
    conformance_core::leftovers::die_with_parent();
    let request: serde_json::Value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(e) => {
            protocol_line(&format!("error {CRASH_CHILD_ENV} is not JSON: {e}"));
            return ExitCode::from(2);
        }
    };
    let field = |k: &str| request.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    let (Some(name), Some(location), Some(thread)) = (field("registration"), field("location"), field("thread")) else {
        protocol_line(&format!("error {CRASH_CHILD_ENV} lacks registration, location or thread: {raw}"));
        return ExitCode::from(2);
    };
    let Some(registration) = registrations.iter().find(|r| r.name() == name) else {
        let names: Vec<&str> = registrations.iter().map(|r| r.name()).collect();
        protocol_line(&format!("error no registration named {name:?} in this binary (it has {names:?})"));
        return ExitCode::from(2);
    };
    let rt = match conformance_core::run::runtime(registration.is_multi_thread()) {
        Ok(rt) => rt,
        Err(e) => {
            protocol_line(&format!("error could not build a tokio runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    let result = rt.block_on(async {
        let fixture = registration
            .open_location(&location)
            .await
            .map_err(|e| format!("open_at({location:?}) failed in the crash child: {e}"))?;
        let hold_after = request.get("hold_after").and_then(serde_json::Value::as_u64).map(|n| n as usize);
        protocol_line("ready");
        child_workload(&**fixture.saver(), &thread, hold_after).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            protocol_line(&format!("error {}", e.replace('\n', " ")));
            ExitCode::from(3)
        }
    }
}

/// The namespace of step `i`: every fourth step goes to a subgraph namespace.
pub(super) fn ns_of(i: usize) -> &'static str {
    if i % 4 == 3 {
        "child:crash"
    } else {
        ""
    }
}

/// The step before `i` in the same namespace (its parent), if any.
pub(super) fn previous_in_ns(i: usize) -> Option<usize> {
    (0..i).rev().find(|&p| ns_of(p) == ns_of(i))
}

/// A blob of some hundred bytes whose bytes depend on `i`, so a partly written one shows.
fn blob(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|k| ((i * 31 + k * 7) % 251) as u8).collect()
}

/// Step `i` of the crash workload (with checkpoint id `id`), as `put` gets it and as every
/// read must return it. The first step of a namespace changes channel `kept`; later ones
/// keep its version (not in `new_versions`) and carry its value, as LangGraph's runtime
/// does: every put carries the value of every channel in its `channel_versions`, so the
/// crash test judges durability alone. Reading a value a put did not carry is CONTRACT §2
/// put's rule, checked by the `put` cases.
pub(super) fn crash_step(i: usize, id: &str) -> Step {
    let kept = format!("kept-{}", ns_of(i));
    let step = Step::new(id)
        .value("counter", json!({"i": i}), i as i64 + 1)
        .typed("blob", TypedValue::bytes(blob(i, 256 + (i * 37) % 512)), i as i64 + 1)
        .seen("node", "counter", i as i64)
        // LangGraph's well-known metadata keys only: a saver that stores only those is
        // judged here on durability, not on custom metadata.
        .meta("source", json!("loop"))
        .meta("step", json!(i))
        .meta("parents", json!({}))
        .meta("run_id", json!(format!("crash-{}-{i}-é✓", ns_of(i))));
    if previous_in_ns(i).is_none() {
        step.value("kept", json!(kept), 1)
    } else {
        step.carry("kept", json!(kept), 1)
    }
}

/// The two `put_writes` calls of step `i`: (task id, writes).
fn crash_writes(i: usize) -> [(String, Vec<(String, TypedValue)>); 2] {
    [
        (
            format!("crash-a-{i}"),
            vec![
                ("wa".into(), jv(json!({"i": i}))),
                ("__interrupt__".into(), jv(json!({"i": i, "interrupt": true}))),
                ("wb".into(), TypedValue::bytes(blob(i + 1, 128))),
            ],
        ),
        (format!("crash-b-{i}"), vec![("wc".into(), jv(json!([i, "c"])))]),
    ]
}

/// The pending writes of task `task` of step `i`, in `get_tuple` order (index order).
pub(super) fn expected_group(i: usize, task: &str) -> Option<Vec<PendingWrite>> {
    let (_, writes) = crash_writes(i).into_iter().find(|(t, _)| t == task)?;
    let mut indexed: Vec<(i64, PendingWrite)> = writes
        .into_iter()
        .enumerate()
        .map(|(pos, (ch, v))| (conformance_core::write_index(&ch, pos), pending(task, "", &ch, v)))
        .collect();
    indexed.sort_by_key(|(idx, _)| *idx);
    Some(indexed.into_iter().map(|(_, w)| w).collect())
}

/// Prints an acknowledgement, the `acked`-th; after the `hold_after`-th, waits to be
/// killed (the parent's kill between calls: the next call has not started).
async fn ack(line: &str, acked: &mut usize, hold_after: Option<usize>) {
    protocol_line(line);
    *acked += 1;
    hold_at(*acked, hold_after).await;
}

/// Waits forever (until the kill) when `acked` is `hold_after`.
async fn hold_at(acked: usize, hold_after: Option<usize>) {
    if hold_after == Some(acked) {
        std::future::pending::<()>().await;
    }
}

async fn child_workload(saver: &dyn CheckpointSaver, thread: &str, hold_after: Option<usize>) -> Result<(), String> {
    let mut last: BTreeMap<&str, String> = BTreeMap::new();
    let mut acked = 0;
    hold_at(acked, hold_after).await;
    for i in 0..MAX_STEPS {
        let ns = ns_of(i);
        let mut parent = CheckpointConfig::new(thread).with_ns(ns);
        if let Some(id) = last.get(ns) {
            parent = parent.with_id(id.clone());
        }
        let id = new_id();
        let step = crash_step(i, &id);
        let stored = saver.put(&parent, step.checkpoint, step.metadata, step.new_versions).await.map_err(|e| {
            let call = Call::Put(PutHead { config: parent.clone(), checkpoint_id: id.clone() });
            format!("{call} (step {i}): {}", e.display_chain())
        })?;
        ack(&format!("ack put {i} {id}"), &mut acked, hold_after).await;
        last.insert(ns, id.clone());
        for (task, writes) in crash_writes(i) {
            let channels: Vec<String> = writes.iter().map(|(c, _)| c.clone()).collect();
            saver.put_writes(&stored, writes, &task, "").await.map_err(|e| {
                let call = Call::PutWrites(WritesHead {
                    config: stored.clone(),
                    channels,
                    task_id: task.clone(),
                    task_path: String::new(),
                });
                format!("{call} (step {i}): {}", e.display_chain())
            })?;
            ack(&format!("ack writes {i} {id} {task}"), &mut acked, hold_after).await;
        }
    }
    Ok(())
}
