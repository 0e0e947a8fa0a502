//! The paged store's checkpoint on roots (docs/PAGED_STORE.md, build order step 3, piece 4's
//! root side; the checkpoint scheduler does not run it yet): freezing a root's deltas into
//! the frozen layer, the changes that layer writes into the base, and the root that reads the
//! base instead once the base has them.
//!
//! The sequence, for a root R at a durable LSN: `F = R.freeze()` is published in R's place
//! (same rows: R's deltas are now F's frozen layer, F's deltas are empty); commits go on into
//! F's deltas; the checkpoint writes `F.frozen_changes()` into the base; then the current root
//! C (F or a later root over the same frozen layer) is replaced by `C.with_base(&F, snapshot)`,
//! which reads the new base snapshot where it read the frozen layer.
//!
//! Invariants: every step publishes a root with the same rows as the one it replaces (the
//! frozen layer answers until the base holds the same records, and it is dropped only by a
//! root whose base snapshot holds them); at most one frozen layer exists; the changes of a
//! frozen layer are in strictly ascending base key order, one per key.

use std::sync::Arc;

use crate::base::{Base, BaseChange, BaseError, BaseSnapshot};
use crate::key::borrowed;
use crate::store::{Retired, Root, BASE_ROOT_META};
use crate::table_view::Lower;

/// Two ascending streams of changes merged into one (no key is in both: module docs of
/// [`Root::write_frozen_into`]'s caller).
struct MergeAscending<A: Iterator<Item = BaseChange>, B: Iterator<Item = BaseChange>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = BaseChange>, B: Iterator<Item = BaseChange>> Iterator
    for MergeAscending<A, B>
{
    type Item = BaseChange;

    fn next(&mut self) -> Option<BaseChange> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if x.0 <= y.0 => self.a.next(),
            (Some(_), Some(_)) | (None, _) => self.b.next(),
            (Some(_), None) => self.a.next(),
        }
    }
}

impl Root {
    /// This root with every table's delta frozen (module docs); `None` while a frozen layer
    /// from an earlier freeze is still there.
    pub fn freeze(&self) -> Option<Root> {
        if self.has_frozen_layer() {
            return None;
        }
        let below = self.lower.as_deref();
        let mut counts = below.map(|l| l.counts.clone()).unwrap_or_default();
        let mut frozen = imbl::OrdMap::new();
        let mut root = self.clone();
        for (id, t) in self.tables.iter() {
            let under = if t.lower {
                counts.get(&t.storage).copied().unwrap_or(0)
            } else {
                0
            };
            let rows = under as i64 + t.net_rows;
            debug_assert!(rows >= 0, "table {id}: {rows} rows");
            counts.insert(t.storage, rows.max(0) as u64);
            frozen.insert(t.storage, t.clone());
            root.tables.insert(*id, t.over_frozen());
        }
        root.lower = Some(Arc::new(Lower::new(
            Some(frozen),
            below.and_then(|l| l.base.clone()),
            counts,
        )));
        Some(root)
    }

    /// Whether a frozen layer is there (a checkpoint into the base runs, or the last one
    /// failed).
    pub fn has_frozen_layer(&self) -> bool {
        self.lower.as_ref().is_some_and(|l| l.frozen.is_some())
    }

    /// Memory the frozen layer holds, estimated (`TableData::memory_estimate`; 0 without one).
    pub(crate) fn frozen_memory(&self) -> u64 {
        self.lower
            .as_ref()
            .and_then(|l| l.frozen.as_ref())
            .map_or(0, |f| f.values().map(|t| t.memory_estimate()).sum())
    }

    /// The frozen layer's changes as base records, in base key order (empty without one).
    pub fn frozen_changes(&self) -> Vec<BaseChange> {
        self.frozen_change_iter().collect()
    }

