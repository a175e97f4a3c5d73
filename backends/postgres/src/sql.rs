//! The SQL text of every statement. All of it is constant: caller data (thread ids, metadata
//! filter keys and values, channel names) is always a bound parameter, never pasted in.

/// The locks a `put` holds for the length of its transaction: the thread's lock shared, and
/// its (thread, namespace)'s exclusively. Puts in one namespace of a thread run one after
/// another (they resolve values from, and remove values of, that namespace); puts in
/// different namespaces run at once. Operations that remove checkpoints or values of a
/// whole thread (`delete_thread`, `prune`, `copy_thread` on its target, `delete_for_runs`)
/// take the thread's lock exclusively. $1 thread, $2 ns.
///
/// It also sets `plan_cache_mode` to `force_generic_plan` for the transaction (PostgreSQL 12
/// and later; a no-op before): the server would otherwise plan [`PUT_CHECKPOINT`] again at
/// every put (its generic plan, costed for arrays of unknown length, looks dearer than the
/// custom ones), which took 0.4 ms per put, more than running it (pg_stat_statements with
/// `track_planning`). The statements of a put are key lookups and inserts whose plans do not
/// depend on the values bound. JIT is off for the transaction: a generic plan is costed for
/// a thread of unknown size, and on a large one that cost crossed `jit_above_cost`, so each
/// put compiled its plan (20 to 40 ms) to run a key lookup.
pub(crate) const LOCK_FOR_PUT: &str = "SELECT
    pg_advisory_xact_lock_shared(hashtextextended('checkpoint-postgres thread ' || $1::text, 0)),
    pg_advisory_xact_lock(hashtextextended('checkpoint-postgres namespace ' || $1::text || ' ' || $2::text, 0)),
    CASE WHEN current_setting('server_version_num')::int >= 120000
         THEN set_config('plan_cache_mode', 'force_generic_plan', true) END,
    set_config('jit', 'off', true)";

/// Exclusive locks on every thread of `$1`, in a fixed order so two such calls cannot
/// deadlock.
pub(crate) const LOCK_THREADS_EXCLUSIVE: &str = "SELECT pg_advisory_xact_lock(k) FROM (
    SELECT DISTINCT hashtextextended('checkpoint-postgres thread ' || t, 0) AS k
    FROM unnest($1::text[]) AS t ORDER BY k) AS keys";

// ---- put -------------------------------------------------------------------------------

