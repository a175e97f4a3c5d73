//! The runner's unit tests: one case's execution, its facts, its strength, its reasons.
use super::*;
use crate::{CaseFuture, Fixture};

struct Nothing;
impl CheckpointSaver for Nothing {}

fn records_facts(ctx: CaseEnv) -> CaseFuture {
    Box::pin(async move {
        ctx.fact("kills", 20);
        ctx.fact("seed", "42");
        match ctx.location() {
            Some("mem://x") if ctx.registration_name() == "nothing" => Ok(()),
            other => Err(crate::Failure::new(format!("location: got {other:?}"))),
        }
    })
}

/// A durability case that records facts and checks the location.
fn durability_case() -> SpecCase {
    SpecCase::new(Capability::Durability, "records_facts", records_facts)
}

#[test]
fn case_facts_reach_the_case_result_and_the_report() {
    let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing).with_location("mem://x")) });
    let case = durability_case();
    let r = execute_case(&reg, &case);
    assert_eq!(r.outcome, Outcome::Passed, "{:?}", r.message);
    assert_eq!(r.facts.get("durability.kills"), Some(&serde_json::json!(20)));
    let report = build_report(&reg, &Detection::default(), None, vec![r], Duration::ZERO, None);
    assert_eq!(report.facts.get("durability.seed"), Some(&serde_json::json!("42")));
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["facts"]["durability.kills"], 20);
    assert_eq!(json["tests"][0]["facts"]["durability.kills"], 20);
}

fn fails_its_rule(_: CaseEnv) -> CaseFuture {
    Box::pin(async { Err(crate::Failure::new("get_tuple(...): metadata: expected a, got b")) })
}

#[test]
fn only_a_should_cases_own_verdict_is_not_strict() {
    let should = SpecCase {
        capability: Capability::List,
        name: "should_rule",
        strength: Strength::Should,
        rules: &["list.order", "list.limit"],
        run: fails_its_rule,
        ..durability_case()
    };
    let fine = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let r = execute_case(&fine, &should);
    assert_eq!(r.outcome, Outcome::NotStrict, "{:?}", r.message);
    assert_eq!(r.strength, Strength::Should);
    // The rules it checks go into the result and the JSON report, so a failure names them.
    assert_eq!(r.rules, ["list.order", "list.limit"]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["rules"], serde_json::json!(["list.order", "list.limit"]));
    let broken = Registration::new("broken", || async { Err::<Fixture, _>("no server".into()) });
    let r = execute_case(&broken, &should);
    assert_eq!(r.outcome, Outcome::Failed, "a failed factory is no verdict on the rule: {:?}", r.message);
    let must = SpecCase { strength: Strength::Must, ..should };
    assert_eq!(execute_case(&fine, &must).outcome, Outcome::Failed);
}

#[test]
fn durability_not_implemented_names_the_storage_not_a_probe() {
    let case = durability_case();
    let m = not_run(&case, &Planned::NotImplemented).message.unwrap_or_default();
    assert!(m.contains("Registration::persistent") && !m.contains("probe"), "{m}");
    let put = SpecCase { capability: Capability::Put, ..case };
    let m = not_run(&put, &Planned::NotImplemented).message.unwrap_or_default();
    assert!(m.contains("probe answered Unsupported"), "{m}");
}

#[test]
fn open_location_uses_open_at_or_says_it_is_missing() {
    let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(reg.open_location("here")).err().unwrap();
    assert!(err.to_string().contains("opens no location in another process"), "{err}");
    let reg = reg.open_at(|loc| async move {
        if loc == "here" {
            Ok(Fixture::new(Nothing).with_location(loc))
        } else {
            Err(format!("unexpected location {loc}").into())
        }
    });
    let fixture = rt.block_on(reg.open_location("here")).unwrap();
    assert_eq!(fixture.location(), Some("here"));
}

fn finds_a_must_rule_broken(_: CaseEnv) -> CaseFuture {
    Box::pin(async { Err(crate::Failure::must("get_tuple(...): channel_values[\"a\"]: expected \"x\", got \"y\"")) })
}

fn should_case(run: fn(CaseEnv) -> CaseFuture) -> SpecCase {
    SpecCase { capability: Capability::Put, name: "should_rule", strength: Strength::Should, run, ..durability_case() }
}

#[test]
fn a_must_rule_broken_inside_a_should_case_fails_it() {
    let fine = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let r = execute_case(&fine, &should_case(finds_a_must_rule_broken));
    assert_eq!(r.outcome, Outcome::Failed, "{:?}", r.message);
}

