//! Decoded rows of the paged store's base, kept in memory (docs/PAGED_STORE.md, build order
//! step 7), in **runs**: a run holds every row the base has between two keys, decoded, so a
//! point read of a row in the base costs an ordered lookup instead of a block cache lookup, a
//! block search and a row decode, and a primary key scan walks a run's rows in memory (one
//! lookup per run) instead of iterating fjall's blocks and decoding every row.
//!
//! Owns [`RowCache`] and [`Run`]. A run covers the base keys `lo <= k < hi` (no `hi`: every
//! key from `lo` on) and holds exactly the rows the base has there, in key order; scans keep
//! runs of up to [`RUN_ROWS`] rows. A run holds rows of one table: its interval lies within
//! the first [`TABLE_PREFIX`] bytes of `lo` (a base key's kind and storage id), which choose
//! its shard, so one ordered map per shard answers "which run covers this key". Runs of a
//! shard never overlap: a new run replaces those it overlaps. A point read that misses reads
//! the run from its row on while the cache has room and could hold every row of the base
//! ([`RowCache::fills_by_runs`]); otherwise the row is kept alone, in a hash map of the shard its whole key chooses, so those
//! inserts spread over every shard's lock; a point read looks there first, then for a run.
//! All shards share one byte capacity, evicted by CLOCK (rows and runs in one queue per
//! shard) from shard to shard.
//!
//! Generations. Only `Base::checkpoint_streamed` writes the base. A write makes the
//! generation odd before it writes anything ([`RowCache::begin_write`]), removes the row and
//! the run holding each key it writes as it goes ([`WriteHold::forget`]), and makes it even again
//! once the write is visible or has failed (dropping the [`WriteHold`]). A base snapshot reads
//! the generation before and after it takes fjall's snapshot ([`RowCache::tag`]); when both
//! are the same even number `g`, no write ran in between, so the snapshot holds exactly the
//! writes of generations up to `g`, and it is tagged `g`; otherwise it is untagged and does
//! not use the cache.
//!
//! Invariants:
//! - a row or run tagged `t` holds what the base had at its key or in its interval in every
//!   generation from `t` up to the current one: it was read from a snapshot of generation
//!   `t`, was inserted only while the generation was still `t` (checked under its shard's
//!   lock), and every later write of its key or of a key in its interval removed it (under
//!   the same lock) after the generation had moved on;
//! - so a reader of generation `s` may use a row or run tagged `t <= s`, never one tagged
//!   `t > s` (it may be newer than the reader's snapshot); and a key inside a run the reader
//!   may use that the run does not hold is not in the reader's base either;
//! - the runs of a shard do not overlap, and each lies within its table's prefix;
//! - the bytes counted for all rows and runs (`RowCache::bytes`) are at or under the capacity
//!   whenever no insert is running; one larger than the capacity is not kept.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::BuildHasher;
use std::mem::size_of;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use onelog_binlog::Value;

use crate::key::{prefix_end, KeyBytes};

/// Bytes at the start of a base key that name its table (its kind and storage id: see
/// `base_format.rs`); they choose a run's shard.
pub const TABLE_PREFIX: usize = 9;
/// Rows a scan puts in one run at most: a write of any key in a run's interval drops the
/// whole run, and eviction drops it whole, so runs stay small.
pub const RUN_ROWS: usize = 64;
/// Shards: a power of two. A table's runs are all in one shard.
const SHARDS: usize = 64;
/// How often (in inserts) a cache with a [`Limit`] asks it for its capacity again.
const RESIZE_EVERY: u64 = 1024;

/// Decoded row with its key, as a run holds it.
pub type RunRow = (KeyBytes, Arc<Vec<Value>>);

/// Memory counted per run besides its rows: the map's slot and the CLOCK queue's (each counted
/// twice: a B-tree's nodes are half empty at worst, and the queue keeps places of removed runs
/// until it is compacted), and the run's own allocation.
const RUN_OVERHEAD: usize = 2 * size_of::<(KeyBytes, Slot)>()
    + 2 * size_of::<Queued>()
    + alloc_bytes(16 + size_of::<Run>());
/// Memory counted per row a point read keeps besides its key's heap bytes and its values:
/// the hash map's slot and the queue's (each twice: tables grow by doubling), and the `Arc`'d
/// vector's header.
const ROW_SLOT_OVERHEAD: usize = 2 * size_of::<(KeyBytes, RowSlot)>()
    + 2 * size_of::<Queued>()
    + alloc_bytes(16 + size_of::<Vec<Value>>());
/// Memory counted per row besides its values: its place in the run, and the `Arc`'d vector's
/// header.
const ROW_OVERHEAD: usize = size_of::<RunRow>() + alloc_bytes(16 + size_of::<Vec<Value>>());

/// Where a cache's capacity comes from: the bytes it may hold now.
pub type Limit = Box<dyn Fn() -> u64 + Send + Sync>;

