//! Log retention: which segments of the log (the binlog) may go — PURGE BINARY LOGS,
//! automatic expiry (`binlog_expire_logs_seconds`, `max_binlog_total_size`) and RESET MASTER —
//! as `impl Engine` methods.
//!
//! Owns [`Engine::purge_log_to`] with [`PurgeTarget`] and [`Purged`], [`Engine::expire_logs`]
//! / [`Engine::expire_logs_at`] (the two variables' live values are `expiry.rs`'s), and
//! [`Engine::reset_log`]. Called by the SQL layer's binlog statements and SET GLOBAL
//! (`admin/binlog.rs`, `sysvar`), and by the checkpoint scheduler's thread
//! (`scheduler.rs`), which runs expiry at every look (about once a second, so within a second
//! of each rotation) and after each checkpoint (which may free segments recovery held). Uses
//! the commit path (`commit.rs`) and the checkpoint writer (`scheduler.rs`); nothing imports
//! it.
//!
//! The rules are the log's (`onelog_log::retention`, which asserts them where a plan is
//! carried out): no segment recovery still needs (every segment purged ends at or before the
//! LSN of the newest checkpoint), none an open reader still needs (the log's reader pins,
//! `Log::pin_reader`: a replica's dump thread, a backup), never the current one. The engine
//! supplies its newest checkpoint and maps the outcome to MySQL errors:
//! - `PURGE BINARY LOGS TO`: a segment recovery needs refuses it with 1378
//!   ([`EngineError::LogInUse`], naming the segment and the checkpoint); a segment a reader
//!   needs stops it silently after the segments before it, as MariaDB 10.11 answers when a
//!   dump thread is behind (OK, no warning);
//! - `PURGE BINARY LOGS BEFORE`: stops at either; the 1378 of a segment kept for recovery is
//!   returned for the SQL layer to show as a warning;
//! - expiry: stops at either, and reports what it removed ([`EngineEvent::LogsExpired`], one
//!   error-log line) and a failure once per distinct error ([`EngineEvent::ExpiryFailed`]).
//!
//! In `--binlog-storage=file` mode PURGE is refused with 1235 and expiry does nothing (the
//! classic files are not purged yet: they go with RESET MASTER).
//!
//! While a backup runs (`backup.rs`) nothing is purged: PURGE and RESET MASTER wait for it
//! (bounded; then 1205), expiry waits for its next look.
//!
//! Invariants: no segment that ends after the newest checkpoint's LSN (or any segment, before
//! the first checkpoint), or after the oldest reader pin, is ever purged; the current (last)
//! segment is never purged; RESET MASTER checkpoints at the log's end before removing any
//! segment.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use onelog_binlog::GtidState;
use onelog_log::retention::{segment_name, NeededBy, PurgeError, PurgeOutcome, Retention};

use crate::backup::DEFAULT_BACKUP_WAIT;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::report::EngineEvent;

/// Which segments [`Engine::purge_log_to`] removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurgeTarget<'a> {
    /// `PURGE BINARY LOGS TO 'file'`: every segment before the one whose file is named `file`;
    /// refused (nothing purged) when one of them is still needed for recovery.
    To(&'a str),
    /// `PURGE BINARY LOGS BEFORE`: the oldest segments closed before this time (seconds
    /// since the epoch, UTC), never the current one, as far as recovery and
    /// readers allow (`SegmentInfo::closed_at`, as MariaDB compares a file's mtime).
    Before(i64),
}

/// What [`Engine::purge_log_to`] and [`Engine::expire_logs`] did.
#[derive(Debug, Default)]
pub struct Purged {
    /// Segments removed.
    pub segments: usize,
    /// [`PurgeTarget::Before`] and expiry: the 1378 error of the oldest segment that was to
    /// go but is kept for recovery (the SQL layer shows it as a warning).
    pub kept_for_recovery: Option<EngineError>,
    /// The binlog file name of the segment a reader pin kept (the purge stopped before it).
    pub kept_for_reader: Option<String>,
}

