//! `cargo xtask replay` against a saver of another language (issue 17): the shipped traces
//! replay on LangGraph's own `InMemorySaver` through the bridge without a difference (its
//! reads carry no `task_path`, which the bridge declares: CONTRACT §2 put_writes), and a
//! trace whose recorded result was changed fails there, naming the step and the field.
//!
//! Needs python3 with venv: the bridge makes its managed environment under
//! `target/checkpoint-bridge` on first use (pip, from PyPI).

use std::path::Path;
use std::process::Command;

fn replay(path: &Path, backend: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("replay")
        .arg(path)
        .args(["--backend", backend])
        .env("NO_COLOR", "1")
        .output()
        .expect("the xtask binary runs");
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn shipped_traces_replay_on_langgraphs_memory_saver_and_a_changed_result_fails() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let (code, text) = replay(&traces, "python:memory");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("5 of 5 traces replayed without a difference"), "{text}");

    // The first read of interrupt.json that finds a checkpoint, with its recorded metadata
    // "step" changed: the saver is right, so the trace must be found to differ there.
    let json = std::fs::read_to_string(traces.join("interrupt.json")).expect("the shipped trace");
    let mut trace: serde_json::Value = serde_json::from_str(&json).expect("a JSON trace");
    let steps = trace["steps"].as_array_mut().expect("steps");
    let (n, step) = steps
        .iter_mut()
        .enumerate()
        .find(|(_, s)| s["call"] == "get_tuple" && !s["expect"]["tuple"].is_null())
        .expect("a read that finds a checkpoint");
    step["expect"]["tuple"]["metadata"]["step"] = serde_json::json!(999);
    let dir = tempfile::tempdir().expect("a temp dir");
    let changed = dir.path().join("changed.json");
    std::fs::write(&changed, serde_json::to_string(&trace).expect("serialises")).expect("written");
    let (code, text) = replay(&changed, "python:memory");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("step {}: get_tuple(", n + 1)), "the step is named: {text}");
    assert!(text.contains("metadata[\"step\"]: expected 999"), "the field is named: {text}");
}
