//! `get_tuple` (CONTRACT §2 get_tuple): which checkpoint comes back (exactly the named one,
//! or the greatest id of the thread and namespace), with which config, parent config and
//! pending writes, in which order.

use conformance_core::{Capability, CheckpointConfig, CheckpointError, Failure, Omitted, ERROR, INTERRUPT, RESUME};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::Checked;
use crate::data::adversarial::{byte_order_pairs, every_variant, shown, ts_against_ids, Class, Position};
use crate::data::{at, jv, metadata, new_id, new_ids, pending, Ids, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::GetTuple, needs [Put] => [
        #[rules(get_tuple.latest)] unknown_thread_returns_none -[Put] ["test_get_tuple_nonexistent_returns_none"],
        #[rules(get_tuple.by_id)] unknown_id_returns_none ["test_get_tuple_nonexistent_checkpoint_id"],
        #[rules(get_tuple.latest)] without_id_returns_greatest_id ["test_get_tuple_latest_when_no_checkpoint_id"],
        #[rules(get_tuple.latest)] without_id_returns_greatest_id_not_last_put,
        #[rules(get_tuple.latest)] #[uses(Namespaces)] without_id_is_scoped_to_namespace,
        #[rules(get_tuple.by_id)] with_id_returns_exactly_that_checkpoint ["test_get_tuple_specific_checkpoint_id"],
        #[rules(get_tuple.by_id)] #[uses(Namespaces)] with_id_respects_namespace ["test_get_tuple_respects_namespace"],
        #[rules(get_tuple.by_id)] with_id_respects_thread,
        #[rules(get_tuple.by_id, put_writes.belongs)] with_id_returns_that_checkpoints_writes +[PutWrites],
        #[rules(put.returns, get_tuple.by_id)] #[uses(Namespaces)] config_names_thread_namespace_and_id ["test_get_tuple_config_structure"],
        #[rules(checkpoint.fields)] checkpoint_fields_roundtrip_exactly ["test_get_tuple_checkpoint_fields"],
        #[rules(metadata.json)] metadata_roundtrips_exactly ["test_get_tuple_metadata"],
        #[rules(tuple.parent_config)] #[uses(Namespaces)] parent_config_names_thread_namespace_and_parent ["test_get_tuple_parent_config"],
        #[rules(put_writes.key, get_tuple.writes_order)] pending_writes_carry_task_channel_and_value +[PutWrites] ["test_get_tuple_pending_writes"],
        #[rules(get_tuple.writes_order)] #[uses(TaskPathOnWrites)] pending_writes_ordered_by_task_path_then_task_id +[PutWrites],
        #[rules(get_tuple.writes_order)] pending_writes_index_compared_as_signed_integer +[PutWrites],
        #[rules(config.thread_id, errors.no_panic)] #[should] empty_thread_id_is_invalid_config -[Put],
        #[rules(config.missing_thread)] config_without_thread_reads_no_thread,
        #[rules(ids.opaque)] thread_ids_stay_apart_and_exact,
        #[rules(ids.opaque)] #[uses(Namespaces)] namespaces_stay_apart_and_exact,
        #[rules(ids.opaque)] checkpoint_ids_stay_apart_and_exact,
        #[rules(get_tuple.latest)] latest_is_greatest_id_by_bytes,
        #[rules(get_tuple.latest)] latest_is_greatest_id_whatever_the_ts,
        #[rules(get_tuple.writes_order)] pending_writes_ordered_by_task_id_bytes +[PutWrites],
        #[rules(get_tuple.writes_order)] #[uses(TaskPathOnWrites)] pending_writes_ordered_by_task_path_bytes +[PutWrites],
    ])
}

/// CONTRACT §2 get_tuple ("exactly that checkpoint") and put_writes ("writes appear with
/// their checkpoint only"): in a thread of two checkpoints, each with writes of its own,
/// `get_tuple` with an id returns that checkpoint's writes, never the other's (older or
/// newer), and without an id the latest's.
async fn with_id_returns_that_checkpoints_writes(cx: Cx) -> Checked {
    let cfg = cx.config("writes-by-id");
    let c1 = cx.put(&cfg, Step::fresh().value("a", json!(1), 1)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("a", json!(2), 2)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!("of c1")))], "task-1", "").await?;
    cx.put_writes(&c2, vec![("a", jv(json!("of c2")))], "task-2", "").await?;
    let of_c1 = [pending("task-1", "", "a", jv(json!("of c1")))];
    let of_c2 = [pending("task-2", "", "a", jv(json!("of c2")))];
    cx.expect_writes(&c1, &of_c1).await?;
    cx.expect_writes(&c2, &of_c2).await?;
    cx.expect_writes(&cfg, &of_c2).await
}

