//! Row lock manager: shared/exclusive row locks with FIFO queues, lock wait timeout and
//! deadlock detection on a wait-for graph.
//!
//! Owns the lock table (which transaction holds or waits for which row) and the wait-for graph.
//! Transactions call [`LockManager::lock`] before reading a row for update or modifying it, and
//! [`LockManager::release_all`] once their commit group is applied (or on rollback).
//!
//! Invariants:
//! - a row has either any number of `Shared` holders or exactly one `Exclusive` holder; a
//!   transaction appears at most once among a row's holders (re-entrant requests and the
//!   `Shared` → `Exclusive` upgrade change its entry in place);
//! - requests are granted in arrival order: a new request waits behind an earlier incompatible
//!   waiter even when it is compatible with the holders (so a stream of readers cannot starve a
//!   writer). Upgrades go to the front of the queue: the upgrader already holds the row, so
//!   queuing it behind a waiter that waits for it would be a certain deadlock;
//! - a waiter sleeps on its shard's condition variable (no polling) and re-evaluates whenever
//!   a holder or an earlier waiter of that shard leaves;
//! - every time a request has to wait, its edges in the wait-for graph are replaced by the
//!   transactions it currently waits for (incompatible holders and incompatible earlier
//!   waiters), and the graph is searched for a path back to the requester. The requester that
//!   closes a cycle is the victim ([`LockError::Deadlock`], MySQL error 1213); it holds its
//!   locks until the caller rolls it back with `release_all`. Because the edge insert and the
//!   search happen under one mutex, of two requests that close a cycle concurrently the second
//!   always sees the first's edge.
//!
//! Lock order: a shard's table mutex may be held while taking the graph mutex; nothing takes a
//! shard mutex while holding the graph mutex or a held-keys mutex.
//!
//! A transaction is driven by one thread at a time: `release_all(txn)` must not race with a
//! `lock(txn, ..)` of the same transaction.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::key::{KeyBytes, INLINE_KEY};

/// Transaction id as the lock manager sees it.
pub type TxnId = u64;

/// Lock strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    Shared,
    Exclusive,
}

impl LockMode {
    /// Whether two different transactions may hold `self` and `other` on one row at once.
    fn compatible(self, other: LockMode) -> bool {
        self == LockMode::Shared && other == LockMode::Shared
    }

    /// Whether holding `self` already satisfies a request for `want`.
    fn covers(self, want: LockMode) -> bool {
        self == LockMode::Exclusive || want == LockMode::Shared
    }
}

/// A lockable row: a table and an encoded key within it (`txn.rs` says which keys it locks).
///
/// Stored as the table id (8 bytes, big-endian) followed by the key bytes, in a
/// [`KeyBytes`]: inline when that fits in [`INLINE_KEY`] bytes (an integer or short string
/// primary key), on the heap otherwise, so a lock on such a row allocates nothing for its key
/// and the key's bytes sit in the lock table's slot itself. A big transaction holds a lock per
/// row it wrote, so this is most of what its locks cost (issue 14 part 3). Identity is the
/// bytes (`KeyBytes`' equality and hash).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RowKey(KeyBytes);

impl RowKey {
    /// The key `parts` (concatenated) of table `table_id`.
    pub fn new(table_id: u64, parts: &[&[u8]]) -> RowKey {
        let len = 8 + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut small = [0u8; INLINE_KEY];
        let mut heap = Vec::new();
        let out: &mut [u8] = if len <= INLINE_KEY {
            &mut small[..len]
        } else {
            heap.resize(len, 0);
            &mut heap
        };
        out[..8].copy_from_slice(&table_id.to_be_bytes());
        let mut at = 8;
        for p in parts {
            out[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        if len <= INLINE_KEY {
            RowKey(KeyBytes::from(&small[..len]))
        } else {
            RowKey(KeyBytes::from(heap))
        }
    }

    /// The table the row belongs to.
    pub fn table_id(&self) -> u64 {
        let mut id = [0u8; 8];
        id.copy_from_slice(&self.0[..8]);
        u64::from_be_bytes(id)
    }

    /// The key bytes within the table.
    pub fn key(&self) -> &[u8] {
        &self.0[8..]
    }
}

impl fmt::Debug for RowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowKey")
            .field("table_id", &self.table_id())
            .field("key", &self.key())
            .finish()
    }
}

/// Why a lock request failed. The transaction keeps the locks it already holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// The request closed a cycle in the wait-for graph; the requester is the victim.
    Deadlock,
    /// The lock was not granted within the lock wait timeout.
    Timeout,
}

impl LockError {
    /// MySQL error code: 1213 `ER_LOCK_DEADLOCK`, 1205 `ER_LOCK_WAIT_TIMEOUT`.
    pub fn code(&self) -> u16 {
        match self {
            LockError::Deadlock => 1213,
            LockError::Timeout => 1205,
        }
    }

