//! The contract types of docs/contract.md §1.
//!
//! Field names follow LangGraph's (`thread_id`, `checkpoint_ns`, `checkpoint_id`,
//! `channel_values`, `channel_versions`, `versions_seen`, ...). Every type is plain data:
//! `Clone`, `PartialEq`, `Debug` and serde-serialisable, so savers may store them with any
//! serde format and the kit can compare them field by field.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Metadata of a checkpoint: a JSON object (CONTRACT §1 "Metadata").
///
/// Well-known keys are `source` (`input|loop|update|fork`), `step` (integer, -1 for the
/// first input), `parents` (namespace -> checkpoint id) and `run_id`. Any other key and any
/// JSON value must round-trip exactly.
pub type CheckpointMetadata = serde_json::Map<String, serde_json::Value>;

/// Channel name -> channel version (CONTRACT §1 "Channel version").
pub type ChannelVersions = BTreeMap<String, ChannelVersion>;

/// The channel `__error__`; its writes are stored at the fixed index -1.
pub const ERROR: &str = "__error__";
/// The channel `__scheduled__`; its writes are stored at the fixed index -2.
pub const SCHEDULED: &str = "__scheduled__";
/// The channel `__interrupt__`; its writes are stored at the fixed index -3.
pub const INTERRUPT: &str = "__interrupt__";
/// The channel `__resume__`; its writes are stored at the fixed index -4.
pub const RESUME: &str = "__resume__";

/// The special channels and their fixed write index (CONTRACT §1 "Special channels").
pub const SPECIAL_CHANNELS: [(&str, i64); 4] = [(ERROR, -1), (SCHEDULED, -2), (INTERRUPT, -3), (RESUME, -4)];

/// The fixed negative index of a special channel, or `None` for a regular channel.
pub fn special_write_index(channel: &str) -> Option<i64> {
    SPECIAL_CHANNELS.iter().find(|(name, _)| *name == channel).map(|(_, idx)| *idx)
}

/// The index a write gets when it is the `position`-th (0-based) entry of one `put_writes`
/// call: the special channel's fixed negative index, or `position` (CONTRACT §2 put_writes).
pub fn write_index(channel: &str, position: usize) -> i64 {
    special_write_index(channel).unwrap_or(position as i64)
}

/// Where a checkpoint lives (CONTRACT §1 "Config").
///
/// `thread_id` must be non-empty (`InvalidConfig` otherwise); `checkpoint_ns` is `""` for
/// the root graph and `child:abc`-like for subgraphs; `checkpoint_id` is optional and means
/// "the parent" for `put`, "exactly this one" for `get_tuple`, "the owner" for `put_writes`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CheckpointConfig {
    /// The thread; never empty.
    pub thread_id: String,
    /// The namespace; `""` is the root.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The checkpoint id, if the call needs one.
    #[serde(default)]
    pub checkpoint_id: Option<String>,
}

impl CheckpointConfig {
    /// A config for `thread_id` in the root namespace with no checkpoint id.
    pub fn new(thread_id: impl Into<String>) -> Self {
        Self { thread_id: thread_id.into(), checkpoint_ns: String::new(), checkpoint_id: None }
    }

    /// The same config in namespace `checkpoint_ns`.
    pub fn with_ns(mut self, checkpoint_ns: impl Into<String>) -> Self {
        self.checkpoint_ns = checkpoint_ns.into();
        self
    }

    /// The same config naming `checkpoint_id`.
    pub fn with_id(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }

    /// The same config with no checkpoint id.
    pub fn without_id(mut self) -> Self {
        self.checkpoint_id = None;
        self
    }

    /// Checks the CONTRACT §1 rule that `thread_id` is non-empty.
    ///
    /// # Errors
    /// [`crate::CheckpointError::InvalidConfig`] when `thread_id` is empty.
    pub fn validate(&self) -> Result<(), crate::CheckpointError> {
        check_thread_id(&self.thread_id)
    }

