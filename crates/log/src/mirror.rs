//! The mirror: classic MariaDB binlog files (`binlog.000001`, ...) kept in step with the
//! engine log in the background, for tools that read binlog files.
//!
//! Owns [`Mirror`]. [`Mirror::start`] opens the classic files (cutting a torn tail), finds
//! where they stop in the log and, synchronously, appends every DURABLE log record they miss,
//! then syncs; only then does a background thread follow the log's durable end and append
//! each new group. The commit path never waits for the mirror: the thread reads the log with
//! its own [`LogReader`], and pins its position ([`Log::pin_reader`]) so that PURGE and
//! expiry never remove a segment it has not copied yet.
//!
//! Where the files stop: the last complete group of the last file is looked up in the log
//! (reader from the GTID position just before it); its GTID event must be the log's, byte for
//! byte (modulo `end_log_pos` and CRC: the commit id in it is unique across restarts and
//! resets). If the log no longer holds it (purged), does not hold it (the mirror is ahead, e.g.
//! after `RESET MASTER`) or holds another group there, the files are removed and rebuilt from
//! the oldest log segment (`MirrorReport::rebuilt`). A last file without groups (just rotated)
//! is positioned by its Gtid_list alone.
//!
//! Invariants:
//! - the files hold a prefix of the log's groups in log order; a group is never skipped: any
//!   error stops the thread's appends, is remembered and reported by [`Mirror::stats`] /
//!   [`Mirror::last_error`] (never a panic), and is cleared only by a rebuild;
//! - the thread syncs at rotation (the writer does), at most every [`MIRROR_SYNC_INTERVAL`]
//!   while groups arrive, when idle, and at shutdown;
//! - after the log's `RESET MASTER` ([`Mirror::reset`], or detected by the thread when its
//!   segment disappears and the oldest segment is number 1 again) the files are rebuilt.
//!
//! `fs` must be the file system of the log too: the mirror reads the oldest segment's header
//! for the GTID state a rebuilt first file starts with.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_binlog::{Gtid, GtidPos, GtidState};

use crate::classic::{first_event, same_event, ClassicBinlog, ClassicOpenReport, ClassicOptions};
use crate::error::LogError;
use crate::fs::FileSystem;
use crate::segment::SegmentHeader;
use crate::{Log, LogReader, Lsn, ReadStart, ReaderOptions, ReaderPin, Record};

/// Longest time appended groups stay unsynced while the mirror is busy.
pub const MIRROR_SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// How long the thread waits on the log before looking at its own requests again.
const POLL: Duration = Duration::from_millis(20);

/// What [`Mirror::start`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorReport {
    /// The classic files after the repair, oldest first.
    pub files: Vec<String>,
    /// Groups appended synchronously at start (the log had them, the files did not).
    pub repaired_groups: u64,
    /// Bytes of a torn tail cut off the last file.
    pub torn_bytes: u64,
    /// The files did not match the log and were rebuilt from the oldest segment.
    pub rebuilt: bool,
}

/// Counters of the mirror.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MirrorStats {
    /// Groups appended since start (the repair included).
    pub groups: u64,
    /// Bytes written to the classic files since start.
    pub bytes: u64,
    /// `fdatasync` calls on the classic files.
    pub fsyncs: u64,
    pub files: Vec<String>,
    /// The log position the mirror has reached.
    pub applied_lsn: Lsn,
    /// Log bytes durable but not yet mirrored.
    pub lag_bytes: u64,
    pub last_gtid: Option<Gtid>,
    /// Rebuilds since start (the one at start included).
    pub rebuilds: u64,
    /// Why the mirror stopped appending, if it did.
    pub last_error: Option<String>,
}

#[derive(Default)]
struct Ctl {
    stop: bool,
    finished: bool,
    reset_req: u64,
    reset_done: u64,
    reset_err: Option<String>,
    applied_lsn: Lsn,
    groups: u64,
    last_gtid: Option<Gtid>,
    rebuilds: u64,
    error: Option<String>,
    shutdown_result: Option<Result<(), String>>,
}