/// CONTRACT §2 get_tuple: a thread that was never written has no checkpoint, with or
/// without an id.
async fn unknown_thread_returns_none(cx: Cx) -> Checked {
    let cfg = cx.config("never-written");
    cx.get_none(&cfg).await?;
    cx.get_none(&cfg.with_id(new_id())).await
}

/// CONTRACT §2 get_tuple: an id that is not stored gives none, also when it is greater than
/// every stored id (never the latest instead) or lies between two stored ids.
async fn unknown_id_returns_none(cx: Cx) -> Checked {
    let ids = new_ids(3);
    let cfg = cx.config("main");
    cx.put(&cfg, Step::new(&ids[0])).await?;
    cx.put(&cfg, Step::new(&ids[2])).await?;
    cx.get_none(&cfg.clone().with_id(&ids[1])).await?;
    cx.get_none(&cfg.clone().with_id(new_id())).await?;
    cx.get_none(&cfg.with_id(uuid::Uuid::new_v4().to_string())).await
}

/// CONTRACT §2 get_tuple: without an id, the checkpoint with the greatest id of the thread
/// and namespace, with its own metadata and parent.
async fn without_id_returns_greatest_id(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let chain = cx.chain(&thread, "", 3).await?;
    let latest = CheckpointConfig::new(&thread);
    let t = cx.get_some(&latest).await?;
    t.diffs()
        .config(&chain[2], &t.config)
        .metadata_key("step", &json!(2), &t.metadata)
        .parent_config(Some(&chain[1]), t.parent_config.as_ref())
        .finish()
}

/// CONTRACT §2 get_tuple: "latest" is the greatest id, not the last one put: ids put out
/// of order (the greatest first) still give the greatest.
async fn without_id_returns_greatest_id_not_last_put(cx: Cx) -> Checked {
    let ids = new_ids(3);
    let cfg = cx.config("main");
    for i in [2, 0, 1] {
        cx.put(&cfg, Step::new(&ids[i]).meta("step", json!(i))).await?;
    }
    let t = cx.after("after putting ids 3rd, 1st, 2nd").get_some(&cfg).await?;
    t.diffs()
        .eq("checkpoint.id", &ids[2], &t.checkpoint.id)
        .eq("config.checkpoint_id", &Some(ids[2].clone()), &t.config.checkpoint_id)
        .finish()
}

/// CONTRACT §2 get_tuple, bug scenario S10 (get side): without an id, the greatest id of
/// *this* namespace; a newer checkpoint in another namespace is not it.
async fn without_id_is_scoped_to_namespace(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let root = CheckpointConfig::new(&thread);
    let child = root.clone().with_ns("child:1");
    let r1 = cx.put(&root, Step::fresh()).await?;
    let k1 = cx.put(&child, Step::fresh()).await?;
    let t = cx.get_some(&root).await?;
    t.expect_config(&r1)?;
    let t = cx.get_some(&child).await?;
    t.expect_config(&k1)?;
    cx.get_none(&root.with_ns("child:2")).await
}

/// CONTRACT §2 get_tuple: with an id, exactly that checkpoint (not the latest), with its
/// own metadata and parent.
async fn with_id_returns_exactly_that_checkpoint(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let chain = cx.chain(&thread, "", 3).await?;
    let t = cx.get_some(&chain[1]).await?;
    t.diffs()
        .config(&chain[1], &t.config)
        .metadata_key("step", &json!(1), &t.metadata)
        .parent_config(Some(&chain[0]), t.parent_config.as_ref())
        .finish()?;
    let t = cx.get_some(&chain[0]).await?;
    t.expect_config(&chain[0])
}

/// CONTRACT §2 get_tuple: with an id, the checkpoint in the config's namespace only. The
/// same id exists in the root and in `child:1` with different values; an id stored only in
/// the root is none in `child:1`.
async fn with_id_respects_namespace(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    let (shared, root_only) = (new_id(), new_id());
    let root = CheckpointConfig::new(&thread);
    let child = root.clone().with_ns("child:1");
    cx.put(&root, Step::new(&shared).value("who", json!("root"), 1)).await?;
    cx.put(&child, Step::new(&shared).value("who", json!("child"), 1)).await?;
    cx.put(&root, Step::new(&root_only)).await?;
    for (cfg, who) in [(&root, "root"), (&child, "child")] {
        let at = cfg.clone().with_id(&shared);
        let t = cx.get_some(&at).await?;
        t.diffs().config(&at, &t.config).channel_value("who", &jv(json!(who)), &t.checkpoint).finish()?;
    }
    cx.get_none(&child.with_id(&root_only)).await
}

