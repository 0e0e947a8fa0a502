//! A transaction's binlog event cache: its row changes encoded as they are made.
//!
//! Owns [`EventCache`] (MariaDB's per-transaction binlog cache), its limits ([`CacheLimits`]:
//! `binlog_cache_size`, `max_binlog_cache_size`), its savepoint marks ([`CacheMark`]) and the
//! global counters `Binlog_cache_use` / `Binlog_cache_disk_use` ([`CacheStats`]).
//! `txn.rs` pushes every [`RowChange`] into its transaction's cache as the statement makes it
//! and hands the cache to the commit path (`commit.rs`), which turns it into the record's
//! events with [`EventCache::finish`] (no row is encoded again).
//!
//! Layout: the event group [`encode_transaction`](crate::events::encode_transaction) writes
//! for the same changes, byte for byte, given the same stamps: `GTID + Table_maps (order of
//! first change) + rows events + Xid`. The Table_map events are kept apart from the rows
//! events (`maps`, small: one per table) so they can precede every rows event although a
//! table may first appear late in the transaction; the finished rows events go to `body`; the
//! rows event being filled is the open writer (`open`), finished when a change does not
//! batch with it (another table or kind, or its ~8 KiB of images are full) or at commit (the
//! last one, with STMT_END_F). `body` keeps up to `binlog_cache_size` bytes in memory and
//! spills past that to an unlinked temporary file in the temporary directory (MariaDB:
//! `tmpdir`), so a transaction's cache uses bounded memory however large it grows.
//!
//! Stamps: each event carries the timestamp and server id given with the change that opened
//! it (the statement's, as MariaDB stamps row events); the GTID and Xid events carry the
//! commit's. `encode_transaction` stamps every event with the commit's, so the two agree when
//! the stamps do (the equivalence test gives both the same).
//!
//! Limits (MariaDB 10.11): a push that would make the cache larger than
//! `max_binlog_cache_size` fails with 1197 and leaves the cache as it was before the push (the
//! SQL layer then rolls the statement back to its savepoint; the transaction stays open).
//! MariaDB checks the limit only when its in-memory buffer is written out, so a cache that
//! fits in `binlog_cache_size` is never refused; so here the limit is
//! `max(max_binlog_cache_size, binlog_cache_size)`, capped at [`LOG_RECORD_LIMIT`] (what one
//! log record can hold). Counters: a cache that holds events when it
//! is committed or dropped counts in `Binlog_cache_use`, and in `Binlog_cache_disk_use` when it
//! spilled (MariaDB's `binlog_cache_data::reset`).
//!
//! Invariants: `maps` holds exactly one Table_map per entry of `tables`, in order; `body`
//! holds only finished rows events (none with STMT_END_F); a mark's positions are never past
//! the cache's (asserted on rollback); after [`rollback_to`](EventCache::rollback_to) the
//! cache holds exactly what it held when the mark was taken.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use onelog_binlog::event::gtid::GTID_EVENT_LEN;
use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::event::{RowsEventWriter, RowsKind, XidEvent, HEADER_LEN};
use onelog_binlog::ColumnMeta;

use onelog_log::{EventSource, StreamedEvents};

use crate::catalog::{TableDef, TableId};
use crate::error::EngineError;
use crate::events::ROWS_EVENT_TARGET;
use crate::store::RowChange;

/// Bytes of an Xid event (header, xid, checksum).
const XID_EVENT_LEN: usize = HEADER_LEN + 8 + onelog_binlog::event::CHECKSUM_LEN;

/// `binlog_cache_size`'s default (MariaDB 10.11).
pub const DEFAULT_BINLOG_CACHE_SIZE: u64 = 32768;
/// `max_binlog_cache_size`'s default (MariaDB 10.11: the largest multiple of 4096).
pub const DEFAULT_MAX_BINLOG_CACHE_SIZE: u64 = 18_446_744_073_709_547_520;

/// The most bytes of events a transaction may make whatever `max_binlog_cache_size` says: the
/// log takes records up to ~4 GiB (a segment's offsets are 32-bit binlog positions), so a
/// larger transaction fails at its statement (1197) rather than at commit.
pub const LOG_RECORD_LIMIT: u64 = (4 << 30) - (4 << 20);