    /// The checkpoint `put_writes` writes to: validates the config and returns its
    /// `checkpoint_id` (CONTRACT §2 put_writes: required).
    ///
    /// # Errors
    /// [`crate::CheckpointError::InvalidConfig`] for an empty `thread_id` or no `checkpoint_id`.
    pub fn write_checkpoint_id(&self) -> Result<&str, crate::CheckpointError> {
        self.validate()?;
        self.checkpoint_id
            .as_deref()
            .ok_or_else(|| crate::CheckpointError::InvalidConfig("put_writes needs config.checkpoint_id".into()))
    }
}

impl fmt::Display for CheckpointConfig {
    /// `thread=T, ns="N", id=I` (or `id=none`), the form used in failure messages; the
    /// thread and id as [`shown_id`] spells them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.checkpoint_id.as_deref().map_or(Cow::Borrowed("none"), shown_id);
        write!(f, "thread={}, ns={:?}, id={id}", shown_id(&self.thread_id), self.checkpoint_ns)
    }
}

/// An identifier (thread_id, checkpoint_id, run_id, ...) as messages show it: bare when it
/// is plain (non-empty, printable ASCII, none of `"'(),=[]{}\` and no space), else quoted
/// with escapes (`"a "`, `""`, `"t\n"`), so that two different ids never read the same.
pub fn shown_id(id: &str) -> Cow<'_, str> {
    let plain = !id.is_empty() && id.bytes().all(|b| b.is_ascii_graphic() && !b"\"'(),=[]{}\\".contains(&b));
    if plain {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(format!("{id:?}"))
    }
}

/// Checks the CONTRACT §1 rule that a `thread_id` is non-empty (for methods that take a
/// bare thread id: `list`, `delete_thread`, `copy_thread`, ...).
///
/// # Errors
/// [`crate::CheckpointError::InvalidConfig`] when `thread_id` is empty.
pub fn check_thread_id(thread_id: &str) -> Result<(), crate::CheckpointError> {
    if thread_id.is_empty() {
        return Err(crate::CheckpointError::InvalidConfig("thread_id must be a non-empty string".into()));
    }
    Ok(())
}

/// An opaque serialized value: a `(type tag, bytes)` pair, the shape of LangGraph's
/// `dumps_typed` (CONTRACT §1 "Typed value").
///
/// Savers store and return both parts byte for byte (empty, NUL, non-UTF-8 and values of
/// 16 MiB or more included) and never interpret the bytes.
///
/// Its serde form is lossless: in JSON a canonical `"json"` value is the JSON itself and
/// anything else an envelope with base64 bytes; binary formats keep the pair (see
/// [`crate::json`]).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TypedValue {
    /// The serializer's type tag, e.g. `"json"`, `"bytes"`, `"msgpack"`, `"null"`.
    pub type_tag: String,
    /// The serialized bytes.
    pub data: Vec<u8>,
}

impl TypedValue {
    /// A value with the given tag and bytes.
    pub fn new(type_tag: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self { type_tag: type_tag.into(), data: data.into() }
    }

    /// A JSON value, tagged `"json"` and serialized compactly.
    pub fn json(value: &serde_json::Value) -> Self {
        Self::new("json", serde_json::to_vec(value).unwrap_or_default())
    }

    /// Raw bytes, tagged `"bytes"`.
    pub fn bytes(data: impl Into<Vec<u8>>) -> Self {
        Self::new("bytes", data)
    }

    /// Decodes a `"json"` value; `None` for another tag or invalid JSON.
    pub fn as_json(&self) -> Option<serde_json::Value> {
        if self.type_tag != "json" {
            return None;
        }
        serde_json::from_slice(&self.data).ok()
    }
}

