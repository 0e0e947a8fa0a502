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

const READ_AHEAD: usize = 256 << 10;

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
}
