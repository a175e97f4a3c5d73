//! Minimal repros of the bugs docs/compat.md reports in the langgraph-checkpoint-rs family
//! 0.2.5. Each test calls the published saver's own API (no kit, no adapter logic) and
//! asserts the behaviour observed today, next to what LangGraph does; when a release fixes
//! the bug, its test fails and docs/compat.md must be updated.
//!
//! The Postgres tests need `CHECKPOINT_POSTGRES_URL` (they fail without it).

use std::collections::HashMap;

use langgraph_checkpoint_postgres_rs::PostgresSaver;
use langgraph_checkpoint_rs::checkpoint::base::BaseCheckpointSaver;
use langgraph_checkpoint_rs::checkpoint::memory::InMemorySaver;
use langgraph_checkpoint_rs::checkpoint::types::{ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointSource};
use langgraph_checkpoint_rs::config::RunnableConfig;
use langgraph_checkpoint_sqlite_rs::SqliteSaver;
use serde_json::{json, Value};

/// `{"configurable": {...}}`, the config shape of the family.
fn cfg(configurable: Value) -> RunnableConfig {
    RunnableConfig::from([("configurable".to_owned(), configurable)])
}

/// A checkpoint `id` whose channel `a` holds `value` at version `version`.
fn checkpoint(id: &str, value: Option<Value>, version: Value) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint::empty();
    cp.id = id.to_owned();
    if let Some(v) = value {
        cp.channel_values.insert("a".into(), v);
    }
    cp.channel_versions.insert("a".into(), version.clone());
    (cp, HashMap::from([("a".to_owned(), version)]))
}

fn ids(writes: &Option<Vec<(String, String, Value)>>) -> Vec<(String, String, Value)> {
    writes.clone().unwrap_or_default()
}

/// A memory saver with checkpoint `c1` in thread `t`.
fn memory_with_c1() -> (InMemorySaver, RunnableConfig) {
    let saver = InMemorySaver::new();
    let (cp, nv) = checkpoint("c1", Some(json!(1)), json!(1));
    let c1 = saver.put(&cfg(json!({"thread_id": "t", "checkpoint_ns": ""})), &cp, &CheckpointMetadata::default(), &nv);
    (saver, c1.expect("put"))
}

async fn sqlite() -> (SqliteSaver, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", dir.path().join("db").display());
    let saver = SqliteSaver::from_conn_string(&url).await.expect("open");
    saver.setup().await.expect("setup");
    (saver, dir)
}

async fn postgres() -> (PostgresSaver, String) {
    let schema = compat_langgraph_rs::postgres::create_schema().await.expect("CHECKPOINT_POSTGRES_URL and a server");
    let adapter = compat_langgraph_rs::postgres::open(&schema).await.expect("open");
    // The adapter only built the pool; take the published saver back out of it.
    let saver = PostgresSaver::new(adapter.saver().pool().clone());
    (saver, schema)
}

/// memory: the write key is (thread, ns, checkpoint, index) without the task id, so the
/// writes of two tasks at the same index overwrite each other. LangGraph keys writes by
/// (thread, ns, checkpoint, task_id, index) and keeps both.
#[test]
fn memory_writes_of_two_tasks_overwrite_each_other() {
    let (saver, c1) = memory_with_c1();
    saver.put_writes(&c1, &[("task-1".into(), "ch".into(), json!("from-1"))], "task-1", "").unwrap();
    saver.put_writes(&c1, &[("task-2".into(), "ch".into(), json!("from-2"))], "task-2", "").unwrap();
    let writes = ids(&saver.get_tuple(&c1).unwrap().unwrap().pending_writes);
    assert_eq!(writes, vec![("task-2".to_owned(), "ch".to_owned(), json!("from-2"))], "task-1's write is gone");
}

/// memory: a repeated regular write replaces the first one (last wins). LangGraph keeps the
/// first regular write for a key (`INSERT OR IGNORE`, `setdefault`).
#[test]
fn memory_regular_write_last_wins() {
    let (saver, c1) = memory_with_c1();
    saver.put_writes(&c1, &[("T".into(), "ch".into(), json!("first"))], "T", "").unwrap();
    saver.put_writes(&c1, &[("T".into(), "ch".into(), json!("second"))], "T", "").unwrap();
    let writes = ids(&saver.get_tuple(&c1).unwrap().unwrap().pending_writes);
    assert_eq!(writes, vec![("T".to_owned(), "ch".to_owned(), json!("second"))]);
}

