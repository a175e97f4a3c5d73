//! `conformance-bench`: measures one reference saver (or the disk) and prints JSON.
//!
//! Run through `cargo xtask bench`, which builds it in release mode, runs it once per backend
//! in its own process (so peak memory is per backend) and assembles the table. Every figure
//! is the median of `--reps` repetitions; each repetition runs an operation for at least
//! `--min-ms` milliseconds (or a fixed count where stated).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use conformance_core::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions, RunOptions,
    TypedValue,
};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    Memory,
    Sqlite,
    /// The PostgreSQL saver on the server named by `CHECKPOINT_POSTGRES_URL`.
    Postgres,
    /// The disk itself: small appends, each followed by fdatasync.
    Disk,
}

#[derive(Parser, Debug)]
#[command(about = "Benchmark one reference saver (or the disk) and print JSON")]
struct Args {
    /// What to measure.
    #[arg(long, value_enum)]
    target: Target,
    /// Repetitions per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Minimum duration of one repetition of a throughput figure, in milliseconds.
    #[arg(long, default_value_t = 300)]
    min_ms: u64,
    /// Directory for database files (default: a fresh temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return f64::NAN;
    }
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// A figure: median and every repetition.
fn figure(unit: &str, reps: Vec<f64>) -> Value {
    json!({"median": median(reps.clone()), "unit": unit, "reps": reps})
}

fn step_checkpoint(id: String, step: i64) -> (Checkpoint, CheckpointMetadata, BTreeMap<String, ChannelVersion>) {
    let mut cp = Checkpoint { v: 1, id, ts: "2026-11-29T00:00:00+00:00".into(), ..Checkpoint::default() };
    let mut nv = BTreeMap::new();
    for ch in 0..10 {
        let name = format!("channel_{ch}");
        cp.channel_values.insert(name.clone(), TypedValue::json(&json!(format!("value {ch} at step {step}"))));
        cp.channel_versions.insert(name.clone(), ChannelVersion::Int(step + 1));
        nv.insert(name, ChannelVersion::Int(step + 1));
    }
    let md = match json!({"source": "loop", "step": step, "parents": {}}) {
        Value::Object(m) => m,
        _ => CheckpointMetadata::new(),
    };
    (cp, md, nv)
}

struct Ids(u64);
impl Ids {
    /// Zero-padded increasing ids: string order is creation order.
    fn next(&mut self) -> String {
        self.0 += 1;
        format!("{:020}", self.0)
    }
}

type Saver = Arc<dyn CheckpointSaver>;

async fn chain(saver: &Saver, thread: &str, n: usize, ids: &mut Ids) -> CheckpointConfig {
    let mut cfg = CheckpointConfig::new(thread);
    for step in 0..n {
        let (cp, md, nv) = step_checkpoint(ids.next(), step as i64);
        cfg = saver.put(&cfg, cp, md, nv).await.expect("put failed during setup");
    }
    cfg
}

/// Times a loop: `while t.going() { ...; t.tick() }` runs for at least `min`.
struct Timer {
    start: Instant,
    min: Duration,
    n: u64,
}

