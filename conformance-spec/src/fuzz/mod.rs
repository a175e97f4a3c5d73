//! Model-based fuzzing (issue 15): generated sequences of calls over a small adversarial
//! world, run against a saver and against the reference [`crate::model::Model`]; the first
//! divergence is shrunk (by proptest) to a minimal sequence and given back as a
//! [`trace::Trace`] (docs/trace-format.md), printable three ways: readable, JSON (which
//! [`replay`] replays) and a Rust regression case.
//!
//! Each sequence runs on a fresh fixture from the registration's factory (cleanup always
//! run). After the generated calls, every thread of the world is read back (its latest
//! checkpoint per namespace, its whole list, a `before` + `limit` list), so a corrupted
//! state shows even if no generated read looked at it. Calls are sequential;
//! a `reopen` marker replaces the instance by a new one on the same storage and an
//! `instance` marker switches to a second one, when the registration can reopen
//! (CONTRACT §4). When the saver has the `concurrency` capability, a batch of two or three
//! calls is now and then made at the same time (on one instance, or on two), and checked
//! against every serial order of its calls (CONTRACT §4 Concurrency): its results must be
//! those of one of them.

use std::time::{Duration, Instant};

use conformance_core::run::Detection;
use conformance_core::{Capability, CheckpointTuple, Invocation, Registration, Strength};
use conformance_core::{Knowledge, Session, Start};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

mod across;
mod carried;
pub mod domain;
pub mod exec;
pub mod gen;
mod replay;
pub mod strength;
mod sweep;
pub mod trace;
pub mod trial;

use domain::World;
use exec::{compare, expected, may_refuse, Instances};
use gen::{next, Abilities, Raw, KINDS};
use replay::without_passing_reads;
pub use replay::{expect_of, replay, replay_in, replay_trace_in};
use trace::{Op, Outcome, Step, Trace, FORMAT};

/// How many sequences, from which seed, for how long.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// The seed: the same seed gives the same sequences.
    pub seed: u64,
    /// Sequences to run (default 500).
    pub cases: u32,
    /// Stop after this long even if fewer sequences ran.
    pub time: Option<Duration>,
    /// Raw choices per sequence, at most (default 24).
    pub max_len: usize,
    /// How long shrinking a divergence may take, in milliseconds (default 120,000); the
    /// divergence as found so far is kept when the time is up.
    pub shrink_ms: u32,
}

impl Default for FuzzOptions {
    fn default() -> Self {
        Self { seed: 0, cases: 500, time: None, max_len: 24, shrink_ms: SHRINK_LIMIT_MS }
    }
}

/// The first divergence, shrunk: the first MUST one, or when every sequence broke at most
/// SHOULD rules, the first of those ([`strength`]).
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The minimal trace, ending with the diverging call; its `expect`s are the model's.
    pub trace: Trace,
    /// Every difference at the diverging call.
    pub message: String,
    /// MUST when a difference remains once the SHOULD rules are set aside
    /// ([`strength::strength`]); a hang, a panic or a failed factory is MUST.
    pub strength: conformance_core::Strength,
}

/// What a fuzz run did.
#[derive(Clone, Debug)]
pub struct FuzzOutcome {
    /// The seed.
    pub seed: u64,
    /// Sequences run (the shrinking runs not counted).
    pub sequences: u64,
    /// Calls made in those sequences.
    pub ops: u64,
    /// Steps of those sequences that made two or more calls at the same time.
    pub batches: u64,
    /// Steps of those sequences that reopened the storage or switched to another instance.
    pub reopens: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// The first divergence, shrunk; `None` when every sequence agreed with the model.
    pub divergence: Option<Divergence>,
}

impl FuzzOutcome {
    /// The report's `fuzz` section for this outcome (docs/report-schema.md `fuzz`).
    pub fn section(&self) -> conformance_core::FuzzSection {
        conformance_core::FuzzSection {
            seed: self.seed.to_string(),
            sequences: self.sequences,
            ops: self.ops,
            duration_ms: self.elapsed.as_secs_f64() * 1e3,
            divergences: self
                .divergence
                .iter()
                .map(|d| conformance_core::FuzzDivergence {
                    message: d.message.clone(),
                    strength: d.strength,
                    steps: d.trace.steps.len(),
                    trace: serde_json::to_value(&d.trace).unwrap_or_default(),
                })
                .collect(),
            error: None,
        }
    }
}