/// memory: special channels get their position, not their fixed negative index, so a later
/// regular write at position 0 replaces an `__interrupt__` write of the same task.
/// LangGraph stores `__interrupt__` at index -3 and keeps both.
#[test]
fn memory_special_channel_stored_at_its_position() {
    let (saver, c1) = memory_with_c1();
    saver.put_writes(&c1, &[("T".into(), "__interrupt__".into(), json!("q"))], "T", "").unwrap();
    saver.put_writes(&c1, &[("T".into(), "a".into(), json!(1))], "T", "").unwrap();
    let writes = ids(&saver.get_tuple(&c1).unwrap().unwrap().pending_writes);
    assert_eq!(writes, vec![("T".to_owned(), "a".to_owned(), json!(1))], "the interrupt is gone");
}

/// memory: pending writes come back in `HashMap` order, not by (task_path, task_id, index):
/// twelve writes of one call are seldom returned in their order. LangGraph sorts them.
#[test]
fn memory_pending_writes_in_hashmap_order() {
    let writes: Vec<(String, String, Value)> = (0..12).map(|i| ("T".into(), format!("c{i:02}"), json!(i))).collect();
    let unordered = (0..20).any(|_| {
        let (saver, c1) = memory_with_c1();
        saver.put_writes(&c1, &writes, "T", "").unwrap();
        ids(&saver.get_tuple(&c1).unwrap().unwrap().pending_writes) != writes
    });
    assert!(unordered, "20 fresh savers all returned the writes in order");
}

/// memory: `list` with `checkpoint_ns: ""` lists every namespace (an empty namespace is
/// read as "no namespace given"). LangGraph lists only the root namespace.
#[test]
fn memory_list_root_namespace_lists_every_namespace() {
    let saver = InMemorySaver::new();
    for (ns, id) in [("", "r1"), ("child:1", "k1")] {
        let (cp, nv) = checkpoint(id, Some(json!(1)), json!(1));
        saver
            .put(&cfg(json!({"thread_id": "t", "checkpoint_ns": ns})), &cp, &CheckpointMetadata::default(), &nv)
            .unwrap();
    }
    let listed = saver.list(Some(&cfg(json!({"thread_id": "t", "checkpoint_ns": ""}))), None, None, None).unwrap();
    let got: Vec<_> = listed.iter().map(|t| t.checkpoint.id.clone()).collect();
    assert_eq!(got, vec!["r1", "k1"], "the child namespace's k1 is listed too");
}

/// memory: `list` cuts to `limit` before applying the filter, so a matching checkpoint that
/// is not among the newest `limit` is never returned. LangGraph applies the limit last.
#[test]
fn memory_list_limit_before_filter() {
    let saver = InMemorySaver::new();
    for (id, source) in [("c1", CheckpointSource::Input), ("c2", CheckpointSource::Loop)] {
        let (cp, nv) = checkpoint(id, Some(json!(1)), json!(1));
        let meta = CheckpointMetadata { source: Some(source), ..Default::default() };
        saver.put(&cfg(json!({"thread_id": "t", "checkpoint_ns": ""})), &cp, &meta, &nv).unwrap();
    }
    let filter = HashMap::from([("source".to_owned(), json!("input"))]);
    let listed = saver.list(Some(&cfg(json!({"thread_id": "t"}))), Some(&filter), None, Some(1)).unwrap();
    assert!(listed.is_empty(), "c1 matches the filter but is not returned");
}

/// memory: `list` ignores the config's `checkpoint_id`. LangGraph lists only that id.
#[test]
fn memory_list_ignores_checkpoint_id() {
    let (saver, _) = memory_with_c1();
    let (cp, nv) = checkpoint("c2", Some(json!(2)), json!(2));
    saver.put(&cfg(json!({"thread_id": "t", "checkpoint_ns": ""})), &cp, &CheckpointMetadata::default(), &nv).unwrap();
    let listed = saver.list(Some(&cfg(json!({"thread_id": "t", "checkpoint_id": "c1"}))), None, None, None).unwrap();
    assert_eq!(listed.len(), 2, "c2 is listed although the config names c1");
}

