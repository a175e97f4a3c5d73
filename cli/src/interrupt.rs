//! SIGINT, SIGTERM and SIGHUP during a conformance run (either front end): no new case starts
//! (`conformance_core::leftovers::interrupted`), what the run made is undone
//! (`conformance_core::leftovers::run_interrupt_cleanups`: the throwaway PostgreSQL server,
//! case files, temporary directories) and the process exits with 128 + the signal's number.

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set once a signal came; the handler exits the process when its cleanup is done.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Called by the run before it reports: when a signal came, the cases that ran after it are
/// no verdict, so nothing is printed or written, and the thread waits for the handler to
/// exit the process.
pub fn stop_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// Installs the handler (a thread waiting for the signals); a second signal during the
/// cleanup is ignored. When the handler cannot be installed, the run goes on without it and
/// the next run removes what an interrupted one left.
pub fn install() {
    let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "warning: cannot handle SIGINT/SIGTERM ({e}); an interrupted run leaves its files to the next run"
            );
            return;
        }
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            eprintln!("\ninterrupted (signal {signal}): removing what the run made");
            conformance_core::leftovers::run_interrupt_cleanups();
            std::process::exit(128 + signal);
        }
    });
}
