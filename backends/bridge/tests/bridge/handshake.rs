//! What a child declares in the handshake and in `open` (docs/bridge-protocol.md
//! "Handshake"), read from scripted children (`sh`), so the host's side is checked without
//! any saver.

use std::collections::BTreeSet;

use checkpoint_bridge::{BridgeRegistration, BridgeSpec, ChildCommand};
use conformance_core::{Capability, Feature, Fixture, Outcome, Registration, RunOptions};

/// A Rust saver that declares a limit (`memory-lacking`, served by this binary): the
/// reference memory saver declaring it lacks namespaces.
pub fn lacking_memory() -> Registration {
    Registration::new("memory-lacking", || async {
        Ok(Fixture::new(checkpoint_memory::MemorySaver::new()).lacking(Feature::Namespaces))
    })
}

/// A child that answers `hello` with `hello` and the first `open` with `open`, then reads
/// until its stdin closes.
fn scripted(what: &str, hello: &str, open: &str) -> BridgeRegistration {
    let script = format!(
        "read l; echo '{{\"id\":0,\"ok\":{hello}}}'; read l; echo '{{\"id\":1,\"ok\":{open}}}'; cat >/dev/null"
    );
    BridgeRegistration::new(BridgeSpec {
        name: format!("scripted-{what}"),
        command: ChildCommand {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![],
            label: format!("sh ({what})"),
        },
        saver: "x".into(),
        work_dir: crate::base_dir().join("runs"),
    })
}

const OPENED: &str = r#"{"handle":1,"location":null,"reopen":false,"saver":{"class":"c","side":"async"}}"#;

/// Every feature a child declares lacking, in `hello`'s `lacks`, with the older `task_path:
/// false`, or in `open`'s `lacks` (what it found probing the instance), is declared on the
/// case's fixture (`Fixture::lacking`); a name that is no feature is an error naming it and
/// the valid ones, in the handshake and in `open`.
pub fn a_childs_declared_limits_reach_the_fixture() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let lacks = |reg: BridgeRegistration| -> Result<BTreeSet<Feature>, String> {
        rt.block_on(reg.registration().fixture()).map(|f| f.lacks().clone()).map_err(|e| e.to_string())
    };
    let hello = r#"{"protocol":1,"server":"sh","saver":"x","lacks":["namespaces"]}"#;
    let open = r#"{"handle":1,"saver":{"class":"c","side":"async"},"lacks":["string_versions"]}"#;
    assert_eq!(lacks(scripted("new", hello, open)), Ok([Feature::Namespaces, Feature::StringVersions].into()));
    let old = r#"{"protocol":1,"server":"sh","saver":"x","task_path":false}"#;
    assert_eq!(lacks(scripted("old", old, OPENED)), Ok([Feature::TaskPathOnReads].into()));
    let none = r#"{"protocol":1,"server":"sh","saver":"x"}"#;
    assert_eq!(lacks(scripted("none", none, OPENED)), Ok(BTreeSet::new()));
    let unknown = r#"{"protocol":1,"server":"sh","saver":"x","lacks":["paths"]}"#;
    let e = lacks(scripted("unknown", unknown, OPENED)).expect_err("an unknown feature");
    assert!(
        e.contains("the bridge child sh (unknown) declares that it lacks an unknown feature `paths`")
            && e.contains("valid features are: task_path_on_reads, string_versions"),
        "{e}"
    );
    let open = r#"{"handle":1,"saver":{"class":"c","side":"async"},"lacks":["versions"]}"#;
    let e = lacks(scripted("unknown-open", none, open)).expect_err("an unknown feature");
    assert!(
        e.contains("open: the bridge child sh (unknown-open) declares that it lacks an unknown feature `versions`"),
        "{e}"
    );
}

/// A Rust fixture's own declarations (`Fixture::lacking`) travel with `open` through the
/// Rust server: the bridged fixture declares the same.
pub fn a_rust_fixtures_declared_limits_cross_the_bridge() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let reg = crate::bridged("memory-lacking");
    let lacks = rt.block_on(reg.registration().fixture()).map(|f| f.lacks().clone()).map_err(|e| e.to_string());
    assert_eq!(lacks, Ok([Feature::Namespaces].into()));
}

/// The JS child declares what every LangGraph JS saver lacks (docs/bridge-protocol.md,
/// "Declared limits"): no `task_path` on reads, numbers as JS numbers, no
/// `updated_channels` in its checkpoint format; and what its probe finds of the opened
/// saver: MemorySaver's `getNextVersion` (BaseCheckpointSaver's) takes integers only. The
/// saver keeping exactly what it is given has no `getNextVersion`, so no such limit.
pub fn the_js_child_declares_its_savers_limits() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let lacks = |reg: BridgeRegistration| {
        rt.block_on(reg.registration().fixture()).map(|f| f.lacks().clone()).map_err(|e| e.to_string())
    };
    let every = [Feature::TaskPathOnReads, Feature::WideNumbers, Feature::UpdatedChannels];
    let mut memory = BTreeSet::from(every);
    memory.insert(Feature::StringVersions);
    assert_eq!(lacks(crate::js("js:memory", None)), Ok(memory));
    assert_eq!(lacks(crate::js_exact()), Ok(every.into()));
}

/// What the JS child's declarations do to the cases (a saver keeping exactly what it is
/// given, tests/bridge/exact_saver.mjs): the put cases about wide numbers check their rule
/// with numbers a JS number holds (they failed with `Inexact` before), and the case about
/// `updated_channels` is not run, with the declaration as its reason.
pub fn the_js_childs_declarations_shape_the_cases() {
    let options = RunOptions { capabilities: Some([Capability::Put].into()), ..RunOptions::default() };
    let report = conformance_spec::validate(crate::js_exact().registration(), &options);
    let outcome = |id: &str| {
        let t = report.tests.iter().find(|t| t.id == id).unwrap_or_else(|| panic!("no case {id}"));
        (t.outcome, t.message.clone().unwrap_or_default())
    };
    for id in ["put::channel_versions_roundtrip_with_their_kind", "put::metadata_any_json_value_roundtrips"] {
        assert_eq!(outcome(id).0, Outcome::Passed, "{id}: {}", outcome(id).1);
    }
    let (o, m) = outcome("put::updated_channels_none_and_empty_stay_distinct");
    assert!(o == Outcome::NotRun && m.contains("updated_channels"), "{o:?}: {m}");
}

/// The JS child's mapping of a config (bridges/js/src/mapping.mjs `runnableConfig`) passes
/// each field only when the request has it: a missing `thread_id` or `checkpoint_ns` stays
/// missing for the saver to judge (it was filled with `""` or refused by the child).
pub fn the_js_child_keeps_a_missing_config_field_missing() {
    let mapping = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bridges/js/src/mapping.mjs");
    let script = format!(
        "const m = await import({mapping:?}); for (const c of [{{thread_id: 't'}}, {{checkpoint_ns: 'x', \
         checkpoint_id: 'c'}}, {{thread_id: 't', checkpoint_ns: '', checkpoint_id: null}}]) \
         console.log(JSON.stringify(m.runnableConfig(c).configurable));"
    );
    let node = std::env::var_os("CHECKPOINT_BRIDGE_NODE").unwrap_or_else(|| "node".into());
    let out =
        std::process::Command::new(node).args(["--input-type=module", "-e", &script]).output().expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect::<Vec<_>>();
    let want = [
        r#"{"thread_id":"t"}"#,
        r#"{"checkpoint_ns":"x","checkpoint_id":"c"}"#,
        r#"{"thread_id":"t","checkpoint_ns":""}"#,
    ];
    assert_eq!(lines, want);
}
