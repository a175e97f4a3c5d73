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
//! in the variable with the registration's [`Registration::open_at`], runs the workload
//! until it is killed, and `main` must return the exit code it gives. The child gets the
//! parent's own arguments, so a front end that picks its registration from its arguments
//! picks the same one; it must call this function before it runs anything else.
//!
//! # Settings
//!
//! - `CHECKPOINT_CONFORMANCE_KILLS=N`: the number of kills, 1 to [`MAX_KILLS`] (default
//!   [`DEFAULT_KILLS`]; empty or unset gives the default; any other value is a usage error
//!   before the run); a run in which the child acknowledged nothing fails the case.
//!   Each takes a few tens of milliseconds plus the child's start-up; raise the
//!   registration's timeout for large N.
//! - `CHECKPOINT_CONFORMANCE_SEED=S`: the seed of the random kill moments, 0 to 2^64 - 1
//!   (default, also when empty: random, printed in every failure message and recorded as the `durability.seed` fact).
//!
//! # When the kill comes
//!
//! For each kill the parent draws a number of acknowledgements to wait for (0 to
//! [`MAX_ACKS_BEFORE_KILL`]; at least 1 for the first kill, so a run always has something
//! to verify) and a fraction of one call: once the child has acknowledged
//! that many calls, the parent waits that fraction of the child's average time per call
//! and kills it. The kills so land at random points inside a call, whatever the saver's
//! speed, from before the first write to a few steps in.
//!
//! # The child's protocol
//!
//! One line per event on stdout, each starting with `checkpoint-conformance-crash:`:
//! `ready` once the storage is open, `ack put <i> <checkpoint id>` after `put` of step `i`
//! returned `Ok`, `ack writes <i> <checkpoint id> <task id>` after a `put_writes` of step
//! `i` returned `Ok`, and `error <message>` before exiting with code 3 when a call failed.
//! Other output is ignored.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conformance_core::{Call, CheckpointConfig, CheckpointSaver, CheckpointTuple, Failure, PendingWrite};
use conformance_core::{Registration, TypedValue};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{describe_writes, Checked, Diffs};
use crate::data::{jv, new_id, pending, Step};

/// The environment variable that makes a process a crash child; its value is a JSON
/// object `{"registration": name, "location": locator, "thread": thread id}`.
pub const CRASH_CHILD_ENV: &str = "CHECKPOINT_CONFORMANCE_CRASH_CHILD";
/// The environment variable with the number of kills.
pub const KILLS_ENV: &str = "CHECKPOINT_CONFORMANCE_KILLS";
/// The environment variable with the seed of the kill delays.
pub const SEED_ENV: &str = "CHECKPOINT_CONFORMANCE_SEED";
/// Kills per crash test unless [`KILLS_ENV`] says otherwise.
pub const DEFAULT_KILLS: usize = 20;
/// The most kills [`KILLS_ENV`] may ask for (each takes a child's start-up and a kill).
pub const MAX_KILLS: usize = 10_000;

/// The prefix of the child's protocol lines.
const PREFIX: &str = "checkpoint-conformance-crash:";
/// How long the child may take to open the storage.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// The child's workload stops after this many steps if nobody killed it.
const MAX_STEPS: usize = 100_000;
/// The most acknowledgements the parent waits for before it kills the child.
pub const MAX_ACKS_BEFORE_KILL: usize = 12;
/// How long the parent waits for the acknowledgements it wants before it kills anyway.
const ACK_TIMEOUT: Duration = Duration::from_secs(10);

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

/// [`child_main_if_requested`] for a binary with several registrations: the child picks
/// the one whose name the parent sent.
pub fn child_main_if_requested_among(registrations: &[Registration]) -> Option<ExitCode> {
    WIRED.store(true, Ordering::SeqCst);
    let raw = std::env::var(CRASH_CHILD_ENV).ok()?;
    Some(run_child(&raw, registrations))
}

fn protocol_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PREFIX} {line}");
    let _ = out.flush();
}

