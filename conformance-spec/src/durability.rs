//! `durability` (CONTRACT §4 "Durability", persistent savers): once `put` or `put_writes`
//! returned `Ok`, the data is visible to a new instance opened on the same storage, and it
//! survives the process being killed (bug scenario S20).
//!
//! The capability is detected when the registration's fixture can reopen its storage
//! ([`conformance_core::Fixture::with_reopen`]); the crash case also needs
//! [`conformance_core::Fixture::with_location`], [`conformance_core::Registration::open_at`]
//! and a front end that calls [`crate::child_main_if_requested`] (see [`crate::crash`]).

use conformance_core::{Capability, CheckpointConfig, CheckpointTuple, ListOptions, TypedValue};
use serde_json::json;

use crate::concurrency::rich_step;
use crate::cx::{describe_writes, ensure, ensure_eq, ids_of, CaseResult, Cx};
use crate::fixtures::{jv, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Durability => [
        reopened_instance_reads_checkpoints_and_writes,
        reopened_instance_sees_a_deleted_thread_gone,
        reopened_instance_sees_a_replaced_checkpoint,
        acknowledged_writes_survive_kill,
    ])
}

/// Fails unless `got` (read through another instance) equals `want` field by field; the
/// message names the field.
fn same_tuple(what: &str, want: &CheckpointTuple, got: &CheckpointTuple) -> CaseResult {
    ensure_eq(format!("{what}: config"), &want.config, &got.config)?;
    ensure_eq(
        format!("{what}: checkpoint.channel_values"),
        &want.checkpoint.channel_values,
        &got.checkpoint.channel_values,
    )?;
    ensure_eq(
        format!("{what}: checkpoint.channel_versions"),
        &want.checkpoint.channel_versions,
        &got.checkpoint.channel_versions,
    )?;
    ensure_eq(
        format!("{what}: checkpoint.versions_seen"),
        &want.checkpoint.versions_seen,
        &got.checkpoint.versions_seen,
    )?;
    ensure_eq(format!("{what}: checkpoint"), &want.checkpoint, &got.checkpoint)?;
    ensure_eq(
        format!("{what}: metadata"),
        &serde_json::Value::Object(want.metadata.clone()),
        &serde_json::Value::Object(got.metadata.clone()),
    )?;
    ensure_eq(format!("{what}: parent_config"), &want.parent_config, &got.parent_config)?;
    ensure(want.pending_writes == got.pending_writes, || {
        format!(
            "{what}: pending_writes: expected {}, got {}",
            describe_writes(&want.pending_writes),
            describe_writes(&got.pending_writes)
        )
    })
}

/// Checkpoints (a chain of two in the root namespace, the second reading a value stored by
/// the first, and one in a subgraph namespace), their writes (regular and special, two
/// tasks, a task path) and metadata, all read back the same through a new instance, by
/// `get_tuple` and by `list`.
async fn reopened_instance_reads_checkpoints_and_writes(cx: Cx) -> CaseResult {
    let thread = cx.thread("reopen");
    let root = CheckpointConfig::new(thread.clone());
    let c1 = cx
        .put(&root, rich_step("reopen", 0, 3).typed("raw", TypedValue::new("bytes", vec![0u8, 0xff, 0xfe, 0]), 1))
        .await?;
    let c2 = cx
        .put(&c1, Step::fresh().value("reopen.c00", json!("second"), 2).keep("raw", 1).meta("step", json!(1)))
        .await?;
    let sub = cx.put(&root.clone().with_ns("child:sub"), rich_step("sub", 0, 2)).await?;
    cx.put_writes(&c2, vec![("a", jv(json!({"x": 1}))), ("__error__", jv(json!("boom")))], "task-1", "").await?;
    cx.put_writes(&c2, vec![("b", jv(json!([1, 2])))], "task-2", "path~1").await?;
    cx.put_writes(&sub, vec![("s", jv(json!(null)))], "task-s", "").await?;
    let before = cx.get_some(&c2).await?;
    ensure(before.pending_writes.len() == 3 && before.checkpoint.channel_values.contains_key("raw"), || {
        format!(
            "get_tuple({c2}) through the instance that wrote it: expected channel \"raw\" and 3 pending writes, got \
             channels {:?} and writes {}",
            before.checkpoint.channel_values.keys().collect::<Vec<_>>(),
            describe_writes(&before.pending_writes)
        )
    })?;
    let other = Cx { saver: cx.ctx.reopen().await?, ..cx.clone() };
    for cfg in [&c1, &c2, &sub] {
        let want = cx.get_some(cfg).await?;
        let got = other
            .get_some(cfg)
            .await
            .map_err(|f| conformance_core::Failure::new(format!("through a new instance: {f}")))?;
        same_tuple(&format!("get_tuple({cfg}) through a new instance on the same storage"), &want, &got)?;
    }
    let latest = other.get_some(&root).await?;
    ensure_eq(
        format!("get_tuple({root}) (latest) through a new instance: checkpoint id"),
        &c2.checkpoint_id.clone().unwrap_or_default(),
        &latest.checkpoint.id,
    )?;
    let want = cx.list(&thread, &ListOptions::all()).await?;
    let got = other.list(&thread, &ListOptions::all()).await?;
    ensure_eq(format!("list(thread={thread}) through a new instance: ids"), &ids_of(&want), &ids_of(&got))?;
    for (w, g) in want.iter().zip(&got) {
        same_tuple(&format!("list(thread={thread}) through a new instance: tuple {}", w.config), w, g)?;
    }
    Ok(())
}

