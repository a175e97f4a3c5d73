//! The SQL text of every statement. All of it is constant: caller data (thread ids, metadata
//! filter keys and values, channel names) is always a bound parameter, never pasted in.

/// The locks a `put` holds for the length of its transaction: the thread's lock shared, and
/// its (thread, namespace)'s exclusively. Puts in one namespace of a thread run one after
/// another (they resolve values from, and remove values of, that namespace); puts in
/// different namespaces run at once. Operations that remove checkpoints or values of a
/// whole thread (`delete_thread`, `prune`, `copy_thread` on its target, `delete_for_runs`)
/// take the thread's lock exclusively. $1 thread, $2 ns.
pub(crate) const LOCK_FOR_PUT: &str = "SELECT
    pg_advisory_xact_lock_shared(hashtextextended('checkpoint-postgres thread ' || $1::text, 0)),
    pg_advisory_xact_lock(hashtextextended('checkpoint-postgres namespace ' || $1::text || ' ' || $2::text, 0))";

/// Exclusive locks on every thread of `$1`, in a fixed order so two such calls cannot
/// deadlock.
pub(crate) const LOCK_THREADS_EXCLUSIVE: &str = "SELECT pg_advisory_xact_lock(k) FROM (
    SELECT DISTINCT hashtextextended('checkpoint-postgres thread ' || t, 0) AS k
    FROM unnest($1::text[]) AS t ORDER BY k) AS keys";

// ---- put -------------------------------------------------------------------------------

/// $1 thread, $2 ns, $3 id, $4 parent id, $5 shell JSON text, $6 metadata JSON text.
/// Re-putting an id replaces checkpoint, metadata and parent (CONTRACT §2 put).
pub(crate) const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    VALUES ($1, $2, $3, $4, $5::text::json, $6::text::json)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
        checkpoint = EXCLUDED.checkpoint,
        metadata = EXCLUDED.metadata";

/// $1 thread, $2 ns, $3 id: the values a checkpoint read before it is put again, so that
/// those no checkpoint reads any more can be removed afterwards.
pub(crate) const SELECT_OWN_VALUES: &str = "SELECT channel, version::text, digest FROM checkpoint_channels
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND digest IS NOT NULL";

/// Stores the values a checkpoint carries and records that it reads them.
/// $1 thread, $2 ns, $3 id, $4 channels, $5 version JSON texts, $6 type tags, $7 data.
/// A value already stored under the same (channel, version, digest) is the same value and
/// is not stored again.
pub(crate) const UPSERT_CARRIED_VALUES: &str = "WITH v AS (
        SELECT u.channel, u.version::jsonb AS version, u.type_tag, u.data,
               sha256(convert_to(u.type_tag, 'UTF8') || decode('00', 'hex') || u.data) AS digest
        FROM unnest($4::text[], $5::text[], $6::text[], $7::bytea[]) AS u(channel, version, type_tag, data)
    ), stored AS (
        INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, digest, type_tag, data)
        SELECT $1, $2, channel, version, digest, type_tag, data FROM v ORDER BY channel
        ON CONFLICT DO NOTHING
    )
    INSERT INTO checkpoint_channels (thread_id, checkpoint_ns, checkpoint_id, channel, version, digest)
    SELECT $1, $2, $3, channel, version, digest FROM v ORDER BY channel
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, channel) DO UPDATE SET
        version = EXCLUDED.version, digest = EXCLUDED.digest";

