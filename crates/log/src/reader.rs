//! Readers: stream records from an LSN or a GTID position, across segments, waiting for more.
//!
//! A reader yields records below the visible end: the durable LSN, or the written LSN with
//! `include_non_durable`. It reads segment files itself (any number of readers run alongside
//! commits without taking the writer lock), verifying every CRC: a bad record is `Corrupt`
//! naming the file and offset, never skipped. A segment ends at its end LSN (the next
//! segment's start LSN); a reader whose position is in a purged segment gets
//! `InvalidPosition`.
//!
//! CommitMark records (file mode's two-phase-commit bookkeeping) are never yielded; GtidState
//! records only with `include_state_records`.
//!
//! In file mode the visible end is also bounded by the binlog: a record is visible once its
//! group is in the classic binlog too (`Progress::binlog_written`), so a reader never yields a
//! prepared record that recovery could still roll back for lack of a binlog write.
//!
//! `ReadStart::Gtid(pos)`: the segment headers' GTID states only grow, so a binary search
//! finds the last segment whose header state `pos` contains (every record before it is in
//! `pos`); the reader starts there and, per domain of `pos`, skips records `pos` contains
//! until the first one it does not. A position whose needed records were purged, or that is
//! ahead of the log in a domain the log knows, is `GtidNotFound`.
//!
//! `ReadStart::Lsn(lsn)` is validated: it must lie in a present segment, not beyond the
//! written end, and (below it) start a frame whose CRC checks — a 2^-32 false positive is
//! accepted instead of scanning the whole segment.
//!
//! Invariants: records are yielded in LSN order, each ending at or below the visible end
//! read before it was framed (only durable records leave a reader without
//! `include_non_durable`); the position only moves forward (asserted in `next`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use onelog_binlog::{GtidPos, GtidState};

use crate::cursor::{SegmentCursor, Skim};
use crate::error::LogError;
use crate::frame;
use crate::inner::Inner;
use crate::locks::lock;
use crate::seglist::SegmentMeta;
use crate::{Lsn, ReadStart, ReaderOptions, Record, RecordKind};

/// A cursor over the log. See the module docs.
pub struct LogReader {
    inner: Arc<Inner>,
    opts: ReaderOptions,
    lsn: Lsn,
    cur: Option<(SegmentCursor, Option<Lsn>)>,
    /// Domains of a GTID start position still being skipped.
    filter: Option<GtidPos>,
}

fn purged(lsn: Lsn, what: String) -> LogError {
    LogError::InvalidPosition {
        lsn,
        reason: format!("{what} was purged"),
    }
}

/// The error for bytes at `lsn` (file offset `off` of `path`) that are not a valid record
/// below the visible end `limit`.
fn bad_record(
    path: &std::path::Path,
    off: u64,
    lsn: Lsn,
    limit: Lsn,
    e: frame::FrameError,
) -> LogError {
    LogError::corrupt(
        path,
        off,
        format!("record at LSN {lsn} (visible end {limit}): {e}"),
    )
}

/// Whether a reader with `opts` steps over a record of `kind` (module docs).
fn passes_over(opts: &ReaderOptions, kind: RecordKind) -> bool {
    matches!(kind, RecordKind::CommitMark | RecordKind::SyncMark)
        || (kind == RecordKind::GtidState && !opts.include_state_records)
}

