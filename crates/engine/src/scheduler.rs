//! Checkpoint scheduling: when checkpoints are written, and the engine's serialized writer.
//!
//! Owns [`CheckpointScheduler`] (the background thread and its triggers), [`SchedulerTask`],
//! [`Backoff`], and [`Checkpointer`], through which every checkpoint of a running engine is
//! written (background, `Engine::checkpoint`, shutdown, RESET MASTER). The file format and its
//! atomic switch are `checkpoint.rs`'s; what is checkpointed is the commit path's current root
//! (`commit.rs`).
//!
//! [`CheckpointScheduler`] runs a background thread that runs the engine's housekeeping (log
//! expiry) at every look, and calls the engine's checkpoint function when the log has grown by `every_bytes` since the last checkpoint or `every` has
//! passed (with log growth). Writers never wait on it. A failure is reported at once
//! ([`EngineEvent::CheckpointFailed`], with its reason) and retried only after a [`Backoff`]
//! (1 s doubling to 60 s by default); a success resets the backoff and, after failures, is
//! reported too ([`EngineEvent::CheckpointRecovered`]). One thing cuts a backoff short: a
//! [`CheckpointScheduler::request`] (commits of the paged store waiting for room in their delta
//! budget ask again every 100 ms) once the checkpoints' file system has at least
//! [`FREED_FOR_EARLY_RETRY`] more free space than right after the last failure, and at least
//! [`EARLY_RETRY_SPACING`] after it: space freed on a full disk lets those commits through at once instead
//! of up to a minute later, without a freed byte's worth of retries.
//!
//! [`Checkpointer::write`] takes the current root (consistent at its LSN, never blocking
//! commits), makes sure the log is durable up to that LSN (a checkpoint must never be ahead of
//! the durable log, since visibility precedes durability), and streams its serialization into
//! `checkpoint::write_checkpoint_streamed` part by part (`Root::encode_checkpoint_with`).
//!
//! Invariants: a checkpoint's LSN is at or below the log's durable LSN when it is written;
//! checkpoints of one engine are written one at a time with non-decreasing LSNs (the
//! checkpoint file module refuses a backwards one as well); the backoff is running exactly
//! while the last attempt failed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_log::{FileSystem, Lsn};

use crate::backup_hold::BackupHolds;
use crate::base::Base;
use crate::checkpoint::{
    backup_image_name, remove_older_checkpoints, write_backup_image, write_checkpoint_streamed,
    PartSink,
};
use crate::commit::{Committer, Exclusive};
use crate::error::EngineError;
use crate::report::EngineEvent;
use crate::store::{Root, CHECKPOINT_PART};

/// Most keys of dropped, truncated or rewritten tables one checkpoint into the paged store's
/// base deletes (the rest go with the next ones), so a DROP of a large table does not make one
/// checkpoint hold all its keys in memory.
const PURGE_BUDGET: usize = 100_000;

/// Longest sleep of the scheduler thread between two looks at the log's growth.
const MAX_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// How much more free space than right after a failed checkpoint lets a requested attempt
/// run before its backoff has passed (module docs).
pub const FREED_FOR_EARLY_RETRY: u64 = 1 << 20;

/// The least time between a failed checkpoint and an attempt that cuts its backoff short, so
/// space freed in a trickle (another program's churn) costs at most one attempt a second.
pub const EARLY_RETRY_SPACING: Duration = Duration::from_secs(1);