/// Every row the base holds between two keys, decoded (module docs). Immutable.
pub struct Run {
    lo: KeyBytes,
    hi: Option<KeyBytes>,
    columns: usize,
    rows: Vec<RunRow>,
}

impl Run {
    /// The run of `rows` (base keys strictly ascending, each in `lo <= key < hi`), which must
    /// be every row the base holds in that interval, of a table of `columns` columns.
    pub fn new(lo: KeyBytes, hi: Option<KeyBytes>, columns: usize, rows: Vec<RunRow>) -> Run {
        debug_assert!(rows.windows(2).all(|w| w[0].0 < w[1].0));
        debug_assert!(rows.first().is_none_or(|r| r.0 >= lo));
        debug_assert!(rows
            .last()
            .is_none_or(|r| hi.as_ref().is_none_or(|h| r.0 < *h)));
        Run {
            lo,
            hi,
            columns,
            rows,
        }
    }

    /// Where its interval ends (exclusive); None: it does not.
    pub fn hi(&self) -> Option<&[u8]> {
        self.hi.as_deref()
    }

    /// Its rows, in key order.
    pub fn rows(&self) -> &[RunRow] {
        &self.rows
    }

    /// The index of its first row at or after `key`.
    pub fn position(&self, key: &[u8]) -> usize {
        self.rows.partition_point(|(k, _)| &k[..] < key)
    }

    /// Its row at `key`: None when the base has no row there (`key` in its interval).
    pub fn row(&self, key: &[u8]) -> Option<&Arc<Vec<Value>>> {
        let i = self.rows.binary_search_by(|(k, _)| k[..].cmp(key)).ok()?;
        Some(&self.rows[i].1)
    }

    fn covers(&self, key: &[u8]) -> bool {
        self.lo[..] <= *key && self.hi.as_deref().is_none_or(|h| key < h)
    }

    /// True when its interval is not empty and lies within its table's prefix (module docs).
    fn well_placed(&self) -> bool {
        let Some(prefix) = self.lo.get(..TABLE_PREFIX) else {
            return false;
        };
        match (&self.hi, prefix_end(prefix)) {
            (Some(hi), Some(end)) => self.lo < *hi && hi[..] <= end[..],
            (_, None) => self.hi.as_ref().is_none_or(|hi| self.lo < *hi),
            (None, Some(_)) => false,
        }
    }

    /// Bytes it is counted for: as the allocator hands them out, plus the overheads.
    fn bytes(&self) -> usize {
        RUN_OVERHEAD
            + key_bytes(&self.lo)
            + self.hi.as_ref().map_or(0, key_bytes)
            + alloc_bytes(self.rows.capacity() * size_of::<RunRow>())
            + self
                .rows
                .iter()
                .map(|(k, r)| ROW_OVERHEAD - size_of::<RunRow>() + key_bytes(k) + row_bytes(r))
                .sum::<usize>()
    }
}

/// Decoded base rows (module docs).
pub struct RowCache {
    shards: Box<[RwLock<Shard>]>,
    hasher: std::collections::hash_map::RandomState,
    /// The base's generation: odd while a write runs.
    generation: AtomicU64,
    /// Serialises writers (a write's odd generation is its own).
    writing: Mutex<()>,
    /// Bytes all rows and runs may hold; from `limit` when there is one.
    capacity: AtomicU64,
    /// Bytes counted for the rows and runs held now.
    bytes: AtomicU64,
    /// The shard eviction visits next.
    hand: AtomicUsize,
    limit: Option<Limit>,
    inserts: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    /// Bytes a row has cost, averaged over the rows and runs inserted (0: none yet).
    row_bytes: AtomicU64,
}

#[derive(Default)]
struct Shard {
    /// Runs by their `lo` (of the tables whose prefix chooses this shard).
    map: BTreeMap<KeyBytes, Slot>,
    /// Rows point reads kept, by base key (of the keys that choose this shard).
    rows: HashMap<KeyBytes, RowSlot>,
    /// CLOCK order: rows and runs with the serial of the slot they were queued for (one
    /// replaced at the same key is queued again; its old place is skipped).
    clock: VecDeque<Queued>,
    serial: u64,
}

/// A place in a shard's CLOCK queue: a run (by `lo`) or a row (by key), and its slot's serial.
type Queued = (bool, KeyBytes, u64);

/// A row a point read kept.
struct RowSlot {
    row: Arc<Vec<Value>>,
    columns: usize,
    tag: u64,
    bytes: usize,
    serial: u64,
    referenced: AtomicBool,
}

struct Slot {
    run: Arc<Run>,
    tag: u64,
    bytes: usize,
    serial: u64,
    referenced: AtomicBool,
}

/// Counters of a [`RowCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    /// Lookups a run answered (a point read, or a scan reaching a key).
    pub hits: u64,
    /// Lookups no run answered.
    pub misses: u64,
    pub bytes: u64,
    pub capacity: u64,
}

