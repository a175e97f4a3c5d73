//! The JSON form of the contract types: lossless in both directions, for savers that store
//! `serde_json::Value` and for every wire format of the kit (the bridge protocol, traces).
//!
//! | type | JSON |
//! |---|---|
//! | [`TypedValue`] tagged `"json"` whose bytes are the compact JSON text of a value | that value itself: `{"a":1}` |
//! | any other [`TypedValue`] | an envelope `{"$type": tag, "$base64": standard base64 of the bytes}` |
//! | [`ChannelVersion`] | `Int(n)` is the number `n`, `Str(s)` the string `s`: the kind survives |
//! | [`Checkpoint`], [`PendingWrite`](crate::types::PendingWrite), [`CheckpointTuple`](crate::types::CheckpointTuple), [`CheckpointConfig`](crate::types::CheckpointConfig), ... | objects with the field names of CONTRACT §1 |
//!
//! A `"json"` value is written bare only when reading it back gives the same bytes: its
//! bytes are exactly what `serde_json` writes for the value they parse to (compact, keys
//! sorted, shortest float form), and the value is neither `null` (which would read as "no
//! value" in an optional field, such as a delta history's `seed`) nor itself an object with
//! exactly the two envelope keys. Anything else (other whitespace, key order, `1.0`, invalid JSON, a
//! look-alike envelope) travels in an envelope, so every `TypedValue` comes back byte for
//! byte (CONTRACT §1 "Typed value").
//!
//! These are the types' own serde implementations in human-readable formats (JSON), so a
//! `#[derive(Serialize)]` struct holding a `TypedValue` gets this form for free; binary
//! formats (MessagePack, bincode) keep the compact `(type_tag, bytes)` pair.
//!
//! ```
//! use checkpoint_contract::{ChannelVersion, TypedValue};
//! use serde_json::json;
//!
//! let v = TypedValue::json(&json!({"messages": ["hi"]}));
//! assert_eq!(v.to_json_value(), json!({"messages": ["hi"]}));
//! let b = TypedValue::bytes(vec![0, 159, 146, 150]);
//! assert_eq!(b.to_json_value(), json!({"$type": "bytes", "$base64": "AJ+Slg=="}));
//! assert_eq!(TypedValue::from_json_value(b.to_json_value()).unwrap(), b);
//! assert_eq!(ChannelVersion::from_json_value(json!("1")).unwrap(), ChannelVersion::Str("1".into()));
//! ```

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::types::{ChannelVersion, Checkpoint, TypedValue};

/// The envelope key holding a [`TypedValue`]'s type tag.
pub const TYPE_KEY: &str = "$type";
/// The envelope key holding a [`TypedValue`]'s bytes, in standard base64 with padding.
pub const BASE64_KEY: &str = "$base64";

/// A JSON value that is not the JSON form of the type asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not the JSON form of {what}: {reason}")]
pub struct CodecError {
    /// The type asked for (`"a typed value"`, `"a channel version"`, `"a checkpoint"`).
    pub what: &'static str,
    /// What is wrong with the value.
    pub reason: String,
}

impl CodecError {
    fn new(what: &'static str, reason: impl std::fmt::Display) -> Self {
        Self { what, reason: reason.to_string() }
    }
}

/// True when `value` is an object with exactly the two envelope keys.
fn looks_like_envelope(value: &Value) -> bool {
    matches!(value, Value::Object(m) if m.len() == 2 && m.contains_key(TYPE_KEY) && m.contains_key(BASE64_KEY))
}

/// The JSON value a `"json"` value can be written as bare, if it can.
fn bare_json(value: &TypedValue) -> Option<Value> {
    if value.type_tag != "json" {
        return None;
    }
    let parsed: Value = serde_json::from_slice(&value.data).ok()?;
    let canonical = serde_json::to_vec(&parsed).ok()?;
    (canonical == value.data && !parsed.is_null() && !looks_like_envelope(&parsed)).then_some(parsed)
}

fn envelope(value: &TypedValue) -> Value {
    let mut m = Map::with_capacity(2);
    m.insert(TYPE_KEY.to_owned(), Value::String(value.type_tag.clone()));
    m.insert(BASE64_KEY.to_owned(), Value::String(BASE64.encode(&value.data)));
    Value::Object(m)
}

