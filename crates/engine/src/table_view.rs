//! Reading one table through the layers of the paged store (docs/PAGED_STORE.md, build order
//! step 3, piece 2; the server does not give a root lower layers yet).
//!
//! Owns [`Lower`], what lies under a root's in-memory delta: the frozen delta of a running
//! checkpoint and a snapshot of the on-disk base, and [`TableView`], one table seen through the
//! delta, the frozen layer and the base, newest first, with the read methods of `store.rs`
//! (get, primary key scan, index scan, row count).
//!
//! Layers are matched by **storage id** (`TableData::storage`), not by table id: DDL that
//! empties or rewrites a table (TRUNCATE, ALTER that copies rows, a new index over rows that
//! are not all in the delta) gives it a new storage id, so the older layers' keys of the old
//! one are never read again (deleting them is piece 6).
//!
//! Invariants:
//! - a table's delta consults the lower layers only when `TableData::lower` is set; then a
//!   removed row or index entry is a tombstone (`None`) in the delta, so it hides the lower
//!   layers' copy, and a key present in a newer layer always wins;
//! - every layer keeps the index invariant of `store.rs` for what it holds: a row's entries
//!   change in the same layer as the row, so the merge of the entries of all layers is
//!   exactly one entry per row of the merge of their rows;
//! - `Lower::counts[storage]` is the number of rows of that storage in the frozen layer and
//!   the base together; a view's row count is it plus the delta's net change;
//! - a failed or undecodable base read is a [`BaseError`] naming the base's directory, yielded
//!   once by a scan, which then ends: never a missing or different row.

use std::ops::Bound;
use std::sync::Arc;

use imbl::OrdMap;

use crate::base::{BaseError, BaseSnapshot};
use crate::base_format::{
    decode_entry, decode_row, entry_key_entry, entry_range, row_key, row_key_pk, row_range,
};
use crate::cached_scan::CachedScan;
use crate::catalog::TableDef;
use crate::key::KeyBytes;
use crate::key::{borrowed, ByteRange};
use crate::layered::{Layer, Layered};
use crate::table_data::{IndexEntry, Row, TableData};

/// What lies under a root's delta (module docs). Shared by every root published between two
/// changes of the layers.
#[derive(Clone, Default)]
pub struct Lower {
    /// The frozen delta of a running checkpoint, by storage id.
    pub(crate) frozen: Option<OrdMap<u64, TableData>>,
    /// The base as of the newest completed checkpoint.
    pub(crate) base: Option<BaseSnapshot>,
    /// Rows of each storage id in `frozen` and `base` together.
    pub(crate) counts: OrdMap<u64, u64>,
    /// The sum of `counts`, once asked for (a new `Lower` with other counts starts without it:
    /// [`Lower::new`]).
    rows: std::sync::OnceLock<u64>,
}

impl Lower {
    pub(crate) fn new(
        frozen: Option<OrdMap<u64, TableData>>,
        base: Option<BaseSnapshot>,
        counts: OrdMap<u64, u64>,
    ) -> Lower {
        Lower {
            frozen,
            base,
            counts,
            rows: std::sync::OnceLock::new(),
        }
    }

    /// The same layers read through `base`, a newer snapshot of the same base that holds the
    /// same rows for every storage id counted (an index build's or a failed rewrite's records
    /// are under no counted row).
    pub(crate) fn with_snapshot(&self, base: BaseSnapshot) -> Lower {
        Lower {
            base: Some(base),
            ..self.clone()
        }
    }

    /// Rows of every storage id in the frozen layer and the base together.
    pub(crate) fn rows(&self) -> u64 {
        *self.rows.get_or_init(|| self.counts.values().sum())
    }
}

impl std::fmt::Debug for Lower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lower")
            .field("frozen", &self.frozen.as_ref().map(OrdMap::len))
            .field("base", &self.base.is_some())
            .field("counts", &self.counts.len())
            .finish()
    }
}

/// One table seen through its layers (module docs). Cheap to copy.
#[derive(Clone, Copy)]
pub struct TableView<'a> {
    def: &'a TableDef,
    delta: &'a TableData,
    frozen: Option<&'a TableData>,
    base: Option<&'a BaseSnapshot>,
    /// The lower layers, when the delta reads them.
    lower: Option<&'a Lower>,
}

