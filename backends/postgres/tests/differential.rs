//! Differential test: random sequences of every saver call, applied to the PostgreSQL saver
//! and to the reference in-memory saver, must give the same results, call by call.
//!
//! Seeded and bounded: `CHECKPOINT_POSTGRES_DIFF_SEEDS` seeds (default 12) of
//! `CHECKPOINT_POSTGRES_DIFF_OPS` calls (default 150), each seed on a fresh schema of the
//! server named by `CHECKPOINT_POSTGRES_URL` (the test says why it did not run without it).
//! The ids, channels, versions and values come from small pools so that re-puts, sibling
//! checkpoints, equal versions with different values, kind confusions (`1` vs `"1"`),
//! cycles in parent links and colliding write keys happen often.

use std::fmt::Debug;
use std::io::Write;

use checkpoint_memory::MemorySaver;
use checkpoint_postgres::{drop_schema, PostgresOptions, PostgresSaver};
use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, ListOptions, PruneStrategy, TypedValue,
};
use serde_json::{json, Value};

fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// splitmix64: a small, good-enough deterministic generator for test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
    fn subset<T: Clone>(&mut self, items: &[T], percent: u64) -> Vec<T> {
        items.iter().filter(|_| self.chance(percent)).cloned().collect()
    }
}

const THREADS: [&str; 3] = ["ta", "tb", "tc"];
const NAMESPACES: [&str; 3] = ["", "child:1", "child:2"];
const CHANNELS: [&str; 4] = ["a", "b", "c", "d"];
const WRITE_CHANNELS: [&str; 7] = ["a", "b", "x", "__error__", "__interrupt__", "__scheduled__", "__resume__"];
const RUNS: [&str; 4] = ["r0", "r1", "r2", "r-none"];

fn id(rng: &mut Rng) -> String {
    format!("c{:02}", rng.below(12))
}

fn version(rng: &mut Rng) -> ChannelVersion {
    match rng.below(6) {
        0 => ChannelVersion::Int(1),
        1 => ChannelVersion::Int(2),
        2 => ChannelVersion::Int(3),
        3 => ChannelVersion::Str("1".into()),
        4 => ChannelVersion::Str("00000000000000000000000000000002.5".into()),
        _ => ChannelVersion::Int(10),
    }
}

fn value(rng: &mut Rng) -> TypedValue {
    match rng.below(6) {
        0 => TypedValue::json(&json!("x")),
        1 => TypedValue::json(&json!({"n": 1})),
        2 => TypedValue::bytes(vec![0u8, 255, 0]),
        3 => TypedValue::bytes(Vec::new()),
        4 => TypedValue::new("msgpack", vec![0x92, 0x01, 0x02]),
        _ => TypedValue::json(&json!("y")),
    }
}

fn metadata(rng: &mut Rng) -> CheckpointMetadata {
    let mut m = CheckpointMetadata::new();
    m.insert("source".into(), json!(rng.pick(&["input", "loop", "update", "fork"])));
    m.insert("step".into(), json!(rng.below(4) as i64 - 1));
    if rng.chance(70) {
        m.insert("run_id".into(), json!(rng.pick(&RUNS[..3])));
    }
    if rng.chance(60) {
        m.insert("score".into(), rng.pick(&[json!(1), json!(1.0), json!(2), json!("1"), json!(1.5)]));
    }
    if rng.chance(50) {
        m.insert("flag".into(), rng.pick(&[json!(true), json!(1), json!(null), json!(false), json!(0)]));
    }
    if rng.chance(30) {
        m.insert("nested".into(), rng.pick(&[json!({"k": [1, 2]}), json!({"k": [1.0, 2]}), json!({"k": null})]));
    }
    m
}

fn filter_value(rng: &mut Rng, key: &str) -> Value {
    match key {
        "source" => json!(rng.pick(&["input", "loop", "fork"])),
        "step" => json!(rng.below(3) as i64 - 1),
        "run_id" => json!(rng.pick(&RUNS)),
        "score" => rng.pick(&[json!(1), json!(1.0), json!("1"), json!(2.0), json!(null)]),
        "flag" => rng.pick(&[json!(true), json!(1), json!(null), json!(0)]),
        "nested" => rng.pick(&[json!({"k": [1, 2]}), json!({"k": [1, 2.0]}), json!({"k": null}), json!({})]),
        _ => rng.pick(&[json!(null), json!(1)]),
    }
}

