//! Behaviour of the SQLite saver that the conformance catalog does not reach: two
//! instances on one file, group commit, open errors, large values stored by reference.

use std::sync::{Arc, Barrier};

use checkpoint_sqlite::{registration_at, SqliteOptions, SqliteSaver, Synchronous};
use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, ListOptions, PruneStrategy, TypedValue,
};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().expect("runtime")
}

fn id(n: u64) -> String {
    format!("1f0{n:029}")
}

/// A checkpoint `id` carrying `values` (all new at `version`).
fn step(id: &str, values: &[(&str, TypedValue)], version: i64) -> (Checkpoint, CheckpointMetadata, ChannelVersions) {
    let mut cp = Checkpoint { v: 1, id: id.to_owned(), ..Checkpoint::default() };
    for (ch, v) in values {
        cp.channel_values.insert((*ch).to_owned(), v.clone());
        cp.channel_versions.insert((*ch).to_owned(), ChannelVersion::Int(version));
    }
    let nv = cp.channel_versions.clone();
    (cp, json!({"source": "loop", "step": version}).as_object().cloned().unwrap_or_default(), nv)
}

async fn put(
    s: &SqliteSaver,
    cfg: &CheckpointConfig,
    step: (Checkpoint, CheckpointMetadata, ChannelVersions),
) -> CheckpointConfig {
    s.put(cfg, step.0, step.1, step.2).await.expect("put")
}

fn big(fill: u8) -> TypedValue {
    TypedValue::bytes(vec![fill; 100 * 1024])
}

fn count(path: &std::path::Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("raw connection");
    conn.query_row(sql, [], |r| r.get(0)).expect("count")
}

#[test]
fn two_instances_set_up_and_write_the_same_new_file_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("shared.sqlite");
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|k| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let saver = SqliteSaver::open(&path).expect("open at the same time");
                rt().block_on(async {
                    let mut tasks = Vec::new();
                    for t in 0..4u64 {
                        let s = saver.clone();
                        tasks.push(tokio::spawn(async move {
                            let mut parent = CheckpointConfig::new(format!("inst{k}-task{t}"));
                            for i in 0..25u64 {
                                parent =
                                    put(&s, &parent, step(&id(i), &[("a", TypedValue::json(&json!(i)))], i as i64 + 1))
                                        .await;
                                let shared = CheckpointConfig::new("shared").with_id(id(0));
                                s.put_writes(
                                    &shared,
                                    vec![("w".into(), TypedValue::json(&json!(i)))],
                                    &format!("i{k}t{t}n{i}"),
                                    "",
                                )
                                .await
                                .expect("put_writes never sees a locked database");
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.expect("task");
                    }
                });
                saver
            })
        })
        .collect();
    let savers: Vec<SqliteSaver> = handles.into_iter().map(|h| h.join().expect("thread")).collect();
    rt().block_on(async {
        for s in &savers {
            for k in 0..2 {
                for t in 0..4 {
                    let l = s.list(&format!("inst{k}-task{t}"), &ListOptions::all()).await.expect("list");
                    assert_eq!(l.len(), 25, "each instance sees every checkpoint of the other");
                }
            }
            s.put(
                &CheckpointConfig::new("shared"),
                step(&id(0), &[], 1).0,
                CheckpointMetadata::new(),
                ChannelVersions::new(),
            )
            .await
            .expect("put");
            let t = s.get_tuple(&CheckpointConfig::new("shared")).await.expect("get").expect("some");
            assert_eq!(t.pending_writes.len(), 2 * 4 * 25, "no acknowledged write is lost");
        }
    });
}

