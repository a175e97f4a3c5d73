//! Every change the saver makes, as the operations the writer thread runs inside its group
//! transaction (`writer.rs`): put (with its value resolution against the parent and the
//! thread's blobs), put_writes, delete_thread, delete_for_runs, copy_thread and prune's
//! keep-latest. Each may run more than once when a group is retried, so none consumes its
//! inputs.

use std::collections::BTreeMap;

use checkpoint_contract::{write_index, ChannelVersions, Checkpoint, CheckpointError, TypedValue};
use rusqlite::{params, Connection, OptionalExtension};

use crate::codec::{
    decode_checkpoint, encode_checkpoint, encode_value_versions, version_sql, StoredCheckpoint, StoredValue,
    INLINE_LIMIT,
};
use crate::schema::sql_err;

/// Everything `put` needs, owned by its request.
pub(crate) struct PutArgs {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub parent: Option<String>,
    pub checkpoint: Checkpoint,
    pub metadata_json: String,
    pub run_id: Option<String>,
    pub new_versions: ChannelVersions,
}

/// The body of the parent, loaded at most once per put.
struct ParentCache<'a> {
    args: &'a PutArgs,
    loaded: Option<Option<StoredCheckpoint>>,
}

impl ParentCache<'_> {
    fn get(&mut self, conn: &Connection) -> Result<Option<&StoredCheckpoint>, CheckpointError> {
        if self.loaded.is_none() {
            let body = match &self.args.parent {
                None => None,
                Some(parent) => conn
                    .prepare_cached(
                        "SELECT checkpoint FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
                    )
                    .and_then(|mut s| {
                        s.query_row(params![self.args.thread_id, self.args.checkpoint_ns, parent], |r| {
                            r.get::<_, Vec<u8>>(0)
                        })
                        .optional()
                    })
                    .map_err(sql_err("reading the parent checkpoint"))?
                    .map(|b| decode_checkpoint(&b))
                    .transpose()?,
            };
            self.loaded = Some(body);
        }
        Ok(self.loaded.as_ref().and_then(Option::as_ref))
    }

    /// The parent's value of `ch` when the parent has `ch` at the same version.
    fn value(
        &mut self,
        conn: &Connection,
        ch: &str,
        version: &checkpoint_contract::ChannelVersion,
    ) -> Result<Option<StoredValue>, CheckpointError> {
        Ok(self.get(conn)?.filter(|p| p.channel_versions.get(ch) == Some(version)).and_then(|p| p.value(ch)))
    }
}

/// The newest stored value of (`ch`, `version`) in the thread and namespace, from any
/// checkpoint that has one (latest put first).
fn newest_value(
    conn: &Connection,
    a: &PutArgs,
    ch: &str,
    version: &checkpoint_contract::ChannelVersion,
) -> Result<Option<StoredValue>, CheckpointError> {
    let body: Option<Vec<u8>> = conn
        .prepare_cached(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2
               AND EXISTS (SELECT 1 FROM json_each(value_versions) j WHERE j.key = ?3 AND j.value = ?4)
             ORDER BY rowid DESC LIMIT 1",
        )
        .and_then(|mut s| {
            s.query_row(params![a.thread_id, a.checkpoint_ns, ch, version_sql(version)], |r| r.get(0)).optional()
        })
        .map_err(sql_err("looking up a stored channel value"))?;
    match body {
        None => Ok(None),
        Some(b) => Ok(decode_checkpoint(&b)?.value(ch)),
    }
}

/// True when blob `blob_id` of the thread holds exactly `value`.
fn blob_equals(conn: &Connection, thread_id: &str, blob_id: &str, value: &TypedValue) -> Result<bool, CheckpointError> {
    conn.prepare_cached(
        "SELECT 1 FROM blobs WHERE thread_id = ?1 AND blob_id = ?2 AND type_tag = ?3 AND length(data) = ?4 AND data = ?5",
    )
    .and_then(|mut s| s.exists(params![thread_id, blob_id, value.type_tag, value.data.len() as i64, value.data]))
    .map_err(sql_err("comparing a channel value with the stored one"))
}