    /// SQLSTATE: `40001` for a deadlock, `HY000` for a lock wait timeout.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            LockError::Deadlock => "40001",
            LockError::Timeout => "HY000",
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Deadlock => {
                f.write_str("Deadlock found when trying to get lock; try restarting transaction")
            }
            LockError::Timeout => {
                f.write_str("Lock wait timeout exceeded; try restarting transaction")
            }
        }
    }
}

impl std::error::Error for LockError {}

/// Number of lock table shards (a power of two; `release_all` tracks touched shards in a u64).
const SHARDS: usize = 64;

/// Most locks [`LockManager::release_all`] releases under one lock of a shard (and the count
/// up to which it releases them in the order they were taken).
const RELEASE_BATCH: usize = 1024;

/// The lock state of one row. Nearly every row has one holder and nobody waiting: that case
/// allocates nothing ([`Holders::One`], an empty [`Waiters`]).
#[derive(Default)]
struct Entry {
    /// Holders, each transaction at most once.
    granted: Holders,
    /// Waiters in grant order (upgrades at the front).
    waiting: Waiters,
}

// What a lock table slot costs (key and entry, nothing on the heap for a short key with one
// holder); a change that grows them should be a decision.
const _: () = assert!(std::mem::size_of::<RowKey>() == 24);
const _: () = assert!(std::mem::size_of::<Entry>() <= 32);

/// A row's holders: none, one (inline), or several.
#[derive(Default)]
enum Holders {
    #[default]
    None,
    One([(TxnId, LockMode); 1]),
    Many(Vec<(TxnId, LockMode)>),
}

impl Holders {
    fn as_slice(&self) -> &[(TxnId, LockMode)] {
        match self {
            Holders::None => &[],
            Holders::One(one) => one,
            Holders::Many(v) => v,
        }
    }

    fn iter(&self) -> std::slice::Iter<'_, (TxnId, LockMode)> {
        self.as_slice().iter()
    }

    fn iter_mut(&mut self) -> std::slice::IterMut<'_, (TxnId, LockMode)> {
        match self {
            Holders::None => [].iter_mut(),
            Holders::One(one) => one.iter_mut(),
            Holders::Many(v) => v.iter_mut(),
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&mut self, holder: (TxnId, LockMode)) {
        *self = match std::mem::take(self) {
            Holders::None => Holders::One([holder]),
            Holders::One([first]) => Holders::Many(vec![first, holder]),
            Holders::Many(mut v) => {
                v.push(holder);
                Holders::Many(v)
            }
        };
    }

    /// Removes `txn`'s entry, if it holds the row.
    fn remove(&mut self, txn: TxnId) {
        *self = match std::mem::take(self) {
            Holders::One([(t, _)]) if t == txn => Holders::None,
            Holders::Many(mut v) => {
                v.retain(|&(t, _)| t != txn);
                match v.len() {
                    0 => Holders::None,
                    1 => Holders::One([v[0]]),
                    _ => Holders::Many(v),
                }
            }
            other => other,
        };
    }
}

impl fmt::Debug for Holders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A row's waiters in grant order; no allocation while nobody waits. Boxed on purpose: one
/// pointer in every lock table slot instead of a queue's four words, for the rare row that
/// has waiters.
#[allow(clippy::box_collection)]
#[derive(Default)]
struct Waiters(Option<Box<VecDeque<(TxnId, LockMode)>>>);

impl Waiters {
    fn iter(&self) -> impl Iterator<Item = &(TxnId, LockMode)> {
        self.0.iter().flat_map(|q| q.iter())
    }

    fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    fn queue(&mut self) -> &mut VecDeque<(TxnId, LockMode)> {
        self.0.get_or_insert_with(Box::default)
    }

    fn push_front(&mut self, waiter: (TxnId, LockMode)) {
        self.queue().push_front(waiter);
    }

    fn push_back(&mut self, waiter: (TxnId, LockMode)) {
        self.queue().push_back(waiter);
    }

    /// Removes `txn`'s wait, if it waits; frees the queue once it is empty.
    fn remove(&mut self, txn: TxnId) {
        if let Some(q) = &mut self.0 {
            if let Some(i) = q.iter().position(|&(t, _)| t == txn) {
                q.remove(i);
            }
            if q.is_empty() {
                self.0 = None;
            }
        }
    }
}

impl Entry {
    /// The transactions `txn` must wait for before it may hold `mode`: incompatible holders
    /// and, unless it is an upgrade, incompatible waiters queued before it. Empty = grantable.
    fn blockers(&self, txn: TxnId, mode: LockMode, upgrade: bool, out: &mut Vec<TxnId>) {
        out.clear();
        for &(t, m) in self.granted.iter() {
            if t != txn && !m.compatible(mode) {
                out.push(t);
            }
        }
        if !upgrade {
            for &(t, m) in self.waiting.iter() {
                if t == txn {
                    break;
                }
                if !m.compatible(mode) {
                    out.push(t);
                }
            }
        }
    }

