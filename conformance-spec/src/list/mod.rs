//! `list` (CONTRACT §2 list): scope (thread, namespace, checkpoint id), `filter`,
//! `before`, `limit`, order, and tuples equal to what `get_tuple` returns.
//!
//! Every case compares the exact ids (and namespaces) that come back, in order: a count
//! alone would pass a saver that returns the wrong checkpoints.

mod filter;

use conformance_core::{Capability, Failure, ListOptions, ERROR};
use serde_json::{json, Value};

use crate::calls::Cx;
use crate::compare::{ensure, Checked, Diffs};
use crate::data::{at, jv, metadata, pending, Ids, Step};
use filter::*;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::List, needs [Put] => [
        lists_every_checkpoint_of_thread ["test_list_all"],
        scope_is_the_thread ["test_list_by_thread"],
        namespace_scope_is_exact ["test_list_by_namespace", "test_list_multiple_namespaces"],
        newest_id_first ["test_list_ordering"],
        filter_single_key ["test_list_metadata_filter_single_key"],
        filter_integer_value ["test_list_metadata_filter_step"],
        filter_all_keys_must_match ["test_list_metadata_filter_multiple_keys"],
        filter_without_match_returns_nothing ["test_list_metadata_filter_no_match"],
        filter_custom_keys ["test_list_metadata_custom_keys"],
        before_is_strict ["test_list_before"],
        limit_keeps_newest ["test_list_limit"],
        limit_applies_after_before ["test_list_limit_plus_before"],
        filter_scoped_to_thread ["test_list_combined_thread_and_filter"],
        unknown_thread_returns_nothing ["test_list_empty_result"],
        tuples_carry_pending_writes +[PutWrites, GetTuple] ["test_list_includes_pending_writes"],
        limit_zero_returns_nothing,
        limit_larger_than_count_returns_all,
        limit_applies_after_filter,
        limit_applies_after_namespace_scope,
        #[should] limit_is_global_across_namespaces,
        before_unknown_id_still_cuts,
        before_with_filter,
        #[should] before_applies_across_namespaces,
        before_cuts_by_id_not_insertion_order,
        filter_numbers_by_value,
        #[should] filter_booleans_never_equal_numbers,
        filter_strings_exact,
        #[should] filter_null_matches_missing_or_null,
        #[should] filter_nested_values_by_json_equality,
        empty_filter_matches_everything,
        filter_missing_key_never_matches_value,
        filter_key_is_top_level_literal,
        root_namespace_is_not_every_namespace +[GetTuple],
        #[should] all_namespaces_ordered_by_id_globally,
        #[should] equal_ids_ordered_by_namespace,
        scope_by_checkpoint_id,
        order_by_id_not_insertion,
        listed_tuples_equal_get_tuple +[PutWrites, GetTuple],
        parent_config_is_full_config,
        same_id_in_two_namespaces_and_threads_stays_apart +[PutWrites],
    ])
}

/// `Step` for checkpoint `label` of `ids` with exactly the metadata `meta` (a JSON object).
pub(super) fn step(ids: &Ids, label: &str, meta: Value) -> Step {
    Step::new(ids.id(label)).metadata(metadata(meta))
}

/// Puts each `(label, metadata)` on (`thread`, `""`) without parents, in the given order.
pub(super) async fn put_unchained(cx: &Cx, ids: &Ids, thread: &str, items: &[(&str, Value)]) -> Checked {
    for (label, meta) in items {
        cx.put(&at(thread, ""), step(ids, label, meta.clone())).await?;
    }
    Ok(())
}

/// The upstream list fixture: a chain c0 <- c1 <- c2 <- c3 on (`thread`, `""`) with
/// metadata steps 0..3 and sources input, loop, input, loop.
pub(super) async fn list_data(cx: &Cx, thread: &str) -> Result<Ids, Failure> {
    let ids = Ids::new(&["c0", "c1", "c2", "c3"]);
    let mut parent = at(thread, "");
    for (i, source) in ["input", "loop", "input", "loop"].iter().enumerate() {
        let label = format!("c{i}");
        let meta = json!({"source": source, "step": i, "parents": {}});
        parent = cx.put(&parent, step(&ids, &label, meta)).await?;
    }
    Ok(ids)
}