/// CONTRACT §2 get_tuple: with an id, the checkpoint in the config's thread only; an id
/// stored in another thread is none here.
async fn with_id_respects_thread(cx: Cx) -> Checked {
    let one = cx.config("one");
    let two = cx.config("two");
    let stored = cx.put(&one, Step::fresh()).await?;
    cx.put(&two, Step::fresh()).await?;
    let id = stored.checkpoint_id.clone().unwrap_or_default();
    cx.get_none(&two.with_id(id)).await
}

/// CONTRACT §1 "Checkpoint tuple": the tuple's config names the thread, the namespace and
/// the id, both when the id was asked for and when it was not.
async fn config_names_thread_namespace_and_id(cx: Cx) -> Checked {
    let cfg = cx.config("main").with_ns("child:abc");
    let step = Step::fresh();
    let want = cfg.clone().with_id(step.id());
    cx.put(&cfg, step).await?;
    for read in [&cfg, &want] {
        let t = cx.get_some(read).await?;
        t.expect_config(&want)?;
    }
    Ok(())
}

/// CONTRACT §1 "Checkpoint": every field round-trips exactly: `v`, `id`, `ts` (also an
/// empty one), `channel_values`, `channel_versions`, `versions_seen`, `updated_channels`.
async fn checkpoint_fields_roundtrip_exactly(cx: Cx) -> Checked {
    let full = Step::fresh()
        .value("k", json!("v"), 1)
        .typed("s", jv(json!([1, 2])), "00000000000000000000000000000001.0.5")
        .seen("node", "k", 1)
        .seen("node", "s", "00000000000000000000000000000001.0.5")
        .with(|c| {
            c.v = 4;
            c.ts = "2001-02-03T04:05:06.000007+00:00".into();
            c.updated_channels = Some(vec!["k".into(), "s".into()]);
        });
    let bare = Step::fresh().value("k", json!(null), 1).with(|c| c.ts = String::new());
    // One thread each: both put `k` at version 1 with different values, and a saver may
    // skip a value already stored at that version in the thread (CONTRACT §2 put).
    for step in [full, bare] {
        let want = step.checkpoint.clone();
        let at = cx.put(&cx.config("main"), step).await?;
        let t = cx.get_some(&at).await?;
        t.diffs().checkpoint(&want, &t.checkpoint).finish()?;
    }
    Ok(())
}

/// CONTRACT §1 "Metadata": the metadata reads back exactly as put, with no key added or
/// removed.
async fn metadata_roundtrips_exactly(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let md = metadata(json!({"source": "input", "step": -1, "parents": {}}));
    let at = cx.put(&cfg, Step::fresh().metadata(md.clone())).await?;
    let t = cx.get_some(&at).await?;
    t.diffs().metadata(&md, &t.metadata).finish()
}

/// CONTRACT §1 "Checkpoint tuple", bug scenario S09: `parent_config` names the thread, the
/// namespace and the parent id (never the checkpoint itself), and is none for a checkpoint
/// without a parent; read with and without an id, in the root and in a child namespace.
async fn parent_config_names_thread_namespace_and_parent(cx: Cx) -> Checked {
    let thread = cx.thread("main");
    for ns in ["", "child:1"] {
        let cfg = CheckpointConfig::new(&thread).with_ns(ns);
        let c1 = cx.put(&cfg, Step::fresh()).await?;
        let c2 = cx.put(&c1, Step::fresh()).await?;
        for read in [&c2, &cfg] {
            let t = cx.get_some(read).await?;
            t.expect_parent(Some(&c1))?;
        }
        let t = cx.get_some(&c1).await?;
        t.expect_parent(None)?;
    }
    Ok(())
}

/// CONTRACT §1 "Checkpoint tuple": `pending_writes` carry the task id, task path, channel
/// and value of each write.
async fn pending_writes_carry_task_channel_and_value(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("main"), Step::fresh()).await?;
    cx.put_writes(&at, vec![("ch", jv(json!("val")))], "task-1", "").await?;
    cx.expect_writes(&at, &[pending("task-1", "", "ch", jv(json!("val")))]).await
}

