//! Migration 3 converts data stored in the layout of migrations 1 and 2: value references
//! move into the checkpoint rows and holders into marks, with the same reads and the same
//! resolution of an uncarried channel afterwards. Needs `CHECKPOINT_POSTGRES_URL`.

use std::collections::BTreeMap;

use checkpoint_contract::{ChannelVersion, Checkpoint, CheckpointConfig, CheckpointSaver, TypedValue};
use tokio_postgres::NoTls;

use super::MIGRATIONS;
use crate::{PostgresOptions, PostgresSaver};

/// Checkpoints c1 (a@1 = "one", b@1 = "bee"), c2 (child of c1: a@1 = "one", b@2 empty) and
/// c3 (a sibling: a@1 = "three"), as if put in the order c2, c3, c1: the holder of a@1 is
/// c1 although c3 has the greatest id there.
const OLD_DATA: &str = r#"
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, digest, type_tag, data)
SELECT 't', '', v.channel, v.version::jsonb,
       sha256(convert_to('json', 'UTF8') || decode('00', 'hex') || convert_to(v.data, 'UTF8')),
       'json', convert_to(v.data, 'UTF8')
FROM (VALUES ('a', '1', '"one"'), ('b', '1', '"bee"'), ('a', '1', '"three"')) AS v(channel, version, data);
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT 't', '', v.id, v.parent,
       ('{"v":4,"ts":"2024-01-01T00:00:00+00:00","channel_versions":' || v.versions
        || ',"versions_seen":{},"updated_channels":null}')::json, '{}'::json
FROM (VALUES ('c1', NULL, '{"a":1,"b":1}'), ('c2', 'c1', '{"a":1,"b":2}'), ('c3', NULL, '{"a":1}'))
    AS v(id, parent, versions);
INSERT INTO checkpoint_channels (thread_id, checkpoint_ns, checkpoint_id, channel, version, digest)
SELECT 't', '', v.id, v.channel, v.version::jsonb,
       CASE WHEN v.data IS NOT NULL THEN
           sha256(convert_to('json', 'UTF8') || decode('00', 'hex') || convert_to(v.data, 'UTF8')) END
FROM (VALUES ('c1', 'a', '1', '"one"'), ('c1', 'b', '1', '"bee"'), ('c2', 'a', '1', '"one"'),
             ('c2', 'b', '2', NULL), ('c3', 'a', '1', '"three"')) AS v(id, channel, version, data);
INSERT INTO checkpoint_value_holders (thread_id, checkpoint_ns, channel, version, holder_id)
VALUES ('t', '', 'a', '1', 'c1'), ('t', '', 'b', '1', 'c1');
"#;

fn json(text: &str) -> TypedValue {
    TypedValue { type_tag: "json".into(), data: text.as_bytes().to_vec() }
}

#[tokio::test]
async fn migration_3_keeps_reads_and_holders() {
    let Ok(url) = std::env::var(crate::URL_ENV) else {
        assert_ne!(std::env::var(crate::REQUIRED_ENV).as_deref(), Ok("1"), "{} is required", crate::URL_ENV);
        eprintln!("SKIPPED migration test: {} is not set", crate::URL_ENV);
        return;
    };
    let schema = format!("checkpoint_pgtest_mig_{}", std::process::id());
    let (mut client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("connect");
    tokio::spawn(connection);
    let old = format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; SET search_path = {schema};");
    client.batch_execute(&old).await.expect("schema");
    client.batch_execute("CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY)").await.unwrap();
    let tx = client.transaction().await.unwrap();
    for (i, sql) in MIGRATIONS[..2].iter().enumerate() {
        tx.batch_execute(sql).await.expect("old migration");
        tx.execute("INSERT INTO checkpoint_migrations (v) VALUES ($1)", &[&(i as i32 + 1)]).await.unwrap();
    }
    tx.batch_execute(OLD_DATA).await.expect("old data");
    tx.commit().await.unwrap();

    let saver = PostgresSaver::connect_with(&url, PostgresOptions::new().schema(schema.clone())).await.expect("setup");
    let read = |id: &str| {
        let saver = saver.clone();
        let config = CheckpointConfig { checkpoint_id: Some(id.to_owned()), ..CheckpointConfig::new("t") };
        async move { saver.get_tuple(&config).await.unwrap().expect("stored").checkpoint.channel_values.clone() }
    };
    assert_eq!(read("c1").await, BTreeMap::from([("a".into(), json("\"one\"")), ("b".into(), json("\"bee\""))]));
    assert_eq!(read("c2").await, BTreeMap::from([("a".into(), json("\"one\""))]));
    assert_eq!(read("c3").await, BTreeMap::from([("a".into(), json("\"three\""))]));

    // Without a parent, a@1 resolves to its holder's value (c1), not the greatest id's (c3).
    let checkpoint = Checkpoint {
        v: 4,
        id: "c4".into(),
        ts: "2024-01-01T00:00:00+00:00".into(),
        channel_values: BTreeMap::new(),
        channel_versions: BTreeMap::from([("a".into(), ChannelVersion::Int(1))]),
        versions_seen: BTreeMap::new(),
        updated_channels: None,
    };
    saver.put(&CheckpointConfig::new("t"), checkpoint, Default::default(), BTreeMap::new()).await.unwrap();
    assert_eq!(read("c4").await, BTreeMap::from([("a".into(), json("\"one\""))]));

    let left = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1
             AND table_name IN ('checkpoint_channels', 'checkpoint_value_holders')",
            &[&schema],
        )
        .await
        .unwrap();
    assert_eq!(left.get::<_, i64>(0), 0, "the old tables are dropped");
    drop(saver);
    client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await.unwrap();
}
