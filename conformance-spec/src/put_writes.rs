//! `put_writes` (CONTRACT §2 put_writes): which writes are kept, under which index, with
//! which checkpoint. Writes are observed through `get_tuple`'s `pending_writes`, whose
//! order is (`task_path`, `task_id`, index) (CONTRACT §2 get_tuple), so the expected lists
//! below are in that order.

use conformance_core::{
    Capability, CheckpointConfig, CheckpointError, Failure, Omitted, ERROR, INTERRUPT, RESUME, SCHEDULED,
};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{ensure, Checked};
use crate::data::adversarial::{every_variant, Class};
use crate::data::{fidelity_values, jv, large_value, new_id, pending, Step, LARGE_VALUE_LEN};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::PutWrites, needs [Put, GetTuple] => [
        #[rules(put_writes.key, value.bytes)] write_roundtrips_with_task_and_channel ["test_put_writes_basic", "test_put_writes_preserves_task_id"],
        #[rules(put_writes.index)] writes_of_one_call_keep_their_positions ["test_put_writes_multiple_writes_same_task"],
        #[rules(put_writes.key)] writes_of_different_tasks_are_kept_apart ["test_put_writes_multiple_tasks"],
        #[rules(value.bytes)] write_value_roundtrips_byte_for_byte ["test_put_writes_preserves_channel_and_value"],
        #[rules(value.bytes)] large_write_value_roundtrips,
        #[rules(put_writes.task_path)] #[should] #[uses(TaskPathOnReads)] task_path_roundtrips ["test_put_writes_task_path"],
        #[rules(put_writes.key)] #[uses(TaskPathOnWrites)] task_path_is_not_part_of_the_write_key,
        #[rules(put_writes.regular_first)] regular_write_first_wins ["test_put_writes_idempotent"],
        #[rules(put_writes.regular_first)] regular_write_redelivery_keeps_first_value,
        #[rules(put_writes.index)] special_channel_writes_roundtrip ["test_put_writes_special_channels"],
        #[rules(put_writes.special_last)] special_write_last_wins,
        #[rules(put_writes.per_write)] mixed_call_decides_per_write,
        #[rules(put_writes.index)] special_channel_gets_its_fixed_negative_index,
        #[rules(put_writes.index)] positions_count_special_entries,
        #[rules(put_writes.belongs)] writes_belong_to_their_checkpoint ["test_put_writes_cleared_on_next_checkpoint"],
        #[rules(put_writes.belongs)] #[uses(Namespaces)] writes_belong_to_their_namespace ["test_put_writes_across_namespaces"],
        #[rules(put_writes.belongs)] writes_belong_to_their_thread,
        #[rules(put_writes.early)] writes_before_their_checkpoint_are_kept,
        #[rules(put.reput)] writes_survive_reput_of_their_checkpoint,
        #[rules(put_writes.empty)] empty_writes_list_is_noop,
        #[rules(put_writes.id_required)] missing_checkpoint_id_is_invalid_config,
        #[rules(config.thread_id, errors.no_panic)] #[should] empty_thread_id_is_invalid_config -[Put, GetTuple],
        #[rules(config.missing_namespace)] writes_without_namespace_belong_to_the_root,
        #[rules(ids.opaque, put_writes.key)] task_ids_and_channels_stay_apart_and_exact,
    ])
}

/// Puts one empty checkpoint on a fresh thread (root namespace) and returns its config.
async fn one_checkpoint(cx: &Cx) -> Result<CheckpointConfig, crate::Failure> {
    cx.put(&cx.config("main"), Step::fresh()).await
}

/// CONTRACT §2 put_writes: a write is returned with its task id, task path, channel and
/// value, and nothing else is.
async fn write_roundtrips_with_task_and_channel(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![("channel1", jv(json!("value1")))], "task-1", "").await?;
    cx.expect_writes(&at, &[pending("task-1", "", "channel1", jv(json!("value1")))]).await
}