/// Records the channels of `channel_versions` a checkpoint does not carry.
/// $1 thread, $2 ns, $3 id, $4 parent id (or NULL), $5 channels, $6 version JSON texts,
/// $7 per channel: resolve it (true) or leave it empty (false: it is in `new_versions`).
///
/// A channel to resolve reads, at its version: the parent's value; else the value of the
/// checkpoint most recently put with one there (`checkpoint_value_holders`), if that
/// checkpoint still has it; else the value of the checkpoint with the greatest id that has
/// one there; else nothing (`digest` NULL: absent on read). `COALESCE` stops at the first
/// found, so the usual case (the parent has it) costs one key lookup. Checkpoints are read as
/// they were before this statement, which matters when a checkpoint is put again, as its own
/// parent.
pub(crate) const UPSERT_OTHER_CHANNELS: &str = "INSERT INTO checkpoint_channels
        (thread_id, checkpoint_ns, checkpoint_id, channel, version, digest)
    SELECT $1, $2, $3, u.channel, u.version,
        CASE WHEN u.resolve THEN COALESCE(
            (SELECT p.digest FROM checkpoint_channels p
             WHERE $4::text IS NOT NULL AND p.thread_id = $1 AND p.checkpoint_ns = $2
               AND p.checkpoint_id = $4 AND p.channel = u.channel AND p.version = u.version),
            (SELECT h.digest FROM checkpoint_value_holders i JOIN checkpoint_channels h
               ON h.thread_id = i.thread_id AND h.checkpoint_ns = i.checkpoint_ns
              AND h.checkpoint_id = i.holder_id AND h.channel = i.channel AND h.version = i.version
             WHERE i.thread_id = $1 AND i.checkpoint_ns = $2 AND i.channel = u.channel AND i.version = u.version),
            (SELECT s.digest FROM checkpoint_channels s
             WHERE s.thread_id = $1 AND s.checkpoint_ns = $2 AND s.channel = u.channel AND s.version = u.version
               AND s.digest IS NOT NULL
             ORDER BY s.checkpoint_id DESC LIMIT 1)
        ) END
    FROM (SELECT t.channel, t.version::jsonb AS version, t.resolve
          FROM unnest($5::text[], $6::text[], $7::bool[]) AS t(channel, version, resolve)) AS u
    ORDER BY u.channel
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, channel) DO UPDATE SET
        version = EXCLUDED.version, digest = EXCLUDED.digest";

/// $1 thread, $2 ns, $3 id, $4 every channel of the checkpoint's `channel_versions`:
/// forget the channels a re-put checkpoint no longer has.
pub(crate) const DELETE_STALE_CHANNELS: &str = "DELETE FROM checkpoint_channels
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND NOT (channel = ANY($4::text[]))";

/// $1 thread, $2 ns, $3 id: this checkpoint is now the one most recently put with a value at
/// each (channel, version) it has a value for.
pub(crate) const UPSERT_HOLDERS: &str = "INSERT INTO checkpoint_value_holders
        (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT thread_id, checkpoint_ns, channel, version, checkpoint_id FROM checkpoint_channels
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND digest IS NOT NULL
    ORDER BY channel
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET holder_id = EXCLUDED.holder_id";

/// $1 thread, $2 ns, $3 channels, $4 version JSON texts, $5 digests: removes those stored
/// values that no checkpoint reads any more.
pub(crate) const DELETE_UNREAD_VALUES: &str = "DELETE FROM checkpoint_blobs b
    USING unnest($3::text[], $4::text[], $5::bytea[]) AS o(channel, version, digest)
    WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = o.channel
      AND b.version = o.version::jsonb AND b.digest = o.digest
      AND NOT EXISTS (SELECT 1 FROM checkpoint_channels r WHERE r.thread_id = b.thread_id
          AND r.checkpoint_ns = b.checkpoint_ns AND r.channel = b.channel
          AND r.version = b.version AND r.digest = b.digest)";

/// $1 threads: removes the stored values of these threads that no checkpoint reads.
pub(crate) const DELETE_UNREAD_VALUES_OF_THREADS: &str = "DELETE FROM checkpoint_blobs b
    WHERE b.thread_id = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM checkpoint_channels r WHERE r.thread_id = b.thread_id
          AND r.checkpoint_ns = b.checkpoint_ns AND r.channel = b.channel
          AND r.version = b.version AND r.digest = b.digest)";

// ---- put_writes ------------------------------------------------------------------------

