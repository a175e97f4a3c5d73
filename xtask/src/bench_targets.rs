//! The targets of `cargo xtask bench` (issues 8, 18 and 38), judged on the figures of one run,
//! and the README's speed table printed from a bench JSON (`--table PATH`).
//!
//! Figures are `{backend: {key: {median, min, max, unit, reps}}}`; Python's are under
//! `python.{backend}` and come from the same run (`--python`). A target whose figure was not
//! measured in this run is listed as missed with the reason "not measured".

use serde_json::Value;

use crate::bench_whole::OFFICIAL_CASES;

/// The median of figure `key` of `backend` (`"python.memory"` for a Python saver).
pub fn median(all: &Value, backend: &str, key: &str) -> Option<f64> {
    let mut v = all;
    for part in backend.split('.') {
        v = v.get(part)?;
    }
    v.get(key)?.get("median")?.as_f64()
}

/// One target: what, the measured value, the bound, whether it is met and, when missed,
/// why.
pub struct Target {
    /// The figure and its bound, in words.
    pub what: String,
    /// The measured value (a ratio for the relative targets).
    pub measured: Option<f64>,
    /// The bound, with its unit.
    pub bound: String,
    /// Whether the measured value is within the bound.
    pub met: bool,
    /// When missed: why (not measured, or what limits the figure).
    pub why: Option<String>,
}

/// What limits a figure when its target is missed (the known cause, from profiling:
/// `perf` for the memory saver, `pg_stat_statements` on the bench's server for PostgreSQL).
fn known_cause(what: &str) -> Option<&'static str> {
    Some(match what {
        w if w.starts_with("postgres list") => {
            "a listed checkpoint carries its values in its row (migration 4), so no value is looked up; in \
             EXPLAIN ANALYZE the statement takes about 2.5 ms of the server for 1,000 rows (sorting them by id, \
             and one checkpoint_writes lookup per row for its pending writes); the rest is the client decoding \
             1,000 tuples (in perf, a third of it malloc and free)"
        }
        w if w.starts_with("postgres durable put")
            || w.starts_with("postgres put / ")
            || w.starts_with("postgres puts from 8 tasks / Python") =>
        {
            "a put of carried values is one statement and one WAL flush, as LangGraph's put of plain values; in \
             pgbench on one server the same one-row upsert runs at 0.89x with the row's value arrays and \
             digests as without them, and the commit's flush (the disk figure) bounds both"
        }
        w if w.starts_with("postgres get_tuple") => {
            "one statement and one round trip, as LangGraph's get; look at the figure's min-max: the figures run \
             on a current-thread runtime and the pool hands out the connection returned last, since on the \
             2-worker runtime, or with a pool rotating over its 8 connections, later repetitions ran at half rate"
        }
        w if w.starts_with("memory put /") => {
            "allocation: in perf, the kernel zeroing fresh pages as the store grows, then malloc and free (the \
             value index, 40% of a put when every namespace kept one, is built only when a put needs it)"
        }
        w if w.starts_with("memory peak bytes") => {
            "the saver's own maps: a B-tree slot, the Arc and, once a namespace needed it, the value index"
        }
        _ => return None,
    })
}

struct Targets<'a> {
    all: &'a Value,
    out: Vec<Target>,
}