impl LogReader {
    pub(crate) fn new(
        inner: Arc<Inner>,
        start: ReadStart,
        opts: ReaderOptions,
    ) -> Result<Self, LogError> {
        let mut r = LogReader {
            inner,
            opts,
            lsn: 0,
            cur: None,
            filter: None,
        };
        match start {
            ReadStart::Lsn(lsn) => {
                let written = lock(&r.inner.progress).written();
                if lsn > written {
                    return Err(LogError::InvalidPosition {
                        lsn,
                        reason: format!("beyond the end of the log (written up to {written})"),
                    });
                }
                r.lsn = lsn;
                r.open_segment_for(lsn)?;
                if lsn < written {
                    let cur = &mut r.cur.as_mut().ok_or(LogError::Closed)?.0;
                    let path = cur.path.clone();
                    match cur.frame_at(lsn, written)? {
                        Ok(_) => {}
                        Err(e) => {
                            return Err(LogError::InvalidPosition {
                                lsn,
                                reason: format!("not a record boundary in {}: {e}", path.display()),
                            })
                        }
                    }
                }
            }
            ReadStart::Gtid(pos) => {
                let now = lock(&r.inner.writer).state().clone();
                for g in pos.iter() {
                    if now.last(g.domain_id).is_some() && g.seq_no >= now.next_seq(g.domain_id) {
                        return Err(LogError::GtidNotFound(format!(
                            "position {pos} is ahead of the log (gtid_binlog_pos {})",
                            now.pos()
                        )));
                    }
                }
                let lsn = {
                    let segs = r.inner.segments_read();
                    let contained = |s: &SegmentMeta| covers(&pos, &s.state);
                    let n = segs.partition_point(contained);
                    if n == 0 {
                        let (name, st) = segs
                            .first()
                            .map(|s| (s.path.display().to_string(), s.state.to_string()))
                            .unwrap_or_default();
                        return Err(LogError::GtidNotFound(format!(
                            "position {pos} is older than the oldest binlog segment {name} (which starts at GTID state {st})"
                        )));
                    }
                    segs[n - 1].start_lsn
                };
                r.lsn = lsn;
                r.filter = Some(pos);
            }
        }
        Ok(r)
    }

    /// A reader from `lsn`, which the caller knows to be a record boundary (a segment's start,
    /// or where an earlier reader of this log stopped): unlike `ReadStart::Lsn`, the record
    /// there is not read to check it (the first read checks it anyway). For readers that only
    /// measure ([`next_skimmed`](Self::next_skimmed)), so a big record there is read once.
    pub(crate) fn at_boundary(inner: Arc<Inner>, lsn: Lsn) -> Result<Self, LogError> {
        let written = lock(&inner.progress).written();
        if lsn > written {
            return Err(LogError::InvalidPosition {
                lsn,
                reason: format!("beyond the end of the log (written up to {written})"),
            });
        }
        let mut r = LogReader {
            inner,
            opts: ReaderOptions::default(),
            lsn,
            cur: None,
            filter: None,
        };
        r.open_segment_for(lsn)?;
        Ok(r)
    }

    /// The LSN of the next record this reader will look at.
    pub fn position(&self) -> Lsn {
        self.lsn
    }

