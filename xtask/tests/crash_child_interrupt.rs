//! Issue 13: a run interrupted while the durability crash test's child runs leaves no lock
//! file of that child in `<temp dir>/checkpoint-conformance/` (the next run would name the
//! child as a run that did not finish). The run gets a temporary directory of its own
//! (`TMPDIR`), so every lock file there is this run's or its child's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lock files in `tmp`'s lock directory.
fn lock_files(tmp: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(tmp.join("checkpoint-conformance")) else { return Vec::new() };
    entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "lock")).collect()
}

#[test]
fn an_interrupt_during_the_crash_test_leaves_no_lock_file_of_its_child() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["conformance", "--backend", "sqlite", "--capabilities", "durability", "--progress", "quiet"])
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xtask runs");
    let own = format!("{}.lock", run.id());
    let start = Instant::now();
    // A lock file of another process: the crash test's child is running.
    while lock_files(tmp.path()).iter().all(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == own)) {
        assert!(run.try_wait().unwrap().is_none(), "the run ended before the crash test started a child");
        assert!(start.elapsed() < Duration::from_secs(120), "no crash child after 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(Command::new("kill").args(["-INT", &run.id().to_string()]).status().unwrap().success());
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(lock_files(tmp.path()), Vec::<PathBuf>::new(), "lock files left by the interrupted run");
}
