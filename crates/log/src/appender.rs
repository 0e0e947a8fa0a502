//! The appender: frames a commit group's records into the current segment, assigning GTIDs and
//! the commit id, writes them with one write, rotates segments and writes GTID-state records.
//!
//! `Writer` is guarded by `Inner::writer`; only a group leader or the flusher holds it.
//! Invariants:
//! - `written <= lsn`; `pending`, with the streamed event bytes of `streams` in place between
//!   its bytes, holds exactly the framed bytes of `written..lsn`, all in the current segment
//!   at file offset `header_len + (written - seg_start_lsn)`. A record whose events are
//!   streamed (`PendingRecord::streamed`, a spilled binlog cache) is framed like any other,
//!   its CRC computed while reading its source; `write_pending` reads the source again in
//!   chunks as it writes, so the record is never built in memory (`streamed.rs`);
//! - GTIDs are assigned in record order from `state`, which is updated record by record, so
//!   a segment header written at rotation carries the state at its start LSN;
//! - a record never spans segments: if it does not fit, the current segment is written,
//!   synced and closed first. A record larger than an empty segment gets a segment of its
//!   own, made as large as the record (`seg_size`; its header records the size, as every
//!   segment's does), created before anything of its group is touched. Why one large
//!   segment rather than records spanning segments: a frame stays contiguous in one file, so
//!   every reader of segments (recovery and its torn-tail judgement, the log readers and the
//!   dump stream, retention, `onelog check`, backup) handles it unchanged; they all take a
//!   segment's extent from its file and header, not from `segment_size`. Its file offsets
//!   are binlog positions (`end_log_pos` is 32 bits), so the log takes records up to
//!   ~4 GiB (`max_frame`); the engine refuses larger transactions earlier (1197 past
//!   `max_binlog_cache_size`);
//! - before a group that may need a rotation touches anything, the next segment must be
//!   prepared: if preparing failed (ENOSPC) the whole group is refused with nothing written
//!   and the log stays usable (a later group retries the preparation);
//! - any write/sync error while appending puts the log in the failed state;
//! - at most [`MAX_UNSYNCED`] bytes of the current segment are ever written but not yet
//!   synced: `write_pending` syncs first (and splits a larger buffer into chunks with a sync
//!   between them) when a write would exceed it. Recovery relies on this to bound its tail
//!   scan (`recovery.rs`): after a crash, bytes that differ from what a clean shutdown would
//!   leave can only lie in the extent of the unsynced writes. At level 1 a normal group is far
//!   below the bound, so this adds no fsync there.
//! - SyncMarks (format version 2 segments only, `sync_marks`): when a group is framed and the
//!   durable LSN has moved past `marked` (the synced LSN the last SyncMark named, or the end
//!   recovery started from), a SyncMark naming the durable LSN is framed in front of the
//!   group's records. Its `synced_lsn` is read from `Progress::durable`, which only moves
//!   after a successful fsync, so a mark never vouches for a byte that was not durable; it
//!   is never synced on its own (it needs no sync: a mark lost in a crash only vouches for
//!   less). Recovery uses them to tell damage in synced bytes from a torn tail.
//! - Idle SyncMark (`write_idle_mark`, `LogOptions::idle_sync_mark`): when the log is idle at
//!   a synced end (`pending` empty, `written == lsn == durable > marked`), the flusher writes
//!   the exact bytes the next group's `frame_sync_mark` will frame at `lsn` (same `at_lsn`,
//!   same `synced_lsn`, since nothing can be written or synced in between) just past the end,
//!   WITHOUT advancing `lsn`, `written` or `marked`, and syncs them. So the layout, the LSNs
//!   and every position are those of a log without idle marks; the next group rewrites the
//!   same 25 bytes (a torn rewrite leaves them as they were). `idle_marked` remembers the
//!   end already vouched for, so an idle log is marked once.
//! - file mode: `pending_mark` is the CommitMark of the last group the leader committed, not
//!   yet framed; it is framed before anything else framed after it (the next group, a flush,
//!   a rotation's seal), so a CommitMark always follows the records it covers. Every frame
//!   leaves `mark_reserve` bytes free in its segment, so the mark always fits in the segment
//!   of the records it covers; a sealed segment therefore ends with a mark covering it. A
//!   group that does not fit in the rest of the current segment rotates BEFORE its first
//!   record (recovery counts sealed segments as committed, and a group is committed only
//!   once it is in the classic binlog, after the prepare); only a group larger than an empty
//!   segment can still span segments (then a crash between its prepare and its binlog write
//!   leaves its records in the sealed segment committed, the binlog lacking them:
//!   `binlog_behind`).

use std::path::PathBuf;
use std::sync::Arc;

