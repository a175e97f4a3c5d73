//! The crash test of `durability` (CONTRACT §4 "Durability", bug scenario S20): the test
//! binary re-executes itself as a child process that opens the same storage, writes
//! checkpoints and writes, and reports each acknowledged (`Ok`) call on its stdout; the
//! parent kills it with SIGKILL at a random moment, opens the storage again and checks that
//! every acknowledged item is there and that nothing present is torn.
//!
//! # Wiring
//!
//! Every front end calls [`child_main_if_requested`] first thing in `main` (the
//! `checkpointer_test!` main and `cargo xtask conformance` do). Without the
//! `CHECKPOINT_CONFORMANCE_CRASH_CHILD` environment variable it returns `None` and the front
//! end goes on as usual; with it, the process is a crash child: it opens the storage named
//! in the variable with [`Registration::open_location`] (its `Storage::open`), runs the workload
//! until it is killed, and `main` must return the exit code it gives. The child gets the
//! parent's own arguments, so a front end that picks its registration from its arguments
//! picks the same one; it must call this function before it runs anything else.
//!
//! # Settings
//!
//! - `CHECKPOINT_CONFORMANCE_KILLS=N`: the number of kills, 1 to [`MAX_KILLS`] (default
//!   [`DEFAULT_KILLS`]; empty or unset gives the default; any other value is a usage error
//!   before the run); a run in which the child acknowledged nothing fails the case.
//!   Each takes a few tens of milliseconds plus the child's start-up. The case's time
//!   budget grows with N ([`budget`]), whatever the registration's case timeout.
//! - `CHECKPOINT_CONFORMANCE_SEED=S`: the seed of the random kill moments, 0 to 2^64 - 1
//!   (default, also when empty: random, printed in every failure message and recorded as the `durability.seed` fact).
//!
//! # When the kill comes
//!
//! Seeded ([`SEED_ENV`]) and spread over the workload's phases (`plan.rs`): the child's
//! calls come in steps of three (`put`, then `put_writes` of task a and of task b), and
//! each run of six kills lands once in each of the three calls at each of two moments:
//! between calls (the child holds after the acknowledgement before the call, its request
//! says which, and is killed there) and inside the call (a random fraction, 0.2 to 1, of
//! the child's average time for that call, measured in the same child life, after the
//! acknowledgement before it; the thread reading the child's lines fires the kill, so it
//! lands where planned even when calls take a fraction of a millisecond). Most kills come
//! after 17 to 22 steps, so that each child, whose start-up is most of a kill's cost,
//! acknowledges 51 to 68 calls; every third kill (never the first, so a run always has
//! something to verify) comes in its thread's first four steps, where the first `put` of
//! a thread and of a namespace happen. The default six kills check more than 200
//! acknowledged calls.
//!
//! # The child's protocol
//!
//! One line per event on stdout, each starting with `checkpoint-conformance-crash:`:
//! `ready` once the storage is open, `ack put <i> <checkpoint id>` after `put` of step `i`
//! returned `Ok`, `ack writes <i> <checkpoint id> <task id>` after a `put_writes` of step
//! `i` returned `Ok`, and `error <message>` before exiting with code 3 when a call failed.
//! Other output is ignored. A request with `hold_after: n` makes the child stop after its
//! `n`-th acknowledgement (`ready` for 0) and wait to be killed.

//!
//! # Instances
//!
//! No instance of the parent holds the storage while a child runs: the case starts
//! without one ([`conformance_core::CaseInstance::Closed`]: the runner closes the
//! factory's instance first), and the instance that checks the storage after a kill is
//! opened once the child is dead and dropped (closed) before the next child starts. The
//! child leads a process group of its own; the kill goes to the whole group, and the
//! child counts as dead once no process of the group is alive
//! ([`conformance_core::process_group`]: a bridged saver lives in a grandchild). A saver
//! that allows one process per file (DuckDB) is judged like any other.
//!
//! # Files
//!
//! This file holds the settings, the wiring and the case; `child.rs` the child's side (its
//! request and its workload), `plan.rs` where the kills land, `kill.rs` the parent's
//! start-and-kill of one child and `verify.rs` the check of the storage after a kill.

