//! A value that crosses the bridge comes back byte for byte: every edge the wire forms
//! have (NUL, non-UTF-8, 16 MiB, Unicode, extreme numbers, envelope look-alikes, foreign
//! tags, non-canonical JSON text) in channel values, pending writes and metadata.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use checkpoint_bridge::BridgeRegistration;
use conformance_core::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, ListOptions, PendingWrite, TypedValue,
};
use serde_json::{json, Value};

/// How long one read of the edge values (two 16 MiB values among them) may take: the kit's
/// default per-case limit, so a case reading them does not time out on the bridge's own
/// work (a JS child that counted a `Uint8Array`'s keys took over a minute per value).
const READ_LIMIT: Duration = Duration::from_secs(30);

/// What the saver behind the bridge can keep.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fidelity {
    /// Everything, task paths included (a Rust saver).
    Exact,
    /// LangGraph's API: no task path comes back, so writes are made with `""`.
    LangGraph,
    /// LangGraph JS's API: no task path either, and metadata and channel versions are JS
    /// numbers, which hold integers only up to 2^53 (typed values keep any integer: the JS
    /// child carries what a JS number cannot hold).
    JavaScript,
}

impl Fidelity {
    /// The largest integer metadata and channel versions can hold.
    fn max_int(self) -> i64 {
        if self == Self::JavaScript {
            (1 << 53) - 1
        } else {
            i64::MAX
        }
    }
}

fn jv(v: Value) -> TypedValue {
    TypedValue::json(&v)
}

/// 16 MiB whose bytes depend on their position, so a shifted or cut copy shows.
fn large() -> TypedValue {
    TypedValue::bytes((0..16 * 1024 * 1024usize).map(|i| (i * 131 + i / 4093) as u8).collect::<Vec<u8>>())
}

fn deep(levels: usize) -> Value {
    (0..levels).fold(json!("bottom"), |v, _| json!([v]))
}

/// Every edge value, by a name that says what it is.
pub fn edge_values() -> Vec<(&'static str, TypedValue)> {
    vec![
        ("json_empty_string", jv(json!(""))),
        ("json_nul_in_text", jv(json!("a\u{0}b\u{0}"))),
        (
            "json_unicode",
            jv(json!(
                "h\u{e9}llo \u{4f60}\u{597d} \u{1f30d} \u{645}\u{631}\u{62d}\u{628}\u{627} \u{200d} e\u{301} \u{fffd}"
            )),
        ),
        ("json_controls_and_escapes", jv(json!("\u{1}\u{1f}\u{7f} \" \\ / \n\r\t"))),
        ("json_nan_like_strings", jv(json!(["NaN", "Infinity", "-Infinity", "nan", "1e999"]))),
        ("json_i64_min", jv(json!(i64::MIN))),
        ("json_i64_max", jv(json!(i64::MAX))),
        ("json_u64_max", jv(json!(u64::MAX))),
        (
            "json_floats",
            jv(json!([0.1, -0.0, 5e-324, 1.797_693_134_862_315_7e308, 1e16, 1.5e-7, 123_456_789.125, 1e-5, 1.0])),
        ),
        ("json_literals", jv(json!([null, true, false, {}, []]))),
        ("json_null", jv(Value::Null)),
        ("json_deep", jv(deep(60))),
        ("json_lookalike", jv(json!({"$type": "bytes", "$base64": "AAA="}))),
        ("json_lookalike_floats", jv(json!({"$type": 1.5e-7, "$base64": [1e16, -0.0, 0.1]}))),
        ("json_half_lookalike", jv(json!({"$type": "bytes"}))),
        ("json_lc_constructor", jv(json!({"lc": 2, "type": "constructor", "id": ["os", "system"], "args": ["x"]}))),
        ("json_keys", jv(json!({"": 1, "\u{0}": 2, "\u{1f30d}": 3, "Z": 4, "a": 5, "é": 6}))),
        ("bytes_empty", TypedValue::bytes(Vec::new())),
        ("bytes_nul", TypedValue::bytes(b"\0a\0\0b\0".to_vec())),
        ("bytes_non_utf8", TypedValue::bytes(vec![0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xed, 0xa0, 0x80])),
        ("bytes_16_mib", large()),
        ("tag_msgpack", TypedValue::new("msgpack", vec![0x92, 0x01, 0xa1, 0x61])),
        ("tag_null", TypedValue::new("null", Vec::new())),
        ("tag_str_unicode", TypedValue::new("str", "h\u{e9}llo \u{1f30d}")),
        ("tag_empty", TypedValue::new("", b"x".to_vec())),
        ("tag_emoji_nul", TypedValue::new("\u{1f600}", vec![0])),
        ("json_not_canonical", TypedValue::new("json", "[1, 2]")),
        ("json_float_spelling", TypedValue::new("json", "1.0e2")),
        ("json_invalid", TypedValue::new("json", "{")),
        ("json_tag_non_utf8", TypedValue::new("json", vec![0xff, 0x00])),
    ]
}

fn metadata(fidelity: Fidelity) -> CheckpointMetadata {
    let Value::Object(mut m) = json!({
        "source": "loop",
        "step": -1,
        "parents": {},
        "big": u64::MAX,
        "neg": i64::MIN,
        "floats": [0.1, -0.0, 5e-324, 1e16, 1.5e-7],
        "unicode": "\u{4f60}\u{597d} \u{1f30d} e\u{301}",
        "nested": {"nul": "a\u{0}b", "list": [null, true, 1.5, "x", {"$type": "json", "$base64": ""}]},
        "lookalike": {"$type": "bytes", "$base64": "AAA="},
        "nan": "NaN",
        "empty": {},
    }) else {
        unreachable!()
    };
    if fidelity == Fidelity::JavaScript {
        m.insert("big".into(), json!(fidelity.max_int()));
        m.insert("neg".into(), json!(-fidelity.max_int()));
    }
    m
}

