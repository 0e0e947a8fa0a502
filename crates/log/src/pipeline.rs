//! The state of the commit pipeline, as types with private fields: the commit queue
//! ([`Queue`], with each committer's [`Slot`]), the written groups waiting to be applied
//! ([`Applier`]), the adaptive gather ([`Gather`]) and the flusher's control ([`FlusherCtl`]).
//! They live in `Inner`; the procedures that run the pipeline over them are `group_commit.rs`,
//! `file_stage.rs` and `flusher.rs` (see their docs for the protocol), which change them only
//! through the methods here. Kept apart from those so that `Inner` imports no module that
//! imports it.
//!
//! States, who sets them, what follows (in the manner of RocksDB's `write_thread.h`):
//! - a [`Slot`] starts `Waiting` ([`Slot::new`], by its committer, which enqueues it with
//!   [`Queue::push`]); becomes `Lead` when the previous leader hands leadership on
//!   ([`Queue::hand_off`]): its committer then leads a turn; or `Done` when a leader
//!   completes it with its record's outcome (`group_commit::acknowledge`): its committer
//!   returns that outcome ([`Slot::wait`], [`Slot::take_done`] for a leader's own record);
//! - the queue's `leader` flag is set by the committer that finds no leader ([`Queue::push`]
//!   returns true) and cleared only by a hand-off that finds nobody waiting; only the leader
//!   takes the waiting committers ([`Queue::take_batch`]);
//! - `gather_for` is set by a gathering leader ([`Queue::set_gather_for`]) and cleared by the
//!   enqueue that reaches it, which then wakes the leader ([`Gather::notify`]);
//!   `last_sync_records` is set by a leader before its sync, read by the next one's gather;
//! - the gather's epoch grows by one per successful group fsync ([`Gather::synced`], under
//!   the sync lock), committers are stamped with it at enqueue;
//! - a written group enters the [`Applier`] under the writer lock ([`Applier::push`]) and
//!   leaves it, applied, in the first [`Applier::drain`] or [`Applier::drain_small`] that
//!   takes it (one drainer at a time);
//! - the flusher's `mark_due` is pushed back by every sync ([`FlusherCtl::synced`]) and taken
//!   by the flusher when due ([`FlusherCtl::wait`]); `sync_due` and `apply_due` are set by
//!   committers ([`FlusherCtl::sync_soon`], [`FlusherCtl::apply_soon`]) and taken by the
//!   flusher, which then syncs or applies; `stop` is set once, at shutdown.
//!
//! Invariants: a committer's slot is completed exactly once (asserted in [`Slot::set`]); only
//! the leader takes the queue or hands leadership on (asserted); the gather's epoch only
//! grows.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::LogError;
use crate::locks::{lock, try_lock};
use crate::{CommitReceipt, PendingRecord};

/// What a slot holds: nothing yet, leadership, or the committer's outcome.
pub(crate) enum SlotState {
    Waiting,
    Lead,
    Done(Result<CommitReceipt, LogError>),
}

