//! Issue 13 items 1 and 3 to 7: what `cargo xtask conformance` does with dangerous or bad
//! input, and what it leaves behind. Each test failed before its fix (see the issue note).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::*;

/// Item 1 (attack): `--sqlite-path` a dangling symbolic link: the file it points at is the
/// database SQLite would create, so a report there is refused and nothing is created.
#[test]
fn a_report_is_never_the_target_of_a_dangling_database_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::os::unix::fs::symlink("real.db", d.join("dlink")).unwrap();
    let out = xtask_in(
        d,
        &["--sqlite-path", d.join("dlink").to_str().unwrap(), "--json", d.join("real.db").to_str().unwrap()],
        &[],
    );
    assert_usage(&out, "is the --sqlite-path database");
    assert!(!d.join("real.db").exists(), "the report was written where the database goes");
}

/// Item 1 (attack): a report path that is a dangling symbolic link (or chain) to the
/// database's side file, or to the database a run would create, is refused with exit 2:
/// nothing is written through it and no database is created.
#[test]
fn a_dangling_report_link_never_reaches_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    database(&d.join("db.sqlite"));
    let before = std::fs::read(d.join("db.sqlite")).unwrap();
    std::os::unix::fs::symlink("db.sqlite-journal", d.join("rep.json")).unwrap();
    std::os::unix::fs::symlink("hop", d.join("chain.xml")).unwrap();
    std::os::unix::fs::symlink("fresh.db", d.join("hop")).unwrap();
    std::os::unix::fs::symlink("fresh.db", d.join("fresh.json")).unwrap();
    let cases = [
        ("db.sqlite", "--json", "rep.json"),
        ("fresh.db", "--json", "fresh.json"),
        ("fresh.db", "--junit", "chain.xml"),
    ];
    for (db, flag, report) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .current_dir(d)
            .args(["conformance", "--sqlite-path", db, flag, report, "--capabilities", "put", "--progress", "quiet"])
            .env("NO_COLOR", "1")
            .env("TMPDIR", d)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        assert_usage(&out, "is the --sqlite-path database");
        assert_eq!(names(d), ["chain.xml", "db.sqlite", "fresh.json", "hop", "rep.json"], "{db} {flag} {report}");
        assert_eq!(std::fs::read(d.join("db.sqlite")).unwrap(), before);
    }
}

/// Item 1: a report path that is, or resolves to, the database or one of its side files,
/// or another report, is refused with exit 2 and the database's bytes stay as they were.
#[test]
fn a_report_never_overwrites_the_database_or_another_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("db.sqlite");
    database(&db);
    std::os::unix::fs::symlink(&db, d.join("link.sqlite")).unwrap();
    std::fs::hard_link(&db, d.join("hard.sqlite")).unwrap();
    let before = std::fs::read(&db).unwrap();
    let db_s = db.to_str().unwrap().to_owned();
    let rel = "./db.sqlite";
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--json".into(), db_s.clone()], "is the --sqlite-path database"),
        (vec!["--junit".into(), db_s.clone()], "is the --sqlite-path database"),
        (vec!["--json".into(), d.join("link.sqlite").to_str().unwrap().into()], "is the --sqlite-path database"),
        (vec!["--json".into(), d.join("hard.sqlite").to_str().unwrap().into()], "is the --sqlite-path database"),
        (vec!["--json".into(), format!("{db_s}-wal")], "is the --sqlite-path database"),
        (vec!["--json".into(), format!("{db_s}-shm")], "is the --sqlite-path database"),
        (vec!["--junit".into(), format!("{db_s}-journal")], "is the --sqlite-path database"),
        (vec!["--json".into(), format!("{db_s}.case-1-0")], "named like a case file"),
        (
            vec!["--json".into(), d.join("r.json").to_str().unwrap().into(), "--junit".into(), "r.json".into()],
            "are the same file",
        ),
    ];
    for (extra, needle) in cases {
        let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
        c.current_dir(d).args(["conformance", "--sqlite-path", rel, "--capabilities", "put", "--progress", "quiet"]);
        let out = c.args(&extra).env("NO_COLOR", "1").env_remove("GITHUB_STEP_SUMMARY").output().unwrap();
        assert_usage(&out, needle);
        assert_eq!(std::fs::read(&db).unwrap(), before, "{extra:?}: the database changed");
        assert_eq!(names(d), ["db.sqlite", "hard.sqlite", "link.sqlite"], "{extra:?}");
    }
    // The step summary is an output too.
    let out = xtask_in(
        d,
        &["--backend", "memory", "--json", d.join("s.md").to_str().unwrap()],
        &[("GITHUB_STEP_SUMMARY", d.join("s.md").to_str().unwrap())],
    );
    assert_usage(&out, "are the same file");
}

