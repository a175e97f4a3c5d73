//! `checkpoint-conformance record` (docs/traces.md, issue 41): records the example graph of
//! examples/record into a trace that parses, carries its `recorded_with` header, and replays
//! on the SQLite reference saver; a bad inputs line is one line naming it, exit 2.
//!
//! Needs python3 with venv: LangGraph comes from `target/record-venv`, which
//! `bridges/python/record_traces.py` makes with the pinned packages on first use (as
//! xtask/tests/record.rs does).
//!
//! And the same for a LangGraph JS app, `my_app.mjs` (the JS twin): its trace carries
//! LangGraph JS's versions, holds the update_state and the fork from step 1, and replays on
//! SQLite; a bad inputs line is one line, exit 2; `--python` with a JS graph is refused.
//! Needs node with npm: LangGraph JS comes from `target/record-js`, which
//! `bridges/js/record_traces.mjs` installs on first use; the app's directory links it as its
//! `node_modules`. A JS graph that never settles ends with one line, exit 1; one kept alive
//! is stopped by SIGTERM with nothing of it left running and no trace written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use conformance_spec::fuzz::replay;
use conformance_spec::fuzz::trace::Trace;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// `made` under target/, made by the recorder script `script` (run by `program`, recording
/// its trace `trace` into a temp dir) when `marker` is missing.
fn made_by(made: &str, marker: &str, program: &str, script: &str, trace: &str) -> PathBuf {
    let path = root().join(made);
    if !path.join(marker).exists() {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let out = Command::new(program)
            .arg(root().join(script))
            .arg("--out")
            .arg(tmp.path())
            .arg(trace)
            .output()
            .unwrap_or_else(|e| panic!("{program} runs: {e}"));
        assert!(out.status.success(), "making {made}: {}", String::from_utf8_lossy(&out.stderr));
    }
    path
}

/// The virtualenv with LangGraph, made by record_traces.py if missing.
fn venv() -> PathBuf {
    made_by("target/record-venv", "bin/python", "python3", "bridges/python/record_traces.py", "linear")
}

/// `checkpoint-conformance record ARGS` in `dir`.
fn record_with(dir: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .current_dir(dir)
        .arg("record")
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("the binary runs")
}

fn record(dir: &Path, inputs: &str, out: &str) -> Output {
    let venv = venv();
    let args = ["--graph", "my_app:build", "--inputs", inputs, "--out", out, "--app-id", "my-app", "--python"];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).chain([venv.as_os_str()]).collect();
    record_with(dir, &args)
}

/// The example's recording succeeded (24 steps from its 7 input lines): the trace file's text
/// and the trace.
fn recorded(dir: &Path, out: &Output) -> (String, Trace) {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("my-app.json: 24 steps from 7 input lines"), "{text}");
    let json = std::fs::read_to_string(dir.join("my-app.json")).expect("the trace was written");
    let trace = Trace::parse(&json).unwrap_or_else(|e| panic!("{e}"));
    (json, trace)
}

#[test]
fn the_example_graph_records_a_trace_that_replays_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for f in ["my_app.py", "inputs.jsonl"] {
        std::fs::copy(root().join("examples/record").join(f), dir.path().join(f)).expect("copy the example");
    }
    let (json, trace) = recorded(dir.path(), &record(dir.path(), "inputs.jsonl", "my-app.json"));
    let with = trace.recorded_with.clone().expect("a recorded_with header");
    assert_eq!(with.app_id.as_deref(), Some("my-app"));
    assert_eq!(with.langgraph.as_deref(), Some("1.2.22"));
    // The update_state (source "update") and the fork from step 1 are in the trace.
    let raw: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let sources: Vec<&str> = raw["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter(|s| s["call"] == "put")
        .filter_map(|s| s["metadata"]["source"].as_str())
        .collect();
    assert!(sources.contains(&"update"), "{sources:?}");
    replay(&sqlite(), &trace).unwrap_or_else(|e| panic!("{e}"));

    std::fs::write(dir.path().join("bad.jsonl"), "{\"invoke\": {\"topic\": \"x\", \"notes\": []}}\n{\"resum\": 1}\n")
        .expect("write");
    let out = record(dir.path(), "bad.jsonl", "bad.json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.jsonl:2: unknown key 'resum'"), "{err}");
    assert!(!dir.path().join("bad.json").exists());
}

/// LangGraph JS's node_modules, installed by record_traces.mjs if missing.
fn node_modules() -> PathBuf {
    let modules = "target/record-js/node_modules";
    made_by(modules, "@langchain/langgraph", "node", "bridges/js/record_traces.mjs", "js-time-travel")
}

fn record_js(dir: &Path, args: &[&str]) -> Output {
    record_with(dir, &args.iter().map(std::ffi::OsStr::new).collect::<Vec<_>>())
}

