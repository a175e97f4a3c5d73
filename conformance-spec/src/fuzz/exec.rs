//! Running one [`Op`] against a saver and against the [`Model`], and comparing the two
//! outcomes field by field with the spec's comparator ([`Diffs`]).

use std::sync::Arc;

use conformance_core::{CheckpointSaver, ReopenFn};

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
}

impl Instances {
    /// The first instance, and how to open more.
    pub fn new(first: Arc<dyn CheckpointSaver>, reopen: Option<ReopenFn>) -> Self {
        Self { list: vec![first], current: 0, reopen, killed: Vec::new() }
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
        std::panic::AssertUnwindSafe(self.run_uncaught(op)).catch_unwind().await.unwrap_or_else(|p| {
            Err(format!("{}: the saver panicked: {}", describe(op), conformance_core::panic_message(&*p)))
        })
    }

    async fn run_uncaught(&mut self, op: &Op) -> Result<Option<Outcome>, String> {
        let s = self.list[self.current].clone();
        Ok(Some(match op.clone() {
            Op::Put { config, checkpoint, metadata, new_versions } => {
                Outcome::of(s.put(&config, checkpoint, metadata, new_versions).await, Outcome::Config)
            }
            Op::PutWrites { config, writes, task_id, task_path } => {
                Outcome::of(s.put_writes(&config, writes, &task_id, &task_path).await, |()| Outcome::Done)
            }
            Op::GetTuple { config } => Outcome::of(s.get_tuple(&config).await, Outcome::Tuple),
            Op::List { thread_id, options } => Outcome::of(s.list(&thread_id, &options).await, Outcome::Tuples),
            Op::DeleteThread { thread_id } => Outcome::of(s.delete_thread(&thread_id).await, |()| Outcome::Done),
            Op::DeleteForRuns { run_ids } => Outcome::of(s.delete_for_runs(&run_ids).await, |()| Outcome::Done),
            Op::CopyThread { source, target } => Outcome::of(s.copy_thread(&source, &target).await, |()| Outcome::Done),
            Op::Prune { thread_ids, strategy } => Outcome::of(s.prune(&thread_ids, strategy).await, |()| Outcome::Done),
            Op::DeltaChannelHistory { config, channels } => {
                Outcome::of(s.delta_channel_history(&config, &channels).await, Outcome::History)
            }
            Op::GetNextVersion { current } => Outcome::Version(s.get_next_version(current.as_ref())),
            Op::Reopen => {
                // A saver that cannot reopen goes on with the same instance: its storage
                // outlives the "process" by staying open, which is what a recorded run
                // needs; the step keeps its number.
                if self.reopen.is_some() {
                    let new = self.open().await?;
                    let old = std::mem::replace(&mut self.list[self.current], new);
                    self.killed.push(old);
                }
                return Ok(None);
            }
            Op::Instance { index } => {
                while self.list.len() <= index {
                    let new = self.open().await?;
                    self.list.push(new);
                }
                self.current = index;
                return Ok(None);
            }
        }))
    }
}

/// What the model says `op` returns (and the model's new state); `None` for a marker.
pub fn expected(model: &mut Model, op: &Op) -> Option<Outcome> {
    Some(match op {
        Op::Put { config, checkpoint, metadata, new_versions } => {
            Outcome::of(model.put(config, checkpoint, metadata, new_versions), Outcome::Config)
        }
        Op::PutWrites { config, writes, task_id, task_path } => {
            Outcome::of(model.put_writes(config, writes, task_id, task_path), |()| Outcome::Done)
        }
        Op::GetTuple { config } => Outcome::of(model.get_tuple(config), Outcome::Tuple),
        Op::List { thread_id, options } => Outcome::of(model.list(thread_id, options), Outcome::Tuples),
        Op::DeleteThread { thread_id } => Outcome::of(model.delete_thread(thread_id), |()| Outcome::Done),
        Op::DeleteForRuns { run_ids } => Outcome::of(model.delete_for_runs(run_ids), |()| Outcome::Done),
        Op::CopyThread { source, target } => Outcome::of(model.copy_thread(source, target), |()| Outcome::Done),
        Op::Prune { thread_ids, strategy } => Outcome::of(model.prune(thread_ids, *strategy), |()| Outcome::Done),
        Op::DeltaChannelHistory { config, channels } => {
            Outcome::of(model.delta_channel_history(config, channels), Outcome::History)
        }
        Op::GetNextVersion { current } => Outcome::Version(model.next_version(current.as_ref())),
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
    matches!(op, Op::Put { metadata, .. } if metadata.iter().any(|(k, v)| k.contains('\0') || has_nul(v)))
}

/// Every difference between what `op` should have returned and what it returned, each
/// naming the call, the checkpoint, the field, the expected and the actual value.
pub fn compare(op: &Op, expected: &Outcome, got: &Outcome) -> Diffs {
    let mut d = Diffs::new();
    d.of(describe(op));
    match (expected, got) {
        (Outcome::Config(e), Outcome::Config(g)) => {
            d.config(e, g);
        }
        (Outcome::Done, Outcome::Done) => {}
        (Outcome::Error(e), Outcome::Error(g)) => {
            if e != g {
                d.push("", format_args!("a {e} error"), format_args!("a {g} error"));
            }
        }
        (Outcome::Version(_), Outcome::Version(g)) => {
            let current = match op {
                Op::GetNextVersion { current } => current.as_ref(),
                _ => None,
            };
            if !crate::model::is_next_version(current, g) {
                let want = current.map_or_else(|| "1".to_owned(), |c| format!("a version greater than {c:?}"));
                d.push("", want, format_args!("{g:?}"));
            }
        }
        (Outcome::Tuple(Some(e)), Outcome::Tuple(Some(g))) => {
            d.tuple(e, g);
        }
        (Outcome::Tuple(e), Outcome::Tuple(g)) => {
            let name = |t: &Option<_>| match t {
                Some(t) => format!("the tuple ({})", crate::fuzz::config_of(t)),
                None => "none".to_owned(),
            };
            if e.is_some() != g.is_some() {
                d.push("", name(e), name(g));
            }
        }
        (Outcome::Tuples(e), Outcome::Tuples(g)) => {
            d.tuples(e, g);
        }
        (Outcome::History(e), Outcome::History(g)) => {
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
        (e, g) => {
            d.push("", short(e), short(g));
        }
    }
    d
}

fn short(o: &Outcome) -> String {
    match o {
        Outcome::Error(kind) => format!("a {kind} error"),
        Outcome::Done => "Ok".to_owned(),
        other => format!("Ok({})", serde_json::to_string(other).unwrap_or_default()),
    }
}
