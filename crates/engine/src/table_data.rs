//! One table's in-memory delta (docs/PAGED_STORE.md, build order step 3): its rows and
//! secondary index entries changed since the layers under it (`table_view.rs`), with
//! tombstones where lower layers may hold a key, its counters, and the storage id its older
//! rows are kept under. `store.rs` changes it (apply, DDL); `table_view.rs` reads it; the
//! checkpoint writes its changes into the base (`base_changes`).
//!
//! Invariants (with `store.rs`'s): a tombstone exists only when `lower` is set; each index
//! map changes together with the row map, one entry per row of a table with nothing below;
//! `net_rows` is the change of the table's row count this delta makes over the layers below.

use std::sync::Arc;

use imbl::OrdMap;
use onelog_binlog::Value;

use crate::base::BaseChange;
use crate::base_format::{encode_entry, encode_row, entry_key, row_key};
use crate::catalog::TableDef;
use crate::key::{borrowed, range_is_empty, ByteRange, KeyBytes};
use crate::row_cache::{alloc_bytes, row_bytes};

/// One row: a canonical value per column.
pub type Row = Vec<Value>;

/// The value of one secondary index entry (`index key ++ pk` -> this).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexEntry {
    /// Length of the index key part of the entry bytes (the primary key follows).
    pub klen: u32,
    /// The row the entry stands for (shared with the primary map).
    pub row: Arc<Row>,
}

/// One table's delta: its rows and index entries changed since the layers under it
/// (`table_view.rs`; with no layers under it, every row it has). Only the engine sees its
/// maps: `store.rs` changes them, and everything else reads rows through `Root`'s methods and
/// `TableView` (owned rows and keys; docs/PAGED_STORE.md, build order steps 1 and 3).
#[derive(Clone, Debug, Default)]
pub struct TableData {
    /// Storage key -> the row, or `None`: removed since the lower layers (a tombstone, only
    /// when `lower`).
    pub(crate) rows: OrdMap<KeyBytes, Option<Arc<Row>>>,
    /// Index id -> entries `index key ++ pk -> (index key length, row)`, or `None` (a
    /// tombstone, only when `lower`). A persistent map, so that cloning a table (every root
    /// that changes a table next to it in the root's table map clones it) costs one
    /// reference count, not a map allocation per table.
    pub(crate) indexes: OrdMap<u32, OrdMap<KeyBytes, Option<IndexEntry>>>,
    /// Next AUTO_INCREMENT value the committed rows call for (max value + 1, at least 1).
    pub auto_inc_next: u64,
    /// `Root::ddl_seq` of the last DDL that changed this table's definition or emptied it
    /// (in memory only): a transaction that wrote the table under another generation cannot
    /// commit (1412), so a logged row change always applies.
    pub generation: u64,
    /// The next hidden row id of a table without primary key (the paged store keeps it in its
    /// root record; loading an in-memory checkpoint numbers the rows again).
    pub next_row_id: u64,
    /// The id the lower layers keep this table's rows under (`table_view.rs`).
    pub(crate) storage: u64,
    /// Whether the lower layers may hold rows of `storage`: then a removal leaves a
    /// tombstone, and a read that misses the delta reads them.
    pub(crate) lower: bool,
    /// Rows this delta adds to the lower layers' (negative: removes).
    pub(crate) net_rows: i64,
}

impl TableData {
    /// Drops the entries of every index `keep` says no to; returns the ids dropped.
    pub(crate) fn keep_indexes(&mut self, keep: impl Fn(u32) -> bool) -> Vec<u32> {
        let dropped: Vec<u32> = self
            .indexes
            .keys()
            .copied()
            .filter(|&id| !keep(id))
            .collect();
        for id in &dropped {
            self.indexes.remove(id);
        }
        dropped
    }

    /// No rows, nothing under it: an empty map per index of `def`.
    pub(crate) fn empty(
        def: &TableDef,
        auto_inc_next: u64,
        generation: u64,
        storage: u64,
    ) -> TableData {
        TableData {
            indexes: def.indexes.iter().map(|i| (i.id, OrdMap::new())).collect(),
            auto_inc_next,
            generation,
            storage,
            ..Default::default()
        }
    }

    /// The delta that starts over this one once it is frozen (`freeze.rs`): no changes, the
    /// same counters, everything it held now below.
    pub(crate) fn over_frozen(&self) -> TableData {
        TableData {
            rows: OrdMap::new(),
            indexes: self.indexes.keys().map(|&id| (id, OrdMap::new())).collect(),
            auto_inc_next: self.auto_inc_next,
            generation: self.generation,
            next_row_id: self.next_row_id,
            storage: self.storage,
            lower: true,
            net_rows: 0,
        }
    }