/// $1 thread, $2 ns, $3 id, $4 task id, $5 task path, $6 indexes, $7 channels, $8 type tags,
/// $9 data. Decided per write: a regular write (idx >= 0) keeps the first value stored for
/// its key, a special write (idx < 0) replaces it (CONTRACT §2 put_writes).
pub(crate) const INSERT_WRITES: &str = "INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type_tag, data)
    SELECT $1, $2, $3, $4, $5, w.idx, w.channel, w.type_tag, w.data
    FROM unnest($6::bigint[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type_tag, data)
    ORDER BY w.idx
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
        task_path = EXCLUDED.task_path,
        channel = EXCLUDED.channel,
        type_tag = EXCLUDED.type_tag,
        data = EXCLUDED.data
    WHERE EXCLUDED.idx < 0";

// ---- reads -----------------------------------------------------------------------------

/// $1 thread, $2 ns, $3 id.
pub(crate) const SELECT_CHECKPOINT_BY_ID: &str =
    "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3";

/// $1 thread, $2 ns: the greatest id.
pub(crate) const SELECT_LATEST_CHECKPOINT: &str =
    "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1";

/// The checkpoints of a `list` call (CONTRACT §2 list).
/// $1 thread, $2 ns or NULL (every namespace), $3 id or NULL, $4 `before` or NULL,
/// $5 true when ids equal to $4 are included too (a `before` with a NUL character, cut at
/// it), $6 filter keys, $7 filter values as JSON text, $8 limit or NULL.
///
/// Filter: every key's top-level value equals the filter value as jsonb (numbers by value,
/// booleans never equal to numbers, strings exactly, arrays and objects element-wise); a
/// `null` filter value matches a missing key or a JSON null. Keys are only ever bound.
macro_rules! list_checkpoints {
    () => {
        "SELECT c.* FROM checkpoints c
    WHERE c.thread_id = $1
      AND ($2::text IS NULL OR c.checkpoint_ns = $2)
      AND ($3::text IS NULL OR c.checkpoint_id = $3)
      AND ($4::text IS NULL OR c.checkpoint_id < $4 OR ($5::bool AND c.checkpoint_id = $4))
      AND NOT EXISTS (
        SELECT 1 FROM unnest($6::text[], $7::text[]) AS f(key, value)
        WHERE (CASE WHEN f.value::jsonb = 'null'::jsonb
                    THEN (c.metadata -> f.key) IS NULL OR json_typeof(c.metadata -> f.key) = 'null'
                    ELSE (c.metadata -> f.key)::jsonb = f.value::jsonb
               END) IS NOT TRUE)
    ORDER BY c.checkpoint_id DESC, c.checkpoint_ns ASC
    LIMIT $8::bigint"
    };
}

/// The columns of a tuple read in one statement, from `c`, a row of `checkpoints`: namespace,
/// id, parent id, checkpoint and metadata as JSON text, then the checkpoint's channel
/// values (channels, type tags, data, pairwise) and its pending writes in `get_tuple` order
/// (task_path, task_id, idx: task ids, paths, channels, type tags, data, pairwise) as
/// arrays, NULL when there are none. `$1` is the thread.
///
/// Each stored value is looked up by its whole primary key in a `LATERAL ... LIMIT 1` (the
/// key is unique, so this is the inner join it reads as): a subquery with a limit is not
/// flattened, so the planner cannot turn it into a scan of the namespace's values filtered
/// afterwards, which it did when its statistics said the thread was small.
macro_rules! tuples_from {
    ($from:expr, $order:expr) => {
        concat!(
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint::text, c.metadata::text,
    v.channels, v.type_tags, v.data, w.task_ids, w.task_paths, w.channels, w.type_tags, w.data
FROM (",
            $from,
            ") AS c
CROSS JOIN LATERAL (
    SELECT array_agg(r.channel) AS channels, array_agg(b.type_tag) AS type_tags, array_agg(b.data) AS data
    FROM checkpoint_channels r
    CROSS JOIN LATERAL (SELECT b.type_tag, b.data FROM checkpoint_blobs b
        WHERE b.thread_id = r.thread_id AND b.checkpoint_ns = r.checkpoint_ns
          AND b.channel = r.channel AND b.version = r.version AND b.digest = r.digest LIMIT 1) AS b
    WHERE r.thread_id = $1 AND r.checkpoint_ns = c.checkpoint_ns AND r.checkpoint_id = c.checkpoint_id) AS v
CROSS JOIN LATERAL (
    SELECT array_agg(x.task_id ORDER BY x.task_path, x.task_id, x.idx) AS task_ids,
        array_agg(x.task_path ORDER BY x.task_path, x.task_id, x.idx) AS task_paths,
        array_agg(x.channel ORDER BY x.task_path, x.task_id, x.idx) AS channels,
        array_agg(x.type_tag ORDER BY x.task_path, x.task_id, x.idx) AS type_tags,
        array_agg(x.data ORDER BY x.task_path, x.task_id, x.idx) AS data
    FROM checkpoint_writes x
    WHERE x.thread_id = $1 AND x.checkpoint_ns = c.checkpoint_ns AND x.checkpoint_id = c.checkpoint_id) AS w",
            $order
        )
    };
}

/// `get_tuple` of one id in one statement. $1 thread, $2 ns, $3 id.
pub(crate) const GET_TUPLE_BY_ID: &str =
    tuples_from!("SELECT * FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3", "");

/// `get_tuple` of the greatest id in one statement. $1 thread, $2 ns.
pub(crate) const GET_TUPLE_LATEST: &str = tuples_from!(
    "SELECT * FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1",
    ""
);

/// `list` in one statement: the tuples of the checkpoint rows `list_checkpoints!` selects, in
/// its order, with its parameters.
pub(crate) const LIST_TUPLES: &str =
    tuples_from!(list_checkpoints!(), "\nORDER BY c.checkpoint_id DESC, c.checkpoint_ns ASC");

// ---- deletes ---------------------------------------------------------------------------

/// $1 threads: everything of these threads, one statement per table.
pub(crate) const DELETE_THREADS: [&str; 5] = [
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoint_value_holders WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoint_channels WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoints WHERE thread_id = ANY($1::text[])",
];

/// $1 run ids: the threads that have a checkpoint whose metadata `run_id` is one of them.
pub(crate) const SELECT_RUN_THREADS: &str = "SELECT DISTINCT thread_id FROM checkpoints
    WHERE (metadata ->> 'run_id') = ANY($1::text[]) AND json_typeof(metadata -> 'run_id') = 'string'";

/// $1 run ids, $2 threads (locked by the caller): every checkpoint of these threads whose
/// metadata `run_id` is one of the run ids (a JSON string), with its writes and the record
/// of the values it read (CONTRACT §3 delete_for_runs). The caller then removes the values
/// no checkpoint reads any more.
pub(crate) const DELETE_FOR_RUNS: &str = "WITH doomed AS (
        DELETE FROM checkpoints
        WHERE (metadata ->> 'run_id') = ANY($1::text[]) AND json_typeof(metadata -> 'run_id') = 'string'
          AND thread_id = ANY($2::text[])
        RETURNING thread_id, checkpoint_ns, checkpoint_id
    ), writes AS (
        DELETE FROM checkpoint_writes w USING doomed d
        WHERE w.thread_id = d.thread_id AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id
    )
    DELETE FROM checkpoint_channels r USING doomed d
    WHERE r.thread_id = d.thread_id AND r.checkpoint_ns = d.checkpoint_ns AND r.checkpoint_id = d.checkpoint_id";

// ---- copy_thread -----------------------------------------------------------------------

/// $1 source, $2 target, in this order (CONTRACT §3 copy_thread): checkpoints replace those
/// with the same id in the target; the values the copied checkpoints read are replaced;
/// stored values are added; a copied checkpoint's writes replace the target checkpoint's
/// writes (none in the source leaves none); the source's value
/// holders replace the target's. The caller then removes the target's values no checkpoint
/// reads any more.
pub(crate) const COPY_THREAD: [&str; 7] = [
    "INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
    FROM checkpoints WHERE thread_id = $1
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
        checkpoint = EXCLUDED.checkpoint,
        metadata = EXCLUDED.metadata",
    "DELETE FROM checkpoint_channels t WHERE t.thread_id = $2 AND EXISTS (
        SELECT 1 FROM checkpoints s WHERE s.thread_id = $1
          AND s.checkpoint_ns = t.checkpoint_ns AND s.checkpoint_id = t.checkpoint_id)",
    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, digest, type_tag, data)
    SELECT $2, checkpoint_ns, channel, version, digest, type_tag, data
    FROM checkpoint_blobs WHERE thread_id = $1
    ON CONFLICT DO NOTHING",
    "INSERT INTO checkpoint_channels (thread_id, checkpoint_ns, checkpoint_id, channel, version, digest)
    SELECT $2, checkpoint_ns, checkpoint_id, channel, version, digest
    FROM checkpoint_channels WHERE thread_id = $1",
    "DELETE FROM checkpoint_writes t WHERE t.thread_id = $2 AND EXISTS (
        SELECT 1 FROM checkpoints s WHERE s.thread_id = $1
          AND s.checkpoint_ns = t.checkpoint_ns AND s.checkpoint_id = t.checkpoint_id)",
    "INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, data)
    SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, data
    FROM checkpoint_writes WHERE thread_id = $1
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
        task_path = EXCLUDED.task_path,
        channel = EXCLUDED.channel,
        type_tag = EXCLUDED.type_tag,
        data = EXCLUDED.data",
    "INSERT INTO checkpoint_value_holders (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT $2, checkpoint_ns, channel, version, holder_id FROM checkpoint_value_holders WHERE thread_id = $1
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET holder_id = EXCLUDED.holder_id",
];