/// $1 thread, $2 ns, $3 id: marks the holder, as it is now, of each (channel, version) the
/// checkpoint about to be put again reads (see migration 3): the put takes this checkpoint's
/// reading away, and keeps it the holder only where it reads a value again. For a new id
/// this is one key lookup that finds nothing. It runs before [`PUT_CHECKPOINT`], in its own
/// statement, so that the marks' `put_seq` are less than the checkpoint's.
pub(crate) const MARK_OWN_VALUES: &str = "INSERT INTO checkpoint_holder_marks
        (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT $1, $2, r.channel, r.version, checkpoint_holder_of($1, $2, r.channel, r.version)
    FROM checkpoints own CROSS JOIN LATERAL unnest(own.value_channels, own.value_versions) AS r(channel, version)
    WHERE own.thread_id = $1 AND own.checkpoint_ns = $2 AND own.checkpoint_id = $3
    ORDER BY r.channel
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
        holder_id = EXCLUDED.holder_id, put_seq = EXCLUDED.put_seq";

/// The end of an INSERT into `checkpoints`: a row with the same key is replaced, all but the
/// key (re-putting an id, CONTRACT §2 put; copying onto a target's checkpoint, §3
/// copy_thread).
macro_rules! replace_checkpoint {
    () => {
        "
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
        checkpoint = EXCLUDED.checkpoint,
        metadata = EXCLUDED.metadata,
        put_seq = EXCLUDED.put_seq,
        value_channels = EXCLUDED.value_channels,
        value_versions = EXCLUDED.value_versions,
        value_digests = EXCLUDED.value_digests,
        value_type_tags = EXCLUDED.value_type_tags,
        value_data = EXCLUDED.value_data"
    };
}

/// Puts the checkpoint with its values and value references, in one statement. $1 thread,
/// $2 ns, $3 id, $4 parent id (or NULL), $5 shell JSON text, $6 metadata JSON text; the
/// carried values: $7 channels, $8 version JSON texts, $9 type tags, $10 data; $11 channels
/// to resolve (neither carried nor in `new_versions`), $12 their version JSON texts. A
/// channel of `channel_versions` in neither list is empty and has no reference.
///
/// The carried values go into the row itself (migration 4), each with its digest: a put of
/// carried values writes one row. A channel to resolve takes, at its version, the parent's
/// reference when the parent reads a value there (one key lookup); none when the parent has
/// the channel at that version without a value (an emptied channel stays empty, CONTRACT §2
/// put.emptied, even where a sibling stored a value at the same version); else that of
/// `checkpoint_found_in` (the holder, else the greatest id; rare). When the checkpoint it
/// comes from carries that value, it is copied to `checkpoint_blobs` (`kept`), where every
/// uncarried reference finds its value. Checkpoints are read as they were before this
/// statement, which matters when a checkpoint is put again, as its own parent. Re-putting an
/// id replaces everything but the key, and gives it a new `put_seq` (the column default): it
/// is now the latest put; the stored values it read before (`old`) that no checkpoint of the
/// namespace reads uncarried now are removed (`gone`). For a new id `old` is empty and
/// `gone` does nothing (its `EXISTS (SELECT 1 FROM old)` is a one-time filter: the namespace
/// is not scanned).
pub(crate) const PUT_CHECKPOINT: &str = concat!(
    "WITH v AS (
        SELECT u.channel, u.version::jsonb AS version, u.type_tag, u.data,
               sha256(convert_to(u.type_tag, 'UTF8') || decode('00', 'hex') || u.data) AS digest
        FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS u(channel, version, type_tag, data)
    ), found AS (
        SELECT o.channel, o.version, s.digest, s.type_tag, s.data
        FROM (SELECT t.channel, t.version::jsonb AS version
              FROM unnest($11::text[], $12::text[]) AS t(channel, version)) AS o
        LEFT JOIN LATERAL (
            SELECT r.digest, r.type_tag, r.data FROM checkpoints s
            CROSS JOIN LATERAL unnest(s.value_channels, s.value_versions, s.value_digests, s.value_type_tags,
                s.value_data) AS r(channel, version, digest, type_tag, data)
            WHERE s.thread_id = $1 AND s.checkpoint_ns = $2 AND r.channel = o.channel AND r.version = o.version
              AND s.checkpoint_id = COALESCE(
                  (SELECT p.checkpoint_id FROM checkpoints p
                   WHERE $4::text IS NOT NULL AND p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = $4
                     AND EXISTS (SELECT 1 FROM unnest(p.value_channels, p.value_versions) AS q(channel, version)
                                 WHERE q.channel = o.channel AND q.version = o.version)),
                  CASE WHEN EXISTS (SELECT 1 FROM checkpoints p
                                    WHERE $4::text IS NOT NULL AND p.thread_id = $1 AND p.checkpoint_ns = $2
                                      AND p.checkpoint_id = $4
                                      AND (p.checkpoint::jsonb -> 'channel_versions' -> o.channel) = o.version)
                       THEN NULL
                       ELSE checkpoint_found_in($1, $2, o.channel, o.version) END)
            LIMIT 1) AS s ON true
    ), kept AS (
        INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, digest, type_tag, data)
        SELECT $1, $2, channel, version, digest, type_tag, data FROM found WHERE data IS NOT NULL ORDER BY channel
        ON CONFLICT DO NOTHING
    ), refs AS (
        SELECT channel, version, digest, type_tag, data FROM v
      UNION ALL
        SELECT channel, version, digest, NULL::text, NULL::bytea FROM found
    ), old AS (
        SELECT r.channel, r.version, r.digest FROM checkpoints o
        CROSS JOIN LATERAL unnest(o.value_channels, o.value_versions, o.value_digests) AS r(channel, version, digest)
        WHERE o.thread_id = $1 AND o.checkpoint_ns = $2 AND o.checkpoint_id = $3
    ), gone AS (
        DELETE FROM checkpoint_blobs b USING (
            SELECT channel, version, digest FROM old
          EXCEPT
            SELECT channel, version, digest FROM found
          EXCEPT
            SELECT r.channel, r.version, r.digest FROM checkpoints c
            CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
                AS r(channel, version, digest, data)
            WHERE EXISTS (SELECT 1 FROM old) AND c.thread_id = $1 AND c.checkpoint_ns = $2
              AND c.checkpoint_id <> $3 AND c.value_digests && ARRAY(SELECT digest FROM old) AND r.data IS NULL
        ) AS g
        WHERE EXISTS (SELECT 1 FROM old) AND b.thread_id = $1 AND b.checkpoint_ns = $2
          AND b.channel = g.channel AND b.version = g.version AND b.digest = g.digest
    )
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
        value_channels, value_versions, value_digests, value_type_tags, value_data)
    SELECT $1, $2, $3, $4, $5::text::json, $6::text::json,
        COALESCE(array_agg(channel ORDER BY channel) FILTER (WHERE digest IS NOT NULL), '{}'),
        COALESCE(array_agg(version ORDER BY channel) FILTER (WHERE digest IS NOT NULL), '{}'),
        COALESCE(array_agg(digest ORDER BY channel) FILTER (WHERE digest IS NOT NULL), '{}'),
        COALESCE(array_agg(type_tag ORDER BY channel) FILTER (WHERE digest IS NOT NULL), '{}'),
        COALESCE(array_agg(data ORDER BY channel) FILTER (WHERE digest IS NOT NULL), '{}')
    FROM refs",
    replace_checkpoint!()
);

