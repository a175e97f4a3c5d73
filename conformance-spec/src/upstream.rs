//! The upstream Python kit's tests and how each maps to a case of this kit.
//!
//! [`UPSTREAM_TESTS`] lists all 89 tests of `langgraph-checkpoint-conformance` (monorepo
//! 0.0.2; docs/reference/upstream-suite.md §6) with their capability; every case names
//! the upstream tests it is the counterpart of in `spec_cases!`. [`mapping_markdown`]
//! renders `docs/upstream-mapping.md` from both; the tests below keep the table, the
//! catalog and the committed file in step.

use std::fmt::Write as _;
use std::str::FromStr;

use conformance_core::{Capability, SpecCase};

/// `(capability, upstream test name)` for every upstream test, in the upstream run order
/// (capability order, then each module's `ALL_*_TESTS` order): 58 base tests (put 17,
/// put_writes 10, get_tuple 10, list 16, delete_thread 5) and 31 extended
/// (delete_for_runs 7, copy_thread 8, prune 8, delta_channel_history 8).
pub const UPSTREAM_TESTS: &[(&str /*capability*/, &str /*upstream test name*/)] = &[
    ("put", "test_put_returns_config"),
    ("put", "test_put_roundtrip"),
    ("put", "test_put_preserves_channel_values"),
    ("put", "test_put_preserves_channel_versions"),
    ("put", "test_put_preserves_versions_seen"),
    ("put", "test_put_preserves_metadata"),
    ("put", "test_put_root_namespace"),
    ("put", "test_put_child_namespace"),
    ("put", "test_put_default_namespace"),
    ("put", "test_put_multiple_checkpoints_same_thread"),
    ("put", "test_put_multiple_threads_isolated"),
    ("put", "test_put_parent_config"),
    ("put", "test_put_incremental_channel_update"),
    ("put", "test_put_new_channel_added"),
    ("put", "test_put_channel_removed"),
    ("put", "test_put_preserves_run_id"),
    ("put", "test_put_preserves_versions_seen_values"),
    ("put_writes", "test_put_writes_basic"),
    ("put_writes", "test_put_writes_multiple_writes_same_task"),
    ("put_writes", "test_put_writes_multiple_tasks"),
    ("put_writes", "test_put_writes_preserves_task_id"),
    ("put_writes", "test_put_writes_preserves_channel_and_value"),
    ("put_writes", "test_put_writes_task_path"),
    ("put_writes", "test_put_writes_idempotent"),
    ("put_writes", "test_put_writes_special_channels"),
    ("put_writes", "test_put_writes_across_namespaces"),
    ("put_writes", "test_put_writes_cleared_on_next_checkpoint"),
    ("get_tuple", "test_get_tuple_nonexistent_returns_none"),
    ("get_tuple", "test_get_tuple_latest_when_no_checkpoint_id"),
    ("get_tuple", "test_get_tuple_specific_checkpoint_id"),
    ("get_tuple", "test_get_tuple_config_structure"),
    ("get_tuple", "test_get_tuple_checkpoint_fields"),
    ("get_tuple", "test_get_tuple_metadata"),
    ("get_tuple", "test_get_tuple_parent_config"),
    ("get_tuple", "test_get_tuple_pending_writes"),
    ("get_tuple", "test_get_tuple_respects_namespace"),
    ("get_tuple", "test_get_tuple_nonexistent_checkpoint_id"),
    ("list", "test_list_all"),
    ("list", "test_list_by_thread"),
    ("list", "test_list_by_namespace"),
    ("list", "test_list_ordering"),
    ("list", "test_list_metadata_filter_single_key"),
    ("list", "test_list_metadata_filter_step"),
    ("list", "test_list_metadata_filter_multiple_keys"),
    ("list", "test_list_metadata_filter_no_match"),
    ("list", "test_list_metadata_custom_keys"),
    ("list", "test_list_before"),
    ("list", "test_list_limit"),
    ("list", "test_list_limit_plus_before"),
    ("list", "test_list_combined_thread_and_filter"),
    ("list", "test_list_empty_result"),
    ("list", "test_list_includes_pending_writes"),
    ("list", "test_list_multiple_namespaces"),
    ("delete_thread", "test_delete_thread_removes_checkpoints"),
    ("delete_thread", "test_delete_thread_removes_writes"),
    ("delete_thread", "test_delete_thread_removes_all_namespaces"),
    ("delete_thread", "test_delete_thread_preserves_other_threads"),
    ("delete_thread", "test_delete_thread_nonexistent_noop"),
    ("delete_for_runs", "test_delete_for_runs_single"),
    ("delete_for_runs", "test_delete_for_runs_multiple"),
    ("delete_for_runs", "test_delete_for_runs_preserves_other_runs"),
    ("delete_for_runs", "test_delete_for_runs_removes_writes"),
    ("delete_for_runs", "test_delete_for_runs_empty_list_noop"),
    ("delete_for_runs", "test_delete_for_runs_nonexistent_noop"),
    ("delete_for_runs", "test_delete_for_runs_across_namespaces"),
    ("copy_thread", "test_copy_thread_basic"),
    ("copy_thread", "test_copy_thread_all_checkpoints"),
    ("copy_thread", "test_copy_thread_preserves_metadata"),
    ("copy_thread", "test_copy_thread_preserves_namespaces"),
    ("copy_thread", "test_copy_thread_preserves_writes"),
    ("copy_thread", "test_copy_thread_preserves_ordering"),
    ("copy_thread", "test_copy_thread_source_unchanged"),
    ("copy_thread", "test_copy_thread_nonexistent_source"),
    ("prune", "test_prune_keep_latest_single_thread"),
    ("prune", "test_prune_keep_latest_multiple_threads"),
    ("prune", "test_prune_keep_latest_across_namespaces"),
    ("prune", "test_prune_keep_latest_preserves_writes"),
    ("prune", "test_prune_delete_all"),
    ("prune", "test_prune_preserves_other_threads"),
    ("prune", "test_prune_empty_list_noop"),
    ("prune", "test_prune_nonexistent_noop"),
    ("delta_channel_history", "test_history_returns_writes_oldest_first"),
    ("delta_channel_history", "test_history_seed_is_nearest_snapshot"),
    ("delta_channel_history", "test_history_excludes_target_pending_writes"),
    ("delta_channel_history", "test_history_multi_channel"),
    ("delta_channel_history", "test_history_empty_channels_returns_empty"),
    ("delta_channel_history", "test_history_walk_to_root_no_seed"),
    ("delta_channel_history", "test_history_migration_plain_value_as_seed"),
    ("delta_channel_history", "test_history_seed_ancestor_own_writes_are_replayed"),
];

