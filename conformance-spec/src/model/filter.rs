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