mod child;
mod kill;
mod plan;
mod verify;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use conformance_core::{Failure, Registration};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::Checked;
use kill::{run_and_kill, Ack};
use verify::{settle, verify_thread};

/// The environment variable that makes a process a crash child; its value is a JSON
/// object `{"registration": name, "location": locator, "thread": thread id, "hold_after":
/// n}` (`hold_after` optional: the child stops after its `n`-th acknowledgement, 0 for
/// `ready`, and waits to be killed).
pub const CRASH_CHILD_ENV: &str = "CHECKPOINT_CONFORMANCE_CRASH_CHILD";
/// The environment variable with the number of kills.
pub const KILLS_ENV: &str = "CHECKPOINT_CONFORMANCE_KILLS";
/// The environment variable with the seed of the kill delays.
pub const SEED_ENV: &str = "CHECKPOINT_CONFORMANCE_SEED";
/// Kills per crash test unless [`KILLS_ENV`] says otherwise: one run of the six kinds of
/// kill (see the module docs), more than 200 acknowledged calls checked.
pub const DEFAULT_KILLS: usize = 6;
/// The most kills [`KILLS_ENV`] may ask for (each takes a child's start-up and a kill).
pub const MAX_KILLS: usize = 10_000;

/// The prefix of the child's protocol lines.
const PREFIX: &str = "checkpoint-conformance-crash:";
/// How long the child may take to open the storage.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// The child's workload stops after this many steps if nobody killed it.
const MAX_STEPS: usize = 100_000;
/// How long the parent waits for the child's next acknowledgement before it calls the
/// child's writes stalled and kills it anyway: a limit on no progress, not on the whole
/// wait, so a slow saver is not cut short by how many calls the plan waits for.
const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The time each kill adds to the crash case's budget ([`budget`]). A kill costs about
/// 0.05 s against the SQLite saver and 0.5 s against a bridged one (a child's start-up, its
/// calls, the check after it); the allowance leaves a saver a hundred times slower, or a
/// loaded machine, room, while a saver that hangs still ends the case.
pub const PER_KILL_BUDGET: Duration = Duration::from_secs(60);

/// Set once a front end called [`child_main_if_requested`]: only then is re-executing the
/// binary known to reach the child mode instead of running the tests again.
static WIRED: AtomicBool = AtomicBool::new(false);

/// Runs the crash child when this process was started as one, for a binary with a single
/// registration. Call it first thing in `main`:
///
/// ```no_run
/// # use conformance_core::{Fixture, CheckpointSaver, Registration};
/// # struct MySaver; impl CheckpointSaver for MySaver {}
/// # fn registration() -> Registration { Registration::new("mine", || async { Ok(Fixture::new(MySaver)) }) }
/// fn main() -> std::process::ExitCode {
///     let reg = registration();
///     if let Some(code) = conformance_spec::child_main_if_requested(&reg) {
///         return code;
///     }
///     // ... the normal run: validate(&reg, ...), libtest-mimic trials, ...
///     # std::process::ExitCode::SUCCESS
/// }
/// ```
///
/// Returns `None` in a normal run (and records that the front end is wired, which the
/// crash test needs before it re-executes the binary). In a crash child it opens the
/// storage, writes until killed and returns the exit code (`Some`): 0 when the workload
/// ended without a kill, 3 when a call failed, 2 when the request was unusable.
pub fn child_main_if_requested(registration: &Registration) -> Option<ExitCode> {
    child_main_if_requested_among(std::slice::from_ref(registration))
}

/// Whether this process is a durability crash child ([`CRASH_CHILD_ENV`] is set): a front
/// end skips the work only its suite needs (reading the user's traces) before it hands over
/// with [`child_main_if_requested`].
pub fn is_crash_child() -> bool {
    std::env::var_os(CRASH_CHILD_ENV).is_some()
}

