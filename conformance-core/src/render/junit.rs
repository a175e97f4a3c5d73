//! The JUnit XML report, through `quick-junit`.
//!
//! Layout (one `<testcase>` per spec case, so a CI test view lists the same cases as
//! `cargo test`):
//!
//! ```text
//! <testsuites name="{registration}" tests=.. failures=.. errors=.. time=..>
//!   <testsuite name="{registration}">              run facts; an <error> case if setup failed
//!     <properties> conformance_level, capabilities, strict, strict_level, tests_not_strict, kit_version,
//!                  schema_version, warning* </properties>
//!   </testsuite>
//!   <testsuite name="{registration}::{capability}"> one per capability that has cases
//!     <properties> kind, status, skip_reason? </properties>
//!     <testcase name="{registration}::{capability}::{case}" classname="{registration}::{capability}" time=..>
//!       <failure type="failure" message="first line">full message</failure>    failed
//!       <skipped type="skipped|not_implemented" message="reason"/>             not run
//!     </testcase>
//!   </testsuite>
//! </testsuites>
//! ```

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::report::{Outcome, Report};

/// The error of [`render_junit`] (quick-junit's serialisation error).
pub use quick_junit::SerializeError as JunitError;

/// The longest `message` attribute; the whole message is always in the element's text.
const MESSAGE_ATTR_MAX: usize = 240;

/// Renders `report` as JUnit XML: a suite per capability with one test case per spec case
/// (named like the `checkpointer_test!` trial, `{registration}::{capability}::{case}`); a
/// failed case carries a `<failure>` whose `message` attribute is the first line of the
/// failure message and whose text is the whole message; a case not run is `<skipped>`,
/// with `type="not_implemented"` or `type="skipped"` and the reason as `message`. A run
/// whose lifespan setup failed gets an `<error>` case `{registration}::lifespan::setup`.
///
/// # Errors
/// [`JunitError`] if quick-junit cannot serialise the document (it writes to memory, so
/// in practice never).
pub fn render_junit(report: &Report) -> Result<String, JunitError> {
    let reg = report.checkpointer_name.as_str();
    let mut junit = quick_junit::Report::new(reg);
    junit.set_time(ms(report.duration_ms));

    let mut run = TestSuite::new(reg);
    run.add_property(Property::new("conformance_level", report.conformance_level.as_str()));
    run.add_property(Property::new(
        "capabilities",
        format!("{}/{}", report.capabilities_passed, report.capabilities_detected),
    ));
    // CONTRACT §5: the level on MUST rules (or on both under --strict), and the strict level.
    run.add_property(Property::new("strict", report.strict.to_string()));
    run.add_property(Property::new("strict_level", report.strict_level().as_str()));
    run.add_property(Property::new("tests_not_strict", report.not_strict_count().to_string()));
    run.add_property(Property::new("kit_version", report.kit_version.as_str()));
    run.add_property(Property::new("schema_version", report.schema_version.to_string()));
    for f in &report.declared_lacks {
        run.add_property(Property::new("declared_lack", f.name()));
    }
    for w in &report.warnings {
        run.add_property(Property::new("warning", w.as_str()));
    }
    if let Some(e) = &report.setup_error {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("setup_error").set_message(first_line(e)).set_description(e.as_str());
        let mut case = TestCase::new(format!("{reg}::lifespan::setup"), status);
        case.set_classname(format!("{reg}::lifespan"));
        run.add_test_case(case);
    }
    junit.add_test_suite(run);

    for (cap, result) in &report.results {
        let cases: Vec<_> = report.tests.iter().filter(|t| t.capability == *cap).collect();
        if cases.is_empty() {
            continue;
        }
        let suite_name = format!("{reg}::{cap}");
        let mut suite = TestSuite::new(suite_name.as_str());
        suite.set_time(ms(result.duration_ms));
        suite.add_property(Property::new("kind", kind_name(cap.is_base())));
        suite.add_property(Property::new("status", status_name(result.status)));
        if let Some(r) = &result.skip_reason {
            suite.add_property(Property::new("skip_reason", r.as_str()));
        }
        for t in cases {
            let message = t.message.as_deref().unwrap_or("");
            let status = match t.outcome {
                Outcome::Passed => TestCaseStatus::success(),
                // Passed, not strict: a success with the message as its output, unless the
                // run was --strict, where it counts as the failure it is there.
                Outcome::NotStrict if !report.strict => TestCaseStatus::success(),
                Outcome::NotStrict => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_type("not_strict").set_message(first_line(message)).set_description(message);
                    s
                }
                Outcome::Failed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_type("failure").set_message(first_line(message)).set_description(message);
                    s
                }
                Outcome::Skipped | Outcome::NotImplemented | Outcome::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    let ty = match t.outcome {
                        Outcome::NotImplemented => "not_implemented",
                        Outcome::NotRun => "not_run",
                        _ => "skipped",
                    };
                    s.set_type(ty).set_message(first_line(message));
                    s
                }
            };
            let mut case = TestCase::new(format!("{reg}::{cap}::{}", t.name), status);
            case.set_classname(suite_name.as_str());
            // MUST is the default; a SHOULD case says so.
            if t.strength == crate::Strength::Should {
                case.add_property(Property::new("strength", t.strength.as_str()));
            }
            if t.outcome == Outcome::NotStrict {
                case.add_property(Property::new("outcome", "not_strict"));
                if !report.strict {
                    case.set_system_out(format!("passed, not strict (a SHOULD rule): {message}"));
                }
            }
            if matches!(t.outcome, Outcome::Passed | Outcome::Failed | Outcome::NotStrict) {
                case.set_time(ms(t.duration_ms));
            }
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    junit.to_string()
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64((v / 1e3).max(0.0))
}

