//! Issue 13: `cargo xtask mutants` stopped by a signal leaves no case directory of a SQLite
//! mutant (`<temp dir>/checkpoint-mutant-<pid>-<n>`), and a run killed with SIGKILL has its
//! directories removed by the next run. Each run gets a temporary directory of its own
//! (`TMPDIR`), so what is left there is this run's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A SQLite mutant (its cases open a fresh database file in a case directory).
const SQLITE_MUTANT: &str = "ack_deferred_to_next_call";

fn start(tmp: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["mutants", "--only", SQLITE_MUTANT, "--jobs", "1"])
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xtask runs")
}

/// The mutant case directories in `tmp`.
fn case_dirs(tmp: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(tmp) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("checkpoint-mutant-"))
        .map(|e| e.path())
        .collect()
}

/// Waits until the run made a case directory other than `known` (panics after 120 s or when
/// the run ended).
fn wait_for_a_new_case_dir(run: &mut Child, tmp: &Path, known: &[PathBuf]) {
    let start = Instant::now();
    while case_dirs(tmp).iter().all(|d| known.contains(d)) {
        assert!(run.try_wait().unwrap().is_none(), "the run ended before it made a case directory");
        assert!(start.elapsed() < Duration::from_secs(120), "no case directory after 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_interrupted_mutants_run_leaves_no_case_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = start(tmp.path());
    wait_for_a_new_case_dir(&mut run, tmp.path(), &[]);
    assert!(Command::new("kill").args(["-INT", &run.id().to_string()]).status().unwrap().success());
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(130), "SIGINT is exit 128 + 2 after the cleanup");
    assert_eq!(case_dirs(tmp.path()), Vec::<PathBuf>::new(), "case directories left behind");
}

#[test]
fn a_killed_mutants_runs_directories_go_with_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    // SIGKILL cannot be caught: the directory of the case in flight stays for the next run
    // (tried again if the kill fell between two cases).
    let mut left = Vec::new();
    for _ in 0..5 {
        let mut run = start(tmp.path());
        wait_for_a_new_case_dir(&mut run, tmp.path(), &[]);
        run.kill().unwrap();
        run.wait().unwrap();
        left = case_dirs(tmp.path());
        if !left.is_empty() {
            break;
        }
    }
    assert!(!left.is_empty(), "five killed runs left no directory to sweep");
    let mut next = start(tmp.path());
    wait_for_a_new_case_dir(&mut next, tmp.path(), &left);
    let _ = next.kill();
    let _ = next.wait();
    for dir in left {
        assert!(!dir.exists(), "{} of the killed run survived the next run", dir.display());
    }
}

#[test]
fn a_finished_mutants_run_leaves_no_lock_file() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["mutants", "--only", SQLITE_MUTANT][..], &["mutants", "--fuzz", "--only", SQLITE_MUTANT][..]] {
        let status = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{args:?}: {status:?}");
        let locks: Vec<_> = std::fs::read_dir(tmp.path().join("checkpoint-conformance"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(locks.is_empty(), "{args:?} left lock files: {locks:?}");
        assert_eq!(case_dirs(tmp.path()), Vec::<PathBuf>::new(), "{args:?} left case directories");
    }
}

#[test]
fn an_interrupted_mutants_fuzz_run_leaves_no_case_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["mutants", "--fuzz", "--only", SQLITE_MUTANT])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_a_new_case_dir(&mut run, tmp.path(), &[]);
    assert!(Command::new("kill").args(["-TERM", &run.id().to_string()]).status().unwrap().success());
    assert_eq!(run.wait().unwrap().code(), Some(143), "SIGTERM is exit 128 + 15 after the cleanup");
    assert_eq!(case_dirs(tmp.path()), Vec::<PathBuf>::new(), "case directories left behind");
}
