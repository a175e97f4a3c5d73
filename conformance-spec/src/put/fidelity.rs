//! `put`: the CONTRACT §1 type rules a put must keep: typed values byte for byte (large ones
//! too), channel versions with their kind, versions_seen exactly, `updated_channels` None
//! versus empty, metadata as any JSON. The cases are listed in the parent module's `cases()`.

use std::collections::BTreeMap;

use conformance_core::{ChannelVersion, CheckpointError, Failure, TypedValue};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{ensure, Checked};
use crate::data::{fidelity_values, jv, large_value, metadata, new_id, values, Step, LARGE_VALUE_LEN};

/// 2^53 - 1, the largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`):
/// the widest integer the cases put on a saver lacking [`conformance_core::Feature::WideNumbers`].
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// CONTRACT §1 "Checkpoint" (every field round-trips): the format version `v` reads back
/// as put, an older one (1) as well as the current 4, never a value of the saver's own.
pub(super) async fn format_version_roundtrips(cx: Cx) -> Checked {
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
pub(super) async fn channel_values_roundtrip_byte_for_byte(cx: Cx) -> Checked {
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
pub(super) fn describe_large(expected: &TypedValue, actual: &TypedValue) -> String {
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
pub(super) async fn large_channel_value_roundtrips(cx: Cx) -> Checked {
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
/// becomes `"1"`, a string `"1"` never becomes 1), up to 2^53 - 1 (the largest a JavaScript
/// number holds exactly), and the upstream zero-padded string format. Beyond 2^53:
/// [`channel_versions_beyond_2_53_roundtrip`].
pub(super) async fn channel_versions_roundtrip_with_their_kind(cx: Cx) -> Checked {
    versions_roundtrip(cx, MAX_SAFE_INTEGER).await
}

/// CONTRACT §1 "Channel version": integer versions beyond 2^53 (2^53 + 1) round-trip exactly
/// with their kind. Not run on a saver lacking [`conformance_core::Feature::WideNumbers`] (its capability is
/// then incomplete: the rule is MUST, CONTRACT §5 "Declared limits").
pub(super) async fn channel_versions_beyond_2_53_roundtrip(cx: Cx) -> Checked {
    versions_roundtrip(cx, 9_007_199_254_740_993).await
}

/// Puts versions of both kinds, the integer one as large as `big`, and reads them back.
async fn versions_roundtrip(cx: Cx, big: i64) -> Checked {
    let cfg = cx.config("main");
    let versions: Vec<(&str, ChannelVersion)> = vec![
        ("a", ChannelVersion::Int(1)),
        ("b", ChannelVersion::Int(2)),
        ("big", ChannelVersion::Int(big)),
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
pub(super) async fn versions_seen_roundtrips_exactly(cx: Cx) -> Checked {
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
pub(super) async fn updated_channels_none_and_empty_stay_distinct(cx: Cx) -> Checked {
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
pub(super) async fn metadata_well_known_keys_roundtrip(cx: Cx) -> Checked {
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
/// integers at ±(2^53 - 1), nested objects and arrays (empty ones too), escapes, and
/// Unicode in keys and values. Integers beyond 2^53 and integral floats:
/// [`metadata_wide_numbers_roundtrip`].
pub(super) async fn metadata_any_json_value_roundtrips(cx: Cx) -> Checked {
    metadata_roundtrip(cx, false).await
}

/// CONTRACT §1 "Metadata": integers beyond 2^53 and at the i64/u64 limits, and a float with
/// an integral value (2.0, never the integer 2), round-trip exactly. Not run on a saver
/// lacking [`conformance_core::Feature::WideNumbers`] (its capability is then incomplete: the rule is MUST).
pub(super) async fn metadata_wide_numbers_roundtrip(cx: Cx) -> Checked {
    metadata_roundtrip(cx, true).await
}

/// Puts metadata with every kind of JSON value, the numbers beyond a JavaScript number's
/// only when `wide`, and reads it back.
async fn metadata_roundtrip(cx: Cx, wide: bool) -> Checked {
    let cfg = cx.config("main");
    let mut md = metadata(json!({
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
    if !wide {
        for wide in ["whole_float", "above_2_53", "i64_min", "u64_max"] {
            md.remove(wide);
        }
        md.insert("max_safe".into(), json!(MAX_SAFE_INTEGER));
        md.insert("min_safe".into(), json!(-MAX_SAFE_INTEGER));
    }
    let stored = cx.put(&cfg, Step::fresh().metadata(md.clone())).await?;
    let t = cx.get_some(&stored).await?;
    t.diffs().metadata(&md, &t.metadata).finish()
}

/// CONTRACT §1 "Metadata": floats round-trip exactly, bit for bit, at the top level and
/// nested: values `f32` cannot hold (0.1, 1e-300, the largest finite `f64`, the smallest
/// normal `f64` negated, a float with 17 significant digits). A saver that stores floats
/// through `f32`, or prints them with fewer digits than a round-trip needs, changes them.
pub(super) async fn metadata_floats_roundtrip_exactly(cx: Cx) -> Checked {
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

/// CONTRACT §4 "Errors" (a failed call leaves nothing half-written), a MUST rule: a `put`
/// refused for a NUL character in metadata stores nothing. Whether the NUL is kept or
/// refused is the SHOULD case [`metadata_nul_char_kept_or_whole_put_refused`]; a saver that
/// accepts the put is judged there, not here.
pub(super) async fn refused_put_stores_nothing(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let md = metadata(json!({"source": "loop", "step": 0, "nul_note": "a\u{0}b"}));
    let step = Step::fresh().metadata(md).value("a", json!("x"), 1);
    let at = cfg.clone().with_id(step.id());
    match &*cx.try_put(&cfg, step).await {
        Ok(_) => Ok(()),
        Err(_) => cx.after("after the put was refused").get_none(&at).await,
    }
}

/// CONTRACT §1 "Metadata", a SHOULD rule: a NUL character in a metadata string is either
/// stored exactly, or the whole `put` is refused with `InvalidInput` naming the key and
/// nothing is stored; never stripped or altered (LangGraph's `get_checkpoint_metadata`
/// strips NULs before any saver stores them, so its own savers do not meet it).
pub(super) async fn metadata_nul_char_kept_or_whole_put_refused(cx: Cx) -> Checked {
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
