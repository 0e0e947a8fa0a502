//! File mode's commit stage (`BinlogStorage::File`): what a file-mode group leader does,
//! and what flush, rotate, `RESET MASTER` and shutdown add to the engine-mode path. The core
//! (`group_commit.rs`, `flusher.rs`, `log.rs`) calls these methods on `Inner::file` where
//! engine mode has nothing to add, and never threads file mode through its own code.
//!
//! The staged commit (two-phase commit with the classic binlog, see `group_commit.rs`'s
//! module docs): 1. prepare: frame and write the group in the log (synced at level 1);
//! 2. append it to the classic binlog (synced every `sync_binlog` groups); 3. commit: apply
//! it and queue the CommitMark that the next group (or flush) frames; 4. acknowledge. All of
//! it under `FileMode::turn`, which flush, rotate, reset and shutdown take too.
//!
//! Invariants: every group starting below `Progress::binlog_written` is in the classic
//! binlog, below `binlog_synced` synced there (`Progress::advance_binlog` asserts they
//! never move back); they advance only with `turn` held (asserted); any binlog error fails
//! the log.

use std::sync::atomic::Ordering;

use crate::appender::{RecordOutcome, Writer};
use crate::error::LogError;
use crate::filemode::FileMode;
use crate::flusher::sync_to;
use crate::group_commit::{acknowledge, hand_off, take_queue};
use crate::inner::Inner;
use crate::locks::lock;
use crate::{Durability, Lsn, PendingRecord};

impl FileMode {
    /// One leader turn in file mode: the staged commit of the module docs.
    pub(crate) fn lead_group(&self, inner: &Inner) {
        let fm = self;
        let turn = lock(&fm.turn);
        let strict = inner.opts.strict_visibility;
        let level = inner.durability();
        let write_now = strict || level != Durability::Level0;
        let sync_now = strict || level == Durability::Level1;
        let sink = inner.sink.read().unwrap_or_else(|p| p.into_inner()).clone();

        let crate::group_commit::Batch {
            slots, mut recs, ..
        } = take_queue(inner);
        // 1. Prepare.
        let (mut outcomes, mut committed, end) = {
            let mut w = lock(&inner.writer);
            w.append_group(inner, &mut recs, write_now)
        };
        let mut group_err: Option<LogError> = None;
        if !committed.is_empty() {
            inner.stats.groups.fetch_add(1, Ordering::SeqCst);
            if let Err(e) = fm.stage_binlog(inner, &recs, &outcomes, end, sync_now) {
                group_err = Some(e);
            }
        }
        // 3. Commit: apply, then queue the CommitMark.
        if group_err.is_none() && !committed.is_empty() {
            if let Some(s) = &sink {
                s.apply_group(&mut committed);
            }
            lock(&inner.writer).queue_commit_mark(end);
        }
        drop(turn);
        // 4. Acknowledge.
        hand_off(inner);
        acknowledge(inner, &slots, &mut outcomes, group_err.as_ref());
    }

