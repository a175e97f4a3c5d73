//! What the saver does about the server and the schema it is given rather than the calls it
//! is made: a schema migrated by a newer version of this crate, and connections whose
//! default isolation is not READ COMMITTED. Needs `CHECKPOINT_POSTGRES_URL`.

mod common;

use std::collections::BTreeMap;

use checkpoint_contract::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, TypedValue,
};
use checkpoint_postgres::{drop_schema, PostgresOptions, PostgresSaver};
use common::url;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

fn schema_name(what: &str) -> String {
    format!("checkpoint_pgtest_{what}_{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Checkpoint `id` carrying `values` (channel, version, JSON text), each a new version.
fn carrying(id: &str, values: &[(&str, i64, &str)]) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint { v: 4, id: id.into(), ts: "2024-01-01T00:00:00+00:00".into(), ..Checkpoint::default() };
    let mut new_versions = ChannelVersions::new();
    for (channel, version, json) in values {
        cp.channel_versions.insert((*channel).into(), ChannelVersion::Int(*version));
        cp.channel_values
            .insert((*channel).into(), TypedValue { type_tag: "json".into(), data: json.as_bytes().to_vec() });
        new_versions.insert((*channel).into(), ChannelVersion::Int(*version));
    }
    (cp, new_versions)
}

/// A saver set up on a fresh schema named after `what`, and the schema's name.
async fn on_fresh_schema(url: &str, what: &str) -> (PostgresSaver, String) {
    let schema = schema_name(what);
    let saver = PostgresSaver::connect_with(url, PostgresOptions::new().schema(schema.clone())).await.expect("setup");
    (saver, schema)
}

/// Closes `saver`'s pool and drops `schema`.
async fn close_and_drop(url: &str, saver: &PostgresSaver, schema: &str) {
    saver.pool().close();
    drop_schema(url, schema).await.expect("drop schema");
}

fn values_of(tuple: &checkpoint_contract::CheckpointTuple) -> BTreeMap<String, String> {
    tuple
        .checkpoint
        .channel_values
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.data).into_owned()))
        .collect()
}

#[tokio::test]
async fn a_schema_migrated_by_a_newer_saver_is_refused_at_setup() {
    let Some(url) = url() else { return };
    let (saver, schema) = on_fresh_schema(&url, "newer").await;
    let client = saver.pool().get().await.expect("connection");
    client.execute("INSERT INTO checkpoint_migrations (v) VALUES (1000)", &[]).await.expect("a future migration");
    drop(client);
    saver.pool().close();
    let again = PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema.clone())).await;
    drop_schema(&url, &schema).await.expect("drop schema");
    match again {
        Err(CheckpointError::InvalidConfig(message)) => {
            assert!(message.contains("version 1000") && message.contains("newer"), "{message}")
        }
        other => panic!("expected InvalidConfig naming the newer version, got {other:?}"),
    }
}

#[tokio::test]
async fn the_one_statement_put_refuses_to_run_above_read_committed() {
    let Some(url) = url() else { return };
    let (saver, schema) = on_fresh_schema(&url, "isolation").await;
    let mut client = saver.pool().get().await.expect("connection");
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .start()
        .await
        .expect("begin");
    let empty: Vec<String> = Vec::new();
    let no_bytes: Vec<Vec<u8>> = Vec::new();
    let refused = tx
        .execute(
            "SELECT checkpoint_put_carried($1, '', 'c1', NULL, '{}', '{}', $2, $2, $3, $2, $3)",
            &[&"t", &empty, &no_bytes],
        )
        .await
        .expect_err("a put at REPEATABLE READ reads a snapshot older than its locks");
    assert!(format!("{refused:?}").contains("READ COMMITTED"), "{refused:?}");
    drop(tx);
    drop(client);
    close_and_drop(&url, &saver, &schema).await;
}

