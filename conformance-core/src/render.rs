//! The renderers of a [`Report`]: the terminal report ([`render_terminal`], in the spirit of
//! the upstream kit's `print_report()`: a base section, an extended section, failures, and
//! `Result: LEVEL (passed/detected)`), JUnit XML ([`render_junit`]) and a markdown summary
//! ([`render_markdown`], [`append_step_summary`]). The JSON report is [`Report::to_json`].

use std::fmt::Write;

use owo_colors::{OwoColorize, Stream};

use crate::report::{CapabilityResult, CapabilityStatus, CaseResult, Level, Outcome, Report};
use crate::Capability;

pub(crate) mod colour;
mod junit;
mod markdown;

pub use junit::{render_junit, JunitError};
pub use markdown::{append_step_summary, render_markdown, STEP_SUMMARY_ENV};

const BORDER: &str = "====================================================";

/// Renders `report` for a terminal. Colour is used only when stdout supports it and
/// `NO_COLOR` is unset or empty (no-color.org; owo-colors' `supports-colors` otherwise).
pub fn render_terminal(report: &Report) -> String {
    colour::init();
    let mut s = String::new();
    let _ = writeln!(s, "\n  {BORDER}");
    let _ = writeln!(s, "    Checkpointer Validation: {}", report.checkpointer_name);
    let _ = writeln!(s, "  {BORDER}");
    if let Some(e) = &report.setup_error {
        let _ = writeln!(s, "    {}", format!("Run not started: {e}").if_supports_color(Stream::Stdout, |t| t.red()));
    }
    if let Some(line) = bridge_line(report) {
        let _ = writeln!(s, "    {line}\n");
    }
    for (title, base) in [("BASE CAPABILITIES", true), ("EXTENDED CAPABILITIES", false)] {
        let _ = writeln!(s, "    {title}");
        for (cap, r) in report.results.iter().filter(|(c, _)| c.is_base() == base) {
            let _ = writeln!(s, "      {}", row(*cap, r, report));
        }
        let _ = writeln!(s);
    }
    let failed: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Failed).collect();
    if !failed.is_empty() {
        if report.failure_clusters.len() > 1 {
            let _ = writeln!(s, "    FAILURE CLUSTERS (capability · field that differed, largest first)");
            for c in report.failure_clusters.iter().take(10) {
                let n = c.cases.len();
                let _ = writeln!(s, "      {} · {}: {n} case{}", c.capability, c.field, if n == 1 { "" } else { "s" });
            }
            if report.failure_clusters.len() > 10 {
                let _ = writeln!(
                    s,
                    "      … and {} more (all in the JSON report's failure_clusters)",
                    report.failure_clusters.len() - 10
                );
            }
            let _ = writeln!(s);
        }
        write_rules_broken(&mut s, &failed);
        let _ = writeln!(s, "    FAILURES");
        write_by_message(&mut s, &failed, "✗".if_supports_color(Stream::Stdout, |x| x.red()).to_string());
        let _ = writeln!(s);
    }
    let not_strict: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).collect();
    if !not_strict.is_empty() {
        let _ = writeln!(
            s,
            "    PASSED, NOT STRICT (SHOULD rules: recommended by the contract, stricter than LangGraph's own savers; {})",
            if report.strict { "--strict counts them" } else { "they cost no level, --strict counts them" }
        );
        write_by_message(&mut s, &not_strict, "~".if_supports_color(Stream::Stdout, |x| x.yellow()).to_string());
        let _ = writeln!(s);
    }
    for w in &report.warnings {
        let _ = writeln!(s, "    {} {w}", "warning:".if_supports_color(Stream::Stdout, |x| x.yellow()));
    }
    let flaky: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.repeats.is_some_and(|r| r.nondeterministic()))
        .map(|t| t.id.as_str())
        .collect();
    if !flaky.is_empty() {
        let _ = writeln!(
            s,
            "    Nondeterministic: {} cases failed in some runs and passed in others: {}",
            flaky.len(),
            flaky.join(", ")
        );
    }
    let (p, f, k) = report.case_counts();
    let n = report.not_strict_count();
    let not_strict = if n > 0 { format!(", {n} passed not strict") } else { String::new() };
    let _ = writeln!(s, "    Tests: {p} passed{not_strict}, {f} failed, {k} not run  ({:.0} ms)", report.duration_ms);
    let mut level =
        format!("{} ({}/{})", report.conformance_level, report.capabilities_passed, report.capabilities_detected);
    if report.strict {
        level.push_str(" --strict: MUST and SHOULD rules");
    } else if n > 0 || report.strict_level() != report.conformance_level {
        level.push_str(&format!(" on MUST rules; {} counting SHOULD rules (--strict)", report.strict_level()));
    }
    let level = match report.conformance_level {
        Level::Full => level.if_supports_color(Stream::Stdout, |t| t.green()).to_string(),
        Level::BasePartial | Level::Base => level.if_supports_color(Stream::Stdout, |t| t.yellow()).to_string(),
        Level::None => level.if_supports_color(Stream::Stdout, |t| t.red()).to_string(),
    };
    let selected = selection_line(report);
    // A selection's level is low by construction (it needs every base capability): said on
    // the same line, so a passing one-case run does not read as a failure.
    let of_selection = if selected.is_some() { " (a selection: not a level, see below)" } else { "" };
    let _ = writeln!(s, "    Result: {level}{of_selection}");
    if let Some(selected) = selected {
        let _ = writeln!(s, "    {selected}");
    }
    let _ = writeln!(s, "  {BORDER}");
    s
}