/// `delete_thread` is durable: a new instance finds nothing of the deleted thread (latest,
/// by id, by `list`) and the other thread unchanged.
async fn reopened_instance_sees_a_deleted_thread_gone(cx: Cx) -> CaseResult {
    let gone = cx.thread("gone");
    let kept = cx.thread("kept");
    let mut gone_cfgs = Vec::new();
    for thread in [&gone, &kept] {
        let c1 = cx.put(&CheckpointConfig::new(thread.clone()), rich_step("del", 0, 2)).await?;
        let c2 = cx.put(&c1, rich_step("del", 1, 2)).await?;
        cx.put_writes(&c2, vec![("w", jv(json!(1)))], "task", "").await?;
        if thread == &gone {
            gone_cfgs = vec![c1, c2];
        }
    }
    cx.delete_thread(&gone).await?;
    let want_kept = cx.list(&kept, &ListOptions::all()).await?;
    let other = Cx { saver: cx.ctx.reopen().await?, ..cx.clone() };
    for cfg in gone_cfgs.iter().chain([&CheckpointConfig::new(gone.clone())]) {
        other.get_none(cfg).await.map_err(|f| {
            conformance_core::Failure::new(format!("after delete_thread({gone}), through a new instance: {f}"))
        })?;
    }
    let listed = other.list_ids(&gone, &ListOptions::all()).await?;
    ensure(listed.is_empty(), || {
        format!(
            "list(thread={gone}) through a new instance after delete_thread({gone}): expected nothing, got {listed:?}"
        )
    })?;
    let got_kept = other.list(&kept, &ListOptions::all()).await?;
    ensure_eq(format!("list(thread={kept}) through a new instance: ids"), &ids_of(&want_kept), &ids_of(&got_kept))?;
    for (w, g) in want_kept.iter().zip(&got_kept) {
        same_tuple(&format!("list(thread={kept}) through a new instance: tuple {}", w.config), w, g)?;
    }
    Ok(())
}

/// Putting an existing id again is durable: a new instance reads the second version
/// (metadata and values) and the writes made before the replacement.
async fn reopened_instance_sees_a_replaced_checkpoint(cx: Cx) -> CaseResult {
    let root = cx.config("replace");
    let first = Step::fresh().value("ch", json!("first"), 1).meta("version", json!("first"));
    let id = first.id().to_owned();
    let cfg = cx.put(&root, first).await?;
    cx.put_writes(&cfg, vec![("w", jv(json!("kept")))], "task", "").await?;
    let second = Step::new(&id).value("ch", json!("second"), 2).meta("version", json!("second"));
    cx.put(&root, second).await?;
    let other = Cx { saver: cx.ctx.reopen().await?, ..cx.clone() };
    let t = other.get_some(&cfg).await?;
    let what = format!("get_tuple({cfg}) through a new instance after the checkpoint was put twice");
    ensure_eq(format!("{what}: metadata.version"), &Some(json!("second")), &t.metadata.get("version").cloned())?;
    ensure_eq(
        format!("{what}: channel_values[ch]"),
        &Some(jv(json!("second"))),
        &t.checkpoint.channel_values.get("ch").cloned(),
    )?;
    ensure(t.pending_writes.len() == 1 && t.pending_writes[0].value == jv(json!("kept")), || {
        format!("{what}: expected the write made before the second put, got {}", describe_writes(&t.pending_writes))
    })
}

/// S20, the crash test: a child process writes and is killed with SIGKILL at random
/// moments; every acknowledged checkpoint and write is intact afterwards and nothing
/// present is torn (see [`crate::crash`]).
async fn acknowledged_writes_survive_kill(cx: Cx) -> CaseResult {
    crate::crash::crash_test(cx).await
}
