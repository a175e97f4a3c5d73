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

use conformance_core::{Capability, ChannelVersion, CheckpointConfig, CheckpointError, TypedValue};
use serde_json::{json, Value};

use crate::cx::{ensure, ensure_checkpoint_eq, ensure_eq, ensure_invalid_config, ensure_map_eq, CaseResult, Cx};
use crate::fixtures::{fidelity_values, jv, large_value, metadata, new_id, Step, LARGE_VALUE_LEN};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Put => [
        returns_config_of_stored_checkpoint ["test_put_returns_config"],
        roundtrip_channel_values ["test_put_roundtrip"],
        channel_values_roundtrip_byte_for_byte ["test_put_preserves_channel_values"],
        large_channel_value_roundtrips,
        channel_versions_roundtrip_with_their_kind ["test_put_preserves_channel_versions"],
        versions_seen_roundtrips_exactly ["test_put_preserves_versions_seen", "test_put_preserves_versions_seen_values"],
        updated_channels_none_and_empty_stay_distinct,
        metadata_well_known_keys_roundtrip ["test_put_preserves_metadata", "test_put_preserves_run_id"],
        metadata_any_json_value_roundtrips,
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
        reput_replaces_checkpoint_metadata_and_parent,
        empty_thread_id_is_invalid_config,
        next_version_is_strictly_greater,
    ])
}

/// A channel -> value map built from `(channel, value)` pairs, for comparisons.
fn values(pairs: &[(&str, TypedValue)]) -> BTreeMap<String, TypedValue> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// CONTRACT §2 put: the returned config has the same thread and namespace and
/// `checkpoint_id = checkpoint.id`.
async fn returns_config_of_stored_checkpoint(cx: Cx) -> CaseResult {
    let cfg = cx.config("main").with_ns("child:abc");
    let step = Step::fresh().value("k", json!("v"), 1);
    let id = step.id().to_owned();
    let got = cx.put(&cfg, step).await?;
    ensure_eq(format!("put({cfg}): returned config.thread_id"), &cfg.thread_id, &got.thread_id)?;
    ensure_eq(format!("put({cfg}): returned config.checkpoint_ns"), &cfg.checkpoint_ns, &got.checkpoint_ns)?;
    ensure_eq(format!("put({cfg}): returned config.checkpoint_id"), &Some(id), &got.checkpoint_id)
}

/// CONTRACT §2 put: what was put reads back through the returned config.
async fn roundtrip_channel_values(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let step = Step::fresh().value("msg", json!("hello"), 1).meta("source", json!("input")).meta("step", json!(-1));
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    ensure_eq(
        format!("get_tuple({stored}): checkpoint.id"),
        &stored.checkpoint_id.clone().unwrap_or_default(),
        &t.checkpoint.id,
    )?;
    let want: BTreeMap<String, _> = [("msg".to_owned(), jv(json!("hello")))].into();
    ensure_eq(format!("get_tuple({stored}): checkpoint.channel_values"), &want, &t.checkpoint.channel_values)?;
    ensure(t.checkpoint.v == 1, || format!("get_tuple({stored}): checkpoint.v: expected 1, got {}", t.checkpoint.v))
}