/// How many rules [`write_rules_broken`] names.
const RULES_SHOWN: usize = 5;

/// `RULES BROKEN`: the contract rules (docs/rules.md ids) the failed cases check, the rule
/// with the most failed cases of its own capability first: a recorded trace checks many
/// rules at once, so a bug that fails every trace and a few cases of its method is named
/// by its method's rule, not by the traces' fields. Nothing when no failed case names a
/// rule.
fn write_rules_broken(s: &mut String, failed: &[&CaseResult]) {
    // rule -> (failed cases of a method's capability, failed cases of traces/properties)
    let mut counts: std::collections::BTreeMap<&str, (usize, usize)> = std::collections::BTreeMap::new();
    for t in failed {
        let property = matches!(t.capability, Capability::Traces | Capability::Concurrency | Capability::Durability);
        for rule in &t.rules {
            let c = counts.entry(rule.as_str()).or_default();
            if property {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
    }
    if counts.is_empty() {
        return;
    }
    let mut ranked: Vec<_> = counts.into_iter().collect();
    ranked.sort_by(|a, b| (b.1 .0, b.1 .1).cmp(&(a.1 .0, a.1 .1)).then(a.0.cmp(b.0)));
    let _ = writeln!(s, "    RULES BROKEN (docs/rules.md; most failed cases of the rule's own method first)");
    let cases = |n: usize| if n == 1 { "1 failed case".to_owned() } else { format!("{n} failed cases") };
    for (rule, (own, other)) in ranked.iter().take(RULES_SHOWN) {
        let said = match (*own, *other) {
            (own, 0) => format!("{} of its method", cases(own)),
            (0, other) => format!("{} of traces, concurrency or durability", cases(other)),
            (own, other) => format!("{} of its method, {other} of traces, concurrency or durability", cases(own)),
        };
        let _ = writeln!(s, "      {rule}: {said}");
    }
    if ranked.len() > RULES_SHOWN {
        let _ =
            writeln!(s, "      … and {} more (each case's rules are in the JSON report)", ranked.len() - RULES_SHOWN);
    }
    let _ = writeln!(s);
}

/// With a capability selection (`--capabilities`): what the selected capabilities did,
/// since the level needs every base capability (CONTRACT §5) and says little about a
/// selection.
fn selection_line(report: &Report) -> Option<String> {
    if !report.results.values().any(|r| r.status == CapabilityStatus::NotSelected) {
        return None;
    }
    let passed = |r: &CapabilityResult| if report.strict { r.passed_strict } else { r.passed };
    let ran: Vec<_> = report.results.values().filter(|r| passed(r).is_some()).collect();
    let ok = ran.iter().filter(|r| passed(r) == Some(true)).count();
    let verdict = if report.is_selection_success() {
        "every selected capability passed"
    } else {
        "not every selected capability passed"
    };
    Some(format!(
        "Selection: {verdict} ({ok}/{}); the level needs every base capability, run without --capabilities for it",
        ran.len()
    ))
}

/// Writes `cases` (each marked with `mark`) with their messages; cases that share one
/// message (a factory that fails fails them all) are one entry, said once with the cases
/// counted and three of their ids (issue 40 row 10: one message was printed 215 times).
fn write_by_message(s: &mut String, cases: &[&CaseResult], mark: String) {
    const SHOWN: usize = 3;
    for (message, group) in by_message(cases) {
        match group.as_slice() {
            [one] => {
                let _ = writeln!(s, "      {mark} {}", one.id);
            }
            many => {
                let mut ids: Vec<&str> = many.iter().take(SHOWN).map(|t| t.id.as_str()).collect();
                let more = format!("… and {} more (every one in the JSON report)", many.len().saturating_sub(SHOWN));
                if many.len() > SHOWN {
                    ids.push(&more);
                }
                let _ = writeln!(s, "      {mark} {} cases, one message: {}", many.len(), ids.join(", "));
            }
        }
        for line in message.lines() {
            let _ = writeln!(s, "          {line}");
        }
    }
}

/// The cases grouped by their message, in the order of each message's first case.
fn by_message<'a>(failed: &[&'a CaseResult]) -> Vec<(&'a str, Vec<&'a CaseResult>)> {
    let mut groups: Vec<(&str, Vec<&CaseResult>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for t in failed {
        let message = t.message.as_deref().unwrap_or("");
        match index.get(message) {
            Some(&i) => groups[i].1.push(t),
            None => {
                index.insert(message, groups.len());
                groups.push((message, vec![t]));
            }
        }
    }
    groups
}

fn row(cap: Capability, r: &CapabilityResult, report: &Report) -> String {
    let name = format!("{:<22}", cap.name());
    let total = r.tests_passed + r.tests_failed + r.tests_not_strict;
    let facts: Vec<String> = report
        .facts
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(&format!("{}.", cap.name())).map(|k| format!("{k}: {v}")))
        .collect();
    let facts = if facts.is_empty() { String::new() } else { format!(", {}", facts.join(", ")) };
    match r.status {
        CapabilityStatus::NoCases => format!("   {name} (no cases)"),
        CapabilityStatus::Passed => {
            let strict =
                if r.tests_not_strict > 0 { format!(", {} not strict", r.tests_not_strict) } else { String::new() };
            let counts = format!("({}/{} passed{strict}{}{facts})", r.tests_passed, total, not_run(cap, r, report));
            format!("{} {name} {counts}", "✅".if_supports_color(Stream::Stdout, |t| t.green()))
        }
        CapabilityStatus::Failed => format!(
            "{} {name} {}",
            "❌".if_supports_color(Stream::Stdout, |t| t.red()),
            format!(
                "({} failed, {}/{} passed{}{})",
                r.tests_failed,
                r.tests_passed,
                total,
                if r.tests_not_strict > 0 { format!(", {} not strict", r.tests_not_strict) } else { String::new() },
                not_run(cap, r, report)
            )
            .if_supports_color(Stream::Stdout, |t| t.red())
        ),
        CapabilityStatus::Incomplete => format!(
            "◐  {name} {}",
            format!(
                "(incomplete: {}/{} passed, {} not run{})",
                r.tests_passed,
                total,
                r.tests_skipped,
                needs(cap, report)
            )
            .if_supports_color(Stream::Stdout, |t| t.yellow())
        ),
        CapabilityStatus::NotImplemented if r.tests_failed > 0 => format!(
            "⊘  {name} {}",
            format!("(not implemented: its {} cases fail, a base capability is required)", r.tests_failed)
                .if_supports_color(Stream::Stdout, |t| t.red())
        ),
        CapabilityStatus::NotImplemented => format!("⊘  {name} (not implemented)"),
        CapabilityStatus::Skipped => {
            format!("⏭  {name} (skipped: {})", r.skip_reason.as_deref().unwrap_or("no reason given"))
        }
        CapabilityStatus::NotSelected => format!("   {name} (not selected)"),
    }
}

