//! Syncing: `sync_to` (the one place group fsyncs happen), `flush`, the background flusher
//! thread of durability levels 0 and 2 (and of level-1 records whose committers did not wait
//! for their sync: `Log::commit_queued_unsynced`), and the idle SyncMark (`idle_mark`). The
//! flusher also applies the written groups while a group's fsync runs, when its leader asks
//! (`FlusherCtl::apply_soon`, [`apply_early`]).
//!
//! `sync_to(target)` serialises syncs on `Inner::sync_lock`; it returns at once when the
//! durable LSN already covers `target` (a later group's sync covered it: pipelining), else it
//! `fdatasync`s the current segment and advances the durable LSN to the written LSN read
//! before the sync began. Older segments were synced by rotation, so the current segment is
//! the only one holding non-durable bytes.
//!
//! Each successful sync feeds its latency to `group_commit::Gather` (the adaptive gather's
//! bound) and bumps its epoch, under the sync lock.
//!
//! Idle SyncMark (`LogOptions::idle_sync_mark`, engine mode): every successful sync schedules
//! the flusher to look again after the idle delay; if nothing was written since, it writes the
//! SyncMark the next group would frame at the log's end (`Writer::write_idle_mark`) and syncs
//! it, so damage in the last group before an idle period is told from a torn tail.
//!
//! Invariants: the durable LSN only moves forward and only after a successful fsync; after a
//! failed fsync the log is failed and NO fsync is ever attempted again (the kernel may have
//! dropped the dirty pages: retrying could report success for lost data).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::LogError;
use crate::inner::Inner;
use crate::locks::{lock, try_lock};
use crate::pipeline::FlusherWake;
use crate::{CommittedRecord, Durability, GroupSink, Lsn};

/// The longest record applied while an fsync runs ([`apply_early`]): a longer one, a big
/// transaction's, is applied after its sync, so its apply never holds back a sync.
pub(crate) const EARLY_APPLY_MAX_RECORD: u64 = 1 << 20;

/// Applies the written groups while an fsync runs, when that is cheap: by the next group
/// leader waiting for the sync lock, or by the flusher a leader woke as its fsync started
/// (`group_commit.rs`, step 4). Nothing when another thread is applying, or when a pending
/// record is over [`EARLY_APPLY_MAX_RECORD`] or the sink says it is not cheap
/// (`GroupSink::early_apply`). Returns the time it spent applying (zero: it applied nothing).
pub(crate) fn apply_early(inner: &Inner, sink: &Option<Arc<dyn GroupSink>>) -> Duration {
    let Some(s) = sink else {
        return Duration::ZERO;
    };
    let began = Instant::now();
    let cheap = |r: &CommittedRecord| {
        r.receipt.end_lsn - r.receipt.lsn <= EARLY_APPLY_MAX_RECORD && s.early_apply(r)
    };
    if !inner
        .applier
        .drain_small(&cheap, &mut |recs| s.apply_group(recs))
    {
        return Duration::ZERO;
    }
    let took = began.elapsed();
    let ns = took.as_nanos() as u64;
    let phases = &inner.stats.phases;
    phases.apply.fetch_add(ns, Ordering::Relaxed);
    phases.apply_in_sync.fetch_add(ns, Ordering::Relaxed);
    took
}

/// Makes the log durable at least up to `target` (which must be written).
pub(crate) fn sync_to(inner: &Inner, target: Lsn) -> Result<(), LogError> {
    sync_to_then(inner, target, &mut || {}, &mut || None)
}

/// `sync_to`, calling `while_busy` first when another thread holds the sync lock (an fsync is
/// in flight: the group leader applies the written groups meanwhile) and `on_locked` once
/// this caller holds it; `on_locked` may append more records and return a larger target (the
/// group leader absorbs the committers that queued during the previous sync there, then
/// passes leadership on).
pub(crate) fn sync_to_then(
    inner: &Inner,
    target: Lsn,
    while_busy: &mut dyn FnMut(),
    on_locked: &mut dyn FnMut() -> Option<Lsn>,
) -> Result<(), LogError> {
    let _serial = try_lock(&inner.sync_lock).unwrap_or_else(|| {
        while_busy();
        lock(&inner.sync_lock)
    });
    let target = on_locked().map_or(target, |t| t.max(target));
    let (file, path, upto) = {
        let p = lock(&inner.progress);
        if let Some(f) = p.failed() {
            return Err(LogError::Failed(f.to_string()));
        }
        if p.durable() >= target {
            return Ok(());
        }
        (
            p.cur_file().clone(),
            p.cur_path().to_path_buf(),
            p.written(),
        )
    };
    let began = Instant::now();
    inner.fdatasync(&*file, |e| {
        let durable = lock(&inner.progress).durable();
        format!(
            "fdatasync of {} failed: {e}; records after LSN {durable} may be lost, the log refuses \
             further writes and will not retry the sync; restart to recover from what is durable",
            path.display(),
        )
    })?;
    // Before the sync lock is released and anyone is acked (group_commit's gather).
    inner.gather.synced(began.elapsed());
    let mut p = lock(&inner.progress);
    debug_assert!(
        upto >= target,
        "sync_to({target}) of bytes not yet written ({upto})"
    );
    p.advance_durable(upto);
    drop(p);
    inner.progress_cv.notify_all();
    if let (Some(delay), None) = (inner.opts.idle_sync_mark, &inner.file) {
        inner.flusher.synced(delay);
    }
    Ok(())
}

