//! The rules of docs/contract.md, one line each, with a stable id (`put.reput`): the table
//! every spec case names the rules it checks from (`#[rules(put.reput)]` in
//! [`crate::spec_cases!`], [`SpecCase::rules`]) and every self-test mutant the rules it
//! breaks. docs/contract.md carries each id beside its sentence (`` `[put.reput]` ``); the
//! tests below keep the page and the table the same set, and [`untraced`] reports a rule
//! no case checks and a case that names no rule or an unknown one.
//!
//! CONTRACT §5 (conformance levels) is the runner's rule, not a saver's; it is tested by
//! conformance-core's own tests, not here.

use conformance_core::{SpecCase, Strength};

/// One rule of docs/contract.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The stable id, `area.rule` (`put.reput`), as docs/contract.md writes it beside the
    /// sentence (`` `[put.reput]` ``).
    pub id: &'static str,
    /// The contract section it comes from (`§2 put`).
    pub section: &'static str,
    /// MUST or SHOULD, as docs/contract.md marks it (CONTRACT §5 "Strength of a rule").
    pub strength: Strength,
    /// The rule in short, one line.
    pub text: &'static str,
    /// A rule the call of its section checks first, marked `first` in the table: a
    /// replayed user trace is counted under the `first` rules of the calls it makes
    /// (`crate::traces`), so a new method names its own there.
    pub first: bool,
}

/// Declares the rule table once: [`RULES`], and one `const` per rule in [`ids`]
/// (`ids::put::reput == "put.reput"`), which `#[rules(put.reput)]` in
/// [`crate::spec_cases!`] names, so a misspelt rule id does not compile.
macro_rules! rules {
    ($( $area:ident $section:literal { $( $name:ident : $strength:ident $($mark:ident)? $text:literal ),* $(,)? } )*) => {
        /// Every rule of docs/contract.md §1-§4 that a saver can break, in contract order.
        pub const RULES: &[Rule] = &[ $( $( Rule {
            id: concat!(stringify!($area), ".", stringify!($name)),
            section: $section,
            strength: Strength::$strength,
            text: $text,
            first: false $(|| marked!($mark))?,
        }, )* )* ];

        /// One module per rule area, one `const` per rule: its id. What `#[rules(...)]`
        /// names, checked by the compiler.
        #[allow(non_upper_case_globals, missing_docs)]
        pub mod ids {
            $( pub mod $area { $( pub const $name: &str = concat!(stringify!($area), ".", stringify!($name)); )* } )*
        }
    };
}

/// The one mark a rule of the table may carry: `first` ([`Rule::first`]); any other word
/// does not compile.
macro_rules! marked {
    (first) => {
        true
    };
}