/// [`child_main_if_requested`] for a binary with several registrations: the child picks
/// the one whose name the parent sent.
pub fn child_main_if_requested_among(registrations: &[Registration]) -> Option<ExitCode> {
    WIRED.store(true, Ordering::SeqCst);
    let raw = std::env::var(CRASH_CHILD_ENV).ok()?;
    Some(child::run_child(&raw, registrations))
}

/// Reads the seed and kill count from the environment.
fn settings() -> Result<(u64, usize), Failure> {
    let (seed, kills) = env_settings().map_err(Failure::new)?;
    Ok((seed.unwrap_or_else(|| fastrand::u64(..)), kills))
}

/// The seed ([`SEED_ENV`], `None` when unset or empty: random) and the number of kills
/// ([`KILLS_ENV`], [`DEFAULT_KILLS`] when unset or empty) from the environment.
///
/// # Errors
/// A one-line message naming the variable, its value (one that is not UTF-8 too) and what
/// is valid. The front ends
/// call [`check_env_settings`] before a run, so a bad value is a usage error (exit 2).
pub fn env_settings() -> Result<(Option<u64>, usize), String> {
    let var = |name: &str| match std::env::var(name) {
        Ok(v) => Ok(Some(v).filter(|v| !v.trim().is_empty())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => {
            Err(format!("{name}={raw:?}: not valid UTF-8; expected a whole number"))
        }
    };
    let seed = match var(SEED_ENV)? {
        Some(s) => Some(
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("{SEED_ENV}={s:?}: expected a whole number from 0 to {}", u64::MAX))?,
        ),
        None => None,
    };
    let kills = match var(KILLS_ENV)? {
        Some(s) => s
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| !s.trim().starts_with('+') && (1..=MAX_KILLS).contains(n))
            .ok_or_else(|| {
                format!(
                    "{KILLS_ENV}={s:?}: expected a whole number of kills from 1 to {MAX_KILLS} (default \
                         {DEFAULT_KILLS}; empty or unset means the default)"
                )
            })?,
        None => DEFAULT_KILLS,
    };
    Ok((seed, kills))
}

/// The crash case's time budget ([`conformance_core::Budget::Own`]): [`PER_KILL_BUDGET`]
/// for each kill ([`KILLS_ENV`], [`DEFAULT_KILLS`] when it is unusable: the case then
/// fails on it at once). The runner applies it instead of the registration's case timeout
/// (`--timeout`, default 30 s) unless that is longer, so the verdict does not depend on a
/// timeout chosen for single calls, nor on the machine's load.
pub fn budget() -> Duration {
    let kills = env_settings().map_or(DEFAULT_KILLS, |(_, kills)| kills);
    PER_KILL_BUDGET * u32::try_from(kills).unwrap_or(u32::MAX)
}

/// Checks [`KILLS_ENV`] and [`SEED_ENV`] before a run (a usage error, not a verdict).
///
/// # Errors
/// The message of [`env_settings`].
pub fn check_env_settings() -> Result<(), String> {
    env_settings().map(drop)
}

