//! Mutants of CONTRACT §1 (types), seen through `put` and the reads: thread ids, channel
//! values, versions, checkpoint fields and metadata.

use super::prelude::*;

/// An empty `thread_id` is silently replaced by `"default"` in every base method.
#[derive(Default)]
pub struct EmptyThreadIdDefaulted;

impl Bug for EmptyThreadIdDefaulted {
    fn thread_input(&self, thread_id: &mut String) {
        if thread_id.is_empty() {
            *thread_id = "default".to_owned();
        }
    }
}

/// An empty `thread_id` is accepted and stored as the thread `""`, as LangGraph's own savers
/// do (CONTRACT §1 asks for `InvalidConfig`, a SHOULD rule): the memory saver below, which
/// refuses `""`, holds it under a private name that never comes back out.
#[derive(Default)]
pub struct EmptyThreadIdAccepted;

/// The name [`EmptyThreadIdAccepted`] stores the thread `""` under.
const EMPTY_THREAD: &str = "\u{1f}the empty thread";

impl EmptyThreadIdAccepted {
    fn output(config: &mut CheckpointConfig) {
        if config.thread_id == EMPTY_THREAD {
            config.thread_id.clear();
        }
    }
}

impl Bug for EmptyThreadIdAccepted {
    fn thread_input(&self, thread_id: &mut String) {
        if thread_id.is_empty() {
            *thread_id = EMPTY_THREAD.to_owned();
        }
    }

    fn put_output(&self, _caller: &CheckpointConfig, out: &mut CheckpointConfig) {
        Self::output(out);
    }

    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        Self::output(&mut tuple.config);
        if let Some(parent) = &mut tuple.parent_config {
            Self::output(parent);
        }
    }
}

/// An empty `thread_id` panics in every base method.
#[derive(Default)]
pub struct EmptyThreadIdPanics;

impl Bug for EmptyThreadIdPanics {
    fn thread_input(&self, thread_id: &mut String) {
        assert!(!thread_id.is_empty(), "thread_id is empty");
    }
}

/// Channel values are stored with an empty type tag.
#[derive(Default)]
pub struct TypeTagDropped;

impl Bug for TypeTagDropped {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.channel_values.values_mut().for_each(|v| v.type_tag.clear());
    }
}

/// A channel value with empty bytes is not stored (reads as absent).
#[derive(Default)]
pub struct EmptyBytesDropped;

impl Bug for EmptyBytesDropped {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.channel_values.retain(|_, v| !v.data.is_empty());
    }
}

/// NUL bytes are stripped from channel values.
#[derive(Default)]
pub struct NulBytesStripped;

impl Bug for NulBytesStripped {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.channel_values.values_mut().for_each(|v| v.data = without_nul_bytes(&v.data));
    }
}

/// `data` without its NUL bytes. The NULs are found with `CStr::from_bytes_until_nul`,
/// which searches with the standard library's optimised `memchr`: a byte-by-byte filter
/// takes over a second on 16 MiB in an unoptimised build.
fn without_nul_bytes(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Ok(run) = std::ffi::CStr::from_bytes_until_nul(rest) {
        let n = run.to_bytes().len();
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n + 1..];
    }
    out.extend_from_slice(rest);
    out
}

/// Channel value bytes go through lossy UTF-8 decoding.
#[derive(Default)]
pub struct NonUtf8Replaced;

impl Bug for NonUtf8Replaced {
    fn put_input(&self, put: &mut Put) {
        for v in put.checkpoint.channel_values.values_mut() {
            if std::str::from_utf8(&v.data).is_err() {
                v.data = String::from_utf8_lossy(&v.data).into_owned().into_bytes();
            }
        }
    }
}

/// Channel values are truncated to 1 MiB.
#[derive(Default)]
pub struct LargeValueTruncated;

impl Bug for LargeValueTruncated {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.channel_values.values_mut().for_each(|v| v.data.truncate(1 << 20));
    }
}

/// Integer channel versions come back as strings.
#[derive(Default)]
pub struct IntVersionReadAsString;

impl Bug for IntVersionReadAsString {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        for v in Arc::make_mut(&mut t.checkpoint).channel_versions.values_mut() {
            if let ChannelVersion::Int(i) = v {
                *v = ChannelVersion::Str(i.to_string());
            }
        }
    }
}

/// `versions_seen` is not stored.
#[derive(Default)]
pub struct VersionsSeenDropped;

impl Bug for VersionsSeenDropped {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.versions_seen.clear();
    }
}

/// `updated_channels: Some([])` comes back as `None`.
#[derive(Default)]
pub struct UpdatedChannelsEmptyAsNone;