impl Targets<'_> {
    fn push(&mut self, what: String, measured: Option<f64>, bound: String, met: bool) {
        let why = if met {
            None
        } else if measured.is_none() {
            Some("not measured in this run".to_owned())
        } else {
            Some(known_cause(&what).unwrap_or("see the figures").to_owned())
        };
        self.out.push(Target { what, measured, bound, met, why });
    }
    /// An upper bound whose cause, when missed, comes from this run's figures.
    fn at_most_because(&mut self, what: &str, measured: Option<f64>, bound: f64, unit: &str, cause: String) {
        self.at_most(what, measured, bound, unit);
        if let Some(t) = self.out.last_mut().filter(|t| !t.met && t.measured.is_some()) {
            t.why = Some(cause);
        }
    }
    fn at_least(&mut self, what: &str, measured: Option<f64>, bound: f64, unit: &str) {
        self.push(what.to_owned(), measured, format!(">= {bound} {unit}"), measured.is_some_and(|m| m >= bound));
    }
    fn at_most(&mut self, what: &str, measured: Option<f64>, bound: f64, unit: &str) {
        self.push(what.to_owned(), measured, format!("<= {bound} {unit}"), measured.is_some_and(|m| m <= bound));
    }
    fn m(&self, backend: &str, key: &str) -> Option<f64> {
        median(self.all, backend, key)
    }
    /// `ours / python` of one figure (`python / ours` for a time, so that more is better).
    fn over_python(&self, backend: &str, key: &str) -> Option<f64> {
        let (ours, theirs) = (self.m(backend, key)?, self.m(&format!("python.{backend}"), key)?);
        Some(if key.ends_with("_ms") { theirs / ours } else { ours / theirs })
    }
}

const FIGURES: &[(&str, &str)] = &[
    ("put_10_channels_per_s", "put"),
    ("get_tuple_latest_1_per_s", "get_tuple latest, 1 checkpoint"),
    ("get_tuple_latest_10k_per_s", "get_tuple latest, 10,000 checkpoints"),
    ("list_1000_ms", "list 1,000 (speed)"),
    ("put_writes_5_per_s", "put_writes"),
    ("put_8_tasks_per_s", "puts from 8 tasks"),
];