/// A write's hold on the cache's generation ([`RowCache::begin_write`]); dropping it ends the
/// write (the generation becomes even again), also when the write failed or panicked.
pub struct WriteHold<'a> {
    cache: &'a RowCache,
    _serial: MutexGuard<'a, ()>,
}

impl Drop for WriteHold<'_> {
    fn drop(&mut self) {
        self.cache.generation.fetch_add(1, Ordering::SeqCst);
    }
}

impl WriteHold<'_> {
    /// Drops the row kept at base key `key` (a key of any kind) and the run whose interval
    /// holds it.
    pub fn forget(&self, key: &[u8]) {
        let cache = self.cache;
        let freed = cache.write(cache.row_shard(key)).remove_row(key);
        let mut shard = cache.write(cache.shard_of(key));
        let freed = freed
            + shard
                .covering(key)
                .map(|(lo, _)| lo.clone())
                .map_or(0, |lo| shard.remove(&lo));
        cache.bytes.fetch_sub(freed as u64, Ordering::SeqCst);
    }
}

impl RowCache {
    /// A cache of at most `capacity` counted bytes (0: it keeps nothing).
    pub fn new(capacity: u64) -> RowCache {
        RowCache {
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::default())).collect(),
            hasher: Default::default(),
            generation: AtomicU64::new(0),
            writing: Mutex::new(()),
            capacity: AtomicU64::new(capacity),
            bytes: AtomicU64::new(0),
            hand: AtomicUsize::new(0),
            limit: None,
            inserts: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            row_bytes: AtomicU64::new(0),
        }
    }

    /// A cache whose capacity `limit` says, asked again every [`RESIZE_EVERY`] inserts
    /// ([`Self::resize`]).
    pub fn with_limit(limit: Limit) -> RowCache {
        let capacity = limit();
        RowCache {
            limit: Some(limit),
            ..RowCache::new(capacity)
        }
    }

    /// Bytes it may hold now (0: it keeps nothing, and lookups are not counted).
    pub fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Whether a point read that misses should read the run from its row on rather than keep
    /// the row alone (`table_view.rs`): while a tenth of the capacity is still free, and only
    /// if the `rows` rows it could be asked for would all fit ([`Self::would_hold`]), since
    /// data larger than the cache would decode a run to use one row.
    pub fn fills_by_runs(&self, rows: u64) -> bool {
        self.has_room(0.1) && self.would_hold(rows)
    }

    /// True when `rows` rows, at the bytes a row has cost on average so far, would fit in the
    /// capacity (true before any insert).
    fn would_hold(&self, rows: u64) -> bool {
        rows.saturating_mul(self.row_bytes.load(Ordering::Relaxed)) <= self.capacity()
    }

    /// Counts `rows` rows inserted at `bytes` into the average cost of a row (a moving average
    /// over the last few dozen inserts).
    fn note_row_bytes(&self, bytes: usize, rows: usize) {
        if rows == 0 {
            return;
        }
        let sample = (bytes / rows) as u64;
        let old = self.row_bytes.load(Ordering::Relaxed);
        let new = if old == 0 {
            sample
        } else {
            old - old / 32 + sample / 32
        };
        self.row_bytes.store(new, Ordering::Relaxed);
    }

    /// True while at least `free` (a fraction) of its capacity is unused.
    fn has_room(&self, free: f64) -> bool {
        let capacity = self.capacity();
        (self.bytes.load(Ordering::Relaxed) as f64) < capacity as f64 * (1.0 - free)
    }

    /// The shard of the runs that may hold `key`: its table prefix's.
    fn shard_of(&self, key: &[u8]) -> usize {
        let prefix = &key[..key.len().min(TABLE_PREFIX)];
        (self.hasher.hash_one(prefix) as usize) & (SHARDS - 1)
    }

    /// The shard of a row kept at `key` alone: its whole key's.
    fn row_shard(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) as usize) & (SHARDS - 1)
    }

    // A panic while a shard was held left it consistent (no shard code panics between its
    // updates), so a poisoned lock is taken over.
    fn read(&self, i: usize) -> RwLockReadGuard<'_, Shard> {
        self.shards[i].read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, i: usize) -> RwLockWriteGuard<'_, Shard> {
        self.shards[i].write().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a write of the base (module docs): the generation is odd until the hold drops.
    pub fn begin_write(&self) -> WriteHold<'_> {
        let serial = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        self.generation.fetch_add(1, Ordering::SeqCst);
        WriteHold {
            cache: self,
            _serial: serial,
        }
    }

    /// Takes a snapshot with `snapshot` and returns it with its generation tag (module docs):
    /// `None` when a write ran while it was taken.
    pub fn tag<S>(&self, snapshot: impl FnOnce() -> S) -> (S, Option<u64>) {
        let before = self.generation.load(Ordering::SeqCst);
        let s = snapshot();
        let after = self.generation.load(Ordering::SeqCst);
        let tag = (before == after && before.is_multiple_of(2)).then_some(before);
        (s, tag)
    }

    /// The run whose interval holds base key `key`, as a reader of generation `tag` may use
    /// it, of a table of `columns` columns; None when there is none (a miss is counted).
    pub fn run_at(&self, tag: u64, key: &[u8], columns: usize) -> Option<Arc<Run>> {
        self.find(tag, key, columns, |run| run.clone())
    }

    /// The row at base key `key` as a reader of generation `tag` sees it: a row kept alone,
    /// or a run's; `Some(None)` when a run says the base has none; None when neither says (a
    /// miss is counted).
    pub fn get(&self, tag: u64, key: &[u8], columns: usize) -> Option<Option<Arc<Vec<Value>>>> {
        if self.capacity() == 0 {
            return None;
        }
        let alone = {
            let shard = self.read(self.row_shard(key));
            shard
                .rows
                .get(key)
                .filter(|s| s.tag <= tag && s.columns == columns)
                .map(|s| {
                    touch(&s.referenced);
                    s.row.clone()
                })
        };
        if let Some(row) = alone {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Some(Some(row));
        }
        self.find(tag, key, columns, |run| run.row(key).cloned())
    }

    /// `take` of the run [`Self::run_at`] finds, under its shard's lock.
    fn find<T>(
        &self,
        tag: u64,
        key: &[u8],
        columns: usize,
        take: impl FnOnce(&Arc<Run>) -> T,
    ) -> Option<T> {
        if self.capacity() == 0 {
            return None;
        }
        let found = {
            let shard = self.read(self.shard_of(key));
            shard
                .covering(key)
                .map(|(_, s)| s)
                .filter(|s| s.tag <= tag && s.run.columns == columns)
                .map(|s| {
                    touch(&s.referenced);
                    take(&s.run)
                })
        };
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// The start of the first run after base key `key`, and how many rows it holds (of any
    /// generation: a hint for where a scan's new run may stop).
    pub fn next_run(&self, key: &[u8]) -> Option<(KeyBytes, usize)> {
        let shard = self.read(self.shard_of(key));
        let (lo, slot) = shard
            .map
            .range::<[u8], _>((Bound::Excluded(key), Bound::Unbounded))
            .next()?;
        Some((lo.clone(), slot.run.rows.len()))
    }

    /// Keeps `run`, read from a snapshot of generation `tag`, unless the base has been written
    /// since (module docs); it replaces the runs it overlaps. False when the cache takes
    /// nothing from that snapshot any more: the base was written since, or the capacity is 0
    /// (a run too large for the capacity, or not within its table's prefix, is only skipped).
    pub fn insert(&self, tag: u64, run: &Arc<Run>) -> bool {
        self.count_insert();
        let capacity = self.capacity();
        let bytes = run.bytes();
        if bytes as u64 > capacity || !run.well_placed() {
            debug_assert!(run.well_placed(), "a run outside its table's prefix");
            return capacity > 0;
        }
        {
            let mut shard = self.write(self.shard_of(&run.lo));
            if self.generation.load(Ordering::SeqCst) != tag {
                return false;
            }
            let freed = shard.remove_overlapping(&run.lo, run.hi());
            self.note_row_bytes(bytes, run.rows().len());
            let serial = shard.queue(true, run.lo.clone());
            shard.map.insert(
                run.lo.clone(),
                Slot {
                    run: run.clone(),
                    tag,
                    bytes,
                    serial,
                    referenced: AtomicBool::new(false),
                },
            );
            self.account(bytes, freed);
        }
        self.evict_to(capacity);
        true
    }

    /// Keeps the row `row` read at base key `key` from a snapshot of generation `tag` alone
    /// (as [`Self::insert`] keeps a run).
    pub fn insert_row(&self, tag: u64, key: &[u8], columns: usize, row: &Arc<Vec<Value>>) -> bool {
        self.count_insert();
        let capacity = self.capacity();
        let key = KeyBytes::from(key);
        // The key twice: in the map and in the CLOCK queue.
        let bytes = ROW_SLOT_OVERHEAD + 2 * key_bytes(&key) + row_bytes(row);
        if bytes as u64 > capacity {
            return capacity > 0;
        }
        {
            let mut shard = self.write(self.row_shard(&key));
            if self.generation.load(Ordering::SeqCst) != tag {
                return false;
            }
            let freed = shard.remove_row(&key);
            self.note_row_bytes(bytes, 1);
            let serial = shard.queue(false, key.clone());
            shard.rows.insert(
                key,
                RowSlot {
                    row: row.clone(),
                    columns,
                    tag,
                    bytes,
                    serial,
                    referenced: AtomicBool::new(false),
                },
            );
            self.account(bytes, freed);
        }
        self.evict_to(capacity);
        true
    }

    /// Counts `added` bytes kept and `freed` bytes of what they replaced (under the shard's
    /// lock, so the count never goes below what is held).
    fn account(&self, added: usize, freed: usize) {
        self.bytes.fetch_add(added as u64, Ordering::SeqCst);
        self.bytes.fetch_sub(freed as u64, Ordering::SeqCst);
    }

    /// Counts an insert, and asks the limit for the capacity again every [`RESIZE_EVERY`].
    fn count_insert(&self) {
        if let Some(limit) = &self.limit {
            if self
                .inserts
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(RESIZE_EVERY)
            {
                self.resize(limit());
            }
        }
    }

    /// Evicts, shard after shard from where the last eviction stopped, until the counted
    /// bytes are at or under `capacity`: a visit makes one CLOCK pass over a shard's queue,
    /// so a shard of hot runs gives up one only when no other shard has a cold one (two
    /// rounds of all shards at most).
    fn evict_to(&self, capacity: u64) {
        let over = || self.bytes.load(Ordering::SeqCst) > capacity;
        for _ in 0..2 * SHARDS {
            if !over() {
                return;
            }
            let i = self.hand.fetch_add(1, Ordering::Relaxed) % SHARDS;
            self.write(i).evict(&over, &self.bytes);
        }
    }

    /// Sets the capacity to `capacity` bytes; when it shrinks, runs are evicted down to it at
    /// once (a cache may see no insert for a long time, or never again when the capacity is
    /// 0).
    pub fn resize(&self, capacity: u64) {
        let old = self.capacity.swap(capacity, Ordering::Relaxed);
        if capacity < old {
            self.evict_to(capacity);
        }
    }

    pub fn stats(&self) -> RowCacheStats {
        RowCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::SeqCst),
            capacity: self.capacity(),
        }
    }
}