// ---------------------------------------------------------------------------------------
// Counterparts of the upstream tests.
// ---------------------------------------------------------------------------------------

/// Every checkpoint of the thread comes back, each exactly once with its own metadata
/// (upstream counts 4; we check which 4 and what they carry).
async fn lists_every_checkpoint_of_thread(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all(), &["c3", "c2", "c1", "c0"]).await?;
    let listed = cx.list_all(&t).await?;
    let mut d = listed.diffs();
    for tuple in listed.iter() {
        let label = ids.label(&tuple.checkpoint.id);
        let i: usize = label.trim_start_matches('c').parse().unwrap_or(usize::MAX);
        let source = ["input", "loop", "input", "loop"].get(i).copied().unwrap_or("?");
        let want = metadata(json!({"source": source, "step": i, "parents": {}}));
        d.of(format_args!("{listed}: tuple {label} ({})", tuple.config)).metadata(&want, &tuple.metadata);
    }
    d.finish()
}

/// Scope is the config's thread, matched exactly: an unknown thread lists nothing, and a
/// thread whose id extends this one (`T` vs `T0`) is not included.
async fn scope_is_the_thread(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let longer = format!("{t}0");
    let ids = list_data(&cx, &t).await?;
    let other = Ids::new(&["u0", "u1"]);
    put_unchained(&cx, &other, &longer, &[("u0", json!({"source": "input"})), ("u1", json!({"source": "loop"}))])
        .await?;
    cx.expect_list(&ids, &cx.thread("unknown"), &ListOptions::all(), &[]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all(), &["c3", "c2", "c1", "c0"]).await?;
    cx.expect_list(&other, &longer, &ListOptions::all(), &["u1", "u0"]).await
}

/// A namespace scope returns that namespace only: the root `""` is a namespace like any
/// other, and neither a sibling nor a namespace sharing a prefix leaks in.
async fn namespace_scope_is_exact(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r", "k1", "k2"]);
    cx.put(&at(&t, ""), step(&ids, "r", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "k1", json!({}))).await?;
    cx.put(&at(&t, "child:2"), step(&ids, "k2", json!({}))).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns(""), &[("", "r")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1"), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:2"), &[("child:2", "k2")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child"), &[]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:3"), &[]).await
}

/// S12: checkpoints come back newest id first.
async fn newest_id_first(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all(), &["c3", "c2", "c1", "c0"]).await
}

/// S11: `before` keeps only ids strictly less than it, newest first.
async fn before_is_strict(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c2")), &["c1", "c0"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c0")), &[]).await
}

/// S01: `limit` keeps the newest checkpoints, not any of them.
async fn limit_keeps_newest(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().limit(1), &["c3"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().limit(2), &["c3", "c2"]).await
}

/// S11: `limit` applies after `before`: the newest ids below the cut.
async fn limit_applies_after_before(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c3")).limit(1), &["c2"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c3")).limit(2), &["c2", "c1"]).await
}

/// An unknown thread lists nothing, with or without a filter, even when another thread
/// has checkpoints matching that filter.
async fn unknown_thread_returns_nothing(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["a"]);
    put_unchained(&cx, &ids, &t, &[("a", json!({"source": "nonexistent"}))]).await?;
    let unknown = cx.thread("unknown");
    cx.expect_list(&ids, &unknown, &filter(json!({"source": "nonexistent"})), &[]).await?;
    cx.expect_list(&ids, &unknown, &ListOptions::all(), &[]).await
}

