//! `delta_channel_history` (CONTRACT §3): for each requested channel, `writes` (oldest
//! first) and an optional `seed`. The target is resolved as `get_tuple` resolves it (the
//! greatest id when the config names none); the walk follows `parent_config` links from the
//! target's parent; at each ancestor it first collects the ancestor's pending writes on the
//! channel (in `get_tuple` order: task_path, task_id, index), then, if the ancestor reads a
//! value for the channel, that value is the seed and the walk stops for that channel. The
//! target's own writes are excluded; a channel that reaches the root without a value has no
//! seed; no channels requested gives an empty map.
//!
//! **Missing target.** When the config names a checkpoint that `get_tuple` does not find
//! (or the thread has none), there is nothing to walk: the result still has one entry per
//! requested channel, each with no writes and no seed, and the call returns Ok (unknown
//! inputs are no-ops, CONTRACT §3). The case `missing_target_gives_empty_entries` checks this.
//!
//! Writes and seeds are compared exactly (task id, task path, channel, type tag and bytes).

use std::collections::BTreeMap;

use conformance_core::{
    Capability, ChannelVersion, CheckpointConfig, DeltaChannelHistory, PendingWrite, TypedValue, INTERRUPT,
};
use serde_json::{json, Value};

use crate::calls::{Cx, Reply};
use crate::compare::Checked;
use crate::data::adversarial::{every_variant, ts_against_ids, Class};
use crate::data::{at, id_of, jv, new_id, new_ids, pending, Step};
use crate::Failure;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::DeltaChannelHistory, needs [Put, PutWrites] => [
        #[rules(delta.order)] writes_oldest_first ["test_history_returns_writes_oldest_first"],
        #[rules(delta.seed)] seed_is_nearest_value ["test_history_seed_is_nearest_snapshot"],
        #[rules(delta.exclude_target)] excludes_target_writes ["test_history_excludes_target_pending_writes"],
        #[rules(delta.seed)] channels_stop_independently ["test_history_multi_channel"],
        #[rules(delta.channels)] no_channels_gives_empty_map ["test_history_empty_channels_returns_empty"],
        #[rules(delta.seed)] no_seed_when_root_reached ["test_history_walk_to_root_no_seed"],
        #[rules(delta.seed)] plain_value_is_a_seed ["test_history_migration_plain_value_as_seed"],
        #[rules(delta.seed)] seed_ancestor_writes_included ["test_history_seed_ancestor_own_writes_are_replayed"],
        #[rules(delta.target)] #[uses(Namespaces)] works_in_child_namespace,
        #[rules(delta.target, delta.walk)] #[uses(Namespaces)] same_ids_elsewhere_do_not_leak,
        #[rules(delta.walk)] follows_parent_links_on_forks,
        #[rules(delta.walk)] follows_parent_links_not_id_order,
        #[rules(delta.order)] #[uses(TaskPathOnWrites)] several_tasks_in_get_tuple_order,
        #[rules(delta.missing_target)] missing_target_gives_empty_entries,
        #[rules(delta.target)] no_checkpoint_id_resolves_latest,
        #[rules(delta.walk, delta.exclude_target)] target_own_value_is_not_seed,
        #[rules(delta.channels)] one_entry_per_requested_channel,
        #[rules(delta.seed, put.kept_values)] #[should] seed_found_through_unchanged_version,
        #[rules(delta.seed, put.emptied)] empty_channel_is_not_seed,
        #[rules(delta.walk)] older_target_ignores_descendants,
        #[rules(delta.walk, put.reput)] follows_replaced_parent,
        #[rules(delta.order, delta.walk)] long_chain_in_order,
        #[rules(delta.seed)] seed_without_any_write -[PutWrites],
        #[rules(delta.channels, ids.opaque)] channels_of_every_class_stay_apart,
        #[rules(delta.target)] no_checkpoint_id_resolves_greatest_id_whatever_the_ts,
    ])
}

/// The snapshot value the chain stores at a snapshot step: opaque bytes with a non-JSON tag,
/// so a saver must return it byte for byte.
fn snap(label: &str, step: i64) -> TypedValue {
    TypedValue::new("delta_snapshot", format!("{label}snapshot@{step}").into_bytes())
}

/// The value the chain writes at a non-snapshot step.
fn step_value(label: &str, step: i64) -> Value {
    if label.is_empty() {
        json!(step)
    } else {
        json!(format!("{label}{step}"))
    }
}

