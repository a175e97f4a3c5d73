//! PostgreSQL-specific behaviour the shared catalog cannot state: what PostgreSQL cannot
//! store (NUL characters), exact JSON round trips, filter keys that look like SQL, setup run
//! by many instances at once, isolation between schemas, nothing left behind, big values,
//! cycles in parent links, and many writers at once.
//!
//! Needs the server named by `CHECKPOINT_POSTGRES_URL`; without it each test says why it
//! did not run (and fails when `CHECKPOINT_POSTGRES_REQUIRED=1`).

use std::io::Write;
use std::sync::Arc;

use checkpoint_postgres::{drop_schema, PostgresOptions, PostgresSaver};
use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, ListOptions, PruneStrategy, TypedValue,
};
use serde_json::{json, Value};

mod common;
use common::url;

/// A saver on a schema of its own, dropped by [`Scratch::finish`].
struct Scratch {
    url: String,
    schema: String,
    saver: PostgresSaver,
    finished: bool,
}

impl Scratch {
    async fn new(url: &str) -> Self {
        let schema = format!("checkpoint_pgtest_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let saver = PostgresSaver::connect_with(url, PostgresOptions::new().schema(schema.clone()).max_connections(8))
            .await
            .expect("connect");
        Self { url: url.to_owned(), schema, saver, finished: false }
    }

    async fn reopen(&self) -> PostgresSaver {
        PostgresSaver::connect_with(&self.url, PostgresOptions::new().schema(self.schema.clone()))
            .await
            .expect("reopen")
    }

    async fn finish(mut self) {
        self.saver.pool().close();
        drop_schema(&self.url, &self.schema).await.expect("drop schema");
        self.finished = true;
    }
}

impl Drop for Scratch {
    /// A test that failed before [`Scratch::finish`] still drops its schema.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.saver.pool().close();
        let (url, schema) = (self.url.clone(), self.schema.clone());
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(drop_schema(&url, &schema))
        })
        .join();
    }
}

fn checkpoint(id: &str, values: &[(&str, i64, TypedValue)]) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint { v: 1, id: id.to_owned(), ..Checkpoint::default() };
    let mut new_versions = ChannelVersions::new();
    for (ch, v, value) in values {
        cp.channel_versions.insert((*ch).to_owned(), ChannelVersion::Int(*v));
        cp.channel_values.insert((*ch).to_owned(), value.clone());
        new_versions.insert((*ch).to_owned(), ChannelVersion::Int(*v));
    }
    (cp, new_versions)
}

