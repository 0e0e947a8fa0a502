//! Streaming verification of record bytes: what a backup checks while it copies the log and
//! what `onelog check` and `onelog restore` check offline.
//!
//! Owns [`RecordVerifier`] (fed the bytes of a run of records, in any chunking, from a known
//! LSN and GTID state), [`VerifiedRun`] (what a finished run held) and [`VerifyError`]. It
//! checks, for every frame: the CRC32C and the payload's form (the log's own
//! [`frame::decode`], so it accepts exactly what recovery accepts); that a Transaction/Ddl
//! record starts with a GTID event; that a GtidState record holds exactly the state the
//! records before it built (GTID continuity: the state is carried from the segment header or
//! from where the run starts); that a SyncMark names its own LSN. A zero length word is never
//! accepted inside a run: a run is only ever asked to cover bytes that are records.
//!
//! Invariants: only whole frames are consumed (a frame split across chunks waits for the rest,
//! bounded by its length, which was checked against the run's declared end before any
//! buffering); after the first error every call returns an error; `lsn()` is always on a
//! record boundary of the verified bytes.

use std::fmt;

use onelog_binlog::{Gtid, GtidState};

use crate::frame::{self, record_gtid, sync_mark_lsns, FrameError};
use crate::{Lsn, RecordKind};

/// Why a run of records does not verify; `lsn` is where the bad frame starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub lsn: Lsn,
    pub reason: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record at LSN {}: {}", self.lsn, self.reason)
    }
}

impl std::error::Error for VerifyError {}

/// What a verified run held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedRun {
    /// The LSN after the last record.
    pub end_lsn: Lsn,
    /// The GTID state after the last record.
    pub state: GtidState,
    /// Transaction/Ddl records.
    pub transactions: u64,
    /// The last Transaction/Ddl record's GTID and the timestamp of its GTID event.
    pub last: Option<(Gtid, u32)>,
}

/// Verifies the records of `[start, end)` fed to it in chunks (module docs).
pub struct RecordVerifier {
    lsn: Lsn,
    end: Lsn,
    pending: Vec<u8>,
    state: GtidState,
    transactions: u64,
    last: Option<(Gtid, u32)>,
    failed: Option<VerifyError>,
}

impl RecordVerifier {
    /// A verifier for the records from `start` (a record boundary) to `end`, with `state`
    /// the GTID state at `start`.
    pub fn new(start: Lsn, end: Lsn, state: GtidState) -> Self {
        debug_assert!(start <= end, "a run ends after it starts");
        RecordVerifier {
            lsn: start,
            end,
            pending: Vec::new(),
            state,
            transactions: 0,
            last: None,
            failed: None,
        }
    }

    /// The LSN of the next record (everything before it verified).
    pub fn lsn(&self) -> Lsn {
        self.lsn
    }

    /// Bytes fed but not yet verified: the start of a frame split across chunks.
    pub fn pending_bytes(&self) -> u64 {
        self.pending.len() as u64
    }

    /// The GTID state after the records verified so far.
    pub fn state(&self) -> &GtidState {
        &self.state
    }

    /// Verifies the next bytes of the run. Bytes beyond the run's end are an error.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), VerifyError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let buffered = self.lsn + self.pending.len() as u64;
        if buffered + bytes.len() as u64 > self.end {
            return Err(self.fail(format!(
                "{} bytes past the end of the run at LSN {}",
                buffered + bytes.len() as u64 - self.end,
                self.end
            )));
        }
        loop {
            if self.pending.is_empty() {
                if bytes.len() < 4 {
                    self.pending.extend_from_slice(bytes);
                    return Ok(());
                }
                let len = self.frame_len(bytes)?;
                if bytes.len() < len {
                    self.pending.extend_from_slice(bytes);
                    return Ok(());
                }
                self.check_frame(&bytes[..len])?;
                bytes = &bytes[len..];
                continue;
            }
            // A frame split across chunks: complete its length word, then the frame.
            let need = if self.pending.len() < 4 {
                4
            } else {
                let p = std::mem::take(&mut self.pending);
                let len = self.frame_len(&p);
                self.pending = p;
                len?
            };
            let take = need.saturating_sub(self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() < need {
                return Ok(());
            }
            if need > 4 {
                let frame = std::mem::take(&mut self.pending);
                self.check_frame(&frame)?;
            }
        }
    }

