//! One COM_BINLOG_DUMP: the stream a replica or a binlog reader gets (REPLICATION_FACTS.md
//! §1.4–§1.9, §1.11).
//!
//! Owns [`run`] and the per-dump state ([`Sender`]). The stream is the log's classic view
//! (`onelog_log::view`), read with a [`ViewReader`]: only durable records, one at a time.
//! Per file the reader enters: a fake Rotate (timestamp 0, ARTIFICIAL), the file's
//! Format_description, Gtid_list and Binlog_checkpoint, then its groups, then its Rotate.
//!
//! - GTID mode (`@slave_connect_state` set, even to ''): the requested position is validated
//!   ([`gtid_start::validate`]), the start file is the newest whose starting state the position
//!   contains, groups the reader has are skipped ([`gtid_start::Skip`]) and a fake Gtid_list
//!   then moves the reader's position past them. The request's file and offset are ignored.
//! - File mode: from `position` of `file` (empty: the oldest file); a start after 4 sends the
//!   fake Rotate and a Format_description with `log_pos` 0, then the events from `position`,
//!   which must be where an event starts.
//! - Non-blocking (flag 1 or server id 0): EOF at the durable end. Blocking: waits, with
//!   heartbeats every `@master_heartbeat_period` of silence.
//! - Annotate_rows events go only to readers that set dump flag 2 (the next event's `log_pos`
//!   covers the hole, as MariaDB).
//! - Semi-sync readers (`@rpl_semi_sync_slave`): every event packet carries `0xEF, flag`;
//!   flag 1 on a transaction's last event when the [`AckSink`] wants an ACK; ACKs are read on
//!   the connection's reader thread and mapped back to the LSN sent at that position.
//!
//! Ends: EOF (non-blocking), an ERR 1236 with MariaDB's text ([`DumpEnd::Fatal`]), KILL or a
//! newer dump from the same server id, the client gone, or the log closed.
//!
//! Purges: the dump pins the start of the file it opens before opening it
//! (`Log::pin_reader`) and moves the pin to its reader's position as it goes, so PURGE and
//! expiry never remove a segment it still has to read (PURGE stops before it, as MariaDB).
//!
//! Invariants: within a file, the offsets sent are contiguous (each event's `log_pos` is the
//! end of the previous one sent or skipped, asserted); at most [`ACK_WINDOW`] ACK positions
//! are remembered; a dump holds no lock while it writes to the socket.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use onelog_binlog::event::HEADER_LEN;
use onelog_binlog::GtidPos;
use onelog_log::view::{parse_view_file_name, view_file_name, ViewItem, ViewReader};
use onelog_log::{Log, LogError, ReaderPin};
use onelog_protocol::errors::ER_MASTER_FATAL_ERROR_READING_BINLOG;

use super::artificial::{fake_gtid_list, fake_rotate, fde_mid_file, heartbeat, Checksum};
use super::gtid_start::{self, Fatal, Skip, Verdict};
use super::packets::{DumpRequest, SemiSyncAck, SEMI_SYNC_MAGIC};
use super::{AckSink, DumpGuard, DumpIo, PacketSink, DUMP_TICK};

/// Transaction ends remembered for mapping ACKs back to LSNs.
pub const ACK_WINDOW: usize = 4096;

const ANNOTATE_ROWS: u8 = 160;
const FORMAT_DESCRIPTION: u8 = 15;
/// `MARIA_SLAVE_CAPABILITY_GTID`.
const CAPABILITY_GTID: u64 = 4;

const STATE_SENDING: &str = "Sending binlog event to slave";
const STATE_WAITING: &str = "Master has sent all binlog to slave; waiting for more updates";