/// S08: a listed tuple carries its pending writes, all of them, in get_tuple order
/// (task_path, task_id, index), equal to what get_tuple returns.
async fn tuples_carry_pending_writes(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1"]);
    let cfg = cx.put(&at(&t, ""), step(&ids, "c1", json!({"source": "loop", "step": 0}))).await?;
    cx.put_writes(&cfg, vec![("x", jv(json!("vx"))), ("y", jv(json!("vy")))], "task-b", "").await?;
    cx.put_writes(&cfg, vec![("ch", jv(json!("val"))), (ERROR, jv(json!("boom")))], "task-a", "").await?;
    let w = |task: &str, ch: &str, v: &str| pending(task, "", ch, jv(json!(v)));
    let want =
        vec![w("task-a", ERROR, "boom"), w("task-a", "ch", "val"), w("task-b", "x", "vx"), w("task-b", "y", "vy")];
    let listed = cx.list_all(&t).await?;
    let first = listed.first().ok_or_else(|| Failure::new(format!("{listed}: expected c1, got nothing")))?;
    let mut d = listed.diffs();
    d.of(format_args!("{listed}: tuple c1 ({})", first.config)).writes("pending_writes", &want, &first.pending_writes);
    let got = cx.get_some(&cfg).await?;
    d.of(format_args!("{listed} compared with {got}")).tuples(&[got.into_value()], &listed);
    d.finish()
}

// ---------------------------------------------------------------------------------------
// limit
// ---------------------------------------------------------------------------------------

/// S01: `limit` 0 gives nothing (it is not "unlimited").
async fn limit_zero_returns_nothing(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().limit(0), &[]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().ns("").limit(0), &[]).await
}

/// S01: a `limit` at or above the count returns everything, newest first.
async fn limit_larger_than_count_returns_all(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    let all = ["c3", "c2", "c1", "c0"];
    cx.expect_list(&ids, &t, &ListOptions::all().limit(4), &all).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().limit(5), &all).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().limit(1000), &all).await
}

/// S07: `limit` applies after the filter: limit 1 gives the newest *matching*
/// checkpoint even when the thread's newest does not match.
async fn limit_applies_after_filter(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input"})).limit(1), &["c2"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input"})).limit(2), &["c2", "c0"]).await
}

/// `limit` applies after the namespace scope: the newest of that namespace, even when a
/// newer checkpoint exists in another one.
async fn limit_applies_after_namespace_scope(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r0", "r1", "k0", "k1"]);
    cx.put(&at(&t, ""), step(&ids, "r0", json!({}))).await?;
    cx.put(&at(&t, ""), step(&ids, "r1", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "k0", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "k1", json!({}))).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").limit(1), &[("", "r1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1").limit(1), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().limit(3), &[("child:1", "k1"), ("child:1", "k0"), ("", "r1")]).await
}

/// CONTRACT §2 list: `limit` is "at most that many, applied after scope, filter and
/// `before`", so without a namespace it keeps the newest ids across every namespace, not
/// a share of each. Root holds c0, c2, c4, c5 and child:1 holds c1, c3 (interleaved by id,
/// the two newest both in the root).
async fn limit_is_global_across_namespaces(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3", "c4", "c5"]);
    for (ns, label) in [("", "c0"), ("child:1", "c1"), ("", "c2"), ("child:1", "c3"), ("", "c4"), ("", "c5")] {
        cx.put(&at(&t, ns), step(&ids, label, json!({}))).await?;
    }
    let newest = [("", "c5"), ("", "c4"), ("child:1", "c3"), ("", "c2"), ("child:1", "c1"), ("", "c0")];
    for limit in [1, 2, 3, 4] {
        cx.expect_list_ns(&ids, &t, &ListOptions::all().limit(limit), &newest[..limit]).await?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// before
// ---------------------------------------------------------------------------------------

/// CONTRACT §2 list: `before` keeps "only checkpoints whose id is strictly less than
/// `before`'s `checkpoint_id`", whatever order they were put in. Ids c1 < c2 < c3 < c4 are
/// put c3, c1, c4, c2: before c3 gives c2, c1 (c2 was put after c3, c1 before it).
async fn before_cuts_by_id_not_insertion_order(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1", "c2", "c3", "c4"]);
    put_unchained(&cx, &ids, &t, &[("c3", json!({})), ("c1", json!({})), ("c4", json!({})), ("c2", json!({}))]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c3")), &["c2", "c1"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c3")).limit(1), &["c2"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c4")), &["c3", "c2", "c1"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("c2")), &["c1"]).await
}

/// S11: an id that was never stored still cuts: ids below it, never "everything", and
/// nothing when it is below every id.
async fn before_unknown_id_still_cuts(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "gap", "c2", "c3", "above"]);
    put_unchained(&cx, &ids, &t, &[("c0", json!({})), ("c1", json!({})), ("c2", json!({})), ("c3", json!({}))]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("gap")), &["c1", "c0"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("above")), &["c3", "c2", "c1", "c0"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before("00000000-0000-0000-0000-000000000000"), &[]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().before(ids.id("gap")).limit(1), &["c1"]).await
}

