//! `Log`: the public handle. It owns the `Inner` (`inner.rs`: the state and its lock order)
//! behind an `Arc` shared with the background threads (the preparer, `prealloc.rs`; the
//! flusher, `flusher.rs`) and readers, and turns each public call into the module that does
//! it: commits into `group_commit.rs`, syncs and flushes into `flusher.rs`, opening into
//! `recovery.rs`, reads into `reader.rs`, purges into `retention.rs`' plans under the readers'
//! pins (`pins.rs`).
//!
//! Invariants: every public call goes through one module (listed above) that keeps its own
//! invariants; `Log` holds no state of its own besides the shared `Inner`, so there is one owner
//! for each piece of state.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::SystemTime;

use onelog_binlog::GtidState;

use crate::classic::ClassicFileInfo;
use crate::error::LogError;
use crate::filemode::FileMode;
use crate::fs::FileSystem;
use crate::inner::Inner;
use crate::locks::lock;
use crate::pins::ReaderPin;
use crate::reader::LogReader;
use crate::retention::{
    self, ExpiryLimits, PurgeError, PurgeOutcome, PurgePlan, Retention, SegmentInUse,
};
use crate::{
    flusher, group_commit, recovery, CommitReceipt, Durability, GroupSink, LogOptions, LogStats,
    Lsn, OpenReport, PendingRecord, ReadStart, ReaderOptions, SegmentInfo,
};

