//! Buffered, bounds-checked reading of frames from one segment file (used by readers and by
//! recovery).
//!
//! Invariant: a cursor never reads past the `limit` LSN it is given (the visible end, or the
//! end of the file), so it never sees bytes a concurrent writer is still producing; its buffer
//! only holds bytes below that limit, which never change once visible.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::LogError;
use crate::frame::{self, Frame, FrameError, FRAME_HEADER_LEN};
use crate::fs::{read_full_at, File};
use crate::position;
use crate::Lsn;
use crate::RecordKind;

const READ_AHEAD: usize = 256 << 10;

/// What [`SegmentCursor::skim_at`] reports of a frame: enough to step over it and to place
/// its events in the classic view, without its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Skim {
    pub kind: RecordKind,
    /// Total bytes of the frame (header included).
    pub len: usize,
    /// Bytes of its event group (0 for records without one).
    pub events_len: usize,
}

pub(crate) struct SegmentCursor {
    pub file: Arc<dyn File>,
    pub path: PathBuf,
    pub number: u64,
    pub header_len: u64,
    pub start_lsn: Lsn,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    buf_off: u64,
}

impl SegmentCursor {
    pub fn new(
        file: Arc<dyn File>,
        path: PathBuf,
        number: u64,
        header_len: u64,
        start_lsn: Lsn,
    ) -> Self {
        SegmentCursor {
            file,
            path,
            number,
            header_len,
            start_lsn,
            buf: Vec::new(),
            buf_off: 0,
        }
    }

    /// File offset of `lsn` in this segment.
    pub fn offset_of(&self, lsn: Lsn) -> u64 {
        position::offset_in_segment(self.header_len, self.start_lsn, lsn)
    }

    /// LSN of the record at file offset `off` in this segment.
    pub fn lsn_at(&self, off: u64) -> Lsn {
        position::lsn_in_segment(self.header_len, self.start_lsn, off)
    }

    /// Makes `buf` hold `[off, off + n)` (n bytes must lie below `max_off`).
    fn ensure(&mut self, off: u64, n: usize, max_off: u64) -> Result<(), LogError> {
        let have_end = self.buf_off + self.buf.len() as u64;
        if off >= self.buf_off && off + n as u64 <= have_end {
            return Ok(());
        }
        let want = (max_off - off).min(n.max(READ_AHEAD) as u64) as usize;
        self.buf.resize(want, 0);
        let got = read_full_at(&*self.file, &mut self.buf, off)
            .map_err(|e| LogError::io(&self.path, off, "read records", e))?;
        self.buf.truncate(got);
        self.buf_off = off;
        debug_assert!(
            off + self.buf.len() as u64 <= max_off,
            "cursor buffered bytes past its limit"
        );
        Ok(())
    }