/// Deletes the thread's blobs that no checkpoint references any more.
fn gc_blobs(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    conn.prepare_cached(
        "DELETE FROM blobs WHERE thread_id = ?1
           AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.thread_id = ?1 AND r.blob_id = blobs.blob_id)",
    )
    .and_then(|mut s| s.execute([thread_id]))
    .map(|_| ())
    .map_err(sql_err("deleting unreferenced channel values"))
}

/// `put` (CONTRACT §2): resolves every channel of `channel_versions` (carried value; else
/// absent when in `new_versions`; else, when the parent has the same version, the parent's
/// value or none; else the newest stored value at that version), stores the resolved map with the checkpoint, and
/// replaces an existing row of the same id (its writes stay: they live in `writes`).
pub(crate) fn put(conn: &Connection, a: &PutArgs) -> Result<(), CheckpointError> {
    let cp = &a.checkpoint;
    let mut parent = ParentCache { args: a, loaded: None };
    let mut values: BTreeMap<String, StoredValue> = BTreeMap::new();
    for (ch, version) in &cp.channel_versions {
        let value = if let Some(v) = cp.channel_values.get(ch) {
            if v.data.len() > INLINE_LIMIT {
                let reuse = match parent.value(conn, ch, version)? {
                    Some(StoredValue::Blob(id)) if blob_equals(conn, &a.thread_id, &id, v)? => Some(id),
                    _ => None,
                };
                let id = match reuse {
                    Some(id) => id,
                    None => {
                        let id = uuid::Uuid::new_v4().simple().to_string();
                        conn.prepare_cached(
                            "INSERT INTO blobs (thread_id, blob_id, type_tag, data) VALUES (?1, ?2, ?3, ?4)",
                        )
                        .and_then(|mut s| s.execute(params![a.thread_id, id, v.type_tag, v.data]))
                        .map_err(sql_err("storing a large channel value"))?;
                        id
                    }
                };
                Some(StoredValue::Blob(id))
            } else {
                Some(StoredValue::Inline(v.clone()))
            }
        } else if a.new_versions.contains_key(ch) {
            None
        } else {
            // The parent's value when the parent has `ch` at this version, or none: a channel
            // the parent reads absent there stays absent (CONTRACT §2 put.emptied), even where
            // a sibling stored a value at the same version.
            let at_version =
                parent.get(conn)?.filter(|p| p.channel_versions.get(ch) == Some(version)).map(|p| p.value(ch));
            match at_version {
                Some(v) => v,
                None => newest_value(conn, a, ch, version)?,
            }
        };
        if let Some(v) = value {
            values.insert(ch.clone(), v);
        }
    }
    let body = encode_checkpoint(cp, &values)?;
    let value_versions = encode_value_versions(cp, &values)?;

    // Blob references: replace the old row's, then drop blobs nobody references any more.
    let old_refs: Vec<String> = conn
        .prepare_cached(
            "DELETE FROM blob_refs WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 RETURNING blob_id",
        )
        .and_then(|mut s| {
            s.query_map(params![a.thread_id, a.checkpoint_ns, cp.id], |r| r.get(0))?.collect::<Result<Vec<_>, _>>()
        })
        .map_err(sql_err("replacing the checkpoint's value references"))?;
    let mut new_refs: Vec<&str> = Vec::new();
    for v in values.values() {
        if let StoredValue::Blob(id) = v {
            new_refs.push(id);
            conn.prepare_cached(
                "INSERT OR IGNORE INTO blob_refs (thread_id, checkpoint_ns, checkpoint_id, blob_id) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(params![a.thread_id, a.checkpoint_ns, cp.id, id]))
            .map_err(sql_err("storing the checkpoint's value references"))?;
        }
    }
    for old in old_refs.iter().filter(|o| !new_refs.contains(&o.as_str())) {
        conn.prepare_cached(
            "DELETE FROM blobs WHERE thread_id = ?1 AND blob_id = ?2
               AND NOT EXISTS (SELECT 1 FROM blob_refs WHERE thread_id = ?1 AND blob_id = ?2)",
        )
        .and_then(|mut s| s.execute(params![a.thread_id, old]))
        .map_err(sql_err("deleting an unreferenced channel value"))?;
    }

    conn.prepare_cached(
        "INSERT OR REPLACE INTO checkpoints
           (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut s| {
        s.execute(params![
            a.thread_id,
            a.checkpoint_ns,
            cp.id,
            a.parent,
            a.run_id,
            a.metadata_json,
            value_versions,
            body
        ])
    })
    .map(|_| ())
    .map_err(sql_err("storing the checkpoint"))
}

/// Everything `put_writes` needs, owned by its request.
pub(crate) struct PutWritesArgs {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub task_id: String,
    pub task_path: String,
    pub writes: Vec<(String, TypedValue)>,
}

/// `put_writes` (CONTRACT §2): each write gets its index; a regular write is
/// `INSERT OR IGNORE` (first wins), a special one `INSERT OR REPLACE` (last wins), decided
/// per row.
pub(crate) fn put_writes(conn: &Connection, a: &PutWritesArgs) -> Result<(), CheckpointError> {
    const COLUMNS: &str =
        "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    let mut first_wins = conn
        .prepare_cached(&format!("INSERT OR IGNORE INTO writes {COLUMNS}"))
        .map_err(sql_err("preparing to store writes"))?;
    let mut last_wins = conn
        .prepare_cached(&format!("INSERT OR REPLACE INTO writes {COLUMNS}"))
        .map_err(sql_err("preparing to store writes"))?;
    for (position, (channel, value)) in a.writes.iter().enumerate() {
        let idx = write_index(channel, position);
        let stmt = if idx < 0 { &mut last_wins } else { &mut first_wins };
        stmt.execute(params![
            a.thread_id,
            a.checkpoint_ns,
            a.checkpoint_id,
            a.task_id,
            idx,
            a.task_path,
            channel,
            value.type_tag,
            value.data
        ])
        .map_err(sql_err("storing a write"))?;
    }
    Ok(())
}

fn run_sql(conn: &Connection, sql: &str, params: impl rusqlite::Params, doing: &str) -> Result<(), CheckpointError> {
    conn.prepare_cached(sql).and_then(|mut s| s.execute(params)).map(|_| ()).map_err(sql_err(doing))
}

/// `delete_thread` (CONTRACT §2): every row of the thread in every table.
pub(crate) fn delete_thread(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    for table in ["checkpoints", "writes", "blob_refs", "blobs"] {
        run_sql(conn, &format!("DELETE FROM {table} WHERE thread_id = ?1"), [thread_id], "deleting a thread")?;
    }
    Ok(())
}

/// `delete_for_runs` (CONTRACT §3): checkpoints whose `metadata.run_id` is one of
/// `run_ids_json` (a JSON array of strings), with their writes and values.
pub(crate) fn delete_for_runs(conn: &Connection, run_ids_json: &str) -> Result<(), CheckpointError> {
    const DOOMED: &str = "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
                           WHERE run_id IN (SELECT value FROM json_each(?1))";
    let threads: Vec<String> = conn
        .prepare_cached("SELECT DISTINCT thread_id FROM checkpoints WHERE run_id IN (SELECT value FROM json_each(?1))")
        .and_then(|mut s| s.query_map([run_ids_json], |r| r.get(0))?.collect::<Result<Vec<_>, _>>())
        .map_err(sql_err("finding the checkpoints of the runs"))?;
    if threads.is_empty() {
        return Ok(());
    }
    run_sql(
        conn,
        &format!("DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN ({DOOMED})"),
        [run_ids_json],
        "deleting the writes of the runs",
    )?;
    run_sql(
        conn,
        &format!("DELETE FROM blob_refs WHERE (thread_id, checkpoint_ns, checkpoint_id) IN ({DOOMED})"),
        [run_ids_json],
        "deleting the value references of the runs",
    )?;
    run_sql(
        conn,
        "DELETE FROM checkpoints WHERE run_id IN (SELECT value FROM json_each(?1))",
        [run_ids_json],
        "deleting the checkpoints of the runs",
    )?;
    for t in &threads {
        gc_blobs(conn, t)?;
    }
    Ok(())
}

/// `copy_thread` (CONTRACT §3): every row of `source` in every table, under `target`, in
/// SQL. Rows of the target with the same keys are replaced, so a second copy changes
/// nothing; a missing source copies nothing.
pub(crate) fn copy_thread(conn: &Connection, source: &str, target: &str) -> Result<(), CheckpointError> {
    let p = params![source, target];
    run_sql(
        conn,
        "DELETE FROM blob_refs WHERE thread_id = ?2 AND (checkpoint_ns, checkpoint_id) IN
           (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?1)",
        p,
        "copying a thread (value references)",
    )?;
    // CONTRACT §3 copy_thread: a copied checkpoint's writes replace the target
    // checkpoint's writes, also when the source checkpoint has none (found by the fuzzer).
    run_sql(
        conn,
        "DELETE FROM writes WHERE thread_id = ?2 AND (checkpoint_ns, checkpoint_id) IN
           (SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?1)",
        p,
        "copying a thread (replaced writes)",
    )?;
    run_sql(
        conn,
        "INSERT OR REPLACE INTO checkpoints
           (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint)
         SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, metadata, value_versions, checkpoint
           FROM checkpoints WHERE thread_id = ?1 ORDER BY rowid",
        p,
        "copying a thread (checkpoints)",
    )?;
    run_sql(
        conn,
        "INSERT OR REPLACE INTO writes
           (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value)
         SELECT ?2, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type_tag, value
           FROM writes WHERE thread_id = ?1",
        p,
        "copying a thread (writes)",
    )?;
    run_sql(
        conn,
        "INSERT OR IGNORE INTO blobs (thread_id, blob_id, type_tag, data)
         SELECT ?2, blob_id, type_tag, data FROM blobs WHERE thread_id = ?1",
        p,
        "copying a thread (large values)",
    )?;
    run_sql(
        conn,
        "INSERT OR IGNORE INTO blob_refs (thread_id, checkpoint_ns, checkpoint_id, blob_id)
         SELECT ?2, checkpoint_ns, checkpoint_id, blob_id FROM blob_refs WHERE thread_id = ?1",
        p,
        "copying a thread (value references)",
    )?;
    gc_blobs(conn, target)
}

/// `prune(keep_latest)` (CONTRACT §3) of one thread: the newest checkpoint of each
/// namespace stays with its writes and every value it reads (values are resolved per
/// checkpoint, so nothing older is needed); everything else of the thread goes.
pub(crate) fn prune_keep_latest(conn: &Connection, thread_id: &str) -> Result<(), CheckpointError> {
    run_sql(
        conn,
        "DELETE FROM checkpoints WHERE thread_id = ?1 AND checkpoint_id <
           (SELECT max(c.checkpoint_id) FROM checkpoints c
             WHERE c.thread_id = ?1 AND c.checkpoint_ns = checkpoints.checkpoint_ns)",
        [thread_id],
        "pruning checkpoints",
    )?;
    for table in ["writes", "blob_refs"] {
        run_sql(
            conn,
            &format!(
                "DELETE FROM {table} WHERE thread_id = ?1 AND NOT EXISTS
                   (SELECT 1 FROM checkpoints c WHERE c.thread_id = ?1
                      AND c.checkpoint_ns = {table}.checkpoint_ns AND c.checkpoint_id = {table}.checkpoint_id)"
            ),
            [thread_id],
            "pruning writes and value references",
        )?;
    }
    gc_blobs(conn, thread_id)
}
