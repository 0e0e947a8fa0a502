//! `Shared`: the state of the log every part of it reads: the file system, the options, the
//! positions and health ([`Progress`], under a mutex with its condvar), the segment list
//! ([`SegmentList`]), the preparer of the next segment, the counters, the readers' pins
//! ([`PinRegistry`]); and the one way to
//! fdatasync a segment ([`Shared::fdatasync`]) and to fail the log ([`Shared::fail`]).
//!
//! It is the part of `Inner` (`inner.rs`) the appender and the preparer need; it imports
//! none of the modules that take an `Inner`, so the crate's modules form no import circle.
//!
//! Invariants: `fsync_gate` is held across every fdatasync of a segment, and a sync is never
//! attempted once the log failed (checked under the gate; a failed sync enters the failed
//! state before it returns, asserted; the state is never left); the progress invariants are
//! `progress.rs`'s.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::error::LogError;
use crate::fs::FileSystem;
use crate::locks::lock;
use crate::pins::PinRegistry;
use crate::prealloc::Preparer;
use crate::progress::Progress;
use crate::seglist::{SegmentList, SegmentMeta};
use crate::{Durability, LogOptions};

/// The log's counters (`Log::stats`).
#[derive(Default)]
pub(crate) struct Stats {
    pub commits: AtomicU64,
    pub groups: AtomicU64,
    pub fsyncs: AtomicU64,
    pub bytes_written: AtomicU64,
    pub binlog_fsyncs: AtomicU64,
    pub binlog_bytes: AtomicU64,
    pub idle_marks: AtomicU64,
    /// The commit path's phases, in nanoseconds (summed; `LogStats` documents each).
    pub phases: PhaseCounters,
}

/// Time spent in each phase of the commit path, summed in nanoseconds, and the commit groups
/// by size (`LogStats::phases`). Each is one relaxed atomic add per record or per group.
#[derive(Default)]
pub(crate) struct PhaseCounters {
    pub queue_wait: AtomicU64,
    pub encode: AtomicU64,
    pub write: AtomicU64,
    pub apply: AtomicU64,
    /// The part of `apply` spent while another leader's fsync was in flight.
    pub apply_in_sync: AtomicU64,
    pub sync: AtomicU64,
    pub ack: AtomicU64,
    pub fsync_busy: AtomicU64,
    pub group_sizes: [AtomicU64; crate::GROUP_SIZE_BUCKETS],
}

impl PhaseCounters {
    /// Adds the time since `since` to `c`.
    pub fn add(c: &AtomicU64, since: std::time::Instant) {
        c.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Counts a group of `n` records in its size bucket (1, 2-3, 4-7, ..., 64 and more).
    pub fn group(&self, n: usize) {
        let b = (usize::BITS - n.max(1).leading_zeros() - 1) as usize;
        self.group_sizes[b.min(crate::GROUP_SIZE_BUCKETS - 1)].fetch_add(1, Ordering::Relaxed);
    }
}

/// The state every part of the log reads (see the module docs).
pub(crate) struct Shared {
    pub fs: Arc<dyn FileSystem>,
    pub opts: LogOptions,
    pub fde: Vec<u8>,
    pub durability: AtomicU8,
    /// Held across every `fdatasync` of a segment and nothing else (innermost lock): see
    /// [`Shared::fdatasync`].
    pub fsync_gate: Mutex<()>,
    pub segments: SegmentList,
    pub progress: Mutex<Progress>,
    pub progress_cv: Condvar,
    pub preparer: Preparer,
    /// Sealed segments to shorten to their records (`trim.rs`).
    pub untrimmed: crate::trim::Untrimmed,
    pub stats: Stats,
    /// Measured sizes of the classic view's files (`view.rs`).
    pub view_sizes: crate::view_cache::ViewSizes,
    /// Open readers' positions (`pins.rs`), which purges respect.
    pub pins: Arc<PinRegistry>,
    /// `gtid_strict_mode`: records with a fixed GTID must be above their domain's last.
    pub gtid_strict: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub fn durability(&self) -> Durability {
        Durability::from_level(self.durability.load(Ordering::SeqCst)).unwrap_or(Durability::Level1)
    }

    /// Why the log takes no writes, if it does not.
    pub fn refusal(&self) -> Option<LogError> {
        let p = lock(&self.progress);
        if p.is_closed() {
            Some(LogError::Closed)
        } else {
            p.failed().map(|f| LogError::Failed(f.to_string()))
        }
    }

    /// The one way the log fdatasyncs a segment. Syncs are serialised on `fsync_gate`, and the
    /// failed state is checked and (on error) entered while the gate is held: the kernel
    /// reports a writeback error to one `fsync` of a file description only, so two syncs in
    /// flight at once could have one see EIO and the other return success for the same lost
    /// pages. Serialised, a sync that succeeds covers everything written before it began, a
    /// sync after a failed one never runs (the failed sync is never retried), and `what`
    /// describes the failed sync in the failure message.
    pub fn fdatasync(
        &self,
        file: &dyn crate::fs::File,
        what: impl FnOnce(std::io::Error) -> String,
    ) -> Result<(), LogError> {
        let _gate = lock(&self.fsync_gate);
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        self.stats.fsyncs.fetch_add(1, Ordering::SeqCst);
        let began = std::time::Instant::now();
        let r = file.sync_data();
        // One fsync at a time (the gate): the sum is the time an fsync was in flight.
        PhaseCounters::add(&self.stats.phases.fsync_busy, began);
        r.map_err(|e| {
            let msg = self.fail(what(e));
            debug_assert!(
                self.refusal().is_some(),
                "a failed sync left the log writable"
            );
            LogError::Failed(msg)
        })
    }

    /// Enters the failed state (the first reason wins) and wakes everybody.
    pub fn fail(&self, why: String) -> String {
        let mut p = lock(&self.progress);
        let msg = p.fail(why);
        drop(p);
        self.progress_cv.notify_all();
        msg
    }

    pub fn segments_read(&self) -> std::sync::RwLockReadGuard<'_, Vec<SegmentMeta>> {
        self.segments.read()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_sizes_go_to_power_of_two_buckets() {
        let c = PhaseCounters::default();
        for n in [0, 1, 2, 3, 4, 7, 8, 63, 64, 10_000] {
            c.group(n);
        }
        let got: Vec<u64> = c
            .group_sizes
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        // 0 and 1 | 2, 3 | 4, 7 | 8 | - | 63 | 64, 10000
        assert_eq!(got, vec![2, 2, 2, 1, 0, 1, 2]);
    }
}
