//! A quick benchmark of the SQLite saver: durable put rate (alone and from 8 tasks),
//! `get_tuple` rate and `list` of 1,000 checkpoints, next to the disk's fdatasync rate.
//!
//! `cargo run --release -p checkpoint-sqlite --example bench [-- DIR]`

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use checkpoint_sqlite::{SqliteOptions, SqliteSaver, Synchronous};
use conformance_core::{ChannelVersion, Checkpoint, CheckpointConfig, CheckpointSaver, ListOptions, TypedValue};

fn step(id: String, i: i64) -> (Checkpoint, conformance_core::CheckpointMetadata, conformance_core::ChannelVersions) {
    let mut cp = Checkpoint { v: 1, id, ts: "2026-11-29T21:03:59.727899+00:00".into(), ..Checkpoint::default() };
    for ch in ["messages", "count", "branch:a"] {
        cp.channel_values.insert(ch.into(), TypedValue::json(&serde_json::json!({"i": i, "text": "hello world"})));
        cp.channel_versions.insert(ch.into(), ChannelVersion::Int(i + 1));
    }
    cp.versions_seen.insert("node".into(), [("messages".to_owned(), ChannelVersion::Int(i))].into());
    let meta = serde_json::json!({"source": "loop", "step": i, "parents": {}, "run_id": "r1"});
    let meta = meta.as_object().cloned().unwrap_or_default();
    let nv = cp.channel_versions.clone();
    (cp, meta, nv)
}

fn id(n: u64) -> String {
    format!("1f0{n:029}")
}

fn fsync_rate(dir: &std::path::Path) -> f64 {
    let path = dir.join("fsync-probe");
    let mut f = std::fs::File::create(&path).expect("probe file");
    let n = 200;
    let start = Instant::now();
    for _ in 0..n {
        f.write_all(&[0u8; 4096]).expect("write");
        f.sync_data().expect("fdatasync");
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(path);
    rate
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let base = std::env::args().nth(1).map(std::path::PathBuf::from);
    let dir = match &base {
        Some(b) => tempfile::tempdir_in(b),
        None => tempfile::tempdir(),
    }
    .expect("temp dir");
    println!("fdatasync (4 KiB appends): {:.0}/s", fsync_rate(dir.path()));

    let saver = SqliteSaver::open(dir.path().join("bench.sqlite")).expect("open");
    // Alone.
    let n = 300u64;
    let t = CheckpointConfig::new("alone");
    let start = Instant::now();
    let mut parent = t.clone();
    for i in 0..n {
        let (cp, meta, nv) = step(id(i), i as i64);
        parent = saver.put(&parent, cp, meta, nv).await.expect("put");
    }
    let alone = n as f64 / start.elapsed().as_secs_f64();
    println!("put, 1 task, durable: {alone:.0}/s");

    // 8 tasks.
    let saver = Arc::new(saver);
    let before = saver.writer_stats();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for k in 0..8 {
        let s = saver.clone();
        tasks.push(tokio::spawn(async move {
            let mut parent = CheckpointConfig::new(format!("task-{k}"));
            for i in 0..n {
                let (cp, meta, nv) = step(id(i), i as i64);
                parent = s.put(&parent, cp, meta, nv).await.expect("put");
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let eight = (8 * n) as f64 / start.elapsed().as_secs_f64();
    let after = saver.writer_stats();
    println!(
        "put, 8 tasks, durable: {eight:.0}/s ({:.1}x; {} requests in {} commits)",
        eight / alone,
        after.requests - before.requests,
        after.commits - before.commits
    );

    // get_tuple latest.
    saver
        .put_writes(&parent.clone(), vec![("messages".into(), TypedValue::json(&1.into()))], "task", "")
        .await
        .expect("put_writes");
    let latest = CheckpointConfig::new("alone");
    for tasks in [1usize, 8] {
        let dur = Duration::from_secs(2);
        let start = Instant::now();
        let mut handles = Vec::new();
        for _ in 0..tasks {
            let s = saver.clone();
            let cfg = latest.clone();
            handles.push(tokio::spawn(async move {
                let mut count = 0u64;
                while start.elapsed() < dur {
                    for _ in 0..100 {
                        let t = s.get_tuple(&cfg).await.expect("get").expect("some");
                        std::hint::black_box(t);
                    }
                    count += 100;
                }
                count
            }));
        }
        let mut total = 0;
        for h in handles {
            total += h.await.expect("task");
        }
        println!("get_tuple latest, {tasks} task(s): {:.0}/s", total as f64 / start.elapsed().as_secs_f64());
    }

    // list 1,000.
    let fast =
        SqliteSaver::open_with(dir.path().join("list.sqlite"), SqliteOptions::default().synchronous(Synchronous::Off))
            .expect("open");
    let mut parent = CheckpointConfig::new("big");
    for i in 0..1000u64 {
        let (cp, meta, nv) = step(id(i), i as i64);
        parent = fast.put(&parent, cp, meta, nv).await.expect("put");
    }
    let mut best = Duration::MAX;
    for _ in 0..20 {
        let start = Instant::now();
        let l = fast.list("big", &ListOptions::all()).await.expect("list");
        best = best.min(start.elapsed());
        assert_eq!(l.len(), 1000);
    }
    println!("list 1,000 checkpoints: best {:.2} ms", best.as_secs_f64() * 1e3);
    let mut best = Duration::MAX;
    for _ in 0..20 {
        let start = Instant::now();
        let l = fast.list("big", &ListOptions::all().filter("source", serde_json::json!("loop"))).await.expect("list");
        best = best.min(start.elapsed());
        assert_eq!(l.len(), 1000);
    }
    println!("list 1,000 checkpoints with a filter: best {:.2} ms", best.as_secs_f64() * 1e3);
}
