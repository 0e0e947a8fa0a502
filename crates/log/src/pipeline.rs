//! The state of the commit pipeline, as types: the commit queue ([`Queue`], with each
//! committer's [`Slot`]), the adaptive gather ([`Gather`]) and the flusher's control
//! ([`FlusherCtl`]). They live in `Inner`; the procedures that run the pipeline over them are
//! `group_commit.rs` and `flusher.rs` (see their docs for the protocol). Kept apart from those
//! so that `Inner` imports no module that imports it.
//!
//! Invariants: a committer's slot is completed exactly once (asserted in [`Slot::set`]); the
//! gather's epoch only grows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::LogError;
use crate::locks::lock;
use crate::{CommitReceipt, PendingRecord};

pub(crate) enum SlotState {
    Waiting,
    Lead,
    Done(Result<CommitReceipt, LogError>),
}

pub(crate) struct Slot {
    pub(crate) state: Mutex<SlotState>,
    pub(crate) cv: Condvar,
}

impl Slot {
    pub(crate) fn set(&self, s: SlotState) {
        let mut st = lock(&self.state);
        debug_assert!(
            !matches!(*st, SlotState::Done(_)),
            "a committer's slot completed twice"
        );
        *st = s;
        drop(st);
        self.cv.notify_one();
    }
}

pub(crate) struct Waiter {
    pub(crate) slot: Arc<Slot>,
    pub(crate) rec: PendingRecord,
    /// `Gather::sync_epoch` when it enqueued.
    pub(crate) epoch: u64,
}

/// The commit queue, guarded by `Inner::queue`.
#[derive(Default)]
pub(crate) struct Queue {
    pub(crate) waiting: Vec<Waiter>,
    pub(crate) leader: bool,
    /// While a leader gathers: wake it (`Gather::cv`) once `waiting` holds this many.
    pub(crate) gather_for: Option<usize>,
    /// Records the last group sync covered (set by its leader before it synced).
    pub(crate) last_sync_records: usize,
}

/// Gathers shorter than this are not attempted (see module docs).
pub const MIN_GATHER: Duration = Duration::from_micros(50);

/// Shared state of the adaptive gather (module docs).
#[derive(Default)]
pub(crate) struct Gather {
    /// Signalled (with `Inner::queue`) when a gathering leader's target is reached.
    pub(crate) cv: Condvar,
    /// Completed group fsyncs; bumped under the sync lock right after each one.
    pub(crate) sync_epoch: AtomicU64,
    /// Moving average (weight 1/8) of fsync latency (`sync_to_then`), in nanoseconds.
    pub(crate) fsync_avg_ns: AtomicU64,
}

impl Gather {
    /// Called under the sync lock after a successful group fsync that took `took`.
    pub fn synced(&self, took: Duration) {
        let ns = took.as_nanos().min(u64::MAX as u128) as u64;
        let avg = self.fsync_avg_ns.load(Ordering::Relaxed);
        let avg = if avg == 0 { ns } else { avg - avg / 8 + ns / 8 };
        self.fsync_avg_ns.store(avg, Ordering::Relaxed);
        self.sync_epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// How long a gather may wait: 1/8 of the average fsync latency.
    pub fn bound(&self) -> Duration {
        Duration::from_nanos(self.fsync_avg_ns.load(Ordering::Relaxed) / 8)
    }
}

/// Wakes/stops the flusher thread.
#[derive(Default)]
pub(crate) struct FlusherCtl {
    pub(crate) state: Mutex<FlusherState>,
    pub(crate) cv: Condvar,
}

#[derive(Default)]
pub(crate) struct FlusherState {
    pub(crate) stop: bool,
    /// When to look for an idle log and write its SyncMark (pushed back by every sync).
    pub(crate) mark_due: Option<Instant>,
}

impl FlusherCtl {
    pub fn stop(&self) {
        lock(&self.state).stop = true;
        self.cv.notify_all();
    }

    /// A sync completed: look for an idle log `delay` from now. Wakes the flusher only when
    /// no look was scheduled (under load the deadline just moves, without a wakeup per sync).
    pub(crate) fn synced(&self, delay: std::time::Duration) {
        let mut st = lock(&self.state);
        let was = st.mark_due.replace(Instant::now() + delay);
        drop(st);
        if was.is_none() {
            self.cv.notify_all();
        }
    }
}