fn from_value(value: Value) -> Result<TypedValue, CodecError> {
    const WHAT: &str = "a typed value";
    if !looks_like_envelope(&value) {
        let data = serde_json::to_vec(&value).map_err(|e| CodecError::new(WHAT, e))?;
        return Ok(TypedValue { type_tag: "json".to_owned(), data });
    }
    let Value::Object(m) = value else { unreachable!("looks_like_envelope checked the shape") };
    let tag = match &m[TYPE_KEY] {
        Value::String(s) => s.clone(),
        other => return Err(CodecError::new(WHAT, format_args!("{TYPE_KEY} must be a string, got {other}"))),
    };
    let data = match &m[BASE64_KEY] {
        Value::String(s) => {
            BASE64.decode(s).map_err(|e| CodecError::new(WHAT, format_args!("{BASE64_KEY} is not base64: {e}")))?
        }
        other => return Err(CodecError::new(WHAT, format_args!("{BASE64_KEY} must be a string, got {other}"))),
    };
    Ok(TypedValue { type_tag: tag, data })
}

impl TypedValue {
    /// The JSON form (see the [module docs](crate::json)): the value itself for canonical
    /// `"json"` values, else `{"$type": tag, "$base64": bytes}`.
    pub fn to_json_value(&self) -> Value {
        bare_json(self).unwrap_or_else(|| envelope(self))
    }

    /// Reads the JSON form back; exact inverse of [`TypedValue::to_json_value`]. Any JSON
    /// that is not an envelope is a `"json"` value with its compact text as bytes.
    ///
    /// # Errors
    /// [`CodecError`] for an envelope whose tag is not a string or whose bytes are not
    /// base64.
    pub fn from_json_value(value: Value) -> Result<Self, CodecError> {
        from_value(value)
    }
}

impl ChannelVersion {
    /// The JSON form: a number for `Int`, a string for `Str`.
    pub fn to_json_value(&self) -> Value {
        match self {
            Self::Int(i) => Value::from(*i),
            Self::Str(s) => Value::String(s.clone()),
        }
    }

    /// Reads the JSON form back, keeping the kind (`1` is `Int(1)`, `"1"` is `Str("1")`).
    ///
    /// # Errors
    /// [`CodecError`] for anything but an integer in `i64` range or a string.
    pub fn from_json_value(value: Value) -> Result<Self, CodecError> {
        match value {
            Value::String(s) => Ok(Self::Str(s)),
            Value::Number(n) => n.as_i64().map(Self::Int).ok_or_else(|| {
                CodecError::new("a channel version", format_args!("{n} is not an integer in i64 range"))
            }),
            other => {
                Err(CodecError::new("a channel version", format_args!("expected an integer or a string, got {other}")))
            }
        }
    }
}

impl Checkpoint {
    /// The JSON form: `{"v", "id", "ts", "channel_values", "channel_versions",
    /// "versions_seen", "updated_channels"}`, values and versions in their JSON forms and
    /// `updated_channels` `null` or an array (the two stay distinct).
    pub fn to_json_value(&self) -> Value {
        to_json(self)
    }

    /// Reads the JSON form back; exact inverse of [`Checkpoint::to_json_value`].
    ///
    /// # Errors
    /// [`CodecError`] naming the field that does not fit.
    pub fn from_json_value(value: Value) -> Result<Self, CodecError> {
        from_json("a checkpoint", value)
    }
}

/// Any contract type as its JSON form (infallible for the contract types: their maps have
/// string keys and they hold no floats outside metadata).
pub fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Any contract type from its JSON form.
///
/// # Errors
/// [`CodecError`] with `what` and serde's description of the misfit.
pub fn from_json<T: DeserializeOwned>(what: &'static str, value: Value) -> Result<T, CodecError> {
    serde_json::from_value(value).map_err(|e| CodecError::new(what, e))
}

impl Serialize for TypedValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return self.to_json_value().serialize(s);
        }
        let mut st = s.serialize_struct("TypedValue", 2)?;
        st.serialize_field("type_tag", &self.type_tag)?;
        st.serialize_field("data", &BytesRef(&self.data))?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for TypedValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let value = Value::deserialize(d)?;
            return from_value(value).map_err(D::Error::custom);
        }
        #[derive(Deserialize)]
        struct Pair {
            type_tag: String,
            #[serde(deserialize_with = "deserialize_bytes")]
            data: Vec<u8>,
        }
        let p = Pair::deserialize(d)?;
        Ok(TypedValue { type_tag: p.type_tag, data: p.data })
    }
}

