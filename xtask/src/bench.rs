//! `cargo xtask bench`: builds `conformance-bench` in release mode, runs it once per target
//! (the disk's fdatasync rate, then each backend, each in its own process so peak memory is
//! per backend), prints the figures against the targets of issue 8, and writes them as JSON.
//!
//! Figures are medians over `--reps` repetitions measured in this one run; compare only
//! figures from one run.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use serde_json::{json, Value};

use crate::USAGE;

/// `cargo xtask bench` options.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write every figure and the target table as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Repetitions per figure (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    reps: u64,
    /// Minimum duration of one repetition of a throughput figure, in milliseconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    min_ms: u64,
    /// Backends to measure, comma-separated (`postgres` uses $CHECKPOINT_POSTGRES_URL, else a
    /// throwaway server started for the run).
    #[arg(long, value_delimiter = ',', default_values_t = ["memory".to_owned(), "sqlite".to_owned()],
          value_parser = ["memory", "sqlite", "postgres"])]
    backends: Vec<String>,
    /// Exit 1 when a target is missed (default: report only).
    #[arg(long)]
    strict: bool,
}

fn measure(target: &str, args: &Args, postgres_url: Option<&str>) -> Result<Value, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    if let Some(url) = postgres_url {
        cmd.env("CHECKPOINT_POSTGRES_URL", url);
    }
    let out = cmd
        .args(["run", "--quiet", "--release", "--package", "conformance-bench", "--", "--target", target])
        .args(["--reps", &args.reps.to_string(), "--min-ms", &args.min_ms.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("the benchmark of {target} failed ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the benchmark of {target} printed no JSON: {e}"))
}

fn median(v: &Value, backend: &str, key: &str) -> Option<f64> {
    v.get(backend)?.get(key)?.get("median")?.as_f64()
}

/// One target: a description, the measured value, the bound and whether it is met.
struct Target {
    what: String,
    measured: Option<f64>,
    bound: String,
    met: bool,
}

fn targets(all: &Value) -> Vec<Target> {
    let mut t = Vec::new();
    let mut at_least = |what: &str, measured: Option<f64>, bound: f64, unit: &str| {
        t.push(Target {
            what: what.to_owned(),
            measured,
            bound: format!(">= {bound} {unit}"),
            met: measured.is_some_and(|m| m >= bound),
        })
    };
    at_least("memory get_tuple latest, 1 checkpoint", median(all, "memory", "get_tuple_latest_1_per_s"), 1e6, "/s");
    at_least(
        "memory get_tuple latest, 10,000 checkpoints",
        median(all, "memory", "get_tuple_latest_10k_per_s"),
        1e6,
        "/s",
    );
    let fsync = median(all, "disk", "fdatasync_small_append_per_s");
    let put = median(all, "sqlite", "put_10_channels_per_s");
    at_least("sqlite durable put / fdatasync rate", put.zip(fsync).map(|(p, f)| p / f), 0.85, "x");
    at_least("sqlite get_tuple latest, 1 checkpoint", median(all, "sqlite", "get_tuple_latest_1_per_s"), 2e5, "/s");
    at_least(
        "sqlite get_tuple latest, 10,000 checkpoints",
        median(all, "sqlite", "get_tuple_latest_10k_per_s"),
        2e5,
        "/s",
    );
    at_least("sqlite puts from 8 tasks / single task", median(all, "sqlite", "put_8_tasks_over_single"), 3.0, "x");
    let mut at_most = |what: &str, measured: Option<f64>, bound: f64, unit: &str| {
        t.push(Target {
            what: what.to_owned(),
            measured,
            bound: format!("<= {bound} {unit}"),
            met: measured.is_some_and(|m| m <= bound),
        })
    };
    let ratio = median(all, "memory", "get_tuple_1_over_10k").map(|r| r.max(1.0 / r));
    at_most("memory get_tuple 1 vs 10,000 checkpoints (either way)", ratio, 2.0, "x");
    at_most("memory list 1,000 checkpoints", median(all, "memory", "list_1000_ms"), 2.0, "ms");
    at_most("sqlite list 1,000 checkpoints", median(all, "sqlite", "list_1000_ms"), 2.0, "ms");
    at_most("memory whole conformance run", median(all, "memory", "conformance_run_ms"), 100.0, "ms");
    at_most("sqlite whole conformance run", median(all, "sqlite", "conformance_run_ms"), 2000.0, "ms");
    // Only the targets of the backends measured in this run.
    t.retain(|x| x.what.split_whitespace().next().is_some_and(|backend| all.get(backend).is_some()));
    t
}