    /// [`Self::frozen_changes`] encoded one at a time: every storage id's rows (key kind 1,
    /// storage ids ascending), then every storage id's index entries (kind 2), so the whole is
    /// in base key order without being held at once.
    fn frozen_change_iter(&self) -> impl Iterator<Item = BaseChange> + '_ {
        let frozen = self.lower.as_ref().and_then(|l| l.frozen.as_ref());
        let tables = move || frozen.into_iter().flat_map(|f| f.iter());
        let rows = tables().flat_map(|(storage, t)| t.row_changes(*storage));
        let entries = tables().flat_map(|(storage, t)| t.entry_changes(*storage));
        rows.chain(entries)
    }

    /// Deletes of the base records this root retired (`Root::retired`: tables dropped,
    /// truncated or rewritten, dropped indexes), at most `budget` keys, in base key order,
    /// read from this root's base snapshot; and the retired entries whose last records they
    /// are. One with more records than the budget leaves stays retired: the next checkpoint
    /// goes on (the deleted keys no longer show in its snapshot).
    pub fn purge_changes(
        &self,
        budget: usize,
    ) -> Result<(Vec<BaseChange>, Vec<Retired>), BaseError> {
        let (mut out, mut done) = (Vec::new(), Vec::new());
        let Some(base) = self.lower.as_ref().and_then(|l| l.base.as_ref()) else {
            // Nothing was ever written: no records to delete.
            return Ok((out, self.retired.clone()));
        };
        for retired in &self.retired {
            let mut whole = true;
            for range in retired.ranges() {
                let (from, to) = borrowed(&range);
                for item in base.iter(from, to) {
                    if out.len() >= budget {
                        whole = false;
                        break;
                    }
                    out.push((item?.0.to_vec(), None));
                }
            }
            if !whole {
                break;
            }
            done.push(*retired);
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.dedup_by(|a, b| a.0 == b.0);
        Ok((out, done))
    }

    /// Writes this root, one [`freeze`](Self::freeze) returned, into `base` as one atomic
    /// ingestion: its frozen layer's changes, the deletes of at most `purge_budget` keys of
    /// its retired storage ids ([`Self::purge_changes`]) and its root record. Returns the new
    /// snapshot and the storage ids whose last records it deleted, for
    /// [`with_base`](Self::with_base). The caller has made the log durable up to this root's
    /// LSN.
    pub fn write_frozen_into(
        &self,
        base: &Base,
        purge_budget: usize,
    ) -> Result<(BaseSnapshot, Vec<Retired>), BaseError> {
        let (purge, purged) = self.purge_changes(purge_budget)?;
        // Both parts ascend; the purged storage ids are no live table's of this root, so no
        // key is in both. Merged as they are encoded: the frozen layer is never held twice.
        let mut changes = MergeAscending {
            a: purge.into_iter().peekable(),
            b: self.frozen_change_iter().peekable(),
        };
        let meta = self.encode_base_meta(&purged);
        base.checkpoint_streamed(&[(BASE_ROOT_META, &meta)], &mut changes)?;
        Ok((base.snapshot(), purged))
    }

    /// This root reading `base` where it read the frozen layer of `frozen` (the root
    /// [`freeze`](Self::freeze) returned), once `base` holds that layer's changes and the
    /// deletes of every record of the retired storage ids `purged`. `None` when this root is
    /// not over that frozen layer.
    pub fn with_base(&self, frozen: &Root, base: BaseSnapshot, purged: &[Retired]) -> Option<Root> {
        let (Some(mine), Some(theirs)) = (&self.lower, &frozen.lower) else {
            return None;
        };
        if !Arc::ptr_eq(mine, theirs) || mine.frozen.is_none() {
            return None;
        }
        let mut root = self.clone();
        let mut counts = mine.counts.clone();
        for r in purged {
            if let Retired::Storage(s) = r {
                counts.remove(s);
            }
        }
        root.retired.retain(|s| !purged.contains(s));
        root.lower = Some(Arc::new(Lower::new(None, Some(base), counts)));
        Some(root)
    }
}
