//! CREATE INDEX over a table whose rows lie in the paged store's base (docs/PAGED_STORE.md,
//! step 3's chunked build): the new index's entries are written into the base in sorted
//! chunks of a bounded size, so building an index over a table many times the memory budget
//! holds at most one chunk of entries in memory. The table keeps its storage id and its rows
//! stay where they are. Where the build does not apply (the in-memory store, a table with
//! nothing below its delta, a frozen layer left by a failed checkpoint), the index is built
//! from the rows in memory, after `Root::make_whole` moved a table with rows below into its
//! delta.
//!
//! Owns [`build`], called (through `table_rebuild::build_below`) by `ddl.rs` for the generated
//! key of a foreign key that ALTER TABLE adds (and for a CREATE INDEX that could not be built
//! before the gate), under the checkpoint writers' lock and the exclusive commit gate, before
//! the DDL is logged, and by recovery's replay of such a DDL; and its two halves, [`write`]
//! and [`adopt`], which `online_index.rs` calls for CREATE INDEX: the write under the
//! writers' lock alone while commits go on, the adoption under the gate too.
//!
//! Invariants:
//! - The base changes only by checkpoints and by this build, never both at once: the caller
//!   holds the checkpoint writers' lock ([`CheckpointSerial`]), and the build runs only when no
//!   frozen layer exists (no checkpoint is half written), so swapping the root's base snapshot
//!   for the one after the build changes nothing but the new index's entries.
//! - The entries are built from every row of the table as the root reads it (delta over base):
//!   after the build the base holds exactly one entry per row under the new index id, and the
//!   delta holds none (an empty map with tombstones enabled), so later row changes keep the
//!   index by tombstoning base entries, as for an index that a checkpoint wrote (the rows
//!   committed between an online build's root and its adoption are such changes).
//! - Entries left under the index id by a build that failed or crashed before its DDL was
//!   logged, or by a dropped index whose purge had not finished, are deleted before the new
//!   ones are written (a later ingestion wins over an earlier one); a build that fails (a
//!   duplicate in a unique index, a failed write) deletes what it wrote, best effort.
//! - A crash after the build and before the DDL record is durable leaves those entries in the
//!   base under an index id no catalog names: nothing reads them, the next build of that id
//!   deletes them, and a DROP TABLE's purge deletes every key of the storage id. A crash after
//!   the DDL record and before the next checkpoint replays the DDL with the same build
//!   (before any checkpoint can run): it deletes what the
//!   build before the crash wrote and writes the entries again, so recovery never trusts
//!   entries it cannot tie to the DDL it replays.

use std::ops::Bound;
use std::sync::Arc;

use onelog_binlog::Value;

use crate::base::{Base, BaseChange, BaseSnapshot};
use crate::base_format::{decode_entry, encode_entry, entry_key, entry_key_entry, entry_range};
use crate::catalog::{CatalogChange, IndexDef, TableDef, TableId};
use crate::error::EngineError;
use crate::key::{borrowed, ByteRange};
use crate::store::{duplicate_key, index_has_null, index_key, Retired, Root};

/// Memory an entry costs in a chunk beyond its key and value bytes (two vectors and their
/// allocations), so a chunk's bound counts what it really holds.
const ENTRY_OVERHEAD: usize = 64;

