//! Transactions: REPEATABLE READ reads, row locks, the private write set, savepoints, commit.
//!
//! Owns [`Transaction`] and [`InsertOutcome`]. A transaction keeps an ordered change log (the
//! [`RowChange`]s it made, in order: this is what its binlog event group will contain), the
//! current state of every row it touched (derived from the log, used to overlay its reads),
//! and savepoint marks into the log.
//!
//! Semantics (InnoDB's, row by row):
//! - plain reads ([`get`](Transaction::get), [`scan`](Transaction::scan) without a lock) read
//!   the snapshot taken at the transaction's first plain read (READ COMMITTED: at the first one
//!   after each [`refresh_snapshot`](Transaction::refresh_snapshot)), overlaid with its own
//!   changes;
//!   the borrowed forms ([`get_shared`](Transaction::get_shared),
//!   [`scan_with`](Transaction::scan_with), [`scan_ranges_with`](Transaction::scan_ranges_with))
//!   read the same rows without copying them: a scan of a table the transaction did not change
//!   walks the snapshot in place, and several ranges are merged first (each row once, in index
//!   order);
//! - writes and locking reads take row locks (exclusive for writes and `FOR UPDATE`, shared for
//!   `LOCK IN SHARE MODE`) and read the latest committed version, overlaid with own changes;
//!   locks are on primary-key values (`RowKey`: table, `0 ++ pk`) and on unique
//!   secondary-key values (`1 ++ index id BE ++ index key`). There are no gap locks: a locking
//!   range scan locks the rows it returns, not the gaps, so phantoms are possible;
//! - inserts check duplicates (primary key and unique indexes, NULLs never conflict) against
//!   the latest committed root plus own changes, after locking the key values, so a duplicate
//!   held by an uncommitted transaction makes the insert wait for it, as in InnoDB;
//! - AUTO_INCREMENT: NULL or 0 takes the next value from the engine's per-table counter, which
//!   is not transactional (a rollback leaves a gap); an explicit value moves the counter past it;
//! - deadlock (1213): the whole transaction is rolled back and its locks released; every later
//!   call returns 1213 again. Lock wait timeout (1205): only the call fails, locks stay;
//! - savepoints mark positions in the change log; rolling back to one truncates the log and
//!   rebuilds the row state (locks taken since are kept, like InnoDB);
//! - every change is encoded into the transaction's binlog event cache as it is made
//!   (`event_cache.rs`; 1197 and nothing recorded when it would exceed
//!   `max_binlog_cache_size`); savepoints mark the cache too, and rolling back to one
//!   truncates it;
//! - once the change log is big (`prebuild::big_change_log`), its changes are also fed,
//!   in batches, to a thread that builds the new versions of the written tables (`prebuild.rs`)
//!   for the commit to install; a rollback to a savepoint below what was fed cancels it;
//! - nothing of an uncommitted transaction reaches the log: commit hands the change log and
//!   the cache to the commit path (`Committer::commit_changes`, `commit.rs`) which logs the
//!   cached events as one event group; rollback (or drop) just releases the locks and drops
//!   the cache.
//!
//! Imports the commit path (`commit.rs`), never the engine (`engine.rs` creates transactions).
//!
//! Invariants: savepoint marks are positions in the change log, in increasing order and never
//! past its end (asserted where marks are set and the log truncated); the event cache holds
//! exactly the encoding of the change log (a change enters both or neither, and a rollback
//! to a savepoint truncates both to the savepoint's positions); the row state is derived
//! from the change log alone (rebuilt after every truncation); once a deadlock aborted the
//! transaction, every call fails with 1213 (`check_active`).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use onelog_binlog::Value;
use onelog_log::CommitReceipt;

use crate::catalog::{IndexDef, TableDef, TableId};
use crate::commit::Committer;
use crate::error::EngineError;
use crate::event_cache::{CacheMark, EventCache};
use crate::key::{display_values, encode_value_as, prefix_end, KeyBytes};
use crate::lock::{LockError, LockMode, RowKey, TxnId};
use crate::prebuild::{big_change_log, drop_later, Feed};
use crate::semisync::CommitWaiter;
use crate::store::{
    borrowed, encode_range, hidden_key, hidden_row_id, hidden_row_key, index_has_null, index_key,
    pk_key, prefix_range, range_is_empty, row_prefix, ByteRange, IndexRef, KeyRange, Root, Row,
    RowChange, HIDDEN_OWN,
};

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertOutcome {
    /// The AUTO_INCREMENT value generated for the row (`LAST_INSERT_ID()`), if one was.
    pub auto_increment: Option<u64>,
}

/// The transaction's own version of the rows of one table it touched. Keys are `KeyBytes`:
/// a key of up to 22 bytes sits in the map's node, so a search compares keys without reading
/// other memory and an entry allocates nothing of its own.
#[derive(Default, Debug)]
struct TableWrites {
    /// pk bytes -> Some(row) (inserted/updated) or None (deleted).
    rows: BTreeMap<KeyBytes, Option<Arc<Row>>>,
    /// index id -> own entries `index key ++ pk -> index key length` of the present own rows:
    /// of every unique index (each write checks them), and of the other indexes only once
    /// `all_indexes` is set.
    indexes: HashMap<u32, BTreeMap<KeyBytes, u32>>,
    /// The non-unique indexes' entries are in `indexes` and kept in step. Set by the first read
    /// through one of them ([`Transaction::own_index_entries`]), which builds them from
    /// `rows`: a statement that writes many rows and never reads through a secondary index
    /// (`UPDATE t SET k=k+1`) keeps no entries of it.
    all_indexes: bool,
}