fn kind_name(base: bool) -> &'static str {
    if base {
        "base"
    } else {
        "extended"
    }
}

/// The serde name of a status (`passed`, `not_implemented`, ...).
fn status_name(s: crate::report::CapabilityStatus) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The first line of `s`, cut to [`MESSAGE_ATTR_MAX`] characters (with `…` when cut).
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let more = s.lines().nth(1).is_some();
    if line.chars().count() > MESSAGE_ATTR_MAX {
        let cut: String = line.chars().take(MESSAGE_ATTR_MAX).collect();
        format!("{cut}…")
    } else if more {
        format!("{line} …")
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::test_support::sample_report;

    #[test]
    fn one_testcase_per_case_with_failures_and_skips() {
        let report = sample_report();
        let xml = render_junit(&report).unwrap();
        let doc = roxmltree::Document::parse(&xml).expect("the JUnit report parses as XML");
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        assert_eq!(cases.len(), report.tests.len(), "one testcase per spec case");
        for (node, t) in cases.iter().zip(&report.tests) {
            assert_eq!(node.attribute("name"), Some(format!("mem::{}", t.id).as_str()));
            assert_eq!(node.attribute("classname"), Some(format!("mem::{}", t.capability).as_str()));
            let failure = node.children().find(|n| n.has_tag_name("failure"));
            let skipped = node.children().find(|n| n.has_tag_name("skipped"));
            match t.outcome {
                Outcome::Passed => assert!(failure.is_none() && skipped.is_none(), "{}", t.id),
                Outcome::NotStrict => {
                    assert!(
                        failure.is_none() && skipped.is_none(),
                        "not strict is a success unless --strict: {}",
                        t.id
                    );
                    let out = node.children().find(|n| n.has_tag_name("system-out")).and_then(|n| n.text());
                    assert!(out.is_some_and(|o| o.contains("not strict")), "{}: {out:?}", t.id);
                }
                Outcome::Failed => {
                    let f = failure.expect("a failed case has <failure>");
                    assert_eq!(f.text(), t.message.as_deref(), "the whole message is the text");
                    assert_eq!(f.attribute("message"), Some(first_line(t.message.as_deref().unwrap()).as_str()));
                }
                Outcome::Skipped | Outcome::NotImplemented | Outcome::NotRun => {
                    let s = skipped.expect("a case not run has <skipped>");
                    assert_eq!(s.attribute("message"), t.message.as_deref());
                }
            }
        }
        let root = doc.root_element();
        assert_eq!(root.attribute("tests"), Some(report.tests.len().to_string().as_str()));
        assert_eq!(root.attribute("failures"), Some("1"));
    }

    #[test]
    fn setup_error_is_an_error_case() {
        let mut report = sample_report();
        report.setup_error = Some("the lifespan setup failed: no server".into());
        let xml = render_junit(&report).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let err = doc.descendants().find(|n| n.has_tag_name("error")).expect("an <error> element");
        assert_eq!(err.attribute("message"), Some("the lifespan setup failed: no server"));
        assert_eq!(doc.root_element().attribute("errors"), Some("1"));
    }

    #[test]
    fn first_line_cuts_long_and_multi_line_messages() {
        assert_eq!(first_line("a\nb"), "a …");
        assert_eq!(first_line("plain"), "plain");
        assert_eq!(first_line(&"x".repeat(300)).chars().count(), MESSAGE_ATTR_MAX + 1);
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(render_junit(&sample_report()).unwrap());
    }
}