fn config(rng: &mut Rng, with_id: u64) -> CheckpointConfig {
    let mut c = CheckpointConfig::new(rng.pick(&THREADS)).with_ns(rng.pick(&NAMESPACES));
    if rng.chance(with_id) {
        c.checkpoint_id = Some(id(rng));
    }
    c
}

/// Compares two results of the same call; the error kinds must match too.
fn same<T: PartialEq + Debug>(
    label: &str,
    log: &[String],
    pg: &Result<T, CheckpointError>,
    mem: &Result<T, CheckpointError>,
) -> Result<(), String> {
    let ok = match (pg, mem) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.kind() == b.kind(),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let tail: Vec<&str> = log.iter().rev().take(25).rev().map(String::as_str).collect();
    Err(format!(
        "{label}: the PostgreSQL saver and the memory saver disagree\n  postgres: {pg:?}\n  memory:   {mem:?}\n\
         last calls:\n  {}",
        tail.join("\n  ")
    ))
}

async fn run_seed(url: &str, seed: u64, ops: usize) {
    let schema = format!("checkpoint_diff_{}_{seed}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let pg = PostgresSaver::connect_with(url, PostgresOptions::new().schema(schema.clone()).max_connections(2))
        .await
        .expect("connect");
    let outcome = compare_calls(&pg, seed, ops).await;
    drop(pg);
    // Dropped before reporting a disagreement, so a failing run leaves nothing behind.
    drop_schema(url, &schema).await.expect("drop schema");
    if let Err(message) = outcome {
        panic!("{message}");
    }
}

/// Runs `ops` random calls on `pg` and a fresh memory saver; the first disagreement.
async fn compare_calls(pg: &PostgresSaver, seed: u64, ops: usize) -> Result<(), String> {
    let mem = MemorySaver::new();
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xDEAD_BEEF);
    let mut log: Vec<String> = Vec::new();
    for step in 0..ops {
        let kind = rng.below(100);
        let label = format!("seed {seed} call {step}");
        if kind < 30 {
            let cfg = config(&mut rng, 60);
            let mut cp = Checkpoint {
                v: 1,
                id: if rng.chance(15) {
                    cfg.checkpoint_id.clone().unwrap_or_else(|| id(&mut rng))
                } else {
                    id(&mut rng)
                },
                ts: rng.pick(&["", "2026-11-29T21:03:59.727899+00:00"]).to_owned(),
                ..Checkpoint::default()
            };
            for ch in rng.subset(&CHANNELS, 60) {
                let v = version(&mut rng);
                cp.channel_versions.insert(ch.to_owned(), v);
                if rng.chance(55) {
                    cp.channel_values.insert(ch.to_owned(), value(&mut rng));
                }
            }
            if rng.chance(10) {
                cp.channel_values.insert("z".into(), value(&mut rng));
            }
            if rng.chance(40) {
                cp.versions_seen.insert("node".into(), cp.channel_versions.clone());
            }
            cp.updated_channels = rng.pick(&[None, Some(vec![]), Some(vec!["a".to_owned()])]);
            let mut new_versions = ChannelVersions::new();
            for (ch, v) in &cp.channel_versions {
                if rng.chance(50) {
                    new_versions.insert(ch.clone(), v.clone());
                }
            }
            let md = metadata(&mut rng);
            log.push(format!(
                "put({cfg}, id={}, versions={:?}, values={:?}, new={:?}, md={})",
                cp.id,
                cp.channel_versions,
                cp.channel_values.keys().collect::<Vec<_>>(),
                new_versions,
                Value::Object(md.clone())
            ));
            let a = pg.put(&cfg, cp.clone(), md.clone(), new_versions.clone()).await;
            let b = mem.put(&cfg, cp, md, new_versions).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 50 {
            let cfg = config(&mut rng, 95);
            let writes: Vec<(String, TypedValue)> =
                (0..rng.below(4)).map(|_| (rng.pick(&WRITE_CHANNELS).to_owned(), value(&mut rng))).collect();
            let task = rng.pick(&["t0", "t1", "t2"]);
            let path = rng.pick(&["", "p0", "p1"]);
            log.push(format!("put_writes({cfg}, {writes:?}, {task}, {path:?})"));
            let a = pg.put_writes(&cfg, writes.clone(), task, path).await;
            let b = mem.put_writes(&cfg, writes, task, path).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 62 {
            let cfg = config(&mut rng, 70);
            log.push(format!("get_tuple({cfg})"));
            let a = pg.get_tuple(&cfg).await;
            let b = mem.get_tuple(&cfg).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 80 {
            let thread = rng.pick(&THREADS);
            let mut opts = ListOptions::all();
            if rng.chance(50) {
                opts.checkpoint_ns = Some(rng.pick(&NAMESPACES).to_owned());
            }
            if rng.chance(10) {
                opts.checkpoint_id = Some(id(&mut rng));
            }
            if rng.chance(30) {
                opts.before = Some(if rng.chance(20) { format!("{}x", id(&mut rng)) } else { id(&mut rng) });
            }
            opts.limit = rng.pick(&[None, None, Some(0), Some(1), Some(2), Some(5)]);
            for _ in 0..rng.below(3) {
                let key = rng.pick(&["source", "step", "run_id", "score", "flag", "nested", "missing"]);
                let v = filter_value(&mut rng, key);
                opts.filter.insert(key.to_owned(), v);
            }
            log.push(format!("list({thread}, {opts:?})"));
            let a = pg.list(thread, &opts).await;
            let b = mem.list(thread, &opts).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 84 {
            let thread = rng.pick(&THREADS);
            log.push(format!("delete_thread({thread})"));
            let a = pg.delete_thread(thread).await;
            let b = mem.delete_thread(thread).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 87 {
            let runs: Vec<String> = rng.subset(&RUNS, 40).into_iter().map(str::to_owned).collect();
            log.push(format!("delete_for_runs({runs:?})"));
            let a = pg.delete_for_runs(&runs).await;
            let b = mem.delete_for_runs(&runs).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 91 {
            let (s, t) = (rng.pick(&THREADS), rng.pick(&THREADS));
            log.push(format!("copy_thread({s}, {t})"));
            let a = pg.copy_thread(s, t).await;
            let b = mem.copy_thread(s, t).await;
            same(&label, &log, &a, &b)?;
        } else if kind < 94 {
            let threads: Vec<String> = rng.subset(&THREADS, 40).into_iter().map(str::to_owned).collect();
            let strategy = if rng.chance(75) { PruneStrategy::KeepLatest } else { PruneStrategy::Delete };
            log.push(format!("prune({threads:?}, {strategy})"));
            let a = pg.prune(&threads, strategy).await;
            let b = mem.prune(&threads, strategy).await;
            same(&label, &log, &a, &b)?;
        } else {
            let cfg = config(&mut rng, 70);
            let channels: Vec<String> =
                rng.subset(&["a", "b", "c", "x", "__error__"], 50).into_iter().map(str::to_owned).collect();
            log.push(format!("delta_channel_history({cfg}, {channels:?})"));
            let a = pg.delta_channel_history(&cfg, &channels).await;
            let b = mem.delta_channel_history(&cfg, &channels).await;
            same(&label, &log, &a, &b)?;
        }
        if step % 25 == 24 {
            for thread in THREADS {
                let a = pg.list(thread, &ListOptions::all()).await;
                let b = mem.list(thread, &ListOptions::all()).await;
                same(&format!("{label}: full state of {thread}"), &log, &a, &b)?;
            }
        }
    }
    // No stored value outlives the last checkpoint that reads it without carrying it (a
    // carried value lives in its checkpoint's row, see migration 4).
    let client = pg.pool().get().await.map_err(|e| e.to_string())?;
    let orphans: i64 = client
        .query_one(
            "SELECT count(*) FROM checkpoint_blobs b WHERE NOT EXISTS (SELECT 1 FROM checkpoints c
             CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
                 AS r(channel, version, digest, data)
             WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND r.channel = b.channel
               AND r.version = b.version AND r.digest = b.digest AND r.data IS NULL)",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    if orphans != 0 {
        return Err(format!("seed {seed}: {orphans} stored value(s) that no checkpoint reads were left behind"));
    }
    Ok(())
}

#[tokio::test]
async fn postgres_saver_agrees_with_the_memory_saver() {
    let Ok(url) = std::env::var("CHECKPOINT_POSTGRES_URL") else {
        say("SKIPPED checkpoint-postgres differential test: CHECKPOINT_POSTGRES_URL is not set");
        assert!(
            std::env::var("CHECKPOINT_POSTGRES_REQUIRED").map_or(true, |v| v != "1"),
            "CHECKPOINT_POSTGRES_URL is not set and CHECKPOINT_POSTGRES_REQUIRED=1"
        );
        return;
    };
    let seeds: u64 = std::env::var("CHECKPOINT_POSTGRES_DIFF_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let ops: usize = std::env::var("CHECKPOINT_POSTGRES_DIFF_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(150);
    for seed in 0..seeds {
        run_seed(&url, seed, ops).await;
    }
    say(&format!("checkpoint-postgres differential test: {seeds} seeds x {ops} calls agreed"));
}
