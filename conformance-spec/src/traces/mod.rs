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

mod user;

pub use user::{read_trace, trace_files, user_cases, PREFIX as USER_PREFIX, TRACES_ENV};

use conformance_core::{Capability, SpecCase};

use crate::fuzz::trace::Trace;
use crate::{Checked, Cx};

/// The shipped traces: `(name, JSON text)`, the name being the file's stem under `traces/`.
pub const SHIPPED: [(&str, &str); 14] = [
    ("linear", include_str!("../../../traces/linear.json")),
    ("subgraph", include_str!("../../../traces/subgraph.json")),
    ("interrupt", include_str!("../../../traces/interrupt.json")),
    ("fanout-retry", include_str!("../../../traces/fanout-retry.json")),
    ("killed-resumed", include_str!("../../../traces/killed-resumed.json")),
    ("update-state", include_str!("../../../traces/update-state.json")),
    ("time-travel", include_str!("../../../traces/time-travel.json")),
    ("subgraph-paused", include_str!("../../../traces/subgraph-paused.json")),
    ("functional", include_str!("../../../traces/functional.json")),
    ("durability-exit", include_str!("../../../traces/durability-exit.json")),
    ("durability-async", include_str!("../../../traces/durability-async.json")),
    ("durability-sync", include_str!("../../../traces/durability-sync.json")),
    ("js-time-travel", include_str!("../../../traces/js-time-travel.json")),
    ("js-interrupt-update", include_str!("../../../traces/js-interrupt-update.json")),
];

/// One case per shipped trace.
pub fn cases() -> Vec<SpecCase> {
    crate::spec_cases!(Capability::Traces, needs [Put, PutWrites, GetTuple] => [
        #[rules(put.values, get_tuple.latest, list.order, metadata.json)] replays_linear_graph_over_four_turns +[List],
        #[rules(put.stored, ids.opaque, metadata.json)] #[uses(Namespaces)] replays_subgraph_with_child_namespaces,
        #[rules(put_writes.index, put_writes.special_last)] replays_interrupt_and_resume,
        #[rules(put_writes.key, get_tuple.writes_order)] #[uses(TaskPathOnWrites)] replays_send_fan_out_with_failed_task_retried,
        #[rules(durability.acknowledged, put_writes.early)] replays_run_killed_halfway_and_resumed,
        #[rules(put.stored, put.values, metadata.json, list.limit)] replays_state_injected_with_update_state +[List],
        #[rules(put.stored, tuple.parent_config, get_tuple.latest, list.tuples)] replays_time_travel_forks_of_older_checkpoints +[List],
        #[rules(get_tuple.latest, put_writes.belongs, put_writes.index)] #[uses(Namespaces)] replays_paused_subgraph_read_with_its_namespace,
        #[rules(put_writes.key, put_writes.index, put.values)] replays_functional_api_entrypoint_and_tasks,
        #[rules(put.values, get_tuple.latest, list.order)] replays_durability_exit +[List] -[PutWrites],
        #[rules(put.values, put_writes.key, list.tuples)] replays_durability_async +[List],
        #[rules(put.values, tuple.parent_config, list.tuples)] replays_durability_sync +[List],
        #[rules(tuple.parent_config, put.siblings, list.order)] replays_langgraph_js_time_travel +[List],
        #[rules(put_writes.special_last, put.stored, list.tuples)] replays_langgraph_js_interrupt_and_update_state +[List],
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

/// traces/update-state.json: `update_state` without and with `as_node` (checkpoints whose
/// source is "update") between runs, read back with get_state and a limited history.
async fn replays_state_injected_with_update_state(cx: Cx) -> Checked {
    shipped(&cx, "update-state").await
}

/// traces/time-travel.json: a replay from an older checkpoint and an `update_state` on an
/// older one, each a fork: new checkpoints whose parent is not the latest, and a latest
/// (greatest id) whose metadata step is smaller than the old branch's.
async fn replays_time_travel_forks_of_older_checkpoints(cx: Cx) -> Checked {
    shipped(&cx, "time-travel").await
}

/// traces/subgraph-paused.json: a subgraph pauses in `interrupt()` and
/// `get_state(subgraphs=True)` reads its namespace's checkpoint and writes, paused and
/// after the resume.
async fn replays_paused_subgraph_read_with_its_namespace(cx: Cx) -> Checked {
    shipped(&cx, "subgraph-paused").await
}

/// traces/functional.json: the functional API, an `@entrypoint` calling `@task`s, with
/// `previous` across turns, an interrupt and its resume.
async fn replays_functional_api_entrypoint_and_tasks(cx: Cx) -> Checked {
    shipped(&cx, "functional").await
}

/// traces/durability-exit.json: five runs with `durability="exit"`: one put per run, no
/// writes saved.
async fn replays_durability_exit(cx: Cx) -> Checked {
    shipped(&cx, "durability-exit").await
}

/// traces/durability-async.json: five runs with `durability="async"` (saves made while the
/// next step runs).
async fn replays_durability_async(cx: Cx) -> Checked {
    shipped(&cx, "durability-async").await
}

/// traces/durability-sync.json: five runs with `durability="sync"`.
async fn replays_durability_sync(cx: Cx) -> Checked {
    shipped(&cx, "durability-sync").await
}

/// traces/js-time-travel.json, recorded from LangGraph JS: a run, then a replay from its
/// step-1 checkpoint (a fork, with LangGraph JS's integer versions, which repeat on the
/// new branch) and the history of both branches.
async fn replays_langgraph_js_time_travel(cx: Cx) -> Checked {
    shipped(&cx, "js-time-travel").await
}

/// traces/js-interrupt-update.json, recorded from LangGraph JS: `interrupt()`, a resume
/// with `Command({resume})`, then `updateState` with and without `asNode`.
async fn replays_langgraph_js_interrupt_and_update_state(cx: Cx) -> Checked {
    shipped(&cx, "js-interrupt-update").await
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
