//! `put` (CONTRACT §2 put): what is stored, what comes back, which values a read rebuilds.
//!
//! Also the CONTRACT §1 type rules a `put` must keep (typed values byte for byte, channel
//! versions with their kind, metadata as any JSON, `updated_channels` None vs empty) and
//! `get_next_version` (CONTRACT §2), whose results `put` stores.
//!
//! The rule "the saver owns what it stored" has no case here: `put` takes the checkpoint
//! by value and readers get owned tuples (the `Arc<Checkpoint>` is immutable once shared),
//! so no saver written in safe Rust can let a caller change what it stored.
//!
//! `fidelity.rs` holds the type-rule cases and `rebuild.rs` the value-rebuilding ones; every
//! case is listed, in order, in [`cases`].

mod fidelity;
mod rebuild;

use conformance_core::{Capability, ChannelVersion, CheckpointConfig, Failure};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{Checked, Diffs};
use crate::data::adversarial::{every_variant, Class};
use crate::data::{id_of, jv, metadata, new_id, values, Ids, Step};
use fidelity::*;
use rebuild::*;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Put, needs [GetTuple] => [
        #[rules(put.returns)] returns_config_of_stored_checkpoint -[GetTuple] ["test_put_returns_config"],
        #[rules(put.values, checkpoint.fields)] roundtrip_channel_values ["test_put_roundtrip"],
        #[rules(checkpoint.fields)] format_version_roundtrips,
        #[rules(value.bytes)] channel_values_roundtrip_byte_for_byte ["test_put_preserves_channel_values"],
        #[rules(value.bytes)] large_channel_value_roundtrips,
        #[rules(version.kind)] channel_versions_roundtrip_with_their_kind ["test_put_preserves_channel_versions"],
        #[rules(version.kind)] #[uses(WideNumbers)] channel_versions_beyond_2_53_roundtrip,
        #[rules(checkpoint.fields)] versions_seen_roundtrips_exactly ["test_put_preserves_versions_seen", "test_put_preserves_versions_seen_values"],
        #[rules(checkpoint.fields)] #[uses(UpdatedChannels)] updated_channels_none_and_empty_stay_distinct,
        #[rules(metadata.json)] metadata_well_known_keys_roundtrip ["test_put_preserves_metadata", "test_put_preserves_run_id"],
        #[rules(metadata.json)] metadata_any_json_value_roundtrips,
        #[rules(metadata.json)] #[uses(WideNumbers)] metadata_wide_numbers_roundtrip,
        #[rules(metadata.json)] metadata_floats_roundtrip_exactly,
        #[rules(metadata.refuse_whole)] #[should] metadata_nul_char_kept_or_whole_put_refused,
        #[rules(errors.atomic, metadata.refuse_whole)] refused_put_stores_nothing -[GetTuple],
        #[rules(put.stored, config.missing_namespace)] default_namespace_is_root ["test_put_root_namespace", "test_put_default_namespace"],
        #[rules(put.stored)] #[uses(Namespaces)] stored_in_its_child_namespace ["test_put_child_namespace"],
        #[rules(put.stored)] every_checkpoint_of_a_chain_is_readable_by_id ["test_put_multiple_checkpoints_same_thread"],
        #[rules(put.stored, ids.opaque)] threads_are_isolated ["test_put_multiple_threads_isolated"],
        #[rules(put.stored, tuple.parent_config)] #[uses(Namespaces)] parent_is_the_config_checkpoint_id ["test_put_parent_config"],
        #[rules(put.kept_values)] #[should] unchanged_channel_reads_value_stored_earlier ["test_put_incremental_channel_update"],
        #[rules(put.kept_values)] #[should] new_channel_is_read_alongside_kept_ones ["test_put_new_channel_added"],
        #[rules(put.outside_versions)] channel_not_in_versions_is_absent ["test_put_channel_removed"],
        #[rules(put.emptied)] channel_in_new_versions_without_value_is_absent,
        #[rules(put.kept_values, put.values)] #[should] #[uses(Namespaces)] kept_channel_reads_its_own_thread_and_namespace,
        #[rules(put.siblings)] sibling_checkpoints_read_their_own_values,
        #[rules(put.kept_values, put.siblings)] #[should] fork_reads_value_at_kept_version_not_newest,
        #[rules(put.kept_values, put.siblings)] #[should] child_of_sibling_reads_its_branch_value,
        #[rules(put.kept_values)] #[should] kept_older_version_reads_value_stored_at_it,
        #[rules(put.reput)] reput_replaces_checkpoint_metadata_and_parent,
        #[rules(put.reput)] reput_keeps_pending_writes +[PutWrites],
        #[rules(put.stored, tuple.parent_config)] fork_parent_is_the_named_checkpoint,
        #[rules(ids.opaque, metadata.json)] metadata_keys_stay_apart_and_exact,
        #[rules(config.thread_id, errors.no_panic)] #[should] empty_thread_id_is_invalid_config -[GetTuple],
        #[rules(next_version.greater)] next_version_is_strictly_greater -[GetTuple],
        #[rules(next_version.greater)] #[uses(WideNumbers)] next_version_beyond_2_53_is_strictly_greater -[GetTuple],
        #[rules(next_version.strings)] #[should] #[uses(StringVersions)] next_version_is_greater_than_langgraph_string_versions -[GetTuple],
    ])
}

