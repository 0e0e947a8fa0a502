//! The classic view of the log: the binlog *files and offsets* that replicas, `mariadb-binlog`
//! and CDC clients think in (DESIGN.md §7, "one position map").
//!
//! Owns the mapping from segments to virtual classic files and every offset in them:
//! - segment N is the virtual file `binlog.NNNNNN` ([`view_file_name`]);
//! - the file holds what `mariadbd` would have written (`crate::classic` layout): the magic,
//!   the segment's Format_description, a Gtid_list of the segment header's GTID state and a
//!   Binlog_checkpoint naming the file, all at the header FDE's timestamp and server id; then
//!   the event group of every Transaction/Ddl record of the segment, back to back, each
//!   event's `end_log_pos` its true end offset and its CRC32 recomputed; when the segment is
//!   sealed, a Rotate event naming the next file (timestamp of the next segment's FDE);
//! - GtidState, SyncMark and CommitMark records take no bytes in the view.
//!
//! So offsets are contiguous (each event ends where the next begins) and deterministic: the
//! dump stream ([`ViewReader`]), SHOW MASTER STATUS / SHOW BINARY LOGS ([`crate::Log::view_sizes`],
//! [`crate::Log::view_end`]), SHOW BINLOG EVENTS and `BINLOG_GTID_POS()` all read this
//! module, so a position read anywhere is valid everywhere.
//!
//! Only durable records are in the view (a [`ViewReader`] reads with the default
//! [`ReaderOptions`]): a replica is never ahead of a crashed primary.
//!
//! Sizes are found by reading the segment (the view is not stored); `view_cache::ViewSizes` keeps, per
//! segment, the LSN and offset reached so far, so a repeated SHOW MASTER STATUS reads only the
//! records appended since the last one.
//!
//! Invariants: the items of a [`ViewReader`] are contiguous: each starts at the offset where
//! the previous one of the same file ended, and a file starts at offset 4 (asserted); offsets
//! stay below 4 GiB (a segment larger than that is refused with an error, never wrapped).

use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::format_description::{clear_created, LOG_EVENT_BINLOG_IN_USE_F};
use onelog_binlog::{Gtid, GtidPos, GtidState};

use crate::classic::format::{file_header, place_group, rotate_event, FDE_FLAGS_OFFSET};
use crate::error::LogError;
use crate::inner::Inner;
use crate::locks::lock;
use crate::seglist::SegmentMeta;
use crate::segment::SegmentHeader;
use crate::view_cache::Measured;
use crate::{LogReader, Lsn, ReadStart, ReaderOptions, Record, RecordKind};

/// Base name of the virtual files.
pub const VIEW_BASENAME: &str = "binlog";

/// Offset of the first event of a file (after the 4-byte magic).
pub const FIRST_EVENT_OFFSET: u64 = 4;

/// The virtual file name of segment `n`: `binlog.000001`.
pub fn view_file_name(n: u64) -> String {
    format!("{VIEW_BASENAME}.{n:06}")
}

/// The segment number of a virtual file name (`binlog.NNNNNN`, six or more digits).
pub fn parse_view_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(VIEW_BASENAME)?.strip_prefix('.')?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// One piece of the view, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewItem {
    /// The start of virtual file `number`: Format_description, Gtid_list and
    /// Binlog_checkpoint placed from offset 4 (`events`, without the magic).
    FileStart {
        number: u64,
        name: String,
        /// The GTID state at the start of the file (the Gtid_list's content).
        state: GtidState,
        events: Vec<u8>,
    },
    /// The event group of one record, placed at `offset` of file `number`.
    Group {
        number: u64,
        offset: u64,
        gtid: Gtid,
        kind: RecordKind,
        /// The record's LSN and the LSN after it.
        lsn: Lsn,
        end_lsn: Lsn,
        events: Vec<u8>,
    },
    /// The Rotate event ending file `number` at `offset`, naming the next file.
    Rotate {
        number: u64,
        offset: u64,
        next: String,
        event: Vec<u8>,
    },
}

