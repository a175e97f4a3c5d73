//! The `list` mutants whose metadata filter compares values by another rule than
//! CONTRACT §2 list "Filter" (JSON equality of each key): each is a [`FilterRule`] that
//! differs from the contract's in one step. Their catalog lines are in [`super::list`].

use super::list_support::{value_matches, FilterRule};
use super::prelude::*;

/// Filter numbers are compared as text (`1 != 1.0`).
#[derive(Default)]
pub struct ListFilterNumbersAsText;

impl FilterRule for ListFilterNumbersAsText {
    fn values(&self, have: &Value, want: &Value) -> Option<bool> {
        match (have, want) {
            (Value::Number(a), Value::Number(b)) => Some(a.to_string() == b.to_string()),
            _ => None,
        }
    }
}

/// Filter numbers are compared through `f64`, so 2^53 + 1 matches 2^53.0.
#[derive(Default)]
pub struct ListFilterNumbersAsF64;

impl FilterRule for ListFilterNumbersAsF64 {
    fn values(&self, have: &Value, want: &Value) -> Option<bool> {
        match (have, want) {
            (Value::Number(a), Value::Number(b)) => Some(a.as_f64() == b.as_f64()),
            _ => None,
        }
    }
}

/// A null filter value does not match a missing key.
#[derive(Default)]
pub struct ListFilterNullNeedsKey;

impl FilterRule for ListFilterNullNeedsKey {
    fn missing(&self, _want: &Value) -> bool {
        false
    }
}

/// A boolean filter value equals the numbers 0/1.
#[derive(Default)]
pub struct ListFilterBoolEqualsNumber;

impl FilterRule for ListFilterBoolEqualsNumber {
    fn values(&self, have: &Value, want: &Value) -> Option<bool> {
        match (have, want) {
            (Value::Bool(b), Value::Number(n)) | (Value::Number(n), Value::Bool(b)) => {
                Some(n.as_f64() == Some(if *b { 1.0 } else { 0.0 }))
            }
            _ => None,
        }
    }
}

/// Only the first filter key is applied.
#[derive(Default)]
pub struct ListFilterFirstKeyOnly;

impl FilterRule for ListFilterFirstKeyOnly {
    fn applied(&self, filter: &CheckpointMetadata) -> CheckpointMetadata {
        filter.iter().take(1).map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// Filter strings are compared case-insensitively.
#[derive(Default)]
pub struct ListFilterCaseInsensitive;

impl FilterRule for ListFilterCaseInsensitive {
    fn values(&self, have: &Value, want: &Value) -> Option<bool> {
        match (have, want) {
            (Value::String(a), Value::String(b)) => Some(a.to_lowercase() == b.to_lowercase()),
            _ => None,
        }
    }
}

/// A nested filter object matches by containment, not equality.
#[derive(Default)]
pub struct ListFilterNestedContainment;

impl FilterRule for ListFilterNestedContainment {
    fn values(&self, have: &Value, want: &Value) -> Option<bool> {
        match (have, want) {
            (Value::Object(a), Value::Object(b)) => {
                Some(b.iter().all(|(k, w)| a.get(k).is_some_and(|h| value_matches(self, h, w))))
            }
            _ => None,
        }
    }
}