/// `(upstream test name, what our counterpart checks beyond it)`, shown in the third
/// column of `docs/upstream-mapping.md`. A test without an entry shows "—".
pub const BEYOND_UPSTREAM: &[(&str, &str)] = &[
    ("test_list_all", "Exact ids, newest first, and each listed tuple's metadata (upstream counts 4)."),
    ("test_list_by_thread", "Exact ids; a thread whose id extends this one (`T` vs `T0`) does not leak in."),
    ("test_list_by_namespace", "Exact (namespace, id) for the root and two child namespaces; a namespace sharing a prefix (`child`) and an unknown one list nothing (upstream counts 1)."),
    ("test_list_multiple_namespaces", "Same case as `test_list_by_namespace`: every namespace scope, not only the root, by exact (namespace, id)."),
    ("test_list_ordering", "Same exact order; ids put out of order and the global order across namespaces have their own cases (`order_by_id_not_insertion`, `all_namespaces_ordered_by_id_globally`)."),
    ("test_list_metadata_filter_single_key", "Exact ids in order for both sources (upstream checks the count and the source of each)."),
    ("test_list_metadata_filter_step", "Also step 0 (a falsy value) and a value no checkpoint has."),
    ("test_list_metadata_filter_multiple_keys", "Three key combinations, so a saver that ORs the keys fails."),
    ("test_list_metadata_filter_no_match", "Also filters where only some keys match (catches OR)."),
    ("test_list_metadata_custom_keys", "Also a string custom key; the listed metadata is compared whole."),
    ("test_list_before", "Exact order; `before` the oldest id gives nothing. Unknown ids, filters and namespaces: the `before_*` cases."),
    ("test_list_limit", "Which checkpoints come back (the newest), not only how many; limit 0 and limits at or above the count have their own cases."),
    ("test_list_limit_plus_before", "Also limit 2 below the cut."),
    ("test_list_combined_thread_and_filter", "Another thread with matching metadata must not leak in."),
    ("test_list_empty_result", "Another thread holds checkpoints matching the filter; also without a filter."),
    ("test_list_includes_pending_writes", "Two tasks and a special channel, in get_tuple order (task_path, task_id, index); the whole listed tuple equals get_tuple's."),
    ("test_delete_thread_removes_checkpoints", "Also every id by explicit get_tuple, and list with and without a namespace."),
    ("test_delete_thread_removes_writes", "Puts the same ids again after the delete and checks that no old write comes back, in the root and a child namespace (upstream passes a saver that leaves write rows)."),
    ("test_delete_thread_removes_all_namespaces", "Three namespaces, checked by latest, by explicit id and by list."),
    ("test_delete_thread_preserves_other_threads", "The other thread reuses the same checkpoint ids; its tuples (values, writes, parents, child namespace) are compared whole before and after."),
    ("test_delete_thread_nonexistent_noop", "Also checks that an existing thread is unchanged, tuple for tuple."),
    ("test_delete_for_runs_single", "Exact ids before and after, and the deleted checkpoint is gone from get_tuple."),
    ("test_delete_for_runs_multiple", "Exact remaining ids; each deleted checkpoint is gone from get_tuple."),
    ("test_delete_for_runs_preserves_other_runs", "Also checks the listed run is gone (upstream passes a no-op) and the kept checkpoint reads exactly as before, writes included."),
    ("test_delete_for_runs_removes_writes", "A special-channel write too; the thread lists nothing. Writes not coming back on a re-put: `deleted_writes_do_not_return_on_reput`."),
    ("test_delete_for_runs_empty_list_noop", "Also checks that two checkpoints (values, writes, parent) read exactly as before."),
    ("test_delete_for_runs_nonexistent_noop", "Also checks that an existing checkpoint reads exactly as before; known ids next to unknown ones have their own case."),
    ("test_delete_for_runs_across_namespaces", "Another run in both namespaces stays, by exact ids per namespace."),
    ("test_copy_thread_basic", "Exact ids newest first, not only the count."),
    ("test_copy_thread_all_checkpoints", "Each copied tuple equals the source's read through get_tuple: config and parent config on the target thread, checkpoint, metadata, writes."),
    ("test_copy_thread_preserves_metadata", "Metadata with every JSON kind (nested, null, float, bool, Unicode, parents) compared whole."),
    ("test_copy_thread_preserves_namespaces", "Three namespaces (one nested) with writes; exact ids per namespace and the whole listing compared tuple for tuple."),
    ("test_copy_thread_preserves_writes", "Task id and task path too."),
    ("test_copy_thread_preserves_ordering", "Also the target's latest (get_tuple without an id)."),
    ("test_copy_thread_source_unchanged", "The source (every namespace, writes) and an unrelated thread compared tuple for tuple, not only by ids."),
    ("test_copy_thread_nonexistent_source", "The call must return Ok (upstream swallows any error); also get_tuple on the target. A target that already has data: `missing_source_keeps_existing_target`."),
    ("test_prune_keep_latest_single_thread", "Each pruned id is gone from get_tuple; the kept one reads as before."),
    ("test_prune_keep_latest_multiple_threads", "Exact ids per thread."),
    ("test_prune_keep_latest_across_namespaces", "The child's latest is older than the root's; exact ids per namespace and across namespaces."),
    ("test_prune_keep_latest_preserves_writes", "Two tasks with task paths and a special channel, in get_tuple order; only the latest is listed."),
    ("test_prune_delete_all", "Also get_tuple latest and by id."),
    ("test_prune_preserves_other_threads", "Both strategies; the other thread (two namespaces, writes) compared tuple for tuple, and the pruned thread is checked too."),
    ("test_prune_empty_list_noop", "Both strategies; the thread compared tuple for tuple."),
    ("test_prune_nonexistent_noop", "Both strategies; an existing thread compared tuple for tuple. Known next to unknown threads: `unknown_thread_next_to_known_one`."),
    ("test_history_returns_writes_oldest_first", "Writes compared whole (task id, path, value) and the seed compared exactly; the result has exactly the requested channels."),
    ("test_history_seed_is_nearest_snapshot", "The seed compared byte for byte (an opaque, non-JSON value), not unwrapped."),
    ("test_history_excludes_target_pending_writes", "The whole write list is compared (exactly step 1's), not only the absence of the extra write."),
    ("test_history_multi_channel", "Seeds of both channels compared exactly."),
    ("test_history_walk_to_root_no_seed", "Also the writes (every write but the head's)."),
    ("test_history_migration_plain_value_as_seed", "Writes compared whole."),
    ("test_history_seed_ancestor_own_writes_are_replayed", "Writes compared whole (task ids)."),
];

