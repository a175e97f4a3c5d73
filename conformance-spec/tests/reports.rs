//! The reports of a real run over the whole catalog: JUnit XML with one `<testcase>` per
//! spec case, JSON that reads back, and the markdown summary naming every case.

use conformance_core::render::{render_junit, render_markdown};
use conformance_core::{CheckpointSaver, Fixture, Outcome, Registration, RunOptions};

/// A saver that implements nothing: every case is planned "not implemented" (the cases of
/// a base capability then fail, CONTRACT §5).
struct Nothing;
impl CheckpointSaver for Nothing {}

fn report() -> conformance_core::Report {
    let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    conformance_spec::validate(&reg, &RunOptions::default())
}

#[test]
fn junit_has_one_testcase_per_spec_case() {
    let report = report();
    let catalog = conformance_spec::catalog();
    assert_eq!(report.tests.len(), catalog.len());
    let xml = render_junit(&report).expect("renders");
    let doc = roxmltree::Document::parse(&xml).expect("the JUnit report is well-formed XML");
    let names: Vec<&str> =
        doc.descendants().filter(|n| n.has_tag_name("testcase")).filter_map(|n| n.attribute("name")).collect();
    let want: Vec<String> = catalog.iter().map(|c| format!("nothing::{}::{}", c.capability, c.name)).collect();
    assert_eq!(names, want, "one testcase per spec case, in catalog order, named like the trials");
    for (case, spec) in doc.descendants().filter(|n| n.has_tag_name("testcase")).zip(&catalog) {
        let tag = if spec.capability.is_base() { "failure" } else { "skipped" };
        let node = case.children().find(|n| n.has_tag_name(tag)).unwrap_or_else(|| panic!("{}: no <{tag}>", spec.id()));
        let want = if spec.capability.is_base() { "failure" } else { "not_implemented" };
        assert_eq!(node.attribute("type"), Some(want));
        assert!(node.attribute("message").is_some_and(|m| m.contains("is not implemented")));
    }
}

#[test]
fn json_reads_back_and_markdown_names_every_case() {
    let report = report();
    let want = |t: &conformance_core::CaseResult| {
        if t.capability.is_base() {
            Outcome::Failed
        } else {
            Outcome::NotImplemented
        }
    };
    assert!(report.tests.iter().all(|t| t.outcome == want(t)));
    assert_eq!(report.conformance_level.as_str(), "NONE");
    let back: conformance_core::Report = serde_json::from_str(&report.to_json()).expect("the JSON reads back");
    assert_eq!(back, report);
    let md = render_markdown(&report);
    for t in &report.tests {
        assert!(md.contains(&format!("| `{}` |", t.name)), "{} missing from the markdown", t.id);
    }
}

/// Issue 40 row 10: a factory that fails failed every case with one message, and the
/// terminal report printed it once per case (215 times); it is said once, with the cases
/// counted.
#[test]
fn one_message_of_many_cases_is_said_once() {
    let reg = Registration::new("broken", || async {
        Err::<Fixture, conformance_core::BoxError>("no database for you".into())
    });
    let report = conformance_spec::validate(&reg, &RunOptions::default());
    let count = |outcome: Outcome| report.tests.iter().filter(|t| t.outcome == outcome).count();
    let (failed, not_strict) = (count(Outcome::Failed), count(Outcome::NotStrict));
    assert!(failed > 100, "{failed} failed");
    let text = conformance_core::render::render_terminal(&report);
    // Once among the failures, once among the SHOULD cases "passed, not strict" (Detection's
    // warning names it once more, as the probe's failure).
    let said = usize::from(failed > 0) + usize::from(not_strict > 0);
    assert_eq!(text.matches("the factory failed: no database for you").count(), said, "{text}");
    assert!(text.contains(&format!("{failed} cases, one message: ")), "{text}");
}