fn meta(pairs: &[(&str, Value)]) -> CheckpointMetadata {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

async fn listed(saver: &PostgresSaver, filter: Vec<(&'static str, Value)>) -> Vec<String> {
    let mut opts = ListOptions::all();
    for (k, v) in filter {
        opts.filter.insert(k.to_owned(), v);
    }
    ids(&saver.list("t1", &opts).await.unwrap())
}

fn ids(tuples: &[conformance_core::CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.config.checkpoint_id.clone().unwrap_or_default()).collect()
}

#[tokio::test]
async fn nul_in_metadata_is_refused_naming_the_key_and_nothing_is_stored() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("t1");
    let (cp, nv) = checkpoint("c1", &[("a", 1, TypedValue::json(&json!("v")))]);
    let md = meta(&[("fine", json!("ok")), ("note", json!({"deep": ["x", "a\u{0}b"]}))]);
    let err = s.saver.put(&cfg, cp.clone(), md, nv.clone()).await.unwrap_err();
    match &err {
        CheckpointError::InvalidInput(m) => assert!(m.contains("\"note\""), "message does not name the key: {m}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    assert!(s.saver.get_tuple(&cfg).await.unwrap().is_none(), "a refused put stored a checkpoint");
    assert!(s.saver.list("t1", &ListOptions::all()).await.unwrap().is_empty());

    // A NUL in a key is refused too.
    let err = s.saver.put(&cfg, cp.clone(), meta(&[("k\u{0}", json!(1))]), nv.clone()).await.unwrap_err();
    assert!(matches!(err, CheckpointError::InvalidInput(_)), "{err:?}");
    // ...and in a channel name, a thread id, a type tag.
    let (bad, bad_nv) = checkpoint("c1", &[("a\u{0}", 1, TypedValue::json(&json!(1)))]);
    assert!(matches!(s.saver.put(&cfg, bad, meta(&[]), bad_nv).await, Err(CheckpointError::InvalidInput(_))));
    let nul_thread = CheckpointConfig::new("t\u{0}");
    assert!(matches!(
        s.saver.put(&nul_thread, cp.clone(), meta(&[]), nv.clone()).await,
        Err(CheckpointError::InvalidInput(_))
    ));
    let (tagged, tagged_nv) = checkpoint("c1", &[("a", 1, TypedValue::new("js\u{0}n", b"1".to_vec()))]);
    assert!(matches!(s.saver.put(&cfg, tagged, meta(&[]), tagged_nv).await, Err(CheckpointError::InvalidInput(_))));
    assert!(s.saver.get_tuple(&cfg).await.unwrap().is_none());

    // Reads under names nothing can be stored under answer "nothing".
    assert!(s.saver.get_tuple(&nul_thread).await.unwrap().is_none());
    assert!(s.saver.list("t\u{0}", &ListOptions::all()).await.unwrap().is_empty());
    s.saver.delete_thread("t\u{0}").await.unwrap();

    // Strings of the checkpoint that are not keys round-trip losslessly, NUL included.
    let (mut ok, ok_nv) = checkpoint("c2", &[("a", 1, TypedValue::bytes(vec![0u8, 0, 1]))]);
    ok.ts = "x\u{0}y".into();
    ok.versions_seen.insert("no\u{0}de".into(), [("a".to_owned(), ChannelVersion::Str("v\u{0}".into()))].into());
    ok.updated_channels = Some(vec!["\u{0}".into()]);
    s.saver.put(&cfg, ok.clone(), meta(&[]), ok_nv).await.unwrap();
    let got = s.saver.get_tuple(&cfg.clone().with_id("c2")).await.unwrap().expect("c2");
    assert_eq!(*got.checkpoint, ok);
    s.finish().await;
}

#[tokio::test]
async fn metadata_round_trips_exactly_and_filters_compare_by_json_value() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("t1");
    let tricky = meta(&[
        ("float_like_int", json!(1e16)),
        ("big_float", json!(1.5e300)),
        ("tiny", json!(5e-324)),
        ("neg_zero", json!(-0.0)),
        ("u64_max", json!(u64::MAX)),
        ("i64_min", json!(i64::MIN)),
        ("one_point_zero", json!(1.0)),
        ("unicode", json!("héllo ☃ \u{1F600} \"quoted\" \\ back")),
        ("nested", json!({"a": [1, 2.5, null, true, {"b": "c"}], "": "empty key"})),
        ("null", Value::Null),
    ]);
    let (cp, nv) = checkpoint("c1", &[]);
    s.saver.put(&cfg, cp, tricky.clone(), nv).await.unwrap();
    let got = s.saver.get_tuple(&cfg).await.unwrap().expect("c1");
    assert_eq!(got.metadata, tricky);
    for (k, v) in &got.metadata {
        // Same JSON kind too (serde_json's Value equality distinguishes 1 and 1.0).
        assert_eq!(v.is_f64(), tricky[k].is_f64(), "{k}: kind changed");
        assert_eq!(v.is_u64(), tricky[k].is_u64(), "{k}: kind changed");
    }
    let (cp2, nv2) = checkpoint("c2", &[]);
    s.saver.put(&cfg, cp2, meta(&[("n", json!(1)), ("b", json!(true)), ("s", json!("1"))]), nv2).await.unwrap();
    let found = |filter: Vec<(&'static str, Value)>| listed(&s.saver, filter);
    assert_eq!(found(vec![("n", json!(1.0))]).await, ["c2"], "1 must equal 1.0");
    assert_eq!(found(vec![("one_point_zero", json!(1))]).await, ["c1"], "1.0 must equal 1");
    assert!(found(vec![("b", json!(1))]).await.is_empty(), "true must not equal 1");
    assert!(found(vec![("n", json!(true))]).await.is_empty(), "1 must not equal true");
    assert!(found(vec![("s", json!(1))]).await.is_empty(), "\"1\" must not equal 1");
    assert_eq!(found(vec![("null", Value::Null)]).await, ["c2", "c1"], "null matches a missing key and null");
    assert_eq!(found(vec![("n", Value::Null)]).await, ["c1"], "null does not match a present non-null value");
    assert_eq!(
        found(vec![("nested", json!({"a": [1.0, 2.5, null, true, {"b": "c"}], "": "empty key"}))]).await,
        ["c1"]
    );
    assert!(
        found(vec![("nested", json!({"a": [1, 2.5, null, true, {"b": "c"}]}))]).await.is_empty(),
        "no partial match"
    );
    assert_eq!(found(vec![("float_like_int", json!(10_000_000_000_000_000u64))]).await, ["c1"]);
    // Filter values PostgreSQL cannot hold: nothing stored can equal them.
    assert!(found(vec![("s", json!("\u{0}"))]).await.is_empty());
    assert_eq!(found(vec![("k\u{0}", Value::Null)]).await, ["c2", "c1"]);
    assert!(found(vec![("k\u{0}", json!(1))]).await.is_empty());
    s.finish().await;
}

#[tokio::test]
async fn filter_keys_that_look_like_sql_are_plain_keys() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("t1");
    let keys = [
        "a' OR '1'='1",
        "x\"); DROP TABLE checkpoints; --",
        "$1",
        "a.b",
        "a->b",
        "%",
        "_",
        "{a,b}",
        "' || pg_sleep(5) || '",
    ];
    for (i, key) in keys.iter().enumerate() {
        let (cp, nv) = checkpoint(&format!("c{i}"), &[]);
        s.saver.put(&cfg, cp, meta(&[(key, json!(i))]), nv).await.unwrap();
    }
    for (i, key) in keys.iter().enumerate() {
        let got = s.saver.list("t1", &ListOptions::all().filter(*key, json!(i))).await.unwrap();
        assert_eq!(ids(&got), [format!("c{i}")], "filter on key {key:?}");
    }
    // The table is still there and complete.
    assert_eq!(s.saver.list("t1", &ListOptions::all()).await.unwrap().len(), keys.len());
    s.finish().await;
}

#[tokio::test]
async fn before_with_a_nul_cuts_at_the_nul() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("t1");
    for id in ["a", "a0", "b"] {
        let (cp, nv) = checkpoint(id, &[]);
        s.saver.put(&cfg, cp, meta(&[]), nv).await.unwrap();
    }
    let got = s.saver.list("t1", &ListOptions::all().before("a\u{0}z")).await.unwrap();
    assert_eq!(ids(&got), ["a"], "\"a\" < \"a\\0z\" < \"a0\"");
    s.finish().await;
}

#[tokio::test]
async fn setup_is_idempotent_and_safe_when_many_instances_run_it_at_once() {
    let Some(url) = url() else { return };
    let schema = format!("checkpoint_pgtest_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            let schema = schema.clone();
            tokio::spawn(async move {
                PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema).max_connections(1)).await
            })
        })
        .collect();
    let mut savers = Vec::new();
    for t in tasks {
        savers.push(t.await.unwrap().expect("setup from one of 8 concurrent instances failed"));
    }
    savers[0].setup().await.expect("a second setup");
    let client = savers[0].pool().get().await.unwrap();
    let rows = client.query("SELECT v FROM checkpoint_migrations ORDER BY v", &[]).await.unwrap();
    let versions: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(versions, [1, 2, 3, 4], "each migration recorded once");
    drop(client);
    drop(savers);
    drop_schema(&url, &schema).await.unwrap();
}

