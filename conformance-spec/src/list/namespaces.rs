//! `list` across namespaces (CONTRACT §2 list, "Scope" and "Order"): the only `list` cases
//! that put into `child:*`, each marked `#[uses(Namespaces)]` in the parent module's
//! `cases()`, so a saver that stores the root namespace only does not run them.
//!
//! Order within a namespace (id descending) is MUST; one id order across namespaces (so
//! `limit` and `before` cut by id across them, equal ids namespace ascending) is SHOULD,
//! judged only by the `#[should]` cases here ([`Cx::in_global_order`]). LangGraph's
//! `InMemorySaver` lists namespace by namespace; every MUST case compares the namespaces'
//! interleaving freely ([`Cx::expect_list_ns`], [`crate::compare::Diffs::tuples`]).

use conformance_core::ListOptions;
use serde_json::json;

use super::step;
use crate::calls::Cx;
use crate::compare::{Checked, Diffs, Entry, Order};
use crate::data::adversarial::{shown, Class};
use crate::data::{at, id_of, jv, pending, Ids, Step};

/// Puts each `(namespace, label)` of `items` on `thread`, without parents, in that order.
async fn put_at(cx: &Cx, ids: &Ids, thread: &str, items: &[(&str, &str)]) -> Checked {
    for (ns, label) in items {
        cx.put(&at(thread, ns), step(ids, label, json!({}))).await?;
    }
    Ok(())
}