/// What the session knew when the dump was asked for.
#[derive(Clone, Debug)]
pub struct DumpParams {
    pub request: DumpRequest,
    /// `@master_binlog_checksum`.
    pub checksum: Checksum,
    /// `@mariadb_slave_capability` (0 when unset).
    pub capability: u64,
    /// `@master_heartbeat_period` (None or zero: no heartbeats).
    pub heartbeat: Option<Duration>,
    /// `@slave_connect_state`: Some (even empty) selects GTID mode.
    pub connect_state: Option<String>,
    pub strict: bool,
    pub ignore_duplicates: bool,
    /// `@slave_until_gtid`.
    pub until: Option<String>,
    /// `@rpl_semi_sync_slave` non-zero.
    pub semi_sync: bool,
    /// The primary's server id (artificial events carry it).
    pub server_id: u32,
    /// The primary's own `gtid_slave_pos`.
    pub own_slave_pos: GtidPos,
}

/// How a dump ended.
#[derive(Debug)]
pub enum DumpEnd {
    /// Non-blocking: everything sent, then EOF.
    Eof,
    /// `START SLAVE UNTIL` reached.
    UntilReached,
    /// An ERR 1236 with this text was sent.
    Fatal(String),
    /// KILL, a newer dump with the same server id, or shutdown.
    Stopped,
    /// The client went away or a write failed.
    Disconnected(io::Error),
}

/// ACK positions sent and not yet acknowledged: (file number, end offset, end LSN).
type AckMap = Arc<Mutex<VecDeque<(u64, u64, u64)>>>;

struct Sender<'a> {
    io: &'a mut dyn DumpIo,
    p: DumpParams,
    ack: Option<Arc<dyn AckSink>>,
    acks: AckMap,
    /// The current file and the end of the last event sent or passed over in it.
    file: u64,
    pos: u64,
    /// File mode: events of the first file before this offset are not sent.
    skip_to: Option<u64>,
    skip: Option<Skip>,
    fake_list_due: bool,
    until: Option<GtidPos>,
    until_left: GtidPos,
    last_sent: Instant,
    buf: Vec<u8>,
    /// The checksum of the current file's events (from its Format_description): what the
    /// artificial events sent after it carry (MariaDB's `current_checksum_alg`). Only the
    /// fake Rotate, sent before the file's Format_description, follows the reader's
    /// `@master_binlog_checksum`.
    file_checksum: Checksum,
}

fn fatal(text: impl Into<String>) -> Fatal {
    Fatal(text.into())
}

fn log_fatal(e: LogError) -> Fatal {
    Fatal(format!("Error reading the binary log: {e}"))
}

/// Runs one dump to its end (see the module docs). `guard` tells it when a newer dump from
/// the same server id took over.
pub fn run(
    log: &Log,
    params: DumpParams,
    ack: Option<Arc<dyn AckSink>>,
    guard: &DumpGuard,
    io: &mut dyn DumpIo,
) -> DumpEnd {
    let gone = Arc::new(AtomicBool::new(false));
    let acks: AckMap = Arc::new(Mutex::new(VecDeque::new()));
    let semi = if params.semi_sync { ack } else { None };
    let _client = semi.as_ref().map(|a| a.client_added());
    if !params.request.non_blocking() {
        let sink = reader_sink(
            gone.clone(),
            acks.clone(),
            semi.clone(),
            params.request.server_id,
        );
        io.read_in_background(sink);
    }
    let params_checksum = params.checksum;
    let mut s = Sender {
        io,
        p: params,
        ack: semi,
        acks,
        file: 0,
        pos: 0,
        skip_to: None,
        skip: None,
        fake_list_due: false,
        until: None,
        until_left: GtidPos::new(),
        last_sent: Instant::now(),
        buf: Vec::with_capacity(16 * 1024),
        file_checksum: params_checksum,
    };
    let end = match s.start(log) {
        Ok((view, pin)) => s.stream(view, &pin, guard, &gone),
        Err(f) => Err(f),
    };
    match end {
        Ok(end) => end,
        Err(Fatal(text)) => {
            let _ =
                s.io.send_error(ER_MASTER_FATAL_ERROR_READING_BINLOG.code, &text)
                    .and_then(|()| s.io.flush());
            DumpEnd::Fatal(text)
        }
    }
}

