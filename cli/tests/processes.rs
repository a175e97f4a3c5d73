//! Nothing the run started outlives it (issue 40 row 15): an outside harness that times a
//! run found processes left in the run's process group after it exited. Here a bridge
//! child's saver starts a `sleep 600` in its setup and the child exits when its stdin
//! closes, leaving the sleep orphaned; the front end must end it before it exits, on a
//! normal end and on SIGTERM.
//!
//! The child is a fake (`--python` names a shell script; `-c` is the import check, anything
//! else runs a small protocol server in the system's python3 that declares every
//! operation unsupported), so no environment is installed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FAKE_PYTHON: &str = r#"#!/bin/sh
[ "$1" = "-c" ] && exit 0
exec python3 "$(dirname "$0")/child.py"
"#;

const CHILD: &str = r#"
import json, subprocess, sys
for line in sys.stdin:
    r = json.loads(line)
    op, rid = r["op"], r["id"]
    ok = None
    if op == "hello":
        ok = {"protocol": 1, "server": "fake", "saver": "memory", "reopen": False}
    elif op == "setup":
        subprocess.Popen(["sleep", "600"])
    elif op == "open":
        ok = {"handle": 1, "location": None, "reopen": False, "saver": {"class": "Fake", "side": "async"}}
    elif op not in ("close", "release", "teardown", "ping"):
        print(json.dumps({"id": rid, "error": {"kind": "Unsupported", "message": "fake"}}), flush=True)
        continue
    print(json.dumps({"id": rid, "ok": ok}), flush=True)
"#;

/// The processes of process group `pgid` (pid and command line).
fn group(pgid: u32) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        if rest.split_whitespace().nth(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!("{} {}", entry.file_name().to_string_lossy(), cmd.replace('\0', " ").trim()));
        }
    }
    found
}

/// Runs the binary as the leader of a process group of its own (as a harness or a shell
/// starts it), SIGTERMs it after `term_after` if given, and returns what is left of its
/// group once it exited.
fn left_after_run(dir: &Path, term_after: Option<Duration>) -> (Option<i32>, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .args(["--backend", "python:memory", "--capabilities", "put", "--progress", "quiet"])
        .arg("--python")
        .arg(dir.join("python"))
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("CHECKPOINT_BRIDGE_PYTHON")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the binary starts");
    let pgid = child.id();
    let start = Instant::now();
    let mut termed = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if term_after.is_some_and(|t| start.elapsed() >= t) && !termed {
            // SAFETY: kill(2) of the binary this test started.
            unsafe {
                libc::kill(pgid as libc::pid_t, libc::SIGTERM);
            }
            termed = true;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the run did not end within 120 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    let left = group(pgid);
    if !left.is_empty() {
        // SAFETY: kill(2) of the group this test started (what the run left).
        unsafe {
            libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
        }
    }
    (status.code(), left)
}

#[test]
fn no_process_of_the_run_outlives_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("python"), FAKE_PYTHON).expect("the fake interpreter");
    std::fs::set_permissions(dir.path().join("python"), std::fs::Permissions::from_mode(0o755)).expect("executable");
    std::fs::write(dir.path().join("child.py"), CHILD).expect("the fake child");
    let (code, left) = left_after_run(dir.path(), None);
    assert!(code.is_some(), "the run ended by a signal");
    assert!(left.is_empty(), "left in the run's process group after a normal end: {left:?}");
    let (code, left) = left_after_run(dir.path(), Some(Duration::from_millis(1500)));
    assert!(left.is_empty(), "left in the run's process group after SIGTERM (exit {code:?}): {left:?}");
}
