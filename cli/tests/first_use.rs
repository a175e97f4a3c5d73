//! The first use of a bridged backend, interrupted (issue 40 row 9): the managed Python
//! environment is being made (`python -m venv`, then `pip install`) when the front end gets
//! SIGTERM. The installer is stopped before the front end exits, and the next run finds the
//! half-made environment (it has no stamp, written last) and makes it again.
//!
//! The interpreter is a fake (`$CHECKPOINT_BRIDGE_BASE_PYTHON`, a shell script): its `-m venv`
//! copies itself into the environment and its `-m pip install` appends a line to a file in
//! the environment every 50 ms for 30 s, as a pip still writing would.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FAKE_PYTHON: &str = r#"#!/bin/sh
case "$1 $2" in
"-m venv") echo venv >> "$FAKE_LOG"; mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0 ;;
"-m pip")
    echo pip >> "$FAKE_LOG"
    [ -n "$FAKE_PIP_QUICK" ] && exit 0
    venv=$(dirname "$(dirname "$0")")
    i=0
    while [ $i -lt 600 ]; do echo $i >> "$venv/pip-wrote"; i=$((i+1)); sleep 0.05; done
    exit 0 ;;
esac
echo "fake python cannot $*" >&2
exit 1
"#;

/// Starts the binary on `python:memory` with the fake interpreter and its cache in `dir`.
fn start(dir: &Path, quick_pip: bool) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"));
    cmd.args(["--backend", "python:memory", "--progress", "quiet"])
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("CHECKPOINT_BRIDGE_BASE_PYTHON", dir.join("python"))
        .env("FAKE_LOG", dir.join("log"))
        .env_remove("CHECKPOINT_BRIDGE_PYTHON")
        .env_remove("FAKE_PIP_QUICK")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if quick_pip {
        cmd.env("FAKE_PIP_QUICK", "1");
    }
    cmd.spawn().expect("the binary starts")
}

fn wait(child: &mut std::process::Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: not done within {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_during_the_first_pip_install_stops_pip_and_the_next_run_remakes_the_environment() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fake = dir.path().join("python");
    std::fs::write(&fake, FAKE_PYTHON).expect("the fake interpreter");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("executable");
    let venv = dir.path().join("cache/checkpoint-conformance/python/venv");
    let wrote = venv.join("pip-wrote");

    let mut run = start(dir.path(), false);
    let start_time = Instant::now();
    while !wrote.exists() {
        assert!(start_time.elapsed() < Duration::from_secs(60), "the fake pip did not start within 60 s");
        assert!(run.try_wait().expect("wait").is_none(), "the binary ended before pip wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) of the binary this test started.
    unsafe {
        libc::kill(run.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = wait(&mut run, Duration::from_secs(30), "the interrupted run");
    assert_eq!(status.code(), Some(143), "{status}");
    let size = std::fs::metadata(&wrote).expect("pip's file").len();
    std::thread::sleep(Duration::from_millis(800));
    let later = std::fs::metadata(&wrote).expect("pip's file").len();
    assert_eq!(size, later, "pip still wrote into the environment after the front end exited");
    assert!(!venv.join(".checkpoint-bridge-stamp").exists(), "a half-made environment has no stamp");

    // The next run finds the environment half-made and makes it again.
    let mut again = start(dir.path(), true);
    wait(&mut again, Duration::from_secs(60), "the next run");
    let log = std::fs::read_to_string(dir.path().join("log")).expect("the fake's log");
    assert_eq!(log.lines().collect::<Vec<_>>(), ["venv", "pip", "venv", "pip"], "{log}");
    assert!(!wrote.exists(), "the half-made environment was removed before it was made again");
}