#[test]
fn group_commit_acknowledges_each_put_only_once_it_is_committed() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("group.sqlite");
    let saver = Arc::new(SqliteSaver::open(&path).expect("open"));
    rt().block_on(async {
        let mut tasks = Vec::new();
        for t in 0..8u64 {
            let (s, path) = (saver.clone(), path.clone());
            tasks.push(tokio::spawn(async move {
                let observer = rusqlite::Connection::open(&path).expect("observer");
                let mut parent = CheckpointConfig::new(format!("task-{t}"));
                for i in 0..20u64 {
                    parent = put(&s, &parent, step(&id(i), &[("a", TypedValue::json(&json!(i)))], i as i64 + 1)).await;
                    // Another connection sees it as soon as put returned: it was committed.
                    let seen: i64 = observer
                        .query_row(
                            "SELECT count(*) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2",
                            [parent.thread_id.as_str(), id(i).as_str()],
                            |r| r.get(0),
                        )
                        .expect("observe");
                    assert_eq!(seen, 1, "put returned before its commit");
                }
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
    });
    let stats = saver.writer_stats();
    assert_eq!(stats.requests, 160);
    assert!(stats.commits < stats.requests, "puts from 8 tasks share commits: {stats:?}");
}

#[test]
fn opening_reports_clear_typed_errors() {
    let dir = tempfile::tempdir().expect("dir");
    let missing = dir.path().join("no-such-dir").join("x.sqlite");
    let e = SqliteSaver::open(&missing).expect_err("missing directory");
    assert!(matches!(e, CheckpointError::Storage { .. }) && e.to_string().contains("does not exist"), "{e}");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "this is not a database, just some text that is long enough to fill a header")
        .expect("write");
    let e = SqliteSaver::open(&text).expect_err("not a database");
    assert!(e.display_chain().contains("not an SQLite database"), "{}", e.display_chain());
    assert!(registration_at(&text).is_err(), "registration_at checks an existing base file");
    assert!(registration_at(&missing).is_err(), "registration_at checks the directory");
    let e = SqliteSaver::open(dir.path()).expect_err("a directory");
    assert!(e.to_string().contains("directory"), "{e}");
    assert!(registration_at(dir.path().join("fresh.sqlite")).is_ok());
}

#[test]
fn large_values_are_shared_kept_by_prune_copied_and_collected() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("big.sqlite");
    let saver = SqliteSaver::open_with(&path, SqliteOptions::default().synchronous(Synchronous::Normal)).expect("open");
    rt().block_on(async {
        let t = CheckpointConfig::new("t");
        let c1 = put(&saver, &t, step(&id(1), &[("doc", big(1)), ("n", TypedValue::json(&json!(1)))], 1)).await;
        // c2 inherits doc without carrying it; c3 carries it unchanged (same version, same bytes).
        let (mut cp, md, _) = step(&id(2), &[("n", TypedValue::json(&json!(2)))], 2);
        cp.channel_versions.insert("doc".into(), ChannelVersion::Int(1));
        let nv: ChannelVersions = [("n".to_owned(), ChannelVersion::Int(2))].into();
        let c2 = saver.put(&c1, cp, md, nv).await.expect("put c2");
        let (mut cp, md, _) = step(&id(3), &[("n", TypedValue::json(&json!(3)))], 3);
        cp.channel_versions.insert("doc".into(), ChannelVersion::Int(1));
        cp.channel_values.insert("doc".into(), big(1));
        let nv: ChannelVersions = [("n".to_owned(), ChannelVersion::Int(3))].into();
        let c3 = saver.put(&c2, cp, md, nv).await.expect("put c3");
        assert_eq!(count(&path, "SELECT count(*) FROM blobs"), 1, "one copy of the unchanged large value");
        for c in [&c1, &c2, &c3] {
            let got = saver.get_tuple(c).await.expect("get").expect("some");
            assert_eq!(got.checkpoint.channel_values.get("doc"), Some(&big(1)), "{c}");
        }
        let l = saver.list("t", &ListOptions::all()).await.expect("list");
        assert!(l.iter().all(|x| x.checkpoint.channel_values.get("doc") == Some(&big(1))));

        // delta history seeds from a large value.
        let h = saver.delta_channel_history(&c3, &["doc".to_owned()]).await.expect("delta");
        assert_eq!(h.get("doc").and_then(|d| d.seed.clone()), Some(big(1)));

        // Copy, then delete the source: the copy still reads it.
        saver.copy_thread("t", "u").await.expect("copy");
        saver.copy_thread("t", "u").await.expect("copy again");
        saver.delete_thread("t").await.expect("delete");
        let u3 = CheckpointConfig::new("u").with_id(id(3));
        let got = saver.get_tuple(&u3).await.expect("get").expect("copied");
        assert_eq!(got.checkpoint.channel_values.get("doc"), Some(&big(1)));
        assert_eq!(count(&path, "SELECT count(*) FROM blobs WHERE thread_id = 't'"), 0);

        // Prune keeps the value the newest checkpoint reads.
        saver.prune(&["u".to_owned()], PruneStrategy::KeepLatest).await.expect("prune");
        let got = saver.get_tuple(&CheckpointConfig::new("u")).await.expect("get").expect("kept");
        assert_eq!(got.checkpoint.id, id(3));
        assert_eq!(got.checkpoint.channel_values.get("doc"), Some(&big(1)));
        assert_eq!(count(&path, "SELECT count(*) FROM blobs WHERE thread_id = 'u'"), 1);

        // Re-putting with another large value drops the old one once nothing reads it.
        let u = CheckpointConfig::new("u");
        put(&saver, &u, step(&id(3), &[("doc", big(2))], 9)).await;
        let got = saver.get_tuple(&u3).await.expect("get").expect("re-put");
        assert_eq!(got.checkpoint.channel_values.get("doc"), Some(&big(2)));
        assert_eq!(count(&path, "SELECT count(*) FROM blobs WHERE thread_id = 'u'"), 1);
        saver.delete_for_runs(&["nothing".to_owned()]).await.expect("no-op");
    });
}

#[test]
fn acknowledged_data_survives_dropping_the_instance() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("durable.sqlite");
    rt().block_on(async {
        let s = SqliteSaver::open(&path).expect("open");
        let c = put(&s, &CheckpointConfig::new("d"), step(&id(1), &[("a", TypedValue::json(&json!("x")))], 1)).await;
        s.put_writes(&c, vec![("a".into(), TypedValue::json(&json!("w")))], "task", "").await.expect("pw");
        drop(s);
        let s = SqliteSaver::open_async(&path, SqliteOptions::default()).await.expect("reopen");
        let t = s.get_tuple(&c).await.expect("get").expect("survived");
        assert_eq!(t.pending_writes.len(), 1);
    });
}

