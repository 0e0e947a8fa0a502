//! Decoded rows of the paged store's base, kept in memory (docs/PAGED_STORE.md, build order
//! step 7): a point read of a row that lies in the base costs a hash lookup instead of a
//! block cache lookup, a block search and a row decode.
//!
//! Owns [`RowCache`]: rows by base row key (`row_key(storage, pk)`), each tagged with the
//! **generation** of the base it was read from, in shards of bounded bytes evicted by CLOCK.
//!
//! Generations. Only `Base::checkpoint_streamed` writes the base. A write makes the
//! generation odd before it writes anything ([`RowCache::begin_write`]), removes each row key
//! it writes from the cache as it goes ([`WriteHold::forget`]), and makes it even again once
//! the write is visible or has failed (dropping the [`WriteHold`]). A base snapshot reads the
//! generation before and after it takes fjall's snapshot ([`RowCache::tag`]); when both are
//! the same even number `g`, no write ran in between, so the snapshot holds exactly the writes
//! of generations up to `g`, and it is tagged `g`; otherwise it is untagged and does not use
//! the cache.
//!
//! Invariants:
//! - an entry tagged `t` holds the value its key had in every base generation from `t` up to
//!   the current one: it was read from a snapshot of generation `t`, was inserted only while
//!   the generation was still `t` (checked under its shard's lock), and every later write of
//!   its key removed it (under the same lock) after the generation had moved on;
//! - so a reader of generation `s` may use an entry tagged `t <= s`, never one tagged `t > s`
//!   (it may hold a value newer than the reader's snapshot);
//! - each shard's counted bytes (`Shard::bytes`) stay at or under its share of the capacity
//!   after every insert and every [`RowCache::resize`]; an entry larger than a share is not
//!   kept.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use onelog_binlog::Value;

/// Shards: a power of two, enough that 64 threads rarely meet on one lock.
const SHARDS: usize = 64;
/// How often (in inserts) a cache with a [`Limit`] asks it for its capacity again.
const RESIZE_EVERY: u64 = 1024;

/// Memory counted per entry besides its key and values: the map's slot and the CLOCK queue's
/// (each counted twice: tables grow by doubling, and the queue keeps places of removed keys
/// until it is compacted), and the `Arc`'d vector's header.
const ENTRY_OVERHEAD: usize =
    2 * std::mem::size_of::<(Box<[u8]>, Slot)>() + 2 * std::mem::size_of::<(Box<[u8]>, u64)>() + 48;

/// Where a cache's capacity comes from: the bytes it may hold now.
pub type Limit = Box<dyn Fn() -> u64 + Send + Sync>;

/// Decoded base rows (module docs).
pub struct RowCache {
    shards: Box<[Mutex<Shard>]>,
    hasher: std::collections::hash_map::RandomState,
    /// The base's generation: odd while a write runs.
    generation: AtomicU64,
    /// Serialises writers (a write's odd generation is its own).
    writing: Mutex<()>,
    /// Bytes each shard may hold; from `limit` when there is one.
    shard_capacity: AtomicU64,
    limit: Option<Limit>,
    inserts: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Box<[u8]>, Slot>,
    /// CLOCK order: keys with the serial of the slot they were queued for (a key removed and
    /// inserted again is queued again; its old place is skipped).
    clock: VecDeque<(Box<[u8]>, u64)>,
    bytes: usize,
    serial: u64,
}

struct Slot {
    row: Arc<Vec<Value>>,
    columns: usize,
    tag: u64,
    bytes: usize,
    serial: u64,
    referenced: bool,
}

/// Counters of a [`RowCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    pub hits: u64,
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
    /// Drops any cached copy of base key `key` (a key of any kind; only row keys are cached).
    pub fn forget(&self, key: &[u8]) {
        let mut shard = self.cache.shard(key);
        if let Some(slot) = shard.map.remove(key) {
            shard.bytes -= slot.bytes;
        }
    }
}