impl Bug for UpdatedChannelsEmptyAsNone {
    fn put_input(&self, put: &mut Put) {
        if put.checkpoint.updated_channels.as_ref().is_some_and(Vec::is_empty) {
            put.checkpoint.updated_channels = None;
        }
    }
}

/// `ts` is overwritten with the saver's own clock.
#[derive(Default)]
pub struct TsOverwritten;

impl Bug for TsOverwritten {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.ts = "2000-01-01T00:00:00.000000+00:00".to_owned();
    }
}

/// `v` is always stored as 1.
#[derive(Default)]
pub struct FormatVersionForced;

impl Bug for FormatVersionForced {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.v = 1;
    }
}

/// Float metadata values are truncated to integers (at any depth).
#[derive(Default)]
pub struct MetadataFloatTruncated;

impl Bug for MetadataFloatTruncated {
    fn put_input(&self, put: &mut Put) {
        put.metadata.values_mut().for_each(|v| map_floats(v, &|f| Value::from(f.trunc() as i64)));
    }
}

/// Float metadata values go through `f32` (at any depth): 0.1 comes back as
/// 0.10000000149011612, 1e-300 as 0, the largest finite `f64` as null (a float `f32`
/// cannot hold becomes null, as `serde_json` makes of a non-finite number).
#[derive(Default)]
pub struct MetadataFloatThroughF32;

impl Bug for MetadataFloatThroughF32 {
    fn put_input(&self, put: &mut Put) {
        put.metadata.values_mut().for_each(|v| map_floats(v, &|f| Value::from(f64::from(f as f32))));
    }
}

/// Replaces every float of `v`, at any depth, with `f` of it.
fn map_floats(v: &mut Value, f: &impl Fn(f64) -> Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64() {
                *v = f(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| map_floats(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_floats(x, f)),
        _ => {}
    }
}

/// Top-level metadata keys whose value is null are dropped.
#[derive(Default)]
pub struct MetadataNullDropped;

impl Bug for MetadataNullDropped {
    fn put_input(&self, put: &mut Put) {
        put.metadata.retain(|_, v| !v.is_null());
    }
}

/// Nested metadata objects and arrays are stored as JSON text.
#[derive(Default)]
pub struct MetadataNestedStringified;

impl Bug for MetadataNestedStringified {
    fn put_input(&self, put: &mut Put) {
        for v in put.metadata.values_mut() {
            if v.is_object() || v.is_array() {
                *v = Value::String(v.to_string());
            }
        }
    }
}

/// NUL characters are stripped from metadata strings (upstream's behaviour).
#[derive(Default)]
pub struct MetadataNulStripped;

impl Bug for MetadataNulStripped {
    fn put_input(&self, put: &mut Put) {
        put.metadata.values_mut().for_each(|v| map_strings(v, &|s| s.replace('\0', "")));
    }
}

/// Non-ASCII characters are dropped from metadata strings (an encoder with
/// `errors="ignore"`).
#[derive(Default)]
pub struct MetadataNonAsciiDropped;

impl Bug for MetadataNonAsciiDropped {
    fn put_input(&self, put: &mut Put) {
        put.metadata.values_mut().for_each(|v| map_strings(v, &|s| s.chars().filter(char::is_ascii).collect()));
    }
}

/// Applies `f` to every string of `v`, at any depth.
fn map_strings(v: &mut Value, f: &impl Fn(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| map_strings(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_strings(x, f)),
        _ => {}
    }
}

/// The `parents` metadata key is not stored.
#[derive(Default)]
pub struct MetadataParentsDropped;

impl Bug for MetadataParentsDropped {
    fn put_input(&self, put: &mut Put) {
        put.metadata.remove("parents");
    }
}

/// Boolean metadata values are stored as 0/1.
#[derive(Default)]
pub struct MetadataBoolAsInteger;

impl Bug for MetadataBoolAsInteger {
    fn put_input(&self, put: &mut Put) {
        for v in put.metadata.values_mut() {
            if let Value::Bool(b) = v {
                *v = Value::from(i64::from(*b));
            }
        }
    }
}

/// `put` panics on a NUL character in a metadata string.
#[derive(Default)]
pub struct MetadataNulPanics;

impl Bug for MetadataNulPanics {
    fn put_input(&self, put: &mut Put) {
        assert!(!metadata_has_nul(&put.metadata), "metadata string contains a NUL character");
    }
}

/// `put` refuses a NUL character in metadata with `InvalidInput`, after it stored the
/// checkpoint.
#[derive(Default)]
pub struct MetadataNulRefusedAfterStoring;

#[async_trait]
impl Bug for MetadataNulRefusedAfterStoring {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let nul = matches!(&call, Invocation::Put(p) if metadata_has_nul(&p.metadata));
        let reply = saver.forward(call).await?;
        if nul {
            return Err(CheckpointError::InvalidInput("metadata: a string contains a NUL character".into()));
        }
        Ok(reply)
    }
}

