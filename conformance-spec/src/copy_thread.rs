//! `copy_thread` (CONTRACT §3): copies every checkpoint of every namespace of the source
//! thread to the target with the same ids, metadata, values, versions and writes (task ids,
//! task paths, indexes); configs and parent configs in the copy name the target; the source
//! is unchanged; copying twice equals copying once; a missing source leaves the target
//! untouched.
//!
//! The expected copy is the source as the saver reads it back, with the thread of each
//! config and parent config replaced by the target (see `retarget`); cases that matter
//! most also spell the expected values and writes out by hand.

use conformance_core::{Capability, ChannelVersion, CheckpointConfig, CheckpointTuple, ListOptions, TypedValue};
use conformance_core::{ERROR, INTERRUPT, RESUME, SCHEDULED};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{Checked, Diffs};
use crate::data::{id_of, jv, metadata, pending, values, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::CopyThread, needs [Put, PutWrites, GetTuple] => [
        #[rules(copy_thread.copies)] target_lists_copied_checkpoints +[List] -[PutWrites, GetTuple] ["test_copy_thread_basic"],
        #[rules(copy_thread.copies)] copies_each_checkpoint_exactly ["test_copy_thread_all_checkpoints"],
        #[rules(copy_thread.copies)] copies_metadata_exactly -[PutWrites] ["test_copy_thread_preserves_metadata"],
        #[rules(copy_thread.copies)] #[uses(Namespaces)] copies_every_namespace +[List] -[GetTuple] ["test_copy_thread_preserves_namespaces"],
        #[rules(copy_thread.copies)] copies_writes ["test_copy_thread_preserves_writes"],
        #[rules(copy_thread.copies)] keeps_id_order +[List] -[PutWrites] ["test_copy_thread_preserves_ordering"],
        #[rules(copy_thread.source_unchanged)] leaves_source_unchanged +[List] -[GetTuple] ["test_copy_thread_source_unchanged"],
        #[rules(copy_thread.missing_source, extended.noop_inputs)] missing_source_leaves_target_empty +[List] -[Put, PutWrites] ["test_copy_thread_nonexistent_source"],
        #[rules(copy_thread.target_configs)] configs_name_target_thread +[List] -[PutWrites],
        #[rules(copy_thread.copies)] copies_writes_of_every_checkpoint,
        #[rules(copy_thread.copies)] copied_writes_keep_their_indexes,
        #[rules(copy_thread.copies)] copies_values_stored_by_older_checkpoints +[List] -[PutWrites],
        #[rules(copy_thread.copies, value.bytes, version.kind)] copies_opaque_values_and_string_versions,
        #[rules(copy_thread.twice)] copying_twice_equals_once +[List],
        #[rules(copy_thread.missing_source)] missing_source_keeps_existing_target +[List] -[GetTuple],
        #[rules(copy_thread.source_unchanged)] copy_is_independent_of_source +[List, DeleteThread] -[GetTuple],
        #[rules(copy_thread.copies, put.kept_values)] #[should] target_continues_from_copied_values +[List] -[PutWrites],
        #[rules(copy_thread.copies, copy_thread.target_configs)] #[uses(Namespaces)] scenario_s16_copy_keeps_lineage_writes_and_namespaces +[List],
        #[rules(copy_thread.onto_existing)] fuzz_copy_replaces_target_writes_with_none +[List] -[GetTuple],
    ])
}

/// `config` (of the source) as it is named on `target`: the same namespace and id.
fn copied(target: &str, config: &CheckpointConfig) -> CheckpointConfig {
    CheckpointConfig { thread_id: target.to_owned(), ..config.clone() }
}

/// `tuple` as it should read on `thread`: the same checkpoint with the thread of its config
/// and parent config replaced.
fn retarget(tuple: &CheckpointTuple, thread: &str) -> CheckpointTuple {
    let mut t = tuple.clone();
    t.config.thread_id = thread.to_owned();
    if let Some(p) = t.parent_config.as_mut() {
        p.thread_id = thread.to_owned();
    }
    t
}

/// Fails unless `list(target, ns=<all>)` is exactly `list(source, ns=<all>)` retargeted:
/// the same tuples in the same order, each with equal config, parent config, checkpoint,
/// metadata and pending writes.
async fn expect_copy_of(cx: &Cx, source: &str, target: &str) -> Checked {
    let want: Vec<CheckpointTuple> = cx.list_all(source).await?.iter().map(|t| retarget(t, target)).collect();
    cx.expect_listed(target, &want).await
}