/// `before` combined with a filter: both apply.
async fn before_with_filter(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input"})).before(ids.id("c2")), &["c0"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "loop"})).before(ids.id("c3")), &["c1"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "loop"})).before(ids.id("c1")), &[]).await
}

/// `before` cuts by id across every namespace when no namespace is given.
async fn before_applies_across_namespaces(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3"]);
    cx.put(&at(&t, ""), step(&ids, "c0", json!({}))).await?;
    cx.put(&at(&t, ""), step(&ids, "c2", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "c1", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "c3", json!({}))).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().before(ids.id("c3")), &[("", "c2"), ("child:1", "c1"), ("", "c0")])
        .await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1").before(ids.id("c3")), &[("child:1", "c1")]).await
}

// ---------------------------------------------------------------------------------------
// filter value types
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Namespaces, checkpoint id scope, order
// ---------------------------------------------------------------------------------------

/// S10: the root namespace `""` is one namespace, not "any namespace"; only a missing
/// namespace (`None`) lists every namespace.
async fn root_namespace_is_not_every_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r1", "k1"]);
    cx.put(&at(&t, ""), step(&ids, "r1", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "k1", json!({}))).await?;
    let root = cx.get_some(&at(&t, "")).await?;
    root.expect_eq(format_args!("checkpoint id ({})", ids.legend()), "r1", ids.label(&root.checkpoint.id).as_str())?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns(""), &[("", "r1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1"), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all(), &[("child:1", "k1"), ("", "r1")]).await
}

/// Without a namespace, every namespace is listed in one order by id descending, not
/// grouped by namespace (puts grouped by namespace catch a saver that concatenates).
async fn all_namespaces_ordered_by_id_globally(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3", "c4"]);
    cx.put(&at(&t, ""), step(&ids, "c0", json!({}))).await?;
    cx.put(&at(&t, ""), step(&ids, "c3", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "c1", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "c4", json!({}))).await?;
    cx.put(&at(&t, "child:2"), step(&ids, "c2", json!({}))).await?;
    cx.expect_list_ns(
        &ids,
        &t,
        &ListOptions::all(),
        &[("child:1", "c4"), ("", "c3"), ("child:2", "c2"), ("child:1", "c1"), ("", "c0")],
    )
    .await
}

/// Equal ids in different namespaces come back namespace ascending (puts in another
/// order), between the newer and older ids.
async fn equal_ids_ordered_by_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["old", "x", "new"]);
    cx.put(&at(&t, "child:2"), step(&ids, "x", json!({}))).await?;
    cx.put(&at(&t, ""), step(&ids, "x", json!({}))).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "x", json!({}))).await?;
    cx.put(&at(&t, "child:2"), step(&ids, "old", json!({}))).await?;
    cx.put(&at(&t, ""), step(&ids, "new", json!({}))).await?;
    cx.expect_list_ns(
        &ids,
        &t,
        &ListOptions::all(),
        &[("", "new"), ("", "x"), ("child:1", "x"), ("child:2", "x"), ("child:2", "old")],
    )
    .await
}