/// A transaction. Dropping it without commit rolls it back.
pub struct Transaction {
    core: Arc<Committer>,
    id: TxnId,
    snapshot: Option<Arc<Root>>,
    changes: Vec<RowChange>,
    /// The change log encoded as binlog events, as the changes are made (`event_cache.rs`).
    cache: EventCache,
    /// Name, position in the change log, position in the event cache.
    savepoints: Vec<(String, usize, CacheMark)>,
    writes: HashMap<TableId, TableWrites>,
    /// Generation (`TableData::generation`) of every table written, as first seen.
    generations: HashMap<TableId, u64>,
    aborted: bool,
    finished: bool,
    /// The prebuild of the written tables, fed as changes are made once the change log is big
    /// (`prebuild.rs`); cancelled by a rollback below what it was sent.
    feed: Option<Feed>,
    /// No prebuild thread could be started: do not try again.
    feed_off: bool,
    /// How long a row lock wait may last (`innodb_lock_wait_timeout`); the engine's default
    /// unless [`set_lock_wait_timeout`](Self::set_lock_wait_timeout) changed it.
    lock_wait_timeout: std::time::Duration,
    /// sql_mode `NO_AUTO_VALUE_ON_ZERO`: an inserted 0 in the AUTO_INCREMENT column is stored
    /// as 0 instead of generating a value (only NULL generates).
    zero_is_value: bool,
    /// `SKIP LOCKED`: locking reads leave out rows another transaction holds a conflicting
    /// lock on, without waiting.
    skip_locked: bool,
    /// Next own hidden row id (from `HIDDEN_OWN`) for rows inserted into tables without
    /// primary key.
    next_own_id: u64,
}

/// Sets `buf` to the entry of index `ix` for `row` under storage key `pk` (`index key ++ pk`,
/// the form of `TableWrites::indexes`); returns the index key's length.
fn own_entry(def: &TableDef, ix: &IndexDef, row: &Row, pk: &[u8], buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    index_key(def, ix, row, buf);
    let klen = buf.len() as u32;
    buf.extend_from_slice(pk);
    klen
}

fn pk_lock_key(table: TableId, pk: &[u8]) -> RowKey {
    RowKey::new(table, &[&[0], pk])
}

fn unique_lock_key(table: TableId, index_id: u32, ikey: &[u8]) -> RowKey {
    RowKey::new(table, &[&[1], &index_id.to_be_bytes(), ikey])
}

impl Transaction {
    pub(crate) fn new(core: Arc<Committer>, id: TxnId) -> Self {
        let lock_wait_timeout = core.lock_wait_timeout();
        let cache = EventCache::new(core.cache_stats().limits());
        Transaction {
            cache,
            lock_wait_timeout,
            core,
            id,
            snapshot: None,
            changes: Vec::new(),
            savepoints: Vec::new(),
            writes: HashMap::new(),
            generations: HashMap::new(),
            aborted: false,
            finished: false,
            zero_is_value: false,
            skip_locked: false,
            feed: None,
            feed_off: false,
            next_own_id: HIDDEN_OWN,
        }
    }

    /// `SKIP LOCKED` for the locking reads that follow (until set back): a row another
    /// transaction holds a conflicting lock on is left out at once instead of waited for, as
    /// InnoDB does. Writes (UPDATE, DELETE, INSERT) are not affected.
    pub fn set_skip_locked(&mut self, on: bool) {
        self.skip_locked = on;
    }

    /// Locks `key` for a locking read: with [`set_skip_locked`](Self::set_skip_locked) a lock
    /// that cannot be granted at once answers false (the row is skipped), else as `lock`.
    fn lock_for_read(&mut self, key: &RowKey, mode: LockMode) -> Result<bool, EngineError> {
        if !self.skip_locked {
            return self.lock(key, mode).map(|()| true);
        }
        // A zero timeout never queues: no wait, no deadlock.
        match self
            .core
            .locks()
            .lock(self.id, key, mode, std::time::Duration::ZERO)
        {
            Ok(()) => Ok(true),
            Err(LockError::Timeout) => Ok(false),
            Err(LockError::Deadlock) => {
                self.abort();
                Err(EngineError::Deadlock)
            }
        }
    }

    /// sql_mode `NO_AUTO_VALUE_ON_ZERO` for the statements that follow: an inserted 0 in the
    /// AUTO_INCREMENT column is stored as 0, as MariaDB does (only NULL generates a value).
    pub fn set_no_auto_value_on_zero(&mut self, on: bool) {
        self.zero_is_value = on;
    }

    /// The session's `foreign_key_checks=0` for the changes made from now on: their rows
    /// events carry `NO_FOREIGN_KEY_CHECKS_F`, so a replica applies them unchecked too, as
    /// MariaDB logs them (the checks themselves are the SQL layer's).
    pub fn set_no_foreign_key_checks(&mut self, on: bool) {
        let flags = if on {
            onelog_binlog::event::rows::NO_FOREIGN_KEY_CHECKS_F
        } else {
            0
        };
        self.cache.set_rows_flags(flags);
    }

    /// The transaction's id (its lock owner id).
    pub fn id(&self) -> TxnId {
        self.id
    }

    /// Sets this transaction's row lock wait timeout (a session's `innodb_lock_wait_timeout`).
    pub fn set_lock_wait_timeout(&mut self, timeout: std::time::Duration) {
        self.lock_wait_timeout = timeout;
    }

    /// Number of row changes made so far.
    pub fn changes(&self) -> usize {
        self.changes.len()
    }

    /// The tables the transaction changed rows of, each once, in the order first changed.
    pub fn changed_tables(&self) -> Vec<TableId> {
        let mut out: Vec<TableId> = Vec::new();
        for c in &self.changes {
            let t = c.table();
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    fn check_active(&self) -> Result<(), EngineError> {
        if self.aborted {
            return Err(EngineError::Deadlock);
        }
        Ok(())
    }

    /// READ COMMITTED: the next plain read takes a new read view (the latest committed state),
    /// as InnoDB does at each statement of such a transaction. Own changes stay overlaid.
    pub fn refresh_snapshot(&mut self) {
        self.snapshot = None;
    }

    /// Takes the read view now instead of at the first read (START TRANSACTION WITH
    /// CONSISTENT SNAPSHOT); the LSN of the state it sees.
    pub fn take_snapshot(&mut self) -> onelog_log::Lsn {
        self.read_view().lsn
    }

    /// The read view of plain reads (taken at the first one).
    fn read_view(&mut self) -> Arc<Root> {
        if let Some(s) = &self.snapshot {
            return s.clone();
        }
        let s = self.core.store().current();
        self.snapshot = Some(s.clone());
        s
    }

    fn table_def(&self, root: &Root, table: TableId) -> Result<Arc<TableDef>, EngineError> {
        if let Some(d) = root.catalog.table(table) {
            return Ok(d.clone());
        }
        // A table created after the snapshot is read with the latest definition.
        self.core
            .store()
            .current()
            .catalog
            .table(table)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: String::new(),
                table: format!("#{table}"),
            })
    }

