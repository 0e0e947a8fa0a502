//! The on-disk base of the paged table store (`docs/PAGED_STORE.md`, step 2 of its build
//! order; the engine does not use it yet). It owns one directory holding a fjall database: the
//! rows and index entries of every table as of the newest checkpoint, and that checkpoint's
//! meta records (LSN, GTID state, ...). [`Base::checkpoint`] is the only writer; the log stays
//! the only write-ahead log, so fjall's own journal and memtables are never written.
//!
//! Invariants:
//! - A checkpoint is atomic and durable when [`Base::checkpoint`] returns: it is one fjall
//!   *ingestion* (its meta records and changes written into a new table file that is synced
//!   with its directory, then registered by one new version written atomically), so after a
//!   crash the base is the newest completed checkpoint, whole, or the one before it.
//! - Meta records live under the reserved first key byte [`META_PREFIX`]; every data key starts
//!   with a byte at or above [`FIRST_DATA_BYTE`]. Range reads never return meta records.
//! - A batch's keys strictly ascend and no data key uses the meta prefix: both are checked
//!   before anything is written (fjall would panic on the first), and a refused batch writes
//!   nothing.
//! - A [`BaseSnapshot`] sees exactly the checkpoints completed before it was taken.
//! - Rows a snapshot decoded may be kept in the base's [`RowCache`] (decoded rows in runs,
//!   step 7 of the build order): every checkpoint drops the cached run holding each key it
//!   writes, under the cache's generation protocol (`row_cache.rs`), so a row (or its absence)
//!   read from the cache is what the reader's snapshot holds.
//! - No panic escapes: a panic inside fjall during a checkpoint becomes a [`BaseError`].
//! - Every error names the directory and what was being done; a damaged file (fjall checks a
//!   checksum on every block it reads) is an error, never a missing or different row.

use std::fmt;
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fjall::config::CompressionPolicy;
use fjall::{CompressionType, Database, Keyspace, KeyspaceCreateOptions, Readable};

use onelog_binlog::Value;

use crate::key::{bounds_empty, KeyBytes};
use crate::row_cache::{RowCache, RowCacheStats, Run};

/// First byte of every meta record's key.
pub const META_PREFIX: u8 = 0;
/// The smallest first byte a data key may have.
pub const FIRST_DATA_BYTE: u8 = 1;
/// The keyspace holding everything (one keyspace: a checkpoint is one ingestion).
const KEYSPACE: &str = "store";
/// fjall's background threads. We never write its memtable or journal (checkpoints are
/// ingestions), so they only compact. With more than one, fjall 3.1 keeps its worker 0 for
/// flushes: that worker hands every compaction request it receives back to the channel and
/// takes the next message at once, so while the other workers are all compacting it spins on
/// one CPU (`worker_pool.rs`, `WorkerMessage::Compact`). One worker compacts and never spins.
const COMPACTION_WORKERS: usize = 1;

/// How data blocks are compressed, by fjall's canonical level: `[L0, L1, L2 and deeper]`.
/// A checkpoint's ingestion writes canonical L1, and fjall compacts L0 and L1 into L1
/// (leveled, L1 up to four 64 MiB tables), so L1 is rewritten while a load goes on: most of
/// fjall's writes, and compressing them took 13% of a paged sysbench `prepare`'s CPU
/// (docs/PAGED_STORE.md, step 8, "Uncompressed L1"). Deeper levels, where the data of a large
/// store lives and which are rewritten less often, stay LZ4; a table file fjall moves down
/// without rewriting it keeps its encoding, so a load in key order can stay uncompressed.
/// fjall keeps the policy a directory was created with: a base created before keeps LZ4.
const DATA_COMPRESSION: [CompressionType; 3] = [
    CompressionType::None,
    CompressionType::None,
    CompressionType::Lz4,
];

/// One change of a checkpoint: a key and its new value, `None` to delete it.
pub type BaseChange = (Vec<u8>, Option<Vec<u8>>);

/// A failed base operation: the directory, what was being done, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseError {
    pub dir: PathBuf,
    pub doing: &'static str,
    pub detail: String,
}

impl fmt::Display for BaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "table store {}: {}: {}",
            self.dir.display(),
            self.doing,
            self.detail
        )
    }
}

impl std::error::Error for BaseError {}

impl BaseError {
    fn at(dir: &Path, doing: &'static str, detail: impl fmt::Display) -> BaseError {
        BaseError {
            dir: dir.to_path_buf(),
            doing,
            detail: detail.to_string(),
        }
    }
}

/// True for a key a data record may have (non-empty, first byte at or above
/// [`FIRST_DATA_BYTE`]).
fn is_data_key(key: &[u8]) -> bool {
    key.first().is_some_and(|&b| b >= FIRST_DATA_BYTE)
}

