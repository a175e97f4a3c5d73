//! `list`'s metadata `filter` (CONTRACT §2 list, "filter"): which keys and values match,
//! JSON equality by kind, and the thread scope of a filtered list. The cases are listed,
//! with the rest of `list`'s, in the parent module's `cases()`.

use conformance_core::{Failure, ListOptions};
use serde_json::{json, Value};

use super::{list_data, put_unchained};
use crate::calls::Cx;
use crate::compare::Checked;
use crate::data::{json_object, metadata, Ids};

/// A filter with the given entries (a JSON object).
pub(super) fn filter(value: Value) -> ListOptions {
    ListOptions { filter: json_object(value), ..ListOptions::default() }
}

/// S07: a single-key filter returns exactly the matching checkpoints, newest first.
pub(super) async fn filter_single_key(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input"})), &["c2", "c0"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "loop"})), &["c3", "c1"]).await
}

/// An integer filter value matches that step only; `0` is a value like any other.
pub(super) async fn filter_integer_value(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &filter(json!({"step": 1})), &["c1"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"step": 0})), &["c0"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"step": -1})), &[]).await
}

/// Every filter key must match (AND, never OR).
pub(super) async fn filter_all_keys_must_match(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["a", "b", "c"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("a", json!({"source": "input", "step": 1})),
            ("b", json!({"source": "loop", "step": 1})),
            ("c", json!({"source": "input", "step": 2})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input", "step": 2})), &["c"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input", "step": 1})), &["a"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "loop", "step": 2})), &[]).await
}

/// A filter nothing matches returns nothing, also when some of its keys do match.
pub(super) async fn filter_without_match_returns_nothing(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = list_data(&cx, &t).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "update", "step": 99})), &[]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "input", "step": 99})), &[]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "update", "step": 1})), &[]).await
}

/// Keys outside the well-known ones filter like any other, and the listed metadata
/// carries every key as stored.
pub(super) async fn filter_custom_keys(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["a", "b"]);
    let meta_a = json!({"source": "loop", "step": 0, "score": 42, "run_id": "run-abc"});
    let meta_b = json!({"source": "loop", "step": 0, "score": 99, "run_id": "run-xyz"});
    put_unchained(&cx, &ids, &t, &[("a", meta_a.clone()), ("b", meta_b)]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"score": 42})), &["a"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"run_id": "run-xyz"})), &["b"]).await?;
    let got = cx.list(&t, &filter(json!({"score": 42}))).await?;
    let want = metadata(meta_a);
    match got.first() {
        Some(tuple) => {
            got.diffs().of(format_args!("{got}: tuple a ({})", tuple.config)).metadata(&want, &tuple.metadata).finish()
        }
        None => Err(Failure::new(format!("{got}: expected a, got nothing"))),
    }
}

/// A filter applies within the thread: matching checkpoints of another thread never
/// come back.
pub(super) async fn filter_scoped_to_thread(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = list_data(&cx, &t).await?;
    let other = Ids::new(&["u0", "u1"]);
    put_unchained(&cx, &other, &u, &[("u0", json!({"source": "loop"})), ("u1", json!({"source": "input"}))]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"source": "loop"})), &["c3", "c1"]).await?;
    cx.expect_list(&other, &u, &filter(json!({"source": "loop"})), &["u0"]).await
}

/// Numbers compare by value, among those a JavaScript number holds: 1, 2, 1.5 and 2^53 - 1,
/// which 2^53 - 2 does not match. With `1.0` apart from 1 and beyond 2^53:
/// [`filter_wide_numbers_by_value`].
pub(super) async fn filter_numbers_by_value(cx: Cx) -> Checked {
    filter_numbers(cx, false).await
}

/// Numbers compare by value: 1 matches 1.0 and 1.0 matches 1; 2 matches neither. The
/// comparison is exact, not through `f64`: 2^53 + 1 does not match the float 2^53 (the
/// fuzzer found a saver and the model saying `i64::MAX` matched `9.223372036854776e18`).
/// Not run on a saver lacking [`conformance_core::Feature::WideNumbers`] (its capability is then incomplete:
/// the rule is MUST, CONTRACT §5 "Declared limits").
pub(super) async fn filter_wide_numbers_by_value(cx: Cx) -> Checked {
    filter_numbers(cx, true).await
}

/// [`filter_numbers_by_value`], with the numbers beyond a JavaScript number's when `wide`.
async fn filter_numbers(cx: Cx, wide: bool) -> Checked {
    let t = cx.thread("main");
    if !wide {
        let max = (1_i64 << 53) - 1;
        let ids = Ids::new(&["int", "two", "half", "big"]);
        let data = [
            ("int", json!({"n": 1})),
            ("two", json!({"n": 2})),
            ("half", json!({"n": 1.5})),
            ("big", json!({"n": max})),
        ];
        put_unchained(&cx, &ids, &t, &data).await?;
        cx.expect_list(&ids, &t, &filter(json!({"n": 1})), &["int"]).await?;
        cx.expect_list(&ids, &t, &filter(json!({"n": 1.5})), &["half"]).await?;
        cx.expect_list(&ids, &t, &filter(json!({"n": max})), &["big"]).await?;
        return cx.expect_list(&ids, &t, &filter(json!({"n": max - 1})), &[]).await;
    }
    let ids = Ids::new(&["int", "float", "two", "half", "big"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("int", json!({"n": 1})),
            ("float", json!({"n": 1.0})),
            ("two", json!({"n": 2})),
            ("half", json!({"n": 1.5})),
            ("big", json!({"n": 9_007_199_254_740_993_u64})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"n": 1})), &["float", "int"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"n": 1.0})), &["float", "int"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"n": 1.5})), &["half"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"n": 9_007_199_254_740_993_u64})), &["big"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"n": 9_007_199_254_740_992.0})), &[]).await
}