/// 3 checkpoints on the source: the target lists the same 3 ids.
async fn target_lists_copied_checkpoints(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 3).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    after.expect_ids(&d, &ListOptions::all(), &[id_of(&c[2]), id_of(&c[1]), id_of(&c[0])]).await
}

/// Each copied checkpoint reads exactly like its source (values, versions, metadata,
/// writes), under the target thread, through `get_tuple` by id.
async fn copies_each_checkpoint_exactly(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 3).await?;
    cx.put_writes(&c[1], vec![("step", jv(json!("w")))], "task-1", "").await?;
    let mut before = Vec::new();
    for cfg in &c {
        before.push(cx.get_some(cfg).await?);
    }
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    for (cfg, src) in c.iter().zip(&before) {
        after.expect_tuple(&copied(&d, cfg), &retarget(src, &d)).await?;
    }
    Ok(())
}

/// Metadata with every JSON kind (nested, null, float, bool, Unicode, `parents`, `run_id`)
/// is copied exactly.
async fn copies_metadata_exactly(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let meta = metadata(json!({
        "source": "update", "step": 3, "parents": {"": "p-1", "child:1": "p-2"}, "run_id": "run-7",
        "score": 1.5, "flag": true, "none": null, "nested": {"a": [1, "two", {"three": 3.25}]},
        "unicode": "h\u{e9}llo \u{2713} \u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{1f389}"
    }));
    let c1 = cx.put(&CheckpointConfig::new(&s), Step::fresh().metadata(meta.clone())).await?;
    let c2 = cx.put(&c1, Step::fresh().meta("step", json!(4))).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    let mut diffs = Diffs::new();
    let got = after.get_some(&copied(&d, &c1)).await?;
    diffs.of(&got).metadata(&meta, &got.metadata);
    let got = after.get_some(&copied(&d, &c2)).await?;
    diffs.of(&got).metadata_key("step", &json!(4), &got.metadata);
    diffs.finish()
}

/// Checkpoints (with writes) in "", "child:1" and a nested namespace are all copied, each
/// to its own namespace, and the whole listing matches the source.
async fn copies_every_namespace(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let mut per_ns = Vec::new();
    for ns in ["", "child:1", "outer:1|inner:2"] {
        let c = cx.value_chain(&s, ns, 2).await?;
        cx.put_writes(&c[0], vec![("ch", jv(json!(format!("write in {ns:?}"))))], "task-1", "").await?;
        per_ns.push((ns, c));
    }
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    for (ns, c) in &per_ns {
        after.expect_ids(&d, &ListOptions::all().ns(*ns), &[id_of(&c[1]), id_of(&c[0])]).await?;
    }
    expect_copy_of(&after, &s, &d).await
}

/// A checkpoint with one write: the copy has exactly that write (task id, task path,
/// channel, value).
async fn copies_writes(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 1).await?;
    cx.put_writes(&c[0], vec![("ch", jv(json!("write_val")))], "task-1", "~p").await?;
    cx.copy_thread(&s, &d).await?;
    let want = [pending("task-1", "~p", "ch", jv(json!("write_val")))];
    cx.after(format!("after copy_thread({s}, {d})")).expect_writes(&copied(&d, &c[0]), &want).await
}

/// 4 checkpoints: the target lists the same ids newest first, and its latest is the
/// source's latest.
async fn keeps_id_order(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 4).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    let want: Vec<&str> = c.iter().rev().map(id_of).collect();
    after.expect_ids(&d, &ListOptions::all(), &want).await?;
    let latest = after.get_some(&CheckpointConfig::new(&d)).await?;
    latest.expect_eq("config.checkpoint_id", &c[3].checkpoint_id, &latest.config.checkpoint_id)
}

/// The source (writes included) and an unrelated thread read exactly the same after the
/// copy.
async fn leaves_source_unchanged(cx: Cx) -> Checked {
    let (s, d, other) = (cx.thread("src"), cx.thread("dst"), cx.thread("other"));
    let c = cx.value_chain(&s, "", 2).await?;
    cx.put_writes(&c[1], vec![("ch", jv(json!(1))), (ERROR, jv(json!("e")))], "task-1", "").await?;
    cx.value_chain(&other, "", 1).await?;
    let src_before = cx.list_all(&s).await?;
    let other_before = cx.list_all(&other).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    after.expect_listed(&s, &src_before).await?;
    after.expect_listed(&other, &other_before).await
}

/// Copying a thread that does not exist returns Ok (unknown inputs are no-ops, CONTRACT §3)
/// and the target stays empty in every namespace.
async fn missing_source_leaves_target_empty(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("missing"), cx.thread("dst"));
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    after.expect_ids(&d, &ListOptions::all(), &[]).await?;
    after.get_none(&CheckpointConfig::new(&d)).await
}

