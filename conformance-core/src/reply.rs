//! [`Reply`]: what a saver call returns, one variant per return type of the
//! [`crate::CheckpointSaver`] trait, as [`crate::Invocation::send`] (in `saver_call.rs`, beside the
//! list of methods) gives it; the one place a call held as data ([`crate::Invocation`]) is made on
//! a saver: the self-test's mutant wrapper and the fuzzer's
//! executor, the traced saver every case runs on and the Rust bridge child all go through it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::{ChannelVersion, CheckpointConfig, CheckpointTuple, DeltaChannelHistory, PendingWrite, TypedValue};
use crate::CheckpointError;

/// What an [`crate::Invocation`] returns: one variant per return type of the saver trait.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `put`: the stored checkpoint's config.
    Config(CheckpointConfig),
    /// `put_writes`, `delete_thread`, `delete_for_runs`, `copy_thread`, `prune`.
    Done,
    /// `get_tuple`.
    Tuple(Option<CheckpointTuple>),
    /// `list`.
    Tuples(Vec<CheckpointTuple>),
    /// `delta_channel_history`.
    History(BTreeMap<String, DeltaChannelHistory>),
    /// `get_next_version`.
    Version(ChannelVersion),
}

impl Reply {
    /// The error for a reply of another kind than the call's (`want` names the kind the
    /// call returns): the kind that came back, not its whole value, which can be large.
    fn wrong(self, want: &str) -> CheckpointError {
        let got = match self {
            Reply::Config(_) => "a config",
            Reply::Done => "no value",
            Reply::Tuple(_) => "a tuple",
            Reply::Tuples(_) => "a list of tuples",
            Reply::History(_) => "delta histories",
            Reply::Version(_) => "a version",
        };
        CheckpointError::storage_msg(format!("a call returning {want} was answered with {got}"))
    }

    /// The config of a `put` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn config(self) -> Result<CheckpointConfig, CheckpointError> {
        match self {
            Reply::Config(c) => Ok(c),
            other => Err(other.wrong("a config")),
        }
    }

    /// The `()` of a reply without a value.
    ///
    /// # Errors
    /// `Storage` when the answer carried a value.
    pub fn done(self) -> Result<(), CheckpointError> {
        match self {
            Reply::Done => Ok(()),
            other => Err(other.wrong("no value")),
        }
    }

    /// The tuple of a `get_tuple` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn tuple(self) -> Result<Option<CheckpointTuple>, CheckpointError> {
        match self {
            Reply::Tuple(t) => Ok(t),
            other => Err(other.wrong("a tuple")),
        }
    }

    /// The tuples of a `list` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn tuples(self) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        match self {
            Reply::Tuples(t) => Ok(t),
            other => Err(other.wrong("a list of tuples")),
        }
    }

    /// The histories of a `delta_channel_history` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn history(self) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        match self {
            Reply::History(h) => Ok(h),
            other => Err(other.wrong("delta histories")),
        }
    }

    /// The version of a `get_next_version` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn version(self) -> Result<ChannelVersion, CheckpointError> {
        match self {
            Reply::Version(v) => Ok(v),
            other => Err(other.wrong("a version")),
        }
    }
}

/// A reply as the bridge protocol answers it (docs/bridge-protocol.md "Operations"): the
/// method's return value alone, `null` for [`Reply::Done`], each delta history as
/// `{"writes": [...], "seed": value}` with `seed` absent when there is none.
impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reply::Config(config) => config.serialize(s),
            Reply::Done => ().serialize(s),
            Reply::Tuple(tuple) => tuple.serialize(s),
            Reply::Tuples(tuples) => tuples.serialize(s),
            Reply::History(h) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(h.len()))?;
                for (channel, history) in h {
                    m.serialize_entry(channel, &WireHistory(history))?;
                }
                m.end()
            }
            Reply::Version(version) => version.serialize(s),
        }
    }
}

