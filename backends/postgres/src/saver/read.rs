//! The reading side of [`PostgresSaver`]. `get_tuple` and `list` are each one statement,
//! so each sees one snapshot with no transaction around it (one round trip): the checkpoint
//! rows with their channel values and pending writes aggregated into arrays per row
//! (`sql::tuples_from!`). `delta_channel_history` runs in a read-only `REPEATABLE READ`
//! transaction.

use std::collections::BTreeMap;
use std::sync::Arc;

use checkpoint_contract::{
    CheckpointConfig, CheckpointError, CheckpointTuple, DeltaChannelHistory, ListOptions, PendingWrite, TypedValue,
};
use deadpool_postgres::Object;
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, Row};

use super::{config_of, OpResult, PostgresSaver};
use crate::encode::{checkpoint_from_shell, metadata_from_text};
use crate::sql;

/// The channel values of a tuple row (see `sql::tuples_from!`): `channels`, `tags` and
/// `data` as the checkpoint row stores them (a tag and data where it carries the value),
/// `found` the uncarried values looked up (tag, a NUL byte, data; NULL when none is stored,
/// and the channel is then absent).
fn channel_values(
    channels: Vec<String>,
    tags: Vec<Option<String>>,
    data: Vec<Option<Vec<u8>>>,
    found: Vec<Option<Vec<u8>>>,
) -> BTreeMap<String, TypedValue> {
    let (mut tags, mut data, mut found) = (tags.into_iter(), data.into_iter(), found.into_iter());
    let mut values = BTreeMap::new();
    for channel in channels {
        let carried = (tags.next().flatten(), data.next().flatten());
        let looked_up = found.next().flatten();
        let value = match carried {
            (Some(type_tag), Some(data)) => TypedValue { type_tag, data },
            _ => {
                let Some(mut bytes) = looked_up else { continue };
                let Some(nul) = bytes.iter().position(|b| *b == 0) else { continue };
                let data = bytes.split_off(nul + 1);
                bytes.truncate(nul);
                TypedValue { type_tag: String::from_utf8_lossy(&bytes).into_owned(), data }
            }
        };
        values.insert(channel, value);
    }
    values
}

/// One tuple from a row of `sql::tuples_from!` starting at column `at` (namespace, id,
/// parent id, checkpoint, metadata, value channels, tags, data and the uncarried values
/// found, write task ids, paths, channels, tags, data and indexes; the arrays are NULL when
/// there are none).
fn tuple_from_row(thread_id: &str, row: &Row, at: usize) -> Result<CheckpointTuple, CheckpointError> {
    let ns: String = row.get(at);
    let id: String = row.get(at + 1);
    let parent: Option<String> = row.get(at + 2);
    let shell: &str = row.get(at + 3);
    let metadata = metadata_from_text(&id, row.get(at + 4))?;
    let mut checkpoint = checkpoint_from_shell(id.clone(), shell)?;
    let strings = |i: usize| row.get::<_, Option<Vec<String>>>(at + i).unwrap_or_default();
    let bytes = |i: usize| row.get::<_, Option<Vec<Vec<u8>>>>(at + i).unwrap_or_default();
    let some_strings = |i: usize| row.get::<_, Option<Vec<Option<String>>>>(at + i).unwrap_or_default();
    let some_bytes = |i: usize| row.get::<_, Option<Vec<Option<Vec<u8>>>>>(at + i).unwrap_or_default();
    checkpoint.channel_values = channel_values(strings(5), some_strings(6), some_bytes(7), some_bytes(8));
    let indexes = row.get::<_, Option<Vec<i64>>>(at + 14).unwrap_or_default();
    let mut writes: Vec<(i64, PendingWrite)> = strings(9)
        .into_iter()
        .zip(strings(10))
        .zip(strings(11))
        .zip(strings(12).into_iter().zip(bytes(13)))
        .zip(indexes)
        .map(|((((task_id, task_path), channel), (type_tag, data)), idx)| {
            (idx, PendingWrite { task_id, task_path, channel, value: TypedValue { type_tag, data } })
        })
        .collect();
    // `get_tuple` order: task_path, task_id, idx (the columns are `COLLATE "C"`: byte order,
    // as `str`'s).
    writes.sort_unstable_by(|(i, a), (j, b)| (&a.task_path, &a.task_id, i).cmp(&(&b.task_path, &b.task_id, j)));
    let pending_writes = writes.into_iter().map(|(_, w)| w).collect();
    Ok(CheckpointTuple {
        config: config_of(thread_id, &ns, id),
        parent_config: parent.map(|p| config_of(thread_id, &ns, p)),
        checkpoint: Arc::new(checkpoint),
        metadata,
        pending_writes,
    })
}