struct Shared {
    ctl: Mutex<Ctl>,
    cv: Condvar,
    classic: Mutex<ClassicBinlog>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The mirror. See the module docs. Dropping it shuts it down.
pub struct Mirror {
    log: Arc<Log>,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The oldest segment's start LSN and header state.
fn oldest_segment(log: &Log, fs: &dyn FileSystem) -> Result<(Lsn, GtidState), LogError> {
    let segs = log.segments();
    let first = segs.first().ok_or(LogError::Closed)?;
    let f = fs
        .open(&first.path, false)
        .map_err(|e| LogError::io(&first.path, 0, "open oldest segment", e))?;
    let h = SegmentHeader::read(f.as_ref(), &first.path)?;
    Ok((first.start_lsn, h.state))
}

/// A reader positioned after the mirror's last group, or None when the files do not belong
/// to this log (rebuild).
fn position_reader(
    log: &Log,
    classic: &ClassicBinlog,
    open: &ClassicOpenReport,
    oldest: &(Lsn, GtidState),
) -> Result<Option<LogReader>, LogError> {
    let opts = ReaderOptions::default();
    let pos = open.gtid_state.pos();
    let not_found = |e: &LogError| {
        matches!(
            e,
            LogError::GtidNotFound(_) | LogError::InvalidPosition { .. }
        )
    };
    match (classic.opened_last_gtid_event(), open.last_gtid) {
        (Some(ev), Some(g)) => {
            let mut before = GtidPos::new();
            for x in pos.iter() {
                if x.domain_id != g.domain_id {
                    before.set(x);
                } else if g.seq_no > 1 {
                    before.set(Gtid {
                        seq_no: g.seq_no - 1,
                        ..g
                    });
                }
            }
            let mut r = match log.reader(ReadStart::Gtid(before), opts) {
                Ok(r) => r,
                Err(e) if not_found(&e) => return Ok(None),
                Err(e) => return Err(e),
            };
            match r.next() {
                Ok(Some(rec)) => {
                    if rec.gtid == Some(g) && same_event(first_event(&rec.events), ev) {
                        Ok(Some(r))
                    } else {
                        Ok(None)
                    }
                }
                Ok(None) => Ok(None),
                Err(e) if not_found(&e) => Ok(None),
                Err(e) => Err(e),
            }
        }
        _ => {
            if open.gtid_state.is_empty() {
                return if oldest.1.is_empty() {
                    log.reader(ReadStart::Lsn(oldest.0), opts).map(Some)
                } else {
                    Ok(None)
                };
            }
            let now = log.gtid_state();
            if pos
                .iter()
                .any(|g| now.last(g.domain_id).is_none() || now.next_seq(g.domain_id) <= g.seq_no)
            {
                return Ok(None);
            }
            match log.reader(ReadStart::Gtid(pos), opts) {
                Ok(r) => Ok(Some(r)),
                Err(e) if not_found(&e) => Ok(None),
                Err(e) => Err(e),
            }
        }
    }
}

struct Worker {
    log: Arc<Log>,
    fs: Arc<dyn FileSystem>,
    shared: Arc<Shared>,
    reader: LogReader,
    /// Holds the segments the mirror has not copied yet back from purges and expiry.
    pin: ReaderPin,
    last_sync: Instant,
    dirty: bool,
    log_closed: bool,
}

impl Worker {
    /// Appends the durable records the reader has; returns how many.
    fn catch_up(&mut self) -> Result<u64, LogError> {
        let mut n = 0;
        while let Some(rec) = self.reader.next()? {
            self.append(&rec)?;
            n += 1;
        }
        self.publish();
        Ok(n)
    }

    fn append(&mut self, rec: &Record) -> Result<(), LogError> {
        let r = lock(&self.shared.classic).append_group(&rec.events);
        if let Err(e) = r {
            let gtid = rec.gtid.map_or_else(|| "-".to_string(), |g| g.to_string());
            return Err(LogError::Failed(format!(
                "mirroring the group {gtid} at LSN {} failed: {e}",
                rec.lsn
            )));
        }
        self.dirty = true;
        let mut c = lock(&self.shared.ctl);
        c.groups += 1;
        c.last_gtid = rec.gtid;
        Ok(())
    }

    fn publish(&self) {
        self.pin.advance(self.reader.position());
        lock(&self.shared.ctl).applied_lsn = self.reader.position();
        self.shared.cv.notify_all();
    }

