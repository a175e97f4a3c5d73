//! The tables and their migrations, and the idempotent, concurrency-safe `setup`.
//!
//! Every migration runs in one transaction that first takes a transaction-scoped advisory
//! lock keyed by the target schema, so two instances running `setup` at once (two pools, two
//! processes) apply each migration exactly once: the second waits for the first, then sees
//! the recorded version and does nothing.

use checkpoint_contract::CheckpointError;
use tokio_postgres::Client;

use crate::saver::{OpError, OpResult};

/// The migrations, in order; migration `i` (0-based) is recorded as version `i + 1` in
/// `checkpoint_migrations`. Never edit a released entry: append a new one.
///
/// Text columns that take part in ordering or equality use `COLLATE "C"`, so ids, namespaces,
/// task ids and task paths compare by bytes (UTF-8 byte order is code point order), as the
/// contract's string ordering requires, whatever the database's default collation is.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: checkpoints, the values each checkpoint reads, stored values, pending writes.
    r#"
CREATE TABLE checkpoints (
    thread_id            TEXT COLLATE "C" NOT NULL,
    checkpoint_ns        TEXT COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id        TEXT COLLATE "C" NOT NULL,
    parent_checkpoint_id TEXT COLLATE "C",
    -- The checkpoint without its channel values and id: v, ts, channel_versions,
    -- versions_seen, updated_channels, as JSON text stored verbatim.
    checkpoint           JSON NOT NULL,
    -- The metadata as JSON text stored verbatim (json, not jsonb, so that numbers keep
    -- their exact text and read back with their kind); filters cast the one value they
    -- compare to jsonb.
    metadata             JSON NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
-- list without a namespace: newest ids of a thread across its namespaces.
CREATE INDEX checkpoints_thread_id_idx ON checkpoints (thread_id, checkpoint_id);
-- delete_for_runs.
CREATE INDEX checkpoints_run_id_idx ON checkpoints ((metadata ->> 'run_id'));

CREATE TABLE checkpoint_blobs (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel       TEXT COLLATE "C" NOT NULL,
    -- The channel version as JSON: a number for an integer version, a string for a string
    -- version, so 1 and "1" are different keys.
    version       JSONB NOT NULL,
    -- sha256 of type_tag, a zero byte, and data: two different values stored at the same
    -- (channel, version), by sibling checkpoints, never collide. A value is kept while a
    -- checkpoint reads it (checkpoint_channels) and removed with the last one.
    digest        BYTEA NOT NULL,
    type_tag      TEXT NOT NULL,
    data          BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version, digest)
);

CREATE TABLE checkpoint_channels (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    channel       TEXT COLLATE "C" NOT NULL,
    version       JSONB NOT NULL,
    -- The value read, or NULL: the channel is in channel_versions but empty (absent on
    -- read). One row per channel of the checkpoint's channel_versions.
    digest        BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, channel)
);
-- Is a stored value still read by some checkpoint?
CREATE INDEX checkpoint_channels_blob_idx
    ON checkpoint_channels (thread_id, checkpoint_ns, channel, version, digest);
-- The checkpoint with the greatest id that reads a value at a (channel, version).
CREATE INDEX checkpoint_channels_version_idx
    ON checkpoint_channels (thread_id, checkpoint_ns, channel, version, checkpoint_id);

