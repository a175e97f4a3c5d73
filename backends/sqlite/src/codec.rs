//! How a checkpoint is laid out in its row: the MessagePack body (`checkpoints.checkpoint`),
//! the JSON columns (`metadata`, `value_versions`) and the SQL form of a channel version.

use std::collections::BTreeMap;

use checkpoint_contract::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointError, CheckpointMetadata, TypedValue,
};
use rusqlite::types::{ToSqlOutput, Value as SqlValue};
use serde::{Deserialize, Serialize};

/// Values longer than this many bytes are stored once in `blobs` and referenced by id;
/// shorter ones are kept inline in the checkpoint body.
pub(crate) const INLINE_LIMIT: usize = 16 * 1024;

/// A resolved channel value of a stored checkpoint, while a put is being resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StoredValue {
    /// The value itself.
    Inline(TypedValue),
    /// A row of `blobs` in the same thread, shared by every checkpoint that reads it.
    Blob(String),
}

/// The body of a stored checkpoint (MessagePack, fields in this order). Inline values and
/// blob references are two maps so that a read moves the inline map into the checkpoint
/// as it is.
#[derive(Debug, Deserialize)]
pub(crate) struct StoredCheckpoint {
    pub v: i64,
    pub ts: String,
    #[serde(deserialize_with = "de_versions")]
    pub channel_versions: ChannelVersions,
    #[serde(deserialize_with = "de_versions_seen")]
    pub versions_seen: BTreeMap<String, ChannelVersions>,
    pub updated_channels: Option<Vec<String>>,
    /// Channel -> value, for values kept inline.
    pub values: BTreeMap<String, TypedValue>,
    /// Channel -> blob id, for values kept in `blobs`.
    pub blobs: BTreeMap<String, String>,
}

/// The borrowed twin of [`StoredCheckpoint`], for encoding without copies.
#[derive(Serialize)]
struct StoredCheckpointRef<'a> {
    v: i64,
    ts: &'a str,
    channel_versions: &'a ChannelVersions,
    versions_seen: &'a BTreeMap<String, ChannelVersions>,
    updated_channels: &'a Option<Vec<String>>,
    values: BTreeMap<&'a str, &'a TypedValue>,
    blobs: BTreeMap<&'a str, &'a str>,
}

/// Encodes the body of `checkpoint` (its own `channel_values` are ignored) with the
/// resolved `values`.
pub(crate) fn encode_checkpoint(
    checkpoint: &Checkpoint,
    values: &BTreeMap<String, StoredValue>,
) -> Result<Vec<u8>, CheckpointError> {
    let mut inline = BTreeMap::new();
    let mut blobs = BTreeMap::new();
    for (ch, v) in values {
        match v {
            StoredValue::Inline(t) => {
                inline.insert(ch.as_str(), t);
            }
            StoredValue::Blob(id) => {
                blobs.insert(ch.as_str(), id.as_str());
            }
        }
    }
    let body = StoredCheckpointRef {
        v: checkpoint.v,
        ts: &checkpoint.ts,
        channel_versions: &checkpoint.channel_versions,
        versions_seen: &checkpoint.versions_seen,
        updated_channels: &checkpoint.updated_channels,
        values: inline,
        blobs,
    };
    rmp_serde::to_vec(&body).map_err(|e| CheckpointError::storage("encoding the checkpoint body", e))
}

/// Decodes a checkpoint body.
pub(crate) fn decode_checkpoint(bytes: &[u8]) -> Result<StoredCheckpoint, CheckpointError> {
    rmp_serde::from_slice(bytes).map_err(|e| CheckpointError::storage("decoding a stored checkpoint body", e))
}

/// A channel version read straight from an integer or a string (no buffering, unlike the
/// untagged derive).
struct VersionDe(ChannelVersion);