impl ViewItem {
    /// The events of this item (whole events, `end_log_pos` and CRC set).
    pub fn events(&self) -> &[u8] {
        match self {
            ViewItem::FileStart { events, .. } | ViewItem::Group { events, .. } => events,
            ViewItem::Rotate { event, .. } => event,
        }
    }
}

/// The header events of the virtual file of a segment with this header: in-use flag clear.
/// The one definition of a file's start: the dump, the mirror and `onelog binlog
/// --to-binlog` all use it.
pub fn file_start(number: u64, header: &SegmentHeader) -> Result<ViewItem, LogError> {
    file_start_with_state(number, header, &header.state)
}

/// [`file_start`] with another GTID state in the Gtid_list (an export that starts after the
/// segment's first group: the state just before its first group).
pub fn file_start_with_state(
    number: u64,
    header: &SegmentHeader,
    state: &GtidState,
) -> Result<ViewItem, LogError> {
    let name = view_file_name(number);
    let (ts, server_id) = fde_stamp(&header.fde)?;
    // `created` 0: a virtual file does not begin at a server start, and a non-zero value
    // tells a replica the primary restarted (it would drop its temporary tables).
    let mut fde = header.fde.clone();
    clear_created(&mut fde);
    let mut bytes = file_header(&fde, state, &name, server_id, ts)?;
    // The CRC was computed with the flag cleared; a closed file shows it cleared.
    bytes[FDE_FLAGS_OFFSET as usize] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
    let events = bytes.split_off(FIRST_EVENT_OFFSET as usize);
    Ok(ViewItem::FileStart {
        number,
        name,
        state: state.clone(),
        events,
    })
}

/// The timestamp of an event group: its first event's header timestamp (0 when too short).
pub fn group_timestamp(events: &[u8]) -> u32 {
    events
        .get(0..4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Places the event group `events` of a record (as stored in the log) at `offset` of view
/// file `number`: appends its events to `out`, each `end_log_pos` its true end and its CRC32
/// recomputed. Returns the group's GTID. A malformed group or an offset past 4 GiB is an
/// error (`out` may then hold part of the group).
pub fn place(number: u64, offset: u64, events: &[u8], out: &mut Vec<u8>) -> Result<Gtid, LogError> {
    let end = offset + events.len() as u64;
    if end > u32::MAX as u64 {
        return Err(too_big(number, end));
    }
    place_group(events, offset, out).map_err(|why| {
        LogError::InvalidRecord(format!(
            "group at offset {offset} of {}: {why}",
            view_file_name(number)
        ))
    })
}

/// The Rotate event that ends view file `number` (segment header `header`) at `offset`,
/// naming file `next` (segment header `next_header`): the server id of this file's
/// Format_description; the timestamp of the next one's, or when that is 0 the timestamp of
/// the file's last group (`last_ts`, [`group_timestamp`]), or 1. Never 0: mariadb-binlog
/// and replicas take a Rotate with timestamp 0 for the artificial one a dump sends, and
/// would drop it from the file.
pub fn rotate(
    number: u64,
    offset: u64,
    header: &SegmentHeader,
    next: u64,
    next_header: &SegmentHeader,
    last_ts: u32,
) -> Result<ViewItem, LogError> {
    let (next_ts, _) = fde_stamp(&next_header.fde)?;
    let ts = [next_ts, last_ts, 1]
        .into_iter()
        .find(|&t| t != 0)
        .unwrap_or(1);
    let (_, server_id) = fde_stamp(&header.fde)?;
    let name = view_file_name(next);
    let event = rotate_event(&name, offset, server_id, ts);
    if offset + event.len() as u64 > u32::MAX as u64 {
        return Err(too_big(number, offset));
    }
    Ok(ViewItem::Rotate {
        number,
        offset,
        next: name,
        event,
    })
}

/// Timestamp and server id of a stored Format_description event.
fn fde_stamp(fde: &[u8]) -> Result<(u32, u32), LogError> {
    if fde.len() < 19 {
        return Err(LogError::InvalidRecord(
            "the segment's Format_description event is shorter than its header".into(),
        ));
    }
    let le = |at: usize| u32::from_le_bytes([fde[at], fde[at + 1], fde[at + 2], fde[at + 3]]);
    Ok((le(0), le(5)))
}

/// What the view knows of one segment.
#[derive(Clone, Debug)]
struct SegRef {
    number: u64,
    start_lsn: Lsn,
    end_lsn: Option<Lsn>,
    path: std::path::PathBuf,
}

impl From<&SegmentMeta> for SegRef {
    fn from(s: &SegmentMeta) -> SegRef {
        SegRef {
            number: s.number,
            start_lsn: s.start_lsn,
            end_lsn: s.end_lsn,
            path: s.path.clone(),
        }
    }
}

fn segment_holding(inner: &Inner, lsn: Lsn) -> Option<SegRef> {
    let segs = inner.segments_read();
    segs.iter()
        .rev()
        .find(|s| s.start_lsn <= lsn)
        .map(SegRef::from)
}

fn segment_numbered(inner: &Inner, number: u64) -> Option<SegRef> {
    let segs = inner.segments_read();
    segs.iter().find(|s| s.number == number).map(SegRef::from)
}

fn read_header(inner: &Inner, seg: &SegRef) -> Result<SegmentHeader, LogError> {
    let file = inner.fs.open(&seg.path, false).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            LogError::InvalidPosition {
                lsn: seg.start_lsn,
                reason: format!("segment {} was purged", seg.path.display()),
            }
        } else {
            LogError::io(&seg.path, 0, "open segment", e)
        }
    })?;
    SegmentHeader::read(file.as_ref(), &seg.path)
}

