//! Running one [`Op`] against a saver and against the [`Model`], and comparing the two
//! outcomes field by field with the spec's comparator ([`Diffs`]).

use std::sync::Arc;
use std::time::Duration;

use conformance_core::{CheckpointError, CheckpointSaver, Invocation, Put, ReopenFn};

use super::trace::{describe, Op, Outcome};
use crate::compare::Diffs;
use crate::model::Model;

/// The instances of one storage a trace talks to.
pub struct Instances {
    list: Vec<Arc<dyn CheckpointSaver>>,
    current: usize,
    reopen: Option<ReopenFn>,
    /// Instances replaced at a `reopen`: a killed process never shuts down cleanly, so
    /// they are kept, unused, until the trace ends (a flush in `Drop` must not save them).
    killed: Vec<Arc<dyn CheckpointSaver>>,
    /// How long one step may take ([`Instances::new`]).
    limit: Duration,
    /// The saver's own messages of the errors the last step's calls returned
    /// ([`Instances::with_errors`]).
    errors: Vec<String>,
}

/// The step limit of a replay inside a spec case, whose own case timeout bounds it too: the
/// default per-case limit of a conformance run ([`conformance_core::DEFAULT_TIMEOUT`]).
pub const CALL_LIMIT: Duration = conformance_core::DEFAULT_TIMEOUT;

/// What the message of a step that took longer than its limit says (after the call):
/// the fuzzer does not shrink such a divergence, each try would cost the limit again.
pub const NO_ANSWER: &str = ": no answer within ";

impl Instances {
    /// The first instance, how to open more, and how long one step (a call, or a batch of
    /// calls made at once) may take before it fails the run: the registration's per-case
    /// limit ([`conformance_core::Registration::case_timeout`]) in a fuzz run or a replay,
    /// so a saver that hangs cannot hang the fuzzer, and a slow saver given a longer
    /// `--timeout` gets it per step too.
    pub fn new(first: Arc<dyn CheckpointSaver>, reopen: Option<ReopenFn>, limit: Duration) -> Self {
        Self { list: vec![first], current: 0, reopen, killed: Vec::new(), limit, errors: Vec::new() }
    }

    async fn open(&self) -> Result<Arc<dyn CheckpointSaver>, String> {
        let Some(reopen) = &self.reopen else { return Err("this registration cannot open another instance".into()) };
        reopen().await.map_err(|e| format!("opening another instance failed: {e}"))
    }

    /// Runs `op` on the current instance (a marker reopens or switches instances).
    ///
    /// # Errors
    /// A message when the saver panicked (CONTRACT §1: never a panic), naming the call and
    /// the panic, or when a marker needs an instance the registration cannot open.
    pub async fn run(&mut self, op: &Op) -> Result<Option<Outcome>, String> {
        use futures::FutureExt;
        self.errors.clear();
        let limit = self.limit;
        let call = std::panic::AssertUnwindSafe(self.run_uncaught(op)).catch_unwind();
        match tokio::time::timeout(limit, call).await {
            Ok(done) => done.unwrap_or_else(|p| {
                Err(format!("{}: the saver panicked: {}", describe(op), conformance_core::panic_message(&*p)))
            }),
            Err(_) => {
                Err(format!("{}{NO_ANSWER}{limit:?} (a step's limit, the registration's case timeout)", describe(op)))
            }
        }
    }

    /// `message`, the differences at the last step, followed by the saver's own message of
    /// each error that step's calls returned (a comparison compares the error's kind only,
    /// so "got an InvalidInput error" alone would drop what the saver said). A call of a
    /// batch is named before its message.
    pub fn with_errors(&self, message: String) -> String {
        self.errors.iter().fold(message, |m, e| format!("{m}\n  the saver's error: {e}"))
    }

    /// The instance `index`, opened when it is the next one (one past those open).
    async fn instance(&mut self, index: usize) -> Result<Arc<dyn CheckpointSaver>, String> {
        if index > self.list.len() {
            return Err(format!("instance {index} is not open and is not the next one ({})", self.list.len()));
        }
        if index == self.list.len() {
            let new = self.open().await?;
            self.list.push(new);
        }
        Ok(self.list[index].clone())
    }

