//! Isolation of one piece of saver code: a fresh tokio runtime on a thread of its own, a
//! time limit after which the thread is abandoned, and panics caught. Every case, probe and
//! lifespan hook runs through [`spawn_isolated`] (waited on by [`run_isolated`], or awaited
//! by a probe), and every way it can end without a result is an [`Abort`]
//! (CONTRACT-independent harness rules).

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use futures::FutureExt;

/// Grace time after a case's timeout for its thread to report before it is abandoned.
const ABANDON_GRACE: Duration = Duration::from_secs(2);

/// Why isolated saver code (a case, a probe, a hook, a factory, a cleanup) gave no result.
/// Its [`Display`](fmt::Display) is the phrase a report splices after the name of what
/// aborted ("the saver panicked: ...", "the case timed out after 2.0 s while in put(...)").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort {
    /// It panicked, with this message ([`panic_message`]).
    Panicked(String),
    /// It did not finish within `limit`.
    TimedOut {
        /// The time limit it had.
        limit: Duration,
        /// The saver calls still in flight when the limit passed (" while in put(...)",
        /// empty when none was, or when they are not known where the abort is made).
        in_flight: String,
        /// True when its thread did not even yield to the runtime's timer (a blocking call
        /// in an async method) and was abandoned; false when the runtime cancelled it.
        abandoned: bool,
    },
    /// Its thread ended without sending a result.
    ThreadDied,
    /// It never started: the thread or the tokio runtime could not be created (this text).
    NotStarted(String),
}

impl Abort {
    /// True for [`Abort::TimedOut`].
    pub fn is_timeout(&self) -> bool {
        matches!(self, Abort::TimedOut { .. })
    }

    /// The same abort with `in_flight` (a call log's description) when it is a timeout
    /// that does not name its calls yet.
    pub(crate) fn with_in_flight(self, calls: String) -> Self {
        match self {
            Abort::TimedOut { limit, in_flight, abandoned } if in_flight.is_empty() => {
                Abort::TimedOut { limit, in_flight: calls, abandoned }
            }
            other => other,
        }
    }
}

/// A case's time limit for a message: whole milliseconds below one second (`10 ms`, never
/// `0.0 s` for `--timeout 0.01`), else seconds with one decimal (`2.5 s`).
pub(crate) fn limit_text(limit: Duration) -> String {
    if limit < Duration::from_secs(1) {
        format!("{} ms", limit.as_millis().max(1))
    } else {
        format!("{:.1} s", limit.as_secs_f64())
    }
}

impl fmt::Display for Abort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Abort::Panicked(m) => write!(f, "panicked: {m}"),
            Abort::TimedOut { limit, in_flight, abandoned: false } => {
                write!(f, "timed out after {}{in_flight}", limit_text(*limit))
            }
            Abort::TimedOut { limit, in_flight, abandoned: true } => write!(
                f,
                "timed out after {} and did not yield (a blocking call in an async method?); its thread was \
                 abandoned{in_flight}",
                limit_text(*limit)
            ),
            Abort::ThreadDied => f.write_str("died: its thread ended without a result"),
            Abort::NotStarted(m) => write!(f, "could not start: {m}"),
        }
    }
}

/// A fresh tokio runtime with every driver: multi-thread (4 workers) or current-thread
/// ([`Registration::multi_thread`](crate::Registration::multi_thread)).
pub fn runtime(multi_thread: bool) -> std::io::Result<tokio::runtime::Runtime> {
    if multi_thread {
        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    }
}

/// The one isolation primitive: runs `make()` on a fresh runtime on a new thread named
/// `name` and hands its result, or the panic as [`Abort::Panicked`], to `send` on that
/// thread. A thread that cannot be spawned or a runtime that cannot be built gives
/// [`Abort::NotStarted`] (the runtime's to `send`, the thread's as the `Err` here).
fn spawn_isolated<T, F, Fut>(
    name: String,
    multi_thread: bool,
    make: F,
    send: impl FnOnce(Result<T, Abort>) + Send + 'static,
) -> Result<(), Abort>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let out = match runtime(multi_thread) {
                Ok(rt) => {
                    let r = std::panic::catch_unwind(AssertUnwindSafe(|| rt.block_on(make())));
                    // A runtime whose tasks are stuck in blocking code must not block this
                    // thread on drop.
                    rt.shutdown_timeout(Duration::from_millis(100));
                    r.map_err(|p| Abort::Panicked(panic_message(&*p)))
                }
                Err(e) => Err(Abort::NotStarted(format!("could not build a tokio runtime: {e}"))),
            };
            send(out);
        })
        .map(drop)
        .map_err(|e| Abort::NotStarted(format!("could not spawn a thread: {e}")))
}