#[test]
fn the_js_example_graph_records_a_trace_that_replays_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for f in ["my_app.mjs", "inputs.jsonl"] {
        std::fs::copy(root().join("examples/record").join(f), dir.path().join(f)).expect("copy the example");
    }
    std::os::unix::fs::symlink(node_modules(), dir.path().join("node_modules")).expect("link node_modules");
    let args = ["--graph", "./my_app.mjs:build", "--inputs", "inputs.jsonl", "--out", "my-app.json"];
    let (json, trace) = recorded(dir.path(), &record_js(dir.path(), &[&args[..], &["--app-id", "my-js-app"]].concat()));
    let with = trace.recorded_with.clone().expect("a recorded_with header");
    assert_eq!(with.app_id.as_deref(), Some("my-js-app"));
    assert_eq!(with.langgraph.as_deref(), Some("1.5.0"));
    assert_eq!(with.langgraph_checkpoint.as_deref(), Some("1.2.2"));
    // The update_state (source "update") and the fork from step 1 (a put whose parent is not
    // the thread's latest checkpoint) are in the trace.
    let raw: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let puts: Vec<&serde_json::Value> =
        raw["steps"].as_array().expect("steps").iter().filter(|s| s["call"] == "put").collect();
    assert!(puts.iter().any(|s| s["metadata"]["source"] == "update"), "no update_state put");
    let ids: Vec<&str> = puts.iter().filter_map(|s| s["checkpoint"]["id"].as_str()).collect();
    let forked = puts.iter().enumerate().any(|(i, s)| {
        s["config"]["checkpoint_id"].as_str().is_some_and(|parent| i > 0 && ids[..i - 1].contains(&parent))
    });
    assert!(forked, "no put under a checkpoint older than the one before it");
    replay(&sqlite(), &trace).unwrap_or_else(|e| panic!("{e}"));

    std::fs::write(dir.path().join("bad.jsonl"), "{\"invoke\": {\"topic\": \"x\", \"notes\": []}}\n{\"resum\": 1}\n")
        .expect("write");
    let out = record_js(dir.path(), &["--graph", "./my_app.mjs:build", "--inputs", "bad.jsonl", "--out", "bad.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.jsonl:2: unknown key 'resum'"), "{err}");
    assert!(!dir.path().join("bad.json").exists());

    let out = record_js(dir.path(), &[&args[..], &["--python", "/usr/bin/python3"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--python applies to a Python graph"), "{err}");
}

/// A directory with a JS graph module `graph.mjs` of `source`, LangGraph JS linked in, and a
/// one-line inputs file.
fn js_app(source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::os::unix::fs::symlink(node_modules(), dir.path().join("node_modules")).expect("link node_modules");
    std::fs::write(dir.path().join("graph.mjs"), source).expect("write the graph");
    std::fs::write(dir.path().join("in.jsonl"), "{\"invoke\": {\"x\": 1}}\n").expect("write the inputs");
    dir
}

/// A graph whose only node awaits a promise nothing settles (`setInterval` keeps node alive).
const NEVER_SETTLES: &str = r#"import { Annotation, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ x: Annotation() });
KEEP_ALIVE
export function build() {
  return new StateGraph(State).addNode("a", () => new Promise(() => {})).addEdge(START, "a");
}
"#;

/// The pids of live processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle)))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_stuck_js_graph_ends_with_one_line_or_at_sigterm_with_nothing_left() {
    // Unsettled: node exits 13 at the end of its event loop; one line of the kit's, exit 1.
    let dir = js_app(&NEVER_SETTLES.replace("KEEP_ALIVE", ""));
    let out = record_js(dir.path(), &["--graph", "./graph.mjs:build", "--inputs", "in.jsonl", "--out", "t.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a promise that never settles (node exit 13)"), "{err}");
    assert!(!dir.path().join("t.json").exists());

    // Kept alive: it would run forever; SIGTERM stops the recorder and exits 143.
    let dir = js_app(&NEVER_SETTLES.replace("KEEP_ALIVE", "setInterval(() => {}, 1000);"));
    let out_path = dir.path().join("t.json");
    let child = Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .current_dir(dir.path())
        .args(["record", "--graph", "./graph.mjs:build", "--inputs", "in.jsonl", "--out"])
        .arg(&out_path)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let needle = out_path.to_string_lossy().into_owned();
    let started = std::time::Instant::now();
    // The recorder is up when node runs with the --out path.
    while processes_with(&needle).len() < 2 && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on our own child's pid, no memory involved.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted (signal 15)") && !err.contains("killed by"), "{err}");
    assert!(processes_with(&needle).is_empty(), "left running: {:?}", processes_with(&needle));
    assert!(!out_path.exists());
}

/// The kit's SQLite backend's registration, as the front ends build it.
fn sqlite() -> conformance_core::Registration {
    conformance_backends::Backend::Sqlite.registration(conformance_backends::Needs::default()).unwrap()
}