/// A checkpoint id scope lists only that id (in every namespace that has it, or in the
/// given one); an unknown id lists nothing; `before` still applies.
async fn scope_by_checkpoint_id(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.put(&at(&t, "child:1"), step(&ids, "c1", json!({}))).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().id(ids.id("c1")), &[("", "c1"), ("child:1", "c1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").id(ids.id("c1")), &[("", "c1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").id(ids.id("c3")), &[("", "c3")]).await?;
    let unknown = Ids::new(&["unknown"]);
    cx.expect_list_ns(&ids, &t, &ListOptions::all().id(unknown.id("unknown")), &[]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").id(ids.id("c1")).before(ids.id("c1")), &[]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").id(ids.id("c1")).before(ids.id("c2")), &[("", "c1")]).await
}

/// S12: order is by id, not by insertion: ids put newest first, or shuffled, still list
/// newest first.
async fn order_by_id_not_insertion(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1", "c2", "c3"]);
    put_unchained(&cx, &ids, &t, &[("c3", json!({})), ("c1", json!({})), ("c2", json!({}))]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all(), &["c3", "c2", "c1"]).await?;
    let u = cx.thread("reversed");
    put_unchained(&cx, &ids, &u, &[("c3", json!({})), ("c2", json!({})), ("c1", json!({}))]).await?;
    cx.expect_list(&ids, &u, &ListOptions::all(), &["c3", "c2", "c1"]).await?;
    cx.expect_list(&ids, &u, &ListOptions::all().limit(1), &["c3"]).await
}

/// Each listed tuple equals, field by field, what get_tuple returns for it: config,
/// checkpoint (with values rebuilt from earlier puts), metadata, parent_config and
/// pending_writes, in every namespace.
async fn listed_tuples_equal_get_tuple(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "k0", "c1", "k1", "c2"]);
    let c0 = cx.put(&at(&t, ""), step(&ids, "c0", json!({"step": 0})).value("a", json!("a0"), 1)).await?;
    let k0 = cx.put(&at(&t, "child:1"), step(&ids, "k0", json!({"step": 0})).value("a", json!("k"), 1)).await?;
    let c1 = cx.put(&c0, step(&ids, "c1", json!({"step": 1})).keep("a", 1).value("b", json!("b1"), 1)).await?;
    let k1 = cx.put(&k0, step(&ids, "k1", json!({"step": 1})).keep("a", 1)).await?;
    let c2 = cx.put(&c1, step(&ids, "c2", json!({"step": 2})).value("a", json!("a2"), 2).keep("b", 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!("w1"))), (ERROR, jv(json!("e")))], "task-1", "p:1").await?;
    cx.put_writes(&c1, vec![("b", jv(json!("w2")))], "task-0", "p:2").await?;
    cx.put_writes(&k1, vec![("a", jv(json!("kw")))], "task-k", "").await?;
    cx.put_writes(&c2, vec![("b", jv(json!("w3")))], "task-2", "").await?;

    let mut by_id = Vec::new();
    for cfg in [&c2, &k1, &c1, &k0, &c0] {
        by_id.push(cx.get_some(cfg).await?.into_value());
    }
    let mut d = Diffs::new();
    let listed = cx.list_all(&t).await?;
    d.of(format_args!("{listed} compared with get_tuple of each")).tuples(&by_id, &listed);
    let root: Vec<_> = by_id.iter().filter(|x| x.config.checkpoint_ns.is_empty()).cloned().collect();
    let listed = cx.list(&t, &ListOptions::all().ns("")).await?;
    d.of(format_args!("{listed} compared with get_tuple of each")).tuples(&root, &listed);
    d.finish()
}

