//! Unit tests of the comparator (`compare.rs`), in a file of their own to keep it readable.

use super::*;
use crate::data::{jv, metadata, pending, Step};
use conformance_core::CheckpointConfig;
use serde_json::json;
use std::sync::Arc;

fn tuple(step: &Step, parent: Option<&str>, writes: Vec<PendingWrite>) -> CheckpointTuple {
    CheckpointTuple {
        config: CheckpointConfig::new("t").with_id(step.id()),
        checkpoint: Arc::new(step.checkpoint.clone()),
        metadata: step.metadata.clone(),
        parent_config: parent.map(|p| CheckpointConfig::new("t").with_id(p)),
        pending_writes: writes,
    }
}

#[test]
fn equal_values_give_no_difference() {
    let step = Step::new("c1").value("a", json!(1), 1).meta("k", json!([1, 2]));
    let t = tuple(&step, Some("c0"), vec![pending("task", "", "a", jv(json!(1)))]);
    let mut d = Diffs::new();
    let copy = t.clone();
    d.of("x").tuple(&t, &copy).step(&step, &t).tuples(std::slice::from_ref(&t), std::slice::from_ref(&copy));
    assert!(d.is_empty());
    assert_eq!(d.finish(), Ok(()));
}

#[test]
fn a_tuple_comparison_reports_every_differing_field() {
    let want = Step::new("c1").value("a", json!("v1"), 1).value("b", json!(2), 1).meta("tag", json!("second"));
    let got = Step::new("c1").value("a", json!("v2"), 1).keep("b", 1).meta("tag", json!("first"));
    let expected = tuple(&want, Some("p1"), vec![pending("task", "", "w", jv(json!("kept")))]);
    let actual = tuple(&got, Some("p0"), vec![]);
    let mut d = Diffs::new();
    d.of("get_tuple(thread=t, ns=\"\", id=c1)").tuple(&expected, &actual);
    let fields: Vec<&str> = d.differences().iter().map(|x| x.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "parent_config",
            "checkpoint.channel_values[\"a\"]",
            "checkpoint.channel_values[\"b\"]",
            "metadata[\"tag\"]",
            "pending_writes"
        ]
    );
    let message = d.finish().unwrap_err().message;
    assert!(message.starts_with("get_tuple(thread=t, ns=\"\", id=c1): 5 differences:\n  - parent_config: "));
    assert!(message.contains("\n  - metadata[\"tag\"]: expected \"second\", got \"first\""), "{message}");
    assert!(message.contains("checkpoint.channel_values[\"b\"]: expected json:2, got nothing (key missing)"));
    assert!(message.contains("pending_writes: expected [(task, w, json:\"kept\")], got []"), "{message}");
}

#[test]
fn one_difference_is_one_line_and_places_are_kept_apart() {
    let mut d = Diffs::new();
    d.of("get_tuple(c2)").eq("parent_config", &1, &2);
    assert_eq!(d.clone().finish().unwrap_err().message, "get_tuple(c2): parent_config: expected 1, got 2");
    d.of("get_tuple(c1)").push("", "none", "checkpoint c1");
    assert_eq!(
        d.finish().unwrap_err().message,
        "2 differences:\n  get_tuple(c2):\n    - parent_config: expected 1, got 2\n  get_tuple(c1):\n    - expected none, got checkpoint c1"
    );
}

#[test]
fn maps_report_missing_unexpected_and_changed_keys() {
    let want = metadata(json!({"source": "loop", "step": 1, "gone": null}));
    let got = metadata(json!({"source": "loop", "step": 2, "extra": {"a": [1]}}));
    let mut d = Diffs::new();
    d.metadata(&want, &got);
    let lines: Vec<String> = d.differences().iter().map(|x| x.line()).collect();
    assert_eq!(
        lines,
        [
            "metadata[\"gone\"]: expected null, got nothing (key missing)",
            "metadata[\"step\"]: expected 1, got 2",
            "metadata[\"extra\"]: expected nothing (no such key), got {\"a\":[1]}",
        ]
    );
}