/// The base store in one directory.
pub struct Base {
    db: Database,
    data: Keyspace,
    dir: PathBuf,
    /// Bytes of keys and values its checkpoints wrote (meta records included).
    written: AtomicU64,
    rows: Arc<RowCache>,
}

/// What a base has read and written since it was opened, and its sizes now
/// ([`Base::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseStats {
    /// Blocks (data, index and filter) looked up, from the block cache or not.
    pub block_requests: u64,
    /// Of those, the blocks read from a file (cache misses).
    pub block_reads: u64,
    /// Bytes of the blocks read from files.
    pub bytes_read: u64,
    /// Bytes of keys and values written by checkpoints.
    pub bytes_written: u64,
    /// Bytes the block cache holds now, and its capacity.
    pub cache_bytes: u64,
    pub cache_capacity: u64,
    /// Bytes of the store's files on disk.
    pub disk_bytes: u64,
    /// The decoded-row cache's counters.
    pub rows: RowCacheStats,
}

impl fmt::Debug for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Base")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

fn meta_key(name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + name.len());
    k.push(META_PREFIX);
    k.extend_from_slice(name.as_bytes());
    k
}

impl Base {
    /// Opens (creating when missing) the base in `dir` with `cache_bytes` of memory for what
    /// it reads: fjall's block cache (compressed blocks) takes what it needs of it, and the
    /// decoded-row cache the rest (`row_cache.rs`): all of it when the data fits in the block
    /// cache with room to spare, nothing once the block cache is full.
    pub fn open(dir: &Path, cache_bytes: u64) -> Result<Base, BaseError> {
        Base::open_with(dir, cache_bytes, COMPACTION_WORKERS)
    }

    /// Bytes an unprivileged writer may still put on the file system holding the base
    /// (`statvfs`'s available blocks), or `None` when it cannot be asked. The checkpoint
    /// scheduler compares it before and after a failure to see space freed on a full disk
    /// (`scheduler.rs`).
    pub fn free_bytes(&self) -> Option<u64> {
        let path = std::ffi::CString::new(self.dir.as_os_str().as_encoded_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `path` is a NUL-terminated string and `st` points to writable memory of
        // statvfs's size, which the call fills on success (the only case it is read).
        let rc = unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: statvfs returned 0, so it filled `st`.
        let st = unsafe { st.assume_init() };
        Some(st.f_bavail.saturating_mul(st.f_frsize))
    }

    /// [`Self::open`] without fjall's background threads, so nothing compacts while it is
    /// open: for `onelog check` (`base_check.rs`), which only reads. (fjall's builder asks for
    /// at least one worker; its hidden unchecked setter takes none, and then the compactions
    /// it schedules at open wait for a worker that never comes.)
    pub fn open_idle(dir: &Path, cache_bytes: u64) -> Result<Base, BaseError> {
        Base::open_with(dir, cache_bytes, 0)
    }

    fn open_with(dir: &Path, cache_bytes: u64, workers: usize) -> Result<Base, BaseError> {
        let opened = catch_unwind(AssertUnwindSafe(|| {
            let db = Database::builder(dir)
                .cache_size(cache_bytes)
                .manual_journal_persist(true)
                .worker_threads_unchecked(workers)
                .open()
                .map_err(|e| BaseError::at(dir, "open", e))?;
            let data = db
                .keyspace(KEYSPACE, || {
                    KeyspaceCreateOptions::default()
                        .data_block_compression_policy(CompressionPolicy::new(DATA_COMPRESSION))
                })
                .map_err(|e| BaseError::at(dir, "open", e))?;
            Ok((db, data))
        }));
        let (db, data) = opened.map_err(|_| BaseError::at(dir, "open", "the store panicked"))??;
        let blocks = db.clone();
        Ok(Base {
            db,
            data,
            dir: dir.to_path_buf(),
            written: AtomicU64::new(0),
            rows: Arc::new(RowCache::with_limit(Box::new(move || {
                cache_bytes.saturating_sub(blocks.cache_size())
            }))),
        })
    }

    /// Reads and writes since open, and the sizes now. The block counters are fjall's
    /// (its `metrics` feature); its cache's current size is a hidden accessor of fjall 3.1.
    pub fn stats(&self) -> BaseStats {
        let m = self.data.metrics();
        BaseStats {
            block_requests: m.block_loads() as u64,
            block_reads: m.block_load_io_count() as u64,
            bytes_read: m.block_io(),
            bytes_written: self.written.load(Ordering::Relaxed),
            cache_bytes: self.db.cache_size(),
            cache_capacity: self.db.cache_capacity(),
            disk_bytes: self.data.disk_space(),
            rows: self.rows.stats(),
        }
    }

    /// The directory the base lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn error(&self, doing: &'static str, detail: impl fmt::Display) -> BaseError {
        BaseError::at(&self.dir, doing, detail)
    }

