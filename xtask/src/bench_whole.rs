//! Whole conformance runs against the official kit (issue 38), for `cargo xtask bench
//! --python`: process start to exit, alternating ours and theirs in one invocation.
//!
//! - `bridge_python_memory_ms`: `checkpoint-conformance --backend python:memory` (release
//!   build, every case, `--fuzz-budget 0`), on the interpreter of the bridge's managed
//!   environment (`--python`), against `official_memory_ms`: `bench/python/official_kit.py
//!   memory`, LangGraph's `langgraph-checkpoint-conformance` on `InMemorySaver` on the same
//!   interpreter.
//! - `sqlite_ms`: `checkpoint-conformance --backend sqlite` (every case, `--fuzz-budget 0`)
//!   against `official_sqlite_ms` (the official kit on `AsyncSqliteSaver`, a file per factory
//!   call).
//! - Where a bridged run's time goes: `python_import_ms` (the interpreter importing
//!   `langgraph.checkpoint.memory` and exiting: what the official kit and our child both
//!   pay before any case), `bridge_one_case_ms` (a run of one small case: the process, the
//!   child's start and imports), `bridge_case_ms` (the median case of the
//!   whole run, from its JSON report) and `bridge_large_cases_ms` (the cases over 100 ms,
//!   summed; their ids under `bridge_large_cases`); for SQLite, `sqlite_case_ms` and
//!   `sqlite_large_cases`.
//! - Per case beyond a run's fixed cost: `official_memory_fixed_ms` and
//!   `official_sqlite_fixed_ms` (the interpreter importing the official kit and the saver's
//!   module, and exiting: the kit's whole run less its cases), and `sqlite_one_case_ms` (a
//!   `--backend sqlite` run of one small case: our process, detection and one case).
//! - The crash test's cost (issue 38: at most 1 s of a SQLite run, 5 s of a bridged one,
//!   checking no fewer acknowledged calls): `sqlite_crash_ms` and `sqlite_crash_acknowledged`,
//!   the `durability::acknowledged_writes_survive_kill` case of each SQLite whole run (its
//!   duration and its `durability.acknowledged` fact), and `bridge_crash_ms` and
//!   `bridge_crash_acknowledged`, a bridged `python:sqlite` run of that case alone in each
//!   repetition (its default kills, `CHECKPOINT_CONFORMANCE_KILLS` unset).
//!
//! The official kit is pip-installed (`--no-deps`, pinned) into `target/bench-official`,
//! beside the managed environment, never into it: the bridge's pins stay the bridge's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

/// The official kit's version the bench measures (the only one on PyPI with 58 base tests).
const OFFICIAL_KIT: &str = "langgraph-checkpoint-conformance==0.0.2";

/// The cases of [`OFFICIAL_KIT`]'s whole run (its base tests).
pub const OFFICIAL_CASES: u32 = 58;

/// Builds the release `checkpoint-conformance` and returns its path.
fn release_binary() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--release", "--package", "checkpoint-conformance"])
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the release checkpoint-conformance failed ({status})"));
    }
    Ok(crate::target_dir().join("release").join("checkpoint-conformance"))
}

/// The directory holding the official kit (installed on first use).
fn official_kit(python: &Path) -> Result<PathBuf, String> {
    let dir = crate::target_dir().join("bench-official");
    if dir.join("langgraph").join("checkpoint").join("conformance").is_dir() {
        return Ok(dir);
    }
    eprintln!("installing {OFFICIAL_KIT} into {} ...", dir.display());
    let status = Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
        .arg(&dir)
        .arg(OFFICIAL_KIT)
        .status()
        .map_err(|e| format!("could not run pip: {e}"))?;
    if !status.success() {
        return Err(format!("pip install {OFFICIAL_KIT} failed ({status})"));
    }
    Ok(dir)
}

/// One timed run of `cmd`, in milliseconds. `must_pass`: a failing exit is an error (the
/// official kit on LangGraph's own savers passes; ours may report a level below FULL).
fn timed(cmd: &mut Command, what: &str, must_pass: bool) -> Result<f64, String> {
    let start = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("could not run {what}: {e}"))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let code = out.status.code();
    // Ours: 0 passed, 1 a capability failed; anything else (2, a signal) is no run.
    if (must_pass && !out.status.success()) || !matches!(code, Some(0 | 1)) {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok(ms)
}

fn figure(unit: &str, reps: &[f64]) -> Value {
    let mut sorted = reps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
    };
    json!({"median": median, "min": sorted[0], "max": sorted[sorted.len() - 1], "unit": unit, "reps": reps})
}

