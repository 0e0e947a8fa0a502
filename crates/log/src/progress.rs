//! `Progress`: the log's positions and health, the one owner of the LSN triple. It lives in
//! `Inner::progress` (a mutex; its condvar `Inner::progress_cv` wakes readers and waiters);
//! its fields are private, and every change is one of the checked transitions below.
//!
//! States, who sets them, what follows (in the manner of RocksDB's `write_thread.h`):
//! - `end`: the end of the framed records. Set by the appender ([`Progress::set_end`]) when a
//!   group leader has framed its group (`appender::append_group`), and by a write that
//!   carried records a group was still framing (rotation in the middle of a group). What
//!   follows: the flusher (levels 0/2) or the leader (level 1) writes up to it.
//! - `written`: the records below it are in the segment file (page cache). Set by the
//!   appender's write ([`Progress::set_written`]). What follows: readers that accept
//!   non-durable records see up to it; a sync makes it durable.
//! - `durable`: the records below it were synced. Moved by the one sync path
//!   ([`Progress::advance_durable`], after `Inner::fdatasync` succeeded). What follows:
//!   level-1 committers are acknowledged, readers (replicas) see up to it, SyncMarks name it.
//! - `cur_file` / `cur_path`: the segment the bytes in `durable..written` live in, so a sync
//!   outside the writer lock syncs the right file. Switched by rotation and reset
//!   ([`Progress::switch_segment`]), which sync the old segment first.
//! - `failed`: why the log stopped taking writes ([`Progress::fail`]: fsync or write error,
//!   full disk, simulated crash; the first reason wins). Nothing follows: no more writes and
//!   no more fsyncs until restart; readers keep reading what was durable.
//! - `closed`: the log was shut down ([`Progress::close`]); writers get `Closed`.
//! - `binlog_written` / `binlog_synced` (file mode; `u64::MAX` in engine mode): every group
//!   starting below them is in / synced in the classic binlog. Advanced by the staged commit
//!   and by flush/rotate ([`Progress::advance_binlog`]). Readers see no further than
//!   `binlog_written` ([`Progress::visible_end`]); `Log::durable_lsn` reports no further than
//!   `binlog_synced`.
//!
//! Invariants: `durable <= written <= end`; none of the three, nor `binlog_written` and
//! `binlog_synced`, ever moves back (asserted in every transition); `failed` and `closed`,
//! once set, stay set.
//!
//! Called by the appender, the flusher, the group commit, readers, recovery (which builds it
//! at the recovered end, [`Progress::recovered`]) and `Log`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fs::File;
use crate::Lsn;

/// Positions and health, guarded by `Inner::progress` (see the module docs).
pub(crate) struct Progress {
    end: Lsn,
    written: Lsn,
    durable: Lsn,
    cur_file: Arc<dyn File>,
    cur_path: PathBuf,
    failed: Option<String>,
    closed: bool,
    binlog_written: Lsn,
    binlog_synced: Lsn,
}

impl Progress {
    /// The state recovery leaves: everything up to `lsn` is durable (and in the classic
    /// binlog, in file mode), in the segment `file` at `path`.
    pub fn recovered(lsn: Lsn, file: Arc<dyn File>, path: PathBuf, file_mode: bool) -> Self {
        let binlog = if file_mode { lsn } else { u64::MAX };
        Progress {
            end: lsn,
            written: lsn,
            durable: lsn,
            cur_file: file,
            cur_path: path,
            failed: None,
            closed: false,
            binlog_written: binlog,
            binlog_synced: binlog,
        }
    }

    pub fn end(&self) -> Lsn {
        self.end
    }

    pub fn written(&self) -> Lsn {
        self.written
    }

    pub fn durable(&self) -> Lsn {
        self.durable
    }

    pub fn binlog_synced(&self) -> Lsn {
        self.binlog_synced
    }

    /// The segment the bytes in `durable..written` live in.
    pub fn cur_file(&self) -> &Arc<dyn File> {
        &self.cur_file
    }

    pub fn cur_path(&self) -> &Path {
        &self.cur_path
    }

    /// Why the log takes no more writes, if it failed.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The end of the framed records moved to `end` (the crate's LSN invariants, asserted).
    pub fn set_end(&mut self, end: Lsn) {
        debug_assert!(end >= self.end, "end LSN moves back: {} -> {end}", self.end);
        debug_assert!(
            self.written <= end,
            "written {} past end {end}",
            self.written
        );
        self.end = end;
    }

    /// The records up to `written` are in the segment file.
    pub fn set_written(&mut self, written: Lsn) {
        debug_assert!(
            written >= self.written,
            "written LSN moves back: {} -> {written}",
            self.written
        );
        debug_assert!(
            written <= self.end,
            "written {written} past end {}",
            self.end
        );
        self.written = written;
    }

    /// A sync made everything below `durable` durable (never moves back).
    pub fn advance_durable(&mut self, durable: Lsn) {
        debug_assert!(
            durable <= self.written,
            "durable {durable} past written {}",
            self.written
        );
        self.durable = self.durable.max(durable);
    }

    /// Rotation or reset: the bytes from now on go to `file` at `path`.
    pub fn switch_segment(&mut self, file: Arc<dyn File>, path: PathBuf) {
        self.cur_file = file;
        self.cur_path = path;
    }

    /// Enters the failed state; the first reason wins. Returns the reason in force.
    pub fn fail(&mut self, why: String) -> String {
        self.failed.get_or_insert(why).clone()
    }

    /// Shut down: writers get `Closed` from now on.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// File mode: every group starting below `end` is in the classic binlog, and synced
    /// there too when `synced` (neither position moves back).
    pub fn advance_binlog(&mut self, end: Lsn, synced: bool) {
        self.binlog_written = self.binlog_written.max(end);
        if synced {
            self.binlog_synced = self.binlog_synced.max(end);
        }
        debug_assert!(self.binlog_synced <= self.binlog_written);
    }

    /// The end a reader sees: the written or the durable end, and in file mode no further
    /// than the classic binlog.
    pub fn visible_end(&self, include_non_durable: bool) -> Lsn {
        let end = if include_non_durable {
            self.written
        } else {
            self.durable
        };
        end.min(self.binlog_written)
    }
}
