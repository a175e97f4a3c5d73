//! The trace recorder (`bridges/python/checkpoint_bridge/record.py`, issue 17): a fresh
//! recording of every graph of `bridges/python/record_traces.py` against LangGraph's
//! `InMemorySaver` must make the same calls (as many of each) as the shipped trace of that graph, and must
//! replay on the reference savers without a difference. A recorder that loses a value,
//! leaves out the `task_path` it must fill in, or records a result other than the saver's
//! fails here.
//!
//! Needs python3 with venv; the script makes `target/record-venv` with the pinned LangGraph
//! packages (from PyPI) on first use, as `.ci/run` allows.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The calls of a trace in order: `["get_tuple", "put", "put_writes", …]`.
fn calls(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    trace["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no steps", file.display()))
        .iter()
        .map(|s| s["call"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn replay(dir: &Path, target: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("replay")
        .arg(dir)
        .args(target)
        .env("NO_COLOR", "1")
        .output()
        .expect("the xtask binary runs");
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_fresh_recording_makes_the_shipped_calls_and_replays_on_the_reference_savers() {
    let root = root();
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = Command::new("python3")
        .arg(root.join("bridges/python/record_traces.py"))
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "record_traces.py failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let mut shipped: Vec<PathBuf> = std::fs::read_dir(root.join("traces"))
        .expect("traces/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    shipped.sort();
    assert_eq!(shipped.len(), 12, "the twelve shipped traces of traces/README.md");
    for file in &shipped {
        let fresh = dir.path().join(file.file_name().expect("a file name"));
        assert!(fresh.exists(), "the recorder wrote no {}", fresh.display());
        // As counts per call: a subgraph's puts and its parent's put_writes run on threads of
        // their own, so their interleaving differs between recordings.
        let counts = |f: &Path| {
            calls(f).into_iter().fold(std::collections::BTreeMap::<String, usize>::new(), |mut m, c| {
                *m.entry(c).or_default() += 1;
                m
            })
        };
        assert_eq!(counts(&fresh), counts(file), "{}: a fresh recording makes other calls", file.display());
    }

    for backend in ["memory", "sqlite"] {
        let (code, text) = replay(dir.path(), &["--backend", backend]);
        assert_eq!(code, Some(0), "the fresh recording does not replay on {backend}:\n{text}");
        assert!(text.contains("12 of 12 traces replayed without a difference"), "{text}");
    }
    // The fresh recording judges: a saver that drops the writes of a branch fails it.
    let (code, text) = replay(dir.path(), &["--mutant", "branch_writes_dropped"]);
    assert_eq!(code, Some(1), "a mutant replayed the fresh recording without a difference:\n{text}");
}
