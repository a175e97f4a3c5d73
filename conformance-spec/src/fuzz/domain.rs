//! The adversarial domains the generator draws from, and the small [`World`] of one
//! sequence: a few threads, namespaces, checkpoint ids, tasks, channels, run ids and
//! metadata keys picked from them, so that operations collide.
//!
//! Neighbours in each domain are confusable (`"a"`, `"a "`, `" a"`, `"A"`, `"a|b"`,
//! `"ab"`): a world takes consecutive entries, so its identifiers differ only by a
//! separator, whitespace, case, a prefix, a SQL/LIKE wildcard or a quote (CONTRACT §1
//! "Identifiers are opaque"). Task paths include pairs whose byte order and length order
//! differ (`"~10"` < `"~2"` by bytes, CONTRACT §2 get_tuple).

use std::collections::BTreeSet;

use conformance_core::{ChannelVersion, Feature, TypedValue};
use serde_json::{json, Value};

/// Thread ids.
pub const THREADS: &[&str] = &[
    "a",
    "A",
    "",
    "a ",
    " a",
    "a|b",
    "ab",
    "a:b",
    "a/b",
    "a.b",
    "a%",
    "a_",
    "%",
    "_",
    "a'b",
    "a\"b",
    "é",
    "e\u{301}",
    "日本",
    "a\\b",
    "a-1",
    "a-10",
    "a-2",
    "a\tb",
    "\u{FF61}",
    "\u{1F600}",
];
/// Namespaces (`""` is the root).
pub const NAMESPACES: &[&str] = &[
    "",
    "child:1",
    "Child:1",
    "child:1 ",
    "child:1|x",
    "child:10",
    "child",
    "%",
    "_",
    "ns'1",
    "é",
    "e\u{301}",
    "ünï",
    "a.b",
    " ",
];
/// Checkpoint ids (ordered by bytes, so `"10"` < `"2"`).
pub const IDS: &[&str] = &[
    "1",
    "10",
    "2",
    "1 ",
    "A",
    "a",
    "B",
    "aa",
    "é",
    "e\u{301}",
    "01",
    "1f",
    "~",
    "%_",
    "1%",
    "\u{FF61}",
    "\u{1F600}",
    "ab",
    "b",
];
/// Task ids.
pub const TASKS: &[&str] = &["t", "t ", "T", "t:1", "t|1", "t%", "tt", "t'", "B", "a", "\u{FF61}", "\u{1F600}"];
/// Task paths.
pub const PATHS: &[&str] = &[
    "~0",
    "~10",
    "~2",
    "",
    "~0:1",
    "~1",
    "~0|1",
    "~__pregel_push, 0, a",
    "~__pregel_push, 1",
    "~0.5",
    "~ ",
    "~B",
    "~a",
    "~\u{FF61}",
    "~\u{1F600}",
];
/// Channel names (regular ones; the special channels are added for writes).
pub const CHANNELS: &[&str] = &["a", "a ", "A", "a:b", "a|b", "a.b", "ab", "%", "_", "é", "a'"];
/// Run ids.
pub const RUN_IDS: &[&str] = &["r1", "R1", "r1 ", "r%", "r_", "r10", "r'1", "ré", "re\u{301}"];
/// Custom metadata keys, neighbours of one another and of LangGraph's keys (`source`,
/// `step`, `parents`, which every put carries with a LangGraph value, CONTRACT §5, and
/// `run_id`, drawn apart).
pub const META_KEYS: &[&str] = &["k", "k ", "K", "k.x", "k:x", "%", "_", "source ", "Step", "parents.x", "kk", "ké"];
/// LangGraph's metadata `source` values.
pub const SOURCES: &[&str] = &["input", "loop", "update", "fork"];
/// The special channels of CONTRACT §1.
pub const SPECIAL: &[&str] = &["__error__", "__scheduled__", "__interrupt__", "__resume__"];

/// Channel versions of both kinds, extremes included; `Int(1)` and `Str("1")` are
/// different versions (CONTRACT §1 "Channel version").
pub fn versions() -> Vec<ChannelVersion> {
    vec![
        ChannelVersion::Int(1),
        ChannelVersion::Str("1".into()),
        ChannelVersion::Int(2),
        ChannelVersion::Int(0),
        ChannelVersion::Int(-1),
        ChannelVersion::Int(i64::MAX),
        ChannelVersion::Int(i64::MIN),
        ChannelVersion::Str(String::new()),
        ChannelVersion::Str("00000000000000000000000000000001.0123".into()),
        ChannelVersion::Str("00000000000000000000000000000002.5".into()),
        ChannelVersion::Str("10".into()),
        ChannelVersion::Str("2".into()),
        ChannelVersion::Int(i64::MAX - 1),
    ]
}

/// The `current` versions `get_next_version` is asked about: none, and the versions of
/// [`versions`] its rule covers (CONTRACT §2 get_next_version: non-negative integers it
/// can add one to, and LangGraph's padded strings `"{n:032}.{fraction}"`).
pub fn next_version_inputs(versions: &[ChannelVersion]) -> Vec<Option<ChannelVersion>> {
    let covered = |v: &&ChannelVersion| match v {
        ChannelVersion::Int(n) => (0..i64::MAX).contains(n),
        ChannelVersion::Str(s) => s.split_once('.').is_some_and(|(n, _)| n.len() == 32),
    };
    std::iter::once(None).chain(versions.iter().filter(covered).cloned().map(Some)).collect()
}