fn run_child(raw: &str, registrations: &[Registration]) -> ExitCode {
    // A front end interrupted or killed mid-crash-test must not leave this child running.
    conformance_core::leftovers::die_with_parent();
    let request: serde_json::Value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(e) => {
            protocol_line(&format!("error {CRASH_CHILD_ENV} is not JSON: {e}"));
            return ExitCode::from(2);
        }
    };
    let field = |k: &str| request.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    let (Some(name), Some(location), Some(thread)) = (field("registration"), field("location"), field("thread")) else {
        protocol_line(&format!("error {CRASH_CHILD_ENV} lacks registration, location or thread: {raw}"));
        return ExitCode::from(2);
    };
    let Some(registration) = registrations.iter().find(|r| r.name() == name) else {
        let names: Vec<&str> = registrations.iter().map(|r| r.name()).collect();
        protocol_line(&format!("error no registration named {name:?} in this binary (it has {names:?})"));
        return ExitCode::from(2);
    };
    let rt = match conformance_core::run::runtime(registration.is_multi_thread()) {
        Ok(rt) => rt,
        Err(e) => {
            protocol_line(&format!("error could not build a tokio runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    let result = rt.block_on(async {
        let fixture = registration
            .open_location(&location)
            .await
            .map_err(|e| format!("open_at({location:?}) failed in the crash child: {e}"))?;
        protocol_line("ready");
        child_workload(&**fixture.saver(), &thread).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            protocol_line(&format!("error {}", e.replace('\n', " ")));
            ExitCode::from(3)
        }
    }
}

/// The namespace of step `i`: every fourth step goes to a subgraph namespace.
fn ns_of(i: usize) -> &'static str {
    if i % 4 == 3 {
        "child:crash"
    } else {
        ""
    }
}

/// The step before `i` in the same namespace (its parent), if any.
fn previous_in_ns(i: usize) -> Option<usize> {
    (0..i).rev().find(|&p| ns_of(p) == ns_of(i))
}

/// A blob of some hundred bytes whose bytes depend on `i`, so a partly written one shows.
fn blob(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|k| ((i * 31 + k * 7) % 251) as u8).collect()
}

/// Step `i` of the crash workload as `put` stores it (with checkpoint id `id`); the first
/// step of a namespace stores channel `kept`, later ones only keep its version, so a read
/// must find the value stored earlier.
fn crash_step(i: usize, id: &str) -> Step {
    let kept = format!("kept-{}", ns_of(i));
    let step = Step::new(id)
        .value("counter", json!({"i": i}), i as i64 + 1)
        .typed("blob", TypedValue::bytes(blob(i, 256 + (i * 37) % 512)), i as i64 + 1)
        .seen("node", "counter", i as i64)
        // LangGraph's well-known metadata keys only: a saver that stores only those is
        // judged here on durability, not on custom metadata.
        .meta("source", json!("loop"))
        .meta("step", json!(i))
        .meta("parents", json!({}))
        .meta("run_id", json!(format!("crash-{}-{i}-é✓", ns_of(i))));
    if previous_in_ns(i).is_none() {
        step.value("kept", json!(kept), 1)
    } else {
        step.keep("kept", 1)
    }
}

/// What a read of step `i` returns: the put step with the kept value filled in.
fn crash_read(i: usize, id: &str) -> Step {
    let kept = format!("kept-{}", ns_of(i));
    let mut step = crash_step(i, id);
    step.checkpoint.channel_values.insert("kept".into(), jv(json!(kept)));
    step
}

/// The two `put_writes` calls of step `i`: (task id, writes).
fn crash_writes(i: usize) -> [(String, Vec<(String, TypedValue)>); 2] {
    [
        (
            format!("crash-a-{i}"),
            vec![
                ("wa".into(), jv(json!({"i": i}))),
                ("__interrupt__".into(), jv(json!({"i": i, "interrupt": true}))),
                ("wb".into(), TypedValue::bytes(blob(i + 1, 128))),
            ],
        ),
        (format!("crash-b-{i}"), vec![("wc".into(), jv(json!([i, "c"])))]),
    ]
}

