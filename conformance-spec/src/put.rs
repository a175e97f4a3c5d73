//! `put` (CONTRACT §2 put): what is stored, what comes back, which values a read rebuilds.
//!
//! Also the CONTRACT §1 type rules a `put` must keep (typed values byte for byte, channel
//! versions with their kind, metadata as any JSON, `updated_channels` None vs empty) and
//! `get_next_version` (CONTRACT §2), whose results `put` stores.
//!
//! The rule "the saver owns what it stored" has no case here: `put` takes the checkpoint
//! by value and readers get owned tuples (the `Arc<Checkpoint>` is immutable once shared),
//! so no saver written in safe Rust can let a caller change what it stored.

use std::collections::BTreeMap;

use conformance_core::{Capability, ChannelVersion, CheckpointConfig, CheckpointError, Failure, TypedValue};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{ensure, Checked, Diffs};
use crate::data::{fidelity_values, id_of, jv, large_value, metadata, new_id, values, Step, LARGE_VALUE_LEN};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Put, needs [GetTuple] => [
        returns_config_of_stored_checkpoint -[GetTuple] ["test_put_returns_config"],
        roundtrip_channel_values ["test_put_roundtrip"],
        format_version_roundtrips,
        channel_values_roundtrip_byte_for_byte ["test_put_preserves_channel_values"],
        large_channel_value_roundtrips,
        channel_versions_roundtrip_with_their_kind ["test_put_preserves_channel_versions"],
        versions_seen_roundtrips_exactly ["test_put_preserves_versions_seen", "test_put_preserves_versions_seen_values"],
        updated_channels_none_and_empty_stay_distinct,
        metadata_well_known_keys_roundtrip ["test_put_preserves_metadata", "test_put_preserves_run_id"],
        metadata_any_json_value_roundtrips,
        metadata_floats_roundtrip_exactly,
        metadata_nul_char_kept_or_whole_put_refused,
        default_namespace_is_root ["test_put_root_namespace", "test_put_default_namespace"],
        stored_in_its_child_namespace ["test_put_child_namespace"],
        every_checkpoint_of_a_chain_is_readable_by_id ["test_put_multiple_checkpoints_same_thread"],
        threads_are_isolated ["test_put_multiple_threads_isolated"],
        parent_is_the_config_checkpoint_id ["test_put_parent_config"],
        unchanged_channel_reads_value_stored_earlier ["test_put_incremental_channel_update"],
        new_channel_is_read_alongside_kept_ones ["test_put_new_channel_added"],
        channel_not_in_versions_is_absent ["test_put_channel_removed"],
        channel_in_new_versions_without_value_is_absent,
        kept_channel_reads_its_own_thread_and_namespace,
        sibling_checkpoints_read_their_own_values,
        fork_reads_value_at_kept_version_not_newest,
        child_of_sibling_reads_its_branch_value,
        kept_older_version_reads_value_stored_at_it,
        reput_replaces_checkpoint_metadata_and_parent,
        reput_keeps_pending_writes +[PutWrites],
        empty_thread_id_is_invalid_config -[GetTuple],
        next_version_is_strictly_greater -[GetTuple],
    ])
}

/// CONTRACT §2 put: the returned config has the same thread and namespace and
/// `checkpoint_id = checkpoint.id`.
async fn returns_config_of_stored_checkpoint(cx: Cx) -> Checked {
    let cfg = cx.config("main").with_ns("child:abc");
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
        .eq("checkpoint.v", &1, &t.checkpoint.v)
        .finish()
}

/// CONTRACT §1 "Checkpoint" (every field round-trips): the format version `v` reads back
/// as put, the current 1 as well as another (4), never a value of the saver's own.
async fn format_version_roundtrips(cx: Cx) -> Checked {
    let cfg = cx.config("format-version");
    let mut d = crate::compare::Diffs::new();
    for v in [1, 4] {
        let stored = cx.put(&cfg, Step::fresh().value("a", json!(v), 1).with(|c| c.v = v)).await?;
        let t = cx.get_some(&stored).await?;
        d.of(&t).eq("checkpoint.v", &v, &t.checkpoint.v);
    }
    d.finish()
}