/// Builds the index `change` adds (CREATE INDEX, or the generated key of a foreign key added
/// by ALTER TABLE) into `base` and applies the change to `root`, when the table's rows lie in
/// the base and no checkpoint is half written (called through `table_rebuild::build_below`).
/// Returns false, having changed nothing, when the build does not apply (the caller then
/// applies the change the in-memory way). At most `chunk_bytes` of entries are held at a time.
/// A unique index over duplicate values fails with 1062 and leaves no entry behind (the
/// cleanup after a failure is best effort: what it cannot delete, the next build of the index
/// id deletes first). At recovery's replay, the entries a build wrote before the crash are
/// deleted and written again from the rows replay has reached, which are the rows the build
/// read.
pub(crate) fn build(
    root: &mut Root,
    base: &Base,
    change: &CatalogChange,
    chunk_bytes: usize,
) -> Result<bool, EngineError> {
    match write(root, base, change, chunk_bytes)? {
        Some(written) => {
            adopt(root, &written, change)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// What [`write`] wrote: the base after it, and the table's storage id.
pub(crate) struct Written {
    pub(crate) after: BaseSnapshot,
    pub(crate) storage: u64,
}

/// The first half of [`build`]: writes the entries of the index `change` adds, read from
/// `root`'s rows, into `base` (and checks a unique index over them); `root` is not changed.
/// None, having written nothing, when the build does not apply.
pub(crate) fn write(
    root: &Root,
    base: &Base,
    change: &CatalogChange,
    chunk_bytes: usize,
) -> Result<Option<Written>, EngineError> {
    let Some((table, index)) = added_index(change) else {
        return Ok(None);
    };
    let Some(lower) = root.lower.as_ref() else {
        return Ok(None);
    };
    let (Some(snapshot), None) = (lower.base.as_ref(), lower.frozen.as_ref()) else {
        return Ok(None);
    };
    let Some(storage) = root
        .tables
        .get(&table)
        .filter(|t| t.lower)
        .map(|t| t.storage)
    else {
        return Ok(None);
    };
    // Validates the change (and gives the definition the entries are keyed by).
    let catalog = root.catalog.apply(change)?;
    let Some(def) = catalog.table(table) else {
        return Ok(None);
    };
    let chunk_bytes = chunk_bytes.max(1);

    // Entries an earlier build or a dropped index left under this id.
    delete_entries(base, snapshot, storage, index.id, chunk_bytes)?;
    let written = write_entries(root, base, table, def, index, storage, chunk_bytes);
    if let Err(e) = written {
        let _ = delete_entries(base, &base.snapshot(), storage, index.id, chunk_bytes);
        return Err(e);
    }
    let after = base.snapshot();
    if index.unique {
        if let Err(e) = check_unique(root, &after, table, index, storage) {
            let _ = delete_entries(base, &after, storage, index.id, chunk_bytes);
            return Err(e);
        }
    }
    Ok(Some(Written { after, storage }))
}

/// The second half of [`build`]: `root` (the one the entries were read from, or a later one
/// over the same lower layers) takes the base after the write and the change, its delta
/// getting the index empty.
pub(crate) fn adopt(
    root: &mut Root,
    written: &Written,
    change: &CatalogChange,
) -> Result<(), EngineError> {
    let (Some((_, index)), Some(lower)) = (added_index(change), root.lower.clone()) else {
        return Ok(());
    };
    root.lower = Some(Arc::new(lower.with_snapshot(written.after.clone())));
    let storage = written.storage;
    root.retired.retain(|r| {
        *r != Retired::Index {
            storage,
            index: index.id,
        }
    });
    root.apply_built_below(change)?;
    Ok(())
}

/// Deletes, best effort, the entries [`write`] wrote for `change` (a build not adopted: its
/// table changed under it, or a value brought since was a duplicate); what this cannot delete,
/// the next build of the index id deletes first.
pub(crate) fn abandon(base: &Base, written: &Written, change: &CatalogChange, chunk_bytes: usize) {
    if let Some((_, index)) = added_index(change) {
        let snapshot = base.snapshot();
        let _ = delete_entries(
            base,
            &snapshot,
            written.storage,
            index.id,
            chunk_bytes.max(1),
        );
    }
}

/// The table and index `change` adds an index with: CREATE INDEX, or the generated key of a
/// foreign key added by ALTER TABLE.
fn added_index(change: &CatalogChange) -> Option<(TableId, &IndexDef)> {
    match change {
        CatalogChange::CreateIndex { table, index } => Some((*table, index)),
        CatalogChange::AlterConstraints {
            table,
            index: Some(index),
        } => Some((table.id, index)),
        _ => None,
    }
}

/// Writes one entry per row of `table` (read through `root`'s layers) into `base`, in sorted
/// chunks of at most `chunk_bytes`.
fn write_entries(
    root: &Root,
    base: &Base,
    table: TableId,
    def: &TableDef,
    index: &IndexDef,
    storage: u64,
    chunk_bytes: usize,
) -> Result<(), EngineError> {
    let all: ByteRange = (Bound::Unbounded, Bound::Unbounded);
    let mut chunks = Chunks::new(base, chunk_bytes);
    let mut entry = Vec::with_capacity(64);
    for item in root.scan_pk(table, &all) {
        let (pk, row) = item?;
        chunks.push_entry((storage, def, index), &row, &pk, &mut entry)?;
    }
    chunks.write()
}

/// Deletes every entry `snapshot` holds under (`storage`, `index`), in chunks of at most
/// `chunk_bytes`.
fn delete_entries(
    base: &Base,
    snapshot: &BaseSnapshot,
    storage: u64,
    index: u32,
    chunk_bytes: usize,
) -> Result<(), EngineError> {
    let range = entry_range(storage, index, &(Bound::Unbounded, Bound::Unbounded));
    let (from, to) = borrowed(&range);
    let mut chunks = Chunks::new(base, chunk_bytes);
    for item in snapshot.iter(from, to) {
        chunks.push(item?.0.to_vec(), None)?;
    }
    chunks.write()
}

/// Changes for the base gathered in memory up to a bound (their bytes plus
/// [`ENTRY_OVERHEAD`] each), then written sorted as one ingestion.
pub(crate) struct Chunks<'a> {
    base: &'a Base,
    limit: usize,
    held: usize,
    changes: Vec<BaseChange>,
}

impl<'a> Chunks<'a> {
    pub(crate) fn new(base: &'a Base, limit: usize) -> Self {
        Chunks {
            base,
            limit,
            held: 0,
            changes: Vec::new(),
        }
    }

    /// Adds a change (`None`: a delete); writes the chunk once it reaches the bound.
    pub(crate) fn push(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<(), EngineError> {
        self.held += key.len() + value.as_ref().map_or(0, Vec::len) + ENTRY_OVERHEAD;
        self.changes.push((key, value));
        if self.held >= self.limit {
            self.write()?;
        }
        Ok(())
    }

    /// Adds the entry of `index` of `def`'s table (kept under `storage`) for `row`, whose
    /// storage key is `pk`; `entry` is scratch space.
    pub(crate) fn push_entry(
        &mut self,
        (storage, def, index): (u64, &TableDef, &IndexDef),
        row: &[Value],
        pk: &[u8],
        entry: &mut Vec<u8>,
    ) -> Result<(), EngineError> {
        entry.clear();
        index_key(def, index, row, entry);
        let klen = entry.len() as u32;
        entry.extend_from_slice(pk);
        self.push(
            entry_key(storage, index.id, entry),
            Some(encode_entry(klen)),
        )
    }

    /// Writes what is gathered, sorted, as one ingestion (nothing when empty).
    pub(crate) fn write(&mut self) -> Result<(), EngineError> {
        self.held = 0;
        if self.changes.is_empty() {
            return Ok(());
        }
        self.changes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // One change per key in an ingestion: a key pushed twice (rows a rewrite collapsed
        // into one primary key, which `table_rebuild.rs` counts) is written once.
        self.changes.dedup_by(|a, b| a.0 == b.0);
        self.base
            .checkpoint_streamed(&[], &mut self.changes.drain(..))?;
        Ok(())
    }
}

/// 1062 when two entries of the unique `index` (all in `snapshot`, in key order) have the same
/// key without a NULL in it; reads a row only for equal neighbours.
pub(crate) fn check_unique(
    root: &Root,
    snapshot: &BaseSnapshot,
    table: TableId,
    index: &IndexDef,
    storage: u64,
) -> Result<(), EngineError> {
    let range = entry_range(storage, index.id, &(Bound::Unbounded, Bound::Unbounded));
    let (from, to) = borrowed(&range);
    let mut prev: Option<Vec<u8>> = None;
    for item in snapshot.iter(from, to) {
        let (key, value) = item?;
        let bad = || snapshot.error("reading an index entry", "a key outside its index's range");
        let entry = entry_key_entry(storage, index.id, &key).ok_or_else(bad)?;
        let klen = decode_entry(&value, entry.len())
            .map_err(|e| snapshot.error("decoding an index entry", e))? as usize;
        let (ikey, pk) = entry.split_at(klen);
        if prev.as_deref() == Some(ikey) {
            let row = root.get(table, pk)?.ok_or_else(|| {
                EngineError::from(snapshot.error("reading an index entry", "its row is missing"))
            })?;
            if !index_has_null(index, &row) {
                return Err(duplicate_key(index, &row));
            }
        }
        prev = Some(ikey.to_vec());
    }
    Ok(())
}
