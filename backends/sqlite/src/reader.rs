//! The read side: a pool of reader threads, each with its own WAL reader connection and
//! cache of prepared statements, and the queries of `get_tuple`, `list` and
//! `delta_channel_history`.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use checkpoint_contract::{
    metadata_matches, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, DeltaChannelHistory,
    ListOptions, PendingWrite, TypedValue,
};
use rusqlite::types::ToSql;
use rusqlite::{params, Connection, Row};
use tokio::sync::oneshot;

use crate::codec::{decode_checkpoint, decode_metadata, StoredCheckpoint, StoredValue};
use crate::schema::{backoff, error_is_busy, sql_err};
use crate::SqliteOptions;

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

/// The reader pool; dropping it lets the threads exit.
pub(crate) struct Readers {
    tx: crossbeam_channel::Sender<ReadJob>,
    options: SqliteOptions,
}

impl Readers {
    /// Starts one thread per connection.
    pub(crate) fn spawn(conns: Vec<Connection>, options: &SqliteOptions) -> Result<Self, CheckpointError> {
        let (tx, rx) = crossbeam_channel::unbounded::<ReadJob>();
        for (i, conn) in conns.into_iter().enumerate() {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("checkpoint-sqlite-reader-{i}"))
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        job(&conn);
                    }
                })
                .map_err(|e| CheckpointError::storage("starting an SQLite reader thread", e))?;
        }
        Ok(Self { tx, options: options.clone() })
    }

    /// Runs `f` on a reader thread, again while it fails because the database is busy
    /// (rare in WAL mode), and returns its result.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: Fn(&Connection) -> Result<T, CheckpointError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let limit = self.options.lock_timeout;
        let job: ReadJob = Box::new(move |conn: &Connection| {
            let deadline = std::time::Instant::now() + limit;
            let mut attempt = 0;
            let result = loop {
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| f(conn)))
                    .unwrap_or_else(|_| Err(CheckpointError::storage_msg("a read request panicked")));
                match r {
                    Err(e) if error_is_busy(&e) && std::time::Instant::now() < deadline => {
                        backoff(attempt);
                        attempt += 1;
                    }
                    other => break other,
                }
            };
            let _ = reply.send(result);
        });
        self.tx.send(job).map_err(|_| CheckpointError::storage_msg("the SQLite reader threads have stopped"))?;
        answer.await.map_err(|_| CheckpointError::storage_msg("an SQLite reader thread stopped before answering"))?
    }
}

fn config(thread_id: &str, ns: &str, id: String) -> CheckpointConfig {
    CheckpointConfig { thread_id: thread_id.to_owned(), checkpoint_ns: ns.to_owned(), checkpoint_id: Some(id) }
}

/// Sorts writes into `get_tuple` order: (task_path, task_id, idx).
fn sort_writes(writes: &mut [(i64, PendingWrite)]) {
    writes.sort_by(|(ia, a), (ib, b)| {
        (a.task_path.as_str(), a.task_id.as_str(), *ia).cmp(&(b.task_path.as_str(), b.task_id.as_str(), *ib))
    });
}

/// Fetches a large value stored in `blobs`.
fn load_blob(conn: &Connection, thread_id: &str, blob_id: &str) -> Result<TypedValue, CheckpointError> {
    conn.prepare_cached("SELECT type_tag, data FROM blobs WHERE thread_id = ?1 AND blob_id = ?2")
        .and_then(|mut s| {
            s.query_row(params![thread_id, blob_id], |r| Ok(TypedValue { type_tag: r.get(0)?, data: r.get(1)? }))
        })
        .map_err(sql_err("reading a large channel value"))
}

/// Takes a body's inline values and the blob references still to fetch.
fn split_values(body: &mut StoredCheckpoint) -> (BTreeMap<String, TypedValue>, BTreeMap<String, String>) {
    (std::mem::take(&mut body.values), std::mem::take(&mut body.blobs))
}

