//! Minimal repros of the bugs docs/compat.md reports in juncture-checkpoint 0.4.0's
//! `SqliteSaver`. Each test calls the published saver's own API (no kit) and asserts the
//! behaviour observed today, next to what LangGraph does; when a release fixes the bug,
//! its test fails and docs/compat.md must be updated.

use std::collections::HashMap;

use juncture_checkpoint::SqliteSaver;
use juncture_core::checkpoint::{
    Checkpoint, CheckpointFilter, CheckpointMetadata, CheckpointSaver, CheckpointSource, PendingWrite,
};
use juncture_core::RunnableConfig;
use serde_json::json;

async fn saver() -> (SqliteSaver, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    std::fs::File::create(&path).expect("create the file");
    (SqliteSaver::new(path).await.expect("open"), dir)
}

fn checkpoint(id: &str, created_at: &str) -> Checkpoint {
    Checkpoint {
        id: id.to_owned(),
        channel_values: json!({"a": 1}),
        channel_versions: HashMap::from([("a".to_owned(), 1)]),
        versions_seen: HashMap::new(),
        pending_tasks: vec![],
        pending_sends: vec![],
        pending_interrupts: vec![],
        schema_version: 1,
        created_at: created_at.to_owned(),
        v: 1,
        new_versions: HashMap::new(),
        counters_since_delta_snapshot: HashMap::new(),
    }
}

fn metadata(parent: Option<&str>) -> CheckpointMetadata {
    CheckpointMetadata {
        source: CheckpointSource::Loop,
        step: 0,
        writes: HashMap::new(),
        parents: parent.map(|p| HashMap::from([(String::new(), p.to_owned())])).unwrap_or_default(),
        run_id: String::new(),
        return_value: None,
    }
}

fn thread() -> RunnableConfig {
    RunnableConfig::new().with_thread_id("t")
}

fn write(task: &str, channel: &str, value: serde_json::Value) -> PendingWrite {
    PendingWrite { task_id: task.to_owned(), channel: channel.to_owned(), value }
}

/// The tuple's config is the request's config: a latest read (no checkpoint id) returns a
/// tuple whose config names no checkpoint. LangGraph's tuple config always names it.
#[tokio::test]
async fn tuple_config_is_the_request_config() {
    let (saver, _dir) = saver().await;
    saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    let latest = saver.get_tuple(&thread()).await.unwrap().unwrap();
    assert_eq!((latest.checkpoint.id.as_str(), latest.config.checkpoint_id), ("c1", None));
}

/// `parent_config` is always `None`, even when the parent was recorded (juncture takes it
/// from `metadata.parents[""]`, stores it, and never reads it back). LangGraph returns it.
#[tokio::test]
async fn parent_config_never_returned() {
    let (saver, _dir) = saver().await;
    let c1 = saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    let c2 = saver.put(&c1, checkpoint("c2", "2026-01-02"), metadata(Some("c1"))).await.unwrap();
    assert!(saver.get_tuple(&c2).await.unwrap().unwrap().parent_config.is_none());
}

/// `list` without a filter returns at most 10 checkpoints. LangGraph lists all of them.
#[tokio::test]
async fn list_without_limit_stops_at_ten() {
    let (saver, _dir) = saver().await;
    for i in 0..12 {
        saver
            .put(&thread(), checkpoint(&format!("c{i:02}"), &format!("2026-01-{:02}", i + 1)), metadata(None))
            .await
            .unwrap();
    }
    assert_eq!(saver.list(&thread(), None).await.unwrap().len(), 10);
}

/// `put` deletes every pending write of the thread and namespace, so the writes of an
/// earlier checkpoint are gone once the next one is put. LangGraph keeps them with their
/// checkpoint (they are needed to resume or fork from it).
#[tokio::test]
async fn put_deletes_writes_of_other_checkpoints() {
    let (saver, _dir) = saver().await;
    let c1 = saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    saver.put_writes(&c1, vec![write("T", "ch", json!("on-c1"))], "T").await.unwrap();
    saver.put(&c1, checkpoint("c2", "2026-01-02"), metadata(Some("c1"))).await.unwrap();
    assert!(saver.get_tuple(&c1).await.unwrap().unwrap().pending_writes.is_empty());
}

