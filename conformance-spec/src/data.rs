//! Builders for the data the cases put and expect: time-ordered checkpoint ids ([`new_id`],
//! [`Ids`]), configs ([`at`]), checkpoints with values and versions ([`Step`],
//! [`rich_step`]), metadata, typed values and pending writes ([`pending`]).
//!
//! This module only builds values; [`crate::calls`] makes the calls and
//! [`crate::compare`] compares what comes back.

pub mod adversarial;

use std::collections::BTreeMap;
use std::sync::Mutex;

use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, PendingWrite, TypedValue,
};
use serde_json::{json, Value};

static LAST_ID: Mutex<Option<uuid::Uuid>> = Mutex::new(None);

/// A fresh checkpoint id: a hyphenated lowercase UUIDv7 string, strictly greater (as a
/// string) than every id this process made before, like LangGraph's uuid6 ids.
pub fn new_id() -> String {
    let mut last = LAST_ID.lock().unwrap_or_else(|e| e.into_inner());
    let mut id = uuid::Uuid::now_v7();
    if let Some(prev) = *last {
        if id <= prev {
            // Same millisecond and a smaller random part: bump the previous id by one.
            id = uuid::Uuid::from_u128(prev.as_u128() + 1);
        }
    }
    *last = Some(id);
    id.hyphenated().to_string()
}

/// `n` fresh ids in increasing order.
pub fn new_ids(n: usize) -> Vec<String> {
    (0..n).map(|_| new_id()).collect()
}

/// A JSON value as a typed value (tag `"json"`).
pub fn jv(value: Value) -> TypedValue {
    TypedValue::json(&value)
}

/// A config on (`thread`, `ns`) without a checkpoint id: the config of a `put` without a
/// parent, or of "the latest checkpoint" for `get_tuple`. Add `.with_id(id)` to name one.
pub fn at(thread: &str, ns: &str) -> CheckpointConfig {
    CheckpointConfig::new(thread).with_ns(ns)
}

/// The checkpoint id of a stored config (`""` if it has none).
pub fn id_of(config: &CheckpointConfig) -> &str {
    config.checkpoint_id.as_deref().unwrap_or_default()
}

/// A channel -> value map from `(channel, value)` pairs: the expected `channel_values`.
pub fn values(pairs: &[(&str, TypedValue)]) -> BTreeMap<String, TypedValue> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// A pending write as `get_tuple` should return it.
pub fn pending(task_id: &str, task_path: &str, channel: &str, value: TypedValue) -> PendingWrite {
    PendingWrite { task_id: task_id.to_owned(), task_path: task_path.to_owned(), channel: channel.to_owned(), value }
}

/// 16 MiB, the smallest value size a saver must store (CONTRACT §1 "Typed value").
pub const LARGE_VALUE_LEN: usize = 16 * 1024 * 1024;

/// `len` deterministic bytes that are not UTF-8 and contain NULs, tagged `"bytes"`.
pub fn large_value(len: usize) -> TypedValue {
    // A 4 KiB block of every byte value, repeated with the block number mixed in, so no two
    // blocks are equal (a saver that truncates, dedups or reorders blocks is caught) and
    // building 16 MiB stays cheap.
    let block: Vec<u8> = (0..4096usize).map(|i| ((i * 31 + i / 251) % 256) as u8).collect();
    let mut data = Vec::with_capacity(len);
    let mut n: u32 = 0;
    while data.len() < len {
        let take = (len - data.len()).min(block.len());
        let start = data.len();
        data.extend_from_slice(&block[..take]);
        for (k, b) in n.to_le_bytes().iter().enumerate().take(take) {
            data[start + k] ^= b;
        }
        n += 1;
    }
    TypedValue::bytes(data)
}

/// Values a saver must keep byte for byte with their type tag (CONTRACT §1 "Typed value"),
/// by a short name: JSON values (string, integer, list, object, null), empty bytes, NUL
/// bytes, bytes that are not UTF-8, non-ASCII text, and foreign type tags.
pub fn fidelity_values() -> Vec<(&'static str, TypedValue)> {
    vec![
        ("json_str", jv(json!("hello"))),
        ("json_int", jv(json!(42))),
        ("json_list", jv(json!([1, 2, 3]))),
        ("json_object", jv(json!({"nested": true, "n": [null, 1.5, "x"]}))),
        ("json_null", jv(Value::Null)),
        ("empty_bytes", TypedValue::bytes(Vec::new())),
        ("nul_bytes", TypedValue::bytes(b"\0a\0\0b\0".to_vec())),
        ("non_utf8", TypedValue::bytes(vec![0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xed, 0xa0, 0x80])),
        (
            "unicode_text",
            TypedValue::new(
                "str",
                "h\u{e9}llo \u{4f60}\u{597d} \u{1f30d} \u{645}\u{631}\u{62d}\u{628}\u{627} \u{200d}",
            ),
        ),
        ("msgpack_tag", TypedValue::new("msgpack", vec![0x92, 0x01, 0xa1, 0x61])),
        ("null_tag_empty", TypedValue::new("null", Vec::new())),
    ]
}