/// The tuple's config, for messages.
pub fn config_of(t: &CheckpointTuple) -> &conformance_core::CheckpointConfig {
    &t.config
}

struct Run {
    steps: Vec<Step>,
    /// A MUST divergence (or a hang, a panic, a failed factory or cleanup).
    failure: Option<String>,
    /// A divergence that breaks SHOULD rules only; the sequence stops there too.
    should: Option<String>,
}

/// Runs one sequence against a fresh fixture, judging reads as the saver returns them
/// (without the fields it declared it lacks, [`crate::compare::judging`], as in a replay).
async fn run_sequence(reg: &Registration, can: &Abilities, world_raw: &[u16; 8], raws: &[Raw]) -> Run {
    let fixture = match reg.fixture().await {
        Ok(f) => f,
        Err(e) => return Run { steps: Vec::new(), failure: Some(format!("the factory failed: {e}")), should: None },
    };
    let lacks = fixture.lacks().clone();
    let world = World::new(world_raw).without(&lacks);
    crate::compare::judging(lacks, run_on(fixture, reg.case_timeout(), can, world, raws)).await
}

async fn run_on(
    fixture: conformance_core::Fixture,
    limit: Duration,
    can: &Abilities,
    world: World,
    raws: &[Raw],
) -> Run {
    let (saver, cleanup, reopen, _) = fixture.into_parts();
    let mut instances = Instances::new(saver, reopen, limit);
    let mut model = crate::model::Model::new();
    let mut ops: Vec<Op> = Vec::new();
    let mut steps = Vec::new();
    let mut failure = None;
    let mut should = None;
    let mut soft = None;
    let mut soft_expect = None;
    let mut i = 0;
    let mut sweep: Vec<Op> = Vec::new();
    loop {
        if i == raws.len() {
            sweep = sweep::final_reads(&world, &model, can);
        }
        let op = if i < raws.len() {
            let (op, taken) = next(&raws[i..], &world, &model, can);
            i += taken;
            op
        } else if i < raws.len() + sweep.len() {
            i += 1;
            sweep[i - 1 - raws.len()].clone()
        } else {
            break;
        };
        let empty_thread = exec::on_empty_thread(&op);
        let saved = (may_refuse(&op) || empty_thread).then(|| model.clone());
        let mut want = expected(&mut model, &op);
        let got = instances.run(&op).await;
        if let (Some(saved), Ok(Some(refused @ Outcome::Error(_)))) = (saved, &got) {
            if exec::is_refusal(refused) || (empty_thread && *refused == Outcome::Error("InvalidConfig".into())) {
                // A refusal the contract allows (its kind is a SHOULD, judged by the
                // catalog's case): nothing is stored, which the later calls check.
                model = saved;
                want = Some(refused.clone());
            }
        }
        let model_want = want.clone();
        if let Ok(Some(g)) = &got {
            if exec::either_allowed(&op, g) {
                want = Some(g.clone());
            }
            if let Some(w) = across::limit_picked_otherwise(&op, &model, g) {
                // Other tuples kept by `limit` across namespaces: the SHOULD of one order,
                // noted below; the tuples themselves are judged.
                want = Some(w);
            }
            if let Some(w) = want.as_mut() {
                exec::allow_unlinked_parents(&model, w, g);
            }
        }
        let one_thread = !matches!(op, Op::Call(Invocation::CopyThread { .. } | Invocation::Prune { .. }));
        if empty_thread
            && one_thread
            && soft.is_none()
            && matches!(&got, Ok(Some(g)) if !matches!(g, Outcome::Error(_)))
        {
            // Taken as an ordinary id, as the model takes it: judged on, and said once as
            // the SHOULD it breaks (the sequence goes on: the model still holds). A list of
            // threads (`prune`) or a copy may hold `""` either way.
            let message = format!(
                "{}: expected an InvalidConfig error (an empty thread_id, CONTRACT §1 SHOULD), but the call succeeded",
                trace::describe(&op)
            );
            soft = Some((steps.len(), message));
            // The trace states the SHOULD answer, so that its replay shows the note.
            soft_expect = Some(Outcome::Error("InvalidConfig".into()));
        }
        ops.push(op.clone());
        steps.push(Step { op: op.clone(), expect: soft_expect.take().or_else(|| want.clone()) });
        match (want, got) {
            (_, Err(e)) => failure = Some(e),
            (Some(w), Ok(Some(g))) => {
                let note = model_want.as_ref().and_then(|mw| across::order_note(&op, &model, mw, &g));
                if let (None, Some(note)) = (&soft, note) {
                    soft = Some((steps.len() - 1, note));
                }
                if let Err(f) = compare(&op, &w, &g).finish() {
                    let message = instances.with_errors(f.message);
                    match strength::strength(&op, &w, &g, &model) {
                        Strength::Must => failure = Some(message),
                        Strength::Should => should = Some(message),
                    }
                }
            }
            _ => {}
        }
        if failure.is_some() || should.is_some() {
            break;
        }
    }
    if let (None, None, Some((at, message))) = (&failure, &should, soft) {
        // The trace ends at the call the note is about.
        steps.truncate(at + 1);
        should = Some(message);
    }
    drop(instances);
    if let Some(c) = cleanup {
        if let Err(e) = c().await {
            failure.get_or_insert(format!("the cleanup failed: {e}"));
        }
    }
    Run { steps, failure, should }
}

