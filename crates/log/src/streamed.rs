//! Event bytes a record takes from outside memory: a transaction's binlog event cache that
//! spilled to a temporary file (issue 14 part 3).
//!
//! Owns [`EventSource`] (what the engine's cache implements), [`StreamedEvents`] (the
//! `PendingRecord::streamed` part of a record's event group: the source's bytes, then a tail in
//! memory) and the two passes the appender makes over them: [`crc_append`] (the frame's CRC,
//! computed while reading) and [`for_each_chunk`] (the bytes written to the segment), both in
//! chunks of [`CHUNK`] bytes through one buffer, so a record of any size is framed and written
//! with bounded memory and without being built again.
//!
//! A record's event group is `events ++ source ++ tail`; its frame on disk is exactly the frame
//! of a record whose `events` held all of it (`frame::encode_event_record`), so readers,
//! recovery and every tool see no difference. File mode materialises a streamed record first
//! (its classic binlog takes the group as bytes: `PendingRecord::materialize`).
//!
//! Invariants: a source's length does not change while the record is pending; a read error is
//! an I/O error of the commit (the log fails, as for a segment write error).

use std::io;

/// Bytes read per step from a source.
pub const CHUNK: usize = 1 << 20;

/// Event bytes held outside memory (a spilled binlog cache).
pub trait EventSource: Send {
    /// Bytes it holds.
    fn len(&self) -> u64;
    /// Whether it holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads `buf.len()` bytes at `pos` (`pos + buf.len() <= len()`).
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()>;
}

/// The part of a record's event group after `PendingRecord::events`: `source`'s bytes, then
/// `tail` (the last rows event and the Xid of a transaction).
pub struct StreamedEvents {
    pub source: Box<dyn EventSource>,
    pub tail: Vec<u8>,
}

impl StreamedEvents {
    /// Bytes of event group it holds.
    pub fn len(&self) -> u64 {
        self.source.len() + self.tail.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Calls `f` with the source's bytes in order, `CHUNK` bytes at a time, through `buf`.
pub fn for_each_chunk(
    source: &dyn EventSource,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let len = source.len();
    let mut pos = 0u64;
    while pos < len {
        let n = (len - pos).min(CHUNK as u64) as usize;
        buf.resize(n, 0);
        source.read_at(pos, &mut buf[..n])?;
        f(&buf[..n])?;
        pos += n as u64;
    }
    Ok(())
}

/// `crc` (a CRC32C so far) extended over the source's bytes.
pub fn crc_append(crc: u32, source: &dyn EventSource, buf: &mut Vec<u8>) -> io::Result<u32> {
    let mut crc = crc;
    for_each_chunk(source, buf, |b| {
        crc = crc32c::crc32c_append(crc, b);
        Ok(())
    })?;
    Ok(crc)
}

/// A source over bytes in memory (tests, tools).
impl EventSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(pos).map_err(|_| io::ErrorKind::InvalidInput)?;
        let bytes = self
            .get(start..start + buf.len())
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}