    /// Whether `txn` may hold `mode` now (same rule as `blockers`, without allocating).
    fn grantable(&self, txn: TxnId, mode: LockMode, upgrade: bool) -> bool {
        let holders_ok = self
            .granted
            .iter()
            .all(|&(t, m)| t == txn || m.compatible(mode));
        holders_ok
            && (upgrade
                || self
                    .waiting
                    .iter()
                    .take_while(|&&(t, _)| t != txn)
                    .all(|&(_, m)| m.compatible(mode)))
    }

    /// Records the grant. Returns true when the row is new to `txn` (not an upgrade).
    fn grant(&mut self, txn: TxnId, mode: LockMode) -> bool {
        let new_row = match self.granted.iter_mut().find(|(t, _)| *t == txn) {
            Some(held) => {
                held.1 = mode;
                false
            }
            None => {
                self.granted.push((txn, mode));
                true
            }
        };
        debug_assert!(self.holders_valid(), "holders {:?}", self.granted);
        new_row
    }

    /// The holder invariant of the module docs: any number of `Shared` holders or exactly one
    /// `Exclusive` holder, each transaction at most once.
    fn holders_valid(&self) -> bool {
        let exclusive = self.granted.iter().any(|&(_, m)| m == LockMode::Exclusive);
        let distinct = self
            .granted
            .iter()
            .enumerate()
            .all(|(i, &(t, _))| self.granted.as_slice()[..i].iter().all(|&(u, _)| u != t));
        distinct && (!exclusive || self.granted.len() == 1)
    }

    fn remove_waiter(&mut self, txn: TxnId) {
        self.waiting.remove(txn);
    }

    fn is_empty(&self) -> bool {
        self.granted.is_empty() && self.waiting.is_empty()
    }
}

/// What a lock request's first look at its row did (see [`first_attempt`]).
enum Attempt {
    /// Held now; `new_row` when the row is new to the transaction (not re-entrant, not an
    /// upgrade).
    Granted { new_row: bool },
    /// Not grantable, and the request may not wait (zero timeout).
    Refused,
    /// Queued as a waiter (at the front for an upgrade).
    Queued { upgrade: bool },
}

/// The request's first look at `key` in its shard's `table`: granted at once when the row is
/// free, already held strongly enough, or grantable; otherwise queued (if `may_wait`).
fn first_attempt(
    table: &mut RowTable,
    txn: TxnId,
    key: &RowKey,
    mode: LockMode,
    may_wait: bool,
) -> Attempt {
    let Some(entry) = table.get_mut(key) else {
        table.insert(
            key.clone(),
            Entry {
                granted: Holders::One([(txn, mode)]),
                waiting: Waiters::default(),
            },
        );
        return Attempt::Granted { new_row: true };
    };
    let held = entry
        .granted
        .iter()
        .find(|(t, _)| *t == txn)
        .map(|&(_, m)| m);
    if held.is_some_and(|m| m.covers(mode)) {
        return Attempt::Granted { new_row: false };
    }
    let upgrade = held.is_some();
    if entry.grantable(txn, mode, upgrade) {
        return Attempt::Granted {
            new_row: entry.grant(txn, mode),
        };
    }
    if !may_wait {
        return Attempt::Refused;
    }
    if upgrade {
        entry.waiting.push_front((txn, mode));
    } else {
        entry.waiting.push_back((txn, mode));
    }
    Attempt::Queued { upgrade }
}

/// One shard's rows. Hashed with foldhash, seeded per table: a big transaction takes a lock per
/// row it writes, and std's SipHash of each key (twice: the shard, then the table) was 5% of a
/// 1M-row UPDATE's statement thread (issue 14 part 3).
type RowTable = HashMap<RowKey, Entry, foldhash::quality::RandomState>;

struct Shard {
    table: Mutex<RowTable>,
    /// Notified when a holder or waiter leaves a row of this shard.
    cv: Condvar,
}

/// The rows each transaction holds, for `release_all` (one shard of the txn table).
type HeldRows = Mutex<HashMap<TxnId, Vec<RowKey>>>;