/// Every target, judged on `all` (the figures of one run), for the backends measured.
pub fn targets(all: &Value) -> Vec<Target> {
    let mut t = Targets { all, out: Vec::new() };
    // memory (issue 8, issue 18)
    t.at_least("memory put / Python InMemorySaver put", t.over_python("memory", "put_10_channels_per_s"), 5.0, "x");
    t.at_least("memory put_writes / Python InMemorySaver", t.over_python("memory", "put_writes_5_per_s"), 5.0, "x");
    // Bytes: the payload is compact JSON; the same data as the kit's types hold it (owned
    // strings, B-tree maps) is the floor of a saver that shares its values with readers
    // unserialized, as this one does for get_tuple at millions a second; the saver's own
    // overhead is bounded against that floor.
    let data = t.m("memory", "data_bytes_per_checkpoint");
    let cause = format!(
        "measured in this run: the same checkpoints as the kit's types hold them (Checkpoint, metadata) take {} \
         bytes each, {} x the payload, and the saver keeps {} x that; 2x the JSON needs values kept serialized, \
         which costs every get_tuple a decode",
        data.map_or("?".into(), |d| format!("{d:.0}")),
        data.zip(t.m("memory", "payload_bytes_per_checkpoint")).map_or("?".into(), |(d, p)| format!("{:.1}", d / p)),
        t.m("memory", "peak_bytes_over_data").map_or("?".into(), |r| format!("{r:.2}")),
    );
    let over_payload = t.m("memory", "peak_bytes_over_payload");
    t.at_most_because("memory peak bytes per checkpoint / payload", over_payload, 2.0, "x", cause);
    let over_data = t.m("memory", "peak_bytes_over_data");
    t.at_most("memory peak bytes per checkpoint / its data as the kit's types hold it", over_data, 1.25, "x");
    t.at_least("memory get_tuple latest, 1 checkpoint", t.m("memory", "get_tuple_latest_1_per_s"), 1e6, "/s");
    t.at_least("memory get_tuple latest, 10,000 checkpoints", t.m("memory", "get_tuple_latest_10k_per_s"), 1e6, "/s");
    let ratio = t.m("memory", "get_tuple_1_over_10k").map(|r| r.max(1.0 / r));
    t.at_most("memory get_tuple 1 vs 10,000 checkpoints (either way)", ratio, 2.0, "x");
    t.at_most("memory list 1,000 checkpoints", t.m("memory", "list_1000_ms"), 2.0, "ms");
    let slowest = |t: &Targets, backend: &str| {
        let cases = named_cases(t.all.get(backend).and_then(|b| b.get("conformance_slowest_cases")));
        format!("its slowest cases in this run: {cases}")
    };
    let cause = slowest(&t, "memory");
    t.at_most_because("memory whole conformance run", t.m("memory", "conformance_run_ms"), 100.0, "ms", cause);
    // sqlite
    let fsync = t.m("disk", "fdatasync_small_append_per_s");
    let put = t.m("sqlite", "put_10_channels_per_s");
    t.at_least("sqlite durable put / fdatasync rate", put.zip(fsync).map(|(p, f)| p / f), 0.9, "x");
    // Group commit (issue 38), counted by SQLite: it replaces "8 tasks >= 5x one task".
    let commits = t.m("sqlite", "put_8_tasks_commits_per_put");
    t.at_most("sqlite commits per put from 8 tasks", commits, 0.3, "");
    t.at_least("sqlite get_tuple latest, 1 checkpoint", t.m("sqlite", "get_tuple_latest_1_per_s"), 2e5, "/s");
    t.at_least("sqlite get_tuple latest, 10,000 checkpoints", t.m("sqlite", "get_tuple_latest_10k_per_s"), 2e5, "/s");
    t.at_most("sqlite list 1,000 checkpoints", t.m("sqlite", "list_1000_ms"), 2.0, "ms");
    let cause = slowest(&t, "sqlite");
    t.at_most_because("sqlite whole conformance run", t.m("sqlite", "conformance_run_ms"), 2000.0, "ms", cause);
    // postgres (issue 18)
    // Issue 38's bound (issue 18 had asked 5 ms).
    t.at_most("postgres list 1,000 checkpoints", t.m("postgres", "list_1000_ms"), 10.0, "ms");
    t.at_least("postgres get_tuple latest, 1 checkpoint", t.m("postgres", "get_tuple_latest_1_per_s"), 5e3, "/s");
    t.at_least("postgres get_tuple latest, 10,000", t.m("postgres", "get_tuple_latest_10k_per_s"), 5e3, "/s");
    t.at_least("postgres durable put, one task", t.m("postgres", "put_10_channels_per_s"), 2e3, "/s");
    // Group commit (issue 38): counted on the server, not timed; it replaces "8 tasks >= 5x
    // one task", which the CPU of 2 cores bounds.
    let commits = t.m("postgres", "put_8_tasks_commits_per_put");
    t.at_most("postgres commits per put from 8 tasks", commits, 0.3, "");
    for (key, label) in FIGURES {
        let what = format!("postgres {label} / Python PostgresSaver");
        t.at_least(&what, t.over_python("postgres", key), 1.0, "x");
    }
    whole_runs(&mut t);
    // The fuzzer (issue 15)
    // Only where the fuzzer ran: `--fuzz-cases 0` skips it, and its targets with it (they were
    // reported as missed, "not measured", outside user helper-53).
    if t.m("memory", "fuzz_ops_per_s").is_some() {
        t.at_least("memory fuzzer calls against the model", t.m("memory", "fuzz_ops_per_s"), 2000.0, "/s");
    }
    for backend in ["memory", "sqlite", "postgres"] {
        if let Some(diverged) = t.m(backend, "fuzz_divergences") {
            let what = format!("{backend} fuzzer runs that diverged from the model");
            t.at_most(&what, Some(diverged), 0.0, "");
        }
    }
    // Only the targets of the backends measured in this run.
    t.out.retain(|x| x.what.split_whitespace().next().is_some_and(|backend| all.get(backend).is_some()));
    t.out
}

