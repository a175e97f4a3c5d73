//! The interrupt soak (issue 40): a SIGTERM while `--sqlite-path` was being checked left the
//! probe `<base>.case-<pid>-18446744073709551615` beside the user's database, made before
//! the run's marker, so no later run may remove it. The probe is made and removed under the
//! interrupt's fence now: once the interrupt's cleanups are done (the process exits then), no
//! probe is there, and none is made after. Its own test binary: the interrupt is for the
//! whole process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn no_probe_beside_the_path_outlives_the_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("user.db");
    let probe = dir.path().join(format!("user.db.case-{}-{}", std::process::id(), u64::MAX));
    let stop = Arc::new(AtomicBool::new(false));
    // A run checking its path again and again, as a run just started does once.
    let checker = {
        let (base, stop) = (base.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let _ = checkpoint_sqlite::SqliteStorage::beside(&base, checkpoint_sqlite::kit_options());
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    conformance_core::leftovers::run_interrupt_cleanups();
    // The process would exit now: nothing of the probe is there, nor made later.
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_millis(500) {
        for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&probe.file_name().unwrap().to_string_lossy().into_owned()) && !seen.contains(&name) {
                seen.push(name);
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    checker.join().unwrap();
    assert!(seen.is_empty(), "after the interrupt's cleanups: {seen:?}");
}