#[tokio::test]
async fn schemas_isolate_savers_and_a_reopened_instance_sees_committed_data() {
    let Some(url) = url() else { return };
    let a = Scratch::new(&url).await;
    let b = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("same-thread").with_id("c1");
    let (cp, nv) = checkpoint("c1", &[("a", 1, TypedValue::json(&json!("A")))]);
    a.saver.put(&cfg.clone().without_id(), cp, meta(&[]), nv).await.unwrap();
    a.saver.put_writes(&cfg, vec![("ch".into(), TypedValue::json(&json!(1)))], "task", "").await.unwrap();
    assert!(b.saver.get_tuple(&cfg).await.unwrap().is_none(), "schema b sees schema a's checkpoint");
    let again = a.reopen().await;
    drop(a.saver.clone());
    let got = again.get_tuple(&cfg).await.unwrap().expect("the reopened instance sees c1");
    assert_eq!(got.pending_writes.len(), 1);
    assert_eq!(got.checkpoint.channel_values["a"], TypedValue::json(&json!("A")));
    drop(again);
    a.finish().await;
    b.finish().await;
}

#[tokio::test]
async fn big_and_binary_values_round_trip_byte_for_byte() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let cfg = CheckpointConfig::new("t1");
    let big: Vec<u8> = (0..(16 * 1024 * 1024 + 3)).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let odd = TypedValue::new("", vec![0xff, 0x00, 0xfe, 0x80]);
    let (cp, nv) = checkpoint("c1", &[("big", 1, TypedValue::bytes(big.clone())), ("odd", 1, odd.clone())]);
    s.saver.put(&cfg, cp, meta(&[]), nv).await.unwrap();
    s.saver
        .put_writes(&cfg.clone().with_id("c1"), vec![("w".into(), TypedValue::bytes(big.clone()))], "t", "")
        .await
        .unwrap();
    let got = s.saver.get_tuple(&cfg).await.unwrap().expect("c1");
    assert!(got.checkpoint.channel_values["big"].data == big, "16 MiB value changed");
    assert_eq!(got.checkpoint.channel_values["odd"], odd);
    assert!(got.pending_writes[0].value.data == big, "16 MiB write changed");
    s.finish().await;
}