use onelog_binlog::event::gtid::{patch, GTID_EVENT_LEN};
use onelog_binlog::{Gtid, GtidState};

use crate::error::{is_enospc, LogError};
use crate::frame;
use crate::fs::File;
use crate::locks::lock;
use crate::position;
use crate::seglist::SegmentMeta;
use crate::segment::{self, SegmentHeader, PREPARED_NAME};
use crate::shared::PhaseCounters;
use crate::shared::Shared;
use crate::streamed::{EventSource, CHUNK};
use crate::trim::Trim;
use crate::{CommitReceipt, CommittedRecord, GtidAssign, Lsn, PendingRecord, RecordKind};

/// At level 0, buffered bytes past this are written without waiting for the flusher.
pub const LEVEL0_WRITE_THRESHOLD: usize = 1 << 20;

/// The most bytes of the current segment that are written but possibly not durable (the
/// extent a crash can leave torn or stale); see the module invariants and `recovery.rs`.
pub const MAX_UNSYNCED: u64 = 8 << 20;

/// Room a segment made for one large record keeps after it (a SyncMark and a GtidState record
/// framed with it).
const OVERSIZE_SLACK: u64 = 64 << 10;

pub(crate) struct Writer {
    seg_number: u64,
    seg_path: PathBuf,
    seg_file: Arc<dyn File>,
    seg_start_lsn: Lsn,
    header_len: u64,
    /// Size of the current segment's file: `segment_size`, or more for a segment made for
    /// one record larger than an empty segment (module invariants).
    seg_size: u64,
    /// End of the framed records (pending included).
    lsn: Lsn,
    /// End of the records written to the file.
    written: Lsn,
    pending: Vec<u8>,
    /// Streamed event bytes framed between the bytes of `pending` (`streamed.rs`): each is
    /// written in place at its offset into `pending`, before the byte there. Offsets in
    /// increasing order; empty unless a record's events were streamed.
    streams: Vec<(usize, Box<dyn EventSource>)>,
    state: GtidState,
    next_state_lsn: Lsn,
    /// File mode: the CommitMark (its committed LSN) to frame before anything else.
    pending_mark: Option<Lsn>,
    /// Bytes every frame leaves free after it in its segment (`COMMIT_MARK_LEN` in file
    /// mode, 0 in engine mode).
    mark_reserve: u64,
    /// The synced LSN the last SyncMark named (or the end recovery started from).
    marked: Lsn,
    /// False while appending to a version-1 segment (no SyncMarks there).
    sync_marks: bool,
    /// The log end an idle SyncMark was written (and synced) at, if any (module invariants).
    idle_marked: Option<Lsn>,
    /// A segment file prepared for a record larger than an empty segment, and its size.
    oversize: Option<(Arc<dyn File>, u64)>,
}

impl Writer {
    /// The writer recovery leaves: appending to the segment `seg` (open as `file`, of format
    /// version 2 unless `!sync_marks`) at `lsn`, where the GTID state is `state`.
    pub fn recovered(
        seg: &SegmentMeta,
        file: Arc<dyn File>,
        lsn: Lsn,
        state: GtidState,
        state_interval: u64,
        file_mode: bool,
        sync_marks: bool,
    ) -> Self {
        Writer {
            seg_number: seg.number,
            seg_path: seg.path.clone(),
            seg_file: file,
            seg_start_lsn: seg.start_lsn,
            header_len: seg.header_len,
            seg_size: 0,
            lsn,
            written: lsn,
            pending: Vec::with_capacity(64 << 10),
            streams: Vec::new(),
            state,
            next_state_lsn: lsn + state_interval.max(1),
            pending_mark: None,
            mark_reserve: if file_mode {
                frame::COMMIT_MARK_LEN as u64
            } else {
                0
            },
            marked: lsn,
            sync_marks,
            idle_marked: None,
            oversize: None,
        }
    }

    /// The recovered writer's segment is `size` bytes long (its file's length).
    pub fn in_segment_of(mut self, size: u64) -> Self {
        self.seg_size = size;
        self
    }

    /// End of the framed records (pending included).
    pub fn lsn(&self) -> Lsn {
        self.lsn
    }

    /// End of the records written to the file.
    pub fn written(&self) -> Lsn {
        self.written
    }

    /// The GTID state at `lsn`.
    pub fn state(&self) -> &GtidState {
        &self.state
    }

    /// The current segment's file and path.
    pub fn segment_file(&self) -> (&Arc<dyn File>, &PathBuf) {
        (&self.seg_file, &self.seg_path)
    }

    /// File mode: the group ending at `end` is committed; its CommitMark is framed before
    /// anything else the writer frames next.
    pub fn queue_commit_mark(&mut self, end: Lsn) {
        debug_assert!(
            end <= self.lsn,
            "CommitMark for {end} beyond the end {}",
            self.lsn
        );
        self.pending_mark = Some(end);
    }
}

