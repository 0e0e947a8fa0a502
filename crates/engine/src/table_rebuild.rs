//! DDL that rewrites every row of a table whose rows lie in the paged store's base (ADD COLUMN,
//! DROP COLUMN, a copying ALTER TABLE; docs/PAGED_STORE.md, step 3's chunked rebuild): the new
//! rows and their index entries are written into the base under a new storage id in sorted
//! chunks of a bounded size, so rewriting a table many times the memory budget holds at most
//! one chunk in memory, and the table gets an empty delta over them. The old storage id is
//! retired (later checkpoints delete its records a bounded number at a time). Where the
//! rebuild does not apply (the in-memory store, a table with nothing below its delta, a frozen
//! layer left by a failed checkpoint, an ALTER that keeps the rows), the change is applied in
//! memory as before (`Root::apply_catalog_change`).
//!
//! Owns [`build_below`] (this rewrite, or `index_build.rs`'s index build), called by `ddl.rs`
//! under the checkpoint writers' lock and the exclusive commit gate before the DDL is logged,
//! and by recovery's replay of such a DDL; and [`sweep_unclaimed`], called by the open before
//! replay.
//!
//! Invariants:
//! - The base changes only by checkpoints, `index_build.rs` and this rebuild, never two at
//!   once (the checkpoint writers' lock, and no frozen layer), so the root's base snapshot is
//!   swapped for the one after the rebuild with nothing else changed.
//! - The new rows are the old ones as the root reads them (delta over base), each edited as
//!   the in-memory path edits it (`store.rs`: `rewritten_row`), in primary key
//!   order, hidden row ids numbered from 0 in that order: the rebuilt table equals the one
//!   the in-memory path builds, so a replica or a replay that takes either path agrees.
//! - The storage id written is the root's `next_storage`, which no root hands out before this
//!   DDL is logged. A rebuild that fails after writing leaves its root past that id with the
//!   id retired ([`abandoned`]; `ddl.rs` publishes that on the error path), so whatever it wrote
//!   is purged by checkpoints and never read as a later table's rows. A crash after writing and
//!   before the DDL record is durable leaves records at or above the recovered root's
//!   `next_storage`: the open deletes every such record before replay ([`sweep_unclaimed`]),
//!   and replay of a logged DDL writes its rebuild again, so recovery never trusts records it
//!   cannot tie to the DDL it replays. A rebuild still deletes whatever its id holds before
//!   writing (nothing, by the rules above; a debug build asserts it).
//! - The commit sink publishes the root the DDL validated (`ddl.rs`, `attach_validated`): the
//!   exclusive gate makes the DDL its group's only record, on the root it was validated on.
//!   Applying the change in memory there instead would give the table the same storage id
//!   with nothing below it, over the records this rebuild wrote.
//! - A primary key is unique in the new table: when the new keys come in ascending order (ADD
//!   and DROP COLUMN keep them; most ALTERs do), by construction; otherwise the base's rows
//!   under the new id are counted after the write, and a count short of the rows written (two
//!   rows collapsed into one key) abandons the rebuild for the in-memory path, which reports
//!   the duplicate as 1062. Unique indexes of a copying ALTER are checked over the written
//!   entries (`index_build.rs`'s check).

use std::ops::Bound;
use std::sync::Arc;

use onelog_binlog::Value;

use crate::base::{Base, BaseSnapshot};
use crate::base_format::{encode_row, row_key, row_range, storage_ranges, unclaimed_ranges};
use crate::catalog::{CatalogChange, TableDef};
use crate::error::EngineError;
use crate::index_build::{self, check_unique, Chunks};
use crate::key::{borrowed, ByteRange};
use crate::scheduler::CheckpointSerial;
use crate::store::{
    auto_inc_value, hidden_key, hidden_row_key, pk_key, rewritten_row, row_prefix, Retired, Root,
};
use crate::table_view::Lower;

/// Writes what `change` builds from a table's rows into `base` where that applies, and applies
/// the change to `root` over it: a new index's entries (`index_build.rs`), or the table an
/// ADD / DROP COLUMN or a copying ALTER TABLE rewrites, under `root`'s next storage id. Returns
/// false when neither applies (the table's rows are not in the base, a checkpoint is half
/// written, an ALTER keeps the rows, two new rows share a primary key); the caller then
/// applies the change in memory, and `root` may have moved past a storage id a rewrite gave
/// up. At most `chunk_bytes` of records are held at a time. On an error (a value the copy
/// refuses, 1062, a failed write), `root` is left past the storage id it wrote (module docs).
/// `_serial`: the checkpoint writers' lock `ddl.rs` holds; None at recovery's replay, before
/// any checkpoint can run (and after [`sweep_unclaimed`] removed what a rewrite before the
/// crash wrote).
pub(crate) fn build_below(
    root: &mut Root,
    base: &Base,
    _serial: Option<&CheckpointSerial<'_>>,
    change: &CatalogChange,
    chunk_bytes: usize,
) -> Result<bool, EngineError> {
    Ok(index_build::build(root, base, change, chunk_bytes)?
        || rewrite(root, base, change, chunk_bytes)?)
}