#[test]
fn listings_compare_order_and_each_matching_tuple() {
    let s1 = Step::new("c1").meta("n", json!(1));
    let s2 = Step::new("c2").meta("n", json!(2));
    let (t1, t2) = (tuple(&s1, None, vec![]), tuple(&s2, Some("c1"), vec![]));
    let mut changed = t2.clone();
    changed.metadata.insert("n".into(), json!(3));
    let mut d = Diffs::new();
    d.of("list(thread=t, ns=<all>)").tuples(&[t2.clone(), t1.clone()], &[t1, changed]);
    let places: Vec<(&str, &str)> = d.differences().iter().map(|x| (x.place.as_str(), x.field.as_str())).collect();
    assert_eq!(
        places,
        [
            ("list(thread=t, ns=<all>)", "tuples: same 2 elements, wrong order"),
            ("list(thread=t, ns=<all>): tuple (thread=t, ns=\"\", id=c2)", "metadata[\"n\"]"),
        ]
    );
}

/// A list with every element in another order says so, with both lists (issue 19).
#[test]
fn a_wrong_order_with_every_element_there_says_so() {
    let (a, b) = (pending("t1", "", "a", jv(json!(1))), pending("t2", "", "b", jv(json!(2))));
    let mut d = Diffs::new();
    d.of("get_tuple(c1)").writes("pending_writes", &[a.clone(), b.clone()], &[b.clone(), a.clone()]);
    let m = d.finish().unwrap_err().message;
    assert!(m.starts_with("get_tuple(c1): pending_writes: same 2 elements, wrong order: expected [(t1, a, "), "{m}");
    d.writes("pending_writes", &[a.clone(), b.clone()], std::slice::from_ref(&b));
    let m = d.finish().unwrap_err().message;
    assert!(!m.contains("wrong order"), "{m}");
    // A write lost and one that should not be there are named, so a long list need not be
    // diffed by eye.
    assert!(!m.contains("missing"), "two writes read at a glance: {m}");
    let c = pending("t3", "", "c", jv(json!(3)));
    d.writes("pending_writes", &[a.clone(), b.clone(), c.clone()], &[b.clone(), c.clone()]);
    let m = d.finish().unwrap_err().message;
    assert!(m.contains("pending_writes: expected [") && m.ends_with("(missing [(t1, a, json:1)])"), "{m}");
    d.writes("pending_writes", &[a.clone(), b.clone()], &[b.clone(), c.clone(), c]);
    let m = d.finish().unwrap_err().message;
    assert!(m.ends_with("(missing [(t1, a, json:1)]; unexpected [(t3, c, json:3), (t3, c, json:3)])"), "{m}");
    let (s1, s2) = (Step::new("c1"), Step::new("c2"));
    let (t1, t2) = (tuple(&s1, None, vec![]), tuple(&s2, Some("c1"), vec![]));
    d.of("list(thread=t, ns=<all>)").tuples(&[t2.clone(), t1.clone()], &[t1, t2]);
    let m = d.finish().unwrap_err().message;
    assert!(
        m.starts_with("list(thread=t, ns=<all>): tuples: same 2 elements, wrong order: expected [(thread=t"),
        "{m}"
    );
    assert_eq!(order_field("ids", &["x", "x", "y"], &["x", "y", "y"]), "ids");
}

/// What a put stored and a read lacks is "not stored" (issue 19); elsewhere it is missing.
#[test]
fn a_field_put_but_absent_is_not_stored() {
    let want = Step::new("c1").value("a", json!(1), 1).meta("k", json!("v"));
    let got = tuple(&Step::new("c1"), None, vec![]);
    let mut d = Diffs::new();
    d.of("get_tuple(c1)").step(&want, &got);
    let lines: Vec<String> = d.differences().iter().map(|x| x.line()).collect();
    assert!(lines.contains(&"checkpoint.channel_values[\"a\"]: expected json:1, got nothing (not stored)".to_owned()));
    assert!(lines.contains(&"metadata[\"k\"]: expected \"v\", got nothing (not stored)".to_owned()), "{lines:?}");
    let mut d = Diffs::new();
    d.metadata(&want.metadata, &got.metadata);
    assert_eq!(d.differences()[0].got, "nothing (key missing)");
}