/// The log. Create with [`Log::open`]; dropping it stops its background threads (without
/// flushing what level 0 buffered: call [`Log::shutdown`] for an orderly stop).
pub struct Log {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Log {
    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    /// Opens (creating when empty) the log in `opts.dir`, recovering its tail. File mode: also
    /// decides the in-doubt PREPARE records, catches the classic binlog up after an
    /// engine-mode run and installs the file-mode marker; engine mode removes that marker
    /// (`recovery.rs`, `filemode.rs`). All of it is durable before the first commit.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        opts: LogOptions,
    ) -> Result<(Arc<Log>, OpenReport), LogError> {
        let (inner, report) = recovery::open(fs, opts)?;
        let inner = Arc::new(inner);
        let mut threads = Vec::new();
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(f)
                .map_err(|e| LogError::io(inner.opts.dir.clone(), 0, "spawn log thread", e))
        };
        let i = inner.clone();
        threads.push(spawn(
            "onelog-prealloc",
            Box::new(move || {
                // The next segment is prepared once the current one is half full.
                let due = || {
                    let start = i.segments_read().last().map_or(0, |m| m.start_lsn);
                    let written = lock(&i.progress).written();
                    written.saturating_sub(start) >= i.opts.segment_size / 2
                };
                crate::prealloc::run(&i.preparer, &*i.fs, &i.opts, &due)
            }),
        )?);
        let i = inner.clone();
        threads.push(spawn("onelog-flusher", Box::new(move || flusher::run(&i)))?);
        inner.preparer.request();
        Ok((
            Arc::new(Log {
                inner,
                threads: Mutex::new(threads),
            }),
            report,
        ))
    }

    /// Installs the engine's hook; call before the first commit.
    pub fn set_sink(&self, sink: Arc<dyn GroupSink>) {
        *self.inner.sink.write().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    /// Enqueues `rec`, group-commits it, and returns once it is acknowledged per the
    /// durability level (level 1: durable; level 2: written; level 0: buffered).
    pub fn commit(&self, rec: PendingRecord) -> Result<CommitReceipt, LogError> {
        group_commit::commit(&self.inner, self.streamable(rec)?)
    }

    /// The record as this log can take it: file mode's classic binlog takes an event group
    /// as bytes, so a streamed group is read into memory first (`streamed.rs`).
    fn streamable(&self, mut rec: PendingRecord) -> Result<PendingRecord, LogError> {
        if rec.streamed.is_some() && self.inner.file.is_some() {
            rec.materialize()
                .map_err(|e| LogError::io(&self.inner.opts.dir, 0, "read streamed events", e))?;
        }
        Ok(rec)
    }

    /// [`Log::commit`] that calls `on_queued` once the record has its place in the commit
    /// queue (every record queued later is logged after it): a replica's workers queue in
    /// their primary's order by waiting for each other's `on_queued`.
    pub fn commit_queued(
        &self,
        rec: PendingRecord,
        on_queued: &dyn Fn(),
    ) -> Result<CommitReceipt, LogError> {
        group_commit::commit_then(&self.inner, self.streamable(rec)?, on_queued, false)
    }

    /// [`Log::commit_queued`] for a committer that need not wait for the record's sync: at
    /// level 1 in engine mode (not strict visibility) a group of only such records is
    /// acknowledged once it is written and applied, as at level 2, and the flusher syncs it
    /// right after (one fsync in flight, back to back while such groups keep coming). A
    /// replica's applied groups are committed so: nobody is acknowledged by them, and a crash
    /// loses only groups its primary still has, fetched again from the recovered position. A
    /// batch that also holds a waiting committer is synced before anyone is acknowledged;
    /// file mode and strict visibility always sync first.
    pub fn commit_queued_unsynced(
        &self,
        rec: PendingRecord,
        on_queued: &dyn Fn(),
    ) -> Result<CommitReceipt, LogError> {
        group_commit::commit_then(&self.inner, self.streamable(rec)?, on_queued, true)
    }

    /// `gtid_strict_mode`: from now on a record with a fixed GTID that is not above its
    /// domain's last is refused with [`LogError::GtidOutOfOrder`].
    pub fn set_gtid_strict_mode(&self, on: bool) {
        self.inner.gtid_strict.store(on, Ordering::SeqCst);
    }

    /// True when the sink's `GroupSink::admit` runs before each batch is framed with every
    /// earlier group applied: engine mode without `strict_visibility`. Otherwise (file mode,
    /// strict visibility) a caller that needs the check must make it itself.
    pub fn admits_before_framing(&self) -> bool {
        self.inner.file.is_none() && !self.inner.opts.strict_visibility
    }

    /// `gtid_strict_mode` as set by [`Log::set_gtid_strict_mode`].
    pub fn gtid_strict_mode(&self) -> bool {
        self.inner.gtid_strict.load(Ordering::SeqCst)
    }

    pub fn set_durability(&self, d: Durability) {
        self.inner.durability.store(d.level(), Ordering::SeqCst);
    }

    pub fn durability(&self) -> Durability {
        self.inner.durability()
    }

    /// Writes and syncs everything appended so far.
    pub fn flush(&self) -> Result<(), LogError> {
        flusher::flush(&self.inner)
    }

    /// Flushes, then stops the background threads; later commits get `Closed`. A failed log
    /// is stopped too, and the failure returned. File mode: the flush writes the last
    /// CommitMark and syncs the classic binlog, which is then closed (its in-use flag cleared).
    pub fn shutdown(&self) -> Result<(), LogError> {
        let mut r = match self.inner.refusal() {
            // The final flush, then the SyncMark vouching for the last group (when on).
            None => self.flush().and_then(|()| flusher::idle_mark(&self.inner)),
            Some(LogError::Closed) => Ok(()),
            Some(e) => Err(e),
        };
        if let (Ok(()), Some(fm)) = (&r, &self.inner.file) {
            r = fm.close(&self.inner);
        }
        self.stop_threads();
        r
    }

    fn stop_threads(&self) {
        {
            let mut p = lock(&self.inner.progress);
            p.close();
        }
        self.inner.progress_cv.notify_all();
        self.inner.preparer.stop();
        self.inner.flusher.stop();
        let threads: Vec<_> = lock(&self.threads).drain(..).collect();
        for t in threads {
            let _ = t.join();
        }
    }

    pub fn stats(&self) -> LogStats {
        let s = &self.inner.stats;
        LogStats {
            commits: s.commits.load(Ordering::SeqCst),
            groups: s.groups.load(Ordering::SeqCst),
            fsyncs: s.fsyncs.load(Ordering::SeqCst),
            bytes_written: s.bytes_written.load(Ordering::SeqCst),
            binlog_fsyncs: s.binlog_fsyncs.load(Ordering::SeqCst),
            binlog_bytes: s.binlog_bytes.load(Ordering::SeqCst),
            idle_marks: s.idle_marks.load(Ordering::SeqCst),
            phases: {
                let p = &s.phases;
                let us = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) / 1000;
                crate::CommitPhases {
                    queue_wait_us: us(&p.queue_wait),
                    encode_us: us(&p.encode),
                    write_us: us(&p.write),
                    apply_us: us(&p.apply),
                    apply_in_sync_us: us(&p.apply_in_sync),
                    sync_us: us(&p.sync),
                    ack_us: us(&p.ack),
                    fsync_busy_us: us(&p.fsync_busy),
                    rotation_wait_us: self.inner.preparer.waited_us(),
                    group_sizes: std::array::from_fn(|i| p.group_sizes[i].load(Ordering::Relaxed)),
                }
            },
        }
    }

    /// The GTID state as of the last record appended.
    pub fn gtid_state(&self) -> GtidState {
        lock(&self.inner.writer).state().clone()
    }

    /// The LSN below which everything survives a crash. File mode: also synced in the
    /// classic binlog (what a checkpoint may cover: a group only in the engine log can still
    /// be rolled back by recovery).
    pub fn durable_lsn(&self) -> Lsn {
        let p = lock(&self.inner.progress);
        p.durable().min(p.binlog_synced())
    }

    pub fn written_lsn(&self) -> Lsn {
        lock(&self.inner.progress).written()
    }

    pub fn end_lsn(&self) -> Lsn {
        lock(&self.inner.progress).end()
    }

    /// A reader from `start`; any number may run concurrently with commits.
    pub fn reader(&self, start: ReadStart, opts: ReaderOptions) -> Result<LogReader, LogError> {
        LogReader::new(self.inner.clone(), start, opts)
    }

    /// The segments present, oldest first.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.inner.segments.infos(self.written_lsn())
    }

    /// Seals the current segment (writing and syncing what it holds) and continues in the next
    /// one, as `FLUSH BINARY LOGS` does. Commits wait for the rotation (it holds the writer).
    /// File mode: the classic binlog rotates to its next file too.
    pub fn rotate(&self) -> Result<(), LogError> {
        match &self.inner.file {
            None => lock(&self.inner.writer).rotate_now(&self.inner),
            Some(fm) => fm.rotate(&self.inner),
        }
    }

    /// Shortens the sealed segments rotation or recovery queued to the end of their records
    /// (`trim.rs`); returns the bytes of disk released. Cheap when nothing is queued; a
    /// failure leaves the segment queued for the next call (and its file as it was).
    pub fn trim_sealed(&self) -> Result<u64, LogError> {
        use crate::trim::Listed;
        // The queue first, then the list: everything queued is listed (`Untrimmed::take`).
        let todo = self.inner.untrimmed.take();
        if todo.is_empty() {
            return Ok(0);
        }
        let listed: Vec<(u64, Lsn, Listed)> = self
            .inner
            .segments_read()
            .iter()
            .map(|m| {
                let state = if m.end_lsn.is_some() {
                    Listed::Sealed
                } else {
                    Listed::Current
                };
                (m.number, m.start_lsn, state)
            })
            .collect();
        self.inner.untrimmed.run(todo, &listed)
    }

    /// `RESET MASTER`: writes and syncs everything appended, then replaces all segments with
    /// a new `binlog-000001.olog` that starts at the current end LSN (LSNs stay monotonic)
    /// with an empty GTID state: the next GTID of every domain has sequence number 1. Readers
    /// positioned in the removed segments get `Purged`. Commits wait for it (it holds
    /// `sync_lock` and the writer). Crash-safe: a reboot finds either the old log or the reset
    /// one (see `segment.rs`).
    ///
    /// File mode: first the log is sealed (every group's CommitMark durable: nothing is in
    /// doubt), then the classic binlog is reset, then the log. A crash between the two resets
    /// leaves the old log with an empty binlog (`OpenReport::binlog` reports the groups it
    /// lacks as `binlog_behind`); new groups then continue the old GTID sequence in both, so
    /// later two-phase-commit decisions stay sound.
    pub fn reset(&self) -> Result<(), LogError> {
        let _turn = self.inner.file.as_ref().map(|fm| lock(&fm.turn));
        let _sync = lock(&self.inner.sync_lock);
        let mut w = lock(&self.inner.writer);
        if let Some(fm) = &self.inner.file {
            fm.reset_binlog(&self.inner, &mut w)?;
        }
        w.reset_now(&self.inner)?;
        drop(w);
        if let Some(fm) = &self.inner.file {
            fm.synced_to_end(&self.inner);
        }
        Ok(())
    }

    /// Removes whole segments whose records end at or before `lsn` (never the current one);
    /// returns how many. It checks no retention rule: purges on behalf of users go through
    /// [`Log::purge_to_checked`] / [`Log::purge_while_checked`] / [`Log::expire_checked`]
    /// ([`crate::retention`]).
    pub fn purge_before(&self, lsn: Lsn) -> Result<usize, LogError> {
        let _pins = self.inner.pins.hold();
        self.remove_before(lsn, usize::MAX).map(|v| v.len())
    }

    /// Takes the segments ending at or before `lsn`, at most `max`, out of the list and
    /// removes their files (the caller holds the pins: see `pins.rs`).
    fn remove_before(&self, lsn: Lsn, max: usize) -> Result<Vec<SegmentInfo>, LogError> {
        let doomed = self.inner.segments.purge_before(lsn, max);
        for s in &doomed {
            self.inner
                .fs
                .remove_file(&s.path)
                .map_err(|e| LogError::io(&s.path, 0, "remove purged segment", e))?;
        }
        if !doomed.is_empty() {
            let dir = &self.inner.opts.dir;
            self.inner
                .fs
                .sync_dir(dir)
                .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))?;
        }
        Ok(doomed
            .into_iter()
            .map(|s| SegmentInfo {
                number: s.number,
                path: s.path,
                start_lsn: s.start_lsn,
                end_lsn: s.end_lsn.unwrap_or(s.start_lsn),
                header_len: s.header_len,
                closed_at: s.closed_at,
            })
            .collect())
    }

    /// Registers an open reader's position: no purge removes a segment that ends after the
    /// pin's LSN while the returned handle lives ([`ReaderPin::advance`] moves it forward,
    /// dropping it releases it). Pin *before* opening the reader at `lsn`: a purge that
    /// removed its segment first makes the reader report the position purged instead.
    pub fn pin_reader(&self, lsn: Lsn) -> ReaderPin {
        self.inner.pins.pin(lsn)
    }

    /// Number of live reader pins (monitoring).
    pub fn reader_pins(&self) -> usize {
        self.inner.pins.count()
    }

    /// The lowest LSN a reader pin holds (None without pins).
    pub fn oldest_reader_lsn(&self) -> Option<Lsn> {
        self.inner.pins.hold().oldest()
    }

    /// Plans against the current segments with the oldest reader pin added to `retention`
    /// (and no pin added or removed until the plan is carried out), then carries it out.
    fn purge_planned(
        &self,
        retention: &Retention,
        plan: impl FnOnce(
            &[SegmentInfo],
            &Retention,
        ) -> Result<(PurgePlan, Option<SegmentInUse>), PurgeError>,
    ) -> Result<PurgeOutcome, PurgeError> {
        let pins = self.inner.pins.hold();
        let retention = Retention {
            oldest_reader_lsn: match (retention.oldest_reader_lsn, pins.oldest()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            ..*retention
        };
        let (plan, stopped_at) = plan(&self.segments(), &retention)?;
        let removed = match plan.before_lsn {
            None => Vec::new(),
            Some(lsn) => self
                .remove_before(lsn, plan.count)
                .map_err(PurgeError::Log)?,
        };
        // Exactly the plan, or less when a RESET MASTER replaced the segments meanwhile (its
        // new segment is current: never removed).
        debug_assert!(
            removed.len() <= plan.count,
            "a purge removed more than its plan"
        );
        debug_assert!(removed.iter().all(|s| retention.check(s).is_ok()));
        drop(pins);
        Ok(PurgeOutcome {
            removed,
            stopped_at,
        })
    }

    /// `PURGE BINARY LOGS TO 'target'` under the retention rules
    /// ([`retention::plan_purge_to`], reader pins included): removes every segment before
    /// `target` up to the first a reader still needs (named in the outcome), or nothing and a
    /// [`PurgeError`] naming the unknown target or the segment recovery still needs.
    pub fn purge_to_checked(
        &self,
        target: &str,
        retention: &Retention,
    ) -> Result<PurgeOutcome, PurgeError> {
        self.purge_planned(retention, |segs, r| {
            retention::plan_purge_to(segs, target, r)
        })
    }

    /// `PURGE BINARY LOGS BEFORE` under the retention rules
    /// ([`retention::plan_purge_while`], reader pins included): removes the oldest segments
    /// while `wanted` says so and the rules allow.
    pub fn purge_while_checked(
        &self,
        retention: &Retention,
        wanted: impl FnMut(&SegmentInfo) -> bool,
    ) -> Result<PurgeOutcome, PurgeError> {
        self.purge_planned(retention, |segs, r| {
            Ok(retention::plan_purge_while(segs, r, wanted))
        })
    }

    /// Automatic expiry at time `now` under the retention rules ([`retention::plan_expiry`],
    /// reader pins included).
    pub fn expire_checked(
        &self,
        retention: &Retention,
        limits: &ExpiryLimits,
        now: SystemTime,
    ) -> Result<PurgeOutcome, PurgeError> {
        if limits.is_off() {
            return Ok(PurgeOutcome::default());
        }
        self.purge_planned(retention, |segs, r| {
            Ok(retention::plan_expiry(segs, r, limits, now))
        })
    }

    /// File mode: the classic binlog files, oldest first (`SHOW BINARY LOGS`); None in
    /// engine mode (the segments are the binlog: [`Log::segments`]).
    pub fn classic_files(&self) -> Option<Vec<ClassicFileInfo>> {
        self.inner.file.as_ref().map(FileMode::files)
    }

    /// Why the log stopped taking writes, if it did.
    pub fn failed(&self) -> Option<String> {
        lock(&self.inner.progress).failed().map(str::to_string)
    }

    /// The Format_description event every segment header carries.
    pub fn format_description(&self) -> &[u8] {
        &self.inner.fde
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        self.stop_threads();
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = lock(&self.inner.progress);
        f.debug_struct("Log")
            .field("dir", &self.inner.opts.dir)
            .field("end_lsn", &p.end())
            .field("written_lsn", &p.written())
            .field("durable_lsn", &p.durable())
            .field("failed", &p.failed())
            .finish()
    }
}
