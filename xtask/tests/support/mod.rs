//! What the front end's tests of inputs and leftovers share (`inputs.rs`, `robust.rs`):
//! running `cargo xtask conformance` in a temporary directory of its own and reading what
//! it said.

#![allow(dead_code)] // each test binary uses its part

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `cargo xtask conformance ARGS` with `$TMPDIR` set to `tmp` and `envs` added, waited for.
pub fn xtask_in(tmp: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.arg("conformance").args(args).env("NO_COLOR", "1").env("TMPDIR", tmp).env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("the xtask binary runs")
}

/// Bytes of output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit 2 and exactly one line on stderr containing `needle`.
#[track_caller]
pub fn assert_usage(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}\nstdout: {}", text(&out.stdout));
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line expected: {stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(needle), "expected {needle:?} in: {stderr}");
}

/// A real SQLite database with a table and a row, in rollback-journal mode.
pub fn database(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
}

/// The output of `child`, which must end within 60 s (else it is killed and the test fails,
/// saying it blocked on `what`).
#[track_caller]
pub fn wait_or_kill(mut child: std::process::Child, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run blocked on {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}