/// The pending writes of task `task` of step `i`, in `get_tuple` order (index order).
fn expected_group(i: usize, task: &str) -> Option<Vec<PendingWrite>> {
    let (_, writes) = crash_writes(i).into_iter().find(|(t, _)| t == task)?;
    let mut indexed: Vec<(i64, PendingWrite)> = writes
        .into_iter()
        .enumerate()
        .map(|(pos, (ch, v))| (conformance_core::write_index(&ch, pos), pending(task, "", &ch, v)))
        .collect();
    indexed.sort_by_key(|(idx, _)| *idx);
    Some(indexed.into_iter().map(|(_, w)| w).collect())
}

async fn child_workload(saver: &dyn CheckpointSaver, thread: &str) -> Result<(), String> {
    let mut last: BTreeMap<&str, String> = BTreeMap::new();
    for i in 0..MAX_STEPS {
        let ns = ns_of(i);
        let mut parent = CheckpointConfig::new(thread).with_ns(ns);
        if let Some(id) = last.get(ns) {
            parent = parent.with_id(id.clone());
        }
        let id = new_id();
        let step = crash_step(i, &id);
        let stored = saver.put(&parent, step.checkpoint, step.metadata, step.new_versions).await.map_err(|e| {
            let call = Call::Put { config: parent.clone(), checkpoint_id: id.clone() };
            format!("{call} (step {i}): {}", e.display_chain())
        })?;
        protocol_line(&format!("ack put {i} {id}"));
        last.insert(ns, id.clone());
        for (task, writes) in crash_writes(i) {
            let channels: Vec<String> = writes.iter().map(|(c, _)| c.clone()).collect();
            saver.put_writes(&stored, writes, &task, "").await.map_err(|e| {
                let call = Call::PutWrites {
                    config: stored.clone(),
                    channels,
                    task_id: task.clone(),
                    task_path: String::new(),
                };
                format!("{call} (step {i}): {}", e.display_chain())
            })?;
            protocol_line(&format!("ack writes {i} {id} {task}"));
        }
    }
    Ok(())
}

/// One acknowledged call of the child.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ack {
    /// `put` of step `i` as checkpoint `id`.
    Put { i: usize, id: String },
    /// `put_writes` of task `task` for step `i` (checkpoint `id`).
    Writes { i: usize, id: String, task: String },
}

fn parse_ack(rest: &str) -> Option<Ack> {
    let parts: Vec<&str> = rest.split(' ').collect();
    match parts.as_slice() {
        ["put", i, id] => Some(Ack::Put { i: i.parse().ok()?, id: (*id).to_owned() }),
        ["writes", i, id, task] => {
            Some(Ack::Writes { i: i.parse().ok()?, id: (*id).to_owned(), task: (*task).to_owned() })
        }
        _ => None,
    }
}

/// What one child run gave.
#[derive(Default)]
struct ChildLog {
    ready: bool,
    acks: Vec<Ack>,
    error: Option<String>,
    /// When the kill came, for messages.
    moment: String,
}

/// Checks every checkpoint of `thread` that is present (complete, parent right, writes in
/// whole calls) and every acknowledged item (present). Returns the number of acks checked.
/// Waits until the killed child's unacknowledged work has landed or vanished: a database
/// server may still commit a call whose COMMIT it received before the client died (allowed:
/// an unacknowledged call is all there or not there), and checking while that happens would
/// compare two different states. Two equal `list` snapshots a few milliseconds apart count as
/// settled; at most 2 s (a storage that keeps changing after that is checked as it is).
async fn settle(cx: &Cx, thread: &str) -> Result<(), Failure> {
    let start = std::time::Instant::now();
    let mut last = cx.list_all(thread).await?.into_value();
    while start.elapsed() < std::time::Duration::from_secs(2) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let now = cx.list_all(thread).await?.into_value();
        if now == last {
            return Ok(());
        }
        last = now;
    }
    Ok(())
}

