//! The strength of a divergence from the model (CONTRACT §5): the model holds the SHOULD
//! rules too, so a difference it finds is a MUST breach unless it disappears once the
//! SHOULD rules are set aside. `should_only` sets them aside by normalising what was
//! expected and what came back, then compares again:
//! - `put.refuse_whole` / `metadata.json` as LangGraph applies it: NUL characters removed
//!   from metadata strings and keys (LangGraph's own savers strip them);
//! - `put.kept_values`: a value the storing put did not carry, expected from the store and
//!   not read (a value read where none or another is expected stays MUST);
//! - `list.order_across`: a listing of every namespace compared namespace by namespace
//!   (the generator never cuts such a listing with `limit` or `before`);
//! - `list.filter_strict`: a listing that a filter matched the way one of LangGraph's
//!   savers does (booleans equal to numbers, null needing the key, containment), and a
//!   listing filtered on metadata that lost its NULs when stored (`put.refuse_whole`, as
//!   above: a filter value with a NUL then matches nothing it was put as);
//! - a `list` filter refused with `InvalidInput` (a loud refusal loses nothing), or with
//!   any error when it holds a value a database cannot hold: an integer beyond 64-bit
//!   signed range (LangGraph's `SqliteSaver`: "Python int too large to convert to SQLite
//!   INTEGER"), a NUL character (`PostgresSaver`: "unsupported Unicode escape sequence");
//!   CONTRACT §2 list.
//!
//! Everything else (a lost write, a wrong latest, a mixed-up parent, a missing or extra
//! checkpoint, any other error) is MUST, and the fuzz trial fails it.

use conformance_core::{CheckpointTuple, Invocation, Strength};
use serde_json::Value;

use super::exec::compare;
use super::trace::{Op, Outcome};
use crate::model::filter::{metadata_without_nul, Looser};
use crate::model::Model;

/// [`Strength::Should`] when every difference between `expected` and `got` at `op` is one
/// of the SHOULD rules the module names, given the `model` after `op`; else
/// [`Strength::Must`].
pub fn strength(op: &Op, expected: &Outcome, got: &Outcome, model: &Model) -> Strength {
    if should_only(op, expected, got, model) {
        Strength::Should
    } else {
        Strength::Must
    }
}

fn should_only(op: &Op, expected: &Outcome, got: &Outcome, model: &Model) -> bool {
    match (op, expected, got) {
        (Op::Concurrent { calls }, Outcome::Orders(orders), Outcome::Orders(got)) if got.len() == 1 => {
            orders.iter().any(|want| {
                calls
                    .iter()
                    .zip(want)
                    .zip(&got[0])
                    .all(|((c, w), g)| compare(&c.op, w, g).finish().is_ok() || should_only(&c.op, w, g, model))
            })
        }
        (Op::Call(Invocation::List { options, .. }), _, got) if !options.filter.is_empty() => {
            matches!(got, Outcome::Error(k) if k == "InvalidInput")
                || (matches!(got, Outcome::Error(_)) && options.filter.values().any(unstorable))
                || matched_loosely(op, got, model)
                || same_once_normalised(op, expected, got, model)
        }
        _ => same_once_normalised(op, expected, got, model),
    }
}

/// True when `got` is what `op` (a `list` with a filter) gives with the filter matched in
/// one of the looser or tighter ways of LangGraph's own savers ([`Looser`]).
fn matched_loosely(op: &Op, got: &Outcome, model: &Model) -> bool {
    let Op::Call(Invocation::List { thread_id, options }) = op else { return false };
    Looser::all().any(|looser| {
        model
            .list_with(thread_id, options, looser)
            .is_ok_and(|ts| same_once_normalised(op, &Outcome::Tuples(ts), got, model))
    })
}

fn same_once_normalised(op: &Op, expected: &Outcome, got: &Outcome, model: &Model) -> bool {
    let across = matches!(op, Op::Call(Invocation::List { options, .. }) if options.checkpoint_ns.is_none());
    let (e, g) = (normalised(expected, model, across, Some(got)), normalised(got, model, across, None));
    compare(op, &e, &g).finish().is_ok()
}

