//! The conformance catalog against the SQLite saver, one trial per spec case, each on a
//! fresh database file: `cargo test -p checkpoint-sqlite --test conformance` (or
//! `cargo nextest run -p checkpoint-sqlite`).

conformance_spec::checkpointer_test!(checkpoint_sqlite::registration());
