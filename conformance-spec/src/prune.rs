//! `prune` (CONTRACT §3): `keep_latest` keeps only the newest checkpoint (greatest id, as
//! `get_tuple` without an id picks it) of each (thread, namespace), with its writes and with
//! every channel value it still reads, values stored by older checkpoints included;
//! `delete` removes the threads entirely; other threads are untouched; an empty list and
//! unknown threads are no-ops.
//!
//! The parent config of the kept checkpoint is not checked: the contract does not say
//! whether it still names the pruned parent.

use std::collections::BTreeMap;

use conformance_core::{Capability, CheckpointConfig, ListOptions, PruneStrategy};
use conformance_core::{ERROR, INTERRUPT};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::Checked;
use crate::data::adversarial::ts_against_ids;
use crate::data::{id_of, jv, new_ids, pending, values, Step};

use PruneStrategy::{Delete, KeepLatest};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Prune, needs [Put, List] => [
        #[rules(prune.keep_latest)] keep_latest_keeps_only_newest +[GetTuple] ["test_prune_keep_latest_single_thread"],
        #[rules(prune.keep_latest)] keep_latest_each_thread ["test_prune_keep_latest_multiple_threads"],
        #[rules(prune.keep_latest)] #[uses(Namespaces)] keep_latest_each_namespace ["test_prune_keep_latest_across_namespaces"],
        #[rules(prune.keep_latest)] keep_latest_keeps_writes +[PutWrites, GetTuple] ["test_prune_keep_latest_preserves_writes"],
        #[rules(prune.delete)] delete_removes_thread +[GetTuple] ["test_prune_delete_all"],
        #[rules(prune.others)] leaves_other_threads_untouched +[PutWrites] ["test_prune_preserves_other_threads"],
        #[rules(extended.noop_inputs)] empty_list_is_noop +[PutWrites] ["test_prune_empty_list_noop"],
        #[rules(extended.noop_inputs)] unknown_thread_is_noop +[PutWrites] ["test_prune_nonexistent_noop"],
        #[rules(extended.noop_inputs, prune.keep_latest)] unknown_thread_next_to_known_one,
        #[rules(prune.keep_latest)] keep_latest_reads_values_of_older_checkpoints +[PutWrites, GetTuple],
        #[rules(prune.keep_latest, put.kept_values)] #[should] keep_latest_reads_kept_values_of_older_checkpoints +[PutWrites, GetTuple],
        #[rules(prune.keep_latest)] #[uses(Namespaces)] keep_latest_keeps_values_per_namespace +[GetTuple] -[List],
        #[rules(prune.keep_latest)] keep_latest_keeps_greatest_id,
        #[rules(prune.keep_latest)] keep_latest_drops_writes_of_pruned_checkpoints +[PutWrites, GetTuple] -[List],
        #[rules(prune.keep_latest, put.kept_values)] #[should] keep_latest_later_put_reads_kept_values +[GetTuple] -[List],
        #[rules(prune.delete)] #[uses(Namespaces)] delete_removes_every_namespace +[PutWrites, GetTuple],
        #[rules(prune.delete)] delete_leaves_nothing_behind +[PutWrites, GetTuple] -[List],
        #[rules(prune.keep_latest)] #[uses(Namespaces)] scenario_s15_keep_latest_keeps_what_it_reads +[PutWrites, GetTuple],
        #[rules(prune.keep_latest)] keep_latest_keeps_greatest_id_whatever_the_ts,
    ])
}

/// 4 checkpoints, `keep_latest`: only the last is listed and readable; the others are gone.
async fn keep_latest_keeps_only_newest(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = cx.value_chain(&t, "", 4).await?;
    let latest = cx.get_some(&c[3]).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c[3])]).await?;
    for old in &c[..3] {
        after.get_none(old).await?;
    }
    after.expect_tuple_except_parent(&c[3], &latest).await
}

