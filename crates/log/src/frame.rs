//! Record framing: how one log record is laid out in a segment, and its checksum.
//!
//! ```text
//! record := length: u32 LE   bytes of payload (never 0: zero means "end of data")
//!           crc:    u32 LE   masked CRC32C of (type, payload)
//!           type:   u8       1 Transaction, 2 Ddl, 3 GtidState, 4 CommitMark, 5 SyncMark
//!           payload: length bytes
//!
//! Transaction / Ddl payload := events_len: u32 LE | events (the binlog event group, starting
//!                              with its GTID event) | aux (the rest: opaque engine bytes)
//! GtidState payload         := GtidState::encode (u32 count, then count × {u32 domain,
//!                              u32 server, u64 seq})
//! CommitMark payload        := committed_lsn: u64 LE (file mode: every Transaction/Ddl
//!                              record below this LSN is committed; exactly 8 bytes)
//! SyncMark payload          := at_lsn: u64 LE (the mark's own LSN) | synced_lsn: u64 LE
//!                              (every byte of the log below it was durable when the mark
//!                              was framed; synced_lsn <= at_lsn; exactly 16 bytes)
//! ```
//!
//! SyncMarks (format version 2) are what lets recovery tell a torn tail from corruption
//! (`recovery.rs`): a CRC-valid mark found after a damaged record, at the position its own
//! LSN names, proves that the bytes below its `synced_lsn` had been synced.
//!
//! The CRC is masked as in LevelDB/RocksDB (`rotate right 15, add 0xa282ead8`) so that a
//! record whose payload itself holds CRCs of the same data does not checksum to a pattern.
//! The length is not inside the CRC, but a wrong length makes the CRC cover the wrong bytes,
//! so it fails with the same probability as any other flip.
//!
//! Invariants: the LSN of a record is the position of its first byte in the concatenated
//! record stream; `decode` never trusts `length` beyond the bytes it is given and never
//! panics; a frame is only `Ok` when its CRC matches and its payload parses.

use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::{Gtid, GtidState};

use crate::RecordKind;

/// Bytes before the payload: length, crc, type.
pub const FRAME_HEADER_LEN: usize = 9;

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC for storage.
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

impl RecordKind {
    pub fn code(self) -> u8 {
        match self {
            RecordKind::Transaction => 1,
            RecordKind::Ddl => 2,
            RecordKind::GtidState => 3,
            RecordKind::CommitMark => 4,
            RecordKind::SyncMark => 5,
        }
    }

    /// The variant's name, for tools (`onelog binlog`).
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::Transaction => "Transaction",
            RecordKind::Ddl => "Ddl",
            RecordKind::GtidState => "GtidState",
            RecordKind::CommitMark => "CommitMark",
            RecordKind::SyncMark => "SyncMark",
        }
    }

    pub fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(RecordKind::Transaction),
            2 => Some(RecordKind::Ddl),
            3 => Some(RecordKind::GtidState),
            4 => Some(RecordKind::CommitMark),
            5 => Some(RecordKind::SyncMark),
            _ => None,
        }
    }
}

/// Size of the frame of a Transaction/Ddl record.
pub fn event_record_len(events: usize, aux: usize) -> usize {
    FRAME_HEADER_LEN + 4 + events + aux
}