/// The frame sizes of a group ([`Writer::frame_limits`]): the header length of a segment
/// started now, the largest frame a `segment_size` segment holds, the largest the log takes.
struct FrameLimits {
    header_len: u64,
    segment_frame: u64,
    max_frame: u64,
}

/// Where [`Writer::write_pending`] is: the file offset of the next byte, the bytes written
/// but not synced before it, and the bytes left to write.
struct WriteCursor {
    at: u64,
    unsynced: u64,
    left: u64,
}

/// What the leader gets back for one record of its group.
pub(crate) type RecordOutcome = Result<CommitReceipt, LogError>;

/// Checks every record of a group: Ok (a placeholder receipt) for those the log takes,
/// `InvalidRecord` for the others. Returns the outcomes and the framed bytes of the Ok ones.
fn check_group(
    batch: &[PendingRecord],
    max_frame: u64,
    commit_id: u64,
) -> (Vec<RecordOutcome>, u64) {
    let mut outcomes: Vec<RecordOutcome> = Vec::with_capacity(batch.len());
    let mut total = 0u64;
    for rec in batch {
        match check_record(rec, max_frame) {
            Err(why) => outcomes.push(Err(LogError::InvalidRecord(why))),
            Ok(len) => {
                total += len;
                outcomes.push(Ok(CommitReceipt {
                    gtid: Gtid::new(0, 0, 0),
                    lsn: 0,
                    end_lsn: 0,
                    commit_id,
                }));
            }
        }
    }
    (outcomes, total)
}

/// The framed length of a record the log takes, or why it refuses it.
fn check_record(rec: &PendingRecord, max_frame: u64) -> Result<u64, String> {
    let len = frame::event_record_len(rec.events_len() as usize, rec.aux.len()) as u64;
    if matches!(
        rec.kind,
        RecordKind::GtidState | RecordKind::CommitMark | RecordKind::SyncMark
    ) {
        Err(format!(
            "{:?} records are written by the log itself",
            rec.kind
        ))
    } else if rec.events.len() < GTID_EVENT_LEN {
        Err(format!(
            "event group of {} bytes cannot start with a GTID event",
            rec.events.len()
        ))
    } else if len > max_frame {
        Err(format!(
            "record of {len} bytes is larger than a segment can hold ({max_frame} bytes)"
        ))
    } else {
        Ok(len)
    }
}

/// Clones an error for each committer of a failed group.
pub(crate) fn group_error(e: &LogError) -> LogError {
    match e {
        LogError::StorageFull { path, needed } => LogError::StorageFull {
            path: path.clone(),
            needed: *needed,
        },
        LogError::InvalidRecord(s) => LogError::InvalidRecord(s.clone()),
        LogError::Closed => LogError::Closed,
        LogError::Failed(s) => LogError::Failed(s.clone()),
        other => LogError::Failed(other.to_string()),
    }
}

impl Writer {
    fn file_offset(&self, lsn: Lsn) -> u64 {
        position::offset_in_segment(self.header_len, self.seg_start_lsn, lsn)
    }

    fn fits(&self, frame_len: usize) -> bool {
        self.file_offset(self.lsn) + frame_len as u64 + self.mark_reserve <= self.seg_size
    }

    /// File mode: frames the pending CommitMark (see the module invariants).
    pub fn frame_commit_mark(&mut self, inner: &Shared) {
        let Some(committed) = self.pending_mark.take() else {
            return;
        };
        if self.file_offset(self.lsn) + frame::COMMIT_MARK_LEN as u64 > self.seg_size {
            // Unreachable (`mark_reserve`); and harmless: recovery counts every record of a
            // sealed segment as committed.
            return;
        }
        frame::encode_commit_mark(&mut self.pending, committed);
        self.lsn += frame::COMMIT_MARK_LEN as u64;
        lock(&inner.progress).set_end(self.lsn);
    }

    /// Frames a SyncMark naming the durable LSN when it moved past the last one named (see
    /// the module invariants); nothing when it does not fit before the mark reserve.
    fn frame_sync_mark(&mut self, inner: &Shared) {
        if !self.sync_marks {
            return;
        }
        let durable = lock(&inner.progress).durable();
        if durable <= self.marked || !self.fits(frame::SYNC_MARK_LEN) {
            return;
        }
        debug_assert!(durable <= self.written, "durable bytes were written");
        debug_assert!(
            self.idle_marked != Some(self.lsn) || (self.pending.is_empty() && durable == self.lsn),
            "a mark framed where an idle mark was written repeats its bytes"
        );
        frame::encode_sync_mark(&mut self.pending, self.lsn, durable);
        self.lsn += frame::SYNC_MARK_LEN as u64;
        self.marked = durable;
    }