impl Shard {
    /// The run whose interval holds `key`, with its `lo`.
    fn covering(&self, key: &[u8]) -> Option<(&KeyBytes, &Slot)> {
        self.map
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
            .next_back()
            .filter(|(_, s)| s.run.covers(key))
    }

    /// Removes the run starting at `lo`; the bytes it was counted for (0: none).
    fn remove(&mut self, lo: &[u8]) -> usize {
        self.map.remove(lo).map_or(0, |s| s.bytes)
    }

    /// Queues a new slot at `key` (a run's `lo` when `is_run`, else a row's key) for CLOCK;
    /// its serial.
    fn queue(&mut self, is_run: bool, key: KeyBytes) -> u64 {
        self.serial += 1;
        self.clock.push_back((is_run, key, self.serial));
        self.serial
    }

    /// The referenced mark of the slot a queue place stands for, when that slot is still
    /// there (not removed or replaced since it was queued).
    fn queued(&self, (is_run, key, serial): &Queued) -> Option<&AtomicBool> {
        if *is_run {
            let slot = self.map.get(key).filter(|s| s.serial == *serial)?;
            Some(&slot.referenced)
        } else {
            let slot = self.rows.get(key).filter(|s| s.serial == *serial)?;
            Some(&slot.referenced)
        }
    }

