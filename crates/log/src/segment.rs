//! Segment files: naming, the header block, zero-filled preallocation.
//!
//! A segment is `binlog-NNNNNN.olog` (six or more decimal digits, numbers start at 1 and are
//! contiguous among the files present: purging removes the oldest ones only). Every segment
//! is preallocated to `segment_size` bytes of zeros (written, then `fdatasync`ed, then renamed
//! into place and the directory synced) so appending and `fdatasync`ing records never changes
//! file metadata. Layout:
//!
//! ```text
//! header block (header_len bytes, a multiple of 4096):
//!   0   magic        8 bytes  "ONELOGSG"
//!   8   version      u32 LE   2 (1 is still read: it lacks file_len)
//!   12  header_len   u32 LE   where the records start
//!   16  number       u64 LE   the NNNNNN of the file name
//!   24  start_lsn    u64 LE   LSN of the first record of this segment
//!   32  state_len    u32 LE
//!   36  fde_len      u32 LE
//!   40  file_len     u64 LE   version 2 only: the size the file was preallocated to
//!   F   gtid state   state_len bytes, GtidState::encode: the state at start_lsn
//!                             (F = 48 in version 2, 40 in version 1)
//!   ..  Format_description event, fde_len bytes (a complete binlog event with its CRC32)
//!   ..  crc          u32 LE   masked CRC32C of bytes 0 .. F + state_len + fde_len
//!   ..  zeros up to header_len
//! records (see frame.rs), back to back, from header_len on
//! zeros (preallocated) up to segment_size; a zero length word ends the data
//! ```
//!
//! The Format_description event is part of the header block, not a record: it has no LSN,
//! a reader that needs it (a binlog dump, `onelog binlog`) takes it from any segment header.
//!
//! Reset (`RESET MASTER`, [`install_reset`]): the new first segment (number 1, start LSN =
//! the end LSN, empty GTID state) is written into a prepared file, synced, and renamed to
//! `reset.olog.tmp` (directory synced): that rename is the commit point. Then every
//! `binlog-*.olog` is removed (directory synced) and `reset.olog.tmp` renamed to
//! `binlog-000001.olog` (directory synced). Opening a log that holds `reset.olog.tmp`
//! finishes the reset the same way ([`finish_reset`]), so after a crash the log is either
//! entirely as before the reset or entirely reset.
//!
//! Version 2 segments may hold SyncMark records (`frame.rs`) and record their preallocated
//! size, so recovery can refuse a segment file that is shorter (a crash cannot shorten a
//! preallocated file). A version-1 segment (written before SyncMarks existed) is read and
//! appended to as before: the log writes no SyncMark into it, and its size is not checked.
//!
//! Invariants: a segment file only gets its final name after its header is durable, so a
//! segment with a bad header is corruption, never a torn write; a record never spans two
//! segments; the next segment's start_lsn is the end LSN of the previous one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use onelog_binlog::event::format_description::{FormatDescriptionEvent, SERVER_VERSION_LEN};
use onelog_binlog::GtidState;

use crate::error::{is_enospc, LogError};
use crate::frame::{mask_crc, unmask_crc};
use crate::fs::{read_full_at, File, FileSystem, StepSync};
use crate::Lsn;

/// Where a segment sized for one record larger than `segment_size` is prepared (`appender.rs`);
/// a stale one is removed at open.
pub const OVERSIZE_NAME: &str = "oversize.olog.tmp";

pub const MAGIC: &[u8; 8] = b"ONELOGSG";
pub const VERSION: u32 = 2;
/// The fixed part of a version-1 header (no `file_len`).
const FIXED_LEN_V1: usize = 40;
const FIXED_LEN: usize = 48;
const BLOCK: usize = 4096;
/// Name of the segment being prepared in the background.
pub const PREPARED_NAME: &str = "next.olog.tmp";
/// Name of the new first segment of a log reset (`RESET MASTER`) while the old segments are
/// being removed; see [`install_reset`].
pub const RESET_NAME: &str = "reset.olog.tmp";
/// Crash point names of a log reset (crash simulation tests of the log crate arm them).
pub const RESET_AFTER_NEW_SEGMENT: &str = "reset.after_new_segment";
pub const RESET_AFTER_REMOVE: &str = "reset.after_remove";
const ZERO_CHUNK: usize = 1 << 20;