    /// Writes the SyncMark the next group will frame at the log's end, without taking LSN
    /// space (module invariants); true when written (the caller syncs the segment).
    pub fn write_idle_mark(&mut self, inner: &Shared) -> Result<bool, LogError> {
        let durable = lock(&inner.progress).durable();
        let idle = self.sync_marks
            && self.pending.is_empty()
            && self.written == self.lsn
            && durable == self.lsn
            && durable > self.marked
            && self.idle_marked != Some(self.lsn)
            && self.fits(frame::SYNC_MARK_LEN);
        if !idle {
            return Ok(false);
        }
        let mut mark = Vec::with_capacity(frame::SYNC_MARK_LEN);
        frame::encode_sync_mark(&mut mark, self.lsn, durable);
        let at = self.file_offset(self.lsn);
        self.seg_file.write_all_at(&mark, at).map_err(|e| {
            if is_enospc(&e) {
                LogError::StorageFull {
                    path: self.seg_path.clone(),
                    needed: mark.len() as u64,
                }
            } else {
                LogError::io(&self.seg_path, at, "write idle SyncMark", e)
            }
        })?;
        self.idle_marked = Some(self.lsn);
        Ok(true)
    }

    /// The frame sizes a group is held to now (one encoding of the GTID state per group).
    fn frame_limits(&self, inner: &Shared) -> FrameLimits {
        let mut st = Vec::new();
        self.state.encode(&mut st);
        // Room for the state to grow.
        let header_len = segment::header_len_for(st.len() + 4096, inner.fde.len());
        let segment_frame = inner
            .opts
            .segment_size
            .saturating_sub(header_len)
            .saturating_sub(self.mark_reserve);
        let max_frame = (u64::from(u32::MAX) - OVERSIZE_SLACK)
            .saturating_sub(header_len)
            .saturating_sub(self.mark_reserve)
            .max(segment_frame);
        FrameLimits {
            header_len,
            segment_frame,
            max_frame,
        }
    }

    /// Records a failure of the appender: the log enters the failed state. Returns the error
    /// the group's committers get (StorageFull stays StorageFull).
    fn failure(&self, inner: &Shared, e: LogError) -> LogError {
        let msg = inner.fail(format!("{e}; the log refuses further writes until restart"));
        match e {
            LogError::StorageFull { .. } => e,
            _ => LogError::Failed(msg),
        }
    }

    /// Frames `batch` (assigning GTIDs and the commit id), writes it when `write_now`, and
    /// returns per-record outcomes plus the records to hand to the sink. On an appender
    /// failure every record of the group gets the error.
    pub fn append_group(
        &mut self,
        inner: &Shared,
        batch: &mut [PendingRecord],
        write_now: bool,
    ) -> (Vec<RecordOutcome>, Vec<CommittedRecord>, Lsn) {
        match self.try_append_group(inner, batch, write_now) {
            Ok((outcomes, committed)) => (outcomes, committed, self.lsn),
            Err(e) => (
                batch.iter().map(|_| Err(group_error(&e))).collect(),
                Vec::new(),
                self.lsn,
            ),
        }
    }

    /// [`Self::append_group`]'s steps; Err is the error every record of the group gets.
    fn try_append_group(
        &mut self,
        inner: &Shared,
        batch: &mut [PendingRecord],
        write_now: bool,
    ) -> Result<(Vec<RecordOutcome>, Vec<CommittedRecord>), LogError> {
        if let Some(e) = inner.refusal() {
            return Err(e);
        }
        let began = std::time::Instant::now();
        let commit_id = self.lsn + 1;
        let limits = self.frame_limits(inner);
        let max_frame = limits.max_frame;
        let (mut outcomes, total) = check_group(batch, max_frame, commit_id);
        self.make_room(inner, total)?;
        self.frame_commit_mark(inner);
        if total > 0 {
            self.frame_sync_mark(inner);
        }
        self.prepare_oversize(inner, &limits, &outcomes, batch)?;
        self.keep_group_in_one_segment(inner, total, limits.segment_frame)?;
        let committed = self.frame_records(inner, batch, &mut outcomes, commit_id)?;
        if !committed.is_empty() && self.lsn >= self.next_state_lsn {
            self.frame_state(inner);
        }
        {
            let mut p = lock(&inner.progress);
            p.set_end(self.lsn);
        }
        PhaseCounters::add(&inner.stats.phases.encode, began);
        if write_now || self.pending_len() >= LEVEL0_WRITE_THRESHOLD as u64 {
            let began = std::time::Instant::now();
            self.write_pending(inner)
                .map_err(|e| self.failure(inner, e))?;
            PhaseCounters::add(&inner.stats.phases.write, began);
        }
        self.debug_check();
        Ok((outcomes, committed))
    }