impl fmt::Debug for TypedValue {
    /// JSON values print as JSON, UTF-8 as a string, anything else as a length and a hex
    /// prefix, so failure messages stay short even for 16 MiB values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(v) = self.as_json() {
            return write!(f, "{}:{}", self.type_tag, v);
        }
        if let Some(v) = (self.type_tag == "msgpack").then(|| msgpack_scalar(&self.data)).flatten() {
            return write!(f, "msgpack:{v}");
        }
        match std::str::from_utf8(&self.data) {
            Ok(s) if s.len() <= 80 => write!(f, "{}:{:?}", self.type_tag, s),
            _ => {
                let head: String = self.data.iter().take(16).map(|b| format!("{b:02x}")).collect();
                write!(f, "{}:<{} bytes, starting {}>", self.type_tag, self.data.len(), head)
            }
        }
    }
}

/// A msgpack value that is one scalar (nil, a bool, an integer, a float), written as its
/// value (`4`, `-1`, `true`), so a message about LangGraph's msgpack-encoded numbers reads
/// `msgpack:4`, not the bytes; `None` for anything else.
fn msgpack_scalar(data: &[u8]) -> Option<String> {
    let (&first, rest) = data.split_first()?;
    // The big-endian integer of exactly `n` bytes after the marker.
    let be = |n: usize| {
        (rest.len() == n).then(|| {
            let mut b = [0u8; 8];
            b[8 - n..].copy_from_slice(rest);
            u64::from_be_bytes(b)
        })
    };
    Some(match first {
        0x00..=0x7f if rest.is_empty() => first.to_string(),
        0xe0..=0xff if rest.is_empty() => (first as i8).to_string(),
        0xc0 if rest.is_empty() => "nil".to_owned(),
        0xc2 if rest.is_empty() => "false".to_owned(),
        0xc3 if rest.is_empty() => "true".to_owned(),
        0xcc..=0xcf => be(1 << (first - 0xcc))?.to_string(),
        0xd0..=0xd3 => {
            let n = 1usize << (first - 0xd0);
            let shift = 64 - 8 * n as u32;
            (((be(n)? << shift) as i64) >> shift).to_string()
        }
        0xca => f32::from_be_bytes(rest.try_into().ok()?).to_string(),
        0xcb => f64::from_be_bytes(rest.try_into().ok()?).to_string(),
        _ => return None,
    })
}

/// A channel version: an integer or a string (CONTRACT §1 "Channel version").
///
/// It round-trips with its kind: `Int(1)` never comes back as `Str("1")`. Integers order
/// numerically, strings by bytes; across kinds every integer orders before every string.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ChannelVersion {
    /// An integer version (LangGraph's base default).
    Int(i64),
    /// A string version (LangGraph's savers use `"{:032}.{random}"`).
    Str(String),
}

impl Ord for ChannelVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => a.cmp(b),
            (Self::Str(a), Self::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Self::Int(_), Self::Str(_)) => Ordering::Less,
            (Self::Str(_), Self::Int(_)) => Ordering::Greater,
        }
    }
}

