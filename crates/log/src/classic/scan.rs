//! The open-time scan of the last classic binlog file: validates every event, finds the GTID
//! state after its last complete group, and where an incomplete or damaged tail starts.
//!
//! Rules: an event that is cut by the end of the file, that is followed only by zero bytes,
//! or that is the very last event of the file may be a torn write: the tail from the start of
//! its group (or from the event itself, outside a group) is cut. A damaged event with more
//! data after it, a GTID event inside an unfinished group, or a damaged file header is
//! `Corrupt`, naming the file and the offset: never skipped.
//!
//! Invariants: the scan never changes the file; what it reports as the end is the end of the
//! last complete group, with every event before it size- and CRC-checked; damage it cannot tell
//! from a torn write is `Corrupt`, never cut.

use std::path::Path;

use onelog_binlog::event::{event_type, GtidListEvent, RotateEvent, BINLOG_MAGIC, HEADER_LEN};
use onelog_binlog::{Gtid, GtidState};

use super::format::{check_event_at, event_size, EventCheck, GroupTracker, FIRST_EVENT_OFFSET};
use crate::error::LogError;
use crate::fs::{read_full_at, File};

const CHUNK: usize = 1 << 20;

/// What the scan found.
#[derive(Debug, Clone)]
pub(crate) struct ScanResult {
    /// Gtid_list state + the GTIDs of the complete groups.
    pub state: GtidState,
    pub last_gtid: Option<Gtid>,
    /// GTID event of the last complete group (as in the file).
    pub last_gtid_event: Option<Vec<u8>>,
    /// Where the valid part ends (the file is cut here when shorter than its length).
    pub valid_end: u64,
    pub len: u64,
    /// The next file named by a Rotate event that ends the valid part.
    pub rotated_to: Option<String>,
    /// Low byte of the Format_description header flags.
    pub fde_flags: u8,
}

/// A window of file bytes read in large chunks.
struct Window<'a> {
    file: &'a dyn File,
    path: &'a Path,
    len: u64,
    start: u64,
    buf: Vec<u8>,
}

impl<'a> Window<'a> {
    /// Bytes `[off, min(off + n, len))`.
    fn get(&mut self, off: u64, n: usize) -> Result<&[u8], LogError> {
        let want_end = (off + n as u64).min(self.len);
        if off < self.start || want_end > self.start + self.buf.len() as u64 {
            let size = (want_end - off).max(CHUNK as u64).min(self.len - off) as usize;
            self.buf.resize(size, 0);
            let got = read_full_at(self.file, &mut self.buf, off)
                .map_err(|e| LogError::io(self.path, off, "read classic binlog", e))?;
            self.buf.truncate(got);
            self.start = off;
        }
        let a = (off - self.start) as usize;
        let b = ((want_end - self.start) as usize).min(self.buf.len());
        Ok(&self.buf[a.min(b)..b])
    }

    fn rest_is_zero(&mut self, mut off: u64) -> Result<bool, LogError> {
        while off < self.len {
            let n = ((self.len - off) as usize).min(CHUNK);
            let chunk = self.get(off, n)?;
            if chunk.is_empty() {
                return Ok(true);
            }
            if chunk.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            off += chunk.len() as u64;
        }
        Ok(true)
    }
}

/// Scans the file `path` (open as `file`). See the module docs.
pub(crate) fn scan_file(file: &dyn File, path: &Path) -> Result<ScanResult, LogError> {
    let len = file
        .len()
        .map_err(|e| LogError::io(path, 0, "stat classic binlog", e))?;
    let mut w = Window {
        file,
        path,
        len,
        start: 0,
        buf: Vec::new(),
    };
    let magic = w.get(0, BINLOG_MAGIC.len())?;
    if magic != BINLOG_MAGIC {
        return Err(LogError::corrupt(
            path,
            0,
            "not a binlog file: missing the magic \\xfebin",
        ));
    }
    let mut scan = Scan::new(path);
    let mut off = FIRST_EVENT_OFFSET;
    let mut tail_at: Option<u64> = None;
    while off < len {
        let Some(ev) = next_event(&mut w, off)? else {
            tail_at = Some(off);
            break;
        };
        scan.event(off, &ev)?;
        off += ev.len() as u64;
    }
    scan.finish(tail_at, len)
}