/// Writes and syncs the SyncMark the next group would frame, when the log is idle at a synced
/// end that no durable mark names yet (see the module docs); otherwise nothing. Called by the
/// flusher after the idle delay and by a clean shutdown.
pub(crate) fn idle_mark(inner: &Inner) -> Result<(), LogError> {
    if inner.opts.idle_sync_mark.is_none() || inner.file.is_some() || inner.refusal().is_some() {
        return Ok(());
    }
    let _serial = lock(&inner.sync_lock);
    let (file, path) = {
        let mut w = lock(&inner.writer);
        match w.write_idle_mark(inner) {
            Ok(true) => {
                let (file, path) = w.segment_file();
                (file.clone(), path.clone())
            }
            Ok(false) => return Ok(()),
            Err(e) => {
                let msg = inner.fail(format!("{e}; the log refuses further writes until restart"));
                return Err(match e {
                    LogError::StorageFull { .. } => e,
                    _ => LogError::Failed(msg),
                });
            }
        }
    };
    inner.fdatasync(&*file, |e| {
        format!(
            "fdatasync of {} (idle SyncMark) failed: {e}; the log refuses further writes and \
             will not retry the sync; restart to recover from what is durable",
            path.display(),
        )
    })?;
    inner.stats.idle_marks.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

/// Writes what level 0 buffered and syncs everything written. File mode: also writes the
/// pending CommitMark and syncs the classic binlog when it holds unsynced groups, so that
/// everything appended so far is durable in both (`Log::durable_lsn` reaches the end).
pub(crate) fn flush(inner: &Inner) -> Result<(), LogError> {
    flush_impl(inner, true)
}

/// `flush`; `sync_binlog` false (the background flusher) leaves the classic binlog's syncing
/// to `sync_binlog` and explicit flushes.
fn flush_impl(inner: &Inner, sync_binlog: bool) -> Result<(), LogError> {
    let _turn = inner.file.as_ref().map(|fm| lock(&fm.turn));
    if let Some(e) = inner.refusal() {
        return Err(e);
    }
    let target = {
        let mut w = lock(&inner.writer);
        w.frame_commit_mark(inner);
        if let Err(e) = w.write_pending(inner) {
            let msg = inner.fail(format!("{e}; the log refuses further writes until restart"));
            return Err(match e {
                LogError::StorageFull { .. } => e,
                _ => LogError::Failed(msg),
            });
        }
        w.written()
    };
    sync_to(inner, target)?;
    if let Some(fm) = &inner.file {
        fm.flushed(inner, sync_binlog)?;
    }
    Ok(())
}

/// The flusher thread: every `flush_interval`, flushes (levels 0 and 2; at level 1 only when
/// level-0 records are still buffered); at once when asked to (`FlusherCtl::sync_soon`: level-1
/// commits acknowledged before their sync); applies the written groups when a leader starting
/// its fsync asks (`FlusherCtl::apply_soon`).
pub(crate) fn run(inner: &Inner) {
    let ctl = &inner.flusher;
    let period = inner.opts.flush_interval;
    let mut next = Instant::now() + period;
    loop {
        let Some(wake) = ctl.wait(next) else {
            return;
        };
        match wake {
            FlusherWake::IdleMark => {
                // Errors are recorded in the failed state, where committers and `failed()`
                // see them.
                let _ = idle_mark(inner);
                continue;
            }
            FlusherWake::Sync => {
                // Acknowledged unsynced commits (`Log::commit_queued_unsynced`); a failure is
                // recorded in the failed state like any other.
                if inner.refusal().is_none() {
                    let _ = flush_impl(inner, false);
                }
                continue;
            }
            FlusherWake::Apply => {
                if inner.refusal().is_none() {
                    let sink = inner.sink.read().unwrap_or_else(|p| p.into_inner()).clone();
                    apply_early(inner, &sink);
                }
                continue;
            }
            FlusherWake::Period => {}
        }
        next = Instant::now() + period;
        // At level 1 every group syncs itself; the flusher only writes out what level 0
        // buffered before the level was switched.
        let idle = inner.durability() == Durability::Level1 && {
            let p = lock(&inner.progress);
            p.end() == p.written()
        };
        if !idle && inner.refusal().is_none() {
            // Errors are recorded in the failed state, where committers and `failed()` see them.
            let _ = flush_impl(inner, false);
        }
    }
}