#[test]
fn invalid_config_accepts_only_that_error() {
    assert!(expect_invalid_config("put(x)", &Err::<(), _>(CheckpointError::InvalidConfig("e".into()))).is_ok());
    let m = expect_invalid_config("put(x)", &Ok::<_, CheckpointError>(1)).unwrap_err().message;
    assert_eq!(m, "put(x): expected an InvalidConfig error, got Ok(1)");
    let m = expect_invalid_config("put(x)", &Err::<(), _>(CheckpointError::InvalidInput("bad".into())))
        .unwrap_err()
        .message;
    assert!(m.starts_with("put(x): expected an InvalidConfig error, got error "), "{m}");
}

#[test]
fn a_spawned_task_judges_task_path_as_its_case_does() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (spawned, bare) = rt.block_on(judging_task_path(false, async {
        let spawned = spawn(async { task_path_compared() }).await.unwrap();
        let bare = tokio::spawn(async { task_path_compared() }).await.unwrap();
        (spawned, bare)
    }));
    assert!(!spawned, "a task spawned by compare::spawn inside a case without task_path compared it");
    assert!(bare, "tokio::spawn now inherits the task-local: compare::spawn is no longer needed");
    assert!(
        rt.block_on(async { spawn(async { task_path_compared() }).await.unwrap() }),
        "outside a case the field is compared"
    );
}

#[test]
fn a_listed_config_naming_another_checkpoint_is_named_so() {
    let (s1, s2) = (Step::new("c1"), Step::new("c2"));
    let (t1, mut t2) = (tuple(&s1, None, vec![]), tuple(&s2, Some("c1"), vec![]));
    let mut d = Diffs::new();
    d.of("list(thread=t, ns=<all>)").configs_match(&[t2.clone(), t1.clone()]);
    assert!(d.is_empty());
    t2.config = t2.config.clone().with_id("c1");
    d.configs_match(&[t2, t1]);
    let found: Vec<String> = d.differences().iter().map(|x| format!("{}: {}", x.field, x.got)).collect();
    assert_eq!(found, ["tuples[0].config: config names c1, checkpoint is c2"]);
}

/// CONTRACT §5 "Declared limits": on a saver that lacks `updated_channels` the field is
/// left out of checkpoint comparisons (in spawned tasks too); every other field still counts.
#[test]
fn updated_channels_are_left_out_only_for_a_saver_lacking_them() {
    let want = Step::new("c1").value("a", json!(1), 1).with(|c| c.updated_channels = Some(vec!["a".into()]));
    let got = Step::new("c1").value("a", json!(2), 1);
    let fields = |d: &Diffs| d.differences().iter().map(|x| x.field.clone()).collect::<Vec<_>>();
    let mut d = Diffs::new();
    d.checkpoint(&want.checkpoint, &got.checkpoint);
    assert_eq!(fields(&d), ["checkpoint.channel_values[\"a\"]", "checkpoint.updated_channels"]);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let lacking = BTreeSet::from([Feature::UpdatedChannels]);
    let (here, spawned, writes_path) = rt.block_on(judging(lacking, async {
        let mut d = Diffs::new();
        d.checkpoint(&want.checkpoint, &got.checkpoint);
        let (w, g) = (want.checkpoint.clone(), got.checkpoint.clone());
        let spawned = spawn(async move { fields(Diffs::new().checkpoint(&w, &g)) }).await.unwrap();
        (fields(&d), spawned, task_path_compared())
    }));
    assert_eq!(here, ["checkpoint.channel_values[\"a\"]"]);
    assert_eq!(spawned, here, "a spawned task compares as its case does");
    assert!(writes_path, "lacking updated_channels leaves task_path compared");
}

fn in_ns(step: &Step, ns: &str, parent: Option<&str>, writes: Vec<PendingWrite>) -> CheckpointTuple {
    let mut t = tuple(step, parent, writes);
    t.config.checkpoint_ns = ns.to_owned();
    if let Some(p) = t.parent_config.as_mut() {
        p.checkpoint_ns = ns.to_owned();
    }
    t
}