    /// Removes the row kept alone at `key`; the bytes it was counted for (0: none).
    fn remove_row(&mut self, key: &[u8]) -> usize {
        self.rows.remove(key).map_or(0, |s| s.bytes)
    }

    /// Removes every run whose interval meets `lo..hi` (no `hi`: `lo..`); the bytes freed.
    fn remove_overlapping(&mut self, lo: &[u8], hi: Option<&[u8]>) -> usize {
        let mut doomed: Vec<KeyBytes> = self
            .covering(lo)
            .map(|(k, _)| k.clone())
            .into_iter()
            .collect();
        let upper = hi.map_or(Bound::Unbounded, Bound::Excluded);
        doomed.extend(
            self.map
                .range::<[u8], _>((Bound::Excluded(lo), upper))
                .map(|(k, _)| k.clone()),
        );
        doomed.iter().map(|k| self.remove(k)).sum()
    }

    /// CLOCK while `over()`, one pass of the queue at most: a referenced run loses its mark
    /// and stays, an unreferenced one goes. The bytes freed (also subtracted from `bytes`).
    fn evict(&mut self, over: &dyn Fn() -> bool, bytes: &AtomicU64) -> usize {
        let mut freed = 0;
        let mut steps = self.clock.len();
        while steps > 0 && over() {
            steps -= 1;
            let Some(place) = self.clock.pop_front() else {
                break;
            };
            let Some(referenced) = self.queued(&place) else {
                continue; // removed or replaced since it was queued
            };
            if referenced.swap(false, Ordering::Relaxed) {
                self.clock.push_back(place);
                continue;
            }
            let (is_run, key, _) = place;
            let n = if is_run {
                self.remove(&key)
            } else {
                self.remove_row(&key)
            };
            bytes.fetch_sub(n as u64, Ordering::SeqCst);
            freed += n;
        }
        // Stale places (removed rows and runs) must not grow the queue past the live ones for
        // long.
        if self.clock.len() > 2 * (self.map.len() + self.rows.len()) + 64 {
            let mut clock = std::mem::take(&mut self.clock);
            clock.retain(|place| self.queued(place).is_some());
            self.clock = clock;
        }
        freed
    }
}