/// True when a key or a string of `metadata`, at any depth, holds a NUL character.
fn metadata_has_nul(metadata: &CheckpointMetadata) -> bool {
    fn has_nul(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains('\0'),
            Value::Array(a) => a.iter().any(has_nul),
            Value::Object(o) => o.iter().any(|(k, x)| k.contains('\0') || has_nul(x)),
            _ => false,
        }
    }
    metadata.iter().any(|(k, v)| k.contains('\0') || has_nul(v))
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        EmptyThreadIdDefaulted,
        BASE,
        [R("config.thread_id"), R("ids.opaque"), G("7.2-empty-thread")],
        "an empty thread_id silently becomes \"default\" in every base method (put answers for another thread)"
    ),
    mutant!(should
        EmptyThreadIdAccepted,
        BASE,
        [R("config.thread_id"), G("7.2-empty-thread")],
        "an empty thread_id is stored as the thread \"\" (as LangGraph's savers do) instead of refused"
    ),
    mutant!(
        EmptyThreadIdPanics,
        BASE,
        [R("config.thread_id"), R("errors.no_panic"), G("7.2-empty-thread")],
        "an empty thread_id panics in every base method"
    ),
    mutant!(
        TypeTagDropped,
        &[P, GT],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel values are stored without their type tag"
    ),
    mutant!(
        EmptyBytesDropped,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "a channel value with empty bytes is not stored (reads as absent)"
    ),
    mutant!(
        NulBytesStripped,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "NUL bytes are stripped from channel values"
    ),
    mutant!(
        NonUtf8Replaced,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel value bytes that are not UTF-8 go through lossy decoding"
    ),
    mutant!(
        LargeValueTruncated,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel values are truncated to 1 MiB"
    ),
    mutant!(
        IntVersionReadAsString,
        &[P, GT],
        [R("version.kind"), G("7.2-string-versions")],
        "integer channel versions come back as strings (1 -> \"1\")"
    ),
    mutant!(
        VersionsSeenDropped,
        &[P, GT],
        [R("checkpoint.fields"), G("7.2-versions-seen")],
        "versions_seen is not stored"
    ),
    mutant!(
        UpdatedChannelsEmptyAsNone,
        &[P],
        [R("checkpoint.fields"), G("7.2-updated-channels")],
        "updated_channels Some([]) comes back as None"
    ),
    mutant!(
        TsOverwritten,
        &[P, GT],
        [R("checkpoint.fields"), G("7.2-ts")],
        "ts is overwritten with the saver's own clock"
    ),
    mutant!(FormatVersionForced, &[P, GT], [R("checkpoint.fields"), G("7.2-v")], "v is always stored as 1"),
    mutant!(
        MetadataFloatTruncated,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "float metadata values are truncated to integers"
    ),
    mutant!(
        MetadataFloatThroughF32,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "float metadata values go through f32 (0.1 reads back as 0.10000000149011612)"
    ),
    mutant!(
        MetadataNullDropped,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "metadata keys whose value is null are dropped"
    ),
    mutant!(
        MetadataNestedStringified,
        &[P, GT],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "nested metadata objects and arrays are stored as JSON text"
    ),
    mutant!(should
        MetadataNulStripped,
        &[P],
        [R("metadata.refuse_whole"), G("7.2-metadata-fidelity")],
        "NUL characters are stripped from metadata strings (upstream's behaviour)"
    ),
    mutant!(
        MetadataNonAsciiDropped,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "non-ASCII characters are dropped from metadata strings (errors=\"ignore\")"
    ),
    mutant!(
        MetadataParentsDropped,
        &[P, GT],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "the parents metadata key is not stored"
    ),
    mutant!(
        MetadataBoolAsInteger,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "boolean metadata values are stored as 0/1"
    ),
    mutant!(
        MetadataNulPanics,
        &[P],
        [R("errors.no_panic"), R("metadata.json")],
        "put panics on a NUL character in a metadata string"
    ),
    mutant!(
        MetadataNulRefusedAfterStoring,
        &[P],
        [R("errors.atomic"), R("metadata.json"), R("metadata.refuse_whole")],
        "put refuses a NUL in metadata with InvalidInput, but only after storing the checkpoint"
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_nul_bytes_drops_every_nul_and_nothing_else() {
        assert_eq!(without_nul_bytes(b"\0a\0\0bc\0"), b"abc");
        assert_eq!(without_nul_bytes(b""), b"");
        assert_eq!(without_nul_bytes(b"\0\0"), b"");
        assert_eq!(without_nul_bytes(&[0xff, 0, 0xfe]), vec![0xff, 0xfe]);
    }
}