#[test]
fn an_instance_declaring_other_limits_than_detection_fails_the_case() {
    let reg = Registration::new("dodge", || async { Ok(Fixture::new(Nothing).lacking(crate::Feature::WideNumbers)) });
    let case = should_case(|_| Box::pin(async { Ok(()) }));
    let mut detection = Detection::default();
    let r = execute_case_repeated(&reg, Some(&detection), &case, 1);
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(r.message.as_deref().unwrap_or("").contains("[wide_numbers]"), "{:?}", r.message);
    detection.lacks = [crate::Feature::WideNumbers].into();
    assert_eq!(execute_case_repeated(&reg, Some(&detection), &case, 1).outcome, Outcome::Passed);
    // Without detection there is nothing to hold the instance to.
    assert_eq!(execute_case(&reg, &case).outcome, Outcome::Passed);
}

#[test]
fn strict_reports_agree_with_their_level_and_old_reports_keep_theirs() {
    let fine = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let r = execute_case(&fine, &should_case(fails_its_rule));
    let detected =
        Detection { detected: Capability::ALL.iter().map(|c| (*c, c.is_base())).collect(), ..Detection::default() };
    let report = build_report(&fine, &detected, None, vec![r], Duration::ZERO, None);
    assert_eq!(report.results[&Capability::Put].passed, Some(true));
    let strict = report.clone().with_strict(true);
    let put = &strict.results[&Capability::Put];
    assert_eq!((put.passed, put.status), (Some(false), CapabilityStatus::Failed));
    assert_eq!(put.failures.len(), 1, "{:?}", put.failures);
    assert_eq!(strict.capabilities_passed, report.capabilities_passed - 1);
    assert_eq!(strict.conformance_level, strict.strict_level());
    assert_eq!(strict.clone().with_strict(true), strict, "judging a strict report again changes nothing");
    // A schema-1 report has no strict_level: its level counted every case.
    let mut json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    json.as_object_mut().unwrap().remove("strict_level");
    let old: Report = serde_json::from_value(json).unwrap();
    assert_eq!(old.strict_level(), old.conformance_level);
}

#[test]
fn a_capability_whose_only_cases_are_should_cases_not_run_for_a_limit_is_not_failed() {
    let lacking = Registration::new("ns", || async { Ok(Fixture::new(Nothing).lacking(crate::Feature::Namespaces)) });
    let case = SpecCase { uses: &[crate::Feature::Namespaces], ..should_case(fails_its_rule) };
    let r = execute_case(&lacking, &case);
    assert_eq!(r.outcome, Outcome::NotRun, "{:?}", r.message);
    let detected = Detection { detected: [(Capability::Put, true)].into(), ..Detection::default() };
    let report = build_report(&lacking, &detected, None, vec![r], Duration::ZERO, None);
    assert_eq!(report.results[&Capability::Put].status, CapabilityStatus::Passed);
    assert_eq!(report.results[&Capability::Put].passed_strict, Some(true));
}

/// Refuses every `get_tuple` unsent, as a bridged saver refuses an operation that got its
/// children stopped as stuck: the error is the kit's, not the saver's.
struct Refusing;

#[async_trait::async_trait]
impl CheckpointSaver for Refusing {
    async fn get_tuple(
        &self,
        _: &crate::types::CheckpointConfig,
    ) -> Result<Option<crate::types::CheckpointTuple>, crate::CheckpointError> {
        if let Some(note) = crate::CallNote::current() {
            note.refused("not sent: get_tuple was the call in flight of 2 children stopped as stuck");
        }
        Err(crate::CheckpointError::storage_msg("not sent"))
    }
}

/// Passes on any error, as a case that expects the saver to refuse an input does.
fn passes_on_an_error(ctx: CaseEnv) -> CaseFuture {
    Box::pin(async move {
        match ctx.saver.get_tuple(&crate::types::CheckpointConfig::new("t")).await {
            Err(_) => Ok(()),
            Ok(_) => Err(crate::Failure::new("expected an error")),
        }
    })
}

#[test]
fn a_case_with_a_call_the_kit_did_not_send_is_not_judged() {
    let reg = Registration::new("refusing", || async { Ok(Fixture::new(Refusing)) });
    let case = SpecCase::new(Capability::GetTuple, "passes_on_an_error", passes_on_an_error);
    let r = execute_case(&reg, &case);
    assert_eq!(r.outcome, Outcome::NotRun, "{:?}", r.message);
    let message = r.message.unwrap_or_default();
    assert!(message.starts_with("not judged: a call of it was not sent to the saver: not sent"), "{message}");
}
