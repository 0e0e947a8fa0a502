//! RocksDB (an LSM tree, C++ via the `rocksdb` crate, bundled build) as the base store, with its
//! WAL off for every write: each checkpoint is one `WriteBatch` (the batch plus the LSN under a
//! reserved key that sorts after every data key) into the memtable, then a blocking flush of
//! that memtable to one new L0 table file. Snapshots are RocksDB snapshots (sequence numbers).
//!
//! Crash atomicity without a WAL: a write batch always lands in one memtable whole, and every
//! checkpoint starts on an empty memtable (the previous one ended with a flush), so the flush
//! writes the whole batch and its LSN into one table file, syncs it (and the directory), and only
//! then appends one version edit naming that file to the MANIFEST and syncs the MANIFEST. After a
//! crash the store is what the MANIFEST names: the edit is there (all of the batch and its LSN)
//! or not (none of it; the half-written table file is an orphan that open deletes). A MANIFEST
//! whose last record is cut short is read as ending before it (the previous checkpoint); a last
//! record that is present at full length with a bad checksum (a torn sector holding garbage) is
//! reported as corruption and the open fails, instead of falling back a checkpoint.
//! Compactions install their outputs and drop their inputs in one edit in the same way.
//!
//! Memory: one LRU block cache of `cache_bytes` holds data, index and filter blocks (index and
//! filter blocks are cached, not held per open table), and the memtable is charged to the same
//! cache through a write buffer manager, so the configured size bounds both. The memtable holds
//! at most one checkpoint's batch (about 30 MB for the harness's 100k-row load batches), since
//! each checkpoint flushes it; `write_buffer_size` (64 MiB) only keeps RocksDB from flushing on
//! its own in the middle of one.

use crate::base::{err, Base, Change, Snap};
use rocksdb::{
    BlockBasedOptions, BottommostLevelCompaction, Cache, CompactOptions, DBCompressionType,
    FlushOptions, Options, ReadOptions, Snapshot, WriteBatch, WriteBufferManager, WriteOptions, DB,
};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The LSN's key: data keys start with byte 1 or 2, so this sorts after all of them.
const LSN_KEY: &[u8] = b"\xff__lsn";
/// The memtable size above which RocksDB would flush on its own (never reached: see above).
const WRITE_BUFFER: usize = 64 << 20;

pub struct RocksStore {
    db: DB,
    dir: PathBuf,
    /// The LSN of the newest checkpoint whose flush finished.
    lsn: AtomicU64,
}

impl RocksStore {
    pub fn open(dir: &Path, cache_bytes: usize) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let cache = Cache::new_lru_cache(cache_bytes);
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        table.set_bloom_filter(10.0, false);
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_block_based_table_factory(&table);
        opts.set_compression_type(DBCompressionType::Lz4);
        opts.set_bottommost_compression_type(DBCompressionType::Lz4);
        opts.set_write_buffer_size(WRITE_BUFFER);
        opts.set_max_write_buffer_number(2);
        opts.set_write_buffer_manager(&WriteBufferManager::new_write_buffer_manager_with_cache(
            WRITE_BUFFER,
            false,
            cache,
        ));
        opts.set_max_background_jobs(2);
        opts.set_keep_log_file_num(2);
        opts.set_max_log_file_size(4 << 20);
        let db = DB::open(&opts, dir).map_err(err)?;
        let lsn = match db.get(LSN_KEY).map_err(err)? {
            Some(v) => u64::from_be_bytes(
                v.as_slice()
                    .try_into()
                    .map_err(|_| io::Error::other("bad LSN record"))?,
            ),
            None => 0,
        };
        Ok(RocksStore {
            db,
            dir: dir.to_path_buf(),
            lsn: AtomicU64::new(lsn),
        })
    }

    fn property(&self, name: &str) -> u64 {
        self.db.property_int_value(name).ok().flatten().unwrap_or(0)
    }
}

impl Base for RocksStore {
    fn checkpoint(&self, batch: &[Change], lsn: u64) -> io::Result<()> {
        let mut wb = WriteBatch::default();
        for (k, v) in batch {
            match v {
                Some(v) => wb.put(k, v),
                None => wb.delete(k),
            }
        }
        wb.put(LSN_KEY, lsn.to_be_bytes());
        let mut wo = WriteOptions::default();
        wo.disable_wal(true);
        self.db.write_opt(wb, &wo).map_err(err)?;
        let mut fo = FlushOptions::default();
        fo.set_wait(true);
        self.db.flush_opt(&fo).map_err(err)?;
        self.lsn.store(lsn, Ordering::Release);
        Ok(())
    }

    fn durable_lsn(&self) -> io::Result<u64> {
        Ok(self.lsn.load(Ordering::Acquire))
    }

    fn snapshot(&self) -> io::Result<Box<dyn Snap + '_>> {
        Ok(Box::new(RocksSnap(self.db.snapshot())))
    }

    fn disk_bytes(&self) -> u64 {
        crate::dir_bytes(&self.dir)
    }

    fn settle(&self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(120)
            && (self.property("rocksdb.num-running-compactions") > 0
                || self.property("rocksdb.compaction-pending") > 0
                || self.property("rocksdb.num-running-flushes") > 0
                || self.property("rocksdb.mem-table-flush-pending") > 0)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn compact(&mut self) -> io::Result<()> {
        // Every level rewritten down to the last, so overwritten and deleted rows are gone.
        let mut co = CompactOptions::default();
        co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        self.db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
        self.settle();
        Ok(())
    }
}

struct RocksSnap<'a>(Snapshot<'a>);

impl Snap for RocksSnap<'_> {
    fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        Ok(self.0.get_pinned(key).map_err(err)?.map(|v| v.to_vec()))
    }

    fn scan(&self, from: &[u8], n: usize, f: &mut dyn FnMut(&[u8], &[u8])) -> io::Result<usize> {
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(LSN_KEY);
        let mut it = self.0.raw_iterator_opt(ro);
        it.seek(from);
        let mut seen = 0;
        while seen < n {
            let Some((k, v)) = it.item() else { break };
            f(k, v);
            seen += 1;
            it.next();
        }
        it.status().map_err(err)?;
        Ok(seen)
    }
}