/// Bytes serialised as a byte string (compact in binary formats).
struct BytesRef<'a>(&'a [u8]);

impl Serialize for BytesRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

fn deserialize_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("bytes")
        }
        fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(b) = seq.next_element::<u8>()? {
                out.push(b);
            }
            Ok(out)
        }
    }
    d.deserialize_byte_buf(V)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CheckpointConfig, CheckpointTuple, PendingWrite};
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn json_leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
            Just(Value::String("$type".into())),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        json_leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![".{0,6}", Just("$type".to_owned()), Just("$base64".to_owned())],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn typed_value() -> impl Strategy<Value = TypedValue> {
        prop_oneof![
            json_value().prop_map(|v| TypedValue::json(&v)),
            // JSON text that is valid but not canonical, or not JSON at all.
            prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| TypedValue::new("json", b)),
            json_value().prop_map(|v| TypedValue::new("json", serde_json::to_vec_pretty(&v).unwrap())),
            (".{0,8}", prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(t, b)| TypedValue::new(t, b)),
        ]
    }

    fn version() -> impl Strategy<Value = ChannelVersion> {
        prop_oneof![any::<i64>().prop_map(ChannelVersion::Int), ".{0,40}".prop_map(ChannelVersion::Str)]
    }

    fn checkpoint() -> impl Strategy<Value = Checkpoint> {
        (
            any::<i64>(),
            ".{0,10}",
            ".{0,10}",
            prop::collection::btree_map(".{0,5}", typed_value(), 0..4),
            prop::collection::btree_map(".{0,5}", version(), 0..4),
            prop::collection::btree_map(".{0,5}", prop::collection::btree_map(".{0,5}", version(), 0..3), 0..3),
            prop::option::of(prop::collection::vec(".{0,5}", 0..3)),
        )
            .prop_map(|(v, id, ts, channel_values, channel_versions, versions_seen, updated_channels)| {
                Checkpoint { v, id, ts, channel_values, channel_versions, versions_seen, updated_channels }
            })
    }

    proptest! {
        #[test]
        fn typed_value_round_trips(v in typed_value()) {
            prop_assert_eq!(TypedValue::from_json_value(v.to_json_value()).unwrap(), v.clone());
            let text = serde_json::to_string(&v).unwrap();
            prop_assert_eq!(serde_json::from_str::<TypedValue>(&text).unwrap(), v);
        }

        #[test]
        fn json_form_reads_as_the_same_json(v in json_value()) {
            // Every JSON value but null and an envelope look-alike is a "json" value's form, bare.
            if v.is_null() || looks_like_envelope(&v) {
                return Ok(());
            }
            let t = TypedValue::from_json_value(v.clone()).unwrap();
            prop_assert_eq!(&t.type_tag, "json");
            prop_assert_eq!(t.to_json_value(), v);
        }

        #[test]
        fn version_round_trips_with_its_kind(v in version()) {
            prop_assert_eq!(ChannelVersion::from_json_value(v.to_json_value()).unwrap(), v.clone());
            let text = serde_json::to_string(&v).unwrap();
            prop_assert_eq!(serde_json::from_str::<ChannelVersion>(&text).unwrap(), v);
        }

        #[test]
        fn checkpoint_round_trips(c in checkpoint()) {
            prop_assert_eq!(Checkpoint::from_json_value(c.to_json_value()).unwrap(), c.clone());
            let text = serde_json::to_string(&c).unwrap();
            prop_assert_eq!(serde_json::from_str::<Checkpoint>(&text).unwrap(), c);
        }
    }

    #[test]
    fn canonical_json_is_bare_and_the_rest_is_enveloped() {
        assert_eq!(TypedValue::json(&json!([1, "a"])).to_json_value(), json!([1, "a"]));
        // Whitespace, key order and float spelling are kept by enveloping.
        for text in ["[1, 2]", "{\"b\":1,\"a\":2}", "1e2", "-0", "not json", ""] {
            let v = TypedValue::new("json", text);
            assert_eq!(v.to_json_value()[TYPE_KEY], json!("json"), "{text}");
            assert_eq!(TypedValue::from_json_value(v.to_json_value()).unwrap(), v);
        }
        // A JSON value shaped like an envelope is itself enveloped, so it reads back as JSON.
        let tricky = TypedValue::json(&json!({"$type": "bytes", "$base64": ""}));
        let form = tricky.to_json_value();
        assert_eq!(form[TYPE_KEY], json!("json"));
        assert_eq!(TypedValue::from_json_value(form).unwrap(), tricky);
    }

    #[test]
    fn bad_forms_are_errors_not_panics() {
        let e = TypedValue::from_json_value(json!({"$type": 1, "$base64": ""})).unwrap_err();
        assert!(e.to_string().contains("$type must be a string"), "{e}");
        let e = TypedValue::from_json_value(json!({"$type": "x", "$base64": "!!"})).unwrap_err();
        assert!(e.to_string().contains("not base64"), "{e}");
        assert!(ChannelVersion::from_json_value(json!(1.5)).is_err());
        assert!(ChannelVersion::from_json_value(json!(u64::MAX)).is_err());
        assert!(ChannelVersion::from_json_value(json!(null)).is_err());
        let e = Checkpoint::from_json_value(json!({"v": "x"})).unwrap_err();
        assert!(e.to_string().starts_with("not the JSON form of a checkpoint"), "{e}");
    }

    #[test]
    fn a_json_null_value_is_not_read_as_no_value() {
        use crate::types::DeltaChannelHistory;
        let h = DeltaChannelHistory { writes: vec![], seed: Some(TypedValue::json(&Value::Null)) };
        let back: DeltaChannelHistory = from_json("a history", to_json(&h)).unwrap();
        assert_eq!(back, h);
        let none = DeltaChannelHistory { writes: vec![], seed: None };
        assert_eq!(from_json::<DeltaChannelHistory>("a history", to_json(&none)).unwrap(), none);
        // A bare null still reads as the JSON value null.
        assert_eq!(TypedValue::from_json_value(Value::Null).unwrap(), TypedValue::json(&Value::Null));
    }

    #[test]
    fn updated_channels_none_and_empty_stay_distinct() {
        let none = Checkpoint::default();
        let empty = Checkpoint { updated_channels: Some(vec![]), ..Checkpoint::default() };
        assert_eq!(none.to_json_value()["updated_channels"], Value::Null);
        assert_eq!(empty.to_json_value()["updated_channels"], json!([]));
        assert_eq!(Checkpoint::from_json_value(empty.to_json_value()).unwrap(), empty);
    }

    #[test]
    fn tuples_and_writes_use_the_same_forms() {
        let w = PendingWrite {
            task_id: "t".into(),
            task_path: "~p".into(),
            channel: "c".into(),
            value: TypedValue::bytes(vec![0xff]),
        };
        let t = CheckpointTuple {
            config: CheckpointConfig::new("th").with_id("1"),
            checkpoint: Arc::new(Checkpoint {
                channel_values: BTreeMap::from([("a".to_owned(), TypedValue::json(&json!(1)))]),
                ..Checkpoint::default()
            }),
            metadata: Map::new(),
            parent_config: None,
            pending_writes: vec![w],
        };
        let v = to_json(&t);
        assert_eq!(v["pending_writes"][0]["value"], json!({"$type": "bytes", "$base64": "/w=="}));
        assert_eq!(v["checkpoint"]["channel_values"]["a"], json!(1));
        assert_eq!(from_json::<CheckpointTuple>("a tuple", v).unwrap(), t);
    }

    #[test]
    fn binary_formats_keep_the_pair() {
        // MessagePack is not human readable: the value is the compact (type_tag, bytes) pair.
        let v = TypedValue::new("msgpack", vec![0, 0xff, 2]);
        let bytes = rmp_serde::to_vec(&v).unwrap();
        assert!(bytes.windows(3).any(|w| w == [0, 0xff, 2]), "bytes stored raw: {bytes:?}");
        assert_eq!(rmp_serde::from_slice::<TypedValue>(&bytes).unwrap(), v);
        let named = rmp_serde::to_vec_named(&v).unwrap();
        assert_eq!(rmp_serde::from_slice::<TypedValue>(&named).unwrap(), v);
    }
}
