//! A pass-through saver that remembers which calls are in flight, so that a timeout or a
//! panic can be reported with the call that caused it ("timed out ... while in
//! `list(thread=…, ns=<all>)`"). The runner wraps every case's saver in it; cases see no
//! difference. Calls are logged as [`Call`]s and only written out when a failure names them.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::call::Call;
use crate::types::ChannelVersion;
use crate::{CheckpointError, CheckpointSaver, Invocation, Reply};

tokio::task_local! {
    static NOTE: CallNote;
}

/// What a saver says about its call in flight, for the message of a timeout that ends it:
/// a bridged saver notes the size of a large request or answer and where it is ("an answer
/// of 300.0 MB, 120.5 MB of it read"), so the case's failure names the call *and* why it
/// is slow (issue 40 row 13). The runner gives every call of a case's saver, and each
/// lifespan hook, a note of its own; [`CallNote::current`] finds it from inside the call.
#[derive(Clone, Debug, Default)]
pub struct CallNote(Arc<Mutex<NoteText>>);

/// A [`CallNote`]'s texts, and the case whose call it is.
#[derive(Debug, Default)]
struct NoteText {
    text: Option<String>,
    disturbed: Option<String>,
    refused: Option<String>,
    case: Option<u64>,
    alone: bool,
}

impl CallNote {
    /// The note of the call (or lifespan hook) running on this task, if the runner gave it
    /// one: `None` outside the kit's runner (a saver used directly).
    pub fn current() -> Option<CallNote> {
        NOTE.try_with(Clone::clone).ok()
    }

    /// Replaces the note's text (one phrase, no trailing period).
    pub fn set(&self, text: impl Into<String>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).text = Some(text.into());
    }

    /// The note's text, if any was set.
    pub fn text(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).text.clone()
    }

    /// Says that the call fails, or failed, because of something another call did, and
    /// why (one phrase): a bridged saver's child stopped as stuck while calls of several
    /// cases were in flight, so which call blocked it is not known. A case that fails with
    /// such a call is run again alone ([`crate::CaseResult::disturbed`]), and only that
    /// run's verdict counts.
    pub fn disturbed(&self, why: impl Into<String>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).disturbed = Some(why.into());
    }

    /// What [`CallNote::disturbed`] said, if anything.
    pub fn disturbance(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).disturbed.clone()
    }

    /// True for a call of a case run again alone after a disturbed failure: nothing else
    /// runs beside it, so a bridged saver sends it even where it refuses the operation as
    /// stuck (its case's verdict must be the saver's, and one blocked call costs one ping
    /// deadline).
    pub fn alone(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).alone
    }

    /// Says that the kit did not send the call to the saver, and why (a bridged operation
    /// refused after it got children stopped as stuck): its error is the kit's, not the
    /// saver's answer, so the case is not judged, neither passed nor failed
    /// ([`crate::Outcome::NotRun`] with the reason).
    pub fn refused(&self, why: impl Into<String>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).refused = Some(why.into());
    }

    /// The case this call belongs to (its saver's calls, its factory's and its reopen's),
    /// one number per case of the catalog, the same in every run of it (`--repeat`, run
    /// again alone); `None` for a lifespan hook. A bridged saver compares them to tell
    /// whether the calls in flight when its child stopped were one case's (then that case's
    /// own doing) or several cases' (then which call to blame is not known), and counts a
    /// case that blocks once however often it runs.
    pub fn case(&self) -> Option<u64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).case
    }

    /// Runs `f` with this note as the [`CallNote::current`] of its task.
    pub async fn scope<F: Future>(&self, f: F) -> F::Output {
        NOTE.scope(self.clone(), f).await
    }
}

/// The calls of one run of a case in flight, by a sequence number, each with its note.
#[derive(Debug)]
pub(crate) struct CallLog {
    state: Mutex<(u64, BTreeMap<u64, (Call, CallNote)>)>,
    /// The first [`CallNote::disturbance`] of a call that returned (or unwound).
    disturbed: Mutex<Option<String>>,
    /// The first [`CallNote::refused`] reason of a call that returned (or unwound).
    refused: Mutex<Option<String>>,
    /// [`CallNote::case`] of its notes.
    case: u64,
    /// [`CallNote::alone`] of its notes.
    alone: bool,
}