/// CONTRACT §2 put: the returned config has the same thread and namespace and
/// `checkpoint_id = checkpoint.id` (in a child namespace: [`stored_in_its_child_namespace`]).
async fn returns_config_of_stored_checkpoint(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let step = Step::fresh().value("k", json!("v"), 1);
    let id = step.id().to_owned();
    let got = cx.try_put(&cfg, step).await.or_fail()?;
    got.diffs()
        .eq("returned config.thread_id", &cfg.thread_id, &got.thread_id)
        .eq("returned config.checkpoint_ns", &cfg.checkpoint_ns, &got.checkpoint_ns)
        .eq("returned config.checkpoint_id", &Some(id), &got.checkpoint_id)
        .finish()
}

/// CONTRACT §2 put: what was put reads back through the returned config.
async fn roundtrip_channel_values(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let step = Step::fresh().value("msg", json!("hello"), 1).meta("source", json!("input")).meta("step", json!(-1));
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs()
        .eq("checkpoint.id", id_of(&stored), t.checkpoint.id.as_str())
        .map("checkpoint.channel_values", &values(&[("msg", jv(json!("hello")))]), &t.checkpoint.channel_values)
        .eq("checkpoint.v", &crate::data::FORMAT_VERSION, &t.checkpoint.v)
        .finish()
}

/// CONTRACT §1 "Config": `""` is the root namespace; a config built without a namespace is
/// the root, and what is put there is read in the root.
async fn default_namespace_is_root(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let cfg = CheckpointConfig::new(&thread);
    let stored = cx.try_put(&cfg, Step::fresh().value("a", json!(1), 1)).await.or_fail()?;
    stored.expect_eq("returned config.checkpoint_ns", "", stored.checkpoint_ns.as_str())?;
    let latest = CheckpointConfig::new(&thread).with_ns("");
    let t = cx.get_some(&latest).await?;
    t.expect_config(&stored)
}

/// CONTRACT §2 put: a checkpoint is stored under its namespace: the returned config names
/// it, it is read there (with and without its id) and not in the root, and what is put in
/// the root is not read in another namespace.
async fn stored_in_its_child_namespace(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let root = cx.put(&CheckpointConfig::new(&thread).with_ns(""), Step::fresh()).await?;
    cx.get_none(&CheckpointConfig::new(&thread).with_ns("child:1")).await?;
    let cfg = CheckpointConfig::new(&thread).with_ns("child:abc");
    let stored = cx.try_put(&cfg, Step::fresh().value("a", json!(1), 1)).await.or_fail()?;
    stored.expect_eq("returned config.checkpoint_ns", "child:abc", stored.checkpoint_ns.as_str())?;
    let stored = stored.into_value();
    let t = cx.get_some(&stored).await?;
    t.expect_config(&stored)?;
    let t = cx.get_some(&cfg).await?;
    t.expect_config(&stored)?;
    let t = cx.get_some(&CheckpointConfig::new(&thread)).await?;
    t.expect_config(&root)
}