    /// Writes one checkpoint: the meta records `meta` (name, value; names distinct) and the
    /// `changes` (keys strictly ascending, each starting at [`FIRST_DATA_BYTE`] or above),
    /// atomically and durably. A batch that breaks the key rules is refused before anything
    /// is written.
    pub fn checkpoint(
        &self,
        meta: &[(&str, &[u8])],
        changes: &[BaseChange],
    ) -> Result<(), BaseError> {
        let doing = "checkpoint";
        // Checked before anything is written ([`Self::checkpoint_streamed`] checks as it goes).
        if let Some((k, _)) = changes.iter().find(|(k, _)| !is_data_key(k)) {
            return Err(self.error(
                doing,
                format!("data key {k:02x?} is empty or uses the meta prefix"),
            ));
        }
        if let Some(w) = changes.windows(2).find(|w| w[0].0 >= w[1].0) {
            return Err(self.error(
                doing,
                format!("keys out of order: {:02x?} then {:02x?}", w[0].0, w[1].0),
            ));
        }
        if meta.is_empty() && changes.is_empty() {
            return Ok(());
        }
        self.checkpoint_streamed(meta, &mut changes.iter().cloned())
    }

    /// [`Self::checkpoint`] of changes produced one at a time (`changes`: keys strictly
    /// ascending, each a data key), so a checkpoint never holds its whole batch encoded. The
    /// key rules are checked as the changes come: a change that breaks them ends the
    /// checkpoint with an error, and nothing is registered (the table file begun is an orphan
    /// fjall deletes at the next open).
    pub fn checkpoint_streamed(
        &self,
        meta: &[(&str, &[u8])],
        changes: &mut dyn Iterator<Item = BaseChange>,
    ) -> Result<(), BaseError> {
        let doing = "checkpoint";
        let mut meta: Vec<(Vec<u8>, &[u8])> = meta.iter().map(|(n, v)| (meta_key(n), *v)).collect();
        meta.sort_by(|a, b| a.0.cmp(&b.0));
        if meta.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(self.error(doing, "a meta record is named twice"));
        }
        let mut refused = None;
        let mut bytes = meta.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        // Held until the ingestion is visible or failed (dropped at the end of this function).
        let rows = self.rows.begin_write();
        let written = catch_unwind(AssertUnwindSafe(|| -> Result<(), fjall::Error> {
            let mut ingest = self.data.start_ingestion()?;
            for (k, v) in &meta {
                ingest.write(k.as_slice(), *v)?;
            }
            let mut last: Option<Vec<u8>> = None;
            for (k, v) in changes {
                if !is_data_key(&k) {
                    refused = Some(format!(
                        "data key {k:02x?} is empty or uses the meta prefix"
                    ));
                    return Ok(());
                }
                if let Some(prev) = last.as_ref().filter(|p| **p >= k) {
                    refused = Some(format!("keys out of order: {prev:02x?} then {k:02x?}"));
                    return Ok(());
                }
                bytes += k.len() + v.as_ref().map_or(0, Vec::len);
                rows.forget(&k);
                match &v {
                    Some(v) => ingest.write(k.as_slice(), v.as_slice())?,
                    None => ingest.write_tombstone(k.as_slice())?,
                }
                last = Some(k);
            }
            ingest.finish()
        }));
        match written {
            Ok(Ok(())) => match refused {
                Some(why) => Err(self.error(doing, why)),
                None => {
                    self.written.fetch_add(bytes as u64, Ordering::Relaxed);
                    Ok(())
                }
            },
            Ok(Err(e)) => Err(self.error(doing, e)),
            Err(_) => Err(self.error(doing, "the store panicked; the checkpoint was not written")),
        }
    }

    /// A consistent read view of the checkpoints completed so far.
    pub fn snapshot(&self) -> BaseSnapshot {
        let (snap, tag) = self.rows.tag(|| self.db.snapshot());
        BaseSnapshot {
            data: self.data.clone(),
            dir: Arc::from(self.dir.as_path()),
            snap,
            rows: self.rows.clone(),
            tag,
        }
    }
}

/// A consistent read view of a [`Base`]. Owned (it holds the keyspace's handle, not a borrow
/// of the [`Base`]), so a published table root can carry one; cloning it is cheap and keeps
/// the same view.
#[derive(Clone)]
pub struct BaseSnapshot {
    data: Keyspace,
    dir: Arc<Path>,
    snap: fjall::Snapshot,
    rows: Arc<RowCache>,
    /// Its generation in `rows` (`row_cache.rs`); None: it does not use the cache.
    tag: Option<u64>,
}