/// The get_tuple statement, for a given id or the latest: the checkpoint row, then its
/// writes, then its large values, in one statement (one snapshot). The latest id is found
/// by an uncorrelated subquery (an index seek), evaluated once per arm.
fn get_tuple_sql(with_id: bool) -> String {
    let (head, id) = if with_id {
        ("AND checkpoint_id = ?3", "?3")
    } else {
        (
            "AND (?3 IS NULL) ORDER BY checkpoint_id DESC LIMIT 1",
            "(SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2
               ORDER BY checkpoint_id DESC LIMIT 1)",
        )
    };
    format!(
        "SELECT * FROM (
           SELECT 0, checkpoint_id, parent_checkpoint_id, metadata, checkpoint, NULL, NULL FROM checkpoints
            WHERE thread_id = ?1 AND checkpoint_ns = ?2 {head})
         UNION ALL
         SELECT 1, task_id, task_path, channel, value, idx, type_tag FROM writes
          WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = {id}
         UNION ALL
         SELECT 2, b.blob_id, NULL, b.type_tag, b.data, NULL, NULL FROM blob_refs r
           CROSS JOIN blobs b ON b.thread_id = ?1 AND b.blob_id = r.blob_id
          WHERE r.thread_id = ?1 AND r.checkpoint_ns = ?2 AND r.checkpoint_id = {id}"
    )
}

/// `get_tuple` (CONTRACT §2) in one statement (one snapshot): the checkpoint row, its
/// writes and its large values, told apart by the first column. Writes of an id that has
/// no checkpoint are read but not returned.
pub(crate) fn get_tuple(conn: &Connection, cfg: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
    let sql = get_tuple_sql(cfg.checkpoint_id.is_some());
    let mut stmt = conn.prepare_cached(&sql).map_err(sql_err("preparing get_tuple"))?;
    let mut rows = stmt
        .query(params![cfg.thread_id, cfg.checkpoint_ns, cfg.checkpoint_id])
        .map_err(sql_err("reading a checkpoint"))?;
    let mut head: Option<(String, Option<String>, String, Vec<u8>)> = None;
    let mut writes: Vec<(i64, PendingWrite)> = Vec::new();
    let mut blobs: HashMap<String, TypedValue> = HashMap::new();
    while let Some(row) = rows.next().map_err(sql_err("reading a checkpoint"))? {
        let kind: i64 = row.get(0).map_err(sql_err("reading a checkpoint"))?;
        match kind {
            0 => head = Some(read_head(row).map_err(sql_err("reading a checkpoint"))?),
            1 => writes.push(read_write(row).map_err(sql_err("reading pending writes"))?),
            _ => {
                let id: String = row.get(1).map_err(sql_err("reading a large value"))?;
                let value = TypedValue {
                    type_tag: row.get(3).map_err(sql_err("reading a large value"))?,
                    data: row.get(4).map_err(sql_err("reading a large value"))?,
                };
                blobs.insert(id, value);
            }
        }
    }
    let Some((id, parent, metadata, body)) = head else { return Ok(None) };
    let mut body = decode_checkpoint(&body)?;
    let (mut values, refs) = split_values(&mut body);
    for (ch, blob_id) in refs {
        let v = match blobs.get(&blob_id) {
            Some(v) => v.clone(),
            None => {
                return Err(CheckpointError::storage_msg(format!(
                    "the large value {blob_id} of channel {ch:?} in checkpoint {id} is missing"
                )))
            }
        };
        values.insert(ch, v);
    }
    sort_writes(&mut writes);
    Ok(Some(CheckpointTuple {
        config: config(&cfg.thread_id, &cfg.checkpoint_ns, id.clone()),
        checkpoint: Arc::new(body.into_checkpoint(id, values)),
        metadata: decode_metadata(&metadata)?,
        parent_config: parent.map(|p| config(&cfg.thread_id, &cfg.checkpoint_ns, p)),
        pending_writes: writes.into_iter().map(|(_, w)| w).collect(),
    }))
}

