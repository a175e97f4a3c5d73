//! `conformance-bench`: measures one reference saver (or the disk) and prints JSON.
//!
//! Run through `cargo xtask bench`, which builds it in release mode, runs it once per backend
//! in its own process (so peak memory is per backend) and assembles the table. Every figure
//! is the median of `--reps` repetitions; each repetition runs an operation for at least
//! `--min-ms` milliseconds (or a fixed count where stated).

mod alloc;
mod bridge;
mod commits;
mod workload;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use conformance_backends::{Backend, Needs};
use conformance_core::{CheckpointSaver, CleanupFn, Registration, RunOptions};
use conformance_spec::fuzz::{fuzz, FuzzOptions};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;
use serde_json::{json, Value};

/// What to measure: a reference backend of the kit's one list, or the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// A backend (`postgres` on the server named by `CHECKPOINT_POSTGRES_URL`).
    Backend(Backend),
    /// The disk itself: small appends, each followed by fdatasync.
    Disk,
    /// The bridge's own costs on `python:memory` (`bridge.rs`).
    Bridge,
}

fn parse_target(s: &str) -> Result<Target, String> {
    match s {
        "disk" => return Ok(Target::Disk),
        "bridge" => return Ok(Target::Bridge),
        _ => {}
    }
    Backend::from_str(s, false)
        .map(Target::Backend)
        .map_err(|_| format!("unknown target `{s}`; valid targets are: disk, bridge, {}", Backend::names()))
}

#[derive(Parser, Debug, Clone)]
#[command(about = "Benchmark one reference saver (or the disk) and print JSON")]
struct Args {
    /// What to measure: disk, bridge (needs --bridge-dir), or a backend (memory, sqlite,
    /// postgres).
    #[arg(long, value_parser = parse_target)]
    target: Target,
    /// Repetitions per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Minimum duration of one repetition of a throughput figure, in milliseconds.
    #[arg(long, default_value_t = 300)]
    min_ms: u64,
    /// Generated sequences for the fuzzer figures, split over the repetitions (seeds 0, 1,
    /// ...); 0 skips them.
    #[arg(long, default_value_t = 2000)]
    fuzz_cases: u32,
    /// Directory for the disk's probe file (default: a fresh temporary directory); the
    /// backends store where their registration's fixtures do.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// `--target bridge`: the bridge's directory, holding its managed Python environment
    /// (`target/checkpoint-bridge`).
    #[arg(long)]
    bridge_dir: Option<PathBuf>,
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

/// A figure: median, min, max and every repetition.
fn figure(unit: &str, reps: Vec<f64>) -> Value {
    let min = reps.iter().copied().fold(f64::INFINITY, f64::min);
    let max = reps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    json!({"median": median(reps.clone()), "min": min, "max": max, "unit": unit, "reps": reps})
}

/// The saver under measurement.
pub type Saver = Arc<dyn CheckpointSaver>;

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

/// A fresh fixture of the backend's registration, as a spec case gets it: the saver and the
/// cleanup that removes its storage (a temporary SQLite file, a PostgreSQL schema).
async fn open(reg: &Registration) -> (Saver, Option<CleanupFn>) {
    let (saver, (_, cleanup)) = open_with_close(reg).await;
    (saver, cleanup)
}

/// [`open`], with the instance's close too: (saver, (close, cleanup)), run in that order.
async fn open_with_close(reg: &Registration) -> (Saver, (Option<CleanupFn>, Option<CleanupFn>)) {
    match reg.fixture().await {
        Ok(mut f) => {
            let close = f.take_close();
            let (saver, cleanup, _, _) = f.into_parts();
            (saver, (close, cleanup))
        }
        Err(e) => {
            eprintln!("cannot open the {} saver: {e}", reg.name());
            std::process::exit(2)
        }
    }
}

/// Runs a fixture's cleanup, warning when it fails.
async fn close(cleanup: Option<CleanupFn>) {
    if let Some(c) = cleanup {
        if let Err(e) = c().await {
            eprintln!("warning: could not remove the bench saver's storage: {e}");
        }
    }
}

/// The backend's registration (postgres on `CHECKPOINT_POSTGRES_URL`, which `cargo xtask
/// bench` sets, starting a throwaway server when it is not set).
fn registration(backend: Backend) -> Registration {
    let url = std::env::var(checkpoint_postgres::URL_ENV).ok().filter(|u| !u.is_empty());
    match backend.registration(Needs { postgres_url: url.as_deref(), ..Needs::default() }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e} (set {})", checkpoint_postgres::URL_ENV);
            std::process::exit(2)
        }
    }
}

