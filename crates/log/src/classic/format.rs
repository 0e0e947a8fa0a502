//! Byte-level rules of classic MariaDB binlog files shared by the writer, the open-time scan
//! and [`read_classic_file`]: checking one event (size, CRC32, `end_log_pos`), building the
//! file header events, rewriting a group's events for their place in a file, and deciding
//! where an event group ends.
//!
//! Facts (MariaDB 10.11, `sql/log.cc`, `sql/log_event*.cc`):
//! - a file starts with the magic `\xfebin`, then Format_description, Gtid_list,
//!   Binlog_checkpoint;
//! - every event's header `log_pos` (bytes 13..17) is the file offset just after the event;
//! - the CRC32 of the Format_description is computed with `LOG_EVENT_BINLOG_IN_USE_F`
//!   cleared, so that flag can be set at open and cleared at close by rewriting one byte;
//! - a group ends with an Xid, a `COMMIT` Query, or (GTID flag `FL_STANDALONE`) the Query
//!   that follows the GTID event.
//!
//! Invariant: nothing here trusts a length read from the data; every function returns an
//! error (or `Incomplete`) instead of panicking on bad input.

use onelog_binlog::event::format_description::LOG_EVENT_BINLOG_IN_USE_F;
use onelog_binlog::event::gtid::FL_STANDALONE;
use onelog_binlog::event::{
    crc32, event_type, reseal, BinlogCheckpointEvent, GtidEvent, GtidListEvent, QueryEvent,
    RotateEvent, BINLOG_MAGIC, CHECKSUM_LEN, HEADER_LEN,
};
use onelog_binlog::{Gtid, GtidState};

use crate::error::LogError;

/// Offset of the first event (after the magic).
pub const FIRST_EVENT_OFFSET: u64 = BINLOG_MAGIC.len() as u64;
/// File offset of the low byte of the Format_description header flags.
pub const FDE_FLAGS_OFFSET: u64 = FIRST_EVENT_OFFSET + 17;
const MIN_EVENT: usize = HEADER_LEN + CHECKSUM_LEN;

/// One event of a classic binlog file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassicEvent<'a> {
    /// File offset of the event's first byte.
    pub offset: u64,
    /// The whole event, header to CRC32 included.
    pub bytes: &'a [u8],
}

impl ClassicEvent<'_> {
    pub fn event_type(&self) -> u8 {
        self.bytes[4]
    }

    /// The header's `log_pos` (end of the event in its file).
    pub fn end_log_pos(&self) -> u32 {
        le32(self.bytes, 13)
    }
}

/// What checking the event at the start of a buffer found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EventCheck {
    /// A whole, valid event of this many bytes.
    Ok(usize),
    /// The buffer ends before the event does (`have` bytes of `need`; `need` is None when
    /// even the header is cut).
    Incomplete { have: usize, need: Option<usize> },
    /// The event is damaged.
    Bad(String),
}