/// Item 7 (attack): `$GITHUB_STEP_SUMMARY` naming a FIFO (which blocked the run forever
/// after its report), a directory or a file in a missing directory (which ran the whole
/// suite, then exited 1) is refused before any case runs: one line, exit 2.
#[test]
fn an_unwritable_step_summary_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("summary.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let cases =
        [(fifo.clone(), "is a FIFO"), (d.to_path_buf(), "is a directory"), (d.join("no/s.md"), "does not exist")];
    for (summary, needle) in cases {
        let child = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["conformance", "--backend", "memory", "--capabilities", "put", "--progress", "quiet"])
            .env("NO_COLOR", "1")
            .env("TMPDIR", d)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_or_kill(child, &format!("$GITHUB_STEP_SUMMARY {}", summary.display()));
        assert_usage(&out, "$GITHUB_STEP_SUMMARY");
        assert_usage(&out, needle);
        assert!(text(&out.stdout).is_empty(), "cases ran: {}", text(&out.stdout));
    }
}

/// Item 4: a run on a WAL-mode database leaves no -wal / -shm beside it (and item 3: no
/// case file either).
#[test]
fn a_wal_database_is_left_as_it_was_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wal.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
    }
    assert_eq!(names(dir.path()), ["wal.sqlite"]);
    let before = std::fs::read(&db).unwrap();
    let out = xtask_in(
        dir.path(),
        &["--sqlite-path", db.to_str().unwrap(), "--capabilities", "put", "--progress", "quiet"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(names(dir.path()), ["wal.sqlite"], "side files or case files were left");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// Item 5: a FIFO as --sqlite-path is refused without opening it (opening blocks forever).
#[test]
fn a_fifo_is_refused_without_opening_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["conformance", "--sqlite-path", fifo.to_str().unwrap()])
        .env("TMPDIR", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert_usage(&wait_or_kill(child, "the FIFO"), "not a regular file");
}

/// Item 6: a database another process holds locked is said to be locked.
#[test]
fn a_locked_database_is_reported_as_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locked.sqlite");
    database(&db);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE; INSERT INTO t VALUES (2);").unwrap();
    let out = xtask_in(dir.path(), &["--sqlite-path", db.to_str().unwrap()], &[]);
    assert_usage(&out, "holds locked");
    assert!(!text(&out.stderr).contains("not an SQLite database"), "{}", text(&out.stderr));
    holder.execute_batch("ROLLBACK").unwrap();
}

/// A database with a hot journal (a writer died mid-transaction) is said to have one, not to
/// be "not an SQLite database" (SQLite answers a read-only reader SQLITE_READONLY_ROLLBACK).
#[test]
fn a_hot_journal_is_reported_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let (src, db) = (dir.path().join("writer.sqlite"), dir.path().join("hot.sqlite"));
    let writer = rusqlite::Connection::open(&src).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    // A transaction too big for the cache spills pages into the database file, so the
    // journal is synced with a valid header: a copy taken now is a crash in mid-write.
    writer
        .execute_batch(
            "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) \
             INSERT INTO t SELECT randomblob(300) FROM n;",
        )
        .unwrap();
    std::fs::copy(&src, &db).unwrap();
    std::fs::copy(dir.path().join("writer.sqlite-journal"), dir.path().join("hot.sqlite-journal")).unwrap();
    writer.execute_batch("ROLLBACK").unwrap();
    let out = xtask_in(dir.path(), &["--sqlite-path", db.to_str().unwrap()], &[]);
    assert_usage(&out, "has a hot journal");
    assert!(dir.path().join("hot.sqlite-journal").exists(), "the journal was rolled back");
}