fn too_big(number: u64, offset: u64) -> LogError {
    LogError::InvalidRecord(format!(
        "{} would pass 4 GiB at offset {offset}; classic binlog offsets are 32-bit",
        view_file_name(number)
    ))
}

/// A reader of the classic view: yields the items of the virtual files in order, from the
/// start of a file, crossing into the next file (Rotate, then its FileStart) as the log
/// moves on. Only durable records.
pub struct ViewReader {
    inner: Arc<Inner>,
    reader: LogReader,
    seg: SegRef,
    /// Offset where the next item of the current file starts.
    offset: u64,
    /// The current file's header events are yet to be yielded.
    header_due: bool,
    /// Timestamp of the current file's last group so far (0: none), for its Rotate.
    last_ts: u32,
    /// A record of the next segment, read before the Rotate and FileStart it follows.
    held: Option<Record>,
    /// Items ready to be yielded (a Rotate followed by a FileStart).
    ready: std::collections::VecDeque<ViewItem>,
    header: SegmentHeader,
}

impl ViewReader {
    pub(crate) fn from_file(inner: Arc<Inner>, number: u64) -> Result<ViewReader, LogError> {
        let seg = segment_numbered(&inner, number).ok_or_else(|| LogError::InvalidPosition {
            lsn: 0,
            reason: format!("{} is not among the binlog files", view_file_name(number)),
        })?;
        let header = read_header(&inner, &seg)?;
        let reader = LogReader::new(
            inner.clone(),
            ReadStart::Lsn(seg.start_lsn),
            ReaderOptions::default(),
        )?;
        Ok(ViewReader {
            inner,
            reader,
            seg,
            offset: FIRST_EVENT_OFFSET,
            header_due: true,
            last_ts: 0,
            held: None,
            ready: Default::default(),
            header,
        })
    }

    /// The virtual file the next item belongs to, and its offset there.
    pub fn position(&self) -> (u64, u64) {
        match self.ready.front() {
            Some(ViewItem::FileStart { number, .. }) => (*number, FIRST_EVENT_OFFSET),
            _ => (self.seg.number, self.offset),
        }
    }