/// CONTRACT §1 "Typed value": type tag and bytes come back byte for byte (JSON values,
/// empty bytes, NUL bytes, non-UTF-8 bytes, non-ASCII text, foreign tags).
async fn channel_values_roundtrip_byte_for_byte(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let all = fidelity_values();
    let mut step = Step::fresh();
    for (ch, v) in &all {
        step = step.typed(ch, v.clone(), 1);
    }
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().map("checkpoint.channel_values", &values(&all), &t.checkpoint.channel_values).finish()
}

/// Where two large values first differ, for a message that does not print 16 MiB.
fn describe_large(expected: &TypedValue, actual: &TypedValue) -> String {
    // Only scan when the bytes differ (a slice comparison is a fast memcmp; a byte-by-byte
    // scan of 16 MiB is slow in debug builds).
    let first_diff = if expected.data == actual.data {
        None
    } else {
        let n = expected.data.len().min(actual.data.len());
        let block = (0..n).step_by(4096).find(|&i| {
            let end = (i + 4096).min(n);
            expected.data[i..end] != actual.data[i..end]
        });
        block.and_then(|b| (b..n).find(|&i| expected.data[i] != actual.data[i]))
    };
    format!(
        "expected tag {:?} and {} bytes, got tag {:?} and {} bytes{}",
        expected.type_tag,
        expected.data.len(),
        actual.type_tag,
        actual.data.len(),
        first_diff.map(|i| format!(", first differing byte at offset {i}")).unwrap_or_default()
    )
}

/// CONTRACT §1 "Typed value": a value of 16 MiB is stored and returned whole.
async fn large_channel_value_roundtrips(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let big = large_value(LARGE_VALUE_LEN);
    let stored = cx.put(&cfg, Step::fresh().typed("big", big.clone(), 1).value("small", json!(1), 1)).await?;
    let t = cx.get_some(&stored).await?;
    match t.checkpoint.channel_values.get("big") {
        None => Err(Failure::new(format!("{t}: checkpoint.channel_values[\"big\"] is missing"))),
        Some(got) => {
            ensure(got == &big, || format!("{t}: checkpoint.channel_values[\"big\"]: {}", describe_large(&big, got)))
        }
    }
}

/// CONTRACT §1 "Channel version": versions round-trip with their kind (an integer 1 never
/// becomes `"1"`, a string `"1"` never becomes 1), including integers beyond 2^53 and the
/// upstream zero-padded string format.
async fn channel_versions_roundtrip_with_their_kind(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let versions: Vec<(&str, ChannelVersion)> = vec![
        ("a", ChannelVersion::Int(1)),
        ("b", ChannelVersion::Int(2)),
        ("big", ChannelVersion::Int(9_007_199_254_740_993)),
        ("padded", ChannelVersion::from("00000000000000000000000000000002.0.6312886770924534")),
        ("str_one", ChannelVersion::from("1")),
    ];
    let mut step = Step::fresh();
    for (ch, v) in &versions {
        step = step.typed(ch, jv(json!(ch)), v.clone());
    }
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    let want: BTreeMap<String, ChannelVersion> = versions.iter().map(|(c, v)| ((*c).to_owned(), v.clone())).collect();
    let want_values: BTreeMap<String, TypedValue> =
        versions.iter().map(|(c, _)| ((*c).to_owned(), jv(json!(c)))).collect();
    t.diffs()
        .map("checkpoint.channel_versions", &want, &t.checkpoint.channel_versions)
        .map("checkpoint.channel_values", &want_values, &t.checkpoint.channel_values)
        .finish()
}

/// CONTRACT §1 "Checkpoint": `versions_seen` round-trips exactly: every node, every
/// channel, every version with its kind, and a node that has seen nothing.
async fn versions_seen_roundtrips_exactly(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let step = Step::fresh()
        .seen("node1", "ch_a", 1)
        .seen("node1", "ch_b", 2)
        .seen("node2", "ch_a", 3)
        .seen("node3", "ch_c", "00000000000000000000000000000003.0.25")
        .with(|c| {
            c.versions_seen.insert("__input__".to_owned(), BTreeMap::new());
        });
    let want = step.checkpoint.versions_seen.clone();
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().map("checkpoint.versions_seen", &want, &t.checkpoint.versions_seen).finish()
}