impl Purged {
    fn of(out: PurgeOutcome) -> Self {
        let mut p = Purged {
            segments: out.removed.len(),
            ..Purged::default()
        };
        match out.stopped_at {
            Some(
                s @ onelog_log::retention::SegmentInUse {
                    needed_by: NeededBy::Recovery { .. },
                    ..
                },
            ) => p.kept_for_recovery = Some(EngineError::LogInUse { segment: s }),
            Some(s) => p.kept_for_reader = Some(s.name),
            None => {}
        }
        p
    }
}

impl From<PurgeError> for EngineError {
    fn from(e: PurgeError) -> Self {
        match e {
            PurgeError::UnknownTarget(_) => EngineError::UnknownTargetLog,
            PurgeError::InUse(segment) => EngineError::LogInUse { segment },
            PurgeError::Log(source) => EngineError::PurgeFailed { source },
        }
    }
}

impl Engine {
    /// 1235 in `--binlog-storage=file` mode, where PURGE BINARY LOGS is not supported (yet).
    pub fn check_purge_allowed(&self) -> Result<(), EngineError> {
        if self.log().classic_files().is_some() {
            return Err(EngineError::PurgeInFileMode);
        }
        Ok(())
    }

    /// PURGE BINARY LOGS: removes the segments `target` names, by the rules of the module docs.
    /// Errors: 1235 in file mode, 1373 for an unknown file, 1378 when [`PurgeTarget::To`] would
    /// remove a segment recovery needs, 1377 when removing failed. Waits for running backups
    /// as [`Engine::purge_log_within`] does, up to [`DEFAULT_BACKUP_WAIT`].
    pub fn purge_log_to(&self, target: PurgeTarget<'_>) -> Result<Purged, EngineError> {
        self.purge_log_within(target, DEFAULT_BACKUP_WAIT)
    }

    /// [`Engine::purge_log_to`], waiting at most `wait` for running backups to end (a backup
    /// hold keeps every segment, `backup.rs`); then 1205.
    pub fn purge_log_within(
        &self,
        target: PurgeTarget<'_>,
        wait: Duration,
    ) -> Result<Purged, EngineError> {
        self.check_purge_allowed()?;
        let _no_backup = self.backup_holds().exclusive(wait)?;
        let retention = self.retention();
        let log = self.log();
        let out = match target {
            PurgeTarget::To(file) => log.purge_to_checked(file, &retention)?,
            PurgeTarget::Before(cutoff) => log.purge_while_checked(&retention, |s| {
                s.closed_at
                    .and_then(|c| c.duration_since(UNIX_EPOCH).ok())
                    .is_some_and(|c| (c.as_secs() as i64) < cutoff)
            })?,
        };
        Ok(Purged::of(out))
    }

    /// What holds segments back besides the reader pins the log adds itself.
    fn retention(&self) -> Retention {
        Retention {
            checkpoint_lsn: self.checkpoint_lsn(),
            oldest_reader_lsn: None,
        }
    }

    /// `binlog_expire_logs_seconds` (0: never by age).
    pub fn binlog_expire_logs_seconds(&self) -> u64 {
        self.expiry().expire_logs_seconds()
    }

    /// SET GLOBAL `binlog_expire_logs_seconds`: applies from the next expiry on.
    pub fn set_binlog_expire_logs_seconds(&self, secs: u64) {
        self.expiry().set_expire_logs_seconds(secs);
    }

    /// `max_binlog_total_size` in bytes (0: unlimited).
    pub fn max_binlog_total_size(&self) -> u64 {
        self.expiry().max_total_size()
    }

    /// SET GLOBAL `max_binlog_total_size`: applies from the next expiry on.
    pub fn set_max_binlog_total_size(&self, bytes: u64) {
        self.expiry().set_max_total_size(bytes);
    }

    /// Automatic expiry now (see [`Engine::expire_logs_at`]).
    pub fn expire_logs(&self) -> Result<Purged, EngineError> {
        self.expire_logs_at(SystemTime::now())
    }

