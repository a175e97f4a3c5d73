//! Isolation of one piece of saver code: a fresh tokio runtime on a thread of its own, a
//! time limit after which the thread is abandoned, and panics caught as messages. Every
//! case, probe and lifespan hook runs through [`run_isolated`] (CONTRACT-independent
//! harness rules).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::Duration;

use futures::FutureExt;

/// Grace time after a case's timeout for its thread to report before it is abandoned.
const ABANDON_GRACE: Duration = Duration::from_secs(2);

/// A fresh tokio runtime with every driver: multi-thread (4 workers) or current-thread
/// ([`Registration::multi_thread`]).
pub fn runtime(multi_thread: bool) -> std::io::Result<tokio::runtime::Runtime> {
    if multi_thread {
        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    }
}

/// Runs `fut` on a fresh runtime on its own thread and waits at most `limit` (plus a
/// short grace) for it. A panic becomes `Err("panicked: ...")`; a hang becomes
/// `Err("timed out ...")` and the thread is abandoned, so the run goes on even if the
/// saver blocks its thread forever.
pub(crate) fn run_isolated<T, F, Fut>(multi_thread: bool, limit: Duration, make: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("conformance-case".into()).spawn(move || {
        let out = match runtime(multi_thread) {
            Ok(rt) => {
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| rt.block_on(make())));
                // A runtime whose tasks are stuck in blocking code must not block this
                // thread on drop.
                rt.shutdown_timeout(Duration::from_millis(100));
                r.map_err(|p| format!("panicked: {}", panic_message(&*p)))
            }
            Err(e) => Err(format!("could not build a tokio runtime: {e}")),
        };
        let _ = tx.send(out);
    });
    if let Err(e) = spawned {
        return Err(format!("could not spawn a thread: {e}"));
    }
    match rx.recv_timeout(limit + ABANDON_GRACE) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "timed out after {:.1} s and did not yield (a blocking call in an async method?); its thread was abandoned",
            limit.as_secs_f64()
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("the case's thread died without a result".into()),
    }
}

/// The text of a panic payload.
///
/// tokio's panic on a current-thread runtime ("can call blocking only when running on the
/// multi-threaded runtime", from `block_in_place`) gets a hint naming
/// [`Registration::multi_thread`], the registration's fix.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    };
    if text.contains("multi-threaded runtime") || text.contains("block_in_place") {
        format!("{text} (the saver needs a multi-thread tokio runtime: register it with Registration::multi_thread())")
    } else {
        text
    }
}

/// Awaits `fut`, turning a panic into `Err`.
pub(crate) async fn catch<T>(fut: impl Future<Output = T>) -> Result<T, String> {
    AssertUnwindSafe(fut).catch_unwind().await.map_err(|p| format!("panicked: {}", panic_message(&*p)))
}