rules! {
    config "§1 Config" {
        thread_id: Should "an empty thread_id is InvalidConfig, never a panic or a default",
        missing_thread: Must r#"a config without thread_id reads no thread (never "undefined")"#,
        missing_namespace: Must "a config without checkpoint_ns is the root namespace",
    }
    value "§1 Typed value" {
        bytes: Must "tag and bytes round-trip byte for byte (empty, NUL, non-UTF-8, 16 MiB)",
    }
    version "§1 Channel version" {
        kind: Must "a version round-trips with its kind",
    }
    checkpoint "§1 Checkpoint" {
        fields: Must "every field round-trips; updated_channels None and [] stay distinct",
    }
    metadata "§1 Metadata" {
        json: Must "any key and JSON value round-trips exactly, or the whole put is refused",
        refuse_whole: Should "a value the saver cannot store refuses the whole put with InvalidInput naming the key; never an altered value",
    }
    ids "§1 Identifiers" {
        opaque: Must "identifiers compared byte for byte: never trimmed, case-folded, normalised, split or matched as patterns",
    }
    tuple "§1 Checkpoint tuple" {
        parent_config: Must "parent_config is (thread, namespace, parent id) or none",
    }
    put "§2 put" {
        stored: Must first "stored under (thread, namespace, checkpoint.id); the parent is config.checkpoint_id",
        returns: Must "returns the same thread and namespace and checkpoint_id = checkpoint.id",
        values: Must first "each channel of channel_versions reads the value stored at that version (values the put carried)",
        kept_values: Should "a kept channel (its value not carried by this put) reads the value an earlier put stored at its version",
        emptied: Must "a channel in new_versions without a value is absent on read",
        outside_versions: Must "a channel not in channel_versions is absent on read",
        siblings: Must "sibling checkpoints read back their own values",
        reput: Must "re-putting an id replaces checkpoint, metadata and parent, keeps its writes",
        owns: Must "nothing the caller does after put returns changes what is read back",
    }
    put_writes "§2 put_writes" {
        id_required: Must "checkpoint_id is required (InvalidConfig)",
        early: Must "writes may arrive before their checkpoint and show up once it is put",
        index: Must first "special channels get their fixed index; others their position, specials counted",
        key: Must first "the key is (thread, namespace, checkpoint id, task id, index)",
        regular_first: Must "regular writes: the first write for a key wins",
        special_last: Must "special writes: the last write wins",
        per_write: Must "the rule is decided per write, never per call",
        empty: Must "an empty list is a no-op",
        belongs: Must "writes appear with their checkpoint only, in its namespace only",
        task_path: Should "a read returns each write's task_path as it was put (unless the saver declares task_path_on_reads lacking)",
    }
    get_tuple "§2 get_tuple" {
        by_id: Must "with checkpoint_id: exactly that checkpoint in (thread, namespace), or none",
        latest: Must first "without it: the greatest id in (thread, namespace), or none",
        writes_order: Must first "pending_writes by (task_path, task_id, index), index signed",
    }
    list "§2 list" {
        scope: Must r#"the config's thread; its namespace if given, else all; only checkpoint_id if given"#,
        filter: Must "every key equal by JSON equality (numbers by value, exactly; strings exactly; literal top-level keys); an empty filter matches all",
        filter_strict: Should "booleans never equal numbers; null matches a missing key or null; nested values by JSON equality, not containment",
        before: Must "only ids strictly less than before; an unknown id still cuts",
        limit: Must "at most limit, applied after scope, filter and before; 0 gives nothing",
        order: Must first "checkpoint id descending within a namespace",
        order_across: Should "without a namespace: one id order across namespaces (limit and before cut by id); equal ids namespace ascending",
        tuples: Must first r#"each tuple carries get_tuple's parent_config and pending_writes"#,
    }
    delete_thread "§2 delete_thread" {
        everything: Must first "removes every checkpoint, value and write in every namespace",
        unknown: Must "an unknown thread is a no-op",
        others: Must "other threads are untouched",
        nothing_back: Must "a re-put shows no old writes and no old values",
    }
    next_version "§2 get_next_version" {
        greater: Must first "strictly greater than current (1 for none)",
        strings: Should r#"also strictly greater than LangGraph's string versions ("{n:032}.{fraction}")"#,
    }
    extended "§3" {
        noop_inputs: Must "supported extended methods accept empty and unknown inputs as no-ops",
    }
    delete_for_runs "§3 delete_for_runs" {
        deletes: Must first r#"deletes each listed run's checkpoints, in every thread and namespace, with writes"#,
        others: Must "other checkpoints stay",
    }
    copy_thread "§3 copy_thread" {
        copies: Must first "every checkpoint of every namespace with ids, metadata, values, versions, writes",
        target_configs: Must "configs and parent configs in the copy name the target",
        source_unchanged: Must "the source is unchanged",
        twice: Must "copying twice leaves the target as after one copy",
        missing_source: Must "a missing source leaves the target untouched",
        onto_existing: Must "onto a target with checkpoints: each copied checkpoint and its writes replace the target's same (namespace, id); others stay",
    }
    prune "§3 prune" {
        keep_latest: Must first "keeps the newest checkpoint of each (thread, namespace), its writes and values",
        delete: Must "delete removes the threads entirely",
        others: Must "other threads are untouched",
    }
    delta "§3 delta_channel_history" {
        target: Must "the target is resolved as get_tuple does",
        walk: Must first r#"walk parent_config links from the target's parent"#,
        seed: Must r#"an ancestor's writes first, then its value is the seed and the walk stops; none at the root, no seed"#,
        exclude_target: Must r#"the target's own writes are excluded"#,
        order: Must "writes oldest first, in get_tuple order within a checkpoint",
        channels: Must "one entry per requested channel; none requested gives empty",
        missing_target: Must "a target that is not stored gives one entry per requested channel, no writes and no seed",
    }
    errors "§4 Errors" {
        no_panic: Must "every input gets Ok or a typed error, never a panic",
        atomic: Must "a failed call leaves nothing half-written",
    }
    concurrency "§4 Concurrency" {
        serial: Must "concurrent calls behave as if made one after another",
        two_instances: Must "two instances opened on the same storage behave as if their calls were made one after another",
    }
    durability "§4 Durability" {
        acknowledged: Must "acknowledged data survives a crash and a reopen",
    }
}

/// Rules no case can check and no mutant can break, each with the reason; [`untraced`]
/// accepts them without a case
/// and the self-test without a mutant; both report an entry whose rule has one (a stale
/// explanation).
pub const UNCHECKABLE: &[(&str, &str)] = &[(
    "put.owns",
    "put takes the checkpoint by value and tuples share an Arc; the only way for a caller to change a returned \
     tuple is Arc::make_mut, which copies, so no saver written in safe Rust can alias what the caller holds",
)];

