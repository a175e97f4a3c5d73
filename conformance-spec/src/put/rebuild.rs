//! `put`: which values a read rebuilds (CONTRACT §2 put, "channel_values"): a channel kept
//! at its version reads the value stored at that version, in the same thread and namespace
//! and on the same branch. The cases are listed in the parent module's `cases()`.

use std::collections::BTreeMap;

use conformance_core::{ChannelVersion, CheckpointConfig, TypedValue};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{Checked, Diffs};
use crate::data::{jv, new_id, values, Step};

/// Whether `got`, read at a checkpoint that keeps the channels `kept` (not carries them),
/// breaks a MUST rule rather than only the SHOULD rule of kept channels (CONTRACT §2 put,
/// §5 "Strength of a rule"): a kept channel read back absent is "not strict"; any value other
/// than the one stored at that version in this thread, namespace and branch, a carried
/// value lost, or a channel not asked for mixes up state.
fn mixes_up_state(want: &BTreeMap<String, TypedValue>, got: &BTreeMap<String, TypedValue>, kept: &[&str]) -> bool {
    got.iter().any(|(k, v)| want.get(k) != Some(v))
        || want.keys().any(|k| !got.contains_key(k) && !kept.contains(&k.as_str()))
}

/// [`mixes_up_state`] for one kept channel: `got` is what came back for it.
fn kept_value_mixed_up(got: Option<&TypedValue>, want: &TypedValue) -> bool {
    got.is_some_and(|g| g != want)
}

/// `result` as a MUST failure when `must` (see [`mixes_up_state`]).
fn strength_of(result: Checked, must: bool) -> Checked {
    result.map_err(|f| if must { f.into_must() } else { f })
}

/// CONTRACT §2 put, bug scenario S06: a channel in `channel_versions` that the checkpoint
/// neither carries nor lists in `new_versions` reads the value stored earlier at that
/// version; the earlier checkpoint keeps reading its own values.
pub(super) async fn unchanged_channel_reads_value_stored_earlier(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("messages", json!(["hi"]), 1).value("count", json!(1), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().keep("messages", 1).value("count", json!(2), 2)).await?;
    let mut d = Diffs::new();
    let t2 = cx.get_some(&c2).await?;
    let want2 = values(&[("messages", jv(json!(["hi"]))), ("count", jv(json!(2)))]);
    d.of(&t2).map("checkpoint.channel_values", &want2, &t2.checkpoint.channel_values);
    let t1 = cx.get_some(&c1).await?;
    let want1 = values(&[("messages", jv(json!(["hi"]))), ("count", jv(json!(1)))]);
    d.of(&t1).map("checkpoint.channel_values", &want1, &t1.checkpoint.channel_values);
    let must = mixes_up_state(&want2, &t2.checkpoint.channel_values, &["messages"])
        || mixes_up_state(&want1, &t1.checkpoint.channel_values, &[]);
    strength_of(d.finish(), must)
}

/// CONTRACT §2 put: a channel added in a step is read together with the channels kept
/// (not carried) from the parent.
pub(super) async fn new_channel_is_read_alongside_kept_ones(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().keep("a", 1).value("b", json!("new_channel"), 1)).await?;
    let t = cx.get_some(&c2).await?;
    let want = values(&[("a", jv(json!("v1"))), ("b", jv(json!("new_channel")))]);
    let must = mixes_up_state(&want, &t.checkpoint.channel_values, &["a"]);
    strength_of(t.diffs().map("checkpoint.channel_values", &want, &t.checkpoint.channel_values).finish(), must)
}

/// CONTRACT §2 put: a channel not in `channel_versions` is absent on read, even if an
/// older checkpoint of the thread stored a value for it.
pub(super) async fn channel_not_in_versions_is_absent(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1).value("b", json!("v2"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!("v1_updated"), 2)).await?;
    let mut d = Diffs::new();
    let t = cx.get_some(&c2).await?;
    d.of(&t).map("checkpoint.channel_values", &values(&[("a", jv(json!("v1_updated")))]), &t.checkpoint.channel_values);
    let t = cx.get_some(&c1).await?;
    let want = values(&[("a", jv(json!("v1"))), ("b", jv(json!("v2")))]);
    d.of(&t).map("checkpoint.channel_values", &want, &t.checkpoint.channel_values);
    d.finish()
}

/// CONTRACT §2 put: a channel in `new_versions` with no value is empty and absent on read
/// (not filled from an older version), while its version still round-trips.
pub(super) async fn channel_in_new_versions_without_value_is_absent(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("old"), 1).value("b", json!("kept"), 1)).await?;
    // "b" is carried (as LangGraph's runtime carries every value): the rule here is the
    // emptied channel, not a kept one.
    let c2 = cx.put(&c1, Step::fresh().emptied("a", 2).carry("b", json!("kept"), 1)).await?;
    // The next step keeps "a" empty at version 2, as LangGraph's runtime does with a consumed
    // channel: it stays absent, never the older value stored at version 1.
    let c3 = cx.put(&c2, Step::fresh().keep("a", 2).carry("b", json!("kept"), 1)).await?;
    let mut d = Diffs::new();
    for at in [&c2, &c3] {
        let t = cx.get_some(at).await?;
        d.of(&t)
            .map("checkpoint.channel_values", &values(&[("b", jv(json!("kept")))]), &t.checkpoint.channel_values)
            .eq(
                "checkpoint.channel_versions[\"a\"]",
                &Some(&ChannelVersion::Int(2)),
                &t.checkpoint.channel_versions.get("a"),
            );
    }
    d.finish()
}