/// Row lock manager. `Send + Sync`; share it behind an `Arc`.
pub struct LockManager {
    shards: Box<[Shard]>,
    /// Per transaction, the rows it holds (sharded by transaction id).
    held: Box<[HeldRows]>,
    /// Wait-for graph: waiting transaction -> the transactions it waits for.
    graph: Mutex<HashMap<TxnId, Vec<TxnId>>>,
    /// Notified whenever a transaction starts (or re-starts) waiting.
    graph_cv: Condvar,
    /// Picks a row's shard (seeded apart from the tables', so the keys of one shard spread
    /// over its table).
    shard_hash: foldhash::quality::RandomState,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The protected data stays consistent at every unlock point, so a poisoned mutex (a panic
    // in another thread) does not make it unusable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for LockManager {
    fn default() -> Self {
        Self::new()
    }
}

impl LockManager {
    pub fn new() -> Self {
        let shards = (0..SHARDS)
            .map(|_| Shard {
                table: Mutex::new(RowTable::default()),
                cv: Condvar::new(),
            })
            .collect();
        let held = (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect();
        LockManager {
            shards,
            held,
            graph: Mutex::new(HashMap::new()),
            graph_cv: Condvar::new(),
            shard_hash: Default::default(),
        }
    }

    fn shard_of(&self, key: &RowKey) -> usize {
        (self.shard_hash.hash_one(key) as usize) & (SHARDS - 1)
    }

    fn held_shard(&self, txn: TxnId) -> &HeldRows {
        &self.held[(txn as usize) & (SHARDS - 1)]
    }

    fn note_held(&self, txn: TxnId, key: &RowKey) {
        relock(self.held_shard(txn))
            .entry(txn)
            .or_default()
            .push(key.clone());
    }

    /// Blocks until granted, a deadlock is found (this requester is the victim), or `timeout`
    /// passes. Re-entrant; `Shared` -> `Exclusive` upgrade supported. A zero timeout never
    /// waits. On error the transaction keeps the locks it held before the call.
    pub fn lock(
        &self,
        txn: TxnId,
        key: &RowKey,
        mode: LockMode,
        timeout: Duration,
    ) -> Result<(), LockError> {
        let shard = &self.shards[self.shard_of(key)];
        let mut table = relock(&shard.table);
        let upgrade = match first_attempt(&mut table, txn, key, mode, !timeout.is_zero()) {
            Attempt::Granted { new_row } => {
                drop(table);
                if new_row {
                    self.note_held(txn, key);
                }
                return Ok(());
            }
            Attempt::Refused => return Err(LockError::Timeout),
            Attempt::Queued { upgrade } => upgrade,
        };

        let deadline = Instant::now().checked_add(timeout);
        let mut blockers = Vec::new();
        loop {
            let Some(entry) = table.get_mut(key) else {
                // Unreachable: an entry with a waiter is never removed. Fail safe.
                self.clear_wait(txn);
                return Err(LockError::Timeout);
            };
            entry.blockers(txn, mode, upgrade, &mut blockers);
            if blockers.is_empty() {
                entry.remove_waiter(txn);
                let new_row = entry.grant(txn, mode);
                drop(table);
                self.clear_wait(txn);
                if new_row {
                    self.note_held(txn, key);
                }
                return Ok(());
            }
            let outcome = if self.wait_closes_cycle(txn, &blockers) {
                Some(LockError::Deadlock)
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                Some(LockError::Timeout)
            } else {
                None
            };
            if let Some(err) = outcome {
                entry.remove_waiter(txn);
                if entry.is_empty() {
                    table.remove(key);
                }
                drop(table);
                self.clear_wait(txn);
                // Requests queued behind this one may be grantable now.
                shard.cv.notify_all();
                return Err(err);
            }
            table = match deadline {
                None => shard.cv.wait(table).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    shard
                        .cv
                        .wait_timeout(table, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    /// Replaces `txn`'s edges by `blockers` and searches for a path from them back to `txn`.
    /// On a cycle the edges are removed again and true is returned.
    fn wait_closes_cycle(&self, txn: TxnId, blockers: &[TxnId]) -> bool {
        let mut graph = relock(&self.graph);
        let mut stack: Vec<TxnId> = blockers.to_vec();
        let mut seen: HashSet<TxnId> = HashSet::new();
        let mut cycle = false;
        while let Some(t) = stack.pop() {
            if t == txn {
                cycle = true;
                break;
            }
            if seen.insert(t) {
                if let Some(next) = graph.get(&t) {
                    stack.extend_from_slice(next);
                }
            }
        }
        if cycle {
            graph.remove(&txn);
        } else {
            graph.insert(txn, blockers.to_vec());
            self.graph_cv.notify_all();
        }
        cycle
    }

    fn clear_wait(&self, txn: TxnId) {
        relock(&self.graph).remove(&txn);
    }

    /// Releases every lock of `txn` and wakes the waiters of those rows (commit / rollback).
    /// Many locks are released shard by shard, [`RELEASE_BATCH`] under one lock of the shard:
    /// a shard's table then stays in the CPU's caches while its rows go (releasing a million
    /// locks one by one missed the cache on nearly every row).
    pub fn release_all(&self, txn: TxnId) {
        let Some(keys) = relock(self.held_shard(txn)).remove(&txn) else {
            return;
        };
        let mut touched: u64 = 0;
        if keys.len() <= RELEASE_BATCH {
            for key in keys {
                let s = self.shard_of(&key);
                if self.release_in(&mut relock(&self.shards[s].table), txn, key) {
                    touched |= 1 << s;
                }
            }
        } else {
            // Sized for an even spread (hashing spreads the keys), so the lists rarely grow.
            let each = keys.len() / SHARDS + keys.len() / (4 * SHARDS) + 16;
            let mut by_shard: Vec<Vec<RowKey>> =
                (0..SHARDS).map(|_| Vec::with_capacity(each)).collect();
            for key in keys {
                by_shard[self.shard_of(&key)].push(key);
            }
            for (s, keys) in by_shard.into_iter().enumerate() {
                let mut waiters = false;
                let mut keys = keys.into_iter().peekable();
                while keys.peek().is_some() {
                    let mut table = relock(&self.shards[s].table);
                    for key in keys.by_ref().take(RELEASE_BATCH) {
                        waiters |= self.release_in(&mut table, txn, key);
                    }
                }
                // A shard's waiters are woken once its rows are released, not at the end.
                if waiters {
                    self.shards[s].cv.notify_all();
                }
            }
        }
        for (s, shard) in self.shards.iter().enumerate() {
            if touched & (1 << s) != 0 {
                shard.cv.notify_all();
            }
        }
    }

    /// Releases `txn`'s lock on `key` in its shard's `table`; whether someone waits there.
    fn release_in(&self, table: &mut RowTable, txn: TxnId, key: RowKey) -> bool {
        let std::collections::hash_map::Entry::Occupied(mut slot) = table.entry(key) else {
            return false;
        };
        let entry = slot.get_mut();
        entry.granted.remove(txn);
        if !entry.waiting.is_empty() {
            return true;
        }
        if entry.granted.is_empty() {
            slot.remove();
        }
        false
    }

    /// Number of rows `txn` holds a lock on.
    pub fn held_by(&self, txn: TxnId) -> usize {
        relock(self.held_shard(txn)).get(&txn).map_or(0, Vec::len)
    }

    /// Whether `txn` is currently blocked in `lock` (diagnostics: lock waits in status output).
    pub fn is_waiting(&self, txn: TxnId) -> bool {
        relock(&self.graph).contains_key(&txn)
    }

    /// Blocks until `txn` is waiting for a lock or `timeout` passes; returns whether it is
    /// waiting. Lets tests (here and in the engine) order "A waits" before "B requests"
    /// without sleeping.
    pub fn wait_until_waiting(&self, txn: TxnId, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        let mut graph = relock(&self.graph);
        while !graph.contains_key(&txn) {
            graph = match deadline {
                None => self.graph_cv.wait(graph).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    self.graph_cv
                        .wait_timeout(graph, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::thread;

    const LONG: Duration = Duration::from_secs(30);

    fn row(k: u8) -> RowKey {
        RowKey::new(7, &[&[k]])
    }

    #[test]
    fn row_keys_keep_table_and_key_inline_or_on_the_heap() {
        let short = RowKey::new(0x0102_0304_0506_0708, &[&[0], &[9, 9]]);
        assert_eq!(short.table_id(), 0x0102_0304_0506_0708);
        assert_eq!(short.key(), &[0, 9, 9]);
        assert_eq!(short.0.heap_len(), 0);
        // The same bytes split differently are the same key.
        assert_eq!(short, RowKey::new(0x0102_0304_0506_0708, &[&[0, 9], &[9]]));
        let edge = RowKey::new(3, &[&[7; INLINE_KEY - 8]]);
        assert_eq!(edge.0.heap_len(), 0);
        let long = RowKey::new(3, &[&[1], &[7; INLINE_KEY - 8]]);
        assert_eq!(long.0.heap_len(), INLINE_KEY + 1);
        assert_eq!(long.table_id(), 3);
        assert_eq!(long.key().len(), INLINE_KEY - 7);
        assert_ne!(edge, long);
        assert_ne!(short, RowKey::new(0x0102_0304_0506_0709, &[&[0, 9, 9]]));
        // A lock on a long key conflicts with the same long key only.
        let lm = LockManager::new();
        lm.lock(1, &long, LockMode::Exclusive, LONG).unwrap();
        lm.lock(2, &edge, LockMode::Exclusive, LONG).unwrap();
        let again = RowKey::new(3, &[&[1, 7], &[7; INLINE_KEY - 9]]);
        assert_eq!(
            lm.lock(2, &again, LockMode::Shared, Duration::ZERO),
            Err(LockError::Timeout)
        );
        lm.release_all(1);
        lm.lock(2, &again, LockMode::Shared, Duration::ZERO)
            .unwrap();
        assert_eq!(lm.held_by(2), 2);
    }

    #[test]
    fn holders_and_waiters_shrink_back_as_they_leave() {
        let lm = LockManager::new();
        for t in 1..=3 {
            lm.lock(t, &row(1), LockMode::Shared, LONG).unwrap();
        }
        {
            let table = relock(&lm.shards[lm.shard_of(&row(1))].table);
            let e = &table[&row(1)];
            assert!(matches!(e.granted, Holders::Many(_)));
            assert_eq!(e.granted.len(), 3);
        }
        lm.release_all(1);
        lm.release_all(2);
        {
            let table = relock(&lm.shards[lm.shard_of(&row(1))].table);
            assert!(matches!(
                table[&row(1)].granted,
                Holders::One([(3, LockMode::Shared)])
            ));
        }
        // A waiter queues, times out and leaves no queue behind.
        assert_eq!(
            lm.lock(4, &row(1), LockMode::Exclusive, Duration::from_millis(20)),
            Err(LockError::Timeout)
        );
        {
            let table = relock(&lm.shards[lm.shard_of(&row(1))].table);
            assert!(table[&row(1)].waiting.is_empty());
        }
        lm.release_all(3);
        let table = relock(&lm.shards[lm.shard_of(&row(1))].table);
        assert!(!table.contains_key(&row(1)), "a free row leaves the table");
    }

    #[test]
    fn shared_locks_are_compatible_and_counted() {
        let lm = LockManager::new();
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        lm.lock(2, &row(1), LockMode::Shared, LONG).unwrap();
        lm.lock(2, &row(2), LockMode::Exclusive, LONG).unwrap();
        assert_eq!(lm.held_by(1), 1);
        assert_eq!(lm.held_by(2), 2);
        // An exclusive request against two shared holders cannot be granted.
        assert_eq!(
            lm.lock(3, &row(1), LockMode::Exclusive, Duration::ZERO),
            Err(LockError::Timeout)
        );
        lm.release_all(1);
        lm.release_all(2);
        assert_eq!(lm.held_by(1), 0);
        lm.lock(3, &row(1), LockMode::Exclusive, Duration::ZERO)
            .unwrap();
    }

    #[test]
    fn reentrant_requests_do_not_add_locks() {
        let lm = LockManager::new();
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        assert_eq!(lm.held_by(1), 1);
        assert_eq!(
            lm.lock(2, &row(1), LockMode::Shared, Duration::ZERO),
            Err(LockError::Timeout)
        );
    }

    #[test]
    fn sole_shared_holder_upgrades_to_exclusive() {
        let lm = LockManager::new();
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        lm.lock(1, &row(1), LockMode::Exclusive, Duration::ZERO)
            .unwrap();
        assert_eq!(lm.held_by(1), 1);
        assert_eq!(
            lm.lock(2, &row(1), LockMode::Shared, Duration::ZERO),
            Err(LockError::Timeout)
        );
    }

    #[test]
    fn upgrade_waits_for_other_shared_holder_to_release() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        lm.lock(2, &row(1), LockMode::Shared, LONG).unwrap();
        let lm2 = lm.clone();
        let t = thread::spawn(move || lm2.lock(1, &row(1), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(1, LONG));
        lm.release_all(2);
        assert_eq!(t.join().unwrap(), Ok(()));
        assert_eq!(lm.held_by(1), 1);
        assert_eq!(
            lm.lock(2, &row(1), LockMode::Shared, Duration::ZERO),
            Err(LockError::Timeout)
        );
    }

    #[test]
    fn two_upgraders_deadlock_and_second_is_victim() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        lm.lock(2, &row(1), LockMode::Shared, LONG).unwrap();
        let lm2 = lm.clone();
        let t = thread::spawn(move || lm2.lock(1, &row(1), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(1, LONG));
        assert_eq!(
            lm.lock(2, &row(1), LockMode::Exclusive, LONG),
            Err(LockError::Deadlock)
        );
        lm.release_all(2);
        assert_eq!(t.join().unwrap(), Ok(()));
    }

    #[test]
    fn release_wakes_waiter() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        let lm2 = lm.clone();
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || {
            let r = lm2.lock(2, &row(1), LockMode::Exclusive, LONG);
            tx.send(lm2.held_by(2)).unwrap();
            r
        });
        assert!(lm.wait_until_waiting(2, LONG));
        assert!(
            rx.try_recv().is_err(),
            "the waiter must not be granted while 1 holds the row"
        );
        lm.release_all(1);
        assert_eq!(t.join().unwrap(), Ok(()));
        assert_eq!(rx.recv().unwrap(), 1);
        assert!(!lm.is_waiting(2));
    }

    /// More locks than one batch: released shard by shard, a row shared with another holder
    /// stays held by it, a waiter is granted, and every other row leaves the table.
    #[test]
    fn releasing_many_locks_batches_by_shard_and_wakes_waiters() {
        let n = 3 * RELEASE_BATCH as u64 + 5;
        let key = |i: u64| RowKey::new(7, &[&i.to_be_bytes()]);
        let lm = Arc::new(LockManager::new());
        for i in 0..n {
            let mode = if i == 7 {
                LockMode::Shared
            } else {
                LockMode::Exclusive
            };
            lm.lock(1, &key(i), mode, LONG).unwrap();
        }
        lm.lock(2, &key(7), LockMode::Shared, LONG).unwrap();
        assert_eq!(lm.held_by(1), n as usize);
        let lm2 = lm.clone();
        let waiter = thread::spawn(move || lm2.lock(3, &key(n - 1), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(3, LONG));
        lm.release_all(1);
        assert_eq!(waiter.join().unwrap(), Ok(()));
        assert_eq!(lm.held_by(1), 0);
        let rows: usize = lm.shards.iter().map(|s| relock(&s.table).len()).sum();
        assert_eq!(rows, 2, "only the rows 2 and 3 hold are left");
        let table = relock(&lm.shards[lm.shard_of(&key(7))].table);
        assert!(matches!(
            table[&key(7)].granted,
            Holders::One([(2, LockMode::Shared)])
        ));
    }

    #[test]
    fn two_txn_deadlock_victimises_second_requester_and_first_proceeds() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        lm.lock(2, &row(2), LockMode::Exclusive, LONG).unwrap();
        let lm2 = lm.clone();
        let t = thread::spawn(move || lm2.lock(1, &row(2), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(1, LONG));
        assert_eq!(
            lm.lock(2, &row(1), LockMode::Exclusive, LONG),
            Err(LockError::Deadlock)
        );
        // The victim keeps its locks until rolled back.
        assert_eq!(lm.held_by(2), 1);
        assert!(lm.is_waiting(1));
        lm.release_all(2);
        assert_eq!(t.join().unwrap(), Ok(()));
        assert_eq!(lm.held_by(1), 2);
    }

    #[test]
    fn three_txn_cycle_is_detected() {
        let lm = Arc::new(LockManager::new());
        for t in 1..=3u8 {
            lm.lock(u64::from(t), &row(t), LockMode::Exclusive, LONG)
                .unwrap();
        }
        // 1 waits for 2, 2 waits for 3, then 3 asks for 1's row: cycle 3 -> 1 -> 2 -> 3.
        let lm_a = lm.clone();
        let a = thread::spawn(move || lm_a.lock(1, &row(2), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(1, LONG));
        let lm_b = lm.clone();
        let b = thread::spawn(move || lm_b.lock(2, &row(3), LockMode::Shared, LONG));
        assert!(lm.wait_until_waiting(2, LONG));
        assert_eq!(
            lm.lock(3, &row(1), LockMode::Shared, LONG),
            Err(LockError::Deadlock)
        );
        lm.release_all(3);
        assert_eq!(b.join().unwrap(), Ok(()));
        lm.release_all(2);
        assert_eq!(a.join().unwrap(), Ok(()));
        assert_eq!(lm.held_by(1), 2);
    }

    #[test]
    fn waiting_without_cycle_is_not_a_deadlock() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        let lm_a = lm.clone();
        let a = thread::spawn(move || lm_a.lock(2, &row(1), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(2, LONG));
        // 3 queues behind 2 on the same row: a chain, not a cycle.
        let lm_b = lm.clone();
        let b = thread::spawn(move || lm_b.lock(3, &row(1), LockMode::Shared, LONG));
        assert!(lm.wait_until_waiting(3, LONG));
        lm.release_all(1);
        assert_eq!(a.join().unwrap(), Ok(()));
        lm.release_all(2);
        assert_eq!(b.join().unwrap(), Ok(()));
    }

    #[test]
    fn lock_wait_times_out_and_leaves_no_waiter() {
        let lm = LockManager::new();
        lm.lock(1, &row(1), LockMode::Exclusive, LONG).unwrap();
        let err = lm
            .lock(2, &row(1), LockMode::Shared, Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(err, LockError::Timeout);
        assert_eq!((err.code(), err.sqlstate()), (1205, "HY000"));
        assert!(!lm.is_waiting(2));
        assert_eq!(lm.held_by(2), 0);
        lm.release_all(1);
        lm.lock(2, &row(1), LockMode::Exclusive, Duration::ZERO)
            .unwrap();
    }

    #[test]
    fn shared_request_queues_behind_waiting_exclusive() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &row(1), LockMode::Shared, LONG).unwrap();
        let lm_a = lm.clone();
        let a = thread::spawn(move || lm_a.lock(2, &row(1), LockMode::Exclusive, LONG));
        assert!(lm.wait_until_waiting(2, LONG));
        // Compatible with the holder, but a writer is queued first: FIFO makes it wait.
        assert_eq!(
            lm.lock(3, &row(1), LockMode::Shared, Duration::ZERO),
            Err(LockError::Timeout)
        );
        lm.release_all(1);
        assert_eq!(a.join().unwrap(), Ok(()));
    }

    /// One random row request: (row, mode).
    fn random_request(next: &mut impl FnMut() -> u64, rows: u64) -> (u64, LockMode) {
        let r = next() % rows;
        let mode = if matches!(next() % 3, 0) {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        (r, mode)
    }

    /// Records in `mirror` that `txn` now holds `mode` on a row and checks compatibility with
    /// the other holders recorded there.
    fn check_exclusion(mirror: &Mutex<HashMap<TxnId, LockMode>>, txn: TxnId, mode: LockMode) {
        let mut m = mirror.lock().unwrap();
        let mine = m.entry(txn).or_insert(mode);
        if mode == LockMode::Exclusive {
            *mine = mode;
        }
        let mine = *mine;
        for (&other, &theirs) in m.iter() {
            assert!(
                other == txn || mine.compatible(theirs),
                "txn {txn} holds {mine:?} while txn {other} holds {theirs:?}"
            );
        }
    }

    /// Runs 6 threads x 1000 transactions of 4 random row locks each over 6 rows; a
    /// transaction rolls back (release_all) on deadlock. With `ordered`, each transaction
    /// locks distinct rows in ascending order with one mode per row, so no deadlock can exist.
    /// Asserts exclusion on every grant and that no request times out (a lost wakeup or a
    /// missed cycle would hang until the 30 s timeout). Returns the number of deadlocks.
    fn random_locking(ordered: bool) -> u64 {
        const THREADS: u64 = 6;
        const TXNS: u64 = 1000;
        const ROWS: u64 = 6;
        let lm = Arc::new(LockManager::new());
        // Mirror of the holders: updated after a grant and before the release, so it never
        // shows a holder that has already released.
        let mirror: Arc<Vec<Mutex<HashMap<TxnId, LockMode>>>> =
            Arc::new((0..ROWS).map(|_| Mutex::new(HashMap::new())).collect());
        let start = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (lm, mirror, start) = (lm.clone(), mirror.clone(), start.clone());
                thread::spawn(move || {
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (t + 1).wrapping_mul(0x2545_f491);
                    let mut next = move || {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng
                    };
                    let mut deadlocks = 0;
                    start.wait();
                    for n in 0..TXNS {
                        let txn = t * 1_000_000 + n;
                        let mut requests: Vec<(u64, LockMode)> =
                            (0..4).map(|_| random_request(&mut next, ROWS)).collect();
                        if ordered {
                            requests.sort_by_key(|&(r, _)| r);
                            requests.dedup_by_key(|&mut (r, _)| r);
                        }
                        let mut held = Vec::new();
                        for (r, mode) in requests {
                            let key = RowKey::new(1, &[&r.to_le_bytes()]);
                            match lm.lock(txn, &key, mode, LONG) {
                                Ok(()) => {
                                    check_exclusion(&mirror[r as usize], txn, mode);
                                    held.push(r);
                                    // Keep the row a moment so that transactions overlap.
                                    thread::yield_now();
                                }
                                Err(LockError::Deadlock) => {
                                    deadlocks += 1;
                                    break;
                                }
                                Err(LockError::Timeout) => {
                                    panic!("txn {txn} timed out: lost wakeup or missed deadlock")
                                }
                            }
                        }
                        for r in held {
                            mirror[r as usize].lock().unwrap().remove(&txn);
                        }
                        lm.release_all(txn);
                        assert_eq!(lm.held_by(txn), 0);
                    }
                    deadlocks
                })
            })
            .collect();
        let deadlocks = threads.into_iter().map(|t| t.join().unwrap()).sum();
        for r in 0..ROWS {
            let key = RowKey::new(1, &[&r.to_le_bytes()]);
            lm.lock(u64::MAX, &key, LockMode::Exclusive, Duration::ZERO)
                .unwrap();
        }
        deadlocks
    }

    #[test]
    fn concurrent_random_locking_keeps_exclusion_and_never_hangs() {
        random_locking(false);
    }

    #[test]
    fn ordered_locking_never_reports_a_false_deadlock() {
        assert_eq!(random_locking(true), 0);
    }

    #[test]
    fn deadlock_error_has_mysql_code() {
        assert_eq!(
            (LockError::Deadlock.code(), LockError::Deadlock.sqlstate()),
            (1213, "40001")
        );
    }
}