/// The reader thread's handler: ACKs go to the sink; the end of the stream marks the client
/// gone. Anything else (COM_PING, a stray byte) is ignored, as MariaDB's ack receiver does.
fn reader_sink(
    gone: Arc<AtomicBool>,
    acks: AckMap,
    sink: Option<Arc<dyn AckSink>>,
    server_id: u32,
) -> PacketSink {
    Box::new(move |packet| match packet {
        None | Some([0x01]) => gone.store(true, Ordering::SeqCst),
        Some(p) if p.first() == Some(&SEMI_SYNC_MAGIC) => {
            let (Some(sink), Ok(a)) = (&sink, SemiSyncAck::decode(p)) else {
                return;
            };
            let Some(file) = parse_view_file_name(&a.file) else {
                return;
            };
            let mut q = acks.lock().unwrap_or_else(|e| e.into_inner());
            let mut acked = None;
            while let Some(&(f, off, lsn)) = q.front() {
                if (f, off) > (file, a.position) {
                    break;
                }
                acked = Some(lsn);
                q.pop_front();
            }
            drop(q);
            if let Some(lsn) = acked {
                sink.ack(lsn, server_id);
            }
        }
        Some(_) => {}
    })
}

impl Sender<'_> {
    /// Validates the request and opens the view where the dump begins.
    fn start(&mut self, log: &Log) -> Result<(ViewReader, ReaderPin), Fatal> {
        if self.p.checksum == Checksum::Unaware {
            return Err(fatal(
                "Slave can not handle replication events with the checksum that master is \
                 configured to log",
            ));
        }
        if self.p.capability < CAPABILITY_GTID {
            return Err(fatal(format!(
                "onelog serves only readers that understand MariaDB GTID events (set \
                 @mariadb_slave_capability=4 before COM_BINLOG_DUMP; this reader set {})",
                self.p.capability
            )));
        }
        if let Some(until) = &self.p.until {
            let pos: GtidPos = until.parse().map_err(|_| {
                fatal("Out of memory or malformed slave request when obtaining UNTIL position")
            })?;
            self.until_left = pos.clone();
            self.until = Some(pos);
        }
        let number = match self.p.connect_state.clone() {
            Some(state) => self.gtid_start(log, &state)?,
            None => self.file_start(log)?,
        };
        // Pin the file's start before opening it, so no purge removes what the dump reads.
        let start = log
            .segments()
            .iter()
            .find(|s| s.number == number)
            .map(|s| s.start_lsn)
            .ok_or_else(|| fatal(gtid_start::purged_text()))?;
        let pin = log.pin_reader(start);
        let view = log.view_reader(number).map_err(|e| match e {
            LogError::InvalidPosition { .. } => fatal(gtid_start::purged_text()),
            e => log_fatal(e),
        })?;
        Ok((view, pin))
    }

    fn gtid_start(&mut self, log: &Log, state: &str) -> Result<u64, Fatal> {
        let pos: GtidPos = state.parse().map_err(|_| {
            fatal(
                "Out of memory or malformed slave request when obtaining start position from \
                 GTID state",
            )
        })?;
        // Checked against the log's state as of its last append: a reader only holds GTIDs it
        // was sent, which were durable, and after a crash the state is the recovered (durable)
        // one, so the not-yet-durable tail never decides a refusal; a start inside it waits.
        gtid_start::validate(
            &pos,
            &log.gtid_state(),
            &self.p.own_slave_pos,
            self.p.ignore_duplicates,
        )?;
        let number = log
            .view_file_for_gtid(&pos)
            .ok_or_else(|| fatal(gtid_start::purged_text()))?;
        self.skip = Some(Skip::new(pos, self.p.strict));
        Ok(number)
    }

    fn file_start(&mut self, log: &Log) -> Result<u64, Fatal> {
        let files = log.view_files().map_err(log_fatal)?;
        let req = &self.p.request;
        let file = if req.file.is_empty() {
            files.first()
        } else {
            files.iter().find(|f| f.name == req.file)
        };
        let impossible = || {
            fatal(format!(
                "Client requested master to start replication from impossible position; the \
                 first event '{}' at {}, the last event read from '{}' at 4, the last byte read \
                 from '{}' at 4.",
                req.file, req.position, req.file, req.file
            ))
        };
        let Some(file) = file else {
            return Err(fatal(
                "Could not find first log file name in binary log index file",
            ));
        };
        let position = u64::from(req.position);
        if position < 4 || position > file.size {
            return Err(impossible());
        }
        if position > 4 {
            self.skip_to = Some(position);
        }
        Ok(file.number)
    }

    /// Sends items until the dump ends.
    fn stream(
        &mut self,
        mut view: ViewReader,
        pin: &ReaderPin,
        guard: &DumpGuard,
        gone: &AtomicBool,
    ) -> Result<DumpEnd, Fatal> {
        let non_blocking = self.p.request.non_blocking();
        let mut waiting = false;
        loop {
            if self.io.killed() || guard.replaced() {
                return Ok(DumpEnd::Stopped);
            }
            if gone.load(Ordering::SeqCst) {
                return Ok(DumpEnd::Disconnected(
                    io::ErrorKind::ConnectionAborted.into(),
                ));
            }
            let wait = if non_blocking {
                Duration::ZERO
            } else {
                self.wait_time()
            };
            let item = match view.next_wait(wait) {
                Ok(item) => item,
                Err(LogError::Closed) => return Ok(DumpEnd::Stopped),
                Err(e) => return Err(log_fatal(e)),
            };
            let Some(item) = item else {
                if non_blocking {
                    return Ok(self.finish_eof());
                }
                if !waiting {
                    self.io.set_state(STATE_WAITING);
                    waiting = true;
                }
                if let Err(e) = self.maybe_heartbeat() {
                    return Ok(DumpEnd::Disconnected(e));
                }
                continue;
            };
            if waiting {
                self.io.set_state(STATE_SENDING);
                waiting = false;
            }
            // What was read is in memory: the log before it may go.
            pin.advance(view.done_lsn());
            match self.send_item(item) {
                Ok(None) => {}
                Ok(Some(end)) => return Ok(end),
                Err(SendError::Fatal(f)) => return Err(f),
                Err(SendError::Io(e)) => return Ok(DumpEnd::Disconnected(e)),
            }
        }
    }

    fn finish_eof(&mut self) -> DumpEnd {
        match self.io.send_eof().and_then(|()| self.io.flush()) {
            Ok(()) => DumpEnd::Eof,
            Err(e) => DumpEnd::Disconnected(e),
        }
    }

    fn wait_time(&self) -> Duration {
        match self.p.heartbeat.filter(|h| !h.is_zero()) {
            Some(h) => h
                .saturating_sub(self.last_sent.elapsed())
                .clamp(Duration::from_millis(1), DUMP_TICK),
            None => DUMP_TICK,
        }
    }

    fn maybe_heartbeat(&mut self) -> io::Result<()> {
        let Some(h) = self.p.heartbeat.filter(|h| !h.is_zero()) else {
            return Ok(());
        };
        if self.last_sent.elapsed() < h || self.file == 0 {
            return Ok(());
        }
        let ev = heartbeat(
            self.p.server_id,
            &view_file_name(self.file),
            self.pos,
            self.file_checksum,
        );
        self.send_event(&ev, false)?;
        self.io.flush()
    }

    /// Sends one item; `Some` when the dump is over.
    fn send_item(&mut self, item: ViewItem) -> Result<Option<DumpEnd>, SendError> {
        match item {
            ViewItem::FileStart {
                number,
                name,
                events,
                ..
            } => {
                self.enter_file(number, &name, &events)?;
            }
            ViewItem::Group {
                number,
                offset,
                gtid,
                end_lsn,
                events,
                ..
            } => {
                debug_assert_eq!(
                    (number, offset),
                    (self.file, self.pos),
                    "contiguous offsets"
                );
                if let Some(to) = self.skip_to {
                    if offset < to {
                        self.pass_over_before(offset, &events, to, end_lsn)?;
                        return Ok(None);
                    }
                    self.skip_to = None;
                }
                if let Some(skip) = &mut self.skip {
                    match skip.judge(gtid)? {
                        Verdict::Skip => {
                            self.pos = offset + events.len() as u64;
                            self.fake_list_due = !skip.active();
                            if self.fake_list_due {
                                self.send_fake_list()?;
                            }
                            return Ok(None);
                        }
                        Verdict::Send => {
                            if !skip.active() && skip.skipped_any() && !self.fake_list_due {
                                self.fake_list_due = true;
                                self.send_fake_list()?;
                            }
                        }
                    }
                }
                self.send_group(offset, &events, end_lsn)?;
                if self.until_reached(gtid) {
                    return self.send_until().map(Some);
                }
            }
            ViewItem::Rotate { offset, event, .. } => {
                debug_assert_eq!(offset, self.pos, "contiguous offsets");
                if self.skip_to.is_some_and(|to| to > offset) {
                    return Err(SendError::Fatal(fatal(
                        "Client requested master to start replication from impossible position \
                         (not at the start of an event)",
                    )));
                }
                self.skip_to = None;
                self.send_event(&event, false)?;
                self.pos = offset + event.len() as u64;
                self.io.flush()?;
            }
        }
        Ok(None)
    }

    /// A file begins: fake Rotate, then its header events (those at or after `skip_to`).
    fn enter_file(&mut self, number: u64, name: &str, events: &[u8]) -> Result<(), SendError> {
        let start = self.skip_to.unwrap_or(4);
        // The first fake Rotate comes before any Format_description: it carries what the
        // reader asked for. Later ones follow the previous file's FD, whose algorithm the
        // reader now decodes with (MariaDB's `current_checksum_alg`).
        let checksum = if self.file == 0 {
            self.p.checksum
        } else {
            self.file_checksum
        };
        self.file = number;
        self.pos = 4;
        let rot = fake_rotate(self.p.server_id, name, start, checksum);
        self.send_event(&rot, false)?;
        for ev in events_in(events) {
            let offset = self.pos;
            if ev[4] == FORMAT_DESCRIPTION {
                self.file_checksum = fde_checksum(ev);
            }
            if ev[4] == FORMAT_DESCRIPTION && start > 4 {
                self.send_event(&fde_mid_file(ev), false)?;
            } else if offset >= start {
                self.send_event(ev, false)?;
            }
            self.pos = offset + ev.len() as u64;
        }
        if self.skip_to.is_some_and(|to| to <= self.pos) {
            if self.skip_to != Some(self.pos) {
                return Err(SendError::Fatal(fatal(
                    "Client requested master to start replication from impossible position \
                     (not at the start of an event)",
                )));
            }
            self.skip_to = None;
        }
        self.io.flush()?;
        Ok(())
    }

    /// File mode, before the start offset: pass over the group, or start inside it at an
    /// event boundary.
    fn pass_over_before(
        &mut self,
        offset: u64,
        events: &[u8],
        to: u64,
        end_lsn: u64,
    ) -> Result<(), SendError> {
        let end = offset + events.len() as u64;
        if to >= end {
            self.pos = end;
            if to == end {
                self.skip_to = None;
            }
            return Ok(());
        }
        // The start is inside this group: it must be where one of its events starts.
        let mut at = 0usize;
        for ev in events_in(events) {
            if offset + at as u64 >= to {
                break;
            }
            at += ev.len();
        }
        if offset + at as u64 != to {
            return Err(SendError::Fatal(fatal(
                "Client requested master to start replication from impossible position (not \
                 at the start of an event)",
            )));
        }
        self.skip_to = None;
        self.pos = to;
        self.send_group(to, &events[at..], end_lsn)
    }

    fn send_fake_list(&mut self) -> Result<(), SendError> {
        let gtids = self.skip.as_ref().map(Skip::start).unwrap_or_default();
        let ev = fake_gtid_list(self.p.server_id, &gtids, self.pos, 0, self.file_checksum);
        self.send_event(&ev, false)?;
        Ok(())
    }

    fn until_reached(&mut self, g: onelog_binlog::Gtid) -> bool {
        if self.until.is_none() {
            return false;
        }
        if self
            .until_left
            .get(g.domain_id)
            .is_some_and(|u| g.seq_no >= u.seq_no)
        {
            self.until_left.remove(g.domain_id);
        }
        self.until_left.is_empty()
    }

    fn send_until(&mut self) -> Result<DumpEnd, SendError> {
        let gtids: Vec<_> = self
            .until
            .as_ref()
            .map(|u| u.iter().collect())
            .unwrap_or_default();
        let ev = fake_gtid_list(
            self.p.server_id,
            &gtids,
            self.pos,
            super::artificial::FLAG_UNTIL_REACHED,
            self.file_checksum,
        );
        self.send_event(&ev, false)?;
        self.io.flush()?;
        Ok(DumpEnd::UntilReached)
    }

    /// Sends the events of a group placed at `offset` (Annotate_rows only when asked for);
    /// the last one asks for a semi-sync ACK when the sink wants one.
    fn send_group(&mut self, offset: u64, events: &[u8], end_lsn: u64) -> Result<(), SendError> {
        let want_ack = self.ack.as_ref().is_some_and(|a| a.wants_ack(end_lsn));
        let mut pos = offset;
        let end = offset + events.len() as u64;
        for ev in events_in(events) {
            pos += ev.len() as u64;
            if ev[4] != ANNOTATE_ROWS || self.p.request.wants_annotate() {
                self.send_event(ev, pos == end && want_ack)?;
            }
        }
        self.pos = pos;
        if want_ack {
            let mut q = self.acks.lock().unwrap_or_else(|e| e.into_inner());
            if q.len() >= ACK_WINDOW {
                q.pop_front();
            }
            q.push_back((self.file, pos, end_lsn));
        }
        self.io.flush()?;
        if want_ack {
            // The replica answers with a packet of sequence 0; ours continue at 1.
            self.io.set_sequence(1);
        }
        Ok(())
    }

    /// One event packet: OK byte, semi-sync header for semi-sync readers, the event.
    fn send_event(&mut self, ev: &[u8], ack: bool) -> io::Result<()> {
        self.buf.clear();
        self.buf.push(0);
        if self.p.semi_sync {
            self.buf.push(SEMI_SYNC_MAGIC);
            self.buf.push(u8::from(ack));
        }
        self.buf.extend_from_slice(ev);
        self.last_sent = Instant::now();
        self.io.send(&self.buf)
    }
}