/// A namespace scope returns that namespace only: the root `""` is a namespace like any
/// other, and neither a sibling nor a namespace sharing a prefix leaks in.
pub(super) async fn namespace_scope_is_exact(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r", "k1", "k2"]);
    put_at(&cx, &ids, &t, &[("", "r"), ("child:1", "k1"), ("child:2", "k2")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns(""), &[("", "r")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1"), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:2"), &[("child:2", "k2")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child"), &[]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:3"), &[]).await
}

/// `limit` applies after the namespace scope: the newest of that namespace, even when a
/// newer checkpoint exists in another one. Without a namespace it caps the whole result:
/// 3 of the 4, each namespace's newest first (which 3 is the SHOULD case
/// [`limit_is_global_across_namespaces`]'s rule).
pub(super) async fn limit_applies_after_namespace_scope(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r0", "r1", "k0", "k1"]);
    put_at(&cx, &ids, &t, &[("", "r0"), ("", "r1"), ("child:1", "k0"), ("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("").limit(1), &[("", "r1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1").limit(1), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1").limit(2), &[("child:1", "k1"), ("child:1", "k0")])
        .await?;
    let listed = cx.list(&t, &ListOptions::all().limit(3)).await?;
    let mut d = listed.diffs();
    d.configs_match(&listed).eq("number of tuples", &3, &listed.len());
    for (ns, newest) in [("", ["r1", "r0"]), ("child:1", ["k1", "k0"])] {
        let got: Vec<String> =
            listed.iter().filter(|x| x.config.checkpoint_ns == ns).map(|x| ids.label(&x.checkpoint.id)).collect();
        let want: Vec<String> = newest.iter().take(got.len()).map(|l| (*l).to_owned()).collect();
        d.eq(format_args!("the newest of namespace {ns:?} first ({})", ids.legend()), &want, &got);
    }
    d.finish()
}

/// CONTRACT §2 list, a SHOULD rule: without a namespace, `limit` keeps the newest ids across
/// every namespace, not a share of each nor one namespace first. Root holds c0, c2, c4, c5
/// and child:1 holds c1, c3 (interleaved by id, the two newest both in the root); also the
/// case's limit-3 listing of `limit_applies_after_namespace_scope`'s data.
pub(super) async fn limit_is_global_across_namespaces(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3", "c4", "c5"]);
    put_at(&cx, &ids, &t, &[("", "c0"), ("child:1", "c1"), ("", "c2"), ("child:1", "c3"), ("", "c4"), ("", "c5")])
        .await?;
    let newest = [("", "c5"), ("", "c4"), ("child:1", "c3"), ("", "c2"), ("child:1", "c1"), ("", "c0")];
    for limit in [1, 2, 3, 4] {
        cx.in_global_order().expect_list_ns(&ids, &t, &ListOptions::all().limit(limit), &newest[..limit]).await?;
    }
    let u = cx.thread("newer-child");
    let more = Ids::new(&["r0", "r1", "k0", "k1"]);
    put_at(&cx, &more, &u, &[("", "r0"), ("", "r1"), ("child:1", "k0"), ("child:1", "k1")]).await?;
    let want = [("child:1", "k1"), ("child:1", "k0"), ("", "r1")];
    cx.in_global_order().expect_list_ns(&more, &u, &ListOptions::all().limit(3), &want).await
}

/// CONTRACT §2 list, a SHOULD rule: `before` cuts by id across every namespace when no
/// namespace is given, in one id order.
pub(super) async fn before_applies_across_namespaces(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3"]);
    put_at(&cx, &ids, &t, &[("", "c0"), ("", "c2"), ("child:1", "c1"), ("child:1", "c3")]).await?;
    let want = [("", "c2"), ("child:1", "c1"), ("", "c0")];
    cx.in_global_order().expect_list_ns(&ids, &t, &ListOptions::all().before(ids.id("c3")), &want).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1").before(ids.id("c3")), &[("child:1", "c1")]).await
}

/// S10: the root namespace `""` is one namespace, not "any namespace"; only a missing
/// namespace (`None`) lists every namespace.
pub(super) async fn root_namespace_is_not_every_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r1", "k1"]);
    put_at(&cx, &ids, &t, &[("", "r1"), ("child:1", "k1")]).await?;
    let root = cx.get_some(&at(&t, "")).await?;
    root.expect_eq(format_args!("checkpoint id ({})", ids.legend()), "r1", ids.label(&root.checkpoint.id).as_str())?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns(""), &[("", "r1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all().ns("child:1"), &[("child:1", "k1")]).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all(), &[("child:1", "k1"), ("", "r1")]).await
}

/// CONTRACT §2 list, a SHOULD rule: without a namespace, every namespace is listed in one
/// order by id descending, not grouped by namespace (puts grouped by namespace catch a saver
/// that concatenates).
pub(super) async fn all_namespaces_ordered_by_id_globally(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2", "c3", "c4"]);
    put_at(&cx, &ids, &t, &[("", "c0"), ("", "c3"), ("child:1", "c1"), ("child:1", "c4"), ("child:2", "c2")]).await?;
    let want = [("child:1", "c4"), ("", "c3"), ("child:2", "c2"), ("child:1", "c1"), ("", "c0")];
    cx.in_global_order().expect_list_ns(&ids, &t, &ListOptions::all(), &want).await
}

/// CONTRACT §2 list, a SHOULD rule: equal ids in different namespaces come back namespace
/// ascending (puts in another order), between the newer and older ids, with or without a
/// checkpoint id scope.
pub(super) async fn equal_ids_ordered_by_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["old", "x", "new"]);
    put_at(&cx, &ids, &t, &[("child:2", "x"), ("", "x"), ("child:1", "x"), ("child:2", "old"), ("", "new")]).await?;
    let want = [("", "new"), ("", "x"), ("child:1", "x"), ("child:2", "x"), ("child:2", "old")];
    cx.in_global_order().expect_list_ns(&ids, &t, &ListOptions::all(), &want).await?;
    let scoped = [("", "x"), ("child:1", "x"), ("child:2", "x")];
    cx.in_global_order().expect_list_ns(&ids, &t, &ListOptions::all().id(ids.id("x")), &scoped).await
}

/// S09: each listed tuple's parent_config is the full config of its parent (same thread,
/// same namespace, parent id), or none for a checkpoint put without a parent; never the
/// checkpoint itself. Each tuple is found by namespace and id: the order is other cases'.
pub(super) async fn parent_config_is_full_config(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1", "k1", "c2", "k2"]);
    let c1 = cx.put(&at(&t, ""), step(&ids, "c1", json!({}))).await?;
    let k1 = cx.put(&at(&t, "child:1"), step(&ids, "k1", json!({}))).await?;
    cx.put(&c1, step(&ids, "c2", json!({}))).await?;
    cx.put(&k1, step(&ids, "k2", json!({}))).await?;
    let want = [
        ("child:1", "k2", Some(at(&t, "child:1").with_id(ids.id("k1")))),
        ("", "c2", Some(at(&t, "").with_id(ids.id("c1")))),
        ("child:1", "k1", None),
        ("", "c1", None),
    ];
    let listed = cx.list_all(&t).await?;
    let mut d = listed.diffs();
    let entries: Vec<Entry> =
        want.iter().map(|(ns, l, _)| Entry::new(*ns, ids.id(l), format_args!("({ns:?}, {l:?})"))).collect();
    let got: Vec<Entry> = listed
        .iter()
        .map(|x| {
            let (ns, label) = (&x.config.checkpoint_ns, ids.label(&x.checkpoint.id));
            Entry::new(ns, &x.checkpoint.id, format_args!("({ns:?}, {label:?})"))
        })
        .collect();
    d.configs_match(&listed).entries("(ns, id)", &entries, &got, Order::WithinNamespace, Some(&ids.legend()));
    for (ns, label, parent) in &want {
        let found = listed.iter().find(|x| x.config.checkpoint_ns == *ns && x.checkpoint.id == ids.id(label));
        if let Some(tuple) = found {
            d.of(format_args!("{listed}: tuple {label} ({})", tuple.config))
                .parent_config(parent.as_ref(), tuple.parent_config.as_ref());
        }
    }
    d.finish()
}

/// The same checkpoint id put in two namespaces and in two threads gives separate
/// checkpoints: each scope (namespace, all namespaces, the checkpoint id) lists its own
/// tuples only, each with its own metadata, values and writes, equal to what `get_tuple`
/// returns for it.
pub(super) async fn same_id_in_two_namespaces_and_threads_stays_apart(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = Ids::new(&["x"]);
    let places = [(t.as_str(), "", "t-root"), (t.as_str(), "child:1", "t-child"), (u.as_str(), "", "u-root")];
    let mut stored = Vec::new();
    for (thread, ns, tag) in places {
        let cfg = cx.put(&at(thread, ns), step(&ids, "x", json!({"run_id": tag})).value("v", json!(tag), 1)).await?;
        cx.put_writes(&cfg, vec![("w", jv(json!(tag)))], &format!("task-{tag}"), "").await?;
        let got = cx.get_some(&cfg).await?;
        let mut d = got.diffs();
        d.metadata_key("run_id", &json!(tag), &got.metadata)
            .channel_value("v", &jv(json!(tag)), &got.checkpoint)
            .writes("pending_writes", &[pending(&format!("task-{tag}"), "", "w", jv(json!(tag)))], &got.pending_writes);
        d.finish()?;
        stored.push(got.into_value());
    }
    let of = |picks: &[usize]| picks.iter().map(|i| stored[*i].clone()).collect::<Vec<_>>();
    let x = ids.id("x");
    let scopes = [
        (&t, ListOptions::all().ns(""), of(&[0])),
        (&t, ListOptions::all().ns("child:1"), of(&[1])),
        (&t, ListOptions::all(), of(&[0, 1])),
        (&t, ListOptions::all().id(x), of(&[0, 1])),
        (&t, ListOptions::all().ns("child:1").id(x), of(&[1])),
        (&u, ListOptions::all(), of(&[2])),
    ];
    let mut d = Diffs::new();
    for (thread, options, want) in &scopes {
        let listed = cx.list(thread, options).await?;
        d.of(&listed).tuples(want, &listed);
    }
    d.finish()
}

/// CONTRACT §1 "Identifiers are opaque" and §2 list ("its namespace if given"), issue 36:
/// namespaces that differ only by `LIKE`/glob metacharacters ([`Class::Pattern`]: `"sub%"`,
/// `"sub_"`, `"sub*"`, `"sub?"`, `"sub[b]"`, `"subab"`) or by a prefix ([`Class::Prefix`]:
/// `"sub1"`, `"sub_"`, `"sub10"`, `"sub"`), one checkpoint each, one thread per class:
/// listing one namespace gives its own checkpoint only.
pub(super) async fn namespace_scope_is_no_pattern_or_prefix(cx: Cx) -> Checked {
    for class in [Class::Pattern, Class::Prefix] {
        let t = cx.thread("pattern");
        let mut stored = Vec::new();
        for ns in class.variants("sub") {
            let c = cx.put(&at(&t, &ns), Step::fresh()).await?;
            stored.push((ns, id_of(&c).to_owned()));
        }
        let all: Vec<String> = stored.iter().map(|(ns, _)| shown(ns)).collect();
        let after =
            cx.after(format!("after one checkpoint in each of the namespaces [{}] ({})", all.join(", "), class.name()));
        for (ns, id) in &stored {
            after.expect_ids(&t, &ListOptions::all().ns(ns.clone()), &[id]).await?;
        }
    }
    Ok(())
}