    /// Points `cur` at the segment holding `lsn` (an LSN equal to a closed segment's end
    /// belongs to the next one).
    fn open_segment_for(&mut self, lsn: Lsn) -> Result<(), LogError> {
        let meta = {
            let segs = self.inner.segments_read();
            let first = segs.first().map(|s| s.start_lsn).unwrap_or(0);
            if lsn < first {
                return Err(purged(
                    lsn,
                    format!("the segment holding LSN {lsn} (the oldest left starts at {first})"),
                ));
            }
            segs.iter()
                .rev()
                .find(|s| s.start_lsn <= lsn)
                .cloned()
                .ok_or(LogError::Closed)?
        };
        let file = self.inner.fs.open(&meta.path, false).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                purged(lsn, format!("segment {}", meta.path.display()))
            } else {
                LogError::io(&meta.path, 0, "open segment", e)
            }
        })?;
        self.cur = Some((
            SegmentCursor::new(
                file,
                meta.path,
                meta.number,
                meta.header_len,
                meta.start_lsn,
            ),
            meta.end_lsn,
        ));
        Ok(())
    }

    /// Moves to the segment holding the next record and returns the LSN its frame must end
    /// at or before (the visible end, or the segment's end); None when nothing more is
    /// visible yet.
    fn locate(&mut self) -> Result<Option<Lsn>, LogError> {
        loop {
            let visible = lock(&self.inner.progress).visible_end(self.opts.include_non_durable);
            if self.lsn >= visible {
                return Ok(None);
            }
            if self.cur.is_none() {
                self.open_segment_for(self.lsn)?;
            }
            // Refresh the end of a segment that was current when we opened it.
            if let Some((c, end @ None)) = &mut self.cur {
                let segs = self.inner.segments_read();
                // A reset reuses number 1: the start LSN tells the segments apart.
                match segs
                    .iter()
                    .find(|s| s.number == c.number && s.start_lsn == c.start_lsn)
                {
                    Some(s) => *end = s.end_lsn,
                    None => return Err(purged(self.lsn, format!("segment {}", c.path.display()))),
                }
            }
            match &self.cur {
                Some((_, Some(end))) if self.lsn >= *end => self.cur = None,
                Some((_, end)) => return Ok(Some(end.map_or(visible, |e| e.min(visible)))),
                None => return Err(LogError::Closed),
            }
        }
    }

    /// The place, kind and event bytes of the next record [`next`](Self::next) would yield,
    /// its CRC checked, without reading it into memory (`SegmentCursor::skim_at`): for
    /// readers that only measure, like the classic view's file sizes. Not for a reader
    /// started at a GTID position (that filter needs each record's GTID).
    pub(crate) fn next_skimmed(&mut self) -> Result<Option<(Lsn, Lsn, Skim)>, LogError> {
        debug_assert!(self.filter.is_none(), "a GTID filter needs the records");
        while let Some(limit) = self.locate()? {
            let lsn = self.lsn;
            let (cur, _) = self.cur.as_mut().ok_or(LogError::Closed)?;
            let off = cur.offset_of(lsn);
            let skim = match cur.skim_at(lsn, limit)? {
                Ok(s) => s,
                Err(e) => return Err(bad_record(&cur.path, off, lsn, limit, e)),
            };
            let end_lsn = lsn + skim.len as u64;
            debug_assert!(
                end_lsn > lsn && end_lsn <= limit,
                "a record past the visible end ({end_lsn} > {limit})"
            );
            self.lsn = end_lsn;
            if !passes_over(&self.opts, skim.kind) {
                return Ok(Some((lsn, end_lsn, skim)));
            }
        }
        Ok(None)
    }

    /// The next record below the visible end, or None when there is none yet.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Record>, LogError> {
        while let Some(limit) = self.locate()? {
            let lsn = self.lsn;
            let (cur, _) = self.cur.as_mut().ok_or(LogError::Closed)?;
            let off = cur.offset_of(lsn);
            let path = cur.path.clone();
            let f = match cur.frame_at(lsn, limit)? {
                Ok(f) => f,
                Err(e) => return Err(bad_record(&path, off, lsn, limit, e)),
            };
            let end_lsn = lsn + f.len as u64;
            debug_assert!(
                end_lsn > lsn && end_lsn <= limit,
                "a record past the visible end ({end_lsn} > {limit})"
            );
            let gtid = match f.kind {
                RecordKind::GtidState | RecordKind::CommitMark | RecordKind::SyncMark => None,
                RecordKind::Transaction | RecordKind::Ddl => {
                    Some(frame::record_gtid(f.events).map_err(|e| {
                        LogError::corrupt(
                            &path,
                            off,
                            format!("record at LSN {lsn}: bad GTID event: {e}"),
                        )
                    })?)
                }
            };
            self.lsn = end_lsn;
            if passes_over(&self.opts, f.kind) {
                continue;
            }
            if let (Some(filter), Some(g)) = (&mut self.filter, gtid) {
                if filter.get(g.domain_id).is_some() {
                    if filter.contains(g) {
                        continue;
                    }
                    // First record of this domain the position lacks: stop skipping it.
                    filter.remove(g.domain_id);
                }
            }
            return Ok(Some(Record {
                lsn,
                end_lsn,
                kind: f.kind,
                gtid,
                events: f.events.to_vec(),
                aux: f.aux.to_vec(),
            }));
        }
        Ok(None)
    }

    /// Like `next`, but waits (on the log's condvar) up to `timeout` for the visible end to
    /// advance. `Ok(None)` on timeout; `Err(Closed)` once the log is shut down and drained.
    pub fn next_wait(&mut self, timeout: Duration) -> Result<Option<Record>, LogError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.next()? {
                return Ok(Some(r));
            }
            let mut p = lock(&self.inner.progress);
            loop {
                if p.visible_end(self.opts.include_non_durable) > self.lsn {
                    break;
                }
                if p.is_closed() {
                    return Err(LogError::Closed);
                }
                let now = Instant::now();
                if now >= deadline {
                    return Ok(None);
                }
                p = self
                    .inner
                    .progress_cv
                    .wait_timeout(p, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}

/// True when `pos` contains every domain's last GTID of `state` (every record logged before
/// `state` was taken is in `pos`).
fn covers(pos: &GtidPos, state: &GtidState) -> bool {
    state.pos().iter().all(|g| pos.contains(g))
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field("position", &self.lsn)
            .field("options", &self.opts)
            .finish()
    }
}