impl PartialOrd for ChannelVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ChannelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(i) => write!(f, "{i}"),
            Self::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ChannelVersion {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<&str> for ChannelVersion {
    fn from(v: &str) -> Self {
        Self::Str(v.to_owned())
    }
}

/// The default `get_next_version` (CONTRACT §2): strictly greater than `current`.
///
/// `None` gives `Int(1)`; `Int(n)` gives `Int(n + 1)` (saturating at `i64::MAX`, which then
/// falls back to a string so the result is still greater); `Str(s)` gives the 32-digit
/// zero-padded successor of its integer part (the text before the first `.`) when that is
/// greater than `s` by bytes, and otherwise `s` followed by `".1"`, which always is.
pub fn next_version(current: Option<&ChannelVersion>) -> ChannelVersion {
    match current {
        None => ChannelVersion::Int(1),
        Some(ChannelVersion::Int(n)) => match n.checked_add(1) {
            Some(m) => ChannelVersion::Int(m),
            None => ChannelVersion::Str(format!("{:032}", i128::from(*n) + 1)),
        },
        Some(ChannelVersion::Str(s)) => {
            let int_part = s.split('.').next().unwrap_or("");
            if let Ok(n) = int_part.parse::<u128>() {
                let candidate = format!("{:032}", n.saturating_add(1));
                if candidate.as_bytes() > s.as_bytes() {
                    return ChannelVersion::Str(candidate);
                }
            }
            ChannelVersion::Str(format!("{s}.1"))
        }
    }
}

/// A checkpoint: the state of a graph after one step (CONTRACT §1 "Checkpoint").
///
/// Every field round-trips exactly; `updated_channels: None` and `Some(vec![])` stay distinct.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version (LangGraph writes 1..4).
    pub v: i64,
    /// The checkpoint id; ids sort in creation order (uuid6/uuid7 strings).
    pub id: String,
    /// ISO-8601 timestamp; may be empty.
    pub ts: String,
    /// Channel -> value. On read: the value stored for each channel of `channel_versions`.
    pub channel_values: BTreeMap<String, TypedValue>,
    /// Channel -> version.
    pub channel_versions: ChannelVersions,
    /// Node -> channel -> version the node has seen.
    pub versions_seen: BTreeMap<String, ChannelVersions>,
    /// The channels updated in this step, if recorded.
    pub updated_channels: Option<Vec<String>>,
}

/// A pending write of a task (CONTRACT §1 "Pending write").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingWrite {
    /// The task that made the write.
    pub task_id: String,
    /// The task's path (`""` when unknown); writes sort by it first.
    pub task_path: String,
    /// The channel written.
    pub channel: String,
    /// The value written.
    pub value: TypedValue,
}

/// A stored checkpoint with everything a reader needs (CONTRACT §1 "Checkpoint tuple").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointTuple {
    /// Thread, namespace and id, all set.
    pub config: CheckpointConfig,
    /// The checkpoint with `channel_values` rebuilt. Shared so that in-memory savers can
    /// hand out a stored checkpoint without copying it.
    pub checkpoint: Arc<Checkpoint>,
    /// The metadata as stored.
    pub metadata: CheckpointMetadata,
    /// Thread, namespace and parent id, or `None` for a checkpoint without a parent.
    pub parent_config: Option<CheckpointConfig>,
    /// The checkpoint's pending writes, ordered by (`task_path`, `task_id`, index).
    pub pending_writes: Vec<PendingWrite>,
}

/// The scope and options of `list` (CONTRACT §2 list). Every field may be left out of
/// its JSON form (absent: no restriction).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListOptions {
    /// Restrict to this namespace; `None` lists every namespace of the thread.
    pub checkpoint_ns: Option<String>,
    /// Restrict to this checkpoint id.
    pub checkpoint_id: Option<String>,
    /// Every key must equal the top-level metadata value by JSON equality (numbers by
    /// value, `null` also matches a missing key). Empty matches everything.
    pub filter: CheckpointMetadata,
    /// Only checkpoints whose id is strictly less than this id (which need not exist).
    pub before: Option<String>,
    /// At most this many, applied last; `Some(0)` gives nothing.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// Every checkpoint of the thread, in every namespace.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only namespace `ns`.
    pub fn ns(mut self, ns: impl Into<String>) -> Self {
        self.checkpoint_ns = Some(ns.into());
        self
    }

    /// Adds a filter entry.
    pub fn filter(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.filter.insert(key.into(), value);
        self
    }

    /// Sets `before`.
    pub fn before(mut self, id: impl Into<String>) -> Self {
        self.before = Some(id.into());
        self
    }

    /// Sets `limit`.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets the checkpoint id scope.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(id.into());
        self
    }
}

/// The `filter` rule of CONTRACT §2 list for one metadata object: every key equal by JSON
/// equality, numbers by value (1 == 1.0), booleans never equal to numbers, a `null` filter
/// value matching a missing key.
pub fn metadata_matches(metadata: &CheckpointMetadata, filter: &CheckpointMetadata) -> bool {
    filter.iter().all(|(key, want)| match metadata.get(key) {
        None => want.is_null(),
        Some(have) => json_equal(have, want),
    })
}