/// memory: listed tuples carry no pending writes (`pending_writes: None`). LangGraph's
/// listed tuples carry the same writes as `get_tuple`.
#[test]
fn memory_list_drops_pending_writes() {
    let (saver, c1) = memory_with_c1();
    saver.put_writes(&c1, &[("T".into(), "ch".into(), json!("v"))], "T", "").unwrap();
    assert!(saver.get_tuple(&c1).unwrap().unwrap().pending_writes.is_some());
    let listed = saver.list(Some(&cfg(json!({"thread_id": "t"}))), None, None, None).unwrap();
    assert_eq!(listed[0].pending_writes, None);
}

/// memory, SQLite and Postgres: `put_writes` without `checkpoint_id` succeeds and files the
/// writes under checkpoint id `""`. LangGraph's savers fail
/// (`config["configurable"]["checkpoint_id"]`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_writes_without_checkpoint_id_is_accepted() {
    let (memory, _) = memory_with_c1();
    let no_id = cfg(json!({"thread_id": "t", "checkpoint_ns": ""}));
    assert!(memory.put_writes(&no_id, &[("T".into(), "ch".into(), json!(1))], "T", "").is_ok());
    let (sqlite, _dir) = sqlite().await;
    assert!(sqlite.aput_writes(&no_id, vec![("T".into(), "ch".into(), json!(1))], "T".into(), "".into()).await.is_ok());
    let filed = sqlite.aget_tuple(&cfg(json!({"thread_id": "t", "checkpoint_id": ""}))).await.unwrap();
    assert!(filed.is_none(), "no checkpoint \"\" exists: the write is unreachable");
    let (postgres, schema) = postgres().await;
    let written = postgres.aput_writes(&no_id, vec![("T".into(), "ch".into(), json!(1))], "T".into(), "".into()).await;
    let filed: Result<i64, _> = sqlx::query_scalar("SELECT count(*) FROM checkpoint_writes WHERE checkpoint_id = ''")
        .fetch_one(postgres.pool())
        .await;
    compat_langgraph_rs::postgres::drop_schema(&schema).await.unwrap();
    assert_eq!((written.is_ok(), filed.unwrap()), (true, 1), "Postgres files the write under \"\"");
}

/// SQLite: a checkpoint put without a parent reads back with a parent config whose
/// `checkpoint_id` is `""` (the NULL column decoded as an empty string). LangGraph returns
/// no parent config.
#[tokio::test]
async fn sqlite_root_checkpoint_has_an_empty_id_parent() {
    let (saver, _dir) = sqlite().await;
    let (cp, nv) = checkpoint("c1", Some(json!(1)), json!(1));
    let c1 = saver.aput(&cfg(json!({"thread_id": "t"})), &cp, &CheckpointMetadata::default(), &nv).await.unwrap();
    let parent = saver.aget_tuple(&c1).await.unwrap().unwrap().parent_config.expect("a parent config");
    assert_eq!(parent["configurable"]["checkpoint_id"], json!(""));
}

/// SQLite: special writes keep the first value (first wins). `aput_writes` decides "all
/// special" by looking at the first element of each `(task_id, channel, value)` triple,
/// the task id, so it never takes the upsert path. LangGraph: special writes, last wins.
#[tokio::test]
async fn sqlite_special_write_first_wins() {
    let (saver, _dir) = sqlite().await;
    let (cp, nv) = checkpoint("c1", Some(json!(1)), json!(1));
    let c1 = saver.aput(&cfg(json!({"thread_id": "t"})), &cp, &CheckpointMetadata::default(), &nv).await.unwrap();
    for v in ["error-1", "error-2"] {
        saver.aput_writes(&c1, vec![("T".into(), "__error__".into(), json!(v))], "T".into(), "".into()).await.unwrap();
    }
    let writes = ids(&saver.aget_tuple(&c1).await.unwrap().unwrap().pending_writes);
    assert_eq!(writes, vec![("T".to_owned(), "__error__".to_owned(), json!("error-1"))]);
}