impl Timer {
    fn new(min: Duration) -> Self {
        Self { start: Instant::now(), min, n: 0 }
    }
    fn going(&self) -> bool {
        !self.n.is_multiple_of(16) || self.start.elapsed() < self.min
    }
    fn tick(&mut self) {
        self.n += 1;
    }
    /// Operations per second.
    fn rate(&self) -> f64 {
        self.n as f64 / self.start.elapsed().as_secs_f64()
    }
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn fsync_rate(dir: &Path, min: Duration) -> f64 {
    let path = dir.join("fsync-probe.bin");
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("open probe file");
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < min {
        f.write_all(&[0x5a; 100]).expect("append");
        f.sync_data().expect("fdatasync");
        n += 1;
    }
    let r = n as f64 / start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    r
}

async fn open(target: Target, dir: &Path, name: &str) -> Saver {
    match target {
        Target::Memory => Arc::new(checkpoint_memory::MemorySaver::new()),
        Target::Sqlite => sqlite_saver(dir, name),
        Target::Postgres => {
            let schema = bench_schema(name);
            let options = checkpoint_postgres::PostgresOptions::new().schema(schema);
            match checkpoint_postgres::PostgresSaver::connect_with(&postgres_url(), options).await {
                Ok(s) => Arc::new(s),
                Err(e) => {
                    eprintln!("cannot connect the PostgreSQL saver: {e}");
                    std::process::exit(2)
                }
            }
        }
        Target::Disk => unreachable!("the disk has no saver"),
    }
}

/// The schema the PostgreSQL bench saver named `name` uses (dropped at the end).
fn bench_schema(name: &str) -> String {
    format!("bench_{}_{}", name, std::process::id())
}

/// `CHECKPOINT_POSTGRES_URL`, which `cargo xtask bench` sets (starting a throwaway server
/// when it is not set).
fn postgres_url() -> String {
    match std::env::var("CHECKPOINT_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            eprintln!("--target postgres needs CHECKPOINT_POSTGRES_URL");
            std::process::exit(2)
        }
    }
}

fn registration(target: Target) -> conformance_core::Registration {
    match target {
        Target::Memory => checkpoint_memory::registration(),
        Target::Sqlite => sqlite_registration(),
        Target::Postgres => checkpoint_postgres::registration(&postgres_url()),
        Target::Disk => unreachable!("the disk has no registration"),
    }
}

