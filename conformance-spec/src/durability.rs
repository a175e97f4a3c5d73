//! `durability` (CONTRACT §4 "Durability", persistent savers): once `put` or `put_writes`
//! returned `Ok`, the data is visible to a new instance opened on the same storage, and it
//! survives the process being killed (bug scenario S20).
//!
//! The capability is detected when the registration's fixture can reopen its storage (a
//! [`conformance_core::Registration::persistent`] whose [`conformance_core::Storage::reach`]
//! is at least [`conformance_core::Reach::ThisProcess`]); the crash case also needs a
//! location another process can open ([`conformance_core::Reach::OtherProcesses`], the
//! default) and a front end that calls [`crate::child_main_if_requested`] (see
//! [`crate::crash`]).

use conformance_core::{Capability, CheckpointConfig, ListOptions, TypedValue, ERROR, INTERRUPT};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{describe_writes, ensure, Checked, Diffs};
use crate::data::{id_of, jv, pending, rich_step, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Durability, needs [Put, PutWrites, GetTuple, List] => [
        #[rules(durability.acknowledged)] reopened_instance_reads_checkpoints_and_writes,
        #[rules(durability.acknowledged)] reopened_instance_sees_a_deleted_thread_gone +[DeleteThread],
        #[rules(durability.acknowledged, put.reput)] reopened_instance_sees_a_replaced_checkpoint -[List],
        #[rules(durability.acknowledged, put_writes.regular_first)] reopened_instance_keeps_the_first_regular_write -[List],
        #[rules(durability.acknowledged)] reopened_instance_reads_checkpoints -[PutWrites, List],
        #[rules(durability.acknowledged)] #[closed_instance] #[budget(crate::crash::budget)] acknowledged_writes_survive_kill,
        #[rules(durability.acknowledged, put_writes.early)] reopened_instance_shows_writes_made_before_their_checkpoint -[List],
        #[rules(durability.acknowledged, put_writes.special_last)] reopened_instance_keeps_the_last_special_write -[List],
    ])
}

/// What every case calls the second instance it opens.
const NEW_INSTANCE: &str = "a new instance on the same storage";

/// Checkpoints (a chain of two in the root namespace, the second keeping a channel whose
/// value only the first carried, and one in a subgraph namespace), their writes (regular
/// and special, two tasks, a task path) and metadata, all read back through a new instance
/// as the instance that wrote them reads them, by `get_tuple` and by `list`. Whether the
/// second checkpoint reads the kept value at all is CONTRACT §2 put's rule (the `put`
/// cases); here only that a new instance reads what the first one does.
async fn reopened_instance_reads_checkpoints_and_writes(cx: Cx) -> Checked {
    let thread = cx.thread("reopen");
    let root = CheckpointConfig::new(thread.clone());
    let c1 = cx
        .put(&root, rich_step("reopen", 0, 3).typed("raw", TypedValue::new("bytes", vec![0u8, 0xff, 0xfe, 0]), 1))
        .await?;
    let c2 = cx
        .put(&c1, Step::fresh().value("reopen.c00", json!("second"), 2).keep("raw", 1).meta("step", json!(1)))
        .await?;
    let sub = cx.put(&root.clone().with_ns("child:sub"), rich_step("sub", 0, 2)).await?;
    cx.put_writes(&c2, vec![("a", jv(json!({"x": 1}))), ("__error__", jv(json!("boom")))], "task-1", "").await?;
    cx.put_writes(&c2, vec![("b", jv(json!([1, 2])))], "task-2", "path~1").await?;
    cx.put_writes(&sub, vec![("s", jv(json!(null)))], "task-s", "").await?;
    let before = cx.after("through the instance that wrote it").get_some(&c2).await?;
    ensure(before.pending_writes.len() == 3, || {
        format!("{before}: expected 3 pending writes, got {}", describe_writes(&before.pending_writes))
    })?;
    let other = cx.reopened(NEW_INSTANCE).await?;
    let mut d = Diffs::new();
    for cfg in [&c1, &c2, &sub] {
        let want = cx.get_some(cfg).await?;
        let got = other.get_some(cfg).await?;
        d.of(&got).tuple(&want, &got);
    }
    let latest = other.get_some(&root).await?;
    d.of(&latest).eq("checkpoint.id", id_of(&c2), latest.checkpoint.id.as_str());
    let want = cx.list_all(&thread).await?;
    let got = other.list_all(&thread).await?;
    d.of(&got).tuples(&want, &got);
    d.finish()
}

