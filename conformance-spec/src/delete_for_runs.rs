//! `delete_for_runs` (CONTRACT §3): deletes, in every thread and namespace, each checkpoint
//! whose metadata `run_id` is listed, with its writes; every other checkpoint stays exactly
//! as it was; an empty list and unknown run ids are no-ops.
//!
//! Run ids are made unique per case (through [`Cx::thread`]) so that a saver shared between
//! cases cannot have one case delete another's checkpoints. Every case that checks what
//! stays also checks that the listed run is gone, so a no-op `delete_for_runs` fails it.

use conformance_core::{Capability, CheckpointConfig, CheckpointTuple, Failure, ListOptions, INTERRUPT};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::Checked;
use crate::data::adversarial::{shown, Class};
use crate::data::{at, id_of, jv, new_id, pending, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::DeleteForRuns, needs [Put, GetTuple, List] => [
        #[rules(delete_for_runs.deletes)] removes_listed_run ["test_delete_for_runs_single"],
        #[rules(delete_for_runs.deletes)] removes_every_listed_run ["test_delete_for_runs_multiple"],
        #[rules(delete_for_runs.others)] keeps_unlisted_runs +[PutWrites] ["test_delete_for_runs_preserves_other_runs"],
        #[rules(delete_for_runs.deletes)] removes_writes_with_checkpoint +[PutWrites] ["test_delete_for_runs_removes_writes"],
        #[rules(extended.noop_inputs)] empty_list_is_noop +[PutWrites] -[List] ["test_delete_for_runs_empty_list_noop"],
        #[rules(extended.noop_inputs)] unknown_run_ids_are_noop +[PutWrites] -[List] ["test_delete_for_runs_nonexistent_noop"],
        #[rules(extended.noop_inputs, delete_for_runs.deletes)] unknown_ids_next_to_known_ones,
        #[rules(delete_for_runs.deletes)] #[uses(Namespaces)] removes_run_in_every_namespace ["test_delete_for_runs_across_namespaces"],
        #[rules(delete_for_runs.deletes)] removes_run_in_every_thread,
        #[rules(delete_for_runs.deletes)] removes_every_checkpoint_of_a_run,
        #[rules(delete_for_runs.others)] keeps_writes_of_other_runs +[PutWrites] -[List],
        #[rules(delete_for_runs.others, put.values)] keeps_values_first_stored_by_deleted_checkpoints -[List],
        #[rules(delete_for_runs.deletes)] deleted_writes_do_not_return_on_reput +[PutWrites] -[List],
        #[rules(delete_for_runs.others, ids.opaque)] run_id_matches_exactly,
        #[rules(delete_for_runs.others)] only_top_level_run_id_counts,
        #[rules(delete_for_runs.others, ids.opaque)] run_ids_of_every_class_stay_apart -[List],
        #[rules(delete_for_runs.others)] #[uses(Namespaces)] same_id_elsewhere_is_untouched +[PutWrites] -[List],
    ])
}

/// A fresh checkpoint whose metadata `run_id` is `run`.
fn run_step(run: &str) -> Step {
    Step::fresh().meta("run_id", json!(run))
}

/// Reads each config, failing if one is missing (the state before the delete).
async fn read_all(cx: &Cx, configs: &[&CheckpointConfig]) -> Result<Vec<CheckpointTuple>, Failure> {
    let mut out = Vec::with_capacity(configs.len());
    for c in configs {
        out.push(cx.get_some(c).await?.into_value());
    }
    Ok(out)
}

/// Run r1 then run r2 on one thread (chained); deleting r1 leaves exactly r2.
async fn removes_listed_run(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let (r1, r2) = (cx.thread("run1"), cx.thread("run2"));
    let c1 = cx.put(&cfg, run_step(&r1).value("a", json!(1), 1)).await?;
    let c2 = cx.put(&c1, run_step(&r2).value("a", json!(2), 2)).await?;
    cx.after("before delete_for_runs").expect_ids(&t, &ListOptions::all(), &[id_of(&c2), id_of(&c1)]).await?;
    cx.delete_for_runs(&[&r1]).await?;
    let after = cx.after(format!("after delete_for_runs([{r1}])"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c2)]).await?;
    after.get_none(&c1).await
}

