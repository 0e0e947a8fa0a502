//! The paged store's delta budget (docs/PAGED_STORE.md, build order step 5): back-pressure
//! that keeps the in-memory delta bounded when commits outrun checkpoints.
//!
//! The delta (and, while a checkpoint runs, the frozen layer under it) holds the changes the
//! log records after the newest completed checkpoint's LSN, so the log bytes after that LSN
//! measure it. Below [`DeltaBudget::hard_bytes`] a commit does not wait; at or above it a
//! commit asks for a checkpoint and waits, before it takes the commit gate (which a checkpoint
//! needs), until a checkpoint brings the measure under the limit again. A transaction larger
//! than the limit still commits: only the state before it is checked.
//!
//! A checkpoint that cannot finish (the base's disk is full, a damaged base) must not turn
//! into a server that hangs: a commit waits at most its session's `innodb_lock_wait_timeout`,
//! then fails: with 1030 naming the base, the measure, the limit and the checkpoints' last
//! error when a checkpoint failed, else with 1205 (checkpoints are only slow: the
//! application, or a replica, retries as after any lock wait timeout). A KILL ends the wait
//! with 1317. The transaction is not logged, so nothing acknowledged is lost.
//!
//! While a CREATE INDEX builds its entries beside commits (`online_index.rs`) it holds the
//! checkpoint writers' lock, so no checkpoint can make room until it is done: a commit waits
//! for it as it waited at the commit gate before index builds left the gate open, without
//! timing out, and gets its whole timeout after it ([`DeltaBudget::hold_for_build`]).
//!
//! What the measure does not see: DDL and CREATE ... SELECT do not wait, and DDL that moves a
//! table's rows into the delta (ADD / DROP COLUMN and a copying ALTER write a new table)
//! grows it by more than the log it writes. An index added over rows in the base writes its
//! entries into the base (`index_build.rs`).
//!
//! ## Calibration
//!
//! What a log byte costs the delta depends on the workload: sysbench's rows about 2.5 bytes
//! of memory, small rows with five secondary indexes thirty (each entry a map slot of its
//! own). So the limit is not fixed: every checkpoint into the base estimates the memory its
//! frozen layer holds (`TableData::memory_estimate`) against the log that layer covers (from
//! the checkpoint before it), and the limit becomes the log that fills `memory_bytes` (a
//! quarter of the budget, what the base's caches leave) at that rate, within a floor (2 MiB:
//! checkpoints stay at least a mebibyte of log apart) and the fixed limit of the budget. It
//! starts at the floor, so the first checkpoint, a mebibyte of log after the start, measures
//! before the delta can grow at an unknown rate (starting at the fixed limit, a bulk load of
//! small indexed rows took a 128M server to 380 MiB before the first checkpoint); the
//! checkpoint scheduler's size trigger is half the limit. A workload that changes rate is
//! followed from the next checkpoint on. Every open starts at the floor again: after a
//! recovery that replayed more log than that, the first commits wait for the checkpoint the
//! open asks for (`Engine::open`), which measures.
//!
//! Invariants: the checkpoint LSN only grows; a commit under the limit takes no lock of the
//! budget's; every waiter is woken by each completed checkpoint and re-checks; a waiter asks
//! for a checkpoint again at every re-check (a request the scheduler dropped during a backoff
//! is made again); a commit never waits while it holds the commit gate.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use onelog_log::Lsn;

use crate::base::BaseError;
use crate::error::EngineError;

/// The smallest limit calibration sets: checkpoints at least every mebibyte of log.
const LEAST_HARD_BYTES: u64 = 2 << 20;
/// The least log a checkpoint must cover for its frozen layer to calibrate the limit.
const LEAST_CALIBRATION_BYTES: u64 = 256 << 10;

/// How long one wait sleeps before it looks at the log and the clock again.
const RECHECK: Duration = Duration::from_millis(100);

/// The limit and the newest checkpoint's LSN, shared by the committer (which waits) and the
/// checkpoint writer (which wakes the waiters).
#[derive(Debug)]
pub(crate) struct DeltaBudget {
    /// The limit now: [`Self::calibrate`] sets it between `least` and `most`.
    hard_bytes: AtomicU64,
    least: u64,
    most: u64,
    /// What the delta and the frozen layer may hold in memory at the limit.
    memory_bytes: u64,
    /// The base's directory, for the error.
    dir: PathBuf,
    /// The newest completed checkpoint's LSN: read without a lock by every commit.
    checkpointed: AtomicU64,
    /// Waiters sleep on `done` under `wake`; a checkpoint notifies under it.
    wake: Mutex<()>,
    done: Condvar,
    waits: AtomicU64,
    wait_us: AtomicU64,
    hooks: OnceLock<CheckpointHooks>,
    /// Index builds holding the checkpoint writers' lock ([`Self::hold_for_build`]).
    builds: AtomicU64,
}