/// One data record read from a base: key and value (fjall's shared buffers: no copy), or a
/// failed read naming the directory.
pub type BaseItem = Result<(fjall::Slice, fjall::Slice), BaseError>;

impl BaseSnapshot {
    pub(crate) fn error(&self, doing: &'static str, detail: impl fmt::Display) -> BaseError {
        BaseError::at(&self.dir, doing, detail)
    }

    /// The meta record `name` of the newest checkpoint that wrote it.
    pub fn meta(&self, name: &str) -> Result<Option<Vec<u8>>, BaseError> {
        self.raw_get(&meta_key(name))
    }

    /// The value of the data key `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, BaseError> {
        if !is_data_key(key) {
            return Ok(None);
        }
        self.raw_get(key)
    }

    /// The decoded row at row key `key` of a table of `columns` columns, when the row cache
    /// says what this snapshot holds there: `Some(None)` when it says there is no row.
    pub(crate) fn cached_row(&self, key: &[u8], columns: usize) -> Option<Option<Arc<Vec<Value>>>> {
        self.rows.get(self.tag?, key, columns)
    }

    /// Offers `row`, the value of row key `key` in this snapshot, decoded, to the row cache
    /// (which refuses it when the base was written since: module docs of `row_cache.rs`).
    pub(crate) fn keep_row(&self, key: &[u8], columns: usize, row: &Arc<Vec<Value>>) {
        if let Some(tag) = self.tag {
            self.rows.insert_row(tag, key, columns, row);
        }
    }

    /// True when this snapshot reads and fills the row cache (it is tagged, and the cache
    /// may hold something).
    pub(crate) fn caches_rows(&self) -> bool {
        self.tag.is_some() && self.rows.capacity() > 0
    }

    /// True when this snapshot fills the row cache and a point read that misses should read
    /// the run from its row on, the base holding `rows` rows in all
    /// (`RowCache::fills_by_runs`).
    pub(crate) fn cache_fills_by_runs(&self, rows: u64) -> bool {
        self.caches_rows() && self.rows.fills_by_runs(rows)
    }

    /// The row cache's run holding row key `key` as this snapshot sees it, of a table of
    /// `columns` columns.
    pub(crate) fn cached_run(&self, key: &[u8], columns: usize) -> Option<Arc<Run>> {
        self.rows.run_at(self.tag?, key, columns)
    }

    /// Where the row cache's next run after `key` starts, and its rows (a hint: of any
    /// generation).
    pub(crate) fn next_cached_run(&self, key: &[u8]) -> Option<(KeyBytes, usize)> {
        self.rows.next_run(key)
    }

    /// Offers `run`, read from this snapshot, to the row cache (as [`Self::keep_row`]).
    pub(crate) fn keep_run(&self, run: &Arc<Run>) {
        if let Some(tag) = self.tag {
            self.rows.insert(tag, run);
        }
    }

    fn raw_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, BaseError> {
        self.snap
            .get(&self.data, key)
            .map(|v| v.map(|v| v.to_vec()))
            .map_err(|e| self.error("read", e))
    }

    /// The data records between the bounds `from` and `to`, ascending; owned, so it can
    /// outlive this value (it keeps the view). A failed read is yielded once and ends it.
    pub fn iter(&self, from: Bound<&[u8]>, to: Bound<&[u8]>) -> impl Iterator<Item = BaseItem> {
        let first = [FIRST_DATA_BYTE];
        // Meta records sort before every data key: a lower bound below the first data key
        // starts at it, and an empty range reads nothing (fjall is never given one).
        let from = match from {
            Bound::Included(k) | Bound::Excluded(k) if k >= &first[..] => from,
            _ => Bound::Included(&first[..]),
        };
        let range =
            (!bounds_empty(from, to)).then(|| self.snap.range::<&[u8], _>(&self.data, (from, to)));
        let snap = self.clone();
        let mut failed = false;
        range.into_iter().flatten().map_while(move |guard| {
            if failed {
                return None;
            }
            let item = guard.into_inner().map_err(|e| snap.error("read", e));
            failed = item.is_err();
            Some(item)
        })
    }

    /// Visits the data keys between the bounds `from` and `to`, ascending, while `visit`
    /// returns true.
    pub fn range(
        &self,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), BaseError> {
        for item in self.iter(from, to) {
            let (k, v) = item?;
            if !visit(&k, &v) {
                break;
            }
        }
        Ok(())
    }
}