/// CONTRACT §2 get_tuple: `pending_writes` are ordered by `task_path` first (`""` first),
/// then `task_id`, whatever order they were written in.
async fn pending_writes_ordered_by_task_path_then_task_id(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("main"), Step::fresh()).await?;
    // Neither call order nor task-id order is the expected order.
    let calls = [("b", "~1", 1), ("a", "~2", 2), ("z", "", 3), ("d", "~0", 4), ("c", "~0", 5)];
    for (task, path, n) in calls {
        cx.put_writes(&at, vec![("x", jv(json!(n)))], task, path).await?;
    }
    let want = [
        pending("z", "", "x", jv(json!(3))),
        pending("c", "~0", "x", jv(json!(5))),
        pending("d", "~0", "x", jv(json!(4))),
        pending("b", "~1", "x", jv(json!(1))),
        pending("a", "~2", "x", jv(json!(2))),
    ];
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 get_tuple: within a task, `pending_writes` are ordered by index compared as
/// a signed integer: special channels (-4..-1) first, then positions 0, 1, 2, ..., 10, 11
/// (not `"10"` before `"2"`, not negatives last).
async fn pending_writes_index_compared_as_signed_integer(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("main"), Step::fresh()).await?;
    let names: Vec<String> = (0..12).map(|i| format!("c{i}")).collect();
    let regular: Vec<(&str, _)> = names.iter().enumerate().map(|(i, n)| (n.as_str(), jv(json!(i)))).collect();
    cx.put_writes(&at, regular, "task-1", "").await?;
    cx.put_writes(
        &at,
        vec![(ERROR, jv(json!("e"))), (RESUME, jv(json!("r"))), (INTERRUPT, jv(json!("i")))],
        "task-1",
        "",
    )
    .await?;
    let mut want = vec![
        pending("task-1", "", RESUME, jv(json!("r"))),
        pending("task-1", "", INTERRUPT, jv(json!("i"))),
        pending("task-1", "", ERROR, jv(json!("e"))),
    ];
    want.extend(names.iter().enumerate().map(|(i, n)| pending("task-1", "", n, jv(json!(i)))));
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §1 "Config": an empty `thread_id` is an `InvalidConfig` error, never a panic,
/// never "no checkpoint".
async fn empty_thread_id_is_invalid_config(cx: Cx) -> Checked {
    for cfg in [CheckpointConfig::new(""), CheckpointConfig::new("").with_id(new_id())] {
        let got = cx.try_get(&cfg).await.map(|r| r.map(|t| t.map(|t| t.config)));
        // Reading the thread "" is only not strict; a checkpoint of another thread mixes up
        // state (CONTRACT §1 identifiers are opaque).
        if let Ok(Some(found)) = &got.value {
            if !found.thread_id.is_empty() {
                return Err(Failure::must(format!(
                    "{got}: expected an InvalidConfig error, or nothing or a checkpoint of the thread \"\", got a \
                     checkpoint of the thread {:?} (id={:?})",
                    found.thread_id, found.checkpoint_id
                )));
            }
        }
        got.expect_invalid_config()?;
    }
    Ok(())
}

