//! Helpers shared by the extended-capability modules (`delete_for_runs`, `copy_thread`,
//! `prune`, `delta_channel_history`): whole-thread snapshots, field-by-field tuple
//! comparison with precise messages, and pending-write builders.

use conformance_core::{CheckpointConfig, CheckpointTuple, ListOptions, PendingWrite, TypedValue};

use crate::cx::{describe_writes, ensure_eq, ids_of, CaseResult, Cx};
use crate::Failure;

/// Every checkpoint of `thread` in every namespace, as `list(thread, ns=<all>)` returns it
/// (newest id first, then namespace ascending).
pub(crate) async fn snapshot(cx: &Cx, thread: &str) -> Result<Vec<CheckpointTuple>, Failure> {
    cx.list(thread, &ListOptions::all()).await
}

/// `(namespace, id)` of each tuple, in order: a compact description of a thread's contents.
pub(crate) fn keys_of(tuples: &[CheckpointTuple]) -> Vec<(String, String)> {
    tuples
        .iter()
        .map(|t| (t.config.checkpoint_ns.clone(), t.config.checkpoint_id.clone().unwrap_or_default()))
        .collect()
}

/// Fails unless `actual` equals `expected` in config, checkpoint, metadata and pending
/// writes (and parent config when `with_parent`), naming the first field that differs.
pub(crate) fn ensure_same_tuple(
    what: &str,
    expected: &CheckpointTuple,
    actual: &CheckpointTuple,
    with_parent: bool,
) -> CaseResult {
    ensure_eq(format!("{what}: config"), &expected.config, &actual.config)?;
    if with_parent {
        ensure_eq(format!("{what}: parent_config"), &expected.parent_config, &actual.parent_config)?;
    }
    ensure_eq(
        format!("{what}: checkpoint.channel_values"),
        &expected.checkpoint.channel_values,
        &actual.checkpoint.channel_values,
    )?;
    ensure_eq(
        format!("{what}: checkpoint.channel_versions"),
        &expected.checkpoint.channel_versions,
        &actual.checkpoint.channel_versions,
    )?;
    ensure_eq(format!("{what}: checkpoint"), &*expected.checkpoint, &*actual.checkpoint)?;
    ensure_eq(format!("{what}: metadata"), &expected.metadata, &actual.metadata)?;
    if expected.pending_writes != actual.pending_writes {
        return Err(Failure::new(format!(
            "{what}: pending_writes: expected {}, got {}",
            describe_writes(&expected.pending_writes),
            describe_writes(&actual.pending_writes)
        )));
    }
    Ok(())
}

/// Fails unless the two lists hold the same checkpoints (same `(ns, id)` keys in the same
/// order) and each pair passes [`ensure_same_tuple`].
pub(crate) fn ensure_same_tuples(
    what: &str,
    expected: &[CheckpointTuple],
    actual: &[CheckpointTuple],
    with_parent: bool,
) -> CaseResult {
    ensure_eq(format!("{what}: (namespace, checkpoint id) of each tuple"), &keys_of(expected), &keys_of(actual))?;
    for (e, a) in expected.iter().zip(actual) {
        ensure_same_tuple(&format!("{what}: checkpoint {}", e.config), e, a, with_parent)?;
    }
    Ok(())
}

/// Fails unless `get_tuple(config)` returns exactly `expected` (parent config included).
/// `when` says at which point of the case the read happens (`"after copy_thread(S, D)"`).
pub(crate) async fn ensure_reads(
    cx: &Cx,
    when: &str,
    config: &CheckpointConfig,
    expected: &CheckpointTuple,
) -> CaseResult {
    let got = cx
        .get(config)
        .await?
        .ok_or_else(|| Failure::new(format!("{when}: get_tuple({config}): expected a checkpoint, got none")))?;
    ensure_same_tuple(&format!("{when}: get_tuple({config})"), expected, &got, true)
}

/// Fails unless `get_tuple(config)` returns none; `when` as for [`ensure_reads`].
pub(crate) async fn ensure_gone(cx: &Cx, when: &str, config: &CheckpointConfig) -> CaseResult {
    match cx.get(config).await? {
        None => Ok(()),
        Some(t) => Err(Failure::new(format!(
            "{when}: get_tuple({config}): expected none, got checkpoint {} ({})",
            t.checkpoint.id, t.config
        ))),
    }
}

/// Fails unless `list(thread, options)` returns exactly the `expected` ids, in order.
pub(crate) async fn ensure_ids(
    cx: &Cx,
    when: &str,
    thread: &str,
    options: &ListOptions,
    expected: &[&str],
) -> CaseResult {
    let got = cx.list(thread, options).await?;
    let want: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    ensure_eq(
        format!("{when}: list(thread={thread}, {}): ids", crate::cx::describe_options(options)),
        &want,
        &ids_of(&got),
    )
}

/// Fails unless the pending writes of `get_tuple(config)` are exactly `expected`.
pub(crate) async fn ensure_writes(
    cx: &Cx,
    when: &str,
    config: &CheckpointConfig,
    expected: &[PendingWrite],
) -> CaseResult {
    let got = cx
        .get(config)
        .await?
        .ok_or_else(|| Failure::new(format!("{when}: get_tuple({config}): expected a checkpoint, got none")))?;
    if got.pending_writes == expected {
        return Ok(());
    }
    Err(Failure::new(format!(
        "{when}: get_tuple({config}): pending_writes: expected {}, got {}",
        describe_writes(expected),
        describe_writes(&got.pending_writes)
    )))
}

/// The checkpoint id of a stored config (`""` if it has none).
pub(crate) fn id_of(config: &CheckpointConfig) -> &str {
    config.checkpoint_id.as_deref().unwrap_or_default()
}

/// A pending write, for expected values.
pub(crate) fn write(task_id: &str, task_path: &str, channel: &str, value: TypedValue) -> PendingWrite {
    PendingWrite { task_id: task_id.to_owned(), task_path: task_path.to_owned(), channel: channel.to_owned(), value }
}

/// `(thread, ns, id)` as a config.
pub(crate) fn at(thread: &str, ns: &str, id: &str) -> CheckpointConfig {
    CheckpointConfig::new(thread).with_ns(ns).with_id(id)
}