/// LangGraph-shaped metadata, what every checkpoint the kit puts carries (CONTRACT §5
/// "Declared limits"): `{source: "loop", step: 0, parents: {}}`, the upstream generator's.
/// A saver whose typed metadata requires these keys (`source` one of input|loop|update|fork,
/// `step` an integer, `parents` an object) is judged on each case's own rule.
pub fn default_metadata() -> CheckpointMetadata {
    json_object(json!({"source": "loop", "step": 0, "parents": {}}))
}

/// The case's own metadata keys (a JSON object literal) on top of [`default_metadata`]: a
/// key given here replaces the default one, so `metadata(json!({"source": "input", "k": 1}))`
/// is `{source: "input", step: 0, parents: {}, k: 1}`. A case that needs a marker gives it a
/// key of its own rather than an unusual `source`. Anything but an object gives the defaults.
pub fn metadata(value: Value) -> CheckpointMetadata {
    let mut m = default_metadata();
    m.extend(json_object(value));
    m
}

/// A JSON object literal as a map, nothing added (a `list` filter, a map to compare with);
/// anything but an object gives an empty map.
pub fn json_object(value: Value) -> CheckpointMetadata {
    match value {
        Value::Object(m) => m,
        _ => CheckpointMetadata::new(),
    }
}

/// LangGraph's current checkpoint format version (`Checkpoint.v`), what both its Python and
/// JS runtimes write, and what every checkpoint the kit puts carries unless its case is about
/// `v`. LangGraph JS's MemorySaver migrates an older checkpoint that has a parent on read
/// (it adds an empty `__pregel_tasks` channel to a `v < 4` one), so an older `v` would judge
/// that migration instead of each case's rule (docs/langgraph-savers.md, J-S3).
pub const FORMAT_VERSION: i64 = 4;

/// One `put`: the checkpoint, its metadata and its `new_versions`, built fluently.
///
/// ```
/// # use conformance_spec::data::*;
/// # use serde_json::json;
/// let s = Step::new(&new_id()).value("a", json!("v1"), 1).keep("b", 1).meta("step", json!(2));
/// assert!(s.new_versions.contains_key("a") && !s.new_versions.contains_key("b"));
/// ```
#[derive(Clone, Debug)]
pub struct Step {
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// Its metadata (default [`default_metadata`]).
    pub metadata: CheckpointMetadata,
    /// Its `new_versions`.
    pub new_versions: ChannelVersions,
}

impl Step {
    /// A checkpoint `id` with `v = 4` ([`FORMAT_VERSION`]), a fixed ISO-8601 `ts`, no
    /// channels, default metadata.
    pub fn new(id: &str) -> Self {
        Self {
            checkpoint: Checkpoint {
                v: FORMAT_VERSION,
                id: id.to_owned(),
                ts: "2026-11-29T21:03:59.727899+00:00".to_owned(),
                ..Checkpoint::default()
            },
            metadata: default_metadata(),
            new_versions: BTreeMap::new(),
        }
    }

    /// A step with a fresh id.
    pub fn fresh() -> Self {
        Self::new(&new_id())
    }

    /// The checkpoint id.
    pub fn id(&self) -> &str {
        &self.checkpoint.id
    }

    /// Channel `ch` changes in this step to the JSON `value` at integer `version`
    /// (value, version and new_versions all set).
    pub fn value(self, ch: &str, value: Value, version: i64) -> Self {
        self.typed(ch, jv(value), ChannelVersion::Int(version))
    }

    /// Channel `ch` changes to a typed `value` at `version`.
    pub fn typed(mut self, ch: &str, value: TypedValue, version: impl Into<ChannelVersion>) -> Self {
        let version = version.into();
        self.checkpoint.channel_values.insert(ch.to_owned(), value);
        self.checkpoint.channel_versions.insert(ch.to_owned(), version.clone());
        self.new_versions.insert(ch.to_owned(), version);
        self
    }

    /// Channel `ch` is unchanged at `version`: it is in `channel_versions` only (no value
    /// carried, not in `new_versions`), so the saver must find the value stored earlier.
    pub fn keep(mut self, ch: &str, version: impl Into<ChannelVersion>) -> Self {
        self.checkpoint.channel_versions.insert(ch.to_owned(), version.into());
        self
    }

    /// Channel `ch` changes to empty at `version`: in `channel_versions` and `new_versions`
    /// with no value, so it must be absent on read (CONTRACT §2 put).
    pub fn emptied(mut self, ch: &str, version: impl Into<ChannelVersion>) -> Self {
        let version = version.into();
        self.checkpoint.channel_versions.insert(ch.to_owned(), version.clone());
        self.new_versions.insert(ch.to_owned(), version);
        self
    }