fn read_head(row: &Row<'_>) -> rusqlite::Result<(String, Option<String>, String, Vec<u8>)> {
    Ok((row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
}

/// A write row of the get_tuple statement.
fn read_write(row: &Row<'_>) -> rusqlite::Result<(i64, PendingWrite)> {
    Ok((
        row.get(5)?,
        PendingWrite {
            task_id: row.get(1)?,
            task_path: row.get(2)?,
            channel: row.get(3)?,
            value: TypedValue { type_tag: row.get(6)?, data: row.get(4)? },
        },
    ))
}

/// True when SQLite's JSON comparison in [`FILTER_SQL`] is exactly CONTRACT §2's filter
/// rule for this filter, so `LIMIT` can be applied in SQL. Otherwise (objects, arrays,
/// numbers beyond ±2^53) SQL only narrows the rows and Rust decides, applying the limit.
fn filter_is_exact(filter: &CheckpointMetadata) -> bool {
    filter.values().all(|v| match v {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => false,
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.unsigned_abs() <= 1 << 53,
            (None, Some(f)) => f.abs() <= 9_007_199_254_740_992.0,
            (None, None) => false,
        },
        _ => true,
    })
}

/// The metadata filter, with the filter bound as JSON text (`:filter`), never pasted:
/// every key of the filter must match the top-level metadata value of that key. `null`
/// matches a missing key or null; numbers compare by value, and exactly: SQLite compares an
/// integer with a real without rounding the integer, so 2^53 + 1 is not 2^53.0; booleans only equal booleans; strings exactly; objects and arrays are only
/// checked for kind here (Rust compares them).
const FILTER_SQL: &str = "NOT EXISTS (
    SELECT 1 FROM json_each(:filter) f WHERE NOT (
      CASE f.type
        WHEN 'null' THEN NOT EXISTS (SELECT 1 FROM json_each(checkpoints.metadata) m
                                      WHERE m.key = f.key AND m.type <> 'null')
        ELSE EXISTS (SELECT 1 FROM json_each(checkpoints.metadata) m WHERE m.key = f.key AND (
          CASE
            WHEN f.type IN ('integer', 'real') THEN m.type IN ('integer', 'real') AND m.value = f.value
            WHEN f.type IN ('object', 'array') THEN m.type = f.type
            ELSE m.type = f.type AND m.value = f.value
          END))
      END))";

/// A candidate row of `list`.
struct Head {
    ns: String,
    id: String,
    parent: Option<String>,
    metadata: CheckpointMetadata,
    body: StoredCheckpoint,
}