-- For each (channel, version), the checkpoint most recently put with a value there: where
-- a checkpoint that neither carries nor changes a channel finds its value.
CREATE TABLE checkpoint_value_holders (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel       TEXT COLLATE "C" NOT NULL,
    version       JSONB NOT NULL,
    holder_id     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE checkpoint_writes (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    task_id       TEXT COLLATE "C" NOT NULL,
    idx           BIGINT NOT NULL,
    task_path     TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel       TEXT COLLATE "C" NOT NULL,
    type_tag      TEXT NOT NULL,
    data          BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
"#,
    // 2: one secondary index on checkpoint_channels, led by (channel, version), instead of
    // two led by (thread_id, checkpoint_ns). Those two shared the primary key's first two
    // columns, so without fresh statistics (a new table, or a thread that grew since the
    // last ANALYZE) the planner rated them as good as the primary key for a lookup by
    // checkpoint, and scanned the whole namespace with checkpoint_id as a filter: 3 ms per
    // put statement and 29 s for a list of 1,000 in `cargo xtask bench`. Now only the
    // primary key can serve a lookup by checkpoint, and this index one by value.
    r#"
DROP INDEX checkpoint_channels_blob_idx;
DROP INDEX checkpoint_channels_version_idx;
-- Is a stored value still read by some checkpoint, and the checkpoint with the greatest id
-- that reads a value at a (channel, version).
CREATE INDEX checkpoint_channels_value_idx
    ON checkpoint_channels (channel, version, thread_id, checkpoint_ns, checkpoint_id) INCLUDE (digest);
"#,
    // 3: a checkpoint's value references move into its own row, and the per-(channel,
    // version) holder rows written by every put give way to a put sequence number and rare
    // "marks". A put used to write ~10 `checkpoint_channels` rows (two indexes) and upsert
    // ~10 `checkpoint_value_holders` rows: ~0.65 ms of its ~0.8 ms of server time
    // (pg_stat_statements, `conformance-bench`). Now it writes its values and one row.
    //
    // The value references of checkpoint c: `value_channels[i]` reads the stored value at
    // (`value_versions[i]`, `value_digests[i]`); a channel of `channel_versions` that is
    // not there is empty.
    //
    // The holder of (channel, version), the checkpoint most recently put with a value there
    // (whether or not it still has it), is derived instead of stored: it is the checkpoint
    // with the greatest `put_seq` that reads a value there, unless a mark for that key has a
    // greater `put_seq` than that checkpoint, in which case it is the mark's `holder_id`
    // (NULL: none). A put that reads a value at a key is its holder and has the greatest
    // `put_seq`, so it needs no mark; only what takes a reading checkpoint away or moves
    // holders (putting an id again, delete_for_runs, prune, copy_thread) writes marks, with
    // the holder as it was, under a fresh `put_seq`. `checkpoint_holder_of` computes it.
    r#"
CREATE SEQUENCE checkpoint_put_seq;
ALTER TABLE checkpoints
    ADD COLUMN put_seq BIGINT,
    ADD COLUMN value_channels TEXT[] COLLATE "C" NOT NULL DEFAULT '{}',
    ADD COLUMN value_versions JSONB[] NOT NULL DEFAULT '{}',
    ADD COLUMN value_digests BYTEA[] NOT NULL DEFAULT '{}';
UPDATE checkpoints SET put_seq = nextval('checkpoint_put_seq');
UPDATE checkpoints c SET value_channels = r.channels, value_versions = r.versions, value_digests = r.digests
FROM (SELECT thread_id, checkpoint_ns, checkpoint_id, array_agg(channel ORDER BY channel) AS channels,
             array_agg(version ORDER BY channel) AS versions, array_agg(digest ORDER BY channel) AS digests
      FROM checkpoint_channels WHERE digest IS NOT NULL
      GROUP BY thread_id, checkpoint_ns, checkpoint_id) AS r
WHERE c.thread_id = r.thread_id AND c.checkpoint_ns = r.checkpoint_ns AND c.checkpoint_id = r.checkpoint_id;
ALTER TABLE checkpoints
    ALTER COLUMN put_seq SET DEFAULT nextval('checkpoint_put_seq'),
    ALTER COLUMN put_seq SET NOT NULL;
ALTER SEQUENCE checkpoint_put_seq OWNED BY checkpoints.put_seq;
-- The checkpoint most recently put that reads a value at a (channel, version): the
-- namespace's rows newest put first. Keyed by an expression, not by (thread_id,
-- checkpoint_ns, ...): an index sharing the primary key's leading columns is, without fresh
-- statistics, rated as good as it for a lookup by id (see migration 2), and this one is
-- smaller, so the planner took it for the parent lookup of every put.
CREATE INDEX checkpoints_put_seq_idx ON checkpoints ((ARRAY[thread_id, checkpoint_ns]), put_seq);

CREATE TABLE checkpoint_holder_marks (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel       TEXT COLLATE "C" NOT NULL,
    version       JSONB NOT NULL,
    -- The holder (NULL: none) as of put_seq; it stands until a checkpoint with a greater
    -- put_seq reads a value at (channel, version).
    holder_id     TEXT COLLATE "C",
    put_seq       BIGINT NOT NULL DEFAULT nextval('checkpoint_put_seq'),
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- The holder of ($3 channel, $4 version) in ($1 thread, $2 namespace), NULL for none.
CREATE FUNCTION checkpoint_holder_of(TEXT, TEXT, TEXT, JSONB) RETURNS TEXT LANGUAGE sql STABLE AS $f$
    SELECT CASE WHEN m.put_seq > COALESCE(t.put_seq, -1) THEN m.holder_id ELSE t.checkpoint_id END
    FROM (SELECT 1) AS one
    LEFT JOIN checkpoint_holder_marks m
      ON m.thread_id = $1 AND m.checkpoint_ns = $2 AND m.channel = $3 AND m.version = $4
    LEFT JOIN LATERAL (
        SELECT c.checkpoint_id, c.put_seq FROM checkpoints c
        WHERE ARRAY[c.thread_id, c.checkpoint_ns] = ARRAY[$1, $2]
          AND $3 = ANY (c.value_channels) AND $4 = ANY (c.value_versions)
          AND EXISTS (SELECT 1 FROM unnest(c.value_channels, c.value_versions) AS r(channel, version)
                      WHERE r.channel = $3 AND r.version = $4)
        ORDER BY c.put_seq DESC LIMIT 1) AS t ON true
$f$;

-- The value a channel that its checkpoint neither carries, nor empties, nor finds in its
-- parent reads at ($3 channel, $4 version) in ($1 thread, $2 namespace): the holder's, if
-- it still has one there; else that of the greatest id that has one there; else NULL.
CREATE FUNCTION checkpoint_found_value(TEXT, TEXT, TEXT, JSONB) RETURNS BYTEA LANGUAGE sql STABLE AS $f$
    SELECT COALESCE(
        (SELECT r.digest FROM checkpoints c
         CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests) AS r(channel, version, digest)
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = checkpoint_holder_of($1, $2, $3, $4)
           AND r.channel = $3 AND r.version = $4),
        (SELECT r.digest FROM checkpoints c
         CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests) AS r(channel, version, digest)
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
           AND $3 = ANY (c.value_channels) AND $4 = ANY (c.value_versions) AND r.channel = $3 AND r.version = $4
         ORDER BY c.checkpoint_id DESC LIMIT 1))
    WHERE EXISTS (SELECT 1 FROM checkpoint_blobs b
                  WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = $3 AND b.version = $4)