/// The pending write the chain makes at non-snapshot step `step`.
fn step_write(channel: &str, label: &str, step: i64) -> PendingWrite {
    pending(&format!("task-{step}"), "", channel, jv(step_value(label, step)))
}

/// Upstream's delta chain, on the given ids: checkpoint i (metadata `step` = i, empty `ts`)
/// is the child of checkpoint i-1. At a snapshot step it stores `snap(label, i)` for
/// `channel` at version i + 1 and gets no write; at any other step `channel` is absent and
/// task `task-i` writes `step_value(label, i)` to it. Returns the stored configs.
async fn delta_chain(
    cx: &Cx,
    thread: &str,
    ns: &str,
    channel: &str,
    ids: &[String],
    snapshots: &[i64],
    label: &str,
) -> Result<Vec<CheckpointConfig>, Failure> {
    let mut parent = CheckpointConfig::new(thread).with_ns(ns);
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let i = i as i64;
        let mut step = Step::new(id).meta("step", json!(i)).with(|c| c.ts = String::new());
        let is_snapshot = snapshots.contains(&i);
        if is_snapshot {
            step = step.typed(channel, snap(label, i), i + 1);
        }
        parent = cx.put(&parent, step).await?;
        if !is_snapshot {
            cx.put_writes(&parent, vec![(channel, jv(step_value(label, i)))], &format!("task-{i}"), "").await?;
        }
        out.push(parent.clone());
    }
    Ok(out)
}

/// `delta_chain` on `n` fresh ids.
async fn chain_n(
    cx: &Cx,
    thread: &str,
    ns: &str,
    channel: &str,
    n: usize,
    snapshots: &[i64],
) -> Result<Vec<CheckpointConfig>, Failure> {
    delta_chain(cx, thread, ns, channel, &new_ids(n), snapshots, "").await
}

/// The result of `delta_channel_history`, with its call.
type History = Reply<BTreeMap<String, DeltaChannelHistory>>;

/// Fails unless `got[channel]` has exactly `writes` and `seed`.
fn expect_history(got: &History, channel: &str, writes: &[PendingWrite], seed: Option<TypedValue>) -> Checked {
    let Some(h) = got.get(channel) else {
        let have: Vec<&String> = got.keys().collect();
        return Err(Failure::new(format!(
            "{got}: expected an entry for channel {channel:?}, got entries for {have:?}"
        )));
    };
    got.diffs()
        .writes(format_args!("[{channel:?}].writes"), writes, &h.writes)
        .eq(format_args!("[{channel:?}].seed"), &seed, &h.seed)
        .finish()
}

/// Calls `delta_channel_history(config, channels)` and checks that the result has exactly
/// the requested channels.
async fn history(cx: &Cx, config: &CheckpointConfig, channels: &[&str]) -> Result<History, Failure> {
    let got = cx.delta_history(config, channels).await?;
    let mut want: Vec<&str> = channels.to_vec();
    want.sort_unstable();
    want.dedup();
    let have: Vec<&str> = got.keys().map(String::as_str).collect();
    got.expect_eq("channels of the result", &want, &have)?;
    Ok(got)
}

/// 5 steps, snapshot at 0: writes of steps 1, 2, 3 oldest first (the head's write 4 is
/// excluded), seed = the step-0 snapshot.
async fn writes_oldest_first(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 5, &[0]).await?;
    let got = history(&cx, &c[4], &["ch"]).await?;
    let want: Vec<_> = (1..=3).map(|i| step_write("ch", "", i)).collect();
    expect_history(&got, "ch", &want, Some(snap("", 0)))
}

/// 6 steps, snapshots at 0 and 3: the seed is the nearest (step 3) and the only write is
/// step 4's; writes older than the seed are not returned.
async fn seed_is_nearest_value(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 6, &[0, 3]).await?;
    let got = history(&cx, &c[5], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 4)], Some(snap("", 3)))
}

/// 3 steps, snapshot at 0, plus an extra write on the head: the head's writes (its own and
/// the extra) are excluded; exactly step 1's write remains.
async fn excludes_target_writes(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 3, &[0]).await?;
    cx.put_writes(&c[2], vec![("ch", jv(json!("extra")))], "task-extra", "").await?;
    let got = history(&cx, &c[2], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 1)], Some(snap("", 0)))
}