/// The file name of segment `number`.
pub fn file_name(number: u64) -> String {
    format!("binlog-{number:06}.olog")
}

/// The number of a segment file name, if it is one.
pub fn parse_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("binlog-")?.strip_suffix(".olog")?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A decoded segment header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentHeader {
    pub number: u64,
    pub start_lsn: Lsn,
    pub state: GtidState,
    /// The Format_description event bytes.
    pub fde: Vec<u8>,
    /// Where the records start (a multiple of 4096).
    pub header_len: u64,
    /// Format version (1 or 2).
    pub version: u32,
    /// Version 2: the size the file was preallocated to (None in version 1).
    pub file_len: Option<u64>,
}

/// Length of the header block for a state and FDE of these sizes.
pub fn header_len_for(state_len: usize, fde_len: usize) -> u64 {
    let raw = FIXED_LEN + state_len + fde_len + 4;
    raw.div_ceil(BLOCK) as u64 * BLOCK as u64
}

impl SegmentHeader {
    /// Encodes the whole (version 2) header block, padded with zeros to `header_len`, of a
    /// file preallocated to `file_len` bytes.
    pub fn encode(
        number: u64,
        start_lsn: Lsn,
        state: &GtidState,
        fde: &[u8],
        file_len: u64,
    ) -> Vec<u8> {
        let mut st = Vec::new();
        state.encode(&mut st);
        let header_len = header_len_for(st.len(), fde.len());
        let mut out = Vec::with_capacity(header_len as usize);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
        out.extend_from_slice(&number.to_le_bytes());
        out.extend_from_slice(&start_lsn.to_le_bytes());
        out.extend_from_slice(&(st.len() as u32).to_le_bytes());
        out.extend_from_slice(&(fde.len() as u32).to_le_bytes());
        out.extend_from_slice(&file_len.to_le_bytes());
        debug_assert_eq!(out.len(), FIXED_LEN);
        out.extend_from_slice(&st);
        out.extend_from_slice(fde);
        let crc = mask_crc(crc32c::crc32c(&out));
        out.extend_from_slice(&crc.to_le_bytes());
        out.resize(header_len as usize, 0);
        out
    }

