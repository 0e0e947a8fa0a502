//! The MVCC table store's roots: today every row in memory; built to become the in-memory
//! delta over an on-disk base (docs/PAGED_STORE.md, build order step 3).
//!
//! Owns [`Root`] (catalog + every table's delta of rows and secondary index entries + the LSN
//! and GTID state it is consistent at), [`Store`] (the currently published root), [`Snapshot`]
//! (a reader's root), the row-change unit [`RowChange`] that commits, recovery and replicas
//! apply, range types ([`IndexRef`], [`KeyRange`]) and the checkpoint body format of a root.
//!
//! Layout: per table a [`TableData`], its delta: a persistent ordered map `storage key bytes ->
//! Option<Arc<Row>>` (`imbl::OrdMap`, so cloning a root is O(1) and a change copies only a
//! path; keys are [`KeyBytes`], inline when short, so copying a node allocates nothing and a
//! lookup reads one node per level), and per secondary index a map `index key bytes ++ storage
//! key bytes -> Option<IndexEntry>` (non-unique and unique indexes alike): the entry holds the
//! length of the index key part (so a scan cuts the primary key off without decoding) and the
//! row itself (the same `Arc` as the primary map's), so an index scan of the delta needs no
//! primary-key lookup per row. Key bytes are `key.rs`'s memcomparable encoding. `None` is a
//! tombstone: it exists only in a delta with lower layers under it (a frozen delta of a running
//! checkpoint, the base; `table_view.rs`), where it hides their copy. A root with no lower
//! layers (every root the server has today) keeps every row in its deltas and no tombstone.
//! Reads go through [`TableView`] (`Root::view`, `get`, `scan_pk`, `scan_index`, `all_rows`,
//! `row_count`), which merges the layers; they are fallible because the base is on disk.
//!
//! A table without a PRIMARY KEY keys its rows by a hidden key ([`hidden_key`]): the row's
//! [`row_prefix`] (every column, binary, NULL-marked) followed by an 8-byte row id, so rows are
//! found by full-row match (what MariaDB does for such tables in row events) with one range
//! lookup, and identical rows are distinct entries. Committed ids come from the table's
//! `next_row_id` (below `HIDDEN_OWN`); a transaction's own inserts use ids from `HIDDEN_OWN` up
//! until they commit. Ids are not logged or checkpointed: applying a row change finds the
//! first row with the image's prefix (identical rows are interchangeable), and loading a
//! checkpoint numbers the rows again.
//!
//! Invariants:
//! - a published `Root` is never mutated; a commit group is applied to a clone and the clone is
//!   published once ([`Store::publish`]): readers see all of a group or none of it;
//! - in every root, each table's index entries (merged through its layers) are exactly one
//!   entry per row, computed from the row with the root's catalog (DDL that adds an index
//!   builds it in the same root), and that entry's `row` is the row the table holds for its
//!   primary key; each delta changes a row's entries together with the row;
//! - a table's delta has tombstones only when `TableData::lower` is set; a table that DDL
//!   empties or rewrites gets a new storage id and nothing under it;
//! - `Root::lsn` is the end LSN of the last log record applied: replaying the log from there
//!   onto the root gives the newer state (checkpoints rely on it), and `gtid_state` is the GTID
//!   state at that LSN;
//! - `TableData::auto_inc_next` is greater than every AUTO_INCREMENT value in the table's rows
//!   (reset to 1 by TRUNCATE); the engine's non-transactional allocator starts from it;
//! - reads are lock-free apart from cloning the published `Arc<Root>`;
//! - a table without primary key: every key is `row_prefix(row) ++ id` (8 bytes BE) with a
//!   committed id below `next_row_id` and below `HIDDEN_OWN`; an update keeps the id.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

use imbl::OrdMap;
use onelog_binlog::{Gtid, GtidPos, GtidState, Value};
use onelog_log::Lsn;

use crate::alter;
use crate::base::{BaseError, BaseSnapshot};
use crate::base_format::{entry_range, storage_ranges};
use crate::catalog::{Catalog, CatalogChange, ColumnSource, IndexDef, TableDef, TableId};
use crate::encoding::{put_u64, put_u8, put_value, put_var, FormatError, Reader};
use crate::error::EngineError;
use crate::key::{display_values, encode_value, encode_value_as, prefix_end, KeyBytes};
use crate::table_view::{Lower, TableView};

pub(crate) use crate::key::borrowed;
pub use crate::key::{range_is_empty, ByteRange};
pub use crate::table_data::{IndexEntry, Row, TableData};

/// A change to one row, with full images: the unit every path applies.
#[derive(Clone, Debug, PartialEq)]
pub enum RowChange {
    /// Insert (or replace the row with the same primary key).
    Insert { table: TableId, row: Arc<Row> },
    /// Replace the row whose primary key is `before`'s with `after` (the key may change).
    Update {
        table: TableId,
        before: Arc<Row>,
        after: Arc<Row>,
    },
    /// Remove the row whose primary key is `before`'s.
    Delete { table: TableId, before: Arc<Row> },
}

impl RowChange {
    pub fn table(&self) -> TableId {
        match self {
            RowChange::Insert { table, .. }
            | RowChange::Update { table, .. }
            | RowChange::Delete { table, .. } => *table,
        }
    }
}

/// Primary key bytes of `row`; for a table without primary key its [`row_prefix`] (the same
/// for identical rows).
pub fn pk_key(def: &TableDef, row: &[Value]) -> Vec<u8> {
    if hidden_key(def) {
        return row_prefix(def, row);
    }
    let mut out = Vec::with_capacity(16);
    for &c in &def.primary_key {
        let coll = def.columns.get(c).and_then(|col| col.string_collation());
        encode_value_as(&mut out, row.get(c).unwrap_or(&Value::Null), false, coll);
    }
    out
}

/// Whether `def`'s rows are keyed by a hidden key (the table has no PRIMARY KEY; module docs).
#[inline]
pub fn hidden_key(def: &TableDef) -> bool {
    def.primary_key.is_empty()
}

/// First id of a transaction's own (uncommitted) rows of a table without primary key.
pub const HIDDEN_OWN: u64 = 1 << 63;

/// The full-row match prefix of a table without primary key: every column's value, binary
/// (no collation), NULL-marked. Two rows have the same prefix exactly when they are identical.
pub fn row_prefix(def: &TableDef, row: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 8 * def.columns.len());
    for i in 0..def.columns.len() {
        encode_value(&mut out, row.get(i).unwrap_or(&Value::Null), true);
    }
    out
}

/// The hidden key `prefix ++ id`.
pub fn hidden_row_key(mut prefix: Vec<u8>, id: u64) -> Vec<u8> {
    prefix.extend_from_slice(&id.to_be_bytes());
    prefix
}

/// The row id of a hidden key (its last 8 bytes).
pub fn hidden_row_id(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if key.len() >= 8 {
        b.copy_from_slice(&key[key.len() - 8..]);
    }
    u64::from_be_bytes(b)
}

/// The byte range of every key starting with `prefix`.
pub fn prefix_range(prefix: &[u8]) -> ByteRange {
    let end = prefix_end(prefix).map_or(Bound::Unbounded, Bound::Excluded);
    (Bound::Included(prefix.to_vec()), end)
}

/// Index key bytes (without the primary key) of `row` for `index`.
pub fn index_key(def: &TableDef, index: &IndexDef, row: &[Value], out: &mut Vec<u8>) {
    for &c in &index.columns {
        let col = def.columns.get(c);
        let nullable = col.is_some_and(|col| col.nullable);
        let coll = col.and_then(|col| col.string_collation());
        encode_value_as(out, row.get(c).unwrap_or(&Value::Null), nullable, coll);
    }
}

/// True when one of the index's columns is NULL in `row` (a unique index allows duplicates then).
pub fn index_has_null(index: &IndexDef, row: &[Value]) -> bool {
    index
        .columns
        .iter()
        .any(|&c| matches!(row.get(c), None | Some(Value::Null)))
}

/// 1062 for `row`'s values of the unique `index`, which another row has too.
pub(crate) fn duplicate_key(index: &IndexDef, row: &Row) -> EngineError {
    let vals: Vec<&Value> = index.columns.iter().map(|&c| &row[c]).collect();
    EngineError::DuplicateKey {
        entry: display_values(&vals),
        key: index.name.clone(),
    }
}

/// The AUTO_INCREMENT value column `a` of `row` holds (0 for NULL, zero or a negative one).
pub(crate) fn auto_inc_value(row: &[Value], a: usize) -> u64 {
    match row.get(a) {
        Some(Value::Int(i)) if *i > 0 => *i as u64,
        Some(Value::UInt(u)) => *u,
        _ => 0,
    }
}

