//! `delete_thread` (CONTRACT §2 delete_thread): every checkpoint, channel value and
//! pending write of the thread goes, in every namespace; nothing comes back when the same
//! ids are put again; other threads are untouched; an unknown thread is a no-op.

use std::collections::BTreeMap;

use conformance_core::{Capability, ListOptions, ERROR, INTERRUPT};
use serde_json::json;

use crate::calls::Cx;
use crate::compare::{ensure, Checked, Diffs};
use crate::data::adversarial::{shown, Class};
use crate::data::{at, jv, values, Ids, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::DeleteThread, needs [Put, PutWrites, GetTuple, List] => [
        #[rules(delete_thread.everything)] removes_every_checkpoint -[PutWrites] ["test_delete_thread_removes_checkpoints"],
        #[rules(delete_thread.everything)] removes_pending_writes -[List] ["test_delete_thread_removes_writes"],
        #[rules(delete_thread.everything)] #[uses(Namespaces)] removes_every_namespace ["test_delete_thread_removes_all_namespaces"],
        #[rules(delete_thread.others)] other_threads_untouched ["test_delete_thread_preserves_other_threads"],
        #[rules(delete_thread.unknown)] unknown_thread_is_noop -[GetTuple] ["test_delete_thread_nonexistent_noop"],
        #[rules(delete_thread.nothing_back)] removes_channel_values -[PutWrites, List],
        #[rules(delete_thread.others)] other_thread_with_the_same_ids_untouched -[PutWrites, List],
        #[rules(delete_thread.nothing_back)] reput_after_delete_starts_clean,
        #[rules(delete_thread.everything, delete_thread.nothing_back)] removes_writes_without_checkpoint -[List],
        #[rules(delete_thread.others, ids.opaque)] threads_sharing_a_prefix_untouched,
        #[rules(delete_thread.others, ids.opaque)] thread_id_pattern_characters_match_literally,
        #[rules(delete_thread.unknown)] delete_twice_is_noop,
        #[rules(delete_thread.unknown)] unknown_thread_on_a_fresh_saver_is_noop -[PutWrites, List],
        #[rules(delete_thread.others, ids.opaque)] threads_of_every_class_untouched,
    ])
}

/// Fails unless `thread` has nothing left: no latest checkpoint in any of `namespaces`,
/// none of `ids` fetchable there, and an empty listing of every namespace.
async fn expect_gone(cx: &Cx, ids: &Ids, thread: &str, namespaces: &[&str], labels: &[&str]) -> Checked {
    for ns in namespaces {
        cx.get_none(&at(thread, ns)).await?;
        for label in labels {
            cx.get_none(&at(thread, ns).with_id(ids.id(label))).await?;
        }
        cx.expect_list(ids, thread, &ListOptions::all().ns(*ns), &[]).await?;
    }
    cx.expect_list(ids, thread, &ListOptions::all(), &[]).await
}

/// Puts a small but complete thread on `thread`: a chain c0 <- c1 in `""`, each with its
/// values (c1 carries `a` at its unchanged version), and writes on c1. (Namespaces are
/// [`removes_every_namespace`]'s rule.)
async fn populate(cx: &Cx, ids: &Ids, thread: &str) -> Checked {
    let c0 = cx.put(&at(thread, ""), Step::new(ids.id("c0")).value("a", json!("a0"), 1)).await?;
    let c1 = cx.put(&c0, Step::new(ids.id("c1")).carry("a", json!("a0"), 1).value("b", json!("b1"), 1)).await?;
    cx.put_writes(&c1, vec![("a", jv(json!("w"))), (ERROR, jv(json!("e")))], "task-1", "").await
}

/// S17: after delete_thread no checkpoint of the thread is found: not the latest, not by
/// id, not by list (a silent no-op fails here).
async fn removes_every_checkpoint(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2"]);
    let mut parent = at(&t, "");
    for label in ["c0", "c1", "c2"] {
        parent = cx.put(&parent, Step::new(ids.id(label))).await?;
    }
    cx.expect_list(&ids, &t, &ListOptions::all(), &["c2", "c1", "c0"]).await?;
    cx.delete_thread(&t).await?;
    expect_gone(&cx, &ids, &t, &[""], &["c0", "c1", "c2"]).await
}