#[tokio::test]
async fn delta_history_stops_on_a_cycle_of_parent_links() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let root = CheckpointConfig::new("t1");
    // c1 (parent c2) and c2 (parent c1): a cycle; c3 is the target, parent c1.
    for (id, parent) in [("c1", "c2"), ("c2", "c1"), ("c3", "c1")] {
        let (cp, nv) = checkpoint(id, &[]);
        s.saver.put(&root.clone().with_id(parent), cp, meta(&[]), nv).await.unwrap();
        s.saver
            .put_writes(&root.clone().with_id(id), vec![("ch".into(), TypedValue::json(&json!(id)))], "t", "")
            .await
            .unwrap();
    }
    let got = s.saver.delta_channel_history(&root.clone().with_id("c3"), &["ch".to_owned()]).await.unwrap();
    let writes: Vec<Value> = got["ch"].writes.iter().map(|w| w.value.as_json().unwrap()).collect();
    // Walk: c1, c2, then c1 again (stop). Oldest first.
    assert_eq!(writes, [json!("c2"), json!("c1")]);
    assert!(got["ch"].seed.is_none());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_and_maintenance_at_once_lose_nothing() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let other = Arc::new(s.reopen().await);
    let saver = Arc::new(s.saver.clone());
    let cfg = CheckpointConfig::new("t1");
    let (cp, nv) = checkpoint("c1", &[("a", 1, TypedValue::json(&json!("A")))]);
    saver.put(&cfg, cp, meta(&[]), nv).await.unwrap();
    let c1 = cfg.clone().with_id("c1");
    let mut tasks = Vec::new();
    for i in 0..50 {
        let saver = if i % 2 == 0 { saver.clone() } else { other.clone() };
        let c1 = c1.clone();
        tasks.push(tokio::spawn(async move {
            saver.put_writes(&c1, vec![("ch".into(), TypedValue::json(&json!(i)))], &format!("task-{i}"), "").await
        }));
    }
    // Children of c1 that only inherit `a`, put while other threads are pruned and copied.
    for i in 0..20 {
        let writer = if i % 2 == 0 { saver.clone() } else { other.clone() };
        let c1 = c1.clone();
        tasks.push(tokio::spawn(async move {
            let mut cp = Checkpoint { v: 1, id: format!("k{i:02}"), ..Checkpoint::default() };
            cp.channel_versions.insert("a".into(), ChannelVersion::Int(1));
            writer.put(&c1, cp, meta(&[]), ChannelVersions::new()).await.map(|_| ())
        }));
        let saver2 = saver.clone();
        tasks.push(tokio::spawn(async move {
            saver2.copy_thread("t1", &format!("copy-{i}")).await?;
            saver2.prune(&[format!("copy-{i}")], PruneStrategy::KeepLatest).await
        }));
    }
    for t in tasks {
        t.await.unwrap().expect("a concurrent call failed");
    }
    let got = saver.get_tuple(&c1).await.unwrap().expect("c1");
    assert_eq!(got.pending_writes.len(), 50, "lost writes");
    for t in saver.list("t1", &ListOptions::all()).await.unwrap() {
        assert_eq!(
            t.checkpoint.channel_values.get("a"),
            Some(&TypedValue::json(&json!("A"))),
            "{} lost its inherited value",
            t.config
        );
    }
    for i in 0..20 {
        let kept = saver.list(&format!("copy-{i}"), &ListOptions::all()).await.unwrap();
        assert_eq!(kept.len(), 1, "prune keep_latest of copy-{i}");
        assert_eq!(kept[0].checkpoint.channel_values.get("a"), Some(&TypedValue::json(&json!("A"))));
    }
    drop(other);
    s.finish().await;
}