impl CallLog {
    /// The log of a run of the case with id `case_id` (`capability::name`), `alone` when
    /// it is run again alone.
    pub(crate) fn new(case_id: &str, alone: bool) -> Self {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        case_id.hash(&mut h);
        let (state, disturbed, refused) = (Mutex::default(), Mutex::default(), Mutex::default());
        Self { state, disturbed, refused, case: h.finish(), alone }
    }

    /// A note of this case for a call the log does not list (the factory's).
    pub(crate) fn note(&self) -> CallNote {
        let note = CallNote::default();
        {
            let mut n = note.0.lock().unwrap_or_else(|e| e.into_inner());
            n.case = Some(self.case);
            n.alone = self.alone;
        }
        note
    }

    fn enter(self: &Arc<Self>, call: Call) -> Guard {
        let note = self.note();
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        let n = s.0;
        s.1.insert(n, (call, note.clone()));
        Guard { log: self.clone(), n, note }
    }

    /// Keeps `note`'s disturbance and refusal, if any, as the case's (the first one wins).
    pub(crate) fn keep(&self, note: &CallNote) {
        let (disturbed, refused) = {
            let n = note.0.lock().unwrap_or_else(|e| e.into_inner());
            (n.disturbed.clone(), n.refused.clone())
        };
        if let Some(why) = disturbed {
            self.disturbed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(why);
        }
        if let Some(why) = refused {
            self.refused.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(why);
        }
    }

    /// Why a call of the case was not sent to the saver ([`CallNote::refused`]), the
    /// first one's reason; `None` when every call was sent.
    pub(crate) fn refused(&self) -> Option<String> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why a call of the case returned disturbed by another call ([`CallNote::disturbed`]),
    /// the first one's reason; `None` when none did.
    pub(crate) fn disturbed(&self) -> Option<String> {
        self.disturbed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `" while in put(…)"`, naming up to three calls in flight (oldest first), each with
    /// its note in parentheses, or `""`.
    pub(crate) fn describe(&self) -> String {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.1.is_empty() {
            return String::new();
        }
        let calls: Vec<String> =
            s.1.values()
                .take(3)
                .map(|(call, note)| match note.text() {
                    Some(n) => format!("{call} ({n})"),
                    None => call.to_string(),
                })
                .collect();
        let more = s.1.len().saturating_sub(3);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!(" while in {}{more}", calls.join(", "))
    }
}

/// Removes its call from the log when the call returned ([`Guard::done`]); a call that
/// panicked or was cancelled (by the case's timeout) stays in the log, so the failure can be
/// reported with it.
struct Guard {
    log: Arc<CallLog>,
    n: u64,
    note: CallNote,
}

impl Guard {
    /// Awaits the call with its note as the task's [`CallNote::current`], then removes it
    /// from the log.
    async fn done<F: Future>(self, call: F) -> F::Output {
        let out = self.note.scope(call).await;
        self.log.state.lock().unwrap_or_else(|e| e.into_inner()).1.remove(&self.n);
        self.log.keep(&self.note);
        out
    }
}

/// The pass-through saver.
pub(crate) struct Traced {
    pub(crate) inner: Arc<dyn CheckpointSaver>,
    pub(crate) log: Arc<CallLog>,
}

#[async_trait]
impl crate::Forward for Traced {
    /// Makes `invocation` on the inner saver through [`Invocation::send`], logged as its
    /// [`Call`] while in flight.
    async fn send(&self, invocation: Invocation) -> Result<Reply, CheckpointError> {
        let g = self.log.enter(invocation.call());
        g.done(invocation.send(&*self.inner)).await
    }

    /// Synchronous, so not logged and not through [`Invocation::send`]: a call that cannot
    /// be in flight when a case times out. It has a note all the same, so that a bridged
    /// saver's failure here (a panic: the method returns no error) disturbed by another
    /// case's call is known as such.
    fn next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let note = self.log.note();
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            NOTE.sync_scope(note.clone(), || self.inner.get_next_version(current))
        }));
        self.log.keep(&note);
        out.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

crate::forward_saver!(Traced);