fn differences<K: std::fmt::Debug + Ord, V: PartialEq + std::fmt::Debug>(
    what: &str,
    sent: &BTreeMap<K, V>,
    got: &BTreeMap<K, V>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in sent {
        match got.get(k) {
            None => out.push(format!("{what} {k:?}: sent {v:?}, missing on read")),
            Some(g) if g != v => out.push(format!("{what} {k:?}: sent {v:?}, got {g:?}")),
            _ => {}
        }
    }
    for k in got.keys().filter(|k| !sent.contains_key(*k)) {
        out.push(format!("{what} {k:?}: not sent, got {:?}", got[k]));
    }
    out
}

/// A problem when a read took longer than [`READ_LIMIT`].
fn slow(call: &str, took: Duration) -> Vec<String> {
    if took <= READ_LIMIT {
        return Vec::new();
    }
    vec![format!(
        "{call} of the edge values took {:.1} s, more than the kit's {} s case limit",
        took.as_secs_f64(),
        READ_LIMIT.as_secs()
    )]
}

/// Puts a checkpoint carrying every edge value, writes every edge value, and reads both
/// back through `get_tuple` and `list`; fails listing every value that changed, and a read
/// slower than [`READ_LIMIT`].
pub fn roundtrip(reg: &BridgeRegistration, fidelity: Fidelity) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let fixture = reg.registration().fixture().await.expect("a saver");
        let saver = fixture.saver().clone();
        let values = edge_values();
        let mut checkpoint = Checkpoint {
            v: 4,
            id: "1f0a0000-0000-6000-8000-000000000001".into(),
            ts: "2026-01-01T00:00:00.000001+00:00".into(),
            updated_channels: Some(vec![]),
            ..Checkpoint::default()
        };
        for (i, (name, v)) in values.iter().enumerate() {
            let version = if i % 2 == 0 {
                ChannelVersion::Int(i as i64 + 1)
            } else {
                ChannelVersion::Str(format!("{:032}.0.{i}", i + 1))
            };
            checkpoint.channel_values.insert((*name).to_owned(), v.clone());
            checkpoint.channel_versions.insert((*name).to_owned(), version);
        }
        checkpoint.channel_versions.insert("kept_max".into(), ChannelVersion::Int(fidelity.max_int()));
        checkpoint.versions_seen.insert("node \u{1f30d}".into(), checkpoint.channel_versions.clone());
        let new_versions = checkpoint.channel_versions.clone();
        let thread = format!("values-{}", std::process::id());
        let stored = saver
            .put(&CheckpointConfig::new(thread.clone()), checkpoint.clone(), metadata(fidelity), new_versions)
            .await
            .expect("put");
        let path = if fidelity == Fidelity::Exact { "~push, ('a', 1) \u{1f30d}" } else { "" };
        let writes: Vec<(String, TypedValue)> = values.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect();
        saver.put_writes(&stored, writes, "task \u{0}1", path).await.expect("put_writes");
        let start = Instant::now();
        let got = saver.get_tuple(&stored).await.expect("get_tuple").expect("the checkpoint");
        let mut problems = slow("get_tuple", start.elapsed());
        problems.extend(differences("channel_values", &checkpoint.channel_values, &got.checkpoint.channel_values));
        problems.extend(differences(
            "channel_versions",
            &checkpoint.channel_versions,
            &got.checkpoint.channel_versions,
        ));
        problems.extend(differences(
            "metadata",
            &metadata(fidelity).into_iter().collect(),
            &got.metadata.clone().into_iter().collect(),
        ));
        for (field, same) in [
            ("versions_seen", got.checkpoint.versions_seen == checkpoint.versions_seen),
            ("updated_channels (Some([]))", got.checkpoint.updated_channels == checkpoint.updated_channels),
            (
                "v, id, ts",
                (got.checkpoint.v, &got.checkpoint.id, &got.checkpoint.ts)
                    == (checkpoint.v, &checkpoint.id, &checkpoint.ts),
            ),
        ] {
            if !same {
                problems.push(format!("{field} changed"));
            }
        }
        let want_writes: BTreeMap<String, PendingWrite> = values
            .iter()
            .map(|(n, v)| {
                let w = PendingWrite {
                    task_id: "task \u{0}1".into(),
                    task_path: path.into(),
                    channel: (*n).into(),
                    value: v.clone(),
                };
                ((*n).to_owned(), w)
            })
            .collect();
        let got_writes: BTreeMap<String, PendingWrite> =
            got.pending_writes.iter().map(|w| (w.channel.clone(), w.clone())).collect();
        problems.extend(differences("pending write", &want_writes, &got_writes));
        let order: Vec<&str> = got.pending_writes.iter().map(|w| w.channel.as_str()).collect();
        let want_order: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
        if order != want_order {
            problems.push(format!("pending writes out of index order: {order:?}"));
        }
        let start = Instant::now();
        let listed = saver.list(&thread, &ListOptions::all()).await.expect("list");
        problems.extend(slow("list", start.elapsed()));
        if listed.len() != 1 || listed[0] != got {
            problems.push(format!("list returned {} tuples, not the one get_tuple returned", listed.len()));
        }
        let cleanup = fixture.into_parts().1;
        drop(saver);
        if let Some(c) = cleanup {
            c().await.expect("cleanup");
        }
        assert!(
            problems.is_empty(),
            "{} value(s) changed crossing the bridge:\n{}",
            problems.len(),
            problems.join("\n")
        );
    });
}
