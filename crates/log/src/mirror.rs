//! The mirror: the classic view's files (`crate::view`: `binlog.NNNNNN` for segment N) kept
//! on disk in step with the engine log in the background, for tools that read binlog files.
//!
//! Owns [`Mirror`]. The mirror does not place anything itself: its thread reads a
//! [`ViewReader`] and writes each item as it comes (a FileStart creates the file and names it
//! in the index, a Group is appended, a Rotate ends the file), so a mirror file is byte for
//! byte the view's file: same name, same header events, same offsets, rotated exactly when
//! the log moves to its next segment (the classic options' `max_size` is not used), except
//! the in-use flag of the open last file. [`Mirror::start`] opens the files (cutting a torn
//! tail), checks them against the view and, synchronously, appends every DURABLE item they
//! miss, then syncs; only then does the thread follow the log's durable end. The commit path
//! never waits for the mirror, and the thread pins its position ([`Log::pin_reader`]) so
//! that PURGE and expiry never remove a segment it has not copied yet.
//!
//! The check at start: the last file must be a view file (`binlog.NNNNNN` with segment N
//! present) whose header events are the view's and whose size is an item boundary of the
//! view, its last group equal to the view's, byte for byte (the commit id in its GTID event
//! is unique across restarts and resets). A last file without groups whose Gtid_list is the
//! view's state but whose header differs (created by a repair, e.g. a rotation cut by a
//! crash) gets the view's header. Anything else (purged, ahead of the log after `RESET
//! MASTER`, another history) removes the files and rebuilds them from the oldest segment
//! (`MirrorReport::rebuilt`).
//!
//! Invariants:
//! - the files hold a prefix of the view in order; nothing is skipped: any error stops the
//!   thread's appends, is remembered and reported by [`Mirror::stats`] /
//!   [`Mirror::last_error`] (never a panic), and is cleared only by a rebuild;
//! - the thread syncs at rotation (the writer does), at most every [`MIRROR_SYNC_INTERVAL`]
//!   while groups arrive, when idle, and at shutdown;
//! - after the log's `RESET MASTER` ([`Mirror::reset`], or detected by the thread when its
//!   segment disappears and the oldest segment is number 1 again) the files are rebuilt.
//!
//! `fs` must be the file system of the log too.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_binlog::event::{event_type, GtidListEvent};
use onelog_binlog::Gtid;

use crate::classic::{ClassicBinlog, ClassicOpenReport, ClassicOptions};
use crate::error::LogError;
use crate::fs::FileSystem;
use crate::view::{parse_view_file_name, ViewItem, ViewReader, FIRST_EVENT_OFFSET};
use crate::{Log, Lsn, ReaderPin};

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

/// Files longer than this are not header-only (a header is a few hundred bytes).
const HEADER_ONLY_MAX: u64 = 64 << 10;

/// Index of the Format_description flags byte in a file's header events (after the magic).
const FLAGS_IN_HEADER: usize = 17;

fn not_found(e: &LogError) -> bool {
    matches!(
        e,
        LogError::GtidNotFound(_) | LogError::InvalidPosition { .. }
    )
}

/// The next item already durable, or None (the log's durable end, or the log closed).
fn next_now(r: &mut ViewReader) -> Result<Option<ViewItem>, LogError> {
    match r.next_wait(Duration::ZERO) {
        Err(LogError::Closed) => Ok(None),
        other => other,
    }
}

/// True when two header event runs are equal but for the in-use flag.
fn same_header(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.len() > FLAGS_IN_HEADER
        && a[..FLAGS_IN_HEADER] == b[..FLAGS_IN_HEADER]
        && a[FLAGS_IN_HEADER + 1..] == b[FLAGS_IN_HEADER + 1..]
}