/// Appends a Transaction/Ddl record to `out`.
pub fn encode_event_record(out: &mut Vec<u8>, kind: RecordKind, events: &[u8], aux: &[u8]) {
    let start = out.len();
    let payload_len = 4 + events.len() + aux.len();
    out.extend_from_slice(&(payload_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(kind.code());
    out.extend_from_slice(&(events.len() as u32).to_le_bytes());
    out.extend_from_slice(events);
    out.extend_from_slice(aux);
    seal(out, start);
}

/// Appends the frame of a Transaction/Ddl record whose event group is `rec.events ++
/// streamed` to `out`, but for the streamed source's bytes: the frame is the one
/// [`encode_event_record`] writes for the whole group, CRC included (computed while reading
/// the source); the source's bytes belong at the returned offset of `out`.
pub fn encode_streamed_record(
    out: &mut Vec<u8>,
    rec: &crate::PendingRecord,
    streamed: &crate::StreamedEvents,
) -> std::io::Result<usize> {
    let start = out.len();
    let events_len = rec.events.len() as u64 + streamed.len();
    let payload_len = 4 + events_len + rec.aux.len() as u64;
    let too_big = || std::io::Error::other("record larger than a frame can hold");
    out.extend_from_slice(
        &u32::try_from(payload_len)
            .map_err(|_| too_big())?
            .to_le_bytes(),
    );
    out.extend_from_slice(&[0; 4]);
    out.push(rec.kind.code());
    out.extend_from_slice(
        &u32::try_from(events_len)
            .map_err(|_| too_big())?
            .to_le_bytes(),
    );
    out.extend_from_slice(&rec.events);
    let mut buf = Vec::new();
    let crc = crc32c::crc32c(&out[start + 8..]);
    let crc = crate::streamed::crc_append(crc, &*streamed.source, &mut buf)?;
    let at = out.len();
    out.extend_from_slice(&streamed.tail);
    out.extend_from_slice(&rec.aux);
    let crc = crc32c::crc32c_append(crc, &out[at..]);
    out[start + 4..start + 8].copy_from_slice(&mask_crc(crc).to_le_bytes());
    Ok(at)
}

/// Appends a GtidState record to `out`.
pub fn encode_state_record(out: &mut Vec<u8>, state: &GtidState) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    out.push(RecordKind::GtidState.code());
    state.encode(out);
    let payload_len = (out.len() - start - FRAME_HEADER_LEN) as u32;
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    seal(out, start);
}

/// Size of a CommitMark frame.
pub const COMMIT_MARK_LEN: usize = FRAME_HEADER_LEN + 8;

/// Appends a CommitMark record saying every event record below `committed` is committed.
pub fn encode_commit_mark(out: &mut Vec<u8>, committed: u64) {
    let start = out.len();
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(RecordKind::CommitMark.code());
    out.extend_from_slice(&committed.to_le_bytes());
    seal(out, start);
}

/// The LSN a CommitMark's payload (`Frame::aux`) holds.
pub fn commit_mark_lsn(aux: &[u8]) -> Option<u64> {
    let b: [u8; 8] = aux.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// Size of a SyncMark frame.
pub const SYNC_MARK_LEN: usize = FRAME_HEADER_LEN + 16;

/// Appends a SyncMark record: it sits at LSN `at` and says every byte below `synced` was
/// durable when it was framed.
pub fn encode_sync_mark(out: &mut Vec<u8>, at: u64, synced: u64) {
    debug_assert!(synced <= at, "a SyncMark vouches only for bytes before it");
    let start = out.len();
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(RecordKind::SyncMark.code());
    out.extend_from_slice(&at.to_le_bytes());
    out.extend_from_slice(&synced.to_le_bytes());
    seal(out, start);
}

/// (at_lsn, synced_lsn) of a SyncMark's payload (`Frame::aux`).
pub fn sync_mark_lsns(aux: &[u8]) -> Option<(u64, u64)> {
    let at: [u8; 8] = aux.get(..8)?.try_into().ok()?;
    let synced: [u8; 8] = aux.get(8..16)?.try_into().ok()?;
    Some((u64::from_le_bytes(at), u64::from_le_bytes(synced)))
}

/// The SyncMarks in `buf`, whose first byte is at LSN `buf_lsn`, found by their content
/// alone (any byte position, not only record boundaries): a frame of SyncMark length and
/// type whose `at_lsn` is its own position, whose CRC checks and whose `synced_lsn` is not
/// after it. Returns (LSN of the mark, synced_lsn) for each. A random match needs the 13
/// fixed bytes and the 32-bit CRC to agree: it is not a practical concern.
pub fn find_sync_marks(buf: &[u8], buf_lsn: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    if buf.len() < SYNC_MARK_LEN {
        return out;
    }
    for i in 0..=buf.len() - SYNC_MARK_LEN {
        if buf[i..i + 4] != 16u32.to_le_bytes() || buf[i + 8] != RecordKind::SyncMark.code() {
            continue;
        }
        let at = buf_lsn + i as u64;
        if buf[i + 9..i + 17] != at.to_le_bytes() {
            continue;
        }
        if let Ok(f) = decode(&buf[i..i + SYNC_MARK_LEN]) {
            if let Some((a, synced)) = sync_mark_lsns(f.aux) {
                if a == at && synced <= at {
                    out.push((at, synced));
                }
            }
        }
    }
    out
}

fn seal(out: &mut [u8], start: usize) {
    let crc = mask_crc(crc32c::crc32c(&out[start + 8..]));
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// A decoded frame, borrowing from the buffer it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: RecordKind,
    /// Transaction/Ddl: the event group; GtidState: empty.
    pub events: &'a [u8],
    /// Transaction/Ddl: the aux bytes; GtidState: the encoded state.
    pub aux: &'a [u8],
    /// Total bytes of the frame (header included).
    pub len: usize,
}

/// Why bytes are not a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A zero length word: preallocated space, the end of the data.
    End,
    /// Fewer bytes than the header or the stated length.
    Truncated { need: usize, have: usize },
    /// Anything else: bad CRC, unknown type, bad payload.
    Invalid(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::End => f.write_str("zero length word (end of data)"),
            FrameError::Truncated { need, have } => {
                write!(f, "truncated record: needs {need} bytes, {have} available")
            }
            FrameError::Invalid(why) => f.write_str(why),
        }
    }
}