/// `o` normalised; for the expected outcome, `got` says which kept values were not read.
fn normalised(o: &Outcome, model: &Model, across: bool, got: Option<&Outcome>) -> Outcome {
    let read = |t: &CheckpointTuple| -> Option<CheckpointTuple> {
        match got? {
            Outcome::Tuple(Some(g)) if g.config == t.config => Some(g.clone()),
            Outcome::Tuples(gs) => gs.iter().find(|g| g.config == t.config).cloned(),
            _ => None,
        }
    };
    match o {
        Outcome::Tuple(t) => Outcome::Tuple(t.as_ref().map(|t| tuple(t, model, read(t).as_ref()))),
        Outcome::Tuples(ts) => {
            let mut ts: Vec<CheckpointTuple> = ts.iter().map(|t| tuple(t, model, read(t).as_ref())).collect();
            if across {
                // Stable: the order within each namespace is kept and still judged.
                ts.sort_by(|a, b| a.config.checkpoint_ns.as_bytes().cmp(b.config.checkpoint_ns.as_bytes()));
            }
            Outcome::Tuples(ts)
        }
        other => other.clone(),
    }
}

/// `t` without NULs in its metadata. An expected tuple (`read` is what the saver returned
/// for it) also loses each value its put did not carry that the saver did not read: a kept
/// value left unread is the SHOULD of `put.kept_values`. A value read where none is
/// expected, or another value, stays a difference (an emptied channel filled, a sibling's
/// value, a value outside `channel_versions`: MUST).
fn tuple(t: &CheckpointTuple, model: &Model, read: Option<&CheckpointTuple>) -> CheckpointTuple {
    let mut t = t.clone();
    t.metadata = metadata_without_nul(&t.metadata);
    let cfg = &t.config;
    let key = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), cfg.checkpoint_id.clone().unwrap_or_default());
    if let (Some(stored), Some(read)) = (model.checkpoints.get(&key), read) {
        let carried = &stored.checkpoint.channel_values;
        let mut checkpoint = (*t.checkpoint).clone();
        checkpoint
            .channel_values
            .retain(|ch, _| carried.contains_key(ch) || read.checkpoint.channel_values.contains_key(ch));
        t.checkpoint = std::sync::Arc::new(checkpoint);
    }
    t
}

/// A value some databases cannot hold: an integer no signed 64-bit column holds (`u64`
/// above `i64::MAX`, SQLite), a NUL character in a string or key (PostgreSQL's `jsonb`).
fn unstorable(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_u64() && n.as_i64().is_none(),
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(unstorable),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || unstorable(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use conformance_core::{ChannelVersions, Checkpoint, CheckpointConfig, Invocation, ListOptions, Strength};
    use serde_json::json;

    use super::strength;
    use crate::fuzz::trace::{Op, Outcome};
    use crate::model::Model;

    fn metadata(v: serde_json::Value) -> conformance_core::CheckpointMetadata {
        v.as_object().cloned().unwrap_or_default()
    }

    /// A saver that strips NULs from metadata when storing it, as every LangGraph saver
    /// does (`get_checkpoint_metadata`), then lists nothing for a filter on the value as
    /// put: the SHOULD rule `put.refuse_whole` (docs/langgraph-savers.md S6), not a lost
    /// checkpoint. A listing that loses a checkpoint whose metadata has no NUL stays MUST.
    #[test]
    fn a_filter_on_a_nul_the_saver_dropped_is_should_and_a_lost_checkpoint_must() {
        let mut model = Model::default();
        let cfg = CheckpointConfig::new("t");
        let put = |model: &mut Model, id: &str, meta| {
            let cp = Checkpoint { v: 1, id: id.to_owned(), ..Checkpoint::default() };
            model.put(&cfg, &cp, &metadata(meta), &ChannelVersions::default()).unwrap();
        };
        put(&mut model, "00000000-0000-7000-8000-000000000001", json!({"k": "a\u{0}b"}));
        put(&mut model, "00000000-0000-7000-8000-000000000002", json!({"j": "x"}));
        for (filter, want) in [(json!({"k": "a\u{0}b"}), Strength::Should), (json!({"j": "x"}), Strength::Must)] {
            let options = ListOptions { filter: metadata(filter.clone()), ..ListOptions::all() };
            let expected = Outcome::Tuples(model.list("t", &options).unwrap());
            assert!(matches!(&expected, Outcome::Tuples(ts) if ts.len() == 1), "{filter}");
            let op = Op::Call(Invocation::List { thread_id: "t".into(), options });
            assert_eq!(strength(&op, &expected, &Outcome::Tuples(vec![]), &model), want, "{filter}");
        }
    }
}