impl<'de> Deserialize<'de> for VersionDe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = VersionDe;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer or a string channel version")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<VersionDe, E> {
                Ok(VersionDe(ChannelVersion::Int(v)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<VersionDe, E> {
                i64::try_from(v).map(|i| VersionDe(ChannelVersion::Int(i))).map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<VersionDe, E> {
                Ok(VersionDe(ChannelVersion::Str(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<VersionDe, E> {
                Ok(VersionDe(ChannelVersion::Str(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Channel -> version, read without buffering.
struct VersionsDe(ChannelVersions);

impl<'de> Deserialize<'de> for VersionsDe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = VersionsDe;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of channel versions")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<VersionsDe, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, VersionDe>()? {
                    out.insert(k, v.0);
                }
                Ok(VersionsDe(out))
            }
        }
        d.deserialize_map(V)
    }
}

fn de_versions<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ChannelVersions, D::Error> {
    VersionsDe::deserialize(d).map(|v| v.0)
}

fn de_versions_seen<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, ChannelVersions>, D::Error> {
    let m: BTreeMap<String, VersionsDe> = BTreeMap::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.0)).collect())
}

impl StoredCheckpoint {
    /// The checkpoint with id `id` and the given resolved values.
    pub(crate) fn into_checkpoint(self, id: String, channel_values: BTreeMap<String, TypedValue>) -> Checkpoint {
        Checkpoint {
            v: self.v,
            id,
            ts: self.ts,
            channel_values,
            channel_versions: self.channel_versions,
            versions_seen: self.versions_seen,
            updated_channels: self.updated_channels,
        }
    }

    /// The stored value of `ch`, inline or by reference.
    pub(crate) fn value(&self, ch: &str) -> Option<StoredValue> {
        match self.values.get(ch) {
            Some(v) => Some(StoredValue::Inline(v.clone())),
            None => self.blobs.get(ch).map(|id| StoredValue::Blob(id.clone())),
        }
    }
}

/// Metadata as JSON text.
pub(crate) fn encode_metadata(metadata: &CheckpointMetadata) -> Result<String, CheckpointError> {
    serde_json::to_string(metadata).map_err(|e| CheckpointError::storage("encoding metadata as JSON", e))
}

/// Metadata from JSON text.
pub(crate) fn decode_metadata(text: &str) -> Result<CheckpointMetadata, CheckpointError> {
    serde_json::from_str(text).map_err(|e| CheckpointError::storage("decoding stored metadata JSON", e))
}

/// `metadata.run_id` when it is a string (the `run_id` column, used by `delete_for_runs`).
pub(crate) fn run_id_of(metadata: &CheckpointMetadata) -> Option<&str> {
    metadata.get("run_id").and_then(serde_json::Value::as_str)
}

/// The `value_versions` column: a JSON object from each channel that has a value to its
/// version (an integer stays a JSON number, a string a JSON string).
pub(crate) fn encode_value_versions(
    checkpoint: &Checkpoint,
    values: &BTreeMap<String, StoredValue>,
) -> Result<String, CheckpointError> {
    let map: BTreeMap<&str, &ChannelVersion> =
        values.keys().filter_map(|ch| checkpoint.channel_versions.get(ch).map(|v| (ch.as_str(), v))).collect();
    serde_json::to_string(&map).map_err(|e| CheckpointError::storage("encoding value versions as JSON", e))
}

/// A channel version as an SQL value: an INTEGER for `Int`, TEXT for `Str`. SQLite never
/// finds an INTEGER equal to a TEXT, so the kinds stay apart in comparisons.
pub(crate) fn version_sql(version: &ChannelVersion) -> ToSqlOutput<'_> {
    match version {
        ChannelVersion::Int(i) => ToSqlOutput::Owned(SqlValue::Integer(*i)),
        ChannelVersion::Str(s) => ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(s.as_bytes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_round_trips_every_field() {
        let cp = Checkpoint {
            v: 4,
            id: "c1".into(),
            ts: String::new(),
            channel_values: BTreeMap::new(),
            channel_versions: [
                ("a".to_owned(), ChannelVersion::Int(1)),
                ("b".to_owned(), ChannelVersion::Str("1".into())),
                ("c".to_owned(), ChannelVersion::Int(i64::MIN)),
                ("d".to_owned(), ChannelVersion::Int(i64::MAX)),
            ]
            .into(),
            versions_seen: [("node".to_owned(), [("a".to_owned(), ChannelVersion::Int(-3))].into())].into(),
            updated_channels: Some(vec![]),
        };
        let values: BTreeMap<String, StoredValue> = [
            ("a".to_owned(), StoredValue::Inline(TypedValue::new("", Vec::new()))),
            ("b".to_owned(), StoredValue::Inline(TypedValue::bytes(vec![0, 0xff, 0xfe]))),
            ("c".to_owned(), StoredValue::Blob("x".into())),
        ]
        .into();
        let bytes = encode_checkpoint(&cp, &values).unwrap();
        let back = decode_checkpoint(&bytes).unwrap();
        for (ch, v) in &values {
            assert_eq!(back.value(ch).as_ref(), Some(v));
        }
        assert_eq!(back.blobs.len(), 1);
        let inline = back.values.clone();
        let mut want = cp.clone();
        want.channel_values = inline.clone();
        assert_eq!(back.into_checkpoint("c1".into(), inline), want);

        let none = Checkpoint { updated_channels: None, ..cp };
        let back = decode_checkpoint(&encode_checkpoint(&none, &BTreeMap::new()).unwrap()).unwrap();
        assert_eq!(back.updated_channels, None);
    }
}