/// A chain of runs r1, r2, r3; deleting [r1, r2] leaves exactly r3.
async fn removes_every_listed_run(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let (r1, r2, r3) = (cx.thread("run1"), cx.thread("run2"), cx.thread("run3"));
    let c1 = cx.put(&cfg, run_step(&r1)).await?;
    let c2 = cx.put(&c1, run_step(&r2)).await?;
    let c3 = cx.put(&c2, run_step(&r3)).await?;
    cx.delete_for_runs(&[&r1, &r2]).await?;
    let after = cx.after(format!("after delete_for_runs([{r1}, {r2}])"));
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c3)]).await?;
    after.get_none(&c1).await?;
    after.get_none(&c2).await
}

/// Two unchained checkpoints of runs "keep" and "delete": after deleting "delete", the kept
/// one reads exactly as before (values, metadata, writes) and the deleted one is gone.
/// Upstream checked only that the kept one is listed, which a no-op passes.
async fn keeps_unlisted_runs(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let (keep, del) = (cx.thread("run-keep"), cx.thread("run-delete"));
    let ck = cx.put(&cfg, run_step(&keep).value("a", json!("kept"), 1)).await?;
    cx.put_writes(&ck, vec![("a", jv(json!("w")))], "task-1", "").await?;
    let cd = cx.put(&cfg, run_step(&del).value("a", json!("deleted"), 1)).await?;
    let before = cx.get_some(&ck).await?;
    cx.delete_for_runs(&[&del]).await?;
    let after = cx.after(format!("after delete_for_runs([{del}])"));
    after.get_none(&cd).await?;
    after.expect_tuple(&ck, &before).await?;
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&ck)]).await
}

/// A checkpoint of r1 with regular and special writes: after deleting r1 it is gone from
/// `get_tuple` and `list`.
async fn removes_writes_with_checkpoint(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let r1 = cx.thread("run1");
    let c1 = cx.put(&cfg, run_step(&r1)).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("v"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.delete_for_runs(&[&r1]).await?;
    let after = cx.after(format!("after delete_for_runs([{r1}])"));
    after.get_none(&c1).await?;
    after.expect_ids(&t, &ListOptions::all(), &[]).await
}

/// `delete_for_runs([])` returns Ok and changes nothing (S14).
async fn empty_list_is_noop(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let r1 = cx.thread("run1");
    let c1 = cx.put(&cfg, run_step(&r1).value("a", json!(1), 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!(2)))], "task-1", "").await?;
    let c2 = cx.put(&c1, Step::fresh().carry("a", json!(1), 1)).await?;
    let before = read_all(&cx, &[&c1, &c2]).await?;
    cx.delete_for_runs(&[]).await?;
    cx.after("after delete_for_runs([])").expect_tuple(&c1, &before[0]).await?;
    cx.after("after delete_for_runs([])").expect_tuple(&c2, &before[1]).await
}

/// Run ids that no checkpoint carries: Ok, and nothing changes.
async fn unknown_run_ids_are_noop(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let r1 = cx.thread("run1");
    let unknown = cx.thread("run-unknown");
    let c1 = cx.put(&cfg, run_step(&r1).value("a", json!(1), 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!(2)))], "task-1", "").await?;
    let before = cx.get_some(&c1).await?;
    cx.delete_for_runs(&[&unknown, "run-never-used"]).await?;
    cx.after(format!("after delete_for_runs([{unknown}, run-never-used])")).expect_tuple(&c1, &before).await
}

/// Unknown run ids listed next to a known one do not fail the call: the known run is
/// deleted.
async fn unknown_ids_next_to_known_ones(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let (r1, r2, unknown) = (cx.thread("run1"), cx.thread("run2"), cx.thread("run-unknown"));
    let c1 = cx.put(&cfg, run_step(&r1)).await?;
    let c2 = cx.put(&c1, run_step(&r2)).await?;
    cx.delete_for_runs(&[&unknown, &r1, &unknown]).await?;
    let after = cx.after(format!("after delete_for_runs([{unknown}, {r1}, {unknown}])"));
    after.get_none(&c1).await?;
    after.expect_ids(&cfg.thread_id, &ListOptions::all(), &[id_of(&c2)]).await
}