// ---- prune keep_latest -----------------------------------------------------------------

/// $1 threads, in this order (CONTRACT §3 prune `keep_latest`): all but the newest
/// checkpoint of each (thread, namespace); then the value records and writes of checkpoints
/// that are gone (writes waiting for a checkpoint never put included); then the value
/// holders that are not a kept checkpoint; then the stored values no kept checkpoint reads.
pub(crate) const PRUNE_KEEP_LATEST: [&str; 5] = [
    "DELETE FROM checkpoints c WHERE c.thread_id = ANY($1::text[]) AND c.checkpoint_id <> (
        SELECT max(l.checkpoint_id) FROM checkpoints l
        WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)",
    "DELETE FROM checkpoint_channels r WHERE r.thread_id = ANY($1::text[]) AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = r.thread_id
          AND c.checkpoint_ns = r.checkpoint_ns AND c.checkpoint_id = r.checkpoint_id)",
    "DELETE FROM checkpoint_writes w WHERE w.thread_id = ANY($1::text[]) AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id
          AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)",
    "DELETE FROM checkpoint_value_holders i WHERE i.thread_id = ANY($1::text[]) AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = i.thread_id
          AND c.checkpoint_ns = i.checkpoint_ns AND c.checkpoint_id = i.holder_id)",
    DELETE_UNREAD_VALUES_OF_THREADS,
];