    /// Reads and checks the header of an open segment file.
    pub fn read(file: &dyn File, path: &Path) -> Result<SegmentHeader, LogError> {
        let mut fixed = [0u8; FIXED_LEN];
        let n = read_full_at(file, &mut fixed, 0)
            .map_err(|e| LogError::io(path, 0, "read segment header", e))?;
        let bad = |off: u64, why: String| {
            LogError::corrupt(path, off, format!("bad segment header: {why}"))
        };
        if n < FIXED_LEN_V1 {
            return Err(bad(n as u64, format!("file is only {n} bytes long")));
        }
        if &fixed[..8] != MAGIC {
            return Err(bad(0, "wrong magic (not an onelog segment)".into()));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([fixed[o], fixed[o + 1], fixed[o + 2], fixed[o + 3]]);
        let u64_at = |o: usize| u64::from_le_bytes(fixed[o..o + 8].try_into().unwrap_or_default());
        let version = u32_at(8);
        let fixed_len = match version {
            1 => FIXED_LEN_V1,
            VERSION if n >= FIXED_LEN => FIXED_LEN,
            VERSION => return Err(bad(n as u64, format!("file is only {n} bytes long"))),
            _ => {
                return Err(bad(
                    8,
                    format!(
                        "unsupported format version {version} (this onelog reads versions 1 \
                         and {VERSION})"
                    ),
                ))
            }
        };
        let header_len = u32_at(12) as u64;
        let state_len = u32_at(32) as usize;
        let fde_len = u32_at(36) as usize;
        let body = fixed_len as u64 + state_len as u64 + fde_len as u64;
        if header_len & (BLOCK as u64 - 1) != 0 || body + 4 > header_len || header_len > 64 << 20 {
            return Err(bad(
                12,
                format!("header length {header_len} inconsistent with its contents ({body} bytes)"),
            ));
        }
        let mut buf = vec![0u8; body as usize + 4];
        let n = read_full_at(file, &mut buf, 0)
            .map_err(|e| LogError::io(path, 0, "read segment header", e))?;
        if n < buf.len() {
            return Err(bad(n as u64, "truncated header".into()));
        }
        let b = body as usize;
        let stored = unmask_crc(u32::from_le_bytes([
            buf[b],
            buf[b + 1],
            buf[b + 2],
            buf[b + 3],
        ]));
        let computed = crc32c::crc32c(&buf[..b]);
        if stored != computed {
            return Err(bad(
                body,
                format!("bad CRC32C: stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        let (state, used) = GtidState::decode(&buf[fixed_len..fixed_len + state_len])
            .map_err(|e| bad(fixed_len as u64, e.to_string()))?;
        if used != state_len {
            return Err(bad(fixed_len as u64, "GTID state length mismatch".into()));
        }
        Ok(SegmentHeader {
            number: u64_at(16),
            start_lsn: u64_at(24),
            state,
            fde: buf[fixed_len + state_len..b].to_vec(),
            header_len,
            version,
            file_len: (version >= 2).then(|| u64_at(40)),
        })
    }
}

/// The Format_description event (type 15) every segment header carries: MariaDB 10.11's,
/// with `binlog_checksum=CRC32` (`onelog_binlog::event::format_description`). The server
/// version is cut to the 49 bytes the event holds.
pub fn format_description(server_version: &str, server_id: u32) -> Vec<u8> {
    let mut v: String = server_version.chars().filter(|c| *c != '\0').collect();
    while v.len() > SERVER_VERSION_LEN - 1 {
        v.pop();
    }
    let mut out = Vec::new();
    // Cannot fail: the version was made to fit above.
    let _ = FormatDescriptionEvent::new(&v, 0).encode(0, server_id, &mut out);
    out
}

/// Creates (or truncates) `path` and fills it with `size` zero bytes, then `fdatasync`s it.
/// ENOSPC is `StorageFull`.
///
/// The zeros are synced every [`SYNC_STEP`](crate::fs::SYNC_STEP) bytes on the way
/// (`StepSync`). `cancelled` is asked before every chunk and before the last sync (the
/// preparer's caller may wait in it, `prealloc.rs`); when it says yes (the log is shutting
/// down) the half-filled file is left for the next open to delete and `LogError::Closed` is returned, so
/// shutting down never waits for a gigabyte of zeros.
pub fn create_zeroed(
    fs: &dyn FileSystem,
    path: &Path,
    size: u64,
    cancelled: &dyn Fn() -> bool,
) -> Result<Arc<dyn File>, LogError> {
    if fs.exists(path) {
        fs.remove_file(path)
            .map_err(|e| LogError::io(path, 0, "remove stale file", e))?;
    }
    let file = fs
        .open(path, true)
        .map_err(|e| LogError::io(path, 0, "create segment", e))?;
    let zeros = vec![0u8; ZERO_CHUNK.min(size as usize)];
    let mut off = 0u64;
    let mut steps = StepSync::from(0);
    while off < size {
        if cancelled() {
            return Err(LogError::Closed);
        }
        let n = (size - off).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], off).map_err(|e| {
            if is_enospc(&e) {
                LogError::StorageFull {
                    path: path.to_path_buf(),
                    needed: size - off,
                }
            } else {
                LogError::io(path, off, "preallocate segment", e)
            }
        })?;
        off += n as u64;
        if off < size {
            steps
                .wrote(&*file, off)
                .map_err(|e| LogError::io(path, off, "fdatasync preallocated segment", e))?;
        }
    }
    if cancelled() {
        return Err(LogError::Closed);
    }
    file.sync_data()
        .map_err(|e| LogError::io(path, 0, "fdatasync preallocated segment", e))?;
    Ok(file)
}

/// Writes the header block into a prepared (zeroed) file, syncs it, renames it to its final
/// name and syncs the directory, with the rotation crash points in between.
pub fn install(
    fs: &dyn FileSystem,
    dir: &Path,
    prepared: &Path,
    file: &dyn File,
    header: &[u8],
    number: u64,
) -> Result<PathBuf, LogError> {
    let crash = |name: &'static str| {
        fs.crash_point(name)
            .map_err(|e| LogError::io(prepared, 0, name, e))
    };
    crash("rotate.before_header")?;
    file.write_all_at(header, 0)
        .map_err(|e| LogError::io(prepared, 0, "write segment header", e))?;
    file.sync_data()
        .map_err(|e| LogError::io(prepared, 0, "fdatasync segment header", e))?;
    crash("rotate.after_header")?;
    let path = dir.join(file_name(number));
    fs.rename(prepared, &path)
        .map_err(|e| LogError::io(&path, 0, "rename prepared segment", e))?;
    crash("rotate.after_rename")?;
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))?;
    Ok(path)
}