/// What `detection` found `reg` can do, its skips left out.
fn abilities_of(reg: &Registration, detection: &Detection) -> Abilities {
    let extended =
        Capability::ALL.into_iter().filter(|c| detection.is_detected(*c) && !reg.skips().contains_key(c)).collect();
    Abilities { extended, reopen: detection.is_detected(Capability::Durability) }
}

fn runtime(reg: &Registration) -> std::io::Result<tokio::runtime::Runtime> {
    conformance_core::run::runtime(reg.is_multi_thread())
}

fn strategy(max_len: usize) -> impl Strategy<Value = ([u16; 8], Vec<Raw>)> {
    (any::<[u16; 8]>(), prop::collection::vec((0..KINDS, any::<[u16; 6]>()), 1..=max_len.max(1)))
}

/// Runs generated sequences against `registration` and compares every result with the
/// model; on the first divergence, shrinks it and returns the minimal trace.
///
/// # Errors
/// A message when the runtime or the lifespan setup fails.
pub fn fuzz(registration: &Registration, options: &FuzzOptions) -> Result<FuzzOutcome, String> {
    // The run's session, as every front end's: lifespan setup, detection, teardown.
    let mut session = Session::start(registration, Start::Detect);
    let result = match session.knowledge() {
        Knowledge::Detected(d) => {
            let can = abilities_of(session.registration(), d);
            fuzz_inner(session.registration(), options, &can)
        }
        Knowledge::SetupFailed(e) => Err(e.clone()),
        Knowledge::Unprobed => Err("the fuzzer's session did not detect the saver's capabilities".to_owned()),
    };
    let teardown = session.teardown().map_or(Ok(()), |e| Err(e.to_owned()));
    let mut outcome = result?;
    match (teardown, &mut outcome.divergence) {
        (Ok(()), _) => Ok(outcome),
        // The divergence is the verdict: the failed teardown is said with it, not instead.
        (Err(e), Some(d)) => {
            d.message = format!("{}\n(then {e})", d.message);
            Ok(outcome)
        }
        (Err(e), None) => Err(e),
    }
}

/// [`fuzz`] inside a lifespan a front end already set up, on what `detection` found (the
/// session's, or the trial's own: [`trial::trial`]).
///
/// # Errors
/// A message when the runtime cannot start.
pub fn fuzz_in_lifespan(
    registration: &Registration,
    detection: &Detection,
    options: &FuzzOptions,
) -> Result<FuzzOutcome, String> {
    fuzz_inner(registration, options, &abilities_of(registration, detection))
}