/// An index build that keeps checkpoints out ([`DeltaBudget::hold_for_build`]), until dropped.
pub(crate) struct BuildHold<'a>(&'a DeltaBudget);

impl Drop for BuildHold<'_> {
    fn drop(&mut self) {
        self.0.builds.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What the surroundings of a wait provide: the log's end, a way to ask for a checkpoint,
/// the checkpoints' last error (for the message when the wait gives up), and the session.
pub(crate) struct WaitContext<'a> {
    pub end_lsn: &'a dyn Fn() -> Lsn,
    pub request_checkpoint: &'a dyn Fn(),
    pub last_error: &'a dyn Fn() -> Option<String>,
    /// True once the waiting session was KILLed.
    pub interrupted: &'a dyn Fn() -> bool,
    pub timeout: Duration,
}

/// The checkpoint side of a wait, installed once the engine exists
/// ([`DeltaBudget::set_checkpoints`]): asks for a checkpoint, reads the last error.
pub(crate) struct CheckpointHooks {
    pub request: Box<dyn Fn() + Send + Sync>,
    pub last_error: Box<dyn Fn() -> Option<String> + Send + Sync>,
}

impl std::fmt::Debug for CheckpointHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CheckpointHooks")
    }
}

impl DeltaBudget {
    /// A budget of at most `most` bytes of log after the checkpoint at `checkpointed` (0 when
    /// the base has none yet), for the base in `dir`, whose delta and frozen layer may hold
    /// `memory_bytes` at the limit (module docs, "Calibration"). It starts at the floor.
    pub(crate) fn new(most: u64, memory_bytes: u64, dir: PathBuf, checkpointed: Lsn) -> Self {
        DeltaBudget {
            hard_bytes: AtomicU64::new(LEAST_HARD_BYTES.min(most)),
            least: LEAST_HARD_BYTES.min(most),
            most,
            memory_bytes,
            dir,
            checkpointed: AtomicU64::new(checkpointed),
            wake: Mutex::new(()),
            done: Condvar::new(),
            waits: AtomicU64::new(0),
            wait_us: AtomicU64::new(0),
            hooks: OnceLock::new(),
            builds: AtomicU64::new(0),
        }
    }