async fn measure_saver(backend: Backend, args: &Args) -> Value {
    let min = Duration::from_millis(args.min_ms);
    let mut out = serde_json::Map::new();
    let reg = registration(backend);
    let (saver, cleanup) = open(&reg).await;

    // Fixed data for the read figures, built once.
    let one = workload::chain(&saver, "one", 1).await.without_id();
    let big = workload::chain(&saver, "big", 10_000).await.without_id();
    workload::chain(&saver, "thousand", 1_000).await;

    let (mut put, mut get1, mut get10k, mut list1k, mut writes, mut conc, mut ratio) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut setup = vec![];
    // Commits per put under 8 tasks: counted on the server (PostgreSQL), by SQLite's WAL
    // hook on a saver of its own (SQLite).
    let counter = match std::env::var(checkpoint_postgres::URL_ENV) {
        Ok(url) if backend.needs_postgres() => commits::XactCounter::connect(&url).await,
        _ => None,
    };
    let mut commits_per_put = vec![];
    for rep in 0..args.reps {
        setup.push(workload::case_setup_ms(&reg, min).await);
        let wcfg = workload::chain(&saver, &format!("writes-{rep}"), 1).await;
        let single = workload::put_rate(&saver, &format!("put-{rep}"), min).await;
        put.push(single);
        get1.push(workload::get_rate(&saver, &one, min).await);
        get10k.push(workload::get_rate(&saver, &big, min).await);
        list1k.push(workload::list_ms(&saver, "thousand", min).await);
        writes.push(workload::put_writes_rate(&saver, &wcfg, &rep.to_string(), min).await);
        // Enough puts per task for about `min` at the single-task rate, at most 20,000.
        let per_task = ((single * min.as_secs_f64() / 8.0) as usize).clamp(16, 20_000);
        let c = match &counter {
            Some(counter) => {
                let (commits, c) =
                    counter.count(workload::concurrent_put_rate(&saver, &rep.to_string(), per_task)).await;
                commits_per_put.extend(commits.map(|n| n as f64 / (8 * per_task) as f64));
                c
            }
            None => workload::concurrent_put_rate(&saver, &rep.to_string(), per_task).await,
        };
        if backend == Backend::Sqlite {
            commits_per_put.extend(commits::sqlite_commits_per_put(&rep.to_string(), per_task).await);
        }
        conc.push(c);
        ratio.push(c / single);
        // In memory, what the repetition stored goes before the next (in the Python bench
        // too): every repetition measures a heap of the same size, whatever the saver's speed.
        // Kept, the gigabytes of earlier repetitions made the later ones run at a third of the
        // first ones' rate. A database keeps growing, as an application's does.
        if backend == Backend::Memory {
            let threads = [format!("put-{rep}"), format!("writes-{rep}")].into_iter();
            for thread in threads.chain((0..8).map(|task| format!("conc-{rep}-{task}"))) {
                saver.delete_thread(&thread).await.expect("delete_thread");
            }
        }
    }
    out.insert("case_setup_ms".into(), figure("ms", setup));
    out.insert("put_10_channels_per_s".into(), figure("ops/s", put));
    out.insert("get_tuple_latest_1_per_s".into(), figure("ops/s", get1.clone()));
    out.insert("get_tuple_latest_10k_per_s".into(), figure("ops/s", get10k.clone()));
    out.insert("get_tuple_1_over_10k".into(), json!({"median": median(get1) / median(get10k), "unit": "ratio"}));
    out.insert("list_1000_ms".into(), figure("ms", list1k));
    out.insert("put_writes_5_per_s".into(), figure("calls/s", writes));
    out.insert("put_8_tasks_per_s".into(), figure("ops/s", conc));
    out.insert("put_8_tasks_over_single".into(), figure("ratio", ratio));
    if !commits_per_put.is_empty() {
        out.insert("put_8_tasks_commits_per_put".into(), figure("commits/put", commits_per_put));
    }
    drop(saver);
    close(cleanup).await;
    if backend == Backend::Memory {
        // The saver's own heap bytes per stored checkpoint (counting allocator, fresh saver).
        let (mut live, mut peak, mut payload) = (vec![], vec![], 0.0);
        for _ in 0..args.reps {
            // The saver is made under the count; the memory fixture has no cleanup.
            let (l, p, b) = workload::memory_per_checkpoint(async { open(&reg).await.0 }, 10_000).await;
            payload = b;
            live.push(l);
            peak.push(p);
        }
        let over: Vec<f64> = peak.iter().map(|p| p / payload).collect();
        // The breakdown of a missed bytes target: the same data as the kit's types hold it,
        // and the saver's bytes over that.
        let data = workload::data_bytes_per_checkpoint(10_000);
        let over_data: Vec<f64> = peak.iter().map(|p| p / data).collect();
        out.insert("stored_bytes_per_checkpoint".into(), figure("bytes", live));
        out.insert("peak_bytes_per_checkpoint".into(), figure("bytes", peak));
        out.insert("payload_bytes_per_checkpoint".into(), json!({"median": payload, "unit": "bytes"}));
        out.insert("peak_bytes_over_payload".into(), figure("ratio", over));
        out.insert("data_bytes_per_checkpoint".into(), json!({"median": data, "unit": "bytes"}));
        out.insert("peak_bytes_over_data".into(), figure("ratio", over_data));
    }

    // A whole in-process conformance run (build excluded).
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
        let failed = report.failed_cases();
        if !failed.is_empty() {
            eprintln!(
                "warning: the conformance run was {} during the benchmark; first failures:\n  {}",
                report.conformance_level,
                failed[..failed.len().min(3)].join("\n  ")
            );
        }
    }
    out.insert("conformance_run_ms".into(), figure("ms", runs));
    out.insert("conformance_cases".into(), json!(cases));
    out.insert("conformance_slowest_cases".into(), Value::Array(slowest));
    if args.fuzz_cases > 0 {
        fuzz_figures(&reg, args, &mut out).await;
    }
    out.insert("peak_rss_mib".into(), json!({"median": peak_rss_mib(), "unit": "MiB", "reps": 1}));
    Value::Object(out)
}