#[test]
fn filters_that_need_json_equality_in_rust_still_limit_after_filtering() {
    let dir = tempfile::tempdir().expect("dir");
    let saver = SqliteSaver::open(dir.path().join("f.sqlite")).expect("open");
    rt().block_on(async {
        let t = CheckpointConfig::new("f");
        for (i, tag) in [(1u64, json!({"a": [1, 2.0]})), (2, json!({"a": [1, 3]})), (3, json!({"a": [1.0, 2]}))] {
            let (cp, mut md, nv) = step(&id(i), &[], 1);
            md.insert("tag".into(), tag);
            md.insert("big".into(), json!(u64::MAX));
            saver.put(&t, cp, md, nv).await.expect("put");
        }
        let opts = ListOptions::all().filter("tag", json!({"a": [1, 2]})).limit(1);
        let ids: Vec<String> =
            saver.list("f", &opts).await.expect("list").into_iter().map(|x| x.checkpoint.id.clone()).collect();
        assert_eq!(ids, vec![id(3)], "numbers by value inside arrays; limit after the filter");
        let opts = ListOptions::all().filter("big", json!(u64::MAX - 1));
        assert!(saver.list("f", &opts).await.expect("list").is_empty(), "u64 compared exactly");
        let opts = ListOptions::all().filter("big", json!(u64::MAX));
        assert_eq!(saver.list("f", &opts).await.expect("list").len(), 3);
    });
}