$f$;

-- Every (channel, version) some checkpoint reads or a holder row names, with its holder.
INSERT INTO checkpoint_holder_marks (thread_id, checkpoint_ns, channel, version, holder_id)
SELECT k.thread_id, k.checkpoint_ns, k.channel, k.version, h.holder_id
FROM (SELECT thread_id, checkpoint_ns, channel, version FROM checkpoint_channels WHERE digest IS NOT NULL
      UNION SELECT thread_id, checkpoint_ns, channel, version FROM checkpoint_value_holders) AS k
LEFT JOIN checkpoint_value_holders h
  ON h.thread_id = k.thread_id AND h.checkpoint_ns = k.checkpoint_ns AND h.channel = k.channel AND h.version = k.version;

DROP TABLE checkpoint_value_holders;
DROP TABLE checkpoint_channels;
"#,
    // 4: a checkpoint carries its values in its own row. A put wrote each carried value to
    // `checkpoint_blobs` and the row took its reference, so a list of 1,000 checkpoints of
    // 10 channels made 10,000 index lookups of a (text, text, text, jsonb, bytea) key (64 ms
    // of the server's time in `cargo xtask bench`, where reading the rows takes about 1 ms),
    // and a put wrote 11 rows where LangGraph's writes one for plain values.
    //
    // `value_type_tags[i]` and `value_data[i]` are the value the reference
    // (`value_channels[i]`, `value_versions[i]`, `value_digests[i]`) reads when the
    // checkpoint carries it, NULL when it does not (a value it resolved, from its parent or
    // the found checkpoint). An uncarried reference always has its row in
    // `checkpoint_blobs`: the put that resolves it copies the value there when the
    // checkpoint it comes from carries it. So no deletion has to move a value, and a row of
    // `checkpoint_blobs` lives as long as some checkpoint reads it without carrying it.
    // Rows put before this migration keep empty arrays (`unnest` pads them with NULLs):
    // every reference of theirs is uncarried, and has its value in `checkpoint_blobs`.
    //
    // `checkpoint_found_in` replaces `checkpoint_found_value`: the checkpoint whose
    // reference a channel takes that its checkpoint neither carries, nor empties, nor finds
    // in its parent (the holder if it still reads a value at that key, else the greatest id
    // that does), so that the put can take the value from its row.
    r#"
ALTER TABLE checkpoints
    ADD COLUMN value_type_tags TEXT[] NOT NULL DEFAULT '{}',
    ADD COLUMN value_data BYTEA[] NOT NULL DEFAULT '{}';