/// The checked event at `off`; None when the bytes there may be a torn write (cut by the
/// end of the file, or damaged but the last event or followed only by zeros).
fn next_event(w: &mut Window<'_>, off: u64) -> Result<Option<Vec<u8>>, LogError> {
    let head = w.get(off, HEADER_LEN)?;
    let need = if head.len() < HEADER_LEN {
        HEADER_LEN
    } else {
        event_size(head).max(HEADER_LEN)
    };
    let mut ev = w.get(off, need)?.to_vec();
    match check_event_at(&ev, off) {
        EventCheck::Ok(size) => {
            ev.truncate(size);
            Ok(Some(ev))
        }
        EventCheck::Incomplete { .. } => Ok(None),
        EventCheck::Bad(why) => {
            let last = off + need as u64 == w.len;
            if last || w.rest_is_zero(off)? {
                return Ok(None);
            }
            Err(LogError::corrupt(w.path, off, why))
        }
    }
}

/// What the scan has seen so far.
struct Scan<'a> {
    path: &'a Path,
    /// The Gtid_list's state, once seen.
    state: Option<GtidState>,
    header_done: bool,
    fde_flags: u8,
    /// The unfinished group: its offset, tracker and GTID event.
    group: Option<(u64, GroupTracker, Vec<u8>)>,
    last_gtid: Option<Gtid>,
    last_gtid_event: Option<Vec<u8>>,
    rotated_to: Option<String>,
    complete_state: GtidState,
}

impl<'a> Scan<'a> {
    fn new(path: &'a Path) -> Self {
        Scan {
            path,
            state: None,
            header_done: false,
            fde_flags: 0,
            group: None,
            last_gtid: None,
            last_gtid_event: None,
            rotated_to: None,
            complete_state: GtidState::new(),
        }
    }

    /// Takes the (checked) event `ev` at `off`.
    fn event(&mut self, off: u64, ev: &[u8]) -> Result<(), LogError> {
        let path = self.path;
        if self.rotated_to.is_some() {
            return Err(LogError::corrupt(
                path,
                off,
                "event after the Rotate event that ends the file",
            ));
        }
        match ev[4] {
            event_type::FORMAT_DESCRIPTION if off == FIRST_EVENT_OFFSET => self.fde_flags = ev[17],
            _ if off == FIRST_EVENT_OFFSET => {
                return Err(LogError::corrupt(
                    path,
                    off,
                    format!("first event has type {}, not Format_description", ev[4]),
                ))
            }
            event_type::GTID_LIST if self.state.is_none() && self.group.is_none() => {
                let l = GtidListEvent::decode(ev)
                    .map_err(|e| LogError::corrupt(path, off, format!("bad Gtid_list: {e}")))?;
                self.complete_state = l.to_state();
                self.state = Some(self.complete_state.clone());
            }
            event_type::BINLOG_CHECKPOINT if self.group.is_none() => {
                if self.state.is_some() {
                    self.header_done = true;
                }
            }
            event_type::GTID => self.group_start(off, ev)?,
            event_type::ROTATE if self.group.is_none() => {
                let r = RotateEvent::decode(ev)
                    .map_err(|e| LogError::corrupt(path, off, format!("bad Rotate: {e}")))?;
                self.rotated_to = Some(r.next_file);
            }
            _ => {
                if let Some((_, t, gev)) = &self.group {
                    if t.ends_with(ev) {
                        self.complete_state.record(t.gtid);
                        self.last_gtid = Some(t.gtid);
                        self.last_gtid_event = Some(gev.clone());
                        self.group = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// A GTID event at `off` starts a group (never inside another, never before the header).
    fn group_start(&mut self, off: u64, ev: &[u8]) -> Result<(), LogError> {
        let path = self.path;
        if let Some((start, _, _)) = &self.group {
            return Err(LogError::corrupt(
                path,
                off,
                format!("GTID event inside the unfinished event group at offset {start}"),
            ));
        }
        if self.state.is_none() {
            return Err(LogError::corrupt(
                path,
                off,
                "event group before the Gtid_list event",
            ));
        }
        self.header_done = true;
        let t = GroupTracker::start(ev).map_err(|e| LogError::corrupt(path, off, e))?;
        self.group = Some((off, t, ev.to_vec()));
        Ok(())
    }

    /// The result, once the events end at `tail_at` (None: at the end of the file, `len`).
    fn finish(self, tail_at: Option<u64>, len: u64) -> Result<ScanResult, LogError> {
        let valid_end = match (tail_at, &self.group) {
            (_, Some((start, _, _))) => *start,
            (Some(t), None) => t,
            (None, None) => len,
        };
        if self.state.is_none() || !self.header_done {
            return Err(LogError::corrupt(
                self.path,
                valid_end,
                "the file header (Format_description, Gtid_list, Binlog_checkpoint) is incomplete",
            ));
        }
        Ok(ScanResult {
            state: self.complete_state,
            last_gtid: self.last_gtid,
            last_gtid_event: self.last_gtid_event,
            valid_end,
            len,
            rotated_to: self.rotated_to,
            fde_flags: self.fde_flags,
        })
    }
}
