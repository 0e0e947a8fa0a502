//! Syncing: `sync_to` (the one place group fsyncs happen), `flush`, and the background flusher
//! thread of durability levels 0 and 2.
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
//! Invariants: the durable LSN only moves forward and only after a successful fsync; after a
//! failed fsync the log is failed and NO fsync is ever attempted again (the kernel may have
//! dropped the dirty pages: retrying could report success for lost data).

use std::sync::{Condvar, Mutex};
use std::time::Instant;

use crate::error::LogError;
use crate::log::{lock, Inner};
use crate::{Durability, Lsn};

/// Wakes/stops the flusher thread.
#[derive(Default)]
pub(crate) struct FlusherCtl {
    stop: Mutex<bool>,
    cv: Condvar,
}

impl FlusherCtl {
    pub fn stop(&self) {
        *lock(&self.stop) = true;
        self.cv.notify_all();
    }
}

/// Makes the log durable at least up to `target` (which must be written).
pub(crate) fn sync_to(inner: &Inner, target: Lsn) -> Result<(), LogError> {
    sync_to_then(inner, target, &mut || None)
}

/// `sync_to`, calling `on_locked` once this caller holds the sync lock; it may append more
/// records and return a larger target (the group leader absorbs the committers that queued
/// during the previous sync there, then passes leadership on).
pub(crate) fn sync_to_then(
    inner: &Inner,
    target: Lsn,
    on_locked: &mut dyn FnMut() -> Option<Lsn>,
) -> Result<(), LogError> {
    let _serial = lock(&inner.sync_lock);
    let target = on_locked().map_or(target, |t| t.max(target));
    let (file, path, upto) = {
        let p = lock(&inner.progress);
        if let Some(f) = &p.failed {
            return Err(LogError::Failed(f.clone()));
        }
        if p.durable >= target {
            return Ok(());
        }
        (p.cur_file.clone(), p.cur_path.clone(), p.written)
    };
    let began = Instant::now();
    inner.fdatasync(&*file, |e| {
        let durable = lock(&inner.progress).durable;
        format!(
            "fdatasync of {} failed: {e}; records after LSN {durable} may be lost, the log refuses \
             further writes and will not retry the sync; restart to recover from what is durable",
            path.display(),
        )
    })?;
    // Before the sync lock is released and anyone is acked (group_commit's gather).
    inner.gather.synced(began.elapsed());
    let mut p = lock(&inner.progress);
    p.durable = p.durable.max(upto);
    drop(p);
    inner.progress_cv.notify_all();
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
        w.written
    };
    sync_to(inner, target)?;
    if let Some(fm) = &inner.file {
        let mut b = lock(&fm.binlog);
        if sync_binlog && b.groups_since_sync > 0 {
            let r = b.classic.sync();
            fm.publish_stats(&b, &inner.stats);
            r.map_err(|e| {
                LogError::Failed(inner.fail(format!(
                    "fdatasync of the classic binlog failed: {e}; the log refuses further \
                     writes and will not retry the sync"
                )))
            })?;
            b.groups_since_sync = 0;
        }
        let all_synced = b.groups_since_sync == 0;
        drop(b);
        // With `turn` held every framed group is in the binlog.
        let end = lock(&inner.writer).lsn;
        let mut p = lock(&inner.progress);
        p.binlog_written = p.binlog_written.max(end);
        if all_synced {
            p.binlog_synced = p.binlog_synced.max(end);
        }
        drop(p);
        inner.progress_cv.notify_all();
    }
    Ok(())
}

/// The flusher thread: every `flush_interval`, flushes (levels 0 and 2; at level 1 only when
/// level-0 records are still buffered).
pub(crate) fn run(inner: &Inner) {
    let ctl = &inner.flusher;
    let period = inner.opts.flush_interval;
    let mut next = Instant::now() + period;
    loop {
        {
            let mut stop = lock(&ctl.stop);
            loop {
                if *stop {
                    return;
                }
                let now = Instant::now();
                if now >= next {
                    break;
                }
                stop = ctl
                    .cv
                    .wait_timeout(stop, next - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        next = Instant::now() + period;
        // At level 1 every group syncs itself; the flusher only writes out what level 0
        // buffered before the level was switched.
        let idle = inner.durability() == Durability::Level1 && {
            let p = lock(&inner.progress);
            p.end == p.written
        };
        if !idle && inner.refusal().is_none() {
            // Errors are recorded in the failed state, where committers and `failed()` see them.
            let _ = flush_impl(inner, false);
        }
    }
}
