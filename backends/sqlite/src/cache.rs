//! A read cache that is exact across connections and processes.
//!
//! Every commit to a WAL database, by any connection of any process, rewrites the
//! wal-index header at the start of the shared `-shm` mapping (its `iChange` counter,
//! `mxFrame`, salts and checksums change). A result read from SQLite is stored with the
//! header seen *before* its read transaction began; it is served again only while the
//! header is still exactly that, i.e. while nothing at all has been committed since. A
//! commit that races with the read changes the header, so the entry is never served. The
//! header is read without a system call or lock, so a hit costs a hash lookup and a clone,
//! and never blocks the async runtime.
//!
//! The header is reached through SQLite's own mapping of the `-shm` file
//! (`SQLITE_FCNTL_FILE_POINTER` then the VFS's `xShmMap`), held by a connection that this
//! module keeps open for the instance's lifetime, so no extra file descriptor is opened
//! (closing one would drop the process's POSIX locks on the file). The layout (two copies
//! of a 48-byte header at offset 0, written copy 2 then copy 1 around a memory barrier) is
//! the documented, cross-version wal-index format; a reader that sees the copies differ
//! treats the state as unknown and bypasses the cache.

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::Path;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use checkpoint_contract::{CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};
use rusqlite::{ffi, Connection};

use crate::SqliteOptions;

/// Words in one copy of the wal-index header (48 bytes).
const HEADER_WORDS: usize = 12;
/// Cached `get_tuple` results kept at most; the map is emptied when it is full.
const MAX_GETS: usize = 4096;
/// Cached `list` results kept at most.
const MAX_LISTS: usize = 64;
/// Results holding more value bytes than this are not cached.
const MAX_BYTES: usize = 4 << 20;
/// Value bytes held by each of the two maps at most; a map is emptied when an insert
/// would pass it.
const MAX_TOTAL_BYTES: usize = 64 << 20;

/// The wal-index header words: equal snapshots mean no commit in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot([u32; HEADER_WORDS]);

/// The mapped wal-index header and the connection that keeps it mapped.
struct WalHeader {
    /// Only held: its shared-memory mapping must outlive every read of `words`.
    _conn: Mutex<Connection>,
    /// Two copies of the header, `2 * HEADER_WORDS` words.
    words: *const AtomicU32,
}

// SAFETY: `words` points into a shared-memory mapping owned by `_conn`, which lives as long
// as this value; it is only ever read, with atomic loads, from any thread.
unsafe impl Send for WalHeader {}
// SAFETY: as above; concurrent atomic loads are fine.
unsafe impl Sync for WalHeader {}

impl WalHeader {
    /// Maps the wal-index of the database at `path` through a dedicated connection, or
    /// `None` when it cannot be reached (then nothing is cached).
    fn open(path: &Path, options: &SqliteOptions) -> Result<Option<Self>, CheckpointError> {
        let conn = crate::schema::open_connection(path, options, true)?;
        // A read transaction opens the WAL and maps region 0 of the wal-index.
        crate::schema::retry_busy(options.lock_timeout, || {
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
        })
        .map_err(|e| CheckpointError::storage("reading the database to map its wal-index", e))?;
        // SAFETY: plain SQLite C API calls on a connection we own and use from this thread
        // only; every pointer is checked before use.
        let words = unsafe {
            let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
            let rc = ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast::<c_void>(),
            );
            if rc != ffi::SQLITE_OK || file.is_null() || (*file).pMethods.is_null() {
                return Ok(None);
            }
            let methods = &*(*file).pMethods;
            let Some(shm_map) = methods.xShmMap.filter(|_| methods.iVersion >= 2) else { return Ok(None) };
            let mut region: *mut c_void = std::ptr::null_mut();
            let rc = shm_map(file, 0, 32 * 1024, 0, &mut region);
            if rc != ffi::SQLITE_OK || region.is_null() || region.align_offset(4) != 0 {
                return Ok(None);
            }
            region.cast::<AtomicU32>().cast_const()
        };
        Ok(Some(Self { _conn: Mutex::new(conn), words }))
    }

    /// The current header, or `None` while a writer is updating it (the copies differ) or
    /// before it is initialised.
    fn snapshot(&self) -> Option<Snapshot> {
        let mut a = [0u32; HEADER_WORDS];
        let mut b = [0u32; HEADER_WORDS];
        // SAFETY: `words` points to at least 2 * HEADER_WORDS aligned words of the mapping
        // (region 0 is 32 KiB), alive as long as `self`.
        unsafe {
            for (i, w) in a.iter_mut().enumerate() {
                *w = (*self.words.add(i)).load(Ordering::Acquire);
            }
            fence(Ordering::SeqCst);
            for (i, w) in b.iter_mut().enumerate() {
                *w = (*self.words.add(HEADER_WORDS + i)).load(Ordering::Acquire);
            }
        }
        // Byte 12 of the header is `isInit` (the low byte of word 3 in native order).
        let is_init = a[3].to_ne_bytes()[0] != 0;
        (a == b && is_init).then_some(Snapshot(a))
    }
}

type GetKey = (String, String, Option<String>);
type ListEntry = (Snapshot, Arc<Vec<CheckpointTuple>>);

/// The cache of one saver instance.
pub(crate) struct ReadCache {
    header: Option<WalHeader>,
    gets: Mutex<Bounded<GetKey, (Snapshot, Option<CheckpointTuple>)>>,
    lists: Mutex<Bounded<String, ListEntry>>,
}