/// Removes `key` from a delta's map: a tombstone when lower layers may hold it.
fn remove_key<V: Clone>(map: &mut OrdMap<KeyBytes, Option<V>>, key: &[u8], tombstone: bool) {
    if tombstone {
        map.insert(KeyBytes::from(key), None);
    } else {
        map.remove(key);
    }
}

/// Keeps one index's delta entries in step with the row under `pk` going from `old` to `new`
/// (either absent: an insert or a delete) in a table of `def`: the old entry goes (a
/// tombstone when `lower` layers may hold it) and the new one comes, or, when both are the
/// same entry, it points at the new row.
fn move_entry(
    entries: &mut IndexEntries,
    (def, ix, lower): (&TableDef, &IndexDef, bool),
    pk: &[u8],
    old: Option<&Row>,
    new: Option<&Arc<Row>>,
) {
    let entry = |row: &Row| {
        let mut k = Vec::with_capacity(32);
        index_key(def, ix, row, &mut k);
        let klen = k.len() as u32;
        k.extend_from_slice(pk);
        (k, klen)
    };
    let new = new.map(|row| (entry(row), row));
    if let Some(old) = old {
        let (ob, _) = entry(old);
        match &new {
            Some(((nb, _), row)) if *nb == ob => {
                // Same entry: it must point at the new row.
                if let Some(Some(e)) = entries.get_mut(nb.as_slice()) {
                    e.row = Arc::clone(row);
                    return;
                }
            }
            _ => remove_key(entries, &ob, lower),
        }
    }
    if let Some(((nb, klen), row)) = new {
        let row = Arc::clone(row);
        entries.insert(KeyBytes::from(nb), Some(IndexEntry { klen, row }));
    }
}

/// One index's delta entries: `index key ++ pk` -> the entry, or a tombstone.
pub(crate) type IndexEntries = OrdMap<KeyBytes, Option<IndexEntry>>;

/// The entries `index` of `def` (the table's definition, or one with the index added) has for
/// the rows of the delta `t`.
pub(crate) fn entries_of(t: &TableData, def: &TableDef, index: &IndexDef) -> IndexEntries {
    let mut entries = OrdMap::new();
    for (pk, row) in t.rows.iter() {
        let Some(row) = row else { continue };
        let mut k = Vec::with_capacity(32);
        index_key(def, index, row, &mut k);
        let klen = k.len() as u32;
        k.extend_from_slice(pk);
        let row = Arc::clone(row);
        entries.insert(KeyBytes::from(k), Some(IndexEntry { klen, row }));
    }
    entries
}

/// 1062 when two of `entries` (an index's, one per row, in key order) have the same index key
/// without a NULL in it.
pub(crate) fn check_unique_entries(
    entries: &IndexEntries,
    index: &IndexDef,
) -> Result<(), EngineError> {
    let mut prev: Option<&[u8]> = None;
    for (key, entry) in entries.iter() {
        let Some(e) = entry else { continue };
        if index_has_null(index, &e.row) {
            continue;
        }
        let ikey = &key[..e.klen as usize];
        if prev == Some(ikey) {
            return Err(duplicate_key(index, &e.row));
        }
        prev = Some(ikey);
    }
    Ok(())
}

/// Where the data of a DDL change comes from (`Root::apply_change`).
enum Built {
    /// Built from the rows as the change applies.
    Here,
    /// Written into the base already: a new index's entries (`index_build.rs`) or a rewritten
    /// table's rows (`table_rebuild.rs`).
    Below,
    /// A new index's entries, given (`online_index.rs`).
    Entries(IndexEntries),
}

/// Which index a scan walks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexRef {
    Primary,
    /// A secondary index by name (ASCII case-insensitive).
    Secondary(String),
}

/// A range over an index by values of a prefix of its columns (like InnoDB ranges): `start`
/// and `end` hold 0..=n leading column values; `Included(prefix)` takes every key starting with
/// the prefix, `Excluded(prefix)` none of them. NULL sorts before every value (as in InnoDB),
/// so an unbounded start includes NULL keys; SQL's `col < x` is `start: Excluded([NULL])`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRange {
    pub start: Bound<Vec<Value>>,
    pub end: Bound<Vec<Value>>,
}

impl KeyRange {
    /// Every key.
    pub fn all() -> Self {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }
    /// Every key whose leading columns equal `prefix`.
    pub fn prefix(prefix: Vec<Value>) -> Self {
        KeyRange {
            start: Bound::Included(prefix.clone()),
            end: Bound::Included(prefix),
        }
    }
    /// `lo <= key <= hi` on the leading columns.
    pub fn between(lo: Vec<Value>, hi: Vec<Value>) -> Self {
        KeyRange {
            start: Bound::Included(lo),
            end: Bound::Included(hi),
        }
    }
}

/// Encodes a [`KeyRange`] over columns `cols` of `def` into byte bounds (values coerced to
/// the column types first).
pub fn encode_range(
    def: &TableDef,
    cols: &[usize],
    nullable_marks: bool,
    range: &KeyRange,
) -> Result<ByteRange, EngineError> {
    // Encodes a prefix; `true` when it stopped at a NULL in a NOT NULL column: no key holds
    // one, so the bound falls just before every key with the prefix so far.
    let enc = |vals: &Vec<Value>| -> Result<(Vec<u8>, bool), EngineError> {
        if vals.len() > cols.len() {
            return Err(EngineError::WrongValueCount {
                expected: cols.len(),
                got: vals.len(),
            });
        }
        let mut out = Vec::new();
        for (v, &c) in vals.iter().zip(cols) {
            let col = &def.columns[c];
            let v = col.ty.coerce(&col.name, v.clone())?;
            let nullable = nullable_marks && col.nullable;
            if v == Value::Null && !nullable {
                return Ok((out, true));
            }
            encode_value_as(&mut out, &v, nullable, col.string_collation());
        }
        Ok((out, false))
    };
    let empty = (Bound::Excluded(Vec::new()), Bound::Excluded(Vec::new()));
    let start = match &range.start {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(p) => Bound::Included(enc(p)?.0),
        Bound::Excluded(p) => match enc(p)? {
            (k, true) => Bound::Included(k),
            (k, false) => match prefix_end(&k) {
                Some(e) => Bound::Included(e),
                None => return Ok(empty),
            },
        },
    };
    let end = match &range.end {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(p) => match enc(p)? {
            (k, true) => Bound::Excluded(k),
            (k, false) => match prefix_end(&k) {
                Some(e) => Bound::Excluded(e),
                None => Bound::Unbounded,
            },
        },
        Bound::Excluded(p) => Bound::Excluded(enc(p)?.0),
    };
    if let (Bound::Included(a), Bound::Excluded(b)) = (&start, &end) {
        if b.is_empty() || a >= b {
            return Ok(empty);
        }
    }
    Ok((start, end))
}

/// A consistent state of every table at one LSN. Immutable once published.
#[derive(Clone, Debug)]
pub struct Root {
    pub catalog: Arc<Catalog>,
    /// Each table's delta (all of its rows while nothing lies under it).
    pub tables: OrdMap<TableId, TableData>,
    /// End LSN of the last log record applied.
    pub lsn: Lsn,
    /// GTID state at `lsn`.
    pub gtid_state: GtidState,
    /// `@@gtid_slave_pos` at `lsn`: moved by replicated records and SET GLOBAL gtid_slave_pos
    /// (`origin.rs`).
    pub slave_pos: GtidPos,
    /// Number of catalog changes applied since this process loaded the database (in memory
    /// only; see `TableData::generation`).
    pub ddl_seq: u64,
    /// What lies under the deltas (`table_view.rs`); `None`: nothing, every table is whole in
    /// memory (every root today).
    pub(crate) lower: Option<Arc<Lower>>,
    /// The storage id the next table created or rewritten gets (`table_view.rs`).
    pub(crate) next_storage: u64,
    /// Storage ids no table uses any more, and dropped indexes of tables with rows below,
    /// whose records the base may still hold: later checkpoints delete them (`freeze.rs`), a
    /// bounded number of keys at a time.
    pub(crate) retired: Vec<Retired>,
}

/// Records the base may still hold that no table reads any more ([`Root::retired`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retired {
    /// Every record of a storage id (a table dropped, truncated or rewritten).
    Storage(u64),
    /// The entries of a dropped index of a table whose storage id lives on.
    Index { storage: u64, index: u32 },
}