/// `list` (CONTRACT §2): scope, filter, `before` and limit in SQL (limit in Rust when the
/// filter needs Rust's JSON equality), newest id first and namespace ascending; then the
/// page's writes in one query, all in one read transaction.
pub(crate) fn list(
    conn: &Connection,
    thread_id: &str,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>, CheckpointError> {
    let limit = options.limit.unwrap_or(usize::MAX);
    if limit == 0 {
        return Ok(Vec::new());
    }
    let tx = conn.unchecked_transaction().map_err(sql_err("starting a read transaction"))?;
    let exact = filter_is_exact(&options.filter);
    let filter_json = if options.filter.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&options.filter).map_err(|e| CheckpointError::storage("encoding the filter", e))?)
    };
    let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut sql = String::from(
        "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata, checkpoint FROM checkpoints
          WHERE thread_id = :thread",
    );
    let mut binds: Vec<(&str, &dyn ToSql)> = vec![(":thread", &thread_id)];
    if let Some(ns) = &options.checkpoint_ns {
        sql.push_str(" AND checkpoint_ns = :ns");
        binds.push((":ns", ns));
    }
    if let Some(id) = &options.checkpoint_id {
        sql.push_str(" AND checkpoint_id = :id");
        binds.push((":id", id));
    }
    if let Some(before) = &options.before {
        sql.push_str(" AND checkpoint_id < :before");
        binds.push((":before", before));
    }
    if let Some(f) = &filter_json {
        sql.push_str(" AND ");
        sql.push_str(FILTER_SQL);
        binds.push((":filter", f));
    }
    sql.push_str(" ORDER BY checkpoint_id DESC, checkpoint_ns ASC");
    if exact && options.limit.is_some() {
        sql.push_str(" LIMIT :limit");
        binds.push((":limit", &limit_sql));
    }
    let mut heads: Vec<Head> = Vec::new();
    {
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err("preparing list"))?;
        let mut rows = stmt.query(binds.as_slice()).map_err(sql_err("listing checkpoints"))?;
        while let Some(row) = rows.next().map_err(sql_err("listing checkpoints"))? {
            let metadata: String = row.get(3).map_err(sql_err("listing checkpoints"))?;
            let metadata = decode_metadata(&metadata)?;
            if !exact && !metadata_matches(&metadata, &options.filter) {
                continue;
            }
            let body: Vec<u8> = row.get(4).map_err(sql_err("listing checkpoints"))?;
            heads.push(Head {
                ns: row.get(0).map_err(sql_err("listing checkpoints"))?,
                id: row.get(1).map_err(sql_err("listing checkpoints"))?,
                parent: row.get(2).map_err(sql_err("listing checkpoints"))?,
                metadata,
                body: decode_checkpoint(&body)?,
            });
            if heads.len() >= limit {
                break;
            }
        }
    }
    if heads.is_empty() {
        return Ok(Vec::new());
    }
    let mut writes = page_writes(&tx, thread_id, &heads)?;
    let mut out = Vec::with_capacity(heads.len());
    for (i, mut h) in heads.into_iter().enumerate() {
        let (mut values, refs) = split_values(&mut h.body);
        for (ch, blob_id) in refs {
            values.insert(ch, load_blob(&tx, thread_id, &blob_id)?);
        }
        let mut w = writes.remove(&i).unwrap_or_default();
        sort_writes(&mut w);
        out.push(CheckpointTuple {
            config: config(thread_id, &h.ns, h.id.clone()),
            checkpoint: Arc::new(h.body.into_checkpoint(h.id, values)),
            metadata: h.metadata,
            parent_config: h.parent.map(|p| config(thread_id, &h.ns, p)),
            pending_writes: w.into_iter().map(|(_, w)| w).collect(),
        });
    }
    drop(tx);
    Ok(out)
}

/// Pages up to this size read their writes with one point query per checkpoint; larger
/// ones with one range query per namespace of the page.
const POINT_QUERY_PAGE: usize = 16;

/// The writes of every checkpoint of a page, by position in the page. A small page asks
/// for each checkpoint's writes (a primary-key lookup each); a larger one reads, for each
/// namespace of the page, the writes between its smallest and largest id in one index
/// range scan and keeps those of the page's checkpoints (with no filter the page is exactly
/// that range, so nothing is read in vain).
fn page_writes(
    conn: &Connection,
    thread_id: &str,
    heads: &[Head],
) -> Result<HashMap<usize, Vec<(i64, PendingWrite)>>, CheckpointError> {
    let mut out: HashMap<usize, Vec<(i64, PendingWrite)>> = HashMap::new();
    let doing = "reading pending writes";
    if heads.len() <= POINT_QUERY_PAGE {
        let mut stmt = conn
            .prepare_cached(
                "SELECT task_id, task_path, channel, value, idx, type_tag FROM writes
                  WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
            )
            .map_err(sql_err(doing))?;
        for (pos, h) in heads.iter().enumerate() {
            let mut rows = stmt.query(params![thread_id, h.ns, h.id]).map_err(sql_err(doing))?;
            while let Some(row) = rows.next().map_err(sql_err(doing))? {
                out.entry(pos).or_default().push(write_at(row, 0).map_err(sql_err(doing))?);
            }
        }
        return Ok(out);
    }
    // Per namespace: the page's (id, position) in ascending id order, merged with the
    // writes, which come in ascending id order too.
    let mut by_ns: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
    for (pos, h) in heads.iter().enumerate() {
        by_ns.entry(h.ns.as_str()).or_default().push((h.id.as_str(), pos));
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT checkpoint_id, task_id, task_path, channel, value, idx, type_tag FROM writes
              WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id BETWEEN ?3 AND ?4
              ORDER BY checkpoint_id",
        )
        .map_err(sql_err(doing))?;
    for (ns, mut ids) in by_ns {
        ids.sort_unstable();
        let (Some(low), Some(high)) = (ids.first().map(|x| x.0), ids.last().map(|x| x.0)) else { continue };
        let mut rows = stmt.query(params![thread_id, ns, low, high]).map_err(sql_err(doing))?;
        let mut cursor = 0;
        while let Some(row) = rows.next().map_err(sql_err(doing))? {
            let id = row.get_ref(0).and_then(|v| v.as_str().map_err(Into::into)).map_err(sql_err(doing))?;
            while cursor < ids.len() && ids[cursor].0 < id {
                cursor += 1;
            }
            match ids.get(cursor) {
                Some((page_id, pos)) if *page_id == id => {
                    out.entry(*pos).or_default().push(write_at(row, 1).map_err(sql_err(doing))?);
                }
                Some(_) => {}
                None => break,
            }
        }
    }
    Ok(out)
}