/// Timing smoke test on a long thread (ignored by default: run with `--ignored`): 2000
/// checkpoints in a chain, each carrying one changed channel of three, then the reads that
/// must not scan the thread.
#[tokio::test]
#[ignore = "timing smoke test; run with --ignored"]
async fn long_thread_reads_stay_fast() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let root = CheckpointConfig::new("long");
    let start = std::time::Instant::now();
    let mut parent: Option<String> = None;
    for i in 0..2000i64 {
        let id = format!("c{i:06}");
        let mut cp = Checkpoint { v: 1, id: id.clone(), ..Checkpoint::default() };
        for (ch, v) in [("a", 1), ("b", 1), ("n", i + 1)] {
            cp.channel_versions.insert(ch.into(), ChannelVersion::Int(v));
        }
        cp.channel_values.insert("n".into(), TypedValue::json(&json!(i)));
        if i == 0 {
            cp.channel_values.insert("a".into(), TypedValue::json(&json!("A")));
            cp.channel_values.insert("b".into(), TypedValue::json(&json!("B")));
        }
        let nv: ChannelVersions = [("n".to_owned(), ChannelVersion::Int(i + 1))].into();
        let cfg = match &parent {
            Some(p) => root.clone().with_id(p.clone()),
            None => root.clone(),
        };
        s.saver.put(&cfg, cp, meta(&[("step", json!(i))]), nv).await.unwrap();
        s.saver
            .put_writes(&root.clone().with_id(id.clone()), vec![("n".into(), TypedValue::json(&json!(i)))], "t", "")
            .await
            .unwrap();
        parent = Some(id);
    }
    let put_time = start.elapsed();
    let t = std::time::Instant::now();
    for _ in 0..50 {
        let got = s.saver.get_tuple(&root).await.unwrap().unwrap();
        assert_eq!(got.checkpoint.channel_values.len(), 3);
    }
    let get_time = t.elapsed() / 50;
    let t = std::time::Instant::now();
    for _ in 0..50 {
        assert_eq!(s.saver.list("long", &ListOptions::all().limit(10)).await.unwrap().len(), 10);
    }
    let list_time = t.elapsed() / 50;
    let t = std::time::Instant::now();
    let got = s.saver.list("long", &ListOptions::all().filter("step", json!(3)).limit(1)).await.unwrap();
    assert_eq!(ids(&got), ["c000003"]);
    let filter_time = t.elapsed();
    let t = std::time::Instant::now();
    let h = s.saver.delta_channel_history(&root, &["a".to_owned(), "n".to_owned()]).await.unwrap();
    assert_eq!(h["n"].writes.len(), 1);
    assert_eq!(h["a"].writes.len(), 0);
    let delta_time = t.elapsed();
    let _ = writeln!(
        std::io::stderr(),
        "2000 puts+put_writes: {put_time:?} ({:?} per pair); get_tuple latest: {get_time:?}; list limit 10: \
         {list_time:?}; list filter step=3 limit 1: {filter_time:?}; delta history (2 channels): {delta_time:?}",
        put_time / 2000
    );
    s.finish().await;
}