impl Retired {
    /// The base key ranges its records lie in.
    pub fn ranges(&self) -> Vec<ByteRange> {
        match *self {
            Retired::Storage(s) => storage_ranges(s).to_vec(),
            Retired::Index { storage, index } => vec![entry_range(
                storage,
                index,
                &(Bound::Unbounded, Bound::Unbounded),
            )],
        }
    }
}

impl Root {
    /// The empty database at LSN 0.
    pub fn empty() -> Self {
        Root {
            catalog: Arc::new(Catalog::new()),
            tables: OrdMap::new(),
            lsn: 0,
            gtid_state: GtidState::new(),
            slave_pos: GtidPos::new(),
            ddl_seq: 0,
            lower: None,
            next_storage: 1,
            retired: Vec::new(),
        }
    }

    pub fn table_def(&self, id: TableId) -> Option<&Arc<TableDef>> {
        self.catalog.table(id)
    }

    /// The delta of table `id` (its counters; its rows are read through [`Self::view`]).
    pub fn table(&self, id: TableId) -> Option<&TableData> {
        self.tables.get(&id)
    }

    /// Table `id` seen through its layers (None: no such table).
    pub fn view(&self, id: TableId) -> Option<TableView<'_>> {
        self.view_as(self.catalog.table(id)?)
    }

    /// `def`'s table seen through its layers, its rows read as `def`'s (DDL reads the rows
    /// of a table with the definition they were written under).
    fn view_as<'a>(&'a self, def: &'a TableDef) -> Option<TableView<'a>> {
        let t = self.tables.get(&def.id)?;
        Some(TableView::new(def, t, self.lower.as_deref()))
    }

    /// Notes that `old`'s storage id is no longer used: its records in the base are deleted
    /// by later checkpoints (`freeze.rs`). Only a root with lower layers has any.
    fn retire(&mut self, old: Option<TableData>) {
        if let (Some(t), Some(_)) = (old, &self.lower) {
            self.retired.push(Retired::Storage(t.storage));
        }
    }

    /// Gives `def`'s table a new, empty delta under a new storage id (nothing below it) and
    /// retires the one it replaces; returns the new delta.
    fn replace_table(
        &mut self,
        def: &TableDef,
        auto_inc_next: u64,
        generation: u64,
    ) -> &mut TableData {
        let storage = self.new_storage();
        let replaced = self.tables.remove(&def.id);
        self.retire(replaced);
        let data = TableData::empty(def, auto_inc_next, generation, storage);
        self.tables.entry(def.id).or_insert(data)
    }

    /// A new storage id (never one the lower layers hold).
    fn new_storage(&mut self) -> u64 {
        let s = self.next_storage;
        self.next_storage += 1;
        s
    }

    /// The row with primary key bytes `pk`. A failed read of the base is an error (1030),
    /// never a missing row.
    pub fn get(&self, table: TableId, pk: &[u8]) -> Result<Option<Arc<Row>>, EngineError> {
        match self.view(table) {
            Some(v) => Ok(v.get(pk)?),
            None => Ok(None),
        }
    }

    /// Rows of `table` with primary key bytes in `range`, in key order; a failed read is
    /// yielded once and ends the scan.
    pub fn scan_pk<'a>(
        &'a self,
        table: TableId,
        range: &ByteRange,
    ) -> impl Iterator<Item = Result<(KeyBytes, Arc<Row>), EngineError>> + 'a {
        let v = self.view(table);
        v.map(|v| v.scan_pk(range))
            .into_iter()
            .flatten()
            .map(|i| i.map_err(EngineError::from))
    }

    /// Entries `(entry bytes, entry)` of index `index_id` of `table` in `range`, in key order;
    /// a failed read is yielded once and ends the scan.
    pub fn scan_index<'a>(
        &'a self,
        table: TableId,
        index_id: u32,
        range: &ByteRange,
    ) -> impl Iterator<Item = Result<(KeyBytes, IndexEntry), EngineError>> + 'a {
        let v = self.view(table);
        v.map(|v| v.scan_index(index_id, range))
            .into_iter()
            .flatten()
            .map(|i| i.map_err(EngineError::from))
    }

    /// Every row of `table`, in primary key order; a failed read is yielded once and ends it.
    pub fn all_rows(
        &self,
        table: TableId,
    ) -> impl Iterator<Item = Result<Arc<Row>, EngineError>> + '_ {
        let v = self.view(table);
        v.map(|v| v.all_rows())
            .into_iter()
            .flatten()
            .map(|i| i.map_err(EngineError::from))
    }

    /// Number of rows of `table` (exact).
    pub fn row_count(&self, table: TableId) -> u64 {
        self.view(table).map_or(0, |v| v.row_count())
    }

    /// The delta of `def`'s table, created (empty, with a new storage id) when missing.
    fn table_mut(&mut self, def: &TableDef) -> &mut TableData {
        let next = &mut self.next_storage;
        self.tables.entry(def.id).or_insert_with(|| {
            let storage = *next;
            *next += 1;
            TableData::empty(def, 1, 0, storage)
        })
    }

    /// The row the lower layers hold under `pk` when the delta does not hold the key (what a
    /// put or delete there replaces); `None` when the delta holds it or nothing is below.
    fn below(&self, def: &TableDef, pk: &[u8]) -> Result<Option<Arc<Row>>, BaseError> {
        match self.tables.get(&def.id) {
            Some(t) if t.lower && !t.rows.contains_key(pk) => {
                TableView::new(def, t, self.lower.as_deref()).get_below(pk)
            }
            _ => Ok(None),
        }
    }

    /// Puts `row` (insert or replace by primary key; a table without primary key gets a new
    /// row under a new hidden id), keeping the indexes in step.
    pub fn put_row(&mut self, def: &TableDef, row: Arc<Row>) -> Result<(), BaseError> {
        let pk = if hidden_key(def) {
            let t = self.table_mut(def);
            let id = t.next_row_id;
            t.next_row_id += 1;
            debug_assert!(id < HIDDEN_OWN);
            hidden_row_key(row_prefix(def, &row), id)
        } else {
            pk_key(def, &row)
        };
        self.put_row_at(def, pk, row)
    }

    /// The key of the first row of a table without primary key identical to `row`.
    pub fn find_identical(
        &self,
        def: &TableDef,
        row: &[Value],
    ) -> Result<Option<Vec<u8>>, BaseError> {
        let range = prefix_range(&row_prefix(def, row));
        let Some(v) = self.view_as(def) else {
            return Ok(None);
        };
        let first = v.scan_pk(&range).next().transpose()?;
        Ok(first.map(|(k, _)| k.to_vec()))
    }

    /// Puts `row` under the storage key `pk`, keeping the indexes in step.
    fn put_row_at(&mut self, def: &TableDef, pk: Vec<u8>, row: Arc<Row>) -> Result<(), BaseError> {
        let below = self.below(def, &pk)?;
        let t = self.table_mut(def);
        if let Some(a) = def.auto_increment {
            let v = auto_inc_value(&row, a);
            if v >= t.auto_inc_next {
                t.auto_inc_next = v.saturating_add(1);
            }
            debug_assert!(v < t.auto_inc_next || v == u64::MAX);
        }
        let old = match t
            .rows
            .insert(KeyBytes::from(pk.as_slice()), Some(row.clone()))
        {
            Some(replaced) => replaced,
            None => below,
        };
        if old.is_none() {
            t.net_rows += 1;
        }
        if def.indexes.is_empty() {
            return Ok(());
        }
        let lower = t.lower;
        for ix in &def.indexes {
            let entries = t.indexes.entry(ix.id).or_default();
            move_entry(entries, (def, ix, lower), &pk, old.as_deref(), Some(&row));
        }
        debug_assert!(
            t.indexes_in_step(def),
            "indexes of {}",
            def.qualified_name()
        );
        Ok(())
    }

    /// Removes the row with primary key bytes `pk`; returns it.
    pub fn delete_row(&mut self, def: &TableDef, pk: &[u8]) -> Result<Option<Arc<Row>>, BaseError> {
        let below = self.below(def, pk)?;
        let Some(t) = self.tables.get_mut(&def.id) else {
            return Ok(None);
        };
        let lower = t.lower;
        let old = if lower {
            let old = match t.rows.get(pk) {
                Some(held) => held.clone(),
                None => below,
            };
            if old.is_some() {
                t.rows.insert(KeyBytes::from(pk), None);
            }
            old
        } else {
            t.rows.remove(pk).flatten()
        };
        let Some(old) = old else {
            return Ok(None);
        };
        t.net_rows -= 1;
        for ix in &def.indexes {
            if let Some(entries) = t.indexes.get_mut(&ix.id) {
                move_entry(entries, (def, ix, lower), pk, Some(&*old), None);
            }
        }
        debug_assert!(
            t.indexes_in_step(def),
            "indexes of {}",
            def.qualified_name()
        );
        Ok(Some(old))
    }

    /// Applies one row change. Errors (unknown table, missing row for an update/delete, a
    /// failed read of the base) are reported as text for the caller to wrap with the GTID
    /// and LSN.
    pub fn apply_row_change(&mut self, change: &RowChange) -> Result<(), String> {
        let def = self
            .catalog
            .table(change.table())
            .cloned()
            .ok_or_else(|| format!("unknown table id {}", change.table()))?;
        let check = |row: &Row| {
            if row.len() != def.columns.len() {
                Err(format!(
                    "row image of {} has {} columns, table has {}",
                    def.qualified_name(),
                    row.len(),
                    def.columns.len()
                ))
            } else {
                Ok(())
            }
        };
        let read = |e: BaseError| e.to_string();
        let missing = |what: &str| format!("{what} of a missing row in {}", def.qualified_name());
        match change {
            RowChange::Insert { row, .. } => {
                check(row)?;
                self.put_row(&def, row.clone()).map_err(read)?;
            }
            RowChange::Update { before, after, .. } if hidden_key(&def) => {
                check(before)?;
                check(after)?;
                let old = self.find_identical(&def, before).map_err(read)?;
                let old = old.ok_or_else(|| missing("update"))?;
                self.delete_row(&def, &old).map_err(read)?;
                let key = hidden_row_key(row_prefix(&def, after), hidden_row_id(&old));
                self.put_row_at(&def, key, after.clone()).map_err(read)?;
            }
            RowChange::Delete { before, .. } if hidden_key(&def) => {
                check(before)?;
                let old = self.find_identical(&def, before).map_err(read)?;
                let old = old.ok_or_else(|| missing("delete"))?;
                self.delete_row(&def, &old).map_err(read)?;
            }
            RowChange::Update { before, after, .. } => {
                check(before)?;
                check(after)?;
                let old_pk = pk_key(&def, before);
                let new_pk = pk_key(&def, after);
                if old_pk != new_pk {
                    let gone = self.delete_row(&def, &old_pk).map_err(read)?;
                    gone.ok_or_else(|| missing("update"))?;
                } else if self
                    .get(def.id, &old_pk)
                    .map_err(|e| e.to_string())?
                    .is_none()
                {
                    return Err(missing("update"));
                }
                self.put_row(&def, after.clone()).map_err(read)?;
            }
            RowChange::Delete { before, .. } => {
                check(before)?;
                let pk = pk_key(&def, before);
                let gone = self.delete_row(&def, &pk).map_err(read)?;
                gone.ok_or_else(|| missing("delete"))?;
            }
        }
        Ok(())
    }

    /// Makes `old_def`'s table whole in its delta: when rows of it lie in lower layers, its
    /// rows (read as `old_def`'s) move into a new delta under a new storage id. DDL that
    /// builds index entries from every row starts with it, so an index never mixes entries
    /// built now with older layers' entries under a reused index id.
    fn make_whole(&mut self, old_def: &TableDef) -> Result<(), BaseError> {
        let Some(v) = self.view_as(old_def).filter(|v| v.layered()) else {
            return Ok(());
        };
        let rows: Vec<(KeyBytes, Arc<Row>)> = v
            .scan_pk(&(Bound::Unbounded, Bound::Unbounded))
            .collect::<Result<_, _>>()?;
        let Some(old) = self.tables.get(&old_def.id) else {
            return Ok(());
        };
        let (auto_inc_next, generation, next_row_id) =
            (old.auto_inc_next, old.generation, old.next_row_id);
        self.replace_table(old_def, auto_inc_next, generation)
            .next_row_id = next_row_id;
        for (k, row) in rows {
            self.put_row_at(old_def, k.to_vec(), row)?;
        }
        Ok(())
    }

    /// Every row of `def`'s table read as `def`'s, in primary key order.
    fn rows_as(&self, def: &TableDef) -> Result<Vec<Arc<Row>>, BaseError> {
        match self.view_as(def) {
            Some(v) => v.all_rows().collect(),
            None => Ok(Vec::new()),
        }
    }

    /// Builds `index` of `table` (as `catalog` defines the table) from its rows.
    fn build_index(
        &mut self,
        catalog: &Catalog,
        table: TableId,
        index: &IndexDef,
        generation: u64,
    ) -> Result<(), BaseError> {
        if let Some(old_def) = self.catalog.table(table).cloned() {
            self.make_whole(&old_def)?;
        }
        let def = catalog.table(table).cloned();
        if let (Some(def), Some(t)) = (def, self.tables.get_mut(&table)) {
            debug_assert!(!t.lower, "make_whole left lower layers under a table");
            let entries = entries_of(t, &def, index);
            debug_assert_eq!(entries.len(), t.rows.len());
            t.indexes.insert(index.id, entries);
            t.generation = generation;
        }
        Ok(())
    }

    /// Applies a DDL change: new catalog, and the table data it implies.
    pub fn apply_catalog_change(&mut self, change: &CatalogChange) -> Result<(), EngineError> {
        self.apply_change(change, Built::Here)
    }

    /// [`Self::apply_catalog_change`] of a change whose data is already in the base: an index
    /// added (CREATE INDEX, a foreign key's generated key) whose entries `index_build.rs`
    /// wrote under the table's storage id, so the delta gets the index empty (a removal leaves
    /// a tombstone over a base entry) instead of building it from the rows; or a table whose
    /// rows are rewritten (ADD / DROP COLUMN, a copying ALTER TABLE) that `table_rebuild.rs`
    /// wrote whole under [`Self::next_storage`], so the table gets an empty delta over them.
    pub(crate) fn apply_built_below(&mut self, change: &CatalogChange) -> Result<(), EngineError> {
        self.apply_change(change, Built::Below)
    }

    /// [`Self::apply_catalog_change`] of a CREATE INDEX over a table with nothing below its
    /// delta whose entries `online_index.rs` built (from an earlier root's rows, brought up to
    /// this one's).
    pub(crate) fn apply_with_entries(
        &mut self,
        change: &CatalogChange,
        entries: IndexEntries,
    ) -> Result<(), EngineError> {
        self.apply_change(change, Built::Entries(entries))
    }

    /// Keeps `index`'s delta entries of `def`'s table in step with the row under `pk` going
    /// from `old` to `new` (either absent), as a put or delete does for every index: for an
    /// index whose entries were built from an earlier version of the rows (`online_index.rs`).
    pub(crate) fn move_index_entry(
        &mut self,
        (def, index): (&TableDef, &IndexDef),
        pk: &[u8],
        old: Option<&Row>,
        new: Option<&Arc<Row>>,
    ) {
        if let Some(t) = self.tables.get_mut(&def.id) {
            let lower = t.lower;
            let entries = t.indexes.entry(index.id).or_default();
            move_entry(entries, (def, index, lower), pk, old, new);
        }
    }

    /// Drops the delta's entries of each index of `def`'s table that `def` no longer has (a
    /// generated key a new index made redundant); entries the lower layers hold are deleted
    /// by later checkpoints.
    fn keep_defined_indexes(&mut self, def: &TableDef) {
        let Some(t) = self.tables.get_mut(&def.id) else {
            return;
        };
        let gone = t.keep_indexes(|id| def.index_by_id(id).is_some());
        if t.lower {
            let storage = t.storage;
            for index in gone {
                self.retired.push(Retired::Index { storage, index });
            }
        }
    }

    /// A new index's entries: built from the rows, already written into the base by
    /// `index_build.rs` (so the delta gets the index empty), or given.
    fn add_index_data(
        &mut self,
        catalog: &Catalog,
        table: TableId,
        index: &IndexDef,
        generation: u64,
        built: Built,
    ) -> Result<(), BaseError> {
        let given = match built {
            Built::Here => return self.build_index(catalog, table, index, generation),
            Built::Below => OrdMap::new(),
            Built::Entries(entries) => entries,
        };
        if let Some(t) = self.tables.get_mut(&table) {
            t.indexes.insert(index.id, given);
            t.generation = generation;
        }
        Ok(())
    }

    fn apply_change(&mut self, change: &CatalogChange, built: Built) -> Result<(), EngineError> {
        let built_below = matches!(built, Built::Below);
        let catalog = self.catalog.apply(change)?;
        self.ddl_seq += 1;
        let generation = self.ddl_seq;
        match change {
            CatalogChange::CreateDatabase { .. } => {}
            CatalogChange::DropDatabase { .. } => {
                let gone: Vec<TableId> = self
                    .tables
                    .keys()
                    .copied()
                    .filter(|id| catalog.table(*id).is_none())
                    .collect();
                for id in gone {
                    let gone = self.tables.remove(&id);
                    self.retire(gone);
                }
            }
            CatalogChange::CreateTable { table } => {
                // `AUTO_INCREMENT=N` of CREATE TABLE (TRUNCATE starts again at 1, as InnoDB
                // does).
                self.replace_table(table, table.options.auto_increment.max(1), generation);
            }
            CatalogChange::DropTable { id } => {
                let gone = self.tables.remove(id);
                self.retire(gone);
            }
            CatalogChange::DropColumn { table: def, .. }
            | CatalogChange::AddColumn { table: def, .. } => {
                // Every row loses the value, or gets the new column's (last, in no index: keys
                // unchanged); `rewritten_row`.
                if built_below {
                    self.rebuilt_below(def, generation);
                } else {
                    self.rewrite_rows(def, generation, change)?;
                }
            }
            CatalogChange::AlterTable {
                auto_increment,
                sources,
                table: def,
                ..
            } => {
                let old = self.catalog.table(def.id).cloned();
                if built_below {
                    self.rebuilt_below(def, generation);
                } else if let Some(old) = old {
                    self.alter_rows(&old, (def, sources), change, generation)?;
                }
                if let Some(n) = auto_increment {
                    let next = self.auto_increment_after(def, *n)?;
                    if let Some(t) = self.tables.get_mut(&def.id) {
                        t.auto_inc_next = next;
                    }
                }
            }
            CatalogChange::RenameTables { renames } => {
                // Same rows; a new generation, so a transaction that wrote the table under
                // its old name fails its commit (1412) instead of logging rows for that name.
                for (id, ..) in renames {
                    if let Some(t) = self.tables.get_mut(id) {
                        t.generation = generation;
                    }
                }
            }
            CatalogChange::TruncateTable { id } => {
                if let Some(def) = catalog.table(*id) {
                    self.replace_table(def, 1, generation);
                }
            }
            CatalogChange::AlterConstraints { index, table } => {
                // Same rows (and the new index built from them); a transaction that wrote
                // them unchecked by the new constraints fails its commit (1412).
                if let Some(index) = index {
                    self.add_index_data(&catalog, table.id, index, generation, built)?;
                    // A generated key the new one serves went with it.
                    self.keep_defined_indexes(table);
                }
                if let Some(t) = self.tables.get_mut(&table.id) {
                    t.generation = generation;
                }
            }
            CatalogChange::CreateIndex { table, index } => {
                self.add_index_data(&catalog, *table, index, generation, built)?;
                // The generated keys the new index made redundant went with it.
                if let Some(def) = catalog.table(*table) {
                    self.keep_defined_indexes(def);
                }
            }
            CatalogChange::DropIndex { table, index_id } => {
                if let Some(t) = self.tables.get_mut(table) {
                    t.indexes.remove(index_id);
                    t.generation = generation;
                    // Its entries in lower layers go with later checkpoints.
                    if t.lower {
                        let storage = t.storage;
                        self.retired.push(Retired::Index {
                            storage,
                            index: *index_id,
                        });
                    }
                }
            }
            CatalogChange::CreateAccount { .. }
            | CatalogChange::DropAccount { .. }
            | CatalogChange::AlterAccount { .. }
            | CatalogChange::ReplaceAccounts { .. } => {}
            // Views have no rows.
            CatalogChange::CreateView { .. }
            | CatalogChange::DropViews { .. }
            | CatalogChange::RenameViews { .. } => {}
        }
        self.catalog = Arc::new(catalog);
        Ok(())
    }

    /// Every table's rows in primary key order, keyed `db.table`.
    pub fn try_dump(&self) -> Result<BTreeMap<String, Vec<Vec<Value>>>, BaseError> {
        let mut out = BTreeMap::new();
        for def in self.catalog.tables() {
            let rows = self.rows_as(def)?;
            out.insert(
                def.qualified_name(),
                rows.iter().map(|r| (**r).clone()).collect(),
            );
        }
        Ok(out)
    }

    /// [`Self::try_dump`] for tests, which have no base that can fail: panics on a failed
    /// read of the base.
    pub fn dump(&self) -> BTreeMap<String, Vec<Vec<Value>>> {
        self.try_dump().unwrap_or_else(|e| panic!("dump: {e}"))
    }

    /// The checkpoint body: format byte, catalog, then per table its id, AUTO_INCREMENT
    /// counter, row count and rows (values in `encoding.rs`'s compact form). Indexes are not
    /// stored; loading rebuilds them. Format 2 adds `gtid_slave_pos` (count, then domain,
    /// server, seq per GTID) after the catalog.
    pub fn encode_checkpoint(&self) -> Result<Vec<u8>, BaseError> {
        let mut body = Vec::new();
        self.encode_checkpoint_with::<BaseError>(usize::MAX, &mut |p| {
            body.extend_from_slice(p);
            Ok(())
        })?;
        Ok(body)
    }

    /// [`Self::encode_checkpoint`]'s bytes handed to `out` in consecutive parts of about
    /// `part` bytes (a part ends after the first row that takes it to `part` or more), encoded
    /// into one reused buffer; stops at `out`'s first error. The checkpoint writer streams a
    /// body this way (`checkpoint::write_checkpoint_streamed`): one buffer grown to the whole
    /// body by doubling cost more than encoding it, in copies and freshly zeroed pages, during
    /// a bulk load (issue 14 part 4). A failed read of the base stops it too.
    pub fn encode_checkpoint_with<E: From<BaseError>>(
        &self,
        part: usize,
        out: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        // Room for the part and most rows that cross its end.
        let mut buf = Vec::with_capacity(part.saturating_add(part / 8).min(2 * CHECKPOINT_PART));
        put_u8(&mut buf, CHECKPOINT_FORMAT);
        self.catalog.encode(&mut buf);
        encode_slave_pos(&self.slave_pos, &mut buf);
        let views: Vec<(TableId, u64, TableView)> = self
            .tables
            .iter()
            .filter_map(|(id, t)| Some((*id, t.auto_inc_next, self.view(*id)?)))
            .collect();
        debug_assert_eq!(views.len(), self.tables.len(), "a table without definition");
        put_var(&mut buf, views.len() as u64);
        for (id, auto_inc_next, view) in views {
            put_u64(&mut buf, id);
            put_u64(&mut buf, auto_inc_next);
            put_var(&mut buf, view.row_count());
            for row in view.all_rows() {
                let row = row?;
                put_var(&mut buf, row.len() as u64);
                for v in row.iter() {
                    put_value(&mut buf, v);
                }
                if buf.len() >= part {
                    out(&buf)?;
                    buf.clear();
                }
            }
        }
        if buf.is_empty() {
            return Ok(()); // the last row ended a part
        }
        out(&buf)
    }

    /// The same checkpoint body with `gtid_slave_pos` replaced, as three parts to write one
    /// after the other (the tables, by far the largest part, are not decoded or copied): what
    /// `onelog restore` does to give a restored directory its position without loading it.
    /// A format-1 body (no slave position) comes back as format 2. `body` may be a prefix of
    /// the body that holds the part before the tables (restore reads one a megabyte at a
    /// time): the third part is then what of the tables it holds, and a prefix too short is
    /// an error.
    pub fn checkpoint_with_slave_pos<'b>(
        body: &'b [u8],
        pos: &GtidPos,
    ) -> Result<[std::borrow::Cow<'b, [u8]>; 3], FormatError> {
        use std::borrow::Cow;
        let mut r = Reader::new(body, "checkpoint body");
        let version = r.u8()?;
        if version != CHECKPOINT_FORMAT && version != 1 {
            return Err(r.err(format!("unknown checkpoint body format {version}")));
        }
        Catalog::decode(&mut r)?;
        let catalog_end = r.position();
        if version >= 2 {
            let n = r.count(24)?;
            for _ in 0..n {
                r.u64()?;
                r.u64()?;
                r.u64()?;
            }
        }
        let rest = r.position();
        let mut head = Vec::with_capacity(catalog_end);
        head.push(CHECKPOINT_FORMAT);
        head.extend_from_slice(&body[1..catalog_end]);
        let mut slave = Vec::new();
        encode_slave_pos(pos, &mut slave);
        Ok([
            Cow::Owned(head),
            Cow::Owned(slave),
            Cow::Borrowed(&body[rest..]),
        ])
    }

    /// The paged store's root record (`BASE_ROOT_META`, written with every checkpoint into
    /// the base by the root [`freeze`](Self::freeze) returned): everything of the root that
    /// is not rows. Format byte, LSN, GTID state, catalog, `gtid_slave_pos`, then per table its
    /// id, storage id, `auto_inc_next` and `next_row_id`, then the rows per storage id below
    /// the deltas, the next storage id, and what it retired but `purged` (those whose last
    /// records the same checkpoint deletes), each entry a kind byte (0: a storage id; 1: an
    /// index, storage id then index id) and its ids. Format 1 (session 19) had storage ids
    /// only, without the kind byte; it still reads.
    pub fn encode_base_meta(&self, purged: &[Retired]) -> Vec<u8> {
        let mut out = Vec::with_capacity(4096);
        put_u8(&mut out, BASE_META_FORMAT);
        put_u64(&mut out, self.lsn);
        self.gtid_state.encode(&mut out);
        self.catalog.encode(&mut out);
        encode_slave_pos(&self.slave_pos, &mut out);
        put_var(&mut out, self.tables.len() as u64);
        for (id, t) in self.tables.iter() {
            put_u64(&mut out, *id);
            put_u64(&mut out, t.storage);
            put_u64(&mut out, t.auto_inc_next);
            put_u64(&mut out, t.next_row_id);
        }
        let counts = self
            .lower
            .as_ref()
            .map(|l| l.counts.clone())
            .unwrap_or_default();
        put_var(&mut out, counts.len() as u64);
        for (storage, rows) in counts.iter() {
            put_u64(&mut out, *storage);
            put_u64(&mut out, *rows);
        }
        put_u64(&mut out, self.next_storage);
        let retired: Vec<Retired> = self
            .retired
            .iter()
            .copied()
            .filter(|s| !purged.contains(s))
            .collect();
        put_var(&mut out, retired.len() as u64);
        for r in retired {
            match r {
                Retired::Storage(s) => {
                    put_u8(&mut out, 0);
                    put_u64(&mut out, s);
                }
                Retired::Index { storage, index } => {
                    put_u8(&mut out, 1);
                    put_u64(&mut out, storage);
                    put_u64(&mut out, u64::from(index));
                }
            }
        }
        out
    }

    /// The root a base holds: its root record `meta` ([`Self::encode_base_meta`]) over
    /// `base`, every table's rows below an empty delta.
    pub fn over_base(meta: &[u8], base: BaseSnapshot) -> Result<Root, FormatError> {
        let mut r = Reader::new(meta, "table store root record");
        let version = r.u8()?;
        if version != BASE_META_FORMAT && version != 1 {
            return Err(r.err(format!("unknown root record format {version}")));
        }
        let lsn = r.u64()?;
        let (gtid_state, used) = GtidState::decode(&meta[r.position()..])
            .map_err(|e| r.err(format!("GTID state: {e}")))?;
        r.take(used)?;
        let catalog = Catalog::decode(&mut r)?;
        let slave_pos = decode_slave_pos(&mut r)?;
        let mut tables = OrdMap::new();
        for _ in 0..r.count(32)? {
            let (id, storage) = (r.u64()?, r.u64()?);
            let def = catalog
                .table(id)
                .ok_or_else(|| r.err(format!("table id {id} that the catalog does not have")))?;
            let mut t = TableData::empty(def, r.u64()?, 0, storage);
            t.next_row_id = r.u64()?;
            t.lower = true;
            if tables.insert(id, t).is_some() {
                return Err(r.err(format!("table id {id} twice")));
            }
        }
        let mut counts = OrdMap::new();
        for _ in 0..r.count(16)? {
            counts.insert(r.u64()?, r.u64()?);
        }
        let next_storage = r.u64()?;
        // Format 1 retired storage ids only; format 2 tags each entry.
        let mut retired = Vec::new();
        for _ in 0..r.count(8)? {
            let kind = if version == 1 { 0 } else { r.u8()? };
            retired.push(match kind {
                0 => Retired::Storage(r.u64()?),
                1 => {
                    let storage = r.u64()?;
                    let index = u32::try_from(r.u64()?)
                        .map_err(|_| r.err("a retired index id out of range"))?;
                    Retired::Index { storage, index }
                }
                k => return Err(r.err(format!("unknown retired kind {k}"))),
            });
        }
        if !r.is_empty() {
            return Err(r.err("trailing bytes"));
        }
        if let Some(t) = tables.values().find(|t| t.storage >= next_storage) {
            return Err(r.err(format!(
                "storage id {} at or above the next one, {next_storage}",
                t.storage
            )));
        }
        if catalog.tables().any(|d| !tables.contains_key(&d.id)) {
            return Err(r.err("a table of the catalog has no entry"));
        }
        Ok(Root {
            catalog: Arc::new(catalog),
            tables,
            lsn,
            gtid_state,
            slave_pos,
            ddl_seq: 0,
            lower: Some(Arc::new(Lower::new(None, Some(base), counts))),
            next_storage,
            retired,
        })
    }

    /// Loads a checkpoint body written by [`encode_checkpoint`](Self::encode_checkpoint).
    pub fn decode_checkpoint(
        body: &[u8],
        lsn: Lsn,
        gtid_state: GtidState,
    ) -> Result<Root, FormatError> {
        let mut r = Reader::new(body, "checkpoint body");
        let mut root = Root::checkpoint_head(&mut r, lsn, gtid_state)?;
        let nt = r.count(17)?;
        for _ in 0..nt {
            let (def, auto_inc_next) = root.checkpoint_table(&mut r)?;
            let nrows = r.count(1)?;
            for _ in 0..nrows {
                let row = checkpoint_row(&mut r, &def)?;
                root.put_row(&def, Arc::new(row))
                    .map_err(|e| r.err(e.to_string()))?;
            }
            if let Some(t) = root.tables.get_mut(&def.id) {
                t.auto_inc_next = t.auto_inc_next.max(auto_inc_next);
            }
        }
        if !r.is_empty() {
            return Err(r.err("trailing bytes after the last table"));
        }
        root.checkpoint_tables_without_rows();
        Ok(root)
    }

    /// The part of a checkpoint body before its tables' rows (format byte, catalog,
    /// `gtid_slave_pos`): a root with no table. [`Self::decode_checkpoint`] and the paged
    /// store's conversion (`convert.rs`, which streams the rows) read a body with it.
    pub(crate) fn checkpoint_head(
        r: &mut Reader<'_>,
        lsn: Lsn,
        gtid_state: GtidState,
    ) -> Result<Root, FormatError> {
        let version = r.u8()?;
        if version != CHECKPOINT_FORMAT && version != 1 {
            return Err(r.err(format!("unknown checkpoint body format {version}")));
        }
        let catalog = Catalog::decode(r)?;
        let slave_pos = if version >= 2 {
            decode_slave_pos(r)?
        } else {
            GtidPos::new()
        };
        Ok(Root {
            catalog: Arc::new(catalog),
            tables: OrdMap::new(),
            lsn,
            gtid_state,
            slave_pos,
            ddl_seq: 0,
            lower: None,
            next_storage: 1,
            retired: Vec::new(),
        })
    }

    /// A table's section head in a checkpoint body (its id and AUTO_INCREMENT counter; the
    /// row count follows): the table is added empty, under a new storage id. Returns its
    /// definition and the counter.
    pub(crate) fn checkpoint_table(
        &mut self,
        r: &mut Reader<'_>,
    ) -> Result<(Arc<TableDef>, u64), FormatError> {
        let id = r.u64()?;
        let auto_inc_next = r.u64()?;
        let def = self.catalog.table(id).cloned().ok_or_else(|| {
            r.err(format!(
                "rows of table id {id} that the catalog does not have"
            ))
        })?;
        if self.tables.contains_key(&id) {
            return Err(r.err(format!("table id {id} twice")));
        }
        self.apply_catalog_change_data_only(&def);
        Ok((def, auto_inc_next))
    }

    /// After a checkpoint body's last table: the tables of the catalog without a section
    /// (none are written that way, but be exact), added empty.
    pub(crate) fn checkpoint_tables_without_rows(&mut self) {
        let defs: Vec<Arc<TableDef>> = self.catalog.tables().cloned().collect();
        for def in defs {
            if !self.tables.contains_key(&def.id) {
                self.apply_catalog_change_data_only(&def);
            }
        }
    }

    fn apply_catalog_change_data_only(&mut self, def: &TableDef) {
        self.replace_table(def, 1, 0);
    }

    /// [`CatalogChange::AlterTable`]'s rows (`change`, to `def` with `sources`): every old row
    /// (in primary key order) becomes a row of `def` ([`rewritten_row`]), its keys built again;
    /// 1062 when two new rows share a primary key value (unique keys: `ddl.rs` checks them).
    /// The AUTO_INCREMENT counter is kept (and raised past the new rows). An ALTER that
    /// [keeps the rows](alter::keeps_rows) copies nothing.
    fn alter_rows(
        &mut self,
        old_def: &TableDef,
        (def, sources): (&TableDef, &[ColumnSource]),
        change: &CatalogChange,
        generation: u64,
    ) -> Result<(), EngineError> {
        if alter::keeps_rows(old_def, def, sources) {
            // No value or key changes: the rows stay, the dropped indexes go (their entries
            // in lower layers with later checkpoints).
            self.keep_defined_indexes(def);
            if let Some(t) = self.tables.get_mut(&def.id) {
                t.generation = generation;
            }
            return Ok(());
        }
        let old_rows = self.rows_as(old_def)?;
        let Some(auto_inc_next) = self.tables.get(&def.id).map(|t| t.auto_inc_next) else {
            return Ok(());
        };
        self.replace_table(def, auto_inc_next, generation);
        for (n, row) in old_rows.iter().enumerate() {
            let r = rewritten_row(change, old_def, n as u64 + 1, row)?;
            let taken = match self.view_as(def) {
                Some(v) => v.get(&pk_key(def, &r))?,
                None => None,
            };
            if !hidden_key(def) && taken.is_some() {
                let vals: Vec<&Value> = def.primary_key.iter().map(|&c| &r[c]).collect();
                return Err(EngineError::DuplicateKey {
                    entry: display_values(&vals),
                    key: "PRIMARY".into(),
                });
            }
            self.put_row(def, Arc::new(r))?;
        }
        Ok(())
    }

    /// A table `table_rebuild.rs` wrote whole into the base under the next storage id (its row
    /// count already in the lower layers' counts): `def`'s table gets a new, empty delta over
    /// it, keeping its AUTO_INCREMENT counter (the rebuild raises it past the new rows).
    fn rebuilt_below(&mut self, def: &TableDef, generation: u64) {
        let Some(auto_inc_next) = self.tables.get(&def.id).map(|t| t.auto_inc_next) else {
            return;
        };
        debug_assert!(
            self.lower.is_some(),
            "a table rebuilt below with nothing below"
        );
        self.replace_table(def, auto_inc_next, generation).lower = true;
    }

    /// A column added or dropped (`change`): `def`'s table gets every row as
    /// [`rewritten_row`] edits it, under `def` (index entries built again for the new rows,
    /// under a new storage id), keeping its AUTO_INCREMENT counter. The rows are read as the
    /// table's current definition's.
    fn rewrite_rows(
        &mut self,
        def: &TableDef,
        generation: u64,
        change: &CatalogChange,
    ) -> Result<(), EngineError> {
        let Some(old_def) = self.catalog.table(def.id).cloned() else {
            return Ok(());
        };
        let old_rows = self.rows_as(&old_def)?;
        let Some(auto_inc_next) = self.tables.get(&def.id).map(|t| t.auto_inc_next) else {
            return Ok(());
        };
        self.replace_table(def, auto_inc_next, generation);
        for (n, row) in old_rows.iter().enumerate() {
            let r = rewritten_row(change, &old_def, n as u64 + 1, row)?;
            self.put_row(def, Arc::new(r))?;
        }
        Ok(())
    }

    /// `ALTER TABLE ... AUTO_INCREMENT=n`'s counter: `n`, or the column's largest value + 1
    /// when that is higher (as InnoDB); unchanged for a table without an AUTO_INCREMENT
    /// column. The rows are read as `def`'s (the table has them by now).
    fn auto_increment_after(&self, def: &TableDef, n: u64) -> Result<u64, BaseError> {
        let current = self.tables.get(&def.id).map_or(1, |t| t.auto_inc_next);
        let Some(a) = def.auto_increment else {
            return Ok(current);
        };
        let mut max = 0;
        if let Some(v) = self.view_as(def) {
            for row in v.all_rows() {
                max = max.max(auto_inc_value(&row?, a));
            }
        }
        Ok(n.max(max.saturating_add(1)).max(1))
    }
}