CREATE FUNCTION checkpoint_found_in(TEXT, TEXT, TEXT, JSONB) RETURNS TEXT LANGUAGE sql STABLE AS $f$
    SELECT COALESCE(
        (SELECT c.checkpoint_id FROM checkpoints c
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = checkpoint_holder_of($1, $2, $3, $4)
           AND EXISTS (SELECT 1 FROM unnest(c.value_channels, c.value_versions) AS r(channel, version)
                       WHERE r.channel = $3 AND r.version = $4)),
        (SELECT c.checkpoint_id FROM checkpoints c
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
           AND $3 = ANY (c.value_channels) AND $4 = ANY (c.value_versions)
           AND EXISTS (SELECT 1 FROM unnest(c.value_channels, c.value_versions) AS r(channel, version)
                       WHERE r.channel = $3 AND r.version = $4)
         ORDER BY c.checkpoint_id DESC LIMIT 1))
$f$;
DROP FUNCTION checkpoint_found_value(TEXT, TEXT, TEXT, JSONB);

-- A put that resolves no channel (every value it reads, it carries: the common put), whole,
-- so that it is one statement and, alone, one implicit transaction: one message and one
-- commit, as LangGraph's put of plain values. Each statement of a VOLATILE function takes
-- its own snapshot, so what follows the locks sees every put committed before them. The
-- locks are `sql::LOCK_FOR_PUT`'s (a group of puts takes them all first, in order, and
-- takes them again here at no cost). When the id is being put again: the holders of the
-- keys it read are marked as they are now (before the row takes a new put_seq), and the
-- stored values it read that no other checkpoint of the namespace reads uncarried are
-- removed (the new row carries whatever it reads). Then one row, replacing all but the key.
-- The value arrays are pairwise and ordered by channel; p_versions are JSON texts. (Its
-- ON CONFLICT list repeats `sql::replace_checkpoint!` on purpose: a migration's text is
-- frozen once applied anywhere, and must not follow later edits of the macro.)
CREATE FUNCTION checkpoint_put_carried(p_thread TEXT, p_ns TEXT, p_id TEXT, p_parent TEXT, p_shell TEXT,
    p_metadata TEXT, p_channels TEXT[], p_versions TEXT[], p_digests BYTEA[], p_type_tags TEXT[], p_data BYTEA[])
RETURNS void LANGUAGE plpgsql VOLATILE AS $f$
BEGIN
    -- At REPEATABLE READ the snapshot would predate the locks.
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'checkpoint_put_carried needs READ COMMITTED, not %', current_setting('transaction_isolation');
    END IF;
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('checkpoint-postgres thread ' || p_thread, 0)),
        pg_advisory_xact_lock(hashtextextended('checkpoint-postgres namespace ' || p_thread || ' ' || p_ns, 0)),
        set_config('jit', 'off', true);
    IF EXISTS (SELECT 1 FROM checkpoints
               WHERE thread_id = p_thread AND checkpoint_ns = p_ns AND checkpoint_id = p_id) THEN
        INSERT INTO checkpoint_holder_marks (thread_id, checkpoint_ns, channel, version, holder_id)
        SELECT p_thread, p_ns, r.channel, r.version, checkpoint_holder_of(p_thread, p_ns, r.channel, r.version)
        FROM checkpoints own CROSS JOIN LATERAL unnest(own.value_channels, own.value_versions) AS r(channel, version)
        WHERE own.thread_id = p_thread AND own.checkpoint_ns = p_ns AND own.checkpoint_id = p_id
        ORDER BY r.channel
        ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
            holder_id = EXCLUDED.holder_id, put_seq = EXCLUDED.put_seq;
        DELETE FROM checkpoint_blobs b USING (
            SELECT r.channel, r.version, r.digest FROM checkpoints own
            CROSS JOIN LATERAL unnest(own.value_channels, own.value_versions, own.value_digests)
                AS r(channel, version, digest)
            WHERE own.thread_id = p_thread AND own.checkpoint_ns = p_ns AND own.checkpoint_id = p_id
          EXCEPT
            SELECT r.channel, r.version, r.digest FROM checkpoints c
            CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
                AS r(channel, version, digest, data)
            WHERE c.thread_id = p_thread AND c.checkpoint_ns = p_ns AND c.checkpoint_id <> p_id AND r.data IS NULL
        ) AS g
        WHERE b.thread_id = p_thread AND b.checkpoint_ns = p_ns
          AND b.channel = g.channel AND b.version = g.version AND b.digest = g.digest;
    END IF;
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
        value_channels, value_versions, value_digests, value_type_tags, value_data)
    VALUES (p_thread, p_ns, p_id, p_parent, p_shell::json, p_metadata::json, p_channels, p_versions::jsonb[],
        p_digests, p_type_tags, p_data)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
        checkpoint = EXCLUDED.checkpoint,
        metadata = EXCLUDED.metadata,
        put_seq = EXCLUDED.put_seq,
        value_channels = EXCLUDED.value_channels,
        value_versions = EXCLUDED.value_versions,
        value_digests = EXCLUDED.value_digests,
        value_type_tags = EXCLUDED.value_type_tags,
        value_data = EXCLUDED.value_data;
