//! # checkpoint-postgres
//!
//! The reference PostgreSQL checkpointer of the conformance kit: every method of
//! docs/contract.md §2 and §3 ([`PostgresSaver`]), on tokio-postgres with a
//! deadpool-postgres pool.
//!
//! ```no_run
//! # async fn demo() -> Result<(), checkpoint_contract::CheckpointError> {
//! use checkpoint_postgres::{PostgresOptions, PostgresSaver};
//! let saver = PostgresSaver::connect_with(
//!     "postgresql://postgres@127.0.0.1:5432/postgres",
//!     PostgresOptions::new().schema("checkpoints"),
//! )
//! .await?; // runs the migrations
//! # Ok(()) }
//! ```
//!
//! ## Tables
//!
//! Created by [`PostgresSaver::setup`] (idempotent; safe when several instances run it at
//! once: each migration runs in one transaction under `pg_advisory_xact_lock`, and is
//! recorded in `checkpoint_migrations(v)`, from 1). Keys follow LangGraph's `PostgresSaver`,
//! and so do the table names, but not the layout: the two cannot share a schema, and setup
//! refuses LangGraph's tables (its `checkpoint_migrations` records version 0), as it refuses
//! tables a newer version of this crate migrated further, changing nothing; give the saver a
//! schema of its own ([`PostgresOptions::schema`]). No import of LangGraph's data is offered.
//!
//! - `checkpoints(thread_id, checkpoint_ns, checkpoint_id)`: `parent_checkpoint_id`, the
//!   checkpoint without its values (`v`, `ts`, `channel_versions`, `versions_seen`,
//!   `updated_channels`) and the metadata, both as `json` (stored verbatim, so numbers and
//!   versions come back with their kind and exact value); the values it reads, as five
//!   parallel arrays (`value_channels`, `value_versions`, `value_digests`: one entry per
//!   channel of `channel_versions` that has a value; `value_type_tags`, `value_data`: the
//!   value itself when the checkpoint carries it, NULL when it does not); `put_seq`, from a
//!   sequence (`checkpoint_put_seq`), new at every put. Indexes on `(thread_id,
//!   checkpoint_id)`, `metadata ->> 'run_id'` and `(ARRAY[thread_id, checkpoint_ns], put_seq)`.
//! - `checkpoint_blobs(thread_id, checkpoint_ns, channel, version, digest)`: the values
//!   checkpoints read without carrying them (`type_tag`, `data bytea`, byte for byte), each
//!   stored once however many checkpoints read it. `version` is `jsonb` (`1` and `"1"` are
//!   different versions); `digest` is the sha256 of tag, a NUL byte and bytes.
//! - `checkpoint_holder_marks(thread_id, checkpoint_ns, channel, version)`: `holder_id`
//!   (or NULL) and `put_seq`; written only by the rare operations (see below).
//! - `checkpoint_writes(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)`:
//!   `task_path`, `channel`, `type_tag`, `data` (`idx` is `bigint`).
//! - SQL functions: `checkpoint_put_carried` (a put that resolves no channel, as one
//!   statement), `checkpoint_holder_of` and `checkpoint_found_in` (the holder of a value, and
//!   the checkpoint a resolved channel takes its value from; see below).
//!
//! Ids, namespaces, channels, task ids and paths are `text COLLATE "C"`: they order by bytes,
//! whatever the database's collation. PostgreSQL 11 or later.
//!
//! ## Channel values (CONTRACT §2 put)
//!
//! Values are resolved when a checkpoint is put, as the in-memory reference saver does: for
//! each channel of `channel_versions`, the value the checkpoint carries; else nothing when
//! the channel is in `new_versions` (the channel is empty); else, when the parent has the
//! channel at the same version, the parent's value or nothing (a channel emptied there stays
//! empty, CONTRACT §2 put.emptied); else the value of the checkpoint most recently put
//! with one at that (channel, version), if it still has it; else that of the checkpoint with
//! the greatest id that has one there; else nothing. What was resolved is recorded in the
//! checkpoint's own row (its value arrays), so sibling checkpoints never read each other's
//! values, even when their versions are equal (the default, integer `get_next_version` is
//! kept). A put that carries every value it reads (the common put) writes one row, with its
//! values, in one statement (the SQL function `checkpoint_put_carried`), as LangGraph's
//! `PostgresSaver` does for plain values. A put that resolves a channel takes the reference
//! it finds, and copies that value to `checkpoint_blobs` when the checkpoint it comes from
//! carries it: an uncarried reference always finds its value there, so removing a
//! checkpoint never has to move a value.
//!
//! "The checkpoint most recently put with a value at (channel, version)", the *holder*, is
//! derived, not written by each put: it is the checkpoint with the greatest `put_seq` that
//! reads a value there, unless `checkpoint_holder_marks` has a row for that key with a
//! greater `put_seq`, which then names the holder (NULL: none). A put that reads a value at a
//! key becomes its holder and has the greatest `put_seq`, so the common put writes no
//! holder. What takes a reading checkpoint away or moves holders writes marks, under a fresh
//! `put_seq`, with the holders as they must be afterwards: putting an id again (for the
//! keys it read before), `delete_for_runs` (the keys the deleted checkpoints read),
//! `prune` `keep_latest` (only holders that are the kept checkpoint stay) and `copy_thread`
//! (the source's holders replace the target's). Those operations then drop the marks the
//! derivation makes redundant. The holder is looked up (SQL function
//! `checkpoint_holder_of`) only for a channel that is neither carried, nor in
//! `new_versions`, nor found in the parent at its version, and by those rare operations.
//!
//! A value in `checkpoint_blobs` lives as long as a checkpoint reads it without carrying it
//! (a carried value lives and dies with its row): putting a checkpoint again,
//! `delete_for_runs`, `prune`, `copy_thread` (on its target) and `delete_thread` remove the
//! values no checkpoint reads any more, so nothing is left behind. No reference count is
//! kept (a put that inherits values would have to update one per channel): those rare
//! operations check references instead, by one pass over the rows of the namespace (putting
//! an id again) or of the threads (the others), as a set difference.
//!
//! ## What PostgreSQL cannot store: NUL characters
//!
//! A `text` value cannot hold U+0000, and PostgreSQL's JSON functions refuse `\u0000`. This
//! saver **refuses** such input with [`CheckpointError::InvalidInput`] naming the field or
//! metadata key, before anything is written (CONTRACT §1 Metadata):
//!
//! - `put`: a NUL in the thread id, namespace, checkpoint id or parent id, a channel name or
//!   string version in `channel_versions`, a value's type tag, or any key or string of the
//!   metadata (at any depth). Other strings of the checkpoint (`ts`, `versions_seen` node
//!   names, `updated_channels`) are stored losslessly in the `json` column.
//! - `put_writes`: a NUL in an id, the task id or path, a channel name or a type tag.
//! - `copy_thread`: a NUL in the target thread id.
//!
//! Reads treat such names as names nothing is stored under: `get_tuple` gives none, `list`
//! gives nothing, a filter value with a NUL matches nothing (a `null` filter under a key with
//! a NUL matches everything: no metadata has that key), a `before` with a NUL cuts where the
//! NUL is, and deletes are no-ops. Value bytes are `bytea` and take any byte.
//!
//! ## list filter (CONTRACT §2 list)
//!
//! Done in SQL with bound parameters only (keys are never pasted into SQL text): each key's
//! top-level value is compared with `jsonb` equality, which compares numbers by value
//! (`1 = 1.0`), never equates booleans with numbers, compares strings exactly and arrays and
//! objects element-wise; a `null` filter value matches a missing key or a JSON null (unlike
//! `jsonb @>`, which needs the key present).
//!
//! ## Transactions, concurrency, durability (CONTRACT §4)
//!
//! Every change that takes more than one statement runs in one transaction; `put_writes` is
//! one statement. `get_tuple` and `list` are each one statement (the
//! checkpoint rows with their values and writes aggregated into arrays), so each sees one
//! snapshot in one round trip; `delta_channel_history` runs in a read-only `REPEATABLE READ`
//! transaction. A `put` of carried values alone is one statement, its own transaction, on the
//! connections the saver opens (they run READ COMMITTED whatever the URL or server says);
//! on a pool of the caller's ([`PostgresSaver::from_pool`]) it is wrapped in `BEGIN
//! ISOLATION LEVEL READ COMMITTED`. Any
//! other (a put that resolves a channel, or puts grouped into one commit) is one transaction
//! in one round trip: BEGIN, the locks, the statements and COMMIT are sent together
//! (pipelined); its transaction plans them generically (`plan_cache_mode`, PostgreSQL 12 and
//! later), since re-planning the put statement at every call cost more than running it.
//! Connections run with `jit = off` (puts set it for their transaction too): a generic plan
//! costed for a large thread made each put JIT-compile a key lookup, 20 to 40 ms. They run
//! with `enable_seqscan = off`: every statement reads by a key an index starts with, and
//! where one thread held most pending writes, the statistics made a generic plan scan
//! `checkpoint_writes` once per listed checkpoint. Every transaction is READ COMMITTED
//! (what follows the advisory locks must see what committed before they were granted). Transaction-scoped advisory
//! locks order the writers that resolve or remove values: `put` holds its thread's lock
//! shared and its (thread, namespace)'s exclusively, so puts in one namespace of a thread run
//! one after another and puts elsewhere run at once; `delete_thread`, `prune`,
//! `copy_thread` and `delete_for_runs` hold their threads' locks exclusively (taken in a
//! fixed order). Serialization failures and deadlocks are retried. Every connection runs
//! with `synchronous_commit = on`: once a call returned `Ok`, its data is on disk.
//!
//! ## Upgrading
//!
//! [`PostgresSaver::setup`] applies the migrations this version knows and the schema has not
//! recorded, all in one transaction under the schema's advisory lock (so an upgrade is
//! all or nothing, and instances starting at once apply it once). There are no down
//! migrations. Migration 4 (values carried in the checkpoint rows) adds two columns with
//! constant defaults (no table rewrite on PostgreSQL 11 and later) and replaces an SQL
//! function; existing rows are not rewritten and read through `checkpoint_blobs` as before.
//! An instance of an older version still running on a schema a newer one migrated reads
//! checkpoints put by the newer one without their values: stop or upgrade every instance
//! together. From this version on, setup refuses tables migrated further than it knows
//! (`InvalidConfig`) instead of misreading them.
//!
//! ## Testing
//!
//! The kit's wiring is behind the `kit` feature (a normal build has none of it):
//! `PostgresStorage` is the saver's one `conformance_core::Storage` impl (a schema per
//! case, its name the location), and `registration` gives the kit a fresh schema per case
//! on one server from it. The tests read the server's URL from
//! `CHECKPOINT_POSTGRES_URL`; `scripts/pg-test-server.sh start` starts a throwaway server
//! and prints one, and the `test-server` feature offers the same as
//! `test_server::TestServer` (which `cargo xtask conformance --backend postgres` uses when no
//! URL is given). Without the variable the tests say why they did not run, and with
//! `CHECKPOINT_POSTGRES_REQUIRED=1` they fail instead:
//!
//! ```sh
//! export CHECKPOINT_POSTGRES_URL=$(scripts/pg-test-server.sh start)
//! CHECKPOINT_POSTGRES_REQUIRED=1 cargo test -p checkpoint-postgres
//! scripts/pg-test-server.sh stop
//! ```
//!
//! - `tests/conformance.rs`: the catalog as trials (`checkpointer_test!`);
//! - `tests/differential.rs`: random call sequences agree with the in-memory reference saver,
//!   and no stored value outlives the last checkpoint that reads it;
//! - `tests/postgres.rs`: NUL refusal, exact JSON, SQL-looking filter keys, setup by many
//!   instances at once, 16 MiB values, parent cycles, writers and maintenance at once.

#![warn(missing_docs)]

mod encode;
#[cfg(feature = "kit")]
mod leftovers;
#[cfg(feature = "kit")]
mod registration;
mod saver;
mod schema;
mod sql;
#[cfg(feature = "test-server")]
pub mod test_server;
mod url;

#[cfg(feature = "kit")]
pub use registration::{
    drop_schema, drop_schemas_now, drop_schemas_with_prefix, registration, registration_from_env,
    registration_with_schema_prefix, PostgresStorage, NO_URL_REASON, TEST_SCHEMA_PREFIX,
};

/// The environment variable naming the server the tests use.
pub const URL_ENV: &str = "CHECKPOINT_POSTGRES_URL";

/// Set to `1` to make a missing [`URL_ENV`] an error instead of a skip (CI).
pub const REQUIRED_ENV: &str = "CHECKPOINT_POSTGRES_REQUIRED";
pub use saver::{PostgresOptions, PostgresSaver, DEFAULT_MAX_CONNECTIONS};
pub use url::{check_reachable, check_url};

/// The pool type [`PostgresSaver::from_pool`] takes (deadpool-postgres).
pub use deadpool_postgres::Pool;

#[doc(no_inline)]
pub use checkpoint_contract::CheckpointError;