/// Checkpoints alone (a chain of three, the last reading a value kept from the first, and
/// one in a subgraph namespace) read back the same through a new instance, by id and as the
/// latest. Needs only put and get_tuple, so a saver without put_writes or list is still
/// judged on durability.
async fn reopened_instance_reads_checkpoints(cx: Cx) -> Checked {
    let thread = cx.thread("reopen");
    let root = CheckpointConfig::new(thread.clone());
    let c1 = cx.put(&root, rich_step("reopen", 0, 2)).await?;
    let c2 = cx.put(&c1, Step::fresh().value("reopen.c00", json!("second"), 2).meta("step", json!(1))).await?;
    let c3 = cx.put(&c2, Step::fresh().keep("reopen.c01", 1).meta("step", json!(2))).await?;
    let sub = cx.put(&root.clone().with_ns("child:sub"), rich_step("sub", 0, 1)).await?;
    let other = cx.reopened(NEW_INSTANCE).await?;
    let mut d = Diffs::new();
    for cfg in [&c1, &c2, &c3, &sub] {
        let want = cx.get_some(cfg).await?;
        let got = other.get_some(cfg).await?;
        d.of(&got).tuple(&want, &got);
    }
    let latest = other.get_some(&root).await?;
    d.of(&latest).eq("checkpoint.id", id_of(&c3), latest.checkpoint.id.as_str());
    d.finish()
}

/// `delete_thread` is durable: a new instance finds nothing of the deleted thread (latest,
/// by id, by `list`) and the other thread unchanged.
async fn reopened_instance_sees_a_deleted_thread_gone(cx: Cx) -> Checked {
    let gone = cx.thread("gone");
    let kept = cx.thread("kept");
    let mut gone_cfgs = Vec::new();
    for thread in [&gone, &kept] {
        let c1 = cx.put(&CheckpointConfig::new(thread.clone()), rich_step("del", 0, 2)).await?;
        let c2 = cx.put(&c1, rich_step("del", 1, 2)).await?;
        cx.put_writes(&c2, vec![("w", jv(json!(1)))], "task", "").await?;
        if thread == &gone {
            gone_cfgs = vec![c1, c2];
        }
    }
    cx.delete_thread(&gone).await?;
    let want_kept = cx.list_all(&kept).await?;
    let other = cx.reopened(NEW_INSTANCE).await?.after(format!("after delete_thread({gone})"));
    for cfg in gone_cfgs.iter().chain([&CheckpointConfig::new(gone.clone())]) {
        other.get_none(cfg).await?;
    }
    other.expect_ids(&gone, &ListOptions::all(), &[]).await?;
    other.expect_listed(&kept, &want_kept).await
}

/// Putting an existing id again is durable: a new instance reads the second version
/// (metadata and values) and the writes made before the replacement.
async fn reopened_instance_sees_a_replaced_checkpoint(cx: Cx) -> Checked {
    let root = cx.config("replace");
    let first = Step::fresh().value("ch", json!("first"), 1).meta("source", json!("input"));
    let id = first.id().to_owned();
    let cfg = cx.put(&root, first).await?;
    cx.put_writes(&cfg, vec![("w", jv(json!("kept")))], "task", "").await?;
    let second = Step::new(&id).value("ch", json!("second"), 2).meta("source", json!("update"));
    cx.put(&root, second).await?;
    let other = cx.reopened(NEW_INSTANCE).await?.after("after the checkpoint was put twice");
    let t = other.get_some(&cfg).await?;
    let mut d = t.diffs();
    d.metadata_key("source", &json!("update"), &t.metadata).channel_value("ch", &jv(json!("second")), &t.checkpoint);
    if !(t.pending_writes.len() == 1 && t.pending_writes[0].value == jv(json!("kept"))) {
        d.push("pending_writes", "the write made before the second put", describe_writes(&t.pending_writes));
    }
    d.finish()
}

