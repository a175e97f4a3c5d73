//! LangGraph JS's savers and JS savers with known bugs, through the JS child: what the
//! kit's cases reach in them (issue 35, false failure 8).

use conformance_core::{Capability, Outcome, Report, RunOptions};

/// The report of `capabilities` on `reg`.
fn run(reg: &checkpoint_bridge::BridgeRegistration, capabilities: &[Capability]) -> Report {
    let options = RunOptions { capabilities: Some(capabilities.iter().copied().collect()), ..RunOptions::default() };
    conformance_spec::validate(reg.registration(), &options)
}

/// The outcome and message of case `id` in `report`.
fn outcome(report: &Report, id: &str) -> (Outcome, String) {
    let t = report.tests.iter().find(|t| t.id == id).unwrap_or_else(|| panic!("no case {id}"));
    (t.outcome, t.message.clone().unwrap_or_default())
}

/// The kit's checkpoints are LangGraph's current format (`v = 4`, what both runtimes write),
/// so LangGraph JS's MemorySaver reads them back as put: it migrates an older checkpoint
/// that has a parent on read, adding an empty `__pregel_tasks` channel, which failed these
/// cases when the fixtures wrote `v = 1` (docs/langgraph-savers.md, J-S3).
pub fn js_memory_reads_the_kits_checkpoints_back_as_put() {
    let report = run(&crate::js("js:memory", None), &[Capability::DeleteThread]);
    for id in ["delete_thread::removes_channel_values", "delete_thread::other_thread_with_the_same_ids_untouched"] {
        let (o, m) = outcome(&report, id);
        assert_eq!(o, Outcome::Passed, "{id}: {m}");
    }
}