/// Runs r1 and r2 each in "" and "child:1": deleting r1 removes it from both namespaces and
/// leaves r2 in both.
async fn removes_run_in_every_namespace(cx: Cx) -> Checked {
    let root = cx.config("main");
    let t = root.thread_id.clone();
    let child = root.clone().with_ns("child:1");
    let (r1, r2) = (cx.thread("run1"), cx.thread("run2"));
    let a1 = cx.put(&root, run_step(&r1)).await?;
    let k1 = cx.put(&child, run_step(&r1)).await?;
    let a2 = cx.put(&a1, run_step(&r2)).await?;
    let k2 = cx.put(&k1, run_step(&r2)).await?;
    cx.after("before delete_for_runs")
        .expect_ids(&t, &ListOptions::all().ns("child:1"), &[id_of(&k2), id_of(&k1)])
        .await?;
    cx.delete_for_runs(&[&r1]).await?;
    let after = cx.after(format!("after delete_for_runs([{r1}])"));
    after.get_none(&a1).await?;
    after.get_none(&k1).await?;
    after.expect_ids(&t, &ListOptions::all().ns(""), &[id_of(&a2)]).await?;
    after.expect_ids(&t, &ListOptions::all().ns("child:1"), &[id_of(&k2)]).await
}

/// Run r1 spans threads A, B and C: deleting it removes it everywhere; run r2's checkpoints
/// in A and B stay. (Namespaces are [`removes_run_in_every_namespace`]'s rule.)
async fn removes_run_in_every_thread(cx: Cx) -> Checked {
    let (a, b, c) = (cx.config("a"), cx.config("b"), cx.config("c"));
    let (r1, r2) = (cx.thread("run1"), cx.thread("run2"));
    let a1 = cx.put(&a, run_step(&r1)).await?;
    let b1 = cx.put(&b, run_step(&r1)).await?;
    let c1 = cx.put(&c, run_step(&r1)).await?;
    let a2 = cx.put(&a1, run_step(&r2)).await?;
    let b2 = cx.put(&b, run_step(&r2)).await?;
    cx.delete_for_runs(&[&r1]).await?;
    let after = cx.after(format!("after delete_for_runs([{r1}])"));
    after.get_none(&a1).await?;
    after.get_none(&b1).await?;
    after.get_none(&c1).await?;
    after.expect_ids(&a.thread_id, &ListOptions::all(), &[id_of(&a2)]).await?;
    after.expect_ids(&b.thread_id, &ListOptions::all(), &[id_of(&b2)]).await?;
    after.expect_ids(&c.thread_id, &ListOptions::all(), &[]).await
}

/// One run made the two newest checkpoints of a thread: deleting it removes both, and the
/// latest checkpoint (`get_tuple` without an id) becomes the remaining older one.
async fn removes_every_checkpoint_of_a_run(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let (old, new) = (cx.thread("run-old"), cx.thread("run-new"));
    let c1 = cx.put(&cfg, run_step(&old).value("a", json!(1), 1)).await?;
    let c2 = cx.put(&c1, run_step(&new).value("a", json!(2), 2)).await?;
    let c3 = cx.put(&c2, run_step(&new).value("a", json!(3), 3)).await?;
    let before = cx.get_some(&c1).await?;
    cx.delete_for_runs(&[&new]).await?;
    let after = cx.after(format!("after delete_for_runs([{new}])"));
    after.get_none(&c2).await?;
    after.get_none(&c3).await?;
    after.after("latest").expect_tuple(&cfg, &before).await?;
    after.expect_ids(&t, &ListOptions::all(), &[id_of(&c1)]).await
}