/// CONTRACT §2 put: each checkpoint of a chain is stored under its own id with its own
/// metadata and parent.
async fn every_checkpoint_of_a_chain_is_readable_by_id(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let chain = cx.chain(&thread, "", 3).await?;
    for (i, cfg) in chain.iter().enumerate() {
        let t = cx.get_some(cfg).await?;
        let parent = if i == 0 { None } else { Some(chain[i - 1].clone()) };
        t.diffs()
            .config(cfg, &t.config)
            .metadata_key("step", &json!(i), &t.metadata)
            .parent_config(parent.as_ref(), t.parent_config.as_ref())
            .finish()?;
    }
    Ok(())
}

/// CONTRACT §2 put: checkpoints are keyed by thread; the same checkpoint id in two threads
/// is two checkpoints.
async fn threads_are_isolated(cx: Cx) -> Checked {
    let id = new_id();
    let one = cx.config("one");
    let two = cx.config("two");
    cx.put(&one, Step::new(&id).value("x", json!("thread1"), 1).meta("run_id", json!("one"))).await?;
    cx.put(&two, Step::new(&id).value("x", json!("thread2"), 1).meta("run_id", json!("two"))).await?;
    for (cfg, label, owner) in [(&one, "thread1", "one"), (&two, "thread2", "two")] {
        for read in [cfg.clone(), cfg.clone().with_id(&id)] {
            let t = cx.get_some(&read).await?;
            t.diffs()
                .channel_value("x", &jv(json!(label)), &t.checkpoint)
                .metadata_key("run_id", &json!(owner), &t.metadata)
                .eq("config.thread_id", &cfg.thread_id, &t.config.thread_id)
                .finish()?;
        }
    }
    Ok(())
}

/// CONTRACT §2 put: the parent is `config.checkpoint_id`; `parent_config` names the same
/// thread and namespace (a child namespace here, so the namespace is not the default) and
/// the parent id, and is none without a parent.
async fn parent_is_the_config_checkpoint_id(cx: Cx) -> Checked {
    let cfg = cx.config("main").with_ns("child:1");
    let first = cx.put(&cfg, Step::fresh()).await?;
    let second = cx.put(&first, Step::fresh()).await?;
    let t = cx.get_some(&second).await?;
    t.expect_parent(Some(&first))?;
    let t = cx.get_some(&first).await?;
    t.expect_parent(None)
}

/// CONTRACT §2 put: putting an id that exists replaces its checkpoint, metadata and parent
/// (a key only the first put had, `run_id`, is gone).
async fn reput_replaces_checkpoint_metadata_and_parent(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let p0 = cx.put(&cfg, Step::fresh()).await?;
    let p1 = cx.put(&cfg, Step::fresh()).await?;
    let id = new_id();
    let first = Step::new(&id).value("a", json!("first"), 1).meta("tag", json!("first")).meta("run_id", json!("run-1"));
    cx.put(&p0, first).await?;
    let second = Step::new(&id)
        .value("a", json!("second"), 2)
        .value("b", json!("new"), 1)
        .metadata(metadata(json!({"source": "update", "step": 7, "tag": "second"})))
        .with(|c| c.ts = "2030-01-01T00:00:00+00:00".into());
    let (want_cp, want_md) = (second.checkpoint.clone(), second.metadata.clone());
    let at = cx.put(&p1, second).await?;
    let t = cx.after("after re-put").get_some(&at).await?;
    t.diffs()
        .checkpoint(&want_cp, &t.checkpoint)
        .metadata(&want_md, &t.metadata)
        .parent_config(Some(&p1), t.parent_config.as_ref())
        .finish()
}