/// A view reader positioned at the end of the mirror's last file, or None when the files are
/// not the view's (rebuild). May rewrite the header of a last file without groups (see the
/// module docs).
fn position_reader(
    log: &Log,
    classic: &mut ClassicBinlog,
    open: &ClassicOpenReport,
) -> Result<Option<ViewReader>, LogError> {
    debug_assert!(
        open.files.last() == classic.files().last().map(|f| &f.name),
        "the report names the current file last"
    );
    let Some(cur) = classic.files().last().cloned() else {
        return Ok(None);
    };
    let Some(number) = parse_view_file_name(&cur.name) else {
        return Ok(None);
    };
    let mut r = match log.view_reader(number) {
        Ok(r) => r,
        Err(e) if not_found(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(ViewItem::FileStart {
        name,
        state,
        events,
        ..
    }) = next_now(&mut r)?
    else {
        return Ok(None);
    };
    let header = classic.read_current(FIRST_EVENT_OFFSET, events.len())?;
    if !same_header(&header, &events) {
        if header_only_at(classic, cur.size, &state)? {
            classic.begin_view_file(&name, &events, &state)?;
            return Ok(Some(r));
        }
        return Ok(None);
    }
    let mut offset = FIRST_EVENT_OFFSET + events.len() as u64;
    let mut last: Option<(u64, Vec<u8>)> = None;
    while offset < cur.size {
        match next_now(&mut r) {
            Ok(Some(ViewItem::Group {
                offset: at, events, ..
            })) => {
                offset = at + events.len() as u64;
                last = Some((at, events));
            }
            // The file goes on where the view ends it, or the log lacks what the file holds.
            Ok(_) => return Ok(None),
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    if offset != cur.size {
        return Ok(None);
    }
    if let Some((at, events)) = last {
        if classic.read_current(at, events.len())? != events {
            return Ok(None);
        }
    }
    Ok(Some(r))
}

/// True when the current file (`size` bytes) holds only header events, its Gtid_list being
/// `state`: a file a repair created (a rotation cut by a crash), whose header may be given
/// the view's.
fn header_only_at(
    classic: &ClassicBinlog,
    size: u64,
    state: &onelog_binlog::GtidState,
) -> Result<bool, LogError> {
    if size > HEADER_ONLY_MAX {
        return Ok(false);
    }
    let data = classic.read_current(0, size as usize)?;
    let mut list = None;
    for ev in crate::classic::read_classic_file("current", &data) {
        let Ok(ev) = ev else { return Ok(false) };
        match ev.event_type() {
            event_type::GTID_LIST => list = GtidListEvent::decode(ev.bytes).ok(),
            event_type::FORMAT_DESCRIPTION | event_type::BINLOG_CHECKPOINT => {}
            _ => return Ok(false),
        }
    }
    Ok(list.is_some_and(|l| &l.to_state() == state))
}

/// Removes the files and starts them again with the view of the oldest segment.
fn rebuild_files(log: &Log, classic: &mut ClassicBinlog) -> Result<ViewReader, LogError> {
    let first = log
        .segments()
        .first()
        .map(|s| s.number)
        .ok_or(LogError::Closed)?;
    let mut r = log.view_reader(first)?;
    match next_now(&mut r)? {
        Some(ViewItem::FileStart {
            name,
            state,
            events,
            ..
        }) => classic.reset_to_view_file(&name, &events, &state)?,
        other => {
            return Err(LogError::Failed(format!(
                "the view of segment {first} does not start with its file header: {other:?}"
            )))
        }
    }
    Ok(r)
}

struct Worker {
    log: Arc<Log>,
    shared: Arc<Shared>,
    reader: ViewReader,
    /// Holds the segments the mirror has not copied yet back from purges and expiry.
    pin: ReaderPin,
    last_sync: Instant,
    dirty: bool,
    log_closed: bool,
}

impl Worker {
    /// Writes the durable items the reader has; returns how many groups.
    fn catch_up(&mut self) -> Result<u64, LogError> {
        let mut n = 0;
        while let Some(item) = next_now(&mut self.reader)? {
            n += u64::from(self.write(item)?);
        }
        self.publish();
        Ok(n)
    }

    /// Writes one view item; true for a group.
    fn write(&mut self, item: ViewItem) -> Result<bool, LogError> {
        let mut classic = lock(&self.shared.classic);
        match item {
            ViewItem::FileStart {
                name,
                state,
                events,
                ..
            } => {
                classic.begin_view_file(&name, &events, &state)?;
                Ok(false)
            }
            ViewItem::Rotate { offset, event, .. } => {
                classic.end_view_file(offset, &event)?;
                Ok(false)
            }
            ViewItem::Group {
                offset,
                gtid,
                lsn,
                events,
                ..
            } => {
                if let Err(e) = classic.append_view_bytes(offset, &events, Some(gtid)) {
                    return Err(LogError::Failed(format!(
                        "mirroring the group {gtid} at LSN {lsn} failed: {e}"
                    )));
                }
                drop(classic);
                self.dirty = true;
                let mut c = lock(&self.shared.ctl);
                c.groups += 1;
                c.last_gtid = Some(gtid);
                Ok(true)
            }
        }
    }

    fn publish(&self) {
        self.pin.advance(self.reader.done_lsn());
        lock(&self.shared.ctl).applied_lsn = self.reader.done_lsn();
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
        self.reader = rebuild_files(&self.log, &mut lock(&self.shared.classic))?;
        self.dirty = false;
        lock(&self.shared.ctl).rebuilds += 1;
        self.catch_up()?;
        self.sync()
    }

    /// The reader's segment disappeared: a `RESET MASTER` (the oldest segment is number 1
    /// again) means rebuild; after a purge the reader is reopened at its file and offset,
    /// which fails if that file was purged.
    fn on_purged(&mut self, e: LogError) -> Result<(), LogError> {
        let segs = self.log.segments();
        let (number, offset) = self.reader.position();
        match segs.first() {
            Some(first) if first.number == 1 => self.rebuild(),
            Some(_) => {
                let mut r = self.log.view_reader(number).map_err(|_| e)?;
                while r.position() != (number, offset) {
                    if next_now(&mut r)?.is_none() {
                        return Err(LogError::Failed(format!(
                            "the mirror cannot find offset {offset} of segment {number} again"
                        )));
                    }
                }
                self.reader = r;
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
            Ok(Some(item)) => {
                self.write(item)?;
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
        let initial = match log.segments().first() {
            Some(first) => {
                let f = fs
                    .open(&first.path, false)
                    .map_err(|e| LogError::io(&first.path, 0, "open oldest segment", e))?;
                crate::segment::SegmentHeader::read(f.as_ref(), &first.path)?.state
            }
            None => return Err(LogError::Closed),
        };
        let (mut classic, open) = ClassicBinlog::open(fs, opts, &initial)?;
        let mut rebuilt = false;
        let reader = match position_reader(&log, &mut classic, &open)? {
            Some(r) => r,
            None => {
                rebuilt = true;
                rebuild_files(&log, &mut classic)?
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
        let pin = log.pin_reader(reader.done_lsn());
        let mut w = Worker {
            log: log.clone(),
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