    /// Channel `ch` is unchanged at `version` but its value is carried anyway (as LangGraph
    /// does): in `channel_versions` and `channel_values`, not in `new_versions`.
    pub fn carry(mut self, ch: &str, value: Value, version: i64) -> Self {
        self.checkpoint.channel_values.insert(ch.to_owned(), jv(value));
        self.checkpoint.channel_versions.insert(ch.to_owned(), ChannelVersion::Int(version));
        self
    }

    /// Sets metadata `key` to `value`.
    pub fn meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_owned(), value);
        self
    }

    /// Replaces the whole metadata (build it with [`metadata`], which keeps LangGraph's keys).
    pub fn metadata(mut self, metadata: CheckpointMetadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Records that `node` has seen `ch` at `version`.
    pub fn seen(mut self, node: &str, ch: &str, version: impl Into<ChannelVersion>) -> Self {
        self.checkpoint.versions_seen.entry(node.to_owned()).or_default().insert(ch.to_owned(), version.into());
        self
    }

    /// Applies `f` to the checkpoint (for fields without a builder method).
    pub fn with(mut self, f: impl FnOnce(&mut Checkpoint)) -> Self {
        f(&mut self.checkpoint);
        self
    }
}

/// Fresh time-ordered checkpoint ids with readable labels, for cases whose failure
/// messages must say which checkpoint is which (`c2`, not a 36-character uuid).
///
/// `Ids::new(&["c0", "c1"])` makes one [`new_id`] per label, in the given order, so the
/// ids sort as the labels are listed (`c0 < c1`). An id may be put more than once (in
/// several namespaces or threads) under its one label.
///
/// ```
/// # use conformance_spec::data::Ids;
/// let ids = Ids::new(&["c0", "c1"]);
/// assert!(ids.id("c0") < ids.id("c1"));
/// assert_eq!(ids.label(ids.id("c1")), "c1");
/// assert_eq!(ids.label("not-made-here"), "?not-made-here");
/// ```
#[derive(Clone, Debug)]
pub struct Ids {
    /// (label, id), in creation order.
    pairs: Vec<(String, String)>,
}

impl Ids {
    /// One fresh id per label, increasing in the order given.
    pub fn new(labels: &[&str]) -> Self {
        Self { pairs: labels.iter().map(|l| ((*l).to_owned(), new_id())).collect() }
    }

    /// The id of `label`.
    ///
    /// # Panics
    /// When `label` was not given to [`Ids::new`]: that is a bug in the case, not in the
    /// saver (the runner reports the panic with the case).
    pub fn id(&self, label: &str) -> &str {
        match self.pairs.iter().find(|(l, _)| l == label) {
            Some((_, id)) => id,
            None => panic!("case bug: no checkpoint id labelled {label:?} (labels: {:?})", self.labels_list()),
        }
    }

    /// The label of `id`, or `?{id}` for an id not made here (what a saver invented).
    pub fn label(&self, id: &str) -> String {
        match self.pairs.iter().find(|(_, i)| i == id) {
            Some((l, _)) => l.clone(),
            None => format!("?{id}"),
        }
    }

    /// The labels of `ids`, in order (see [`Ids::label`]).
    pub fn labels(&self, ids: &[String]) -> Vec<String> {
        ids.iter().map(|id| self.label(id)).collect()
    }

    /// `c0=<id>, c1=<id>, ...`, appended to failure messages so labels can be traced.
    pub fn legend(&self) -> String {
        self.pairs.iter().map(|(l, id)| format!("{l}={id}")).collect::<Vec<_>>().join(", ")
    }

    fn labels_list(&self) -> Vec<&str> {
        self.pairs.iter().map(|(l, _)| l.as_str()).collect()
    }
}

/// A step whose every part says which step it is: `channels` channels `{tag}.c00`,
/// `{tag}.c01`, ..., each a new JSON value naming `tag`, `i` and the channel at version
/// `i + 1`; a `versions_seen` entry; metadata with LangGraph's well-known keys only
/// (`source`, `step = i`, `parents`, and a `run_id` naming `tag` and `i`, with non-ASCII
/// text), so that a saver storing only those keys is judged on the case's own rule, not on
/// custom metadata (issue 14; custom keys are the `put` and `list` metadata cases' rule). A reader can tell a complete copy from a partial one by comparing what it read
/// with the step ([`crate::compare::Diffs::step`]). Steps of different tags on one thread
/// use different channels, so their values never share a (channel, version) key.
pub fn rich_step(tag: &str, i: usize, channels: usize) -> Step {
    let mut step = Step::fresh()
        .meta("source", json!("loop"))
        .meta("step", json!(i))
        .meta("parents", json!({}))
        .meta("run_id", json!(format!("{tag}-{i}-é✓")))
        .seen("node", &format!("{tag}.c00"), i as i64);
    for c in 0..channels {
        let value = json!({"tag": tag, "i": i, "c": c, "pad": "x".repeat(48)});
        step = step.value(&format!("{tag}.c{c:02}"), value, i as i64 + 1);
    }
    step
}
