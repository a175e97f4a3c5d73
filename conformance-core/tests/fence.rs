//! The interrupt soak (issue 40, `cli/tests/soak.rs`) found SQLite case files made beside
//! `--sqlite-path` after the interrupt's cleanup had removed the case's files: a worker was
//! opening the database while the cleanup ran. `leftovers::unless_interrupted` fences such
//! work: the cleanup waits for a `make` under way, and none starts after it. Its own test
//! binary: the interrupt is process-wide.

use std::time::Duration;

use conformance_core::leftovers::{on_interrupt, run_interrupt_cleanups, unless_interrupted};

#[test]
fn a_file_being_made_when_the_interrupt_comes_is_removed_and_none_is_made_after() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("case.db");
    let made = file.clone();
    // The worker: registers the file's cleanup, then makes it slowly.
    let (registered_tx, registered) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        unless_interrupted(|| {
            let path = made.clone();
            let guard = on_interrupt(move || {
                let _ = std::fs::remove_file(&path);
            });
            registered_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            std::fs::write(&made, b"SQLite format 3\0").unwrap();
            guard
        })
    });
    registered.recv().unwrap();
    // The signal handler, while the file is being made.
    run_interrupt_cleanups();
    let guard = worker.join().unwrap();
    assert!(guard.is_some(), "the make under way ran");
    assert!(!file.exists(), "{} was made after the cleanup removed it", file.display());
    // Nothing is made once the interrupt began.
    let later = dir.path().join("later.db");
    assert!(unless_interrupted(|| std::fs::write(&later, b"x")).is_none());
    assert!(!later.exists());
}