/// CONTRACT §2 put_writes: the writes of one call get their positions as indexes, so they
/// come back in call order (not sorted by channel).
async fn writes_of_one_call_keep_their_positions(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let writes = vec![("ch3", jv(json!("c"))), ("ch1", jv(json!("a"))), ("ch2", jv(json!("b")))];
    cx.put_writes(&at, writes, "task-1", "").await?;
    let want = [
        pending("task-1", "", "ch3", jv(json!("c"))),
        pending("task-1", "", "ch1", jv(json!("a"))),
        pending("task-1", "", "ch2", jv(json!("b"))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: the task id is part of a write's key; two tasks writing the same
/// channel at the same index both keep their write.
async fn writes_of_different_tasks_are_kept_apart(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![("ch", jv(json!("from-2")))], "task-2", "").await?;
    cx.put_writes(&at, vec![("ch", jv(json!("from-1")))], "task-1", "").await?;
    let want = [pending("task-1", "", "ch", jv(json!("from-1"))), pending("task-2", "", "ch", jv(json!("from-2")))];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §1 "Typed value": a written value keeps its type tag and bytes exactly (JSON,
/// empty bytes, NUL bytes, non-UTF-8 bytes, non-ASCII text, foreign tags).
async fn write_value_roundtrips_byte_for_byte(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let mut all = vec![("my_channel", jv(json!({"data": 123})))];
    all.extend(fidelity_values());
    let want: Vec<_> = all.iter().map(|(ch, v)| pending("task-1", "", ch, v.clone())).collect();
    cx.put_writes(&at, all, "task-1", "").await?;
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §1 "Typed value": a written value of 16 MiB comes back whole.
async fn large_write_value_roundtrips(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let big = large_value(LARGE_VALUE_LEN);
    cx.put_writes(&at, vec![("big", big.clone())], "task-1", "").await?;
    let t = cx.get_some(&at).await?;
    let ok = t.pending_writes.len() == 1 && t.pending_writes[0].channel == "big" && t.pending_writes[0].value == big;
    ensure(ok, || {
        let got: Vec<String> = t
            .pending_writes
            .iter()
            .map(|w| {
                format!("({}, {}, tag {:?}, {} bytes)", w.task_id, w.channel, w.value.type_tag, w.value.data.len())
            })
            .collect();
        format!(
            "{t}: pending_writes: expected [(task-1, big, tag \"bytes\", {LARGE_VALUE_LEN} bytes as written)], got [{}]{}",
            got.join(", "),
            if got.len() == 1 { " with different bytes" } else { "" }
        )
    })
}

/// CONTRACT §1 "Pending write": `task_path` is stored and returned exactly.
///
/// A SHOULD rule (LangGraph's `PendingWrite` has no path): a saver that declares its reads
/// carry no `task_path` ([`conformance_core::Feature::TaskPathOnReads`]) is not run here;
/// its other cases judge the order of its writes without the field (CONTRACT §2 put_writes).
async fn task_path_roundtrips(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let path = "~__pregel_push, ('__pregel_pull', 'node'), 2, True";
    cx.put_writes(&at, vec![("ch", jv(json!(1)))], "task-a", "a:b:c").await?;
    cx.put_writes(&at, vec![("ch", jv(json!(2)))], "task-b", path).await?;
    let want = [pending("task-a", "a:b:c", "ch", jv(json!(1))), pending("task-b", path, "ch", jv(json!(2)))];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: the key of a write is (thread, namespace, checkpoint id, task
/// id, index); the task path is not part of it, so a repeat of a task's write under another
/// path is still a repeat (first wins for a regular channel, last wins for a special one).
async fn task_path_is_not_part_of_the_write_key(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("e1"))), ("ch", jv(json!(1)))], "task-1", "p1").await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("e2"))), ("ch", jv(json!(2)))], "task-1", "p2").await?;
    // The winning special write is the whole last write, path included; "p1" sorts first.
    let want = [pending("task-1", "p1", "ch", jv(json!(1))), pending("task-1", "p2", ERROR, jv(json!("e2")))];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: for a regular channel the first write for a key wins; a repeat
/// is a no-op, with the same value and with a different one.
async fn regular_write_first_wins(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![("ch", jv(json!("val")))], "task-1", "").await?;
    cx.put_writes(&at, vec![("ch", jv(json!("val")))], "task-1", "").await?;
    cx.expect_writes(&at, &[pending("task-1", "", "ch", jv(json!("val")))]).await?;
    cx.put_writes(&at, vec![("ch", jv(json!("other")))], "task-1", "").await?;
    cx.expect_writes(&at, &[pending("task-1", "", "ch", jv(json!("val")))]).await
}

/// CONTRACT §2 put_writes, bug scenario S04: a regular write re-delivered with another
/// value, then with the first value again, leaves exactly the first write after every
/// delivery. One instance, as every base case (the re-delivery through a second instance
/// on the same storage is `durability::reopened_instance_keeps_the_first_regular_write`).
async fn regular_write_redelivery_keeps_first_value(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let want = [pending("T", "", "a", jv(json!("v1")))];
    for (n, value) in ["v1", "v2", "v2", "v1"].into_iter().enumerate() {
        cx.put_writes(&at, vec![("a", jv(json!(value)))], "T", "").await?;
        cx.after(format!("after delivery {} ({value:?})", n + 1)).expect_writes(&at, &want).await?;
    }
    Ok(())
}