    /// The LSN before which every record has been yielded: the log reader's position, or the
    /// LSN of a record read but held back behind a Rotate and the next file's start.
    pub fn done_lsn(&self) -> Lsn {
        self.held.as_ref().map_or(self.reader.position(), |r| r.lsn)
    }

    /// The next item, waiting up to `timeout` for the log's durable end to move; `Ok(None)`
    /// when there is none yet.
    pub fn next_wait(&mut self, timeout: Duration) -> Result<Option<ViewItem>, LogError> {
        if let Some(item) = self.ready.pop_front() {
            return Ok(Some(item));
        }
        if self.header_due {
            self.header_due = false;
            let item = file_start(self.seg.number, &self.header)?;
            self.offset = FIRST_EVENT_OFFSET + item.events().len() as u64;
            return Ok(Some(item));
        }
        let rec = match self.held.take() {
            Some(r) => r,
            None => match self.reader.next_wait(timeout)? {
                Some(r) => r,
                None => return self.rotate_if_sealed(),
            },
        };
        if self.beyond_segment(rec.lsn) {
            self.held = Some(rec);
            return self.cross();
        }
        self.place(rec).map(Some)
    }

    /// True when `lsn` lies past the current segment (it is sealed and the record belongs to
    /// a later one).
    fn beyond_segment(&mut self, lsn: Lsn) -> bool {
        if self.seg.end_lsn.is_none() {
            if let Some(s) = segment_numbered(&self.inner, self.seg.number) {
                self.seg.end_lsn = s.end_lsn;
            }
        }
        self.seg.end_lsn.is_some_and(|end| lsn >= end)
    }

    /// No record is waiting: if the current segment is sealed and fully read, move on.
    fn rotate_if_sealed(&mut self) -> Result<Option<ViewItem>, LogError> {
        let durable = lock(&self.inner.progress).durable();
        let pos = self.reader.position();
        if self.beyond_segment(pos) && durable >= pos {
            return self.cross();
        }
        Ok(None)
    }

    /// Ends the current file with a Rotate and queues the next file's start.
    fn cross(&mut self) -> Result<Option<ViewItem>, LogError> {
        let end = self.seg.end_lsn.unwrap_or(self.reader.position());
        let next = segment_holding(&self.inner, end)
            .filter(|s| s.start_lsn == end)
            .ok_or_else(|| LogError::InvalidPosition {
                lsn: end,
                reason: format!(
                    "the segment after {} is missing",
                    view_file_name(self.seg.number)
                ),
            })?;
        let next_header = read_header(&self.inner, &next)?;
        let rotate = rotate(
            self.seg.number,
            self.offset,
            &self.header,
            next.number,
            &next_header,
            self.last_ts,
        )?;
        self.last_ts = 0;
        let start = file_start(next.number, &next_header)?;
        self.offset = FIRST_EVENT_OFFSET + start.events().len() as u64;
        self.seg = next;
        self.header = next_header;
        self.ready.push_back(start);
        Ok(Some(rotate))
    }

    fn place(&mut self, rec: Record) -> Result<ViewItem, LogError> {
        let mut events = Vec::with_capacity(rec.events.len());
        let gtid = place(self.seg.number, self.offset, &rec.events, &mut events).map_err(|e| {
            let gtid = rec.gtid.map_or_else(|| "-".to_string(), |g| g.to_string());
            LogError::InvalidRecord(format!("record {gtid} at LSN {}: {e}", rec.lsn))
        })?;
        let offset = self.offset;
        self.offset = offset + events.len() as u64;
        self.last_ts = group_timestamp(&events);
        Ok(ViewItem::Group {
            number: self.seg.number,
            offset,
            gtid,
            kind: rec.kind,
            lsn: rec.lsn,
            end_lsn: rec.end_lsn,
            events,
        })
    }
}