/// Reads the payload length of the frame starting `buf`, if the header is there.
pub fn peek_len(buf: &[u8]) -> Result<usize, FrameError> {
    if buf.len() < 4 {
        return Err(FrameError::Truncated {
            need: FRAME_HEADER_LEN,
            have: buf.len(),
        });
    }
    let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if len == 0 {
        return Err(FrameError::End);
    }
    Ok(FRAME_HEADER_LEN + len)
}

/// Decodes the frame at the start of `buf`.
pub fn decode(buf: &[u8]) -> Result<Frame<'_>, FrameError> {
    let total = peek_len(buf)?;
    if buf.len() < total {
        return Err(FrameError::Truncated {
            need: total,
            have: buf.len(),
        });
    }
    let stored = unmask_crc(u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]));
    let computed = crc32c::crc32c(&buf[8..total]);
    if stored != computed {
        return Err(FrameError::Invalid(format!(
            "bad CRC32C: stored {stored:#010x}, computed {computed:#010x}"
        )));
    }
    let kind = RecordKind::from_code(buf[8])
        .ok_or_else(|| FrameError::Invalid(format!("unknown record type {}", buf[8])))?;
    let payload = &buf[FRAME_HEADER_LEN..total];
    match kind {
        RecordKind::Transaction | RecordKind::Ddl => {
            let events_len = payload
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or_else(|| {
                    FrameError::Invalid("payload shorter than its events length".into())
                })?;
            let events = payload
                .get(4..4usize.saturating_add(events_len))
                .ok_or_else(|| {
                    FrameError::Invalid(format!("events length {events_len} exceeds the payload"))
                })?;
            Ok(Frame {
                kind,
                events,
                aux: &payload[4 + events_len..],
                len: total,
            })
        }
        RecordKind::GtidState => {
            let (_, n) =
                GtidState::decode(payload).map_err(|e| FrameError::Invalid(e.to_string()))?;
            if n != payload.len() {
                return Err(FrameError::Invalid(
                    "trailing bytes after the GTID state".into(),
                ));
            }
            Ok(Frame {
                kind,
                events: &[],
                aux: payload,
                len: total,
            })
        }
        RecordKind::SyncMark => {
            if payload.len() != 16 {
                return Err(FrameError::Invalid(format!(
                    "SyncMark payload of {} bytes (expected 16)",
                    payload.len()
                )));
            }
            Ok(Frame {
                kind,
                events: &[],
                aux: payload,
                len: total,
            })
        }
        RecordKind::CommitMark => {
            if payload.len() != 8 {
                return Err(FrameError::Invalid(format!(
                    "CommitMark payload of {} bytes (expected 8)",
                    payload.len()
                )));
            }
            Ok(Frame {
                kind,
                events: &[],
                aux: payload,
                len: total,
            })
        }
    }
}