/// CONTRACT §1 "Special channels", §2 put_writes: writes to each special channel are kept
/// once with their value, at their fixed negative index (so they come first, `__resume__`
/// -4 to `__error__` -1), and a regular channel after them keeps its position 4.
async fn special_channel_writes_roundtrip(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let writes = vec![
        (ERROR, jv(json!("something went wrong"))),
        (SCHEDULED, jv(json!("scheduled"))),
        (INTERRUPT, jv(json!({"reason": "human_input"}))),
        (RESUME, jv(json!("resume"))),
        ("ch", jv(json!("regular"))),
    ];
    cx.put_writes(&at, writes, "task-1", "").await?;
    let want = [
        pending("task-1", "", RESUME, jv(json!("resume"))),
        pending("task-1", "", INTERRUPT, jv(json!({"reason": "human_input"}))),
        pending("task-1", "", SCHEDULED, jv(json!("scheduled"))),
        pending("task-1", "", ERROR, jv(json!("something went wrong"))),
        pending("task-1", "", "ch", jv(json!("regular"))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: for a special channel the last write for a key wins.
async fn special_write_last_wins(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let round = |n: i64| {
        vec![
            (ERROR, jv(json!(format!("error-{n}")))),
            (SCHEDULED, jv(json!(format!("scheduled-{n}")))),
            (INTERRUPT, jv(json!(format!("interrupt-{n}")))),
            (RESUME, jv(json!(format!("resume-{n}")))),
        ]
    };
    cx.put_writes(&at, round(1), "task-1", "").await?;
    cx.put_writes(&at, round(2), "task-1", "").await?;
    let want = [
        pending("task-1", "", RESUME, jv(json!("resume-2"))),
        pending("task-1", "", INTERRUPT, jv(json!("interrupt-2"))),
        pending("task-1", "", SCHEDULED, jv(json!("scheduled-2"))),
        pending("task-1", "", ERROR, jv(json!("error-2"))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes, bug scenario S02: the first-wins / last-wins rule is decided per
/// write, never per call; a retried call mixing a special and a regular channel replaces
/// the special write and keeps the first regular one.
async fn mixed_call_decides_per_write(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("old"))), ("x", jv(json!(1)))], "A", "").await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("new"))), ("x", jv(json!(2)))], "A", "").await?;
    cx.expect_writes(&at, &[pending("A", "", ERROR, jv(json!("new"))), pending("A", "", "x", jv(json!(1)))]).await
}

/// CONTRACT §1 "Special channels", bug scenario S03: a special write is stored at its fixed
/// negative index, so it never collides with a regular write at the same position.
async fn special_channel_gets_its_fixed_negative_index(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let q = jv(json!({"question": "approve?"}));
    // A special write at position 0 after a regular write at position 0.
    cx.put_writes(&at, vec![("a", jv(json!(1)))], "T", "").await?;
    cx.put_writes(&at, vec![(INTERRUPT, q.clone())], "T", "").await?;
    // A special write at position 2, then a regular write at position 2.
    let u = [("a", jv(json!(1))), ("b", jv(json!(2))), (INTERRUPT, q.clone())];
    cx.put_writes(&at, u.to_vec(), "U", "").await?;
    cx.put_writes(&at, vec![("a", jv(json!(9))), ("b", jv(json!(9))), ("c", jv(json!(9)))], "U", "").await?;
    let want = [
        pending("T", "", INTERRUPT, q.clone()),
        pending("T", "", "a", jv(json!(1))),
        pending("U", "", INTERRUPT, q),
        pending("U", "", "a", jv(json!(1))),
        pending("U", "", "b", jv(json!(2))),
        pending("U", "", "c", jv(json!(9))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: special entries count towards positions. In
/// `[(__error__, e), (ch, v)]` `ch` is at index 1, so a later regular write at position 1
/// of the same task is a repeat (dropped) and one at position 0 is new.
async fn positions_count_special_entries(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("e"))), ("ch", jv(json!("first")))], "task-1", "").await?;
    cx.put_writes(&at, vec![("x", jv(json!("at-0"))), ("ch2", jv(json!("at-1")))], "task-1", "").await?;
    let want = [
        pending("task-1", "", ERROR, jv(json!("e"))),
        pending("task-1", "", "x", jv(json!("at-0"))),
        pending("task-1", "", "ch", jv(json!("first"))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 put_writes: writes belong to one checkpoint: a child checkpoint starts with
/// none, its own writes with the same task and index are not taken for repeats, and the
/// parent keeps its writes.
async fn writes_belong_to_their_checkpoint(cx: Cx) -> Checked {
    let c1 = one_checkpoint(&cx).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("on-c1")))], "task-1", "").await?;
    let c2 = cx.put(&c1, Step::fresh()).await?;
    cx.expect_writes(&c2, &[]).await?;
    cx.put_writes(&c2, vec![("ch", jv(json!("on-c2")))], "task-1", "").await?;
    cx.expect_writes(&c2, &[pending("task-1", "", "ch", jv(json!("on-c2")))]).await?;
    cx.expect_writes(&c1, &[pending("task-1", "", "ch", jv(json!("on-c1")))]).await
}