/// CONTRACT §1 "Typed value": type tag and bytes come back byte for byte (JSON values,
/// empty bytes, NUL bytes, non-UTF-8 bytes, non-ASCII text, foreign tags).
async fn channel_values_roundtrip_byte_for_byte(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let all = fidelity_values();
    let mut step = Step::fresh();
    for (ch, v) in &all {
        step = step.typed(ch, v.clone(), 1);
    }
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    ensure_map_eq(format!("get_tuple({stored}): channel_values"), &values(&all), &t.checkpoint.channel_values)
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
async fn large_channel_value_roundtrips(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let big = large_value(LARGE_VALUE_LEN);
    let stored = cx.put(&cfg, Step::fresh().typed("big", big.clone(), 1).value("small", json!(1), 1)).await?;
    let t = cx.get_some(&stored).await?;
    match t.checkpoint.channel_values.get("big") {
        None => Err(crate::Failure::new(format!("get_tuple({stored}): channel_values[\"big\"] is missing"))),
        Some(got) => ensure(got == &big, || {
            format!("get_tuple({stored}): channel_values[\"big\"]: {}", describe_large(&big, got))
        }),
    }
}

/// CONTRACT §1 "Channel version": versions round-trip with their kind (an integer 1 never
/// becomes `"1"`, a string `"1"` never becomes 1), including integers beyond 2^53 and the
/// upstream zero-padded string format.
async fn channel_versions_roundtrip_with_their_kind(cx: Cx) -> CaseResult {
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
    ensure_map_eq(format!("get_tuple({stored}): channel_versions"), &want, &t.checkpoint.channel_versions)?;
    let want_values: BTreeMap<String, TypedValue> =
        versions.iter().map(|(c, _)| ((*c).to_owned(), jv(json!(c)))).collect();
    ensure_map_eq(format!("get_tuple({stored}): channel_values"), &want_values, &t.checkpoint.channel_values)
}

/// CONTRACT §1 "Checkpoint": `versions_seen` round-trips exactly: every node, every
/// channel, every version with its kind, and a node that has seen nothing.
async fn versions_seen_roundtrips_exactly(cx: Cx) -> CaseResult {
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
    ensure_map_eq(format!("get_tuple({stored}): versions_seen"), &want, &t.checkpoint.versions_seen)
}

/// CONTRACT §1 "Checkpoint": `updated_channels: None` and `Some(vec![])` stay distinct,
/// and a list comes back in its order.
async fn updated_channels_none_and_empty_stay_distinct(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let cases: [Option<Vec<String>>; 3] = [None, Some(vec![]), Some(vec!["b".into(), "a".into()])];
    for want in cases {
        let w = want.clone();
        let stored = cx.put(&cfg, Step::fresh().with(move |c| c.updated_channels = w)).await?;
        let t = cx.get_some(&stored).await?;
        ensure_eq(format!("get_tuple({stored}): checkpoint.updated_channels"), &want, &t.checkpoint.updated_channels)?;
    }
    Ok(())
}

/// CONTRACT §1 "Metadata": the well-known keys `source`, `step`, `parents` and `run_id`
/// and a custom key read back exactly, and the saver adds no key.
async fn metadata_well_known_keys_roundtrip(cx: Cx) -> CaseResult {
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
    let (want, got): (BTreeMap<_, _>, BTreeMap<_, _>) = (md.into_iter().collect(), t.metadata.into_iter().collect());
    ensure_map_eq(format!("get_tuple({stored}): metadata"), &want, &got)
}

/// CONTRACT §1 "Metadata": any JSON value round-trips exactly: null, booleans, floats,
/// integers beyond 2^53 and at the i64/u64 limits, nested objects and arrays (empty ones
/// too), escapes, and Unicode in keys and values.
async fn metadata_any_json_value_roundtrips(cx: Cx) -> CaseResult {
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
    let (want, got): (BTreeMap<_, _>, BTreeMap<_, _>) = (md.into_iter().collect(), t.metadata.into_iter().collect());
    ensure_map_eq(format!("get_tuple({stored}): metadata"), &want, &got)
}

/// CONTRACT §1 "Metadata": a NUL character in a metadata string is either stored exactly,
/// or the whole `put` is refused with `InvalidInput` naming the key and nothing is stored;
/// never stripped or altered (upstream savers silently strip NULs).
async fn metadata_nul_char_kept_or_whole_put_refused(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let md = metadata(json!({"source": "loop", "step": 0, "nul_note": "a\u{0}b"}));
    let step = Step::fresh().metadata(md.clone()).value("a", json!("x"), 1);
    let id = step.id().to_owned();
    let at = cfg.clone().with_id(&id);
    match cx.try_put(&cfg, step).await {
        Ok(_) => {
            let t = cx.get_some(&at).await?;
            ensure_eq(
                format!("get_tuple({at}): metadata[\"nul_note\"]"),
                &md.get("nul_note"),
                &t.metadata.get("nul_note"),
            )
        }
        Err(CheckpointError::InvalidInput(msg)) => {
            ensure(msg.contains("nul_note"), || {
                format!(
                    "put({cfg}) of checkpoint {id}: InvalidInput message should name the key \"nul_note\", got {msg:?}"
                )
            })?;
            cx.get_none(&at).await
        }
        Err(e) => Err(crate::Failure::new(format!(
            "put({cfg}) of checkpoint {id} with a NUL in metadata: expected Ok or InvalidInput, got error {}: {}",
            e.kind(),
            e.display_chain()
        ))),
    }
}

/// CONTRACT §1 "Config": `""` is the root namespace; a config built without a namespace is
/// the root, and what is put there is read in the root.
async fn default_namespace_is_root(cx: Cx) -> CaseResult {
    let thread = cx.thread("main");
    let cfg = CheckpointConfig::new(&thread);
    let stored = cx.put(&cfg, Step::fresh().value("a", json!(1), 1)).await?;
    ensure_eq(format!("put({cfg}): returned config.checkpoint_ns"), "", stored.checkpoint_ns.as_str())?;
    let latest = CheckpointConfig::new(&thread).with_ns("");
    let t = cx.get_some(&latest).await?;
    ensure_eq(format!("get_tuple({latest}): config"), &stored, &t.config)?;
    cx.get_none(&CheckpointConfig::new(&thread).with_ns("child:1")).await
}

/// CONTRACT §2 put: a checkpoint is stored under its namespace; it is read there (with and
/// without its id) and not in the root.
async fn stored_in_its_child_namespace(cx: Cx) -> CaseResult {
    let thread = cx.thread("main");
    let cfg = CheckpointConfig::new(&thread).with_ns("child:abc");
    let stored = cx.put(&cfg, Step::fresh().value("a", json!(1), 1)).await?;
    let t = cx.get_some(&stored).await?;
    ensure_eq(format!("get_tuple({stored}): config"), &stored, &t.config)?;
    let t = cx.get_some(&cfg).await?;
    ensure_eq(format!("get_tuple({cfg}): config"), &stored, &t.config)?;
    cx.get_none(&CheckpointConfig::new(&thread)).await
}

/// CONTRACT §2 put: each checkpoint of a chain is stored under its own id with its own
/// metadata and parent.
async fn every_checkpoint_of_a_chain_is_readable_by_id(cx: Cx) -> CaseResult {
    let thread = cx.thread("main");
    let chain = cx.chain(&thread, "", 3).await?;
    for (i, cfg) in chain.iter().enumerate() {
        let t = cx.get_some(cfg).await?;
        ensure_eq(format!("get_tuple({cfg}): config"), cfg, &t.config)?;
        ensure_eq(format!("get_tuple({cfg}): metadata[\"step\"]"), &Some(&json!(i)), &t.metadata.get("step"))?;
        let parent = if i == 0 { None } else { Some(chain[i - 1].clone()) };
        ensure_eq(format!("get_tuple({cfg}): parent_config"), &parent, &t.parent_config)?;
    }
    Ok(())
}

/// CONTRACT §2 put: checkpoints are keyed by thread; the same checkpoint id in two threads
/// is two checkpoints.
async fn threads_are_isolated(cx: Cx) -> CaseResult {
    let id = new_id();
    let one = cx.config("one");
    let two = cx.config("two");
    cx.put(&one, Step::new(&id).value("x", json!("thread1"), 1).meta("owner", json!("one"))).await?;
    cx.put(&two, Step::new(&id).value("x", json!("thread2"), 1).meta("owner", json!("two"))).await?;
    for (cfg, label, owner) in [(&one, "thread1", "one"), (&two, "thread2", "two")] {
        for read in [cfg.clone(), cfg.clone().with_id(&id)] {
            let t = cx.get_some(&read).await?;
            ensure_eq(
                format!("get_tuple({read}): channel_values[\"x\"]"),
                &Some(&jv(json!(label))),
                &t.checkpoint.channel_values.get("x"),
            )?;
            ensure_eq(
                format!("get_tuple({read}): metadata[\"owner\"]"),
                &Some(&json!(owner)),
                &t.metadata.get("owner"),
            )?;
            ensure_eq(format!("get_tuple({read}): config.thread_id"), &cfg.thread_id, &t.config.thread_id)?;
        }
    }
    Ok(())
}

/// CONTRACT §2 put: the parent is `config.checkpoint_id`; `parent_config` names the same
/// thread and namespace and the parent id, and is none without a parent.
async fn parent_is_the_config_checkpoint_id(cx: Cx) -> CaseResult {
    let cfg = cx.config("main").with_ns("child:1");
    let first = cx.put(&cfg, Step::fresh()).await?;
    let second = cx.put(&first, Step::fresh()).await?;
    let t = cx.get_some(&second).await?;
    ensure_eq(format!("get_tuple({second}): parent_config"), &Some(first.clone()), &t.parent_config)?;
    let t = cx.get_some(&first).await?;
    ensure_eq(format!("get_tuple({first}): parent_config"), &None, &t.parent_config)
}

/// CONTRACT §2 put, bug scenario S06: a channel in `channel_versions` that the checkpoint
/// neither carries nor lists in `new_versions` reads the value stored earlier at that
/// version; the earlier checkpoint keeps reading its own values.
async fn unchanged_channel_reads_value_stored_earlier(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("messages", json!(["hi"]), 1).value("count", json!(1), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().keep("messages", 1).value("count", json!(2), 2)).await?;
    let t2 = cx.get_some(&c2).await?;
    let want2 = values(&[("messages", jv(json!(["hi"]))), ("count", jv(json!(2)))]);
    ensure_map_eq(format!("get_tuple({c2}): channel_values"), &want2, &t2.checkpoint.channel_values)?;
    let t1 = cx.get_some(&c1).await?;
    let want1 = values(&[("messages", jv(json!(["hi"]))), ("count", jv(json!(1)))]);
    ensure_map_eq(format!("get_tuple({c1}): channel_values"), &want1, &t1.checkpoint.channel_values)
}

/// CONTRACT §2 put: a channel added in a step is read together with the channels kept
/// (not carried) from the parent.
async fn new_channel_is_read_alongside_kept_ones(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().keep("a", 1).value("b", json!("new_channel"), 1)).await?;
    let t = cx.get_some(&c2).await?;
    let want = values(&[("a", jv(json!("v1"))), ("b", jv(json!("new_channel")))]);
    ensure_map_eq(format!("get_tuple({c2}): channel_values"), &want, &t.checkpoint.channel_values)
}