/// Item 7: bad environment values, a malformed URL and a name too long: one line, exit 2.
#[test]
fn bad_settings_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (k, v) in [
        ("CHECKPOINT_CONFORMANCE_KILLS", "many"),
        ("CHECKPOINT_CONFORMANCE_SEED", "-1"),
        // Review finding: 0 ran a crash test that killed nothing; 2^32 - 1 ran forever.
        ("CHECKPOINT_CONFORMANCE_KILLS", "0"),
        ("CHECKPOINT_CONFORMANCE_KILLS", "4294967295"),
    ] {
        assert_usage(&xtask_in(d, &["--backend", "memory"], &[(k, v)]), k);
    }
    let out = xtask_in(d, &["--backend", "postgres", "--postgres-url", "postgresql://u:pw@127.0.0.1:notaport/db"], &[]);
    assert_usage(&out, "--postgres-url");
    assert!(!text(&out.stderr).contains(":pw@"), "the password is shown: {}", text(&out.stderr));
    let out = xtask_in(d, &["--backend", "postgres"], &[("CHECKPOINT_POSTGRES_URL", "postgresql://x@h:port:bad/")]);
    assert_usage(&out, "CHECKPOINT_POSTGRES_URL");
    let long = d.join("x".repeat(300));
    assert_usage(&xtask_in(d, &["--sqlite-path", long.to_str().unwrap()], &[]), "File name too long");
    // A base name that fits, but whose case files' names would not.
    let near = d.join("y".repeat(245));
    assert_usage(&xtask_in(d, &["--sqlite-path", near.to_str().unwrap()], &[]), "too long");
    assert!(names(d).is_empty(), "{:?}", names(d));
}

/// Item 3: what a killed run left (case files beside --sqlite-path, per-case temporary
/// directories) is removed by the next run and named on stderr; a live run's are kept.
#[test]
fn the_next_run_removes_what_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let db = d.join("db.sqlite");
    // A pid above the kernel's limit (2^22) belongs to no process.
    let dead = 4_194_400;
    let me = std::process::id();
    for n in
        [format!("db.sqlite.case-{dead}-3"), format!("db.sqlite.case-{dead}-3-wal"), format!("db.sqlite.case-{me}-0")]
    {
        std::fs::write(d.join(n), b"x").unwrap();
    }
    // The killed run's marker, the proof that those case files are the kit's (issue 40 row 6).
    let marker = format!(
        "checkpoint-conformance: the case files db.sqlite.case-{dead}-<n> beside db.sqlite are process {dead}'s\n"
    );
    std::fs::write(d.join(format!("db.sqlite.case-{dead}.kit")), marker).unwrap();
    std::fs::create_dir(tmp.join(format!("checkpoint-sqlite-{dead}-0"))).unwrap();
    std::fs::write(tmp.join(format!("checkpoint-sqlite-{dead}-0/checkpoints.sqlite")), b"x").unwrap();
    std::fs::create_dir(tmp.join(format!("checkpoint-sqlite-{me}-0"))).unwrap();
    let args = ["--capabilities", "put", "--progress", "quiet"];
    let out = xtask_in(&tmp, &[&["--sqlite-path", db.to_str().unwrap()][..], &args].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("db.sqlite.case-{dead}-3-wal, left by an earlier run")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(names(d), [format!("db.sqlite.case-{me}-0"), "tmp".into()]);
    let out = xtask_in(&tmp, &args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("checkpoint-sqlite-{dead}-0, left by an earlier run")));
    assert_eq!(names(&tmp), [format!("checkpoint-sqlite-{me}-0")], "only the live process's entry stays");
}