/// A put that resolves no channel, as one statement (the function of migration 4: its
/// locks, the marks and removals of a put of an id again, and one row). $1 thread, $2 ns,
/// $3 id, $4 parent id (or NULL), $5 shell JSON text, $6 metadata JSON text; its references
/// and values, pairwise and ordered by channel: $7 channels, $8 version JSON texts, $9
/// digests, $10 type tags, $11 data. Alone, it is its own transaction.
pub(crate) const PUT_CARRIED: &str = "SELECT checkpoint_put_carried($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// $1 threads: removes the stored values of these threads that no checkpoint reads without
/// carrying them (a set difference over the threads' values and uncarried references).
pub(crate) const DELETE_UNREAD_VALUES_OF_THREADS: &str = "DELETE FROM checkpoint_blobs b USING (
        SELECT thread_id, checkpoint_ns, channel, version, digest FROM checkpoint_blobs
        WHERE thread_id = ANY($1::text[])
      EXCEPT
        SELECT c.thread_id, c.checkpoint_ns, r.channel, r.version, r.digest FROM checkpoints c
        CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
            AS r(channel, version, digest, data)
        WHERE c.thread_id = ANY($1::text[]) AND r.data IS NULL
    ) AS gone
    WHERE b.thread_id = gone.thread_id AND b.checkpoint_ns = gone.checkpoint_ns AND b.channel = gone.channel
      AND b.version = gone.version AND b.digest = gone.digest";