/// The durable part of a log reset: writes `header` (segment 1) into the prepared `file`,
/// syncs it, renames it to [`RESET_NAME`] (the commit point, directory synced), then
/// [`finish_reset`]. Returns the path of the new `binlog-000001.olog`.
pub fn install_reset(
    fs: &dyn FileSystem,
    dir: &Path,
    prepared: &Path,
    file: &dyn File,
    header: &[u8],
) -> Result<PathBuf, LogError> {
    file.write_all_at(header, 0)
        .map_err(|e| LogError::io(prepared, 0, "write reset segment header", e))?;
    file.sync_data()
        .map_err(|e| LogError::io(prepared, 0, "fdatasync reset segment header", e))?;
    let staged = dir.join(RESET_NAME);
    fs.rename(prepared, &staged)
        .map_err(|e| LogError::io(&staged, 0, "rename reset segment", e))?;
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))?;
    fs.crash_point(RESET_AFTER_NEW_SEGMENT)
        .map_err(|e| LogError::io(&staged, 0, RESET_AFTER_NEW_SEGMENT, e))?;
    finish_reset(fs, dir)
}

/// Completes a committed reset: removes every `binlog-*.olog` in `dir`, then renames
/// [`RESET_NAME`] to segment 1, syncing the directory after each step. Idempotent: a crash
/// anywhere in it leaves `reset.olog.tmp` (or the finished `binlog-000001.olog`) behind.
pub fn finish_reset(fs: &dyn FileSystem, dir: &Path) -> Result<PathBuf, LogError> {
    let staged = dir.join(RESET_NAME);
    let names = fs
        .list_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "list log directory", e))?;
    for name in names.iter().filter(|n| parse_name(n).is_some()) {
        let old = dir.join(name);
        fs.remove_file(&old)
            .map_err(|e| LogError::io(&old, 0, "remove segment on reset", e))?;
    }
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))?;
    fs.crash_point(RESET_AFTER_REMOVE)
        .map_err(|e| LogError::io(&staged, 0, RESET_AFTER_REMOVE, e))?;
    let path = dir.join(file_name(1));
    fs.rename(&staged, &path)
        .map_err(|e| LogError::io(&path, 0, "rename reset segment", e))?;
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{SimFs, SYNC_STEP};
    use onelog_binlog::Gtid;

    #[test]
    fn cancelled_preallocation_stops_between_chunks() {
        let fs = SimFs::new();
        let p = Path::new("/next.olog.tmp");
        let calls = std::cell::Cell::new(0u32);
        let cancelled = || {
            calls.set(calls.get() + 1);
            calls.get() > 3
        };
        let r = create_zeroed(&*fs, p, 64 * ZERO_CHUNK as u64, &cancelled);
        assert!(matches!(r, Err(LogError::Closed)));
        assert_eq!(fs.counters().bytes_written, 3 * ZERO_CHUNK as u64);
        let done = create_zeroed(&*fs, p, 2 * ZERO_CHUNK as u64, &|| false).unwrap();
        assert_eq!(done.len().unwrap(), 2 * ZERO_CHUNK as u64);
    }

    #[test]
    fn a_zero_fill_is_synced_in_steps() {
        let fs = SimFs::new();
        let p = Path::new("/next.olog.tmp");
        let size = 2 * SYNC_STEP + SYNC_STEP / 2;
        let f = create_zeroed(&*fs, p, size, &|| false).unwrap();
        assert_eq!(f.len().unwrap(), size);
        // After each whole step, then once at the end.
        assert_eq!(fs.counters().fsyncs, 3);
        let fs = SimFs::new();
        create_zeroed(&*fs, p, 2 * SYNC_STEP, &|| false).unwrap();
        assert_eq!(fs.counters().fsyncs, 2);
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(file_name(3), "binlog-000003.olog");
        assert_eq!(parse_name("binlog-000003.olog"), Some(3));
        assert_eq!(parse_name("binlog-1234567.olog"), Some(1234567));
        assert_eq!(parse_name("binlog-03.olog"), None);
        assert_eq!(parse_name(PREPARED_NAME), None);
    }

    #[test]
    fn header_round_trips_and_detects_damage() {
        let mut s = GtidState::new();
        s.record(Gtid::new(0, 1, 10));
        let fde = format_description("10.11.9-MariaDB-onelog", 1);
        onelog_binlog::event::check_event(&fde).unwrap();
        let long = format_description(&"x".repeat(80), 1);
        let ev = FormatDescriptionEvent::decode(&long).unwrap();
        assert_eq!(ev.server_version.len(), 49);
        let h = SegmentHeader::encode(7, 12345, &s, &fde, 1 << 20);
        assert_eq!(h.len(), 4096);
        let fs = SimFs::new();
        let p = Path::new("/l/binlog-000007.olog");
        let f = fs.open(p, true).unwrap();
        f.write_all_at(&h, 0).unwrap();
        let back = SegmentHeader::read(&*f, p).unwrap();
        assert_eq!(
            (
                back.number,
                back.start_lsn,
                &back.state,
                &back.fde,
                back.header_len,
                back.version,
                back.file_len
            ),
            (7, 12345, &s, &fde, 4096, 2, Some(1 << 20))
        );
        for byte in [0usize, 9, 17, 25, 41, 49, 60] {
            let mut bad = h.clone();
            bad[byte] ^= 4;
            f.write_all_at(&bad, 0).unwrap();
            assert!(
                matches!(SegmentHeader::read(&*f, p), Err(LogError::Corrupt { .. })),
                "byte {byte}"
            );
        }
    }

    #[test]
    fn version_1_headers_are_still_read_without_a_file_len() {
        let mut s = GtidState::new();
        s.record(Gtid::new(0, 1, 3));
        let fde = format_description("10.11.9-MariaDB-onelog", 1);
        // A version-1 header: the 40 fixed bytes, then state, FDE, CRC.
        let mut st = Vec::new();
        s.encode(&mut st);
        let mut h = Vec::new();
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&4096u32.to_le_bytes());
        h.extend_from_slice(&3u64.to_le_bytes());
        h.extend_from_slice(&777u64.to_le_bytes());
        h.extend_from_slice(&(st.len() as u32).to_le_bytes());
        h.extend_from_slice(&(fde.len() as u32).to_le_bytes());
        h.extend_from_slice(&st);
        h.extend_from_slice(&fde);
        let crc = mask_crc(crc32c::crc32c(&h));
        h.extend_from_slice(&crc.to_le_bytes());
        h.resize(4096, 0);
        let fs = SimFs::new();
        let p = Path::new("/l/binlog-000003.olog");
        let f = fs.open(p, true).unwrap();
        f.write_all_at(&h, 0).unwrap();
        let back = SegmentHeader::read(&*f, p).unwrap();
        assert_eq!(
            (
                back.number,
                back.start_lsn,
                &back.state,
                &back.fde,
                back.version,
                back.file_len
            ),
            (3, 777, &s, &fde, 1, None)
        );
        h[8] = 3;
        f.write_all_at(&h, 0).unwrap();
        let e = SegmentHeader::read(&*f, p).unwrap_err().to_string();
        assert!(e.contains("unsupported format version 3"), "{e}");
    }
}
