//! Runs the whole conformance catalog against the PostgreSQL saver through `validate()`, on
//! the server named by `CHECKPOINT_POSTGRES_URL` (start one with
//! `scripts/pg-test-server.sh start`).
//!
//! Without the variable the test cannot run: it says so on stderr (outside libtest's output
//! capture, so the reason is visible even though the test is reported as passed), and fails
//! instead when `CHECKPOINT_POSTGRES_REQUIRED=1` (set it in CI).

use std::io::Write;

use conformance_core::{Capability, Level, Outcome, RunOptions};

fn say(message: &str) {
    // Written to the process's stderr directly: `eprintln!` would be captured by libtest.
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// The schemas whose name starts with `prefix`.
fn leftover_schemas(url: &str, prefix: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(connection);
        let rows = client
            .query("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname::text, $1)", &[&prefix])
            .await
            .expect("query");
        rows.iter().map(|r| r.get(0)).collect()
    })
}

#[test]
fn postgres_saver_passes_every_case() {
    let Ok(url) = std::env::var("CHECKPOINT_POSTGRES_URL") else {
        let reason = "SKIPPED checkpoint-postgres conformance: CHECKPOINT_POSTGRES_URL is not set; start a \
                      throwaway server with `export CHECKPOINT_POSTGRES_URL=$(scripts/pg-test-server.sh start)`";
        if std::env::var("CHECKPOINT_POSTGRES_REQUIRED").is_ok_and(|v| v == "1") {
            panic!("{reason} (and CHECKPOINT_POSTGRES_REQUIRED=1)");
        }
        say(reason);
        return;
    };
    let options = RunOptions { jobs: 4, ..RunOptions::default() };
    let prefix = format!("checkpoint_validate_{}_", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let registration = checkpoint_postgres::registration_with_schema_prefix(&url, &prefix);
    let report = conformance_spec::validate(&registration, &options);
    assert!(report.setup_error.is_none(), "setup failed: {:?}", report.setup_error);
    let bad: Vec<String> = report
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::Passed)
        .map(|t| format!("{} [{:?}]: {}", t.id, t.outcome, t.message.as_deref().unwrap_or("")))
        .collect();
    let (passed, failed, other) = report.case_counts();
    say(&format!(
        "checkpoint-postgres conformance: {passed} passed, {failed} failed, {other} not run, level {}",
        report.conformance_level.as_str()
    ));
    assert!(bad.is_empty(), "{} case(s) did not pass:\n{}", bad.len(), bad.join("\n"));
    assert_eq!(leftover_schemas(&url, &prefix), Vec::<String>::new(), "schemas left behind after the run");
    assert!(passed > 0, "the catalog ran no case");
    assert!(report.warnings.is_empty(), "warnings: {:?}", report.warnings);
    let every_base_has_cases = Capability::BASE.iter().all(|c| report.tests.iter().any(|t| t.capability == *c));
    if every_base_has_cases {
        assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
    }
}
