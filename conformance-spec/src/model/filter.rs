//! The `filter` rule of CONTRACT §2 list, written out for the model: every filter key
//! equals the top-level metadata value by JSON equality (numbers by value, booleans never
//! numbers, strings exactly); a null filter value matches a missing key or a null.

use conformance_core::CheckpointMetadata;
use serde_json::Value;

/// True when `metadata` matches every entry of `filter`.
pub fn matches(metadata: &CheckpointMetadata, filter: &CheckpointMetadata) -> bool {
    matches_with(metadata, filter, Looser::default())
}

/// The ways LangGraph's own savers match a filter more loosely or more tightly than the
/// contract's SHOULD rule `list.filter_strict` (CONTRACT §2 list); each is a difference
/// that costs no level. All false: the contract's rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct Looser {
    /// `true` equals `1` and `false` equals `0` (Python's `==`, SQLite's `json_extract`).
    pub bools_are_numbers: bool,
    /// A null filter value matches only a key present with null (Postgres containment).
    pub null_needs_key: bool,
    /// An object or array filter value matches one that contains it (Postgres `@>`).
    pub containment: bool,
    /// The stored metadata lost its NUL characters, in strings and keys (LangGraph's
    /// `get_checkpoint_metadata` strips them before any of its savers stores a put: the
    /// SHOULD rule `put.refuse_whole`, CONTRACT §1 Metadata); the filter is matched as
    /// given, so a filter value holding a NUL no longer matches what it was put as.
    pub nul_dropped: bool,
}

impl Looser {
    /// Every combination with at least one way set.
    pub fn all() -> impl Iterator<Item = Looser> {
        (1u8..16).map(|b| Looser {
            bools_are_numbers: b & 1 != 0,
            null_needs_key: b & 2 != 0,
            containment: b & 4 != 0,
            nul_dropped: b & 8 != 0,
        })
    }
}

/// `v` without NUL characters in its strings and object keys, at any depth.
fn without_nul(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace('\0', "")),
        Value::Array(a) => Value::Array(a.iter().map(without_nul).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.replace('\0', ""), without_nul(v))).collect()),
        other => other.clone(),
    }
}

/// `metadata` without NUL characters in its keys and strings, at any depth: how LangGraph's
/// savers store it.
pub fn metadata_without_nul(metadata: &CheckpointMetadata) -> CheckpointMetadata {
    metadata.iter().map(|(k, v)| (k.replace('\0', ""), without_nul(v))).collect()
}

/// [`matches()`] the way `looser` says.
pub fn matches_with(metadata: &CheckpointMetadata, filter: &CheckpointMetadata, looser: Looser) -> bool {
    if looser.nul_dropped {
        return matches_with(&metadata_without_nul(metadata), filter, Looser { nul_dropped: false, ..looser });
    }
    filter.iter().all(|(k, want)| match metadata.get(k) {
        None => want.is_null() && !looser.null_needs_key,
        Some(have) => equal_with(have, want, looser),
    })
}

fn equal_with(have: &Value, want: &Value, looser: Looser) -> bool {
    if json_equal(have, want) {
        return true;
    }
    let as_number = |v: &Value| match v {
        Value::Bool(b) => Some(Value::from(i64::from(*b))),
        _ => None,
    };
    if looser.bools_are_numbers {
        match (as_number(have), as_number(want)) {
            (Some(h), None) if json_equal(&h, want) => return true,
            (None, Some(w)) if json_equal(have, &w) => return true,
            _ => {}
        }
    }
    looser.containment && contains(have, want)
}

/// JSON containment as Postgres `@>` reads it: an object holds each key of `want` with a
/// value containing its value; an array holds, for each element of `want`, one containing
/// it; scalars are equal.
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w.iter().all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv))),
        (Value::Array(h), Value::Array(w)) => w.iter().all(|wv| h.iter().any(|hv| contains(hv, wv))),
        _ => json_equal(have, want),
    }
}

/// JSON equality with numbers compared by value: `1` equals `1.0`, and an integer equals
/// a float only when the float is exactly that integer (`2^53 + 1` is not `2^53` as a
/// float), as Python's `==` and Postgres `jsonb` compare.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (exact(x), exact(y)) {
            (Exact::Int(i), Exact::Int(j)) => i == j,
            (Exact::Float(f), Exact::Float(g)) => f == g,
            (Exact::Int(i), Exact::Float(f)) | (Exact::Float(f), Exact::Int(i)) => {
                f.is_finite() && f.trunc() == f && f.abs() < 1e38 && f as i128 == i
            }
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(i, j)| json_equal(i, j)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A JSON number as what it was written as.
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(n: &serde_json::Number) -> Exact {
    match n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)) {
        Some(i) => Exact::Int(i),
        None => Exact::Float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

#[cfg(test)]
mod tests {
    use super::json_equal;
    use serde_json::json;

    #[test]
    fn integers_and_floats_compare_exactly() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(!json_equal(&json!(i64::MAX), &json!(9.223372036854776e18)));
        assert!(!json_equal(&json!(9007199254740993u64), &json!(9007199254740992.0)));
        assert!(json_equal(&json!(9007199254740992u64), &json!(9007199254740992.0)));
        assert!(!json_equal(&json!(true), &json!(1)));
    }
}
