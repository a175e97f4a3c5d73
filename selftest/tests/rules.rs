//! The trace from the rules of docs/contract.md to the mutants that break them, and
//! `docs/rules.md` (rule -> cases -> mutants) kept equal to its rendering. The trace from
//! rules to cases is checked in conformance-spec (`rules::tests`).

use std::path::PathBuf;

use conformance_core::Strength;
use conformance_selftest::rules_doc::rules_markdown;
use conformance_selftest::{untraced_mutants, Cover, Mutant, Rule, MUTANTS, RULES};

#[test]
fn every_rule_has_a_mutant_and_every_mutant_a_rule() {
    let problems = untraced_mutants(RULES, MUTANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A rule planted without a mutant, a mutant naming no rule and one naming an unknown rule
/// are reported.
#[test]
fn planted_rule_without_mutant_is_reported() {
    let mut rules = RULES.to_vec();
    rules.push(Rule {
        id: "planted.rule",
        section: "§9 nowhere",
        strength: Strength::Must,
        text: "nothing breaks it",
        first: false,
    });
    assert_eq!(untraced_mutants(&rules, MUTANTS), ["rule planted.rule has no mutant"]);
    let mut mutants: Vec<Mutant> = MUTANTS.to_vec();
    mutants.push(Mutant { name: "no_rule", covers: &[Cover::Scenario("S01")], ..MUTANTS[0] });
    mutants.push(Mutant { name: "unknown_rule", covers: &[Cover::Rule("no.such_rule")], ..MUTANTS[0] });
    let problems = untraced_mutants(RULES, &mutants);
    assert!(problems.contains(&"mutant no_rule names no rule (add a Cover::Rule)".to_string()), "{problems:?}");
    assert!(problems.contains(&"mutant unknown_rule names an unknown rule no.such_rule".to_string()), "{problems:?}");
}

/// A SHOULD mutant breaks at least one SHOULD rule, a MUST mutant at least one MUST rule
/// (CONTRACT §5 "Strength of a rule"): the strengths of the catalogs agree.
#[test]
fn mutant_strength_matches_a_rule_it_breaks() {
    let mut wrong = Vec::new();
    for m in MUTANTS {
        let agrees = m.covers.iter().any(|c| match c {
            Cover::Rule(r) => RULES.iter().any(|rule| rule.id == *r && rule.strength == m.strength),
            _ => false,
        });
        if !agrees {
            wrong.push(format!("{} ({:?}) breaks no {:?} rule", m.name, m.strength, m.strength));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `docs/rules.md` is what [`rules_markdown`] renders. Set `UPDATE_RULES=1` to rewrite it.
#[test]
fn rules_doc_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let want = rules_markdown(RULES, &conformance_spec::catalog(), MUTANTS);
    if std::env::var_os("UPDATE_RULES").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    let line = have
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .map_or(have.lines().count().min(want.lines().count()), |i| i)
        + 1;
    assert!(
        have == want,
        "{} is stale (first difference at line {line}); regenerate: UPDATE_RULES=1 cargo test -p conformance-selftest --test rules",
        path.display()
    );
}

/// Every class of the adversarial data has a mutant in [`CLASS_MUTANTS`], and every name
/// there is a mutant of the catalog (issue 36: "for each class, a mutant that breaks only
/// that class").
#[test]
fn every_adversarial_class_has_a_mutant() {
    use conformance_selftest::classes::{CLASS_MUTANTS, LENGTHS, TIMESTAMPS};
    use conformance_spec::data::adversarial::Class;
    let mut wanted: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
    wanted.extend([TIMESTAMPS, LENGTHS]);
    for class in wanted {
        let names = CLASS_MUTANTS.iter().find(|(c, _)| *c == class).map(|(_, n)| *n).unwrap_or_default();
        assert!(!names.is_empty(), "class {class} has no mutant in CLASS_MUTANTS");
    }
    for (class, names) in CLASS_MUTANTS {
        for name in *names {
            assert!(MUTANTS.iter().any(|m| m.name == *name), "class {class}: no mutant named {name}");
        }
    }
}