fn fmt(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Runs the benchmark.
pub fn run(args: Args) -> ExitCode {
    if let Some(p) = &args.json {
        if let Err(e) = std::fs::write(p, b"{}") {
            eprintln!("error: cannot write the JSON report to {}: {e}", p.display());
            return ExitCode::from(USAGE);
        }
    }
    // A server for the postgres figures: the given one, else a throwaway one (stopped and
    // removed when `server` is dropped at the end of this function).
    let mut server = None;
    let mut postgres_url = std::env::var("CHECKPOINT_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    if args.backends.iter().any(|b| b == "postgres") && postgres_url.is_none() {
        eprintln!("no CHECKPOINT_POSTGRES_URL: starting a throwaway PostgreSQL server");
        match checkpoint_postgres::test_server::TestServer::start() {
            Ok(s) => {
                postgres_url = Some(s.url().to_owned());
                server = Some(s);
            }
            Err(e) => {
                eprintln!("error: cannot start a PostgreSQL server: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut all = serde_json::Map::new();
    for target in std::iter::once("disk").chain(args.backends.iter().map(String::as_str)) {
        eprintln!("measuring {target} ...");
        match measure(target, &args, postgres_url.as_deref()) {
            Ok(v) => {
                all.insert(target.to_owned(), v);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let all = Value::Object(all);
    println!("\n  {:<44} {:>14} {:>14} {:>14} {:>10}", "figure (median)", "memory", "sqlite", "postgres", "unit");
    let keys = [
        ("put_10_channels_per_s", "put, 10 channels, chained", "/s"),
        ("get_tuple_latest_1_per_s", "get_tuple latest, 1 checkpoint", "/s"),
        ("get_tuple_latest_10k_per_s", "get_tuple latest, 10,000 checkpoints", "/s"),
        ("list_1000_ms", "list 1,000 checkpoints", "ms"),
        ("put_writes_5_per_s", "put_writes, 5 writes a call", "calls/s"),
        ("put_8_tasks_per_s", "put from 8 tasks, different threads", "/s"),
        ("put_8_tasks_over_single", "  ... over a single task", "x"),
        ("conformance_run_ms", "whole conformance run (in process)", "ms"),
        ("peak_rss_mib", "peak memory (resident)", "MiB"),
    ];
    for (key, label, unit) in keys {
        let cell = |b: &str| median(&all, b, key).map(fmt).unwrap_or_else(|| "-".to_owned());
        println!("  {:<44} {:>14} {:>14} {:>14} {:>10}", label, cell("memory"), cell("sqlite"), cell("postgres"), unit);
    }
    if let Some(f) = median(&all, "disk", "fdatasync_small_append_per_s") {
        println!("  {:<44} {:>29} {:>25}", "disk: small append + fdatasync", fmt(f), "/s");
    }
    let ts = targets(&all);
    println!("\n  targets");
    for t in &ts {
        let m = t.measured.map(fmt).unwrap_or_else(|| "-".to_owned());
        println!("  {} {:<56} {:>12} {}", if t.met { "✓" } else { "✗" }, t.what, m, t.bound);
    }
    let missed = ts.iter().filter(|t| !t.met).count();
    println!("\n  {} of {} targets met", ts.len() - missed, ts.len());
    if let Some(p) = &args.json {
        let table: Vec<Value> = ts
            .iter()
            .map(|t| json!({"target": t.what, "measured": t.measured, "bound": t.bound, "met": t.met}))
            .collect();
        let doc = json!({"figures": all, "targets": table, "reps": args.reps, "min_ms": args.min_ms});
        if let Err(e) = std::fs::write(p, serde_json::to_string_pretty(&doc).unwrap_or_default()) {
            eprintln!("error: cannot write the JSON report to {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(s) = server.take() {
        if let Err(e) = s.stop() {
            eprintln!("warning: {e}");
        }
    }
    if args.strict && missed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
