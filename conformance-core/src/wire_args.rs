//! [`WireArgs`]: a call's arguments as a bridge request carries them, written from the one
//! declaration of the call ([`crate::SaverCall`]'s serde form) with no list of the methods
//! of its own: the call's JSON form without its `call` key, and each config without the
//! fields the running case omits.

use serde::ser::{Error as _, Impossible, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::{Invocation, Omitted};

/// The key of [`crate::SaverCall`]'s JSON form that names the method.
const TAG: &str = "call";

/// The arguments of a call as an object of the arguments by name, as a bridge request's
/// `args` carries them (docs/bridge-protocol.md "Operations"): the call's JSON form (a
/// trace step's, docs/trace-format.md) without its `call` key, in the same order, and
/// every argument named `config` without the fields the running case omits
/// ([`Omitted::current`]: no `thread_id`, no `checkpoint_ns`).
///
/// ```
/// use conformance_core::{CheckpointConfig, Invocation, WireArgs};
/// let get = Invocation::GetTuple { config: CheckpointConfig::new("t1") };
/// let json = serde_json::to_string(&WireArgs(&get)).unwrap();
/// assert_eq!(json, r#"{"config":{"thread_id":"t1","checkpoint_ns":"","checkpoint_id":null}}"#);
/// ```
///
/// Written for a self-describing format (JSON): a struct's announced length still counts
/// the fields left out.
pub struct WireArgs<'a>(pub &'a Invocation);

impl Serialize for WireArgs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let omitted = Omitted::current();
        let config: &'static [&'static str] = match (omitted.thread_id, omitted.checkpoint_ns) {
            (false, false) => &[],
            (true, false) => &["thread_id"],
            (false, true) => &["checkpoint_ns"],
            (true, true) => &["thread_id", "checkpoint_ns"],
        };
        self.0.serialize(Skipping { inner: s, keys: &[TAG], config })
    }
}

/// `value` (a config) written with the fields named in `keys` left out.
struct Without<'a, T: ?Sized> {
    value: &'a T,
    keys: &'static [&'static str],
}

impl<T: ?Sized + Serialize> Serialize for Without<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Skipping { inner: s, keys: self.keys, config: &[] })
    }
}

/// A serializer for a struct (what a call and a config are) that leaves fields out.
struct Skipping<S> {
    inner: S,
    keys: &'static [&'static str],
    config: &'static [&'static str],
}

/// A struct being written by [`Skipping`].
struct SkippingStruct<T> {
    inner: T,
    keys: &'static [&'static str],
    config: &'static [&'static str],
}

impl<T: SerializeStruct> SerializeStruct for SkippingStruct<T> {
    type Ok = T::Ok;
    type Error = T::Error;

    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, value: &V) -> Result<(), T::Error> {
        if self.keys.contains(&key) {
            Ok(())
        } else if key == "config" && !self.config.is_empty() {
            self.inner.serialize_field(key, &Without { value, keys: self.config })
        } else {
            self.inner.serialize_field(key, value)
        }
    }

    fn end(self) -> Result<T::Ok, T::Error> {
        self.inner.end()
    }
}

/// The methods of [`Serializer`] for what is not a struct: an error, since a call's
/// arguments (and a config) are an object.
macro_rules! not_a_struct {
    ($($method:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ret, S::Error> {
            Err(S::Error::custom(concat!("a call's arguments are an object, not ", stringify!($method))))
        })*
    };
}

impl<S: Serializer> Serializer for Skipping<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = SkippingStruct<S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        let inner = self.inner.serialize_struct(name, len)?;
        Ok(SkippingStruct { inner, keys: self.keys, config: self.config })
    }

    not_a_struct! {
        serialize_bool(bool) -> S::Ok;
        serialize_i8(i8) -> S::Ok;
        serialize_i16(i16) -> S::Ok;
        serialize_i32(i32) -> S::Ok;
        serialize_i64(i64) -> S::Ok;
        serialize_u8(u8) -> S::Ok;
        serialize_u16(u16) -> S::Ok;
        serialize_u32(u32) -> S::Ok;
        serialize_u64(u64) -> S::Ok;
        serialize_f32(f32) -> S::Ok;
        serialize_f64(f64) -> S::Ok;
        serialize_char(char) -> S::Ok;
        serialize_str(&str) -> S::Ok;
        serialize_bytes(&[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(&'static str) -> S::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> S::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a call's arguments are an object, not an option"))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a call's arguments are an object, not a newtype"))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("a call's arguments are an object, not a variant"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CheckpointConfig, Put, PutWrites, TypedValue};

    fn args(call: &Invocation) -> String {
        serde_json::to_string(&WireArgs(call)).unwrap()
    }

    #[test]
    fn the_call_key_is_left_out_of_every_shape_of_call() {
        let config = CheckpointConfig { checkpoint_id: Some("c1".into()), ..CheckpointConfig::new("t") };
        let writes = vec![("a".to_owned(), TypedValue::json(&serde_json::json!(1)))];
        let put_writes = PutWrites { config, writes, task_id: "k".into(), task_path: "p".into() };
        assert_eq!(
            args(&Invocation::PutWrites(put_writes)),
            r#"{"config":{"thread_id":"t","checkpoint_ns":"","checkpoint_id":"c1"},"writes":[["a",1]],"task_id":"k","task_path":"p"}"#
        );
        let copy = Invocation::CopyThread { source: "a".into(), target: "b".into() };
        assert_eq!(args(&copy), r#"{"source":"a","target":"b"}"#);
        assert_eq!(args(&Invocation::GetNextVersion { current: None }), r#"{"current":null}"#);
    }

    #[tokio::test]
    async fn omitted_fields_leave_the_config_only() {
        let put = Put {
            config: CheckpointConfig::new(""),
            checkpoint: crate::Checkpoint::default(),
            metadata: Default::default(),
            new_versions: Default::default(),
        };
        let call = Invocation::Put(put);
        let both = Omitted { thread_id: true, checkpoint_ns: true };
        let json: serde_json::Value = serde_json::from_str(&both.scope(async { args(&call) }).await).unwrap();
        assert_eq!(json["config"], serde_json::json!({"checkpoint_id": null}));
        assert!(json.get("call").is_none() && json.get("checkpoint").is_some(), "{json}");
        let json = Omitted::CHECKPOINT_NS.scope(async { args(&call) }).await;
        assert!(json.starts_with(r#"{"config":{"thread_id":"","checkpoint_id":null},"checkpoint":"#), "{json}");
    }
}