/// c1 (run keep) <- c2 (run del) <- c3 (run keep), each with writes of several tasks, task
/// paths and special channels: deleting "del" removes c2, and c1 and c3 read exactly as
/// before (writes, values, metadata and parent config).
async fn keeps_writes_of_other_runs(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let (keep, del) = (cx.thread("run-keep"), cx.thread("run-del"));
    let c1 = cx.put(&cfg, run_step(&keep).value("a", json!(1), 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!("c1-t1"))), (INTERRUPT, jv(json!("q1")))], "t1", "~0").await?;
    cx.put_writes(&c1, vec![("b", jv(json!("c1-t2")))], "t2", "~1").await?;
    let c2 = cx.put(&c1, run_step(&del).value("a", json!(2), 2)).await?;
    cx.put_writes(&c2, vec![("a", jv(json!("c2-t1")))], "t1", "~0").await?;
    let c3 = cx.put(&c2, run_step(&keep).carry("a", json!(2), 2)).await?;
    cx.put_writes(&c3, vec![("b", jv(json!("c3-t1"))), ("a", jv(json!("c3-t1b")))], "t1", "~0").await?;
    let before = read_all(&cx, &[&c1, &c3]).await?;
    cx.delete_for_runs(&[&del]).await?;
    let after = cx.after(format!("after delete_for_runs([{del}])"));
    after.get_none(&c2).await?;
    after.expect_tuple(&c1, &before[0]).await?;
    after.expect_tuple(&c3, &before[1]).await
}

/// c1 (run A) stores `x`; c2 (run B) carries `x` at its unchanged version and stores `y`;
/// c3 (run A) carries both (as LangGraph's runtime puts them). Deleting run A must not take
/// away the value of `x` that c2 still reads, which a saver may have stored only once, with
/// c1 (CONTRACT §2 put: it may skip a value already stored at that version; §3: others
/// stay).
async fn keeps_values_first_stored_by_deleted_checkpoints(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let (ra, rb) = (cx.thread("run-a"), cx.thread("run-b"));
    let c1 = cx.put(&cfg, run_step(&ra).value("x", json!("x@1"), 1)).await?;
    let c2 = cx.put(&c1, run_step(&rb).carry("x", json!("x@1"), 1).value("y", json!("y@1"), 1)).await?;
    let c3 = run_step(&ra).carry("x", json!("x@1"), 1).carry("y", json!("y@1"), 1).value("z", json!("z@1"), 1);
    let c3 = cx.put(&c2, c3).await?;
    let before = cx.get_some(&c2).await?;
    cx.delete_for_runs(&[&ra]).await?;
    let after = cx.after(format!("after delete_for_runs([{ra}])"));
    after.get_none(&c1).await?;
    after.get_none(&c3).await?;
    after.expect_tuple(&c2, &before).await
}