/// CONTRACT §2 put ("re-putting an id ... keeps its writes"), bug scenario S05: the
/// pending writes made on a checkpoint (regular and special, two tasks) are still there,
/// the same, after the checkpoint is put again with the same id.
async fn reput_keeps_pending_writes(cx: Cx) -> Checked {
    let root = cx.config("reput-writes");
    let first = Step::fresh().value("a", json!("first"), 1);
    let id = first.id().to_owned();
    let at = cx.put(&root, first).await?;
    cx.put_writes(&at, vec![("a", jv(json!("w1"))), ("__error__", jv(json!("boom")))], "task-1", "").await?;
    cx.put_writes(&at, vec![("b", jv(json!("w2")))], "task-2", "").await?;
    let want = cx.get_some(&at).await?.pending_writes.clone();
    cx.put(&root, Step::new(&id).value("a", json!("second"), 2)).await?;
    cx.after("after the checkpoint was put again with the same id").expect_writes(&at, &want).await
}

/// CONTRACT §1 "Config": an empty `thread_id` is an `InvalidConfig` error, never a panic
/// or a silent default.
async fn empty_thread_id_is_invalid_config(cx: Cx) -> Checked {
    for cfg in [CheckpointConfig::new(""), CheckpointConfig::new("").with_id(new_id())] {
        let step = Step::fresh().value("a", json!(1), 1);
        let id = step.checkpoint.id.clone();
        let got = cx.try_put(&cfg, step).await;
        // Storing the thread "" is only not strict (LangGraph's savers do); answering for
        // another thread mixes up state (CONTRACT §1 identifiers are opaque, §2 put).
        if let Ok(returned) = &got.value {
            let same = returned.thread_id.is_empty()
                && returned.checkpoint_ns.is_empty()
                && returned.checkpoint_id.as_deref() == Some(id.as_str());
            if !same {
                return Err(Failure::must(format!(
                    "{got}: a saver that accepts the thread \"\" must store and name it as given: expected the \
                     config (thread=\"\", ns=\"\", id={id}), got (thread={:?}, ns={:?}, id={:?})",
                    returned.thread_id, returned.checkpoint_ns, returned.checkpoint_id
                )));
            }
        }
        got.expect_invalid_config()?;
    }
    Ok(())
}

/// CONTRACT §2 get_next_version: the result is strictly greater than `current` (integers
/// numerically, strings by bytes, every integer below every string), and 1 when there is
/// none (`Int(1)`, or a string whose integer part before the first `.` is 1, the upstream
/// padded format), for the versions the saver itself produces and integers. LangGraph's
/// runtime only ever hands a saver the versions it produced. The widest integer is 2^53 - 2
/// (its next, 2^53 - 1, is the largest a JavaScript number holds exactly); beyond:
/// [`next_version_beyond_2_53_is_strictly_greater`].
async fn next_version_is_strictly_greater(cx: Cx) -> Checked {
    next_versions_up_to(cx, fidelity::MAX_SAFE_INTEGER - 1).await
}

/// CONTRACT §2 get_next_version: the next of `i64::MAX - 1` is strictly greater (a saver
/// that computes through an `f64` answers a smaller or equal number). Not run on a saver
/// lacking [`conformance_core::Feature::WideNumbers`] (its capability is then incomplete: the rule is MUST).
async fn next_version_beyond_2_53_is_strictly_greater(cx: Cx) -> Checked {
    next_versions_up_to(cx, i64::MAX - 1).await
}