/// The checksum a Format_description event announces: its body ends with the algorithm byte
/// (0 off, 1 CRC32) and, when on, the 4-byte CRC32.
fn fde_checksum(fde: &[u8]) -> Checksum {
    match fde.len().checked_sub(5).and_then(|at| fde.get(at)) {
        Some(1) => Checksum::Crc32,
        _ => Checksum::None,
    }
}

/// The events of a group or header block the view placed (whole events, already checked),
/// each by its header's `event_size`; a size that does not fit ends the walk with the rest
/// as one piece, so the walk always moves forward.
fn events_in(mut rest: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if rest.len() < HEADER_LEN {
            return None;
        }
        let size = u32::from_le_bytes([rest[9], rest[10], rest[11], rest[12]]) as usize;
        let size = if (HEADER_LEN..=rest.len()).contains(&size) {
            size
        } else {
            rest.len()
        };
        let (ev, tail) = rest.split_at(size);
        rest = tail;
        Some(ev)
    })
}

enum SendError {
    Fatal(Fatal),
    Io(io::Error),
}

impl From<io::Error> for SendError {
    fn from(e: io::Error) -> Self {
        SendError::Io(e)
    }
}

impl From<Fatal> for SendError {
    fn from(f: Fatal) -> Self {
        SendError::Fatal(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_checksum_comes_from_the_format_description() {
        // A real Format_description as onelog writes it (CRC32), and one saying OFF.
        let mut fde = Vec::new();
        onelog_binlog::event::FormatDescriptionEvent::new("10.11.9-MariaDB-onelog", 0)
            .encode(0, 1, &mut fde)
            .expect("encodes");
        assert_eq!(fde_checksum(&fde), Checksum::Crc32);
        let mut off = fde.clone();
        let at = off.len() - 5;
        off[at] = 0;
        assert_eq!(fde_checksum(&off), Checksum::None);
        assert_eq!(fde_checksum(&[]), Checksum::None);
    }
}
