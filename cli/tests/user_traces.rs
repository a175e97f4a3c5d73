//! `--traces DIR` (docs/traces.md §4, issue 41): each trace file of a user's directory is a
//! case of the `traces` capability, replayed on the saver through the run's own path; one
//! whose recorded answer the saver does not give fails, naming the file and the step; a
//! bad directory is one line, exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The binary run in `dir`, with its cache and its temporary directory there (not the
/// system's, where runs other tests kill on purpose leave lock files that the next run
/// reports on stderr: a second line beside a usage error).
fn run(dir: &Path, args: &[&str]) -> Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .current_dir(dir)
        .env("TMPDIR", &tmp)
        .args(["--backend", "memory", "--capabilities", "traces", "--progress", "quiet"])
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env_remove("CHECKPOINT_CONFORMANCE_TRACES")
        .output()
        .expect("the binary runs")
}

/// The report's result of case `id`: (outcome, message).
fn result(report: &Path, id: &str) -> (String, String) {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).expect("the report")).expect("JSON");
    let t = json["tests"].as_array().expect("tests").iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("{id}"));
    (t["outcome"].as_str().unwrap_or("").to_owned(), t["message"].as_str().unwrap_or("").to_owned())
}

#[test]
fn each_user_trace_is_a_traces_case_and_a_changed_answer_fails_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let traces = dir.path().join("my-traces");
    std::fs::create_dir(&traces).expect("mkdir");
    std::fs::copy(root().join("traces/time-travel.json"), traces.join("time-travel.json")).expect("copy");
    // The linear trace with one recorded read changed: its first checkpoint read back
    // carries a metadata key no put stored, as a recorder bug or a saver that adds one.
    let mut linear: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("traces/linear.json")).expect("read")).expect("JSON");
    let steps = linear["steps"].as_array_mut().expect("steps");
    let (n, read) = steps
        .iter_mut()
        .enumerate()
        .find(|(_, s)| s["call"] == "get_tuple" && !s["expect"]["tuple"].is_null())
        .expect("a read of a checkpoint");
    read["expect"]["tuple"]["metadata"]["added"] = serde_json::json!(1);
    std::fs::write(traces.join("My App.json"), linear.to_string()).expect("write");

    let report = dir.path().join("report.json");
    let out = run(dir.path(), &["--traces", "my-traces", "--json", report.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(result(&report, "traces::user_time_travel").0, "passed");
    let (outcome, message) = result(&report, "traces::user_my_app");
    assert_eq!(outcome, "failed");
    let step = format!("step {}", n + 1);
    assert!(message.contains("My App.json") && message.contains(&step) && message.contains("added"), "{message}");
    // The shipped traces still run beside them.
    assert_eq!(result(&report, "traces::replays_linear_graph_over_four_turns").0, "passed");

    // The variable names the same directory for a run without the flag.
    let listed = Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .current_dir(dir.path())
        .args(["--backend", "memory", "--list-cases"])
        .env("CHECKPOINT_CONFORMANCE_TRACES", &traces)
        .output()
        .expect("the binary runs");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("traces::user_my_app MUST\n") && listed.contains("traces::user_time_travel MUST\n"));
}

#[test]
fn a_bad_traces_directory_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = run(dir.path(), &["--traces", "missing"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--traces: traces directory missing"), "{stderr}");
    std::fs::write(dir.path().join("bad.json"), r#"{"format": "checkpoint-trace/9", "steps": []}"#).expect("write");
    let out = run(dir.path(), &["--traces", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.json"), "{stderr}");
    // A user trace's id without its directory says where it comes from.
    let out = run(dir.path(), &["--cases", "traces::user_my_app"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("give its directory with --traces DIR"), "{stderr}");
}