/// The GTID of a Transaction/Ddl record: the one in its first (GTID) event.
pub fn record_gtid(events: &[u8]) -> Result<Gtid, String> {
    let n = onelog_binlog::event::gtid::GTID_EVENT_LEN.min(events.len());
    GtidEvent::decode(&events[..n])
        .map(|e| e.gtid)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_events(seq: u64) -> Vec<u8> {
        let mut v = Vec::new();
        GtidEvent {
            gtid: Gtid::new(0, 1, seq),
            flags2: 0,
            commit_id: Some(1),
            timestamp: 0,
        }
        .encode(&mut v);
        v.extend_from_slice(b"more events");
        v
    }

    #[test]
    fn event_record_round_trips() {
        let ev = sample_events(5);
        let mut buf = Vec::new();
        encode_event_record(&mut buf, RecordKind::Ddl, &ev, b"catalog");
        assert_eq!(buf.len(), event_record_len(ev.len(), 7));
        let f = decode(&buf).unwrap();
        assert_eq!(
            (f.kind, f.events, f.aux, f.len),
            (RecordKind::Ddl, &ev[..], &b"catalog"[..], buf.len())
        );
        assert_eq!(record_gtid(f.events).unwrap(), Gtid::new(0, 1, 5));
    }

    #[test]
    fn state_record_round_trips() {
        let mut s = GtidState::new();
        s.record(Gtid::new(1, 2, 3));
        let mut buf = Vec::new();
        encode_state_record(&mut buf, &s);
        let f = decode(&buf).unwrap();
        assert_eq!(f.kind, RecordKind::GtidState);
        assert_eq!(GtidState::decode(f.aux).unwrap().0, s);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_detected() {
        let mut buf = Vec::new();
        encode_event_record(&mut buf, RecordKind::Transaction, &sample_events(9), b"x");
        for cut in 0..buf.len() {
            assert!(decode(&buf[..cut]).is_err(), "cut at {cut}");
        }
        for byte in 0..buf.len() {
            for bit in 0..8 {
                let mut b = buf.clone();
                b[byte] ^= 1 << bit;
                match decode(&b) {
                    Err(_) => {}
                    // A flip that grows the length is only "truncated": the caller sees an
                    // error either way. A decode that succeeds must be impossible.
                    Ok(f) => panic!("flip of bit {bit} of byte {byte} decoded as {f:?}"),
                }
            }
        }
        assert_eq!(decode(&[0; 16]), Err(FrameError::End));
    }

    #[test]
    fn commit_mark_round_trips_and_rejects_a_bad_payload() {
        let mut buf = Vec::new();
        encode_commit_mark(&mut buf, 0x0102_0304_0506);
        assert_eq!(buf.len(), COMMIT_MARK_LEN);
        let f = decode(&buf).unwrap();
        assert_eq!(f.kind, RecordKind::CommitMark);
        assert_eq!(commit_mark_lsn(f.aux), Some(0x0102_0304_0506));
        // A 4-byte payload with a valid CRC is still refused.
        let mut bad = vec![4, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4];
        let crc = mask_crc(crc32c::crc32c(&bad[8..]));
        bad[4..8].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(decode(&bad), Err(FrameError::Invalid(_))));
    }

    #[test]
    fn sync_mark_round_trips_and_is_found_only_at_its_own_position() {
        let mut buf = vec![7u8; 30];
        encode_sync_mark(&mut buf, 1030, 900);
        buf.extend_from_slice(&[1, 2, 3]);
        let f = decode(&buf[30..]).unwrap();
        assert_eq!(f.kind, RecordKind::SyncMark);
        assert_eq!(f.len, SYNC_MARK_LEN);
        assert_eq!(sync_mark_lsns(f.aux), Some((1030, 900)));
        assert_eq!(find_sync_marks(&buf, 1000), vec![(1030, 900)]);
        // The same bytes at another LSN are not a mark of this log position.
        assert!(find_sync_marks(&buf, 1001).is_empty());
        // A damaged mark is not found.
        buf[40] ^= 1;
        assert!(find_sync_marks(&buf, 1000).is_empty());
    }

    #[test]
    fn mask_round_trips() {
        for c in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(c)), c);
        }
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn round_trip_any_payload(events in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
                                  aux in proptest::collection::vec(proptest::num::u8::ANY, 0..50)) {
            let mut buf = Vec::new();
            encode_event_record(&mut buf, RecordKind::Transaction, &events, &aux);
            let f = decode(&buf).unwrap();
            proptest::prop_assert_eq!(f.events, &events[..]);
            proptest::prop_assert_eq!(f.aux, &aux[..]);
        }
    }
}