/// CONTRACT §2 put_writes: writes belong to one namespace. The same checkpoint id exists
/// in the root and in `child:1`; the same task writes the same channel at the same index
/// in each, and each sees exactly its own write.
async fn writes_belong_to_their_namespace(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let id = new_id();
    let root = cx.put(&CheckpointConfig::new(&thread), Step::new(&id)).await?;
    let child = cx.put(&CheckpointConfig::new(&thread).with_ns("child:1"), Step::new(&id)).await?;
    cx.put_writes(&root, vec![("ch", jv(json!("root")))], "task-1", "").await?;
    cx.put_writes(&child, vec![("ch", jv(json!("child")))], "task-1", "").await?;
    cx.expect_writes(&root, &[pending("task-1", "", "ch", jv(json!("root")))]).await?;
    cx.expect_writes(&child, &[pending("task-1", "", "ch", jv(json!("child")))]).await
}

/// CONTRACT §2 put_writes: writes belong to one thread. The same checkpoint id exists in
/// two threads; each sees exactly its own write.
async fn writes_belong_to_their_thread(cx: Cx) -> Checked {
    let id = new_id();
    let one = cx.put(&cx.config("one"), Step::new(&id)).await?;
    let two = cx.put(&cx.config("two"), Step::new(&id)).await?;
    cx.put_writes(&one, vec![("ch", jv(json!("one"))), (INTERRUPT, jv(json!("q-one")))], "task-1", "").await?;
    cx.put_writes(&two, vec![("ch", jv(json!("two")))], "task-1", "").await?;
    let want_one =
        [pending("task-1", "", INTERRUPT, jv(json!("q-one"))), pending("task-1", "", "ch", jv(json!("one")))];
    cx.expect_writes(&one, &want_one).await?;
    cx.expect_writes(&two, &[pending("task-1", "", "ch", jv(json!("two")))]).await
}

/// CONTRACT §2 put_writes, bug scenario S05: writes may arrive before their checkpoint is
/// put; they do not make a checkpoint exist, and show up once it is put (and only there).
async fn writes_before_their_checkpoint_are_kept(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let c1 = cx.put(&cfg, Step::fresh()).await?;
    let id2 = new_id();
    let at2 = cfg.clone().with_id(&id2);
    let q = jv(json!({"question": "approve?"}));
    cx.put_writes(&at2, vec![(INTERRUPT, q.clone()), ("a", jv(json!(1)))], "T", "").await?;
    cx.get_none(&at2).await?;
    cx.put(&c1, Step::new(&id2)).await?;
    cx.expect_writes(&at2, &[pending("T", "", INTERRUPT, q), pending("T", "", "a", jv(json!(1)))]).await?;
    cx.expect_writes(&c1, &[]).await
}

/// CONTRACT §2 put, bug scenario S05: re-putting a checkpoint keeps its pending writes.
async fn writes_survive_reput_of_their_checkpoint(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let id = new_id();
    let at = cx.put(&cfg, Step::new(&id).value("a", json!(1), 1)).await?;
    let q = jv(json!({"question": "approve?"}));
    cx.put_writes(&at, vec![(INTERRUPT, q.clone()), ("w", jv(json!("kept")))], "T", "").await?;
    cx.put(&cfg, Step::new(&id).value("a", json!(2), 2).meta("step", json!(1))).await?;
    cx.expect_writes(&at, &[pending("T", "", INTERRUPT, q), pending("T", "", "w", jv(json!("kept")))]).await
}

/// CONTRACT §2 put_writes, bug scenario S14: an empty list is a no-op: no error, no write,
/// and earlier writes of the task stay.
async fn empty_writes_list_is_noop(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    cx.put_writes(&at, vec![], "task-1", "").await?;
    cx.expect_writes(&at, &[]).await?;
    cx.put_writes(&at, vec![("ch", jv(json!("v")))], "task-1", "").await?;
    cx.put_writes(&at, vec![], "task-1", "").await?;
    cx.expect_writes(&at, &[pending("task-1", "", "ch", jv(json!("v")))]).await
}

