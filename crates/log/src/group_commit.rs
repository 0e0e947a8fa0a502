//! Group commit: a leader/follower queue in front of the appender.
//!
//! A committer pushes its record onto `Queue::waiting`. If no leader is active it becomes the
//! leader; otherwise it sleeps on its own slot until it is either done (a leader committed its
//! record) or promoted to leader. A leader takes the WHOLE queue as one group and:
//!
//! 1. under the writer lock: assigns GTIDs in queue order and one commit id, frames all records
//!    into one buffer and issues one write (level 0: buffers it), then (unless
//!    `strict_visibility`) queues the written group on the applier (`pipeline::Applier`),
//!    under the writer lock, so groups wait to be applied in log order;
//! 2. level 1: waits for the sync lock (an earlier leader may still be syncing); once it holds
//!    it, GATHERS (below), then takes the queue AGAIN — the committers that arrived while the
//!    earlier sync ran — and appends them as a second group (own commit id) covered by the
//!    same sync, then hands leadership to the next waiter, so the next group is written while
//!    this one syncs (pipelining depth one) and every sync covers everything that arrived
//!    before it started. Levels 0/2: hands leadership on right after the write. Strict: only
//!    after step 4;
//! 3. level 1 (or strict): one `fdatasync` covering the group (`flusher::sync_to`, which skips
//!    it when a later group's sync already covered it);
//! 4. applies every group written so far and not yet applied ([`apply_pending`]: whoever
//!    drains the applier first applies them all, in log order, in one call of
//!    `GroupSink::apply_group`); strict: applies its own group now that it is durable.
//!    Usually that was done while the fsync ran (`flusher::apply_early`): a leader about to
//!    fsync wakes the flusher to apply the written groups (`FlusherCtl::apply_soon`), and the
//!    next leader, finding the sync lock held in step 2, applies what is pending before it
//!    blocks on the lock; neither when another thread is applying or a record is expensive to
//!    apply (`flusher::EARLY_APPLY_MAX_RECORD`, `GroupSink::early_apply`). Groups then become
//!    visible during their own sync and their leader acknowledges as soon as the fsync ends;
//! 5. wakes its followers with their receipts.
//!
//! Why apply after the hand-off (issue 14 part 1): applying under the writer lock between
//! writing a group and syncing it cost 546 µs per group at 32 committers, and the second batch
//! of step 2 was applied before its sync could start, so the log's fsync sat idle. Now nothing
//! but framing and one write sits between two syncs: a group is applied while the next one
//! syncs, by the leader that synced it (or the next leader's drain, whichever comes first),
//! and always before any of its committers is acknowledged. Groups become visible in log order.
//! Why apply during the sync (issue 14 part 2): applied by its own leader after the fsync, a
//! group's apply (90-560 µs per batch at 1-32 committers) sat between the end of its sync and
//! its acknowledgement, on every committer's cycle. The fsync leaves the CPU free, so the
//! flusher (idle at level 1) applies then, at the cost of one wake-up per sync; the next
//! leader has nothing to do while it waits for the sync lock either, so it applies what the
//! flusher has not taken (its own group, written after the fsync started). The cost: if the
//! next leader's apply outlasts the fsync, its own sync starts that much later (the sync would
//! otherwise have overlapped that apply).
//! Replicated groups: `GroupSink::admit` judges them against the applied state, so before it
//! (when `GroupSink::needs_applied` says so) the leader drains the applier under the writer
//! lock.
//!
//! Unsynced committers (`Log::commit_queued_unsynced`, a replica's applied groups): at level
//! 1, a leader whose first batch holds only such committers runs its turn as at level 2 (hands
//! leadership on after the write, applies, acknowledges) and asks the flusher to sync at once
//! (`FlusherCtl::sync_soon`); a batch with any committer that waits for its sync is synced
//! before anyone in it is acknowledged.
//!
//! With `strict_visibility` every group is synced before it is applied and acknowledged,
//! whatever the durability level (a group that is only visible once durable cannot be
//! acknowledged earlier without breaking "apply before ack").
//!
//! ## Gathering (level 1, `LogOptions::commit_gather`, on by default)
//!
//! Why: with one-level pipelining and a closed loop of N committers, the committers acked by
//! sync k re-enqueue just after sync k+1 has started (its leader took the sync lock the moment
//! sync k released it), so they wait for sync k+2. The committers split into two cohorts
//! that alternate, each sync covers ~N/2 of them and each committer commits once per TWO
//! fsyncs: half the throughput the fsync rate allows. Nothing in the queue ever merges them
//! again.
//!
//! What: a leader that holds the sync lock and is about to start its sync first estimates how
//! many committers will want this sync: the records of the previous sync (`P`, who were just
//! acknowledged and are coming back) plus the records present (in its turn or queued) that
//! entered BEFORE the previous sync completed (`O`, a cohort that is not coming back from that
//! ack). Every enqueue is stamped with the number of completed group fsyncs (`sync_epoch`,
//! bumped under the sync lock right after each fsync, before its committers are acked), which
//! tells the two apart. If fewer than `P + O` are present it waits on `Gather::cv` (with the
//! queue mutex) until that many are, or until the gather bound passes, then takes the queue. A committer that
//! enqueues while a gather waits wakes the gatherer once the target is reached.
//!
//! The bound (`Gather::bound`) follows two moving averages: of recent fsync latencies (every
//! sync made through `flusher::sync_to_then`: group syncs and flushes), and of how long after
//! a group sync as many committers as it covered have enqueued again (the queue watches for
//! it: `Queue::watch_returns`, completed by `Queue::push`). When they come back within one
//! fsync, waiting for them is worth it: each committer's cycle becomes one return plus one
//! fsync instead of two fsyncs (at 3 ms fsync and 8 sysbench threads they come back after
//! ~1-2 ms: the 1/8 bound of before never merged the two cohorts), so the bound is their
//! return time plus a quarter, at most one fsync. Otherwise 1/8 of the fsync latency, so
//! gathering costs at most 12.5% of a sync when nobody comes (it is the timeout asked of the
//! condvar: on an overloaded machine the leader may be scheduled back later, like any
//! sleeper). No gather at all when that is below `MIN_GATHER` (50 µs, i.e. fsyncs faster than
//! 400 µs: there the CPU, not the fsync, limits throughput, and a wait that short is below the
//! wake-up latency of a busy machine, so it merges little and only delays the sync), when
//! `P <= 1` (a single committer never waits) or when enough are already present. In the
//! steady state the wait ends as soon as the last acked committer is back, so each fsync
//! covers ~all N committers.
//!
//! ## File mode (`BinlogStorage::File`): the classic staged commit
//!
//! Run by `file_stage.rs` (`FileMode::lead_group`), which a leader calls instead of its
//! engine-mode turn when the log is in file mode. The comparison architecture: the log
//! holds PREPARE records and the binlog is classic files (`classic::ClassicBinlog`). A
//! leader holds `FileMode::turn` for its whole turn (no pipelining: groups go through every
//! stage one after the other, in queue order) and:
//!
//! 1. PREPARE: under the writer lock, frames the CommitMark of the previous group (if not yet
//!    framed) and the group's records, and writes them (level 0: buffers them); level 1 (or
//!    strict visibility): one `fdatasync` of the log (`sync_to`). Crash point
//!    `binlog.after_prepare_sync`;
//! 2. BINLOG: appends each record's event group to the classic binlog in log order
//!    (`binlog_written` advances: readers may see the group), crash point
//!    `binlog.after_binlog_write`; then syncs the binlog when this is the `sync_binlog`-th
//!    group since its last sync (`binlog_synced` advances), crash point
//!    `binlog.after_binlog_sync`;
//! 3. COMMIT: applies the group (`GroupSink::apply_group`) and queues its CommitMark (the end
//!    LSN of the group) to be framed with the next write: never synced on its own;
//! 4. hands leadership on and acknowledges the committers.
//!
//! So two fsyncs per group at `sync_binlog = 1` and level 1, one write of the log and one
//! write of the binlog per record. Any failure in steps 1-2 fails the log (the group stays
//! in doubt on disk; recovery decides it: committed iff in the binlog, see `recovery.rs`).
//!
//! Invariants: groups are appended in queue order (under the writer lock) and applied in log
//! order (queued on the applier under the writer lock, drained one drainer at a time); a
//! committer is acknowledged only after its group was applied; exactly one leader at a time
//! holds the queue; a committer's slot is completed exactly once; an fsync failure fails the
//! group (and the log) and is never retried; a gather only delays when the sync starts (it
//! holds the sync lock, never the writer lock), so one write and at most one fsync per group
//! (a group above `MAX_UNSYNCED` bytes is the exception: written in chunks with a sync between
//! them, see `appender.rs`); GTID order and "sink before ack" hold at every level.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::appender::{group_error, RecordOutcome};
use crate::error::LogError;
use crate::flusher::{apply_early, sync_to_then};
use crate::inner::Inner;
use crate::locks::lock;
use crate::pipeline::{Slot, SlotState, Waiter, MIN_GATHER};
use crate::shared::PhaseCounters;
use crate::{CommitReceipt, CommittedRecord, Durability, GroupSink, Lsn, PendingRecord};

