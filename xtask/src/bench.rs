//! `cargo xtask bench`: builds `conformance-bench` in release mode, runs it once per target
//! (the disk's fdatasync rate, then each backend, each in its own process so peak memory is
//! per backend), with `--python` runs LangGraph's own savers on the same workloads
//! (`bench/python/bench.py`, in the bridge's managed environment, against the same server)
//! and times whole conformance runs against the official kit ([`crate::bench_whole`]),
//! prints the figures against the targets of issues 8, 18 and 38 (every one met or missed, and
//! why), and writes them as JSON. `--table PATH` prints the README's speed table from such a
//! JSON instead of measuring.
//!
//! Figures are medians over `--reps` repetitions measured in this one run, each with its
//! min and max; compare only figures from one run.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use conformance_backends::Backend;
use serde_json::{json, Value};

use crate::bench_targets::{fmt, median, targets, BRIDGE_ROWS, COLUMNS, ROWS, WHOLE_ROWS};
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
    /// Generated sequences for the fuzzer figures per backend, split over the repetitions
    /// (0 skips them; the 10,000-sequence target: `--fuzz-cases 10000`).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    fuzz_cases: u32,
    /// Backends to measure, comma-separated (`postgres` uses $CHECKPOINT_POSTGRES_URL, else a
    /// throwaway server started for the run).
    #[arg(long, value_delimiter = ',', value_enum, default_values_t = [Backend::Memory, Backend::Sqlite])]
    backends: Vec<Backend>,
    /// Also measure LangGraph's own savers (InMemorySaver, SqliteSaver, PostgresSaver) on
    /// the same workloads in this run (the bridge's managed Python environment).
    #[arg(long)]
    python: bool,
    /// Print the README's speed table (markdown) from the JSON of an earlier run, and exit
    /// (it measures nothing, so it takes no measuring option).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["json", "reps", "min_ms", "fuzz_cases", "backends", "python", "strict"])]
    table: Option<PathBuf>,
    /// Exit 1 when a target is missed (default: report only).
    #[arg(long)]
    strict: bool,
}

/// LangGraph's saver of `target` on the bench's workloads: runs `bench/python/bench.py`.
fn measure_python(target: &str, args: &Args, postgres_url: Option<&str>) -> Result<Value, String> {
    let python = conformance_backends::bridge::managed_python(&crate::bridge_dir())?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("bench").join("python").join("bench.py");
    let mut cmd = Command::new(python);
    if let Some(url) = postgres_url {
        cmd.env(conformance_backends::postgres::URL_ENV, url);
    }
    let out = cmd
        .arg(script)
        .args(["--target", target, "--reps", &args.reps.to_string(), "--min-ms", &args.min_ms.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run Python: {e}"))?;
    if !out.status.success() {
        return Err(format!("the Python benchmark of {target} failed ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the Python benchmark of {target} printed no JSON: {e}"))
}

/// The 1-minute load average (`/proc/loadavg`), where there is one.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// `--table PATH`: the markdown table of an earlier run.
fn print_table(path: &Path) -> ExitCode {
    let doc = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()));
    // The --json of a bench run: figures and targets (not a conformance report, say).
    let doc = doc.and_then(|d| match (d.get("figures").and_then(Value::as_object), d.get("targets")) {
        (Some(_), Some(Value::Array(_))) => Ok(d),
        _ => Err("it is not the --json of a cargo xtask bench run (no \"figures\" object and \"targets\" list)".into()),
    });
    match doc {
        Ok(doc) => {
            print!("{}", crate::bench_targets::markdown(&doc));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot read the bench JSON {}: {e}", path.display());
            ExitCode::from(USAGE)
        }
    }
}

fn measure(target: &str, args: &Args, postgres_url: Option<&str>, extra: &[&str]) -> Result<Value, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    if let Some(url) = postgres_url {
        cmd.env(conformance_backends::postgres::URL_ENV, url);
    }
    let out = cmd
        .args(["run", "--quiet", "--release", "--package", "conformance-bench", "--", "--target", target])
        .args(["--reps", &args.reps.to_string(), "--min-ms", &args.min_ms.to_string()])
        .args(["--fuzz-cases", &args.fuzz_cases.to_string()])
        .args(extra)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("the benchmark of {target} failed ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the benchmark of {target} printed no JSON: {e}"))
}

