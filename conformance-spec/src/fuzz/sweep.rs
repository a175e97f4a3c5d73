//! The reads after a generated sequence (the sweep): what every sequence ends with, so
//! that a corrupted state shows even where no generated call looked.

use conformance_core::{Capability, Invocation};

use super::domain::World;
use super::gen::Abilities;
use super::trace::Op;

/// The reads after the generated calls, so that a corrupted state shows even if no
/// generated read looked at it: for each thread of the world, the latest checkpoint of each
/// namespace (`get_tuple` without an id) and, where some are stored, each id of the world
/// not stored there, the whole list, each namespace's list, the list with a limit one below
/// its length, and the list cut just below its greatest stored id with a limit of 1
/// (`before` and `limit` together).
pub(super) fn final_reads(world: &World, model: &crate::model::Model, can: &Abilities) -> Vec<Op> {
    use conformance_core::{CheckpointConfig, ListOptions};
    let mut ops = Vec::new();
    for t in &world.threads {
        for ns in &world.namespaces {
            let config = CheckpointConfig::new(t.clone()).with_ns(ns.clone());
            ops.push(Op::Call(Invocation::GetTuple { config: config.clone() }));
            // Beside stored checkpoints, the world's ids never stored there find nothing
            // (a lookup that falls back to a case-folded or normalised id finds a neighbour).
            let stored = |id: &String| model.checkpoints.contains_key(&(t.clone(), ns.clone(), id.clone()));
            if world.ids.iter().any(stored) {
                for id in world.ids.iter().filter(|id| !stored(id)) {
                    ops.push(Op::Call(Invocation::GetTuple { config: config.clone().with_id(id.clone()) }));
                }
            }
            if can.extended.contains(&Capability::DeltaChannelHistory) {
                ops.push(Op::Call(Invocation::DeltaChannelHistory { config, channels: world.channels.clone() }));
            }
        }
        ops.push(Op::Call(Invocation::List { thread_id: t.clone(), options: ListOptions::all() }));
        for ns in &world.namespaces {
            ops.push(Op::Call(Invocation::List { thread_id: t.clone(), options: ListOptions::all().ns(ns.clone()) }));
        }
        let stored = model.checkpoints.keys().filter(|k| &k.0 == t).count();
        if stored >= 2 {
            ops.push(Op::Call(Invocation::List {
                thread_id: t.clone(),
                options: ListOptions::all().limit(stored - 1),
            }));
        }
        let greatest =
            model.checkpoints.keys().filter(|k| &k.0 == t).map(|k| &k.2).max_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        if let Some(id) = greatest {
            let mut options = ListOptions::all();
            options.before = Some(id.clone());
            options.limit = Some(1);
            ops.push(Op::Call(Invocation::List { thread_id: t.clone(), options }));
        }
    }
    ops
}