/// CONTRACT §1 "Checkpoint": `updated_channels: None` and `Some(vec![])` stay distinct,
/// and a list comes back in its order.
async fn updated_channels_none_and_empty_stay_distinct(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let cases: [Option<Vec<String>>; 3] = [None, Some(vec![]), Some(vec!["b".into(), "a".into()])];
    for want in cases {
        let w = want.clone();
        let stored = cx.put(&cfg, Step::fresh().with(move |c| c.updated_channels = w)).await?;
        let t = cx.get_some(&stored).await?;
        t.expect_eq("checkpoint.updated_channels", &want, &t.checkpoint.updated_channels)?;
    }
    Ok(())
}

/// CONTRACT §1 "Metadata": the well-known keys `source`, `step`, `parents` and `run_id`
/// and a custom key read back exactly, and the saver adds no key.
async fn metadata_well_known_keys_roundtrip(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let run_id = uuid::Uuid::new_v4().to_string();
    let md = metadata(json!({
        "source": "loop",
        "step": 3,
        "parents": {"": new_id(), "child:1": new_id()},
        "run_id": run_id,
        "custom_key": "custom_value",
    }));
    let stored = cx.put(&cfg, Step::fresh().metadata(md.clone())).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().metadata(&md, &t.metadata).finish()
}

/// CONTRACT §1 "Metadata": any JSON value round-trips exactly: null, booleans, floats,
/// integers beyond 2^53 and at the i64/u64 limits, nested objects and arrays (empty ones
/// too), escapes, and Unicode in keys and values.
async fn metadata_any_json_value_roundtrips(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let md = metadata(json!({
        "source": "input",
        "step": -1,
        "null": null,
        "yes": true,
        "no": false,
        "float": 1.5,
        "negative_float": -0.25,
        "whole_float": 2.0,
        "above_2_53": 9_007_199_254_740_993_i64,
        "i64_min": i64::MIN,
        "u64_max": u64::MAX,
        "nested": {"a": [1, {"b": [null, "x", 2.5]}], "empty_object": {}, "empty_array": []},
        "escapes": "quote\" backslash\\ tab\t newline\n",
        "empty": "",
        "ключ": "значение \u{1f30d} 日本語",
        "emoji \u{1f389}": "\u{645}\u{631}\u{62d}\u{628}\u{627}",
    }));
    let stored = cx.put(&cfg, Step::fresh().metadata(md.clone())).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().metadata(&md, &t.metadata).finish()
}

/// CONTRACT §1 "Metadata": floats round-trip exactly, bit for bit, at the top level and
/// nested: values `f32` cannot hold (0.1, 1e-300, the largest finite `f64`, the smallest
/// normal `f64` negated, a float with 17 significant digits). A saver that stores floats
/// through `f32`, or prints them with fewer digits than a round-trip needs, changes them.
async fn metadata_floats_roundtrip_exactly(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let md = metadata(json!({
        "source": "loop",
        "step": 1,
        "tenth": 0.1,
        "tiny": 1e-300,
        "f64_max": 1.797_693_134_862_315_7e308,
        "neg_min_normal": -2.225_073_858_507_201_4e-308,
        "seventeen_digits": 123_456_789.123_456_79,
        "nested": {"list": [0.1, 1e-300, {"deep": 1.797_693_134_862_315_7e308}], "x": -0.3},
    }));
    let stored = cx.put(&cfg, Step::fresh().metadata(md.clone())).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().metadata(&md, &t.metadata).finish()
}

/// CONTRACT §1 "Metadata": a NUL character in a metadata string is either stored exactly,
/// or the whole `put` is refused with `InvalidInput` naming the key and nothing is stored;
/// never stripped or altered (upstream savers silently strip NULs).
async fn metadata_nul_char_kept_or_whole_put_refused(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let md = metadata(json!({"source": "loop", "step": 0, "nul_note": "a\u{0}b"}));
    let step = Step::fresh().metadata(md.clone()).value("a", json!("x"), 1);
    let id = step.id().to_owned();
    let at = cfg.clone().with_id(&id);
    let put = cx.try_put(&cfg, step).await;
    match &*put {
        Ok(_) => {
            let t = cx.get_some(&at).await?;
            t.diffs().metadata_key("nul_note", &md["nul_note"], &t.metadata).finish()
        }
        Err(CheckpointError::InvalidInput(msg)) => {
            ensure(msg.contains("nul_note"), || {
                format!("{put}: InvalidInput message should name the key \"nul_note\", got {msg:?}")
            })?;
            cx.get_none(&at).await
        }
        Err(e) => Err(Failure::new(format!(
            "{put} with a NUL in metadata: expected Ok or InvalidInput, got error {}: {}",
            e.kind(),
            e.display_chain()
        ))),
    }
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
    t.expect_config(&stored)?;
    cx.get_none(&CheckpointConfig::new(&thread).with_ns("child:1")).await
}