/// Booleans never equal numbers: `true` is not 1, `false` is not 0.
pub(super) async fn filter_booleans_never_equal_numbers(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["yes", "one", "no", "zero"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("yes", json!({"f": true})),
            ("one", json!({"f": 1})),
            ("no", json!({"f": false})),
            ("zero", json!({"f": 0})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"f": true})), &["yes"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"f": 1})), &["one"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"f": false})), &["no"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"f": 0})), &["zero"]).await
}

/// Strings match exactly: no case folding, no trimming, no prefix match, no pattern
/// characters, and the string "1" is not the number 1.
pub(super) async fn filter_strings_exact(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["exact", "upper", "space", "prefix", "longer", "num", "numstr", "pct"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("exact", json!({"s": "acme"})),
            ("upper", json!({"s": "Acme"})),
            ("space", json!({"s": "acme "})),
            ("prefix", json!({"s": "acm"})),
            ("longer", json!({"s": "acme-corp"})),
            ("num", json!({"s": 1})),
            ("numstr", json!({"s": "1"})),
            ("pct", json!({"s": "ac%"})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"s": "acme"})), &["exact"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"s": "1"})), &["numstr"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"s": "ac%"})), &["pct"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"s": "ac_e"})), &[]).await
}

/// A null filter value matches a missing key or a null, and nothing else (not `false`,
/// `0`, `""` or an empty object).
pub(super) async fn filter_null_matches_missing_or_null(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["null", "missing", "text", "zero", "false", "empty", "object"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("null", json!({"k": null})),
            ("missing", json!({"other": 1})),
            ("text", json!({"k": "x"})),
            ("zero", json!({"k": 0})),
            ("false", json!({"k": false})),
            ("empty", json!({"k": ""})),
            ("object", json!({"k": {}})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": null})), &["missing", "null"]).await
}

/// Nested object and array values match by JSON equality: a subset or superset object
/// does not match, array order and length matter.
pub(super) async fn filter_nested_values_by_json_equality(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["obj", "subset", "superset", "arr", "reversed", "shorter", "nested"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[
            ("obj", json!({"o": {"x": 1, "y": [1, 2]}})),
            ("subset", json!({"o": {"x": 1}})),
            ("superset", json!({"o": {"x": 1, "y": [1, 2], "z": 3}})),
            ("arr", json!({"a": ["p", "q"]})),
            ("reversed", json!({"a": ["q", "p"]})),
            ("shorter", json!({"a": ["p"]})),
            ("nested", json!({"a": ["p", "q", {"r": null}]})),
        ],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({"o": {"x": 1, "y": [1, 2]}})), &["obj"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"o": {"x": 1}})), &["subset"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"a": ["p", "q"]})), &["arr"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"a": ["p", "q", {"r": null}]})), &["nested"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"a": "p"})), &[]).await
}

/// An empty filter matches everything, whatever the metadata carries besides LangGraph's
/// keys (nothing, other well-known values, a null custom key).
pub(super) async fn empty_filter_matches_everything(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["plain", "full", "nulls"]);
    put_unchained(
        &cx,
        &ids,
        &t,
        &[("plain", json!({})), ("full", json!({"source": "input", "step": -1})), ("nulls", json!({"k": null}))],
    )
    .await?;
    cx.expect_list(&ids, &t, &filter(json!({})), &["nulls", "full", "plain"]).await
}

/// A key missing from the metadata never matches a non-null filter value.
pub(super) async fn filter_missing_key_never_matches_value(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["has", "lacks"]);
    put_unchained(&cx, &ids, &t, &[("has", json!({"k": "x"})), ("lacks", json!({"source": "loop"}))]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": "x"})), &["has"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": false})), &[]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": 0})), &[]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": ""})), &[]).await
}

/// A filter key names a top-level metadata key literally: `a.b` is the key "a.b", not a
/// path into `a`, and a key nested inside a value is not matched at top level.
pub(super) async fn filter_key_is_top_level_literal(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["dotted", "nested"]);
    put_unchained(&cx, &ids, &t, &[("dotted", json!({"a.b": 1})), ("nested", json!({"a": {"b": 1}, "o": {"k": "v"}}))])
        .await?;
    cx.expect_list(&ids, &t, &filter(json!({"a.b": 1})), &["dotted"]).await?;
    cx.expect_list(&ids, &t, &filter(json!({"k": "v"})), &[]).await
}