/// A primary key scan's item.
pub type RowItem = Result<(KeyBytes, Arc<Row>), BaseError>;
/// An index scan's item.
pub type EntryItem = Result<(KeyBytes, IndexEntry), BaseError>;

/// A scan over the delta alone (no lower layers: today's path, no merge) or over the layers.
enum Either<A, B> {
    Delta(A),
    Layers(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        match self {
            Either::Delta(a) => a.next(),
            Either::Layers(b) => b.next(),
        }
    }
}

impl<'a> TableView<'a> {
    /// `delta` (of table `def`) over `lower`.
    pub(crate) fn new(def: &'a TableDef, delta: &'a TableData, lower: Option<&'a Lower>) -> Self {
        let lower = lower.filter(|_| delta.lower);
        let storage = delta.storage;
        let frozen = lower.and_then(|l| l.frozen.as_ref()?.get(&storage));
        // A frozen table that had nothing under it: the base has no keys of its storage.
        let base = lower
            .and_then(|l| l.base.as_ref())
            .filter(|_| frozen.is_none_or(|f| f.lower));
        TableView {
            def,
            delta,
            frozen,
            base,
            lower,
        }
    }

    pub(crate) fn layered(&self) -> bool {
        self.frozen.is_some() || self.base.is_some()
    }

    /// Number of rows (exact).
    pub fn row_count(&self) -> u64 {
        let below = self
            .lower
            .and_then(|l| l.counts.get(&self.delta.storage).copied())
            .unwrap_or(0);
        let n = below as i64 + self.delta.net_rows;
        debug_assert!(n >= 0, "{} rows in {}", n, self.def.qualified_name());
        n.max(0) as u64
    }

    /// The row with storage key `pk`.
    pub fn get(&self, pk: &[u8]) -> Result<Option<Arc<Row>>, BaseError> {
        if let Some(v) = self.delta.delta_row(pk) {
            return Ok(v);
        }
        self.get_below(pk)
    }

    /// The row with storage key `pk` in the layers under the delta.
    pub(crate) fn get_below(&self, pk: &[u8]) -> Result<Option<Arc<Row>>, BaseError> {
        if let Some(v) = self.frozen.and_then(|f| f.delta_row(pk)) {
            return Ok(v);
        }
        let Some(base) = self.base else {
            return Ok(None);
        };
        let key = row_key(self.delta.storage, pk);
        if let Some(row) = base.cached_row(&key, self.def.columns.len()) {
            return Ok(row);
        }
        if base.cache_fills_by_runs(self.lower.map_or(0, Lower::rows)) {
            // While the cache fills, and only when it could hold every row below, a miss
            // reads the run from its row on: under uniform point reads the cache warms a run
            // at a time, and keeps each row once. Data larger than the cache would decode 64
            // rows to use one.
            let columns = self.def.columns.len();
            let run = CachedScan::run_from(base, self.delta.storage, columns, &key)?;
            return Ok(run.row(&key).cloned());
        }
        match base.get(&key)? {
            Some(v) => self.decode_row(base, &key, &v).map(Some),
            None => Ok(None),
        }
    }

    /// The row the base holds at row key `key` with value `value`: decoded, and kept in the
    /// base's row cache (`row_cache.rs`) for the next point read.
    fn decode_row(
        &self,
        base: &BaseSnapshot,
        key: &[u8],
        value: &[u8],
    ) -> Result<Arc<Row>, BaseError> {
        let row = self.decode_scanned(base, value)?;
        base.keep_row(key, self.def.columns.len(), &row);
        Ok(row)
    }

    /// A row read from the base, decoded.
    fn decode_scanned(&self, base: &BaseSnapshot, value: &[u8]) -> Result<Arc<Row>, BaseError> {
        decode_row(value, self.def.columns.len())
            .map(Arc::new)
            .map_err(|e| base.error("decoding a row", e))
    }