    /// Steps 1 (the prepare sync) and 2 of a file-mode group whose records are framed and
    /// written up to `end`. Any error fails the log.
    fn stage_binlog(
        &self,
        inner: &Inner,
        recs: &[PendingRecord],
        outcomes: &[RecordOutcome],
        end: Lsn,
        sync_now: bool,
    ) -> Result<(), LogError> {
        debug_assert!(
            self.turn.try_lock().is_err(),
            "file mode's binlog positions advance only under turn"
        );
        let fm = self;
        let crash = |name: &'static str| {
            inner
                .fs
                .crash_point(name)
                .map_err(|e| LogError::Failed(inner.fail(format!("crash at {name}: {e}"))))
        };
        let failed = |what: &str, e: LogError| {
            LogError::Failed(inner.fail(format!(
                "{what} failed: {e}; the group stays in doubt until recovery, the log refuses \
                 further writes until restart"
            )))
        };
        if sync_now {
            sync_to(inner, end)?;
        }
        crash("binlog.after_prepare_sync")?;
        let mut b = lock(&fm.binlog);
        let mut r = Ok(());
        for (rec, out) in recs.iter().zip(outcomes) {
            if out.is_ok() {
                r = b.classic.append_group(&rec.events);
                if r.is_err() {
                    break;
                }
            }
        }
        b.groups_since_sync = b.groups_since_sync.saturating_add(1);
        fm.publish_stats(&b, &inner.stats);
        r.map_err(|e| failed("writing the group to the classic binlog", e))?;
        {
            let mut p = lock(&inner.progress);
            p.advance_binlog(end, false);
        }
        inner.progress_cv.notify_all();
        crash("binlog.after_binlog_write")?;
        if fm.sync_binlog != 0 && b.groups_since_sync >= fm.sync_binlog {
            let r = b.classic.sync();
            fm.publish_stats(&b, &inner.stats);
            r.map_err(|e| failed("fdatasync of the classic binlog", e))?;
            b.groups_since_sync = 0;
            {
                let mut p = lock(&inner.progress);
                p.advance_binlog(end, true);
            }
            inner.progress_cv.notify_all();
            crash("binlog.after_binlog_sync")?;
        }
        Ok(())
    }

    /// After the engine part of a flush (with `turn` held): syncs the classic binlog when
    /// `sync_binlog` (an explicit flush) and publishes how far it holds and syncs the log.
    pub(crate) fn flushed(&self, inner: &Inner, sync_binlog: bool) -> Result<(), LogError> {
        debug_assert!(
            self.turn.try_lock().is_err(),
            "file mode's binlog positions advance only under turn"
        );
        let fm = self;
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
        let end = lock(&inner.writer).lsn();
        let mut p = lock(&inner.progress);
        p.advance_binlog(end, all_synced);
        drop(p);
        inner.progress_cv.notify_all();
        Ok(())
    }

    /// `Log::rotate` in file mode: the log and the classic binlog rotate together.
    pub(crate) fn rotate(&self, inner: &Inner) -> Result<(), LogError> {
        let _turn = lock(&self.turn);
        lock(&inner.writer).rotate_now(inner)?;
        let mut b = lock(&self.binlog);
        // Durable when it returns: the old file synced, the new one and the index too.
        let r = b.classic.rotate();
        b.groups_since_sync = 0;
        self.publish_stats(&b, &inner.stats);
        drop(b);
        r.map_err(|e| {
            LogError::Failed(inner.fail(format!(
                "rotating the classic binlog failed: {e}; the log refuses further writes until restart"
            )))
        })?;
        self.synced_to_end(inner);
        Ok(())
    }

    /// `Log::reset` in file mode, with `turn`, `sync_lock` and the writer `w` held, before the
    /// log's reset: seals the log (every CommitMark durable: nothing in doubt), then resets
    /// the classic binlog.
    pub(crate) fn reset_binlog(&self, inner: &Inner, w: &mut Writer) -> Result<(), LogError> {
        if let Some(e) = inner.refusal() {
            return Err(e);
        }
        // As `reset_now` does: a full disk refuses the reset with nothing changed.
        inner.preparer.ensure_ready()?;
        w.seal_now(inner)?;
        let mut b = lock(&self.binlog);
        let r = b.classic.reset();
        b.groups_since_sync = 0;
        self.publish_stats(&b, &inner.stats);
        drop(b);
        r.map_err(|e| {
            LogError::Failed(inner.fail(format!(
                "RESET MASTER of the classic binlog failed: {e}; the log refuses further \
                 writes until restart"
            )))
        })
    }

    /// Shutdown after the final flush: closes the classic binlog (its in-use flag cleared)
    /// unless a concurrent shutdown did.
    pub(crate) fn close(&self, inner: &Inner) -> Result<(), LogError> {
        let _turn = lock(&self.turn);
        let mut b = lock(&self.binlog);
        if lock(&inner.progress).is_closed() {
            // A concurrent shutdown closed it already.
            return Ok(());
        }
        let r = b.classic.close();
        self.publish_stats(&b, &inner.stats);
        r
    }

    /// With `turn` held and every group appended to the classic binlog and synced there:
    /// everything framed so far is covered by the binlog.
    pub(crate) fn synced_to_end(&self, inner: &Inner) {
        debug_assert!(
            self.turn.try_lock().is_err(),
            "file mode's binlog positions advance only under turn"
        );
        let end = lock(&inner.writer).lsn();
        let mut p = lock(&inner.progress);
        p.advance_binlog(end, true);
        drop(p);
        inner.progress_cv.notify_all();
    }
}