/// 5 steps; step 1 stores a snapshot of `a`, step 3 one of `b`; every step writes `a` and
/// `b` in one call. From the head: `a` gets writes 1, 2, 3 and seed snapshot 1; `b` gets
/// write 3 and seed snapshot 3 (each seed ancestor's own writes included, each channel
/// stopping at its own seed).
async fn channels_stop_independently(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let mut parent = CheckpointConfig::new(&t);
    let mut head = parent.clone();
    for i in 0..5i64 {
        let mut step = Step::fresh().meta("step", json!(i)).with(|c| c.ts = String::new());
        if i == 1 {
            step = step.typed("a", snap("a-", i), i + 1);
        }
        if i == 3 {
            step = step.typed("b", snap("b-", i), i + 1);
        }
        parent = cx.put(&parent, step).await?;
        let writes = vec![("a", jv(json!(format!("a{i}")))), ("b", jv(json!(format!("b{i}"))))];
        cx.put_writes(&parent, writes, &format!("task-{i}"), "").await?;
        head = parent.clone();
    }
    let got = history(&cx, &head, &["a", "b"]).await?;
    let wa: Vec<_> = (1..=3).map(|i| pending(&format!("task-{i}"), "", "a", jv(json!(format!("a{i}"))))).collect();
    expect_history(&got, "a", &wa, Some(snap("a-", 1)))?;
    expect_history(&got, "b", &[pending("task-3", "", "b", jv(json!("b3")))], Some(snap("b-", 3)))
}

/// No channels requested: an empty map, exactly.
async fn no_channels_gives_empty_map(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 3, &[0]).await?;
    let got = cx.delta_history(&c[2], &[]).await?;
    got.expect_eq("", &BTreeMap::new(), &*got)
}

/// 4 steps and no value anywhere: the walk reaches the root, so no seed, and every write
/// but the head's (steps 0, 1, 2).
async fn no_seed_when_root_reached(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 4, &[]).await?;
    let got = history(&cx, &c[3], &["ch"]).await?;
    let want: Vec<_> = (0..=2).map(|i| step_write("ch", "", i)).collect();
    expect_history(&got, "ch", &want, None)
}

/// A plain value (a thread migrated from a non-delta channel) is a seed like any other:
/// step 1 stores `[10, 20, 30]`; steps 0, 2, 3 write. Seed `[10, 20, 30]`, writes [2].
async fn plain_value_is_a_seed(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let mut parent = CheckpointConfig::new(&t);
    let mut c = Vec::new();
    for i in 0..4i64 {
        let mut step = Step::fresh().meta("step", json!(i));
        if i == 1 {
            step = step.value("ch", json!([10, 20, 30]), 2);
        }
        parent = cx.put(&parent, step).await?;
        if i != 1 {
            cx.put_writes(&parent, vec![("ch", jv(json!(i)))], &format!("task-{i}"), "").await?;
        }
        c.push(parent.clone());
    }
    let got = history(&cx, &c[3], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 2)], Some(jv(json!([10, 20, 30]))))
}

/// Step 0 stores [10] and writes "older-than-seed"; step 1 stores [10, 20] and writes
/// "at-seed"; step 2 writes "after-seed"; the head writes "pending-at-head". Seed [10, 20];
/// writes exactly ["at-seed", "after-seed"].
async fn seed_ancestor_writes_included(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let labels = ["older-than-seed", "at-seed", "after-seed", "pending-at-head"];
    let mut parent = CheckpointConfig::new(&t);
    for (i, label) in labels.iter().enumerate() {
        let mut step = Step::fresh().meta("step", json!(i));
        if i == 0 {
            step = step.value("ch", json!([10]), 1);
        }
        if i == 1 {
            step = step.value("ch", json!([10, 20]), 2);
        }
        parent = cx.put(&parent, step).await?;
        cx.put_writes(&parent, vec![("ch", jv(json!(label)))], &format!("task-{i}"), "").await?;
    }
    let got = history(&cx, &parent, &["ch"]).await?;
    let want =
        [pending("task-1", "", "ch", jv(json!("at-seed"))), pending("task-2", "", "ch", jv(json!("after-seed")))];
    expect_history(&got, "ch", &want, Some(jv(json!([10, 20]))))
}