/// S09: each listed tuple's parent_config is the full config of its parent (same thread,
/// same namespace, parent id), or none for a checkpoint put without a parent; never the
/// checkpoint itself.
async fn parent_config_is_full_config(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1", "k1", "c2", "k2"]);
    let c1 = cx.put(&at(&t, ""), step(&ids, "c1", json!({}))).await?;
    let k1 = cx.put(&at(&t, "child:1"), step(&ids, "k1", json!({}))).await?;
    cx.put(&c1, step(&ids, "c2", json!({}))).await?;
    cx.put(&k1, step(&ids, "k2", json!({}))).await?;
    let want = [
        ("k2", Some(at(&t, "child:1").with_id(ids.id("k1")))),
        ("c2", Some(at(&t, "").with_id(ids.id("c1")))),
        ("k1", None),
        ("c1", None),
    ];
    let listed = cx.list_all(&t).await?;
    ensure(listed.len() == want.len(), || {
        format!("{listed}: expected 4 tuples, got {:?} ({})", ids.labels(&listed.ids()), ids.legend())
    })?;
    // Each tuple is found by its checkpoint's id: the order is list's other cases' rule.
    let mut d = listed.diffs();
    for (label, parent) in &want {
        match listed.iter().find(|x| x.checkpoint.id == ids.id(label)) {
            Some(tuple) => d
                .of(format_args!("{listed}: tuple {label} ({})", tuple.config))
                .parent_config(parent.as_ref(), tuple.parent_config.as_ref()),
            None => d.of(format_args!("{listed}")).push(format_args!("tuple {label}"), "listed", "not listed"),
        };
    }
    d.finish()
}

/// The same checkpoint id put in two namespaces and in two threads gives separate
/// checkpoints: each scope lists its own metadata, values and writes only.
async fn same_id_in_two_namespaces_and_threads_stays_apart(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = Ids::new(&["x"]);
    let places = [(t.as_str(), "", "t-root"), (t.as_str(), "child:1", "t-child"), (u.as_str(), "", "u-root")];
    for (thread, ns, tag) in places {
        let cfg = cx.put(&at(thread, ns), step(&ids, "x", json!({"run_id": tag})).value("v", json!(tag), 1)).await?;
        cx.put_writes(&cfg, vec![("w", jv(json!(tag)))], &format!("task-{tag}"), "").await?;
    }
    for (thread, ns, want) in [
        (&t, Some(""), vec![("", "t-root")]),
        (&t, Some("child:1"), vec![("child:1", "t-child")]),
        (&t, None, vec![("", "t-root"), ("child:1", "t-child")]),
        (&u, None, vec![("", "u-root")]),
    ] {
        let opts = ListOptions { checkpoint_ns: ns.map(str::to_owned), ..ListOptions::default() };
        let listed = cx.list(thread, &opts).await?;
        let got_ns: Vec<&str> = listed.iter().map(|x| x.config.checkpoint_ns.as_str()).collect();
        let want_ns: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
        let mut d = listed.diffs();
        d.eq("namespaces", &want_ns, &got_ns);
        // Each expected tuple is compared with the listed one of its namespace, wherever it
        // is listed, so a wrong order is the one difference above, not a leak of data.
        for (ns, tag) in &want {
            let Some(tuple) = listed.iter().find(|x| x.config.checkpoint_ns == *ns) else { continue };
            d.of(format_args!("{listed}: tuple ({})", tuple.config))
                .eq("config.thread_id", thread, &tuple.config.thread_id)
                .metadata_key("run_id", &json!(tag), &tuple.metadata)
                .channel_value("v", &jv(json!(tag)), &tuple.checkpoint)
                .writes(
                    "pending_writes",
                    &[pending(&format!("task-{tag}"), "", "w", jv(json!(tag)))],
                    &tuple.pending_writes,
                );
        }
        d.finish()?;
    }
    Ok(())
}