/// Whole runs against the official kit (issue 38, `crate::bench_whole`): ratios of the
/// medians, ours over theirs; when missed, where our time goes, from the same run.
fn whole_runs(t: &mut Targets) {
    let w = |t: &Targets, k: &str| t.m("whole", k);
    let ratio = |t: &Targets, a: &str, b: &str| Some(w(t, a)? / w(t, b)?);
    let large = |t: &Targets, k: &str| named_cases(t.all.get("whole").and_then(|x| x.get(k)));
    let count = |t: &Targets, k: &str| t.all.get("whole").and_then(|x| x.get(k)).and_then(Value::as_u64).unwrap_or(0);
    let ms = |v: Option<f64>| v.map_or_else(|| "?".to_owned(), |v| format!("{v:.0} ms"));
    // `{n} cases at a median of {m} ms each; the cases over 100 ms: ...` of run `r`.
    let cases = |t: &Targets, r: &str| {
        let median = w(t, &format!("{r}_case_ms")).unwrap_or(0.0);
        let n = count(t, &format!("{r}_cases"));
        format!(
            "{n} cases at a median of {median:.1} ms each; the cases over 100 ms: {}",
            large(t, &format!("{r}_large_cases"))
        )
    };
    // Per case beyond a run's fixed cost: (whole - fixed) / cases, in ms.
    let per_case = |t: &Targets, whole: &str, fixed: &str, cases: f64| {
        let v = (w(t, whole)? - w(t, fixed)?) / cases.max(1.0);
        Some(format!("{v:.2} ms"))
    };
    let ours_n = |t: &Targets, r: &str| count(t, &format!("{r}_cases")) as f64;
    let margins = |t: &Targets, r: &str, whole: &str, one: &str, official: &str, fixed: &str| {
        let n = ours_n(t, r);
        format!(
            "per case beyond the fixed cost, ours {} (the run less a one-case run, over the other {} cases), the \
             official kit's {} (its run less the interpreter importing the kit and the saver, over its {OFFICIAL_CASES} cases; a \
             difference of two medians, within their min-max)",
            per_case(t, whole, one, n - 1.0).unwrap_or_else(|| "?".to_owned()),
            n - 1.0,
            per_case(t, official, fixed, f64::from(OFFICIAL_CASES)).unwrap_or_else(|| "?".to_owned()),
        )
    };
    let b = |k: &str| t.m("bridge", k);
    let share = match (w(t, "python_import_ms"), w(t, "official_memory_ms")) {
        (Some(i), Some(o)) if o > 0.0 => format!("{:.0}%", 100.0 * i / o),
        _ => "?".to_owned(),
    };
    let cause = format!(
        "the interpreter importing langgraph.checkpoint.memory and exiting takes {} alone, {share} of the official \
         kit's whole run of {} ({OFFICIAL_CASES} cases), and our child makes the same import; a bridged run of one case takes {} \
         (our process, the child's start and that import), then over the pipe {} (two cases at a time, so a case \
         beside a 16 MiB one waits for the child); in the bridge section, a call's \
         round trip is {} µs, a case's open and close {} ms, and a 16 MiB value's put and get {}; {}",
        ms(w(t, "python_import_ms")),
        ms(w(t, "official_memory_ms")),
        ms(w(t, "bridge_one_case_ms")),
        cases(t, "bridge"),
        b("round_trip_us").map_or_else(|| "?".to_owned(), |v| format!("{v:.0}")),
        b("case_setup_ms").map_or_else(|| "?".to_owned(), |v| format!("{v:.2}")),
        ms(b("large_value_ms")),
        margins(
            t,
            "bridge",
            "bridge_python_memory_ms",
            "bridge_one_case_ms",
            "official_memory_ms",
            "official_memory_fixed_ms"
        ),
    );
    let bridged = ratio(t, "bridge_python_memory_ms", "official_memory_ms");
    t.at_most_because("whole run python:memory (bridged) / official kit on InMemorySaver", bridged, 1.0, "x", cause);
    let cause = format!(
        "the official kit's whole run is {} for {OFFICIAL_CASES} cases, {} of it the interpreter importing the kit and \
         AsyncSqliteSaver; a run of ours of one case takes {}, and ours runs {}; {}",
        ms(w(t, "official_sqlite_ms")),
        ms(w(t, "official_sqlite_fixed_ms")),
        ms(w(t, "sqlite_one_case_ms")),
        cases(t, "sqlite"),
        margins(t, "sqlite", "sqlite_ms", "sqlite_one_case_ms", "official_sqlite_ms", "official_sqlite_fixed_ms"),
    );
    let sqlite = ratio(t, "sqlite_ms", "official_sqlite_ms");
    t.at_most_because("whole run sqlite / official kit on AsyncSqliteSaver", sqlite, 1.0, "x", cause);
    // The crash test's default (issue 38): its time in a run, and no fewer acknowledged
    // calls checked than the 200 of the six kills it had when the bound was set.
    t.at_most("whole run sqlite: its crash test", w(t, "sqlite_crash_ms"), 1000.0, "ms");
    t.at_least(
        "whole run sqlite: acknowledged calls its crash test checks",
        w(t, "sqlite_crash_acknowledged"),
        200.0,
        "",
    );
    t.at_most("whole run python:sqlite (bridged): its crash test", w(t, "bridge_crash_ms"), 5000.0, "ms");
    let acknowledged = w(t, "bridge_crash_acknowledged");
    t.at_least("whole run python:sqlite (bridged): acknowledged calls its crash test checks", acknowledged, 200.0, "");
}