    fn lock(&mut self, key: &RowKey, mode: LockMode) -> Result<(), EngineError> {
        match self
            .core
            .locks()
            .lock(self.id, key, mode, self.lock_wait_timeout)
        {
            Ok(()) => Ok(()),
            Err(LockError::Timeout) => Err(EngineError::LockWaitTimeout),
            Err(LockError::Deadlock) => {
                self.abort();
                Err(EngineError::Deadlock)
            }
        }
    }

    /// Rolls everything back after a deadlock; the transaction stays unusable.
    fn abort(&mut self) {
        self.changes.clear();
        self.cache.clear();
        self.writes.clear();
        self.generations.clear();
        self.savepoints.clear();
        self.feed = None;
        self.aborted = true;
        self.core.locks().release_all(self.id);
    }

    /// Remembers the generation of `table` the transaction's writes are based on.
    fn note_generation(&mut self, root: &Root, table: TableId) {
        let g = root.table(table).map_or(0, |t| t.generation);
        self.generations.entry(table).or_insert(g);
    }

    /// Coerces the primary key values and encodes them. For a table without primary key
    /// `pk` is the whole row and the result its [`row_prefix`] (no row's key: resolve it with
    /// [`first_identical`](Self::first_identical)).
    fn encode_pk(def: &TableDef, pk: &[Value]) -> Result<Vec<u8>, EngineError> {
        if hidden_key(def) {
            if pk.len() != def.columns.len() {
                return Err(EngineError::WrongValueCount {
                    expected: def.columns.len(),
                    got: pk.len(),
                });
            }
            let mut row = Vec::with_capacity(pk.len());
            for (v, col) in pk.iter().zip(&def.columns) {
                row.push(col.ty.coerce(&col.name, v.clone())?);
            }
            return Ok(row_prefix(def, &row));
        }
        if pk.len() != def.primary_key.len() {
            return Err(EngineError::WrongValueCount {
                expected: def.primary_key.len(),
                got: pk.len(),
            });
        }
        let mut out = Vec::with_capacity(16);
        for (v, &c) in pk.iter().zip(&def.primary_key) {
            let col = &def.columns[c];
            let v = col.ty.coerce(&col.name, v.clone())?;
            if v == Value::Null {
                return Err(EngineError::BadNull {
                    column: col.name.clone(),
                });
            }
            encode_value_as(&mut out, &v, false, col.string_collation());
        }
        Ok(out)
    }

    /// Own state of a row: `Some(Some(row))`, `Some(None)` (deleted) or `None` (untouched).
    fn own(&self, table: TableId, pk: &[u8]) -> Option<Option<Arc<Row>>> {
        self.writes
            .get(&table)
            .and_then(|w| w.rows.get(pk).cloned())
    }

