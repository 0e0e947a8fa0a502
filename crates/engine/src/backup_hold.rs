//! The count of live backup holds and the hold guard (`backup.rs` takes them for the engine).
//! A leaf module: the checkpoint writer (`scheduler.rs`) and the engine consult the count
//! without importing `backup.rs`, whose `impl Engine` imports the engine.
//!
//! Owns [`BackupHolds`] (one per engine: the count of live holds, under a mutex, with a
//! condition variable for waiters) and [`BackupHold`] (a live hold; Drop releases it).
//!
//! Invariants: the count equals the number of live [`BackupHold`]s (only [`BackupHolds::take`]
//! makes one); whoever holds [`NoBackup`] holds the mutex with the count at zero, so no hold is
//! taken meanwhile; a hold's log pin is in place before the count counts it and gone before
//! the count forgets it, so a purge that waited for the count never meets a backup's pin.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use std::path::PathBuf;

use onelog_log::{FileSystem, ReaderPin};

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

    /// A new hold keeping `pin` (made by `pin` under the mutex, so it is in place before a
    /// purge waiting for the count can run).
    pub(crate) fn take(self: &Arc<Self>, pin: impl FnOnce() -> ReaderPin) -> BackupHold {
        let mut count = self.lock();
        let pin = pin();
        *count += 1;
        drop(count);
        BackupHold {
            holds: self.clone(),
            pin: Some(pin),
            image: None,
        }
    }
}

/// A live backup hold (module docs); dropping it releases it.
pub struct BackupHold {
    holds: Arc<BackupHolds>,
    /// Some until Drop releases it, before the count: a purge woken by the count reaching
    /// zero must not find the pin still there (it would stop at it and remove nothing).
    pin: Option<ReaderPin>,
    /// The paged store's backup image this hold keeps, removed when it is released
    /// (`checkpoint.rs`, "Backup images").
    image: Option<(Arc<dyn FileSystem>, PathBuf)>,
}

impl BackupHold {
    /// Makes the hold own the backup image `path` (removed at release).
    pub(crate) fn keep_image(&mut self, fs: Arc<dyn FileSystem>, path: PathBuf) {
        self.image = Some((fs, path));
    }

    /// The backup image the hold keeps, if the engine wrote one (the paged store).
    pub fn image(&self) -> Option<&std::path::Path> {
        self.image.as_ref().map(|(_, p)| p.as_path())
    }
}

impl Drop for BackupHold {
    fn drop(&mut self) {
        debug_assert!(self.pin.is_some());
        if let Some((fs, path)) = self.image.take() {
            let _ = fs.remove_file(&path);
        }
        drop(self.pin.take());
        let mut count = self.holds.lock();
        debug_assert!(*count > 0, "a hold is released once");
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.holds.released.notify_all();
        }
    }
}