/// A map bounded by entry count and by the value bytes it holds; emptied when full (the
/// entries are cheap to read again, and any commit makes them useless anyway).
struct Bounded<K, V> {
    map: HashMap<K, V>,
    bytes: usize,
    max_entries: usize,
}

impl<K: std::hash::Hash + Eq, V> Bounded<K, V> {
    fn new(max_entries: usize) -> Self {
        Self { map: HashMap::new(), bytes: 0, max_entries }
    }

    fn insert(&mut self, key: K, value: V, bytes: usize) {
        if self.map.len() >= self.max_entries || self.bytes + bytes > MAX_TOTAL_BYTES {
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += bytes;
        self.map.insert(key, value);
    }
}

fn value_bytes(t: &CheckpointTuple) -> usize {
    t.checkpoint.channel_values.values().map(|v| v.data.len()).sum::<usize>()
        + t.pending_writes.iter().map(|w| w.value.data.len()).sum::<usize>()
}

fn list_key(thread_id: &str, options: &ListOptions) -> Option<String> {
    serde_json::to_string(&(thread_id, options)).ok()
}

impl ReadCache {
    /// A cache for the database at `path`; disabled (every lookup misses) when `enabled`
    /// is false or the wal-index cannot be mapped.
    pub(crate) fn open(path: &Path, options: &SqliteOptions, enabled: bool) -> Result<Self, CheckpointError> {
        let header = if enabled { WalHeader::open(path, options)? } else { None };
        Ok(Self { header, gets: Mutex::new(Bounded::new(MAX_GETS)), lists: Mutex::new(Bounded::new(MAX_LISTS)) })
    }

    /// The state to tag a read with; call it before the read transaction begins.
    pub(crate) fn snapshot(&self) -> Option<Snapshot> {
        self.header.as_ref().and_then(WalHeader::snapshot)
    }

    /// A `get_tuple` result still valid now.
    pub(crate) fn get(&self, cfg: &CheckpointConfig) -> Option<Option<CheckpointTuple>> {
        let now = self.snapshot()?;
        let key = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), cfg.checkpoint_id.clone());
        let gets = self.gets.lock().unwrap_or_else(|e| e.into_inner());
        match gets.map.get(&key) {
            Some((at, t)) if *at == now => Some(t.clone()),
            _ => None,
        }
    }

    /// Remembers a `get_tuple` result read after `at`.
    pub(crate) fn put_get(&self, cfg: &CheckpointConfig, at: Snapshot, t: &Option<CheckpointTuple>) {
        let bytes = t.as_ref().map_or(0, value_bytes);
        if bytes > MAX_BYTES {
            return;
        }
        let key = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), cfg.checkpoint_id.clone());
        let mut gets = self.gets.lock().unwrap_or_else(|e| e.into_inner());
        gets.insert(key, (at, t.clone()), bytes);
    }

    /// A `list` result still valid now.
    pub(crate) fn list(&self, thread_id: &str, options: &ListOptions) -> Option<Vec<CheckpointTuple>> {
        let now = self.snapshot()?;
        let key = list_key(thread_id, options)?;
        let hit = {
            let lists = self.lists.lock().unwrap_or_else(|e| e.into_inner());
            match lists.map.get(&key) {
                Some((at, l)) if *at == now => Some(l.clone()),
                _ => None,
            }
        };
        hit.map(|l| l.as_ref().clone())
    }

    /// Remembers a `list` result read after `at`.
    pub(crate) fn put_list(&self, thread_id: &str, options: &ListOptions, at: Snapshot, l: &[CheckpointTuple]) {
        let bytes = l.iter().map(value_bytes).sum::<usize>();
        if bytes > MAX_BYTES {
            return;
        }
        let Some(key) = list_key(thread_id, options) else { return };
        let entry = (at, Arc::new(l.to_vec()));
        let mut lists = self.lists.lock().unwrap_or_else(|e| e.into_inner());
        lists.insert(key, entry, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header changes with every commit, from any connection, and only then.
    #[test]
    fn snapshot_changes_exactly_when_something_commits() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("c.sqlite");
        let options = SqliteOptions::default();
        let setup = crate::schema::open_connection(&path, &options, false).expect("conn");
        crate::schema::setup(&setup, &path, &options, true).expect("setup");
        let cache = ReadCache::open(&path, &options, true).expect("cache");
        let s1 = cache.snapshot().expect("a mapped, initialised header");
        assert_eq!(cache.snapshot(), Some(s1), "no commit, same header");
        let other = Connection::open(&path).expect("another connection");
        other.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").expect("commit");
        let s2 = cache.snapshot().expect("header");
        assert_ne!(s1, s2, "a commit by another connection changes the header");
        other.execute("INSERT INTO t VALUES (2)", []).expect("commit");
        assert_ne!(cache.snapshot(), Some(s2));
        let _ = other.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).expect("read");
        let s3 = cache.snapshot();
        let _ = other.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).expect("read");
        assert_eq!(cache.snapshot(), s3, "reads change nothing");

        let cfg = CheckpointConfig::new("x");
        cache.put_get(&cfg, s1, &None);
        assert!(cache.get(&cfg).is_none(), "a result read before a commit is not served");
        let now = cache.snapshot().expect("header");
        cache.put_get(&cfg, now, &None);
        assert_eq!(cache.get(&cfg), Some(None), "served while nothing committed");
        assert!(ReadCache::open(&path, &options, false).expect("off").snapshot().is_none());
    }
}