/// `Log::commit`.
pub(crate) fn commit(inner: &Inner, rec: PendingRecord) -> Result<CommitReceipt, LogError> {
    commit_then(inner, rec, &|| {}, false)
}

/// `Log::commit_queued`: [`commit`] calling `on_queued` once the record is in the queue.
pub(crate) fn commit_then(
    inner: &Inner,
    rec: PendingRecord,
    on_queued: &dyn Fn(),
    unsynced: bool,
) -> Result<CommitReceipt, LogError> {
    if let Some(e) = inner.refusal() {
        return Err(e);
    }
    let slot = Slot::new();
    let lead = {
        let mut q = lock(&inner.queue);
        let (lead, reached, returned) = q.push(Waiter::new(
            slot.clone(),
            rec,
            inner.gather.epoch(),
            unsynced,
        ));
        if reached {
            inner.gather.notify();
        }
        if let Some(t) = returned {
            inner.gather.returned(t);
        }
        lead
    };
    on_queued();
    if !lead {
        if let Some(r) = slot.wait() {
            return r;
        }
    }
    match &inner.file {
        Some(fm) => fm.lead_group(inner),
        None => lead_one_group(inner),
    }
    slot.take_done()
}

/// A batch taken from the queue, in queue order.
pub(crate) struct Batch {
    pub slots: Vec<Arc<Slot>>,
    pub recs: Vec<PendingRecord>,
    /// The enqueue epoch of each record.
    pub epochs: Vec<u64>,
    /// Every committer of the batch may be acknowledged before the sync (none waits for it).
    pub unsynced: bool,
}

