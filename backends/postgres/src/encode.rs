//! Turning contract values into what the tables hold and back, and the checks for what
//! PostgreSQL cannot store (a NUL character in `text` and in JSON it has to interpret).

use std::collections::BTreeMap;

use checkpoint_contract::{ChannelVersion, ChannelVersions, Checkpoint, CheckpointError, CheckpointMetadata};
use serde::{Deserialize, Serialize};

/// The part of a checkpoint stored in `checkpoints.checkpoint`: everything but the id (a key
/// column) and the channel values (in `checkpoint_blobs`, referenced from the checkpoint
/// row's value arrays).
#[derive(Serialize)]
pub(crate) struct ShellRef<'a> {
    v: i64,
    ts: &'a str,
    channel_versions: &'a ChannelVersions,
    versions_seen: &'a BTreeMap<String, ChannelVersions>,
    updated_channels: &'a Option<Vec<String>>,
}

/// [`ShellRef`] as read back.
#[derive(Deserialize)]
pub(crate) struct Shell {
    v: i64,
    ts: String,
    channel_versions: ChannelVersions,
    versions_seen: BTreeMap<String, ChannelVersions>,
    updated_channels: Option<Vec<String>>,
}

/// The JSON text of `checkpoint`'s shell.
pub(crate) fn shell_json(checkpoint: &Checkpoint) -> Result<String, CheckpointError> {
    let shell = ShellRef {
        v: checkpoint.v,
        ts: &checkpoint.ts,
        channel_versions: &checkpoint.channel_versions,
        versions_seen: &checkpoint.versions_seen,
        updated_channels: &checkpoint.updated_channels,
    };
    serde_json::to_string(&shell).map_err(|e| CheckpointError::storage("encoding the checkpoint as JSON", e))
}

/// A checkpoint from its id and stored shell, with no channel values yet.
pub(crate) fn checkpoint_from_shell(id: String, shell_text: &str) -> Result<Checkpoint, CheckpointError> {
    let shell: Shell = serde_json::from_str(shell_text)
        .map_err(|e| CheckpointError::storage(format!("decoding stored checkpoint {id:?}"), e))?;
    Ok(Checkpoint {
        v: shell.v,
        id,
        ts: shell.ts,
        channel_values: BTreeMap::new(),
        channel_versions: shell.channel_versions,
        versions_seen: shell.versions_seen,
        updated_channels: shell.updated_channels,
    })
}

/// Stored metadata text as a JSON object.
pub(crate) fn metadata_from_text(id: &str, text: &str) -> Result<CheckpointMetadata, CheckpointError> {
    serde_json::from_str(text).map_err(|e| CheckpointError::storage(format!("decoding the metadata of {id:?}"), e))
}

/// The key text of a version in `version JSONB` columns: `1` for `Int(1)`, `"1"` for
/// `Str("1")`.
pub(crate) fn version_json(version: &ChannelVersion) -> String {
    match version {
        ChannelVersion::Int(i) => i.to_string(),
        ChannelVersion::Str(s) => serde_json::Value::String(s.clone()).to_string(),
    }
}

/// True when `s` has a NUL character, which a PostgreSQL `text` value cannot hold.
pub(crate) fn has_nul(s: &str) -> bool {
    s.contains('\0')
}

/// `InvalidInput` when `value` has a NUL character; `what` names the field.
pub(crate) fn refuse_nul(what: impl FnOnce() -> String, value: &str) -> Result<(), CheckpointError> {
    if has_nul(value) {
        return Err(CheckpointError::InvalidInput(format!(
            "{} contains a NUL character (\\u0000), which PostgreSQL cannot store in a text column; nothing was stored",
            what()
        )));
    }
    Ok(())
}

/// The path of the first string or object key inside `value` that has a NUL character,
/// written like `["a"][2]`, or `None`.
pub(crate) fn nul_path(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) if has_nul(s) => Some(String::new()),
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, v)| nul_path(v).map(|rest| format!("[{i}]{rest}")))
        }
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if has_nul(k) {
                Some(format!("[{k:?}]"))
            } else {
                nul_path(v).map(|rest| format!("[{k:?}]{rest}"))
            }
        }),
        _ => None,
    }
}