/// A chain in "child:1" next to a different chain in "" of the same thread: each head's
/// history has only its own namespace's writes and seed.
async fn works_in_child_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let child = delta_chain(&cx, &t, "child:1", "ch", &new_ids(4), &[0], "child-").await?;
    let root = delta_chain(&cx, &t, "", "ch", &new_ids(3), &[0], "root-").await?;
    let got = history(&cx, &child[3], &["ch"]).await?;
    let want: Vec<_> = (1..=2).map(|i| step_write("ch", "child-", i)).collect();
    expect_history(&got, "ch", &want, Some(snap("child-", 0)))?;
    let got = history(&cx, &root[2], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "root-", 1)], Some(snap("root-", 0)))
}

/// The same checkpoint ids stored in (T, ""), (T, "child:1") and (U, ""), each chain with
/// its own values: each history names only its own thread and namespace's data.
async fn same_ids_elsewhere_do_not_leak(cx: Cx) -> Checked {
    let (t, u) = (cx.thread("t"), cx.thread("u"));
    let ids = new_ids(4);
    let places = [
        (t.as_str(), "", "t-root-", &[0i64][..]),
        (t.as_str(), "child:1", "t-child-", &[1][..]),
        (u.as_str(), "", "u-root-", &[][..]),
    ];
    let mut heads = Vec::new();
    for (thread, ns, label, snaps) in places {
        let c = delta_chain(&cx, thread, ns, "ch", &ids, snaps, label).await?;
        heads.push(c[3].clone());
    }
    let got = history(&cx, &heads[0], &["ch"]).await?;
    let want: Vec<_> = (1..=2).map(|i| step_write("ch", "t-root-", i)).collect();
    expect_history(&got, "ch", &want, Some(snap("t-root-", 0)))?;
    let got = history(&cx, &heads[1], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "t-child-", 2)], Some(snap("t-child-", 1)))?;
    let got = history(&cx, &heads[2], &["ch"]).await?;
    let want: Vec<_> = (0..=2).map(|i| step_write("ch", "u-root-", i)).collect();
    expect_history(&got, "ch", &want, None)
}

/// A forked thread: c0 (snapshot) <- c1 <- c2, and c1 <- c3 <- c4. From c4 only on-path
/// ancestors count (c3, c1, c0), not the sibling branch c2 even though its id lies between;
/// from the leaf c2, only c1's write.
async fn follows_parent_links_on_forks(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let root = CheckpointConfig::new(&t);
    let c0 = cx.put(&root, Step::fresh().typed("ch", snap("", 0), 1)).await?;
    let add = |parent: CheckpointConfig, label: &'static str| {
        let cx = cx.clone();
        async move {
            let c = cx.put(&parent, Step::fresh()).await?;
            cx.put_writes(&c, vec![("ch", jv(json!(label)))], label, "").await?;
            Ok::<_, Failure>(c)
        }
    };
    let c1 = add(c0.clone(), "c1").await?;
    let c2 = add(c1.clone(), "c2").await?;
    let c3 = add(c1.clone(), "c3").await?;
    let c4 = add(c3.clone(), "c4").await?;
    let w = |l: &str| pending(l, "", "ch", jv(json!(l)));
    let got = history(&cx, &c4, &["ch"]).await?;
    expect_history(&got, "ch", &[w("c1"), w("c3")], Some(snap("", 0)))?;
    let got = history(&cx, &c2, &["ch"]).await?;
    expect_history(&got, "ch", &[w("c1")], Some(snap("", 0)))
}

/// Parent links that run against id order: ids i0 < i1 < i2, chain i2 (snapshot) <- i0 <-
/// i1. From i1 the walk visits i0 then i2 (by parent_config, not by id): writes [i0's],
/// seed i2's snapshot.
async fn follows_parent_links_not_id_order(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = new_ids(3);
    let root = CheckpointConfig::new(&t);
    let c2 = cx.put(&root, Step::new(&ids[2]).typed("ch", snap("", 2), 1)).await?;
    let c0 = cx.put(&c2, Step::new(&ids[0])).await?;
    cx.put_writes(&c0, vec![("ch", jv(json!("at-i0")))], "task-i0", "").await?;
    let c1 = cx.put(&c0, Step::new(&ids[1])).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("at-i1")))], "task-i1", "").await?;
    let got = history(&cx, &c1, &["ch"]).await?;
    expect_history(&got, "ch", &[pending("task-i0", "", "ch", jv(json!("at-i0")))], Some(snap("", 2)))
}