/// CONTRACT §2 put_writes ("the first write for a key wins") across instances, bug
/// scenario S04: a regular write re-delivered with another value, then with the first
/// value again, through a new instance on the same storage leaves exactly the first write,
/// read through either instance after every delivery (an instance-local dedupe is not
/// enough).
async fn reopened_instance_keeps_the_first_regular_write(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("redeliver"), Step::fresh().value("a", json!(0), 1)).await?;
    let want = [pending("T", "", "a", jv(json!("v1")))];
    cx.put_writes(&at, vec![("a", jv(json!("v1")))], "T", "").await?;
    let other = cx.reopened(NEW_INSTANCE).await?;
    for (n, value) in ["v2", "v1"].into_iter().enumerate() {
        other.put_writes(&at, vec![("a", jv(json!(value)))], "T", "").await?;
        for reader in [&cx, &other] {
            let when = format!("after re-delivery {} ({value:?}) through the new instance", n + 1);
            reader.after(when).expect_writes(&at, &want).await?;
        }
    }
    Ok(())
}

/// S20, the crash test: a child process writes and is killed with SIGKILL at random
/// moments; every acknowledged checkpoint and write is intact afterwards and nothing
/// present is torn (see [`crate::crash`]).
async fn acknowledged_writes_survive_kill(cx: Cx) -> Checked {
    crate::crash::crash_test(cx).await
}

/// CONTRACT §2 put_writes ("writes may arrive before the checkpoint itself is put; they are
/// kept and show up once it is") with §4 Durability: writes (a regular one and an
/// `__interrupt__`) acknowledged for a checkpoint not yet put are stored, not held by the
/// instance that took them: the checkpoint put through a new instance shows them, read
/// through either instance.
async fn reopened_instance_shows_writes_made_before_their_checkpoint(cx: Cx) -> Checked {
    let root = cx.config("early");
    let step = Step::fresh().value("a", json!(0), 1);
    let early = root.clone().with_id(step.id());
    cx.put_writes(&early, vec![("a", jv(json!("early"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    let other = cx.reopened(NEW_INSTANCE).await?;
    let at = other.put(&root, step).await?;
    let want = [pending("task-1", "", INTERRUPT, jv(json!("q"))), pending("task-1", "", "a", jv(json!("early")))];
    for (reader, name) in [(&other, "the new instance"), (&cx, "the first instance")] {
        let when = format!("after writes made through the first instance before their checkpoint, put through the new one, read through {name}");
        reader.after(when).expect_writes(&at, &want).await?;
    }
    Ok(())
}

/// CONTRACT §2 put_writes ("special writes: the last write wins", at their fixed index)
/// across instances: `__error__` and `__interrupt__` written through one instance, then
/// `__error__` again through a new instance and `__interrupt__` again through the first,
/// leave the last value of each, read through either instance.
async fn reopened_instance_keeps_the_last_special_write(cx: Cx) -> Checked {
    let at = cx.put(&cx.config("special"), Step::fresh()).await?;
    cx.put_writes(&at, vec![(ERROR, jv(json!("e1"))), (INTERRUPT, jv(json!("i1")))], "T", "").await?;
    let other = cx.reopened(NEW_INSTANCE).await?;
    other.put_writes(&at, vec![(ERROR, jv(json!("e2")))], "T", "").await?;
    cx.put_writes(&at, vec![(INTERRUPT, jv(json!("i2")))], "T", "").await?;
    let want = [pending("T", "", INTERRUPT, jv(json!("i2"))), pending("T", "", ERROR, jv(json!("e2")))];
    for (reader, name) in [(&cx, "the first instance"), (&other, "the new instance")] {
        let when = format!(
            "after __error__ e1 and __interrupt__ i1 (first instance), __error__ e2 (new instance), __interrupt__ i2 (first instance), read through {name}"
        );
        reader.after(when).expect_writes(&at, &want).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    struct NoReopen;
    impl conformance_core::CheckpointSaver for NoReopen {}

    /// Forced to run on a fixture without a reopen, the crash case says so, and does not
    /// claim the fixture can reopen.
    #[test]
    fn forced_crash_case_names_the_missing_reopen() {
        let reg =
            conformance_core::Registration::new("no-reopen", || async { Ok(conformance_core::Fixture::new(NoReopen)) });
        let cases = super::cases();
        let case = cases.iter().find(|c| c.name == "acknowledged_writes_survive_kill").expect("the crash case");
        let r = conformance_core::run::execute_case(&reg, case);
        let m = r.message.unwrap_or_default();
        assert!(m.contains("cannot open a second instance") && !m.contains("can reopen"), "{m}");
    }
}