    fn sync(&mut self) -> Result<(), LogError> {
        lock(&self.shared.classic).sync()?;
        self.dirty = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Removes the files and starts them again from the oldest segment.
    fn rebuild(&mut self) -> Result<(), LogError> {
        let (lsn, state) = oldest_segment(&self.log, self.fs.as_ref())?;
        lock(&self.shared.classic).reset_to(&state)?;
        self.reader = self
            .log
            .reader(ReadStart::Lsn(lsn), ReaderOptions::default())?;
        self.dirty = false;
        lock(&self.shared.ctl).rebuilds += 1;
        self.catch_up()?;
        self.sync()
    }

    /// The reader's segment disappeared: a `RESET MASTER` (the oldest segment is number 1
    /// again) means rebuild; after a purge the reader is reopened at its position, which
    /// fails if records the mirror lacks were purged.
    fn on_purged(&mut self, e: LogError) -> Result<(), LogError> {
        let segs = self.log.segments();
        let pos = self.reader.position();
        match segs.first() {
            Some(first) if first.number == 1 => self.rebuild(),
            Some(_) => {
                self.reader = self
                    .log
                    .reader(ReadStart::Lsn(pos), ReaderOptions::default())
                    .map_err(|_| e)?;
                Ok(())
            }
            None => Err(e),
        }
    }

    /// One turn of following the log.
    fn follow(&mut self) -> Result<(), LogError> {
        if self.log_closed {
            let c = lock(&self.shared.ctl);
            if !c.stop && c.reset_req == c.reset_done {
                let _ = self.shared.cv.wait_timeout(c, POLL);
            }
            return Ok(());
        }
        match self.reader.next_wait(POLL) {
            Ok(Some(rec)) => {
                self.append(&rec)?;
                if self.last_sync.elapsed() >= MIRROR_SYNC_INTERVAL {
                    self.sync()?;
                }
            }
            Ok(None) => {
                if self.dirty {
                    self.sync()?;
                }
            }
            Err(LogError::Closed) => {
                self.log_closed = true;
                self.catch_up()?;
                if self.dirty {
                    self.sync()?;
                }
            }
            Err(e @ LogError::InvalidPosition { .. }) => self.on_purged(e)?,
            Err(e) => return Err(e),
        }
        self.publish();
        Ok(())
    }

    fn run(mut self) {
        loop {
            let (stop, reset, failed) = {
                let c = lock(&self.shared.ctl);
                (c.stop, c.reset_req, c.error.is_some())
            };
            if stop {
                break;
            }
            if reset > lock(&self.shared.ctl).reset_done {
                let r = self.rebuild();
                let mut c = lock(&self.shared.ctl);
                c.reset_done = reset;
                c.reset_err = r.as_ref().err().map(|e| e.to_string());
                c.error = c.reset_err.clone();
                drop(c);
                self.publish();
                continue;
            }
            if failed {
                let c = lock(&self.shared.ctl);
                if !c.stop && c.reset_req == c.reset_done {
                    let _ = self.shared.cv.wait_timeout(c, POLL);
                }
                continue;
            }
            if let Err(e) = self.follow() {
                lock(&self.shared.ctl).error = Some(e.to_string());
                self.shared.cv.notify_all();
            }
        }
        let failed = lock(&self.shared.ctl).error.clone();
        let r = match failed {
            Some(why) => Err(why),
            None => self
                .catch_up()
                .and_then(|_| lock(&self.shared.classic).close())
                .map_err(|e| e.to_string()),
        };
        let mut c = lock(&self.shared.ctl);
        if let Err(why) = &r {
            c.error.get_or_insert_with(|| why.clone());
        }
        c.shutdown_result = Some(r);
        c.finished = true;
        drop(c);
        self.shared.cv.notify_all();
    }
}

impl Mirror {
    /// Opens the classic files (cutting a torn tail), then SYNCHRONOUSLY writes every durable
    /// log record they miss (rebuilding them from the oldest segment when they do not match
    /// the log, see the module docs), syncs, and only then starts the thread that follows
    /// the log's durable end.
    pub fn start(
        log: Arc<Log>,
        fs: Arc<dyn FileSystem>,
        opts: ClassicOptions,
    ) -> Result<(Mirror, MirrorReport), LogError> {
        let oldest = oldest_segment(&log, fs.as_ref())?;
        let (mut classic, open) = ClassicBinlog::open(fs.clone(), opts, &oldest.1)?;
        let mut rebuilt = false;
        let reader = if open.created {
            log.reader(ReadStart::Lsn(oldest.0), ReaderOptions::default())?
        } else {
            match position_reader(&log, &classic, &open, &oldest)? {
                Some(r) => r,
                None => {
                    classic.reset_to(&oldest.1)?;
                    rebuilt = true;
                    log.reader(ReadStart::Lsn(oldest.0), ReaderOptions::default())?
                }
            }
        };
        let shared = Arc::new(Shared {
            ctl: Mutex::new(Ctl {
                rebuilds: u64::from(rebuilt),
                last_gtid: open.last_gtid,
                ..Ctl::default()
            }),
            cv: Condvar::new(),
            classic: Mutex::new(classic),
        });
        let pin = log.pin_reader(reader.position());
        let mut w = Worker {
            log: log.clone(),
            fs,
            shared: shared.clone(),
            reader,
            pin,
            last_sync: Instant::now(),
            dirty: false,
            log_closed: false,
        };
        let repaired = w.catch_up()?;
        w.sync()?;
        let report = MirrorReport {
            files: lock(&shared.classic)
                .files()
                .into_iter()
                .map(|f| f.name)
                .collect(),
            repaired_groups: repaired,
            torn_bytes: open.torn_bytes,
            rebuilt,
        };
        let t = std::thread::Builder::new()
            .name("onelog-mirror".into())
            .spawn(move || w.run())
            .map_err(|e| LogError::Failed(format!("cannot start the mirror thread: {e}")))?;
        Ok((
            Mirror {
                log,
                shared,
                thread: Mutex::new(Some(t)),
            },
            report,
        ))
    }

