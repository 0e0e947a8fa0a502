//! Binlog events: the common header, CRC32 checksums and one module per event kind.
//!
//! Layout of every event (MariaDB 10.11, `binlog_checksum=CRC32`):
//!
//! ```text
//! 0  timestamp   u32 LE   seconds since the epoch
//! 4  type        u8       `EventType`
//! 5  server_id   u32 LE
//! 9  event_size  u32 LE   header + body + 4-byte checksum
//! 13 log_pos     u32 LE   position of the end of this event in its binlog file (0 in onelog's log)
//! 17 flags       u16 LE
//! 19 body ...
//! -4 crc32       u32 LE   CRC32 (ISO-HDLC) of everything before it
//! ```
//!
//! Invariant: `event_size` equals the bytes the event occupies, and the checksum covers all of
//! them but the last four. `check_event` verifies both.

pub mod gtid;

use crate::error::DecodeError;

/// Length of the common event header.
pub const HEADER_LEN: usize = 19;
/// Length of the CRC32 checksum that ends every event.
pub const CHECKSUM_LEN: usize = 4;

/// Binlog event type codes (MariaDB `Log_event_type`).
pub mod event_type {
    pub const QUERY: u8 = 2;
    pub const STOP: u8 = 3;
    pub const ROTATE: u8 = 4;
    pub const FORMAT_DESCRIPTION: u8 = 15;
    pub const XID: u8 = 16;
    pub const TABLE_MAP: u8 = 19;
    pub const WRITE_ROWS_V1: u8 = 23;
    pub const UPDATE_ROWS_V1: u8 = 24;
    pub const DELETE_ROWS_V1: u8 = 25;
    pub const HEARTBEAT: u8 = 27;
    pub const ANNOTATE_ROWS: u8 = 160;
    pub const BINLOG_CHECKPOINT: u8 = 161;
    pub const GTID: u8 = 162;
    pub const GTID_LIST: u8 = 163;
    pub const START_ENCRYPTION: u8 = 164;
}

/// The common header of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventHeader {
    pub timestamp: u32,
    pub event_type: u8,
    pub server_id: u32,
    pub event_size: u32,
    pub log_pos: u32,
    pub flags: u16,
}

impl EventHeader {
    /// Appends the 19 header bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out.push(self.event_type);
        out.extend_from_slice(&self.server_id.to_le_bytes());
        out.extend_from_slice(&self.event_size.to_le_bytes());
        out.extend_from_slice(&self.log_pos.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
    }

    /// Reads a header from the first 19 bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        if buf.len() < HEADER_LEN {
            return Err(DecodeError::new("event header", buf.len(), "truncated"));
        }
        let u32_at = |o: usize| u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
        Ok(EventHeader {
            timestamp: u32_at(0),
            event_type: buf[4],
            server_id: u32_at(5),
            event_size: u32_at(9),
            log_pos: u32_at(13),
            flags: u16::from_le_bytes([buf[17], buf[18]]),
        })
    }
}

/// CRC32 (ISO-HDLC, zlib's) as MariaDB's `binlog_checksum=CRC32` computes it.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Writes a complete event into `out`: header with `event_size` and checksum filled in from
/// `body`.
pub fn write_event(out: &mut Vec<u8>, mut header: EventHeader, body: &[u8]) {
    let start = out.len();
    header.event_size = (HEADER_LEN + body.len() + CHECKSUM_LEN) as u32;
    header.encode(out);
    out.extend_from_slice(body);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Recomputes the checksum of the complete event `ev` (after a field was patched in place).
pub fn reseal(ev: &mut [u8]) {
    let n = ev.len();
    if n < HEADER_LEN + CHECKSUM_LEN {
        return;
    }
    let crc = crc32(&ev[..n - CHECKSUM_LEN]);
    ev[n - CHECKSUM_LEN..].copy_from_slice(&crc.to_le_bytes());
}

/// Checks that `buf` starts with a whole event whose size and checksum are right; returns its
/// header and its bytes (checksum included).
pub fn check_event(buf: &[u8]) -> Result<(EventHeader, &[u8]), DecodeError> {
    let h = EventHeader::decode(buf)?;
    let size = h.event_size as usize;
    if size < HEADER_LEN + CHECKSUM_LEN {
        return Err(DecodeError::new("event", 9, format!("event_size {size} is too small")));
    }
    if size > buf.len() {
        return Err(DecodeError::new(
            "event",
            buf.len(),
            format!("event_size {size} but only {} bytes", buf.len()),
        ));
    }
    let ev = &buf[..size];
    let stored = u32::from_le_bytes([ev[size - 4], ev[size - 3], ev[size - 2], ev[size - 1]]);
    let computed = crc32(&ev[..size - CHECKSUM_LEN]);
    if stored != computed {
        return Err(DecodeError::new(
            "event",
            size - CHECKSUM_LEN,
            format!("bad checksum: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    Ok((h, ev))
}

/// Splits a buffer of consecutive whole events (an event group) into events, checking each.
pub fn split_events(mut buf: &[u8]) -> impl Iterator<Item = Result<(EventHeader, &[u8]), DecodeError>> {
    let mut offset = 0usize;
    let mut failed = false;
    std::iter::from_fn(move || {
        if buf.is_empty() || failed {
            return None;
        }
        match check_event(buf) {
            Ok((h, ev)) => {
                buf = &buf[ev.len()..];
                offset += ev.len();
                Some(Ok((h, ev)))
            }
            Err(mut e) => {
                failed = true;
                e.offset += offset;
                Some(Err(e))
            }
        }
    })
}