/// Takes the whole queue as a batch; counts the time each committer waited in the queue
/// (`PhaseCounters::queue_wait`).
pub(crate) fn take_queue(inner: &Inner) -> Batch {
    let batch = lock(&inner.queue).take_batch();
    let unsynced = batch.iter().all(Waiter::unsynced);
    let mut slots = Vec::with_capacity(batch.len());
    let mut recs = Vec::with_capacity(batch.len());
    let mut epochs = Vec::with_capacity(batch.len());
    let taken = Instant::now();
    let mut waited = 0u64;
    for w in batch {
        let (slot, rec, epoch, queued) = w.into_parts();
        waited += taken.saturating_duration_since(queued).as_nanos() as u64;
        slots.push(slot);
        recs.push(rec);
        epochs.push(epoch);
    }
    let phases = &inner.stats.phases;
    phases.queue_wait.fetch_add(waited, Ordering::Relaxed);
    Batch {
        slots,
        recs,
        epochs,
        unsynced,
    }
}

/// Passes leadership to the first waiter, or releases it.
pub(crate) fn hand_off(inner: &Inner) {
    lock(&inner.queue).hand_off();
}

/// What one leader turn committed: possibly two batches at level 1 (see module docs).
#[derive(Default)]
struct Turn {
    slots: Vec<Arc<Slot>>,
    /// The enqueue epoch of each record (parallel to `slots`).
    epochs: Vec<u64>,
    outcomes: Vec<RecordOutcome>,
    /// Records to apply after the sync (strict visibility only).
    to_apply: Vec<CommittedRecord>,
    end: Lsn,
    logged: bool,
}