/// CONTRACT §2 put: a kept channel reads the value stored at that version *in this
/// thread and namespace*. The same checkpoint ids, channel and version are used in two
/// threads and two namespaces, each with its own value.
pub(super) async fn kept_channel_reads_its_own_thread_and_namespace(cx: Cx) -> Checked {
    let (id1, id2) = (new_id(), new_id());
    let t1 = cx.thread("one");
    let t2 = cx.thread("two");
    let scopes = [
        (CheckpointConfig::new(&t1), "one-root"),
        (CheckpointConfig::new(&t1).with_ns("child:1"), "one-child"),
        (CheckpointConfig::new(&t2), "two-root"),
    ];
    // Every value first, then every child: a saver that looks values up by (channel,
    // version) alone would now find the last one stored.
    for (cfg, label) in &scopes {
        cx.put(cfg, Step::new(&id1).value("a", json!(label), 1)).await?;
    }
    for (cfg, _) in &scopes {
        cx.put(&cfg.clone().with_id(&id1), Step::new(&id2).keep("a", 1)).await?;
    }
    for (cfg, label) in &scopes {
        let at = cfg.clone().with_id(&id2);
        let t = cx.get_some(&at).await?;
        let want = jv(json!(label));
        let got = t.checkpoint.channel_values.get("a");
        let checked = t.expect_eq("checkpoint.channel_values[\"a\"] (kept at version 1)", &Some(&want), &got);
        strength_of(checked, kept_value_mixed_up(got, &want))?;
    }
    Ok(())
}

/// CONTRACT §2 put: two sibling checkpoints whose versions both came from
/// `get_next_version` of the same current version each read back their own value.
pub(super) async fn sibling_checkpoints_read_their_own_values(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let v1 = cx.next_version(None).into_value();
    let parent = cx.put(&cfg, Step::fresh().typed("a", jv(json!("base")), v1.clone())).await?;
    let left_v = cx.next_version(Some(&v1)).into_value();
    let right_v = cx.next_version(Some(&v1)).into_value();
    let left = cx.put(&parent, Step::fresh().typed("a", jv(json!("left")), left_v)).await?;
    let right = cx.put(&parent, Step::fresh().typed("a", jv(json!("right")), right_v)).await?;
    for (at, want) in [(&parent, "base"), (&left, "left"), (&right, "right")] {
        let t = cx.get_some(at).await?;
        t.diffs().channel_value("a", &jv(json!(want)), &t.checkpoint).finish()?;
    }
    Ok(())
}

/// CONTRACT §2 put ("a channel that is in `new_versions` but has no value is empty") and
/// siblings: c2v and c2e, children of c1, take a's version from `get_next_version` of the
/// same version; c2v stores a = "x", c2e empties a (in `new_versions`, no value). Put in
/// both orders, c2e reads a absent, never c2v's value at the same (channel, version), and
/// c2v reads "x". A saver that fills a channel of `new_versions` from its value store
/// when the put carries none passes the single-lineage case and fails here. Then c3, a
/// child of c2e, keeps a at c2e's version without a value: it stays absent (put.emptied),
/// never c2v's value from the other branch (a saver that resolves a kept channel from its
/// value store, found by a breaker in the reference memory saver).
pub(super) async fn emptied_sibling_stays_empty(cx: Cx) -> Checked {
    for emptied_first in [false, true] {
        let cfg = cx.config(if emptied_first { "emptied-first" } else { "value-first" });
        let v1 = cx.next_version(None).into_value();
        let c1 =
            cx.put(&cfg, Step::fresh().typed("a", jv(json!("base")), v1.clone()).value("b", json!("kept"), 1)).await?;
        let (vv, ve) = (cx.next_version(Some(&v1)).into_value(), cx.next_version(Some(&v1)).into_value());
        let with_value = Step::fresh().typed("a", jv(json!("x")), vv).carry("b", json!("kept"), 1);
        let emptied = Step::fresh().emptied("a", ve.clone()).carry("b", json!("kept"), 1);
        let kept_empty = Step::fresh().keep("a", ve.clone()).carry("b", json!("kept"), 1);
        let (c2v, c2e) = if emptied_first {
            let e = cx.put(&c1, emptied).await?;
            (cx.put(&c1, with_value).await?, e)
        } else {
            let v = cx.put(&c1, with_value).await?;
            (v, cx.put(&c1, emptied).await?)
        };
        let c3 = cx.put(&c2e, kept_empty).await?;
        let order = if emptied_first { "c2e put first" } else { "c2v put first" };
        let cx = cx.after(format!(
            "after c2v (a = \"x\") and c2e (a emptied at {ve:?}), siblings of c1 with versions from get_next_version, \
             {order}, then c3, a child of c2e keeping a at {ve:?} without a value"
        ));
        let mut d = Diffs::new();
        for (at, want) in [
            (&c2e, values(&[("b", jv(json!("kept")))])),
            (&c2v, values(&[("a", jv(json!("x"))), ("b", jv(json!("kept")))])),
            (&c3, values(&[("b", jv(json!("kept")))])),
        ] {
            let t = cx.get_some(at).await?;
            d.of(&t).map("checkpoint.channel_values", &want, &t.checkpoint.channel_values);
        }
        d.finish()?;
    }
    Ok(())
}