/// The bound parts of a `list` call.
pub(super) struct ListQuery<'a> {
    pub(super) before: Option<&'a str>,
    pub(super) before_inclusive: bool,
    pub(super) keys: Vec<&'a str>,
    pub(super) values: Vec<String>,
    pub(super) limit: Option<i64>,
}

impl PostgresSaver {
    async fn read_tx(client: &mut Object) -> OpResult<deadpool_postgres::Transaction<'_>> {
        Ok(client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start().await?)
    }

    pub(super) async fn get_tuple_once(&self, config: &CheckpointConfig) -> OpResult<Option<CheckpointTuple>> {
        let client = self.client().await?;
        let (thread, ns) = (&config.thread_id, &config.checkpoint_ns);
        let row = match &config.checkpoint_id {
            Some(id) => {
                client.query_opt(&client.prepare_cached(sql::GET_TUPLE_BY_ID).await?, &[thread, ns, id]).await?
            }
            None => client.query_opt(&client.prepare_cached(sql::GET_TUPLE_LATEST).await?, &[thread, ns]).await?,
        };
        Ok(row.map(|row| tuple_from_row(thread, &row, 0)).transpose()?)
    }

    pub(super) async fn list_once(
        &self,
        thread_id: &str,
        options: &ListOptions,
        query: &ListQuery<'_>,
    ) -> OpResult<Vec<CheckpointTuple>> {
        let client = self.client().await?;
        let params: [&(dyn ToSql + Sync); 8] = [
            &thread_id,
            &options.checkpoint_ns,
            &options.checkpoint_id,
            &query.before,
            &query.before_inclusive,
            &query.keys,
            &query.values,
            &query.limit,
        ];
        let rows = client.query(&client.prepare_cached(sql::LIST_TUPLES).await?, &params).await?;
        Ok(rows.iter().map(|r| tuple_from_row(thread_id, r, 0)).collect::<Result<Vec<_>, CheckpointError>>()?)
    }

    /// The seeds and writes found for `channels`, only for channels that have some.
    pub(super) async fn delta_once(
        &self,
        config: &CheckpointConfig,
        channels: &[&str],
    ) -> OpResult<BTreeMap<String, DeltaChannelHistory>> {
        let mut found: BTreeMap<String, DeltaChannelHistory> = BTreeMap::new();
        let mut client = self.client().await?;
        let tx = Self::read_tx(&mut client).await?;
        let (thread, ns) = (&config.thread_id, &config.checkpoint_ns);
        let target = match &config.checkpoint_id {
            Some(id) => {
                tx.query_opt(&tx.prepare_cached(sql::SELECT_CHECKPOINT_BY_ID).await?, &[thread, ns, id]).await?
            }
            None => tx.query_opt(&tx.prepare_cached(sql::SELECT_LATEST_CHECKPOINT).await?, &[thread, ns]).await?,
        };
        // No target, or a target without a parent: nothing to walk.
        let Some(parent) = target.and_then(|row| row.get::<_, Option<String>>(1)) else { return Ok(found) };
        let rows = tx.query(&tx.prepare_cached(sql::DELTA_HISTORY).await?, &[thread, ns, &parent, &channels]).await?;
        tx.commit().await?;
        for row in rows {
            let kind: i32 = row.get(0);
            let channel: String = row.get(1);
            let value = TypedValue { type_tag: row.get(6), data: row.get(7) };
            let entry = found.entry(channel.clone()).or_default();
            if kind == 0 {
                entry.seed = Some(value);
            } else {
                entry.writes.push(PendingWrite {
                    task_id: row.get::<_, Option<String>>(4).unwrap_or_default(),
                    task_path: row.get::<_, Option<String>>(3).unwrap_or_default(),
                    channel,
                    value,
                });
            }
        }
        Ok(found)
    }
}