END
$f$;
"#,
];

/// Creates `schema` (when given and `create`; else it must exist) and applies every
/// migration not yet recorded, inside one transaction holding `pg_advisory_xact_lock` on the
/// schema's name.
///
/// Safe to run any number of times and from several instances at once.
pub(crate) async fn setup(client: &mut Client, schema: Option<&str>, create: bool) -> OpResult<()> {
    let tx = client.transaction().await?;
    // The lock key is derived from the schema name, so instances on different schemas do not
    // wait for each other.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('checkpoint-postgres setup ' \
         || COALESCE($1::text, current_schema(), ''), 0))",
        &[&schema],
    )
    .await?;
    if let Some(schema) = schema.filter(|_| create) {
        // `schema` is validated as a plain lowercase identifier (see `valid_schema_name`).
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}")).await?;
    } else if let Some(schema) = schema {
        let found = tx.query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", &[&schema]).await?;
        if !found.get::<_, bool>(0) {
            return Err(OpError::Contract(CheckpointError::InvalidConfig(format!(
                "schema {schema:?} does not exist, and the saver was told not to create it \
                 (PostgresOptions::create_schema(false))"
            ))));
        }
    }
    tx.batch_execute("CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)").await?;
    let row = tx.query_one("SELECT COALESCE(max(v), 0) FROM checkpoint_migrations", &[]).await?;
    let current: i32 = row.get(0);
    // LangGraph's PostgresSaver uses the same table names, and records its migrations from 0;
    // this crate records them from 1.
    let foreign = tx.query_one("SELECT EXISTS (SELECT 1 FROM checkpoint_migrations WHERE v = 0)", &[]).await?;
    if foreign.get::<_, bool>(0) {
        return Err(OpError::Contract(CheckpointError::InvalidConfig(
            "the schema holds another saver's tables of the same names (checkpoint_migrations records version 0, as \
             LangGraph's PostgresSaver does; checkpoint-postgres starts at 1): give this saver a schema of its own \
             (PostgresOptions::schema); nothing was changed"
                .into(),
        )));
    }
    if current > MIGRATIONS.len() as i32 {
        // A newer saver migrated this schema: this one would misread it (migration 4 moved
        // carried values into the checkpoint rows, where an older saver does not look).
        return Err(OpError::Contract(CheckpointError::InvalidConfig(format!(
            "the schema's tables were migrated to version {current}, by a newer checkpoint-postgres or another \
             saver using the same table names; this one knows versions up to {} and would misread them: upgrade \
             it, or give it a schema of its own (PostgresOptions::schema); nothing was changed",
            MIGRATIONS.len()
        ))));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i32 + 1;
        if version <= current {
            continue;
        }
        tx.batch_execute(sql).await?;
        tx.execute("INSERT INTO checkpoint_migrations (v) VALUES ($1)", &[&version]).await?;
    }
    Ok(tx.commit().await?)
}

/// True for a schema name this crate accepts: 1 to 63 characters of `a-z`, `0-9` and `_`,
/// not starting with a digit. Such a name needs no quoting anywhere (SQL text, the
/// `search_path` startup option).
pub(crate) fn valid_schema_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::valid_schema_name;

    #[test]
    fn schema_names() {
        assert!(valid_schema_name("checkpoint_test_ab12"));
        assert!(valid_schema_name("_x"));
        assert!(!valid_schema_name(""));
        assert!(!valid_schema_name("1abc"));
        assert!(!valid_schema_name("Abc"));
        assert!(!valid_schema_name("a b"));
        assert!(!valid_schema_name("a\"; DROP TABLE x; --"));
        assert!(!valid_schema_name(&"a".repeat(64)));
    }
}

#[cfg(test)]
mod migration_test;
