//! Background preparation of the next segment, so rotation never waits on zero-filling.
//!
//! The preparer thread creates `next.olog.tmp` in the log directory, fills it with
//! `segment_size` zeros and `fdatasync`s it, then parks the open file in a slot. Rotation
//! takes it (waiting only if the preparer has not finished), writes the header and renames it
//! (see `segment::install`), then requests the next one (not before: the preparer reuses the
//! temporary name).
//!
//! When: a request is served once the current segment is half full (the `due` check the
//! log passes to [`run`], polled every [`POLL`] while a request waits), or at once when a
//! rotation or reset needs the file ([`Preparer::ensure_ready`]). Zero-filling a segment (1
//! GiB by default) costs a second of CPU and memory bandwidth and as much disk writeback; done
//! at startup, as it was, it ran alongside whatever came first, typically a bulk load, on the
//! same cores and disk (issue 14 part 4: 25% of the server's CPU during a fresh server's
//! sysbench prepare). Half a segment of log is left to write before the file is needed.
//!
//! A zero-fill gives way to a big group's write (one over `MAX_UNSYNCED` bytes: a large
//! transaction's record, written in steps with a sync between them): the appender holds the
//! preparer ([`Preparer::hold`]) while it writes, and the zero-fill waits between its chunks
//! (and before its own sync) until the hold ends, for at most [`MAX_YIELD`] per preparation
//! and never when a rotation needs the file. Measured (issue 14 part 3): a 1M-row UPDATE's
//! 400 MB record crossed half its segment, so the 1 GiB zero-fill and its sync ran beside the
//! commit's own writes and syncs, on the same disk and cores.
//!
//! Invariants: at most one prepared file exists; a failed preparation (e.g. ENOSPC) is handed
//! to the next rotation as its error and is retried only when a later rotation asks again,
//! so a full disk does not turn into a busy loop; the tmp file never holds records, so a
//! crash at any point leaves nothing recovery needs (it deletes a stale tmp file).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::LogError;
use crate::fs::File;
use crate::fs::FileSystem;
use crate::locks::lock;
use crate::segment::{self, PREPARED_NAME};
use crate::LogOptions;

#[derive(Default)]
struct Slot {
    ready: Option<Result<Arc<dyn File>, LogError>>,
    want: bool,
    /// A rotation waits for the file: prepare it now, whatever `due` says.
    urgent: bool,
    stop: bool,
}

/// How often a waiting request asks the log whether the current segment is half full.
pub(crate) const POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest a preparation waits, in all, for big writes to end (module docs).
pub(crate) const MAX_YIELD: Duration = Duration::from_secs(10);

/// How often a zero-fill that gives way checks whether it may go on.
const YIELD_STEP: Duration = Duration::from_millis(5);

/// The slot shared by the preparer thread and rotation.
#[derive(Default)]
pub(crate) struct Preparer {
    slot: Mutex<Slot>,
    cv: Condvar,
    /// Set by `stop`; read (without the slot lock) between the chunks of a zero-fill.
    stopping: AtomicBool,
    /// Big writes in progress ([`Preparer::hold`]).
    held: AtomicUsize,
    /// Preparations that went on because their [`MAX_YIELD`] ran out while still held.
    yield_exhausted: AtomicUsize,
    /// Nanoseconds rotations (and resets) spent waiting in [`Preparer::ensure_ready`] for a
    /// preparation to finish.
    waited_ns: AtomicU64,
}

/// A big write in progress: the zero-fill waits while one exists (module docs).
pub(crate) struct Hold<'a>(&'a Preparer);

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Preparer {
    /// Asks for a prepared segment if none is there or being made.
    pub fn request(&self) {
        let mut s = lock(&self.slot);
        if s.ready.is_none() {
            s.want = true;
        }
        drop(s);
        self.cv.notify_all();
    }

    /// Waits until a preparation finished and returns a clone of its outcome without taking
    /// the file (rotation will). An error is taken out, so the next call retries.
    pub fn ensure_ready(&self) -> Result<(), LogError> {
        let mut s = lock(&self.slot);
        // A failure stored while no rotation was waiting may be stale (space was freed
        // since): it is dropped and the preparation tried once more, synchronously. One
        // retry per rotation attempt, so a full disk still does not become a busy loop.
        if matches!(s.ready, Some(Err(_))) && !s.stop {
            s.ready = None;
        }
        loop {
            match &s.ready {
                Some(Ok(_)) => return Ok(()),
                Some(Err(_)) => {
                    let Some(Err(e)) = s.ready.take() else {
                        return Ok(());
                    };
                    return Err(e);
                }
                None if s.stop => return Err(LogError::Closed),
                None => {
                    s.want = true;
                    s.urgent = true;
                    self.cv.notify_all();
                    let waited = Instant::now();
                    s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
                    let ns = waited.elapsed().as_nanos() as u64;
                    self.waited_ns.fetch_add(ns, Ordering::Relaxed);
                }
            }
        }
    }

    /// Takes the prepared file (waiting for it). The caller requests the next one once it
    /// has renamed this one away from the temporary name (the preparer reuses that name).
    pub fn take(&self) -> Result<Arc<dyn File>, LogError> {
        self.ensure_ready()?;
        let mut s = lock(&self.slot);
        let r = s.ready.take().unwrap_or(Err(LogError::Closed));
        s.want = false;
        s.urgent = false;
        r
    }

    /// Microseconds rotations have waited for a preparation since the log opened.
    pub fn waited_us(&self) -> u64 {
        self.waited_ns.load(Ordering::Relaxed) / 1000
    }

    /// Makes a zero-fill wait between its chunks until the returned guard is dropped.
    pub fn hold(&self) -> Hold<'_> {
        self.held.fetch_add(1, Ordering::SeqCst);
        Hold(self)
    }

    /// Waits while a big write holds the preparer, unless a rotation needs the file, the
    /// preparer stops, or `budget` (what is left of [`MAX_YIELD`]) runs out; returns what is
    /// left of `budget`.
    fn give_way(&self, budget: Duration) -> Duration {
        let start = Instant::now();
        while self.held.load(Ordering::SeqCst) > 0
            && !self.stopping.load(Ordering::SeqCst)
            && !lock(&self.slot).urgent
            && start.elapsed() < budget
        {
            std::thread::sleep(YIELD_STEP);
        }
        let left = budget.saturating_sub(start.elapsed());
        if left.is_zero() && self.held.load(Ordering::SeqCst) > 0 {
            self.yield_exhausted.fetch_add(1, Ordering::SeqCst);
        }
        left
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        lock(&self.slot).stop = true;
        self.cv.notify_all();
    }
}