/// The fuzzer's figures (issue 15): `--fuzz-cases` generated sequences against the model,
/// split over the repetitions, each with its own seed: calls a second (`fuzz_ops_per_s`),
/// sequences run without a divergence and divergences (each named on stderr).
async fn fuzz_figures(reg: &Registration, args: &Args, out: &mut serde_json::Map<String, Value>) {
    let reps = args.reps.max(1);
    let per = (args.fuzz_cases / u32::try_from(reps).unwrap_or(u32::MAX)).max(1);
    let (mut rates, mut clean, mut divergences) = (Vec::new(), 0u64, 0u64);
    for seed in 0..reps as u64 {
        let (reg, options) = (reg.clone(), FuzzOptions { seed, cases: per, ..FuzzOptions::default() });
        match tokio::task::spawn_blocking(move || fuzz(&reg, &options)).await.expect("fuzz") {
            Ok(o) => {
                rates.push(o.ops as f64 / o.elapsed.as_secs_f64().max(1e-9));
                match &o.divergence {
                    Some(d) => {
                        divergences += 1;
                        eprintln!("warning: the fuzzer diverged from the model (seed {seed}):\n{}", d.message);
                    }
                    None => clean += o.sequences,
                }
            }
            Err(e) => eprintln!("warning: the fuzzer could not run (seed {seed}): {e}"),
        }
    }
    out.insert("fuzz_ops_per_s".into(), figure("ops/s", rates));
    out.insert("fuzz_sequences".into(), json!({"median": clean, "unit": "sequences", "reps": 1}));
    out.insert("fuzz_divergences".into(), json!({"median": divergences, "unit": "runs", "reps": 1}));
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    // The conformance run's durability crash test re-executes this binary with the same
    // arguments: in that child, run its workload instead of the benchmark.
    if let Target::Backend(backend) = args.target {
        if let Some(code) = conformance_spec::child_main_if_requested(&registration(backend)) {
            return code;
        }
    }
    if args.bridge_dir.is_some() && args.target != Target::Bridge {
        eprintln!("error: --bridge-dir is for --target bridge only");
        return std::process::ExitCode::from(2);
    }
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let value = match args.target {
        Target::Disk => {
            let reps = (0..args.reps).map(|_| fsync_rate(&dir, Duration::from_millis(args.min_ms))).collect();
            json!({"fdatasync_small_append_per_s": figure("ops/s", reps)})
        }
        Target::Bridge => {
            let Some(dir) = args.bridge_dir.clone() else {
                eprintln!("error: --target bridge needs --bridge-dir");
                return std::process::ExitCode::from(2);
            };
            let rt =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
            let (reps, min) = (args.reps, Duration::from_millis(args.min_ms));
            rt.block_on(async move { tokio::spawn(async move { bridge::measure(&dir, reps, min).await }).await })
                .expect("bench task")
        }
        Target::Backend(backend) => {
            // PostgreSQL's figures run on a current-thread runtime, where the pool's connection
            // tasks share the caller's thread, as a synchronous client's socket does; on the
            // 2-worker runtime, once the connection's task and the caller's were on different
            // workers (in some runs, from some repetition on), every reply cost a wake-up across
            // threads and get_tuple ran at half its rate (9,244, 8,634, then 3,693, 4,012,
            // 4,172/s in one full run of 2026-12-05).
            let rt = if backend == Backend::Postgres {
                tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
            } else {
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
            };
            // The workload runs as a spawned task, as a server's request handler does, not
            // in `block_on` on the main thread: there every reply of a pooled connection (its
            // task runs on a worker) would cost a wake-up across threads, which doubled
            // PostgreSQL's get_tuple time.
            let args = args.clone();
            rt.block_on(async move { tokio::spawn(async move { measure_saver(backend, &args).await }).await })
                .expect("bench task")
        }
    };
    println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    // The conformance run and the savers' scratch directories are gone: so is this
    // process's lock file (the next run would name it a run that did not finish).
    conformance_core::leftovers::release();
    std::process::ExitCode::SUCCESS
}