/// How long the scheduler waits before retrying after consecutive failed checkpoints:
/// `first`, doubling with each further failure, never more than `max`. A success resets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    /// 1 s, 2 s, 4 s, ... up to 60 s: a full disk costs one attempt (and one log line) a
    /// minute once it has lasted a few minutes, and a freed disk is used within a minute.
    fn default() -> Self {
        Backoff {
            first: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl Backoff {
    /// The wait after the `failures`-th consecutive failure (1-based).
    pub fn delay(&self, failures: u32) -> Duration {
        debug_assert!(failures >= 1);
        let doublings = failures.saturating_sub(1).min(31);
        self.first
            .checked_mul(1u32 << doublings)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

#[derive(Default)]
struct SchedState {
    stop: bool,
    poked: bool,
    /// A checkpoint is wanted now, whatever the log's growth ([`CheckpointScheduler::request`]).
    requested: bool,
    last_error: Option<String>,
    taken: u64,
}

struct SchedShared {
    state: Mutex<SchedState>,
    cv: Condvar,
}

impl SchedShared {
    fn state(&self) -> MutexGuard<'_, SchedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the scheduler thread runs, and the triggers it runs it on (see
/// [`CheckpointScheduler::start`]).
pub struct SchedulerTask {
    /// The log's end (e.g. `Log::end_lsn`).
    pub end_lsn: Box<dyn Fn() -> Lsn + Send>,
    /// Checkpoint after this many bytes of log growth (0: off), asked at every look (the
    /// paged store's distance follows its delta budget: `budget.rs`).
    pub every_bytes: Box<dyn Fn() -> u64 + Send>,
    /// Checkpoint after this much time with log growth (zero: off).
    pub every: Duration,
    /// Waits between failed attempts.
    pub backoff: Backoff,
    /// Writes a checkpoint; returns its LSN.
    pub run: Box<dyn Fn() -> Result<Lsn, String> + Send>,
    /// Told of every failure and of the first success after failures, as they happen.
    pub report: Box<dyn Fn(&EngineEvent) + Send>,
    /// Run at every look at the log (at least every second) and after every successful
    /// checkpoint: the engine's log expiry. Must be cheap when it has nothing to do.
    pub housekeeping: Box<dyn Fn() + Send>,
    /// Free bytes on the file system checkpoints are written to, where known (`None`: a
    /// backoff is never cut short; module docs). Asked after each failure and at each request
    /// during a backoff, so it must be cheap.
    pub free_bytes: Box<dyn Fn() -> Option<u64> + Send>,
}

/// Background checkpoint thread. `stop()` (or drop) wakes and joins it.
pub struct CheckpointScheduler {
    shared: Arc<SchedShared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl CheckpointScheduler {
    /// Starts the thread. It looks at `end_lsn()` at least every `min(every, 1 s)` and on
    /// [`poke`](Self::poke), and calls `run()` when the log has grown by `every_bytes` since
    /// the LSN the last successful `run` returned (initially `end_lsn()` at start), or when
    /// `every` has passed since then and the log has grown at all. `every_bytes == 0` or
    /// `every == 0` turns that trigger off.
    ///
    /// A failed `run` is reported at once through `report` ([`EngineEvent::CheckpointFailed`])
    /// and by [`last_error`](Self::last_error); no attempt is made before its backoff has
    /// passed (not even on a poke), so a full disk is not hammered, unless a
    /// [`request`](Self::request) finds space freed since (module docs). The first success
    /// after failures is reported ([`EngineEvent::CheckpointRecovered`]) and resets the
    /// backoff.
    pub fn start(task: SchedulerTask) -> Self {
        let shared = Arc::new(SchedShared {
            state: Mutex::default(),
            cv: Condvar::new(),
        });
        let initial = (task.end_lsn)();
        let worker = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("onelog-checkpoint".into())
            .spawn(move || scheduler_loop(&worker, &task, initial));
        let thread = match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                shared.state().last_error = Some(format!("cannot start checkpoint thread: {e}"));
                None
            }
        };
        CheckpointScheduler {
            shared,
            thread: Mutex::new(thread),
        }
    }

    /// Makes the thread take a checkpoint soon even if the log has not grown (the paged store
    /// after DDL that put a whole table into memory: the log record of an ALTER is small, its
    /// rows are not). Cheap; never waits for it.
    pub fn request(&self) {
        let mut st = self.shared.state();
        st.requested = true;
        st.poked = true;
        drop(st);
        self.shared.cv.notify_one();
    }

    /// Makes the thread look at the log's growth now (cheap; never waits for a checkpoint).
    pub fn poke(&self) {
        self.shared.state().poked = true;
        self.shared.cv.notify_one();
    }

    /// Stops the thread and waits for it (and for a checkpoint in progress) to finish.
    /// Idempotent.
    pub fn stop(&self) {
        self.shared.state().stop = true;
        self.shared.cv.notify_all();
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = handle {
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
    }

    /// The error of the last checkpoint attempt, `None` once one succeeds.
    pub fn last_error(&self) -> Option<String> {
        self.shared.state().last_error.clone()
    }

    /// Number of successful checkpoints taken by this scheduler.
    pub fn checkpoints_taken(&self) -> u64 {
        self.shared.state().taken
    }
}

/// The scheduler thread's body (see [`CheckpointScheduler::start`]).
fn scheduler_loop(worker: &SchedShared, task: &SchedulerTask, initial: Lsn) {
    let interval = if task.every.is_zero() {
        MAX_CHECK_INTERVAL
    } else {
        task.every.min(MAX_CHECK_INTERVAL)
    };
    let mut last_lsn = initial;
    let mut last_time = Instant::now();
    let mut failures = 0u32;
    // Set while backing off: no attempt before this instant (but see `early_retry`).
    let mut retry_at: Option<Instant> = None;
    // While backing off: when the last attempt failed, and the free space right after it.
    let mut failed_at = Instant::now();
    let mut free_after_failure: Option<u64> = None;
    loop {
        let requested = {
            let mut st = worker.state();
            if !st.stop && !st.poked {
                let wait = retry_at.map_or(interval, |t| {
                    interval.min(t.saturating_duration_since(Instant::now()))
                });
                st = worker
                    .cv
                    .wait_timeout(st, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            if st.stop {
                return;
            }
            st.poked = false;
            std::mem::take(&mut st.requested)
        };
        (task.housekeeping)();
        if retry_at.is_some_and(|t| Instant::now() < t)
            && !(requested && early_retry(task, failed_at, free_after_failure))
        {
            continue;
        }
        let end = (task.end_lsn)();
        let grown = end.saturating_sub(last_lsn);
        let every_bytes = (task.every_bytes)();
        let by_bytes = every_bytes > 0 && grown >= every_bytes;
        let by_time = !task.every.is_zero() && grown > 0 && last_time.elapsed() >= task.every;
        if !(by_bytes || by_time || requested) {
            continue;
        }
        let outcome = (task.run)();
        let event = match outcome {
            Ok(lsn) => {
                last_lsn = lsn;
                last_time = Instant::now();
                retry_at = None;
                let mut st = worker.state();
                st.taken += 1;
                st.last_error = None;
                drop(st);
                let after_failures = std::mem::take(&mut failures);
                (after_failures > 0).then_some(EngineEvent::CheckpointRecovered {
                    lsn,
                    after_failures,
                })
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                let retry_in = task.backoff.delay(failures);
                failed_at = Instant::now();
                retry_at = Some(failed_at + retry_in);
                free_after_failure = (task.free_bytes)();
                worker.state().last_error = Some(error.clone());
                Some(EngineEvent::CheckpointFailed {
                    error,
                    consecutive: failures,
                    retry_in,
                })
            }
        };
        debug_assert!(retry_at.is_some() == (failures > 0));
        if let Some(ev) = event {
            (task.report)(&ev);
        }
        if failures == 0 {
            // The checkpoint may have freed segments recovery held.
            (task.housekeeping)();
        }
    }
}

/// Whether a requested attempt may run before its backoff has passed: [`EARLY_RETRY_SPACING`]
/// has passed since the failure at `failed_at`, and the checkpoints' file system has at least
/// [`FREED_FOR_EARLY_RETRY`] more free bytes than the `free_after_failure` it had then.
fn early_retry(task: &SchedulerTask, failed_at: Instant, free_after_failure: Option<u64>) -> bool {
    let Some(before) = free_after_failure else {
        return false;
    };
    failed_at.elapsed() >= EARLY_RETRY_SPACING
        && (task.free_bytes)()
            .is_some_and(|now| now >= before.saturating_add(FREED_FOR_EARLY_RETRY))
}

impl Drop for CheckpointScheduler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes the checkpoints of one engine, one at a time, and holds its scheduler.
pub(crate) struct Checkpointer {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    /// Serializes the writes. Taken before the commit gate by a caller that holds both
    /// (RESET MASTER, [`Self::serialize`]); a checkpoint into the base takes the gate while
    /// holding it.
    serial: Mutex<()>,
    /// LSN of the current checkpoint (held only to read or set it).
    last: Mutex<Option<Lsn>>,
    /// The frozen root of a checkpoint into the base that failed: the next attempt writes it
    /// (the roots published since are over its frozen layer).
    pending: Mutex<Option<Arc<Root>>>,
    scheduler: Mutex<Option<CheckpointScheduler>>,
    /// Backups running: older checkpoint files are kept while any does (`backup.rs`).
    backups: Arc<BackupHolds>,
    /// The paged store's base, when the data directory keeps its tables there: checkpoints
    /// are written into it instead of into checkpoint files.
    base: Option<Arc<Base>>,
    /// Checkpoints written into the base, and the microseconds they took (log sync, encoding,
    /// ingestion and the switch under the commit gate; not the freeze before them). A retry of
    /// a failed write counts as one more.
    base_writes: AtomicU64,
    base_write_us: AtomicU64,
}

impl Checkpointer {
    /// The writer for checkpoint directory `dir`, whose current checkpoint is at `loaded`,
    /// into `base` when the directory keeps its tables in the paged store.
    pub(crate) fn new(
        fs: Arc<dyn FileSystem>,
        dir: PathBuf,
        loaded: Option<Lsn>,
        base: Option<Arc<Base>>,
    ) -> Self {
        Checkpointer {
            fs,
            dir,
            serial: Mutex::new(()),
            last: Mutex::new(loaded),
            pending: Mutex::new(None),
            scheduler: Mutex::new(None),
            backups: Arc::default(),
            base,
            base_writes: AtomicU64::new(0),
            base_write_us: AtomicU64::new(0),
        }
    }

    /// Removes the checkpoint files older than the current one, for a caller that holds the
    /// backups' exclusivity itself (RESET MASTER: its writes could not remove them).
    pub(crate) fn remove_older(&self) {
        if let Some(lsn) = self.lsn() {
            remove_older_checkpoints(&*self.fs, &self.dir, lsn);
        }
    }

    /// Writes the current root as the backup image of the backup session `tag` (the paged
    /// store's; `checkpoint.rs`, "Backup images") after making the log durable up to its LSN.
    /// Takes no lock a commit or a checkpoint needs. Returns the file system and the image's
    /// path.
    pub(crate) fn write_backup_image(
        &self,
        core: &Committer,
        tag: u64,
    ) -> Result<(Arc<dyn FileSystem>, PathBuf), EngineError> {
        core.refuse_after_apply_failure("backup image")?;
        let root = core.store().current();
        sync_log_to(core, root.lsn)?;
        let name = backup_image_name(tag, root.lsn);
        let mut body = |sink: &mut PartSink| root.encode_checkpoint_with(CHECKPOINT_PART, sink);
        let path = write_backup_image(
            &*self.fs,
            &self.dir,
            &name,
            root.lsn,
            &root.gtid_state,
            &mut body,
        )
        .map_err(|source| EngineError::Checkpoint {
            context: format!("writing the backup image at LSN {}", root.lsn),
            source,
        })?;
        Ok((self.fs.clone(), path))
    }

    /// The paged store's base, if the tables are kept there.
    pub(crate) fn base(&self) -> Option<&Arc<Base>> {
        self.base.as_ref()
    }

    /// Checkpoints written into the base since open, and the microseconds they took.
    pub(crate) fn base_writes(&self) -> (u64, u64) {
        (
            self.base_writes.load(Ordering::Relaxed),
            self.base_write_us.load(Ordering::Relaxed),
        )
    }

    /// The engine's backup holds (kept here: the writer consults them after every switch).
    pub(crate) fn backups(&self) -> &Arc<BackupHolds> {
        &self.backups
    }

    /// Asks the background scheduler, if one runs, for a checkpoint soon
    /// ([`CheckpointScheduler::request`]).
    pub(crate) fn request(&self) {
        if let Some(s) = self
            .scheduler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            s.request();
        }
    }

    /// Starts the background scheduler (see [`CheckpointScheduler::start`]).
    pub(crate) fn start_scheduler(&self, task: SchedulerTask) {
        let sched = CheckpointScheduler::start(task);
        *self.scheduler.lock().unwrap_or_else(|p| p.into_inner()) = Some(sched);
    }

    /// Stops the background scheduler, if one runs (waits for a checkpoint in progress).
    pub(crate) fn stop_scheduler(&self) {
        let s = self
            .scheduler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(s) = s {
            s.stop();
        }
    }

    /// The background checkpointer's last error.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.scheduler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|s| s.last_error())
    }

    /// LSN of the current checkpoint (None before the first).
    pub(crate) fn lsn(&self) -> Option<Lsn> {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A checkpoint of `core`'s current root; unless `force`, none when the last one is at its
    /// LSN. Returns its LSN. Never blocks commits (into the paged store's base: for two
    /// instants, see [`Self::write_base`]).
    pub(crate) fn write(&self, core: &Committer, force: bool) -> Result<Lsn, EngineError> {
        let serial = self.serialize();
        self.write_with(core, force, None, &serial)
    }

    /// The writers' lock, for a caller that must take it before the commit gate.
    pub(crate) fn serialize(&self) -> CheckpointSerial<'_> {
        CheckpointSerial {
            _guard: self.serial.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// [`Self::write`] for a caller that holds the writers' lock and then the commit gate
    /// (RESET MASTER).
    pub(crate) fn write_gated(
        &self,
        core: &Committer,
        force: bool,
        gate: &Exclusive<'_>,
        serial: &CheckpointSerial<'_>,
    ) -> Result<Lsn, EngineError> {
        self.write_with(core, force, Some(gate), serial)
    }

    fn set_last(&self, lsn: Lsn) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(lsn);
    }

    fn write_with(
        &self,
        core: &Committer,
        force: bool,
        gate: Option<&Exclusive<'_>>,
        _serial: &CheckpointSerial<'_>,
    ) -> Result<Lsn, EngineError> {
        // A record the store could not take (a failed read of the base, or a bug) left the
        // published root without part of it: a checkpoint would make that permanent, while
        // the log still holds the record for a restart to apply again.
        core.refuse_after_apply_failure("checkpoint")?;
        if let Some(base) = &self.base {
            return self.write_base(base, core, force, gate);
        }
        let last = self.lsn();
        let root = core.store().current();
        if !force && last == Some(root.lsn) {
            return Ok(root.lsn);
        }
        debug_assert!(
            last.is_none_or(|l| l <= root.lsn),
            "checkpoint at LSN {} after one at {last:?}",
            root.lsn
        );
        sync_log_to(core, root.lsn)?;
        let mut body = |sink: &mut PartSink| root.encode_checkpoint_with(CHECKPOINT_PART, sink);
        // Older checkpoint files go only while no backup runs (one may be copying them).
        let backups = &self.backups;
        let mut cleanup = |remove: &mut dyn FnMut()| {
            if let Some(_none) = backups.try_exclusive() {
                remove();
            }
        };
        write_checkpoint_streamed(
            &*self.fs,
            &self.dir,
            root.lsn,
            &root.gtid_state,
            &mut body,
            &mut cleanup,
        )
        .map_err(|source| EngineError::Checkpoint {
            context: format!("writing the checkpoint at LSN {}", root.lsn),
            source,
        })?;
        self.set_last(root.lsn);
        Ok(root.lsn)
    }

    /// A checkpoint into the paged store's base (docs/PAGED_STORE.md, step 3 piece 4): under
    /// the commit gate for an instant (no commit is then between its log write and its
    /// apply), the current root is frozen and the frozen root published in its place (same
    /// rows); outside it, [`Self::write_frozen`] writes it. A frozen root a failed attempt
    /// left is written first, then a fresh one as asked. `gate`: the caller holds it.
    fn write_base(
        &self,
        base: &Base,
        core: &Committer,
        force: bool,
        gate: Option<&Exclusive<'_>>,
    ) -> Result<Lsn, EngineError> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(frozen) = pending {
            self.write_frozen(base, core, &frozen, gate)?;
        }
        let frozen = {
            let _gate = gate.is_none().then(|| core.exclusive());
            let root = core.store().current();
            if !force && self.lsn() == Some(root.lsn) {
                return Ok(root.lsn);
            }
            let frozen = Arc::new(root.freeze().ok_or_else(|| {
                EngineError::corrupt(
                    "checkpoint into the table store",
                    "the current root has a frozen layer no checkpoint is writing",
                )
            })?);
            drop(core.store().publish(frozen.clone()));
            frozen
        };
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(frozen.clone());
        self.write_frozen(base, core, &frozen, gate)?;
        Ok(frozen.lsn)
    }

    /// Writes `frozen` (a root [`Root::freeze`] returned and that was published) into the
    /// base: the log is made durable up to its LSN, then its frozen layer's changes, the
    /// deletes of its retired storage ids' records (a bounded number) and its root record go
    /// in as one atomic ingestion; under the commit gate again, the current root (still over
    /// the same frozen layer: only this writer changes the layers) switches to the new base
    /// snapshot. On failure `frozen` stays pending and its layer stays in the roots (reads
    /// stay right); the next attempt writes the same root again.
    fn write_frozen(
        &self,
        base: &Base,
        core: &Committer,
        frozen: &Arc<Root>,
        gate: Option<&Exclusive<'_>>,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        // What the frozen layer holds, for the budget's calibration: estimated here, before
        // the write, so the walk delays no commit waiting for this checkpoint's end; not under
        // a caller's commit gate.
        let memory = (gate.is_none() && core.budget().is_some()).then(|| frozen.frozen_memory());
        sync_log_to(core, frozen.lsn)?;
        let (snapshot, purged) = frozen.write_frozen_into(base, PURGE_BUDGET)?;
        {
            let _gate = gate.is_none().then(|| core.exclusive());
            let current = core.store().current();
            let switched = current
                .with_base(frozen, snapshot, &purged)
                .ok_or_else(|| {
                    EngineError::corrupt(
                        "checkpoint into the table store",
                        "the current root is no longer over the frozen layer it wrote",
                    )
                })?;
            drop(core.store().publish(Arc::new(switched)));
        }
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.set_last(frozen.lsn);
        if let Some(b) = core.budget() {
            // What the frozen layer's log cost it in memory sets the limit (`budget.rs`).
            if let Some(memory) = memory {
                b.calibrate(memory, frozen.lsn.saturating_sub(b.checkpoint_lsn()));
            }
            b.checkpointed(frozen.lsn);
        }
        self.base_writes.fetch_add(1, Ordering::Relaxed);
        let us = started.elapsed().as_micros().min(u128::from(u64::MAX)) as u64;
        self.base_write_us.fetch_add(us, Ordering::Relaxed);
        Ok(())
    }
}

/// Makes the log durable up to `lsn` before a checkpoint at it is written: a checkpoint must
/// never be ahead of the durable log (visibility precedes durability).
fn sync_log_to(core: &Committer, lsn: Lsn) -> Result<(), EngineError> {
    let log = core.log();
    if log.durable_lsn() < lsn {
        log.flush()
            .map_err(|e| core.log_error("syncing the log before a checkpoint", e))?;
    }
    debug_assert!(log.durable_lsn() >= lsn || log.failed().is_some());
    Ok(())
}

/// Proof of holding the checkpoint writers' lock ([`Checkpointer::serialize`]).
pub(crate) struct CheckpointSerial<'a> {
    _guard: MutexGuard<'a, ()>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some(s) = self
            .scheduler
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            s.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::mpsc;

    const LONG: Duration = Duration::from_secs(30);

    /// A fake log end plus channels that report each look at it, each checkpoint run and each
    /// reported event.
    struct FakeLog {
        end: Arc<AtomicU64>,
        /// While set, `run` fails with "disk full".
        fail: Arc<AtomicBool>,
        /// What `free_bytes` answers; `u64::MAX`: unknown (`None`), as at the start.
        free: Arc<AtomicU64>,
        /// One per housekeeping call: one per pass of the loop while no checkpoint succeeds
        /// (a pass that backs off never looks at the log).
        ticks: mpsc::Receiver<()>,
        looks: mpsc::Receiver<Lsn>,
        runs: mpsc::Receiver<Lsn>,
        events: mpsc::Receiver<EngineEvent>,
    }

    /// Backoff short enough for a retry after one poke-and-look cycle.
    const TINY_BACKOFF: Backoff = Backoff {
        first: Duration::from_millis(1),
        max: Duration::from_millis(1),
    };

    fn start_fake(every_bytes: u64, every: Duration) -> (CheckpointScheduler, FakeLog) {
        start_fake_with(every_bytes, every, TINY_BACKOFF)
    }

    fn start_fake_with(
        every_bytes: u64,
        every: Duration,
        backoff: Backoff,
    ) -> (CheckpointScheduler, FakeLog) {
        let end = Arc::new(AtomicU64::new(100));
        let (look_tx, looks) = mpsc::channel();
        let (run_tx, runs) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let e1 = end.clone();
        let e2 = end.clone();
        let fail = Arc::new(AtomicBool::new(false));
        let f = fail.clone();
        let free = Arc::new(AtomicU64::new(u64::MAX));
        let fr = free.clone();
        let (tick_tx, ticks) = mpsc::channel();
        let sched = CheckpointScheduler::start(SchedulerTask {
            end_lsn: Box::new(move || {
                let v = e1.load(Ordering::SeqCst);
                let _ = look_tx.send(v);
                v
            }),
            every_bytes: Box::new(move || every_bytes),
            every,
            backoff,
            run: Box::new(move || {
                if f.load(Ordering::SeqCst) {
                    return Err("disk full".to_string());
                }
                let v = e2.load(Ordering::SeqCst);
                let _ = run_tx.send(v);
                Ok(v)
            }),
            report: Box::new(move |ev| {
                let _ = event_tx.send(ev.clone());
            }),
            housekeeping: Box::new(move || {
                let _ = tick_tx.send(());
            }),
            free_bytes: Box::new(move || {
                Some(fr.load(Ordering::SeqCst)).filter(|&v| v != u64::MAX)
            }),
        });
        (
            sched,
            FakeLog {
                end,
                fail,
                free,
                ticks,
                looks,
                runs,
                events,
            },
        )
    }

    impl FakeLog {
        /// Waits until the scheduler has finished every look that started before this call.
        fn settle(&self, sched: &CheckpointScheduler) {
            while self.looks.try_recv().is_ok() {}
            sched.poke();
            self.looks.recv_timeout(LONG).unwrap();
            sched.poke();
            self.looks.recv_timeout(LONG).unwrap();
        }

        /// [`Self::settle`] for a scheduler that is backing off: waits until every pass of the
        /// loop that started before this call has decided (three passes later, since a pass
        /// ticks before it decides).
        fn settle_backing_off(&self, sched: &CheckpointScheduler) {
            while self.ticks.try_recv().is_ok() {}
            for _ in 0..3 {
                sched.poke();
                self.ticks.recv_timeout(LONG).unwrap();
            }
        }
    }

    #[test]
    fn scheduler_runs_once_log_grows_by_every_bytes() {
        let (sched, log) = start_fake(1000, Duration::from_secs(3600));
        assert_eq!(log.looks.recv_timeout(LONG).unwrap(), 100);
        log.end.store(600, Ordering::SeqCst);
        log.settle(&sched);
        assert!(
            log.runs.try_recv().is_err(),
            "500 bytes must not trigger a checkpoint"
        );
        assert_eq!(sched.checkpoints_taken(), 0);

        log.end.store(1100, Ordering::SeqCst);
        sched.poke();
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 1100);
        log.settle(&sched);
        assert_eq!(sched.checkpoints_taken(), 1);
        assert_eq!(sched.last_error(), None);

        // The threshold now counts from the LSN the run returned.
        log.end.store(2000, Ordering::SeqCst);
        log.settle(&sched);
        assert!(log.runs.try_recv().is_err());
        log.end.store(2100, Ordering::SeqCst);
        sched.poke();
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 2100);
        sched.stop();
        sched.stop();
    }

    #[test]
    fn a_requested_checkpoint_runs_without_log_growth() {
        let (sched, log) = start_fake(1000, Duration::from_secs(3600));
        log.settle(&sched);
        assert!(log.runs.try_recv().is_err(), "no growth: no checkpoint");
        sched.request();
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 100);
        log.settle(&sched);
        assert!(log.runs.try_recv().is_err(), "one request, one checkpoint");
        assert_eq!(sched.checkpoints_taken(), 1);
    }

    #[test]
    fn scheduler_reports_errors_and_retries() {
        let (sched, log) = start_fake(10, Duration::from_secs(3600));
        log.fail.store(true, Ordering::SeqCst);
        log.end.store(500, Ordering::SeqCst);
        log.settle(&sched);
        assert_eq!(sched.last_error().as_deref(), Some("disk full"));
        assert_eq!(sched.checkpoints_taken(), 0);
        log.fail.store(false, Ordering::SeqCst);
        sched.poke();
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 500);
        log.settle(&sched);
        assert_eq!(sched.last_error(), None);
        assert_eq!(sched.checkpoints_taken(), 1);
    }

    #[test]
    fn scheduler_reports_each_failure_at_once_and_backs_off_exponentially_until_a_success() {
        let backoff = Backoff {
            first: Duration::from_millis(5),
            max: Duration::from_millis(20),
        };
        let (sched, log) = start_fake_with(10, Duration::from_secs(3600), backoff);
        log.fail.store(true, Ordering::SeqCst);
        log.end.store(500, Ordering::SeqCst);
        sched.poke();
        let mut waits = Vec::new();
        for n in 1..=5u32 {
            match log.events.recv_timeout(LONG).unwrap() {
                EngineEvent::CheckpointFailed {
                    error,
                    consecutive,
                    retry_in,
                } => {
                    assert_eq!((error.as_str(), consecutive), ("disk full", n));
                    waits.push(retry_in.as_millis());
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(waits, [5, 10, 20, 20, 20], "doubling, capped");
        log.fail.store(false, Ordering::SeqCst);
        let recovered = loop {
            match log.events.recv_timeout(LONG).unwrap() {
                EngineEvent::CheckpointFailed { .. } => continue,
                ev => break ev,
            }
        };
        let EngineEvent::CheckpointRecovered {
            lsn,
            after_failures,
        } = recovered
        else {
            panic!("unexpected {recovered:?}");
        };
        assert_eq!(lsn, 500);
        assert!(after_failures >= 5, "{after_failures}");
        assert_eq!(sched.last_error(), None);
        // A success resets the backoff: the next failure waits `first` again.
        log.fail.store(true, Ordering::SeqCst);
        log.end.store(1000, Ordering::SeqCst);
        sched.poke();
        match log.events.recv_timeout(LONG).unwrap() {
            EngineEvent::CheckpointFailed {
                consecutive,
                retry_in,
                ..
            } => assert_eq!((consecutive, retry_in), (1, backoff.first)),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// A scheduler whose one checkpoint attempt failed with `free` bytes free (`u64::MAX`:
    /// unknown), backing off for an hour; the next attempt would succeed.
    fn failed_once_backing_off_an_hour(free: u64) -> (CheckpointScheduler, FakeLog) {
        let backoff = Backoff {
            first: Duration::from_secs(3600),
            max: Duration::from_secs(3600),
        };
        let (sched, log) = start_fake_with(10, Duration::from_secs(3600), backoff);
        log.free.store(free, Ordering::SeqCst);
        log.fail.store(true, Ordering::SeqCst);
        log.end.store(500, Ordering::SeqCst);
        sched.poke();
        assert!(matches!(
            log.events.recv_timeout(LONG).unwrap(),
            EngineEvent::CheckpointFailed { consecutive: 1, .. }
        ));
        log.fail.store(false, Ordering::SeqCst);
        (sched, log)
    }

    #[test]
    fn a_request_cuts_a_backoff_short_only_once_space_was_freed_since_the_failure() {
        let (sched, log) = failed_once_backing_off_an_hour(5 << 20);
        std::thread::sleep(EARLY_RETRY_SPACING);
        // Requests while the space is what it was after the failure, or less than
        // FREED_FOR_EARLY_RETRY more: no attempt.
        for free in [5 << 20, (5 << 20) + FREED_FOR_EARLY_RETRY - 1, 1 << 20] {
            log.free.store(free, Ordering::SeqCst);
            sched.request();
            log.settle_backing_off(&sched);
            assert!(
                log.runs.try_recv().is_err(),
                "attempted with {free} bytes free"
            );
        }
        assert_eq!(sched.checkpoints_taken(), 0);
        // A poke without a request does not cut it short either, whatever was freed.
        log.free.store(64 << 20, Ordering::SeqCst);
        sched.poke();
        log.settle_backing_off(&sched);
        assert!(log.runs.try_recv().is_err(), "a poke attempted");
        // A request with space freed since: the attempt runs now, and succeeds.
        sched.request();
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 500);
        match log.events.recv_timeout(LONG).unwrap() {
            EngineEvent::CheckpointRecovered {
                lsn,
                after_failures,
            } => assert_eq!((lsn, after_failures), (500, 1)),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(sched.checkpoints_taken(), 1);
    }

    #[test]
    fn a_request_during_a_backoff_without_a_known_free_space_waits_for_it() {
        let (sched, log) = failed_once_backing_off_an_hour(u64::MAX);
        std::thread::sleep(EARLY_RETRY_SPACING);
        sched.request();
        log.settle_backing_off(&sched);
        assert!(log.runs.try_recv().is_err());
        assert_eq!(sched.checkpoints_taken(), 0);
    }

    #[test]
    fn default_backoff_goes_from_one_second_to_a_minute() {
        let b = Backoff::default();
        let secs: Vec<u64> = (1..=9).map(|n| b.delay(n).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(60));
    }

    #[test]
    fn scheduler_runs_on_time_when_log_grew() {
        let (sched, log) = start_fake(0, Duration::from_millis(1));
        log.end.store(101, Ordering::SeqCst);
        assert_eq!(log.runs.recv_timeout(LONG).unwrap(), 101);
        drop(sched); // Drop stops and joins.
    }

    #[test]
    fn scheduler_stop_joins_thread_while_idle() {
        let (sched, log) = start_fake(1000, Duration::from_secs(3600));
        log.settle(&sched);
        sched.stop();
        // The thread is gone: the closures (and their senders) were dropped.
        while log.looks.try_recv().is_ok() {}
        assert!(matches!(
            log.looks.recv_timeout(LONG),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ));
        assert_eq!(sched.checkpoints_taken(), 0);
    }
}