    /// The module invariants on the buffered bytes (debug builds): `written <= lsn` and
    /// `pending` holds exactly the bytes of `written..lsn`.
    fn debug_check(&self) {
        debug_assert!(
            self.written <= self.lsn,
            "written {} past lsn {}",
            self.written,
            self.lsn
        );
        debug_assert!(self.streams.windows(2).all(|w| w[0].0 <= w[1].0));
        debug_assert!(self
            .streams
            .last()
            .is_none_or(|s| s.0 <= self.pending.len()));
        debug_assert_eq!(
            self.pending_len(),
            self.lsn - self.written,
            "pending does not hold exactly written..lsn"
        );
    }

    /// Makes sure a rotation a group of `total` bytes may need can happen, before anything
    /// of the group is touched.
    fn make_room(&self, inner: &Shared, total: u64) -> Result<(), LogError> {
        if total == 0 || self.file_offset(self.lsn) + total + 4096 <= self.seg_size {
            return Ok(());
        }
        inner.preparer.ensure_ready().map_err(|e| match e {
            LogError::StorageFull { .. } | LogError::Closed => e,
            other => LogError::Failed(format!("could not prepare the next segment: {other}")),
        })
    }

    /// Creates the segment a record larger than an empty segment goes to (the largest of the
    /// group), before anything of the group is touched: a full disk refuses the group and
    /// leaves the log usable, as `make_room` does for the prepared segment.
    fn prepare_oversize(
        &mut self,
        inner: &Shared,
        limits: &FrameLimits,
        outcomes: &[RecordOutcome],
        batch: &[PendingRecord],
    ) -> Result<(), LogError> {
        let biggest = batch
            .iter()
            .zip(outcomes)
            .filter(|(_, o)| o.is_ok())
            .map(|(r, _)| frame::event_record_len(r.events_len() as usize, r.aux.len()) as u64)
            .max()
            .unwrap_or(0);
        if biggest <= limits.segment_frame {
            return Ok(());
        }
        let size = self.oversize_for(limits, biggest);
        if self.oversize.as_ref().is_some_and(|(_, s)| *s >= size) {
            return Ok(());
        }
        self.oversize = None;
        let path = inner.opts.dir.join(segment::OVERSIZE_NAME);
        let file = segment::create_zeroed(&*inner.fs, &path, size, &|| false)?;
        self.oversize = Some((file, size));
        Ok(())
    }

    /// The size of a segment made for a record of `len` framed bytes.
    fn oversize_for(&self, limits: &FrameLimits, len: u64) -> u64 {
        limits.header_len + len + self.mark_reserve + OVERSIZE_SLACK
    }

    /// File mode: a group must not span segments. Recovery counts every record of a sealed
    /// segment as committed, but a group is only committed once it is in the classic
    /// binlog, which happens after this prepare: records of this group sealed in the
    /// current segment by a rotation in the middle of it would be committed by a crash
    /// before the binlog write (the logs would diverge). So rotate first, the seal then
    /// ending with the mark of the previous group. Only a group larger than an empty
    /// segment still spans segments (see the module invariants).
    fn keep_group_in_one_segment(
        &mut self,
        inner: &Shared,
        total: u64,
        max_frame: u64,
    ) -> Result<(), LogError> {
        if self.mark_reserve > 0
            && total > 0
            && self.lsn > self.seg_start_lsn
            && !self.fits(total as usize)
            && total <= max_frame
        {
            self.rotate(inner).map_err(|e| self.failure(inner, e))?;
        }
        Ok(())
    }