/// Where a committer waits for its outcome or for leadership.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    cv: Condvar,
}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting),
            cv: Condvar::new(),
        })
    }

    /// A follower waits: Some(outcome) once a leader committed its record, None once it was
    /// made the leader.
    pub(crate) fn wait(&self) -> Option<Result<CommitReceipt, LogError>> {
        let mut s = lock(&self.state);
        loop {
            match std::mem::replace(&mut *s, SlotState::Waiting) {
                SlotState::Done(r) => return Some(r),
                SlotState::Lead => return None,
                SlotState::Waiting => s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }

    /// The leader's own outcome, after its turn (its record is always in the group it led).
    pub(crate) fn take_done(&self) -> Result<CommitReceipt, LogError> {
        match std::mem::replace(&mut *lock(&self.state), SlotState::Waiting) {
            SlotState::Done(r) => r,
            // Unreachable: the leader's own record is always in the group it led.
            _ => Err(LogError::Failed(
                "internal error: leader's record was not committed".into(),
            )),
        }
    }

    /// Completes the slot (an outcome) or makes its committer the leader.
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

/// A committer in the queue: its slot, its record, and the gather epoch when it enqueued.
pub(crate) struct Waiter {
    slot: Arc<Slot>,
    rec: PendingRecord,
    /// `Gather::sync_epoch` when it enqueued.
    epoch: u64,
    /// When it enqueued (the commit path's queue-wait phase ends when a leader takes it).
    queued: std::time::Instant,
    /// Its committer may be acknowledged once the record is written and applied, before it is
    /// synced (`Log::commit_queued_unsynced`).
    unsynced: bool,
}

impl Waiter {
    pub(crate) fn new(slot: Arc<Slot>, rec: PendingRecord, epoch: u64, unsynced: bool) -> Self {
        Waiter {
            slot,
            rec,
            epoch,
            queued: std::time::Instant::now(),
            unsynced,
        }
    }

    /// Its slot, record, enqueue epoch and enqueue time.
    pub(crate) fn into_parts(self) -> (Arc<Slot>, PendingRecord, u64, std::time::Instant) {
        (self.slot, self.rec, self.epoch, self.queued)
    }

    /// Whether its committer may be acknowledged before the sync.
    pub(crate) fn unsynced(&self) -> bool {
        self.unsynced
    }
}

/// The commit queue, guarded by `Inner::queue`.
#[derive(Default)]
pub(crate) struct Queue {
    waiting: Vec<Waiter>,
    leader: bool,
    /// While a leader gathers: wake it (`Gather::cv`) once `waiting` holds this many.
    gather_for: Option<usize>,
    /// Records the last group sync covered (set by its leader before it synced).
    last_sync_records: usize,
    /// Committers enqueued so far.
    enqueued: u64,
    /// After a group sync covering more than one record: the `enqueued` count at which as
    /// many committers as it covered have enqueued again, and when it ended (how long its
    /// committers take to come back: `Gather::returned`).
    watch: Option<(u64, Instant)>,
}

impl Queue {
    /// Enqueues a committer. Returns whether it becomes the leader (none was active), whether
    /// a gathering leader's target is now reached (the caller wakes it), and, when this
    /// enqueue completes the watch of the last sync, how long after it ended (the caller feeds
    /// it to `Gather::returned`).
    pub(crate) fn push(&mut self, w: Waiter) -> (bool, bool, Option<Duration>) {
        self.waiting.push(w);
        self.enqueued += 1;
        let reached = self.gather_for.is_some_and(|n| self.waiting.len() >= n);
        if reached {
            self.gather_for = None;
        }
        let returned = match self.watch {
            Some((at, since)) if self.enqueued >= at => {
                self.watch = None;
                Some(since.elapsed())
            }
            _ => None,
        };
        (
            !std::mem::replace(&mut self.leader, true),
            reached,
            returned,
        )
    }

    /// A group sync covering `records` records just ended: watch how long until as many
    /// committers enqueue. Returns how long the previous watch had waited if it never
    /// completed (a lower bound of that return time, for `Gather::returned`).
    pub(crate) fn watch_returns(&mut self, records: usize) -> Option<Duration> {
        let now = Instant::now();
        let open = self.watch.take().map(|(_, since)| now - since);
        if records > 1 {
            self.watch = Some((self.enqueued + records as u64, now));
        }
        open
    }

    /// The leader takes every waiting committer.
    pub(crate) fn take_batch(&mut self) -> Vec<Waiter> {
        debug_assert!(self.leader, "only the leader takes the queue");
        std::mem::take(&mut self.waiting)
    }

    /// Passes leadership to the first waiter, or releases it.
    pub(crate) fn hand_off(&mut self) {
        debug_assert!(self.leader, "only the leader hands leadership on");
        match self.waiting.first() {
            Some(w) => w.slot.set(SlotState::Lead),
            None => self.leader = false,
        }
    }

    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Waiting committers that enqueued before gather epoch `epoch`.
    pub(crate) fn waiting_before(&self, epoch: u64) -> usize {
        self.waiting.iter().filter(|w| w.epoch < epoch).count()
    }

    pub(crate) fn last_sync_records(&self) -> usize {
        self.last_sync_records
    }

    /// Records the last group sync covered (set by its leader before it syncs).
    pub(crate) fn set_last_sync_records(&mut self, n: usize) {
        self.last_sync_records = n;
    }

    /// While a leader gathers: have it woken once `n` committers wait (None: no gather).
    pub(crate) fn set_gather_for(&mut self, n: Option<usize>) {
        self.gather_for = n;
    }
}

/// Gathers shorter than this are not attempted (see module docs).
pub const MIN_GATHER: Duration = Duration::from_micros(50);

/// Shared state of the adaptive gather (module docs).
#[derive(Default)]
pub(crate) struct Gather {
    /// Signalled (with `Inner::queue`) when a gathering leader's target is reached.
    cv: Condvar,
    /// Completed group fsyncs; bumped under the sync lock right after each one.
    sync_epoch: AtomicU64,
    /// Moving average (weight 1/8) of fsync latency (`sync_to_then`), in nanoseconds (0: no
    /// fsync yet).
    fsync_avg_ns: AtomicU64,
    /// Moving average (weight 1/4) of how long after a group sync as many committers as it
    /// covered have enqueued again (0: not measured yet), in nanoseconds.
    return_avg_ns: AtomicU64,
}

impl Gather {
    /// Called under the sync lock after a successful group fsync that took `took`.
    pub fn synced(&self, took: Duration) {
        fold_average(&self.fsync_avg_ns, took, 8);
        self.sync_epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Completed group fsyncs so far (the epoch committers are stamped with).
    pub fn epoch(&self) -> u64 {
        self.sync_epoch.load(Ordering::SeqCst)
    }

    /// Wakes the gathering leader.
    pub fn notify(&self) {
        self.cv.notify_one();
    }

    /// The gathering leader waits (with the queue's guard `q`) at most `timeout`.
    pub fn wait<'a>(
        &self,
        q: std::sync::MutexGuard<'a, Queue>,
        timeout: Duration,
    ) -> std::sync::MutexGuard<'a, Queue> {
        self.cv
            .wait_timeout(q, timeout)
            .unwrap_or_else(|p| p.into_inner())
            .0
    }

    /// How long committers took to come back after a sync (`Queue::push`, or a lower bound
    /// from `Queue::watch_returns`).
    pub fn returned(&self, took: Duration) {
        fold_average(&self.return_avg_ns, took, 4);
    }

    /// How long a gather may wait. When the committers of a sync come back (`return_avg_ns`)
    /// before another fsync could end, waiting for them costs less than the extra fsync they
    /// would otherwise wait for (a cycle of return + fsync instead of two fsyncs): up to their
    /// return time plus a quarter (and `MIN_GATHER`), at most one average fsync. Else 1/8 of
    /// the average fsync latency.
    pub fn bound(&self) -> Duration {
        let fsync = self.fsync_avg_ns.load(Ordering::Relaxed);
        let back = self.return_avg_ns.load(Ordering::Relaxed);
        let ns = if back > 0 && back <= fsync {
            (back + back / 4 + MIN_GATHER.as_nanos() as u64).min(fsync)
        } else {
            fsync / 8
        };
        Duration::from_nanos(ns)
    }
}

/// Folds `sample` into the moving average in `cell` (nanoseconds, weight 1/`div`; the first
/// sample sets it; never stored as 0, which means "nothing measured yet").
fn fold_average(cell: &AtomicU64, sample: Duration, div: u64) {
    let ns = sample.as_nanos().min(u64::MAX as u128) as u64;
    let avg = cell.load(Ordering::Relaxed);
    let avg = if avg == 0 {
        ns
    } else {
        avg - avg / div + ns / div
    };
    cell.store(avg.max(1), Ordering::Relaxed);
}

/// Wakes/stops the flusher thread.
#[derive(Default)]
pub(crate) struct FlusherCtl {
    state: Mutex<FlusherState>,
    cv: Condvar,
}

#[derive(Default)]
struct FlusherState {
    stop: bool,
    /// When to look for an idle log and write its SyncMark (pushed back by every sync).
    mark_due: Option<Instant>,
    /// Records were written whose committers did not wait for their sync: sync now.
    sync_due: bool,
    /// A group leader started an fsync with written groups not yet applied: apply them now.
    apply_due: bool,
}

/// Why the flusher woke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlusherWake {
    /// Its period came: flush what levels 0 and 2 left unsynced.
    Period,
    /// The log has been idle since its last sync: write the idle SyncMark.
    IdleMark,
    /// Unsynced commits were acknowledged ([`FlusherCtl::sync_soon`]): sync them now.
    Sync,
    /// A group's fsync started ([`FlusherCtl::apply_soon`]): apply the written groups
    /// while it runs.
    Apply,
}