/// Row number `n` (from 1) of a table `change` rewrites, `row` (read as `old_def`'s), as a row
/// of the change's new definition: DROP COLUMN loses the value at its position, ADD COLUMN
/// gets its fill last, a copying ALTER TABLE builds each new column from `sources` through
/// [`alter::convert`] (`strict`: its failures are errors; the warnings otherwise were reported
/// when the DDL was validated); any other change keeps the row as it is. The in-memory copy
/// (`rewrite_rows`, `alter_rows`) and the one into the base (`table_rebuild.rs`) both edit
/// through it, so both build the same rows.
pub(crate) fn rewritten_row(
    change: &CatalogChange,
    old_def: &TableDef,
    n: u64,
    row: &[Value],
) -> Result<Row, EngineError> {
    let (def, sources, strict) = match change {
        CatalogChange::DropColumn { position, .. } => {
            let mut r = row.to_vec();
            if (*position as usize) < r.len() {
                r.remove(*position as usize);
            }
            return Ok(r);
        }
        CatalogChange::AddColumn { fill, .. } => {
            let mut r = Vec::with_capacity(row.len() + 1);
            r.extend_from_slice(row);
            r.push(fill.clone());
            return Ok(r);
        }
        CatalogChange::AlterTable {
            table,
            sources,
            strict,
            ..
        } => (table, sources, *strict),
        _ => return Ok(row.to_vec()),
    };
    let mut conditions = Vec::new();
    let mut r = Vec::with_capacity(sources.len());
    for (col, src) in def.columns.iter().zip(sources) {
        r.push(match src {
            ColumnSource::Old(p) => {
                let v = row.get(*p).unwrap_or(&Value::Null);
                let from = &old_def.columns[*p].ty;
                let v = alter::convert(col, from, v, n, strict, &mut conditions)?;
                conditions.clear();
                v
            }
            ColumnSource::Fill(v) => v.clone(),
            ColumnSource::Sequence => alter::number(col, n)?,
        });
    }
    Ok(r)
}

