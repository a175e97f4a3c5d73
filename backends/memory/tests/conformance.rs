//! The conformance catalog against the in-memory saver, one trial per spec case:
//! `cargo test -p checkpoint-memory --test conformance` (or `cargo nextest run`).

conformance_spec::checkpointer_test!(checkpoint_memory::registration());