/// [`checkpoint_postgres::PostgresStorage`] without its lifespan (whose teardown would drop
/// leftovers by prefix): the storage's create, open and destroy only.
struct NoLifespan(checkpoint_postgres::PostgresStorage);

#[conformance_core::async_trait]
impl conformance_core::Storage for NoLifespan {
    type Saver = PostgresSaver;
    async fn create(&self) -> Result<String, conformance_core::BoxError> {
        self.0.create().await
    }
    async fn open(&self, location: &str) -> Result<PostgresSaver, conformance_core::BoxError> {
        self.0.open(location).await
    }
    async fn destroy(&self, location: &str) -> Result<(), conformance_core::BoxError> {
        self.0.destroy(location).await
    }
}

/// Each case's cleanup drops its schema: a [`checkpoint_postgres::PostgresStorage`]
/// registration without the lifespan ([`NoLifespan`]) leaves no schema of its prefix after
/// the cases that open one and two instances (put, concurrency, durability without the
/// crash test, which needs a binary that re-executes itself: `tests/conformance.rs` runs
/// it).
#[test]
fn every_case_drops_its_schema() {
    use conformance_core::{Capability, Registration, RunOptions};
    let Some(url) = url() else { return };
    let prefix = format!("checkpoint_clean_{}_", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let storage = NoLifespan(checkpoint_postgres::PostgresStorage::new(&url, &prefix));
    let registration = Registration::persistent("postgres", storage);
    let cases: Vec<_> = conformance_spec::catalog()
        .into_iter()
        .filter(|c| matches!(c.capability, Capability::Put | Capability::Concurrency | Capability::Durability))
        .filter(|c| c.name != "acknowledged_writes_survive_kill")
        .collect();
    let report = conformance_core::run::run(&registration, &cases, &RunOptions { jobs: 4, ..RunOptions::default() });
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(report.case_counts().0 > 20, "too few cases ran: {:?}", report.case_counts());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let left = rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(connection);
        let rows = client
            .query("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname::text, $1)", &[&prefix])
            .await
            .expect("query");
        rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>()
    });
    assert_eq!(left, Vec::<String>::new(), "schemas left behind after the run");
}

/// The distinct values stored in `schema`: a (thread, namespace, channel, version, digest)
/// in `checkpoint_blobs` or carried in a checkpoint's row (a value in both counts once).
async fn stored_values(saver: &PostgresSaver, schema: &str) -> i64 {
    let client = saver.pool().get().await.expect("connection");
    let sql = format!(
        "SELECT count(*) FROM (
            SELECT thread_id, checkpoint_ns, channel, version, digest FROM {schema}.checkpoint_blobs
          UNION
            SELECT c.thread_id, c.checkpoint_ns, r.channel, r.version, r.digest FROM {schema}.checkpoints c
            CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
                AS r(channel, version, digest, data)
            WHERE r.data IS NOT NULL) AS v"
    );
    client.query_one(&sql, &[]).await.expect("count").get(0)
}