/// Every config and parent config of the copy, through `list` and `get_tuple`, names the
/// target thread and the source namespace (a child namespace's are compared whole by
/// [`copies_every_namespace`]).
async fn configs_name_target_thread(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 2).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    let mut diffs = Diffs::new();
    let got = after.get_some(&copied(&d, &c[1])).await?;
    diffs
        .of(&got)
        .config(&copied(&d, &c[1]), &got.config)
        .parent_config(Some(&copied(&d, &c[0])), got.parent_config.as_ref());
    let first = after.get_some(&copied(&d, &c[0])).await?;
    diffs.of(&first).parent_config(None, first.parent_config.as_ref());
    let listed = after.list_all(&d).await?;
    for t in listed.iter() {
        diffs.of(format_args!("{listed}: tuple ({})", t.config)).eq("config.thread_id", &d, &t.config.thread_id);
        if let Some(p) = &t.parent_config {
            diffs.eq("parent_config.thread_id", &d, &p.thread_id).eq(
                "parent_config.checkpoint_ns",
                &t.config.checkpoint_ns,
                &p.checkpoint_ns,
            );
        }
    }
    diffs.finish()
}

/// Writes on every checkpoint (not only the latest), of several tasks with task paths, with
/// all four special channels, are copied with their order (task_path, task_id, index).
async fn copies_writes_of_every_checkpoint(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 3).await?;
    cx.put_writes(&c[0], vec![("a", jv(json!("c1-b"))), ("b", jv(json!("c1-b2")))], "task-b", "~1").await?;
    cx.put_writes(&c[0], vec![("a", jv(json!("c1-a")))], "task-a", "~2").await?;
    cx.put_writes(&c[1], vec![(ERROR, jv(json!("boom"))), (SCHEDULED, jv(json!("s")))], "task-z", "").await?;
    cx.put_writes(
        &c[1],
        vec![(INTERRUPT, jv(json!("q"))), (RESUME, jv(json!("r"))), ("a", jv(json!(1)))],
        "task-y",
        "",
    )
    .await?;
    cx.put_writes(&c[2], vec![("a", jv(json!("latest")))], "task-1", "").await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    let c1 = [
        pending("task-b", "~1", "a", jv(json!("c1-b"))),
        pending("task-b", "~1", "b", jv(json!("c1-b2"))),
        pending("task-a", "~2", "a", jv(json!("c1-a"))),
    ];
    after.expect_writes(&copied(&d, &c[0]), &c1).await?;
    let c2 = [
        pending("task-y", "", RESUME, jv(json!("r"))),
        pending("task-y", "", INTERRUPT, jv(json!("q"))),
        pending("task-y", "", "a", jv(json!(1))),
        pending("task-z", "", SCHEDULED, jv(json!("s"))),
        pending("task-z", "", ERROR, jv(json!("boom"))),
    ];
    after.expect_writes(&copied(&d, &c[1]), &c2).await?;
    after.expect_writes(&copied(&d, &c[2]), &[pending("task-1", "", "a", jv(json!("latest")))]).await
}

/// A copied write keeps its index: one call `[__interrupt__, b]` stores `b` at index 1 and
/// nothing at 0. On the copy, a later regular write at index 0 is added (not dropped as a
/// repeat) and a later `__interrupt__` replaces the copied one (last wins), so the stored
/// keys were copied, not renumbered. The source does not see these writes.
async fn copied_writes_keep_their_indexes(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 1).await?;
    cx.put_writes(&c[0], vec![(INTERRUPT, jv(json!("q1"))), ("b", jv(json!("b-orig")))], "task-1", "").await?;
    cx.copy_thread(&s, &d).await?;
    let dc = copied(&d, &c[0]);
    cx.put_writes(&dc, vec![("x", jv(json!("x-late"))), ("b", jv(json!("b-retry")))], "task-1", "").await?;
    cx.put_writes(&dc, vec![(INTERRUPT, jv(json!("q2")))], "task-1", "").await?;
    let after = cx.after(format!("after copy_thread({s}, {d}) and two more put_writes on the copy"));
    let want = [
        pending("task-1", "", INTERRUPT, jv(json!("q2"))),
        pending("task-1", "", "x", jv(json!("x-late"))),
        pending("task-1", "", "b", jv(json!("b-orig"))),
    ];
    after.expect_writes(&dc, &want).await?;
    let src = [pending("task-1", "", INTERRUPT, jv(json!("q1"))), pending("task-1", "", "b", jv(json!("b-orig")))];
    after.expect_writes(&c[0], &src).await
}