/// Runs the benchmark.
pub fn run(args: Args) -> ExitCode {
    if let Some(p) = &args.table {
        return print_table(p);
    }
    if let Some(p) = &args.json {
        // Checked, not written: the report of an earlier run stays until this one replaces it.
        if let Err(e) = conformance_spec::harness::check_writable(p) {
            eprintln!("error: --json: {e}");
            return ExitCode::from(USAGE);
        }
    }
    // A server for the postgres figures: the given one, else a throwaway one (stopped and
    // removed when `server` is dropped at the end of this function).
    let mut server = None;
    let mut postgres_url = None;
    if args.backends.iter().any(|b| b.needs_postgres()) {
        match checkpoint_conformance::backend::postgres_url(None, &mut server) {
            Ok(url) => postgres_url = Some(url),
            Err(code) => return code,
        }
    }
    // A busy machine moves every figure: said at the start, and kept in the JSON.
    let load = load_average();
    if let Some(l) = load.filter(|l| *l > 0.5) {
        eprintln!("warning: the machine's load average is {l:.2} as the bench starts: its figures will vary more");
    }
    let mut all = serde_json::Map::new();
    for target in std::iter::once("disk").chain(args.backends.iter().map(|b| b.name())) {
        eprintln!("measuring {target} ...");
        match measure(target, &args, postgres_url.as_deref(), &[]) {
            Ok(v) => {
                all.insert(target.to_owned(), v);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if args.python {
        let mut py = serde_json::Map::new();
        for target in args.backends.iter().map(|b| b.name()) {
            eprintln!("measuring Python's {target} saver ...");
            match measure_python(target, &args, postgres_url.as_deref()) {
                Ok(mut v) => {
                    if let Some(o) = v.as_object_mut() {
                        let versions = json!({"python": o.remove("python"), "packages": o.remove("packages")});
                        py.insert("versions".to_owned(), versions);
                    }
                    py.insert(target.to_owned(), v);
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        all.insert("python".to_owned(), Value::Object(py));
        // The bridge's own costs (issue 38), on python:memory in the managed environment.
        eprintln!("measuring the bridge ...");
        let dir = crate::bridge_dir().to_string_lossy().into_owned();
        match measure("bridge", &args, None, &["--bridge-dir", &dir]) {
            Ok(v) => {
                all.insert("bridge".to_owned(), v);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
        eprintln!("measuring whole conformance runs against the official kit ...");
        match crate::bench_whole::measure(args.reps) {
            Ok(v) => {
                all.insert("whole".to_owned(), v);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let all = Value::Object(all);
    let cols: Vec<&(&str, &str)> =
        COLUMNS.iter().filter(|(b, _)| median(&all, b, "put_10_channels_per_s").is_some()).collect();
    print!("\n  {:<46}", "figure (median)");
    for (_, h) in &cols {
        print!(" {:>14}", h.replace("Python ", "py "));
    }
    println!(" {:>8}", "unit");
    for (key, label, unit) in ROWS {
        print!("  {label:<46}");
        for (b, _) in &cols {
            print!(" {:>14}", median(&all, b, key).map(fmt).unwrap_or_else(|| "-".to_owned()));
        }
        println!(" {unit:>8}");
    }
    if let Some(f) = median(&all, "disk", "fdatasync_small_append_per_s") {
        println!("  {:<44} {:>29} {:>25}", "disk: small append + fdatasync", fmt(f), "/s");
    }
    for (key, label, unit) in BRIDGE_ROWS {
        if let Some(v) = median(&all, "bridge", key) {
            println!("  bridge: {label:<64} {:>12} {unit}", fmt(v));
        }
    }
    for (label, ours, theirs) in WHOLE_ROWS {
        if let Some(v) = median(&all, "whole", ours) {
            let them = if theirs.is_empty() { None } else { median(&all, "whole", theirs) };
            let them = them.map(|t| format!(", the official kit {} ms", fmt(t))).unwrap_or_default();
            println!("  whole run: {label}: ours {} ms{them}", fmt(v));
        }
    }
    let ts = targets(&all);
    println!("\n  targets");
    for t in &ts {
        let m = t.measured.map(fmt).unwrap_or_else(|| "-".to_owned());
        let why = t.why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
        let verdict = if t.met { "met   " } else { "missed" };
        println!("  {verdict} {:<56} {:>12} {}{why}", t.what, m, t.bound);
    }
    let missed = ts.iter().filter(|t| !t.met).count();
    // A target whose figure this run did not measure (no --python, a backend left out) is
    // missed, but says so: the count names them apart.
    let unmeasured = ts.iter().filter(|t| t.measured.is_none()).count();
    let apart = match unmeasured {
        0 => String::new(),
        n => format!(" ({n} of the others not measured in this run)"),
    };
    println!("\n  {} of {} targets met{apart}", ts.len() - missed, ts.len());
    if let Some(p) = &args.json {
        let table: Vec<Value> = ts
            .iter()
            .map(|t| json!({"target": t.what, "measured": t.measured, "bound": t.bound, "met": t.met, "why": t.why}))
            .collect();
        let doc = json!({
            "figures": all, "targets": table, "reps": args.reps, "min_ms": args.min_ms, "load_average_at_start": load,
        });
        if let Err(e) = conformance_core::output_file::write_replacing(
            p,
            serde_json::to_string_pretty(&doc).unwrap_or_default().as_bytes(),
        ) {
            eprintln!("error: cannot write the JSON report to {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(s) = server.take() {
        if let Err(e) = s.stop() {
            eprintln!("warning: {e}");
        }
    }
    // The throwaway server is gone: so is this process's lock file (every bench run left
    // one, and the next run named it a run that did not finish).
    conformance_core::leftovers::release();
    if args.strict && missed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