/// Item 3: a run out of file handles still removes every temporary directory it made.
#[test]
fn running_out_of_file_handles_leaks_no_temp_dir() {
    let dir = tempfile::tempdir().unwrap();
    let tmp: PathBuf = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let script =
        format!("ulimit -n 24 && exec '{}' conformance --progress quiet --jobs 4", env!("CARGO_BIN_EXE_xtask"));
    let out = Command::new("sh").args(["-c", &script]).env("TMPDIR", &tmp).env("NO_COLOR", "1").output().unwrap();
    assert!(text(&out.stdout).contains("Too many open files"), "the limit did not bite: {}", text(&out.stdout));
    assert!(names(&tmp).is_empty(), "left in the temp dir: {:?}", names(&tmp));
}

/// Item 14: an empty NO_COLOR= does not turn colour off on a terminal (no-color.org);
/// NO_COLOR=1 does. Runs under `script` for a pseudo-terminal.
#[test]
fn an_empty_no_color_keeps_colour_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` (util-linux) for a pseudo-terminal");
        return;
    }
    let run = |no_color: &str| {
        let cmd = format!("'{}' conformance --backend memory --capabilities put", env!("CARGO_BIN_EXE_xtask"));
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("NO_COLOR", no_color)
            .env("TERM", "xterm")
            .env_remove("FORCE_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        text(&out.stdout)
    };
    assert!(run("").contains("\x1b["), "NO_COLOR= (empty) turned colour off");
    assert!(!run("1").contains("\x1b["), "NO_COLOR=1 kept colour on");
    assert!(!run("0").contains("\x1b["), "NO_COLOR=0 kept colour on (any non-empty value turns it off)");
}

/// Issue 13: a `--postgres-url` (or `$CHECKPOINT_POSTGRES_URL`) no server answers is one
/// line naming the URL, its password hidden, and the connection error, exit 2, before any
/// case runs (it was every capability "not implemented", with no cause).
#[test]
fn an_unreachable_postgres_server_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = "postgresql://u:pw@127.0.0.1:1/x";
    let out = xtask_in(dir.path(), &["--backend", "postgres", "--postgres-url", url], &[]);
    assert_usage(&out, "--postgres-url: cannot connect to `postgresql://u:***@127.0.0.1:1/x` (error connecting");
    assert!(text(&out.stderr).contains("refused"), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains(":pw@") && text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    let out = xtask_in(dir.path(), &["--backend", "postgres"], &[("CHECKPOINT_POSTGRES_URL", url)]);
    assert_usage(&out, "$CHECKPOINT_POSTGRES_URL: cannot connect to");
}

/// Issue 13: a `--sqlite-path` whose directory fits the filesystem but makes the case
/// files' full paths longer than SQLite takes is one line and exit 2 before any case runs
/// (every case failed, level NONE), and the probe leaves nothing behind.
#[test]
fn a_path_too_long_for_sqlite_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("d".repeat(200)).join("e".repeat(200)).join("f".repeat(200));
    std::fs::create_dir_all(&deep).unwrap();
    let out = xtask_in(dir.path(), &["--sqlite-path", deep.join("db.sqlite").to_str().unwrap()], &[]);
    assert_usage(&out, "more than the 511 SQLite takes");
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    assert!(names(&deep).is_empty(), "{:?}", names(&deep));
}