/// The cases of `get_next_version`, with integer versions up to `widest`.
async fn next_versions_up_to(cx: Cx, widest: i64) -> Checked {
    let mut d = Diffs::new();
    let first = cx.next_version(None);
    if !crate::model::is_next_version(None, &first) {
        d.of(&first).push("", "1", format_args!("{:?}", *first));
    }
    let mut currents: Vec<ChannelVersion> =
        vec![ChannelVersion::Int(0), ChannelVersion::Int(1), ChannelVersion::Int(41), ChannelVersion::Int(widest)];
    let mut cur = first.into_value();
    for _ in 0..5 {
        let next = cx.next_version(Some(&cur)).into_value();
        currents.push(cur);
        cur = next;
    }
    next_versions_greater(&cx, &mut d, currents);
    d.finish()
}

/// CONTRACT §2 get_next_version, a SHOULD rule: a saver that produces only integer versions
/// still answers LangGraph's padded string versions (`"{n:032}.{fraction}"`) with a greater
/// one. LangGraph's runtime hands a saver only its own versions, so a saver that declares
/// it takes integers only ([`conformance_core::Feature::StringVersions`]) is not run here.
async fn next_version_is_greater_than_langgraph_string_versions(cx: Cx) -> Checked {
    let mut d = Diffs::new();
    // LangGraph's string format only: a bare "1" is not an input any LangGraph saver
    // produces, and its own get_next_version fails it.
    let currents = vec![
        ChannelVersion::from("00000000000000000000000000000002.0.6312886770924534"),
        ChannelVersion::from("00000000000000000000000000000009.0.9999"),
    ];
    next_versions_greater(&cx, &mut d, currents);
    d.finish()
}

/// Checks that `get_next_version` of each of `currents` is greater than it.
fn next_versions_greater(cx: &Cx, d: &mut Diffs, currents: Vec<ChannelVersion>) {
    for c in currents {
        let next = cx.next_version(Some(&c));
        if *next <= c {
            d.of(&next).push("", "a version greater than it", format_args!("{:?}", *next));
        }
    }
}

/// CONTRACT §2 put ("the parent is `config.checkpoint_id`"), forks: two children of one
/// parent that is not the latest (`c1` while `c2` exists) both have `c1` as their parent,
/// the second not the first; a child of the first checkpoint has it as its parent.
async fn fork_parent_is_the_named_checkpoint(cx: Cx) -> Checked {
    let cfg = cx.config("fork");
    let ids = Ids::new(&["c0", "c1", "c2", "f1", "f2", "g"]);
    let c0 = cx.put(&cfg, Step::new(ids.id("c0"))).await?;
    let c1 = cx.put(&c0, Step::new(ids.id("c1"))).await?;
    cx.put(&c1, Step::new(ids.id("c2"))).await?;
    let mut forks = Vec::new();
    for (label, parent) in [("f1", &c1), ("f2", &c1), ("g", &c0)] {
        forks.push((cx.put(parent, Step::new(ids.id(label))).await?, parent.clone()));
    }
    let cx = cx.after(format!("after forking f1 and f2 from c1 and g from c0 ({})", ids.legend()));
    for (child, parent) in &forks {
        cx.get_some(child).await?.expect_parent(Some(parent))?;
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque" and "Metadata": metadata keys that differ only by
/// an identifier class ([`every_variant`]) are kept apart, each with its own value. Long
/// keys go in a put of their own, which may be refused.
async fn metadata_keys_stay_apart_and_exact(cx: Cx) -> Checked {
    for long in [false, true] {
        let keys: Vec<(Class, String)> =
            every_variant("k").into_iter().filter(|(c, _)| (*c == Class::Long) == long).collect();
        let mut md = metadata(json!({}));
        for (i, (_, key)) in keys.iter().enumerate() {
            md.insert(key.clone(), json!(i));
        }
        let class = if long { Class::Long } else { Class::Case };
        let Some(at) = cx.put_or_refused(class, &cx.config("keys"), Step::fresh().metadata(md.clone())).await? else {
            continue;
        };
        let t = cx.get_some(&at).await?;
        t.diffs().metadata(&md, &t.metadata).finish()?;
    }
    Ok(())
}
