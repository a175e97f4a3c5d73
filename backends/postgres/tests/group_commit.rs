//! Group commit (issue 38): puts from 8 tasks at once share transactions, at most 0.3
//! commits per put, counted on the server as the transactions that inserted the test's own
//! checkpoint rows (their distinct `xmin`), so other work on a shared server (another test
//! binary, another run) does not count; and a put that fails in a group fails alone,
//! the others of its group stored (CONTRACT §2 put, §4).
//!
//! Needs the server named by `CHECKPOINT_POSTGRES_URL`; without it each test says why it
//! did not run (and fails when `CHECKPOINT_POSTGRES_REQUIRED=1`).

use checkpoint_postgres::{drop_schema, PostgresOptions, PostgresSaver};
use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, ListOptions, TypedValue,
};

mod common;
use common::url;

async fn saver(url: &str) -> (PostgresSaver, String) {
    let schema = format!("checkpoint_pggroup_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let saver = PostgresSaver::connect_with(url, PostgresOptions::new().schema(schema.clone()).max_connections(8))
        .await
        .expect("connect");
    (saver, schema)
}

/// Checkpoint `id` with one channel `a` at `version`, carried.
fn put_input(id: &str, version: i64) -> (Checkpoint, CheckpointMetadata, ChannelVersions) {
    let mut cp = Checkpoint { v: 1, id: id.to_owned(), ..Checkpoint::default() };
    let value = TypedValue { type_tag: "json".into(), data: format!("{version}").into_bytes() };
    cp.channel_versions.insert("a".into(), ChannelVersion::Int(version));
    cp.channel_values.insert("a".into(), value);
    let new_versions = cp.channel_versions.clone();
    (cp, CheckpointMetadata::new(), new_versions)
}

/// The transactions that inserted the checkpoints of `schema`, per checkpoint: each row's
/// `xmin` is the transaction that inserted it, so a group commit's puts share one.
async fn commits_per_put(client: &tokio_postgres::Client, schema: &str) -> f64 {
    let sql = format!("SELECT count(DISTINCT xmin::text)::float8 / count(*)::float8 FROM \"{schema}\".checkpoints");
    client.query_one(&sql, &[]).await.expect("count the inserting transactions").get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn puts_from_8_tasks_take_at_most_0_3_commits_each() {
    let Some(url) = url() else { return };
    let (saver, schema) = saver(&url).await;
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    const PER_TASK: usize = 40;
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let saver = saver.clone();
            tokio::spawn(async move {
                let mut cfg = CheckpointConfig::new(format!("t{task}"));
                for step in 0..PER_TASK {
                    let (cp, meta, nv) = put_input(&format!("{step:04}"), step as i64 + 1);
                    cfg = saver.put(&cfg, cp, meta, nv).await.expect("put");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let per_put = commits_per_put(&client, &schema).await;
    for task in 0..8 {
        let listed = saver.list(&format!("t{task}"), &ListOptions::all()).await.expect("list");
        assert_eq!(listed.len(), PER_TASK, "thread t{task} has every put");
    }
    saver.pool().close();
    drop_schema(&url, &schema).await.expect("drop schema");
    assert!(per_put <= 0.3, "{per_put:.3} commits per put from 8 tasks (at most 0.3)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_that_fails_in_a_group_fails_alone() {
    let Some(url) = url() else { return };
    let (saver, schema) = saver(&url).await;
    // An id no index row can hold (far over PostgreSQL's 8 KB page, even compressed): the
    // server refuses that put's INSERT.
    let too_long: String = (0..10_000).map(|_| uuid::Uuid::new_v4().simple().to_string()).collect();
    let puts = (0..16).map(|i| {
        let saver = saver.clone();
        let id = if i == 8 { too_long.clone() } else { format!("{i:04}") };
        async move {
            let (cp, meta, nv) = put_input(&id, 1);
            saver.put(&CheckpointConfig::new(format!("g{i}")), cp, meta, nv).await
        }
    });
    let outcomes = futures::future::join_all(puts).await;
    for (i, outcome) in outcomes.iter().enumerate() {
        if i == 8 {
            assert!(matches!(outcome, Err(CheckpointError::Storage { .. })), "the bad put fails: {outcome:?}");
        } else {
            assert!(outcome.is_ok(), "put {i} of the group is stored: {outcome:?}");
            let got = saver.get_tuple(&CheckpointConfig::new(format!("g{i}"))).await.expect("get");
            assert_eq!(got.map(|t| t.checkpoint.id.clone()), Some(format!("{i:04}")));
        }
    }
    assert!(saver.get_tuple(&CheckpointConfig::new("g8")).await.expect("get").is_none());
    saver.pool().close();
    drop_schema(&url, &schema).await.expect("drop schema");
}