    /// The key of the first row with `prefix` (a table without primary key) this transaction
    /// sees in `root` overlaid with its own changes; `prefix` itself (no row's key) when none.
    fn first_identical(
        &self,
        root: &Root,
        def: &TableDef,
        prefix: Vec<u8>,
    ) -> Result<Vec<u8>, EngineError> {
        if !hidden_key(def) {
            return Ok(prefix);
        }
        let range = prefix_range(&prefix);
        let own = self.writes.get(&def.id);
        let mut committed = None;
        for item in root.scan_pk(def.id, &range) {
            let (k, _) = item?;
            if !matches!(own.and_then(|w| w.rows.get(k.as_slice())), Some(None)) {
                committed = Some(k.to_vec());
                break;
            }
        }
        let owned = own.and_then(|w| {
            w.rows
                .range::<[u8], _>(borrowed(&range))
                .find(|(_, r)| r.is_some())
                .map(|(k, _)| k.to_vec())
        });
        Ok(match (committed, owned) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(prefix),
        })
    }

    /// Locks the row `pk` names (its primary key values; a table without primary key: the
    /// whole row, and the first identical row is taken, again if it went while waiting) and
    /// returns its key and the latest root read after the lock.
    fn lock_row(
        &mut self,
        def: &TableDef,
        pk: &[Value],
    ) -> Result<(Vec<u8>, Arc<Root>), EngineError> {
        let key = Self::encode_pk(def, pk)?;
        if !hidden_key(def) {
            self.lock(&pk_lock_key(def.id, &key), LockMode::Exclusive)?;
            return Ok((key, self.core.store().current()));
        }
        for _ in 0..8 {
            let latest = self.core.store().current();
            let k = self.first_identical(&latest, def, key.clone())?;
            if k.len() == key.len() {
                return Ok((k, latest)); // none
            }
            self.lock(&pk_lock_key(def.id, &k), LockMode::Exclusive)?;
            let latest = self.core.store().current();
            if self.visible(&latest, def.id, &k)?.is_some() {
                return Ok((k, latest));
            }
        }
        Ok((key, self.core.store().current()))
    }

    fn visible(
        &self,
        root: &Root,
        table: TableId,
        pk: &[u8],
    ) -> Result<Option<Arc<Row>>, EngineError> {
        match self.own(table, pk) {
            Some(own) => Ok(own),
            None => root.get(table, pk),
        }
    }

    /// Snapshot read of the row with primary key `pk`.
    pub fn get(&mut self, table: TableId, pk: &[Value]) -> Result<Option<Vec<Value>>, EngineError> {
        Ok(self.get_shared(table, pk)?.map(|r| (*r).clone()))
    }

    /// [`get`](Self::get) without copying the row: the shared, immutable row version.
    pub fn get_shared(
        &mut self,
        table: TableId,
        pk: &[Value],
    ) -> Result<Option<Arc<Row>>, EngineError> {
        self.check_active()?;
        let root = self.read_view();
        let def = self.table_def(&root, table)?;
        let key = Self::encode_pk(&def, pk)?;
        let key = self.first_identical(&root, &def, key)?;
        self.visible(&root, table, &key)
    }

    /// Locking read (`SELECT ... FOR UPDATE`): exclusive lock, latest committed version.
    pub fn get_for_update(
        &mut self,
        table: TableId,
        pk: &[Value],
    ) -> Result<Option<Vec<Value>>, EngineError> {
        self.check_active()?;
        let latest = self.core.store().current();
        let def = self.table_def(&latest, table)?;
        let key = Self::encode_pk(&def, pk)?;
        let key = self.first_identical(&latest, &def, key)?;
        if !self.lock_for_read(&pk_lock_key(table, &key), LockMode::Exclusive)? {
            return Ok(None);
        }
        let latest = self.core.store().current();
        Ok(self.visible(&latest, table, &key)?.map(|r| (*r).clone()))
    }

    /// Rows of `table` whose `index` key is in `range`, in index order (ties by primary key).
    /// `lock: None` is a snapshot read; `Some(mode)` locks each returned row and reads the
    /// latest committed versions (no gap locks).
    pub fn scan(
        &mut self,
        table: TableId,
        index: IndexRef,
        range: KeyRange,
        lock: Option<LockMode>,
    ) -> Result<Vec<Vec<Value>>, EngineError> {
        let mut out = Vec::new();
        self.scan_ranges_with(table, &index, std::slice::from_ref(&range), lock, |row| {
            out.push(row.to_vec());
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Visits the rows [`scan`](Self::scan) would return for `range`, without copying them:
    /// `f` sees each row borrowed and may stop the scan early with `ControlFlow::Break`.
    pub fn scan_with<F>(
        &mut self,
        table: TableId,
        index: &IndexRef,
        range: &KeyRange,
        lock: Option<LockMode>,
        f: F,
    ) -> Result<(), EngineError>
    where
        F: FnMut(&[Value]) -> ControlFlow<()>,
    {
        self.scan_ranges_with(table, index, std::slice::from_ref(range), lock, f)
    }

    /// Visits the rows of `table` whose `index` key is in at least one of `ranges` (which may
    /// overlap, come in any order, or be empty), each row once, in index order (ties by primary
    /// key). Read semantics as [`scan`](Self::scan): `lock: None` reads the snapshot overlaid
    /// with own changes; `Some(mode)` locks every row in the ranges (before the first visit)
    /// and reads the latest committed versions. `f` may stop early with `ControlFlow::Break`
    /// (the rows of a locking scan are locked all the same).
    pub fn scan_ranges_with<F>(
        &mut self,
        table: TableId,
        index: &IndexRef,
        ranges: &[KeyRange],
        lock: Option<LockMode>,
        mut f: F,
    ) -> Result<(), EngineError>
    where
        F: FnMut(&[Value]) -> ControlFlow<()>,
    {
        self.check_active()?;
        let root = match lock {
            None => self.read_view(),
            Some(_) => self.core.store().current(),
        };
        let def = self.table_def(&root, table)?;
        let ix: Option<&IndexDef> = match index {
            IndexRef::Primary => None,
            IndexRef::Secondary(name) => {
                Some(def.index(name).ok_or_else(|| EngineError::NoSuchIndex {
                    index: name.clone(),
                })?)
            }
        };
        let cols: &[usize] = ix.map_or(&def.primary_key, |i| &i.columns);
        let mut brs = Vec::with_capacity(ranges.len());
        for r in ranges {
            let br = encode_range(&def, cols, ix.is_some(), r)?;
            if !range_is_empty(&br) {
                brs.push(br);
            }
        }
        let brs = merge_ranges(brs);
        if ix.is_some_and(|ix| !ix.unique) {
            self.own_index_entries(&def);
        }
        if lock.is_none() && !self.writes.contains_key(&table) {
            // Fast path: a snapshot read of a table this transaction did not change.
            return visit_in_place(&root, table, ix, &brs, f);
        }
        let hits = match lock {
            None => self.collect_ranges(&root, &def, ix, &brs)?,
            Some(mode) => self.lock_ranges(&root, &def, ix, &brs, mode)?,
        };
        for (_, _, row) in &hits {
            if f(row).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// The rows of a locking scan ([`collect_ranges`](Self::collect_ranges) of the latest
    /// state), every one locked in `mode`: lock what the latest state holds; if the table
    /// changed meanwhile, re-read under the locks (rows may have changed or appeared) until
    /// every row returned is locked.
    #[allow(clippy::type_complexity)]
    fn lock_ranges(
        &mut self,
        root: &Root,
        def: &TableDef,
        ix: Option<&IndexDef>,
        brs: &[ByteRange],
        mode: LockMode,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>, Arc<Row>)>, EngineError> {
        let mut hits = self.collect_ranges(root, def, ix, brs)?;
        // SKIP LOCKED: rows whose lock was refused, left out.
        let mut skipped: HashSet<Vec<u8>> = HashSet::new();
        for (_, pk, _) in &hits {
            if !self.lock_for_read(&pk_lock_key(def.id, pk), mode)? {
                skipped.insert(pk.clone());
            }
        }
        // Nothing committed to the table while the locks were taken: the rows read are the
        // latest, all locked or skipped (no need to read the ranges again, as below).
        let latest = self.core.store().current();
        let unchanged = match (root.table(def.id), latest.table(def.id)) {
            (Some(a), Some(b)) => a.same_version(b),
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            if !skipped.is_empty() {
                hits.retain(|(_, pk, _)| !skipped.contains(pk));
            }
            return Ok(hits);
        }
        let mut locked: HashSet<Vec<u8>> = hits
            .iter()
            .map(|(_, pk, _)| pk.clone())
            .filter(|pk| !skipped.contains(pk))
            .collect();
        hits = self.collect_ranges(&latest, def, ix, brs)?;
        loop {
            let mut fresh = false;
            for (_, pk, _) in &hits {
                if !locked.contains(pk) && !skipped.contains(pk) {
                    if self.lock_for_read(&pk_lock_key(def.id, pk), mode)? {
                        locked.insert(pk.clone());
                        fresh = true;
                    } else {
                        skipped.insert(pk.clone());
                    }
                }
            }
            let latest = self.core.store().current();
            hits = self.collect_ranges(&latest, def, ix, brs)?;
            if !skipped.is_empty() {
                hits.retain(|(_, pk, _)| !skipped.contains(pk));
            }
            if !fresh && hits.iter().all(|(_, pk, _)| locked.contains(pk)) {
                return Ok(hits);
            }
        }
    }

    /// `(sort key, pk, row)` of the rows in the disjoint, ordered byte ranges `brs`, base root
    /// overlaid with own changes, in index order. The sort key is the index entry; for a
    /// primary key scan it is empty (the pk is the order).
    #[allow(clippy::type_complexity)]
    fn collect_ranges(
        &self,
        root: &Root,
        def: &TableDef,
        ix: Option<&IndexDef>,
        brs: &[ByteRange],
    ) -> Result<Vec<(Vec<u8>, Vec<u8>, Arc<Row>)>, EngineError> {
        let own = self.writes.get(&def.id);
        let mut out: Vec<(Vec<u8>, Vec<u8>, Arc<Row>)> = Vec::new();
        for br in brs {
            let from = out.len();
            match ix {
                None => {
                    for item in root.scan_pk(def.id, br) {
                        let (pk, row) = item?;
                        if own.is_some_and(|w| w.rows.contains_key(pk.as_slice())) {
                            continue;
                        }
                        out.push((Vec::new(), pk.to_vec(), row));
                    }
                    if let Some(w) = own {
                        for (pk, row) in w.rows.range::<[u8], _>(borrowed(br)) {
                            if let Some(row) = row {
                                out.push((Vec::new(), pk.to_vec(), row.clone()));
                            }
                        }
                    }
                }
                Some(ix) => {
                    for item in root.scan_index(def.id, ix.id, br) {
                        let (entry, e) = item?;
                        let pk = &entry[e.klen as usize..];
                        if own.is_some_and(|w| w.rows.contains_key(pk)) {
                            continue;
                        }
                        out.push((entry.to_vec(), pk.to_vec(), e.row));
                    }
                    if let Some(entries) = own.and_then(|w| w.indexes.get(&ix.id)) {
                        for (entry, klen) in entries.range::<[u8], _>(borrowed(br)) {
                            let pk = &entry[*klen as usize..];
                            if let Some(Some(row)) = own.and_then(|w| w.rows.get(pk)) {
                                out.push((entry.to_vec(), pk.to_vec(), row.clone()));
                            }
                        }
                    }
                }
            }
            // The sort key of a primary key scan is the key itself (left empty, not copied).
            match ix {
                None => out[from..].sort_by(|a, b| a.1.cmp(&b.1)),
                Some(_) => out[from..].sort_by(|a, b| a.0.cmp(&b.0)),
            }
        }
        Ok(out)
    }

    /// Coerces a full row to the table's types, fills AUTO_INCREMENT, checks NOT NULL.
    fn prepare_row(
        &self,
        def: &TableDef,
        row: Vec<Value>,
        insert: bool,
    ) -> Result<(Row, Option<u64>), EngineError> {
        if row.len() != def.columns.len() {
            return Err(EngineError::WrongValueCount {
                expected: def.columns.len(),
                got: row.len(),
            });
        }
        let mut out = Vec::with_capacity(row.len());
        let mut generated = None;
        for (i, (v, col)) in row.into_iter().zip(&def.columns).enumerate() {
            let mut v = col.ty.coerce(&col.name, v)?;
            if def.auto_increment == Some(i) {
                let explicit = match v {
                    Value::Int(n) if n > 0 => Some(n as u64),
                    Value::UInt(n) if n > 0 => Some(n),
                    _ => None,
                };
                let zero_kept = self.zero_is_value && matches!(v, Value::Int(0) | Value::UInt(0));
                match explicit {
                    Some(n) => self.core.observe_auto_inc(def.id, n),
                    None if insert && !zero_kept => {
                        let n = self.core.next_auto_inc(def.id);
                        v = col.ty.coerce(&col.name, Value::UInt(n))?;
                        generated = Some(n);
                    }
                    None => {}
                }
            }
            if v == Value::Null && !col.nullable {
                return Err(EngineError::BadNull {
                    column: col.name.clone(),
                });
            }
            out.push(v);
        }
        Ok((out, generated))
    }

    fn duplicate_pk(def: &TableDef, row: &Row) -> EngineError {
        let vals: Vec<&Value> = def.primary_key.iter().map(|&c| &row[c]).collect();
        EngineError::DuplicateKey {
            entry: display_values(&vals),
            key: "PRIMARY".into(),
        }
    }

    /// Locks and checks every unique index value of `row` that `old` (the row's previous
    /// version, if any) did not already have.
    fn check_unique(
        &mut self,
        def: &TableDef,
        row: &Row,
        pk: &[u8],
        old: Option<&Row>,
    ) -> Result<(), EngineError> {
        for ix in def.indexes.iter().filter(|i| i.unique) {
            if index_has_null(ix, row) {
                continue;
            }
            let mut ikey = Vec::with_capacity(32);
            index_key(def, ix, row, &mut ikey);
            if let Some(old) = old {
                let mut okey = Vec::with_capacity(32);
                index_key(def, ix, old, &mut okey);
                if okey == ikey {
                    continue;
                }
            }
            self.lock(&unique_lock_key(def.id, ix.id, &ikey), LockMode::Exclusive)?;
            let latest = self.core.store().current();
            let end = prefix_end(&ikey).map_or(Bound::Unbounded, Bound::Excluded);
            let range = (Bound::Included(ikey.clone()), end);
            let own = self.writes.get(&def.id);
            let mut dup = false;
            for item in latest.scan_index(def.id, ix.id, &range) {
                let (entry, e) = item?;
                let epk = &entry[e.klen as usize..];
                if epk != pk && !own.is_some_and(|w| w.rows.contains_key(epk)) {
                    dup = true;
                    break;
                }
            }
            if !dup {
                if let Some(entries) = own.and_then(|w| w.indexes.get(&ix.id)) {
                    dup = entries
                        .range::<[u8], _>(borrowed(&range))
                        .any(|(entry, klen)| &entry[*klen as usize..] != pk);
                }
            }
            if dup {
                let vals: Vec<&Value> = ix.columns.iter().map(|&c| &row[c]).collect();
                return Err(EngineError::DuplicateKey {
                    entry: display_values(&vals),
                    key: ix.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Locks the unique index values `row` holds (before deleting or changing it), so an
    /// insert of the same value waits for this transaction.
    fn lock_unique_values(&mut self, def: &TableDef, row: &Row) -> Result<(), EngineError> {
        for ix in def.indexes.iter().filter(|i| i.unique) {
            if index_has_null(ix, row) {
                continue;
            }
            let mut ikey = Vec::with_capacity(32);
            index_key(def, ix, row, &mut ikey);
            self.lock(&unique_lock_key(def.id, ix.id, &ikey), LockMode::Exclusive)?;
        }
        Ok(())
    }

    /// Inserts a full row (one value per column, in column order).
    pub fn insert(
        &mut self,
        table: TableId,
        row: Vec<Value>,
    ) -> Result<InsertOutcome, EngineError> {
        self.check_active()?;
        let latest = self.core.store().current();
        let def = self.table_def(&latest, table)?;
        let (row, generated) = self.prepare_row(&def, row, true)?;
        let pk = if hidden_key(&def) {
            // A new own row id: no other transaction can hold or see it.
            self.next_own_id += 1;
            let pk = hidden_row_key(row_prefix(&def, &row), self.next_own_id - 1);
            self.note_generation(&self.core.store().current(), table);
            pk
        } else {
            let pk = pk_key(&def, &row);
            self.lock(&pk_lock_key(table, &pk), LockMode::Exclusive)?;
            let latest = self.core.store().current();
            self.note_generation(&latest, table);
            if self.visible(&latest, table, &pk)?.is_some() {
                return Err(Self::duplicate_pk(&def, &row));
            }
            pk
        };
        self.check_unique(&def, &row, &pk, None)?;
        let row = Arc::new(row);
        self.record(
            &def,
            RowChange::Insert {
                table,
                row: row.clone(),
            },
        )?;
        self.set_own(&def, pk, Some(row));
        Ok(InsertOutcome {
            auto_increment: generated,
        })
    }

    /// Replaces the row with primary key `pk` by `new_row` (full row; the key may change).
    /// `Ok(false)` when there is no such row. An update that changes nothing is not logged.
    pub fn update(
        &mut self,
        table: TableId,
        pk: &[Value],
        new_row: Vec<Value>,
    ) -> Result<bool, EngineError> {
        self.check_active()?;
        let latest = self.core.store().current();
        let def = self.table_def(&latest, table)?;
        let (key, latest) = self.lock_row(&def, pk)?;
        self.note_generation(&latest, table);
        let Some(before) = self.visible(&latest, table, &key)? else {
            return Ok(false);
        };
        let (after, _) = self.prepare_row(&def, new_row, false)?;
        if *before == after {
            return Ok(true);
        }
        let hidden = hidden_key(&def);
        let new_key = match hidden {
            // The row keeps its id: no other row can have this key.
            true => hidden_row_key(row_prefix(&def, &after), hidden_row_id(&key)),
            false => pk_key(&def, &after),
        };
        if new_key != key && !hidden {
            self.lock(&pk_lock_key(table, &new_key), LockMode::Exclusive)?;
            let latest = self.core.store().current();
            if self.visible(&latest, table, &new_key)?.is_some() {
                return Err(Self::duplicate_pk(&def, &after));
            }
        }
        self.lock_unique_values(&def, &before)?;
        let pk_same = new_key == key;
        // A unique value the row keeps (even under a new primary key) cannot conflict.
        self.check_unique(&def, &after, &new_key, Some(&before))?;
        let after = Arc::new(after);
        self.record(
            &def,
            RowChange::Update {
                table,
                before,
                after: after.clone(),
            },
        )?;
        if !pk_same {
            self.set_own(&def, key, None);
        }
        self.set_own(&def, new_key, Some(after));
        Ok(true)
    }

    /// Deletes the row with primary key `pk`; `Ok(false)` when there is none.
    pub fn delete(&mut self, table: TableId, pk: &[Value]) -> Result<bool, EngineError> {
        self.check_active()?;
        let latest = self.core.store().current();
        let def = self.table_def(&latest, table)?;
        let (key, latest) = self.lock_row(&def, pk)?;
        self.note_generation(&latest, table);
        let Some(before) = self.visible(&latest, table, &key)? else {
            return Ok(false);
        };
        self.lock_unique_values(&def, &before)?;
        self.record(&def, RowChange::Delete { table, before })?;
        self.set_own(&def, key, None);
        Ok(true)
    }

    /// Appends `change` (to `def`'s table) to the change log and encodes it into the event
    /// cache; 1197 (nothing recorded) when the cache would exceed `max_binlog_cache_size`.
    fn record(&mut self, def: &TableDef, change: RowChange) -> Result<(), EngineError> {
        let core = &self.core;
        self.cache.push(
            def,
            core.row_metadata(),
            &change,
            &|| core.stamp(),
            core.cache_stats(),
        )?;
        self.changes.push(change);
        self.feed_prebuild();
        Ok(())
    }

    /// Sends new changes to the prebuild, starting it once the change log is big.
    fn feed_prebuild(&mut self) {
        match &mut self.feed {
            Some(f) => f.feed(&self.changes),
            None if big_change_log(self.changes.len()) && !self.feed_off => {
                self.feed = Feed::start(self.core.store().current());
                self.feed_off = self.feed.is_none();
                if let Some(f) = &mut self.feed {
                    f.feed(&self.changes);
                }
            }
            None => {}
        }
    }

    /// Sets the own state of one row, keeping the own index entries in step.
    fn set_own(&mut self, def: &TableDef, pk: Vec<u8>, row: Option<Arc<Row>>) {
        let w = self.writes.entry(def.id).or_default();
        let prev = w.rows.insert(KeyBytes::from(&pk[..]), row.clone());
        if def.indexes.is_empty() {
            return;
        }
        let mut buf = Vec::with_capacity(32);
        let all = w.all_indexes;
        for ix in def.indexes.iter().filter(|ix| ix.unique || all) {
            let entries = w.indexes.entry(ix.id).or_default();
            if let Some(Some(prev)) = &prev {
                own_entry(def, ix, prev, &pk, &mut buf);
                entries.remove(&buf[..]);
            }
            if let Some(row) = &row {
                let klen = own_entry(def, ix, row, &pk, &mut buf);
                entries.insert(KeyBytes::from(&buf[..]), klen);
            }
        }
    }

    /// Makes the own entries of every index of `def`'s table kept (`TableWrites::all_indexes`),
    /// building those of the non-unique indexes from the own rows the first time.
    fn own_index_entries(&mut self, def: &TableDef) {
        let Some(w) = self.writes.get_mut(&def.id) else {
            return;
        };
        if w.all_indexes {
            return;
        }
        let mut buf = Vec::with_capacity(32);
        for ix in def.indexes.iter().filter(|ix| !ix.unique) {
            let entries = w
                .rows
                .iter()
                .filter_map(|(pk, row)| Some((pk, row.as_ref()?)))
                .map(|(pk, row)| {
                    let klen = own_entry(def, ix, row, pk, &mut buf);
                    (KeyBytes::from(&buf[..]), klen)
                })
                .collect();
            w.indexes.insert(ix.id, entries);
        }
        w.all_indexes = true;
    }

    /// [`rebuild_state`](Self::rebuild_state) of one change to a table without primary key:
    /// the first identical row the transaction sees is the one changed (identical rows are
    /// interchangeable), an insert takes a new own id.
    fn replay_hidden(&mut self, def: &TableDef, c: &RowChange) -> Result<(), EngineError> {
        let latest = self.core.store().current();
        let find = |t: &Self, row: &Row| t.first_identical(&latest, def, row_prefix(def, row));
        match c {
            RowChange::Insert { row, .. } => {
                self.next_own_id += 1;
                let key = hidden_row_key(row_prefix(def, row), self.next_own_id - 1);
                self.set_own(def, key, Some(row.clone()));
            }
            RowChange::Update { before, after, .. } => {
                let old = find(self, before)?;
                let new = hidden_row_key(row_prefix(def, after), hidden_row_id(&old));
                self.set_own(def, old, None);
                self.set_own(def, new, Some(after.clone()));
            }
            RowChange::Delete { before, .. } => {
                let old = find(self, before)?;
                self.set_own(def, old, None);
            }
        }
        Ok(())
    }

    /// Rebuilds the row state from the change log (after a rollback to a savepoint).
    /// A failed read leaves the state partial: the caller aborts the transaction.
    fn rebuild_state(&mut self) -> Result<(), EngineError> {
        self.writes.clear();
        let catalog = self.core.store().current().catalog.clone();
        let changes = std::mem::take(&mut self.changes);
        let mut result = Ok(());
        for c in &changes {
            let Some(def) = catalog.table(c.table()).cloned() else {
                continue;
            };
            if hidden_key(&def) {
                result = self.replay_hidden(&def, c);
                if result.is_err() {
                    break;
                }
                continue;
            }
            match c {
                RowChange::Insert { row, .. } => {
                    self.set_own(&def, pk_key(&def, row), Some(row.clone()))
                }
                RowChange::Update { before, after, .. } => {
                    let old = pk_key(&def, before);
                    let new = pk_key(&def, after);
                    if old != new {
                        self.set_own(&def, old, None);
                    }
                    self.set_own(&def, new, Some(after.clone()));
                }
                RowChange::Delete { before, .. } => self.set_own(&def, pk_key(&def, before), None),
            }
        }
        self.changes = changes;
        result
    }

    /// `SAVEPOINT name` (an existing savepoint of that name is replaced).
    pub fn savepoint(&mut self, name: &str) {
        self.savepoints
            .retain(|(n, _, _)| !n.eq_ignore_ascii_case(name));
        self.savepoints
            .push((name.to_string(), self.changes.len(), self.cache.mark()));
        debug_assert!(self.savepoints.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    /// `ROLLBACK TO SAVEPOINT name`: undoes the changes made since; keeps the savepoint and
    /// the locks.
    pub fn rollback_to_savepoint(&mut self, name: &str) -> Result<(), EngineError> {
        self.check_active()?;
        let i = self
            .savepoints
            .iter()
            .rposition(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| EngineError::NoSuchSavepoint {
                name: name.to_string(),
            })?;
        let pos = self.savepoints[i].1;
        let mark = self.savepoints[i].2;
        debug_assert!(
            pos <= self.changes.len(),
            "a savepoint mark past the change log"
        );
        self.savepoints.truncate(i + 1);
        if pos < self.changes.len() {
            if self.feed.as_ref().is_some_and(|f| f.sent() > pos) {
                self.feed = None;
            }
            self.changes.truncate(pos);
            if let Err(e) = self.rebuild_state() {
                self.abort();
                return Err(e);
            }
        }
        if let Err(e) = self.cache.rollback_to(&mark, self.core.cache_stats()) {
            // The cache file failed: the transaction cannot be logged any more.
            self.abort();
            return Err(e);
        }
        Ok(())
    }

    /// `RELEASE SAVEPOINT name`: forgets it and every later savepoint.
    pub fn release_savepoint(&mut self, name: &str) -> Result<(), EngineError> {
        self.check_active()?;
        let i = self
            .savepoints
            .iter()
            .rposition(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| EngineError::NoSuchSavepoint {
                name: name.to_string(),
            })?;
        self.savepoints.truncate(i);
        Ok(())
    }

    /// Commits: logs the change log as one event group and returns once the log acknowledged
    /// it (durable at level 1). The changes are visible to others (and the locks released) as
    /// soon as the group is written, possibly before it is durable — unless semi-sync
    /// `AFTER_SYNC` holds them back until a replica acknowledged them (`semisync.rs`); with
    /// semi-sync enabled the call returns only once acknowledged (or the wait ended: timeout,
    /// no replica). `None` for a transaction that changed nothing.
    pub fn commit(self) -> Result<Option<CommitReceipt>, EngineError> {
        self.commit_interruptible(&|| false)
    }

    /// [`Transaction::commit`] whose semi-sync wait for a replica's ack (if any) ends early,
    /// without an error, once `waiter.interrupted()` returns true (the session was KILLed), as
    /// MariaDB's does, and which tells `waiter` when that wait starts and ends (PROCESSLIST).
    /// The commit itself is not undone. A closure `Fn() -> bool` is a waiter.
    pub fn commit_interruptible(
        mut self,
        waiter: &dyn CommitWaiter,
    ) -> Result<Option<CommitReceipt>, EngineError> {
        self.finished = true;
        if self.aborted {
            return Err(EngineError::Deadlock);
        }
        if self.changes.is_empty() {
            self.core.locks().release_all(self.id);
            return Ok(None);
        }
        let changes = std::mem::take(&mut self.changes);
        let writes = std::mem::take(&mut self.writes);
        if big_change_log(changes.len()) {
            drop_later(writes);
        } else {
            drop(writes);
        }
        let generations = std::mem::take(&mut self.generations);
        let feed = self.feed.take();
        // The paged store's delta budget first (`budget.rs`): the session's timeout, KILL.
        let r = self
            .core
            .wait_for_room(self.lock_wait_timeout, &|| waiter.interrupted())
            .and_then(|()| {
                self.core.commit_changes(
                    self.id,
                    changes,
                    &mut self.cache,
                    &generations,
                    feed,
                    waiter,
                )
            });
        // The sink released the locks when the group was applied (a big transaction's own
        // `finish_commit` did, `commit.rs`); after a failure nothing was applied and the
        // locks go now (release is idempotent).
        self.core.locks().release_all(self.id);
        self.core.cache_stats().note_done(&self.cache);
        r.map(Some)
    }

    /// Rolls back: drops the changes and releases the locks. Nothing was logged.
    pub fn rollback(mut self) {
        self.finish_rollback();
    }

    fn finish_rollback(&mut self) {
        if !self.finished {
            self.finished = true;
            self.core.cache_stats().note_done(&self.cache);
            self.changes.clear();
            self.writes.clear();
            self.feed = None;
            self.core.locks().release_all(self.id);
        }
    }
}

/// Visits the rows of `table` in `brs` (disjoint, ordered) of `root` in place, by the primary
/// key or by index `ix`, until `f` breaks; a failed read ends the visit with its error.
pub(crate) fn visit_in_place<F>(
    root: &Root,
    table: TableId,
    ix: Option<&IndexDef>,
    brs: &[ByteRange],
    mut f: F,
) -> Result<(), EngineError>
where
    F: FnMut(&[Value]) -> ControlFlow<()>,
{
    for br in brs {
        let flow = match ix {
            None => visit(root.scan_pk(table, br), |(_, row)| f(&row)),
            Some(ix) => visit(root.scan_index(table, ix.id, br), |(_, e)| f(&e.row)),
        };
        if flow?.is_break() {
            break;
        }
    }
    Ok(())
}

/// Feeds `items` to `f` until it breaks or an item is a failed read (returned).
fn visit<T>(
    items: impl Iterator<Item = Result<T, EngineError>>,
    mut f: impl FnMut(T) -> ControlFlow<()>,
) -> Result<ControlFlow<()>, EngineError> {
    for item in items {
        if f(item?).is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// Start bounds in order: unbounded first, then by bytes, `Included` before `Excluded`.
fn cmp_start(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => x
            .cmp(y)
            .then_with(|| matches!(a, Bound::Excluded(_)).cmp(&matches!(b, Bound::Excluded(_)))),
    }
}

/// End bounds in order: by bytes, `Excluded` before `Included`, unbounded last.
fn cmp_end(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => x
            .cmp(y)
            .then_with(|| matches!(a, Bound::Included(_)).cmp(&matches!(b, Bound::Included(_)))),
    }
}

/// True when a range ending at `end` and one starting at `start` (not before it) leave no
/// key between them, so their union is one range.
fn touches(end: &Bound<Vec<u8>>, start: &Bound<Vec<u8>>) -> bool {
    match (end, start) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Excluded(e), Bound::Excluded(s)) => s < e,
        (Bound::Excluded(e) | Bound::Included(e), Bound::Included(s))
        | (Bound::Included(e), Bound::Excluded(s)) => s <= e,
    }
}

/// Sorts non-empty byte ranges and merges those that overlap or touch: the result is
/// disjoint and ordered, so scanning it visits every key of the union once, in order.
pub(crate) fn merge_ranges(mut brs: Vec<ByteRange>) -> Vec<ByteRange> {
    if brs.len() < 2 {
        return brs;
    }
    brs.sort_by(|a, b| cmp_start(&a.0, &b.0));
    let mut out: Vec<ByteRange> = Vec::with_capacity(brs.len());
    for r in brs {
        match out.last_mut() {
            Some(cur) if touches(&cur.1, &r.0) => {
                if cmp_end(&r.1, &cur.1) == Ordering::Greater {
                    cur.1 = r.1;
                }
            }
            _ => out.push(r),
        }
    }
    out
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.finish_rollback();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn contains(r: &ByteRange, k: &[u8]) -> bool {
        let lo = match &r.0 {
            Bound::Unbounded => true,
            Bound::Included(a) => k >= a.as_slice(),
            Bound::Excluded(a) => k > a.as_slice(),
        };
        let hi = match &r.1 {
            Bound::Unbounded => true,
            Bound::Included(b) => k <= b.as_slice(),
            Bound::Excluded(b) => k < b.as_slice(),
        };
        lo && hi
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        prop_oneof![
            Just(Bound::Unbounded),
            (0u8..8).prop_map(|b| Bound::Included(vec![b])),
            (0u8..8).prop_map(|b| Bound::Excluded(vec![b])),
        ]
    }

    proptest! {
        /// Merged ranges cover exactly the union of the inputs, are ordered and disjoint.
        #[test]
        fn merged_ranges_are_the_ordered_disjoint_union(
            input in proptest::collection::vec((bound(), bound()), 0..6)
        ) {
            let input: Vec<ByteRange> = input.into_iter().filter(|r| !range_is_empty(r)).collect();
            let merged = merge_ranges(input.clone());
            // Every key of a small universe (one and two bytes, around the bounds).
            let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
            for a in 0u8..9 {
                keys.push(vec![a]);
                keys.push(vec![a, 0]);
                keys.push(vec![a, 255]);
            }
            for k in &keys {
                let want = input.iter().any(|r| contains(r, k));
                let hits = merged.iter().filter(|r| contains(r, k)).count();
                prop_assert_eq!(hits, usize::from(want), "key {:?}", k);
            }
            for w in merged.windows(2) {
                prop_assert!(!touches(&w[0].1, &w[1].0));
                prop_assert_eq!(cmp_start(&w[0].0, &w[1].0), Ordering::Less);
            }
        }
    }
}