/// S13: the thread's pending writes are removed, not only its checkpoints: putting the
/// same checkpoint id again afterwards shows no old write (upstream only checks that
/// get_tuple returns none, which a saver leaving write rows passes).
async fn removes_pending_writes(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c1"]);
    let c1 = cx.put(&at(&t, ""), Step::new(ids.id("c1"))).await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("val"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.put_writes(&c1, vec![("ch", jv(json!("other")))], "task-2", "a:b").await?;
    let before = cx.after("before delete_thread").get_some(&c1).await?;
    // The rule is the delete's: any write read back before it will do (how many put_writes
    // keeps is put_writes's rule, judged in its own capability).
    ensure(!before.pending_writes.is_empty(), || {
        format!("{before}: pending_writes: expected the writes just put (3), got none, so the delete cannot be judged")
    })?;
    cx.delete_thread(&t).await?;
    cx.get_none(&c1).await?;
    let c1 = cx.put(&at(&t, ""), Step::new(ids.id("c1"))).await?;
    cx.after("after delete_thread and a new put of the same id").expect_writes(&c1, &[]).await
}

/// S13: delete_thread empties every namespace of the thread, not only the root: no
/// checkpoint is read or listed, and putting the same ids again in each namespace shows no
/// old write and no old channel value (a put naming the old version without a value reads
/// none).
async fn removes_every_namespace(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["r", "k1", "k2"]);
    let places = [("", "r"), ("child:1", "k1"), ("child:2", "k2")];
    for (ns, label) in places {
        let c = cx.put(&at(&t, ns), Step::new(ids.id(label)).value("a", json!(format!("old in {ns:?}")), 1)).await?;
        cx.put_writes(&c, vec![("ch", jv(json!(ns))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    }
    cx.get_some(&at(&t, "child:1")).await?;
    cx.delete_thread(&t).await?;
    expect_gone(&cx, &ids, &t, &["", "child:1", "child:2"], &["r", "k1", "k2"]).await?;
    let after = cx.after("after delete_thread and a put of the same id naming a@1 without a value");
    let mut d = Diffs::new();
    for (ns, label) in places {
        let again = cx.put(&at(&t, ns), Step::new(ids.id(label)).keep("a", 1)).await?;
        let got = after.get_some(&again).await?;
        d.of(&got).map("checkpoint.channel_values", &BTreeMap::new(), &got.checkpoint.channel_values).writes(
            "pending_writes",
            &[],
            &got.pending_writes,
        );
    }
    d.finish()
}

/// Other threads keep every checkpoint, value and write, tuple for tuple, even when they
/// reuse the deleted thread's checkpoint ids.
async fn other_threads_untouched(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = Ids::new(&["c0", "c1"]);
    populate(&cx, &ids, &t).await?;
    populate(&cx, &ids, &u).await?;
    let kept = cx.after("before delete_thread").list_all(&u).await?;
    kept.expect_eq("number of tuples", &2, &kept.len())?;
    cx.delete_thread(&t).await?;
    expect_gone(&cx, &ids, &t, &[""], &["c0", "c1"]).await?;
    cx.after(format!("after delete_thread({t})")).expect_listed(&u, &kept).await
}

/// Deleting a thread leaves another thread's checkpoints with the same checkpoint ids
/// readable, by id and as the latest, with their values (a saver that deletes or hides
/// checkpoints by id alone fails). Needs only put and get_tuple, so a saver without
/// put_writes or list is still judged on it.
async fn other_thread_with_the_same_ids_untouched(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = Ids::new(&["c0", "c1"]);
    for thread in [&t, &u] {
        let c0 = cx.put(&at(thread, ""), Step::new(ids.id("c0")).value("a", json!(thread), 1)).await?;
        // c1 carries its value itself (no kept channel), so the case needs nothing of put
        // beyond storing what it is given: it fails only on delete_thread's own rule.
        cx.put(&c0, Step::new(ids.id("c1")).value("a", json!(thread), 2)).await?;
    }
    cx.delete_thread(&t).await?;
    let after = cx.after(format!("after delete_thread({t})"));
    let mut d = Diffs::new();
    let want = values(&[("a", jv(json!(u)))]);
    for label in ["c0", "c1"] {
        let got = after.get_some(&at(&u, "").with_id(ids.id(label))).await?;
        d.of(&got).map("checkpoint.channel_values", &want, &got.checkpoint.channel_values);
    }
    let latest = after.get_some(&at(&u, "")).await?;
    d.of(&latest).eq("checkpoint.id", &ids.id("c1"), &latest.checkpoint.id.as_str());
    d.finish()?;
    after.get_none(&at(&t, "")).await
}

/// S14: deleting a thread that never existed succeeds and changes nothing.
async fn unknown_thread_is_noop(cx: Cx) -> Checked {
    let u = cx.thread("other");
    let ids = Ids::new(&["c0", "c1"]);
    populate(&cx, &ids, &u).await?;
    let kept = cx.list_all(&u).await?;
    let never = cx.thread("never-existed");
    cx.delete_thread(&never).await?;
    cx.expect_list(&ids, &never, &ListOptions::all(), &[]).await?;
    cx.after(format!("after delete_thread({never})")).expect_listed(&u, &kept).await
}

/// CONTRACT §2 delete_thread: deleting an unknown thread is a no-op even as the first call
/// a fresh saver gets (LangGraph's `AsyncSqliteSaver` made its tables only on other calls,
/// B8), and the saver works afterwards.
async fn unknown_thread_on_a_fresh_saver_is_noop(cx: Cx) -> Checked {
    let never = cx.thread("never-existed");
    cx.delete_thread(&never).await?;
    let t = cx.thread("main");
    let ids = Ids::new(&["c0"]);
    let c0 = cx.put(&at(&t, ""), Step::new(ids.id("c0")).value("a", json!("v"), 1)).await?;
    cx.get_some(&c0).await.map(drop)
}

/// S13: channel values go with the thread: a checkpoint put again afterwards that names an
/// old (channel, version) without carrying a value reads no value, and a new value at the
/// old version reads back new (a saver that keeps old values and skips storing a value
/// "already stored at that version" fails both).
async fn removes_channel_values(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1", "c2"]);
    let c0 = cx
        .put(&at(&t, ""), Step::new(ids.id("c0")).value("a", json!("old-a"), 1).value("b", json!("old-b"), 1))
        .await?;
    cx.put(&c0, Step::new(ids.id("c1")).carry("a", json!("old-a"), 1).value("b", json!("old-b2"), 2)).await?;
    cx.delete_thread(&t).await?;

    let mut d = Diffs::new();
    let c0 = cx.put(&at(&t, ""), Step::new(ids.id("c0")).keep("a", 1).keep("b", 1)).await?;
    let got = cx.after("after delete_thread and a put naming versions a=1, b=1 without values").get_some(&c0).await?;
    d.of(&got).map("checkpoint.channel_values", &BTreeMap::new(), &got.checkpoint.channel_values);
    let c2 = cx.put(&c0, Step::new(ids.id("c2")).value("a", json!("new-a"), 1).value("b", json!("new-b"), 2)).await?;
    let got = cx.after("after delete_thread").get_some(&c2).await?;
    let want = values(&[("a", jv(json!("new-a"))), ("b", jv(json!("new-b")))]);
    d.of(&got).map("checkpoint.channel_values", &want, &got.checkpoint.channel_values);
    d.finish()
}

/// S13: after delete_thread, putting one of the old ids again gives a thread holding only
/// that checkpoint: no other old checkpoint, parent link or write comes back.
async fn reput_after_delete_starts_clean(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1"]);
    populate(&cx, &ids, &t).await?;
    cx.delete_thread(&t).await?;
    expect_gone(&cx, &ids, &t, &[""], &["c0", "c1"]).await?;
    let c1 = cx.put(&at(&t, ""), Step::new(ids.id("c1"))).await?;
    cx.expect_list_ns(&ids, &t, &ListOptions::all(), &[("", "c1")]).await?;
    let after = cx.after("after delete_thread and a put of the same id without parent");
    let got = after.get_some(&c1).await?;
    got.expect_parent(None)?;
    after.expect_writes(&c1, &[]).await
}

/// Writes stored for a checkpoint that was never put belong to the thread too: they are
/// removed, so a later put of that id shows none of them.
async fn removes_writes_without_checkpoint(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let ids = Ids::new(&["c0", "c1"]);
    cx.put(&at(&t, ""), Step::new(ids.id("c0"))).await?;
    let early = at(&t, "").with_id(ids.id("c1"));
    cx.put_writes(&early, vec![("ch", jv(json!("early"))), (INTERRUPT, jv(json!("q")))], "task-1", "").await?;
    cx.delete_thread(&t).await?;
    let c1 = cx.put(&at(&t, ""), Step::new(ids.id("c1"))).await?;
    cx.after("after delete_thread and a first put of an id that had early writes").expect_writes(&c1, &[]).await
}

/// Threads whose ids extend the deleted one (`T1` vs `T10`) or are a prefix of it (`T`
/// vs `T1`) are untouched.
async fn threads_sharing_a_prefix_untouched(cx: Cx) -> Checked {
    let base = cx.thread("p");
    let (shorter, deleted, longer) = (base.clone(), format!("{base}1"), format!("{base}10"));
    let ids = Ids::new(&["c0", "c1"]);
    for th in [&shorter, &deleted, &longer] {
        populate(&cx, &ids, th).await?;
    }
    let kept_shorter = cx.list_all(&shorter).await?;
    let kept_longer = cx.list_all(&longer).await?;
    cx.delete_thread(&deleted).await?;
    expect_gone(&cx, &ids, &deleted, &[""], &["c0", "c1"]).await?;
    let after = cx.after(format!("after delete_thread({deleted})"));
    after.expect_listed(&shorter, &kept_shorter).await?;
    after.expect_listed(&longer, &kept_longer).await
}

/// A thread id with SQL pattern characters (`T_%`) is matched literally: deleting it leaves
/// the threads such a pattern would match (`Tx`, `Tab`) and one that extends it (`T_%0`).
async fn thread_id_pattern_characters_match_literally(cx: Cx) -> Checked {
    let base = cx.thread("w");
    let deleted = format!("{base}_%");
    let others = [format!("{base}x"), format!("{base}ab"), format!("{base}_%0")];
    let ids = Ids::new(&["c0", "c1"]);
    populate(&cx, &ids, &deleted).await?;
    let mut kept = Vec::new();
    for th in &others {
        populate(&cx, &ids, th).await?;
        kept.push(cx.list_all(th).await?);
    }
    cx.delete_thread(&deleted).await?;
    expect_gone(&cx, &ids, &deleted, &[""], &["c0", "c1"]).await?;
    let after = cx.after(format!("after delete_thread({deleted})"));
    for (th, before) in others.iter().zip(&kept) {
        after.expect_listed(th, before).await?;
    }
    Ok(())
}

/// Deleting the same thread twice succeeds; the thread stays empty and others intact.
async fn delete_twice_is_noop(cx: Cx) -> Checked {
    let t = cx.thread("main");
    let u = cx.thread("other");
    let ids = Ids::new(&["c0", "c1"]);
    populate(&cx, &ids, &t).await?;
    populate(&cx, &ids, &u).await?;
    let kept = cx.list_all(&u).await?;
    cx.delete_thread(&t).await?;
    cx.delete_thread(&t).await?;
    expect_gone(&cx, &ids, &t, &[""], &["c0", "c1"]).await?;
    cx.after(format!("after deleting {t} twice")).expect_listed(&u, &kept).await
}

/// CONTRACT §1 "Identifiers are opaque" and §2 delete_thread ("other threads are
/// untouched"): for each identifier class, deleting its first thread (`"a"`, `"é"`,
/// `"a:b"`, `"a%"`, ...) leaves every other thread of the class (`"A"`, `"e\u{301}"`,
/// `"ab"`, ...) as it was. A long thread id may be refused at its put.
async fn threads_of_every_class_untouched(cx: Cx) -> Checked {
    let ids = Ids::new(&["c0", "c1"]);
    for class in Class::ALL {
        let base = cx.thread("class");
        let mut threads = Vec::new();
        for th in class.variants(&base) {
            let first = Step::new(ids.id("c0")).value("a", json!("a0"), 1);
            if cx.put_or_refused(class, &at(&th, ""), first).await?.is_some() {
                populate(&cx, &ids, &th).await?;
                threads.push(th);
            }
        }
        let Some((deleted, others)) = threads.split_first() else { continue };
        let mut kept = Vec::new();
        for th in others {
            kept.push(cx.list_all(th).await?);
        }
        cx.delete_thread(deleted).await?;
        expect_gone(&cx, &ids, deleted, &[""], &["c0", "c1"]).await?;
        let after = cx.after(format!("after delete_thread({}) ({} class)", shown(deleted), class.name()));
        for (th, before) in others.iter().zip(&kept) {
            after.expect_listed(th, before).await?;
        }
    }
    Ok(())
}
