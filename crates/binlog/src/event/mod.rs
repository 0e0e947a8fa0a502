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

pub mod annotate_rows;
pub mod binlog_checkpoint;
pub mod format_description;
pub mod gtid;
pub mod gtid_list;
pub mod query;
pub mod rotate;
pub mod rows;
pub mod statement_vars;
pub mod table_map;
pub mod xid;

use crate::error::DecodeError;
use crate::wire::Reader;

pub use annotate_rows::AnnotateRowsEvent;
pub use binlog_checkpoint::BinlogCheckpointEvent;
pub use format_description::FormatDescriptionEvent;
pub use gtid::GtidEvent;
pub use gtid_list::GtidListEvent;
pub use query::QueryEvent;
pub use rotate::RotateEvent;
pub use rows::{Rows, RowsEvent, RowsEventWriter, RowsKind, STMT_END_F};
pub use table_map::TableMap;
pub use xid::XidEvent;

/// The 4 bytes every binlog file starts with.
pub const BINLOG_MAGIC: [u8; 4] = *b"\xfebin";

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
    debug_assert_eq!(out.len() - start, header.event_size as usize);
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Recomputes the checksum of the complete event `ev` (after a field was patched in place).
pub fn reseal(ev: &mut [u8]) {
    let n = ev.len();
    if n < HEADER_LEN + CHECKSUM_LEN {
        return;
    }
    debug_assert_eq!(
        u32_le(&ev[9..13]) as usize,
        n,
        "event_size differs from the event"
    );
    let crc = crc32(&ev[..n - CHECKSUM_LEN]);
    ev[n - CHECKSUM_LEN..].copy_from_slice(&crc.to_le_bytes());
}

/// Checks that `buf` starts with a whole event whose size and checksum are right; returns its
/// header and its bytes (checksum included).
pub fn check_event(buf: &[u8]) -> Result<(EventHeader, &[u8]), DecodeError> {
    let h = EventHeader::decode(buf)?;
    let size = h.event_size as usize;
    if size < HEADER_LEN + CHECKSUM_LEN {
        return Err(DecodeError::new(
            "event",
            9,
            format!("event_size {size} is too small"),
        ));
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
pub fn split_events(
    mut buf: &[u8],
) -> impl Iterator<Item = Result<(EventHeader, &[u8]), DecodeError>> {
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

/// A header for a new event (size filled in by `write_event`, log_pos 0, no flags).
pub(crate) fn new_header(event_type: u8, timestamp: u32, server_id: u32) -> EventHeader {
    EventHeader {
        timestamp,
        event_type,
        server_id,
        event_size: 0,
        log_pos: 0,
        flags: 0,
    }
}

/// Checks the whole event `ev` and its type; returns its header and a reader over its body
/// (between the header and the checksum; offsets relative to the event start).
pub(crate) fn typed_body<'a>(
    ev: &'a [u8],
    expected: u8,
    what: &'static str,
) -> Result<(EventHeader, Reader<'a>), DecodeError> {
    let (h, ev) = check_event(ev)?;
    if h.event_type != expected {
        return Err(DecodeError::new(
            what,
            4,
            format!("event type {} is not {expected}", h.event_type),
        ));
    }
    Ok((
        h,
        Reader::new(&ev[HEADER_LEN..ev.len() - CHECKSUM_LEN], HEADER_LEN, what),
    ))
}

/// A rows event kept as bytes: decoding its rows needs the table map its table id names
/// (see [`crate::group::TableMapCache`] and [`crate::group::decode_group`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRowsEvent {
    pub kind: RowsKind,
    pub table_id: u64,
    /// The whole event, checksum included.
    pub bytes: Vec<u8>,
}

impl RawRowsEvent {
    pub fn decode(&self, table: &TableMap) -> Result<RowsEvent, DecodeError> {
        RowsEvent::decode(&self.bytes, table)
    }
}

/// Any event, decoded as far as it can be on its own.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    FormatDescription(FormatDescriptionEvent),
    Rotate(RotateEvent),
    GtidList(GtidListEvent),
    BinlogCheckpoint(BinlogCheckpointEvent),
    AnnotateRows(AnnotateRowsEvent),
    Query(QueryEvent),
    Xid(XidEvent),
    Gtid(GtidEvent),
    TableMap(TableMap),
    Rows(RawRowsEvent),
    /// Any other type (Stop, Heartbeat, Intvar, v2 rows, compressed events, ...): its body
    /// without the checksum.
    Unknown {
        header: EventHeader,
        body: Vec<u8>,
    },
}

/// Decodes the event at the start of `bytes`; returns it with its header and length.
pub fn decode_event_with_header(bytes: &[u8]) -> Result<(EventHeader, Event, usize), DecodeError> {
    let (h, ev) = check_event(bytes)?;
    let event = match h.event_type {
        event_type::FORMAT_DESCRIPTION => {
            Event::FormatDescription(FormatDescriptionEvent::decode(ev)?)
        }
        event_type::ROTATE => Event::Rotate(RotateEvent::decode(ev)?),
        event_type::GTID_LIST => Event::GtidList(GtidListEvent::decode(ev)?),
        event_type::BINLOG_CHECKPOINT => {
            Event::BinlogCheckpoint(BinlogCheckpointEvent::decode(ev)?)
        }
        event_type::ANNOTATE_ROWS => Event::AnnotateRows(AnnotateRowsEvent::decode(ev)?),
        event_type::QUERY => Event::Query(QueryEvent::decode(ev)?),
        event_type::XID => Event::Xid(XidEvent::decode(ev)?),
        event_type::GTID => Event::Gtid(GtidEvent::decode(ev)?),
        event_type::TABLE_MAP => Event::TableMap(TableMap::decode(ev)?),
        event_type::WRITE_ROWS_V1 | event_type::UPDATE_ROWS_V1 | event_type::DELETE_ROWS_V1 => {
            let (_, kind, table_id) = RowsEvent::peek(ev)?;
            Event::Rows(RawRowsEvent {
                kind,
                table_id,
                bytes: ev.to_vec(),
            })
        }
        _ => Event::Unknown {
            header: h,
            body: ev[HEADER_LEN..ev.len() - CHECKSUM_LEN].to_vec(),
        },
    };
    Ok((h, event, ev.len()))
}

/// Decodes the event at the start of `bytes`; returns it and its length in bytes.
pub fn decode_event(bytes: &[u8]) -> Result<(Event, usize), DecodeError> {
    decode_event_with_header(bytes).map(|(_, e, n)| (e, n))
}