/// How long proptest may spend shrinking one divergence (a slow saver's sequences cost a
/// second or more each; the divergence as found is kept when the time is up).
const SHRINK_LIMIT_MS: u32 = 120_000;

fn fuzz_inner(reg: &Registration, options: &FuzzOptions, can: &Abilities) -> Result<FuzzOutcome, String> {
    let rt = runtime(reg).map_err(|e| format!("cannot start a runtime: {e}"))?;
    let start = Instant::now();
    let counters = std::cell::Cell::new(Counts::default());
    let shrinking = std::cell::Cell::new(false);
    // The run whose step took longer than its limit, when one did.
    let stuck: std::cell::RefCell<Option<Run>> = std::cell::RefCell::new(None);
    // The last run that broke a MUST rule: what is reported when the shrunk sequence no
    // longer does (a divergence that comes and goes: a race, a saver under load).
    let last_failed: std::cell::RefCell<Option<Run>> = std::cell::RefCell::new(None);
    // The first sequence that broke SHOULD rules only: reported when no MUST one is found.
    let first_should: std::cell::RefCell<Option<([u16; 8], Vec<Raw>)>> = std::cell::RefCell::new(None);
    let mut chunk = 0u64;
    let mut left = options.cases;
    while left > 0 && options.time.is_none_or(|t| start.elapsed() < t) {
        let n = left.min(100);
        left -= n;
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&options.seed.to_le_bytes());
        seed[8..16].copy_from_slice(&chunk.to_le_bytes());
        chunk += 1;
        let config = Config {
            cases: n,
            failure_persistence: None,
            max_shrink_iters: 4096,
            max_shrink_time: options.shrink_ms,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
        let result = runner.run(&strategy(options.max_len), |(world, raws)| {
            // Past the time limit, the rest of the chunk is generated but not run.
            if !shrinking.get() && options.time.is_some_and(|t| start.elapsed() >= t) {
                return Ok(());
            }
            // A step that hung is not shrunk: each try would wait the step's limit again.
            // Every further candidate "passes", so proptest keeps the sequence that hung.
            if stuck.borrow().is_some() {
                return Ok(());
            }
            let run = rt.block_on(run_sequence(reg, can, &world, &raws));
            if !shrinking.get() {
                counters.set(counters.get().add(&run.steps));
                if run.should.is_some() && first_should.borrow().is_none() {
                    *first_should.borrow_mut() = Some((world, raws.clone()));
                }
            }
            match run.failure {
                // While another divergence is shrunk, a candidate that hangs is not that
                // divergence: it "passes", so the report keeps the divergence found.
                Some(m) if shrinking.get() && m.contains(exec::NO_ANSWER) => Ok(()),
                Some(m) => {
                    *last_failed.borrow_mut() =
                        Some(Run { steps: run.steps.clone(), failure: Some(m.clone()), should: None });
                    shrinking.set(true);
                    if m.contains(exec::NO_ANSWER) {
                        *stuck.borrow_mut() = Some(Run { steps: run.steps, failure: Some(m.clone()), should: None });
                    }
                    Err(TestCaseError::fail(m))
                }
                None => Ok(()),
            }
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(_, (world, raws))) => {
                let hung = stuck.borrow_mut().take();
                let run = match hung {
                    Some(run) => run,
                    None => {
                        let raws = drop_needless(&raws, |fewer| {
                            let run = rt.block_on(run_sequence(reg, can, &world, fewer));
                            let failed = run.failure.is_some();
                            if failed {
                                *last_failed.borrow_mut() = Some(run);
                            }
                            failed
                        });
                        let run = rt.block_on(run_sequence(reg, can, &world, &raws));
                        match (run.failure.is_some(), last_failed.take()) {
                            (false, Some(Run { steps, failure: Some(m), should })) => {
                                let m = format!("{m}\n(it did not fail again when run once more: the divergence comes and goes, a race or a saver under load; the trace is of its last failing run)");
                                Run { steps, failure: Some(m), should }
                            }
                            _ => run,
                        }
                    }
                };
                let Counts { sequences, ops, batches, reopens } = counters.get();
                let source = format!("cargo xtask fuzz --backend {} --seed {}", reg.name(), options.seed);
                let hung = run.failure.as_deref().is_some_and(|m| m.contains(exec::NO_ANSWER));
                let trace = Trace { format: FORMAT.to_owned(), source, recorded_with: None, steps: run.steps };
                let trace = if hung { trace } else { rt.block_on(without_passing_reads(reg, trace)) };
                let message =
                    run.failure.unwrap_or_else(|| "the divergence did not reproduce on the shrunk sequence".into());
                return Ok(FuzzOutcome {
                    seed: options.seed,
                    sequences,
                    ops,
                    batches,
                    reopens,
                    elapsed: start.elapsed(),
                    divergence: Some(Divergence { trace, message, strength: Strength::Must }),
                });
            }
            Err(TestError::Abort(reason)) => return Err(format!("the fuzzer stopped: {reason}")),
        }
    }
    let Counts { sequences, ops, batches, reopens } = counters.get();
    let divergence =
        first_should.into_inner().map(|(world, raws)| should_divergence(reg, options, can, &rt, world, &raws));
    Ok(FuzzOutcome { seed: options.seed, sequences, ops, batches, reopens, elapsed: start.elapsed(), divergence })
}

