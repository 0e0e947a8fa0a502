//! CREATE INDEX without holding the commit gate while its entries are built: the entries are
//! built from the rows of a root taken without the gate, while commits go on ([`prebuild`]);
//! then, under the exclusive gate, every row changed since that root moves its entry as a put
//! or delete would have, a unique index is checked for the values those changes brought, and
//! the DDL is logged as every DDL is (`ddl.rs`, [`Prebuilt::finish`]). The changed rows are
//! found by comparing the table's delta in the two roots (imbl's diff skips the subtrees they
//! share), so commits wait for the catch-up, not for the build. MariaDB's online ALTER does
//! the same with InnoDB's row log, applied at its end under an exclusive metadata lock.
//!
//! Owns [`Prebuilt`] and [`prebuild`], called by `ddl.rs` for CREATE INDEX. The entries are
//! built in memory for a table with nothing below its delta (the in-memory store, or a paged
//! table no checkpoint has written yet), or written into the paged store's base in chunks
//! (`index_build::write`, under the checkpoint writers' lock the DDL holds throughout).
//!
//! Invariants:
//! - The catch-up runs over the latest root under the exclusive gate, and only when that
//!   root's table is the prebuilt one's version: the same definition and generation (every DDL
//!   that changes a table gives it a new generation) and the same storage and, for entries
//!   written into the base, the same lower layers (no checkpoint can move rows while the
//!   writers' lock is held). Otherwise the prebuilt entries are dropped (those in the base
//!   deleted, best effort) and the DDL builds the index under the gate, as before.
//! - After the catch-up the index holds what a build from the latest root's rows would: a row
//!   equal in both roots has the entry built from it, and every other row had its entry moved
//!   from its old version (read through the first root) to its new one.
//! - A unique index is checked over the built entries before the gate, and under it for each
//!   value a changed row brought, against every entry of the caught-up index.
//! - Recovery and replicas replay the DDL after the commits it caught up with (those were
//!   logged before it) with the ordinary build, which gives the same entries.

use std::ops::Bound;
use std::sync::Arc;

use imbl::ordmap::DiffItem;

use crate::base::Base;
use crate::catalog::{CatalogChange, IndexDef, TableId};
use crate::error::EngineError;
use crate::index_build::{self, Written};
use crate::key::prefix_end;
use crate::store::{
    check_unique_entries, duplicate_key, entries_of, index_has_null, index_key, IndexEntries, Root,
    Row,
};

/// The entries of a CREATE INDEX built from the rows of an earlier root.
pub(crate) struct Prebuilt {
    from: Arc<Root>,
    change: CatalogChange,
    entries: Entries,
}

enum Entries {
    /// Built in memory, for a table with nothing below its delta.
    Memory(IndexEntries),
    /// Written into the base (`index_build::write`).
    Below(Written),
}

/// Builds the entries of the index `change` adds (CREATE INDEX) from `from`'s rows, without
/// the commit gate; a unique index over duplicate values fails with 1062. None when `change`
/// is not a CREATE INDEX or its table cannot be built this way (rows in a frozen layer of a
/// failed checkpoint, or below without `base`): the DDL then builds it under the gate.
pub(crate) fn prebuild(
    from: Arc<Root>,
    change: CatalogChange,
    base: Option<&Base>,
    chunk_bytes: usize,
) -> Result<Option<Prebuilt>, EngineError> {
    let CatalogChange::CreateIndex { table, index } = &change else {
        return Ok(None);
    };
    let Some(t) = from.tables.get(table) else {
        return Ok(None);
    };
    let entries = if t.lower {
        let Some(base) = base else {
            return Ok(None);
        };
        match index_build::write(&from, base, &change, chunk_bytes)? {
            Some(w) => Entries::Below(w),
            None => return Ok(None),
        }
    } else {
        // Validates the change and gives the definition the entries are keyed by.
        let catalog = from.catalog.apply(&change)?;
        let Some(def) = catalog.table(*table) else {
            return Ok(None);
        };
        let entries = entries_of(t, def, index);
        if index.unique {
            check_unique_entries(&entries, index)?;
        }
        Entries::Memory(entries)
    };
    Ok(Some(Prebuilt {
        from,
        change,
        entries,
    }))
}

