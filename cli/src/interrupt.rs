//! SIGINT, SIGTERM and SIGHUP during a conformance run (either front end) or a recording
//! (`record`, whose recorder child is killed by its `on_interrupt` cleanup): no new case starts
//! (`conformance_core::leftovers::interrupted`), what the run made is undone
//! (`conformance_core::leftovers::run_interrupt_cleanups`: the throwaway PostgreSQL server,
//! case files, temporary directories) and the process exits with 128 + the signal's number.

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set once a signal came; the handler exits the process when its cleanup is done.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Held while the verdict's reports are written ([`verdict`]): a signal that comes
/// meanwhile waits for it, so the reports are the run's, both complete, or (a signal
/// before it) none.
static VERDICT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Taken by the run while it writes its reports: the handler waits for the guard before it
/// cleans up and exits (128 + the signal).
pub fn verdict() -> std::sync::MutexGuard<'static, ()> {
    VERDICT.lock().unwrap_or_else(|e| e.into_inner())
}

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
            // A verdict being printed and written is finished first; held to the exit.
            let _verdict = verdict();
            eprintln!("\ninterrupted (signal {signal}): removing what the run made");
            conformance_core::leftovers::run_interrupt_cleanups();
            // Nothing the run started outlives it (issue 40 row 15).
            conformance_core::process_group::end_descendants(crate::conformance::END_LIMIT);
            std::process::exit(128 + signal);
        }
    });
}