    /// Ends the run: every byte up to its end must have been a whole record.
    pub fn finish(self) -> Result<VerifiedRun, VerifyError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if !self.pending.is_empty() || self.lsn != self.end {
            return Err(VerifyError {
                lsn: self.lsn,
                reason: format!(
                    "the run ends at LSN {} in the middle of a record (or {} bytes are missing)",
                    self.end,
                    self.end - self.lsn - self.pending.len() as u64
                ),
            });
        }
        Ok(VerifiedRun {
            end_lsn: self.lsn,
            state: self.state,
            transactions: self.transactions,
            last: self.last,
        })
    }

    /// The length of the frame starting `bytes` (at least its length word), checked against
    /// the run's end before anything is buffered for it.
    fn frame_len(&mut self, bytes: &[u8]) -> Result<usize, VerifyError> {
        let len = match frame::peek_len(bytes) {
            Ok(len) => len,
            Err(FrameError::End) => {
                return Err(self.fail(
                    "zero length word (end of data) inside the range that must hold records".into(),
                ))
            }
            Err(e) => return Err(self.fail(e.to_string())),
        };
        if self.lsn + len as u64 > self.end {
            return Err(self.fail(format!(
                "a frame of {len} bytes would end past the run's end at LSN {}",
                self.end
            )));
        }
        Ok(len)
    }

    fn fail(&mut self, reason: String) -> VerifyError {
        let e = VerifyError {
            lsn: self.lsn,
            reason,
        };
        self.failed = Some(e.clone());
        e
    }

    /// Checks one whole frame at `self.lsn` and moves past it.
    fn check_frame(&mut self, bytes: &[u8]) -> Result<(), VerifyError> {
        let f = match frame::decode(bytes) {
            Ok(f) => f,
            Err(e) => return Err(self.fail(format!("bad record ({} bytes): {e}", bytes.len()))),
        };
        debug_assert_eq!(f.len, bytes.len(), "callers cut whole frames");
        match f.kind {
            RecordKind::Transaction | RecordKind::Ddl => {
                let gtid = match record_gtid(f.events) {
                    Ok(g) => g,
                    Err(e) => {
                        return Err(
                            self.fail(format!("event group does not start with a GTID event: {e}"))
                        )
                    }
                };
                // The GTID event's header starts with its timestamp (decoded above, so present).
                let ts = u32::from_le_bytes([f.events[0], f.events[1], f.events[2], f.events[3]]);
                self.state.record(gtid);
                self.transactions += 1;
                self.last = Some((gtid, ts));
            }
            RecordKind::GtidState => {
                // decode() checked the payload is exactly one state.
                let stored = GtidState::decode(f.aux).map(|(s, _)| s).unwrap_or_default();
                if let Err(e) = check_state_record(&stored, &self.state) {
                    return Err(self.fail(e));
                }
            }
            RecordKind::SyncMark => {
                if sync_mark_lsns(f.aux).map(|(at, _)| at) != Some(self.lsn) {
                    return Err(self.fail("SyncMark does not name its own LSN".into()));
                }
            }
            RecordKind::CommitMark => {}
        }
        self.lsn += bytes.len() as u64;
        Ok(())
    }
}

/// GTID continuity at a GtidState record: it must hold exactly `state`, the state the records
/// before it built (every reader of a log checks the same; the error names both).
pub fn check_state_record(stored: &GtidState, state: &GtidState) -> Result<(), String> {
    if stored.entries() == state.entries() {
        return Ok(());
    }
    Err(format!(
        "GTID state record {} disagrees with the records before it ({})",
        fmt_state(stored),
        fmt_state(state)
    ))
}