    /// Automatic expiry as of `now`: removes the oldest segments closed more than
    /// `binlog_expire_logs_seconds` before `now`, or while the binlog is larger than
    /// `max_binlog_total_size`, by the rules of the module docs. Nothing (and no work beyond
    /// two atomic loads) while both are 0, and nothing in file mode. First it trims what
    /// rotations sealed ([`Engine::trim_sealed_logs`]; an empty queue costs one lock). Reports
    /// what it removed and, once per distinct error, a failure ([`EngineEvent`]).
    pub fn expire_logs_at(&self, now: SystemTime) -> Result<Purged, EngineError> {
        self.trim_sealed_logs();
        let limits = self.expiry().limits();
        if limits.is_off() || self.check_purge_allowed().is_err() {
            return Ok(Purged::default());
        }
        // A running backup keeps every segment; expiry tries again at its next look.
        let Some(_no_backup) = self.backup_holds().try_exclusive() else {
            return Ok(Purged::default());
        };
        let notifier = self.core().notifier();
        let result = self.log().expire_checked(&self.retention(), &limits, now);
        match result {
            Ok(out) => {
                self.expiry().note_error(None);
                if let (Some(first), Some(last)) = (out.removed.first(), out.removed.last()) {
                    notifier.report(&EngineEvent::LogsExpired {
                        segments: out.removed.len(),
                        first: segment_name(first),
                        last: segment_name(last),
                    });
                }
                Ok(Purged::of(out))
            }
            Err(e) => {
                let e = EngineError::from(e);
                let text = e.to_string();
                if self.expiry().note_error(Some(&text)) {
                    notifier.report(&EngineEvent::ExpiryFailed { error: text });
                }
                Err(e)
            }
        }
    }

    /// Shortens sealed segments to their records (`Log::trim_sealed`), at every expiry look
    /// whatever the limits: a failure is reported once per distinct error and retried at the
    /// next look (the segment keeps its preallocated size meanwhile, nothing else changes).
    fn trim_sealed_logs(&self) {
        let error = self.log().trim_sealed().err().map(|e| e.to_string());
        if self.expiry().note_trim_error(error.as_deref()) {
            let error = error.unwrap_or_default();
            self.core()
                .notifier()
                .report(&EngineEvent::TrimFailed { error });
        }
    }

    /// `RESET MASTER`: empties the binlog (every segment replaced by a new
    /// `binlog-000001.olog`, `@@gtid_binlog_pos` empty, the next GTID of a domain has sequence
    /// number 1) and keeps every table. Under the exclusive commit gate (no commit or DDL runs
    /// meanwhile) it flushes the log and checkpoints at the log's end LSN, so recovery never
    /// needs the removed segments; then resets the log and checkpoints again so the stored
    /// GTID state is empty too (recovery takes the log's state anyway, see [`Engine::open`]).
    /// Waits for running backups as [`Engine::reset_log_within`] does, up to
    /// [`DEFAULT_BACKUP_WAIT`].
    pub fn reset_log(&self) -> Result<(), EngineError> {
        self.reset_log_within(DEFAULT_BACKUP_WAIT)
    }

    /// [`Engine::reset_log`], waiting at most `wait` for running backups to end; then 1205.
    pub fn reset_log_within(&self, wait: Duration) -> Result<(), EngineError> {
        let core = self.core();
        core.check_open()?;
        let _no_backup = self.backup_holds().exclusive(wait)?;
        let serial = self.checkpoints().serialize();
        let gate = core.exclusive();
        let log = core.log();
        log.flush()
            .map_err(|e| EngineError::log("syncing the log before RESET MASTER", e))?;
        // Every record is applied (commits and DDL hold the gate across `Log::commit`); only
        // GTID state records can follow the root's LSN, so the root is the state at the end.
        let end = log.end_lsn();
        let mut root = (*core.store().current()).clone();
        root.lsn = root.lsn.max(end);
        drop(core.store().publish(Arc::new(root)));
        let at = self
            .checkpoints()
            .write_gated(core, false, &gate, &serial)?;
        debug_assert!(
            at >= end,
            "RESET MASTER checkpointed at {at}, before the end {end}"
        );
        log.reset()
            .map_err(|e| EngineError::log("resetting the log (RESET MASTER)", e))?;
        let mut root = (*core.store().current()).clone();
        root.gtid_state = GtidState::new();
        drop(core.store().publish(Arc::new(root)));
        self.checkpoints().write_gated(core, true, &gate, &serial)?;
        // No backup runs (we hold that), but the writes above could not know it.
        self.checkpoints().remove_older();
        // MariaDB's after_reset_master: positions forgotten, counters zeroed.
        core.semisync().reset();
        Ok(())
    }
}