/// Takes the whole queue and appends it as one group: queued on the applier unless strict,
/// which keeps it in the turn to apply after the sync. Returns whether no committer of the
/// batch waits for the sync (`Batch::unsynced`; true for an empty queue).
fn append_batch(
    inner: &Inner,
    turn: &mut Turn,
    write_now: bool,
    strict: bool,
    sink: &Option<Arc<dyn GroupSink>>,
) -> bool {
    let Batch {
        mut slots,
        mut recs,
        mut epochs,
        unsynced,
    } = take_queue(inner);
    if slots.is_empty() {
        return unsynced;
    }
    let mut w = lock(&inner.writer);
    if let Some(s) = sink {
        if s.needs_applied(&recs) {
            apply_pending(inner, sink);
        }
        admit(s.as_ref(), &mut slots, &mut recs, &mut epochs);
    }
    turn.epochs.append(&mut epochs);
    let (outcomes, mut committed, end) = w.append_group(inner, &mut recs, write_now);
    debug_assert!(
        committed
            .windows(2)
            .all(|w| w[0].receipt.lsn < w[1].receipt.lsn),
        "a group's records are applied in log order"
    );
    if !committed.is_empty() {
        inner.stats.groups.fetch_add(1, Ordering::SeqCst);
        inner.stats.phases.group(committed.len());
        turn.logged = true;
        if strict {
            turn.to_apply.append(&mut committed);
        } else if sink.is_some() {
            // Still under the writer lock: the applier's queue is in log order.
            inner.applier.push(committed);
        }
    }
    drop(w);
    turn.end = turn.end.max(end);
    turn.slots.extend(slots);
    turn.outcomes.extend(outcomes);
    unsynced
}

/// Applies every group written so far and not yet applied, in log order (module docs, step 4).
/// Never called by a leader between taking the sync lock and its fsync.
fn apply_pending(inner: &Inner, sink: &Option<Arc<dyn GroupSink>>) {
    let Some(s) = sink else {
        return;
    };
    inner.applier.drain(&mut |recs| {
        let began = Instant::now();
        s.apply_group(recs);
        PhaseCounters::add(&inner.stats.phases.apply, began);
    });
}

/// Lets the sink refuse records of a batch before they are framed (`GroupSink::admit`, under
/// the writer lock, so every earlier group is applied): a refused record's committer gets
/// [`LogError::Refused`] and the record leaves the batch.
fn admit(
    sink: &dyn GroupSink,
    slots: &mut Vec<Arc<Slot>>,
    recs: &mut Vec<PendingRecord>,
    epochs: &mut Vec<u64>,
) {
    let refused = sink.admit(recs);
    if refused.is_empty() {
        return;
    }
    let mut reasons: Vec<Option<String>> = (0..recs.len()).map(|_| None).collect();
    for (i, why) in refused {
        if let Some(r) = reasons.get_mut(i) {
            *r = Some(why);
        }
    }
    let old = (
        std::mem::take(slots),
        std::mem::take(recs),
        std::mem::take(epochs),
    );
    for (((slot, rec), epoch), why) in old.0.into_iter().zip(old.1).zip(old.2).zip(reasons) {
        match why {
            Some(why) => slot.set(SlotState::Done(Err(LogError::Refused(why)))),
            None => {
                slots.push(slot);
                recs.push(rec);
                epochs.push(epoch);
            }
        }
    }
}

/// Waits (bounded) for the committers the previous sync just acknowledged to re-enqueue, so
/// that this sync covers them too (module docs). Called with the sync lock held.
fn gather(inner: &Inner, turn: &Turn) {
    let bound = inner.gather.bound();
    if bound < MIN_GATHER {
        return;
    }
    let epoch = inner.gather.epoch();
    let mut q = lock(&inner.queue);
    let prev = q.last_sync_records();
    if prev <= 1 {
        return;
    }
    let old = turn.epochs.iter().filter(|&&e| e < epoch).count() + q.waiting_before(epoch);
    let target = prev + old;
    let have = turn.slots.len();
    if have + q.waiting() >= target {
        return;
    }
    let deadline = Instant::now() + bound;
    loop {
        let now = Instant::now();
        if have + q.waiting() >= target || now >= deadline {
            break;
        }
        q.set_gather_for(Some(target - have));
        q = inner.gather.wait(q, deadline - now);
    }
    q.set_gather_for(None);
}