    /// Waits until the mirror reached the log's durable end as of this call; false on
    /// timeout or when the mirror failed.
    pub fn wait_caught_up(&self, timeout: Duration) -> bool {
        let target = self.log.durable_lsn();
        let deadline = Instant::now() + timeout;
        let mut c = lock(&self.shared.ctl);
        loop {
            if c.applied_lsn >= target {
                return true;
            }
            if c.error.is_some() || c.finished {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            c = self
                .shared
                .cv
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// After `Log::reset` (`RESET MASTER`): removes the files and rebuilds them from the
    /// log's (new) oldest segment; returns once done. Also clears a remembered error.
    pub fn reset(&self) -> Result<(), LogError> {
        let mut c = lock(&self.shared.ctl);
        if c.finished || c.stop {
            return Err(LogError::Closed);
        }
        c.reset_req += 1;
        let want = c.reset_req;
        self.shared.cv.notify_all();
        while c.reset_done < want && !c.finished {
            c = self
                .shared
                .cv
                .wait_timeout(c, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if c.reset_done < want {
            return Err(LogError::Closed);
        }
        match &c.reset_err {
            Some(why) => Err(LogError::Failed(format!("mirror rebuild: {why}"))),
            None => Ok(()),
        }
    }

    pub fn stats(&self) -> MirrorStats {
        let (bytes, fsyncs, files) = {
            let b = lock(&self.shared.classic);
            (
                b.bytes_written(),
                b.fsyncs(),
                b.files().into_iter().map(|f| f.name).collect(),
            )
        };
        let durable = self.log.durable_lsn();
        let c = lock(&self.shared.ctl);
        MirrorStats {
            groups: c.groups,
            bytes,
            fsyncs,
            files,
            applied_lsn: c.applied_lsn,
            lag_bytes: durable.saturating_sub(c.applied_lsn),
            last_gtid: c.last_gtid,
            rebuilds: c.rebuilds,
            last_error: c.error.clone(),
        }
    }

    /// Why the mirror stopped appending, if it did.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.ctl).error.clone()
    }

    /// Catches up to the log's durable end, closes the files (clearing the in-use flag,
    /// syncing) and stops the thread. A remembered error is returned. Idempotent.
    pub fn shutdown(&self) -> Result<(), LogError> {
        {
            let mut c = lock(&self.shared.ctl);
            c.stop = true;
        }
        self.shared.cv.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        let c = lock(&self.shared.ctl);
        match &c.shutdown_result {
            Some(Err(why)) => Err(LogError::Failed(format!("binlog mirror: {why}"))),
            _ => Ok(()),
        }
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("stats", &self.stats())
            .finish()
    }
}