async fn verify_thread(cx: &Cx, thread: &str, acks: &[Ack]) -> Result<usize, Failure> {
    let listed = cx.list_all(thread).await?;
    let mut by_i: BTreeMap<usize, &CheckpointTuple> = BTreeMap::new();
    for t in listed.iter() {
        let Some(i) = t.metadata.get("step").and_then(|v| v.as_u64()).map(|i| i as usize) else {
            return Err(Failure::new(format!(
                "{listed}: checkpoint {} has no integer metadata \"step\" (torn: metadata missing or partial): {}",
                t.config,
                serde_json::Value::Object(t.metadata.clone())
            )));
        };
        if let Some(other) = by_i.insert(i, t) {
            return Err(Failure::new(format!(
                "{listed}: step {i} was put once but appears twice: {} and {}",
                other.config, t.config
            )));
        }
    }
    for (&i, t) in &by_i {
        let what = format!("{listed}: checkpoint {} (step {i})", t.config);
        if t.config.checkpoint_ns != ns_of(i) {
            return Err(Failure::new(format!("{what}: expected namespace {:?}", ns_of(i))));
        }
        Diffs::new()
            .of(format_args!("{what} is present but torn"))
            .step(&crash_read(i, &t.checkpoint.id), t)
            .finish()?;
        let want_parent = match previous_in_ns(i) {
            None => None,
            Some(p) => match by_i.get(&p) {
                Some(pt) => Some(pt.config.clone()),
                None => {
                    return Err(Failure::new(format!(
                        "{what} is present but its parent, step {p}, which was put before it, is missing"
                    )))
                }
            },
        };
        if t.parent_config != want_parent {
            return Err(Failure::new(format!(
                "{what}: parent_config: expected {want_parent:?}, got {:?}",
                t.parent_config
            )));
        }
        let mut groups: BTreeMap<&str, Vec<PendingWrite>> = BTreeMap::new();
        for w in &t.pending_writes {
            groups.entry(w.task_id.as_str()).or_default().push(w.clone());
        }
        for (task, got) in groups {
            match expected_group(i, task) {
                Some(want) if want == got => {}
                Some(want) => {
                    return Err(Failure::new(format!(
                        "{what}: the writes of task {task} are torn: expected {}, got {}",
                        describe_writes(&want),
                        describe_writes(&got)
                    )))
                }
                None => {
                    return Err(Failure::new(format!(
                        "{what}: writes of a task that never wrote to it: {}",
                        describe_writes(&got)
                    )))
                }
            }
        }
    }
    for ack in acks {
        let (i, id) = match ack {
            Ack::Put { i, id } | Ack::Writes { i, id, .. } => (*i, id),
        };
        let present = by_i.get(&i).filter(|t| t.checkpoint.id == *id);
        let Some(t) = present else {
            return Err(Failure::new(format!(
                "step {i} (thread={thread}, ns={:?}, id={id}): put returned Ok before the kill, but list after \
                 reopening does not have it",
                ns_of(i)
            )));
        };
        if let Ack::Writes { task, .. } = ack {
            if !t.pending_writes.iter().any(|w| &w.task_id == task) {
                return Err(Failure::new(format!(
                    "step {i} ({}): put_writes of task {task} returned Ok before the kill, but its writes are gone \
                     after reopening: pending_writes {}",
                    t.config,
                    describe_writes(&t.pending_writes)
                )));
            }
        }
    }
    // get_tuple must agree with list for the acknowledged checkpoints.
    for ack in acks {
        if let Ack::Put { i, id } = ack {
            let cfg = CheckpointConfig::new(thread).with_ns(ns_of(*i)).with_id(id.clone());
            let got = cx.get_some(&cfg).await?;
            match by_i.get(i) {
                Some(listed_tuple) => got
                    .diffs()
                    .of(format_args!("{got}, compared with what {listed} returned for it"))
                    .tuple(listed_tuple, &got)
                    .finish()?,
                None => return Err(Failure::new(format!("{got}: {listed} did not return step {i}"))),
            }
        }
    }
    Ok(acks.len())
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
/// A one-line message naming the variable, its value and what is valid. The front ends
/// call [`check_env_settings`] before a run, so a bad value is a usage error (exit 2).
pub fn env_settings() -> Result<(Option<u64>, usize), String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let seed = match var(SEED_ENV) {
        Some(s) => Some(
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("{SEED_ENV}={s:?}: expected a whole number from 0 to {}", u64::MAX))?,
        ),
        None => None,
    };
    let kills = match var(KILLS_ENV) {
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
            "the fixture has no Fixture::with_reopen, so the storage cannot be opened again after a kill: add \
             Fixture::with_reopen, Fixture::with_location and Registration::open_at to run the crash test",
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
            "the fixture can reopen its storage (with_reopen) but names no location for another process: add \
             Fixture::with_location(locator) to the factory's fixture and Registration::open_at(|locator| ...) to \
             the registration so the crash test can open the storage in a child process",
        ));
    };
    let (seed, kills) = settings()?;
    cx.fact("seed", seed.to_string());
    let mut rng = fastrand::Rng::with_seed(seed);
    let exe = std::env::current_exe().map_err(|e| Failure::new(format!("cannot find this test binary: {e}")))?;
    let mut checked: Vec<(String, Vec<Ack>)> = Vec::new();
    let mut acknowledged = 0usize;
    for k in 1..=kills {
        let thread = cx.thread(&format!("crash{k}"));
        // The first kill waits for at least one acknowledgement, so a run always has
        // something to verify.
        let least = usize::from(k == 1);
        let plan = KillPlan { after_acks: rng.usize(least..=MAX_ACKS_BEFORE_KILL), fraction: rng.f64() };
        let request = json!({"registration": cx.registration_name(), "location": location, "thread": thread});
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

/// A crash run passes only if it killed a child and verified at least one acknowledged
/// call: a run that acknowledged nothing has checked nothing (issue 13).
fn verified_something(kills: usize, acknowledged: usize, seed: u64) -> Checked {
    if kills == 0 {
        return Err(Failure::new(format!(
            "{KILLS_ENV}=0: the crash test killed nothing, so it showed nothing about durability; set it to 1 or more \
             (default {DEFAULT_KILLS})"
        )));
    }
    if acknowledged == 0 {
        return Err(Failure::new(format!(
            "the crash test killed {kills} child(ren) and verified {acknowledged} acknowledged call(s) (seed {seed}, \
             rerun with {SEED_ENV}={seed}): a run that acknowledged nothing has not shown that acknowledged data \
             survives a kill"
        )));
    }
    Ok(())
}

/// When to kill: after `after_acks` acknowledgements, `fraction` of a call later.
#[derive(Clone, Copy, Debug)]
struct KillPlan {
    after_acks: usize,
    fraction: f64,
}

/// Starts the child, waits for `ready` and the acknowledgements of the plan, then for the
/// plan's fraction of a call, kills it with SIGKILL and returns what it acknowledged.
async fn run_and_kill(exe: &std::path::Path, request: &str, plan: KillPlan) -> Result<ChildLog, String> {
    let mut child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(CRASH_CHILD_ENV, request)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start the child {}: {e}", exe.display()))?;
    // An interrupted front end kills the child before it exits (it would go on writing).
    let child_pid = child.id();
    let _killed_on_interrupt = conformance_core::leftovers::on_interrupt(move || {
        conformance_core::leftovers::kill_child(child_pid);
    });
    let log = Arc::new(Mutex::new(ChildLog::default()));
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Instant>();
    let (acks_tx, mut acks_rx) = tokio::sync::watch::channel((0usize, None::<Instant>));
    let stdout = child.stdout.take();
    let out_log = log.clone();
    let out_reader = std::thread::spawn(move || {
        let mut ready_tx = Some(ready_tx);
        let Some(stdout) = stdout else { return };
        // Only whole lines count: a line cut by the kill is not an acknowledgement the
        // parent received.
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            if let Some(rest) = line.strip_suffix('\n').and_then(|l| l.strip_prefix(PREFIX)).map(str::trim) {
                let mut log = out_log.lock().unwrap_or_else(|e| e.into_inner());
                if rest == "ready" {
                    log.ready = true;
                    if let Some(tx) = ready_tx.take() {
                        let _ = tx.send(Instant::now());
                    }
                } else if let Some(ack) = rest.strip_prefix("ack ").and_then(parse_ack) {
                    log.acks.push(ack);
                    let n = log.acks.len();
                    acks_tx.send_replace((n, Some(Instant::now())));
                } else if let Some(e) = rest.strip_prefix("error ") {
                    log.error = Some(e.to_owned());
                }
            }
            line.clear();
        }
    });
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut s) = stderr {
            let _ = s.read_to_end(&mut buf);
        }
        // The panic message if there is one (a backtrace may follow it), else the end.
        let text = String::from_utf8_lossy(&buf).into_owned();
        match text.find("panicked at") {
            Some(at) => text[at..].chars().take(1000).collect(),
            None => text.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect::<String>(),
        }
    });
    let started = Instant::now();
    let mut moment = "before the child was ready".to_owned();
    let mut stalled = None;
    if let Ok(Ok(ready_at)) = tokio::time::timeout(READY_TIMEOUT, ready_rx).await {
        // Wait for the planned acknowledgements (or the child's end), then a fraction of
        // the average call.
        let timed_out =
            tokio::time::timeout(ACK_TIMEOUT, acks_rx.wait_for(|(n, _)| *n >= plan.after_acks)).await.is_err();
        let (n, last) = *acks_rx.borrow();
        if timed_out {
            stalled = Some(format!(
                "the child acknowledged {n} calls in {} s after it was ready while the parent waited for {}: its \
                 writes stall (another instance has the storage open)",
                ACK_TIMEOUT.as_secs(),
                plan.after_acks
            ));
        }
        let pace = match last {
            Some(last) if n > 0 => last.duration_since(ready_at) / n as u32,
            _ => Duration::from_millis(1),
        };
        let delay = pace.mul_f64(plan.fraction);
        tokio::time::sleep(delay).await;
        let n_now = acks_rx.borrow().0;
        moment = format!(
            "killed after {n_now} acknowledged calls, {:.2} ms after the wanted {}{} (calls took {:.2} ms on average)",
            delay.as_secs_f64() * 1e3,
            plan.after_acks,
            if timed_out { " (not reached in time)" } else { "" },
            pace.as_secs_f64() * 1e3
        );
    }
    // A child that ended before the kill ended by itself: fine after the whole workload
    // (exit 0), a failure otherwise (its error line or its panic on stderr says why).
    let ended_early = child.try_wait().ok().flatten();
    let _ = child.kill();
    let (status, stderr_tail) = tokio::task::spawn_blocking(move || {
        let status = child.wait();
        let _ = out_reader.join();
        let tail = err_reader.join().unwrap_or_default();
        (status, tail)
    })
    .await
    .map_err(|e| format!("waiting for the child failed: {e}"))?;
    let mut log = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    log.moment = moment;
    if !log.ready {
        let why = match &log.error {
            Some(e) => e.clone(),
            None => format!(
                "it did not report ready within {:.1} s (exit: {status:?}); is child_main_if_requested the first \
                 call in main? stderr: {stderr_tail}",
                started.elapsed().as_secs_f64()
            ),
        };
        return Err(format!("the child could not open the storage: {why}"));
    }
    if let Some(status) = ended_early.filter(|s| !s.success()) {
        let why = log.error.clone().unwrap_or_else(|| format!("stderr: {stderr_tail}"));
        return Err(format!("the child exited with {status} before the kill: {why}"));
    }
    if let (Some(s), None) = (stalled, &log.error) {
        return Err(s);
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::verified_something;

    #[test]
    fn a_run_that_killed_or_acknowledged_nothing_does_not_pass() {
        let none = verified_something(0, 0, 7).unwrap_err().message;
        assert!(none.contains("KILLS=0") && none.contains("killed nothing"), "{none}");
        let unacked = verified_something(20, 0, 7).unwrap_err().message;
        assert!(unacked.contains("verified 0 acknowledged"), "{unacked}");
        assert!(verified_something(20, 3, 7).is_ok());
    }

    struct NoReopen;
    impl conformance_core::CheckpointSaver for NoReopen {}

    /// Forced to run on a fixture without `with_reopen`, the crash case says so, and does
    /// not claim the fixture can reopen.
    #[test]
    fn forced_crash_case_names_the_missing_with_reopen() {
        let reg = conformance_core::Registration::new("no-reopen", || async {
            Ok(conformance_core::Fixture::new(NoReopen).with_location("nowhere"))
        });
        let cases = crate::durability::cases();
        let case = cases.iter().find(|c| c.name == "acknowledged_writes_survive_kill").expect("the crash case");
        let r = conformance_core::run::execute_case(&reg, case);
        let m = r.message.unwrap_or_default();
        assert!(m.contains("has no Fixture::with_reopen") && !m.contains("can reopen"), "{m}");
    }
}