const CHECKPOINT_FORMAT: u8 = 2;

/// Format of the paged store's root record ([`Root::encode_base_meta`]).
const BASE_META_FORMAT: u8 = 2;

/// The name of the root record among the base's meta records.
pub const BASE_ROOT_META: &str = "root";

/// One row of `def`'s table in a checkpoint body (a column count, then the values).
pub(crate) fn checkpoint_row(r: &mut Reader<'_>, def: &TableDef) -> Result<Row, FormatError> {
    let ncols = r.count(1)?;
    if ncols != def.columns.len() {
        return Err(r.err(format!(
            "row of {} has {ncols} columns",
            def.qualified_name()
        )));
    }
    let mut row = Vec::with_capacity(ncols);
    for _ in 0..ncols {
        row.push(r.value()?);
    }
    Ok(row)
}

/// The size of the parts the checkpoint writer encodes a body in
/// ([`Root::encode_checkpoint_with`]).
pub const CHECKPOINT_PART: usize = 1 << 20;

/// The published root. Writers (the commit group's sink, DDL, recovery) build a new root and
/// [`publish`](Store::publish) it; readers clone the `Arc`.
pub struct Store {
    current: RwLock<Arc<Root>>,
}

impl Store {
    pub fn new(root: Root) -> Self {
        Store {
            current: RwLock::new(Arc::new(root)),
        }
    }

