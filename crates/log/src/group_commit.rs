//! Group commit: a leader/follower queue in front of the appender.
//!
//! A committer pushes its record onto `Queue::waiting`. If no leader is active it becomes the
//! leader; otherwise it sleeps on its own slot until it is either done (a leader committed its
//! record) or promoted to leader. A leader takes the WHOLE queue as one group and:
//!
//! 1. under the writer lock: assigns GTIDs in queue order and one commit id, frames all records
//!    into one buffer and issues one write (level 0: buffers it), then (unless
//!    `strict_visibility`) calls `GroupSink::apply_group` — still under the writer lock, so
//!    groups are applied in log order;
//! 2. level 1: waits for the sync lock (an earlier leader may still be syncing); once it holds
//!    it, takes the queue AGAIN — the committers that arrived while the earlier sync ran — and
//!    appends them as a second group (own commit id) covered by the same sync, then hands
//!    leadership to the next waiter, so the next group is written while this one syncs
//!    (pipelining depth one) and every sync covers everything that arrived before it started.
//!    Levels 0/2: hands leadership on right after the write. Strict: only after step 4;
//! 3. level 1 (or strict): one `fdatasync` covering the group (`flusher::sync_to`, which skips
//!    it when a later group's sync already covered it);
//! 4. strict: applies the group now that it is durable;
//! 5. wakes its followers with their receipts.
//!
//! With `strict_visibility` every group is synced before it is applied and acknowledged,
//! whatever the durability level (a group that is only visible once durable cannot be
//! acknowledged earlier without breaking "apply before ack").
//!
//! Invariants: groups are appended and applied in queue order (append and apply happen under
//! the writer lock); exactly one leader at a time
//! holds the queue; a committer's slot is completed exactly once; an fsync failure fails the
//! group (and the log) and is never retried.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use crate::appender::{group_error, RecordOutcome};
use crate::error::LogError;
use crate::flusher::sync_to_then;
use crate::log::{lock, Inner};
use crate::{CommitReceipt, CommittedRecord, Durability, GroupSink, Lsn, PendingRecord};

enum SlotState {
    Waiting,
    Lead,
    Done(Result<CommitReceipt, LogError>),
}

struct Slot {
    state: Mutex<SlotState>,
    cv: Condvar,
}

impl Slot {
    fn set(&self, s: SlotState) {
        *lock(&self.state) = s;
        self.cv.notify_one();
    }
}

struct Waiter {
    slot: Arc<Slot>,
    rec: PendingRecord,
}

/// The commit queue, guarded by `Inner::queue`.
#[derive(Default)]
pub(crate) struct Queue {
    waiting: Vec<Waiter>,
    leader: bool,
}

/// `Log::commit`.
pub(crate) fn commit(inner: &Inner, rec: PendingRecord) -> Result<CommitReceipt, LogError> {
    if let Some(e) = inner.refusal() {
        return Err(e);
    }
    let slot = Arc::new(Slot {
        state: Mutex::new(SlotState::Waiting),
        cv: Condvar::new(),
    });
    let lead = {
        let mut q = lock(&inner.queue);
        q.waiting.push(Waiter {
            slot: slot.clone(),
            rec,
        });
        !std::mem::replace(&mut q.leader, true)
    };
    if !lead {
        let mut s = lock(&slot.state);
        loop {
            match std::mem::replace(&mut *s, SlotState::Waiting) {
                SlotState::Done(r) => return r,
                SlotState::Lead => break,
                SlotState::Waiting => s = slot.cv.wait(s).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
    lead_one_group(inner);
    let mut s = lock(&slot.state);
    match std::mem::replace(&mut *s, SlotState::Waiting) {
        SlotState::Done(r) => r,
        // Unreachable: the leader's own record is always in the group it led.
        _ => Err(LogError::Failed(
            "internal error: leader's record was not committed".into(),
        )),
    }
}

/// Passes leadership to the first waiter, or releases it.
fn hand_off(inner: &Inner) {
    let mut q = lock(&inner.queue);
    match q.waiting.first() {
        Some(w) => w.slot.set(SlotState::Lead),
        None => q.leader = false,
    }
}

/// What one leader turn committed: possibly two batches at level 1 (see module docs).
#[derive(Default)]
struct Turn {
    slots: Vec<Arc<Slot>>,
    outcomes: Vec<RecordOutcome>,
    /// Records to apply after the sync (strict visibility only).
    to_apply: Vec<CommittedRecord>,
    end: Lsn,
    logged: bool,
}

/// Takes the whole queue and appends it as one group (applying it unless strict).
fn append_batch(
    inner: &Inner,
    turn: &mut Turn,
    write_now: bool,
    strict: bool,
    sink: &Option<Arc<dyn GroupSink>>,
) {
    let batch = std::mem::take(&mut lock(&inner.queue).waiting);
    if batch.is_empty() {
        return;
    }
    let (slots, mut recs): (Vec<Arc<Slot>>, Vec<PendingRecord>) =
        batch.into_iter().map(|w| (w.slot, w.rec)).unzip();
    let (outcomes, mut committed, end) = {
        let mut w = lock(&inner.writer);
        let (o, mut c, end) = w.append_group(inner, &mut recs, write_now);
        if !strict && !c.is_empty() {
            if let Some(s) = sink {
                s.apply_group(&mut c);
            }
        }
        (o, c, end)
    };
    if !committed.is_empty() {
        inner.stats.groups.fetch_add(1, Ordering::SeqCst);
        turn.logged = true;
    }
    turn.end = turn.end.max(end);
    turn.slots.extend(slots);
    turn.outcomes.extend(outcomes);
    if strict {
        turn.to_apply.append(&mut committed);
    }
}

fn lead_one_group(inner: &Inner) {
    let strict = inner.opts.strict_visibility;
    let level = inner.durability();
    let write_now = strict || level != Durability::Level0;
    let sync_now = strict || level == Durability::Level1;
    let sink = inner.sink.read().unwrap_or_else(|p| p.into_inner()).clone();

    let mut turn = Turn::default();
    append_batch(inner, &mut turn, write_now, strict, &sink);
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
            // Committers that queued while the previous sync ran join this sync.
            append_batch(inner, &mut turn, write_now, strict, &sink);
            hand_off(inner);
            handed = true;
            Some(turn.end)
        };
        if let Err(e) = sync_to_then(inner, target, &mut on_locked) {
            group_err = Some(e);
        } else if let Err(e) = inner.fs.crash_point("commit.after_sync") {
            group_err = Some(LogError::Failed(
                inner.fail(format!("crash after sync: {e}")),
            ));
        }
        if strict && group_err.is_none() && !turn.to_apply.is_empty() {
            if let Some(s) = &sink {
                s.apply_group(&mut turn.to_apply);
            }
        }
    }
    turn.to_apply.clear();
    if !handed {
        hand_off(inner);
    }
    let mut acked = 0;
    for (slot, out) in turn.slots.iter().zip(turn.outcomes.iter_mut()) {
        let r = match (&group_err, std::mem::replace(out, Err(LogError::Closed))) {
            (Some(e), Ok(_)) => Err(group_error(e)),
            (_, r) => r,
        };
        acked += r.is_ok() as u64;
        slot.set(SlotState::Done(r));
    }
    inner.stats.commits.fetch_add(acked, Ordering::SeqCst);
}