/// A list of `{case, ms}` objects as `id 12 ms, id 3 ms`, or `none`.
fn named_cases(list: Option<&Value>) -> String {
    let named: Vec<String> = list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let ms = c.get("ms").and_then(Value::as_f64).unwrap_or(0.0);
            format!("{} {ms:.0} ms", c.get("case").and_then(Value::as_str).unwrap_or("?"))
        })
        .collect();
    if named.is_empty() {
        "none".to_owned()
    } else {
        named.join(", ")
    }
}

/// A number for a table: no decimals from 1,000 or for a whole number, one from 10, else
/// three.
pub fn fmt(v: f64) -> String {
    // A count (acknowledged calls, sequences, runs) is a whole number: no decimals.
    if v >= 1000.0 || (v.fract() == 0.0 && v.abs() < 1e15) {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The rows of the figure tables: (key, label, unit).
pub const ROWS: &[(&str, &str, &str)] = &[
    ("put_10_channels_per_s", "put, 10 channels, chained", "/s"),
    ("get_tuple_latest_1_per_s", "get_tuple latest, 1 checkpoint", "/s"),
    ("get_tuple_latest_10k_per_s", "get_tuple latest, 10,000 checkpoints", "/s"),
    ("list_1000_ms", "list 1,000 checkpoints", "ms"),
    ("put_writes_5_per_s", "put_writes, 5 writes a call", "calls/s"),
    ("put_8_tasks_per_s", "put from 8 tasks, different threads", "/s"),
    ("put_8_tasks_over_single", "  ... over a single task", "x"),
    ("put_8_tasks_commits_per_put", "  ... commits per put (counted)", "commits"),
    ("conformance_run_ms", "whole conformance run (in process)", "ms"),
    ("case_setup_ms", "  ... a case's fixture: open, close, storage removed", "ms"),
    ("peak_bytes_per_checkpoint", "peak heap bytes per stored checkpoint", "bytes"),
    ("payload_bytes_per_checkpoint", "  ... its payload (compact JSON)", "bytes"),
    ("data_bytes_per_checkpoint", "  ... its data as the kit's types hold it", "bytes"),
    ("fuzz_ops_per_s", "fuzzer calls against the model", "/s"),
    ("fuzz_sequences", "fuzzer sequences without a divergence", "sequences"),
    ("fuzz_divergences", "fuzzer runs that diverged", "runs"),
    ("peak_rss_mib", "peak memory of the bench process (resident)", "MiB"),
];

/// The rows of the whole-run table: (label, our figure, the official kit's figure or "").
pub const WHOLE_ROWS: &[(&str, &str, &str)] = &[
    ("`--backend python:memory` / InMemorySaver", "bridge_python_memory_ms", "official_memory_ms"),
    ("`--backend sqlite` / AsyncSqliteSaver", "sqlite_ms", "official_sqlite_ms"),
    (
        "`--backend python:memory`, one case (ours) / the kit's imports alone (theirs)",
        "bridge_one_case_ms",
        "official_memory_fixed_ms",
    ),
    (
        "`--backend sqlite`, one case (ours) / the kit's imports alone (theirs)",
        "sqlite_one_case_ms",
        "official_sqlite_fixed_ms",
    ),
    ("its crash test, `--backend sqlite`", "sqlite_crash_ms", ""),
    ("the crash test alone, `--backend python:sqlite`", "bridge_crash_ms", ""),
];

/// The rows of the bridge's table (`conformance-bench --target bridge`): (key, label, unit).
pub const BRIDGE_ROWS: &[(&str, &str, &str)] = &[
    ("child_start_ms", "a child's start: spawn, imports, hello, the first open", "ms"),
    ("case_setup_ms", "a case's fixture: open, close, the storage removed", "ms"),
    ("round_trip_us", "a call's round trip (get_tuple of a thread never stored)", "µs"),
    ("in_flight_per_s", "the same calls, 8 in flight", "calls/s"),
    ("put_10_channels_per_s", "put, 10 channels, chained", "/s"),
    ("large_value_ms", "put and get_tuple of a 16 MiB bytes value", "ms"),
];

/// The columns of the tables: (figure path, heading).
pub const COLUMNS: &[(&str, &str)] = &[
    ("memory", "memory"),
    ("python.memory", "Python InMemorySaver"),
    ("sqlite", "sqlite"),
    ("python.sqlite", "Python SqliteSaver"),
    ("postgres", "postgres"),
    ("python.postgres", "Python PostgresSaver"),
];

/// One cell: `median (min–max)`, or `-` when not measured.
fn cell(all: &Value, backend: &str, key: &str) -> String {
    let mut v = all;
    for part in backend.split('.') {
        match v.get(part) {
            Some(x) => v = x,
            None => return "-".to_owned(),
        }
    }
    let Some(f) = v.get(key) else { return "-".to_owned() };
    let Some(m) = f.get("median").and_then(Value::as_f64) else { return "-".to_owned() };
    match (f.get("min").and_then(Value::as_f64), f.get("max").and_then(Value::as_f64)) {
        (Some(lo), Some(hi)) => format!("{} ({}–{})", fmt(m), fmt(lo), fmt(hi)),
        _ => fmt(m),
    }
}

/// The README's speed table (markdown) from a bench JSON document (`{figures, targets, reps}`).
pub fn markdown(doc: &Value) -> String {
    let all = doc.get("figures").unwrap_or(&Value::Null);
    let cols: Vec<&(&str, &str)> =
        COLUMNS.iter().filter(|(b, _)| cell(all, b, "put_10_channels_per_s") != "-").collect();
    let mut s = format!(
        "Generated by `cargo xtask bench --table` from one `cargo xtask bench` run ({} repetitions a figure; median (min–max)).\n\n| figure | unit |",
        doc.get("reps").and_then(Value::as_u64).unwrap_or(0)
    );
    for (_, h) in &cols {
        s += &format!(" {h} |");
    }
    s += "\n|---|---|";
    s += &"---:|".repeat(cols.len());
    for (key, label, unit) in ROWS {
        s += &format!("\n| {} | {unit} |", label.trim());
        for (b, _) in &cols {
            s += &format!(" {} |", cell(all, b, key));
        }
    }
    if let Some(f) = median(all, "disk", "fdatasync_small_append_per_s") {
        s += &format!("\n\nDisk: small append + fdatasync {}/s.", fmt(f));
    }
    if let Some(p) = all.get("python").and_then(|p| p.get("versions")) {
        s += &format!("\n\nPython and LangGraph versions (same run): {p}.");
    }
    if all.get("whole").is_some() {
        s += "\n\nWhole conformance runs, process start to exit, alternating in the same run (ours: release build, \
              `--fuzz-budget 0`; the official kit: `bench/python/official_kit.py`, on the same interpreter):\n\n\
              | whole run | ours (ms) | the official kit (ms) |\n|---|---:|---:|";
        for (label, ours, theirs) in WHOLE_ROWS {
            let theirs = if theirs.is_empty() { "-".to_owned() } else { cell(all, "whole", theirs) };
            s += &format!("\n| {label} | {} | {theirs} |", cell(all, "whole", ours));
        }
        if let Some(v) = all.get("whole").and_then(|w| w.get("official_kit")) {
            s += &format!("\n\nThe official kit's versions (same run): {v}.");
        }
    }
    if all.get("bridge").is_some() {
        s += "\n\nThe bridge, on `python:memory` (LangGraph's InMemorySaver in a child of the managed environment; \
              `conformance-bench --target bridge`, same run):\n\n| figure | unit | median (min–max) |\n|---|---|---:|";
        for (key, label, unit) in BRIDGE_ROWS {
            s += &format!("\n| {label} | {unit} | {} |", cell(all, "bridge", key));
        }
        if all.get("whole").and_then(|w| w.get("python_import_ms")).is_some() {
            let row = "the interpreter importing langgraph.checkpoint.memory alone, and exiting (whole runs above)";
            s += &format!("\n| {row} | ms | {} |", cell(all, "whole", "python_import_ms"));
        }
    }
    s += "\n\n| target | measured | bound | |\n|---|---:|---|---|";
    let (mut targets, mut met_count) = (0, 0);
    for t in doc.get("targets").and_then(Value::as_array).into_iter().flatten() {
        let met = t.get("met").and_then(Value::as_bool).unwrap_or(false);
        targets += 1;
        met_count += usize::from(met);
        let m = t.get("measured").and_then(Value::as_f64).map(fmt).unwrap_or_else(|| "-".to_owned());
        let why = t.get("why").and_then(Value::as_str).map(|w| format!(" ({w})")).unwrap_or_default();
        s += &format!(
            "\n| {} | {m} | {} | {}{why} |",
            t.get("target").and_then(Value::as_str).unwrap_or("?"),
            t.get("bound").and_then(Value::as_str).unwrap_or("?"),
            if met { "met" } else { "missed" }
        );
    }
    s += &format!("\n\n{met_count} of {targets} targets met.");
    if let Some(load) = doc.get("load_average_at_start").and_then(Value::as_f64) {
        s += &format!(" The machine's load average when the run started: {load:.2}.");
    }
    s + "\n"
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn fig(median: f64) -> serde_json::Value {
        json!({"median": median, "min": median, "max": median, "unit": "ms"})
    }

    /// The whole-run targets' why: each run's time per case beyond its fixed cost, ours over
    /// the cases less the one of the one-case run, the official kit's over its 58.
    #[test]
    fn a_missed_whole_run_names_both_margins_per_case() {
        let all = json!({"whole": {
            "bridge_python_memory_ms": fig(1250.0), "bridge_one_case_ms": fig(250.0), "bridge_cases": 101,
            "official_memory_ms": fig(258.0), "official_memory_fixed_ms": fig(240.0), "python_import_ms": fig(129.0),
            "sqlite_ms": fig(700.0), "sqlite_one_case_ms": fig(100.0), "sqlite_cases": 201,
            "official_sqlite_ms": fig(356.0), "official_sqlite_fixed_ms": fig(240.0),
        }});
        let targets = super::targets(&all);
        let why = |what: &str| {
            let t = targets.iter().find(|t| t.what.starts_with(what)).unwrap_or_else(|| panic!("no target {what}"));
            assert!(!t.met, "{what} met");
            t.why.clone().unwrap_or_default()
        };
        let bridged = why("whole run python:memory");
        assert!(bridged.contains("ours 10.00 ms (the run less a one-case run, over the other 100 cases)"), "{bridged}");
        assert!(bridged.contains("the official kit's 0.31 ms (its run"), "{bridged}");
        assert!(bridged.contains("takes 129 ms alone, 50% of the official kit's whole run of 258 ms"), "{bridged}");
        let sqlite = why("whole run sqlite /");
        assert!(sqlite.contains("ours 3.00 ms (the run less a one-case run, over the other 200 cases)"), "{sqlite}");
        assert!(sqlite.contains("the official kit's 2.00 ms (its run"), "{sqlite}");
    }
}