/// JSON equality with numbers compared by value (CONTRACT §2 list `filter`): `1` equals
/// `1.0`, and an integer equals a float only when the float is exactly that integer, so
/// `9223372036854775807` does not equal `9.223372036854776e18` (Python's `==` and
/// Postgres `jsonb` compare the same way; a comparison through `f64` would say equal).
pub fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(i, j)| json_equal(i, j)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Exact numeric equality of two JSON numbers: integers as integers, floats as floats,
/// and an integer against a float only when the float is integral and equal to it.
fn numbers_equal(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    let int = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (int(x), int(y)) {
        (Some(i), Some(j)) => i == j,
        (Some(i), None) => y.as_f64().is_some_and(|f| float_is_integer(f, i)),
        (None, Some(j)) => x.as_f64().is_some_and(|f| float_is_integer(f, j)),
        (None, None) => x.as_f64().zip(y.as_f64()).is_some_and(|(i, j)| i == j),
    }
}

/// True when `f` is exactly the integer `i` (`i` fits in 65 bits, so the range check
/// keeps the cast exact).
fn float_is_integer(f: f64, i: i128) -> bool {
    f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
}

/// What `prune` keeps (CONTRACT §3 prune).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneStrategy {
    /// Keep the newest checkpoint of each (thread, namespace), its writes and every value
    /// it reads.
    KeepLatest,
    /// Remove the threads entirely.
    Delete,
}

impl fmt::Display for PruneStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::KeepLatest => "keep_latest",
            Self::Delete => "delete",
        })
    }
}

/// The history of one delta channel (CONTRACT §3 delta_channel_history).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeltaChannelHistory {
    /// The channel's pending writes, oldest first.
    pub writes: Vec<PendingWrite>,
    /// The value of the nearest ancestor that stores the channel, if any.
    pub seed: Option<TypedValue>,
}

#[cfg(test)]
mod shown_id_tests {
    use super::{shown_id, CheckpointConfig};

    #[test]
    fn plain_ids_are_bare_and_others_quoted() {
        assert_eq!(shown_id("t-1_a.b:c|d/e%f"), "t-1_a.b:c|d/e%f");
        assert_eq!(shown_id("a "), "\"a \"");
        assert_eq!(shown_id(""), "\"\"");
        assert_eq!(shown_id("a,b"), "\"a,b\"");
        assert_eq!(shown_id("é"), "\"é\"");
        let config = CheckpointConfig::new("1 ").with_id(" 1");
        assert_eq!(config.to_string(), "thread=\"1 \", ns=\"\", id=\" 1\"");
    }
}

#[cfg(test)]
mod tests {
    use super::TypedValue;

    #[test]
    fn msgpack_scalars_print_as_their_values() {
        let shown = |bytes: &[u8]| format!("{:?}", TypedValue::new("msgpack", bytes.to_vec()));
        assert_eq!(shown(&[0x04]), "msgpack:4");
        assert_eq!(shown(&[0xff]), "msgpack:-1");
        assert_eq!(shown(&[0xcd, 0x01, 0x00]), "msgpack:256");
        assert_eq!(shown(&[0xd0, 0x80]), "msgpack:-128");
        assert_eq!(shown(&[0xd1, 0xff, 0x00]), "msgpack:-256");
        assert_eq!(shown(&[0xc3]), "msgpack:true");
        assert_eq!(shown(&[0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]), "msgpack:1.5");
        // Not one scalar: as before.
        assert_eq!(shown(&[0x92, 0x01, 0x02]), "msgpack:<3 bytes, starting 920102>");
        assert_eq!(shown(&[0xcd, 0x01]), "msgpack:<2 bytes, starting cd01>");
    }
}