/// Several tasks write the channel at one ancestor, put in no particular order: within the
/// ancestor the writes come in `get_tuple` order (task_path, task_id, index with index
/// compared as a number, so 2 before 10), other channels left out; then the next
/// ancestor's writes.
async fn several_tasks_in_get_tuple_order(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c0 = cx.put(&CheckpointConfig::new(&t), Step::fresh().typed("ch", snap("", 0), 1)).await?;
    let c1 = cx.put(&c0, Step::fresh()).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("b0")))], "t-b", "~2").await?;
    cx.put_writes(&c1, vec![("other", jv(json!("x"))), ("ch", jv(json!("a1")))], "t-a", "~2").await?;
    let mut many: Vec<(&str, TypedValue)> = (0..11).map(|_| ("pad", jv(json!("pad")))).collect();
    many[2] = ("ch", jv(json!("d2")));
    many[10] = ("ch", jv(json!("d10")));
    cx.put_writes(&c1, many, "t-d", "~3").await?;
    cx.put_writes(
        &c1,
        vec![("ch", jv(json!("c0"))), (INTERRUPT, jv(json!("q"))), ("ch", jv(json!("c2")))],
        "t-c",
        "~1",
    )
    .await?;
    let c2 = cx.put(&c1, Step::fresh()).await?;
    cx.put_writes(&c2, vec![("ch", jv(json!("z0")))], "t-z", "").await?;
    let head = cx.put(&c2, Step::fresh()).await?;
    cx.put_writes(&head, vec![("ch", jv(json!("head")))], "t-h", "").await?;
    let got = history(&cx, &head, &["ch"]).await?;
    let want = [
        pending("t-c", "~1", "ch", jv(json!("c0"))),
        pending("t-c", "~1", "ch", jv(json!("c2"))),
        pending("t-a", "~2", "ch", jv(json!("a1"))),
        pending("t-b", "~2", "ch", jv(json!("b0"))),
        pending("t-d", "~3", "ch", jv(json!("d2"))),
        pending("t-d", "~3", "ch", jv(json!("d10"))),
        pending("t-z", "", "ch", jv(json!("z0"))),
    ];
    expect_history(&got, "ch", &want, Some(snap("", 0)))
}

/// A target `get_tuple` does not find: an id stored only in another thread, and a thread
/// with no checkpoint at all. There is nothing to walk: Ok, one entry per requested
/// channel, each with no writes and no seed (see the module docs).
async fn missing_target_gives_empty_entries(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &cx.thread("elsewhere"), "", "ch", 3, &[0]).await?;
    let elsewhere = at(&t, "").with_id(id_of(&c[2]));
    let unknown = at(&cx.thread("missing"), "").with_id(new_id());
    let no_id = CheckpointConfig::new(cx.thread("empty"));
    for cfg in [elsewhere, unknown, no_id] {
        let got = history(&cx, &cfg, &["ch", "other"]).await?;
        expect_history(&got, "ch", &[], None)?;
        expect_history(&got, "other", &[], None)?;
    }
    Ok(())
}

/// Without any pending write the history is the seed alone: the value the target's parent
/// reads (here carried from its own parent at an unchanged version), not the target's own
/// value; a channel without a value has an entry with no writes and no seed. Needs only
/// put, so a saver without put_writes is still judged on delta_channel_history.
async fn seed_without_any_write(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c0 = cx.put(&at(&t, ""), Step::fresh().value("ch", json!("v0"), 1)).await?;
    let c1 = cx.put(&c0, Step::fresh().carry("ch", json!("v0"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("ch", json!("v2"), 2)).await?;
    let got = history(&cx, &c2, &["ch", "other"]).await?;
    expect_history(&got, "ch", &[], Some(jv(json!("v0"))))?;
    expect_history(&got, "other", &[], None)
}

/// A config without `checkpoint_id` resolves to the latest checkpoint (greatest id), as
/// `get_tuple` does, even when a checkpoint with a smaller id was put after it.
async fn no_checkpoint_id_resolves_latest(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = new_ids(5);
    let chain_ids = [ids[0].clone(), ids[1].clone(), ids[2].clone(), ids[4].clone()];
    let c = delta_chain(&cx, &t, "", "ch", &chain_ids, &[0], "").await?;
    let late = cx.put(&c[0], Step::new(&ids[3])).await?;
    cx.put_writes(&late, vec![("ch", jv(json!("late-branch")))], "task-late", "").await?;
    let got = history(&cx, &CheckpointConfig::new(&t), &["ch"]).await?;
    let want: Vec<_> = (1..=2).map(|i| step_write("ch", "", i)).collect();
    expect_history(&got, "ch", &want, Some(snap("", 0)))
}

/// The target's own stored value is not the seed: the walk starts at its parent.
async fn target_own_value_is_not_seed(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 2, &[0]).await?;
    let head = cx.put(&c[1], Step::fresh().typed("ch", snap("", 2), 3)).await?;
    let got = history(&cx, &head, &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 1)], Some(snap("", 0)))
}