/// CONTRACT §1 "Config": a config without a `thread_id` names no thread. A read with one
/// (the latest form and by id) is refused or finds nothing, and never finds the checkpoint
/// of a thread named as a language spells a missing value: a saver that turns a missing
/// thread into `"undefined"` (JavaScript), `"None"` (Python) or `"null"` reads another
/// caller's thread. Whether it is refused is the SHOULD case
/// [`empty_thread_id_is_invalid_config`]. A Rust saver gets the empty thread
/// ([`Omitted`]); a saver behind the bridge gets no `thread_id`.
async fn config_without_thread_reads_no_thread(cx: Cx) -> Checked {
    let mut reads = vec![CheckpointConfig::new("")];
    let mut put_in = Vec::new();
    for spelled in ["undefined", "None", "null"] {
        let stored = cx.put(&CheckpointConfig::new(spelled), Step::fresh()).await?;
        reads.extend(stored.checkpoint_id.clone().map(|id| CheckpointConfig::new("").with_id(id)));
        put_in.push(stored);
    }
    let thread_of = |id: &Option<String>| match put_in.iter().find(|c| &c.checkpoint_id == id) {
        Some(c) => format!(", the one put in the thread {:?}", c.thread_id),
        None => String::new(),
    };
    for read in reads {
        let got = Omitted::THREAD_ID.scope(cx.try_get(&read)).await;
        let id = read.checkpoint_id.as_deref().unwrap_or("none");
        let call = format!("get_tuple(no thread_id, ns=\"\", id={id})");
        match &got.value {
            Ok(None) | Err(CheckpointError::InvalidConfig(_) | CheckpointError::InvalidInput(_)) => {}
            Ok(Some(t)) => {
                return Err(Failure::new(format!(
                    "{call}: expected no checkpoint or an InvalidConfig error (a config without thread_id names no \
                     thread), got the checkpoint ({}){}",
                    t.config,
                    thread_of(&t.config.checkpoint_id)
                )))
            }
            Err(e) => {
                return Err(Failure::new(format!(
                    "{call}: expected no checkpoint or an InvalidConfig error, got error {}: {}",
                    e.kind(),
                    e.display_chain()
                )))
            }
        }
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque", in the `thread_id` and `checkpoint_ns` positions:
/// one checkpoint on each of `ids` (every class's variants, [`every_variant`]), each
/// carrying its own identifier as the value of `who`; then each reads back, latest and by
/// id, its own checkpoint with its identifier exact. A long identifier may be refused
/// ([`Cx::put_or_refused`]).
async fn expect_apart(
    cx: &Cx,
    position: Position,
    ids: Vec<(Class, String)>,
    cfg: impl Fn(&str) -> CheckpointConfig,
) -> Checked {
    let mut stored = Vec::new();
    for (class, id) in ids {
        let step = Step::fresh().value("who", json!(id), 1);
        if let Some(c) = cx.put_or_refused(class, &cfg(&id), step).await? {
            stored.push((class, id, c));
        }
    }
    for (class, id, c) in &stored {
        let same: Vec<String> = stored.iter().filter(|(k, ..)| k == class).map(|(_, i, _)| shown(i)).collect();
        let note = format!(
            "after putting one checkpoint on each {} [{}] ({} class)",
            position.name(),
            same.join(", "),
            class.name()
        );
        for read in [cfg(id), c.clone()] {
            let t = cx.after(&note).get_some(&read).await?;
            t.diffs().config(c, &t.config).channel_value("who", &jv(json!(id)), &t.checkpoint).finish()?;
        }
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque": threads whose ids differ only by case, Unicode
/// normalisation, a space, a separator, a `LIKE`/glob metacharacter, a suffix, the plane of
/// a character or past 255 bytes stay apart, and each reads back its own checkpoint with
/// its thread id exact.
async fn thread_ids_stay_apart_and_exact(cx: Cx) -> Checked {
    let base = cx.thread("id");
    expect_apart(&cx, Position::Thread, every_variant(&base), |t| at(t, "")).await
}

/// CONTRACT §1 "Identifiers are opaque": namespaces of one thread that differ only by an
/// identifier class ([`thread_ids_stay_apart_and_exact`]) stay apart and come back exact.
async fn namespaces_stay_apart_and_exact(cx: Cx) -> Checked {
    let thread = cx.thread("ns");
    expect_apart(&cx, Position::Namespace, every_variant("sub"), |ns| at(&thread, ns)).await
}

/// CONTRACT §1 "Identifiers are opaque" and §2 get_tuple: checkpoint ids of one thread that
/// differ only by an identifier class ([`every_variant`], one thread per class) are
/// different checkpoints: each reads back by id with its id exact, and the latest is the
/// greatest of them by bytes.
async fn checkpoint_ids_stay_apart_and_exact(cx: Cx) -> Checked {
    for class in Class::ALL {
        let cfg = cx.config("ids");
        let mut stored = Vec::new();
        // Each at its own version of `who`: a saver may key values by (channel, version).
        for (version, id) in (1..).zip(class.variants(&new_id())) {
            let step = Step::new(&id).value("who", json!(id), version);
            if let Some(c) = cx.put_or_refused(class, &cfg, step).await? {
                stored.push((id, c));
            }
        }
        let all: Vec<String> = stored.iter().map(|(id, _)| shown(id)).collect();
        let cx = cx.after(format!("after putting the checkpoints [{}] ({} class)", all.join(", "), class.name()));
        for (id, c) in &stored {
            let t = cx.get_some(c).await?;
            t.diffs().config(c, &t.config).channel_value("who", &jv(json!(id)), &t.checkpoint).finish()?;
        }
        if let Some((greatest, _)) = stored.iter().max_by(|a, b| a.0.cmp(&b.0)) {
            let t = cx.get_some(&cfg).await?;
            t.diffs().eq("checkpoint.id (the greatest by bytes)", greatest, &t.checkpoint.id).finish()?;
        }
    }
    Ok(())
}

/// CONTRACT §2 get_tuple ("the greatest id") and §1 (strings by bytes): the latest is the
/// greatest id by bytes, not by UTF-16 code units (`"\u{FF61}"` against `"\u{1F600}"`)
/// nor case-insensitively (`"B"` against `"a"`); the other id is put last and has the
/// later `ts`.
async fn latest_is_greatest_id_by_bytes(cx: Cx) -> Checked {
    for (small, great, rule) in byte_order_pairs() {
        let cfg = cx.config("order");
        let p = new_id();
        let (lo, hi) = (format!("{p}{small}"), format!("{p}{great}"));
        let ts = ts_against_ids(2);
        cx.put(&cfg, Step::new(&hi).with(|c| c.ts.clone_from(&ts[1]))).await?;
        cx.put(&cfg, Step::new(&lo).with(|c| c.ts.clone_from(&ts[0]))).await?;
        let note =
            format!("after putting {} then {} (greater {rule}, put last, with the later ts)", shown(&hi), shown(&lo));
        let t = cx.after(note).get_some(&cfg).await?;
        t.diffs().eq("checkpoint.id (the greatest by bytes)", &hi, &t.checkpoint.id).finish()?;
    }
    Ok(())
}

/// CONTRACT §2 get_tuple: "latest" is decided by id, whatever the `ts`: a chain whose `ts`
/// decrease as its ids increase still gives its greatest id.
async fn latest_is_greatest_id_whatever_the_ts(cx: Cx) -> Checked {
    let cfg = cx.config("ts");
    let labels = ["c0", "c1", "c2"];
    let ids = Ids::new(&labels);
    let ts = ts_against_ids(labels.len());
    let mut parent = cfg.clone();
    for (label, ts) in labels.iter().zip(&ts) {
        parent = cx.put(&parent, Step::new(ids.id(label)).with(|c| c.ts.clone_from(ts))).await?;
    }
    let t = cx.after(format!("after putting c0, c1, c2 with ts {ts:?}")).get_some(&cfg).await?;
    t.diffs()
        .eq(format_args!("checkpoint.id ({})", ids.legend()), &"c2".to_owned(), &ids.label(&t.checkpoint.id))
        .finish()
}

/// Task ids or paths whose order by bytes is not their order by UTF-16 code units or
/// case-insensitively ([`byte_order_pairs`]), greatest first: the order to write them in.
fn against_byte_order(prefix: &str) -> Vec<String> {
    let mut v: Vec<String> =
        byte_order_pairs().iter().flat_map(|(s, g, _)| [format!("{prefix}{s}"), format!("{prefix}{g}")]).collect();
    v.sort_by(|a, b| b.cmp(a));
    v
}

/// CONTRACT §2 get_tuple: `pending_writes` order task ids by bytes, not by UTF-16 code
/// units nor case-insensitively.
async fn pending_writes_ordered_by_task_id_bytes(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("main"), Step::fresh()).await?;
    let tasks = against_byte_order("task-");
    for task in &tasks {
        cx.put_writes(&at, vec![("x", jv(json!(task)))], task, "").await?;
    }
    let want: Vec<_> = tasks.iter().rev().map(|t| pending(t, "", "x", jv(json!(t)))).collect();
    cx.expect_writes(&at, &want).await
}

/// CONTRACT §2 get_tuple: `pending_writes` order task paths by bytes, not by UTF-16 code
/// units nor case-insensitively (task ids run the other way).
async fn pending_writes_ordered_by_task_path_bytes(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("main"), Step::fresh()).await?;
    let paths = against_byte_order("~");
    let tasks: Vec<String> = (0..paths.len()).map(|i| format!("task-{i}")).collect();
    for (path, task) in paths.iter().zip(&tasks) {
        cx.put_writes(&at, vec![("x", jv(json!(path)))], task, path).await?;
    }
    let want: Vec<_> = paths.iter().zip(&tasks).rev().map(|(p, t)| pending(t, p, "x", jv(json!(p)))).collect();
    cx.expect_writes(&at, &want).await
}