impl FlusherCtl {
    pub fn stop(&self) {
        lock(&self.state).stop = true;
        self.cv.notify_all();
    }

    /// The flusher waits until `next`, a [`Self::sync_soon`], an [`Self::apply_soon`] or the
    /// idle log's mark is due.
    /// None: stop.
    pub(crate) fn wait(&self, next: Instant) -> Option<FlusherWake> {
        let mut st = lock(&self.state);
        loop {
            if st.stop {
                return None;
            }
            if std::mem::take(&mut st.sync_due) {
                return Some(FlusherWake::Sync);
            }
            if std::mem::take(&mut st.apply_due) {
                return Some(FlusherWake::Apply);
            }
            let now = Instant::now();
            if st.mark_due.is_some_and(|due| now >= due) {
                st.mark_due = None;
                return Some(FlusherWake::IdleMark);
            }
            if now >= next {
                return Some(FlusherWake::Period);
            }
            let until = st.mark_due.map_or(next, |due| due.min(next));
            st = self
                .cv
                .wait_timeout(st, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A group leader is about to fsync with written groups not yet applied: the flusher
    /// applies them while the fsync runs (one request made while it applies makes it look
    /// once more right after).
    pub(crate) fn apply_soon(&self) {
        let mut st = lock(&self.state);
        let was = std::mem::replace(&mut st.apply_due, true);
        drop(st);
        if !was {
            self.cv.notify_all();
        }
    }

    /// Records were acknowledged before their sync: the flusher syncs as soon as it can (one
    /// request made while it syncs makes it sync once more right after).
    pub(crate) fn sync_soon(&self) {
        let mut st = lock(&self.state);
        let was = std::mem::replace(&mut st.sync_due, true);
        drop(st);
        if !was {
            self.cv.notify_all();
        }
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

/// Groups written but not yet applied, applied in log order by whoever drains them
/// ([`Applier::drain`]); `group_commit.rs` explains who pushes and who drains.
#[derive(Default)]
pub(crate) struct Applier {
    /// Written groups waiting to be applied, in log order (pushed under the writer lock).
    pending: Mutex<std::collections::VecDeque<Vec<crate::CommittedRecord>>>,
    /// Held by the thread applying: applies happen one at a time, in the order pushed.
    turn: Mutex<()>,
    /// An apply of [`Applier::drain_small`] panicked: the groups it took were not applied.
    failed: std::sync::atomic::AtomicBool,
}

impl Applier {
    /// Queues a written group (called under the writer lock, so the queue is in log order).
    pub(crate) fn push(&self, group: Vec<crate::CommittedRecord>) {
        lock(&self.pending).push_back(group);
    }

    /// Whether a written group waits to be applied.
    pub(crate) fn has_pending(&self) -> bool {
        !lock(&self.pending).is_empty()
    }

    /// Applies the groups pushed so far, like [`Applier::drain`], but only when that is
    /// quick to start and cheap: nothing when another thread is draining (it applies them)
    /// or when a pending record is not `cheap`. Returns whether it applied. A panic of
    /// `apply` is caught (the caller may be the flusher) and recorded ([`Applier::failed`]).
    pub(crate) fn drain_small(
        &self,
        cheap: &dyn Fn(&crate::CommittedRecord) -> bool,
        apply: &mut dyn FnMut(&mut [crate::CommittedRecord]),
    ) -> bool {
        let Some(_turn) = try_lock(&self.turn) else {
            return false;
        };
        let mut recs = {
            let mut q = lock(&self.pending);
            if q.is_empty() || !q.iter().flatten().all(cheap) {
                return false;
            }
            take_all(&mut q)
        };
        let run = std::panic::AssertUnwindSafe(|| apply(&mut recs));
        if std::panic::catch_unwind(run).is_err() {
            self.failed.store(true, Ordering::SeqCst);
        }
        true
    }

    /// Whether an early apply panicked, leaving groups unapplied (the log must fail).
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Applies every group pushed so far, in log order, through `apply` (several queued
    /// groups at once, as one call). When it returns, every group pushed before the call is
    /// applied (by this thread or by another drainer that took it first and finished).
    pub(crate) fn drain(&self, apply: &mut dyn FnMut(&mut [crate::CommittedRecord])) {
        let _turn = lock(&self.turn);
        loop {
            let mut recs = {
                let mut q = lock(&self.pending);
                if q.is_empty() {
                    return;
                }
                take_all(&mut q)
            };
            apply(&mut recs);
        }
    }
}

/// Every pending group, as one batch in log order (a lone group is moved, not copied).
fn take_all(
    q: &mut std::collections::VecDeque<Vec<crate::CommittedRecord>>,
) -> Vec<crate::CommittedRecord> {
    match q.len() {
        1 => q.pop_front().unwrap_or_default(),
        _ => q.drain(..).flatten().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_gather_waits_for_committers_that_come_back_within_an_fsync() {
        let g = Gather::default();
        for _ in 0..4 {
            g.synced(ms(3));
        }
        // Nothing measured yet: 1/8 of the fsync.
        assert_eq!(g.bound(), Duration::from_micros(375));
        // They come back after 1 ms: wait up to 1.25 ms + MIN_GATHER for them.
        g.returned(ms(1));
        assert_eq!(g.bound(), Duration::from_micros(1250) + MIN_GATHER);
        // They come back later than an fsync would end: back to 1/8.
        for _ in 0..8 {
            g.returned(ms(10));
        }
        assert_eq!(g.bound(), Duration::from_micros(375));
        // Never more than one fsync.
        let g = Gather::default();
        g.synced(ms(1));
        g.returned(Duration::from_micros(950));
        assert_eq!(g.bound(), ms(1));
    }

    #[test]
    fn the_queue_times_how_long_a_syncs_committers_take_to_enqueue_again() {
        let mut q = Queue::default();
        let push = |q: &mut Queue| {
            q.push(Waiter::new(
                Slot::new(),
                crate::PendingRecord {
                    kind: crate::RecordKind::Transaction,
                    gtid: crate::GtidAssign::Next {
                        domain_id: 0,
                        server_id: 1,
                    },
                    events: Vec::new(),
                    aux: Vec::new(),
                    payload: None,
                    streamed: None,
                },
                0,
                false,
            ))
            .2
        };
        // A sync of one record starts no watch.
        assert_eq!(q.watch_returns(1), None);
        assert_eq!(push(&mut q), None);
        // A sync of three: the third enqueue after it completes the watch.
        assert_eq!(q.watch_returns(3), None);
        assert_eq!(push(&mut q), None);
        assert_eq!(push(&mut q), None);
        assert!(push(&mut q).is_some());
        assert_eq!(push(&mut q), None);
        // A watch the next sync finds still open is reported as a lower bound.
        assert_eq!(q.watch_returns(5), None);
        assert!(q.watch_returns(2).is_some());
    }
}