/// Threads with 3 and 2 checkpoints pruned in one call: each keeps exactly its own last.
async fn keep_latest_each_thread(cx: Cx) -> Checked {
    let (t, u) = (cx.thread("t"), cx.thread("u"));
    let ct = cx.value_chain(&t, "", 3).await?;
    let cu = cx.value_chain(&u, "", 2).await?;
    cx.prune(&[&t, &u], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}, {u}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&ct[2])]).await?;
    after.expect_ids(&u, &ListOptions::all(), &[id_of(&cu[1])]).await
}

/// 3 checkpoints in "" and 2 in "child:1": each namespace keeps exactly its own latest,
/// even though the root's latest is newer than the child's.
async fn keep_latest_each_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let k = cx.value_chain(&t, "child:1", 2).await?;
    let c = cx.value_chain(&t, "", 3).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all().ns(""), &[id_of(&c[2])]).await?;
    after.expect_ids(&t, &ListOptions::all().ns("child:1"), &[id_of(&k[1])]).await?;
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c[2]), id_of(&k[1])]).await
}

/// The latest checkpoint's writes (several tasks, a special channel) survive unchanged.
async fn keep_latest_keeps_writes(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = cx.value_chain(&t, "", 3).await?;
    cx.put_writes(&c[2], vec![("ch", jv(json!("w1"))), (INTERRUPT, jv(json!("q")))], "task-1", "~0").await?;
    cx.put_writes(&c[2], vec![("ch", jv(json!("w2")))], "task-2", "~1").await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c[2])]).await?;
    let want = [
        pending("task-1", "~0", INTERRUPT, jv(json!("q"))),
        pending("task-1", "~0", "ch", jv(json!("w1"))),
        pending("task-2", "~1", "ch", jv(json!("w2"))),
    ];
    after.expect_writes(&c[2], &want).await
}

/// `delete`: nothing of the thread is listed or readable afterwards.
async fn delete_removes_thread(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = cx.value_chain(&t, "", 3).await?;
    cx.prune(&[&t], Delete).await?;
    let after = cx.after(format!("after prune([{t}], delete)"));
    after.expect_ids(&t, &ListOptions::all(), &[]).await?;
    after.get_none(&CheckpointConfig::new(&t)).await?;
    after.get_none(&c[0]).await
}

/// Pruning T (with either strategy) leaves thread U and its writes exactly as it was,
/// while T is pruned.
async fn leaves_other_threads_untouched(cx: Cx) -> Checked {
    let (t, u) = (cx.thread("t"), cx.thread("u"));
    let ct = cx.value_chain(&t, "", 3).await?;
    let cu = cx.value_chain(&u, "", 3).await?;
    cx.put_writes(&cu[0], vec![("ch", jv(json!("u-old"))), (ERROR, jv(json!("e")))], "task-1", "").await?;
    let u_before = cx.list_all(&u).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&ct[2])]).await?;
    after.expect_listed(&u, &u_before).await?;
    cx.prune(&[&t], Delete).await?;
    let after = cx.after(format!("after prune([{t}], delete)"));
    after.expect_ids(&t, &ListOptions::all(), &[]).await?;
    after.expect_listed(&u, &u_before).await
}

/// `prune([], keep_latest)` and `prune([], delete)` return Ok and change nothing (S14).
async fn empty_list_is_noop(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = cx.value_chain(&t, "", 2).await?;
    cx.put_writes(&c[0], vec![("ch", jv(json!("w")))], "task-1", "").await?;
    let before = cx.list_all(&t).await?;
    for strategy in [KeepLatest, Delete] {
        cx.prune(&[], strategy).await?;
        cx.after(format!("after prune([], {strategy})")).expect_listed(&t, &before).await?;
    }
    Ok(())
}

/// Pruning a thread that does not exist returns Ok (with either strategy) and changes no
/// other thread.
async fn unknown_thread_is_noop(cx: Cx) -> Checked {
    let (t, missing) = (cx.thread("main"), cx.thread("missing"));
    let c = cx.value_chain(&t, "", 2).await?;
    cx.put_writes(&c[0], vec![("ch", jv(json!("w")))], "task-1", "").await?;
    let before = cx.list_all(&t).await?;
    for strategy in [KeepLatest, Delete] {
        cx.prune(&[&missing], strategy).await?;
        cx.after(format!("after prune([{missing}], {strategy})")).expect_listed(&t, &before).await?;
    }
    cx.after("after pruning an unknown thread").expect_ids(&missing, &ListOptions::all(), &[]).await
}

