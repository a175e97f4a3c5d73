//! `list` (CONTRACT §2 list): scope (thread, namespace, checkpoint id), `filter`,
//! `before`, `limit`, order, and tuples equal to what `get_tuple` returns.
//!
//! Every case compares the exact ids (and namespaces) that come back, in order: a count
//! alone would pass a saver that returns the wrong checkpoints. Listings are compared tuple
//! by tuple, matched by namespace and id ([`crate::compare::Diffs::tuples`]), in id order
//! within each namespace (MUST); only the SHOULD cases of `namespaces.rs` judge how
//! namespaces interleave. Every checkpoint carries LangGraph-shaped metadata
//! ([`crate::data::metadata`]), and a case that needs to tell checkpoints apart by metadata
//! uses a key of its own. `namespaces.rs` holds the cases about namespaces, the only ones
//! that put into `child:*`.

mod filter;
mod namespaces;

use conformance_core::{Capability, Failure, ListOptions, ERROR};
use serde_json::{json, Value};

use crate::calls::Cx;
use crate::compare::{Checked, Diffs};
use crate::data::adversarial::{byte_order_pairs, shown, ts_against_ids};
use crate::data::{at, jv, metadata, new_id, pending, Ids, Step};
use filter::*;
use namespaces::*;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::List, needs [Put] => [
        #[rules(list.scope)] lists_every_checkpoint_of_thread ["test_list_all"],
        #[rules(list.scope)] scope_is_the_thread ["test_list_by_thread"],
        #[rules(list.scope)] #[uses(Namespaces)] namespace_scope_is_exact ["test_list_by_namespace", "test_list_multiple_namespaces"],
        #[rules(list.order)] newest_id_first ["test_list_ordering"],
        #[rules(list.filter)] filter_single_key ["test_list_metadata_filter_single_key"],
        #[rules(list.filter)] filter_integer_value ["test_list_metadata_filter_step"],
        #[rules(list.filter)] filter_all_keys_must_match ["test_list_metadata_filter_multiple_keys"],
        #[rules(list.filter)] filter_without_match_returns_nothing ["test_list_metadata_filter_no_match"],
        #[rules(list.filter)] filter_custom_keys ["test_list_metadata_custom_keys"],
        #[rules(list.before)] before_is_strict ["test_list_before"],
        #[rules(list.limit)] limit_keeps_newest ["test_list_limit"],
        #[rules(list.limit, list.before)] limit_applies_after_before ["test_list_limit_plus_before"],
        #[rules(list.filter, list.scope)] filter_scoped_to_thread ["test_list_combined_thread_and_filter"],
        #[rules(list.scope)] unknown_thread_returns_nothing ["test_list_empty_result"],
        #[rules(list.tuples)] tuples_carry_pending_writes +[PutWrites, GetTuple] ["test_list_includes_pending_writes"],
        #[rules(list.limit)] limit_zero_returns_nothing,
        #[rules(list.limit)] limit_larger_than_count_returns_all,
        #[rules(list.limit, list.filter)] limit_applies_after_filter,
        #[rules(list.limit, list.scope)] #[uses(Namespaces)] limit_applies_after_namespace_scope,
        #[rules(list.order_across, list.limit)] #[should] #[uses(Namespaces)] limit_is_global_across_namespaces,
        #[rules(list.before)] before_unknown_id_still_cuts,
        #[rules(list.before, list.filter)] before_with_filter,
        #[rules(list.order_across, list.before)] #[should] #[uses(Namespaces)] before_applies_across_namespaces,
        #[rules(list.before)] before_cuts_by_id_not_insertion_order,
        #[rules(list.order)] ids_listed_in_byte_order,
        #[rules(put.reput, list.scope)] reput_is_listed_once,
        #[rules(list.filter)] filter_numbers_by_value,
        #[rules(list.filter)] #[uses(WideNumbers)] filter_wide_numbers_by_value,
        #[rules(list.filter_strict)] #[should] filter_booleans_never_equal_numbers,
        #[rules(list.filter)] filter_strings_exact,
        #[rules(list.filter_strict)] #[should] filter_null_matches_missing_or_null,
        #[rules(list.filter_strict)] #[should] filter_nested_values_by_json_equality,
        #[rules(list.filter)] empty_filter_matches_everything,
        #[rules(list.filter)] filter_missing_key_never_matches_value,
        #[rules(list.filter, ids.opaque)] filter_key_is_top_level_literal,
        #[rules(list.scope)] #[uses(Namespaces)] root_namespace_is_not_every_namespace +[GetTuple],
        #[rules(list.order_across)] #[should] #[uses(Namespaces)] all_namespaces_ordered_by_id_globally,
        #[rules(list.order_across)] #[should] #[uses(Namespaces)] equal_ids_ordered_by_namespace,
        #[rules(list.scope)] scope_by_checkpoint_id,
        #[rules(list.order)] order_by_id_not_insertion,
        #[rules(list.tuples)] listed_tuples_equal_get_tuple +[PutWrites, GetTuple],
        #[rules(list.tuples, tuple.parent_config)] #[uses(Namespaces)] parent_config_is_full_config,
        #[rules(list.scope, list.tuples)] #[uses(Namespaces)] same_id_in_two_namespaces_and_threads_stays_apart +[PutWrites, GetTuple],
        #[rules(list.tuples, put.stored)] fork_parents_are_listed_as_put +[GetTuple],
        #[rules(list.scope, ids.opaque)] #[uses(Namespaces)] namespace_scope_is_no_pattern_or_prefix,
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
/// has a checkpoint the filter names (marked by a key of its own; whether a filter on it
/// matches there is the filter cases' rule).
async fn unknown_thread_returns_nothing(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["a"]);
    // LangGraph-shaped metadata only (no marker key: the rule is the thread's scope).
    let md = json!({"source": "update", "step": 4242});
    put_unchained(&cx, &ids, &t, &[("a", md.clone())]).await?;
    let unknown = cx.thread("unknown");
    cx.expect_list(&ids, &unknown, &filter(md), &[]).await?;
    cx.expect_list(&ids, &unknown, &ListOptions::all(), &[]).await
}