/// `InvalidInput` naming the metadata key when a key or any string inside the metadata has
/// a NUL character. PostgreSQL's JSON functions cannot process `\u0000`, so such metadata
/// could not be filtered; the whole `put` is refused (CONTRACT §1 Metadata).
pub(crate) fn refuse_nul_metadata(metadata: &CheckpointMetadata) -> Result<(), CheckpointError> {
    for (key, value) in metadata {
        let inner = if has_nul(key) { Some(String::new()) } else { nul_path(value) };
        if let Some(rest) = inner {
            return Err(CheckpointError::InvalidInput(format!(
                "metadata key {key:?} (at metadata[{key:?}]{rest}) contains a NUL character (\\u0000), which \
                 PostgreSQL cannot process in JSON; the put was refused and nothing was stored"
            )));
        }
    }
    Ok(())
}

/// Whether a `list` filter entry can match stored metadata, given that stored metadata never
/// has a NUL character (see [`refuse_nul_metadata`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FilterEntry {
    /// Send the entry to SQL.
    Sql,
    /// Always true (a `null` value under a key no stored metadata can have): leave it out.
    AlwaysTrue,
    /// Never true (a non-null value that has a NUL character, or a key with one): the
    /// result is empty.
    NeverTrue,
}

/// Classifies one filter entry (CONTRACT §2 list `filter`).
pub(crate) fn classify_filter(key: &str, value: &serde_json::Value) -> FilterEntry {
    if has_nul(key) {
        // No stored metadata has this key: `null` matches a missing key, anything else fails.
        return if value.is_null() { FilterEntry::AlwaysTrue } else { FilterEntry::NeverTrue };
    }
    if nul_path(value).is_some() {
        return FilterEntry::NeverTrue;
    }
    FilterEntry::Sql
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_keys_keep_their_kind() {
        assert_eq!(version_json(&ChannelVersion::Int(1)), "1");
        assert_eq!(version_json(&ChannelVersion::Str("1".into())), "\"1\"");
        assert_eq!(version_json(&ChannelVersion::Str("a\"b".into())), "\"a\\\"b\"");
    }

    #[test]
    fn shell_round_trips() {
        let mut cp = Checkpoint { v: 4, id: "c1".into(), ts: "".into(), ..Default::default() };
        cp.channel_versions.insert("a".into(), ChannelVersion::Int(3));
        cp.channel_versions.insert("b".into(), ChannelVersion::Str("00002.5".into()));
        cp.versions_seen.insert("node".into(), cp.channel_versions.clone());
        cp.updated_channels = Some(vec![]);
        let text = shell_json(&cp).unwrap();
        let back = checkpoint_from_shell("c1".into(), &text).unwrap();
        assert_eq!(back, cp);
        cp.updated_channels = None;
        let back = checkpoint_from_shell("c1".into(), &shell_json(&cp).unwrap()).unwrap();
        assert_eq!(back.updated_channels, None);
    }

    #[test]
    fn nul_paths() {
        assert_eq!(nul_path(&json!("a\u{0}")), Some(String::new()));
        assert_eq!(nul_path(&json!({"x": [1, "b\u{0}"]})), Some("[\"x\"][1]".into()));
        assert_eq!(nul_path(&json!({"k\u{0}": 1})), Some("[\"k\\0\"]".into()));
        assert_eq!(nul_path(&json!({"x": [1, "b"]})), None);
        let mut md = CheckpointMetadata::new();
        md.insert("fine".into(), json!("ok"));
        md.insert("note".into(), json!({"deep": "x\u{0}y"}));
        let err = refuse_nul_metadata(&md).unwrap_err();
        assert!(matches!(&err, CheckpointError::InvalidInput(m) if m.contains("\"note\"")), "{err}");
    }

    #[test]
    fn filter_classes() {
        assert_eq!(classify_filter("a", &json!(1)), FilterEntry::Sql);
        assert_eq!(classify_filter("a\u{0}", &json!(null)), FilterEntry::AlwaysTrue);
        assert_eq!(classify_filter("a\u{0}", &json!(1)), FilterEntry::NeverTrue);
        assert_eq!(classify_filter("a", &json!(["\u{0}"])), FilterEntry::NeverTrue);
    }
}