/// Runs `fut` on a fresh runtime on its own thread and waits at most `limit` (plus a short
/// grace) for it. A hang is [`Abort::TimedOut`] with `abandoned` and the thread is left
/// behind, so the run goes on even if the saver blocks its thread forever.
pub(crate) fn run_isolated<T, F, Fut>(multi_thread: bool, limit: Duration, make: F) -> Result<T, Abort>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    run_isolated_then(multi_thread, limit, None, make)
}

/// [`run_isolated`] for code that ends with a step of its own limit (a case's cleanup):
/// when the limit (and grace) passed while `after.0` is set (the code reached that step,
/// so it yielded in time), it gets `after.1` more before it is abandoned (issue 40 row 13:
/// a case cancelled in time, whose cleanup waited behind a 100 MB answer, was reported as
/// "did not yield").
pub(crate) fn run_isolated_then<T, F, Fut>(
    multi_thread: bool,
    limit: Duration,
    after: Option<(Arc<AtomicBool>, Duration)>,
    make: F,
) -> Result<T, Abort>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let (tx, rx) = mpsc::channel();
    spawn_isolated("conformance-case".into(), multi_thread, make, move |out| {
        let _ = tx.send(out);
    })?;
    let mut answer = rx.recv_timeout(limit + ABANDON_GRACE);
    if let (Err(mpsc::RecvTimeoutError::Timeout), Some((reached, more))) = (&answer, after) {
        if reached.load(Ordering::SeqCst) {
            answer = rx.recv_timeout(more);
        }
    }
    match answer {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(Abort::TimedOut { limit, in_flight: String::new(), abandoned: true })
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Abort::ThreadDied),
    }
}

/// [`run_isolated`] awaited from async code without blocking the caller's runtime and
/// without a limit of its own (the caller wraps it in `tokio::time::timeout`): a probe
/// that blocks its thread forever is abandoned alone.
pub(crate) async fn await_isolated<T, F, Fut>(name: String, multi_thread: bool, make: F) -> Result<T, Abort>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn_isolated(name, multi_thread, make, move |out| {
        let _ = tx.send(out);
    })?;
    rx.await.unwrap_or(Err(Abort::ThreadDied))
}

/// The text of a panic payload.
///
/// tokio's panic on a current-thread runtime ("can call blocking only when running on the
/// multi-threaded runtime", from `block_in_place`) gets a hint naming
/// [`Registration::multi_thread`](crate::Registration::multi_thread), the registration's fix.
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

/// Awaits `fut`, turning a panic into [`Abort::Panicked`].
pub(crate) async fn catch<T>(fut: impl Future<Output = T>) -> Result<T, Abort> {
    AssertUnwindSafe(fut).catch_unwind().await.map_err(|p| Abort::Panicked(panic_message(&*p)))
}

/// Awaits `fut` for at most `limit`, turning a panic into [`Abort::Panicked`] and the end of
/// the limit into [`Abort::TimedOut`] (not abandoned: the runtime cancelled it).
pub(crate) async fn catch_within<T>(limit: Duration, fut: impl Future<Output = T>) -> Result<T, Abort> {
    match tokio::time::timeout(limit, catch(fut)).await {
        Ok(r) => r,
        Err(_) => Err(Abort::TimedOut { limit, in_flight: String::new(), abandoned: false }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_of_ending_without_a_result_is_its_own_abort() {
        let panicked = run_isolated(false, Duration::from_secs(5), || async { panic!("boom") });
        assert_eq!(panicked.err(), Some(Abort::Panicked("boom".into())));
        let hung = run_isolated(false, Duration::from_millis(10), || async {
            std::thread::sleep(Duration::from_secs(4));
        });
        assert!(matches!(hung, Err(Abort::TimedOut { abandoned: true, .. })), "{hung:?}");
        let rt = runtime(false).unwrap();
        let cancelled = rt.block_on(catch_within(Duration::from_millis(10), std::future::pending::<()>()));
        let cancelled = cancelled.err().unwrap().with_in_flight(" while in put(x)".into());
        assert_eq!(cancelled.to_string(), "timed out after 10 ms while in put(x)");
        assert_eq!(limit_text(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(limit_text(Duration::from_micros(10)), "1 ms");
        assert!(cancelled.is_timeout() && !Abort::ThreadDied.is_timeout());
    }
}