#[test]
fn cached_reads_see_commits_of_other_instances_and_connections() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("cache.sqlite");
    let a = SqliteSaver::open(&path).expect("a");
    let b = SqliteSaver::open(&path).expect("b");
    rt().block_on(async {
        let t = CheckpointConfig::new("t");
        put(&a, &t, step(&id(1), &[("x", TypedValue::json(&json!(1)))], 1)).await;
        for _ in 0..3 {
            assert_eq!(a.get_tuple(&t).await.expect("get").expect("some").checkpoint.id, id(1));
            assert_eq!(a.list("t", &ListOptions::all()).await.expect("list").len(), 1);
        }
        put(&b, &t, step(&id(2), &[("x", TypedValue::json(&json!(2)))], 2)).await;
        assert_eq!(a.get_tuple(&t).await.expect("get").expect("some").checkpoint.id, id(2), "b's put seen by a");
        assert_eq!(a.list("t", &ListOptions::all()).await.expect("list").len(), 2);
        let c2 = t.clone().with_id(id(2));
        b.put_writes(&c2, vec![("x".into(), TypedValue::json(&json!("w")))], "task", "").await.expect("pw");
        assert_eq!(a.get_tuple(&t).await.expect("get").expect("some").pending_writes.len(), 1);
        // A plain connection (any process could do this) deletes behind the savers' backs.
        let raw = rusqlite::Connection::open(&path).expect("raw");
        raw.execute("DELETE FROM checkpoints WHERE thread_id = 't'", []).expect("delete");
        assert!(a.get_tuple(&t).await.expect("get").is_none(), "a raw commit invalidates the cache");
        assert!(a.list("t", &ListOptions::all()).await.expect("list").is_empty());
    });
}

#[test]
fn the_writer_checkpoints_the_wal_after_answering() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("wal.sqlite");
    let saver = SqliteSaver::open_with(&path, SqliteOptions::default().synchronous(Synchronous::Normal)).expect("open");
    rt().block_on(async {
        let mut parent = CheckpointConfig::new("w");
        // ~20 MiB of values (~5,000 WAL pages without checkpoints), far past the 1,000-page
        // threshold.
        for i in 0..200u64 {
            parent = put(&saver, &parent, step(&id(i), &[("doc", big(i as u8))], i as i64 + 1)).await;
        }
        // A cheap request after an idle moment: the writer has checkpointed by then.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        saver.put_writes(&parent, vec![("x".into(), TypedValue::json(&json!(1)))], "t", "").await.expect("pw");
    });
    let raw = rusqlite::Connection::open(&path).expect("raw");
    let (busy, log, done): (i64, i64, i64) =
        raw.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("ckpt");
    assert_eq!(busy, 0);
    assert!(log < 2500, "the WAL was checkpointed and restarted on the way ({log} frames, {done} checkpointed)");
}

/// `registration_at` never creates its base path and removes every case's files (the
/// database, `-wal`, `-shm`) after the case, and its marker with the registration: the cases that open one and two instances
/// (put, concurrency, durability without the crash test, which needs a binary that
/// re-executes itself: `tests/conformance.rs` runs it, registration `sqlite-beside`).
#[test]
fn a_registration_beside_a_path_creates_nothing_there_and_leaves_nothing_behind() {
    use conformance_core::{Capability, RunOptions};
    let dir = tempfile::tempdir().expect("dir");
    let base = dir.path().join("kit.sqlite");
    let registration = registration_at(&base).expect("a registration beside the path");
    let cases: Vec<_> = conformance_spec::catalog()
        .into_iter()
        .filter(|c| matches!(c.capability, Capability::Put | Capability::Concurrency | Capability::Durability))
        .filter(|c| c.name != "acknowledged_writes_survive_kill")
        .collect();
    let report = conformance_core::run::run(&registration, &cases, &RunOptions::default());
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(report.case_counts().0 > 20, "too few cases ran: {:?}", report.case_counts());
    assert!(!base.exists(), "the base path itself must not be created");
    // The process's marker of its case files goes with the registration (issue 40 row 6).
    let marker = dir.path().join(format!("kit.sqlite.case-{}.kit", std::process::id()));
    assert!(marker.exists(), "no marker while the registration lives");
    drop(registration);
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "case files left behind: {left:?}");
}