/// The preparer thread's body. `due` tells whether the current segment is full enough to
/// prepare the next one (module docs); it is called without the slot's lock held.
pub(crate) fn run(p: &Preparer, fs: &dyn FileSystem, opts: &LogOptions, due: &dyn Fn() -> bool) {
    let path = opts.dir.join(PREPARED_NAME);
    loop {
        if !wait_for_work(p, due) {
            return;
        }
        let budget = std::cell::Cell::new(MAX_YIELD);
        let cancelled = || {
            budget.set(p.give_way(budget.get()));
            p.stopping.load(Ordering::SeqCst)
        };
        let r = segment::create_zeroed(fs, &path, opts.segment_size, &cancelled);
        let mut s = lock(&p.slot);
        debug_assert!(s.ready.is_none(), "two prepared segment files");
        s.ready = Some(r);
        // A rotation that asked while this preparation ran has its file.
        s.urgent = false;
        drop(s);
        p.cv.notify_all();
    }
}

/// Waits until a request is to be served now (urgent, or `due`), and takes it. False: stop.
fn wait_for_work(p: &Preparer, due: &dyn Fn() -> bool) -> bool {
    let mut s = lock(&p.slot);
    loop {
        if s.stop {
            return false;
        }
        if s.want && s.ready.is_none() {
            let now = s.urgent || {
                drop(s);
                let d = due();
                s = lock(&p.slot);
                // A rotation may have asked meanwhile (its wake-up came while we were out).
                d || s.urgent
            };
            if s.stop {
                return false;
            }
            if now && s.want && s.ready.is_none() {
                // `urgent` stays set until the file is ready: the zero-fill does not give way
                // to big writes while a rotation waits for it.
                s.want = false;
                return true;
            }
            s =
                p.cv.wait_timeout(s, POLL)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
        } else {
            s = p.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::SimFs;

    /// Starts a preparer thread over `fs` whose requests are always due.
    fn start(fs: &Arc<SimFs>) -> (Arc<Preparer>, std::thread::JoinHandle<()>) {
        let p = Arc::new(Preparer::default());
        let opts = LogOptions {
            dir: "/log".into(),
            segment_size: 4 << 20,
            ..LogOptions::default()
        };
        let (p2, fs2) = (p.clone(), fs.clone());
        let t = std::thread::spawn(move || run(&p2, &*fs2, &opts, &|| true));
        (p, t)
    }

    fn ready(p: &Preparer) -> bool {
        matches!(lock(&p.slot).ready, Some(Ok(_)))
    }

    #[test]
    fn a_zero_fill_waits_for_a_big_write_to_end() {
        let fs = SimFs::new();
        let (p, t) = start(&fs);
        let hold = p.hold();
        p.request();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!ready(&p), "prepared while a big write held the preparer");
        assert_eq!(fs.counters().bytes_written, 0);
        drop(hold);
        p.ensure_ready().unwrap();
        assert_eq!(fs.counters().bytes_written, 4 << 20);
        p.stop();
        t.join().unwrap();
    }

    #[test]
    fn a_rotation_that_needs_the_file_does_not_wait_for_the_hold() {
        let fs = SimFs::new();
        let (p, t) = start(&fs);
        let _hold = p.hold();
        p.request();
        // The hold lasts past this call: only `urgent` lets the zero-fill go on before its
        // MAX_YIELD runs out.
        p.ensure_ready().unwrap();
        assert_eq!(p.yield_exhausted.load(Ordering::SeqCst), 0);
        // It waited for the zero-fill the hold had kept from starting.
        assert!(p.waited_ns.load(Ordering::Relaxed) > 0);
        p.stop();
        t.join().unwrap();
    }
}