    /// The frame at `lsn`, reading no byte at or past `limit` (an LSN). The outer error is an
    /// I/O failure; the inner one says why the bytes are not a frame.
    pub fn frame_at(
        &mut self,
        lsn: Lsn,
        limit: Lsn,
    ) -> Result<Result<Frame<'_>, FrameError>, LogError> {
        let off = self.offset_of(lsn);
        let max_off = self.offset_of(limit.max(lsn));
        let avail = (max_off - off) as usize;
        let head = FRAME_HEADER_LEN.min(avail);
        self.ensure(off, head, max_off)?;
        let start = (off - self.buf_off) as usize;
        let total = match frame::peek_len(&self.buf[start..(start + head).min(self.buf.len())]) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        if total > avail {
            return Ok(Err(FrameError::Truncated {
                need: total,
                have: avail,
            }));
        }
        self.ensure(off, total, max_off)?;
        let start = (off - self.buf_off) as usize;
        let end = (start + total).min(self.buf.len());
        Ok(frame::decode(&self.buf[start..end]))
    }

    /// The kind, length and event bytes of the frame at `lsn` (reading nothing at or past
    /// `limit`), with its CRC checked as [`frame_at`](Self::frame_at) checks it, but without
    /// holding the frame: a frame larger than the read-ahead is checked a read-ahead at a
    /// time, so stepping over a 500 MB transaction (the classic view's sizes) costs a read of
    /// it and no memory for it. Such a frame's payload is not parsed beyond its events length (a GtidState's state is not decoded; a CommitMark or SyncMark
    /// that large is invalid).
    pub fn skim_at(&mut self, lsn: Lsn, limit: Lsn) -> Result<Result<Skim, FrameError>, LogError> {
        let off = self.offset_of(lsn);
        let max_off = self.offset_of(limit.max(lsn));
        let avail = (max_off - off) as usize;
        let lead = (FRAME_HEADER_LEN + 4).min(avail);
        self.ensure(off, lead, max_off)?;
        let start = (off - self.buf_off) as usize;
        let head = &self.buf[start..(start + lead).min(self.buf.len())];
        let total = match frame::peek_len(head) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        if total <= READ_AHEAD || head.len() < FRAME_HEADER_LEN + 4 {
            return Ok(self.frame_at(lsn, limit)?.map(|f| Skim {
                kind: f.kind,
                len: f.len,
                events_len: f.events.len(),
            }));
        }
        let code = head[8];
        if total > avail {
            return Ok(Err(FrameError::Truncated {
                need: total,
                have: avail,
            }));
        }
        let stored = frame::unmask_crc(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
        let events_len = u32::from_le_bytes([head[9], head[10], head[11], head[12]]) as usize;
        // The CRC covers the type byte and the payload: [off + 8, off + total).
        let mut chunk = vec![0u8; READ_AHEAD];
        let mut crc = 0u32;
        let mut at = off + 8;
        let end = off + total as u64;
        while at < end {
            let n = ((end - at) as usize).min(READ_AHEAD);
            let got = read_full_at(&*self.file, &mut chunk[..n], at)
                .map_err(|e| LogError::io(&self.path, at, "read records", e))?;
            if got < n {
                return Ok(Err(FrameError::Truncated {
                    need: total,
                    have: (at - off) as usize + got,
                }));
            }
            crc = crc32c::crc32c_append(crc, &chunk[..n]);
            at += n as u64;
        }
        if crc != stored {
            return Ok(Err(FrameError::Invalid(format!(
                "bad CRC32C: stored {stored:#010x}, computed {crc:#010x}"
            ))));
        }
        let (kind, events_len) = match RecordKind::from_code(code) {
            None => {
                return Ok(Err(FrameError::Invalid(format!(
                    "unknown record type {code}"
                ))))
            }
            Some(k @ (RecordKind::Transaction | RecordKind::Ddl)) => {
                if 4usize.saturating_add(events_len) > total - FRAME_HEADER_LEN {
                    return Ok(Err(FrameError::Invalid(format!(
                        "events length {events_len} exceeds the payload"
                    ))));
                }
                (k, events_len)
            }
            Some(RecordKind::GtidState) => (RecordKind::GtidState, 0),
            Some(k @ (RecordKind::CommitMark | RecordKind::SyncMark)) => {
                return Ok(Err(FrameError::Invalid(format!(
                    "{} record of {total} bytes",
                    k.name()
                ))))
            }
        };
        Ok(Ok(Skim {
            kind,
            len: total,
            events_len,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::FileSystem;
    use crate::SimFs;
    use std::path::Path;

    /// A segment file without header holding a small frame, a 1 MiB Transaction frame and a
    /// small one; the cursor over it.
    fn cursor() -> (SegmentCursor, Vec<usize>, Arc<SimFs>) {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for (i, len) in [100usize, 1 << 20, 200].into_iter().enumerate() {
            let events: Vec<u8> = (0..len).map(|j| (j * 7 + i) as u8).collect();
            frame::encode_event_record(&mut bytes, RecordKind::Transaction, &events, &[1, 2]);
            ends.push(bytes.len());
        }
        let fs = SimFs::new();
        let path = Path::new("/seg");
        let file = fs.open(path, true).unwrap();
        file.write_all_at(&bytes, 0).unwrap();
        (
            SegmentCursor::new(file, path.to_path_buf(), 1, 0, 0),
            ends,
            fs,
        )
    }

    #[test]
    fn skimming_a_big_frame_checks_it_without_buffering_it() {
        let (mut c, ends, _fs) = cursor();
        let limit = *ends.last().unwrap() as Lsn;
        let mut lsn = 0;
        for (i, events_len) in [100usize, 1 << 20, 200].into_iter().enumerate() {
            let s = c.skim_at(lsn, limit).unwrap().unwrap();
            assert_eq!(
                s,
                Skim {
                    kind: RecordKind::Transaction,
                    len: ends[i] - lsn as usize,
                    events_len,
                }
            );
            assert!(
                c.buf.capacity() <= READ_AHEAD,
                "frame {i}: the cursor buffered {} bytes",
                c.buf.capacity()
            );
            lsn = ends[i] as Lsn;
        }
        // Reading the big frame itself buffers it: what skimming avoids.
        let f = c.frame_at(ends[0] as Lsn, limit).unwrap().unwrap();
        assert_eq!(f.events.len(), 1 << 20);
        assert!(c.buf.capacity() > 1 << 20);
        // A flipped byte deep inside it, or a limit cutting it short, is found by the skim.
        let (mut c, ends, _fs) = cursor();
        let at = (ends[0] + (600 << 10)) as u64;
        let file = c.file.clone();
        let mut b = [0u8; 1];
        file.read_at(&mut b, at).unwrap();
        file.write_all_at(&[!b[0]], at).unwrap();
        match c.skim_at(ends[0] as Lsn, limit).unwrap() {
            Err(FrameError::Invalid(why)) => assert!(why.contains("bad CRC32C"), "{why}"),
            other => panic!("{other:?}"),
        }
        file.write_all_at(&b, at).unwrap();
        assert!(matches!(
            c.skim_at(ends[0] as Lsn, ends[1] as Lsn - 1).unwrap(),
            Err(FrameError::Truncated { .. })
        ));
        assert!(c.skim_at(ends[0] as Lsn, limit).unwrap().is_ok());
    }
}