/// CONTRACT §2 put_writes: `config.checkpoint_id` is required; without it the call is an
/// `InvalidConfig` error and stores nothing (in particular not on the latest checkpoint).
async fn missing_checkpoint_id_is_invalid_config(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let no_id = at.clone().without_id();
    cx.try_put_writes(&no_id, vec![("ch", jv(json!("v")))], "task-1", "").await.expect_invalid_config()?;
    cx.expect_writes(&at, &[]).await
}

/// CONTRACT §1 "Config": an empty `thread_id` is an `InvalidConfig` error, never a panic
/// or a silent default.
async fn empty_thread_id_is_invalid_config(cx: Cx) -> Checked {
    let cfg = CheckpointConfig::new("").with_id(new_id());
    cx.try_put_writes(&cfg, vec![("ch", jv(json!("v")))], "task-1", "").await.expect_invalid_config()
}

/// CONTRACT §1 "Config" (`checkpoint_ns` defaults to the root `""`): writes whose config has
/// no `checkpoint_ns` belong to the root namespace. They read back with their checkpoint
/// there, or the call is refused and stores nothing; they are never acknowledged and then
/// missing (a saver that files them under a namespace no read looks up, such as the
/// `"undefined"` a missing JavaScript value spells). A Rust saver gets the root namespace
/// ([`Omitted`]); a saver behind the bridge gets no `checkpoint_ns`. LangGraph's runtimes
/// always pass the namespace to `put_writes`, so a refusal loses nothing.
async fn writes_without_namespace_belong_to_the_root(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let writes = vec![("ch", jv(json!("v")))];
    let got = Omitted::CHECKPOINT_NS.scope(cx.try_put_writes(&at, writes, "task-1", "")).await;
    match &got.value {
        Ok(()) => cx.expect_writes(&at, &[pending("task-1", "", "ch", jv(json!("v")))]).await,
        Err(CheckpointError::InvalidConfig(_) | CheckpointError::InvalidInput(_)) => cx.expect_writes(&at, &[]).await,
        Err(e) => Err(Failure::new(format!(
            "put_writes(thread={}, no checkpoint_ns, id={}): expected the writes stored in the root namespace or \
             the call refused, got error {}: {}",
            at.thread_id,
            at.checkpoint_id.as_deref().unwrap_or("none"),
            e.kind(),
            e.display_chain()
        ))),
    }
}

/// `put_writes` of identifiers of `class`: true when it stored them, false when the saver
/// refused them with `InvalidInput` and the class may be refused (the caller's expected
/// writes then leave them out, so anything stored shows).
async fn put_writes_or_refused(
    cx: &Cx,
    class: Class,
    at: &CheckpointConfig,
    writes: Vec<(&str, conformance_core::TypedValue)>,
    task_id: &str,
) -> Result<bool, crate::Failure> {
    let reply = cx.try_put_writes(at, writes, task_id, "").await;
    if class.may_be_refused() && matches!(reply.value, Err(CheckpointError::InvalidInput(_))) {
        return Ok(false);
    }
    reply.or_fail().map(|_| true)
}

/// CONTRACT §1 "Identifiers are opaque" and §2 put_writes ("the key is (..., task id,
/// index)"): task ids that differ only by an identifier class ([`every_variant`]) are
/// different tasks, and channels that differ so are different channels; every write comes
/// back with its task id and channel exact, in (task id by bytes, index) order. Long ones
/// may be refused.
async fn task_ids_and_channels_stay_apart_and_exact(cx: Cx) -> Checked {
    let at = one_checkpoint(&cx).await?;
    let mut want = Vec::new();
    for (class, task) in every_variant("task-") {
        if put_writes_or_refused(&cx, class, &at, vec![("x", jv(json!(task)))], &task).await? {
            want.push(pending(&task, "", "x", jv(json!(task))));
        }
    }
    for (long, task) in [(false, "chan-task"), (true, "chan-task-long")] {
        let class = if long { Class::Long } else { Class::Case };
        let channels: Vec<String> =
            every_variant("ch-").into_iter().filter(|(c, _)| (*c == Class::Long) == long).map(|(_, ch)| ch).collect();
        let writes = channels.iter().map(|ch| (ch.as_str(), jv(json!(ch)))).collect();
        if put_writes_or_refused(&cx, class, &at, writes, task).await? {
            want.extend(channels.iter().map(|ch| pending(task, "", ch, jv(json!(ch)))));
        }
    }
    // Stable: each task's writes keep their positions.
    want.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    cx.after("after put_writes of every task id class, then of every channel class").expect_writes(&at, &want).await
}
