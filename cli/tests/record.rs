//! `checkpoint-conformance record` (docs/traces.md, issue 41): records the example graph of
//! examples/record into a trace that parses, carries its `recorded_with` header, and replays
//! on the SQLite reference saver; a bad inputs line is one line naming it, exit 2.
//!
//! Needs python3 with venv: LangGraph comes from `target/record-venv`, which
//! `bridges/python/record_traces.py` makes with the pinned packages on first use (as
//! xtask/tests/record.rs does).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use conformance_spec::fuzz::replay;
use conformance_spec::fuzz::trace::Trace;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The virtualenv with LangGraph, made by record_traces.py if missing.
fn venv() -> PathBuf {
    let venv = root().join("target/record-venv");
    if !venv.join("bin/python").exists() {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let out = Command::new("python3")
            .arg(root().join("bridges/python/record_traces.py"))
            .arg("--out")
            .arg(tmp.path())
            .arg("linear")
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "making the venv: {}", String::from_utf8_lossy(&out.stderr));
    }
    venv
}

fn record(dir: &Path, inputs: &str, out: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .current_dir(dir)
        .args(["record", "--graph", "my_app:build", "--inputs", inputs, "--out", out, "--app-id", "my-app", "--python"])
        .arg(venv())
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("the binary runs")
}

#[test]
fn the_example_graph_records_a_trace_that_replays_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for f in ["my_app.py", "inputs.jsonl"] {
        std::fs::copy(root().join("examples/record").join(f), dir.path().join(f)).expect("copy the example");
    }
    let out = record(dir.path(), "inputs.jsonl", "my-app.json");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("my-app.json: 24 steps from 7 input lines"), "{text}");
    let json = std::fs::read_to_string(dir.path().join("my-app.json")).expect("the trace was written");
    let trace = Trace::parse(&json).unwrap_or_else(|e| panic!("{e}"));
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
    replay(&checkpoint_sqlite::registration(), &trace).unwrap_or_else(|e| panic!("{e}"));

    std::fs::write(dir.path().join("bad.jsonl"), "{\"invoke\": {\"topic\": \"x\", \"notes\": []}}\n{\"resum\": 1}\n")
        .expect("write");
    let out = record(dir.path(), "bad.jsonl", "bad.json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.jsonl:2: unknown key 'resum'"), "{err}");
    assert!(!dir.path().join("bad.json").exists());
}