/// Exactly one entry per requested channel: a channel written next to the requested one
/// is left out (and its writes do not leak into the requested one's), and a requested
/// channel that was never written has an entry with no writes and no seed.
async fn one_entry_per_requested_channel(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c0 =
        cx.put(&CheckpointConfig::new(&t), Step::fresh().value("a", json!("a0"), 1).value("b", json!("b0"), 1)).await?;
    let c1 = cx.put(&c0, Step::fresh()).await?;
    cx.put_writes(&c1, vec![("b", jv(json!("b1"))), ("a", jv(json!("a1")))], "task-1", "").await?;
    let head = cx.put(&c1, Step::fresh()).await?;
    let got = history(&cx, &head, &["a", "never"]).await?;
    expect_history(&got, "a", &[pending("task-1", "", "a", jv(json!("a1")))], Some(jv(json!("a0"))))?;
    expect_history(&got, "never", &[], None)
}

/// A SHOULD rule (kept channels, CONTRACT §2 put): an ancestor that keeps the channel
/// unchanged without carrying it (its version only, the value stored by an older
/// checkpoint) reads a value for it, so it is the seed ancestor: c0 stores `v`, c1 keeps
/// it, c2 lacks it. From c3: writes of c1 and c2, seed `v`; c0's write is older than the
/// seed.
async fn seed_found_through_unchanged_version(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c0 = cx.put(&CheckpointConfig::new(&t), Step::fresh().value("ch", json!("v"), 1)).await?;
    cx.put_writes(&c0, vec![("ch", jv(json!("w0")))], "task-0", "").await?;
    let c1 = cx.put(&c0, Step::fresh().keep("ch", 1)).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("w1")))], "task-1", "").await?;
    let c2 = cx.put(&c1, Step::fresh()).await?;
    cx.put_writes(&c2, vec![("ch", jv(json!("w2")))], "task-2", "").await?;
    let head = cx.put(&c2, Step::fresh()).await?;
    let got = history(&cx, &head, &["ch"]).await?;
    let want = [pending("task-1", "", "ch", jv(json!("w1"))), pending("task-2", "", "ch", jv(json!("w2")))];
    expect_history(&got, "ch", &want, Some(jv(json!("v"))))
}

/// An ancestor whose channel is in `new_versions` but has no value is empty (absent on
/// read, CONTRACT §2 put), so it is not a seed and the walk goes on to c0.
async fn empty_channel_is_not_seed(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c0 = cx.put(&CheckpointConfig::new(&t), Step::fresh().value("ch", json!("snap"), 1)).await?;
    cx.put_writes(&c0, vec![("ch", jv(json!("w0")))], "task-0", "").await?;
    let mut empty = Step::fresh().keep("ch", 2);
    empty.new_versions.insert("ch".to_owned(), ChannelVersion::Int(2));
    let c1 = cx.put(&c0, empty).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("w1")))], "task-1", "").await?;
    let head = cx.put(&c1, Step::fresh()).await?;
    let got = history(&cx, &head, &["ch"]).await?;
    let want = [pending("task-0", "", "ch", jv(json!("w0"))), pending("task-1", "", "ch", jv(json!("w1")))];
    expect_history(&got, "ch", &want, Some(jv(json!("snap"))))
}

/// The history of a checkpoint in the middle of a chain ignores everything after it.
async fn older_target_ignores_descendants(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 5, &[0]).await?;
    let got = history(&cx, &c[2], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 1)], Some(snap("", 0)))
}

