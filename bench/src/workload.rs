//! The workloads, identical to `bench/python/bench.py`'s: what each figure puts, reads and
//! times. Inputs are built before the clock starts (in batches of [`BATCH`]), so a figure
//! times the saver's calls only; the Python script does the same with its savers.
//!
//! The data comes from the spec's builders (`conformance_spec::data`): fresh UUIDv7 ids and
//! [`Step`]s.

use std::time::{Duration, Instant};

use conformance_core::{CheckpointConfig, ListOptions, TypedValue};
use conformance_spec::data::{jv, new_ids, Step};
use serde_json::json;

use crate::Saver;

/// Inputs built ahead of a timed batch.
pub const BATCH: usize = 2_000;
/// Channels of every bench checkpoint.
pub const CHANNELS: usize = 10;

/// Step `step` of a chain: 10 channels, each a new JSON string value at version `step + 1`;
/// metadata `{source: "loop", step, parents: {}}`.
pub fn step(id: &str, step: usize) -> Step {
    let mut s = Step::new(id).meta("step", json!(step));
    for ch in 0..CHANNELS {
        s = s.value(&format!("channel_{ch}"), json!(format!("value {ch} at step {step}")), step as i64 + 1);
    }
    s
}

/// `n` steps starting at step `first`, with fresh increasing ids.
pub fn steps(first: usize, n: usize) -> Vec<Step> {
    new_ids(n).iter().enumerate().map(|(i, id)| step(id, first + i)).collect()
}

/// Puts `steps` in order on the chain ending at `cfg`; returns the new end and the time the
/// puts took.
pub async fn put_chain(saver: &Saver, mut cfg: CheckpointConfig, steps: Vec<Step>) -> (CheckpointConfig, Duration) {
    let start = Instant::now();
    for s in steps {
        cfg = saver.put(&cfg, s.checkpoint, s.metadata, s.new_versions).await.expect("put");
    }
    (cfg, start.elapsed())
}

/// A chain of `n` checkpoints on `thread` (untimed setup); returns the config of its latest.
pub async fn chain(saver: &Saver, thread: &str, n: usize) -> CheckpointConfig {
    let mut cfg = CheckpointConfig::new(thread);
    let mut done = 0;
    while done < n {
        let k = BATCH.min(n - done);
        cfg = put_chain(saver, cfg, steps(done, k)).await.0;
        done += k;
    }
    cfg
}

/// Chained puts of 10 channels on a fresh thread for at least `min`: puts per second of
/// put time.
pub async fn put_rate(saver: &Saver, thread: &str, min: Duration) -> f64 {
    let (mut cfg, mut spent, mut n) = (CheckpointConfig::new(thread), Duration::ZERO, 0);
    while spent < min {
        let (c, d) = put_chain(saver, cfg, steps(n, BATCH)).await;
        (cfg, spent, n) = (c, spent + d, n + BATCH);
    }
    n as f64 / spent.as_secs_f64()
}

/// The 5 writes of one `put_writes` call (channels `ch0`..`ch4`, small JSON objects).
pub fn writes(call: usize) -> Vec<(String, TypedValue)> {
    (0..5).map(|k| (format!("ch{k}"), jv(json!({"task": call, "k": k})))).collect()
}

/// `put_writes` of 5 writes, a new task id each call, against checkpoint `cfg`, for at least
/// `min`: calls per second of call time.
pub async fn put_writes_rate(saver: &Saver, cfg: &CheckpointConfig, tag: &str, min: Duration) -> f64 {
    let (mut spent, mut n) = (Duration::ZERO, 0);
    while spent < min {
        let batch: Vec<_> = (n..n + BATCH).map(|i| (writes(i), format!("task-{tag}-{i}"))).collect();
        let start = Instant::now();
        for (ws, task) in batch {
            saver.put_writes(cfg, ws, &task, "").await.expect("put_writes");
        }
        (spent, n) = (spent + start.elapsed(), n + BATCH);
    }
    n as f64 / spent.as_secs_f64()
}