/// The rule with id `id`.
pub fn rule_by_id(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// What breaks the trace from `rules` to `cases`, one line each, empty when every rule has
/// a case and every case names at least one rule, all of them in `rules`: a rule no case
/// checks (unless [`UNCHECKABLE`] says why), a case naming no rule, a case naming an
/// unknown rule.
pub fn untraced(rules: &[Rule], cases: &[SpecCase]) -> Vec<String> {
    let mut out = Vec::new();
    for c in cases {
        if c.rules.is_empty() {
            out.push(format!("case {} names no rule (add #[rules(...)] to its spec_cases! entry)", c.id()));
        }
        for r in c.rules {
            if !rules.iter().any(|rule| rule.id == *r) {
                out.push(format!("case {} names an unknown rule {r}", c.id()));
            }
        }
    }
    for rule in rules {
        let checked = cases.iter().any(|c| c.rules.contains(&rule.id));
        let explained = UNCHECKABLE.iter().any(|(id, _)| *id == rule.id);
        if !checked && !explained {
            out.push(format!("rule {} has no case", rule.id));
        }
        if checked && explained {
            out.push(format!("rule {} has a case but is listed in UNCHECKABLE", rule.id));
        }
    }
    out
}

/// The rule ids docs/contract.md carries, in page order: every `` `[area.rule]` `` mark.
pub fn ids_in_contract(page: &str) -> Vec<&str> {
    page.split("`[")
        .skip(1)
        .filter_map(|rest| rest.split_once("]`").map(|(id, _)| id))
        .filter(|id| id.contains('.') && id.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == '.'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn rule_ids_are_unique() {
        let mut seen = BTreeSet::new();
        for r in RULES {
            assert!(seen.insert(r.id), "duplicate rule {}", r.id);
            assert!(!r.text.is_empty() && r.section.starts_with('§'), "rule {}: section and text", r.id);
        }
    }

    /// Every saver method's section marks at least one rule `first` (what a replayed user
    /// trace that makes the call is counted under), and only a method's section does.
    #[test]
    fn every_method_has_a_first_rule() {
        let method_of = |r: &Rule| r.section.split_once(' ').map(|(_, m)| m);
        for method in conformance_core::METHODS {
            assert!(
                RULES.iter().any(|r| r.first && method_of(r) == Some(method)),
                "no rule of section {method} is marked `first`"
            );
        }
        for r in RULES.iter().filter(|r| r.first) {
            assert!(
                method_of(r).is_some_and(|m| conformance_core::METHODS.contains(&m)),
                "{} is marked `first` but {:?} is not a saver method's section",
                r.id,
                r.section
            );
        }
    }

    /// The ids marked in docs/contract.md and [`RULES`] are the same set, each marked once.
    #[test]
    fn contract_marks_every_rule_once() {
        let page = include_str!("../../docs/contract.md");
        let marked = ids_in_contract(page);
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for id in &marked {
            if !seen.insert(*id) {
                problems.push(format!("`[{id}]` marked twice in docs/contract.md"));
            }
            if rule_by_id(id).is_none() {
                problems.push(format!("`[{id}]` in docs/contract.md is not in RULES"));
            }
        }
        for r in RULES {
            if !seen.contains(r.id) {
                problems.push(format!("rule {} is not marked in docs/contract.md", r.id));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// Every rule has a case, every case names a known rule.
    #[test]
    fn every_rule_has_a_case_and_every_case_a_rule() {
        let problems = untraced(RULES, &crate::catalog());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// A rule planted without a case, and a case without a rule, are reported.
    #[test]
    fn planted_rule_without_case_is_reported() {
        let mut rules = RULES.to_vec();
        rules.push(Rule {
            id: "planted.rule",
            section: "§9 nowhere",
            strength: Strength::Must,
            text: "no case checks this",
            first: false,
        });
        let problems = untraced(&rules, &crate::catalog());
        assert_eq!(problems, ["rule planted.rule has no case"]);
        let mut cases = crate::catalog();
        cases[0].rules = &[];
        cases[1].rules = &["no.such_rule"];
        let problems = untraced(RULES, &cases);
        assert!(problems.iter().any(|p| p.ends_with("names no rule (add #[rules(...)] to its spec_cases! entry)")));
        assert!(problems.iter().any(|p| p.ends_with("names an unknown rule no.such_rule")));
    }

    /// A planted mark in the page without a rule is found.
    #[test]
    fn contract_marks_are_parsed() {
        assert_eq!(
            ids_in_contract("a `[put.reput]` b `[x]` c `[list.order_across]`."),
            ["put.reput", "list.order_across"]
        );
    }
}