/// S08: a listed tuple carries its pending writes, all of them, in get_tuple order
/// (task_path, task_id, index), equal to what get_tuple returns. The tuple is found by its
/// id, wherever it is listed.
async fn tuples_carry_pending_writes(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1"]);
    let c0 = cx.put(&at(&t, ""), step(&ids, "c0", json!({}))).await?;
    let cfg = cx.put(&c0, step(&ids, "c1", json!({"source": "loop", "step": 1}))).await?;
    cx.put_writes(&cfg, vec![("x", jv(json!("vx"))), ("y", jv(json!("vy")))], "task-b", "").await?;
    cx.put_writes(&cfg, vec![("ch", jv(json!("val"))), (ERROR, jv(json!("boom")))], "task-a", "").await?;
    cx.put_writes(&c0, vec![("z", jv(json!("vz")))], "task-c", "").await?;
    let w = |task: &str, ch: &str, v: &str| pending(task, "", ch, jv(json!(v)));
    let want =
        vec![w("task-a", ERROR, "boom"), w("task-a", "ch", "val"), w("task-b", "x", "vx"), w("task-b", "y", "vy")];
    let listed = cx.list_all(&t).await?;
    let mut d = listed.diffs();
    if let Some(c1) = listed.iter().find(|x| x.checkpoint.id == ids.id("c1")) {
        d.of(format_args!("{listed}: tuple c1 ({})", c1.config)).writes("pending_writes", &want, &c1.pending_writes);
    }
    let by_id = [cx.get_some(&cfg).await?.into_value(), cx.get_some(&c0).await?.into_value()];
    d.of(format_args!("{listed} compared with get_tuple of each")).tuples(&by_id, &listed);
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

// ---------------------------------------------------------------------------------------
// Checkpoint id scope, order, tuples (the cases about namespaces are in `namespaces.rs`)
// ---------------------------------------------------------------------------------------

/// A checkpoint id scope lists only that id; an unknown id lists nothing; `before` still
/// applies. (The same id in several namespaces is
/// [`same_id_in_two_namespaces_and_threads_stays_apart`]'s rule.)
async fn scope_by_checkpoint_id(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().id(ids.id("c1")), &["c1"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().ns("").id(ids.id("c1")), &["c1"]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().ns("").id(ids.id("c3")), &["c3"]).await?;
    let unknown = Ids::new(&["unknown"]);
    cx.expect_list(&ids, &t, &ListOptions::all().id(unknown.id("unknown")), &[]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().ns("").id(ids.id("c1")).before(ids.id("c1")), &[]).await?;
    cx.expect_list(&ids, &t, &ListOptions::all().id(ids.id("c1")).before(ids.id("c2")), &["c1"]).await
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
/// checkpoint (values included, those carried at an unchanged version too), metadata,
/// parent_config and pending_writes, with and without the namespace.
async fn listed_tuples_equal_get_tuple(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2"]);
    let c0 = cx.put(&at(&t, ""), step(&ids, "c0", json!({"step": 0})).value("a", json!("a0"), 1)).await?;
    let c1 =
        cx.put(&c0, step(&ids, "c1", json!({"step": 1})).carry("a", json!("a0"), 1).value("b", json!("b1"), 1)).await?;
    let c2 =
        cx.put(&c1, step(&ids, "c2", json!({"step": 2})).value("a", json!("a2"), 2).carry("b", json!("b1"), 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!("w1"))), (ERROR, jv(json!("e")))], "task-1", "p:1").await?;
    cx.put_writes(&c1, vec![("b", jv(json!("w2")))], "task-0", "p:2").await?;
    cx.put_writes(&c2, vec![("b", jv(json!("w3")))], "task-2", "").await?;

    let mut by_id = Vec::new();
    for cfg in [&c2, &c1, &c0] {
        by_id.push(cx.get_some(cfg).await?.into_value());
    }
    let mut d = Diffs::new();
    for options in [ListOptions::all(), ListOptions::all().ns("")] {
        let listed = cx.list(&t, &options).await?;
        d.of(format_args!("{listed} compared with get_tuple of each")).tuples(&by_id, &listed);
    }
    d.finish()
}