    /// Frames the records of `batch` whose outcome is still Ok (assigning GTIDs, patching
    /// the GTID events, rotating when a record does not fit) and fills in their receipts.
    fn frame_records(
        &mut self,
        inner: &Shared,
        batch: &mut [PendingRecord],
        outcomes: &mut [RecordOutcome],
        commit_id: u64,
    ) -> Result<Vec<CommittedRecord>, LogError> {
        let mut committed = Vec::with_capacity(batch.len());
        for (rec, out) in batch.iter_mut().zip(outcomes.iter_mut()) {
            let Ok(receipt) = out else { continue };
            let gtid = match rec.gtid {
                GtidAssign::Next {
                    domain_id,
                    server_id,
                } => Gtid::new(domain_id, server_id, self.state.next_seq(domain_id)),
                GtidAssign::Fixed(g) => {
                    if inner.gtid_strict.load(std::sync::atomic::Ordering::Relaxed)
                        && self.state.next_seq(g.domain_id) > g.seq_no
                    {
                        if let Some(last) = self.state.last(g.domain_id) {
                            *out = Err(LogError::GtidOutOfOrder { gtid: g, last });
                            continue;
                        }
                    }
                    g
                }
            };
            if let Err(e) = patch(&mut rec.events, gtid, commit_id) {
                *out = Err(LogError::InvalidRecord(format!("first event: {e}")));
                continue;
            }
            let len = frame::event_record_len(rec.events_len() as usize, rec.aux.len());
            if !self.fits(len) {
                self.rotate_for(inner, len as u64)
                    .map_err(|e| self.failure(inner, e))?;
                debug_assert!(
                    self.fits(len),
                    "a record of {len} bytes would span segments"
                );
            }
            let lsn = self.lsn;
            match rec.streamed.take() {
                None => {
                    frame::encode_event_record(&mut self.pending, rec.kind, &rec.events, &rec.aux)
                }
                Some(s) => {
                    let before = self.pending.len();
                    match frame::encode_streamed_record(&mut self.pending, rec, &s) {
                        Ok(at) => self.streams.push((at, s.source)),
                        Err(e) => {
                            // Nothing of the record is framed: only it is refused.
                            self.pending.truncate(before);
                            let e = LogError::io(&self.seg_path, 0, "read streamed events", e);
                            *out = Err(e);
                            continue;
                        }
                    }
                }
            }
            self.lsn += len as u64;
            self.state.record(gtid);
            *receipt = CommitReceipt {
                gtid,
                lsn,
                end_lsn: self.lsn,
                commit_id,
            };
            committed.push(CommittedRecord {
                receipt: *receipt,
                kind: rec.kind,
                payload: rec.payload.take(),
            });
        }
        Ok(committed)
    }

    /// Frames a GtidState record (every `state_interval` bytes) when it fits the segment.
    fn frame_state(&mut self, inner: &Shared) {
        let mut st = Vec::new();
        frame::encode_state_record(&mut st, &self.state);
        if self.fits(st.len()) {
            self.pending.extend_from_slice(&st);
            self.lsn += st.len() as u64;
        }
        self.next_state_lsn = self.lsn + inner.opts.state_interval.max(1);
    }

    /// Bytes framed but not written: `pending` and the streamed sources between its bytes.
    fn pending_len(&self) -> u64 {
        self.pending.len() as u64 + self.streams.iter().map(|(_, s)| s.len()).sum::<u64>()
    }