/// An unknown thread listed next to a known one does not fail the call: the known thread
/// is pruned (with either strategy).
async fn unknown_thread_next_to_known_one(cx: Cx) -> Checked {
    let (missing, t, u) = (cx.thread("missing"), cx.thread("t"), cx.thread("u"));
    let ct = cx.value_chain(&t, "", 2).await?;
    cx.value_chain(&u, "", 2).await?;
    cx.prune(&[&missing, &t], KeepLatest).await?;
    cx.after(format!("after prune([{missing}, {t}], keep_latest)"))
        .expect_ids(&t, &ListOptions::all(), &[id_of(&ct[1])])
        .await?;
    cx.prune(&[&u, &missing], Delete).await?;
    cx.after(format!("after prune([{u}, {missing}], delete)")).expect_ids(&u, &ListOptions::all(), &[]).await
}

/// c1 stores `a`, c2 stores `b` and carries `a` at its unchanged version, c3 carries both
/// unchanged and stores `c` (as LangGraph's runtime puts them; a saver may store a value
/// only once, with the older checkpoint that first carried it, CONTRACT §2 put): after
/// `keep_latest`, c3 reads exactly as before (values, versions, metadata, writes).
async fn keep_latest_reads_values_of_older_checkpoints(cx: Cx) -> Checked {
    older_values_survive_keep_latest(&cx, true).await
}

/// A SHOULD rule (kept channels, CONTRACT §2 put): as
/// [`keep_latest_reads_values_of_older_checkpoints`], but c2 and c3 keep the unchanged
/// channels without carrying them, so their values are stored by older checkpoints only.
async fn keep_latest_reads_kept_values_of_older_checkpoints(cx: Cx) -> Checked {
    older_values_survive_keep_latest(&cx, false).await
}

/// The two cases above: the unchanged channels `carried`, or kept without a value.
async fn older_values_survive_keep_latest(cx: &Cx, carried: bool) -> Checked {
    let unchanged =
        |step: Step, ch: &str| if carried { step.carry(ch, json!(format!("{ch}@1")), 1) } else { step.keep(ch, 1) };
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("a@1"), 1)).await?;
    let c2 = cx.put(&c1, unchanged(Step::fresh(), "a").value("b", json!("b@1"), 1)).await?;
    let c3 = unchanged(unchanged(Step::fresh(), "a"), "b").value("c", json!("c@1"), 1).seen("n", "a", 1);
    let c3 = cx.put(&c2, c3).await?;
    cx.put_writes(&c3, vec![("a", jv(json!("next")))], "task-1", "").await?;
    let before = cx.after("before prune").get_some(&c3).await?;
    let want = values(&[("a", jv(json!("a@1"))), ("b", jv(json!("b@1"))), ("c", jv(json!("c@1")))]);
    before.diffs().map("checkpoint.channel_values", &want, &before.checkpoint.channel_values).finish()?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c3)]).await?;
    after.expect_tuple_except_parent(&c3, &before).await
}

/// Channel `a` at version 1 is stored with a different value in "" and in "child:1" by the
/// namespace's first checkpoint and carried unchanged by its second; after `keep_latest`
/// each namespace's kept checkpoint reads its own value.
async fn keep_latest_keeps_values_per_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let mut kept = Vec::new();
    for ns in ["", "child:1"] {
        let first = cx
            .put(&CheckpointConfig::new(&t).with_ns(ns), Step::fresh().value("a", json!(format!("a in {ns:?}")), 1))
            .await?;
        let second = Step::fresh().carry("a", json!(format!("a in {ns:?}")), 1);
        kept.push((ns, first.clone(), cx.put(&first, second).await?));
    }
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    for (ns, first, cfg) in &kept {
        after.get_none(first).await?;
        let got = after.get_some(cfg).await?;
        let want = values(&[("a", jv(json!(format!("a in {ns:?}"))))]);
        got.diffs().map("checkpoint.channel_values", &want, &got.checkpoint.channel_values).finish()?;
    }
    Ok(())
}

