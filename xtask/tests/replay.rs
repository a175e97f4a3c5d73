//! `cargo xtask replay` as a user meets it (issue 17): the shipped traces replay on
//! LangGraph's own `InMemorySaver` through the bridge without a difference (its reads carry
//! no `task_path`, which the bridge declares: CONTRACT §2 put_writes), and a changed
//! recorded result fails there, naming the step and the field; step numbers are the file's
//! even where a saver cannot reopen; a trace file that would check less than it says is
//! refused (exit 2); a replay leaves no lock file behind.
//!
//! The bridged test needs python3 with venv: the bridge makes its managed environment
//! under `target/checkpoint-bridge` on first use (pip, from PyPI).

use std::path::{Path, PathBuf};
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

fn shipped(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("a shipped trace")).expect("JSON")
}

fn write(dir: &Path, name: &str, trace: &serde_json::Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(trace).expect("serialises")).expect("written");
    path
}

#[test]
fn a_difference_after_a_reopen_step_is_named_by_its_number_in_the_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut trace = shipped("killed-resumed.json");
    let steps = trace["steps"].as_array_mut().expect("steps");
    assert!(steps.iter().any(|s| s["call"] == "reopen"), "the trace has a reopen step");
    let last = steps.len();
    let step = steps.last_mut().expect("a last step");
    assert_eq!(step["call"], "get_tuple");
    step["expect"]["tuple"]["metadata"]["step"] = serde_json::json!(99);
    let file = write(dir.path(), "changed.json", &trace);
    // memory cannot reopen (the step goes on with the same instance), sqlite can.
    for backend in ["memory", "sqlite"] {
        let (code, text) = replay(&file, backend);
        assert_eq!(code, Some(1), "{backend}: {text}");
        assert!(text.contains(&format!("step {last}: get_tuple(")), "{backend}: {text}");
    }
}

/// A trace file's name, an edit of its JSON, and what the refusal must say.
type Edit = (&'static str, fn(&mut serde_json::Value), &'static str);

#[test]
fn a_trace_that_would_check_less_than_it_says_is_refused() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let edits: [Edit; 3] = [
        (
            "typo.json",
            |t| {
                let s = &mut t["steps"][0];
                let expect = s["expect"].take();
                s.as_object_mut().expect("a step").remove("expect");
                s["expct"] = expect;
            },
            "step 1: unknown field `expct`",
        ),
        ("kind.json", |t| t["steps"][0]["expect"] = serde_json::json!({"error": "Nope"}), "unknown error kind `Nope`"),
        ("empty.json", |t| t["steps"] = serde_json::json!([]), "the trace has no steps"),
    ];
    for (name, edit, needle) in edits {
        let mut trace = shipped("interrupt.json");
        edit(&mut trace);
        let (code, text) = replay(&write(dir.path(), name, &trace), "memory");
        assert_eq!(code, Some(2), "{name}: {text}");
        assert!(text.contains(needle), "{name}: expected {needle:?} in: {text}");
    }
}

#[test]
fn a_fifo_and_every_other_bad_file_of_a_directory_are_named_and_nothing_is_replayed() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let fifo = dir.path().join("a-fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo made the FIFO");
    let mut far = shipped("interrupt.json");
    far["steps"].as_array_mut().expect("steps").insert(0, serde_json::json!({"call": "instance", "index": 3000}));
    write(dir.path(), "b-far.json", &far);
    write(dir.path(), "c-good.json", &shipped("interrupt.json"));
    let started = std::time::Instant::now();
    let (code, text) = replay(dir.path(), "sqlite");
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("a-fifo.json: not a regular file"), "{text}");
    assert!(text.contains("b-far.json: step 1: instance 3000 is not open"), "{text}");
    assert!(!text.contains("c-good.json"), "nothing replayed while a file is bad: {text}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "refused without opening 3000 instances");
}

#[test]
fn a_replay_leaves_no_lock_file() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/interrupt.json");
    let tmp = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("replay")
        .arg(&traces)
        .args(["--backend", "sqlite"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("the xtask binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let locks = tmp.path().join("checkpoint-conformance");
    let left: Vec<_> = std::fs::read_dir(&locks).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn shipped_traces_replay_on_langgraphs_memory_saver_and_a_changed_result_fails() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let (code, text) = replay(&traces, "python:memory");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("14 of 14 traces replayed without a difference"), "{text}");

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