/// The offset after the header events of `seg`'s file (where its first group goes).
fn header_end(inner: &Inner, seg: &SegRef) -> Result<u64, LogError> {
    let header = read_header(inner, seg)?;
    Ok(FIRST_EVENT_OFFSET + file_start(seg.number, &header)?.events().len() as u64)
}

/// From the record boundary `lsn` at view offset `offset`, steps over the durable records
/// before `limit` and returns the LSN and offset reached (each record adds its events'
/// bytes). The records are skimmed, not read into memory (`LogReader::next_skimmed`): the
/// first SHOW MASTER STATUS or SHOW GLOBAL STATUS after a big transaction costs a read of
/// its record, not a copy of it.
fn advance(
    inner: &Arc<Inner>,
    mut lsn: Lsn,
    mut offset: u64,
    limit: Lsn,
) -> Result<(Lsn, u64), LogError> {
    if lsn >= limit {
        return Ok((lsn, offset));
    }
    let mut r = LogReader::at_boundary(inner.clone(), lsn)?;
    while let Some((at, end, skim)) = r.next_skimmed()? {
        if at >= limit {
            break;
        }
        offset += skim.events_len as u64;
        lsn = end;
    }
    Ok((lsn.max(r.position().min(limit)), offset))
}

/// Size of the virtual file of `seg` up to the durable end (with its Rotate when sealed),
/// measured from where the cache (`view_cache::ViewSizes`, kept in `Shared`) left off.
fn measured_size(inner: &Arc<Inner>, seg: &SegRef) -> Result<u64, LogError> {
    let sizes = &inner.view_sizes;
    let cached = sizes.get(seg.number, seg.start_lsn);
    if let Some(size) = cached.and_then(|m| m.sealed_size) {
        return Ok(size);
    }
    let mut m = match cached {
        Some(m) => m,
        None => Measured {
            start_lsn: seg.start_lsn,
            lsn: seg.start_lsn,
            offset: header_end(inner, seg)?,
            sealed_size: None,
        },
    };
    let durable = lock(&inner.progress).durable();
    let limit = seg.end_lsn.map_or(durable, |e| e.min(durable));
    (m.lsn, m.offset) = advance(inner, m.lsn, m.offset, limit)?;
    let size = match seg.end_lsn {
        Some(end) if durable >= end => {
            let next = segment_holding(inner, end).filter(|s| s.start_lsn == end);
            let next_name = view_file_name(next.map_or(seg.number + 1, |s| s.number));
            let rotate = rotate_event(&next_name, m.offset, 0, 0).len() as u64;
            m.sealed_size = Some(m.offset + rotate);
            m.offset + rotate
        }
        _ => m.offset,
    };
    if size > u32::MAX as u64 {
        return Err(too_big(seg.number, size));
    }
    sizes.put(seg.number, m);
    Ok(size)
}

/// A binlog file of the view: its name and size (SHOW BINARY LOGS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewFile {
    pub number: u64,
    pub name: String,
    pub size: u64,
}

impl crate::Log {
    /// A reader of the classic view from the start of virtual file `number`.
    pub fn view_reader(&self, number: u64) -> Result<ViewReader, LogError> {
        ViewReader::from_file(self.inner().clone(), number)
    }

    /// The virtual files, oldest first, with their sizes up to the durable end.
    pub fn view_files(&self) -> Result<Vec<ViewFile>, LogError> {
        let inner = self.inner();
        let segs: Vec<SegRef> = inner.segments_read().iter().map(SegRef::from).collect();
        let numbers: Vec<u64> = segs.iter().map(|s| s.number).collect();
        inner.view_sizes.retain(&numbers);
        segs.iter()
            .map(|s| {
                Ok(ViewFile {
                    number: s.number,
                    name: view_file_name(s.number),
                    size: measured_size(inner, s)?,
                })
            })
            .collect()
    }