/// CONTRACT §2 put: a checkpoint is stored under its namespace; it is read there (with and
/// without its id) and not in the root.
async fn stored_in_its_child_namespace(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let cfg = CheckpointConfig::new(&thread).with_ns("child:abc");
    let stored = cx.put(&cfg, Step::fresh().value("a", json!(1), 1)).await?;
    let t = cx.get_some(&stored).await?;
    t.expect_config(&stored)?;
    let t = cx.get_some(&cfg).await?;
    t.expect_config(&stored)?;
    cx.get_none(&CheckpointConfig::new(&thread)).await
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
/// thread and namespace and the parent id, and is none without a parent.
async fn parent_is_the_config_checkpoint_id(cx: Cx) -> Checked {
    let cfg = cx.config("main").with_ns("child:1");
    let first = cx.put(&cfg, Step::fresh()).await?;
    let second = cx.put(&first, Step::fresh()).await?;
    let t = cx.get_some(&second).await?;
    t.expect_parent(Some(&first))?;
    let t = cx.get_some(&first).await?;
    t.expect_parent(None)
}

/// CONTRACT §2 put, bug scenario S06: a channel in `channel_versions` that the checkpoint
/// neither carries nor lists in `new_versions` reads the value stored earlier at that
/// version; the earlier checkpoint keeps reading its own values.
async fn unchanged_channel_reads_value_stored_earlier(cx: Cx) -> Checked {
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
    d.finish()
}

/// CONTRACT §2 put: a channel added in a step is read together with the channels kept
/// (not carried) from the parent.
async fn new_channel_is_read_alongside_kept_ones(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().keep("a", 1).value("b", json!("new_channel"), 1)).await?;
    let t = cx.get_some(&c2).await?;
    let want = values(&[("a", jv(json!("v1"))), ("b", jv(json!("new_channel")))]);
    t.diffs().map("checkpoint.channel_values", &want, &t.checkpoint.channel_values).finish()
}

/// CONTRACT §2 put: a channel not in `channel_versions` is absent on read, even if an
/// older checkpoint of the thread stored a value for it.
async fn channel_not_in_versions_is_absent(cx: Cx) -> Checked {
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
async fn channel_in_new_versions_without_value_is_absent(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("old"), 1).value("b", json!("kept"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().emptied("a", 2).keep("b", 1)).await?;
    let t = cx.get_some(&c2).await?;
    t.diffs()
        .map("checkpoint.channel_values", &values(&[("b", jv(json!("kept")))]), &t.checkpoint.channel_values)
        .eq(
            "checkpoint.channel_versions[\"a\"]",
            &Some(&ChannelVersion::Int(2)),
            &t.checkpoint.channel_versions.get("a"),
        )
        .finish()
}

/// CONTRACT §2 put: a kept channel reads the value stored at that version *in this
/// thread and namespace*. The same checkpoint ids, channel and version are used in two
/// threads and two namespaces, each with its own value.
async fn kept_channel_reads_its_own_thread_and_namespace(cx: Cx) -> Checked {
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
        t.expect_eq(
            "checkpoint.channel_values[\"a\"] (kept at version 1)",
            &Some(&jv(json!(label))),
            &t.checkpoint.channel_values.get("a"),
        )?;
    }
    Ok(())
}

/// CONTRACT §2 put: two sibling checkpoints whose versions both came from
/// `get_next_version` of the same current version each read back their own value.
async fn sibling_checkpoints_read_their_own_values(cx: Cx) -> Checked {
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

/// CONTRACT §2 put: an unchanged channel reads "the value stored for that channel at that
/// version in this thread and namespace", not the newest value of the channel. c1 stores
/// a = "v1" at version 1; c2, a child of c1, stores a = "v2" at version 2; then c3, a second
/// child of c1 (a fork), keeps a at version 1 and must read "v1".
async fn fork_reads_value_at_kept_version_not_newest(cx: Cx) -> Checked {
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
        t.expect_eq(
            format_args!("checkpoint.channel_values[\"a\"] ({why})"),
            &Some(&jv(json!(want))),
            &t.checkpoint.channel_values.get("a"),
        )?;
    }
    Ok(())
}

