//! The `filter` rule of CONTRACT §2 list, written out for the model: every filter key
//! equals the top-level metadata value by JSON equality (numbers by value, booleans never
//! numbers, strings exactly); a null filter value matches a missing key or a null.

use conformance_core::CheckpointMetadata;
use serde_json::Value;

/// True when `metadata` matches every entry of `filter`.
pub fn matches(metadata: &CheckpointMetadata, filter: &CheckpointMetadata) -> bool {
    filter.iter().all(|(k, want)| match metadata.get(k) {
        None => want.is_null(),
        Some(have) => json_equal(have, want),
    })
}

/// JSON equality with numbers compared by value: `1` equals `1.0`.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let int = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            match (int(x), int(y)) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64().zip(y.as_f64()).is_some_and(|(i, j)| i == j),
            }
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(i, j)| json_equal(i, j)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}