/// Measures the whole runs, `reps` times each (alternating), after one untimed warm-up of
/// each (a first run may build caches).
///
/// # Errors
/// A build, an install or a run failed (its status and the last lines of its stderr).
pub fn measure(reps: u64) -> Result<Value, String> {
    let python = conformance_backends::bridge::managed_python(&crate::bridge_dir())?;
    let kit = official_kit(&python)?;
    let ours = release_binary()?;
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let report = scratch.path().join("bridge.json");
    let sqlite_report = scratch.path().join("sqlite.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("bench").join("python").join("official_kit.py");
    let official = |target: &str| {
        let mut c = Command::new(&python);
        c.env("PYTHONPATH", &kit).arg(&script).arg(target);
        c
    };
    let ours_run = |backend: &str, extra: &[&str]| {
        let mut c = Command::new(&ours);
        c.args(["--backend", backend, "--fuzz-budget", "0", "--progress", "quiet"]).args(extra);
        if backend.starts_with("python:") {
            c.arg("--python").arg(&python);
        }
        c.current_dir(scratch.path());
        c
    };
    let json_arg = report.to_string_lossy().into_owned();
    let sqlite_json = sqlite_report.to_string_lossy().into_owned();
    let crash_json = scratch.path().join("crash.json").to_string_lossy().into_owned();
    let bridged = || ours_run("python:memory", &["--json", &json_arg]);
    // The interpreter importing `modules` (on the official kit's path) and exiting.
    let imports = |modules: &str| {
        let mut c = Command::new(&python);
        c.env("PYTHONPATH", &kit).arg("-c").arg(format!("import {modules}"));
        c
    };
    let (memory_fixed, sqlite_fixed) = (
        "langgraph.checkpoint.conformance, langgraph.checkpoint.memory",
        "langgraph.checkpoint.conformance, langgraph.checkpoint.sqlite.aio",
    );
    // Warm-up, untimed.
    timed(&mut bridged(), "checkpoint-conformance --backend python:memory", false)?;
    timed(&mut official("memory"), "the official kit on InMemorySaver", true)?;
    timed(&mut ours_run("sqlite", &["--json", &sqlite_json]), "checkpoint-conformance --backend sqlite", false)?;
    let one_case = one_small_case(&report)?;
    let sqlite_one_case = one_small_case(&sqlite_report)?;
    let (mut bridge, mut off_mem, mut sqlite, mut off_sqlite, mut one) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut import, mut off_mem_fixed, mut off_sqlite_fixed, mut sqlite_one) = (vec![], vec![], vec![], vec![]);
    let (mut sqlite_crash, mut bridge_crash) = ((vec![], vec![]), (vec![], vec![]));
    for rep in 0..reps {
        eprintln!("  whole runs, repetition {} of {reps} ...", rep + 1);
        bridge.push(timed(&mut bridged(), "checkpoint-conformance --backend python:memory", false)?);
        off_mem.push(timed(&mut official("memory"), "the official kit on InMemorySaver", true)?);
        import.push(timed(&mut imports("langgraph.checkpoint.memory"), "importing langgraph.checkpoint.memory", true)?);
        off_mem_fixed.push(timed(&mut imports(memory_fixed), "importing the official kit and InMemorySaver", true)?);
        off_sqlite_fixed.push(timed(
            &mut imports(sqlite_fixed),
            "importing the official kit and AsyncSqliteSaver",
            true,
        )?);
        let mut alone = ours_run("sqlite", &["--cases", &sqlite_one_case]);
        sqlite_one.push(timed(&mut alone, "a one-case sqlite run", false)?);
        sqlite.push(timed(
            &mut ours_run("sqlite", &["--json", &sqlite_json]),
            "checkpoint-conformance --backend sqlite",
            false,
        )?);
        let (ms, acknowledged) = crash_case(&sqlite_report)?;
        sqlite_crash.0.push(ms);
        sqlite_crash.1.push(acknowledged);
        off_sqlite.push(timed(&mut official("sqlite"), "the official kit on AsyncSqliteSaver", true)?);
        one.push(timed(&mut ours_run("python:memory", &["--cases", &one_case]), "a one-case bridged run", false)?);
        let mut crash = ours_run("python:sqlite", &["--cases", CRASH_CASE, "--json", &crash_json]);
        // Its default kills: the variable that raises them is left unset.
        timed(crash.env_remove(conformance_spec::crash::KILLS_ENV), "the bridged crash test on python:sqlite", false)?;
        let (ms, acknowledged) = crash_case(Path::new(&crash_json))?;
        bridge_crash.0.push(ms);
        bridge_crash.1.push(acknowledged);
    }
    let (case_ms, large, cases) = case_times(&report)?;
    let (sqlite_case_ms, sqlite_large, sqlite_cases) = case_times(&sqlite_report)?;
    let versions = Command::new(&python)
        .env("PYTHONPATH", &kit)
        .arg(&script)
        .arg("--versions")
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
        .unwrap_or(Value::Null);
    let large_ms: f64 = large.iter().map(|(_, ms)| ms).sum();
    let listed = |l: &[(String, f64)]| l.iter().map(|(id, ms)| json!({"case": id, "ms": ms})).collect::<Vec<_>>();
    Ok(json!({
        "bridge_python_memory_ms": figure("ms", &bridge),
        "official_memory_ms": figure("ms", &off_mem),
        "sqlite_ms": figure("ms", &sqlite),
        "official_sqlite_ms": figure("ms", &off_sqlite),
        "bridge_one_case_ms": figure("ms", &one),
        "python_import_ms": figure("ms", &import),
        "official_memory_fixed_ms": figure("ms", &off_mem_fixed),
        "official_sqlite_fixed_ms": figure("ms", &off_sqlite_fixed),
        "sqlite_one_case_ms": figure("ms", &sqlite_one),
        "bridge_case_ms": figure("ms", &[case_ms]),
        "bridge_large_cases_ms": figure("ms", &[large_ms]),
        "bridge_large_cases": listed(&large),
        "bridge_cases": cases,
        "sqlite_case_ms": figure("ms", &[sqlite_case_ms]),
        "sqlite_large_cases": listed(&sqlite_large),
        "sqlite_cases": sqlite_cases,
        "one_case": one_case,
        "sqlite_crash_ms": figure("ms", &sqlite_crash.0),
        "sqlite_crash_acknowledged": figure("calls", &sqlite_crash.1),
        "bridge_crash_ms": figure("ms", &bridge_crash.0),
        "bridge_crash_acknowledged": figure("calls", &bridge_crash.1),
        "official_kit": versions,
    }))
}