/// A repeated regular write replaces the first (`ON CONFLICT DO UPDATE` for every write),
/// and special channels get their position instead of their fixed negative index.
/// LangGraph: regular writes first wins, `__interrupt__` at index -3.
#[tokio::test]
async fn regular_write_last_wins_and_special_index_is_positional() {
    let (saver, _dir) = saver().await;
    let c1 = saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    saver.put_writes(&c1, vec![write("T", "__interrupt__", json!("q"))], "T").await.unwrap();
    saver.put_writes(&c1, vec![write("T", "ch", json!("second"))], "T").await.unwrap();
    let writes = saver.get_tuple(&c1).await.unwrap().unwrap().pending_writes;
    let got: Vec<_> = writes.iter().map(|w| (w.channel.as_str(), w.value.clone())).collect();
    assert_eq!(got, vec![("ch", json!("second"))], "the interrupt at index 0 was replaced");
}

/// Re-putting a checkpoint id keeps the old timestamp (`created_at` is not in the upsert's
/// SET list). LangGraph replaces the whole checkpoint.
#[tokio::test]
async fn reput_keeps_the_old_timestamp() {
    let (saver, _dir) = saver().await;
    saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    let c1 = saver.put(&thread(), checkpoint("c1", "2030-01-01"), metadata(None)).await.unwrap();
    assert_eq!(saver.get_tuple(&c1).await.unwrap().unwrap().checkpoint.created_at, "2026-01-01");
}

/// `before` that names an id not stored does not cut at all (juncture cuts at the
/// position of that id in the list). LangGraph compares ids: every id below it is kept.
#[tokio::test]
async fn before_unknown_id_does_not_cut() {
    let (saver, _dir) = saver().await;
    for (i, id) in ["c1", "c3"].iter().enumerate() {
        saver.put(&thread(), checkpoint(id, &format!("2026-01-0{}", i + 1)), metadata(None)).await.unwrap();
    }
    let filter = CheckpointFilter { before: Some("c2".into()), ..Default::default() };
    let listed = saver.list(&thread(), Some(filter)).await.unwrap();
    assert_eq!(listed.len(), 2, "c3 is listed although it is not before c2");
}

/// A checkpoint's `v` reads back as 1 whatever was put (the read builds the checkpoint
/// with `v: 1`; the column is not stored). LangGraph's checkpoints are `v: 4` and read back
/// so.
#[tokio::test]
async fn checkpoint_v_reads_back_as_one() {
    let (saver, _dir) = saver().await;
    let c1 = saver.put(&thread(), Checkpoint { v: 4, ..checkpoint("c1", "2026-01-01") }, metadata(None)).await.unwrap();
    assert_eq!(saver.get_tuple(&c1).await.unwrap().unwrap().checkpoint.v, 1);
}

/// The latest checkpoint and the list order go by `created_at`, not by checkpoint id (and
/// equal timestamps come back in no defined order). LangGraph: latest is the greatest id,
/// and `list` is by id descending.
#[tokio::test]
async fn latest_and_list_order_by_created_at_not_id() {
    let (saver, _dir) = saver().await;
    saver.put(&thread(), checkpoint("c2", "2026-01-01"), metadata(None)).await.unwrap();
    saver.put(&thread(), checkpoint("c1", "2026-01-02"), metadata(None)).await.unwrap();
    let latest = saver.get_tuple(&thread()).await.unwrap().unwrap();
    let listed: Vec<_> = saver.list(&thread(), None).await.unwrap().into_iter().map(|t| t.checkpoint.id).collect();
    assert_eq!((latest.checkpoint.id.as_str(), listed), ("c1", vec!["c1".to_owned(), "c2".to_owned()]));
}

/// Metadata is the typed `CheckpointMetadata` (`source` and `step` required, `writes`,
/// `parents`, `run_id`): every other key of LangGraph's metadata dict is dropped, and
/// `CheckpointFilter` filters only `source` and `step`. LangGraph stores and filters any
/// JSON key.
#[test]
fn metadata_other_keys_dropped() {
    let given = json!({"source": "Input", "step": 1, "writes": {}, "parents": {}, "run_id": "", "custom_key": 1});
    let meta: CheckpointMetadata = serde_json::from_value(given).expect("deserialize");
    assert_eq!(serde_json::to_value(meta).unwrap().get("custom_key"), None);
}

/// `put_writes` without a checkpoint id fails, as LangGraph's savers do, but as a
/// `Storage` error: juncture's `CheckpointError` has no config-error kind (LangGraph's
/// savers raise on the missing config key; the kit asks for `InvalidConfig`).
#[tokio::test]
async fn put_writes_without_checkpoint_id_is_a_storage_error() {
    let (saver, _dir) = saver().await;
    saver.put(&thread(), checkpoint("c1", "2026-01-01"), metadata(None)).await.unwrap();
    let err = saver.put_writes(&thread(), vec![write("T", "ch", json!(1))], "T").await.unwrap_err();
    assert!(matches!(err, juncture_core::checkpoint::CheckpointError::Storage(_)), "{err:?}");
}
