//! Log retention: which segments of the log (the binlog) may go, PURGE BINARY LOGS and RESET
//! MASTER, as `impl Engine` methods.
//!
//! Owns [`Engine::purge_log_to`] with [`PurgeTarget`] and [`Purged`], and [`Engine::reset_log`].
//! Called by the SQL layer's binlog statements (`admin/binlog.rs`). Uses the commit path
//! (`commit.rs`) and the checkpoint writer (`scheduler.rs`); nothing imports it.
//!
//! PURGE removes whole segments, oldest first, and never one that recovery still needs: every
//! segment purged must end at or before the LSN of the newest checkpoint. The rule itself is
//! the log's (`onelog_log::retention`, which asserts it where the plan is carried out); the
//! engine supplies what holds segments back (its newest checkpoint) and maps the outcome to
//! MySQL errors. Otherwise it is
//! refused with 1378 (`ER_LOG_IN_USE`, [`EngineError::LogInUse`]) naming the segment and the
//! checkpoint. The log does not track replica readers, so PURGE cannot see a connected replica
//! still reading an old segment (its reader then fails at the purged file): purge only what
//! replicas have read. In `--binlog-storage=file` mode PURGE is refused with 1235 (the classic
//! files are not purged yet: they go with RESET MASTER).
//!
//! Invariants: no segment that ends after the newest checkpoint's LSN (or any segment, before
//! the first checkpoint) is ever purged; the current (last) segment is never purged; RESET
//! MASTER checkpoints at the log's end before removing any segment.

use std::sync::Arc;

use onelog_binlog::GtidState;
use onelog_log::retention::{PurgeError, Retention};
use onelog_log::SegmentInfo;

use crate::engine::Engine;
use crate::error::EngineError;

/// Which segments [`Engine::purge_log_to`] removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurgeTarget<'a> {
    /// `PURGE BINARY LOGS TO 'file'`: every segment before the one whose file is named `file`;
    /// refused (nothing purged) when one of them is still needed for recovery.
    To(&'a str),
    /// `PURGE BINARY LOGS BEFORE`: the oldest segments last written before this time (seconds
    /// since the epoch, UTC), never the current one, as far as recovery allows.
    Before(i64),
}

/// What [`Engine::purge_log_to`] did.
#[derive(Debug)]
pub struct Purged {
    /// Segments removed.
    pub segments: usize,
    /// [`PurgeTarget::Before`] only: the 1378 error of the oldest segment that was old enough
    /// but kept for recovery (the SQL layer shows it as a warning).
    pub kept_for_recovery: Option<EngineError>,
}

/// Seconds since the epoch of the last write to `seg` (None when unknown).
fn modified_secs(seg: &SegmentInfo) -> Option<i64> {
    std::fs::metadata(&seg.path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
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
    /// remove a segment recovery needs, 1377 when removing failed.
    pub fn purge_log_to(&self, target: PurgeTarget<'_>) -> Result<Purged, EngineError> {
        self.check_purge_allowed()?;
        // Replica readers are not tracked by the log yet (module docs).
        let retention = Retention {
            checkpoint_lsn: self.checkpoint_lsn(),
            oldest_reader_lsn: None,
        };
        let log = self.log();
        match target {
            PurgeTarget::To(file) => Ok(Purged {
                segments: log.purge_to_checked(file, &retention)?,
                kept_for_recovery: None,
            }),
            PurgeTarget::Before(cutoff) => {
                let (segments, kept) = log.purge_while_checked(&retention, |s| {
                    modified_secs(s).is_some_and(|m| m < cutoff)
                })?;
                Ok(Purged {
                    segments,
                    kept_for_recovery: kept.map(|segment| EngineError::LogInUse { segment }),
                })
            }
        }
    }

    /// `RESET MASTER`: empties the binlog (every segment replaced by a new
    /// `binlog-000001.olog`, `@@gtid_binlog_pos` empty, the next GTID of a domain has sequence
    /// number 1) and keeps every table. Under the exclusive commit gate (no commit or DDL runs
    /// meanwhile) it flushes the log and checkpoints at the log's end LSN, so recovery never
    /// needs the removed segments; then resets the log and checkpoints again so the stored
    /// GTID state is empty too (recovery takes the log's state anyway, see [`Engine::open`]).
    pub fn reset_log(&self) -> Result<(), EngineError> {
        let core = self.core();
        core.check_open()?;
        let _gate = core.exclusive();
        let log = core.log();
        log.flush()
            .map_err(|e| EngineError::log("syncing the log before RESET MASTER", e))?;
        // Every record is applied (commits and DDL hold the gate across `Log::commit`); only
        // GTID state records can follow the root's LSN, so the root is the state at the end.
        let end = log.end_lsn();
        let mut root = (*core.store().current()).clone();
        root.lsn = root.lsn.max(end);
        core.store().publish(Arc::new(root));
        let at = self.checkpoints().write(core, false)?;
        debug_assert!(
            at >= end,
            "RESET MASTER checkpointed at {at}, before the end {end}"
        );
        log.reset()
            .map_err(|e| EngineError::log("resetting the log (RESET MASTER)", e))?;
        let mut root = (*core.store().current()).clone();
        root.gtid_state = GtidState::new();
        core.store().publish(Arc::new(root));
        self.checkpoints().write(core, true)?;
        // MariaDB's after_reset_master: positions forgotten, counters zeroed.
        core.semisync().reset();
        Ok(())
    }
}
