//! A primary key scan of one table's rows in the paged store's base through the row cache
//! (`row_cache.rs`, docs/PAGED_STORE.md build order step 7): the rows of the cached runs that
//! cover the range, and, where none does, rows read from fjall and decoded, kept as new runs
//! for the next scan or point read.
//!
//! Owns [`CachedScan`]. Invariants:
//! - it yields exactly the rows a plain scan of its snapshot yields (`BaseSnapshot::iter`,
//!   then `decode_row`), in key order, each once: a run it uses covers the key it stands at,
//!   so that run's rows from that key to the run's end are every row the snapshot has there,
//!   and it goes on at the run's end;
//! - a run it builds holds every row from where it started reading up to where it stopped:
//!   the next key fjall returned, the start of a cached run, or the scan's end;
//! - it offers the cache the runs of its first [`KEEP_ROWS`] rows read from fjall only, so
//!   one long scan does not evict what point reads and short scans keep using;
//! - a failed read or decode is yielded once and ends the scan.

use std::iter::Peekable;
use std::ops::Bound;
use std::sync::Arc;

use crate::base::{BaseError, BaseItem, BaseSnapshot};
use crate::base_format::{decode_row, row_key, StorageId};
use crate::key::{prefix_end, KeyBytes};
use crate::layered::LayerItem;
use crate::row_cache::{Run, RUN_ROWS};
use crate::table_data::Row;

/// Rows read from fjall after which a scan stops offering its runs to the cache.
pub const KEEP_ROWS: usize = 4 * 1024;
/// A cached run of at least this many rows ends a new run at its start instead of being
/// replaced by it (a smaller one, such as a point read's, is replaced).
const KEEP_NEXT: usize = 8;

type Records = Peekable<Box<dyn Iterator<Item = BaseItem>>>;

/// One table's rows in a key range of a base snapshot, through the row cache (module docs).
pub struct CachedScan {
    base: BaseSnapshot,
    /// Length of its table's row key prefix (every key it yields starts with that prefix).
    prefix: usize,
    columns: usize,
    /// The next base key it wants (inclusive).
    at: KeyBytes,
    /// Where it ends (exclusive; None: at no key).
    end: Option<KeyBytes>,
    /// The run it walks, and the index of its next row.
    run: Option<(Arc<Run>, usize)>,
    /// A read of fjall whose next record is the first at or after the key it is kept with (a
    /// run that stopped at [`RUN_ROWS`] rows leaves it for the next).
    reading: Option<(KeyBytes, Records)>,
    /// Rows read from fjall so far.
    read: usize,
    done: bool,
}

impl CachedScan {
    /// The rows of table storage `storage` (of `columns` columns) in `base` whose base keys
    /// lie between `from` and `to` (row keys: `base_format::row_range`).
    pub fn new(
        base: &BaseSnapshot,
        storage: StorageId,
        columns: usize,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
    ) -> CachedScan {
        let prefix = row_key(storage, &[]);
        let after = |k: &[u8]| {
            let mut v = k.to_vec();
            v.push(0);
            KeyBytes::from(v)
        };
        let at = match from {
            Bound::Included(k) => KeyBytes::from(k),
            Bound::Excluded(k) => after(k),
            Bound::Unbounded => KeyBytes::from(prefix.as_slice()),
        };
        let end = match to {
            Bound::Included(k) => Some(after(k)),
            Bound::Excluded(k) => Some(KeyBytes::from(k)),
            Bound::Unbounded => prefix_end(&prefix).map(KeyBytes::from),
        };
        let done = end.as_ref().is_some_and(|e| *e <= at);
        CachedScan {
            base: base.clone(),
            prefix: prefix.len(),
            columns,
            at,
            end,
            run: None,
            reading: None,
            read: 0,
            done,
        }
    }

    /// The run from base row key `key` on, read from fjall and offered to the cache (a point
    /// read that missed: as InnoDB reads the whole page of a missed row). It holds the row at
    /// `key` if the snapshot has one.
    pub fn run_from(
        base: &BaseSnapshot,
        storage: StorageId,
        columns: usize,
        key: &[u8],
    ) -> Result<Arc<Run>, BaseError> {
        CachedScan::new(
            base,
            storage,
            columns,
            Bound::Included(key),
            Bound::Unbounded,
        )
        .fill()
    }

    /// A new run from `at`, read from fjall (module docs), offered to the cache while the
    /// scan has read fewer than [`KEEP_ROWS`] rows.
    fn fill(&mut self) -> Result<Arc<Run>, BaseError> {
        let stop = self
            .base
            .next_cached_run(&self.at)
            .filter(|(lo, n)| *n >= KEEP_NEXT && self.end.as_ref().is_none_or(|e| lo < e))
            .map(|(lo, _)| lo);
        let mut records = match self.reading.take() {
            Some((at, records)) if at == self.at => records,
            _ => {
                let to = self
                    .end
                    .as_ref()
                    .map_or(Bound::Unbounded, |e| Bound::Excluded(&e[..]));
                let records: Box<dyn Iterator<Item = BaseItem>> =
                    Box::new(self.base.iter(Bound::Included(&self.at), to));
                records.peekable()
            }
        };
        let mut rows: Vec<(KeyBytes, Arc<Row>)> = Vec::new();
        let hi = loop {
            let key = match records.peek() {
                None => break self.end.clone(),
                Some(Ok((k, _))) => KeyBytes::from(&k[..]),
                Some(Err(_)) => {
                    return Err(match records.next() {
                        Some(Err(e)) => e,
                        _ => self.base.error("read", "a failed read was not returned"),
                    });
                }
            };
            if stop.as_ref().is_some_and(|s| key >= *s) {
                break stop;
            }
            if rows.len() == RUN_ROWS {
                self.reading = Some((key.clone(), records));
                break Some(key);
            }
            let value = match records.next() {
                Some(Ok((_, v))) => v,
                Some(Err(e)) => return Err(e),
                None => break self.end.clone(),
            };
            let row = decode_row(&value, self.columns)
                .map_err(|e| self.base.error("decoding a row", e))?;
            rows.push((key, Arc::new(row)));
        };
        self.read += rows.len();
        let run = Arc::new(Run::new(self.at.clone(), hi, self.columns, rows));
        if self.read <= KEEP_ROWS {
            self.base.keep_run(&run);
        }
        Ok(run)
    }
}

impl Iterator for CachedScan {
    type Item = LayerItem<KeyBytes, Arc<Row>, BaseError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if let Some((run, i)) = &mut self.run {
                if let Some((k, row)) = run.rows().get(*i) {
                    if self.end.as_ref().is_some_and(|e| k >= e) {
                        self.done = true;
                        return None;
                    }
                    *i += 1;
                    // Every key from `at` up to the end lies under the table's prefix.
                    let pk = KeyBytes::from(&k[self.prefix.min(k.len())..]);
                    return Some(Ok((pk, Some(row.clone()))));
                }
                match run.hi() {
                    Some(hi) if self.end.as_ref().is_none_or(|e| hi < &e[..]) => {
                        self.at = KeyBytes::from(hi);
                    }
                    _ => {
                        self.done = true;
                        return None;
                    }
                }
                self.run = None;
            }
            let run = match self.base.cached_run(&self.at, self.columns) {
                Some(run) => {
                    let i = run.position(&self.at);
                    (run, i)
                }
                None => match self.fill() {
                    Ok(run) => (run, 0),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                },
            };
            self.run = Some(run);
        }
    }
}