    async fn run_uncaught(&mut self, op: &Op) -> Result<Option<Outcome>, String> {
        let s = self.list[self.current].clone();
        match op {
            Op::Reopen => {
                // A saver that cannot reopen goes on with the same instance: its storage
                // outlives the "process" by staying open, which is what a recorded run
                // needs; the step keeps its number.
                if self.reopen.is_some() {
                    let new = self.open().await?;
                    let old = std::mem::replace(&mut self.list[self.current], new);
                    self.killed.push(old);
                }
                Ok(None)
            }
            Op::Instance { index } => {
                self.instance(*index).await?;
                self.current = *index;
                Ok(None)
            }
            Op::Concurrent { calls } => {
                let mut tasks = Vec::new();
                for c in calls {
                    let saver = match c.instance {
                        Some(i) => self.instance(i).await?,
                        None => s.clone(),
                    };
                    let op = c.op.clone();
                    tasks.push(crate::compare::spawn(async move { call(&*saver, op).await }));
                }
                let mut got = Vec::new();
                for (c, task) in calls.iter().zip(tasks) {
                    match task.await {
                        Ok(Some((o, error))) => {
                            got.push(o);
                            self.errors.extend(error.map(|e| format!("{}: {e}", describe(&c.op))));
                        }
                        Ok(None) => return Err(format!("{}: not a saver call", describe(&c.op))),
                        Err(e) => {
                            let why = match e.try_into_panic() {
                                Ok(p) => conformance_core::panic_message(&*p),
                                Err(e) => e.to_string(),
                            };
                            return Err(format!("{}: the saver panicked: {why}", describe(&c.op)));
                        }
                    }
                }
                Ok(Some(Outcome::Orders(vec![got])))
            }
            _ => Ok(call(&*s, op.clone()).await.map(|(o, error)| {
                self.errors.extend(error);
                o
            })),
        }
    }
}

/// What the saver returned for a call: the outcome, and the saver's own message when it
/// returned an error ([`CheckpointError::display_chain`]).
type Got = (Outcome, Option<String>);

fn got<T>(result: Result<T, CheckpointError>, ok: impl FnOnce(T) -> Outcome) -> Got {
    let error = result.as_ref().err().map(CheckpointError::display_chain);
    (Outcome::of(result, ok), error)
}

/// What the saver returns for the saver call `op`; `None` for a marker or a batch.
async fn call(s: &dyn CheckpointSaver, op: Op) -> Option<Got> {
    Some(match op {
        Op::Call(invocation) => got(invocation.send(s).await, Outcome::of_reply),
        Op::Concurrent { .. } | Op::Reopen | Op::Instance { .. } => return None,
    })
}

/// Every serial order of `ops` run on a copy of `model`: the results (in the order of
/// `ops`) and the model after, one entry per order (at most 3! = 6 for a batch).
pub fn serial_orders(model: &Model, ops: &[&Op]) -> Vec<(Vec<Outcome>, Model)> {
    fn orders(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![Vec::new()];
        }
        let mut all = Vec::new();
        for shorter in orders(n - 1) {
            for at in 0..=shorter.len() {
                let mut o = shorter.clone();
                o.insert(at, n - 1);
                all.push(o);
            }
        }
        all
    }
    orders(ops.len())
        .into_iter()
        .map(|order| {
            let mut m = model.clone();
            let mut results = vec![Outcome::Done; ops.len()];
            for i in order {
                results[i] = expected(&mut m, ops[i]).unwrap_or(Outcome::Done);
            }
            (results, m)
        })
        .collect()
}

/// What the model says `op` returns (and the model's new state); `None` for a marker.
pub fn expected(model: &mut Model, op: &Op) -> Option<Outcome> {
    Some(match op {
        Op::Call(invocation) => Outcome::of(crate::model::answer(model, invocation.clone()), Outcome::of_reply),
        Op::Concurrent { calls } => {
            // The generator only batches calls whose serial orders all leave the same
            // state (gen::order_free), so any order's model is the one to go on with.
            let ops: Vec<&Op> = calls.iter().map(|c| &c.op).collect();
            let all = serial_orders(model, &ops);
            let mut orders: Vec<Vec<Outcome>> = Vec::new();
            for (results, _) in &all {
                if !orders.contains(results) {
                    orders.push(results.clone());
                }
            }
            if let Some((_, after)) = all.into_iter().next() {
                *model = after;
            }
            Outcome::Orders(orders)
        }
        Op::Reopen | Op::Instance { .. } => return None,
    })
}

/// True when the saver may refuse `op` with `InvalidInput` instead of doing it: a put whose
/// metadata holds a NUL character in a string, which some databases cannot store (CONTRACT
/// §1 Metadata: such a put is refused whole, nothing stored, or stored exactly).
pub fn may_refuse(op: &Op) -> bool {
    fn has_nul(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::String(s) => s.contains('\0'),
            serde_json::Value::Array(a) => a.iter().any(has_nul),
            serde_json::Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
            _ => false,
        }
    }
    matches!(op, Op::Call(Invocation::Put(Put { metadata, .. })) if metadata.iter().any(|(k, v)| k.contains('\0') || has_nul(v)))
}