pub(crate) fn le32(b: &[u8], at: usize) -> u32 {
    debug_assert!(
        b.len() >= at + 4,
        "le32 past the end: callers check lengths first"
    );
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The size field of an event header (`buf` holds at least a header).
pub(crate) fn event_size(buf: &[u8]) -> usize {
    le32(buf, 9) as usize
}

/// True when two whole events are equal but for `end_log_pos` and the CRC: the same event,
/// placed in an onelog record or in a classic file.
pub(crate) fn same_event(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    n == b.len()
        && n >= MIN_EVENT
        && a[..13] == b[..13]
        && a[17..n - CHECKSUM_LEN] == b[17..n - CHECKSUM_LEN]
}

/// The first event of an event group (its GTID event), as far as the bytes go.
pub(crate) fn first_event(events: &[u8]) -> &[u8] {
    let n = events.get(9..13).map_or(0, |_| event_size(events));
    &events[..n.min(events.len())]
}

/// CRC32 of an event as MariaDB verifies it (Format_description: with the in-use flag
/// cleared).
fn event_crc(ev: &[u8]) -> u32 {
    let body = &ev[..ev.len() - CHECKSUM_LEN];
    if ev[4] == event_type::FORMAT_DESCRIPTION && ev[17] & LOG_EVENT_BINLOG_IN_USE_F as u8 != 0 {
        let mut copy = body.to_vec();
        copy[17] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        crc32(&copy)
    } else {
        crc32(body)
    }
}

/// Checks the event at the start of `buf`, which lies at file offset `offset`: its size, its
/// CRC32 and that its `log_pos` is the offset after it.
pub(crate) fn check_event_at(buf: &[u8], offset: u64) -> EventCheck {
    if buf.len() < HEADER_LEN {
        return EventCheck::Incomplete {
            have: buf.len(),
            need: None,
        };
    }
    let size = event_size(buf);
    if size < MIN_EVENT {
        return EventCheck::Bad(format!("event size {size} is smaller than {MIN_EVENT}"));
    }
    if size > buf.len() {
        return EventCheck::Incomplete {
            have: buf.len(),
            need: Some(size),
        };
    }
    let ev = &buf[..size];
    let stored = le32(ev, size - CHECKSUM_LEN);
    let computed = event_crc(ev);
    if stored != computed {
        return EventCheck::Bad(format!(
            "bad CRC32 of event type {}: stored {stored:#010x}, computed {computed:#010x}",
            ev[4]
        ));
    }
    let end = offset + size as u64;
    let log_pos = u64::from(le32(ev, 13));
    if log_pos != end {
        return EventCheck::Bad(format!(
            "end_log_pos {log_pos} of event type {} is not the end of the event ({end})",
            ev[4]
        ));
    }
    EventCheck::Ok(size)
}

/// Reads a classic binlog file held in memory: the magic, then every event, each checked by
/// length, CRC32 and `end_log_pos`. Stops after the first error, which names `name` and the
/// byte offset. See [`ClassicEvent`].
pub fn read_classic_file<'a>(
    name: &str,
    data: &'a [u8],
) -> impl Iterator<Item = Result<ClassicEvent<'a>, LogError>> {
    let name = name.to_string();
    let mut offset: usize = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if offset == 0 {
            if data.len() < BINLOG_MAGIC.len() || data[..BINLOG_MAGIC.len()] != BINLOG_MAGIC {
                done = true;
                return Some(Err(LogError::corrupt(
                    &name,
                    0,
                    "not a binlog file: missing the magic \\xfebin",
                )));
            }
            offset = BINLOG_MAGIC.len();
        }
        if offset >= data.len() {
            done = true;
            return None;
        }
        let at = offset as u64;
        match check_event_at(&data[offset..], at) {
            EventCheck::Ok(size) => {
                offset += size;
                Some(Ok(ClassicEvent {
                    offset: at,
                    bytes: &data[at as usize..offset],
                }))
            }
            EventCheck::Incomplete { have, need } => {
                done = true;
                let what = match need {
                    Some(n) => format!("truncated event: {n} bytes but the file ends after {have}"),
                    None => format!("truncated event header: the file ends after {have} bytes"),
                };
                Some(Err(LogError::corrupt(&name, at, what)))
            }
            EventCheck::Bad(why) => {
                done = true;
                Some(Err(LogError::corrupt(&name, at, why)))
            }
        }
    })
}

/// Sets `log_pos` of the whole event `ev` and recomputes its CRC32.
pub(crate) fn seal(ev: &mut [u8], end_pos: u64) {
    debug_assert!(ev.len() >= MIN_EVENT && event_size(ev) == ev.len());
    ev[13..17].copy_from_slice(&(end_pos as u32).to_le_bytes());
    reseal(ev);
}

/// The events at the start of a file: magic, Format_description (in-use flag set),
/// Gtid_list(`state`), Binlog_checkpoint(`name`), each with its real `log_pos`.
pub(crate) fn file_header(
    fde: &[u8],
    state: &GtidState,
    name: &str,
    server_id: u32,
    timestamp: u32,
) -> Result<Vec<u8>, LogError> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(&BINLOG_MAGIC);
    let push = |out: &mut Vec<u8>, ev: &mut Vec<u8>| {
        let start = out.len();
        let end = (start + ev.len()) as u64;
        // Timestamps: header bytes 0..4.
        ev[0..4].copy_from_slice(&timestamp.to_le_bytes());
        seal(ev, end);
        out.extend_from_slice(ev);
    };
    let mut ev = fde.to_vec();
    if ev.len() < MIN_EVENT || ev[4] != event_type::FORMAT_DESCRIPTION {
        return Err(LogError::InvalidRecord(
            "the Format_description event for a classic binlog is malformed".into(),
        ));
    }
    ev[17] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
    push(&mut out, &mut ev);
    // The CRC covers the flag cleared (see the module docs).
    out[FDE_FLAGS_OFFSET as usize] |= LOG_EVENT_BINLOG_IN_USE_F as u8;
    let mut ev = Vec::new();
    GtidListEvent::from_state(state)
        .encode(timestamp, server_id, &mut ev)
        .map_err(|e| LogError::InvalidRecord(format!("Gtid_list event: {e}")))?;
    push(&mut out, &mut ev);
    let mut ev = Vec::new();
    BinlogCheckpointEvent {
        file: name.to_string(),
    }
    .encode(timestamp, server_id, &mut ev);
    push(&mut out, &mut ev);
    Ok(out)
}

