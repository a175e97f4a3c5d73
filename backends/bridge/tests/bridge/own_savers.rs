//! Savers of a user's own, as `cargo xtask conformance --backend python --saver
//! module:factory` judges them: the modules under tests/bridge/savers/, put on the
//! children's PYTHONPATH ([`on_python_path`]), each registered with `python_registration`,
//! the front end's own call, and annotated as the front end does.

use std::path::PathBuf;

use checkpoint_bridge::{python_registration, BridgeRegistration, PythonOptions};
use conformance_core::{Capability, Feature, Outcome, Report, RunOptions};

/// tests/bridge/savers/: the Python modules of the savers below.
fn savers_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/savers"))
}

/// Puts tests/bridge/savers/ first on PYTHONPATH, which every bridge child inherits (as a
/// user's `PYTHONPATH=... cargo xtask conformance --backend python --saver m:f` would).
/// Called by `main` before any trial starts a thread.
pub fn on_python_path() {
    let mut path = savers_dir().into_os_string();
    if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    std::env::set_var("PYTHONPATH", path);
}

/// `--backend python --saver <factory>` in the managed environment.
fn own(factory: &str) -> BridgeRegistration {
    let options = PythonOptions { base_dir: crate::base_dir(), ..PythonOptions::default() };
    python_registration("python", Some(factory), &options).unwrap_or_else(|e| panic!("{factory}: {e}"))
}

/// The cases of `capabilities` on `reg`, annotated with the bridge's facts.
pub(crate) fn judged(reg: &BridgeRegistration, capabilities: &[Capability]) -> Report {
    let options = RunOptions { capabilities: Some(capabilities.iter().copied().collect()), ..RunOptions::default() };
    let mut report = conformance_spec::validate(reg.registration(), &options);
    reg.annotate(&mut report);
    report
}

fn outcome<'a>(report: &'a Report, id: &str) -> (Outcome, &'a str) {
    let t = report.tests.iter().find(|t| t.id == id).unwrap_or_else(|| panic!("no case {id}"));
    (t.outcome, t.message.as_deref().unwrap_or_default())
}

/// A saver written for langgraph-checkpoint 2.x, whose `put_writes` / `aput_writes` take
/// (config, writes, task_id) (savers/legacy_writes.py), is called as LangGraph's runtime
/// calls it, without the path: its writes are judged (41 cases failed with a TypeError
/// before), and the report says its `put_writes` took no path.
pub fn a_saver_without_task_path_in_put_writes_has_its_writes_judged() {
    let report = judged(&own("legacy_writes:LegacyWritesSaver"), &[Capability::PutWrites, Capability::DeleteThread]);
    let type_errors: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.message.as_deref().is_some_and(|m| m.contains("TypeError")))
        .map(|t| t.id.as_str())
        .collect();
    assert!(type_errors.is_empty(), "called with the task path: {type_errors:?}");
    let (passed, failed, _) = report.case_counts();
    assert!(passed >= 25 && failed == 0, "{passed} passed, {failed} failed: {}", report.to_json());
    // Without a path the writes cannot be ordered by one: declared, that case is not run.
    let (o, m) = outcome(&report, "put_writes::task_path_is_not_part_of_the_write_key");
    assert!(o == Outcome::NotRun && m.contains("task_path_on_writes"), "{o:?}: {m}");
    for id in [
        "put_writes::write_roundtrips_with_task_and_channel",
        "put_writes::regular_write_first_wins",
        "put_writes::special_write_last_wins",
        "delete_thread::removes_pending_writes",
    ] {
        assert_eq!(outcome(&report, id).0, Outcome::Passed, "{id}: {}", outcome(&report, id).1);
    }
    assert_eq!(report.facts.get("bridge.put_writes_task_path"), Some(&serde_json::json!(false)), "{:?}", report.facts);
    assert!(
        report.warnings.iter().any(|w| w.contains("legacy_writes.LegacyWritesSaver's put_writes takes no task_path")),
        "{:?}",
        report.warnings
    );
    assert_eq!(report.facts.get("bridge.module"), Some(&serde_json::json!("legacy_writes")));
    assert_eq!(report.facts.get("bridge.distribution"), None, "a module of no installed distribution");
}

/// A saver whose `get_next_version` takes integers only (savers/int_versions.py) is
/// declared lacking `string_versions` when it is opened: the SHOULD case about LangGraph's
/// padded strings is not run, with the declaration as the reason, the MUST one on integers
/// passes. LangGraph's InMemorySaver, which takes them, declares nothing of the kind.
pub fn an_integer_only_saver_declares_string_versions_lacking() {
    let report = judged(&own("int_versions:IntVersionsSaver"), &[Capability::Put]);
    let (o, m) = outcome(&report, "put::next_version_is_greater_than_langgraph_string_versions");
    assert_eq!((o, m), (Outcome::NotRun, conformance_core::lack_reason(Feature::StringVersions).as_str()));
    let (o, m) = outcome(&report, "put::next_version_is_strictly_greater");
    assert_eq!(o, Outcome::Passed, "{m}");
    let declared = report.warnings.iter().any(|w| w.contains("(feature `string_versions`)"));
    assert!(declared, "{:?}", report.warnings);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let memory = crate::python("memory");
    let lacks = rt.block_on(memory.registration().fixture()).map(|f| f.lacks().clone()).map_err(|e| e.to_string());
    assert_eq!(lacks, Ok([Feature::TaskPathOnReads].into()), "python:memory declares only the task path");
}

/// The report names the judged saver's distribution and version (LangGraph's InMemorySaver:
/// langgraph-checkpoint, the managed environment's pin), in its facts and in the terminal's
/// "Judged through the bridge" line.
pub fn the_report_names_the_savers_distribution_and_version() {
    let report = judged(&crate::python("memory"), &[Capability::DeleteThread]);
    let pin = checkpoint_bridge::PINNED.iter().find_map(|p| p.strip_prefix("langgraph-checkpoint==")).expect("a pin");
    for (key, value) in [
        ("bridge.module", "langgraph.checkpoint.memory"),
        ("bridge.distribution", "langgraph-checkpoint"),
        ("bridge.version", pin),
    ] {
        assert_eq!(report.facts.get(key), Some(&serde_json::json!(value)), "{key}: {:?}", report.facts);
    }
    let text = conformance_core::render::render_terminal(&report);
    let line = format!("Judged through the bridge: langgraph.checkpoint.memory.InMemorySaver from langgraph-checkpoint {pin}, its async methods");
    assert!(text.contains(&line), "{text}");
}
