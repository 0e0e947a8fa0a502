//! Backup holds: what a running `onelog backup` keeps the engine from doing (DESIGN.md §7a,
//! docs/BACKUP.md). The SQL layer takes one for `BACKUP STAGE START` and drops it at
//! `BACKUP STAGE END` or when the session ends.
//!
//! Owns [`BackupHolds`] (one per engine: the count of live holds, under a mutex, with a
//! condition variable for waiters), [`BackupHold`] (a live hold; Drop releases it) and
//! [`Engine::hold_for_backup`] / [`Engine::backups_running`]. While a hold lives:
//! - no log segment is purged: PURGE BINARY LOGS and RESET MASTER wait until every hold is
//!   gone (bounded by the caller's timeout, then 1205, as MariaDB's statements waiting on the
//!   backup lock), and automatic expiry does nothing until then. Each hold also pins the log
//!   at LSN 0 (`Log::pin_reader`), so the log's own retention rules keep every segment too;
//! - the checkpoint writer removes no older checkpoint file (`Checkpointer::write`): the
//!   backup may be copying the one the control file named when it looked.
//!
//! Invariants: the count equals the number of live [`BackupHold`]s; a purge, a RESET MASTER
//! and the removal of older checkpoint files each run while holding the mutex with the count
//! at zero ([`BackupHolds::exclusive`], [`BackupHolds::try_exclusive`]), so a hold taken at
//! any moment either waits for them or sees none of their effects.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use onelog_log::ReaderPin;

use crate::engine::Engine;
use crate::error::EngineError;

/// The live holds of one engine (module docs).
#[derive(Default)]
pub(crate) struct BackupHolds {
    count: Mutex<usize>,
    released: Condvar,
}

/// Proof that no backup runs: no hold can be taken while it lives.
pub(crate) type NoBackup<'a> = MutexGuard<'a, usize>;

impl BackupHolds {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no hold lives, at most `wait`; then 1205.
    pub(crate) fn exclusive(&self, wait: Duration) -> Result<NoBackup<'_>, EngineError> {
        let deadline = Instant::now() + wait;
        let mut count = self.lock();
        while *count > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(EngineError::LockWaitTimeout);
            }
            count = self
                .released
                .wait_timeout(count, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        Ok(count)
    }

    /// [`BackupHolds::exclusive`] without waiting: None while a hold lives, or while anyone
    /// holds the mutex (this thread included: RESET MASTER checkpoints under its own
    /// exclusivity, and the writer then only skips removing older files).
    pub(crate) fn try_exclusive(&self) -> Option<NoBackup<'_>> {
        let count = match self.count.try_lock() {
            Ok(c) => c,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        (*count == 0).then_some(count)
    }

    pub(crate) fn running(&self) -> usize {
        *self.lock()
    }
}

/// A live backup hold (module docs); dropping it releases it.
pub struct BackupHold {
    holds: Arc<BackupHolds>,
    pin: Option<ReaderPin>,
}

impl Drop for BackupHold {
    fn drop(&mut self) {
        // The pin goes first: a purge woken below must not find it still registered.
        drop(self.pin.take());
        let mut count = self.holds.lock();
        debug_assert!(*count > 0, "a hold is released once");
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.holds.released.notify_all();
        }
    }
}

/// How long PURGE and RESET MASTER wait for backups when the caller names no bound
/// (MariaDB's default `lock_wait_timeout`).
pub const DEFAULT_BACKUP_WAIT: Duration = Duration::from_secs(86_400);

impl Engine {
    /// Takes a backup hold (module docs). Waits only for a purge, RESET MASTER or checkpoint
    /// cleanup in progress.
    pub fn hold_for_backup(&self) -> BackupHold {
        let holds = self.backup_holds().clone();
        let mut count = holds.lock();
        let pin = self.log().pin_reader(0);
        *count += 1;
        drop(count);
        BackupHold {
            holds,
            pin: Some(pin),
        }
    }

    /// Live backup holds (`Onelog_backups_running`).
    pub fn backups_running(&self) -> usize {
        self.backup_holds().running()
    }
}