/// Issue 13: the lock files of runs that did not finish (a run killed with SIGKILL, and
/// one by hand for a pid no process has) are removed by the next run, which names them in
/// one line; a run that ended on an error leaves none behind to be named.
#[test]
fn the_next_run_names_the_lock_files_it_removes() {
    let dir = tempfile::tempdir().unwrap();
    let locks = dir.path().join("checkpoint-conformance");
    let mut killed = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["conformance", "--progress", "quiet", "--jobs", "1"])
        .env("TMPDIR", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = locks.join(format!("{}.lock", killed.id()));
    let start = Instant::now();
    while !lock.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(lock.exists(), "the run made no lock file");
    // A pid above the kernel's limit (2^22) belongs to no process.
    std::fs::write(locks.join("4194400.lock"), b"").unwrap();
    let run = || xtask_in(dir.path(), &["--backend", "memory", "--capabilities", "put", "--progress", "quiet"], &[]);
    let out = run();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("lock file")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains(&format!("removed 2 lock files from {}", locks.display())), "{}", notes[0]);
    assert!(notes[0].contains(&format!("{}, 4194400, gone)", killed.id())), "{}", notes[0]);
    // A run that ended on a usage error after its start (an unreachable server) takes its
    // lock with it: the next run has nothing to name.
    let refused = xtask_in(dir.path(), &["--backend", "postgres", "--postgres-url", "postgresql://127.0.0.1:1/x"], &[]);
    assert_usage(&refused, "cannot connect");
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("lock file"), "{}", text(&out.stderr));
    assert!(!locks.exists() || names(&locks).is_empty(), "{:?}", names(&locks));
}

/// Issue 13 (attack): the crash test's children, killed with SIGKILL, leave no lock file:
/// the parent removes each once it has reaped the child, so the next run names none.
#[test]
fn a_crash_test_leaves_no_lock_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let locks = dir.path().join("checkpoint-conformance");
    let run = |caps: &str| {
        xtask_in(
            dir.path(),
            &["--backend", "sqlite", "--capabilities", caps, "--progress", "quiet"],
            &[("CHECKPOINT_CONFORMANCE_KILLS", "3")],
        )
    };
    let out = run("durability");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!locks.exists() || names(&locks).is_empty(), "left: {:?}", names(&locks));
    let out = run("put");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("lock file"), "{}", text(&out.stderr));
}

/// Issue 13 (attack): environment values and a `--sqlite-path` that are not UTF-8 were
/// taken as unset (a throwaway server started for the URL) or failed 30 cases: each is one
/// line and exit 2.
#[test]
fn values_that_are_not_utf8_are_usage_errors() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &[&OsStr], env: Option<(&str, &OsStr)>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
        c.arg("conformance").args(args).env("NO_COLOR", "1").env("TMPDIR", d).env_remove("GITHUB_STEP_SUMMARY");
        c.env_remove("CHECKPOINT_POSTGRES_URL");
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let memory = [OsStr::new("--backend"), OsStr::new("memory")];
    for k in ["CHECKPOINT_CONFORMANCE_KILLS", "CHECKPOINT_CONFORMANCE_SEED"] {
        assert_usage(&run(&memory, Some((k, OsStr::from_bytes(b"\xff")))), k);
    }
    let pg = [OsStr::new("--backend"), OsStr::new("postgres")];
    let out = run(&pg, Some(("CHECKPOINT_POSTGRES_URL", OsStr::from_bytes(b"postgres://\xff"))));
    assert_usage(&out, "CHECKPOINT_POSTGRES_URL");
    let bad = d.join(OsStr::from_bytes(b"db-\xff.sqlite"));
    assert_usage(&run(&[OsStr::new("--sqlite-path"), bad.as_os_str()], None), "not valid UTF-8");
    assert!(names(d).is_empty(), "{:?}", names(d));
}

/// Issue 13 (attack): Ctrl-C on a `--backend python:memory` run removes the bridge's run
/// directory (`target/checkpoint-bridge/runs/run-<pid>-XXXXXX`); it was left empty. Needs
/// the bridge's Python environment (made on first use).
#[test]
fn an_interrupted_bridge_run_leaves_no_run_directory() {
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/checkpoint-bridge/runs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["conformance", "--backend", "python:memory", "--progress", "quiet", "--jobs", "1"])
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("run-{}-", child.id());
    let mine = || -> Vec<String> {
        std::fs::read_dir(&runs)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect::<Vec<String>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.starts_with(&prefix))
            .collect()
    };
    let start = Instant::now();
    while mine().is_empty() && start.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!mine().is_empty(), "the run made no run directory in {}", runs.display());
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    child.wait().unwrap();
    assert!(mine().is_empty(), "left: {:?}", mine());
}