/// The tests of a JSON report: (id, capability, outcome, duration in ms).
fn tests(report: &Path) -> Result<Vec<(String, String, String, f64)>, String> {
    let text = std::fs::read(report).map_err(|e| format!("the bridged run's report {}: {e}", report.display()))?;
    let doc: Value = serde_json::from_slice(&text).map_err(|e| format!("the bridged run's report: {e}"))?;
    let s = |t: &Value, k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(doc
        .get("tests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            (
                s(t, "id"),
                s(t, "capability"),
                s(t, "outcome"),
                t.get("duration_ms").and_then(Value::as_f64).unwrap_or(0.0),
            )
        })
        .collect())
}

/// The durability crash test's case (`conformance-spec/src/crash/`).
const CRASH_CASE: &str = "durability::acknowledged_writes_survive_kill";

/// The crash test's case in `report`: its duration in ms and the acknowledged calls it
/// checked (its `durability.acknowledged` fact). A case that did not pass is an error: its
/// time would not be the cost of a full check.
fn crash_case(report: &Path) -> Result<(f64, f64), String> {
    let text = std::fs::read(report).map_err(|e| format!("the report {}: {e}", report.display()))?;
    let doc: Value = serde_json::from_slice(&text).map_err(|e| format!("the report {}: {e}", report.display()))?;
    let case = doc
        .get("tests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| t.get("id").and_then(Value::as_str) == Some(CRASH_CASE))
        .ok_or_else(|| format!("the report {} has no {CRASH_CASE}", report.display()))?;
    if case.get("outcome").and_then(Value::as_str) != Some("passed") {
        return Err(format!("{CRASH_CASE} did not pass in {}: {}", report.display(), case["message"]));
    }
    let ms = case.get("duration_ms").and_then(Value::as_f64).unwrap_or(0.0);
    let acknowledged = case.pointer("/facts/durability.acknowledged").and_then(Value::as_f64).unwrap_or(0.0);
    Ok((ms, acknowledged))
}

/// A small passed `get_tuple` case of a run's report: the run of it alone is the run's fixed
/// cost (the process, the child's start for a bridged run, detection and one case).
fn one_small_case(report: &Path) -> Result<String, String> {
    tests(report)?
        .into_iter()
        .filter(|(_, cap, outcome, _)| cap == "get_tuple" && outcome == "passed")
        .min_by(|a, b| a.3.total_cmp(&b.3))
        .map(|t| t.0)
        .ok_or_else(|| format!("the run of {} passed no get_tuple case", report.display()))
}

/// The median case time of the run that were run, the cases over 100 ms (id, ms) and how
/// many were run.
fn case_times(report: &Path) -> Result<(f64, Vec<(String, f64)>, usize), String> {
    let run: Vec<(String, f64)> = tests(report)?
        .into_iter()
        .filter(|t| matches!(t.2.as_str(), "passed" | "not_strict" | "failed"))
        .map(|(id, _, _, ms)| (id, ms))
        .collect();
    if run.is_empty() {
        return Err("the bridged run ran no case".into());
    }
    let times: Vec<f64> = run.iter().map(|t| t.1).collect();
    let median = figure("ms", &times)["median"].as_f64().unwrap_or(0.0);
    let large = run.iter().filter(|t| t.1 > 100.0).cloned().collect();
    Ok((median, large, run.len()))
}