impl Prebuilt {
    /// Under the exclusive gate, with `to` the latest root and `scratch` a copy of it: applies
    /// `change` (the DDL's, built again from `to`) to `scratch` with the prebuilt entries
    /// brought up to `to`'s rows, and checks a unique index for the values brought; true when
    /// done. False, with `scratch` untouched and the entries in the base deleted (best
    /// effort), when `to`'s table is not the version the entries were built from: the caller
    /// then builds the index as the DDL would without them.
    pub(crate) fn finish(
        self,
        scratch: &mut Root,
        to: &Root,
        change: &CatalogChange,
        (base, chunk_bytes): (Option<&Base>, usize),
    ) -> Result<bool, EngineError> {
        let CatalogChange::CreateIndex { table, index } = change else {
            return Ok(false);
        };
        if !self.builds(to, change) {
            if let (Entries::Below(w), Some(base)) = (&self.entries, base) {
                index_build::abandon(base, w, change, chunk_bytes);
            }
            return Ok(false);
        }
        let done = match &self.entries {
            Entries::Memory(entries) => scratch.apply_with_entries(change, entries.clone()),
            Entries::Below(written) => index_build::adopt(scratch, written, change),
        }
        .and_then(|()| catch_up(scratch, (&self.from, to), *table, index));
        if let (Err(_), Entries::Below(w), Some(base)) = (&done, &self.entries, base) {
            index_build::abandon(base, w, change, chunk_bytes);
        }
        done.map(|()| true)
    }

    /// Drops the entries without using them (the DDL failed before the gate): those written
    /// into the base are deleted, best effort (module docs).
    pub(crate) fn abandon(self, base: Option<&Base>, chunk_bytes: usize) {
        if let (Entries::Below(w), Some(base)) = (&self.entries, base) {
            index_build::abandon(base, w, &self.change, chunk_bytes);
        }
    }

    /// Whether the entries serve `change` over `to`: the same change, over the same version of
    /// its table (module docs).
    fn builds(&self, to: &Root, change: &CatalogChange) -> bool {
        let CatalogChange::CreateIndex { table, .. } = change else {
            return false;
        };
        let from = &self.from;
        let same_def = match (from.catalog.table(*table), to.catalog.table(*table)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        let same_data = match (from.tables.get(table), to.tables.get(table)) {
            (Some(a), Some(b)) => {
                a.generation == b.generation && a.storage == b.storage && a.lower == b.lower
            }
            _ => false,
        };
        let same_lower = match &self.entries {
            Entries::Memory(_) => true,
            Entries::Below(_) => match (&from.lower, &to.lower) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            },
        };
        self.change == *change && same_def && same_data && same_lower
    }
}

/// Moves the entry of `index` (in `scratch`, built from `from`'s rows) for every row of
/// `table` that differs between `from` and `to`, then checks a unique index for the values
/// those rows brought.
fn catch_up(
    scratch: &mut Root,
    (from, to): (&Root, &Root),
    table: TableId,
    index: &IndexDef,
) -> Result<(), EngineError> {
    let (Some(a), Some(b)) = (from.tables.get(&table), to.tables.get(&table)) else {
        return Ok(());
    };
    let Some(def) = scratch.catalog.table(table).cloned() else {
        return Ok(());
    };
    let key = |r: &Row| {
        let mut k = Vec::with_capacity(32);
        index_key(&def, index, r, &mut k);
        k
    };
    // (index key, primary key, row) of each value a changed row brought to a unique index.
    let mut brought: Vec<(Vec<u8>, Vec<u8>, Arc<Row>)> = Vec::new();
    for item in a.rows.diff(&b.rows) {
        let pk = match item {
            DiffItem::Add(k, _) | DiffItem::Remove(k, _) | DiffItem::Update { new: (k, _), .. } => {
                k
            }
        };
        let old = from.get(table, pk)?;
        let new = to.get(table, pk)?;
        scratch.move_index_entry((&def, index), pk, old.as_deref(), new.as_ref());
        if let (true, Some(row)) = (index.unique, new) {
            if !index_has_null(index, &row) {
                let ikey = key(&row);
                if old.is_none_or(|o| key(&o) != ikey) {
                    brought.push((ikey, pk.to_vec(), row));
                }
            }
        }
    }
    debug_assert!(
        scratch
            .tables
            .get(&table)
            .is_some_and(|t| t.indexes_in_step(&def)),
        "index {} out of step with its rows after the catch-up",
        index.name
    );
    for (ikey, pk, row) in brought {
        let end = prefix_end(&ikey).map_or(Bound::Unbounded, Bound::Excluded);
        let range = (Bound::Included(ikey.clone()), end);
        for item in scratch.scan_index(table, index.id, &range) {
            let (entry, e) = item?;
            let (k, epk) = entry.split_at(e.klen as usize);
            if k == ikey.as_slice() && epk != pk.as_slice() {
                return Err(duplicate_key(index, &row));
            }
        }
    }
    Ok(())
}