/// CONTRACT §2 put: siblings must not collide. c2a and c2b, both children of c1, store a at
/// `get_next_version(v1)` with "x" and "y" (c2b put first); c3, a child of c2b, keeps a at
/// c2b's version and must read "y", c2b's value, not the one stored last. A saver whose
/// `get_next_version` never repeats passes this trivially (the versions differ).
async fn child_of_sibling_reads_its_branch_value(cx: Cx) -> Checked {
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
    t.expect_eq(
        format_args!("checkpoint.channel_values[\"a\"] ({why})"),
        &Some(&jv(json!("y"))),
        &t.checkpoint.channel_values.get("a"),
    )
}

/// CONTRACT §2 put: a kept channel reads the value stored at that version in this thread
/// and namespace, "whether it came with this put or an earlier one", also when the parent
/// holds another version. c1 stores a = "v1" at version 1, c2 (child of c1) a = "v2" at
/// version 2; c3, a child of c2, keeps a at version 1 and must read "v1" (not the parent's
/// "v2", and not nothing).
async fn kept_older_version_reads_value_stored_at_it(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!("v2"), 2)).await?;
    let c3 = cx.put(&c2, Step::fresh().keep("a", 1)).await?;
    let t = cx.get_some(&c3).await?;
    t.expect_eq(
        "checkpoint.channel_values[\"a\"] (c3, a child of c2 which holds \"v2\" at version 2, keeps a at version 1, \
         where c1 stored \"v1\")",
        &Some(&jv(json!("v1"))),
        &t.checkpoint.channel_values.get("a"),
    )
}

/// CONTRACT §2 put: putting an id that exists replaces its checkpoint, metadata and parent.
async fn reput_replaces_checkpoint_metadata_and_parent(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let p0 = cx.put(&cfg, Step::fresh()).await?;
    let p1 = cx.put(&cfg, Step::fresh()).await?;
    let id = new_id();
    cx.put(&p0, Step::new(&id).value("a", json!("first"), 1).meta("tag", json!("first"))).await?;
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
    for cfg in [CheckpointConfig::new(""), CheckpointConfig::new("").with_ns("child:1").with_id(new_id())] {
        cx.try_put(&cfg, Step::fresh().value("a", json!(1), 1)).await.expect_invalid_config()?;
    }
    Ok(())
}

/// CONTRACT §2 get_next_version: the result is strictly greater than `current` (integers
/// numerically, strings by bytes, every integer below every string), and 1 when there is
/// none (`Int(1)`, or a string whose integer part before the first `.` is 1, the upstream
/// padded format).
async fn next_version_is_strictly_greater(cx: Cx) -> Checked {
    let mut d = Diffs::new();
    let first = cx.next_version(None);
    let is_one = match &*first {
        ChannelVersion::Int(i) => *i == 1,
        ChannelVersion::Str(s) => s.split('.').next().and_then(|p| p.parse::<u128>().ok()) == Some(1),
    };
    if !is_one {
        d.of(&first).push("", "1", format_args!("{:?}", *first));
    }
    let mut currents: Vec<ChannelVersion> = vec![
        ChannelVersion::Int(0),
        ChannelVersion::Int(1),
        ChannelVersion::Int(41),
        ChannelVersion::Int(i64::MAX - 1),
        // LangGraph's string format only (CONTRACT §2 get_next_version): a bare "1" is
        // not an input any LangGraph saver produces, and its own get_next_version fails it.
        ChannelVersion::from("00000000000000000000000000000002.0.6312886770924534"),
        ChannelVersion::from("00000000000000000000000000000009.0.9999"),
    ];
    let mut cur = first.into_value();
    for _ in 0..5 {
        let next = cx.next_version(Some(&cur)).into_value();
        currents.push(cur);
        cur = next;
    }
    for c in currents {
        let next = cx.next_version(Some(&c));
        if *next <= c {
            d.of(&next).push("", "a version greater than it", format_args!("{:?}", *next));
        }
    }
    d.finish()
}