/// SQLite: two sibling checkpoints whose versions both come from the saver's own
/// `get_next_version` of the same version read the same value: the trait's default gives
/// `2` both times and values are keyed by (channel, version), first kept. LangGraph's
/// savers make versions that do not repeat (a random fraction) or store whole checkpoints.
#[tokio::test]
async fn sqlite_sibling_checkpoints_share_a_value() {
    let (saver, _dir) = sqlite().await;
    let v1 = saver.get_next_version(None);
    let (base, nv) = checkpoint("c1", Some(json!("base")), v1.clone());
    let parent = saver.aput(&cfg(json!({"thread_id": "t"})), &base, &CheckpointMetadata::default(), &nv).await.unwrap();
    let (left_v, right_v) = (saver.get_next_version(Some(&v1)), saver.get_next_version(Some(&v1)));
    assert_eq!(left_v, right_v);
    let (left, nv) = checkpoint("c2", Some(json!("left")), left_v);
    saver.aput(&parent, &left, &CheckpointMetadata::default(), &nv).await.unwrap();
    let (right, nv) = checkpoint("c3", Some(json!("right")), right_v);
    let right_cfg = saver.aput(&parent, &right, &CheckpointMetadata::default(), &nv).await.unwrap();
    let read = saver.aget_tuple(&right_cfg).await.unwrap().unwrap();
    assert_eq!(read.checkpoint.channel_values["a"], json!("left"));
}

/// Postgres: pending writes are stored but never read back (`aget_tuple` returns
/// `pending_writes: None`). LangGraph returns them.
#[tokio::test]
async fn postgres_pending_writes_never_read() {
    let (saver, schema) = postgres().await;
    let (cp, nv) = checkpoint("c1", Some(json!(1)), json!(1));
    let c1 = saver.aput(&cfg(json!({"thread_id": "t"})), &cp, &CheckpointMetadata::default(), &nv).await.unwrap();
    saver.aput_writes(&c1, vec![("T".into(), "ch".into(), json!("v"))], "T".into(), "".into()).await.unwrap();
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM checkpoint_writes").fetch_one(saver.pool()).await.unwrap();
    let read = saver.aget_tuple(&c1).await.unwrap().unwrap();
    compat_langgraph_rs::postgres::drop_schema(&schema).await.unwrap();
    assert_eq!((stored, read.pending_writes), (1, None));
}

/// Postgres: `alist` ignores the metadata filter (the WHERE clause builder drops it).
/// LangGraph filters on `metadata @> filter`.
#[tokio::test]
async fn postgres_list_ignores_filter() {
    let (saver, schema) = postgres().await;
    for (id, source) in [("c1", CheckpointSource::Input), ("c2", CheckpointSource::Loop)] {
        let (cp, nv) = checkpoint(id, Some(json!(1)), json!(1));
        let meta = CheckpointMetadata { source: Some(source), ..Default::default() };
        saver.aput(&cfg(json!({"thread_id": "t"})), &cp, &meta, &nv).await.unwrap();
    }
    let filter = HashMap::from([("source".to_owned(), json!("input"))]);
    let listed = saver.alist(Some(&cfg(json!({"thread_id": "t"}))), Some(&filter), None, None).await.unwrap();
    compat_langgraph_rs::postgres::drop_schema(&schema).await.unwrap();
    assert_eq!(listed.len(), 2, "c2 (source loop) is listed under filter source=input");
}

/// Postgres: a channel that is in `channel_versions` but not carried in `channel_values`
/// (unchanged since an earlier checkpoint) is missing on read although its value is in
/// `checkpoint_blobs`: reads use the checkpoint's inline JSON only. (A stricter-than-
/// LangGraph rule of the kit, docs/compat.md (c); shown here because the saver writes
/// the blob and never reads it.)
#[tokio::test]
async fn postgres_blobs_written_never_read() {
    let (saver, schema) = postgres().await;
    let (c1, nv) = checkpoint("c1", Some(json!(["hi"])), json!(1));
    let first = saver.aput(&cfg(json!({"thread_id": "t"})), &c1, &CheckpointMetadata::default(), &nv).await.unwrap();
    let (c2, _) = checkpoint("c2", None, json!(1));
    let second = saver.aput(&first, &c2, &CheckpointMetadata::default(), &HashMap::new()).await.unwrap();
    let blobs: i64 = sqlx::query_scalar("SELECT count(*) FROM checkpoint_blobs").fetch_one(saver.pool()).await.unwrap();
    let read = saver.aget_tuple(&second).await.unwrap().unwrap();
    compat_langgraph_rs::postgres::drop_schema(&schema).await.unwrap();
    assert_eq!((blobs, read.checkpoint.channel_values.get("a")), (1, None));
}