    /// Rows with storage keys in `range`, in key order.
    pub fn scan_pk(&self, range: &ByteRange) -> impl Iterator<Item = RowItem> + 'a {
        if !self.layered() {
            let rows = self.delta.delta_rows(range);
            return Either::Delta(rows.filter_map(|(k, v)| v.map(|v| Ok((k, v)))));
        }
        let mut delta = self.delta.delta_rows(range).peekable();
        let base = self.base.map(|base| self.base_rows(base, range));
        let rows: Box<dyn Iterator<Item = RowItem> + 'a> = match base {
            // Nothing above the base in the range (the common case of a read-mostly table):
            // the base's rows as they come, without a merge.
            Some(base) if self.frozen.is_none() && delta.peek().is_none() => {
                Box::new(base.filter_map(|item| item.map(|(k, v)| v.map(|v| (k, v))).transpose()))
            }
            base => {
                let mut layers: Vec<Layer<'a, KeyBytes, Arc<Row>, BaseError>> =
                    vec![Box::new(delta.map(Ok))];
                if let Some(f) = self.frozen {
                    layers.push(Box::new(f.delta_rows(range).map(Ok)));
                }
                layers.extend(base);
                Box::new(Layered::new(layers))
            }
        };
        Either::Layers(rows)
    }

    /// The rows of this view's table in `base` with storage keys in `range`, as a layer:
    /// through the row cache's runs (`cached_scan.rs`) when the snapshot uses the cache.
    fn base_rows(
        &self,
        base: &'a BaseSnapshot,
        range: &ByteRange,
    ) -> Layer<'a, KeyBytes, Arc<Row>, BaseError> {
        let storage = self.delta.storage;
        let keys = row_range(storage, range);
        let (from, to) = borrowed(&keys);
        if base.caches_rows() {
            let columns = self.def.columns.len();
            return Box::new(CachedScan::new(base, storage, columns, from, to));
        }
        let view = *self;
        Box::new(base.iter(from, to).map(move |item| {
            let (k, v) = item?;
            let pk = row_key_pk(storage, &k)
                .ok_or_else(|| base.error("reading a row", "a key outside its table's range"))?;
            Ok((KeyBytes::from(pk), Some(view.decode_scanned(base, &v)?)))
        }))
    }

    /// Every row, in storage key order.
    pub fn all_rows(&self) -> impl Iterator<Item = Result<Arc<Row>, BaseError>> + 'a {
        self.scan_pk(&(Bound::Unbounded, Bound::Unbounded))
            .map(|item| item.map(|(_, row)| row))
    }

    /// Entries `(entry bytes, entry)` of index `index_id` in `range`, in key order. An entry
    /// read from the base gets its row by a [`get`](Self::get) through this view.
    pub fn scan_index(
        &self,
        index_id: u32,
        range: &ByteRange,
    ) -> impl Iterator<Item = EntryItem> + 'a {
        if !self.layered() {
            return Either::Delta(
                self.delta
                    .delta_entries(index_id, range)
                    .filter_map(|(k, e)| e.map(|e| Ok((k, e)))),
            );
        }
        type Part = (u32, Option<Arc<Row>>);
        let from_delta = |t: &'a TableData| {
            t.delta_entries(index_id, range)
                .map(|(k, e)| Ok((k, e.map(|e| (e.klen, Some(e.row))))))
        };
        let mut layers: Vec<Layer<'a, KeyBytes, Part, BaseError>> =
            vec![Box::new(from_delta(self.delta))];
        if let Some(f) = self.frozen {
            layers.push(Box::new(from_delta(f)));
        }
        if let Some(base) = self.base {
            let storage = self.delta.storage;
            let keys = entry_range(storage, index_id, range);
            let (from, to) = borrowed(&keys);
            let entries = base.iter(from, to).map(move |item| {
                let (k, v) = item?;
                let entry = entry_key_entry(storage, index_id, &k).ok_or_else(|| {
                    base.error("reading an index entry", "a key outside its index's range")
                })?;
                let klen = decode_entry(&v, entry.len())
                    .map_err(|e| base.error("decoding an index entry", e))?;
                Ok((KeyBytes::from(entry), Some((klen, None))))
            });
            layers.push(Box::new(entries));
        }
        let view = *self;
        let mut failed = false;
        Either::Layers(Layered::new(layers).map_while(move |item| {
            if failed {
                return None;
            }
            let item = item.and_then(|(key, (klen, row))| {
                let row = match row {
                    Some(row) => row,
                    None => view.get(&key[klen as usize..])?.ok_or_else(|| {
                        let detail = format!("the index entry {:02x?} names no row", &key[..]);
                        match view.base {
                            Some(base) => base.error("reading an index entry", detail),
                            None => BaseError {
                                dir: Default::default(),
                                doing: "reading an index entry",
                                detail,
                            },
                        }
                    })?,
                };
                Ok((key, IndexEntry { klen, row }))
            });
            failed = item.is_err();
            Some(item)
        }))
    }
}