impl RowCache {
    /// A cache of at most `capacity` counted bytes (0: it keeps nothing).
    pub fn new(capacity: u64) -> RowCache {
        RowCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: Default::default(),
            generation: AtomicU64::new(0),
            writing: Mutex::new(()),
            shard_capacity: AtomicU64::new(capacity / SHARDS as u64),
            limit: None,
            inserts: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
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

    fn shard_capacity(&self) -> usize {
        usize::try_from(self.shard_capacity.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    fn shard(&self, key: &[u8]) -> MutexGuard<'_, Shard> {
        let i = (self.hasher.hash_one(key) as usize) & (SHARDS - 1);
        // A panic while a shard was held left it consistent (no shard code panics between its
        // updates), so a poisoned lock is taken over.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
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

    /// The row at base key `key` as a reader of generation `tag` sees it, decoded for a table
    /// of `columns` columns; None when not cached (a miss is counted).
    pub fn get(&self, tag: u64, key: &[u8], columns: usize) -> Option<Arc<Vec<Value>>> {
        if self.shard_capacity() == 0 {
            return None;
        }
        let found = {
            let mut shard = self.shard(key);
            shard
                .map
                .get_mut(key)
                .filter(|s| s.tag <= tag && s.columns == columns)
                .map(|s| {
                    s.referenced = true;
                    s.row.clone()
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

    /// Keeps `row`, read at base key `key` from a snapshot of generation `tag`, unless the
    /// base has been written since (module docs). False when the cache takes nothing from
    /// that snapshot any more: the base was written since, or the capacity is 0 (a row too
    /// large for a shard is only skipped).
    pub fn insert(&self, tag: u64, key: &[u8], columns: usize, row: &Arc<Vec<Value>>) -> bool {
        if let Some(limit) = &self.limit {
            if self
                .inserts
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(RESIZE_EVERY)
            {
                self.resize(limit());
            }
        }
        let capacity = self.shard_capacity();
        let bytes = ENTRY_OVERHEAD + 2 * alloc_bytes(key.len()) + row_bytes(row);
        if bytes > capacity {
            return capacity > 0;
        }
        let mut shard = self.shard(key);
        if self.generation.load(Ordering::SeqCst) != tag {
            return false;
        }
        shard.serial += 1;
        let serial = shard.serial;
        let slot = Slot {
            row: row.clone(),
            columns,
            tag,
            bytes,
            serial,
            referenced: false,
        };
        match shard.map.entry(key.into()) {
            Entry::Occupied(mut o) => {
                let old = o.insert(slot);
                shard.bytes -= old.bytes;
            }
            Entry::Vacant(v) => {
                v.insert(slot);
            }
        }
        shard.bytes += bytes;
        shard.clock.push_back((key.into(), serial));
        shard.evict(capacity);
        true
    }

    /// Sets the capacity to `capacity` bytes; when it shrinks, every shard evicts down to its
    /// new share at once (a shard may see no insert for a long time, or never again when
    /// the capacity is 0).
    pub fn resize(&self, capacity: u64) {
        let per_shard = capacity / SHARDS as u64;
        let old = self.shard_capacity.swap(per_shard, Ordering::Relaxed);
        if per_shard >= old {
            return;
        }
        let per_shard = usize::try_from(per_shard).unwrap_or(usize::MAX);
        for shard in self.shards.iter() {
            shard
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .evict(per_shard);
        }
    }

    pub fn stats(&self) -> RowCacheStats {
        let bytes = self
            .shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).bytes as u64)
            .sum();
        RowCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes,
            capacity: self.shard_capacity.load(Ordering::Relaxed) * SHARDS as u64,
        }
    }
}

impl Shard {
    /// CLOCK: a referenced entry gets a second round, the first unreferenced one goes.
    fn evict(&mut self, capacity: usize) {
        while self.bytes > capacity {
            let Some((key, serial)) = self.clock.pop_front() else {
                break;
            };
            let Some(slot) = self.map.get_mut(&key).filter(|s| s.serial == serial) else {
                continue; // removed or replaced since it was queued
            };
            if slot.referenced {
                slot.referenced = false;
                self.clock.push_back((key, serial));
                continue;
            }
            let bytes = slot.bytes;
            self.map.remove(&key);
            self.bytes -= bytes;
        }
        // Stale places (removed keys) must not grow the queue past the live entries for long.
        if self.clock.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.clock
                .retain(|(k, serial)| map.get(k).is_some_and(|s| s.serial == *serial));
        }
    }
}

/// Heap bytes of a decoded row (its values and what they own), as the allocator hands them
/// out.
fn row_bytes(row: &Vec<Value>) -> usize {
    alloc_bytes(row.capacity() * std::mem::size_of::<Value>())
        + row
            .iter()
            .map(|v| match v {
                Value::Bytes(b) => alloc_bytes(b.capacity()),
                Value::Decimal(s) => alloc_bytes(s.capacity()),
                _ => 0,
            })
            .sum::<usize>()
}

/// An allocation of `n` bytes rounded up to the allocator's 16-byte granule.
fn alloc_bytes(n: usize) -> usize {
    n.div_ceil(16) * 16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str) -> Arc<Vec<Value>> {
        Arc::new(vec![Value::Int(1), Value::Bytes(s.as_bytes().to_vec())])
    }

    fn text(r: &[Value]) -> &[u8] {
        match &r[1] {
            Value::Bytes(b) => b,
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_reader_sees_only_entries_of_its_generation_or_older() {
        let c = RowCache::new(1 << 20);
        let ((), t0) = c.tag(|| ());
        let t0 = t0.unwrap();
        assert!(c.insert(t0, b"k", 2, &row("old")));
        assert_eq!(text(&c.get(t0, b"k", 2).unwrap()), b"old");
        // The wrong column count is a miss.
        assert!(c.get(t0, b"k", 3).is_none());
        {
            let w = c.begin_write();
            // No snapshot taken during a write is tagged; nothing read before it is kept.
            assert_eq!(c.tag(|| ()).1, None);
            assert!(!c.insert(t0, b"j", 2, &row("x")));
            w.forget(b"k");
        }
        assert!(c.get(t0, b"j", 2).is_none());
        assert!(c.get(t0, b"k", 2).is_none());
        let t1 = c.tag(|| ()).1.unwrap();
        assert!(t1 > t0);
        c.insert(t1, b"k", 2, &row("new"));
        // An old reader does not take the newer value; a new one does.
        assert!(c.get(t0, b"k", 2).is_none());
        assert_eq!(text(&c.get(t1, b"k", 2).unwrap()), b"new");
        // An old reader's insert after the write is refused.
        assert!(!c.insert(t0, b"m", 2, &row("old m")));
        assert!(c.get(t1, b"m", 2).is_none());
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (2, 5));
    }

    #[test]
    fn an_entry_a_write_did_not_touch_stays_valid_for_later_readers() {
        let c = RowCache::new(1 << 20);
        let t0 = c.tag(|| ()).1.unwrap();
        c.insert(t0, b"a", 2, &row("a"));
        c.insert(t0, b"b", 2, &row("b"));
        c.begin_write().forget(b"b");
        let t1 = c.tag(|| ()).1.unwrap();
        assert_eq!(text(&c.get(t1, b"a", 2).unwrap()), b"a");
        assert!(c.get(t1, b"b", 2).is_none());
    }

    #[test]
    fn bytes_stay_under_the_capacity_and_referenced_entries_survive() {
        let capacity = SHARDS as u64 * 2_000;
        let c = RowCache::new(capacity);
        let t = c.tag(|| ()).1.unwrap();
        let hot: Vec<Vec<u8>> = (0..20u32).map(|i| format!("hot{i}").into_bytes()).collect();
        for k in &hot {
            c.insert(t, k, 2, &row("h"));
        }
        for i in 0..20_000u32 {
            for k in &hot {
                c.get(t, k, 2);
            }
            c.insert(t, format!("cold{i}").as_bytes(), 2, &row(&"c".repeat(100)));
        }
        let s = c.stats();
        assert!(s.bytes <= capacity, "{s:?}");
        assert!(s.bytes > capacity / 2, "{s:?}");
        let kept = hot.iter().filter(|k| c.get(t, k, 2).is_some()).count();
        assert_eq!(kept, hot.len());
        // Every shard's queue stays bounded by its live entries.
        for sh in c.shards.iter() {
            let sh = sh.lock().unwrap();
            assert!(sh.clock.len() <= 2 * sh.map.len() + 65);
        }
    }

    /// A model of the base: each key's values by the version that wrote them; a snapshot is a
    /// version. One writer writes keys as `Base::checkpoint_streamed` does (forget each key,
    /// then make the write visible, then end), readers read through the cache: every value
    /// they get must be the one their snapshot holds.
    #[test]
    fn concurrent_readers_never_get_a_value_their_snapshot_does_not_hold() {
        use std::sync::RwLock;
        const KEYS: usize = 16;
        struct Model {
            version: u64,
            history: Vec<Vec<(u64, i64)>>,
        }
        let model = Arc::new(RwLock::new(Model {
            version: 0,
            history: vec![vec![(0, 0)]; KEYS],
        }));
        // Small enough that evictions happen too.
        let cache = Arc::new(RowCache::new(SHARDS as u64 * 600));
        let key = |i: usize| format!("key{i}").into_bytes();
        let value_at = |m: &Model, i: usize, v: u64| {
            m.history[i].iter().rev().find(|(w, _)| *w <= v).unwrap().1
        };
        let readers: Vec<_> = (0..4)
            .map(|r| {
                let (model, cache) = (model.clone(), cache.clone());
                std::thread::spawn(move || {
                    let mut hits = 0;
                    for n in 0..20_000usize {
                        let (version, tag) = cache.tag(|| model.read().unwrap().version);
                        let i = (n * 7 + r) % KEYS;
                        let want = value_at(&model.read().unwrap(), i, version);
                        let Some(tag) = tag else { continue };
                        match cache.get(tag, &key(i), 1) {
                            Some(row) => {
                                assert_eq!(*row, vec![Value::Int(want)], "key {i} at {version}");
                                hits += 1;
                            }
                            None => {
                                cache.insert(tag, &key(i), 1, &Arc::new(vec![Value::Int(want)]));
                            }
                        }
                    }
                    hits
                })
            })
            .collect();
        for round in 1..=300i64 {
            let hold = cache.begin_write();
            let written: Vec<usize> = (0..KEYS).filter(|i| (*i as i64 + round) % 3 == 0).collect();
            for &i in &written {
                hold.forget(&key(i));
            }
            {
                let mut m = model.write().unwrap();
                m.version += 1;
                let v = m.version;
                for &i in &written {
                    m.history[i].push((v, round));
                }
            }
            drop(hold);
            std::thread::yield_now();
        }
        let hits: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(hits > 0);
    }

    #[test]
    fn a_smaller_capacity_evicts_at_once_and_a_limit_is_asked_again_as_rows_come() {
        let limit = Arc::new(AtomicU64::new(SHARDS as u64 * 4_000));
        let asked = limit.clone();
        let c = RowCache::with_limit(Box::new(move || asked.load(Ordering::Relaxed)));
        let t = c.tag(|| ()).1.unwrap();
        for i in 0..2_000u32 {
            c.insert(t, format!("k{i}").as_bytes(), 2, &row(&"v".repeat(50)));
        }
        let full = c.stats().bytes;
        assert!(full > SHARDS as u64 * 2_000, "{full}");
        c.resize(SHARDS as u64 * 1_000);
        assert!(c.stats().bytes <= SHARDS as u64 * 1_000);
        // The limit drops to nothing: within RESIZE_EVERY inserts the cache is empty and
        // refuses everything.
        limit.store(0, Ordering::Relaxed);
        let mut refused = 0;
        for i in 0..RESIZE_EVERY as u32 {
            if !c.insert(t, format!("n{i}").as_bytes(), 2, &row("v")) {
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
        assert!(!c.insert(t, b"k", 2, &row("v")));
        assert!(c.get(t, b"k", 2).is_none());
        assert_eq!(c.stats().bytes, 0);
    }
}