/// True when `op` names an empty thread id anywhere: CONTRACT §1 (`config.thread_id`,
/// SHOULD) recommends refusing it with `InvalidConfig`; a saver may also take it as an
/// ordinary id, which the model does.
pub fn on_empty_thread(op: &Op) -> bool {
    matches!(op, Op::Call(inv) if inv.thread_ids().iter().any(|t| t.is_empty()))
}

/// True when `got` is a refusal of a put [`may_refuse`]: `InvalidInput` as CONTRACT §1
/// Metadata recommends (SHOULD), or a `Storage` error from the database that cannot store
/// the value (LangGraph's `PostgresSaver` on a NUL nested in a metadata object). Either is
/// loud; what is MUST is that nothing is stored, which the model then holds the saver to.
pub fn is_refusal(got: &Outcome) -> bool {
    matches!(got, Outcome::Error(kind) if kind == "InvalidInput" || kind == "Storage")
}

/// Sets to none, in `want`, the parent of each tuple that `got` returns without one and
/// that the model marks as kept by `prune(keep_latest)` without its parent
/// ([`crate::model::Stored::parent_may_be_unlinked`]): CONTRACT §3 prune lets such a
/// checkpoint keep naming its pruned parent or name none.
pub fn allow_unlinked_parents(model: &crate::model::Model, want: &mut Outcome, got: &Outcome) {
    let unlinked = |w: &mut conformance_core::CheckpointTuple, g: &conformance_core::CheckpointTuple| {
        let c = &w.config;
        let key = (c.thread_id.clone(), c.checkpoint_ns.clone(), c.checkpoint_id.clone().unwrap_or_default());
        if w.config == g.config
            && g.parent_config.is_none()
            && model.checkpoints.get(&key).is_some_and(|s| s.parent_may_be_unlinked)
        {
            w.parent_config = None;
        }
    };
    match (want, got) {
        (Outcome::Tuple(Some(w)), Outcome::Tuple(Some(g))) => unlinked(w, g),
        (Outcome::Tuples(ws), Outcome::Tuples(gs)) => {
            for w in ws.iter_mut() {
                if let Some(g) = gs.iter().find(|g| g.config == w.config) {
                    unlinked(w, g);
                }
            }
        }
        _ => {}
    }
}

/// True when `op` may be answered by either of two results the contract allows, so the
/// saver's answer is the expected one: `put_writes` of no writes without a
/// `checkpoint_id` is a no-op (CONTRACT §2 put_writes, "an empty list is a no-op") or an
/// `InvalidConfig` error ("`checkpoint_id` is required"); both leave the state as it was.
pub fn either_allowed(op: &Op, got: &Outcome) -> bool {
    let empty_without_id =
        matches!(op, Op::Call(Invocation::PutWrites(w)) if w.writes.is_empty() && w.config.checkpoint_id.is_none());
    empty_without_id && (*got == Outcome::Done || *got == Outcome::Error("InvalidConfig".into()))
}

/// Every difference between what `op` should have returned and what it returned, each
/// naming the call, the checkpoint, the field, the expected and the actual value.
pub fn compare(op: &Op, expected: &Outcome, got: &Outcome) -> Diffs {
    let mut d = Diffs::new();
    compare_into(&mut d, op, expected, got);
    d
}