/// How [`Reply`]'s wire form reads the return value of one method (a bridge child's
/// answer): [`crate::SaverCall::reply_reader`] gives the one for a call.
pub type ReadReply = fn(&str) -> serde_json::Result<Reply>;

impl Reply {
    /// Reads a `put` answer.
    pub(crate) fn read_config(json: &str) -> serde_json::Result<Reply> {
        serde_json::from_str(json).map(Reply::Config)
    }

    /// Reads the `null` of a method without a return value.
    pub(crate) fn read_done(json: &str) -> serde_json::Result<Reply> {
        serde_json::from_str::<()>(json).map(|()| Reply::Done)
    }

    /// Reads a `get_tuple` answer.
    pub(crate) fn read_tuple(json: &str) -> serde_json::Result<Reply> {
        serde_json::from_str(json).map(Reply::Tuple)
    }

    /// Reads a `list` answer.
    pub(crate) fn read_tuples(json: &str) -> serde_json::Result<Reply> {
        serde_json::from_str(json).map(Reply::Tuples)
    }

    /// Reads a `delta_channel_history` answer, each channel's history in [`WireHistory`]'s
    /// form ([`ReadHistory`]).
    pub(crate) fn read_history(json: &str) -> serde_json::Result<Reply> {
        let wire: BTreeMap<String, ReadHistory> = serde_json::from_str(json)?;
        Ok(Reply::History(
            wire.into_iter().map(|(ch, h)| (ch, DeltaChannelHistory { writes: h.writes, seed: h.seed })).collect(),
        ))
    }

    /// Reads a `get_next_version` answer.
    pub(crate) fn read_version(json: &str) -> serde_json::Result<Reply> {
        serde_json::from_str(json).map(Reply::Version)
    }
}

/// One channel's delta history on the wire, `{"writes": [...], "seed": value}`: `seed`
/// absent means no seed, so a seed whose value is JSON `null` survives (`Option<TypedValue>`
/// alone would read it as no seed).
struct WireHistory<'a>(&'a DeltaChannelHistory);

impl Serialize for WireHistory<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("WireHistory", 2)?;
        st.serialize_field("writes", &self.0.writes)?;
        if let Some(seed) = &self.0.seed {
            st.serialize_field("seed", seed)?;
        }
        st.end()
    }
}

/// [`WireHistory`] as it is read.
#[derive(Deserialize)]
struct ReadHistory {
    writes: Vec<PendingWrite>,
    #[serde(default, deserialize_with = "some_value")]
    seed: Option<TypedValue>,
}

fn some_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<TypedValue>, D::Error> {
    TypedValue::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_seed_is_not_lost() {
        let read = |json: &str| Reply::read_history(json).unwrap().history().unwrap().remove("c").unwrap();
        assert_eq!(read(r#"{"c":{"writes":[],"seed":null}}"#).seed, Some(TypedValue::json(&serde_json::Value::Null)));
        assert_eq!(read(r#"{"c":{"writes":[]}}"#).seed, None);
        let null = DeltaChannelHistory { writes: vec![], seed: Some(TypedValue::json(&serde_json::Value::Null)) };
        let text = serde_json::to_string(&Reply::History([("c".to_owned(), null)].into())).unwrap();
        // Written as a json envelope (docs/bridge-protocol.md "Values"), so no reader can
        // take it for "no seed".
        assert_eq!(text, r#"{"c":{"writes":[],"seed":{"$base64":"bnVsbA==","$type":"json"}}}"#);
        let none = DeltaChannelHistory { writes: vec![], seed: None };
        let text = serde_json::to_string(&Reply::History([("c".to_owned(), none)].into())).unwrap();
        assert_eq!(text, r#"{"c":{"writes":[]}}"#);
    }

    #[test]
    fn done_is_null_both_ways() {
        assert_eq!(serde_json::to_string(&Reply::Done).unwrap(), "null");
        assert!(matches!(Reply::read_done("null"), Ok(Reply::Done)));
        assert!(Reply::read_done("1").is_err());
    }
}
