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
        run: fails_its_rule,
        ..durability_case()
    };
    let fine = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let r = execute_case(&fine, &should);
    assert_eq!(r.outcome, Outcome::NotStrict, "{:?}", r.message);
    assert_eq!(r.strength, Strength::Should);
    let broken = Registration::new("broken", || async { Err::<Fixture, _>("no server".into()) });
    let r = execute_case(&broken, &should);
    assert_eq!(r.outcome, Outcome::Failed, "a failed factory is no verdict on the rule: {:?}", r.message);
    let must = SpecCase { strength: Strength::Must, ..should };
    assert_eq!(execute_case(&fine, &must).outcome, Outcome::Failed);
}

#[test]
fn durability_not_implemented_names_with_reopen_not_a_probe() {
    let case = durability_case();
    let m = not_run(&case, &Planned::NotImplemented).message.unwrap_or_default();
    assert!(m.contains("Fixture::with_reopen") && !m.contains("probe"), "{m}");
    let put = SpecCase { capability: Capability::Put, ..case };
    let m = not_run(&put, &Planned::NotImplemented).message.unwrap_or_default();
    assert!(m.contains("probe answered Unsupported"), "{m}");
}

#[test]
fn open_location_uses_open_at_or_says_it_is_missing() {
    let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(reg.open_location("here")).err().unwrap();
    assert!(err.to_string().contains("no open_at"), "{err}");
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