/// c1 stores `a`; c2 carries `a` at its unchanged version and stores `b`; c3 carries both
/// and stores `c` (as LangGraph's runtime puts them). Each copied checkpoint reads every
/// value it read on the source, including those a saver may have stored only once, with
/// the older checkpoint that first carried them (CONTRACT §2 put: it may skip a value
/// already stored at that version).
async fn copies_values_stored_by_older_checkpoints(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c1 = cx.put(&CheckpointConfig::new(&s), Step::fresh().value("a", json!("a@1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!("a@1"), 1).value("b", json!("b@1"), 1)).await?;
    let c3 = cx
        .put(&c2, Step::fresh().carry("a", json!("a@1"), 1).carry("b", json!("b@1"), 1).value("c", json!("c@1"), 1))
        .await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d})"));
    let got = after.get_some(&copied(&d, &c3)).await?;
    let want = values(&[("a", jv(json!("a@1"))), ("b", jv(json!("b@1"))), ("c", jv(json!("c@1")))]);
    got.diffs().map("checkpoint.channel_values", &want, &got.checkpoint.channel_values).finish()?;
    expect_copy_of(&after, &s, &d).await
}

/// Opaque values (non-UTF-8 bytes, empty bytes, a custom type tag), string versions, an
/// empty `ts`, `versions_seen` and an empty `updated_channels` are copied exactly.
async fn copies_opaque_values_and_string_versions(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let v1 = ChannelVersion::Str(format!("{:032}.5", 1));
    let v2 = ChannelVersion::Str(format!("{:032}.25", 2));
    let step = Step::fresh()
        .typed("bin", TypedValue::bytes(vec![0u8, 159, 146, 150, 255]), v1.clone())
        .typed("empty", TypedValue::new("bytes", Vec::new()), v2.clone())
        .typed("custom", TypedValue::new("msgpack", vec![0x93, 1, 2, 3]), 7)
        .seen("node", "bin", v1)
        .with(|c| {
            c.ts = String::new();
            c.updated_channels = Some(Vec::new());
        });
    let c1 = cx.put(&CheckpointConfig::new(&s), step).await?;
    cx.put_writes(&c1, vec![("bin", TypedValue::bytes(vec![0u8, 0, 1]))], "task-1", "").await?;
    let before = cx.get_some(&c1).await?;
    cx.copy_thread(&s, &d).await?;
    cx.after(format!("after copy_thread({s}, {d})")).expect_tuple(&copied(&d, &c1), &retarget(&before, &d)).await
}

/// Copying the same source twice leaves the target exactly as after one copy: the same
/// checkpoints, and each write once, not twice.
async fn copying_twice_equals_once(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c = cx.value_chain(&s, "", 2).await?;
    cx.put_writes(&c[1], vec![("ch", jv(json!("once"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.copy_thread(&s, &d).await?;
    let once = cx.list_all(&d).await?;
    cx.copy_thread(&s, &d).await?;
    let after = cx.after(format!("after copy_thread({s}, {d}) twice"));
    let want = [pending("task-1", "", INTERRUPT, jv(json!("q"))), pending("task-1", "", "ch", jv(json!("once")))];
    after.expect_writes(&copied(&d, &c[1]), &want).await?;
    after.after("compared with after one copy").expect_listed(&d, &once).await
}

/// A target that already has checkpoints and writes reads exactly the same after copying a
/// missing source onto it.
async fn missing_source_keeps_existing_target(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("missing"), cx.thread("dst"));
    let c = cx.value_chain(&d, "", 2).await?;
    cx.put_writes(&c[1], vec![("ch", jv(json!("mine")))], "task-1", "").await?;
    let before = cx.list_all(&d).await?;
    cx.copy_thread(&s, &d).await?;
    cx.after(format!("after copy_thread({s}, {d})")).expect_listed(&d, &before).await
}

/// The copy stands on its own: a write added to the source afterwards does not appear in
/// the copy, and deleting the source afterwards leaves the copy readable in full (values
/// first stored by older checkpoints and writes included).
async fn copy_is_independent_of_source(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c1 = cx.put(&CheckpointConfig::new(&s), Step::fresh().value("a", json!("a@1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!("a@1"), 1).value("b", json!("b@1"), 1)).await?;
    cx.put_writes(&c2, vec![("a", jv(json!("w")))], "task-1", "").await?;
    cx.copy_thread(&s, &d).await?;
    let copy = cx.after(format!("after copy_thread({s}, {d})")).list_all(&d).await?;
    copy.expect_eq("number of checkpoints", &2, &copy.len())?;
    cx.put_writes(&c2, vec![("a", jv(json!("late")))], "task-2", "").await?;
    cx.delete_thread(&s).await?;
    let after = cx.after(format!("after copy_thread({s}, {d}), a new write on the source and delete_thread({s})"));
    after.expect_listed(&d, &copy).await?;
    after.expect_ids(&s, &ListOptions::all(), &[]).await
}

/// A SHOULD rule (kept channels, CONTRACT §2 put): after the copy, a new checkpoint on the
/// target that keeps the copied latest's channels unchanged without carrying them reads
/// their values: the copied values are stored for the target thread, not only inlined into
/// the copied tuples.
async fn target_continues_from_copied_values(cx: Cx) -> Checked {
    let (s, d) = (cx.thread("src"), cx.thread("dst"));
    let c1 = cx.put(&CheckpointConfig::new(&s), Step::fresh().value("a", json!("a@1"), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!("a@1"), 1).value("b", json!("b@1"), 1)).await?;
    cx.copy_thread(&s, &d).await?;
    let next = cx.put(&copied(&d, &c2), Step::fresh().keep("a", 1).keep("b", 1)).await?;
    let after = cx.after(format!("after copy_thread({s}, {d}) and a put on the copy keeping a and b"));
    let got = after.get_some(&next).await?;
    let want = values(&[("a", jv(json!("a@1"))), ("b", jv(json!("b@1")))]);
    got.diffs().map("checkpoint.channel_values", &want, &got.checkpoint.channel_values).finish()?;
    after.expect_ids(&s, &ListOptions::all(), &[id_of(&c2), id_of(&c1)]).await
}

/// Scenario S16 (docs/reference/bug-scenarios.md): S has c1 <- c2 in "", k1 in
/// "child:1", a write on c2; `copy_thread(S, D)` twice; `copy_thread("missing", D2)`.
/// D lists [c2, c1]; D's c2 has parent (D, "", c1); the namespace is copied; one write,
/// not two; S unchanged; D2 empty.
async fn scenario_s16_copy_keeps_lineage_writes_and_namespaces(cx: Cx) -> Checked {
    let (s, d, d2, missing) = (cx.thread("S"), cx.thread("D"), cx.thread("D2"), cx.thread("missing"));
    let c1 = cx.put(&CheckpointConfig::new(&s), Step::fresh().value("a", json!(1), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!(2), 2)).await?;
    let k1 = cx.put(&CheckpointConfig::new(&s).with_ns("child:1"), Step::fresh().value("k", json!("k"), 1)).await?;
    cx.put_writes(&c2, vec![("a", jv(json!("w")))], "task-1", "").await?;
    let src_before = cx.list_all(&s).await?;
    cx.copy_thread(&s, &d).await?;
    cx.copy_thread(&s, &d).await?;
    cx.copy_thread(&missing, &d2).await?;
    let after = cx.after(format!("after copy_thread({s}, {d}) twice"));
    after.expect_ids(&d, &ListOptions::all().ns(""), &[id_of(&c2), id_of(&c1)]).await?;
    let got = after.get_some(&copied(&d, &c2)).await?;
    got.expect_parent(Some(&copied(&d, &c1)))?;
    after.expect_ids(&d, &ListOptions::all().ns("child:1"), &[id_of(&k1)]).await?;
    after.expect_writes(&copied(&d, &c2), &[pending("task-1", "", "a", jv(json!("w")))]).await?;
    after.expect_listed(&s, &src_before).await?;
    cx.after(format!("after copy_thread({missing}, {d2})")).expect_ids(&d2, &ListOptions::all(), &[]).await
}

/// Found by the fuzzer (issue 15) in the memory and SQLite savers: a copied checkpoint
/// whose source has no writes must leave the target checkpoint with none, its writes are
/// replaced, not merged (CONTRACT §3 copy_thread). The trace is the fuzzer's shrunk repro
/// (docs/trace-format.md), its metadata given LangGraph's keys (CONTRACT §5), kept in
/// traces/regressions/ (traces/README.md).
async fn fuzz_copy_replaces_target_writes_with_none(cx: Cx) -> Checked {
    crate::fuzz::replay_in(&cx, include_str!("../../traces/regressions/copy-thread-replaces-target-writes.json")).await
}

/// The case's call of this capability's method ([`Cx`]'s calls of the base methods are in
/// `crate::calls`).
impl Cx {
    /// `copy_thread(source, target)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn copy_thread(&self, source: &str, target: &str) -> Checked {
        let call = conformance_core::Call::CopyThread { source: source.to_owned(), target: target.to_owned() };
        self.call(call, self.saver().copy_thread(source, target)).await.or_fail().map(|_| ())
    }
}