/// CONTRACT §2 put: a channel not in `channel_versions` is absent on read, even if an
/// older checkpoint of the thread stored a value for it.
async fn channel_not_in_versions_is_absent(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("v1"), 1).value("b", json!("v2"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!("v1_updated"), 2)).await?;
    let t = cx.get_some(&c2).await?;
    ensure_map_eq(
        format!("get_tuple({c2}): channel_values"),
        &values(&[("a", jv(json!("v1_updated")))]),
        &t.checkpoint.channel_values,
    )?;
    let t = cx.get_some(&c1).await?;
    let want = values(&[("a", jv(json!("v1"))), ("b", jv(json!("v2")))]);
    ensure_map_eq(format!("get_tuple({c1}): channel_values"), &want, &t.checkpoint.channel_values)
}

/// CONTRACT §2 put: a channel in `new_versions` with no value is empty and absent on read
/// (not filled from an older version), while its version still round-trips.
async fn channel_in_new_versions_without_value_is_absent(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!("old"), 1).value("b", json!("kept"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().emptied("a", 2).keep("b", 1)).await?;
    let t = cx.get_some(&c2).await?;
    ensure_map_eq(
        format!("get_tuple({c2}): channel_values"),
        &values(&[("b", jv(json!("kept")))]),
        &t.checkpoint.channel_values,
    )?;
    ensure_eq(
        format!("get_tuple({c2}): channel_versions[\"a\"]"),
        &Some(&ChannelVersion::Int(2)),
        &t.checkpoint.channel_versions.get("a"),
    )
}