/// The largest integer every JSON reader holds exactly (2^53, JavaScript's safe range).
const SAFE_INTEGER: u64 = 1 << 53;

/// True when `v` holds only numbers a saver lacking [`Feature::WideNumbers`] keeps
/// (CONTRACT §5 Declared limits): integers within ±2^53, floats that are not integral
/// (such a saver reads `1.0` back as `1`).
fn narrow_numbers(v: &Value) -> bool {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.unsigned_abs() <= SAFE_INTEGER,
            (None, Some(_), _) => false,
            (None, None, Some(f)) => f.fract() != 0.0,
            _ => false,
        },
        Value::Array(a) => a.iter().all(narrow_numbers),
        Value::Object(m) => m.values().all(narrow_numbers),
        _ => true,
    }
}

/// Typed values of edge sizes and contents: empty, NUL, non-UTF-8, odd tags, invalid JSON
/// under the json tag, a 70 KB value and one just over 1 MiB (a size where storage layers
/// commonly split or cap values; CONTRACT §1 asks for 16 MiB, which the hand-written put
/// case checks, too slow to draw here). Built once.
pub fn values() -> &'static [TypedValue] {
    static VALUES: std::sync::OnceLock<Vec<TypedValue>> = std::sync::OnceLock::new();
    VALUES.get_or_init(|| {
        vec![
            TypedValue::json(&json!(1)),
            TypedValue::json(&json!("x")),
            TypedValue::bytes(Vec::new()),
            TypedValue::bytes(vec![0]),
            TypedValue::bytes(vec![0xff, 0xfe, 0x00, 0x80]),
            TypedValue::new("", b"x".to_vec()),
            TypedValue::new("msgpack", vec![0x81, 0xa1, 0x61, 0x01]),
            TypedValue::new("json", b"{not json".to_vec()),
            TypedValue::json(&json!({"m": ["日本", null, 1.5]})),
            TypedValue::new("json", b" 1".to_vec()),
            TypedValue::new("null", Vec::new()),
            TypedValue::bytes(vec![7; 70_000]),
            TypedValue::bytes((0..(1u32 << 20) + 1).map(|i| (i % 251) as u8).collect::<Vec<u8>>()),
        ]
    })
}

/// Metadata values of every JSON kind.
pub fn json_values() -> Vec<Value> {
    vec![
        json!(1),
        json!(1.0),
        json!("x"),
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(""),
        json!(" x"),
        json!("X"),
        json!("日本\u{1F600}"),
        json!("%_'\""),
        json!([]),
        json!([1, "a", null]),
        json!({}),
        json!({"a": {"b": null}, "": 1}),
        json!(-2.5e-300),
        json!("a\u{0}b"),
        json!({"k": ["\u{0}"]}),
    ]
}

