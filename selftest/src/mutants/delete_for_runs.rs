//! Mutants of CONTRACT §3 delete_for_runs: what is deleted, what is left behind, empty and
//! unknown inputs.

use super::id_support::*;
use super::prelude::*;

/// True when `t` belongs to one of `run_ids` (its `run_id` metadata).
fn of_runs(t: &CheckpointTuple, run_ids: &[String]) -> bool {
    t.metadata.get("run_id").and_then(Value::as_str).is_some_and(|r| run_ids.iter().any(|x| x == r))
}

/// The tuples of every known thread that belong to one of `run_ids`.
async fn tuples_of_runs(saver: &Inner<'_>, run_ids: &[String]) -> Result<Vec<CheckpointTuple>, CheckpointError> {
    let mut found = Vec::new();
    for t in saver.threads() {
        found.extend(saver.snapshot(&t).await?.into_iter().filter(|t| of_runs(t, run_ids)));
    }
    Ok(found)
}

/// `delete_for_runs` does nothing.
#[derive(Default)]
pub struct DeleteForRunsNoop;

#[async_trait]
impl Bug for DeleteForRunsNoop {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::DeleteForRuns { .. } => Ok(Reply::Done),
            _ => saver.forward(call).await,
        }
    }
}

/// `delete_for_runs([])` fails (S14).
#[derive(Default)]
pub struct DeleteForRunsEmptyFails;

#[async_trait]
impl Bug for DeleteForRunsEmptyFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::DeleteForRuns { run_ids: runs } if runs.is_empty() => {
                Err(CheckpointError::InvalidInput("delete_for_runs: no run ids given".into()))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// Run ids that match no checkpoint fail the call.
#[derive(Default)]
pub struct DeleteForRunsUnknownFails;

#[async_trait]
impl Bug for DeleteForRunsUnknownFails {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::DeleteForRuns { run_ids } = &call {
            if !run_ids.is_empty() && tuples_of_runs(saver, run_ids).await?.is_empty() {
                return Err(CheckpointError::storage_msg(format!(
                    "delete_for_runs: no checkpoint of runs {run_ids:?}"
                )));
            }
        }
        saver.forward(call).await
    }
}

/// Only the first run id is deleted.
#[derive(Default)]
pub struct DeleteForRunsFirstOnly;

impl Bug for DeleteForRunsFirstOnly {
    fn delete_for_runs_input(&self, run_ids: &mut Vec<String>) {
        run_ids.truncate(1);
    }
}

/// Every thread that has a listed run is deleted whole.
#[derive(Default)]
pub struct DeleteForRunsWholeThread;

#[async_trait]
impl Bug for DeleteForRunsWholeThread {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteForRuns { run_ids } = &call else { return saver.forward(call).await };
        for t in saver.threads() {
            if saver.snapshot(&t).await?.iter().any(|t| of_runs(t, run_ids)) {
                saver.saver().delete_thread(&t).await?;
            }
        }
        Ok(Reply::Done)
    }
}

/// The deleted checkpoints' writes are left behind.
#[derive(Default)]
pub struct DeleteForRunsLeavesWrites;

#[async_trait]
impl Bug for DeleteForRunsLeavesWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteForRuns { run_ids } = &call else { return saver.forward(call).await };
        let deleted = tuples_of_runs(saver, run_ids).await?;
        saver.saver().delete_for_runs(run_ids).await?;
        for t in deleted {
            saver.replay_writes(&t.config, &t.pending_writes).await?;
        }
        Ok(Reply::Done)
    }
}

/// Only the root namespace is searched.
#[derive(Default)]
pub struct DeleteForRunsRootOnly;

#[async_trait]
impl Bug for DeleteForRunsRootOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteForRuns { run_ids } = &call else { return saver.forward(call).await };
        let deleted = tuples_of_runs(saver, run_ids).await?;
        saver.saver().delete_for_runs(run_ids).await?;
        saver.replay(deleted.into_iter().filter(|t| !t.config.checkpoint_ns.is_empty()).collect()).await?;
        Ok(Reply::Done)
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        DeleteForRunsNoop,
        &[DR],
        [R("delete_for_runs.deletes"), G("7.3-delete-for-runs")],
        "delete_for_runs does nothing"
    ),
    mutant!(DeleteForRunsEmptyFails, &[DR], [R("extended.noop_inputs"), S("S14")], "delete_for_runs([]) fails"),
    mutant!(
        DeleteForRunsUnknownFails,
        &[DR],
        [R("extended.noop_inputs")],
        "run ids that match no checkpoint fail the call"
    ),
    mutant!(DeleteForRunsFirstOnly, &[DR], [R("delete_for_runs.deletes")], "only the first run id is deleted"),
    mutant!(
        DeleteForRunsWholeThread,
        &[DR],
        [R("delete_for_runs.others"), G("7.3-delete-for-runs")],
        "every thread that has a listed run is deleted whole"
    ),
    mutant!(
        DeleteForRunsLeavesWrites,
        &[DR],
        [R("delete_for_runs.deletes"), G("7.3-delete-for-runs")],
        "the deleted checkpoints' writes are left behind"
    ),
    mutant!(
        DeleteForRunsRootOnly,
        &[DR],
        [R("delete_for_runs.deletes")],
        "only the root namespace is searched for the runs"
    ),
    mutant!(
        "delete_for_runs_nfc_normalised",
        RunIds<Nfc>,
        &[DR],
        [R("ids.opaque"), R("delete_for_runs.others")],
        "delete_for_runs compares run ids NFC-composed: deleting \"\\u{e9}\" also deletes \"e\\u{301}\""
    ),
];