/// CONTRACT §2 list ("checkpoint id descending") and §1 (strings by bytes): ids whose order
/// by bytes is not their order by UTF-16 code units nor case-insensitively
/// ([`byte_order_pairs`]), put in another order with `ts` against id order, list by bytes,
/// greatest first; `before` cuts by bytes too.
async fn ids_listed_in_byte_order(cx: Cx) -> Checked {
    let t = cx.thread("order");
    let p = new_id();
    let mut ids: Vec<String> =
        byte_order_pairs().iter().flat_map(|(s, g, _)| [format!("{p}{s}"), format!("{p}{g}")]).collect();
    ids.sort();
    let ts = ts_against_ids(ids.len());
    for i in [1, 3, 0, 2] {
        cx.put(&at(&t, ""), Step::new(&ids[i]).with(|c| c.ts.clone_from(&ts[i]))).await?;
    }
    let shown_ids: Vec<String> = ids.iter().map(|i| shown(i)).collect();
    let cx = cx.after(format!("after putting [{}] (ascending by bytes)", shown_ids.join(", ")));
    let desc: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    cx.expect_ids(&t, &ListOptions::all(), &desc).await?;
    cx.expect_ids(&t, &ListOptions::all().before(ids[2].clone()), &desc[2..]).await
}

/// CONTRACT §2 put ("putting an id that already exists replaces its checkpoint") and list:
/// a checkpoint put twice is listed once.
async fn reput_is_listed_once(cx: Cx) -> Checked {
    let t = cx.thread("reput");
    let ids = Ids::new(&["c0", "c1"]);
    let c0 = cx.put(&at(&t, ""), step(&ids, "c0", json!({}))).await?;
    cx.put(&c0, step(&ids, "c1", json!({}))).await?;
    cx.put(&c0, step(&ids, "c1", json!({"again": true}))).await?;
    cx.put(&at(&t, ""), step(&ids, "c0", json!({"again": true}))).await?;
    cx.after("after putting c0, c1, c1 again, c0 again").expect_list(&ids, &t, &ListOptions::all(), &["c1", "c0"]).await
}

/// CONTRACT §2 put ("the parent is `config.checkpoint_id`"), list ("each tuple carries
/// get_tuple's parent_config") and get_tuple ("the greatest id"), on a forked history:
/// c0 <- c1 <- c2, then f1 and f2 both children of c1 (no longer the latest) and g a child
/// of c0. Each listed tuple names the parent its put named, never the next older id of its
/// namespace; the listing has each checkpoint once, greatest id first, and the latest is g.
async fn fork_parents_are_listed_as_put(cx: Cx) -> Checked {
    let t = cx.thread("fork");
    let ids = Ids::new(&["c0", "c1", "c2", "f1", "f2", "g"]);
    let c0 = cx.put(&at(&t, ""), step(&ids, "c0", json!({}))).await?;
    let c1 = cx.put(&c0, step(&ids, "c1", json!({}))).await?;
    cx.put(&c1, step(&ids, "c2", json!({}))).await?;
    for (label, parent) in [("f1", &c1), ("f2", &c1), ("g", &c0)] {
        cx.put(parent, step(&ids, label, json!({}))).await?;
    }
    let parents = [("c1", "c0"), ("c2", "c1"), ("f1", "c1"), ("f2", "c1"), ("g", "c0")];
    let cx = cx.after(format!("after forking f1 and f2 from c1 and g from c0 ({})", ids.legend()));
    let listed = cx.list_all(&t).await?;
    let mut d = listed.diffs();
    for tuple in listed.iter() {
        let label = ids.label(&tuple.checkpoint.id);
        let want = parents.iter().find(|(child, _)| *child == label).map(|(_, p)| at(&t, "").with_id(ids.id(p)));
        d.of(format_args!("{listed}: tuple {label}")).parent_config(want.as_ref(), tuple.parent_config.as_ref());
    }
    d.finish()?;
    cx.expect_list(&ids, &t, &ListOptions::all(), &["g", "f2", "f1", "c2", "c1", "c0"]).await?;
    let latest = cx.get_some(&at(&t, "")).await?;
    latest
        .diffs()
        .eq(format_args!("checkpoint.id ({})", ids.legend()), &"g".to_owned(), &ids.label(&latest.checkpoint.id))
        .finish()
}