    /// The current virtual file and the offset of the durable end in it (SHOW MASTER
    /// STATUS).
    pub fn view_end(&self) -> Result<ViewFile, LogError> {
        let inner = self.inner();
        let seg = inner
            .segments_read()
            .last()
            .map(SegRef::from)
            .ok_or(LogError::Closed)?;
        Ok(ViewFile {
            number: seg.number,
            name: view_file_name(seg.number),
            size: measured_size(inner, &seg)?,
        })
    }

    /// Where `lsn` (a record boundary) is in the classic view: its file and the offset of the
    /// first event at or after it (the end of everything before it). Reads the file's records
    /// up to `lsn` (for log lines, not hot paths).
    pub fn view_position(&self, lsn: Lsn) -> Result<(String, u64), LogError> {
        let inner = self.inner();
        let seg = segment_holding(inner, lsn).ok_or_else(|| LogError::InvalidPosition {
            lsn,
            reason: "before the oldest binlog file".into(),
        })?;
        let (_, offset) = advance(inner, seg.start_lsn, header_end(inner, &seg)?, lsn)?;
        Ok((view_file_name(seg.number), offset))
    }

    /// The virtual file a GTID start position begins in (MariaDB's `gtid_find_binlog_file`):
    /// the newest file whose starting GTID state is contained in `pos`. `None`: every such
    /// file was purged.
    pub fn view_file_for_gtid(&self, pos: &GtidPos) -> Option<u64> {
        let segs = self.inner().segments_read();
        segs.iter()
            .rev()
            .find(|s| s.state.pos().iter().all(|g| pos.contains(g)))
            .map(|s| s.number)
    }

    /// The GTID state at the start of every present virtual file, oldest first.
    pub fn view_file_states(&self) -> Vec<(u64, GtidState)> {
        let segs = self.inner().segments_read();
        segs.iter()
            .map(|s| (s.number, (*s.state).clone()))
            .collect()
    }
}

/// Event boundaries of `events` placed at `start`: every event's start offset after the
/// first, and the end (whole events: the view made them).
fn boundaries(start: u64, events: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let len = events
            .get(at + 9..at + 13)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)?;
        if len == 0 || at + len > events.len() {
            return None;
        }
        at += len;
        Some(start + at as u64)
    })
}

impl crate::Log {
    /// `BINLOG_GTID_POS(file, pos)` (MariaDB's `gtid_state_from_pos`): the GTID state at
    /// offset `offset` of view file `number`: the file's Gtid_list state plus the GTID of
    /// every group whose GTID event starts before `offset` (an offset below 4 is 4). `None`
    /// when the file is not present or `offset` is not an event boundary of the file's
    /// durable part (its end included).
    pub fn view_gtid_pos(&self, number: u64, offset: u64) -> Result<Option<GtidState>, LogError> {
        let offset = offset.max(FIRST_EVENT_OFFSET);
        let mut r = match self.view_reader(number) {
            Ok(r) => r,
            Err(LogError::InvalidPosition { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut state = GtidState::new();
        while let Some(item) = match r.next_wait(Duration::ZERO) {
            Err(LogError::Closed) => Ok(None),
            other => other,
        }? {
            let start = match &item {
                ViewItem::FileStart { number: n, .. } if *n != number => break,
                ViewItem::FileStart { state: s, .. } => {
                    state = s.clone();
                    FIRST_EVENT_OFFSET
                }
                ViewItem::Group { offset, .. } | ViewItem::Rotate { offset, .. } => *offset,
            };
            if start == offset {
                return Ok(Some(state));
            }
            if start > offset {
                return Ok(None);
            }
            // `start < offset`: a group's GTID event lies before `offset`.
            if let ViewItem::Group { gtid, .. } = &item {
                state.record(*gtid);
            }
            let mut ends = boundaries(start, item.events());
            if ends.any(|b| b == offset) {
                return Ok(Some(state));
            }
        }
        Ok(None)
    }
}