/// `get_tuple` of the latest checkpoint of `cfg`'s thread for at least `min`: calls per second.
pub async fn get_rate(saver: &Saver, cfg: &CheckpointConfig, min: Duration) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    while n % 16 != 0 || start.elapsed() < min {
        assert!(saver.get_tuple(cfg).await.expect("get_tuple").is_some());
        n += 1;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

/// `list` of the whole 1,000-checkpoint `thread` for at least `min`: milliseconds per call.
pub async fn list_ms(saver: &Saver, thread: &str, min: Duration) -> f64 {
    let opts = ListOptions::all();
    let start = Instant::now();
    let mut n = 0u64;
    while n == 0 || start.elapsed() < min {
        assert_eq!(saver.list(thread, &opts).await.expect("list").len(), 1000);
        n += 1;
    }
    start.elapsed().as_secs_f64() * 1e3 / n as f64
}

/// Chained puts from 8 tasks, each on its own thread, `per_task` puts each (inputs built
/// before the clock starts): puts per second of wall time.
pub async fn concurrent_put_rate(saver: &Saver, tag: &str, per_task: usize) -> f64 {
    let inputs: Vec<Vec<Step>> = (0..8).map(|_| steps(0, per_task)).collect();
    let start = Instant::now();
    let handles: Vec<_> = inputs
        .into_iter()
        .enumerate()
        .map(|(task, steps)| {
            let saver = saver.clone();
            let cfg = CheckpointConfig::new(format!("conc-{tag}-{task}"));
            tokio::spawn(async move { put_chain(&saver, cfg, steps).await })
        })
        .collect();
    for h in handles {
        h.await.expect("concurrent put task");
    }
    (8 * per_task) as f64 / start.elapsed().as_secs_f64()
}

/// A case's fixture, as the harness makes and ends it around every case: `open`, then the
/// instance's close and the storage's removal. Repeated for at least `min` (16 times at
/// least): the median, in ms.
pub async fn case_setup_ms(reg: &conformance_core::Registration, min: Duration) -> f64 {
    let mut each = vec![];
    let began = Instant::now();
    while each.len() < 16 || began.elapsed() < min {
        let start = Instant::now();
        let (saver, (close, cleanup)) = crate::open_with_close(reg).await;
        drop(saver);
        crate::close(close).await;
        crate::close(cleanup).await;
        each.push(start.elapsed().as_secs_f64() * 1e3);
    }
    crate::median(each)
}

/// Bytes the data of a stored checkpoint takes as the kit's own types hold it (the
/// `Checkpoint` and its metadata of each of `n` steps, built and kept under the counting
/// allocator; `new_versions` is not kept): the floor of any saver that keeps the values it
/// returns from `get_tuple` ready to share rather than serialized.
pub fn data_bytes_per_checkpoint(n: usize) -> f64 {
    let ids = new_ids(n);
    crate::alloc::start();
    let kept: Vec<_> = ids.iter().enumerate().map(|(i, id)| step(id, i)).map(|s| (s.checkpoint, s.metadata)).collect();
    let live = crate::alloc::live();
    crate::alloc::stop();
    drop(kept);
    // The Vec's own slots are the bench's, not the data's.
    let slots = n * std::mem::size_of::<(conformance_core::Checkpoint, conformance_core::CheckpointMetadata)>();
    (live as f64 - slots as f64).max(0.0) / n as f64
}

/// Bytes a stored checkpoint takes in a fresh saver that `open` makes: `n` chained puts,
/// each step built just before its put, measured by the counting allocator from before the
/// saver is made until after the last put. Returns (live bytes per checkpoint after the puts, peak bytes per checkpoint
/// during them, payload bytes per checkpoint: the checkpoint, metadata and new_versions as
/// compact JSON).
pub async fn memory_per_checkpoint<F: std::future::Future<Output = Saver>>(open: F, n: usize) -> (f64, f64, f64) {
    // Each step is built under the count (what the saver keeps of it is the saver's); what
    // the bench allocates besides is freed within the iteration (the config of the latest
    // checkpoint aside, a few dozen bytes) and moves the peak by one step at most.
    let ids = new_ids(n);
    crate::alloc::start();
    let saver = open.await;
    let (mut cfg, mut payload) = (CheckpointConfig::new("memory"), 0usize);
    for (i, id) in ids.iter().enumerate() {
        let s = step(id, i);
        payload += serde_json::to_vec(&(&s.checkpoint, &s.metadata, &s.new_versions)).map(|v| v.len()).unwrap_or(0);
        cfg = saver.put(&cfg, s.checkpoint, s.metadata, s.new_versions).await.expect("put");
    }
    let (live, peak) = (crate::alloc::live(), crate::alloc::peak());
    crate::alloc::stop();
    drop(cfg);
    drop(saver);
    let per = |b: f64| b / n as f64;
    (per(live as f64), per(peak as f64), payload as f64 / n as f64)
}