/// Deletes every record `base` holds under a storage id at or above `root`'s next one (what a
/// rebuild wrote before a crash, its DDL not logged or to be replayed), in chunks of at most
/// `chunk_bytes`; returns how many. Called by the open before replay, when `root` is the one
/// the base's root record holds: every storage id a checkpoint wrote is below its next one.
pub(crate) fn sweep_unclaimed(
    root: &Root,
    base: &Base,
    chunk_bytes: usize,
) -> Result<u64, EngineError> {
    delete_ranges(base, &unclaimed_ranges(root.next_storage), chunk_bytes)
}

/// Deletes every record `base` holds in `ranges`, in chunks of at most `chunk_bytes`; returns
/// how many.
fn delete_ranges(
    base: &Base,
    ranges: &[ByteRange],
    chunk_bytes: usize,
) -> Result<u64, EngineError> {
    let snapshot = base.snapshot();
    let mut chunks = Chunks::new(base, chunk_bytes.max(1));
    let mut n = 0;
    for range in ranges {
        let (from, to) = borrowed(range);
        for item in snapshot.iter(from, to) {
            chunks.push(item?.0.to_vec(), None)?;
            n += 1;
        }
    }
    chunks.write()?;
    Ok(n)
}

fn rewrite(
    root: &mut Root,
    base: &Base,
    change: &CatalogChange,
    chunk_bytes: usize,
) -> Result<bool, EngineError> {
    let (def, table) = match change {
        CatalogChange::DropColumn { table, .. }
        | CatalogChange::AddColumn { table, .. }
        | CatalogChange::AlterTable { table, .. } => (table, table.id),
        _ => return Ok(false),
    };
    let Some(old) = root.catalog.table(table).cloned() else {
        return Ok(false);
    };
    if let CatalogChange::AlterTable { sources, .. } = change {
        if crate::alter::keeps_rows(&old, def, sources) {
            return Ok(false);
        }
    }
    let Some(lower) = root.lower.clone() else {
        return Ok(false);
    };
    if lower.base.is_none() || lower.frozen.is_some() {
        return Ok(false);
    }
    let Some(auto_inc_next) = root
        .tables
        .get(&table)
        .filter(|t| t.lower)
        .map(|t| t.auto_inc_next)
    else {
        return Ok(false);
    };
    // Validates the change before anything is written.
    root.catalog.apply(change)?;
    let storage = root.next_storage;
    // Nothing is there (module docs); were something left, the row count below would
    // include it.
    let left = delete_ranges(base, &storage_ranges(storage), chunk_bytes);
    debug_assert!(
        left.as_ref().map_or(true, |n| *n == 0),
        "records under {storage}"
    );
    left?;
    let built =
        write_rows(root, base, (&old, change, def), storage, chunk_bytes.max(1)).and_then(|w| {
            finish(
                root,
                base,
                (change, def),
                (&lower, storage),
                (w, auto_inc_next),
            )
        });
    match built {
        Ok(true) => Ok(true),
        Ok(false) => {
            // The in-memory path goes on from `root`, past the id (module docs).
            if let Some(past) = abandoned(root, storage + 1, base) {
                *root = past;
            }
            Ok(false)
        }
        Err(e) => {
            // `ddl.rs` retires every id the failed DDL handed out (`abandoned`).
            root.next_storage = root.next_storage.max(storage + 1);
            Err(e)
        }
    }
}

/// Rows of one table written under one storage id in the order they come, each with its
/// index entries, into sorted chunks: what [`write_rows`] and the conversion of a checkpoint
/// (`convert.rs`) write, and what they wrote.
pub(crate) struct RowsWriter {
    storage: u64,
    pub(crate) rows: u64,
    /// The next hidden row id (a table without primary key).
    pub(crate) next_row_id: u64,
    /// The largest AUTO_INCREMENT value among the rows.
    pub(crate) auto_inc_max: Option<u64>,
    /// Whether the storage keys came strictly ascending (so no two are equal; hidden keys
    /// always do).
    pub(crate) ascending: bool,
    previous: Option<Vec<u8>>,
    /// Scratch space for an index entry.
    entry: Vec<u8>,
}

impl RowsWriter {
    /// A writer of rows under `storage`, hidden row ids from `next_row_id` on.
    pub(crate) fn new(storage: u64, next_row_id: u64) -> Self {
        RowsWriter {
            storage,
            rows: 0,
            next_row_id,
            auto_inc_max: None,
            ascending: true,
            previous: None,
            entry: Vec::with_capacity(64),
        }
    }