    /// The delta's entry for storage key `pk`: `None` when the delta does not hold it,
    /// `Some(None)` when it holds a tombstone.
    pub(crate) fn delta_row(&self, pk: &[u8]) -> Option<Option<Arc<Row>>> {
        self.rows.get(pk).cloned()
    }

    /// The delta's rows (and tombstones) with storage keys in `range`, in key order.
    pub(crate) fn delta_rows<'a>(
        &'a self,
        range: &ByteRange,
    ) -> impl Iterator<Item = (KeyBytes, Option<Arc<Row>>)> + 'a {
        let it = (!range_is_empty(range)).then(|| self.rows.range::<_, [u8]>(borrowed(range)));
        it.into_iter()
            .flatten()
            .map(|(k, r)| (k.clone(), r.clone()))
    }

    /// The delta's entries (and tombstones) of index `index_id` in `range`, in key order.
    pub(crate) fn delta_entries<'a>(
        &'a self,
        index_id: u32,
        range: &ByteRange,
    ) -> impl Iterator<Item = (KeyBytes, Option<IndexEntry>)> + 'a {
        let ix = self
            .indexes
            .get(&index_id)
            .filter(|_| !range_is_empty(range));
        ix.map(|ix| ix.range::<_, [u8]>(borrowed(range)))
            .into_iter()
            .flatten()
            .map(|(k, e)| (k.clone(), e.clone()))
    }

    /// This delta's rows as base records of storage id `storage`, ascending (a tombstone
    /// deletes), encoded one at a time.
    pub(crate) fn row_changes(&self, storage: u64) -> impl Iterator<Item = BaseChange> + '_ {
        self.rows
            .iter()
            .map(move |(pk, row)| (row_key(storage, pk), row.as_deref().map(|r| encode_row(r))))
    }

    /// This delta's index entries as base records of storage id `storage`, ascending (by
    /// index id, then key; tombstones as deletes), encoded one at a time.
    pub(crate) fn entry_changes(&self, storage: u64) -> impl Iterator<Item = BaseChange> + '_ {
        self.indexes.iter().flat_map(move |(ix, map)| {
            map.iter().map(move |(e, entry)| {
                let value = entry.as_ref().map(|x| encode_entry(x.klen));
                (entry_key(storage, *ix, e), value)
            })
        })
    }

    /// Memory this delta's rows and entries hold, estimated as the allocator hands it out:
    /// each map slot twice over (imbl's B-tree nodes are allocated whole and split half
    /// full), each key's heap bytes, each row once (its `Arc` and its values and what they
    /// own; an index entry shares its row). `budget.rs` calibrates its log measure with it.
    pub(crate) fn memory_estimate(&self) -> u64 {
        const ARC_ROW: usize = 48;
        let row_slot = 2 * std::mem::size_of::<(KeyBytes, Option<Arc<Row>>)>();
        let entry_slot = 2 * std::mem::size_of::<(KeyBytes, Option<IndexEntry>)>();
        let rows: usize = self
            .rows
            .iter()
            .map(|(k, r)| {
                row_slot
                    + alloc_bytes(k.heap_len())
                    + r.as_deref().map_or(0, |r| ARC_ROW + row_bytes(r))
            })
            .sum();
        let entries: usize = self
            .indexes
            .values()
            .flat_map(|m| m.keys())
            .map(|k| entry_slot + alloc_bytes(k.heap_len()))
            .sum();
        (rows + entries) as u64
    }

    /// Whether both hold the same index entries (tests compare tables built two ways; O(n)).
    pub fn same_index_entries(&self, other: &TableData) -> bool {
        self.indexes == other.indexes
    }

    /// Whether `other` is this very table version (the same imbl trees and counters), O(number
    /// of indexes). Meaningful while one of the two is held: a tree shared with a held version
    /// is never changed in place, so the same trees mean the same rows.
    pub fn same_version(&self, other: &TableData) -> bool {
        self.rows.ptr_eq(&other.rows)
            && self.auto_inc_next == other.auto_inc_next
            && self.generation == other.generation
            && self.next_row_id == other.next_row_id
            && self.storage == other.storage
            && self.lower == other.lower
            && self.net_rows == other.net_rows
            && self.indexes.len() == other.indexes.len()
            && self
                .indexes
                .iter()
                .zip(&other.indexes)
                .all(|((ia, ma), (ib, mb))| ia == ib && ma.ptr_eq(mb))
    }

    /// The index invariant of the module docs: every index of `def` holds one entry per row
    /// (debug assertions; O(number of indexes)). A delta over lower layers holds tombstones
    /// in both, which do not pair up by count, so only a whole table is checked.
    pub(crate) fn indexes_in_step(&self, def: &TableDef) -> bool {
        self.lower
            || def
                .indexes
                .iter()
                .all(|ix| self.indexes.get(&ix.id).map_or(0, |e| e.len()) == self.rows.len())
    }
}
