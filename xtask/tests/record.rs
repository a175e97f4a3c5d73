//! The trace recorder (`bridges/python/checkpoint_bridge/record.py`, issues 17 and 41): a
//! fresh recording of every graph of `bridges/python/record_traces.py` (and of `bridges/js/record_traces.mjs`) against LangGraph's
//! `InMemorySaver` (LangGraph JS's `MemorySaver`), ids, timestamps and version fractions masked, must equal the shipped
//! trace of that graph step for step, and must replay on the reference savers without a
//! difference. A recorder that loses a value on the way in (so that the recorded result
//! lacks it too, and the fresh trace still replays), leaves out the `task_path` it must
//! fill in, or records a result other than the saver's fails here.
//!
//! Needs python3 with venv, and node with npm for the traces recorded from LangGraph JS
//! (`bridges/js/record_traces.mjs`, the `js-*` traces): the scripts make `target/record-venv`
//! and `target/record-js` with the pinned packages (from PyPI and npm) on first use.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Checkpoint ids, task ids (UUIDs) and interrupt ids (32 hex digits) are new at every
/// recording: each becomes `#` characters of its length, in strings and inside value bytes.
fn mask_ids(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    let uuid = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, b)| if [8, 13, 18, 23].contains(&i) { *b == b'-' } else { hex(b) })
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let n = if bytes.len() - i >= 36 && uuid(&bytes[i..i + 36]) {
            36
        } else if bytes.len() - i >= 32 && bytes[i..i + 32].iter().all(hex) {
            32
        } else {
            0
        };
        if n > 0 {
            out.extend(std::iter::repeat_n(b'#', n));
            i += n;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Standard base64 (the traces' `$base64`), decoded.
fn base64(text: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {text:?}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(val).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// A trace value with what differs between two recordings of the same run masked: ids
/// (see [`mask_ids`]), every `ts`, and the random fraction of `InMemorySaver`'s versions
/// (`"{n:032}.{random}"` keeps its `n`). Values are compared by their decoded bytes, ids
/// inside them masked.
fn mask(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let text = |s: &str| String::from_utf8_lossy(&mask_ids(s.as_bytes())).into_owned();
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x) {
                        ("ts", _) => Value::from("<ts>"),
                        ("$base64", Value::String(b)) => {
                            Value::from(String::from_utf8_lossy(&mask_ids(&base64(b))).into_owned())
                        }
                        _ => mask(x),
                    };
                    (text(k), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(mask).collect()),
        Value::String(s) => match s.split_once('.') {
            Some((n, frac)) if n.len() == 32 && n.bytes().all(|b| b.is_ascii_digit()) && !frac.is_empty() => {
                Value::from(format!("{}.<random>", n.trim_start_matches('0')))
            }
            _ => Value::from(text(s)),
        },
        other => other.clone(),
    }
}

/// The masked steps of a trace file, one canonical JSON line each.
fn masked_steps(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    trace["steps"].as_array().expect("steps").iter().map(|s| mask(s).to_string()).collect()
}

/// The traces whose saver calls come from threads that race: a subgraph's checkpoints and
/// its parent's writes, and the writes of `Send` tasks running in parallel, so their
/// interleaving differs between recordings. These are compared as a multiset of steps;
/// every other trace step by step.
const INTERLEAVED: [&str; 3] = ["fanout-retry.json", "subgraph.json", "subgraph-paused.json"];

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
fn a_fresh_recording_masked_is_the_shipped_one_and_replays_on_the_reference_savers() {
    let root = root();
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = Command::new("python3")
        .arg(root.join("bridges/python/record_traces.py"))
        .arg("--out")
        .arg(dir.path())
        // A set's order in a value's bytes (LangGraph's join channels) follows str hashes.
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("python3 runs");
    let js = Command::new("node")
        .arg(root.join("bridges/js/record_traces.mjs"))
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("node runs");
    assert!(
        js.status.success(),
        "record_traces.mjs failed: {}{}",
        String::from_utf8_lossy(&js.stdout),
        String::from_utf8_lossy(&js.stderr)
    );
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
    assert_eq!(shipped.len(), 14, "the fourteen shipped traces of traces/README.md");
    let mut differ = Vec::new();
    for file in &shipped {
        let name = file.file_name().expect("a file name");
        let fresh = dir.path().join(name);
        assert!(fresh.exists(), "the recorder wrote no {}", fresh.display());
        let (mut want, mut got) = (masked_steps(file), masked_steps(&fresh));
        if INTERLEAVED.iter().any(|n| *n == name) {
            want.sort();
            got.sort();
        }
        if want.len() != got.len() {
            differ.push(format!("{}: {} steps shipped, {} recorded", file.display(), want.len(), got.len()));
        } else if let Some(i) = (0..want.len()).find(|i| want[*i] != got[*i]) {
            let cut = |s: &str| s.chars().take(1500).collect::<String>();
            differ.push(format!(
                "{}: step {} differs (ids and ts masked)\n  shipped:  {}\n  recorded: {}",
                file.display(),
                i + 1,
                cut(&want[i]),
                cut(&got[i])
            ));
        }
    }
    assert!(differ.is_empty(), "a fresh recording is not the shipped one:\n{}", differ.join("\n"));

    for backend in ["memory", "sqlite"] {
        let (code, text) = replay(dir.path(), &["--backend", backend]);
        assert_eq!(code, Some(0), "the fresh recording does not replay on {backend}:\n{text}");
        assert!(text.contains("14 of 14 traces replayed without a difference"), "{text}");
    }
    // The fresh recording judges: a saver that drops the writes of a branch fails it.
    let (code, text) = replay(dir.path(), &["--mutant", "branch_writes_dropped"]);
    assert_eq!(code, Some(1), "a mutant replayed the fresh recording without a difference:\n{text}");
}
