//! `BACKUP STAGE` and the waits of the statements a running backup holds up.
//!
//! `BACKUP STAGE START` takes an engine backup hold (`onelog_engine::backup`): while it lives
//! no log segment is purged and no checkpoint file removed, so `onelog backup` can copy the
//! data directory's files. The session keeps the hold with its stage
//! ([`ExecContext::backup`]); `BACKUP STAGE END` drops it, and so does the end of the session
//! in any way (COM_QUIT, a lost client, KILL: the session is dropped) and COM_CHANGE_USER /
//! COM_RESET_CONNECTION (`Session::reset`), as MariaDB's `THD::cleanup` runs `backup_end`.
//! The stages follow MariaDB's `run_backup_stage` (sql/backup.cc): a session moves only
//! forward (4147 for a stage at or before its current one), a stage other than START without
//! a running backup is 4146, END jumps straight to the end, and any other stage runs each one
//! between. FLUSH has nothing to do (onelog has no non-transactional tables); BLOCK_DDL and
//! BLOCK_COMMIT are refused with 1235 (the backup needs neither: its end is a durable LSN), and
//! the session stays at the last stage that ran. As in MariaDB, BACKUP STAGE commits the
//! session's open transaction first, and needs RELOAD (checked by the dispatcher).
//!
//! Unlike MariaDB, where a second session's START waits for the first backup to end, backups
//! of several sessions run together (the engine counts its holds: `Onelog_backups_running`).
//!
//! PURGE BINARY LOGS and RESET MASTER wait while any hold lives ([`wait_for_backups`]),
//! bounded by the session's `lock_wait_timeout` (then 1205), showing `Waiting for backup lock`
//! in SHOW PROCESSLIST. The engine waits on its condition variable; the statement looks up
//! every [`WAIT_SLICE`] only to stop at KILL, `max_statement_time` or a lost client, as SLEEP()
//! does.
//!
//! Invariants: a session holds at most one hold, and holds one exactly while its stage is
//! some stage before END (the pair is one `Option`); refused stages change nothing.

use std::time::{Duration, Instant};

use onelog_engine::EngineError;
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::parse::admin::BackupStage;

/// PROCESSLIST state of a statement waiting for backups (MariaDB's `MDL_BACKUP` wait).
pub(crate) const WAITING_FOR_BACKUP_LOCK: &str = "Waiting for backup lock";

/// Longest single engine wait of [`wait_for_backups`] between two checks of the statement.
pub(crate) const WAIT_SLICE: Duration = Duration::from_millis(100);

/// `BACKUP STAGE stage` (module docs).
pub(crate) fn backup_stage(cx: &mut ExecContext, stage: BackupStage) -> Result<(), SqlError> {
    cx.commit()?;
    let Some(current) = cx.backup.as_ref().map(|b| b.0) else {
        if stage != BackupStage::Start {
            return Err(SqlError::of(
                errors::ER_BACKUP_NOT_RUNNING,
                "You must start backup with \"BACKUP STAGE START\"",
            ));
        }
        return start(cx);
    };
    if current >= stage {
        return Err(SqlError::of(
            errors::ER_BACKUP_WRONG_STAGE,
            format!(
                "Backup stage '{}' is same or before current backup stage '{}'",
                stage.name(),
                current.name()
            ),
        ));
    }
    if stage == BackupStage::End {
        cx.backup = None;
        return Ok(());
    }
    // Each stage after the current one up to `stage`, as MariaDB does.
    for next in BackupStage::ALL
        .into_iter()
        .filter(|s| *s > current && *s <= stage)
    {
        match next {
            BackupStage::Flush => {
                if let Some(b) = cx.backup.as_mut() {
                    b.0 = BackupStage::Flush;
                }
            }
            other => {
                return Err(SqlError::of(
                    errors::ER_NOT_SUPPORTED_YET,
                    format!(
                        "This version of onelog doesn't yet support 'BACKUP STAGE {}' (onelog backup needs only START and END)",
                        other.name()
                    ),
                ))
            }
        }
    }
    debug_assert!(cx.backup.as_ref().is_some_and(|b| b.0 == stage));
    Ok(())
}

/// `BACKUP STAGE START`: the engine's hold, kept by the session.
fn start(cx: &mut ExecContext) -> Result<(), SqlError> {
    debug_assert!(cx.backup.is_none(), "one hold per session");
    if cx.server.engine.log().classic_files().is_some() {
        return Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            "This version of onelog doesn't yet support 'BACKUP STAGE with --binlog-storage=file'",
        ));
    }
    // With the paged store this writes the tables' backup image (named after the session).
    let hold = cx
        .server
        .engine
        .hold_for_backup_as(u64::from(cx.connection_id))?;
    cx.backup = Some((BackupStage::Start, hold));
    Ok(())
}

/// Runs `attempt` (an engine call that waits at most its argument for running backups, then
/// fails with [`EngineError::LockWaitTimeout`]) until it gets past the backups, at most the
/// session's `lock_wait_timeout` (then 1205). While it waits the statement shows
/// [`WAITING_FOR_BACKUP_LOCK`] and stops at KILL, `max_statement_time` or a lost client.
pub(crate) fn wait_for_backups<T>(
    cx: &ExecContext,
    mut attempt: impl FnMut(Duration) -> Result<T, EngineError>,
) -> Result<T, SqlError> {
    // The common case: no backup runs, nothing waits.
    match attempt(Duration::ZERO) {
        Err(EngineError::LockWaitTimeout) => {}
        other => return other.map_err(SqlError::from),
    }
    let deadline = Instant::now() + cx.vars.lock_wait_timeout();
    cx.guard.set_state(WAITING_FOR_BACKUP_LOCK);
    let r = loop {
        if let Err(e) = cx.guard.check_now() {
            break Err(e);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match attempt(left.min(WAIT_SLICE)) {
            Err(EngineError::LockWaitTimeout) if !left.is_zero() => continue,
            other => break other.map_err(SqlError::from),
        }
    };
    cx.guard.set_state("starting");
    r
}