/// The ids (`capability::name`) of the cases in `cases` that name `upstream` as a
/// counterpart, in catalog order.
pub fn counterparts(cases: &[SpecCase], upstream: &str) -> Vec<String> {
    cases.iter().filter(|c| c.upstream.contains(&upstream)).map(SpecCase::id).collect()
}

/// What our counterpart of `upstream` checks beyond it, if recorded in [`BEYOND_UPSTREAM`].
pub fn beyond_upstream(upstream: &str) -> Option<&'static str> {
    BEYOND_UPSTREAM.iter().find(|(name, _)| *name == upstream).map(|(_, note)| *note)
}

/// The capability of an [`UPSTREAM_TESTS`] entry.
///
/// # Panics
/// When the entry's capability name is not a [`Capability`] (a typo in the table, which
/// the tests of this module catch).
fn capability_of(name: &str) -> Capability {
    match Capability::from_str(name) {
        Ok(c) => c,
        Err(e) => panic!("UPSTREAM_TESTS: {e}"),
    }
}

/// Escapes `|` so a cell cannot break a markdown table row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The markdown of `docs/upstream-mapping.md` for `cases` (normally [`crate::catalog`]):
/// a summary per capability, then one table per capability mapping each upstream test to
/// our case ids and what they check beyond it, followed by our cases that have no
/// upstream counterpart.
pub fn mapping_markdown(cases: &[SpecCase]) -> String {
    let mut caps: Vec<Capability> = Vec::new();
    for (cap, _) in UPSTREAM_TESTS {
        let cap = capability_of(cap);
        if !caps.contains(&cap) {
            caps.push(cap);
        }
    }
    for c in cases {
        if !caps.contains(&c.capability) {
            caps.push(c.capability);
        }
    }
    let upstream_of = |cap: Capability| -> Vec<&'static str> {
        UPSTREAM_TESTS.iter().filter(|(c, _)| capability_of(c) == cap).map(|(_, n)| *n).collect()
    };
    let ours_of = |cap: Capability| -> Vec<&SpecCase> { cases.iter().filter(|c| c.capability == cap).collect() };

    let mut out = String::new();
    out.push_str("# Upstream test mapping\n\n");
    out.push_str(
        "<!-- Generated by `conformance_spec::upstream::mapping_markdown`; do not edit by hand.\n     \
         Regenerate: UPDATE_MAPPING=1 cargo test -p conformance-spec upstream -->\n\n",
    );
    out.push_str(
        "Every test of the upstream Python kit (`langgraph-checkpoint-conformance`, monorepo 0.0.2, 89 tests;\n\
         docs/reference/upstream-suite.md §6) and the case(s) of this kit that are its counterpart. A case\n\
         id is `capability::rule`. Cases of this kit that no upstream test corresponds to are listed after\n\
         each table.\n\n",
    );
    out.push_str("| Capability | Upstream tests | Covered | Our cases | Ours without upstream counterpart |\n");
    out.push_str("|---|---:|---:|---:|---:|\n");
    for &cap in &caps {
        let ups = upstream_of(cap);
        let covered = ups.iter().filter(|u| !counterparts(cases, u).is_empty()).count();
        let ours = ours_of(cap);
        let own = ours.iter().filter(|c| c.upstream.is_empty()).count();
        let _ = writeln!(out, "| {cap} | {} | {covered} | {} | {own} |", ups.len(), ours.len());
    }
    for &cap in &caps {
        let _ = writeln!(out, "\n## {cap}\n");
        let ups = upstream_of(cap);
        if !ups.is_empty() {
            out.push_str("| Upstream test | Our case(s) | What we check beyond upstream |\n");
            out.push_str("|---|---|---|\n");
            for u in ups {
                let ids = counterparts(cases, u);
                let ours = if ids.is_empty() {
                    "— (no counterpart yet)".to_owned()
                } else {
                    ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                };
                let _ = writeln!(out, "| `{u}` | {} | {} |", cell(&ours), cell(beyond_upstream(u).unwrap_or("—")));
            }
            out.push('\n');
        }
        let own: Vec<String> = ours_of(cap).iter().filter(|c| c.upstream.is_empty()).map(|c| c.id()).collect();
        if own.is_empty() {
            out.push_str("Cases without an upstream counterpart: none.\n");
        } else {
            let _ = writeln!(out, "Cases without an upstream counterpart ({}):\n", own.len());
            for id in own {
                let _ = writeln!(out, "- `{id}`");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::PathBuf;

    #[test]
    fn upstream_table_lists_89_unique_tests_with_upstream_counts() {
        let mut names = BTreeSet::new();
        let mut counts: BTreeMap<Capability, usize> = BTreeMap::new();
        for (cap, name) in UPSTREAM_TESTS {
            assert!(names.insert(*name), "UPSTREAM_TESTS lists {name} twice");
            assert!(name.starts_with("test_"), "UPSTREAM_TESTS: {name} is not an upstream test name");
            *counts.entry(capability_of(cap)).or_default() += 1;
        }
        let want: BTreeMap<Capability, usize> = [
            (Capability::Put, 17),
            (Capability::PutWrites, 10),
            (Capability::GetTuple, 10),
            (Capability::List, 16),
            (Capability::DeleteThread, 5),
            (Capability::DeleteForRuns, 7),
            (Capability::CopyThread, 8),
            (Capability::Prune, 8),
            (Capability::DeltaChannelHistory, 8),
        ]
        .into();
        assert_eq!(counts, want, "per-capability counts of UPSTREAM_TESTS (upstream-suite.md §6.10)");
        assert_eq!(UPSTREAM_TESTS.len(), 89);
        let base = UPSTREAM_TESTS.iter().filter(|(c, _)| capability_of(c).is_base()).count();
        assert_eq!(base, 58, "base upstream tests");
    }

    /// Every base upstream test has a counterpart; an extended one has one as soon as its
    /// capability has any case in the catalog (so a capability module cannot land with a
    /// gap, while modules still being written do not fail the build).
    #[test]
    fn every_upstream_test_has_a_counterpart() {
        let cases = crate::catalog();
        let present: BTreeSet<Capability> = cases.iter().map(|c| c.capability).collect();
        let missing: Vec<String> = UPSTREAM_TESTS
            .iter()
            .filter(|(cap, _)| {
                let cap = capability_of(cap);
                cap.is_base() || present.contains(&cap)
            })
            .filter(|(_, name)| counterparts(&cases, name).is_empty())
            .map(|(cap, name)| format!("{cap}: {name}"))
            .collect();
        assert!(
            missing.is_empty(),
            "{} upstream test(s) have no counterpart case (list the upstream name in the case's spec_cases! entry):\n  {}",
            missing.len(),
            missing.join("\n  ")
        );
    }

    /// Every upstream name a case claims is a real upstream test of the same capability
    /// (catches typos, which would otherwise leave the real test unmapped).
    #[test]
    fn every_claimed_upstream_test_exists_in_the_same_capability() {
        let mut wrong = Vec::new();
        for case in crate::catalog() {
            for name in case.upstream {
                match UPSTREAM_TESTS.iter().find(|(_, n)| n == name) {
                    None => wrong.push(format!("{}: {name} is not an upstream test", case.id())),
                    Some((cap, _)) if capability_of(cap) != case.capability => {
                        wrong.push(format!("{}: {name} belongs to capability {cap}", case.id()))
                    }
                    Some(_) => {}
                }
            }
        }
        assert!(wrong.is_empty(), "wrong upstream names in spec_cases!:\n  {}", wrong.join("\n  "));
    }

    #[test]
    fn beyond_upstream_notes_name_upstream_tests() {
        let mut seen = BTreeSet::new();
        for (name, note) in BEYOND_UPSTREAM {
            assert!(UPSTREAM_TESTS.iter().any(|(_, n)| n == name), "BEYOND_UPSTREAM: {name} is not an upstream test");
            assert!(seen.insert(*name), "BEYOND_UPSTREAM lists {name} twice");
            assert!(!note.trim().is_empty(), "BEYOND_UPSTREAM: empty note for {name}");
        }
    }

    /// `docs/upstream-mapping.md` is what [`mapping_markdown`] renders for the catalog.
    /// Set `UPDATE_MAPPING=1` to rewrite it.
    #[test]
    fn upstream_mapping_doc_is_current() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/upstream-mapping.md");
        let want = mapping_markdown(&crate::catalog());
        if std::env::var_os("UPDATE_MAPPING").is_some_and(|v| v == "1") {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
            }
            std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .map_or_else(|| have.lines().count().min(want.lines().count()) + 1, |i| i + 1);
            panic!(
                "docs/upstream-mapping.md is out of date with the catalog (first difference at line {line}).\n\
                 Regenerate it with: UPDATE_MAPPING=1 cargo test -p conformance-spec upstream\n\
                 committed: {:?}\ngenerated: {:?}",
                have.lines().nth(line - 1).unwrap_or("<end of file>"),
                want.lines().nth(line - 1).unwrap_or("<end of file>"),
            );
        }
    }
}