/// CONTRACT §2 put: a kept channel reads the value stored at that version *in this
/// thread and namespace*. The same checkpoint ids, channel and version are used in two
/// threads and two namespaces, each with its own value.
async fn kept_channel_reads_its_own_thread_and_namespace(cx: Cx) -> CaseResult {
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
        ensure_eq(
            format!("get_tuple({at}): channel_values[\"a\"] (kept at version 1)"),
            &Some(&jv(json!(label))),
            &t.checkpoint.channel_values.get("a"),
        )?;
    }
    Ok(())
}

/// CONTRACT §2 put: two sibling checkpoints whose versions both came from
/// `get_next_version` of the same current version each read back their own value.
async fn sibling_checkpoints_read_their_own_values(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let v1 = cx.saver.get_next_version(None);
    let parent = cx.put(&cfg, Step::fresh().typed("a", jv(json!("base")), v1.clone())).await?;
    let left_v = cx.saver.get_next_version(Some(&v1));
    let right_v = cx.saver.get_next_version(Some(&v1));
    let left = cx.put(&parent, Step::fresh().typed("a", jv(json!("left")), left_v)).await?;
    let right = cx.put(&parent, Step::fresh().typed("a", jv(json!("right")), right_v)).await?;
    for (at, want) in [(&parent, "base"), (&left, "left"), (&right, "right")] {
        let t = cx.get_some(at).await?;
        ensure_eq(
            format!("get_tuple({at}): channel_values[\"a\"]"),
            &Some(&jv(json!(want))),
            &t.checkpoint.channel_values.get("a"),
        )?;
    }
    Ok(())
}

