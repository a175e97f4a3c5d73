//! The conformance catalog against the SQLite saver, one trial per spec case and
//! registration, each case on a fresh database file: `cargo test -p checkpoint-sqlite --test
//! conformance` (or `cargo nextest run -p checkpoint-sqlite`).
//!
//! Three registrations of the one saver, each a separate run of the catalog:
//! - `sqlite`: the kit's options (`synchronous = NORMAL`) in fresh temporary directories;
//! - `sqlite-full`: the saver's own defaults (`synchronous = FULL`);
//! - `sqlite-beside`: each case's file beside a base path that is never created
//!   (`cargo xtask conformance --sqlite-path FILE`); `tests/saver.rs` checks that it leaves
//!   nothing behind.

use checkpoint_sqlite::{registration, registration_at, registration_with, SqliteOptions};
use conformance_core::{BoxError, Fixture, Registration};

/// [`registration_at`] a base path in the system's temporary directory, named
/// `sqlite-beside`; if the path is refused, every case fails with the reason.
fn beside_a_path() -> Registration {
    let base = std::env::temp_dir().join("checkpoint-sqlite-beside.sqlite");
    match registration_at(&base) {
        Ok(r) => r.named("sqlite-beside"),
        Err(e) => {
            let e = e.to_string();
            Registration::new("sqlite-beside", move || {
                let e = e.clone();
                async move { Err::<Fixture, BoxError>(e.into()) }
            })
        }
    }
}

conformance_spec::checkpointer_test!(
    registration(),
    registration_with(SqliteOptions::default()).named("sqlite-full"),
    beside_a_path(),
);