/// The writes go with the deleted checkpoint: putting the same checkpoint id again
/// afterwards (CONTRACT §2: writes show up once their checkpoint is put) shows none of them.
async fn deleted_writes_do_not_return_on_reput(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let r1 = cx.thread("run1");
    let step = run_step(&r1);
    let id = step.id().to_owned();
    let c1 = cx.put(&cfg, step).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("old"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.delete_for_runs(&[&r1]).await?;
    cx.after(format!("after delete_for_runs([{r1}])")).get_none(&c1).await?;
    cx.put(&cfg, Step::new(&id)).await?;
    cx.after(format!("after delete_for_runs([{r1}]) and putting {id} again")).expect_writes(&c1, &[]).await
}

/// Only an exactly equal `run_id` string counts: not a prefix, an extension, another case,
/// a list or object containing it, null or a missing key.
async fn run_id_matches_exactly(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let t = cfg.thread_id.clone();
    let run = cx.thread("run");
    let target = cx.put(&cfg, run_step(&run)).await?;
    let near = [
        json!(format!("{run}0")),
        json!(run[..run.len() - 1].to_owned()),
        json!(run.to_uppercase()),
        json!(format!("%{run}")),
        json!([run.clone()]),
        json!({ "run_id": run.clone() }),
        serde_json::Value::Null,
    ];
    let mut kept = Vec::new();
    for v in near {
        kept.push(cx.put(&cfg, Step::fresh().meta("run_id", v)).await?);
    }
    kept.push(cx.put(&cfg, Step::fresh()).await?);
    cx.delete_for_runs(&[&run]).await?;
    let after = cx.after(format!("after delete_for_runs([{run}])"));
    after.get_none(&target).await?;
    let mut want: Vec<&str> = kept.iter().map(id_of).collect();
    want.reverse();
    after.expect_ids(&t, &ListOptions::all(), &want).await
}

/// Only the top-level metadata key `run_id` counts: the run id as another key's value, in
/// `parents`, nested under another key, or as the thread id does not make a checkpoint
/// part of the run.
async fn only_top_level_run_id_counts(cx: Cx) -> Checked {
    let cfg = cx.config("main");
    let run = cx.thread("run");
    let target = cx.put(&cfg, run_step(&run)).await?;
    let k1 = cx.put(&cfg, Step::fresh().meta("parent_run_id", json!(run))).await?;
    let k2 = cx.put(&cfg, Step::fresh().meta("parents", json!({ "": run }))).await?;
    let k3 = cx.put(&cfg, Step::fresh().meta("nested", json!({ "run_id": run }))).await?;
    let same_name = CheckpointConfig::new(run.clone());
    let k4 = cx.put(&same_name, Step::fresh().meta("run_id", json!("other"))).await?;
    cx.delete_for_runs(&[&run]).await?;
    let after = cx.after(format!("after delete_for_runs([{run}])"));
    after.get_none(&target).await?;
    after.expect_ids(&cfg.thread_id, &ListOptions::all(), &[id_of(&k3), id_of(&k2), id_of(&k1)]).await?;
    after.expect_ids(&run, &ListOptions::all(), &[id_of(&k4)]).await
}

/// One checkpoint id X stored in (T, "") by run A, in (T, "child:1") and in (U, "") by run
/// B, each with its own write: deleting run A removes only (T, "", X); the other two keep
/// their writes.
async fn same_id_elsewhere_is_untouched(cx: Cx) -> Checked {
    let t = cx.thread("t");
    let u = cx.thread("u");
    let (ra, rb) = (cx.thread("run-a"), cx.thread("run-b"));
    let id = new_id();
    let places = [(t.as_str(), "", &ra), (t.as_str(), "child:1", &rb), (u.as_str(), "", &rb)];
    for (thread, ns, run) in places {
        let cfg = CheckpointConfig::new(thread).with_ns(ns);
        let stored = cx.put(&cfg, Step::new(&id).meta("run_id", json!(run))).await?;
        cx.put_writes(&stored, vec![("ch", jv(json!(format!("{thread}/{ns}"))))], "task-1", "").await?;
    }
    cx.delete_for_runs(&[&ra]).await?;
    let after = cx.after(format!("after delete_for_runs([{ra}])"));
    after.get_none(&at(&t, "").with_id(&id)).await?;
    let kept_child = [pending("task-1", "", "ch", jv(json!(format!("{t}/child:1"))))];
    after.expect_writes(&at(&t, "child:1").with_id(&id), &kept_child).await?;
    let kept_other = [pending("task-1", "", "ch", jv(json!(format!("{u}/"))))];
    after.expect_writes(&at(&u, "").with_id(&id), &kept_other).await
}

/// CONTRACT §1 "Identifiers are opaque" and §3 delete_for_runs ("others stay"): for each
/// identifier class, deleting the run of its first variant (`"a"`, `"\u{e9}"`, `"a:b"`,
/// `"a%"`, ...) removes that run's checkpoint only; the checkpoints of the class's other
/// run ids (`"A"`, `"e\u{301}"`, `"ab"`, ...) stay.
async fn run_ids_of_every_class_stay_apart(cx: Cx) -> Checked {
    for class in Class::ALL {
        let cfg = cx.config("runs");
        let runs = class.variants(&cx.thread("run"));
        let mut stored = Vec::new();
        for run in &runs {
            stored.push(cx.put(&cfg, run_step(run)).await?);
        }
        cx.delete_for_runs(&[&runs[0]]).await?;
        let after = cx.after(format!("after delete_for_runs([{}]) ({} class)", shown(&runs[0]), class.name()));
        after.get_none(&stored[0]).await?;
        for c in &stored[1..] {
            after.get_some(c).await?.expect_config(c)?;
        }
    }
    Ok(())
}

/// The case's call of this capability's method ([`Cx`]'s calls of the base methods are in
/// `crate::calls`).
impl Cx {
    /// `delete_for_runs(run_ids)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn delete_for_runs(&self, run_ids: &[&str]) -> Checked {
        let ids: Vec<String> = run_ids.iter().map(|s| (*s).to_owned()).collect();
        let call = conformance_core::Call::DeleteForRuns { run_ids: ids.clone() };
        self.call(call, self.saver().delete_for_runs(&ids)).await.or_fail().map(|_| ())
    }
}
