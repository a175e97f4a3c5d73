//! The `traces` capability: real LangGraph traffic, recorded once and replayed against
//! any saver (traces/README.md). Each shipped trace under `traces/` is one case: a fresh
//! saver gets every call the recorded run made, in order, and each result must be the
//! recorded one under the contract's rules (ids and order exactly, values by their bytes;
//! what the recorder normalised, and why, is in traces/README.md). A failure names the
//! step (1-based), the call and every difference at it.
//!
//! A `reopen` step marks where the recorded process died and a new one opened the same
//! storage: a saver that can reopen (CONTRACT §4, `durability` detected) is reopened
//! there, so the resumed run must see what the killed one acknowledged; on one that cannot
//! the replay goes on with the same instance, each step keeping its number.

use conformance_core::{Capability, SpecCase};

use crate::fuzz::trace::Trace;
use crate::{Checked, Cx};

/// The shipped traces: `(name, JSON text)`, the name being the file's stem under `traces/`.
pub const SHIPPED: [(&str, &str); 5] = [
    ("linear", include_str!("../../traces/linear.json")),
    ("subgraph", include_str!("../../traces/subgraph.json")),
    ("interrupt", include_str!("../../traces/interrupt.json")),
    ("fanout-retry", include_str!("../../traces/fanout-retry.json")),
    ("killed-resumed", include_str!("../../traces/killed-resumed.json")),
];

/// One case per shipped trace.
pub fn cases() -> Vec<SpecCase> {
    crate::spec_cases!(Capability::Traces, needs [Put, PutWrites, GetTuple] => [
        #[rules(put.values, get_tuple.latest, list.order, metadata.json)] replays_linear_graph_over_four_turns +[List],
        #[rules(put.stored, ids.opaque, metadata.json)] #[uses(Namespaces)] replays_subgraph_with_child_namespaces,
        #[rules(put_writes.index, put_writes.special_last)] replays_interrupt_and_resume,
        #[rules(put_writes.key, get_tuple.writes_order)] #[uses(TaskPathOnWrites)] replays_send_fan_out_with_failed_task_retried,
        #[rules(durability.acknowledged, put_writes.early)] replays_run_killed_halfway_and_resumed,
    ])
}

async fn shipped(cx: &Cx, name: &str) -> Checked {
    let Some((_, json)) = SHIPPED.iter().find(|(n, _)| *n == name) else {
        return Err(conformance_core::Failure::new(format!("no shipped trace {name:?}")));
    };
    let trace = Trace::parse(json).map_err(|e| conformance_core::Failure::new(format!("traces/{name}.json: {e}")))?;
    crate::fuzz::replay_trace_in(cx, &trace)
        .await
        .map_err(|f| conformance_core::Failure::new(format!("traces/{name}.json, {}", f.message)))
}

/// traces/linear.json: three nodes in a row, four turns on one thread, then the state
/// and its history (`list`).
async fn replays_linear_graph_over_four_turns(cx: Cx) -> Checked {
    shipped(&cx, "linear").await
}

/// traces/subgraph.json: a compiled subgraph as a node; checkpoints in child namespaces
/// with `parents` metadata.
async fn replays_subgraph_with_child_namespaces(cx: Cx) -> Checked {
    shipped(&cx, "subgraph").await
}

/// traces/interrupt.json: `interrupt()` in a node, then a resume with `Command(resume=)`
/// (`__interrupt__` and `__resume__` writes).
async fn replays_interrupt_and_resume(cx: Cx) -> Checked {
    shipped(&cx, "interrupt").await
}

/// traces/fanout-retry.json: `Send` to four tasks, one fails (`__error__` next to the
/// others' regular writes), the rerun retries only that task.
async fn replays_send_fan_out_with_failed_task_retried(cx: Cx) -> Checked {
    shipped(&cx, "fanout-retry").await
}

/// traces/killed-resumed.json: one branch's writes acknowledged, the process dies in the
/// other, a new process (reopen) resumes from what the saver kept.
async fn replays_run_killed_halfway_and_resumed(cx: Cx) -> Checked {
    shipped(&cx, "killed-resumed").await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::trace::Op;

    /// Every file of traces/ is shipped (none forgotten), parses, and is of a size the
    /// issue allows (a few hundred calls at most).
    #[test]
    fn every_trace_file_is_shipped_and_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
            .collect();
        files.sort();
        let mut shipped: Vec<String> = SHIPPED.iter().map(|(n, _)| (*n).to_owned()).collect();
        shipped.sort();
        assert_eq!(files, shipped, "traces/*.json and SHIPPED differ");
        for (name, json) in SHIPPED {
            let t = Trace::parse(json).unwrap_or_else(|e| panic!("traces/{name}.json: {e}"));
            assert!((10..=400).contains(&t.steps.len()), "traces/{name}.json has {} steps", t.steps.len());
            assert!(t.steps.iter().all(|s| s.expect.is_some() || matches!(s.op, Op::Reopen)), "{name}");
        }
        assert_eq!(cases().len(), SHIPPED.len(), "one case per shipped trace");
    }
}