/// All savers of the family: metadata is the typed `CheckpointMetadata` (`source`, `step`,
/// `parents`, `run_id`), so every other key of LangGraph's metadata dict (and so every
/// `list` filter on one) is dropped on the way in. LangGraph stores any JSON key.
#[test]
fn typed_metadata_drops_other_keys() {
    let given = json!({"source": "input", "step": 1, "parents": {}, "custom_key": "custom_value"});
    let meta: CheckpointMetadata = serde_json::from_value(given).expect("deserialize");
    let saver = InMemorySaver::new();
    let (cp, nv) = checkpoint("c1", Some(json!(1)), json!(1));
    let c1 = saver.put(&cfg(json!({"thread_id": "t", "checkpoint_ns": ""})), &cp, &meta, &nv).unwrap();
    let read = serde_json::to_value(saver.get_tuple(&c1).unwrap().unwrap().metadata).unwrap();
    assert_eq!((read["step"].clone(), read.get("custom_key")), (json!(1), None));
}

/// memory: a checkpoint's parent is the greatest id already stored in its thread and
/// namespace, not the config's `checkpoint_id`: a fork from c1 gets parent c2, and a re-put
/// of c2 gets itself. LangGraph: the parent is the config's `checkpoint_id`.
#[test]
fn memory_parent_is_the_greatest_stored_id() {
    let (saver, c1) = memory_with_c1();
    let (cp, nv) = checkpoint("c2", Some(json!(2)), json!(2));
    let c2 = saver.put(&c1, &cp, &CheckpointMetadata::default(), &nv).unwrap();
    let (cp, nv) = checkpoint("c3", Some(json!(3)), json!(3));
    let fork = saver.put(&c1, &cp, &CheckpointMetadata::default(), &nv).unwrap();
    let parent = |at: &RunnableConfig| {
        saver.get_tuple(at).unwrap().unwrap().parent_config.unwrap()["configurable"]["checkpoint_id"].clone()
    };
    assert_eq!(parent(&fork), json!("c2"), "the fork from c1 has parent c2");
    let (cp, nv) = checkpoint("c2", Some(json!(2)), json!(2));
    saver.put(&c1, &cp, &CheckpointMetadata::default(), &nv).unwrap();
    assert_eq!(parent(&c2), json!("c3"), "c2 put again from c1 has parent c3");
}

/// SQLite and Postgres: putting an id again replaces its checkpoint and metadata but keeps
/// its old parent (the upsert's SET list has no `parent_checkpoint_id`, as LangGraph's own
/// PostgresSaver, docs/langgraph-savers.md B6). LangGraph's InMemory and SQLite savers, and
/// CONTRACT §2 put, replace the parent too.
#[tokio::test]
async fn sql_reput_keeps_the_old_parent() {
    async fn reput_parent<S: BaseCheckpointSaver>(saver: &S) -> Value {
        let root = cfg(json!({"thread_id": "t", "checkpoint_ns": ""}));
        let meta = CheckpointMetadata::default();
        let (p0, nv) = checkpoint("p0", Some(json!(0)), json!(1));
        let p0 = saver.aput(&root, &p0, &meta, &nv).await.unwrap();
        let (p1, nv) = checkpoint("p1", Some(json!(1)), json!(1));
        let p1 = saver.aput(&root, &p1, &meta, &nv).await.unwrap();
        let (x, nv) = checkpoint("x", Some(json!("first")), json!(2));
        saver.aput(&p0, &x, &meta, &nv).await.unwrap();
        let (x, nv) = checkpoint("x", Some(json!("second")), json!(3));
        let at = saver.aput(&p1, &x, &meta, &nv).await.unwrap();
        let read = saver.aget_tuple(&at).await.unwrap().unwrap();
        assert_eq!(read.checkpoint.channel_values["a"], json!("second"), "the checkpoint is replaced");
        read.parent_config.unwrap()["configurable"]["checkpoint_id"].clone()
    }
    let (sqlite, _dir) = sqlite().await;
    assert_eq!(reput_parent(&sqlite).await, json!("p0"), "SQLite");
    let (postgres, schema) = postgres().await;
    let parent = reput_parent(&postgres).await;
    compat_langgraph_rs::postgres::drop_schema(&schema).await.unwrap();
    assert_eq!(parent, json!("p0"), "Postgres");
}