/// CONTRACT §2 put: putting an id that exists replaces its checkpoint, metadata and parent.
async fn reput_replaces_checkpoint_metadata_and_parent(cx: Cx) -> CaseResult {
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
    let want_md: BTreeMap<String, Value> = second.metadata.clone().into_iter().collect();
    let want_cp = second.checkpoint.clone();
    let at = cx.put(&p1, second).await?;
    let t = cx.get_some(&at).await?;
    ensure_checkpoint_eq(format!("get_tuple({at}) after re-put: checkpoint"), &want_cp, &t.checkpoint)?;
    let got_md: BTreeMap<String, Value> = t.metadata.into_iter().collect();
    ensure_map_eq(format!("get_tuple({at}) after re-put: metadata"), &want_md, &got_md)?;
    ensure_eq(format!("get_tuple({at}) after re-put: parent_config"), &Some(p1), &t.parent_config)
}

/// CONTRACT §1 "Config": an empty `thread_id` is an `InvalidConfig` error, never a panic
/// or a silent default.
async fn empty_thread_id_is_invalid_config(cx: Cx) -> CaseResult {
    for cfg in [CheckpointConfig::new(""), CheckpointConfig::new("").with_ns("child:1").with_id(new_id())] {
        let r = cx.try_put(&cfg, Step::fresh().value("a", json!(1), 1)).await;
        ensure_invalid_config(format!("put({cfg})"), r)?;
    }
    Ok(())
}

/// CONTRACT §2 get_next_version: the result is strictly greater than `current` (integers
/// numerically, strings by bytes, every integer below every string), and 1 when there is
/// none (`Int(1)`, or a string whose integer part before the first `.` is 1, the upstream
/// padded format).
async fn next_version_is_strictly_greater(cx: Cx) -> CaseResult {
    let first = cx.saver.get_next_version(None);
    let is_one = match &first {
        ChannelVersion::Int(i) => *i == 1,
        ChannelVersion::Str(s) => s.split('.').next().and_then(|p| p.parse::<u128>().ok()) == Some(1),
    };
    ensure(is_one, || format!("get_next_version(None): expected 1, got {first:?}"))?;
    let mut currents: Vec<ChannelVersion> = vec![
        ChannelVersion::Int(0),
        ChannelVersion::Int(1),
        ChannelVersion::Int(41),
        ChannelVersion::Int(i64::MAX - 1),
        ChannelVersion::from("1"),
        ChannelVersion::from("00000000000000000000000000000002.0.6312886770924534"),
        ChannelVersion::from("00000000000000000000000000000009.0.9999"),
    ];
    let mut cur = first;
    for _ in 0..5 {
        let next = cx.saver.get_next_version(Some(&cur));
        currents.push(cur);
        cur = next;
    }
    for c in currents {
        let next = cx.saver.get_next_version(Some(&c));
        ensure(next > c, || {
            format!("get_next_version(Some({c:?})): expected a version greater than it, got {next:?}")
        })?;
    }
    Ok(())
}