fn lead_one_group(inner: &Inner) {
    let strict = inner.opts.strict_visibility;
    let level = inner.durability();
    let write_now = strict || level != Durability::Level0;
    let sync_now = strict || level == Durability::Level1;
    let sink = inner.sink.read().unwrap_or_else(|p| p.into_inner()).clone();

    let mut turn = Turn::default();
    let unsynced = append_batch(inner, &mut turn, write_now, strict, &sink);
    // Level 1 with only committers that do not wait for the sync (replicated groups): handled
    // as level 2 (acknowledged once written and applied), the flusher syncs right after.
    let early = sync_now && !strict && unsynced && turn.logged;
    let sync_now = sync_now && !early;
    let mut handed = false;
    if !(strict || (sync_now && turn.logged)) {
        hand_off(inner);
        handed = true;
    }
    let mut group_err: Option<LogError> = None;
    if sync_now && turn.logged {
        let target = turn.end;
        let mut on_locked = || {
            if strict {
                return None;
            }
            if inner.opts.commit_gather {
                gather(inner, &turn);
            }
            // Committers that queued while the previous sync ran join this sync.
            append_batch(inner, &mut turn, write_now, strict, &sink);
            lock(&inner.queue).set_last_sync_records(turn.slots.len());
            hand_off(inner);
            handed = true;
            // The flusher applies the written groups while this fsync runs.
            if sink.is_some() && inner.applier.has_pending() {
                inner.flusher.apply_soon();
            }
            Some(turn.end)
        };
        // While an earlier leader's fsync is in flight, apply what is written (visibility
        // may precede durability when not strict): that leader then acknowledges as soon as
        // its sync ends instead of applying first (module docs, step 4).
        let mut applying = Duration::ZERO;
        let mut while_busy = || {
            if !strict {
                applying = apply_early(inner, &sink);
            }
        };
        let began = Instant::now();
        let synced = sync_to_then(inner, target, &mut while_busy, &mut on_locked);
        PhaseCounters::add(&inner.stats.phases.sync, began + applying);
        if synced.is_ok() && !strict {
            // How long this sync's committers take to come back bounds the next gathers.
            let open = lock(&inner.queue).watch_returns(turn.slots.len());
            if let Some(t) = open {
                inner.gather.returned(t);
            }
        }
        if let Err(e) = synced {
            group_err = Some(e);
        } else if let Err(e) = inner.fs.crash_point("commit.after_sync") {
            group_err = Some(LogError::Failed(
                inner.fail(format!("crash after sync: {e}")),
            ));
        }
        if strict && group_err.is_none() && !turn.to_apply.is_empty() {
            if let Some(s) = &sink {
                let began = Instant::now();
                s.apply_group(&mut turn.to_apply);
                PhaseCounters::add(&inner.stats.phases.apply, began);
            }
        }
    }
    turn.to_apply.clear();
    if !handed {
        hand_off(inner);
    }
    if !strict {
        apply_pending(inner, &sink);
        // An early apply that panicked left its groups unapplied: never acknowledge them.
        if inner.applier.failed() && group_err.is_none() {
            group_err = Some(LogError::Failed(
                inner.fail(
                    "applying committed groups during an fsync failed (a panic); the log refuses \
                 further writes until restart"
                        .into(),
                ),
            ));
        }
    }
    if early {
        inner.flusher.sync_soon();
    }
    let began = Instant::now();
    acknowledge(inner, &turn.slots, &mut turn.outcomes, group_err.as_ref());
    PhaseCounters::add(&inner.stats.phases.ack, began);
}

/// Completes each committer's slot with its record's outcome (a group error replaces the
/// Ok ones) and counts the acknowledged commits.
pub(crate) fn acknowledge(
    inner: &Inner,
    slots: &[Arc<Slot>],
    outcomes: &mut [RecordOutcome],
    group_err: Option<&LogError>,
) {
    let mut acked = 0;
    for (slot, out) in slots.iter().zip(outcomes.iter_mut()) {
        let r = match (group_err, std::mem::replace(out, Err(LogError::Closed))) {
            (Some(e), Ok(_)) => Err(group_error(e)),
            (_, r) => r,
        };
        acked += r.is_ok() as u64;
        slot.set(SlotState::Done(r));
    }
    inner.stats.commits.fetch_add(acked, Ordering::SeqCst);
}
