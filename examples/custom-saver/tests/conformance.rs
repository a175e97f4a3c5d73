//! The conformance catalog against `LogSaver`: one trial per spec case, named
//! `log-saver::{capability}::{case}`. Run it with `cargo test` (or `cargo nextest run`);
//! filters, `--list`, `--exact`, `--skip` and `--ignored` work as for any test.
//!
//! `LogSaver` implements the five base methods only, so the extended capabilities are
//! detected as not implemented and their cases show as ignored (SKIP under nextest).

use std::time::Duration;

use conformance_spec::{Fixture, Registration};
use custom_saver::LogSaver;

/// How the kit gets a saver: a factory called once per case (so every case starts from an
/// empty log), plus the options a saver may need (see docs/using-the-kit.md).
fn registration() -> Registration {
    Registration::new("log-saver", || async { Ok(Fixture::new(LogSaver::new())) })
        // A case (factory and cleanup included) that takes longer fails with a timeout.
        .timeout(Duration::from_secs(10))
}

conformance_spec::checkpointer_test!(registration());