/// The sizes a transaction's cache is held to (taken when the transaction starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLimits {
    /// `binlog_cache_size`: bytes of rows events kept in memory before spilling to a file.
    pub memory: u64,
    /// `max_binlog_cache_size`: the most bytes a transaction's events may take (1197 past it).
    pub max: u64,
}

impl CacheLimits {
    /// The size past which a push fails with 1197: `max_binlog_cache_size`, but never within
    /// `binlog_cache_size` (MariaDB checks at its buffer's spills) and never past
    /// [`LOG_RECORD_LIMIT`].
    pub fn effective_max(&self) -> u64 {
        self.max.max(self.memory).min(LOG_RECORD_LIMIT)
    }
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            memory: DEFAULT_BINLOG_CACHE_SIZE,
            max: DEFAULT_MAX_BINLOG_CACHE_SIZE,
        }
    }
}

/// The engine-wide settings and counters of the caches (shared by the committer).
#[derive(Debug)]
pub struct CacheStats {
    memory: AtomicU64,
    max: AtomicU64,
    /// `Binlog_cache_use`.
    pub uses: AtomicU64,
    /// `Binlog_cache_disk_use`.
    pub disk_uses: AtomicU64,
    /// Where spilled caches go (`tmpdir`).
    dir: std::sync::RwLock<Arc<Path>>,
}

impl Default for CacheStats {
    fn default() -> Self {
        let l = CacheLimits::default();
        CacheStats {
            memory: AtomicU64::new(l.memory),
            max: AtomicU64::new(l.max),
            uses: AtomicU64::new(0),
            disk_uses: AtomicU64::new(0),
            dir: std::sync::RwLock::new(Arc::from(std::env::temp_dir().as_path())),
        }
    }
}

impl CacheStats {
    /// The limits a transaction starting now gets.
    pub fn limits(&self) -> CacheLimits {
        CacheLimits {
            memory: self.memory.load(Ordering::Relaxed),
            max: self.max.load(Ordering::Relaxed),
        }
    }

    pub fn set_memory(&self, bytes: u64) {
        self.memory.store(bytes, Ordering::Relaxed);
    }

    pub fn set_max(&self, bytes: u64) {
        self.max.store(bytes, Ordering::Relaxed);
    }