    /// Adds `row` of `def`'s table, keyed by its primary key (or the next hidden row id), and
    /// its index entries to `chunks`.
    pub(crate) fn push(
        &mut self,
        chunks: &mut Chunks<'_>,
        def: &TableDef,
        row: &[Value],
    ) -> Result<(), EngineError> {
        let pk = if hidden_key(def) {
            self.next_row_id += 1;
            hidden_row_key(row_prefix(def, row), self.next_row_id - 1)
        } else {
            let pk = pk_key(def, row);
            if self.previous.as_ref().is_some_and(|p| *p >= pk) {
                self.ascending = false;
            }
            self.previous = Some(pk.clone());
            pk
        };
        if let Some(a) = def.auto_increment {
            self.auto_inc_max = self.auto_inc_max.max(Some(auto_inc_value(row, a)));
        }
        for index in &def.indexes {
            chunks.push_entry((self.storage, def, index), row, &pk, &mut self.entry)?;
        }
        chunks.push(row_key(self.storage, &pk), Some(encode_row(row)))?;
        self.rows += 1;
        Ok(())
    }
}

/// Writes every row of the table (read as `old`'s through `root`'s layers, in primary key
/// order) as `change` makes it a row of `def` (`rewritten_row`), with its index entries, under
/// `storage`, in sorted chunks of at most `chunk_bytes`.
fn write_rows(
    root: &Root,
    base: &Base,
    (old, change, def): (&TableDef, &CatalogChange, &TableDef),
    storage: u64,
    chunk_bytes: usize,
) -> Result<RowsWriter, EngineError> {
    let all: ByteRange = (Bound::Unbounded, Bound::Unbounded);
    let mut w = RowsWriter::new(storage, 0);
    let mut chunks = Chunks::new(base, chunk_bytes);
    for item in root.scan_pk(old.id, &all) {
        let (_, row) = item?;
        let row = rewritten_row(change, old, w.rows + 1, &row)?;
        w.push(&mut chunks, def, &row)?;
    }
    chunks.write()?;
    Ok(w)
}

/// After [`write_rows`]: checks the keys (module docs), then gives `root` the base snapshot
/// with the new records and applies `change` over them. False: two new rows share a primary
/// key, for the in-memory path to report.
fn finish(
    root: &mut Root,
    base: &Base,
    (change, def): (&CatalogChange, &TableDef),
    (lower, storage): (&Lower, u64),
    (w, auto_inc_next): (RowsWriter, u64),
) -> Result<bool, EngineError> {
    let after = base.snapshot();
    if !w.ascending && count_rows(&after, storage)? != w.rows {
        return Ok(false);
    }
    let mut counts = lower.counts.clone();
    counts.insert(storage, w.rows);
    root.lower = Some(Arc::new(Lower::new(None, Some(after.clone()), counts)));
    // The counter raised past the new rows, as the in-memory path's puts raise it, before the
    // change applies (its `AUTO_INCREMENT=N` has the last word, as there).
    if let Some(t) = root.tables.get_mut(&def.id) {
        t.auto_inc_next = w
            .auto_inc_max
            .map_or(auto_inc_next, |m| auto_inc_next.max(m.saturating_add(1)));
    }
    root.apply_built_below(change)?;
    if let Some(t) = root.tables.get_mut(&def.id) {
        debug_assert_eq!(t.storage, storage, "the rebuilt table's storage id");
        t.next_row_id = w.next_row_id;
    }
    if let CatalogChange::AlterTable { .. } = change {
        for index in def.indexes.iter().filter(|i| i.unique) {
            check_unique(root, &after, def.id, index, storage)?;
        }
    }
    Ok(true)
}

/// The number of rows `snapshot` holds under `storage`.
fn count_rows(snapshot: &BaseSnapshot, storage: u64) -> Result<u64, EngineError> {
    let range = row_range(storage, &(Bound::Unbounded, Bound::Unbounded));
    let (from, to) = borrowed(&range);
    let mut n = 0;
    for item in snapshot.iter(from, to) {
        item?;
        n += 1;
    }
    Ok(n)
}

/// `root` moved past the storage ids below `handed_out` that a DDL which failed (a rebuild, or
/// its logging) handed out, with those ids retired and its base snapshot one that holds what
/// a rebuild wrote under them, so that checkpoints purge it (they delete what their snapshot
/// shows). None when `root` is past them already. The caller holds the checkpoint writers'
/// lock, so the base has changed only by the rebuild since `root`'s snapshot: the newer
/// snapshot shows every table as the old one did. Over a frozen layer (a failed checkpoint
/// waiting to be written again) no rebuild ran, and the lower layers stay the very ones the
/// retry must find (`Root::with_base` compares them by identity).
pub(crate) fn abandoned(root: &Root, handed_out: u64, base: &Base) -> Option<Root> {
    if handed_out <= root.next_storage {
        return None;
    }
    let mut past = root.clone();
    past.retired
        .extend((root.next_storage..handed_out).map(Retired::Storage));
    past.next_storage = handed_out;
    if let Some(lower) = root.lower.as_ref().filter(|l| l.frozen.is_none()) {
        past.lower = Some(Arc::new(lower.with_snapshot(base.snapshot())));
    }
    Some(past)
}