/// A Rotate event naming `next`, to be written at `offset`.
pub(crate) fn rotate_event(next: &str, offset: u64, server_id: u32, timestamp: u32) -> Vec<u8> {
    let mut ev = Vec::new();
    RotateEvent {
        position: FIRST_EVENT_OFFSET,
        next_file: next.to_string(),
    }
    .encode(timestamp, server_id, &mut ev);
    let end = offset + ev.len() as u64;
    seal(&mut ev, end);
    ev
}

/// Tracks an event group while its events go by.
#[derive(Debug, Clone)]
pub(crate) struct GroupTracker {
    pub gtid: Gtid,
    standalone: bool,
}

impl GroupTracker {
    /// Starts a group at its GTID event.
    pub fn start(gtid_event: &[u8]) -> Result<Self, String> {
        let g = GtidEvent::decode(gtid_event).map_err(|e| format!("bad GTID event: {e}"))?;
        Ok(GroupTracker {
            gtid: g.gtid,
            standalone: g.flags2 & FL_STANDALONE != 0,
        })
    }

    /// True when `ev` is an Xid, or a Query of a standalone group.
    pub fn ends_without_decoding(&self, ev: &[u8]) -> bool {
        ev[4] == event_type::XID || (ev[4] == event_type::QUERY && self.standalone)
    }

    /// True when the (valid, whole) event `ev` of this group ends it.
    pub fn ends_with(&self, ev: &[u8]) -> bool {
        match ev[4] {
            event_type::XID => true,
            event_type::QUERY => {
                self.standalone
                    || QueryEvent::decode(ev).is_ok_and(|q| q.query.eq_ignore_ascii_case("COMMIT"))
            }
            _ => false,
        }
    }
}

/// Copies the event group `events` (as stored in onelog's log records) into `out` for file
/// offset `offset`: every event's `log_pos` and CRC32 rewritten. Checks the group: whole
/// events with valid CRCs, a GTID event first and only first, and a last event that ends the
/// group. Returns its GTID. On error `out` may hold part of the group.
pub(crate) fn place_group(events: &[u8], offset: u64, out: &mut Vec<u8>) -> Result<Gtid, String> {
    let mut rest = events;
    let mut at = 0usize;
    let first = out.len();
    let mut tracker: Option<GroupTracker> = None;
    let mut complete = false;
    while !rest.is_empty() {
        if complete {
            return Err(format!(
                "event at byte {at} of the group follows the event that ended the group"
            ));
        }
        let (_, ev) = onelog_binlog::event::check_event(rest)
            .map_err(|e| format!("event at byte {at} of the group: {e}"))?;
        let size = ev.len();
        match &tracker {
            None => {
                if ev[4] != event_type::GTID {
                    return Err(format!(
                        "the group starts with event type {}, not a GTID event",
                        ev[4]
                    ));
                }
                tracker = Some(GroupTracker::start(ev)?);
            }
            Some(t) => {
                if ev[4] == event_type::GTID {
                    return Err(format!("second GTID event at byte {at} of the group"));
                }
                // Only the last event can be a `COMMIT` Query (decoding every Query of a
                // statement-based group would allocate); an Xid or the Query of a standalone
                // group anywhere ends the group.
                complete = if size == rest.len() {
                    t.ends_with(ev)
                } else {
                    t.ends_without_decoding(ev)
                };
            }
        }
        let start = out.len();
        out.extend_from_slice(ev);
        let end = offset + (at + size) as u64;
        seal(&mut out[start..], end);
        at += size;
        rest = &rest[size..];
    }
    debug_assert_eq!(
        out.len() - first,
        events.len(),
        "every byte of the group placed"
    );
    match tracker {
        None => Err("empty event group".to_string()),
        Some(_) if !complete => Err(
            "the group does not end with an Xid, a COMMIT or a standalone statement".to_string(),
        ),
        Some(t) => Ok(t.gtid),
    }
}

/// The file name of number `n`: `<basename>.000001`.
pub(crate) fn file_name(basename: &str, n: u64) -> String {
    format!("{basename}.{n:06}")
}

/// The number of `name` if it is `<basename>.<6 or more digits>`.
pub(crate) fn parse_file_name(basename: &str, name: &str) -> Option<u64> {
    let digits = name.strip_prefix(basename)?.strip_prefix('.')?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