#[tokio::test]
async fn putting_an_id_again_removes_the_values_only_it_read() {
    let Some(url) = url() else { return };
    let s = Scratch::new(&url).await;
    let root = CheckpointConfig::new("t1");
    let c1 = root.clone().with_id("c1");
    let (cp, nv) =
        checkpoint("c1", &[("a", 1, TypedValue::json(&json!("A1"))), ("b", 1, TypedValue::json(&json!("B")))]);
    s.saver.put(&root, cp, meta(&[]), nv).await.unwrap();
    // c2 carries a new `a` and inherits `b` from its parent (neither carried nor new).
    let (mut cp, nv) = checkpoint("c2", &[("a", 2, TypedValue::json(&json!("A2")))]);
    cp.channel_versions.insert("b".into(), ChannelVersion::Int(1));
    s.saver.put(&c1, cp.clone(), meta(&[]), nv.clone()).await.unwrap();
    assert_eq!(stored_values(&s.saver, &s.schema).await, 3, "a@1, b@1, a@2");
    // c1 again with another `a` at version 1: its old `a` is read by nobody now; `b` is
    // still read by c1 and c2.
    let (again, nv1) =
        checkpoint("c1", &[("a", 1, TypedValue::json(&json!("A1x"))), ("b", 1, TypedValue::json(&json!("B")))]);
    s.saver.put(&root, again, meta(&[]), nv1).await.unwrap();
    assert_eq!(stored_values(&s.saver, &s.schema).await, 3, "the old a@1 is removed when c1 is put again");
    // c2 again, unchanged, then with another `a` at version 2.
    s.saver.put(&c1, cp.clone(), meta(&[]), nv.clone()).await.unwrap();
    assert_eq!(stored_values(&s.saver, &s.schema).await, 3, "re-putting c2 unchanged keeps its values");
    // c3 inherits both from c2; then c2 again with another `a` at version 2: the old a@2
    // stays (c3 reads it), the new one is added.
    let c2 = root.clone().with_id("c2");
    let mut c3 = Checkpoint { v: 1, id: "c3".into(), ..Checkpoint::default() };
    c3.channel_versions = cp.channel_versions.clone();
    s.saver.put(&c2, c3, meta(&[]), ChannelVersions::new()).await.unwrap();
    cp.channel_values.insert("a".into(), TypedValue::json(&json!("A3")));
    s.saver.put(&c1, cp.clone(), meta(&[]), nv.clone()).await.unwrap();
    assert_eq!(stored_values(&s.saver, &s.schema).await, 4, "a@2 of c3 stays when c2 is put again");
    let got = s.saver.get_tuple(&root.clone().with_id("c3")).await.unwrap().expect("c3");
    assert_eq!(got.checkpoint.channel_values["a"], TypedValue::json(&json!("A2")), "c3 reads the a@2 it inherited");
    let got = s.saver.get_tuple(&c2).await.unwrap().expect("c2");
    assert_eq!(got.checkpoint.channel_values["a"], TypedValue::json(&json!("A3")));
    assert_eq!(got.checkpoint.channel_values["b"], TypedValue::json(&json!("B")), "b, inherited, is still read");
    let got = s.saver.get_tuple(&c1).await.unwrap().expect("c1");
    assert_eq!(got.checkpoint.channel_values["a"], TypedValue::json(&json!("A1x")));
    s.saver.delete_thread("t1").await.unwrap();
    assert_eq!(stored_values(&s.saver, &s.schema).await, 0, "delete_thread leaves no value");
    s.finish().await;
}

/// Issue 40 row 2: with `create_schema(false)` setup does not make a missing schema (the
/// kit makes its schemas itself, each with its marker, and one dropped by an interrupt must
/// not come back unmarked from a setup still on its way): it fails, and no schema appears.
#[tokio::test]
async fn setup_without_create_schema_fails_on_a_missing_schema_and_makes_none() {
    let Some(url) = url() else { return };
    let schema = format!("checkpoint_nocreate_{}", std::process::id());
    let options = PostgresOptions::new().schema(schema.clone()).create_schema(false).max_connections(1);
    match PostgresSaver::connect_with(&url, options).await {
        Err(checkpoint_postgres::CheckpointError::InvalidConfig(m)) => {
            assert!(m.contains(&schema) && m.contains("does not exist"), "{m}")
        }
        other => panic!("setup made or found {schema}: {other:?}"),
    }
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connects");
    tokio::spawn(connection);
    let n: i64 = client
        .query_one("SELECT count(*) FROM pg_namespace WHERE nspname = $1", &[&schema])
        .await
        .expect("counted")
        .get(0);
    assert_eq!(n, 0, "{schema} was made");
    let made = PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema.clone()).max_connections(1))
        .await
        .expect("with create_schema (the default) setup makes it");
    made.pool().close();
    drop_schema(&url, &schema).await.expect("dropped");
}