/// [`compare`] into `d`. A concurrent batch matches when its results equal those of one
/// serial order; otherwise the differences from each serial order are listed.
fn compare_into(d: &mut Diffs, op: &Op, expected: &Outcome, got: &Outcome) {
    // Also for a call of a concurrent batch, judged against each serial order.
    if either_allowed(op, got) {
        return;
    }
    d.of(describe(op));
    match (op, expected, got) {
        (Op::Concurrent { calls }, Outcome::Orders(orders), Outcome::Orders(got)) if got.len() == 1 => {
            let diffs_of = |want: &Vec<Outcome>| {
                let mut d = Diffs::new();
                for ((c, w), g) in calls.iter().zip(want).zip(&got[0]) {
                    compare_into(&mut d, &c.op, w, g);
                }
                d
            };
            let all: Vec<Diffs> = orders.iter().map(diffs_of).collect();
            if all.iter().any(Diffs::is_empty) {
                return;
            }
            d.push(
                "",
                format_args!("the results of one of its serial orders ({} give different results)", orders.len()),
                "results no serial order gives (the differences from each follow)",
            );
            for (k, diffs) in all.iter().enumerate() {
                for diff in diffs.differences() {
                    d.of(format_args!("serial order {} of {}: {}", k + 1, all.len(), diff.place));
                    d.push(&diff.field, &diff.expected, &diff.got);
                }
            }
            return;
        }
        _ => {}
    }
    // By the expected kind, with no catch-all: a new kind of outcome is a compile error
    // here, not a false difference. A result of another kind than expected differs.
    let other = |d: &mut Diffs| {
        d.push("", short(expected), short(got));
    };
    match expected {
        Outcome::Config(e) => match got {
            Outcome::Config(g) => {
                d.config(e, g);
            }
            _ => other(d),
        },
        Outcome::Done => match got {
            Outcome::Done => {}
            _ => other(d),
        },
        Outcome::Error(e) => match got {
            Outcome::Error(g) => {
                if e != g {
                    d.push("", an_error(e), an_error(g));
                }
            }
            _ => other(d),
        },
        Outcome::Version(_) => match got {
            Outcome::Version(g) => {
                let current = match op {
                    Op::Call(Invocation::GetNextVersion { current }) => current.as_ref(),
                    _ => None,
                };
                if !crate::model::is_next_version(current, g) {
                    let want = current.map_or_else(|| "1".to_owned(), |c| format!("a version greater than {c:?}"));
                    d.push("", want, format_args!("{g:?}"));
                }
            }
            _ => other(d),
        },
        Outcome::Tuple(e) => match got {
            Outcome::Tuple(g) => match (e, g) {
                (Some(e), Some(g)) => {
                    d.tuple(e, g);
                }
                _ => {
                    let name = |t: &Option<_>| match t {
                        Some(t) => format!("the tuple ({})", crate::fuzz::config_of(t)),
                        None => "none".to_owned(),
                    };
                    if e.is_some() != g.is_some() {
                        d.push("", name(e), name(g));
                    }
                }
            },
            _ => other(d),
        },
        Outcome::Tuples(e) => match got {
            Outcome::Tuples(g) => {
                d.configs_match(g).tuples(e, g);
            }
            _ => other(d),
        },
        Outcome::History(e) => match got {
            Outcome::History(g) => {
                d.eq("channels", &e.keys().collect::<Vec<_>>(), &g.keys().collect::<Vec<_>>());
                for (ch, eh) in e {
                    if let Some(gh) = g.get(ch) {
                        d.writes(format_args!("[{ch:?}].writes"), &eh.writes, &gh.writes).eq(
                            format_args!("[{ch:?}].seed"),
                            &eh.seed,
                            &gh.seed,
                        );
                    }
                }
            }
            _ => other(d),
        },
        // A batch whose results were not compared above (not one list, or not a batch).
        Outcome::Orders(_) => other(d),
    }
}

/// "an InvalidInput error", "a Storage error".
fn an_error(kind: &str) -> String {
    let article = if kind.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
    format!("{article} {kind} error")
}

fn short(o: &Outcome) -> String {
    match o {
        Outcome::Error(kind) => an_error(kind),
        Outcome::Done => "Ok".to_owned(),
        // A value of a megabyte would fill the screen: its first 300 characters say what it is.
        other => format!("Ok({})", crate::compare::shorten(&serde_json::to_string(other).unwrap_or_default(), 300)),
    }
}

#[cfg(test)]
mod tests {
    use super::Instances;
    use crate::fuzz::trace::Op;
    use conformance_core::{async_trait, CheckpointConfig, CheckpointError, CheckpointSaver, CheckpointTuple};
    use std::sync::Arc;
    use std::time::Duration;

    /// A saver whose get_tuple never answers.
    struct Hangs;

    #[async_trait]
    impl CheckpointSaver for Hangs {
        async fn get_tuple(&self, _config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn a_step_gets_the_limit_it_is_given() {
        let mut instances = Instances::new(Arc::new(Hangs), None, Duration::from_millis(50));
        let op = Op::Call(conformance_core::Invocation::GetTuple { config: CheckpointConfig::new("t") });
        let start = std::time::Instant::now();
        let e = instances.run(&op).await.unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5), "waited {:?}", start.elapsed());
        assert!(e.contains("no answer within 50ms") && e.contains("get_tuple"), "{e}");
    }

    /// An empty `put_writes` without an id may be a no-op or `InvalidConfig` (either is
    /// allowed) also inside a concurrent batch: python:sqlite's fuzz trial failed a MUST for
    /// its no-op there (seed 14280167589664528020), where a lone call was already allowed.
    #[test]
    fn an_empty_put_writes_without_id_is_allowed_either_way_in_a_batch() {
        use super::{compare, Outcome};
        use crate::fuzz::trace::Branch;
        let writes = conformance_core::Invocation::PutWrites(conformance_core::PutWrites {
            config: CheckpointConfig::new("a"),
            writes: vec![],
            task_id: "t".into(),
            task_path: "~0".into(),
        });
        let batch = Op::Concurrent { calls: vec![Branch { instance: None, op: Op::Call(writes) }] };
        let invalid = Outcome::Error("InvalidConfig".into());
        let d = compare(&batch, &Outcome::Orders(vec![vec![invalid]]), &Outcome::Orders(vec![vec![Outcome::Done]]));
        assert!(d.is_empty(), "{d:?}");
    }
}
