//! `list` across namespaces (no `checkpoint_ns`), where LangGraph's own savers differ from
//! the contract's SHOULD of one id order (CONTRACT §2 list, `list.order_across`):
//! `InMemorySaver` lists namespace by namespace, so a `limit` keeps other tuples. The MUST
//! part is judged as always: no tuple of another thread, namespace scope or filter, every
//! tuple as stored, id descending within each namespace, as many as `limit` allows.

use conformance_core::{CheckpointTuple, Invocation, ListOptions};

use super::trace::{Op, Outcome};
use crate::model::Model;

/// The `options` of `op` when it lists every namespace of a thread whose checkpoints the
/// model holds in more than one namespace.
fn across<'a>(op: &'a Op, model: &Model) -> Option<(&'a str, &'a ListOptions)> {
    let Op::Call(Invocation::List { thread_id, options }) = op else { return None };
    let mut namespaces = model.checkpoints.keys().filter(|k| k.0 == *thread_id).map(|k| &k.1);
    let first = namespaces.next()?;
    (options.checkpoint_ns.is_none() && namespaces.any(|ns| ns != first)).then_some((thread_id, options))
}

/// For a `list` across namespaces with a `limit` that `got` answers with other tuples than
/// the model's one id order keeps: the outcome the MUST rules expect of that answer (the
/// model's tuples of the same keys, from the listing without `limit`), when `got` holds
/// exactly as many tuples as the limit allows, each one the listing without limit has.
/// `None` when the op is not such a listing or `got` is not such an answer.
pub fn limit_picked_otherwise(op: &Op, model: &Model, got: &Outcome) -> Option<Outcome> {
    let (thread, options) = across(op, model)?;
    let limit = options.limit?;
    let Outcome::Tuples(got) = got else { return None };
    let unlimited = ListOptions { limit: None, ..options.clone() };
    let full = model.list(thread, &unlimited).ok()?;
    let key = |t: &CheckpointTuple| (t.config.checkpoint_ns.clone(), t.checkpoint.id.clone());
    if got.len() != limit.min(full.len()) {
        return None;
    }
    let keys: Vec<_> = got.iter().map(key).collect();
    let picked: Vec<CheckpointTuple> = full.into_iter().filter(|t| keys.contains(&key(t))).collect();
    (picked.len() == got.len()).then_some(Outcome::Tuples(picked))
}

/// The SHOULD note for a `list` across namespaces whose tuples (all as the MUST rules
/// expect) come in another order than one id order, equal ids namespace ascending.
pub fn order_note(op: &Op, model: &Model, want: &Outcome, got: &Outcome) -> Option<String> {
    across(op, model)?;
    let (Outcome::Tuples(want), Outcome::Tuples(got)) = (want, got) else { return None };
    let keys = |ts: &[CheckpointTuple]| -> Vec<(String, String)> {
        ts.iter().map(|t| (t.config.checkpoint_ns.clone(), t.checkpoint.id.clone())).collect()
    };
    let (w, g) = (keys(want), keys(got));
    (w != g).then(|| {
        format!(
            "{}: (ns, id) in one id order across namespaces (CONTRACT §2 list, SHOULD): expected {w:?}, got {g:?}",
            super::trace::describe(op)
        )
    })
}