fn fmt_state(s: &GtidState) -> String {
    let v: Vec<String> = s.entries().iter().map(|g| g.to_string()).collect();
    format!("[{}]", v.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_event_record, encode_state_record, encode_sync_mark};
    use onelog_binlog::event::gtid::GtidEvent;

    fn record(out: &mut Vec<u8>, seq: u64, ts: u32) {
        let mut ev = Vec::new();
        GtidEvent {
            gtid: Gtid::new(0, 1, seq),
            flags2: 0,
            commit_id: Some(1),
            timestamp: ts,
        }
        .encode(&mut ev);
        encode_event_record(out, RecordKind::Transaction, &ev, b"");
    }

    /// Records 1..=3 from LSN 100, a SyncMark, a state record, record 4.
    fn run() -> (Vec<u8>, GtidState) {
        let mut buf = Vec::new();
        for seq in 1..=3 {
            record(&mut buf, seq, 1000 + seq as u32);
        }
        let at = 100 + buf.len() as u64;
        encode_sync_mark(&mut buf, at, 100);
        let mut st = GtidState::new();
        for seq in 1..=3 {
            st.record(Gtid::new(0, 1, seq));
        }
        encode_state_record(&mut buf, &st);
        record(&mut buf, 4, 1004);
        st.record(Gtid::new(0, 1, 4));
        (buf, st)
    }

    #[test]
    fn any_chunking_verifies_the_same() {
        let (buf, want) = run();
        for chunk in [1, 3, 4, 5, 9, 10, 17, 64, buf.len()] {
            let mut v = RecordVerifier::new(100, 100 + buf.len() as u64, GtidState::new());
            for c in buf.chunks(chunk) {
                v.feed(c).unwrap();
            }
            let r = v.finish().unwrap();
            assert_eq!(r.end_lsn, 100 + buf.len() as u64, "chunk {chunk}");
            assert_eq!(r.state.entries(), want.entries());
            assert_eq!(r.transactions, 4);
            assert_eq!(r.last, Some((Gtid::new(0, 1, 4), 1004)));
        }
    }

    #[test]
    fn a_flipped_byte_is_found_at_its_record() {
        let (mut buf, _) = run();
        let mut one = Vec::new();
        record(&mut one, 1, 1001);
        buf[one.len() + 20] ^= 1; // inside the second record
        let mut v = RecordVerifier::new(100, 100 + buf.len() as u64, GtidState::new());
        let e = v.feed(&buf).unwrap_err();
        assert_eq!(e.lsn, 100 + one.len() as u64);
        assert!(e.reason.contains("CRC32C"), "{e}");
        assert!(v.feed(&[]).is_err(), "stays failed");
    }

    #[test]
    fn a_state_record_must_match_the_records_before_it() {
        let (buf, _) = run();
        // Start from a state that claims record 1 came from another server.
        let mut wrong = GtidState::new();
        wrong.record(Gtid::new(0, 9, 7));
        let mut v = RecordVerifier::new(100, 100 + buf.len() as u64, wrong);
        let e = v.feed(&buf).unwrap_err();
        assert!(e.reason.contains("disagrees"), "{e}");
    }

    #[test]
    fn missing_bytes_bytes_past_the_end_and_zeros_are_errors() {
        let (buf, _) = run();
        let n = buf.len() as u64;
        let mut v = RecordVerifier::new(100, 100 + n, GtidState::new());
        v.feed(&buf[..buf.len() - 1]).unwrap();
        assert!(v.finish().unwrap_err().reason.contains("missing"));

        let mut v = RecordVerifier::new(100, 100 + n - 1, GtidState::new());
        assert!(v.feed(&buf).unwrap_err().reason.contains("past the end"));

        let mut v = RecordVerifier::new(0, 64, GtidState::new());
        assert!(v
            .feed(&[0u8; 64])
            .unwrap_err()
            .reason
            .contains("zero length"));

        // A SyncMark must name its own LSN: the same bytes verified from another LSN fail.
        let mut v = RecordVerifier::new(101, 101 + n, GtidState::new());
        assert!(v.feed(&buf).unwrap_err().reason.contains("SyncMark"));
    }
}