/// "Newest" is the greatest id, as for `get_tuple` without an id: with checkpoints put out
/// of id order (the greatest first) and a fork (c1 <- c2 and c1 <- c3), only the greatest
/// id survives, not the last put nor every leaf.
async fn keep_latest_keeps_greatest_id(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = new_ids(4);
    let root = CheckpointConfig::new(&t);
    cx.put(&root, Step::new(&ids[3])).await?;
    let c1 = cx.put(&root, Step::new(&ids[0])).await?;
    cx.put(&c1, Step::new(&ids[1])).await?;
    cx.put(&c1, Step::new(&ids[2])).await?;
    cx.prune(&[&t], KeepLatest).await?;
    cx.after(format!("after prune([{t}], keep_latest)")).expect_ids(&t, &ListOptions::all(), &[&ids[3]]).await
}

/// The writes of pruned checkpoints go with them: putting a pruned checkpoint's id again
/// (CONTRACT §2: writes show up once their checkpoint is put) shows none of its old writes.
async fn keep_latest_drops_writes_of_pruned_checkpoints(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let first = Step::fresh();
    let id = first.id().to_owned();
    let c1 = cx.put(&cfg, first).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("old"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    let c2 = cx.put(&c1, Step::fresh()).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.get_none(&c1).await?;
    cx.put(&cfg, Step::new(&id)).await?;
    after.after(format!("putting {id} again")).expect_writes(&c1, &[]).await?;
    after.expect_writes(&c2, &[]).await
}

/// A SHOULD rule (kept channels, CONTRACT §2 put): after `keep_latest`, a new checkpoint on
/// top of the kept one that keeps its channels unchanged without carrying them still reads
/// their values (first stored by a pruned checkpoint).
async fn keep_latest_later_put_reads_kept_values(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("a@1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!("a@1"), 1).value("b", json!("b@1"), 1)).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let c3 = cx.put(&c2, Step::fresh().keep("a", 1).keep("b", 1)).await?;
    let got = cx.after(format!("after prune([{t}], keep_latest) and a put keeping a and b")).get_some(&c3).await?;
    let want = values(&[("a", jv(json!("a@1"))), ("b", jv(json!("b@1")))]);
    got.diffs().map("checkpoint.channel_values", &want, &got.checkpoint.channel_values).finish()?;
    cx.after(format!("after prune([{t}], keep_latest)")).get_none(&c1).await
}

/// `delete` removes checkpoints and writes in every namespace of the thread.
async fn delete_removes_every_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let mut firsts = Vec::new();
    for ns in ["", "child:1", "child:2"] {
        let c = cx.value_chain(&t, ns, 2).await?;
        cx.put_writes(&c[1], vec![("ch", jv(json!(ns)))], "task-1", "").await?;
        firsts.push(c);
    }
    cx.prune(&[&t], Delete).await?;
    let after = cx.after(format!("after prune([{t}], delete)"));
    after.expect_ids(&t, &ListOptions::all(), &[]).await?;
    for c in &firsts {
        after.get_none(&c[1].clone().without_id()).await?;
        after.get_none(&c[1]).await?;
    }
    Ok(())
}

/// After `delete`, nothing comes back: putting the same checkpoint id again shows none of
/// the old writes, and a channel kept unchanged at the old version has no value (the old
/// value is gone; CONTRACT §2 put: a channel without a stored value is absent).
async fn delete_leaves_nothing_behind(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let first = Step::fresh().value("a", json!("old"), 1);
    let id = first.id().to_owned();
    let c1 = cx.put(&cfg, first).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("old"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.prune(&[&t], Delete).await?;
    let again = cx.put(&cfg, Step::new(&id).keep("a", 1)).await?;
    let got =
        cx.after(format!("after prune([{t}], delete) and putting {id} again keeping a@1")).get_some(&again).await?;
    got.diffs()
        .eq("number of pending_writes", &0, &got.pending_writes.len())
        .map("checkpoint.channel_values", &BTreeMap::new(), &got.checkpoint.channel_values)
        .finish()
}

/// Scenario S15 (docs/reference/bug-scenarios.md): T has c1 <- c2 <- c3 in "" and
/// k1 <- k2 in "child:1"; channel `a` is changed only at c1 (c2 and c3 carry it at its
/// unchanged version); a write on c3; thread U is untouched; `prune([T], keep_latest)`.
/// `list(T, "")` = [c3], `list(T, "child:1")` = [k2]; c3 still reads `a`; c3's write is
/// kept; U is unchanged.
async fn scenario_s15_keep_latest_keeps_what_it_reads(cx: Cx) -> Checked {
    let (t, u) = (cx.thread("T"), cx.thread("U"));
    let root = CheckpointConfig::new(&t);
    let c1 = cx.put(&root, Step::fresh().value("a", json!("a@c1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!("a@c1"), 1).value("b", json!(2), 1)).await?;
    let c3 = cx.put(&c2, Step::fresh().carry("a", json!("a@c1"), 1).value("b", json!(3), 2)).await?;
    cx.put_writes(&c3, vec![("b", jv(json!("w")))], "task-1", "").await?;
    let k1 = cx.put(&root.clone().with_ns("child:1"), Step::fresh().value("k", json!(1), 1)).await?;
    let k2 = cx.put(&k1, Step::fresh().value("k", json!(2), 2)).await?;
    cx.value_chain(&u, "", 2).await?;
    let u_before = cx.list_all(&u).await?;
    let c3_before = cx.get_some(&c3).await?;
    cx.prune(&[&t], KeepLatest).await?;
    let after = cx.after(format!("after prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all().ns(""), &[id_of(&c3)]).await?;
    after.expect_ids(&t, &ListOptions::all().ns("child:1"), &[id_of(&k2)]).await?;
    let got = after.get_some(&c3).await?;
    got.diffs()
        .channel_value("a", &jv(json!("a@c1")), &got.checkpoint)
        .tuple_except_parent(&c3_before, &got)
        .finish()?;
    after.expect_writes(&c3, &[pending("task-1", "", "b", jv(json!("w")))]).await?;
    after.expect_listed(&u, &u_before).await
}

/// CONTRACT §3 prune ("keeps the newest checkpoint") read as get_tuple's "latest": the
/// greatest id, whatever the `ts`. A chain c0 <- c1 <- c2 whose `ts` decrease as the ids
/// increase ([`ts_against_ids`]) keeps c2 (the greatest id), not c0 (the greatest `ts`).
async fn keep_latest_keeps_greatest_id_whatever_the_ts(cx: Cx) -> Checked {
    let t = cx.thread("ts");
    let ids = new_ids(3);
    let ts = ts_against_ids(ids.len());
    let mut parent = CheckpointConfig::new(&t);
    for (id, ts) in ids.iter().zip(&ts) {
        parent = cx.put(&parent, Step::new(id).with(|c| c.ts.clone_from(ts))).await?;
    }
    cx.prune(&[&t], KeepLatest).await?;
    let after =
        cx.after(format!("after putting a chain of 3 with ts {ts:?} (against id order) and prune([{t}], keep_latest)"));
    after.expect_ids(&t, &ListOptions::all(), &[&ids[2]]).await
}

/// The case's call of this capability's method ([`Cx`]'s calls of the base methods are in
/// `crate::calls`).
impl Cx {
    /// `prune(thread_ids, strategy)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn prune(&self, thread_ids: &[&str], strategy: PruneStrategy) -> Checked {
        let ids: Vec<String> = thread_ids.iter().map(|s| (*s).to_owned()).collect();
        let call = conformance_core::Call::Prune { thread_ids: ids.clone(), strategy };
        self.call(call, self.saver().prune(&ids, strategy)).await.or_fail().map(|_| ())
    }
}
