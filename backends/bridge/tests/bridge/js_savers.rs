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

/// The cases about a config without a field reach a JS saver (the host omits the field,
/// the child passes the config on without it): a saver that reads a missing `thread_id` as
/// the thread "undefined" and files writes without `checkpoint_ns` where no read finds them
/// (tests/bridge/savers/missing_fields.mjs) fails both, and the saver keeping exactly what
/// it is given passes them.
pub fn a_js_saver_mishandling_a_missing_config_field_is_caught() {
    let cases =
        ["get_tuple::config_without_thread_reads_no_thread", "put_writes::writes_without_namespace_belong_to_the_root"];
    let outcomes = |reg: checkpoint_bridge::BridgeRegistration| {
        let report = run(&reg, &[Capability::GetTuple, Capability::PutWrites]);
        cases.map(|id| outcome(&report, id))
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/savers/missing_fields.mjs");
    let [(o, m), (o2, m2)] = outcomes(crate::js("js", Some(path)));
    assert!(
        o == Outcome::Failed && m.contains("get_tuple(no thread_id") && m.contains("put in the thread \"undefined\""),
        "{o:?}: {m}"
    );
    assert!(o2 == Outcome::Failed && m2.contains("pending_writes"), "{o2:?}: {m2}");
    for (id, (o, m)) in cases.iter().zip(outcomes(crate::js_exact())) {
        assert_eq!(o, Outcome::Passed, "{id} on the exact saver: {m}");
    }
}

/// A saver whose database refuses a config without `checkpoint_id` or `checkpoint_ns`
/// (LangGraph JS's PostgresSaver: pg's DatabaseError, SQLSTATE 23502 not-null violation;
/// tests/bridge/savers/schema_checks.mjs) refuses the call and stores nothing: the JS child
/// reports a database's refusal of the data (SQLSTATE class 22 or 23) as `InvalidInput`,
/// which the host makes `InvalidConfig` for a config breaking CONTRACT §1, not as a
/// `Storage` failure (issue 35: both cases failed on js:postgres with "got error Storage").
pub fn a_js_saver_refusing_a_config_through_its_schema_passes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/savers/schema_checks.mjs");
    let report = run(&crate::js("js", Some(path)), &[Capability::PutWrites]);
    for id in [
        "put_writes::missing_checkpoint_id_is_invalid_config",
        "put_writes::writes_without_namespace_belong_to_the_root",
    ] {
        let (o, m) = outcome(&report, id);
        assert_eq!(o, Outcome::Passed, "{id}: {m}");
    }
}

/// A child started to replace one that died gets the lifespan setup too: an initializer
/// whose createCheckpointer needs what its beforeAll prepared keeps working after its first
/// child died at its third case (tests/bridge/savers/needs_before_all.mjs). Only the cases
/// that child was running fail.
pub fn a_replacement_child_is_set_up_again() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/savers/needs_before_all.mjs");
    let reg = crate::js("js", Some(path));
    let report = run(&reg, &[Capability::DeleteThread]);
    assert_eq!(reg.facts().children, 2, "the first child killed itself");
    let failed: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Failed).collect();
    // The case whose factory killed the child failed; or, with another case's calls in
    // flight then, the cases it disturbed were run again alone, in the replacement child.
    let rerun = report.tests.iter().any(|t| t.rerun_alone.is_some());
    assert!(!failed.is_empty() || rerun, "a case ran in the child that died");
    for t in &failed {
        let m = t.message.as_deref().unwrap_or_default();
        assert!(!m.contains("before beforeAll"), "{}: the replacement child got no setup: {m}", t.id);
    }
    let passed = report.tests.iter().filter(|t| t.outcome == Outcome::Passed).count();
    assert!(passed >= 8, "{passed} passed: {:?}", failed.iter().map(|t| (&t.id, &t.message)).collect::<Vec<_>>());
}

/// The report names where a JS saver comes from, as it does for a Python one: LangGraph JS's
/// MemorySaver from @langchain/langgraph-checkpoint at the pinned version (bridges/js's
/// package.json), and an initializer module by its path, with no package when none holds it
/// (the JS report named neither before).
pub fn the_report_names_the_js_savers_package_and_version() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bridges/js/package.json");
    let pins: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).expect("package.json")).expect("package.json is JSON");
    let pin = pins["dependencies"]["@langchain/langgraph-checkpoint"].as_str().expect("a pin").to_owned();
    let report = crate::own_savers::judged(&crate::js("js:memory", None), &[Capability::DeleteThread]);
    for (key, value) in [
        ("bridge.module", "@langchain/langgraph-checkpoint"),
        ("bridge.distribution", "@langchain/langgraph-checkpoint"),
        ("bridge.version", pin.as_str()),
    ] {
        assert_eq!(report.facts.get(key), Some(&serde_json::json!(value)), "{key}: {:?}", report.facts);
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/exact_saver.mjs");
    let report = crate::own_savers::judged(&crate::js_exact(), &[Capability::DeleteThread]);
    let module = std::path::Path::new(path).canonicalize().expect("the saver's path");
    let named = report.facts.get("bridge.module").and_then(|v| v.as_str()).map(std::path::Path::new);
    assert_eq!(named.map(|p| p.canonicalize().ok()), Some(Some(module)), "{:?}", report.facts);
}
