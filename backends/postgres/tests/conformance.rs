//! The conformance catalog against the PostgreSQL saver, one trial per spec case, each on a
//! fresh schema of the server named by `CHECKPOINT_POSTGRES_URL`:
//!
//! ```sh
//! export CHECKPOINT_POSTGRES_URL=$(scripts/pg-test-server.sh start)
//! cargo test -p checkpoint-postgres --test conformance   # or: cargo nextest run -p checkpoint-postgres
//! scripts/pg-test-server.sh stop
//! ```
//!
//! Without the variable every trial is registered as ignored, and the reason is printed
//! (`ignored: postgres::put (N trials): skipped by the registration: CHECKPOINT_POSTGRES_URL
//! is not set ...`); with `CHECKPOINT_POSTGRES_REQUIRED=1` every trial fails instead.

conformance_spec::checkpointer_test!(checkpoint_postgres::registration_from_env());
