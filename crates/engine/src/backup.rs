//! Backup holds: what a running `onelog backup` keeps the engine from doing (DESIGN.md §7a,
//! docs/BACKUP.md). The SQL layer takes one for `BACKUP STAGE START` and drops it at
//! `BACKUP STAGE END` or when the session ends.
//!
//! Owns [`Engine::hold_for_backup`] / [`Engine::backups_running`]; the count of holds and the
//! [`BackupHold`] guard are `backup_hold.rs`'s (a leaf the checkpoint writer can import).
//! While a hold lives:
//! - no log segment is purged: PURGE BINARY LOGS and RESET MASTER wait until every hold is
//!   gone (bounded by the caller's timeout, then 1205, as MariaDB's statements waiting on the
//!   backup lock), and automatic expiry does nothing until then. Each hold also pins the log
//!   at LSN 0 (`Log::pin_reader`), so the log's own retention rules keep every segment too;
//! - the checkpoint writer removes no older checkpoint file (`Checkpointer::write`): the
//!   backup may be copying the one the control file named when it looked;
//! - with the paged store, the backup image written for it ([`Engine::hold_for_backup_as`])
//!   stays.
//!
//! Invariants: the count equals the number of live [`BackupHold`]s; a purge, a RESET MASTER
//! and the removal of older checkpoint files each run while holding the mutex with the count
//! at zero (`BackupHolds::exclusive`, `BackupHolds::try_exclusive`), so a hold taken at
//! any moment either waits for them or sees none of their effects.

use std::time::Duration;

pub use crate::backup_hold::BackupHold;
use crate::engine::Engine;
use crate::error::EngineError;

/// How long PURGE and RESET MASTER wait for backups when the caller names no bound
/// (MariaDB's default `lock_wait_timeout`).
pub const DEFAULT_BACKUP_WAIT: Duration = Duration::from_secs(86_400);

impl Engine {
    /// Takes a backup hold (module docs). Waits only for a purge, RESET MASTER or checkpoint
    /// cleanup in progress.
    pub fn hold_for_backup(&self) -> BackupHold {
        self.backup_holds().take(|| self.log().pin_reader(0))
    }

    /// [`Engine::hold_for_backup`] for the backup session `tag` (its connection id), which
    /// with the paged store also writes the current tables as a backup image beside the
    /// control file (`checkpoint.rs`, "Backup images"), for `onelog backup` to copy instead of
    /// a checkpoint file; the hold removes it when released. The image's LSN is durable and
    /// the hold keeps the log after it. Commits go on while it is written.
    pub fn hold_for_backup_as(&self, tag: u64) -> Result<BackupHold, EngineError> {
        let mut hold = self.hold_for_backup();
        if self.paged() {
            let (fs, path) = self.checkpoints().write_backup_image(self.core(), tag)?;
            hold.keep_image(fs, path);
        }
        Ok(hold)
    }

    /// Live backup holds (`Onelog_backups_running`).
    pub fn backups_running(&self) -> usize {
        self.backup_holds().running()
    }
}