/// A write from columns `at..at+6`: task_id, task_path, channel, value, idx, type_tag.
fn write_at(row: &Row<'_>, at: usize) -> rusqlite::Result<(i64, PendingWrite)> {
    Ok((
        row.get(at + 4)?,
        PendingWrite {
            task_id: row.get(at)?,
            task_path: row.get(at + 1)?,
            channel: row.get(at + 2)?,
            value: TypedValue { type_tag: row.get(at + 5)?, data: row.get(at + 3)? },
        },
    ))
}

/// `delta_channel_history` (CONTRACT §3) in one recursive query: resolve the target as
/// `get_tuple` does, walk parent links from its parent while some requested channel has no
/// seed yet (carrying the channels still in play as a JSON array), and return each
/// ancestor's writes on the channels in play plus the first ancestor that has a value for
/// each channel. The walk's rows come back too, so that a parent cycle ends the walk at the
/// first repeated checkpoint.
pub(crate) fn delta_channel_history(
    conn: &Connection,
    cfg: &CheckpointConfig,
    channels: &[String],
) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
    let mut out: BTreeMap<String, DeltaChannelHistory> =
        channels.iter().map(|c| (c.clone(), DeltaChannelHistory::default())).collect();
    if channels.is_empty() {
        return Ok(out);
    }
    let wanted: Vec<&String> = out.keys().collect();
    let channels_json =
        serde_json::to_string(&wanted).map_err(|e| CheckpointError::storage("encoding the channels", e))?;
    let pick = if cfg.checkpoint_id.is_some() {
        "AND checkpoint_id = ?3"
    } else {
        "AND (?3 IS NULL) ORDER BY checkpoint_id DESC LIMIT 1"
    };
    let sql = format!(
        "WITH RECURSIVE
          target(parent) AS (
            SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 {pick}),
          chain(checkpoint_id, parent, depth, vv, remaining) AS (
            SELECT c.checkpoint_id, c.parent_checkpoint_id, 1, c.value_versions, json(?4)
              FROM target t JOIN checkpoints c
                ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = t.parent
            UNION ALL
            SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, c.value_versions,
                   (SELECT json_group_array(r.value) FROM json_each(chain.remaining) r
                     WHERE NOT EXISTS (SELECT 1 FROM json_each(chain.vv) j WHERE j.key = r.value))
              FROM chain JOIN checkpoints c
                ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = chain.parent
             WHERE chain.depth < (SELECT count(*) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2)
               AND EXISTS (SELECT 1 FROM json_each(chain.remaining) r
                            WHERE NOT EXISTS (SELECT 1 FROM json_each(chain.vv) j WHERE j.key = r.value)))
         SELECT 0, chain.depth, chain.checkpoint_id, w.channel, w.task_path, w.task_id, w.idx, w.type_tag, w.value
           FROM chain JOIN writes w
             ON w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = chain.checkpoint_id
          WHERE w.channel IN (SELECT value FROM json_each(chain.remaining))
         UNION ALL
         SELECT 1, chain.depth, chain.checkpoint_id, r.value, NULL, NULL, NULL, NULL, c.checkpoint
           FROM chain JOIN json_each(chain.remaining) r JOIN checkpoints c
             ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = chain.checkpoint_id
          WHERE EXISTS (SELECT 1 FROM json_each(chain.vv) j WHERE j.key = r.value)
         UNION ALL
         SELECT 2, chain.depth, chain.checkpoint_id, NULL, NULL, NULL, NULL, NULL, NULL FROM chain"
    );
    let tx = conn.unchecked_transaction().map_err(sql_err("starting a read transaction"))?;
    // (depth, idx, write) per channel; (depth, body) of the seed per channel; the walk.
    let mut writes: BTreeMap<String, Vec<(i64, i64, PendingWrite)>> = BTreeMap::new();
    let mut seeds: BTreeMap<String, (i64, Vec<u8>)> = BTreeMap::new();
    let mut walk: Vec<(i64, String)> = Vec::new();
    {
        let mut stmt = tx.prepare_cached(&sql).map_err(sql_err("preparing delta_channel_history"))?;
        let mut rows = stmt
            .query(params![cfg.thread_id, cfg.checkpoint_ns, cfg.checkpoint_id, channels_json])
            .map_err(sql_err("walking the checkpoint history"))?;
        while let Some(row) = rows.next().map_err(sql_err("walking the checkpoint history"))? {
            let mut read = |row: &Row<'_>| -> rusqlite::Result<()> {
                let kind: i64 = row.get(0)?;
                let depth: i64 = row.get(1)?;
                match kind {
                    0 => {
                        let w = PendingWrite {
                            task_id: row.get(5)?,
                            task_path: row.get(4)?,
                            channel: row.get(3)?,
                            value: TypedValue { type_tag: row.get(7)?, data: row.get(8)? },
                        };
                        writes.entry(w.channel.clone()).or_default().push((depth, row.get(6)?, w));
                    }
                    1 => {
                        seeds.insert(row.get(3)?, (depth, row.get(8)?));
                    }
                    _ => walk.push((depth, row.get(2)?)),
                }
                Ok(())
            };
            read(row).map_err(sql_err("walking the checkpoint history"))?;
        }
    }
    // The walk ends before the first checkpoint seen twice (a parent cycle).
    walk.sort_by_key(|(d, _)| *d);
    let mut seen = std::collections::HashSet::new();
    let cutoff = walk.iter().find(|(_, id)| !seen.insert(id.as_str())).map_or(i64::MAX, |(d, _)| *d);
    for (ch, entry) in out.iter_mut() {
        if let Some((_, body)) = seeds.get(ch).filter(|(d, _)| *d < cutoff) {
            let body = decode_checkpoint(body)?;
            entry.seed = match body.value(ch) {
                Some(StoredValue::Inline(v)) => Some(v),
                Some(StoredValue::Blob(id)) => Some(load_blob(&tx, &cfg.thread_id, &id)?),
                None => None,
            };
        }
        if let Some(mut ws) = writes.remove(ch) {
            ws.retain(|(d, _, _)| *d < cutoff);
            // Oldest ancestor first; within one, get_tuple order.
            ws.sort_by(|(da, ia, a), (db, ib, b)| {
                db.cmp(da)
                    .then_with(|| a.task_path.cmp(&b.task_path))
                    .then_with(|| a.task_id.cmp(&b.task_id))
                    .then_with(|| ia.cmp(ib))
            });
            entry.writes = ws.into_iter().map(|(_, _, w)| w).collect();
        }
    }
    drop(tx);
    Ok(out)
}
