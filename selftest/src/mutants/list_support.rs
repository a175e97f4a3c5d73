//! The machinery the `list` mutants ([`super::list`]) share: the contract's order, the
//! order of puts, and the filter mutants, each of which filters the listed tuples itself
//! under a [`FilterRule`] that differs from the contract's in one step.

use conformance_core::json_equal;

use super::prelude::*;

/// Sorts `r` as `list` orders: id descending, equal ids namespace ascending.
pub(crate) fn newest_first(r: &mut [CheckpointTuple]) {
    r.sort_by(|a, b| {
        b.config
            .checkpoint_id
            .cmp(&a.config.checkpoint_id)
            .then_with(|| a.config.checkpoint_ns.cmp(&b.config.checkpoint_ns))
    });
}

/// The namespaces of `thread`.
pub(crate) async fn namespaces(saver: &Inner<'_>, thread: &str) -> Result<BTreeSet<String>, CheckpointError> {
    Ok(saver.snapshot(thread).await?.into_iter().map(|t| t.config.checkpoint_ns).collect())
}

/// The order of every put (a re-put takes the count of checkpoints seen so far).
#[derive(Default)]
pub struct PutOrder(Mutex<HashMap<CpKey, u64>>);

impl PutOrder {
    pub(crate) fn record(&self, put: &Put) {
        let mut seq = lock(&self.0);
        let n = seq.len() as u64;
        seq.insert((put.config.thread_id.clone(), put.config.checkpoint_ns.clone(), put.checkpoint.id.clone()), n);
    }
    pub(crate) fn of(&self, key: &CpKey) -> Option<u64> {
        lock(&self.0).get(key).copied()
    }
    /// The first put of checkpoint `id` in `thread` (any namespace).
    pub(crate) fn first_of(&self, thread: &str, id: &str) -> Option<u64> {
        lock(&self.0).iter().filter(|(k, _)| k.0 == thread && k.2 == id).map(|(_, n)| *n).min()
    }
}

/// How a filter mutant compares metadata with a filter; the defaults are the contract's
/// (CONTRACT §2 list `filter`).
pub(crate) trait FilterRule: Default + Send + Sync + 'static {
    /// The filter entries applied.
    fn applied(&self, filter: &CheckpointMetadata) -> CheckpointMetadata {
        filter.clone()
    }
    /// Whether the filter value `want` matches a missing key.
    fn missing(&self, want: &Value) -> bool {
        want.is_null()
    }
    /// Whether `have` matches `want`; `None` for JSON equality.
    fn values(&self, _have: &Value, _want: &Value) -> Option<bool> {
        None
    }
}

/// Whether `metadata` matches `filter` under `rule`.
pub(crate) fn filter_matches(
    rule: &impl FilterRule,
    metadata: &CheckpointMetadata,
    filter: &CheckpointMetadata,
) -> bool {
    rule.applied(filter).iter().all(|(key, want)| match metadata.get(key) {
        None => rule.missing(want),
        Some(have) => value_matches(rule, have, want),
    })
}

/// Whether `have` matches `want` under `rule`.
pub(crate) fn value_matches(rule: &impl FilterRule, have: &Value, want: &Value) -> bool {
    rule.values(have, want).unwrap_or_else(|| json_equal(have, want))
}

/// A mutant that filters the listed tuples itself, under the wrong rule `F`.
#[derive(Default)]
pub struct Filtered<F>(F);

impl<F: FilterRule> Bug for Filtered<F> {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
        options.filter.clear();
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.retain(|t| filter_matches(&self.0, &t.metadata, &caller.filter));
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::list_filter::{
        ListFilterBoolEqualsNumber, ListFilterCaseInsensitive, ListFilterFirstKeyOnly, ListFilterNestedContainment,
        ListFilterNullNeedsKey, ListFilterNumbersAsText,
    };

    #[test]
    fn filter_bugs_differ_from_the_contract_rule_only_where_they_say() {
        let md = |v: Value| match v {
            Value::Object(m) => m,
            _ => CheckpointMetadata::new(),
        };
        let meta = md(serde_json::json!({"n": 1, "b": true, "s": "Acme", "o": {"x": 1, "y": 2}}));
        let f = |v: Value| md(v);
        assert!(!filter_matches(&ListFilterNumbersAsText, &meta, &f(serde_json::json!({"n": 1.0}))));
        assert!(filter_matches(&ListFilterNumbersAsText, &meta, &f(serde_json::json!({"n": 1}))));
        assert!(!filter_matches(&ListFilterNullNeedsKey, &meta, &f(serde_json::json!({"missing": null}))));
        assert!(filter_matches(&ListFilterBoolEqualsNumber, &meta, &f(serde_json::json!({"b": 1}))));
        assert!(filter_matches(&ListFilterCaseInsensitive, &meta, &f(serde_json::json!({"s": "acme"}))));
        assert!(filter_matches(&ListFilterNestedContainment, &meta, &f(serde_json::json!({"o": {"x": 1}}))));
        assert!(filter_matches(&ListFilterFirstKeyOnly, &meta, &f(serde_json::json!({"b": true, "n": 2}))));
    }
}