    /// The latest published root.
    pub fn current(&self) -> Arc<Root> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Makes `root` the visible state; returns the previous one, so that the caller drops it
    /// (maybe the last reference to a big table's old version) outside the store's lock. Its
    /// LSN is never behind the published one's (roots follow the log).
    #[must_use = "the old root is dropped by the caller, outside the store's lock"]
    pub fn publish(&self, root: Arc<Root>) -> Arc<Root> {
        let mut g = match self.current.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        debug_assert!(
            root.lsn >= g.lsn,
            "published root at LSN {} behind {}",
            root.lsn,
            g.lsn
        );
        std::mem::replace(&mut *g, root)
    }
}

/// A consistent read view: one root.
#[derive(Clone, Debug)]
pub struct Snapshot {
    root: Arc<Root>,
}

impl Snapshot {
    pub fn new(root: Arc<Root>) -> Self {
        Snapshot { root }
    }

    pub fn root(&self) -> &Arc<Root> {
        &self.root
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.root.catalog
    }

    /// LSN the snapshot is consistent at.
    pub fn lsn(&self) -> Lsn {
        self.root.lsn
    }

    /// Every table's rows in primary key order, keyed `db.table` (tests, `onelog check`).
    pub fn dump(&self) -> BTreeMap<String, Vec<Vec<Value>>> {
        self.root.dump()
    }
}