/// CONTRACT §2 put: an unchanged channel reads "the value stored for that channel at that
/// version in this thread and namespace", not the newest value of the channel. c1 stores
/// a = "v1" at version 1; c2, a child of c1, stores a = "v2" at version 2; then c3, a second
/// child of c1 (a fork), keeps a at version 1 and must read "v1".
pub(super) async fn fork_reads_value_at_kept_version_not_newest(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!("v2"), 2)).await?;
    let c3 = cx.put(&c1, Step::fresh().keep("a", 1)).await?;
    let context = [
        (&c3, "v1", "c3 forks c1 and keeps a at version 1; c2, also a child of c1, stored \"v2\" at version 2"),
        (&c2, "v2", "c2 stored a = \"v2\" at version 2"),
        (&c1, "v1", "c1 stored a = \"v1\" at version 1"),
    ];
    for (at, want, why) in context {
        let t = cx.get_some(at).await?;
        let (want, got) = (jv(json!(want)), t.checkpoint.channel_values.get("a"));
        let checked = t.expect_eq(format_args!("checkpoint.channel_values[\"a\"] ({why})"), &Some(&want), &got);
        // c1 and c2 carried their value: losing it is a MUST failure too.
        let must = kept_value_mixed_up(got, &want) || (at != &c3 && got.is_none());
        strength_of(checked, must)?;
    }
    Ok(())
}

/// CONTRACT §2 put: siblings must not collide. c2a and c2b, both children of c1, store a at
/// `get_next_version(v1)` with "x" and "y" (c2b put first); c3, a child of c2b, keeps a at
/// c2b's version and must read "y", c2b's value, not the one stored last. A saver whose
/// `get_next_version` never repeats passes this trivially (the versions differ).
pub(super) async fn child_of_sibling_reads_its_branch_value(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let v1 = cx.next_version(None).into_value();
    let c1 = cx.put(&cfg, Step::fresh().typed("a", jv(json!("base")), v1.clone())).await?;
    let (a_id, b_id) = (new_id(), new_id());
    let va = cx.next_version(Some(&v1)).into_value();
    let vb = cx.next_version(Some(&v1)).into_value();
    let c2b = cx.put(&c1, Step::new(&b_id).typed("a", jv(json!("y")), vb.clone())).await?;
    let c2a = cx.put(&c1, Step::new(&a_id).typed("a", jv(json!("x")), va)).await?;
    let c3 = cx.put(&c2b, Step::fresh().keep("a", vb.clone())).await?;
    let why = format!("c3 is a child of c2b and keeps a at c2b's version {vb:?}; c2a ({c2a}) stored \"x\" after");
    let t = cx.get_some(&c3).await?;
    let (want, got) = (jv(json!("y")), t.checkpoint.channel_values.get("a"));
    let checked = t.expect_eq(format_args!("checkpoint.channel_values[\"a\"] ({why})"), &Some(&want), &got);
    strength_of(checked, kept_value_mixed_up(got, &want))
}

/// CONTRACT §2 put: a kept channel reads the value stored at that version in this thread
/// and namespace, "whether it came with this put or an earlier one", also when the parent
/// holds another version. c1 stores a = "v1" at version 1, c2 (child of c1) a = "v2" at
/// version 2; c3, a child of c2, keeps a at version 1 and must read "v1" (not the parent's
/// "v2", and not nothing).
pub(super) async fn kept_older_version_reads_value_stored_at_it(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!("v2"), 2)).await?;
    let c3 = cx.put(&c2, Step::fresh().keep("a", 1)).await?;
    let t = cx.get_some(&c3).await?;
    let (want, got) = (jv(json!("v1")), t.checkpoint.channel_values.get("a"));
    let checked = t.expect_eq(
        "checkpoint.channel_values[\"a\"] (c3, a child of c2 which holds \"v2\" at version 2, keeps a at version 1, \
         where c1 stored \"v1\")",
        &Some(&want),
        &got,
    );
    strength_of(checked, kept_value_mixed_up(got, &want))
}
