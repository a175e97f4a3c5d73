//! Runs the whole conformance catalog against the PostgreSQL saver through `validate()` (the
//! programmatic front end), on the server named by `CHECKPOINT_POSTGRES_URL`, and checks
//! that the run left no schema behind.
//!
//! `harness = false`: the durability crash test re-executes this binary as a child process
//! that writes to the case's schema and is killed, so `main` first hands over to
//! `conformance_spec::child_main_if_requested`, then runs the check as a libtest trial.
//! Without the variable the trial is reported as ignored, with the reason on stderr; with
//! `CHECKPOINT_POSTGRES_REQUIRED=1` it fails instead.

use std::process::ExitCode;

use conformance_core::{Capability, Level, Outcome, RunOptions};

fn main() -> ExitCode {
    // The child of the crash test opens the schema it is given with this registration's
    // `open_at`, on the URL it inherited.
    if let Some(code) = conformance_spec::child_main_if_requested(&checkpoint_postgres::registration_from_env()) {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let url = std::env::var(checkpoint_postgres::URL_ENV).ok();
    let required = std::env::var(checkpoint_postgres::REQUIRED_ENV).is_ok_and(|v| v == "1");
    let trial = match url {
        Some(url) => libtest_mimic::Trial::test("postgres_saver_passes_every_case", move || {
            catch(move || postgres_saver_passes_every_case(&url))
        }),
        None if required => libtest_mimic::Trial::test("postgres_saver_passes_every_case", || {
            Err(format!("{} (and {}=1)", checkpoint_postgres::NO_URL_REASON, checkpoint_postgres::REQUIRED_ENV).into())
        }),
        None => {
            eprintln!("ignored: postgres_saver_passes_every_case: {}", checkpoint_postgres::NO_URL_REASON);
            libtest_mimic::Trial::test("postgres_saver_passes_every_case", || Ok(())).with_ignored_flag(true)
        }
    };
    libtest_mimic::run(&args, vec![trial]).exit_code()
}

/// Runs a check written with `assert!`, turning its panic into a trial failure.
fn catch(check: impl FnOnce() + std::panic::UnwindSafe) -> Result<(), libtest_mimic::Failed> {
    std::panic::catch_unwind(check).map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
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

fn postgres_saver_passes_every_case(url: &str) {
    let options = RunOptions { jobs: 4, ..RunOptions::default() };
    let prefix = format!("checkpoint_validate_{}_", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let registration = checkpoint_postgres::registration_with_schema_prefix(url, &prefix);
    let report = conformance_spec::validate(&registration, &options);
    assert!(report.setup_error.is_none(), "setup failed: {:?}", report.setup_error);
    let bad: Vec<String> = report
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::Passed)
        .map(|t| format!("{} [{:?}]: {}", t.id, t.outcome, t.message.as_deref().unwrap_or("")))
        .collect();
    let (passed, failed, other) = report.case_counts();
    eprintln!(
        "checkpoint-postgres conformance: {passed} passed, {failed} failed, {other} not run, level {}",
        report.conformance_level.as_str()
    );
    assert!(bad.is_empty(), "{} case(s) did not pass:\n{}", bad.len(), bad.join("\n"));
    assert!(passed > 0, "the catalog ran no case");
    assert!(report.warnings.is_empty(), "warnings: {:?}", report.warnings);
    assert_eq!(leftover_schemas(url, &prefix), Vec::<String>::new(), "schemas left behind after the run");
    let every_base_has_cases = Capability::BASE.iter().all(|c| report.tests.iter().any(|t| t.capability == *c));
    if every_base_has_cases {
        assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
    }
}