/// A checkpoint body's `gtid_slave_pos` section: a count, then (domain, server, seq) each
/// as a u64.
fn encode_slave_pos(pos: &GtidPos, out: &mut Vec<u8>) {
    let slave: Vec<_> = pos.iter().collect();
    put_var(out, slave.len() as u64);
    for g in slave {
        put_u64(out, u64::from(g.domain_id));
        put_u64(out, u64::from(g.server_id));
        put_u64(out, g.seq_no);
    }
}

/// Reads what [`encode_slave_pos`] wrote; a domain or server id past 32 bits is an error.
fn decode_slave_pos(r: &mut Reader<'_>) -> Result<GtidPos, FormatError> {
    let mut pos = GtidPos::new();
    for _ in 0..r.count(24)? {
        let (d, s, q) = (r.u64()?, r.u64()?, r.u64()?);
        let (Ok(d), Ok(s)) = (u32::try_from(d), u32::try_from(s)) else {
            return Err(r.err("gtid_slave_pos entry out of range"));
        };
        pos.set(Gtid::new(d, s, q));
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnSpec, IndexSpec, SqlType, TableSpec};

    fn root_with_table() -> (Root, Arc<TableDef>) {
        let mut root = Root::empty();
        root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let spec = TableSpec {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnSpec::new("id", SqlType::Int { unsigned: false }).auto_increment(),
                ColumnSpec::new("v", SqlType::VarChar(10)),
            ],
            primary_key: vec!["id".into()],
            indexes: vec![IndexSpec::new("by_v", &["v"], false)],
        };
        let def = TableDef::from_spec(1, &spec).unwrap();
        root.apply_catalog_change(&CatalogChange::CreateTable { table: def })
            .unwrap();
        let def = root.catalog.table(1).unwrap().clone();
        (root, def)
    }

    fn row(id: i64, v: Option<&str>) -> Arc<Row> {
        Arc::new(vec![
            Value::Int(id),
            v.map_or(Value::Null, |s| Value::bytes(s.as_bytes())),
        ])
    }

    #[test]
    fn index_entries_follow_puts_updates_and_deletes() {
        let (mut root, def) = root_with_table();
        root.put_row(&def, row(1, Some("b"))).unwrap();
        root.put_row(&def, row(2, Some("a"))).unwrap();
        root.put_row(&def, row(3, None)).unwrap();
        root.apply_row_change(&RowChange::Update {
            table: 1,
            before: row(1, Some("b")),
            after: row(1, Some("c")),
        })
        .unwrap();
        root.apply_row_change(&RowChange::Update {
            table: 1,
            before: row(2, Some("a")),
            after: row(5, Some("a")),
        })
        .unwrap();
        root.apply_row_change(&RowChange::Delete {
            table: 1,
            before: row(3, None),
        })
        .unwrap();
        let ix_id = def.indexes[0].id;
        let all = (Bound::Unbounded, Bound::Unbounded);
        let pks: Vec<Vec<u8>> = root
            .scan_index(1, ix_id, &all)
            .map(|i| i.map(|(e, x)| e[x.klen as usize..].to_vec()).unwrap())
            .collect();
        let expect: Vec<Vec<u8>> = vec![pk_key(&def, &row(5, None)), pk_key(&def, &row(1, None))];
        assert_eq!(pks, expect);
        // An update that keeps the index key still points the entry at the new row.
        root.apply_row_change(&RowChange::Update {
            table: 1,
            before: row(5, Some("a")),
            after: Arc::new(vec![Value::Int(5), Value::bytes(b"a")]),
        })
        .unwrap();
        for item in root.scan_index(1, ix_id, &all) {
            let (entry, e) = item.unwrap();
            let pk = &entry[e.klen as usize..];
            let row = root.get(1, pk).unwrap().unwrap();
            assert!(
                Arc::ptr_eq(&row, &e.row),
                "entry row is the primary map's row"
            );
        }
        assert_eq!(root.table(1).unwrap().auto_inc_next, 6);
        assert!(root
            .apply_row_change(&RowChange::Delete {
                table: 1,
                before: row(3, None)
            })
            .is_err());
    }

    #[test]
    fn checkpoint_parts_are_the_body_cut_after_rows() {
        let parts_of = |root: &Root, part: usize| {
            let mut parts: Vec<Vec<u8>> = Vec::new();
            let r = root.encode_checkpoint_with::<BaseError>(part, &mut |p| {
                parts.push(p.to_vec());
                Ok(())
            });
            assert!(r.is_ok());
            parts
        };
        let (mut root, def) = root_with_table();
        for i in 0..50 {
            root.put_row(&def, row(i, Some(&"x".repeat(i as usize))))
                .unwrap();
        }
        let body = root.encode_checkpoint().unwrap();
        let parts = parts_of(&root, 200);
        assert!(parts.len() > 5, "{}", parts.len());
        assert!(parts[..parts.len() - 1].iter().all(|p| p.len() >= 200));
        assert_eq!(parts.concat(), body);
        assert_eq!(parts_of(&root, usize::MAX), vec![body.clone()]);
        let (empty, _) = root_with_table();
        assert_eq!(
            parts_of(&empty, 1).concat(),
            empty.encode_checkpoint().unwrap()
        );
        // The sink's error stops the encoding.
        let mut calls = 0;
        let r = root.encode_checkpoint_with(200, &mut |_| {
            calls += 1;
            Err(BaseError {
                dir: "sink".into(),
                doing: "full",
                detail: String::new(),
            })
        });
        assert_eq!((r.map_err(|e| e.doing), calls), (Err("full"), 1));
    }

    #[test]
    fn checkpoint_body_round_trips_and_rejects_garbage() {
        let (mut root, def) = root_with_table();
        for i in 0..20 {
            root.put_row(&def, row(i, Some(&format!("v{}", i % 3))))
                .unwrap();
        }
        let body = root.encode_checkpoint().unwrap();
        let back = Root::decode_checkpoint(&body, 7, GtidState::new()).unwrap();
        assert_eq!(back.dump(), root.dump());
        assert_eq!(
            back.table(1).unwrap().indexes,
            root.table(1).unwrap().indexes
        );
        assert_eq!(back.table(1).unwrap().auto_inc_next, 20);
        for n in 0..body.len() {
            assert!(Root::decode_checkpoint(&body[..n], 7, GtidState::new()).is_err());
        }
        let mut b = body.clone();
        for i in (0..b.len()).step_by(7) {
            b[i] = b[i].wrapping_add(0x5b);
            let _ = Root::decode_checkpoint(&b, 7, GtidState::new());
        }
    }

    #[test]
    fn prefix_ranges_select_whole_prefixes() {
        let (mut root, def) = root_with_table();
        for i in 0..10 {
            root.put_row(&def, row(i, Some("x"))).unwrap();
        }
        let r = encode_range(
            &def,
            &def.primary_key,
            false,
            &KeyRange::between(vec![Value::Int(3)], vec![Value::Int(5)]),
        )
        .unwrap();
        let ids: Vec<Value> = root
            .scan_pk(1, &r)
            .map(|i| i.unwrap().1[0].clone())
            .collect();
        assert_eq!(ids, vec![Value::Int(3), Value::Int(4), Value::Int(5)]);
        let r = encode_range(
            &def,
            &def.primary_key,
            false,
            &KeyRange {
                start: Bound::Excluded(vec![Value::Int(7)]),
                end: Bound::Unbounded,
            },
        )
        .unwrap();
        assert_eq!(root.scan_pk(1, &r).count(), 2);
        let r = encode_range(
            &def,
            &def.primary_key,
            false,
            &KeyRange::between(vec![Value::Int(5)], vec![Value::Int(3)]),
        )
        .unwrap();
        assert_eq!(root.scan_pk(1, &r).count(), 0);
        // NULL bounds on a NOT NULL column: before every key.
        root.put_row(&def, row(i64::MIN, Some("min"))).unwrap();
        let r = encode_range(
            &def,
            &def.primary_key,
            false,
            &KeyRange {
                start: Bound::Excluded(vec![Value::Null]),
                end: Bound::Unbounded,
            },
        )
        .unwrap();
        assert_eq!(root.scan_pk(1, &r).count(), 11);
        let r = encode_range(
            &def,
            &def.primary_key,
            false,
            &KeyRange {
                start: Bound::Unbounded,
                end: Bound::Included(vec![Value::Null]),
            },
        )
        .unwrap();
        assert_eq!(root.scan_pk(1, &r).count(), 0);
    }
}