// ---- delta_channel_history -------------------------------------------------------------

/// The walk of CONTRACT §3 delta_channel_history, from the target's parent along
/// `parent_checkpoint_id` links in one (thread, namespace).
/// $1 thread, $2 ns, $3 the target's parent id, $4 the requested channels.
///
/// `walk` follows the links; a broken link (a parent never put) ends it, and its depth is
/// bounded by the namespace's checkpoint count so a cycle ends too; `anc` keeps each
/// ancestor at its first depth, which is the walk up to its first repeat. A channel's seed
/// is the value of the nearest ancestor that reads one; its writes are those of the
/// ancestors up to and including the seed ancestor (all of them without a seed). Rows come
/// seeds first, then writes per channel oldest ancestor first and in `get_tuple` order
/// within an ancestor.
pub(crate) const DELTA_HISTORY: &str = "WITH RECURSIVE
    bound AS (SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2),
    walk(checkpoint_id, parent_checkpoint_id, depth) AS (
        SELECT c.checkpoint_id, c.parent_checkpoint_id, 1::bigint
        FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3
      UNION ALL
        SELECT c.checkpoint_id, c.parent_checkpoint_id, w.depth + 1
        FROM walk w JOIN checkpoints c
          ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = w.parent_checkpoint_id
        WHERE w.depth <= (SELECT n FROM bound)
    ),
    anc AS (SELECT checkpoint_id, min(depth) AS depth FROM walk GROUP BY checkpoint_id),
    seed AS (
        SELECT DISTINCT ON (r.channel) r.channel, a.depth, r.version, r.digest
        FROM anc a JOIN checkpoint_channels r
          ON r.thread_id = $1 AND r.checkpoint_ns = $2 AND r.checkpoint_id = a.checkpoint_id
        WHERE r.channel = ANY($4::text[]) AND r.digest IS NOT NULL
        ORDER BY r.channel, a.depth
    )
    SELECT 0 AS kind, s.channel, s.depth, NULL::text AS task_path, NULL::text AS task_id,
           NULL::bigint AS idx, b.type_tag, b.data
    FROM seed s JOIN checkpoint_blobs b
      ON b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = s.channel
     AND b.version = s.version AND b.digest = s.digest
  UNION ALL
    SELECT 1, w.channel, a.depth, w.task_path, w.task_id, w.idx, w.type_tag, w.data
    FROM anc a JOIN checkpoint_writes w
      ON w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = a.checkpoint_id
    LEFT JOIN seed s ON s.channel = w.channel
    WHERE w.channel = ANY($4::text[]) AND (s.depth IS NULL OR a.depth <= s.depth)
  ORDER BY kind, channel, depth DESC, task_path, task_id, idx";
