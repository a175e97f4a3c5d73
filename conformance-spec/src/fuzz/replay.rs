//! Replaying a trace ([`replay`], `cargo xtask replay`; [`replay_in`] and
//! [`replay_trace_in`] in a spec case, the shipped and the user's traces): every call of
//! the trace on a fresh saver, each result compared with the recorded one.

use conformance_core::{Failure, Invocation, Registration};
use conformance_core::{Session, Start};

use super::exec::{self, compare, Instances};
use super::trace::{Op, Outcome, Step, Trace};
use super::{carried, runtime};

/// Replays `trace` on instances of one storage: every call must return what its `expect`
/// says. `Err` names the first differing call (its number, 1-based) and every difference.
///
/// Reads are compared without the values a put carried for channels outside its
/// `channel_versions`, which a saver may give back or not (CONTRACT §2 put).
async fn replay_steps(mut instances: Instances, trace: &Trace) -> Result<(), String> {
    let mut carried = carried::CarriedOutside::default();
    for (i, step) in trace.steps.iter().enumerate() {
        carried.note(&step.op);
        let got = instances.run(&step.op).await.map_err(|e| format!("step {}: {e}", i + 1))?;
        if let (Some(want), Some(got)) = (&step.expect, &got) {
            if let Err(f) = compare(&step.op, &carried.strip(want), &carried.strip(got)).finish() {
                return Err(format!("step {}: {}", i + 1, instances.with_errors(f.message)));
            }
        }
    }
    Ok(())
}

/// Replays a trace against a fresh fixture of `registration` (the `cargo xtask replay`
/// front end).
///
/// # Errors
/// The first differing call and every difference at it, or why the replay could not run.
pub fn replay(registration: &Registration, trace: &Trace) -> Result<(), String> {
    // The run's session, as every front end's: lifespan setup, the replay, teardown.
    let mut session = Session::start(registration, Start::Lifespan);
    let result = match session.setup_error() {
        Some(e) => Err(e.to_owned()),
        None => runtime(registration)
            .map_err(|e| format!("cannot start a runtime: {e}"))
            .and_then(|rt| rt.block_on(replay_on_fixture(session.registration(), trace))),
    };
    let teardown = session.teardown().map_or(Ok(()), |e| Err(e.to_owned()));
    result?;
    teardown
}

/// Replays `trace` on a fresh fixture of `registration`, inside its lifespan.
async fn replay_on_fixture(registration: &Registration, trace: &Trace) -> Result<(), String> {
    let fixture = registration.fixture().await.map_err(|e| format!("the factory failed: {e}"))?;
    // Reads judged as the saver returns them, without the fields it declared it lacks
    // (CONTRACT §5 "Declared limits").
    let lacks = fixture.lacks().clone();
    let (saver, cleanup, reopen, _) = fixture.into_parts();
    let steps = replay_steps(Instances::new(saver, reopen, registration.case_timeout()), trace);
    let result = crate::compare::judging(lacks, steps).await;
    // A differing step is the verdict; a cleanup that failed after it is said with it.
    let cleaned = match cleanup {
        Some(c) => c().await.map_err(|e| format!("the cleanup failed: {e}")),
        None => Ok(()),
    };
    match (result, cleaned) {
        (Err(step), Err(cleanup)) => Err(format!("{step}\n(then {cleanup})")),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(()),
    }
}

/// `trace` without the reads before its last step (`get_tuple`, `list`,
/// `delta_channel_history`, `get_next_version`: they change nothing the later steps
/// expect), when that shorter trace still diverges on `registration`; else `trace`.
pub(super) async fn without_passing_reads(registration: &Registration, trace: Trace) -> Trace {
    let read = |op: &Op| {
        matches!(
            op,
            Op::Call(Invocation::GetTuple { .. })
                | Op::Call(Invocation::List { .. })
                | Op::Call(Invocation::DeltaChannelHistory { .. })
                | Op::Call(Invocation::GetNextVersion { .. })
        )
    };
    let Some((last, before)) = trace.steps.split_last() else { return trace };
    let mut steps: Vec<Step> = before.iter().filter(|s| !read(&s.op)).cloned().collect();
    if steps.len() == before.len() {
        return trace;
    }
    steps.push(last.clone());
    let shorter = Trace { steps, ..trace.clone() };
    if replay_on_fixture(registration, &shorter).await.is_err() {
        shorter
    } else {
        trace
    }
}

/// Replays the trace `json` in a spec case (the form of the fuzzer's Rust snippet).
///
/// # Errors
/// A [`Failure`] naming the first differing call.
pub async fn replay_in(cx: &crate::Cx, json: &str) -> Result<(), Failure> {
    let trace = Trace::parse(json).map_err(Failure::new)?;
    replay_trace_in(cx, &trace).await
}

/// Replays a parsed trace in a spec case, on the case's saver (reopened at a `reopen`
/// marker when the registration can reopen).
///
/// # Errors
/// A [`Failure`] naming the first differing call.
pub async fn replay_trace_in(cx: &crate::Cx, trace: &Trace) -> Result<(), Failure> {
    let reopen = cx.can_reopen().then(|| {
        let c = cx.clone();
        let f: conformance_core::ReopenFn = std::sync::Arc::new(move || {
            let c = c.clone();
            Box::pin(async move { c.reopen().await.map_err(|f| conformance_core::BoxError::from(f.message)) })
        });
        f
    });
    replay_steps(Instances::new(cx.saver(), reopen, exec::CALL_LIMIT), trace).await.map_err(Failure::new)
}

/// The outcome a trace step expects, for tools that build traces.
pub fn expect_of(step: &Step) -> Option<&Outcome> {
    step.expect.as_ref()
}

#[cfg(test)]
mod tests {
    use conformance_core::{async_trait, CheckpointConfig, CheckpointError, CheckpointSaver};

    /// A saver that refuses every `put_writes`, with a message of its own.
    struct RefusesWrites;

    #[async_trait]
    impl CheckpointSaver for RefusesWrites {
        async fn put_writes(
            &self,
            _config: &CheckpointConfig,
            _writes: Vec<(String, conformance_core::TypedValue)>,
            _task_id: &str,
            _task_path: &str,
        ) -> Result<(), CheckpointError> {
            Err(CheckpointError::InvalidInput("TypeError: put_writes() takes 4 positional arguments".into()))
        }
    }

    /// A replayed step that differs by an error names the error's kind and keeps the
    /// saver's own message (a trace failure said "got an InvalidInput error" and nothing
    /// more).
    #[test]
    fn a_differing_step_keeps_the_savers_error_message() {
        let step = r#"{"call": "put_writes", "config": {"thread_id": "t", "checkpoint_id": "1"}, "writes": [], "task_id": "a", "task_path": "", "expect": "done"}"#;
        let trace =
            crate::fuzz::trace::Trace::parse(&format!(r#"{{"format": "checkpoint-trace/1", "steps": [{step}]}}"#))
                .expect("a trace");
        let reg = conformance_core::Registration::new("refuses-writes", || async {
            Ok(conformance_core::Fixture::new(RefusesWrites))
        });
        let e = super::replay(&reg, &trace).unwrap_err();
        assert!(e.starts_with("step 1: put_writes("), "{e}");
        assert!(e.contains("expected Ok, got an InvalidInput error"), "{e}");
        assert!(
            e.ends_with("\n  the saver's error: invalid input: TypeError: put_writes() takes 4 positional arguments"),
            "{e}"
        );
    }
}