    /// Says that an index build holds the checkpoint writers' lock until the hold is dropped:
    /// meanwhile a commit waiting for room does not time out (module docs).
    pub(crate) fn hold_for_build(&self) -> BuildHold<'_> {
        self.builds.fetch_add(1, Ordering::AcqRel);
        BuildHold(self)
    }

    /// Installs how a wait asks for a checkpoint and reads the checkpoints' last error (once;
    /// before it, a wait asks nobody).
    pub(crate) fn set_checkpoints(&self, hooks: CheckpointHooks) {
        let _ = self.hooks.set(hooks);
    }

    /// [`Self::wait_for_room`] with the installed hooks, for a commit at `end_lsn()` of a
    /// session with `timeout` that `interrupted` tells is KILLed.
    pub(crate) fn wait(
        &self,
        end_lsn: &dyn Fn() -> Lsn,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<(), EngineError> {
        let none = || None;
        let (request, last_error): (&dyn Fn(), &dyn Fn() -> Option<String>) = match self.hooks.get()
        {
            Some(h) => (&*h.request, &*h.last_error),
            None => (&|| {}, &none),
        };
        self.wait_for_room(&WaitContext {
            end_lsn,
            request_checkpoint: request,
            last_error,
            interrupted,
            timeout,
        })
    }

    /// The limit, in log bytes after the newest checkpoint.
    pub(crate) fn hard_bytes(&self) -> u64 {
        self.hard_bytes.load(Ordering::Relaxed)
    }

    /// The log bytes between checkpoints: half the limit, so a commit waits only when a
    /// checkpoint is running and the log has grown by another such distance meanwhile.
    pub(crate) fn checkpoint_bytes(&self) -> u64 {
        self.hard_bytes() / 2
    }

    /// A checkpoint found its frozen layer holding `memory` bytes (estimated) for `log_bytes`
    /// of log: the limit becomes the log that many bytes per log byte fill the memory with,
    /// within `least..=most` (module docs, "Calibration"). Less than
    /// [`LEAST_CALIBRATION_BYTES`] of log says too little to go by.
    pub(crate) fn calibrate(&self, memory: u64, log_bytes: u64) {
        if log_bytes < LEAST_CALIBRATION_BYTES || memory == 0 {
            return;
        }
        let hard = (self.memory_bytes as u128 * log_bytes as u128 / memory as u128) as u64;
        self.hard_bytes
            .store(hard.clamp(self.least, self.most), Ordering::Relaxed);
    }

    /// The newest completed checkpoint's LSN.
    pub(crate) fn checkpoint_lsn(&self) -> Lsn {
        self.checkpointed.load(Ordering::Acquire)
    }

    /// A checkpoint at `lsn` completed: wakes every waiting commit.
    pub(crate) fn checkpointed(&self, lsn: Lsn) {
        self.checkpointed.fetch_max(lsn, Ordering::AcqRel);
        let _wake = self.wake.lock().unwrap_or_else(|p| p.into_inner());
        self.done.notify_all();
    }

    /// Commits that waited, and the microseconds they waited in all.
    pub(crate) fn waits(&self) -> (u64, u64) {
        (
            self.waits.load(Ordering::Relaxed),
            self.wait_us.load(Ordering::Relaxed),
        )
    }

    /// Returns at once while the log after the newest checkpoint is under the limit; else asks
    /// for a checkpoint (again at every re-check) and waits until one brings it under; fails
    /// after `cx.timeout` or at a KILL (module docs).
    pub(crate) fn wait_for_room(&self, cx: &WaitContext<'_>) -> Result<(), EngineError> {
        let over = || {
            (cx.end_lsn)().saturating_sub(self.checkpointed.load(Ordering::Acquire))
                >= self.hard_bytes()
        };
        // The common case takes no lock.
        if !over() {
            return Ok(());
        }
        let start = Instant::now();
        self.waits.fetch_add(1, Ordering::Relaxed);
        let mut wake = self.wake.lock().unwrap_or_else(|p| p.into_inner());
        // Checked under the lock before every sleep: a checkpoint that completed since the
        // last look was seen, or notifies after this sleep began.
        // The timeout counts from the end of the last index build seen holding checkpoints.
        let mut counted_from = start;
        let result = loop {
            if !over() {
                break Ok(());
            }
            (cx.request_checkpoint)();
            if (cx.interrupted)() {
                break Err(EngineError::Interrupted);
            }
            if self.builds.load(Ordering::Acquire) > 0 {
                counted_from = Instant::now();
            }
            let waited = counted_from.elapsed();
            if waited >= cx.timeout {
                break Err(self.timed_out(cx));
            }
            let slice = RECHECK.min(cx.timeout - waited);
            wake = self
                .done
                .wait_timeout(wake, slice)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        let us = start.elapsed().as_micros().min(u128::from(u64::MAX)) as u64;
        self.wait_us.fetch_add(us, Ordering::Relaxed);
        result
    }

    /// The error of a wait that no checkpoint ended (module docs).
    fn timed_out(&self, cx: &WaitContext<'_>) -> EngineError {
        let Some(why) = (cx.last_error)() else {
            return EngineError::LockWaitTimeout;
        };
        let at = self.checkpointed.load(Ordering::Acquire);
        let used = (cx.end_lsn)().saturating_sub(at);
        EngineError::Store(BaseError {
            dir: self.dir.clone(),
            doing: "committing",
            detail: format!(
                "the changes since the last checkpoint (at LSN {at}) hold {used} bytes of log, \
                 at or over the limit of {} (twice the log between checkpoints), and no \
                 checkpoint brought them under it within {:.1} s; the last checkpoint failed: \
                 {why}; the transaction was not committed",
                self.hard_bytes(),
                cx.timeout.as_secs_f64()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    fn cx<'a>(end: &'a dyn Fn() -> Lsn, asked: &'a dyn Fn(), timeout: Duration) -> WaitContext<'a> {
        WaitContext {
            end_lsn: end,
            request_checkpoint: asked,
            last_error: &|| Some("disk full".to_string()),
            interrupted: &|| false,
            timeout,
        }
    }

    #[test]
    fn under_the_limit_a_commit_does_not_wait_or_ask() {
        let b = DeltaBudget::new(1000, 1 << 20, PathBuf::from("/d/base"), 500);
        let asked = AtomicUsize::new(0);
        let ask = || {
            asked.fetch_add(1, Ordering::Relaxed);
        };
        b.wait_for_room(&cx(&|| 1499, &ask, Duration::ZERO))
            .unwrap();
        assert_eq!((asked.load(Ordering::Relaxed), b.waits().0), (0, 0));
    }

    #[test]
    fn calibration_sets_the_limit_from_what_log_bytes_cost_within_its_bounds() {
        let most = 64 << 20;
        let b = DeltaBudget::new(most, 32 << 20, PathBuf::from("/d/base"), 0);
        // Until a checkpoint measured, the floor.
        assert_eq!(
            (b.hard_bytes(), b.checkpoint_bytes()),
            (LEAST_HARD_BYTES, LEAST_HARD_BYTES / 2)
        );
        // 2.5 bytes of memory per log byte: 32 MiB of memory is 12.8 MiB of log.
        b.calibrate(10 << 20, 4 << 20);
        assert_eq!(b.hard_bytes(), (32u64 << 20) * 2 / 5);
        assert_eq!(b.checkpoint_bytes(), (32u64 << 20) / 5);
        // Thirty: about 1.07 MiB, held at the floor.
        b.calibrate(30 << 20, 1 << 20);
        assert_eq!(b.hard_bytes(), LEAST_HARD_BYTES);
        // Cheap log (large rows, few keys) never lifts it over the fixed limit.
        b.calibrate(1 << 20, 8 << 20);
        assert_eq!(b.hard_bytes(), most);
        // Too little log, or nothing in memory, says nothing.
        b.calibrate(30 << 20, LEAST_CALIBRATION_BYTES - 1);
        b.calibrate(0, 8 << 20);
        assert_eq!(b.hard_bytes(), most);
    }

    #[test]
    fn a_wait_does_not_time_out_while_an_index_build_keeps_checkpoints_out() {
        let b = Arc::new(DeltaBudget::new(1000, 1 << 20, PathBuf::from("/d/base"), 0));
        let hold = b.hold_for_build();
        let b2 = b.clone();
        let waiter = std::thread::spawn(move || {
            b2.wait_for_room(&cx(&|| 5000, &|| {}, Duration::from_millis(50)))
        });
        std::thread::sleep(Duration::from_millis(400));
        assert!(!waiter.is_finished());
        // Once the build is done, the wait gets its timeout again, and no checkpoint came.
        drop(hold);
        let err = waiter.join().unwrap().unwrap_err();
        assert!(matches!(err, EngineError::Store(_)), "{err:?}");
    }

    #[test]
    fn over_the_limit_a_commit_waits_for_a_checkpoint() {
        let b = Arc::new(DeltaBudget::new(1000, 1 << 20, PathBuf::from("/d/base"), 0));
        let asked = Arc::new(AtomicUsize::new(0));
        let (b2, a2) = (b.clone(), asked.clone());
        let waiter = std::thread::spawn(move || {
            let ask = || {
                a2.fetch_add(1, Ordering::Relaxed);
            };
            b2.wait_for_room(&cx(&|| 5000, &ask, Duration::from_secs(60)))
        });
        // A checkpoint that leaves the log still over the limit does not release it.
        while b.waits().0 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        b.checkpointed(3000);
        std::thread::sleep(Duration::from_millis(250));
        assert!(!waiter.is_finished());
        b.checkpointed(4500);
        waiter.join().unwrap().unwrap();
        // Asked at every recheck (two or more while it waited past 250 ms).
        assert!(asked.load(Ordering::Relaxed) >= 2);
        assert_eq!(b.waits().0, 1);
    }

    #[test]
    fn a_wait_that_no_checkpoint_ends_fails_naming_the_base_and_the_last_error() {
        let b = DeltaBudget::new(1000, 1 << 20, PathBuf::from("/d/base"), 0);
        let e = b
            .wait_for_room(&cx(&|| 1000, &|| {}, Duration::from_millis(150)))
            .unwrap_err();
        let text = e.to_string();
        for want in ["/d/base", "1000 bytes", "disk full", "not committed"] {
            assert!(text.contains(want), "{want} not in {text}");
        }
        assert_eq!(e.code(), 1030);
        // Checkpoints that are only slow: a lock wait timeout, which clients retry.
        let e = b
            .wait_for_room(&WaitContext {
                last_error: &|| None,
                ..cx(&|| 1000, &|| {}, Duration::from_millis(150))
            })
            .unwrap_err();
        assert_eq!(e.code(), 1205, "{e}");
    }

    #[test]
    fn a_waiter_asks_again_at_every_recheck_and_a_kill_ends_the_wait() {
        let b = DeltaBudget::new(1000, 1 << 20, PathBuf::from("/d/base"), 0);
        let asked = AtomicUsize::new(0);
        let ask = || {
            asked.fetch_add(1, Ordering::Relaxed);
        };
        let killed = || asked.load(Ordering::Relaxed) >= 3;
        let e = b
            .wait_for_room(&WaitContext {
                interrupted: &killed,
                ..cx(&|| 5000, &ask, Duration::from_secs(60))
            })
            .unwrap_err();
        assert_eq!(e.code(), 1317, "{e}");
        assert_eq!(asked.load(Ordering::Relaxed), 3);
    }
}