/// Issue 35, false failure 9: a listing whose first tuple differs in id (its config names
/// another checkpoint) is still compared tuple by tuple, each matched by namespace and id:
/// the first tuple's config is named, and a later tuple's lost pending writes still show.
/// And when no listed config names its checkpoint at all (a saver that puts the id in the
/// checkpoint only), the pending writes are still compared.
#[test]
fn a_listing_reports_every_tuples_differences_after_a_first_id_mismatch() {
    let (s3, s2, s1) = (Step::new("c3"), Step::new("c2").meta("n", json!(2)), Step::new("c1"));
    let w = vec![pending("task", "", "a", jv(json!("w")))];
    let expected = [tuple(&s3, Some("c2"), vec![]), tuple(&s2, Some("c1"), w.clone()), tuple(&s1, None, vec![])];
    let mut got = expected.clone();
    got[0].config.checkpoint_id = Some("c9".into());
    got[1].pending_writes.clear();
    let mut d = Diffs::new();
    d.of("list(thread=t, ns=<all>)").tuples(&expected, &got);
    let m = d.finish().unwrap_err().message;
    assert!(
        m.contains("tuples[0].config: expected the checkpoint's id c3, got config names c9, checkpoint is c3"),
        "{m}"
    );
    assert!(m.contains("tuple (thread=t, ns=\"\", id=c3):\n    - config: expected (thread=t, ns=\"\", id=c3), got (thread=t, ns=\"\", id=c9)"), "{m}");
    assert!(
        m.contains("tuple (thread=t, ns=\"\", id=c2):\n    - pending_writes: expected [(task, a, json:\"w\")], got []"),
        "{m}"
    );
    assert!(!m.contains("not listed"), "every checkpoint is listed: {m}");

    for t in &mut got {
        t.config.checkpoint_id = None;
    }
    d.tuples(&expected, &got);
    let fields: Vec<(String, String)> = d.differences().iter().map(|x| (x.place.clone(), x.field.clone())).collect();
    assert!(
        fields
            .contains(&("list(thread=t, ns=<all>): tuple (thread=t, ns=\"\", id=c2)".into(), "pending_writes".into())),
        "{fields:?}"
    );
}

/// A missing, an extra and a duplicated tuple are one difference each, named by namespace
/// and id; tuples of other namespaces may interleave in any order (the MUST rule), but not
/// change their order within one namespace.
#[test]
fn a_listing_names_each_missing_extra_and_misplaced_tuple() {
    let (a, b, c, x) = (Step::new("c3"), Step::new("c2"), Step::new("c1"), Step::new("c9"));
    let expected = [in_ns(&a, "", None, vec![]), in_ns(&b, "k", None, vec![]), in_ns(&c, "", None, vec![])];
    // Namespace "k" first: the same listing under the MUST order.
    let interleaved = [expected[1].clone(), expected[0].clone(), expected[2].clone()];
    let mut d = Diffs::new();
    d.of("list(t)").tuples(&expected, &interleaved);
    assert!(d.is_empty(), "{:?}", d.differences());
    let shown: Vec<Entry> = expected.iter().map(entry_of).collect();
    let got: Vec<Entry> = interleaved.iter().map(entry_of).collect();
    d.entries("(ns, id)", &shown, &got, Order::Global, None);
    assert_eq!(d.differences().len(), 1, "the SHOULD order sees it: {:?}", d.differences());
    assert!(d.differences()[0].field.contains("same 3 elements, wrong order"));
    d.finish().unwrap_err();

    let got = [expected[2].clone(), in_ns(&x, "", None, vec![]), expected[1].clone(), expected[1].clone()];
    d.of("list(t)").tuples(&expected, &got);
    let lines: Vec<String> =
        d.differences().iter().map(|x| format!("{}: {} / {}", x.field, x.expected, x.got)).collect();
    assert!(lines.contains(&"tuple (thread=t, ns=\"\", id=c3): listed / not listed".to_owned()), "{lines:?}");
    assert!(lines.contains(&"tuple (thread=t, ns=\"\", id=c9): not listed / listed".to_owned()), "{lines:?}");
    assert!(
        lines.contains(&"tuple (thread=t, ns=\"k\", id=c2): listed 1 time(s) / listed 2 times".to_owned()),
        "{lines:?}"
    );
    d.finish().unwrap_err();

    let swapped = [in_ns(&c, "", None, vec![]), in_ns(&b, "k", None, vec![]), in_ns(&a, "", None, vec![])];
    d.tuples(&expected, &swapped);
    let fields: Vec<&str> = d.differences().iter().map(|x| x.field.as_str()).collect();
    assert_eq!(fields, ["tuples: same 3 elements, wrong order", "order in namespace \"\""]);
}