/// A pool of the caller's whose sessions default to REPEATABLE READ: every transaction of the
/// saver still runs at READ COMMITTED, and a put of an id again keeps what others read.
#[tokio::test]
async fn a_callers_pool_defaulting_to_repeatable_read_loses_nothing() {
    let Some(url) = url() else { return };
    let schema = schema_name("rrpool");
    let mut pg: tokio_postgres::Config = url.parse().expect("url");
    pg.options(format!(r"-c search_path={schema} -c default_transaction_isolation=repeatable\ read"));
    let setup = PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema.clone())).await.expect("schema");
    setup.pool().close();
    let manager = Manager::from_config(pg, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    let pool = Pool::builder(manager).max_size(4).build().expect("pool");
    let saver = PostgresSaver::from_pool(pool);
    saver.setup().await.expect("setup");
    let root = CheckpointConfig::new("t");
    let (c1, nv1) = carrying("c1", &[("a", 1, "\"A\""), ("b", 1, "\"B\"")]);
    let c1_config = saver.put(&root, c1, CheckpointMetadata::new(), nv1).await.expect("put c1");
    // c2 inherits b from c1 (neither carried nor new), then c1 is put again without b.
    let (mut c2, nv2) = carrying("c2", &[("a", 2, "\"A2\"")]);
    c2.channel_versions.insert("b".into(), ChannelVersion::Int(1));
    saver.put(&c1_config, c2, CheckpointMetadata::new(), nv2).await.expect("put c2");
    let (again, nv) = carrying("c1", &[("a", 1, "\"A\"")]);
    saver.put(&root, again, CheckpointMetadata::new(), nv).await.expect("put c1 again");
    let c2 = saver.get_tuple(&root.clone().with_id("c2")).await.expect("get").expect("c2 stored");
    let expected = BTreeMap::from([("a".to_owned(), "\"A2\"".to_owned()), ("b".to_owned(), "\"B\"".to_owned())]);
    assert_eq!(values_of(&c2), expected, "c2 still reads the b it inherited");
    close_and_drop(&url, &saver, &schema).await;
}

/// The settings the saver's statements rely on, on every connection it opens itself:
/// durable commits, no JIT, no sequential scans (generic plans costed from skewed statistics
/// scanned `checkpoint_writes` once per listed checkpoint), READ COMMITTED.
#[tokio::test]
async fn every_connection_it_opens_runs_with_the_settings_its_statements_rely_on() {
    let Some(url) = url() else { return };
    let (saver, schema) = on_fresh_schema(&url, "settings").await;
    let client = saver.pool().get().await.expect("connection");
    let mut got = Vec::new();
    for name in ["synchronous_commit", "jit", "enable_seqscan", "default_transaction_isolation"] {
        let row = client.query_one("SELECT current_setting($1)", &[&name]).await.expect("setting");
        got.push((name, row.get::<_, String>(0)));
    }
    drop(client);
    close_and_drop(&url, &saver, &schema).await;
    assert_eq!(
        got,
        [
            ("synchronous_commit", "on".to_owned()),
            ("jit", "off".to_owned()),
            ("enable_seqscan", "off".to_owned()),
            ("default_transaction_isolation", "read committed".to_owned())
        ]
    );
}

/// Outside user (helper-53): LangGraph's PostgresSaver uses the same table names. Pointed at
/// its tables, setup failed on a missing function (an older LangGraph layout) or said a newer
/// checkpoint-postgres had migrated them and to upgrade; it now says whose they are, and
/// changes nothing.
#[tokio::test]
async fn langgraphs_tables_of_the_same_names_are_refused_unchanged() {
    let Some(url) = url() else { return };
    let schema = schema_name("langgraph");
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("connect");
    tokio::spawn(connection);
    // The shape of langgraph-checkpoint-postgres's first migrations (they record v from 0).
    client
        .batch_execute(&format!(
            "CREATE SCHEMA {schema};
             CREATE TABLE {schema}.checkpoint_migrations (v INTEGER PRIMARY KEY);
             INSERT INTO {schema}.checkpoint_migrations VALUES (0), (1), (2), (3);
             CREATE TABLE {schema}.checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
                 checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint JSONB NOT NULL,
                 metadata JSONB NOT NULL DEFAULT '{{}}', PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
             INSERT INTO {schema}.checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ('t', 'c1', '{{}}');"
        ))
        .await
        .expect("LangGraph's tables");
    let refused = PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema.clone())).await;
    let versions: Vec<i32> = client
        .query(&format!("SELECT v FROM {schema}.checkpoint_migrations ORDER BY v"), &[])
        .await
        .expect("versions")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema])
        .await
        .expect("tables")
        .get(0);
    drop_schema(&url, &schema).await.expect("drop schema");
    match refused {
        Err(CheckpointError::InvalidConfig(message)) => {
            assert!(message.contains("LangGraph's PostgresSaver") && message.contains("schema of its own"), "{message}")
        }
        other => panic!("expected InvalidConfig naming LangGraph's tables, got {other:?}"),
    }
    assert_eq!((versions, tables), (vec![0, 1, 2, 3], 2), "nothing was changed");
}