/// The first SHOULD-only divergence, shrunk by [`drop_needless`] within the options'
/// shrink time (what is left when the time is up stays in the trace), then without the
/// reads it does not need ([`without_passing_reads`]).
fn should_divergence(
    reg: &Registration,
    options: &FuzzOptions,
    can: &Abilities,
    rt: &tokio::runtime::Runtime,
    world: [u16; 8],
    raws: &[Raw],
) -> Divergence {
    let deadline = Instant::now() + Duration::from_millis(u64::from(options.shrink_ms));
    let raws = drop_needless(raws, |fewer| {
        Instant::now() < deadline && rt.block_on(run_sequence(reg, can, &world, fewer)).should.is_some()
    });
    let run = rt.block_on(run_sequence(reg, can, &world, &raws));
    let source = format!("cargo xtask fuzz --backend {} --seed {}", reg.name(), options.seed);
    let trace = Trace { format: FORMAT.to_owned(), source, recorded_with: None, steps: run.steps };
    // The final reads of the world (not choices, so not dropped above) before the one
    // that diverged go too, when the divergence stays without them.
    let trace = rt.block_on(without_passing_reads(reg, trace));
    let message =
        run.should.or(run.failure).unwrap_or_else(|| "the divergence did not reproduce on the shrunk sequence".into());
    Divergence { trace, message, strength: Strength::Should }
}

/// After proptest's shrinking (which removes elements of a sequence only before it
/// simplifies them, so it can stop with steps the divergence does not need): removes each
/// choice whose removal still diverges, last first, until a pass removes none (at most 4
/// passes). A divergence that shows only now and then (a race) keeps the choices whose
/// removal made it vanish once.
fn drop_needless(raws: &[Raw], diverges: impl Fn(&[Raw]) -> bool) -> Vec<Raw> {
    let mut raws = raws.to_vec();
    for _ in 0..4 {
        let before = raws.len();
        let mut i = raws.len();
        while i > 0 {
            i -= 1;
            let mut fewer = raws.clone();
            fewer.remove(i);
            if diverges(&fewer) {
                raws = fewer;
            }
        }
        if raws.len() == before {
            break;
        }
    }
    raws
}

/// What the sequences run so far did (see [`FuzzOutcome`]).
#[derive(Clone, Copy, Default)]
struct Counts {
    sequences: u64,
    ops: u64,
    batches: u64,
    reopens: u64,
}

impl Counts {
    fn add(self, steps: &[Step]) -> Self {
        let count = |f: fn(&Op) -> bool| steps.iter().filter(|s| f(&s.op)).count() as u64;
        Self {
            sequences: self.sequences + 1,
            ops: self.ops + steps.len() as u64,
            batches: self.batches + count(|op| matches!(op, Op::Concurrent { .. })),
            reopens: self.reopens + count(|op| matches!(op, Op::Reopen | Op::Instance { .. })),
        }
    }
}