async fn measure_saver(target: Target, args: &Args, dir: &Path) -> Value {
    let min = Duration::from_millis(args.min_ms);
    let mut ids = Ids(0);
    let mut out = serde_json::Map::new();
    let saver = open(target, dir, "bench").await;

    // Fixed data for the read figures, built once.
    let one = chain(&saver, "one", 1, &mut ids).await.without_id();
    let big = chain(&saver, "big", 10_000, &mut ids).await.without_id();
    chain(&saver, "thousand", 1_000, &mut ids).await;
    let wcfg = chain(&saver, "writes", 1, &mut ids).await;

    let (mut put, mut get1, mut get10k, mut list1k, mut writes, mut conc, mut ratio) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for rep in 0..args.reps {
        // put: 10 channels, chained to the parent.
        let mut cfg = CheckpointConfig::new(format!("put-{rep}"));
        let mut t = Timer::new(min);
        while t.going() {
            let (cp, md, nv) = step_checkpoint(ids.next(), t.n as i64);
            cfg = saver.put(&cfg, cp, md, nv).await.expect("put");
            t.tick();
        }
        let single = t.rate();
        put.push(single);

        // get_tuple latest on threads of 1 and of 10,000 checkpoints.
        for (cfg, acc) in [(&one, &mut get1), (&big, &mut get10k)] {
            let mut t = Timer::new(min);
            while t.going() {
                assert!(saver.get_tuple(cfg).await.expect("get_tuple").is_some());
                t.tick();
            }
            acc.push(t.rate());
        }

        // list a 1,000-checkpoint thread.
        let opts = ListOptions::all();
        let mut t = Timer::new(min);
        while t.going() {
            assert_eq!(saver.list("thousand", &opts).await.expect("list").len(), 1000);
            t.tick();
        }
        list1k.push(1e3 / t.rate());

        // put_writes: 5 writes a call, a new task each call.
        let mut t = Timer::new(min);
        while t.going() {
            let i = t.n;
            let ws: Vec<(String, TypedValue)> =
                (0..5).map(|k| (format!("ch{k}"), TypedValue::json(&json!({"task": i, "k": k})))).collect();
            saver.put_writes(&wcfg, ws, &format!("task-{rep}-{i}"), "").await.expect("put_writes");
            t.tick();
        }
        writes.push(t.rate());

        // puts from 8 concurrent tasks on different threads.
        let start = Instant::now();
        let mut handles = Vec::new();
        for task in 0..8u64 {
            let saver = saver.clone();
            let base = 1_000_000_000 * (rep as u64 + 1) + 10_000_000 * task;
            handles.push(tokio::spawn(async move {
                let mut ids = Ids(base);
                let mut cfg = CheckpointConfig::new(format!("conc-{rep}-{task}"));
                let mut n = 0u64;
                while start.elapsed() < min {
                    let (cp, md, nv) = step_checkpoint(ids.next(), n as i64);
                    cfg = saver.put(&cfg, cp, md, nv).await.expect("concurrent put");
                    n += 1;
                }
                n
            }));
        }
        let mut total = 0;
        for h in handles {
            total += h.await.expect("task");
        }
        let c = total as f64 / start.elapsed().as_secs_f64();
        conc.push(c);
        ratio.push(c / single);
    }
    out.insert("put_10_channels_per_s".into(), figure("ops/s", put));
    out.insert("get_tuple_latest_1_per_s".into(), figure("ops/s", get1.clone()));
    out.insert("get_tuple_latest_10k_per_s".into(), figure("ops/s", get10k.clone()));
    out.insert("get_tuple_1_over_10k".into(), json!({"median": median(get1) / median(get10k), "unit": "ratio"}));
    out.insert("list_1000_ms".into(), figure("ms", list1k));
    out.insert("put_writes_5_per_s".into(), figure("calls/s", writes));
    out.insert("put_8_tasks_per_s".into(), figure("ops/s", conc));
    out.insert("put_8_tasks_over_single".into(), figure("ratio", ratio));
    drop(saver);
    if target == Target::Postgres {
        if let Err(e) = checkpoint_postgres::drop_schema(&postgres_url(), &bench_schema("bench")).await {
            eprintln!("warning: could not drop the bench schema: {e}");
        }
    }

    // A whole in-process conformance run (build excluded).
    let reg = registration(target);
    let mut runs = Vec::new();
    let mut cases = 0;
    let mut slowest = Vec::new();
    for _ in 0..args.reps {
        let start = Instant::now();
        let reg = reg.clone();
        let report = tokio::task::spawn_blocking(move || conformance_spec::validate(&reg, &RunOptions::default()))
            .await
            .expect("validate");
        runs.push(start.elapsed().as_secs_f64() * 1e3);
        cases = report.tests.len();
        let mut tests = report.tests.clone();
        tests.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
        slowest = tests.iter().take(5).map(|t| json!({"case": t.id, "ms": t.duration_ms})).collect();
        if !report.is_success() {
            let failed: Vec<String> = report
                .tests
                .iter()
                .filter(|t| t.outcome == conformance_core::Outcome::Failed)
                .take(3)
                .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
                .collect();
            eprintln!(
                "warning: the conformance run was {} during the benchmark; first failures:\n  {}",
                report.conformance_level,
                failed.join("\n  ")
            );
        }
    }
    out.insert("conformance_run_ms".into(), figure("ms", runs));
    out.insert("conformance_cases".into(), json!(cases));
    out.insert("conformance_slowest_cases".into(), Value::Array(slowest));
    out.insert("peak_rss_mib".into(), json!({"median": peak_rss_mib(), "unit": "MiB"}));
    Value::Object(out)
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    // The conformance run's durability crash test re-executes this binary with the same
    // arguments: in that child, run its workload instead of the benchmark.
    if args.target != Target::Disk {
        if let Some(code) = conformance_spec::child_main_if_requested(&registration(args.target)) {
            return code;
        }
    }
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let value = if args.target == Target::Disk {
        let reps = (0..args.reps).map(|_| fsync_rate(&dir, Duration::from_millis(args.min_ms))).collect();
        json!({"fdatasync_small_append_per_s": figure("ops/s", reps)})
    } else {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(measure_saver(args.target, &args, &dir))
    };
    println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    std::process::ExitCode::SUCCESS
}

fn sqlite_saver(dir: &Path, name: &str) -> Saver {
    match checkpoint_sqlite::SqliteSaver::open(dir.join(format!("{name}.db"))) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("cannot open the SQLite saver in {}: {e}", dir.display());
            std::process::exit(2)
        }
    }
}

fn sqlite_registration() -> conformance_core::Registration {
    checkpoint_sqlite::registration()
}