/// The crash test (see the module docs): `kills` times, start a child on the storage, kill
/// it at a random moment, reopen and verify; then verify every thread once more through a
/// last fresh instance. Records the facts `kills`, `seed` and `acknowledged`.
pub(crate) async fn crash_test(cx: Cx) -> Checked {
    if !cx.can_reopen() {
        return Err(Failure::new(
            "the registration cannot open a second instance on the case's storage, so the storage cannot be \
             opened again after a kill: register the saver's Storage with Registration::persistent (its reach \
             Reach::OtherProcesses, the default) to run the crash test",
        ));
    }
    if std::env::var_os(CRASH_CHILD_ENV).is_some() {
        return Err(Failure::new(format!(
            "this process is a crash child ({CRASH_CHILD_ENV} is set) yet runs the suite: the front end does not \
             call conformance_spec::child_main_if_requested first in main"
        )));
    }
    if !WIRED.load(Ordering::SeqCst) {
        return Err(Failure::new(
            "the crash test re-executes this binary as a child process, but the front end did not call \
             conformance_spec::child_main_if_requested at the start of main (checkpointer_test! and cargo xtask \
             conformance do; a custom main that calls validate() must too)",
        ));
    }
    let Some(location) = cx.location().map(str::to_owned) else {
        return Err(Failure::new(
            "the registration can reopen the case's storage in this process but names no location another \
             process can open (its Storage's reach is Reach::ThisProcess): a Storage whose locations reach \
             Reach::OtherProcesses (the default) lets the crash test open the storage in a child process; \
             through the bridge, a child whose open answers a location (docs/bridge-protocol.md)",
        ));
    };
    let (seed, kills) = settings()?;
    cx.fact("seed", seed.to_string());
    let mut rng = fastrand::Rng::with_seed(seed);
    let exe = std::env::current_exe().map_err(|e| Failure::new(format!("cannot find this test binary: {e}")))?;
    let mut checked: Vec<(String, Vec<Ack>)> = Vec::new();
    let mut acknowledged = 0usize;
    for (plan, k) in plan::plans(&mut rng, kills).into_iter().zip(1..) {
        let thread = cx.thread(&format!("crash{k}"));
        let request = json!({
            "registration": cx.registration_name(),
            "location": location,
            "thread": thread,
            "hold_after": plan.hold_after(),
        });
        let log = run_and_kill(&exe, &request.to_string(), plan).await.map_err(|m| {
            Failure::new(format!("kill {k} of {kills} (seed {seed}, rerun with {SEED_ENV}={seed}): {m}"))
        })?;
        cx.fact("kills", k);
        let context = |msg: String| {
            Failure::new(format!(
                "kill {k} of {kills} ({}; seed {seed}, rerun with {SEED_ENV}={seed}): {msg}",
                log.moment
            ))
        };
        if let Some(e) = &log.error {
            return Err(context(format!("the child's call failed: {e}")));
        }
        let reader = cx.reopened("a new instance opened after the kill").await.map_err(|f| context(f.message))?;
        settle(&reader, &thread).await.map_err(|f| context(f.message))?;
        acknowledged += verify_thread(&reader, &thread, &log.acks).await.map_err(|f| context(f.message))?;
        // Closed before the next child opens the storage.
        drop(reader);
        checked.push((thread, log.acks));
    }
    let last = cx.reopened("a last new instance").await?;
    for (thread, acks) in &checked {
        verify_thread(&last, thread, acks).await.map_err(|f| {
            Failure::new(format!("after all {kills} kills (seed {seed}, rerun with {SEED_ENV}={seed}): {f}"))
        })?;
    }
    cx.fact("kills", kills);
    cx.fact("acknowledged", acknowledged);
    verified_something(kills, acknowledged, seed)
}

/// A crash run passes only if it verified at least one acknowledged call: a run that
/// acknowledged nothing has checked nothing (issue 13). (`kills` is at least 1: [`env_settings`]
/// refuses 0, a usage error tested in `xtask/tests/inputs.rs`.)
fn verified_something(kills: usize, acknowledged: usize, seed: u64) -> Checked {
    if acknowledged == 0 {
        return Err(Failure::new(format!(
            "the crash test killed {kills} child(ren) and verified {acknowledged} acknowledged call(s) (seed {seed}, \
             rerun with {SEED_ENV}={seed}): a run that acknowledged nothing has not shown that acknowledged data \
             survives a kill"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::verified_something;

    #[test]
    fn a_run_that_acknowledged_nothing_does_not_pass() {
        let unacked = verified_something(20, 0, 7).unwrap_err().message;
        assert!(unacked.contains("verified 0 acknowledged"), "{unacked}");
        assert!(verified_something(20, 3, 7).is_ok());
    }
}