/// A filter value confusable with `v` but not equal to it by CONTRACT §2 list's filter
/// rule (JSON equality, numbers by value): the other number kind of an integral number
/// (`1` and `1.0` are equal, so the float `1.5` becomes the text `"1.5"`), a boolean's
/// number, a string in the other case or with a trailing space, an object or array missing
/// its last entry, `false` for null. Variant `n` picks among a kind's confusables.
pub fn confusable(v: &Value, n: u16) -> Value {
    match v {
        Value::Number(x) => match (x.as_i64(), x.as_f64()) {
            (Some(i), _) if n.is_multiple_of(2) => json!(i as f64),
            (_, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 && n.is_multiple_of(2) => json!(f as i64),
            _ => Value::String(x.to_string()),
        },
        Value::Bool(b) => json!(i64::from(*b)),
        Value::String(s) if n.is_multiple_of(2) && s.to_uppercase() != *s => Value::String(s.to_uppercase()),
        Value::String(s) if n.is_multiple_of(2) => Value::String(s.to_lowercase()),
        Value::String(s) => Value::String(format!("{s} ")),
        Value::Object(m) if !m.is_empty() => {
            Value::Object(m.iter().take(m.len() - 1).map(|(k, v)| (k.clone(), v.clone())).collect())
        }
        Value::Array(a) if !a.is_empty() => Value::Array(a[..a.len() - 1].to_vec()),
        Value::Object(_) => json!({"k": null}),
        Value::Array(_) => json!([null]),
        Value::Null => json!(false),
    }
}

/// The identifiers of one sequence.
#[derive(Clone, Debug)]
pub struct World {
    /// Three thread ids.
    pub threads: Vec<String>,
    /// Two namespaces.
    pub namespaces: Vec<String>,
    /// Four checkpoint ids, sorted by bytes.
    pub ids: Vec<String>,
    /// Two task ids.
    pub tasks: Vec<String>,
    /// Three task paths.
    pub paths: Vec<String>,
    /// Three channels.
    pub channels: Vec<String>,
    /// Two run ids.
    pub run_ids: Vec<String>,
    /// Three metadata keys.
    pub meta_keys: Vec<String>,
    /// The channel versions drawn: [`versions`], narrowed by [`World::without`].
    pub versions: Vec<ChannelVersion>,
    /// The metadata values drawn: [`json_values`], narrowed by [`World::without`].
    pub json_values: Vec<Value>,
}

/// Four checkpoint ids from one of several generators (CONTRACT §1: ids are opaque
/// strings, ordered by bytes): a window of [`IDS`] (raw 0 mod 4, where shrinking goes),
/// LangGraph-style uuid6 strings, zero-padded counters of two widths, long ids that
/// differ only past 255 bytes, or a case pair beside an NFC/NFD pair.
fn checkpoint_ids(raw: u16) -> Vec<String> {
    let r = u32::from(raw >> 2);
    match raw % 4 {
        1 => (0..4u32)
            .map(|i| {
                let t = r.wrapping_mul(7919).wrapping_add(i * (1 + r % 3));
                format!("1ef{:05x}-{:04x}-6{:03x}-8{:03x}-{:012x}", t, r % 0xffff, i, r % 0xfff, u64::from(t) * 31)
            })
            .collect(),
        2 => (0..4u32).map(|i| if i % 2 == 0 { format!("{:08}", r + i) } else { format!("{:032}", r + i) }).collect(),
        3 if r % 2 == 0 => (0..4u32).map(|i| format!("{}{}", "c".repeat(300), i + r % 7)).collect(),
        // Two pairs a collation or a normalisation would merge: case, and NFC/NFD.
        3 => ["A", "a", "\u{e9}", "e\u{301}"].map(str::to_owned).to_vec(),
        _ => window(IDS, raw >> 2, 4),
    }
}

fn window(domain: &[&str], start: u16, n: usize) -> Vec<String> {
    let start = usize::from(start) % domain.len();
    (0..n).map(|i| domain[(start + i) % domain.len()].to_owned()).collect()
}

impl World {
    /// The world picked by `raw` (each entry the start of a window in one domain; zeros
    /// give the simplest world, which is where shrinking goes).
    pub fn new(raw: &[u16; 8]) -> Self {
        let mut ids = checkpoint_ids(raw[2]);
        ids.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        // The root namespace, the default the contract treats apart (CONTRACT §2 get_tuple
        // and list), is in half the worlds, beside a neighbour from the domain.
        let mut namespaces = window(NAMESPACES, raw[1] >> 1, 2);
        if raw[1].is_multiple_of(2) && !namespaces.iter().any(String::is_empty) {
            namespaces[0] = String::new();
        }
        let mut threads = window(THREADS, raw[0], 3);
        if raw[0] % 7 == 6 {
            // Two long ids that differ only past 255 bytes (a truncating column mixes them).
            threads[1] = format!("{}1", "a".repeat(300));
            threads[2] = format!("{}2", "a".repeat(300));
        }
        Self {
            threads,
            namespaces,
            ids,
            tasks: window(TASKS, raw[3], 2),
            paths: window(PATHS, raw[4], 3),
            channels: window(CHANNELS, raw[5], 3),
            run_ids: window(RUN_IDS, raw[6], 2),
            meta_keys: window(META_KEYS, raw[7], 3),
            versions: versions(),
            json_values: json_values(),
        }
    }

    /// This world without the values a saver declares it cannot hold (CONTRACT §5
    /// Declared limits), so that what it lacks is never drawn: no string versions for
    /// [`Feature::StringVersions`]; no integer versions or metadata numbers beyond ±2^53,
    /// and no integral floats, for [`Feature::WideNumbers`].
    pub fn without(mut self, lacks: &BTreeSet<Feature>) -> Self {
        if lacks.contains(&Feature::StringVersions) {
            self.versions.retain(|v| matches!(v, ChannelVersion::Int(_)));
        }
        if lacks.contains(&Feature::WideNumbers) {
            self.versions.retain(|v| !matches!(v, ChannelVersion::Int(n) if n.unsigned_abs() > SAFE_INTEGER));
            self.json_values.retain(narrow_numbers);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrowed_world_draws_nothing_the_saver_lacks() {
        let lacks = BTreeSet::from([Feature::StringVersions, Feature::WideNumbers]);
        let world = World::new(&[0; 8]).without(&lacks);
        assert!(world.versions.iter().all(|v| matches!(v, ChannelVersion::Int(n) if n.unsigned_abs() <= SAFE_INTEGER)));
        assert!(world.versions.len() >= 3, "{:?}", world.versions);
        assert!(world.json_values.iter().all(narrow_numbers));
        assert!(!world.json_values.contains(&json!(1.0)) && !world.json_values.contains(&json!(u64::MAX)));
        assert!(world.json_values.contains(&json!(1.5)) && world.json_values.contains(&json!(-1)));
        // A saver that lacks nothing gets the whole domain.
        let whole = World::new(&[0; 8]).without(&BTreeSet::new());
        assert_eq!((whole.versions, whole.json_values), (versions(), json_values()));
    }
}