    /// Writes the buffered records to the current segment with one write (several, with a
    /// sync before each, when that would leave more than [`MAX_UNSYNCED`] bytes unsynced;
    /// streamed event bytes are read and written [`CHUNK`] bytes at a time).
    pub fn write_pending(&mut self, inner: &Shared) -> Result<(), LogError> {
        if self.pending.is_empty() {
            debug_assert!(
                self.streams.is_empty(),
                "a streamed record without its frame"
            );
            return Ok(());
        }
        let off = self.file_offset(self.written);
        let fs = &*inner.fs;
        let crash = |name: &'static str| {
            fs.crash_point(name)
                .map_err(|e| LogError::io(&self.seg_path, off, name, e))
        };
        crash("commit.before_write")?;
        let total = self.pending_len();
        // A big group (written in steps, with syncs between them) has the disk to itself:
        // the next segment's zero-fill waits (`prealloc.rs`).
        let _hold = (total > MAX_UNSYNCED).then(|| inner.preparer.hold());
        // Bytes before `self.written` that may not be durable (an over-estimate when a
        // previous call synced in the middle of a record: that only syncs earlier).
        let durable = lock(&inner.progress).durable();
        let mut cursor = WriteCursor {
            at: off,
            unsynced: self.written.saturating_sub(durable),
            left: total,
        };
        let mut from = 0usize;
        let mut buf = Vec::new();
        for (pos, src) in &self.streams {
            self.write_bounded(inner, &self.pending[from..*pos], &mut cursor)?;
            let len = src.len();
            let mut p = 0u64;
            while p < len {
                let n = (len - p).min(CHUNK as u64) as usize;
                buf.resize(n, 0);
                src.read_at(p, &mut buf[..n]).map_err(|e| {
                    LogError::io(&self.seg_path, cursor.at, "read streamed events", e)
                })?;
                self.write_bounded(inner, &buf[..n], &mut cursor)?;
                p += n as u64;
            }
            from = *pos;
        }
        self.write_bounded(inner, &self.pending[from..], &mut cursor)?;
        debug_assert_eq!(cursor.left, 0);
        crash("commit.after_write")?;
        inner
            .stats
            .bytes_written
            .fetch_add(total, std::sync::atomic::Ordering::SeqCst);
        self.pending.clear();
        self.streams.clear();
        self.written = self.lsn;
        {
            let mut p = lock(&inner.progress);
            // Records framed by a group still being framed (a rotation seals in the middle of
            // it) are written before the group publishes its end: they are part of the end.
            if p.end() < self.lsn {
                p.set_end(self.lsn);
            }
            p.set_written(self.written);
        }
        inner.progress_cv.notify_all();
        self.debug_check();
        Ok(())
    }

    /// Writes `bytes` at the cursor, syncing first whenever [`MAX_UNSYNCED`] bytes are
    /// written but not synced (the module invariants).
    fn write_bounded(
        &self,
        inner: &Shared,
        bytes: &[u8],
        c: &mut WriteCursor,
    ) -> Result<(), LogError> {
        let mut done = 0usize;
        while done < bytes.len() {
            if c.unsynced >= MAX_UNSYNCED {
                self.sync_written(inner)?;
                c.unsynced = 0;
            }
            let n = ((MAX_UNSYNCED - c.unsynced) as usize).min(bytes.len() - done);
            let at = c.at;
            self.seg_file
                .write_all_at(&bytes[done..done + n], at)
                .map_err(|e| {
                    if is_enospc(&e) {
                        LogError::StorageFull {
                            path: self.seg_path.clone(),
                            needed: c.left,
                        }
                    } else {
                        LogError::io(&self.seg_path, at, "write records", e)
                    }
                })?;
            done += n;
            c.at += n as u64;
            c.left -= n as u64;
            c.unsynced += n as u64;
        }
        Ok(())
    }

    /// Syncs the current segment from under the writer lock (the `MAX_UNSYNCED` bound): what
    /// is written up to `self.written` becomes durable. A failure fails the log at once.
    fn sync_written(&self, inner: &Shared) -> Result<(), LogError> {
        let (path, offset) = (&self.seg_path, self.file_offset(self.written));
        inner.fdatasync(&*self.seg_file, |e| {
            let e = LogError::io(path, offset, "fdatasync segment (unsynced-bytes bound)", e);
            format!("{e}; the log refuses further writes and will not retry the sync")
        })?;
        {
            let mut p = lock(&inner.progress);
            p.advance_durable(self.written);
        }
        inner.progress_cv.notify_all();
        Ok(())
    }

    /// `FLUSH BINARY LOGS`: closes the current segment (even an empty one) and continues in a
    /// new one. A failure to prepare the next segment leaves the log as it was; a failure
    /// while rotating fails the log like any appender failure.
    pub fn rotate_now(&mut self, inner: &Shared) -> Result<(), LogError> {
        if let Some(e) = inner.refusal() {
            return Err(e);
        }
        inner.preparer.ensure_ready()?;
        self.rotate(inner).map_err(|e| self.failure(inner, e))
    }

    /// `RESET MASTER`: writes and syncs what the current segment holds, then replaces every
    /// segment with a new `binlog-000001.olog` starting at the current end LSN with an empty
    /// GTID state (see `segment::install_reset` for the crash-safe order). A failure to
    /// prepare the new segment leaves the log as it was; a later failure fails the log.
    pub fn reset_now(&mut self, inner: &Shared) -> Result<(), LogError> {
        if let Some(e) = inner.refusal() {
            return Err(e);
        }
        inner.preparer.ensure_ready()?;
        self.reset(inner).map_err(|e| self.failure(inner, e))
    }

    /// Writes everything framed (the pending CommitMark included) and syncs it; a failure
    /// fails the log.
    pub fn seal_now(&mut self, inner: &Shared) -> Result<(), LogError> {
        if let Some(e) = inner.refusal() {
            return Err(e);
        }
        self.seal(inner).map_err(|e| self.failure(inner, e))
    }

    fn reset(&mut self, inner: &Shared) -> Result<(), LogError> {
        self.seal(inner)?;
        // Already reset and nothing written since: the only segment is an empty number 1 with
        // an empty state (replacing it would only confuse a reader waiting in it).
        let fresh = inner.segments_read().len() == 1
            && self.seg_number == 1
            && self.seg_start_lsn == self.lsn
            && self.state == GtidState::new();
        if fresh {
            return Ok(());
        }
        let file = inner.preparer.take()?;
        let state = GtidState::new();
        let header =
            SegmentHeader::encode(1, self.lsn, &state, &inner.fde, inner.opts.segment_size);
        let dir = &inner.opts.dir;
        let path =
            segment::install_reset(&*inner.fs, dir, &dir.join(PREPARED_NAME), &*file, &header)?;
        inner.preparer.request();
        {
            inner.segments.reset_to(SegmentMeta {
                number: 1,
                path: path.clone(),
                start_lsn: self.lsn,
                end_lsn: None,
                header_len: header.len() as u64,
                state: Arc::new(state.clone()),
                closed_at: None,
            });
        }
        {
            let mut p = lock(&inner.progress);
            p.switch_segment(file.clone(), path.clone());
        }
        self.seg_number = 1;
        self.seg_path = path;
        self.seg_file = file;
        self.seg_start_lsn = self.lsn;
        self.header_len = header.len() as u64;
        self.seg_size = inner.opts.segment_size;
        self.sync_marks = true;
        // Sealed: everything before the new segment is durable, and a mark only vouches for
        // bytes of its own segment (recovery scans the last one).
        self.marked = self.lsn;
        self.state = state;
        self.next_state_lsn = self.lsn + inner.opts.state_interval.max(1);
        Ok(())
    }

    /// Writes what is pending and syncs the current segment: everything framed is durable.
    fn seal(&mut self, inner: &Shared) -> Result<(), LogError> {
        self.frame_commit_mark(inner);
        self.write_pending(inner)?;
        if self.idle_marked.take() == Some(self.lsn) {
            // The idle mark past the end would lie beyond a sealed segment's last record;
            // a sealed segment is fully synced and needs no mark (readers stop at its end).
            let at = self.file_offset(self.lsn);
            self.seg_file
                .write_all_at(&[0u8; frame::SYNC_MARK_LEN], at)
                .map_err(|e| LogError::io(&self.seg_path, at, "clear idle SyncMark", e))?;
        }
        // A pipelined group's fsync may have failed meanwhile: `fdatasync` never syncs after that.
        let path = &self.seg_path;
        inner.fdatasync(&*self.seg_file, |e| {
            let e = LogError::io(path, 0, "fdatasync segment before rotation", e);
            format!("{e}; the log refuses further writes and will not retry the sync")
        })?;
        {
            let mut p = lock(&inner.progress);
            p.advance_durable(self.lsn);
        }
        inner.progress_cv.notify_all();
        Ok(())
    }

    /// Rotates so that a record of `len` framed bytes fits: into the prepared segment, or,
    /// when even an empty one is too small, into a segment made as large as the record
    /// (module invariants).
    fn rotate_for(&mut self, inner: &Shared, len: u64) -> Result<(), LogError> {
        let limits = self.frame_limits(inner);
        if len <= limits.segment_frame {
            return self.rotate(inner);
        }
        let needed = self.oversize_for(&limits, len);
        self.seal(inner)?;
        let path = inner.opts.dir.join(segment::OVERSIZE_NAME);
        let (file, size) = match self.oversize.take() {
            Some((f, size)) if size >= needed => (f, size),
            // Not prepared (a second large record of the group): made now; a failure here
            // fails the log like any rotation failure.
            _ => (
                segment::create_zeroed(&*inner.fs, &path, needed, &|| false)?,
                needed,
            ),
        };
        self.install_next(inner, file, &path, size)
    }

    /// Closes the current segment (written and synced) and continues in a new one.
    fn rotate(&mut self, inner: &Shared) -> Result<(), LogError> {
        self.seal(inner)?;
        let file = inner.preparer.take()?;
        let prepared = inner.opts.dir.join(PREPARED_NAME);
        self.install_next(inner, file, &prepared, inner.opts.segment_size)
    }

    /// Installs `file` (prepared at `prepared`, `size` bytes of zeros) as the next segment
    /// and continues in it; the current one is sealed.
    fn install_next(
        &mut self,
        inner: &Shared,
        file: Arc<dyn File>,
        prepared: &std::path::Path,
        size: u64,
    ) -> Result<(), LogError> {
        let number = self.seg_number + 1;
        let header = SegmentHeader::encode(number, self.lsn, &self.state, &inner.fde, size);
        let dir = &inner.opts.dir;
        let path = segment::install(&*inner.fs, dir, prepared, &*file, &header, number)?;
        if size == inner.opts.segment_size {
            inner.preparer.request();
        }
        {
            inner.segments.seal_and_push(SegmentMeta {
                number,
                path: path.clone(),
                start_lsn: self.lsn,
                end_lsn: None,
                header_len: header.len() as u64,
                state: Arc::new(self.state.clone()),
                closed_at: None,
            });
        }
        {
            let mut p = lock(&inner.progress);
            p.switch_segment(file.clone(), path.clone());
        }
        // Sealed: the zeros after its records are never written again (`trim.rs`).
        inner.untrimmed.push(Trim::new(
            self.seg_file.clone(),
            self.seg_path.clone(),
            self.seg_number,
            self.seg_start_lsn,
            self.file_offset(self.lsn),
        ));
        self.seg_number = number;
        self.seg_path = path;
        self.seg_file = file;
        self.seg_start_lsn = self.lsn;
        self.header_len = header.len() as u64;
        self.seg_size = size;
        self.sync_marks = true;
        // Sealed: everything before the new segment is durable, and a mark only vouches for
        // bytes of its own segment (recovery scans the last one).
        self.marked = self.lsn;
        Ok(())
    }
}