/// Issue 36, reporting: a listing of 20 tuples, the first naming another checkpoint in its
/// config and every one with a changed metadata value, names each differing tuple by its
/// checkpoint id with its field, expected and actual, for the first [`MAX_PLACES`] places,
/// then one line counting and naming the rest; a place with more than [`MAX_LINES`]
/// differences shows the first ones and "and K more".
#[test]
fn a_listing_names_every_differing_tuple_with_a_capped_message() {
    let steps: Vec<Step> = (0..20).rev().map(|i| Step::new(&format!("c{i:02}")).meta("n", json!(i))).collect();
    let expected: Vec<CheckpointTuple> = steps.iter().map(|s| tuple(s, None, vec![])).collect();
    let mut got = expected.clone();
    got[0].config.checkpoint_id = Some("c99".into());
    for t in &mut got {
        t.metadata.insert("n".into(), json!("changed"));
    }
    let mut d = Diffs::new();
    d.of("list(thread=t, ns=<all>)").tuples(&expected, &got);
    let m = d.finish().unwrap_err().message;
    assert!(m.starts_with("22 differences:"), "{m}");
    assert!(m.contains("tuples[0].config: expected the checkpoint's id c19, got config names c99"), "{m}");
    assert!(
        m.contains("list(thread=t, ns=<all>): tuple (thread=t, ns=\"\", id=c19):\n    - config: expected (thread=t, ns=\"\", id=c19), got (thread=t, ns=\"\", id=c99)\n    - metadata[\"n\"]: expected 19, got \"changed\""),
        "{m}"
    );
    // The listing's own place, then 11 tuples in full (c19 .. c09), then the other 9 counted.
    for i in (9..19).rev() {
        let place =
            format!("tuple (thread=t, ns=\"\", id=c{i:02}):\n    - metadata[\"n\"]: expected {i}, got \"changed\"");
        assert!(m.contains(&place), "c{i:02} in full: {m}");
    }
    assert!(!m.contains("expected 8, got"), "c08 is counted, not written out: {m}");
    assert!(m.contains("\n  and 9 more places with 9 differences: list(thread=t, ns=<all>): tuple (thread=t, ns=\"\", id=c08); tuple (thread=t, ns=\"\", id=c07); "), "{m}");
    assert!(m.contains("id=c00)"), "the last one is named: {m}");

    let mut d = Diffs::new();
    for i in 0..25 {
        d.of("get_tuple(t)").eq(format_args!("metadata[\"k{i:02}\"]"), &1, &2);
    }
    let m = d.finish().unwrap_err().message;
    assert!(m.contains("- metadata[\"k19\"]: expected 1, got 2\n  - and 5 more"), "{m}");
    assert!(!m.contains("k20"), "{m}");
}

/// A listing of another length leads with the count ("expected 4 tuple(s), got 13"), its
/// sequences cut to their start; each extra tuple still has its own line.
#[test]
fn a_listing_of_another_length_leads_with_the_count() {
    let steps: Vec<Step> = (0..13).map(|i| Step::new(&format!("c{:02}", 20 - i))).collect();
    let all: Vec<CheckpointTuple> = steps.iter().map(|s| in_ns(s, "", None, vec![])).collect();
    let mut d = Diffs::new();
    d.of("list(t, limit=4)").tuples(&all[..4], &all);
    let first = &d.differences()[0];
    assert_eq!(first.field, "tuples: expected 4 tuple(s), got 13");
    assert!(first.got.ends_with("… and 7 more]"), "{}", first.got);
    assert!(!first.expected.contains("more"), "{}", first.expected);
    assert_eq!(d.differences().len(), 1 + 9, "{:?}", d.differences());
    d.finish().unwrap_err();
}