    /// The directory spilled caches are created in.
    pub fn dir(&self) -> Arc<Path> {
        self.dir.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set_dir(&self, dir: &Path) {
        *self.dir.write().unwrap_or_else(|p| p.into_inner()) = Arc::from(dir);
    }

    /// Counts a cache that is committed or dropped (see the module docs).
    pub(crate) fn note_done(&self, cache: &EventCache) {
        if cache.is_empty() {
            return;
        }
        self.uses.fetch_add(1, Ordering::Relaxed);
        if cache.spilled() {
            self.disk_uses.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The timestamp and server id an event is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub timestamp: u32,
    pub server_id: u32,
}

/// A position in a cache ([`EventCache::mark`]), to roll back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheMark {
    tables: usize,
    maps_len: usize,
    body_len: u64,
    /// The open writer then: (its sequence number, bytes of images, rows).
    open: Option<(u64, usize, usize)>,
}

/// The finished rows events: in memory up to the limit, then in an unlinked file.
#[derive(Debug, Default)]
pub(crate) struct Spool {
    /// The bytes after the file's (`file_len..len()`).
    mem: Vec<u8>,
    file: Option<File>,
    file_len: u64,
    /// Ever written to the file (`Binlog_cache_disk_use`).
    spilled: bool,
}

fn io_err(context: &str, e: std::io::Error) -> EngineError {
    EngineError::Io {
        context: context.to_string(),
        source: e,
    }
}

static SPILL_SEQ: AtomicU64 = AtomicU64::new(0);

/// A new temporary file in `dir`, unlinked at once (only the handle keeps it).
fn unlinked_file(dir: &Path) -> Result<File, EngineError> {
    let n = SPILL_SEQ.fetch_add(1, Ordering::Relaxed);
    let path: PathBuf = dir.join(format!("onelog-binlog-cache.{}.{n}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| io_err("creating the binlog cache file", e))?;
    std::fs::remove_file(&path).map_err(|e| io_err("unlinking the binlog cache file", e))?;
    Ok(f)
}

impl Spool {
    pub(crate) fn len(&self) -> u64 {
        self.file_len + self.mem.len() as u64
    }

    /// Whether part of it is in the file (then [`Spool::read_at`] reads from disk).
    pub(crate) fn on_disk(&self) -> bool {
        self.file_len > 0
    }

    /// The in-memory part (all of it unless [`on_disk`](Self::on_disk)).
    pub(crate) fn memory(&self) -> &[u8] {
        &self.mem
    }

    /// Appends `bytes`, first moving what is in memory to the file when it would grow past
    /// `limit` bytes.
    fn append(&mut self, bytes: &[u8], limit: u64, env: &CacheStats) -> Result<(), EngineError> {
        if (self.mem.len() + bytes.len()) as u64 > limit
            && !(self.mem.is_empty() && bytes.is_empty())
        {
            if self.file.is_none() {
                self.file = Some(unlinked_file(&env.dir())?);
            }
            let f = self
                .file
                .as_ref()
                .ok_or_else(|| io_err("spilling", std::io::ErrorKind::Other.into()))?;
            self.spilled = true;
            f.write_all_at(&self.mem, self.file_len)
                .map_err(|e| io_err("writing the binlog cache file", e))?;
            self.file_len += self.mem.len() as u64;
            self.mem.clear();
            if bytes.len() as u64 > limit {
                f.write_all_at(bytes, self.file_len)
                    .map_err(|e| io_err("writing the binlog cache file", e))?;
                self.file_len += bytes.len() as u64;
                return Ok(());
            }
        }
        self.mem.extend_from_slice(bytes);
        Ok(())
    }

    /// Drops everything past `len`.
    fn truncate(&mut self, len: u64) -> Result<(), EngineError> {
        debug_assert!(len <= self.len());
        if len >= self.file_len {
            self.mem.truncate((len - self.file_len) as usize);
            return Ok(());
        }
        self.mem.clear();
        if let Some(f) = &self.file {
            f.set_len(len)
                .map_err(|e| io_err("truncating the binlog cache file", e))?;
        }
        self.file_len = len;
        Ok(())
    }

    /// Reads `buf.len()` bytes at `pos`.
    pub(crate) fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<(), EngineError> {
        let end = pos + buf.len() as u64;
        if end > self.len() {
            return Err(EngineError::corrupt(
                "reading the binlog cache",
                "past its end",
            ));
        }
        let mut done = 0usize;
        if pos < self.file_len {
            let n = (self.file_len - pos).min(buf.len() as u64) as usize;
            let f = self
                .file
                .as_ref()
                .ok_or_else(|| EngineError::corrupt("reading the binlog cache", "no file"))?;
            f.read_exact_at(&mut buf[..n], pos)
                .map_err(|e| io_err("reading the binlog cache file", e))?;
            done = n;
        }
        if done < buf.len() {
            let from = (pos + done as u64 - self.file_len) as usize;
            let n = buf.len() - done;
            buf[done..].copy_from_slice(&self.mem[from..from + n]);
        }
        Ok(())
    }
}

/// The log reads a committed cache's body from here while writing it (`onelog_log::streamed`).
impl EventSource for Spool {
    fn len(&self) -> u64 {
        Spool::len(self)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> std::io::Result<()> {
        Spool::read_at(self, pos, buf).map_err(|e| match e {
            EngineError::Io { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        })
    }
}

/// The rows event being filled.
#[derive(Debug)]
struct Open {
    seq: u64,
    table: TableId,
    /// Index of the table in `tables`.
    slot: usize,
    stamp: Stamp,
    writer: RowsEventWriter,
}

/// A transaction's binlog event cache (see the module docs).
#[derive(Debug, Default)]
pub struct EventCache {
    limits: CacheLimits,
    tables: Vec<(TableId, Vec<ColumnMeta>)>,
    maps: Vec<u8>,
    body: Spool,
    open: Option<Open>,
    next_seq: u64,
    /// The body was handed to the log by [`finish_streamed`](Self::finish_streamed) after it
    /// spilled (the counters still count the spill).
    streamed_spill: bool,
    /// Flags of the rows events started from now on ([`set_rows_flags`](Self::set_rows_flags)).
    rows_flags: u16,
}

fn kind_of(c: &RowChange) -> RowsKind {
    match c {
        RowChange::Insert { .. } => RowsKind::Write,
        RowChange::Update { .. } => RowsKind::Update,
        RowChange::Delete { .. } => RowsKind::Delete,
    }
}

fn encode_err(what: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::corrupt(format!("encoding the {what}"), e)
}

/// 1197 `ER_TRANS_CACHE_FULL`.
fn cache_full() -> EngineError {
    EngineError::TransCacheFull
}

impl EventCache {
    /// An empty cache held to `limits` (allocates nothing until the first push).
    pub fn new(limits: CacheLimits) -> Self {
        EventCache {
            limits,
            ..EventCache::default()
        }
    }

    /// Flags (e.g. `NO_FOREIGN_KEY_CHECKS_F`) of the rows events of the changes pushed from
    /// now on; a change of flags starts a new rows event, as MariaDB's.
    pub fn set_rows_flags(&mut self, flags: u16) {
        self.rows_flags = flags;
    }

    /// No change was pushed (or all were rolled back).
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Whether part of the rows events went to the temporary file.
    pub fn spilled(&self) -> bool {
        self.body.spilled || self.streamed_spill
    }

    /// Whether part of the rows events is in the temporary file now (then the commit streams
    /// them: [`finish_streamed`](Self::finish_streamed)).
    pub fn on_disk(&self) -> bool {
        self.body.on_disk()
    }

    /// Bytes of events held (Table_maps, finished rows events, the open one as it would be
    /// written).
    pub fn len(&self) -> u64 {
        let open = self.open.as_ref().map_or(0, |o| Self::event_len(&o.writer));
        self.maps.len() as u64 + self.body.len() + open
    }

    fn event_len(w: &RowsEventWriter) -> u64 {
        (HEADER_LEN + w.preamble_len() + w.rows_len() + onelog_binlog::event::CHECKSUM_LEN) as u64
    }

    /// The position now, for [`rollback_to`](Self::rollback_to). Allocates nothing.
    pub fn mark(&self) -> CacheMark {
        CacheMark {
            tables: self.tables.len(),
            maps_len: self.maps.len(),
            body_len: self.body.len(),
            open: self
                .open
                .as_ref()
                .map(|o| (o.seq, o.writer.rows_len(), o.writer.rows())),
        }
    }

    /// Encodes `change` (to `def`'s table) into the cache: a Table_map the first time the
    /// table appears (`metadata`: `binlog_row_metadata`), the row images into the open rows
    /// event or a new one. `stamp` gives the stamp of the events it opens (called only then).
    /// 1197 when the cache would grow past its limit (then the cache is as it was).
    pub fn push(
        &mut self,
        def: &TableDef,
        metadata: RowMetadata,
        change: &RowChange,
        stamp: &dyn Fn() -> Stamp,
        env: &CacheStats,
    ) -> Result<(), EngineError> {
        debug_assert_eq!(def.id, change.table());
        let before = self.mark();
        let r = self.push_unchecked(def, metadata, change, stamp, env);
        let over = self.len() > self.limits.effective_max();
        if r.is_err() || over {
            self.rollback_to(&before, env)?;
            return r.and(Err(cache_full()));
        }
        Ok(())
    }

    fn push_unchecked(
        &mut self,
        def: &TableDef,
        metadata: RowMetadata,
        change: &RowChange,
        stamp: &dyn Fn() -> Stamp,
        env: &CacheStats,
    ) -> Result<(), EngineError> {
        let id = def.id;
        let slot = match self.tables.iter().position(|(t, _)| *t == id) {
            Some(i) => i,
            None => self.add_table(def, metadata, stamp())?,
        };
        let kind = kind_of(change);
        let flags = self.rows_flags;
        let reuse = matches!(&self.open, Some(o) if o.table == id && o.writer.kind() == kind && o.writer.flags() == flags && o.writer.rows_len() < ROWS_EVENT_TARGET);
        if !reuse {
            self.flush_open(env)?;
            let ncols = self.tables[slot].1.len();
            let mut writer = RowsEventWriter::new(kind, id, ncols);
            writer.set_flags(flags);
            self.open = Some(Open {
                seq: self.next_seq,
                table: id,
                slot,
                stamp: stamp(),
                writer,
            });
            self.next_seq += 1;
        }
        let Some(o) = self.open.as_mut() else {
            return Err(encode_err("rows event", "no open writer"));
        };
        let columns = &self.tables[o.slot].1;
        let r = match change {
            RowChange::Insert { row, .. } => o.writer.push_row(columns, row),
            RowChange::Update { before, after, .. } => o.writer.push_update(columns, before, after),
            RowChange::Delete { before, .. } => o.writer.push_row(columns, before),
        };
        r.map_err(|e| encode_err("rows event", e))
    }

    /// Appends the Table_map of `def`'s table; returns its slot.
    fn add_table(
        &mut self,
        def: &TableDef,
        metadata: RowMetadata,
        stamp: Stamp,
    ) -> Result<usize, EngineError> {
        let columns = def.column_metas();
        let map = crate::events::table_map(def, columns.clone(), metadata);
        map.encode(stamp.timestamp, stamp.server_id, &mut self.maps)
            .map_err(|e| encode_err("Table_map event", e))?;
        self.tables.push((def.id, columns));
        Ok(self.tables.len() - 1)
    }

    /// Finishes the open rows event (not the statement's last) into the body.
    fn flush_open(&mut self, env: &CacheStats) -> Result<(), EngineError> {
        let Some(mut o) = self.open.take() else {
            return Ok(());
        };
        let mut ev = Vec::with_capacity(Self::event_len(&o.writer) as usize);
        o.writer
            .finish(o.stamp.timestamp, o.stamp.server_id, false, &mut ev);
        self.body.append(&ev, self.limits.memory, env)
    }

    /// Rolls the cache back to `m` (ROLLBACK TO SAVEPOINT, a failed push).
    pub fn rollback_to(&mut self, m: &CacheMark, env: &CacheStats) -> Result<(), EngineError> {
        assert!(
            m.tables <= self.tables.len()
                && m.maps_len <= self.maps.len()
                && m.body_len <= self.body.len(),
            "a cache mark past the cache"
        );
        let _ = env;
        let still_open =
            matches!((&self.open, m.open), (Some(o), Some((seq, _, _))) if o.seq == seq);
        match m.open {
            Some((_, rows_len, rows)) if still_open => {
                debug_assert_eq!(m.body_len, self.body.len());
                if let Some(o) = self.open.as_mut() {
                    o.writer.truncate_rows(rows_len, rows);
                }
            }
            Some((seq, rows_len, rows)) => {
                // The writer open at the mark was finished since: it is the first event at
                // the mark's body position. Reopen it with the images it had then.
                let o = self.reopen(m.body_len, seq, rows_len, rows)?;
                self.body.truncate(m.body_len)?;
                self.open = Some(o);
            }
            None => {
                self.body.truncate(m.body_len)?;
                self.open = None;
            }
        }
        self.tables.truncate(m.tables);
        self.maps.truncate(m.maps_len);
        debug_assert_eq!(self.mark(), *m);
        Ok(())
    }

    /// The writer whose finished event starts at `pos` of the body, with its first `rows_len`
    /// bytes of images (`rows` rows).
    fn reopen(
        &self,
        pos: u64,
        seq: u64,
        rows_len: usize,
        rows: usize,
    ) -> Result<Open, EngineError> {
        let mut header = [0u8; HEADER_LEN];
        self.body.read_at(pos, &mut header)?;
        let h = onelog_binlog::event::EventHeader::decode(&header)
            .map_err(|e| EngineError::corrupt("reading the binlog cache", e))?;
        let kind = RowsKind::from_event_type(h.event_type)
            .ok_or_else(|| EngineError::corrupt("reading the binlog cache", "not a rows event"))?;
        let mut table = [0u8; 8];
        self.body
            .read_at(pos + HEADER_LEN as u64, &mut table[..6])?;
        let table_id = u64::from_le_bytes(table);
        let slot = self
            .tables
            .iter()
            .position(|(t, _)| *t == table_id)
            .ok_or_else(|| EngineError::corrupt("reading the binlog cache", "no table map"))?;
        let mut writer = RowsEventWriter::new(kind, table_id, self.tables[slot].1.len());
        let mut images = vec![0u8; rows_len];
        self.body.read_at(
            pos + (HEADER_LEN + writer.preamble_len()) as u64,
            &mut images,
        )?;
        writer.extend_encoded(&images, rows);
        Ok(Open {
            seq,
            table: table_id,
            slot,
            stamp: Stamp {
                timestamp: h.timestamp,
                server_id: h.server_id,
            },
            writer,
        })
    }

    /// Drops every event (a deadlock's rollback); the cache stays usable.
    pub fn clear(&mut self) {
        self.tables.clear();
        self.maps.clear();
        self.open = None;
        self.body = Spool::default();
    }

    /// The record's events, all in memory: `gtid` (writes the GTID event, first) + the Table_maps +
    /// the rows events (the last with STMT_END_F) + Xid (`xid`, stamped `stamp`). One
    /// allocation, of the exact size.
    pub fn finish(
        &mut self,
        gtid: impl FnOnce(&mut Vec<u8>),
        xid: u64,
        stamp: Stamp,
    ) -> Result<Vec<u8>, EngineError> {
        let open = self.open.as_ref().map_or(0, |o| Self::event_len(&o.writer)) as usize;
        let body = self.body.len() as usize;
        let mut out =
            Vec::with_capacity(GTID_EVENT_LEN + self.maps.len() + body + open + XID_EVENT_LEN);
        gtid(&mut out);
        out.extend_from_slice(&self.maps);
        if self.body.on_disk() {
            let start = out.len();
            out.resize(start + body, 0);
            self.body.read_at(0, &mut out[start..])?;
        } else {
            out.extend_from_slice(self.body.memory());
        }
        self.finish_tail(xid, stamp, &mut out);
        Ok(out)
    }

    /// The record's events for the log to stream (a cache whose body is on disk): the GTID
    /// event (written by `gtid`) and the Table_maps in memory, then the body (moved out of
    /// the cache: its file goes with it, read by the log while it writes) and a tail with the
    /// last rows event and the Xid. The same bytes as [`finish`](Self::finish).
    pub fn finish_streamed(
        &mut self,
        gtid: impl FnOnce(&mut Vec<u8>),
        xid: u64,
        stamp: Stamp,
    ) -> (Vec<u8>, StreamedEvents) {
        let mut head = Vec::with_capacity(GTID_EVENT_LEN + self.maps.len());
        gtid(&mut head);
        head.extend_from_slice(&self.maps);
        let open = self.open.as_ref().map_or(0, |o| Self::event_len(&o.writer)) as usize;
        let mut tail = Vec::with_capacity(open + XID_EVENT_LEN);
        self.finish_tail(xid, stamp, &mut tail);
        self.streamed_spill |= self.body.spilled;
        let body = std::mem::take(&mut self.body);
        (
            head,
            StreamedEvents {
                source: Box::new(body),
                tail,
            },
        )
    }

    /// The last rows event (STMT_END_F) and the Xid event, appended to `out`.
    fn finish_tail(&mut self, xid: u64, stamp: Stamp, out: &mut Vec<u8>) {
        if let Some(mut o) = self.open.take() {
            o.writer
                .finish(o.stamp.timestamp, o.stamp.server_id, true, out);
        }
        XidEvent { xid }.encode(stamp.timestamp, stamp.server_id, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogChange, ColumnSpec, SqlType, TableSpec};
    use crate::events::{encode_transaction, transaction_gtid};
    use crate::store::{Root, Row};
    use onelog_binlog::Value;
    use proptest::prelude::*;

    const STAMP: Stamp = Stamp {
        timestamp: 1_700_000_000,
        server_id: 3,
    };

    fn root(tables: u64) -> Root {
        let mut root = Root::empty();
        root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        for id in 1..=tables {
            let spec = TableSpec {
                db: "d".into(),
                name: format!("t{id}"),
                columns: vec![
                    ColumnSpec::new("id", SqlType::BigInt { unsigned: true }).not_null(),
                    ColumnSpec::new("v", SqlType::VarChar(3000)),
                ],
                primary_key: vec!["id".into()],
                indexes: Vec::new(),
            };
            let table = TableDef::from_spec(id, &spec).unwrap();
            root.apply_catalog_change(&CatalogChange::CreateTable { table })
                .unwrap();
        }
        root
    }

    fn row(id: u64, len: usize) -> Arc<Row> {
        Arc::new(vec![
            Value::UInt(id),
            Value::bytes(vec![b'a' + (id % 26) as u8; len]),
        ])
    }

    #[derive(Debug, Clone)]
    enum Op {
        Change(u8, u64, u16, u8),
        Mark,
        Rollback(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (0u8..3, 0u64..50, 0u16..3000, 0u8..3).prop_map(|(t, i, l, k)| Op::Change(t, i, l, k)),
            1 => Just(Op::Mark),
            1 => (0usize..8).prop_map(Op::Rollback),
        ]
    }

    fn change(t: u8, id: u64, len: u16, kind: u8) -> RowChange {
        let table = u64::from(t) + 1;
        match kind {
            0 => RowChange::Insert {
                table,
                row: row(id, len as usize),
            },
            1 => RowChange::Update {
                table,
                before: row(id, len as usize / 2),
                after: row(id + 1, len as usize),
            },
            _ => RowChange::Delete {
                table,
                before: row(id, len as usize),
            },
        }
    }

    fn one_shot(root: &Root, changes: &[RowChange], m: RowMetadata) -> Vec<u8> {
        encode_transaction(
            &root.catalog,
            changes,
            0,
            STAMP.server_id,
            STAMP.timestamp,
            9,
            m,
        )
        .unwrap()
    }

    fn finish(cache: &mut EventCache) -> Vec<u8> {
        cache
            .finish(
                |out| transaction_gtid(out, 0, STAMP.server_id, STAMP.timestamp),
                9,
                STAMP,
            )
            .unwrap()
    }

    /// Runs `ops` against a cache (memory limit `memory`) and a plain change log; returns
    /// both encodings.
    fn run(ops: &[Op], memory: u64, m: RowMetadata) -> (Vec<u8>, Vec<u8>, bool) {
        let root = root(3);
        let env = CacheStats::default();
        let mut cache = EventCache::new(CacheLimits {
            memory,
            max: DEFAULT_MAX_BINLOG_CACHE_SIZE,
        });
        let mut changes = Vec::new();
        let mut marks: Vec<(usize, CacheMark)> = Vec::new();
        for op in ops {
            match op {
                Op::Change(t, id, len, kind) => {
                    let c = change(*t, *id, *len, *kind);
                    let def = root.catalog.table(c.table()).unwrap();
                    cache.push(def, m, &c, &|| STAMP, &env).unwrap();
                    changes.push(c);
                }
                Op::Mark => marks.push((changes.len(), cache.mark())),
                Op::Rollback(i) if !marks.is_empty() => {
                    let i = i % marks.len();
                    let (n, mark) = marks[i];
                    marks.truncate(i + 1);
                    changes.truncate(n);
                    cache.rollback_to(&mark, &env).unwrap();
                }
                Op::Rollback(_) => {}
            }
        }
        let spilled = cache.spilled();
        (finish(&mut cache), one_shot(&root, &changes, m), spilled)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn incremental_encoding_is_the_one_shot_encoding(
            ops in proptest::collection::vec(op(), 0..120),
            memory in prop_oneof![Just(0u64), Just(4096u64), Just(1u64 << 20)],
            m in prop_oneof![Just(RowMetadata::NoLog), Just(RowMetadata::Full)],
        ) {
            prop_assume!(ops.iter().any(|o| matches!(o, Op::Change(..))));
            let (inc, once, _) = run(&ops, memory, m);
            let root = root(3);
            let _ = root;
            prop_assert_eq!(inc, once);
        }
    }

    #[test]
    fn a_large_transaction_spills_and_rolls_back_across_the_file() {
        let mut ops = Vec::new();
        for i in 0..400 {
            ops.push(Op::Change((i % 3) as u8, i, 700, (i % 5 % 3) as u8));
            if i % 97 == 0 {
                ops.push(Op::Mark);
            }
            if i % 150 == 149 {
                ops.push(Op::Rollback(1));
            }
        }
        let (inc, once, spilled) = run(&ops, 4096, RowMetadata::Full);
        assert!(spilled);
        assert!(inc.len() > 100_000, "{}", inc.len());
        assert_eq!(inc, once);
    }

    #[test]
    fn a_push_past_the_maximum_fails_with_1197_and_changes_nothing() {
        let root = root(2);
        let env = CacheStats::default();
        let mut cache = EventCache::new(CacheLimits {
            memory: 4096,
            max: 8192,
        });
        let mut changes = Vec::new();
        let mut refused = None;
        for i in 0..20 {
            let c = change((i % 2) as u8, i, 1500, 0);
            let def = root.catalog.table(c.table()).unwrap();
            let before = (cache.mark(), cache.len());
            match cache.push(def, RowMetadata::NoLog, &c, &|| STAMP, &env) {
                Ok(()) => changes.push(c),
                Err(e) => {
                    assert_eq!(e.error_code().code, 1197);
                    assert_eq!(e.to_string(), "Multi-statement transaction required more than 'max_binlog_cache_size' bytes of storage; increase this mariadbd variable and try again");
                    assert_eq!((cache.mark(), cache.len()), before);
                    refused = Some(i);
                    break;
                }
            }
        }
        let refused = refused.expect("the cache refused a push");
        assert!((4..8).contains(&refused), "{refused}");
        assert!(cache.len() <= 8192);
        assert_eq!(
            finish(&mut cache),
            one_shot(&root, &changes, RowMetadata::NoLog)
        );
        // Within binlog_cache_size the maximum is not checked (MariaDB's buffer).
        let mut cache = EventCache::new(CacheLimits {
            memory: 1 << 20,
            max: 4096,
        });
        for i in 0..20 {
            let c = change(0, i, 1500, 0);
            let def = root.catalog.table(1).unwrap();
            cache
                .push(def, RowMetadata::NoLog, &c, &|| STAMP, &env)
                .unwrap();
        }
        assert!(!cache.spilled());
    }

    #[test]
    fn the_limit_is_the_maximum_but_never_within_memory_nor_past_a_log_record() {
        let l = |memory, max| CacheLimits { memory, max }.effective_max();
        assert_eq!(l(32768, 8192), 32768);
        assert_eq!(l(4096, 1 << 20), 1 << 20);
        assert_eq!(l(32768, DEFAULT_MAX_BINLOG_CACHE_SIZE), LOG_RECORD_LIMIT);
        assert_eq!(l(u64::MAX, 4096), LOG_RECORD_LIMIT);
    }

    #[test]
    fn counters_count_caches_with_events_and_spills() {
        let root = root(1);
        let env = CacheStats::default();
        let empty = EventCache::new(env.limits());
        env.note_done(&empty);
        assert_eq!(env.uses.load(Ordering::Relaxed), 0);
        let mut cache = EventCache::new(CacheLimits {
            memory: 4096,
            max: DEFAULT_MAX_BINLOG_CACHE_SIZE,
        });
        let def = root.catalog.table(1).unwrap();
        for i in 0..3 {
            cache
                .push(
                    def,
                    RowMetadata::NoLog,
                    &change(0, i, 10, 0),
                    &|| STAMP,
                    &env,
                )
                .unwrap();
        }
        env.note_done(&cache);
        assert_eq!(env.uses.load(Ordering::Relaxed), 1);
        assert_eq!(env.disk_uses.load(Ordering::Relaxed), 0);
        for i in 0..20 {
            cache
                .push(
                    def,
                    RowMetadata::NoLog,
                    &change(0, i, 2000, i as u8 % 3),
                    &|| STAMP,
                    &env,
                )
                .unwrap();
        }
        assert!(cache.spilled());
        env.note_done(&cache);
        assert_eq!(env.uses.load(Ordering::Relaxed), 2);
        assert_eq!(env.disk_uses.load(Ordering::Relaxed), 1);
    }
}