/// Heap bytes of a decoded row's values (and what they own), as the allocator hands them out.
pub(crate) fn row_bytes(row: &Vec<Value>) -> usize {
    alloc_bytes(row.capacity() * size_of::<Value>())
        + row
            .iter()
            .map(|v| match v {
                Value::Bytes(b) => alloc_bytes(b.alloc_len()),
                Value::Decimal(s) => alloc_bytes(s.capacity()),
                _ => 0,
            })
            .sum::<usize>()
}

/// Marks a slot used since the CLOCK hand last passed it (written only when unmarked, so hot
/// slots read by many threads do not bounce their cache line).
fn touch(referenced: &AtomicBool) {
    if !referenced.load(Ordering::Relaxed) {
        referenced.store(true, Ordering::Relaxed);
    }
}

/// Heap bytes of a key, as the allocator hands them out (0 when inline).
fn key_bytes(key: &KeyBytes) -> usize {
    alloc_bytes(key.heap_len())
}

/// An allocation of `n` bytes rounded up to the allocator's 16-byte granule.
pub(crate) const fn alloc_bytes(n: usize) -> usize {
    n.div_ceil(16) * 16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str) -> Arc<Vec<Value>> {
        Arc::new(vec![Value::Int(1), Value::bytes(s.as_bytes())])
    }

    fn text(r: &[Value]) -> &[u8] {
        match &r[1] {
            Value::Bytes(b) => b,
            v => panic!("{v:?}"),
        }
    }

    /// A base key of "table" `t` (its first [`TABLE_PREFIX`] bytes) and key `k`.
    fn key(t: u8, k: &str) -> Vec<u8> {
        let mut v = vec![b'R', 0, 0, 0, 0, 0, 0, 0, t];
        v.extend_from_slice(k.as_bytes());
        v
    }

    fn hit(c: &RowCache, tag: u64, k: &[u8]) -> Option<Vec<u8>> {
        c.get(tag, k, 2).flatten().map(|r| text(&r).to_vec())
    }

    fn run(lo: &str, hi: Option<&str>, rows: &[(&str, &str)]) -> Arc<Run> {
        Arc::new(Run::new(
            key(1, lo).into(),
            hi.map(|h| key(1, h).into()),
            2,
            rows.iter()
                .map(|(k, v)| (key(1, k).into(), row(v)))
                .collect(),
        ))
    }

    #[test]
    fn a_reader_sees_only_runs_of_its_generation_or_older() {
        let c = RowCache::new(1 << 20);
        let k = key(1, "k");
        let ((), t0) = c.tag(|| ());
        let t0 = t0.unwrap();
        assert!(c.insert_row(t0, &k, 2, &row("old")));
        assert_eq!(hit(&c, t0, &k).unwrap(), b"old");
        // The wrong column count is a miss.
        assert!(c.get(t0, &k, 3).is_none());
        {
            let w = c.begin_write();
            // No snapshot taken during a write is tagged; nothing read before it is kept.
            assert_eq!(c.tag(|| ()).1, None);
            assert!(!c.insert_row(t0, &key(1, "j"), 2, &row("x")));
            w.forget(&k);
        }
        assert!(c.get(t0, &key(1, "j"), 2).is_none());
        assert!(c.get(t0, &k, 2).is_none());
        let t1 = c.tag(|| ()).1.unwrap();
        assert!(t1 > t0);
        c.insert_row(t1, &k, 2, &row("new"));
        // An old reader does not take the newer value; a new one does.
        assert!(c.get(t0, &k, 2).is_none());
        assert_eq!(hit(&c, t1, &k).unwrap(), b"new");
        // An old reader's insert after the write is refused.
        assert!(!c.insert_row(t0, &key(1, "m"), 2, &row("old m")));
        assert!(c.get(t1, &key(1, "m"), 2).is_none());
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (2, 5));
    }

    #[test]
    fn a_run_answers_for_every_key_in_its_interval_and_a_write_inside_it_drops_it() {
        let c = RowCache::new(1 << 20);
        let t0 = c.tag(|| ()).1.unwrap();
        let other = key(1, "x");
        c.insert_row(t0, &other, 2, &row("x"));
        assert!(c.insert(t0, &run("b", Some("f"), &[("b", "b"), ("d", "d")])));
        assert_eq!(hit(&c, t0, &key(1, "d")).unwrap(), b"d");
        // "c" lies in the run and is not in it: the base has no such row.
        assert_eq!(c.get(t0, &key(1, "c"), 2), Some(None));
        // Outside the interval, and another table's key: the run does not say.
        assert!(c.get(t0, &key(1, "f"), 2).is_none());
        assert!(c.get(t0, &key(1, "a"), 2).is_none());
        assert!(c.get(t0, &key(2, "c"), 2).is_none());
        let r = c.run_at(t0, &key(1, "c"), 2).unwrap();
        assert_eq!(r.position(&key(1, "c")), 1);
        assert_eq!(r.hi(), Some(&key(1, "f")[..]));
        // A write of a new key inside the interval drops the run, not the row outside it.
        c.begin_write().forget(&key(1, "c"));
        let t1 = c.tag(|| ()).1.unwrap();
        assert!(c.get(t1, &key(1, "d"), 2).is_none());
        assert_eq!(hit(&c, t1, &other).unwrap(), b"x");
    }

    #[test]
    fn it_would_hold_as_many_rows_as_its_capacity_pays_for_at_what_rows_have_cost() {
        let c = RowCache::new(100_000);
        let t = c.tag(|| ()).1.unwrap();
        // Before any insert, any number.
        assert!(c.would_hold(u64::MAX));
        let run = run(
            "a",
            Some("z"),
            &[("b", "b"), ("c", "c"), ("d", "d"), ("e", "e")],
        );
        assert!(c.insert(t, &run));
        let per = (run.bytes() / 4) as u64;
        assert!(per > 0);
        assert!(c.would_hold(100_000 / per));
        assert!(!c.would_hold(100_000 / per + 1));
        // Lone rows cost more (their slot and key twice): the average moves up towards them.
        for i in 0..200u32 {
            c.insert_row(t, &key(2, &format!("r{i}")), 2, &row("r"));
        }
        assert!(!c.would_hold(100_000 / per));
        c.resize(0);
        assert!(!c.would_hold(1));
    }

    #[test]
    fn a_new_run_replaces_every_run_it_overlaps() {
        let c = RowCache::new(1 << 20);
        let t = c.tag(|| ()).1.unwrap();
        c.insert_row(t, &key(1, "a"), 2, &row("a"));
        c.insert(t, &run("c", Some("e"), &[("c", "c")]));
        c.insert(t, &run("e", Some("g"), &[("f", "f")]));
        c.insert(t, &run("g", Some("z"), &[("h", "h")]));
        // Starts inside the first run after "a" and ends inside the third.
        c.insert(t, &run("d", Some("g1"), &[("f", "F")]));
        assert_eq!(hit(&c, t, &key(1, "a")).unwrap(), b"a");
        assert!(c.get(t, &key(1, "c"), 2).is_none());
        assert_eq!(hit(&c, t, &key(1, "f")).unwrap(), b"F");
        assert!(c.get(t, &key(1, "h"), 2).is_none());
        let counted = c.stats().bytes;
        let kept = c.read(c.shard_of(&key(1, "a"))).map.len();
        assert_eq!(kept, 1);
        c.begin_write().forget(&key(1, "a"));
        c.begin_write().forget(&key(1, "e"));
        assert_eq!(c.stats().bytes, 0, "{counted}");
    }

    #[test]
    fn bytes_stay_under_the_capacity_and_referenced_runs_survive() {
        let capacity = 200_000;
        let c = RowCache::new(capacity);
        let t = c.tag(|| ()).1.unwrap();
        let hot: Vec<Vec<u8>> = (0..20u32).map(|i| key(1, &format!("hot{i}"))).collect();
        for k in &hot {
            c.insert_row(t, k, 2, &row("h"));
        }
        for i in 0..20_000u32 {
            for k in &hot {
                c.get(t, k, 2);
            }
            let k = key(2 + (i % 3) as u8, &format!("cold{i}"));
            c.insert_row(t, &k, 2, &row(&"c".repeat(100)));
            assert!(c.stats().bytes <= capacity);
        }
        let s = c.stats();
        assert!(s.bytes > capacity / 2, "{s:?}");
        let kept = hot.iter().filter(|k| hit(&c, t, k).is_some()).count();
        assert_eq!(kept, hot.len());
        // Every shard's queue stays bounded by its live runs.
        for sh in c.shards.iter() {
            let sh = sh.read().unwrap();
            assert!(sh.clock.len() <= 2 * (sh.map.len() + sh.rows.len()) + 65);
        }
    }

    /// A model of the base: each key's values (None: deleted) by the version that wrote them;
    /// a snapshot is a version. One writer writes keys as `Base::checkpoint_streamed` does
    /// (forget each key, then make the write visible, then end); readers read single rows
    /// and whole runs ("scans") through the cache: every answer they get, a row or its
    /// absence, must be what their snapshot holds.
    #[test]
    fn concurrent_readers_never_get_an_answer_their_snapshot_does_not_hold() {
        use std::sync::RwLock;
        const KEYS: usize = 24;
        type History = Vec<Vec<(u64, Option<i64>)>>;
        struct Model {
            version: u64,
            history: History,
        }
        let model = Arc::new(RwLock::new(Model {
            version: 0,
            history: vec![vec![(0, Some(0))]; KEYS],
        }));
        // Small enough that evictions happen too.
        let cache = Arc::new(RowCache::new(12_000));
        let k = |i: usize| key(1, &format!("{i:02}"));
        let value_at = |m: &Model, i: usize, v: u64| {
            m.history[i].iter().rev().find(|(w, _)| *w <= v).unwrap().1
        };
        let writing = Arc::new(AtomicBool::new(true));
        let readers: Vec<_> = (0..4)
            .map(|r| {
                let (model, cache, writing) = (model.clone(), cache.clone(), writing.clone());
                std::thread::spawn(move || {
                    let mut hits = 0;
                    // While the writer writes (bounded in reads).
                    for n in 0..10_000_000usize {
                        if !writing.load(Ordering::Relaxed) {
                            break;
                        }
                        let (version, tag) = cache.tag(|| model.read().unwrap().version);
                        let want: Vec<Option<i64>> = {
                            let m = model.read().unwrap();
                            (0..KEYS).map(|i| value_at(&m, i, version)).collect()
                        };
                        let Some(tag) = tag else { continue };
                        let i = (n * 7 + r) % KEYS;
                        if n % 5 == 0 {
                            // A scan of keys i.. (up to 6 of them) kept as one run.
                            let end = (i + 6).min(KEYS);
                            let rows = (i..end)
                                .filter_map(|j| {
                                    Some((k(j).into(), Arc::new(vec![Value::Int(want[j]?)])))
                                })
                                .collect();
                            let run = Run::new(k(i).into(), Some(k(end).into()), 1, rows);
                            cache.insert(tag, &Arc::new(run));
                            continue;
                        }
                        match cache.get(tag, &k(i), 1) {
                            Some(got) => {
                                let got = got.map(|r| match r[0] {
                                    Value::Int(v) => v,
                                    ref v => panic!("{v:?}"),
                                });
                                assert_eq!(got, want[i], "key {i} at {version}");
                                hits += 1;
                            }
                            None => {
                                if let Some(v) = want[i] {
                                    cache.insert_row(tag, &k(i), 1, &Arc::new(vec![Value::Int(v)]));
                                }
                            }
                        }
                    }
                    hits
                })
            })
            .collect();
        for round in 1..=1_000i64 {
            let hold = cache.begin_write();
            let written: Vec<usize> = (0..KEYS).filter(|i| (*i as i64 + round) % 3 == 0).collect();
            for &i in &written {
                hold.forget(&k(i));
            }
            {
                let mut m = model.write().unwrap();
                m.version += 1;
                let v = m.version;
                for &i in &written {
                    // Every fourth round deletes the keys it writes (a later one puts them
                    // back).
                    let value = (round % 4 != 0).then_some(round);
                    m.history[i].push((v, value));
                }
            }
            drop(hold);
            std::thread::yield_now();
        }
        writing.store(false, Ordering::Relaxed);
        let hits: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(hits > 100, "{hits} hits");
    }

    #[test]
    fn a_smaller_capacity_evicts_at_once_and_a_limit_is_asked_again_as_rows_come() {
        let limit = Arc::new(AtomicU64::new(400_000));
        let asked = limit.clone();
        let c = RowCache::with_limit(Box::new(move || asked.load(Ordering::Relaxed)));
        let t = c.tag(|| ()).1.unwrap();
        for i in 0..2_000u32 {
            c.insert_row(
                t,
                &key((i % 7) as u8, &format!("k{i}")),
                2,
                &row(&"v".repeat(50)),
            );
        }
        let full = c.stats().bytes;
        assert!(full > 200_000, "{full}");
        c.resize(100_000);
        assert!(c.stats().bytes <= 100_000);
        // The limit drops to nothing: within RESIZE_EVERY inserts the cache is empty and
        // refuses everything.
        limit.store(0, Ordering::Relaxed);
        let mut refused = 0;
        for i in 0..RESIZE_EVERY as u32 {
            if !c.insert_row(t, &key(1, &format!("n{i}")), 2, &row("v")) {
                refused += 1;
            }
        }
        assert!(refused > 0);
        assert_eq!(c.stats().bytes, 0);
        assert_eq!(c.stats().capacity, 0);
    }

    #[test]
    fn a_zero_capacity_cache_keeps_nothing() {
        let c = RowCache::new(0);
        let t = c.tag(|| ()).1.unwrap();
        assert!(!c.insert_row(t, &key(1, "k"), 2, &row("v")));
        assert!(c.get(t, &key(1, "k"), 2).is_none());
        assert_eq!(c.stats().bytes, 0);
    }
}
