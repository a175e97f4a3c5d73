//! Values a put carried for channels outside its checkpoint's `channel_versions`
//! (CONTRACT §2 put, "A value the put itself carried ..."): a saver may give them back or
//! leave them out. LangGraph's own savers differ: `InMemorySaver` reads only the channels
//! of `channel_versions`, while `SqliteSaver` and LangGraph JS's `MemorySaver` store the
//! checkpoint whole; LangGraph JS's runtime puts such values (an empty reducer channel,
//! `__pregel_tasks`). A replay therefore compares reads without them, on both sides.
//!
//! Only the value the put itself carried is set aside: a channel outside
//! `channel_versions` that reads back any other value (an older one, a parent's) is still
//! a difference (`put.outside_versions`, MUST).

use std::collections::{BTreeMap, HashMap};

use conformance_core::{CheckpointTuple, Invocation, TypedValue};

use super::trace::{Op, Outcome};

/// (thread_id, checkpoint_ns, checkpoint_id) → the values its put carried for channels
/// outside its `channel_versions`.
#[derive(Default)]
pub(crate) struct CarriedOutside(HashMap<(String, String, String), BTreeMap<String, TypedValue>>);

impl CarriedOutside {
    /// Notes what a `put` in `op` (alone or in a concurrent batch) carried outside its
    /// versions; a later put of the same id replaces what was noted.
    pub(crate) fn note(&mut self, op: &Op) {
        match op {
            Op::Call(Invocation::Put(p)) => {
                let key = (p.config.thread_id.clone(), p.config.checkpoint_ns.clone(), p.checkpoint.id.clone());
                let outside: BTreeMap<String, TypedValue> = p
                    .checkpoint
                    .channel_values
                    .iter()
                    .filter(|(ch, _)| !p.checkpoint.channel_versions.contains_key(*ch))
                    .map(|(ch, v)| (ch.clone(), v.clone()))
                    .collect();
                if outside.is_empty() {
                    self.0.remove(&key);
                } else {
                    self.0.insert(key, outside);
                }
            }
            Op::Concurrent { calls } => calls.iter().for_each(|c| self.note(&c.op)),
            _ => {}
        }
    }

    /// `o` without, in each tuple it holds, the values its put carried outside its
    /// `channel_versions` (only where the value read is the one carried).
    pub(crate) fn strip(&self, o: &Outcome) -> Outcome {
        if self.0.is_empty() {
            return o.clone();
        }
        match o {
            Outcome::Tuple(t) => Outcome::Tuple(t.as_ref().map(|t| self.tuple(t))),
            Outcome::Tuples(ts) => Outcome::Tuples(ts.iter().map(|t| self.tuple(t)).collect()),
            Outcome::Orders(orders) => {
                Outcome::Orders(orders.iter().map(|os| os.iter().map(|o| self.strip(o)).collect()).collect())
            }
            other => other.clone(),
        }
    }

    fn tuple(&self, t: &CheckpointTuple) -> CheckpointTuple {
        let c = &t.config;
        let key = (c.thread_id.clone(), c.checkpoint_ns.clone(), c.checkpoint_id.clone().unwrap_or_default());
        let Some(carried) = self.0.get(&key) else { return t.clone() };
        let mut t = t.clone();
        let mut checkpoint = (*t.checkpoint).clone();
        let versions = checkpoint.channel_versions.clone();
        checkpoint.channel_values.retain(|ch, v| versions.contains_key(ch) || carried.get(ch) != Some(v));
        t.checkpoint = std::sync::Arc::new(checkpoint);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance_core::{Checkpoint, CheckpointConfig, Put};
    use serde_json::json;

    fn tv(s: &str) -> TypedValue {
        TypedValue::json(&json!(s))
    }

    fn put_outside() -> (Op, CheckpointTuple) {
        let mut cp = Checkpoint { v: 1, id: "c1".into(), ..Default::default() };
        cp.channel_values.insert("a".into(), tv("kept"));
        cp.channel_versions.insert("a".into(), 1.into());
        cp.channel_values.insert("__pregel_tasks".into(), tv("carried"));
        let put = Put {
            config: CheckpointConfig::new("t"),
            checkpoint: cp.clone(),
            metadata: Default::default(),
            new_versions: cp.channel_versions.clone(),
        };
        let tuple = CheckpointTuple {
            config: CheckpointConfig::new("t").with_id("c1"),
            checkpoint: std::sync::Arc::new(cp),
            metadata: Default::default(),
            parent_config: None,
            pending_writes: vec![],
        };
        (Op::Call(Invocation::Put(put)), tuple)
    }

    #[test]
    fn the_carried_value_is_set_aside_and_no_other() {
        let (op, tuple) = put_outside();
        let mut carried = CarriedOutside::default();
        carried.note(&op);
        let Outcome::Tuple(Some(t)) = carried.strip(&Outcome::Tuple(Some(tuple.clone()))) else { panic!() };
        assert_eq!(t.checkpoint.channel_values.keys().collect::<Vec<_>>(), ["a"]);
        // Another value for the same channel (an older one, say) is still read, and so
        // still compared.
        let mut other = (*tuple.checkpoint).clone();
        other.channel_values.insert("__pregel_tasks".into(), tv("older"));
        let other = CheckpointTuple { checkpoint: std::sync::Arc::new(other), ..tuple };
        let Outcome::Tuples(ts) = carried.strip(&Outcome::Tuples(vec![other])) else { panic!() };
        assert!(ts[0].checkpoint.channel_values.contains_key("__pregel_tasks"));
    }
}