/// Re-putting an ancestor with another parent (CONTRACT §2: a re-put replaces the parent
/// and keeps the writes) changes the walk: c0 (snapshot) <- c1 <- c2 <- c3, then c2 is put
/// again with parent c0. From c3: c2's write, then c0's snapshot; c1 is no longer on the
/// path.
async fn follows_replaced_parent(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 4, &[0]).await?;
    cx.put(&c[0], Step::new(id_of(&c[2])).meta("step", json!(2))).await?;
    let got = history(&cx, &c[3], &["ch"]).await?;
    expect_history(&got, "ch", &[step_write("ch", "", 2)], Some(snap("", 0)))
}

/// A chain of 120 checkpoints without a snapshot: every write but the head's, oldest first.
async fn long_chain_in_order(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let c = chain_n(&cx, &t, "", "ch", 120, &[]).await?;
    let got = history(&cx, &c[119], &["ch"]).await?;
    let want: Vec<_> = (0..119).map(|i| step_write("ch", "", i)).collect();
    expect_history(&got, "ch", &want, None)
}

/// CONTRACT §1 "Identifiers are opaque" and §3 delta_channel_history: channels that differ
/// only by an identifier class ([`every_variant`]; long names aside, which `put` may
/// refuse) each get their own writes and their own seed: c0 stores a value on every channel,
/// c1 writes every channel, and the history of c2 asks for all of them.
async fn channels_of_every_class_stay_apart(cx: Cx) -> Checked {
    let channels: Vec<String> =
        every_variant("ch-").into_iter().filter(|(c, _)| *c != Class::Long).map(|(_, ch)| ch).collect();
    let mut c0 = Step::fresh();
    for ch in &channels {
        c0 = c0.value(ch, json!(ch), 1);
    }
    let c0 = cx.put(&cx.config("main"), c0).await?;
    let c1 = cx.put(&c0, Step::fresh()).await?;
    let writes = channels.iter().map(|ch| (ch.as_str(), jv(json!(format!("w-{ch}"))))).collect();
    cx.put_writes(&c1, writes, "task-1", "").await?;
    let c2 = cx.put(&c1, Step::fresh()).await?;
    let names: Vec<&str> = channels.iter().map(String::as_str).collect();
    let got = history(&cx, &c2, &names).await?;
    for ch in &channels {
        expect_history(&got, ch, &[pending("task-1", "", ch, jv(json!(format!("w-{ch}"))))], Some(jv(json!(ch))))?;
    }
    Ok(())
}

/// CONTRACT §3 delta_channel_history ("resolve the target as `get_tuple` does") and §2
/// get_tuple ("the greatest id"), whatever the `ts`: a chain c0 <- c1 <- c2 whose `ts`
/// decrease as the ids increase ([`ts_against_ids`]), c0 storing the channel and c0 and c1
/// each writing it; without an id the target is c2 (the writes of c0 and c1, seed c0's
/// value), not c0 (the greatest `ts`, no parent, no history).
async fn no_checkpoint_id_resolves_greatest_id_whatever_the_ts(cx: Cx) -> Checked {
    let t = cx.thread("ts");
    let ts = ts_against_ids(3);
    let ids = new_ids(3);
    let mut parent = CheckpointConfig::new(&t);
    for (i, id) in ids.iter().enumerate() {
        let step = Step::new(id).with(|c| c.ts.clone_from(&ts[i]));
        let step = if i == 0 { step.value("ch", json!("s0"), 1) } else { step };
        parent = cx.put(&parent, step).await?;
        if i < 2 {
            cx.put_writes(&parent, vec![("ch", jv(json!(format!("w{i}"))))], "task", "").await?;
        }
    }
    let got = history(&cx, &CheckpointConfig::new(&t), &["ch"]).await?;
    let want = [pending("task", "", "ch", jv(json!("w0"))), pending("task", "", "ch", jv(json!("w1")))];
    expect_history(&got, "ch", &want, Some(jv(json!("s0"))))
}

/// The case's call of this capability's method ([`Cx`]'s calls of the base methods are in
/// `crate::calls`).
impl Cx {
    /// `delta_channel_history(config, channels)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn delta_history(
        &self,
        config: &CheckpointConfig,
        channels: &[&str],
    ) -> Result<Reply<BTreeMap<String, DeltaChannelHistory>>, Failure> {
        let chs: Vec<String> = channels.iter().map(|s| (*s).to_owned()).collect();
        let call = conformance_core::Call::DeltaChannelHistory { config: config.clone(), channels: chs.clone() };
        self.call(call, self.saver().delta_channel_history(config, &chs)).await.or_fail()
    }
}