/// $1 threads: forgets the marks of these threads that say nothing the derivation does not
/// (the holder they name is the latest reader anyway, or a later put superseded them).
pub(crate) const COMPACT_MARKS_OF_THREADS: &str = "DELETE FROM checkpoint_holder_marks m USING (
        SELECT k.thread_id, k.checkpoint_ns, k.channel, k.version FROM checkpoint_holder_marks k
        LEFT JOIN LATERAL (
            SELECT c.checkpoint_id, c.put_seq FROM checkpoints c
            WHERE ARRAY[c.thread_id, c.checkpoint_ns] = ARRAY[k.thread_id, k.checkpoint_ns]
              AND k.channel = ANY (c.value_channels) AND k.version = ANY (c.value_versions)
              AND EXISTS (SELECT 1 FROM unnest(c.value_channels, c.value_versions) AS r(channel, version)
                          WHERE r.channel = k.channel AND r.version = k.version)
            ORDER BY c.put_seq DESC LIMIT 1) AS t ON true
        WHERE k.thread_id = ANY($1::text[])
          AND (k.put_seq < t.put_seq OR k.holder_id IS NOT DISTINCT FROM t.checkpoint_id)
    ) AS d
    WHERE m.thread_id = d.thread_id AND m.checkpoint_ns = d.checkpoint_ns AND m.channel = d.channel
      AND m.version = d.version";

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
/// id, parent id, checkpoint and metadata as JSON text; the checkpoint's value references as
/// they are stored (channels, type tags, data: a tag and data are NULL where the checkpoint
/// does not carry the value, and the arrays of a row put before migration 4 are empty);
/// the values it does not carry (NULL when it carries all of them, else one element per
/// reference: NULL where it carries the value, else the stored value's type tag, a NUL byte
/// and its data, NULL when no value is stored); then its pending writes (task ids, paths,
/// channels, type tags, data and indexes, pairwise) as arrays, NULL when there are none, in
/// no order: the reader sorts them into `get_tuple` order (task_path, task_id, idx), since
/// five aggregates each with its own ORDER BY cost 2.5 ms of a list of 1,000 (one sort set
/// up per aggregate per row) in EXPLAIN ANALYZE. `$1` is the thread.
///
/// A checkpoint that carries every value it reads (the common case) costs no lookup and no
/// subquery: the `CASE` runs its subquery only for the others. There, each uncarried value
/// is looked up in `checkpoint_blobs` by its whole primary key in a subquery with `LIMIT 1`
/// (the key is unique), which the planner cannot flatten into a scan of the namespace's
/// values. (A `LATERAL` join per row for the values cost 3 ms of a list of 1,000 in
/// EXPLAIN ANALYZE, where the whole statement now takes about 5.)
macro_rules! tuples_from {
    ($from:expr, $order:expr) => {
        concat!(
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint::text, c.metadata::text,
    c.value_channels, c.value_type_tags, c.value_data,
    CASE WHEN cardinality(c.value_data) = cardinality(c.value_channels) AND array_position(c.value_data, NULL) IS NULL
         THEN NULL
         ELSE (SELECT array_agg(CASE WHEN r.data IS NULL THEN (
                   SELECT convert_to(b.type_tag, 'UTF8') || decode('00', 'hex') || b.data FROM checkpoint_blobs b
                   WHERE b.thread_id = $1 AND b.checkpoint_ns = c.checkpoint_ns
                     AND b.channel = r.channel AND b.version = r.version AND b.digest = r.digest LIMIT 1) END
                   ORDER BY r.n)
               FROM unnest(c.value_channels, c.value_versions, c.value_digests, c.value_data)
                   WITH ORDINALITY AS r(channel, version, digest, data, n)) END,
    w.task_ids, w.task_paths, w.channels, w.type_tags, w.data, w.idxs
FROM (",
            $from,
            ") AS c
CROSS JOIN LATERAL (
    SELECT array_agg(x.task_id) AS task_ids, array_agg(x.task_path) AS task_paths, array_agg(x.channel) AS channels,
        array_agg(x.type_tag) AS type_tags, array_agg(x.data) AS data, array_agg(x.idx) AS idxs
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
pub(crate) const DELETE_THREADS: [&str; 4] = [
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoint_holder_marks WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1::text[])",
    "DELETE FROM checkpoints WHERE thread_id = ANY($1::text[])",
];

/// $1 run ids: the threads that have a checkpoint whose metadata `run_id` is one of them.
pub(crate) const SELECT_RUN_THREADS: &str = "SELECT DISTINCT thread_id FROM checkpoints
    WHERE (metadata ->> 'run_id') = ANY($1::text[]) AND json_typeof(metadata -> 'run_id') = 'string'";

/// The checkpoints `delete_for_runs` removes: of the threads `$2` (locked by the caller),
/// those whose metadata `run_id` is one of `$1` (a JSON string).
macro_rules! doomed_by_runs {
    () => {
        "SELECT * FROM checkpoints
        WHERE (metadata ->> 'run_id') = ANY($1::text[]) AND json_typeof(metadata -> 'run_id') = 'string'
          AND thread_id = ANY($2::text[])"
    };
}

/// $1 run ids, $2 threads: marks the holder, as it is now, of every (channel, version) a
/// checkpoint about to be deleted by `delete_for_runs` reads (the deletion leaves holders
/// as they are).
pub(crate) const MARK_FOR_RUNS: &str = concat!(
    "INSERT INTO checkpoint_holder_marks (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT k.thread_id, k.checkpoint_ns, k.channel, k.version,
        checkpoint_holder_of(k.thread_id, k.checkpoint_ns, k.channel, k.version)
    FROM (SELECT DISTINCT c.thread_id, c.checkpoint_ns, r.channel, r.version FROM (",
    doomed_by_runs!(),
    ") AS c CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions) AS r(channel, version)) AS k
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
        holder_id = EXCLUDED.holder_id, put_seq = EXCLUDED.put_seq"
);

/// $1 run ids, $2 threads (locked by the caller): every checkpoint of these threads whose
/// metadata `run_id` is one of the run ids (a JSON string), with its writes (CONTRACT §3
/// delete_for_runs). The caller then removes the values no checkpoint reads any more.
pub(crate) const DELETE_FOR_RUNS: &str = "WITH doomed AS (
        DELETE FROM checkpoints
        WHERE (metadata ->> 'run_id') = ANY($1::text[]) AND json_typeof(metadata -> 'run_id') = 'string'
          AND thread_id = ANY($2::text[])
        RETURNING thread_id, checkpoint_ns, checkpoint_id
    )
    DELETE FROM checkpoint_writes w USING doomed d
    WHERE w.thread_id = d.thread_id AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id";

// ---- copy_thread -----------------------------------------------------------------------

/// $1 source, $2 target, in this order (CONTRACT §3 copy_thread). First, in each namespace
/// the source has checkpoints or marks in, the target's holder of every (channel, version)
/// either thread has one for becomes the source's, or stays the target's where the source
/// has none: marked, so the copied rows (which keep their `put_seq`) change no holder. Then
/// checkpoints replace those with the same id in the target; stored values are added; a
/// copied checkpoint's writes replace the target checkpoint's writes (none in the source
/// leaves none). The caller then removes the target's values no checkpoint reads any more.
pub(crate) const COPY_THREAD: [&str; 5] = [
    "WITH nss AS (
        SELECT checkpoint_ns FROM checkpoints WHERE thread_id = $1
        UNION SELECT checkpoint_ns FROM checkpoint_holder_marks WHERE thread_id = $1
    ), keys AS (
        SELECT c.checkpoint_ns, r.channel, r.version FROM checkpoints c
        CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions) AS r(channel, version)
        WHERE (c.thread_id = $1 OR c.thread_id = $2) AND c.checkpoint_ns IN (SELECT checkpoint_ns FROM nss)
      UNION
        SELECT m.checkpoint_ns, m.channel, m.version FROM checkpoint_holder_marks m
        WHERE (m.thread_id = $1 OR m.thread_id = $2) AND m.checkpoint_ns IN (SELECT checkpoint_ns FROM nss)
    )
    INSERT INTO checkpoint_holder_marks (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT $2, k.checkpoint_ns, k.channel, k.version,
        COALESCE(checkpoint_holder_of($1, k.checkpoint_ns, k.channel, k.version),
                 checkpoint_holder_of($2, k.checkpoint_ns, k.channel, k.version))
    FROM keys k ORDER BY 2, 3, 4
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
        holder_id = EXCLUDED.holder_id, put_seq = EXCLUDED.put_seq",
    concat!(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
        put_seq, value_channels, value_versions, value_digests, value_type_tags, value_data)
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
        put_seq, value_channels, value_versions, value_digests, value_type_tags, value_data
    FROM checkpoints WHERE thread_id = $1",
        replace_checkpoint!()
    ),
    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, digest, type_tag, data)
    SELECT $2, checkpoint_ns, channel, version, digest, type_tag, data
    FROM checkpoint_blobs WHERE thread_id = $1
    ON CONFLICT DO NOTHING",
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
];

// ---- prune keep_latest -----------------------------------------------------------------

/// $1 threads, in this order (CONTRACT §3 prune `keep_latest`): the holders that are the
/// kept (newest) checkpoint of their (thread, namespace) stay, every other holder goes
/// (marked: none); then all but the newest checkpoint of each (thread, namespace); then the
/// writes of checkpoints that are gone (writes waiting for a checkpoint never put
/// included); then the stored values no kept checkpoint reads, and the marks that are no
/// longer needed.
pub(crate) const PRUNE_KEEP_LATEST: [&str; 5] = [
    "WITH keep AS (
        SELECT thread_id, checkpoint_ns, max(checkpoint_id) AS checkpoint_id FROM checkpoints
        WHERE thread_id = ANY($1::text[]) GROUP BY thread_id, checkpoint_ns
    ), keys AS (
        SELECT c.thread_id, c.checkpoint_ns, r.channel, r.version FROM checkpoints c
        CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions) AS r(channel, version)
        WHERE c.thread_id = ANY($1::text[])
      UNION
        SELECT m.thread_id, m.checkpoint_ns, m.channel, m.version FROM checkpoint_holder_marks m
        WHERE m.thread_id = ANY($1::text[])
    )
    INSERT INTO checkpoint_holder_marks (thread_id, checkpoint_ns, channel, version, holder_id)
    SELECT k.thread_id, k.checkpoint_ns, k.channel, k.version,
        CASE WHEN checkpoint_holder_of(k.thread_id, k.checkpoint_ns, k.channel, k.version) = keep.checkpoint_id
             THEN keep.checkpoint_id END
    FROM keys k LEFT JOIN keep ON keep.thread_id = k.thread_id AND keep.checkpoint_ns = k.checkpoint_ns
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
        holder_id = EXCLUDED.holder_id, put_seq = EXCLUDED.put_seq",
    "DELETE FROM checkpoints c WHERE c.thread_id = ANY($1::text[]) AND c.checkpoint_id <> (
        SELECT max(l.checkpoint_id) FROM checkpoints l
        WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)",
    "DELETE FROM checkpoint_writes w WHERE w.thread_id = ANY($1::text[]) AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id
          AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)",
    DELETE_UNREAD_VALUES_OF_THREADS,
    COMPACT_MARKS_OF_THREADS,
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
        SELECT DISTINCT ON (r.channel) r.channel, a.depth, r.version, r.digest, r.type_tag, r.data
        FROM anc a JOIN checkpoints c
          ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = a.checkpoint_id
        CROSS JOIN LATERAL unnest(c.value_channels, c.value_versions, c.value_digests, c.value_type_tags,
            c.value_data) AS r(channel, version, digest, type_tag, data)
        WHERE r.channel = ANY($4::text[])
        ORDER BY r.channel, a.depth
    )
    SELECT 0 AS kind, s.channel, s.depth, NULL::text AS task_path, NULL::text AS task_id,
           NULL::bigint AS idx, COALESCE(s.type_tag, b.type_tag), COALESCE(s.data, b.data)
    FROM seed s LEFT JOIN checkpoint_blobs b
      ON s.data IS NULL AND b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = s.channel
     AND b.version = s.version AND b.digest = s.digest
    WHERE COALESCE(s.data, b.data) IS NOT NULL
  UNION ALL
    SELECT 1, w.channel, a.depth, w.task_path, w.task_id, w.idx, w.type_tag, w.data
    FROM anc a JOIN checkpoint_writes w
      ON w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = a.checkpoint_id
    LEFT JOIN seed s ON s.channel = w.channel
    WHERE w.channel = ANY($4::text[]) AND (s.depth IS NULL OR a.depth <= s.depth)
  ORDER BY kind, channel, depth DESC, task_path, task_id, idx";
