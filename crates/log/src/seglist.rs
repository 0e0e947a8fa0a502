//! The segment list: which segments the log has, oldest first, with the LSN range of each.
//! Owns [`SegmentMeta`] and [`SegmentList`] (in `Inner::segments`); its vector is private and
//! changes only through the transitions below. Readers take a read guard ([`SegmentList::read`])
//! to find the segment of an LSN.
//!
//! States and who changes them:
//! - recovery builds the list from the segment files ([`SegmentList::new`]);
//! - rotation seals the current segment at the end LSN and appends the next
//!   ([`SegmentList::seal_and_push`], by the appender under the writer lock);
//! - reset (`RESET MASTER`) replaces every segment with a new number 1
//!   ([`SegmentList::reset_to`], by the appender under the writer lock);
//! - purge removes the oldest sealed segments ([`SegmentList::purge_before`], by `Log`).
//!
//! Invariants: the list is never empty; numbers are contiguous; each segment but the last is
//! sealed (has an end LSN) and ends where the next one starts; the last one is not sealed
//! (asserted after every transition).

use std::path::PathBuf;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::SystemTime;

use onelog_binlog::GtidState;

use crate::{Lsn, SegmentInfo};

/// One segment, as the log and readers know it.
#[derive(Clone, Debug)]
pub(crate) struct SegmentMeta {
    pub number: u64,
    pub path: PathBuf,
    pub start_lsn: Lsn,
    /// None for the current segment.
    pub end_lsn: Option<Lsn>,
    pub header_len: u64,
    pub state: Arc<GtidState>,
    /// When the segment stopped being written: the rotation that sealed it, or for a sealed
    /// segment found at open its file's modification time (the open time where the file
    /// system keeps none). None for the current segment. Retention's age of a segment.
    pub closed_at: Option<SystemTime>,
}

/// The segments, oldest first (see the module docs).
pub(crate) struct SegmentList {
    segs: RwLock<Vec<SegmentMeta>>,
}

/// Checks the module invariants (debug builds).
fn check(segs: &[SegmentMeta]) {
    debug_assert!(!segs.is_empty(), "the log has no segment");
    for w in segs.windows(2) {
        debug_assert_eq!(
            w[0].number + 1,
            w[1].number,
            "segment numbers not contiguous"
        );
        debug_assert_eq!(
            w[0].end_lsn,
            Some(w[1].start_lsn),
            "segment {} does not end where {} starts",
            w[0].number,
            w[1].number
        );
    }
    debug_assert!(segs.last().is_none_or(|s| s.end_lsn.is_none()));
}

impl SegmentList {
    /// The list recovery found (the last segment unsealed).
    pub fn new(segs: Vec<SegmentMeta>) -> Self {
        check(&segs);
        SegmentList {
            segs: RwLock::new(segs),
        }
    }

    pub fn read(&self) -> RwLockReadGuard<'_, Vec<SegmentMeta>> {
        self.segs.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<SegmentMeta>> {
        self.segs.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Rotation: the current segment ends at `next.start_lsn`, and `next` follows it.
    pub fn seal_and_push(&self, next: SegmentMeta) {
        let mut segs = self.write();
        if let Some(last) = segs.last_mut() {
            last.end_lsn = Some(next.start_lsn);
            last.closed_at = Some(SystemTime::now());
        }
        segs.push(next);
        check(&segs);
    }

    /// Reset: `first` (number 1) replaces every segment.
    pub fn reset_to(&self, first: SegmentMeta) {
        let mut segs = self.write();
        segs.clear();
        segs.push(first);
        check(&segs);
    }

    /// Removes the segments whose records end at or before `lsn` (never the current one),
    /// at most `max` of them (a plan's count: empty segments ending exactly at `lsn` that the
    /// plan did not name stay); returns them, oldest first.
    pub fn purge_before(&self, lsn: Lsn, max: usize) -> Vec<SegmentMeta> {
        let mut segs = self.write();
        let n = segs
            .iter()
            .take(max)
            .take_while(|s| s.end_lsn.is_some_and(|e| e <= lsn))
            .count();
        let doomed = segs.drain(..n).collect();
        check(&segs);
        doomed
    }

    /// The public view; the current segment ends at `written`.
    pub fn infos(&self, written: Lsn) -> Vec<SegmentInfo> {
        self.read()
            .iter()
            .map(|s| SegmentInfo {
                number: s.number,
                path: s.path.clone(),
                start_lsn: s.start_lsn,
                end_lsn: s.end_lsn.unwrap_or(written),
                header_len: s.header_len,
                closed_at: s.closed_at,
            })
            .collect()
    }
}
