//! Failure clusters: the failed cases of a report grouped by capability and by the field
//! their messages say differed (`checkpoint.channel_values[…]`, `metadata[…]`,
//! `pending_writes`), largest group first, so that a reader of 40 failures sees the few
//! root causes (issue 14, "Failure clusters").

use std::collections::{BTreeMap, BTreeSet};

pub use crate::report::FailureCluster;
use crate::report::{CaseResult, Outcome};
use crate::Capability;

/// The field name used for a failure whose message names no differing field (an error,
/// a timeout, a panic).
pub const NO_FIELD: &str = "(no field named)";

/// The fields a failure message says differed: every `<field>: expected` in it, with
/// `[...]` keys elided and leading `- ` dropped, each once.
pub fn differing_fields(message: &str) -> BTreeSet<String> {
    let mut fields = BTreeSet::new();
    let mut rest = message;
    while let Some(at) = rest.find(": expected") {
        let before = strip_note(&rest[..at]);
        let start = before.rfind([' ', '\n', '(', ',']).map_or(0, |i| i + 1);
        let token = elide_keys(&before[start..]);
        let field_like = token.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '[')
            && token.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '…'));
        if field_like {
            fields.insert(token);
        }
        rest = &rest[at + ": expected".len()..];
    }
    fields
}

/// `field (a note)` -> `field`: drops one trailing parenthesised note.
fn strip_note(before: &str) -> &str {
    let trimmed = before.trim_end();
    if !trimmed.ends_with(')') {
        return trimmed;
    }
    let mut depth = 0usize;
    for (i, c) in trimmed.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let head = trimmed[..i].trim_end();
                    // `call(args)`: the parenthesis belongs to a call, not a note.
                    return if trimmed[..i].ends_with(' ') { head } else { trimmed };
                }
            }
            _ => {}
        }
    }
    trimmed
}

/// `a["x"].b[3]` -> `a[…].b[…]`.
fn elide_keys(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut depth = 0usize;
    for c in token.chars() {
        match c {
            '[' => {
                if depth == 0 {
                    out.push_str("[…]");
                }
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The clusters of `tests`' failed cases: one per (capability, field), a case in every
/// cluster of a field its message names (or in the [`NO_FIELD`] cluster), largest first
/// (ties by capability, then field).
pub fn failure_clusters(tests: &[CaseResult]) -> Vec<FailureCluster> {
    let mut groups: BTreeMap<(Capability, String), Vec<String>> = BTreeMap::new();
    for t in tests.iter().filter(|t| t.outcome == Outcome::Failed) {
        let mut fields = differing_fields(t.message.as_deref().unwrap_or(""));
        if fields.is_empty() {
            fields.insert(NO_FIELD.to_owned());
        }
        for f in fields {
            groups.entry((t.capability, f)).or_default().push(t.name.clone());
        }
    }
    let mut clusters: Vec<FailureCluster> =
        groups.into_iter().map(|((capability, field), cases)| FailureCluster { capability, field, cases }).collect();
    clusters.sort_by_key(|c| std::cmp::Reverse(c.cases.len()));
    clusters
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(cap: Capability, name: &str, message: &str) -> CaseResult {
        CaseResult {
            id: format!("{cap}::{name}"),
            capability: cap,
            name: name.into(),
            outcome: Outcome::Failed,
            strength: crate::Strength::Must,
            rules: Vec::new(),
            message: Some(message.into()),
            duration_ms: 0.0,
            facts: BTreeMap::new(),
            repeats: None,
            abort: None,
            disturbed: None,
            rerun_alone: None,
        }
    }

    #[test]
    fn fields_are_read_from_every_difference() {
        let m = "get_tuple(thread=t, ns=\"\", id=x): 2 differences:\n  - metadata[\"a\"]: expected 1, got 2\n  - checkpoint.channel_values[\"k\"]: expected json:1, got nothing";
        let f: Vec<String> = differing_fields(m).into_iter().collect();
        assert_eq!(f, ["checkpoint.channel_values[…]", "metadata[…]"]);
        assert!(differing_fields("the saver panicked: boom").is_empty());
        let noted = "get_tuple(..): checkpoint.channel_values[\"a\"] (kept at version 1): expected Some(x), got None";
        assert_eq!(differing_fields(noted).into_iter().collect::<Vec<_>>(), ["checkpoint.channel_values[…]"]);
        assert!(differing_fields("put(thread=, ns=\"\", id=none) of checkpoint X: expected an InvalidConfig error")
            .is_empty());
    }

    #[test]
    fn clusters_are_largest_first_and_a_case_counts_in_each_of_its_fields() {
        let tests = vec![
            failed(Capability::Put, "a", "get_tuple(..): metadata[\"x\"]: expected 1, got nothing"),
            failed(Capability::Put, "b", "get_tuple(..): metadata[\"y\"]: expected 1, got nothing"),
            failed(Capability::Put, "c", "- metadata[\"y\"]: expected 1, got 2\n- parent_config: expected x, got y"),
            failed(Capability::List, "d", "the case panicked: boom"),
        ];
        let c = failure_clusters(&tests);
        assert_eq!((c[0].capability, c[0].field.as_str(), c[0].cases.len()), (Capability::Put, "metadata[…]", 3));
        assert_eq!(c.len(), 3);
        assert!(c.iter().any(|x| x.field == NO_FIELD && x.cases == ["d"]));
    }
}