/// `", 3 not run: needs put_writes"` when some of a failed capability's cases did not run,
/// so that the row's counts add up to its cases.
fn not_run(cap: Capability, r: &CapabilityResult, report: &Report) -> String {
    if r.tests_skipped == 0 {
        String::new()
    } else {
        format!(", {} not run{}", r.tests_skipped, needs(cap, report))
    }
}

/// `": needs put_writes"`: the missing capabilities, and the features the saver declared
/// it lacks, named by `cap`'s cases not run.
fn needs(cap: Capability, report: &Report) -> String {
    let mut names: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.capability == cap && t.outcome == Outcome::NotRun)
        .filter_map(|t| {
            let m = t.message.as_deref()?;
            match m.strip_prefix(crate::run::NEEDS_PREFIX) {
                Some(need) => Some(need.trim().split(',').next().unwrap_or_default()),
                None => m.split("(feature `").nth(1)?.split('`').next(),
            }
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        String::new()
    } else {
        format!(": needs {}", names.join(", "))
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use crate::report::{CaseResult, Outcome, Report};
    use crate::run::{build_report, Detection};
    use crate::{Capability, CheckpointSaver, Fixture, Registration};

    struct Nothing;
    impl CheckpointSaver for Nothing {}

    /// A report with passes, a multi-line failure, a not-implemented and a skipped
    /// capability, and fixed durations (so snapshots are stable).
    pub(crate) fn sample_report() -> Report {
        let reg = Registration::new("mem", || async { Ok(Fixture::new(Nothing)) })
            .skip(Capability::Prune, "needs a server | not here");
        let not_detected: BTreeSet<_> = [
            Capability::DeleteForRuns,
            Capability::CopyThread,
            Capability::DeltaChannelHistory,
            Capability::Durability,
        ]
        .into();
        let detection = Detection {
            detected: Capability::ALL.iter().map(|c| (*c, !not_detected.contains(c))).collect(),
            warnings: vec!["the cleanup after probing failed: disk full".into()],
            ..Detection::default()
        };
        // Built through serde so that fields with a serde default may be added to
        // `CaseResult` without touching this sample.
        let case = |cap: Capability, name: &str, outcome: Outcome, message: Option<&str>, ms: f64| -> CaseResult {
            serde_json::from_value(serde_json::json!({
                "id": format!("{cap}::{name}"),
                "capability": cap,
                "name": name,
                "outcome": outcome,
                "message": message,
                "duration_ms": ms,
            }))
            .expect("a valid CaseResult")
        };
        let tests = vec![
            case(Capability::Put, "returns_config_of_stored_checkpoint", Outcome::Passed, None, 1.5),
            case(Capability::Put, "roundtrip_channel_values", Outcome::Passed, None, 2.0),
            case(
                Capability::PutWrites,
                "regular_write_first_wins",
                Outcome::Failed,
                Some("get_tuple(thread=t1, ns=\"\", id=c2): pending_writes[0].value: expected \"v1\", got \"v2\"\nwrites: [(task-1, a|b, <json>)]"),
                3.25,
            ),
            case(Capability::PutWrites, "empty_list_is_noop", Outcome::Passed, None, 1.0),
            case(Capability::GetTuple, "latest_by_id", Outcome::Passed, None, 1.0),
            case(Capability::List, "newest_first", Outcome::Passed, None, 1.0),
            {
                let mut c = case(
                    Capability::List,
                    "equal_ids_ordered_by_namespace",
                    Outcome::NotStrict,
                    Some("list(thread=t1): [0].config.checkpoint_ns: expected \"\", got \"child:1\""),
                    1.0,
                );
                c.strength = crate::Strength::Should;
                c
            },
            case(Capability::DeleteThread, "removes_every_namespace", Outcome::Passed, None, 1.0),
            case(
                Capability::DeleteForRuns,
                "deletes_listed_runs",
                Outcome::NotImplemented,
                Some("delete_for_runs is not implemented"),
                0.0,
            ),
            case(Capability::Prune, "keep_latest", Outcome::Skipped, Some("needs a server | not here"), 0.0),
        ];
        build_report(&reg, &detection, None, tests, Duration::from_millis(42), None)
    }
}

/// "Judged through the bridge: CLASS from DISTRIBUTION VERSION, its SIDE methods", from a
/// bridged run's facts (`bridge.class`, `bridge.side`, `bridge.module`,
/// `bridge.distribution`, `bridge.version`); the module instead of the distribution when no
/// installed distribution provides it. None for a run not made through the bridge.
fn bridge_line(report: &Report) -> Option<String> {
    let fact = |k: &str| report.facts.get(k).and_then(|v| v.as_str());
    let (class, side) = (fact("bridge.class")?, fact("bridge.side")?);
    let origin = match (fact("bridge.distribution"), fact("bridge.version"), fact("bridge.module")) {
        (Some(d), Some(v), _) => format!(" from {d} {v}"),
        (Some(d), None, _) => format!(" from {d}"),
        (None, _, Some(m)) => format!(" from module {m} (of no installed distribution)"),
        (None, _, None) => String::new(),
    };
    Some(format!("Judged through the bridge: {class}{origin}, its {side} methods"))
}

#[cfg(test)]
mod tests {
    use super::{bridge_line, row};
    use crate::render::test_support::sample_report;
    use crate::report::{CapabilityStatus, Outcome};
    use crate::Capability;

    #[test]
    fn a_failed_row_counts_its_cases_not_run() {
        let mut report = sample_report();
        let r = report.results.get(&Capability::PutWrites).cloned().expect("put_writes in the sample");
        assert_eq!(r.status, CapabilityStatus::Failed);
        assert!(
            !row(Capability::PutWrites, &r, &report).contains("not run"),
            "{}",
            row(Capability::PutWrites, &r, &report)
        );
        let mut not_run = report.tests.iter().find(|t| t.capability == Capability::PutWrites).cloned().expect("a case");
        not_run.outcome = Outcome::NotRun;
        not_run.message = Some(format!("{} list, not implemented", crate::run::NEEDS_PREFIX));
        report.tests.push(not_run);
        let mut r = r;
        r.tests_skipped = 1;
        let shown = row(Capability::PutWrites, &r, &report);
        assert!(shown.contains("(1 failed, 1/2 passed, 1 not run: needs list)"), "{shown}");
    }

    #[test]
    fn the_bridge_line_names_the_savers_distribution_or_module() {
        let mut report = sample_report();
        assert_eq!(bridge_line(&report), None);
        for (k, v) in
            [("bridge.class", "my_savers.LegacySaver"), ("bridge.side", "sync"), ("bridge.module", "my_savers")]
        {
            report.facts.insert(k.into(), v.into());
        }
        assert_eq!(
            bridge_line(&report).as_deref(),
            Some(
                "Judged through the bridge: my_savers.LegacySaver from module my_savers (of no installed distribution), \
                 its sync methods"
            )
        );
        report.facts.insert("bridge.distribution".into(), "my-savers".into());
        report.facts.insert("bridge.version".into(), "2.0.1".into());
        let line = bridge_line(&report).unwrap_or_default();
        assert_eq!(line, "Judged through the bridge: my_savers.LegacySaver from my-savers 2.0.1, its sync methods");
        assert!(super::render_terminal(&report).contains(&line));
    }

    /// A bug that fails every trace and two cases of its method is named by its method's
    /// rule first, not by a rule the traces check on the side.
    #[test]
    fn rules_broken_rank_the_methods_own_cases_first() {
        let failed_with = |cap: Capability, name: &str, rules: &[&str]| {
            let mut t = sample_report().tests[2].clone();
            (t.capability, t.name, t.id) = (cap, name.to_owned(), format!("{cap}::{name}"));
            t.rules = rules.iter().map(|r| (*r).to_owned()).collect();
            t
        };
        let mut cases = vec![
            failed_with(Capability::GetTuple, "without_id_returns_greatest_id", &["get_tuple.latest"]),
            failed_with(Capability::GetTuple, "latest_after_fork", &["get_tuple.latest"]),
        ];
        for i in 0..5 {
            cases.push(failed_with(Capability::Traces, &format!("t{i}"), &["put.stored", "get_tuple.latest"]));
        }
        let mut s = String::new();
        super::write_rules_broken(&mut s, &cases.iter().collect::<Vec<_>>());
        let lines: Vec<&str> = s.lines().map(str::trim).collect();
        assert_eq!(
            lines[1], "get_tuple.latest: 2 failed cases of its method, 5 of traces, concurrency or durability",
            "{s}"
        );
        assert_eq!(lines[2], "put.stored: 5 failed cases of traces, concurrency or durability", "{s}");
        let mut none = String::new();
        super::write_rules_broken(&mut none, &[&sample_report().tests[2]]);
        assert_eq!(none, "", "a failed case that names no rule adds no section");
    }
}
